//! The queue FSM: one queue RAM access at a time for a doorbell, a firmware queue operation,
//! a completion to post or an SQ fetch, and the controller reset's sweep and drain; with the
//! decisions it takes in IDLE and the RAM words it writes.

use super::cpl::{sources, Sources};
use super::regs::{Bar, Csr};
use super::sched::{classes, weight, wrr, Classes, Wrr};
use super::{min, Ctx, Ports, Rams};
use crate::nvme::params::{OP_CREATE_CQ, OP_CREATE_SQ, OP_DELETE_CQ, OP_DELETE_SQ};
use hdl_builder::prelude::*;
use hdl_builder::{Comb, Inst};

/// The AXI master channels and the FIFOs between fetch, dispatch and post.
#[derive(Clone, Copy)]
pub(super) struct Axi {
    pub(super) ar_v: Reg,
    pub(super) ar_addr: Reg,
    pub(super) ar_len: Reg,
    pub(super) aw_v: Reg,
    pub(super) aw_addr: Reg,
    pub(super) w_v: Reg,
    pub(super) w_beat: Reg,
    pub(super) cqe: Reg,
    pub(super) ar_issue: Sig,
    pub(super) aw_issue: Sig,
    pub(super) u_desc: Inst,
    pub(super) u_fb: Inst,
    pub(super) u_pb: Inst,
}

/// What the fetch, dispatch, post and counters read from the FSM.
#[derive(Clone, Copy)]
pub(super) struct Fsm {
    pub(super) flush: Reg,
    pub(super) credits: Reg,
    pub(super) cur_qid: Reg,
    pub(super) src: Sources,
    pub(super) axi: Axi,
    pub(super) f_n: Sig,
    pub(super) f_head_new: Sig,
    pub(super) f_smp_off: Sig,
    pub(super) f_timed: Sig,
    pub(super) f_addr: Sig,
    pub(super) f_len: Sig,
    pub(super) r_timed: Sig,
    pub(super) lc_inval: Sig,
    pub(super) lc_dir: Sig,
    pub(super) p_timed: Sig,
    pub(super) p_addr: Sig,
    pub(super) p_cqe: Sig,
    pub(super) io_infl: Reg,
    pub(super) adm_infl: Reg,
    pub(super) desc_v: Sig,
    pub(super) fb_v: Sig,
    pub(super) pb_v: Sig,
    pub(super) io_v: Reg,
    pub(super) adm_v: Reg,
    pub(super) r_hd_we: Sig,
    pub(super) ev_reg: Sig,
    pub(super) ev_val: Sig,
    pub(super) ctl_done: Sig,
}

pub(super) fn fsm(
    m: &mut ModuleBuilder,
    cx: &Ctx,
    io: &Ports,
    bar: &Bar,
    csr: &Csr,
    ram: &Rams,
) -> Fsm {
    let (p, qw, iw, nq, nb, cw, bps) = (cx.p, cx.qw, cx.iw, cx.nq, cx.nb, cx.cw, cx.bps);
    let (sql, cql) = (&cx.sql, &cx.cql);
    let (desc_fifo, fb_fifo, pb_fifo) = (&cx.desc_fifo, &cx.fb_fifo, &cx.pb_fifo);
    let sq_space = io.sq_space;
    let Bar {
        aqa,
        asq,
        acq,
        rdy,
        cfs,
        db_pend,
        db_qid,
        db_cq,
        db_val,
        db_take,
        cc_en,
        ams_wrr,
        now,
        db_time,
    } = *bar;
    let Csr {
        arb_ab,
        op_pend,
        op_code,
        op_qid,
        op_base,
        op_size,
        op_prio,
        op_ien,
        op_cqid,
        op_vec,
        op_take,
        ..
    } = *csr;
    let Rams {
        sq_re,
        sq_raddr,
        cq_re,
        cq_raddr,
        sq_we,
        sq_waddr,
        sq_wdata,
        cq_we,
        cq_waddr,
        cq_wdata,
        fsm_hd_we,
        sq_rd,
        hd_rd,
        cq_rd,
        lc_rd,
        s_en,
        s_act,
        s_prio,
        s_cqid,
        s_size,
        s_head,
        s_tail,
        s_base,
        s_smp,
        s_smp_idx,
        s_smp_t,
        s_fetched,
        s_completed,
        c_en,
        c_phase,
        c_size,
        c_head,
        c_tail,
        c_next,
        c_base,
        ..
    } = *ram;
    // Ring arithmetic in idx_width + 1 bits: distance from `b` forward to `a` in a ring of size1.
    let kw = (iw + 1).max(8).max(cw);
    let s_size1 = m.net("s_size1", s_size.zext(kw) + 1);
    let dist = |a: Expr, b: Expr, size1: Sig| -> Expr {
        let (a, b) = (a.zext(kw), b.zext(kw));
        mux(a.ge(&b), &a - &b, a + size1 - b)
    };

    // ---------------------------------------------------------------- FSM state
    let st_ty = m.enum_type(
        "fsm_state",
        &[
            "ST_IDLE",
            "ST_READ",
            "ST_DB",
            "ST_OP",
            "ST_CPL_SQ",
            "ST_CPL_CQ",
            "ST_FETCH",
            "ST_FETCH_N",
            "ST_CLEAR",
            "ST_DRAIN",
        ],
    );
    // A hardware reset starts with the sweep a controller reset runs: the queue RAMs (their
    // enable bits above all) have no reset of their own and hold anything after power-up.
    let st = m.reg_enum("state", &st_ty, st_ty.item("ST_CLEAR"));
    let flush = m.reg("flush", 1, 1);
    let clear_idx = m.reg("clear_idx", qw, 0);
    let adm_act = m.reg("adm_act", 1, 0);
    let wrr_cls = m.reg("wrr_cls", 2, 1);
    let wrr_cnt = m.reg("wrr_cnt", 9, 0);
    let cur_qid = m.reg("cur_qid", qw, 0);
    let cur_cls = m.reg("cur_cls", 2, 0);
    let credits = m.reg("credits", cw, u64::from(p.fetch_slots));
    // IDLE's decision is registered (which RAMs to read, at which queue, and the state that
    // follows) and ST_READ reads the queue RAMs a cycle later, for the clock: the decision's
    // logic (the class FIFO heads, eligibility, the fetch conditions, the priority) would
    // otherwise steer the RAMs' read address.
    let rd_next = m.reg_enum("read_next", &st_ty, st_ty.item("ST_IDLE"));
    let rd_sq = m.reg("read_sq", 1, 0);
    let rd_cq = m.reg("read_cq", 1, 0);
    let rd_qid = m.reg("read_qid", qw, 0);

    let cls = classes(m, cx, sq_space, st, &st_ty, flush);
    let Classes {
        push_en,
        push_cls,
        push_qid,
        push_late,
        pop_en,
        ref cls_v,
        ref cls_ok,
        ref cls_mid,
        cur_cls_sig,
        ..
    } = cls;

    let src = sources(m, cx, io);
    let Sources {
        icpl_v,
        cpl_take,
        cpl_v,
        src_v,
        x_sqid,
        x_cid,
        x_status,
        x_dw0,
        x_bad,
        ..
    } = src;

    // AXI channel state.
    let ar_v = m.reg("ar_valid", 1, 0);
    let ar_addr = m.reg("ar_addr", 64, 0);
    let ar_len = m.reg("ar_len", 8, 0);
    let aw_v = m.reg("aw_valid", 1, 0);
    let aw_addr = m.reg("aw_addr", 64, 0);
    let w_v = m.reg("w_valid", 1, 0);
    let w_beat = m.reg("w_beat", 1, 0);
    let cqe = m.reg_noreset("cqe", 128);
    let ar_issue = m.wire("ar_issue", 1);
    let aw_issue = m.wire("aw_issue", 1);

    let u_desc = m.instance("u_fetch_desc", desc_fifo);
    let u_fb = m.instance("u_fetch_buf", fb_fifo);
    let u_pb = m.instance("u_post_pending", pb_fifo);
    let desc_room = m.bind_out(u_desc, "s_ready_o");
    let pb_room = m.bind_out(u_pb, "s_ready_o");

    // ---------------------------------------------------------------- decisions in IDLE
    let live = m.net("live", rdy.q & !cfs.q);
    let go_reset = m.net("go_reset", !cc_en & rdy.q);
    let go_enable = m.net("go_enable", cc_en & !rdy.q);
    let db_bad_qid = m.net("db_bad_qid", db_qid.q.gt(nq));
    let op_bad = m.net(
        "op_bad",
        op_qid.q.gt(nq) | op_qid.q.eq(0) | op_code.q.eq(0) | op_code.q.gt(OP_DELETE_CQ),
    );
    let aw_free = m.net("aw_free", !aw_v.q & !w_v.q);
    let can_post = m.net("can_post", aw_free & pb_room);
    let cls_any = m.net("sched_any", cls_v[0] | cls_v[1] | cls_v[2] | cls_v[3]);
    // A decision waits while some class is rotating ineligible heads away, so it sees every
    // class either with an eligible head, empty, or blocked (no eligible queue at all).
    let cls_ok_any = m.net(
        "sched_ok_any",
        cls_ok[0] | cls_ok[1] | cls_ok[2] | cls_ok[3],
    );
    let cls_rotating = m.net(
        "sched_rotating",
        cls_mid[0] | cls_mid[1] | cls_mid[2] | cls_mid[3],
    );
    let can_fetch = m.net(
        "can_fetch",
        live & !ar_v.q
            & credits.q.ge(u64::from(p.fetch_burst))
            & desc_room
            & (adm_act.q | cls_ok_any & !cls_rotating),
    );
    let Wrr {
        wrr_pick,
        wrr_cnt_new,
        pick_qid,
    } = wrr(m, csr, wrr_cls, wrr_cnt, &cls);

    // ---------------------------------------------------------------- FETCH computations
    // Two cycles, for the clock: ST_FETCH registers the distances from the SQ's RAM word (the
    // SQEs posted, those before the ring's end, the cap, the sampler's offset); ST_FETCH_N
    // takes the burst's size as their minimum and writes the word back (the RAM's read data
    // holds meanwhile: no other access starts).
    let f_to_4k: Expr = if iw > 6 {
        (lit(kw, 64) - s_head.slice(5, 0).zext(kw)).ex()
    } else {
        lit(kw, 64)
    };
    let ab_lim = m.net(
        "f_ab_limit",
        mux(
            arb_ab.eq(7),
            lit(kw, u128::from(p.fetch_burst)),
            min(
                lit(kw, 1).shl_by(arb_ab),
                lit(kw, u128::from(p.fetch_burst)),
            ),
        ),
    );
    // What is left of the WRR class's turn (weight + 1 - used), capped at fetch_burst; no
    // cap for the admin queue and the urgent class (and in round-robin mode).
    let turn_left = m.net(
        "f_turn_left",
        min(
            weight(csr, cur_cls.q.ex()) + 1 - wrr_cnt.q,
            lit(9, u128::from(p.fetch_burst)),
        ),
    );
    // At most fetch_burst (<= 64), so bits at and above kw (>= 8) are zero when kw < 9.
    let turn_left_k: Expr = if kw >= 9 {
        turn_left.zext(kw)
    } else {
        m.unused("f_turn_left_hi", turn_left.slice(8, kw));
        turn_left.slice(kw - 1, 0)
    };
    let in_wrr_turn = m.net("f_in_wrr_turn", ams_wrr & cur_qid.q.ne(0) & cur_cls.q.ne(0));
    let f_lim = m.net(
        "f_limit",
        min(
            min(ab_lim.ex(), credits.q.zext(kw)),
            mux(in_wrr_turn, turn_left_k, lit(kw, u128::from(p.fetch_burst))),
        ),
    );
    let avail_r = m.reg_noreset("f_avail", kw);
    m.comment(
        avail_r.q,
        "ST_FETCH_N: SQEs posted (tail - head in the ring)",
    );
    let to_end_r = m.reg_noreset("f_to_end", kw);
    m.comment(to_end_r.q, "ST_FETCH_N: SQEs before the ring's end");
    let cap_r = m.reg_noreset("f_cap", kw);
    m.comment(
        cap_r.q,
        "ST_FETCH_N: at most this many (the 4 KiB page, arbitration, credits)",
    );
    let smp_off_r = m.reg_noreset("f_smp_off", kw);
    m.comment(
        smp_off_r.q,
        "ST_FETCH_N: the sampler's armed entry, from the head",
    );
    m.assign(avail_r.d, dist(s_tail.ex(), s_head.ex(), s_size1));
    m.assign(to_end_r.d, s_size1 - s_head.zext(kw));
    m.assign(cap_r.d, min(f_to_4k, f_lim.ex()));
    m.assign(smp_off_r.d, dist(s_smp_idx.ex(), s_head.ex(), s_size1));
    // The burst's size is the least of the three, and what follows from which one it is, from
    // four compares made side by side (not a chain of minimums, then compares of the result).
    let (avail, to_end, cap) = (avail_r.q, to_end_r.q, cap_r.q);
    let end_least = m.net("f_end_least", to_end.le(avail) & to_end.le(cap));
    m.comment(
        end_least,
        "the burst reaches the ring's end: the head wraps to 0",
    );
    let avail_least = m.net("f_avail_least", avail.le(cap) & avail.le(to_end));
    m.comment(avail_least, "the burst takes every SQE posted");
    let f_n_wide = m.net(
        "f_n_wide",
        mux(
            end_least,
            to_end.ex(),
            mux(avail_least, avail.ex(), cap.ex()),
        ),
    );
    let f_n = m.net("f_n", f_n_wide.slice(nb - 1, 0));
    let f_head_new = m.net(
        "f_head_new",
        mux(
            end_least,
            lit(iw, 0),
            (s_head.zext(kw) + f_n_wide).slice(iw - 1, 0),
        ),
    );
    let f_more = m.net("f_more", !avail_least);
    // The sampler's armed entry is in this burst (before each of the three): its SQE is the
    // timed command.
    let f_smp_off = smp_off_r.q;
    let f_timed = m.net(
        "f_timed",
        s_smp.eq(1) & f_smp_off.lt(avail) & f_smp_off.lt(to_end) & f_smp_off.lt(cap),
    );
    let space_idx = m.net("space_idx", cur_qid.q - 1);
    let f_elig = m.net(
        "f_eligible",
        cur_qid.q.eq(0) | sq_space.shr_by(space_idx).bit(0),
    );
    let s_cls = m.net("s_class", mux(ams_wrr, s_prio.ex(), lit(2, 0)));
    let f_addr = m.net(
        "f_addr",
        cat([s_base.ex(), zeros(12)]) + cat([zeros(64 - iw - 6), s_head.ex(), zeros(6)]),
    );
    let lb = clog2(u64::from(bps)).min(if bps == 1 { 0 } else { 32 });
    let f_len = m.net(
        "f_len",
        (f_n.zext(9).shl_by(lit(4, u128::from(lb))) - 1).slice(7, 0),
    );

    // DB computations.
    let d_val = m.net("db_value", db_val.q.ex());
    let d_val_i = m.net("db_value_idx", db_val.q.resize(iw));
    let d_sq_bad = m.net("db_sq_value_bad", d_val.gt(s_size.zext(16)));
    // The new head lies past the tail, going round the ring from the old head: compares only
    // (no ring distances), for the clock. With both at or after the head, or both before it
    // (wrapped), the ring order is the index order; otherwise the wrapped one is further.
    let d_from_head = m.net("db_cq_value_from_head", d_val_i.ge(c_head));
    let t_from_head = m.net("db_cq_tail_from_head", c_tail.ge(c_head));
    let d_cq_over = m.net(
        "db_cq_past_tail",
        mux(
            d_from_head.eq(t_from_head),
            d_val_i.gt(c_tail),
            !d_from_head,
        ),
    );
    let d_cq_bad = m.net("db_cq_value_bad", d_val.gt(c_size.zext(16)) | d_cq_over);
    let d_newwork = m.net("db_new_work", d_val_i.ne(s_head) & !s_act);
    // The sampler is free for a doorbell accepted at db_time unless its last post came at or
    // after db_time: `s_smp_t - db_time <= now - db_time` in 32-bit time. No post is stamped
    // `now` while ST_DB holds the SQ's word (one queue RAM access at a time), so the window may
    // end a cycle before now, and it is tested with compares only, for the clock: `s_smp_t`
    // lies from db_time to the cycle before now, going forward (the window wraps past 2^32
    // when its end is below its start; ST_DB comes three cycles after db_time at the earliest).
    let now_prev = m.reg("lat_now_prev", now.q.width(), 0);
    m.comment(now_prev.q, "now, a cycle ago");
    m.assign(now_prev.d, now.q);
    let smp_from_db = m.net("smp_posted_from_db", s_smp_t.ge(db_time.q));
    let smp_to_prev = m.net("smp_posted_to_prev", s_smp_t.le(now_prev.q));
    let smp_late = m.net(
        "smp_posted_since_db",
        mux(
            now_prev.q.lt(db_time.q),
            smp_from_db | smp_to_prev,
            smp_from_db & smp_to_prev,
        ),
    );
    let smp_free = m.net("smp_free", s_smp.eq(0) | (s_smp.eq(3) & !smp_late));
    let smp_arm = m.net("smp_arm", db_qid.q.ne(0) & d_val_i.ne(s_tail) & smp_free);
    let db_arm = m.net("db_arm", !db_cq.q & s_en & !d_sq_bad & smp_arm);
    let r_timed = m.wire("r_timed", 1);
    let lc_inval = m.net(
        "lat_cmd_invalidate",
        st.q.eq(st_ty.item("ST_DB")) & db_arm & !r_timed,
    );

    // CPL computations.
    // The tail is the ring's last slot (QSIZE is 0-based): it wraps.
    // The new tail is the slot after the old one, kept in the CQ's word (its successor is
    // computed for the word written back, off the path of the full-CQ test).
    let p_wrap = m.net("p_wrap", c_tail.eq(c_size));
    let p_tail_new = m.net("p_tail_new", c_next);
    let p_full = m.net("p_full", p_tail_new.eq(c_head));
    let p_next_new = m.net("p_next_new", mux(c_next.eq(c_size), lit(iw, 0), c_next + 1));
    let lc_valid = m.net("lat_cmd_valid", lc_rd.bit(18));
    let lc_cid = m.net("lat_cmd_cid", lc_rd.slice(17, 2));
    let lc_dir = m.net("lat_cmd_dir", lc_rd.slice(1, 0));
    let p_timed = m.net("p_timed", s_smp.eq(2) & lc_valid & lc_cid.eq(x_cid));
    let p_addr = m.net(
        "p_addr",
        cat([c_base.ex(), zeros(12)]) + cat([zeros(64 - iw - 4), c_tail.ex(), zeros(4)]),
    );
    let p_cqe = m.net(
        "p_cqe",
        cat([
            x_status.ex(),
            c_phase.ex(),
            x_cid.ex(),
            x_sqid.ex(),
            hd_rd.zext(16),
            zeros(32),
            x_dw0.ex(),
        ]),
    );

    // Quiet: nothing in flight, for the end of a controller reset.
    let io_infl = m.reg("io_inflight", 32, 0);
    let adm_infl = m.reg("admin_inflight", 32, 0);
    let desc_v = m.wire("desc_valid", 1);
    let fb_v = m.wire("fb_valid", 1);
    let pb_v = m.wire("pb_valid", 1);
    let io_v = m.reg("io_cmd_valid", 1, 0);
    let adm_v = m.reg("admin_cmd_valid", 1, 0);
    let quiet = m.net(
        "quiet",
        !ar_v.q
            & !desc_v
            & !fb_v
            & !cls_any
            & !io_v.q
            & !adm_v.q
            & !icpl_v.q
            & io_infl.q.eq(0)
            & adm_infl.q.eq(0)
            & aw_free
            & !pb_v,
    );
    let r_hd_we = m.wire("r_hd_we", 1);
    let ev_reg = m.wire("ev_bad_db_reg", 1);
    let ev_val = m.wire("ev_bad_db_value", 1);
    let ctl_done = m.wire("reset_done", 1);

    let zero_iw = lit(iw, 0);
    let sq_admin = sql.pack(
        None,
        &[
            ("en", lit(1, 1)),
            ("size", aqa.q.slice(11, 0).resize(iw)),
            ("base", asq.q.ex()),
        ],
    );
    // A new CQ's tail is 0 and the slot after it 1 (0 in a ring of one slot, which is never
    // valid for a CQ: it is then always full).
    let first_next = |size: Expr| mux(size.eq(0), lit(iw, 0), lit(iw, 1));
    let cq_admin = cql.pack(
        None,
        &[
            ("en", lit(1, 1)),
            ("ien", lit(1, 1)),
            ("phase", lit(1, 1)),
            ("size", aqa.q.slice(27, 16).resize(iw)),
            ("next", first_next(aqa.q.slice(27, 16).resize(iw))),
            ("base", acq.q.ex()),
        ],
    );
    let sq_create = sql.pack(
        None,
        &[
            ("en", lit(1, 1)),
            ("act", s_act.ex()),
            ("prio", op_prio.q.ex()),
            ("cqid", op_cqid.q.ex()),
            ("size", op_size.q.ex()),
            ("base", op_base.q.ex()),
        ],
    );
    let cq_create = cql.pack(
        None,
        &[
            ("en", lit(1, 1)),
            ("ien", op_ien.q.ex()),
            ("phase", lit(1, 1)),
            ("vec", op_vec.q.ex()),
            ("size", op_size.q.ex()),
            ("next", first_next(op_size.q.ex())),
            ("base", op_base.q.ex()),
        ],
    );
    let sq_delete = sql.pack(Some(sq_rd), &[("en", lit(1, 0))]);
    let cq_delete = cql.pack(Some(cq_rd), &[("en", lit(1, 0))]);
    let sq_db = sql.pack(
        Some(sq_rd),
        &[
            ("tail", d_val_i.ex()),
            ("act", s_act | d_newwork),
            ("smp", mux(smp_arm, lit(2, 1), s_smp.ex())),
            ("smp_idx", mux(smp_arm, s_tail.ex(), s_smp_idx.ex())),
            ("smp_t", mux(smp_arm, db_time.q.ex(), s_smp_t.ex())),
        ],
    );
    let cq_db = cql.pack(Some(cq_rd), &[("head", d_val_i.ex())]);
    let sq_idle = sql.pack(Some(sq_rd), &[("act", lit(1, 0))]);
    let sq_fetch = sql.pack(
        Some(sq_rd),
        &[
            ("head", f_head_new.ex()),
            ("act", f_more.ex()),
            ("fetched", s_fetched + f_n.zext(32)),
            ("smp", mux(f_timed, lit(2, 2), s_smp.ex())),
        ],
    );
    let sq_post = sql.pack(
        Some(sq_rd),
        &[
            ("completed", s_completed + 1),
            ("smp", mux(p_timed, lit(2, 3), s_smp.ex())),
            ("smp_t", mux(p_timed, now.q.ex(), s_smp_t.ex())),
        ],
    );
    let cq_post = cql.pack(
        Some(cq_rd),
        &[
            ("tail", p_tail_new.ex()),
            ("next", p_next_new.ex()),
            ("phase", c_phase ^ p_wrap),
        ],
    );
    let _ = zero_iw;

    // IDLE's decision to read the queue RAMs: ST_READ does it, then goes to `next`.
    let read = |c: &mut Comb, sq: Expr, cq: Expr, qid: Expr, next: &str| {
        c.set(rd_sq.d, sq);
        c.set(rd_cq.d, cq);
        c.set(rd_qid.d, qid);
        c.set(rd_next.d, st_ty.item(next));
        c.set(st.d, st_ty.item("ST_READ"));
    };
    m.comb(|c| {
        c.set(st.d, st.q);
        c.set(sq_re, 0);
        c.set(sq_raddr, 0);
        c.set(cq_re, 0);
        c.set(cq_raddr, 0);
        c.set(sq_we, 0);
        c.set(sq_waddr, 0);
        c.set(sq_wdata, 0);
        c.set(cq_we, 0);
        c.set(cq_waddr, 0);
        c.set(cq_wdata, 0);
        c.set(fsm_hd_we, 0);
        c.set(db_take, 0);
        c.set(op_take, 0);
        c.set(cpl_take, 0);
        c.set(push_en, 0);
        c.set(push_cls, 0);
        c.set(push_qid, 0);
        c.set(push_late, 0);
        c.set(pop_en, 0);
        c.set(adm_act.d, adm_act.q);
        c.set(wrr_cls.d, wrr_cls.q);
        c.set(wrr_cnt.d, wrr_cnt.q);
        c.set(cur_qid.d, cur_qid.q);
        c.set(cur_cls.d, cur_cls.q);
        c.set(rd_next.d, rd_next.q);
        c.set(rd_sq.d, rd_sq.q);
        c.set(rd_cq.d, rd_cq.q);
        c.set(rd_qid.d, rd_qid.q);
        c.set(ar_issue, 0);
        c.set(aw_issue, 0);
        c.set(clear_idx.d, clear_idx.q);
        c.set(flush.d, flush.q);
        c.set(rdy.d, rdy.q);
        c.set(ev_reg, 0);
        c.set(ev_val, 0);
        c.set(ctl_done, 0);
        c.case(st.q, |a| {
            a.arm(st_ty.item("ST_IDLE"), |c| {
                c.if_(go_reset, |c| {
                    c.set(st.d, st_ty.item("ST_CLEAR"));
                    c.set(flush.d, 1);
                    c.set(clear_idx.d, 0);
                })
                .else_if(go_enable & !r_hd_we, |c| {
                    c.set(sq_we, 1);
                    c.set(sq_waddr, 0);
                    c.set(sq_wdata, sq_admin.clone());
                    c.set(cq_we, 1);
                    c.set(cq_waddr, 0);
                    c.set(cq_wdata, cq_admin.clone());
                    c.set(fsm_hd_we, 1);
                    c.set(rdy.d, 1);
                    c.set(adm_act.d, 0);
                })
                .else_if(db_pend.q, |c| {
                    c.if_(!live, |c| c.set(db_take, 1))
                        .else_if(db_bad_qid, |c| {
                            c.set(db_take, 1);
                            c.set(ev_reg, 1);
                        })
                        .else_(|c| read(c, !db_cq.q, db_cq.q.ex(), db_qid.q.resize(qw), "ST_DB"));
                })
                .else_if(op_pend.q, |c| {
                    c.if_(op_bad, |c| c.set(op_take, 1))
                        .else_(|c| read(c, lit(1, 1), lit(1, 1), op_qid.q.resize(qw), "ST_OP"));
                })
                .else_if(cpl_v & (!rdy.q | (live & x_bad)), |c| {
                    c.set(cpl_take, 1);
                })
                .else_if(cpl_v & live & can_post, |c| {
                    read(c, lit(1, 1), lit(1, 0), x_sqid.resize(qw), "ST_CPL_SQ")
                })
                .else_if(can_fetch, |c| {
                    c.if_(adm_act.q, |c| {
                        read(c, lit(1, 1), lit(1, 0), lit(qw, 0), "ST_FETCH");
                        c.set(cur_qid.d, 0);
                        c.set(adm_act.d, 0);
                    })
                    .else_(|c| {
                        read(c, lit(1, 1), lit(1, 0), pick_qid.ex(), "ST_FETCH");
                        c.set(cur_qid.d, pick_qid);
                        c.set(cur_cls.d, cur_cls_sig);
                        c.set(pop_en, 1);
                        c.if_(!cls_ok[0], |c| {
                            c.set(wrr_cls.d, wrr_pick);
                            c.set(wrr_cnt.d, wrr_cnt_new);
                        });
                    });
                });
            });
            a.arm(st_ty.item("ST_READ"), |c| {
                c.set(sq_re, rd_sq.q);
                c.set(sq_raddr, rd_qid.q);
                c.set(cq_re, rd_cq.q);
                c.set(cq_raddr, rd_qid.q);
                c.set(st.d, rd_next.q);
            });
            a.arm(st_ty.item("ST_DB"), |c| {
                // A doorbell waits while the timed-command RAM's one write port is taken by
                // an arriving timed SQE (whether it arms the sampler or not: that decision
                // stays off the path of every other write, for the clock).
                c.if_(!r_timed, |c| {
                    c.set(db_take, 1);
                    c.set(st.d, st_ty.item("ST_IDLE"));
                    c.if_(!db_cq.q, |c| {
                        c.if_(!s_en, |c| c.set(ev_reg, 1))
                            .else_if(d_sq_bad, |c| c.set(ev_val, 1))
                            .else_(|c| {
                                c.set(sq_we, 1);
                                c.set(sq_waddr, db_qid.q.resize(qw));
                                c.set(sq_wdata, sq_db.clone());
                                c.if_(d_newwork, |c| {
                                    c.if_(db_qid.q.eq(0) & ams_wrr, |c| c.set(adm_act.d, 1))
                                        .else_(|c| {
                                            c.set(push_en, 1);
                                            c.set(push_cls, s_cls);
                                            c.set(push_qid, db_qid.q.resize(qw));
                                        });
                                });
                            });
                    })
                    .else_(|c| {
                        c.if_(!c_en, |c| c.set(ev_reg, 1))
                            .else_if(d_cq_bad, |c| c.set(ev_val, 1))
                            .else_(|c| {
                                c.set(cq_we, 1);
                                c.set(cq_waddr, db_qid.q.resize(qw));
                                c.set(cq_wdata, cq_db.clone());
                            });
                    });
                });
            });
            a.arm(st_ty.item("ST_OP"), |c| {
                c.set(sq_waddr, op_qid.q.resize(qw));
                c.set(cq_waddr, op_qid.q.resize(qw));
                c.if_(!r_hd_we, |c| {
                    c.set(op_take, 1);
                    c.set(st.d, st_ty.item("ST_IDLE"));
                    c.case(op_code.q, |a| {
                        a.arm(OP_CREATE_SQ, |c| {
                            c.set(sq_we, 1);
                            c.set(sq_wdata, sq_create.clone());
                            c.set(fsm_hd_we, 1);
                        });
                        a.arm(OP_CREATE_CQ, |c| {
                            c.set(cq_we, 1);
                            c.set(cq_wdata, cq_create.clone());
                        });
                        a.arm(OP_DELETE_SQ, |c| {
                            c.set(sq_we, 1);
                            c.set(sq_wdata, sq_delete.clone());
                        });
                        a.arm(OP_DELETE_CQ, |c| {
                            c.set(cq_we, 1);
                            c.set(cq_wdata, cq_delete.clone());
                        });
                        a.default(|_| {});
                    });
                });
            });
            a.arm(st_ty.item("ST_CPL_SQ"), |c| {
                c.set(cq_re, 1);
                c.set(cq_raddr, s_cqid);
                c.set(st.d, st_ty.item("ST_CPL_CQ"));
            });
            a.arm(st_ty.item("ST_CPL_CQ"), |c| {
                c.set(st.d, st_ty.item("ST_IDLE"));
                c.if_(!c_en, |c| c.set(cpl_take, 1)).else_if(!p_full, |c| {
                    c.set(cpl_take, 1);
                    c.set(aw_issue, 1);
                    c.set(cq_we, 1);
                    c.set(cq_waddr, s_cqid);
                    c.set(cq_wdata, cq_post.clone());
                    c.set(sq_we, 1);
                    c.set(sq_waddr, x_sqid.resize(qw));
                    c.set(sq_wdata, sq_post.clone());
                });
            });
            a.arm(st_ty.item("ST_FETCH"), |c| {
                c.set(st.d, st_ty.item("ST_IDLE"));
                c.set(sq_waddr, cur_qid.q);
                c.if_(!s_en | s_tail.eq(s_head), |c| {
                    c.set(sq_we, 1);
                    c.set(sq_wdata, sq_idle.clone());
                })
                .else_(|c| c.set(st.d, st_ty.item("ST_FETCH_N")));
            });
            a.arm(st_ty.item("ST_FETCH_N"), |c| {
                c.set(st.d, st_ty.item("ST_IDLE"));
                c.set(sq_waddr, cur_qid.q);
                c.set(push_qid, cur_qid.q);
                c.set(push_cls, s_cls);
                c.if_(!f_elig, |c| {
                    c.set(push_en, 1);
                })
                .else_(|c| {
                    c.set(ar_issue, 1);
                    c.set(sq_we, 1);
                    c.set(sq_wdata, sq_fetch.clone());
                    c.if_(in_wrr_turn, |c| c.set(wrr_cnt.d, wrr_cnt.q + f_n.zext(9)));
                    c.if_(f_more, |c| {
                        c.if_(cur_qid.q.eq(0) & ams_wrr, |c| c.set(adm_act.d, 1))
                            .else_(|c| c.set(push_late, 1));
                    });
                });
            });
            a.arm(st_ty.item("ST_CLEAR"), |c| {
                c.set(cpl_take, cpl_v);
                c.set(db_take, db_pend.q);
                c.set(op_take, op_pend.q);
                c.set(sq_waddr, clear_idx.q);
                c.set(cq_waddr, clear_idx.q);
                c.if_(!r_hd_we, |c| {
                    c.set(sq_we, 1);
                    c.set(cq_we, 1);
                    c.set(fsm_hd_we, 1);
                    c.set(clear_idx.d, clear_idx.q + 1);
                    c.if_(clear_idx.q.eq(nq), |c| c.set(st.d, st_ty.item("ST_DRAIN")));
                });
            });
            a.arm(st_ty.item("ST_DRAIN"), |c| {
                c.set(cpl_take, cpl_v);
                c.set(db_take, db_pend.q);
                c.set(op_take, op_pend.q);
                c.if_(quiet & !cpl_v & !src_v, |c| {
                    c.set(st.d, st_ty.item("ST_IDLE"));
                    c.set(rdy.d, 0);
                    c.set(flush.d, 0);
                    c.set(adm_act.d, 0);
                    c.set(wrr_cls.d, 1);
                    c.set(wrr_cnt.d, 0);
                    c.set(ctl_done, 1);
                });
            });
            a.default(|c| c.set(st.d, st_ty.item("ST_IDLE")));
        });
    });

    // Functional coverage: queue wrap and phase flip, a full CQ, the doorbell faults, every
    // arbitration class, controller reset and fatal status.
    let in_st = |n: &str| st.q.eq(st_ty.item(n));
    let posting = m.net("cov_posting", in_st("ST_CPL_CQ") & c_en);
    m.cover("cq_post_phase_flip", posting & !p_full & p_wrap);
    m.cover("cq_full_waits", posting & p_full);
    m.cover("sq_fetch_to_ring_end", ar_issue & end_least);
    m.cover("doorbell_invalid_register", ev_reg);
    m.cover("doorbell_invalid_value", ev_val);
    // No point for an `admin_cpl` naming an SQ above io_queue_pairs (dropped): firmware answers
    // each command with the sqid it came with (mod.rs), so only a firmware bug reaches it; an
    // extra answer would also unbalance the in-flight count a reset waits on.
    m.cover("fetch_admin_sq", ar_issue & cur_qid.q.eq(0));
    for (k, name) in ["urgent", "high", "medium", "low"].iter().enumerate() {
        m.cover(
            &format!("fetch_class_{name}"),
            ar_issue & ams_wrr & cur_qid.q.ne(0) & cur_cls.q.eq(k as u64),
        );
    }
    m.cover("fetch_round_robin", ar_issue & !ams_wrr & cur_qid.q.ne(0));
    m.cover("fetch_blocked_by_qos", in_st("ST_FETCH_N") & !f_elig);
    m.cover("controller_reset_sweep", in_st("ST_CLEAR"));
    m.cover("controller_fatal", cfs.q);
    Fsm {
        flush,
        credits,
        cur_qid,
        src,
        axi: Axi {
            ar_v,
            ar_addr,
            ar_len,
            aw_v,
            aw_addr,
            w_v,
            w_beat,
            cqe,
            ar_issue,
            aw_issue,
            u_desc,
            u_fb,
            u_pb,
        },
        f_n,
        f_head_new,
        f_smp_off,
        f_timed,
        f_addr,
        f_len,
        r_timed,
        lc_inval,
        lc_dir,
        p_timed,
        p_addr,
        p_cqe,
        io_infl,
        adm_infl,
        desc_v,
        fb_v,
        pb_v,
        io_v,
        adm_v,
        r_hd_we,
        ev_reg,
        ev_val,
        ctl_done,
    }
}
