//! Golden model of the DMA descriptor walker (`hdl-gen/src/dma/walker.rs`): from a command, the
//! memory page size and host memory, the exact segments the walker emits and the descriptor
//! bursts it may read. Plain Rust, no cycles.
//!
//! Descriptor memory is read in 64-bit words, run by run (a PRP list page, an SGL segment), in
//! bursts of `min(words left in the run, words to the next 4 KiB boundary, 256)` words; a burst
//! the memory answers with an error makes every one of its words an error, reported (04h) when
//! the walk reaches that word. The rules are in the generator's documentation.

use std::collections::VecDeque;

/// NVMe status codes (SCT 0) the walker reports.
pub mod sc {
    /// Success.
    pub const SUCCESS: u16 = 0x00;
    /// Data Transfer Error.
    pub const DATA_TRANSFER_ERROR: u16 = 0x04;
    /// Invalid SGL Segment Descriptor.
    pub const INVALID_SGL_SEGMENT: u16 = 0x0d;
    /// Data SGL Length Invalid.
    pub const SGL_LENGTH_INVALID: u16 = 0x0f;
    /// SGL Descriptor Type Invalid.
    pub const SGL_TYPE_INVALID: u16 = 0x11;
    /// PRP Offset Invalid.
    pub const PRP_OFFSET_INVALID: u16 = 0x13;
}

/// A command on `s_cmd`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Command {
    /// Transfer tag.
    pub tag: u64,
    /// 1: stream -> host memory (a host Read).
    pub write: bool,
    /// The data pointer is an SGL descriptor.
    pub sgl: bool,
    /// SQE DW6-9: PRP1 in bits 63:0, PRP2 in 127:64; or one SGL descriptor.
    pub dptr: u128,
    /// Bytes.
    pub len: u32,
    /// The first byte the caller needs (a window's offset; 0: all of them). A PRP walk with a
    /// list and `from` past PRP1's bytes replaces PRP1's segment and the whole list pages
    /// before `from` by one bit bucket segment (address 0) and reads the list from the first
    /// entry it needs (at most the last data entry of the first list page: a chain pointer is
    /// never skipped). The entries it leaves out are not read, so not checked.
    pub from: u32,
}

/// A segment on `m_seg`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Transfer tag.
    pub tag: u64,
    /// Direction.
    pub write: bool,
    /// Host address (0 on a status segment).
    pub addr: u64,
    /// Bytes (a status segment: the bytes no earlier segment covered).
    pub len: u32,
    /// An SGL bit bucket.
    pub bucket: bool,
    /// The transfer's last segment.
    pub last: bool,
    /// `{SCT, SC}`; non-zero ends the transfer.
    pub status: u16,
}

/// What the walker does for one command.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Walk {
    /// The segments, the last one with `last` set.
    pub segments: Vec<Segment>,
    /// Every descriptor burst the walker may issue: `(address of its first word, bytes)`. The
    /// walker issues a prefix of each run's bursts (all of them when it reads the run to its end).
    pub fetches: Vec<(u64, u32)>,
}

impl Walk {
    /// The transfer's final status.
    pub fn status(&self) -> u16 {
        self.segments.last().map_or(0, |s| s.status)
    }
}

/// An SGL descriptor with `addr`, `len` and `type`, as 16 little-endian bytes (a `u128`).
pub fn sgl_desc(addr: u64, len: u32, ty: u8) -> u128 {
    addr as u128 | (len as u128) << 64 | ((ty as u128) << 4) << 120
}

/// The bursts of a run of `words` 64-bit words at `addr`.
pub fn bursts(addr: u64, words: u64) -> Vec<(u64, u32)> {
    let (mut a, mut left, mut out) = (addr, words, Vec::new());
    while left > 0 {
        let n = left.min((4096 - a % 4096) / 8).min(256);
        out.push((a, (n * 8) as u32));
        a = a.wrapping_add(n * 8);
        left -= n;
    }
    out
}

struct Fetcher<F> {
    read: F,
    plan: VecDeque<(u64, u32)>,
    words: VecDeque<Result<u64, ()>>,
}

impl<F: FnMut(u64, u32) -> Result<Vec<u8>, ()>> Fetcher<F> {
    fn start(&mut self, addr: u64, words: u64, fetches: &mut Vec<(u64, u32)>) {
        let b = bursts(addr, words);
        fetches.extend(&b);
        self.plan = b.into();
        self.words.clear();
    }

    fn next(&mut self) -> Result<u64, ()> {
        if self.words.is_empty() {
            let (a, n) = self
                .plan
                .pop_front()
                .expect("the walk reads only planned words");
            match (self.read)(a, n) {
                Ok(bytes) => self.words.extend(
                    bytes
                        .chunks(8)
                        .map(|c| Ok(u64::from_le_bytes(c.try_into().unwrap()))),
                ),
                Err(()) => self.words.extend((0..n / 8).map(|_| Err(()))),
            }
        }
        self.words.pop_front().unwrap()
    }
}

/// Walks `cmd` with memory page size `4096 << mps`; `read(addr, bytes)` reads descriptor
/// memory (one burst), `Err` for a burst answered with an AXI error.
pub fn walk(cmd: &Command, mps: u8, read: impl FnMut(u64, u32) -> Result<Vec<u8>, ()>) -> Walk {
    let mut w = Walk::default();
    let mut f = Fetcher {
        read,
        plan: VecDeque::new(),
        words: VecDeque::new(),
    };
    let mut rem = cmd.len;
    let seg = |addr: u64, len: u32, bucket: bool, last: bool, status: u16| Segment {
        tag: cmd.tag,
        write: cmd.write,
        addr,
        len,
        bucket,
        last,
        status,
    };
    let result = if cmd.sgl {
        walk_sgl(cmd, &mut f, &mut w, &mut rem, &seg)
    } else if cmd.len == 0 {
        Ok(())
    } else {
        walk_prp(cmd, mps, &mut f, &mut w, &mut rem, &seg)
    };
    match result {
        Ok(()) if w.segments.last().is_some_and(|s| s.last) => {}
        Ok(()) => w.segments.push(seg(0, 0, false, true, sc::SUCCESS)),
        Err(code) => w.segments.push(seg(0, rem, false, true, code)),
    }
    w
}

type SegFn<'a> = dyn Fn(u64, u32, bool, bool, u16) -> Segment + 'a;

fn walk_prp<F: FnMut(u64, u32) -> Result<Vec<u8>, ()>>(
    cmd: &Command,
    mps: u8,
    f: &mut Fetcher<F>,
    w: &mut Walk,
    rem: &mut u32,
    seg: &SegFn,
) -> Result<(), u16> {
    let page = 4096u64 << mps;
    let prp1 = cmd.dptr as u64;
    let prp2 = (cmd.dptr >> 64) as u64;
    if prp1 & 3 != 0 {
        return Err(sc::PRP_OFFSET_INVALID);
    }
    let first = (*rem as u64).min(page - prp1 % page) as u32;
    *rem -= first;
    w.segments.push(seg(prp1, first, false, *rem == 0, 0));
    if *rem == 0 {
        return Ok(());
    }
    if *rem as u64 <= page {
        if !prp2.is_multiple_of(page) {
            return Err(sc::PRP_OFFSET_INVALID);
        }
        w.segments.push(seg(prp2, *rem, false, true, 0));
        *rem = 0;
        return Ok(());
    }
    if prp2 & 7 != 0 {
        return Err(sc::PRP_OFFSET_INVALID);
    }
    let mut entries = (*rem as u64).div_ceil(page);
    let mut slots = (page - prp2 % page) / 8;
    let mut skip = 0u64;
    if cmd.from >= first {
        let max = if entries <= slots {
            entries - 1
        } else {
            slots.saturating_sub(2)
        };
        skip = (u64::from(cmd.from - first) / page).min(max);
        let bytes = first + (skip * page) as u32;
        w.segments.pop();
        w.segments.push(seg(0, bytes, true, false, 0));
        *rem -= (skip * page) as u32;
        entries -= skip;
        slots -= skip;
    }
    f.start(prp2 + 8 * skip, entries.min(slots), &mut w.fetches);
    loop {
        let e = f.next().map_err(|()| sc::DATA_TRANSFER_ERROR)?;
        if slots == 1 && entries > 1 {
            if e & 7 != 0 {
                return Err(sc::PRP_OFFSET_INVALID);
            }
            slots = (page - e % page) / 8;
            f.start(e, entries.min(slots), &mut w.fetches);
            continue;
        }
        if e % page != 0 {
            return Err(sc::PRP_OFFSET_INVALID);
        }
        let n = (*rem as u64).min(page) as u32;
        *rem -= n;
        w.segments.push(seg(e, n, false, *rem == 0, 0));
        if *rem == 0 {
            return Ok(());
        }
        entries -= 1;
        slots -= 1;
    }
}

fn walk_sgl<F: FnMut(u64, u32) -> Result<Vec<u8>, ()>>(
    cmd: &Command,
    f: &mut Fetcher<F>,
    w: &mut Walk,
    rem: &mut u32,
    seg: &SegFn,
) -> Result<(), u16> {
    // The descriptor being looked at, whether it is final, whether a segment pointer may be here.
    let mut d = cmd.dptr;
    let (mut fin, mut ptr_ok) = (true, true);
    // Descriptors left in the current segment, and whether it is a Last Segment.
    let (mut count, mut in_last) = (0u64, false);
    loop {
        let addr = d as u64;
        let len = (d >> 64) as u32;
        let ty = (d >> 124) as u8;
        match ty {
            0 | 1 if ty == 0 || cmd.write => {
                let bucket = ty == 1;
                if len > *rem {
                    return Err(sc::SGL_LENGTH_INVALID);
                }
                if fin {
                    if len != *rem {
                        return Err(sc::SGL_LENGTH_INVALID);
                    }
                    if len > 0 {
                        w.segments.push(seg(addr, len, bucket, true, 0));
                        *rem = 0;
                    }
                    return Ok(());
                }
                if len > 0 {
                    w.segments.push(seg(addr, len, bucket, false, 0));
                    *rem -= len;
                }
            }
            2 | 3 => {
                if !ptr_ok || len == 0 || !len.is_multiple_of(16) || addr & 7 != 0 {
                    return Err(sc::INVALID_SGL_SEGMENT);
                }
                f.start(addr, len as u64 / 8, &mut w.fetches);
                count = len as u64 / 16;
                in_last = ty == 3;
            }
            _ => return Err(sc::SGL_TYPE_INVALID),
        }
        let lo = f.next().map_err(|()| sc::DATA_TRANSFER_ERROR)?;
        let hi = f.next().map_err(|()| sc::DATA_TRANSFER_ERROR)?;
        d = lo as u128 | (hi as u128) << 64;
        fin = count == 1;
        ptr_ok = fin && !in_last;
        count -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drivers::axi_mem::Memory;

    fn prp(p1: u64, p2: u64, len: u32) -> Command {
        Command {
            tag: 1,
            write: false,
            sgl: false,
            dptr: p1 as u128 | (p2 as u128) << 64,
            len,
            from: 0,
        }
    }

    fn sgl(d: u128, len: u32, write: bool) -> Command {
        Command {
            tag: 2,
            write,
            sgl: true,
            dptr: d,
            len,
            from: 0,
        }
    }

    fn run(cmd: &Command, mps: u8, mem: &Memory, bad: Option<(u64, u64)>) -> Walk {
        walk(cmd, mps, |a, n| {
            if bad.is_some_and(|(lo, hi)| a < hi && a + n as u64 > lo) {
                return Err(());
            }
            Ok(mem.read_vec(a, n as usize))
        })
    }

    /// (addr, len, last, status) of each segment.
    fn segs(w: &Walk) -> Vec<(u64, u32, bool, u16)> {
        w.segments
            .iter()
            .map(|s| (s.addr, s.len, s.last, s.status))
            .collect()
    }

    #[test]
    fn prp1_only_and_zero_length() {
        let m = Memory::new();
        let w = run(&prp(0x1000_0100, 0, 512), 0, &m, None);
        assert_eq!(segs(&w), [(0x1000_0100, 512, true, 0)]);
        assert!(w.fetches.is_empty());
        let w = run(&prp(0x1000_0003, 0, 0), 0, &m, None);
        assert_eq!(segs(&w), [(0, 0, true, 0)]);
    }

    #[test]
    fn prp1_and_prp2() {
        let m = Memory::new();
        let w = run(&prp(0x1000_0f00, 0x2000_0000, 4096), 0, &m, None);
        assert_eq!(
            segs(&w),
            [(0x1000_0f00, 256, false, 0), (0x2000_0000, 3840, true, 0)]
        );
        // PRP2 with an offset, PRP1 not dword aligned.
        let w = run(&prp(0x1000_0f00, 0x2000_0010, 4096), 0, &m, None);
        assert_eq!(
            segs(&w),
            [(0x1000_0f00, 256, false, 0), (0, 3840, true, 0x13)]
        );
        let w = run(&prp(0x1000_0f02, 0x2000_0000, 4096), 0, &m, None);
        assert_eq!(segs(&w), [(0, 4096, true, 0x13)]);
        // 8 KiB pages: one page holds it all.
        let w = run(&prp(0x1000_1000, 0x2000_0000, 8192), 1, &m, None);
        assert_eq!(
            segs(&w),
            [(0x1000_1000, 4096, false, 0), (0x2000_0000, 4096, true, 0)]
        );
    }

    #[test]
    fn prp_list_and_chain() {
        let mut m = Memory::new();
        // A list starting 16 bytes before the end of its page: 2 slots, the second a pointer.
        let list = 0x5000_0ff0u64;
        m.write_u64(list, 0xa000_0000);
        m.write_u64(list + 8, 0x6000_0000);
        m.write_u64(0x6000_0000, 0xb000_0000);
        m.write_u64(0x6000_0008, 0xc000_0000);
        let w = run(&prp(0x1000_0000, list, 4 * 4096 - 100), 0, &m, None);
        assert_eq!(
            segs(&w),
            [
                (0x1000_0000, 4096, false, 0),
                (0xa000_0000, 4096, false, 0),
                (0xb000_0000, 4096, false, 0),
                (0xc000_0000, 4096 - 100, true, 0)
            ]
        );
        assert_eq!(w.fetches, [(list, 16), (0x6000_0000, 16)]);
        // An entry with an offset, and an AXI error on the second list page.
        m.write_u64(0x6000_0000, 0xb000_0200);
        let w = run(&prp(0x1000_0000, list, 4 * 4096), 0, &m, None);
        assert_eq!(segs(&w)[2], (0, 8192, true, 0x13));
        let w = run(
            &prp(0x1000_0000, list, 4 * 4096),
            0,
            &m,
            Some((0x6000_0000, 0x6000_1000)),
        );
        assert_eq!(segs(&w)[2], (0, 8192, true, 0x04));
        // A list pointer that is not qword aligned.
        let w = run(&prp(0x1000_0000, list + 4, 3 * 4096), 0, &m, None);
        assert_eq!(
            segs(&w),
            [(0x1000_0000, 4096, false, 0), (0, 8192, true, 0x13)]
        );
    }

    #[test]
    fn prp_walk_from_a_window() {
        let mut m = Memory::new();
        let list = 0x5000_0000u64;
        for k in 0..8u64 {
            m.write_u64(list + 8 * k, 0xa000_0000 + 0x1000 * k);
        }
        // PRP1 has 0x800 bytes; from 0x2900 skips it and two list pages (entries 0, 1).
        let mut c = prp(0x1000_0800, list, 6 * 4096);
        c.from = 0x2900;
        let w = run(&c, 0, &m, None);
        assert_eq!(
            segs(&w),
            [
                (0, 0x800 + 2 * 4096, false, 0),
                (0xa000_2000, 4096, false, 0),
                (0xa000_3000, 4096, false, 0),
                (0xa000_4000, 4096, false, 0),
                (0xa000_5000, 0x800, true, 0)
            ]
        );
        assert!(w.segments[0].bucket);
        assert_eq!(w.fetches, [(list + 16, 32)]);
        // Before PRP1's end nothing is skipped; an entry before the window is not checked.
        c.from = 0x7ff;
        assert_eq!(run(&c, 0, &m, None).segments.len(), 7);
        m.write_u64(list, 0xa000_0004);
        c.from = 0x1800;
        assert_eq!(run(&c, 0, &m, None).status(), 0);
        c.from = 0x17ff;
        assert_eq!(run(&c, 0, &m, None).status(), 0x13);
        // A list whose first page ends in a chain pointer: the walk stops before it.
        let list = 0x6000_0ff0u64;
        m.write_u64(list, 0xb000_0000);
        m.write_u64(list + 8, 0x7000_0000);
        m.write_u64(0x7000_0000, 0xc000_0000);
        m.write_u64(0x7000_0008, 0xd000_0000);
        let mut c = prp(0x1000_0000, list, 4 * 4096);
        c.from = 3 * 4096;
        let w = run(&c, 0, &m, None);
        assert_eq!(segs(&w)[0], (0, 4096, false, 0));
        assert_eq!(segs(&w).len(), 4);
    }

    #[test]
    fn list_bursts_stop_at_4k_and_256_words() {
        assert_eq!(bursts(0x1ff8, 3), [(0x1ff8, 8), (0x2000, 16)]);
        assert_eq!(bursts(0x2000, 300), [(0x2000, 2048), (0x2800, 352)]);
    }

    #[test]
    fn sgl_data_block_bucket_and_types() {
        let m = Memory::new();
        let w = run(&sgl(sgl_desc(0x1234, 100, 0), 100, false), 0, &m, None);
        assert_eq!(segs(&w), [(0x1234, 100, true, 0)]);
        let w = run(&sgl(sgl_desc(0x1234, 100, 1), 100, true), 0, &m, None);
        assert!(w.segments[0].bucket && w.segments[0].last);
        let w = run(&sgl(sgl_desc(0x1234, 100, 1), 100, false), 0, &m, None);
        assert_eq!(segs(&w), [(0, 100, true, 0x11)]);
        let w = run(&sgl(sgl_desc(0x1234, 100, 4), 100, false), 0, &m, None);
        assert_eq!(segs(&w), [(0, 100, true, 0x11)]);
        let w = run(&sgl(sgl_desc(0x1234, 99, 0), 100, false), 0, &m, None);
        assert_eq!(segs(&w), [(0, 100, true, 0x0f)]);
        let w = run(&sgl(sgl_desc(0x1234, 101, 0), 100, false), 0, &m, None);
        assert_eq!(segs(&w), [(0, 100, true, 0x0f)]);
        let w = run(&sgl(sgl_desc(0x1234, 0, 0), 0, false), 0, &m, None);
        assert_eq!(segs(&w), [(0, 0, true, 0)]);
    }

    fn put(m: &mut Memory, at: u64, d: u128) {
        m.write(at, &d.to_le_bytes());
    }

    #[test]
    fn sgl_segment_chains() {
        let mut m = Memory::new();
        // Segment of 3: two data blocks and a Last Segment of 2 (a zero-length block, data).
        put(&mut m, 0x8000, sgl_desc(0xa000, 10, 0));
        put(&mut m, 0x8010, sgl_desc(0xb000, 20, 0));
        put(&mut m, 0x8020, sgl_desc(0x9000, 32, 3));
        put(&mut m, 0x9000, sgl_desc(0xd000, 0, 0));
        put(&mut m, 0x9010, sgl_desc(0xc000, 30, 0));
        let w = run(&sgl(sgl_desc(0x8000, 48, 2), 60, false), 0, &m, None);
        assert_eq!(
            segs(&w),
            [
                (0xa000, 10, false, 0),
                (0xb000, 20, false, 0),
                (0xc000, 30, true, 0)
            ]
        );
        assert_eq!(w.fetches, [(0x8000, 48), (0x9000, 32)]);
        // Too short; too long; an AXI error on the second segment.
        let w = run(&sgl(sgl_desc(0x8000, 48, 2), 61, false), 0, &m, None);
        assert_eq!(segs(&w)[2], (0, 31, true, 0x0f));
        let w = run(&sgl(sgl_desc(0x8000, 48, 2), 25, false), 0, &m, None);
        assert_eq!(segs(&w)[1], (0, 15, true, 0x0f));
        let w = run(
            &sgl(sgl_desc(0x8000, 48, 2), 60, false),
            0,
            &m,
            Some((0x9000, 0x9001)),
        );
        assert_eq!(segs(&w)[2], (0, 30, true, 0x04));
        // The last data block is not the last descriptor: an end segment closes the transfer.
        put(&mut m, 0x9010, sgl_desc(0xc000, 0, 0));
        put(&mut m, 0x9000, sgl_desc(0xd000, 30, 0));
        let w = run(&sgl(sgl_desc(0x8000, 48, 2), 60, false), 0, &m, None);
        assert_eq!(segs(&w)[2..], [(0xd000, 30, false, 0), (0, 0, true, 0)]);
        // A segment descriptor inside a Last Segment; a bad segment length.
        put(&mut m, 0x9010, sgl_desc(0x8000, 48, 2));
        let w = run(&sgl(sgl_desc(0x8000, 48, 2), 60, false), 0, &m, None);
        assert_eq!(segs(&w)[3], (0, 0, true, 0x0d));
        let w = run(&sgl(sgl_desc(0x8000, 40, 2), 60, false), 0, &m, None);
        assert_eq!(segs(&w), [(0, 60, true, 0x0d)]);
    }
}
