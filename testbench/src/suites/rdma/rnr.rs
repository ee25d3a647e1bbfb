//! Properties `rdma_rnr` and `rdma_rnr_long`: the RoCEv2 engine's RNR waits, exactly, over the
//! whole RNR NAK timer table (InfiniBand Architecture Specification vol. 1, table "RNR NAK Timer
//! Field Encodings"; the engine's contract in hdl-gen/src/roce/mod.rs, "# RNR").
//!
//! One command on one QP; the target refuses its capsule with RNR NAKs of drawn timer codes, one
//! after the other (each time the capsule comes again it is refused with the next code), then
//! takes it. `rdma_rnr` (suite `rdma`) draws two to four codes among 1 to 19 (up to 7.68 ms)
//! and a tick (`cc_tick`, `P` cycles) as long as the case's budget of cycles allows: up to 64
//! when the codes are short, down to 2 (the shortest tick) for the longer ones.
//! `rdma_rnr_long` (suite `rdma-long`: a case runs about 4.5 million cycles) waits out the 13
//! longest, 20 to 31 and 0 (10.24 to 655.36 ms), every one in each case, in a drawn order, at
//! a tick of 2 cycles. The target's frames go to the engine at once, but each RNR NAK's last
//! beat is handed over in a cycle of the same phase of `P` as the first one's, and `qpN_rnr` is
//! read back to back all along.
//!
//! Checked, for each RNR NAK of code `c` (`T` µs, [`IB_RNR_US`]) whose last beat went in at
//! cycle `d`, and the capsule's next first beat at cycle `r`:
//! - IBA: `r - d >= T * P` (the requester waits at least the timer);
//! - the contract: `waiting` rose after `d` and stayed high more than `T * P` and at most
//!   `(T + 1) * P` cycles (as far as the reads can tell: each one samples somewhere between its
//!   request and its response), and fell before `r`;
//! - exactly: `r - d - T * P` is the same for every RNR NAK of the case. The NAKs come at one
//!   phase of the tick, so each wait is its timer in whole ticks plus the same part of a tick,
//!   and the engine, doing nothing else, takes the same cycles from the NAK's last beat to
//!   taking it and from the wait's end to the capsule's first beat. A timer one tick long or
//!   short moves its NAK's value by `P`, whatever the tick.
//!
//! And the command completes once, with the target's status, `rx_nak` counts the RNR NAKs.

use super::engine::{confs, end_checks, program_qp, program_tos, reg, sqe_for, Cmd, Cmds, BLOCKS};
use crate::drivers::axi_mem::{AxiMemConfig, AxiMemSlave};
use crate::drivers::axil::{Axil, AxilConfig};
use crate::drivers::axis::{AxisSink, AxisSource};
use crate::models::roce::op;
use crate::models::roce_target::Target;
use crate::pcap::Pcap;
use crate::prop::Property;
use crate::rtl::regs::roce_csr;
use crate::rtl::RoceTop as Top;
use crate::sim::Sim;
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use std::path::Path;

/// The RNR NAK timer field (AETH syndrome bits 4:0) in µs: IBA vol. 1, "RNR NAK Timer Field
/// Encodings" (0 = 655.36 ms, 1 = 0.01 ms, 2 = 0.02 ms, ..., 31 = 491.52 ms).
pub const IB_RNR_US: [u64; 32] = [
    655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920, 2560, 3840,
    5120, 7680, 10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920, 122_880, 163_840, 245_760,
    327_680, 491_520,
];

/// Cycles of waiting an `rdma_rnr` case may spend: the tick is cut to fit (never below 2
/// cycles, so codes of 2,560 µs and more take more).
const BUDGET: u64 = 6_000;
/// The codes `rdma_rnr_long` waits out: 10.24 ms and longer.
const LONG: [u8; 13] = [20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 0];

/// The stimulus.
#[derive(Clone, Debug)]
pub struct Input {
    /// Timer fields of the RNR NAKs, in order.
    pub codes: Vec<u8>,
    /// The longest tick wanted, cycles (2 to 64; cut to fit [`BUDGET`]).
    pub tick: u16,
    /// The tick is cut to fit [`BUDGET`] (`rdma_rnr`; `rdma_rnr_long` takes `tick` as it is).
    pub fit: bool,
    /// The QP.
    pub qp: u8,
    /// The command: 0 Flush, 1 Write Zeroes (`engine::sqe_for`).
    pub kind: u8,
    pub slba: u64,
    pub nlb: u16,
    pub psn: [u32; 4],
    /// Cycles between the first RNR NAK's arrival and handing it over.
    pub gap: u8,
    pub seed: u64,
}

impl Input {
    /// The tick `P` of the case, cycles.
    fn period(&self) -> u64 {
        let ticks: u64 = self
            .codes
            .iter()
            .map(|&c| IB_RNR_US[usize::from(c & 31)] + 1)
            .sum();
        let p = u64::from(self.tick);
        if self.fit {
            p.min(BUDGET / ticks).max(2)
        } else {
            p.max(2)
        }
    }
}

fn is_rnr_nak(f: &[u8]) -> bool {
    f.len() > 54 && f[42] == op::ACKNOWLEDGE && f[54] >> 5 == 1
}

/// One read of `qpN_rnr`: the cycles it was requested and answered, and `waiting` (sampled
/// somewhere between the two).
#[derive(Clone, Copy, Debug)]
struct Sample {
    issued: u64,
    done: u64,
    waiting: bool,
}

fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
    let mut sim = Sim::<Top>::maybe_waves(waves);
    let nq = sim.signal("sq_space_o").width() as usize;
    let q = usize::from(input.qp) % nq;
    let mtu = 1024.min(crate::rtl::config::ROCE_MTU as usize);
    let mtu_code = mtu.trailing_zeros() - 7;
    let confs = confs(&input.psn, nq, &vec![mtu; nq]);
    let mut target = Target::new(&confs, BLOCKS as usize, input.seed);
    target.rnr_script[q] = input.codes.iter().map(|c| c & 31).collect();
    let p = input.period();
    let src = sim.add(AxisSource::new(&sim, "s_axis", input.seed ^ 1, 0));
    let sink = sim.add(AxisSink::new(&sim, "m_axis", input.seed ^ 2, 0));
    sink.borrow_mut().gapless = true;
    let _mem = sim.add(AxiMemSlave::new(
        &sim,
        "m_axi",
        AxiMemConfig {
            seed: input.seed ^ 7,
            ..AxiMemConfig::default()
        },
    ));
    let cmds = sim.add(Cmds::new(&sim, input.seed ^ 3, (0, 0)));
    let axil = Axil::attach(
        &mut sim,
        "s_axil",
        AxilConfig {
            seed: input.seed ^ 4,
            ..AxilConfig::default()
        },
    );
    sim.reset(3);
    {
        let mut bus = axil.mmio(&mut sim);
        bus.write32(roce_csr::CC_TICK, p as u32);
        // Rates stay at the line rate: nothing but the RNR waits holds a capsule back.
        bus.write32(roce_csr::DCQCN_ENABLE, 0);
        target.host_tos = program_tos(&mut bus, input.seed);
        for (i, c) in confs.iter().enumerate() {
            // No retransmission by timeout in the run (the timer is held while a QP waits).
            program_qp(&mut bus, i, c, mtu_code, 7 << 24 | 0xff_ffff);
            bus.write32(reg(&format!("qp{i}_rnr")), 7);
            bus.write32(reg(&format!("qp{i}_ctrl")), 1);
        }
    }
    // The new tick period starts when the one running (the reset's 250 cycles) ends.
    sim.run(300);
    let sqid = q as u16 + 1;
    let cid = 0x300;
    let sqe = sqe_for(
        &Cmd {
            sq: sqid as u8,
            kind: input.kind,
            slba: input.slba,
            nlb: input.nlb,
        },
        cid,
    );
    cmds.borrow_mut().queue.push_back((sqid, sqe));

    let rnr_addr = u64::from(reg(&format!("qp{q}_rnr")));
    let bytes = u64::from(axil.master().bytes());
    let shift = 8 * (rnr_addr & (bytes - 1) & !3);
    let mut samples: Vec<Sample> = Vec::new();
    let mut poll: Option<u64> = None;
    // Target frames waiting to be handed over: (frame, the cycle to hand it over from).
    let mut link: Vec<(Vec<u8>, u64)> = Vec::new();
    // Per frame handed over (in `src.sent` order), whether it is an RNR NAK.
    let mut handed: Vec<bool> = Vec::new();
    // The first RNR NAK's hand-over cycle: the later ones keep its phase of the tick.
    let mut anchor: Option<u64> = None;
    let mut seen_tx = 0usize;
    let mut pcap = Pcap::new();
    let total: u64 = input
        .codes
        .iter()
        .map(|&c| (IB_RNR_US[usize::from(c & 31)] + 1) * p)
        .sum();
    let limit = sim.cycle() + total + 100_000;
    let mut quiet = 0u64;
    loop {
        sim.step();
        target.now = sim.cycle();
        // `qpN_rnr`, read back to back.
        {
            let mut m = axil.master();
            if let Some(t) = poll {
                if let Some(c) = m.take(t) {
                    samples.push(Sample {
                        issued: c.issued,
                        done: c.done,
                        waiting: (c.data >> shift) as u32 & 1 << 8 != 0,
                    });
                    poll = None;
                }
            }
            if poll.is_none() {
                poll = Some(m.queue_read(rnr_addr & !(bytes - 1)));
            }
        }
        let new: Vec<Vec<u8>> = sink.borrow().frames[seen_tx..]
            .iter()
            .map(|f| f.data.clone())
            .collect();
        seen_tx += new.len();
        let moved = !new.is_empty();
        for f in new {
            pcap.ethernet(&f);
            target.receive(&f);
        }
        while let Some(f) = target.out.pop_front() {
            pcap.ethernet(&f);
            let now = sim.cycle();
            let due = if is_rnr_nak(&f) {
                match anchor {
                    None => now + u64::from(input.gap),
                    Some(a) => now + (p - (now - a) % p) % p,
                }
            } else {
                now
            };
            link.push((f, due));
        }
        if !link.is_empty() && src.borrow().pending() == 0 {
            let now = sim.cycle();
            if now >= link[0].1
                && anchor.is_none_or(|a| !is_rnr_nak(&link[0].0) || (now - a).is_multiple_of(p))
            {
                let f = link.remove(0).0;
                let nak = is_rnr_nak(&f);
                if nak {
                    anchor.get_or_insert(now);
                }
                handed.push(nak);
                src.borrow_mut().send(f);
            }
        }
        let busy =
            !link.is_empty() || src.borrow().pending() > 0 || !sink.borrow().partial().is_empty();
        quiet = if moved || busy { 0 } else { quiet + 1 };
        if !cmds.borrow().cpls.is_empty() && target.unacked() == 0 && quiet > 200 {
            break;
        }
        if sim.cycle() > limit {
            return Err(format!(
                "hang: the command did not complete by cycle {limit} (codes {:?}, tick {p} cycles; {} RNR NAKs sent)",
                input.codes,
                target.rnr_sent.len()
            ));
        }
    }
    end_checks(&pcap, &cmds.borrow(), &sink.borrow(), &target)?;
    let what = format!("codes {:?}, tick {p} cycles, QP {q}", input.codes);
    let naks: Vec<u64> = src
        .borrow()
        .sent
        .iter()
        .zip(&handed)
        .filter(|(_, &n)| n)
        .map(|(s, _)| s.0)
        .collect();
    if naks.len() != input.codes.len() {
        return Err(format!(
            "{} RNR NAKs reached the engine, the target had {} to send ({what})",
            naks.len(),
            input.codes.len()
        ));
    }
    // The capsule's transmissions: its first beats, in order.
    let psn = confs[q].host_psn;
    let sends: Vec<u64> = sink
        .borrow()
        .frames
        .iter()
        .filter(|f| {
            f.data.len() > 54
                && f.data[42] == op::SEND_ONLY
                && u32::from_be_bytes([0, f.data[47], f.data[48], f.data[49]])
                    == confs[q].target_qpn
                && u32::from_be_bytes([0, f.data[51], f.data[52], f.data[53]]) == psn
        })
        .map(|f| f.first)
        .collect();
    if sends.len() != naks.len() + 1 {
        return Err(format!(
            "the capsule went out {} times for {} RNR NAKs ({what})",
            sends.len(),
            naks.len()
        ));
    }
    let mut offsets: Vec<(u8, u64, u64, i64)> = Vec::new();
    for (k, &d) in naks.iter().enumerate() {
        let code = input.codes[k] & 31;
        let t = IB_RNR_US[usize::from(code)] * p;
        let r = sends[k + 1];
        if !(d - naks[0]).is_multiple_of(p) {
            return Err(format!(
                "harness: RNR NAK {k} went in at cycle {d}, not at the first one's phase of the tick ({}, tick {p}): s_axis_tready fell?",
                naks[0]
            ));
        }
        // IBA: the capsule waits at least the timer.
        if r < d + t {
            return Err(format!(
                "RNR NAK {k} (code {code}: {} µs, {t} cycles at {p} a µs) went in at cycle {d}; the capsule went out again at {r}, {} cycles later ({what})",
                IB_RNR_US[usize::from(code)],
                r - d
            ));
        }
        // The contract: `waiting` from after the NAK, more than T and at most T + 1 ticks.
        let Some(i1) = samples.iter().position(|s| s.issued > d && s.waiting) else {
            return Err(format!(
                "RNR NAK {k} (code {code}) went in at cycle {d}; qp{q}_rnr.waiting never read 1 after it ({what})"
            ));
        };
        let rise_hi = samples[i1].done;
        let rise_lo = samples[..i1]
            .iter()
            .rev()
            .find(|s| !s.waiting)
            .map_or(d + 1, |s| (s.issued + 1).max(d + 1));
        let i0 = i1
            + samples[i1..]
                .iter()
                .position(|s| !s.waiting)
                .ok_or_else(|| {
                    format!("qp{q}_rnr.waiting never fell after RNR NAK {k} ({what})")
                })?;
        let (fall_lo, fall_hi) = (samples[i0 - 1].issued + 1, samples[i0].done);
        let (lo, hi) = (fall_lo.saturating_sub(rise_hi), fall_hi - rise_lo);
        if hi <= t || lo > t + p {
            return Err(format!(
                "RNR NAK {k} (code {code}: {} µs) went in at cycle {d}: qp{q}_rnr.waiting rose in cycles {rise_lo}..={rise_hi} and fell in {fall_lo}..={fall_hi}, high {lo} to {hi} cycles; the contract says more than {t} and at most {} ({what})",
                IB_RNR_US[usize::from(code)],
                t + p
            ));
        }
        if samples[i0 - 1].issued >= r {
            return Err(format!(
                "RNR NAK {k} (code {code}): the capsule went out again at cycle {r} while qp{q}_rnr.waiting read 1 ({what})"
            ));
        }
        offsets.push((code, d, r, r as i64 - d as i64 - t as i64));
    }
    // Exactly: every NAK's wait is its timer plus the same part of a tick.
    if offsets.iter().any(|o| o.3 != offsets[0].3) {
        return Err(format!(
            "the RNR waits are not their timers plus one same part of a tick: (code, NAK in, capsule out, out - in - T * {p}) {offsets:?} ({what})"
        ));
    }
    // The command: one completion, the target's.
    let cpls = cmds.borrow().cpls.clone();
    let ex = target.executed.iter().find(|e| e.qp == q && e.cid == cid);
    match (cpls.as_slice(), ex) {
        ([(s, c, st, dw0)], Some(e))
            if *s == sqid && *c == cid && (*st, *dw0) == (e.status, e.dw0) => {}
        _ => {
            return Err(format!(
                "completions {cpls:x?}, the target executed {ex:?} ({what})"
            ))
        }
    }
    let mut bus = axil.mmio(&mut sim);
    let n = bus.read32(roce_csr::RX_NAK);
    if n as usize != naks.len() {
        return Err(format!(
            "rx_nak is {n}, {} RNR NAKs went in ({what})",
            naks.len()
        ));
    }
    tracing::debug!(
        "rdma_rnr: {what}, {} cycles, waits (code, in, out, out - in - T * P) {offsets:?}",
        sim.cycle()
    );
    Ok(())
}

/// Everything of an [`Input`] but the codes and the tick.
fn rest() -> impl Strategy<Value = (u8, u8, u64, u16, [u32; 4], u8, u64)> {
    let psn = prop_oneof![Just(0u32), 0xff_fff0u32..0x100_0000, any::<u32>()];
    (
        (any::<u8>(), 0u8..2, 0u64..80, 0u16..8),
        [psn.clone(), psn.clone(), psn.clone(), psn],
        (0u8..64, any::<u64>()),
    )
        .prop_map(|((qp, kind, slba, nlb), psn, (gap, seed))| (qp, kind, slba, nlb, psn, gap, seed))
}

fn input(codes: Vec<u8>, tick: u16, fit: bool, r: (u8, u8, u64, u16, [u32; 4], u8, u64)) -> Input {
    let (qp, kind, slba, nlb, psn, gap, seed) = r;
    Input {
        codes,
        tick,
        fit,
        qp,
        kind,
        slba,
        nlb,
        psn,
        gap,
        seed,
    }
}

/// `rdma_rnr`: codes 1 to 19, the tick fitted to the budget.
pub struct RdmaRnrProp;

impl Property for RdmaRnrProp {
    type Input = Input;
    const NAME: &'static str = "rdma_rnr";
    fn strategy() -> BoxedStrategy<Input> {
        // Mostly up to 0.96 ms; 1.28 to 7.68 ms (2,560 to 15,360 cycles at the shortest
        // tick) less often.
        let code = prop_oneof![3 => 1u8..14, 1 => 14u8..20];
        (proptest::collection::vec(code, 2..5), 2u16..65, rest())
            .prop_map(|(codes, tick, r)| input(codes, tick, true, r))
            .boxed()
    }
    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        run(input, waves)
    }
}

/// `rdma_rnr_long`: the 13 longest codes, each once, at a tick of 2 cycles.
pub struct RdmaRnrLongProp;

impl Property for RdmaRnrLongProp {
    type Input = Input;
    const NAME: &'static str = "rdma_rnr_long";
    fn strategy() -> BoxedStrategy<Input> {
        (Just(LONG.to_vec()).prop_shuffle(), rest())
            .prop_map(|(codes, r)| input(codes, 2, false, r))
            .boxed()
    }
    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        run(input, waves)
    }
}
