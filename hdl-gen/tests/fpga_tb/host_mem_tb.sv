// Test bench for the bring-up host memory (hdl-gen/src/boards/host_mem.rs), built by
// tests/fpga_host_mem.rs for a RAM of 2^BITS bytes, 16-bit AXI4 addresses and 2-bit IDs.
//
// Two masters run at once, each against a shadow copy of the bytes (the golden model: a byte
// takes a write beat's data where its strobe is set, in the word the beat's address names):
// - AXI4: OPS bursts, one at a time, each a write or a read of 1 to 8 beats of 1, 2, 4 or 8
//   bytes (INCR from a size-aligned address) in the lower half of the RAM, or, one time in
//   eight, starting past the RAM (DECERR expected, no byte changed); random gaps in wvalid,
//   bready and rready; every read beat compared whole (its eight bytes), with rid, rlast, rresp.
// - AXI4-Lite: LITE_OPS single reads and writes (random strobes) in the upper half, random gaps
//   in bready and rready; reads compared.
// Stalls are bounded (a handshake that never comes fails). The seed is `+seed=N`. Prints PASS,
// or FAIL lines and FAILED.

module host_mem_tb #(
  parameter int BITS = 10,
  parameter int OPS = 400,
  parameter int LITE_OPS = 400
);
  localparam int AW = 16;
  localparam int IW = 2;
  localparam int HALF = 1 << (BITS - 1);
  logic clk_i = 1'b0;
  logic rst_ni = 1'b0;
  always #5 clk_i = ~clk_i;

  logic s_axi_arvalid_i, s_axi_arready_o, s_axi_rvalid_o, s_axi_rready_i, s_axi_rlast_o;
  logic [AW-1:0] s_axi_araddr_i, s_axi_awaddr_i;
  logic [7:0] s_axi_arlen_i, s_axi_awlen_i, s_axi_wstrb_i;
  logic [2:0] s_axi_arsize_i, s_axi_awsize_i;
  logic [1:0] s_axi_arburst_i, s_axi_awburst_i, s_axi_rresp_o, s_axi_bresp_o;
  logic [IW-1:0] s_axi_arid_i, s_axi_rid_o, s_axi_awid_i, s_axi_bid_o;
  logic [63:0] s_axi_rdata_o, s_axi_wdata_i;
  logic s_axi_awvalid_i, s_axi_awready_o, s_axi_wvalid_i, s_axi_wready_o, s_axi_wlast_i;
  logic s_axi_bvalid_o, s_axi_bready_i;
  logic s_axil_awvalid_i, s_axil_awready_o, s_axil_wvalid_i, s_axil_wready_o;
  logic s_axil_bvalid_o, s_axil_bready_i, s_axil_arvalid_i, s_axil_arready_o;
  logic s_axil_rvalid_o, s_axil_rready_i;
  logic [BITS-1:0] s_axil_awaddr_i, s_axil_araddr_i;
  logic [31:0] s_axil_wdata_i, s_axil_rdata_o;
  logic [3:0] s_axil_wstrb_i;
  logic [1:0] s_axil_bresp_o, s_axil_rresp_o;

  host_mem_a10_i2 dut (.*);

  logic [7:0] shadow[1 << BITS];
  int errors = 0;
  int cycles = 0;
  int stall = 0;

  // ---------------------------------------------------------------- AXI4 master
  int ops_done = 0;
  int st = 0;  // 0 pick, 1 AW, 2 W, 3 B, 4 AR, 5 R
  logic [AW-1:0] addr;  // the current beat's address
  logic [2:0] size;
  int beats, beat;
  logic oob;
  logic [IW-1:0] id;
  logic [63:0] want;

  function automatic logic [63:0] word_of(logic [AW-1:0] a);
    logic [63:0] w;
    for (int l = 0; l < 8; l++) w[l*8+:8] = shadow[{a[BITS-1:3], 3'(l)}];
    return w;
  endfunction

  always @(posedge clk_i) begin
    if (!rst_ni) begin
      s_axi_awvalid_i <= 0; s_axi_wvalid_i <= 0; s_axi_bready_i <= 0;
      s_axi_arvalid_i <= 0; s_axi_rready_i <= 0;
    end else begin
      case (st)
        0: if (ops_done < OPS) begin
          size = 3'($urandom % 4);
          beats = 1 + $urandom % 8;
          oob = ($urandom % 8) == 0;
          addr = AW'(($urandom % (HALF - beats * 8)) & ~((1 << size) - 1));
          if (oob) addr = addr | AW'(1 << BITS) | AW'(($urandom % 4) << (BITS + 1));
          id = IW'($urandom);
          beat = 0;
          if ($urandom % 2 == 0) begin
            s_axi_awvalid_i <= 1; s_axi_awaddr_i <= addr; s_axi_awlen_i <= 8'(beats - 1);
            s_axi_awsize_i <= size; s_axi_awburst_i <= 2'b01; s_axi_awid_i <= id;
            st <= 1;
          end else begin
            s_axi_arvalid_i <= 1; s_axi_araddr_i <= addr; s_axi_arlen_i <= 8'(beats - 1);
            s_axi_arsize_i <= size; s_axi_arburst_i <= 2'b01; s_axi_arid_i <= id;
            s_axi_rready_i <= $urandom % 2;
            st <= 4;
          end
        end
        1: if (s_axi_awready_o) begin
          s_axi_awvalid_i <= 0;
          s_axi_wvalid_i <= $urandom % 2;
          s_axi_wdata_i <= {$urandom, $urandom};
          s_axi_wstrb_i <= 8'($urandom);
          s_axi_wlast_i <= beats == 1;
          st <= 2;
        end
        2: if (s_axi_wvalid_i && s_axi_wready_o) begin
          if (!oob)
            for (int l = 0; l < 8; l++)
              if (s_axi_wstrb_i[l]) shadow[{addr[BITS-1:3], 3'(l)}] = s_axi_wdata_i[l*8+:8];
          addr = addr + AW'(1 << size);
          beat = beat + 1;
          if (beat == beats) begin
            s_axi_wvalid_i <= 0;
            s_axi_bready_i <= $urandom % 2;
            st <= 3;
          end else begin
            s_axi_wvalid_i <= $urandom % 2;
            s_axi_wdata_i <= {$urandom, $urandom};
            s_axi_wstrb_i <= 8'($urandom);
            s_axi_wlast_i <= beat == beats - 1;
          end
        end else if (!s_axi_wvalid_i) s_axi_wvalid_i <= $urandom % 2;
        3: if (s_axi_bvalid_o && s_axi_bready_i) begin
          if (s_axi_bresp_o != (oob ? 2'b11 : 2'b00) || s_axi_bid_o != id) begin
            $display("FAIL: write burst %0d at 0x%04x: bresp %0d bid %0d, expected %0d %0d",
                     ops_done, s_axi_awaddr_i, s_axi_bresp_o, s_axi_bid_o, oob ? 3 : 0, id);
            errors++;
          end
          s_axi_bready_i <= 0;
          ops_done <= ops_done + 1;
          st <= 0;
        end else s_axi_bready_i <= $urandom % 2;
        4: if (s_axi_arready_o) begin
          s_axi_arvalid_i <= 0;
          st <= 5;
          s_axi_rready_i <= $urandom % 2;
        end
        5: if (s_axi_rvalid_o && s_axi_rready_i) begin
          want = word_of(addr);
          if ((!oob && s_axi_rdata_o != want) || s_axi_rresp_o != (oob ? 2'b11 : 2'b00)
              || s_axi_rid_o != id || s_axi_rlast_o != (beat == beats - 1)) begin
            $display("FAIL: read burst %0d beat %0d at 0x%04x: data %016x resp %0d id %0d last %0d, expected %016x %0d %0d %0d",
                     ops_done, beat, addr, s_axi_rdata_o, s_axi_rresp_o, s_axi_rid_o,
                     s_axi_rlast_o, want, oob ? 3 : 0, id, beat == beats - 1);
            errors++;
          end
          addr = addr + AW'(1 << size);
          beat = beat + 1;
          s_axi_rready_i <= $urandom % 2;
          if (beat == beats) begin
            s_axi_rready_i <= 0;
            ops_done <= ops_done + 1;
            st <= 0;
          end
        end else s_axi_rready_i <= $urandom % 2;
        default: st <= 0;
      endcase
    end
  end

  // ---------------------------------------------------------------- AXI4-Lite master
  int lite_done = 0;
  int lst = 0;  // 0 pick, 1 write, 2 B, 3 AR, 4 R
  logic [BITS-1:0] laddr;
  logic [31:0] lwant;
  always @(posedge clk_i) begin
    if (!rst_ni) begin
      s_axil_awvalid_i <= 0; s_axil_wvalid_i <= 0; s_axil_bready_i <= 0;
      s_axil_arvalid_i <= 0; s_axil_rready_i <= 0;
    end else begin
      case (lst)
        0: if (lite_done < LITE_OPS && $urandom % 3 == 0) begin
          laddr = BITS'(HALF + ($urandom % HALF)) & ~BITS'(3);
          if ($urandom % 2 == 0) begin
            s_axil_awvalid_i <= 1; s_axil_wvalid_i <= 1; s_axil_awaddr_i <= laddr;
            s_axil_wdata_i <= $urandom; s_axil_wstrb_i <= 4'($urandom);
            lst <= 1;
          end else begin
            s_axil_arvalid_i <= 1; s_axil_araddr_i <= laddr;
            lst <= 3;
          end
        end
        1: if (s_axil_awready_o != s_axil_wready_o) begin
          $display("FAIL: lite awready and wready differ");
          errors++;
        end else if (s_axil_awready_o) begin
          for (int l = 0; l < 4; l++)
            if (s_axil_wstrb_i[l]) shadow[laddr + BITS'(l)] = s_axil_wdata_i[l*8+:8];
          s_axil_awvalid_i <= 0; s_axil_wvalid_i <= 0;
          s_axil_bready_i <= $urandom % 2;
          lst <= 2;
        end
        2: if (s_axil_bvalid_o && s_axil_bready_i) begin
          s_axil_bready_i <= 0;
          lite_done <= lite_done + 1;
          lst <= 0;
        end else s_axil_bready_i <= $urandom % 2;
        3: if (s_axil_arready_o) begin
          s_axil_arvalid_i <= 0;
          s_axil_rready_i <= $urandom % 2;
          lst <= 4;
        end
        4: if (s_axil_rvalid_o && s_axil_rready_i) begin
          for (int l = 0; l < 4; l++) lwant[l*8+:8] = shadow[laddr + BITS'(l)];
          if (s_axil_rdata_o != lwant) begin
            $display("FAIL: lite read %0d at 0x%03x: 0x%08x, expected 0x%08x", lite_done,
                     laddr, s_axil_rdata_o, lwant);
            errors++;
          end
          s_axil_rready_i <= 0;
          lite_done <= lite_done + 1;
          lst <= 0;
        end else s_axil_rready_i <= $urandom % 2;
        default: lst <= 0;
      endcase
    end
  end

  int seed = 1;
  initial begin
    void'($value$plusargs("seed=%d", seed));
    void'($urandom(seed));
    // The RAM is not reset; Verilator starts it at zero (the default +verilator+rand+reset+0),
    // and so does the shadow.
    for (int i = 0; i < (1 << BITS); i++) shadow[i] = 8'h00;
    repeat (3) @(posedge clk_i);
    rst_ni = 1'b1;
  end

  always @(posedge clk_i) begin
    cycles <= cycles + 1;
    if (rst_ni && ops_done >= OPS && lite_done >= LITE_OPS) begin
      if (errors == 0) $display("PASS: %0d bursts, %0d lite accesses, %0d cycles", OPS, LITE_OPS, cycles);
      else $display("FAILED: %0d errors", errors);
      $finish;
    end
    if (cycles > 200 * (OPS + LITE_OPS)) begin
      $display("FAIL: stalled (bursts %0d, lite %0d, states %0d %0d)", ops_done, lite_done, st, lst);
      $display("FAILED");
      $finish;
    end
  end
endmodule
