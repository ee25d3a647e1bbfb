//! Property `rdma`: the RoCEv2 engine (`roce_*`) as the host side of NVMe/RDMA, against the
//! target model over a link that drops, duplicates, reorders and corrupts the target's frames
//! at chosen rates, and drops, duplicates, reorders and corrupts the engine's (which it sends
//! again, go-back-N, on a NAK 60h or its retransmit timer; one QP may lose every frame, so the
//! engine must give up after its retry limit), with hostile frames mixed in (wrong QPN, wrong
//! P_Key, an RDMA WRITE, an RDMA WRITE Middle or an empty Last outside a message, a SEND First
//! (an opcode the engine does not handle), another UDP
//! port, a truncated frame, a malformed response capsule that ends its QP, RDMA READs with a
//! bad key, a Read's key or one byte out of window), random PSNs near the 24-bit wrap, random
//! idle cycles and backpressure on every stream. Writes move their data by RDMA READ (the target
//! splits each into one to three READs and re-issues lost ones), some through an SGL of a
//! reserved descriptor type (the DMA engine's 11h: zeros go out, the command completes 11h).
//!
//! In half the cases the QPs' IPv4 addresses are drawn so that one kind of frame's header sum
//! sits at a carry of the one's complement fold (`program::edge_addresses`).
//!
//! Checked: every frame the engine sends decodes (IPv4 checksum, ICRC) with the QP's
//! addresses, QPNs and P_Key, its IPv4 header checksum is exactly RFC 791's (never FFFFh for
//! 0000h) and its UDP checksum 0 or correct; capsules carry consecutive PSNs and the SQE with
//! its keyed SGL; every ACK/NAK is one the reference receiver asked for, in order, and none overtakes a READ
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
use crate::models::roce::{check_sender_fields, icrc, ip_checksum, op, Packet};
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

mod bench;
mod host;
mod program;
mod refchip;

pub use bench::{bench, bench_reads, bench_writes};
pub(crate) use host::{buf_bytes, place, Buf, BASE};
use host::{check_memory, check_read_response};
pub(super) use host::{sqe_for, Cmds};
pub(crate) use program::{confs, edge_addresses, host_tos, program_qp, program_tos, reg};
use refchip::{be24, is_write, RefChip, RefQp};

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
    /// IPv4 addresses: 0 the fixed ones, else drawn from this so that a frame's header sum
    /// sits at a carry of the checksum's fold (`edge_addresses`).
    pub ips: u64,
    pub seed: u64,
}

/// The checks every RoCE property ends with: the case's frames into the capture (when one
/// is being taken), then no protocol violation on `io_cpl` or `m_axis` and no error the target
/// model found.
pub(in crate::suites::rdma) fn end_checks(
    pcap: &Pcap,
    cmds: &Cmds,
    sink: &AxisSink,
    target: &Target,
) -> Result<(), String> {
    if super::capturing() {
        super::record(pcap);
    }
    if let Some(v) = cmds.violations.first() {
        return Err(format!("io_cpl protocol: {v}"));
    }
    if let Some(v) = sink.violations.first() {
        return Err(format!("m_axis protocol: {v}"));
    }
    if let Some(e) = target.errors.first() {
        return Err(format!("target: {e}"));
    }
    Ok(())
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
        // A Middle and an empty Last outside a message, and an opcode the engine does not
        // handle, a third each.
        _ if (k / 14).is_multiple_of(3) => Hostile::WriteMiddle,
        _ if (k / 14) % 3 == 1 => Hostile::WriteLastAlone,
        _ => Hostile::UnknownOpcode,
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
    let mut confs = confs(&input.psn, nq, &mtus);
    edge_addresses(&mut confs, input.ips, &host_tos(input.seed));
    let confs = confs;
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
    end_checks(&pcap, &cmds.borrow(), &sink.borrow(), &target)?;
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
        check_sender_fields(f).map_err(|e| format!("engine sent a frame with {e}: {f:02x?}"))?;
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
                prop_oneof![Just(0u64), any::<u64>()],
            ),
            any::<u64>(),
        )
            .prop_map(
                |(cmds, link, hostile, psn, idle, (mtu, mem_stall, ips), seed)| Input {
                    mtu,
                    mem_stall,
                    ips,
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
