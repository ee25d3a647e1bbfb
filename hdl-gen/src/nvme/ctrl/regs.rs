//! BAR0 (the controller registers, the doorbells, the register reads) and the vendor CSRs
//! with the firmware's queue operations.

use super::{Ctx, Ports};
use hdl_builder::prelude::*;

/// BAR0 state the other parts read.
#[derive(Clone, Copy)]
pub(super) struct Bar {
    pub(super) aqa: Reg,
    pub(super) asq: Reg,
    pub(super) acq: Reg,
    pub(super) rdy: Reg,
    pub(super) cfs: Reg,
    pub(super) db_pend: Reg,
    pub(super) db_qid: Reg,
    pub(super) db_cq: Reg,
    pub(super) db_val: Reg,
    pub(super) db_take: Sig,
    pub(super) cc_en: Sig,
    pub(super) ams_wrr: Sig,
    pub(super) now: Reg,
    pub(super) db_time: Reg,
}

/// The vendor CSRs the other parts read, and the firmware queue operation captured.
#[derive(Clone, Copy)]
pub(super) struct Csr {
    pub(super) arb_ab: Sig,
    pub(super) arb_lpw: Sig,
    pub(super) arb_mpw: Sig,
    pub(super) arb_hpw: Sig,
    pub(super) co_thr: Sig,
    pub(super) co_time: Sig,
    pub(super) co_tick: Sig,
    pub(super) vc_vec: Sig,
    pub(super) vc_cd: Sig,
    pub(super) vc_we: Sig,
    pub(super) cnt_sel: Sig,
    pub(super) op_pend: Reg,
    pub(super) op_code: Reg,
    pub(super) op_qid: Reg,
    pub(super) op_base: Reg,
    pub(super) op_size: Reg,
    pub(super) op_prio: Reg,
    pub(super) op_ien: Reg,
    pub(super) op_cqid: Reg,
    pub(super) op_vec: Reg,
    pub(super) op_take: Sig,
}

pub(super) fn bar0(m: &mut ModuleBuilder, cx: &Ctx, io: &Ports) -> Bar {
    let (p, ba) = (cx.p, cx.ba);
    let Ports {
        bar_awvalid,
        bar_awready,
        bar_awaddr,
        bar_wvalid,
        bar_wready,
        bar_wdata,
        bar_wstrb,
        bar_bvalid,
        bar_bready,
        bar_bresp,
        bar_arvalid,
        bar_arready,
        bar_araddr,
        bar_rvalid,
        bar_rready,
        bar_rdata,
        bar_rresp,
        mps_o,
        ..
    } = *io;
    // ---------------------------------------------------------------- BAR0
    let cc = m.reg("cc", 24, 0);
    let aqa = m.reg("aqa", 32, 0);
    let asq = m.reg("asq", 52, 0);
    let acq = m.reg("acq", 52, 0);
    let intm = m.reg("intm", 32, 0);
    let rdy = m.reg("rdy", 1, 0);
    let cfs = m.reg("cfs", 1, 0);
    let shst = m.reg("shst", 2, 0);
    let bar_b = m.reg("bar_bvalid", 1, 0);
    let bar_r = m.reg("bar_rvalid", 1, 0);
    let bar_rd = m.reg("bar_rdata", 32, 0);
    let db_pend = m.reg("db_pend", 1, 0);
    let db_qid = m.reg("db_qid", 16, 0);
    let db_cq = m.reg("db_cq", 1, 0);
    let db_val = m.reg("db_val", 16, 0);
    let db_take = m.wire("db_take", 1);

    let wacc = m.net("bar_wacc", bar_awvalid & bar_wvalid & !bar_b.q & !db_pend.q);
    m.assign(bar_awready, wacc);
    m.assign(bar_wready, wacc);
    m.assign(bar_b.d, wacc | (bar_b.q & !bar_bready));
    m.assign(bar_bvalid, bar_b.q);
    m.assign(bar_bresp, 0);
    let wmask = m.net(
        "bar_wmask",
        cat((0..4).rev().map(|i| bar_wstrb.bit(i).repeat(8))),
    );
    let wa_reg = m.net("bar_wa_reg", bar_awaddr.slice(ba - 1, 12).eq(0));
    let wa_word = m.net("bar_wa_word", bar_awaddr.slice(11, 2));
    let merge = |old: Expr| (old & !wmask) | (bar_wdata & wmask);
    let wr = |i: u64| wacc & wa_reg & wa_word.eq(i);
    let cc_w = m.net("cc_write", wr(5));
    let cc_new = m.net(
        "cc_new",
        (merge(cc.q.zext(32)) & lit(32, 0x00ff_fff1)).slice(23, 0),
    );
    m.assign(cc.d, mux(cc_w, cc_new, cc.q));
    let aqa_w = m.net("aqa_write", wr(9));
    m.assign(
        aqa.d,
        mux(aqa_w, merge(aqa.q.ex()) & lit(32, 0x0fff_0fff), aqa.q),
    );
    let asq_lo = m.net("asq_lo_write", wr(10));
    let asq_hi = m.net("asq_hi_write", wr(11));
    let acq_lo = m.net("acq_lo_write", wr(12));
    let acq_hi = m.net("acq_hi_write", wr(13));
    let asq_lo_new = m.net(
        "asq_lo_new",
        merge(cat([asq.q.slice(19, 0), zeros(12)])).slice(31, 12),
    );
    let asq_hi_new = m.net("asq_hi_new", merge(asq.q.slice(51, 20)));
    m.assign(
        asq.d,
        mux(
            asq_lo,
            cat([asq.q.slice(51, 20), asq_lo_new.ex()]),
            mux(
                asq_hi,
                cat([asq_hi_new.ex(), asq.q.slice(19, 0)]),
                asq.q.ex(),
            ),
        ),
    );
    let acq_lo_new = m.net(
        "acq_lo_new",
        merge(cat([acq.q.slice(19, 0), zeros(12)])).slice(31, 12),
    );
    let acq_hi_new = m.net("acq_hi_new", merge(acq.q.slice(51, 20)));
    m.assign(
        acq.d,
        mux(
            acq_lo,
            cat([acq.q.slice(51, 20), acq_lo_new.ex()]),
            mux(
                acq_hi,
                cat([acq_hi_new.ex(), acq.q.slice(19, 0)]),
                acq.q.ex(),
            ),
        ),
    );
    let intms_w = m.net("intms_write", wr(3));
    let intmc_w = m.net("intmc_write", wr(4));
    let wbits = m.net("bar_wbits", bar_wdata & wmask);
    m.assign(
        intm.d,
        mux(
            intms_w,
            intm.q | wbits,
            mux(intmc_w, intm.q & !wbits, intm.q.ex()),
        ),
    );
    let cc_en = m.net("cc_en", cc.q.bit(0));
    let ams_wrr = m.net("ams_wrr", cc.q.slice(13, 11).eq(1));
    let shn = m.net("cc_shn", cc.q.slice(15, 14));
    m.assign(shst.d, mux(shn.ne(0), lit(2, 2), lit(2, 0)));
    m.assign(mps_o, cc.q.slice(10, 7));

    // Doorbells: 1000h + (2y [+1]) * (4 << DSTRD).
    let db_off = m.net("db_off", bar_awaddr - lit(ba, 0x1000));
    let slot_lo = 2 + p.stride;
    let db_slot = m.net("db_slot", db_off.slice(ba - 1, slot_lo));
    let aligned: Expr = if p.stride == 0 {
        lit(1, 1)
    } else {
        db_off.slice(slot_lo - 1, 2).eq(0)
    };
    let db_hit = m.net("db_hit", wacc & !wa_reg & aligned);
    let slot_w = ba - slot_lo;
    let slot_qid = if slot_w > 16 {
        db_slot.slice(16, 1)
    } else {
        db_slot.slice(slot_w - 1, 1).zext(16)
    };
    m.assign(db_pend.d, db_hit | (db_pend.q & !db_take));
    m.assign(db_qid.d, mux(db_hit, slot_qid, db_qid.q));
    m.assign(db_cq.d, mux(db_hit, db_slot.bit(0), db_cq.q));
    m.assign(db_val.d, mux(db_hit, bar_wdata.slice(15, 0), db_val.q));
    // Latency timestamps: a free-running cycle count; a doorbell's is its acceptance cycle.
    let now = m.reg("lat_now", 32, 0);
    m.assign(now.d, now.q + 1);
    let db_time = m.reg("db_time", 32, 0);
    m.assign(db_time.d, mux(db_hit, now.q, db_time.q));
    m.unused(
        "bar_awaddr_lo",
        cat([bar_awaddr.slice(1, 0), db_off.slice(1, 0)]),
    );

    // Reads.
    let racc = m.net("bar_racc", bar_arvalid & !bar_r.q);
    m.assign(bar_arready, racc);
    m.assign(bar_r.d, racc | (bar_r.q & !bar_rready));
    m.assign(bar_rvalid, bar_r.q);
    m.assign(bar_rresp, 0);
    m.assign(bar_rdata, bar_rd.q);
    let cap_lo = u64::from(p.max_depth - 1) | 1 << 16 | 1 << 17 | 0x10 << 24;
    let cap_hi = u64::from(p.stride) | 1 << 5 | 4 << 20;
    let ra_reg = m.net("bar_ra_reg", bar_araddr.slice(ba - 1, 12).eq(0));
    let ra_word = m.net("bar_ra_word", bar_araddr.slice(11, 2));
    m.unused("bar_araddr_lo", bar_araddr.slice(1, 0));
    let rval = m.wire("bar_rval", 32);
    m.comb(|c| {
        c.set(rval, 0);
        c.if_(ra_reg, |c| {
            c.case(ra_word, |a| {
                a.arm(0u64, |c| c.set(rval, lit(32, cap_lo.into())));
                a.arm(1u64, |c| c.set(rval, lit(32, cap_hi.into())));
                a.arm(2u64, |c| c.set(rval, lit(32, 0x0001_0400)));
                a.arms(vec![3u64, 4], |c| c.set(rval, intm.q));
                a.arm(5u64, |c| c.set(rval, cc.q.zext(32)));
                a.arm(7u64, |c| {
                    c.set(rval, cat([zeros(28), shst.q.ex(), cfs.q.ex(), rdy.q.ex()]))
                });
                a.arm(9u64, |c| c.set(rval, aqa.q));
                a.arm(10u64, |c| c.set(rval, cat([asq.q.slice(19, 0), zeros(12)])));
                a.arm(11u64, |c| c.set(rval, asq.q.slice(51, 20)));
                a.arm(12u64, |c| c.set(rval, cat([acq.q.slice(19, 0), zeros(12)])));
                a.arm(13u64, |c| c.set(rval, acq.q.slice(51, 20)));
                a.default(|_| {});
            });
        });
    });
    m.assign(bar_rd.d, mux(racc, rval, bar_rd.q));
    Bar {
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
    }
}

pub(super) fn vendor(m: &mut ModuleBuilder, cx: &Ctx, bar: &Bar) -> Csr {
    let (qw, iw, vw, u_csr) = (cx.qw, cx.iw, cx.vw, cx.u_csr);
    let Bar {
        cc_en, rdy, cfs, ..
    } = *bar;
    // ---------------------------------------------------------------- vendor CSRs
    let q_base_lo = m.bind_out(u_csr, "q_base_lo_addr_o");
    let q_base_hi = m.bind_out(u_csr, "q_base_hi_addr_o");
    let q_size = m.bind_out(u_csr, "q_cfg_size_o");
    let q_prio = m.bind_out(u_csr, "q_cfg_prio_o");
    let q_ien = m.bind_out(u_csr, "q_cfg_ien_o");
    let q_cqid = m.bind_out(u_csr, "q_bind_cqid_o");
    let q_vec = m.bind_out(u_csr, "q_bind_vector_o");
    let q_cmd_qid = m.bind_out(u_csr, "q_cmd_qid_o");
    let q_cmd_op = m.bind_out(u_csr, "q_cmd_op_o");
    let q_cmd_we = m.bind_out(u_csr, "q_cmd_op_we_o");
    let arb_ab = m.bind_out(u_csr, "arb_ab_o");
    let arb_lpw = m.bind_out(u_csr, "arb_lpw_o");
    let arb_mpw = m.bind_out(u_csr, "arb_mpw_o");
    let arb_hpw = m.bind_out(u_csr, "arb_hpw_o");
    let co_thr = m.bind_out(u_csr, "coalesce_thr_o");
    let co_time = m.bind_out(u_csr, "coalesce_time_o");
    let co_tick = m.bind_out(u_csr, "coal_tick_cycles_o");
    let vc_vec = m.bind_out(u_csr, "vec_cfg_vector_o");
    let vc_cd = m.bind_out(u_csr, "vec_cfg_cd_o");
    let vc_we = m.bind_out(u_csr, "vec_cfg_cd_we_o");
    let cnt_sel = m.bind_out(u_csr, "cnt_sel_qid_o");

    // Firmware queue operation, captured when q_cmd is written.
    let op_pend = m.reg("op_pend", 1, 0);
    let op_code = m.reg("op_code", 3, 0);
    let op_qid = m.reg("op_qid", 16, 0);
    let op_base = m.reg("op_base", 52, 0);
    let op_size = m.reg("op_size", iw, 0);
    let op_prio = m.reg("op_prio", 2, 0);
    let op_ien = m.reg("op_ien", 1, 0);
    let op_cqid = m.reg("op_cqid", qw, 0);
    let op_vec = m.reg("op_vec", vw, 0);
    let op_take = m.wire("op_take", 1);
    let op_load = m.net("op_load", q_cmd_we & !op_pend.q);
    m.assign(op_pend.d, op_load | (op_pend.q & !op_take));
    m.assign(op_code.d, mux(op_load, q_cmd_op, op_code.q));
    m.assign(op_qid.d, mux(op_load, q_cmd_qid, op_qid.q));
    m.assign(
        op_base.d,
        mux(op_load, cat([q_base_hi.ex(), q_base_lo.ex()]), op_base.q),
    );
    m.assign(op_size.d, mux(op_load, q_size.resize(iw), op_size.q));
    m.assign(op_prio.d, mux(op_load, q_prio, op_prio.q));
    m.assign(op_ien.d, mux(op_load, q_ien, op_ien.q));
    m.assign(op_cqid.d, mux(op_load, q_cqid.resize(qw), op_cqid.q));
    m.assign(op_vec.d, mux(op_load, q_vec.resize(vw), op_vec.q));
    m.unused(
        "csr_high_bits",
        cat([
            q_size.ex(),
            q_cqid.ex(),
            q_vec.ex(),
            vc_vec.ex(),
            cnt_sel.ex(),
        ]),
    );
    m.bind(u_csr, "status_busy_i", op_pend.q);
    m.bind(u_csr, "status_cc_en_i", cc_en);
    m.bind(u_csr, "status_rdy_i", rdy.q);
    m.bind(u_csr, "status_cfs_i", cfs.q);
    Csr {
        arb_ab,
        arb_lpw,
        arb_mpw,
        arb_hpw,
        co_thr,
        co_time,
        co_tick,
        vc_vec,
        vc_cd,
        vc_we,
        cnt_sel,
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
    }
}
