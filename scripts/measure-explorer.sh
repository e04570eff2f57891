#!/usr/bin/env bash
# Measures the explorer in a real terminal (tmux, 120x40, release build):
#  1. idle CPU at 10 Hz (% of one core, from /proc/PID/stat over 20 s);
#  2. the get rate a workload sustains while the screen redraws at 10 Hz,
#     and the frame rate kept meanwhile.
# Usage: scripts/measure-explorer.sh [RATE [KEYS]]   (default 100000 gets/s over 50 keys)
#        INSPECT=1 scripts/measure-explorer.sh [RATE]: the same with the key
#        inspector open on a memory level of 10,000 entries (filled first),
#        the workload's gets all hits on it.
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C.UTF-8
RATE=${1:-100000}
KEYS=${2:-50}   # 50 keys fit the demo's 64-entry memory level: every get is an L1 hit
ARGS=""
if [ "${INSPECT:-0}" = 1 ]; then
  KEYS=10000
  CONFIG=$(mktemp --suffix=.yaml)
  printf 'name: inspect\nlevels:\n  - name: L1\n    kind: memory\n    capacity: 64MiB\n    count: 20000\n    policy: lru\n  - name: origin\n    kind: origin\n    latency: 0ms\n' > "$CONFIG"
  ARGS="--config $CONFIG"
fi
swift build -c release --product strata >/dev/null
BIN=$(swift build -c release --show-bin-path)/strata
SOCK=strata-measure-$$
T="tmux -L $SOCK -f /dev/null"
trap '$T kill-server 2>/dev/null || true; [ -n "${CONFIG:-}" ] && rm -f "$CONFIG"' EXIT
$T new-session -d -s m -x 120 -y 40 "env TERM=xterm-256color $BIN $ARGS"
sleep 2
if [ "${INSPECT:-0}" = 1 ]; then
  # Every key once (a loop over the 10,000 keys), then the inspector on L1.
  $T send-keys -t m ":load loop $KEYS 100000 2" Enter
  sleep 5
  $T send-keys -t m Tab Enter
  sleep 3
  $T capture-pane -p -t m | grep -m1 -E '═ keys · ' | sed 's/^/  inspector open: /' || true
fi
PID=$(pgrep -f "^$BIN" | head -1)
ticks() { awk '{print $14+$15}' /proc/$PID/stat; }
HZ=$(getconf CLK_TCK)
a=$(ticks); sleep 20; b=$(ticks)
echo "idle at 10 Hz: $(echo "scale=2; ($b-$a)*100/$HZ/20" | bc)% of one core"
$T send-keys -t m ":load uniform $KEYS $RATE" Enter
sleep 3
before=$(grep -o 'gets [0-9.]*[kM]*' <($T capture-pane -p -t m) | head -1 || true)
a=$(ticks); sleep 10; b=$(ticks)
screen=$($T capture-pane -p -t m)
echo "under load ($RATE gets/s requested over $KEYS keys):"
echo "$screen" | grep -E 'gets/s' | head -1 | sed 's/^/  L1 pane: /' || true
echo "$screen" | grep -m1 -E '═ keys · ' | sed 's/^/  inspector: /' || true
echo "  explorer CPU: $(echo "scale=1; ($b-$a)*100/$HZ/10" | bc)% of one core (cache work + redraws)"
echo "$screen" | head -1 | sed 's/^/  title: /'
