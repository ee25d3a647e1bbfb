// golden test header
//
// Interval timer, 4-bit: start_i latches limit_i, tick_i counts, expired_o pulses
// one cycle after the count reaches the limit; stop_i cancels.

module interval_timer_w4 (
  input  logic       clk_i,
  input  logic       rst_i,

  // control
  input  logic       start_i,
  input  logic       stop_i,
  input  logic       tick_i,
  input  logic [3:0] limit_i,

  // status
  output logic       busy_o,
  output logic       expired_o,
  output logic [3:0] count_o
);

  typedef enum logic [1:0] {
    StIdle = 2'd0,
    StRun  = 2'd1,
    StFire = 2'd2
  } state_e;

  state_e     state_q;
  state_e     state_d;
  logic [3:0] count_q;
  logic [3:0] count_d;
  logic [3:0] limit_q;
  logic [3:0] limit_d;
  logic       reached;

  assign reached = count_q == limit_q;
  assign busy_o = state_q == StRun;
  assign expired_o = state_q == StFire;
  assign count_o = count_q;

  always_comb begin
    state_d = state_q;
    count_d = count_q;
    limit_d = limit_q;
    case (state_q)
      StIdle, StFire: begin
        state_d = StIdle;
        if (start_i) begin
          state_d = StRun;
          count_d = 4'd0;
          limit_d = limit_i;
        end
      end
      StRun: begin
        if (stop_i) begin
          state_d = StIdle;
        end else if (reached) begin
          state_d = StFire;
        end else if (tick_i) begin
          count_d = count_q + 4'd1;
        end
      end
      default: begin
        state_d = StIdle;
      end
    endcase
  end

  always_ff @(posedge clk_i) begin
    if (rst_i) begin
      state_q <= StIdle;
      count_q <= 4'd0;
      limit_q <= 4'd0;
    end else begin
      state_q <= state_d;
      count_q <= count_d;
      limit_q <= limit_d;
    end
  end

endmodule
