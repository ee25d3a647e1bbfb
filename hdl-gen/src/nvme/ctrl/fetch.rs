//! The SQ fetch (AR and R: a burst of SQEs into the fetch buffer, the arrived-head and
//! timed-command RAM writes) and the dispatch of each SQE to io_cmd, admin_cmd or an internal
//! completion.

use super::cpl::Sources;
use super::fsm::{Axi, Fsm};
use super::regs::Bar;
use super::{Ctx, Ports, Rams};
use hdl_builder::prelude::*;

/// What the CQ post and the counters read from the dispatch.
#[derive(Clone, Copy)]
pub(super) struct Dispatch {
    pub(super) d_fatal: Sig,
    pub(super) adm_sqid: Reg,
    pub(super) io_out: Sig,
    pub(super) adm_out: Sig,
}

pub(super) fn fetch(m: &mut ModuleBuilder, cx: &Ctx, io: &Ports, bar: &Bar, ram: &Rams, f: &Fsm) {
    let (qw, iw, nb, bps, w) = (cx.qw, cx.iw, cx.nb, cx.bps, cx.w);
    let Ports {
        arvalid,
        arready,
        araddr,
        arlen,
        arsize,
        arburst,
        rvalid,
        rready,
        rdata,
        rresp,
        rlast,
        ..
    } = *io;
    let db_qid = bar.db_qid;
    let Rams {
        hd_mem,
        lc_mem,
        sq_waddr,
        fsm_hd_we,
        ..
    } = *ram;
    let Fsm {
        axi:
            Axi {
                ar_v,
                ar_addr,
                ar_len,
                ar_issue,
                u_desc,
                u_fb,
                ..
            },
        cur_qid,
        f_n,
        f_head_new,
        f_smp_off,
        f_timed,
        f_addr,
        f_len,
        desc_v,
        r_hd_we,
        r_timed,
        lc_inval,
        ..
    } = *f;
    // Arrived-head RAM: the R path (a burst done, written a cycle later from registers, for
    // the clock: the R channel stays off the FSM's decisions) has priority over the FSM's
    // initial writes.
    let desc_data = m.bind_out(u_desc, "m_data_o");
    let dq_qid = m.net("desc_qid", desc_data.slice(qw + nb + iw - 1, nb + iw));
    let dq_n = m.net("desc_n", desc_data.slice(nb + iw - 1, iw));
    let dq_head = m.net("desc_head", desc_data.slice(iw - 1, 0));
    let dq_timed = m.net("desc_timed", desc_data.bit(qw + nb + iw + nb));
    let dq_off = m.net(
        "desc_timed_off",
        desc_data.slice(qw + nb + iw + nb - 1, qw + nb + iw),
    );
    let hd_arr_qid = m.reg_noreset("sq_arrived_qid", qw);
    let hd_arr_head = m.reg_noreset("sq_arrived_head", iw);
    m.assign(hd_arr_qid.d, dq_qid);
    m.assign(hd_arr_head.d, dq_head);
    m.mem_write(
        hd_mem,
        r_hd_we | fsm_hd_we,
        mux(r_hd_we, hd_arr_qid.q.ex(), sq_waddr.ex()),
        mux(r_hd_we, hd_arr_head.q.ex(), lit(iw, 0)),
    );

    // ---------------------------------------------------------------- SQ fetch: AR and R
    m.assign(ar_v.d, ar_issue | (ar_v.q & !arready));
    m.assign(ar_addr.d, mux(ar_issue, f_addr, ar_addr.q));
    m.assign(ar_len.d, mux(ar_issue, f_len, ar_len.q));
    m.assign(arvalid, ar_v.q);
    m.assign(araddr, ar_addr.q);
    m.assign(arlen, ar_len.q);
    m.assign(arsize, clog2(u64::from(w / 8)) as u64);
    m.assign(arburst, 1);
    m.bind(u_desc, "s_valid_i", ar_issue);
    m.bind(
        u_desc,
        "s_data_i",
        cat([
            f_timed.ex(),
            f_smp_off.slice(nb - 1, 0),
            cur_qid.q.ex(),
            f_n.ex(),
            f_head_new.ex(),
        ]),
    );
    let dv = m.bind_out(u_desc, "m_valid_o");
    m.assign(desc_v, dv);
    let dcount = m.bind_out(u_desc, "count_o");
    m.unused("desc_count", dcount);

    m.assign(rready, dv);
    let r_fire = m.net("r_fire", rvalid & dv);
    let r_err = m.net("r_err", rresp.ne(0));
    let r_sidx = m.reg("r_sqe_idx", nb, 0);
    let r_err_q = m.reg("r_err", 1, 0);
    let r_err0_q = m.reg("r_err0", 1, 0);
    let (r_last_beat, r_full, r_err0): (Expr, Expr, Expr) = if bps == 1 {
        (lit(1, 1), rdata.ex(), r_err.ex())
    } else {
        let bw = clog2(u64::from(bps));
        let beat = m.reg("r_beat", bw, 0);
        let acc_w = 512 - w;
        let acc = m.reg_noreset("r_acc", acc_w);
        let last = m.net("r_last_beat", beat.q.eq(u64::from(bps - 1)));
        m.assign(
            beat.d,
            mux(r_fire, mux(last, lit(bw, 0), beat.q + 1), beat.q.ex()),
        );
        let shifted = if acc_w > w {
            cat([rdata.ex(), acc.q.slice(acc_w - 1, w)])
        } else {
            rdata.ex()
        };
        m.assign(acc.d, mux(r_fire & !last, shifted, acc.q.ex()));
        let first = m.net("r_first_beat", beat.q.eq(0));
        let e0 = m.net("r_err0_now", mux(first, r_err.ex(), r_err0_q.q.ex()));
        (last.ex(), cat([rdata.ex(), acc.q.ex()]), e0.ex())
    };
    let r_sqe = m.net("r_sqe", r_full);
    let r_err_any = m.net("r_err_any", r_err_q.q | r_err);
    let r_sqe_done = m.net("r_sqe_done", r_fire & r_last_beat.clone());
    let r_burst_done = m.net("r_burst_done", r_sqe_done & r_sidx.q.eq(&(dq_n - 1)));
    let hd_arr_v = m.reg("sq_arrived_we", 1, 0);
    m.assign(hd_arr_v.d, r_burst_done);
    m.assign(r_hd_we, hd_arr_v.q);
    m.assign(
        r_sidx.d,
        mux(
            r_sqe_done,
            mux(r_burst_done, lit(nb, 0), r_sidx.q + 1),
            r_sidx.q.ex(),
        ),
    );
    m.assign(
        r_err_q.d,
        mux(
            r_fire,
            mux(r_last_beat.clone(), lit(1, 0), r_err_any.ex()),
            r_err_q.q.ex(),
        ),
    );
    m.assign(r_err0_q.d, mux(r_fire, r_err0.clone(), r_err0_q.q.ex()));
    m.bind(u_desc, "m_ready_i", r_burst_done);
    m.unused("r_last", rlast);
    m.bind(u_fb, "s_valid_i", r_sqe_done);
    m.bind(
        u_fb,
        "s_data_i",
        cat([dq_qid.ex(), r_err_any.ex(), r_err0, r_sqe.ex()]),
    );
    // The timed SQE arrived: its CID and direction (other when its fetch failed), written to
    // lat_cmd a cycle later from registers, for the clock (the R channel stays off ST_DB's
    // decision). The SQE's completion comes cycles after that, so its read sees the write.
    let arrived = m.net(
        "r_timed_arrived",
        r_sqe_done & dq_timed & r_sidx.q.eq(dq_off),
    );
    let arr_v = m.reg("lat_cmd_arrival", 1, 0);
    let arr_qid = m.reg_noreset("lat_cmd_arrival_qid", qw);
    let arr_word = m.reg_noreset("lat_cmd_arrival_word", 19);
    m.assign(arr_v.d, arrived);
    m.assign(arr_qid.d, dq_qid);
    m.assign(r_timed, arr_v.q);
    let r_opc = m.net("r_sqe_opc", r_sqe.slice(7, 0));
    let r_dir = m.net(
        "r_dir",
        mux(
            r_err_any | (r_opc.ne(0x01) & r_opc.ne(0x02)),
            lit(2, 2),
            mux(r_opc.eq(0x02), lit(2, 0), lit(2, 1)),
        ),
    );
    // One write port: the SQE's arrival, or (ST_DB waits a cycle for it) a doorbell arming.
    m.assign(
        arr_word.d,
        cat([lit(1, 1), r_sqe.slice(31, 16), r_dir.ex()]),
    );
    m.mem_write(
        lc_mem,
        r_timed | lc_inval,
        mux(r_timed, arr_qid.q.ex(), db_qid.q.resize(qw)),
        mux(r_timed, arr_word.q.ex(), lit(19, 0)),
    );
    let fb_sr = m.bind_out(u_fb, "s_ready_o");
    m.unused("fb_s_ready", fb_sr);
    let fbc = m.bind_out(u_fb, "count_o");
    m.unused("fb_count", fbc);
}

pub(super) fn dispatch(m: &mut ModuleBuilder, cx: &Ctx, io: &Ports, f: &Fsm) -> Dispatch {
    let (p, qw, cw) = (cx.p, cx.qw, cx.cw);
    let Ports {
        ref io_cmd,
        ref io_cpl,
        ref adm_cmd,
        ref adm_cpl,
        ..
    } = *io;
    let Fsm {
        src:
            Sources {
                icpl_v,
                icpl_sqid,
                icpl_cid,
                icpl_st,
                icpl_take,
                ..
            },
        axi: Axi { ar_issue, u_fb, .. },
        flush,
        credits,
        f_n,
        fb_v,
        io_v,
        adm_v,
        io_infl,
        adm_infl,
        ..
    } = *f;
    // ---------------------------------------------------------------- dispatch
    let fbv = m.bind_out(u_fb, "m_valid_o");
    m.assign(fb_v, fbv);
    let fbd = m.bind_out(u_fb, "m_data_o");
    let d_qid = m.net("d_qid", fbd.slice(qw + 513, 514));
    let d_err = m.net("d_err", fbd.bit(513));
    let d_err0 = m.net("d_err0", fbd.bit(512));
    let d_sqe = m.net("d_sqe", fbd.slice(511, 0));
    let d_opc = m.net("d_opc", d_sqe.slice(7, 0));
    let d_cid = m.net("d_cid", d_sqe.slice(31, 16));
    let d_op_ok = m.net(
        "d_opcode_ok",
        d_opc.eq(0x00) | d_opc.eq(0x01) | d_opc.eq(0x02) | d_opc.eq(0x08) | d_opc.eq(0x09),
    );
    let d_field_bad = m.net(
        "d_field_bad",
        d_sqe.slice(13, 8).ne(0) | d_sqe.slice(15, 14).eq(3),
    );
    // A Read or Write longer than MDTS (NLB, CDW12 bits 15:0, is 0's based). NLB's 16 bits
    // cannot ask for more than 65536 blocks, so at that limit nothing is refused.
    let max_blocks = u64::from(p.max_blocks());
    let d_too_long = if max_blocks <= 0xffff {
        m.net(
            "d_too_long",
            (d_opc.eq(0x01) | d_opc.eq(0x02)) & d_sqe.slice(399, 384).ge(max_blocks),
        )
        .ex()
    } else {
        lit(1, 0)
    };
    let d_bad = m.net("d_bad", d_field_bad | d_too_long.clone());
    let d_fatal = m.net("d_fatal", fbv & !flush.q & d_err & d_err0);
    // Order of the I/O checks (mod.rs): fetch error, CDW0 fields, a Read or Write over MDTS,
    // then the opcode picks the hardware path (io_cmd) or firmware (admin_cmd with the SQ id).
    let d_admin = m.net("d_admin", !d_err & d_qid.eq(0));
    let d_icpl = m.net("d_internal", d_err & !d_err0 | !d_err & d_qid.ne(0) & d_bad);
    let d_io = m.net("d_io", !d_err & d_qid.ne(0) & d_op_ok & !d_bad);
    let d_fallback = m.net("d_fallback", !d_err & d_qid.ne(0) & !d_op_ok & !d_bad);
    let io_free = m.net("io_cmd_free", !io_v.q | io_cmd.ready);
    let adm_free = m.net("admin_cmd_free", !adm_v.q | adm_cmd.ready);
    let icpl_free = m.net("icpl_free", !icpl_v.q);
    let load_io = m.net("load_io", fbv & !flush.q & d_io & io_free);
    let load_adm = m.net(
        "load_admin",
        fbv & !flush.q & (d_admin | d_fallback) & adm_free,
    );
    let load_icpl = m.net("load_icpl", fbv & !flush.q & d_icpl & icpl_free);
    let fb_pop = m.net(
        "fb_pop",
        fbv & flush.q | d_fatal | load_io | load_adm | load_icpl,
    );
    m.bind(u_fb, "m_ready_i", fb_pop);
    m.assign(
        credits.d,
        credits.q - mux(ar_issue, f_n.zext(cw), lit(cw, 0)) + fb_pop.zext(cw),
    );

    let io_sqid = m.reg("io_cmd_sqid", 16, 0);
    let io_sqe = m.reg_noreset("io_cmd_sqe", 512);
    m.assign(io_v.d, load_io | (io_v.q & !io_cmd.ready));
    m.assign(io_sqid.d, mux(load_io, d_qid.zext(16), io_sqid.q.ex()));
    m.assign(io_sqe.d, mux(load_io, d_sqe.ex(), io_sqe.q.ex()));
    m.assign(io_cmd.valid, io_v.q);
    m.assign(io_cmd.field("sqid"), io_sqid.q);
    m.assign(io_cmd.field("sqe"), io_sqe.q);
    let adm_sqid = m.reg("admin_cmd_sqid", 16, 0);
    let adm_sqe = m.reg_noreset("admin_cmd_sqe", 512);
    m.assign(adm_v.d, load_adm | (adm_v.q & !adm_cmd.ready));
    m.assign(adm_sqid.d, mux(load_adm, d_qid.zext(16), adm_sqid.q.ex()));
    m.assign(adm_sqe.d, mux(load_adm, d_sqe.ex(), adm_sqe.q.ex()));
    m.assign(adm_cmd.valid, adm_v.q);
    m.assign(adm_cmd.field("sqid"), adm_sqid.q);
    m.assign(adm_cmd.field("sqe"), adm_sqe.q);
    let icpl_code = mux(d_err, lit(15, 0x04), lit(15, 0x02));
    m.assign(icpl_v.d, load_icpl | (icpl_v.q & !icpl_take));
    m.assign(icpl_sqid.d, mux(load_icpl, d_qid.ex(), icpl_sqid.q.ex()));
    m.assign(icpl_cid.d, mux(load_icpl, d_cid.ex(), icpl_cid.q.ex()));
    m.assign(icpl_st.d, mux(load_icpl, icpl_code, icpl_st.q.ex()));

    let io_out = m.net("io_cmd_fire", io_cmd.fire());
    let io_in = m.net("io_cpl_fire", io_cpl.fire());
    let adm_out = m.net("admin_cmd_fire", adm_cmd.fire());
    let adm_in = m.net("admin_cpl_fire", adm_cpl.fire());
    m.assign(io_infl.d, io_infl.q + io_out.zext(32) - io_in.zext(32));
    m.assign(adm_infl.d, adm_infl.q + adm_out.zext(32) - adm_in.zext(32));

    // Functional coverage: each way dispatch ends an SQE (mod.rs, "What the hardware does and
    // does not check"), and each stream held by its consumer.
    m.cover("sqe_fetch_error_fatal", d_fatal);
    m.cover("status_04h_fetch_error", load_icpl & d_err);
    m.cover("status_02h_cdw0_field", load_icpl & !d_err & d_field_bad);
    if max_blocks <= 0xffff {
        // At 65536 blocks or more NLB cannot exceed MDTS: no point to reach.
        m.cover(
            "status_02h_over_mdts",
            load_icpl & !d_err & !d_field_bad & d_too_long,
        );
    }
    m.cover("sqe_offloaded", load_io);
    m.cover("sqe_admin", load_adm & d_admin);
    m.cover("sqe_fallback", load_adm & d_fallback);
    m.cover("io_cmd_held", io_v.q & !io_cmd.ready);
    m.cover("admin_cmd_held", adm_v.q & !adm_cmd.ready);
    Dispatch {
        d_fatal,
        adm_sqid,
        io_out,
        adm_out,
    }
}
