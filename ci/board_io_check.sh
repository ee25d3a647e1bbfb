#!/usr/bin/env bash
# The host tool's data path end to end on the simulated board: starts `testbench board` (its
# core Verilated on first use, then cached under target/board-sim/), waits for its ready line,
# and drives the chip with `bringup --port <pty>` as a bench engineer would:
# - `setup --local-ip <chip_ip> --target <target>`: controller re-enabled, NVMe/TCP connection 0
#   to the target model in the board's network namespace (ARP, TCP, ICReq/ICResp), Identify,
#   I/O queue pair 1, driver state in host memory;
# - `write 0 8 --pattern 7`, then `read 0 8 --expect 7` (data through host memory PRPs, over
#   the chip's TCP/IP engine to the target and back, compared word by word);
# - `read 0 8 --expect 8` must FAIL with mismatches reported (the comparison is real);
# - `ip netns exec <ns> bringup --port <pty> ping <chip_ip>`: ICMP echo from the namespace's
#   kernel to the chip, answered by the chip (its echo_out counter moves);
# - `io --seconds S`: the fio-like loop, data verified;
# then stops the board (SIGTERM). Every step is bounded (timeout). Needs root (the board makes a
# network namespace and a TAP device), Verilator and a C++ compiler.
#   BOARD=colorlight_i5|butterstick (default colorlight_i5)
#   START_TIMEOUT=seconds for the ready line, the model's first build included (default 900)
#   STEP_TIMEOUT=seconds for each host tool command (default 600)
#   IO_SECONDS=seconds of the io loop (default 20; 0 skips it)
#   BLOCKS=512-byte blocks written and read back (default 8)
#   BOARD_OPT=the model's C++ optimization (testbench board --opt; default: its own)
#   OUT=logs (default target/board-io-check)
set -euo pipefail
cd "$(dirname "$0")/.."
board=${BOARD:-colorlight_i5}
start_timeout=${START_TIMEOUT:-900}
step_timeout=${STEP_TIMEOUT:-600}
io_seconds=${IO_SECONDS:-20}
blocks=${BLOCKS:-8}
out=${OUT:-target/board-io-check}
fail() { echo "board_io_check: $*" >&2; exit 1; }
. ci/board_lib.sh
board_start ${BOARD_OPT:+--opt "$BOARD_OPT"}
ready_at=$SECONDS

# step NAME EXPECT ARGS...: runs ARGS bounded, output in $out/NAME.txt; EXPECT ok or fail.
step() {
  local name=$1 expect=$2
  shift 2
  local rc=0 t0=$SECONDS
  timeout "$step_timeout" "$@" >"$out/$name.txt" 2>&1 || rc=$?
  sed "s/^/  /" "$out/$name.txt"
  echo "board_io_check: $name: exit $rc in $((SECONDS - t0)) s"
  if [ "$expect" = ok ]; then
    [ "$rc" -eq 0 ] || fail "$name: ${*} exited with $rc"
  else
    [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "$name: ${*} should have failed (exit $rc)"
  fi
}
tool=("$dir/bringup" --port "$pty" --timeout 5 --cmd-timeout 300)
step setup ok "${tool[@]}" setup --local-ip "$chip_ip" --target "$target" --connect-timeout 300
grep -q '^setup: done' "$out/setup.txt" || fail "setup: no done line"
step write ok "${tool[@]}" write 0 "$blocks" --pattern 7
step read ok "${tool[@]}" read 0 "$blocks" --expect 7
grep -q 'match pattern 7' "$out/read.txt" || fail "read: the data was not reported as matching"
step read-wrong fail "${tool[@]}" read 0 "$blocks" --expect 8
grep -q 'words differ from pattern 8' "$out/read-wrong.txt" || fail "read --expect 8: no mismatch report"
step ping ok ip netns exec "$ns" "${tool[@]}" ping "$chip_ip" --count 3 --wait 20
grep -q '3 received' "$out/ping.txt" || fail "ping: not every echo answered"
grep -Eq 'echo_out \+[1-9]' "$out/ping.txt" || fail "ping: the chip's echo_out did not move"
if [ "$io_seconds" != 0 ]; then
  step io ok "${tool[@]}" io --seconds "$io_seconds" --bs 4096 --rw randrw --span 256
  grep -q 'data verified' "$out/io.txt" || fail "io: data not verified"
fi
echo "board_io_check: host tool steps took $((SECONDS - ready_at)) s"

board_stop
echo "board_io_check: $board passed in ${SECONDS} s"
