//! Properties of the QoS arbiter (`qos_arbiter`), and the harness they share with
//! `testbench bench --suite qos`.
//!
//! What lives here:
//!
//! - `mod.rs`: the cycle-by-cycle harness (this text)
//! - `mix.rs`, `flood.rs`, `idle.rs`: the properties
//!
//! This file is slightly over 1,000 lines on purpose: the harness is one cycle loop and the
//! state it steps.
//!
//! The harness programs the CSRs through the AXI4-Lite port, enables the block, then plays a
//! front end: per-queue command lists (or endless generators), one command presented at a time,
//! held until accepted, only for queues whose `sq_space_o` bit is set (commands of SQ ids the
//! block does not serve are sent regardless; with [`Timing::ignore_space`] every queue's are,
//! and a command of a full queue is a candidate only from the second cycle after that queue's
//! next decision). It may rewrite queues' weights while commands flow
//! ([`Traffic::weight_writes`]): a decision made while such a write is in flight may follow
//! the old weight or the new one, every decision after its response the new one. It also
//! plays the transport channels: each queue's `dst_space_i` bit follows a pattern drawn per
//! case ([`Channels`]: all open, random per-queue drops, one queue's channel held full for long
//! stretches). The transport side
//! (`m_io_cmd`) and the completion side (`m_io_cpl`) apply random backpressure; on top of it
//! the transport refuses a command whose channel was full when it was decided, for as long as
//! that channel stays full (as a real channel would: that command then blocks the output
//! register), while a command decided with its bit high is taken whenever the random
//! backpressure allows (its channel kept the room it promised). Every cycle it checks, against
//! the golden model (`models::qos`):
//!
//! - every command is either admitted (appears once on `m_io_cmd`, unchanged, in order within
//!   its queue) or denied (completes once on `m_io_cpl`, in arrival order, with its SQ id and
//!   CID, a status the model allows for its faults, DW0 0); a denied command never appears on
//!   `m_io_cmd`;
//! - each release (a new command on `m_io_cmd` in cycle t + 1 is the decision of cycle t) is of
//!   a queue whose `dst_space_i` bit was 1 in cycle t (the documented timing: the bit is looked
//!   at in the decision cycle), whose head command had budget in every bucket that applies (the
//!   model's buckets, stepped cycle by cycle with the releases the RTL made), of the highest
//!   class present among the eligible heads, and the queue the documented weighted round robin
//!   rule picks;
//! - work conservation over the eligible set: in every cycle where the output register was
//!   free and some head was eligible (buffered, budget, its channel's bit 1), a command was
//!   released;
//! - over every window of the run, each bucket with a rate admitted at most
//!   `rate * T + burst + its largest command`;
//! - at the end, every counter read through AXI4-Lite equals the model's count (`wait_*`:
//!   cycles a head waited for budget alone, its channel's bit being 1).

pub mod flood;
pub mod idle;
pub mod mix;

use crate::drivers::axil::{Axil, AxilConfig};
use crate::drivers::{get_array, set_bytes, Resp};
use crate::models::qos::{
    budget_lag, check, standing, worst_window, worst_window_debt, BudgetBit, Config, DebtBucket,
    Limit, QueueCfg, Sqe, Standing, Verdict, BW_FRAC, IOPS_FRAC,
};
use crate::rng::Rng;
use crate::rtl::regs::qos_csr;
use crate::rtl::QosArbiterTop as Top;
use crate::sim::Sim;
use std::collections::VecDeque;
use std::path::Path;

/// Sizes of the generated block, read from its register map.
#[derive(Clone, Copy, Debug)]
pub struct Dims {
    /// Queues (SQ ids 1..=queues).
    pub queues: usize,
    /// Namespaces (NSIDs 1..=namespaces).
    pub namespaces: usize,
    /// Grant entries.
    pub grants: usize,
}

/// The width of port `name` of the block.
fn port_width(name: &str) -> usize {
    Top::PORTS
        .iter()
        .find(|p| p.0 == name)
        .unwrap_or_else(|| panic!("qos_arbiter has no port {name}"))
        .1 as usize
}

/// The block's sizes: queues from the width of `sq_space_o`, the rest from the register
/// names of `qos_csr`.
pub fn dims() -> Dims {
    let count = |pre: &str, suf: &str| {
        qos_csr::REGISTERS
            .iter()
            .filter(|r| r.0.starts_with(pre) && r.0.ends_with(suf))
            .count()
    };
    let queues = port_width("sq_space_o");
    assert!(
        queues <= 64,
        "the qos suite drives dst_space_i as one 64-bit word: at most 64 queues"
    );
    Dims {
        queues,
        namespaces: count("ns", "_cfg"),
        grants: count("grant", "_ctrl"),
    }
}

/// Commands each queue buffers (`queue_depth`), from the block's name (`..._d<depth>`).
pub fn queue_depth() -> usize {
    Top::NAME
        .rsplit('_')
        .find_map(|p| p.strip_prefix('d').and_then(|d| d.parse().ok()))
        .unwrap_or_else(|| panic!("{} does not name its queue depth (_d<n>)", Top::NAME))
}

/// A mask of the low `n` bits (`n <= 64`).
pub fn mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1 << n) - 1
    }
}

/// Per-queue registers of the queue window, in offset order (`hdl-gen/src/qos/csr.rs`).
pub const QUEUE_REGS: [&str; 12] = [
    "cfg",
    "bw_rate",
    "bw_burst",
    "iops_rate",
    "adm_rd",
    "adm_wr",
    "bytes_rd",
    "bytes_wr",
    "thr_rd",
    "thr_wr",
    "deny_rd",
    "deny_wr",
];

/// Per-queue counters, in register order (the last eight of [`QUEUE_REGS`]).
pub const QUEUE_COUNTERS: [&str; 8] = [
    "adm_rd", "adm_wr", "bytes_rd", "bytes_wr", "thr_rd", "thr_wr", "deny_rd", "deny_wr",
];

/// The offset of SQ `q + 1`'s register `name` in the queue window (at `1 << queue_shift`,
/// the block's address being one bit wider than a slot).
pub fn qreg(q: usize, name: &str) -> u32 {
    let base = 1u32 << (port_width("s_axil_awaddr_i") - 1);
    let k = QUEUE_REGS
        .iter()
        .position(|r| *r == name)
        .unwrap_or_else(|| panic!("the queue window has no register {name}"));
    base + 0x40 * q as u32 + 4 * k as u32
}

/// The offset of register `name`.
pub fn reg(name: &str) -> u32 {
    qos_csr::REGISTERS
        .iter()
        .find(|r| r.0 == name)
        .unwrap_or_else(|| panic!("qos_csr has no register {name}"))
        .1
}

/// Namespace counter names, in register order (as `hdl-gen/src/qos/csr.rs`).
pub const COUNTERS: [&str; 8] = [
    "adm_rd", "adm_wr", "bytes_rd", "bytes_wr", "wait_rd", "wait_wr", "deny_rd", "deny_wr",
];

/// Random backpressure and idle cycles, in percent, and the transport channels' space.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// Cycles the front end stays idle when it could present a command.
    pub in_idle: u8,
    /// Cycles `m_io_cmd_ready` is low.
    pub out_stall: u8,
    /// Cycles `m_io_cpl_ready` is low.
    pub cpl_stall: u8,
    /// What the harness drives on `dst_space_i`.
    pub channels: Channels,
    /// A hardware reset in mid-traffic before the checked run: the block is programmed and
    /// runs this many cycles of unchecked random commands (every SQ id, Reads and Writes,
    /// random backpressure and channel space), then reset is asserted whatever is in flight.
    /// The checked run that follows (programming included) must see a block exactly as fresh
    /// from power-up: nothing held, no stale command released or denied, counters and buckets
    /// back at their reset values.
    pub warm_reset: Option<u16>,
    /// The front end does not honour `sq_space_o`: it presents commands of full queues too.
    /// Such a command waits in the check stage, stalling the input for every queue, and enters
    /// its queue when that queue's next decision frees a slot.
    pub ignore_space: bool,
    /// Queue registers left at their reset values are not written (`program`): the block's
    /// reset values (class 0, weight 0, no limits) must be what its register map says.
    pub lazy_program: bool,
}

/// One queue's channel held full for long stretches (a stuck channel): full for `full`
/// cycles, then open for `open`, repeating from the traffic start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stuck {
    /// Queue index (SQ id - 1).
    pub queue: usize,
    /// Cycles full in each period.
    pub full: u32,
    /// Cycles open in each period.
    pub open: u32,
}

impl Stuck {
    /// Whether the channel is full in traffic cycle `t`.
    pub fn full_at(&self, t: u64) -> bool {
        t % u64::from(self.full + self.open) < u64::from(self.full)
    }
}

/// The transport channels' space pattern of a case, driven on `dst_space_i` (bit i: SQ i + 1's
/// channel has space).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Channels {
    /// Queues (bit i: queue i) whose channel turns full at random.
    pub drop_mask: u64,
    /// Chance in percent, per cycle, that an open channel of `drop_mask` turns full.
    pub drop_percent: u8,
    /// A random full spell lasts 1 to `max_run` cycles.
    pub max_run: u16,
    /// A stuck channel, if any.
    pub stuck: Option<Stuck>,
}

impl Channels {
    /// Every channel always has space: the block behaves as it did before `dst_space_i`.
    pub const OPEN: Channels = Channels {
        drop_mask: 0,
        drop_percent: 0,
        max_run: 1,
        stuck: None,
    };
}

/// The channel patterns a case draws: all open (so every check keeps today's strength), random
/// per-queue drops (short full spells on random queues), or one queue's channel stuck full for
/// long stretches (with or without drops on the others).
pub fn channels_strategy(nq: usize) -> proptest::strategy::BoxedStrategy<Channels> {
    use proptest::prelude::*;
    let all = mask(nq);
    let drops =
        (1..=all, 1u8..40, 1u16..40).prop_map(|(drop_mask, drop_percent, max_run)| Channels {
            drop_mask,
            drop_percent,
            max_run,
            stuck: None,
        });
    let stuck = (
        0..nq,
        100u32..3000,
        20u32..600,
        prop::option::of(drops.clone()),
    )
        .prop_map(move |(queue, full, open, drops)| {
            let base = drops.unwrap_or(Channels::OPEN);
            Channels {
                drop_mask: base.drop_mask & !(1 << queue),
                stuck: Some(Stuck { queue, full, open }),
                ..base
            }
        });
    prop_oneof![2 => Just(Channels::OPEN), 2 => drops, 1 => stuck].boxed()
}

/// The per-cycle state of [`Channels`].
struct ChannelState {
    pattern: Channels,
    full_left: Vec<u16>,
}

impl ChannelState {
    /// `dst_space_i` for traffic cycle `t` (draws from `rng` only for queues that drop).
    fn next(&mut self, t: u64, nq: usize, rng: &mut Rng) -> u64 {
        let p = self.pattern;
        let mut bits = mask(nq);
        for q in 0..nq {
            if p.drop_percent > 0 && (p.drop_mask >> q) & 1 == 1 {
                if self.full_left[q] == 0 && rng.chance(p.drop_percent) {
                    self.full_left[q] = 1 + rng.below(u64::from(p.max_run.max(1))) as u16;
                }
                if self.full_left[q] > 0 {
                    self.full_left[q] -= 1;
                    bits &= !(1 << q);
                }
            }
        }
        if let Some(s) = p.stuck.filter(|s| s.queue < nq && s.full_at(t)) {
            bits &= !(1 << s.queue);
        }
        bits
    }
}

/// An endless command source for one queue (the flooding and trickling tenants).
pub type Gen = Box<dyn FnMut(&mut Rng) -> Sqe>;

/// The front end's commands: per SQ id a list, or a generator that runs until `feed_end`.
pub struct Traffic {
    /// (sqid, commands in order).
    pub lists: Vec<(u16, VecDeque<Sqe>)>,
    /// (sqid, generator): presented until cycle `feed_end` (counted from the traffic start).
    pub gens: Vec<(u16, Gen)>,
    /// (sqid, commands in order, each not presented before its traffic cycle).
    pub timed: Vec<(u16, VecDeque<(u64, Sqe)>)>,
    /// Generators stop at this traffic cycle.
    pub feed_end: u64,
    /// Pick the queue with the fewest commands in the block (else a random one).
    pub least_in_flight: bool,
    /// Bytes outside the fields the block reads.
    pub fill: [u8; 64],
    /// Writes of a queue's weight while traffic runs, in order: (traffic cycle from which the
    /// write may be issued, queue index, new weight). Each rewrites the queue's `cfg` register
    /// whole (class and IOPS burst unchanged), one write in flight at a time.
    pub weight_writes: VecDeque<(u64, usize, u8)>,
}

/// One release: the decision cycle (from the traffic start), queue, namespace, cost, direction.
#[derive(Clone, Copy, Debug)]
pub struct Release {
    /// Decision cycle, counted from the start of traffic.
    pub cycle: u64,
    /// Queue index.
    pub queue: usize,
    /// Namespace index.
    pub ns: usize,
    /// Bytes.
    pub cost: u64,
}

/// What a run did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Every release, in order.
    pub releases: Vec<Release>,
    /// Commands denied.
    pub denied: usize,
    /// Traffic cycles run.
    pub cycles: u64,
    /// Cycles in which the output register was free (could take a release).
    pub free_cycles: u64,
    /// Per queue, the traffic cycles its `dst_space_i` bit was 0.
    pub channel_full: Vec<u64>,
    /// The traffic cycle the last weight write's response came back (0 without writes): every
    /// decision from then on follows the weights written.
    pub weights_settled: u64,
}

struct Entry {
    ready: u64,
    bytes: [u8; 64],
    ns: usize,
    cost: u64,
    write: bool,
}

/// The documented class + weighted round robin rule (`hdl-gen/src/qos/sched.rs`).
#[derive(Clone, PartialEq, Eq)]
struct Wrr {
    ptr: [usize; 4],
    turn: [u32; 4],
}

impl Wrr {
    fn pick(&self, elig: &[bool], class: &[u8]) -> Option<(usize, u8)> {
        let n = elig.len();
        let top = (0..n).filter(|&i| elig[i]).map(|i| class[i]).min()?;
        let p = self.ptr[top as usize];
        (0..n)
            .map(|k| (p + k) % n)
            .find(|&i| elig[i] && class[i] == top)
            .map(|i| (i, top))
    }

    fn take(&mut self, c: u8, winner: usize, weight: u8, n: usize) {
        let c = c as usize;
        let done = if self.ptr[c] == winner {
            self.turn[c]
        } else {
            0
        };
        if done >= u32::from(weight) {
            self.ptr[c] = (winner + 1) % n;
            self.turn[c] = 0;
        } else {
            self.ptr[c] = winner;
            self.turn[c] = done + 1;
        }
    }
}

/// A queue's `cfg` register: its class, `weight`, its IOPS burst.
fn cfg_word(q: &QueueCfg, weight: u8) -> u32 {
    u32::from(q.class) | u32::from(weight) << 8 | q.iops.burst << 24
}

/// Programs `cfg` and enables the block. `lazy`: a queue register whose value is its reset
/// value (0) is not written, as firmware relying on the reset values would do.
fn program(axil: &Axil, sim: &mut Sim<Top>, cfg: &Config, lazy: bool) -> Result<(), String> {
    let mut bus = axil.mmio(sim);
    let d = dims();
    let info = bus.read32(reg("info"));
    let want = (d.queues | d.namespaces << 16 | d.grants << 24) as u32;
    if info != want {
        return Err(format!("info reads {info:#x}, expected {want:#x}"));
    }
    let shift = (bus.read32(reg("info2")) >> 8) & 0xff;
    if 1 << shift != qreg(0, "cfg") {
        return Err(format!(
            "info2.queue_shift reads {shift}, the queue window is at {:#x}",
            qreg(0, "cfg")
        ));
    }
    for (i, q) in cfg.queues.iter().enumerate() {
        let cfg_word = cfg_word(q, q.weight);
        for (r, v) in [
            ("cfg", cfg_word),
            ("bw_rate", q.bw.rate),
            ("bw_burst", q.bw.burst),
            ("iops_rate", q.iops.rate),
        ] {
            if v != 0 || !lazy {
                bus.write32(qreg(i, r), v);
            }
        }
        let back = bus.read32(qreg(i, "cfg"));
        if back != cfg_word {
            return Err(format!(
                "SQ {} cfg reads back {back:#x}, {cfg_word:#x} was written",
                i + 1
            ));
        }
    }
    for (i, n) in cfg.namespaces.iter().enumerate() {
        let p = format!("ns{}", i + 1);
        bus.write32(
            reg(&format!("{p}_cfg")),
            u32::from(n.lba_shift) | n.iops.burst << 24,
        );
        bus.write32(reg(&format!("{p}_size_lo")), n.size as u32);
        bus.write32(reg(&format!("{p}_size_hi")), (n.size >> 32) as u32);
        bus.write32(reg(&format!("{p}_bw_rate")), n.bw.rate);
        bus.write32(reg(&format!("{p}_bw_burst")), n.bw.burst);
        bus.write32(reg(&format!("{p}_iops_rate")), n.iops.rate);
    }
    for (i, g) in cfg.grants.iter().enumerate() {
        let p = format!("grant{i}");
        bus.write32(
            reg(&format!("{p}_ctrl")),
            u32::from(g.read)
                | u32::from(g.write) << 1
                | u32::from(g.nsid) << 8
                | u32::from(g.sqid) << 16,
        );
        bus.write32(reg(&format!("{p}_first_lo")), g.first as u32);
        bus.write32(reg(&format!("{p}_first_hi")), (g.first >> 32) as u32);
        bus.write32(reg(&format!("{p}_last_lo")), g.last as u32);
        bus.write32(reg(&format!("{p}_last_hi")), (g.last >> 32) as u32);
    }
    bus.write32(reg("ctrl"), 1);
    Ok(())
}

/// The unchecked traffic of [`Timing::warm_reset`], ended by a hardware reset of 1 to 4 cycles
/// asserted whatever is in flight. Draws from its own generator, so the checked run after it
/// is the run a fresh block would get.
fn warm_traffic(
    axil: &Axil,
    sim: &mut Sim<Top>,
    cfg: &Config,
    cycles: u16,
    seed: u64,
) -> Result<(), String> {
    let d = dims();
    let mut rng = Rng::new(seed ^ 0x3a2f_17c4_0b5e_d901);
    program(axil, sim, cfg, false)?;
    let s_valid = sim.signal("s_io_cmd_valid_i");
    let s_ready = sim.signal("s_io_cmd_ready_o");
    let s_sqid = sim.signal("s_io_cmd_sqid_i");
    let s_sqe = sim.signal("s_io_cmd_sqe_i");
    let inputs = [
        sim.signal("m_io_cmd_ready_i"),
        sim.signal("m_io_cpl_ready_i"),
        sim.signal("dst_space_i"),
    ];
    let mut cid = 0u16;
    for _ in 0..cycles {
        // A presented command stays until taken (the stream contract), then the next one.
        if !s_valid.is_high() && rng.chance(70) {
            let sqid = 1 + rng.below(d.queues as u64 + 1) as u16;
            let sqe = Sqe {
                opcode: [0x01, 0x02, 0x02, 0x00, 0x08, 0x09][rng.below(6) as usize],
                cid,
                nsid: 1 + rng.below(d.namespaces as u64) as u32,
                slba: rng.below(1 << 20),
                nlb: rng.below(64) as u16,
            };
            cid = cid.wrapping_add(1);
            s_valid.set(1);
            s_sqid.set(u64::from(sqid));
            set_bytes(&s_sqe, &sqe.bytes(&[0x77; 64]));
        }
        for sig in &inputs {
            sig.set(rng.next_u64());
        }
        sim.settle();
        let taken = s_valid.is_high() && s_ready.is_high();
        sim.step();
        if taken {
            s_valid.set(0);
        }
    }
    // The front end and the transports are reset with the block: their side drops too.
    s_valid.set(0);
    for sig in &inputs {
        sig.set(0);
    }
    sim.reset(1 + rng.below(4));
    Ok(())
}

/// Runs `traffic` through the block configured with `cfg`, checking every cycle (see the module
/// documentation). `limit`: traffic cycles before the run is reported as hung.
pub fn run(
    cfg: &Config,
    traffic: &mut Traffic,
    timing: Timing,
    seed: u64,
    limit: u64,
    waves: Option<&Path>,
) -> Result<Outcome, String> {
    let d = dims();
    assert_eq!(cfg.queues.len(), d.queues);
    assert_eq!(cfg.namespaces.len(), d.namespaces);
    assert!(cfg.grants.len() <= d.grants);
    let nq = d.queues;
    let nn = d.namespaces;
    let mut rng = Rng::new(seed);
    let mut sim = Sim::<Top>::maybe_waves(waves);
    let axil = Axil::attach(
        &mut sim,
        "s_axil",
        AxilConfig {
            seed: rng.next_u64(),
            idle_percent: 10,
            stall_percent: 10,
            ..AxilConfig::default()
        },
    );
    sim.reset(2);
    if let Some(cycles) = timing.warm_reset {
        warm_traffic(&axil, &mut sim, cfg, cycles, seed)?;
    }
    program(&axil, &mut sim, cfg, timing.lazy_program)?;
    sim.run(2);

    let s_valid = sim.signal("s_io_cmd_valid_i");
    let s_ready = sim.signal("s_io_cmd_ready_o");
    let s_sqid = sim.signal("s_io_cmd_sqid_i");
    let s_sqe = sim.signal("s_io_cmd_sqe_i");
    let m_valid = sim.signal("m_io_cmd_valid_o");
    let m_ready = sim.signal("m_io_cmd_ready_i");
    let m_sqid = sim.signal("m_io_cmd_sqid_o");
    let m_sqe = sim.signal("m_io_cmd_sqe_o");
    let c_valid = sim.signal("m_io_cpl_valid_o");
    let c_ready = sim.signal("m_io_cpl_ready_i");
    let c_sqid = sim.signal("m_io_cpl_sqid_o");
    let c_cid = sim.signal("m_io_cpl_cid_o");
    let c_status = sim.signal("m_io_cpl_status_o");
    let c_dw0 = sim.signal("m_io_cpl_dw0_o");
    let space = sim.signal("sq_space_o");
    let dst_space = sim.signal("dst_space_i");
    let mut channels = ChannelState {
        pattern: timing.channels,
        full_left: vec![0; nq],
    };

    let full_q = |l: Limit, f| DebtBucket::full(f, l);
    let mut qbw: Vec<DebtBucket> = cfg.queues.iter().map(|q| full_q(q.bw, BW_FRAC)).collect();
    let mut qiops: Vec<DebtBucket> = cfg
        .queues
        .iter()
        .map(|q| full_q(q.iops, IOPS_FRAC))
        .collect();
    let mut nbw: Vec<DebtBucket> = cfg
        .namespaces
        .iter()
        .map(|n| full_q(n.bw, BW_FRAC))
        .collect();
    let mut niops: Vec<DebtBucket> = cfg
        .namespaces
        .iter()
        .map(|n| full_q(n.iops, IOPS_FRAC))
        .collect();
    let class: Vec<u8> = cfg.queues.iter().map(|q| q.class).collect();
    // The round robin states the block may be in: one, except while a weight write is in
    // flight (its decisions may use the old weight or the new one); a decision keeps the
    // states that pick its queue.
    let mut wrrs = vec![Wrr {
        ptr: [0; 4],
        turn: [0; 4],
    }];
    let mut weight: Vec<u8> = cfg.queues.iter().map(|q| q.weight).collect();
    // The weight write in flight: (ticket, queue, new weight).
    let mut weight_write: Option<(u64, usize, u8)> = None;
    // A command of a full queue waits in the check stage for this queue's next decision
    // (only when the front end ignores `sq_space_o`).
    let mut held: Option<usize> = None;
    // The command accepted in the previous cycle (its queue), whose room is known after this
    // cycle's decision.
    let mut accepted: Option<usize> = None;
    let depth = queue_depth();
    let mut fifo: Vec<VecDeque<Entry>> = (0..nq).map(|_| VecDeque::new()).collect();
    let mut denials: VecDeque<(u16, u16, Vec<u16>)> = VecDeque::new();
    let mut current: Option<(u16, [u8; 64])> = None;
    let mut in_block = vec![0usize; nq];
    // Counters: [queue or namespace][counter]; per queue in QUEUE_COUNTERS order. The
    // namespaces' wait counters are a range: cycles that surely waited, and that may have.
    let mut qcnt = vec![[0u64; 8]; nq];
    let mut ncnt = vec![[0u64; 8]; nn];
    let mut nwait_hi = vec![[0u64; 2]; nn];
    // The budget bit of each queue as the block may know it, and the contract's lag bound.
    let mut bits = vec![BudgetBit::default(); nq];
    let lag = budget_lag(nq);
    // The decision of the previous cycle (queue, namespace, cost): its namespace's buckets
    // are charged at the end of this one.
    let mut last: Option<(usize, usize, u64)> = None;
    let mut out = Outcome {
        channel_full: vec![0; nq],
        ..Outcome::default()
    };
    let (mut prev_mv, mut prev_mr) = (false, false);
    // `dst_space_i` as driven in the previous cycle (the decision cycle of a new word).
    let mut prev_dst = 0u64;
    // The command in the output register was decided with its channel's bit high.
    let mut promised = false;
    let ctx = |t: u64, msg: String| format!("traffic cycle {t}: {msg}");

    let mut t: u64 = 0;
    loop {
        // ---- Drive cycle t.
        let sp = space.get();
        if current.is_none() && !rng.chance(timing.in_idle) {
            let sp = if timing.ignore_space { u64::MAX } else { sp };
            current = next_command(traffic, sp, t, &in_block, nq, &mut rng);
        }
        match &current {
            Some((sqid, b)) => {
                s_valid.set(1);
                s_sqid.set(u64::from(*sqid));
                set_bytes(&s_sqe, b);
            }
            None => s_valid.set(0),
        }
        let dst = channels.next(t, nq, &mut rng);
        dst_space.set(dst);
        for (q, n) in out.channel_full.iter_mut().enumerate() {
            *n += (dst >> q) as u64 & 1 ^ 1;
        }
        // The transport: a command decided against a full channel waits for that channel.
        if m_valid.is_high() && (!prev_mv || prev_mr) {
            let sqid = m_sqid.get();
            promised = (1..=nq as u64).contains(&sqid) && (prev_dst >> (sqid - 1)) & 1 == 1;
        }
        let out_sqid = m_sqid.get();
        let channel_open = (1..=nq as u64).contains(&out_sqid) && (dst >> (out_sqid - 1)) & 1 == 1;
        let mr = !rng.chance(timing.out_stall) && (promised || channel_open);
        m_ready.set(mr as u64);
        c_ready.set(!rng.chance(timing.cpl_stall) as u64);
        sim.settle();

        // ---- Sample cycle t.
        let mv = m_valid.is_high();
        let new_word = mv && (!prev_mv || prev_mr);
        if t > 0 {
            // The scheduler's cycle t - 1, with the releases the RTL made.
            let u = t - 1;
            // elig: surely a candidate; maybe: a candidate unless the budget bit lags.
            let mut elig = vec![false; nq];
            let mut maybe = vec![false; nq];
            let mut ns_wait = vec![[false; 2]; nn];
            let mut ns_wait_hi = vec![[false; 2]; nn];
            for q in 0..nq {
                let qb = bits[q].at(u, qbw[q].ok() && qiops[q].ok(), lag);
                let Some(e) = fifo[q].front().filter(|e| e.ready <= u) else {
                    continue;
                };
                let ns_ok = nbw[e.ns].ok() && niops[e.ns].ok();
                match standing((prev_dst >> q) & 1 == 1, qb, ns_ok) {
                    Standing::Eligible => elig[q] = true,
                    Standing::Maybe => {
                        maybe[q] = true;
                        ns_wait_hi[e.ns][e.write as usize] = true;
                    }
                    Standing::NoChannel => {}
                    Standing::NoBudget => {
                        ns_wait[e.ns][e.write as usize] = true;
                        ns_wait_hi[e.ns][e.write as usize] = true;
                    }
                }
            }
            for n in 0..nn {
                for w in 0..2 {
                    ncnt[n][4 + w] += ns_wait[n][w] as u64;
                    nwait_hi[n][w] += ns_wait_hi[n][w] as u64;
                }
            }
            let free = !prev_mv || prev_mr;
            out.free_cycles += free as u64;
            let mut qspend = vec![0u64; nq];
            let mut nspend = vec![0u64; nn];
            let mut nops = vec![0u64; nn];
            let mut released = vec![false; nq];
            let mut rel_write = false;
            if let Some((_, n, cost)) = last.take() {
                nspend[n] = cost;
                nops[n] = 1;
            }
            if new_word {
                let sqid = m_sqid.get() as usize;
                let bytes: [u8; 64] = get_array(&m_sqe);
                if sqid == 0 || sqid > nq {
                    return Err(ctx(
                        u,
                        format!("released a command of SQ {sqid}, which the block does not serve"),
                    ));
                }
                let q = sqid - 1;
                let Some(e) = fifo[q].front().filter(|e| e.ready <= u) else {
                    return Err(ctx(u, format!("released a command of SQ {sqid} (opcode {:#04x}, CID {:#x}) that is not an admitted command at the head of that queue (denied, or never sent)", bytes[0], u16::from_le_bytes([bytes[2], bytes[3]]))));
                };
                if e.bytes != bytes {
                    return Err(ctx(
                        u,
                        format!(
                            "SQ {sqid}: released {:02x?}, the head of the queue is {:02x?}",
                            Sqe::decode(&bytes),
                            Sqe::decode(&e.bytes)
                        ),
                    ));
                }
                if !free {
                    return Err(ctx(u, "released while the output register was full".into()));
                }
                if (prev_dst >> q) & 1 == 0 {
                    return Err(ctx(u, format!(
                        "decided SQ {sqid} (on m_io_cmd in cycle {t}) while its dst_space_i bit was 0: its channel was full"
                    )));
                }
                if !elig[q] && !maybe[q] {
                    return Err(ctx(u, format!(
                        "released SQ {sqid} without budget (queue bw {} iops {}, namespace {} bw {} iops {}; levels {} {} {} {})",
                        qbw[q].ok(), qiops[q].ok(), e.ns + 1, nbw[e.ns].ok(), niops[e.ns].ok(),
                        qbw[q].level(), qiops[q].level(), nbw[e.ns].level(), niops[e.ns].level()
                    )));
                }
                // A queue in the lag window may or may not be a candidate: the pick must be
                // the rule's among the sure candidates and this one.
                let mut cands = elig.clone();
                cands[q] = true;
                let picks: Vec<(usize, u8)> = wrrs
                    .iter()
                    .map(|w| w.pick(&cands, &class).expect("one is eligible"))
                    .collect();
                if !picks.iter().any(|p| p.0 == q) {
                    let (pick, c) = picks[0];
                    return Err(ctx(u, format!(
                        "released SQ {sqid} (class {}), the rule picks SQ {} (class {c}); eligible: {:?}",
                        class[q], pick + 1,
                        (0..nq).filter(|&i| elig[i]).map(|i| (i + 1, class[i])).collect::<Vec<_>>()
                    )));
                }
                let mut weights = vec![weight[q]];
                if let Some((_, wq, new)) = weight_write {
                    if wq == q && new != weight[q] {
                        weights.push(new);
                    }
                }
                let mut next: Vec<Wrr> = Vec::new();
                for (w, p) in wrrs.iter().zip(&picks) {
                    if p.0 != q {
                        continue;
                    }
                    for &wt in &weights {
                        let mut n = w.clone();
                        n.take(class[q], q, wt, nq);
                        if !next.contains(&n) {
                            next.push(n);
                        }
                    }
                }
                wrrs = next;
                let e = fifo[q].pop_front().unwrap();
                if held == Some(q) {
                    // The slot this decision frees takes the held command: it enters the queue
                    // in cycle u + 1 and is a candidate from u + 2.
                    let e = fifo[q].back_mut().expect("the held command");
                    e.ready = u + 2;
                    held = None;
                }
                in_block[q] -= 1;
                qspend[q] = e.cost;
                last = Some((q, e.ns, e.cost));
                released[q] = true;
                rel_write = e.write;
                let w = e.write as usize;
                qcnt[q][w] += 1;
                qcnt[q][2 + w] += e.cost;
                ncnt[e.ns][w] += 1;
                ncnt[e.ns][2 + w] += e.cost;
                out.releases.push(Release {
                    cycle: u,
                    queue: q,
                    ns: e.ns,
                    cost: e.cost,
                });
            } else {
                if free && elig.iter().any(|&e| e) {
                    return Err(ctx(u, format!(
                        "idle with eligible commands waiting (SQs {:?}) and the output register free",
                        (0..nq).filter(|&i| elig[i]).map(|i| i + 1).collect::<Vec<_>>()
                    )));
                }
            }
            for n in 0..nn {
                nbw[n].step(nspend[n]);
                niops[n].step(nops[n]);
            }
            for q in 0..nq {
                qbw[q].step(qspend[q]);
                qiops[q].step(released[q] as u64);
                if released[q] {
                    // The charge: the buckets' budget after the spend sets the budget bit.
                    let ok = qbw[q].ok() && qiops[q].ok();
                    bits[q].charged(ok);
                    if !ok {
                        qcnt[q][4 + rel_write as usize] += 1;
                    }
                }
            }
        }
        if c_valid.is_high() && c_ready.is_high() {
            let (sqid, cid, status) = (
                c_sqid.get() as u16,
                c_cid.get() as u16,
                c_status.get() as u16,
            );
            let Some((wsq, wcid, allowed)) = denials.pop_front() else {
                return Err(ctx(t, format!("completion SQ {sqid} CID {cid:#x} status {status:#x} for no denied command")));
            };
            if sqid != wsq || cid != wcid || !allowed.contains(&status) || c_dw0.get() != 0 {
                return Err(ctx(t, format!(
                    "completion SQ {sqid} CID {cid:#x} status {status:#x} DW0 {:#x}; expected SQ {wsq} CID {wcid:#x} status one of {allowed:#x?}, DW0 0",
                    c_dw0.get()
                )));
            }
        }
        // The command accepted in cycle t - 1 sat in the check stage in cycle t: with its queue
        // full then (the decisions up to cycle t - 1 counted), it waits for a slot.
        if let Some(q) = accepted.take() {
            if fifo[q].len() > depth {
                fifo[q].back_mut().expect("the accepted command").ready = u64::MAX;
                held = Some(q);
            }
        }
        if let Some((ticket, q, new)) = weight_write {
            if let Some(done) = axil.master().take(ticket) {
                if done.resp != Resp::Okay {
                    return Err(ctx(
                        t,
                        format!(
                            "the write of SQ {}'s cfg (weight {new}) answered {:?}",
                            q + 1,
                            done.resp
                        ),
                    ));
                }
                weight[q] = new;
                weight_write = None;
                out.weights_settled = t;
            }
        }
        if weight_write.is_none() && traffic.weight_writes.front().is_some_and(|w| w.0 <= t) {
            let (_, q, new) = traffic.weight_writes.pop_front().unwrap();
            let word = cfg_word(&cfg.queues[q], new);
            let ticket = axil
                .master()
                .queue_write(u64::from(qreg(q, "cfg")), u64::from(word), 0xf);
            weight_write = Some((ticket, q, new));
        }
        if let Some((sqid, b)) = current {
            if s_ready.is_high() {
                let sqe = Sqe::decode(&b);
                match check(cfg, sqid, &sqe) {
                    Verdict::Admit {
                        queue,
                        ns,
                        cost,
                        write,
                    } => {
                        in_block[queue] += 1;
                        accepted = Some(queue);
                        fifo[queue].push_back(Entry {
                            ready: t + 2,
                            bytes: b,
                            ns,
                            cost,
                            write,
                        });
                    }
                    Verdict::Deny { allowed, write } => {
                        let w = write as usize;
                        if sqid >= 1 && usize::from(sqid) <= nq {
                            qcnt[usize::from(sqid) - 1][6 + w] += 1;
                        }
                        if sqe.nsid >= 1 && sqe.nsid as usize <= nn {
                            ncnt[sqe.nsid as usize - 1][6 + w] += 1;
                        }
                        out.denied += 1;
                        denials.push_back((sqid, sqe.cid, allowed));
                    }
                }
                current = None;
            }
        }
        prev_mv = mv;
        prev_mr = mr;
        prev_dst = dst;
        sim.step();
        t += 1;

        let drained = current.is_none()
            && weight_write.is_none()
            && traffic.weight_writes.is_empty()
            && traffic.lists.iter().all(|(_, l)| l.is_empty())
            && traffic.timed.iter().all(|(_, l)| l.is_empty())
            && (traffic.gens.is_empty() || t >= traffic.feed_end)
            && fifo.iter().all(|f| f.is_empty())
            && denials.is_empty()
            && !m_valid.is_high();
        if drained {
            break;
        }
        if t >= limit {
            let left: usize = fifo.iter().map(|f| f.len()).sum();
            return Err(ctx(
                t,
                format!(
                    "hung: {left} admitted commands still buffered, {} denials not completed (channels {:?})",
                    denials.len(),
                    timing.channels
                ),
            ));
        }
    }
    out.cycles = t;
    tracing::debug!(
        "qos run: {} cycles, {} released, {} denied, {} free cycles, channel full cycles {:?}",
        t,
        out.releases.len(),
        out.denied,
        out.free_cycles,
        out.channel_full
    );
    sim.run(4);

    // Counters, read through AXI4-Lite (they wrap at their width).
    let width_mask = u64::from(qos_csr::NS1_ADM_RD_VALUE_MASK);
    let mut bus = axil.mmio(&mut sim);
    for (q, counts) in qcnt.iter().enumerate() {
        for (k, c) in QUEUE_COUNTERS.iter().enumerate() {
            let got = u64::from(bus.read32(qreg(q, c)));
            let want = counts[k] & width_mask;
            if got != want {
                return Err(format!(
                    "counter {c} of SQ {} reads {got}, the model counts {want}",
                    q + 1
                ));
            }
        }
    }
    for (n, counts) in ncnt.iter().enumerate() {
        for (k, c) in COUNTERS.iter().enumerate() {
            let name = format!("ns{}_{c}", n + 1);
            let got = u64::from(bus.read32(reg(&name)));
            // Cycles waiting for budget are a range: between those that surely waited and
            // those that may have (the budget bit's lag); the rest are exact.
            let (lo, hi) = if k == 4 || k == 5 {
                (counts[k], nwait_hi[n][k - 4])
            } else {
                (counts[k], counts[k])
            };
            let fits = if hi <= width_mask {
                (lo..=hi).contains(&got)
            } else {
                hi - lo > width_mask || (lo & width_mask..=hi & width_mask).contains(&got)
            };
            if !fits {
                let want = if lo == hi {
                    format!("{}", lo & width_mask)
                } else {
                    format!("{lo} to {hi}")
                };
                return Err(format!(
                    "counter {name} reads {got}, the model counts {want}"
                ));
            }
        }
    }
    if let Some(v) = axil.master().violations.first() {
        return Err(format!("AXI4-Lite protocol: {v}"));
    }

    // Every window keeps each bucket's bound.
    let window = |what: String, frac: u32, limit: Limit, ev: Vec<(u64, u64)>| {
        let (excess, a, b) = worst_window(frac, limit, &ev);
        if excess > 0 {
            return Err(format!(
                "{what}: cycles {a}..={b} admitted {} tokens over rate * T + burst + largest command (rate {:#x}, burst {})",
                excess as f64 / (1u64 << frac) as f64,
                limit.rate,
                limit.burst
            ));
        }
        Ok(())
    };
    for q in 0..nq {
        let rel = out.releases.iter().filter(|r| r.queue == q);
        window(
            format!("SQ {} bandwidth", q + 1),
            BW_FRAC,
            cfg.queues[q].bw,
            rel.clone().map(|r| (r.cycle, r.cost)).collect(),
        )?;
        window(
            format!("SQ {} IOPS", q + 1),
            IOPS_FRAC,
            cfg.queues[q].iops,
            rel.map(|r| (r.cycle, 1)).collect(),
        )?;
    }
    // A namespace bucket may owe two commands (charged the cycle after each decision).
    let window_ns = |what: String, frac: u32, limit: Limit, ev: Vec<(u64, u64)>| {
        let (excess, a, b) = worst_window_debt(frac, limit, &ev, 2);
        if excess > 0 {
            return Err(format!(
                "{what}: cycles {a}..={b} admitted {} tokens over rate * T + burst + 2 largest commands (rate {:#x}, burst {})",
                excess as f64 / (1u64 << frac) as f64,
                limit.rate,
                limit.burst
            ));
        }
        Ok(())
    };
    for n in 0..nn {
        let rel = out.releases.iter().filter(|r| r.ns == n);
        window_ns(
            format!("namespace {} bandwidth", n + 1),
            BW_FRAC,
            cfg.namespaces[n].bw,
            rel.clone().map(|r| (r.cycle, r.cost)).collect(),
        )?;
        window_ns(
            format!("namespace {} IOPS", n + 1),
            IOPS_FRAC,
            cfg.namespaces[n].iops,
            rel.map(|r| (r.cycle, 1)).collect(),
        )?;
    }
    Ok(out)
}

/// The front end: the next command to present in cycle `t`, for a queue with space (or an SQ id
/// the block does not serve).
fn next_command(
    traffic: &mut Traffic,
    space: u64,
    t: u64,
    in_block: &[usize],
    nq: usize,
    rng: &mut Rng,
) -> Option<(u16, [u8; 64])> {
    let ok = |sqid: u16| sqid == 0 || usize::from(sqid) > nq || (space >> (sqid - 1)) & 1 == 1;
    let load = |sqid: u16| {
        if sqid == 0 || usize::from(sqid) > nq {
            0
        } else {
            in_block[usize::from(sqid) - 1]
        }
    };
    // Candidates: (kind: 0 list, 1 generator, 2 timed; index, sqid).
    let mut cands: Vec<(u8, usize, u16)> = Vec::new();
    for (i, (sqid, l)) in traffic.lists.iter().enumerate() {
        if !l.is_empty() && ok(*sqid) {
            cands.push((0, i, *sqid));
        }
    }
    for (i, (sqid, l)) in traffic.timed.iter().enumerate() {
        if l.front().is_some_and(|c| c.0 <= t) && ok(*sqid) {
            cands.push((2, i, *sqid));
        }
    }
    if t < traffic.feed_end {
        for (i, (sqid, _)) in traffic.gens.iter().enumerate() {
            if ok(*sqid) {
                cands.push((1, i, *sqid));
            }
        }
    }
    if cands.is_empty() {
        return None;
    }
    let pick = if traffic.least_in_flight {
        let least = cands.iter().map(|c| load(c.2)).min().unwrap();
        let best: Vec<_> = cands.iter().filter(|c| load(c.2) == least).collect();
        *best[rng.below(best.len() as u64) as usize]
    } else {
        cands[rng.below(cands.len() as u64) as usize]
    };
    let fill = traffic.fill;
    let sqe = match pick.0 {
        0 => traffic.lists[pick.1].1.pop_front().unwrap(),
        1 => (traffic.gens[pick.1].1)(rng),
        _ => traffic.timed[pick.1].1.pop_front().unwrap().1,
    };
    Some((pick.2, sqe.bytes(&fill)))
}
