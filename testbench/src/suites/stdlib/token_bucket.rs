//! Property: the token bucket runs in lockstep with its model under random rates (unlimited,
//! fractional, several tokens per cycle), bursts, costs, reconfiguration and resets: every
//! cycle `req_ready_o` equals the model's `ready` (so every grant had its tokens and no request
//! waited while they were there) and `tokens_o` the model's whole tokens.

use crate::models::token_bucket::TokenBucket as Model;
use crate::prop::Property;
use crate::rtl::TokenBucketTop as Top;
use crate::sim::Sim;
use proptest::prelude::*;
use std::path::Path;

/// One phase of traffic with one configuration.
#[derive(Debug, Clone)]
pub struct Phase {
    rate: u64,
    burst: u64,
    cycles: u16,
    offer_percent: u8,
    max_cost: u64,
    reset_first: bool,
}

/// See the module documentation.
pub struct TokenBucketProp;

impl Property for TokenBucketProp {
    type Input = (Vec<Phase>, u64);
    const NAME: &'static str = "token_bucket";

    fn strategy() -> BoxedStrategy<(Vec<Phase>, u64)> {
        let phase = (
            prop_oneof![
                Just(0u64),
                1u64..0x1_0000,
                0x1_0000u64..0x8_0000,
                // Just under 1/k tokens a cycle: k refills land one fraction step below a whole
                // token, so a level off by one step in its fraction shows.
                (1u64..9).prop_map(|k| 0xffff / k),
                any::<u64>()
            ],
            prop_oneof![0u64..4, 0u64..64, any::<u64>()],
            1u16..400,
            0u8..=100,
            prop_oneof![1u64..4, 0u64..100, any::<u64>()],
            prop::bool::weighted(0.1),
        )
            .prop_map(
                |(rate, burst, cycles, offer_percent, max_cost, reset_first)| Phase {
                    rate,
                    burst,
                    cycles,
                    offer_percent,
                    max_cost,
                    reset_first,
                },
            );
        (prop::collection::vec(phase, 1..6), any::<u64>()).boxed()
    }

    fn run((phases, seed): &(Vec<Phase>, u64), waves: Option<&Path>) -> Result<(), String> {
        let mut sim = Sim::<Top>::maybe_waves(waves);
        let (rate, burst, valid, cost, ready, tokens) = (
            sim.signal("rate_i"),
            sim.signal("burst_i"),
            sim.signal("req_valid_i"),
            sim.signal("req_cost_i"),
            sim.signal("req_ready_o"),
            sim.signal("tokens_o"),
        );
        let frac = rate.width() - burst.width();
        let mask = |w: u32, v: u64| if w >= 64 { v } else { v & ((1 << w) - 1) };
        let mut rng = crate::rng::Rng::new(*seed);
        let first = &phases[0];
        rate.set(first.rate);
        burst.set(first.burst);
        sim.reset(2);
        let mut model = Model::new(
            frac,
            mask(rate.width(), first.rate),
            mask(burst.width(), first.burst),
        );
        let mut cycle = 0u64;
        for (pi, ph) in phases.iter().enumerate() {
            let (r, b) = (mask(rate.width(), ph.rate), mask(burst.width(), ph.burst));
            rate.set(r);
            burst.set(b);
            if ph.reset_first {
                sim.reset(1);
                model = Model::new(frac, r, b);
            }
            model.configure(r, b);
            for _ in 0..ph.cycles {
                let offer = rng.chance(ph.offer_percent);
                let c = mask(cost.width(), rng.below(ph.max_cost.saturating_add(1)));
                valid.set(offer as u64);
                cost.set(c);
                sim.settle();
                let (want_ready, want_tokens) = (model.ready(c), model.tokens());
                let (got_ready, got_tokens) = (ready.is_high(), tokens.get());
                if got_ready != want_ready || got_tokens != mask(tokens.width(), want_tokens) {
                    return Err(format!(
                        "phase {pi}, cycle {cycle}: RTL ready {got_ready} tokens {got_tokens}, model ready {want_ready} tokens {want_tokens} (rate {r:#x}, burst {b}, cost {c}, level {})",
                        model.level()
                    ));
                }
                sim.step();
                model.step(offer.then_some(c));
                cycle += 1;
            }
        }
        Ok(())
    }
}
