// golden test header
//
// Weighted round-robin arbiter, 3 requesters, 4-bit weights, locked grant.
// A request (req_i[i]) stays high until its transfer (valid_o & ready_i with gnt_o[i]).
// With no grant held, the grant is combinational: valid_o = |req_i, and gnt_o is
// the first requester at or after the pointer, going round (gnt_idx_o its index).
// A grant not taken (valid_o & ~ready_i) is held, whatever req_i does, until its
// transfer. ready_i never reaches an output. One transfer per cycle is sustained.
// weight_i[i*4 +: 4] is requester i's weight w, zero's based (as in NVMe).
// At a transfer, with w the winner's weight in that cycle: done = turn count
// if the winner is at the pointer, else 0. done >= w ends the turn (pointer to
// the requester after the winner, count 0); otherwise pointer = winner and
// count = done + 1. So up to w+1 transfers in a row while others wait.

module wrr_arbiter_n3_w4 (
  input  logic        clk_i,
  input  logic        rst_ni,

  // requests
  input  logic [2:0]  req_i,
  input  logic [11:0] weight_i,

  // grant
  output logic        valid_o,
  input  logic        ready_i,
  output logic [2:0]  gnt_o,
  output logic [1:0]  gnt_idx_o
);

  logic [2:0] ptr_q;        // one-hot: the requester with the highest priority
  logic [2:0] ptr_d;
  logic       locked_q;     // a grant is held until its transfer
  logic       locked_d;
  logic [2:0] held_gnt_q;
  logic [2:0] held_gnt_d;
  logic [2:0] req_masked;   // requests at or after the pointer
  logic [2:0] pick_masked;
  logic [2:0] pick_any;
  logic [2:0] pick;
  logic       any_req;
  logic       transfer;
  logic [2:0] after_winner;
  logic [3:0] turn_count_q; // transfers made in the current turn
  logic [3:0] turn_count_d;
  logic [3:0] win_weight;
  logic       at_ptr;       // the winner continues its turn
  logic [3:0] done;         // transfers the winner made in this turn before this one
  logic       turn_over;

  assign req_masked = req_i & ~(ptr_q - 3'd1);
  assign pick_masked = req_masked & (~req_masked + 3'd1);
  assign pick_any = req_i & (~req_i + 3'd1);
  assign pick = (|req_masked) ? pick_masked : pick_any;
  assign any_req = |req_i;
  assign valid_o = locked_q | any_req;
  assign gnt_o = locked_q ? held_gnt_q : pick;
  assign gnt_idx_o = {gnt_o[2], gnt_o[1]};
  assign transfer = valid_o & ready_i;
  assign after_winner = {gnt_o[1:0], gnt_o[2]};

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
    win_weight = 4'd0;
    case (gnt_idx_o)
      2'd0: begin
        win_weight = weight_i[3:0];
      end
      2'd1: begin
        win_weight = weight_i[7:4];
      end
      2'd2: begin
        win_weight = weight_i[11:8];
      end
      default: ;
    endcase
  end

  assign at_ptr = |(gnt_o & ptr_q);
  assign done = at_ptr ? turn_count_q : 4'd0;
  assign turn_over = done >= win_weight;

  always_comb begin
    ptr_d = ptr_q;
    turn_count_d = turn_count_q;
    if (transfer & turn_over) begin
      ptr_d = after_winner;
      turn_count_d = 4'd0;
    end else if (transfer) begin
      ptr_d = gnt_o;
      turn_count_d = done + 4'd1;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ptr_q <= 3'd1;
      locked_q <= 1'b0;
      held_gnt_q <= 3'd0;
      turn_count_q <= 4'd0;
    end else begin
      ptr_q <= ptr_d;
      locked_q <= locked_d;
      held_gnt_q <= held_gnt_d;
      turn_count_q <= turn_count_d;
    end
  end

endmodule
