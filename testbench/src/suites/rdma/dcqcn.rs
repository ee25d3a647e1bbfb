//! Properties of the RoCEv2 congestion-control block `roce_dcqcn_*` (hdl-gen
//! `roce::dcqcn`), on its own (its top of its own; in the engine: `rdma/cc.rs`).
//!
//! - `rdma_dcqcn`: lockstep against `models::roce_dcqcn` (stepped per cycle: time is what the
//!   block computes). Random phases of random CSR values (extremes included: g shift 0 and 15,
//!   zero periods and thresholds, rate floors up to the line rate, zero bursts, the block
//!   disabled), random tick rates, ECN marks, CNPs received (some phases set up for hyper
//!   increase with F > 0: T and BC both past F between frequent CNPs; some for long pacing at
//!   a low rate that never rises), CNPs sent by an engine that
//!   answers `cnp_req_o` late or never (and raises `cnp_done_i` for QPs with nothing pending),
//!   frames sent when `may_send_o` allows (sometimes regardless), QP indices past the last QP,
//!   resets in the middle. In every cycle `cnp_req_o`, `may_send_o`, `rate_o`, `target_o`,
//!   `alpha_o` and both counters must equal the model's.
//! - `rdma_dcqcn_recovery`: end to end, no model: a QP at rest runs unpaced at the line rate;
//!   a burst of CNPs lowers its rate and only its rate; while it is below the line rate, the
//!   bytes it starts stay within what its rates allow (sum of `rate_o` per cycle times the
//!   stream width, plus the burst and one frame); with no more CNPs it is back at the line rate
//!   within the time its parameters imply (F fast-recovery events, `(FFFFh - Rt) / rate_ai`
//!   additive ones, 17 halvings of the last gap, each an increase period of ticks), and then
//!   never waits again.

use crate::drivers::unpack;
use crate::models::roce_dcqcn::{Dcqcn, Inputs, Params, LINE};
use crate::prop::Property;
use crate::rng::Rng;
use crate::rtl::RoceDcqcnTop as Top;
use crate::sim::{Dut, Signal, Sim};
use proptest::prelude::*;
use std::path::Path;

/// The block's ports.
struct Ports {
    enable: Signal,
    cnp_interval: Signal,
    g_shift: Signal,
    rate_ai: Signal,
    rate_hai: Signal,
    rate_min: Signal,
    alpha_period: Signal,
    inc_period: Signal,
    byte_thresh: Signal,
    fast_steps: Signal,
    burst: Signal,
    tick: Signal,
    ecn_valid: Signal,
    ecn_qp: Signal,
    cnp_req: Signal,
    cnp_done: Signal,
    rx_valid: Signal,
    rx_qp: Signal,
    sent_valid: Signal,
    sent_qp: Signal,
    sent_bytes: Signal,
    may_send: Signal,
    rate: Signal,
    target: Signal,
    alpha: Signal,
    np_count: Signal,
    rp_count: Signal,
}

impl Ports {
    fn new(sim: &Sim<Top>) -> Ports {
        let s = |n: &str| sim.signal(n);
        Ports {
            enable: s("enable_i"),
            cnp_interval: s("cnp_interval_i"),
            g_shift: s("g_shift_i"),
            rate_ai: s("rate_ai_i"),
            rate_hai: s("rate_hai_i"),
            rate_min: s("rate_min_i"),
            alpha_period: s("alpha_period_i"),
            inc_period: s("inc_period_i"),
            byte_thresh: s("byte_thresh_i"),
            fast_steps: s("fast_steps_i"),
            burst: s("burst_i"),
            tick: s("tick_i"),
            ecn_valid: s("ecn_valid_i"),
            ecn_qp: s("ecn_qp_i"),
            cnp_req: s("cnp_req_o"),
            cnp_done: s("cnp_done_i"),
            rx_valid: s("cnp_rx_valid_i"),
            rx_qp: s("cnp_rx_qp_i"),
            sent_valid: s("sent_valid_i"),
            sent_qp: s("sent_qp_i"),
            sent_bytes: s("sent_bytes_i"),
            may_send: s("may_send_o"),
            rate: s("rate_o"),
            target: s("target_o"),
            alpha: s("alpha_o"),
            np_count: s("np_cnp_count_o"),
            rp_count: s("rp_cnp_count_o"),
        }
    }

    /// Queue pairs of the top.
    fn qps(&self) -> usize {
        self.cnp_req.width() as usize
    }

    /// Values a QP index input can take (indices past the last QP included).
    fn qp_space(&self) -> u64 {
        1 << self.ecn_qp.width()
    }

    fn configure(&self, p: &Params) {
        self.enable.set(u64::from(p.enable));
        self.cnp_interval.set(u64::from(p.cnp_interval));
        self.g_shift.set(u64::from(p.g_shift));
        self.rate_ai.set(u64::from(p.rate_ai));
        self.rate_hai.set(u64::from(p.rate_hai));
        self.rate_min.set(u64::from(p.rate_min));
        self.alpha_period.set(u64::from(p.alpha_period));
        self.inc_period.set(u64::from(p.inc_period));
        self.byte_thresh.set(u64::from(p.byte_thresh));
        self.fast_steps.set(u64::from(p.fast_steps));
        self.burst.set(u64::from(p.burst));
    }

    fn drive(&self, i: &Inputs) {
        self.tick.set(u64::from(i.tick));
        self.ecn_valid.set(u64::from(i.ecn.is_some()));
        self.ecn_qp.set(i.ecn.unwrap_or(0) as u64);
        self.cnp_done.set(u64::from(i.cnp_done));
        self.rx_valid.set(u64::from(i.cnp_rx.is_some()));
        self.rx_qp.set(i.cnp_rx.unwrap_or(0) as u64);
        self.sent_valid.set(u64::from(i.sent.is_some()));
        self.sent_qp.set(i.sent.map_or(0, |s| s.0) as u64);
        self.sent_bytes.set(i.sent.map_or(0, |s| u64::from(s.1)));
    }

    /// Field `q` of a per-QP output, `w` bits each.
    fn field(sig: &Signal, q: usize, w: usize) -> u64 {
        unpack(&sig.bits(), q, w)
    }

    fn rate(&self, q: usize) -> u16 {
        Self::field(&self.rate, q, 16) as u16
    }
}

/// Bytes per cycle of the top's stream, from its name (`roce_dcqcn_q<Q>_w<W>`).
fn bytes_per_cycle() -> u32 {
    let name = <Top as Dut>::NAME;
    let w: u32 = name
        .rsplit("_w")
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("{name}: no stream width in the name"));
    w / 8
}

/// Compares every output with the model's.
fn compare(ports: &Ports, model: &Dcqcn, p: &Params) -> Result<(), String> {
    let nq = ports.qps();
    let mut diffs = Vec::new();
    let got = ports.cnp_req.get() as u32;
    if got != model.cnp_req() {
        diffs.push(format!("cnp_req_o {got:#b}, model {:#b}", model.cnp_req()));
    }
    let got = ports.may_send.get() as u32;
    if got != model.may_send_mask(p) {
        diffs.push(format!(
            "may_send_o {got:#b}, model {:#b}",
            model.may_send_mask(p)
        ));
    }
    for q in 0..nq {
        let x = &model.qps[q];
        let (rc, rt, a) = (
            Ports::field(&ports.rate, q, 16),
            Ports::field(&ports.target, q, 16),
            Ports::field(&ports.alpha, q, 10),
        );
        if (rc, rt, a) != (u64::from(x.rc), u64::from(x.rt), u64::from(x.alpha)) {
            diffs.push(format!(
                "QP {q}: Rc {rc:#06x} Rt {rt:#06x} alpha {a}, model Rc {:#06x} Rt {:#06x} alpha {} (T {} BC {} credit {})",
                x.rc, x.rt, x.alpha, x.t, x.bc, x.credit
            ));
        }
    }
    let (np, rp) = (ports.np_count.get(), ports.rp_count.get());
    if (np, rp) != (u64::from(model.np_count), u64::from(model.rp_count)) {
        diffs.push(format!(
            "CNPs asked for {np} received {rp}, model {} {}",
            model.np_count, model.rp_count
        ));
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(diffs.join("; "))
    }
}

/// A tick source: one tick every `every` cycles (0: a tick with 50% chance each cycle).
fn tick(rng: &mut Rng, cycle: u64, every: u8) -> bool {
    if every == 0 {
        rng.chance(50)
    } else {
        cycle.is_multiple_of(u64::from(every))
    }
}

/// One phase of `rdma_dcqcn`: a configuration and the event rates.
#[derive(Debug, Clone)]
pub struct Phase {
    params: Params,
    cycles: u16,
    /// Cycles per tick (0: random ticks).
    tick_every: u8,
    ecn_pct: u8,
    cnp_pct: u8,
    send_pct: u8,
    /// Chance per cycle and QP of `cnp_done_i` (pending or not).
    done_pct: u8,
    /// Chance that a frame is reported although `may_send_o` was low.
    ignore_pct: u8,
    max_frame: u16,
    reset_first: bool,
}

fn params_strategy() -> impl Strategy<Value = Params> {
    let period = || prop_oneof![Just(0u16), 1u16..6, 1u16..120, any::<u16>()];
    let rate = || prop_oneof![Just(0u16), 1u16..64, 64u16..4096, any::<u16>(), Just(LINE)];
    (
        (
            prop::bool::weighted(0.9),
            period(),
            prop_oneof![Just(0u8), Just(15u8), 0u8..16, 4u8..9],
            rate(),
            rate(),
            prop_oneof![3 => 0u16..0x4000, 1 => any::<u16>(), 1 => Just(LINE)],
        ),
        (
            period(),
            period(),
            prop_oneof![Just(0u32), 1u32..6000, 0u32..(1 << 24)],
            prop_oneof![Just(0u8), 0u8..8, any::<u8>()],
            prop_oneof![Just(0u16), 64u16..9000, any::<u16>()],
        ),
    )
        .prop_map(
            |(
                (enable, cnp_interval, g_shift, rate_ai, rate_hai, rate_min),
                (alpha_period, inc_period, byte_thresh, fast_steps, burst),
            )| Params {
                enable,
                cnp_interval,
                g_shift,
                rate_ai,
                rate_hai,
                rate_min,
                alpha_period,
                inc_period,
                byte_thresh,
                fast_steps,
                burst,
            },
        )
}

/// See the module documentation.
pub struct DcqcnProp;

impl Property for DcqcnProp {
    type Input = (Vec<Phase>, u64);
    const NAME: &'static str = "rdma_dcqcn";

    fn strategy() -> BoxedStrategy<(Vec<Phase>, u64)> {
        let phase = (
            params_strategy(),
            1u16..700,
            prop_oneof![Just(0u8), Just(1u8), 1u8..9],
            prop_oneof![Just(0u8), 0u8..30],
            prop_oneof![2 => Just(0u8), 1 => 0u8..5, 1 => 0u8..40],
            prop_oneof![Just(100u8), 0u8..=100],
            prop_oneof![Just(0u8), 0u8..=100],
            prop_oneof![3 => Just(0u8), 1 => 0u8..10],
            prop_oneof![1u16..2, 1u16..1500, 1u16..=9000, any::<u16>()],
            prop::bool::weighted(0.1),
        )
            .prop_map(
                |(
                    params,
                    cycles,
                    tick_every,
                    ecn_pct,
                    cnp_pct,
                    send_pct,
                    done_pct,
                    ignore_pct,
                    max_frame,
                    reset_first,
                )| Phase {
                    params,
                    cycles,
                    tick_every,
                    ecn_pct,
                    cnp_pct,
                    send_pct,
                    done_pct,
                    ignore_pct,
                    max_frame,
                    reset_first,
                },
            );
        // Hyper increase with F > 0 needs both T and BC past F between CNPs while Rt is below
        // the line rate: a tick and an increase period every cycle or two, every frame a
        // byte-counter event, frequent CNPs, small additive steps and F.
        let hyper = (
            params_strategy(),
            (1u8..5, 1u16..4096, 1u16..64, 0u16..0x100, 1u16..3),
            (5u8..30, 100u16..700, 1u8..3),
        )
            .prop_map(
                |(mut params, (f, hai, ai, min, inc), (cnp_pct, cycles, tick_every))| {
                    params.enable = true;
                    params.fast_steps = f;
                    params.rate_hai = hai;
                    params.rate_ai = ai;
                    params.rate_min = min;
                    params.inc_period = inc;
                    params.byte_thresh = 1;
                    Phase {
                        params,
                        cycles,
                        tick_every,
                        ecn_pct: 0,
                        cnp_pct,
                        send_pct: 100,
                        done_pct: 0,
                        ignore_pct: 100,
                        max_frame: 64,
                        reset_first: false,
                    }
                },
            );
        // Long pacing: a low rate that never rises, a burst to keep the credit off its cap,
        // frames only when `may_send_o` allows, so the credit hovers at 0 for hundreds of
        // frames without reaching its cap or floor (a fraction of a byte lost per frame shows
        // when the credit lands on 0 exactly).
        let pacing = (
            params_strategy(),
            (4u16..12, 64u16..9000, 2u8..8),
            (300u16..700, 1u16..16),
        )
            .prop_map(|(mut params, (min, burst, cnp_pct), (cycles, max_frame))| {
                params.enable = true;
                // A power of two: CNPs bring Rc down to it, and then the credit's steps
                // (refills of Rc * bytes per cycle, frames of whole bytes from a full credit)
                // land on 0 exactly.
                params.rate_min = 1 << min;
                params.inc_period = 0;
                params.byte_thresh = 0;
                params.burst = burst;
                Phase {
                    params,
                    cycles,
                    tick_every: 1,
                    ecn_pct: 0,
                    cnp_pct,
                    send_pct: 100,
                    done_pct: 0,
                    ignore_pct: 0,
                    max_frame,
                    reset_first: false,
                }
            });
        (
            prop::collection::vec(prop_oneof![8 => phase, 2 => hyper, 1 => pacing], 1..7),
            any::<u64>(),
        )
            .boxed()
    }

    fn run((phases, seed): &(Vec<Phase>, u64), waves: Option<&Path>) -> Result<(), String> {
        let mut sim = Sim::<Top>::maybe_waves(waves);
        let ports = Ports::new(&sim);
        let nq = ports.qps();
        let space = ports.qp_space();
        let mut rng = Rng::new(*seed);
        ports.configure(&phases[0].params);
        ports.drive(&Inputs::default());
        sim.reset(2);
        let mut model = Dcqcn::new(nq, bytes_per_cycle());
        let mut cycle = 0u64;
        for (pi, ph) in phases.iter().enumerate() {
            let p = &ph.params;
            ports.configure(p);
            if ph.reset_first {
                ports.drive(&Inputs::default());
                sim.reset(1);
                model = Dcqcn::new(nq, bytes_per_cycle());
            }
            for _ in 0..ph.cycles {
                sim.settle();
                compare(&ports, &model, p).map_err(|e| {
                    format!("phase {pi}, cycle {cycle}: RTL and model differ: {e} ({p:?})")
                })?;
                let may = ports.may_send.get();
                let mut i = Inputs {
                    tick: tick(&mut rng, cycle, ph.tick_every),
                    ..Inputs::default()
                };
                if rng.chance(ph.ecn_pct) {
                    i.ecn = Some(rng.below(space) as usize);
                }
                if rng.chance(ph.cnp_pct) {
                    i.cnp_rx = Some(rng.below(space) as usize);
                }
                for q in 0..nq {
                    if rng.chance(ph.done_pct) {
                        i.cnp_done |= 1 << q;
                    }
                }
                let q = rng.below(space) as usize;
                let allowed = q >= nq || may >> q & 1 == 1 || rng.chance(ph.ignore_pct);
                if allowed && rng.chance(ph.send_pct) {
                    let bytes = 1 + rng.below(u64::from(ph.max_frame)) as u16;
                    i.sent = Some((q, bytes));
                }
                ports.drive(&i);
                sim.step();
                model.step(p, &i);
                cycle += 1;
            }
        }
        Ok(())
    }
}

/// Stimulus of `rdma_dcqcn_recovery`.
#[derive(Debug, Clone)]
pub struct Recovery {
    params: Params,
    /// The QP that receives the CNPs.
    qp: u8,
    /// CNPs in the burst. The alpha period (at least 100 ticks) is longer than the rest before
    /// the burst and than the spacing, so alpha is 1023 at the first CNP and only grows: the
    /// last CNP must leave the rate below the line rate (a CNP cuts by the alpha it finds).
    cnps: u8,
    /// Cycles between them.
    spacing: u8,
    /// Cycles per tick.
    tick_every: u8,
    /// Chance per cycle that the engine starts a frame on a QP that may send.
    send_pct: u8,
    frame: u16,
    seed: u64,
}

/// See the module documentation.
pub struct DcqcnRecoveryProp;

impl Property for DcqcnRecoveryProp {
    type Input = Recovery;
    const NAME: &'static str = "rdma_dcqcn_recovery";

    fn strategy() -> BoxedStrategy<Recovery> {
        (
            (
                1u8..=10,
                100u16..1000,
                1u16..30,
                256u16..4096,
                0u16..4096,
                1u16..0x8000,
            ),
            (
                prop_oneof![Just(0u32), 1000u32..100_000],
                0u8..=10,
                64u16..9000,
                any::<u8>(),
                1u8..=20,
                1u8..50,
            ),
            (1u8..=4, 0u8..=100, 64u16..=4200, any::<u64>()),
        )
            .prop_map(
                |(
                    (g_shift, alpha_period, inc_period, rate_ai, hai_extra, rate_min),
                    (byte_thresh, fast_steps, burst, qp, cnps, spacing),
                    (tick_every, send_pct, frame, seed),
                )| Recovery {
                    params: Params {
                        enable: true,
                        cnp_interval: 0,
                        g_shift,
                        rate_ai,
                        rate_hai: rate_ai + hai_extra,
                        rate_min,
                        alpha_period,
                        inc_period,
                        byte_thresh,
                        fast_steps,
                        burst,
                    },
                    qp,
                    cnps,
                    spacing,
                    tick_every,
                    send_pct,
                    frame,
                    seed,
                },
            )
            .boxed()
    }

    fn run(r: &Recovery, waves: Option<&Path>) -> Result<(), String> {
        let mut sim = Sim::<Top>::maybe_waves(waves);
        let ports = Ports::new(&sim);
        let nq = ports.qps();
        let bpc = u64::from(bytes_per_cycle());
        let target = usize::from(r.qp) % nq;
        let p = &r.params;
        let mut rng = Rng::new(r.seed);
        ports.configure(p);
        ports.drive(&Inputs::default());
        sim.reset(2);
        let mut cycle = 0u64;
        // One cycle of traffic: every QP that may send starts a frame with send_pct chance (the
        // sent port takes one a cycle: a random QP is offered). Returns the QP that sent.
        let mut traffic = |sim: &mut Sim<Top>, cnp: bool, cycle: u64| -> Option<usize> {
            let may = ports.may_send.get();
            let q = rng.below(nq as u64) as usize;
            let send = may >> q & 1 == 1 && rng.chance(r.send_pct);
            ports.drive(&Inputs {
                tick: cycle.is_multiple_of(u64::from(r.tick_every)),
                cnp_rx: cnp.then_some(target),
                sent: send.then_some((q, r.frame)),
                ..Inputs::default()
            });
            sim.step();
            send.then_some(q)
        };
        // At rest: line rate, never waiting.
        for _ in 0..64 {
            sim.settle();
            if ports.may_send.get() != (1 << nq) - 1 || (0..nq).any(|q| ports.rate(q) != LINE) {
                return Err(format!(
                    "cycle {cycle}: at rest may_send_o {:#b}, QP 0 rate {:#x}",
                    ports.may_send.get(),
                    ports.rate(0)
                ));
            }
            traffic(&mut sim, false, cycle);
            cycle += 1;
        }
        // The burst of CNPs on one QP.
        for n in 0..r.cnps {
            for s in 0..r.spacing {
                traffic(&mut sim, s + 1 == r.spacing, cycle);
                cycle += 1;
            }
            sim.settle();
            for q in (0..nq).filter(|&q| q != target) {
                if ports.rate(q) != LINE || ports.may_send.get() >> q & 1 == 0 {
                    return Err(format!(
                        "after CNP {n} on QP {target}: QP {q} (no CNP) has rate {:#x}, may_send {}",
                        ports.rate(q),
                        ports.may_send.get() >> q & 1
                    ));
                }
            }
        }
        sim.settle();
        let (rc0, rt0) = (
            ports.rate(target),
            Ports::field(&ports.target, target, 16) as u16,
        );
        if rc0 == LINE || rc0 < p.rate_min || rt0 < rc0 {
            return Err(format!(
                "after {} CNPs on QP {target}: Rc {rc0:#x}, Rt {rt0:#x} (rate_min {:#x}): the rate did not drop",
                r.cnps, p.rate_min
            ));
        }
        // Recovery bound, in increase-timer events after the last CNP.
        let events =
            u64::from(p.fast_steps) + u64::from(LINE - rt0).div_ceil(u64::from(p.rate_ai)) + 17;
        let bound = (events * u64::from(p.inc_period) + 1) * u64::from(r.tick_every);
        // While paced (from the last CNP on): bytes started <= allowed by the rates read back,
        // plus the burst and one frame. In 2^-16 bytes.
        let mut allowed = i128::from(p.burst) + i128::from(r.frame);
        allowed <<= 16;
        let mut sent = 0i128;
        let start = cycle;
        loop {
            sim.settle();
            let rc = ports.rate(target);
            if rc == LINE {
                break;
            }
            if cycle - start > bound {
                return Err(format!(
                    "QP {target} not back at the line rate {bound} cycles after the last CNP (Rc {rc:#x}, Rt {:#x} then; Rt {rt0:#x} Rc {rc0:#x} after the burst; {events} increase events of {} ticks of {} cycles)",
                    Ports::field(&ports.target, target, 16),
                    p.inc_period,
                    r.tick_every
                ));
            }
            allowed += i128::from(rc) * i128::from(bpc as u32);
            if traffic(&mut sim, false, cycle) == Some(target) {
                sent += i128::from(r.frame) << 16;
                if sent > allowed {
                    return Err(format!(
                        "QP {target} started {} bytes in {} cycles below the line rate; its rates allow {}",
                        sent >> 16,
                        cycle - start + 1,
                        allowed >> 16
                    ));
                }
            }
            cycle += 1;
        }
        // Back at the line rate: never waits again.
        for _ in 0..200 {
            sim.settle();
            if ports.may_send.get() != (1 << nq) - 1 {
                return Err(format!(
                    "cycle {cycle}: at the line rate again, may_send_o {:#b}",
                    ports.may_send.get()
                ));
            }
            traffic(&mut sim, false, cycle);
            cycle += 1;
        }
        Ok(())
    }
}
