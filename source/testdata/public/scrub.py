import json, re, sys, os

KEEP_PREFIXES = ["This session is being continued from a previous conversation", "Your previous response had no visible output",
 "[Request interrupted", "API Error:", "No matching deferred tools found", "<tool_use_error>", "Caveat:", "<command-name>", "<local-command"]
EMAIL = re.compile(r'[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}')
HOME = re.compile(r'(/Users/|/home/)([^/"\\\s]+)')
WIN = re.compile(r'([A-Za-z]:\\\\?)(Users\\\\?)([^\\"\s]+)')

def scrub_text(s, keep=False):
    if not isinstance(s, str):
        return s
    for p in KEEP_PREFIXES:
        if s.lstrip().startswith(p):
            head = s.lstrip()
            # keep the known prefix and a scrubbed first line
            first = head.split("\n", 1)[0][:200]
            first = EMAIL.sub("user@example.com", first)
            first = HOME.sub(r"\1user", first)
            if head.startswith("This session is being continued"):
                return first + "\n[summary removed]"
            if head.startswith("<tool_use_error>"):
                return first if first.endswith("</tool_use_error>") else first + "</tool_use_error>"
            return first
    return "[text, %d characters]" % len(s)

def scrub_input(v):
    if isinstance(v, str):
        return "[…]"
    if isinstance(v, list):
        return [scrub_input(x) for x in v]
    if isinstance(v, dict):
        return {k: scrub_input(x) for k, x in v.items()}
    return v

def scrub_block(b):
    if not isinstance(b, dict):
        return scrub_text(b) if isinstance(b, str) else b
    t = b.get("type")
    b = dict(b)
    if t == "text":
        b["text"] = scrub_text(b.get("text", ""))
    elif t == "thinking":
        b["thinking"] = "[thinking]"
        if "signature" in b: b["signature"] = ""
    elif t == "redacted_thinking":
        b["data"] = ""
    elif t == "tool_use":
        if b.get("name") in ("ToolSearch", "MCPSearch"):
            pass
        else:
            b["input"] = scrub_input(b.get("input"))
    elif t == "tool_result":
        c = b.get("content")
        if isinstance(c, str):
            b["content"] = scrub_text(c)
        elif isinstance(c, list):
            b["content"] = [scrub_block(x) for x in c]
    elif t == "image":
        b["source"] = {"type": "base64", "media_type": "image/png", "data": ""}
    elif t == "document":
        b["source"] = {}
    return b

def scrub_content(c):
    if isinstance(c, str):
        return scrub_text(c)
    if isinstance(c, list):
        return [scrub_block(x) for x in c]
    return c

# progress records (hook_progress, bash_progress, agent_progress, mcp_progress,
# query_update, search_results_received, waiting_for_task, …): the kind, the
# hook's event and name, counts and durations stay; an agent_progress's
# embedded message is scrubbed as an ordinary record (its chain, model, usage,
# stop reason, tool names and ToolSearch calls stay); other texts become
# placeholders; a hook's command is dropped.
PROGRESS_KEEP = ("type", "hookEvent", "hookName", "agentId", "status", "serverName", "toolName",
 "taskType", "taskId", "agentType", "model", "parentToolUseID", "toolUseID")
PROGRESS_DROP = ("command",)

def scrub_progress_data(d):
    if not isinstance(d, dict):
        return {}
    out = {}
    for k, v in d.items():
        if k in PROGRESS_DROP:
            continue
        if k == "message" and isinstance(v, dict):
            out[k] = scrub_record(dict(v))
        elif k == "normalizedMessages" and isinstance(v, list):
            out[k] = [scrub_record(dict(x)) if isinstance(x, dict) else None for x in v]
        elif v is None or isinstance(v, (bool, int, float)):
            out[k] = v
        elif isinstance(v, str):
            out[k] = v if k in PROGRESS_KEEP else scrub_text(v)
        else:
            out[k] = scrub_input(v)
    return out

def scrub_record(r):
    for k in ("cwd",):
        if k in r: r[k] = "/home/user/project"
    for k in ("gitBranch",):
        if k in r: r[k] = "main"
    for k in ("slug", "customTitle", "agentName", "summary", "title", "aiTitle", "lastPrompt", "leafUuid_"):
        if k in r and isinstance(r[k], str): r[k] = "[" + k + "]"
    if "toolUseResult" in r:
        t = r["toolUseResult"]
        if isinstance(t, dict) and ("matches" in t or "total_deferred_tools" in t):
            r["toolUseResult"] = {k: t[k] for k in ("matches", "query", "total_deferred_tools") if k in t}
        elif isinstance(t, dict) and "agentId" in t:
            r["toolUseResult"] = {"agentId": t["agentId"], "status": t.get("status")}
        else:
            r["toolUseResult"] = {}
    m = r.get("message")
    if isinstance(m, dict) and "content" in m:
        m["content"] = scrub_content(m["content"])
    if r.get("type") == "attachment":
        a = r.get("attachment") or {}
        if a.get("type") == "deferred_tools_delta":
            r["attachment"] = {k: a[k] for k in ("type", "addedNames", "removedNames", "readdedNames") if k in a}
        else:
            r["attachment"] = {"type": a.get("type")}
    if r.get("type") == "system":
        if "content" in r: r["content"] = scrub_text(r["content"]) if isinstance(r["content"], str) else ""
        e = r.get("error")
        if isinstance(e, dict):
            keep = {}
            for k in ("status", "message", "formatted"):
                if k in e and isinstance(e[k], (str, int)):
                    keep[k] = e[k]
            if "connection" in e: keep["connection"] = e["connection"]
            r["error"] = keep
    if r.get("type") in ("file-history-snapshot",):
        r["snapshot"] = {"messageId": (r.get("snapshot") or {}).get("messageId"), "trackedFileBackups": {}, "timestamp": (r.get("snapshot") or {}).get("timestamp")}
    if r.get("type") == "progress":
        r["data"] = scrub_progress_data(r.get("data"))
    if r.get("type") in ("summary",):
        r["summary"] = "[summary]"
    if "todos" in r: r["todos"] = []
    if r.get("type") == "queue-operation" and isinstance(r.get("content"), str):
        r["content"] = scrub_text(r["content"])
    return r

def finalize(line):
    line = EMAIL.sub("user@example.com", line)
    line = HOME.sub(r"\1user", line)
    line = re.sub(r'(Users\\\\)([^\\"]+)', r'\1user', line)
    line = re.sub(r'anthropic-organization-id[^,}]*', 'anthropic-organization-id":"00000000-0000-0000-0000-000000000000"', line)
    line = re.sub(r'https://claude\.ai/[^"\s\\]*', 'https://example.invalid/', line)
    return line

src, dst = sys.argv[1], sys.argv[2]
out = []
for l in open(src, encoding="utf-8", errors="surrogateescape"):
    l = l.rstrip("\n")
    if not l.strip():
        out.append(l); continue
    try:
        r = json.loads(l)
    except Exception:
        continue
    r = scrub_record(r)
    out.append(finalize(json.dumps(r, ensure_ascii=False, separators=(",", ":"))))
os.makedirs(os.path.dirname(dst), exist_ok=True)
open(dst, "w", encoding="utf-8", errors="surrogateescape").write("\n".join(out) + "\n")
