//! Property: the AXI4-Lite decoder carries every access to the one slave whose window holds
//! its address, at the offset within that window, and answers DECERR (reading 0, reaching no
//! slave) everywhere else: in the gap of a slot beyond its window and beyond the last slot.
//!
//! Upstream, the AXI4-Lite master BFM (random idle cycles and backpressure) runs random reads
//! and writes (random strobes, random low address bits) at random addresses: in windows (often
//! the first and last words, so reads find what was written), in slot gaps, beyond the last
//! slot. Downstream, each master port has an [`AxilSlave`] register file (random ready and
//! response delays, some words unmapped and answering SLVERR, checks that the decoder holds
//! valid and payload until ready and raises AWVALID with WVALID). Resets hit in the middle of
//! traffic.
//!
//! The reference is a Rust map of each slave's words. Accesses are serialized (the master keeps
//! program order, the decoder one of a kind at a time), so in ticket order each access must be
//! the next entry in its slave's log, with the offset as address and the same data and
//! strobes, and its response and read data must be the reference's; a DECERR access must
//! appear in no log; at the end no log has an entry left over and each slave's contents equal
//! the reference. An access lost at a reset may or may not have reached its slave before it:
//! it is matched only if the slave's next entry is it and came before the reset.
//!
//! The decoder's parameters are read from the model's ports, so the property follows the
//! configuration.

use crate::drivers::axil::{Axil, AxilConfig};
use crate::drivers::axil_slave::{AxilSlave, AxilSlaveConfig, SlaveAccess};
use crate::drivers::{Dir, Resp};
use crate::prop::Property;
use crate::rtl::AxilDecoderTop as Dut;
use crate::sim::Sim;
use proptest::prelude::*;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;

/// Where an access goes, resolved against the decoder's parameters by [`Map::resolve`].
#[derive(Debug, Clone, Copy)]
pub enum Target {
    /// In slave `slave % N`'s window; `hot` picks one of its first or last four words.
    Window { slave: u8, hot: bool, pick: u32 },
    /// In the gap of slot `slave % N` past its window (the next slot with a gap if it has none).
    Gap { slave: u8, hot: bool, pick: u32 },
    /// Beyond the last slot (in a gap when every address is in some slot).
    Beyond { pick: u32 },
}

/// One access.
#[derive(Debug, Clone)]
pub struct Op {
    write: bool,
    target: Target,
    data: u32,
    strb: u8,
}

/// Generated stimulus.
#[derive(Debug, Clone)]
pub struct Input {
    ops: Vec<Op>,
    idle_percent: u8,
    stall_percent: u8,
    outstanding: u8,
    slave_stall: u8,
    max_delay: u8,
    unmapped_percent: u8,
    /// Cycles (from the start) at which reset is asserted, and for how long.
    resets: Vec<(u16, u8)>,
    seed: u64,
}

/// The decoder's address map, read off the model's ports.
#[derive(Debug, Clone)]
pub struct Map {
    /// Upstream address bits.
    pub addr_bits: u32,
    /// Address bits of a slot.
    pub slot_bits: u32,
    /// Address bits of each slave's window.
    pub windows: Vec<u32>,
}

fn clog2(n: u64) -> u32 {
    if n <= 2 {
        1
    } else {
        64 - (n - 1).leading_zeros()
    }
}

impl Map {
    /// The map of the Verilated decoder.
    pub fn of_model() -> Map {
        let width = |name: &str| {
            Dut::PORTS
                .iter()
                .find(|p| p.0 == name)
                .map(|p| p.1)
                .unwrap_or_else(|| panic!("{} has no port {name}", Dut::NAME))
        };
        let addr_bits = width("s_axil_awaddr_i");
        let windows: Vec<u32> = (0..)
            .map_while(|i| {
                Dut::PORTS
                    .iter()
                    .find(|p| p.0 == format!("m{i}_axil_awaddr_o"))
                    .map(|p| p.1)
            })
            .collect();
        let slot_bits = addr_bits - clog2(windows.len() as u64);
        Map {
            addr_bits,
            slot_bits,
            windows,
        }
    }

    /// The slave and offset of `addr`, or `None` when it is in no window (DECERR).
    pub fn decode(&self, addr: u64) -> Option<(usize, u64)> {
        let slave = (addr >> self.slot_bits) as usize;
        let offset = addr & ((1u64 << self.slot_bits) - 1);
        let w = *self.windows.get(slave)?;
        (offset >> w == 0).then_some((slave, offset))
    }

    fn slot(&self, slave: usize) -> u64 {
        (slave as u64) << self.slot_bits
    }

    fn window(&self, slave: usize, hot: bool, pick: u32) -> u64 {
        let w = self.windows[slave];
        let size = 1u64 << w;
        let pick = u64::from(pick);
        let offset = if hot && size >= 32 {
            // The first or last four words, sometimes off their word boundary.
            let word = pick % 8;
            let base = if word < 4 {
                word * 4
            } else {
                size - 32 + word * 4
            };
            base + if pick & 0x100 != 0 {
                (pick >> 9) & 3
            } else {
                0
            }
        } else {
            pick % size
        };
        self.slot(slave) + offset
    }

    fn gap(&self, slave: usize, hot: bool, pick: u32) -> Option<u64> {
        let n = self.windows.len();
        let s = (0..n)
            .map(|k| (slave + k) % n)
            .find(|&s| self.windows[s] < self.slot_bits)?;
        let (lo, hi) = (1u64 << self.windows[s], 1u64 << self.slot_bits);
        let pick = u64::from(pick);
        let offset = if hot {
            // Just past the window, or the top of the slot.
            if pick & 1 == 0 {
                lo + (pick >> 1) % 8
            } else {
                hi - 1 - (pick >> 1) % 8
            }
        } else {
            lo + pick % (hi - lo)
        };
        Some(self.slot(s) + offset)
    }

    fn beyond(&self, pick: u32) -> Option<u64> {
        let first = self.slot(self.windows.len());
        let end = 1u64 << self.addr_bits;
        (first < end).then(|| first + u64::from(pick) % (end - first))
    }

    /// The byte address `t` stands for.
    pub fn resolve(&self, t: Target) -> u64 {
        let n = self.windows.len();
        match t {
            Target::Window { slave, hot, pick } => self.window(slave as usize % n, hot, pick),
            Target::Gap { slave, hot, pick } => self
                .gap(slave as usize % n, hot, pick)
                .or_else(|| self.beyond(pick))
                .unwrap_or_else(|| self.window(slave as usize % n, hot, pick)),
            Target::Beyond { pick } => self
                .beyond(pick)
                .or_else(|| self.gap(pick as usize % n, pick & 1 == 1, pick >> 1))
                .unwrap_or_else(|| self.window(pick as usize % n, false, pick)),
        }
    }
}

fn target() -> impl Strategy<Value = Target> {
    prop_oneof![
        6 => (any::<u8>(), any::<bool>(), any::<u32>())
            .prop_map(|(slave, hot, pick)| Target::Window { slave, hot, pick }),
        2 => (any::<u8>(), any::<bool>(), any::<u32>())
            .prop_map(|(slave, hot, pick)| Target::Gap { slave, hot, pick }),
        1 => any::<u32>().prop_map(|pick| Target::Beyond { pick }),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    (any::<bool>(), target(), any::<u32>(), 0u8..16).prop_map(|(write, target, data, strb)| Op {
        write,
        target,
        data,
        strb,
    })
}

/// See the module documentation.
pub struct AxilDecoderProp;

/// The reference: each slave's words written so far (others hold their initial value).
struct Reference {
    words: BTreeMap<(usize, u64), u32>,
    seed: Vec<u64>,
    unmapped_percent: u8,
}

impl Reference {
    fn unmapped(&self, slave: usize, word: u64) -> bool {
        AxilSlave::unmapped(self.seed[slave], self.unmapped_percent, word)
    }

    fn value(&self, slave: usize, word: u64) -> u32 {
        self.words
            .get(&(slave, word))
            .copied()
            .unwrap_or_else(|| AxilSlave::initial(self.seed[slave], word))
    }

    /// Applies a write; returns the response the slave gives.
    fn write(&mut self, slave: usize, offset: u64, data: u32, strb: u8) -> Resp {
        let word = offset >> 2;
        if self.unmapped(slave, word) {
            return Resp::SlvErr;
        }
        let mut v = self.value(slave, word);
        for lane in 0..4 {
            if strb >> lane & 1 == 1 {
                let m = 0xffu32 << (8 * lane);
                v = (v & !m) | (data & m);
            }
        }
        self.words.insert((slave, word), v);
        Resp::Okay
    }

    /// A read's data and response.
    fn read(&self, slave: usize, offset: u64) -> (u32, Resp) {
        let word = offset >> 2;
        if self.unmapped(slave, word) {
            (0, Resp::SlvErr)
        } else {
            (self.value(slave, word), Resp::Okay)
        }
    }
}

/// An access as queued: (ticket, is a write, address, data, strobes).
type Queued = (u64, bool, u64, u32, u8);

impl Property for AxilDecoderProp {
    type Input = Input;
    const NAME: &'static str = "axil_decoder";

    fn strategy() -> BoxedStrategy<Input> {
        (
            prop::collection::vec(op(), 1..120),
            (0u8..70, 0u8..70, 1u8..5),
            (0u8..70, 0u8..6, 0u8..30),
            prop::collection::vec((0u16..3000, 1u8..4), 0..3),
            any::<u64>(),
        )
            .prop_map(
                |(
                    ops,
                    (idle_percent, stall_percent, outstanding),
                    (slave_stall, max_delay, unmapped_percent),
                    resets,
                    seed,
                )| Input {
                    ops,
                    idle_percent,
                    stall_percent,
                    outstanding,
                    slave_stall,
                    max_delay,
                    unmapped_percent,
                    resets,
                    seed,
                },
            )
            .boxed()
    }

    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        let map = Map::of_model();
        let n = map.windows.len();
        let mut sim = Sim::<Dut>::maybe_waves(waves);
        let axil = Axil::attach(
            &mut sim,
            "s_axil",
            AxilConfig {
                seed: input.seed,
                idle_percent: input.idle_percent,
                stall_percent: input.stall_percent,
                max_outstanding: input.outstanding as usize,
                timeout: 10_000,
            },
        );
        let seeds: Vec<u64> = (0..n as u64)
            .map(|i| input.seed.wrapping_add(i.wrapping_mul(0x9e37_79b9)) ^ 0xa5a5)
            .collect();
        let slaves: Vec<Rc<RefCell<AxilSlave>>> = (0..n)
            .map(|i| {
                let s = AxilSlave::new(
                    &sim,
                    &format!("m{i}_axil"),
                    AxilSlaveConfig {
                        seed: seeds[i],
                        stall_percent: input.slave_stall,
                        max_delay: input.max_delay,
                        unmapped_percent: input.unmapped_percent,
                    },
                );
                sim.add(s)
            })
            .collect();
        sim.reset(2);

        let mut queued: Vec<Queued> = Vec::new();
        {
            let mut m = axil.master();
            for op in &input.ops {
                let addr = map.resolve(op.target);
                let t = if op.write {
                    m.queue_write(addr, u64::from(op.data), u64::from(op.strb))
                } else {
                    m.queue_read(addr)
                };
                queued.push((t, op.write, addr, op.data, op.strb));
            }
        }

        // Run until every access is answered or lost, resets included; note when each lost
        // access was lost.
        let mut lost_at: BTreeMap<u64, u64> = BTreeMap::new();
        let last_reset = input.resets.iter().map(|r| r.0 as u64).max().unwrap_or(0);
        let limit = 5_000 + input.ops.len() as u64 * 400;
        let start = sim.cycle();
        loop {
            let t = sim.cycle() - start;
            if let Some((_, len)) = input.resets.iter().find(|r| r.0 as u64 == t) {
                let at = sim.cycle();
                sim.reset(*len as u64);
                for ticket in &axil.master().lost {
                    lost_at.entry(*ticket).or_insert(at);
                }
            }
            sim.step();
            if let Some(v) = axil.master().violations.first() {
                return Err(format!("upstream protocol: {v}"));
            }
            for (i, s) in slaves.iter().enumerate() {
                if let Some(v) = s.borrow().violations.first() {
                    return Err(format!("slave {i} protocol: {v}"));
                }
            }
            if axil.master().pending() == 0 && t > last_reset {
                break;
            }
            if t > limit {
                return Err(format!(
                    "hang: {} accesses still pending after {limit} cycles",
                    axil.master().pending()
                ));
            }
        }

        // The scoreboard, in ticket order.
        let done: BTreeMap<u64, (u64, Resp)> = axil
            .master()
            .log
            .iter()
            .map(|c| (c.ticket, (c.data, c.resp)))
            .collect();
        let logs: Vec<Vec<SlaveAccess>> = slaves.iter().map(|s| s.borrow().log.clone()).collect();
        let mut next = vec![0usize; n];
        let mut reference = Reference {
            words: BTreeMap::new(),
            seed: seeds.clone(),
            unmapped_percent: input.unmapped_percent,
        };
        for &(ticket, write, addr, data, strb) in &queued {
            let dir = if write { Dir::Write } else { Dir::Read };
            let what = format!("access {ticket} ({dir:?} of {addr:#x})");
            let hit = map.decode(addr);
            if let Some(&at) = lost_at.get(&ticket) {
                // Lost at a reset: it reached its slave or it did not.
                if let Some((s, offset)) = hit {
                    let e = logs[s].get(next[s]);
                    let reached = e.is_some_and(|e| {
                        e.cycle < at
                            && e.dir == dir
                            && e.addr == offset
                            && (!write || (e.data == data && e.strb == strb))
                    });
                    if reached {
                        next[s] += 1;
                        if write {
                            reference.write(s, offset, data, strb);
                        }
                    }
                }
                continue;
            }
            let (got_data, got_resp) = *done
                .get(&ticket)
                .ok_or_else(|| format!("{what}: neither answered nor lost"))?;
            let Some((s, offset)) = hit else {
                if got_resp != Resp::DecErr || (!write && got_data != 0) {
                    return Err(format!(
                        "{what} is in no window: expected DECERR{}, got {got_resp:?} (data {got_data:#x})",
                        if write { "" } else { " with data 0" }
                    ));
                }
                continue;
            };
            let e = logs[s].get(next[s]).ok_or_else(|| {
                format!("{what}: slave {s} never saw it (it was answered {got_resp:?})")
            })?;
            next[s] += 1;
            if e.dir != dir || e.addr != offset || (write && (e.data != data || e.strb != strb)) {
                return Err(format!(
                    "{what}: slave {s} expected {dir:?} at offset {offset:#x}{}, saw {e:x?}",
                    if write {
                        format!(" data {data:#x} strobes {strb:#06b}")
                    } else {
                        String::new()
                    }
                ));
            }
            if write {
                let want = reference.write(s, offset, data, strb);
                if got_resp != want {
                    return Err(format!("{what}: response {got_resp:?}, expected {want:?}"));
                }
            } else {
                let (want, want_resp) = reference.read(s, offset);
                if got_resp != want_resp || got_data != u64::from(want) {
                    return Err(format!(
                        "{what}: read {got_data:#x} {got_resp:?}, expected {want:#x} {want_resp:?}"
                    ));
                }
            }
        }
        for (s, log) in logs.iter().enumerate() {
            if let Some(e) = log.get(next[s]) {
                return Err(format!(
                    "slave {s} saw an access meant for no one here: {e:x?} ({} of {} accounted for)",
                    next[s],
                    log.len()
                ));
            }
            let slave = slaves[s].borrow();
            let written = reference
                .words
                .range((s, 0)..=(s, u64::MAX))
                .map(|(k, _)| k.1);
            for word in slave.mem.keys().copied().chain(written) {
                let v = slave
                    .mem
                    .get(&word)
                    .copied()
                    .unwrap_or(AxilSlave::initial(seeds[s], word));
                let want = reference.value(s, word);
                if v != want {
                    return Err(format!(
                        "slave {s} word {word:#x} holds {v:#x}, the reference {want:#x}"
                    ));
                }
            }
        }
        Ok(())
    }
}
