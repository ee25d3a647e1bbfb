//! Property: interrupt coalescing, exactly, against `models::nvme_arb::Coalescer`.
//!
//! Set-up: a random Interrupt Coalescing feature (08h: THR 0's based, TIME in time units),
//! a short random time unit (`coal_tick`, 1 to 12 cycles, so TIME expires often), coalescing
//! disabled (09h CD) on random vectors, and I/O queue pairs whose CQs share a few vectors
//! (up to four, drawn from all the controller's vectors), some with interrupts disabled.
//! Then random submissions (bursts of completions, one doorbell or one per entry), waits,
//! and `irq` backpressure from none to almost total (so
//! due interrupts pile up while the stream is stalled), with a random backend delay.
//!
//! Check: from a quiet point after bring-up (every admin completion signalled, `irq` empty),
//! the model is stepped with every CQE write response of an interrupt-enabled CQ (its vector),
//! every end of a time unit, and the sink's `ready`; in every cycle `irq` must show exactly
//! what the model shows (valid and vector). So: with CD, an interrupt for each completion
//! unless it was merged into one still pending; with THR = n, one exactly when the (n + 1)th
//! completion not yet signalled posts, or when TIME time units have ended since the first of
//! them, never later; no interrupt without a completion; and at the end (after waiting out
//! TIME) no completion without an interrupt. The phase of the time unit is the one thing the
//! check does not know (the prescaler runs from reset): every phase is tried, and one must
//! explain the whole run.

use super::env::{Env, Timing};
use super::queues::{admin, create_pair, io_batch, io_sqe, Pair};
use crate::models::nvme_arb::Coalescer;
use crate::prop::Property;
use crate::rng::Rng;
use crate::rtl::regs::nvme_csr as csr;
use proptest::prelude::*;
use std::path::Path;

/// A step of the run.
#[derive(Debug, Clone)]
pub enum Step {
    /// `n` SQEs on pair `q`, one doorbell or one each.
    Submit {
        /// Pair index.
        q: u8,
        /// Entries.
        n: u8,
        /// One doorbell for all.
        batch: bool,
    },
    /// Let cycles pass.
    Wait(u16),
    /// `irq` backpressure from now on (percent).
    IrqStall(u8),
}

/// Generated stimulus.
#[derive(Debug, Clone)]
pub struct Input {
    thr: u8,
    time: u8,
    tick: u32,
    cd: u16,
    /// The vectors the pairs share (modulo the controller's vectors).
    vecs: [u8; 4],
    /// Per pair: vector (an index into `vecs`) and interrupts enabled.
    pairs: Vec<(u8, bool)>,
    steps: Vec<Step>,
    backend_delay: u32,
    seed: u64,
}

fn strategy() -> BoxedStrategy<Input> {
    let step = prop_oneof![
        4 => (any::<u8>(), 1u8..24, any::<bool>()).prop_map(|(q, n, batch)| Step::Submit { q, n, batch }),
        2 => (1u16..500).prop_map(Step::Wait),
        2 => prop_oneof![Just(0u8), Just(95u8), 0u8..100].prop_map(Step::IrqStall),
    ];
    (
        prop_oneof![2 => 0u8..4, 2 => 4u8..16, 1 => any::<u8>()],
        prop_oneof![1 => Just(0u8), 3 => 1u8..8, 1 => 8u8..40],
        prop_oneof![1 => Just(1u32), 2 => 2u32..13],
        prop_oneof![1 => Just(0u16), 2 => any::<u16>()],
        prop_oneof![1 => Just([0u8, 1, 2, 3]), 3 => any::<[u8; 4]>()],
        prop::collection::vec(
            (0u8..4, prop_oneof![4 => Just(true), 1 => Just(false)]),
            1..7,
        ),
        prop::collection::vec(step, 1..30),
        0u32..60,
        any::<u64>(),
    )
        .prop_map(
            |(thr, time, tick, cd, vecs, pairs, steps, backend_delay, seed)| Input {
                thr,
                time,
                tick,
                cd,
                vecs,
                pairs,
                steps,
                backend_delay,
                seed,
            },
        )
        .boxed()
}

/// Cycles after which a completion not yet signalled has surely been (TIME units and a few).
fn settle(input: &Input) -> u64 {
    (u64::from(input.time) + 2) * u64::from(input.tick) + 64
}

fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
    let timing = Timing {
        read_latency: (1, 20),
        stalls: (10, 10, 10, 10, 10),
        cmd_stall: (20, 10),
        backend_delay: input.backend_delay,
        space_low: 0,
        irq_stall: 0,
        axil: 10,
    };
    let mut env = Env::new(&timing, input.seed, waves);
    let mut rng = Rng::new(input.seed ^ 0xc0a1);
    env.sim.reset(3);
    env.read_cap()?;
    let mdts = env.host.model.max_blocks;
    env.fw_write_now(csr::COAL_TICK, input.tick)?;
    env.enable(16, 64, false)?;
    admin(
        &mut env,
        0x09,
        0x08,
        u32::from(input.thr) | u32::from(input.time) << 8,
        0,
    )?;
    let vectors = env.vectors;
    for v in 0..vectors.min(16) {
        if input.cd >> v & 1 == 1 {
            admin(&mut env, 0x09, 0x09, v | 1 << 16, 0)?;
        }
    }
    let nq = input.pairs.len().min(usize::from(env.io_queues));
    for (i, &(k, ien)) in input.pairs.iter().take(nq).enumerate() {
        let vector = input.vecs[usize::from(k)];
        let p = Pair {
            sq: 64,
            cq: 256,
            prio: 0,
            vector,
            ien,
        };
        create_pair(&mut env, i as u16 + 1, &p, vectors)?;
    }
    // Quiet point: every admin completion signalled and taken.
    env.consume_all()?;
    env.run(settle(input))?;
    let (start, b0) = {
        let mut p = env.probe().borrow_mut();
        p.record_irq = true;
        (env.sim.cycle(), p.responses.len())
    };
    for s in &input.steps {
        match *s {
            Step::Submit { q, n, batch } => {
                let qid = (usize::from(q) % nq) as u16 + 1;
                let n = u32::from(n).min(env.host.model.sq_room(qid));
                let sqes = io_batch(&mut env, qid, n, |cid| io_sqe(&mut rng, cid, 0, mdts));
                env.submit(qid, &sqes, batch)?;
            }
            Step::Wait(c) => {
                for i in 0..c {
                    if i % 50 == 0 {
                        env.consume_all()?;
                    }
                    env.step()?;
                }
            }
            Step::IrqStall(p) => env.irq.borrow_mut().set_stall(p),
        }
    }
    let mut n = 0u64;
    while env.host.model.outstanding() > 0 {
        env.consume_all()?;
        env.step()?;
        n += 1;
        if n > 200_000 {
            return Err("commands never completed".into());
        }
    }
    env.irq.borrow_mut().set_stall(0);
    env.run(settle(input))?;

    // Replay, for every phase of the time unit.
    let probe = env.probe().borrow();
    let rings = &env.host.rings;
    let mut posts: Vec<(u64, Option<u16>)> = Vec::new();
    for (k, &c) in probe.responses.iter().enumerate().skip(b0) {
        let (_, addr) = probe.writes[k];
        let Some(ri) = rings
            .iter()
            .rposition(|g| g.cq && g.range.start <= addr && addr < g.range.end)
        else {
            return Err(format!("CQE write response at cycle {c}: not inside a CQ"));
        };
        posts.push((c, rings[ri].vector));
    }
    let cd: Vec<bool> = (0..vectors)
        .map(|v| v < 16 && input.cd >> v & 1 == 1)
        .collect();
    let tick = u64::from(input.tick);
    let end = probe.irq_from + probe.irq.len() as u64;
    let mut best: (u64, String) = (0, String::new());
    let mut explained = false;
    for phase in 0..tick {
        let mut m = Coalescer::new(input.thr, input.time, cd.clone());
        let mut pi = 0;
        let mut fail = None;
        for c in start.max(probe.irq_from)..end {
            let (valid, vector, ready) = probe.irq[(c - probe.irq_from) as usize];
            let seen = valid.then_some(vector);
            if m.shows() != seen {
                fail = Some((
                    c,
                    format!(
                        "cycle {c}: irq shows {seen:?}, the model {:?} (THR {}, TIME {}, \
                         coal_tick {tick}, phase {phase}, CD {:#06x}; completions so far {:?})",
                        m.shows(),
                        input.thr,
                        input.time,
                        input.cd,
                        &posts[pi.max(8) - 8..pi]
                    ),
                ));
                break;
            }
            let mut post = None;
            while pi < posts.len() && posts[pi].0 < c {
                pi += 1;
            }
            if pi < posts.len() && posts[pi].0 == c {
                post = posts[pi].1;
                pi += 1;
            }
            m.step(post, c % tick == phase, ready);
        }
        match fail {
            None => {
                if !m.quiet() {
                    return Err(format!(
                        "at the end the model still owes interrupts: {m:?} (phase {phase})"
                    ));
                }
                explained = true;
                break;
            }
            Some((c, msg)) => {
                if c >= best.0 {
                    best = (c, msg);
                }
            }
        }
    }
    if tracing::enabled!(tracing::Level::DEBUG) {
        let irqs = probe.irq.iter().filter(|i| i.0 && i.2).count();
        tracing::debug!(
            "nvme_coalescing case: THR {} TIME {} tick {} CD {:#06x}: {} cycles checked, {} \
             completions ({} with interrupts), {irqs} interrupts, explained {explained}",
            input.thr,
            input.time,
            input.tick,
            input.cd,
            end - start,
            posts.len(),
            posts.iter().filter(|p| p.1.is_some()).count()
        );
    }
    if !explained {
        return Err(format!(
            "no phase of the time unit explains the interrupts; the one lasting longest: {}",
            best.1
        ));
    }
    if let Some(v) = env.irq.borrow().violations.first() {
        return Err(format!("irq stream protocol: {v}"));
    }
    Ok(())
}

/// Interrupt coalescing, exactly (see the module documentation).
pub struct NvmeCoalescingProp;

impl Property for NvmeCoalescingProp {
    type Input = Input;
    const NAME: &'static str = "nvme_coalescing";
    fn strategy() -> BoxedStrategy<Input> {
        strategy()
    }
    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        run(input, waves)
    }
}
