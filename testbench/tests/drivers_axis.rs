//! The AXI4-Stream source and sink wired to each other (detached signals, a `Bench`), and the
//! sink's protocol checks against hand-driven beats.

use proptest::prelude::*;
use std::path::Path;
use testbench::drivers::axis::{self, AxisSink, AxisSource};
use testbench::drivers::{Ports, Wires};
use testbench::prop::{check, Property};
use testbench::rng::Rng;
use testbench::sim::{Bench, Component, Signal};

fn loopback(
    data_bits: u32,
    user_bits: u32,
    idle: u8,
    stall: u8,
    seed: u64,
) -> (
    Bench,
    Wires,
    std::rc::Rc<std::cell::RefCell<AxisSource>>,
    std::rc::Rc<std::cell::RefCell<AxisSink>>,
) {
    let wires = Wires::new();
    axis::declare(&wires, "lb", data_bits, user_bits);
    let mut bench = Bench::new();
    // The source drives `lb_*_i`, the sink watches `lb_*_o`: the same wires.
    let src = bench.add(AxisSource::new(&wires, "lb", seed, idle));
    let sink = bench.add(AxisSink::new(&wires, "lb", seed ^ 0x55, stall));
    bench.reset(1);
    (bench, wires, src, sink)
}

/// Random frames over a random link: every frame arrives whole, in order, with its tuser.
struct LoopbackProp;

#[derive(Clone, Debug)]
struct Case {
    data_bits: u32,
    idle: u8,
    stall: u8,
    seed: u64,
    frames: Vec<(Vec<u8>, u64)>,
}

impl Property for LoopbackProp {
    type Input = Case;
    const NAME: &'static str = "axis_loopback";

    fn strategy() -> BoxedStrategy<Case> {
        (
            prop::sample::select(vec![8u32, 16, 24, 32, 64, 96, 128, 512]),
            0u8..90,
            0u8..90,
            any::<u64>(),
            prop::collection::vec((prop::collection::vec(any::<u8>(), 1..200), 0u64..8), 1..12),
        )
            .prop_map(|(data_bits, idle, stall, seed, frames)| Case {
                data_bits,
                idle,
                stall,
                seed,
                frames,
            })
            .boxed()
    }

    fn run(c: &Case, _waves: Option<&Path>) -> Result<(), String> {
        let (mut bench, _wires, src, sink) = loopback(c.data_bits, 3, c.idle, c.stall, c.seed);
        for (f, u) in &c.frames {
            src.borrow_mut().send_user(f.clone(), *u);
        }
        let n = c.frames.len();
        bench
            .run_until("every frame", 100_000, |_| sink.borrow().frames.len() == n)
            .map_err(|h| h.to_string())?;
        bench.run(10);
        let sink = sink.borrow();
        if !sink.violations.is_empty() {
            return Err(format!("violations: {:?}", sink.violations));
        }
        if sink.frames.len() != n {
            return Err(format!("{} frames received, {n} sent", sink.frames.len()));
        }
        let w = c.data_bits as usize / 8;
        for (i, (got, (f, u))) in sink.frames.iter().zip(&c.frames).enumerate() {
            if &got.data != f || got.user != *u || got.beats != f.len().div_ceil(w) {
                return Err(format!("frame {i}: got {got:x?}, sent {f:x?} user {u}"));
            }
        }
        let sent: Vec<usize> = src.borrow().sent.iter().map(|s| s.1).collect();
        let want: Vec<usize> = c.frames.iter().map(|f| f.0.len()).collect();
        if sent != want {
            return Err(format!("source reports {sent:?}"));
        }
        Ok(())
    }
}

#[test]
fn loopback_random_frames_any_width() {
    check::<LoopbackProp>(48);
}

#[test]
fn full_rate_without_idle_or_backpressure() {
    let (mut bench, _w, src, sink) = loopback(64, 0, 0, 0, 1);
    // 10 frames of 61 bytes: 8 beats each, one beat per cycle, back to back.
    for i in 0..10u8 {
        src.borrow_mut().send(vec![i; 61]);
    }
    let cycles = bench
        .run_until("10 frames", 1000, |_| sink.borrow().frames.len() == 10)
        .unwrap();
    assert!(cycles <= 81, "{cycles} cycles for 80 beats");
    let s = sink.borrow();
    assert!(s
        .frames
        .iter()
        .all(|f| f.beats == 8 && f.last - f.first == 7));
    assert_eq!(s.frames[9].data, vec![9u8; 61]);
}

#[test]
fn idle_and_backpressure_happen() {
    let (mut bench, _w, src, sink) = loopback(32, 0, 50, 50, 3);
    src.borrow_mut().send(vec![1u8; 400]); // 100 beats
    let cycles = bench
        .run_until("the frame", 10_000, |_| sink.borrow().frames.len() == 1)
        .unwrap();
    // Each beat needs the source not idle and the sink ready in the same cycle (1 in 4).
    assert!(cycles > 250, "{cycles} cycles");
    assert!(sink.borrow().violations.is_empty());
}

/// Records every transfer on a link: (tdata bytes, tkeep, tlast).
struct Snoop {
    s: Vec<Signal>,
    beats: Vec<(u64, u64, bool)>,
}

impl Component for Snoop {
    fn sample(&mut self, _cycle: u64) {
        if self.s[3].is_high() && self.s[4].is_high() {
            self.beats
                .push((self.s[0].get(), self.s[1].get(), self.s[2].is_high()));
        }
    }
    fn drive(&mut self, _cycle: u64) {}
}

#[test]
fn last_beat_keeps_only_its_bytes_and_fills_the_rest_with_noise() {
    let wires = Wires::new();
    axis::declare(&wires, "lb", 64, 0);
    let mut bench = Bench::new();
    let src = bench.add(AxisSource::new(&wires, "lb", 9, 0));
    let sink = bench.add(AxisSink::new(&wires, "lb", 9, 0));
    let snoop = bench.add(Snoop {
        s: ["tdata", "tkeep", "tlast", "tvalid", "tready"]
            .iter()
            .map(|n| wires.port(&format!("lb_{n}")))
            .collect(),
        beats: Vec::new(),
    });
    bench.reset(1);
    for len in 1..=16usize {
        src.borrow_mut().send((0..len as u8).collect::<Vec<u8>>());
    }
    bench
        .run_until("16 frames", 1000, |_| sink.borrow().frames.len() == 16)
        .unwrap();
    let beats = &snoop.borrow().beats;
    let lasts: Vec<&(u64, u64, bool)> = beats.iter().filter(|b| b.2).collect();
    assert_eq!(lasts.len(), 16);
    for (i, (data, keep, _)) in lasts.iter().enumerate() {
        let n = (i % 8) + 1; // bytes in the last beat of the frame of i + 1 bytes
        assert_eq!(*keep, (1u64 << n) - 1);
        if n < 8 {
            assert_ne!(data >> (8 * n), 0, "noise in the lanes not kept");
        }
    }
    assert!(beats.iter().filter(|b| !b.2).all(|b| b.1 == 0xff));
    assert!(sink.borrow().violations.is_empty());
}

#[test]
fn stream_without_tkeep_carries_whole_beats() {
    let wires = Wires::new();
    for (n, w) in [("tdata", 32), ("tlast", 1), ("tvalid", 1), ("tready", 1)] {
        wires.add(&format!("nk_{n}"), w);
    }
    let mut bench = Bench::new();
    let src = bench.add(AxisSource::new(&wires, "nk", 1, 20));
    let sink = bench.add(AxisSink::new(&wires, "nk", 2, 20));
    bench.reset(1);
    src.borrow_mut().send((0..64u8).collect::<Vec<u8>>());
    bench
        .run_until("the frame", 1000, |_| sink.borrow().frames.len() == 1)
        .unwrap();
    assert_eq!(sink.borrow().frames[0].data, (0..64u8).collect::<Vec<u8>>());
    assert!(sink.borrow().violations.is_empty());
}

#[test]
#[should_panic(expected = "has no tkeep")]
fn stream_without_tkeep_refuses_a_partial_beat() {
    let wires = Wires::new();
    for (n, w) in [("tdata", 32), ("tlast", 1), ("tvalid", 1), ("tready", 1)] {
        wires.add(&format!("nk_{n}"), w);
    }
    AxisSource::new(&wires, "nk", 1, 0).send(vec![1, 2, 3]);
}

/// A hand-driven beat: (tvalid, tdata, tkeep, tlast).
type HandBeat = (bool, u64, u64, bool);

/// Drives beats by hand into a sink and returns its violations.
fn sink_sees(beats: &[HandBeat], ready: &[bool]) -> (Vec<String>, AxisSink) {
    let wires = Wires::new();
    axis::declare(&wires, "t", 32, 0);
    let p = |n: &str| wires.port(&format!("t_{n}_i"));
    let (valid, data, keep, last) = (p("tvalid"), p("tdata"), p("tkeep"), p("tlast"));
    let mut sink = AxisSink::new(&wires, "t", 0, 0);
    let tready = wires.port("t_tready");
    for (cycle, (&(v, d, k, l), &r)) in beats.iter().zip(ready).enumerate() {
        valid.set(v as u64);
        data.set(d);
        keep.set(k);
        last.set(l as u64);
        tready.set(r as u64);
        sink.sample(cycle as u64);
    }
    (sink.violations.clone(), sink)
}

#[test]
fn sink_reports_tkeep_and_handshake_breaches() {
    let all = [true; 8];
    let cases: [(&[HandBeat], &[bool], &str); 6] = [
        (&[(true, 1, 0b1011, true)], &all, "not contiguous"),
        (
            &[(true, 1, 0b0111, false)],
            &all,
            "partial on a beat without tlast",
        ),
        (&[(true, 1, 0b0000, true)], &all, "no byte kept"),
        (
            &[(true, 1, 0xf, true), (false, 1, 0xf, true)],
            &[false, true],
            "valid dropped",
        ),
        (
            &[(true, 1, 0xf, true), (true, 2, 0xf, true)],
            &[false, true],
            "payload changed",
        ),
        (
            &[(true, 1, 0xf, false), (true, 1, 0xf, true)],
            &[false, true],
            "payload changed",
        ),
    ];
    for (beats, ready, want) in cases {
        let (v, _) = sink_sees(beats, ready);
        assert!(v.iter().any(|v| v.contains(want)), "{want}: {v:?}");
    }
    // A clean frame: no violation, bytes in order.
    let (v, sink) = sink_sees(
        &[
            (true, 0x0403_0201, 0xf, false),
            (false, 0, 0, false),
            (true, 0xeeee_0605, 0x3, true),
        ],
        &all,
    );
    assert!(v.is_empty(), "{v:?}");
    assert_eq!(sink.frames[0].data, vec![1, 2, 3, 4, 5, 6]);
}

#[test]
fn reset_drops_a_cut_frame_and_resends_it_whole() {
    let (mut bench, _w, src, sink) = loopback(32, 0, 0, 0, 4);
    src.borrow_mut().send(vec![7u8; 40]);
    bench.run(4); // part of the frame is through
    assert!(!sink.borrow().partial().is_empty());
    bench.reset(2);
    bench
        .run_until("the frame", 1000, |_| sink.borrow().frames.len() == 1)
        .unwrap();
    assert_eq!(sink.borrow().frames[0].data, vec![7u8; 40]);
    let mut rng = Rng::new(1);
    let f: Vec<u8> = (0..100).map(|_| rng.next_u64() as u8).collect();
    src.borrow_mut().send(f.clone());
    bench
        .run_until("another", 1000, |_| sink.borrow().frames.len() == 2)
        .unwrap();
    assert_eq!(sink.borrow().frames[1].data, f);
}
