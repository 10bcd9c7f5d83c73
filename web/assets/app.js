// tsinspect serve: the pages' script. Plain JavaScript, no library, no
// build step: the server embeds this file as it is.
"use strict";

(function () {
  const $ = (sel, root) => (root || document).querySelector(sel);

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  async function getJSON(url) {
    const r = await fetch(url, { cache: "no-store" });
    let body;
    try {
      body = await r.json();
    } catch (e) {
      throw new Error(r.status + " " + r.statusText);
    }
    if (!r.ok) throw new Error(body.error || r.statusText);
    return body;
  }

  // oneAtATime wraps an async loader so that one call runs at a time: a
  // call made while one runs is folded into a single rerun after it.
  function oneAtATime(run) {
    let running = false, again = false;
    return async function go() {
      if (running) { again = true; return; }
      running = true;
      try {
        await run();
      } finally {
        running = false;
        if (again) { again = false; go(); }
      }
    };
  }

  // VList is a list of rows of one height of which only those in view
  // (and a few around) are in the page: a list of 10,000 rows costs what
  // a screenful does.
  class VList {
    constructor(root, rowHeight, render) {
      this.body = $(".vbody", root);
      this.head = $(".vhead", root);
      this.inner = el("div", "vinner");
      this.body.appendChild(this.inner);
      this.h = rowHeight;
      this.render = render;
      this.n = 0;
      this.rows = new Map();
      this.body.addEventListener("scroll", () => this.draw());
      window.addEventListener("resize", () => this.draw());
    }
    setCount(n) {
      this.n = n;
      this.inner.style.height = n * this.h + "px";
      this.redraw();
    }
    redraw() {
      for (const r of this.rows.values()) r.remove();
      this.rows.clear();
      this.draw();
    }
    draw() {
      const top = this.body.scrollTop;
      const height = this.body.clientHeight || 600;
      const first = Math.max(0, Math.floor(top / this.h) - 10);
      const last = Math.min(this.n, Math.ceil((top + height) / this.h) + 10);
      for (const [i, r] of this.rows) {
        if (i < first || i >= last) {
          r.remove();
          this.rows.delete(i);
        }
      }
      for (let i = first; i < last; i++) {
        if (this.rows.has(i)) continue;
        const r = this.render(i);
        r.style.top = i * this.h + "px";
        this.inner.appendChild(r);
        this.rows.set(i, r);
      }
    }
    // show scrolls row i into view (to the middle with center).
    show(i, center) {
      const top = i * this.h;
      const b = this.body;
      if (center) b.scrollTop = Math.max(0, top - (b.clientHeight - this.h) / 2);
      else if (top < b.scrollTop) b.scrollTop = top;
      else if (top + this.h > b.scrollTop + b.clientHeight) b.scrollTop = top + this.h - b.clientHeight;
      this.draw();
    }
  }

  // events follows a stream of server-sent events, saying on the page
  // whether it is connected.
  function events(url, handlers, live) {
    const es = new EventSource(url);
    for (const [name, fn] of Object.entries(handlers)) {
      es.addEventListener(name, (ev) => fn(JSON.parse(ev.data)));
    }
    if (live) {
      es.onopen = () => { live.textContent = "● live"; live.className = "live"; };
      es.onerror = () => { live.textContent = "○ reconnecting…"; live.className = "live off"; };
    }
    return es;
  }

  // ---- The sessions page ----

  const sortOf = { START: "time", COST: "cost", BREAKS: "flags", BLIND: "flags", EMPTY: "flags", PART: "flags", TURNS: "turns" };
  const rightCols = new Set(["TIME", "TURNS", "AGENTS", "COST", "BREAKS", "BLIND", "SEARCH", "EMPTY", "PART"]);

  function sessionsPage(root) {
    const form = $("#filters", root);
    const params = new URLSearchParams(location.search);
    for (const name of ["project", "since", "model", "sort", "by"]) {
      if (params.get(name)) form.elements[name].value = params.get(name);
    }
    form.elements.flagged.checked = params.get("flagged") === "1";
    const checked = new Set();
    const compareBtn = $("#compare-btn", root);
    let data = null;
    let gen = -1;

    const list = new VList($("#list", root), 22, (i) => {
      const s = data.rows[i];
      const row = el("div", "vrow" + (s.flagged ? " flagged" : "") + (s.capture ? " capture" : ""));
      const box = el("div");
      const cb = el("input");
      cb.type = "checkbox";
      cb.checked = checked.has(s.key);
      cb.title = "check two to compare them";
      cb.addEventListener("click", (ev) => {
        ev.stopPropagation();
        if (cb.checked) checked.add(s.key); else checked.delete(s.key);
        compareBtn.disabled = checked.size !== 2;
      });
      box.appendChild(cb);
      row.appendChild(box);
      s.cells.forEach((c, k) => {
        const cell = el("div", rightCols.has(data.columns[k]) ? "r" : "");
        if (k === 0) {
          const a = el("a", "", c.slice(0, 8));
          a.href = "/s/" + encodeURIComponent(s.key);
          a.title = c;
          cell.appendChild(a);
        } else {
          cell.textContent = c;
          cell.title = c;
        }
        row.appendChild(cell);
      });
      row.addEventListener("click", () => { location.href = "/s/" + encodeURIComponent(s.key); });
      return row;
    });

    function query() {
      const q = new URLSearchParams();
      for (const name of ["project", "since", "model"]) {
        const v = form.elements[name].value.trim();
        if (v) q.set(name, v);
      }
      if (form.elements.flagged.checked) q.set("flagged", "1");
      if (form.elements.sort.value !== "time") q.set("sort", form.elements.sort.value);
      if (form.elements.by.value !== "day") q.set("by", form.elements.by.value);
      return q;
    }

    const load = oneAtATime(() => loadNow());

    async function loadNow() {
      const q = query();
      history.replaceState(null, "", q.toString() ? "?" + q : location.pathname);
      const problem = $("#problem", root);
      try {
        data = await getJSON("/api/sessions?" + q);
      } catch (e) {
        problem.textContent = e.message;
        problem.hidden = false;
        return;
      }
      problem.hidden = !(data.problems && data.problems.length);
      if (!problem.hidden) problem.textContent = data.problems.length + " could not be read: " + data.problems.slice(0, 3).join("; ");
      gen = data.gen;
      head(data.columns);
      totals(data);
      chart(data.chart_svg);
      const notes = $("#notes", root);
      notes.replaceChildren(...(data.notes || []).map((n) => el("li", "", n)));
      $("#status", root).textContent = data.rows.length === 0 ? "No session matches." : "Updated " + new Date().toLocaleTimeString() + "; new sessions appear as Claude Code writes them.";
      list.setCount(data.rows.length);
      // When the rows were first on the page, in ms since the page was
      // asked for: what the tests and the benchmark read.
      if (!root.dataset.ready) root.dataset.ready = Math.round(performance.now());
      root.dataset.loads = (+root.dataset.loads || 0) + 1;
    }

    function head(columns) {
      const h = list.head;
      h.replaceChildren(el("div"));
      for (const c of columns) {
        const d = el("div", rightCols.has(c) ? "r" : "", c);
        if (sortOf[c]) {
          d.classList.add("sortable");
          d.title = "sort by " + sortOf[c];
          d.addEventListener("click", () => { form.elements.sort.value = sortOf[c]; load(); });
        }
        h.appendChild(d);
      }
    }

    function totals(d) {
      const c = d.counts;
      const t = el("table");
      const add = (k, v) => {
        const tr = el("tr");
        tr.append(el("td", "", k), el("td", "", v));
        t.appendChild(tr);
      };
      add("sessions", c.sessions.toLocaleString("en-US") + (c.sessions !== c.listed ? " of " + c.listed.toLocaleString("en-US") : ""));
      add("turns", c.turns.toLocaleString("en-US"));
      add("cost", c.cost + " (cache breaks " + c.breaks_cost + ")");
      const n = (k, one, many) => k.toLocaleString("en-US") + " " + (k === 1 ? one : many);
      add("flags", n(c.cache_breaks, "cache break", "cache breaks") + ", " + n(c.blind_calls, "blind call", "blind calls") + ", " +
        c.empty_searches + " of " + n(c.searches, "search", "searches") + " found nothing");
      add("tokens", c.tokens);
      const total = el("p", "dim", d.total);
      $("#totals", root).replaceChildren(t, total);
    }

    // chart shows the cost per day (or week), the server's SVG.
    function chart(svg) {
      const box = $("#chart", root);
      if (!svg) {
        box.replaceChildren(el("p", "dim", "No answer in the period."));
        return;
      }
      box.innerHTML = svg; // the server's HTML: its figures, escaped
    }

    let timer = 0;
    form.addEventListener("input", (ev) => {
      clearTimeout(timer);
      // Typing waits for a pause; a choice (a sort, a box) counts at once.
      if (ev.target.type === "text") timer = setTimeout(load, 250);
      else load();
    });
    form.addEventListener("submit", (ev) => { ev.preventDefault(); load(); });
    compareBtn.addEventListener("click", () => {
      const [a, b] = [...checked];
      location.href = "/compare?a=" + encodeURIComponent(a) + "&b=" + encodeURIComponent(b);
    });
    load();
    events("/events/sessions", { listing: (ev) => { if (ev.gen !== gen) load(); } });
  }

  // ---- A session's page ----

  function sessionPage(root) {
    const key = root.dataset.key;
    const base = "/s/" + encodeURIComponent(key);
    let data = null;
    let visible = []; // indexes into data.turns
    let sel = 0; // selected turn's index (1-based), 0 for none
    let tab = ""; // the open tab's name: the first tab's, below
    let follow = false; // the last turn is selected: select the next one when it arrives
    const raw = new Map(); // raw tab: path -> open
    let want = parseInt(root.dataset.turn, 10) || 0;
    const m = /^#turn-(\d+)$/.exec(location.hash);
    if (m) want = parseInt(m[1], 10);

    // The tabs, their order and their keys are the page's buttons, which
    // the server makes from the tab table the terminal uses too.
    const tabButtons = [...root.querySelectorAll(".tabs button[data-tab]")];
    tab = tabButtons.length ? tabButtons[0].dataset.tab : "";
    function openTab(name) {
      tab = name;
      $("#tab", root).scrollTop = 0;
      loadTab();
    }
    function nextTab(delta) {
      const n = tabButtons.length;
      const at = tabButtons.findIndex((b) => b.dataset.tab === tab);
      openTab(tabButtons[(((at + delta) % n) + n) % n].dataset.tab);
    }

    const list = new VList($("#turns", root), 22, (i) => {
      const t = data.turns[visible[i]];
      const row = el("div", "vrow" + (t.sev ? " sev-" + t.sev : "") + (t.i === sel ? " sel" : ""));
      row.id = "turn-" + t.i;
      row.dataset.i = t.i;
      t.c.forEach((runs, k) => {
        const cell = el("div", data.right[k] ? "r" : "");
        // The view's runs of text, each [class, text], set as text.
        for (const [cls, text] of runs) cell.appendChild(cls ? el("span", cls, text) : document.createTextNode(text));
        row.appendChild(cell);
      });
      if (!data.light) row.addEventListener("click", () => select(t.i));
      return row;
    });

    function text(t) {
      if (!t.text) {
        const cells = t.c.map((runs) => runs.map((r) => r[1]).join(""));
        t.text = (cells.join(" ") + " " + t.th).toLowerCase();
      }
      return t.text;
    }

    function filter() {
      const th = $("#thread", root).value;
      const flagged = $("#flagged", root).checked;
      const q = $("#filter", root).value.trim().toLowerCase();
      visible = [];
      data.turns.forEach((t, k) => {
        if (th && t.th !== th) return;
        if (flagged && !t.sev) return;
        if (q && !text(t).includes(q)) return;
        visible.push(k);
      });
      $("#shown", root).textContent = visible.length === data.turns.length ? "" : visible.length + " of " + data.turns.length + " shown";
      list.setCount(visible.length);
    }

    const load = oneAtATime(() => loadNow());

    async function loadNow() {
      const problem = $("#problem", root);
      try {
        data = await getJSON("/api" + base + "/turns");
      } catch (e) {
        problem.textContent = e.message;
        problem.hidden = false;
        return;
      }
      problem.hidden = !data.error;
      problem.textContent = data.error || "";
      $("#header", root).textContent = data.waiting ? "Waiting for the file to appear…" : data.header + (data.status ? " · skipped: " + data.status : "");
      list.head.replaceChildren(...data.columns.map((c, k) => el("div", data.right[k] ? "r" : "", c)));
      const threads = $("#thread", root);
      const chosen = threads.value;
      threads.replaceChildren(el("option", "", "all"));
      threads.options[0].value = "";
      for (const th of data.threads) {
        const o = el("option", "", th.id + " (" + th.kind + ", " + th.turns + ")");
        o.value = th.id;
        threads.appendChild(o);
      }
      threads.value = chosen;
      $("#turns", root).classList.toggle("light", !!data.light);
      filter();
      if (!root.dataset.ready) root.dataset.ready = Math.round(performance.now()); // as on the sessions page
      if (data.light) {
        // Served from the listing while the session is read: asked again
        // until the turns are there (the live updates say so too).
        setTimeout(load, 500);
        return;
      }
      if (!root.dataset.full) root.dataset.full = Math.round(performance.now()); // the turns read whole
      const last = data.turns.length ? data.turns[data.turns.length - 1].i : 0;
      if (want && data.turns.some((t) => t.i === want)) {
        select(want, true);
        want = 0;
      } else if (!sel && last) {
        select(data.turns[0].i);
      } else if (follow && last && sel !== last) {
        select(last);
      } else if (sel) {
        loadTab(); // the selected turn may have been answered since
      }
    }

    function rowOf(i) {
      return visible.findIndex((k) => data.turns[k].i === i);
    }

    function select(i, center) {
      if (data && data.light) return; // no turn to select until the session is read
      sel = i;
      follow = data.turns.length > 0 && data.turns[data.turns.length - 1].i === i;
      for (const r of list.rows.values()) r.classList.toggle("sel", parseInt(r.dataset.i, 10) === i);
      const row = rowOf(i);
      if (row >= 0) list.show(row, center);
      const link = base + "/turn/" + i;
      history.replaceState(null, "", link);
      $("#permalink", root).href = link;
      $("#permalink", root).textContent = "link to turn " + i;
      loadTab();
    }

    function move(delta) {
      if (!visible.length) return;
      let r = rowOf(sel);
      r = Math.max(0, Math.min(visible.length - 1, (r < 0 ? 0 : r) + delta));
      select(data.turns[visible[r]].i);
    }

    function nextFlag(dir) {
      if (!visible.length) return;
      const start = rowOf(sel);
      for (let k = 1; k <= visible.length; k++) {
        const r = (((start + dir * k) % visible.length) + visible.length) % visible.length;
        const t = data.turns[visible[r]];
        if (t.sev) { select(t.i); return; }
      }
    }

    let tabReq = 0;
    async function loadTab() {
      if (!sel) return;
      for (const b of tabButtons) b.classList.toggle("on", b.dataset.tab === tab);
      $("#allwrap", root).hidden = tab !== "conversation";
      $("#rawtools", root).hidden = tab !== "raw";
      const q = new URLSearchParams();
      const dq = $("#dq", root).value.trim();
      if (dq) q.set("q", dq);
      if (tab === "conversation" && $("#all", root).checked) q.set("all", "1");
      if (tab === "raw") {
        for (const [p, open] of raw) q.append(open ? "open" : "close", p);
      }
      const n = ++tabReq;
      const box = $("#tab", root);
      const r = await fetch("/api" + base + "/turn/" + sel + "/" + tab + "?" + q, { cache: "no-store" });
      const body = await r.text();
      if (n !== tabReq) return; // a later one was asked for
      if (!r.ok) {
        let msg = body;
        try { msg = JSON.parse(body).error; } catch (e) { /* as it is */ }
        box.replaceChildren(el("p", "problem", msg));
        return;
      }
      const scroll = box.scrollTop;
      box.innerHTML = body; // the server's HTML: the view's text, escaped
      if (tab === "raw") box.scrollTop = scroll;
      box.dataset.shown = sel + "/" + tab; // which turn's tab is shown, for the tests
    }

    root.querySelector(".tabs").addEventListener("click", (ev) => {
      const b = ev.target.closest("button[data-tab]");
      if (!b) return;
      openTab(b.dataset.tab);
    });
    $("#tab", root).addEventListener("click", (ev) => {
      // A link to a turn of this session (a chart's bar, a flag's "against
      // turn N") selects it here, with no reload.
      const a = ev.target.closest("a");
      const m = a && /(?:\/turn\/|#turn-)(\d+)$/.exec(a.getAttribute("href") || "");
      if (m && (a.getAttribute("href").startsWith(base + "/turn/") || a.getAttribute("href").startsWith("#"))) {
        const i = parseInt(m[1], 10);
        if (data && data.turns.some((t) => t.i === i)) {
          ev.preventDefault();
          if (!visible.some((k) => data.turns[k].i === i)) {
            // Shown even when a filter hid it.
            $("#thread", root).value = "";
            $("#flagged", root).checked = false;
            $("#filter", root).value = "";
            filter();
          }
          select(i, true);
          return;
        }
      }
      const line = ev.target.closest(".rl.fold");
      if (!line) return;
      raw.set(line.dataset.path, !line.classList.contains("open"));
      loadTab();
    });
    $("#expand", root).addEventListener("click", () => {
      raw.clear();
      for (const l of root.querySelectorAll(".rl.fold")) raw.set(l.dataset.path, true);
      loadTab();
    });
    $("#collapse", root).addEventListener("click", () => { raw.clear(); loadTab(); });
    let timer = 0;
    $("#dq", root).addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(loadTab, 200); });
    $("#all", root).addEventListener("change", loadTab);
    for (const id of ["#thread", "#flagged"]) $(id, root).addEventListener("change", filter);
    $("#filter", root).addEventListener("input", filter);
    document.addEventListener("keydown", (ev) => {
      const target = ev.target instanceof Element ? ev.target : document.body;
      if (target.closest("input, select, textarea") || ev.ctrlKey || ev.metaKey || ev.altKey) {
        if (ev.key === "Escape") target.blur();
        return;
      }
      const k = ev.key;
      if (k === "j" || k === "ArrowDown") move(1);
      else if (k === "k" || k === "ArrowUp") move(-1);
      else if (k === "PageDown") move(10);
      else if (k === "PageUp") move(-10);
      else if (k === "n") nextFlag(1);
      else if (k === "N") nextFlag(-1);
      else if (k === "/") $("#filter", root).focus();
      else if (k === "[" || k === "ArrowLeft") nextTab(-1);
      else if (k === "]" || k === "ArrowRight") nextTab(1);
      else if (tabButtons.some((b) => b.dataset.key === k)) openTab(tabButtons.find((b) => b.dataset.key === k).dataset.tab);
      else return;
      ev.preventDefault();
    });
    window.addEventListener("hashchange", () => {
      const h = /^#turn-(\d+)$/.exec(location.hash);
      if (h && data) select(parseInt(h[1], 10), true);
    });

    load();
    events("/events" + base, { session: (ev) => { if (!data || ev.gen !== data.gen) load(); } }, $("#live", root));
  }

  // The switch between the redacted view and everything comes back to the
  // page as it is now (the turn selected, the filters), not as it was
  // first asked for.
  document.addEventListener("click", (ev) => {
    const a = ev.target instanceof Element && ev.target.closest("#view-switch");
    if (!a) return;
    const u = new URL(a.href);
    u.searchParams.set("to", location.pathname + location.search);
    a.href = u.toString();
  }, true);

  const page = document.querySelector("[data-page]");
  if (!page) return;
  if (page.dataset.page === "sessions") sessionsPage(page);
  if (page.dataset.page === "session") sessionPage(page);
})();
