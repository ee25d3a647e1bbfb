// golden test header
//
// Synchronous FIFO, 5 x 8 bits, first-word fall-through.
// Write: s_ready_o = (count_o != 5), from flip-flops; a word is taken
// when s_valid_i & s_ready_o (whatever the read side does in that cycle).
// Read: m_valid_o = (count_o != 0) and m_data_o = the oldest word, both from
// flip-flops; a word leaves when m_valid_o & m_ready_i (m_ready_i alone does nothing).
// A word written into an empty FIFO in cycle t is on m in cycle t+1, and m_valid_o
// stays high while words are held. Both sides transfer in the same cycle independently:
// one word per cycle in and out for depth >= 2 (depth 1 alternates).
// count_o = words held. Order is kept; reset empties the FIFO.
// Storage: the output register, one behind it, a 3-word RAM read ahead.

module fifo_fwft_w8_d5 (
  input  logic       clk_i,
  input  logic       rst_ni,

  // write port
  input  logic       s_valid_i,
  output logic       s_ready_o,
  input  logic [7:0] s_data_i,

  // read port
  output logic       m_valid_o,
  input  logic       m_ready_i,
  output logic [7:0] m_data_o,

  // status
  output logic [2:0] count_o
);

  logic [2:0] count_q;       // words held
  logic [2:0] count_d;
  logic [7:0] out_data_q;    // the oldest word
  logic [7:0] out_data_d;
  logic       push;
  logic       pop;
  logic       to_skid;       // a word accepted now lands behind the head
  logic [7:0] skid_data_q;   // the next word, when it came straight from s
  logic [7:0] skid_data_d;
  logic       to_ram;        // a word accepted now lands in the RAM
  logic       ram_wr;
  logic       ram_rd;        // the RAM holds words: read the oldest, to follow the head
  logic [1:0] wr_ptr_q;
  logic [1:0] wr_ptr_d;
  logic [1:0] rd_ptr_q;
  logic [1:0] rd_ptr_d;
  logic [7:0] ram_rdata_q;
  logic       rdata_valid_q; // the next word is in ram_rdata_q
  logic       rdata_valid_d;
  logic [7:0] next_data;
  logic       head_free;
  logic [7:0] ram [3];

  assign s_ready_o = count_q != 3'd5;
  assign m_valid_o = count_q != 3'd0;
  assign m_data_o = out_data_q;
  assign count_o = count_q;
  assign push = s_valid_i & s_ready_o;
  assign pop = m_valid_o & m_ready_i;

  always_comb begin
    count_d = count_q;
    if (push & ~pop) begin
      count_d = count_q + 3'd1;
    end else if (pop & ~push) begin
      count_d = count_q - 3'd1;
    end
  end

  assign to_skid = pop ? (count_q == 3'd2) : (count_q == 3'd1);
  assign skid_data_d = (push & to_skid) ? s_data_i : skid_data_q;
  assign to_ram = pop ? (count_q >= 3'd3) : (count_q >= 3'd2);
  assign ram_wr = push & to_ram;
  assign ram_rd = pop & (count_q > 3'd2);

  always_comb begin
    wr_ptr_d = wr_ptr_q;
    if (ram_wr & (wr_ptr_q == 2'd2)) begin
      wr_ptr_d = 2'd0;
    end else if (ram_wr) begin
      wr_ptr_d = wr_ptr_q + 2'd1;
    end
  end

  always_comb begin
    rd_ptr_d = rd_ptr_q;
    if (ram_rd & (rd_ptr_q == 2'd2)) begin
      rd_ptr_d = 2'd0;
    end else if (ram_rd) begin
      rd_ptr_d = rd_ptr_q + 2'd1;
    end
  end

  assign rdata_valid_d = ram_rd | (rdata_valid_q & ~pop);
  assign next_data = rdata_valid_q ? ram_rdata_q : skid_data_q;
  assign head_free = ~m_valid_o | m_ready_i;

  always_comb begin
    out_data_d = out_data_q;
    if (head_free & (count_q >= 3'd2)) begin
      out_data_d = next_data;
    end else if (head_free) begin
      out_data_d = s_data_i;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      count_q <= 3'd0;
      wr_ptr_q <= 2'd0;
      rd_ptr_q <= 2'd0;
      rdata_valid_q <= 1'b0;
    end else begin
      count_q <= count_d;
      wr_ptr_q <= wr_ptr_d;
      rd_ptr_q <= rd_ptr_d;
      rdata_valid_q <= rdata_valid_d;
    end
  end

  always_ff @(posedge clk_i) begin
    out_data_q <= out_data_d;
    skid_data_q <= skid_data_d;
  end

  // memory `ram`: 3 x 8 bits, registered read
  always_ff @(posedge clk_i) begin
    if (ram_wr) begin
      ram[wr_ptr_q] <= s_data_i;
    end
    if (ram_rd) begin
      ram_rdata_q <= ram[rd_ptr_q];
    end
  end

endmodule
