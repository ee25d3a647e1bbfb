//! Property: the CRC-32 and CRC-32C blocks track the model beat by beat (random beat sizes,
//! idle cycles, back-to-back messages, resets mid-message), and each finished message's CRC
//! equals the reference CRC of its bytes.

use crate::drivers::set_bytes;
use crate::models::crc::{CrcBlock, CrcSpec, CRC32, CRC32C};
use crate::prop::Property;
use crate::sim::{Dut, Sim};
use proptest::prelude::*;
use std::path::Path;

/// Generated stimulus for one CRC block.
#[derive(Debug, Clone)]
pub struct Input {
    messages: Vec<Vec<u8>>,
    idle_percent: u8,
    /// Percent of beats shorter than the full width.
    short_percent: u8,
    /// Cycle (from the start) of a reset in the middle of traffic, if any.
    reset_at: Option<u16>,
    seed: u64,
}

fn strategy() -> BoxedStrategy<Input> {
    (
        prop::collection::vec(prop::collection::vec(any::<u8>(), 0..200), 1..6),
        0u8..60,
        0u8..60,
        prop::option::weighted(0.2, 0u16..200),
        any::<u64>(),
    )
        .prop_map(
            |(messages, idle_percent, short_percent, reset_at, seed)| Input {
                messages,
                idle_percent,
                short_percent,
                reset_at,
                seed,
            },
        )
        .boxed()
}

fn run<M: Dut>(spec: CrcSpec, input: &Input, waves: Option<&Path>) -> Result<(), String> {
    let mut sim = Sim::<M>::maybe_waves(waves);
    let (start, valid, data, keep, crc) = (
        sim.signal("start_i"),
        sim.signal("valid_i"),
        sim.signal("data_i"),
        sim.signal("keep_i"),
        sim.signal("crc_o"),
    );
    let lanes = data.width() / 8;
    let mut rng = crate::rng::Rng::new(input.seed);
    let mut model = CrcBlock::new(spec, lanes);
    sim.reset(2);
    let mut cycle = 0u16;
    let mut clock = |sim: &mut Sim<M>,
                     model: &mut CrcBlock,
                     s: bool,
                     v: bool,
                     bytes: &[u8],
                     k: u64|
     -> Result<bool, String> {
        let mut lane = vec![0u8; lanes as usize];
        lane[..bytes.len()].copy_from_slice(bytes);
        start.set(s as u64);
        valid.set(v as u64);
        set_bytes(&data, &lane);
        keep.set(k);
        sim.step();
        model.beat(s, v, &lane, k);
        let got = crc.get();
        if got != model.crc() {
            return Err(format!(
                "cycle {cycle}: crc_o = {got:#x}, model {:#x} (start {s}, valid {v}, keep {k:#x}, bytes {bytes:02x?})",
                model.crc()
            ));
        }
        cycle += 1;
        if input.reset_at == Some(cycle) {
            sim.reset(1);
            *model = CrcBlock::new(spec, lanes);
            return Ok(true);
        }
        Ok(false)
    };
    for msg in &input.messages {
        let mut rest: &[u8] = msg;
        let mut first = true;
        let mut was_reset = false;
        loop {
            if !first && rng.chance(input.idle_percent) {
                was_reset |= clock(&mut sim, &mut model, false, false, &[], 0)?;
                continue;
            }
            let n = if rng.chance(input.short_percent) {
                1 + rng.below(lanes as u64) as usize
            } else {
                lanes as usize
            }
            .min(rest.len());
            let k = (1u64 << n) - 1;
            let (beat, tail) = rest.split_at(n);
            was_reset |= clock(&mut sim, &mut model, first, n > 0 || first, beat, k)?;
            rest = tail;
            first = false;
            if rest.is_empty() {
                break;
            }
        }
        // The message is in; the register shows its CRC now.
        let want = spec.checksum(msg);
        if !was_reset && crc.get() != want {
            return Err(format!(
                "message of {} bytes: crc_o = {:#x}, reference CRC {want:#x}",
                msg.len(),
                crc.get()
            ));
        }
    }
    Ok(())
}

/// CRC-32 (Ethernet).
pub struct Crc32Prop;

impl Property for Crc32Prop {
    type Input = Input;
    const NAME: &'static str = "crc32";
    fn strategy() -> BoxedStrategy<Input> {
        strategy()
    }
    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        run::<crate::rtl::Crc32Top>(CRC32, input, waves)
    }
}

/// CRC-32C (Castagnoli).
pub struct Crc32cProp;

impl Property for Crc32cProp {
    type Input = Input;
    const NAME: &'static str = "crc32c";
    fn strategy() -> BoxedStrategy<Input> {
        strategy()
    }
    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        run::<crate::rtl::Crc32cTop>(CRC32C, input, waves)
    }
}
