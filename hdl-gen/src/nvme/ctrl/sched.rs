//! The arbitration classes (urgent, high, medium, low): a FIFO of queues with work per class,
//! and the weighted round robin among high, medium and low.

use super::regs::Csr;
use super::Ctx;
use hdl_builder::prelude::*;
use hdl_builder::EnumTy;

/// The class FIFOs: the FSM pushes and pops them; the decisions read their heads.
pub(super) struct Classes {
    pub(super) push_en: Sig,
    pub(super) push_cls: Sig,
    pub(super) push_qid: Sig,
    /// Push `push_qid` to `push_cls` in the next cycle instead (ST_FETCH_N's SQ with work left).
    pub(super) push_late: Sig,
    pub(super) pop_en: Sig,
    pub(super) cls_v: Vec<Sig>,
    pub(super) cls_d: Vec<Sig>,
    pub(super) cls_ok: Vec<Sig>,
    pub(super) cls_mid: Vec<Sig>,
    pub(super) cur_cls_sig: Sig,
}

/// The weighted round robin's choice.
#[derive(Clone, Copy)]
pub(super) struct Wrr {
    pub(super) wrr_pick: Sig,
    pub(super) wrr_cnt_new: Sig,
    pub(super) pick_qid: Sig,
}

pub(super) fn classes(
    m: &mut ModuleBuilder,
    cx: &Ctx,
    sq_space: Sig,
    st: Reg,
    st_ty: &EnumTy,
    flush: Reg,
) -> Classes {
    let (p, qw, cls_fifo) = (cx.p, cx.qw, &cx.cls_fifo);
    // Class FIFOs (urgent, high, medium, low): queues with work, each at most once overall.
    // A head whose sq_space bit is low is rotated to the back of its FIFO (in IDLE, one per
    // class per cycle); after a whole circle of ineligible heads the class counts as blocked.
    let push_en = m.wire("push_en", 1);
    let push_cls = m.wire("push_cls", 2);
    let push_qid = m.wire("push_qid", qw);
    let push_late = m.wire("push_late", 1);
    let pop_en = m.wire("pop_en", 1);
    // ST_FETCH_N's push of an SQ with work left after its burst lands one cycle later, for the
    // clock (its decision is the burst size's compares). That cycle is IDLE with the burst's
    // read request on AR, in which no decision is made (can_fetch needs !ar_valid) and no
    // other push happens (pushes come from ST_DB and ST_FETCH_N only); the class's rotation
    // waits that cycle, so the FIFO's order is the one an immediate push gives.
    let late_v = m.reg("sched_late_push", 1, 0);
    let late_cls = m.reg_noreset("sched_late_cls", 2);
    let late_qid = m.reg_noreset("sched_late_qid", qw);
    m.assign(late_v.d, push_late);
    m.assign(late_cls.d, push_cls);
    m.assign(late_qid.d, push_qid);
    let in_idle = m.net("in_idle", st.q.eq(st_ty.item("ST_IDLE")));
    let cfw = clog2(u64::from(p.io_queues) + 3);
    let mut cls_v = Vec::new();
    let mut cls_d = Vec::new();
    let mut cls_rdy = Vec::new();
    let mut cls_ok = Vec::new();
    let mut cls_mid = Vec::new();
    for (i, name) in ["urgent", "high", "medium", "low"].iter().enumerate() {
        let u = m.instance(&format!("u_sched_{name}"), cls_fifo);
        let sv = m.wire(&format!("sched_{name}_push"), 1);
        let sd = m.wire(&format!("sched_{name}_push_qid"), qw);
        m.bind(u, "s_valid_i", sv);
        m.bind(u, "s_data_i", sd);
        let sr = m.bind_out(u, "s_ready_o");
        m.unused(&format!("sched_{name}_s_ready"), sr);
        let v = m.bind_out(u, "m_valid_o");
        let d = m.bind_out(u, "m_data_o");
        let c = m.bind_out(u, "count_o");
        let r = m.wire(&format!("sched_{name}_ready"), 1);
        m.bind(u, "m_ready_i", r);
        let head_elig = m.net(
            &format!("sched_{name}_head_eligible"),
            d.eq(0) | sq_space.shr_by(d - 1).bit(0),
        );
        let ok = m.net(&format!("sched_{name}_ok"), v & head_elig);
        let late = m.net(
            &format!("sched_{name}_late_push"),
            late_v.q & late_cls.q.eq(i as u64),
        );
        let rot = m.net(
            &format!("sched_{name}_rotate"),
            in_idle & !flush.q & v & !head_elig & !late,
        );
        let circ = m.reg(&format!("sched_{name}_skips"), cfw, 0);
        let blocked = m.net(
            &format!("sched_{name}_blocked"),
            circ.q
                .zext(cfw.max(c.width()))
                .ge(c.zext(cfw.max(c.width()))),
        );
        let fsm_push = m.net(
            &format!("sched_{name}_fsm_push"),
            push_en & push_cls.eq(i as u64) | late,
        );
        m.assign(
            circ.d,
            mux(
                flush.q | fsm_push | !v | head_elig,
                lit(cfw, 0),
                mux(rot & !blocked, circ.q + 1, circ.q.ex()),
            ),
        );
        m.assign(sv, fsm_push | rot);
        m.assign(
            sd,
            mux(rot, d.ex(), mux(late, late_qid.q.ex(), push_qid.ex())),
        );
        let mid = m.net(&format!("sched_{name}_rotating"), v & !head_elig & !blocked);
        cls_v.push(v);
        cls_d.push(d);
        cls_rdy.push((r, rot));
        cls_ok.push(ok);
        cls_mid.push(mid);
    }
    let cur_cls_sig = m.wire("pick_cls", 2);
    for (i, (r, rot)) in cls_rdy.iter().enumerate() {
        m.assign(*r, flush.q | *rot | (pop_en & cur_cls_sig.eq(i as u64)));
    }
    Classes {
        push_en,
        push_cls,
        push_qid,
        push_late,
        pop_en,
        cls_v,
        cls_d,
        cls_ok,
        cls_mid,
        cur_cls_sig,
    }
}

/// The weight of class `c` (high 1, medium 2, low 3) from the arbitration CSRs.
pub(super) fn weight(csr: &Csr, c: Expr) -> Expr {
    let Csr {
        arb_lpw,
        arb_mpw,
        arb_hpw,
        ..
    } = *csr;
    mux(
        c.eq(1),
        arb_hpw.zext(9),
        mux(c.eq(2), arb_mpw.zext(9), arb_lpw.zext(9)),
    )
}

/// Weighted round robin among high (1), medium (2), low (3).
pub(super) fn wrr(
    m: &mut ModuleBuilder,
    csr: &Csr,
    wrr_cls: Reg,
    wrr_cnt: Reg,
    cls: &Classes,
) -> Wrr {
    let Classes {
        ref cls_ok,
        ref cls_d,
        cur_cls_sig,
        ..
    } = *cls;
    let valid_of = |c: Expr| -> Expr {
        mux(
            c.eq(1),
            cls_ok[1].ex(),
            mux(c.eq(2), cls_ok[2].ex(), cls_ok[3].ex()),
        )
    };
    let next_cls = |c: Expr| -> Expr { mux(c.eq(3), lit(2, 1), &c + 1) };
    let n1 = m.net("wrr_next1", next_cls(wrr_cls.q.ex()));
    let n2 = m.net("wrr_next2", next_cls(n1.ex()));
    let cur_ok = m.net(
        "wrr_cur_ok",
        valid_of(wrr_cls.q.ex()) & wrr_cnt.q.le(weight(csr, wrr_cls.q.ex())),
    );
    let wrr_pick = m.net(
        "wrr_pick",
        mux(
            cur_ok,
            wrr_cls.q.ex(),
            mux(
                valid_of(n1.ex()),
                n1.ex(),
                mux(valid_of(n2.ex()), n2.ex(), wrr_cls.q.ex()),
            ),
        ),
    );
    // Weights count commands: the class keeps the turn while it has used fewer than
    // weight + 1 commands of this round; a new turn starts at 0 (the fetch adds its SQEs).
    let wrr_cnt_new = m.net("wrr_cnt_new", mux(cur_ok, wrr_cnt.q.ex(), lit(9, 0)));
    m.assign(cur_cls_sig, mux(cls_ok[0], lit(2, 0), wrr_pick.ex()));
    let pick_qid = m.net(
        "pick_qid",
        mux(
            cur_cls_sig.eq(0),
            cls_d[0].ex(),
            mux(
                cur_cls_sig.eq(1),
                cls_d[1].ex(),
                mux(cur_cls_sig.eq(2), cls_d[2].ex(), cls_d[3].ex()),
            ),
        ),
    );
    Wrr {
        wrr_pick,
        wrr_cnt_new,
        pick_qid,
    }
}
