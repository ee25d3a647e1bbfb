#!/usr/bin/env bash
# The widest configuration's chip top in simulation (configs/widest.toml: 512-bit host bus for
# the front end, DMA engines and interconnect, NVMe/TCP streams at 256 bits, RoCE at 64, two
# AXI4 upsizers). rtl/ holds the shipped configuration only, so this emits the widest one to
# target/widest-rtl, builds the release testbench with only the chip top taken from there
# (TB_RTL_DIR + TB_RTL_TOPS; every other top comes from rtl/ and the model cache), runs the
# `chip` property on it (CASES, default 30; seed SEED, default the CLI's), and measures it with
# `testbench bench --suite chip`. Verilating the 512-bit chip top takes many minutes the first
# time; the model cache (target/verilated, TB_MODEL_CACHE) keeps it for the next run.
#
# The regression file is target/widest-chip-regressions.txt, started as a copy of the committed
# testbench/regressions/chip.txt (so its saved cases replay on the widest top first); failing
# seeds are added there, not to the committed file (widest-only until shown otherwise). Further
# arguments go to `testbench bench`.
#
# It leaves target/release/testbench built against the widest chip top; the next plain
# `cargo build --release -p testbench` (without TB_RTL_DIR) rebuilds the testbench crate
# against rtl/ (its models are in the cache).
set -euo pipefail
cd "$(dirname "$0")/.."
step() { echo "== [$(date -u +%H:%M:%S), ${SECONDS}s] $*" >&2; }
out=target/widest-rtl
step "emit configs/widest.toml to $out"
cargo run -q -p hdl-gen -- emit --config configs/widest.toml --out "$out"
step "release testbench with the widest chip top (nvmeof_offload from $out)"
TB_RTL_DIR="$PWD/$out" TB_RTL_TOPS=nvmeof_offload cargo build --release -q -p testbench
reg=target/widest-chip-regressions.txt
[ -f "$reg" ] || cp testbench/regressions/chip.txt "$reg"
seed=()
[ -n "${SEED:-}" ] && seed=(--seed "$SEED")
step "regress --suite chip --cases ${CASES:-30} on the widest chip top"
target/release/testbench regress --suite chip --cases "${CASES:-30}" "${seed[@]}" \
    --jobs 2 --regressions "$reg" --waves target/waves/widest
step "bench --suite chip on the widest chip top"
target/release/testbench bench --suite chip "$@"
step "widest: all passed"
