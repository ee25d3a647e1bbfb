//! `nvme_ctrl`: BAR0, queue state, SQ fetch and arbitration, dispatch, CQ post and interrupt
//! coalescing. The interfaces and the policies are documented in the [module above](super).
//!
//! What lives here (one module, built in this order; each part names its nets as before, so
//! the emitted RTL does not depend on how the generator is split):
//!
//! - `mod.rs`: the sub-modules, the queue RAM word layouts, the ports and the queue state RAMs
//! - `regs.rs`: BAR0 (controller registers, doorbells, reads) and the vendor CSRs with the
//!   firmware's queue operations
//! - `fsm.rs`: the queue FSM (doorbells, queue operations, completions, fetches, controller
//!   reset) with its decisions and the RAM words it writes
//! - `sched.rs`: the arbitration class FIFOs and the weighted round robin
//! - `fetch.rs`: the SQ fetch (AR and R) and the dispatch of SQEs to io_cmd / admin_cmd
//! - `cpl.rs`: the completion sources and the CQ post (AW, W, B)
//! - `irq.rs`: interrupt coalescing
//! - `stats.rs`: events, counters and the latency histograms

use super::params::{register_map, NvmeParams, MAX_WRITES};
use crate::blocks::{arbiter::rr_arbiter, fifo::fifo};
use hdl_builder::prelude::*;
use hdl_builder::{Errors, Inst, Mem};
use std::rc::Rc;

mod cpl;
mod fetch;
mod fsm;
mod irq;
mod regs;
mod sched;
mod stats;

/// Field layout of a RAM word, least significant field first.
struct Layout {
    fields: Vec<(&'static str, u32)>,
}

impl Layout {
    fn width(&self) -> u32 {
        self.fields.iter().map(|f| f.1).sum()
    }

    fn place(&self, name: &str) -> (u32, u32) {
        let mut lo = 0;
        for &(n, w) in &self.fields {
            if n == name {
                return (lo, w);
            }
            lo += w;
        }
        panic!("no field {name}")
    }

    #[track_caller]
    fn get(&self, word: Sig, name: &str) -> Expr {
        let (lo, w) = self.place(name);
        word.slice(lo + w - 1, lo)
    }

    /// The word with the named fields replaced; the others taken from `base` (or zero).
    #[track_caller]
    fn pack(&self, base: Option<Sig>, vals: &[(&str, Expr)]) -> Expr {
        let mut parts = Vec::new();
        for &(n, w) in self.fields.iter().rev() {
            let e = match vals.iter().find(|v| v.0 == n) {
                Some(v) => {
                    assert_eq!(v.1.width(), w, "field {n}");
                    v.1.clone()
                }
                None => match base {
                    Some(b) => self.get(b, n),
                    None => zeros(w),
                },
            };
            parts.push(e);
        }
        cat(parts)
    }
}

/// `a < b ? a : b`, both the same width.
fn min(a: Expr, b: Expr) -> Expr {
    mux(a.lt(&b), a, b)
}

/// What every part reads: the parameters, their derived widths, the sub-modules, the RAM word
/// layouts and the CSR instance.
struct Ctx<'a> {
    p: &'a NvmeParams,
    qw: u32,
    iw: u32,
    vw: u32,
    w: u32,
    bps: u32,
    ba: u32,
    nq: u64,
    nb: u32,
    cw: u32,
    cls_fifo: Rc<Module>,
    desc_fifo: Rc<Module>,
    fb_fifo: Rc<Module>,
    pb_fifo: Rc<Module>,
    arb: Rc<Module>,
    sql: Layout,
    cql: Layout,
    u_csr: Inst,
}

/// The module's ports.
struct Ports {
    bar_awvalid: Sig,
    bar_awready: Sig,
    bar_awaddr: Sig,
    bar_wvalid: Sig,
    bar_wready: Sig,
    bar_wdata: Sig,
    bar_wstrb: Sig,
    bar_bvalid: Sig,
    bar_bready: Sig,
    bar_bresp: Sig,
    bar_arvalid: Sig,
    bar_arready: Sig,
    bar_araddr: Sig,
    bar_rvalid: Sig,
    bar_rready: Sig,
    bar_rdata: Sig,
    bar_rresp: Sig,
    arvalid: Sig,
    arready: Sig,
    araddr: Sig,
    arlen: Sig,
    arsize: Sig,
    arburst: Sig,
    rvalid: Sig,
    rready: Sig,
    rdata: Sig,
    rresp: Sig,
    rlast: Sig,
    awvalid: Sig,
    awready: Sig,
    awaddr: Sig,
    awlen: Sig,
    awsize: Sig,
    awburst: Sig,
    wvalid: Sig,
    wready: Sig,
    wdata: Sig,
    wstrb: Sig,
    wlast: Sig,
    bvalid: Sig,
    bready: Sig,
    bresp: Sig,
    io_cmd: Stream,
    io_cpl: Stream,
    sq_space: Sig,
    adm_cmd: Stream,
    adm_cpl: Stream,
    irq: Stream,
    mps_o: Sig,
}

/// The queue state RAMs: their ports and the fields of the words read.
#[derive(Clone, Copy)]
struct Rams {
    hd_mem: Mem,
    lc_mem: Mem,
    sq_re: Sig,
    sq_raddr: Sig,
    cq_re: Sig,
    cq_raddr: Sig,
    sq_we: Sig,
    sq_waddr: Sig,
    sq_wdata: Sig,
    cq_we: Sig,
    cq_waddr: Sig,
    cq_wdata: Sig,
    fsm_hd_we: Sig,
    sq_rd: Sig,
    hd_rd: Sig,
    cq_rd: Sig,
    lc_rd: Sig,
    s_en: Sig,
    s_act: Sig,
    s_prio: Sig,
    s_cqid: Sig,
    s_size: Sig,
    s_head: Sig,
    s_tail: Sig,
    s_base: Sig,
    s_smp: Sig,
    s_smp_idx: Sig,
    s_smp_t: Sig,
    s_fetched: Sig,
    s_completed: Sig,
    c_en: Sig,
    c_ien: Sig,
    c_phase: Sig,
    c_vec: Sig,
    c_size: Sig,
    c_head: Sig,
    c_tail: Sig,
    c_next: Sig,
    c_base: Sig,
}

/// The NVMe front end, named `nvme_ctrl` + `p.suffix()`.
pub fn ctrl(p: &NvmeParams, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let csr = register_map()?.module(reset)?;
    let qw = p.qid_width();
    let iw = p.idx_width();
    let vw = p.vec_width();
    let w = p.data_width;
    let bps = p.beats_per_sqe();
    let ba = p.bar_addr_width();
    let nq = u64::from(p.io_queues);
    let nb = clog2(u64::from(p.fetch_burst) + 1);
    let cw = clog2(u64::from(p.fetch_slots) + 1);
    // Up to every queue (admin included, in round-robin mode) in one class FIFO, plus one
    // word so a head can be rotated (popped and pushed back) in the same cycle while it is full.
    let cls_fifo = fifo(qw, p.io_queues + 2, true, reset)?;
    // A fetch: {timed, offset of the timed SQE in the burst, qid, SQEs, new head}.
    let desc_fifo = fifo(1 + nb + qw + nb + iw, p.fetch_slots, true, reset)?;
    let fb_fifo = fifo(qw + 2 + 512, p.fetch_slots, true, reset)?;
    // A CQE write in flight: {latency start, direction, timed, interrupts enabled, vector}.
    let pb_fifo = fifo(32 + 2 + 1 + 1 + vw, MAX_WRITES, true, reset)?;
    let arb = rr_arbiter(3, reset)?;

    let sql = Layout {
        fields: vec![
            ("en", 1),
            ("act", 1),
            ("prio", 2),
            ("cqid", qw),
            ("size", iw),
            ("head", iw),
            ("tail", iw),
            ("base", 52),
            // Latency sampler (mod.rs): 0 free, 1 armed (entry smp_idx not fetched yet,
            // started at smp_t), 2 in flight (started at smp_t), 3 free since its post at
            // smp_t.
            ("smp", 2),
            ("smp_idx", iw),
            ("smp_t", 32),
            ("fetched", 32),
            ("completed", 32),
        ],
    };
    let cql = Layout {
        fields: vec![
            ("en", 1),
            ("ien", 1),
            ("phase", 1),
            ("vec", vw),
            ("size", iw),
            ("head", iw),
            ("tail", iw),
            // The slot after the tail (0 after the last), kept beside it so that no addition
            // stands before the full-CQ test when a completion is posted.
            ("next", iw),
            ("base", 52),
        ],
    };

    let mut m = ModuleBuilder::with_reset(&format!("nvme_ctrl{}", p.suffix()), reset);
    m.doc("NVMe controller front end: BAR0 registers and doorbells (s_bar), per-queue state in");
    m.doc("RAM, SQ fetch with doorbell batching and RR / WRR-with-urgent arbitration over an");
    m.doc("AXI4 master, I/O SQEs out on io_cmd, admin SQEs and the I/O SQEs whose opcode the");
    m.doc("hardware does not carry (fallback, with their SQ id) on admin_cmd, completions in on");
    m.doc("io_cpl / admin_cpl written as CQEs (never into a full CQ), interrupts coalesced per");
    m.doc("vector on irq. Firmware's vendor CSRs on s_axil. See hdl-gen/src/nvme/mod.rs.");
    m.clock();
    m.reset();
    let u_csr = m.instance("u_csr", &csr);

    let cx = Ctx {
        p,
        qw,
        iw,
        vw,
        w,
        bps,
        ba,
        nq,
        nb,
        cw,
        cls_fifo,
        desc_fifo,
        fb_fifo,
        pb_fifo,
        arb,
        sql,
        cql,
        u_csr,
    };
    let io = ports(&mut m, &cx);
    let bar = regs::bar0(&mut m, &cx, &io);
    let csr = regs::vendor(&mut m, &cx, &bar);
    let ram = rams(&mut m, &cx, csr.cnt_sel);
    let f = fsm::fsm(&mut m, &cx, &io, &bar, &csr, &ram);
    fetch::fetch(&mut m, &cx, &io, &bar, &ram, &f);
    let d = fetch::dispatch(&mut m, &cx, &io, &f);
    let post = cpl::post(&mut m, &cx, &io, &ram, &bar, &f, &d);
    irq::coalesce(&mut m, &cx, &io, &csr, &f, &post);
    stats::counters(&mut m, &cx, &io, &bar, &f, &d);
    stats::latency(&mut m, &cx, &bar, &post);
    m.finish()
}

fn ports(m: &mut ModuleBuilder, cx: &Ctx) -> Ports {
    let (p, w, vw, ba, u_csr) = (cx.p, cx.w, cx.vw, cx.ba, cx.u_csr);
    // ---------------------------------------------------------------- ports
    m.group("BAR0 (AXI4-Lite slave, host MMIO)");
    let bar_awvalid = m.input("s_bar_awvalid_i", 1);
    let bar_awready = m.output("s_bar_awready_o", 1);
    let bar_awaddr = m.input("s_bar_awaddr_i", ba);
    let bar_wvalid = m.input("s_bar_wvalid_i", 1);
    let bar_wready = m.output("s_bar_wready_o", 1);
    let bar_wdata = m.input("s_bar_wdata_i", 32);
    let bar_wstrb = m.input("s_bar_wstrb_i", 4);
    let bar_bvalid = m.output("s_bar_bvalid_o", 1);
    let bar_bready = m.input("s_bar_bready_i", 1);
    let bar_bresp = m.output("s_bar_bresp_o", 2);
    let bar_arvalid = m.input("s_bar_arvalid_i", 1);
    let bar_arready = m.output("s_bar_arready_o", 1);
    let bar_araddr = m.input("s_bar_araddr_i", ba);
    let bar_rvalid = m.output("s_bar_rvalid_o", 1);
    let bar_rready = m.input("s_bar_rready_i", 1);
    let bar_rdata = m.output("s_bar_rdata_o", 32);
    let bar_rresp = m.output("s_bar_rresp_o", 2);

    m.group("vendor CSRs (AXI4-Lite slave, firmware)");
    m.pass_through(u_csr, "s_axil_");

    m.group("host memory (AXI4 master): SQ fetch, CQ post");
    let arvalid = m.output("m_axi_arvalid_o", 1);
    let arready = m.input("m_axi_arready_i", 1);
    let araddr = m.output("m_axi_araddr_o", 64);
    let arlen = m.output("m_axi_arlen_o", 8);
    let arsize = m.output("m_axi_arsize_o", 3);
    let arburst = m.output("m_axi_arburst_o", 2);
    let rvalid = m.input("m_axi_rvalid_i", 1);
    let rready = m.output("m_axi_rready_o", 1);
    let rdata = m.input("m_axi_rdata_i", w);
    let rresp = m.input("m_axi_rresp_i", 2);
    let rlast = m.input("m_axi_rlast_i", 1);
    let awvalid = m.output("m_axi_awvalid_o", 1);
    let awready = m.input("m_axi_awready_i", 1);
    let awaddr = m.output("m_axi_awaddr_o", 64);
    let awlen = m.output("m_axi_awlen_o", 8);
    let awsize = m.output("m_axi_awsize_o", 3);
    let awburst = m.output("m_axi_awburst_o", 2);
    let wvalid = m.output("m_axi_wvalid_o", 1);
    let wready = m.input("m_axi_wready_i", 1);
    let wdata = m.output("m_axi_wdata_o", w);
    let wstrb = m.output("m_axi_wstrb_o", w / 8);
    let wlast = m.output("m_axi_wlast_o", 1);
    let bvalid = m.input("m_axi_bvalid_i", 1);
    let bready = m.output("m_axi_bready_o", 1);
    let bresp = m.input("m_axi_bresp_i", 2);

    m.group("I/O commands out, I/O completions in");
    let io_cmd = m.stream_out(
        "io_cmd",
        &StreamDef::new().field("sqid", 16).field("sqe", 512),
    );
    let cpl_def = StreamDef::new()
        .field("sqid", 16)
        .field("cid", 16)
        .field("status", 15)
        .field("dw0", 32);
    let io_cpl = m.stream_in("io_cpl", &cpl_def);
    let sq_space = m.input("sq_space_i", p.io_queues);
    m.group("admin and fallback I/O commands to firmware, their completions from firmware");
    let adm_cmd = m.stream_out(
        "admin_cmd",
        &StreamDef::new().field("sqid", 16).field("sqe", 512),
    );
    let adm_cpl = m.stream_in(
        "admin_cpl",
        &StreamDef::new()
            .field("sqid", 16)
            .field("cid", 16)
            .field("status", 15)
            .field("dw0", 32),
    );
    m.group("interrupts (MSI-X vector numbers)");
    let irq = m.stream_out("irq", &StreamDef::new().field("vector", vw));
    m.group("configuration for the rest of the chip");
    let mps_o = m.output("mps_o", 4);
    Ports {
        bar_awvalid,
        bar_awready,
        bar_awaddr,
        bar_wvalid,
        bar_wready,
        bar_wdata,
        bar_wstrb,
        bar_bvalid,
        bar_bready,
        bar_bresp,
        bar_arvalid,
        bar_arready,
        bar_araddr,
        bar_rvalid,
        bar_rready,
        bar_rdata,
        bar_rresp,
        arvalid,
        arready,
        araddr,
        arlen,
        arsize,
        arburst,
        rvalid,
        rready,
        rdata,
        rresp,
        rlast,
        awvalid,
        awready,
        awaddr,
        awlen,
        awsize,
        awburst,
        wvalid,
        wready,
        wdata,
        wstrb,
        wlast,
        bvalid,
        bready,
        bresp,
        io_cmd,
        io_cpl,
        sq_space,
        adm_cmd,
        adm_cpl,
        irq,
        mps_o,
    }
}

fn rams(m: &mut ModuleBuilder, cx: &Ctx, cnt_sel: Sig) -> Rams {
    let (qw, iw, nq, u_csr) = (cx.qw, cx.iw, cx.nq, cx.u_csr);
    let (sql, cql) = (&cx.sql, &cx.cql);
    // ---------------------------------------------------------------- queue state RAMs
    let sq_mem = m.memory("sq_state", sql.width(), nq + 1);
    let hd_mem = m.memory("sq_arrived", iw, nq + 1);
    let cq_mem = m.memory("cq_state", cql.width(), nq + 1);
    let sq_re = m.wire("sq_re", 1);
    let sq_raddr = m.wire("sq_raddr", qw);
    let cq_re = m.wire("cq_re", 1);
    let cq_raddr = m.wire("cq_raddr", qw);
    let sq_we = m.wire("sq_we", 1);
    let sq_waddr = m.wire("sq_waddr", qw);
    let sq_wdata = m.wire("sq_wdata", sql.width());
    let cq_we = m.wire("cq_we", 1);
    let cq_waddr = m.wire("cq_waddr", qw);
    let cq_wdata = m.wire("cq_wdata", cql.width());
    let fsm_hd_we = m.wire("fsm_hd_we", 1);
    let sq_rd = m.mem_read(sq_mem, sq_re, sq_raddr);
    let hd_rd = m.mem_read(hd_mem, sq_re, sq_raddr);
    let cq_rd = m.mem_read(cq_mem, cq_re, cq_raddr);
    let cnt_rd = m.mem_read(sq_mem, lit(1, 1), cnt_sel.resize(qw));
    // The SQ and CQ words are written a cycle after the FSM's state decides them, from
    // registers, for the clock (the word's logic and its mux over the states stay off the
    // LUTRAM's write port). No read sees the difference: the FSM reads a queue's words at the
    // earliest two cycles after it wrote them (a write state, then IDLE, then ST_READ).
    let write_behind =
        |m: &mut ModuleBuilder, mem: Mem, name: &str, we: Sig, addr: Sig, data: Sig| {
            let we_q = m.reg(&format!("{name}_wr_en"), 1, 0);
            let addr_q = m.reg_noreset(&format!("{name}_wr_addr"), addr.width());
            let data_q = m.reg_noreset(&format!("{name}_wr_data"), data.width());
            m.assign(we_q.d, we);
            m.assign(addr_q.d, addr);
            m.assign(data_q.d, data);
            m.mem_write(mem, we_q.q, addr_q.q, data_q.q);
        };
    write_behind(m, sq_mem, "sq", sq_we, sq_waddr, sq_wdata);
    // The timed command of each SQ: {valid, CID, direction}, made invalid when a doorbell arms
    // the sampler and written when the timed SQE arrives, read with the SQ word for a
    // completion (so a completion that comes between the two never matches a stale CID).
    let lc_mem = m.memory("lat_cmd", 19, nq + 1);
    let lc_rd = m.mem_read(lc_mem, sq_re, sq_raddr);
    write_behind(m, cq_mem, "cq", cq_we, cq_waddr, cq_wdata);
    let cnt_ok = m.reg("cnt_ok", 1, 0);
    m.assign(cnt_ok.d, cnt_sel.le(nq));
    m.bind(
        u_csr,
        "cnt_fetched_value_i",
        mux(cnt_ok.q, sql.get(cnt_rd, "fetched"), lit(32, 0)),
    );
    m.bind(
        u_csr,
        "cnt_completed_value_i",
        mux(cnt_ok.q, sql.get(cnt_rd, "completed"), lit(32, 0)),
    );
    m.unused("cnt_rd_rest", cnt_rd.slice(sql.width() - 65, 0));

    // Fields of the words read.
    let s_en = m.net("s_en", sql.get(sq_rd, "en"));
    let s_act = m.net("s_act", sql.get(sq_rd, "act"));
    let s_prio = m.net("s_prio", sql.get(sq_rd, "prio"));
    let s_cqid = m.net("s_cqid", sql.get(sq_rd, "cqid"));
    let s_size = m.net("s_size", sql.get(sq_rd, "size"));
    let s_head = m.net("s_head", sql.get(sq_rd, "head"));
    let s_tail = m.net("s_tail", sql.get(sq_rd, "tail"));
    let s_base = m.net("s_base", sql.get(sq_rd, "base"));
    let s_smp = m.net("s_smp", sql.get(sq_rd, "smp"));
    let s_smp_idx = m.net("s_smp_idx", sql.get(sq_rd, "smp_idx"));
    let s_smp_t = m.net("s_smp_t", sql.get(sq_rd, "smp_t"));
    let s_fetched = m.net("s_fetched", sql.get(sq_rd, "fetched"));
    let s_completed = m.net("s_completed", sql.get(sq_rd, "completed"));
    let c_en = m.net("c_en", cql.get(cq_rd, "en"));
    let c_ien = m.net("c_ien", cql.get(cq_rd, "ien"));
    let c_phase = m.net("c_phase", cql.get(cq_rd, "phase"));
    let c_vec = m.net("c_vec", cql.get(cq_rd, "vec"));
    let c_size = m.net("c_size", cql.get(cq_rd, "size"));
    let c_head = m.net("c_head", cql.get(cq_rd, "head"));
    let c_tail = m.net("c_tail", cql.get(cq_rd, "tail"));
    let c_next = m.net("c_next", cql.get(cq_rd, "next"));
    let c_base = m.net("c_base", cql.get(cq_rd, "base"));
    Rams {
        hd_mem,
        lc_mem,
        sq_re,
        sq_raddr,
        cq_re,
        cq_raddr,
        sq_we,
        sq_waddr,
        sq_wdata,
        cq_we,
        cq_waddr,
        cq_wdata,
        fsm_hd_we,
        sq_rd,
        hd_rd,
        cq_rd,
        lc_rd,
        s_en,
        s_act,
        s_prio,
        s_cqid,
        s_size,
        s_head,
        s_tail,
        s_base,
        s_smp,
        s_smp_idx,
        s_smp_t,
        s_fetched,
        s_completed,
        c_en,
        c_ien,
        c_phase,
        c_vec,
        c_size,
        c_head,
        c_tail,
        c_next,
        c_base,
    }
}
