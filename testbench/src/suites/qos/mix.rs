//! Property `qos_mix`: random limits (bandwidth and IOPS, per queue and per namespace, some
//! unlimited, fractional rates, small and zero bursts), random classes and weights, a random
//! grant table (unused entries, SQ ids and NSIDs the block does not serve, read-only and
//! write-only grants, narrow and full LBA ranges), random namespaces (absent, small, ending at
//! 2^64) and a random command mix (Read, Write, Compare, Write Zeroes, DSM, Flush, unknown
//! opcodes; inside, across and past the grants' ranges; unknown and broadcast NSIDs), under
//! random idle cycles and backpressure on both outputs, and a random pattern of the transport
//! channels' space (all open, random drops, a stuck channel: `super::channels_strategy`).
//! In about a third of the cases a hardware reset cuts unchecked traffic short before the
//! checked run, on the same block (`Timing::warm_reset`). In about one case in seven the front
//! end ignores `sq_space_o` (`Timing::ignore_space`: a command for a full queue waits in the
//! check stage), and in a third of the cases queues' weights are rewritten while commands flow
//! (`Traffic::weight_writes`: a decision while a write is in flight may use either weight, every
//! later one the new). In about three cases in ten the traffic and the grants use two to four
//! queues only, so that one queue's logic (the block holds 64 copies) sees deep, mixed
//! traffic; in half of those, half of the queues keep the reset configuration and are never
//! written (`Timing::lazy_program`). Some commands end around their namespace's last LBA
//! inside a grant, so only the namespace's bound decides. Every check of the harness applies
//! (see `super`).

use super::{channels_strategy, dims, run, Channels, Timing, Traffic};
use crate::models::qos::{Config, Grant, Limit, NsCfg, QueueCfg, Sqe};
use crate::prop::Property;
use crate::rng::Rng;
use proptest::prelude::*;
use std::collections::VecDeque;
use std::path::Path;

/// One generated command, resolved against the grant table when it runs.
#[derive(Clone, Debug)]
pub struct CmdIn {
    /// Aim at grant entry `g % grants` (its queue, namespace and range), or anywhere.
    aim: Option<u8>,
    sqid: u16,
    nsid: u32,
    opcode: u8,
    /// 0 inside the range, 1 straddling its end, 2 random, 3 ending around its namespace's
    /// last LBA (with a full-range grant: only the namespace's bound applies).
    place: u8,
    off: u64,
    nlb: u16,
}

/// Generated stimulus.
#[derive(Clone, Debug)]
pub struct Input {
    queues: Vec<QueueCfg>,
    namespaces: Vec<NsCfg>,
    grants: Vec<Grant>,
    cmds: Vec<CmdIn>,
    in_idle: u8,
    out_stall: u8,
    cpl_stall: u8,
    channels: Channels,
    /// Unchecked traffic cycles before a hardware reset, ahead of the checked run
    /// ([`Timing::warm_reset`]).
    warm_reset: Option<u16>,
    /// The front end ignores `sq_space_o` ([`Timing::ignore_space`]).
    ignore_space: bool,
    /// Weight writes while traffic runs: (cycles after the last one, which of the queues the
    /// commands use, new weight).
    weight_writes: Vec<(u16, u8, u8)>,
    /// Traffic on a few queues only (a queue's own logic then sees deep, mixed traffic: there
    /// are 64 copies of it); with `lazy`, half of them keep the reset configuration, left
    /// unwritten ([`Timing::lazy_program`]).
    focus: Option<(Vec<u8>, bool)>,
    seed: u64,
}

fn limit(lo: u32, hi: u32, frac: u32, burst: u32) -> impl Strategy<Value = Limit> {
    prop_oneof![
        1 => Just(Limit::default()),
        2 => (lo..hi, 0u32..(1 << frac), 0..burst).prop_map(move |(whole, f, burst)| Limit {
            rate: (whole << frac) | f,
            burst,
        }),
    ]
}

fn queue() -> impl Strategy<Value = QueueCfg> {
    (
        0u8..4,
        prop_oneof![3 => 0u8..4, 1 => any::<u8>()],
        limit(64, 2048, 16, 16384),
        prop_oneof![
            1 => Just(Limit::default()),
            2 => ((1u32 << 18)..(1 << 24), 0u32..8).prop_map(|(rate, burst)| Limit { rate, burst }),
        ],
    )
        .prop_map(|(class, weight, bw, iops)| QueueCfg {
            class,
            weight,
            bw,
            iops,
        })
}

fn namespace() -> impl Strategy<Value = NsCfg> {
    (
        prop_oneof![
            1 => Just(0u64),
            2 => 1u64..(1 << 20),
            6 => (1u64 << 24)..(1 << 40),
            1 => (u64::MAX - 1000)..=u64::MAX,
        ],
        prop_oneof![3 => Just(9u8), 1 => Just(12u8), 1 => 0u8..13],
        // Slow rates (16 to 256 bytes a cycle) keep a waiting head's bucket in its last token
        // of debt for whole cycles, so a bucket that admits one token early is seen.
        prop_oneof![
            2 => Just(Limit::default()),
            1 => limit(256, 8192, 16, 1 << 16),
            1 => limit(16, 256, 16, 1 << 14),
        ],
        prop_oneof![
            1 => Just(Limit::default()),
            1 => ((1u32 << 20)..(1 << 24), 0u32..16).prop_map(|(rate, burst)| Limit { rate, burst }),
        ],
    )
        .prop_map(|(size, lba_shift, bw, iops)| NsCfg {
            size,
            lba_shift,
            bw,
            iops,
        })
}

fn grant(nq: u16, nn: u8) -> impl Strategy<Value = Grant> {
    (
        prop_oneof![1 => Just(0u16), 12 => 1..=nq, 1 => nq + 1..nq + 3],
        prop_oneof![12 => 1..=nn, 1 => Just(nn + 1), 1 => Just(0u8)],
        prop::bool::weighted(0.85),
        prop::bool::weighted(0.85),
        prop_oneof![
            3 => (0u64..(1 << 20), 0u64..(1 << 16)).prop_map(|(a, s)| (a, a + s)),
            1 => Just((0u64, u64::MAX)),
        ],
    )
        .prop_map(|(sqid, nsid, read, write, (first, last))| Grant {
            sqid,
            nsid,
            read,
            write,
            first,
            last,
        })
}

fn command(nq: u16, nn: u32) -> impl Strategy<Value = CmdIn> {
    (
        prop::option::weighted(0.85, any::<u8>()),
        prop_oneof![8 => 1..=nq, 1 => Just(0u16), 1 => nq + 1..nq + 4],
        prop_oneof![8 => 1..=nn, 1 => Just(0u32), 1 => Just(nn + 1), 1 => Just(u32::MAX)],
        prop_oneof![
            4 => Just(0x02u8),
            4 => Just(0x01u8),
            1 => Just(0x05u8),
            1 => Just(0x08u8),
            1 => Just(0x09u8),
            1 => Just(0x00u8),
            1 => any::<u8>(),
        ],
        prop_oneof![12 => Just(0u8), 2 => Just(1u8), 1 => Just(2u8), 1 => Just(3u8)],
        any::<u64>(),
        prop_oneof![6 => 0u16..16, 2 => 0u16..64],
    )
        .prop_map(|(aim, sqid, nsid, opcode, place, off, nlb)| CmdIn {
            aim,
            sqid,
            nsid,
            opcode,
            place,
            off,
            nlb,
        })
}

fn strategy() -> BoxedStrategy<Input> {
    let d = dims();
    let (nq, nn) = (d.queues as u16, d.namespaces as u8);
    (
        prop::collection::vec(queue(), d.queues),
        prop::collection::vec(namespace(), d.namespaces),
        prop::collection::vec(grant(nq, nn), d.grants),
        prop::collection::vec(command(nq, u32::from(nn)), 1..120),
        (0u8..40, 0u8..60, 0u8..60, any::<u64>()),
        channels_strategy(d.queues),
        prop::option::weighted(0.3, 1u16..1500),
        prop::option::weighted(
            0.3,
            (prop::collection::vec(any::<u8>(), 2..5), any::<bool>()),
        ),
        (
            prop::bool::weighted(0.15),
            prop_oneof![
                2 => Just(Vec::new()),
                1 => prop::collection::vec(
                    (0u16..40, any::<u8>(), prop_oneof![3 => 0u8..4, 1 => any::<u8>()]),
                    1..12,
                ),
            ],
        ),
    )
        .prop_map(
            move |(
                queues,
                namespaces,
                grants,
                cmds,
                (in_idle, out_stall, cpl_stall, seed),
                channels,
                warm_reset,
                focus,
                (ignore_space, weight_writes),
            )| {
                let (mut queues, mut grants, mut cmds) = (queues, grants, cmds);
                if let Some((f, lazy)) = &focus {
                    // SQ ids the block serves move onto the focus queues.
                    let onto = |s: u16| {
                        if (1..=nq).contains(&s) {
                            u16::from(f[usize::from(s - 1) % f.len()]) % nq + 1
                        } else {
                            s
                        }
                    };
                    grants.iter_mut().for_each(|g| g.sqid = onto(g.sqid));
                    cmds.iter_mut().for_each(|c| c.sqid = onto(c.sqid));
                    if *lazy {
                        for &q in f.iter().step_by(2) {
                            queues[usize::from(q) % usize::from(nq)] = QueueCfg::default();
                        }
                    }
                }
                Input {
                    queues,
                    namespaces,
                    grants,
                    cmds,
                    in_idle,
                    out_stall,
                    cpl_stall,
                    channels,
                    warm_reset,
                    ignore_space,
                    weight_writes,
                    focus,
                    seed,
                }
            },
        )
        .boxed()
}

/// The SQ id and SQE of generated command `i`.
fn resolve(input: &Input, i: usize, c: &CmdIn) -> (u16, Sqe) {
    let (mut sqid, mut nsid, mut slba) = (c.sqid, c.nsid, c.off % (1 << 21));
    if let Some(g) = c.aim {
        let g = &input.grants[usize::from(g) % input.grants.len()];
        if g.sqid != 0 {
            sqid = g.sqid;
        }
        nsid = u32::from(g.nsid);
        let span = g.last - g.first;
        let ns_size = input
            .namespaces
            .get((nsid as usize).wrapping_sub(1))
            .map_or(0, |n| n.size);
        slba = match c.place {
            0 => g.first + c.off % span.saturating_add(1).max(1),
            3 => ns_size
                .wrapping_sub(u64::from(c.nlb))
                .wrapping_add(c.off % 3)
                .wrapping_sub(1),
            1 => g
                .last
                .saturating_sub(u64::from(c.nlb))
                .wrapping_add(c.off % 2),
            _ => c.off,
        };
    } else if c.place == 1 {
        // Near the end of the namespace.
        let size = nsid
            .checked_sub(1)
            .and_then(|n| input.namespaces.get(n as usize))
            .map_or(0, |n| n.size);
        slba = size
            .wrapping_sub(u64::from(c.nlb))
            .wrapping_add(c.off % 3)
            .wrapping_sub(1);
    }
    (
        sqid,
        Sqe {
            opcode: c.opcode,
            cid: i as u16,
            nsid,
            slba,
            nlb: c.nlb,
        },
    )
}

fn run_mix(input: &Input, waves: Option<&Path>) -> Result<(), String> {
    let cfg = Config {
        queues: input.queues.clone(),
        namespaces: input.namespaces.clone(),
        grants: input.grants.clone(),
    };
    let mut lists: Vec<(u16, VecDeque<Sqe>)> = Vec::new();
    for (i, c) in input.cmds.iter().enumerate() {
        let (sqid, sqe) = resolve(input, i, c);
        match lists.iter_mut().find(|l| l.0 == sqid) {
            Some(l) => l.1.push_back(sqe),
            None => lists.push((sqid, VecDeque::from([sqe]))),
        }
    }
    let mut rng = Rng::new(input.seed);
    let mut fill = [0u8; 64];
    for b in fill.iter_mut() {
        *b = rng.next_u64() as u8;
    }
    // Weight writes aim at the queues the commands use (the block's SQ ids among them).
    let used: Vec<usize> = lists
        .iter()
        .map(|l| usize::from(l.0))
        .filter(|&s| (1..=input.queues.len()).contains(&s))
        .map(|s| s - 1)
        .collect();
    let mut at = 0u64;
    let weight_writes = if used.is_empty() {
        VecDeque::new()
    } else {
        input
            .weight_writes
            .iter()
            .map(|&(gap, pick, weight)| {
                at += u64::from(gap);
                (at, used[usize::from(pick) % used.len()], weight)
            })
            .collect()
    };
    let mut traffic = Traffic {
        lists,
        timed: Vec::new(),
        gens: Vec::new(),
        feed_end: 0,
        least_in_flight: false,
        fill,
        weight_writes,
    };
    let timing = Timing {
        in_idle: input.in_idle,
        out_stall: input.out_stall,
        cpl_stall: input.cpl_stall,
        channels: input.channels,
        warm_reset: input.warm_reset,
        ignore_space: input.ignore_space,
        lazy_program: input.focus.as_ref().is_some_and(|f| f.1),
    };
    let out = run(&cfg, &mut traffic, timing, input.seed, 3_000_000, waves)?;
    if out.releases.len() + out.denied != input.cmds.len() {
        return Err(format!(
            "{} commands sent, {} released and {} denied",
            input.cmds.len(),
            out.releases.len(),
            out.denied
        ));
    }
    Ok(())
}

/// Random limits, grants and command mixes (see the module documentation).
pub struct QosMixProp;

impl Property for QosMixProp {
    type Input = Input;
    const NAME: &'static str = "qos_mix";
    fn strategy() -> BoxedStrategy<Input> {
        strategy()
    }
    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        run_mix(input, waves)
    }
}
