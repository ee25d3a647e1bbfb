//! The transmit side: the PDU header serializer (ICReq, CapsuleCmd with in-capsule data,
//! H2CData, H2CTermReq), H2CData and in-capsule payload streamed from the DMA read direction
//! with padding and a data digest.

use super::cpl::Cpl;
use super::hdr::Hdr;
use super::verdict::Verdicts;
use super::{ones_mask, Ctx};
use hdl_builder::prelude::*;

/// What the later parts read.
#[derive(Clone, Copy)]
pub(super) struct Tx {
    pub(super) abort: Reg,
    pub(super) opc: Sig,
    pub(super) dlen: Sig,
    pub(super) load_term: Sig,
    pub(super) load_cmd: Sig,
    pub(super) r2t_sent_all: Sig,
}

pub(super) fn transmit(m: &mut ModuleBuilder, cx: &Ctx, hc: &Hdr, vd: &Verdicts, cp: &Cpl) -> Tx {
    let p = cx.p;
    let Ctx {
        dw,
        lanes,
        cw,
        d,
        ref crc_mod,
        ref cmd,
        ref cpl,
        ref tx,
        ref dma_rdata,
        ref dma_done,
        space_o,
        ev_tx_pdu,
        ev_tx_bytes,
        asked,
        connected,
        dead,
        hd,
        dd,
        ic_pend,
        term_pend,
        fes,
        fei,
        term_hdr,
        ref slot_cid,
        slot_read,
        free_any,
        free_idx,
        ..
    } = *cx;
    let Hdr { hd4, dd4, .. } = *hc;
    let Verdicts {
        u_r2t,
        rf_valid,
        rf_ttag,
        rf_slot,
        h2c_pdo,
        cap_pdo,
        ticd,
        icd_slot,
        r2t_sent,
        h2c_n,
        h2c_fits,
        h2c_len,
        h2c_datao,
        h2c_req,
        h2c_dma_go,
        ..
    } = *vd;
    let Cpl {
        h2c_busy,
        any_ready,
        bounce,
        sqe,
        ..
    } = *cp;
    // ------------------------------------------------------------ transmit
    // A PDU header is sent from `tx_buf` (full beats and a short last one), then its header
    // digest in a beat of its own. An H2CData first hands its read to the DMA engine
    // (TX_DCMD), and after the header: padding to PDO (TX_PAD), the payload straight from
    // `dma_rdata` (TX_DATA), a wait for the read's completion (TX_DWAIT) and the data digest
    // (TX_DDG).
    let tx_st = m.enum_type(
        "tx_state",
        &[
            "TX_IDLE", "TX_HDR", "TX_DIG", "TX_DCMD", "TX_PAD", "TX_DATA", "TX_DWAIT", "TX_DDG",
        ],
    );
    let tst = m.reg_enum("tx_state", &tx_st, tx_st.item("TX_IDLE"));
    let tbuf = m.reg("tx_buf", 576, 0);
    m.comment(tbuf.q, "the PDU header being sent (beyond it: zeros)");
    let tlen = m.reg("tx_len", 8, 0);
    let tidx = m.reg("tx_idx", 8, 0);
    let tdg = m.reg("tx_dg", 1, 0);
    m.comment(tdg.q, "a header digest follows the header");
    let th2c = m.reg("tx_h2c", 1, 0);
    m.comment(th2c.q, "the PDU on tx is an H2CData");
    let tpad = m.reg("tx_pad", 8, 0);
    m.comment(
        tpad.q,
        "padding bytes still to send before the H2CData payload",
    );
    let tdfirst = m.reg("tx_dfirst", 1, 0);
    m.comment(tdfirst.q, "no payload byte of the H2CData sent yet");
    let h2c_last = m.reg("h2c_last", 1, 0);
    m.comment(h2c_last.q, "the H2CData on tx is the last of its R2T");
    let h2c_done = m.reg("h2c_rd_done", 1, 0);
    m.comment(h2c_done.q, "the H2CData's host memory read completed");
    let h2c_err = m.reg("h2c_rd_status", 11, 0);
    m.comment(
        h2c_err.q,
        "its DMA status (non-zero: the payload is not host data)",
    );
    let abort = m.reg("h2c_abort", 1, 0);
    m.comment(
        abort.q,
        "a host memory read failed: nothing more is sent, the connection ends",
    );
    let t_idle = m.net("tx_idle", tst.q.eq(tx_st.item("TX_IDLE")));
    let t_hdr = m.net("tx_in_hdr", tst.q.eq(tx_st.item("TX_HDR")));
    let t_dig = m.net("tx_in_dig", tst.q.eq(tx_st.item("TX_DIG")));
    let t_dcmd = m.net("tx_in_dcmd", tst.q.eq(tx_st.item("TX_DCMD")));
    let t_pad = m.net("tx_in_pad", tst.q.eq(tx_st.item("TX_PAD")));
    let t_dat = m.net("tx_in_data", tst.q.eq(tx_st.item("TX_DATA")));
    let t_dwait = m.net("tx_in_dwait", tst.q.eq(tx_st.item("TX_DWAIT")));
    let t_ddg = m.net("tx_in_ddg", tst.q.eq(tx_st.item("TX_DDG")));
    m.assign(h2c_req, t_dcmd);
    m.assign(h2c_busy, th2c.q & !t_idle);
    let window = m.net(
        "tx_window",
        tbuf.q
            .zext(576 + dw)
            .shr_by(cat([tidx.q.ex(), zeros(3)]))
            .slice(dw - 1, 0),
    );
    let left = m.net("tx_left", tlen.q - tidx.q);
    let last_hdr = m.net("tx_last_hdr", left.le(u64::from(lanes)));
    let hkeep = m.net(
        "tx_hdr_keep",
        mux(
            last_hdr,
            ones_mask(left.slice(cw - 1, 0), lanes),
            ones(lanes),
        ),
    );
    let pad_take = m.net(
        "tx_pad_take",
        mux(
            tpad.q.gt(u64::from(lanes)),
            lit(cw, u128::from(lanes)),
            tpad.q.resize(cw),
        ),
    );
    let rd_data = dma_rdata.field("data");
    let rd_keep = dma_rdata.field("keep");
    let tx_fire = m.net("tx_fire", tx.valid & tx.ready);
    // The digests sent: none without digests in the configuration (TX_DIG and TX_DDG are
    // then never entered), so no CRC-32C unit.
    let (crc_beat, ddg_beat): (Expr, Expr) = if p.digests {
        let u_tcrc = m.instance("u_tx_crc", crc_mod);
        m.bind(
            u_tcrc,
            "start_i",
            (t_hdr & tidx.q.eq(0)) | (t_dat & tdfirst.q),
        );
        m.bind(u_tcrc, "valid_i", tx_fire & (t_hdr | t_dat));
        m.bind(u_tcrc, "data_i", mux(t_dat, rd_data, window));
        m.bind(u_tcrc, "keep_i", mux(t_dat, rd_keep, hkeep));
        let tcrc = m.bind_out(u_tcrc, "crc_o");
        let ddg_word = m.net("tx_ddgst", mux(h2c_err.q.ne(0u64), !tcrc, tcrc.ex()));
        m.comment(
            ddg_word,
            "the data digest, inverted when the payload's host memory read failed",
        );
        (tcrc.zext(dw), ddg_word.zext(dw))
    } else {
        (lit(dw, 0), lit(dw, 0))
    };
    m.assign(
        tx.valid,
        t_hdr | t_dig | t_pad | (t_dat & dma_rdata.valid) | t_ddg,
    );
    let tx_data_w = m.wire("tx_data_sel", dw);
    let tx_keep_w = m.wire("tx_keep_sel", lanes);
    m.comb(|c| {
        c.set(tx_data_w, crc_beat);
        c.set(tx_keep_w, lit(lanes, 0xf));
        c.if_(t_hdr, |c| {
            c.set(tx_data_w, window);
            c.set(tx_keep_w, hkeep);
        })
        .else_if(t_pad, |c| {
            c.set(tx_data_w, lit(dw, 0));
            c.set(tx_keep_w, ones_mask(pad_take.ex(), lanes));
        })
        .else_if(t_dat, |c| {
            c.set(tx_data_w, rd_data);
            c.set(tx_keep_w, rd_keep);
        })
        .else_if(t_ddg, |c| c.set(tx_data_w, ddg_beat));
    });
    m.assign(tx.field("data"), tx_data_w);
    m.assign(tx.field("keep"), tx_keep_w);
    m.assign(dma_rdata.ready, t_dat & tx.ready);

    // PDUs to load.
    let icreq = m.net(
        "icreq_hdr",
        cat([
            zeros(576 - 128),
            zeros(32), // MAXR2T 0: one R2T per command
            zeros(6),
            asked.ex(),   // DGST
            zeros(8),     // HPDA 0
            zeros(16),    // PFV 0
            lit(32, 128), // PLEN
            lit(8, 0),    // PDO
            lit(8, 128),  // HLEN
            lit(8, 0),    // flags
            lit(8, 0x00), // ICReq
        ]),
    );
    let term = m.net(
        "termreq_hdr",
        cat([
            zeros(576 - 256),
            term_hdr.q.ex(), // data: the offending common header
            zeros(80),
            fei.q.ex(),
            fes.q.ex(),
            lit(32, 32),
            lit(8, 0),
            lit(8, 24),
            lit(8, 0),
            lit(8, 0x02), // H2CTermReq
        ]),
    );
    let opc = m.net("cmd_opc", sqe.slice(7, 0));
    let rw = m.net("cmd_rw", opc.eq(0x01u64) | opc.eq(0x02u64));
    let nlb = m.net("cmd_nlb", sqe.slice(399, 384));
    let dlen = m.net(
        "cmd_len",
        mux(
            rw,
            cat([zeros(6), (nlb.zext(17) + 1u64).ex(), zeros(9)]),
            lit(32, 0),
        ),
    );
    m.comment(
        dlen,
        "the command's data length: (NLB + 1) * 512 for Read and Write",
    );
    let is_icd = m.net(
        "cmd_in_capsule",
        if p.icd_bytes > 0 {
            opc.eq(0x01u64) & dlen.le(u64::from(p.icd_bytes))
        } else {
            lit(1, 0)
        },
    );
    m.comment(
        is_icd,
        "a Write of at most nvme_tcp.in_capsule_bytes: its data goes in the capsule",
    );
    // The SGL: a data block with an offset into the capsule (identifier 01h, offset 0) for
    // in-capsule data, else the transport data block (5Ah, address 0).
    let sgl_id = m.net("capsule_sgl_id", mux(is_icd, lit(8, 0x01), lit(8, 0x5a)));
    let cap_plen = m.net(
        "capsule_plen",
        mux(is_icd, cap_pdo.q.zext(32) + dlen + dd4, lit(32, 72) + hd4),
    );
    let cap_flags = m.net(
        "capsule_flags",
        cat([zeros(6), (is_icd & dd.q).ex(), hd.q.ex()]),
    );
    let capsule = m.net(
        "capsule_hdr",
        cat([
            sqe.slice(511, 320), // CDW10-15
            sgl_id.ex(),         // SGL identifier
            zeros(24),
            dlen.ex(),          // SGL length
            zeros(64),          // SGL address / offset 0
            sqe.slice(191, 16), // CID .. MPTR
            lit(2, 1),          // PSDT 01b
            sqe.slice(13, 0),   // FUSE, opcode
            cap_plen.ex(),
            mux(is_icd, cap_pdo.q, lit(8, 0)).ex(), // PDO
            lit(8, 72),
            cap_flags.ex(),
            lit(8, 0x04), // CapsuleCmd
        ]),
    );
    let slot_cid_of = |idx: Sig| -> Expr {
        let mut e: Expr = slot_cid[0].q.ex();
        for i in 1..d {
            e = mux(idx.eq(u64::from(i)), slot_cid[i as usize].q, e);
        }
        e
    };
    let h2c_cccid = m.net("h2c_cccid", slot_cid_of(rf_slot));
    let h2c = m.net(
        "h2c_hdr",
        cat([
            zeros(576 - 192),
            zeros(32),                                 // reserved
            h2c_len.ex(),                              // DATAL
            h2c_datao.ex(),                            // DATAO
            rf_ttag.ex(),                              // TTAG, from the R2T
            h2c_cccid.ex(),                            // CCCID
            (h2c_pdo.q.zext(32) + h2c_len + dd4).ex(), // PLEN
            h2c_pdo.q.ex(),                            // PDO
            lit(8, 24),                                // HLEN
            zeros(5),
            h2c_fits.ex(), // LAST_PDU
            dd.q.ex(),     // DDGSTF
            hd.q.ex(),     // HDGSTF
            lit(8, 0x06),  // H2CData
        ]),
    );
    let load_ic = m.net("load_icreq", t_idle & ic_pend.q);
    let load_term = m.net("load_termreq", t_idle & !ic_pend.q & term_pend.q & !abort.q);
    let load_h2c = m.net(
        "load_h2c",
        t_idle & !ic_pend.q & !term_pend.q & rf_valid & connected.q & !dead.q & !abort.q,
    );
    m.comment(
        load_h2c,
        "answer the oldest accepted R2T before sending new commands",
    );
    let can_cmd = m.net(
        "can_send_cmd",
        t_idle
            & connected.q
            & !dead.q
            & !term_pend.q
            & !ic_pend.q
            & !rf_valid
            & !abort.q
            & free_any,
    );
    let load_cmd = m.net("load_cmd", can_cmd & cmd.valid);
    m.assign(space_o, can_cmd | dead.q);
    m.assign(
        ev_tx_pdu,
        cat([load_h2c.ex(), load_term.ex(), load_cmd.ex(), load_ic.ex()]),
    );
    m.assign(
        ev_tx_bytes,
        mux(
            tx_fire,
            (0..lanes).fold(lit(cw, 0), |acc, i| acc + tx.field("keep").bit(i).zext(cw)),
            lit(cw, 0),
        ),
    );
    m.assign(cmd.ready, load_cmd | (bounce & cpl.ready & !any_ready));

    // The H2CData's end: the R2T advances, or (its read failed) the connection is abandoned.
    let h2c_finish = m.net(
        "h2c_finish",
        (t_dwait & h2c_done.q & !dd.q) | (t_ddg & tx_fire),
    );
    let h2c_ok = m.net("h2c_finish_ok", h2c_finish & h2c_err.q.eq(0u64));
    let r2t_answered = m.net("r2t_answered", h2c_ok & h2c_last.q & !ticd.q);
    m.bind(u_r2t, "m_ready_i", r2t_answered);
    let r2t_sent_all = m.net(
        "r2t_sent_all",
        h2c_last.q & !ticd.q & tx_fire & (t_ddg | (t_dat & dma_rdata.field("last") & !dd.q)),
    );
    m.comment(
        r2t_sent_all,
        "the R2T's last byte leaves: the target may send the command's next R2T from now on",
    );
    let after_hdr = m.net(
        "tx_after_hdr",
        mux(
            th2c.q,
            mux(tpad.q.ne(0u64), tx_st.item("TX_PAD"), tx_st.item("TX_DATA")),
            tx_st.item("TX_IDLE"),
        ),
    );
    let done_tag_slot = dma_done.field("tag");
    let done_for_read = m.net(
        "dma_done_for_read",
        slot_read.q.shr_by(done_tag_slot).bit(0),
    );
    let rd_done_now = m.net("h2c_rd_done_now", dma_done.valid & !done_for_read);
    m.comment(
        rd_done_now,
        "a completion for a Write's slot: the H2CData's read",
    );
    m.comb(|c| {
        c.set(tst.d, tst.q);
        c.set(tbuf.d, tbuf.q);
        c.set(tlen.d, tlen.q);
        c.set(tidx.d, tidx.q);
        c.set(tdg.d, tdg.q);
        c.set(th2c.d, th2c.q);
        c.set(tpad.d, tpad.q);
        c.set(tdfirst.d, tdfirst.q);
        c.set(h2c_n.d, h2c_n.q);
        c.set(h2c_last.d, h2c_last.q);
        c.set(h2c_done.d, h2c_done.q | rd_done_now);
        c.set(h2c_err.d, h2c_err.q);
        c.set(abort.d, abort.q);
        c.set(r2t_sent.d, r2t_sent.q);
        c.set(ticd.d, ticd.q);
        c.set(icd_slot.d, icd_slot.q);
        c.set(ic_pend.d, ic_pend.q);
        c.if_(rd_done_now, |c| c.set(h2c_err.d, dma_done.field("status")));
        c.if_(load_ic, |c| {
            c.set(tst.d, tx_st.item("TX_HDR"));
            c.set(tbuf.d, icreq);
            c.set(tlen.d, 128u64);
            c.set(tidx.d, 0u64);
            c.set(tdg.d, 0u64);
            c.set(th2c.d, 0u64);
            c.set(ic_pend.d, 0u64);
        })
        .else_if(load_term, |c| {
            c.set(tst.d, tx_st.item("TX_HDR"));
            c.set(tbuf.d, term);
            c.set(tlen.d, 32u64);
            c.set(tidx.d, 0u64);
            c.set(tdg.d, 0u64);
            c.set(th2c.d, 0u64);
        })
        .else_if(load_h2c, |c| {
            c.set(tst.d, tx_st.item("TX_DCMD"));
            c.set(tbuf.d, h2c);
            c.set(tlen.d, 24u64);
            c.set(tidx.d, 0u64);
            c.set(tdg.d, hd.q);
            c.set(th2c.d, 1u64);
            c.set(tpad.d, h2c_pdo.q - 24u64 - hd4.slice(7, 0));
            c.set(tdfirst.d, 1u64);
            c.set(h2c_n.d, h2c_len);
            c.set(h2c_last.d, h2c_fits);
            c.set(h2c_done.d, 0u64);
            c.set(h2c_err.d, 0u64);
            c.set(ticd.d, 0u64);
        })
        .else_if(load_cmd, |c| {
            c.set(
                tst.d,
                mux(is_icd, tx_st.item("TX_DCMD"), tx_st.item("TX_HDR")),
            );
            c.set(tbuf.d, capsule);
            c.set(tlen.d, 72u64);
            c.set(tidx.d, 0u64);
            c.set(tdg.d, hd.q);
            c.set(th2c.d, is_icd);
            c.set(ticd.d, is_icd);
            c.set(icd_slot.d, free_idx);
            c.set(tpad.d, cap_pdo.q - 72u64 - hd4.slice(7, 0));
            c.set(tdfirst.d, 1u64);
            c.set(h2c_n.d, dlen);
            c.set(h2c_last.d, 0u64);
            c.set(h2c_done.d, 0u64);
            c.set(h2c_err.d, 0u64);
        })
        .else_if(t_dcmd & h2c_dma_go, |c| c.set(tst.d, tx_st.item("TX_HDR")))
        .else_if(tx_fire & t_hdr, |c| {
            c.set(tidx.d, tidx.q + u64::from(lanes));
            c.if_(last_hdr, |c| {
                c.set(tst.d, mux(tdg.q, tx_st.item("TX_DIG"), after_hdr));
            });
        })
        .else_if(tx_fire & t_dig, |c| c.set(tst.d, after_hdr))
        .else_if(tx_fire & t_pad, |c| {
            c.set(tpad.d, tpad.q - pad_take.zext(8));
            c.if_(tpad.q.le(u64::from(lanes)), |c| {
                c.set(tst.d, tx_st.item("TX_DATA"))
            });
        })
        .else_if(tx_fire & t_dat, |c| {
            c.set(tdfirst.d, 0u64);
            c.if_(dma_rdata.field("last"), |c| {
                c.set(tst.d, tx_st.item("TX_DWAIT"))
            });
        })
        .else_if(t_dwait & h2c_done.q & dd.q, |c| {
            c.set(tst.d, tx_st.item("TX_DDG"))
        });
        c.if_(h2c_finish, |c| {
            c.set(tst.d, tx_st.item("TX_IDLE"));
            c.if_(h2c_err.q.ne(0u64), |c| c.set(abort.d, 1u64))
                .else_if(ticd.q, |_| {})
                .else_if(h2c_last.q, |c| c.set(r2t_sent.d, 0u64))
                .else_(|c| c.set(r2t_sent.d, r2t_sent.q + h2c_n.q));
        });
    });
    Tx {
        abort,
        opc,
        dlen,
        load_term,
        load_cmd,
        r2t_sent_all,
    }
}
