#!/usr/bin/env bash
# Shows that the property suites catch real bugs: each mutant is a copy of rtl/ with one
# deliberate bug. The suite must fail on it and print the shrunk case and the path of its
# waveform. Exits non-zero if a mutant survives. Uses TB_RTL_DIR, so rtl/ itself is untouched;
# failing seeds go to a scratch regression file, not the committed ones.
set -euo pipefail
cd "$(dirname "$0")/.."
cases=${CASES:-60}
# Which suites' mutants to run (the DMA mutants rebuild large models: minutes each).
suites=${MUTANT_SUITES:-stdlib dma nvme nvme-tcp qos rdma chip tcp}
# Only the mutants whose name contains this text (all when empty).
match=${MUTANT_MATCH:-}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# name | file in rtl/ | sed expression | suite | property. Only the named file is mutated (a
# block used inside others, like the FIFO, is mutated only where it is a top of its own), and
# only the property that covers it runs, so each mutant costs one model rebuild.
mutants=(
  "skid buffer accepts while full|skid_buffer_w64.sv|s/assign s_ready_o = ~skid_valid_q;/assign s_ready_o = 1'b1;/|stdlib|skid_buffer"
  "interval timer counts by two|interval_timer_w16.sv|s/count_q + \([0-9]*\)'d1/count_q + \1'd2/|stdlib|interval_timer"
  "CRC-32 loses a term of bit 0|crc32_d64.sv|/assign crc_bytes[0-9]*_0 = /s/ & 32'h\([0-9a-f]*\)[13579bdf],/ \& 32'h\10,/|stdlib|crc32"
  "token bucket grants one token early|token_bucket_c16_t24_f16.sv|/assign enough/s/>= need/> need - 1/|stdlib|token_bucket"
  "FWFT FIFO ready flipped (== for !=)|fifo_fwft_w32_d13.sv|s/assign s_ready_o = count_q != /assign s_ready_o = count_q == /|stdlib|fifo_fwft"
  "FIFO read pointer wraps one word early|fifo_w32_d13.sv|/pop & (rd_ptr_q == /s/== \([0-9]*\)'h\([0-9a-f]\)/== \1'h0/|stdlib|fifo,fifo_ops"
  "round robin keeps priority on the winner|rr_arbiter_n4.sv|s/req_i \& ~(ptr_q - \([0-9]*\)'d1)/req_i \& ~ptr_q/|stdlib|rr_arbiter"
  "AXI4-Lite decoder lets a write in slot 0's gap reach slave 0 (its window check dropped)|axil_decoder_a13_w8_13_7_13_10_6.sv|s/(s_axil_awaddr_i\[15:13\] == 3'd0) \& ~.s_axil_awaddr_i\[12:8\]/(s_axil_awaddr_i[15:13] == 3'd0)/|stdlib|axil_decoder"
  "AXI upsizer strobes lane 0 of every wide beat (writes bytes around a narrow burst)|axi_upsizer_i4_n64_w512.sv|/assign pk_strb_new = /s/: pk_strb_q\[7:0\]}/: 8'hff}/|stdlib|axi_upsizer"
  "AXI upsizer keeps a partial last wide R beat (the next burst reads stale lanes)|axi_upsizer_i4_n64_w512.sv|s/assign r_wide_done = r_last . (r_lane_now/assign r_wide_done = (r_lane_now/|stdlib|axi_upsizer"
  "AXI upsizer asks one wide beat too many|axi_upsizer_i4_n64_w512.sv|s/assign ar_wlen = 8'(\(.*\) >> 3);/assign ar_wlen = 8'((\1 >> 3) + 9'd1);/|stdlib|axi_upsizer"
  "DMA mover strobes whole beats past a write's end|dma_mover_w64_t3_l21.sv|s/assign ws_d = wr_w_load ? (~(\([0-9]*\)'h\([0-9a-f]*\) << wr_k) << wr_lane)/assign ws_d = wr_w_load ? (\1'h\2 << wr_lane)/|dma|dma_mover"
  "DMA walker chains a PRP list one entry late|dma_walker_w64_t3_l21.sv|s/assign is_list_ptr = (list_left_q == 32'd1)/assign is_list_ptr = (list_left_q == 32'd0)/|dma|dma_walker"
  "NVMe/TCP checks header digests inverted (== for !=)|nvme_tcp_conn_w64_d4_h8192_i4096.sv|/assign rx_dgst_bad = /s/(rx_dgst_q != rx_crc_crc)/(rx_dgst_q == rx_crc_crc)/|nvme-tcp|nvme_tcp_conn"
  "NVMe/TCP skips the C2HData bound check (DATAO + DATAL inside the command)|nvme_tcp_conn_w64_d4_h8192_i4096.sv|s/assign c2h_out_of_range = c2h_end > {1'b0, c2h_cmd_len};/assign c2h_out_of_range = 1'b0;/|nvme-tcp|nvme_tcp_conn_hostile"
  "NVMe/TCP writes a C2HData whose data digest failed|nvme_tcp_conn_w64_d4_h8192_i4096.sv|s/(verdict_at_digest \& ~rx_ddgst_bad)/verdict_at_digest/|nvme-tcp|nvme_tcp_conn_hostile"
  "NVMe/TCP sends H2CData larger than MAXH2CDATA (whole R2T in one PDU)|nvme_tcp_conn_w64_d4_h8192_i4096.sv|s/assign h2c_fits = h2c_rem <= maxh2cdata_q;/assign h2c_fits = 1'b1;/|nvme-tcp|nvme_tcp_conn"
  "NVMe/TCP skips the R2T bound check (R2TO + R2TL inside the command)|nvme_tcp_conn_w64_d4_h8192_i4096.sv|s/assign r2t_out_of_range = .*;/assign r2t_out_of_range = 1'b0;/|nvme-tcp|nvme_tcp_conn_hostile"
  "NVMe/TCP reads the CQE status one bit low|nvme_tcp_conn_w64_d4_h8192_i4096.sv|s/assign resp_status = rx_hdr_q\[191:177\];/assign resp_status = rx_hdr_q[190:176];/|nvme-tcp|nvme_tcp_conn"
  "NVMe/TCP completes a command its dead connection never answered with success, not 22h (block level)|nvme_tcp_conn_w64_d4_h8192_i4096.sv|/end else if (~cpl_slot_resp) begin/{n;s/cpl_slot_final = 15'h22;/cpl_slot_final = 15'h0;/}|nvme-tcp|nvme_tcp_conn_hostile"
  "QoS namespace bandwidth bucket lends one token of credit|qos_bucket_c32_t32_f16.sv|s/~level_q\[48\];/~(level_q[48] \& (level_q[47:16] != 32'hffffffff));/|qos|qos_mix"
  "QoS grants ignore their write bit|qos_arbiter_q64_n4_g8_d4.sv|s/(~chk_need_write . csr_grant\([0-9]*\)_ctrl_write)/1'b1/g|qos|qos_mix"
  "QoS arbiter ignores dst_space_i (releases a head whose transport channel is full)|qos_arbiter_q64_n4_g8_d4.sv|s/assign candidate = nonempty \& dst_space_i;/assign candidate = nonempty;/|qos|qos_mix"
  "QoS arbiter waits for an empty output register|qos_arbiter_q64_n4_g8_d4.sv|s/assign decide = csr_ctrl_enable \& out_free \& sched_any;/assign decide = csr_ctrl_enable \& ~out_valid_q \& sched_any;/|qos|qos_mix"
  "QoS lazy bucket keeps the stamp of an earlier charge (refills from a stale time)|qos_arbiter_q64_n4_g8_d4.sv|s/assign charge_bucket_word = {charge_bw_spent_level, charge_iops_spent_level, now_q};/assign charge_bucket_word = {charge_bw_spent_level, charge_iops_spent_level, charge_stamp};/|qos|qos_idle"
  "QoS lazy refill forgets the burst cap (a long idle buys more than a burst)|qos_arbiter_q64_n4_g8_d4.sv|s/ . (~charge_bw_sum\[73\] \& (charge_bw_sum > {25'd0, charge_bw_full}))//|qos|qos_idle"
  "QoS sweep sets a budget bit without looking at the IOPS bucket|qos_arbiter_q64_n4_g8_d4.sv|s/assign sweep_budget = sweep_valid_q \& ~sweep_bw_level\[48\] \& ~sweep_iops_level\[32\];/assign sweep_budget = sweep_valid_q \& ~sweep_bw_level[48];/|qos|qos_mix"
  "NVMe front end posts into a full CQ|nvme_ctrl_q64_d1024_s0_w64_v16_b8_f32.sv|s/assign p_full = p_tail_new == c_head;/assign p_full = 1'b0;/|nvme|nvme_queues"
  "NVMe front end forwards SQEs with reserved CDW0 bits|nvme_ctrl_q64_d1024_s0_w64_v16_b8_f32.sv|s/assign d_field_bad = (d_sqe\[13:8\] != 6'd0)/assign d_field_bad = (d_sqe[9:8] != 2'd0)/|nvme|nvme_queues"
  "NVMe front end lets a WRR turn run while urgent work waits|nvme_ctrl_q64_d1024_s0_w64_v16_b8_f32.sv|s/assign pick_cls = sched_urgent_ok ? 2'd0 : wrr_pick;/assign pick_cls = (~wrr_cur_ok \\& sched_urgent_ok) ? 2'd0 : wrr_pick;/|nvme|nvme_queues"
  "NVMe WRR ends a class's turn one command short of its weight|nvme_ctrl_q64_d1024_s0_w64_v16_b8_f32.sv|s/\\& (wrr_cnt_q <= (/\\& (wrr_cnt_q < (/|nvme|nvme_arbitration"
  "NVMe arbitration lets a throttled urgent queue win (it blocks every other queue)|nvme_ctrl_q64_d1024_s0_w64_v16_b8_f32.sv|s/assign sched_urgent_ok = sched_urgent_m_valid \\& sched_urgent_head_eligible;/assign sched_urgent_ok = sched_urgent_m_valid;/|nvme|nvme_arbitration"
  "NVMe interrupt coalescing fires one completion before THR + 1|nvme_ctrl_q64_d1024_s0_w64_v16_b8_f32.sv|s/(coal_cnt\\([0-9]*\\)_q + 9'd1) > /(coal_cnt\\1_q + 9'd1) >= /g|nvme|nvme_coalescing"
  "NVMe front end treats a later failed SQE beat as a failed CDW0 beat (CSTS.CFS for 04h)|nvme_ctrl_q64_d1024_s0_w64_v16_b8_f32.sv|s/assign r_err0_now = r_first_beat ? r_err : r_err0_q;/assign r_err0_now = r_first_beat ? r_err : r_err_any;/|nvme|nvme_queues"
  "NVMe front end checks a CQ head doorbell only against the CQ tail, not the queue size|nvme_ctrl_q64_d1024_s0_w64_v16_b8_f32.sv|s/assign db_cq_value_bad = (db_value > {6'd0, c_size}) . db_cq_past_tail;/assign db_cq_value_bad = db_cq_past_tail;/|nvme|nvme_queues"
  "NVMe front end posts a fallback command's completion on the admin queue (firmware's SQ id dropped)|nvme_ctrl_q64_d1024_s0_w64_v16_b8_f32.sv|s/(cpl_arbiter_gnt\[1\] ? admin_cpl_sqid_i : io_cpl_sqid_i)/(cpl_arbiter_gnt[1] ? 16'd0 : io_cpl_sqid_i)/|nvme|nvme_queues"
  "NVMe latency histogram loses a count when two land in one bin on consecutive cycles (RMW forwarding dropped)|nvme_ctrl_q64_d1024_s0_w64_v16_b8_f32.sv|s/assign lat_forward = .*;/assign lat_forward = 1'b0;/|nvme|nvme_queues"
  "RoCE engine accepts a frame with a bad ICRC|roce_w64_q2_d4.sv|s/assign chk_icrc = rx_icrc_q != rx_crc_crc;/assign chk_icrc = 1'b0;/|rdma|rdma"
  "RoCE engine takes a PSN ahead of the expected one as in order|roce_w64_q2_d4.sv|s/assign rx_psn_ok = rx_psn_diff == 24'd0;/assign rx_psn_ok = ~rx_psn_diff[23];/|rdma|rdma"
  "RoCE DCQCN decays alpha by g/2 (the alpha update one bit off)|roce_dcqcn_q2_w64.sv|s/(qp\([0-9]\)_alpha_q >> g_shift_i)/(qp\1_alpha_q >> (g_shift_i + 4'd1))/g|rdma|rdma_dcqcn"
  "RoCE DCQCN ignores the CNP interval (a CNP for every mark)|roce_dcqcn_q2_w64.sv|s/ \\& (qp\([0-9]\)_cnp_timer_q == 16'd0);/;/|rdma|rdma_dcqcn"
  "RoCE DCQCN averages Rc rounding down (never back at the line rate)|roce_dcqcn_q2_w64.sv|s/ + 17'd1) >> 1)/) >> 1)/|rdma|rdma_dcqcn_recovery"
  "RoCE engine lets an RDMA WRITE end one byte past its command's data|roce_w64_q2_d4.sv|s/<= {9'd0, rx_key_len});/<= ({9'd0, rx_key_len} + 33'd1));/|rdma|rdma"
  "RoCE engine writes an RDMA WRITE whose ICRC failed to host memory|roce_w64_q2_d4.sv|s/assign ev_write = rx_pass \& h_is_write;/assign ev_write = ~(~rx_pass \& ~(rx_in_chk \& (rx_drop == DROP_ICRC))) \& h_is_write;/|rdma|rdma"
  "RoCE engine ignores a received CNP (its rate never drops)|roce_w64_q2_d4.sv|s/assign cc_cnp_rx_valid = rx_pass \& h_is_cnp;/assign cc_cnp_rx_valid = 1'b0;/|rdma|rdma_cc"
  "RoCE engine sends again at once after an RNR NAK (its timer ignored)|roce_w64_q2_d4.sv|s/assign qp\([0-9]\)_rnr_waiting = qp\1_rnr_wait_q != 20'd0;/assign qp\1_rnr_waiting = 1'b0;/|rdma|rdma_cc"
  "RoCE engine lets a Read's completion record leave before its DMA writes are answered|roce_w64_q2_d4.sv|/assign rec_ready = /s/ \& (qp[0-9]_slot[0-9]_dma_open_q == 8'd0)//g|rdma|rdma"
  "DMA walker's windowed skip segment leaves out PRP1's bytes|dma_walker_w64_t3_l21.sv|s/assign skip_len = prp1_len + /assign skip_len = /|dma|dma_walker"
  "RoCE READ responder lets an ACK overtake a READ response before it|roce_w64_q2_d4.sv|s/assign rr_ack_hold = .*;/assign rr_ack_hold = 2'b00;/|rdma|rdma"
  "RoCE engine steps the expected PSN by one for any READ (not ceil(len / MTU))|roce_w64_q2_d4.sv|s/assign rr_span = (rr_span_raw == 24'd0) ? 24'd1 : rr_span_raw;/assign rr_span = 24'd1;/|rdma|rdma"
  "RoCE engine answers a READ naming an in-capsule Write (its capsule gave no key; caught in about 5 of 100 cases)|roce_w64_q2_d4.sv|s/ \\& rx_key_keyed \\&/ \\&/|rdma|rdma"
  "RoCE engine puts a Write's data in its capsule when SQE + data exceed the QP's MTU|roce_w64_q2_d4.sv|s/(cmd_len <= {11.d0, cmd_mtu - 13.h40})/(cmd_len <= {11'd0, cmd_mtu})/|rdma|rdma"
  "RoCE engine sends Not-ECT frames whatever tx_tos.data_ecn says|roce_w64_q2_d4.sv|s/assign tx_data_tos = {csr_tx_tos_data_dscp, csr_tx_tos_data_ecn};/assign tx_data_tos = {csr_tx_tos_data_dscp, 2'd0};/|rdma|rdma"
  "RoCE READ responder starts a frame before its payload is in (tvalid falls mid-frame)|roce_w64_q2_d4.sv|s/ \\& (rr_fifo_count >= {1.b0, rr_next_beats});/;/|rdma|rdma"
  "RoCE engine lets a capsule overtake a capsule job still waiting for its data|roce_w64_q2_d4.sv|s/ \\& ~rr_capsule_waits;/;/|rdma|rdma"
  "AXI interconnect routes R beats by the wrong ID bits (index taken one bit low)|axi_interconnect_m3_i5_w64.sv|s/assign r_idx = m_axi_rid_i\[\([0-9]*\):\([0-9]*\)\];/assign r_idx = m_axi_rid_i[\1-1:\2-1];/|stdlib|axi_interconnect"
  "AXI interconnect pops the W order FIFO on every beat, not on WLAST (bursts interleave)|axi_interconnect_m3_i5_w64.sv|/assign w_done = /s/ \& w_sel\[[0-9]*\];/;/|stdlib|axi_interconnect"
  "DMA engine routes R beats by the wrong ID bit|dma_engine_w64_t3_l21.sv|s/assign r_to_mover = m_axi_rid_i\[[0-9]*\];/assign r_to_mover = m_axi_rid_i[0];/|dma|dma_engine"
  "chip routing table sends an unbound queue's commands to its stale channel|chip_route_q64_roce2_nvme_tcp2_d0.sv|s/assign cmd_bound = cmd_in_range \& cmd_bound_raw;/assign cmd_bound = cmd_in_range;/|chip|chip"
  "chip completion merge returns a RoCE completion to the channel's SQ id, not its bound queue's|chip_route_q64_roce2_nvme_tcp2_d0.sv|s/assign roce_cpl_sqid = .*;/assign roce_cpl_sqid = s_roce_cpl_sqid_i;/|chip|chip"
  "chip completion merge returns an NVMe/TCP completion to the connection's SQ id, not its bound queue's (caught in 16 of 60 cases)|chip_route_q64_roce2_nvme_tcp2_d0.sv|s/assign nvme_tcp_cpl_sqid = .*;/assign nvme_tcp_cpl_sqid = s_nvme_tcp_cpl_sqid_i;/|chip|chip"
  "chip completion merge completes an unbound queue's command with success|chip_route_q64_roce2_nvme_tcp2_d0.sv|s/? 15'h82 :/? 15'h0 :/|chip|chip"
  "NVMe front end lets CSTS.RDY fall with commands still in the transports (a controller reset's stale completions and data reach the host)|nvme_ctrl_q64_d1024_s0_w64_v16_b8_f32.sv|s/ \& (io_inflight_q == 32'd0) \& / \& /|chip|chip"
  "AXI interconnect answers every write OKAY (a host-memory write error never reaches the DMA engine)|axi_interconnect_m3_i5_w64.sv|s/assign b_word = {m_axi_bid_i\[4:0\], m_axi_bresp_i};/assign b_word = {m_axi_bid_i[4:0], 2'b00};/|chip|chip"
  "NVMe/TCP completes a command its dead connection never answered with success (not 22h)|nvme_tcp_conn_w64_d4_h8192_i4096.sv|/end else if (~cpl_slot_resp) begin/{n;s/cpl_slot_final = 15'h22;/cpl_slot_final = 15'h0;/}|chip|chip"
  "RoCE engine completes the commands of a QP in error with success, not 22h (the target died)|roce_w64_q2_d4.sv|s/ : rec_status) : 15'h22;/ : rec_status) : 15'h0;/|chip|chip"
  "chip top ties the front end's irq_ready high (an interrupt the host is not ready for is lost)|nvmeof_offload.sv|s/(irq_ready_i),/(1'b1),/|chip|chip"
  "TCP engine leaves the protocol number out of its transmit checksum's pseudo-header|tcp_w64_c2_t8192_r8192_a4_e512.sv|/assign seg_sum = /s/ + {16'd0, 16'd6}//|tcp|tcp_stream"
  "TCP engine takes a segment whose checksum failed (corrupted bytes delivered)|tcp_w64_c2_t8192_r8192_a4_e512.sv|s/assign rx_tcp_csum_ok = .*;/assign rx_tcp_csum_ok = 1'b1;/|tcp|tcp_stream"
)

survivors=0
for m in "${mutants[@]}"; do
  fields=${m//[^|]/}
  if [ ${#fields} -ne 4 ]; then
    echo "mutation.sh: mutant '${m%%|*}' has ${#fields} '|' separators, not 4 (write a '|' in a sed expression as '.')" >&2
    exit 2
  fi
  IFS='|' read -r name file expr suite property <<<"$m"
  case " $suites " in *" $suite "*) ;; *) continue ;; esac
  case "$name" in *"$match"*) ;; *) continue ;; esac
  dir="$scratch/rtl"
  rm -rf "$dir" && cp -r rtl "$dir"
  if [ ! -f "$dir/$file" ]; then
    echo "mutation.sh: rtl/$file does not exist (the shipped configuration changed?); update mutant '$name'" >&2
    exit 2
  fi
  files=("$dir/$file")
  sed -i "$expr" "${files[@]}"
  if cmp -s "${files[0]}" "rtl/$(basename "${files[0]}")"; then
    echo "mutation.sh: mutant '$name' did not change ${files[0]}; update its sed expression" >&2
    exit 2
  fi
  echo "== mutant: $name ($(basename "${files[0]}"))"
  log="$scratch/log"
  if TB_RTL_DIR="$dir" cargo run -q -p testbench -- regress --suite "$suite" --property "$property" --cases "$cases" \
      --regressions "$scratch/regressions.txt" --waves target/waves/mutants --fail-fast >"$log" 2>&1; then
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
