//! Property `rdma_cc`: the RoCEv2 engine's congestion control (DCQCN wired in) and RNR waits,
//! end to end against the target model, over a link that marks frames Congestion Experienced
//! (IPv4 ECN 11) at drawn rates in both directions and drops some of the target's frames.
//! The target is the notification point for the host's frames (a CNP back for a CE-marked
//! frame, at most one per QP per `CNP_GAP` cycles) and refuses some capsules with an RNR NAK
//! (a drawn timer field), taking their retransmission.
//!
//! Checked: every command completes exactly once (with the target's status and DW0, or 22h
//! on a QP that went to error: one QP may have an RNR retry limit of 0, and must go to error
//! exactly when an RNR NAK reached it); the target executed each command at most once; the
//! namespace and host memory are exactly what the executed commands made of them; every frame
//! the host sent decodes, with the exact IPv4 header checksum and a UDP checksum of 0 or the
//! correct one (addresses drawn as in `rdma`, at a carry of the header sum); every CNP
//! the host sent is a well-formed CNP to its QP (the target checks it) and `cnp_tx` equals
//! both the CNPs on the wire and those the target received; `cnp_rx` and `ecn_rx` equal the
//! CNPs and the CE-marked frames the link delivered; a QP's CNPs are at least its interval
//! apart; a capsule refused with an RNR NAK is not sent again before the NAK's timer ran out;
//! right after the first CNP reached the host, that QP's rate read back is below the line rate,
//! and once marking stops every QP is back at the line rate.

use super::engine::{
    confs, edge_addresses, end_checks, host_tos, place, program_qp, program_tos, reg, sqe_for, Buf,
    Cmd, Cmds, BASE, BLOCKS,
};
use crate::drivers::axi_mem::{AxiMemConfig, AxiMemSlave, Memory};
use crate::drivers::axil::{Axil, AxilConfig};
use crate::drivers::axis::{AxisSink, AxisSource};
use crate::models::roce::{check_sender_fields, mark_ce, op, Packet};
use crate::models::roce_target::Target;
use crate::pcap::Pcap;
use crate::prop::Property;
use crate::rng::Rng;
use crate::rtl::regs::roce_csr;
use crate::rtl::RoceTop as Top;
use crate::sim::Sim;
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use std::collections::VecDeque;
use std::path::Path;

/// The tick in the property, cycles (`cc_tick`): 20 cycles stand for 1 µs.
const TICK: u32 = 20;
/// The host's CNP interval, ticks.
const CNP_INTERVAL: u32 = 4;
/// The target's least gap between two CNPs of a QP, cycles.
const CNP_GAP: u64 = 60;
/// The engine's retransmit timeout, cycles.
const RETRY_TIMEOUT: u32 = 4000;
/// Line rate as `rate_o` holds it.
const LINE: u32 = 0xffff;

/// The stimulus.
#[derive(Clone, Debug)]
pub struct Input {
    /// Commands: `sq` 1.. (QP (sq - 1) % qps), `kind` 0 Flush, 1 Write Zeroes, 6 and 7 a Read
    /// inside the namespace (`engine::sqe_for`; Writes are the `rdma` property's).
    pub cmds: Vec<Cmd>,
    /// CE marks, percent of frames: host to target, target to host.
    pub mark_host: u8,
    pub mark_target: u8,
    /// Target frames lost, percent.
    pub drop: u8,
    /// Capsules refused with an RNR NAK, percent, and its timer field (1 to 4: 10 to 40 µs).
    pub rnr: u8,
    pub rnr_timer: u8,
    /// The last QP's RNR retry limit is 0 (its first RNR NAK puts it in error).
    pub strict: bool,
    /// Rates never rise again (no increase timer, no byte counter) and the pacing credit is
    /// 0 bytes: after the first CNP, the capsules of its QP must stay within the rate read
    /// back then (instead of the recovery check). Host frames are marked at 60% at least.
    pub frozen: bool,
    pub psn: [u32; 4],
    /// Idle / backpressure percentages: rx, tx, commands, completions.
    pub idle: [u8; 4],
    /// IPv4 addresses: 0 the fixed ones, else drawn from this (`engine::edge_addresses`).
    pub ips: u64,
    pub seed: u64,
}

/// The RNR NAK timer field in µs (IB table).
fn rnr_us(code: u8) -> u64 {
    super::rnr::IB_RNR_US[usize::from(code & 31)]
}

fn is_rnr_nak(f: &[u8]) -> bool {
    f.len() > 54 && f[42] == op::ACKNOWLEDGE && f[54] >> 5 == 1
}

fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
    let mut sim = Sim::<Top>::maybe_waves(waves);
    let nq = sim.signal("sq_space_o").width() as usize;
    // Path MTU 1024, or the engine's largest if smaller (configs/smallest.toml: 256); its code
    // in the `mtu` CSR is log2(MTU) - 7 (256: 1, 1024: 3).
    let mtu = 1024.min(crate::rtl::config::ROCE_MTU as usize);
    let mtu_code = mtu.trailing_zeros() - 7;
    let mtus: Vec<usize> = vec![mtu; nq];
    let mut confs = confs(&input.psn, nq, &mtus);
    edge_addresses(&mut confs, input.ips, &host_tos(input.seed));
    let confs = confs;
    let mut target = Target::new(&confs, BLOCKS as usize, input.seed);
    target.cnp_gap = Some(CNP_GAP);
    target.rnr_percent = input.rnr;
    target.rnr_timer = input.rnr_timer;
    let src = sim.add(AxisSource::new(
        &sim,
        "s_axis",
        input.seed ^ 1,
        input.idle[0],
    ));
    let sink = sim.add(AxisSink::new(&sim, "m_axis", input.seed ^ 2, input.idle[1]));
    sink.borrow_mut().gapless = true;
    let mem = sim.add(AxiMemSlave::new(
        &sim,
        "m_axi",
        AxiMemConfig {
            seed: input.seed ^ 7,
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
    let strict_q = if input.strict { Some(nq - 1) } else { None };
    {
        let mut bus = axil.mmio(&mut sim);
        bus.write32(roce_csr::CC_TICK, TICK);
        bus.write32(roce_csr::DCQCN_CNP_INTERVAL, CNP_INTERVAL);
        bus.write32(roce_csr::DCQCN_G_SHIFT, 4);
        bus.write32(roce_csr::DCQCN_RATE_AI, 0x1000);
        bus.write32(roce_csr::DCQCN_RATE_HAI, 0x2000);
        bus.write32(roce_csr::DCQCN_RATE_MIN, 0x0800);
        bus.write32(roce_csr::DCQCN_ALPHA_PERIOD, 5);
        bus.write32(
            roce_csr::DCQCN_INC_PERIOD,
            if input.frozen { 0 } else { 10 },
        );
        bus.write32(roce_csr::DCQCN_BYTE_THRESH, 0);
        bus.write32(roce_csr::DCQCN_FAST_STEPS, 2);
        bus.write32(roce_csr::DCQCN_BURST, if input.frozen { 0 } else { 200 });
        target.host_tos = program_tos(&mut bus, input.seed);
        for (q, c) in confs.iter().enumerate() {
            let r = |n: &str| reg(&format!("qp{q}_{n}"));
            program_qp(&mut bus, q, c, mtu_code, 7 << 24 | RETRY_TIMEOUT);
            let limit = if strict_q == Some(q) { 0 } else { 7 };
            bus.write32(r("rnr"), limit);
            bus.write32(r("ctrl"), 1);
        }
    }
    let mut mrng = Rng::new(input.seed ^ 6);
    let mut bufs: Vec<Buf> = Vec::new();
    let mut submitted: Vec<(u16, u16, [u8; 64])> = Vec::new();
    for (i, c) in input.cmds.iter().enumerate() {
        let sqid = 1 + u16::from(c.sq.max(1) - 1) % nq as u16;
        let cid = 0x200 + i as u16;
        let mut sqe = sqe_for(c, cid);
        if sqe[0] == 0x02 {
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
    let mark_host = if input.frozen {
        input.mark_host.max(60)
    } else {
        input.mark_host
    };
    // Rates read back after CNPs (the first one; frozen: every one): (QP, the cycle after
    // the read, Rc).
    let mut paced: Vec<(usize, u64, u64)> = Vec::new();
    let mut link: VecDeque<Vec<u8>> = VecDeque::new();
    let mut seen_tx = 0usize;
    // Both directions as each end sent them (before the link's marks and losses).
    let mut pcap = Pcap::new();
    let mut quiet = 0u64;
    // Counted at the link: CE marks on host frames; CNPs, CE-marked frames and RNR NAKs
    // delivered to the host (per QP for the RNR NAKs).
    let mut marked_host = 0u64;
    let (mut cnp_in, mut ce_in) = (0u32, 0u32);
    let mut rnr_in = vec![0u32; nq];
    // A QP whose RNR retry limit ran out drops every later frame (QP in error).
    let mut dead = vec![false; nq];
    // Frames handed to s_axis so far.
    let mut handed = 0u32;
    // The first CNP delivered (frozen: each one): (QP, frames handed up to it, the next cycle
    // to look whether the engine checked it).
    let mut probe: Option<(usize, u32, u64)> = None;
    let mut probed = false;
    loop {
        sim.step();
        target.now = sim.cycle();
        let mut moved = false;
        let new: Vec<Vec<u8>> = sink.borrow().frames[seen_tx..]
            .iter()
            .map(|f| f.data.clone())
            .collect();
        seen_tx += new.len();
        for mut f in new {
            moved = true;
            pcap.ethernet(&f);
            if rng.chance(mark_host) {
                mark_ce(&mut f);
                marked_host += 1;
            }
            target.receive(&f);
        }
        while let Some(f) = target.out.pop_front() {
            pcap.ethernet(&f);
            if rng.chance(input.drop) {
                continue;
            }
            let mut f = f;
            if rng.chance(input.mark_target) {
                mark_ce(&mut f);
            }
            link.push_back(f);
        }
        if src.borrow().pending() < 2 {
            if let Some(f) = link.pop_front() {
                moved = true;
                let q = confs
                    .iter()
                    .position(|c| u32::from_be_bytes([0, f[47], f[48], f[49]]) == c.host_qpn)
                    .expect("a target frame names a host QP");
                if f[15] & 3 == 3 && !dead[q] {
                    ce_in += 1;
                }
                if f[42] == op::CNP && !dead[q] {
                    cnp_in += 1;
                    if probe.is_none() && (!probed || input.frozen) {
                        probe = Some((q, handed + 1, sim.cycle() + 20));
                    }
                }
                if is_rnr_nak(&f) && !dead[q] {
                    rnr_in[q] += 1;
                    dead[q] = strict_q == Some(q);
                }
                src.borrow_mut().send(f);
                handed += 1;
            }
        }
        // Right after the first CNP reached the host (the engine checked as many frames as
        // were handed to it up to the CNP), the QP's rate is below the line rate: a cut
        // takes increase periods to undo (polled every 50 cycles, well within one).
        if let Some((q, upto, at)) = probe.filter(|p| sim.cycle() >= p.2) {
            let mut bus = axil.mmio(&mut sim);
            if bus.read32(reg("rx_frames")) < upto {
                probe = Some((q, upto, at + 50));
            } else {
                probe = None;
                probed = true;
                let got = bus.read32(reg(&format!("qp{q}_rate")));
                drop(bus);
                paced.push((q, sim.cycle(), u64::from(got & 0xffff)));
                if got & 0xffff >= LINE {
                    return Err(format!(
                        "QP {q}: rate {got:#x} read back after a CNP reached it: not below the line rate"
                    ));
                }
            }
        }
        let busy =
            src.borrow().pending() > 0 || !link.is_empty() || !sink.borrow().partial().is_empty();
        quiet = if moved || busy { 0 } else { quiet + 1 };
        if quiet == 1500 && target.unacked() > 0 {
            target.timeout();
            quiet = 0;
        }
        let done = cmds.borrow().cpls.len() >= submitted.len() && target.unacked() == 0;
        if done && quiet > 300 {
            break;
        }
        if sim.cycle() > 200_000 + 30_000 * input.cmds.len() as u64 {
            return Err(format!(
                "hang: {} of {} commands completed, target has {} unacknowledged",
                cmds.borrow().cpls.len(),
                submitted.len(),
                target.unacked()
            ));
        }
    }
    end_checks(&pcap, &cmds.borrow(), &sink.borrow(), &target)?;
    // The host's frames: its CNPs (on the wire), each QP's at least its interval apart; an
    // RNR-refused capsule not sent again before the NAK's timer ran out.
    let frames: Vec<(u64, Vec<u8>)> = sink
        .borrow()
        .frames
        .iter()
        .map(|f| (f.first, f.data.clone()))
        .collect();
    let mut cnp_wire = 0u32;
    let mut last_cnp: Vec<Option<u64>> = vec![None; nq];
    for (at, f) in &frames {
        let p = Packet::decode(f).map_err(|e| format!("engine sent a bad frame ({e:?})"))?;
        check_sender_fields(f).map_err(|e| format!("engine sent a frame with {e}"))?;
        let q = confs
            .iter()
            .position(|c| c.target_qpn == p.bth.dest_qp)
            .ok_or("frame to an unknown QPN")?;
        if p.bth.opcode == op::CNP {
            cnp_wire += 1;
            if p.net.ecn == 3 {
                return Err(format!("QP {q}: CNP sent with ECN CE"));
            }
            let least = u64::from((CNP_INTERVAL - 1) * TICK);
            if let Some(t) = last_cnp[q].filter(|t| at - t < least) {
                return Err(format!(
                    "QP {q}: CNPs at cycles {t} and {at}, closer than the interval ({CNP_INTERVAL} ticks of {TICK})"
                ));
            }
            last_cnp[q] = Some(*at);
        }
    }
    for &(q, psn, t) in &target.rnr_sent {
        let again = frames.iter().find(|(at, f)| {
            *at > t
                && f[42] == op::SEND_ONLY
                && u32::from_be_bytes([0, f[47], f[48], f[49]]) == confs[q].target_qpn
                && u32::from_be_bytes([0, f[51], f[52], f[53]]) == psn
        });
        // IBA: at least the timer from the NAK (sent at `t`) to the capsule sent again.
        let wait = rnr_us(input.rnr_timer) * u64::from(TICK);
        if let Some((at, _)) = again {
            if at - t < wait && strict_q != Some(q) {
                return Err(format!(
                    "QP {q}: capsule PSN {psn:#x} refused (RNR NAK, {} µs) at cycle {t}, sent again at {at}: {} cycles, the timer is {wait}",
                    rnr_us(input.rnr_timer),
                    at - t
                ));
            }
        }
    }
    // Completions: exactly once each, the target's CQE, or 22h on a QP in error.
    let mut bus = axil.mmio(&mut sim);
    let err: Vec<bool> = (0..nq)
        .map(|q| bus.read32(reg(&format!("qp{q}_state"))) & 1 == 1)
        .collect();
    for (q, e) in err.iter().enumerate() {
        let want = strict_q == Some(q) && rnr_in[q] > 0;
        if *e != want {
            return Err(format!(
                "QP {q}: in error {e}, expected {want} (RNR retry limit {}, {} RNR NAKs delivered)",
                if strict_q == Some(q) { 0 } else { 7 },
                rnr_in[q]
            ));
        }
    }
    let cpls = cmds.borrow().cpls.clone();
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
        match target.executed.iter().find(|e| e.qp == q && e.cid == *cid) {
            Some(ex) if (ex.status, ex.dw0) == (status, dw0) => {}
            _ if status == 0x22 && err[q] => {}
            ex => {
                return Err(format!(
                    "QP {q} CID {cid:#x}: completion status {status:#x} DW0 {dw0:#x}, the target executed {ex:?}"
                ))
            }
        }
    }
    let mut ns = Target::new(&confs, BLOCKS as usize, input.seed).ns;
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
    check_memory(&bufs, &before, &mem.borrow().mem, &target, &cpls)?;
    // Counters: exact against the link.
    let ecn_target: u64 = target.ce_rx.iter().sum();
    let cnp_target: u64 = target.cnp_rx.iter().sum();
    if ecn_target != marked_host {
        return Err(format!(
            "the target saw {ecn_target} CE-marked frames, the link marked {marked_host}"
        ));
    }
    let want = [
        ("cnp_tx", cnp_wire),
        ("cnp_tx", cnp_target as u32),
        ("cnp_rx", cnp_in),
        ("ecn_rx", ce_in),
    ];
    for (name, w) in want {
        let got = bus.read32(reg(name));
        if got != w {
            return Err(format!(
                "counter {name} is {got}, expected {w} (CNPs on the wire {cnp_wire}, at the target {cnp_target}, delivered {cnp_in}; CE frames delivered {ce_in})"
            ));
        }
    }
    if ce_in > 0 && cnp_wire == 0 {
        return Err(format!(
            "{ce_in} CE-marked frames reached the host, it sent no CNP"
        ));
    }
    if input.frozen {
        // Pacing: Rc never rises again, the credit holds no byte, so a capsule (first
        // transmission or again) starts only when the bytes before it since the read are
        // covered by Rc bytes per 65536 line-rate bytes (8 per cycle), plus a beat of slack.
        for &(q, from, rc) in &paced {
            let mut spent = 0u64;
            for (at, f) in frames.iter().filter(|(at, f)| {
                *at >= from
                    && f[42] == op::SEND_ONLY
                    && u32::from_be_bytes([0, f[47], f[48], f[49]]) == confs[q].target_qpn
            }) {
                let allowed = rc * 8 * (at - from) / 65536 + 8;
                if spent > allowed {
                    return Err(format!(
                        "QP {q} paced at Rc {rc:#x} from cycle {from}: a capsule starts at {at} after {spent} bytes, the rate allows {allowed}"
                    ));
                }
                spent += f.len() as u64;
            }
        }
        return Ok(());
    }
    // Marking stopped: every QP is back at the line rate (within F + 16 additive steps and
    // 17 halvings of increase periods).
    drop(bus);
    sim.run(u64::from(10 * TICK) * 60);
    let mut bus = axil.mmio(&mut sim);
    for q in 0..nq {
        let r = bus.read32(reg(&format!("qp{q}_rate")));
        if r != LINE | LINE << 16 {
            return Err(format!(
                "QP {q}: rate {r:#x} after marking stopped, expected the line rate (ffffffff)"
            ));
        }
    }
    Ok(())
}

/// Host memory: a Read completed with success holds the target's data; any other Read's
/// buffer holds, byte by byte, the target's data or what was there; nothing else changed.
fn check_memory(
    bufs: &[Buf],
    before: &Memory,
    after: &Memory,
    target: &Target,
    cpls: &[(u16, u16, u16, u32)],
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
        let mut k = 0usize;
        for &(addr, n) in &b.pieces {
            let i0 = (addr - BASE) as usize;
            inside[i0..i0 + n].fill(true);
            let got = after.read_vec(addr, n);
            let old = before.read_vec(addr, n);
            for j in 0..n {
                let want = sent.map(|d| d[k + j]);
                let good = Some(got[j]) == want || (!ok && got[j] == old[j]);
                if !good {
                    return Err(format!(
                        "SQ id {} CID {:#x}: host memory byte {} is {:#04x}: sent {want:x?}, was {:#04x}",
                        b.sqid, b.cid, k + j, got[j], old[j]
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
    Ok(())
}

/// The property.
pub struct RdmaCcProp;

impl Property for RdmaCcProp {
    type Input = Input;
    const NAME: &'static str = "rdma_cc";
    fn strategy() -> BoxedStrategy<Input> {
        let cmd = (
            1u8..5,
            prop_oneof![Just(0u8), Just(1u8), 6u8..8],
            0u64..80,
            0u16..8,
        )
            .prop_map(|(sq, kind, slba, nlb)| Cmd {
                sq,
                kind,
                slba,
                nlb,
            });
        let psn = prop_oneof![Just(0u32), 0xff_fff0u32..0x100_0000, any::<u32>()];
        (
            proptest::collection::vec(cmd, 1..20),
            (
                prop_oneof![Just(0u8), 5u8..60],
                prop_oneof![Just(0u8), 5u8..60],
                prop_oneof![3 => Just(0u8), 1 => 1u8..6],
            ),
            (
                prop_oneof![Just(0u8), 5u8..40],
                1u8..5,
                prop::bool::weighted(0.2),
                prop::bool::weighted(0.3),
            ),
            [psn.clone(), psn.clone(), psn.clone(), psn],
            [0u8..30, 0u8..30, 0u8..30, 0u8..30],
            (prop_oneof![Just(0u64), any::<u64>()], any::<u64>()),
        )
            .prop_map(
                |(
                    cmds,
                    (mark_host, mark_target, drop),
                    (rnr, rnr_timer, strict, frozen),
                    psn,
                    idle,
                    (ips, seed),
                )| {
                    Input {
                        cmds,
                        mark_host,
                        mark_target,
                        drop,
                        rnr,
                        rnr_timer,
                        strict,
                        frozen,
                        psn,
                        idle,
                        ips,
                        seed,
                    }
                },
            )
            .boxed()
    }
    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        run(input, waves)
    }
}
