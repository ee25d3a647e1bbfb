#!/usr/bin/env bash
# Post-synthesis simulation: Yosys synthesizes the tops of the default configuration that the
# stdlib suite drives (generic `synth -flatten`, netlist written with `write_verilog -noattr`)
# into a copy of rtl/ (target/postsynth/rtl), and the stdlib property suite runs on those
# netlists exactly as on the RTL (TB_RTL_DIR). The netlists keep the modules' names and ports
# (hdl-gen checks), so the generated bindings fit them. CASES sets the number of random cases.
# Only the tops of the stdlib suite are synthesized (not the AXI4 interconnect, whose FIFO RAMs
# become flip-flops); the chip engines (DMA, NVMe, QoS, NVMe/TCP)
# stay RTL here: their suites are not run on netlists, and flattened to gates (memories as
# flip-flops) they are hundreds of thousands of lines that Verilator takes minutes over.
# The netlists come from the flow's pinned YoWASP Yosys 0.70; YOSYS=system uses the `yosys` on
# PATH (Debian's 0.23) instead. The testbench builds every model with -fno-const-bit-op-tree:
# Verilator 5.006's bit-op-tree optimization simulates the XNOR trees of these netlists wrongly.
set -euo pipefail
cd "$(dirname "$0")/.."
cases=${CASES:-200}
out="$(pwd)/target/postsynth/rtl"
rm -rf "$out"
only=()
tops=()
for shim in rtl/*_shim.cpp; do
  top=$(basename "$shim" _shim.cpp)
  case "$top" in
    skid_buffer_* | interval_timer_* | crc32_* | crc32c_* | token_bucket_* | fifo_* | \
      rr_arbiter_* | wrr_arbiter_* | axil_decoder_*) only+=(--only "$top"); tops+=("$top") ;;
  esac
done
tool=()
[ "${YOSYS:-pinned}" = system ] && tool=(--system-yosys)
cargo run -q -p hdl-gen -- fpga netlist --out "$out" "${tool[@]}" "${only[@]}" "$@"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Replay the saved regressions too, without adding to the committed file.
cp testbench/regressions/stdlib.txt "$scratch/regressions.txt" 2>/dev/null || true
status=0
# TB_RTL_TOPS: only the netlisted tops are built from the netlists; every other top (the chip
# engines, whose RTL instantiates a netlisted block) stays rtl/'s, found in the model cache.
# Without it each of those was re-verilated around the netlists: about 5 of this step's 7
# minutes in CI, for models the stdlib suite never drives.
TB_RTL_DIR="$out" TB_RTL_TOPS="$(IFS=,; echo "${tops[*]}")" \
  cargo run -q -p testbench -- regress --suite stdlib --cases "$cases" \
  --regressions "$scratch/regressions.txt" --waves target/waves/postsynth || status=$?
# The next cargo command without TB_RTL_DIR builds on rtl/ again by itself (build.rs reruns when
# the variable changes, and rtl/'s models come from the model cache), so nothing is rebuilt
# here; only target/debug/testbench run directly still holds the netlists until then.
exit $status
