#!/usr/bin/env bash
# The test job: formatting, lints, every Rust test (builder checks, golden files, CLI, bindings),
# then proves rtl/ is current and lint-clean. CI runs this through .ci/run.
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
step "all passed"
