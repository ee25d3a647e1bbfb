//! `qos_sched`: strict priority between four classes, weighted round robin inside a class, one
//! combinational decision per cycle over per-class bitmaps, for any number of queues.
//!
//! Per class `c`: a pointer (a queue index, initially 0), a turn count (initially 0) and the
//! pointer queue's weight, cached (the weights live in a RAM of the arbiter; each queue's
//! "weight is 0" bit is a flip-flop). The class of a decision is the lowest-numbered class with
//! an eligible queue; inside it the winner is the first eligible queue of that class at or
//! after the class's pointer, going round. When `decide_i` is high the winning class's state
//! moves as in NVMe weighted round robin (the stdlib `wrr_arbiter` rule): `done` = the turn
//! count if the winner is at the pointer, else 0; `done >= weight` ends the turn (pointer to
//! the queue after the winner, count 0), otherwise the pointer goes to the winner and the count
//! to `done + 1`. Weight w (0's based) so allows w + 1 decisions in a row for one queue while
//! others of its class wait.
//!
//! The weight compared is the winner's: at the pointer it is the cached one, elsewhere only
//! "is it 0" matters (`done` is 0). When the pointer moves to a new queue the scheduler asks for
//! its weight (`wt_rd_o`, `wt_addr_o`); the RAM answers on `wt_data_i` in the next cycle, which
//! is used directly in that cycle and cached after. A weight written by software (`wt_wr_*`)
//! updates the cache of every class whose pointer names that queue (also when it lands in the
//! cycle of a read of it).
//!
//! # Search and timing
//!
//! [`first_set`] and [`next_set`] find the lowest set bit (at or after a pointer) of a bitmap
//! of Q bits in two levels: groups of `2^ceil(k/2)` bits (k = clog2 Q), one "any" bit per group,
//! the first group with a bit (a carry-isolate of `2^floor(k/2)` bits and its encoder), that
//! group's bits through a `2^floor(k/2)`:1 multiplexer, and their first bit. At 1024 queues: a
//! 32-input OR, a 32-bit isolate and encoder, a 32:1 multiplexer of 32 bits and a 32-bit isolate
//! and encoder, about 2 sqrt(Q) gates of carry in series instead of Q; the round-robin mask is a
//! comparison of each position with the pointer. Both searches run in parallel (with and
//! without the mask), then the four classes' results meet in a priority multiplexer.

use crate::blocks::arbiter::one_hot_index;
use hdl_builder::prelude::*;
use hdl_builder::Errors;
use std::rc::Rc;

/// Priority classes (NVMe: 0 urgent, 1 high, 2 medium, 3 low).
pub const CLASSES: u32 = 4;
/// Weight width (NVMe arbitration weights are 8 bits, 0's based).
pub const WEIGHT_BITS: u32 = 8;

/// Width of an index into `n` positions (at least 1).
pub fn idx_width(n: u32) -> u32 {
    clog2(u64::from(n)).max(1)
}

/// One of `items` chosen by `sel` (a case with a default of zeros).
pub fn select(m: &mut ModuleBuilder, name: &str, sel: impl Into<Expr>, items: &[Expr]) -> Sig {
    let sel = sel.into();
    let w = items[0].width();
    let out = m.wire(name, w);
    m.comb(|cb| {
        cb.set(out, lit(w, 0));
        cb.case(sel, |k| {
            for (i, it) in items.iter().enumerate() {
                k.arm(i as u64, |cb| cb.set(out, it.clone()));
            }
            k.default(|_| {});
        });
    });
    out
}

/// The lowest set bit of `bits`, searched in two levels (see the module documentation):
/// (any bit set, its index of `idx_width(n)` bits). Nets are named `<name>_*`.
pub fn first_set(m: &mut ModuleBuilder, name: &str, bits: Expr) -> (Sig, Sig) {
    let n = bits.width();
    let k = idx_width(n);
    let total = 1u32 << k;
    let padded = if total > n {
        cat([zeros(total - n), bits])
    } else {
        bits
    };
    let v = m.net(&format!("{name}_bits"), padded);
    let any = m.net(&format!("{name}_any"), v.any());
    let gk = k / 2;
    let lk = k - gk;
    if gk == 0 {
        let low = m.net(&format!("{name}_low"), v & (!v + 1));
        let idx = m.net(&format!("{name}_idx"), one_hot_index(low));
        // Position 0 sets no index bit.
        m.unused(&format!("{name}_low_first"), low.bit(0));
        return (any, idx);
    }
    let (ng, gs) = (1u32 << gk, 1u32 << lk);
    let group = |g: u32| v.slice((g + 1) * gs - 1, g * gs);
    let gany = m.net(
        &format!("{name}_grp_any"),
        cat((0..ng).rev().map(|g| group(g).any())),
    );
    let glow = m.net(&format!("{name}_grp_low"), gany & (!gany + 1));
    let gidx = m.net(&format!("{name}_grp"), one_hot_index(glow));
    m.unused(&format!("{name}_grp_low_first"), glow.bit(0));
    let items: Vec<Expr> = (0..ng).map(group).collect();
    let gbits = select(m, &format!("{name}_grp_bits"), gidx, &items);
    let low = m.net(&format!("{name}_low"), gbits & (!gbits + 1));
    let lidx = m.net(&format!("{name}_low_idx"), one_hot_index(low));
    m.unused(&format!("{name}_low_first"), low.bit(0));
    let idx = m.net(&format!("{name}_idx"), cat([gidx.ex(), lidx.ex()]));
    (any, idx)
}

/// The first set bit of `bits` at or after position `ptr`, going round: (any bit set, index).
pub fn next_set(m: &mut ModuleBuilder, name: &str, bits: Expr, ptr: Sig) -> (Sig, Sig) {
    let n = bits.width();
    let b = m.net(&format!("{name}_req"), bits);
    let masked = m.net(&format!("{name}_from_ptr"), b & ones(n).shl_by(ptr));
    let (ma, mi) = first_set(m, &format!("{name}_m"), masked.ex());
    let (ba, bi) = first_set(m, &format!("{name}_a"), b.ex());
    let idx = m.net(&format!("{name}_idx"), mux(ma, mi, bi));
    (ba, idx)
}

/// `(i + 1) % n` for an index `i` of `idx_width(n)` bits.
pub fn next_index(i: impl Into<Expr>, n: u32) -> Expr {
    let i = i.into();
    if n.is_power_of_two() {
        i + 1
    } else {
        mux(i.eq(u64::from(n - 1)), lit(i.width(), 0), i.clone() + 1)
    }
}

/// The scheduler for `n >= 2` queues, named `qos_sched_q<n>`.
pub fn sched(n: u32, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    assert!(n >= 2, "the scheduler serves at least two queues");
    let ww = WEIGHT_BITS;
    let qw = idx_width(n);
    let mut m = ModuleBuilder::with_reset(&format!("qos_sched_q{n}"), reset);
    m.doc("Strict priority between classes 0 (urgent) to 3 (low), weighted round robin inside a");
    m.doc("class (weight w allows w + 1 decisions in a row), over per-class bitmaps searched in");
    m.doc("two levels. Combinational: any_o, win_idx_o and win_class_o follow elig_i in the same");
    m.doc("cycle; decide_i moves the winning class's pointer. Weights come from the arbiter's RAM");
    m.doc("one cycle after wt_rd_o (cached per class); wz_i tells which weights are 0.");
    m.clock();
    m.reset();
    m.group("candidates");
    let elig = m.input("elig_i", n);
    m.comment(elig, "queue i has an eligible command");
    let class = m.input("class_i", 2 * n);
    m.comment(class, "queue i's class in bits [2i+1:2i]");
    let wz = m.input("wz_i", n);
    m.comment(wz, "queue i's weight is 0");
    m.group("weights: a read of the arbiter's RAM (data the next cycle), and software's writes");
    let wt_rd = m.output("wt_rd_o", 1);
    let wt_addr = m.output("wt_addr_o", qw);
    let wt_data = m.input("wt_data_i", ww);
    let wt_wr = m.input("wt_wr_i", 1);
    let wt_wr_addr = m.input("wt_wr_addr_i", qw);
    let wt_wr_data = m.input("wt_wr_data_i", ww);
    m.group("decision");
    let decide = m.input("decide_i", 1);
    m.comment(decide, "the winner is taken this cycle");
    let any_o = m.output("any_o", 1);
    let win_idx_o = m.output("win_idx_o", qw);
    let win_class_o = m.output("win_class_o", 2);

    // A write of the weight being read in this cycle: the RAM returns the old word next cycle.
    let fwd = m.reg("wt_fwd", 1, 0);
    let fwd_data = m.reg("wt_fwd_data", ww, 0);
    let wdat = m.net("wt_loaded", mux(fwd.q, fwd_data.q, wt_data));
    m.comment(wdat, "the weight read in the previous cycle");

    let mut any_c = Vec::new();
    let mut idx_c = Vec::new();
    let mut state = Vec::new();
    for c in 0..CLASSES {
        let member = cat((0..n)
            .rev()
            .map(|i| class.slice(2 * i + 1, 2 * i).eq(u64::from(c))));
        let ptr = m.reg(&format!("ptr_c{c}"), qw, 0);
        m.comment(ptr.q, "the queue whose turn it is");
        let turn = m.reg(&format!("turn_c{c}"), ww, 0);
        m.comment(turn.q, "decisions made in the current turn");
        let wt = m.reg(&format!("weight_c{c}"), ww, 0);
        m.comment(wt.q, "the pointer queue's weight (cached)");
        let ld = m.reg(&format!("load_c{c}"), 1, 0);
        m.comment(
            ld.q,
            "the pointer queue's weight arrives from the RAM in this cycle",
        );
        let (a, i) = next_set(&mut m, &format!("c{c}"), elig & member, ptr.q);
        any_c.push(a);
        idx_c.push(i);
        state.push((ptr, turn, wt, ld));
    }
    let any = m.net(
        "any",
        any_c.iter().skip(1).fold(any_c[0].ex(), |a, b| a | *b),
    );
    m.assign(any_o, any);
    m.comb(|cb| {
        cb.set(win_idx_o, idx_c[3]);
        cb.set(win_class_o, 3u64);
        cb.if_(any_c[0], |cb| {
            cb.set(win_idx_o, idx_c[0]);
            cb.set(win_class_o, 0u64);
        })
        .else_if(any_c[1], |cb| {
            cb.set(win_idx_o, idx_c[1]);
            cb.set(win_class_o, 1u64);
        })
        .else_if(any_c[2], |cb| {
            cb.set(win_idx_o, idx_c[2]);
            cb.set(win_class_o, 2u64);
        });
    });
    let win_wz = m.net("win_wz", wz.shr_by(win_idx_o).bit(0));
    m.comment(win_wz, "the winner's weight is 0");
    let after = m.net("after_winner", next_index(win_idx_o, n));
    let mut loads = Vec::new();
    let mut overs = Vec::new();
    for (c, (ptr, turn, wt, ld)) in state.iter().enumerate() {
        let mine = m.net(
            &format!("take_c{c}"),
            decide & any & win_class_o.eq(c as u64),
        );
        m.comment(mine, "this class wins the decision");
        let cur = m.net(&format!("weight_now_c{c}"), mux(ld.q, wdat, wt.q));
        let at_ptr = m.net(&format!("at_ptr_c{c}"), win_idx_o.eq(ptr.q));
        let done = m.net(&format!("done_c{c}"), mux(at_ptr, turn.q, lit(ww, 0)));
        let over = m.net(
            &format!("turn_over_c{c}"),
            mux(at_ptr, turn.q.ge(cur), win_wz),
        );
        // Functional coverage: the class wins, and a turn of several grants to one queue
        // ends at its weight.
        m.cover(&format!("class{c}_wins"), mine);
        m.cover(
            &format!("class{c}_turn_ends_at_weight"),
            mine & at_ptr & over & turn.q.ne(0u64),
        );
        let load = m.net(&format!("load_next_c{c}"), mine & (over | !at_ptr));
        m.comment(load, "the pointer moves to another queue: read its weight");
        loads.push(load);
        overs.push(over);
        let snoop = m.net(
            &format!("weight_written_c{c}"),
            wt_wr & wt_wr_addr.eq(ptr.q),
        );
        m.comb(|cb| {
            cb.set(ptr.d, ptr.q);
            cb.set(turn.d, turn.q);
            cb.if_(mine & over, |cb| {
                cb.set(ptr.d, after);
                cb.set(turn.d, 0u64);
            })
            .else_if(mine, |cb| {
                cb.set(ptr.d, win_idx_o);
                cb.set(turn.d, done + 1);
            });
        });
        m.assign(ld.d, load);
        m.assign(wt.d, mux(snoop, wt_wr_data, cur));
    }
    let rd = m.net(
        "wt_read",
        loads.iter().skip(1).fold(loads[0].ex(), |a, b| a | *b),
    );
    m.assign(wt_rd, rd);
    let win_over = select(
        &mut m,
        "win_turn_over",
        win_class_o,
        &overs.iter().map(|s| s.ex()).collect::<Vec<_>>(),
    );
    let addr = m.net("wt_read_addr", mux(win_over, after, win_idx_o));
    m.comment(addr, "the winning class's next pointer");
    m.assign(wt_addr, addr);
    m.assign(fwd.d, rd & wt_wr & wt_wr_addr.eq(addr));
    m.assign(fwd_data.d, wt_wr_data);
    m.cover("weight_write_forwarded", fwd.q);
    m.finish()
}
