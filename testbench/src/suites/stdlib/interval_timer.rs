//! Property: after every clock edge the interval timer's outputs equal the model's, for random
//! start/stop/tick/limit sequences and resets in the middle of a count.

use crate::models::interval_timer::{IntervalTimer as Model, Outputs};
use crate::prop::Property;
use crate::rtl::IntervalTimerTop as Dut;
use crate::sim::Sim;
use proptest::prelude::*;
use std::path::Path;

const WIDTH: u32 = 16;

/// One cycle's inputs.
#[derive(Debug, Clone, Copy)]
pub struct Op {
    start: bool,
    stop: bool,
    tick: bool,
    limit: u16,
    reset: bool,
}

/// See the module documentation.
pub struct IntervalTimerProp;

impl Property for IntervalTimerProp {
    type Input = Vec<Op>;
    const NAME: &'static str = "interval_timer";

    fn strategy() -> BoxedStrategy<Vec<Op>> {
        let op = (
            prop::bool::weighted(0.1),
            prop::bool::weighted(0.03),
            prop::bool::weighted(0.7),
            prop_oneof![0u16..8, any::<u16>().prop_map(|v| v % 64), Just(u16::MAX)],
            prop::bool::weighted(0.005),
        )
            .prop_map(|(start, stop, tick, limit, reset)| Op {
                start,
                stop,
                tick,
                limit,
                reset,
            });
        prop::collection::vec(op, 1..600).boxed()
    }

    fn run(ops: &Vec<Op>, waves: Option<&Path>) -> Result<(), String> {
        let mut sim = Sim::<Dut>::maybe_waves(waves);
        let (start, stop, tick, limit) = (
            sim.signal("start_i"),
            sim.signal("stop_i"),
            sim.signal("tick_i"),
            sim.signal("limit_i"),
        );
        let (busy, expired, count) = (
            sim.signal("busy_o"),
            sim.signal("expired_o"),
            sim.signal("count_o"),
        );
        let mut model = Model::new(WIDTH);
        sim.reset(2);
        for (i, op) in ops.iter().enumerate() {
            if op.reset {
                sim.reset(1);
                model.reset();
            }
            start.set(op.start as u64);
            stop.set(op.stop as u64);
            tick.set(op.tick as u64);
            limit.set(op.limit as u64);
            sim.step();
            model.clock(op.start, op.stop, op.tick, op.limit as u64);
            let got = Outputs {
                busy: busy.is_high(),
                expired: expired.is_high(),
                count: count.get(),
            };
            if got != model.outputs() {
                return Err(format!(
                    "after op {i} ({op:?}): RTL shows {got:?}, model {:?}",
                    model.outputs()
                ));
            }
        }
        Ok(())
    }
}
