//! Per-slot completion records of the RoCEv2 engine: a response capsule's CQE is kept in its
//! command slot, so the receiver moves on at once; the completion leaves on `io_cpl` only when
//! every DMA command of that command has been answered by host memory: the payloads of its
//! RDMA WRITEs (a Read's data), and the fetches of its READ responses or of its in-capsule data
//! (a Write's data, whose read errors replace the CQE's status). The completion never overtakes its data, and later
//! frames never wait for it.
//!
//! Per slot: `done` (the CQE is recorded), the CQE's status and DW0, and `open`, the slot's
//! DMA commands issued and not yet done (counted from the cycle a WRITE's DMA command or a
//! READ request's job is decided, so one still waiting for `s_cmd` counts too). A slot is ready when `done` and
//! `open` is 0; the lowest ready slot (QP-major) is offered, and held while `io_cpl` waits.
//! A recorded slot takes no further WRITE (its key is no longer valid), so once ready it stays
//! ready until it leaves.

use hdl_builder::prelude::*;

/// The records' registers, made before the logic that reads `done`.
pub(super) struct Records {
    /// Per QP, bit s: slot s holds a received CQE waiting for its DMA commands (or `io_cpl`).
    pub done: Vec<Reg>,
    status: Vec<Vec<Reg>>,
    dw0: Vec<Vec<Reg>>,
    open: Vec<Vec<Reg>>,
}

/// What changes the records, in the engine's terms.
pub(super) struct Events {
    /// A response capsule completes slot `rec_slot` of QP `rec_qp` with `status`, `dw0`.
    pub rec: Sig,
    pub rec_qp: Sig,
    pub rec_slot: Sig,
    pub status: Sig,
    pub dw0: Sig,
    /// A DMA command (a WRITE's payload, or a READ job with data) is decided for slot
    /// `issue_slot` of QP `issue_qp`.
    pub issue: Sig,
    pub issue_qp: Sig,
    pub issue_slot: Sig,
    /// A capsule job's DMA command (its in-capsule data) is decided, in the same cycle as
    /// `issue` or not.
    pub issue2: Sig,
    pub issue2_qp: Sig,
    pub issue2_slot: Sig,
    /// The DMA engine answers a command of that QP and slot (`m_done`).
    pub answer: Sig,
    pub answer_qp: Sig,
    pub answer_slot: Sig,
    /// The offered record leaves on `io_cpl`.
    pub take: Sig,
    /// `io_cpl` holds the offered record (valid, not ready last cycle): keep the choice.
    pub hold: Sig,
}

/// The record offered to `io_cpl`.
pub(super) struct Offer {
    pub any: Sig,
    pub qp: Sig,
    pub slot: Sig,
    pub status: Sig,
    pub dw0: Sig,
}

/// Width of a slot's count of DMA commands in flight (as the engine's total count).
const OPEN_W: u32 = 8;

impl Records {
    /// The registers for `nq` QPs of `d` slots.
    pub(super) fn new(m: &mut ModuleBuilder, nq: u32, d: u32) -> Records {
        let mut r = Records {
            done: Vec::new(),
            status: Vec::new(),
            dw0: Vec::new(),
            open: Vec::new(),
        };
        for q in 0..nq {
            let done = m.reg(&format!("qp{q}_slot_done"), d, 0);
            m.comment(
                done.q,
                "bit s: slot s's CQE is recorded, waiting for its DMA commands or io_cpl",
            );
            r.done.push(done);
            r.status.push(
                (0..d)
                    .map(|s| m.reg(&format!("qp{q}_slot{s}_cqe_status"), 15, 0))
                    .collect(),
            );
            r.dw0.push(
                (0..d)
                    .map(|s| m.reg(&format!("qp{q}_slot{s}_cqe_dw0"), 32, 0))
                    .collect(),
            );
            r.open.push(
                (0..d)
                    .map(|s| m.reg(&format!("qp{q}_slot{s}_dma_open"), OPEN_W, 0))
                    .collect(),
            );
        }
        r
    }

    /// Bit s of QP `q`: slot s still takes a response capsule or an RDMA WRITE (valid and
    /// not yet completed by a CQE).
    pub(super) fn live(&self, q: usize, valid: Sig) -> Expr {
        valid & !self.done[q].q
    }

    /// The updates and the offer; `qw` and `sw` are the QP and slot index widths.
    pub(super) fn logic(&self, m: &mut ModuleBuilder, ev: &Events, qw: u32, sw: u32) -> Offer {
        let nq = self.done.len();
        let d = self.status[0].len();
        let held_qp = m.reg("rec_qp_held", qw, 0);
        let held_slot = m.reg("rec_slot_held", sw, 0);
        // Ready bits, QP-major: bit q*d + s.
        let mut ready_bits = Vec::new();
        for q in 0..nq {
            for s in 0..d {
                ready_bits.push(self.done[q].q.bit(s as u32) & self.open[q][s].q.eq(0u64));
            }
        }
        let ready = m.net("rec_ready", cat(ready_bits.into_iter().rev()));
        m.comment(
            ready,
            "bit q*D+s: slot s of QP q may complete (CQE in, DMA commands answered)",
        );
        let n = (nq * d) as u32;
        let mut pq: Expr = lit(qw, 0);
        let mut ps: Expr = lit(sw, 0);
        for i in (0..n).rev() {
            pq = mux(ready.bit(i), lit(qw, u128::from(i) / d as u128), pq);
            ps = mux(ready.bit(i), lit(sw, u128::from(i) % d as u128), ps);
        }
        let qp = m.net("rec_qp", mux(ev.hold, held_qp.q, pq));
        let slot = m.net("rec_slot", mux(ev.hold, held_slot.q, ps));
        m.assign(held_qp.d, qp);
        m.assign(held_slot.d, slot);
        let any = m.net("rec_any", ev.hold | ready.any());
        let pick = |regs: &Vec<Vec<Reg>>, w: u32| -> Expr {
            let mut e = lit(w, 0);
            for (q, row) in regs.iter().enumerate() {
                for (s, r) in row.iter().enumerate() {
                    e = mux(qp.eq(q as u64) & slot.eq(s as u64), r.q, e);
                }
            }
            e
        };
        let status = m.net("rec_status", pick(&self.status, 15));
        let dw0 = m.net("rec_dw0", pick(&self.dw0, 32));
        for q in 0..nq {
            let qi = q as u64;
            let here = |v: Sig, vq: Sig, vs: Sig, s: usize| v & vq.eq(qi) & vs.eq(s as u64);
            for s in 0..d {
                let (st, d0, wr) = (&self.status[q][s], &self.dw0[q][s], &self.open[q][s]);
                let rec = here(ev.rec, ev.rec_qp, ev.rec_slot, s);
                m.assign(st.d, mux(rec.clone(), ev.status, st.q));
                m.assign(d0.d, mux(rec, ev.dw0, d0.q));
                let up = here(ev.issue, ev.issue_qp, ev.issue_slot, s);
                let up2 = here(ev.issue2, ev.issue2_qp, ev.issue2_slot, s);
                let down = here(ev.answer, ev.answer_qp, ev.answer_slot, s);
                m.assign(
                    wr.d,
                    wr.q + up.zext(OPEN_W) + up2.zext(OPEN_W) - down.zext(OPEN_W),
                );
            }
            let set = m.net(
                &format!("qp{q}_slot_done_set"),
                cat((0..d)
                    .rev()
                    .map(|s| here(ev.rec, ev.rec_qp, ev.rec_slot, s))),
            );
            let clr = m.net(
                &format!("qp{q}_slot_done_clr"),
                cat((0..d).rev().map(|s| here(ev.take, qp, slot, s))),
            );
            let done = &self.done[q];
            m.assign(done.d, (done.q | set) & !clr);
        }
        Offer {
            any,
            qp,
            slot,
            status,
            dw0,
        }
    }
}
