//! `nvme_ctrl`: BAR0, queue state, SQ fetch and arbitration, dispatch, CQ post and interrupt
//! coalescing. The interfaces and the policies are documented in the [module above](super).

use super::params::{
    register_map, NvmeParams, MAX_WRITES, OP_CREATE_CQ, OP_CREATE_SQ, OP_DELETE_CQ, OP_DELETE_SQ,
};
use crate::blocks::{arbiter::rr_arbiter, fifo::fifo};
use hdl_builder::prelude::*;
use hdl_builder::Errors;
use std::rc::Rc;

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

    // ---------------------------------------------------------------- BAR0
    let cc = m.reg("cc", 24, 0);
    let aqa = m.reg("aqa", 32, 0);
    let asq = m.reg("asq", 52, 0);
    let acq = m.reg("acq", 52, 0);
    let intm = m.reg("intm", 32, 0);
    let rdy = m.reg("rdy", 1, 0);
    let cfs = m.reg("cfs", 1, 0);
    let shst = m.reg("shst", 2, 0);
    let bar_b = m.reg("bar_bvalid", 1, 0);
    let bar_r = m.reg("bar_rvalid", 1, 0);
    let bar_rd = m.reg("bar_rdata", 32, 0);
    let db_pend = m.reg("db_pend", 1, 0);
    let db_qid = m.reg("db_qid", 16, 0);
    let db_cq = m.reg("db_cq", 1, 0);
    let db_val = m.reg("db_val", 16, 0);
    let db_take = m.wire("db_take", 1);

    let wacc = m.net("bar_wacc", bar_awvalid & bar_wvalid & !bar_b.q & !db_pend.q);
    m.assign(bar_awready, wacc);
    m.assign(bar_wready, wacc);
    m.assign(bar_b.d, wacc | (bar_b.q & !bar_bready));
    m.assign(bar_bvalid, bar_b.q);
    m.assign(bar_bresp, 0);
    let wmask = m.net(
        "bar_wmask",
        cat((0..4).rev().map(|i| bar_wstrb.bit(i).repeat(8))),
    );
    let wa_reg = m.net("bar_wa_reg", bar_awaddr.slice(ba - 1, 12).eq(0));
    let wa_word = m.net("bar_wa_word", bar_awaddr.slice(11, 2));
    let merge = |old: Expr| (old & !wmask) | (bar_wdata & wmask);
    let wr = |i: u64| wacc & wa_reg & wa_word.eq(i);
    let cc_w = m.net("cc_write", wr(5));
    let cc_new = m.net(
        "cc_new",
        (merge(cc.q.zext(32)) & lit(32, 0x00ff_fff1)).slice(23, 0),
    );
    m.assign(cc.d, mux(cc_w, cc_new, cc.q));
    let aqa_w = m.net("aqa_write", wr(9));
    m.assign(
        aqa.d,
        mux(aqa_w, merge(aqa.q.ex()) & lit(32, 0x0fff_0fff), aqa.q),
    );
    let asq_lo = m.net("asq_lo_write", wr(10));
    let asq_hi = m.net("asq_hi_write", wr(11));
    let acq_lo = m.net("acq_lo_write", wr(12));
    let acq_hi = m.net("acq_hi_write", wr(13));
    let asq_lo_new = m.net(
        "asq_lo_new",
        merge(cat([asq.q.slice(19, 0), zeros(12)])).slice(31, 12),
    );
    let asq_hi_new = m.net("asq_hi_new", merge(asq.q.slice(51, 20)));
    m.assign(
        asq.d,
        mux(
            asq_lo,
            cat([asq.q.slice(51, 20), asq_lo_new.ex()]),
            mux(
                asq_hi,
                cat([asq_hi_new.ex(), asq.q.slice(19, 0)]),
                asq.q.ex(),
            ),
        ),
    );
    let acq_lo_new = m.net(
        "acq_lo_new",
        merge(cat([acq.q.slice(19, 0), zeros(12)])).slice(31, 12),
    );
    let acq_hi_new = m.net("acq_hi_new", merge(acq.q.slice(51, 20)));
    m.assign(
        acq.d,
        mux(
            acq_lo,
            cat([acq.q.slice(51, 20), acq_lo_new.ex()]),
            mux(
                acq_hi,
                cat([acq_hi_new.ex(), acq.q.slice(19, 0)]),
                acq.q.ex(),
            ),
        ),
    );
    let intms_w = m.net("intms_write", wr(3));
    let intmc_w = m.net("intmc_write", wr(4));
    let wbits = m.net("bar_wbits", bar_wdata & wmask);
    m.assign(
        intm.d,
        mux(
            intms_w,
            intm.q | wbits,
            mux(intmc_w, intm.q & !wbits, intm.q.ex()),
        ),
    );
    let cc_en = m.net("cc_en", cc.q.bit(0));
    let ams_wrr = m.net("ams_wrr", cc.q.slice(13, 11).eq(1));
    let shn = m.net("cc_shn", cc.q.slice(15, 14));
    m.assign(shst.d, mux(shn.ne(0), lit(2, 2), lit(2, 0)));
    m.assign(mps_o, cc.q.slice(10, 7));

    // Doorbells: 1000h + (2y [+1]) * (4 << DSTRD).
    let db_off = m.net("db_off", bar_awaddr - lit(ba, 0x1000));
    let slot_lo = 2 + p.stride;
    let db_slot = m.net("db_slot", db_off.slice(ba - 1, slot_lo));
    let aligned: Expr = if p.stride == 0 {
        lit(1, 1)
    } else {
        db_off.slice(slot_lo - 1, 2).eq(0)
    };
    let db_hit = m.net("db_hit", wacc & !wa_reg & aligned);
    let slot_w = ba - slot_lo;
    let slot_qid = if slot_w > 16 {
        db_slot.slice(16, 1)
    } else {
        db_slot.slice(slot_w - 1, 1).zext(16)
    };
    m.assign(db_pend.d, db_hit | (db_pend.q & !db_take));
    m.assign(db_qid.d, mux(db_hit, slot_qid, db_qid.q));
    m.assign(db_cq.d, mux(db_hit, db_slot.bit(0), db_cq.q));
    m.assign(db_val.d, mux(db_hit, bar_wdata.slice(15, 0), db_val.q));
    // Latency timestamps: a free-running cycle count; a doorbell's is its acceptance cycle.
    let now = m.reg("lat_now", 32, 0);
    m.assign(now.d, now.q + 1);
    let db_time = m.reg("db_time", 32, 0);
    m.assign(db_time.d, mux(db_hit, now.q, db_time.q));
    m.unused(
        "bar_awaddr_lo",
        cat([bar_awaddr.slice(1, 0), db_off.slice(1, 0)]),
    );

    // Reads.
    let racc = m.net("bar_racc", bar_arvalid & !bar_r.q);
    m.assign(bar_arready, racc);
    m.assign(bar_r.d, racc | (bar_r.q & !bar_rready));
    m.assign(bar_rvalid, bar_r.q);
    m.assign(bar_rresp, 0);
    m.assign(bar_rdata, bar_rd.q);
    let cap_lo = u64::from(p.max_depth - 1) | 1 << 16 | 1 << 17 | 0x10 << 24;
    let cap_hi = u64::from(p.stride) | 1 << 5 | 4 << 20;
    let ra_reg = m.net("bar_ra_reg", bar_araddr.slice(ba - 1, 12).eq(0));
    let ra_word = m.net("bar_ra_word", bar_araddr.slice(11, 2));
    m.unused("bar_araddr_lo", bar_araddr.slice(1, 0));
    let rval = m.wire("bar_rval", 32);
    m.comb(|c| {
        c.set(rval, 0);
        c.if_(ra_reg, |c| {
            c.case(ra_word, |a| {
                a.arm(0u64, |c| c.set(rval, lit(32, cap_lo.into())));
                a.arm(1u64, |c| c.set(rval, lit(32, cap_hi.into())));
                a.arm(2u64, |c| c.set(rval, lit(32, 0x0001_0400)));
                a.arms(vec![3u64, 4], |c| c.set(rval, intm.q));
                a.arm(5u64, |c| c.set(rval, cc.q.zext(32)));
                a.arm(7u64, |c| {
                    c.set(rval, cat([zeros(28), shst.q.ex(), cfs.q.ex(), rdy.q.ex()]))
                });
                a.arm(9u64, |c| c.set(rval, aqa.q));
                a.arm(10u64, |c| c.set(rval, cat([asq.q.slice(19, 0), zeros(12)])));
                a.arm(11u64, |c| c.set(rval, asq.q.slice(51, 20)));
                a.arm(12u64, |c| c.set(rval, cat([acq.q.slice(19, 0), zeros(12)])));
                a.arm(13u64, |c| c.set(rval, acq.q.slice(51, 20)));
                a.default(|_| {});
            });
        });
    });
    m.assign(bar_rd.d, mux(racc, rval, bar_rd.q));

    // ---------------------------------------------------------------- vendor CSRs
    let q_base_lo = m.bind_out(u_csr, "q_base_lo_addr_o");
    let q_base_hi = m.bind_out(u_csr, "q_base_hi_addr_o");
    let q_size = m.bind_out(u_csr, "q_cfg_size_o");
    let q_prio = m.bind_out(u_csr, "q_cfg_prio_o");
    let q_ien = m.bind_out(u_csr, "q_cfg_ien_o");
    let q_cqid = m.bind_out(u_csr, "q_bind_cqid_o");
    let q_vec = m.bind_out(u_csr, "q_bind_vector_o");
    let q_cmd_qid = m.bind_out(u_csr, "q_cmd_qid_o");
    let q_cmd_op = m.bind_out(u_csr, "q_cmd_op_o");
    let q_cmd_we = m.bind_out(u_csr, "q_cmd_op_we_o");
    let arb_ab = m.bind_out(u_csr, "arb_ab_o");
    let arb_lpw = m.bind_out(u_csr, "arb_lpw_o");
    let arb_mpw = m.bind_out(u_csr, "arb_mpw_o");
    let arb_hpw = m.bind_out(u_csr, "arb_hpw_o");
    let co_thr = m.bind_out(u_csr, "coalesce_thr_o");
    let co_time = m.bind_out(u_csr, "coalesce_time_o");
    let co_tick = m.bind_out(u_csr, "coal_tick_cycles_o");
    let vc_vec = m.bind_out(u_csr, "vec_cfg_vector_o");
    let vc_cd = m.bind_out(u_csr, "vec_cfg_cd_o");
    let vc_we = m.bind_out(u_csr, "vec_cfg_cd_we_o");
    let cnt_sel = m.bind_out(u_csr, "cnt_sel_qid_o");

    // Firmware queue operation, captured when q_cmd is written.
    let op_pend = m.reg("op_pend", 1, 0);
    let op_code = m.reg("op_code", 3, 0);
    let op_qid = m.reg("op_qid", 16, 0);
    let op_base = m.reg("op_base", 52, 0);
    let op_size = m.reg("op_size", iw, 0);
    let op_prio = m.reg("op_prio", 2, 0);
    let op_ien = m.reg("op_ien", 1, 0);
    let op_cqid = m.reg("op_cqid", qw, 0);
    let op_vec = m.reg("op_vec", vw, 0);
    let op_take = m.wire("op_take", 1);
    let op_load = m.net("op_load", q_cmd_we & !op_pend.q);
    m.assign(op_pend.d, op_load | (op_pend.q & !op_take));
    m.assign(op_code.d, mux(op_load, q_cmd_op, op_code.q));
    m.assign(op_qid.d, mux(op_load, q_cmd_qid, op_qid.q));
    m.assign(
        op_base.d,
        mux(op_load, cat([q_base_hi.ex(), q_base_lo.ex()]), op_base.q),
    );
    m.assign(op_size.d, mux(op_load, q_size.resize(iw), op_size.q));
    m.assign(op_prio.d, mux(op_load, q_prio, op_prio.q));
    m.assign(op_ien.d, mux(op_load, q_ien, op_ien.q));
    m.assign(op_cqid.d, mux(op_load, q_cqid.resize(qw), op_cqid.q));
    m.assign(op_vec.d, mux(op_load, q_vec.resize(vw), op_vec.q));
    m.unused(
        "csr_high_bits",
        cat([
            q_size.ex(),
            q_cqid.ex(),
            q_vec.ex(),
            vc_vec.ex(),
            cnt_sel.ex(),
        ]),
    );
    m.bind(u_csr, "status_busy_i", op_pend.q);
    m.bind(u_csr, "status_cc_en_i", cc_en);
    m.bind(u_csr, "status_rdy_i", rdy.q);
    m.bind(u_csr, "status_cfs_i", cfs.q);

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
    m.mem_write(sq_mem, sq_we, sq_waddr, sq_wdata);
    // The timed command of each SQ: {valid, CID, direction}, made invalid when a doorbell arms
    // the sampler and written when the timed SQE arrives, read with the SQ word for a
    // completion (so a completion that comes between the two never matches a stale CID).
    let lc_mem = m.memory("lat_cmd", 19, nq + 1);
    let lc_rd = m.mem_read(lc_mem, sq_re, sq_raddr);
    m.mem_write(cq_mem, cq_we, cq_waddr, cq_wdata);
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
    let c_base = m.net("c_base", cql.get(cq_rd, "base"));

    // Ring arithmetic in idx_width + 1 bits: distance from `b` forward to `a` in a ring of size1.
    let kw = (iw + 1).max(8).max(cw);
    let s_size1 = m.net("s_size1", s_size.zext(kw) + 1);
    let c_size1 = m.net("c_size1", c_size.zext(kw) + 1);
    let dist = |a: Expr, b: Expr, size1: Sig| -> Expr {
        let (a, b) = (a.zext(kw), b.zext(kw));
        mux(a.ge(&b), &a - &b, a + size1 - b)
    };

    // ---------------------------------------------------------------- FSM state
    let st_ty = m.enum_type(
        "fsm_state",
        &[
            "ST_IDLE",
            "ST_DB",
            "ST_OP",
            "ST_CPL_SQ",
            "ST_CPL_CQ",
            "ST_FETCH",
            "ST_CLEAR",
            "ST_DRAIN",
        ],
    );
    // A hardware reset starts with the sweep a controller reset runs: the queue RAMs (their
    // enable bits above all) have no reset of their own and hold anything after power-up.
    let st = m.reg_enum("state", &st_ty, st_ty.item("ST_CLEAR"));
    let flush = m.reg("flush", 1, 1);
    let clear_idx = m.reg("clear_idx", qw, 0);
    let adm_act = m.reg("adm_act", 1, 0);
    let wrr_cls = m.reg("wrr_cls", 2, 1);
    let wrr_cnt = m.reg("wrr_cnt", 9, 0);
    let cur_qid = m.reg("cur_qid", qw, 0);
    let cur_cls = m.reg("cur_cls", 2, 0);
    let credits = m.reg("credits", cw, u64::from(p.fetch_slots));

    // Class FIFOs (urgent, high, medium, low): queues with work, each at most once overall.
    // A head whose sq_space bit is low is rotated to the back of its FIFO (in IDLE, one per
    // class per cycle); after a whole circle of ineligible heads the class counts as blocked.
    let push_en = m.wire("push_en", 1);
    let push_cls = m.wire("push_cls", 2);
    let push_qid = m.wire("push_qid", qw);
    let pop_en = m.wire("pop_en", 1);
    let in_idle = m.net("in_idle", st.q.eq(st_ty.item("ST_IDLE")));
    let cfw = clog2(u64::from(p.io_queues) + 3);
    let mut cls_v = Vec::new();
    let mut cls_d = Vec::new();
    let mut cls_rdy = Vec::new();
    let mut cls_ok = Vec::new();
    let mut cls_mid = Vec::new();
    for (i, name) in ["urgent", "high", "medium", "low"].iter().enumerate() {
        let u = m.instance(&format!("u_sched_{name}"), &cls_fifo);
        let sv = m.wire(&format!("sched_{name}_push"), 1);
        let sd = m.wire(&format!("sched_{name}_push_qid"), qw);
        m.bind(u, "s_valid_i", sv);
        m.bind(u, "s_data_i", sd);
        let sr = m.bind_out(u, "s_ready_o");
        m.unused(&format!("sched_{name}_s_ready"), sr);
        let v = m.bind_out(u, "m_valid_o");
        let d = m.bind_out(u, "m_data_o");
        let c = m.bind_out(u, "count_o");
        let r = m.wire(&format!("sched_{name}_ready"), 1);
        m.bind(u, "m_ready_i", r);
        let head_elig = m.net(
            &format!("sched_{name}_head_eligible"),
            d.eq(0) | sq_space.shr_by(d - 1).bit(0),
        );
        let ok = m.net(&format!("sched_{name}_ok"), v & head_elig);
        let rot = m.net(
            &format!("sched_{name}_rotate"),
            in_idle & !flush.q & v & !head_elig,
        );
        let circ = m.reg(&format!("sched_{name}_skips"), cfw, 0);
        let blocked = m.net(
            &format!("sched_{name}_blocked"),
            circ.q
                .zext(cfw.max(c.width()))
                .ge(c.zext(cfw.max(c.width()))),
        );
        let fsm_push = m.net(
            &format!("sched_{name}_fsm_push"),
            push_en & push_cls.eq(i as u64),
        );
        m.assign(
            circ.d,
            mux(
                flush.q | fsm_push | !v | head_elig,
                lit(cfw, 0),
                mux(rot & !blocked, circ.q + 1, circ.q.ex()),
            ),
        );
        m.assign(sv, fsm_push | rot);
        m.assign(sd, mux(rot, d.ex(), push_qid.ex()));
        let mid = m.net(&format!("sched_{name}_rotating"), v & !head_elig & !blocked);
        cls_v.push(v);
        cls_d.push(d);
        cls_rdy.push((r, rot));
        cls_ok.push(ok);
        cls_mid.push(mid);
    }
    let cur_cls_sig = m.wire("pick_cls", 2);
    for (i, (r, rot)) in cls_rdy.iter().enumerate() {
        m.assign(*r, flush.q | *rot | (pop_en & cur_cls_sig.eq(i as u64)));
    }

    // Completion sources: 0 internal errors, 1 admin (firmware), 2 I/O.
    let icpl_v = m.reg("icpl_valid", 1, 0);
    let icpl_sqid = m.reg("icpl_sqid", qw, 0);
    let icpl_cid = m.reg("icpl_cid", 16, 0);
    let icpl_st = m.reg("icpl_status", 15, 0);
    let u_arb = m.instance("u_cpl_arbiter", &arb);
    m.bind(
        u_arb,
        "req_i",
        cat([io_cpl.valid.ex(), adm_cpl.valid.ex(), icpl_v.q.ex()]),
    );
    let cpl_take = m.wire("cpl_take", 1);
    m.bind(u_arb, "ready_i", cpl_take);
    let cpl_v = m.bind_out(u_arb, "valid_o");
    let gnt = m.bind_out(u_arb, "gnt_o");
    let gidx = m.bind_out(u_arb, "gnt_idx_o");
    m.unused("cpl_gnt_idx", gidx);
    m.assign(adm_cpl.ready, cpl_take & gnt.bit(1));
    m.assign(io_cpl.ready, cpl_take & gnt.bit(2));
    let x_sqid = m.net(
        "cpl_sqid",
        mux(
            gnt.bit(0),
            icpl_sqid.q.zext(16),
            mux(
                gnt.bit(1),
                adm_cpl.field("sqid").ex(),
                io_cpl.field("sqid").ex(),
            ),
        ),
    );
    let x_cid = m.net(
        "cpl_cid",
        mux(
            gnt.bit(0),
            icpl_cid.q.ex(),
            mux(gnt.bit(1), adm_cpl.field("cid"), io_cpl.field("cid")),
        ),
    );
    let x_status = m.net(
        "cpl_status",
        mux(
            gnt.bit(0),
            icpl_st.q.ex(),
            mux(gnt.bit(1), adm_cpl.field("status"), io_cpl.field("status")),
        ),
    );
    let x_dw0 = m.net(
        "cpl_dw0",
        mux(
            gnt.bit(0),
            lit(32, 0),
            mux(gnt.bit(1), adm_cpl.field("dw0"), io_cpl.field("dw0")),
        ),
    );
    let x_bad = m.net("cpl_bad_sqid", x_sqid.gt(nq));

    // AXI channel state.
    let ar_v = m.reg("ar_valid", 1, 0);
    let ar_addr = m.reg("ar_addr", 64, 0);
    let ar_len = m.reg("ar_len", 8, 0);
    let aw_v = m.reg("aw_valid", 1, 0);
    let aw_addr = m.reg("aw_addr", 64, 0);
    let w_v = m.reg("w_valid", 1, 0);
    let w_beat = m.reg("w_beat", 1, 0);
    let cqe = m.reg_noreset("cqe", 128);
    let ar_issue = m.wire("ar_issue", 1);
    let aw_issue = m.wire("aw_issue", 1);

    let u_desc = m.instance("u_fetch_desc", &desc_fifo);
    let u_fb = m.instance("u_fetch_buf", &fb_fifo);
    let u_pb = m.instance("u_post_pending", &pb_fifo);
    let desc_room = m.bind_out(u_desc, "s_ready_o");
    let pb_room = m.bind_out(u_pb, "s_ready_o");

    // ---------------------------------------------------------------- decisions in IDLE
    let live = m.net("live", rdy.q & !cfs.q);
    let go_reset = m.net("go_reset", !cc_en & rdy.q);
    let go_enable = m.net("go_enable", cc_en & !rdy.q);
    let db_bad_qid = m.net("db_bad_qid", db_qid.q.gt(nq));
    let op_bad = m.net(
        "op_bad",
        op_qid.q.gt(nq) | op_qid.q.eq(0) | op_code.q.eq(0) | op_code.q.gt(OP_DELETE_CQ),
    );
    let aw_free = m.net("aw_free", !aw_v.q & !w_v.q);
    let can_post = m.net("can_post", aw_free & pb_room);
    let cls_any = m.net("sched_any", cls_v[0] | cls_v[1] | cls_v[2] | cls_v[3]);
    // A decision waits while some class is rotating ineligible heads away, so it sees every
    // class either with an eligible head, empty, or blocked (no eligible queue at all).
    let cls_ok_any = m.net(
        "sched_ok_any",
        cls_ok[0] | cls_ok[1] | cls_ok[2] | cls_ok[3],
    );
    let cls_rotating = m.net(
        "sched_rotating",
        cls_mid[0] | cls_mid[1] | cls_mid[2] | cls_mid[3],
    );
    let can_fetch = m.net(
        "can_fetch",
        live & !ar_v.q
            & credits.q.ge(u64::from(p.fetch_burst))
            & desc_room
            & (adm_act.q | cls_ok_any & !cls_rotating),
    );
    // Weighted round robin among high (1), medium (2), low (3).
    let weight = |c: Expr| -> Expr {
        mux(
            c.eq(1),
            arb_hpw.zext(9),
            mux(c.eq(2), arb_mpw.zext(9), arb_lpw.zext(9)),
        )
    };
    let valid_of = |c: Expr| -> Expr {
        mux(
            c.eq(1),
            cls_ok[1].ex(),
            mux(c.eq(2), cls_ok[2].ex(), cls_ok[3].ex()),
        )
    };
    let next_cls = |c: Expr| -> Expr { mux(c.eq(3), lit(2, 1), &c + 1) };
    let n1 = m.net("wrr_next1", next_cls(wrr_cls.q.ex()));
    let n2 = m.net("wrr_next2", next_cls(n1.ex()));
    let cur_ok = m.net(
        "wrr_cur_ok",
        valid_of(wrr_cls.q.ex()) & wrr_cnt.q.le(weight(wrr_cls.q.ex())),
    );
    let wrr_pick = m.net(
        "wrr_pick",
        mux(
            cur_ok,
            wrr_cls.q.ex(),
            mux(
                valid_of(n1.ex()),
                n1.ex(),
                mux(valid_of(n2.ex()), n2.ex(), wrr_cls.q.ex()),
            ),
        ),
    );
    // Weights count commands: the class keeps the turn while it has used fewer than
    // weight + 1 commands of this round; a new turn starts at 0 (the fetch adds its SQEs).
    let wrr_cnt_new = m.net("wrr_cnt_new", mux(cur_ok, wrr_cnt.q.ex(), lit(9, 0)));
    m.assign(cur_cls_sig, mux(cls_ok[0], lit(2, 0), wrr_pick.ex()));
    let pick_qid = m.net(
        "pick_qid",
        mux(
            cur_cls_sig.eq(0),
            cls_d[0].ex(),
            mux(
                cur_cls_sig.eq(1),
                cls_d[1].ex(),
                mux(cur_cls_sig.eq(2), cls_d[2].ex(), cls_d[3].ex()),
            ),
        ),
    );

    // ---------------------------------------------------------------- FETCH computations
    let f_avail = m.net("f_avail", dist(s_tail.ex(), s_head.ex(), s_size1));
    let f_to_end = m.net("f_to_end", s_size1 - s_head.zext(kw));
    let f_to_4k: Expr = if iw > 6 {
        (lit(kw, 64) - s_head.slice(5, 0).zext(kw)).ex()
    } else {
        lit(kw, 64)
    };
    let ab_lim = m.net(
        "f_ab_limit",
        mux(
            arb_ab.eq(7),
            lit(kw, u128::from(p.fetch_burst)),
            min(
                lit(kw, 1).shl_by(arb_ab),
                lit(kw, u128::from(p.fetch_burst)),
            ),
        ),
    );
    // What is left of the WRR class's turn (weight + 1 - used), capped at fetch_burst; no
    // cap for the admin queue and the urgent class (and in round-robin mode).
    let turn_left = m.net(
        "f_turn_left",
        min(
            weight(cur_cls.q.ex()) + 1 - wrr_cnt.q,
            lit(9, u128::from(p.fetch_burst)),
        ),
    );
    // At most fetch_burst (<= 64), so bits at and above kw (>= 8) are zero when kw < 9.
    let turn_left_k: Expr = if kw >= 9 {
        turn_left.zext(kw)
    } else {
        m.unused("f_turn_left_hi", turn_left.slice(8, kw));
        turn_left.slice(kw - 1, 0)
    };
    let in_wrr_turn = m.net("f_in_wrr_turn", ams_wrr & cur_qid.q.ne(0) & cur_cls.q.ne(0));
    let f_lim = m.net(
        "f_limit",
        min(
            min(ab_lim.ex(), credits.q.zext(kw)),
            mux(in_wrr_turn, turn_left_k, lit(kw, u128::from(p.fetch_burst))),
        ),
    );
    let f_n_wide = m.net(
        "f_n_wide",
        min(min(f_avail.ex(), f_to_end.ex()), min(f_to_4k, f_lim.ex())),
    );
    let f_n = m.net("f_n", f_n_wide.slice(nb - 1, 0));
    let f_head_sum = m.net("f_head_sum", s_head.zext(kw) + f_n_wide);
    let f_head_new = m.net(
        "f_head_new",
        mux(
            f_head_sum.eq(s_size1),
            lit(iw, 0),
            f_head_sum.slice(iw - 1, 0),
        ),
    );
    let f_more = m.net("f_more", f_head_new.ne(s_tail));
    // The sampler's armed entry is in this burst: its SQE is the timed command.
    let f_smp_off = m.net("f_smp_off", dist(s_smp_idx.ex(), s_head.ex(), s_size1));
    let f_timed = m.net("f_timed", s_smp.eq(1) & f_smp_off.lt(f_n_wide));
    let space_idx = m.net("space_idx", cur_qid.q - 1);
    let f_elig = m.net(
        "f_eligible",
        cur_qid.q.eq(0) | sq_space.shr_by(space_idx).bit(0),
    );
    let s_cls = m.net("s_class", mux(ams_wrr, s_prio.ex(), lit(2, 0)));
    let f_addr = m.net(
        "f_addr",
        cat([s_base.ex(), zeros(12)]) + cat([zeros(64 - iw - 6), s_head.ex(), zeros(6)]),
    );
    let lb = clog2(u64::from(bps)).min(if bps == 1 { 0 } else { 32 });
    let f_len = m.net(
        "f_len",
        (f_n.zext(9).shl_by(lit(4, u128::from(lb))) - 1).slice(7, 0),
    );

    // DB computations.
    let d_val = m.net("db_value", db_val.q.ex());
    let d_val_i = m.net("db_value_idx", db_val.q.resize(iw));
    let d_sq_bad = m.net("db_sq_value_bad", d_val.gt(s_size.zext(16)));
    let d_cq_over = m.net(
        "db_cq_past_tail",
        dist(d_val_i.ex(), c_head.ex(), c_size1).gt(dist(c_tail.ex(), c_head.ex(), c_size1)),
    );
    let d_cq_bad = m.net("db_cq_value_bad", d_val.gt(c_size.zext(16)) | d_cq_over);
    let d_newwork = m.net("db_new_work", d_val_i.ne(s_head) & !s_act);
    // The sampler is free for a doorbell accepted at db_time unless its last post came at or
    // after db_time (now - db_time is the window since; a post before it is further back).
    let smp_late = m.net(
        "smp_posted_since_db",
        (s_smp_t - db_time.q).le(now.q - db_time.q),
    );
    let smp_free = m.net("smp_free", s_smp.eq(0) | (s_smp.eq(3) & !smp_late));
    let smp_arm = m.net("smp_arm", db_qid.q.ne(0) & d_val_i.ne(s_tail) & smp_free);
    let db_arm = m.net("db_arm", !db_cq.q & s_en & !d_sq_bad & smp_arm);
    let r_timed = m.wire("r_timed", 1);
    let lc_inval = m.net(
        "lat_cmd_invalidate",
        st.q.eq(st_ty.item("ST_DB")) & db_arm & !r_timed,
    );

    // CPL computations.
    let p_tail_sum = m.net("p_tail_sum", c_tail.zext(kw) + 1);
    let p_wrap = m.net("p_wrap", p_tail_sum.eq(c_size1));
    let p_tail_new = m.net(
        "p_tail_new",
        mux(p_wrap, lit(iw, 0), p_tail_sum.slice(iw - 1, 0)),
    );
    let p_full = m.net("p_full", p_tail_new.eq(c_head));
    let lc_valid = m.net("lat_cmd_valid", lc_rd.bit(18));
    let lc_cid = m.net("lat_cmd_cid", lc_rd.slice(17, 2));
    let lc_dir = m.net("lat_cmd_dir", lc_rd.slice(1, 0));
    let p_timed = m.net("p_timed", s_smp.eq(2) & lc_valid & lc_cid.eq(x_cid));
    let p_addr = m.net(
        "p_addr",
        cat([c_base.ex(), zeros(12)]) + cat([zeros(64 - iw - 4), c_tail.ex(), zeros(4)]),
    );
    let p_cqe = m.net(
        "p_cqe",
        cat([
            x_status.ex(),
            c_phase.ex(),
            x_cid.ex(),
            x_sqid.ex(),
            hd_rd.zext(16),
            zeros(32),
            x_dw0.ex(),
        ]),
    );

    // Quiet: nothing in flight, for the end of a controller reset.
    let io_infl = m.reg("io_inflight", 32, 0);
    let adm_infl = m.reg("admin_inflight", 32, 0);
    let desc_v = m.wire("desc_valid", 1);
    let fb_v = m.wire("fb_valid", 1);
    let pb_v = m.wire("pb_valid", 1);
    let io_v = m.reg("io_cmd_valid", 1, 0);
    let adm_v = m.reg("admin_cmd_valid", 1, 0);
    let quiet = m.net(
        "quiet",
        !ar_v.q
            & !desc_v
            & !fb_v
            & !cls_any
            & !io_v.q
            & !adm_v.q
            & !icpl_v.q
            & io_infl.q.eq(0)
            & adm_infl.q.eq(0)
            & aw_free
            & !pb_v,
    );
    let r_hd_we = m.wire("r_hd_we", 1);
    let ev_reg = m.wire("ev_bad_db_reg", 1);
    let ev_val = m.wire("ev_bad_db_value", 1);
    let ctl_done = m.wire("reset_done", 1);

    let zero_iw = lit(iw, 0);
    let sq_admin = sql.pack(
        None,
        &[
            ("en", lit(1, 1)),
            ("size", aqa.q.slice(11, 0).resize(iw)),
            ("base", asq.q.ex()),
        ],
    );
    let cq_admin = cql.pack(
        None,
        &[
            ("en", lit(1, 1)),
            ("ien", lit(1, 1)),
            ("phase", lit(1, 1)),
            ("size", aqa.q.slice(27, 16).resize(iw)),
            ("base", acq.q.ex()),
        ],
    );
    let sq_create = sql.pack(
        None,
        &[
            ("en", lit(1, 1)),
            ("act", s_act.ex()),
            ("prio", op_prio.q.ex()),
            ("cqid", op_cqid.q.ex()),
            ("size", op_size.q.ex()),
            ("base", op_base.q.ex()),
        ],
    );
    let cq_create = cql.pack(
        None,
        &[
            ("en", lit(1, 1)),
            ("ien", op_ien.q.ex()),
            ("phase", lit(1, 1)),
            ("vec", op_vec.q.ex()),
            ("size", op_size.q.ex()),
            ("base", op_base.q.ex()),
        ],
    );
    let sq_delete = sql.pack(Some(sq_rd), &[("en", lit(1, 0))]);
    let cq_delete = cql.pack(Some(cq_rd), &[("en", lit(1, 0))]);
    let sq_db = sql.pack(
        Some(sq_rd),
        &[
            ("tail", d_val_i.ex()),
            ("act", s_act | d_newwork),
            ("smp", mux(smp_arm, lit(2, 1), s_smp.ex())),
            ("smp_idx", mux(smp_arm, s_tail.ex(), s_smp_idx.ex())),
            ("smp_t", mux(smp_arm, db_time.q.ex(), s_smp_t.ex())),
        ],
    );
    let cq_db = cql.pack(Some(cq_rd), &[("head", d_val_i.ex())]);
    let sq_idle = sql.pack(Some(sq_rd), &[("act", lit(1, 0))]);
    let sq_fetch = sql.pack(
        Some(sq_rd),
        &[
            ("head", f_head_new.ex()),
            ("act", f_more.ex()),
            ("fetched", s_fetched + f_n.zext(32)),
            ("smp", mux(f_timed, lit(2, 2), s_smp.ex())),
        ],
    );
    let sq_post = sql.pack(
        Some(sq_rd),
        &[
            ("completed", s_completed + 1),
            ("smp", mux(p_timed, lit(2, 3), s_smp.ex())),
            ("smp_t", mux(p_timed, now.q.ex(), s_smp_t.ex())),
        ],
    );
    let cq_post = cql.pack(
        Some(cq_rd),
        &[("tail", p_tail_new.ex()), ("phase", c_phase ^ p_wrap)],
    );
    let _ = zero_iw;

    m.comb(|c| {
        c.set(st.d, st.q);
        c.set(sq_re, 0);
        c.set(sq_raddr, 0);
        c.set(cq_re, 0);
        c.set(cq_raddr, 0);
        c.set(sq_we, 0);
        c.set(sq_waddr, 0);
        c.set(sq_wdata, 0);
        c.set(cq_we, 0);
        c.set(cq_waddr, 0);
        c.set(cq_wdata, 0);
        c.set(fsm_hd_we, 0);
        c.set(db_take, 0);
        c.set(op_take, 0);
        c.set(cpl_take, 0);
        c.set(push_en, 0);
        c.set(push_cls, 0);
        c.set(push_qid, 0);
        c.set(pop_en, 0);
        c.set(adm_act.d, adm_act.q);
        c.set(wrr_cls.d, wrr_cls.q);
        c.set(wrr_cnt.d, wrr_cnt.q);
        c.set(cur_qid.d, cur_qid.q);
        c.set(cur_cls.d, cur_cls.q);
        c.set(ar_issue, 0);
        c.set(aw_issue, 0);
        c.set(clear_idx.d, clear_idx.q);
        c.set(flush.d, flush.q);
        c.set(rdy.d, rdy.q);
        c.set(ev_reg, 0);
        c.set(ev_val, 0);
        c.set(ctl_done, 0);
        c.case(st.q, |a| {
            a.arm(st_ty.item("ST_IDLE"), |c| {
                c.if_(go_reset, |c| {
                    c.set(st.d, st_ty.item("ST_CLEAR"));
                    c.set(flush.d, 1);
                    c.set(clear_idx.d, 0);
                })
                .else_if(go_enable & !r_hd_we, |c| {
                    c.set(sq_we, 1);
                    c.set(sq_waddr, 0);
                    c.set(sq_wdata, sq_admin.clone());
                    c.set(cq_we, 1);
                    c.set(cq_waddr, 0);
                    c.set(cq_wdata, cq_admin.clone());
                    c.set(fsm_hd_we, 1);
                    c.set(rdy.d, 1);
                    c.set(adm_act.d, 0);
                })
                .else_if(db_pend.q, |c| {
                    c.if_(!live, |c| c.set(db_take, 1))
                        .else_if(db_bad_qid, |c| {
                            c.set(db_take, 1);
                            c.set(ev_reg, 1);
                        })
                        .else_(|c| {
                            c.set(sq_re, !db_cq.q);
                            c.set(sq_raddr, db_qid.q.resize(qw));
                            c.set(cq_re, db_cq.q);
                            c.set(cq_raddr, db_qid.q.resize(qw));
                            c.set(st.d, st_ty.item("ST_DB"));
                        });
                })
                .else_if(op_pend.q, |c| {
                    c.if_(op_bad, |c| c.set(op_take, 1)).else_(|c| {
                        c.set(sq_re, 1);
                        c.set(sq_raddr, op_qid.q.resize(qw));
                        c.set(cq_re, 1);
                        c.set(cq_raddr, op_qid.q.resize(qw));
                        c.set(st.d, st_ty.item("ST_OP"));
                    });
                })
                .else_if(cpl_v & (!rdy.q | (live & x_bad)), |c| {
                    c.set(cpl_take, 1);
                })
                .else_if(cpl_v & live & can_post, |c| {
                    c.set(sq_re, 1);
                    c.set(sq_raddr, x_sqid.resize(qw));
                    c.set(st.d, st_ty.item("ST_CPL_SQ"));
                })
                .else_if(can_fetch, |c| {
                    c.set(sq_re, 1);
                    c.set(st.d, st_ty.item("ST_FETCH"));
                    c.if_(adm_act.q, |c| {
                        c.set(sq_raddr, 0);
                        c.set(cur_qid.d, 0);
                        c.set(adm_act.d, 0);
                    })
                    .else_(|c| {
                        c.set(sq_raddr, pick_qid);
                        c.set(cur_qid.d, pick_qid);
                        c.set(cur_cls.d, cur_cls_sig);
                        c.set(pop_en, 1);
                        c.if_(!cls_ok[0], |c| {
                            c.set(wrr_cls.d, wrr_pick);
                            c.set(wrr_cnt.d, wrr_cnt_new);
                        });
                    });
                });
            });
            a.arm(st_ty.item("ST_DB"), |c| {
                // A doorbell that arms the sampler waits while the timed-command RAM's one
                // write port is taken by an arriving timed SQE.
                c.if_(!(db_arm & r_timed), |c| {
                    c.set(db_take, 1);
                    c.set(st.d, st_ty.item("ST_IDLE"));
                    c.if_(!db_cq.q, |c| {
                        c.if_(!s_en, |c| c.set(ev_reg, 1))
                            .else_if(d_sq_bad, |c| c.set(ev_val, 1))
                            .else_(|c| {
                                c.set(sq_we, 1);
                                c.set(sq_waddr, db_qid.q.resize(qw));
                                c.set(sq_wdata, sq_db.clone());
                                c.if_(d_newwork, |c| {
                                    c.if_(db_qid.q.eq(0) & ams_wrr, |c| c.set(adm_act.d, 1))
                                        .else_(|c| {
                                            c.set(push_en, 1);
                                            c.set(push_cls, s_cls);
                                            c.set(push_qid, db_qid.q.resize(qw));
                                        });
                                });
                            });
                    })
                    .else_(|c| {
                        c.if_(!c_en, |c| c.set(ev_reg, 1))
                            .else_if(d_cq_bad, |c| c.set(ev_val, 1))
                            .else_(|c| {
                                c.set(cq_we, 1);
                                c.set(cq_waddr, db_qid.q.resize(qw));
                                c.set(cq_wdata, cq_db.clone());
                            });
                    });
                });
            });
            a.arm(st_ty.item("ST_OP"), |c| {
                c.set(sq_waddr, op_qid.q.resize(qw));
                c.set(cq_waddr, op_qid.q.resize(qw));
                c.if_(!r_hd_we, |c| {
                    c.set(op_take, 1);
                    c.set(st.d, st_ty.item("ST_IDLE"));
                    c.case(op_code.q, |a| {
                        a.arm(OP_CREATE_SQ, |c| {
                            c.set(sq_we, 1);
                            c.set(sq_wdata, sq_create.clone());
                            c.set(fsm_hd_we, 1);
                        });
                        a.arm(OP_CREATE_CQ, |c| {
                            c.set(cq_we, 1);
                            c.set(cq_wdata, cq_create.clone());
                        });
                        a.arm(OP_DELETE_SQ, |c| {
                            c.set(sq_we, 1);
                            c.set(sq_wdata, sq_delete.clone());
                        });
                        a.arm(OP_DELETE_CQ, |c| {
                            c.set(cq_we, 1);
                            c.set(cq_wdata, cq_delete.clone());
                        });
                        a.default(|_| {});
                    });
                });
            });
            a.arm(st_ty.item("ST_CPL_SQ"), |c| {
                c.set(cq_re, 1);
                c.set(cq_raddr, s_cqid);
                c.set(st.d, st_ty.item("ST_CPL_CQ"));
            });
            a.arm(st_ty.item("ST_CPL_CQ"), |c| {
                c.set(st.d, st_ty.item("ST_IDLE"));
                c.if_(!c_en, |c| c.set(cpl_take, 1)).else_if(!p_full, |c| {
                    c.set(cpl_take, 1);
                    c.set(aw_issue, 1);
                    c.set(cq_we, 1);
                    c.set(cq_waddr, s_cqid);
                    c.set(cq_wdata, cq_post.clone());
                    c.set(sq_we, 1);
                    c.set(sq_waddr, x_sqid.resize(qw));
                    c.set(sq_wdata, sq_post.clone());
                });
            });
            a.arm(st_ty.item("ST_FETCH"), |c| {
                c.set(st.d, st_ty.item("ST_IDLE"));
                c.set(sq_waddr, cur_qid.q);
                c.set(push_qid, cur_qid.q);
                c.set(push_cls, s_cls);
                c.if_(!s_en | f_avail.eq(0), |c| {
                    c.set(sq_we, 1);
                    c.set(sq_wdata, sq_idle.clone());
                })
                .else_if(!f_elig, |c| {
                    c.set(push_en, 1);
                })
                .else_(|c| {
                    c.set(ar_issue, 1);
                    c.set(sq_we, 1);
                    c.set(sq_wdata, sq_fetch.clone());
                    c.if_(in_wrr_turn, |c| c.set(wrr_cnt.d, wrr_cnt.q + f_n.zext(9)));
                    c.if_(f_more, |c| {
                        c.if_(cur_qid.q.eq(0) & ams_wrr, |c| c.set(adm_act.d, 1))
                            .else_(|c| c.set(push_en, 1));
                    });
                });
            });
            a.arm(st_ty.item("ST_CLEAR"), |c| {
                c.set(cpl_take, cpl_v);
                c.set(db_take, db_pend.q);
                c.set(op_take, op_pend.q);
                c.set(sq_waddr, clear_idx.q);
                c.set(cq_waddr, clear_idx.q);
                c.if_(!r_hd_we, |c| {
                    c.set(sq_we, 1);
                    c.set(cq_we, 1);
                    c.set(fsm_hd_we, 1);
                    c.set(clear_idx.d, clear_idx.q + 1);
                    c.if_(clear_idx.q.eq(nq), |c| c.set(st.d, st_ty.item("ST_DRAIN")));
                });
            });
            a.arm(st_ty.item("ST_DRAIN"), |c| {
                c.set(cpl_take, cpl_v);
                c.set(db_take, db_pend.q);
                c.set(op_take, op_pend.q);
                c.if_(quiet & !cpl_v, |c| {
                    c.set(st.d, st_ty.item("ST_IDLE"));
                    c.set(rdy.d, 0);
                    c.set(flush.d, 0);
                    c.set(adm_act.d, 0);
                    c.set(wrr_cls.d, 1);
                    c.set(wrr_cnt.d, 0);
                    c.set(ctl_done, 1);
                });
            });
            a.default(|c| c.set(st.d, st_ty.item("ST_IDLE")));
        });
    });

    // Arrived-head RAM: the R path (a burst done) has priority over the FSM's initial writes.
    let desc_data = m.bind_out(u_desc, "m_data_o");
    let dq_qid = m.net("desc_qid", desc_data.slice(qw + nb + iw - 1, nb + iw));
    let dq_n = m.net("desc_n", desc_data.slice(nb + iw - 1, iw));
    let dq_head = m.net("desc_head", desc_data.slice(iw - 1, 0));
    let dq_timed = m.net("desc_timed", desc_data.bit(qw + nb + iw + nb));
    let dq_off = m.net(
        "desc_timed_off",
        desc_data.slice(qw + nb + iw + nb - 1, qw + nb + iw),
    );
    m.mem_write(
        hd_mem,
        r_hd_we | fsm_hd_we,
        mux(r_hd_we, dq_qid.ex(), sq_waddr.ex()),
        mux(r_hd_we, dq_head.ex(), lit(iw, 0)),
    );

    // ---------------------------------------------------------------- SQ fetch: AR and R
    m.assign(ar_v.d, ar_issue | (ar_v.q & !arready));
    m.assign(ar_addr.d, mux(ar_issue, f_addr, ar_addr.q));
    m.assign(ar_len.d, mux(ar_issue, f_len, ar_len.q));
    m.assign(arvalid, ar_v.q);
    m.assign(araddr, ar_addr.q);
    m.assign(arlen, ar_len.q);
    m.assign(arsize, clog2(u64::from(w / 8)) as u64);
    m.assign(arburst, 1);
    m.bind(u_desc, "s_valid_i", ar_issue);
    m.bind(
        u_desc,
        "s_data_i",
        cat([
            f_timed.ex(),
            f_smp_off.slice(nb - 1, 0),
            cur_qid.q.ex(),
            f_n.ex(),
            f_head_new.ex(),
        ]),
    );
    let dv = m.bind_out(u_desc, "m_valid_o");
    m.assign(desc_v, dv);
    let dcount = m.bind_out(u_desc, "count_o");
    m.unused("desc_count", dcount);

    m.assign(rready, dv);
    let r_fire = m.net("r_fire", rvalid & dv);
    let r_err = m.net("r_err", rresp.ne(0));
    let r_sidx = m.reg("r_sqe_idx", nb, 0);
    let r_err_q = m.reg("r_err", 1, 0);
    let r_err0_q = m.reg("r_err0", 1, 0);
    let (r_last_beat, r_full, r_err0): (Expr, Expr, Expr) = if bps == 1 {
        (lit(1, 1), rdata.ex(), r_err.ex())
    } else {
        let bw = clog2(u64::from(bps));
        let beat = m.reg("r_beat", bw, 0);
        let acc_w = 512 - w;
        let acc = m.reg_noreset("r_acc", acc_w);
        let last = m.net("r_last_beat", beat.q.eq(u64::from(bps - 1)));
        m.assign(
            beat.d,
            mux(r_fire, mux(last, lit(bw, 0), beat.q + 1), beat.q.ex()),
        );
        let shifted = if acc_w > w {
            cat([rdata.ex(), acc.q.slice(acc_w - 1, w)])
        } else {
            rdata.ex()
        };
        m.assign(acc.d, mux(r_fire & !last, shifted, acc.q.ex()));
        let first = m.net("r_first_beat", beat.q.eq(0));
        let e0 = m.net("r_err0_now", mux(first, r_err.ex(), r_err0_q.q.ex()));
        (last.ex(), cat([rdata.ex(), acc.q.ex()]), e0.ex())
    };
    let r_sqe = m.net("r_sqe", r_full);
    let r_err_any = m.net("r_err_any", r_err_q.q | r_err);
    let r_sqe_done = m.net("r_sqe_done", r_fire & r_last_beat.clone());
    let r_burst_done = m.net("r_burst_done", r_sqe_done & r_sidx.q.eq(&(dq_n - 1)));
    m.assign(r_hd_we, r_burst_done);
    m.assign(
        r_sidx.d,
        mux(
            r_sqe_done,
            mux(r_burst_done, lit(nb, 0), r_sidx.q + 1),
            r_sidx.q.ex(),
        ),
    );
    m.assign(
        r_err_q.d,
        mux(
            r_fire,
            mux(r_last_beat.clone(), lit(1, 0), r_err_any.ex()),
            r_err_q.q.ex(),
        ),
    );
    m.assign(r_err0_q.d, mux(r_fire, r_err0.clone(), r_err0_q.q.ex()));
    m.bind(u_desc, "m_ready_i", r_burst_done);
    m.unused("r_last", rlast);
    m.bind(u_fb, "s_valid_i", r_sqe_done);
    m.bind(
        u_fb,
        "s_data_i",
        cat([dq_qid.ex(), r_err_any.ex(), r_err0, r_sqe.ex()]),
    );
    // The timed SQE arrived: its CID and direction (other when its fetch failed).
    m.assign(r_timed, r_sqe_done & dq_timed & r_sidx.q.eq(dq_off));
    let r_opc = m.net("r_sqe_opc", r_sqe.slice(7, 0));
    let r_dir = m.net(
        "r_dir",
        mux(
            r_err_any | (r_opc.ne(0x01) & r_opc.ne(0x02)),
            lit(2, 2),
            mux(r_opc.eq(0x02), lit(2, 0), lit(2, 1)),
        ),
    );
    // One write port: the SQE's arrival, or (ST_DB waits a cycle for it) a doorbell arming.
    m.mem_write(
        lc_mem,
        r_timed | lc_inval,
        mux(r_timed, dq_qid.ex(), db_qid.q.resize(qw)),
        mux(
            r_timed,
            cat([lit(1, 1), r_sqe.slice(31, 16), r_dir.ex()]),
            lit(19, 0),
        ),
    );
    let fb_sr = m.bind_out(u_fb, "s_ready_o");
    m.unused("fb_s_ready", fb_sr);
    let fbc = m.bind_out(u_fb, "count_o");
    m.unused("fb_count", fbc);

    // ---------------------------------------------------------------- dispatch
    let fbv = m.bind_out(u_fb, "m_valid_o");
    m.assign(fb_v, fbv);
    let fbd = m.bind_out(u_fb, "m_data_o");
    let d_qid = m.net("d_qid", fbd.slice(qw + 513, 514));
    let d_err = m.net("d_err", fbd.bit(513));
    let d_err0 = m.net("d_err0", fbd.bit(512));
    let d_sqe = m.net("d_sqe", fbd.slice(511, 0));
    let d_opc = m.net("d_opc", d_sqe.slice(7, 0));
    let d_cid = m.net("d_cid", d_sqe.slice(31, 16));
    let d_op_ok = m.net(
        "d_opcode_ok",
        d_opc.eq(0x00) | d_opc.eq(0x01) | d_opc.eq(0x02) | d_opc.eq(0x08) | d_opc.eq(0x09),
    );
    let d_field_bad = m.net(
        "d_field_bad",
        d_sqe.slice(13, 8).ne(0) | d_sqe.slice(15, 14).eq(3),
    );
    // A Read or Write longer than MDTS (NLB, CDW12 bits 15:0, is 0's based). NLB's 16 bits
    // cannot ask for more than 65536 blocks, so at that limit nothing is refused.
    let max_blocks = u64::from(p.max_blocks());
    let d_too_long = if max_blocks <= 0xffff {
        m.net(
            "d_too_long",
            (d_opc.eq(0x01) | d_opc.eq(0x02)) & d_sqe.slice(399, 384).ge(max_blocks),
        )
        .ex()
    } else {
        lit(1, 0)
    };
    let d_bad = m.net("d_bad", d_field_bad | d_too_long);
    let d_fatal = m.net("d_fatal", fbv & !flush.q & d_err & d_err0);
    // Order of the I/O checks (mod.rs): fetch error, CDW0 fields, a Read or Write over MDTS,
    // then the opcode picks the hardware path (io_cmd) or firmware (admin_cmd with the SQ id).
    let d_admin = m.net("d_admin", !d_err & d_qid.eq(0));
    let d_icpl = m.net("d_internal", d_err & !d_err0 | !d_err & d_qid.ne(0) & d_bad);
    let d_io = m.net("d_io", !d_err & d_qid.ne(0) & d_op_ok & !d_bad);
    let d_fallback = m.net("d_fallback", !d_err & d_qid.ne(0) & !d_op_ok & !d_bad);
    let io_free = m.net("io_cmd_free", !io_v.q | io_cmd.ready);
    let adm_free = m.net("admin_cmd_free", !adm_v.q | adm_cmd.ready);
    let icpl_free = m.net("icpl_free", !icpl_v.q);
    let load_io = m.net("load_io", fbv & !flush.q & d_io & io_free);
    let load_adm = m.net(
        "load_admin",
        fbv & !flush.q & (d_admin | d_fallback) & adm_free,
    );
    let load_icpl = m.net("load_icpl", fbv & !flush.q & d_icpl & icpl_free);
    let fb_pop = m.net(
        "fb_pop",
        fbv & flush.q | d_fatal | load_io | load_adm | load_icpl,
    );
    m.bind(u_fb, "m_ready_i", fb_pop);
    m.assign(
        credits.d,
        credits.q - mux(ar_issue, f_n.zext(cw), lit(cw, 0)) + fb_pop.zext(cw),
    );

    let io_sqid = m.reg("io_cmd_sqid", 16, 0);
    let io_sqe = m.reg_noreset("io_cmd_sqe", 512);
    m.assign(io_v.d, load_io | (io_v.q & !io_cmd.ready));
    m.assign(io_sqid.d, mux(load_io, d_qid.zext(16), io_sqid.q.ex()));
    m.assign(io_sqe.d, mux(load_io, d_sqe.ex(), io_sqe.q.ex()));
    m.assign(io_cmd.valid, io_v.q);
    m.assign(io_cmd.field("sqid"), io_sqid.q);
    m.assign(io_cmd.field("sqe"), io_sqe.q);
    let adm_sqid = m.reg("admin_cmd_sqid", 16, 0);
    let adm_sqe = m.reg_noreset("admin_cmd_sqe", 512);
    m.assign(adm_v.d, load_adm | (adm_v.q & !adm_cmd.ready));
    m.assign(adm_sqid.d, mux(load_adm, d_qid.zext(16), adm_sqid.q.ex()));
    m.assign(adm_sqe.d, mux(load_adm, d_sqe.ex(), adm_sqe.q.ex()));
    m.assign(adm_cmd.valid, adm_v.q);
    m.assign(adm_cmd.field("sqid"), adm_sqid.q);
    m.assign(adm_cmd.field("sqe"), adm_sqe.q);
    let icpl_code = mux(d_err, lit(15, 0x04), lit(15, 0x02));
    m.assign(icpl_v.d, load_icpl | (icpl_v.q & !(cpl_take & gnt.bit(0))));
    m.assign(icpl_sqid.d, mux(load_icpl, d_qid.ex(), icpl_sqid.q.ex()));
    m.assign(icpl_cid.d, mux(load_icpl, d_cid.ex(), icpl_cid.q.ex()));
    m.assign(icpl_st.d, mux(load_icpl, icpl_code, icpl_st.q.ex()));

    let io_out = m.net("io_cmd_fire", io_cmd.fire());
    let io_in = m.net("io_cpl_fire", io_cpl.fire());
    let adm_out = m.net("admin_cmd_fire", adm_cmd.fire());
    let adm_in = m.net("admin_cpl_fire", adm_cpl.fire());
    m.assign(io_infl.d, io_infl.q + io_out.zext(32) - io_in.zext(32));
    m.assign(adm_infl.d, adm_infl.q + adm_out.zext(32) - adm_in.zext(32));

    // ---------------------------------------------------------------- CQ post: AW, W, B
    m.assign(aw_v.d, aw_issue | (aw_v.q & !awready));
    m.assign(aw_addr.d, mux(aw_issue, p_addr, aw_addr.q));
    m.assign(cqe.d, mux(aw_issue, p_cqe, cqe.q));
    let w_fire = m.net("w_fire", w_v.q & wready);
    let w_last: Expr = if w == 64 { w_beat.q.ex() } else { lit(1, 1) };
    m.assign(w_v.d, aw_issue | (w_v.q & !(w_fire & w_last.clone())));
    m.assign(
        w_beat.d,
        mux(aw_issue, lit(1, 0), mux(w_fire, !w_beat.q, w_beat.q.ex())),
    );
    m.assign(awvalid, aw_v.q);
    m.assign(awaddr, aw_addr.q);
    m.assign(awlen, if w == 64 { 1u64 } else { 0 });
    m.assign(awsize, clog2(u64::from(w / 8)) as u64);
    m.assign(awburst, 1);
    m.assign(wvalid, w_v.q);
    m.assign(wlast, w_last);
    if w == 64 {
        m.assign(
            wdata,
            mux(w_beat.q, cqe.q.slice(127, 64), cqe.q.slice(63, 0)),
        );
        m.assign(wstrb, 0xffu64);
        m.unused("aw_addr_lo", aw_addr.q.slice(3, 0));
    } else {
        let lanes = clog2(u64::from(w / 8));
        m.assign(wdata, cqe.q.repeat(w / 128));
        if lanes > 4 {
            let lane = aw_addr.q.slice(lanes - 1, 4);
            m.assign(wstrb, lit(w / 8, 0xffff).shl_by(cat([lane, zeros(4)])));
        } else {
            m.assign(wstrb, ones(16));
        }
        m.unused("aw_addr_lo", cat([aw_addr.q.slice(3, 0), w_beat.q.ex()]));
    }
    m.bind(u_pb, "s_valid_i", aw_issue);
    m.bind(
        u_pb,
        "s_data_i",
        cat([
            s_smp_t.ex(),
            lc_dir.ex(),
            p_timed.ex(),
            c_ien.ex(),
            c_vec.ex(),
        ]),
    );
    let pbv = m.bind_out(u_pb, "m_valid_o");
    m.assign(pb_v, pbv);
    let pbd = m.bind_out(u_pb, "m_data_o");
    let pbc = m.bind_out(u_pb, "count_o");
    m.unused("pb_count", pbc);
    m.assign(bready, pbv);
    let b_fire = m.net("b_fire", bvalid & pbv);
    m.bind(u_pb, "m_ready_i", b_fire);
    let b_err = m.net("b_err", b_fire & bresp.ne(0));
    m.assign(cfs.d, mux(ctl_done, lit(1, 0), cfs.q | b_err | d_fatal));

    // ---------------------------------------------------------------- interrupt coalescing
    let ev = m.net("irq_event", b_fire & !b_err & pbd.bit(vw) & !flush.q);
    let ev_vec = m.net("irq_event_vector", pbd.slice(vw - 1, 0));
    let presc = m.reg("coal_prescaler", 24, 0);
    let tick = m.net("coal_tick", (presc.q.zext(25) + 1).ge(co_tick.zext(25)));
    m.assign(presc.d, mux(tick, lit(24, 0), presc.q + 1));
    let irq_v = m.reg("irq_valid", 1, 0);
    let irq_vec = m.reg("irq_vector", vw, 0);
    let emit = m.wire("irq_emit", 1);
    let sel = m.wire("irq_sel", vw);
    let mut pends = Vec::new();
    for v in 0..p.vectors {
        let cnt = m.reg(&format!("coal_cnt{v}"), 9, 0);
        let age = m.reg(&format!("coal_age{v}"), 8, 0);
        let cd = m.reg(&format!("coal_cd{v}"), 1, 0);
        let pend = m.reg(&format!("irq_pend{v}"), 1, 0);
        let hit = m.net(&format!("irq_ev{v}"), ev & ev_vec.eq(u64::from(v)));
        let fire_thr = hit & (cd.q | (cnt.q + 1).gt(co_thr.zext(9)));
        let fire_time =
            cnt.q.ne(0) & (co_time.eq(0) | (tick & (age.q.zext(9) + 1).ge(co_time.zext(9))));
        let fire = m.net(&format!("irq_fire{v}"), fire_thr | fire_time);
        m.assign(cnt.d, mux(flush.q | fire, lit(9, 0), cnt.q + hit.zext(9)));
        m.assign(
            age.d,
            mux(
                flush.q | fire,
                lit(8, 0),
                mux(cnt.q.ne(0) & tick, age.q + 1, age.q.ex()),
            ),
        );
        m.assign(
            cd.d,
            mux(vc_we & vc_vec.eq(u64::from(v)), vc_cd.ex(), cd.q.ex()),
        );
        m.assign(
            pend.d,
            !flush.q & (fire | (pend.q & !(emit & sel.eq(u64::from(v))))),
        );
        pends.push(pend.q);
    }
    let any_pend = m.net(
        "irq_any",
        pends.iter().skip(1).fold(pends[0].ex(), |a, p| a | *p),
    );
    let mut pick = lit(vw, 0);
    for v in (0..p.vectors).rev() {
        pick = mux(pends[v as usize], lit(vw, u128::from(v)), pick);
    }
    m.assign(sel, pick);
    let irq_free = m.net("irq_free", !irq_v.q | irq.ready);
    m.assign(emit, any_pend & irq_free);
    m.assign(irq_v.d, emit | (irq_v.q & !irq.ready));
    m.assign(irq_vec.d, mux(emit, sel.ex(), irq_vec.q.ex()));
    m.assign(irq.valid, irq_v.q);
    m.assign(irq.field("vector"), irq_vec.q);

    // ---------------------------------------------------------------- events and counters
    m.bind(u_csr, "events_bad_db_reg_set_i", ev_reg);
    m.bind(u_csr, "events_bad_db_value_set_i", ev_val);
    let evq = m.reg("event_qid", 16, 0);
    let evc = m.reg("event_cq", 1, 0);
    let any_ev = m.net("db_fault", ev_reg | ev_val);
    m.assign(evq.d, mux(any_ev, db_qid.q.ex(), evq.q.ex()));
    m.assign(evc.d, mux(any_ev, db_cq.q.ex(), evc.q.ex()));
    m.bind(u_csr, "event_qid_qid_i", evq.q);
    m.bind(u_csr, "event_qid_cq_i", evc.q);
    let counter = |m: &mut ModuleBuilder, name: &str, inc: Expr| -> Sig {
        let r = m.reg(name, 32, 0);
        m.assign(r.d, r.q + inc);
        r.q
    };
    let irq_fire = irq.fire().zext(32);
    let c_irqs = counter(&mut m, "cnt_irqs", irq_fire);
    let c_faults = counter(&mut m, "cnt_db_faults", any_ev.zext(32));
    let c_fetched = counter(
        &mut m,
        "cnt_fetched",
        mux(ar_issue, f_n.zext(32), lit(32, 0)),
    );
    let c_done = counter(&mut m, "cnt_completed", aw_issue.zext(32));
    m.bind(u_csr, "irqs_value_i", c_irqs);
    m.bind(u_csr, "db_faults_value_i", c_faults);
    m.bind(u_csr, "fetched_value_i", c_fetched);
    m.bind(u_csr, "completed_value_i", c_done);
    let c_offload = counter(&mut m, "cnt_offload", io_out.zext(32));
    let fb_out = m.net("fallback_cmd_fire", adm_out & adm_sqid.q.ne(0));
    let c_fallback = counter(&mut m, "cnt_fallback", fb_out.zext(32));
    m.bind(u_csr, "cnt_offload_value_i", c_offload);
    m.bind(u_csr, "cnt_fallback_value_i", c_fallback);
    m.bind(u_csr, "limits_mdts_i", lit(8, u128::from(p.mdts)));

    // ---------------------------------------------------------------- latency histograms
    // One RAM word per (direction, bin), incremented read-modify-write: read in the cycle of
    // the write response, written the next; a second event on the same word in that next
    // cycle takes the value being written (the RAM reads the old word).
    let b_timed = m.net("b_timed", pbd.bit(vw + 1));
    let b_dir = m.net("b_dir", pbd.slice(vw + 3, vw + 2));
    let b_start = m.net("b_start", pbd.slice(vw + 35, vw + 4));
    let lat_ev = m.net("lat_event", b_fire & !b_err & b_timed);
    let lat_l = m.net("lat_cycles", now.q - b_start);
    // Bin: the index of L's highest set bit (L >= 1), found by halving: each step keeps the
    // upper half when it has a bit set, and that choice is one bit of the index.
    let mut x = lat_l.ex();
    let mut bits = Vec::new();
    for k in (0..5u32).rev() {
        let h = 1u32 << k;
        let up = m.net(&format!("lat_bin_b{k}"), x.slice(2 * h - 1, h).ne(0));
        bits.push(up.ex());
        if k > 0 {
            x = m
                .net(
                    &format!("lat_half{k}"),
                    mux(up, x.slice(2 * h - 1, h), x.slice(h - 1, 0)),
                )
                .ex();
        } else {
            m.unused("lat_half_low", x.bit(0));
        }
    }
    let lat_bin = m.net("lat_bin", cat(bits));
    let lat_addr = m.net("lat_addr", cat([b_dir.ex(), lat_bin.ex()]));
    let hist = m.memory("lat_hist", 32, 96);
    let clr_busy = m.reg("lat_clr_busy", 1, 1);
    let clr_idx = m.reg("lat_clr_idx", 7, 0);
    let clr_go_we = m.bind_out(u_csr, "lat_ctrl_clear_we_o");
    let clr_go_v = m.bind_out(u_csr, "lat_ctrl_clear_o");
    let clr_go = m.net("lat_clear", clr_go_we & clr_go_v);
    let clr_last = m.net("lat_clr_last", clr_idx.q.eq(95));
    m.assign(clr_busy.d, clr_go | (clr_busy.q & !clr_last));
    m.assign(
        clr_idx.d,
        mux(clr_go | !clr_busy.q | clr_last, lit(7, 0), clr_idx.q + 1),
    );
    let ev_v = m.reg("lat_ev_valid", 1, 0);
    let ev_a = m.reg("lat_ev_addr", 7, 0);
    m.assign(ev_v.d, lat_ev & !clr_busy.q);
    m.assign(ev_a.d, mux(lat_ev, lat_addr.ex(), ev_a.q.ex()));
    let hist_rd = m.mem_read(hist, lat_ev, lat_addr);
    let lw_v = m.reg("lat_wr_valid", 1, 0);
    let lw_a = m.reg("lat_wr_addr", 7, 0);
    let lw_d = m.reg("lat_wr_data", 32, 0);
    let fwd = m.net("lat_forward", lw_v.q & lw_a.q.eq(ev_a.q));
    let cur = m.net("lat_cur", mux(fwd, lw_d.q.ex(), hist_rd.ex()));
    let inc = m.net("lat_inc", mux(cur.eq(0xffff_ffffu64), cur.ex(), cur + 1));
    let rmw_we = m.net("lat_rmw_we", ev_v.q & !clr_busy.q);
    m.mem_write(
        hist,
        clr_busy.q | rmw_we,
        mux(clr_busy.q, clr_idx.q.ex(), ev_a.q.ex()),
        mux(clr_busy.q, lit(32, 0), inc.ex()),
    );
    m.assign(lw_v.d, rmw_we);
    m.assign(lw_a.d, ev_a.q);
    m.assign(lw_d.d, inc);
    let sel_bin = m.bind_out(u_csr, "lat_sel_bin_o");
    let sel_dir = m.bind_out(u_csr, "lat_sel_dir_o");
    let sel_rd = m.mem_read(hist, lit(1, 1), cat([sel_dir.ex(), sel_bin.ex()]));
    let sel_ok = m.reg("lat_sel_ok", 1, 0);
    m.assign(sel_ok.d, sel_dir.ne(3));
    m.bind(
        u_csr,
        "lat_count_value_i",
        mux(sel_ok.q, sel_rd.ex(), lit(32, 0)),
    );
    m.bind(u_csr, "status_lat_clearing_i", clr_busy.q);
    m.finish()
}
