//! Golden model of the DMA data mover (`hdl-gen/src/dma/mover.rs`): transaction level, no
//! cycles. Given host memory and transfers (segments, direction, the stream bytes of writes),
//! what each read transfer must put on `m_data`, what memory must hold afterwards and the
//! status of each transfer.
//!
//! Segment semantics (the mover's contract): a memory segment reads or writes `len` bytes at
//! `addr`; a bucket segment consumes `len` stream bytes (write) or gives `len` zeros (read)
//! without touching memory; a status segment ends the transfer with its status and covers the
//! `len` bytes left (zeros on a read, dropped on a write). An AXI error on any byte the
//! transfer names (the tests inject errors on whole beats) gives status 04h; a read then gives
//! zeros from the errored beat on, and a write may have been applied to some bursts but never to
//! bytes inside an error region. Where the RTL may legally give several answers the model
//! returns the set, as a checker.

use std::ops::Range;

/// NVMe status 04h Data Transfer Error.
pub const DATA_TRANSFER_ERROR: u16 = 0x004;

/// One segment from the walker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Host address.
    pub addr: u64,
    /// Bytes.
    pub len: u32,
    /// Bit bucket: no memory access.
    pub bucket: bool,
    /// Non-zero: ends the transfer with this status (`len` = bytes left).
    pub status: u16,
}

/// One transfer: a tag, a direction, its segments in byte order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// Tag.
    pub tag: u8,
    /// true: stream -> memory.
    pub write: bool,
    /// Segments (the last one ends the transfer).
    pub segs: Vec<Segment>,
    /// Write direction: the stream bytes (as many as the segments cover).
    pub data: Vec<u8>,
}

impl Transfer {
    /// Bytes the transfer carries on its stream.
    pub fn len(&self) -> usize {
        self.segs.iter().map(|s| s.len as usize).sum()
    }

    /// No bytes at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Byte-addressed memory the model reads and writes (sparse, zero where never written).
pub trait Mem {
    /// The byte at `addr`.
    fn byte(&self, addr: u64) -> u8;
}

impl Mem for crate::drivers::axi_mem::Memory {
    fn byte(&self, addr: u64) -> u8 {
        crate::drivers::axi_mem::Memory::byte(self, addr)
    }
}

/// What a read transfer must produce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadExpect {
    /// The bytes when no AXI error hits the transfer.
    pub bytes: Vec<u8>,
    /// Stream offsets of the bytes inside an error region, in order (empty: no AXI error).
    pub errored: Vec<usize>,
    /// Status the completion must carry.
    pub status: u16,
}

impl ReadExpect {
    /// Checks the bytes the RTL gave: exactly `bytes`, or with an AXI error, `bytes` up to a
    /// point at or before the first errored byte (an errored beat may start earlier) and zeros
    /// from there on.
    pub fn check(&self, got: &[u8]) -> Result<(), String> {
        if got.len() != self.bytes.len() {
            return Err(format!(
                "{} bytes, expected {}",
                got.len(),
                self.bytes.len()
            ));
        }
        let Some(&first) = self.errored.first() else {
            return match got.iter().zip(&self.bytes).position(|(a, b)| a != b) {
                None => Ok(()),
                Some(i) => Err(format!(
                    "byte {i} is {:#04x}, expected {:#04x}",
                    got[i], self.bytes[i]
                )),
            };
        };
        // The zeros start at the first byte that differs from memory, or later.
        let cut = got
            .iter()
            .zip(&self.bytes)
            .position(|(a, b)| a != b)
            .unwrap_or(got.len());
        if let Some(i) = got[cut..].iter().position(|&b| b != 0) {
            return Err(format!(
                "byte {} is {:#04x} after the data turned to zeros at byte {cut}",
                cut + i,
                got[cut + i]
            ));
        }
        if cut > first && self.bytes[first..cut].iter().any(|&b| b != 0) {
            return Err(format!(
                "byte {first} lies in an AXI error region but carries memory data"
            ));
        }
        Ok(())
    }
}

/// The model's verdict on a run of transfers.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Per transfer (in order): for reads, what they must carry.
    pub reads: Vec<Option<ReadExpect>>,
    /// Per transfer: the completion status.
    pub status: Vec<u16>,
    /// Bytes a write must set: (address, value); the last write of a byte wins.
    pub writes: Vec<(u64, u8)>,
    /// Bytes a write may or may not set (its transfer had an AXI error), outside error regions.
    pub maybe: Vec<(u64, u8)>,
}

fn in_regions(regions: &[Range<u64>], a: u64) -> bool {
    regions.iter().any(|r| r.contains(&a))
}

/// Runs `transfers` in order against `mem` (the memory before), with AXI errors on every byte
/// in `errors` (beat-aligned regions). Memory is not changed: `writes` and `maybe` say what a
/// correct mover does to it, in order.
pub fn run(mem: &impl Mem, transfers: &[Transfer], errors: &[Range<u64>]) -> Outcome {
    // Later reads see earlier writes: keep an overlay of definite writes.
    let mut overlay: std::collections::HashMap<u64, u8> = std::collections::HashMap::new();
    let mut out = Outcome {
        reads: Vec::new(),
        status: Vec::new(),
        writes: Vec::new(),
        maybe: Vec::new(),
    };
    for t in transfers {
        let mut axi_err = false;
        let mut walker_status = 0u16;
        let mut bytes = Vec::new();
        let mut errored = Vec::new();
        let mut pos = 0usize;
        let mut writes = Vec::new();
        for s in &t.segs {
            if s.status != 0 && walker_status == 0 {
                walker_status = s.status;
            }
            let memory = s.status == 0 && !s.bucket;
            for i in 0..s.len as u64 {
                let a = s.addr.wrapping_add(i);
                if t.write {
                    if memory {
                        if in_regions(errors, a) {
                            axi_err = true;
                        } else {
                            writes.push((a, t.data[pos]));
                        }
                    }
                } else if memory {
                    if in_regions(errors, a) {
                        axi_err = true;
                        errored.push(pos);
                        bytes.push(0);
                    } else {
                        bytes.push(*overlay.get(&a).unwrap_or(&mem.byte(a)));
                    }
                } else {
                    bytes.push(0);
                }
                pos += 1;
            }
        }
        let status = if axi_err {
            DATA_TRANSFER_ERROR
        } else {
            walker_status
        };
        if t.write {
            if axi_err {
                out.maybe.extend(writes);
            } else {
                for &(a, v) in &writes {
                    overlay.insert(a, v);
                }
                out.writes.extend(writes);
            }
            out.reads.push(None);
        } else {
            out.reads.push(Some(ReadExpect {
                bytes,
                errored,
                status,
            }));
        }
        out.status.push(status);
    }
    out
}

/// Checks the memory after the run: every byte a write sets holds its value (the last write of
/// a byte wins), a byte a failed write may set holds the old or the new value, and every other
/// byte in `watch` (typically the whole window the test used) is unchanged. `before` and `after`
/// are the memories; returns the first mismatch.
pub fn check_memory(
    before: &impl Mem,
    after: &impl Mem,
    outcome: &Outcome,
    watch: Range<u64>,
) -> Result<(), String> {
    let mut want: std::collections::BTreeMap<u64, Vec<u8>> = std::collections::BTreeMap::new();
    for &(a, v) in &outcome.maybe {
        want.entry(a).or_default().push(v);
    }
    let mut exact: std::collections::BTreeMap<u64, u8> = std::collections::BTreeMap::new();
    for &(a, v) in &outcome.writes {
        exact.insert(a, v);
    }
    {
        for a in watch {
            let got = after.byte(a);
            let old = before.byte(a);
            let ok = match (exact.get(&a), want.get(&a)) {
                (Some(&v), None) => got == v,
                // A definite write and a failed one to the same byte: either may be last.
                (Some(&v), Some(vs)) => got == v || vs.contains(&got),
                (None, Some(vs)) => got == old || vs.contains(&got),
                (None, None) => got == old,
            };
            if !ok {
                return Err(format!(
                    "memory byte {a:#x} is {got:#04x}; before {old:#04x}, expected {:?}",
                    exact
                        .get(&a)
                        .map(|v| format!("{v:#04x}"))
                        .unwrap_or_else(|| "unchanged".into())
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drivers::axi_mem::Memory;

    fn seg(addr: u64, len: u32) -> Segment {
        Segment {
            addr,
            len,
            bucket: false,
            status: 0,
        }
    }

    #[test]
    fn a_read_concatenates_its_segments() {
        let mut mem = Memory::new();
        mem.write(0x1000, &[1, 2, 3, 4]);
        mem.write(0x2002, &[9, 8]);
        let t = Transfer {
            tag: 1,
            write: false,
            segs: vec![seg(0x1001, 3), seg(0x2002, 2)],
            data: vec![],
        };
        let o = run(&mem, &[t], &[]);
        let r = o.reads[0].as_ref().unwrap();
        assert_eq!(r.bytes, vec![2, 3, 4, 9, 8]);
        assert_eq!(o.status, vec![0]);
        assert!(r.check(&[2, 3, 4, 9, 8]).is_ok());
        assert!(r.check(&[2, 3, 4, 9]).is_err());
    }

    #[test]
    fn a_write_then_a_read_sees_it_and_buckets_touch_nothing() {
        let mem = Memory::new();
        let w = Transfer {
            tag: 0,
            write: true,
            segs: vec![
                seg(0x10, 2),
                Segment {
                    addr: 0,
                    len: 2,
                    bucket: true,
                    status: 0,
                },
                seg(0x20, 1),
            ],
            data: vec![1, 2, 3, 4, 5],
        };
        let r = Transfer {
            tag: 1,
            write: false,
            segs: vec![seg(0x10, 2)],
            data: vec![],
        };
        let o = run(&mem, &[w, r], &[]);
        assert_eq!(o.writes, vec![(0x10, 1), (0x11, 2), (0x20, 5)]);
        assert_eq!(o.reads[1].as_ref().unwrap().bytes, vec![1, 2]);
        let mut after = Memory::new();
        after.write(0x10, &[1, 2]);
        after.write(0x20, &[5]);
        assert!(check_memory(&mem, &after, &o, 0..0x40).is_ok());
        after.write(0x12, &[7]);
        assert!(check_memory(&mem, &after, &o, 0..0x40).is_err());
    }

    #[test]
    fn a_status_segment_ends_with_zeros_and_its_status() {
        let mut mem = Memory::new();
        mem.write(0, &[5; 8]);
        let t = Transfer {
            tag: 0,
            write: false,
            segs: vec![
                seg(0, 3),
                Segment {
                    addr: 0,
                    len: 2,
                    bucket: false,
                    status: 0x013,
                },
            ],
            data: vec![],
        };
        let o = run(&mem, &[t], &[]);
        assert_eq!(o.reads[0].as_ref().unwrap().bytes, vec![5, 5, 5, 0, 0]);
        assert_eq!(o.status, vec![0x013]);
    }

    #[test]
    fn an_axi_error_gives_04h_and_zeros_from_the_errored_beat() {
        let mut mem = Memory::new();
        mem.write(0, &[7; 32]);
        let t = Transfer {
            tag: 0,
            write: false,
            segs: vec![seg(4, 20)],
            data: vec![],
        };
        let o = run(&mem, &[t], std::slice::from_ref(&(16..24)));
        let r = o.reads[0].as_ref().unwrap();
        assert_eq!(o.status, vec![DATA_TRANSFER_ERROR]);
        let mut good = vec![7u8; 12];
        good.extend([0; 8]);
        assert!(r.check(&good).is_ok());
        // Zeros may start earlier (at a burst boundary), never later, and never go back.
        assert!(r.check(&[0; 20]).is_ok());
        let mut bad = good.clone();
        bad[19] = 7;
        assert!(r.check(&bad).is_err());
    }

    #[test]
    fn a_failed_write_may_or_may_not_land_outside_the_error_region() {
        let mem = Memory::new();
        let t = Transfer {
            tag: 0,
            write: true,
            segs: vec![seg(0, 16)],
            data: vec![3; 16],
        };
        let o = run(&mem, &[t], std::slice::from_ref(&(8..16)));
        assert_eq!(o.status, vec![DATA_TRANSFER_ERROR]);
        let mut after = Memory::new();
        after.write(0, &[3; 4]);
        assert!(check_memory(&mem, &after, &o, 0..32).is_ok());
        after.write(8, &[3]);
        assert!(check_memory(&mem, &after, &o, 0..32).is_err());
    }
}
