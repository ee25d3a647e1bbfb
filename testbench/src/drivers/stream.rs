//! Ready/valid stream source and sink, bound to a model's ports by prefix
//! (`<prefix>_valid_i`, `<prefix>_ready_o`, `<prefix>_<field>_i`, or the `_o`/`_i` mirror).
//!
//! The source holds `valid` and the payload stable until the transfer, inserting seeded random
//! idle cycles between words. The sink applies seeded random backpressure and checks the
//! protocol: once `valid` is up it must stay up, with the same payload, until the transfer.
//!
//! A word holds one value per field, except that a field of more than 64 bits (a 512-bit data
//! bus) takes [`Signal::limbs`] consecutive values, least significant first.

use crate::rng::Rng;
use crate::sim::{Component, Dut, Signal, Sim};
use std::collections::VecDeque;

fn port<M: Dut>(sim: &Sim<M>, prefix: &str, name: &str, dir: &str) -> Signal {
    sim.signal(&format!("{prefix}_{name}_{dir}"))
}

/// Drives `fields` from `word` (a wide field from its limbs in a row).
pub(crate) fn drive_fields(fields: &[Signal], word: &[u64]) {
    let mut at = 0;
    for s in fields {
        at += s.set_limbs(&word[at..]);
    }
}

/// The values of `fields` as one word (a wide field as its limbs in a row).
pub(crate) fn sample_fields(fields: &[Signal]) -> Vec<u64> {
    let mut word = Vec::with_capacity(fields.len());
    for s in fields {
        s.get_limbs(&mut word);
    }
    word
}

/// Drives a stream into the model.
pub struct StreamSource {
    valid: Signal,
    ready: Signal,
    fields: Vec<Signal>,
    queue: VecDeque<Vec<u64>>,
    current: Option<Vec<u64>>,
    rng: Rng,
    idle_percent: u8,
    /// Every word the model accepted, with the cycle it was accepted in.
    pub accepted: Vec<(u64, Vec<u64>)>,
    /// Number of resets seen; words accepted before a reset may be lost by the model.
    pub resets: usize,
}

impl StreamSource {
    /// A source for the model's input stream `prefix` with payload `fields` (in order); each
    /// cycle it stays idle with probability `idle_percent` when it has a word to send.
    pub fn new<M: Dut>(
        sim: &Sim<M>,
        prefix: &str,
        fields: &[&str],
        seed: u64,
        idle_percent: u8,
    ) -> StreamSource {
        let s = StreamSource {
            valid: port(sim, prefix, "valid", "i"),
            ready: port(sim, prefix, "ready", "o"),
            fields: fields.iter().map(|f| port(sim, prefix, f, "i")).collect(),
            queue: VecDeque::new(),
            current: None,
            rng: Rng::new(seed),
            idle_percent,
            accepted: Vec::new(),
            resets: 0,
        };
        s.valid.set(0);
        s
    }

    /// Queues one word (one value per field, a wide field's limbs in a row).
    pub fn push(&mut self, word: Vec<u64>) {
        assert_eq!(
            word.len(),
            self.fields.iter().map(Signal::limbs).sum::<usize>(),
            "one value per field (a field over 64 bits: one per 64-bit limb)"
        );
        self.queue.push_back(word);
    }

    /// Drops every word not yet accepted (queued, or on the bus now).
    pub fn clear(&mut self) {
        self.queue.clear();
        self.current = None;
        self.valid.set(0);
    }

    /// Words not yet accepted (queued, or on the bus now).
    pub fn pending(&self) -> usize {
        self.queue.len() + self.current.is_some() as usize
    }

    /// Changes the idle probability from now on.
    pub fn set_idle(&mut self, percent: u8) {
        self.idle_percent = percent;
    }
}

impl Component for StreamSource {
    fn sample(&mut self, cycle: u64) {
        if self.current.is_some() && self.ready.is_high() {
            let w = self.current.take().unwrap();
            self.accepted.push((cycle, w));
        }
    }

    fn drive(&mut self, _cycle: u64) {
        if self.current.is_none() && !self.queue.is_empty() && !self.rng.chance(self.idle_percent) {
            self.current = self.queue.pop_front();
        }
        match &self.current {
            Some(w) => {
                self.valid.set(1);
                drive_fields(&self.fields, w);
            }
            None => self.valid.set(0),
        }
    }

    fn reset(&mut self) {
        // The word on the bus was not accepted: it goes back to the front of the queue.
        if let Some(w) = self.current.take() {
            self.queue.push_front(w);
        }
        self.valid.set(0);
        self.resets += 1;
    }
}

/// Takes a stream out of the model, with random backpressure, checking the protocol.
pub struct StreamSink {
    valid: Signal,
    ready: Signal,
    fields: Vec<Signal>,
    rng: Rng,
    stall_percent: u8,
    /// Every word received, with its cycle.
    pub received: Vec<(u64, Vec<u64>)>,
    /// Protocol violations seen (valid dropped or payload changed before the transfer).
    pub violations: Vec<String>,
    waiting: Option<Vec<u64>>,
    /// Number of resets seen.
    pub resets: usize,
}

impl StreamSink {
    /// A sink for the model's output stream `prefix`; each cycle it withholds `ready` with
    /// probability `stall_percent`.
    pub fn new<M: Dut>(
        sim: &Sim<M>,
        prefix: &str,
        fields: &[&str],
        seed: u64,
        stall_percent: u8,
    ) -> StreamSink {
        let s = StreamSink {
            valid: port(sim, prefix, "valid", "o"),
            ready: port(sim, prefix, "ready", "i"),
            fields: fields.iter().map(|f| port(sim, prefix, f, "o")).collect(),
            rng: Rng::new(seed),
            stall_percent,
            received: Vec::new(),
            violations: Vec::new(),
            waiting: None,
            resets: 0,
        };
        s.ready.set(0);
        s
    }

    /// Changes the backpressure probability from now on.
    pub fn set_stall(&mut self, percent: u8) {
        self.stall_percent = percent;
    }
}

impl Component for StreamSink {
    fn sample(&mut self, cycle: u64) {
        if !self.valid.is_high() {
            if let Some(w) = self.waiting.take() {
                self.violations.push(format!(
                    "cycle {cycle}: valid dropped before the transfer of {w:x?}"
                ));
            }
            return;
        }
        let word = sample_fields(&self.fields);
        if let Some(w) = self.waiting.take() {
            if w != word {
                self.violations.push(format!(
                    "cycle {cycle}: payload changed from {w:x?} to {word:x?} before the transfer"
                ));
            }
        }
        if self.ready.is_high() {
            self.received.push((cycle, word));
        } else {
            self.waiting = Some(word);
        }
    }

    fn drive(&mut self, _cycle: u64) {
        self.ready.set(!self.rng.chance(self.stall_percent) as u64);
    }

    fn reset(&mut self) {
        self.waiting = None;
        self.ready.set(0);
        self.resets += 1;
    }
}
