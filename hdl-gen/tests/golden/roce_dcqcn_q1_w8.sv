// golden test header
//
// DCQCN congestion control for 1 queue pair(s) on a 8-bit stream (Zhu et al., SIGCOMM 2015).
// Notification point: an ECN mark raises cnp_req_o[q] unless a CNP is pending or the QP's
// interval (cnp_interval_i ticks from cnp_done_i) runs. Reaction point: per QP rate Rc,
// target Rt (FFFFh = line rate), alpha/1024; a CNP cuts Rc by alpha/2; timers (tick_i) and
// sent bytes raise it again (fast recovery, additive, hyper). may_send_o paces each QP at Rc
// with a byte credit of burst_i. Exact rules: hdl-gen/src/roce/dcqcn.rs.

module roce_dcqcn_q1_w8 (
  input  logic        clk_i,
  input  logic        rst_ni,

  // configuration (CSRs)
  input  logic        enable_i,       // 0: every rate held at the line rate (CNPs still asked for)
  input  logic [15:0] cnp_interval_i, // ticks from a CNP sent to the next one asked for
  input  logic [3:0]  g_shift_i,      // g = 2^-g_shift
  input  logic [15:0] rate_ai_i,      // additive increase, 1/65536 of the line rate
  input  logic [15:0] rate_hai_i,     // hyper increase step
  input  logic [15:0] rate_min_i,     // floor of Rc and Rt
  input  logic [15:0] alpha_period_i, // ticks between alpha decays; 0: never
  input  logic [15:0] inc_period_i,   // ticks between increase events; 0: never
  input  logic [23:0] byte_thresh_i,  // bytes sent between increase events; 0: never
  input  logic [7:0]  fast_steps_i,   // F: fast-recovery events
  input  logic [15:0] burst_i,        // pacing credit capacity, bytes
  input  logic        tick_i,         // one time unit ended

  // notification point
  input  logic        ecn_valid_i,    // a frame accepted for ecn_qp_i carried IP ECN 11
  input  logic        ecn_qp_i,
  output logic        cnp_req_o,      // bit q: send a CNP for QP q
  input  logic        cnp_done_i,     // bit q: the CNP of QP q was sent

  // reaction point
  input  logic        cnp_rx_valid_i, // a CNP for cnp_rx_qp_i arrived
  input  logic        cnp_rx_qp_i,
  input  logic        sent_valid_i,   // a frame of sent_qp_i started
  input  logic        sent_qp_i,
  input  logic [15:0] sent_bytes_i,   // its length in bytes
  output logic        may_send_o,     // bit q: QP q may start a frame now

  // status
  output logic [15:0] rate_o,         // Rc of each QP, QP 0 in the low bits
  output logic [15:0] target_o,       // Rt of each QP
  output logic [9:0]  alpha_o,        // alpha of each QP
  output logic [31:0] np_cnp_count_o, // CNPs asked for
  output logic [31:0] rp_cnp_count_o  // CNPs received
);

  logic [10:0] g_term;             // g as alpha: 1024 >> g_shift
  logic [33:0] credit_full;        // burst_i as a biased credit (2^32 + burst << 16)
  logic [31:0] np_count_q;
  logic [31:0] np_count_d;
  logic [31:0] rp_count_q;
  logic [31:0] rp_count_d;
  logic        qp0_cnp_pend_q;
  logic        qp0_cnp_pend_d;
  logic [15:0] qp0_cnp_timer_q;    // ticks before another CNP may be asked for
  logic [15:0] qp0_cnp_timer_d;
  logic        qp0_cnp_sent;
  logic        qp0_cnp_new;        // a mark that asks for a CNP (others are merged)
  logic [15:0] qp0_rc_q;           // current rate, FFFFh = line rate
  logic [15:0] qp0_rc_d;
  logic [15:0] qp0_rt_q;           // target rate
  logic [15:0] qp0_rt_d;
  logic [9:0]  qp0_alpha_q;
  logic [9:0]  qp0_alpha_d;
  logic [15:0] qp0_alpha_cnt_q;
  logic [15:0] qp0_alpha_cnt_d;
  logic [15:0] qp0_inc_cnt_q;
  logic [15:0] qp0_inc_cnt_d;
  logic [23:0] qp0_bytes_q;        // bytes sent towards the next byte-counter event
  logic [23:0] qp0_bytes_d;
  logic [7:0]  qp0_t_q;            // T: increase-timer events since the last CNP
  logic [7:0]  qp0_t_d;
  logic [7:0]  qp0_bc_q;           // BC: byte-counter events since the last CNP
  logic [7:0]  qp0_bc_d;
  logic        qp0_cnp_rx;
  logic        qp0_sent;
  logic [14:0] qp0_cut;            // Rc * alpha / 2048
  logic [15:0] qp0_rc_cut;
  logic [9:0]  qp0_alpha_decayed;  // (1 - g) alpha
  logic [11:0] qp0_alpha_raised;   // (1 - g) alpha + g, before the ceiling
  logic [16:0] qp0_alpha_cnt_inc;
  logic        qp0_alpha_expired;
  logic [16:0] qp0_inc_cnt_inc;
  logic        qp0_inc_expired;
  logic [24:0] qp0_byte_sum;
  logic        qp0_byte_expired;
  logic [7:0]  qp0_t_new;
  logic [7:0]  qp0_bc_new;
  logic [7:0]  qp0_stage_max;
  logic [7:0]  qp0_stage_min;
  logic        qp0_fast;           // fast recovery: Rt unchanged
  logic        qp0_hyper;
  logic [7:0]  qp0_hyper_steps;
  logic [23:0] qp0_rt_step;        // 0 (fast), i * rate_hai (hyper) or rate_ai (additive)
  logic [24:0] qp0_rt_sum;
  logic [15:0] qp0_rt_sat;
  logic [15:0] qp0_rt_inc;
  logic [15:0] qp0_rc_avg;         // ceil((Rt + Rc) / 2)
  logic        qp0_increase;
  logic [33:0] qp0_credit_q;       // bytes (16 fraction bits) + 2^32: >= 2^32 is no debt
  logic [33:0] qp0_credit_d;
  logic        qp0_unpaced;        // at the line rate: credit held full, never waits
  logic [31:0] qp0_spent;
  logic [15:0] qp0_refill;         // Rc * bytes per cycle, 16 fraction bits
  logic [35:0] qp0_credit_sum;     // credit - spent + refill, biased by 2^33
  logic        qp0_credit_floor;   // more than 65536 bytes of debt
  logic        qp0_credit_ceiling; // above burst_i

  assign g_term = 11'h400 >> g_shift_i;
  assign credit_full = {2'd1, burst_i, 16'd0};
  assign np_cnp_count_o = np_count_q;
  assign rp_cnp_count_o = rp_count_q;
  assign qp0_cnp_sent = qp0_cnp_pend_q & cnp_done_i;
  assign qp0_cnp_new = ecn_valid_i & (ecn_qp_i == 1'b0) & ~qp0_cnp_pend_q & (qp0_cnp_timer_q == 16'd0);

  always_comb begin
    qp0_cnp_pend_d = qp0_cnp_pend_q;
    qp0_cnp_timer_d = qp0_cnp_timer_q;
    if (qp0_cnp_sent) begin
      qp0_cnp_pend_d = 1'b0;
      qp0_cnp_timer_d = cnp_interval_i;
    end else if (tick_i & (qp0_cnp_timer_q != 16'd0)) begin
      qp0_cnp_timer_d = qp0_cnp_timer_q - 16'd1;
    end
    if (qp0_cnp_new) begin
      qp0_cnp_pend_d = 1'b1;
    end
  end

  assign qp0_cnp_rx = cnp_rx_valid_i & (cnp_rx_qp_i == 1'b0);
  assign qp0_sent = sent_valid_i & (sent_qp_i == 1'b0);
  assign qp0_cut = 15'(({16'd0, qp0_rc_q} * {16'd0, {6'd0, qp0_alpha_q}}) >> 11);
  assign qp0_rc_cut = qp0_rc_q - {1'b0, qp0_cut};
  assign qp0_alpha_decayed = qp0_alpha_q - (qp0_alpha_q >> g_shift_i);
  assign qp0_alpha_raised = {2'd0, qp0_alpha_decayed} + {1'b0, g_term};
  assign qp0_alpha_cnt_inc = {1'b0, qp0_alpha_cnt_q} + 17'd1;
  assign qp0_alpha_expired = tick_i & (alpha_period_i != 16'd0) & (qp0_alpha_cnt_inc >= {1'b0, alpha_period_i});
  assign qp0_inc_cnt_inc = {1'b0, qp0_inc_cnt_q} + 17'd1;
  assign qp0_inc_expired = tick_i & (inc_period_i != 16'd0) & (qp0_inc_cnt_inc >= {1'b0, inc_period_i});
  assign qp0_byte_sum = {1'b0, qp0_bytes_q} + {9'd0, sent_bytes_i};
  assign qp0_byte_expired = qp0_sent & (byte_thresh_i != 24'd0) & (qp0_byte_sum >= {1'b0, byte_thresh_i});
  assign qp0_t_new = (qp0_inc_expired & (qp0_t_q != 8'hff)) ? (qp0_t_q + 8'd1) : qp0_t_q;
  assign qp0_bc_new = (qp0_byte_expired & (qp0_bc_q != 8'hff)) ? (qp0_bc_q + 8'd1) : qp0_bc_q;
  assign qp0_stage_max = (qp0_t_new >= qp0_bc_new) ? qp0_t_new : qp0_bc_new;
  assign qp0_stage_min = (qp0_t_new >= qp0_bc_new) ? qp0_bc_new : qp0_t_new;
  assign qp0_fast = qp0_stage_max <= fast_steps_i;
  assign qp0_hyper = qp0_stage_min > fast_steps_i;
  assign qp0_hyper_steps = qp0_stage_min - fast_steps_i;
  assign qp0_rt_step = qp0_fast ? 24'd0 : (qp0_hyper ? ({16'd0, qp0_hyper_steps} * {8'd0, rate_hai_i}) : {8'd0, rate_ai_i});
  assign qp0_rt_sum = {9'd0, qp0_rt_q} + {1'b0, qp0_rt_step};
  assign qp0_rt_sat = (qp0_rt_sum > 25'hffff) ? 16'hffff : qp0_rt_sum[15:0];
  assign qp0_rt_inc = (qp0_rt_sat < rate_min_i) ? rate_min_i : qp0_rt_sat;
  assign qp0_rc_avg = 16'(({1'b0, qp0_rt_inc} + {1'b0, qp0_rc_q} + 17'd1) >> 1);
  assign qp0_increase = qp0_inc_expired | qp0_byte_expired;

  always_comb begin
    qp0_rc_d = qp0_rc_q;
    qp0_rt_d = qp0_rt_q;
    qp0_alpha_d = qp0_alpha_q;
    qp0_alpha_cnt_d = qp0_alpha_cnt_q;
    qp0_inc_cnt_d = qp0_inc_cnt_q;
    qp0_bytes_d = qp0_bytes_q;
    qp0_t_d = qp0_t_q;
    qp0_bc_d = qp0_bc_q;
    if (~enable_i) begin
      qp0_rc_d = 16'hffff;
      qp0_rt_d = 16'hffff;
      qp0_alpha_d = 10'h3ff;
      qp0_alpha_cnt_d = 16'd0;
      qp0_inc_cnt_d = 16'd0;
      qp0_bytes_d = 24'd0;
      qp0_t_d = 8'd0;
      qp0_bc_d = 8'd0;
    end else if (qp0_cnp_rx) begin
      qp0_rt_d = (qp0_rc_q < rate_min_i) ? rate_min_i : qp0_rc_q;
      qp0_rc_d = (qp0_rc_cut < rate_min_i) ? rate_min_i : qp0_rc_cut;
      qp0_alpha_d = (qp0_alpha_raised > 12'h3ff) ? 10'h3ff : qp0_alpha_raised[9:0];
      qp0_alpha_cnt_d = 16'd0;
      qp0_inc_cnt_d = 16'd0;
      qp0_bytes_d = 24'd0;
      qp0_t_d = 8'd0;
      qp0_bc_d = 8'd0;
    end else begin
      if ((alpha_period_i == 16'd0) | qp0_alpha_expired) begin
        qp0_alpha_cnt_d = 16'd0;
      end else if (tick_i) begin
        qp0_alpha_cnt_d = qp0_alpha_cnt_inc[15:0];
      end
      if (qp0_alpha_expired) begin
        qp0_alpha_d = qp0_alpha_decayed;
      end
      if ((inc_period_i == 16'd0) | qp0_inc_expired) begin
        qp0_inc_cnt_d = 16'd0;
      end else if (tick_i) begin
        qp0_inc_cnt_d = qp0_inc_cnt_inc[15:0];
      end
      if ((byte_thresh_i == 24'd0) | qp0_byte_expired) begin
        qp0_bytes_d = 24'd0;
      end else if (qp0_sent) begin
        qp0_bytes_d = qp0_byte_sum[23:0];
      end
      if (qp0_increase) begin
        qp0_t_d = qp0_t_new;
        qp0_bc_d = qp0_bc_new;
        qp0_rt_d = qp0_rt_inc;
        qp0_rc_d = (qp0_rc_avg < rate_min_i) ? rate_min_i : qp0_rc_avg;
      end
    end
  end

  assign qp0_unpaced = ~enable_i | (qp0_rc_q == 16'hffff);
  assign qp0_spent = qp0_sent ? {sent_bytes_i, 16'd0} : 32'd0;
  assign qp0_refill = qp0_rc_q;
  assign qp0_credit_sum = ((36'h100000000 + {2'd0, qp0_credit_q}) - {4'd0, qp0_spent}) + {20'd0, qp0_refill};
  assign qp0_credit_floor = qp0_credit_sum < 36'h100000000;
  assign qp0_credit_ceiling = qp0_credit_sum > ({2'd0, credit_full} + 36'h100000000);

  always_comb begin
    if (qp0_unpaced | qp0_credit_ceiling) begin
      qp0_credit_d = credit_full;
    end else if (qp0_credit_floor) begin
      qp0_credit_d = 34'd0;
    end else begin
      qp0_credit_d = 34'(qp0_credit_sum - 36'h100000000);
    end
  end

  assign cnp_req_o = {qp0_cnp_pend_q};
  assign may_send_o = {qp0_unpaced | (qp0_credit_q[33:32] != 2'd0)};
  assign rate_o = {qp0_rc_q};
  assign target_o = {qp0_rt_q};
  assign alpha_o = {qp0_alpha_q};
  assign np_count_d = (1'b0 | qp0_cnp_new) ? (np_count_q + 32'd1) : np_count_q;
  assign rp_count_d = (cnp_rx_valid_i & (cnp_rx_qp_i < 1'b1)) ? (rp_count_q + 32'd1) : rp_count_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      np_count_q <= 32'd0;
      rp_count_q <= 32'd0;
      qp0_cnp_pend_q <= 1'b0;
      qp0_cnp_timer_q <= 16'd0;
      qp0_rc_q <= 16'hffff;
      qp0_rt_q <= 16'hffff;
      qp0_alpha_q <= 10'h3ff;
      qp0_alpha_cnt_q <= 16'd0;
      qp0_inc_cnt_q <= 16'd0;
      qp0_bytes_q <= 24'd0;
      qp0_t_q <= 8'd0;
      qp0_bc_q <= 8'd0;
      qp0_credit_q <= 34'd0;
    end else begin
      np_count_q <= np_count_d;
      rp_count_q <= rp_count_d;
      qp0_cnp_pend_q <= qp0_cnp_pend_d;
      qp0_cnp_timer_q <= qp0_cnp_timer_d;
      qp0_rc_q <= qp0_rc_d;
      qp0_rt_q <= qp0_rt_d;
      qp0_alpha_q <= qp0_alpha_d;
      qp0_alpha_cnt_q <= qp0_alpha_cnt_d;
      qp0_inc_cnt_q <= qp0_inc_cnt_d;
      qp0_bytes_q <= qp0_bytes_d;
      qp0_t_q <= qp0_t_d;
      qp0_bc_q <= qp0_bc_d;
      qp0_credit_q <= qp0_credit_d;
    end
  end

endmodule
