//! Stimulus and checks shared by the `nvme-tcp` properties.

use crate::models::nvme_tcp::{cqe_fields, decode_sent, sqe, ty, Pdu, STATUS_TRANSIENT_TRANSPORT};
use crate::models::nvme_tcp_host::{Completion, HostConfig};
use crate::models::nvme_tcp_target::{pattern, status, Fault, Target, TargetConfig, LBA_BYTES};
use proptest::prelude::*;
use std::collections::BTreeMap;

/// Blocks in each of the two namespaces.
pub const NS_BLOCKS: u64 = 4096;

/// What a command does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Read (02h).
    Read,
    /// Write (01h).
    Write,
    /// Flush (00h): no data.
    Flush,
    /// An opcode the target refuses (Invalid Command Opcode).
    BadOpcode,
    /// A read past the namespace's end (LBA Out of Range).
    OutOfRange,
}

/// One command of a case.
#[derive(Clone, Debug)]
pub struct Cmd {
    /// What it does.
    pub kind: Kind,
    /// Namespace 1 or 2.
    pub nsid: u32,
    /// Blocks, 0's based.
    pub nlb: u16,
    /// Seeds the write data.
    pub seed: u8,
}

/// A generated case.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Header digests asked for.
    pub hdgst: bool,
    /// Data digests asked for.
    pub ddgst: bool,
    /// HPDA asked for.
    pub hpda: u8,
    /// In-capsule data limit of the host (bytes).
    pub icd_max: u32,
    /// Target's MAXH2CDATA.
    pub maxh2cdata: u32,
    /// Target's CPDA.
    pub cpda: u8,
    /// Target's largest C2HData.
    pub max_c2h: u32,
    /// Target's largest R2T.
    pub max_r2t: u32,
    /// Target may use SUCCESS.
    pub use_success: bool,
    /// Commands, in submission order.
    pub cmds: Vec<Cmd>,
    /// Hostile target: the fault and the eligible PDU it breaks.
    pub fault: Option<(Fault, u32)>,
    /// Largest byte-stream chunk per move, each way.
    pub chunk: (u16, u16),
    /// Seeds the target and the scheduling.
    pub seed: u64,
}

fn cmd() -> impl Strategy<Value = Cmd> {
    let nlb = prop_oneof![
        4 => 0u16..8,
        3 => 8u16..64,
        2 => 64u16..256,
        1 => Just(255u16),
    ];
    let kind = prop_oneof![
        8 => Just(Kind::Read),
        8 => Just(Kind::Write),
        1 => Just(Kind::Flush),
        1 => Just(Kind::BadOpcode),
        1 => Just(Kind::OutOfRange),
    ];
    (kind, 1u32..=2, nlb, any::<u8>()).prop_map(|(kind, nsid, nlb, seed)| Cmd {
        kind,
        nsid,
        nlb,
        seed,
    })
}

/// The strategy; `hostile` adds a fault in most cases.
pub fn strategy(hostile: bool, max_cmds: usize) -> BoxedStrategy<Scenario> {
    let fault = if hostile {
        prop::option::weighted(0.9, (prop::sample::select(Fault::ALL.to_vec()), 0u32..10)).boxed()
    } else {
        Just(None).boxed()
    };
    (
        (
            any::<bool>(),
            any::<bool>(),
            prop_oneof![3 => Just(0u8), 1 => 1u8..=3],
        ),
        prop_oneof![Just(0u32), Just(512), Just(4096), Just(8192)],
        prop_oneof![
            Just(4096u32),
            Just(8192),
            (1024u32..4096).prop_map(|x| x * 4)
        ],
        prop_oneof![3 => Just(0u8), 1 => 1u8..=3],
        prop_oneof![1u32..600, 600u32..9000, 9000u32..140_000],
        prop_oneof![1u32..600, 600u32..9000, 9000u32..140_000],
        any::<bool>(),
        prop::collection::vec(cmd(), 1..max_cmds),
        fault,
        (1u16..3000, 1u16..3000),
        any::<u64>(),
    )
        .prop_map(
            |(
                (hdgst, ddgst, hpda),
                icd_max,
                maxh2cdata,
                cpda,
                max_c2h,
                max_r2t,
                use_success,
                cmds,
                fault,
                chunk,
                seed,
            )| {
                let fault = fault.map(|(f, at)| {
                    if f == Fault::IcRespDigest && hdgst && ddgst {
                        (Fault::IcRespPfv, at)
                    } else {
                        (f, at)
                    }
                });
                Scenario {
                    hdgst,
                    ddgst,
                    hpda,
                    icd_max,
                    maxh2cdata,
                    cpda,
                    max_c2h,
                    max_r2t,
                    use_success,
                    cmds,
                    fault,
                    chunk,
                    seed,
                }
            },
        )
        .boxed()
}

/// A command as submitted: the SQE (PRP pointers, as the front end fetched it), write data.
#[derive(Clone, Debug)]
pub struct Submitted {
    /// The SQE.
    pub sqe: [u8; 64],
    /// Write data (empty otherwise).
    pub data: Vec<u8>,
    /// What it does.
    pub kind: Kind,
    /// Namespace byte offset of its data.
    pub ns_offset: usize,
    /// Data length.
    pub len: usize,
}

impl Scenario {
    /// The host configuration.
    pub fn host(&self) -> HostConfig {
        HostConfig {
            hdgst: self.hdgst,
            ddgst: self.ddgst,
            hpda: self.hpda,
            icd_max: self.icd_max,
            lba_bytes: LBA_BYTES as u32,
            max_plen: u32::MAX,
        }
    }

    /// The target, answering with a command-specific DW0 in its CapsuleResps (`CID << 8 ^` a
    /// tag from the seed, high bits set), so that the host is checked to pass DW0 through.
    pub fn new_target(&self) -> Target {
        let mut t = Target::new(self.target());
        t.dw0_tag = Some((self.seed >> 8) as u32 | 1 << 31);
        t
    }

    /// The target configuration.
    pub fn target(&self) -> TargetConfig {
        TargetConfig {
            namespaces: vec![NS_BLOCKS, NS_BLOCKS],
            maxh2cdata: self.maxh2cdata,
            cpda: self.cpda,
            max_c2h: self.max_c2h,
            max_r2t: self.max_r2t,
            use_success: self.use_success,
            full_c2h: false,
            icd_max: self.icd_max,
            seed: self.seed,
            fault: self.fault,
        }
    }

    /// The commands as submitted: CIDs unique (below 8000h, so a hostile target's wrong CCCIDs,
    /// 8000h and up, never name one), LBA ranges disjoint so any order of execution gives one
    /// answer.
    pub fn submitted(&self) -> Vec<Submitted> {
        let mut cursor = [0u64; 2];
        self.cmds
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let cid = (i as u16).wrapping_mul(37) & 0x7fff;
                let blocks = u64::from(c.nlb) + 1;
                let ns = c.nsid as usize - 1;
                let (opc, slba) = match c.kind {
                    Kind::Read | Kind::Write => {
                        if cursor[ns] + blocks > NS_BLOCKS {
                            cursor[ns] = 0;
                        }
                        let s = cursor[ns];
                        cursor[ns] += blocks + u64::from(c.seed % 3);
                        (if c.kind == Kind::Read { 0x02 } else { 0x01 }, s)
                    }
                    Kind::Flush => (0x00, 0),
                    Kind::BadOpcode => (0x7c, 0),
                    Kind::OutOfRange => (0x02, NS_BLOCKS - blocks / 2),
                };
                let s = sqe::rw(opc, cid, c.nsid, slba, c.nlb, 0x1000 * (i as u64 + 1), 0);
                let len = match c.kind {
                    Kind::Read | Kind::Write | Kind::OutOfRange => blocks as usize * LBA_BYTES,
                    _ => 0,
                };
                let data = if c.kind == Kind::Write {
                    (0..len)
                        .map(|k| (k as u8).wrapping_mul(c.seed | 1) ^ (i as u8))
                        .collect()
                } else {
                    Vec::new()
                };
                Submitted {
                    sqe: s,
                    data,
                    kind: c.kind,
                    ns_offset: slba as usize * LBA_BYTES,
                    len,
                }
            })
            .collect()
    }
}

/// What the host side did in a run.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Completions, in order.
    pub completions: Vec<Completion>,
    /// Host-memory writes of read data: (CID, offset in the command's data, bytes).
    pub writes: Vec<(u16, u32, Vec<u8>)>,
}

/// Checks an outcome against the target's view of the run. `target` must have received every
/// byte the host sent.
pub fn check(
    sc: &Scenario,
    subs: &[Submitted],
    out: &Outcome,
    target: &Target,
) -> Result<(), String> {
    if !target.violations.is_empty() {
        return Err(format!(
            "the target found host faults: {:?}",
            target.violations
        ));
    }
    if target.bytes_after_term > 0 {
        return Err(format!(
            "the host sent {} bytes after its TermReq",
            target.bytes_after_term
        ));
    }
    let (by_cid, done) = once_each(subs, out, "")?;
    // Every byte written to host memory belongs to an issued read, inside its data, and is the
    // namespace's byte there.
    for (cid, off, bytes) in &out.writes {
        let s = by_cid
            .get(cid)
            .ok_or_else(|| format!("host memory written for CID {cid:#x}, never submitted"))?;
        if !matches!(s.kind, Kind::Read) || *off as usize + bytes.len() > s.len {
            return Err(format!(
                "host memory written for CID {cid:#x} ({:?}, {} bytes) at {off}+{}",
                s.kind,
                s.len,
                bytes.len()
            ));
        }
        let ns = sqe::nsid(&s.sqe);
        for (k, b) in bytes.iter().enumerate() {
            let p = s.ns_offset + *off as usize + k;
            let want = pattern(ns, (p / LBA_BYTES) as u64, p % LBA_BYTES);
            if *b != want {
                return Err(format!(
                    "CID {cid:#x}: host memory byte {} is {b:#04x}, the namespace has {want:#04x}",
                    *off as usize + k
                ));
            }
        }
    }
    // No byte of a C2HData that failed its data digest reached host memory.
    for (cid, lo, hi) in bad_digest_ranges(target) {
        for (c, off, bytes) in &out.writes {
            if *c == cid && *off < hi && off + bytes.len() as u32 > lo {
                return Err(format!(
                    "CID {cid:#x}: host memory written at {off}+{} from a C2HData whose data digest failed ({lo}..{hi})",
                    bytes.len()
                ));
            }
        }
    }
    let fatal = target.committed.filter(|(f, _, _)| *f != Fault::DataDigest);
    let digest_cmd = target
        .committed
        .filter(|(f, _, _)| *f == Fault::DataDigest)
        .and_then(|(_, _, cid)| cid);
    match fatal {
        Some((f, t, _)) => {
            let want = f.expected(t);
            let got = target.term_reqs.first().copied();
            let ok = got.is_some_and(|(fes, fei)| {
                want.iter()
                    .any(|(w, i)| *w == fes && i.is_none_or(|i| i == fei))
            });
            if !ok || target.term_reqs.len() != 1 {
                return Err(format!(
                    "after fault {f:?} on a PDU of type {t:#04x} the host sent TermReqs {:x?}, expected one of {want:x?}",
                    target.term_reqs
                ));
            }
            ended(&done, &by_cid, out, target, &format!("fault {f:?}"))?;
        }
        None => {
            if !target.term_reqs.is_empty() {
                return Err(format!(
                    "the host sent TermReqs {:x?} to a well-behaved target",
                    target.term_reqs
                ));
            }
            let dw0s = answered_dw0(target);
            for (cid, c) in &done {
                let s = by_cid[cid];
                check_dw0(c, &dw0s)?;
                let want = if digest_cmd == Some(*cid) {
                    STATUS_TRANSIENT_TRANSPORT
                } else {
                    answer(s.kind)
                };
                if c.status != want {
                    return Err(format!(
                        "CID {cid:#x} ({:?}) completed with status {:#x}, expected {want:#x}",
                        s.kind, c.status
                    ));
                }
                if want == 0 {
                    check_success(*cid, s, out, target)?;
                }
            }
        }
    }
    let _ = sc;
    check_namespaces(subs, &out.completions, target)
}

/// DW0 of every CapsuleResp the target sent, by CID (a C2HData with SUCCESS stands for a
/// completion with DW0 0).
fn answered_dw0(target: &Target) -> BTreeMap<u16, u32> {
    target
        .sent
        .iter()
        .filter_map(|b| decode_sent(b).map(|r| r.pdu))
        .filter_map(|p| match p {
            Pdu::CapsuleResp { cqe } => {
                let (cid, _, dw0) = cqe_fields(&cqe);
                Some((cid, dw0))
            }
            _ => None,
        })
        .collect()
}

/// The DW0 a completion must carry: the target's answer's, passed through; a 22h the host
/// made itself (a transport error) carries 0 or, for a command the target had answered,
/// that answer's DW0 (the transport binding does not say which).
fn check_dw0(c: &Completion, dw0s: &BTreeMap<u16, u32>) -> Result<(), String> {
    let theirs = dw0s.get(&c.cid).copied().unwrap_or(0);
    let ok = if c.status == STATUS_TRANSIENT_TRANSPORT {
        c.dw0 == 0 || c.dw0 == theirs
    } else {
        c.dw0 == theirs
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "CID {:#x} completed with status {:#x} and DW0 {:#010x}; the target's answer had DW0 {theirs:#010x}",
            c.cid, c.status, c.dw0
        ))
    }
}

/// The commands the target answered: a CapsuleResp, or a C2HData with SUCCESS, naming them,
/// among the PDUs it sent.
fn answered(target: &Target) -> Vec<u16> {
    target
        .sent
        .iter()
        .filter_map(|b| decode_sent(b).map(|r| r.pdu))
        .filter_map(|p| match p {
            Pdu::CapsuleResp { cqe } => Some(u16::from_le_bytes([cqe[12], cqe[13]])),
            Pdu::Data {
                c2h: true,
                success: true,
                cccid,
                ..
            } => Some(cccid),
            _ => None,
        })
        .collect()
}

/// The rule for a connection that ended (a TermReq either way, or its TCP connection lost):
/// a command the target answered completes with that answer's status or 22h; every other
/// (outstanding, or submitted after the end) with 22h; DW0 as `check_dw0` says (0 for one
/// never answered). A success holds its data.
fn ended(
    done: &BTreeMap<u16, &Completion>,
    by_cid: &BTreeMap<u16, &Submitted>,
    out: &Outcome,
    target: &Target,
    why: &str,
) -> Result<(), String> {
    let answered = answered(target);
    let dw0s = answered_dw0(target);
    for (cid, c) in done {
        let s = by_cid[cid];
        check_dw0(c, &dw0s).map_err(|e| format!("after {why}: {e}"))?;
        let want = answer(s.kind);
        let ok = if answered.contains(cid) {
            c.status == want || c.status == STATUS_TRANSIENT_TRANSPORT
        } else {
            c.status == STATUS_TRANSIENT_TRANSPORT
        };
        if !ok {
            return Err(format!(
                "after {why}: CID {cid:#x} ({:?}, {}answered by the target) completed with status {:#x} DW0 {:#x}; allowed {:#x}{}",
                s.kind,
                if answered.contains(cid) { "" } else { "not " },
                c.status,
                c.dw0,
                STATUS_TRANSIENT_TRANSPORT,
                if answered.contains(cid) { format!(" or {want:#x}") } else { String::new() }
            ));
        }
        if c.status == 0 {
            check_success(c.cid, s, out, target)?;
        }
    }
    Ok(())
}

/// The commands by CID, and their completions by CID: exactly one completion per command
/// (`when` goes into the error for a command that never completed).
type Once<'a> = (BTreeMap<u16, &'a Submitted>, BTreeMap<u16, &'a Completion>);
fn once_each<'a>(subs: &'a [Submitted], out: &'a Outcome, when: &str) -> Result<Once<'a>, String> {
    let by_cid: BTreeMap<u16, &Submitted> = subs.iter().map(|s| (sqe::cid(&s.sqe), s)).collect();
    let mut done: BTreeMap<u16, &Completion> = BTreeMap::new();
    for c in &out.completions {
        if !by_cid.contains_key(&c.cid) {
            return Err(format!("completion for CID {:#x}, never submitted", c.cid));
        }
        if done.insert(c.cid, c).is_some() {
            return Err(format!("CID {:#x} completed twice", c.cid));
        }
    }
    if done.len() != subs.len() {
        let missing: Vec<u16> = by_cid
            .keys()
            .filter(|k| !done.contains_key(k))
            .copied()
            .collect();
        return Err(format!("commands never completed{when}: CIDs {missing:x?}"));
    }
    Ok((by_cid, done))
}

/// Checks a connection whose TCP connection failed while `target` (stopped at that moment:
/// what it had sent is all it ever sent) served it (`nvme_tcp/mod.rs`, "A lost TCP
/// connection"): exactly one completion per command, as [`ended`] says (22h for every command
/// the target had not answered, outstanding or submitted later); host-memory writes that hold
/// the namespace's bytes only inside Reads (the buffers of failed Reads may hold anything else:
/// `writes` has only the namespace's bytes); the namespaces (a Write that failed may have
/// changed its blocks, no other byte changed). The target must have seen no host fault and no
/// TermReq (the host sends none for a lost connection).
pub fn check_lost(subs: &[Submitted], out: &Outcome, target: &Target) -> Result<(), String> {
    if !target.violations.is_empty() {
        return Err(format!(
            "the target found host faults: {:?}",
            target.violations
        ));
    }
    if !target.term_reqs.is_empty() {
        return Err(format!(
            "the host sent TermReqs {:x?} before its TCP connection was lost",
            target.term_reqs
        ));
    }
    let (by_cid, done) = once_each(subs, out, " after the TCP connection was lost")?;
    for (cid, off, bytes) in &out.writes {
        let s = by_cid
            .get(cid)
            .ok_or_else(|| format!("host memory written for CID {cid:#x}, never submitted"))?;
        if !matches!(s.kind, Kind::Read) || *off as usize + bytes.len() > s.len {
            return Err(format!(
                "host memory written for CID {cid:#x} ({:?}, {} bytes) at {off}+{}",
                s.kind,
                s.len,
                bytes.len()
            ));
        }
    }
    ended(&done, &by_cid, out, target, "the TCP connection was lost")?;
    check_namespaces(subs, &out.completions, target)
}

/// The status the target answers a command of `kind` with.
fn answer(kind: Kind) -> u16 {
    match kind {
        Kind::Read | Kind::Write | Kind::Flush => 0,
        Kind::BadOpcode => status::INVALID_OPCODE,
        Kind::OutOfRange => status::LBA_OUT_OF_RANGE,
    }
}

/// The target's namespaces, byte for byte: the initial pattern, with the data of every write
/// that completed successfully; only the blocks of writes that completed with an error (or not
/// at all) may hold anything.
pub fn check_namespaces(
    subs: &[Submitted],
    completions: &[Completion],
    target: &Target,
) -> Result<(), String> {
    let status: BTreeMap<u16, u16> = completions.iter().map(|c| (c.cid, c.status)).collect();
    for (n, ns) in target.ns.borrow().iter().enumerate() {
        let nsid = n as u32 + 1;
        let mut want: Vec<u8> = (0..ns.len())
            .map(|i| pattern(nsid, (i / LBA_BYTES) as u64, i % LBA_BYTES))
            .collect();
        let mut free = vec![false; ns.len()];
        for s in subs
            .iter()
            .filter(|s| s.kind == Kind::Write && sqe::nsid(&s.sqe) == nsid)
        {
            let range = s.ns_offset..s.ns_offset + s.len;
            if status.get(&sqe::cid(&s.sqe)) == Some(&0) {
                want[range].copy_from_slice(&s.data);
            } else {
                free[range].fill(true);
            }
        }
        if let Some(i) = (0..ns.len()).find(|&i| !free[i] && ns[i] != want[i]) {
            return Err(format!(
                "namespace {nsid} byte {i} (LBA {}) is {:#04x}, expected {:#04x}",
                i / LBA_BYTES,
                ns[i],
                want[i]
            ));
        }
    }
    Ok(())
}

/// The C2HData PDUs the target sent with a wrong data digest, as (CCCID, DATAO, DATAO + DATAL).
pub fn bad_digest_ranges(target: &Target) -> Vec<(u16, u32, u32)> {
    if !target.tx_wire_ddgst() {
        return Vec::new();
    }
    target
        .sent
        .iter()
        .filter(|b| b.len() >= 24 && b[0] == ty::C2H_DATA)
        .filter_map(|b| {
            let le = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
            let (pdo, plen) = (b[3] as usize, le(4) as usize);
            let (datao, datal) = (le(12), le(16));
            let cid = u16::from_le_bytes([b[8], b[9]]);
            let end = pdo + datal as usize;
            if plen != b.len() || end + 4 != b.len() {
                return None;
            }
            let bad = crate::models::nvme_tcp::crc32c(&b[pdo..end]) != le(end);
            bad.then_some((cid, datao, datao + datal))
        })
        .collect()
}

/// A successful command's data: a read covered every byte of its data in host memory; a write's
/// data is in the namespace.
fn check_success(cid: u16, s: &Submitted, out: &Outcome, target: &Target) -> Result<(), String> {
    match s.kind {
        Kind::Read => {
            let mut covered = vec![false; s.len];
            for (c, off, b) in &out.writes {
                if *c == cid {
                    covered[*off as usize..*off as usize + b.len()].fill(true);
                }
            }
            if let Some(k) = covered.iter().position(|c| !c) {
                return Err(format!(
                    "CID {cid:#x}: read completed successfully but byte {k} of {} never reached host memory",
                    s.len
                ));
            }
        }
        Kind::Write => {
            let all = target.ns.borrow();
            let ns = &all[sqe::nsid(&s.sqe) as usize - 1];
            if ns[s.ns_offset..s.ns_offset + s.len] != s.data[..] {
                return Err(format!(
                    "CID {cid:#x}: write completed successfully but the namespace does not hold its data"
                ));
            }
        }
        _ => {}
    }
    Ok(())
}

/// PDU types a host may send, for counters.
pub const HOST_TYPES: [u8; 4] = [ty::IC_REQ, ty::H2C_TERM_REQ, ty::CAPSULE_CMD, ty::H2C_DATA];
