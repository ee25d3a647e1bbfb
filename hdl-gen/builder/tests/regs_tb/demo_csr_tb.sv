// Test bench for the `demo_csr` block that tests/regs.rs builds: drives its AXI4-Lite port
// and field inputs, and checks the registers' behaviour (reset values, byte strobes, read-only,
// write-one-to-clear with set winning, write-only pulses, SLVERR on unmapped addresses, and the
// one-write-one-read handshakes). Prints PASS, or FAIL lines and FAILED.
//
// Inputs change and outputs are checked on the falling edge; the design samples on the rising.

module demo_csr_tb;
  localparam logic [1:0] OKAY = 2'b00;
  localparam logic [1:0] SLVERR = 2'b10;

  logic clk = 1'b0;
  logic rst_n = 1'b0;
  always #5 clk = ~clk;

  logic awvalid = 1'b0, awready, wvalid = 1'b0, wready, bvalid, bready = 1'b0;
  logic arvalid = 1'b0, arready, rvalid, rready = 1'b0;
  logic [5:0] awaddr = '0, araddr = '0;
  logic [31:0] wdata = '0, rdata;
  logic [3:0] wstrb = '0;
  logic [1:0] bresp, rresp;
  logic ctrl_en, ctrl_go, ctrl_go_we, ctrl_len_we;
  logic [2:0] ctrl_mode;
  logic [11:0] ctrl_len;
  logic status_busy = 1'b0;
  logic [15:0] status_count = '0;
  logic irq_done_set = 1'b0, irq_done;
  logic [1:0] irq_err_set = '0, irq_err;
  logic [31:0] scratch;

  demo_csr dut (
    .clk_i(clk), .rst_ni(rst_n),
    .s_axil_awvalid_i(awvalid), .s_axil_awready_o(awready), .s_axil_awaddr_i(awaddr),
    .s_axil_wvalid_i(wvalid), .s_axil_wready_o(wready), .s_axil_wdata_i(wdata),
    .s_axil_wstrb_i(wstrb), .s_axil_bvalid_o(bvalid), .s_axil_bready_i(bready),
    .s_axil_bresp_o(bresp), .s_axil_arvalid_i(arvalid), .s_axil_arready_o(arready),
    .s_axil_araddr_i(araddr), .s_axil_rvalid_o(rvalid), .s_axil_rready_i(rready),
    .s_axil_rdata_o(rdata), .s_axil_rresp_o(rresp),
    .ctrl_en_o(ctrl_en), .ctrl_mode_o(ctrl_mode), .ctrl_go_o(ctrl_go), .ctrl_go_we_o(ctrl_go_we),
    .ctrl_len_o(ctrl_len), .ctrl_len_we_o(ctrl_len_we),
    .status_busy_i(status_busy), .status_count_i(status_count),
    .irq_done_set_i(irq_done_set), .irq_done_o(irq_done),
    .irq_err_set_i(irq_err_set), .irq_err_o(irq_err),
    .scratch_value_o(scratch)
  );

  int errors = 0;
  bit set_done_on_accept = 1'b0;
  int go_pulses = 0;
  int len_pulses = 0;
  logic last_go;
  logic [11:0] last_len;

  // Counts the cycles each strobe is high and records the value shown with it.
  always @(posedge clk) begin
    if (ctrl_go_we) begin
      go_pulses <= go_pulses + 1;
      last_go <= ctrl_go;
    end
    if (ctrl_len_we) begin
      len_pulses <= len_pulses + 1;
      last_len <= ctrl_len;
    end
  end

  task automatic check(input bit ok, input string what);
    if (!ok) begin
      $display("FAIL at %0t: %s", $time, what);
      errors++;
    end
  endtask

  task automatic write(input logic [5:0] addr, input logic [31:0] data, input logic [3:0] strb,
                       input logic [1:0] want);
    @(negedge clk);
    awvalid = 1'b1;
    awaddr = addr;
    wvalid = 1'b1;
    wdata = data;
    wstrb = strb;
    #1;
    while (!(awready && wready)) begin
      @(negedge clk);
      #1;
    end
    irq_done_set = set_done_on_accept;
    @(negedge clk);
    irq_done_set = 1'b0;
    awvalid = 1'b0;
    wvalid = 1'b0;
    #1;
    check(bvalid, "bvalid after a write");
    check(!awready && !wready, "no new write while a response is pending");
    @(negedge clk);
    check(bvalid, "bvalid held until bready");
    check(bresp == want, $sformatf("write 0x%0h: bresp %0d, want %0d", addr, bresp, want));
    bready = 1'b1;
    @(negedge clk);
    bready = 1'b0;
    check(!bvalid, "bvalid drops after bready");
  endtask

  task automatic expect_read(input logic [5:0] addr, input logic [31:0] want,
                             input logic [1:0] want_resp);
    @(negedge clk);
    arvalid = 1'b1;
    araddr = addr;
    #1;
    while (!arready) begin
      @(negedge clk);
      #1;
    end
    @(negedge clk);
    arvalid = 1'b0;
    #1;
    check(rvalid, "rvalid after a read");
    check(!arready, "no new read while data is pending");
    @(negedge clk);
    check(rvalid, "rvalid held until rready");
    check(rdata == want, $sformatf("read 0x%0h: 0x%08h, want 0x%08h", addr, rdata, want));
    check(rresp == want_resp, $sformatf("read 0x%0h: rresp %0d, want %0d", addr, rresp, want_resp));
    rready = 1'b1;
    @(negedge clk);
    rready = 1'b0;
    check(!rvalid, "rvalid drops after rready");
  endtask

  initial begin
    repeat (3) @(negedge clk);
    rst_n = 1'b1;

    // Reset values.
    expect_read(6'h00, 32'h0000_0021, OKAY);
    check(ctrl_en == 1'b1 && ctrl_mode == 3'd2, "ctrl outputs after reset");
    expect_read(6'h10, 32'hdead_beef, OKAY);
    expect_read(6'h08, 32'h0, OKAY);

    // Read-only fields show the inputs and ignore writes.
    status_busy = 1'b1;
    status_count = 16'h1234;
    expect_read(6'h04, 32'h0012_3401, OKAY);
    write(6'h04, 32'hffff_ffff, 4'hf, OKAY);
    expect_read(6'h04, 32'h0012_3401, OKAY);

    // Byte strobes; address bits [1:0] are ignored.
    write(6'h10, 32'h1122_3344, 4'b0101, OKAY);
    expect_read(6'h10, 32'hde22_be44, OKAY);
    check(scratch == 32'hde22_be44, "scratch output follows the write");
    write(6'h13, 32'hcafe_f00d, 4'hf, OKAY);
    expect_read(6'h11, 32'hcafe_f00d, OKAY);

    // Unmapped addresses: SLVERR, nothing changes, reads 0.
    write(6'h0c, 32'hffff_ffff, 4'hf, SLVERR);
    write(6'h3c, 32'hffff_ffff, 4'hf, SLVERR);
    expect_read(6'h0c, 32'h0, SLVERR);
    expect_read(6'h20, 32'h0, SLVERR);
    expect_read(6'h10, 32'hcafe_f00d, OKAY);
    expect_read(6'h00, 32'h0000_0021, OKAY);

    // Write-only pulse fields: held value, one strobe per write, read as 0.
    write(6'h00, 32'h0abc_0131, 4'hf, OKAY);
    @(negedge clk);
    check(go_pulses == 1 && len_pulses == 1, $sformatf("pulses %0d %0d", go_pulses, len_pulses));
    check(last_go == 1'b1 && last_len == 12'habc, "strobes come with the new value");
    check(ctrl_go == 1'b1 && ctrl_len == 12'habc && ctrl_en && ctrl_mode == 3'd3, "ctrl outputs");
    expect_read(6'h00, 32'h0000_0031, OKAY);
    write(6'h00, 32'h0000_0020, 4'b0001, OKAY);
    @(negedge clk);
    check(go_pulses == 1 && len_pulses == 1, "no strobe for a field whose bytes are not written");
    check(!ctrl_en && ctrl_mode == 3'd2 && ctrl_go, "byte 0 written only");
    write(6'h00, 32'h0500_0000, 4'b1000, OKAY);
    @(negedge clk);
    check(go_pulses == 1 && len_pulses == 2 && last_len == 12'h5bc, "len strobed by byte 3");

    // W1C: hardware sets, software clears with 1s, a set wins over a clear.
    @(negedge clk);
    irq_done_set = 1'b1;
    irq_err_set = 2'b10;
    @(negedge clk);
    irq_done_set = 1'b0;
    irq_err_set = 2'b00;
    check(irq_done && irq_err == 2'b10, "W1C bits set by hardware");
    expect_read(6'h08, 32'h0000_0005, OKAY);
    write(6'h08, 32'h0000_0004, 4'hf, OKAY);
    expect_read(6'h08, 32'h0000_0001, OKAY);
    write(6'h08, 32'h0000_0001, 4'h0, OKAY);
    expect_read(6'h08, 32'h0000_0001, OKAY);
    set_done_on_accept = 1'b1;
    write(6'h08, 32'h0000_0001, 4'hf, OKAY);
    set_done_on_accept = 1'b0;
    expect_read(6'h08, 32'h0000_0001, OKAY);
    write(6'h08, 32'hffff_ffff, 4'hf, OKAY);
    expect_read(6'h08, 32'h0000_0000, OKAY);
    check(!irq_done && irq_err == 2'b00, "W1C cleared");

    // A write needs address and data together.
    @(negedge clk);
    awvalid = 1'b1;
    awaddr = 6'h10;
    #1;
    check(!awready && !wready, "no write accepted without data");
    @(negedge clk);
    awvalid = 1'b0;
    wvalid = 1'b1;
    #1;
    check(!awready && !wready, "no write accepted without address");
    wvalid = 1'b0;

    if (errors == 0) $display("PASS");
    else $display("FAILED: %0d errors", errors);
    $finish;
  end

  initial begin
    #100000;
    $display("TIMEOUT");
    $finish;
  end
endmodule
