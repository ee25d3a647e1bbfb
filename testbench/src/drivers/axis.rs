//! AXI4-Stream frame source and sink (Ethernet frames without FCS), bound by prefix.
//!
//! Signals: `<prefix>_tdata` (any multiple of 8 bits), `<prefix>_tkeep` (one bit per byte;
//! optional: without it every beat is full), `_tlast`, `_tvalid`, `_tready`, and optionally
//! `_tuser`, with the model's `_i`/`_o` suffix: the source drives a model's input stream
//! (`<prefix>_tdata_i`, ..., and watches `<prefix>_tready_o`), the sink takes a model's output
//! stream (`<prefix>_tdata_o`, ..., and drives `<prefix>_tready_i`).
//!
//! Frames are bytes, first byte in lane 0 (`tdata[7:0]`) of the first beat. A frame of `n`
//! bytes on a `w`-byte bus is `ceil(n / w)` beats; every beat but the last keeps all bytes, the
//! last keeps bytes `0 .. n % w` (all of them when `w` divides `n`) and has `tlast`. The lanes
//! a beat does not keep carry seeded random bytes, so a sink that ignores `tkeep` is caught.
//!
//! ```text
//! let src = sim.add(AxisSource::new(&sim, "s_axis", 1, 30));   // 30% idle cycles
//! let sink = sim.add(AxisSink::new(&sim, "m_axis", 2, 50));    // 50% backpressure
//! src.borrow_mut().send(vec![0x55; 60]);
//! sim.run_until("a frame", 1000, |_| sink.borrow().frames.len() == 1)?;
//! assert_eq!(sink.borrow().frames[0].data, vec![0x55; 60]);
//! assert!(sink.borrow().violations.is_empty());
//! ```

use super::{get_bytes, set_bytes, Hold, Ports, Wires};
use crate::rng::Rng;
use crate::sim::{Component, Signal};
use std::collections::VecDeque;

/// Declares on `wires` an AXI4-Stream link `prefix` with a `data_bits`-bit `tdata`, its
/// `tkeep`, and a `user_bits`-bit `tuser` when `user_bits > 0`: a source and a sink bound to
/// the same prefix are then wired to each other.
pub fn declare(wires: &Wires, prefix: &str, data_bits: u32, user_bits: u32) {
    wires.add(&format!("{prefix}_tdata"), data_bits);
    wires.add(&format!("{prefix}_tkeep"), data_bits / 8);
    wires.add(&format!("{prefix}_tlast"), 1);
    wires.add(&format!("{prefix}_tvalid"), 1);
    wires.add(&format!("{prefix}_tready"), 1);
    if user_bits > 0 {
        wires.add(&format!("{prefix}_tuser"), user_bits);
    }
}

struct Bus {
    tdata: Signal,
    tkeep: Option<Signal>,
    tlast: Signal,
    tvalid: Signal,
    tready: Signal,
    tuser: Option<Signal>,
    bytes: usize,
}

impl Bus {
    /// `dir` is the suffix of the payload and valid (`i` for a model input), `rev` of ready.
    #[track_caller]
    fn bind(ports: &impl Ports, prefix: &str, dir: &str, rev: &str) -> Bus {
        let tdata = ports.port(&format!("{prefix}_tdata_{dir}"));
        assert!(
            tdata.width() % 8 == 0,
            "{prefix}: tdata is {} bits, not a multiple of 8",
            tdata.width()
        );
        let bytes = tdata.width() as usize / 8;
        let tkeep = ports.find(&format!("{prefix}_tkeep_{dir}"));
        if let Some(k) = &tkeep {
            assert_eq!(
                k.width() as usize,
                bytes,
                "{prefix}: tkeep has one bit per tdata byte"
            );
        }
        Bus {
            tdata,
            tkeep,
            tlast: ports.port(&format!("{prefix}_tlast_{dir}")),
            tvalid: ports.port(&format!("{prefix}_tvalid_{dir}")),
            tready: ports.port(&format!("{prefix}_tready_{rev}")),
            tuser: ports.find(&format!("{prefix}_tuser_{dir}")),
            bytes,
        }
    }
}

/// A beat: data bytes (bus width), keep bytes (one bit per data byte), last, user.
type Beat = (Vec<u8>, Vec<u8>, bool, u64);

/// Sends frames into the model, with seeded random idle cycles between beats.
pub struct AxisSource {
    bus: Bus,
    frames: VecDeque<(Vec<u8>, u64)>,
    /// Bytes of the front frame already put into beats.
    offset: usize,
    beat: Option<Beat>,
    rng: Rng,
    idle_percent: u8,
    /// Every frame the model accepted (its last beat's cycle, its length), in order.
    pub sent: Vec<(u64, usize)>,
    /// The cycle of each accepted frame's first beat, in the order of `sent`.
    pub starts: Vec<u64>,
    /// The front frame's first beat's cycle, once accepted.
    start: Option<u64>,
    /// Beats accepted.
    pub beats: u64,
    /// Resets seen; a frame cut by a reset is sent again whole.
    pub resets: usize,
}

impl AxisSource {
    /// A source for the model's input stream `prefix`; each cycle it stays idle with
    /// probability `idle_percent` when it has a beat to send.
    #[track_caller]
    pub fn new(ports: &impl Ports, prefix: &str, seed: u64, idle_percent: u8) -> AxisSource {
        let s = AxisSource {
            bus: Bus::bind(ports, prefix, "i", "o"),
            frames: VecDeque::new(),
            offset: 0,
            beat: None,
            rng: Rng::new(seed),
            idle_percent,
            sent: Vec::new(),
            starts: Vec::new(),
            start: None,
            beats: 0,
            resets: 0,
        };
        s.bus.tvalid.set(0);
        s
    }

    /// Bus width in bytes.
    pub fn bytes(&self) -> usize {
        self.bus.bytes
    }

    /// Drops every frame not yet sent whole (the peer that queued them is gone); the next
    /// frame starts at a frame boundary once the model's reset ends.
    pub fn clear(&mut self) {
        self.frames.clear();
        self.offset = 0;
        self.beat = None;
        self.start = None;
    }

    /// Queues a frame (`tuser` 0).
    #[track_caller]
    pub fn send(&mut self, frame: impl Into<Vec<u8>>) {
        self.send_user(frame, 0);
    }

    /// Queues a frame whose beats all carry `user` on `tuser` (the stream must have `tuser`
    /// unless `user` is 0).
    #[track_caller]
    pub fn send_user(&mut self, frame: impl Into<Vec<u8>>, user: u64) {
        let frame = frame.into();
        assert!(
            !frame.is_empty(),
            "an AXI4-Stream frame has at least one byte"
        );
        assert!(
            self.bus.tkeep.is_some() || frame.len() % self.bus.bytes == 0,
            "{:?} has no tkeep: a frame must fill its last beat ({} bytes is not a multiple of {})",
            self.bus.tdata,
            frame.len(),
            self.bus.bytes
        );
        assert!(
            user == 0 || self.bus.tuser.is_some(),
            "{:?}: this stream has no tuser",
            self.bus.tdata
        );
        self.frames.push_back((frame, user));
    }

    /// Frames not yet wholly accepted.
    pub fn pending(&self) -> usize {
        self.frames.len()
    }

    /// Changes the idle probability from now on.
    pub fn set_idle(&mut self, percent: u8) {
        self.idle_percent = percent;
    }

    fn next_beat(&mut self) -> Option<Beat> {
        let (frame, user) = self.frames.front()?;
        let w = self.bus.bytes;
        let n = (frame.len() - self.offset).min(w);
        let mut data = vec![0u8; w];
        data[..n].copy_from_slice(&frame[self.offset..self.offset + n]);
        for b in &mut data[n..] {
            *b = self.rng.next_u64() as u8;
        }
        let mut keep = vec![0u8; w.div_ceil(8)];
        for i in 0..n {
            keep[i / 8] |= 1 << (i % 8);
        }
        let last = self.offset + n == frame.len();
        let user = *user;
        self.offset += n;
        Some((data, keep, last, user))
    }
}

impl Component for AxisSource {
    fn sample(&mut self, cycle: u64) {
        if self.beat.is_some() && self.bus.tready.is_high() {
            let (_, _, last, _) = self.beat.take().unwrap();
            self.beats += 1;
            let start = *self.start.get_or_insert(cycle);
            if last {
                let (frame, _) = self.frames.pop_front().unwrap();
                self.offset = 0;
                self.sent.push((cycle, frame.len()));
                self.starts.push(start);
                self.start = None;
            }
        }
    }

    fn drive(&mut self, _cycle: u64) {
        if self.beat.is_none() && !self.frames.is_empty() && !self.rng.chance(self.idle_percent) {
            self.beat = self.next_beat();
        }
        match &self.beat {
            Some((data, keep, last, user)) => {
                set_bytes(&self.bus.tdata, data);
                if let Some(k) = &self.bus.tkeep {
                    set_bytes(k, keep);
                }
                if let Some(u) = &self.bus.tuser {
                    u.set(*user);
                }
                self.bus.tlast.set(*last as u64);
                self.bus.tvalid.set(1);
            }
            None => self.bus.tvalid.set(0),
        }
    }

    fn reset(&mut self) {
        self.beat = None;
        self.offset = 0;
        self.start = None;
        self.bus.tvalid.set(0);
        self.resets += 1;
    }
}

/// A frame the sink received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The bytes whose `tkeep` bits were set, in order.
    pub data: Vec<u8>,
    /// `tuser` of the last beat (0 without `tuser`).
    pub user: u64,
    /// Cycle of the first beat.
    pub first: u64,
    /// Cycle of the last beat.
    pub last: u64,
    /// Number of beats.
    pub beats: usize,
}

/// Takes frames out of the model, with seeded random backpressure, checking the protocol.
///
/// Checks (each breach is a line in `violations`): `tvalid` once up stays up, with `tdata`,
/// `tkeep`, `tlast` and `tuser` stable, until `tready`; `tkeep` is contiguous from byte 0 and
/// not empty; a beat without `tlast` keeps every byte; with `gapless`, `tvalid` stays up from
/// a frame's first beat to its last (an Ethernet MAC would underrun otherwise).
pub struct AxisSink {
    bus: Bus,
    rng: Rng,
    stall_percent: u8,
    hold: Hold<Beat>,
    partial: Vec<u8>,
    first: u64,
    beats: usize,
    data: Vec<u8>,
    keep: Vec<u8>,
    /// Frames received, in order.
    pub frames: Vec<Frame>,
    /// Protocol breaches.
    pub violations: Vec<String>,
    /// Resets seen; a frame cut by a reset is dropped.
    pub resets: usize,
    /// Check that `tvalid` never falls inside a frame.
    pub gapless: bool,
}

impl AxisSink {
    /// A sink for the model's output stream `prefix`; each cycle it withholds `tready` with
    /// probability `stall_percent`.
    #[track_caller]
    pub fn new(ports: &impl Ports, prefix: &str, seed: u64, stall_percent: u8) -> AxisSink {
        let s = AxisSink {
            bus: Bus::bind(ports, prefix, "o", "i"),
            rng: Rng::new(seed),
            stall_percent,
            hold: Hold::default(),
            partial: Vec::new(),
            first: 0,
            beats: 0,
            data: Vec::new(),
            keep: Vec::new(),
            frames: Vec::new(),
            violations: Vec::new(),
            resets: 0,
            gapless: false,
        };
        s.bus.tready.set(0);
        s
    }

    /// Changes the backpressure probability from now on.
    pub fn set_stall(&mut self, percent: u8) {
        self.stall_percent = percent;
    }

    /// Bytes of the frame being received (its beats so far).
    pub fn partial(&self) -> &[u8] {
        &self.partial
    }
}

impl Component for AxisSink {
    fn sample(&mut self, cycle: u64) {
        let w = self.bus.bytes;
        let valid = self.bus.tvalid.is_high();
        let ready = self.bus.tready.is_high();
        let bus = &self.bus;
        let (data, keep) = (&mut self.data, &mut self.keep);
        let mut v = std::mem::take(&mut self.violations);
        if self.gapless && self.beats > 0 && !valid {
            v.push(format!(
                "cycle {cycle}: AXI4-Stream: tvalid fell inside a frame (after {} beats)",
                self.beats
            ));
        }
        let beat = self.hold.observe(
            cycle,
            "AXI4-Stream",
            valid,
            ready,
            || {
                get_bytes(&bus.tdata, data);
                match &bus.tkeep {
                    Some(k) => get_bytes(k, keep),
                    None => {
                        keep.clear();
                        keep.resize(w.div_ceil(8), 0);
                        for i in 0..w {
                            keep[i / 8] |= 1 << (i % 8);
                        }
                    }
                }
                (
                    data.clone(),
                    keep.clone(),
                    bus.tlast.is_high(),
                    bus.tuser.as_ref().map_or(0, Signal::get),
                )
            },
            &mut v,
        );
        if let Some((data, keep, last, user)) = beat {
            let bit = |i: usize| keep[i / 8] >> (i % 8) & 1 == 1;
            let kept = (0..w).take_while(|&i| bit(i)).count();
            if kept == 0 {
                v.push(format!(
                    "cycle {cycle}: AXI4-Stream: a beat with no byte kept"
                ));
            }
            if (kept..w).any(bit) {
                v.push(format!(
                    "cycle {cycle}: AXI4-Stream: tkeep {keep:02x?} is not contiguous from byte 0"
                ));
            }
            if !last && kept < w {
                v.push(format!(
                    "cycle {cycle}: AXI4-Stream: tkeep {keep:02x?} is partial on a beat without tlast"
                ));
            }
            if self.beats == 0 {
                self.first = cycle;
            }
            self.beats += 1;
            self.partial
                .extend((0..w).filter(|&i| bit(i)).map(|i| data[i]));
            if last {
                self.frames.push(Frame {
                    data: std::mem::take(&mut self.partial),
                    user,
                    first: self.first,
                    last: cycle,
                    beats: self.beats,
                });
                self.beats = 0;
            }
        }
        self.violations = v;
    }

    fn drive(&mut self, _cycle: u64) {
        self.bus
            .tready
            .set(!self.rng.chance(self.stall_percent) as u64);
    }

    fn reset(&mut self) {
        self.hold.clear();
        self.partial.clear();
        self.beats = 0;
        self.bus.tready.set(0);
        self.resets += 1;
    }
}
