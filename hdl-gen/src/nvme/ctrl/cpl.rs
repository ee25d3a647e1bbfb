//! Completions: the three sources (internal errors, firmware, I/O) and their arbiter, and the
//! CQ post (AW, W, B) of the CQE the FSM built.

use super::fetch::Dispatch;
use super::fsm::{Axi, Fsm};
use super::regs::Bar;
use super::{Ctx, Ports, Rams};
use hdl_builder::prelude::*;

/// The arbitrated completion and the internal completion's registers.
#[derive(Clone, Copy)]
pub(super) struct Sources {
    pub(super) icpl_v: Reg,
    pub(super) icpl_sqid: Reg,
    pub(super) icpl_cid: Reg,
    pub(super) icpl_st: Reg,
    pub(super) cpl_take: Sig,
    pub(super) icpl_take: Sig,
    pub(super) cpl_v: Sig,
    pub(super) src_v: Sig,
    pub(super) x_sqid: Sig,
    pub(super) x_cid: Sig,
    pub(super) x_status: Sig,
    pub(super) x_dw0: Sig,
    pub(super) x_bad: Sig,
}

/// A CQE write response, for the interrupts and the latency histograms.
#[derive(Clone, Copy)]
pub(super) struct Post {
    pub(super) pbd: Sig,
    pub(super) b_fire: Sig,
    pub(super) b_err: Sig,
}

pub(super) fn sources(m: &mut ModuleBuilder, cx: &Ctx, io: &Ports) -> Sources {
    let (qw, nq, arb) = (cx.qw, cx.nq, &cx.arb);
    let Ports {
        ref io_cpl,
        ref adm_cpl,
        ..
    } = *io;
    // Completion sources: 0 internal errors, 1 admin (firmware), 2 I/O.
    let icpl_v = m.reg("icpl_valid", 1, 0);
    let icpl_sqid = m.reg("icpl_sqid", qw, 0);
    let icpl_cid = m.reg("icpl_cid", 16, 0);
    let icpl_st = m.reg("icpl_status", 15, 0);
    let u_arb = m.instance("u_cpl_arbiter", arb);
    m.bind(
        u_arb,
        "req_i",
        cat([io_cpl.valid.ex(), adm_cpl.valid.ex(), icpl_v.q.ex()]),
    );
    // The arbitrated completion is taken into a register (the completion buffer) whenever it
    // is empty, and the FSM works from the register: the sources' handshake ends there, and
    // their outputs stay off the FSM's paths, for the clock.
    let buf_v = m.reg("cpl_buf_valid", 1, 0);
    let cpl_take = m.wire("cpl_take", 1);
    m.comment(cpl_take, "the FSM is done with the buffered completion");
    let arb_v = m.bind_out(u_arb, "valid_o");
    m.bind(u_arb, "ready_i", !buf_v.q);
    let gnt = m.bind_out(u_arb, "gnt_o");
    let gidx = m.bind_out(u_arb, "gnt_idx_o");
    m.unused("cpl_gnt_idx", gidx);
    let load = m.net("cpl_buf_load", arb_v & !buf_v.q);
    m.assign(adm_cpl.ready, !buf_v.q & gnt.bit(1));
    m.assign(io_cpl.ready, !buf_v.q & gnt.bit(2));
    let icpl_take = m.net("icpl_take", !buf_v.q & gnt.bit(0));
    m.assign(buf_v.d, load | (buf_v.q & !cpl_take));
    let x_sqid = m.net(
        "cpl_sqid",
        mux(
            gnt.bit(0),
            icpl_sqid.q.zext(16),
            mux(
                gnt.bit(1),
                adm_cpl.field("sqid").ex(),
                io_cpl.field("sqid").ex(),
            ),
        ),
    );
    let x_cid = m.net(
        "cpl_cid",
        mux(
            gnt.bit(0),
            icpl_cid.q.ex(),
            mux(gnt.bit(1), adm_cpl.field("cid"), io_cpl.field("cid")),
        ),
    );
    let x_status = m.net(
        "cpl_status",
        mux(
            gnt.bit(0),
            icpl_st.q.ex(),
            mux(gnt.bit(1), adm_cpl.field("status"), io_cpl.field("status")),
        ),
    );
    let x_dw0 = m.net(
        "cpl_dw0",
        mux(
            gnt.bit(0),
            lit(32, 0),
            mux(gnt.bit(1), adm_cpl.field("dw0"), io_cpl.field("dw0")),
        ),
    );
    // Each source's SQ id is checked before the grant picks one: the compare is off the path
    // from the arbiter to the FSM's decision.
    let x_bad = m.net(
        "cpl_bad_sqid",
        mux(
            gnt.bit(0),
            icpl_sqid.q.zext(16).gt(nq),
            mux(
                gnt.bit(1),
                adm_cpl.field("sqid").gt(nq),
                io_cpl.field("sqid").gt(nq),
            ),
        ),
    );
    let mut buffered = |name: &str, x: Sig| {
        let r = m.reg_noreset(name, x.width());
        m.assign(r.d, mux(load, x.ex(), r.q.ex()));
        r.q
    };
    Sources {
        icpl_v,
        icpl_sqid,
        icpl_cid,
        icpl_st,
        cpl_take,
        icpl_take,
        cpl_v: buf_v.q,
        src_v: arb_v,
        x_sqid: buffered("cpl_buf_sqid", x_sqid),
        x_cid: buffered("cpl_buf_cid", x_cid),
        x_status: buffered("cpl_buf_status", x_status),
        x_dw0: buffered("cpl_buf_dw0", x_dw0),
        x_bad: buffered("cpl_buf_bad_sqid", x_bad),
    }
}

pub(super) fn post(
    m: &mut ModuleBuilder,
    cx: &Ctx,
    io: &Ports,
    ram: &Rams,
    bar: &Bar,
    f: &Fsm,
    d: &Dispatch,
) -> Post {
    let w = cx.w;
    let Ports {
        awvalid,
        awready,
        awaddr,
        awlen,
        awsize,
        awburst,
        wvalid,
        wready,
        wdata,
        wstrb,
        wlast,
        bvalid,
        bready,
        bresp,
        ..
    } = *io;
    let Rams {
        s_smp_t,
        c_ien,
        c_vec,
        ..
    } = *ram;
    let cfs = bar.cfs;
    let Fsm {
        axi:
            Axi {
                aw_v,
                aw_addr,
                w_v,
                w_beat,
                cqe,
                aw_issue,
                u_pb,
                ..
            },
        p_addr,
        p_cqe,
        lc_dir,
        p_timed,
        pb_v,
        ctl_done,
        ..
    } = *f;
    let d_fatal = d.d_fatal;
    // ---------------------------------------------------------------- CQ post: AW, W, B
    m.assign(aw_v.d, aw_issue | (aw_v.q & !awready));
    m.assign(aw_addr.d, mux(aw_issue, p_addr, aw_addr.q));
    m.assign(cqe.d, mux(aw_issue, p_cqe, cqe.q));
    let w_fire = m.net("w_fire", w_v.q & wready);
    let w_last: Expr = if w == 64 { w_beat.q.ex() } else { lit(1, 1) };
    m.assign(w_v.d, aw_issue | (w_v.q & !(w_fire & w_last.clone())));
    m.assign(
        w_beat.d,
        mux(aw_issue, lit(1, 0), mux(w_fire, !w_beat.q, w_beat.q.ex())),
    );
    m.assign(awvalid, aw_v.q);
    m.assign(awaddr, aw_addr.q);
    m.assign(awlen, if w == 64 { 1u64 } else { 0 });
    m.assign(awsize, clog2(u64::from(w / 8)) as u64);
    m.assign(awburst, 1);
    m.assign(wvalid, w_v.q);
    m.assign(wlast, w_last);
    if w == 64 {
        m.assign(
            wdata,
            mux(w_beat.q, cqe.q.slice(127, 64), cqe.q.slice(63, 0)),
        );
        m.assign(wstrb, 0xffu64);
        m.unused("aw_addr_lo", aw_addr.q.slice(3, 0));
    } else {
        let lanes = clog2(u64::from(w / 8));
        m.assign(wdata, cqe.q.repeat(w / 128));
        if lanes > 4 {
            let lane = aw_addr.q.slice(lanes - 1, 4);
            m.assign(wstrb, lit(w / 8, 0xffff).shl_by(cat([lane, zeros(4)])));
        } else {
            m.assign(wstrb, ones(16));
        }
        m.unused("aw_addr_lo", cat([aw_addr.q.slice(3, 0), w_beat.q.ex()]));
    }
    m.bind(u_pb, "s_valid_i", aw_issue);
    m.bind(
        u_pb,
        "s_data_i",
        cat([
            s_smp_t.ex(),
            lc_dir.ex(),
            p_timed.ex(),
            c_ien.ex(),
            c_vec.ex(),
        ]),
    );
    let pbv = m.bind_out(u_pb, "m_valid_o");
    m.assign(pb_v, pbv);
    let pbd = m.bind_out(u_pb, "m_data_o");
    let pbc = m.bind_out(u_pb, "count_o");
    m.unused("pb_count", pbc);
    m.assign(bready, pbv);
    let b_fire = m.net("b_fire", bvalid & pbv);
    m.bind(u_pb, "m_ready_i", b_fire);
    let b_err = m.net("b_err", b_fire & bresp.ne(0));
    m.assign(cfs.d, mux(ctl_done, lit(1, 0), cfs.q | b_err | d_fatal));
    Post { pbd, b_fire, b_err }
}
