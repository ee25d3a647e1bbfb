//! One NVMe/TCP connection, host side: connection start, command capsules out, response
//! capsules in, header digests, fatal errors. The interface is documented in `mod.rs`.

use super::NvmeTcpParams;
use crate::blocks::crc::{crc, CRC32C};
use crate::blocks::fifo::fifo;
use hdl_builder::prelude::*;
use hdl_builder::{Comb, Error, ErrorKind, Errors};
use std::panic::Location;
use std::rc::Rc;

/// The module name: `nvme_tcp_conn_w<bits>_d<outstanding>_h<hold bytes>`, `_i<in-capsule
/// bytes>` when writes may carry in-capsule data, `_nd` without digests.
pub fn module_name(p: &NvmeTcpParams) -> String {
    format!(
        "nvme_tcp_conn_w{}_d{}_h{}{}{}",
        p.data_width,
        p.outstanding,
        p.hold_bytes,
        if p.icd_bytes > 0 {
            format!("_i{}", p.icd_bytes)
        } else {
            String::new()
        },
        if p.digests { "" } else { "_nd" }
    )
}

/// Byte `i` of a little-endian value held in `v`.
fn byte(v: Sig, i: u32) -> Expr {
    v.slice(8 * i + 7, 8 * i)
}

/// Bytes `lo..lo+n` of `v`, little-endian.
fn bytes(v: Sig, lo: u32, n: u32) -> Expr {
    v.slice(8 * (lo + n) - 1, 8 * lo)
}

/// `n` ones from bit 0 in a `lanes`-bit mask (n <= lanes), from a count signal.
fn ones_mask(count: Expr, lanes: u32) -> Expr {
    (lit(lanes + 1, 1).shl_by(count) - 1u64).slice(lanes - 1, 0)
}

/// A connection, named by [`module_name`].
#[track_caller]
pub fn conn(p: &NvmeTcpParams, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let name = module_name(p);
    if ![64, 128, 256].contains(&p.data_width)
        || !(1..=64).contains(&p.outstanding)
        || !p.hold_bytes.is_power_of_two()
        || p.hold_bytes < p.data_width / 4
        || p.icd_bytes > 65536
        || !p.icd_bytes.is_multiple_of(16)
    {
        return Err(Errors(vec![Error {
            kind: ErrorKind::Invalid,
            module: name.clone(),
            signal: None,
            loc: Location::caller(),
            message: format!(
                "{name}: data width {} (use 64, 128 or 256), {} outstanding commands (use 1 to 64), hold buffer {} bytes (a power of two, two beats or more) or in-capsule data {} bytes (0 to 65536, a multiple of 16)",
                p.data_width, p.outstanding, p.hold_bytes, p.icd_bytes
            ),
        }]));
    }
    let dw = p.data_width;
    let lanes = dw / 8;
    let cw = clog2(u64::from(lanes) + 1);
    let d = p.outstanding;
    let crc_mod = crc(&CRC32C, dw, reset)?;
    let sw = clog2(u64::from(d)).max(1);
    let hold_beats = p.hold_bytes / lanes;
    let data_fifo = fifo(dw + lanes + 1, hold_beats, true, reset)?;
    let vcmd_fifo = fifo(sw + 64, 4, true, reset)?;
    let vdata_fifo = fifo(1, 8, true, reset)?;
    let r2t_fifo = fifo(sw + 16 + 64, d, true, reset)?;

    let mut m = ModuleBuilder::with_reset(&name, reset);
    m.doc("NVMe/TCP, host side of one connection: ICReq/ICResp, CapsuleCmd out, CapsuleResp in,");
    m.doc("header digests (CRC-32C), fatal errors answered with one H2CTermReq. Byte streams are");
    m.doc(&format!(
        "packed from lane 0, {lanes} bytes per beat, any beat may be short. Up to {d} commands in flight."
    ));
    m.doc("See hdl-gen/src/nvme_tcp/mod.rs for the interface and the order of the checks.");
    m.clock();
    m.reset();
    m.group("configuration");
    let dgst_in = m.input("dgst_i", 2);
    m.comment(dgst_in, "digests to ask for: bit 0 header, bit 1 data");
    m.group("commands in, completions out");
    let cmd = m.stream_in("io_cmd", &StreamDef::new().field("sqe", 512));
    let cpl = m.stream_out(
        "io_cpl",
        &StreamDef::new()
            .field("cid", 16)
            .field("status", 15)
            .field("dw0", 32),
    );
    m.group("byte streams to and from the target");
    let tx = m.stream_out(
        "tx",
        &StreamDef::new().field("data", dw).field("keep", lanes),
    );
    let rx = m.stream_in(
        "rx",
        &StreamDef::new().field("data", dw).field("keep", lanes),
    );
    m.group("host memory: C2HData payload written, H2CData payload read (DMA engine; tag = slot)");
    let dma_cmd = m.stream_out(
        "dma_cmd",
        &StreamDef::new()
            .field("tag", sw)
            .field("write", 1)
            .field("sgl", 1)
            .field("dptr", 128)
            .field("len", 32)
            .field("off", 32)
            .field("dlen", 32),
    );
    m.comment(
        dma_cmd.valid,
        "move dlen bytes at byte off of the command's data (len bytes at dptr); write 1: to host memory",
    );
    let dma_data = m.stream_out(
        "dma_data",
        &StreamDef::new()
            .field("data", dw)
            .field("keep", lanes)
            .field("last", 1),
    );
    let dma_rdata = m.stream_in(
        "dma_rdata",
        &StreamDef::new()
            .field("data", dw)
            .field("keep", lanes)
            .field("last", 1),
    );
    m.comment(
        dma_rdata.valid,
        "H2CData payload read from host memory (write 0 commands), in command order",
    );
    let dma_done = m.stream_in(
        "dma_done",
        &StreamDef::new().field("tag", sw).field("status", 11),
    );
    m.group("state");
    let connected_o = m.output("connected_o", 1);
    let dead_o = m.output("dead_o", 1);
    let space_o = m.output("space_o", 1);
    let lost_in = m.input("lost_i", 1);
    m.comment(
        lost_in,
        "the TCP connection underneath failed: end the connection (latched until reset)",
    );
    m.comment(
        space_o,
        "a command would be taken now (or refused with 22h after the end)",
    );
    m.group("events, for the engine's counters");
    let ev_tx_pdu = m.output("ev_tx_pdu_o", 4);
    m.comment(
        ev_tx_pdu,
        "a PDU starts on tx: bit 0 ICReq, 1 CapsuleCmd, 2 H2CTermReq, 3 H2CData",
    );
    let ev_tx_bytes = m.output("ev_tx_bytes_o", cw);
    m.comment(ev_tx_bytes, "bytes sent on tx this cycle");
    let ev_rx_pdu = m.output("ev_rx_pdu_o", 5);
    m.comment(
        ev_rx_pdu,
        "a PDU accepted: bit 0 ICResp, 1 CapsuleResp, 2 C2HTermReq, 3 C2HData, 4 R2T",
    );
    let ev_rx_bytes = m.output("ev_rx_bytes_o", cw);
    m.comment(
        ev_rx_bytes,
        "bytes taken from rx this cycle (dropped ones too)",
    );
    let ev_hdgst_err = m.output("ev_hdgst_err_o", 1);
    m.comment(ev_hdgst_err, "a header digest error was found");
    let ev_ddgst_err = m.output("ev_ddgst_err_o", 1);
    m.comment(ev_ddgst_err, "a data digest error was found");

    let asked = m.net(
        "dgst_asked",
        if p.digests { dgst_in.ex() } else { lit(2, 0) },
    );
    if !p.digests {
        m.unused("dgst_unused", dgst_in);
    }

    // ------------------------------------------------------------ connection state
    let connected = m.reg("connected", 1, 0);
    let dead = m.reg("dead", 1, 0);
    let hd = m.reg("hd", 1, 0);
    m.comment(hd.q, "header digests negotiated");
    let dd = m.reg("dd", 1, 0);
    m.comment(dd.q, "data digests negotiated");
    let ic_pend = m.reg("ic_pend", 1, 1);
    m.comment(ic_pend.q, "the ICReq is still to be sent");
    let term_pend = m.reg("term_pend", 1, 0);
    m.comment(term_pend.q, "an H2CTermReq is to be sent");
    let fes = m.reg("term_fes", 16, 0);
    let fei = m.reg("term_fei", 32, 0);
    let term_hdr = m.reg("term_hdr", 64, 0);
    m.comment(
        term_hdr.q,
        "the offending PDU's common header, the TermReq's data",
    );
    m.assign(connected_o, connected.q);
    m.assign(dead_o, dead.q);
    let lost = m.reg("lost", 1, 0);
    m.assign(lost.d, lost.q | lost_in);
    let lost_any = m.net("lost_now", lost.q | lost_in);
    m.comment(
        lost_any,
        "the TCP connection is gone: end in a header, feed zeros to a payload's end",
    );

    // ------------------------------------------------------------ command slots
    let slot_valid = m.reg("slot_valid", d, 0);
    let slot_cid: Vec<Reg> = (0..d)
        .map(|i| m.reg(&format!("slot{i}_cid"), 16, 0))
        .collect();
    let slot_read = m.reg("slot_read", d, 0);
    m.comment(
        slot_read.q,
        "the slot's command is a Read (C2HData allowed)",
    );
    let slot_write = m.reg("slot_write", d, 0);
    m.comment(slot_write.q, "the slot's command is a Write (R2T allowed)");
    let slot_r2t = m.reg("slot_r2t", d, 0);
    m.comment(
        slot_r2t.q,
        "an R2T of the slot's command is accepted and not yet answered in full (MAXR2T 0: one)",
    );
    let slot_len: Vec<Reg> = (0..d)
        .map(|i| m.reg(&format!("slot{i}_len"), 32, 0))
        .collect();
    let slot_sgl = m.reg("slot_sgl", d, 0);
    let slot_dptr: Vec<Reg> = (0..d)
        .map(|i| m.reg(&format!("slot{i}_dptr"), 128, 0))
        .collect();
    let slot_resp = m.reg("slot_resp", d, 0);
    m.comment(
        slot_resp.q,
        "the command's answer arrived (CapsuleResp, or SUCCESS): complete once its data is written",
    );
    let slot_status: Vec<Reg> = (0..d)
        .map(|i| m.reg(&format!("slot{i}_status"), 15, 0))
        .collect();
    let slot_dw0: Vec<Reg> = (0..d)
        .map(|i| m.reg(&format!("slot{i}_dw0"), 32, 0))
        .collect();
    let slot_dgerr = m.reg("slot_dgerr", d, 0);
    m.comment(
        slot_dgerr.q,
        "a C2HData of the command failed its data digest",
    );
    let slot_dmaerr: Vec<Reg> = (0..d)
        .map(|i| m.reg(&format!("slot{i}_dmaerr"), 11, 0))
        .collect();
    let slot_pend: Vec<Reg> = (0..d)
        .map(|i| m.reg(&format!("slot{i}_pend"), 6, 0))
        .collect();
    m.comment(
        slot_pend[0].q,
        "host memory writes issued and not yet done (a verdict waits while 63 are)",
    );
    let free = m.net("slot_free", !slot_valid.q);
    let free_any = m.net("slot_free_any", free.any());
    // Lowest free slot and lowest busy slot, priority encoded.
    let pick_lowest = |m: &mut ModuleBuilder, name: &str, v: Sig| -> Sig {
        let mut e: Expr = lit(sw, 0);
        for i in (0..d).rev() {
            e = mux(v.bit(i), lit(sw, u128::from(i)), e);
        }
        m.net(name, e)
    };
    let free_idx = pick_lowest(&mut m, "slot_free_idx", free);

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
    let u_dfifo = m.instance("u_hold_fifo", &data_fifo);
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

    // One CRC-32C for the header (header digest) and then the payload (data digest).
    let u_rcrc = m.instance("u_rx_crc", &crc_mod);
    m.bind(u_rcrc, "start_i", first | (in_data & dfirst.q));
    m.bind(u_rcrc, "valid_i", got & (in_ch | in_psh | in_data));
    m.bind(u_rcrc, "data_i", rshift);
    m.bind(u_rcrc, "keep_i", tkeep);
    let rcrc = m.bind_out(u_rcrc, "crc_o");

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

    // Common header fields (valid in RX_CHK and later).
    let h_type = m.net("h_type", byte(hdr.q, 0));
    let h_flags = m.net("h_flags", byte(hdr.q, 1));
    let h_hlen = m.net("h_hlen", byte(hdr.q, 2));
    let h_pdo = m.net("h_pdo", byte(hdr.q, 3));
    let h_plen = m.net("h_plen", bytes(hdr.q, 4, 4));
    let t_icresp = m.net("t_icresp", h_type.eq(0x01u64));
    let t_term = m.net("t_term", h_type.eq(0x03u64));
    let t_resp = m.net("t_resp", h_type.eq(0x05u64));
    let t_data = m.net("t_data", h_type.eq(0x07u64));
    let t_r2t = m.net("t_r2t", h_type.eq(0x09u64));
    let hd_flag = m.net("hd_flag", hd.q.zext(8));
    let dg_flags = m.net("dg_flags", cat([zeros(6), dd.q.ex(), hd.q.ex()]));
    let hd4 = m.net("hd_bytes", cat([zeros(29), hd.q.ex(), zeros(2)]));
    let dd4 = m.net("dd_bytes", cat([zeros(29), dd.q.ex(), zeros(2)]));
    let resp_plen = m.net("resp_plen", lit(32, 24) + hd4);
    let data_pdo = m.net("data_pdo", lit(8, 24) + hd4.slice(7, 0));
    m.comment(
        data_pdo,
        "the C2HData's PDO: HPDA is 0, so the data follows the header digest",
    );
    // (FES, FEI) of the first failing check of the common header, or none.
    let chk_fail = m.wire("chk_fail", 1);
    let chk_fes = m.wire("chk_fes", 16);
    let chk_fei = m.wire("chk_fei", 32);
    let want_hlen = m.net("chk_hlen", mux(t_icresp, lit(8, 128), lit(8, 24)));
    let flags_bad = m.net(
        "chk_flags_bad",
        mux(
            t_data,
            (h_flags & 0xf3u64).ne(dg_flags) | (h_flags.bit(3) & !h_flags.bit(2)),
            h_flags.ne(mux(t_resp | t_r2t, hd_flag, lit(8, 0))),
        ),
    );
    m.comment(
        flags_bad,
        "digest flags as negotiated; a C2HData may add LAST_PDU, and SUCCESS only with LAST_PDU",
    );
    let pdo_bad = m.net("chk_pdo_bad", h_pdo.ne(mux(t_data, data_pdo, lit(8, 0))));
    let plen_bad = m.net(
        "chk_plen_bad",
        (t_icresp & h_plen.ne(128u64))
            | ((t_resp | t_r2t) & h_plen.ne(resp_plen))
            | (t_term & (h_plen.lt(24u64) | h_plen.gt(152u64)))
            | (t_data & h_plen.le(data_pdo.zext(32) + dd4)),
    );
    m.comb(|c| {
        c.set(chk_fail, 1u64);
        c.set(chk_fes, 0x01u64);
        c.set(chk_fei, 0u64);
        c.if_(!(t_icresp | t_term | t_resp | t_data | t_r2t), |_| {})
            .else_if(
                (t_icresp & connected.q) | ((t_resp | t_data | t_r2t) & !connected.q),
                |c| c.set(chk_fes, 0x02u64),
            )
            .else_if(h_hlen.ne(want_hlen), |c| c.set(chk_fei, 2u64))
            .else_if(flags_bad, |c| c.set(chk_fei, 1u64))
            .else_if(pdo_bad, |c| c.set(chk_fei, 3u64))
            .else_if(plen_bad, |c| c.set(chk_fei, 4u64))
            .else_(|c| c.set(chk_fail, 0u64));
    });

    // ICResp fields.
    let ic_pfv = m.net("ic_pfv", bytes(hdr.q, 8, 2));
    let ic_cpda = m.net("ic_cpda", byte(hdr.q, 10));
    let ic_dgst = m.net("ic_dgst", byte(hdr.q, 11));
    let ic_maxh2c = m.net("ic_maxh2cdata", bytes(hdr.q, 12, 4));
    m.unused("ic_dgst_rsvd", ic_dgst.slice(7, 2));
    let ic_bad_dgst = m.net("ic_bad_dgst", (ic_dgst.slice(1, 0) & !asked).ne(0u64));
    let ic_cap_pdo = m.wire("ic_capsule_pdo", 8);
    m.comment(
        ic_cap_pdo,
        "CapsuleCmd PDO with in-capsule data: header (and digest) rounded up to (CPDA + 1) * 4",
    );
    let ic_pdo = m.wire("ic_h2c_pdo", 8);
    m.comment(
        ic_pdo,
        "H2CData PDO: header (and header digest) rounded up to (CPDA + 1) * 4 bytes",
    );
    m.comb(|c| {
        c.set(ic_pdo, 24u64);
        c.set(ic_cap_pdo, 72u64);
        c.case(cat([ic_dgst.bit(0), ic_cpda.slice(4, 0)]), |k| {
            for hdv in 0..2u32 {
                for cpda in 0..32u32 {
                    let a = (cpda + 1) * 4;
                    let pdo = (24 + 4 * hdv).div_ceil(a) * a;
                    let cap = (72 + 4 * hdv).div_ceil(a) * a;
                    k.arm(lit(6, u128::from(hdv << 5 | cpda)), |c| {
                        c.set(ic_pdo, u64::from(pdo));
                        c.set(ic_cap_pdo, u64::from(cap));
                    });
                }
            }
            k.default(|c| {
                c.set(ic_pdo, 24u64);
                c.set(ic_cap_pdo, 72u64);
            });
        });
    });
    // CapsuleResp fields: CQE DW0, CID, status.
    let r_dw0 = m.net("resp_dw0", bytes(hdr.q, 8, 4));
    let r_cid = m.net("resp_cid", bytes(hdr.q, 20, 2));
    let r_status = m.net("resp_status", hdr.q.slice(191, 177));
    m.unused("resp_rsvd", cat([hdr.q.bit(176), hdr.q.slice(159, 96)]));
    // C2HData fields: CCCID, TTAG (ignored for C2HData), DATAO, DATAL.
    let c_cid = m.net("c2h_cccid", bytes(hdr.q, 8, 2));
    let c_datao = m.net("c2h_datao", bytes(hdr.q, 12, 4));
    let c_datal = m.net("c2h_datal", bytes(hdr.q, 16, 4));
    let r_ttag = m.net("r2t_ttag", bytes(hdr.q, 10, 2));
    m.comment(
        r_ttag,
        "TTAG: echoed in the R2T's H2CData (ignored for C2HData)",
    );
    let open = m.net("slot_open", slot_valid.q & !slot_resp.q);
    m.comment(open, "slots whose command still waits for its answer");
    let hit = m.net(
        "resp_hit",
        cat((0..d)
            .rev()
            .map(|i| open.bit(i) & slot_cid[i as usize].q.eq(r_cid))),
    );
    let hit_idx = pick_lowest(&mut m, "resp_hit_idx", hit);
    let dhit = m.net(
        "c2h_hit",
        cat((0..d)
            .rev()
            .map(|i| open.bit(i) & slot_read.q.bit(i) & slot_cid[i as usize].q.eq(c_cid))),
    );
    let dhit_idx = pick_lowest(&mut m, "c2h_hit_idx", dhit);
    let slot_len_of = |idx: Sig| -> Expr {
        let mut e: Expr = slot_len[0].q.ex();
        for i in 1..d {
            e = mux(idx.eq(u64::from(i)), slot_len[i as usize].q, e);
        }
        e
    };
    let dlen_of_hit = m.net("c2h_cmd_len", slot_len_of(dhit_idx));
    let c_end = m.net("c2h_end", c_datao.zext(33) + c_datal.zext(33));
    // R2T: CCCID, TTAG, R2TO and R2TL sit where C2HData has CCCID, TTAG, DATAO and DATAL.
    let whit = m.net(
        "r2t_hit",
        cat((0..d)
            .rev()
            .map(|i| open.bit(i) & slot_write.q.bit(i) & slot_cid[i as usize].q.eq(c_cid))),
    );
    let whit_idx = pick_lowest(&mut m, "r2t_hit_idx", whit);
    let wlen_of_hit = m.net("r2t_cmd_len", slot_len_of(whit_idx));
    let r_range_bad = m.net(
        "r2t_out_of_range",
        c_datal.eq(0u64) | c_end.gt(wlen_of_hit.zext(33)),
    );
    m.comment(
        r_range_bad,
        "R2TL is 0, or R2TO + R2TL runs past the command's data",
    );
    let r_busy = m.net("r2t_busy", slot_r2t.q.shr_by(whit_idx).bit(0));
    m.comment(
        r_busy,
        "the command's previous R2T is not answered yet (MAXR2T 0): PDU sequence error",
    );
    let c_range_bad = m.net("c2h_out_of_range", c_end.gt(dlen_of_hit.zext(33)));
    let c_datal_bad = m.net(
        "c2h_datal_bad",
        c_datal.eq(0u64) | c_datal.ne(h_plen - data_pdo.zext(32) - dd4),
    );
    m.comment(
        c_datal_bad,
        "DATAL is 0, or is not what PLEN leaves for the payload",
    );
    let c_too_big = m.net("c2h_too_big", dd.q & c_datal.gt(u64::from(p.hold_bytes)));
    m.comment(
        c_too_big,
        "with data digests the payload is held whole: at most the hold buffer",
    );
    let in_act = m.net("rx_in_act", rst.q.eq(rx_st.item("RX_ACT")));
    let dgst_bad = m.net(
        "rx_dgst_bad",
        (t_resp | t_data | t_r2t) & hd.q & dg.q.ne(rcrc),
    );

    // Verdicts: a C2HData that passed its checks is written to host memory (vcmd: the DMA
    // command) and its held payload forwarded (vdata 1) or dropped (vdata 0). Without data
    // digests the verdict is known after the header (cut-through), with them after the digest.
    let u_vcmd = m.instance("u_vcmd_fifo", &vcmd_fifo);
    let u_vdata = m.instance("u_vdata_fifo", &vdata_fifo);
    let vcmd_ready = m.bind_out(u_vcmd, "s_ready_o");
    let vdata_ready = m.bind_out(u_vdata, "s_ready_o");
    let pend_full = m.net(
        "slot_pend_full",
        cat((0..d).rev().map(|i| slot_pend[i as usize].q.eq(63u64))),
    );
    let in_act_early = rst.q.eq(rx_st.item("RX_ACT"));
    let v_slot_full = m.net(
        "verdict_slot_full",
        pend_full
            .shr_by(mux(in_act_early, dhit_idx, dslot.q))
            .bit(0),
    );
    let v_space = m.net("verdict_space", vcmd_ready & vdata_ready & !v_slot_full);
    let in_dver = m.net("rx_in_dver", rst.q.eq(rx_st.item("RX_DVER")));
    let ddgst_bad = m.net("rx_ddgst_bad", dg.q.ne(rcrc));
    let datao_r = m.reg("rx_datao", 32, 0);
    let datal_r = m.reg("rx_datal", 32, 0);
    let act_data_ok = m.wire("act_data_ok", 1);
    m.comment(act_data_ok, "a C2HData header passed every check");
    let v_push_hdr = m.net("verdict_at_header", in_act & act_data_ok & !dd.q & v_space);
    let v_push_dig = m.net("verdict_at_digest", in_dver & dd.q & v_space);
    let v_push = m.net("verdict_push", v_push_hdr | v_push_dig);
    let v_good = m.net("verdict_good", v_push_hdr | (v_push_dig & !ddgst_bad));
    m.bind(u_vdata, "s_valid_i", v_push);
    m.bind(u_vdata, "s_data_i", v_good);
    m.bind(u_vcmd, "s_valid_i", v_good);
    m.bind(
        u_vcmd,
        "s_data_i",
        mux(
            v_push_hdr,
            cat([c_datal.ex(), c_datao.ex(), dhit_idx.ex()]),
            cat([datal_r.q.ex(), datao_r.q.ex(), dslot.q.ex()]),
        ),
    );
    let v_slot = m.net("verdict_slot", mux(v_push_hdr, dhit_idx, dslot.q));
    let ddgst_err_now = m.net("ddgst_error", v_push_dig & ddgst_bad);
    m.assign(ev_ddgst_err, ddgst_err_now);

    // Accepted R2Ts, one per Write at most (so the FIFO of `outstanding` entries never
    // overflows), answered in arrival order: {slot, TTAG, R2TL, R2TO}.
    let u_r2t = m.instance("u_r2t_fifo", &r2t_fifo);
    let rf_valid = m.bind_out(u_r2t, "m_valid_o");
    let rf_data = m.bind_out(u_r2t, "m_data_o");
    let rf_count = m.bind_out(u_r2t, "count_o");
    let rf_sready = m.bind_out(u_r2t, "s_ready_o");
    m.unused("r2t_fifo_level", cat([rf_count.ex(), rf_sready.ex()]));
    let rf_r2to = m.net("r2t_head_r2to", rf_data.slice(31, 0));
    let rf_r2tl = m.net("r2t_head_r2tl", rf_data.slice(63, 32));
    let rf_ttag = m.net("r2t_head_ttag", rf_data.slice(79, 64));
    let rf_slot = m.net("r2t_head_slot", rf_data.slice(sw + 79, 80));
    let maxh2c = m.reg("maxh2cdata", 32, 4096);
    m.comment(
        maxh2c.q,
        "MAXH2CDATA from the ICResp: the largest H2CData payload",
    );
    let h2c_pdo = m.reg("h2c_pdo", 8, 24);
    m.comment(
        h2c_pdo.q,
        "PDO of the H2CData PDUs: header and digest padded to the ICResp's CPDA",
    );
    let cap_pdo = m.reg("capsule_pdo", 8, 72);
    m.comment(
        cap_pdo.q,
        "PDO of a CapsuleCmd with in-capsule data (CPDA padding)",
    );
    let ticd = m.reg("tx_icd", 1, 0);
    m.comment(
        ticd.q,
        "the data PDU on tx is a CapsuleCmd with in-capsule data (not an H2CData)",
    );
    let icd_slot = m.reg("tx_icd_slot", sw, 0);
    m.comment(icd_slot.q, "the slot of that CapsuleCmd's command");
    let r2t_sent = m.reg("r2t_sent", 32, 0);
    m.comment(r2t_sent.q, "bytes of the head R2T already sent as H2CData");
    let h2c_n = m.reg("h2c_datal", 32, 0);
    m.comment(h2c_n.q, "DATAL of the H2CData on tx");
    let h2c_rem = m.net("h2c_rem", rf_r2tl - r2t_sent.q);
    let h2c_fits = m.net("h2c_fits", h2c_rem.le(maxh2c.q));
    m.comment(h2c_fits, "the rest of the R2T fits one H2CData: LAST_PDU");
    let h2c_len = m.net("h2c_next_datal", mux(h2c_fits, h2c_rem, maxh2c.q));
    let h2c_datao = m.net("h2c_datao", rf_r2to + r2t_sent.q);
    let h2c_req = m.wire("h2c_dma_req", 1);
    m.comment(
        h2c_req,
        "the H2CData on tx asks for its payload from host memory",
    );

    // DMA commands: the vcmd head (a C2HData write) with its slot's pointer first, else the
    // H2CData's read.
    let vc_head = m.bind_out(u_vcmd, "m_valid_o");
    let rd_lock = m.reg("dma_cmd_rd_lock", 1, 0);
    m.comment(
        rd_lock.q,
        "an H2CData read is on dma_cmd and not yet taken: it stays (a stream's payload is stable)",
    );
    let vc_valid = m.net("dma_cmd_is_write", vc_head & !rd_lock.q);
    m.comment(
        vc_valid,
        "dma_cmd carries the C2HData write at the vcmd head",
    );
    m.assign(rd_lock.d, h2c_req & !vc_valid & !dma_cmd.ready);
    let vc_data = m.bind_out(u_vcmd, "m_data_o");
    let vc_count = m.bind_out(u_vcmd, "count_o");
    m.unused("vcmd_count", vc_count);
    let tx_slot = m.net("tx_data_slot", mux(ticd.q, icd_slot.q, rf_slot));
    m.comment(tx_slot, "the command whose data the data PDU on tx carries");
    let vc_slot = m.net(
        "dma_cmd_slot",
        mux(vc_valid, vc_data.slice(sw - 1, 0), tx_slot),
    );
    m.assign(dma_cmd.valid, vc_head | h2c_req);
    m.assign(dma_cmd.field("tag"), vc_slot);
    m.assign(dma_cmd.field("write"), vc_valid);
    m.assign(dma_cmd.field("sgl"), slot_sgl.q.shr_by(vc_slot).bit(0));
    let dptr_of = {
        let mut e: Expr = slot_dptr[0].q.ex();
        for i in 1..d {
            e = mux(vc_slot.eq(u64::from(i)), slot_dptr[i as usize].q, e);
        }
        e
    };
    m.assign(dma_cmd.field("dptr"), dptr_of);
    let len_of = {
        let mut e: Expr = slot_len[0].q.ex();
        for i in 1..d {
            e = mux(vc_slot.eq(u64::from(i)), slot_len[i as usize].q, e);
        }
        e
    };
    m.assign(dma_cmd.field("len"), len_of);
    m.assign(
        dma_cmd.field("off"),
        mux(
            vc_valid,
            vc_data.slice(sw + 31, sw),
            mux(ticd.q, lit(32, 0), h2c_datao),
        ),
    );
    m.assign(
        dma_cmd.field("dlen"),
        mux(vc_valid, vc_data.slice(sw + 63, sw + 32), h2c_n.q),
    );
    let h2c_dma_go = m.net("h2c_dma_go", h2c_req & !vc_valid & dma_cmd.ready);
    m.bind(u_vcmd, "m_ready_i", dma_cmd.ready & vc_valid);

    // Held payload: forwarded to dma_data when its verdict is good, dropped otherwise.
    let vd_valid = m.bind_out(u_vdata, "m_valid_o");
    let vd_good = m.bind_out(u_vdata, "m_data_o");
    let vd_count = m.bind_out(u_vdata, "count_o");
    m.unused("vdata_count", vd_count);
    let df_valid = m.bind_out(u_dfifo, "m_valid_o");
    let df_data = m.bind_out(u_dfifo, "m_data_o");
    let df_count = m.bind_out(u_dfifo, "count_o");
    m.unused("hold_count", df_count);
    let df_last = m.net("hold_last", df_data.bit(dw + lanes));
    m.assign(dma_data.valid, df_valid & vd_valid & vd_good);
    m.assign(dma_data.field("data"), df_data.slice(dw - 1, 0));
    m.assign(dma_data.field("keep"), df_data.slice(dw + lanes - 1, dw));
    m.assign(dma_data.field("last"), df_last);
    let df_pop = m.net(
        "hold_pop",
        df_valid & vd_valid & (!vd_good | dma_data.ready),
    );
    m.bind(u_dfifo, "m_ready_i", df_pop);
    m.bind(u_vdata, "m_ready_i", df_pop & df_last);
    m.assign(dma_done.ready, lit(1, 1));
    let done_fire = m.net("dma_done_fire", dma_done.valid);

    // ------------------------------------------------------------ completions
    // A slot completes once answered (or once the connection ended) and its writes are done;
    // lowest slot first. After the end, commands that arrive are refused with 22h.
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
        slot_valid.q & idle_slot & (slot_resp.q | dead.q.repeat(d)),
    );
    let cpl_slot = pick_lowest(&mut m, "cpl_slot", ready_slot);
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
    let c_cid_sel = pick(&mut m, "cpl_slot_cid", &slot_cid);
    let c_st = pick(&mut m, "cpl_slot_status", &slot_status);
    let c_dw0 = pick(&mut m, "cpl_slot_dw0", &slot_dw0);
    let c_dmaerr = pick(&mut m, "cpl_slot_dmaerr", &slot_dmaerr);
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
    let u_tcrc = m.instance("u_tx_crc", &crc_mod);
    let tx_fire = m.net("tx_fire", tx.valid & tx.ready);
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
    m.assign(
        tx.valid,
        t_hdr | t_dig | t_pad | (t_dat & dma_rdata.valid) | t_ddg,
    );
    let tx_data_w = m.wire("tx_data_sel", dw);
    let tx_keep_w = m.wire("tx_keep_sel", lanes);
    m.comb(|c| {
        c.set(tx_data_w, tcrc.zext(dw));
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
        .else_if(t_ddg, |c| c.set(tx_data_w, ddg_word.zext(dw)));
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
                        c.set(hd.d, ic_dgst.bit(0));
                        c.set(dd.d, ic_dgst.bit(1));
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
            let inc = v_good & v_slot.eq(iu);
            let dec = done_fire & done_tag.eq(iu) & slot_read.q.bit(i as u32);
            c.set(slot_pend[i].d, slot_pend[i].q + inc.zext(6) - dec.zext(6));
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
    m.finish()
}
