//! The engine top: one `nvme_tcp_conn` per I/O queue pair, a command demultiplexer by SQ id,
//! a round-robin completion merge, and the shared byte streams of the TCP engine with
//! per-connection flow control. The interface is documented in `mod.rs`.

use super::conn::conn;
use super::NvmeTcpParams;
use crate::blocks::arbiter::rr_arbiter;
use crate::blocks::fifo::fifo;
use crate::dma::engine::engine_windowed;
use crate::dma::DmaParams;
use hdl_builder::prelude::*;
use hdl_builder::regs::{Access, RegBlock, RegMap};
use hdl_builder::{Error, ErrorKind, Errors};
use std::panic::Location;
use std::rc::Rc;

/// The module name: `nvme_tcp_w<bits>_c<connections>_d<outstanding>` (`_nd` without digests).
pub fn module_name(p: &NvmeTcpParams) -> String {
    format!(
        "nvme_tcp_w{}_c{}_d{}{}",
        p.data_width,
        p.connections,
        p.outstanding,
        if p.digests { "" } else { "_nd" }
    )
}

/// The counters, by register name and what they count (32 bits, wrapping, summed over the
/// connections).
pub const COUNTERS: [(&str, &str); 13] = [
    ("tx_icreq", "ICReq PDUs sent"),
    ("tx_capsule_cmd", "CapsuleCmd PDUs sent"),
    (
        "tx_h2c_termreq",
        "H2CTermReq PDUs sent (fatal errors found)",
    ),
    ("tx_bytes", "PDU bytes sent"),
    ("rx_icresp", "ICResp PDUs accepted"),
    (
        "rx_capsule_resp",
        "CapsuleResp PDUs accepted (completions made)",
    ),
    ("rx_c2h_termreq", "C2HTermReq PDUs received"),
    (
        "rx_bytes",
        "Bytes received (those dropped after a connection ended too)",
    ),
    ("hdgst_errors", "Header digest errors"),
    ("rx_c2h_data", "C2HData PDUs whose header was accepted"),
    (
        "ddgst_errors",
        "Data digest errors (the command completes with 22h)",
    ),
    ("tx_h2c_data", "H2CData PDUs sent"),
    ("rx_r2t", "R2T PDUs accepted"),
];

/// The counters' register map (`nvme_tcp_csr`, AXI4-Lite).
pub fn register_map() -> Result<RegMap, Errors> {
    let mut b = RegBlock::new("nvme_tcp_csr", 6);
    b.doc("NVMe/TCP engine counters (32 bits, wrapping, all connections together).");
    for (i, (name, doc)) in COUNTERS.iter().enumerate() {
        b.reg(name, 4 * i as u32, doc)
            .field("value", 0, 32, Access::Ro, 0, doc);
    }
    b.finish()
}

/// The DMA engine's parameters inside the NVMe/TCP engine: the stream width, a tag of
/// `{connection, slot}`, the rest from the chip's `[dma]` section.
pub fn dma_params(p: &NvmeTcpParams, dma: &DmaParams) -> DmaParams {
    DmaParams {
        data_width: p.data_width,
        tag_width: clog2(u64::from(p.connections)) + clog2(u64::from(p.outstanding)).max(1),
        ..*dma
    }
}

/// The engine, named by [`module_name`]; `dma` gives the DMA engine's length width, reads in
/// flight and AXI ID width (its data width is the stream width).
pub fn engine(p: &NvmeTcpParams, dma: &DmaParams, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let name = module_name(p);
    let n = p.connections;
    let dp = dma_params(p, dma);
    if !(2..=16).contains(&n) || dp.tag_width > 8 {
        return Err(Errors(vec![Error {
            kind: ErrorKind::Invalid,
            module: name.clone(),
            signal: None,
            loc: Location::caller(),
            message: format!(
                "{name}: {n} connections (use 2 to 16) of {} commands: the DMA tag needs {} bits (at most 8)",
                p.outstanding, dp.tag_width
            ),
        }]));
    }
    let dw = p.data_width;
    let lanes = dw / 8;
    let cw = clog2(u64::from(n));
    let sw = clog2(u64::from(p.outstanding)).max(1);
    let l = dp.len_width;
    let dma_eng = engine_windowed(&dp, reset)?;
    let order_fifo = fifo(cw, 8, true, reset)?;
    let c = conn(p, reset)?;
    let rx_fifo = fifo(dw + lanes, 2, true, reset)?;
    let arb = rr_arbiter(n, reset)?;
    let csr = register_map()?.module(reset)?;
    let cpl_arb = rr_arbiter(n + 1, reset)?;

    let mut m = ModuleBuilder::with_reset(&name, reset);
    m.doc(&format!(
        "NVMe/TCP engine, host side: {n} connections (SQ id i+1 on connection i), {lanes}-byte streams."
    ));
    m.doc(
        "io_cmd goes to the connection of its SQ id (others: completed with 22h); sq_space_o says",
    );
    m.doc("which connections take a command now. io_cpl merges the connections round robin.");
    m.doc("tx: beats of any connection holding a tx_credit_i bit, held until taken. rx: a beat of");
    m.doc("connection i is taken in any cycle rx_ready_o[i] is high (a 2-beat buffer per connection),");
    m.doc("so a stalled connection never blocks another's bytes.");
    m.clock();
    m.reset();
    m.group("configuration");
    let dgst = m.input("dgst_i", 2);
    m.comment(
        dgst,
        "digests to ask for on every connection: bit 0 header, bit 1 data",
    );
    m.group("commands in, completions out");
    let cmd = m.stream_in(
        "io_cmd",
        &StreamDef::new().field("sqid", 16).field("sqe", 512),
    );
    let space = m.output("sq_space_o", n);
    m.comment(space, "bit i: connection i (SQ id i+1) takes a command now");
    let cpl = m.stream_out(
        "io_cpl",
        &StreamDef::new()
            .field("sqid", 16)
            .field("cid", 16)
            .field("status", 15)
            .field("dw0", 32),
    );
    m.group("byte streams of the TCP engine");
    let tx = m.stream_out(
        "tx",
        &StreamDef::new()
            .field("conn", cw)
            .field("data", dw)
            .field("keep", lanes),
    );
    let credit = m.input("tx_credit_i", n);
    m.comment(
        credit,
        "bit i: the TCP engine takes bytes of connection i (keep it up while one is on tx)",
    );
    let rx = m.stream_in(
        "rx",
        &StreamDef::new()
            .field("conn", cw)
            .field("data", dw)
            .field("keep", lanes),
    );
    let rx_space = m.output("rx_space_o", n);
    m.comment(
        rx_space,
        "bit i: a beat of connection i presented now is taken (rx_ready_o = rx_space_o[rx_conn_i])",
    );
    m.group("state");
    let connected = m.output("connected_o", n);
    let dead = m.output("dead_o", n);
    let lost = m.input("lost_i", n);
    m.comment(
        lost,
        "bit i: TCP connection i failed: NVMe/TCP connection i ends (its tx beats need no credit)",
    );

    // Command routing by SQ id.
    let sqid = cmd.field("sqid");
    let idx = m.net("cmd_conn", (sqid - 1u64).slice(cw - 1, 0));
    let known = m.net("cmd_known", sqid.ne(0u64) & sqid.le(u64::from(n)));
    m.comment(known, "the SQ id has a connection");

    let cpl_def = StreamDef::new()
        .field("cid", 16)
        .field("status", 15)
        .field("dw0", 32);
    let mut cmd_ready = Vec::new();
    let mut cpls = Vec::new();
    let mut txs = Vec::new();
    let mut spaces = Vec::new();
    let mut conns = Vec::new();
    let mut deads = Vec::new();
    let mut rx_readies = Vec::new();
    let mut events: Vec<[Sig; 6]> = Vec::new();
    let mut dcmds = Vec::new();
    let mut ddatas = Vec::new();
    let mut ddones = Vec::new();
    let mut drdatas = Vec::new();
    let dcmd_def = StreamDef::new()
        .field("tag", sw)
        .field("write", 1)
        .field("sgl", 1)
        .field("dptr", 128)
        .field("len", 32)
        .field("off", 32)
        .field("dlen", 32);
    let ddata_def = StreamDef::new()
        .field("data", dw)
        .field("keep", lanes)
        .field("last", 1);
    let ddone_def = StreamDef::new().field("tag", sw).field("status", 11);
    for i in 0..n {
        let u = m.instance(&format!("u_conn{i}"), &c);
        m.bind(u, "dgst_i", dgst);
        m.bind(u, "lost_i", lost.bit(i));
        let sel = m.net(&format!("cmd_sel{i}"), known & idx.eq(u64::from(i)));
        m.bind(u, "io_cmd_valid_i", cmd.valid & sel);
        m.bind(u, "io_cmd_sqe_i", cmd.field("sqe"));
        let r = m.bind_out(u, "io_cmd_ready_o");
        cmd_ready.push(m.net(&format!("cmd_ready{i}"), sel & r));
        spaces.push(m.bind_out(u, "space_o"));
        let cs = m.stream_wire(&format!("cpl{i}"), &cpl_def);
        m.bind_stream(u, "io_cpl", &cs);
        cpls.push(cs);
        let ts = m.stream_wire(
            &format!("tx{i}"),
            &StreamDef::new().field("data", dw).field("keep", lanes),
        );
        m.bind_stream(u, "tx", &ts);
        txs.push(ts);
        events.push([
            m.bind_out(u, "ev_tx_pdu_o"),
            m.bind_out(u, "ev_tx_bytes_o"),
            m.bind_out(u, "ev_rx_pdu_o"),
            m.bind_out(u, "ev_rx_bytes_o"),
            m.bind_out(u, "ev_hdgst_err_o"),
            m.bind_out(u, "ev_ddgst_err_o"),
        ]);
        let dc = m.stream_wire(&format!("dma_cmd{i}"), &dcmd_def);
        m.bind_stream(u, "dma_cmd", &dc);
        dcmds.push(dc);
        let dd = m.stream_wire(&format!("dma_data{i}"), &ddata_def);
        m.bind_stream(u, "dma_data", &dd);
        ddatas.push(dd);
        let dr = m.stream_wire(&format!("dma_rdata{i}"), &ddata_def);
        m.bind_stream(u, "dma_rdata", &dr);
        drdatas.push(dr);
        let dn = m.stream_wire(&format!("dma_done{i}"), &ddone_def);
        m.bind_stream(u, "dma_done", &dn);
        ddones.push(dn);
        conns.push(m.bind_out(u, "connected_o"));
        deads.push(m.bind_out(u, "dead_o"));

        // Receive buffer: two beats, so rx_ready_o[i] never depends on rx_valid_i.
        let f = m.instance(&format!("u_rx_buf{i}"), &rx_fifo);
        let fsel = m.net(
            &format!("rx_sel{i}"),
            rx.valid & rx.field("conn").eq(u64::from(i)),
        );
        m.bind(f, "s_valid_i", fsel);
        m.bind(
            f,
            "s_data_i",
            cat([rx.field("keep").ex(), rx.field("data").ex()]),
        );
        rx_readies.push(m.bind_out(f, "s_ready_o"));
        let fv = m.bind_out(f, "m_valid_o");
        let fd = m.bind_out(f, "m_data_o");
        let count = m.bind_out(f, "count_o");
        m.unused(&format!("rx_buf{i}_count"), count);
        m.bind(u, "rx_valid_i", fv);
        m.bind(u, "rx_data_i", fd.slice(dw - 1, 0));
        m.bind(u, "rx_keep_i", fd.slice(dw + lanes - 1, dw));
        let cr = m.bind_out(u, "rx_ready_o");
        m.bind(f, "m_ready_i", cr);
    }
    m.assign(rx_space, cat(rx_readies.iter().rev()));
    m.assign(rx.ready, rx_space.shr_by(rx.field("conn")).bit(0));
    m.assign(space, cat(spaces.iter().rev()));
    m.assign(connected, cat(conns.iter().rev()));
    m.assign(dead, cat(deads.iter().rev()));

    // A command for an SQ id without a connection is taken into a register and completes with
    // 22h through the merge, as requester n.
    let bq = m.reg("bounce_valid", 1, 0);
    let bq_sqid = m.reg("bounce_sqid", 16, 0);
    let bq_cid = m.reg("bounce_cid", 16, 0);
    let take_bounce = m.net("take_bounce", cmd.valid & !known & !bq.q);
    m.assign(
        cmd.ready,
        cmd_ready.iter().fold(take_bounce.ex(), |a, r| a | *r),
    );

    // Completions: round robin over the connections and the bounce register.
    let ca = m.instance("u_cpl_arbiter", &cpl_arb);
    m.bind(
        ca,
        "req_i",
        cat(std::iter::once(bq.q.ex()).chain(cpls.iter().rev().map(|s| s.valid.ex()))),
    );
    let cv = m.bind_out(ca, "valid_o");
    let cg = m.bind_out(ca, "gnt_o");
    let ci = m.bind_out(ca, "gnt_idx_o");
    m.bind(ca, "ready_i", cpl.ready);
    for (i, s) in cpls.iter().enumerate() {
        m.assign(s.ready, cpl.ready & cg.bit(i as u32));
    }
    let bq_fire = m.net("bounce_fire", cpl.ready & cg.bit(n));
    m.comb(|c| {
        c.set(bq.d, bq.q);
        c.set(bq_sqid.d, bq_sqid.q);
        c.set(bq_cid.d, bq_cid.q);
        c.if_(take_bounce, |c| {
            c.set(bq.d, 1u64);
            c.set(bq_sqid.d, sqid);
            c.set(bq_cid.d, cmd.field("sqe").slice(31, 16));
        })
        .else_if(bq_fire, |c| c.set(bq.d, 0u64));
    });
    let pick = |f: &str, bounce: Expr| -> Expr {
        let mut e: Expr = bounce;
        for (i, s) in cpls.iter().enumerate() {
            e = mux(ci.eq(i as u64), s.field(f), e);
        }
        e
    };
    m.assign(cpl.valid, cv);
    let conn_sqid = m.net("cpl_conn_sqid", ci.zext(16) + 1u64);
    m.assign(
        cpl.field("sqid"),
        mux(ci.eq(u64::from(n)), bq_sqid.q, conn_sqid),
    );
    m.assign(cpl.field("cid"), pick("cid", bq_cid.q.ex()));
    m.assign(cpl.field("status"), pick("status", lit(15, 0x22)));
    m.assign(cpl.field("dw0"), pick("dw0", lit(32, 0)));

    // Transmit: round robin over the connections with a beat and a credit.
    let ta = m.instance("u_tx_arbiter", &arb);
    m.bind(
        ta,
        "req_i",
        cat(txs.iter().rev().map(|s| s.valid.ex())) & (credit | lost),
    );
    let tv = m.bind_out(ta, "valid_o");
    let tg = m.bind_out(ta, "gnt_o");
    let ti = m.bind_out(ta, "gnt_idx_o");
    m.bind(ta, "ready_i", tx.ready);
    for (i, s) in txs.iter().enumerate() {
        m.assign(s.ready, tx.ready & tg.bit(i as u32));
    }
    let tpick = |f: &str| -> Expr {
        let mut e: Expr = txs[0].field(f).ex();
        for (i, s) in txs.iter().enumerate().skip(1) {
            e = mux(ti.eq(i as u64), s.field(f), e);
        }
        e
    };
    m.assign(tx.valid, tv);
    m.assign(tx.field("conn"), ti);
    m.assign(tx.field("data"), tpick("data"));
    m.assign(tx.field("keep"), tpick("keep"));

    // Host memory writes: the connections' DMA commands round robin into the DMA engine (tag
    // {connection, slot}); each command's connection is queued so its payload beats follow in
    // command order; completions go back by the tag's connection bits.
    let u_dma = m.instance("u_dma", &dma_eng);
    let da = m.instance("u_dma_arbiter", &arb);
    let u_order = m.instance("u_dma_order", &order_fifo);
    let order_ready = m.bind_out(u_order, "s_ready_o");
    m.bind(
        da,
        "req_i",
        cat(dcmds
            .iter()
            .rev()
            .map(|s| s.valid & (order_ready | !s.field("write")))),
    );
    let dav = m.bind_out(da, "valid_o");
    let dag = m.bind_out(da, "gnt_o");
    let dai = m.bind_out(da, "gnt_idx_o");
    let s_cmd_ready = m.bind_out(u_dma, "s_cmd_ready_o");
    m.bind(da, "ready_i", s_cmd_ready);
    for (i, s) in dcmds.iter().enumerate() {
        m.assign(s.ready, s_cmd_ready & dag.bit(i as u32));
    }
    let dpick = |f: &str| -> Expr {
        let mut e: Expr = dcmds[0].field(f).ex();
        for (i, s) in dcmds.iter().enumerate().skip(1) {
            e = mux(dai.eq(i as u64), s.field(f), e);
        }
        e
    };
    m.bind(u_dma, "s_cmd_valid_i", dav);
    m.bind(u_dma, "s_cmd_tag_i", cat([dai.ex(), dpick("tag")]));
    let dma_write = m.net("dma_cmd_write", dpick("write"));
    m.bind(u_dma, "s_cmd_write_i", dma_write);
    m.bind(u_dma, "s_cmd_sgl_i", dpick("sgl"));
    m.bind(u_dma, "s_cmd_dptr_i", dpick("dptr"));
    let len32 = m.net("dma_cmd_len", dpick("len"));
    let off32 = m.net("dma_cmd_off", dpick("off"));
    let dlen32 = m.net("dma_cmd_dlen", dpick("dlen"));
    if l < 32 {
        m.unused(
            "dma_len_high",
            cat([len32.slice(31, l), off32.slice(31, l), dlen32.slice(31, l)]),
        );
    }
    m.bind(u_dma, "s_cmd_len_i", len32.resize(l));
    m.bind(u_dma, "s_cmd_win_off_i", off32.resize(l));
    m.bind(u_dma, "s_cmd_win_len_i", dlen32.resize(l));
    m.bind(u_order, "s_valid_i", dav & s_cmd_ready & dma_write);
    m.bind(u_order, "s_data_i", dai);
    let ov = m.bind_out(u_order, "m_valid_o");
    let oc = m.bind_out(u_order, "m_data_o");
    let ocount = m.bind_out(u_order, "count_o");
    m.unused("dma_order_count", ocount);
    let sd_ready = m.bind_out(u_dma, "s_data_ready_o");
    let dsel = |f: &str| -> Expr {
        let mut e: Expr = ddatas[0].field(f).ex();
        for (i, s) in ddatas.iter().enumerate().skip(1) {
            e = mux(oc.eq(i as u64), s.field(f), e);
        }
        e
    };
    let sd_valid = m.net(
        "dma_data_valid",
        ov & ddatas
            .iter()
            .enumerate()
            .fold(lit(1, 0), |a, (i, s)| a | (oc.eq(i as u64) & s.valid)),
    );
    let sd_last = m.net("dma_data_last", dsel("last"));
    m.bind(u_dma, "s_data_valid_i", sd_valid);
    m.bind(u_dma, "s_data_data_i", dsel("data"));
    m.bind(u_dma, "s_data_keep_i", dsel("keep"));
    m.bind(u_dma, "s_data_last_i", sd_last);
    m.bind(u_dma, "s_data_tag_i", lit(cw + sw, 0));
    for (i, s) in ddatas.iter().enumerate() {
        m.assign(s.ready, ov & oc.eq(i as u64) & sd_ready);
    }
    m.bind(u_order, "m_ready_i", sd_valid & sd_ready & sd_last);
    let mdv = m.bind_out(u_dma, "m_done_valid_o");
    let mdt = m.bind_out(u_dma, "m_done_tag_o");
    let mds = m.bind_out(u_dma, "m_done_status_o");
    m.bind(u_dma, "m_done_ready_i", lit(1, 1));
    for (i, s) in ddones.iter().enumerate() {
        m.assign(s.valid, mdv & mdt.slice(cw + sw - 1, sw).eq(i as u64));
        m.assign(s.field("tag"), mdt.slice(sw - 1, 0));
        m.assign(s.field("status"), mds);
        m.unused(&format!("dma_done{i}_ready"), s.ready);
    }
    // Host memory reads (H2CData payload) go back by the tag's connection bits; transfers
    // come in command order, so a connection waiting for tx holds up the reads behind it.
    let mv = m.bind_out(u_dma, "m_data_valid_o");
    let mdd = m.bind_out(u_dma, "m_data_data_o");
    let mdk = m.bind_out(u_dma, "m_data_keep_o");
    let mdl = m.bind_out(u_dma, "m_data_last_o");
    let mdtag = m.bind_out(u_dma, "m_data_tag_o");
    let m_conn = m.net("dma_rdata_conn", mdtag.slice(cw + sw - 1, sw));
    m.unused("dma_rdata_slot", mdtag.slice(sw - 1, 0));
    for (i, s) in drdatas.iter().enumerate() {
        m.assign(s.valid, mv & m_conn.eq(i as u64));
        m.assign(s.field("data"), mdd);
        m.assign(s.field("keep"), mdk);
        m.assign(s.field("last"), mdl);
    }
    m.bind(
        u_dma,
        "m_data_ready_i",
        drdatas
            .iter()
            .enumerate()
            .fold(lit(1, 0), |a, (i, s)| a | (m_conn.eq(i as u64) & s.ready)),
    );
    m.group("host memory (AXI4 master of the DMA engine)");
    let mps = m.input("mps_i", 4);
    m.comment(mps, "CC.MPS: the memory page size is 4096 << mps_i");
    m.bind(u_dma, "mps_i", mps);
    m.pass_through(u_dma, "m_axi_");
    // The DMA engine's own counters are not on this top's CSR port: its AXI4-Lite slave is idle.
    for port in dma_eng.ports() {
        if !port.name.starts_with("s_axil_") {
            continue;
        }
        if port.input {
            m.bind(u_dma, &port.name, lit(port.width, 0));
        } else {
            let o = m.bind_out(u_dma, &port.name);
            m.unused(&format!("dma_{}", port.name), o);
        }
    }

    // Counters: each connection's events of the cycle, summed.
    let u_csr = m.instance("u_csr", &csr);
    let sum = |m: &mut ModuleBuilder, name: &str, f: &dyn Fn(&[Sig; 6]) -> Expr| -> Sig {
        let e = events
            .iter()
            .fold(lit(32, 0), |acc, ev| acc + f(ev).zext(32));
        m.net(name, e)
    };
    let incs: Vec<Sig> = vec![
        sum(&mut m, "inc_tx_icreq", &|e| e[0].bit(0)),
        sum(&mut m, "inc_tx_capsule_cmd", &|e| e[0].bit(1)),
        sum(&mut m, "inc_tx_h2c_termreq", &|e| e[0].bit(2)),
        sum(&mut m, "inc_tx_bytes", &|e| e[1].ex()),
        sum(&mut m, "inc_rx_icresp", &|e| e[2].bit(0)),
        sum(&mut m, "inc_rx_capsule_resp", &|e| e[2].bit(1)),
        sum(&mut m, "inc_rx_c2h_termreq", &|e| e[2].bit(2)),
        sum(&mut m, "inc_rx_bytes", &|e| e[3].ex()),
        sum(&mut m, "inc_hdgst_errors", &|e| e[4].ex()),
        sum(&mut m, "inc_rx_c2h_data", &|e| e[2].bit(3)),
        sum(&mut m, "inc_ddgst_errors", &|e| e[5].ex()),
        sum(&mut m, "inc_tx_h2c_data", &|e| e[0].bit(3)),
        sum(&mut m, "inc_rx_r2t", &|e| e[2].bit(4)),
    ];
    for ((name, _), inc) in COUNTERS.iter().zip(&incs) {
        let c = m.reg(&format!("cnt_{name}"), 32, 0);
        m.assign(c.d, c.q + *inc);
        m.bind(u_csr, &format!("{name}_value_i"), c.q);
    }
    m.group("counters (AXI4-Lite slave)");
    m.pass_through(u_csr, "s_axil_");
    m.finish()
}
