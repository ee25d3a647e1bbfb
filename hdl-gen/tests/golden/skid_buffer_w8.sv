// golden test header
//
// Ready/valid register slice for 8-bit data: s_ready_o and m_valid_o are registered,
// throughput is one transfer per cycle, latency one cycle. Order is kept.

module skid_buffer_w8 (
  input  logic       clk_i,
  input  logic       rst_ni,

  // upstream
  input  logic       s_valid_i,
  output logic       s_ready_o,
  input  logic [7:0] s_data_i,

  // downstream
  output logic       m_valid_o,
  input  logic       m_ready_i,
  output logic [7:0] m_data_o
);

  logic       out_valid_q;
  logic       out_valid_d;
  logic [7:0] out_data_q;
  logic [7:0] out_data_d;
  logic       skid_valid_q;
  logic       skid_valid_d;
  logic [7:0] skid_data_q;
  logic [7:0] skid_data_d;

  assign s_ready_o = ~skid_valid_q;
  assign m_valid_o = out_valid_q;
  assign m_data_o = out_data_q;

  always_comb begin
    out_valid_d = out_valid_q;
    out_data_d = out_data_q;
    skid_valid_d = skid_valid_q;
    skid_data_d = skid_data_q;
    if (m_ready_i | ~out_valid_q) begin
      if (skid_valid_q) begin
        out_valid_d = 1'b1;
        out_data_d = skid_data_q;
        skid_valid_d = 1'b0;
      end else begin
        out_valid_d = s_valid_i;
        out_data_d = s_data_i;
      end
    end else if (s_valid_i & s_ready_o) begin
      skid_valid_d = 1'b1;
      skid_data_d = s_data_i;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      out_valid_q <= 1'b0;
      skid_valid_q <= 1'b0;
    end else begin
      out_valid_q <= out_valid_d;
      skid_valid_q <= skid_valid_d;
    end
  end

  always_ff @(posedge clk_i) begin
    out_data_q <= out_data_d;
    skid_data_q <= skid_data_d;
  end

endmodule
