//! What firmware reads about the traffic: the doorbell fault events, the counters and the
//! completion latency histograms.

use super::cpl::Post;
use super::fetch::Dispatch;
use super::fsm::{Axi, Fsm};
use super::regs::Bar;
use super::{Ctx, Ports};
use hdl_builder::prelude::*;

pub(super) fn counters(
    m: &mut ModuleBuilder,
    cx: &Ctx,
    io: &Ports,
    bar: &Bar,
    f: &Fsm,
    d: &Dispatch,
) {
    let (p, u_csr) = (cx.p, cx.u_csr);
    let irq = &io.irq;
    let Bar { db_qid, db_cq, .. } = *bar;
    let Fsm {
        axi: Axi {
            ar_issue, aw_issue, ..
        },
        f_n,
        ev_reg,
        ev_val,
        ..
    } = *f;
    let Dispatch {
        io_out,
        adm_out,
        adm_sqid,
        ..
    } = *d;
    // ---------------------------------------------------------------- events and counters
    m.bind(u_csr, "events_bad_db_reg_set_i", ev_reg);
    m.bind(u_csr, "events_bad_db_value_set_i", ev_val);
    let evq = m.reg("event_qid", 16, 0);
    let evc = m.reg("event_cq", 1, 0);
    let any_ev = m.net("db_fault", ev_reg | ev_val);
    m.assign(evq.d, mux(any_ev, db_qid.q.ex(), evq.q.ex()));
    m.assign(evc.d, mux(any_ev, db_cq.q.ex(), evc.q.ex()));
    m.bind(u_csr, "event_qid_qid_i", evq.q);
    m.bind(u_csr, "event_qid_cq_i", evc.q);
    let counter = |m: &mut ModuleBuilder, name: &str, inc: Expr| -> Sig {
        let r = m.reg(name, 32, 0);
        m.assign(r.d, r.q + inc);
        r.q
    };
    let irq_fire = irq.fire().zext(32);
    let c_irqs = counter(m, "cnt_irqs", irq_fire);
    let c_faults = counter(m, "cnt_db_faults", any_ev.zext(32));
    let c_fetched = counter(m, "cnt_fetched", mux(ar_issue, f_n.zext(32), lit(32, 0)));
    let c_done = counter(m, "cnt_completed", aw_issue.zext(32));
    m.bind(u_csr, "irqs_value_i", c_irqs);
    m.bind(u_csr, "db_faults_value_i", c_faults);
    m.bind(u_csr, "fetched_value_i", c_fetched);
    m.bind(u_csr, "completed_value_i", c_done);
    let c_offload = counter(m, "cnt_offload", io_out.zext(32));
    let fb_out = m.net("fallback_cmd_fire", adm_out & adm_sqid.q.ne(0));
    let c_fallback = counter(m, "cnt_fallback", fb_out.zext(32));
    m.bind(u_csr, "cnt_offload_value_i", c_offload);
    m.bind(u_csr, "cnt_fallback_value_i", c_fallback);
    m.bind(u_csr, "limits_mdts_i", lit(8, u128::from(p.mdts)));
}

pub(super) fn latency(m: &mut ModuleBuilder, cx: &Ctx, bar: &Bar, post: &Post) {
    let (vw, u_csr) = (cx.vw, cx.u_csr);
    let now = bar.now;
    let Post { pbd, b_fire, b_err } = *post;
    // ---------------------------------------------------------------- latency histograms
    // One RAM word per (direction, bin), incremented read-modify-write, starting two cycles
    // after the write response (the event and its latency are registered, then its bin, for
    // the clock).
    let b_timed = m.net("b_timed", pbd.bit(vw + 1));
    let b_dir = m.net("b_dir", pbd.slice(vw + 3, vw + 2));
    let b_start = m.net("b_start", pbd.slice(vw + 35, vw + 4));
    let end_v = m.reg("lat_end_valid", 1, 0);
    let end_l = m.reg_noreset("lat_end_cycles", 32);
    let end_dir = m.reg_noreset("lat_end_dir", 2);
    m.assign(end_l.d, now.q - b_start);
    m.assign(end_dir.d, b_dir);
    let lat_l = end_l.q;
    let b_dir = end_dir.q;
    // Bin: the index of L's highest set bit (L >= 1), found by halving: each step keeps the
    // upper half when it has a bit set, and that choice is one bit of the index.
    let mut x = lat_l.ex();
    let mut bits = Vec::new();
    for k in (0..5u32).rev() {
        let h = 1u32 << k;
        let up = m.net(&format!("lat_bin_b{k}"), x.slice(2 * h - 1, h).ne(0));
        bits.push(up.ex());
        if k > 0 {
            x = m
                .net(
                    &format!("lat_half{k}"),
                    mux(up, x.slice(2 * h - 1, h), x.slice(h - 1, 0)),
                )
                .ex();
        } else {
            m.unused("lat_half_low", x.bit(0));
        }
    }
    let lat_bin = m.net("lat_bin", cat(bits));
    let bin_addr = m.net("lat_bin_addr", cat([b_dir.ex(), lat_bin.ex()]));
    // The bin is registered too before it addresses the RAM, for the clock.
    let bin_v = m.reg("lat_at_valid", 1, 0);
    let bin_a = m.reg("lat_at_addr", 7, 0);
    m.assign(bin_a.d, bin_addr);
    let lat_ev = bin_v.q;
    let lat_addr = bin_a.q;
    let hist = m.memory("lat_hist", 32, 96);
    let clr_busy = m.reg("lat_clr_busy", 1, 1);
    let clr_idx = m.reg("lat_clr_idx", 7, 0);
    let clr_go_we = m.bind_out(u_csr, "lat_ctrl_clear_we_o");
    let clr_go_v = m.bind_out(u_csr, "lat_ctrl_clear_o");
    let clr_go = m.net("lat_clear", clr_go_we & clr_go_v);
    // A write response taken while clearing is not counted (and one taken before is wiped).
    m.assign(end_v.d, b_fire & !b_err & b_timed & !clr_busy.q);
    m.assign(bin_v.d, end_v.q & !clr_busy.q);
    let clr_last = m.net("lat_clr_last", clr_idx.q.eq(95));
    m.assign(clr_busy.d, clr_go | (clr_busy.q & !clr_last));
    m.assign(
        clr_idx.d,
        mux(clr_go | !clr_busy.q | clr_last, lit(7, 0), clr_idx.q + 1),
    );
    // Read in the cycle of the event (A), the RAM's word registered (B: the block RAM's output
    // is slow, for the clock), incremented and written in C. The two writes before (of the
    // events one and two cycles earlier) are not in the word read: they are forwarded, the
    // latest first.
    let ev_v = m.reg("lat_ev_valid", 1, 0);
    let ev_a = m.reg("lat_ev_addr", 7, 0);
    m.assign(ev_v.d, lat_ev & !clr_busy.q);
    m.assign(ev_a.d, mux(lat_ev, lat_addr.ex(), ev_a.q.ex()));
    let hist_rd = m.mem_read(hist, lat_ev, lat_addr);
    let up_v = m.reg("lat_up_valid", 1, 0);
    let up_a = m.reg("lat_up_addr", 7, 0);
    let up_word = m.reg_noreset("lat_up_word", 32);
    m.assign(up_v.d, ev_v.q & !clr_busy.q);
    m.assign(up_a.d, ev_a.q);
    m.assign(up_word.d, hist_rd);
    let lw_v = m.reg("lat_wr_valid", 1, 0);
    let lw_a = m.reg("lat_wr_addr", 7, 0);
    let lw_d = m.reg("lat_wr_data", 32, 0);
    let lw2_v = m.reg("lat_wr2_valid", 1, 0);
    let lw2_a = m.reg("lat_wr2_addr", 7, 0);
    let lw2_d = m.reg("lat_wr2_data", 32, 0);
    let fwd = m.net("lat_forward", lw_v.q & lw_a.q.eq(up_a.q));
    let fwd2 = m.net("lat_forward2", lw2_v.q & lw2_a.q.eq(up_a.q));
    let cur = m.net(
        "lat_cur",
        mux(fwd, lw_d.q.ex(), mux(fwd2, lw2_d.q.ex(), up_word.q.ex())),
    );
    let inc = m.net("lat_inc", mux(cur.eq(0xffff_ffffu64), cur.ex(), cur + 1));
    let rmw_we = m.net("lat_rmw_we", up_v.q & !clr_busy.q);
    m.mem_write(
        hist,
        clr_busy.q | rmw_we,
        mux(clr_busy.q, clr_idx.q.ex(), up_a.q.ex()),
        mux(clr_busy.q, lit(32, 0), inc.ex()),
    );
    m.assign(lw_v.d, rmw_we);
    m.assign(lw_a.d, up_a.q);
    m.assign(lw_d.d, inc);
    m.assign(lw2_v.d, lw_v.q);
    m.assign(lw2_a.d, lw_a.q);
    m.assign(lw2_d.d, lw_d.q);
    let sel_bin = m.bind_out(u_csr, "lat_sel_bin_o");
    let sel_dir = m.bind_out(u_csr, "lat_sel_dir_o");
    let sel_rd = m.mem_read(hist, lit(1, 1), cat([sel_dir.ex(), sel_bin.ex()]));
    let sel_ok = m.reg("lat_sel_ok", 1, 0);
    m.assign(sel_ok.d, sel_dir.ne(3));
    m.bind(
        u_csr,
        "lat_count_value_i",
        mux(sel_ok.q, sel_rd.ex(), lit(32, 0)),
    );
    m.bind(u_csr, "status_lat_clearing_i", clr_busy.q);
}
