//! Golden model of the far end: an NVMe/TCP target (controller) over one connection's byte
//! streams, with RAM-backed namespaces. It answers the host as a real target may: random
//! C2HData sizes, R2T sizes and orders across commands, the SUCCESS flag when allowed, and it
//! checks every PDU the host sends against the specification (a host fault is recorded in
//! [`Target::violations`]). In hostile mode it breaks one PDU it sends in a chosen way
//! ([`Fault`]), and says what the host must answer ([`Fault::expected`]).

use super::nvme_tcp::{
    cqe, fes, sqe, ty, Expect, Framer, Pdu, Wire, SGL_IN_CAPSULE, SGL_TRANSPORT,
};
use crate::rng::Rng;
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

/// Logical block size of every namespace.
pub const LBA_BYTES: usize = 512;

/// NVMe statuses the target answers with.
pub mod status {
    /// Invalid Field in Command.
    pub const INVALID_FIELD: u16 = 0x02;
    /// Invalid Namespace or Format.
    pub const INVALID_NAMESPACE: u16 = 0x0b;
    /// Data SGL Length Invalid.
    pub const SGL_LENGTH_INVALID: u16 = 0x0f;
    /// LBA Out of Range.
    pub const LBA_OUT_OF_RANGE: u16 = 0x80;
    /// Invalid Command Opcode.
    pub const INVALID_OPCODE: u16 = 0x01;
}

/// A deliberate protocol fault of a hostile target, applied to one PDU it sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// ICResp with PFV 1.
    IcRespPfv,
    /// ICResp with MAXH2CDATA below 4096.
    IcRespMaxh2cdata,
    /// ICResp enabling a digest the host did not ask for (when it asked for none).
    IcRespDigest,
    /// ICResp with CPDA above 31.
    IcRespCpda,
    /// A PDU with an unknown type byte.
    BadType,
    /// A PDU whose HLEN is wrong for its type.
    BadHlen,
    /// A PDU whose PLEN is shorter than its header.
    BadPlen,
    /// A C2HData whose DATAO + DATAL runs past the command's data.
    DataoOutOfRange,
    /// An R2T whose R2TO + R2TL runs past the command's data.
    R2tOutOfRange,
    /// A CapsuleResp, C2HData or R2T naming a command that is not outstanding.
    WrongCccid,
    /// An R2T naming a read command.
    R2tForRead,
    /// A PDU whose header digest is wrong.
    HeaderDigest,
    /// A C2HData whose data digest is wrong (not fatal: the command completes with 22h).
    DataDigest,
    /// An R2T (stretched to cover at least 8 KiB) followed at once by a second R2T of the same
    /// command, while the host still answers the first (MAXR2T 0 allows one). Not in
    /// [`Fault::ALL`]: a host that answers R2Ts instantly (the reference model) never has one
    /// pending.
    R2tWhilePending,
    /// With data digests on, a C2HData carrying more than the host's hold buffer (the
    /// argument, in bytes): legal for a target, beyond what a host that holds a PDU whole to
    /// check its digest can take (the chip's limit, `nvme_tcp/mod.rs`: 05h). The PDU is sent
    /// as it is; only the set-up (`max_c2h` above the hold) makes it. Not in [`Fault::ALL`].
    C2hOverHold(u32),
}

impl Fault {
    /// Every fault.
    pub const ALL: [Fault; 13] = [
        Fault::IcRespPfv,
        Fault::IcRespMaxh2cdata,
        Fault::IcRespDigest,
        Fault::IcRespCpda,
        Fault::BadType,
        Fault::BadHlen,
        Fault::BadPlen,
        Fault::DataoOutOfRange,
        Fault::R2tOutOfRange,
        Fault::WrongCccid,
        Fault::R2tForRead,
        Fault::HeaderDigest,
        Fault::DataDigest,
    ];

    /// The host's accepted answers as (FES, FEI) pairs (FEI `None`: any); empty for a fault
    /// the host must not end the connection for.
    pub fn expected(&self, t: u8) -> Vec<(u16, Option<u32>)> {
        let cid_fei = if t == ty::CAPSULE_RESP { 20 } else { 8 };
        match self {
            Fault::IcRespPfv => vec![(fes::UNSUPPORTED_PARAMETER, Some(8))],
            Fault::IcRespCpda => vec![(fes::UNSUPPORTED_PARAMETER, Some(10))],
            Fault::IcRespDigest => vec![(fes::UNSUPPORTED_PARAMETER, Some(11))],
            Fault::IcRespMaxh2cdata => vec![
                (fes::UNSUPPORTED_PARAMETER, Some(12)),
                (fes::INVALID_HEADER_FIELD, Some(12)),
            ],
            Fault::BadType => vec![(fes::INVALID_HEADER_FIELD, Some(0))],
            Fault::BadHlen => vec![(fes::INVALID_HEADER_FIELD, Some(2))],
            Fault::BadPlen => vec![(fes::INVALID_HEADER_FIELD, Some(4))],
            Fault::DataoOutOfRange | Fault::R2tOutOfRange => vec![(fes::OUT_OF_RANGE, None)],
            Fault::R2tWhilePending => vec![(fes::SEQUENCE_ERROR, None)],
            Fault::WrongCccid | Fault::R2tForRead => vec![
                (fes::INVALID_HEADER_FIELD, Some(cid_fei)),
                (fes::SEQUENCE_ERROR, None),
            ],
            Fault::HeaderDigest => vec![(fes::HEADER_DIGEST, None)],
            Fault::C2hOverHold(_) => vec![(fes::LIMIT_EXCEEDED, None)],
            Fault::DataDigest => vec![],
        }
    }

    fn on_icresp(&self) -> bool {
        matches!(
            self,
            Fault::IcRespPfv | Fault::IcRespMaxh2cdata | Fault::IcRespDigest | Fault::IcRespCpda
        )
    }
}

/// How the target behaves.
#[derive(Clone, Debug)]
pub struct TargetConfig {
    /// Namespaces 1..=n, blocks each.
    pub namespaces: Vec<u64>,
    /// MAXH2CDATA announced in the ICResp (a multiple of 4, at least 4096).
    pub maxh2cdata: u32,
    /// CPDA announced (0 to 31).
    pub cpda: u8,
    /// Largest C2HData PDU data length it sends.
    pub max_c2h: u32,
    /// Largest R2TL it asks for.
    pub max_r2t: u32,
    /// May end a successful read with SUCCESS instead of a CapsuleResp.
    pub use_success: bool,
    /// Sends every C2HData of exactly `max_c2h` bytes and every R2T of exactly `max_r2t` (a
    /// command's last ones shorter), in data order, instead of random sizes and orders (for
    /// benchmarks).
    pub full_c2h: bool,
    /// Largest in-capsule data it accepts (IOCCSZ - 64 bytes).
    pub icd_max: u32,
    /// Seeds the random choices (sizes, orders).
    pub seed: u64,
    /// A fault to commit, on the `fault_at`-th eligible PDU (0 first), if any.
    pub fault: Option<(Fault, u32)>,
}

/// The initial contents of a namespace block: a pattern of (namespace, LBA, byte).
pub fn pattern(nsid: u32, lba: u64, i: usize) -> u8 {
    (lba.wrapping_mul(131) ^ (u64::from(nsid) << 5) ^ (i as u64).wrapping_mul(7)) as u8
}

#[derive(Clone, Debug)]
struct TCmd {
    len: u32,
    nsid: u32,
    offset: u64,
    /// Work left, in order.
    todo: VecDeque<Step>,
    /// Waiting for H2CData of an R2T: (ttag, r2to, r2tl, received).
    r2t: Option<(u16, u32, u32, u32)>,
}

#[derive(Clone, Debug)]
enum Step {
    C2h {
        off: u32,
        n: u32,
        last: bool,
        success: bool,
    },
    R2t {
        off: u32,
        n: u32,
    },
    Resp {
        status: u16,
    },
}

/// The target end of one connection.
pub struct Target {
    cfg: TargetConfig,
    rng: Rng,
    framer: Framer,
    connected: bool,
    /// The connection is over (TermReq sent or received, or a fault committed and answered).
    pub dead: bool,
    rx_wire: Wire,
    tx_wire: Wire,
    /// Namespace contents; targets of one subsystem share them ([`Target::share_namespaces`]).
    pub ns: Rc<RefCell<Vec<Vec<u8>>>>,
    cmds: BTreeMap<u16, TCmd>,
    out: VecDeque<u8>,
    next_ttag: u16,
    /// Host protocol violations found.
    pub violations: Vec<String>,
    /// TermReqs received from the host: (FES, FEI).
    pub term_reqs: Vec<(u16, u32)>,
    /// Bytes received after the host's TermReq.
    pub bytes_after_term: usize,
    eligible: u32,
    /// The fault committed: (fault, type of the PDU it was committed on, command it touched).
    pub committed: Option<(Fault, u8, Option<u16>)>,
    /// Every PDU sent, in order, as encoded (for scoreboards).
    pub sent: Vec<Vec<u8>>,
    /// Every PDU received from the host, decoded.
    pub received: Vec<Pdu>,
    /// The host asked for these digests in its ICReq.
    asked: (bool, bool),
    /// DW0 of its CapsuleResps is `CID << 8 ^ tag` (`None`: 0), so a scoreboard can tell
    /// which target answered.
    pub dw0_tag: Option<u32>,
}

impl Target {
    /// Serves `other`'s namespaces from now on (the connections of one subsystem see one
    /// namespace, as a real target's queues do).
    pub fn share_namespaces(&mut self, other: &Target) {
        self.ns = other.ns.clone();
    }

    /// A target waiting for an ICReq.
    pub fn new(cfg: TargetConfig) -> Target {
        let ns = cfg
            .namespaces
            .iter()
            .enumerate()
            .map(|(n, &blocks)| {
                (0..blocks as usize * LBA_BYTES)
                    .map(|i| pattern(n as u32 + 1, (i / LBA_BYTES) as u64, i % LBA_BYTES))
                    .collect()
            })
            .collect();
        let ns = Rc::new(RefCell::new(ns));
        Target {
            rng: Rng::new(cfg.seed),
            cfg,
            framer: Framer::default(),
            connected: false,
            dead: false,
            rx_wire: Wire::default(),
            tx_wire: Wire::default(),
            ns,
            cmds: BTreeMap::new(),
            out: VecDeque::new(),
            next_ttag: 1,
            violations: Vec::new(),
            term_reqs: Vec::new(),
            bytes_after_term: 0,
            eligible: 0,
            committed: None,
            sent: Vec::new(),
            received: Vec::new(),
            asked: (false, false),
            dw0_tag: None,
        }
    }

    fn expect(&self) -> Expect {
        Expect {
            connected: self.connected,
            wire: self.rx_wire,
            host: false,
            max_plen: u32::MAX,
        }
    }

    /// Bytes waiting to go to the host.
    pub fn pending(&self) -> usize {
        self.out.len()
    }

    /// Takes up to `max` bytes of the stream to the host.
    pub fn take(&mut self, max: usize) -> Vec<u8> {
        let n = max.min(self.out.len());
        self.out.drain(..n).collect()
    }

    /// Whether the target has work it can do now (a PDU to send).
    pub fn has_work(&self) -> bool {
        !self.dead
            && self
                .cmds
                .values()
                .any(|c| c.r2t.is_none() && !c.todo.is_empty())
    }

    /// Commands the target holds.
    pub fn outstanding(&self) -> usize {
        self.cmds.len()
    }

    fn violation(&mut self, why: String) {
        self.violations.push(why);
    }

    /// Takes bytes from the host.
    pub fn receive(&mut self, bytes: &[u8]) {
        if !self.term_reqs.is_empty() {
            self.bytes_after_term += bytes.len();
            return;
        }
        self.framer.push(bytes);
        loop {
            let e = self.expect();
            match self.framer.next(&e) {
                None => break,
                Some(Err((f, _))) => {
                    let committed = self.committed.is_some();
                    self.violation(format!("host sent a bad PDU: {}", f.why));
                    if committed {
                        // Not the host's fault if the stream was already being torn down.
                        self.violations.pop();
                    }
                    self.dead = true;
                    break;
                }
                Some(Ok(r)) => {
                    if r.data_digest_error {
                        self.violation("host sent a PDU with a bad data digest".into());
                    }
                    self.received.push(r.pdu.clone());
                    self.handle(r.pdu);
                    if !self.term_reqs.is_empty() {
                        self.bytes_after_term += self.framer.pending();
                        break;
                    }
                }
            }
        }
    }

    fn handle(&mut self, pdu: Pdu) {
        match pdu {
            Pdu::IcReq {
                pfv,
                hpda,
                hdgst,
                ddgst,
                maxr2t,
            } => {
                if pfv != 0 || hpda > 31 {
                    self.violation(format!("ICReq PFV {pfv} HPDA {hpda}"));
                }
                let _ = maxr2t;
                self.asked = (hdgst, ddgst);
                self.connected = true;
                self.rx_wire = Wire {
                    hdgst,
                    ddgst,
                    pda: self.cfg.cpda,
                };
                self.tx_wire = Wire {
                    hdgst,
                    ddgst,
                    pda: hpda,
                };
                let mut resp = Pdu::IcResp {
                    pfv: 0,
                    cpda: self.cfg.cpda,
                    hdgst,
                    ddgst,
                    maxh2cdata: self.cfg.maxh2cdata,
                };
                if let Some((f, _)) = self.cfg.fault {
                    if f.on_icresp() {
                        if let Pdu::IcResp {
                            pfv,
                            cpda,
                            hdgst: h,
                            ddgst: d,
                            maxh2cdata,
                        } = &mut resp
                        {
                            match f {
                                Fault::IcRespPfv => *pfv = 1,
                                Fault::IcRespCpda => *cpda = 32 + (self.rng.below(200) as u8),
                                Fault::IcRespMaxh2cdata => {
                                    *maxh2cdata = 4 * self.rng.below(1024) as u32
                                }
                                Fault::IcRespDigest => {
                                    assert!(
                                        !(hdgst && ddgst),
                                        "IcRespDigest needs a digest the host did not ask for"
                                    );
                                    if hdgst {
                                        *d = true;
                                    } else {
                                        *h = true;
                                    }
                                }
                                _ => unreachable!(),
                            }
                        }
                        self.committed = Some((f, ty::IC_RESP, None));
                    }
                }
                self.send_pdu(resp);
            }
            Pdu::TermReq { c2h, fes, fei, .. } => {
                if c2h {
                    self.violation("host sent a C2HTermReq".into());
                }
                self.term_reqs.push((fes, fei));
                self.dead = true;
            }
            Pdu::CapsuleCmd { sqe: s, data } => self.command(s, data),
            Pdu::Data {
                c2h,
                cccid,
                ttag,
                datao,
                data,
                last,
                success,
            } => {
                if c2h || success {
                    self.violation("host sent C2HData or SUCCESS".into());
                    return;
                }
                self.h2c_data(cccid, ttag, datao, data, last);
            }
            other => self.violation(format!("host sent {other:?}")),
        }
    }

    fn command(&mut self, s: [u8; 64], data: Vec<u8>) {
        let cid = sqe::cid(&s);
        if self.cmds.contains_key(&cid) {
            self.violation(format!("host reused CCCID {cid} while it was outstanding"));
            return;
        }
        let (addr, sgl_len, id) = sqe::sgl(&s);
        if sqe::psdt(&s) != 1 {
            self.violation(format!("command {cid}: PSDT {} is not SGL", sqe::psdt(&s)));
        }
        let opc = sqe::opc(&s);
        let nsid = sqe::nsid(&s);
        let mut c = TCmd {
            len: 0,
            nsid,
            offset: 0,
            todo: VecDeque::new(),
            r2t: None,
        };
        let fail = |c: &mut TCmd, st: u16| {
            c.todo.clear();
            c.todo.push_back(Step::Resp { status: st });
        };
        match opc {
            0x00 => {
                if !data.is_empty() || sgl_len != 0 {
                    self.violation(format!("flush {cid} with data"));
                }
                c.todo.push_back(Step::Resp { status: 0 });
            }
            0x01 | 0x02 => {
                let write = opc == 0x01;
                let blocks = u64::from(sqe::nlb(&s)) + 1;
                let len = blocks as usize * LBA_BYTES;
                c.len = len as u32;
                let slba = sqe::slba(&s);
                if id == SGL_IN_CAPSULE && write {
                    if addr != 0 || sgl_len as usize != data.len() {
                        self.violation(format!(
                            "command {cid}: in-capsule SGL offset {addr} length {sgl_len} with {} bytes",
                            data.len()
                        ));
                    }
                    if data.len() > self.cfg.icd_max as usize {
                        self.violation(format!(
                            "command {cid}: {} in-capsule bytes, more than {}",
                            data.len(),
                            self.cfg.icd_max
                        ));
                    }
                } else if id != SGL_TRANSPORT || addr != 0 || !data.is_empty() {
                    self.violation(format!(
                        "command {cid}: SGL identifier {id:#04x} address {addr:#x} with {} in-capsule bytes",
                        data.len()
                    ));
                }
                if sgl_len as usize != len {
                    fail(&mut c, status::SGL_LENGTH_INVALID);
                } else if nsid == 0 || nsid as usize > self.ns.borrow().len() {
                    fail(&mut c, status::INVALID_NAMESPACE);
                } else if slba
                    .checked_add(blocks)
                    .is_none_or(|end| end > self.cfg.namespaces[nsid as usize - 1])
                {
                    fail(&mut c, status::LBA_OUT_OF_RANGE);
                } else {
                    c.offset = slba * LBA_BYTES as u64;
                    if write && id == SGL_IN_CAPSULE {
                        let o = c.offset as usize;
                        self.ns.borrow_mut()[nsid as usize - 1][o..o + len].copy_from_slice(&data);
                        c.todo.push_back(Step::Resp { status: 0 });
                    } else if write {
                        let mut off = 0u32;
                        let mut r2ts = Vec::new();
                        while off < c.len {
                            let n = if self.cfg.full_c2h {
                                self.cfg.max_r2t
                            } else {
                                1 + self.rng.below(u64::from(self.cfg.max_r2t)) as u32
                            }
                            .min(c.len - off);
                            r2ts.push(Step::R2t { off, n });
                            off += n;
                        }
                        // The pieces in a random order: DATAO follows the R2T, not the data.
                        for i in (1..r2ts.len()).rev().filter(|_| !self.cfg.full_c2h) {
                            r2ts.swap(i, self.rng.below(i as u64 + 1) as usize);
                        }
                        c.todo.extend(r2ts);
                        c.todo.push_back(Step::Resp { status: 0 });
                    } else {
                        let mut off = 0u32;
                        while off < c.len {
                            // A fifth of the random pieces are the largest allowed (the
                            // host's limits are tested at their edge).
                            let n = if self.cfg.full_c2h || self.rng.chance(20) {
                                self.cfg.max_c2h
                            } else {
                                1 + self.rng.below(u64::from(self.cfg.max_c2h)) as u32
                            }
                            .min(c.len - off);
                            let last = off + n == c.len;
                            let success = last && self.cfg.use_success && self.rng.chance(50);
                            c.todo.push_back(Step::C2h {
                                off,
                                n,
                                last,
                                success,
                            });
                            off += n;
                        }
                        if !matches!(c.todo.back(), Some(Step::C2h { success: true, .. })) {
                            c.todo.push_back(Step::Resp { status: 0 });
                        }
                    }
                }
            }
            _ => fail(&mut c, status::INVALID_OPCODE),
        }
        self.cmds.insert(cid, c);
    }

    fn h2c_data(&mut self, cccid: u16, ttag: u16, datao: u32, data: Vec<u8>, last: bool) {
        let Some(c) = self.cmds.get_mut(&cccid) else {
            self.violation(format!("H2CData for CCCID {cccid}, not outstanding"));
            return;
        };
        let Some((tag, r2to, r2tl, got)) = c.r2t else {
            self.violation(format!("H2CData for CCCID {cccid} without an R2T"));
            return;
        };
        let mut v = Vec::new();
        if ttag != tag {
            v.push(format!("TTAG {ttag}, the R2T's is {tag}"));
        }
        if datao != r2to + got {
            v.push(format!("DATAO {datao}, expected {}", r2to + got));
        }
        if data.len() as u32 > self.cfg.maxh2cdata {
            v.push(format!(
                "DATAL {} above MAXH2CDATA {}",
                data.len(),
                self.cfg.maxh2cdata
            ));
        }
        let got = got + data.len() as u32;
        if got > r2tl {
            v.push(format!("{got} bytes for an R2T of {r2tl}"));
        }
        if last != (got == r2tl) {
            v.push(format!("LAST_PDU {last} after {got} of {r2tl} bytes"));
        }
        if !v.is_empty() {
            self.violation(format!("H2CData for CCCID {cccid}: {}", v.join("; ")));
            return;
        }
        let o = (c.offset + u64::from(datao)) as usize;
        let ns = c.nsid as usize - 1;
        self.ns.borrow_mut()[ns][o..o + data.len()].copy_from_slice(&data);
        c.r2t = if got == r2tl {
            None
        } else {
            Some((tag, r2to, r2tl, got))
        };
    }

    fn send_pdu(&mut self, pdu: Pdu) {
        let b = pdu.encode(self.tx_wire);
        self.send_raw(b);
    }

    fn send_raw(&mut self, b: Vec<u8>) {
        self.out.extend(b.iter().copied());
        self.sent.push(b);
    }

    /// Sends one PDU of a randomly chosen command that has one ready; false when none has.
    pub fn step(&mut self) -> bool {
        if self.dead
            || self
                .committed
                .is_some_and(|(f, _, _)| f != Fault::DataDigest)
        {
            return false;
        }
        let ready: Vec<u16> = self
            .cmds
            .iter()
            .filter(|(_, c)| c.r2t.is_none() && !c.todo.is_empty())
            .map(|(k, _)| *k)
            .collect();
        if ready.is_empty() {
            return false;
        }
        let cid = ready[self.rng.below(ready.len() as u64) as usize];
        let c = self.cmds.get_mut(&cid).unwrap();
        let step = c.todo.pop_front().unwrap();
        let (len, nsid, offset) = (c.len, c.nsid, c.offset);
        let pdu = match step {
            Step::C2h {
                off,
                n,
                last,
                success,
            } => {
                let o = (offset + u64::from(off)) as usize;
                Pdu::Data {
                    c2h: true,
                    cccid: cid,
                    ttag: 0,
                    datao: off,
                    data: self.ns.borrow()[nsid as usize - 1][o..o + n as usize].to_vec(),
                    last,
                    success,
                }
            }
            Step::R2t { off, n } => {
                let ttag = self.next_ttag;
                self.next_ttag = self.next_ttag.wrapping_add(1).max(1);
                c.r2t = Some((ttag, off, n, 0));
                Pdu::R2t {
                    cccid: cid,
                    ttag,
                    r2to: off,
                    r2tl: n,
                }
            }
            Step::Resp { status } => {
                self.cmds.remove(&cid);
                let dw0 = self.dw0_tag.map_or(0, |t| u32::from(cid) << 8 ^ t);
                Pdu::CapsuleResp {
                    cqe: cqe(dw0, 0, 0, cid, status),
                }
            }
        };
        // A hostile target breaks the `fault_at`-th PDU it can break this way.
        if let Some((f, at)) = self.cfg.fault {
            if self.committed.is_none() && !f.on_icresp() {
                let t = pdu.pdu_type();
                let fits = match f {
                    Fault::DataoOutOfRange | Fault::DataDigest => {
                        t == ty::C2H_DATA && (f != Fault::DataDigest || self.tx_wire.ddgst)
                    }
                    Fault::R2tOutOfRange => t == ty::R2T,
                    Fault::R2tWhilePending => {
                        matches!(pdu, Pdu::R2t { r2to, .. } if len - r2to >= 8192)
                    }
                    Fault::R2tForRead => {
                        t == ty::C2H_DATA && !self.cmds.get(&cid).is_some_and(|c| c.todo.is_empty())
                    }
                    Fault::HeaderDigest => self.tx_wire.hdgst,
                    Fault::C2hOverHold(hold) => {
                        matches!(&pdu, Pdu::Data { data, .. } if data.len() > hold as usize)
                            && self.tx_wire.ddgst
                    }
                    _ => true,
                };
                if fits {
                    if self.eligible == at {
                        return self.commit(f, pdu, cid, len);
                    }
                    self.eligible += 1;
                }
            }
        }
        self.send_pdu(pdu);
        true
    }

    fn commit(&mut self, f: Fault, mut pdu: Pdu, cid: u16, len: u32) -> bool {
        let t = pdu.pdu_type();
        self.committed = Some((f, t, Some(cid)));
        let b = match f {
            Fault::DataoOutOfRange => {
                if let Pdu::Data { datao, data, .. } = &mut pdu {
                    *datao = len - data.len() as u32 + 1 + self.rng.below(4096) as u32;
                }
                pdu.encode(self.tx_wire)
            }
            Fault::R2tOutOfRange => {
                if let Pdu::R2t { r2to, r2tl, .. } = &mut pdu {
                    *r2tl = len - *r2to + 1 + self.rng.below(4096) as u32;
                }
                pdu.encode(self.tx_wire)
            }
            Fault::WrongCccid => {
                let mut other = cid;
                while self.cmds.contains_key(&other) || other == cid {
                    other = other.wrapping_add(1 + self.rng.below(1000) as u16);
                }
                match &mut pdu {
                    Pdu::Data { cccid, .. } | Pdu::R2t { cccid, .. } => *cccid = other,
                    Pdu::CapsuleResp { cqe } => cqe[12..14].copy_from_slice(&other.to_le_bytes()),
                    _ => {}
                }
                pdu.encode(self.tx_wire)
            }
            Fault::R2tWhilePending => {
                if let Pdu::R2t {
                    r2to, r2tl, ttag, ..
                } = &mut pdu
                {
                    *r2tl = len - *r2to;
                    self.cmds.get_mut(&cid).unwrap().r2t = Some((*ttag, *r2to, *r2tl, 0));
                }
                let first = pdu.encode(self.tx_wire);
                self.send_raw(first);
                Pdu::R2t {
                    cccid: cid,
                    ttag: self.next_ttag,
                    r2to: 0,
                    r2tl: len.min(512),
                }
                .encode(self.tx_wire)
            }
            Fault::R2tForRead => Pdu::R2t {
                cccid: cid,
                ttag: 7,
                r2to: 0,
                r2tl: len.min(512),
            }
            .encode(self.tx_wire),
            Fault::BadType => {
                let mut b = pdu.encode(self.tx_wire);
                b[0] = [0x08, 0x0a, 0x0b, 0x10, 0x7f, 0xff, 0x00, 0x02, 0x04, 0x06]
                    [self.rng.below(10) as usize];
                b
            }
            Fault::BadHlen => {
                let mut b = pdu.encode(self.tx_wire);
                b[2] = b[2].wrapping_add(4 + self.rng.below(100) as u8);
                b
            }
            Fault::BadPlen => {
                let mut b = pdu.encode(self.tx_wire);
                let plen = self.rng.below(u64::from(b[2])) as u32;
                b[4..8].copy_from_slice(&plen.to_le_bytes());
                b
            }
            Fault::HeaderDigest => {
                let mut b = pdu.encode(self.tx_wire);
                let hlen = b[2] as usize;
                b[hlen + self.rng.below(4) as usize] ^= 1 << self.rng.below(8);
                b
            }
            Fault::C2hOverHold(_) => pdu.encode(self.tx_wire),
            Fault::DataDigest => {
                let mut b = pdu.encode(self.tx_wire);
                let n = b.len();
                b[n - 1 - self.rng.below(4) as usize] ^= 1 << self.rng.below(8);
                self.send_raw(b);
                return true;
            }
            _ => unreachable!("ICResp faults are committed in the ICResp"),
        };
        self.send_raw(b);
        true
    }

    /// Whether the PDUs the target sends carry data digests.
    pub fn tx_wire_ddgst(&self) -> bool {
        self.tx_wire.ddgst
    }

    /// The CCCIDs the target still holds (commands not yet answered).
    pub fn held(&self) -> Vec<u16> {
        self.cmds.keys().copied().collect()
    }
}
