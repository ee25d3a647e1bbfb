//! The RoCEv2 engine top `roce_w<bits>_q<qps>_d<outstanding>`. The interface and the rules are
//! documented in `roce/mod.rs`.
//!
//! What lives here (one module, built in this order; each part names its nets as before, so
//! the emitted RTL does not depend on how the generator is split):
//!
//! - `mod.rs`: the ports, the CSR instance and congestion control, what the two sides share
//!   (`Ctx`), then the completions onto `io_cpl`, the QP state updates and the counters
//! - `csr.rs`: the register block `roce_csr`
//! - `qp.rs`: a QP's CSR fields and state registers
//! - `tx.rs`: the transmit side (frame buffer, ICRC, the next frame's choice, capsules)
//! - `rx.rs`: the receive side (parser, checks, PSN rules, RDMA WRITE and its DMA, READ
//!   requests to the responder, the DMA engine's completions)

use super::cc::Cc;
use super::frame::{self, be, ip_checksum, NetFields};
use super::records::{Events, Records};
use super::RoceParams;
use crate::blocks::crc::{crc, CRC32};
use crate::dma::engine::engine_windowed;
use crate::dma::DmaParams;
use hdl_builder::prelude::*;
use hdl_builder::{Error, ErrorKind, Errors};
use std::panic::Location;
use std::rc::Rc;

mod csr;
mod qp;
mod rx;
mod tx;

pub use csr::{qp_base, register_map, COUNTERS};
use qp::Qp;

/// The module name: `roce_w<bits>_q<qps>_d<outstanding>`.
pub fn module_name(p: &RoceParams) -> String {
    format!("roce_w{}_q{}_d{}", p.data_width, p.qps, p.outstanding)
}

/// `n` ones from bit 0 in a `lanes`-bit mask (n <= lanes), from a count signal.
fn ones_mask(count: Expr, lanes: u32) -> Expr {
    (lit(lanes + 1, 1).shl_by(count) - 1u64).slice(lanes - 1, 0)
}

/// Bytes (frame order) packed little-endian into `width` bits: byte 0 in bits 7:0.
fn pack(bytes: &[Expr], width: u32) -> Expr {
    let e = cat(bytes.iter().rev().cloned());
    let w = e.width();
    if w < width {
        cat([zeros(width - w), e])
    } else {
        e
    }
}

/// Bytes of the transmit buffer (the largest frame: a capsule, 122 bytes).
const TX_BYTES: u32 = 128;
/// Bytes of a received frame kept for the checks.
const RX_BYTES: u32 = 80;

/// Bytes of the CRC input beat that starts at frame offset `pos` and lie before `end` (where
/// the CRC input ends): `lanes` for a full beat, fewer on the last one, 0 past the end.
fn crc_beat_bytes(end: Sig, pos: Sig, lanes: u32) -> Expr {
    mux(
        end.gt(pos),
        mux(
            (end - pos).gt(u64::from(lanes)),
            lit(4, u128::from(lanes)),
            (end - pos).slice(3, 0),
        ),
        lit(4, 0),
    )
}

/// The DMA engine's parameters inside the RoCEv2 engine: 64-bit streams, a tag of `{qp, slot}`,
/// the length width, reads in flight and AXI ID width from the chip's `[dma]` section.
pub fn dma_params(p: &RoceParams, dma: &DmaParams) -> DmaParams {
    DmaParams {
        data_width: p.data_width,
        tag_width: clog2(u64::from(p.qps)).max(1) + clog2(u64::from(p.outstanding)).max(1),
        ..*dma
    }
}

/// Words (8 bytes) of the receive payload buffer: an RDMA WRITE packet's payload at the largest
/// MTU, from frame byte 54 (after the BTH; a RETH takes the first 16 bytes).
pub fn payload_words(p: &RoceParams) -> u32 {
    (p.mtu + 16) / 8
}

/// Picks the lowest set bit of `v` [n] as a `w`-bit index (0 when none), as net `name`.
fn pick_lowest(m: &mut ModuleBuilder, name: &str, v: Expr, n: u32, w: u32) -> Sig {
    let mut e: Expr = lit(w, 0);
    for i in (0..n).rev() {
        e = mux(v.bit(i), lit(w, u128::from(i)), e);
    }
    m.net(name, e)
}

/// `f` of the QP `idx` names (QP 0's for an index beyond them).
fn select_qp(qps: &[Qp], idx: Sig, f: &dyn Fn(&Qp) -> Expr) -> Expr {
    let mut e = f(&qps[0]);
    for (q, x) in qps.iter().enumerate().skip(1) {
        e = mux(idx.eq(q as u64), f(x), e);
    }
    e
}

/// Register `f` [w] of slot `slot` of QP `qp` (0 for an index beyond them); `d` slots per QP.
fn select_slot(
    qps: &[Qp],
    d: u32,
    qp: Sig,
    slot: Sig,
    w: u32,
    f: &dyn Fn(&Qp, usize) -> Sig,
) -> Expr {
    let mut e = lit(w, 0);
    for (q, x) in qps.iter().enumerate() {
        for s in 0..d as usize {
            e = mux(qp.eq(q as u64) & slot.eq(s as u64), f(x, s), e);
        }
    }
    e
}

/// Ethernet, IPv4 and UDP for QP fields `x`, the IPv4 total length `ip_len` [16].
fn net_bytes(x: &Qp, q: u32, ip_len: u64, tos: Sig) -> Vec<Expr> {
    let f = NetFields {
        tos: tos.ex(),
        rmac: x.rmac.ex(),
        lmac: x.lmac.ex(),
        lip: x.lip.ex(),
        rip: x.rip.ex(),
        ip_len: lit(16, u128::from(ip_len)),
        udp_len: lit(16, u128::from(ip_len - 20)),
        sport: lit(16, 0xc000 + u128::from(q)),
    };
    frame::net_bytes(&f, &ip_checksum(&f))
}

/// The BTH of a frame of QP `x`.
fn bth_bytes(x: &Qp, opcode: u64, ack_req: bool, psn: Expr) -> Vec<Expr> {
    let mut b = vec![lit(8, u128::from(opcode)), lit(8, 0)];
    b.extend(be(&x.pkey.ex(), 2));
    b.push(lit(8, 0));
    b.extend(be(&x.rqpn.ex(), 3));
    b.push(lit(8, if ack_req { 0x80 } else { 0 }));
    b.extend(be(&psn, 3));
    b
}

/// What the transmit and receive sides share: sizes, ports, the QPs and their derived state.
#[derive(Clone, Copy)]
struct Ctx<'a> {
    dw: u32,
    lanes: u32,
    nq: u32,
    d: u32,
    qw: u32,
    sw: u32,
    l: u32,
    reset: ResetStyle,
    crc_mod: &'a Rc<Module>,
    dma_eng: &'a Rc<Module>,
    dp: &'a DmaParams,
    cmd: &'a Stream,
    tx_data: Sig,
    tx_keep: Sig,
    tx_last: Sig,
    tx_valid: Sig,
    tx_ready: Sig,
    rx_data: Sig,
    rx_keep: Sig,
    rx_last: Sig,
    rx_valid: Sig,
    rx_ready: Sig,
    data_tos: Sig,
    cnp_tos: Sig,
    cc: &'a Cc,
    qps: &'a [Qp],
    dead: &'a [Sig],
    live: &'a [Sig],
}

/// The engine, named by [`module_name`]; `dma` gives the DMA engine's length width, reads in
/// flight and AXI ID width (its data width is the stream width).
pub fn engine(p: &RoceParams, dma: &DmaParams, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let name = module_name(p);
    let bad = |msg: String| {
        Err(Errors(vec![Error {
            kind: ErrorKind::Invalid,
            module: name.clone(),
            signal: None,
            loc: Location::caller(),
            message: msg,
        }]))
    };
    if p.data_width != 64 {
        return bad(format!("{name}: data width {}; use 64", p.data_width));
    }
    if !(1..=8).contains(&p.qps) || !(1..=16).contains(&p.outstanding) {
        return bad(format!(
            "{name}: {} QPs (use 1 to 8), {} outstanding (use 1 to 16)",
            p.qps, p.outstanding
        ));
    }
    if !p.mtu.is_power_of_two() || !(256..=4096).contains(&p.mtu) {
        return bad(format!(
            "{name}: MTU {}; use 256, 512, 1024, 2048 or 4096",
            p.mtu
        ));
    }
    let dw = p.data_width;
    let lanes = dw / 8;
    let nq = p.qps;
    let d = p.outstanding;
    let qw = clog2(u64::from(nq)).max(1);
    let sw = clog2(u64::from(d)).max(1);
    let dp = dma_params(p, dma);
    let l = dp.len_width;
    if l > 24 {
        return bad(format!(
            "{name}: DMA length width {l}; the RoCEv2 window is 24 bits, use dma.len_width <= 24"
        ));
    }
    let dma_eng = engine_windowed(&dp, reset)?;
    let crc_mod = crc(&CRC32, dw, reset)?;
    let map = register_map(p)?;
    let csr = map.module(reset)?;

    let mut m = ModuleBuilder::with_reset(&name, reset);
    m.doc(&format!(
        "RoCEv2 transport engine, host side: {nq} queue pairs (SQ id q+1 on QP q), {d} commands each,"
    ));
    m.doc("command capsules out as SEND Only, response capsules in, ACK/NAK, ICRC at line rate.");
    m.doc("Frames on m_axis/s_axis: Ethernet without FCS, packed from lane 0.");
    m.doc("See hdl-gen/src/roce/mod.rs for the interface and the order of the checks.");
    m.clock();
    m.reset();
    m.group("commands in, completions out");
    let cmd = m.stream_in(
        "io_cmd",
        &StreamDef::new().field("sqid", 16).field("sqe", 512),
    );
    let space = m.output("sq_space_o", nq);
    m.comment(
        space,
        "bit q: a command of SQ id q+1 is taken without waiting",
    );
    let cpl = m.stream_out(
        "io_cpl",
        &StreamDef::new()
            .field("sqid", 16)
            .field("cid", 16)
            .field("status", 15)
            .field("dw0", 32),
    );
    m.group("Ethernet transmit (AXI4-Stream)");
    let tx_data = m.output("m_axis_tdata_o", dw);
    let tx_keep = m.output("m_axis_tkeep_o", lanes);
    let tx_last = m.output("m_axis_tlast_o", 1);
    let tx_valid = m.output("m_axis_tvalid_o", 1);
    let tx_ready = m.input("m_axis_tready_i", 1);
    m.group("Ethernet receive (AXI4-Stream)");
    let rx_data = m.input("s_axis_tdata_i", dw);
    let rx_keep = m.input("s_axis_tkeep_i", lanes);
    let rx_last = m.input("s_axis_tlast_i", 1);
    let rx_valid = m.input("s_axis_tvalid_i", 1);
    let rx_ready = m.output("s_axis_tready_o", 1);

    let u_csr = m.instance("u_csr", &csr);
    let d_ecn = m.bind_out(u_csr, "tx_tos_data_ecn_o");
    let d_dscp = m.bind_out(u_csr, "tx_tos_data_dscp_o");
    let c_dscp = m.bind_out(u_csr, "tx_tos_cnp_dscp_o");
    let data_tos = m.net("tx_data_tos", cat([d_dscp.ex(), d_ecn.ex()]));
    m.comment(
        data_tos,
        "IPv4 TOS of capsules, ACKs and READ responses (CSR tx_tos)",
    );
    let cnp_tos = m.net("tx_cnp_tos", cat([c_dscp.ex(), lit(2, 0)]));
    m.bind(
        u_csr,
        "in_capsule_bytes_i",
        lit(17, u128::from(p.in_capsule_bytes)),
    );
    let cc = super::cc::attach(&mut m, u_csr, p, reset)?;

    // ------------------------------------------------------------ QP configuration and state
    let qps: Vec<Qp> = (0..nq).map(|q| Qp::new(&mut m, u_csr, p, q)).collect();
    // A QP that is disabled or in error refuses commands and drains its slots.
    let dead: Vec<Sig> = qps
        .iter()
        .enumerate()
        .map(|(q, x)| m.net(&format!("qp{q}_dead"), !x.up.q | x.err.q))
        .collect();
    // Completion records (records.rs): a slot whose CQE came in is no longer live.
    let recs = Records::new(&mut m, nq, d);
    let live: Vec<Sig> = qps
        .iter()
        .enumerate()
        .map(|(q, x)| m.net(&format!("qp{q}_slot_live"), recs.live(q, x.slot_valid.q)))
        .collect();
    let sel_slot = |qp: Sig, slot: Sig, w: u32, f: &dyn Fn(&Qp, usize) -> Sig| -> Expr {
        select_slot(&qps, d, qp, slot, w, f)
    };

    // ------------------------------------------------------------ transmit (tx.rs)
    let ctx = Ctx {
        dw,
        lanes,
        nq,
        d,
        qw,
        sw,
        l,
        reset,
        crc_mod: &crc_mod,
        dma_eng: &dma_eng,
        dp: &dp,
        cmd: &cmd,
        tx_data,
        tx_keep,
        tx_last,
        tx_valid,
        tx_ready,
        rx_data,
        rx_keep,
        rx_last,
        rx_valid,
        rx_ready,
        data_tos,
        cnp_tos,
        cc: &cc,
        qps: &qps,
        dead: &dead,
        live: &live,
    };
    let tx = tx::transmit(&mut m, p, &ctx);
    // ------------------------------------------------------------ receive (rx.rs)
    let rx = rx::receive(&mut m, p, &ctx, &tx)?;
    let tx::Tx {
        tx_fire,
        t_lastb,
        out_keep,
        ack_q,
        load_ack,
        resending,
        rs_hit,
        rs_q,
        load_resend,
        sqid,
        sqe,
        cmd_q,
        known,
        cmd_dead,
        cmd_slot,
        load_cmd,
        cap_job,
        new_sqe,
        cap_q,
        ack_is_nak,
        ..
    } = tx;
    let rx::Rx {
        in_chk,
        rfire,
        rbytes,
        psn,
        syn,
        cqe_dw0,
        cqe_status,
        is_wf,
        is_wm,
        has_reth,
        wr_pay,
        reth_len,
        rq,
        cause,
        why,
        hit_slot,
        kslot,
        ev_rd_ok,
        rd_accept,
        rd_span,
        ev_wr_ok,
        ev_wr_end,
        ev_complete,
        ev_ahead,
        ev_nak_seq,
        ev_dup,
        ev_inorder,
        ev_bad,
        ev_ack,
        ev_fatal_nak,
        new_ack,
        new_syn,
        new_psn,
        new_msn,
        w_slot,
        w_off,
        u_dma,
        start_dma,
        rr_in,
        rr,
        md_v,
        md_st,
        dma_idle,
        md_qp,
        md_slot,
        md_err,
        sel_rx,
    } = rx;

    // ------------------------------------------------------------ completions
    let drain_v = m.net(
        "drain_qps",
        cat(qps
            .iter()
            .enumerate()
            .rev()
            .map(|(q, _)| (dead[q] & live[q].any()).ex())),
    );
    // A completion on io_cpl stays until taken: its source is held meanwhile.
    let lock = m.reg("cpl_lock", 2, 0);
    m.comment(
        lock.q,
        "source held while io_cpl waits: 0 none, 1 rx, 2 drain, 3 refused command",
    );
    let rec_take = m.net("rec_take", sel_rx & cpl.ready);
    let rec_hold = m.net("rec_hold", lock.q.eq(1u64));
    // A slot's DMA commands: a WRITE's payload, or a READ job with data (a frame is one or the
    // other).
    let rec_issue = m.net(
        "rec_dma_issue",
        start_dma | (rd_accept & rr_in.len.ne(0u64)),
    );
    let rec_issue_slot = m.net("rec_dma_slot", mux(rd_accept, kslot, w_slot));
    let rec = recs.logic(
        &mut m,
        &Events {
            rec: ev_complete,
            rec_qp: rq,
            rec_slot: hit_slot,
            status: cqe_status,
            dw0: cqe_dw0,
            issue: rec_issue,
            issue_qp: rq,
            issue_slot: rec_issue_slot,
            issue2: cap_job,
            issue2_qp: cap_q,
            issue2_slot: rr_in.cap_slot,
            answer: md_v,
            answer_qp: md_qp,
            answer_slot: md_slot,
            take: rec_take,
            hold: rec_hold,
        },
        qw,
        sw,
    );
    let dq_lk = m.reg("drain_qp_held", qw, 0);
    let ds_lk = m.reg("drain_slot_held", sw, 0);
    let drain_any = m.net("drain_any", drain_v.any());
    let drain_q_now = pick_lowest(&mut m, "drain_qp_now", drain_v.ex(), nq, qw);
    let drain_slots = m.net("drain_slots", {
        let mut e = live[0].ex();
        for (q, v) in live.iter().enumerate().skip(1) {
            e = mux(drain_q_now.eq(q as u64), *v, e);
        }
        e
    });
    let drain_slot_now = pick_lowest(&mut m, "drain_slot_now", drain_slots.ex(), d, sw);
    let held_drain = m.net("cpl_held_drain", lock.q.eq(2u64));
    let free_src = m.net("cpl_free", lock.q.eq(0u64));
    let drain_q = m.net("drain_qp", mux(held_drain, dq_lk.q, drain_q_now));
    let drain_slot = m.net("drain_slot", mux(held_drain, ds_lk.q, drain_slot_now));
    m.assign(sel_rx, rec.any & (free_src | lock.q.eq(1u64)));
    let drain = m.net(
        "drain",
        held_drain | (free_src & !rec.any & drain_any & dma_idle),
    );
    let bounce = m.net(
        "bounce",
        lock.q.eq(3u64) | (free_src & !rec.any & !drain_any & cmd.valid & (!known | cmd_dead)),
    );
    m.assign(cpl.valid, sel_rx | drain | bounce);
    m.assign(
        lock.d,
        mux(
            cpl.valid & !cpl.ready,
            mux(sel_rx, lit(2, 1), mux(drain, lit(2, 2), lit(2, 3))),
            lit(2, 0),
        ),
    );
    m.assign(dq_lk.d, drain_q);
    m.assign(ds_lk.d, drain_slot);
    let cpl_fire = m.net("cpl_fire", cpl.valid & cpl.ready);
    let rx_derr = m.net(
        "rx_cpl_dma_status",
        sel_slot(rec.qp, rec.slot, 11, &|x, s| x.slot_derr[s].q),
    );
    m.comment(
        rx_derr,
        "a host memory error of the command's WRITEs replaces the CQE's status",
    );
    let rec_cid = m.net(
        "rec_cid",
        sel_slot(rec.qp, rec.slot, 16, &|x, s| x.slot_cid[s].q),
    );
    let drain_cid = m.net(
        "drain_cid",
        sel_slot(drain_q, drain_slot, 16, &|x, s| x.slot_cid[s].q),
    );
    m.assign(
        cpl.field("sqid"),
        mux(
            sel_rx,
            rec.qp.zext(16) + 1u64,
            mux(drain, drain_q.zext(16) + 1u64, sqid.ex()),
        ),
    );
    m.assign(
        cpl.field("cid"),
        mux(
            sel_rx,
            rec_cid.ex(),
            mux(drain, drain_cid.ex(), sqe.slice(31, 16)),
        ),
    );
    m.assign(
        cpl.field("status"),
        mux(
            sel_rx,
            mux(rx_derr.ne(0u64), rx_derr.zext(15), rec.status.ex()),
            lit(15, 0x22),
        ),
    );
    m.assign(cpl.field("dw0"), mux(sel_rx, rec.dw0.ex(), lit(32, 0)));
    m.assign(cmd.ready, load_cmd | (bounce & cpl.ready));
    m.assign(
        space,
        cat(qps
            .iter()
            .enumerate()
            .rev()
            .map(|(q, x)| (dead[q] | (!x.slot_valid.q).any()).ex())),
    );

    // ------------------------------------------------------------ QP state updates
    for (q, x) in qps.iter().enumerate() {
        let qi = q as u64;
        let here = m.net(&format!("rx_here{q}"), rq.eq(qi));
        let cmd_here = m.net(&format!("cmd_here{q}"), load_cmd & cmd_q.eq(qi));
        let ack_here = m.net(&format!("ack_here{q}"), load_ack & ack_q.eq(qi));
        let rs_here = m.net(&format!("resend_here{q}"), load_resend & rs_q.eq(qi));
        let skip = m.net(
            &format!("qp{q}_resend_skip"),
            resending[q] & !rs_hit[q].any(),
        );
        m.comment(
            skip,
            "the PSN to resend belongs to a completed command: skip it",
        );
        let ack_in = m.net(
            &format!("qp{q}_ack_in"),
            here & ev_ack & syn.slice(7, 5).eq(0u64),
        );
        let nak_seq_in = m.net(
            &format!("qp{q}_nak_seq_in"),
            here & ev_ack & syn.eq(0x60u64),
        );
        let outstanding = m.net(&format!("qp{q}_unacked"), x.spsn.q - x.una.q);
        let ack_off = m.net(&format!("qp{q}_ack_off"), psn - x.una.q);
        let rnr_in = m.net(
            &format!("qp{q}_rnr_in"),
            here & ev_ack & syn.slice(7, 5).eq(1u64) & ack_off.lt(outstanding),
        );
        m.comment(rnr_in, "an RNR NAK for an unacknowledged capsule");
        let progress = m.net(&format!("qp{q}_progress"), ack_in & ack_off.lt(outstanding));
        let (rnr_wait, rnr_give_up) = cc.rnr(&mut m, q as u32, rnr_in, syn, progress, x.up.q);
        let idle_q = m.net(&format!("qp{q}_all_acked"), x.una.q.eq(x.spsn.q));
        let expired = m.net(&format!("qp{q}_expired"), x.timer.q.ge(x.timeout));
        let limit_hit = m.net(
            &format!("qp{q}_limit_hit"),
            x.limit.ne(7u64) & x.retries.q.eq(x.limit),
        );
        let give_up = m.net(
            &format!("qp{q}_give_up"),
            x.up.q & !idle_q & expired & limit_hit,
        );
        m.comment(give_up, "too many timeouts in a row: the QP goes to error");
        m.comb(|c| {
            c.set(x.una.d, x.una.q);
            c.set(x.rpsn.d, x.rpsn.q);
            c.set(x.timer.d, x.timer.q);
            c.set(x.retries.d, x.retries.q);
            for (s, (sq, sp)) in x.slot_sqe.iter().zip(&x.slot_psn).enumerate() {
                c.set(sq.d, sq.q);
                c.set(sp.d, sp.q);
                c.if_(cmd_here & cmd_slot.eq(s as u64), |c| {
                    c.set(sq.d, new_sqe);
                    c.set(sp.d, x.spsn.q);
                });
            }
            c.if_(!x.up.q, |c| {
                c.set(x.una.d, x.sq_psn);
                c.set(x.rpsn.d, x.sq_psn);
                c.set(x.timer.d, 0u64);
                c.set(x.retries.d, 0u64);
            })
            .else_(|c| {
                c.if_(cmd_here, |c| c.set(x.rpsn.d, x.spsn.q + 1u64))
                    .else_if(rs_here | skip, |c| c.set(x.rpsn.d, x.rpsn.q + 1u64));
                c.if_(idle_q | rnr_wait, |c| {
                    c.set(x.timer.d, 0u64);
                    c.set(x.retries.d, 0u64);
                })
                .else_if(expired, |c| {
                    c.set(x.timer.d, 0u64);
                    c.if_(!limit_hit, |c| {
                        c.set(x.retries.d, x.retries.q + 1u64);
                        c.set(x.rpsn.d, x.una.q);
                    });
                })
                .else_(|c| c.set(x.timer.d, x.timer.q + 1u64));
                c.if_(ack_in & ack_off.lt(outstanding), |c| {
                    c.set(x.una.d, psn + 1u64);
                    c.set(x.timer.d, 0u64);
                    c.set(x.retries.d, 0u64);
                });
                c.if_((nak_seq_in & ack_off.le(outstanding)) | rnr_in, |c| {
                    c.set(x.una.d, psn);
                    c.set(x.rpsn.d, psn);
                    c.set(x.timer.d, 0u64);
                });
            });
        });
        let fatal_pend = m.net(
            &format!("qp{q}_fatal_pend"),
            x.ack_pend.q & (x.ack_syn.q.eq(0x61u64) | x.ack_syn.q.eq(0x62u64)),
        );
        let alloc = m.net(
            &format!("qp{q}_alloc"),
            mux(cmd_here, lit(d, 1).shl_by(cmd_slot), lit(d, 0)),
        );
        let freed = m.net(
            &format!("qp{q}_freed"),
            mux(
                cpl_fire & sel_rx & rec.qp.eq(qi),
                lit(d, 1).shl_by(rec.slot),
                mux(
                    cpl_fire & drain & drain_q.eq(qi),
                    lit(d, 1).shl_by(drain_slot),
                    lit(d, 0),
                ),
            ),
        );
        m.comb(|c| {
            c.set(x.up.d, x.en);
            c.set(x.err.d, x.err.q);
            c.set(x.spsn.d, x.spsn.q);
            c.set(x.epsn.d, x.epsn.q);
            c.set(x.msn.d, x.msn.q);
            c.set(x.nak_sent.d, x.nak_sent.q);
            c.set(x.ack_pend.d, x.ack_pend.q);
            c.set(x.ack_syn.d, x.ack_syn.q);
            c.set(x.ack_psn.d, x.ack_psn.q);
            c.set(x.ack_msn.d, x.ack_msn.q);
            c.set(x.wr_on.d, x.wr_on.q);
            c.set(x.wr_slot.d, x.wr_slot.q);
            c.set(x.wr_off.d, x.wr_off.q);
            c.set(x.wr_left.d, x.wr_left.q);
            c.set(x.slot_valid.d, (x.slot_valid.q | alloc) & !freed);
            c.set(x.slot_sgl.d, x.slot_sgl.q);
            for s in 0..d as usize {
                let (r, dp_r, de) = (x.slot_cid[s], x.slot_dptr[s], x.slot_derr[s]);
                c.set(r.d, r.q);
                c.set(dp_r.d, dp_r.q);
                c.set(de.d, de.q);
                c.if_(
                    md_err & md_qp.eq(qi) & md_slot.eq(s as u64) & de.q.eq(0u64),
                    |c| c.set(de.d, md_st),
                );
                c.if_(cmd_here & cmd_slot.eq(s as u64), |c| {
                    c.set(r.d, sqe.slice(31, 16));
                    c.set(dp_r.d, sqe.slice(319, 192));
                    c.set(de.d, 0u64);
                    c.set(
                        x.slot_sgl.d,
                        (x.slot_sgl.q & !lit(d, 1 << s))
                            | mux(sqe.slice(15, 14).ne(0u64), lit(d, 1 << s), lit(d, 0)),
                    );
                });
            }
            c.if_(!x.up.q, |c| {
                // Stopped: follow the CSRs.
                c.set(x.err.d, 0u64);
                c.set(x.spsn.d, x.sq_psn);
                c.set(x.epsn.d, x.rq_psn);
                c.set(x.msn.d, 0u64);
                c.set(x.nak_sent.d, 0u64);
                c.set(x.ack_pend.d, 0u64);
                c.set(x.wr_on.d, 0u64);
            })
            .else_(|c| {
                c.if_(cmd_here, |c| c.set(x.spsn.d, x.spsn.q + 1u64));
                c.if_(ack_here, |c| c.set(x.ack_pend.d, 0u64));
                c.if_(here & (ev_inorder | ev_rd_ok), |c| {
                    c.set(x.nak_sent.d, 0u64)
                });
                c.if_(here & ev_nak_seq, |c| c.set(x.nak_sent.d, 1u64));
                c.if_(here & (ev_complete | ev_wr_ok), |c| {
                    c.set(x.epsn.d, x.epsn.q + 1u64)
                });
                c.if_(here & (ev_complete | ev_wr_end | ev_rd_ok), |c| {
                    c.set(x.msn.d, x.msn.q + 1u64)
                });
                c.if_(here & ev_rd_ok, |c| c.set(x.epsn.d, x.epsn.q + rd_span));
                c.if_(here & ev_wr_ok, |c| {
                    c.set(x.wr_on.d, is_wf | is_wm);
                    c.set(x.wr_off.d, w_off + wr_pay.resize(24));
                    c.set(
                        x.wr_left.d,
                        mux(has_reth, reth_len.slice(23, 0), x.wr_left.q) - wr_pay.resize(24),
                    );
                    c.if_(has_reth, |c| c.set(x.wr_slot.d, kslot));
                });
                c.if_(
                    (here & (ev_bad | ev_fatal_nak)) | give_up | rnr_give_up,
                    |c| c.set(x.err.d, 1u64),
                );
                c.if_(here & new_ack & !fatal_pend, |c| {
                    c.set(x.ack_pend.d, 1u64);
                    c.set(x.ack_syn.d, new_syn);
                    c.set(x.ack_psn.d, new_psn);
                    c.set(x.ack_msn.d, new_msn);
                });
            });
        });
    }

    // ------------------------------------------------------------ counters
    let ev = |c: Expr| c.zext(32);
    let tx_beat_bytes = m.net(
        "tx_beat_bytes",
        (0..lanes).fold(lit(4, 0), |a, i| a + out_keep.bit(i).zext(4)),
    );
    let drop_is = |k: &str| (in_chk & why.eq(cause.item(k))).ex();
    let incs: Vec<(&str, Expr)> = vec![
        ("tx_frames", ev(((tx_fire & t_lastb) | rr.frame_done).ex())),
        (
            "tx_bytes",
            mux(tx_fire, tx_beat_bytes.zext(32), rr.beat_bytes.zext(32)),
        ),
        ("tx_capsules", ev(load_cmd.ex())),
        ("tx_ack", ev((load_ack & !ack_is_nak).ex())),
        ("tx_nak", ev((load_ack & ack_is_nak).ex())),
        ("rx_frames", ev(in_chk.ex())),
        ("rx_bytes", mux(rfire, rbytes.zext(32), lit(32, 0))),
        ("rx_ack", ev((ev_ack & syn.slice(7, 5).eq(0u64)).ex())),
        ("rx_nak", ev((ev_ack & syn.slice(7, 5).ne(0u64)).ex())),
        ("rx_dup", ev(ev_dup.ex())),
        ("drop_other", ev(drop_is("DROP_OTHER"))),
        ("drop_malformed", ev(drop_is("DROP_MALFORMED"))),
        ("drop_icrc", ev(drop_is("DROP_ICRC"))),
        ("drop_opcode", ev(drop_is("DROP_OPCODE"))),
        ("drop_qp", ev(drop_is("DROP_QP"))),
        ("drop_psn", ev(ev_ahead.ex())),
        ("tx_retransmits", ev(load_resend.ex())),
        ("rx_writes", ev(ev_wr_ok.ex())),
        ("rx_reads", ev(rd_accept.ex())),
        ("tx_read_resp", ev(rr.resp_done.ex())),
    ];
    for (name, inc) in incs {
        let c = m.reg(&format!("cnt_{name}"), 32, 0);
        m.assign(c.d, c.q + inc);
        m.bind(u_csr, &format!("{name}_value_i"), c.q);
    }
    m.group("host memory (AXI4 master of the DMA engine)");
    m.pass_through(u_dma, "m_axi_");
    m.group("CSRs (AXI4-Lite slave)");
    m.pass_through(u_csr, "s_axil_");
    m.finish()
}
