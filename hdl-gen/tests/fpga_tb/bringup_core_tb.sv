// Test bench for the bring-up core that tests/fpga_bringup.rs builds (the Colorlight i5 core,
// the chip top of configs/bringup_colorlight_i5.toml inside, with a UART bit time of DIV clock
// cycles): talks to it through its UART pins as a host would, with the framed protocol of
// hdl-gen/src/blocks/uart_bridge.rs, and checks the answers against the bridge's map
// (hdl-gen/src/boards/bringup.rs): bringup_csr's ID and info, the chip's chip_info ID and
// scratch register through the firmware window, the NVMe VS register through BAR0, the host
// memory (both halves of its 64-bit words and its last word), DECERR outside the map and past
// the host memory, SLVERR inside bringup_csr's window, ignored bytes between commands, a stalled
// command dropped after the timeout, and the serial framing of every answer byte. Then the
// admin path end to end, as the host tool will drive it: AQA/ASQ/ACQ and CC.EN through BAR0,
// CSTS.RDY polled ('P': read until the value comes), an Identify SQE written to host memory and
// its doorbell rung, the chip's fetch of it (through m_axi from the host memory) seen in
// bringup_csr's admin registers, popped, a completion pushed, and the CQE the chip posts to host
// memory read back (CID, phase, status, DW0, SQ head). Last, bringup_csr's info_clock: the
// lowered core clock in kHz. The Ethernet clocks run with the core
// clock, the PHY's receive pins idle. Prints PASS, or FAIL lines and FAILED.
//
// The UART sides are clocked processes fed by queues, and the script is a table walked by one
// loop, so Verilator does not unroll the test into a huge model.

module bringup_core_tb #(
  parameter int DIV = 16,
  parameter int TIMEOUT = 32768
);
  logic clk_i = 1'b0;
  logic rst_ni = 1'b0;
  always #5 clk_i = ~clk_i;

  logic uart_rx_i;
  logic uart_tx_o;
  logic clk_tx_i, clk_rx_i, rst_tx_ni, rst_rx_ni;
  assign clk_tx_i = clk_i;
  assign clk_rx_i = clk_i;
  assign rst_tx_ni = rst_ni;
  assign rst_rx_ni = rst_ni;
  logic [4:0] status_o;
  logic eth_rst_no, eth_mdc_o, eth_mdio_o, eth_mdio_oe_o, eth_mdio_i;
  logic eth_tx_clk_o, eth_tx_ctl_o, eth_rx_ctl_i;
  logic [3:0] eth_txd_o, eth_rxd_i;
  assign eth_mdio_i = 1'b1;
  assign eth_rx_ctl_i = 1'b0;
  assign eth_rxd_i = 4'h0;

  colorlight_i5_core dut (.*);

  int errors = 0;

  // Host to FPGA: 8N1, least significant bit first, one bit every DIV cycles.
  logic [7:0] send_q[$];
  logic [9:0] tx_frame = '1;
  int tx_bits = 0;
  int tx_timer = 0;
  logic [7:0] tx_next;
  assign uart_rx_i = tx_frame[0];
  always @(posedge clk_i) begin
    if (tx_bits == 0) begin
      if (send_q.size() > 0) begin
        tx_next = send_q.pop_front();
        tx_frame <= {1'b1, tx_next, 1'b0};
        tx_bits <= 10;
        tx_timer <= DIV - 1;
      end
    end else if (tx_timer == 0) begin
      tx_frame <= {1'b1, tx_frame[9:1]};
      tx_bits <= tx_bits - 1;
      tx_timer <= DIV - 1;
    end else begin
      tx_timer <= tx_timer - 1;
    end
  end

  // FPGA to host: finds each start bit, samples every bit in its middle, checks the framing.
  logic [7:0] recv_q[$];
  logic [7:0] rx_byte;
  int rx_bit = -1;
  int rx_timer = 0;
  always @(posedge clk_i) begin
    if (rx_bit < 0) begin
      if (rst_ni && uart_tx_o == 1'b0) begin
        rx_bit <= 0;
        rx_timer <= DIV / 2;
      end
    end else if (rx_timer != 0) begin
      rx_timer <= rx_timer - 1;
    end else begin
      rx_timer <= DIV - 1;
      if (rx_bit == 0 && uart_tx_o != 1'b0) begin
        $display("FAIL: start bit not low in its middle");
        errors++;
        rx_bit <= -1;
      end else if (rx_bit >= 1 && rx_bit <= 8) begin
        rx_byte[rx_bit-1] <= uart_tx_o;
        rx_bit <= rx_bit + 1;
      end else if (rx_bit == 9) begin
        if (uart_tx_o != 1'b1) begin
          $display("FAIL: stop bit not high");
          errors++;
        end
        recv_q.push_back(rx_byte);
        rx_bit <= -1;
      end else begin
        rx_bit <= rx_bit + 1;
      end
    end
  end

  // The script: op 'R' or 'W' with the answer expected, 'B' a raw byte (addr[7:0]), 'S' a
  // stalled command (a write's command byte and one address byte, then the timeout).
  localparam int N = 51;
  logic [7:0] op[N] = '{
    "R", "R", "R", "W", "R", "R", "R",
    "W", "W", "W", "R", "R", "R",
    "R", "W", "W", "R",
    "B", "B", "B", "R",
    "S", "R", "R",
    "W", "W", "W", "W", "W", "W", "P",
    "W", "W", "W", "P", "R", "R", "R", "W", "R",
    "W", "W", "W", "W", "W", "P", "R", "R", "R", "W",
    "R"
  };
  logic [31:0] addr[N] = '{
    32'h0000_0000, 32'h0000_0004, 32'h1000_0800, 32'h1000_0818, 32'h1000_0818, 32'h0000_00fc,
    32'h2000_0008,
    32'h8000_0000, 32'h8000_0004, 32'h8000_7ffc, 32'h8000_0004, 32'h8000_0000, 32'h8000_7ffc,
    32'h4000_0000, 32'h8000_8000, 32'h0000_0100, 32'h8000_0000,
    32'h0000_0000, 32'h0000_00ff, 32'h0000_0072, 32'h1000_0818,
    32'h0000_0000, 32'h0000_0000, 32'h0000_0010,
    32'h2000_0024, 32'h2000_0028, 32'h2000_002c, 32'h2000_0030, 32'h2000_0034, 32'h2000_0014,
    32'h2000_001c,
    32'h8000_1000, 32'h8000_1028, 32'h2000_1000, 32'h0000_0010, 32'h0000_0040, 32'h0000_0068,
    32'h0000_0014, 32'h0000_0018, 32'h0000_0010,
    32'h0000_001c, 32'h0000_0020, 32'h0000_0024, 32'h0000_0028, 32'h0000_002c, 32'h8000_200c,
    32'h8000_2000, 32'h8000_2008, 32'h0000_0010, 32'h2000_1004,
    32'h0000_000c
  };
  logic [31:0] data[N] = '{
    32'h4252_5550, 32'h0000_0f01, 32'h4e56_4d46, 32'hdead_beef, 32'hdead_beef, 32'h0000_0000,
    32'h0001_0400,
    32'h0123_4567, 32'h89ab_cdef, 32'hcafe_f00d, 32'h89ab_cdef, 32'h0123_4567, 32'hcafe_f00d,
    32'h0000_0000, 32'h1111_1111, 32'h2222_2222, 32'h0123_4567,
    32'h0, 32'h0, 32'h0, 32'hdead_beef,
    32'h0, 32'h4252_5550, 32'h0000_0000,
    32'h0001_0001, 32'h0000_1000, 32'h0000_0000, 32'h0000_2000, 32'h0000_0000, 32'h0046_0001,
    32'h0000_0001,
    32'h1234_0006, 32'h0000_0001, 32'h0000_0001, 32'h0000_0001, 32'h1234_0006, 32'h0000_0001,
    32'h0000_0000, 32'h0000_0001, 32'h0000_0000,
    32'h0000_0000, 32'h0000_1234, 32'h0000_0000, 32'hcafe_0001, 32'h0000_0001, 32'h0001_1234,
    32'hcafe_0001, 32'h0000_0001, 32'h0000_0000, 32'h0000_0001,
    32'(115200 * DIV / 1000)
  };
  logic [7:0] status[N] = '{
    8'ha0, 8'ha0, 8'ha0, 8'ha0, 8'ha0, 8'ha2, 8'ha0,
    8'ha0, 8'ha0, 8'ha0, 8'ha0, 8'ha0, 8'ha0,
    8'ha3, 8'ha3, 8'ha3, 8'ha0,
    8'h0, 8'h0, 8'h0, 8'ha0,
    8'h0, 8'ha0, 8'ha0,
    8'ha0, 8'ha0, 8'ha0, 8'ha0, 8'ha0, 8'ha0, 8'ha0,
    8'ha0, 8'ha0, 8'ha0, 8'ha0, 8'ha0, 8'ha0, 8'ha0, 8'ha0, 8'ha0,
    8'ha0, 8'ha0, 8'ha0, 8'ha0, 8'ha0, 8'ha0, 8'ha0, 8'ha0, 8'ha0, 8'ha0,
    8'ha0
  };

  int k;
  int want;
  int waited;
  int tries = 0;
  logic [31:0] got;
  initial begin
    repeat (5) @(posedge clk_i);
    rst_ni = 1'b1;
    repeat (5) @(posedge clk_i);
    k = 0;
    while (k < N) begin
      want = 0;
      if (op[k] == "B") begin
        send_q.push_back(addr[k][7:0]);
      end else if (op[k] == "S") begin
        send_q.push_back("W");
        send_q.push_back(8'h00);
        waited = 0;
        while (waited < TIMEOUT + 40 * DIV) begin
          @(posedge clk_i);
          waited++;
        end
      end else begin
        send_q.push_back(op[k] == "P" ? 8'("R") : op[k]);
        for (int i = 3; i >= 0; i--) send_q.push_back(addr[k][i*8+:8]);
        if (op[k] == "W") begin
          for (int i = 3; i >= 0; i--) send_q.push_back(data[k][i*8+:8]);
          want = 1;
        end else begin
          want = 5;
        end
      end
      waited = 0;
      while (recv_q.size() < want && waited < 200 * DIV) begin
        @(posedge clk_i);
        waited++;
      end
      if (op[k] == "P" && recv_q.size() == 5 && recv_q[0] == 8'ha0 && tries < 300
          && {recv_q[1], recv_q[2], recv_q[3], recv_q[4]} != data[k]) begin
        // Not there yet: read again.
        tries++;
        recv_q.delete();
        repeat (12 * DIV) @(posedge clk_i);
        continue;
      end
      tries = 0;
      if (recv_q.size() != want) begin
        $display("FAIL: step %0d (%s 0x%08x): %0d answer bytes, expected %0d", k, op[k],
                 addr[k], recv_q.size(), want);
        errors++;
      end else if (want > 0) begin
        got = '0;
        if (want == 5) got = {recv_q[1], recv_q[2], recv_q[3], recv_q[4]};
        if (recv_q[0] != status[k] || (want == 5 && got != data[k])) begin
          $display("FAIL: step %0d (%s 0x%08x): status %02x data %08x, expected %02x %08x", k,
                   op[k], addr[k], recv_q[0], got, status[k], want == 5 ? data[k] : 32'h0);
          errors++;
        end
      end
      recv_q.delete();
      // Let the line and the bridge settle before the next step.
      waited = 0;
      while (waited < 12 * DIV) begin
        @(posedge clk_i);
        waited++;
      end
      if (recv_q.size() != 0) begin
        $display("FAIL: step %0d: %0d unexpected answer bytes", k, recv_q.size());
        errors++;
        recv_q.delete();
      end
      k++;
    end
    if (errors == 0) $display("PASS");
    else $display("FAILED: %0d errors", errors);
    $finish;
  end
endmodule
