//! A token bucket with its rate and burst as inputs: polices bandwidth (tokens are bytes) or
//! operations per second (tokens are commands) per queue, counted in the chip's clock.
//!
//! Exact rule, cycle by cycle (`L` is the level in tokens, a fixed-point value that may be
//! negative, `B` = `burst_i`, `r` = `rate_i / 2^frac_bits`):
//!
//! - available this cycle: `A = B` in the first cycle after reset (the bucket starts full; its
//!   capacity is an input, so it cannot be a reset constant), `A = L` afterwards;
//! - `req_ready_o = (r == 0) || A >= min(cost, B)`: a request waits until the bucket holds its
//!   cost, or is full when the cost exceeds the capacity; it is never dropped;
//! - on a grant (`req_valid_i && req_ready_o`) the request takes its whole cost, so a request
//!   larger than what the bucket holds leaves it in debt (`L < 0`) and the long-run rate stays
//!   exact; nothing is granted again until the debt is paid back;
//! - next level: `L' = B` when `r == 0` (unlimited: the bucket is held full, so limiting later
//!   starts from a full bucket), else `L' = min(A - spent + r, B)`: spending and refilling in one
//!   cycle combine, and the cap applies after both, so a cycle's refill is never lost to the cap
//!   when a grant makes room;
//! - `tokens_o = max(floor(A), 0)`.
//!
//! A burst of zero is strict pacing: every request is paid for in debt and waits for it to clear.
//! Lowering `burst_i` takes effect on the next level (the cap), raising it lets the bucket fill.

use hdl_builder::prelude::*;
use hdl_builder::{Error, ErrorKind, Errors};
use std::panic::Location;
use std::rc::Rc;

/// Widths of a token bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenBucketParams {
    /// Width of a request's cost, in whole tokens.
    pub cost_width: u32,
    /// Width of the capacity `burst_i` and of `tokens_o`, in whole tokens.
    pub token_bits: u32,
    /// Fraction bits of the rate and the level: the rate's resolution is `2^-frac_bits` tokens
    /// per cycle.
    pub frac_bits: u32,
}

impl TokenBucketParams {
    /// The module name: `token_bucket_c<cost>_t<tokens>_f<fraction>`.
    pub fn module_name(&self) -> String {
        format!(
            "token_bucket_c{}_t{}_f{}",
            self.cost_width, self.token_bits, self.frac_bits
        )
    }

    fn validate(&self) -> Result<(), String> {
        if !(1..=64).contains(&self.cost_width) {
            return Err(format!(
                "cost width {} is out of range; use 1 to 64 bits",
                self.cost_width
            ));
        }
        if !(1..=64).contains(&self.token_bits) {
            return Err(format!(
                "token width {} is out of range; use 1 to 64 bits",
                self.token_bits
            ));
        }
        if self.frac_bits > 56 {
            return Err(format!(
                "{} fraction bits is more than 56; a rate that fine needs no more",
                self.frac_bits
            ));
        }
        Ok(())
    }
}

/// A concatenation that leaves out zero-width parts (a `zeros(0)` would be refused).
fn cat_parts(parts: Vec<Expr>) -> Expr {
    cat(parts.into_iter().filter(|p| p.width() > 0))
}

/// A fixed-point value: `whole` tokens shifted up by `frac` bits and zero-extended to `width`.
fn fixed(whole: Sig, frac: u32, width: u32) -> Expr {
    let pad = width - whole.width() - frac;
    cat_parts(vec![zeros(pad), whole.ex(), zeros(frac)])
}

/// A token bucket, named `token_bucket_c<cost>_t<tokens>_f<fraction>`.
///
/// Ports: `rate_i` (tokens per cycle, `token_bits + frac_bits` wide, `frac_bits` of fraction;
/// 0 = unlimited), `burst_i` (capacity, whole tokens), the request stream `req_valid_i`,
/// `req_ready_o`, `req_cost_i`, and `tokens_o` (whole tokens available now). See the module
/// documentation for the exact rule. `req_ready_o` depends combinationally on `req_cost_i`,
/// `rate_i` and `burst_i`, never on `req_valid_i`.
pub fn token_bucket(p: &TokenBucketParams, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let name = p.module_name();
    if let Err(message) = p.validate() {
        return Err(Errors(vec![Error {
            kind: ErrorKind::Invalid,
            module: name.clone(),
            signal: None,
            loc: Location::caller(),
            message: format!("{name}: {message}"),
        }]));
    }
    let (c, t, f) = (p.cost_width, p.token_bits, p.frac_bits);
    // Whole-token width of the comparisons, the level (signed: debt) and the level before the cap.
    let whole = c.max(t);
    let level_w = whole + f + 1;
    let sum_w = level_w + 1;

    let mut m = ModuleBuilder::with_reset(&name, reset);
    m.doc(&format!(
        "Token bucket: rate_i tokens per cycle ({f} fraction bits) refill it up to burst_i whole tokens."
    ));
    m.doc(
        "A request is granted when the bucket holds min(req_cost_i, burst_i) tokens and takes its",
    );
    m.doc(
        "whole cost (a request larger than the bucket passes when it is full and leaves a debt).",
    );
    m.doc("Spend and refill of a cycle combine; the cap applies after both. rate_i == 0 is unlimited:");
    m.doc("always ready, bucket held full. The bucket is full after reset. req_ready_o depends on");
    m.doc("req_cost_i, rate_i and burst_i, not on req_valid_i.");
    m.clock();
    m.reset();
    m.group("configuration");
    let rate = m.input("rate_i", t + f);
    m.comment(
        rate,
        &format!("tokens per cycle, {f} fraction bits; 0 = unlimited"),
    );
    let burst = m.input("burst_i", t);
    m.comment(burst, "capacity, whole tokens");
    m.group("requests");
    let req = m.stream_in("req", &StreamDef::new().field("cost", c));
    let cost = req.field("cost");
    m.group("status");
    let tokens = m.output("tokens_o", t);
    m.comment(tokens, "whole tokens available now; 0 in debt");

    let just_reset = m.reg("just_reset", 1, 1);
    m.comment(
        just_reset.q,
        "first cycle after reset: the bucket counts as full",
    );
    let level = m.reg("level", level_w, 0);
    m.comment(level.q, "tokens, signed (debt), fixed point");
    m.assign(just_reset.d, 0u64);

    let full = m.net("full", fixed(burst, f, level_w));
    m.comment(full, "burst_i as a level");
    let unlimited = m.net("unlimited", rate.eq(0u64));
    let avail = m.net("avail", mux(just_reset.q, full, level.q));
    m.comment(avail, "the level this cycle");
    let cost_w = cost.zext(whole);
    let burst_w = burst.zext(whole);
    let need = m.net("need", mux(cost_w.le(&burst_w), cost_w, burst_w));
    m.comment(need, "a cost above the capacity waits for a full bucket");
    let in_debt = avail.bit(level_w - 1);
    let enough = m.net(
        "enough",
        !in_debt.clone() & avail.slice(level_w - 2, f).ge(need),
    );
    m.assign(req.ready, unlimited | enough);
    let grant = m.net("grant", req.fire());
    let spend = m.net("spend", mux(grant, fixed(cost, f, sum_w), 0u64));
    let refilled = m.net(
        "refilled",
        cat([in_debt.clone(), avail.ex()]) - spend + rate.zext(sum_w),
    );
    m.comment(
        refilled,
        "after this cycle's spend and refill, before the cap",
    );
    let over = m.net(
        "over",
        !refilled.bit(sum_w - 1) & refilled.slice(sum_w - 2, 0).gt(full),
    );
    m.comment(over, "above the capacity");

    m.comb(|cb| {
        cb.set(level.d, refilled.slice(level_w - 1, 0));
        cb.if_(unlimited | over, |cb| cb.set(level.d, full));
    });
    m.assign(tokens, mux(in_debt, 0u64, avail.slice(t + f - 1, f)));
    m.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_for_a_range_of_widths() {
        for (c, t, f) in [(1, 1, 0), (8, 8, 8), (16, 24, 16), (20, 8, 4), (32, 32, 32)] {
            let p = TokenBucketParams {
                cost_width: c,
                token_bits: t,
                frac_bits: f,
            };
            let m = token_bucket(&p, ResetStyle::SyncHigh).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(m.name(), format!("token_bucket_c{c}_t{t}_f{f}"));
        }
    }

    #[test]
    fn bad_widths_are_refused_with_the_module_name() {
        let p = TokenBucketParams {
            cost_width: 0,
            token_bits: 8,
            frac_bits: 8,
        };
        let e = token_bucket(&p, ResetStyle::AsyncLow).unwrap_err();
        assert!(e.has(ErrorKind::Invalid));
        assert!(e.to_string().contains("token_bucket_c0_t8_f8"), "{e}");
    }
}
