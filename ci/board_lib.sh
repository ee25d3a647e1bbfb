# Sourced by ci/board_check.sh and ci/board_io_check.sh: starting and stopping the simulated
# board. The caller sets `board`, `out`, `start_timeout` and a `fail MESSAGE` function.
#
# board_start [ARGS...]: builds the release testbench and host tool, starts `testbench board
# --board $board ARGS...` in the background (its stdout in $out/ready, stderr in
# $out/board.log), waits for the ready line (bounded by $start_timeout, the model's first build
# included) and checks it is the contract's. Sets `dir` (the release binaries), `pid`, `pty`,
# `ns`, `target`, `chip_ip`; the board is killed if the caller exits early.
board_start() {
  mkdir -p "$out"
  cargo build -q --release -p testbench -p bringup
  dir=${CARGO_TARGET_DIR:-target}/release
  log=$out/board.log
  ready=$out/ready
  : >"$ready"
  "$dir/testbench" board --board "$board" "$@" >"$ready" 2>"$log" &
  pid=$!
  trap 'kill "$pid" 2>/dev/null || true' EXIT
  local line=
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
  [[ $line =~ ^board\ ready:\ pty=(/dev/pts/[0-9]+)\ netns=(tbboard-[0-9]+)\ target=(10\.77\.0\.1:4420)\ chip_ip=(10\.77\.0\.2)$ ]] ||
    fail "the ready line is not the contract's: $line"
  pty=${BASH_REMATCH[1]}
  ns=${BASH_REMATCH[2]}
  target=${BASH_REMATCH[3]}
  chip_ip=${BASH_REMATCH[4]}
  ip netns list | grep -q "^$ns\b" || fail "namespace $ns is not there"
}

# board_stop: SIGTERM, then the board must exit 0 within 30 s with its summary, having sent no
# bad frame and no UART frame with a low stop bit, and its namespace must be gone.
board_stop() {
  kill -TERM "$pid"
  local rc=0
  for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && fail "testbench board did not stop within 30 s of SIGTERM"
  wait "$pid" || rc=$?
  trap - EXIT
  local summary
  summary=$(grep '^board summary: ' "$ready" || true)
  echo "$summary"
  [ "$rc" -eq 0 ] || { cat "$log" >&2; fail "testbench board exited with $rc"; }
  [ -n "$summary" ] || fail "testbench board printed no summary"
  [[ $summary == *"(bad 0)"* ]] || fail "the core sent bad frames"
  [[ $summary == *"(framing errors 0)"* ]] || fail "the core's UART sent a frame with a low stop bit"
  ! ip netns list | grep -q "^$ns\b" || fail "namespace $ns was not deleted"
}
