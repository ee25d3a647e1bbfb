//! Ready/valid stream source and sink, bound to a model's ports by prefix
//! (`<prefix>_valid_i`, `<prefix>_ready_o`, `<prefix>_<field>_i`, or the `_o`/`_i` mirror).
//!
//! The source holds `valid` and the payload stable until the transfer, inserting seeded random
//! idle cycles between words. The sink applies seeded random backpressure and checks the
//! protocol: once `valid` is up it must stay up, with the same payload, until the transfer.
//!
//! A word holds one value per field, except that a field of more than 64 bits (a 512-bit data
//! bus) takes [`Signal::limbs`] consecutive values, least significant first.
//!
//! Words live in flat stores ([`Words`], and the source's queue): a word on the bus is a slice
//! of one buffer, so a cycle allocates nothing and a run's words take one allocation that grows.

use crate::rng::{Percent, Rng};
use crate::sim::{Bit, Component, Dut, Signal, Sim};

fn port<M: Dut>(sim: &Sim<M>, prefix: &str, name: &str, dir: &str) -> Signal {
    sim.signal(&format!("{prefix}_{name}_{dir}"))
}

/// Drives `fields` from `word` (a wide field from its limbs in a row).
#[inline]
pub(crate) fn drive_fields(fields: &[Signal], word: &[u64]) {
    let mut at = 0;
    for s in fields {
        at += s.set_limbs(&word[at..]);
    }
}

/// Appends the values of `fields` to `word` (a wide field as its limbs in a row).
#[inline]
pub(crate) fn sample_fields(fields: &[Signal], word: &mut Vec<u64>) {
    for s in fields {
        s.get_limbs(word);
    }
}

/// How many values a word of `fields` holds.
fn stride(fields: &[Signal]) -> usize {
    fields.iter().map(Signal::limbs).sum()
}

/// Words of one stream with the cycle each was transferred in, stored flat (every word the
/// same length: one value per field, a wide field's limbs in a row).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Words {
    stride: usize,
    cycles: Vec<u64>,
    data: Vec<u64>,
}

impl Words {
    /// An empty store of words of `stride` values.
    pub fn new(stride: usize) -> Words {
        Words {
            stride,
            cycles: Vec::new(),
            data: Vec::new(),
        }
    }

    /// Values per word.
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.cycles.len()
    }

    /// True when there is no word.
    pub fn is_empty(&self) -> bool {
        self.cycles.is_empty()
    }

    /// Appends the word on `fields` now, transferred in `cycle`.
    #[inline]
    fn push_from(&mut self, cycle: u64, fields: &[Signal]) {
        self.cycles.push(cycle);
        sample_fields(fields, &mut self.data);
    }

    /// Appends a word transferred in `cycle`.
    #[inline]
    pub fn push(&mut self, cycle: u64, word: &[u64]) {
        debug_assert_eq!(word.len(), self.stride);
        self.cycles.push(cycle);
        // A word is a few values: pushed one by one, not through a `memcpy` call.
        for &v in word {
            self.data.push(v);
        }
    }

    /// The `i`-th word and its cycle.
    pub fn get(&self, i: usize) -> Option<(u64, &[u64])> {
        let c = *self.cycles.get(i)?;
        Some((c, &self.data[i * self.stride..(i + 1) * self.stride]))
    }

    /// The first word and its cycle.
    pub fn first(&self) -> Option<(u64, &[u64])> {
        self.get(0)
    }

    /// The last word and its cycle.
    pub fn last(&self) -> Option<(u64, &[u64])> {
        self.len().checked_sub(1).and_then(|i| self.get(i))
    }

    /// Every word from the `from`-th on, with its cycle, in order.
    pub fn iter_from(
        &self,
        from: usize,
    ) -> impl DoubleEndedIterator<Item = (u64, &[u64])> + ExactSizeIterator {
        let s = self.stride;
        (from.min(self.len())..self.len())
            .map(move |i| (self.cycles[i], &self.data[i * s..(i + 1) * s]))
    }

    /// Every word with its cycle, in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (u64, &[u64])> + ExactSizeIterator {
        self.iter_from(0)
    }

    /// Forgets every word (keeping the storage).
    pub fn clear(&mut self) {
        self.cycles.clear();
        self.data.clear();
    }
}

impl<'a> IntoIterator for &'a Words {
    type Item = (u64, &'a [u64]);
    type IntoIter = Box<dyn DoubleEndedIterator<Item = (u64, &'a [u64])> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl std::ops::Index<usize> for Words {
    type Output = [u64];
    /// The `i`-th word.
    fn index(&self, i: usize) -> &[u64] {
        assert!(i < self.len(), "word {i} of {}", self.len());
        &self.data[i * self.stride..(i + 1) * self.stride]
    }
}

/// Drives a stream into the model.
pub struct StreamSource {
    valid: Bit,
    ready: Bit,
    fields: Vec<Signal>,
    stride: usize,
    /// Words not yet accepted, flat: the one at `head` is next (on the bus when `on_bus`).
    queue: Vec<u64>,
    head: usize,
    on_bus: bool,
    rng: Rng,
    idle: Percent,
    /// Every word the model accepted, with the cycle it was accepted in.
    pub accepted: Words,
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
        let fields: Vec<Signal> = fields.iter().map(|f| port(sim, prefix, f, "i")).collect();
        let stride = stride(&fields);
        let s = StreamSource {
            valid: port(sim, prefix, "valid", "i").bit(),
            ready: port(sim, prefix, "ready", "o").bit(),
            fields,
            stride,
            queue: Vec::new(),
            head: 0,
            on_bus: false,
            rng: Rng::new(seed),
            idle: Percent::new(idle_percent),
            accepted: Words::new(stride),
            resets: 0,
        };
        s.valid.set(false);
        s
    }

    /// Queues one word (one value per field, a wide field's limbs in a row).
    pub fn push(&mut self, word: &[u64]) {
        assert_eq!(
            word.len(),
            self.stride,
            "one value per field (a field over 64 bits: one per 64-bit limb)"
        );
        if self.head == self.queue.len() {
            // Everything sent: start the buffer again.
            self.queue.clear();
            self.head = 0;
        } else if self.head >= 4096 && self.head * 2 >= self.queue.len() {
            // Mostly sent: drop what was.
            self.queue.drain(..self.head);
            self.head = 0;
        }
        self.queue.extend_from_slice(word);
    }

    /// Drops every word not yet accepted (queued, or on the bus now).
    pub fn clear(&mut self) {
        self.queue.clear();
        self.head = 0;
        self.on_bus = false;
        self.valid.set(false);
    }

    /// Words not yet accepted (queued, or on the bus now).
    pub fn pending(&self) -> usize {
        match self.stride {
            0 => 0,
            s => (self.queue.len() - self.head) / s,
        }
    }

    /// Changes the idle probability from now on.
    pub fn set_idle(&mut self, percent: u8) {
        self.idle = Percent::new(percent);
    }
}

impl Component for StreamSource {
    #[inline]
    fn sample(&mut self, cycle: u64) {
        if self.on_bus && self.ready.is_high() {
            let at = self.head;
            self.head += self.stride;
            self.on_bus = false;
            self.accepted.push(cycle, &self.queue[at..self.head]);
        }
    }

    #[inline]
    fn drive(&mut self, _cycle: u64) {
        if !self.on_bus && self.head < self.queue.len() && !self.rng.hit(self.idle) {
            self.on_bus = true;
            drive_fields(
                &self.fields,
                &self.queue[self.head..self.head + self.stride],
            );
        }
        self.valid.set(self.on_bus);
    }

    fn reset(&mut self) {
        // The word on the bus was not accepted: it stays at the front of the queue.
        self.on_bus = false;
        self.valid.set(false);
        self.resets += 1;
    }
}

/// Takes a stream out of the model, with random backpressure, checking the protocol.
pub struct StreamSink {
    valid: Bit,
    ready: Bit,
    fields: Vec<Signal>,
    rng: Rng,
    stall: Percent,
    /// Every word received, with its cycle.
    pub received: Words,
    /// Protocol violations seen (valid dropped or payload changed before the transfer).
    pub violations: Vec<String>,
    /// The word seen without `ready` (valid with it until the transfer), when `waiting`.
    held: Vec<u64>,
    waiting: bool,
    /// The word seen this cycle.
    now: Vec<u64>,
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
        let fields: Vec<Signal> = fields.iter().map(|f| port(sim, prefix, f, "o")).collect();
        let stride = stride(&fields);
        let s = StreamSink {
            valid: port(sim, prefix, "valid", "o").bit(),
            ready: port(sim, prefix, "ready", "i").bit(),
            fields,
            rng: Rng::new(seed),
            stall: Percent::new(stall_percent),
            received: Words::new(stride),
            violations: Vec::new(),
            held: Vec::with_capacity(stride),
            waiting: false,
            now: Vec::with_capacity(stride),
            resets: 0,
        };
        s.ready.set(false);
        s
    }

    /// Changes the backpressure probability from now on.
    pub fn set_stall(&mut self, percent: u8) {
        self.stall = Percent::new(percent);
    }
}

impl Component for StreamSink {
    #[inline]
    fn sample(&mut self, cycle: u64) {
        if !self.valid.is_high() {
            if self.waiting {
                self.waiting = false;
                self.violations.push(format!(
                    "cycle {cycle}: valid dropped before the transfer of {:x?}",
                    self.held
                ));
            }
            return;
        }
        if self.waiting {
            // Held since a cycle without `ready`: the payload must not have moved.
            self.now.clear();
            sample_fields(&self.fields, &mut self.now);
            if self.held.iter().zip(&self.now).any(|(a, b)| a != b) {
                self.violations.push(format!(
                    "cycle {cycle}: payload changed from {:x?} to {:x?} before the transfer",
                    self.held, self.now
                ));
                std::mem::swap(&mut self.held, &mut self.now);
            }
        }
        if self.ready.is_high() {
            self.waiting = false;
            self.received.push_from(cycle, &self.fields);
        } else if !self.waiting {
            self.waiting = true;
            self.held.clear();
            sample_fields(&self.fields, &mut self.held);
        }
    }

    #[inline]
    fn drive(&mut self, _cycle: u64) {
        self.ready.set(!self.rng.hit(self.stall));
    }

    fn reset(&mut self) {
        self.waiting = false;
        self.ready.set(false);
        self.resets += 1;
    }
}
