#!/usr/bin/env bash
# The main job: generate the RTL for the shipped configuration into rtl/ and lint every module
# with Verilator (-Wall) and Yosys. Extra arguments go to `hdl-gen emit` (e.g. --config F --out D).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
cargo build --release -q -p hdl-gen
./target/release/hdl-gen emit "$@"
config=()
for ((i = 1; i <= $#; i++)); do
  if [ "${!i}" = "--config" ]; then j=$((i + 1)); config=(--config "${!j}"); fi
done
./target/release/hdl-gen lint "${config[@]}"
