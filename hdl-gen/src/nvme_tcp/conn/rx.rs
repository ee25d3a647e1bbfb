//! The receive datapath: rx bytes realigned into the header register, the digest CRC, the
//! hold FIFO for C2HData payload and the packer that fills its beats from lane 0.

use super::{byte, ones_mask, Ctx};
use hdl_builder::prelude::*;
use hdl_builder::{EnumTy, Inst};

/// What the later parts read.
pub(super) struct Rx {
    pub(super) rx_st: EnumTy,
    pub(super) rst: Reg,
    pub(super) rx_pos: Reg,
    pub(super) hcnt: Reg,
    pub(super) dcnt: Reg,
    pub(super) hdr: Reg,
    pub(super) dg: Reg,
    pub(super) hlen: Reg,
    pub(super) drem: Reg,
    pub(super) dfirst: Reg,
    pub(super) acc: Reg,
    pub(super) acc_n: Reg,
    pub(super) dslot: Reg,
    pub(super) dflags: Reg,
    pub(super) rxv: Sig,
    pub(super) nbytes: Sig,
    pub(super) in_ch: Sig,
    pub(super) in_psh: Sig,
    pub(super) in_hdg: Sig,
    pub(super) in_dg: Sig,
    pub(super) take_data: Sig,
    pub(super) take: Sig,
    pub(super) u_dfifo: Inst,
    pub(super) dfifo_ready: Sig,
    pub(super) consuming: Sig,
    pub(super) got: Sig,
    pub(super) hdr_new: Sig,
    pub(super) dg_new: Sig,
    pub(super) hcnt_next: Sig,
    pub(super) dcnt_next: Sig,
    pub(super) rcrc: Sig,
    pub(super) got_data: Sig,
    pub(super) pk_comb: Sig,
    pub(super) pk_total: Sig,
    pub(super) pk_full: Sig,
    pub(super) pk_end: Sig,
}

pub(super) fn receive(m: &mut ModuleBuilder, cx: &Ctx) -> Rx {
    let Ctx {
        dw,
        lanes,
        cw,
        ref crc_mod,
        sw,
        ref data_fifo,
        ref rx,
        lost_any,
        ..
    } = *cx;
    // ------------------------------------------------------------ receive
    let rx_st = m.enum_type(
        "rx_state",
        &[
            "RX_CH", "RX_CHK", "RX_PSH", "RX_HDG", "RX_ACT", "RX_DATA", "RX_FLUSH", "RX_DDG",
            "RX_DVER", "RX_DEAD",
        ],
    );
    let rst = m.reg_enum("rx_state", &rx_st, rx_st.item("RX_CH"));
    let rx_pos = m.reg("rx_pos", cw, 0);
    m.comment(rx_pos.q, "bytes of the current rx beat already taken");
    let hcnt = m.reg("rx_hcnt", 8, 0);
    m.comment(hcnt.q, "header bytes received of the current PDU");
    let dcnt = m.reg("rx_dcnt", 3, 0);
    let hdr = m.reg("rx_hdr", 192, 0);
    m.comment(hdr.q, "the first 24 header bytes of the current PDU");
    let dg = m.reg("rx_dgst", 32, 0);
    let hlen = m.reg("rx_hlen", 8, 0);
    let drem = m.reg("rx_drem", 32, 0);
    m.comment(drem.q, "C2HData payload bytes still to come");
    let dfirst = m.reg("rx_dfirst", 1, 0);
    m.comment(
        dfirst.q,
        "no payload byte of the C2HData taken yet (the data digest restarts)",
    );
    let acc = m.reg("pk_acc", dw, 0);
    m.comment(
        acc.q,
        "payload bytes packed from lane 0, not yet a full beat",
    );
    let acc_n = m.reg("pk_count", cw, 0);
    let dslot = m.reg("rx_dslot", sw, 0);
    m.comment(dslot.q, "the C2HData's command slot");
    let dflags = m.reg("rx_dflags", 2, 0);
    m.comment(
        dflags.q,
        "the C2HData's LAST_PDU (bit 0) and SUCCESS (bit 1) flags",
    );

    // A lost connection inside a C2HData payload or its data digest: a beat of zeros in place
    // of the missing one, up to the PDU's end (never in a header).
    let zfill = m.net(
        "rx_zero_fill",
        lost_any & !rx.valid & (rst.q.eq(rx_st.item("RX_DATA")) | rst.q.eq(rx_st.item("RX_DDG"))),
    );
    let rxv = m.net("rx_valid_fed", rx.valid | zfill);
    let rdata = m.net("rx_data_fed", mux(zfill, lit(dw, 0), rx.field("data")));
    let rkeep = m.net("rx_keep_fed", mux(zfill, ones(lanes), rx.field("keep")));
    let nbytes = m.net(
        "rx_nbytes",
        (0..lanes).fold(lit(cw, 0), |acc, i| acc + rkeep.bit(i).zext(cw)),
    );
    m.comment(
        nbytes,
        "bytes in the rx beat (keep is contiguous from lane 0)",
    );
    let avail = m.net("rx_avail", nbytes - rx_pos.q);
    let in_ch = m.net("rx_in_ch", rst.q.eq(rx_st.item("RX_CH")));
    let in_psh = m.net("rx_in_psh", rst.q.eq(rx_st.item("RX_PSH")));
    let in_hdg = m.net("rx_in_hdg", rst.q.eq(rx_st.item("RX_HDG")));
    let in_ddg = m.net("rx_in_ddg", rst.q.eq(rx_st.item("RX_DDG")));
    let in_data = m.net("rx_in_data", rst.q.eq(rx_st.item("RX_DATA")));
    let in_dead = m.net("rx_in_dead", rst.q.eq(rx_st.item("RX_DEAD")));
    let in_dg = m.net("rx_in_dg", in_hdg | in_ddg);
    let need = m.net(
        "rx_need",
        mux(
            in_ch,
            lit(8, 8) - hcnt.q,
            mux(
                in_psh,
                hlen.q - hcnt.q,
                mux(in_dg, lit(8, 4) - dcnt.q.zext(8), lit(8, 0)),
            ),
        ),
    );
    let take_hdr = m.net(
        "rx_take_hdr",
        mux(avail.zext(8).le(need), avail, need.slice(cw - 1, 0)),
    );
    let take_data = m.net(
        "rx_take_data",
        mux(avail.zext(32).le(drem.q), avail, drem.q.slice(cw - 1, 0)),
    );
    let take = m.net("rx_take", mux(in_data, take_data, take_hdr));
    m.comment(take, "bytes taken from the beat this cycle");
    // The payload goes to the hold FIFO: one beat pushed per cycle at most.
    let u_dfifo = m.instance("u_hold_fifo", data_fifo);
    let dfifo_ready = m.bind_out(u_dfifo, "s_ready_o");
    let consuming = m.net(
        "rx_consuming",
        rxv & (in_ch | in_psh | in_dg | (in_data & dfifo_ready)),
    );
    let beat_done = m.net("rx_beat_done", (rx_pos.q + take).eq(nbytes));
    m.assign(rx.ready, in_dead | nbytes.eq(0) | (consuming & beat_done));
    let rshift = m.net("rx_shifted", rdata.shr_by(cat([rx_pos.q.ex(), zeros(3)])));
    let tkeep = m.net("rx_take_keep", ones_mask(take.ex(), lanes));
    let masked = m.net(
        "rx_take_bytes",
        cat((0..lanes)
            .rev()
            .map(|i| byte(rshift, i) & tkeep.bit(i).repeat(8))),
    );
    let got = m.net("rx_got", consuming & take.ne(0));
    let first = m.net("rx_first", in_ch & hcnt.q.eq(0));
    let hdr_base = m.net("rx_hdr_base", mux(first, lit(192, 0), hdr.q));
    let hdr_new = m.net(
        "rx_hdr_new",
        hdr_base
            | masked
                .zext(192 + dw)
                .shl_by(cat([hcnt.q.ex(), zeros(3)]))
                .slice(191, 0),
    );
    let dg_new = m.net(
        "rx_dgst_new",
        mux(dcnt.q.eq(0), lit(32, 0), dg.q)
            | masked
                .zext(32 + dw)
                .shl_by(cat([dcnt.q.ex(), zeros(3)]))
                .slice(31, 0),
    );
    let hcnt_next = m.net("rx_hcnt_next", hcnt.q + take.zext(8));
    let dcnt_next = m.net("rx_dcnt_next", dcnt.q + take.resize(3));

    // One CRC-32C for the header (header digest) and then the payload (data digest); none
    // without digests in the configuration (no digest is ever negotiated, so none checked).
    let rcrc = if cx.p.digests {
        let u_rcrc = m.instance("u_rx_crc", crc_mod);
        m.bind(u_rcrc, "start_i", first | (in_data & dfirst.q));
        m.bind(u_rcrc, "valid_i", got & (in_ch | in_psh | in_data));
        m.bind(u_rcrc, "data_i", rshift);
        m.bind(u_rcrc, "keep_i", tkeep);
        m.bind_out(u_rcrc, "crc_o")
    } else {
        let z = m.net("rx_crc_none", lit(32, 0));
        m.comment(z, "no digests in this configuration: no CRC-32C unit");
        z
    };

    // Packer: payload bytes into full beats from lane 0 (keep all ones but on the last beat).
    let got_data = m.net("pk_got", got & in_data);
    let pk_comb = m.net(
        "pk_combined",
        acc.q.zext(2 * dw) | masked.zext(2 * dw).shl_by(cat([acc_n.q.ex(), zeros(3)])),
    );
    let pk_total = m.net("pk_total", acc_n.q.zext(cw + 1) + take.zext(cw + 1));
    let pk_full = m.net("pk_full", pk_total.ge(u64::from(lanes)));
    let pk_end = m.net("pk_end", take_data.zext(32).eq(drem.q));
    m.comment(pk_end, "this take holds the payload's last byte");
    let in_flush = m.net("rx_in_flush", rst.q.eq(rx_st.item("RX_FLUSH")));
    let pk_push = m.net(
        "pk_push",
        (got_data & (pk_full | pk_end)) | (in_flush & dfifo_ready),
    );
    let pk_data = m.net("pk_data", mux(in_flush, acc.q, pk_comb.slice(dw - 1, 0)));
    let pk_keep = m.net(
        "pk_keep",
        mux(
            in_flush,
            ones_mask(acc_n.q.ex(), lanes),
            mux(
                pk_full,
                ones(lanes),
                ones_mask(pk_total.slice(cw - 1, 0), lanes),
            ),
        ),
    );
    let pk_last = m.net(
        "pk_last",
        in_flush | (pk_end & pk_total.le(u64::from(lanes))),
    );
    m.bind(u_dfifo, "s_valid_i", pk_push);
    m.bind(
        u_dfifo,
        "s_data_i",
        cat([pk_last.ex(), pk_keep.ex(), pk_data.ex()]),
    );
    Rx {
        rx_st,
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
        u_dfifo,
        dfifo_ready,
        consuming,
        got,
        hdr_new,
        dg_new,
        hcnt_next,
        dcnt_next,
        rcrc,
        got_data,
        pk_comb,
        pk_total,
        pk_full,
        pk_end,
    }
}
