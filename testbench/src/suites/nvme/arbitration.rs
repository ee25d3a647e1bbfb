//! Property: the order in which the NVMe front end fetches SQEs (and hands them out on
//! `io_cmd`) is exactly the order of the golden arbiter `models::nvme_arb::Arbiter`.
//!
//! Set-up: round robin or weighted round robin with urgent class (CC.AMS), a random
//! Arbitration feature (burst 2^AB or no limit, random 0's based weights), up to 12 I/O queue
//! pairs of random priority classes and SQ depths (some deeper than one 4 KiB page of SQEs, so
//! ring ends and page ends cut bursts), and optionally a set of SQs whose `sq_space_i` bit is
//! held low for the whole checked part of the run. `io_cmd` is held back-pressured while every
//! queue is filled, so many commands wait at once and arbitration, not arrival, decides; then
//! random steps: `io_cmd` released (with random backpressure) or held for a while, doorbells
//! of one or many entries on random queues at random moments (while fetching goes on, or
//! while it is stalled), and admin commands (Set Features Arbitration with the same value) in
//! the middle of I/O traffic.
//!
//! Check: the decisions are read off the AXI read requests (queue, first entry, SQE count);
//! the doorbells off the BAR0 write channel. They are replayed in the order the front end
//! applied them (a doorbell accepted in cycle `t` comes before a decision whose read request
//! rises in cycle `t + 5` or later, mod.rs), and each decision must be the model's, exactly.
//! When the throttled SQs are released the check stops (the position they then take in their
//! class is not promised); every command must still be fetched once and complete. The SQEs on
//! `io_cmd` come out in the order they were fetched.
//!
//! Then the fetch latency (mod.rs, "Fetch latency"): new SQs fill one to three classes whose every
//! SQ is throttled (their FIFOs keep rotating ineligible heads; each class stops holding up
//! decisions after one circle), nothing else goes on for a while (everything before completed,
//! every CQ consumed), in half the cases a throttled SQ is given work just before (its class
//! goes around once more), and one doorbell gives an eligible SQ of another class work: its
//! read request must be the next one and rise within the contract's bound of the doorbell.
//! Finally the throttled SQs are released and every command completes.

use super::env::{Env, Timing};
use super::queues::{admin, create_pair, io_batch, io_sqe, next_cid, Pair};
use crate::models::nvme_arb::{Arbiter, Fetch};
use crate::prop::Property;
use crate::rng::Rng;
use crate::rtl::NvmeCtrlTop as Top;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A step of the run after the initial fill.
#[derive(Debug, Clone)]
pub enum Step {
    /// `io_cmd` ready for `cycles`, each cycle withheld with probability `stall` percent.
    Release {
        /// Cycles.
        cycles: u16,
        /// Backpressure percent.
        stall: u8,
    },
    /// `io_cmd` held not ready for `cycles`.
    Hold {
        /// Cycles.
        cycles: u16,
    },
    /// `n` more SQEs on queue `q`: one doorbell or one per entry.
    Ring {
        /// Queue index.
        q: u8,
        /// Entries.
        n: u8,
        /// One doorbell for all.
        batch: bool,
    },
    /// An admin command (Set Features Arbitration, same value) without waiting for it.
    Admin,
}

/// The fetch-latency phase at the end of a case.
#[derive(Debug, Clone)]
pub struct Stall {
    /// Classes whose every SQ is throttled (bit c: class c, 0 urgent .. 3 low), never all four.
    classes: u8,
    /// New SQs in each throttled class (at least two).
    per_class: u8,
    /// The class of the eligible SQ rung last: the first class from this one not throttled.
    eligible: u8,
    /// One throttled SQ is first given work right before the eligible one.
    kick: bool,
    /// Quiet cycles before those doorbells.
    quiet: u16,
    /// SQEs the eligible SQ is given.
    n: u8,
}

/// Generated stimulus.
#[derive(Debug, Clone)]
pub struct Input {
    wrr: bool,
    arb: u32,
    /// Per queue: priority class and SQ depth.
    queues: Vec<(u8, u16)>,
    /// Per queue: SQEs placed before anything is released.
    fill: Vec<u8>,
    /// Queues whose `sq_space_i` bit is low for the checked part (bit i = queue i + 1).
    throttle: u16,
    steps: Vec<Step>,
    read_latency: (u32, u32),
    axil: u8,
    stall: Stall,
    seed: u64,
}

fn weight() -> impl Strategy<Value = u32> {
    prop_oneof![4 => 0u32..4, 2 => 0u32..16, 1 => 0u32..256]
}

fn strategy() -> BoxedStrategy<Input> {
    let step = prop_oneof![
        3 => (1u16..400, prop_oneof![Just(0u8), 0u8..80])
            .prop_map(|(cycles, stall)| Step::Release { cycles, stall }),
        2 => (1u16..300).prop_map(|cycles| Step::Hold { cycles }),
        4 => (any::<u8>(), 1u8..40, any::<bool>()).prop_map(|(q, n, batch)| Step::Ring { q, n, batch }),
        1 => Just(Step::Admin),
    ];
    (
        prop_oneof![1 => Just(false), 3 => Just(true)],
        (0u32..8, weight(), weight(), weight()),
        prop::collection::vec(
            (
                0u8..4,
                prop_oneof![2 => 2u16..20, 2 => 20u16..70, 1 => 70u16..260],
            ),
            2..13,
        ),
        prop::collection::vec(any::<u8>(), 12),
        prop_oneof![2 => Just(0u16), 1 => any::<u16>()],
        prop::collection::vec(step, 0..30),
        prop_oneof![Just((1u32, 4u32)), Just((10, 60))],
        0u8..30,
        (
            prop_oneof![1 => Just(8u8), 1 => Just(12u8), 2 => 1u8..15],
            2u8..7,
            0u8..4,
            any::<bool>(),
            150u16..400,
            1u8..5,
        )
            .prop_map(|(classes, per_class, eligible, kick, quiet, n)| Stall {
                classes,
                per_class,
                eligible,
                kick,
                quiet,
                n,
            }),
        any::<u64>(),
    )
        .prop_map(
            |(
                wrr,
                (ab, h, mm, l),
                queues,
                fill,
                throttle,
                steps,
                read_latency,
                axil,
                stall,
                seed,
            )| {
                Input {
                    wrr,
                    arb: ab | l << 8 | mm << 16 | h << 24,
                    queues,
                    fill,
                    throttle,
                    steps,
                    read_latency,
                    axil,
                    stall,
                    seed,
                }
            },
        )
        .boxed()
}

/// `fetch_burst` of the model under test, from its name (`..._b8_...`).
fn fetch_burst() -> u32 {
    Top::NAME
        .split('_')
        .find_map(|p| p.strip_prefix('b').and_then(|n| n.parse().ok()))
        .expect("the nvme_ctrl top's name carries _b<fetch_burst>_")
}

struct Run {
    env: Env,
    rng: Rng,
    /// CIDs per SQ in submission order.
    cids: BTreeMap<u16, Vec<u16>>,
    throttled: BTreeSet<u16>,
}

impl Run {
    /// Submits up to `n` SQEs on `qid` (as many as fit now), one doorbell or one each.
    fn ring(&mut self, qid: u16, n: u32, batch: bool) -> Result<(), String> {
        let room = self.env.host.model.sq_room(qid);
        let n = n.min(room);
        if n == 0 {
            return Ok(());
        }
        let (cids, rng) = (&mut self.cids, &mut self.rng);
        let mdts = self.env.host.model.max_blocks;
        let sqes = io_batch(&mut self.env, qid, n, |cid| {
            cids.entry(qid).or_default().push(cid);
            io_sqe(rng, cid, 0, mdts)
        });
        self.env.submit(qid, &sqes, batch)
    }

    /// Runs `cycles`, consuming completions now and then so CQs never stall the backend.
    fn run(&mut self, cycles: u64) -> Result<(), String> {
        for i in 0..cycles {
            if i % 64 == 0 {
                self.env.consume_all()?;
            }
            self.env.step()?;
        }
        Ok(())
    }
}

fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
    let timing = Timing {
        read_latency: input.read_latency,
        stalls: (10, 10, 10, 10, 10),
        cmd_stall: (0, 10),
        backend_delay: 20,
        space_low: 0,
        irq_stall: 10,
        axil: input.axil,
    };
    let mut env = Env::new(&timing, input.seed, waves);
    env.sim.reset(3);
    env.read_cap()?;
    let (asq, acq) = (16u32, 64u32);
    env.enable(asq, acq, input.wrr)?;
    admin(&mut env, 0x09, 0x01, input.arb, 0)?;
    // The latency phase creates up to 3 * 6 + 1 more SQs after these.
    let nq = input
        .queues
        .len()
        .min(usize::from(env.io_queues).saturating_sub(STALL_QUEUES));
    let max = env.host.model.max_entries;
    for (i, &(prio, depth)) in input.queues.iter().take(nq).enumerate() {
        let p = Pair {
            sq: depth,
            cq: (u32::from(depth) * 2).min(max) as u16,
            prio,
            vector: 0,
            ien: false,
        };
        let vectors = env.vectors;
        create_pair(&mut env, i as u16 + 1, &p, vectors)?;
    }
    // The model starts here: every admin command so far has been fetched and completed.
    let mut model = Arbiter::new(input.wrr, input.arb, fetch_burst());
    let admin_tail = env.host.model.sqs[&0].tail;
    model.create(0, asq, 0, admin_tail);
    for (i, &(prio, _)) in input.queues.iter().take(nq).enumerate() {
        let q = i as u16 + 1;
        let size = env.host.model.sqs[&q].size;
        model.create(q, size, prio, 0);
    }
    let (db0, rd0) = {
        let p = env.probe().borrow();
        (p.doorbells.len(), p.reads.len())
    };
    let throttled: BTreeSet<u16> = (0..nq as u16)
        .filter(|i| input.throttle >> i & 1 == 1)
        .map(|i| i + 1)
        .collect();
    let mask = throttled.iter().fold(0u64, |m, q| m | 1 << (q - 1));
    {
        let mut be = env.backend().borrow_mut();
        be.hold = true;
        be.space_mask = mask;
    }
    let mut r = Run {
        env,
        rng: Rng::new(input.seed ^ 0xa4b),
        cids: BTreeMap::new(),
        throttled,
    };
    // Fill every queue while io_cmd is held: many commands wait at once.
    let mut order: Vec<usize> = (0..nq).collect();
    for i in (1..order.len()).rev() {
        let j = r.rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    for i in order {
        let q = i as u16 + 1;
        let n = u32::from(input.fill[i % input.fill.len()]);
        let batch = n % 3 != 0;
        r.ring(q, n, batch)?;
    }
    for s in &input.steps {
        match *s {
            Step::Release { cycles, stall } => {
                r.env.backend().borrow_mut().hold = false;
                r.env.backend().borrow_mut().stall = stall;
                r.run(u64::from(cycles))?;
            }
            Step::Hold { cycles } => {
                r.env.backend().borrow_mut().hold = true;
                r.run(u64::from(cycles))?;
            }
            Step::Ring { q, n, batch } => {
                let qid = (usize::from(q) % nq) as u16 + 1;
                r.ring(qid, u32::from(n), batch)?;
            }
            Step::Admin => {
                if r.env.host.model.sq_room(0) > 0 {
                    let cid = next_cid(&mut r.env, 0);
                    let mut sqe = [0u8; 64];
                    sqe[0] = 0x09;
                    sqe[2..4].copy_from_slice(&cid.to_le_bytes());
                    sqe[40..44].copy_from_slice(&1u32.to_le_bytes());
                    sqe[44..48].copy_from_slice(&input.arb.to_le_bytes());
                    r.env.submit(0, &[sqe], true)?;
                }
            }
        }
    }
    // Everything not throttled goes out; then the throttled queues are released.
    {
        let mut be = r.env.backend().borrow_mut();
        be.hold = false;
        be.stall = 0;
    }
    let want: usize = r
        .cids
        .iter()
        .filter(|(q, _)| !r.throttled.contains(q))
        .map(|(_, c)| c.len())
        .sum();
    let mut n = 0u64;
    while r
        .env
        .backend()
        .borrow()
        .received
        .iter()
        .filter(|c| !r.throttled.contains(&c.1))
        .count()
        < want
    {
        r.run(1)?;
        n += 1;
        if n > 200_000 {
            return Err(format!(
                "the commands of the queues not throttled ({want}) never all went out on io_cmd"
            ));
        }
    }
    r.run(50)?;
    let released = r.env.sim.cycle();
    r.env.backend().borrow_mut().space_mask = 0;
    let mut n = 0u64;
    while r.env.host.model.outstanding() > 0 {
        r.run(1)?;
        n += 1;
        if n > 300_000 {
            return Err("commands never completed after the throttled queues were released".into());
        }
    }
    r.env.consume_all()?;

    // Replay doorbells and decisions in the order the front end applied them.
    let env = &r.env;
    let probe = env.probe().borrow();
    let rings = &env.host.rings;
    let bus = u64::from(env.mem.borrow().bytes());
    let beats = 64 / bus;
    let mut events: Vec<(u64, u8, usize)> = Vec::new();
    for (i, d) in probe.doorbells.iter().enumerate().skip(db0) {
        events.push((d.0, 1, i));
    }
    // A decision sorts before a doorbell of its own cycle: at `rise - 4`, a doorbell of cycle
    // `rise - 5` or earlier comes before it (mod.rs, "When a doorbell counts").
    for (i, rd) in probe.reads.iter().enumerate().skip(rd0) {
        events.push((rd.0.saturating_sub(4), 0, i));
    }
    events.sort();
    let slot = 4u64 << env.stride;
    let eligible = |q: u16| q == 0 || !r.throttled.contains(&q);
    let mut fetched: Vec<(u16, u32)> = Vec::new();
    let mut history: Vec<String> = Vec::new();
    for &(t, kind, i) in &events {
        if kind == 1 {
            let (_, addr, value) = probe.doorbells[i];
            let s = (addr - 0x1000) / slot;
            if s % 2 == 1 {
                continue;
            }
            let qid = (s / 2) as u16;
            model.doorbell(qid, value);
            history.push(format!("cycle {t}: SQ {qid} tail doorbell {value}"));
            continue;
        }
        let (rise, addr, len) = probe.reads[i];
        let Some(ri) = rings
            .iter()
            .rposition(|g| !g.cq && g.range.start <= addr && addr < g.range.end)
        else {
            return Err(format!(
                "read at cycle {rise} of {addr:#x}: not inside an SQ"
            ));
        };
        let got = Fetch {
            qid: rings[ri].qid,
            head: ((addr - rings[ri].range.start) / 64) as u32,
            n: (u64::from(len) + 1).div_ceil(beats) as u32,
        };
        fetched.push((got.qid, got.n));
        if t >= released {
            continue;
        }
        let want = model.decide(&eligible);
        if want != Some(got) {
            let tail: Vec<&String> = history.iter().rev().take(12).rev().collect();
            return Err(format!(
                "arbitration decision {} (read rising at cycle {rise}): the front end fetched \
                 {got:?}, the model says {want:?} (wrr {}, arb {:#010x}, throttled {:?}); \
                 recent events: {tail:#?}",
                i - rd0,
                input.wrr,
                input.arb,
                r.throttled
            ));
        }
        history.push(format!(
            "cycle {t}: decision SQ {} entries {}..+{}",
            got.qid, got.head, got.n
        ));
    }
    tracing::debug!(
        "nvme_arbitration case: wrr {} arb {:#010x}, {} queues, throttled {:?}, {} decisions \
         checked, {} after the release, {} doorbells",
        input.wrr,
        input.arb,
        nq,
        r.throttled,
        history.iter().filter(|h| h.contains("decision")).count(),
        fetched.len() - history.iter().filter(|h| h.contains("decision")).count(),
        probe.doorbells.len() - db0
    );
    if let Some(f) = model.decide(&eligible) {
        if !r.throttled.contains(&f.qid) {
            return Err(format!(
                "before the throttled queues were released, the model still had {f:?} to fetch"
            ));
        }
    }
    // io_cmd carries the I/O SQEs in the order they were fetched.
    let mut next: BTreeMap<u16, usize> = BTreeMap::new();
    let mut expect = Vec::new();
    for &(q, n) in &fetched {
        if q == 0 {
            continue;
        }
        for _ in 0..n {
            let k = next.entry(q).or_default();
            expect.push((q, r.cids[&q][*k]));
            *k += 1;
        }
    }
    let got: Vec<(u16, u16)> = env
        .backend()
        .borrow()
        .received
        .iter()
        .map(|(_, q, s)| (*q, u16::from_le_bytes([s[2], s[3]])))
        .collect();
    if got != expect {
        let k = got.iter().zip(&expect).take_while(|(a, b)| a == b).count();
        return Err(format!(
            "io_cmd order differs from the fetch order at command {k}: got {:?}, fetched {:?} \
             ({} and {} commands)",
            got.get(k),
            expect.get(k),
            got.len(),
            expect.len()
        ));
    }
    drop(probe);
    stall_phase(&mut r, input, nq as u16)
}

/// SQs the latency phase may create: three throttled classes of up to six, and one more.
const STALL_QUEUES: usize = 3 * 6 + 1;

/// The fetch-latency phase (module documentation; mod.rs, "Fetch latency").
fn stall_phase(r: &mut Run, input: &Input, nq: u16) -> Result<(), String> {
    let st = &input.stall;
    // At most three classes throttled, so that one is left for the eligible SQ.
    let mut classes: Vec<u8> = (0..4u8).filter(|c| st.classes >> c & 1 == 1).collect();
    classes.truncate(3);
    let eligible = (0..4u8)
        .map(|i| (st.eligible + i) % 4)
        .find(|c| !classes.contains(c))
        .expect("a class is left");
    let vectors = r.env.vectors;
    let mut next = nq + 1;
    let mut throttled: Vec<(u8, u16)> = Vec::new();
    for &c in &classes {
        for _ in 0..st.per_class {
            let p = Pair {
                sq: 16,
                cq: 32,
                prio: c,
                vector: 0,
                ien: false,
            };
            create_pair(&mut r.env, next, &p, vectors)?;
            throttled.push((c, next));
            next += 1;
        }
    }
    let e = next;
    let p = Pair {
        sq: 16,
        cq: 32,
        prio: eligible,
        vector: 0,
        ien: false,
    };
    create_pair(&mut r.env, e, &p, vectors)?;
    let mask = throttled.iter().fold(0u64, |m, &(_, q)| m | 1 << (q - 1));
    {
        let mut be = r.env.backend().borrow_mut();
        be.space_mask = mask;
        be.hold = false;
        be.stall = 0;
    }
    // Doorbells go out whole (AW and W together), so the one accepted last is the cycle the
    // bound counts from.
    r.env.bar.master().set_timing(0, 0);
    // Every throttled SQ gets work (the kicked one later); one doorbell each.
    let kicked = st.kick.then(|| throttled[throttled.len() - 1].1);
    for &(_, q) in &throttled {
        if Some(q) != kicked {
            let n = 1 + r.rng.below(4) as u32;
            r.ring(q, n, true)?;
        }
    }
    // Quiet: every command before completed and consumed, nothing pending.
    let mut n = 0u64;
    while r.env.host.model.outstanding()
        > r.cids
            .iter()
            .filter(|(q, _)| mask >> (**q - 1) & 1 == 1)
            .map(|(_, c)| c.len())
            .sum::<usize>()
    {
        r.run(1)?;
        n += 1;
        if n > 100_000 {
            return Err("latency phase: the commands before it never completed".into());
        }
    }
    r.run(u64::from(st.quiet))?;
    r.env.consume_all()?;
    r.env.run(64)?;
    if let Some(q) = kicked {
        r.ring(q, 1, true)?;
    }
    let reads0 = r.env.probe().borrow().reads.len();
    r.ring(e, u32::from(st.n), true)?;
    let slot = 4u64 << r.env.stride;
    let db = 0x1000 + 2 * u64::from(e) * slot;
    let t = r
        .env
        .probe()
        .borrow()
        .doorbells
        .iter()
        .rev()
        .find(|d| d.1 == db)
        .map(|d| d.0)
        .ok_or("latency phase: the eligible SQ's doorbell was not seen")?;
    let bound = t + u64::from(r.env.io_queues) + FETCH_AFTER_DOORBELL;
    let ring = r.env.host.sq_ring[&e];
    let range = r.env.host.rings[ring].range.clone();
    while r.env.probe().borrow().reads.len() == reads0 && r.env.sim.cycle() <= bound + 8 {
        r.env.step()?;
    }
    let first = r.env.probe().borrow().reads.get(reads0).copied();
    let what = format!(
        "(wrr {}, throttled classes {classes:?} with SQs {:?}, kicked {kicked:?}, eligible SQ {e} \
         of class {eligible}, its doorbell accepted at cycle {t})",
        input.wrr,
        throttled.iter().map(|x| x.1).collect::<Vec<_>>()
    );
    match first {
        None => {
            return Err(format!(
                "fetch latency: no read request rose by cycle {bound}, io_queue_pairs + \
                 {FETCH_AFTER_DOORBELL} cycles after the doorbell {what}"
            ))
        }
        Some((rise, addr, _)) if !range.contains(&addr) => {
            return Err(format!(
                "fetch latency: the read request rising at cycle {rise} ({addr:#x}) is not of \
                 the eligible SQ {what}"
            ))
        }
        Some((rise, _, _)) if rise > bound => {
            return Err(format!(
                "fetch latency: the eligible SQ's read request rose at cycle {rise}, {} cycles \
                 after the doorbell, later than io_queue_pairs + {FETCH_AFTER_DOORBELL} {what}",
                rise - t
            ))
        }
        Some((rise, _, _)) => {
            tracing::debug!("nvme_arbitration latency: {} cycles {what}", rise - t);
        }
    }
    // Released: everything completes.
    r.env.backend().borrow_mut().space_mask = 0;
    let mut n = 0u64;
    while r.env.host.model.outstanding() > 0 {
        r.run(1)?;
        n += 1;
        if n > 200_000 {
            return Err(format!(
                "latency phase: commands never completed after the release {what}"
            ));
        }
    }
    r.env.consume_all()
}

/// The fetch latency's constant (mod.rs, "Fetch latency"): with nothing else to serve, a
/// doorbell accepted in cycle `t` that gives an eligible SQ work has its read request rise by
/// `t + io_queue_pairs + FETCH_AFTER_DOORBELL`.
const FETCH_AFTER_DOORBELL: u64 = 8;

/// The SQ arbitration order, exactly (see the module documentation).
pub struct NvmeArbitrationProp;

impl Property for NvmeArbitrationProp {
    type Input = Input;
    const NAME: &'static str = "nvme_arbitration";
    fn strategy() -> BoxedStrategy<Input> {
        strategy()
    }
    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        run(input, waves)
    }
}
