// golden test header
//
// Token bucket: rate_i tokens per cycle (8 fraction bits) refill it up to burst_i whole tokens.
// A request is granted when the bucket holds min(req_cost_i, burst_i) tokens and takes its
// whole cost (a request larger than the bucket passes when it is full and leaves a debt).
// Spend and refill of a cycle combine; the cap applies after both. rate_i == 0 is unlimited:
// always ready, bucket held full. The bucket is full after reset. req_ready_o depends on
// req_cost_i, rate_i and burst_i, not on req_valid_i.

module token_bucket_c8_t8_f8 (
  input  logic        clk_i,
  input  logic        rst_ni,

  // configuration
  input  logic [15:0] rate_i,      // tokens per cycle, 8 fraction bits; 0 = unlimited
  input  logic [7:0]  burst_i,     // capacity, whole tokens

  // requests
  input  logic        req_valid_i,
  output logic        req_ready_o,
  input  logic [7:0]  req_cost_i,

  // status
  output logic [7:0]  tokens_o     // whole tokens available now; 0 in debt
);

  logic        just_reset_q; // first cycle after reset: the bucket counts as full
  logic        just_reset_d;
  logic [16:0] level_q;      // tokens, signed (debt), fixed point
  logic [16:0] level_d;
  logic [16:0] full;         // burst_i as a level
  logic        unlimited;
  logic [16:0] avail;        // the level this cycle
  logic [7:0]  need;         // a cost above the capacity waits for a full bucket
  logic        enough;
  logic        grant;
  logic [17:0] spend;
  logic [17:0] refilled;     // after this cycle's spend and refill, before the cap
  logic        over;         // above the capacity

  assign just_reset_d = 1'b0;
  assign full = {1'b0, burst_i, 8'd0};
  assign unlimited = rate_i == 16'd0;
  assign avail = just_reset_q ? full : level_q;
  assign need = (req_cost_i <= burst_i) ? req_cost_i : burst_i;
  assign enough = ~avail[16] & (avail[15:8] >= need);
  assign req_ready_o = unlimited | enough;
  assign grant = req_valid_i & req_ready_o;
  assign spend = grant ? {2'd0, req_cost_i, 8'd0} : 18'd0;
  assign refilled = ({avail[16], avail} - spend) + {2'd0, rate_i};
  assign over = ~refilled[17] & (refilled[16:0] > full);

  always_comb begin
    level_d = refilled[16:0];
    if (unlimited | over) begin
      level_d = full;
    end
  end

  assign tokens_o = avail[16] ? 8'd0 : avail[15:8];

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      just_reset_q <= 1'b1;
      level_q <= 17'd0;
    end else begin
      just_reset_q <= just_reset_d;
      level_q <= level_d;
    end
  end

endmodule
