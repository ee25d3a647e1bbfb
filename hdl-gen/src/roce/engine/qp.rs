//! One queue pair's configuration (read from `roce_csr`) and state registers: PSNs, the
//! pending ACK, the command slots, the RDMA WRITE message in progress, go-back-N and the
//! retransmit timer. The rules that move them are in `mod.rs` ("QP state updates").

use crate::roce::RoceParams;
use hdl_builder::prelude::*;
use hdl_builder::Inst;

/// A queue pair: its configuration (the CSRs of `roce_csr`) and its state registers.
pub(super) struct Qp {
    pub(super) en: Sig,
    pub(super) lqpn: Sig,
    pub(super) rqpn: Sig,
    pub(super) lmac: Sig,
    pub(super) rmac: Sig,
    pub(super) lip: Sig,
    pub(super) rip: Sig,
    pub(super) pkey: Sig,
    pub(super) sq_psn: Sig,
    pub(super) rq_psn: Sig,
    pub(super) up: Reg,
    pub(super) err: Reg,
    pub(super) spsn: Reg,
    pub(super) epsn: Reg,
    pub(super) msn: Reg,
    pub(super) nak_sent: Reg,
    pub(super) ack_pend: Reg,
    pub(super) ack_syn: Reg,
    pub(super) ack_psn: Reg,
    pub(super) ack_msn: Reg,
    pub(super) slot_valid: Reg,
    pub(super) slot_cid: Vec<Reg>,
    pub(super) slot_sqe: Vec<Reg>,
    pub(super) slot_psn: Vec<Reg>,
    pub(super) slot_dptr: Vec<Reg>,
    pub(super) slot_sgl: Reg,
    pub(super) slot_derr: Vec<Reg>,
    pub(super) mtu: Sig,
    pub(super) wr_on: Reg,
    pub(super) wr_slot: Reg,
    pub(super) wr_off: Reg,
    pub(super) wr_left: Reg,
    pub(super) una: Reg,
    pub(super) rpsn: Reg,
    pub(super) timer: Reg,
    pub(super) retries: Reg,
    pub(super) timeout: Sig,
    pub(super) limit: Sig,
}

impl Qp {
    /// QP `q`: its CSR fields from `u_csr` (the `roce_csr` instance) and its registers, named
    /// `qp<q>_*`; binds its live state back to the CSRs.
    pub(super) fn new(m: &mut ModuleBuilder, u_csr: Inst, p: &RoceParams, q: u32) -> Qp {
        let d = p.outstanding;
        let sw = clog2(u64::from(d)).max(1);
        let csr_out = |m: &mut ModuleBuilder, reg: &str, field: &str| -> Sig {
            m.bind_out(u_csr, &format!("qp{q}_{reg}_{field}_o"))
        };
        let en = csr_out(m, "ctrl", "en");
        let lqpn = csr_out(m, "local_qpn", "value");
        let rqpn = csr_out(m, "remote_qpn", "value");
        let lmh = csr_out(m, "local_mac_hi", "value");
        let lml = csr_out(m, "local_mac_lo", "value");
        let rmh = csr_out(m, "remote_mac_hi", "value");
        let rml = csr_out(m, "remote_mac_lo", "value");
        let lip = csr_out(m, "local_ip", "value");
        let rip = csr_out(m, "remote_ip", "value");
        let sq_psn = csr_out(m, "sq_psn", "value");
        let rq_psn = csr_out(m, "rq_psn", "value");
        let mtu_code = csr_out(m, "mtu", "code");
        let code_ok = m.net(
            &format!("qp{q}_mtu_code_ok"),
            mtu_code.ne(0u64) & mtu_code.le(u64::from(p.mtu_code())),
        );
        let mtu = m.net(
            &format!("qp{q}_mtu"),
            lit(13, 128).shl_by(mux(code_ok, mtu_code, lit(3, u128::from(p.mtu_code())))),
        );
        m.comment(
            mtu,
            "path MTU in bytes (the CSR's, at most the configured one)",
        );
        let pkey = csr_out(m, "pkey", "value");
        let lmac = m.net(&format!("qp{q}_local_mac"), cat([lmh, lml]));
        let rmac = m.net(&format!("qp{q}_remote_mac"), cat([rmh, rml]));
        let up = m.reg(&format!("qp{q}_up"), 1, 0);
        m.comment(up.q, "en as last seen: the QP is running");
        let err = m.reg(&format!("qp{q}_err"), 1, 0);
        let spsn = m.reg(&format!("qp{q}_spsn"), 24, 0);
        m.comment(spsn.q, "next send PSN");
        let epsn = m.reg(&format!("qp{q}_epsn"), 24, 0);
        m.comment(epsn.q, "expected receive PSN");
        let msn = m.reg(&format!("qp{q}_msn"), 24, 0);
        m.comment(msn.q, "messages received and completed");
        let nak_sent = m.reg(&format!("qp{q}_nak_sent"), 1, 0);
        m.comment(nak_sent.q, "a NAK 60h went out for the current gap");
        let ack_pend = m.reg(&format!("qp{q}_ack_pend"), 1, 0);
        let ack_syn = m.reg(&format!("qp{q}_ack_syn"), 8, 0);
        let ack_psn = m.reg(&format!("qp{q}_ack_psn"), 24, 0);
        let ack_msn = m.reg(&format!("qp{q}_ack_msn"), 24, 0);
        let slot_valid = m.reg(&format!("qp{q}_slot_valid"), d, 0);
        let slot_cid = (0..d)
            .map(|s| m.reg(&format!("qp{q}_slot{s}_cid"), 16, 0))
            .collect();
        let slot_sqe = (0..d)
            .map(|s| m.reg(&format!("qp{q}_slot{s}_sqe"), 512, 0))
            .collect();
        let slot_psn = (0..d)
            .map(|s| m.reg(&format!("qp{q}_slot{s}_psn"), 24, 0))
            .collect();
        let slot_dptr = (0..d)
            .map(|s| m.reg(&format!("qp{q}_slot{s}_dptr"), 128, 0))
            .collect();
        let slot_sgl = m.reg(&format!("qp{q}_slot_sgl"), d, 0);
        m.comment(
            slot_sgl.q,
            "bit s: slot s's own data pointer is an SGL (PSDT != 0)",
        );
        let slot_derr = (0..d)
            .map(|s| m.reg(&format!("qp{q}_slot{s}_dma_status"), 11, 0))
            .collect();
        let wr_on = m.reg(&format!("qp{q}_wr_on"), 1, 0);
        m.comment(
            wr_on.q,
            "an RDMA WRITE message is in progress (First taken, Last not yet)",
        );
        let wr_slot = m.reg(&format!("qp{q}_wr_slot"), sw, 0);
        let wr_off = m.reg(&format!("qp{q}_wr_off"), 24, 0);
        m.comment(
            wr_off.q,
            "the WRITE message's next byte offset in its command's data",
        );
        let wr_left = m.reg(&format!("qp{q}_wr_left"), 24, 0);
        m.comment(wr_left.q, "the WRITE message's bytes still to come");
        let una = m.reg(&format!("qp{q}_una"), 24, 0);
        m.comment(
            una.q,
            "oldest capsule PSN not yet acknowledged (= spsn: none)",
        );
        let rpsn = m.reg(&format!("qp{q}_rpsn"), 24, 0);
        m.comment(rpsn.q, "next PSN to send again (= spsn: not resending)");
        let timer = m.reg(&format!("qp{q}_timer"), 24, 0);
        let retries = m.reg(&format!("qp{q}_retries"), 3, 0);
        let timeout = csr_out(m, "retry", "timeout");
        let limit = csr_out(m, "retry", "limit");
        m.bind(u_csr, &format!("qp{q}_state_error_i"), err.q);
        m.bind(u_csr, &format!("qp{q}_state_psn_i"), spsn.q);
        m.bind(u_csr, &format!("qp{q}_epsn_value_i"), epsn.q);
        Qp {
            en,
            lqpn,
            rqpn,
            lmac,
            rmac,
            lip,
            rip,
            pkey,
            sq_psn,
            rq_psn,
            up,
            err,
            spsn,
            epsn,
            msn,
            nak_sent,
            ack_pend,
            ack_syn,
            ack_psn,
            ack_msn,
            slot_valid,
            slot_cid,
            slot_sqe,
            slot_psn,
            slot_dptr,
            slot_sgl,
            slot_derr,
            mtu,
            wr_on,
            wr_slot,
            wr_off,
            wr_left,
            una,
            rpsn,
            timer,
            retries,
            timeout,
            limit,
        }
    }
}
