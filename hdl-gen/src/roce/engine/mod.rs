//! The RoCEv2 engine top: QP state, the frame builder with its ICRC, the frame parser with its
//! checks, command slots and completions. The interface and the rules are documented in
//! `mod.rs`.

use super::frame::{self, be, byte, checksum, icrc_byte, ip_checksum, NetFields, ICRC_MASKED};
use super::read::{psn_span, responder, RespIn, RespQp};
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

/// The engine, named by [`module_name`]; `dma` gives the DMA engine's length width, reads in
/// flight and AXI ID width (its data width is the stream width).
#[track_caller]
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
    let pick_lowest = |m: &mut ModuleBuilder, name: &str, v: Expr, n: u32, w: u32| -> Sig {
        let mut e: Expr = lit(w, 0);
        for i in (0..n).rev() {
            e = mux(v.bit(i), lit(w, u128::from(i)), e);
        }
        m.net(name, e)
    };
    let sel_q = |idx: Sig, f: &dyn Fn(&Qp) -> Expr| -> Expr {
        let mut e = f(&qps[0]);
        for (q, x) in qps.iter().enumerate().skip(1) {
            e = mux(idx.eq(q as u64), f(x), e);
        }
        e
    };
    // Register `f` [w] of slot `slot` of QP `qp` (0 for an index beyond them).
    let sel_slot = |qp: Sig, slot: Sig, w: u32, f: &dyn Fn(&Qp, usize) -> Sig| -> Expr {
        let mut e = lit(w, 0);
        for (q, x) in qps.iter().enumerate() {
            for s in 0..d as usize {
                e = mux(qp.eq(q as u64) & slot.eq(s as u64), f(x, s), e);
            }
        }
        e
    };

    // ------------------------------------------------------------ frame fields
    // Ethernet, IPv4 and UDP for QP fields `x`, the IPv4 total length `ip_len` [16].
    let net_bytes = |x: &Qp, q: u32, ip_len: u64, tos: Sig| -> Vec<Expr> {
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
    };
    // BTH.
    let bth_bytes = |x: &Qp, opcode: u64, ack_req: bool, psn: Expr| -> Vec<Expr> {
        let mut b = vec![lit(8, u128::from(opcode)), lit(8, 0)];
        b.extend(be(&x.pkey.ex(), 2));
        b.push(lit(8, 0));
        b.extend(be(&x.rqpn.ex(), 3));
        b.push(lit(8, if ack_req { 0x80 } else { 0 }));
        b.extend(be(&psn, 3));
        b
    };

    // ------------------------------------------------------------ transmit
    let tbuf = m.reg("tx_buf", TX_BYTES * 8, 0);
    m.comment(
        tbuf.q,
        "the frame being sent, byte 0 in bits 7:0 (the ICRC's place is zero)",
    );
    let tlen = m.reg("tx_len", 8, 0);
    m.comment(tlen.q, "its length in bytes; 0: idle");
    let tidx = m.reg("tx_idx", 4, 0);
    m.comment(tidx.q, "the beat on m_axis");
    let t_busy = m.net("tx_busy", tlen.q.ne(0u64));
    let tx_fire = m.net("tx_fire", t_busy & tx_ready);
    let n_out = m.net("tx_left", tlen.q - cat([tidx.q.ex(), zeros(3)]).zext(8));
    let t_lastb = m.net("tx_last_beat", n_out.le(u64::from(lanes)));
    let out_keep = m.net(
        "tx_keep",
        mux(t_lastb, ones_mask(n_out.slice(3, 0), lanes), ones(lanes)),
    );
    let raw_beat = m.net(
        "tx_raw_beat",
        tbuf.q.shr_by(cat([tidx.q.ex(), zeros(6)])).slice(dw - 1, 0),
    );
    // CRC: one beat ahead of the output over the masked frame.
    let masked_bytes: Vec<Expr> = (0..TX_BYTES)
        .map(|i| {
            if ICRC_MASKED.contains(&i) {
                ones(8)
            } else {
                byte(&tbuf.q.ex(), i)
            }
        })
        .collect();
    let tmasked = m.net("tx_masked", pack(&masked_bytes, TX_BYTES * 8));
    let crc_at = m.net("tx_crc_at", cat([tidx.q.ex(), zeros(6)]).zext(11) + 112u64);
    m.comment(
        crc_at,
        "bit offset of the ICRC input beat: frame byte 8 * tx_idx + 14",
    );
    let crc_win = m.net(
        "tx_crc_window",
        tmasked
            .zext(TX_BYTES * 8 + dw)
            .shr_by(crc_at)
            .slice(dw - 1, 0),
    );
    let t_end = m.net("tx_icrc_at", tlen.q - 4u64);
    m.comment(t_end, "ICRC position: where the CRC input ends");
    let t_pos = m.net("tx_crc_pos", cat([tidx.q.ex(), zeros(3)]).zext(8) + 14u64);
    let t_cnt = m.net("tx_crc_count", crc_beat_bytes(t_end, t_pos, lanes));
    let load = m.wire("tx_load", 1);
    m.comment(load, "a frame is loaded into the buffer this cycle");
    let u_tcrc = m.instance("u_tx_crc", &crc_mod);
    m.bind(u_tcrc, "start_i", load);
    m.bind(u_tcrc, "valid_i", load | tx_fire);
    m.bind(u_tcrc, "data_i", mux(load, ones(dw), crc_win));
    let t_keep = m.net("tx_crc_keep", ones_mask(t_cnt.ex(), lanes));
    m.bind(u_tcrc, "keep_i", mux(load, ones(lanes), t_keep));
    let tcrc = m.bind_out(u_tcrc, "crc_o");
    // The ICRC over the last four bytes, least significant byte first.
    let out_bytes: Vec<Expr> = (0..lanes)
        .map(|l| {
            let b = cat([tidx.q.ex(), zeros(3)]).zext(8) + u64::from(l);
            let off = b.clone() - t_end;
            let icrc_byte = icrc_byte(&tcrc.ex(), &off.slice(1, 0));
            mux(b.ge(t_end), icrc_byte, byte(&raw_beat.ex(), l))
        })
        .collect();
    let rr_valid = m.wire("rr_valid", 1);
    let rr_data = m.wire("rr_data", dw);
    let rr_keep = m.wire("rr_keep", lanes);
    let rr_last = m.wire("rr_last", 1);
    m.assign(tx_valid, t_busy | rr_valid);
    m.assign(tx_data, mux(t_busy, pack(&out_bytes, dw), rr_data.ex()));
    m.assign(tx_keep, mux(t_busy, out_keep.ex(), rr_keep.ex()));
    m.assign(tx_last, mux(t_busy, t_lastb.ex(), rr_last.ex()));

    // Sources: an ACK (lowest QP with one pending), else a READ response (read.rs), else a
    // command capsule. An ACK waits behind a READ response before it (rr_ack_hold).
    let rr_hold = m.wire("rr_hold", nq);
    let rr_tx = m.wire("rr_tx_busy", 1);
    m.comment(rr_tx, "the READ responder loads or streams a frame");
    let rr_on = m.wire("rr_streaming", 1);
    m.comment(rr_on, "the READ responder streams a frame");
    let ack_pend_v = m.net(
        "ack_pend",
        cat(qps.iter().rev().map(|x| x.ack_pend.q.ex())) & !rr_hold,
    );
    let ack_q = pick_lowest(&mut m, "ack_qp", ack_pend_v.ex(), nq, qw);
    let load_ack = m.net("load_ack", !t_busy & !rr_tx & ack_pend_v.any());

    // Go-back-N: a QP sends its capsules again from rpsn while rpsn != spsn (its new commands
    // wait meanwhile); a PSN whose command already completed is skipped.
    let resending: Vec<Sig> = qps
        .iter()
        .enumerate()
        .map(|(q, x)| {
            m.net(
                &format!("qp{q}_resending"),
                x.rpsn.q.ne(x.spsn.q) & !dead[q],
            )
        })
        .collect();
    let rs_hit: Vec<Sig> = qps
        .iter()
        .enumerate()
        .map(|(q, x)| {
            m.net(
                &format!("qp{q}_resend_hit"),
                cat((0..d)
                    .rev()
                    .map(|s| (live[q].bit(s) & x.slot_psn[s as usize].q.eq(x.rpsn.q)).ex())),
            )
        })
        .collect();
    let resend_v = m.net(
        "resend_ready",
        cat((0..nq as usize)
            .rev()
            .map(|q| (resending[q] & rs_hit[q].any() & cc.go[q]).ex())),
    );
    m.comment(resend_v, "bit q: QP q has a capsule to send again now");
    let rs_q = pick_lowest(&mut m, "resend_qp", resend_v.ex(), nq, qw);
    let rs_slots = m.net("resend_slots", {
        let mut e = rs_hit[0].ex();
        for (q, h) in rs_hit.iter().enumerate().skip(1) {
            e = mux(rs_q.eq(q as u64), *h, e);
        }
        e
    });
    let rs_slot = pick_lowest(&mut m, "resend_slot", rs_slots.ex(), d, sw);
    let rs_sqe = m.net(
        "resend_sqe",
        sel_slot(rs_q, rs_slot, 512, &|x, s| x.slot_sqe[s].q),
    );
    // A capsule with in-capsule data (its SGL an offset descriptor, 01h) is a job of the READ
    // responder, which reads its data from host memory.
    let rs_icd = m.net("resend_in_capsule", rs_sqe.slice(319, 312).eq(0x01u64));
    // A CNP (lowest QP that owes one) comes after the ACKs, before capsules and the READ
    // responder's next frame.
    let cnp_q = pick_lowest(&mut m, "cnp_qp", cc.cnp_req.ex(), nq, qw);
    let load_cnp = m.net(
        "load_cnp",
        !t_busy & !rr_on & !ack_pend_v.any() & cc.cnp_req.any(),
    );
    // A capsule job waits in the READ responder until its data is in: capsules of the frame
    // buffer wait behind it (PSN order).
    let rr_capq = m.wire("rr_capsule_waits", 1);
    m.comment(rr_capq, "a capsule job is queued in the READ responder");
    let tx_cap_free = m.net(
        "tx_capsule_free",
        !t_busy & !rr_on & !ack_pend_v.any() & !cc.cnp_req.any() & !rr_capq,
    );
    m.comment(tx_cap_free, "the frame buffer may take a capsule");
    let job_free = m.wire("rr_job_free", 1);
    m.comment(
        job_free,
        "the READ responder takes a capsule job (not full, no READ request taken now)",
    );
    let load_resend = m.net(
        "load_resend",
        resend_v.any() & mux(rs_icd, job_free, tx_cap_free),
    );
    m.comment(load_resend, "a capsule is loaded again (go-back-N)");

    let sqid = cmd.field("sqid");
    let sqe = cmd.field("sqe");
    let cmd_q = m.net("cmd_qp", (sqid - 1u64).slice(qw - 1, 0));
    let known = m.net("cmd_known", sqid.ne(0u64) & sqid.le(u64::from(nq)));
    let cmd_dead = m.net("cmd_dead", sel_q(cmd_q, &|x| !x.up.q | x.err.q));
    let free: Vec<Sig> = qps
        .iter()
        .enumerate()
        .map(|(q, x)| m.net(&format!("qp{q}_slot_free"), !x.slot_valid.q))
        .collect();
    let free_idx: Vec<Sig> = free
        .iter()
        .enumerate()
        .map(|(q, f)| pick_lowest(&mut m, &format!("qp{q}_free_idx"), f.ex(), d, sw))
        .collect();
    let has_free = m.net("cmd_has_free", {
        let mut e = free[0].any();
        for (q, f) in free.iter().enumerate().skip(1) {
            e = mux(cmd_q.eq(q as u64), f.any(), e);
        }
        e
    });
    let cmd_slot = m.net("cmd_slot", {
        let mut e = free_idx[0].ex();
        for (q, f) in free_idx.iter().enumerate().skip(1) {
            e = mux(cmd_q.eq(q as u64), *f, e);
        }
        e
    });
    let cmd_resending = m.net("cmd_resending", {
        let mut e = resending[0].ex();
        for (q, r) in resending.iter().enumerate().skip(1) {
            e = mux(cmd_q.eq(q as u64), *r, e);
        }
        e
    });
    let cmd_go = cc.go_of(&mut m, "cmd_cc_go", cmd_q);
    let cmd_icd = m.wire("cmd_in_capsule", 1);
    let cmd_wants = m.net(
        "cmd_wants",
        cmd.valid & known & !cmd_dead & has_free & !cmd_resending & !resend_v.any() & cmd_go,
    );
    m.comment(cmd_wants, "a new command's capsule may go");
    let load_cmd = m.net("load_cmd", cmd_wants & mux(cmd_icd, job_free, tx_cap_free));
    // The frame buffer's CNPs and capsules go before the READ responder's next frame (a
    // capsule is short; a new one lets the target ask for more data meanwhile).
    let others_first = m.net(
        "rr_others_first",
        cc.cnp_req.any() | (!rr_capq & ((resend_v.any() & !rs_icd) | (cmd_wants & !cmd_icd))),
    );
    m.comment(
        others_first,
        "a CNP or a frame-buffer capsule waits: the READ responder lets it go first",
    );
    m.comment(load_cmd, "a command capsule is loaded (and its slot taken)");
    let cap_job = m.net("capsule_job", (load_cmd & cmd_icd) | (load_resend & rs_icd));
    m.comment(cap_job, "a capsule with data goes to the READ responder");
    let tbuf_cap = m.net("capsule_to_buffer", (load_cmd | load_resend) & !cap_job);
    m.assign(load, load_ack | load_cnp | tbuf_cap);

    // The capsule's SQE: PSDT 01b, DPTR one keyed SGL data block over the command's window,
    // or (in-capsule data) an SGL data block with subtype Offset: offset 0, the data length.
    let opc = m.net("cmd_opc", sqe.slice(7, 0));
    let has_data = m.net(
        "cmd_has_data",
        opc.eq(0x01u64) | opc.eq(0x02u64) | opc.eq(0x05u64),
    );
    let nlb = m.net("cmd_nlb", sqe.slice(399, 384));
    let dlen = m.net(
        "cmd_len",
        mux(
            has_data,
            cat([(nlb.zext(17) + 1u64).ex(), zeros(9)]).slice(23, 0),
            lit(24, 0),
        ),
    );
    m.comment(
        dlen,
        "window length: (NLB + 1) * 512 for Read, Write, Compare",
    );
    let key = m.net(
        "cmd_key",
        cat([cmd_q.zext(8), cmd_slot.zext(8), sqe.slice(31, 16)]),
    );
    m.comment(key, "the window's key: {qp, slot, cid}");
    let cmd_mtu = m.net("cmd_mtu", sel_q(cmd_q, &|x| x.mtu.ex()));
    m.assign(
        cmd_icd,
        opc.eq(0x01u64)
            & dlen.le(u64::from(p.in_capsule_bytes.min(0xff_ffff)))
            & dlen.le((cmd_mtu - 64u64).zext(24)),
    );
    m.comment(
        cmd_icd,
        "a Write of at most roce.in_capsule_bytes whose capsule fits one SEND Only",
    );
    let dptr_out = m.net(
        "capsule_dptr",
        mux(
            cmd_icd,
            cat([lit(8, 0x01), zeros(24), dlen.zext(32), zeros(64)]),
            cat([lit(8, 0x40), key.ex(), dlen.ex(), zeros(64)]),
        ),
    );
    m.comment(
        dptr_out,
        "keyed SGL data block (40h), address 0: offsets within the window; or data block, offset 0 (01h)",
    );
    let new_sqe = m.net(
        "capsule_sqe",
        cat([
            sqe.slice(511, 320), // CDW10-15
            dptr_out.ex(),
            sqe.slice(191, 16), // CID .. MPTR
            lit(2, 1),          // PSDT 01b
            sqe.slice(13, 0),
        ]),
    );
    m.unused(
        "sqe_dptr_psdt",
        cat([sqe.slice(319, 192), sqe.slice(15, 14)]),
    );
    let cap_q = m.net("capsule_qp", mux(load_resend, rs_q, cmd_q));
    let cap_sqe = m.net("capsule_out_sqe", mux(load_resend, rs_sqe, new_sqe));
    let cap_dlen = m.net("capsule_data_len", cap_sqe.slice(271, 256));
    m.comment(
        cap_dlen,
        "the capsule's SGL length (low bits): its in-capsule bytes on a job (< MTU)",
    );
    cc.on_transmit(
        &mut m,
        (load_cmd | load_resend).ex(),
        cap_q,
        mux(cap_job, cap_dlen + 122u64, lit(16, 122)),
        load_cnp,
        cnp_q,
    );
    let cap_frame: Expr = {
        let mut e: Option<Expr> = None;
        for (q, x) in qps.iter().enumerate() {
            let mut b = net_bytes(x, q as u32, 20 + 8 + 12 + 64 + 4, data_tos);
            let psn = mux(load_resend, x.rpsn.q, x.spsn.q);
            b.extend(bth_bytes(x, 0x04, true, psn));
            b.extend((0..64).map(|i| byte(&cap_sqe.ex(), i)));
            b.extend((0..4).map(|_| lit(8, 0)));
            let f = pack(&b, TX_BYTES * 8);
            e = Some(match e {
                None => f,
                Some(prev) => mux(cap_q.eq(q as u64), f, prev),
            });
        }
        e.expect("one QP at least")
    };
    if qps.len() == 1 {
        // One QP: there is nothing to choose between.
        m.unused("capsule_qp_single", cap_q);
    }
    let ack_frame: Expr = {
        let mut e: Option<Expr> = None;
        for (q, x) in qps.iter().enumerate() {
            let mut b = net_bytes(x, q as u32, 20 + 8 + 12 + 4 + 4, data_tos);
            b.extend(bth_bytes(x, 0x11, false, x.ack_psn.q.ex()));
            b.push(x.ack_syn.q.ex());
            b.extend(be(&x.ack_msn.q.ex(), 3));
            b.extend((0..4).map(|_| lit(8, 0)));
            let f = pack(&b, TX_BYTES * 8);
            e = Some(match e {
                None => f,
                Some(prev) => mux(ack_q.eq(q as u64), f, prev),
            });
        }
        e.expect("one QP at least")
    };
    let ack_frame = m.net("ack_frame", ack_frame);
    // CNP: BTH opcode 81h, BECN set, PSN 0, then 16 reserved bytes (RoCEv2 annex A17.9.3).
    let cnp_frame: Expr = {
        let mut e: Option<Expr> = None;
        for (q, x) in qps.iter().enumerate() {
            let mut b = net_bytes(x, q as u32, u64::from(super::cc::CNP_BYTES) - 14, cnp_tos);
            b.extend(bth_bytes(x, 0x81, false, lit(24, 0)));
            b[46] = lit(8, 0x40);
            b.extend((0..20).map(|_| lit(8, 0)));
            let f = pack(&b, TX_BYTES * 8);
            e = Some(match e {
                None => f,
                Some(prev) => mux(cnp_q.eq(q as u64), f, prev),
            });
        }
        e.expect("one QP at least")
    };
    let cnp_frame = m.net("cnp_frame", cnp_frame);
    let cap_frame = m.net("capsule_frame", cap_frame);
    let ack_is_nak = m.net(
        "ack_is_nak",
        sel_q(ack_q, &|x| x.ack_syn.q.slice(7, 5).ne(0u64)),
    );
    m.comb(|c| {
        c.set(tbuf.d, tbuf.q);
        c.set(tlen.d, tlen.q);
        c.set(tidx.d, tidx.q);
        c.if_(load_ack, |c| {
            c.set(tbuf.d, ack_frame);
            c.set(tlen.d, 62u64);
            c.set(tidx.d, 0u64);
        })
        .else_if(load_cnp, |c| {
            c.set(tbuf.d, cnp_frame);
            c.set(tlen.d, u64::from(super::cc::CNP_BYTES));
            c.set(tidx.d, 0u64);
        })
        .else_if(tbuf_cap, |c| {
            c.set(tbuf.d, cap_frame);
            c.set(tlen.d, 122u64);
            c.set(tidx.d, 0u64);
        })
        .else_if(tx_fire, |c| {
            c.set(tidx.d, tidx.q + 1u64);
            c.if_(t_lastb, |c| c.set(tlen.d, 0u64));
        });
    });

    // ------------------------------------------------------------ receive
    let rx_st = m.enum_type("rx_state", &["RX_RECV", "RX_CHK"]);
    let rst = m.reg_enum("rx_state", &rx_st, rx_st.item("RX_RECV"));
    let pay_hold = m.wire("pay_hold", 1);
    m.comment(
        pay_hold,
        "the bank the next frame goes into still drains: wait",
    );
    let in_recv = m.net("rx_in_recv", rst.q.eq(rx_st.item("RX_RECV")) & !pay_hold);
    let pay_busy = m.wire("pay_busy", 1);
    m.comment(
        pay_busy,
        "an RDMA WRITE waits: a DMA command or a queued bank drain is pending",
    );
    let rr_wait = m.wire("rr_wait", 1);
    m.comment(
        rr_wait,
        "a READ request waits for room in the READ responder",
    );
    let in_chk = m.net(
        "rx_in_chk",
        rst.q.eq(rx_st.item("RX_CHK")) & !pay_busy & !rr_wait,
    );
    m.comment(
        in_chk,
        "a frame is checked (a WRITE once the previous WRITE's DMA command is taken)",
    );
    m.assign(rx_ready, in_recv);
    let rfire = m.net("rx_fire", rx_valid & in_recv);
    let rbeat = m.reg("rx_beat", 11, 0);
    m.comment(rbeat.q, "beat of the frame on s_axis (saturates)");
    let rlen = m.reg("rx_len", 16, 0);
    m.comment(rlen.q, "bytes of the frame so far (saturates)");
    let rhdr = m.reg("rx_hdr", RX_BYTES * 8, 0);
    m.comment(rhdr.q, "the frame's first bytes, byte 0 in bits 7:0");
    let rprev = m.reg("rx_prev", 16, 0);
    m.comment(
        rprev.q,
        "masked lanes 6-7 of the previous beat (ICRC realignment)",
    );
    let ricrc = m.reg("rx_icrc", 32, 0);
    m.comment(
        ricrc.q,
        "the received ICRC, least significant byte first on the wire",
    );
    let rbytes = m.net(
        "rx_beat_bytes",
        (0..lanes).fold(lit(4, 0), |a, i| a + rx_keep.bit(i).zext(4)),
    );
    let kept = m.net(
        "rx_kept",
        cat((0..lanes)
            .rev()
            .map(|i| byte(&rx_data.ex(), i) & rx_keep.bit(i).repeat(8))),
    );
    let beat_is = |k: u64| rbeat.q.eq(k);
    let masked_in: Vec<Expr> = (0..lanes)
        .map(|l| {
            let hits: Vec<u32> = ICRC_MASKED
                .iter()
                .filter(|&&b| b % lanes == l)
                .map(|&b| b / lanes)
                .collect();
            let mut e = byte(&kept.ex(), l);
            for k in hits {
                e = mux(beat_is(u64::from(k)), ones(8), e);
            }
            e
        })
        .collect();
    let rmasked = m.net("rx_masked", pack(&masked_in, dw));
    // Store and forward: every beat from frame byte 54 on, realigned to lane 0 (bytes 6-7 of
    // the previous beat, 0-5 of this one), goes into the payload buffer; an RDMA WRITE's
    // payload leaves it for host memory only after the frame's ICRC and checks passed.
    let pw = payload_words(p);
    let paw = clog2(u64::from(2 * pw));
    let pay = m.memory("rx_payload", dw, u64::from(2 * pw));
    let bank = m.reg("rx_bank", 1, 0);
    m.comment(
        bank.q,
        "the payload bank the frame on s_axis goes into (words 0 or pw on)",
    );
    let pay_we = m.net(
        "rx_pay_we",
        rfire & rbeat.q.ge(7u64) & rbeat.q.lt(u64::from(7 + pw)),
    );
    let pay_wa = m.net(
        "rx_pay_waddr",
        (rbeat.q - 7u64).resize(paw) + mux(bank.q, lit(paw, u128::from(pw)), lit(paw, 0)),
    );
    m.mem_write(pay, pay_we, pay_wa, cat([kept.slice(47, 0), rprev.q.ex()]));
    let ip_len_now = m.net(
        "rx_ip_len_now",
        mux(
            beat_is(2),
            cat([byte(&kept.ex(), 0), byte(&kept.ex(), 1)]),
            cat([byte(&rhdr.q.ex(), 16), byte(&rhdr.q.ex(), 17)]),
        ),
    );
    let r_end = m.net("rx_icrc_at", ip_len_now.zext(17) + 10u64);
    m.comment(
        r_end,
        "frame offset of the ICRC, from the IPv4 total length",
    );
    let r_pos = m.net(
        "rx_crc_pos",
        (cat([rbeat.q.ex(), zeros(3)]).zext(17)) - 2u64,
    );
    m.comment(
        r_pos,
        "frame offset of the ICRC input beat fed with this beat (beats 2 on)",
    );
    let r_cnt = m.net("rx_crc_count", crc_beat_bytes(r_end, r_pos, lanes));
    let u_rcrc = m.instance("u_rx_crc", &crc_mod);
    m.bind(u_rcrc, "start_i", rfire & beat_is(1));
    m.bind(u_rcrc, "valid_i", rfire & rbeat.q.ne(0u64));
    m.bind(
        u_rcrc,
        "data_i",
        mux(
            beat_is(1),
            ones(dw),
            cat([rmasked.slice(47, 0), rprev.q.ex()]),
        ),
    );
    let r_keep = m.net("rx_crc_keep", ones_mask(r_cnt.ex(), lanes));
    m.bind(u_rcrc, "keep_i", mux(beat_is(1), ones(lanes), r_keep));
    let rcrc = m.bind_out(u_rcrc, "crc_o");
    let hdr_base = m.net("rx_hdr_base", mux(beat_is(0), lit(RX_BYTES * 8, 0), rhdr.q));
    let hdr_new = m.net(
        "rx_hdr_new",
        hdr_base
            | kept
                .zext(RX_BYTES * 8)
                .shl_by(cat([rbeat.q.slice(3, 0), zeros(6)])),
    );
    let icrc_hit: Vec<Vec<Sig>> = (0..lanes)
        .map(|l| {
            (0..4u64)
                .map(|j| {
                    let b = cat([rbeat.q.ex(), zeros(3)]).zext(17) + u64::from(l);
                    m.net(
                        &format!("rx_icrc_l{l}_b{j}"),
                        rx_keep.bit(l) & b.eq(r_end + j),
                    )
                })
                .collect()
        })
        .collect();
    let rlen_next = m.net(
        "rx_len_next",
        mux(beat_is(0), lit(17, 0), rlen.q.zext(17)) + rbytes.zext(17),
    );
    let icrc_new = m.net(
        "rx_icrc_new",
        cat((0..4usize).rev().map(|j| {
            let mut e = ricrc.q.slice(8 * j as u32 + 7, 8 * j as u32);
            for (l, hits) in icrc_hit.iter().enumerate() {
                e = mux(hits[j], byte(&rx_data.ex(), l as u32), e);
            }
            e
        })),
    );

    // Fields of the kept header (valid in RX_CHK).
    let hb = |i: u32| byte(&rhdr.q.ex(), i);
    let ethertype = m.net("h_ethertype", cat([hb(12), hb(13)]));
    let ver_ihl = m.net("h_ver_ihl", hb(14));
    let ip_len = m.net("h_ip_len", cat([hb(16), hb(17)]));
    let frag = m.net("h_frag", cat([hb(20), hb(21)]).slice(13, 0));
    let proto = m.net("h_proto", hb(23));
    let ip_sum = m.net(
        "h_ip_sum_ok",
        checksum(
            &(0..10)
                .map(|w| cat([hb(14 + 2 * w), hb(15 + 2 * w)]))
                .collect::<Vec<_>>(),
        )
        .eq(0u64),
    );
    let dport = m.net("h_udp_dport", cat([hb(36), hb(37)]));
    let udp_len = m.net("h_udp_len", cat([hb(38), hb(39)]));
    let opcode = m.net("h_opcode", hb(42));
    let bflags = m.net("h_bth_flags", hb(43));
    let pad = m.net("h_pad", bflags.slice(5, 4));
    let pkey = m.net("h_pkey", cat([hb(44), hb(45)]));
    let dqp = m.net("h_dest_qp", cat([hb(47), hb(48), hb(49)]));
    let psn = m.net("h_psn", cat([hb(51), hb(52), hb(53)]));
    let syn = m.net("h_syndrome", hb(54));
    let cqe_dw0 = m.net("h_cqe_dw0", cat([hb(57), hb(56), hb(55), hb(54)]));
    let cqe_cid = m.net("h_cqe_cid", cat([hb(67), hb(66)]));
    let cqe_status = m.net("h_cqe_status", cat([hb(69), hb(68)]).slice(15, 1));
    m.unused(
        "h_unused",
        cat([
            rhdr.q.slice(RX_BYTES * 8 - 1, 70 * 8),
            hb(50),
            hb(46),
            bflags.slice(7, 6),
            hb(41),
            hb(40),
            hb(35),
            hb(34),
            rhdr.q.slice(12 * 8 - 1, 0),
        ]),
    );
    let ip_len17 = m.net("h_ip_len17", ip_len.zext(17));
    let t_len = m.net("h_transport_len", ip_len17 - 28u64);
    m.comment(t_len, "BTH to ICRC, bytes");
    let is_send = m.net("h_is_send", opcode.eq(0x04u64));
    let is_ack = m.net("h_is_ack", opcode.eq(0x11u64));
    let is_cnp = m.net("h_is_cnp", opcode.eq(0x81u64));
    let is_wf = m.net("h_is_write_first", opcode.eq(0x06u64));
    let is_wm = m.net("h_is_write_middle", opcode.eq(0x07u64));
    let is_wl = m.net("h_is_write_last", opcode.eq(0x08u64));
    let is_wo = m.net("h_is_write_only", opcode.eq(0x0au64));
    let is_wr = m.net("h_is_write", is_wf | is_wm | is_wl | is_wo);
    let is_rd = m.net("h_is_read", opcode.eq(0x0cu64));
    let has_reth = m.net("h_has_reth", is_wf | is_wo);
    let wr_hdr = m.net("h_write_hdr", mux(has_reth, lit(17, 32), lit(17, 16)));
    m.comment(wr_hdr, "a WRITE's BTH, RETH and ICRC bytes");
    let wr_pay = m.net("h_write_payload", t_len - wr_hdr - pad.zext(17));
    m.comment(
        wr_pay,
        "a WRITE's payload bytes (valid when the lengths pass)",
    );
    let reth_va = m.net("h_reth_va", cat((54..62).map(hb).collect::<Vec<_>>()));
    let rkey = m.net("h_reth_rkey", cat((62..66).map(hb).collect::<Vec<_>>()));
    let reth_len = m.net("h_reth_len", cat((66..70).map(hb).collect::<Vec<_>>()));
    let send_rest = m.net("h_send_rest", t_len - 16u64);
    m.comment(send_rest, "a SEND's payload and pad, bytes");
    // The checks in decode order: (drop cause, condition).
    let c_short = m.net("chk_short", rlen.q.lt(34u64));
    let c_ether = m.net(
        "chk_ether",
        ethertype.ne(0x0800u64) | ver_ihl.slice(7, 4).ne(4u64),
    );
    let c_ihl = m.net("chk_ihl", ver_ihl.slice(3, 0).ne(5u64) | frag.ne(0u64));
    let c_proto = m.net("chk_proto", proto.ne(17u64));
    let c_iplen = m.net(
        "chk_ip_len",
        ip_len.lt(28u64) | ip_len17.gt(rlen.q.zext(17) - 14u64),
    );
    let c_sum = m.net("chk_ip_sum", !ip_sum);
    let c_port = m.net("chk_port", dport.ne(4791u64));
    let c_udp = m.net("chk_udp_len", udp_len.ne(ip_len - 20u64));
    let c_tshort = m.net("chk_transport_short", t_len.lt(16u64));
    let c_icrc = m.net("chk_icrc", ricrc.q.ne(rcrc));
    let c_opc = m.net(
        "chk_opcode",
        !(is_send | is_ack | is_wr | is_rd | is_cnp) | bflags.slice(3, 0).ne(0u64),
    );
    let c_len = m.net(
        "chk_length",
        (is_ack & (t_len.ne(20u64) | pad.ne(0u64)))
            | (is_cnp & (t_len.ne(32u64) | pad.ne(0u64)))
            | (is_send & pad.zext(17).gt(send_rest))
            | (is_wr & (t_len.lt(wr_hdr) | pad.zext(17).gt(t_len - wr_hdr)))
            | (is_rd & (t_len.ne(32u64) | pad.ne(0u64))),
    );
    // QP match.
    let qhit = m.net(
        "rx_qp_hit",
        cat(qps.iter().rev().map(|x| (x.up.q & x.lqpn.eq(dqp)).ex())),
    );
    let rq = pick_lowest(&mut m, "rx_qp", qhit.ex(), nq, qw);
    let c_qp = m.net(
        "chk_qp",
        !qhit.any() | sel_q(rq, &|x| x.pkey.ne(pkey) | x.err.q),
    );
    let cause = m.enum_type(
        "drop_cause",
        &[
            "DROP_NONE",
            "DROP_OTHER",
            "DROP_MALFORMED",
            "DROP_ICRC",
            "DROP_OPCODE",
            "DROP_QP",
        ],
    );
    let why = m.wire_enum("rx_drop", &cause);
    m.comb(|c| {
        c.set(why, cause.item("DROP_NONE"));
        c.if_(c_short, |c| c.set(why, cause.item("DROP_MALFORMED")))
            .else_if(c_ether, |c| c.set(why, cause.item("DROP_OTHER")))
            .else_if(c_ihl, |c| c.set(why, cause.item("DROP_MALFORMED")))
            .else_if(c_proto, |c| c.set(why, cause.item("DROP_OTHER")))
            .else_if(c_iplen | c_sum, |c| {
                c.set(why, cause.item("DROP_MALFORMED"))
            })
            .else_if(c_port, |c| c.set(why, cause.item("DROP_OTHER")))
            .else_if(c_udp | c_tshort, |c| {
                c.set(why, cause.item("DROP_MALFORMED"))
            })
            .else_if(c_icrc, |c| c.set(why, cause.item("DROP_ICRC")))
            .else_if(c_opc, |c| c.set(why, cause.item("DROP_OPCODE")))
            .else_if(c_len, |c| c.set(why, cause.item("DROP_MALFORMED")))
            .else_if(c_qp, |c| c.set(why, cause.item("DROP_QP")));
    });
    let pass = m.net("rx_pass", in_chk & why.eq(cause.item("DROP_NONE")));
    m.comment(pass, "the frame passed the header, ICRC and QP checks");
    cc.on_receive(&mut m, pass, is_cnp, hb(15), rq);
    // PSN against the QP's expected PSN.
    let epsn = m.net("rx_epsn", sel_q(rq, &|x| x.epsn.q.ex()));
    let diff = m.net("rx_psn_diff", psn - epsn);
    let p_ok = m.net("rx_psn_ok", diff.eq(0u64));
    let p_ahead = m.net("rx_psn_ahead", !p_ok & !diff.bit(23));
    let p_dup = m.net("rx_psn_dup", diff.bit(23));
    let q_nak_sent = m.net("rx_nak_sent", sel_q(rq, &|x| x.nak_sent.q.ex()));
    let q_msn = m.net("rx_msn", sel_q(rq, &|x| x.msn.q.ex()));
    let q_slots = m.net("rx_slots", {
        let mut e = live[0].ex();
        for (q, v) in live.iter().enumerate().skip(1) {
            e = mux(rq.eq(q as u64), *v, e);
        }
        e
    });
    let cid_hit = m.net(
        "rx_cid_hit",
        cat((0..d)
            .rev()
            .map(|s| q_slots.bit(s) & sel_q(rq, &|x| x.slot_cid[s as usize].q.ex()).eq(cqe_cid))),
    );
    let hit_slot = pick_lowest(&mut m, "rx_hit_slot", cid_hit.ex(), d, sw);
    let good_cqe = m.net(
        "rx_good_cqe",
        (send_rest - pad.zext(17)).eq(16u64) & cid_hit.any(),
    );
    // RDMA WRITE: the message state, the MTU rules, the key and bounds of the command window.
    let q_mtu = m.net("rx_mtu", sel_q(rq, &|x| x.mtu.ex()));
    let q_wr_on = m.net("rx_wr_on", sel_q(rq, &|x| x.wr_on.q.ex()));
    let q_wr_slot = m.net("rx_wr_slot", sel_q(rq, &|x| x.wr_slot.q.ex()));
    let q_wr_off = m.net("rx_wr_off", sel_q(rq, &|x| x.wr_off.q.ex()));
    let q_wr_left = m.net("rx_wr_left", sel_q(rq, &|x| x.wr_left.q.ex()));
    let mtu17 = m.net("rx_mtu17", q_mtu.zext(17));
    let wr_seq_bad = m.net(
        "rx_wr_seq_bad",
        (has_reth & q_wr_on) | ((is_wm | is_wl) & !q_wr_on),
    );
    m.comment(
        wr_seq_bad,
        "First/Only inside a message, Middle/Last outside one",
    );
    let wr_len_bad = m.net(
        "rx_wr_len_bad",
        ((is_wf | is_wm) & (wr_pay.ne(mtu17) | pad.ne(0u64)))
            | ((is_wl | is_wo) & wr_pay.gt(mtu17))
            | (is_wf & reth_len.le(q_mtu.zext(32)))
            | (is_wm & q_wr_left.le(q_mtu.zext(24)))
            | (is_wl & wr_pay.zext(24).ne(q_wr_left))
            | (is_wo & wr_pay.zext(32).ne(reth_len)),
    );
    m.comment(
        wr_len_bad,
        "First/Middle exactly the MTU, Last/Only at most it, the message's DMA length kept",
    );
    let key_qp = m.net("rx_key_qp", rkey.slice(31, 24));
    let key_slot = m.net("rx_key_slot", rkey.slice(23, 16));
    let key_cid = m.net("rx_key_cid", rkey.slice(15, 0));
    let kslot = m.net("rx_key_slot_idx", key_slot.resize(sw));
    let slot_f = |f: &dyn Fn(&Qp, usize) -> Expr, slot: Sig| -> Expr {
        sel_q(rq, &|x| {
            let mut e = f(x, 0);
            for s in 1..d as usize {
                e = mux(slot.eq(s as u64), f(x, s), e);
            }
            e
        })
    };
    let k_dlen = m.net(
        "rx_key_len",
        slot_f(&|x, s| x.slot_sqe[s].q.slice(279, 256), kslot),
    );
    m.comment(
        k_dlen,
        "the keyed command's data length (its capsule's SGL length)",
    );
    let k_valid = m.net(
        "rx_key_slot_valid",
        key_slot.lt(u64::from(d))
            & (1..d).fold(q_slots.bit(0), |e, s| {
                mux(kslot.eq(u64::from(s)), q_slots.bit(s), e)
            })
            & slot_f(&|x, s| x.slot_cid[s].q.ex(), kslot).eq(key_cid),
    );
    let k_dlen_l = m.net("rx_key_len_dma", k_dlen.slice(l - 1, 0));
    let k_read = m.net(
        "rx_key_is_read",
        slot_f(&|x, s| x.slot_sqe[s].q.slice(7, 0), kslot).eq(0x02u64),
    );
    let k_fits = if l < 24 {
        m.net("rx_key_len_fits", k_dlen.slice(23, l).eq(0u64))
    } else {
        m.net("rx_key_len_fits", lit(1, 1))
    };
    m.comment(k_fits, "the command's data fits the DMA engine's length");
    let k_bounds = m.net(
        "rx_key_in_window",
        reth_va.slice(63, 24).eq(0u64)
            & (reth_va.slice(23, 0).zext(33) + reth_len.zext(33)).le(k_dlen.zext(33)),
    );
    let key_ok = m.net(
        "rx_key_ok",
        key_qp.eq(rq.zext(8)) & k_valid & k_read & k_fits & k_bounds,
    );
    m.comment(
        key_ok,
        "R_Key names an outstanding Read of this QP and VA + length lie in its data",
    );
    // RDMA READ request: the same key, naming a command that moves host data (Write, Compare).
    let k_opc = m.net(
        "rx_key_opcode",
        slot_f(&|x, s| x.slot_sqe[s].q.slice(7, 0), kslot),
    );
    let k_keyed = m.net(
        "rx_key_keyed",
        slot_f(&|x, s| x.slot_sqe[s].q.slice(319, 312), kslot).eq(0x40u64),
    );
    m.comment(
        k_keyed,
        "the keyed command's capsule gave a key (its data not in the capsule)",
    );
    let key_rd_ok = m.net(
        "rx_read_key_ok",
        key_qp.eq(rq.zext(8))
            & k_valid
            & k_keyed
            & (k_opc.eq(0x01u64) | k_opc.eq(0x05u64))
            & k_fits
            & k_bounds,
    );
    let ev_read = m.net("ev_read", pass & is_rd);
    let ev_rd_inv = m.net("ev_read_invalid", ev_read & p_ok & q_wr_on);
    let ev_rd_acc = m.net("ev_read_access", ev_read & p_ok & !q_wr_on & !key_rd_ok);
    let ev_rd_ok = m.net("ev_read_ok", ev_read & p_ok & !q_wr_on & key_rd_ok);
    let rd_accept = m.net("ev_read_job", ev_rd_ok | (ev_read & p_dup & key_rd_ok));
    m.comment(
        rd_accept,
        "a READ to answer: in order, or a duplicate replayed (its key still valid)",
    );
    let rd_span = psn_span(&mut m, p, reth_len.slice(23, 0).ex(), q_mtu);
    let ev_write = m.net("ev_write", pass & is_wr);
    let ev_wr_inv = m.net(
        "ev_write_invalid",
        ev_write & p_ok & (wr_seq_bad | wr_len_bad),
    );
    let ev_wr_acc = m.net(
        "ev_write_access",
        ev_write & p_ok & !wr_seq_bad & !wr_len_bad & has_reth & !key_ok,
    );
    m.comment(ev_wr_acc, "a key or bounds violation: NAK 62h");
    let ev_wr_ok = m.net(
        "ev_write_ok",
        ev_write & p_ok & !wr_seq_bad & !wr_len_bad & (!has_reth | key_ok),
    );
    let ev_wr_end = m.net("ev_write_end", ev_wr_ok & (is_wl | is_wo));
    let wr_dma = m.net("ev_write_dma", ev_wr_ok & wr_pay.ne(0u64));
    m.comment(wr_dma, "an accepted WRITE with payload: to host memory");
    let ev_send = m.net("ev_send", pass & is_send);
    let ev_complete = m.net("ev_complete", ev_send & p_ok & good_cqe & !q_wr_on);
    let ev_invalid = m.net("ev_invalid", ev_send & p_ok & (!good_cqe | q_wr_on));
    let ev_req = m.net("ev_request", ev_send | ev_write | ev_read);
    let ev_ahead = m.net("ev_ahead", ev_req & p_ahead);
    let ev_nak_seq = m.net("ev_nak_seq", ev_ahead & !q_nak_sent);
    let ev_dup = m.net("ev_dup", ev_req & p_dup);
    let ev_inorder = m.net(
        "ev_in_order",
        ev_complete | ev_invalid | ev_wr_ok | ev_wr_inv | ev_wr_acc | ev_rd_inv | ev_rd_acc,
    );
    let ev_bad = m.net(
        "ev_fatal_request",
        ev_invalid | ev_wr_inv | ev_wr_acc | ev_rd_inv | ev_rd_acc,
    );
    m.comment(
        ev_bad,
        "an in-order request the QP cannot take: NAK, QP to error",
    );
    let ev_ack = m.net("ev_ack", pass & is_ack);
    let ev_fatal_nak = m.net(
        "ev_fatal_nak",
        ev_ack & (syn.eq(0x61u64) | syn.eq(0x62u64) | syn.eq(0x63u64)),
    );
    // The ACK this frame asks for (syndrome, PSN, MSN).
    let new_ack = m.net("rx_new_ack", ev_inorder | ev_nak_seq | (ev_dup & !is_rd));
    let new_syn = m.net(
        "rx_new_syn",
        mux(
            ev_complete | ev_dup | ev_wr_ok,
            lit(8, 0x1f),
            mux(
                ev_invalid | ev_wr_inv | ev_rd_inv,
                lit(8, 0x61),
                mux(ev_wr_acc | ev_rd_acc, lit(8, 0x62), lit(8, 0x60)),
            ),
        ),
    );
    let new_psn = m.net(
        "rx_new_psn",
        mux(ev_inorder, psn.ex(), mux(ev_dup, epsn - 1u64, epsn.ex())),
    );
    let new_msn = m.net(
        "rx_new_msn",
        mux(ev_complete | ev_wr_end, q_msn + 1u64, q_msn.ex()),
    );

    // An accepted WRITE's payload: one DMA command (tag {qp, slot}, the command's own data
    // pointer, window at the VA offset), then the payload beats from the buffer.
    let w_slot = m.net("rx_wr_dma_slot", mux(has_reth, kslot, q_wr_slot));
    let w_off = m.net(
        "rx_wr_dma_off",
        mux(has_reth, reth_va.slice(23, 0), q_wr_off),
    );
    let w_len = m.net(
        "rx_wr_dma_len",
        slot_f(&|x, s| x.slot_sqe[s].q.slice(256 + l - 1, 256), w_slot),
    );
    let w_dptr = m.net(
        "rx_wr_dma_dptr",
        slot_f(&|x, s| x.slot_dptr[s].q.ex(), w_slot),
    );
    let w_sgl = m.net(
        "rx_wr_dma_sgl",
        slot_f(&|x, s| x.slot_sgl.q.bit(s as u32), w_slot),
    );
    let dc_v = m.reg("dma_cmd_pending", 1, 0);
    m.comment(dc_v.q, "the WRITE's DMA command waits for s_cmd");
    let dc_tag = m.reg("dma_cmd_tag", dp.tag_width, 0);
    let dc_sgl = m.reg("dma_cmd_sgl", 1, 0);
    let dc_dptr = m.reg("dma_cmd_dptr", 128, 0);
    let dc_len = m.reg("dma_cmd_len", l, 0);
    let dc_off = m.reg("dma_cmd_off", l, 0);
    let dc_wlen = m.reg("dma_cmd_win_len", l, 0);
    let pay_v = m.reg("pay_valid", 1, 0);
    m.comment(
        pay_v.q,
        "rx_payload_rdata_q holds the next payload beat for s_data",
    );
    let pay_ra = m.reg("pay_raddr", paw, 0);
    let pay_left = m.reg("pay_beats", 10, 0);
    m.comment(pay_left.q, "payload beats still to go, this one included");
    let pay_tail = m.reg("pay_tail", 3, 0);
    m.comment(pay_tail.q, "bytes of the last beat (0: 8)");
    let u_dma = m.instance("u_dma", &dma_eng);
    let s_cmd_ready = m.bind_out(u_dma, "s_cmd_ready_o");
    let s_data_ready = m.bind_out(u_dma, "s_data_ready_o");
    let pay_last = m.net("pay_last", pay_left.q.eq(1u64));
    let pay_fire = m.net("pay_fire", pay_v.q & s_data_ready);
    let dc_fire = m.net("dma_cmd_fire", dc_v.q & s_cmd_ready);
    let start_dma = m.net("rx_start_dma", in_chk & wr_dma);
    let pay_first = m.net(
        "rx_pay_first",
        mux(bank.q, lit(paw, u128::from(pw)), lit(paw, 0))
            + mux(has_reth, lit(paw, 2), lit(paw, 0)),
    );
    m.comment(
        pay_first,
        "the payload's first word: a RETH's 16 bytes come before it",
    );
    // A WRITE checked while the other bank drains queues its drain (its DMA command goes out
    // at once, so the walk overlaps the drain); the next frame waits for its bank to be free.
    let pq_v = m.reg("pay_queued", 1, 0);
    m.comment(
        pq_v.q,
        "a checked WRITE's bank waits to drain after the current one",
    );
    let pq_first = m.reg("pay_queued_first", paw, 0);
    let pq_left = m.reg("pay_queued_beats", 10, 0);
    let pq_tail = m.reg("pay_queued_tail", 3, 0);
    let pay_bank = m.reg("pay_bank", 1, 0);
    m.comment(pay_bank.q, "the bank that drains now");
    let pay_end = m.net("pay_end", pay_fire & pay_last);
    let start_now = m.net("pay_start_now", start_dma & (!pay_v.q | pay_end));
    let start_q = m.net("pay_start_queued", start_dma & pay_v.q & !pay_end);
    let from_q = m.net("pay_from_queue", pay_end & pq_v.q);
    m.assign(pay_busy, (pq_v.q | dc_v.q) & is_wr);
    m.assign(pay_hold, pay_v.q & pay_bank.q.eq(bank.q));
    m.assign(bank.d, bank.q ^ start_dma);
    let pay_rd = m.net("pay_read", start_now | from_q | (pay_fire & !pay_last));
    let pay_rd_at = m.net(
        "pay_read_addr",
        mux(
            start_now,
            pay_first,
            mux(from_q, pq_first.q, pay_ra.q + 1u64),
        ),
    );
    let pay_data = m.mem_read(pay, pay_rd, pay_rd_at);
    let w_beats = m.net("rx_wr_beats", (wr_pay + 7u64).slice(12, 3).resize(10));
    m.comb(|c| {
        c.set(dc_v.d, dc_v.q & !s_cmd_ready);
        c.set(dc_tag.d, dc_tag.q);
        c.set(dc_sgl.d, dc_sgl.q);
        c.set(dc_dptr.d, dc_dptr.q);
        c.set(dc_len.d, dc_len.q);
        c.set(dc_off.d, dc_off.q);
        c.set(dc_wlen.d, dc_wlen.q);
        c.set(pay_v.d, pay_v.q);
        c.set(pay_ra.d, pay_ra.q);
        c.set(pay_left.d, pay_left.q);
        c.set(pay_tail.d, pay_tail.q);
        c.set(pq_v.d, pq_v.q);
        c.set(pq_first.d, pq_first.q);
        c.set(pq_left.d, pq_left.q);
        c.set(pq_tail.d, pq_tail.q);
        c.set(pay_bank.d, pay_bank.q);
        c.if_(start_dma, |c| {
            c.set(dc_v.d, 1u64);
            c.set(dc_tag.d, cat([rq.ex(), w_slot.ex()]));
            c.set(dc_sgl.d, w_sgl);
            c.set(dc_dptr.d, w_dptr);
            c.set(dc_len.d, w_len);
            c.set(dc_off.d, w_off.slice(l - 1, 0));
            c.set(dc_wlen.d, wr_pay.resize(l));
        });
        c.if_(start_now, |c| {
            c.set(pay_v.d, 1u64);
            c.set(pay_ra.d, pay_first);
            c.set(pay_left.d, w_beats);
            c.set(pay_tail.d, wr_pay.slice(2, 0));
            c.set(pay_bank.d, bank.q);
        })
        .else_if(from_q, |c| {
            c.set(pay_ra.d, pq_first.q);
            c.set(pay_left.d, pq_left.q);
            c.set(pay_tail.d, pq_tail.q);
            c.set(pay_bank.d, !pay_bank.q);
            c.set(pq_v.d, 0u64);
        })
        .else_if(pay_fire, |c| {
            c.set(pay_ra.d, pay_ra.q + 1u64);
            c.set(pay_left.d, pay_left.q - 1u64);
            c.if_(pay_last, |c| c.set(pay_v.d, 0u64));
        });
        c.if_(start_q, |c| {
            c.set(pq_v.d, 1u64);
            c.set(pq_first.d, pay_first);
            c.set(pq_left.d, w_beats);
            c.set(pq_tail.d, wr_pay.slice(2, 0));
        });
    });
    // The READ responder (read.rs): its DMA commands (read direction) after the WRITEs'.
    let md_valid = m.bind_out(u_dma, "m_data_valid_o");
    let md_data = m.bind_out(u_dma, "m_data_data_o");
    let md_keep = m.bind_out(u_dma, "m_data_keep_o");
    let md_last = m.bind_out(u_dma, "m_data_last_o");
    let md_dtag = m.bind_out(u_dma, "m_data_tag_o");
    m.unused("dma_m_data_tag", md_dtag);
    let rd_ready = m.net("rr_cmd_ready", s_cmd_ready & !dc_v.q);
    let rr_cap_sqe = m.wire("rr_capsule_sqe", 512);
    m.comment(
        rr_cap_sqe,
        "the SQE of the READ responder's current job's slot",
    );
    let rr_in = RespIn {
        qps: qps
            .iter()
            .map(|x| RespQp {
                lmac: x.lmac,
                rmac: x.rmac,
                lip: x.lip,
                rip: x.rip,
                pkey: x.pkey,
                rqpn: x.rqpn,
                mtu: x.mtu,
                msn: x.msn.q,
                ack_pend: x.ack_pend.q,
                ack_psn: x.ack_psn.q,
            })
            .collect(),
        accept: rd_accept,
        qp: rq,
        slot: kslot,
        psn,
        va: m.net("rx_read_va", reth_va.slice(l - 1, 0)),
        len: m.net("rx_read_len", reth_len.slice(l - 1, 0)),
        dptr: m.net("rx_read_dptr", slot_f(&|x, s| x.slot_dptr[s].q.ex(), kslot)),
        sgl: m.net(
            "rx_read_sgl",
            slot_f(&|x, s| x.slot_sgl.q.bit(s as u32), kslot),
        ),
        dlen: k_dlen_l,
        cap_accept: cap_job,
        cap_qp: cap_q,
        cap_slot: m.net("capsule_job_slot", mux(load_resend, rs_slot, cmd_slot)),
        cap_psn: m.net(
            "capsule_job_psn",
            sel_q(cap_q, &|x| mux(load_resend, x.rpsn.q, x.spsn.q)),
        ),
        cap_len: m.net("capsule_job_len", cap_dlen.resize(l)),
        cap_dptr: m.net(
            "capsule_job_dptr",
            mux(
                load_resend,
                sel_slot(rs_q, rs_slot, 128, &|x, s| x.slot_dptr[s].q),
                sqe.slice(319, 192),
            ),
        ),
        cap_sgl: m.net(
            "capsule_job_sgl",
            mux(
                load_resend,
                sel_q(rs_q, &|x| x.slot_sgl.q.ex().shr_by(rs_slot).bit(0)),
                sqe.slice(15, 14).ne(0u64),
            ),
        ),
        cap_sqe: rr_cap_sqe,
        tos: data_tos,
        tbuf_busy: t_busy,
        ack_any: m.net("ack_any", ack_pend_v.any()),
        others_first,
        axis_ready: tx_ready,
        cmd_ready: rd_ready,
        md_valid,
        md_data,
        md_keep,
        md_last,
    };
    let rr = responder(&mut m, p, &rr_in, sw, l, reset)?;
    m.assign(
        rr_cap_sqe,
        sel_slot(rr.cur_qp, rr.cur_slot, 512, &|x, s| x.slot_sqe[s].q),
    );
    m.assign(job_free, !rr.full & !rd_accept);
    m.assign(rr_capq, rr.cap_queued);
    m.assign(rr_hold, rr.ack_hold);
    m.assign(rr_tx, rr.tx);
    m.assign(rr_on, rr.on);
    m.assign(rr_valid, rr.valid);
    m.assign(rr_data, rr.data);
    m.assign(rr_keep, rr.keep);
    m.assign(rr_last, rr.last);
    m.assign(rr_wait, is_rd & rr.full);
    m.bind(u_dma, "m_data_ready_i", rr.md_ready);
    m.bind(u_dma, "s_cmd_valid_i", dc_v.q | rr.cmd_valid);
    m.bind(u_dma, "s_cmd_tag_i", mux(dc_v.q, dc_tag.q, rr.cmd_tag));
    m.bind(u_dma, "s_cmd_write_i", dc_v.q);
    m.bind(u_dma, "s_cmd_sgl_i", mux(dc_v.q, dc_sgl.q, rr.cmd_sgl));
    m.bind(u_dma, "s_cmd_dptr_i", mux(dc_v.q, dc_dptr.q, rr.cmd_dptr));
    m.bind(u_dma, "s_cmd_len_i", mux(dc_v.q, dc_len.q, rr.cmd_len));
    m.bind(u_dma, "s_cmd_win_off_i", mux(dc_v.q, dc_off.q, rr.cmd_off));
    m.bind(
        u_dma,
        "s_cmd_win_len_i",
        mux(dc_v.q, dc_wlen.q, rr.cmd_wlen),
    );
    m.bind(u_dma, "s_data_valid_i", pay_v.q);
    m.bind(u_dma, "s_data_data_i", pay_data);
    let tail_keep = m.net("pay_tail_keep", ones_mask(pay_tail.q.zext(4), lanes));
    let pay_keep = m.net(
        "pay_keep",
        mux(pay_last & pay_tail.q.ne(0u64), tail_keep, ones(lanes)),
    );
    m.bind(u_dma, "s_data_keep_i", pay_keep);
    m.bind(u_dma, "s_data_last_i", pay_last);
    m.bind(u_dma, "s_data_tag_i", lit(dp.tag_width, 0));
    // Completions: the DMA commands in flight (a response capsule and a QP's drain wait for
    // none), a slot's first error status.
    let md_v = m.bind_out(u_dma, "m_done_valid_o");
    let md_tag = m.bind_out(u_dma, "m_done_tag_o");
    let md_st = m.bind_out(u_dma, "m_done_status_o");
    m.bind(u_dma, "m_done_ready_i", lit(1, 1));
    let inflight = m.reg("dma_inflight", 8, 0);
    m.comment(inflight.q, "DMA commands issued and not yet done");
    m.assign(
        inflight.d,
        inflight.q + dc_fire.zext(8) + rr.cmd_fire.zext(8) - md_v.zext(8),
    );
    let dma_idle = m.net("dma_idle", inflight.q.eq(0u64) & !dc_v.q & !rr.cmd_valid);
    let md_qp = m.net("dma_done_qp", md_tag.slice(dp.tag_width - 1, sw));
    let md_slot = m.net("dma_done_slot", md_tag.slice(sw - 1, 0));
    let md_err = m.net("dma_done_error", md_v & md_st.ne(0u64));
    let mps = m.input("mps_i", 4);
    m.comment(mps, "CC.MPS: the memory page size is 4096 << mps_i");
    m.bind(u_dma, "mps_i", mps);
    for port in dma_eng.ports() {
        if !port.name.starts_with("s_axil_") {
            continue;
        }
        if port.input {
            m.bind(u_dma, &port.name, lit(port.width, 0));
        } else {
            let o = m.bind_out(u_dma, &port.name);
            m.unused(&format!("dma_{}", port.name), o);
        }
    }
    let sel_rx = m.wire("cpl_take_rx", 1);
    m.comment(sel_rx, "io_cpl carries the response capsule's completion");
    m.comb(|c| {
        c.set(rst.d, rst.q);
        c.set(rbeat.d, rbeat.q);
        c.set(rlen.d, rlen.q);
        c.set(rhdr.d, rhdr.q);
        c.set(rprev.d, rprev.q);
        c.set(ricrc.d, ricrc.q);
        c.if_(rfire, |c| {
            c.set(rprev.d, rmasked.slice(63, 48));
            c.set(
                rlen.d,
                mux(rlen_next.bit(16), ones(16), rlen_next.slice(15, 0)),
            );
            c.if_(rbeat.q.lt(u64::from(RX_BYTES / lanes)), |c| {
                c.set(rhdr.d, hdr_new)
            });
            c.if_(rbeat.q.ne(0x7ffu64), |c| c.set(rbeat.d, rbeat.q + 1u64));
            c.set(ricrc.d, icrc_new);
            c.if_(rx_last, |c| c.set(rst.d, rx_st.item("RX_CHK")));
        });
        c.if_(in_chk, |c| {
            c.set(rbeat.d, 0u64);
            c.set(rst.d, rx_st.item("RX_RECV"));
        });
    });

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
