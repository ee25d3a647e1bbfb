//! The receive state machine: a PDU through its header, header digest, checks, actions,
//! payload and data digest, and the slot updates it makes.

use super::cpl::Cpl;
use super::hdr::Hdr;
use super::rx::Rx;
use super::tx::Tx;
use super::verdict::Verdicts;
use super::Ctx;
use hdl_builder::prelude::*;
use hdl_builder::Comb;

pub(super) fn rx_fsm(
    m: &mut ModuleBuilder,
    cx: &Ctx,
    ri: &Rx,
    hc: &Hdr,
    vd: &Verdicts,
    cp: &Cpl,
    tt: &Tx,
) {
    let Ctx {
        dw,
        lanes,
        cw,
        d,
        ref rx,
        ref dma_done,
        ev_rx_pdu,
        ev_rx_bytes,
        ev_hdgst_err,
        connected,
        dead,
        hd,
        dd,
        asked,
        term_pend,
        fes,
        fei,
        term_hdr,
        lost_any,
        slot_valid,
        ref slot_cid,
        slot_read,
        slot_write,
        slot_r2t,
        ref slot_len,
        slot_sgl,
        ref slot_dptr,
        slot_resp,
        ref slot_status,
        ref slot_dw0,
        slot_dgerr,
        ref slot_dmaerr,
        ref slot_pend,
        free_idx,
        ..
    } = *cx;
    let Rx {
        ref rx_st,
        rst,
        rx_pos,
        hcnt,
        dcnt,
        hdr,
        dg,
        hlen,
        drem,
        dfirst,
        acc,
        acc_n,
        dslot,
        dflags,
        rxv,
        nbytes,
        in_ch,
        in_psh,
        in_hdg,
        in_dg,
        take_data,
        take,
        dfifo_ready,
        consuming,
        got,
        hdr_new,
        dg_new,
        hcnt_next,
        dcnt_next,
        got_data,
        pk_comb,
        pk_total,
        pk_full,
        pk_end,
        ..
    } = *ri;
    let Hdr {
        h_type,
        h_flags,
        h_hlen,
        t_icresp,
        t_term,
        t_resp,
        t_data,
        t_r2t,
        chk_fail,
        chk_fes,
        chk_fei,
        ic_pfv,
        ic_cpda,
        ic_dgst,
        ic_maxh2c,
        ic_bad_dgst,
        ic_cap_pdo,
        ic_pdo,
        r_dw0,
        r_status,
        c_datao,
        c_datal,
        r_ttag,
        hit,
        hit_idx,
        dhit,
        dhit_idx,
        whit,
        whit_idx,
        r_range_bad,
        r_busy,
        c_range_bad,
        c_datal_bad,
        c_too_big,
        in_act,
        dgst_bad,
        ..
    } = *hc;
    let Verdicts {
        v_space,
        in_dver,
        datao_r,
        datal_r,
        act_data_ok,
        v_good,
        v_slot,
        ddgst_err_now,
        u_r2t,
        rf_slot,
        maxh2c,
        h2c_pdo,
        cap_pdo,
        done_fire,
        c2h_more,
        vc_slot_w,
        ..
    } = *vd;
    let Cpl {
        cpl_slot,
        any_ready,
        sqe,
        cmd_cid,
        cpl_fire,
        ..
    } = *cp;
    let Tx {
        abort,
        opc,
        dlen,
        load_term,
        load_cmd,
        r2t_sent_all,
        ..
    } = *tt;
    // ------------------------------------------------------------ receive state machine
    let in_chk = m.net("rx_in_chk", rst.q.eq(rx_st.item("RX_CHK")));
    m.assign(ev_rx_bytes, mux(rx.valid & rx.ready, nbytes, lit(cw, 0)));
    m.assign(ev_hdgst_err, in_act & dgst_bad);
    let fatal = m.wire("fatal", 1);
    let fatal_fes = m.wire("fatal_fes", 16);
    let fatal_fei = m.wire("fatal_fei", 32);
    m.comment(
        fatal,
        "a check failed: end the connection with an H2CTermReq",
    );
    let act_ic = m.net("act_icresp", in_act & t_icresp);
    m.comb(|c| {
        c.set(fatal, 1u64);
        c.set(fatal_fes, 0x06u64);
        c.set(fatal_fei, 0u64);
        c.if_(in_chk & chk_fail, |c| {
            c.set(fatal_fes, chk_fes);
            c.set(fatal_fei, chk_fei);
        })
        .else_if(act_ic & ic_pfv.ne(0u64), |c| c.set(fatal_fei, 8u64))
        .else_if(act_ic & ic_cpda.gt(31u64), |c| c.set(fatal_fei, 10u64))
        .else_if(act_ic & ic_bad_dgst, |c| c.set(fatal_fei, 11u64))
        .else_if(
            act_ic & (ic_maxh2c.lt(4096u64) | ic_maxh2c.slice(1, 0).ne(0u64)),
            |c| c.set(fatal_fei, 12u64),
        )
        .else_if(in_act & dgst_bad, |c| c.set(fatal_fes, 0x03u64))
        .else_if(in_act & t_resp & !hit.any(), |c| {
            c.set(fatal_fes, 0x01u64);
            c.set(fatal_fei, 20u64);
        })
        .else_if(in_act & t_data & !dhit.any(), |c| {
            c.set(fatal_fes, 0x01u64);
            c.set(fatal_fei, 8u64);
        })
        .else_if(in_act & t_data & c_datal_bad, |c| {
            c.set(fatal_fes, 0x01u64);
            c.set(fatal_fei, 16u64);
        })
        .else_if(in_act & t_data & c_range_bad, |c| {
            c.set(fatal_fes, 0x04u64);
            c.set(fatal_fei, 12u64);
        })
        .else_if(in_act & t_data & c_too_big, |c| {
            c.set(fatal_fes, 0x05u64);
            c.set(fatal_fei, 16u64);
        })
        .else_if(in_act & t_r2t & !whit.any(), |c| {
            c.set(fatal_fes, 0x01u64);
            c.set(fatal_fei, 8u64);
        })
        .else_if(in_act & t_r2t & r_busy, |c| {
            c.set(fatal_fes, 0x02u64);
            c.set(fatal_fei, 0u64);
        })
        .else_if(in_act & t_r2t & r_range_bad, |c| {
            c.set(fatal_fes, 0x04u64);
            c.set(fatal_fei, 12u64);
        })
        .else_(|c| {
            c.set(fatal, 0u64);
            c.set(fatal_fes, 0u64);
        });
    });
    // Functional coverage: every FES the receive checks end a connection with (mod.rs).
    for (fes, name) in [
        (0x01u64, "01h_invalid_header_field"),
        (0x02, "02h_pdu_sequence_error"),
        (0x03, "03h_header_digest_error"),
        (0x04, "04h_data_out_of_range"),
        (0x05, "05h_data_transfer_limit_exceeded"),
        (0x06, "06h_unsupported_parameter"),
    ] {
        m.cover(&format!("term_fes_{name}"), fatal & fatal_fes.eq(fes));
    }
    m.assign(act_data_ok, in_act & t_data & !fatal);
    // The C2HData's header is taken once its verdict (no data digests) has room.
    let data_go = m.net("c2h_header_done", act_data_ok & (dd.q | v_space));
    let resp_ok = m.net("act_resp_ok", in_act & t_resp & !fatal);
    let r2t_ok = m.net("act_r2t_ok", in_act & t_r2t & !fatal);
    m.comment(r2t_ok, "an R2T passed every check: queued to be answered");
    m.bind(u_r2t, "s_valid_i", r2t_ok);
    m.bind(
        u_r2t,
        "s_data_i",
        cat([whit_idx.ex(), r_ttag.ex(), c_datal.ex(), c_datao.ex()]),
    );
    m.comb(|c| {
        c.set(rst.d, rst.q);
        c.set(rx_pos.d, rx_pos.q);
        c.set(hcnt.d, hcnt.q);
        c.set(dcnt.d, dcnt.q);
        c.set(hdr.d, hdr.q);
        c.set(dg.d, dg.q);
        c.set(hlen.d, hlen.q);
        c.set(connected.d, connected.q);
        c.set(hd.d, hd.q);
        c.set(dd.d, dd.q);
        c.set(dead.d, dead.q);
        c.set(drem.d, drem.q);
        c.set(dfirst.d, dfirst.q);
        c.set(acc.d, acc.q);
        c.set(acc_n.d, acc_n.q);
        c.set(dslot.d, dslot.q);
        c.set(dflags.d, dflags.q);
        c.set(datao_r.d, datao_r.q);
        c.set(datal_r.d, datal_r.q);
        c.set(maxh2c.d, maxh2c.q);
        c.set(h2c_pdo.d, h2c_pdo.q);
        c.set(cap_pdo.d, cap_pdo.q);
        c.if_(rxv & rx.ready, |c| c.set(rx_pos.d, 0u64))
            .else_if(consuming, |c| c.set(rx_pos.d, rx_pos.q + take));
        c.if_(got & (in_ch | in_psh), |c| {
            c.set(hdr.d, hdr_new);
            c.set(hcnt.d, hcnt_next);
        });
        c.if_(got & in_dg, |c| {
            c.set(dg.d, dg_new);
            c.set(dcnt.d, dcnt_next);
        });
        let back_to_ch = |c: &mut Comb| {
            c.set(hcnt.d, 0u64);
            c.set(rst.d, rx_st.item("RX_CH"));
        };
        let after_data = |c: &mut Comb| {
            c.set(dcnt.d, 0u64);
            c.set(
                rst.d,
                mux(dd.q, rx_st.item("RX_DDG"), rx_st.item("RX_DVER")),
            );
        };
        c.case(rst.q, |k| {
            k.arm(rx_st.item("RX_CH"), |c| {
                c.if_(got & hcnt_next.eq(8u64), |c| {
                    c.set(rst.d, rx_st.item("RX_CHK"))
                });
            });
            k.arm(rx_st.item("RX_CHK"), |c| {
                c.set(hlen.d, h_hlen);
                c.set(rst.d, rx_st.item("RX_PSH"));
            });
            k.arm(rx_st.item("RX_PSH"), |c| {
                c.if_(got & hcnt_next.eq(hlen.q), |c| {
                    c.set(dcnt.d, 0u64);
                    c.set(
                        rst.d,
                        mux(
                            (t_resp | t_data | t_r2t) & hd.q,
                            rx_st.item("RX_HDG"),
                            rx_st.item("RX_ACT"),
                        ),
                    );
                });
            });
            k.arm(rx_st.item("RX_HDG"), |c| {
                c.if_(got & dcnt_next.eq(4u64), |c| {
                    c.set(rst.d, rx_st.item("RX_ACT"))
                });
            });
            k.arm(rx_st.item("RX_ACT"), |c| {
                c.case(h_type, |k| {
                    k.arm(lit(8, 0x03), |c| {
                        c.set(dead.d, 1u64);
                        c.set(rst.d, rx_st.item("RX_DEAD"));
                    });
                    k.arm(lit(8, 0x01), |c| {
                        c.set(connected.d, 1u64);
                        // The digests the ICResp selects among those the ICReq asked for
                        // (one it selects unasked is fatal, above, and then the connection
                        // is dead): without digests in the configuration, constant 0, so
                        // synthesis removes the digest logic.
                        c.set(hd.d, ic_dgst.bit(0) & asked.bit(0));
                        c.set(dd.d, ic_dgst.bit(1) & asked.bit(1));
                        c.set(maxh2c.d, ic_maxh2c);
                        c.set(h2c_pdo.d, ic_pdo);
                        c.set(cap_pdo.d, ic_cap_pdo);
                        back_to_ch(c);
                    });
                    k.arm(lit(8, 0x07), |c| {
                        c.if_(data_go, |c| {
                            c.set(drem.d, c_datal);
                            c.set(dfirst.d, 1u64);
                            c.set(acc.d, 0u64);
                            c.set(acc_n.d, 0u64);
                            c.set(dslot.d, dhit_idx);
                            c.set(dflags.d, h_flags.slice(3, 2));
                            c.set(datao_r.d, c_datao);
                            c.set(datal_r.d, c_datal);
                            c.set(rst.d, rx_st.item("RX_DATA"));
                        });
                    });
                    k.default(back_to_ch);
                });
            });
            k.arm(rx_st.item("RX_DATA"), |c| {
                c.if_(got_data, |c| {
                    c.set(dfirst.d, 0u64);
                    c.set(drem.d, drem.q - take_data.zext(32));
                    c.if_(pk_full, |c| {
                        c.set(acc.d, pk_comb.slice(2 * dw - 1, dw));
                        c.set(acc_n.d, (pk_total - u64::from(lanes)).slice(cw - 1, 0));
                    })
                    .else_if(!pk_end, |c| {
                        c.set(acc.d, pk_comb.slice(dw - 1, 0));
                        c.set(acc_n.d, pk_total.slice(cw - 1, 0));
                    });
                    c.if_(pk_end, |c| {
                        c.if_(pk_total.gt(u64::from(lanes)), |c| {
                            c.set(rst.d, rx_st.item("RX_FLUSH"))
                        })
                        .else_(after_data);
                    });
                });
            });
            k.arm(rx_st.item("RX_FLUSH"), |c| {
                c.if_(dfifo_ready, after_data);
            });
            k.arm(rx_st.item("RX_DDG"), |c| {
                c.if_(got & dcnt_next.eq(4u64), |c| {
                    c.set(rst.d, rx_st.item("RX_DVER"))
                });
            });
            k.arm(rx_st.item("RX_DVER"), |c| {
                c.if_(!dd.q | v_space, back_to_ch);
            });
            k.default(|_| {});
        });
        // A failed host memory read ends the connection between received PDUs (a C2HData
        // payload in flight is taken whole, its host memory write is owed to the DMA engine).
        c.if_(abort.q & in_ch & hcnt.q.eq(0u64), |c| {
            c.set(dead.d, 1u64);
            c.set(rst.d, rx_st.item("RX_DEAD"));
        });
        // A lost TCP connection ends a header at once (nothing of it was committed).
        c.if_(lost_any & (in_ch | in_chk | in_psh | in_hdg), |c| {
            c.set(dead.d, 1u64);
            c.set(rst.d, rx_st.item("RX_DEAD"));
        });
        // A failed check overrides whatever the state machine did this cycle.
        c.if_(fatal, |c| {
            c.set(connected.d, connected.q);
            c.set(dead.d, 1u64);
            c.set(rst.d, rx_st.item("RX_DEAD"));
        });
    });
    // The C2HData's end: its verdict is in, SUCCESS (with LAST_PDU) answers the command.
    let dver_done = m.net("c2h_done", in_dver & (!dd.q | v_space));
    let success = m.net("c2h_success", dver_done & dflags.q.bit(1) & !lost_any);
    m.comment(
        success,
        "SUCCESS answers the command (not on a PDU a lost connection ended with zeros)",
    );
    m.assign(
        ev_rx_pdu,
        cat([
            r2t_ok.ex(),
            (act_data_ok & data_go).ex(),
            (in_act & t_term).ex(),
            resp_ok.ex(),
            (in_act & t_icresp & !fatal).ex(),
        ]),
    );
    m.comb(|c| {
        c.set(term_pend.d, term_pend.q);
        c.set(fes.d, fes.q);
        c.set(fei.d, fei.q);
        c.set(term_hdr.d, term_hdr.q);
        c.if_(fatal & !lost_any, |c| {
            c.set(term_pend.d, 1u64);
            c.set(fes.d, fatal_fes);
            c.set(fei.d, fatal_fei);
            c.set(term_hdr.d, hdr.q.slice(63, 0));
        })
        .else_if(load_term, |c| c.set(term_pend.d, 0u64));
    });

    // Slots: allocated when a capsule is loaded, answered by a CapsuleResp or SUCCESS, freed by
    // their completion (allocation and completion may happen in one cycle, to different slots).
    let onehot = |idx: Sig| lit(d, 1).shl_by(idx);
    let alloc = m.net("slot_alloc", mux(load_cmd, onehot(free_idx), lit(d, 0)));
    let freed = m.net(
        "slot_freed",
        mux(cpl_fire & any_ready, onehot(cpl_slot), lit(d, 0)),
    );
    let answered = m.net(
        "slot_answered",
        mux(resp_ok, onehot(hit_idx), lit(d, 0)) | mux(success, onehot(dslot.q), lit(d, 0)),
    );
    let dg_hit = m.net(
        "slot_dgst_hit",
        mux(ddgst_err_now, onehot(dslot.q), lit(d, 0)),
    );
    let is_read = m.net("cmd_is_read", opc.eq(0x02u64));
    let is_write = m.net("cmd_is_write", opc.eq(0x01u64));
    let r2t_set = m.net("slot_r2t_set", mux(r2t_ok, onehot(whit_idx), lit(d, 0)));
    let r2t_clr = m.net(
        "slot_r2t_clear",
        mux(r2t_sent_all, onehot(rf_slot), lit(d, 0)),
    );
    let done_tag = dma_done.field("tag");
    let done_status = dma_done.field("status");
    m.comb(|c| {
        c.set(slot_valid.d, (slot_valid.q | alloc) & !freed);
        c.set(slot_resp.d, (slot_resp.q | answered) & !freed);
        c.set(slot_dgerr.d, (slot_dgerr.q | dg_hit) & !freed);
        c.set(slot_r2t.d, (slot_r2t.q | r2t_set) & !r2t_clr & !freed);
        c.set(slot_write.d, slot_write.q);
        c.set(slot_read.d, slot_read.q);
        c.set(slot_sgl.d, slot_sgl.q);
        for i in 0..d as usize {
            let iu = i as u64;
            let this_alloc = load_cmd & free_idx.eq(iu);
            for r in [
                &slot_cid[i],
                &slot_len[i],
                &slot_dptr[i],
                &slot_status[i],
                &slot_dw0[i],
                &slot_dmaerr[i],
            ] {
                c.set(r.d, r.q);
            }
            c.if_(this_alloc, |c| {
                c.set(slot_cid[i].d, cmd_cid);
                c.set(slot_len[i].d, dlen);
                c.set(slot_dptr[i].d, sqe.slice(319, 192));
                c.set(slot_dmaerr[i].d, 0u64);
            });
            c.if_(resp_ok & hit_idx.eq(iu), |c| {
                c.set(slot_status[i].d, r_status);
                c.set(slot_dw0[i].d, r_dw0);
            });
            c.if_(success & dslot.q.eq(iu), |c| {
                c.set(slot_status[i].d, 0u64);
                c.set(slot_dw0[i].d, 0u64);
            });
            c.if_(done_fire & done_tag.eq(iu) & done_status.ne(0u64), |c| {
                c.set(slot_dmaerr[i].d, done_status)
            });
            // One pending move per good verdict, one more per move that is not its PDU's
            // last (`verdict.rs`), one less per write move done.
            let inc = v_good & v_slot.eq(iu);
            let more = c2h_more & vc_slot_w.eq(iu);
            let dec = done_fire & done_tag.eq(iu) & slot_read.q.bit(i as u32);
            c.set(
                slot_pend[i].d,
                slot_pend[i].q + inc.zext(6) + more.zext(6) - dec.zext(6),
            );
        }
        c.if_(load_cmd, |c| {
            c.set(
                slot_read.d,
                (slot_read.q & !onehot(free_idx)) | mux(is_read, onehot(free_idx), lit(d, 0)),
            );
            c.set(
                slot_write.d,
                (slot_write.q & !onehot(free_idx)) | mux(is_write, onehot(free_idx), lit(d, 0)),
            );
            c.set(
                slot_sgl.d,
                (slot_sgl.q & !onehot(free_idx))
                    | mux(sqe.slice(15, 14).ne(0u64), onehot(free_idx), lit(d, 0)),
            );
        });
    });
}
