//! `qos_sched`: strict priority between four classes, weighted round robin inside a class, one
//! combinational decision per cycle with no locked grant (the candidates' eligibility may change
//! from one cycle to the next, so nothing is held).
//!
//! Per class `c`: a one-hot pointer (initially queue 0) and a turn count (initially 0). The
//! class of a decision is the lowest-numbered class with an eligible queue; inside it the winner
//! is the first eligible queue of that class at or after the class's pointer, going round. When
//! `decide_i` is high the winning class's state moves as in NVMe weighted round robin (the
//! stdlib `wrr_arbiter` rule): `done` = the turn count if the winner is at the pointer, else 0;
//! `done >= weight` ends the turn (pointer to the queue after the winner, count 0), otherwise
//! the pointer goes to the winner and the count to `done + 1`. Weight w (0's based) so allows
//! w + 1 decisions in a row for one queue while others of its class wait.

use crate::blocks::arbiter::{index_width, one_hot_index};
use hdl_builder::prelude::*;
use hdl_builder::Errors;
use std::rc::Rc;

/// Priority classes (NVMe: 0 urgent, 1 high, 2 medium, 3 low).
pub const CLASSES: u32 = 4;
/// Weight width (NVMe arbitration weights are 8 bits, 0's based).
pub const WEIGHT_BITS: u32 = 8;

/// The scheduler for `n >= 2` queues, named `qos_sched_q<n>`.
pub fn sched(n: u32, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    assert!(n >= 2, "the scheduler serves at least two queues");
    let ww = WEIGHT_BITS;
    let mut m = ModuleBuilder::with_reset(&format!("qos_sched_q{n}"), reset);
    m.doc("Strict priority between classes 0 (urgent) to 3 (low), weighted round robin inside a");
    m.doc("class (weight w allows w + 1 decisions in a row). Combinational: any_o, win_o and");
    m.doc("win_idx_o follow elig_i in the same cycle; decide_i moves the winning class's pointer.");
    m.clock();
    m.reset();
    m.group("candidates");
    let elig = m.input("elig_i", n);
    m.comment(elig, "queue i has an eligible command");
    let class = m.input("class_i", 2 * n);
    m.comment(class, "queue i's class in bits [2i+1:2i]");
    let weight = m.input("weight_i", ww * n);
    m.comment(weight, "queue i's weight (0's based) in bits [8i+7:8i]");
    m.group("decision");
    let decide = m.input("decide_i", 1);
    m.comment(decide, "the winner is taken this cycle");
    let any_o = m.output("any_o", 1);
    let win_o = m.output("win_o", n);
    let win_idx_o = m.output("win_idx_o", index_width(n));

    let mut any_c = Vec::new();
    let mut pick_c = Vec::new();
    let mut state = Vec::new();
    for c in 0..CLASSES {
        let member = cat((0..n)
            .rev()
            .map(|i| class.slice(2 * i + 1, 2 * i).eq(u64::from(c))));
        let req = m.net(&format!("req_c{c}"), elig & member);
        let ptr = m.reg(&format!("ptr_c{c}"), n, 1);
        m.comment(ptr.q, "one-hot: the queue whose turn it is");
        let turn = m.reg(&format!("turn_c{c}"), ww, 0);
        m.comment(turn.q, "decisions made in the current turn");
        let masked = m.net(&format!("masked_c{c}"), req & !(ptr.q - 1));
        let pick = m.net(
            &format!("pick_c{c}"),
            mux(masked.any(), masked & (!masked + 1), req & (!req + 1)),
        );
        any_c.push(m.net(&format!("any_c{c}"), req.any()));
        pick_c.push(pick);
        state.push((ptr, turn));
    }
    m.comb(|cb| {
        cb.set(win_o, 0);
        cb.if_(any_c[0], |cb| cb.set(win_o, pick_c[0]))
            .else_if(any_c[1], |cb| cb.set(win_o, pick_c[1]))
            .else_if(any_c[2], |cb| cb.set(win_o, pick_c[2]))
            .else_if(any_c[3], |cb| cb.set(win_o, pick_c[3]));
    });
    let any = m.net(
        "any",
        any_c.iter().skip(1).fold(any_c[0].ex(), |a, b| a | *b),
    );
    m.assign(any_o, any);
    m.assign(win_idx_o, one_hot_index(win_o));
    let win_weight = m.wire("win_weight", ww);
    m.comb(|cb| {
        cb.set(win_weight, 0);
        cb.case(win_idx_o, |k| {
            for i in 0..n {
                k.arm(u64::from(i), |cb| {
                    cb.set(win_weight, weight.slice((i + 1) * ww - 1, i * ww));
                });
            }
            k.default(|_| {});
        });
    });
    let after_winner = m.net(
        "after_winner",
        cat([win_o.slice(n - 2, 0), win_o.bit(n - 1)]),
    );
    for (c, (ptr, turn)) in state.iter().enumerate() {
        let higher = (0..c).fold(lit(1, 0), |a, k| a | any_c[k]);
        let mine = m.net(&format!("take_c{c}"), decide & any_c[c] & !higher);
        m.comment(mine, "this class wins the decision");
        let at_ptr = m.net(&format!("at_ptr_c{c}"), (win_o & ptr.q).any());
        let done = m.net(&format!("done_c{c}"), mux(at_ptr, turn.q, lit(ww, 0)));
        let over = m.net(&format!("turn_over_c{c}"), done.ge(win_weight));
        m.comb(|cb| {
            cb.set(ptr.d, ptr.q);
            cb.set(turn.d, turn.q);
            cb.if_(mine & over, |cb| {
                cb.set(ptr.d, after_winner);
                cb.set(turn.d, 0);
            })
            .else_if(mine, |cb| {
                cb.set(ptr.d, win_o);
                cb.set(turn.d, done + 1);
            });
        });
    }
    m.finish()
}
