//! Ethernet at the pins: the 1 Gb/s RGMII MAC (`eth_mac_rgmii`) and the MDIO master
//! (`mdio_master`) that sets the PHY up. A folder of its own (not `blocks/`): the MAC is the chip's
//! link to the wire, the block under the frame port the RoCE and TCP engines share, and it
//! holds the ECP5 I/O primitives a standard block would not.
//!
//! What lives here:
//!
//! - `mod.rs`: the contracts (this text)
//! - `mac.rs`: `eth_mac_rgmii_*`, the RGMII MAC
//! - `mdio.rs`: `mdio_master`, clause 22 management frames
//!
//! The interface contracts are stated here; `testbench/src/suites/eth/` checks them against a
//! pin-level RGMII PHY and a Clause 22 PHY register model.
//!
//! # `eth_mac_rgmii`
//!
//! Three clock domains: the core (`clk_i`, the AXI4-Stream ports and the counters), `tx`
//! (`clk_tx_i`, 125 MHz: it clocks TXD/TX_CTL and is forwarded as TXC) and `rx` (`clk_rx_i`, the
//! PHY's RXC pin). Assert the three resets together (each released in its own domain by a
//! `reset_sync`): the two asynchronous FIFOs need it.
//!
//! - Frames on `s_axis` (to the wire) and `m_axis` (from the wire) as the RoCE and TCP engines
//!   carry them: Ethernet without preamble or FCS, 64-bit beats packed from lane 0, `tkeep`
//!   contiguous from bit 0 and full on every beat but the last, at least one byte per beat.
//! - Transmit: `s_axis` crosses into `tx` through an `async_fifo` into a frame buffer of
//!   `tx_buf` beats; a frame starts on the wire only once its last beat is in that buffer (or the
//!   buffer is full), so the wire never waits for the core mid-frame. On the wire: 7 bytes 55h,
//!   SFD D5h, the frame padded with zeros to 60 bytes, the FCS (CRC-32 of the padded frame,
//!   least significant byte first), then at least 12 idle byte times (the inter-frame gap)
//!   before the next preamble. TX_ER is never asserted. A frame longer than the buffer
//!   (`8 * tx_buf` bytes) is outside the contract.
//! - Receive: RX_CTL and RXD through `IDDRX1F` (low nibble and RX_DV at the rising edge of RXC,
//!   high nibble and RX_DV ^ RX_ER at the falling edge, RGMII v2.0). A frame is the bytes after
//!   the SFD while RX_DV is high (any number of 55h before D5h; a frame whose preamble holds
//!   another byte is ignored, uncounted). Its checks, in this order, give its fate: RX_ER during
//!   the frame (`rx_err_ctl`), more than 1518 bytes with FCS (`rx_err_oversize`), fewer than 64
//!   (`rx_err_runt`), an FCS that is not the CRC-32 of the bytes before it (`rx_err_fcs`). Each
//!   such frame is dropped and counted once, under its first failing check. A frame passing
//!   them all goes to a store-and-forward buffer of `rx_buf` beats in the core domain with its
//!   FCS stripped and is committed only at its end, so `m_axis` never carries a byte of a
//!   dropped frame; when the buffer (back-pressure on `m_axis`) cannot hold it, it is dropped
//!   and counted in `rx_err_overflow`. `rx_frames` counts the frames committed.
//! - The `rx` domain crosses into the core through an `async_fifo` of `CDC_DEPTH` entries with
//!   no back-pressure (the wire cannot wait): the core clock must be at least half RXC (62.5
//!   MHz at 1 Gb/s). Slower, a refused entry marks the frame (and the frames merged with it, if
//!   its end entry was refused) as overflow.
//! - `tx_delay`, `rx_delay`: `DELAYG` steps (about 25 ps each) on TXD/TX_CTL and RXD/RX_CTL
//!   for a board whose PHY does not add the RGMII skew itself; 0 leaves the primitive out.
//! - 1 Gb/s only: 10/100 Mb/s (RGMII's 2.5/25 MHz clocks, one nibble per clock) is not built.

pub mod mac;
pub mod mdio;

/// Bytes of the largest frame received, FCS included (802.3 clause 3, untagged).
pub const MAX_FRAME: u32 = 1518;
/// Bytes of the smallest frame, FCS included.
pub const MIN_FRAME: u32 = 64;
/// Idle byte times between two frames the MAC sends.
pub const IFG_BYTES: u32 = 12;
/// Entries of each asynchronous FIFO between a pin domain and the core.
pub const CDC_DEPTH: u32 = 16;

/// The MAC's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MacParams {
    /// Beats of the transmit frame buffer (in the `tx` domain); a frame of at most
    /// `8 * tx_buf` bytes. At least 2.
    pub tx_buf: u32,
    /// Beats of the receive store-and-forward buffer (core domain), a power of two of at least
    /// 4; a frame of 1518 bytes needs 190.
    pub rx_buf: u32,
    /// `DELAYG` steps on the transmit data pins (0: none).
    pub tx_delay: u32,
    /// `DELAYG` steps on the receive data pins (0: none).
    pub rx_delay: u32,
}

impl Default for MacParams {
    fn default() -> Self {
        MacParams {
            tx_buf: 256,
            rx_buf: 256,
            tx_delay: 0,
            rx_delay: 0,
        }
    }
}
