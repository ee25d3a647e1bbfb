// golden test header
//
// demo_csr: control and status registers on an AXI4-Lite slave port (16-byte window).
// A demonstration block with one field of each access type.
//
//   0x0 ctrl    Control
//   0x4 status  Status
//
// One write and one read at a time. A write is accepted (awready and wready together) when
// awvalid and wvalid are both high and no write response is pending; wstrb selects the bytes
// written. A read is accepted while no read data is pending. Address bits [1:0] are ignored;
// awprot and arprot are not ports. An address that maps no register answers SLVERR, changes
// nothing and reads as 0. Write-only fields read as 0. W1C fields: a set from hardware wins
// over a clear in the same cycle. `<reg>_<field>_we_o` pulses for one cycle, with the new value
// on `<reg>_<field>_o`, after a write that enables any of the field's bytes.

module demo_csr (
  input  logic        clk_i,
  input  logic        rst_ni,

  // AXI4-Lite slave
  input  logic        s_axil_awvalid_i,
  output logic        s_axil_awready_o,
  input  logic [3:0]  s_axil_awaddr_i,       // byte address; bits [1:0] are ignored
  input  logic        s_axil_wvalid_i,
  output logic        s_axil_wready_o,
  input  logic [31:0] s_axil_wdata_i,
  input  logic [3:0]  s_axil_wstrb_i,
  output logic        s_axil_bvalid_o,
  input  logic        s_axil_bready_i,
  output logic [1:0]  s_axil_bresp_o,
  input  logic        s_axil_arvalid_i,
  output logic        s_axil_arready_o,
  input  logic [3:0]  s_axil_araddr_i,       // byte address; bits [1:0] are ignored
  output logic        s_axil_rvalid_o,
  input  logic        s_axil_rready_i,
  output logic [31:0] s_axil_rdata_o,
  output logic [1:0]  s_axil_rresp_o,

  // ctrl (0x0): Control
  output logic        ctrl_en_o,             // Enable
  output logic [1:0]  ctrl_mode_o,           // Operating mode
  output logic        ctrl_kick_o,           // Write 1 to start
  output logic        ctrl_kick_we_o,        // `ctrl_kick_o` was just written

  // status (0x4): Status
  input  logic [7:0]  status_level_i,        // Current level
  input  logic        status_overflow_set_i, // 1 sets a bit
  output logic        status_overflow_o      // An overflow happened; write 1 to clear
);

  typedef enum logic [1:0] {
    RespOkay   = 2'd0,
    RespExokay = 2'd1,
    RespSlverr = 2'd2,
    RespDecerr = 2'd3
  } resp_e;

  logic        bvalid_q;
  logic        bvalid_d;
  resp_e       bresp_q;
  resp_e       bresp_d;
  logic        rvalid_q;
  logic        rvalid_d;
  logic [31:0] rdata_q;
  logic [31:0] rdata_d;
  resp_e       rresp_q;
  resp_e       rresp_d;
  logic        ctrl_en_q;
  logic        ctrl_en_d;
  logic [1:0]  ctrl_mode_q;
  logic [1:0]  ctrl_mode_d;
  logic        ctrl_kick_q;
  logic        ctrl_kick_d;
  logic        ctrl_kick_we_q;
  logic        ctrl_kick_we_d;
  logic        ctrl_we;           // a write to `ctrl` is accepted
  logic        status_overflow_q;
  logic        status_overflow_d;
  logic        status_we;         // a write to `status` is accepted
  logic        wr_accept;         // address and data arrive together, no response pending
  logic        rd_accept;
  logic [31:0] wr_mask;           // write strobes, one per data bit
  logic        unused_addr;
  logic        unused_wdata;

  assign wr_accept = s_axil_awvalid_i & s_axil_wvalid_i & ~bvalid_q;
  assign s_axil_awready_o = wr_accept;
  assign s_axil_wready_o = wr_accept;
  assign s_axil_bvalid_o = bvalid_q;
  assign s_axil_bresp_o = bresp_q;
  assign rd_accept = s_axil_arvalid_i & ~rvalid_q;
  assign s_axil_arready_o = ~rvalid_q;
  assign s_axil_rvalid_o = rvalid_q;
  assign s_axil_rdata_o = rdata_q;
  assign s_axil_rresp_o = rresp_q;
  assign wr_mask = {{8{s_axil_wstrb_i[3]}}, {8{s_axil_wstrb_i[2]}}, {8{s_axil_wstrb_i[1]}}, {8{s_axil_wstrb_i[0]}}};
  assign ctrl_en_o = ctrl_en_q;
  assign ctrl_mode_o = ctrl_mode_q;
  assign ctrl_kick_o = ctrl_kick_q;
  assign ctrl_kick_we_o = ctrl_kick_we_q;
  assign status_overflow_o = status_overflow_q;

  always_comb begin
    bvalid_d = bvalid_q;
    bresp_d = bresp_q;
    ctrl_we = 1'b0;
    status_we = 1'b0;
    if (wr_accept) begin
      bvalid_d = 1'b1;
      case (s_axil_awaddr_i[3:2])
        2'd0: begin
          bresp_d = RespOkay;
          ctrl_we = 1'b1;
        end
        2'd1: begin
          bresp_d = RespOkay;
          status_we = 1'b1;
        end
        default: begin
          bresp_d = RespSlverr;
        end
      endcase
    end else if (s_axil_bready_i) begin
      bvalid_d = 1'b0;
    end
  end

  always_comb begin
    rvalid_d = rvalid_q;
    rdata_d = rdata_q;
    rresp_d = rresp_q;
    if (rd_accept) begin
      rvalid_d = 1'b1;
      case (s_axil_araddr_i[3:2])
        2'd0: begin
          rresp_d = RespOkay;
          rdata_d = {26'd0, ctrl_mode_q, 3'd0, ctrl_en_q};
        end
        2'd1: begin
          rresp_d = RespOkay;
          rdata_d = {status_overflow_q, 23'd0, status_level_i};
        end
        default: begin
          rresp_d = RespSlverr;
          rdata_d = 32'd0;
        end
      endcase
    end else if (s_axil_rready_i) begin
      rvalid_d = 1'b0;
    end
  end

  always_comb begin
    ctrl_en_d = ctrl_en_q;
    ctrl_mode_d = ctrl_mode_q;
    ctrl_kick_d = ctrl_kick_q;
    ctrl_kick_we_d = 1'b0;
    if (ctrl_we) begin
      ctrl_en_d = (ctrl_en_q & ~wr_mask[0]) | (s_axil_wdata_i[0] & wr_mask[0]);
      ctrl_mode_d = (ctrl_mode_q & ~wr_mask[5:4]) | (s_axil_wdata_i[5:4] & wr_mask[5:4]);
      ctrl_kick_d = (ctrl_kick_q & ~wr_mask[8]) | (s_axil_wdata_i[8] & wr_mask[8]);
      ctrl_kick_we_d = s_axil_wstrb_i[1];
    end
  end

  always_comb begin
    status_overflow_d = status_overflow_q | status_overflow_set_i;
    if (status_we) begin
      status_overflow_d = (status_overflow_q & ~(s_axil_wdata_i[31] & wr_mask[31])) | status_overflow_set_i;
    end
  end

  assign unused_addr = ^{s_axil_awaddr_i[1:0], s_axil_araddr_i[1:0]};
  assign unused_wdata = ^{s_axil_wdata_i[30:9], wr_mask[30:9], s_axil_wdata_i[7:6], wr_mask[7:6], s_axil_wdata_i[3:1], wr_mask[3:1]};

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      bvalid_q <= 1'b0;
      bresp_q <= RespOkay;
      rvalid_q <= 1'b0;
      rdata_q <= 32'd0;
      rresp_q <= RespOkay;
      ctrl_en_q <= 1'b1;
      ctrl_mode_q <= 2'd2;
      ctrl_kick_q <= 1'b0;
      ctrl_kick_we_q <= 1'b0;
      status_overflow_q <= 1'b0;
    end else begin
      bvalid_q <= bvalid_d;
      bresp_q <= bresp_d;
      rvalid_q <= rvalid_d;
      rdata_q <= rdata_d;
      rresp_q <= rresp_d;
      ctrl_en_q <= ctrl_en_d;
      ctrl_mode_q <= ctrl_mode_d;
      ctrl_kick_q <= ctrl_kick_d;
      ctrl_kick_we_q <= ctrl_kick_we_d;
      status_overflow_q <= status_overflow_d;
    end
  end

endmodule
