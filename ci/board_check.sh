#!/usr/bin/env bash
# The simulated board against the unmodified host tool: starts `testbench board` (its core
# Verilated on first use, then cached under target/board-sim/), waits for its ready line, and
# runs `bringup --port <pty>` through it:
# - `info` must name the board, find the chip (NVMF) and its configuration hash, and report the
#   lowered core clock;
# - `memtest --words 64` must find every word good;
# - `mdio 0 1` (BMSR of the PHY model) must show link up (bit 2);
# then stops the board (SIGTERM) and checks its summary: it exited 0, no bad frame from the
# core, no UART framing error. Every wait is bounded. Needs root (the board makes a network
# namespace and a TAP device), Verilator and a C++ compiler.
#   BOARD=colorlight_i5|butterstick (default colorlight_i5)
#   START_TIMEOUT=seconds for the ready line, the model's first build included (default 900)
#   STEP_TIMEOUT=seconds for each host tool command (default 120)
#   OUT=logs (default target/board-check)
set -euo pipefail
cd "$(dirname "$0")/.."
board=${BOARD:-colorlight_i5}
start_timeout=${START_TIMEOUT:-900}
step_timeout=${STEP_TIMEOUT:-120}
out=${OUT:-target/board-check}
fail() { echo "board_check: $*" >&2; exit 1; }
mkdir -p "$out"
cargo build -q --release -p testbench -p bringup
dir=${CARGO_TARGET_DIR:-target}/release
log=$out/board.log
ready=$out/ready
: >"$ready"
"$dir/testbench" board --board "$board" >"$ready" 2>"$log" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
line=
for _ in $(seq $((start_timeout * 10))); do
  line=$(grep -m1 '^board ready: ' "$ready" || true)
  [ -n "$line" ] && break
  if ! kill -0 "$pid" 2>/dev/null; then
    cat "$log" >&2
    fail "testbench board exited before its ready line (its log is above)"
  fi
  sleep 0.1
done
[ -n "$line" ] || { cat "$log" >&2; fail "no ready line within $start_timeout s (START_TIMEOUT)"; }
echo "$line"
[[ $line =~ ^board\ ready:\ pty=(/dev/pts/[0-9]+)\ netns=(tbboard-[0-9]+)\ target=10\.77\.0\.1:4420\ chip_ip=10\.77\.0\.2$ ]] ||
  fail "the ready line is not the contract's: $line"
pty=${BASH_REMATCH[1]}
ns=${BASH_REMATCH[2]}
ip netns list | grep -q "^$ns\b" || fail "namespace $ns is not there"

# tool NAME ARGS...: runs the host tool against the board, bounded; its output in $out/NAME.txt.
tool() {
  local name=$1
  shift
  local rc=0
  timeout "$step_timeout" "$dir/bringup" --port "$pty" --timeout 5 "$@" >"$out/$name.txt" 2>&1 || rc=$?
  cat "$out/$name.txt"
  [ "$rc" -eq 0 ] || fail "bringup $* exited with $rc"
}
tool info info
grep -q '(NVMF)' "$out/info.txt" || fail "info: no NVMF chip ID"
grep -q '(configs/bringup_'"$board"'.toml)' "$out/info.txt" || fail "info: the configuration hash is not the board's"
grep -q '^core clock   921 kHz' "$out/info.txt" || fail "info: the core clock is not the simulated board's 921.6 kHz"
tool memtest memtest --words 64
grep -q '^memtest: 64 of 64 words good$' "$out/memtest.txt" || fail "memtest: not every word good"
tool mdio mdio 0 1
bmsr=$(sed -n 's/^phy 0 reg 1: 0x\([0-9a-f]\{4\}\)$/\1/p' "$out/mdio.txt")
[ -n "$bmsr" ] || fail "mdio 0 1: no register value in its output"
(((0x$bmsr >> 2) & 1)) || fail "mdio 0 1: BMSR 0x$bmsr does not show link up (bit 2)"
echo "PHY 0 BMSR 0x$bmsr: link up"

kill -TERM "$pid"
rc=0
for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && fail "testbench board did not stop within 30 s of SIGTERM"
wait "$pid" || rc=$?
trap - EXIT
cat "$log" >&2
summary=$(grep '^board summary: ' "$ready" || true)
echo "$summary"
[ "$rc" -eq 0 ] || fail "testbench board exited with $rc"
[ -n "$summary" ] || fail "testbench board printed no summary"
[[ $summary == *"(bad 0)"* ]] || fail "the core sent bad frames"
[[ $summary == *"(framing errors 0)"* ]] || fail "the core's UART sent a frame with a low stop bit"
ip netns list | grep -q "^$ns\b" && fail "namespace $ns was not deleted"
echo "board_check: $board passed in ${SECONDS} s"
