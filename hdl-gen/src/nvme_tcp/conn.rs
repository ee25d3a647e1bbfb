//! One NVMe/TCP connection, host side: connection start, command capsules out, response
//! capsules in, header digests, fatal errors. The interface is documented in `mod.rs`.

use super::NvmeTcpParams;
use crate::blocks::crc::{crc, CRC32C};
use hdl_builder::prelude::*;
use hdl_builder::{Error, ErrorKind, Errors};
use std::panic::Location;
use std::rc::Rc;

/// The module name: `nvme_tcp_conn_w<bits>_d<outstanding>` (`_nd` without digests).
pub fn module_name(p: &NvmeTcpParams) -> String {
    format!(
        "nvme_tcp_conn_w{}_d{}{}",
        p.data_width,
        p.outstanding,
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
    if ![64, 128, 256].contains(&p.data_width) || !(1..=64).contains(&p.outstanding) {
        return Err(Errors(vec![Error {
            kind: ErrorKind::Invalid,
            module: name.clone(),
            signal: None,
            loc: Location::caller(),
            message: format!(
                "{name}: data width {} (use 64, 128 or 256) or {} outstanding commands (use 1 to 64)",
                p.data_width, p.outstanding
            ),
        }]));
    }
    let dw = p.data_width;
    let lanes = dw / 8;
    let cw = clog2(u64::from(lanes) + 1);
    let d = p.outstanding;
    let crc_mod = crc(&CRC32C, dw, reset)?;

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
    m.group("state");
    let connected_o = m.output("connected_o", 1);
    let dead_o = m.output("dead_o", 1);
    let space_o = m.output("space_o", 1);
    m.comment(
        space_o,
        "a command would be taken now (or refused with 22h after the end)",
    );
    m.group("events, for the engine's counters");
    let ev_tx_pdu = m.output("ev_tx_pdu_o", 3);
    m.comment(
        ev_tx_pdu,
        "a PDU starts on tx: bit 0 ICReq, 1 CapsuleCmd, 2 H2CTermReq",
    );
    let ev_tx_bytes = m.output("ev_tx_bytes_o", cw);
    m.comment(ev_tx_bytes, "bytes sent on tx this cycle");
    let ev_rx_pdu = m.output("ev_rx_pdu_o", 3);
    m.comment(
        ev_rx_pdu,
        "a PDU accepted: bit 0 ICResp, 1 CapsuleResp, 2 C2HTermReq",
    );
    let ev_rx_bytes = m.output("ev_rx_bytes_o", cw);
    m.comment(
        ev_rx_bytes,
        "bytes taken from rx this cycle (dropped ones too)",
    );
    let ev_hdgst_err = m.output("ev_hdgst_err_o", 1);
    m.comment(ev_hdgst_err, "a header digest error was found");

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
    m.comment(dd.q, "data digests negotiated (no data PDUs yet)");
    m.unused("dd_unused", dd.q);
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

    // ------------------------------------------------------------ command slots
    let slot_valid = m.reg("slot_valid", d, 0);
    let slot_cid: Vec<Reg> = (0..d)
        .map(|i| m.reg(&format!("slot{i}_cid"), 16, 0))
        .collect();
    let free = m.net("slot_free", !slot_valid.q);
    let free_any = m.net("slot_free_any", free.any());
    let sw = clog2(u64::from(d)).max(1);
    // Lowest free slot and lowest busy slot, priority encoded.
    let pick_lowest = |m: &mut ModuleBuilder, name: &str, v: Sig| -> Sig {
        let mut e: Expr = lit(sw, 0);
        for i in (0..d).rev() {
            e = mux(v.bit(i), lit(sw, u128::from(i)), e);
        }
        m.net(name, e)
    };
    let free_idx = pick_lowest(&mut m, "slot_free_idx", free);
    let busy_idx = pick_lowest(&mut m, "slot_busy_idx", slot_valid.q);

    // ------------------------------------------------------------ receive
    let rx_st = m.enum_type(
        "rx_state",
        &["RX_CH", "RX_CHK", "RX_PSH", "RX_HDG", "RX_ACT", "RX_DEAD"],
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

    let rdata = rx.field("data");
    let rkeep = rx.field("keep");
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
    let in_dead = m.net("rx_in_dead", rst.q.eq(rx_st.item("RX_DEAD")));
    let need = m.net(
        "rx_need",
        mux(
            in_ch,
            lit(8, 8) - hcnt.q,
            mux(
                in_psh,
                hlen.q - hcnt.q,
                mux(in_hdg, lit(8, 4) - dcnt.q.zext(8), lit(8, 0)),
            ),
        ),
    );
    let take = m.net(
        "rx_take",
        mux(avail.zext(8).le(need), avail, need.slice(cw - 1, 0)),
    );
    m.comment(take, "bytes taken from the beat this cycle");
    let consuming = m.net("rx_consuming", rx.valid & (in_ch | in_psh | in_hdg));
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

    let u_rcrc = m.instance("u_rx_crc", &crc_mod);
    m.bind(u_rcrc, "start_i", first);
    m.bind(u_rcrc, "valid_i", got & (in_ch | in_psh));
    m.bind(u_rcrc, "data_i", rshift);
    m.bind(u_rcrc, "keep_i", tkeep);
    let rcrc = m.bind_out(u_rcrc, "crc_o");

    // Common header fields (valid in RX_CHK and later).
    let h_type = m.net("h_type", byte(hdr.q, 0));
    let h_flags = m.net("h_flags", byte(hdr.q, 1));
    let h_hlen = m.net("h_hlen", byte(hdr.q, 2));
    let h_pdo = m.net("h_pdo", byte(hdr.q, 3));
    let h_plen = m.net("h_plen", bytes(hdr.q, 4, 4));
    let t_icresp = m.net("t_icresp", h_type.eq(0x01u64));
    let t_term = m.net("t_term", h_type.eq(0x03u64));
    let t_resp = m.net("t_resp", h_type.eq(0x05u64));
    let hd_flag = m.net("hd_flag", hd.q.zext(8));
    let resp_plen = m.net(
        "resp_plen",
        lit(32, 24) + cat([zeros(29), hd.q.ex(), zeros(2)]),
    );
    // (FES, FEI) of the first failing check, or none.
    let chk_fail = m.wire("chk_fail", 1);
    let chk_fes = m.wire("chk_fes", 16);
    let chk_fei = m.wire("chk_fei", 32);
    m.comb(|c| {
        c.set(chk_fail, 1u64);
        c.set(chk_fes, 0x01u64);
        c.set(chk_fei, 0u64);
        c.if_(!(t_icresp | t_term | t_resp), |_| {})
            .else_if((t_icresp & connected.q) | (t_resp & !connected.q), |c| {
                c.set(chk_fes, 0x02u64);
            })
            .else_if(h_hlen.ne(mux(t_icresp, lit(8, 128), lit(8, 24))), |c| {
                c.set(chk_fei, 2u64);
            })
            .else_if(h_flags.ne(mux(t_resp, hd_flag, lit(8, 0))), |c| {
                c.set(chk_fei, 1u64);
            })
            .else_if(h_pdo.ne(0u64), |c| c.set(chk_fei, 3u64))
            .else_if(
                (t_icresp & h_plen.ne(128u64))
                    | (t_resp & h_plen.ne(resp_plen))
                    | (t_term & (h_plen.lt(24u64) | h_plen.gt(152u64))),
                |c| c.set(chk_fei, 4u64),
            )
            .else_(|c| c.set(chk_fail, 0u64));
    });

    // ICResp fields.
    let ic_pfv = m.net("ic_pfv", bytes(hdr.q, 8, 2));
    let ic_cpda = m.net("ic_cpda", byte(hdr.q, 10));
    let ic_dgst = m.net("ic_dgst", byte(hdr.q, 11));
    let ic_maxh2c = m.net("ic_maxh2cdata", bytes(hdr.q, 12, 4));
    m.unused("ic_dgst_rsvd", ic_dgst.slice(7, 2));
    let ic_bad_dgst = m.net("ic_bad_dgst", (ic_dgst.slice(1, 0) & !asked).ne(0u64));
    // CapsuleResp fields: CQE DW0, CID, status.
    let r_dw0 = m.net("resp_dw0", bytes(hdr.q, 8, 4));
    let r_cid = m.net("resp_cid", bytes(hdr.q, 20, 2));
    let r_status = m.net("resp_status", hdr.q.slice(191, 177));
    m.unused("resp_rsvd", cat([hdr.q.bit(176), hdr.q.slice(159, 96)]));
    let hit = m.net(
        "resp_hit",
        cat((0..d)
            .rev()
            .map(|i| slot_valid.q.bit(i) & slot_cid[i as usize].q.eq(r_cid))),
    );
    let hit_idx = pick_lowest(&mut m, "resp_hit_idx", hit);
    let in_act = m.net("rx_in_act", rst.q.eq(rx_st.item("RX_ACT")));
    let dgst_bad = m.net("rx_dgst_bad", t_resp & hd.q & dg.q.ne(rcrc));
    let act_cpl = m.net("act_cpl", in_act & t_resp & !dgst_bad & hit.any());
    m.comment(
        act_cpl,
        "a CapsuleResp for an outstanding command: complete it",
    );

    // ------------------------------------------------------------ completions
    // Priority: a CapsuleResp, then (after the end) outstanding slots, then refused commands.
    let drain = m.net("drain", dead.q & slot_valid.q.any());
    let bounce = m.net("bounce", dead.q & !slot_valid.q.any() & cmd.valid);
    m.assign(cpl.valid, act_cpl | drain | bounce);
    let slot_cid_of = |idx: Sig| -> Expr {
        let mut e: Expr = slot_cid[0].q.ex();
        for i in 1..d {
            e = mux(idx.eq(u64::from(i)), slot_cid[i as usize].q, e);
        }
        e
    };
    let drain_cid = m.net("drain_cid", slot_cid_of(busy_idx));
    let sqe = cmd.field("sqe");
    m.unused(
        "sqe_dptr_psdt",
        cat([sqe.slice(319, 192), sqe.slice(15, 14)]),
    );
    let cmd_cid = m.net("cmd_cid", sqe.slice(31, 16));
    m.assign(
        cpl.field("cid"),
        mux(act_cpl, r_cid, mux(drain, drain_cid, cmd_cid)),
    );
    m.assign(cpl.field("status"), mux(act_cpl, r_status, lit(15, 0x22)));
    m.assign(cpl.field("dw0"), mux(act_cpl, r_dw0, lit(32, 0)));
    let cpl_fire = m.net("cpl_fire", cpl.valid & cpl.ready);

    // ------------------------------------------------------------ transmit
    let tx_st = m.enum_type("tx_state", &["TX_IDLE", "TX_HDR", "TX_DIG", "TX_DONE"]);
    let tst = m.reg_enum("tx_state", &tx_st, tx_st.item("TX_IDLE"));
    let tbuf = m.reg("tx_buf", 576, 0);
    m.comment(tbuf.q, "the PDU header being sent (beyond it: zeros)");
    let tlen = m.reg("tx_len", 8, 0);
    let tidx = m.reg("tx_idx", 8, 0);
    let tdg = m.reg("tx_dg", 1, 0);
    m.comment(tdg.q, "a header digest follows the header");
    let t_idle = m.net("tx_idle", tst.q.eq(tx_st.item("TX_IDLE")));
    let t_hdr = m.net("tx_in_hdr", tst.q.eq(tx_st.item("TX_HDR")));
    let t_dig = m.net("tx_in_dig", tst.q.eq(tx_st.item("TX_DIG")));
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
    let u_tcrc = m.instance("u_tx_crc", &crc_mod);
    let tx_fire = m.net("tx_fire", tx.valid & tx.ready);
    m.bind(u_tcrc, "start_i", t_hdr & tidx.q.eq(0));
    m.bind(u_tcrc, "valid_i", tx_fire & t_hdr);
    m.bind(u_tcrc, "data_i", window);
    m.bind(u_tcrc, "keep_i", hkeep);
    let tcrc = m.bind_out(u_tcrc, "crc_o");
    m.assign(tx.valid, t_hdr | t_dig);
    m.assign(tx.field("data"), mux(t_hdr, window, tcrc.zext(dw)));
    m.assign(tx.field("keep"), mux(t_hdr, hkeep, lit(lanes, 0xf)));

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
    let capsule = m.net(
        "capsule_hdr",
        cat([
            sqe.slice(511, 320), // CDW10-15
            lit(8, 0x5a),        // SGL identifier: transport data block
            zeros(24),
            dlen.ex(),          // SGL length
            zeros(64),          // SGL address
            sqe.slice(191, 16), // CID .. MPTR
            lit(2, 1),          // PSDT 01b
            sqe.slice(13, 0),   // FUSE, opcode
            lit(32, 72) + cat([zeros(29), hd.q.ex(), zeros(2)]),
            lit(8, 0),
            lit(8, 72),
            hd_flag.ex(),
            lit(8, 0x04), // CapsuleCmd
        ]),
    );
    let can_cmd = m.net(
        "can_send_cmd",
        t_idle & connected.q & !dead.q & !term_pend.q & !ic_pend.q & free_any,
    );
    let load_ic = m.net("load_icreq", t_idle & ic_pend.q);
    let load_term = m.net("load_termreq", t_idle & !ic_pend.q & term_pend.q);
    let load_cmd = m.net("load_cmd", can_cmd & cmd.valid);
    m.assign(space_o, can_cmd | dead.q);
    m.assign(
        ev_tx_pdu,
        cat([load_term.ex(), load_cmd.ex(), load_ic.ex()]),
    );
    m.assign(
        ev_tx_bytes,
        mux(
            tx_fire,
            (0..lanes).fold(lit(cw, 0), |acc, i| acc + tx.field("keep").bit(i).zext(cw)),
            lit(cw, 0),
        ),
    );
    m.assign(cmd.ready, load_cmd | (bounce & cpl.ready & !act_cpl));

    m.comb(|c| {
        c.set(tst.d, tst.q);
        c.set(tbuf.d, tbuf.q);
        c.set(tlen.d, tlen.q);
        c.set(tidx.d, tidx.q);
        c.set(tdg.d, tdg.q);
        c.set(ic_pend.d, ic_pend.q);
        c.if_(load_ic, |c| {
            c.set(tst.d, tx_st.item("TX_HDR"));
            c.set(tbuf.d, icreq);
            c.set(tlen.d, 128u64);
            c.set(tidx.d, 0u64);
            c.set(tdg.d, 0u64);
            c.set(ic_pend.d, 0u64);
        })
        .else_if(load_term, |c| {
            c.set(tst.d, tx_st.item("TX_HDR"));
            c.set(tbuf.d, term);
            c.set(tlen.d, 32u64);
            c.set(tidx.d, 0u64);
            c.set(tdg.d, 0u64);
        })
        .else_if(load_cmd, |c| {
            c.set(tst.d, tx_st.item("TX_HDR"));
            c.set(tbuf.d, capsule);
            c.set(tlen.d, 72u64);
            c.set(tidx.d, 0u64);
            c.set(tdg.d, hd.q);
        })
        .else_if(tx_fire & t_hdr, |c| {
            c.set(tidx.d, tidx.q + u64::from(lanes));
            c.if_(last_hdr, |c| {
                c.set(
                    tst.d,
                    mux(tdg.q, tx_st.item("TX_DIG"), tx_st.item("TX_IDLE")),
                );
            });
        })
        .else_if(tx_fire & t_dig, |c| c.set(tst.d, tx_st.item("TX_IDLE")));
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
    m.comb(|c| {
        c.set(fatal, 1u64);
        c.set(fatal_fes, 0x06u64);
        c.set(fatal_fei, 0u64);
        c.if_(in_chk & chk_fail, |c| {
            c.set(fatal_fes, chk_fes);
            c.set(fatal_fei, chk_fei);
        })
        .else_if(in_act & t_icresp & ic_pfv.ne(0u64), |c| {
            c.set(fatal_fei, 8u64)
        })
        .else_if(in_act & t_icresp & ic_cpda.gt(31u64), |c| {
            c.set(fatal_fei, 10u64)
        })
        .else_if(in_act & t_icresp & ic_bad_dgst, |c| c.set(fatal_fei, 11u64))
        .else_if(
            in_act & t_icresp & (ic_maxh2c.lt(4096u64) | ic_maxh2c.slice(1, 0).ne(0u64)),
            |c| c.set(fatal_fei, 12u64),
        )
        .else_if(in_act & dgst_bad, |c| c.set(fatal_fes, 0x03u64))
        .else_if(in_act & t_resp & !hit.any(), |c| {
            c.set(fatal_fes, 0x01u64);
            c.set(fatal_fei, 20u64);
        })
        .else_(|c| {
            c.set(fatal, 0u64);
            c.set(fatal_fes, 0u64);
        });
    });
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
        c.if_(rx.valid & rx.ready, |c| c.set(rx_pos.d, 0u64))
            .else_if(consuming, |c| c.set(rx_pos.d, rx_pos.q + take));
        c.if_(got & (in_ch | in_psh), |c| {
            c.set(hdr.d, hdr_new);
            c.set(hcnt.d, hcnt_next);
        });
        c.if_(got & in_hdg, |c| {
            c.set(dg.d, dg_new);
            c.set(dcnt.d, dcnt_next);
        });
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
                        mux(t_resp & hd.q, rx_st.item("RX_HDG"), rx_st.item("RX_ACT")),
                    );
                });
            });
            k.arm(rx_st.item("RX_HDG"), |c| {
                c.if_(got & dcnt_next.eq(4u64), |c| {
                    c.set(rst.d, rx_st.item("RX_ACT"))
                });
            });
            k.arm(rx_st.item("RX_ACT"), |c| {
                c.if_(t_term, |c| {
                    c.set(dead.d, 1u64);
                    c.set(rst.d, rx_st.item("RX_DEAD"));
                })
                .else_if(t_icresp, |c| {
                    c.set(connected.d, 1u64);
                    c.set(hd.d, ic_dgst.bit(0));
                    c.set(dd.d, ic_dgst.bit(1));
                    c.set(hcnt.d, 0u64);
                    c.set(rst.d, rx_st.item("RX_CH"));
                })
                .else_if(cpl.ready, |c| {
                    c.set(hcnt.d, 0u64);
                    c.set(rst.d, rx_st.item("RX_CH"));
                });
            });
            k.default(|_| {});
        });
        // A failed check overrides whatever the state machine did this cycle.
        c.if_(fatal, |c| {
            c.set(connected.d, connected.q);
            c.set(dead.d, 1u64);
            c.set(rst.d, rx_st.item("RX_DEAD"));
        });
    });
    m.assign(
        ev_rx_pdu,
        cat([
            (in_act & t_term).ex(),
            (cpl_fire & act_cpl).ex(),
            (in_act & t_icresp & !fatal).ex(),
        ]),
    );
    m.comb(|c| {
        c.set(term_pend.d, term_pend.q);
        c.set(fes.d, fes.q);
        c.set(fei.d, fei.q);
        c.set(term_hdr.d, term_hdr.q);
        c.if_(fatal, |c| {
            c.set(term_pend.d, 1u64);
            c.set(fes.d, fatal_fes);
            c.set(fei.d, fatal_fei);
            c.set(term_hdr.d, hdr.q.slice(63, 0));
        })
        .else_if(load_term, |c| c.set(term_pend.d, 0u64));
    });

    // Slots: allocated when a capsule is loaded, freed by its completion (both may happen in
    // one cycle, to different slots).
    let onehot = |idx: Sig| lit(d, 1).shl_by(idx);
    let alloc = m.net("slot_alloc", mux(load_cmd, onehot(free_idx), lit(d, 0)));
    let freed = m.net(
        "slot_freed",
        mux(
            cpl_fire & act_cpl,
            onehot(hit_idx),
            mux(cpl_fire & drain, onehot(busy_idx), lit(d, 0)),
        ),
    );
    m.comb(|c| {
        c.set(slot_valid.d, slot_valid.q);
        for (i, s) in slot_cid.iter().enumerate() {
            c.set(s.d, s.q);
            let i = i as u64;
            c.if_(load_cmd & free_idx.eq(i), |c| c.set(s.d, cmd_cid));
        }
        c.set(slot_valid.d, (slot_valid.q | alloc) & !freed);
    });
    m.finish()
}
