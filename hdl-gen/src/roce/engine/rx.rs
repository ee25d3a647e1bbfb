//! The receive side: the parser (headers kept for the checks, the ICRC over the realigned
//! beats), the checks in decode order with their drop causes, the PSN rules, RDMA WRITE
//! (message state, MTU rules, key and bounds; the two-bank store-and-forward payload buffer and
//! its DMA commands), RDMA READ requests handed to the READ responder (`read.rs`), the ACK each
//! frame asks for, and the DMA engine's completions per slot.
//!
//! Slightly over 1,000 lines on purpose: the receive checks in decode order, one file, so the
//! order of the drop causes is the order of the code.

use super::super::frame::{byte, checksum, ICRC_MASKED};
use super::super::read::{psn_span, responder, RespIn, RespOut, RespQp};
use super::qp::Qp;
use super::tx::Tx;
use super::{
    crc_beat_bytes, ones_mask, pack, payload_words, pick_lowest, select_qp, select_slot, Ctx,
    RX_BYTES,
};
use crate::roce::RoceParams;
use hdl_builder::prelude::*;
use hdl_builder::{EnumTy, Errors, Inst};

/// What the receive side gives the completions, the QP state updates and the counters.
pub(super) struct Rx {
    /// net `rx_in_chk`
    pub(super) in_chk: Sig,
    /// net `rx_fire`
    pub(super) rfire: Sig,
    /// net `rx_beat_bytes`
    pub(super) rbytes: Sig,
    /// net `h_psn`
    pub(super) psn: Sig,
    /// net `h_syndrome`
    pub(super) syn: Sig,
    /// net `h_cqe_dw0`
    pub(super) cqe_dw0: Sig,
    /// net `h_cqe_status`
    pub(super) cqe_status: Sig,
    /// net `h_is_write_first`
    pub(super) is_wf: Sig,
    /// net `h_is_write_middle`
    pub(super) is_wm: Sig,
    /// net `h_has_reth`
    pub(super) has_reth: Sig,
    /// net `h_write_payload`
    pub(super) wr_pay: Sig,
    /// net `h_reth_len`
    pub(super) reth_len: Sig,
    /// net `rx_qp`
    pub(super) rq: Sig,
    /// the drop-cause enum type
    pub(super) cause: EnumTy,
    /// net `rx_drop`: the frame's drop cause
    pub(super) why: Sig,
    /// net `rx_hit_slot`
    pub(super) hit_slot: Sig,
    /// net `rx_key_slot_idx`
    pub(super) kslot: Sig,
    /// net `ev_read_ok`
    pub(super) ev_rd_ok: Sig,
    /// net `ev_read_job`
    pub(super) rd_accept: Sig,
    /// PSNs the RDMA READ request takes (`psn_span`)
    pub(super) rd_span: Sig,
    /// net `ev_write_ok`
    pub(super) ev_wr_ok: Sig,
    /// net `ev_write_end`
    pub(super) ev_wr_end: Sig,
    /// net `ev_complete`
    pub(super) ev_complete: Sig,
    /// net `ev_ahead`
    pub(super) ev_ahead: Sig,
    /// net `ev_nak_seq`
    pub(super) ev_nak_seq: Sig,
    /// net `ev_dup`
    pub(super) ev_dup: Sig,
    /// net `ev_in_order`
    pub(super) ev_inorder: Sig,
    /// net `ev_fatal_request`
    pub(super) ev_bad: Sig,
    /// net `ev_ack`
    pub(super) ev_ack: Sig,
    /// net `ev_fatal_nak`
    pub(super) ev_fatal_nak: Sig,
    /// net `rx_new_ack`
    pub(super) new_ack: Sig,
    /// net `rx_new_syn`
    pub(super) new_syn: Sig,
    /// net `rx_new_psn`
    pub(super) new_psn: Sig,
    /// net `rx_new_msn`
    pub(super) new_msn: Sig,
    /// net `rx_wr_dma_slot`
    pub(super) w_slot: Sig,
    /// net `rx_wr_dma_off`
    pub(super) w_off: Sig,
    /// the embedded DMA engine instance
    pub(super) u_dma: Inst,
    /// net `rx_start_dma`
    pub(super) start_dma: Sig,
    /// what the READ responder is given
    pub(super) rr_in: RespIn,
    /// the READ responder (`read.rs`)
    pub(super) rr: RespOut,
    /// net `m_done_valid_o`
    pub(super) md_v: Sig,
    /// net `m_done_status_o`
    pub(super) md_st: Sig,
    /// net `dma_idle`
    pub(super) dma_idle: Sig,
    /// net `dma_done_qp`
    pub(super) md_qp: Sig,
    /// net `dma_done_slot`
    pub(super) md_slot: Sig,
    /// net `dma_done_error`
    pub(super) md_err: Sig,
    /// wire `cpl_take_rx` (driven by the completions)
    pub(super) sel_rx: Sig,
}

/// Builds the receive side in `m`, after the transmit side `tx`.
pub(super) fn receive(
    m: &mut ModuleBuilder,
    p: &RoceParams,
    ctx: &Ctx,
    tx: &Tx,
) -> Result<Rx, Errors> {
    let Ctx {
        dw,
        lanes,
        nq,
        d,
        qw,
        sw,
        l,
        reset,
        crc_mod,
        dma_eng,
        dp,
        tx_ready,
        rx_data,
        rx_keep,
        rx_last,
        rx_valid,
        rx_ready,
        data_tos,
        cc,
        qps,
        live,
        ..
    } = *ctx;
    let sel_q = |idx: Sig, f: &dyn Fn(&Qp) -> Expr| -> Expr { select_qp(qps, idx, f) };
    let sel_slot = |qp: Sig, slot: Sig, w: u32, f: &dyn Fn(&Qp, usize) -> Sig| -> Expr {
        select_slot(qps, d, qp, slot, w, f)
    };
    let &Tx {
        t_busy,
        rr_valid,
        rr_data,
        rr_keep,
        rr_last,
        rr_hold,
        rr_tx,
        rr_on,
        ack_pend_v,
        rs_q,
        rs_slot,
        rr_capq,
        job_free,
        load_resend,
        sqe,
        cmd_slot,
        others_first,
        cap_job,
        cap_q,
        cap_dlen,
        ..
    } = tx;
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
    let u_rcrc = m.instance("u_rx_crc", crc_mod);
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
    let rq = pick_lowest(m, "rx_qp", qhit.ex(), nq, qw);
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
    cc.on_receive(m, pass, is_cnp, hb(15), rq);
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
    let hit_slot = pick_lowest(m, "rx_hit_slot", cid_hit.ex(), d, sw);
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
    let rd_span = psn_span(m, p, reth_len.slice(23, 0).ex(), q_mtu);
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
    // Functional coverage: each drop cause, each NAK the responder sends, a duplicate
    // request, a fatal NAK received.
    for item in [
        "DROP_OTHER",
        "DROP_MALFORMED",
        "DROP_ICRC",
        "DROP_OPCODE",
        "DROP_QP",
    ] {
        m.cover(&item.to_lowercase(), in_chk & why.eq(cause.item(item)));
    }
    m.cover("nak_60h_psn_sequence", ev_nak_seq);
    m.cover(
        "nak_61h_invalid_request",
        ev_invalid | ev_wr_inv | ev_rd_inv,
    );
    m.cover("nak_62h_remote_access", ev_wr_acc | ev_rd_acc);
    m.cover("duplicate_request", ev_dup);
    m.cover("fatal_nak_received", ev_fatal_nak);
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
    let u_dma = m.instance("u_dma", dma_eng);
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
    let rr = responder(m, p, &rr_in, sw, l, reset)?;
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

    Ok(Rx {
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
    })
}
