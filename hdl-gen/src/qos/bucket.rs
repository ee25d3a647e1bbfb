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

/// Width of a lazily refilled bucket's time stamp (cycles since reset; it does not wrap in
/// practice: 2^64 cycles are millennia).
pub const STAMP_BITS: u32 = 64;
/// Idle time counted by a lazy refill, in bits: a bucket idle for longer refills as if idle for
/// `2^ELAPSED_BITS - 1` cycles (73 minutes at 250 MHz), which fills every bucket whose rate is
/// at least its burst divided by that (any rate of 2^-8 tokens per cycle or more).
pub const ELAPSED_BITS: u32 = 40;

/// Level width of a bucket with `cost_width`-bit costs, `burst_width`-bit bursts and `frac`
/// fraction bits (as [`bucket`]'s `level`).
pub fn level_width(cost_width: u32, burst_width: u32, frac: u32) -> u32 {
    cost_width.max(burst_width) + frac + 1
}

/// A lazily refilled bucket's arithmetic, for the shapes of one bucket kind: combinational
/// expressions over a stored `(level, stamp)` pair, the level being the one at cycle `stamp`
/// (signed, `frac` fraction bits). The level at a later cycle `now` is
/// `min(level + rate * (now - stamp), burst)` (held full when `rate` is 0, or `stale`): the
/// same as stepping the debt-model rule of [`bucket`] once per cycle with nothing spent.
#[derive(Clone, Copy, Debug)]
pub struct Lazy {
    /// Cost width (bits of whole tokens a command costs).
    pub cost_width: u32,
    /// Burst width (bits of whole tokens).
    pub burst_width: u32,
    /// Fraction bits of the level and the rate.
    pub frac: u32,
}

impl Lazy {
    /// The level width.
    pub fn lw(&self) -> u32 {
        level_width(self.cost_width, self.burst_width, self.frac)
    }

    /// `burst` as a level.
    pub fn full(&self, burst: Expr) -> Expr {
        let lw = self.lw();
        cat([
            zeros(lw - self.burst_width - self.frac),
            burst,
            zeros(self.frac),
        ]
        .into_iter()
        .filter(|e| e.width() > 0))
    }

    /// The level at cycle `at` of a bucket whose level was `level` at cycle `stamp`; nets
    /// named `<name>_*`.
    #[allow(clippy::too_many_arguments)]
    pub fn refill(
        &self,
        m: &mut ModuleBuilder,
        name: &str,
        level: Expr,
        stamp: Expr,
        at: Expr,
        rate: Expr,
        burst: Expr,
        stale: Expr,
    ) -> Sig {
        let lw = self.lw();
        let ew = ELAPSED_BITS;
        let el = m.net(&format!("{name}_elapsed"), at - stamp);
        let elc = m.net(
            &format!("{name}_idle"),
            mux(
                el.slice(STAMP_BITS - 1, ew).any(),
                ones(ew),
                el.slice(ew - 1, 0),
            ),
        );
        m.comment(elc, "cycles of refill, capped");
        let add = m.net(&format!("{name}_refill"), rate.mul(elc));
        let sw = add.width() + 2;
        let full = m.net(&format!("{name}_full"), self.full(burst));
        let sum = m.net(
            &format!("{name}_sum"),
            cat([level.bit(lw - 1).repeat(sw - lw), level.clone()]) + add.zext(sw),
        );
        let capped = m.net(
            &format!("{name}_capped"),
            stale | rate.eq(0u64) | (!sum.bit(sw - 1) & sum.gt(full.zext(sw))),
        );
        m.net(
            &format!("{name}_level"),
            mux(capped, full, sum.slice(lw - 1, 0)),
        )
    }

    /// The level one cycle after `level` when `cost` whole tokens are spent in this cycle
    /// (`min(level - cost + rate, burst)`, held full when `rate` is 0): the debt-model step.
    pub fn spend(
        &self,
        m: &mut ModuleBuilder,
        name: &str,
        level: Expr,
        cost: Expr,
        rate: Expr,
        burst: Expr,
    ) -> Sig {
        let lw = self.lw();
        let sw = lw + 1;
        let c = self.cost_width;
        let full = m.net(&format!("{name}_full"), self.full(burst));
        let spent = cat([zeros(sw - c - self.frac), cost, zeros(self.frac)]
            .into_iter()
            .filter(|e| e.width() > 0));
        let next = m.net(
            &format!("{name}_next"),
            cat([level.bit(lw - 1), level.clone()]) - spent + rate.zext(sw),
        );
        let over = m.net(
            &format!("{name}_over"),
            rate.eq(0u64) | (!next.bit(sw - 1) & next.slice(sw - 2, 0).gt(full)),
        );
        m.net(
            &format!("{name}_level"),
            mux(over, full, next.slice(lw - 1, 0)),
        )
    }
}
