//! What a checked PDU sets going: the C2HData verdicts and their host memory writes, the
//! accepted R2Ts and their H2CData reads, the DMA commands and the held payload.

use super::hdr::Hdr;
use super::rx::Rx;
use super::Ctx;
use hdl_builder::prelude::*;
use hdl_builder::Inst;

/// What the later parts read.
#[derive(Clone, Copy)]
pub(super) struct Verdicts {
    pub(super) v_space: Sig,
    pub(super) in_dver: Sig,
    pub(super) datao_r: Reg,
    pub(super) datal_r: Reg,
    pub(super) act_data_ok: Sig,
    pub(super) v_good: Sig,
    pub(super) v_slot: Sig,
    pub(super) ddgst_err_now: Sig,
    pub(super) u_r2t: Inst,
    pub(super) rf_valid: Sig,
    pub(super) rf_ttag: Sig,
    pub(super) rf_slot: Sig,
    pub(super) maxh2c: Reg,
    pub(super) h2c_pdo: Reg,
    pub(super) cap_pdo: Reg,
    pub(super) ticd: Reg,
    pub(super) icd_slot: Reg,
    pub(super) r2t_sent: Reg,
    pub(super) h2c_n: Reg,
    pub(super) h2c_fits: Sig,
    pub(super) h2c_len: Sig,
    pub(super) h2c_datao: Sig,
    pub(super) h2c_req: Sig,
    pub(super) tx_slot: Sig,
    pub(super) h2c_dma_go: Sig,
    pub(super) done_fire: Sig,
    pub(super) c2h_more: Sig,
    pub(super) vc_slot_w: Sig,
}

pub(super) fn verdicts(m: &mut ModuleBuilder, cx: &Ctx, ri: &Rx, hc: &Hdr) -> Verdicts {
    let Ctx {
        dw,
        lanes,
        d,
        sw,
        ref vcmd_fifo,
        ref vdata_fifo,
        ref r2t_fifo,
        ref dma_cmd,
        ref dma_data,
        ref dma_done,
        ev_ddgst_err,
        dd,
        ref slot_len,
        slot_sgl,
        ref slot_dptr,
        ref slot_pend,
        ..
    } = *cx;
    let Rx {
        ref rx_st,
        rst,
        dg,
        dslot,
        u_dfifo,
        rcrc,
        ..
    } = *ri;
    let Hdr {
        c_datao,
        c_datal,
        dhit_idx,
        in_act,
        ..
    } = *hc;
    // Verdicts: a C2HData that passed its checks is written to host memory (vcmd: the DMA
    // command) and its held payload forwarded (vdata 1) or dropped (vdata 0). Without data
    // digests the verdict is known after the header, with them after the digest; either way
    // the payload leaves in moves, each once all its beats are held (below).
    let u_vcmd = m.instance("u_vcmd_fifo", vcmd_fifo);
    let u_vdata = m.instance("u_vdata_fifo", vdata_fifo);
    let vcmd_ready = m.bind_out(u_vcmd, "s_ready_o");
    let vdata_ready = m.bind_out(u_vdata, "s_ready_o");
    let pend_full = m.net(
        "slot_pend_full",
        cat((0..d).rev().map(|i| slot_pend[i as usize].q.eq(63u64))),
    );
    let in_act_early = rst.q.eq(rx_st.item("RX_ACT"));
    let v_slot_full = m.net(
        "verdict_slot_full",
        pend_full
            .shr_by(mux(in_act_early, dhit_idx, dslot.q))
            .bit(0),
    );
    let v_space = m.net("verdict_space", vcmd_ready & vdata_ready & !v_slot_full);
    let in_dver = m.net("rx_in_dver", rst.q.eq(rx_st.item("RX_DVER")));
    let ddgst_bad = m.net("rx_ddgst_bad", dg.q.ne(rcrc));
    let datao_r = m.reg("rx_datao", 32, 0);
    let datal_r = m.reg("rx_datal", 32, 0);
    let act_data_ok = m.wire("act_data_ok", 1);
    m.comment(act_data_ok, "a C2HData header passed every check");
    let v_push_hdr = m.net("verdict_at_header", in_act & act_data_ok & !dd.q & v_space);
    let v_push_dig = m.net("verdict_at_digest", in_dver & dd.q & v_space);
    let v_push = m.net("verdict_push", v_push_hdr | v_push_dig);
    let v_good = m.net("verdict_good", v_push_hdr | (v_push_dig & !ddgst_bad));
    m.bind(u_vdata, "s_valid_i", v_push);
    m.bind(u_vdata, "s_data_i", v_good);
    m.bind(u_vcmd, "s_valid_i", v_good);
    m.bind(
        u_vcmd,
        "s_data_i",
        mux(
            v_push_hdr,
            cat([c_datal.ex(), c_datao.ex(), dhit_idx.ex()]),
            cat([datal_r.q.ex(), datao_r.q.ex(), dslot.q.ex()]),
        ),
    );
    let v_slot = m.net("verdict_slot", mux(v_push_hdr, dhit_idx, dslot.q));
    let ddgst_err_now = m.net("ddgst_error", v_push_dig & ddgst_bad);
    m.assign(ev_ddgst_err, ddgst_err_now);

    // Accepted R2Ts, one per Write at most (so the FIFO of `outstanding` entries never
    // overflows), answered in arrival order: {slot, TTAG, R2TL, R2TO}.
    let u_r2t = m.instance("u_r2t_fifo", r2t_fifo);
    let rf_valid = m.bind_out(u_r2t, "m_valid_o");
    let rf_data = m.bind_out(u_r2t, "m_data_o");
    let rf_count = m.bind_out(u_r2t, "count_o");
    let rf_sready = m.bind_out(u_r2t, "s_ready_o");
    m.unused("r2t_fifo_level", cat([rf_count.ex(), rf_sready.ex()]));
    let rf_r2to = m.net("r2t_head_r2to", rf_data.slice(31, 0));
    let rf_r2tl = m.net("r2t_head_r2tl", rf_data.slice(63, 32));
    let rf_ttag = m.net("r2t_head_ttag", rf_data.slice(79, 64));
    let rf_slot = m.net("r2t_head_slot", rf_data.slice(sw + 79, 80));
    let maxh2c = m.reg("maxh2cdata", 32, 4096);
    m.comment(
        maxh2c.q,
        "MAXH2CDATA from the ICResp: the largest H2CData payload",
    );
    let h2c_pdo = m.reg("h2c_pdo", 8, 24);
    m.comment(
        h2c_pdo.q,
        "PDO of the H2CData PDUs: header and digest padded to the ICResp's CPDA",
    );
    let cap_pdo = m.reg("capsule_pdo", 8, 72);
    m.comment(
        cap_pdo.q,
        "PDO of a CapsuleCmd with in-capsule data (CPDA padding)",
    );
    let ticd = m.reg("tx_icd", 1, 0);
    m.comment(
        ticd.q,
        "the data PDU on tx is a CapsuleCmd with in-capsule data (not an H2CData)",
    );
    let icd_slot = m.reg("tx_icd_slot", sw, 0);
    m.comment(icd_slot.q, "the slot of that CapsuleCmd's command");
    let r2t_sent = m.reg("r2t_sent", 32, 0);
    m.comment(r2t_sent.q, "bytes of the head R2T already sent as H2CData");
    let h2c_n = m.reg("h2c_datal", 32, 0);
    m.comment(h2c_n.q, "DATAL of the H2CData on tx");
    let h2c_rem = m.net("h2c_rem", rf_r2tl - r2t_sent.q);
    let h2c_fits = m.net("h2c_fits", h2c_rem.le(maxh2c.q));
    m.comment(h2c_fits, "the rest of the R2T fits one H2CData: LAST_PDU");
    let h2c_len = m.net("h2c_next_datal", mux(h2c_fits, h2c_rem, maxh2c.q));
    let h2c_datao = m.net("h2c_datao", rf_r2to + r2t_sent.q);
    let h2c_req = m.wire("h2c_dma_req", 1);
    m.comment(
        h2c_req,
        "the H2CData on tx asks for its payload from host memory",
    );

    // Held payload: the hold FIFO's beats, a PDU's after its verdict (vdata head).
    let vd_valid = m.bind_out(u_vdata, "m_valid_o");
    let vd_good = m.bind_out(u_vdata, "m_data_o");
    let vd_count = m.bind_out(u_vdata, "count_o");
    m.unused("vdata_count", vd_count);
    let df_valid = m.bind_out(u_dfifo, "m_valid_o");
    let df_data = m.bind_out(u_dfifo, "m_data_o");
    let df_count = m.bind_out(u_dfifo, "count_o");
    let df_last = m.net("hold_last", df_data.bit(dw + lanes));

    // A good C2HData's payload goes to host memory in moves of at most half the hold FIFO,
    // each issued only once all its beats are held: a move's write bursts then never wait
    // for the network in their middle (the chip's interconnect gives the W channel to one
    // burst at a time, so a paused burst would hold every other master's writes). The head
    // PDU's beats lead the FIFO once the moves before them left (`c2h_left` 0) and its
    // verdict leads vdata, so a count of at least a move's beats holds all of them.
    let hold_beats = cx.p.hold_bytes / lanes;
    let chunk_beats = (hold_beats / 2).max(1);
    let chunk = chunk_beats * lanes;
    let vc_head = m.bind_out(u_vcmd, "m_valid_o");
    let vc_data = m.bind_out(u_vcmd, "m_data_o");
    let vc_count = m.bind_out(u_vcmd, "count_o");
    m.unused("vcmd_count", vc_count);
    let vc_datao = vc_data.slice(sw + 31, sw);
    let vc_datal = vc_data.slice(sw + 63, sw + 32);
    let vc_slot_w = m.net("c2h_slot", vc_data.slice(sw - 1, 0));
    m.comment(vc_slot_w, "the command of the C2HData at the vcmd head");
    let c2h_done = m.reg("c2h_done", 32, 0);
    m.comment(
        c2h_done.q,
        "bytes of the vcmd head's payload already given to moves",
    );
    let lw = clog2(u64::from(chunk_beats) + 1);
    let c2h_left = m.reg("c2h_left", lw, 0);
    m.comment(c2h_left.q, "beats of the last move not yet forwarded");
    let c2h_rem = m.net("c2h_rem", vc_datal - c2h_done.q);
    let c2h_final = m.net("c2h_final", c2h_rem.le(u64::from(chunk)));
    m.comment(c2h_final, "the next move is the PDU's last");
    let c2h_len = m.net(
        "c2h_len",
        mux(c2h_final, c2h_rem, lit(32, u128::from(chunk))),
    );
    let c2h_beats = m.net(
        "c2h_beats",
        (c2h_len + u64::from(lanes - 1))
            .slice(31, clog2(u64::from(lanes)))
            .zext(32),
    );
    // Each move but a PDU's last adds one to its command's pending moves (the verdict added
    // the last one): leave room for a verdict in the same cycle.
    let pend_hi = m.net(
        "slot_pend_high",
        cat((0..d).rev().map(|i| slot_pend[i as usize].q.ge(62u64))),
    );
    let c2h_ready = m.net(
        "c2h_move_ready",
        vc_head
            & vd_valid
            & vd_good
            & c2h_left.q.eq(0)
            & df_count.zext(32).ge(c2h_beats)
            & (c2h_final | !pend_hi.shr_by(vc_slot_w).bit(0)),
    );
    m.comment(
        c2h_ready,
        "the next move of the vcmd head's payload is all held",
    );

    // DMA commands: a move of the vcmd head (a C2HData write) with its slot's pointer first,
    // else the H2CData's read.
    let rd_lock = m.reg("dma_cmd_rd_lock", 1, 0);
    m.comment(
        rd_lock.q,
        "an H2CData read is on dma_cmd and not yet taken: it stays (a stream's payload is stable)",
    );
    let vc_valid = m.net("dma_cmd_is_write", c2h_ready & !rd_lock.q);
    m.comment(
        vc_valid,
        "dma_cmd carries a move of the C2HData at the vcmd head",
    );
    m.assign(rd_lock.d, h2c_req & !vc_valid & !dma_cmd.ready);
    let tx_slot = m.net("tx_data_slot", mux(ticd.q, icd_slot.q, rf_slot));
    m.comment(tx_slot, "the command whose data the data PDU on tx carries");
    let vc_slot = m.net("dma_cmd_slot", mux(vc_valid, vc_slot_w, tx_slot));
    m.assign(dma_cmd.valid, c2h_ready | h2c_req);
    m.assign(dma_cmd.field("tag"), vc_slot);
    m.assign(dma_cmd.field("write"), vc_valid);
    m.assign(dma_cmd.field("sgl"), slot_sgl.q.shr_by(vc_slot).bit(0));
    let dptr_of = {
        let mut e: Expr = slot_dptr[0].q.ex();
        for i in 1..d {
            e = mux(vc_slot.eq(u64::from(i)), slot_dptr[i as usize].q, e);
        }
        e
    };
    m.assign(dma_cmd.field("dptr"), dptr_of);
    let len_of = {
        let mut e: Expr = slot_len[0].q.ex();
        for i in 1..d {
            e = mux(vc_slot.eq(u64::from(i)), slot_len[i as usize].q, e);
        }
        e
    };
    m.assign(dma_cmd.field("len"), len_of);
    m.assign(
        dma_cmd.field("off"),
        mux(
            vc_valid,
            vc_datao + c2h_done.q,
            mux(ticd.q, lit(32, 0), h2c_datao),
        ),
    );
    m.assign(dma_cmd.field("dlen"), mux(vc_valid, c2h_len, h2c_n.q));
    let h2c_dma_go = m.net("h2c_dma_go", h2c_req & !vc_valid & dma_cmd.ready);
    let c2h_go = m.net("c2h_move_go", vc_valid & dma_cmd.ready);
    m.bind(u_vcmd, "m_ready_i", c2h_go & c2h_final);
    let c2h_more = m.net("c2h_move_more", c2h_go & !c2h_final);
    m.comment(c2h_more, "a move that is not its PDU's last is issued");
    m.assign(
        c2h_done.d,
        mux(
            c2h_go,
            mux(c2h_final, lit(32, 0), c2h_done.q + u64::from(chunk)),
            c2h_done.q,
        ),
    );

    // Held payload: a good verdict's beats go to dma_data as their moves are issued (the
    // last of each move with `last`); a bad one's are dropped.
    let fwd = m.net(
        "hold_forward",
        df_valid & vd_valid & vd_good & c2h_left.q.ne(0),
    );
    m.assign(dma_data.valid, fwd);
    m.assign(dma_data.field("data"), df_data.slice(dw - 1, 0));
    m.assign(dma_data.field("keep"), df_data.slice(dw + lanes - 1, dw));
    m.assign(dma_data.field("last"), c2h_left.q.eq(1));
    let fwd_go = m.net("hold_forward_go", fwd & dma_data.ready);
    m.assign(
        c2h_left.d,
        mux(
            c2h_go,
            c2h_beats.slice(lw - 1, 0),
            c2h_left.q - fwd_go.zext(lw),
        ),
    );
    let df_pop = m.net("hold_pop", fwd_go | (df_valid & vd_valid & !vd_good));
    m.bind(u_dfifo, "m_ready_i", df_pop);
    m.bind(u_vdata, "m_ready_i", df_pop & df_last);
    m.assign(dma_done.ready, lit(1, 1));
    let done_fire = m.net("dma_done_fire", dma_done.valid);
    Verdicts {
        v_space,
        in_dver,
        datao_r,
        datal_r,
        act_data_ok,
        v_good,
        v_slot,
        ddgst_err_now,
        u_r2t,
        rf_valid,
        rf_ttag,
        rf_slot,
        maxh2c,
        h2c_pdo,
        cap_pdo,
        ticd,
        icd_slot,
        r2t_sent,
        h2c_n,
        h2c_fits,
        h2c_len,
        h2c_datao,
        h2c_req,
        tx_slot,
        h2c_dma_go,
        done_fire,
        c2h_more,
        vc_slot_w,
    }
}
