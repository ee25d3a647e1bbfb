//! Property: the reset synchronizer asserts its output in the same instant as the request (no
//! clock edge), and releases it at the second or third `clk_i` edge after the request ends,
//! never earlier: the request changes at the edges of an unrelated virtual clock (periods from
//! 1 to 7 ns each), including pulses shorter than a `clk_i` cycle.

use crate::prop::Property;
use crate::rng::Rng;
use crate::rtl::ResetSyncTop as Dut;
use crate::sim::MultiSim;
use proptest::prelude::*;
use std::path::Path;

/// One case.
#[derive(Debug, Clone)]
pub struct Case {
    clk_ps: u64,
    req_ps: u64,
    req_first_ps: u64,
    toggle_pct: u8,
    edges: u32,
    seed: u64,
}

/// See the module documentation.
pub struct ResetSyncProp;

impl Property for ResetSyncProp {
    type Input = Case;
    const NAME: &'static str = "reset_sync";

    fn strategy() -> BoxedStrategy<Case> {
        (
            1_000u64..=7_000,
            1_000u64..=7_000,
            0u64..7_000,
            1u8..=60,
            8u32..600,
            any::<u64>(),
        )
            .prop_map(
                |(clk_ps, req_ps, req_first_ps, toggle_pct, edges, seed)| Case {
                    clk_ps,
                    req_ps,
                    req_first_ps,
                    toggle_pct,
                    edges,
                    seed,
                },
            )
            .boxed()
    }

    fn run(case: &Case, waves: Option<&Path>) -> Result<(), String> {
        const CLK: usize = 0;
        let mut sim = MultiSim::<Dut>::new(
            &[
                ("clk_i", case.clk_ps, case.clk_ps / 2),
                ("", case.req_ps, case.req_first_ps),
            ],
            waves,
        );
        let low = Dut::PORTS.iter().any(|p| p.0 == "rst_ni");
        let req = sim.signal(if low { "rst_ni" } else { "rst_i" });
        let out = sim.signal(if low { "rst_no" } else { "rst_o" });
        let level = |asserted: bool| (asserted != low) as u64;
        let out_asserted = |v: u64| (v == 1) != low;
        let mut rng = Rng::new(case.seed);
        // Requested from released, so the asynchronous reset sees its edge.
        let mut requested = true;
        for r in [false, true] {
            req.set(level(r));
            sim.settle();
        }
        // clk_i edges at which the request was seen released, since it last was asserted.
        let mut released_edges = 0u32;
        while sim.edges(CLK) < case.edges as u64 {
            let k = sim.next_edge();
            if k != CLK {
                sim.rise();
                if rng.chance(case.toggle_pct) {
                    requested = !requested;
                    req.set(level(requested));
                    sim.settle();
                    if requested {
                        released_edges = 0;
                        if !out_asserted(out.get()) {
                            return Err(format!(
                                "{} ps: the request asserted but the output did not at once",
                                sim.time()
                            ));
                        }
                    }
                }
                continue;
            }
            if !requested {
                released_edges += 1;
            }
            sim.rise();
            let asserted = out_asserted(out.get());
            let n = sim.edges(CLK);
            if requested && !asserted {
                return Err(format!(
                    "clk_i edge {n}: the output is released while the request is asserted"
                ));
            }
            if !asserted && released_edges < 2 {
                return Err(format!(
                    "clk_i edge {n}: the output released {released_edges} edge(s) after the request ended (2 or 3 expected)"
                ));
            }
            if asserted && released_edges >= 3 {
                return Err(format!(
                    "clk_i edge {n}: the output is still asserted {released_edges} edges after the request ended (2 or 3 expected)"
                ));
            }
        }
        Ok(())
    }
}
