//! Drivers and monitors (bus functional models), reusable by every block's test.
//!
//! Each driver is a [`Component`](crate::sim::Component) bound by name prefix to the ports of
//! something that has them ([`Ports`]): a Verilated model ([`Sim`]), or free-standing [`Wires`]
//! clocked by a [`Bench`] when two Rust components talk to each other (a test master against a
//! Rust memory, a loopback). Port names are the model's: `<prefix>_<signal>_i` for what the
//! model takes in, `<prefix>_<signal>_o` for what it puts out.
//!
//! - [`stream`]: ready/valid source and sink (the internal streams);
//! - [`axil`]: AXI4-Lite master, with blocking cocotb-style helpers and a `CsrBus` adapter;
//! - [`axil_slave`]: AXI4-Lite slave, a register file with random delays and checks of the
//!   master's side (what a decoder or bridge presents to a CSR block);
//! - [`axi_mem`]: AXI4 memory slave (host memory) with latency, reordering, backpressure,
//!   error injection and protocol checks, and the DPI-C hooks through which RTL reads it;
//! - [`axis`]: AXI4-Stream frame source and sink;
//! - [`tcp_streams`]: the TCP engine's side of the NVMe/TCP engine's per-connection byte
//!   streams (tx credits, rx under `rx_space_o`).
//!
//! Blocking helpers (drive, then await a response with a cycle limit) run any [`Clocked`]
//! harness: a [`Sim`] or a [`Bench`].

pub mod axi_mem;
pub mod axil;
pub mod axil_slave;
pub mod axis;
pub mod stream;
pub mod tcp_streams;

use crate::sim::{Bench, Dut, Hang, Signal, Sim};
use bitvec::field::BitField;
use bitvec::prelude::{BitSlice, BitVec, Lsb0};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::sync::Mutex;

/// Something that has named ports for drivers to bind to.
pub trait Ports {
    /// The port `name`, or `None` when there is none (drivers use this for optional signals).
    fn find(&self, name: &str) -> Option<Signal>;

    /// What the ports belong to, for messages.
    fn describe(&self) -> String;

    /// The port `name`; panics, naming the owner, when there is none.
    #[track_caller]
    fn port(&self, name: &str) -> Signal {
        self.find(name)
            .unwrap_or_else(|| panic!("{} has no port `{name}`", self.describe()))
    }
}

impl<M: Dut> Ports for Sim<M> {
    fn find(&self, name: &str) -> Option<Signal> {
        M::PORTS
            .iter()
            .any(|p| p.0 == name)
            .then(|| self.signal(name))
    }

    fn describe(&self) -> String {
        format!("model `{}`", M::NAME)
    }

    #[track_caller]
    fn port(&self, name: &str) -> Signal {
        // Sim's own lookup lists the model's ports when the name is wrong.
        self.signal(name)
    }
}

/// Free-standing signals ([`Signal::detached`]) by name, for components wired to each other
/// rather than to a model.
///
/// Names are matched without their `_i`/`_o` suffix, so the two ends of a link find the same
/// signal: a source bound to `lb_tdata_i` and a sink bound to `lb_tdata_o` share `lb_tdata`.
/// Only declared signals exist; an optional signal that was not declared is absent.
#[derive(Default)]
pub struct Wires {
    map: RefCell<BTreeMap<&'static str, Signal>>,
}

fn base_name(name: &str) -> &str {
    name.strip_suffix("_i")
        .or_else(|| name.strip_suffix("_o"))
        .unwrap_or(name)
}

/// A `'static` copy of `name`, made once per distinct name for the life of the process (signal
/// names are few: prefixes times signal names).
fn intern(name: &str) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = names.get(name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.insert(n);
    n
}

impl Wires {
    /// No signals yet.
    pub fn new() -> Wires {
        Wires::default()
    }

    /// Declares the signal `name` (its `_i`/`_o` suffix, if any, is dropped) of `width` bits
    /// and returns it. Declaring a name again returns the same signal; a different width panics.
    #[track_caller]
    pub fn add(&self, name: &str, width: u32) -> Signal {
        let base = base_name(name);
        let mut map = self.map.borrow_mut();
        if let Some(s) = map.get(base) {
            assert_eq!(
                s.width(),
                width,
                "wire `{base}` is already declared {} bits wide",
                s.width()
            );
            return s.clone();
        }
        let n = intern(base);
        let s = Signal::detached(n, width);
        map.insert(n, s.clone());
        s
    }

    /// Names of the declared signals.
    pub fn names(&self) -> Vec<&'static str> {
        self.map.borrow().keys().copied().collect()
    }
}

impl Ports for Wires {
    fn find(&self, name: &str) -> Option<Signal> {
        self.map.borrow().get(base_name(name)).cloned()
    }

    fn describe(&self) -> String {
        format!("wires [{}]", self.names().join(", "))
    }
}

/// A harness that a blocking helper can clock: a [`Sim`] or a [`Bench`].
pub trait Clocked {
    /// One clock cycle, components included.
    fn step(&mut self);
    /// Cycles run so far.
    fn cycle(&self) -> u64;
}

impl<M: Dut> Clocked for Sim<M> {
    fn step(&mut self) {
        Sim::step(self)
    }
    fn cycle(&self) -> u64 {
        Sim::cycle(self)
    }
}

impl Clocked for Bench {
    fn step(&mut self) {
        Bench::step(self)
    }
    fn cycle(&self) -> u64 {
        Bench::cycle(self)
    }
}

/// Steps `clk` until `done` holds (checked before each cycle), for at most `limit` cycles.
pub fn wait_until<C: Clocked + ?Sized>(
    clk: &mut C,
    what: &str,
    limit: u64,
    mut done: impl FnMut() -> bool,
) -> Result<u64, Hang> {
    let start = clk.cycle();
    while !done() {
        if clk.cycle() - start >= limit {
            return Err(Hang {
                waiting_for: what.to_string(),
                cycles: limit,
                at: clk.cycle(),
            });
        }
        clk.step();
    }
    Ok(clk.cycle() - start)
}

/// Direction of an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dir {
    /// A read (AR/R).
    Read,
    /// A write (AW/W/B).
    Write,
}

/// An AXI response (`xRESP`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Resp {
    /// 0: normal success.
    Okay,
    /// 1: exclusive access success.
    ExOkay,
    /// 2: the slave was reached and reports an error.
    SlvErr,
    /// 3: no slave at this address (interconnect decode error).
    DecErr,
}

impl Resp {
    /// The response for the 2-bit `xRESP` value `v` (higher bits ignored).
    pub fn from_bits(v: u64) -> Resp {
        match v & 3 {
            0 => Resp::Okay,
            1 => Resp::ExOkay,
            2 => Resp::SlvErr,
            _ => Resp::DecErr,
        }
    }

    /// The 2-bit `xRESP` value.
    pub fn bits(self) -> u64 {
        self as u64
    }

    /// OKAY or EXOKAY.
    pub fn is_ok(self) -> bool {
        matches!(self, Resp::Okay | Resp::ExOkay)
    }
}

/// `values` packed into one bit vector, `width` bits each, the first at bit 0 (a per-index port:
/// requester i's weight at bits `i * width..`); each value's bits above `width` are dropped.
pub fn pack(values: impl IntoIterator<Item = u64>, width: usize) -> BitVec<u32, Lsb0> {
    let mut bits = BitVec::new();
    for v in values {
        let at = bits.len();
        bits.resize(at + width, false);
        bits[at..].store_le(v & low_bits(width));
    }
    bits
}

/// Field `i` of a per-index port, `width` bits each (what [`pack`] wrote there).
pub fn unpack(bits: &BitSlice<u32, Lsb0>, i: usize, width: usize) -> u64 {
    bits[i * width..][..width].load_le()
}

fn low_bits(width: usize) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1 << width) - 1
    }
}

/// The value of `sig` as `sig.width() / 8` bytes (rounded up), least significant first.
pub fn get_bytes(sig: &Signal, out: &mut Vec<u8>) {
    let n = sig.width().div_ceil(8) as usize;
    out.clear();
    if sig.width() <= 64 {
        out.extend_from_slice(&sig.get().to_le_bytes()[..n]);
    } else {
        for w in sig.get_words() {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out.truncate(n);
    }
}

/// The port's first `N` bytes, least significant first (a 512-bit SQE as `[u8; 64]`; bytes past
/// the port's width are 0).
pub fn get_array<const N: usize>(sig: &Signal) -> [u8; N] {
    let mut v = Vec::with_capacity(N);
    get_bytes(sig, &mut v);
    let mut out = [0u8; N];
    let n = v.len().min(N);
    out[..n].copy_from_slice(&v[..n]);
    out
}

/// Drives `sig` from bytes, least significant first (missing bytes are 0).
pub fn set_bytes(sig: &Signal, bytes: &[u8]) {
    if sig.width() <= 64 {
        let mut b = [0u8; 8];
        let n = bytes.len().min(8);
        b[..n].copy_from_slice(&bytes[..n]);
        sig.set(u64::from_le_bytes(b));
    } else {
        let words: Vec<u32> = bytes
            .chunks(4)
            .map(|c| {
                let mut b = [0u8; 4];
                b[..c.len()].copy_from_slice(c);
                u32::from_le_bytes(b)
            })
            .collect();
        sig.set_words(&words);
    }
}

/// The valid/ready rule every AXI channel shares, seen from the receiving end: once `valid` is
/// up it stays up, with the same payload, until `ready`.
pub(crate) struct Hold<P> {
    waiting: Option<P>,
}

impl<P> Default for Hold<P> {
    fn default() -> Self {
        Hold { waiting: None }
    }
}

impl<P: PartialEq + Debug> Hold<P> {
    /// Call at every sample with the channel's `valid` and `ready` and (read only when valid)
    /// its payload. Records a violation when the rule is broken; returns the payload when a
    /// transfer happens now.
    pub(crate) fn observe(
        &mut self,
        cycle: u64,
        channel: &str,
        valid: bool,
        ready: bool,
        payload: impl FnOnce() -> P,
        violations: &mut Vec<String>,
    ) -> Option<P> {
        if !valid {
            if let Some(w) = self.waiting.take() {
                violations.push(format!(
                    "cycle {cycle}: {channel}: valid dropped before the transfer of {w:x?}"
                ));
            }
            return None;
        }
        let p = payload();
        if let Some(w) = self.waiting.take() {
            if w != p {
                violations.push(format!(
                    "cycle {cycle}: {channel}: payload changed from {w:x?} to {p:x?} before the transfer"
                ));
            }
        }
        if ready {
            Some(p)
        } else {
            self.waiting = Some(p);
            None
        }
    }

    /// Forgets a pending payload (reset).
    pub(crate) fn clear(&mut self) {
        self.waiting = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `pack` puts value i at bits `i * width..`, which `unpack`, the port's words and a
    /// round trip through a wide port all agree on.
    #[test]
    fn pack_unpack_and_wide_ports() {
        let bits = pack([0x5u64, 0xa, 0x1f, 0x3], 4);
        assert_eq!(bits.len(), 16);
        assert_eq!(bits.as_raw_slice()[0] & 0xffff, 0x3fa5);
        assert_eq!(
            (0..4).map(|i| unpack(&bits, i, 4)).collect::<Vec<_>>(),
            [0x5, 0xa, 0xf, 0x3]
        );
        let sig = Signal::detached("wide", 100);
        let values: Vec<u64> = (0..10).map(|i| (i * 0x9e3) & 0x3ff).collect();
        sig.set_bits(&pack(values.iter().copied(), 10));
        assert_eq!(
            (0..10)
                .map(|i| unpack(&sig.bits(), i, 10))
                .collect::<Vec<_>>(),
            values
        );
        let words = sig.get_words();
        assert_eq!(words.len(), 4);
        assert_eq!(u64::from(words[0]) & 0x3ff, values[0]);
        // Value 9 at bits 90..100: the top 6 bits of word 2, the low 4 of word 3.
        assert_eq!(u64::from(words[2] >> 26), values[9] & 0x3f);
        assert_eq!(u64::from(words[3]), values[9] >> 6);
    }
}
