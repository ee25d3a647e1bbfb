#!/usr/bin/env bash
# The simulated board against the unmodified host tool: starts `testbench board` (its core
# Verilated on first use, then cached under target/board-sim/), waits for its ready line, and
# runs `bringup --port <pty>` through it:
# - `info` must name the board, find the chip (NVMF) and its configuration hash, and report the
#   lowered core clock;
# - `memtest --words 64` must find every word good;
# - `mdio 0 1` (BMSR of the PHY model) must show link up (bit 2);
# - the kernel's ARP requests (a datagram to the chip's address inside the namespace) must reach the
#   MAC through the TAP and the RGMII pins: `info` counts them received, without error;
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
. ci/board_lib.sh
board_start

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
# Frames from the TAP reach the core at its pins: a datagram to the chip's address makes the
# kernel ARP for it (nothing answers before the chip is set up; bash's /dev/udp, no ping
# needed); the MAC must count the requests received, with no receive error.
timeout 20 ip netns exec "$ns" bash -c 'echo board_check >/dev/udp/10.77.0.2/9' || true
sleep 2
tool info2 info
rx=$(sed -n 's/^mac rx_frames *\([0-9]*\)$/\1/p' "$out/info2.txt")
[ "${rx:-0}" -ge 1 ] || fail "the MAC counted no frame received after the kernel's ARP requests"
grep -E '^mac rx_err_[a-z]+ +[1-9]' "$out/info2.txt" && fail "the MAC counted receive errors"

board_stop
echo "board_check: $board passed in ${SECONDS} s"
