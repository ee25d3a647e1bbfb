//! Property: the asynchronous FIFO carries every word once and in order between two unrelated
//! clocks (periods drawn from 1 to 7 ns each, so ratios from 1:7 to 7:1, rarely whole), under
//! random push and pop back-pressure that changes in phases (filling it, draining it), and its
//! flags never lie:
//!
//! - `s_ready_o` high only with room for a word now (nothing is lost on full), and low only
//!   when the FIFO holds its depth counting the pops at least two `clk_wr_i` edges old (the
//!   synchronizer's delay, no more);
//! - `m_valid_o` high only with a word held, showing the oldest (nothing popped on empty); low
//!   only when every word pushed before the third `clk_rd_i` edge back has left: the latency
//!   bound of [`LATENCY_RD_EDGES`] destination cycles (for the next word out).
//!
//! The golden model is a queue: in this property each side sees only the other side's counts.

use crate::prop::Property;
use crate::rng::Rng;
use crate::rtl::AsyncFifoTop as Dut;
use crate::sim::{MultiSim, Signal};
use proptest::prelude::*;
use std::path::Path;

/// Read-side edges from a push to the word on `m` (hdl-gen's `async_fifo::LATENCY_RD_EDGES`).
pub const LATENCY_RD_EDGES: usize = 3;
/// Write-side edges from a pop to the room it makes seen by `s_ready_o`.
pub const ROOM_WR_EDGES: usize = 2;

const WR: usize = 0;
const RD: usize = 1;

/// A stretch of traffic: for `len_ps` of simulated time, each side offers (push) or accepts
/// (pop) in a cycle with these chances, in percent.
#[derive(Debug, Clone, Copy)]
pub struct Phase {
    len_ps: u64,
    push_pct: u8,
    pop_pct: u8,
}

/// One case.
#[derive(Debug, Clone)]
pub struct Case {
    wr_ps: u64,
    rd_ps: u64,
    wr_first_ps: u64,
    rd_first_ps: u64,
    words: Vec<u32>,
    phases: Vec<Phase>,
    seed: u64,
}

/// See the module documentation.
pub struct AsyncFifoProp;

fn pct() -> impl Strategy<Value = u8> {
    prop_oneof![Just(0u8), Just(100u8), 0u8..=100]
}

/// The FIFO's depth, read from the top's name (`async_fifo_w<width>_d<depth>`).
fn depth() -> u64 {
    Dut::NAME
        .rsplit("_d")
        .next()
        .and_then(|d| d.parse().ok())
        .expect("async_fifo_w<width>_d<depth>")
}

fn port(sim: &MultiSim<Dut>, names: &[&str]) -> (Signal, bool) {
    for n in names {
        if Dut::PORTS.iter().any(|p| p.0 == *n) {
            return (sim.signal(n), n.ends_with("ni"));
        }
    }
    panic!("{} has none of the ports {names:?}", Dut::NAME)
}

impl Property for AsyncFifoProp {
    type Input = Case;
    const NAME: &'static str = "async_fifo";

    fn strategy() -> BoxedStrategy<Case> {
        let phase =
            (1_000u64..200_000, pct(), pct()).prop_map(|(len_ps, push_pct, pop_pct)| Phase {
                len_ps,
                push_pct,
                pop_pct,
            });
        (
            1_000u64..=7_000,
            1_000u64..=7_000,
            0u64..7_000,
            0u64..7_000,
            prop::collection::vec(any::<u32>(), 1..300),
            prop::collection::vec(phase, 1..6),
            any::<u64>(),
        )
            .prop_map(
                |(wr_ps, rd_ps, wr_first_ps, rd_first_ps, words, phases, seed)| Case {
                    wr_ps,
                    rd_ps,
                    wr_first_ps,
                    rd_first_ps,
                    words,
                    phases,
                    seed,
                },
            )
            .boxed()
    }

    fn run(case: &Case, waves: Option<&Path>) -> Result<(), String> {
        let depth = depth();
        let mut sim = MultiSim::<Dut>::new(
            &[
                ("clk_wr_i", case.wr_ps, case.wr_first_ps),
                ("clk_rd_i", case.rd_ps, case.rd_first_ps),
            ],
            waves,
        );
        let (rst_wr, low) = port(&sim, &["rst_wr_ni", "rst_wr_i"]);
        let (rst_rd, _) = port(&sim, &["rst_rd_ni", "rst_rd_i"]);
        let (asserted, released) = if low { (0, 1) } else { (1, 0) };
        let s_valid = sim.signal("s_valid_i");
        let s_ready = sim.signal("s_ready_o");
        let s_data = sim.signal("s_data_i");
        let m_valid = sim.signal("m_valid_o");
        let m_ready = sim.signal("m_ready_i");
        let m_data = sim.signal("m_data_o");
        let mut rng = Rng::new(case.seed);

        // Both resets asserted together (from released, so the asynchronous styles see an
        // edge), held for two edges of each clock, released together.
        for level in [released, asserted] {
            rst_wr.set(level);
            rst_rd.set(level);
            sim.settle();
        }
        while sim.edges(WR) < 2 || sim.edges(RD) < 2 {
            sim.next_edge();
            sim.rise();
        }
        rst_wr.set(released);
        rst_rd.set(released);

        let total = case.words.len();
        let cycle_ps: u64 = case.phases.iter().map(|p| p.len_ps).sum::<u64>().max(1);
        let start = sim.time();
        let (mut pushed, mut popped) = (0usize, 0usize);
        // pushed when each clk_rd_i edge was taken, popped when each clk_wr_i edge was.
        let mut pushed_at_rd: Vec<usize> = Vec::new();
        let mut popped_at_wr: Vec<usize> = Vec::new();
        let mut drain_since: Option<u64> = None;
        let limit_ps = 400 * case.wr_ps.max(case.rd_ps);
        // Phases that never push (or never pop) would run forever: after this long, both sides
        // go flat out.
        let budget_ps = 4 * cycle_ps + 40 * total as u64 * case.wr_ps.max(case.rd_ps);
        while popped < total {
            let phase = {
                let mut t = (sim.time() - start) % cycle_ps;
                let mut ph = case.phases[0];
                for p in &case.phases {
                    ph = *p;
                    if t < p.len_ps {
                        break;
                    }
                    t -= p.len_ps;
                }
                if sim.time() - start > budget_ps {
                    ph.push_pct = 100;
                    ph.pop_pct = 100;
                }
                ph
            };
            if pushed == total && drain_since.is_none() {
                drain_since = Some(sim.time());
            }
            if sim.time() - start > 2 * budget_ps + limit_ps {
                return Err(format!(
                    "hang: {pushed} of {total} words in, {popped} out after {} ps",
                    sim.time() - start
                ));
            }
            if let Some(t0) = drain_since {
                if sim.time() - t0 > limit_ps {
                    return Err(format!(
                        "hang: {popped} of {total} words out {} ps after the last push",
                        sim.time() - t0
                    ));
                }
            }
            let k = sim.next_edge();
            if k == WR {
                let n = popped_at_wr.len();
                popped_at_wr.push(popped);
                let held = pushed - popped;
                let ready = s_ready.is_high();
                if ready && held as u64 >= depth {
                    return Err(format!(
                        "clk_wr_i edge {n}: s_ready_o is high with {held} words held in a FIFO of {depth} (a word would be lost)"
                    ));
                }
                if !ready && n >= ROOM_WR_EDGES {
                    let seen = pushed - popped_at_wr[n - ROOM_WR_EDGES];
                    if (seen as u64) < depth {
                        return Err(format!(
                            "clk_wr_i edge {n}: s_ready_o is low (full) but counting only pops {ROOM_WR_EDGES} edges old the FIFO holds {seen} of {depth} words"
                        ));
                    }
                }
                if ready && s_valid.is_high() {
                    pushed += 1;
                }
                sim.rise();
                // A word offered stays offered until taken.
                let offer =
                    pushed < total && ((s_valid.is_high() && !ready) || rng.chance(phase.push_pct));
                s_valid.set(offer as u64);
                s_data.set(if offer { case.words[pushed] as u64 } else { 0 });
            } else {
                let n = pushed_at_rd.len();
                pushed_at_rd.push(pushed);
                let valid = m_valid.is_high();
                if valid {
                    if popped >= pushed {
                        return Err(format!(
                            "clk_rd_i edge {n}: m_valid_o is high with no word held ({pushed} pushed, {popped} popped)"
                        ));
                    }
                    let got = m_data.get() as u32;
                    if got != case.words[popped] {
                        return Err(format!(
                            "clk_rd_i edge {n}: word {popped} out is {got:#010x}, pushed {:#010x}",
                            case.words[popped]
                        ));
                    }
                } else if n >= LATENCY_RD_EDGES && popped < pushed_at_rd[n - LATENCY_RD_EDGES] {
                    return Err(format!(
                        "clk_rd_i edge {n}: m_valid_o is low although word {popped} was pushed before the clk_rd_i edge {LATENCY_RD_EDGES} back (latency bound {LATENCY_RD_EDGES} destination cycles)"
                    ));
                }
                if valid && m_ready.is_high() {
                    popped += 1;
                }
                sim.rise();
                let take = drain_since.is_some() || rng.chance(phase.pop_pct);
                m_ready.set(take as u64);
            }
        }
        Ok(())
    }
}
