//! The far end of NVMe/RDMA at packet level: an NVMe target with one RAM-backed namespace,
//! one RC queue pair per host QP, speaking RoCEv2 frames (`models::roce`). No cycles: the
//! harness hands it the host's frames and takes its frames, and calls [`Target::timeout`] when
//! the link has been quiet.
//!
//! One file on purpose (about 1,150 lines and its unit tests): a QP's responder and requester
//! halves share its PSNs, its retransmission queue and its commands, and read as one machine.
//!
//! - Requests from the host (SEND Only command capsules): PSN in order -> the command is
//!   executed once, ACKed (syndrome 1Fh) and answered with a response capsule (SEND Only, a
//!   16-byte CQE, AckReq); ahead -> one NAK 60h, then nothing until the expected PSN;
//!   duplicate -> re-ACK, not executed again.
//! - Its own requests (the response capsules) are kept until ACKed: an ACK retires every PSN up
//!   to its own, a NAK 60h retransmits from its PSN (go-back-N), a NAK 61h-63h ends the QP,
//!   and [`Target::timeout`] retransmits everything unacknowledged (and gives the QP up after
//!   [`RETRY_LIMIT`] timeouts in a row: the host's QP may have gone to error).
//! - Commands: Flush; Write Zeroes (LBA range checked: 80h); Read and Write past the end of
//!   the namespace (80h); an NSID other than 1 (0Bh); any other opcode (01h). A Read inside
//!   the namespace moves its data as a real NVMe/RDMA target does: RDMA WRITE of the blocks to
//!   the capsule's keyed SGL (VA = its address, R_Key = its key), segmented at the QP's path
//!   MTU (Only, or First / Middle... / Last; RETH on First and Only, AckReq on the last
//!   packet), then the response capsule. A Write inside the namespace fetches its data with
//!   RDMA READ requests (its window split into one to three READs of random sizes, each
//!   taking ceil(len / MTU) PSNs, sometimes followed by a zero-length READ at its end), as an
//!   RC requester: READ responses are taken in PSN order
//!   (opcode sequence and lengths checked); a response PSN ahead of the expected one, an ACK
//!   or NAK 60h beyond an unfinished READ, or a timeout re-issues the READ from its first
//!   missing PSN (VA and length adjusted), once per missing PSN unless the link goes quiet.
//!   When every READ of the Write is answered, the data goes into the namespace and the
//!   response capsule follows.
//! - In-capsule data: a capsule (SEND Only) may carry data after its 64-byte SQE. A command
//!   whose DPTR is an SGL Data Block descriptor with subtype Offset (identifier 01h; address =
//!   offset into the capsule's data, length) takes its data from there, as NVMe-oF allows for
//!   host-to-controller data only: a Write (01h) so described is executed at once from the
//!   capsule (its data also goes into [`Target::write_data`]); offset + length beyond the
//!   capsule's data: 16h (SGL Offset Invalid, as Linux nvmet-rdma answers), a length other
//!   than the command's data length: 0Fh (Data SGL Length Invalid), any other opcode so
//!   described: 02h (Invalid Field in Command); nothing is written then.
//!   [`Target::icd_max`] is the host's rule being checked: a Write of `n` bytes goes in the
//!   capsule if and only if `n <= icd_max` and `64 + n` fits the QP's MTU (one SEND Only).
//! - Everything the host sends is checked (addresses, QPN, P_Key, AckReq, the capsule's keyed
//!   or offset SGL descriptor, the in-capsule rule); a fault goes into [`Target::errors`]. A frame that does not decode was
//!   damaged on the link: it is dropped silently (the testbench checks the host's frames
//!   before the link).
//!
//! Hostile frames for the receiver's checks are made by [`Target::hostile`].
//!
//! One file on purpose (about 1,300 lines, 160 of them its unit tests): one state machine per
//! queue pair whose request, response and retransmission rules read best side by side.

use super::roce::{op, Aeth, Bth, Net, Packet, Reth};
use std::collections::{BTreeMap, VecDeque};

/// Namespace block size.
pub const BLOCK: usize = 512;

/// NVMe statuses for a bad in-capsule data descriptor (Generic Command Status).
pub mod status {
    /// Invalid Field in Command: an offset (in-capsule) descriptor on a command that moves no
    /// data to the controller.
    pub const INVALID_FIELD: u16 = 0x02;
    /// Data SGL Length Invalid: the descriptor's length is not the command's data length.
    pub const SGL_LENGTH_INVALID: u16 = 0x0f;
    /// SGL Offset Invalid: the descriptor's offset and length go beyond the capsule's data.
    pub const SGL_OFFSET_INVALID: u16 = 0x16;
}

/// SGL identifier of a keyed data block (type 4h, subtype Address).
pub const SGL_KEYED: u8 = 0x40;
/// SGL identifier of a data block with subtype Offset (type 0h, subtype 1h): in-capsule data.
pub const SGL_IN_CAPSULE: u8 = 0x01;

/// The host's in-capsule rule: a Write of `len` bytes goes in its capsule when `len` is at
/// most `icd_max` and the capsule (64-byte SQE + data) fits one SEND Only at the path MTU.
pub fn in_capsule(len: usize, icd_max: usize, mtu: usize) -> bool {
    len <= icd_max && 64 + len <= mtu
}

/// One connection as both ends know it.
#[derive(Clone, Debug)]
pub struct QpConf {
    pub host_mac: [u8; 6],
    pub target_mac: [u8; 6],
    pub host_ip: [u8; 4],
    pub target_ip: [u8; 4],
    /// The host's QPN (the destination of the target's frames).
    pub host_qpn: u32,
    /// The target's QPN.
    pub target_qpn: u32,
    pub pkey: u16,
    /// First PSN of the host's requests.
    pub host_psn: u32,
    /// First PSN of the target's requests.
    pub target_psn: u32,
    /// Path MTU in bytes (256 to 4096).
    pub mtu: usize,
}

/// A command capsule's keyed SGL data block as the target saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keyed {
    pub cid: u16,
    pub opcode: u8,
    pub key: u32,
    pub len: u32,
}

/// A command the target executed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Executed {
    pub qp: usize,
    pub cid: u16,
    pub opcode: u8,
    pub status: u16,
    pub dw0: u32,
}

/// Frames a hostile peer sends (each otherwise well formed, with a good ICRC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hostile {
    /// A SEND to a QPN the host does not have.
    WrongQpn,
    /// A SEND with another P_Key.
    WrongPkey,
    /// An RDMA WRITE Only with an R_Key no command has: NAK 62h, the QP ends.
    WriteBadKey,
    /// The QP's next Read inside the namespace is answered, in sequence (a PSN of its own,
    /// resent until ACKed), by an RDMA WRITE Only of 16 bytes with its key ending one byte past
    /// the end of its data instead of its data: NAK 62h.
    WriteOutOfWindow,
    /// An RDMA WRITE Only with the key of the QP's latest command without data (a key that is
    /// not a Read's): NAK 62h.
    WriteNotRead,
    /// An RDMA WRITE Middle outside a message: NAK 61h.
    WriteMiddle,
    /// An RDMA WRITE Last without payload outside a message (its length is no fault: only
    /// the message sequence is): NAK 61h.
    WriteLastAlone,
    /// An RDMA READ request with an R_Key no command has: NAK 62h, no READ response.
    ReadBadKey,
    /// The QP's next Read inside the namespace is answered, in sequence (a PSN of its own,
    /// resent until ACKed), by an RDMA READ request of 16 bytes with its key (a key that is
    /// not a Write's) instead of its data: NAK 62h, no READ response.
    ReadNotWrite,
    /// The QP's next Write inside the namespace with a keyed SGL (not in-capsule data) asks,
    /// in sequence, for one byte beyond its window (VA 1, its whole length): NAK 62h.
    ReadOutOfWindow,
    /// Every QP's next Write inside the namespace with in-capsule data (in-capsule Writes are
    /// few, so all QPs wait for one; the harness arms it before the first command) is
    /// answered, in sequence, by an RDMA READ request of 16 bytes with the key it would most
    /// likely have had (`{qp, slot, cid}`, the lowest slot no unanswered keyed capsule names)
    /// instead of a response: its capsule gave no key, so NAK 62h.
    ReadInCapsule,
    /// A UDP frame to another port.
    OtherPort,
    /// A SEND First (an RC opcode the engine does not handle) at the next PSN, ICRC right:
    /// dropped and counted in `drop_opcode`, unanswered.
    UnknownOpcode,
    /// A response capsule of 20 bytes at the expected PSN: NAK 61h, the QP ends.
    BadCapsule,
}

fn diff24(a: u32, b: u32) -> u32 {
    a.wrapping_sub(b) & 0xff_ffff
}

/// An RDMA READ the target issued: first PSN, VA, length, bytes received so far (whole
/// MTUs until the last), and the Write it fetches for (its index in `TQp::writes`, the
/// offset of this READ's bytes in the Write's data).
#[derive(Clone, Debug)]
struct ReadOp {
    psn: u32,
    key: u32,
    va: u64,
    len: u32,
    got: u32,
    write: usize,
    at: usize,
    /// `got` at each re-issue: the re-issued request's responses start there (First/Only).
    restarts: Vec<u32>,
}

/// A request of the target kept until acknowledged: a frame (SEND, RDMA WRITE) or a READ.
#[derive(Clone, Debug)]
enum Req {
    Frame(u32, Vec<u8>),
    Read(ReadOp),
}

impl Req {
    fn psn(&self) -> u32 {
        match self {
            Req::Frame(p, _) => *p,
            Req::Read(r) => r.psn,
        }
    }
}

/// A Write waiting for its data: CID, first byte in the namespace, its data, READs to go.
#[derive(Clone, Debug)]
struct PendingWrite {
    cid: u16,
    opcode: u8,
    start: usize,
    data: Vec<u8>,
    reads_left: usize,
}

struct TQp {
    conf: QpConf,
    epsn: u32,
    nak_sent: bool,
    msn: u32,
    spsn: u32,
    unacked: VecDeque<Req>,
    writes: Vec<PendingWrite>,
    /// The response PSN a READ was last re-issued for (once per missing PSN).
    reissued: Option<u32>,
    /// The next Write asks one byte beyond its window (`Hostile::ReadOutOfWindow`).
    oob_read_next: bool,
    /// The next Read is answered by a READ request with its key (`Hostile::ReadNotWrite`).
    read_key_next: bool,
    /// The next in-capsule Write is answered by a READ request (`Hostile::ReadInCapsule`).
    icd_key_next: bool,
    /// Command slots of the keyed capsules not yet answered (their keys name them): an
    /// in-capsule Write most likely holds the lowest other one.
    keyed_slots: BTreeMap<u16, u8>,
    dead: bool,
    /// Timeouts in a row without an ACK.
    retries: u32,
    /// The latest data-less command's keyed SGL.
    last_other: Option<Keyed>,
    /// The next Read goes one byte out of its window (`Hostile::WriteOutOfWindow`).
    oob_next: bool,
}

/// Timeouts in a row after which the target gives up on a QP (as an RC requester's retry
/// count: a peer that went to error never answers again).
pub const RETRY_LIMIT: u32 = 7;

/// The target.
pub struct Target {
    qps: Vec<TQp>,
    /// The namespace (NSID 1).
    pub ns: Vec<u8>,
    /// Frames to the host, with their QP.
    pub out: VecDeque<Vec<u8>>,
    /// Commands executed, in order.
    pub executed: Vec<Executed>,
    /// The data each Read sent by RDMA WRITE: (QP, CID, bytes).
    pub read_data: Vec<(usize, u16, Vec<u8>)>,
    /// The data each Write fetched by RDMA READ: (QP, CID, bytes).
    pub write_data: Vec<(usize, u16, Vec<u8>)>,
    /// READ requests sent (re-issues included) and READ response packets taken.
    pub reads_sent: u64,
    pub read_responses: u64,
    rng: u64,
    /// What the host did wrong.
    pub errors: Vec<String>,
    /// NAKs received: (QP, syndrome).
    pub naks: Vec<(usize, u8)>,
    /// Frames retransmitted.
    pub retransmits: u64,
    /// Host frames that did not decode (damaged on the link).
    pub dropped: u64,
    /// Congestion control, notification point: CE-marked host frames per QP.
    pub ce_rx: Vec<u64>,
    /// CNPs sent to the host per QP (one per CE-marked frame, at most one per QP per
    /// `cnp_gap` of `now`).
    pub cnp_tx: Vec<u64>,
    /// The harness's clock (any unit: the target only compares it) and the least gap between
    /// two CNPs of a QP; `None`: the target sends no CNP.
    pub now: u64,
    pub cnp_gap: Option<u64>,
    last_cnp: Vec<Option<u64>>,
    /// Reaction point: CNPs received from the host per QP.
    pub cnp_rx: Vec<u64>,
    /// Percent of in-order capsules answered with an RNR NAK (timer field `rnr_timer`)
    /// instead of being executed; a PSN is refused once, its retransmission is taken.
    pub rnr_percent: u8,
    pub rnr_timer: u8,
    rnr_rng: u64,
    rnr_psn: Vec<Option<u32>>,
    /// RNR NAKs sent: (QP, PSN, `now`).
    pub rnr_sent: Vec<(usize, u32, u64)>,
    /// Per QP, timer fields of RNR NAKs to send: while it holds any, every in-order capsule
    /// (the same PSN again included) is refused with the next one, before `rnr_percent`.
    pub rnr_script: Vec<VecDeque<u8>>,
    /// The host's in-capsule data limit (`roce.in_capsule_bytes`): which Writes must come in
    /// their capsule ([`in_capsule`]). 0: none.
    pub icd_max: usize,
    /// Writes executed from in-capsule data.
    pub icd_writes: u64,
    /// Fetch a Write's data with one READ (a real target's choice), not in one to three
    /// pieces with sometimes a zero-length READ after them.
    pub whole_reads: bool,
    /// The IPv4 TOS the host's frames must carry (its `tx_tos` CSR).
    pub host_tos: HostTos,
}

/// The IPv4 TOS of the host's frames: DSCP and ECN of its capsules, ACKs and READ responses,
/// DSCP of its CNPs (whose ECN is 00). A CE mark (ECN 11) on the way is always accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostTos {
    pub data_dscp: u8,
    pub data_ecn: u8,
    pub cnp_dscp: u8,
}

impl Default for HostTos {
    /// The engine's reset values: ECT(0), DSCP 0.
    fn default() -> HostTos {
        HostTos {
            data_dscp: 0,
            data_ecn: 2,
            cnp_dscp: 0,
        }
    }
}

impl TQp {
    fn new(c: &QpConf) -> TQp {
        TQp {
            conf: c.clone(),
            epsn: c.host_psn,
            nak_sent: false,
            msn: 0,
            spsn: c.target_psn,
            unacked: VecDeque::new(),
            dead: false,
            retries: 0,
            last_other: None,
            oob_next: false,
            writes: Vec::new(),
            reissued: None,
            oob_read_next: false,
            read_key_next: false,
            icd_key_next: false,
            keyed_slots: BTreeMap::new(),
        }
    }
}

impl Target {
    /// The target's side of QP `q` starts afresh from its configuration (as after the host and
    /// the target re-established the connection): its sequence state is back at the initial
    /// PSNs and its frames not yet sent are dropped. What it executed stays on record.
    pub fn reset_qp(&mut self, q: usize) {
        let conf = self.qps[q].conf.clone();
        self.qps[q] = TQp::new(&conf);
        self.out.retain(|f| {
            crate::models::roce::Packet::decode(f).map_or(true, |p| p.bth.dest_qp != conf.host_qpn)
        });
        self.rnr_psn[q] = None;
    }

    /// A target for `qps`, with a namespace of `blocks` blocks filled from `fill`.
    pub fn new(qps: &[QpConf], blocks: usize, fill: u64) -> Target {
        let mut x = fill | 1;
        let ns = (0..blocks * BLOCK)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        Target {
            qps: qps.iter().map(TQp::new).collect(),
            ns,
            out: VecDeque::new(),
            executed: Vec::new(),
            read_data: Vec::new(),
            write_data: Vec::new(),
            reads_sent: 0,
            read_responses: 0,
            rng: fill ^ 0x9e37_79b9_7f4a_7c15 | 1,
            errors: Vec::new(),
            naks: Vec::new(),
            retransmits: 0,
            dropped: 0,
            ce_rx: vec![0; qps.len()],
            cnp_tx: vec![0; qps.len()],
            now: 0,
            cnp_gap: None,
            last_cnp: vec![None; qps.len()],
            cnp_rx: vec![0; qps.len()],
            rnr_percent: 0,
            rnr_timer: 1,
            rnr_rng: fill | 1,
            rnr_psn: vec![None; qps.len()],
            rnr_sent: Vec::new(),
            rnr_script: vec![VecDeque::new(); qps.len()],
            icd_max: 0,
            host_tos: HostTos::default(),
            icd_writes: 0,
            whole_reads: false,
        }
    }

    /// A CE-marked host frame on QP `q`: counted, and a CNP back unless one went out less
    /// than `cnp_gap` ago.
    fn congestion(&mut self, q: usize) {
        self.ce_rx[q] += 1;
        let Some(gap) = self.cnp_gap else { return };
        if self.last_cnp[q].is_some_and(|t| self.now < t + gap) {
            return;
        }
        self.last_cnp[q] = Some(self.now);
        self.cnp_tx[q] += 1;
        let mut p = Target::packet(&self.qps[q].conf, op::CNP, 0, false);
        p.bth.becn = true;
        p.payload = vec![0; 16];
        self.out.push_back(p.encode());
    }

    /// Whether the in-order capsule `psn` of QP `q` is refused with an RNR NAK (sent here).
    fn rnr(&mut self, q: usize, psn: u32) -> bool {
        if let Some(code) = self.rnr_script[q].pop_front() {
            self.qps[q].nak_sent = true;
            self.rnr_sent.push((q, psn, self.now));
            self.ack(q, 0x20 | (code & 0x1f), psn);
            return true;
        }
        let mut x = self.rnr_rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rnr_rng = x;
        if self.rnr_psn[q] == Some(psn) || x % 100 >= u64::from(self.rnr_percent) {
            return false;
        }
        self.rnr_psn[q] = Some(psn);
        self.qps[q].nak_sent = true;
        self.rnr_sent.push((q, psn, self.now));
        self.ack(q, 0x20 | (self.rnr_timer & 0x1f), psn);
        true
    }

    /// Blocks in the namespace.
    pub fn blocks(&self) -> u64 {
        (self.ns.len() / BLOCK) as u64
    }

    /// Whether QP `q` ended (a fatal NAK either way).
    pub fn dead(&self, q: usize) -> bool {
        self.qps[q].dead
    }

    /// Requests not yet acknowledged, over all live QPs.
    pub fn unacked(&self) -> usize {
        self.qps
            .iter()
            .filter(|q| !q.dead)
            .map(|q| q.unacked.len())
            .sum()
    }

    fn net(c: &QpConf) -> Net {
        Net {
            dst_mac: c.host_mac,
            src_mac: c.target_mac,
            src_ip: c.target_ip,
            dst_ip: c.host_ip,
            dscp: 0,
            ecn: 0,
            ip_id: 0,
            ttl: 64,
            src_port: 0xd000,
        }
    }

    fn packet(c: &QpConf, opcode: u8, psn: u32, ack_req: bool) -> Packet {
        Packet {
            net: Target::net(c),
            bth: Bth {
                opcode,
                pkey: c.pkey,
                dest_qp: c.host_qpn,
                ack_req,
                psn,
                ..Bth::default()
            },
            reth: None,
            aeth: None,
            imm: None,
            payload: Vec::new(),
        }
    }

    fn ack(&mut self, q: usize, syndrome: u8, psn: u32) {
        let c = &self.qps[q].conf;
        let mut p = Target::packet(c, op::ACKNOWLEDGE, psn, false);
        p.aeth = Some(Aeth {
            syndrome,
            msn: self.qps[q].msn,
        });
        self.out.push_back(p.encode());
    }

    fn request(&mut self, q: usize, payload: Vec<u8>) {
        self.send(q, op::SEND_ONLY, None, payload, true);
    }

    /// Sends a request of the target's on QP `q` with the next PSN, kept until ACKed.
    fn send(&mut self, q: usize, opcode: u8, reth: Option<Reth>, payload: Vec<u8>, ack_req: bool) {
        let x = &mut self.qps[q];
        let psn = x.spsn;
        x.spsn = (x.spsn + 1) & 0xff_ffff;
        let mut p = Target::packet(&x.conf, opcode, psn, ack_req);
        p.bth.pad = ((4 - payload.len() % 4) % 4) as u8;
        p.reth = reth;
        p.payload = payload;
        let f = p.encode();
        x.unacked.push_back(Req::Frame(psn, f.clone()));
        self.out.push_back(f);
    }

    fn rand(&mut self, n: u64) -> u64 {
        let x = &mut self.rng;
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x % n.max(1)
    }

    /// The READ request frame for the part of `r` not received yet.
    fn read_frame(c: &QpConf, r: &ReadOp) -> Vec<u8> {
        let mtu = c.mtu as u32;
        let mut p = Target::packet(c, op::READ_REQUEST, (r.psn + r.got / mtu) & 0xff_ffff, true);
        p.reth = Some(Reth {
            va: r.va + u64::from(r.got),
            rkey: r.key,
            len: r.len - r.got,
        });
        p.encode()
    }

    /// Issues an RDMA READ of `len` bytes at `va` of window `key` for Write `write` (its
    /// bytes from `at`), taking ceil(len / MTU) PSNs (at least 1).
    fn rdma_read(&mut self, q: usize, key: u32, va: u64, len: u32, write: usize, at: usize) {
        let x = &mut self.qps[q];
        let r = ReadOp {
            psn: x.spsn,
            key,
            va,
            len,
            got: 0,
            write,
            at,
            restarts: Vec::new(),
        };
        let n = len.div_ceil(x.conf.mtu as u32).max(1);
        x.spsn = (x.spsn + n) & 0xff_ffff;
        let f = Target::read_frame(&x.conf, &r);
        x.unacked.push_back(Req::Read(r));
        self.reads_sent += 1;
        self.out.push_back(f);
    }

    /// Sends again every unacknowledged request of QP `q` from the first (READs from their
    /// first missing PSN).
    fn resend_all(&mut self, q: usize) {
        for r in self.qps[q].unacked.iter_mut() {
            if let Req::Read(r) = r {
                r.restarts.push(r.got);
            }
        }
        let x = &self.qps[q];
        let again: Vec<Vec<u8>> = x
            .unacked
            .iter()
            .map(|r| match r {
                Req::Frame(_, f) => f.clone(),
                Req::Read(r) => Target::read_frame(&x.conf, r),
            })
            .collect();
        let reads = x
            .unacked
            .iter()
            .filter(|r| matches!(r, Req::Read(_)))
            .count();
        self.reads_sent += reads as u64;
        self.retransmits += again.len() as u64;
        self.out.extend(again);
    }

    /// The host went past an unfinished READ at the front of QP `q` (its responses were
    /// lost): go back to it, once per missing PSN.
    fn reissue_front(&mut self, q: usize) {
        let x = &mut self.qps[q];
        if let Some(Req::Read(r)) = x.unacked.front() {
            let missing = (r.psn + r.got / x.conf.mtu as u32) & 0xff_ffff;
            if x.reissued != Some(missing) {
                x.reissued = Some(missing);
                self.resend_all(q);
            }
        }
    }

    /// A READ response packet on QP `q`.
    fn read_response(&mut self, q: usize, p: &Packet) {
        let r = p.bth.psn;
        let x = &mut self.qps[q];
        // A response acknowledges the requests before it.
        while x.unacked.front().is_some_and(|e| {
            matches!(e, Req::Frame(..)) && diff24(r, e.psn()).wrapping_sub(1) < 0x7f_ffff
        }) {
            x.unacked.pop_front();
            x.retries = 0;
        }
        let mtu = x.conf.mtu as u32;
        let Some(Req::Read(rd)) = x.unacked.front_mut() else {
            return; // a late copy of a READ already answered
        };
        let want = (rd.psn + rd.got / mtu) & 0xff_ffff;
        let d = diff24(r, want);
        if d != 0 {
            if d < 0x80_0000 && diff24(r, rd.psn) < rd.len.div_ceil(mtu).max(1) {
                // A response of this READ ahead of the expected one: one went missing.
                self.reissue_front(q);
            }
            return;
        }
        let left = rd.len - rd.got;
        let first = rd.got == 0;
        let last = left <= mtu;
        let opc = |first: bool| match (first, last) {
            (true, true) => op::READ_RESPONSE_ONLY,
            (true, false) => op::READ_RESPONSE_FIRST,
            (false, true) => op::READ_RESPONSE_LAST,
            (false, false) => op::READ_RESPONSE_MIDDLE,
        };
        // The original request's sequence, or that of a re-issue starting here.
        let restarted = rd.restarts.contains(&rd.got);
        let opc_ok = p.bth.opcode == opc(first) || (restarted && p.bth.opcode == opc(true));
        let opc = opc(first);
        let n = left.min(mtu) as usize;
        if !opc_ok || p.payload.len() != n || p.bth.ack_req {
            self.errors.push(format!(
                "QP {q}: READ response PSN {r:#x} opcode {:#04x} with {} bytes, expected {opc:#04x} with {n}",
                p.bth.opcode,
                p.payload.len()
            ));
            return;
        }
        let aeth_ok = match p.aeth {
            Some(a) => a.syndrome >> 5 == 0,
            None => opc == op::READ_RESPONSE_MIDDLE,
        };
        if !aeth_ok {
            self.errors.push(format!(
                "QP {q}: READ response PSN {r:#x} AETH {:?}",
                p.aeth
            ));
        }
        self.read_responses += 1;
        let w = &mut x.writes[rd.write];
        let at = rd.at + rd.got as usize;
        w.data[at..at + n].copy_from_slice(&p.payload);
        rd.got += n as u32;
        x.retries = 0;
        x.reissued = None;
        if rd.got == rd.len {
            let wi = rd.write;
            x.unacked.pop_front();
            x.writes[wi].reads_left -= 1;
            if x.writes[wi].reads_left == 0 {
                self.finish_write(q, wi);
            }
        }
    }

    /// A Write's data all came: into the namespace, then the response capsule.
    fn finish_write(&mut self, q: usize, wi: usize) {
        let w = &mut self.qps[q].writes[wi];
        let (cid, opcode, start) = (w.cid, w.opcode, w.start);
        let data = std::mem::take(&mut w.data);
        self.ns[start..start + data.len()].copy_from_slice(&data);
        self.write_data.push((q, cid, data));
        self.respond(q, cid, opcode, 0);
    }

    /// RDMA WRITE of `data` to the host's keyed window `key` at `va`, segmented at the MTU.
    fn rdma_write(&mut self, q: usize, key: u32, va: u64, data: &[u8]) {
        let mtu = self.qps[q].conf.mtu;
        let reth = Some(Reth {
            va,
            rkey: key,
            len: data.len() as u32,
        });
        if data.len() <= mtu {
            self.send(q, op::WRITE_ONLY, reth, data.to_vec(), true);
            return;
        }
        let n = data.len().div_ceil(mtu);
        for (i, c) in data.chunks(mtu).enumerate() {
            let (opc, r) = match i {
                0 => (op::WRITE_FIRST, reth),
                _ if i == n - 1 => (op::WRITE_LAST, None),
                _ => (op::WRITE_MIDDLE, None),
            };
            self.send(q, opc, r, c.to_vec(), i == n - 1);
        }
    }

    /// A frame from the host.
    pub fn receive(&mut self, frame: &[u8]) {
        let p = match Packet::decode(frame) {
            Ok(p) => p,
            Err(_) => {
                // Damaged on the link: dropped silently, as a receiver must.
                self.dropped += 1;
                return;
            }
        };
        let Some(q) = self
            .qps
            .iter()
            .position(|x| x.conf.target_qpn == p.bth.dest_qp)
        else {
            self.errors
                .push(format!("host frame to unknown QPN {:#x}", p.bth.dest_qp));
            return;
        };
        let c = self.qps[q].conf.clone();
        let t = self.host_tos;
        let (dscp, ecn) = if p.bth.opcode == op::CNP {
            (t.cnp_dscp, 0)
        } else {
            (t.data_dscp, t.data_ecn)
        };
        let want = Net {
            dst_mac: c.target_mac,
            src_mac: c.host_mac,
            src_ip: c.host_ip,
            dst_ip: c.target_ip,
            dscp,
            ecn: if p.net.ecn == 3 { 3 } else { ecn }, // CE: a switch's mark
            ip_id: 0,
            ttl: 64,
            src_port: 0xc000 + q as u16,
        };
        if p.net != want {
            self.errors.push(format!(
                "QP {q}: frame addresses {:?}, expected {want:?}",
                p.net
            ));
        }
        if p.bth.pkey != c.pkey
            || p.bth.se
            || p.bth.mig
            || p.bth.fecn
            || p.bth.becn != (p.bth.opcode == op::CNP)
        {
            self.errors.push(format!("QP {q}: BTH {:?}", p.bth));
        }
        if p.net.ecn == 3 {
            self.congestion(q);
        }
        if p.bth.opcode == op::CNP {
            if p.bth.ack_req || p.bth.psn != 0 || p.bth.pad != 0 || p.payload != [0; 16] {
                self.errors
                    .push(format!("QP {q}: CNP {:?} {:02x?}", p.bth, p.payload));
            }
            self.cnp_rx[q] += 1;
            return;
        }
        if self.qps[q].dead {
            return;
        }
        match p.bth.opcode {
            op::SEND_ONLY => {
                if !p.bth.ack_req || p.bth.pad != 0 || p.payload.len() < 64 {
                    self.errors.push(format!(
                        "QP {q}: capsule with AckReq {}, pad {}, {} bytes",
                        p.bth.ack_req,
                        p.bth.pad,
                        p.payload.len()
                    ));
                    return;
                }
                if diff24(p.bth.psn, self.qps[q].epsn) == 0 && self.rnr(q, p.bth.psn) {
                    return;
                }
                let x = &mut self.qps[q];
                let d = diff24(p.bth.psn, x.epsn);
                if d == 0 {
                    x.epsn = (x.epsn + 1) & 0xff_ffff;
                    x.msn = (x.msn + 1) & 0xff_ffff;
                    x.nak_sent = false;
                    self.ack(q, 0x1f, p.bth.psn);
                    let sqe: [u8; 64] = p.payload[..64].try_into().expect("64 bytes");
                    self.execute(q, &sqe, &p.payload[64..]);
                } else if d < 0x80_0000 {
                    if !x.nak_sent {
                        x.nak_sent = true;
                        let e = x.epsn;
                        self.ack(q, 0x60, e);
                    }
                } else {
                    let e = (x.epsn + 0xff_ffff) & 0xff_ffff;
                    self.ack(q, 0x1f, e);
                }
            }
            op::ACKNOWLEDGE => {
                let a = p.aeth.expect("an ACK has an AETH");
                let x = &mut self.qps[q];
                match a.syndrome >> 5 {
                    0 => {
                        x.retries = 0;
                        while x.unacked.front().is_some_and(|e| {
                            matches!(e, Req::Frame(..)) && diff24(p.bth.psn, e.psn()) < 0x80_0000
                        }) {
                            x.unacked.pop_front();
                        }
                        // An ACK at or beyond an unfinished READ: its responses were lost
                        // (the host sends no ACK ahead of a READ response before it).
                        if x.unacked.front().is_some_and(|e| {
                            matches!(e, Req::Read(_)) && diff24(p.bth.psn, e.psn()) < 0x80_0000
                        }) {
                            self.reissue_front(q);
                        }
                    }
                    3 if a.syndrome == 0x60 => {
                        self.naks.push((q, a.syndrome));
                        while x.unacked.front().is_some_and(|e| {
                            matches!(e, Req::Frame(..))
                                && diff24(p.bth.psn, e.psn()).wrapping_sub(1) < 0x7f_ffff
                        }) {
                            x.unacked.pop_front();
                        }
                        self.resend_all(q);
                    }
                    _ => {
                        self.naks.push((q, a.syndrome));
                        x.dead = true;
                        x.unacked.clear();
                    }
                }
            }
            op::READ_RESPONSE_FIRST
            | op::READ_RESPONSE_MIDDLE
            | op::READ_RESPONSE_LAST
            | op::READ_RESPONSE_ONLY => self.read_response(q, &p),
            o => self
                .errors
                .push(format!("QP {q}: host sent opcode {o:#04x}")),
        }
    }

    /// Executes the command `sqe` that came with the in-capsule data `icd`.
    fn execute(&mut self, q: usize, sqe: &[u8; 64], icd: &[u8]) {
        let le32 = |i: usize| u32::from_le_bytes(sqe[i..i + 4].try_into().expect("4 bytes"));
        let opcode = sqe[0];
        let cid = u16::from_le_bytes([sqe[2], sqe[3]]);
        let nsid = le32(4);
        let slba = u64::from(le32(40)) | u64::from(le32(44)) << 32;
        let nlb = u64::from(le32(48) & 0xffff) + 1;
        // The capsule's data pointer: one keyed SGL data block over the command's window.
        let len = if matches!(opcode, 0x01 | 0x02 | 0x05) {
            nlb * BLOCK as u64
        } else {
            0
        };
        let addr = u64::from_le_bytes(sqe[24..32].try_into().expect("8 bytes"));
        if sqe[39] == SGL_IN_CAPSULE {
            self.execute_in_capsule(q, sqe, addr, len, icd);
            return;
        }
        if opcode == 0x01 && in_capsule(len as usize, self.icd_max, self.qps[q].conf.mtu) {
            self.errors.push(format!(
                "QP {q} CID {cid:#x}: a Write of {len} bytes not in its capsule (limit {}, MTU {})",
                self.icd_max, self.qps[q].conf.mtu
            ));
        }
        if !icd.is_empty() {
            self.errors.push(format!(
                "QP {q} CID {cid:#x}: {} in-capsule bytes with a keyed SGL",
                icd.len()
            ));
        }
        let sgl_len = u32::from_le_bytes([sqe[32], sqe[33], sqe[34], 0]);
        let key = le32(35);
        if sqe[1] >> 6 != 1
            || sqe[39] != 0x40
            || addr != 0
            || u64::from(sgl_len) != len
            || key & 0xffff != u32::from(cid)
            || key >> 24 != q as u32
        {
            self.errors.push(format!(
                "QP {q} CID {cid:#x}: capsule PSDT {}, SGL {:02x?}",
                sqe[1] >> 6,
                &sqe[24..40]
            ));
        }
        let keyed = Keyed {
            cid,
            opcode,
            key,
            len: sgl_len,
        };
        self.qps[q].keyed_slots.insert(cid, (key >> 16) as u8);
        if len == 0 {
            self.qps[q].last_other = Some(keyed);
        }
        let in_range = slba.checked_add(nlb).is_some_and(|e| e <= self.blocks());
        let status: u16 = match opcode {
            0x00 => 0,
            _ if nsid != 1 && matches!(opcode, 0x01 | 0x02 | 0x08) => 0x0b,
            0x08 if in_range => {
                let s = slba as usize * BLOCK;
                self.ns[s..s + nlb as usize * BLOCK].fill(0);
                0
            }
            0x02 if in_range && self.qps[q].oob_next => {
                self.qps[q].oob_next = false;
                let va = addr + u64::from(sgl_len) - 15;
                let reth = Some(Reth {
                    va,
                    rkey: key,
                    len: 16,
                });
                self.send(q, op::WRITE_ONLY, reth, vec![0x44; 16], true);
                return;
            }
            0x02 if in_range && self.qps[q].read_key_next => {
                self.qps[q].read_key_next = false;
                let reth = Some(Reth {
                    va: addr,
                    rkey: key,
                    len: 16,
                });
                self.send(q, op::READ_REQUEST, reth, Vec::new(), true);
                return;
            }
            0x02 if in_range => {
                let s = slba as usize * BLOCK;
                let data = self.ns[s..s + nlb as usize * BLOCK].to_vec();
                self.rdma_write(q, key, addr, &data);
                self.read_data.push((q, cid, data));
                0
            }
            0x01 if in_range && self.qps[q].oob_read_next => {
                self.qps[q].oob_read_next = false;
                let wi = self.qps[q].writes.len();
                self.qps[q].writes.push(PendingWrite {
                    cid,
                    opcode,
                    start: 0,
                    data: vec![0; sgl_len as usize],
                    reads_left: 1,
                });
                self.rdma_read(q, key, addr + 1, sgl_len, wi, 0);
                return;
            }
            0x01 if in_range => {
                // Its data by RDMA READ, in one to three pieces; executed when they are in.
                let n = sgl_len as usize;
                let mut cuts = vec![0, n];
                let pieces = if self.whole_reads { 0 } else { self.rand(3) };
                for _ in 0..pieces {
                    cuts.push(1 + self.rand(n as u64 - 1) as usize);
                }
                cuts.sort_unstable();
                cuts.dedup();
                let wi = self.qps[q].writes.len();
                self.qps[q].writes.push(PendingWrite {
                    cid,
                    opcode,
                    start: slba as usize * BLOCK,
                    data: vec![0; n],
                    reads_left: cuts.len() - 1,
                });
                for c in cuts.windows(2) {
                    let len = (c[1] - c[0]) as u32;
                    self.rdma_read(q, key, addr + c[0] as u64, len, wi, c[0]);
                }
                if !self.whole_reads && self.rand(8) == 0 {
                    // A zero-length READ (one PSN, an Only response without payload).
                    self.qps[q].writes[wi].reads_left += 1;
                    self.rdma_read(q, key, addr + n as u64, 0, wi, n);
                }
                return;
            }
            0x01 | 0x02 | 0x08 => 0x80,
            _ => 0x01,
        };
        self.respond(q, cid, opcode, status);
    }

    /// A command whose DPTR is an SGL Data Block with subtype Offset (`addr` the offset into
    /// the capsule's data `icd`); `len` is the command's data length.
    fn execute_in_capsule(&mut self, q: usize, sqe: &[u8; 64], addr: u64, len: u64, icd: &[u8]) {
        let opcode = sqe[0];
        let cid = u16::from_le_bytes([sqe[2], sqe[3]]);
        let nsid = u32::from_le_bytes(sqe[4..8].try_into().expect("4 bytes"));
        let slba = u64::from_le_bytes(sqe[40..48].try_into().expect("8 bytes"));
        let nlb = u64::from(u16::from_le_bytes([sqe[48], sqe[49]])) + 1;
        // Offset descriptor: address (8), length (4), 3 reserved bytes, identifier.
        let sgl_len = u32::from_le_bytes(sqe[32..36].try_into().expect("4 bytes"));
        // What the host must send: PSDT 01b, offset 0, length the command's, exactly that
        // much data, only for a Write that the rule puts in its capsule.
        if sqe[1] >> 6 != 1
            || sqe[36..39] != [0; 3]
            || addr != 0
            || u64::from(sgl_len) != len
            || icd.len() as u64 != len
            || opcode != 0x01
            || !in_capsule(len as usize, self.icd_max, self.qps[q].conf.mtu)
        {
            self.errors.push(format!(
                "QP {q} CID {cid:#x}: opcode {opcode:#04x}, in-capsule PSDT {}, SGL {:02x?}, {} bytes (limit {}, MTU {})",
                sqe[1] >> 6,
                &sqe[24..40],
                icd.len(),
                self.icd_max,
                self.qps[q].conf.mtu
            ));
        }
        let in_range = slba.checked_add(nlb).is_some_and(|e| e <= self.blocks());
        let fits = addr
            .checked_add(u64::from(sgl_len))
            .is_some_and(|e| e <= icd.len() as u64);
        if opcode == 0x01 && in_range && fits && self.qps[q].icd_key_next {
            self.qps[q].icd_key_next = false;
            let held: Vec<u8> = self.qps[q].keyed_slots.values().copied().collect();
            let slot = (0u8..).find(|s| !held.contains(s)).expect("a slot");
            let reth = Some(Reth {
                va: 0,
                rkey: (q as u32) << 24 | u32::from(slot) << 16 | u32::from(cid),
                len: 16,
            });
            self.send(q, op::READ_REQUEST, reth, Vec::new(), true);
            return;
        }
        let status = if opcode != 0x01 {
            status::INVALID_FIELD
        } else if !fits {
            status::SGL_OFFSET_INVALID
        } else if u64::from(sgl_len) != len {
            status::SGL_LENGTH_INVALID
        } else if nsid != 1 {
            0x0b
        } else if !in_range {
            0x80
        } else {
            let data = icd[addr as usize..addr as usize + sgl_len as usize].to_vec();
            let s = slba as usize * BLOCK;
            self.ns[s..s + data.len()].copy_from_slice(&data);
            self.write_data.push((q, cid, data));
            self.icd_writes += 1;
            0
        };
        self.respond(q, cid, opcode, status);
    }

    /// The command is executed: recorded, and its response capsule sent.
    fn respond(&mut self, q: usize, cid: u16, opcode: u8, status: u16) {
        self.qps[q].keyed_slots.remove(&cid);
        let dw0 = u32::from(cid) << 8 ^ 0x5a00_0000 ^ q as u32;
        self.executed.push(Executed {
            qp: q,
            cid,
            opcode,
            status,
            dw0,
        });
        let mut cqe = Vec::with_capacity(16);
        cqe.extend_from_slice(&dw0.to_le_bytes());
        cqe.extend_from_slice(&0u32.to_le_bytes());
        cqe.extend_from_slice(&((q as u32 + 1) << 16).to_le_bytes());
        cqe.extend_from_slice(&(u32::from(cid) | u32::from(status) << 17).to_le_bytes());
        self.request(q, cqe);
    }

    /// The link was quiet: retransmit every unacknowledged request, or give the QP up after
    /// [`RETRY_LIMIT`] timeouts in a row.
    pub fn timeout(&mut self) {
        for x in self
            .qps
            .iter_mut()
            .filter(|x| !x.dead && !x.unacked.is_empty())
        {
            x.retries += 1;
            if x.retries > RETRY_LIMIT {
                x.dead = true;
                x.unacked.clear();
                continue;
            }
        }
        let live: Vec<usize> = (0..self.qps.len())
            .filter(|&q| !self.qps[q].dead && !self.qps[q].unacked.is_empty())
            .collect();
        for q in live {
            self.qps[q].reissued = None;
            self.resend_all(q);
        }
    }

    /// Sends a hostile frame on QP `q`. `BadCapsule` takes the next PSN (the QP will end);
    /// the others carry the next PSN without taking it.
    pub fn hostile(&mut self, q: usize, h: Hostile) {
        let c = self.qps[q].conf.clone();
        let psn = self.qps[q].spsn;
        let mut p = Target::packet(&c, op::SEND_ONLY, psn, true);
        p.payload = vec![0x11; 16];
        match h {
            Hostile::WrongQpn => p.bth.dest_qp = c.host_qpn ^ 0x40_0000,
            Hostile::WrongPkey => p.bth.pkey = c.pkey ^ 0x0100,
            Hostile::WriteOutOfWindow => {
                self.qps[q].oob_next = true;
                return;
            }
            Hostile::WriteBadKey | Hostile::WriteNotRead => {
                let bad = (q as u32) << 24 | 0xdead;
                let key = match (h, self.qps[q].last_other) {
                    (Hostile::WriteNotRead, Some(k)) => k.key,
                    _ => bad,
                };
                let va = 0;
                p.bth.opcode = op::WRITE_ONLY;
                p.reth = Some(Reth {
                    va,
                    rkey: key,
                    len: 16,
                });
            }
            Hostile::ReadOutOfWindow => {
                self.qps[q].oob_read_next = true;
                return;
            }
            Hostile::ReadNotWrite => {
                self.qps[q].read_key_next = true;
                return;
            }
            Hostile::ReadInCapsule => {
                for x in &mut self.qps {
                    x.icd_key_next = true;
                }
                return;
            }
            Hostile::ReadBadKey => {
                let key = (q as u32) << 24 | 0xbeef;
                p.bth.opcode = op::READ_REQUEST;
                p.payload = Vec::new();
                p.reth = Some(Reth {
                    va: 0,
                    rkey: key,
                    len: 16,
                });
            }
            Hostile::WriteMiddle => {
                p.bth.opcode = op::WRITE_MIDDLE;
                p.bth.ack_req = false;
                p.payload = vec![0x33; c.mtu];
            }
            Hostile::WriteLastAlone => {
                p.bth.opcode = op::WRITE_LAST;
                p.bth.ack_req = false;
                p.payload = Vec::new();
            }
            Hostile::UnknownOpcode => {
                p.bth.opcode = op::SEND_FIRST;
                p.bth.ack_req = false;
                self.out.push_back(p.encode_unchecked());
                return;
            }
            Hostile::OtherPort => {
                let mut f = p.encode();
                f[37] ^= 1; // UDP destination port 4790
                self.out.push_back(f);
                return;
            }
            Hostile::BadCapsule => {
                self.request(q, vec![0x22; 20]);
                return;
            }
        }
        self.out.push_back(p.encode());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(mtu: usize) -> QpConf {
        QpConf {
            host_mac: [0x02, 0, 0, 0, 0x10, 0],
            target_mac: [0x02, 0, 0, 0, 0x20, 0],
            host_ip: [10, 0, 0, 1],
            target_ip: [10, 0, 1, 1],
            host_qpn: 0x11,
            target_qpn: 0x2000,
            pkey: 0xffff,
            host_psn: 100,
            target_psn: 500,
            mtu,
        }
    }

    /// The host's capsule: SEND Only (AckReq) of `sqe` and `data` at PSN `psn`.
    fn capsule(c: &QpConf, psn: u32, sqe: &[u8; 64], data: &[u8]) -> Vec<u8> {
        let mut payload = sqe.to_vec();
        payload.extend_from_slice(data);
        Packet {
            net: Net {
                dst_mac: c.target_mac,
                src_mac: c.host_mac,
                src_ip: c.host_ip,
                dst_ip: c.target_ip,
                dscp: 0,
                ecn: 2, // ECT(0), the engine's reset TOS
                ip_id: 0,
                ttl: 64,
                src_port: 0xc000,
            },
            bth: Bth {
                opcode: op::SEND_ONLY,
                pkey: c.pkey,
                dest_qp: c.target_qpn,
                ack_req: true,
                psn,
                ..Bth::default()
            },
            reth: None,
            aeth: None,
            imm: None,
            payload,
        }
        .encode()
    }

    /// A Write of `blocks` blocks at LBA `slba`, CID `cid`, DPTR an offset data block.
    fn write_sqe(cid: u16, slba: u64, blocks: u16, off: u64, len: u32) -> [u8; 64] {
        let mut s = [0u8; 64];
        s[0] = 0x01;
        s[1] = 0x40; // PSDT 01b
        s[2..4].copy_from_slice(&cid.to_le_bytes());
        s[4..8].copy_from_slice(&1u32.to_le_bytes());
        s[24..32].copy_from_slice(&off.to_le_bytes());
        s[32..36].copy_from_slice(&len.to_le_bytes());
        s[39] = SGL_IN_CAPSULE;
        s[40..48].copy_from_slice(&slba.to_le_bytes());
        s[48..50].copy_from_slice(&(blocks - 1).to_le_bytes());
        s
    }

    /// The status of the response capsule among the target's frames.
    fn response_status(t: &Target) -> Vec<u16> {
        t.out
            .iter()
            .map(|f| Packet::decode(f).expect("decodes"))
            .filter(|p| p.bth.opcode == op::SEND_ONLY)
            .map(|p| (u32::from_le_bytes(p.payload[12..16].try_into().unwrap()) >> 17) as u16)
            .collect()
    }

    #[test]
    fn in_capsule_write_is_written_and_answered() {
        let c = conf(1024);
        let mut t = Target::new(std::slice::from_ref(&c), 8, 7);
        t.icd_max = 512;
        let before = t.ns.clone();
        let data: Vec<u8> = (0..512).map(|i| (i * 7 + 3) as u8).collect();
        t.receive(&capsule(&c, 100, &write_sqe(9, 3, 1, 0, 512), &data));
        assert!(t.errors.is_empty(), "{:?}", t.errors);
        assert_eq!(t.ns[3 * BLOCK..4 * BLOCK], data[..]);
        assert_eq!(t.ns[..3 * BLOCK], before[..3 * BLOCK]);
        assert_eq!(t.ns[4 * BLOCK..], before[4 * BLOCK..]);
        assert_eq!(t.write_data, vec![(0, 9, data)]);
        assert_eq!(t.icd_writes, 1);
        assert_eq!(t.reads_sent, 0, "no RDMA READ for in-capsule data");
        assert_eq!(response_status(&t), vec![0]);
    }

    #[test]
    fn offset_descriptor_beyond_the_data_is_refused() {
        let c = conf(1024);
        // (offset, SGL length, bytes in the capsule, status)
        let cases = [
            (1, 512, 512, status::SGL_OFFSET_INVALID),
            (0, 512, 256, status::SGL_OFFSET_INVALID),
            (u64::MAX, 512, 512, status::SGL_OFFSET_INVALID),
            (0, 256, 512, status::SGL_LENGTH_INVALID),
        ];
        for (off, len, n, st) in cases {
            let mut t = Target::new(std::slice::from_ref(&c), 8, 7);
            t.icd_max = 512;
            let before = t.ns.clone();
            t.receive(&capsule(
                &c,
                100,
                &write_sqe(4, 2, 1, off, len),
                &vec![0x5a; n],
            ));
            assert_eq!(
                response_status(&t),
                vec![st],
                "offset {off} length {len}, {n} bytes"
            );
            assert_eq!(t.ns, before, "nothing written");
            assert!(t.write_data.is_empty());
            assert!(!t.errors.is_empty(), "the host's descriptor is reported");
        }
    }

    #[test]
    fn offset_descriptor_on_a_read_is_an_invalid_field() {
        let c = conf(1024);
        let mut t = Target::new(std::slice::from_ref(&c), 8, 7);
        t.icd_max = 512;
        let mut s = write_sqe(5, 0, 1, 0, 0);
        s[0] = 0x02;
        t.receive(&capsule(&c, 100, &s, &[]));
        assert_eq!(response_status(&t), vec![status::INVALID_FIELD]);
        assert!(t.read_data.is_empty());
    }

    #[test]
    fn the_in_capsule_rule_is_checked() {
        assert!(in_capsule(512, 1024, 1024));
        assert!(!in_capsule(1024, 1024, 1024), "SQE + data beyond one MTU");
        assert!(in_capsule(3584, 4096, 4096));
        assert!(!in_capsule(512, 0, 4096));
        let c = conf(1024);
        // A Write the rule puts in its capsule but sent with a keyed SGL: a host fault.
        let mut t = Target::new(std::slice::from_ref(&c), 8, 7);
        t.icd_max = 512;
        let mut s = write_sqe(6, 0, 1, 0, 512);
        s[35..39].copy_from_slice(&(6u32).to_le_bytes());
        s[39] = SGL_KEYED;
        t.receive(&capsule(&c, 100, &s, &[]));
        assert!(
            t.errors.iter().any(|e| e.contains("not in its capsule")),
            "{:?}",
            t.errors
        );
        // In its capsule although above the limit: a host fault too (the data is taken).
        let mut t = Target::new(std::slice::from_ref(&c), 8, 7);
        t.icd_max = 0;
        t.receive(&capsule(&c, 100, &write_sqe(7, 0, 1, 0, 512), &[1; 512]));
        assert!(!t.errors.is_empty());
        assert_eq!(response_status(&t), vec![0]);
    }
}
