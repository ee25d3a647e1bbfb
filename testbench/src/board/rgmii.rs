//! The board's Ethernet at the RGMII pins, as the PHY sees them (`models::eth`):
//!
//! - transmit: TXD/TX_CTL sampled at both edges of the core's transmit clock, decoded into
//!   symbols and frames ([`TxMonitor`]); each frame's preamble and SFD checked and its FCS by
//!   the receiver's rules ([`fate`]): a good frame is handed on without its FCS, a bad one is
//!   counted and reported, never forwarded;
//! - receive: each frame to the core sent as 7 x 55h, D5h, the frame padded to 60 bytes and its
//!   FCS ([`wire_bytes`]), then [`IFG`] idle byte times, each byte on RXD/RX_CTL at both edges
//!   of the receive clock ([`ddr_pins`]).

use crate::models::eth::{ddr_pins, fate, from_pins, wire_bytes, Fate, Symbol, TxMonitor, IFG};
use std::collections::VecDeque;

/// The PHY's receiver of the core's transmit pins.
#[derive(Default)]
pub struct RgmiiTx {
    mon: TxMonitor,
    lo: Option<(u8, bool)>,
    /// Frames with a good preamble, SFD and FCS.
    pub good: u64,
    /// Frames that were not: counted and reported, never forwarded.
    pub bad: u64,
}

impl RgmiiTx {
    /// The pins while the transmit clock is low (the high nibble and EN ^ ER of the byte whose
    /// low nibble showed while it was high), just before its rising edge.
    pub fn before_rise(&mut self, txd: u8, ctl: bool) {
        if let Some(lo) = self.lo.take() {
            self.mon.symbol(from_pins(lo, (txd, ctl)));
        }
    }

    /// The pins just after the rising edge (the low nibble and EN).
    pub fn after_rise(&mut self, txd: u8, ctl: bool) {
        self.lo = Some((txd, ctl));
    }

    /// The frames finished since the last call, good ones without preamble, SFD and FCS; a bad
    /// one is counted and named in `errors`.
    pub fn frames(&mut self, errors: &mut Vec<String>) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for f in std::mem::take(&mut self.mon.frames) {
            let pre = f.bytes.iter().take_while(|&&b| b == 0x55).count();
            let problem = if f.er {
                Some("TX_ER was asserted".to_string())
            } else if pre != 7 || f.bytes.get(pre) != Some(&0xd5) {
                Some(format!(
                    "{pre} preamble bytes and {:02x?} where 7 x 55h and the SFD (D5h) belong",
                    f.bytes.get(pre)
                ))
            } else {
                match fate(&f.bytes[pre + 1..], false) {
                    Fate::Deliver(p) => {
                        self.good += 1;
                        out.push(p);
                        None
                    }
                    other => Some(format!("{other:?}")),
                }
            };
            if let Some(p) = problem {
                self.bad += 1;
                errors.push(format!(
                    "bad frame from the core ({} bytes on the wire): {p}; not forwarded",
                    f.bytes.len()
                ));
            }
        }
        out
    }
}

/// The PHY's transmitter onto the core's receive pins.
#[derive(Default)]
pub struct RgmiiRx {
    symbols: VecDeque<Symbol>,
    cur: Symbol,
    /// Frames queued for the core.
    pub frames: u64,
}

impl RgmiiRx {
    /// Queues `frame` (without FCS) for the core: preamble, SFD, padded frame and FCS, gap.
    pub fn send(&mut self, frame: &[u8]) {
        let en = |byte| Symbol {
            byte,
            en: true,
            er: false,
        };
        self.symbols.extend(std::iter::repeat_n(en(0x55), 7));
        self.symbols.push_back(en(0xd5));
        self.symbols.extend(wire_bytes(frame).into_iter().map(en));
        self.symbols
            .extend(std::iter::repeat_n(Symbol::default(), IFG));
        self.frames += 1;
    }

    /// The pins (nibble, CTL) for the coming rising edge of the receive clock: the next byte's
    /// low nibble and RX_DV (idle when nothing is queued).
    pub fn rise(&mut self) -> (u8, bool) {
        self.cur = self.symbols.pop_front().unwrap_or_default();
        ddr_pins(self.cur)[0]
    }

    /// The pins for the coming falling edge: the byte's high nibble and RX_DV ^ RX_ER.
    pub fn fall(&self) -> (u8, bool) {
        ddr_pins(self.cur)[1]
    }

    /// Nothing left to send.
    pub fn idle(&self) -> bool {
        self.symbols.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames sent by the transmitter at the pins come out of the receiver, and a frame with a
    /// flipped bit is counted bad and not delivered.
    #[test]
    fn frames_cross_the_pins_and_a_bad_fcs_is_caught() {
        let mut tx = RgmiiRx::default();
        let frames: Vec<Vec<u8>> = vec![
            (0..100).collect(),
            vec![7; 20],
            (0..1514).map(|i| i as u8).collect(),
        ];
        for f in &frames {
            tx.send(f);
        }
        let mut rx = RgmiiTx::default();
        let mut flip_at = None;
        let mut n = 0u64;
        let (mut got, mut errors) = (Vec::new(), Vec::new());
        // One idle byte time more at the end ends the last frame.
        let mut tail = 1;
        while !tx.idle() || tail > 0 {
            if tx.idle() {
                tail -= 1;
            }
            let (lo, en) = tx.rise();
            let (mut hi, ctl) = tx.fall();
            // Corrupt one bit of the third frame's body.
            if got.len() == 2 && en && flip_at.is_none() {
                n += 1;
                if n == 200 {
                    hi ^= 1;
                    flip_at = Some(n);
                }
            }
            rx.after_rise(lo, en);
            rx.before_rise(hi, ctl);
            got.extend(rx.frames(&mut errors));
        }
        let mut short = frames[1].clone();
        short.resize(60, 0);
        assert_eq!(got, vec![frames[0].clone(), short]);
        assert_eq!((rx.good, rx.bad), (2, 1), "{errors:?}");
        assert!(flip_at.is_some() && errors.len() == 1, "{errors:?}");
    }
}
