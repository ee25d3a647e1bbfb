//! `qos_bucket`: a token bucket in the debt model, for a scheduler that decides among many
//! candidates at once: its budget (`ok_o`) does not depend on a request's cost.
//!
//! Exact rule, cycle by cycle (`L` the level, signed fixed point with `f` fraction bits, `B` =
//! `burst_i`, `r` = `rate_i / 2^f`):
//!
//! - `ok_o = (r == 0) || L >= 0`;
//! - `L' = B` when `hold_i` or `r == 0` (held full), else `L' = min(L - spent + r, B)`, where
//!   `spent = cost_i` in a cycle with `spend_i`, else 0.
//!
//! The owner spends only when `ok_o`, so `L >= -max cost`: over any window of `T` cycles the
//! spent total is at most `r * T + B + max cost`. The level is 0 after reset (the owner holds
//! it full while it is configured, with `hold_i`).

use hdl_builder::prelude::*;
use hdl_builder::Errors;
use std::rc::Rc;

/// Width of `rate_i`.
pub const RATE_BITS: u32 = 32;

/// A debt-model token bucket, named `qos_bucket_c<cost>_t<burst>_f<fraction>`.
pub fn bucket(
    cost_width: u32,
    burst_width: u32,
    frac: u32,
    reset: ResetStyle,
) -> Result<Rc<Module>, Errors> {
    let (c, t, f) = (cost_width, burst_width, frac);
    let lw = c.max(t) + f + 1;
    assert!(lw + 1 > RATE_BITS, "the level holds a rate");
    let sw = lw + 1;
    let mut m = ModuleBuilder::with_reset(&format!("qos_bucket_c{c}_t{t}_f{f}"), reset);
    m.doc("Token bucket, debt model: ok_o when the level is >= 0 or rate_i is 0 (unlimited).");
    m.doc(&format!(
        "A spend takes cost_i whole tokens; each cycle rate_i / 2^{f} tokens refill it, capped at"
    ));
    m.doc("burst_i after spend and refill. hold_i or rate_i == 0 holds the bucket full.");
    m.clock();
    m.reset();
    m.group("configuration");
    let rate = m.input("rate_i", RATE_BITS);
    m.comment(
        rate,
        &format!("tokens per cycle, {f} fraction bits; 0 = unlimited"),
    );
    let burst = m.input("burst_i", t);
    m.comment(burst, "capacity, whole tokens");
    let hold = m.input("hold_i", 1);
    m.comment(hold, "hold the bucket full (block disabled)");
    m.group("spending");
    let spend = m.input("spend_i", 1);
    let cost = m.input("cost_i", c);
    m.comment(cost, "whole tokens taken by a spend");
    let ok = m.output("ok_o", 1);

    let level = m.reg("level", lw, 0);
    m.comment(level.q, "tokens, signed (debt), fixed point");
    let full = m.net(
        "full",
        cat([zeros(lw - t - f), burst.ex(), zeros(f)]
            .into_iter()
            .filter(|e| e.width() > 0)),
    );
    m.comment(full, "burst_i as a level");
    let unlimited = m.net("unlimited", rate.eq(0u64));
    let neg = level.q.bit(lw - 1);
    m.assign(ok, unlimited | !neg.clone());
    let spent = m.net(
        "spent",
        mux(
            spend,
            cat([zeros(sw - c - f), cost.ex(), zeros(f)]
                .into_iter()
                .filter(|e| e.width() > 0)),
            lit(sw, 0),
        ),
    );
    let next = m.net(
        "next",
        cat([neg.clone(), level.q.ex()]) - spent + rate.zext(sw),
    );
    m.comment(next, "after this cycle's spend and refill, before the cap");
    let over = m.net("over", !next.bit(sw - 1) & next.slice(sw - 2, 0).gt(full));
    m.comb(|cb| {
        cb.set(level.d, next.slice(lw - 1, 0));
        cb.if_(hold | unlimited | over, |cb| cb.set(level.d, full));
    });
    m.finish()
}
