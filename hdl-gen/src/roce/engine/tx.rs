//! The transmit side: the frame buffer and its output stage with the ICRC (the stdlib CRC-32
//! one beat ahead of the output), the choice of the next frame (ACK/NAK, CNP, a capsule sent
//! again, a new command's capsule; the READ responder's frames in between), the capsule's
//! rewritten SQE and the frames themselves.

use super::super::frame::{be, byte, icrc_byte, ICRC_MASKED};
use super::qp::Qp;
use super::{
    bth_bytes, crc_beat_bytes, net_bytes, ones_mask, pack, pick_lowest, select_qp, select_slot,
    Ctx, TX_BYTES,
};
use crate::roce::RoceParams;
use hdl_builder::prelude::*;

/// What the transmit side gives the rest of the engine.
pub(super) struct Tx {
    /// net `tx_busy`
    pub(super) t_busy: Sig,
    /// net `tx_fire`
    pub(super) tx_fire: Sig,
    /// net `tx_last_beat`
    pub(super) t_lastb: Sig,
    /// net `tx_keep`
    pub(super) out_keep: Sig,
    /// wire `rr_valid` (driven by the receive side)
    pub(super) rr_valid: Sig,
    /// wire `rr_data` (driven by the receive side)
    pub(super) rr_data: Sig,
    /// wire `rr_keep` (driven by the receive side)
    pub(super) rr_keep: Sig,
    /// wire `rr_last` (driven by the receive side)
    pub(super) rr_last: Sig,
    /// wire `rr_hold` (driven by the receive side)
    pub(super) rr_hold: Sig,
    /// wire `rr_tx_busy` (driven by the receive side)
    pub(super) rr_tx: Sig,
    /// wire `rr_streaming` (driven by the receive side)
    pub(super) rr_on: Sig,
    /// net `ack_pend`
    pub(super) ack_pend_v: Sig,
    /// net `ack_qp`
    pub(super) ack_q: Sig,
    /// net `load_ack`
    pub(super) load_ack: Sig,
    /// net `qp{q}_resending`
    pub(super) resending: Vec<Sig>,
    /// net `qp{q}_resend_hit`
    pub(super) rs_hit: Vec<Sig>,
    /// net `resend_qp`
    pub(super) rs_q: Sig,
    /// net `resend_slot`
    pub(super) rs_slot: Sig,
    /// wire `rr_capsule_waits` (driven by the receive side)
    pub(super) rr_capq: Sig,
    /// wire `rr_job_free` (driven by the receive side)
    pub(super) job_free: Sig,
    /// net `load_resend`
    pub(super) load_resend: Sig,
    /// net `sqid`
    pub(super) sqid: Sig,
    /// net `sqe`
    pub(super) sqe: Sig,
    /// net `cmd_qp`
    pub(super) cmd_q: Sig,
    /// net `cmd_known`
    pub(super) known: Sig,
    /// net `cmd_dead`
    pub(super) cmd_dead: Sig,
    /// net `cmd_slot`
    pub(super) cmd_slot: Sig,
    /// net `load_cmd`
    pub(super) load_cmd: Sig,
    /// net `rr_others_first`
    pub(super) others_first: Sig,
    /// net `capsule_job`
    pub(super) cap_job: Sig,
    /// net `capsule_sqe`
    pub(super) new_sqe: Sig,
    /// net `capsule_qp`
    pub(super) cap_q: Sig,
    /// net `capsule_data_len`
    pub(super) cap_dlen: Sig,
    /// net `ack_is_nak`
    pub(super) ack_is_nak: Sig,
}

/// Builds the transmit side in `m`.
pub(super) fn transmit(m: &mut ModuleBuilder, p: &RoceParams, ctx: &Ctx) -> Tx {
    let Ctx {
        dw,
        lanes,
        nq,
        d,
        qw,
        sw,
        crc_mod,
        cmd,
        tx_data,
        tx_keep,
        tx_last,
        tx_valid,
        tx_ready,
        data_tos,
        cnp_tos,
        cc,
        qps,
        dead,
        live,
        ..
    } = *ctx;
    let sel_q = |idx: Sig, f: &dyn Fn(&Qp) -> Expr| -> Expr { select_qp(qps, idx, f) };
    let sel_slot = |qp: Sig, slot: Sig, w: u32, f: &dyn Fn(&Qp, usize) -> Sig| -> Expr {
        select_slot(qps, d, qp, slot, w, f)
    };
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
    let u_tcrc = m.instance("u_tx_crc", crc_mod);
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
    let ack_q = pick_lowest(m, "ack_qp", ack_pend_v.ex(), nq, qw);
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
    let rs_q = pick_lowest(m, "resend_qp", resend_v.ex(), nq, qw);
    let rs_slots = m.net("resend_slots", {
        let mut e = rs_hit[0].ex();
        for (q, h) in rs_hit.iter().enumerate().skip(1) {
            e = mux(rs_q.eq(q as u64), *h, e);
        }
        e
    });
    let rs_slot = pick_lowest(m, "resend_slot", rs_slots.ex(), d, sw);
    let rs_sqe = m.net(
        "resend_sqe",
        sel_slot(rs_q, rs_slot, 512, &|x, s| x.slot_sqe[s].q),
    );
    // A capsule with in-capsule data (its SGL an offset descriptor, 01h) is a job of the READ
    // responder, which reads its data from host memory.
    let rs_icd = m.net("resend_in_capsule", rs_sqe.slice(319, 312).eq(0x01u64));
    // A CNP (lowest QP that owes one) comes after the ACKs, before capsules and the READ
    // responder's next frame.
    let cnp_q = pick_lowest(m, "cnp_qp", cc.cnp_req.ex(), nq, qw);
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
        .map(|(q, f)| pick_lowest(m, &format!("qp{q}_free_idx"), f.ex(), d, sw))
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
    let cmd_go = cc.go_of(m, "cmd_cc_go", cmd_q);
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
        m,
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
            let mut b = net_bytes(
                x,
                q as u32,
                u64::from(super::super::cc::CNP_BYTES) - 14,
                cnp_tos,
            );
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
            c.set(tlen.d, u64::from(super::super::cc::CNP_BYTES));
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

    Tx {
        t_busy,
        tx_fire,
        t_lastb,
        out_keep,
        rr_valid,
        rr_data,
        rr_keep,
        rr_last,
        rr_hold,
        rr_tx,
        rr_on,
        ack_pend_v,
        ack_q,
        load_ack,
        resending,
        rs_hit,
        rs_q,
        rs_slot,
        rr_capq,
        job_free,
        load_resend,
        sqid,
        sqe,
        cmd_q,
        known,
        cmd_dead,
        cmd_slot,
        load_cmd,
        others_first,
        cap_job,
        new_sqe,
        cap_q,
        cap_dlen,
        ack_is_nak,
    }
}
