//! Property `qos_idle`: three to eight queues far apart in id (spread over every queue the
//! block serves), each rate limited with a small burst, send bursts of commands separated by
//! long idle stretches (up to 20 000 cycles), several of them active at once, under random
//! output backpressure and channel drops. The lazy buckets must credit the whole idle time,
//! capped at the burst, from the time stamp of their last charge. Every check of the harness
//! (`super`) applies, and catches both ways of getting it wrong: a release beyond the burst
//! cap has no budget in the exact per-cycle model; a refill from a stale time stamp, or a
//! budget bit that is not set again, leaves a surely eligible head waiting (work
//! conservation) or miscounts `thr_*`.

use super::{channels_strategy, dims, run, Channels, Timing, Traffic};
use crate::models::qos::{Config, Grant, Limit, NsCfg, QueueCfg, Sqe};
use crate::prop::Property;
use proptest::prelude::*;
use std::collections::VecDeque;
use std::path::Path;

/// One member queue: class, weight, bandwidth limit, IOPS limit, its bursts.
#[derive(Clone, Debug)]
pub struct Member {
    class: u8,
    weight: u8,
    bw: Limit,
    iops: Limit,
    /// (idle cycles before the burst, commands, NLB of each, write).
    bursts: Vec<(u32, u8, u16, bool)>,
}

/// Generated stimulus of `qos_idle`.
#[derive(Clone, Debug)]
pub struct IdleInput {
    members: Vec<Member>,
    /// Where the spread of member queues starts.
    offset: u16,
    /// The namespace's bandwidth limit (often none).
    ns_bw: Limit,
    out_stall: u8,
    channels: Channels,
    seed: u64,
}

fn member() -> impl Strategy<Value = Member> {
    (
        0u8..4,
        0u8..4,
        (8u32..256, 0u32..(1 << 16), 1024u32..16384),
        prop::option::weighted(0.3, ((1u32 << 18)..(1 << 22), 1u32..8)),
        prop::collection::vec((100u32..20_000, 1u8..12, 0u16..16, any::<bool>()), 2..6),
    )
        .prop_map(
            |(class, weight, (whole, frac, burst), iops, bursts)| Member {
                class,
                weight,
                bw: Limit {
                    rate: whole << 16 | frac,
                    burst,
                },
                iops: iops.map_or(Limit::default(), |(rate, burst)| Limit { rate, burst }),
                bursts,
            },
        )
}

fn strategy() -> BoxedStrategy<IdleInput> {
    let nq = dims().queues;
    (
        prop::collection::vec(member(), 3..=8.min(nq)),
        any::<u16>(),
        prop_oneof![
            3 => Just(Limit::default()),
            1 => (256u32..1024, 4096u32..65536).prop_map(|(w, burst)| Limit { rate: w << 16, burst }),
        ],
        0u8..40,
        channels_strategy(nq),
        any::<u64>(),
    )
        .prop_map(
            |(members, offset, ns_bw, out_stall, channels, seed)| IdleInput {
                members,
                offset,
                ns_bw,
                out_stall,
                channels,
                seed,
            },
        )
        .boxed()
}

fn run_idle(input: &IdleInput, waves: Option<&Path>) -> Result<(), String> {
    let d = dims();
    let nq = d.queues;
    let k = input.members.len();
    // Spread evenly: queue ids as far apart as the block's size allows.
    let queue_of = |i: usize| (usize::from(input.offset) + i * nq / k) % nq;
    let mut queues = vec![
        QueueCfg {
            class: 3,
            ..QueueCfg::default()
        };
        nq
    ];
    let mut namespaces = vec![NsCfg::default(); d.namespaces];
    namespaces[0] = NsCfg {
        size: 1 << 30,
        lba_shift: 9,
        bw: input.ns_bw,
        iops: Limit::default(),
    };
    let mut grants = Vec::new();
    let mut timed = Vec::new();
    let mut sent = 0usize;
    for (i, mb) in input.members.iter().enumerate() {
        let q = queue_of(i);
        queues[q] = QueueCfg {
            class: mb.class,
            weight: mb.weight,
            bw: mb.bw,
            iops: mb.iops,
        };
        if grants.len() < d.grants {
            grants.push(Grant {
                sqid: q as u16 + 1,
                nsid: 1,
                read: true,
                write: true,
                first: 0,
                last: (1 << 30) - 1,
            });
        }
        let mut at = 0u64;
        let mut cmds = VecDeque::new();
        for (b, &(gap, count, nlb, write)) in mb.bursts.iter().enumerate() {
            at += u64::from(gap);
            for c in 0..count {
                cmds.push_back((
                    at,
                    Sqe {
                        opcode: if write { 0x01 } else { 0x02 },
                        cid: (b as u16) << 8 | u16::from(c),
                        nsid: 1,
                        slba: (u64::from(gap) * 7 + u64::from(c) * 64) % ((1 << 30) - 64),
                        nlb,
                    },
                ));
            }
        }
        sent += cmds.len();
        timed.push((q as u16 + 1, cmds));
    }
    let cfg = Config {
        queues,
        namespaces,
        grants,
    };
    let mut traffic = Traffic {
        lists: Vec::new(),
        gens: Vec::new(),
        timed,
        feed_end: 0,
        least_in_flight: false,
        fill: [0x3c; 64],
        weight_writes: VecDeque::new(),
    };
    let timing = Timing {
        in_idle: 0,
        out_stall: input.out_stall,
        cpl_stall: 0,
        channels: input.channels,
        warm_reset: None,
        ignore_space: false,
        lazy_program: false,
    };
    let out = run(&cfg, &mut traffic, timing, input.seed, 2_000_000, waves)?;
    if out.releases.len() + out.denied != sent {
        return Err(format!(
            "{sent} commands sent, {} released and {} denied",
            out.releases.len(),
            out.denied
        ));
    }
    Ok(())
}

/// Queues far apart in id, bursts after long idle stretches, small bursts (see the module
/// documentation).
pub struct QosIdleProp;

impl Property for QosIdleProp {
    type Input = IdleInput;
    const NAME: &'static str = "qos_idle";
    fn strategy() -> BoxedStrategy<IdleInput> {
        strategy()
    }
    fn run(input: &IdleInput, waves: Option<&Path>) -> Result<(), String> {
        run_idle(input, waves)
    }
}
