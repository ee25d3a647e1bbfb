//! Property `frame_mux`: the frame mux the chip holds in front of its Ethernet port
//! (`eth_frame_mux_*`, `hdl-gen/src/chip/frame_mux.rs`) against `models::frame_mux`. Frames
//! from the wire (RoCEv2, near misses of it: another EtherType, IPv4 with options, TCP, another
//! UDP port, frames cut short before the UDP port, ARP, random bytes) reach exactly the engine
//! the model names, whole and in order; frames of the two engines reach the wire whole, never
//! interleaved, each engine's in its order; with both engines sending without pause the wire
//! alternates between them (round robin). Random idle cycles and backpressure everywhere.

use crate::drivers::axis::{AxisSink, AxisSource};
use crate::models::frame_mux::{classify, Engine, FrameMux};
use crate::prop::Property;
use crate::rng::Rng;
use crate::rtl::FrameMuxTop as Dut;
use crate::sim::Sim;
use proptest::prelude::*;
use std::path::Path;

/// The stimulus.
#[derive(Clone, Debug)]
pub struct Input {
    /// Frames from the wire: (kind, length, seed of its bytes).
    pub wire: Vec<(u8, u16, u64)>,
    /// Frames of each engine toward the wire: (length, seed).
    pub roce: Vec<(u16, u64)>,
    pub tcp: Vec<(u16, u64)>,
    /// Idle percentages of the wire's, RoCE's and TCP's sources; stall percentages of the
    /// wire's, RoCE's and TCP's sinks.
    pub idle: [u8; 3],
    pub stall: [u8; 3],
    pub seed: u64,
}

/// A frame from the wire of `kind` (0 RoCEv2, 1 another EtherType, 2 IPv4 with options,
/// 3 TCP, 4 UDP to another port, 5 ARP, else random bytes), `len` bytes (at least 1).
fn wire_frame(kind: u8, len: u16, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut f: Vec<u8> = (0..usize::from(len.max(1)))
        .map(|_| rng.next_u64() as u8)
        .collect();
    let mut put = |at: usize, b: &[u8]| {
        for (k, v) in b.iter().enumerate() {
            if let Some(x) = f.get_mut(at + k) {
                *x = *v;
            }
        }
    };
    match kind % 7 {
        0..=4 => {
            put(12, &[0x08, 0x00]);
            put(14, &[0x45]);
            put(23, &[17]);
            put(36, &4791u16.to_be_bytes());
            match kind % 7 {
                1 => put(12, &[0x86, 0xdd]),
                2 => put(14, &[0x46]),
                3 => put(23, &[6]),
                4 => put(36, &4792u16.to_be_bytes()),
                _ => {}
            }
        }
        5 => put(12, &[0x08, 0x06]),
        _ => {}
    }
    f
}

fn engine_frame(len: u16, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    (0..usize::from(len.max(1)))
        .map(|_| rng.next_u64() as u8)
        .collect()
}

pub struct FrameMuxProp;

impl Property for FrameMuxProp {
    type Input = Input;
    const NAME: &'static str = "frame_mux";

    fn strategy() -> BoxedStrategy<Input> {
        let len = prop_oneof![1u16..80, 30u16..45, 60u16..1600];
        (
            prop::collection::vec((0u8..8, len.clone(), any::<u64>()), 0..30),
            prop::collection::vec((len.clone(), any::<u64>()), 0..12),
            prop::collection::vec((len, any::<u64>()), 0..12),
            prop_oneof![Just([0u8; 3]), prop::array::uniform3(0u8..70)],
            prop_oneof![Just([0u8; 3]), prop::array::uniform3(0u8..70)],
            any::<u64>(),
        )
            .prop_map(|(wire, roce, tcp, idle, stall, seed)| Input {
                wire,
                roce,
                tcp,
                idle,
                stall,
                seed,
            })
            .boxed()
    }

    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        let mut sim = Sim::<Dut>::maybe_waves(waves);
        let s = input.seed;
        let wire_src = sim.add(AxisSource::new(&sim, "s_axis", s ^ 1, input.idle[0]));
        let roce_src = sim.add(AxisSource::new(&sim, "s_roce_axis", s ^ 2, input.idle[1]));
        let tcp_src = sim.add(AxisSource::new(&sim, "s_tcp_axis", s ^ 3, input.idle[2]));
        let wire_sink = sim.add(AxisSink::new(&sim, "m_axis", s ^ 4, input.stall[0]));
        let roce_sink = sim.add(AxisSink::new(&sim, "m_roce_axis", s ^ 5, input.stall[1]));
        let tcp_sink = sim.add(AxisSink::new(&sim, "m_tcp_axis", s ^ 6, input.stall[2]));
        sim.reset(3);
        let mut model = FrameMux::new(true, true);
        for &(kind, len, seed) in &input.wire {
            let f = wire_frame(kind, len, seed);
            model.from_wire(&f);
            wire_src.borrow_mut().send(f);
        }
        for (e, src, frames) in [
            (Engine::Roce, &roce_src, &input.roce),
            (Engine::Tcp, &tcp_src, &input.tcp),
        ] {
            for &(len, seed) in frames {
                let f = engine_frame(len, seed);
                model.from_engine(e, &f);
                src.borrow_mut().send(f);
            }
        }
        let drops = sim.signal("ev_drop_o");
        let mut dropped = 0u64;
        let bytes: u64 = input
            .wire
            .iter()
            .map(|f| u64::from(f.1))
            .chain(input.roce.iter().chain(&input.tcp).map(|f| u64::from(f.0)))
            .sum();
        let limit = 2000 + bytes;
        while sim.cycle() < limit
            && (wire_src.borrow().pending()
                + roce_src.borrow().pending()
                + tcp_src.borrow().pending()
                > 0
                || roce_sink.borrow().frames.len() + tcp_sink.borrow().frames.len()
                    < input.wire.len()
                || wire_sink.borrow().frames.len() < input.roce.len() + input.tcp.len())
        {
            sim.step();
            dropped += drops.get();
        }
        for _ in 0..50 {
            sim.step();
            dropped += drops.get();
        }
        for (name, sink) in [
            ("m_axis", &wire_sink),
            ("m_roce_axis", &roce_sink),
            ("m_tcp_axis", &tcp_sink),
        ] {
            if let Some(v) = sink.borrow().violations.first() {
                return Err(format!("{name}: {v}"));
            }
        }
        for (e, sink) in [(Engine::Roce, &roce_sink), (Engine::Tcp, &tcp_sink)] {
            for f in &sink.borrow().frames {
                model
                    .to_engine(e, &f.data)
                    .map_err(|m| format!("cycle {}: {m}", f.last))?;
            }
        }
        let mut order = Vec::new();
        for f in &wire_sink.borrow().frames {
            order.push(
                model
                    .to_wire(&f.data)
                    .map_err(|m| format!("cycle {}: {m}", f.last))?,
            );
        }
        if model.owed() > 0 {
            return Err(format!(
                "hang: {} frames owed after {} cycles (wire got {}, RoCE {}, TCP {})",
                model.owed(),
                sim.cycle(),
                wire_sink.borrow().frames.len(),
                roce_sink.borrow().frames.len(),
                tcp_sink.borrow().frames.len()
            ));
        }
        if dropped != model.dropped {
            return Err(format!(
                "{dropped} frames dropped (ev_drop_o), the model drops {}",
                model.dropped
            ));
        }
        // Round robin: both engines sending without pause, the wire alternates while both
        // have frames left.
        if input.idle[1] == 0 && input.idle[2] == 0 {
            let mut left = [input.roce.len(), input.tcp.len()];
            for w in order.windows(2) {
                let i = usize::from(w[0] == Engine::Tcp);
                left[i] -= 1;
                if left[0] > 0 && left[1] > 0 && w[0] == w[1] {
                    return Err(format!(
                        "two {:?} frames in a row on the wire while the other engine had frames waiting (order {order:?})",
                        w[0]
                    ));
                }
            }
        }
        let _ = classify;
        Ok(())
    }
}
