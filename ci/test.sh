#!/usr/bin/env bash
# The test job: formatting, lints, every Rust test (builder checks, golden files, CLI, bindings,
# property tests under Verilator), proves rtl/ is current and lint-clean, runs the stdlib
# regression and the mutants. CI runs this through .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
step() { echo "== $*" >&2; }
step "cargo fmt --check"
cargo fmt --all --check
step "cargo clippy"
cargo clippy -q --workspace --all-targets -- -D warnings
step "cargo test"
cargo test -q --workspace
step "hdl-gen check"
cargo run -q -p hdl-gen -- check
step "hdl-gen lint"
cargo run -q -p hdl-gen -- lint
step "testbench regress --suite stdlib"
cargo run -q -p testbench -- regress --suite stdlib --cases 2000
step "testbench regress --suite dma"
cargo run -q -p testbench -- regress --suite dma --cases 100
step "testbench regress --suite nvme"
cargo run -q -p testbench -- regress --suite nvme --cases 300
step "mutants: deliberate bugs in rtl/ copies must fail the suite"
# The stdlib mutants; `bash ci/mutation.sh` runs the DMA ones too (about 10 minutes more).
MUTANT_SUITES=stdlib CASES=60 bash ci/mutation.sh
step "all passed"
