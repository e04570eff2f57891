#!/usr/bin/env bash
# Measures the explorer in a real terminal (tmux, 120x40, release build):
#  1. idle CPU at 10 Hz (% of one core, from /proc/PID/stat over 20 s);
#  2. the get rate a workload sustains while the screen redraws at 10 Hz,
#     and the frame rate kept meanwhile.
# Usage: scripts/measure-explorer.sh [RATE [KEYS]]   (default 100000 gets/s over 50 keys)
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C.UTF-8
RATE=${1:-100000}
KEYS=${2:-50}   # 50 keys fit the demo's 64-entry memory level: every get is an L1 hit
swift build -c release --product strata >/dev/null
BIN=$(swift build -c release --show-bin-path)/strata
SOCK=strata-measure-$$
T="tmux -L $SOCK -f /dev/null"
trap '$T kill-server 2>/dev/null || true' EXIT
$T new-session -d -s m -x 120 -y 40 "env TERM=xterm-256color $BIN"
sleep 2
PID=$(pgrep -f "^$BIN" | head -1)
ticks() { awk '{print $14+$15}' /proc/$PID/stat; }
HZ=$(getconf CLK_TCK)
a=$(ticks); sleep 20; b=$(ticks)
echo "idle at 10 Hz: $(echo "scale=2; ($b-$a)*100/$HZ/20" | bc)% of one core"
$T send-keys -t m ":load uniform $KEYS $RATE" Enter
sleep 3
before=$(grep -o 'gets [0-9.]*[kM]*' <($T capture-pane -p -t m) | head -1)
a=$(ticks); sleep 10; b=$(ticks)
screen=$($T capture-pane -p -t m)
echo "under load ($RATE gets/s requested over $KEYS keys):"
echo "$screen" | grep -E 'gets/s' | head -1 | sed 's/^/  L1 pane: /'
echo "  explorer CPU: $(echo "scale=1; ($b-$a)*100/$HZ/10" | bc)% of one core (cache work + redraws)"
echo "$screen" | head -1 | sed 's/^/  title: /'
