//! Property: both FIFO flavours run in lockstep with the model under random writes, reads,
//! backpressure and resets: every word leaves once, in order, with the documented latency;
//! `count_o`, `s_ready_o` (not full) and `m_valid_o` / `empty_o` agree with the model every cycle,
//! so the FIFO holds exactly its depth.

use crate::models::fifo::Fifo as Model;
use crate::prop::Property;
use crate::sim::{Dut, Sim};
use proptest::prelude::*;
use std::path::Path;

/// Generated stimulus.
#[derive(Debug, Clone)]
pub struct Input {
    cycles: u16,
    write_percent: u8,
    read_percent: u8,
    /// Cycles (from the start) where reset is asserted for one cycle.
    resets: Vec<u16>,
    seed: u64,
}

fn strategy() -> BoxedStrategy<Input> {
    (
        1u16..1500,
        0u8..=100,
        0u8..=100,
        prop::collection::vec(0u16..1500, 0..3),
        any::<u64>(),
    )
        .prop_map(
            |(cycles, write_percent, read_percent, resets, seed)| Input {
                cycles,
                write_percent,
                read_percent,
                resets,
                seed,
            },
        )
        .boxed()
}

fn run<M: Dut>(fwft: bool, input: &Input, waves: Option<&Path>) -> Result<(), String> {
    let mut sim = Sim::<M>::maybe_waves(waves);
    let (s_valid, s_ready, s_data, count) = (
        sim.signal("s_valid_i"),
        sim.signal("s_ready_o"),
        sim.signal("s_data_i"),
        sim.signal("count_o"),
    );
    let (rd, out_valid, out_data) = if fwft {
        (
            sim.signal("m_ready_i"),
            sim.signal("m_valid_o"),
            sim.signal("m_data_o"),
        )
    } else {
        (
            sim.signal("rd_en_i"),
            sim.signal("rd_valid_o"),
            sim.signal("rd_data_o"),
        )
    };
    let empty = (!fwft).then(|| sim.signal("empty_o"));
    let width = s_data.width();
    let mask = if width >= 64 {
        u64::MAX
    } else {
        (1 << width) - 1
    };
    // The depth is in the module name (`fifo_w32_d13`): generator names carry parameters.
    let depth: usize = M::NAME
        .rsplit("_d")
        .next()
        .and_then(|d| d.parse().ok())
        .unwrap_or_else(|| panic!("{}: no depth in the module name", M::NAME));
    let mut rng = crate::rng::Rng::new(input.seed);
    let mut model: Model<u64> = Model::new(depth);
    sim.reset(2);
    let mut offer: Option<u64> = None;
    let mut expect_read: Option<u64> = None;
    let mut next = 1u64;
    for t in 0..input.cycles {
        if input.resets.contains(&t) {
            sim.reset(1);
            model.clear();
            offer = None;
            expect_read = None;
        }
        // A source keeps its word until it is taken.
        if offer.is_none() && rng.chance(input.write_percent) {
            offer = Some(next & mask);
            next = next
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
        }
        let read = rng.chance(input.read_percent);
        s_valid.set(offer.is_some() as u64);
        s_data.set(offer.unwrap_or(0));
        rd.set(read as u64);
        sim.settle();
        let ready = s_ready.is_high();
        if ready != model.can_push() {
            return Err(format!(
                "cycle {t}: s_ready_o = {ready} with {} of {depth} words held",
                model.len()
            ));
        }
        if fwft {
            let v = out_valid.is_high();
            let holds_words = !model.is_empty();
            if v != holds_words {
                return Err(format!(
                    "cycle {t}: m_valid_o = {v} with {} words held",
                    model.len()
                ));
            }
            if v && Some(&out_data.get()) != model.front() {
                return Err(format!(
                    "cycle {t}: m_data_o = {:#x}, oldest word {:#x?}",
                    out_data.get(),
                    model.front()
                ));
            }
        } else {
            let e = empty.as_ref().is_some_and(|e| e.is_high());
            if e != model.is_empty() {
                return Err(format!(
                    "cycle {t}: empty_o = {e} with {} words held",
                    model.len()
                ));
            }
            // Data of the read accepted in the previous cycle.
            match (expect_read.take(), out_valid.is_high()) {
                (Some(w), true) if out_data.get() == w => {}
                (Some(w), true) => {
                    return Err(format!(
                        "cycle {t}: rd_data_o = {:#x}, expected {w:#x}",
                        out_data.get()
                    ))
                }
                (Some(w), false) => {
                    return Err(format!("cycle {t}: rd_valid_o low; expected {w:#x}"))
                }
                (None, true) => return Err(format!("cycle {t}: rd_valid_o without a read")),
                (None, false) => {}
            }
        }
        sim.step();
        let tr = model.transfer(offer, read);
        if tr.pushed {
            offer = None;
        }
        if !fwft {
            expect_read = tr.popped;
        }
        if count.get() != model.len() as u64 {
            return Err(format!(
                "cycle {t}: count_o = {} after the edge, model holds {}",
                count.get(),
                model.len()
            ));
        }
    }
    Ok(())
}

/// Standard FIFO (`rd_en_i`, data the cycle after).
pub struct FifoProp;

impl Property for FifoProp {
    type Input = Input;
    const NAME: &'static str = "fifo";
    fn strategy() -> BoxedStrategy<Input> {
        strategy()
    }
    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        run::<crate::rtl::FifoTop>(false, input, waves)
    }
}

/// First-word-fall-through FIFO (stream out).
pub struct FifoFwftProp;

impl Property for FifoFwftProp {
    type Input = Input;
    const NAME: &'static str = "fifo_fwft";
    fn strategy() -> BoxedStrategy<Input> {
        strategy()
    }
    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        run::<crate::rtl::FifoFwftTop>(true, input, waves)
    }
}
