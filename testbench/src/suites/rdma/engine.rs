//! Property `rdma`: the RoCEv2 engine (`roce_*`) as the host side of NVMe/RDMA, against the
//! target model over a link that drops, duplicates, reorders and corrupts the target's frames
//! at chosen rates, and drops, duplicates, reorders and corrupts the engine's (which it sends
//! again, go-back-N, on a NAK 60h or its retransmit timer; one QP may lose every frame, so the
//! engine must give up after its retry limit), with hostile frames mixed in (wrong QPN, wrong P_Key, an RDMA WRITE, another UDP port, a
//! truncated frame, a malformed response capsule that ends its QP, RDMA READs with a bad key,
//! a Read's key or one byte out of window), random PSNs near the 24-bit wrap, random idle
//! cycles and backpressure on every stream. Writes move their data by RDMA READ (the target
//! splits each into one to three READs and re-issues lost ones), some through an SGL of a
//! reserved descriptor type (the DMA engine's 11h: zeros go out, the command completes 11h).
//!
//! Checked: every frame the engine sends decodes (IPv4 checksum, ICRC) with the QP's
//! addresses, QPNs and P_Key; capsules carry consecutive PSNs and the SQE with its keyed SGL;
//! every ACK/NAK is one the reference receiver asked for, in order, and none overtakes a READ
//! response before it; every READ response is a packet of a READ the reference accepted with
//! the host buffer's bytes (nothing outside a Write's data leaves); every command completes
//! exactly once, with the target's status and DW0 when its response capsule was accepted, else
//! with 22h and only on a QP that went to error or an SQ id without a QP; the target executed
//! each command at most once and found nothing wrong; every counter equals the reference's;
//! when a Read's successful completion leaves `io_cpl`, host memory already holds its data and
//! the memory slave owes no write response for its buffer (a completion never overtakes it).

use crate::drivers::axi_mem::{AxiMemConfig, AxiMemSlave, Memory};
use crate::drivers::axil::{Axil, AxilConfig, Mmio};
use crate::drivers::axis::{AxisSink, AxisSource};
use crate::drivers::Clocked;
use crate::models::roce::{icrc, ip_checksum, op, Packet};
use crate::models::roce_target::{HostTos, Hostile, QpConf, Target};
use crate::pcap::Pcap;
use crate::prop::Property;
use crate::rng::Rng;
use crate::rtl::regs::roce_csr;
use crate::rtl::RoceTop as Top;
use crate::sim::{Component, Signal, Sim};
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use std::collections::{BTreeMap, VecDeque};
use std::path::Path;

/// Namespace size of the target, blocks.
pub(super) const BLOCKS: u64 = 64;
/// The engine's retransmit timeout in the property, cycles.
const RETRY_TIMEOUT: u32 = 3000;

/// One command of the stimulus.
#[derive(Clone, Debug)]
pub struct Cmd {
    /// SQ id selector: 0 -> an SQ id without a QP, else QP (sel - 1) % qps.
    pub sq: u8,
    /// 0 Flush, 1 Write Zeroes, 2 Read past the end, 3 an unknown opcode, 4 Write Zeroes on
    /// NSID 2, 5 a Write inside the namespace (data by RDMA READ), 6 and more a Read inside
    /// the namespace (data by RDMA WRITE); 8 and 9 (benches) a Read or a Write of `nlb` + 1
    /// blocks at `slba`.
    pub kind: u8,
    pub slba: u64,
    pub nlb: u16,
}

/// Link fault rates (percent per frame): target to host, and host to target (`host_*`).
#[derive(Clone, Debug)]
pub struct Link {
    pub drop: u8,
    pub dup: u8,
    pub reorder: u8,
    pub corrupt: u8,
    pub truncate: u8,
    pub host_dup: u8,
    pub host_drop: u8,
    pub host_reorder: u8,
    pub host_corrupt: u8,
    /// Every host frame of this QP is lost (QP index + 1; 0: none): its retry limit is 2, so
    /// the engine must give up and complete its commands with 22h.
    pub blackhole: u8,
}

/// The stimulus.
#[derive(Clone, Debug)]
pub struct Input {
    pub cmds: Vec<Cmd>,
    pub link: Link,
    /// Hostile frames: (after this many target frames, QP selector, kind).
    pub hostile: Vec<(u8, u8, u8)>,
    /// PSN bases (both directions, per QP), near the 24-bit wrap when large.
    pub psn: [u32; 4],
    /// Idle / backpressure percentages: rx, tx, commands, completions.
    pub idle: [u8; 4],
    /// Path MTU choice per QP (the code is 1 + this modulo the configured MTU's code).
    pub mtu: [u8; 4],
    /// Host memory stalls (percent of cycles AW/W/B held back).
    pub mem_stall: u8,
    pub seed: u64,
}

fn hostile_kind(k: u8) -> Hostile {
    // ReadInCapsule three times as often: it needs an in-capsule Write in slot 0 to matter.
    match k % 14 {
        11..=13 => Hostile::ReadInCapsule,
        8 => Hostile::ReadBadKey,
        9 => Hostile::ReadNotWrite,
        10 => Hostile::ReadOutOfWindow,
        0 => Hostile::WrongQpn,
        1 => Hostile::WrongPkey,
        2 => Hostile::WriteBadKey,
        3 => Hostile::OtherPort,
        4 => Hostile::BadCapsule,
        5 => Hostile::WriteOutOfWindow,
        6 => Hostile::WriteNotRead,
        _ => Hostile::WriteMiddle,
    }
}

/// What the engine must do with a received frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cat {
    Other,
    Malformed,
    Icrc,
    Opcode,
    Qp,
    Pass(usize),
}

#[derive(Clone, Debug)]
struct RefQp {
    qpn: u32,
    pkey: u16,
    epsn: u32,
    nak_sent: bool,
    msn: u32,
    err: bool,
    mtu: usize,
    /// The RDMA WRITE message in progress: (key, next offset, bytes left).
    wr: Option<(u32, u32, u32)>,
}

/// An outstanding command's keyed window as the engine made it: (QP, CID, opcode, length).
type Window = (usize, u16, u8, u32);

/// The reference receiver: the engine's rules (hdl-gen/src/roce/mod.rs) over the frames it
/// was given, in order.
struct RefChip {
    qps: Vec<RefQp>,
    counts: BTreeMap<&'static str, u32>,
    /// ACK/NAK requests per QP: (syndrome, PSN, MSN).
    acks: Vec<Vec<(u8, u32, u32)>>,
    /// Completions from accepted response capsules: (QP, CID, status, DW0).
    cpls: Vec<(usize, u16, u16, u32)>,
    /// Keys of the capsules the engine sent, until their command completes.
    keys: BTreeMap<u32, Window>,
    /// Accepted WRITE payloads: (QP, CID, offset, bytes).
    writes: Vec<(usize, u16, u32, Vec<u8>)>,
    /// Every key the engine sent (kept after completion).
    windows: BTreeMap<u32, Window>,
    /// READ requests the engine must answer (in order or replayed): (QP, PSN, key, VA, length).
    reads: Vec<(usize, u32, u32, u64, u32)>,
    /// For each of `reads`, the number of ACK requests of its QP before it.
    read_at: Vec<usize>,
}

fn is_write(opc: u8) -> bool {
    matches!(
        opc,
        op::WRITE_FIRST | op::WRITE_MIDDLE | op::WRITE_LAST | op::WRITE_ONLY
    )
}

fn be16(f: &[u8], i: usize) -> usize {
    usize::from(u16::from_be_bytes([f[i], f[i + 1]]))
}

fn be24(f: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([0, f[i], f[i + 1], f[i + 2]])
}

impl RefChip {
    fn count(&mut self, k: &'static str) {
        *self.counts.entry(k).or_default() += 1;
    }

    /// The drop cause of `f`, in the engine's order, or the QP it passes to.
    fn classify(&self, f: &[u8]) -> Cat {
        if f.len() < 34 {
            return Cat::Malformed;
        }
        if be16(f, 12) != 0x0800 || f[14] >> 4 != 4 {
            return Cat::Other;
        }
        if f[14] & 0xf != 5 || be16(f, 20) & 0x3fff != 0 {
            return Cat::Malformed;
        }
        if f[23] != 17 {
            return Cat::Other;
        }
        let ip_len = be16(f, 16);
        if ip_len < 28 || ip_len > f.len() - 14 || ip_checksum(&f[14..34]) != 0 {
            return Cat::Malformed;
        }
        if be16(f, 36) != 4791 {
            return Cat::Other;
        }
        if be16(f, 38) != ip_len - 20 || ip_len - 28 < 16 {
            return Cat::Malformed;
        }
        let fr = &f[..14 + ip_len];
        let got = u32::from_le_bytes(fr[fr.len() - 4..].try_into().expect("4 bytes"));
        if got != icrc(fr) {
            return Cat::Icrc;
        }
        let (opc, flags) = (f[42], f[43]);
        let known = opc == op::SEND_ONLY
            || opc == op::ACKNOWLEDGE
            || opc == op::CNP
            || opc == op::READ_REQUEST
            || is_write(opc);
        if !known || flags & 0xf != 0 {
            return Cat::Opcode;
        }
        let t_len = ip_len - 28;
        let pad = usize::from(flags >> 4 & 3);
        let wr_hdr = if matches!(opc, op::WRITE_FIRST | op::WRITE_ONLY) {
            32
        } else {
            16
        };
        if (opc == op::ACKNOWLEDGE && (t_len != 20 || pad != 0))
            || (opc == op::CNP && (t_len != 32 || pad != 0))
            || (opc == op::SEND_ONLY && pad > t_len - 16)
            || (is_write(opc) && (t_len < wr_hdr || pad > t_len - wr_hdr))
            || (opc == op::READ_REQUEST && (t_len != 32 || pad != 0))
        {
            return Cat::Malformed;
        }
        let dqp = be24(f, 47);
        match self.qps.iter().position(|q| q.qpn == dqp) {
            Some(q) if self.qps[q].pkey as usize == be16(f, 44) && !self.qps[q].err => Cat::Pass(q),
            _ => Cat::Qp,
        }
    }

    fn deliver(&mut self, f: &[u8]) {
        self.count("rx_frames");
        match self.classify(f) {
            Cat::Other => self.count("drop_other"),
            Cat::Malformed => self.count("drop_malformed"),
            Cat::Icrc => self.count("drop_icrc"),
            Cat::Opcode => self.count("drop_opcode"),
            Cat::Qp => self.count("drop_qp"),
            Cat::Pass(q) => {
                let p = Packet::decode(f).expect("a frame that passes the checks decodes");
                if p.bth.opcode == op::CNP {
                    return; // congestion control only (property rdma_cc)
                }
                let x = &mut self.qps[q];
                if p.bth.opcode == op::ACKNOWLEDGE {
                    let s = p.aeth.expect("AETH").syndrome;
                    if s >> 5 == 0 {
                        self.count("rx_ack");
                    } else {
                        self.count("rx_nak");
                        if (0x61..=0x63).contains(&s) {
                            self.qps[q].err = true;
                        }
                    }
                    return;
                }
                let psn = p.bth.psn;
                let d = psn.wrapping_sub(x.epsn) & 0xff_ffff;
                if p.bth.opcode == op::READ_REQUEST {
                    let reth = p.reth.expect("RETH");
                    let key_ok = self.keys.get(&reth.rkey).is_some_and(|w| {
                        w.0 == q
                            && matches!(w.2, 0x01 | 0x05)
                            && reth.va + u64::from(reth.len) <= u64::from(w.3)
                    });
                    let x = &mut self.qps[q];
                    let m = x.msn;
                    if d == 0 {
                        x.nak_sent = false;
                        if x.wr.is_some() {
                            x.err = true;
                            self.acks[q].push((0x61, psn, m));
                        } else if !key_ok {
                            x.err = true;
                            self.acks[q].push((0x62, psn, m));
                        } else {
                            let span = reth.len.div_ceil(x.mtu as u32).max(1);
                            x.epsn = (x.epsn + span) & 0xff_ffff;
                            x.msn = (x.msn + 1) & 0xff_ffff;
                            *self.counts.entry("rx_reads").or_default() += 1;
                            self.reads.push((q, psn, reth.rkey, reth.va, reth.len));
                            self.read_at.push(self.acks[q].len());
                        }
                    } else if d < 0x80_0000 {
                        *self.counts.entry("drop_psn").or_default() += 1;
                        if !x.nak_sent {
                            x.nak_sent = true;
                            let e = x.epsn;
                            self.acks[q].push((0x60, e, m));
                        }
                    } else {
                        *self.counts.entry("rx_dup").or_default() += 1;
                        if key_ok {
                            *self.counts.entry("rx_reads").or_default() += 1;
                            self.reads.push((q, psn, reth.rkey, reth.va, reth.len));
                            self.read_at.push(self.acks[q].len());
                        }
                    }
                    return;
                }
                if d == 0 && is_write(p.bth.opcode) {
                    x.nak_sent = false;
                    let opc = p.bth.opcode;
                    let n = p.payload.len() as u32;
                    let mtu = x.mtu as u32;
                    let first = matches!(opc, op::WRITE_FIRST | op::WRITE_ONLY);
                    let seq_bad = first == x.wr.is_some();
                    let left = x.wr.map_or(0, |w| w.2);
                    let reth = p.reth.unwrap_or_default();
                    let len_bad = match opc {
                        op::WRITE_FIRST => n != mtu || p.bth.pad != 0 || reth.len <= mtu,
                        op::WRITE_MIDDLE => n != mtu || p.bth.pad != 0 || left <= mtu,
                        op::WRITE_LAST => n > mtu || n != left,
                        _ => n > mtu || n != reth.len,
                    };
                    let key_ok = !first
                        || self.keys.get(&reth.rkey).is_some_and(|w| {
                            w.0 == q
                                && w.2 == 0x02
                                && reth.va + u64::from(reth.len) <= u64::from(w.3)
                        });
                    let m = x.msn;
                    if seq_bad || len_bad {
                        x.err = true;
                        self.acks[q].push((0x61, psn, m));
                    } else if !key_ok {
                        x.err = true;
                        self.acks[q].push((0x62, psn, m));
                    } else {
                        let (key, off) = if first {
                            (reth.rkey, reth.va as u32)
                        } else {
                            let w = x.wr.expect("in a message");
                            (w.0, w.1)
                        };
                        let total_left = if first { reth.len } else { left };
                        x.wr = matches!(opc, op::WRITE_FIRST | op::WRITE_MIDDLE).then_some((
                            key,
                            off + n,
                            total_left - n,
                        ));
                        x.epsn = (x.epsn + 1) & 0xff_ffff;
                        if x.wr.is_none() {
                            x.msn = (x.msn + 1) & 0xff_ffff;
                        }
                        let m = x.msn;
                        self.acks[q].push((0x1f, psn, m));
                        self.count("rx_writes");
                        let w = self.keys[&key];
                        if n > 0 {
                            self.writes.push((q, w.1, off, p.payload.clone()));
                        }
                    }
                } else if d == 0 {
                    x.nak_sent = false;
                    if p.payload.len() == 16 && x.wr.is_none() {
                        x.epsn = (x.epsn + 1) & 0xff_ffff;
                        x.msn = (x.msn + 1) & 0xff_ffff;
                        let c = &p.payload;
                        let dw3 = u32::from_le_bytes(c[12..16].try_into().expect("4"));
                        let dw0 = u32::from_le_bytes(c[0..4].try_into().expect("4"));
                        self.cpls.push((q, dw3 as u16, (dw3 >> 17) as u16, dw0));
                        let cid = dw3 as u16;
                        self.keys.retain(|_, w| !(w.0 == q && w.1 == cid));
                        let m = x.msn;
                        self.acks[q].push((0x1f, psn, m));
                    } else {
                        x.err = true;
                        let m = x.msn;
                        self.acks[q].push((0x61, psn, m));
                    }
                } else if d < 0x80_0000 {
                    *self.counts.entry("drop_psn").or_default() += 1;
                    if !x.nak_sent {
                        x.nak_sent = true;
                        let (e, m) = (x.epsn, x.msn);
                        self.acks[q].push((0x60, e, m));
                    }
                } else {
                    *self.counts.entry("rx_dup").or_default() += 1;
                    let (e, m) = ((x.epsn + 0xff_ffff) & 0xff_ffff, x.msn);
                    self.acks[q].push((0x1f, e, m));
                }
            }
        }
    }
}

/// Drives `io_cmd` and takes `io_cpl`.
pub(super) struct Cmds {
    valid: Signal,
    ready: Signal,
    sqid: Signal,
    sqe: Signal,
    cv: Signal,
    cr: Signal,
    c_sqid: Signal,
    c_cid: Signal,
    c_status: Signal,
    c_dw0: Signal,
    pub(super) queue: VecDeque<(u16, [u8; 64])>,
    on: bool,
    rng: Rng,
    idle: (u8, u8),
    pub(super) cpls: Vec<(u16, u16, u16, u32)>,
    pub(super) violations: Vec<String>,
    held: Option<(u64, u64, u64, u64)>,
    /// The cycle the first command was presented, and the cycle of the last completion.
    first_valid: Option<u64>,
    last_cpl: u64,
}

impl Cmds {
    /// The `io_cmd` / `io_cpl` driver of `sim`, idle percentages `idle` (commands,
    /// completions).
    pub(super) fn new(sim: &Sim<Top>, seed: u64, idle: (u8, u8)) -> Cmds {
        let s = |n: &str| sim.signal(n);
        Cmds {
            valid: s("io_cmd_valid_i"),
            ready: s("io_cmd_ready_o"),
            sqid: s("io_cmd_sqid_i"),
            sqe: s("io_cmd_sqe_i"),
            cv: s("io_cpl_valid_o"),
            cr: s("io_cpl_ready_i"),
            c_sqid: s("io_cpl_sqid_o"),
            c_cid: s("io_cpl_cid_o"),
            c_status: s("io_cpl_status_o"),
            c_dw0: s("io_cpl_dw0_o"),
            queue: VecDeque::new(),
            on: false,
            rng: Rng::new(seed),
            idle,
            cpls: Vec::new(),
            violations: Vec::new(),
            held: None,
            first_valid: None,
            last_cpl: 0,
        }
    }
}

impl Component for Cmds {
    fn sample(&mut self, cycle: u64) {
        if self.on && self.ready.is_high() {
            self.queue.pop_front();
            self.on = false;
        }
        if self.cv.is_high() {
            let now = (
                self.c_sqid.get(),
                self.c_cid.get(),
                self.c_status.get(),
                self.c_dw0.get(),
            );
            if let Some(h) = self.held {
                if h != now {
                    self.violations
                        .push("io_cpl payload changed while valid".into());
                }
            }
            if self.cr.is_high() {
                self.cpls
                    .push((now.0 as u16, now.1 as u16, now.2 as u16, now.3 as u32));
                self.last_cpl = cycle;
                self.held = None;
            } else {
                self.held = Some(now);
            }
        } else if self.held.take().is_some() {
            self.violations.push("io_cpl valid fell".into());
        }
    }
    fn drive(&mut self, cycle: u64) {
        if !self.on && !self.queue.is_empty() && !self.rng.chance(self.idle.0) {
            self.on = true;
        }
        if let Some((sqid, sqe)) = self.queue.front().filter(|_| self.on) {
            self.first_valid.get_or_insert(cycle);
            self.valid.set(1);
            self.sqid.set(u64::from(*sqid));
            let w: Vec<u32> = sqe
                .chunks(4)
                .map(|c| u32::from_le_bytes(c.try_into().expect("4")))
                .collect();
            self.sqe.set_words(&w);
        } else {
            self.valid.set(0);
        }
        self.cr.set(u64::from(!self.rng.chance(self.idle.1)));
    }
}

pub(super) fn sqe_for(c: &Cmd, cid: u16) -> [u8; 64] {
    let mut s = [0u8; 64];
    let (opc, nsid, slba, nlb) = match c.kind {
        0 => (0x00, 1, 0, 0),
        1 => (0x08, 1, c.slba % (BLOCKS + 4), c.nlb % 8),
        2 => (0x02, 1, BLOCKS + c.slba % 8, c.nlb % 8),
        3 => (0x7e, 1, 0, 0),
        4 => (0x08, 2, 0, 0),
        5 => (0x01, 1, c.slba % (BLOCKS - 8), c.nlb % 8),
        8 => (0x02, 1, c.slba, c.nlb),
        9 => (0x01, 1, c.slba, c.nlb),
        10 => (0x01, 1, c.slba % (BLOCKS - 8), c.nlb % 2),
        _ => (0x02, 1, c.slba % (BLOCKS - 8), c.nlb % 8),
    };
    s[0] = opc;
    s[2..4].copy_from_slice(&cid.to_le_bytes());
    s[4..8].copy_from_slice(&(nsid as u32).to_le_bytes());
    // A host's PRP pointer in DPTR: the engine replaces it.
    s[24..32].copy_from_slice(&0x1234_5000u64.to_le_bytes());
    s[40..48].copy_from_slice(&slba.to_le_bytes());
    s[48..50].copy_from_slice(&nlb.to_le_bytes());
    s[60] = cid as u8; // CDW15: travels untouched
    s
}

pub(crate) fn confs(psn: &[u32; 4], qps: usize, mtu: &[usize]) -> Vec<QpConf> {
    (0..qps)
        .map(|q| QpConf {
            host_mac: [0x02, 0, 0, 0, 0x10, q as u8],
            target_mac: [0x02, 0, 0, 0, 0x20, q as u8],
            host_ip: [10, 0, 0, 1],
            target_ip: [10, 0, 1, 1 + q as u8],
            host_qpn: 0x11 + 0x100 * q as u32,
            target_qpn: 0x2000 + q as u32,
            pkey: if q == 0 { 0xffff } else { 0x8001 },
            host_psn: psn[2 * q] & 0xff_ffff,
            target_psn: psn[2 * q + 1] & 0xff_ffff,
            mtu: mtu[q],
        })
        .collect()
}

pub(crate) fn reg(name: &str) -> u32 {
    roce_csr::REGISTERS
        .iter()
        .find(|r| r.0 == name)
        .unwrap_or_else(|| panic!("roce_csr has no register {name}"))
        .1
}

/// Firmware's set-up of QP `q` from `c`: addresses, QPNs, PSNs, P_Key, MTU code `mtu`, the
/// `retry` CSR (limit << 24 | timeout); `ctrl` (enable) is left to the caller.
pub(crate) fn program_qp<C: Clocked + ?Sized>(
    bus: &mut Mmio<C>,
    q: usize,
    c: &QpConf,
    mtu: u32,
    retry: u32,
) {
    let r = |n: &str| reg(&format!("qp{q}_{n}"));
    let mac = |m: [u8; 6]| {
        (
            u32::from(m[0]) << 8 | u32::from(m[1]),
            u32::from_be_bytes([m[2], m[3], m[4], m[5]]),
        )
    };
    bus.write32(r("local_qpn"), c.host_qpn);
    bus.write32(r("remote_qpn"), c.target_qpn);
    bus.write32(r("local_mac_hi"), mac(c.host_mac).0);
    bus.write32(r("local_mac_lo"), mac(c.host_mac).1);
    bus.write32(r("remote_mac_hi"), mac(c.target_mac).0);
    bus.write32(r("remote_mac_lo"), mac(c.target_mac).1);
    bus.write32(r("local_ip"), u32::from_be_bytes(c.host_ip));
    bus.write32(r("remote_ip"), u32::from_be_bytes(c.target_ip));
    bus.write32(r("sq_psn"), c.host_psn);
    bus.write32(r("rq_psn"), c.target_psn);
    bus.write32(r("pkey"), u32::from(c.pkey));
    bus.write32(r("mtu"), mtu);
    bus.write32(r("retry"), retry);
}

/// Firmware's choice of the frames' IPv4 TOS (`tx_tos`), drawn from `seed`: the reset value
/// (ECT(0), DSCP 0) one time in four, else any DSCPs and a data ECN of 00, 01 or 10. Returns
/// what the target must see.
pub(crate) fn program_tos<C: Clocked + ?Sized>(bus: &mut Mmio<C>, seed: u64) -> HostTos {
    if seed.is_multiple_of(4) {
        return HostTos::default();
    }
    let t = HostTos {
        data_dscp: (seed >> 8) as u8 & 63,
        data_ecn: (seed >> 16) as u8 % 3,
        cnp_dscp: (seed >> 24) as u8 & 63,
    };
    bus.write32(
        roce_csr::TX_TOS,
        u32::from(t.cnp_dscp) << 8 | u32::from(t.data_dscp) << 2 | u32::from(t.data_ecn),
    );
    t
}

/// Base of the Read buffers in host memory: each command's pages follow the previous one's.
pub(crate) const BASE: u64 = 0x10_0000;

/// A Read's or a Write's buffer: its SQ id and CID, and its pieces (address, bytes) in data
/// order.
pub(crate) struct Buf {
    pub(crate) sqid: u16,
    pub(crate) cid: u16,
    /// A Write's (host memory must not change).
    pub(crate) write: bool,
    /// A Write whose SGL descriptor has a reserved type: the DMA engine answers 11h (SGL
    /// Descriptor Type Invalid) and zeros; the engine's READ responses carry the zeros and the
    /// command completes with 11h whatever its CQE says.
    pub(crate) bad: bool,
    pub(crate) pieces: Vec<(u64, usize)>,
    /// The end of its region (buffer pages and a PRP list page).
    pub(crate) end: u64,
}

/// Gives the Read `sqe` a data pointer into fresh host memory (random bytes): PRP1 (and PRP2
/// when it crosses a page), or one SGL data block.
pub(crate) fn place(
    sqe: &mut [u8; 64],
    bufs: &mut Vec<Buf>,
    mem: &mut Memory,
    rng: &mut Rng,
    cid: u16,
    sqid: u16,
) {
    let len = (usize::from(u16::from_le_bytes([sqe[48], sqe[49]])) + 1) * 512;
    let base = bufs.last().map_or(BASE, |b| b.end);
    let pages = len.div_ceil(4096) as u64 + 1;
    let end = base + 4096 * (pages + 1);
    let junk: Vec<u8> = (0..end - base).map(|_| rng.next_u64() as u8).collect();
    mem.write(base, &junk);
    let off = rng.below(1024) * 4;
    let a = base + off;
    let mut dptr = [0u8; 16];
    dptr[0..8].copy_from_slice(&a.to_le_bytes());
    let mut bad = false;
    let pieces = if rng.chance(25) {
        dptr[8..12].copy_from_slice(&(len as u32).to_le_bytes());
        if sqe[0] == 0x01 && rng.chance(20) {
            bad = true;
            dptr[15] = 0x50;
        }
        sqe[1] = (sqe[1] & 0x3f) | 0x40;
        vec![(a, len)]
    } else {
        let first = (4096 - off as usize).min(len);
        let mut p = vec![(a, first)];
        let mut k = first;
        while k < len {
            let page = base + 4096 * p.len() as u64;
            p.push((page, (len - k).min(4096)));
            k += 4096;
        }
        let prp2 = match p.len() {
            1 => 0,
            2 => p[1].0,
            _ => {
                let list = end - 4096;
                for (i, (page, _)) in p[1..].iter().enumerate() {
                    mem.write_u64(list + 8 * i as u64, *page);
                }
                list
            }
        };
        dptr[8..16].copy_from_slice(&prp2.to_le_bytes());
        sqe[1] &= 0x3f;
        p
    };
    sqe[24..40].copy_from_slice(&dptr);
    bufs.push(Buf {
        sqid,
        cid,
        write: sqe[0] == 0x01,
        bad,
        pieces,
        end,
    });
}

/// Host memory after the run, against the Reads' buffers (see the call).
fn check_memory(
    bufs: &[Buf],
    before: &Memory,
    after: &Memory,
    target: &Target,
    cpls: &[(u16, u16, u16, u32)],
    reference: &RefChip,
) -> Result<(), String> {
    let mut inside = vec![false; (bufs.last().map_or(BASE, |b| b.end) - BASE) as usize];
    for b in bufs {
        let q = usize::from(b.sqid) - 1;
        let sent = target
            .read_data
            .iter()
            .find(|r| r.0 == q && r.1 == b.cid)
            .map(|r| &r.2);
        let ok = cpls
            .iter()
            .any(|c| c.0 == b.sqid && c.1 == b.cid && c.2 == 0);
        if b.write {
            for &(addr, n) in &b.pieces {
                let i0 = (addr - BASE) as usize;
                inside[i0..i0 + n].fill(true);
                if after.read_vec(addr, n) != before.read_vec(addr, n) {
                    return Err(format!(
                        "SQ id {} CID {:#x}: a Write's buffer at {addr:#x} changed",
                        b.sqid, b.cid
                    ));
                }
            }
            continue;
        }
        let mut k = 0usize;
        for &(addr, n) in &b.pieces {
            let i0 = (addr - BASE) as usize;
            inside[i0..i0 + n].fill(true);
            let got = after.read_vec(addr, n);
            let old = before.read_vec(addr, n);
            for j in 0..n {
                let want = sent.map(|d| d[k + j]);
                let good = if ok {
                    Some(got[j]) == want
                } else {
                    got[j] == old[j] || Some(got[j]) == want
                };
                if !good {
                    return Err(format!(
                        "SQ id {} CID {:#x}: host memory byte {} at {:#x} is {:#04x}: sent {want:x?}, was {:#04x} (completed with success: {ok})",
                        b.sqid, b.cid, k + j, addr + j as u64, got[j], old[j]
                    ));
                }
            }
            k += n;
        }
    }
    let a = before.read_vec(BASE, inside.len());
    let b = after.read_vec(BASE, inside.len());
    if let Some(i) = (0..inside.len()).find(|&i| !inside[i] && a[i] != b[i]) {
        return Err(format!(
            "host memory at {:#x}, outside every Read's buffer, changed",
            BASE + i as u64
        ));
    }
    if after.pages() != before.pages() {
        return Err("host memory written outside the Read buffers' pages".into());
    }
    // Every accepted WRITE lies inside its command's data and carries the target's bytes.
    for (q, cid, off, data) in &reference.writes {
        let sent = target
            .read_data
            .iter()
            .find(|r| r.0 == *q && r.1 == *cid)
            .ok_or(format!(
                "QP {q} CID {cid:#x}: WRITE accepted for no Read the target sent"
            ))?;
        let o = *off as usize;
        if sent.2.get(o..o + data.len()) != Some(&data[..]) {
            return Err(format!(
                "QP {q} CID {cid:#x}: WRITE accepted at offset {off} that the target did not send"
            ));
        }
    }
    Ok(())
}

/// A buffer's bytes in data order, from `mem` (zeros for a bad SGL: what the DMA engine gives).
pub(crate) fn buf_bytes(b: &Buf, mem: &Memory) -> Vec<u8> {
    if b.bad {
        return vec![0; b.pieces.iter().map(|p| p.1).sum()];
    }
    b.pieces
        .iter()
        .flat_map(|&(a, n)| mem.read_vec(a, n))
        .collect()
}

/// A READ response the engine sent on QP `q` must be one packet of a READ request the
/// reference says it answers, with that packet's opcode, length and the host buffer's bytes:
/// nothing outside the command's data ever leaves.
fn check_read_response(
    q: usize,
    p: &Packet,
    mtu: u32,
    reference: &RefChip,
    bufs: &[Buf],
    before: &Memory,
) -> Result<(), String> {
    let r = p.bth.psn;
    let aeth_ok = match p.aeth {
        Some(a) => a.syndrome == 0x1f,
        None => p.bth.opcode == op::READ_RESPONSE_MIDDLE,
    };
    let pad_ok = usize::from(p.bth.pad) == (4 - p.payload.len() % 4) % 4;
    if !aeth_ok || !pad_ok || p.bth.ack_req {
        return Err(format!(
            "QP {q}: READ response PSN {r:#x}: {:?} {:?}",
            p.bth, p.aeth
        ));
    }
    let fits = |&(rq, psn0, key, va, len): &(usize, u32, u32, u64, u32)| -> bool {
        let i = r.wrapping_sub(psn0) & 0xff_ffff;
        if rq != q || i >= len.div_ceil(mtu).max(1) {
            return false;
        }
        let off = i * mtu;
        let left = len - off;
        let opc = match (off == 0, left <= mtu) {
            (true, true) => op::READ_RESPONSE_ONLY,
            (true, false) => op::READ_RESPONSE_FIRST,
            (false, true) => op::READ_RESPONSE_LAST,
            (false, false) => op::READ_RESPONSE_MIDDLE,
        };
        let n = left.min(mtu) as usize;
        if p.bth.opcode != opc || p.payload.len() != n {
            return false;
        }
        let Some(w) = reference.windows.get(&key) else {
            return false;
        };
        let Some(b) = bufs
            .iter()
            .find(|b| usize::from(b.sqid) == w.0 + 1 && b.cid == w.1 && b.write)
        else {
            return false;
        };
        let data = buf_bytes(b, before);
        let at = (va + u64::from(off)) as usize;
        data.get(at..at + n) == Some(&p.payload[..])
    };
    if reference.reads.iter().any(fits) {
        Ok(())
    } else {
        Err(format!(
            "QP {q}: READ response {:#04x} PSN {r:#x} ({} bytes) is no packet of a READ the engine had to answer, or carries other bytes",
            p.bth.opcode,
            p.payload.len()
        ))
    }
}

/// What a run measured (for `bench --suite rdma`).
#[derive(Clone, Debug)]
pub struct Stats {
    /// Cycles from the first `io_cmd` valid to the first beat of its frame on `m_axis`, and
    /// to the last completion on `io_cpl`.
    pub cmd_to_wire: u64,
    pub cmd_to_cpl: u64,
    /// Bytes the engine sent, and the cycles from its first beat to its last.
    pub tx_bytes: u64,
    pub tx_cycles: u64,
    /// Capsules sent (first transmissions) and completions made.
    pub capsules: u64,
    pub completions: u64,
    /// Stream width in bytes.
    pub lanes: u64,
    /// Host reads: RDMA WRITE payload bytes and the frame bytes (all frames) the engine took
    /// from the first beat of the first WRITE frame to the last beat of the last, and those
    /// cycles (both ends included).
    pub rd_payload: u64,
    pub rd_wire: u64,
    pub rd_cycles: u64,
    /// The frames in that span: RDMA WRITEs, and all of them.
    pub rd_write_frames: u64,
    pub rd_frames: u64,
    /// Host writes: READ response payload and in-capsule data bytes, and the frame bytes (all
    /// frames) the engine sent from the first beat of the first frame carrying either to the
    /// last beat of the last, and those cycles.
    pub wr_payload: u64,
    pub wr_wire: u64,
    pub wr_cycles: u64,
    /// Capsules sent with in-capsule data (first transmissions).
    pub icd_capsules: u64,
}

fn run(input: &Input, waves: Option<&Path>, blocks: u64) -> Result<Stats, String> {
    let mut sim = Sim::<Top>::maybe_waves(waves);
    let nq = sim.signal("sq_space_o").width() as usize;
    // The lossy QP drawn may be one the engine lacks (configs/smallest.toml has one): no loss.
    let mut own = input.clone();
    if usize::from(own.link.blackhole) > nq {
        own.link.blackhole = 0;
    }
    let input = &own;
    // Path MTU per QP: any code up to the configured one (the CSR's value after reset).
    let max_code = roce_csr::QP0_MTU_RESET as usize;
    let codes: Vec<usize> = (0..nq)
        .map(|q| 1 + usize::from(input.mtu[q % 4]) % max_code)
        .collect();
    let mtus: Vec<usize> = codes.iter().map(|c| 128 << c).collect();
    let confs = confs(&input.psn, nq, &mtus);
    let mut target = Target::new(&confs, blocks as usize, input.seed);
    let mut reference = RefChip {
        qps: confs
            .iter()
            .map(|c| RefQp {
                qpn: c.host_qpn,
                pkey: c.pkey,
                epsn: c.target_psn,
                nak_sent: false,
                msn: 0,
                err: false,
                mtu: c.mtu,
                wr: None,
            })
            .collect(),
        counts: BTreeMap::new(),
        acks: vec![Vec::new(); nq],
        cpls: Vec::new(),
        keys: BTreeMap::new(),
        writes: Vec::new(),
        windows: BTreeMap::new(),
        reads: Vec::new(),
        read_at: Vec::new(),
    };
    let src = sim.add(AxisSource::new(
        &sim,
        "s_axis",
        input.seed ^ 1,
        input.idle[0],
    ));
    let sink = sim.add(AxisSink::new(&sim, "m_axis", input.seed ^ 2, input.idle[1]));
    // An Ethernet MAC takes a frame's beats back to back.
    sink.borrow_mut().gapless = true;
    let mem = sim.add(AxiMemSlave::new(
        &sim,
        "m_axi",
        AxiMemConfig {
            seed: input.seed ^ 7,
            read_latency: 1..=10,
            write_latency: 0..=6,
            aw_stall: input.mem_stall,
            w_stall: input.mem_stall,
            b_idle: input.mem_stall,
            ..AxiMemConfig::default()
        },
    ));
    let cmds = sim.add(Cmds::new(
        &sim,
        input.seed ^ 3,
        (input.idle[2], input.idle[3]),
    ));
    let axil = Axil::attach(
        &mut sim,
        "s_axil",
        AxilConfig {
            seed: input.seed ^ 4,
            ..AxilConfig::default()
        },
    );
    sim.reset(3);
    // Firmware: program and enable each QP.
    {
        let mut bus = axil.mmio(&mut sim);
        for (q, c) in confs.iter().enumerate() {
            let limit = if usize::from(input.link.blackhole) == q + 1 {
                2
            } else {
                7
            };
            program_qp(&mut bus, q, c, codes[q] as u32, limit << 24 | RETRY_TIMEOUT);
            bus.write32(reg(&format!("qp{q}_ctrl")), 1);
        }
        // The host's in-capsule rule, as the engine reports it: the target checks it.
        target.icd_max = bus.read32(roce_csr::IN_CAPSULE) as usize;
        target.host_tos = program_tos(&mut bus, input.seed);
    }
    // Host memory: every Read's buffer (PRP or one SGL data block) in random bytes.
    let mut mrng = Rng::new(input.seed ^ 6);
    let mut bufs: Vec<Buf> = Vec::new();
    // Commands: CIDs unique per SQ id.
    let mut submitted: Vec<(u16, u16, [u8; 64])> = Vec::new();
    for (i, c) in input.cmds.iter().enumerate() {
        let sqid = if c.sq == 0 {
            nq as u16 + 1 + (c.slba % 2) as u16 * 100
        } else {
            1 + u16::from(c.sq - 1) % nq as u16
        };
        let cid = 0x100 + i as u16;
        let mut sqe = sqe_for(c, cid);
        if matches!(sqe[0], 0x01 | 0x02) {
            place(
                &mut sqe,
                &mut bufs,
                &mut mem.borrow_mut().mem,
                &mut mrng,
                cid,
                sqid,
            );
        }
        submitted.push((sqid, cid, sqe));
        cmds.borrow_mut().queue.push_back((sqid, sqe));
    }
    let before = mem.borrow().mem.clone();
    let mut rng = Rng::new(input.seed ^ 5);
    let mut link: VecDeque<Vec<u8>> = VecDeque::new();
    let mut host_link: VecDeque<Vec<u8>> = VecDeque::new();
    let mut pcap = Pcap::new();
    let mut hostile = input.hostile.clone();
    // A READ naming an in-capsule Write is armed from the start (such Writes are few).
    hostile.retain(|h| {
        let early = matches!(hostile_kind(h.2), Hostile::ReadInCapsule);
        if early {
            target.hostile(0, Hostile::ReadInCapsule);
        }
        !early
    });
    hostile.sort();
    let mut hostile: VecDeque<_> = hostile.into();
    let mut target_frames = 0u32;
    let mut seen_tx = 0usize;
    let mut quiet = 0u64;
    let mut tx_frames: Vec<Vec<u8>> = Vec::new();
    let mut keyed_once = std::collections::BTreeSet::new();
    // Frames handed to the engine: (an RDMA WRITE, payload bytes, frame bytes).
    let mut rx_kinds: Vec<(bool, usize, usize)> = Vec::new();
    let mut cpls_checked = 0usize;
    loop {
        sim.step();
        // A Read's successful completion never overtakes its data: when it leaves, host
        // memory holds the target's bytes and no write burst into its buffer is unanswered.
        while cpls_checked < cmds.borrow().cpls.len() {
            let (sqid, cid, status, _) = cmds.borrow().cpls[cpls_checked];
            cpls_checked += 1;
            let b = bufs.iter().find(|b| b.sqid == sqid && b.cid == cid);
            let sent = target
                .read_data
                .iter()
                .find(|r| usize::from(sqid) == r.0 + 1 && r.1 == cid);
            if let (0, Some(b), Some((_, _, data))) = (status, b, sent) {
                let mem = mem.borrow();
                let mut k = 0usize;
                for &(addr, n) in &b.pieces {
                    let busy = mem
                        .unanswered_writes()
                        .into_iter()
                        .find(|&(lo, hi)| lo < addr + n as u64 && addr < hi);
                    if mem.mem.read_vec(addr, n) != data[k..k + n] || busy.is_some() {
                        return Err(format!(
                            "SQ id {sqid} CID {cid:#x}: io_cpl (success) at cycle {} overtook its data: bytes {k}..{} at {addr:#x} not yet in host memory (unanswered write {busy:x?})",
                            sim.cycle(),
                            k + n
                        ));
                    }
                    k += n;
                }
            }
        }
        let mut moved = false;
        // Host frames: to the target (duplicated sometimes).
        let new: Vec<Vec<u8>> = sink.borrow().frames[seen_tx..]
            .iter()
            .map(|f| f.data.clone())
            .collect();
        seen_tx += new.len();
        for f in new {
            moved = true;
            pcap.ethernet(&f);
            tx_frames.push(f.clone());
            // A capsule's first transmission: its key is valid until its command completes.
            if let Ok(p) = Packet::decode(&f) {
                let q = confs.iter().position(|c| c.target_qpn == p.bth.dest_qp);
                let keyed = p.payload.get(39) == Some(&0x40);
                if let (Some(q), op::SEND_ONLY, 64, true) =
                    (q, p.bth.opcode, p.payload.len(), keyed)
                {
                    let c = &p.payload;
                    let cid = u16::from_le_bytes([c[2], c[3]]);
                    let key = u32::from_le_bytes(c[35..39].try_into().expect("4"));
                    let len = u32::from_le_bytes([c[32], c[33], c[34], 0]);
                    if keyed_once.insert((q, cid)) {
                        reference.keys.insert(key, (q, cid, c[0], len));
                        reference.windows.insert(key, (q, cid, c[0], len));
                    }
                }
            }
            let l = &input.link;
            let q = confs
                .iter()
                .position(|c| f.len() > 49 && be24(&f, 47) == c.target_qpn);
            if q.is_some_and(|q| usize::from(l.blackhole) == q + 1) || rng.chance(l.host_drop) {
                continue;
            }
            let mut f = f;
            if rng.chance(l.host_corrupt) {
                // Bytes the ICRC covers and nothing else checks first: the target drops it.
                let bit = 8 * 54 + rng.below(8 * (f.len() as u64 - 54)) as usize;
                f[bit / 8] ^= 1 << (bit % 8);
            }
            if rng.chance(l.host_dup) {
                host_link.push_back(f.clone());
            }
            if rng.chance(l.host_reorder) && !host_link.is_empty() {
                let at = rng.below(host_link.len() as u64) as usize;
                host_link.insert(at, f);
            } else {
                host_link.push_back(f);
            }
        }
        if let Some(f) = host_link.pop_front() {
            moved = true;
            target.receive(&f);
        }
        // Hostile frames once enough target frames went by.
        while hostile
            .front()
            .is_some_and(|h| u32::from(h.0) <= target_frames)
        {
            let (_, q, k) = hostile.pop_front().expect("front");
            let q = usize::from(q) % nq;
            if !target.dead(q) && usize::from(input.link.blackhole) != q + 1 {
                target.hostile(q, hostile_kind(k));
            }
        }
        // Target frames through the link.
        while let Some(f) = target.out.pop_front() {
            target_frames += 1;
            // The capture holds what each end sent (the link's faults are not recorded), and
            // only RoCEv2 frames (not the hostile frame to another UDP port).
            if f.len() > 37 && f[36..38] == [0x12, 0xb7] {
                pcap.ethernet(&f);
            }
            let l = &input.link;
            if rng.chance(l.drop) {
                continue;
            }
            let mut f = f;
            if rng.chance(l.corrupt) {
                let bit = rng.below(8 * f.len() as u64) as usize;
                f[bit / 8] ^= 1 << (bit % 8);
            }
            if rng.chance(l.truncate) {
                let n = 1 + rng.below(f.len() as u64 - 1) as usize;
                f.truncate(n);
            }
            if rng.chance(l.dup) {
                link.push_back(f.clone());
            }
            if rng.chance(l.reorder) && !link.is_empty() {
                let at = rng.below(link.len() as u64) as usize;
                link.insert(at, f);
            } else {
                link.push_back(f);
            }
        }
        if src.borrow().pending() < 2 {
            if let Some(f) = link.pop_front() {
                moved = true;
                reference.deliver(&f);
                let write = f.len() > 42 && is_write(f[42]);
                let pay = Packet::decode(&f).map_or(0, |p| p.payload.len());
                rx_kinds.push((write, pay, f.len()));
                src.borrow_mut().send(f);
            }
        }
        let busy = src.borrow().pending() > 0
            || !link.is_empty()
            || !host_link.is_empty()
            || !sink.borrow().partial().is_empty();
        quiet = if moved || busy { 0 } else { quiet + 1 };
        if quiet == 1500 && target.unacked() > 0 {
            target.timeout();
            quiet = 0;
        }
        let done = cmds.borrow().cpls.len() >= submitted.len() && target.unacked() == 0;
        if done && quiet > 300 {
            break;
        }
        if sim.cycle() > 200_000 + 20_000 * input.cmds.len() as u64 {
            return Err(format!(
                "hang: {} of {} commands completed, target has {} unacknowledged (target: {:?})",
                cmds.borrow().cpls.len(),
                submitted.len(),
                target.unacked(),
                target.errors.first()
            ));
        }
    }
    // Stop the retransmit timers, let a frame on its way finish, then look at what was sent.
    {
        let mut bus = axil.mmio(&mut sim);
        for q in 0..nq {
            bus.write32(reg(&format!("qp{q}_retry")), 7 << 24 | 0xff_ffff);
        }
    }
    sim.run(300);
    let late: Vec<Vec<u8>> = sink.borrow().frames[seen_tx..]
        .iter()
        .map(|f| f.data.clone())
        .collect();
    for f in late {
        pcap.ethernet(&f);
        tx_frames.push(f);
    }
    if super::capturing() {
        super::record(&pcap);
    }
    if let Some(v) = cmds.borrow().violations.first() {
        return Err(format!("io_cpl protocol: {v}"));
    }
    if let Some(v) = sink.borrow().violations.first() {
        return Err(format!("m_axis protocol: {v}"));
    }
    if let Some(e) = target.errors.first() {
        return Err(format!("target: {e}"));
    }
    // Transmitted frames: decode, addresses (the target checked them), capsules, ACKs.
    let mut psn: Vec<u32> = confs.iter().map(|c| c.host_psn).collect();
    let mut acks_seen: Vec<usize> = vec![0; nq];
    let (mut n_cap, mut n_ack, mut n_nak, mut tx_bytes) = (0u32, 0u32, 0u32, 0u32);
    let mut sent_cids: Vec<Vec<u16>> = vec![Vec::new(); nq];
    let mut by_psn: Vec<BTreeMap<u32, &Vec<u8>>> = vec![BTreeMap::new(); nq];
    let mut n_retx = 0u32;
    let mut n_rresp = 0u32;
    let mut n_icd = 0u32;
    let mut resp_sent: std::collections::BTreeSet<(usize, u32)> = Default::default();
    for f in &tx_frames {
        tx_bytes += f.len() as u32;
        let p =
            Packet::decode(f).map_err(|e| format!("engine sent a bad frame ({e:?}): {f:02x?}"))?;
        let q = confs
            .iter()
            .position(|c| c.target_qpn == p.bth.dest_qp)
            .ok_or("frame to an unknown QPN")?;
        match p.bth.opcode {
            op::SEND_ONLY if p.bth.psn != psn[q] => {
                // Sent again: byte for byte the first transmission of that PSN.
                n_retx += 1;
                if by_psn[q].get(&p.bth.psn) != Some(&f) {
                    return Err(format!(
                        "QP {q}: capsule PSN {:#x} is neither the next ({:#x}) nor a copy of one sent",
                        p.bth.psn, psn[q]
                    ));
                }
            }
            op::SEND_ONLY => {
                n_cap += 1;
                by_psn[q].insert(p.bth.psn, f);
                if p.bth.psn != psn[q] {
                    return Err(format!(
                        "QP {q}: capsule PSN {:#x}, expected {:#x}",
                        p.bth.psn, psn[q]
                    ));
                }
                psn[q] = (psn[q] + 1) & 0xff_ffff;
                let cid = u16::from_le_bytes([p.payload[2], p.payload[3]]);
                let (_, _, sqe) = submitted
                    .iter()
                    .find(|(s, c, _)| usize::from(*s) == q + 1 && *c == cid)
                    .ok_or(format!("QP {q}: capsule for CID {cid:#x} never submitted"))?;
                let mut want = *sqe;
                want[1] = want[1] & 0x3f | 0x40;
                want[24..40].copy_from_slice(&p.payload[24..40]);
                if p.payload.len() < 64 || p.payload[..64] != want[..] {
                    return Err(format!(
                        "QP {q} CID {cid:#x}: capsule SQE {:02x?}, submitted {:02x?}",
                        p.payload, sqe
                    ));
                }
                // In-capsule data (the target checked the rule and the descriptor): the host
                // buffer's bytes, read when the capsule was sent.
                if p.payload.len() > 64 {
                    let b = bufs
                        .iter()
                        .find(|b| usize::from(b.sqid) == q + 1 && b.cid == cid)
                        .ok_or(format!(
                            "QP {q} CID {cid:#x}: in-capsule data without a buffer"
                        ))?;
                    if p.payload[64..] != buf_bytes(b, &before)[..] {
                        return Err(format!(
                            "QP {q} CID {cid:#x}: in-capsule data differs from the host buffer"
                        ));
                    }
                    n_icd += 1;
                }
                if sent_cids[q].contains(&cid) {
                    return Err(format!("QP {q}: CID {cid:#x} sent twice"));
                }
                sent_cids[q].push(cid);
            }
            op::ACKNOWLEDGE => {
                let a = p.aeth.expect("AETH");
                if a.syndrome >> 5 == 0 {
                    n_ack += 1;
                } else {
                    n_nak += 1;
                }
                let ev = (a.syndrome, p.bth.psn, a.msn);
                let list = &reference.acks[q];
                match list[acks_seen[q]..].iter().position(|e| *e == ev) {
                    Some(i) => {
                        acks_seen[q] += i + 1;
                        // Responder order: a READ accepted before this ACK was asked for, at a
                        // PSN before it, has had its last response sent.
                        let at = acks_seen[q] - 1;
                        for (k, r) in reference.reads.iter().enumerate() {
                            let n = r.4.div_ceil(mtus[q] as u32).max(1);
                            let last = (r.1 + n - 1) & 0xff_ffff;
                            let before = (p.bth.psn.wrapping_sub(r.1) & 0xff_ffff) < 0x80_0000;
                            if r.0 == q
                                && reference.read_at[k] <= at
                                && before
                                && !resp_sent.contains(&(q, last))
                            {
                                return Err(format!(
                                    "QP {q}: ACK {ev:x?} overtook the READ response PSN {last:#x}"
                                ));
                            }
                        }
                    }
                    None => {
                        return Err(format!(
                            "QP {q}: ACK {ev:x?} not asked for (in order) by the reference, which asked {list:x?}"
                        ))
                    }
                }
            }
            op::READ_RESPONSE_FIRST
            | op::READ_RESPONSE_MIDDLE
            | op::READ_RESPONSE_LAST
            | op::READ_RESPONSE_ONLY => {
                n_rresp += 1;
                resp_sent.insert((q, p.bth.psn));
                check_read_response(q, &p, mtus[q] as u32, &reference, &bufs, &before)?;
            }
            o => return Err(format!("engine sent opcode {o:#x}")),
        }
    }
    for (q, list) in reference.acks.iter().enumerate() {
        if let Some(last) = list.last() {
            // Identical requests in a row may go out as one frame: the last one sent must be
            // the last one asked for.
            let sent_last = acks_seen[q] > 0 && list[acks_seen[q] - 1] == *last;
            let superseded_by_fatal = list.iter().any(|a| a.0 == 0x61);
            if !sent_last && !superseded_by_fatal {
                return Err(format!("QP {q}: the last ACK {last:x?} was never sent"));
            }
        }
    }
    if let Some(q) = usize::from(input.link.blackhole).checked_sub(1) {
        if psn[q] != confs[q].host_psn {
            // The engine sent capsules on the QP that loses every frame: it must give up.
            reference.qps[q].err = true;
        }
    }
    // Completions: exactly once each.
    let cpls = cmds.borrow().cpls.clone();
    let mut from_cqe = reference.cpls.clone();
    for (sqid, cid, _) in &submitted {
        let got: Vec<_> = cpls
            .iter()
            .filter(|c| c.0 == *sqid && c.1 == *cid)
            .collect();
        if got.len() != 1 {
            return Err(format!(
                "SQ id {sqid} CID {cid:#x}: {} completions {got:x?}",
                got.len()
            ));
        }
        let (_, _, status, dw0) = *got[0];
        let q = usize::from(*sqid) - 1;
        if usize::from(*sqid) > nq {
            if status != 0x22 {
                return Err(format!(
                    "SQ id {sqid} (no QP) CID {cid:#x}: status {status:#x}, expected 22h"
                ));
            }
            continue;
        }
        if let Some(i) = from_cqe.iter().position(|c| c.0 == q && c.1 == *cid) {
            let (_, _, st, d0) = from_cqe.remove(i);
            let bad = bufs
                .iter()
                .any(|b| b.bad && b.sqid == *sqid && b.cid == *cid);
            let want = if bad { 0x11 } else { st };
            if (status, dw0) != (want, d0) {
                return Err(format!(
                    "QP {q} CID {cid:#x}: completion status {status:#x} DW0 {dw0:#x}, expected {want:#x} {d0:#x} (the accepted CQE said {st:#x}, bad SGL: {bad})"
                ));
            }
            let ex = target
                .executed
                .iter()
                .find(|e| e.qp == q && e.cid == *cid)
                .ok_or(format!(
                    "QP {q} CID {cid:#x}: completed from a CQE the target never made"
                ))?;
            if (ex.status, ex.dw0) != (st, d0) {
                return Err(format!(
                    "QP {q} CID {cid:#x}: CQE differs from the target's {ex:?}"
                ));
            }
        } else if status != 0x22 || !reference.qps[q].err {
            return Err(format!(
                "QP {q} CID {cid:#x}: status {status:#x} without an accepted CQE (QP in error: {})",
                reference.qps[q].err
            ));
        }
    }
    if !from_cqe.is_empty() {
        return Err(format!("CQEs accepted for no command: {from_cqe:x?}"));
    }
    // The target executed each command at most once; the namespace is what they made of it.
    let mut ns = Target::new(&confs, blocks as usize, input.seed).ns;
    for (i, e) in target.executed.iter().enumerate() {
        if target.executed[..i]
            .iter()
            .any(|x| x.qp == e.qp && x.cid == e.cid)
        {
            return Err(format!(
                "target executed QP {} CID {:#x} twice",
                e.qp, e.cid
            ));
        }
        if e.opcode == 0x01 && e.status == 0 {
            // A Write: the target's namespace got the host buffer's bytes.
            let b = bufs
                .iter()
                .find(|b| usize::from(b.sqid) == e.qp + 1 && b.cid == e.cid)
                .expect("a Write has a buffer");
            let want = buf_bytes(b, &before);
            let got = target
                .write_data
                .iter()
                .find(|w| w.0 == e.qp && w.1 == e.cid)
                .map(|w| &w.2);
            if got != Some(&want) {
                return Err(format!(
                    "QP {} CID {:#x}: the target's Write data differs from the host buffer",
                    e.qp, e.cid
                ));
            }
            let (_, _, sqe) = submitted
                .iter()
                .find(|(s, c, _)| usize::from(*s) == e.qp + 1 && *c == e.cid)
                .expect("submitted");
            let slba = u64::from_le_bytes(sqe[40..48].try_into().expect("8")) as usize;
            ns[slba * 512..slba * 512 + want.len()].copy_from_slice(&want);
        }
        if e.opcode == 0x08 && e.status == 0 {
            let (_, _, sqe) = submitted
                .iter()
                .find(|(s, c, _)| usize::from(*s) == e.qp + 1 && *c == e.cid)
                .expect("submitted");
            let slba = u64::from_le_bytes(sqe[40..48].try_into().expect("8")) as usize;
            let nlb = usize::from(u16::from_le_bytes([sqe[48], sqe[49]])) + 1;
            ns[slba * 512..(slba + nlb) * 512].fill(0);
        }
    }
    if ns != target.ns {
        return Err("the namespace differs from the executed commands' effect".into());
    }
    // Host memory: a Read completed with success holds the target's data; any other Read's
    // buffer holds, byte by byte, the target's data (it may have come in part before its QP
    // ended) or what was there; nothing else changed.
    check_memory(
        &bufs,
        &before,
        &mem.borrow().mem,
        &target,
        &cpls,
        &reference,
    )?;
    // Counters.
    let c = |k: &str| reference.counts.get(k).copied().unwrap_or(0);
    let rx_bytes: u32 = src.borrow().sent.iter().map(|s| s.1 as u32).sum();
    let want: Vec<(&str, u32)> = vec![
        ("tx_frames", tx_frames.len() as u32),
        ("tx_bytes", tx_bytes),
        ("tx_capsules", n_cap),
        ("tx_ack", n_ack),
        ("tx_nak", n_nak),
        ("rx_frames", c("rx_frames")),
        ("rx_bytes", rx_bytes),
        ("rx_ack", c("rx_ack")),
        ("rx_nak", c("rx_nak")),
        ("rx_dup", c("rx_dup")),
        ("drop_other", c("drop_other")),
        ("drop_malformed", c("drop_malformed")),
        ("drop_icrc", c("drop_icrc")),
        ("drop_opcode", c("drop_opcode")),
        ("drop_qp", c("drop_qp")),
        ("drop_psn", c("drop_psn")),
        ("tx_retransmits", n_retx),
        ("rx_writes", c("rx_writes")),
        ("rx_reads", c("rx_reads")),
        ("tx_read_resp", n_rresp),
    ];
    let mut bus = axil.mmio(&mut sim);
    for (name, w) in &want {
        let got = bus.read32(reg(name));
        if got != *w {
            return Err(format!("counter {name} is {got}, expected {w}"));
        }
    }
    for (q, x) in reference.qps.iter().enumerate() {
        let st = bus.read32(reg(&format!("qp{q}_state")));
        let ep = bus.read32(reg(&format!("qp{q}_epsn")));
        if st & 1 != u32::from(x.err) || st >> 8 != psn[q] || ep != x.epsn {
            return Err(format!(
                "QP {q}: state {st:#x} epsn {ep:#x}, expected error {} psn {:#x} epsn {:#x}",
                x.err, psn[q], x.epsn
            ));
        }
    }
    let (first, last) = {
        let sk = sink.borrow();
        (
            sk.frames.first().map_or(0, |f| f.first),
            sk.frames.last().map_or(0, |f| f.last),
        )
    };
    let first_valid = cmds.borrow().first_valid.unwrap_or(0);
    let last_cpl = cmds.borrow().last_cpl;
    let (mut rd_payload, mut rd_wire, mut rd_cycles) = (0u64, 0u64, 0u64);
    let (mut rd_write_frames, mut rd_frames) = (0u64, 0u64);
    {
        let sent = &src.borrow().sent;
        let writes: Vec<usize> = (0..sent.len().min(rx_kinds.len()))
            .filter(|&i| rx_kinds[i].0)
            .collect();
        if let (Some(&a), Some(&b)) = (writes.first(), writes.last()) {
            for k in &rx_kinds[a..=b] {
                rd_payload += if k.0 { k.1 as u64 } else { 0 };
                rd_wire += k.2 as u64;
                rd_write_frames += u64::from(k.0);
                rd_frames += 1;
            }
            rd_cycles = sent[b].0 + 1 - src.borrow().starts[a];
        }
    }
    let (mut wr_payload, mut wr_wire, mut wr_cycles) = (0u64, 0u64, 0u64);
    {
        let sk = sink.borrow();
        // Write data leaves in READ responses or after a capsule's SQE (in-capsule data).
        let data_bytes = |f: &[u8]| -> u64 {
            match f.get(42) {
                Some(o) if (op::READ_RESPONSE_FIRST..=op::READ_RESPONSE_ONLY).contains(o) => {
                    Packet::decode(f).map_or(0, |p| p.payload.len() as u64)
                }
                Some(&op::SEND_ONLY) => {
                    Packet::decode(f).map_or(0, |p| p.payload.len().saturating_sub(64) as u64)
                }
                _ => 0,
            }
        };
        let resp = |f: &[u8]| {
            f.len() > 42
                && ((op::READ_RESPONSE_FIRST..=op::READ_RESPONSE_ONLY).contains(&f[42])
                    || data_bytes(f) > 0)
        };
        let idx: Vec<usize> = (0..sk.frames.len())
            .filter(|&i| resp(&sk.frames[i].data))
            .collect();
        if let (Some(&a), Some(&b)) = (idx.first(), idx.last()) {
            for f in &sk.frames[a..=b] {
                wr_payload += data_bytes(&f.data);
                wr_wire += f.data.len() as u64;
            }
            wr_cycles = sk.frames[b].last + 1 - sk.frames[a].first;
        }
    }
    Ok(Stats {
        wr_payload,
        wr_wire,
        wr_cycles,
        rd_payload,
        rd_wire,
        rd_cycles,
        rd_write_frames,
        rd_frames,
        cmd_to_wire: first.saturating_sub(first_valid),
        cmd_to_cpl: last_cpl.saturating_sub(first_valid),
        tx_bytes: u64::from(tx_bytes),
        tx_cycles: last.saturating_sub(first) + 1,
        capsules: u64::from(n_cap),
        icd_capsules: u64::from(n_icd),
        completions: cpls.len() as u64,
        lanes: u64::from(sim.signal("m_axis_tdata_o").width() / 8),
    })
}

/// For `testbench bench --suite rdma`: `count` Flush commands over both QPs, a lossless link,
/// no idle cycles or backpressure, the target answering at once.
pub fn bench(count: usize) -> Result<Stats, String> {
    bench_with(
        (0..count)
            .map(|i| Cmd {
                sq: 1 + (i % 2) as u8,
                kind: 0,
                slba: 0,
                nlb: 0,
            })
            .collect(),
        2,
    )
}

/// For `testbench bench --suite rdma`: `count` Reads of `bytes` each (a multiple of 512) over
/// both QPs at path MTU `128 << code`, as [`bench`] otherwise.
pub fn bench_reads(count: usize, bytes: usize, code: u8) -> Result<Stats, String> {
    bench_with(
        (0..count)
            .map(|i| Cmd {
                sq: 1 + (i % 2) as u8,
                kind: 8,
                slba: 0,
                nlb: (bytes / 512 - 1) as u16,
            })
            .collect(),
        code - 1,
    )
}

/// For `testbench bench --suite rdma`: `count` Writes of `bytes` each (a multiple of 512)
/// over both QPs at path MTU `128 << code` (the target fetches each by RDMA READ), as
/// [`bench`] otherwise.
pub fn bench_writes(count: usize, bytes: usize, code: u8) -> Result<Stats, String> {
    bench_with(
        (0..count)
            .map(|i| Cmd {
                sq: 1 + (i % 2) as u8,
                kind: 9,
                slba: 0,
                nlb: (bytes / 512 - 1) as u16,
            })
            .collect(),
        code - 1,
    )
}

fn bench_with(cmds: Vec<Cmd>, mtu: u8) -> Result<Stats, String> {
    let input = Input {
        cmds,
        link: Link {
            drop: 0,
            dup: 0,
            reorder: 0,
            corrupt: 0,
            truncate: 0,
            host_dup: 0,
            host_drop: 0,
            host_reorder: 0,
            host_corrupt: 0,
            blackhole: 0,
        },
        hostile: Vec::new(),
        psn: [0; 4],
        idle: [0; 4],
        mtu: [mtu; 4],
        mem_stall: 0,
        seed: 1,
    };
    run(&input, None, 512)
}

/// The property.
pub struct RdmaProp;

impl Property for RdmaProp {
    type Input = Input;
    const NAME: &'static str = "rdma";
    fn strategy() -> BoxedStrategy<Input> {
        // Kinds 0-7 as `sqe_for`, 8 a small Write (10: its data in the capsule at most MTUs).
        let cmd = (0u8..6, 0u8..9, 0u64..80, 0u16..8).prop_map(|(sq, kind, slba, nlb)| Cmd {
            sq: if sq == 5 { 0 } else { 1 + sq % 4 },
            kind: if kind == 8 { 10 } else { kind },
            slba,
            nlb,
        });
        let rate = prop_oneof![Just(0u8), 1u8..12];
        let link = (
            (
                rate.clone(),
                rate.clone(),
                rate.clone(),
                rate.clone(),
                0u8..4,
            ),
            (0u8..10, rate.clone(), rate.clone(), rate.clone()),
            prop_oneof![8 => Just(0u8), 1 => 1u8..3],
        )
            .prop_map(
                |(
                    (drop, dup, reorder, corrupt, truncate),
                    (host_dup, host_drop, host_reorder, host_corrupt),
                    blackhole,
                )| Link {
                    drop,
                    dup,
                    reorder,
                    corrupt,
                    truncate,
                    host_dup,
                    host_drop,
                    host_reorder,
                    host_corrupt,
                    blackhole,
                },
            );
        let psn = prop_oneof![Just(0u32), 0xff_fff0u32..0x100_0000, any::<u32>()];
        (
            proptest::collection::vec(cmd, 1..24),
            link,
            proptest::collection::vec((0u8..40, any::<u8>(), any::<u8>()), 0..4),
            [psn.clone(), psn.clone(), psn.clone(), psn],
            [0u8..40, 0u8..40, 0u8..40, 0u8..40],
            (
                [0u8..8, 0u8..8, 0u8..8, 0u8..8],
                prop_oneof![Just(0u8), 5u8..30],
            ),
            any::<u64>(),
        )
            .prop_map(
                |(cmds, link, hostile, psn, idle, (mtu, mem_stall), seed)| Input {
                    mtu,
                    mem_stall,
                    cmds,
                    link,
                    hostile,
                    psn,
                    idle,
                    seed,
                },
            )
            .boxed()
    }
    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        run(input, waves, BLOCKS).map(|_| ())
    }
}
