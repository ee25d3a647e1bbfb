#!/usr/bin/env bash
# Another configuration's tops in simulation: `bash ci/config.sh configs/smallest.toml` (or
# configs/widest.toml). rtl/ holds the shipped configuration only, so this emits CONFIG to
# target/<stem>-rtl, builds the release testbench with only the chosen tops taken from there
# (TB_RTL_DIR + TB_RTL_TOPS; every other top comes from rtl/ and the model cache; a top of
# another name than rtl/'s takes the place of rtl/'s top of its family, and the harness reads
# the sizes from that tree's chip_config.rs, register maps and port widths), then runs:
# - the `chip` property on its chip top (CASES, default 30; 0: the chip top is not swapped in
#   and not run), and with BENCH=1 `testbench bench --suite chip` (further arguments go to it,
#   e.g. --check);
# - with DMA_CASES=N (default 0: none), the `dma` suite (walker, mover, engine) on its DMA
#   engine's three tops (`ci/dma-width.sh W` runs it at any width);
# - with TCP_CASES=N (default 0: none), the `tcp` suite on its TCP/IP engine (at that
#   configuration's NVMe/TCP stream width: beats of more than 8 bytes take several cycles to
#   write into the transmit buffers, which the shipped 64-bit engine never does).
# SEED seeds each (default the CLI's). The chip top's name must be rtl/'s (the suites build
# against it). Verilating a large chip top (the 512-bit one) takes many minutes the first time;
# the model cache (target/verilated, TB_MODEL_CACHE) keeps it for the next run.
#
# The regression files are target/<stem>-chip-regressions.txt, started as a copy of the
# committed testbench/regressions/chip.txt and chip-<stem>.txt (so their saved cases replay on
# this top first), and target/<stem>-dma-regressions.txt and target/<stem>-tcp-regressions.txt
# (from dma.txt and dma-<stem>.txt, tcp.txt and tcp-<stem>.txt, where they exist);
# failing seeds are added there, not to the committed files.
#
# It leaves target/release/testbench built against these tops; the next plain
# `cargo build --release -p testbench` (without TB_RTL_DIR) rebuilds the testbench crate
# against rtl/ (its models are in the cache).
set -euo pipefail
cd "$(dirname "$0")/.."
step() { echo "== [$(date -u +%H:%M:%S), ${SECONDS}s] $*" >&2; }
config=${1:?usage: ci/config.sh CONFIG.toml [bench arguments]}
shift
stem=$(basename "$config" .toml)
out=target/$stem-rtl
step "emit $config to $out"
cargo run -q -p hdl-gen -- emit --config "$config" --out "$out"
cases=${CASES:-30}
dma_cases=${DMA_CASES:-0}
tcp_cases=${TCP_CASES:-0}
tops=()
if [ "$cases" != 0 ]; then
  tops+=("$(sed -n 's/^name = "\(.*\)"/\1/p' "$config" | head -1)")
fi
if [ "$dma_cases" != 0 ]; then
  for f in dma_walker dma_mover dma_engine; do
    t=$(cd "$out" && ls ${f}_w*_shim.cpp | sed 's/_shim.cpp$//')
    tops+=("$t")
  done
fi
if [ "$tcp_cases" != 0 ]; then
  tops+=("$(cd "$out" && ls tcp_w*_shim.cpp | sed 's/_shim.cpp$//')")
fi
[ ${#tops[@]} -gt 0 ] || { echo "ci/config.sh: CASES=0, DMA_CASES=0 and TCP_CASES=0: nothing to run" >&2; exit 2; }
step "release testbench with the $stem tops (${tops[*]} from $out)"
TB_RTL_DIR="$PWD/$out" TB_RTL_TOPS="$(IFS=,; echo "${tops[*]}")" cargo build --release -q -p testbench
seed=()
[ -n "${SEED:-}" ] && seed=(--seed "$SEED")
# This configuration's own saved failures, if it has any (testbench/regressions/<suite>-<stem>.txt),
# replay after the shipped configuration's.
regressions() {
  local reg=target/$stem-$1-regressions.txt
  [ -f "$reg" ] || cat $(ls "testbench/regressions/$1.txt" "testbench/regressions/$1-$stem.txt" 2>/dev/null) /dev/null > "$reg"
  echo "$reg"
}
if [ "$cases" != 0 ]; then
  step "regress --suite chip --cases $cases on the $stem chip top"
  target/release/testbench regress --suite chip --cases "$cases" "${seed[@]}" \
      --jobs 2 --regressions "$(regressions chip)" --waves "target/waves/$stem"
  if [ "${BENCH:-0}" = 1 ]; then
    step "bench --suite chip on the $stem chip top"
    target/release/testbench bench --suite chip "$@"
  fi
fi
if [ "$dma_cases" != 0 ]; then
  step "regress --suite dma --cases $dma_cases on the $stem DMA engine"
  target/release/testbench regress --suite dma --cases "$dma_cases" "${seed[@]}" \
      --jobs 2 --regressions "$(regressions dma)" --waves "target/waves/$stem"
fi
if [ "$tcp_cases" != 0 ]; then
  step "regress --suite tcp --cases $tcp_cases on the $stem TCP/IP engine"
  target/release/testbench regress --suite tcp --cases "$tcp_cases" "${seed[@]}" \
      --jobs 2 --regressions "$(regressions tcp)" --waves "target/waves/$stem"
fi
step "$stem: all passed"
