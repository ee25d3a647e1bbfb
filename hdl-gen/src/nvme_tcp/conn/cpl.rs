//! Completions: a slot completes once answered (or once the connection ended) and its host
//! memory accesses are done; one at a time out on io_cpl, a stable stream (a slot on offer
//! stays on offer, unchanged, until taken).

use super::verdict::Verdicts;
use super::{pick_lowest, Ctx};
use hdl_builder::prelude::*;

/// What the later parts read.
#[derive(Clone, Copy)]
pub(super) struct Cpl {
    pub(super) h2c_busy: Sig,
    pub(super) cpl_slot: Sig,
    pub(super) any_ready: Sig,
    pub(super) bounce: Sig,
    pub(super) sqe: Sig,
    pub(super) cmd_cid: Sig,
    pub(super) cpl_fire: Sig,
}

pub(super) fn completions(m: &mut ModuleBuilder, cx: &Ctx, vd: &Verdicts) -> Cpl {
    let Ctx {
        d,
        sw,
        ref cmd,
        ref cpl,
        dead,
        slot_valid,
        ref slot_cid,
        slot_resp,
        slot_r2t,
        ref slot_status,
        ref slot_dw0,
        slot_dgerr,
        ref slot_dmaerr,
        ref slot_pend,
        ..
    } = *cx;
    let Verdicts { tx_slot, .. } = *vd;
    // ------------------------------------------------------------ completions
    // A slot completes once answered (or once the connection ended) and its host memory
    // accesses are done: its C2HData writes, and the H2CData of an R2T it accepted (a target
    // that answers before it got the data still gets it; after the end no H2CData starts).
    // A ready slot stays ready until it completes: lowest slot first, and the slot on offer
    // stays on offer until taken. After the end, commands that arrive are refused with 22h.
    let h2c_busy = m.wire("h2c_busy", 1);
    m.comment(
        h2c_busy,
        "an H2CData of the head R2T's slot is on tx (its host memory read may be in flight)",
    );
    let idle_slot = m.net(
        "slot_quiet",
        cat((0..d)
            .rev()
            .map(|i| slot_pend[i as usize].q.eq(0u64) & !(h2c_busy & tx_slot.eq(u64::from(i))))),
    );
    let ready_slot = m.net(
        "slot_ready",
        slot_valid.q & idle_slot & ((slot_resp.q & !slot_r2t.q) | dead.q.repeat(d)),
    );
    let lowest = pick_lowest(m, "cpl_lowest", ready_slot, d, sw);
    let hold = m.reg("cpl_hold", 1, 0);
    m.comment(hold.q, "a slot's completion is on io_cpl, not taken yet");
    let hold_slot = m.reg("cpl_hold_slot", sw, 0);
    m.comment(hold_slot.q, "that slot");
    let held = m.net("cpl_held", hold.q & ready_slot.shr_by(hold_slot.q).bit(0));
    m.comment(
        held,
        "that slot is still ready (always: a ready slot stays ready until taken; guarded anyway)",
    );
    let cpl_slot = m.net("cpl_slot", mux(held, hold_slot.q, lowest));
    m.comment(cpl_slot, "the slot whose completion is on io_cpl");
    let any_ready = m.net("cpl_from_slot", ready_slot.any());
    let bounce = m.net("bounce", dead.q & !slot_valid.q.any() & cmd.valid);
    m.assign(cpl.valid, any_ready | bounce);
    let pick = |m: &mut ModuleBuilder, name: &str, regs: &[Reg]| -> Sig {
        let mut e: Expr = regs[0].q.ex();
        for i in 1..d {
            e = mux(cpl_slot.eq(u64::from(i)), regs[i as usize].q, e);
        }
        m.net(name, e)
    };
    let c_cid_sel = pick(m, "cpl_slot_cid", slot_cid);
    let c_st = pick(m, "cpl_slot_status", slot_status);
    let c_dw0 = pick(m, "cpl_slot_dw0", slot_dw0);
    let c_dmaerr = pick(m, "cpl_slot_dmaerr", slot_dmaerr);
    let c_resp = m.net("cpl_slot_resp", slot_resp.q.shr_by(cpl_slot).bit(0));
    let c_dgerr = m.net("cpl_slot_dgerr", slot_dgerr.q.shr_by(cpl_slot).bit(0));
    let slot_final = m.wire("cpl_slot_final", 15);
    m.comment(
        slot_final,
        "a failed move of its data: the DMA status; no answer (ended): 22h; a data digest error on a success: 22h",
    );
    m.comb(|c| {
        c.set(slot_final, c_st);
        c.if_(c_dmaerr.ne(0u64), |c| c.set(slot_final, c_dmaerr.zext(15)))
            .else_if(!c_resp, |c| c.set(slot_final, 0x22u64))
            .else_if(c_dgerr & c_st.eq(0u64), |c| c.set(slot_final, 0x22u64));
    });
    let sqe = cmd.field("sqe");
    let cmd_cid = m.net("cmd_cid", sqe.slice(31, 16));
    m.assign(cpl.field("cid"), mux(any_ready, c_cid_sel, cmd_cid));
    m.assign(
        cpl.field("status"),
        mux(any_ready, slot_final, lit(15, 0x22)),
    );
    m.assign(cpl.field("dw0"), mux(any_ready & c_resp, c_dw0, lit(32, 0)));
    let cpl_fire = m.net("cpl_fire", cpl.valid & cpl.ready);
    m.assign(hold.d, any_ready & !cpl.ready);
    m.assign(hold_slot.d, cpl_slot);
    Cpl {
        h2c_busy,
        cpl_slot,
        any_ready,
        bounce,
        sqe,
        cmd_cid,
        cpl_fire,
    }
}
