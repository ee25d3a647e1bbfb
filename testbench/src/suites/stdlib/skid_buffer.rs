//! Property: the skid buffer delivers every accepted word once, in order, holding at most two,
//! under random idle cycles, backpressure and resets in the middle of traffic.

use crate::drivers::stream::{StreamSink, StreamSource};
use crate::models::skid_buffer::SkidBuffer as Model;
use crate::prop::Property;
use crate::rtl::SkidBufferTop as Dut;
use crate::sim::Sim;
use proptest::prelude::*;
use std::path::Path;

/// Generated stimulus.
#[derive(Debug, Clone)]
pub struct Input {
    words: Vec<u64>,
    idle_percent: u8,
    stall_percent: u8,
    /// Cycles (from the start) at which reset is asserted, and for how long.
    resets: Vec<(u16, u8)>,
    seed: u64,
}

/// See the module documentation.
pub struct SkidBufferProp;

impl Property for SkidBufferProp {
    type Input = Input;
    const NAME: &'static str = "skid_buffer";

    fn strategy() -> BoxedStrategy<Input> {
        (
            prop::collection::vec(any::<u64>(), 0..300),
            0u8..90,
            0u8..90,
            prop::collection::vec((0u16..2000, 1u8..4), 0..3),
            any::<u64>(),
        )
            .prop_map(|(words, idle_percent, stall_percent, resets, seed)| Input {
                words,
                idle_percent,
                stall_percent,
                resets,
                seed,
            })
            .boxed()
    }

    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        let mut sim = Sim::<Dut>::maybe_waves(waves);
        let src = sim.add(StreamSource::new(
            &sim,
            "s",
            &["data"],
            input.seed,
            input.idle_percent,
        ));
        let sink = sim.add(StreamSink::new(
            &sim,
            "m",
            &["data"],
            input.seed ^ 1,
            input.stall_percent,
        ));
        sim.reset(2);
        for w in &input.words {
            src.borrow_mut().push(&[*w]);
        }
        let mut model = Model::new();
        let (mut acc_seen, mut rcv_seen) = (0, 0);
        let limit = 2_000 + input.words.len() as u64 * 150;
        let start = sim.cycle();
        loop {
            let t = sim.cycle() - start;
            if let Some((_, len)) = input.resets.iter().find(|r| r.0 as u64 == t) {
                sim.reset(*len as u64);
                model.reset();
            }
            sim.step();
            // In one cycle, the word leaving was held before the word arriving.
            let sink_b = sink.borrow();
            for (c, w) in sink_b.received.iter_from(rcv_seen) {
                model.deliver(w[0]).map_err(|e| format!("cycle {c}: {e}"))?;
            }
            rcv_seen = sink_b.received.len();
            if let Some(v) = sink_b.violations.first() {
                return Err(format!("protocol: {v}"));
            }
            drop(sink_b);
            let src_b = src.borrow();
            for (c, w) in src_b.accepted.iter_from(acc_seen) {
                model.accept(w[0]).map_err(|e| format!("cycle {c}: {e}"))?;
            }
            acc_seen = src_b.accepted.len();
            let done = src_b.pending() == 0
                && model.is_empty()
                && t > input.resets.iter().map(|r| r.0 as u64).max().unwrap_or(0);
            drop(src_b);
            if done {
                return Ok(());
            }
            if t > limit {
                return Err(format!(
                    "hang: {} words still queued and {} held after {limit} cycles",
                    src.borrow().pending(),
                    model.len()
                ));
            }
        }
    }
}
