#!/usr/bin/env bash
# Drive tsinspect's terminal interface in tmux the way a person would: open
# the demo, jump to the first flagged turn, open each tab, search, quit.
# Every step's screen is saved (tmux capture-pane) as OUTDIR/NN-step.txt,
# and with its colours and attributes as OUTDIR/NN-step.ansi; the exit
# status of tsinspect goes to OUTDIR/exit. The environment (NO_COLOR, ...)
# reaches tsinspect.
#
# Usage: tui.sh TSINSPECT OUTDIR [COLUMNS LINES]
set -euo pipefail

bin=$1
out=$2
cols=${3:-120}
lines=${4:-40}
mkdir -p "$out"

# A tmux server of our own, so that no other session is touched, with its
# socket in a directory of ours, removed on exit (tmux leaves the socket
# file of a killed server behind).
sockdir=$(mktemp -d)
sock="$sockdir/tmux.sock"
tm() { tmux -S "$sock" -f /dev/null "$@"; }
trap 'tm kill-server >/dev/null 2>&1 || true; rm -rf "$sockdir"' EXIT

fail() {
  echo "tui.sh: $*" >&2
  tm capture-pane -p -t tui >"$out/failed.txt" 2>/dev/null || true
  cat "$out/failed.txt" >&2 || true
  exit 1
}

# wait_for TEXT: wait up to 10 s for TEXT on the screen.
wait_for() {
  for _ in $(seq 100); do
    if tm capture-pane -p -t tui 2>/dev/null | grep -qF -- "$1"; then
      return 0
    fi
    sleep 0.1
  done
  fail "timed out waiting for: $1"
}

# settle: wait up to 5 s until the screen stops changing, so that a shot
# taken while tsinspect's output is still reaching tmux (on a busy machine
# the heading can arrive before the rest of the tab) shows the whole frame.
settle() {
  local before after
  before=$(tm capture-pane -p -t tui)
  for _ in $(seq 50); do
    sleep 0.1
    after=$(tm capture-pane -p -t tui)
    [ "$after" = "$before" ] && return 0
    before=$after
  done
}

step=0
# shot NAME: save the screen once it has settled.
shot() {
  local name
  settle
  name="$out/$(printf '%02d' "$step")-$1"
  tm capture-pane -p -t tui >"$name.txt"
  tm capture-pane -p -e -t tui >"$name.ansi"
  step=$((step + 1))
}

tm new-session -d -s tui -x "$cols" -y "$lines" \
  "'$bin' demo; echo \$? >'$out/exit'; sleep 30"

wait_for "tsinspect demo"
wait_for "7 turns"
shot start

tm send-keys -t tui n
wait_for "Working set of #3"
shot first-flag

tab=1
for want in "Working set of #3" "Catalog of #3" "Searches of #3" "Prompt cache across main" "Flags of #3" "▾ request"; do
  tm send-keys -t tui "$tab"
  wait_for "$want"
  shot "tab-$tab"
  tab=$((tab + 1))
done

tm send-keys -t tui /
tm send-keys -t tui -l echo
wait_for "/echo"
tm send-keys -t tui Enter
wait_for "shown"
shot search

tm send-keys -t tui q
for _ in $(seq 100); do
  [ -s "$out/exit" ] && break
  sleep 0.1
done
[ -s "$out/exit" ] || fail "q did not quit"
echo "tui.sh: $step screens in $out, exit status $(cat "$out/exit")"
