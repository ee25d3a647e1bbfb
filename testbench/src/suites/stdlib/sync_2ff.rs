//! Property: the two-flop synchronizer (the instance the asynchronous FIFO holds) shows each
//! value of `d_i` on `q_o` after 2 or 3 edges of its clock, never earlier, in order: `d_i`
//! changes at the edges of an unrelated virtual clock (periods from 1 to 7 ns each).
//!
//! In sample terms: with `d[n]` the value of `d_i` at `clk_i` edge `n`, `q_o` after edge `n` is
//! `d[n-1]` (two flip-flops) or `d[n-2]` (the third edge a marginal first sample costs on
//! silicon), never going back to an older sample (so a value held for two samples shows by the
//! second edge after them).

use crate::prop::Property;
use crate::rng::Rng;
use crate::rtl::Sync2ffTop as Dut;
use crate::sim::MultiSim;
use proptest::prelude::*;
use std::path::Path;

/// One case.
#[derive(Debug, Clone)]
pub struct Case {
    dst_ps: u64,
    src_ps: u64,
    src_first_ps: u64,
    change_pct: u8,
    edges: u32,
    seed: u64,
}

/// See the module documentation.
pub struct Sync2ffProp;

impl Property for Sync2ffProp {
    type Input = Case;
    const NAME: &'static str = "sync_2ff";

    fn strategy() -> BoxedStrategy<Case> {
        (
            1_000u64..=7_000,
            1_000u64..=7_000,
            0u64..7_000,
            prop_oneof![Just(100u8), 1u8..=100],
            8u32..600,
            any::<u64>(),
        )
            .prop_map(
                |(dst_ps, src_ps, src_first_ps, change_pct, edges, seed)| Case {
                    dst_ps,
                    src_ps,
                    src_first_ps,
                    change_pct,
                    edges,
                    seed,
                },
            )
            .boxed()
    }

    fn run(case: &Case, waves: Option<&Path>) -> Result<(), String> {
        const DST: usize = 0;
        let mut sim = MultiSim::<Dut>::new(
            &[
                ("clk_i", case.dst_ps, case.dst_ps / 2),
                ("", case.src_ps, case.src_first_ps),
            ],
            waves,
        );
        let low = Dut::PORTS.iter().any(|p| p.0 == "rst_ni");
        let rst = sim.signal(if low { "rst_ni" } else { "rst_i" });
        let d = sim.signal("d_i");
        let q = sim.signal("q_o");
        let mask = (1u64 << d.width()) - 1;
        let mut rng = Rng::new(case.seed);
        // Asserted from released, so an asynchronous reset sees its edge.
        for level in [low, !low] {
            rst.set(level as u64);
            sim.settle();
        }
        // Out of reset after two clk_i edges; q_o holds 0 until the first samples arrive.
        let mut samples: Vec<u64> = vec![0, 0];
        let mut last_j = 0usize;
        while sim.edges(DST) < case.edges as u64 {
            let k = sim.next_edge();
            if k != DST {
                sim.rise();
                if rng.chance(case.change_pct) {
                    d.set(rng.next_u64() & mask);
                }
                continue;
            }
            let running = sim.edges(DST) >= 2;
            if running {
                samples.push(d.get());
            }
            sim.rise();
            if sim.edges(DST) == 2 {
                rst.set(if low { 1 } else { 0 });
            }
            if !running {
                continue;
            }
            let n = samples.len() - 1; // this edge's sample
            let got = q.get();
            let candidates = [n - 1, n.saturating_sub(2)];
            // (When d[n-2] == d[n-1] both candidates are that value.)
            let ok = candidates
                .into_iter()
                .filter(|&j| j >= last_j)
                .find(|&j| samples[j] == got);
            match ok {
                Some(j) => last_j = j,
                None => {
                    return Err(format!(
                        "clk_i edge {n}: q_o = {got:#x}; d_i was {:#x}, {:#x}, {:#x} at edges {}, {}, {} (q_o must show the sample of edge n-1, or n-2 at most, in order)",
                        samples[n],
                        samples[n - 1],
                        samples[n.saturating_sub(2)],
                        n,
                        n - 1,
                        n.saturating_sub(2)
                    ))
                }
            }
        }
        Ok(())
    }
}
