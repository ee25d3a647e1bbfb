//! Properties under saturation, with every check of the harness (`super`) on top:
//!
//! - `qos_flood`: one tenant floods (commands always waiting, unlimited or with a high limit)
//!   while another, rate-limited below its round-robin share, trickles; both in one class with
//!   random weights, under output backpressure. Over the run the trickling tenant gets its
//!   configured rate within 1%. Isolation from full transport channels: in some cases the
//!   flooder's channel, or that of a third flooding queue of the same class (weight 0), is held
//!   full for long stretches (a stuck channel), or those two channels drop at random; the
//!   trickler's channel always has space, and it must still get its rate within 1% (a command
//!   of a full channel that reached the output register would block it there, so the
//!   trickler's rate is what a full channel must not touch).
//! - `qos_share`: two to all queues of one class (at most one per grant table entry) flood
//!   with no limit, and the transport takes commands in 30% to 60% of the cycles (so commands
//!   wait in the block: saturation); each
//!   queue gets `(w + 1) / sum(w + 1)` of the releases within 1% (relative) of that share. In
//!   some cases one member's channel is stuck full for long stretches: the other members then
//!   share the releases by their weights alone, within 1% (the weighted round robin order among
//!   the eligible heads is kept, a head passed over for its channel keeps its place).
//!   In half the cases members' weights are rewritten in the first few thousand cycles (every
//!   decision checked against the weight in effect, `super::Traffic::weight_writes`); the
//!   shares are then counted from the last write's response on, by the weights written.
//!   When the transport takes a command every cycle, the front end's own fetch order decides
//!   (the block holds at most the one command each queue just sent), which this property does
//!   not cover.

use super::{dims, run, Channels, Gen, Outcome, Stuck, Timing, Traffic};
use crate::models::qos::{wrr_shares, Config, Grant, Limit, NsCfg, QueueCfg, Sqe, BW_FRAC};
use crate::prop::Property;
use crate::rng::Rng;
use proptest::prelude::*;
use std::collections::VecDeque;
use std::path::Path;

/// The configuration of a saturation run: `members` (queue, weight) in `class`, the rest idle,
/// each member granted all of namespace 1 (512-byte LBAs); `limits` per member.
pub fn saturation_config(class: u8, members: &[(usize, u8, Limit)]) -> Config {
    let d = dims();
    let mut queues = vec![
        QueueCfg {
            class: 3,
            ..QueueCfg::default()
        };
        d.queues
    ];
    for &(q, weight, bw) in members {
        queues[q] = QueueCfg {
            class,
            weight,
            bw,
            iops: Limit::default(),
        };
    }
    let mut namespaces = vec![NsCfg::default(); d.namespaces];
    namespaces[0] = NsCfg {
        size: 1 << 30,
        lba_shift: 9,
        ..NsCfg::default()
    };
    let grants = members
        .iter()
        .map(|&(q, ..)| Grant {
            sqid: q as u16 + 1,
            nsid: 1,
            read: true,
            write: true,
            first: 0,
            last: (1 << 30) - 1,
        })
        .collect();
    Config {
        queues,
        namespaces,
        grants,
    }
}

/// Endless commands on namespace 1: reads and writes of `nlb` (or random up to 7) blocks.
pub fn flooder(fixed_nlb: Option<u16>) -> Gen {
    let mut cid = 0u16;
    Box::new(move |rng: &mut Rng| {
        cid = cid.wrapping_add(1);
        let r = rng.next_u64();
        Sqe {
            opcode: if fixed_nlb.is_some() || r & 1 == 0 {
                2
            } else {
                1
            },
            cid,
            nsid: 1,
            slba: (r >> 8) % ((1 << 30) - 64),
            nlb: fixed_nlb.unwrap_or(((r >> 4) & 7) as u16),
        }
    })
}

/// Generated stimulus of `qos_flood`.
#[derive(Clone, Debug)]
pub struct FloodInput {
    flood: u8,
    trickle: u8,
    class: u8,
    w_flood: u8,
    w_trickle: u8,
    /// Trickle rate: whole bytes per cycle and a fraction (16 bits).
    rate: (u32, u16),
    /// The flooder's own limit, bytes per cycle (None: unlimited).
    flood_rate: Option<u32>,
    out_stall: u8,
    /// 0: channels open; 1: the flooder's channel stuck; 2: a third flooding queue's channel
    /// stuck; 3: the flooder's and the third queue's channels drop at random.
    channels: u8,
    /// The third queue (an offset past the other two).
    bystander: u8,
    /// Stuck: cycles full and open per period; drops: chance in percent and longest spell.
    full: u32,
    open: u32,
    drop: (u8, u16),
    cycles: u64,
    seed: u64,
}

fn flood_strategy() -> BoxedStrategy<FloodInput> {
    (
        (any::<u8>(), any::<u8>(), 0u8..4, 0u8..8, 0u8..8),
        (
            (64u32..256, any::<u16>()),
            prop::option::of(2048u32..65536),
            0u8..30,
            40_000u64..60_000,
            any::<u64>(),
        ),
        (
            prop_oneof![2 => Just(0u8), 1 => Just(1u8), 1 => Just(2u8), 1 => Just(3u8)],
            any::<u8>(),
            1000u32..8000,
            500u32..6000,
            (1u8..40, 1u16..100),
        ),
    )
        .prop_map(
            |(
                (flood, trickle, class, w_flood, w_trickle),
                (rate, flood_rate, out_stall, cycles, seed),
                (channels, bystander, full, open, drop),
            )| {
                FloodInput {
                    flood,
                    trickle,
                    class,
                    w_flood,
                    w_trickle,
                    rate,
                    flood_rate,
                    out_stall,
                    channels,
                    bystander,
                    full,
                    open,
                    drop,
                    cycles,
                    seed,
                }
            },
        )
        .boxed()
}

/// Bytes of each trickle command (8 blocks of 512 bytes).
const TRICKLE_BYTES: u64 = 4096;

/// A flood run; returns the outcome and the trickler's queue.
pub fn run_flood(input: &FloodInput, waves: Option<&Path>) -> Result<(Outcome, usize), String> {
    let nq = dims().queues;
    let f = usize::from(input.flood) % nq;
    let t = (f + 1 + usize::from(input.trickle) % (nq - 1)) % nq;
    let rate = input.rate.0 << BW_FRAC | u32::from(input.rate.1);
    // Enough burst to ride out the waits of round robin and backpressure without losing tokens.
    let burst = TRICKLE_BYTES as u32 + 200 * input.rate.0;
    let mut members = vec![
        (
            f,
            input.w_flood,
            input.flood_rate.map_or(Limit::default(), |r| Limit {
                rate: r << BW_FRAC,
                burst: 65536,
            }),
        ),
        (t, input.w_trickle, Limit { rate, burst }),
    ];
    let mut gens = vec![
        (f as u16 + 1, flooder(None)),
        (t as u16 + 1, flooder(Some(7))),
    ];
    // The third queue: the first queue after the two, going round, by the drawn offset.
    let b = (0..nq)
        .map(|k| (usize::from(input.bystander) + k) % nq)
        .find(|&q| q != f && q != t)
        .expect("at least three queues");
    if input.channels >= 2 {
        members.push((b, 0, Limit::default()));
        gens.push((b as u16 + 1, flooder(None)));
    }
    let stuck = |queue| Stuck {
        queue,
        full: input.full,
        open: input.open,
    };
    let channels = match input.channels {
        0 => Channels::OPEN,
        1 => Channels {
            stuck: Some(stuck(f)),
            ..Channels::OPEN
        },
        2 => Channels {
            stuck: Some(stuck(b)),
            ..Channels::OPEN
        },
        _ => Channels {
            drop_mask: 1 << f | 1 << b,
            drop_percent: input.drop.0,
            max_run: input.drop.1,
            stuck: None,
        },
    };
    let cfg = saturation_config(input.class, &members);
    let mut traffic = Traffic {
        lists: Vec::new(),
        gens,
        timed: Vec::new(),
        feed_end: input.cycles,
        least_in_flight: true,
        fill: [0x5a; 64],
        weight_writes: VecDeque::new(),
    };
    let timing = Timing {
        in_idle: 0,
        out_stall: input.out_stall,
        cpl_stall: 0,
        channels,
        warm_reset: None,
        ignore_space: false,
        lazy_program: false,
    };
    let out = run(
        &cfg,
        &mut traffic,
        timing,
        input.seed,
        input.cycles * 4,
        waves,
    )?;
    Ok((out, t))
}

fn check_flood(input: &FloodInput, waves: Option<&Path>) -> Result<(), String> {
    let (out, t) = run_flood(input, waves)?;
    let got: u64 = out
        .releases
        .iter()
        .filter(|r| r.queue == t && r.cycle < input.cycles)
        .map(|r| r.cost)
        .sum();
    let rate = f64::from(input.rate.0 << BW_FRAC | u32::from(input.rate.1)) / 65536.0;
    let want = rate * input.cycles as f64;
    let err = got as f64 / want - 1.0;
    tracing::debug!("trickle error {:+.3}%", err * 100.0);
    if err.abs() > 0.01 {
        return Err(format!(
            "the trickling SQ {} got {got} bytes in {} cycles, its rate allows {want:.0}: off by {:.2}%",
            t + 1,
            input.cycles,
            err * 100.0
        ));
    }
    Ok(())
}

/// A trickling tenant next to a flooding one gets its configured rate within 1%.
pub struct QosFloodProp;

impl Property for QosFloodProp {
    type Input = FloodInput;
    const NAME: &'static str = "qos_flood";
    fn strategy() -> BoxedStrategy<FloodInput> {
        flood_strategy()
    }
    fn run(input: &FloodInput, waves: Option<&Path>) -> Result<(), String> {
        check_flood(input, waves)
    }
}

/// Generated stimulus of `qos_share`.
#[derive(Clone, Debug)]
pub struct ShareInput {
    /// Weights of the members (one per queue, from a random first queue on).
    weights: Vec<u8>,
    first: u8,
    class: u8,
    out_stall: u8,
    /// A member whose channel is stuck (index into `weights`, modulo), cycles full and open.
    stuck: Option<(u8, u32, u32)>,
    /// Weight writes in the first cycles of the run: (cycles after the last one, member
    /// (modulo), new weight).
    weight_writes: Vec<(u16, u8, u8)>,
    cycles: u64,
    seed: u64,
}

fn share_strategy() -> BoxedStrategy<ShareInput> {
    // One grant per member.
    let d = dims();
    (
        prop::collection::vec(0u8..8, 2..=d.queues.min(d.grants)),
        any::<u8>(),
        0u8..4,
        40u8..70,
        prop::option::weighted(0.4, (any::<u8>(), 1000u32..8000, 500u32..6000)),
        prop_oneof![
            1 => Just(Vec::new()),
            1 => prop::collection::vec((0u16..300, any::<u8>(), 0u8..8), 1..12),
        ],
        40_000u64..60_000,
        any::<u64>(),
    )
        .prop_map(
            |(weights, first, class, out_stall, stuck, weight_writes, cycles, seed)| ShareInput {
                weights,
                first,
                class,
                out_stall,
                stuck,
                weight_writes,
                cycles,
                seed,
            },
        )
        .boxed()
}

/// A saturation run of `weights` in one class, member `stuck.0`'s channel full for `stuck.1`
/// cycles in every `stuck.1 + stuck.2`, the weights rewritten by `writes` ((traffic cycle,
/// member, new weight)); returns the releases per member, counted over the feeding cycles
/// from the last write's response on.
#[allow(clippy::too_many_arguments)]
pub fn run_share(
    weights: &[u8],
    first: usize,
    class: u8,
    out_stall: u8,
    stuck: Option<(usize, u32, u32)>,
    writes: &[(u64, usize, u8)],
    cycles: u64,
    seed: u64,
    waves: Option<&Path>,
) -> Result<(Outcome, Vec<u64>), String> {
    let nq = dims().queues;
    let members: Vec<(usize, u8, Limit)> = weights
        .iter()
        .enumerate()
        .map(|(i, &w)| ((first + i) % nq, w, Limit::default()))
        .collect();
    let cfg = saturation_config(class, &members);
    let mut traffic = Traffic {
        lists: Vec::new(),
        timed: Vec::new(),
        gens: members
            .iter()
            .map(|m| (m.0 as u16 + 1, flooder(None)))
            .collect(),
        feed_end: cycles,
        least_in_flight: true,
        fill: [0xc3; 64],
        weight_writes: writes
            .iter()
            .map(|&(at, m, w)| (at, members[m].0, w))
            .collect(),
    };
    let timing = Timing {
        in_idle: 0,
        out_stall,
        cpl_stall: 0,
        channels: Channels {
            stuck: stuck.map(|(m, full, open)| Stuck {
                queue: members[m].0,
                full,
                open,
            }),
            ..Channels::OPEN
        },
        warm_reset: None,
        ignore_space: false,
        lazy_program: false,
    };
    let out = run(&cfg, &mut traffic, timing, seed, cycles * 4, waves)?;
    if tracing::enabled!(tracing::Level::DEBUG) {
        let seq: Vec<usize> = out.releases.iter().take(60).map(|r| r.queue).collect();
        tracing::debug!("first releases {seq:?}");
    }
    let counts = members
        .iter()
        .map(|m| {
            out.releases
                .iter()
                .filter(|r| r.queue == m.0 && r.cycle >= out.weights_settled && r.cycle < cycles)
                .count() as u64
        })
        .collect();
    Ok((out, counts))
}

fn check_share(input: &ShareInput, waves: Option<&Path>) -> Result<(), String> {
    let nq = dims().queues;
    let stuck = input
        .stuck
        .map(|(m, full, open)| (usize::from(m) % input.weights.len(), full, open));
    // Weight writes early in the run; the shares are those of the weights written.
    let mut weights = input.weights.clone();
    let mut at = 0u64;
    let writes: Vec<(u64, usize, u8)> = input
        .weight_writes
        .iter()
        .map(|&(gap, m, w)| {
            at += u64::from(gap);
            let m = usize::from(m) % weights.len();
            weights[m] = w;
            (at, m, w)
        })
        .collect();
    let (_, counts) = run_share(
        &input.weights,
        usize::from(input.first) % nq,
        input.class,
        input.out_stall,
        stuck,
        &writes,
        input.cycles,
        input.seed,
        waves,
    )?;
    // With a stuck member, the others' shares among themselves.
    let others: Vec<usize> = (0..counts.len())
        .filter(|&i| stuck.is_none_or(|s| s.0 != i))
        .collect();
    let total: u64 = others.iter().map(|&i| counts[i]).sum();
    let want = wrr_shares(&others.iter().map(|&i| weights[i]).collect::<Vec<_>>());
    tracing::debug!("share counts {counts:?}, {total} among members {others:?}, want {want:?}");
    for (&i, &w) in others.iter().zip(&want) {
        let c = counts[i];
        let share = c as f64 / total as f64;
        if (share / w - 1.0).abs() > 0.01 {
            return Err(format!(
                "member {i} (weight {}) got {c} of {total} releases, a share of {share:.4}; its weight gives {w:.4}",
                weights[i]
            ));
        }
    }
    Ok(())
}

/// Under saturation each weight gets its share within 1%.
pub struct QosShareProp;

impl Property for QosShareProp {
    type Input = ShareInput;
    const NAME: &'static str = "qos_share";
    fn strategy() -> BoxedStrategy<ShareInput> {
        share_strategy()
    }
    fn run(input: &ShareInput, waves: Option<&Path>) -> Result<(), String> {
        check_share(input, waves)
    }
}
