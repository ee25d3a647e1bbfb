//! Property: the NVMe front end as the host sees it, against the golden model.
//!
//! A random host program: bring-up (admin queue of random depth, CC.EN, arbitration and
//! coalescing features, per-vector coalescing disable), I/O queue pairs of random depths,
//! priorities and vectors created through admin commands that firmware (a Rust model on the
//! vendor CSRs) executes, then random operations: submissions of one or many SQEs on any
//! queue (one doorbell for the batch, or one per entry; some SQEs with a reserved field set,
//! some with an opcode the hardware does not carry: Verify, which firmware executes against
//! its namespace, Compare and unknown opcodes, which it refuses), the host consuming
//! completions late, waits, faulty doorbells (a queue that does not exist, a value past the
//! queue), queue deletion and re-creation at a new depth, a fallback command firmware holds
//! with offloaded commands behind it, and CC.EN reset in the middle of traffic followed by a
//! new bring-up. Random AXI
//! latency and backpressure, `io_cmd` / `admin_cmd` / `irq` backpressure, backend and firmware
//! delay, and `sq_space_i` bits dropping at random. The host gives CIDs counting up per SQ,
//! or (half the cases) the lowest free one, as a tag allocator does, so CIDs come back soon.
//!
//! Checks: every CQE the host reads (by its phase) names an outstanding command of an SQ bound
//! to that CQ, with an allowed status, the backend's DW0 and a plausible SQHD, so each command
//! completes exactly once with its CID and the right phase; at the end every command has
//! completed and every doorbell fault has been reported by an AER completion; right after each
//! faulty doorbell (values past a queue include exactly its size, and values that alias the
//! CQ's own head in the RAM's index bits) `event_qid` names that doorbell and `db_faults`
//! counts it. A poisoned SQE (one failing R beat, `set_read_beat_error_fn`) must complete with
//! 04h and leave CSTS.CFS clear when the failing beat is not the CDW0 beat, and must set
//! CSTS.CFS without completing when it is (mod.rs). Every SQE on
//! `io_cmd` is one the host submitted, byte for byte. Offload and fallback, per command from
//! its doorbell to its CQE (or the controller reset that dropped it): a command the model
//! routes to the hardware path goes out on `io_cmd` exactly once and never to firmware; a
//! fallback command reaches firmware on `admin_cmd` exactly once with its SQE intact and its
//! SQ id, and never `io_cmd`, before its CQE, which carries firmware's status and DW0
//! (`models::nvme::fallback_outcome`) on its SQ's CQ; a command the front end completes itself
//! reaches neither; `cnt_offload` and `cnt_fallback` count exactly the commands handed to
//! each path; offloaded commands behind a fallback command firmware holds complete while it
//! holds it (a fallback command blocks the hardware path no longer than `admin_cmd` is not
//! ready). In the AXI log: reads only inside SQ
//! rings, in ring order, of entries the host had published by a doorbell; writes only inside
//! CQ rings, in ring order, never more than size - 1 entries ahead of the host's released head
//! (no overrun). Every interrupt follows a completion on its vector, there are no more
//! interrupts than completions, and after the last controller reset every completion on a
//! vector with interrupts is followed by an interrupt. The counters (doorbell faults,
//! interrupts, SQEs fetched, CQEs posted, per-queue fetched and completed) match. The
//! latency histograms hold exactly what `models::nvme_lat` computes from the host's doorbells
//! (BAR0 acceptance cycles), its submissions and every CQE write (the cycle its AW valid rose,
//! its bytes, its write response), bin by bin, and read 0 after `lat_ctrl.clear`. No AXI,
//! AXI4-Lite or stream protocol violation.

use super::env::{Env, Sqe, Timing};
use crate::drivers::{Dir, Resp};
use crate::models::nvme::{io_route, status, Cqe, IoRoute, VERIFY};
use crate::models::nvme_lat::{direction, histograms, CqeWrite, Doorbell, SqLife};
use crate::prop::Property;
use crate::rng::Rng;
use crate::rtl::regs::nvme_csr as csr;
use crate::sim::Dut;
use proptest::prelude::*;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::path::Path;
use std::rc::Rc;

/// One queue pair: SQ and CQ depth, priority class, vector, interrupts enabled.
#[derive(Debug, Clone)]
pub struct Pair {
    /// SQ depth.
    pub sq: u16,
    /// CQ depth.
    pub cq: u16,
    /// Priority class (0 urgent .. 3 low).
    pub prio: u8,
    /// Interrupt vector (modulo the vectors there are).
    pub vector: u8,
    /// Interrupts enabled.
    pub ien: bool,
}

/// A host operation.
#[derive(Debug, Clone)]
pub enum Op {
    /// `n` SQEs on pair `q`, one doorbell for all or one each; `bad` percent of them faulty,
    /// `fb` percent of them fallback commands (Verify, Compare, other opcodes the hardware
    /// does not carry).
    Submit {
        /// Pair index.
        q: u8,
        /// Entries.
        n: u8,
        /// One doorbell for the batch.
        batch: bool,
        /// Percent of faulty SQEs.
        bad: u8,
        /// Percent of fallback SQEs.
        fb: u8,
    },
    /// Consume every CQ.
    Consume,
    /// Let cycles pass.
    Wait(u16),
    /// A faulty doorbell: 0 SQ of a queue that does not exist, 1 SQ value past the size, 2 CQ
    /// value past the size, 3 CQ that does not exist.
    BadDoorbell {
        /// Kind.
        kind: u8,
        /// Pair index.
        q: u8,
        /// Extra value.
        v: u16,
    },
    /// CC.EN 1 -> 0 in the middle of traffic, then a new bring-up.
    Reset,
    /// One SQE on pair `q` one of whose R beats returns SLVERR (the others are good): when
    /// the beat holding CDW0 failed the controller must go fatal (CSTS.CFS, the command never
    /// completes) and the host resets it; when only a later beat failed, the command must
    /// complete with 04h Data Transfer Error (SCT 0) and CSTS.CFS must stay clear.
    Poison {
        /// Pair index.
        q: u8,
        /// Which beat of the SQE fails (modulo the SQE's beats; 0 = the CDW0 beat).
        beat: u8,
    },
    /// Firmware holds every fallback answer; one fallback SQE then `n` offloaded ones on pair
    /// `q` under one doorbell: the offloaded commands must complete while firmware still
    /// holds the fallback command (it blocks them no longer than `admin_cmd` is not ready);
    /// then firmware answers.
    Held {
        /// Pair index.
        q: u8,
        /// Offloaded SQEs behind the fallback one.
        n: u8,
    },
    /// Delete pair `q` and create it again with new depths.
    Recreate {
        /// Pair index.
        q: u8,
        /// New SQ depth.
        sq: u16,
        /// New CQ depth.
        cq: u16,
    },
}

/// Generated stimulus.
#[derive(Debug, Clone)]
pub struct Input {
    admin: (u16, u16),
    pairs: Vec<Pair>,
    wrr: bool,
    arb: u32,
    coalesce: (u8, u8),
    cd: u16,
    ops: Vec<Op>,
    timing: Timing,
    /// Firmware's namespace 1 (blocks) and its answer delay for fallback commands (cycles).
    fallback: (u64, u32),
    /// The host gives each command the lowest free CID of its SQ (else the next one).
    lowest_cid: bool,
    seed: u64,
}

fn depth() -> impl Strategy<Value = u16> {
    prop_oneof![6 => 2u16..12, 3 => 12u16..70, 1 => 70u16..300]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => (
            any::<u8>(),
            1u8..40,
            any::<bool>(),
            prop_oneof![3 => Just(0u8), 1 => 1u8..40],
            prop_oneof![2 => Just(0u8), 2 => 1u8..50, 1 => Just(100u8)],
        )
            .prop_map(|(q, n, batch, bad, fb)| Op::Submit { q, n, batch, bad, fb }),
        3 => Just(Op::Consume),
        2 => (1u16..800).prop_map(Op::Wait),
        2 => (0u8..4, any::<u8>(), any::<u16>()).prop_map(|(kind, q, v)| Op::BadDoorbell { kind, q, v }),
        1 => Just(Op::Reset),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(q, beat)| Op::Poison { q, beat }),
        1 => (any::<u8>(), 1u8..20).prop_map(|(q, n)| Op::Held { q, n }),
        1 => (any::<u8>(), depth(), depth()).prop_map(|(q, sq, cq)| Op::Recreate { q, sq, cq }),
    ]
}

fn strategy() -> BoxedStrategy<Input> {
    (
        // Admin queues as AQA allows them, up to 4096 entries whatever CAP.MQES says (MQES
        // bounds only the I/O queues): mostly small, sometimes at the spec's limit.
        prop_oneof![
            8 => (3u16..20, 2u16..20),
            1 => (1000u16..=4096, 1000u16..=4096),
        ],
        prop::collection::vec(
            (depth(), depth(), 0u8..4, any::<u8>(), any::<bool>()).prop_map(
                |(sq, cq, prio, vector, ien)| Pair {
                    sq,
                    cq,
                    prio,
                    vector,
                    ien,
                },
            ),
            1..8,
        ),
        any::<bool>(),
        any::<u32>(),
        (prop_oneof![Just(0u8), 0u8..10], 0u8..4),
        any::<u16>(),
        prop::collection::vec(op(), 1..48),
        (
            prop_oneof![Just((1u32, 4u32)), Just((20, 40)), Just((1, 60))],
            (0u8..40, 0u8..40, 0u8..40, 0u8..40, 0u8..40),
            (0u8..50, 0u8..50),
            0u32..40,
            prop_oneof![2 => Just(0u8), 1 => 0u8..60],
            0u8..50,
            0u8..30,
        ),
        (
            prop_oneof![Just(1u64), 2u64..64, Just(1 << 20)],
            prop_oneof![Just(0u32), 1u32..400],
            any::<bool>(),
            any::<u64>(),
        ),
    )
        .prop_map(
            |(admin, pairs, wrr, arb, coalesce, cd, ops, t, (ns, delay, lowest_cid, seed))| Input {
                admin,
                pairs,
                wrr,
                arb,
                coalesce,
                cd,
                ops,
                timing: Timing {
                    read_latency: t.0,
                    stalls: t.1,
                    cmd_stall: t.2,
                    backend_delay: t.3,
                    space_low: t.4,
                    irq_stall: t.5,
                    axil: t.6,
                },
                fallback: (ns, delay),
                lowest_cid,
                seed,
            },
        )
        .boxed()
}

fn dw(sqe: &mut Sqe, i: usize, v: u32) {
    sqe[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
}

fn admin_sqe(opc: u8, cid: u16, cdw10: u32, cdw11: u32, prp1: u64) -> Sqe {
    let mut s = [0u8; 64];
    dw(&mut s, 0, u32::from(opc) | u32::from(cid) << 16);
    s[24..32].copy_from_slice(&prp1.to_le_bytes());
    dw(&mut s, 10, cdw10);
    dw(&mut s, 11, cdw11);
    s
}

/// A CID not outstanding on `sqid`.
pub fn next_cid<T: Dut>(env: &mut Env<T>, sqid: u16) -> u16 {
    if env.host.lowest_cid {
        // As a tag allocator (Linux's blk-mq tags): the lowest CID not outstanding.
        let q = env.host.model.sqs.get(&sqid);
        return (0..=u16::MAX)
            .find(|c| q.is_none_or(|q| !q.outstanding.contains_key(c)))
            .expect("a free CID");
    }
    loop {
        let c = env.host.next_cid.entry(sqid).or_insert(0);
        *c = c.wrapping_add(1);
        let cid = *c;
        let busy = env
            .host
            .model
            .sqs
            .get(&sqid)
            .is_some_and(|q| q.outstanding.contains_key(&cid));
        if !busy {
            return cid;
        }
    }
}

/// Submits one admin command and runs until it completes (consuming every CQ meanwhile).
pub fn admin<T: Dut>(
    env: &mut Env<T>,
    opc: u8,
    cdw10: u32,
    cdw11: u32,
    prp1: u64,
) -> Result<(), String> {
    let cid = next_cid(env, 0);
    let sqe = admin_sqe(opc, cid, cdw10, cdw11, prp1);
    env.submit(0, &[sqe], true)?;
    let mut n = 0u64;
    while env
        .host
        .model
        .sqs
        .get(&0)
        .is_some_and(|q| q.outstanding.contains_key(&cid))
    {
        env.consume_all()?;
        env.step()?;
        n += 1;
        if n > 300_000 {
            return Err(format!(
                "admin command {opc:#04x} (CID {cid}) never completed"
            ));
        }
    }
    Ok(())
}

/// Creates I/O queue pair `qid` through admin commands.
pub fn create_pair<T: Dut>(
    env: &mut Env<T>,
    qid: u16,
    p: &Pair,
    vectors: u32,
) -> Result<(), String> {
    let max = env.host.model.max_entries;
    let (sq, cq) = (u32::from(p.sq).min(max), u32::from(p.cq).min(max));
    let vector = u16::from(p.vector) % vectors as u16;
    let cr = env.alloc_ring(qid, true, cq, p.ien.then_some(vector));
    let base = env.host.rings[cr].range.start;
    admin(
        env,
        0x05,
        (cq - 1) << 16 | u32::from(qid),
        1 | u32::from(p.ien) << 1 | u32::from(vector) << 16,
        base,
    )?;
    if env.host.model.cqs.contains_key(&qid) {
        env.host.cq_ring.insert(qid, cr);
        env.host.cq_head.insert(qid, (0, true));
    }
    let sr = env.alloc_ring(qid, false, sq, None);
    let base = env.host.rings[sr].range.start;
    admin(
        env,
        0x01,
        (sq - 1) << 16 | u32::from(qid),
        1 | u32::from(p.prio) << 1 | u32::from(qid) << 16,
        base,
    )?;
    if env.host.model.sqs.contains_key(&qid) {
        env.host.rings[sr].urgent = p.prio == 0;
        env.host.sq_ring.insert(qid, sr);
        env.host.submitted.insert(qid, 0);
        env.host.completed.insert(qid, 0);
    }
    Ok(())
}

fn bring_up(env: &mut Env, input: &Input) -> Result<(), String> {
    env.enable(
        u32::from(input.admin.0),
        u32::from(input.admin.1),
        input.wrr,
    )?;
    admin(env, 0x09, 0x01, input.arb, 0)?;
    admin(
        env,
        0x09,
        0x08,
        u32::from(input.coalesce.0) | u32::from(input.coalesce.1) << 8,
        0,
    )?;
    for v in 0..env.vectors.min(16) {
        if input.cd >> v & 1 == 1 {
            admin(env, 0x09, 0x09, v | 1 << 16, 0)?;
        }
    }
    for (i, p) in input.pairs.iter().enumerate() {
        let qid = i as u16 + 1;
        if qid <= env.io_queues {
            let vectors = env.vectors;
            create_pair(env, qid, p, vectors)?;
        }
    }
    rearm_aer(env)
}

/// Keeps one Asynchronous Event Request outstanding, for doorbell faults.
pub fn rearm_aer<T: Dut>(env: &mut Env<T>) -> Result<(), String> {
    if env.host.model.sqs.contains_key(&0) && env.host.model.aers.is_empty() {
        let cid = next_cid(env, 0);
        let sqe = admin_sqe(0x0c, cid, 0, 0, 0);
        env.submit(0, &[sqe], true)?;
    }
    Ok(())
}

/// A random I/O SQE; `bad` percent chance of an unknown opcode or a reserved field.
/// `n` SQEs for SQ `qid` made by `make`, each given a CID that is neither outstanding nor used
/// by another SQE of the batch.
pub fn io_batch<T: Dut>(
    env: &mut Env<T>,
    qid: u16,
    n: u32,
    mut make: impl FnMut(u16) -> Sqe,
) -> Vec<Sqe> {
    let mut sqes = Vec::new();
    for _ in 0..n {
        let cid = next_cid(env, qid);
        sqes.push(make(cid));
        // Keep the CID reserved for the rest of the batch.
        outstanding(env, qid).insert(cid, vec![]);
    }
    for s in &sqes {
        outstanding(env, qid).remove(&u16::from_le_bytes([s[2], s[3]]));
    }
    sqes
}

fn outstanding<T: Dut>(
    env: &mut Env<T>,
    qid: u16,
) -> &mut BTreeMap<u16, crate::models::nvme::Allowed> {
    &mut env
        .host
        .model
        .sqs
        .get_mut(&qid)
        .expect("the SQ exists")
        .outstanding
}

/// An I/O SQE of an opcode the hardware carries, random fields elsewhere; a Read or Write moves
/// at most `max_blocks` (the controller's MDTS: a bound, near it, or small). With chance `bad`
/// (percent) it is spoiled: an opcode the hardware does not carry, a bad CDW0 field, or a Read
/// or Write just over or far over MDTS (when NLB can say so).
pub fn io_sqe(rng: &mut Rng, cid: u16, bad: u8, max_blocks: u32) -> Sqe {
    let mut s = [0u8; 64];
    for b in s.iter_mut().skip(4) {
        *b = rng.next_u64() as u8;
    }
    let opc = [0x00u8, 0x01, 0x02, 0x08, 0x09][rng.below(5) as usize];
    let psdt = [0u32, 1, 2][rng.below(3) as usize];
    let mut cdw0 = u32::from(opc) | psdt << 14 | u32::from(cid) << 16;
    let most = max_blocks.min(65536) as u64;
    let mut blocks = match rng.below(4) {
        0 => most,
        1 => 1,
        _ => 1 + rng.below(most),
    };
    if rng.chance(bad) {
        match rng.below(5) {
            0 => cdw0 = cdw0 & !0xff | [0x05u32, 0x7f, 0x80, 0x0a][rng.below(4) as usize],
            1 => cdw0 |= (1 + rng.below(3) as u32) << 8,
            2 => cdw0 |= 1 << (10 + rng.below(4)),
            3 if most < 65536 => {
                cdw0 = cdw0 & !0xff | [0x01u32, 0x02][rng.below(2) as usize];
                blocks = if rng.chance(50) {
                    most + 1
                } else {
                    most + 1 + rng.below(65536 - most)
                };
            }
            _ => cdw0 |= 3 << 14,
        }
    }
    dw(&mut s, 0, cdw0);
    s[48..50].copy_from_slice(&((blocks - 1) as u16).to_le_bytes());
    s
}

/// An I/O SQE the hardware does not carry, with clean CDW0 fields: mostly Verify of firmware's
/// namespace 1 (in range, crossing its end, or of another NSID), else Compare or an opcode
/// nobody implements.
pub fn fallback_sqe(rng: &mut Rng, cid: u16, ns_blocks: u64) -> Sqe {
    let mut s = [0u8; 64];
    for b in s.iter_mut().skip(4) {
        *b = rng.next_u64() as u8;
    }
    let opc = match rng.below(8) {
        0 => 0x05,
        1 => [0x7fu32, 0x80, 0x0a, 0x0d, 0x91][rng.below(5) as usize],
        _ => u32::from(VERIFY),
    };
    let psdt = [0u32, 1, 2][rng.below(3) as usize];
    dw(&mut s, 0, opc | psdt << 14 | u32::from(cid) << 16);
    if opc == u32::from(VERIFY) {
        let nsid = match rng.below(10) {
            0 => 2,
            1 => 0xffff_ffff,
            _ => 1,
        };
        let nlb = rng.below(16);
        let slba = match rng.below(4) {
            0 => ns_blocks.saturating_sub(nlb + 1) + rng.below(3),
            1 => u64::MAX - rng.below(4),
            _ => rng.below(ns_blocks),
        };
        dw(&mut s, 1, nsid);
        s[40..48].copy_from_slice(&slba.to_le_bytes());
        s[48..50].copy_from_slice(&(nlb as u16).to_le_bytes());
    }
    s
}

/// Which path a command took, by the events on its (SQ id, CID) from its doorbell to its CQE
/// or the controller reset that dropped it (see the module documentation). Returns the
/// commands handed to `io_cmd` and to firmware.
fn check_paths(env: &Env, poisoned: &BTreeSet<(u16, Sqe)>) -> Result<(u64, u64), String> {
    #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
    enum Ev {
        Sub,
        IoCmd,
        Fw,
        Cqe,
        Reset,
    }
    let mut evs: Vec<(u64, Ev, u16, u16, Option<Sqe>)> = Vec::new();
    let cid_of = |s: &Sqe| u16::from_le_bytes([s[2], s[3]]);
    for (c, q, sqe, _) in &env.host.subs {
        evs.push((*c, Ev::Sub, *q, cid_of(sqe), Some(*sqe)));
    }
    let be = env.backend().borrow();
    for (c, q, sqe) in &be.received {
        evs.push((*c, Ev::IoCmd, *q, cid_of(sqe), Some(*sqe)));
    }
    let fw = env.fallback_received();
    for (c, q, sqe) in &fw {
        evs.push((*c, Ev::Fw, *q, cid_of(sqe), Some(*sqe)));
    }
    for (c, _, e) in &env.host.cqes {
        evs.push((*c, Ev::Cqe, e.sqid, e.cid, None));
    }
    for &c in &env.host.resets {
        evs.push((c, Ev::Reset, 0, 0, None));
    }
    evs.sort_by_key(|e| (e.0, e.1));
    // An open command: its SQE, its path (None: nowhere), io_cmd and firmware receipts.
    type Open = (Sqe, Option<IoRoute>, u32, u32);
    let mut open: BTreeMap<(u16, u16), Open> = BTreeMap::new();
    let path = |q: u16, s: &Sqe| -> Option<IoRoute> {
        if q == 0 || poisoned.contains(&(q, *s)) {
            None
        } else {
            Some(io_route(s, env.host.model.max_blocks))
        }
    };
    for (c, ev, q, cid, sqe) in evs {
        let who = format!("SQ {q} CID {cid:#x}");
        match ev {
            Ev::Sub => {
                let s = sqe.expect("an SQE");
                open.insert((q, cid), (s, path(q, &s), 0, 0));
            }
            Ev::IoCmd | Ev::Fw => {
                let s = sqe.expect("an SQE");
                let port = if ev == Ev::IoCmd {
                    "io_cmd"
                } else {
                    "admin_cmd (fallback)"
                };
                let Some(o) = open.get_mut(&(q, cid)) else {
                    return Err(format!(
                        "{port} at cycle {c}: {who} is not an outstanding command (opcode {:#04x})",
                        s[0]
                    ));
                };
                if o.0 != s {
                    let i = (0..64).find(|&i| o.0[i] != s[i]).unwrap_or(0);
                    return Err(format!(
                        "{port} at cycle {c}: {who}'s SQE differs from the host's at byte {i}                          ({:#04x}, the host wrote {:#04x})",
                        s[i], o.0[i]
                    ));
                }
                let want = if ev == Ev::IoCmd {
                    IoRoute::Offload
                } else {
                    IoRoute::Fallback
                };
                if o.1 != Some(want) {
                    return Err(format!(
                        "{port} at cycle {c}: {who} (opcode {:#04x}) must not go there: its path is {:?}",
                        s[0], o.1
                    ));
                }
                let n = if ev == Ev::IoCmd { &mut o.2 } else { &mut o.3 };
                *n += 1;
                if *n > 1 {
                    return Err(format!(
                        "{port} at cycle {c}: {who} handed out a second time"
                    ));
                }
            }
            Ev::Cqe => {
                let Some((s, p, io, fw)) = open.remove(&(q, cid)) else {
                    continue;
                };
                let want = match p {
                    Some(IoRoute::Offload) => (1, 0),
                    Some(IoRoute::Fallback) => (0, 1),
                    _ => (0, 0),
                };
                if (io, fw) != want {
                    return Err(format!(
                        "{who} (opcode {:#04x}, path {p:?}) completed (CQE read at cycle {c}) after                          {io} io_cmd and {fw} firmware hand-offs, expected {want:?}",
                        s[0]
                    ));
                }
            }
            Ev::Reset => open.clear(),
        }
    }
    Ok((be.received.len() as u64, fw.len() as u64))
}

/// The latency histograms against `models::nvme_lat`: the SQs' lives from the host's
/// doorbells (acceptance cycles from the BAR0 probe) and submissions, every CQE write from the
/// AXI probe (the cycle its AW valid rose, its write response, its bytes). Then a clear
/// zeroes them.
fn check_latency(env: &mut Env, poisoned: &BTreeSet<(u16, Sqe)>) -> Result<u32, String> {
    let (hist, timed) = {
        let probe = env.probe().borrow();
        let n = probe.cqes.len();
        if probe.aw_rises.len() != n || probe.responses.len() != n {
            return Err(format!(
                "probe: {n} CQEs written, {} AW requests, {} write responses",
                probe.aw_rises.len(),
                probe.responses.len()
            ));
        }
        let writes: Vec<CqeWrite> = (0..n)
            .map(|k| {
                let e = Cqe::parse(&probe.cqes[k]);
                CqeWrite {
                    post: probe.aw_rises[k] - 1,
                    response: probe.responses[k],
                    ok: probe.responses_ok[k],
                    sqid: e.sqid,
                    cid: e.cid,
                }
            })
            .collect();
        let mut lives = Vec::new();
        for (ri, r) in env.host.rings.iter().enumerate() {
            if r.cq || r.qid == 0 || r.doorbells.is_empty() {
                continue;
            }
            let entries: Vec<(u16, usize)> = env
                .host
                .subs
                .iter()
                .filter(|s| s.3 == ri)
                .map(|s| {
                    let failed = poisoned.contains(&(s.1, s.2));
                    (
                        u16::from_le_bytes([s.2[2], s.2[3]]),
                        direction(s.2[0], failed),
                    )
                })
                .collect();
            let addr = env.doorbell_addr(r.qid, false);
            let mut doorbells = Vec::new();
            let mut before = 0;
            for &(queued, total) in &r.doorbells {
                let tail = (total % u64::from(r.size)) as u32;
                let Some(d) = probe
                    .doorbells
                    .iter()
                    .find(|d| d.0 >= queued && d.1 == addr && d.2 == tail)
                else {
                    return Err(format!(
                        "probe: SQ {} doorbell {tail} queued at cycle {queued} never accepted",
                        r.qid
                    ));
                };
                doorbells.push(Doorbell {
                    accepted: d.0,
                    before,
                });
                before = total;
            }
            let first = doorbells[0].accepted;
            let end = env
                .host
                .resets
                .iter()
                .copied()
                .find(|&c| c > first)
                .unwrap_or(u64::MAX);
            lives.push(SqLife {
                qid: r.qid,
                doorbells,
                entries,
                end,
            });
        }
        let hist = histograms(&lives, &writes);
        let timed: u32 = hist.iter().flatten().sum();
        (hist, timed)
    };
    let names = ["read", "write", "other"];
    for (dir, bins) in hist.iter().enumerate() {
        for (b, &want) in bins.iter().enumerate() {
            env.fw_write_now(csr::LAT_SEL, b as u32 | (dir as u32) << 8)?;
            let got = env.fw_read(csr::LAT_COUNT)?;
            if got != want {
                let nonzero: Vec<(usize, usize, u32)> = hist
                    .iter()
                    .enumerate()
                    .flat_map(|(d, bs)| {
                        bs.iter()
                            .enumerate()
                            .filter(|x| *x.1 > 0)
                            .map(move |(b, &v)| (d, b, v))
                    })
                    .collect();
                return Err(format!(
                    "latency histogram {} bin {b} ({} to {} cycles) is {got}, expected {want} \
                     ({timed} commands timed; expected non-zero (dir, bin, count): {nonzero:?})",
                    names[dir],
                    1u64 << b,
                    (2u64 << b) - 1
                ));
            }
        }
    }
    env.fw_write_now(csr::LAT_SEL, 3 << 8)?;
    if env.fw_read(csr::LAT_COUNT)? != 0 {
        return Err("lat_count of histogram 3 (none) is not 0".into());
    }
    env.fw_write_now(csr::LAT_CTRL, csr::LAT_CTRL_CLEAR_MASK)?;
    let mut k = 0;
    while env.fw_read(csr::STATUS)? & csr::STATUS_LAT_CLEARING_MASK != 0 {
        k += 1;
        if k > 200 {
            return Err("status.lat_clearing never fell after lat_ctrl.clear".into());
        }
    }
    for (dir, bins) in hist.iter().enumerate() {
        for (b, &v) in bins.iter().enumerate() {
            if v == 0 && b % 7 != 0 {
                continue;
            }
            env.fw_write_now(csr::LAT_SEL, b as u32 | (dir as u32) << 8)?;
            let got = env.fw_read(csr::LAT_COUNT)?;
            if got != 0 {
                return Err(format!(
                    "latency histogram {} bin {b} is {got} after lat_ctrl.clear",
                    names[dir]
                ));
            }
        }
    }
    Ok(timed)
}

fn check_log(env: &Env) -> Result<(u64, u64), String> {
    let m = env.mem.borrow();
    if let Some(v) = m.violations.first() {
        return Err(format!("AXI protocol: {v} ({} in all)", m.violations.len()));
    }
    let rings = &env.host.rings;
    let mut count = vec![0u64; rings.len()];
    let mut log: Vec<_> = m.log.iter().collect();
    log.sort_by_key(|t| t.accepted);
    let (mut sqes, mut cqes) = (0, 0);
    for t in log {
        let (lo, hi) = t.req.span();
        let write = t.dir == Dir::Write;
        let Some(ri) = rings
            .iter()
            .rposition(|r| r.cq == write && r.range.start <= lo && hi <= r.range.end)
        else {
            return Err(format!(
                "{:?} burst {:x?} at cycle {} touches memory outside every {} ring",
                t.dir,
                t.req,
                t.accepted,
                if write { "CQ" } else { "SQ" }
            ));
        };
        let r = &rings[ri];
        let entry = if write { 16 } else { 64 };
        let slot = (lo - r.range.start) / entry;
        let n = (hi - lo) / entry;
        let size = u64::from(r.size);
        let door = r
            .doorbells
            .iter()
            .rfind(|d| d.0 < t.accepted)
            .map_or(0, |d| d.1);
        if !(lo - r.range.start).is_multiple_of(entry) || !(hi - lo).is_multiple_of(entry) || n == 0
        {
            return Err(format!(
                "{:?} burst {:x?} is not whole entries",
                t.dir, t.req
            ));
        }
        if slot != count[ri] % size {
            return Err(format!(
                "{} {} ring: {:?} of slot {slot} at cycle {}, expected slot {} (ring order)",
                if write { "CQ" } else { "SQ" },
                r.qid,
                t.dir,
                t.accepted,
                count[ri] % size
            ));
        }
        if write {
            if n != 1 {
                return Err(format!("a CQE write of {n} entries"));
            }
            if count[ri] + 1 - door > size - 1 {
                return Err(format!(
                    "CQ {} (size {size}) overrun at cycle {}: entry {} written with only {door} released",
                    r.qid,
                    t.accepted,
                    count[ri] + 1
                ));
            }
            cqes += 1;
        } else {
            if count[ri] + n > door {
                return Err(format!(
                    "SQ {} fetched entries {}..{} at cycle {} but the host had published {door}",
                    r.qid,
                    count[ri],
                    count[ri] + n,
                    t.accepted
                ));
            }
            sqes += n;
        }
        count[ri] += n;
    }
    Ok((sqes, cqes))
}

/// Weighted round robin with an urgent class: once an urgent SQ's doorbell has been answered
/// (plus the few cycles the queue FSM takes to schedule it) and its entries are not all
/// fetched, the next SQ read request picked is for the admin queue or an urgent queue. Only
/// checked in WRR mode with every `sq_space_i` bit high (a throttled queue is skipped).
fn check_urgent(env: &Env) -> Result<(), String> {
    const SLACK: u64 = 10;
    let m = env.mem.borrow();
    let rings = &env.host.rings;
    let mut reads: Vec<(u64, usize, u64)> = m
        .log
        .iter()
        .filter(|t| t.dir == Dir::Read)
        .filter_map(|t| {
            let (lo, hi) = t.req.span();
            let ri = rings
                .iter()
                .rposition(|r| !r.cq && r.range.start <= lo && hi <= r.range.end)?;
            Some((t.accepted, ri, (hi - lo) / 64))
        })
        .collect();
    reads.sort_by_key(|r| r.0);
    let mut fetched = vec![0u64; rings.len()];
    for w in reads.windows(2) {
        let (t_prev, ri_prev, n_prev) = w[0];
        fetched[ri_prev] += n_prev;
        let (t, ri, _) = w[1];
        if rings[ri].urgent || rings[ri].qid == 0 {
            continue;
        }
        for (ui, u) in rings.iter().enumerate() {
            if u.cq || !u.urgent || u.qid == 0 || u.dead <= t {
                continue;
            }
            let published = u
                .doorbells_done
                .iter()
                .rfind(|d| d.0 + SLACK <= t_prev)
                .map_or(0, |d| d.1);
            if published > fetched[ui] {
                return Err(format!(
                    "WRR: SQ {} (not urgent) read at cycle {t} while urgent SQ {} had entries {}..{} \
                     published since before cycle {t_prev} and not fetched",
                    rings[ri].qid, u.qid, fetched[ui], published
                ));
            }
        }
    }
    Ok(())
}

fn check_irqs(env: &Env) -> Result<(), String> {
    let m = env.mem.borrow();
    let mut done: BTreeMap<u16, Vec<u64>> = BTreeMap::new();
    for t in m.log.iter().filter(|t| t.dir == Dir::Write) {
        let (lo, _) = t.req.span();
        if let Some(r) = env
            .host
            .rings
            .iter()
            .rfind(|r| r.cq && r.range.contains(&lo))
        {
            if let Some(v) = r.vector {
                done.entry(v).or_default().push(t.done);
            }
        }
    }
    let mut irqs: BTreeMap<u16, Vec<u64>> = BTreeMap::new();
    let sink = env.irq.borrow();
    if let Some(v) = sink.violations.first() {
        return Err(format!("irq stream protocol: {v}"));
    }
    for (c, w) in &sink.received {
        irqs.entry(w[0] as u16).or_default().push(*c);
    }
    let last_reset = env.host.resets.last().copied().unwrap_or(0);
    for (v, list) in &irqs {
        let cs = done.get(v).cloned().unwrap_or_default();
        if list.len() > cs.len() {
            return Err(format!(
                "vector {v}: {} interrupts for {} completions",
                list.len(),
                cs.len()
            ));
        }
        for &c in list {
            if !cs.iter().any(|&d| d < c) {
                return Err(format!(
                    "vector {v}: interrupt at cycle {c} before any completion"
                ));
            }
        }
    }
    for (v, cs) in &done {
        for &d in cs.iter().filter(|&&d| d > last_reset) {
            if !irqs.get(v).is_some_and(|l| l.iter().any(|&c| c > d)) {
                return Err(format!(
                    "vector {v}: the completion written at cycle {d} was never followed by an interrupt{}",
                    if std::env::var_os("NVME_TRACE").is_some() { format!(" (irqs {irqs:?}, completions {done:?}, end {})", env.sim.cycle()) } else { String::new() }
                ));
            }
        }
    }
    Ok(())
}

fn trace(env: &Env) -> String {
    if std::env::var_os("NVME_TRACE").is_none() {
        return String::new();
    }
    let mut out = String::from("\n");
    for t in &env.mem.borrow().log {
        out += &format!(
            "  axi {:?} {:#x} len {} acc {} done {} {:?}\n",
            t.dir, t.req.addr, t.req.len, t.accepted, t.done, t.resp
        );
    }
    for (c, q, s) in &env.backend().borrow().received {
        out += &format!(
            "  io_cmd {c} sq {q} cid {}\n",
            u16::from_le_bytes([s[2], s[3]])
        );
    }
    for r in &env.host.rings {
        out += &format!(
            "  ring q{} cq {} {:#x}.. size {} doorbells {:?}\n",
            r.qid, r.cq, r.range.start, r.size, r.doorbells
        );
    }
    out
}

/// BAR0 registers before bring-up: CAP, VS, INTMS/INTMC, CC.SHN -> CSTS.SHST, a reserved
/// register, and a doorbell write while the controller is disabled (ignored, not a fault).
fn check_registers(env: &mut Env) -> Result<(), String> {
    let cap_lo = env.bar_read(0)?;
    let cap_hi = env.bar_read(4)?;
    let want_lo = (env.host.model.max_entries - 1) | 1 << 16 | 1 << 17;
    if cap_lo & 0x3_ffff != want_lo || cap_hi >> 5 & 1 != 1 || cap_hi & 0xf != env.stride {
        return Err(format!(
            "CAP is {cap_hi:08x}_{cap_lo:08x}: MQES, CQR, AMS (WRR), CSS (NVM) or DSTRD wrong"
        ));
    }
    let vs = env.bar_read(8)?;
    if vs != 0x0001_0400 {
        return Err(format!("VS is {vs:#x}, expected 0x10400"));
    }
    env.bar_write(0x0c, 0x8000_0005)?;
    env.bar_write(0x10, 0x0000_0004)?;
    let (ms, mc) = (env.bar_read(0x0c)?, env.bar_read(0x10)?);
    if ms != 0x8000_0001 || mc != 0x8000_0001 {
        return Err(format!(
            "INTMS/INTMC read {ms:#x}/{mc:#x} after set 0x80000005, clear 4"
        ));
    }
    env.bar_write(0x10, 0xffff_ffff)?;
    env.bar_write(0x14, 1 << 14)?;
    env.run(4)?;
    let csts = env.bar_read(0x1c)?;
    if csts != 2 << 2 {
        return Err(format!(
            "CSTS is {csts:#x} after CC.SHN = 01b, expected SHST 10b and RDY 0"
        ));
    }
    env.bar_write(0x14, 0)?;
    if env.bar_read(0x1c)? != 0 || env.bar_read(0x18)? != 0 {
        return Err("CSTS not 0 after CC.SHN cleared, or the reserved register 18h not 0".into());
    }
    let a = env.doorbell_addr(0, false);
    env.bar_write(a, 1)?;
    Ok(())
}

fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
    let mut env = Env::new(&input.timing, input.seed, waves);
    let mut rng = Rng::new(input.seed ^ 0x5eed);
    env.sim.reset(3);
    env.read_cap()?;
    let mdts = env.host.model.max_blocks;
    check_registers(&mut env)?;
    env.fw_write(csr::COAL_TICK, 16 + (input.seed % 50) as u32);
    let ns_blocks = input.fallback.0;
    env.host.lowest_cid = input.lowest_cid;
    env.set_fallback([(1, ns_blocks)].into_iter().collect(), input.fallback.1);
    bring_up(&mut env, input)?;
    let mut pairs: Vec<crate::suites::nvme::queues::Pair> = input.pairs.clone();
    pairs.truncate(usize::from(env.io_queues));
    // SQEs whose fetch fails: they go nowhere (04h or CSTS.CFS).
    let mut poisoned: BTreeSet<(u16, Sqe)> = BTreeSet::new();
    // Addresses whose read beat answers SLVERR (one beat of a poisoned SQE).
    let poison: Rc<RefCell<BTreeSet<u64>>> = Rc::default();
    let p2 = poison.clone();
    let bus = u64::from(env.mem.borrow().bytes());
    env.mem.borrow_mut().set_read_beat_error_fn(move |req, n| {
        let a = req.beat_addr(n) & !(bus - 1);
        p2.borrow()
            .iter()
            .any(|&p| a <= p && p < a + bus)
            .then_some(Resp::SlvErr)
    });
    let mut fatal = 0u32;
    for op in &input.ops {
        match op {
            Op::Submit {
                q,
                n,
                batch,
                bad,
                fb,
            } => {
                let qid = (*q as usize % pairs.len()) as u16 + 1;
                if !env.host.model.sqs.contains_key(&qid) {
                    continue;
                }
                let room = env.host.model.sqs[&qid].size - 1;
                let n = u32::from(*n).min(room) as usize;
                let sqes = io_batch(&mut env, qid, n as u32, |cid| {
                    if rng.chance(*fb) {
                        fallback_sqe(&mut rng, cid, ns_blocks)
                    } else {
                        io_sqe(&mut rng, cid, *bad, mdts)
                    }
                });
                env.submit(qid, &sqes, *batch)?;
            }
            Op::Consume => {
                env.consume_all()?;
                rearm_aer(&mut env)?;
            }
            Op::Wait(c) => env.run(u64::from(*c))?,
            Op::Held { q, n } => {
                let qid = (*q as usize % pairs.len()) as u16 + 1;
                if !env.host.model.sqs.contains_key(&qid) {
                    continue;
                }
                let room = env.host.model.sqs[&qid].size - 1;
                let n = u32::from(*n).min(room);
                if n < 2 {
                    continue;
                }
                let mut first = true;
                let sqes = io_batch(&mut env, qid, n, |cid| {
                    if std::mem::take(&mut first) {
                        fallback_sqe(&mut rng, cid, ns_blocks)
                    } else {
                        io_sqe(&mut rng, cid, 0, mdts)
                    }
                });
                // Room first (earlier commands complete meanwhile), so the doorbell below
                // waits on nothing firmware holds.
                let mut k = 0u64;
                while env.host.model.sq_room(qid) < n {
                    env.consume_all()?;
                    env.step()?;
                    k += 1;
                    if k > 200_000 {
                        return Err(format!("SQ {qid} never had room (SQHD never moved)"));
                    }
                }
                env.hold_fallback(true);
                env.submit(qid, &sqes, true)?;
                let cids: Vec<u16> = sqes
                    .iter()
                    .map(|s| u16::from_le_bytes([s[2], s[3]]))
                    .collect();
                let mut k = 0u64;
                while env
                    .host
                    .model
                    .sqs
                    .get(&qid)
                    .is_some_and(|s| cids[1..].iter().any(|c| s.outstanding.contains_key(c)))
                {
                    env.consume_all()?;
                    env.step()?;
                    k += 1;
                    if k > 100_000 {
                        return Err(format!(
                            "SQ {qid}: the offloaded commands behind fallback CID {:#x}, which \
                             firmware holds, never completed",
                            cids[0]
                        ));
                    }
                }
                env.hold_fallback(false);
            }
            Op::BadDoorbell { kind, q, v } => {
                let qid = (*q as usize % pairs.len()) as u16 + 1;
                env.bad_doorbell(*kind, qid, pairs.len(), *v)?;
            }
            Op::Reset => {
                env.controller_reset()?;
                bring_up(&mut env, input)?;
            }
            Op::Poison { q, beat } => {
                let qid = (*q as usize % pairs.len()) as u16 + 1;
                if !env.host.model.sqs.contains_key(&qid) {
                    continue;
                }
                let mut n = 0u64;
                while env
                    .host
                    .model
                    .sqs
                    .get(&qid)
                    .is_some_and(|s| !s.outstanding.is_empty())
                {
                    env.consume_all()?;
                    env.step()?;
                    n += 1;
                    if n > 300_000 {
                        return Err(format!("SQ {qid}: commands never completed"));
                    }
                }
                let cid = next_cid(&mut env, qid);
                let s = io_sqe(&mut rng, cid, 0, mdts);
                let ri = env.host.sq_ring[&qid];
                let addr =
                    env.host.rings[ri].range.start + u64::from(env.host.model.sqs[&qid].tail) * 64;
                // The failing beat: the one holding CDW0 (beat 0), or a later one of the SQE.
                let k = u64::from(*beat) % 64u64.div_ceil(bus).max(1);
                let cdw0_bad = k == 0;
                poison.borrow_mut().insert(addr + k * bus);
                poisoned.insert((qid, s));
                env.submit(qid, &[s], true)?;
                if let Some(e) = env
                    .host
                    .model
                    .sqs
                    .get_mut(&qid)
                    .and_then(|q| q.outstanding.get_mut(&cid))
                {
                    // 04h (SCT 0) only when CDW0 was good; otherwise no completion at all.
                    *e = if cdw0_bad {
                        vec![]
                    } else {
                        vec![(status::DATA_TRANSFER, None)]
                    };
                }
                let mut n = 0u64;
                loop {
                    env.consume_all()?;
                    env.step()?;
                    n += 1;
                    if !env
                        .host
                        .model
                        .sqs
                        .get(&qid)
                        .is_some_and(|q| q.outstanding.contains_key(&cid))
                    {
                        // Completed (with 04h: the model allows nothing else): not fatal.
                        if env.bar_read(0x1c)? & 2 != 0 {
                            return Err(format!(
                                "SQ {qid} CID {cid}: beat {k} of its SQE failed (CDW0 good), it \
                                 completed with 04h but CSTS.CFS is set"
                            ));
                        }
                        break;
                    }
                    if n.is_multiple_of(64) && env.bar_read(0x1c)? & 2 != 0 {
                        if !cdw0_bad {
                            return Err(format!(
                                "SQ {qid} CID {cid}: beat {k} of its SQE failed but CDW0 was \
                                 good: CSTS.CFS instead of a 04h completion"
                            ));
                        }
                        // CSTS.CFS: the controller is fatal; the host resets it.
                        fatal += 1;
                        env.controller_reset()?;
                        bring_up(&mut env, input)?;
                        break;
                    }
                    if n > 100_000 {
                        return Err(format!(
                            "SQ {qid} CID {cid} (beat {k} of its SQE failed, CDW0 {}): \
                             neither a completion nor CSTS.CFS",
                            if cdw0_bad { "bad" } else { "good" }
                        ));
                    }
                }
                poison.borrow_mut().clear();
            }
            Op::Recreate { q, sq, cq } => {
                let i = *q as usize % pairs.len();
                let qid = i as u16 + 1;
                let mut n = 0u64;
                while env
                    .host
                    .model
                    .sqs
                    .get(&qid)
                    .is_some_and(|s| !s.outstanding.is_empty())
                {
                    env.consume_all()?;
                    env.step()?;
                    n += 1;
                    if n > 300_000 {
                        return Err(format!(
                            "SQ {qid}: commands never completed before its deletion"
                        ));
                    }
                }
                env.consume_all()?;
                if env.host.model.sqs.contains_key(&qid) {
                    let ri = env.host.sq_ring[&qid];
                    env.host.rings[ri].dead = env.sim.cycle();
                    admin(&mut env, 0x00, u32::from(qid), 0, 0)?;
                    env.host.sq_ring.remove(&qid);
                }
                if env.host.model.cqs.contains_key(&qid) {
                    env.consume(qid)?;
                    admin(&mut env, 0x04, u32::from(qid), 0, 0)?;
                    env.host.cq_ring.remove(&qid);
                    env.host.cq_head.remove(&qid);
                }
                pairs[i].sq = *sq;
                pairs[i].cq = *cq;
                let p = pairs[i].clone();
                let vectors = env.vectors;
                create_pair(&mut env, qid, &p, vectors)?;
            }
        }
    }
    // Drain: every command completes, every fault is reported.
    let mut n = 0u64;
    while env.host.model.outstanding() > 0 || !env.host.model.events.is_empty() {
        env.consume_all()?;
        rearm_aer(&mut env)?;
        env.step()?;
        n += 1;
        if n > 400_000 {
            let left: Vec<(u16, Vec<u16>)> = env
                .host
                .model
                .sqs
                .iter()
                .map(|(k, q)| (*k, q.outstanding.keys().copied().collect()))
                .collect();
            return Err(format!(
                "never completed: {left:?}; events not reported: {:?}{}",
                env.host.model.events,
                trace(&env)
            ));
        }
    }
    env.run(300)?;
    env.consume_all()?;
    if env.bar_read(0x1c)? & 2 != 0 {
        return Err(format!(
            "CSTS.CFS is set at the end ({fatal} fatal errors were provoked and recovered)"
        ));
    }

    // Every SQE on io_cmd or to firmware is one the host submitted, on its path, once.
    let (offloaded, fallen_back) = check_paths(&env, &poisoned)?;
    let (sqes, cqes) = check_log(&env)?;
    if std::env::var_os("NVME_STATS").is_some() {
        eprintln!(
            "nvme case: {} cycles, {sqes} SQEs fetched, {cqes} CQEs, {} io_cmd, {fallen_back} fallback, {} irqs, {} faults, {} resets, {fatal} fatal",
            env.sim.cycle(),
            offloaded,
            env.irq.borrow().received.len(),
            env.host.faults,
            env.host.resets.len()
        );
    }
    check_irqs(&env)?;
    if input.wrr && input.timing.space_low == 0 {
        check_urgent(&env)?;
    }

    // Counters through the firmware's CSR port.
    let irqs = env.irq.borrow().received.len() as u32;
    let want = [
        (csr::DB_FAULTS, env.host.faults as u32, "db_faults"),
        (csr::IRQS, irqs, "irqs"),
        (csr::FETCHED, sqes as u32, "fetched"),
        (csr::COMPLETED, cqes as u32, "completed"),
        (csr::CNT_OFFLOAD, offloaded as u32, "cnt_offload"),
        (csr::CNT_FALLBACK, fallen_back as u32, "cnt_fallback"),
    ];
    for (addr, v, name) in want {
        let got = env.fw_read(addr)?;
        if got != v {
            return Err(format!("counter {name} is {got}, expected {v}"));
        }
    }
    let sqs: Vec<u16> = env.host.model.sqs.keys().copied().collect();
    for q in sqs {
        env.fw_write_now(csr::CNT_SEL, u32::from(q))?;
        let f = env.fw_read(csr::CNT_FETCHED)?;
        let c = env.fw_read(csr::CNT_COMPLETED)?;
        let sub = env.host.submitted.get(&q).copied().unwrap_or(0);
        let com = env.host.completed.get(&q).copied().unwrap_or(0);
        if f != sub || c != com {
            return Err(format!(
                "SQ {q} counters: fetched {f} completed {c}, expected {sub} and {com}"
            ));
        }
    }
    let timed = check_latency(&mut env, &poisoned)?;
    if std::env::var_os("NVME_STATS").is_some() {
        eprintln!("nvme case: {timed} commands timed");
    }
    for (name, a) in [("BAR0", &env.bar), ("vendor CSR", &env.fw_bus)] {
        if let Some(v) = a.master().violations.first() {
            return Err(format!("{name} AXI4-Lite protocol: {v}"));
        }
    }
    Ok(())
}

/// The NVMe front end as the host sees it (see the module documentation).
pub struct NvmeQueuesProp;

impl Property for NvmeQueuesProp {
    type Input = Input;
    const NAME: &'static str = "nvme_queues";
    fn strategy() -> BoxedStrategy<Input> {
        strategy()
    }
    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        run(input, waves)
    }
}
