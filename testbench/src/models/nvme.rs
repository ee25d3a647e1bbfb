//! Golden model of the NVMe front end as the host sees it: queues, what each submitted command
//! may complete with, which doorbell writes are faults, and the checks on every CQE the host
//! reads. Plain Rust, no cycles: it follows host-visible events (a submission, a doorbell, a
//! CQE read, a controller reset) and says what the specification allows.
//!
//! The admin command set is executed by firmware (a Rust model in the tests); the statuses
//! firmware gives are the specification's, computed here by [`admin_outcome`] so the firmware
//! model and the host's checker agree on one reading of the specification. So are the I/O
//! commands on the fallback path ([`io_route`], [`fallback_outcome`]).

use std::collections::{BTreeMap, BTreeSet};

/// I/O opcodes the hardware carries (offload): Flush, Write, Read, Write Zeroes, Dataset
/// Management. Every other I/O opcode goes to firmware (fallback), Compare 05h included.
pub const IO_OPCODES: [u8; 5] = [0x00, 0x01, 0x02, 0x08, 0x09];

/// Verify (NVM command set, optional): the one fallback opcode firmware executes itself.
pub const VERIFY: u8 = 0x0c;

/// Where an I/O SQE goes (`hdl-gen/src/nvme/mod.rs`, "offload and fallback").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoRoute {
    /// The front end completes it itself with this status (02h Invalid Field in Command).
    Front(u16),
    /// Out on `io_cmd`, to the rest of the chip.
    Offload,
    /// To firmware on `admin_cmd` with its SQ id; firmware's answer is [`fallback_outcome`].
    Fallback,
}

/// Status field values (CQE DW3[31:17]: SC in 7:0, SCT in 10:8).
pub mod status {
    /// Success.
    pub const SUCCESS: u16 = 0x000;
    /// Invalid Command Opcode.
    pub const INVALID_OPCODE: u16 = 0x001;
    /// Invalid Field in Command.
    pub const INVALID_FIELD: u16 = 0x002;
    /// Data Transfer Error.
    pub const DATA_TRANSFER: u16 = 0x004;
    /// Command Abort Requested.
    pub const ABORT_REQUESTED: u16 = 0x007;
    /// Invalid Namespace or Format.
    pub const INVALID_NAMESPACE: u16 = 0x00b;
    /// LBA Out of Range.
    pub const LBA_OUT_OF_RANGE: u16 = 0x080;
    /// Completion Queue Invalid (SCT 1).
    pub const CQ_INVALID: u16 = 0x100;
    /// Invalid Queue Identifier (SCT 1).
    pub const INVALID_QID: u16 = 0x101;
    /// Invalid Queue Size (SCT 1).
    pub const INVALID_QSIZE: u16 = 0x102;
    /// Asynchronous Event Request Limit Exceeded (SCT 1).
    pub const AER_LIMIT: u16 = 0x105;
    /// Invalid Interrupt Vector (SCT 1).
    pub const INVALID_VECTOR: u16 = 0x108;
    /// Invalid Queue Deletion (SCT 1).
    pub const INVALID_DELETION: u16 = 0x10c;
}

/// The Maximum Data Transfer Size, in 512-byte blocks, of a controller whose data moves
/// through a DMA engine of `len_width`-bit lengths (up to `2^len_width - 1` bytes): MDTS is a
/// power of two of CAP.MPSMIN (4 KiB) pages, and not 0 (which would mean "no limit"), so the
/// largest such size the engine can move, at least 8 KiB; and never less than NLB's reach
/// (65536 blocks), where it stops mattering.
pub fn mdts_blocks(len_width: u32) -> u32 {
    let reach = (1u64 << len_width) - 1;
    let mut pages = 2u64;
    while pages * 2 * 4096 <= reach && pages * 4096 < 65536 * 512 {
        pages *= 2;
    }
    (pages * 4096 / 512) as u32
}

/// The route of an I/O SQE whose fetch succeeded, in a controller whose MDTS is `max_blocks`
/// 512-byte blocks. CDW0's fields first (FUSE non-zero, a reserved bit 13:10 set, PSDT 11b:
/// 02h, whatever the opcode), then a Read or Write longer than MDTS (02h: "If a command is
/// submitted that exceeds this transfer size, then the command is aborted with a status code of
/// Invalid Field in Command"), then the opcode: the ones the hardware carries go out on
/// `io_cmd`, all others to firmware.
pub fn io_route(sqe: &[u8; 64], max_blocks: u32) -> IoRoute {
    let cdw0 = u32::from_le_bytes(sqe[0..4].try_into().unwrap());
    let fuse = (cdw0 >> 8) & 3;
    let rsvd = (cdw0 >> 10) & 0xf;
    let psdt = (cdw0 >> 14) & 3;
    let blocks = u32::from(u16::from_le_bytes([sqe[48], sqe[49]])) + 1;
    let rw = sqe[0] == 0x01 || sqe[0] == 0x02;
    if fuse != 0 || rsvd != 0 || psdt == 3 || rw && blocks > max_blocks {
        IoRoute::Front(status::INVALID_FIELD)
    } else if IO_OPCODES.contains(&(cdw0 as u8)) {
        IoRoute::Offload
    } else {
        IoRoute::Fallback
    }
}

/// Firmware's answer to a fallback I/O command, `(status, dw0)`, given its namespaces (NSID ->
/// blocks). Firmware implements Verify (0Ch): NSID not a namespace -> 0Bh Invalid Namespace
/// or Format; SLBA + NLB + 1 past the namespace -> 80h LBA Out of Range; otherwise success
/// (no data moves, so there is nothing to fail). Every other opcode, Compare included (it
/// needs the data path, which firmware does not have), is 01h Invalid Command Opcode. DW0 0.
pub fn fallback_outcome(sqe: &[u8; 64], namespaces: &BTreeMap<u32, u64>) -> (u16, u32) {
    if sqe[0] != VERIFY {
        return (status::INVALID_OPCODE, 0);
    }
    let nsid = u32::from_le_bytes(sqe[4..8].try_into().unwrap());
    let slba = u64::from_le_bytes(sqe[40..48].try_into().unwrap());
    let nlb = u64::from(u16::from_le_bytes([sqe[48], sqe[49]])) + 1;
    let st = match namespaces.get(&nsid) {
        None => status::INVALID_NAMESPACE,
        Some(&size) if slba.checked_add(nlb).is_none_or(|end| end > size) => {
            status::LBA_OUT_OF_RANGE
        }
        Some(_) => status::SUCCESS,
    };
    (st, 0)
}

/// What the rest of the chip answers for an I/O command in the tests: a pure function of the
/// SQE, so the backend model and the checker agree. `(status, dw0)`.
pub fn backend_result(sqe: &[u8; 64]) -> (u16, u32) {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in sqe {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let status = match h % 8 {
        0 => 0x281,          // SCT 2, 81h: Unrecovered Read Error
        1 => 0x080 | 0x4000, // LBA Out of Range, DNR
        _ => 0,
    };
    (status, (h >> 32) as u32)
}

/// The completions a command may get: each an allowed status with its DW0 (`None`: DW0 not
/// checked).
pub type Allowed = Vec<(u16, Option<u32>)>;

/// A queue the host created (or the admin queue).
#[derive(Clone, Debug)]
pub struct Sq {
    /// Entries.
    pub size: u32,
    /// Its completion queue.
    pub cqid: u16,
    /// The host's tail (next slot it writes).
    pub tail: u32,
    /// The newest SQ head the controller reported (SQHD).
    pub head: u32,
    /// Commands submitted (doorbell written) and not completed: CID -> allowed statuses and
    /// the expected DW0 (None: any).
    pub outstanding: BTreeMap<u16, Allowed>,
}

/// A completion queue.
#[derive(Clone, Debug)]
pub struct Cq {
    /// Entries.
    pub size: u32,
    /// Interrupt vector, when interrupts are enabled.
    pub vector: Option<u16>,
}

/// The controller as the host sees it.
#[derive(Clone, Debug, Default)]
pub struct Controller {
    /// I/O queue pairs the controller offers.
    pub io_queues: u16,
    /// Largest queue size in entries.
    pub max_entries: u32,
    /// MSI-X vectors.
    pub vectors: u32,
    /// MDTS in 512-byte blocks ([`mdts_blocks`]).
    pub max_blocks: u32,
    /// Submission queues by id (0: admin).
    pub sqs: BTreeMap<u16, Sq>,
    /// Completion queues by id.
    pub cqs: BTreeMap<u16, Cq>,
    /// Doorbell faults not yet reported by an AER completion (info 0 or 1).
    pub events: BTreeSet<u8>,
    /// Per info: doorbell faults and AER reports since the last reset. Faults of one info
    /// that come before the controller reported the first may share its report, so a report
    /// is allowed while reports < faults.
    pub event_counts: BTreeMap<u8, (u32, u32)>,
    /// Outstanding AER commands (CID on the admin queue).
    pub aers: BTreeSet<u16>,
    /// What the rest of the chip must answer for an I/O command (SQ id, CID) that passes the
    /// front end's own checks: (statuses allowed, DW0 if checked), consumed at submission.
    /// A command without an entry gets [`backend_result`] (the `nvme_ctrl`-alone harness).
    pub io_expect: BTreeMap<(u16, u16), Allowed>,
    /// Firmware's namespaces (NSID -> blocks), for the fallback commands it executes.
    pub namespaces: BTreeMap<u32, u64>,
}

/// The outcome of an admin command in this design, per the specification: `None` when the
/// command is held (an AER with no event to report).
pub fn admin_outcome(
    sqe: &[u8; 64],
    io_queues: u16,
    max_entries: u32,
    vectors: u32,
    sqs: &BTreeMap<u16, u16>,
    cqs: &BTreeSet<u16>,
) -> Option<u16> {
    let dw = |i: usize| u32::from_le_bytes(sqe[4 * i..4 * i + 4].try_into().unwrap());
    let opc = sqe[0];
    let (cdw10, cdw11) = (dw(10), dw(11));
    let qid = cdw10 as u16;
    let qsize = (cdw10 >> 16) + 1;
    let bad_qid = qid == 0 || qid > io_queues;
    let bad_size = qsize < 2 || qsize > max_entries;
    Some(match opc {
        0x05 => {
            if bad_qid || cqs.contains(&qid) {
                status::INVALID_QID
            } else if bad_size {
                status::INVALID_QSIZE
            } else if (cdw11 >> 16) >= vectors {
                status::INVALID_VECTOR
            } else {
                0
            }
        }
        0x01 => {
            let cqid = (cdw11 >> 16) as u16;
            if bad_qid || sqs.contains_key(&qid) {
                status::INVALID_QID
            } else if bad_size {
                status::INVALID_QSIZE
            } else if cqid == 0 || !cqs.contains(&cqid) {
                status::CQ_INVALID
            } else {
                0
            }
        }
        0x00 => {
            if bad_qid || !sqs.contains_key(&qid) {
                status::INVALID_QID
            } else {
                0
            }
        }
        0x04 => {
            if bad_qid || !cqs.contains(&qid) {
                status::INVALID_QID
            } else if sqs.values().any(|&c| c == qid) {
                status::INVALID_DELETION
            } else {
                0
            }
        }
        0x09 => match cdw10 & 0xff {
            0x01 | 0x08 => 0,
            0x09 if (cdw11 & 0xffff) < vectors => 0,
            _ => status::INVALID_FIELD,
        },
        0x0c => return None,
        _ => status::INVALID_OPCODE,
    })
}

/// One CQE as the host reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cqe {
    /// DW0.
    pub dw0: u32,
    /// SQ head.
    pub sqhd: u16,
    /// SQ id.
    pub sqid: u16,
    /// Command id.
    pub cid: u16,
    /// Phase tag.
    pub phase: bool,
    /// Status field.
    pub status: u16,
}

impl Cqe {
    /// Decodes 16 bytes.
    pub fn parse(b: &[u8]) -> Cqe {
        let dw = |i: usize| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
        Cqe {
            dw0: dw(0),
            sqhd: dw(2) as u16,
            sqid: (dw(2) >> 16) as u16,
            cid: dw(3) as u16,
            phase: dw(3) >> 16 & 1 == 1,
            status: (dw(3) >> 17) as u16,
        }
    }
}

fn ring_dist(a: u32, b: u32, size: u32) -> u32 {
    (a + size - b) % size
}

impl Controller {
    /// A disabled controller whose MDTS is `max_blocks` 512-byte blocks.
    pub fn new(io_queues: u16, max_entries: u32, vectors: u32, max_blocks: u32) -> Controller {
        Controller {
            io_queues,
            max_entries,
            vectors,
            max_blocks,
            ..Controller::default()
        }
    }

    /// CC.EN 0 -> 1 with these admin queue sizes.
    pub fn enable(&mut self, asq: u32, acq: u32) {
        self.sqs.clear();
        self.cqs.clear();
        self.cqs.insert(
            0,
            Cq {
                size: acq,
                vector: Some(0),
            },
        );
        self.sqs.insert(
            0,
            Sq {
                size: asq,
                cqid: 0,
                tail: 0,
                head: 0,
                outstanding: BTreeMap::new(),
            },
        );
    }

    /// CC.EN 1 -> 0 finished (CSTS.RDY low): every queue and outstanding command is gone.
    pub fn reset(&mut self) {
        self.sqs.clear();
        self.cqs.clear();
        self.events.clear();
        self.event_counts.clear();
        self.aers.clear();
    }

    /// Free SQ slots by the host's reckoning (size - 1 - entries not yet reported consumed).
    pub fn sq_room(&self, sqid: u16) -> u32 {
        let q = &self.sqs[&sqid];
        q.size - 1 - ring_dist(q.tail, q.head, q.size)
    }

    /// The host places an SQE at the SQ's tail (the doorbell comes later).
    pub fn submit(&mut self, sqid: u16, sqe: &[u8; 64]) -> Result<(), String> {
        let cid = u16::from_le_bytes([sqe[2], sqe[3]]);
        let expect = if sqid == 0 {
            let sqs: BTreeMap<u16, u16> = self
                .sqs
                .iter()
                .filter(|e| *e.0 != 0)
                .map(|(k, v)| (*k, v.cqid))
                .collect();
            let cqs: BTreeSet<u16> = self.cqs.keys().copied().filter(|&k| k != 0).collect();
            match admin_outcome(
                sqe,
                self.io_queues,
                self.max_entries,
                self.vectors,
                &sqs,
                &cqs,
            ) {
                Some(s) => vec![(s, None)],
                None => {
                    self.aers.insert(cid);
                    vec![(0, None)]
                }
            }
        } else {
            match io_route(sqe, self.max_blocks) {
                IoRoute::Front(s) => vec![(s, Some(0))],
                IoRoute::Fallback => {
                    let (s, dw0) = fallback_outcome(sqe, &self.namespaces);
                    vec![(s, Some(dw0))]
                }
                IoRoute::Offload => match self.io_expect.remove(&(sqid, cid)) {
                    Some(e) => e,
                    None => {
                        let (s, dw0) = backend_result(sqe);
                        vec![(s, Some(dw0))]
                    }
                },
            }
        };
        let q = self.sqs.get_mut(&sqid).ok_or(format!("no SQ {sqid}"))?;
        if q.outstanding.insert(cid, expect).is_some() {
            return Err(format!("CID {cid} reused on SQ {sqid} while outstanding"));
        }
        q.tail = (q.tail + 1) % q.size;
        Ok(())
    }

    /// An SQ tail doorbell: `Err(info)` when it is a fault (nothing moves).
    pub fn sq_doorbell(&self, sqid: u16, value: u32) -> Result<(), u8> {
        match self.sqs.get(&sqid) {
            None => Err(0),
            Some(q) if value >= q.size => Err(1),
            Some(_) => Ok(()),
        }
    }

    /// A doorbell fault of `info` happened (the host wrote a faulty doorbell).
    pub fn fault(&mut self, info: u8) {
        self.events.insert(info);
        self.event_counts.entry(info).or_default().0 += 1;
    }

    /// A CQ head doorbell beyond the queue's size or for a queue that does not exist.
    pub fn cq_doorbell(&self, cqid: u16, value: u32) -> Result<(), u8> {
        match self.cqs.get(&cqid) {
            None => Err(0),
            Some(q) if value >= q.size => Err(1),
            Some(_) => Ok(()),
        }
    }

    /// The host read a new CQE (by its phase) from CQ `cqid`: check it and retire its command
    /// (counted by [`crate::prop::count_command`] when the CQE passes). Returns the admin SQE's
    /// effect to apply (`Some((opcode, sqe))` for a successful admin command) through the
    /// caller.
    pub fn complete(&mut self, cqid: u16, e: &Cqe) -> Result<(), String> {
        let Some(q) = self.sqs.get_mut(&e.sqid) else {
            return Err(format!(
                "CQE on CQ {cqid} names SQ {} which does not exist: {e:x?}",
                e.sqid
            ));
        };
        if q.cqid != cqid {
            return Err(format!(
                "CQE on CQ {cqid} names SQ {} bound to CQ {}: {e:x?}",
                e.sqid, q.cqid
            ));
        }
        let Some(allowed) = q.outstanding.get(&e.cid).cloned() else {
            return Err(format!(
                "CQE on CQ {cqid} for SQ {} CID {} which is not outstanding (a duplicate or an \
                 invented completion): {e:x?}",
                e.sqid, e.cid
            ));
        };
        let Some(&(_, dw0)) = allowed.iter().find(|a| a.0 == e.status) else {
            let statuses: Vec<u16> = allowed.iter().map(|a| a.0).collect();
            return Err(format!(
                "SQ {} CID {}: status {:#05x}, allowed {statuses:#05x?}: {e:x?}",
                e.sqid, e.cid, e.status
            ));
        };
        if let Some(d) = dw0 {
            if d != e.dw0 {
                return Err(format!(
                    "SQ {} CID {}: DW0 {:#x}, expected {d:#x} (with status {:#05x})",
                    e.sqid, e.cid, e.dw0, e.status
                ));
            }
        }
        let sqhd = u32::from(e.sqhd);
        if sqhd >= q.size || ring_dist(sqhd, q.head, q.size) > ring_dist(q.tail, q.head, q.size) {
            return Err(format!(
                "SQ {} CID {}: SQHD {sqhd} outside the entries submitted (head {}, tail {}, size {})",
                e.sqid, e.cid, q.head, q.tail, q.size
            ));
        }
        q.head = sqhd;
        q.outstanding.remove(&e.cid);
        if e.sqid == 0 && self.aers.remove(&e.cid) {
            let (ty, info, page) = (e.dw0 & 7, (e.dw0 >> 8) as u8, (e.dw0 >> 16) as u8);
            let counts = self.event_counts.entry(info).or_default();
            let ok = counts.1 < counts.0;
            counts.1 += 1;
            self.events.remove(&info);
            if ty != 0 || page != 1 || !ok {
                return Err(format!(
                    "AER CID {} completed with DW0 {:#x}: no such pending event (pending infos {:?})",
                    e.cid, e.dw0, self.events
                ));
            }
        }
        // One command completed and its CQE checked: what `regress` counts as commands run.
        crate::prop::count_command();
        Ok(())
    }

    /// A successful Create/Delete I/O queue the host saw complete: update the queue set.
    pub fn apply_admin(&mut self, sqe: &[u8; 64]) {
        let dw = |i: usize| u32::from_le_bytes(sqe[4 * i..4 * i + 4].try_into().unwrap());
        let qid = dw(10) as u16;
        let size = (dw(10) >> 16) + 1;
        match sqe[0] {
            0x05 => {
                let vector = (dw(11) & 2 != 0).then_some((dw(11) >> 16) as u16);
                self.cqs.insert(qid, Cq { size, vector });
            }
            0x01 => {
                let cqid = (dw(11) >> 16) as u16;
                self.sqs.insert(
                    qid,
                    Sq {
                        size,
                        cqid,
                        tail: 0,
                        head: 0,
                        outstanding: BTreeMap::new(),
                    },
                );
            }
            0x00 => {
                self.sqs.remove(&qid);
            }
            0x04 => {
                self.cqs.remove(&qid);
            }
            _ => {}
        }
    }

    /// Commands submitted and not completed, AERs excluded.
    pub fn outstanding(&self) -> usize {
        self.sqs
            .iter()
            .map(|(id, q)| {
                q.outstanding
                    .keys()
                    .filter(|c| *id != 0 || !self.aers.contains(c))
                    .count()
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqe(opc: u8, cid: u16, flags: u8) -> [u8; 64] {
        let mut s = [0u8; 64];
        s[0] = opc;
        s[1] = flags;
        s[2..4].copy_from_slice(&cid.to_le_bytes());
        s
    }

    #[test]
    fn io_routes() {
        assert_eq!(io_route(&sqe(0x02, 1, 0), 16), IoRoute::Offload);
        assert_eq!(io_route(&sqe(0x05, 1, 0), 16), IoRoute::Fallback);
        assert_eq!(io_route(&sqe(0x0c, 1, 0x40), 16), IoRoute::Fallback);
        for flags in [0x01, 0xc0, 0x04] {
            assert_eq!(
                io_route(&sqe(0x01, 1, flags), 16),
                IoRoute::Front(status::INVALID_FIELD)
            );
            // CDW0's fields are checked before the opcode: firmware never sees them.
            assert_eq!(
                io_route(&sqe(0x7f, 1, flags), 16),
                IoRoute::Front(status::INVALID_FIELD)
            );
        }
        assert_eq!(io_route(&sqe(0x01, 1, 0x40), 16), IoRoute::Offload);
        // MDTS: NLB + 1 blocks of 512 bytes against it, Reads and Writes only.
        let long = |opc: u8, nlb: u16| {
            let mut s = sqe(opc, 1, 0);
            s[48..50].copy_from_slice(&nlb.to_le_bytes());
            io_route(&s, 16)
        };
        assert_eq!(long(0x02, 15), IoRoute::Offload);
        assert_eq!(long(0x02, 16), IoRoute::Front(status::INVALID_FIELD));
        assert_eq!(long(0x01, 0xffff), IoRoute::Front(status::INVALID_FIELD));
        assert_eq!(long(0x08, 0xffff), IoRoute::Offload);
        assert_eq!(long(0x05, 0xffff), IoRoute::Fallback);
    }

    #[test]
    fn mdts_from_the_dma_length() {
        // 14 bits move 16383 bytes: 8 KiB is the largest power-of-two page count within.
        assert_eq!(mdts_blocks(14), 16);
        assert_eq!(mdts_blocks(21), 2048);
        assert_eq!(mdts_blocks(25), 32768);
        assert_eq!(mdts_blocks(26), 65536);
        assert_eq!(mdts_blocks(32), 65536);
    }

    #[test]
    fn fallback_outcomes() {
        let ns: BTreeMap<u32, u64> = [(1, 64)].into_iter().collect();
        let verify = |nsid: u32, slba: u64, nlb: u16| {
            let mut s = sqe(VERIFY, 1, 0);
            s[4..8].copy_from_slice(&nsid.to_le_bytes());
            s[40..48].copy_from_slice(&slba.to_le_bytes());
            s[48..50].copy_from_slice(&nlb.to_le_bytes());
            fallback_outcome(&s, &ns).0
        };
        assert_eq!(verify(1, 0, 63), status::SUCCESS);
        assert_eq!(verify(1, 63, 0), status::SUCCESS);
        assert_eq!(verify(1, 63, 1), status::LBA_OUT_OF_RANGE);
        assert_eq!(verify(1, u64::MAX, 0), status::LBA_OUT_OF_RANGE);
        assert_eq!(verify(2, 0, 0), status::INVALID_NAMESPACE);
        assert_eq!(
            fallback_outcome(&sqe(0x05, 1, 0), &ns),
            (status::INVALID_OPCODE, 0)
        );
    }

    #[test]
    fn completion_checks() {
        let mut c = Controller::new(4, 64, 4, 16);
        c.enable(8, 8);
        c.apply_admin(&{
            let mut s = sqe(0x05, 0, 0);
            s[40..44].copy_from_slice(&(1u32 | 7 << 16).to_le_bytes());
            s
        });
        c.apply_admin(&{
            let mut s = sqe(0x01, 0, 0);
            s[40..44].copy_from_slice(&(1u32 | 7 << 16).to_le_bytes());
            s[44..48].copy_from_slice(&(1u32 << 16 | 1).to_le_bytes());
            s
        });
        let s = sqe(0x02, 9, 0);
        c.submit(1, &s).unwrap();
        let (st, dw0) = backend_result(&s);
        let ok = Cqe {
            dw0,
            sqhd: 1,
            sqid: 1,
            cid: 9,
            phase: true,
            status: st,
        };
        assert!(c.complete(1, &Cqe { cid: 8, ..ok }).is_err());
        assert!(c.complete(1, &Cqe { sqhd: 2, ..ok }).is_err());
        c.complete(1, &ok).unwrap();
        assert!(c.complete(1, &ok).is_err(), "a second completion");
        assert_eq!(c.sq_doorbell(1, 8), Err(1));
        assert_eq!(c.sq_doorbell(2, 0), Err(0));
    }
}
