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

mod checks;
mod host;

use checks::{
    check_irqs, check_latency, check_log, check_paths, check_registers, check_urgent, trace,
};
use host::bring_up;
pub use host::{admin, create_pair, fallback_sqe, io_batch, io_sqe, next_cid, rearm_aer};

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
    tracing::debug!(
        "nvme case: {} cycles, {sqes} SQEs fetched, {cqes} CQEs, {} io_cmd, {fallen_back} fallback, {} irqs, {} faults, {} resets, {fatal} fatal",
        env.sim.cycle(),
        offloaded,
        env.irq.borrow().received.len(),
        env.host.faults,
        env.host.resets.len()
    );
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
    tracing::debug!("nvme case: {timed} commands timed");
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
