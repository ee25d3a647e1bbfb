// golden test header
//
// Round-robin arbiter, 4 requesters, locked grant.
// A request (req_i[i]) stays high until its transfer (valid_o & ready_i with gnt_o[i]).
// With no grant held, the grant is combinational: valid_o = |req_i, and gnt_o is
// the first requester at or after the pointer, going round (gnt_idx_o its index).
// A grant not taken (valid_o & ~ready_i) is held, whatever req_i does, until its
// transfer. ready_i never reaches an output. One transfer per cycle is sustained.
// After a transfer the pointer moves to the requester after the winner.

module rr_arbiter_n4 (
  input  logic       clk_i,
  input  logic       rst_ni,

  // requests
  input  logic [3:0] req_i,

  // grant
  output logic       valid_o,
  input  logic       ready_i,
  output logic [3:0] gnt_o,
  output logic [1:0] gnt_idx_o
);

  logic [3:0] ptr_q;        // one-hot: the requester with the highest priority
  logic [3:0] ptr_d;
  logic       locked_q;     // a grant is held until its transfer
  logic       locked_d;
  logic [3:0] held_gnt_q;
  logic [3:0] held_gnt_d;
  logic [3:0] req_masked;   // requests at or after the pointer
  logic [3:0] pick_masked;
  logic [3:0] pick_any;
  logic [3:0] pick;
  logic       any_req;
  logic       transfer;
  logic [3:0] after_winner;

  assign req_masked = req_i & ~(ptr_q - 4'd1);
  assign pick_masked = req_masked & (~req_masked + 4'd1);
  assign pick_any = req_i & (~req_i + 4'd1);
  assign pick = (|req_masked) ? pick_masked : pick_any;
  assign any_req = |req_i;
  assign valid_o = locked_q | any_req;
  assign gnt_o = locked_q ? held_gnt_q : pick;
  assign gnt_idx_o = {gnt_o[2] | gnt_o[3], gnt_o[1] | gnt_o[3]};
  assign transfer = valid_o & ready_i;
  assign after_winner = {gnt_o[2:0], gnt_o[3]};

  always_comb begin
    locked_d = locked_q;
    held_gnt_d = held_gnt_q;
    if (transfer) begin
      locked_d = 1'b0;
    end else if (valid_o) begin
      locked_d = 1'b1;
      held_gnt_d = gnt_o;
    end
  end

  always_comb begin
    ptr_d = ptr_q;
    if (transfer) begin
      ptr_d = after_winner;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ptr_q <= 4'd1;
      locked_q <= 1'b0;
      held_gnt_q <= 4'd0;
    end else begin
      ptr_q <= ptr_d;
      locked_q <= locked_d;
      held_gnt_q <= held_gnt_d;
    end
  end

endmodule
