// golden test header
//
// Synchronous FIFO, 5 x 8 bits, with a read port.
// Write: s_ready_o = (count_o != 5), from flip-flops; a word is taken
// when s_valid_i & s_ready_o (whatever the read side does in that cycle).
// Read: rd_en_i while empty_o is low takes the oldest word; the next cycle rd_valid_o is
// high and rd_data_o carries the word (back-to-back reads give back-to-back words).
// rd_en_i while empty_o is high is ignored: no word is taken, rd_valid_o stays low.
// rd_data_o is meaningful only with rd_valid_o; it keeps its value between reads.
// One write and one read per cycle; a word written in cycle t can be read from t+1.
// count_o = words held; empty_o = (count_o == 0). Order is kept; reset empties the FIFO.
// Storage: a 5-word RAM with a registered read.

module fifo_w8_d5 (
  input  logic       clk_i,
  input  logic       rst_ni,

  // write port
  input  logic       s_valid_i,
  output logic       s_ready_o,
  input  logic [7:0] s_data_i,

  // read port
  input  logic       rd_en_i,
  output logic       rd_valid_o,
  output logic [7:0] rd_data_o,
  output logic       empty_o,

  // status
  output logic [2:0] count_o
);

  logic [2:0] count_q;     // words held
  logic [2:0] count_d;
  logic       rd_valid_q;  // rd_data_o carries a word taken last cycle
  logic       rd_valid_d;
  logic       full;
  logic       empty;
  logic       push;
  logic       pop;
  logic [2:0] wr_ptr_q;
  logic [2:0] wr_ptr_d;
  logic [2:0] rd_ptr_q;
  logic [2:0] rd_ptr_d;
  logic [7:0] ram_rdata_q;
  logic [7:0] ram [5];

  assign full = count_q == 3'd5;
  assign empty = count_q == 3'd0;
  assign s_ready_o = ~full;
  assign empty_o = empty;
  assign count_o = count_q;
  assign rd_valid_o = rd_valid_q;
  assign push = s_valid_i & s_ready_o;
  assign pop = rd_en_i & ~empty;

  always_comb begin
    count_d = count_q;
    if (push & ~pop) begin
      count_d = count_q + 3'd1;
    end else if (pop & ~push) begin
      count_d = count_q - 3'd1;
    end
  end

  assign rd_valid_d = pop;

  always_comb begin
    wr_ptr_d = wr_ptr_q;
    if (push & (wr_ptr_q == 3'd4)) begin
      wr_ptr_d = 3'd0;
    end else if (push) begin
      wr_ptr_d = wr_ptr_q + 3'd1;
    end
  end

  always_comb begin
    rd_ptr_d = rd_ptr_q;
    if (pop & (rd_ptr_q == 3'd4)) begin
      rd_ptr_d = 3'd0;
    end else if (pop) begin
      rd_ptr_d = rd_ptr_q + 3'd1;
    end
  end

  assign rd_data_o = ram_rdata_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      count_q <= 3'd0;
      rd_valid_q <= 1'b0;
      wr_ptr_q <= 3'd0;
      rd_ptr_q <= 3'd0;
    end else begin
      count_q <= count_d;
      rd_valid_q <= rd_valid_d;
      wr_ptr_q <= wr_ptr_d;
      rd_ptr_q <= rd_ptr_d;
    end
  end

  // memory `ram`: 5 x 8 bits, registered read
  always_ff @(posedge clk_i) begin
    if (push) begin
      ram[wr_ptr_q] <= s_data_i;
    end
    if (pop) begin
      ram_rdata_q <= ram[rd_ptr_q];
    end
  end

endmodule
