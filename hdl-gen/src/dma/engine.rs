//! `dma_engine`: the descriptor walker and the data mover behind one AXI4 master, with the
//! engine's counters on an AXI4-Lite CSR port.
//!
//! The walker's descriptor reads and the mover's data reads share the AR channel through a
//! round-robin arbiter (a grant is held until `arready`, so each side's request stays stable);
//! the engine's AXI ID is one bit wider than its parts' and its top bit says whose read it is
//! (0: walker, 1: mover), which routes R beats back. AW, W and B belong to the mover.
//!
//! Counters (32 bits, wrapping; read them through `s_axil`, see `dma_csr.md`): bytes moved each
//! way (data segments accepted by the mover, bit buckets excluded), transfers completed, and
//! errors by NVMe status.

use super::{mover::mover, walker::walker, window::window, DmaParams};
use crate::blocks::arbiter::rr_arbiter;
use crate::blocks::fifo::fifo;
use hdl_builder::prelude::*;
use hdl_builder::regs::{Access, RegBlock, RegMap};
use hdl_builder::{Errors, Inst};
use std::rc::Rc;

/// NVMe statuses (`{SCT, SC}`) the engine counts separately.
pub const COUNTED_ERRORS: &[(&str, u64, &str)] = &[
    (
        "err_data_transfer",
        0x004,
        "04h Data Transfer Error (AXI error on a list or data)",
    ),
    (
        "err_sgl_segment",
        0x00d,
        "0Dh Invalid SGL Segment Descriptor",
    ),
    ("err_sgl_length", 0x00f, "0Fh Data SGL Length Invalid"),
    ("err_sgl_type", 0x011, "11h SGL Descriptor Type Invalid"),
    ("err_prp_offset", 0x013, "13h PRP Offset Invalid"),
];

/// The register map of `dma_csr`.
pub fn register_map() -> Result<RegMap, Errors> {
    let mut b = RegBlock::new("dma_csr", 6);
    b.doc("DMA engine counters (32 bits, wrapping).");
    b.reg("bytes_read", 0x00, "Bytes read from host memory")
        .field(
            "value",
            0,
            32,
            Access::Ro,
            0,
            "Data bytes of read-direction segments",
        );
    b.reg("bytes_written", 0x04, "Bytes written to host memory")
        .field(
            "value",
            0,
            32,
            Access::Ro,
            0,
            "Data bytes of write-direction segments",
        );
    b.reg("transfers", 0x08, "Transfers completed").field(
        "value",
        0,
        32,
        Access::Ro,
        0,
        "Completions, any status",
    );
    for (i, (name, _, doc)) in COUNTED_ERRORS.iter().enumerate() {
        b.reg(name, 0x0c + 4 * i as u32, doc).field(
            "value",
            0,
            32,
            Access::Ro,
            0,
            "Transfers that ended with this status",
        );
    }
    b.reg(
        "err_other",
        0x0c + 4 * COUNTED_ERRORS.len() as u32,
        "Transfers that ended with another non-zero status",
    )
    .field(
        "value",
        0,
        32,
        Access::Ro,
        0,
        "Completions with any other error",
    );
    b.finish()
}

fn pass_in(m: &mut ModuleBuilder, u: Inst, port: &str, outer: &str, width: u32) {
    let s = m.input(outer, width);
    m.bind(u, port, s);
}

fn pass_out(m: &mut ModuleBuilder, u: Inst, port: &str, outer: &str, width: u32) {
    let s = m.output(outer, width);
    m.bind_out_to(u, port, s);
}

/// The DMA engine, named `dma_engine` + `p.suffix()`.
pub fn engine(p: &DmaParams, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    build(p, reset, false)
}

/// The DMA engine with a byte window per command, named `dma_engine_win` + `p.suffix()`:
/// `s_cmd` has two more fields, `win_off` [L] and `win_len` [L], and the transfer moves only
/// bytes `win_off .. win_off + win_len` of the data the pointer describes (`len` bytes, walked
/// and checked whole; the window must lie inside it). `m_data`/`s_data` carry `win_len`
/// bytes. See `window.rs`.
pub fn engine_windowed(p: &DmaParams, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    build(p, reset, true)
}

fn build(p: &DmaParams, reset: ResetStyle, windowed: bool) -> Result<Rc<Module>, Errors> {
    let wk = walker(p, reset)?;
    let mv = mover(p, reset)?;
    let arb = rr_arbiter(2, reset)?;
    let csr = register_map()?.module(reset)?;
    let (w, t, l, id) = (p.data_width, p.tag_width, p.len_width, p.id_width);

    let name = if windowed {
        "dma_engine_win"
    } else {
        "dma_engine"
    };
    let mut m = ModuleBuilder::with_reset(&format!("{name}{}", p.suffix()), reset);
    m.doc("DMA engine: commands (PRP or SGL data pointers) in, host memory segments walked,");
    m.doc("data moved between host memory (one AXI4 master) and the m_data/s_data streams,");
    m.doc("one completion per command on m_done, in command order. Counters on s_axil.");
    m.clock();
    m.reset();
    let u_walk = m.instance("u_walker", &wk);
    let u_move = m.instance("u_mover", &mv);
    let u_arb = m.instance("u_ar_arbiter", &arb);
    let u_csr = m.instance("u_csr", &csr);

    m.group("configuration");
    pass_in(&mut m, u_walk, "mps_i", "mps_i", 4);
    m.group("commands");
    let cmd_def = StreamDef::new()
        .field("tag", t)
        .field("write", 1)
        .field("sgl", 1)
        .field("dptr", 128)
        .field("len", l);
    let cmd_def = if windowed {
        cmd_def.field("win_off", l).field("win_len", l)
    } else {
        cmd_def
    };
    let cmd = m.stream_in("s_cmd", &cmd_def);
    let win_fifo = if windowed {
        // The windows wait in command order for their transfers' segments.
        let wf = fifo(2 * l, 4, true, reset)?;
        let u = m.instance("u_win_fifo", &wf);
        let wready = m.bind_out(u, "s_ready_o");
        let wready_walk = m.bind_out(u_walk, "s_cmd_ready_o");
        m.assign(cmd.ready, wready & wready_walk);
        m.bind(u, "s_valid_i", cmd.valid & wready_walk);
        m.bind(
            u,
            "s_data_i",
            cat([cmd.field("win_len").ex(), cmd.field("win_off").ex()]),
        );
        m.bind(u_walk, "s_cmd_valid_i", cmd.valid & wready);
        for f in ["tag", "write", "sgl", "dptr", "len"] {
            m.bind(u_walk, &format!("s_cmd_{f}_i"), cmd.field(f));
        }
        // The walk may start at the window (whole PRP list pages before it are skipped).
        m.bind(u_walk, "s_cmd_from_i", cmd.field("win_off"));
        Some(u)
    } else {
        m.bind(u_walk, "s_cmd_valid_i", cmd.valid);
        let ready = m.bind_out(u_walk, "s_cmd_ready_o");
        m.assign(cmd.ready, ready);
        for f in ["tag", "write", "sgl", "dptr", "len"] {
            m.bind(u_walk, &format!("s_cmd_{f}_i"), cmd.field(f));
        }
        m.bind(u_walk, "s_cmd_from_i", lit(l, 0));
        None
    };
    m.group("data, host memory to stream");
    let data_def = StreamDef::new()
        .field("data", w)
        .field("keep", w / 8)
        .field("last", 1)
        .field("tag", t);
    let md = m.stream_out("m_data", &data_def);
    m.bind_stream(u_move, "m_data", &md);
    m.group("data, stream to host memory");
    let sd = m.stream_in("s_data", &data_def);
    m.bind_stream(u_move, "s_data", &sd);
    m.group("completions");
    let done_def = StreamDef::new().field("tag", t).field("status", 11);
    let done = m.stream_out("m_done", &done_def);
    m.bind_stream(u_move, "m_done", &done);

    // Segments: walker to mover, watched by the byte counters.
    let seg_def = StreamDef::new()
        .field("tag", t)
        .field("write", 1)
        .field("addr", 64)
        .field("len", l)
        .field("bucket", 1)
        .field("last", 1)
        .field("status", 11);
    let seg = m.stream_wire("seg", &seg_def);
    m.bind_stream(u_move, "s_seg", &seg);
    if let Some(uf) = win_fifo {
        let wseg = m.stream_wire("walk_seg", &seg_def);
        m.bind_stream(u_walk, "m_seg", &wseg);
        let u_win = m.instance("u_window", &window(p, reset)?);
        m.bind_stream(u_win, "s_seg", &wseg);
        m.bind_stream(u_win, "m_seg", &seg);
        let wv = m.bind_out(uf, "m_valid_o");
        let wd = m.bind_out(uf, "m_data_o");
        let wc = m.bind_out(uf, "count_o");
        m.unused("win_fifo_count", wc);
        m.bind(u_win, "s_win_valid_i", wv);
        m.bind(u_win, "s_win_off_i", wd.slice(l - 1, 0));
        m.bind(u_win, "s_win_len_i", wd.slice(2 * l - 1, l));
        let wr = m.bind_out(u_win, "s_win_ready_o");
        m.bind(uf, "m_ready_i", wr);
    } else {
        m.bind_stream(u_walk, "m_seg", &seg);
    }

    m.group("host memory (AXI4 master)");
    let arvalid = m.output("m_axi_arvalid_o", 1);
    let arready = m.input("m_axi_arready_i", 1);
    let araddr = m.output("m_axi_araddr_o", 64);
    let arlen = m.output("m_axi_arlen_o", 8);
    let arsize = m.output("m_axi_arsize_o", 3);
    let arburst = m.output("m_axi_arburst_o", 2);
    let arid = m.output("m_axi_arid_o", id + 1);
    let rvalid = m.input("m_axi_rvalid_i", 1);
    let rready = m.output("m_axi_rready_o", 1);
    let rdata = m.input("m_axi_rdata_i", w);
    let rresp = m.input("m_axi_rresp_i", 2);
    let rlast = m.input("m_axi_rlast_i", 1);
    let rid = m.input("m_axi_rid_i", id + 1);
    for (port, width) in [
        ("awvalid", 1),
        ("awaddr", 64),
        ("awlen", 8),
        ("awsize", 3),
        ("awburst", 2),
        ("wvalid", 1),
        ("wdata", w),
        ("wstrb", w / 8),
        ("wlast", 1),
        ("bready", 1),
    ] {
        let name = format!("m_axi_{port}_o");
        pass_out(&mut m, u_move, &name, &name, width);
    }
    let awid_in = m.bind_out(u_move, "m_axi_awid_o");
    let awid = m.output("m_axi_awid_o", id + 1);
    m.assign(awid, cat([lit(1, 1), awid_in.ex()]));
    for (port, width) in [("awready", 1), ("wready", 1), ("bvalid", 1), ("bresp", 2)] {
        let name = format!("m_axi_{port}_i");
        pass_in(&mut m, u_move, &name, &name, width);
    }
    let bid = m.input("m_axi_bid_i", id + 1);
    m.bind(u_move, "m_axi_bid_i", bid.slice(id - 1, 0));
    m.unused("bid_source", bid.bit(id));

    // AR: round robin between the walker (requester 0) and the mover (requester 1).
    let mut ar = Vec::new();
    for u in [u_walk, u_move] {
        let v = m.bind_out(u, "m_axi_arvalid_o");
        let a = m.bind_out(u, "m_axi_araddr_o");
        let len = m.bind_out(u, "m_axi_arlen_o");
        let size = m.bind_out(u, "m_axi_arsize_o");
        let burst = m.bind_out(u, "m_axi_arburst_o");
        let i = m.bind_out(u, "m_axi_arid_o");
        ar.push((v, a, len, size, burst, i));
    }
    m.bind(u_arb, "req_i", cat([ar[1].0.ex(), ar[0].0.ex()]));
    m.bind(u_arb, "ready_i", arready);
    let ar_valid = m.bind_out(u_arb, "valid_o");
    let ar_gnt = m.bind_out(u_arb, "gnt_o");
    let ar_sel = m.bind_out(u_arb, "gnt_idx_o");
    m.unused("ar_gnt_index", ar_sel);
    let mover_wins = m.net("ar_mover_wins", ar_gnt.bit(1));
    m.assign(arvalid, ar_valid);
    m.assign(araddr, mux(mover_wins, ar[1].1, ar[0].1));
    m.assign(arlen, mux(mover_wins, ar[1].2, ar[0].2));
    m.assign(arsize, mux(mover_wins, ar[1].3, ar[0].3));
    m.assign(arburst, mux(mover_wins, ar[1].4, ar[0].4));
    m.assign(
        arid,
        cat([mover_wins.ex(), mux(mover_wins, ar[1].5, ar[0].5)]),
    );
    m.bind(u_walk, "m_axi_arready_i", arready & ar_gnt.bit(0));
    m.bind(u_move, "m_axi_arready_i", arready & ar_gnt.bit(1));

    // R: the ID's top bit says whose beat it is.
    let r_mover = m.net("r_to_mover", rid.bit(id));
    let walk_rready = m.bind_out(u_walk, "m_axi_rready_o");
    let move_rready = m.bind_out(u_move, "m_axi_rready_o");
    m.assign(rready, mux(r_mover, move_rready, walk_rready));
    for u in [u_walk, u_move] {
        m.bind(u, "m_axi_rdata_i", rdata);
        m.bind(u, "m_axi_rresp_i", rresp);
        m.bind(u, "m_axi_rlast_i", rlast);
        m.bind(u, "m_axi_rid_i", rid.slice(id - 1, 0));
    }
    m.bind(u_walk, "m_axi_rvalid_i", rvalid & !r_mover);
    m.bind(u_move, "m_axi_rvalid_i", rvalid & r_mover);

    // Counters.
    let seg_fire = m.net("seg_fire", seg.fire());
    let seg_data = m.net(
        "seg_data",
        seg_fire & !seg.field("bucket") & seg.field("status").eq(0),
    );
    let seg_len32 = m.net("seg_len32", seg.field("len").resize(32));
    let bytes_rd = m.reg("bytes_read", 32, 0);
    let bytes_wr = m.reg("bytes_written", 32, 0);
    m.assign(
        bytes_rd.d,
        mux(
            seg_data & !seg.field("write"),
            bytes_rd.q + seg_len32,
            bytes_rd.q,
        ),
    );
    m.assign(
        bytes_wr.d,
        mux(
            seg_data & seg.field("write"),
            bytes_wr.q + seg_len32,
            bytes_wr.q,
        ),
    );
    m.unused("seg_addr", seg.field("addr"));
    m.unused(
        "seg_tag",
        cat([seg.field("tag").ex(), seg.field("last").ex()]),
    );
    let done_fire = m.net("done_fire", done.fire());
    let status = done.field("status");
    m.unused("done_tag", done.field("tag"));
    let transfers = m.reg("transfers", 32, 0);
    m.assign(transfers.d, mux(done_fire, transfers.q + 1, transfers.q));
    m.bind(u_csr, "bytes_read_value_i", bytes_rd.q);
    m.bind(u_csr, "bytes_written_value_i", bytes_wr.q);
    m.bind(u_csr, "transfers_value_i", transfers.q);
    let mut known = Vec::new();
    for (name, code, _) in COUNTED_ERRORS {
        let hit = m.net(&format!("{name}_hit"), done_fire & status.eq(*code));
        known.push(hit);
        let c = m.reg(name, 32, 0);
        m.assign(c.d, mux(hit, c.q + 1, c.q));
        m.bind(u_csr, &format!("{name}_value_i"), c.q);
    }
    let any_known = known.iter().skip(1).fold(known[0].ex(), |acc, k| acc | *k);
    let other = m.net("err_other_hit", done_fire & status.ne(0) & !any_known);
    let c = m.reg("err_other", 32, 0);
    m.assign(c.d, mux(other, c.q + 1, c.q));
    m.bind(u_csr, "err_other_value_i", c.q);

    // Functional coverage: each status a transfer can end with, and the two readers contending.
    for (name, hit) in COUNTED_ERRORS.iter().zip(&known) {
        m.cover(name.0, *hit);
    }
    m.cover("done_success", done_fire & status.eq(0));
    m.cover("ar_contention", ar[0].0 & ar[1].0);

    m.group("counters (AXI4-Lite slave)");
    m.pass_through(u_csr, "s_axil_");
    m.finish()
}
