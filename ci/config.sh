#!/usr/bin/env bash
# Another configuration's chip top in simulation: `bash ci/config.sh configs/smallest.toml` (or
# configs/widest.toml). rtl/ holds the shipped configuration only, so this emits CONFIG to
# target/<stem>-rtl, builds the release testbench with only the chip top taken from there
# (TB_RTL_DIR + TB_RTL_TOPS; every other top comes from rtl/ and the model cache; the harness
# reads the sizes from that tree's chip_config.rs and register maps), runs the `chip` property
# on it (CASES, default 30; seed SEED, default the CLI's), and with BENCH=1 measures it with
# `testbench bench --suite chip` (further arguments go to it, e.g. --check). The chip top's name
# must be rtl/'s (the suites build against it). Verilating a large chip top (the 512-bit one)
# takes many minutes the first time; the model cache (target/verilated, TB_MODEL_CACHE) keeps
# it for the next run.
#
# The regression file is target/<stem>-chip-regressions.txt, started as a copy of the committed
# testbench/regressions/chip.txt and chip-<stem>.txt (so their saved cases replay on this top
# first); failing seeds are added there, not to the committed files.
#
# It leaves target/release/testbench built against this chip top; the next plain
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
top=$(sed -n 's/^name = "\(.*\)"/\1/p' "$config" | head -1)
step "release testbench with the $stem chip top ($top from $out)"
TB_RTL_DIR="$PWD/$out" TB_RTL_TOPS="$top" cargo build --release -q -p testbench
reg=target/$stem-chip-regressions.txt
# This configuration's own saved failures, if it has any (testbench/regressions/chip-<stem>.txt),
# replay after the shipped configuration's.
[ -f "$reg" ] || cat testbench/regressions/chip.txt $(ls "testbench/regressions/chip-$stem.txt" 2>/dev/null) > "$reg"
seed=()
[ -n "${SEED:-}" ] && seed=(--seed "$SEED")
step "regress --suite chip --cases ${CASES:-30} on the $stem chip top"
target/release/testbench regress --suite chip --cases "${CASES:-30}" "${seed[@]}" \
    --jobs 2 --regressions "$reg" --waves "target/waves/$stem"
if [ "${BENCH:-0}" = 1 ]; then
  step "bench --suite chip on the $stem chip top"
  target/release/testbench bench --suite chip "$@"
fi
step "$stem: all passed"
