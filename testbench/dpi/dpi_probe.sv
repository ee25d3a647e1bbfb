// Hand-written test module, not generated: RTL that calls back into Rust through DPI-C.
//
// testbench/build.rs verilates it as an extra top (with dpi_probe_shim.cpp and the binding
// dpi_probe.rs beside it); the imported functions are implemented in Rust, in
// testbench/src/drivers/axi_mem.rs (module `dpi`), which reads and writes whatever memory the
// test installs on its thread.
//
// A read: rd_i with addr_i in one cycle; the next cycle rvalid_o is high and rdata_o holds the
// 32-bit word Rust returned. A write: wr_i with addr_i and wdata_i hands the 64-bit value to
// Rust at the clock edge. reads_o counts the calls of tb_mem_read since reset.

module dpi_probe (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        rd_i,
  input  logic        wr_i,
  input  logic [31:0] addr_i,
  input  logic [63:0] wdata_i,
  output logic        rvalid_o,
  output logic [31:0] rdata_o,
  output logic [31:0] reads_o
);

  // `context`: Rust may ask which instance called (svGetScope).
  import "DPI-C" context function int unsigned tb_mem_read(input int unsigned addr);
  // A packed `bit` vector arrives in C as `const svBitVecVal*` (32-bit words, LSB first).
  import "DPI-C" function void tb_mem_write(input int unsigned addr, input bit [63:0] data);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rvalid_o <= 1'b0;
      rdata_o  <= 32'd0;
      reads_o  <= 32'd0;
    end else begin
      rvalid_o <= rd_i;
      if (rd_i) begin
        rdata_o <= tb_mem_read(addr_i);
        reads_o <= reads_o + 32'd1;
      end
      if (wr_i) begin
        tb_mem_write(addr_i, wdata_i);
      end
    end
  end

endmodule
