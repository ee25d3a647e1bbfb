//! An interval timer: a counter driven by a small enum state machine. Counts `tick_i` pulses
//! from `start_i` up to a limit and then fires once; the building block for time-based
//! aggregation (interrupt coalescing, retransmit timers).

use hdl_builder::prelude::*;
use hdl_builder::Errors;
use std::rc::Rc;

/// An interval timer with a `width`-bit counter, named `interval_timer_w<width>`.
///
/// Interface contract: `start_i` (in Idle or Fire) latches `limit_i` and starts counting; each
/// cycle with `tick_i` high adds one; the cycle after the count reaches the limit, `expired_o` is
/// high for exactly one cycle. A limit of zero fires on the cycle after the start. `stop_i` in Run
/// cancels without firing. `count_o` shows the ticks counted so far.
pub fn interval_timer(width: u32, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let mut m = ModuleBuilder::with_reset(&format!("interval_timer_w{width}"), reset);
    m.doc(&format!(
        "Interval timer, {width}-bit: start_i latches limit_i, tick_i counts, expired_o pulses"
    ));
    m.doc("one cycle after the count reaches the limit; stop_i cancels.");
    m.clock();
    m.reset();
    m.group("control");
    let start = m.input("start_i", 1);
    let stop = m.input("stop_i", 1);
    let tick = m.input("tick_i", 1);
    let limit_in = m.input("limit_i", width);
    m.group("status");
    let busy = m.output("busy_o", 1);
    let expired = m.output("expired_o", 1);
    let count_out = m.output("count_o", width);

    let st = m.enum_type("state", &["StIdle", "StRun", "StFire"]);
    let state = m.reg_enum("state", &st, st.item("StIdle"));
    let count = m.reg("count", width, 0);
    let limit = m.reg("limit", width, 0);
    let reached = m.net("reached", count.q.eq(limit.q));

    m.assign(busy, state.q.eq(st.item("StRun")));
    m.assign(expired, state.q.eq(st.item("StFire")));
    m.assign(count_out, count.q);

    m.comb(|c| {
        c.set(state.d, state.q);
        c.set(count.d, count.q);
        c.set(limit.d, limit.q);
        c.case(state.q, |k| {
            k.arms(vec![st.item("StIdle"), st.item("StFire")], |c| {
                c.set(state.d, st.item("StIdle"));
                c.if_(start, |c| {
                    c.set(state.d, st.item("StRun"));
                    c.set(count.d, 0);
                    c.set(limit.d, limit_in);
                });
            });
            k.arm(st.item("StRun"), |c| {
                c.if_(stop, |c| c.set(state.d, st.item("StIdle")))
                    .else_if(reached, |c| c.set(state.d, st.item("StFire")))
                    .else_if(tick, |c| c.set(count.d, count.q + 1));
            });
            k.default(|c| c.set(state.d, st.item("StIdle")));
        });
    });
    m.finish()
}
