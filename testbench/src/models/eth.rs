//! Golden models for `eth_mac_rgmii` and `mdio_master` (hdl-gen `eth`), stated from the
//! standards, not from the RTL:
//!
//! - IEEE 802.3 clause 3/4 framing: preamble (55h) and SFD (D5h), a frame padded with zeros to 60
//!   bytes, the FCS (CRC-32, bit-at-a-time reference of `models::crc`, sent least significant
//!   byte first), at least 12 idle byte times between frames; a receiver's fate for a frame.
//! - RGMII v2.0 at the pins: per clock, the low nibble and TX_EN/RX_DV at the rising edge, the
//!   high nibble and EN ^ ER at the falling edge ([`Symbol`], [`ddr_pins`], [`from_pins`]).
//! - IEEE 802.3 clause 22 MDIO: a PHY's register file answering frames on MDC/MDIO
//!   ([`MdioPhy`]).

use super::crc::CRC32;

/// Bytes before the FCS in the smallest frame.
pub const MIN_PAYLOAD: usize = 60;
/// Bytes with FCS of the smallest frame a receiver keeps.
pub const MIN_FRAME: usize = 64;
/// Bytes with FCS of the largest frame a receiver keeps (untagged).
pub const MAX_FRAME: usize = 1518;
/// Idle byte times a transmitter leaves between frames, at least.
pub const IFG: usize = 12;

/// The FCS of `frame`: its CRC-32, to be sent least significant byte first.
pub fn fcs(frame: &[u8]) -> u32 {
    CRC32.checksum(frame) as u32
}

/// What a transmitter sends after the SFD for `payload` (a frame without FCS): the payload
/// padded with zeros to 60 bytes, then its FCS.
pub fn wire_bytes(payload: &[u8]) -> Vec<u8> {
    let mut f = payload.to_vec();
    if f.len() < MIN_PAYLOAD {
        f.resize(MIN_PAYLOAD, 0);
    }
    let c = fcs(&f);
    f.extend_from_slice(&c.to_le_bytes());
    f
}

/// One byte time on an RGMII interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Symbol {
    /// The byte on TXD/RXD (low nibble at the rising edge, high nibble at the falling edge).
    pub byte: u8,
    /// TX_EN / RX_DV.
    pub en: bool,
    /// TX_ER / RX_ER.
    pub er: bool,
}

/// The pin values of a symbol: (data nibble, CTL) for the rising edge and the falling edge.
pub fn ddr_pins(s: Symbol) -> [(u8, bool); 2] {
    [(s.byte & 0xf, s.en), (s.byte >> 4, s.en ^ s.er)]
}

/// The symbol sampled as (nibble, CTL) at a rising edge and at the falling edge after it.
pub fn from_pins(rise: (u8, bool), fall: (u8, bool)) -> Symbol {
    Symbol {
        byte: rise.0 & 0xf | (fall.0 & 0xf) << 4,
        en: rise.1,
        er: rise.1 ^ fall.1,
    }
}

/// What a receiver does with one frame (the bytes after the SFD while RX_DV is high, FCS
/// included), checks in the MAC's documented order: RX_ER, then length, then FCS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Delivered without its FCS.
    Deliver(Vec<u8>),
    /// RX_ER was asserted during the frame.
    CtlError,
    /// More than [`MAX_FRAME`] bytes.
    Oversize,
    /// Fewer than [`MIN_FRAME`] bytes.
    Runt,
    /// The last four bytes are not the CRC-32 of the others.
    BadFcs,
}

/// The fate of a received frame: `bytes` after the SFD (FCS included), `rx_er` whether RX_ER
/// was seen during it.
pub fn fate(bytes: &[u8], rx_er: bool) -> Fate {
    if rx_er {
        return Fate::CtlError;
    }
    if bytes.len() > MAX_FRAME {
        return Fate::Oversize;
    }
    if bytes.len() < MIN_FRAME {
        return Fate::Runt;
    }
    let (body, tail) = bytes.split_at(bytes.len() - 4);
    if fcs(body).to_le_bytes() != tail {
        return Fate::BadFcs;
    }
    Fate::Deliver(body.to_vec())
}

/// A frame seen on the transmit pins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxFrame {
    /// Every byte while TX_EN was high, preamble and SFD included.
    pub bytes: Vec<u8>,
    /// Idle byte times before it since the previous frame (None for the first).
    pub gap: Option<usize>,
    /// TX_ER was seen high in or around it.
    pub er: bool,
}

/// Collects transmit symbols into frames.
#[derive(Default, Debug)]
pub struct TxMonitor {
    cur: Option<TxFrame>,
    idle: Option<usize>,
    er: bool,
    /// Frames finished (TX_EN fell after them).
    pub frames: Vec<TxFrame>,
}

impl TxMonitor {
    /// One symbol, in order.
    pub fn symbol(&mut self, s: Symbol) {
        self.er |= s.er;
        match (&mut self.cur, s.en) {
            (Some(f), true) => f.bytes.push(s.byte),
            (None, true) => {
                self.cur = Some(TxFrame {
                    bytes: vec![s.byte],
                    gap: self.idle,
                    er: false,
                });
            }
            (Some(_), false) => {
                let mut f = self.cur.take().unwrap();
                f.er = std::mem::take(&mut self.er);
                self.frames.push(f);
                self.idle = Some(1);
            }
            (None, false) => {
                if let Some(n) = &mut self.idle {
                    *n += 1;
                }
            }
        }
    }

    /// Checks frame `k` against the payload the MAC was given: preamble 7 x 55h, SFD, the
    /// padded payload and its FCS, no TX_ER, a gap of at least [`IFG`] before it.
    pub fn check(&self, k: usize, payload: &[u8]) -> Result<(), String> {
        let f = &self.frames[k];
        let mut want = vec![0x55u8; 7];
        want.push(0xd5);
        want.extend(wire_bytes(payload));
        if f.bytes != want {
            let at = f.bytes.iter().zip(&want).position(|(a, b)| a != b);
            return Err(format!(
                "transmitted frame {k}: {} bytes on the wire, expected {} (payload {} bytes); first difference at byte {at:?} (preamble and SFD are bytes 0-7)",
                f.bytes.len(),
                want.len(),
                payload.len()
            ));
        }
        if f.er {
            return Err(format!("transmitted frame {k}: TX_ER was asserted"));
        }
        if let Some(g) = f.gap {
            if g < IFG {
                return Err(format!(
                    "transmitted frame {k}: {g} idle byte times before it, at least {IFG} (inter-frame gap)"
                ));
            }
        }
        Ok(())
    }
}

/// A clause 22 PHY at one address with 32 16-bit registers, decoding frames bit by bit from
/// MDC's rising edges. It answers reads of its own address (TA's second bit 0, then the
/// register's 16 bits, each driven from the rising edge before the one that samples it) and
/// applies writes to its address; other addresses leave the line to the pull-up.
#[derive(Clone, Debug)]
pub struct MdioPhy {
    /// Its address.
    pub addr: u8,
    /// Its registers.
    pub regs: [u16; 32],
    ones: u32,
    bits: Vec<bool>,
    /// What to drive from each coming edge on, for the rest of a read frame.
    out: Vec<Option<bool>>,
    /// What the PHY drives now (None: released).
    pub drive: Option<bool>,
    /// Frames decoded: (write, phy, reg, data written or read).
    pub frames: Vec<(bool, u8, u8, u16)>,
    /// A frame that broke the format (bad ST or OP, a write's TA not 10).
    pub errors: Vec<String>,
}

impl MdioPhy {
    /// A PHY at `addr` with `regs`.
    pub fn new(addr: u8, regs: [u16; 32]) -> MdioPhy {
        MdioPhy {
            addr,
            regs,
            ones: 0,
            bits: Vec::new(),
            out: Vec::new(),
            drive: None,
            frames: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// A rising edge of MDC with the line at `mdio`.
    pub fn rise(&mut self, mdio: bool) {
        // The rest of a read frame: what to drive from each edge on (TA's second bit, the 16
        // data bits, then release), the line not decoded meanwhile.
        if !self.out.is_empty() {
            self.drive = self.out.remove(0);
            return;
        }
        if self.bits.is_empty() {
            // Preamble: 32 ones, then ST's 0.
            if mdio {
                self.ones += 1;
                return;
            }
            if self.ones < 32 {
                self.ones = 0;
                return;
            }
            self.ones = 0;
        }
        self.bits.push(mdio);
        let field = |b: &[bool]| b.iter().fold(0u32, |a, &x| a << 1 | x as u32);
        // ST(2) OP(2) PHYAD(5) REGAD(5) = 14 bits, then TA and data.
        if self.bits.len() == 14 {
            let st = field(&self.bits[0..2]);
            let op = field(&self.bits[2..4]);
            let phy = field(&self.bits[4..9]) as u8;
            let reg = field(&self.bits[9..14]) as u8;
            if st != 0b01 || (op != 0b01 && op != 0b10) {
                self.errors
                    .push(format!("frame with ST {st:02b} and OP {op:02b}"));
                self.bits.clear();
                return;
            }
            if op == 0b10 {
                self.bits.clear();
                let v = self.regs[reg as usize];
                // The next edge samples TA's first bit (released by both); from it the PHY
                // drives TA's second bit 0, from the one after the data, MSB first, and it
                // releases the line at the edge that samples the last data bit.
                if phy == self.addr {
                    self.frames.push((false, phy, reg, v));
                    self.out.push(Some(false));
                    self.out
                        .extend((0..16).rev().map(|i| Some((v >> i) & 1 == 1)));
                    self.out.push(None);
                } else {
                    self.frames.push((false, phy, reg, 0xffff));
                    self.out.extend(std::iter::repeat_n(None, 18));
                }
            }
        }
        if self.bits.len() == 32 {
            let ta = field(&self.bits[14..16]);
            let phy = field(&self.bits[4..9]) as u8;
            let reg = field(&self.bits[9..14]) as u8;
            let data = field(&self.bits[16..32]) as u16;
            if ta != 0b10 {
                self.errors.push(format!("write frame with TA {ta:02b}"));
            }
            if phy == self.addr {
                self.regs[reg as usize] = data;
            }
            self.frames.push((true, phy, reg, data));
            self.bits.clear();
        }
    }

    /// What the PHY puts on the line now: `Some(level)` when driving.
    pub fn driving(&self) -> Option<bool> {
        self.drive
    }
}
