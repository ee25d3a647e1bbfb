//! The TCP engine's side of the NVMe/TCP engine's byte streams (`hdl-gen/src/nvme_tcp/mod.rs`,
//! "The engine"): `tx` (`conn`, `data`, `keep`) with a credit bit per connection, `rx` (`conn`,
//! `data`, `keep`) presented only for a connection whose `rx_space_o` bit is up. Not a
//! [`Component`](crate::sim::Component) of its own: the harness that owns it calls
//! [`ByteStreams::sample`] and [`ByteStreams::drive`] from its own, with its own random source,
//! so the harness decides the order of its random draws.
//!
//! What it checks of the engine: a `tx` beat stays, unchanged, until taken; a beat presented
//! on `rx` under its connection's space bit is taken.

use super::{set_bytes, Ports};
use crate::rng::Rng;
use crate::sim::Signal;
use bitvec::field::BitField;
use bitvec::prelude::{BitVec, Lsb0};
use std::collections::VecDeque;

/// Ports, after the prefix.
const PORTS: [&str; 12] = [
    "tx_valid_o",
    "tx_ready_i",
    "tx_conn_o",
    "tx_data_o",
    "tx_keep_o",
    "tx_credit_i",
    "rx_valid_i",
    "rx_ready_o",
    "rx_conn_i",
    "rx_data_i",
    "rx_keep_i",
    "rx_space_o",
];

/// Both byte streams of `n` connections.
pub struct ByteStreams {
    /// Connections.
    pub n: usize,
    /// Bytes per beat.
    pub lanes: usize,
    sig: Vec<Signal>,
    /// Beats waiting to go to the engine, per connection (each at most `lanes` bytes).
    pub beats: Vec<VecDeque<Vec<u8>>>,
    rx_on: Option<usize>,
    /// Bytes the engine sent, per connection, not yet taken by the harness.
    pub tx_bytes: Vec<Vec<u8>>,
    last_tx: Option<(BitVec<u32, Lsb0>, u64, u64)>,
    /// Bytes moved on tx and rx, all connections.
    pub tx_total: u64,
    pub rx_total: u64,
    /// Stream rule breaks seen.
    pub violations: Vec<String>,
    /// Percent of cycles with no rx beat presented, and with `tx_ready_i` low.
    pub idle: (u8, u8),
    /// Connections that may get `tx` credit at all (bit i: connection i); a beat already on
    /// the bus keeps its connection's credit whatever this says.
    pub credit_mask: u64,
}

impl ByteStreams {
    /// Binds to the ports `<prefix>_tx_valid_o` ... (`tx_valid_o` ... for an empty prefix).
    pub fn new(ports: &impl Ports, prefix: &str, idle: (u8, u8)) -> ByteStreams {
        let name = |p: &str| {
            if prefix.is_empty() {
                p.to_string()
            } else {
                format!("{prefix}_{p}")
            }
        };
        let sig: Vec<Signal> = PORTS.iter().map(|p| ports.port(&name(p))).collect();
        let n = sig[11].width() as usize;
        let lanes = (sig[3].width() / 8) as usize;
        ByteStreams {
            n,
            lanes,
            sig,
            beats: vec![VecDeque::new(); n],
            rx_on: None,
            tx_bytes: vec![Vec::new(); n],
            last_tx: None,
            tx_total: 0,
            rx_total: 0,
            violations: Vec::new(),
            idle,
            credit_mask: u64::MAX,
        }
    }

    fn s(&self, p: &str) -> &Signal {
        &self.sig[PORTS.iter().position(|x| *x == p).unwrap()]
    }

    /// The value of a port (after the prefix), for hang reports.
    pub fn get(&self, p: &str) -> u64 {
        self.s(p).get()
    }

    /// Before the edge: what the engine took and sent.
    pub fn sample(&mut self) {
        if let Some(c) = self.rx_on {
            if !self.s("rx_ready_o").is_high() {
                self.violations
                    .push("rx beat presented under rx_space_o was not taken".into());
            }
            if let Some(b) = self.beats[c].pop_front() {
                self.rx_total += b.len() as u64;
            }
            self.rx_on = None;
        }
        if self.s("tx_valid_o").is_high() {
            let now = (
                self.s("tx_data_o").bits(),
                self.s("tx_keep_o").get(),
                self.s("tx_conn_o").get(),
            );
            if let Some(prev) = &self.last_tx {
                if *prev != now {
                    self.violations
                        .push("tx payload changed while valid and not ready".into());
                }
            }
            if self.s("tx_ready_i").is_high() {
                let (w, keep, conn) = &now;
                let n = keep.trailing_ones() as usize;
                self.tx_bytes[*conn as usize]
                    .extend(w.chunks(8).take(n).map(|b| b.load_le::<u8>()));
                self.tx_total += n as u64;
                self.last_tx = None;
            } else {
                self.last_tx = Some(now);
            }
        } else if self.last_tx.is_some() {
            self.violations
                .push("tx valid fell before the transfer".into());
            self.last_tx = None;
        }
    }

    /// The engine was reset (its connections start afresh): bytes on their way either way
    /// are dropped, as the TCP engine underneath drops its connections.
    pub fn restart(&mut self) {
        for b in &mut self.beats {
            b.clear();
        }
        for t in &mut self.tx_bytes {
            t.clear();
        }
        self.rx_on = None;
        self.last_tx = None;
    }

    /// After the edge: an rx beat of a connection with a beat and space (chosen at random),
    /// random credits, random `tx_ready_i`.
    pub fn drive(&mut self, rng: &mut Rng) {
        let space = self.s("rx_space_o").get();
        let ready: Vec<usize> = (0..self.n)
            .filter(|&c| !self.beats[c].is_empty() && space >> c & 1 == 1)
            .collect();
        if !ready.is_empty() && !rng.chance(self.idle.0) {
            let c = ready[rng.below(ready.len() as u64) as usize];
            let beat = &self.beats[c][0];
            let len = beat.len();
            self.s("rx_conn_i").set(c as u64);
            set_bytes(self.s("rx_data_i"), beat);
            self.s("rx_keep_i").set((1u64 << len) - 1);
            self.rx_on = Some(c);
        }
        self.s("rx_valid_i").set(u64::from(self.rx_on.is_some()));
        let mut credit = rng.next_u64() & ((1 << self.n) - 1) & self.credit_mask;
        if let Some((_, _, c)) = &self.last_tx {
            credit |= 1 << c;
        }
        self.s("tx_credit_i").set(credit);
        let tx_ready = !rng.chance(self.idle.1);
        self.s("tx_ready_i").set(u64::from(tx_ready));
    }
}
