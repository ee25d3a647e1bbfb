//! [`MemDevice`]: a [`Device`] backed by a byte array, that finishes each request after a
//! random number of [`Device::advance`] calls and, by default, out of order, so the server's
//! out-of-order, back-pressure and split paths run under the same clients as the chip.

use super::{Device, Op, Reply, Request, NBD_EIO};
use crate::rng::Rng;

/// A byte array as a block device, with random completion delays and reordering.
///
/// A request takes effect when it completes, not when it is submitted: a read that overlaps a
/// write in flight may see the old or the new bytes, as the NBD protocol allows (a client
/// orders overlapping requests by waiting for replies). Trim and WriteZeroes both zero the
/// range. Defaults: block sizes 512/4096/1 MiB, flush, trim and write zeroes carried, 64
/// requests in flight, delays of 0 to 16 advance calls, out of order.
pub struct MemDevice {
    data: Vec<u8>,
    sizes: (u32, u32, u32),
    supports: (bool, bool, bool),
    depth: usize,
    delay: (u32, u32),
    reorder: bool,
    failing: Option<(u64, u64)>,
    rng: Rng,
    now: u64,
    /// Submitted, not finished: (due advance call, submission number, request).
    pending: Vec<(u64, u64, Request)>,
    /// In order: the due time of the last request submitted.
    last_due: u64,
    submitted: u64,
    reordered: u64,
    max_pending: usize,
    advances: u64,
    bytes_read: u64,
    bytes_written: u64,
}

impl MemDevice {
    /// A zeroed device of `size` bytes; `seed` drives its delays and ordering.
    pub fn new(size: u64, seed: u64) -> MemDevice {
        MemDevice {
            data: vec![0; size as usize],
            sizes: (512, 4096, 1 << 20),
            supports: (true, true, true),
            depth: 64,
            delay: (0, 16),
            reorder: true,
            failing: None,
            rng: Rng::new(seed),
            now: 0,
            pending: Vec::new(),
            last_due: 0,
            submitted: 0,
            reordered: 0,
            max_pending: 0,
            advances: 0,
            bytes_read: 0,
            bytes_written: 0,
        }
    }

    /// Minimum, preferred and maximum block size it advertises.
    pub fn with_block_sizes(mut self, min: u32, pref: u32, max: u32) -> MemDevice {
        self.sizes = (min, pref, max);
        self
    }

    /// Which of flush, trim and write zeroes it carries.
    pub fn with_supports(mut self, flush: bool, trim: bool, zeroes: bool) -> MemDevice {
        self.supports = (flush, trim, zeroes);
        self
    }

    /// Requests in flight before [`Device::can_accept`] says no (at least 1).
    pub fn with_depth(mut self, depth: usize) -> MemDevice {
        self.depth = depth.max(1);
        self
    }

    /// Each request finishes `min..=max` advance calls after it was submitted (0: the next
    /// call).
    pub fn with_delay(mut self, min: u32, max: u32) -> MemDevice {
        self.delay = (min, max.max(min));
        self
    }

    /// Whether requests may finish out of submission order (false: strictly in order).
    pub fn with_reorder(mut self, reorder: bool) -> MemDevice {
        self.reorder = reorder;
        self
    }

    /// Reads and writes touching `len` bytes at `offset` fail with `NBD_EIO` (a bad block).
    pub fn with_failing_range(mut self, offset: u64, len: u64) -> MemDevice {
        self.failing = Some((offset, len));
        self
    }

    /// The device's bytes.
    pub fn contents(&self) -> &[u8] {
        &self.data
    }

    fn finish(&mut self, r: Request) -> Reply {
        let (at, len) = (r.offset as usize, r.len as usize);
        let touches_bad = self
            .failing
            .is_some_and(|(o, l)| r.offset < o + l && o < r.offset + u64::from(r.len));
        let mut reply = Reply {
            handle: r.handle,
            error: 0,
            data: Vec::new(),
        };
        match r.op {
            Op::Read | Op::Write(_) if touches_bad => reply.error = NBD_EIO,
            Op::Read => {
                reply.data = self.data[at..at + len].to_vec();
                self.bytes_read += len as u64;
            }
            Op::Write(bytes) => {
                self.data[at..at + len].copy_from_slice(&bytes);
                self.bytes_written += len as u64;
            }
            Op::Trim | Op::WriteZeroes => self.data[at..at + len].fill(0),
            Op::Flush => {}
        }
        reply
    }
}

impl Device for MemDevice {
    fn size(&self) -> u64 {
        self.data.len() as u64
    }

    fn block_sizes(&self) -> (u32, u32, u32) {
        self.sizes
    }

    fn supports(&self) -> (bool, bool, bool) {
        self.supports
    }

    fn can_accept(&self) -> bool {
        self.pending.len() < self.depth
    }

    fn submit(&mut self, r: Request) -> Result<(), String> {
        if !self.can_accept() {
            return Err(format!(
                "submitted while full ({} requests in flight)",
                self.pending.len()
            ));
        }
        let end = r.offset + u64::from(r.len);
        if end > self.size() || r.len > self.sizes.2 {
            return Err(format!(
                "request at {} len {} outside the {}-byte device or over its {}-byte maximum",
                r.offset,
                r.len,
                self.size(),
                self.sizes.2
            ));
        }
        if let Op::Write(bytes) = &r.op {
            if bytes.len() != r.len as usize {
                return Err(format!(
                    "write of len {} carries {} bytes",
                    r.len,
                    bytes.len()
                ));
            }
        }
        let (lo, hi) = self.delay;
        let mut due = self.now + 1 + u64::from(lo) + self.rng.below(u64::from(hi - lo) + 1);
        if !self.reorder {
            due = due.max(self.last_due);
            self.last_due = due;
        }
        self.pending.push((due, self.submitted, r));
        self.submitted += 1;
        self.max_pending = self.max_pending.max(self.pending.len());
        Ok(())
    }

    fn advance(&mut self) -> Result<Vec<Reply>, String> {
        self.now += 1;
        self.advances += 1;
        let (mut done, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|(due, _, _)| *due <= self.now);
        self.pending = rest;
        done.sort_by_key(|&(_, n, _)| n);
        if self.reorder {
            // Fisher-Yates: requests due together finish in any order.
            for i in (1..done.len()).rev() {
                let j = self.rng.below(i as u64 + 1) as usize;
                done.swap(i, j);
            }
        }
        let oldest_pending = self.pending.iter().map(|&(_, m, _)| m).min();
        let mut replies = Vec::with_capacity(done.len());
        for i in 0..done.len() {
            let n = done[i].1;
            let later_in_batch = done[i + 1..].iter().any(|&(_, m, _)| m < n);
            if later_in_batch || oldest_pending.is_some_and(|m| m < n) {
                self.reordered += 1;
            }
        }
        for (_, _, r) in done {
            replies.push(self.finish(r));
        }
        Ok(replies)
    }

    fn summary(&self) -> String {
        format!(
            "mem: {} requests, {} KiB read, {} KiB written, at most {} in flight, {} finished before an earlier one, {} advance calls",
            self.submitted,
            self.bytes_read / 1024,
            self.bytes_written / 1024,
            self.max_pending,
            self.reordered,
            self.advances
        )
    }
}
