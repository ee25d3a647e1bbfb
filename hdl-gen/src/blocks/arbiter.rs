//! Round-robin and weighted round-robin arbiters with a locked grant: `n` requesters, one grant
//! per cycle, and a grant that stays put until its transfer happens.
//!
//! Interface, common to both (ports in this order after `clk_i` and the reset):
//!
//! - `req_i [n]`: bit `i` high means requester `i` has a transfer waiting. Like a stream's valid,
//!   a request once raised must stay high until that requester's transfer.
//! - `weight_i [n * weight_width]` (weighted only): requester `i`'s weight in bits
//!   `[i * weight_width +: weight_width]`, zero's based as in NVMe: weight `w` allows `w + 1`
//!   transfers in a row.
//! - `valid_o`: some requester is granted. `gnt_o [n]`: the granted requester, one-hot (all
//!   zero when `valid_o` is low). `gnt_idx_o [clog2(n)]`: its index (0 when `valid_o` is low).
//! - `ready_i`: the downstream takes the granted transfer; a transfer is `valid_o & ready_i`.
//!
//! Timing: in a cycle without a held grant, the grant is combinational from `req_i` (and the
//! arbiter's state): `valid_o = |req_i`. If `valid_o` is high and `ready_i` low, that grant is
//! held (`valid_o`, `gnt_o`, `gnt_idx_o` unchanged, whatever `req_i` does) until the cycle of
//! its transfer. `ready_i` never reaches the outputs combinationally. One transfer per cycle is
//! sustained; a new decision is made in the cycle after each transfer.

use hdl_builder::prelude::*;
use hdl_builder::Errors;
use std::rc::Rc;

/// Width of `gnt_idx_o` for `n` requesters (at least 1).
pub fn index_width(n: u32) -> u32 {
    clog2(u64::from(n))
}

/// A round-robin arbiter for `n >= 1` requesters, named `rr_arbiter_n<n>`.
///
/// Policy: a pointer names the requester with the highest priority, initially 0. At a decision
/// (a cycle with no held grant and some request), the winner is the first requester in
/// `pointer, pointer + 1, ..., n - 1, 0, ..., pointer - 1` whose request is high. After the
/// winner's transfer the pointer moves to the requester after the winner (`(winner + 1) % n`);
/// it changes at no other time. So with every requester waiting the grants go 0, 1, 2, ..., and
/// a requester waits for at most `n - 1` other transfers. The interface and timing are in the
/// [module documentation](self). With `n == 1` the grant is simply `req_i` (no state).
///
/// Golden model: `testbench::models::arbiter::RoundRobin`.
pub fn rr_arbiter(n: u32, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let name = format!("rr_arbiter_n{n}");
    if n == 0 {
        return Err(Errors::invalid(
            &name,
            "an arbiter needs at least one requester",
        ));
    }
    build(&name, n, None, reset)
}

/// A weighted round-robin arbiter for `n >= 1` requesters with `weight_width`-bit weights
/// (1 to 32 bits), named `wrr_arbiter_n<n>_w<weight_width>`.
///
/// Policy: a pointer names the requester whose turn it is, initially 0, and a turn count says
/// how many transfers that requester has made in its turn, initially 0. At a decision the winner
/// is chosen exactly as in [`rr_arbiter`]: the first requester at or after the pointer, going
/// round, whose request is high. At the winner's transfer, with its weight `w` sampled from
/// `weight_i` in that cycle:
///
/// - `done` = the turn count if the winner is the requester at the pointer (its turn goes on),
///   otherwise 0 (the requester at the pointer was not requesting; the winner starts a turn);
/// - if `done >= w`, the turn is over: the pointer moves to `(winner + 1) % n`, the count to 0;
/// - otherwise the pointer moves to (or stays at) the winner and the count becomes `done + 1`.
///
/// So a requester makes up to `w + 1` transfers in a row while others wait, then the next
/// requester in order gets its turn; a requester that stops requesting ends its turn. The policy
/// is work conserving: a lone requester keeps winning, one turn after another. With weights
/// `[0, 1, 3]` and everyone requesting, a round is 1, 2 and 4 transfers. Lowering a weight in the
/// middle of a turn ends that turn at the next transfer. With `n == 1` the grant is `req_i`.
///
/// Golden model: `testbench::models::arbiter::WeightedRoundRobin`.
pub fn wrr_arbiter(n: u32, weight_width: u32, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let name = format!("wrr_arbiter_n{n}_w{weight_width}");
    if n == 0 {
        return Err(Errors::invalid(
            &name,
            "an arbiter needs at least one requester",
        ));
    }
    if !(1..=32).contains(&weight_width) {
        return Err(Errors::invalid(
            &name,
            format!("weight width {weight_width}: it must be 1 to 32 bits"),
        ));
    }
    build(&name, n, Some(weight_width), reset)
}

fn build(
    name: &str,
    n: u32,
    weight_width: Option<u32>,
    reset: ResetStyle,
) -> Result<Rc<Module>, Errors> {
    let mut m = ModuleBuilder::with_reset(name, reset);
    match weight_width {
        None => m.doc(&format!(
            "Round-robin arbiter, {n} requesters, locked grant."
        )),
        Some(ww) => m.doc(&format!(
            "Weighted round-robin arbiter, {n} requesters, {ww}-bit weights, locked grant."
        )),
    }
    m.doc("A request (req_i[i]) stays high until its transfer (valid_o & ready_i with gnt_o[i]).");
    m.doc("With no grant held, the grant is combinational: valid_o = |req_i, and gnt_o is");
    m.doc("the first requester at or after the pointer, going round (gnt_idx_o its index).");
    m.doc("A grant not taken (valid_o & ~ready_i) is held, whatever req_i does, until its");
    m.doc("transfer. ready_i never reaches an output. One transfer per cycle is sustained.");
    match weight_width {
        None => m.doc("After a transfer the pointer moves to the requester after the winner."),
        Some(ww) => {
            m.doc(&format!(
                "weight_i[i*{ww} +: {ww}] is requester i's weight w, zero's based (as in NVMe)."
            ));
            m.doc("At a transfer, with w the winner's weight in that cycle: done = turn count");
            m.doc("if the winner is at the pointer, else 0. done >= w ends the turn (pointer to");
            m.doc("the requester after the winner, count 0); otherwise pointer = winner and");
            m.doc("count = done + 1. So up to w+1 transfers in a row while others wait.");
        }
    }
    m.clock();
    m.reset();
    m.group("requests");
    let req = m.input("req_i", n);
    let weight = weight_width.map(|ww| m.input("weight_i", n * ww));
    m.group("grant");
    let valid_o = m.output("valid_o", 1);
    let ready = m.input("ready_i", 1);
    let gnt_o = m.output("gnt_o", n);
    let gnt_idx_o = m.output("gnt_idx_o", index_width(n));

    if n == 1 {
        // Degenerate: nothing to arbitrate, so nothing to remember. The requester holds its
        // request until the transfer, which holds the grant.
        m.assign(valid_o, req);
        m.assign(gnt_o, req);
        m.assign(gnt_idx_o, 0);
        let clk = m.clock();
        let rst = m.reset();
        let mut idle = vec![Expr::from(clk), Expr::from(rst), Expr::from(ready)];
        idle.extend(weight.map(Expr::from));
        m.unused("single_requester", cat(idle));
        return m.finish();
    }

    let ptr = m.reg("ptr", n, 1);
    m.comment(ptr.q, "one-hot: the requester with the highest priority");
    let locked = m.reg("locked", 1, 0);
    m.comment(locked.q, "a grant is held until its transfer");
    let held = m.reg("held_gnt", n, 0);

    // The first requester at or after the pointer, else the first requester at all: the lowest
    // set bit of a vector x is x & (~x + 1).
    let req_masked = m.net("req_masked", req & !(ptr.q - 1));
    m.comment(req_masked, "requests at or after the pointer");
    let pick_masked = m.net("pick_masked", req_masked & (!req_masked + 1));
    let pick_any = m.net("pick_any", req & (!req + 1));
    let pick = m.net("pick", mux(req_masked.any(), pick_masked, pick_any));

    let any_req = m.net("any_req", req.any());
    m.assign(valid_o, locked.q | any_req);
    m.assign(gnt_o, mux(locked.q, held.q, pick));
    m.assign(gnt_idx_o, one_hot_index(gnt_o));
    let transfer = m.net("transfer", valid_o & ready);
    // After the winner, going round.
    let after_winner = m.net(
        "after_winner",
        cat([gnt_o.slice(n - 2, 0), gnt_o.bit(n - 1)]),
    );

    m.comb(|c| {
        c.set(locked.d, locked.q);
        c.set(held.d, held.q);
        c.if_(transfer, |c| c.set(locked.d, 0))
            .else_if(valid_o, |c| {
                c.set(locked.d, 1);
                c.set(held.d, gnt_o);
            });
    });

    let (Some(ww), Some(weight)) = (weight_width, weight) else {
        m.comb(|c| {
            c.set(ptr.d, ptr.q);
            c.if_(transfer, |c| c.set(ptr.d, after_winner));
        });
        return m.finish();
    };

    let turn = m.reg("turn_count", ww, 0);
    m.comment(turn.q, "transfers made in the current turn");
    let win_weight = m.wire("win_weight", ww);
    m.comb(|c| {
        c.set(win_weight, 0);
        c.case(gnt_idx_o, |k| {
            for i in 0..n {
                k.arm(u64::from(i), |c| {
                    c.set(win_weight, weight.slice((i + 1) * ww - 1, i * ww));
                });
            }
            k.default(|_| {});
        });
    });
    let at_ptr = m.net("at_ptr", (gnt_o & ptr.q).any());
    m.comment(at_ptr, "the winner continues its turn");
    let done = m.net("done", mux(at_ptr, turn.q, lit(ww, 0)));
    m.comment(
        done,
        "transfers the winner made in this turn before this one",
    );
    let turn_over = m.net("turn_over", done.ge(win_weight));
    m.comb(|c| {
        c.set(ptr.d, ptr.q);
        c.set(turn.d, turn.q);
        c.if_(transfer & turn_over, |c| {
            c.set(ptr.d, after_winner);
            c.set(turn.d, 0);
        })
        .else_if(transfer, |c| {
            c.set(ptr.d, gnt_o);
            c.set(turn.d, done + 1);
        });
    });
    m.finish()
}

/// The index of the set bit of a one-hot vector: bit `k` of the index is the OR of the bits
/// whose position has bit `k` set.
pub fn one_hot_index(one_hot: Sig) -> Expr {
    let n = one_hot.width();
    let iw = index_width(n);
    let bits = (0..iw).rev().map(|k| {
        (0..n)
            .filter(|i| (i >> k) & 1 == 1)
            .map(|i| one_hot.bit(i))
            .reduce(|a, b| a | b)
            .expect("every index bit has a position with it set")
    });
    cat(bits)
}
