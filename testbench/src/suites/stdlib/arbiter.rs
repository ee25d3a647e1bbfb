//! Property: the round-robin and weighted round-robin arbiters run in lockstep with the model:
//! every cycle `valid_o`, `gnt_o` and `gnt_idx_o` show the model's grant (one-hot), a grant not
//! taken is held, and the priority moves exactly as the policy says, under random requests
//! (kept up until their transfer), backpressure, weight changes and resets.

use crate::drivers::pack;
use crate::models::arbiter::{Locked, Policy, Resettable, RoundRobin, WeightedRoundRobin};
use crate::prop::Property;
use crate::sim::{Dut, Sim};
use proptest::prelude::*;
use std::path::Path;

/// Generated stimulus.
#[derive(Debug, Clone)]
pub struct Input {
    cycles: u16,
    request_percent: u8,
    ready_percent: u8,
    /// Percent of cycles where the weights change.
    reweight_percent: u8,
    resets: Vec<u16>,
    seed: u64,
}

fn strategy() -> BoxedStrategy<Input> {
    (
        1u16..1500,
        0u8..=100,
        0u8..=100,
        0u8..10,
        prop::collection::vec(0u16..1500, 0..3),
        any::<u64>(),
    )
        .prop_map(
            |(cycles, request_percent, ready_percent, reweight_percent, resets, seed)| Input {
                cycles,
                request_percent,
                ready_percent,
                reweight_percent,
                resets,
                seed,
            },
        )
        .boxed()
}

fn run<M: Dut, P: Policy + Resettable>(
    policy: P,
    input: &Input,
    waves: Option<&Path>,
) -> Result<(), String> {
    let mut sim = Sim::<M>::maybe_waves(waves);
    let (req_i, ready_i, valid_o, gnt_o, idx_o) = (
        sim.signal("req_i"),
        sim.signal("ready_i"),
        sim.signal("valid_o"),
        sim.signal("gnt_o"),
        sim.signal("gnt_idx_o"),
    );
    let weight_i = M::PORTS
        .iter()
        .any(|p| p.0 == "weight_i")
        .then(|| sim.signal("weight_i"));
    let n = req_i.width() as usize;
    let ww = weight_i.as_ref().map_or(0, |w| w.width() as usize / n);
    let mut rng = crate::rng::Rng::new(input.seed);
    let mut model = Locked::new(policy);
    let mut req = vec![false; n];
    let mut weights = vec![0u64; n];
    sim.reset(2);
    for t in 0..input.cycles {
        if input.resets.contains(&t) {
            sim.reset(1);
            model.reset();
            req.iter_mut().for_each(|r| *r = false);
        }
        // New requests; a request stays up until its transfer.
        for r in req.iter_mut() {
            *r |= rng.chance(input.request_percent);
        }
        if t == 0 || rng.chance(input.reweight_percent) {
            for w in weights.iter_mut() {
                *w = rng.below(1 << ww.min(4));
            }
        }
        let ready = rng.chance(input.ready_percent);
        req_i.set_bits(&pack(req.iter().map(|&b| b as u64), 1));
        ready_i.set(ready as u64);
        if let Some(w) = &weight_i {
            w.set_bits(&pack(weights.iter().copied(), ww));
        }
        sim.settle();
        let want = model.grant(&req);
        let (valid, gnt, idx) = (valid_o.is_high(), gnt_o.get(), idx_o.get());
        let ok = match want {
            Some(g) => valid && gnt == 1 << g && idx == g as u64,
            None => !valid && gnt == 0,
        };
        if !ok {
            return Err(format!(
                "cycle {t}: requests {req:?}, weights {weights:?}: RTL valid {valid} gnt {gnt:#b} idx {idx}, model grants {want:?} (held {:?})",
                model.held()
            ));
        }
        sim.step();
        if let Some(g) = model.step(&req, &weights, ready) {
            if ready {
                req[g] = false;
            }
        }
    }
    Ok(())
}

/// Round robin.
pub struct RrArbiterProp;

impl Property for RrArbiterProp {
    type Input = Input;
    const NAME: &'static str = "rr_arbiter";
    fn strategy() -> BoxedStrategy<Input> {
        strategy()
    }
    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        type T = crate::rtl::RrArbiterTop;
        let reqs = <T as Dut>::PORTS
            .iter()
            .find(|p| p.0 == "req_i")
            .map_or(1, |p| p.1);
        run::<T, _>(RoundRobin::new(reqs as usize), input, waves)
    }
}

/// Weighted round robin.
pub struct WrrArbiterProp;

impl Property for WrrArbiterProp {
    type Input = Input;
    const NAME: &'static str = "wrr_arbiter";
    fn strategy() -> BoxedStrategy<Input> {
        strategy()
    }
    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        type T = crate::rtl::WrrArbiterTop;
        let reqs = <T as Dut>::PORTS
            .iter()
            .find(|p| p.0 == "req_i")
            .map_or(1, |p| p.1);
        run::<T, _>(WeightedRoundRobin::new(reqs as usize), input, waves)
    }
}
