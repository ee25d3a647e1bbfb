#!/usr/bin/env bash
# Shows that the property suites catch real bugs: each mutant is a copy of rtl/ with one
# deliberate bug. The suite must fail on it and print the shrunk case and the path of its
# waveform. Exits non-zero if a mutant survives. Uses TB_RTL_DIR, so rtl/ itself is untouched;
# failing seeds go to a scratch regression file, not the committed ones.
set -euo pipefail
cd "$(dirname "$0")/.."
cases=${CASES:-60}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# name | file glob in rtl/ | sed expression [| suite, default stdlib]
mutants=(
  "skid buffer accepts while full|skid_buffer_w*.sv|s/assign s_ready_o = ~skid_valid_q;/assign s_ready_o = 1'b1;/"
  "interval timer counts by two|interval_timer_w*.sv|s/count_q + \([0-9]*\)'d1/count_q + \1'd2/"
  "CRC-32 loses a term of bit 0|crc32_d*.sv|/assign crc_bytes[0-9]*_0 = /s/ & 32'h\([0-9a-f]*\)[13579bdf],/ \& 32'h\10,/"
  "token bucket grants one token early|token_bucket_*.sv|/assign enough/s/>= need/> need - 1/"
  "FWFT FIFO ready flipped (== for !=)|fifo_fwft_w*.sv|s/assign s_ready_o = count_q != /assign s_ready_o = count_q == /"
  "FIFO read pointer wraps one word early|fifo_w*.sv|/pop & (rd_ptr_q == /s/== \([0-9]*\)'h\([0-9a-f]\)/== \1'h0/"
  "round robin keeps priority on the winner|rr_arbiter_n*.sv|s/req_i \& ~(ptr_q - \([0-9]*\)'d1)/req_i \& ~ptr_q/"
  "DMA mover strobes whole beats past a write's end|dma_mover_w*.sv|s/assign ws_d = wr_w_load ? (~(\([0-9]*\)'h\([0-9a-f]*\) << wr_k) << wr_lane)/assign ws_d = wr_w_load ? (\1'h\2 << wr_lane)/|dma"
  "DMA walker chains a PRP list one entry late|dma_walker_w*.sv|s/assign is_list_ptr = (list_left_q == 32'd1)/assign is_list_ptr = (list_left_q == 32'd0)/|dma"
  "DMA engine routes R beats by the wrong ID bit|dma_engine_w*.sv|s/assign r_to_mover = m_axi_rid_i\[[0-9]*\];/assign r_to_mover = m_axi_rid_i[0];/|dma"
)

survivors=0
for m in "${mutants[@]}"; do
  IFS='|' read -r name glob expr suite <<<"$m"
  suite=${suite:-stdlib}
  dir="$scratch/rtl"
  rm -rf "$dir" && cp -r rtl "$dir"
  files=("$dir"/$glob)
  sed -i "$expr" "${files[@]}"
  if cmp -s "${files[0]}" "rtl/$(basename "${files[0]}")"; then
    echo "mutation.sh: mutant '$name' did not change ${files[0]}; update its sed expression" >&2
    exit 2
  fi
  echo "== mutant: $name ($(basename "${files[0]}"))"
  log="$scratch/log"
  if TB_RTL_DIR="$dir" cargo run -q -p testbench -- regress --suite "$suite" --cases "$cases" \
      --regressions "$scratch/regressions.txt" --waves target/waves/mutants >"$log" 2>&1; then
    echo "   SURVIVED: the suite passed on a broken design" >&2
    survivors=$((survivors + 1))
  else
    { grep -m1 -A3 "FAILED" "$log" || tail -5 "$log"; } | sed 's/^/   /'
    grep -q "minimal case" "$log" && grep -q "waveform of the minimal case: .*\.fst" "$log" \
      || { echo "   the failure report lacks the minimal case or its waveform" >&2; survivors=$((survivors + 1)); }
  fi
done
# Build the models of the real rtl/ again, so the next cargo command does not relink mutants.
cargo build -q -p testbench
if [ "$survivors" -gt 0 ]; then
  echo "mutation.sh: $survivors mutant(s) survived" >&2
  exit 1
fi
echo "mutation.sh: every mutant was caught"
