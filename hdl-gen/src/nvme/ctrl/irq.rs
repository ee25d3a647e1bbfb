//! Interrupt coalescing: per vector an event count and an age against the threshold and the
//! time limit, and one vector at a time out on irq.

use super::cpl::Post;
use super::fsm::Fsm;
use super::regs::Csr;
use super::{Ctx, Ports};
use hdl_builder::prelude::*;

pub(super) fn coalesce(
    m: &mut ModuleBuilder,
    cx: &Ctx,
    io: &Ports,
    csr: &Csr,
    f: &Fsm,
    post: &Post,
) {
    let (p, vw) = (cx.p, cx.vw);
    let irq = &io.irq;
    let Csr {
        co_thr,
        co_time,
        co_tick,
        vc_vec,
        vc_cd,
        vc_we,
        ..
    } = *csr;
    let flush = f.flush;
    let Post { pbd, b_fire, b_err } = *post;
    // ---------------------------------------------------------------- interrupt coalescing
    let ev = m.net("irq_event", b_fire & !b_err & pbd.bit(vw) & !flush.q);
    let ev_vec = m.net("irq_event_vector", pbd.slice(vw - 1, 0));
    let presc = m.reg("coal_prescaler", 24, 0);
    let tick = m.net("coal_tick", (presc.q.zext(25) + 1).ge(co_tick.zext(25)));
    m.assign(presc.d, mux(tick, lit(24, 0), presc.q + 1));
    let irq_v = m.reg("irq_valid", 1, 0);
    let irq_vec = m.reg("irq_vector", vw, 0);
    let emit = m.wire("irq_emit", 1);
    let sel = m.wire("irq_sel", vw);
    let mut pends = Vec::new();
    // Per vector: fired by the threshold (coalescing on), by the time limit, or at once
    // (coalescing disabled); an event absorbed by a pending interrupt.
    let (mut by_thr, mut by_time, mut by_cd, mut merged) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for v in 0..p.vectors {
        let cnt = m.reg(&format!("coal_cnt{v}"), 9, 0);
        let age = m.reg(&format!("coal_age{v}"), 8, 0);
        let cd = m.reg(&format!("coal_cd{v}"), 1, 0);
        let pend = m.reg(&format!("irq_pend{v}"), 1, 0);
        let hit = m.net(&format!("irq_ev{v}"), ev & ev_vec.eq(u64::from(v)));
        let fire_thr = hit & (cd.q | (cnt.q + 1).gt(co_thr.zext(9)));
        let fire_time =
            cnt.q.ne(0) & (co_time.eq(0) | (tick & (age.q.zext(9) + 1).ge(co_time.zext(9))));
        let fire = m.net(
            &format!("irq_fire{v}"),
            fire_thr.clone() | fire_time.clone(),
        );
        by_thr.push(hit & !cd.q & co_thr.ne(0) & (cnt.q + 1).gt(co_thr.zext(9)));
        by_time.push(fire_time & !fire_thr);
        by_cd.push(hit & cd.q);
        merged.push(hit & pend.q);
        m.assign(cnt.d, mux(flush.q | fire, lit(9, 0), cnt.q + hit.zext(9)));
        m.assign(
            age.d,
            mux(
                flush.q | fire,
                lit(8, 0),
                mux(cnt.q.ne(0) & tick, age.q + 1, age.q.ex()),
            ),
        );
        m.assign(
            cd.d,
            mux(vc_we & vc_vec.eq(u64::from(v)), vc_cd.ex(), cd.q.ex()),
        );
        m.assign(
            pend.d,
            !flush.q & (fire | (pend.q & !(emit & sel.eq(u64::from(v))))),
        );
        pends.push(pend.q);
    }
    let any_pend = m.net(
        "irq_any",
        pends.iter().skip(1).fold(pends[0].ex(), |a, p| a | *p),
    );
    let mut pick = lit(vw, 0);
    for v in (0..p.vectors).rev() {
        pick = mux(pends[v as usize], lit(vw, u128::from(v)), pick);
    }
    m.assign(sel, pick);
    let irq_free = m.net("irq_free", !irq_v.q | irq.ready);
    m.assign(emit, any_pend & irq_free);
    m.assign(irq_v.d, emit | (irq_v.q & !irq.ready));
    m.assign(irq_vec.d, mux(emit, sel.ex(), irq_vec.q.ex()));
    m.assign(irq.valid, irq_v.q);
    m.assign(irq.field("vector"), irq_vec.q);

    // Functional coverage: coalescing by threshold and by time, a vector with coalescing
    // disabled, an event merged into a pending interrupt, the irq stream held.
    let any = |v: Vec<Expr>| {
        v.into_iter()
            .reduce(|a, b| a | b)
            .expect("at least one vector")
    };
    m.cover("coalesce_by_threshold", any(by_thr));
    m.cover("coalesce_by_time", any(by_time));
    m.cover("coalesce_disabled_vector", any(by_cd));
    m.cover("irq_merged_into_pending", any(merged));
    m.cover("irq_held", irq_v.q & !irq.ready);
}
