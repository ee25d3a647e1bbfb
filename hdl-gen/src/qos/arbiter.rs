//! `qos_arbiter`: the top of the QoS block: the check stage (decode, namespace and grant checks,
//! denials), the per-queue buffers (SQEs and their metadata in RAMs), the per-queue state in
//! RAMs (limits, lazily refilled bucket levels, counters) with per-queue bitmaps in flip-flops,
//! the namespace buckets, the scheduler, the charge stage, the output register, the global
//! `qos_csr` and the queue window on an AXI4-Lite port. The behaviour is documented in
//! [`super`]; the structure and timing in its "Structure" section.
//!
//! Slightly over 1,000 lines on purpose: the pipeline's stages in order in one function, so
//! each stage's timing reads against its neighbours'.

use super::bucket::{bucket, Lazy, STAMP_BITS};
use super::csr::{self, register_map, COUNTERS, QUEUE_REGS};
use super::sched::{idx_width, next_index, next_set, sched, select, WEIGHT_BITS};
use super::{QosParams, BW_BITS, BW_FRAC, IOPS_BURST_BITS, IOPS_FRAC};
use crate::blocks::axil_decoder::axil_decoder;
use crate::blocks::skid_buffer::skid_buffer;
use hdl_builder::prelude::*;
use hdl_builder::Errors;
use std::rc::Rc;

/// NVMe opcodes the check stage knows.
pub mod opc {
    /// Flush.
    pub const FLUSH: u64 = 0x00;
    /// Write.
    pub const WRITE: u64 = 0x01;
    /// Read.
    pub const READ: u64 = 0x02;
    /// Compare.
    pub const COMPARE: u64 = 0x05;
    /// Write Zeroes.
    pub const WRITE_ZEROES: u64 = 0x08;
    /// Dataset Management.
    pub const DSM: u64 = 0x09;
}

/// Status field values of the denials (DNR set): `{DNR, M, CRD, SCT, SC}`.
pub mod status {
    /// 0Bh Invalid Namespace or Format, SCT 0, DNR.
    pub const INVALID_NAMESPACE: u64 = 0x400b;
    /// 80h LBA Out of Range, SCT 0, DNR.
    pub const LBA_OUT_OF_RANGE: u64 = 0x4080;
    /// 86h Access Denied, SCT 2, DNR.
    pub const ACCESS_DENIED: u64 = 0x4286;
}

/// Width of a completion on `m_io_cpl` through its skid buffer: sqid, cid, status.
const CPL_BITS: u32 = 16 + 16 + 15;

/// AXI response SLVERR.
const RESP_SLVERR: u64 = 0b10;

fn or_all(items: impl IntoIterator<Item = Expr>) -> Expr {
    items
        .into_iter()
        .reduce(|a, b| a | b)
        .unwrap_or_else(|| lit(1, 0))
}

/// The concatenation of `items` (item 0 in the low bits), in nets of 64 items each so no
/// emitted line grows with the number of queues.
fn cat_chunked(m: &mut ModuleBuilder, name: &str, items: Vec<Expr>) -> Sig {
    if items.len() <= 64 {
        return m.net(name, cat(items.into_iter().rev()));
    }
    let parts: Vec<Sig> = items
        .chunks(64)
        .enumerate()
        .map(|(k, c)| m.net(&format!("{name}_g{k}"), cat(c.iter().rev().cloned())))
        .collect();
    m.net(name, cat(parts.iter().rev().map(|s| s.ex())))
}

/// The OR of `items`, in nets of 64 items each (see [`cat_chunked`]).
fn or_chunked(m: &mut ModuleBuilder, name: &str, items: Vec<Expr>) -> Sig {
    if items.len() <= 64 {
        return m.net(name, or_all(items));
    }
    let parts: Vec<Expr> = items
        .chunks(64)
        .enumerate()
        .map(|(k, c)| {
            m.net(&format!("{name}_g{k}"), or_all(c.iter().cloned()))
                .ex()
        })
        .collect();
    m.net(name, or_all(parts))
}

/// `n` bits, bit `idx` set when `valid`.
fn one_hot(m: &mut ModuleBuilder, name: &str, valid: impl Into<Expr>, idx: Sig, n: u32) -> Sig {
    m.net(name, mux(valid, lit(n, 1).shl_by(idx), lit(n, 0)))
}

/// The bandwidth bucket's arithmetic.
const BW: Lazy = Lazy {
    cost_width: BW_BITS,
    burst_width: BW_BITS,
    frac: BW_FRAC,
};
/// The IOPS bucket's arithmetic.
const IOPS: Lazy = Lazy {
    cost_width: 1,
    burst_width: IOPS_BURST_BITS,
    frac: IOPS_FRAC,
};

/// The QoS arbiter, named `qos_arbiter` + `p.suffix()`.
pub fn arbiter(p: &QosParams, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let (nq, nn, ng, depth, cw) = (
        p.queues,
        p.namespaces,
        p.grants,
        p.queue_depth,
        p.counter_width,
    );
    let qw = idx_width(nq);
    let nw = idx_width(nn);
    let dw = clog2(u64::from(depth));
    let map = register_map(p)?;
    let csr_mod = map.module(reset)?;
    let shift = csr::queue_shift(p);
    let qbits = csr::queue_bits(p);
    let dec = axil_decoder(shift, &[csr::global_bits(p), qbits], reset)?;
    let sch = sched(nq, reset)?;
    let bw_bucket = bucket(BW_BITS, BW_BITS, BW_FRAC, reset)?;
    let iops_bucket = bucket(1, IOPS_BURST_BITS, IOPS_FRAC, reset)?;
    let skid = skid_buffer(CPL_BITS, reset)?;

    let mut m = ModuleBuilder::with_reset(&format!("qos_arbiter{}", p.suffix()), reset);
    m.doc("QoS arbiter and namespace isolation: each I/O command is checked against the grant");
    m.doc("table (denials complete on m_io_cpl: 86h SCT 2, 0Bh, 80h), buffered per queue, and");
    m.doc("released on m_io_cmd one per cycle: highest class first, weighted round robin inside");
    m.doc("a class, among the heads whose queue and namespace token buckets have budget.");
    m.doc(
        "A head whose dst_space_i bit is low is passed over in that cycle (its channel is full).",
    );
    m.doc("Per-queue limits, bucket levels (lazily refilled) and counters are in RAMs; per-queue");
    m.doc("bitmaps (non-empty, budget, class) in flip-flops. sq_space_o tells the front end which");
    m.doc("queues can take a command. CSRs on s_axil: global registers, then the queue window.");
    m.clock();
    m.reset();
    let u_dec = m.instance("u_axil", &dec);
    let u_csr = m.instance("u_csr", &csr_mod);
    let u_sched = m.instance("u_sched", &sch);
    let u_cpl = m.instance("u_cpl_skid", &skid);

    m.group("commands from the front end");
    let cmd_def = StreamDef::new().field("sqid", 16).field("sqe", 512);
    let s_cmd = m.stream_in("s_io_cmd", &cmd_def);
    m.group("admitted commands to the transport");
    let m_cmd = m.stream_out("m_io_cmd", &cmd_def);
    m.group("completions of denied commands to the front end");
    let cpl_def = StreamDef::new()
        .field("sqid", 16)
        .field("cid", 16)
        .field("status", 15)
        .field("dw0", 32);
    let m_cpl = m.stream_out("m_io_cpl", &cpl_def);
    m.group("per-queue space, to the front end's SQ arbitration");
    let space_o = m.output("sq_space_o", nq);
    m.comment(
        space_o,
        "bit i: SQ i + 1 can take a command without blocking",
    );
    m.group("per-queue destination space, from the transport channels");
    let dst_space = m.input("dst_space_i", nq);
    m.comment(
        dst_space,
        "bit i: SQ i + 1's channel takes a command now (looked at in the decision cycle)",
    );

    m.group("CSRs (AXI4-Lite slave): global registers in slot 0, the queue window in slot 1");
    m.pass_through(u_dec, "s_axil_");
    // Slot 0: the global registers.
    for (name, out_of_dec) in [
        ("awvalid", true),
        ("awaddr", true),
        ("wvalid", true),
        ("wdata", true),
        ("wstrb", true),
        ("bready", true),
        ("arvalid", true),
        ("araddr", true),
        ("rready", true),
        ("awready", false),
        ("wready", false),
        ("bvalid", false),
        ("bresp", false),
        ("arready", false),
        ("rvalid", false),
        ("rdata", false),
        ("rresp", false),
    ] {
        if out_of_dec {
            let s = m.bind_out(u_dec, &format!("m0_axil_{name}_o"));
            m.bind(u_csr, &format!("s_axil_{name}_i"), s);
        } else {
            let s = m.bind_out(u_csr, &format!("s_axil_{name}_o"));
            m.bind(u_dec, &format!("m0_axil_{name}_i"), s);
        }
    }
    m.bind(u_csr, "info_queues_i", lit(16, u128::from(nq)));
    m.bind(u_csr, "info_namespaces_i", lit(8, u128::from(nn)));
    m.bind(u_csr, "info_grants_i", lit(8, u128::from(ng)));
    m.bind(u_csr, "info2_depth_i", lit(8, u128::from(depth)));
    m.bind(u_csr, "info2_queue_shift_i", lit(8, u128::from(shift)));
    let enable = m.bind_out(u_csr, "ctrl_enable_o");

    // ---- Time, and the RAMs' sweep after reset.
    let now = m.reg("now", STAMP_BITS, 0);
    m.comment(
        now.q,
        "cycles since reset: the time stamps of the lazy buckets",
    );
    m.assign(now.d, now.q + 1);
    let enable_q = m.reg("enable_q", 1, 0);
    m.assign(enable_q.d, enable);
    let enable_at = m.reg("enable_at", STAMP_BITS, 0);
    m.comment(
        enable_at.q,
        "the cycle ctrl.enable last rose: older bucket levels are full",
    );
    m.assign(enable_at.d, mux(enable & !enable_q.q, now.q, enable_at.q));
    let init = m.reg("init_busy", 1, 1);
    m.comment(init.q, "the per-queue RAMs are being cleared (after reset)");
    let init_addr = m.reg("init_addr", qw, 0);
    m.assign(
        init_addr.d,
        mux(init.q, next_index(init_addr.q, nq), init_addr.q),
    );
    m.assign(init.d, init.q & init_addr.q.ne(u64::from(nq - 1)));

    // Namespace configuration from the CSRs.
    let mut ns_shift = Vec::new();
    let mut ns_size = Vec::new();
    let mut ns_cfg = Vec::new();
    for n in 0..nn {
        let pre = format!("ns{}", n + 1);
        ns_shift.push(m.bind_out(u_csr, &format!("{pre}_cfg_lba_shift_o")));
        let iops_burst = m.bind_out(u_csr, &format!("{pre}_cfg_iops_burst_o"));
        let lo = m.bind_out(u_csr, &format!("{pre}_size_lo_value_o"));
        let hi = m.bind_out(u_csr, &format!("{pre}_size_hi_value_o"));
        ns_size.push(m.net(&format!("{pre}_size"), cat([hi.ex(), lo.ex()])));
        let bw_rate = m.bind_out(u_csr, &format!("{pre}_bw_rate_value_o"));
        let bw_burst = m.bind_out(u_csr, &format!("{pre}_bw_burst_value_o"));
        let iops_rate = m.bind_out(u_csr, &format!("{pre}_iops_rate_value_o"));
        ns_cfg.push((bw_rate, bw_burst, iops_rate, iops_burst));
    }

    // ---- Check stage: one command, decoded and checked against the namespace and grants.
    let chk_valid = m.reg("chk_valid", 1, 0);
    m.comment(chk_valid.q, "the check stage holds a command");
    let chk_sqid = m.reg_noreset("chk_sqid", 16);
    let chk_sqe = m.reg_noreset("chk_sqe", 512);
    let sqe = chk_sqe.q;
    let opcode = m.net("chk_opcode", sqe.slice(7, 0));
    let cid = m.net("chk_cid", sqe.slice(31, 16));
    let nsid = m.net("chk_nsid", sqe.slice(63, 32));
    let slba = m.net("chk_slba", sqe.slice(383, 320));
    let nlb = m.net("chk_nlb", sqe.slice(399, 384));
    m.comment(nlb, "number of logical blocks, 0's based");
    let q_ok = m.net(
        "chk_q_ok",
        chk_sqid.q.ne(0u64) & chk_sqid.q.le(u64::from(nq)),
    );
    m.comment(q_ok, "an SQ id this block serves");
    let qi = m.net("chk_qi", (chk_sqid.q - 1).slice(qw - 1, 0));
    let ns_in = m.net("chk_ns_in", nsid.ne(0u64) & nsid.le(u64::from(nn)));
    let ni = m.net("chk_ni", (nsid - 1).slice(nw - 1, 0));
    let size_items: Vec<Expr> = ns_size.iter().map(|s| s.ex()).collect();
    let size = select(&mut m, "chk_ns_size", ni, &size_items);
    let shift_items: Vec<Expr> = ns_shift.iter().map(|s| s.ex()).collect();
    let lba_shift = select(&mut m, "chk_lba_shift", ni, &shift_items);
    let ns_ok = m.net("chk_ns_ok", ns_in & size.ne(0u64));
    m.comment(ns_ok, "the namespace exists");
    let is = |m: &mut ModuleBuilder, name: &str, code: u64| m.net(name, opcode.eq(code));
    let op_read = is(&mut m, "op_read", opc::READ);
    let op_compare = is(&mut m, "op_compare", opc::COMPARE);
    let op_write = is(&mut m, "op_write", opc::WRITE);
    let op_wz = is(&mut m, "op_write_zeroes", opc::WRITE_ZEROES);
    let op_dsm = is(&mut m, "op_dsm", opc::DSM);
    let op_flush = is(&mut m, "op_flush", opc::FLUSH);
    let data_op = m.net("chk_data_op", op_read | op_compare | op_write);
    m.comment(data_op, "moves data: costs bandwidth tokens");
    let lba_op = m.net("chk_lba_op", data_op | op_wz);
    m.comment(lba_op, "has an LBA range to check");
    let need_r = m.net("chk_need_read", !(op_write | op_wz | op_dsm | op_flush));
    m.comment(need_r, "needs read access (Read, Compare, unknown opcodes)");
    let need_w = m.net("chk_need_write", !(op_read | op_compare));
    m.comment(
        need_w,
        "needs write access; also counts the command as write-side",
    );
    let lba_end = m.net("chk_lba_end", slba.zext(65) + nlb.zext(65));
    m.comment(lba_end, "last LBA of the command, 65 bits: no wrap");
    let range_bad = m.net("chk_range_bad", lba_op & lba_end.ge(size.zext(65)));
    let mut matches = Vec::new();
    for g in 0..ng {
        let pre = format!("grant{g}");
        let r = m.bind_out(u_csr, &format!("{pre}_ctrl_read_o"));
        let w = m.bind_out(u_csr, &format!("{pre}_ctrl_write_o"));
        let gns = m.bind_out(u_csr, &format!("{pre}_ctrl_nsid_o"));
        let gsq = m.bind_out(u_csr, &format!("{pre}_ctrl_sqid_o"));
        let flo = m.bind_out(u_csr, &format!("{pre}_first_lo_value_o"));
        let fhi = m.bind_out(u_csr, &format!("{pre}_first_hi_value_o"));
        let llo = m.bind_out(u_csr, &format!("{pre}_last_lo_value_o"));
        let lhi = m.bind_out(u_csr, &format!("{pre}_last_hi_value_o"));
        let first = cat([fhi.ex(), flo.ex()]);
        let last = cat([lhi.ex(), llo.ex()]);
        let hit = m.net(
            &format!("{pre}_hit"),
            gsq.eq(chk_sqid.q)
                & gns.zext(32).eq(nsid)
                & (!need_r | r)
                & (!need_w | w)
                & (!lba_op | (slba.ge(first) & lba_end.le(last.zext(65)))),
        );
        matches.push(hit);
    }
    let granted = m.net("chk_granted", q_ok & or_all(matches.iter().map(|s| s.ex())));
    let status = m.wire("chk_status", 15);
    m.comb(|cb| {
        cb.set(status, 0);
        cb.if_(!ns_ok, |cb| cb.set(status, status::INVALID_NAMESPACE))
            .else_if(range_bad, |cb| cb.set(status, status::LBA_OUT_OF_RANGE))
            .else_if(!granted, |cb| cb.set(status, status::ACCESS_DENIED));
    });
    let denied = m.net("chk_denied", status.ne(0u64));
    let cost = m.net(
        "chk_cost",
        mux(
            data_op,
            (nlb.zext(BW_BITS) + 1).shl_by(lba_shift),
            lit(BW_BITS, 0),
        ),
    );
    m.comment(
        cost,
        "bytes: (NLB + 1) << lba_shift for Read, Compare, Write; else 0",
    );

    // ---- Per-queue buffers: pointers in flip-flops, SQEs and metadata in RAMs.
    let sqe_ram = m.memory("sqe_ram", 512, u64::from(nq * depth));
    let meta_w = nw + BW_BITS + 1;
    let meta_ram = m.memory("meta_ram", meta_w, u64::from(nq * depth));
    // meta_ram: per buffered command: namespace index, cost, write-side.
    let mut count = Vec::new();
    let mut head = Vec::new();
    let mut tail = Vec::new();
    for q in 0..nq {
        count.push(m.reg(&format!("q{q}_count"), dw + 1, 0));
        head.push(m.reg(&format!("q{q}_head"), dw, 0));
        tail.push(m.reg(&format!("q{q}_tail"), dw, 0));
    }
    let count_items: Vec<Expr> = count.iter().map(|c| c.q.ex()).collect();
    let chk_count = select(&mut m, "chk_q_count", qi, &count_items);
    let room = m.net("chk_room", chk_count.lt(u64::from(depth)));
    m.comment(room, "the command's queue has a free slot");
    let cpl_ready = m.bind_out(u_cpl, "s_ready_o");
    let push = m.net("push", chk_valid.q & !denied & room);
    m.comment(push, "an admitted command enters its queue");
    let deny = m.net("deny", chk_valid.q & denied & cpl_ready);
    m.comment(deny, "a denied command completes");
    let chk_leave = m.net("chk_leave", push | deny);
    m.assign(s_cmd.ready, !init.q & (!chk_valid.q | chk_leave));
    m.comb(|cb| {
        cb.set(chk_valid.d, chk_valid.q);
        cb.set(chk_sqid.d, chk_sqid.q);
        cb.set(chk_sqe.d, chk_sqe.q);
        cb.if_(s_cmd.fire(), |cb| {
            cb.set(chk_valid.d, 1);
            cb.set(chk_sqid.d, s_cmd.field("sqid"));
            cb.set(chk_sqe.d, s_cmd.field("sqe"));
        })
        .else_if(chk_leave, |cb| cb.set(chk_valid.d, 0));
    });
    m.bind(u_cpl, "s_valid_i", chk_valid.q & denied);
    m.bind(
        u_cpl,
        "s_data_i",
        cat([chk_sqid.q.ex(), cid.ex(), status.ex()]),
    );
    let cpl_data = m.bind_out(u_cpl, "m_data_o");
    m.bind_out_to(u_cpl, "m_valid_o", m_cpl.valid);
    m.bind(u_cpl, "m_ready_i", m_cpl.ready);
    m.assign(m_cpl.field("sqid"), cpl_data.slice(46, 31));
    m.assign(m_cpl.field("cid"), cpl_data.slice(30, 15));
    m.assign(m_cpl.field("status"), cpl_data.slice(14, 0));
    m.assign(m_cpl.field("dw0"), 0u64);

    let chk_tail = select(
        &mut m,
        "chk_tail",
        qi,
        &tail.iter().map(|t| t.q.ex()).collect::<Vec<_>>(),
    );
    let wr_addr = m.net("chk_slot", cat([qi.ex(), chk_tail.ex()]));
    m.mem_write(sqe_ram, push, wr_addr, sqe);
    m.mem_write(
        meta_ram,
        push,
        wr_addr,
        cat([ni.ex(), cost.ex(), need_w.ex()]),
    );
    let space: Vec<Expr> = (0..nq)
        .map(|q| {
            let in_chk = chk_valid.q & q_ok & qi.eq(u64::from(q));
            (count[q as usize].q.zext(dw + 2) + in_chk.zext(dw + 2)).lt(u64::from(depth))
        })
        .collect();
    let space_v = cat_chunked(&mut m, "space", space);
    m.assign(space_o, space_v);

    // ---- Per-queue flip-flops: class, "weight is 0", budget, the head's namespace and side.
    let mut q_class = Vec::new();
    let mut q_wz = Vec::new();
    let mut q_hns = Vec::new();
    let mut q_hwr = Vec::new();
    for q in 0..nq {
        q_class.push(m.reg(&format!("q{q}_class"), 2, 0));
        q_wz.push(m.reg(&format!("q{q}_weight_zero"), 1, 1));
        q_hns.push(m.reg_noreset(&format!("q{q}_head_ns"), nw));
        q_hwr.push(m.reg_noreset(&format!("q{q}_head_wr"), 1));
    }
    let q_budget = m.reg("q_budget", nq, ones(nq));
    m.comment(
        q_budget.q,
        "bit i: SQ i + 1's own buckets have budget (0 from the charge that put one in debt until a sweep finds it out)",
    );

    // ---- Namespace buckets (flip-flops), charged in the cycle after a decision.
    let charge = m.reg("charge_valid", 1, 0);
    m.comment(
        charge.q,
        "the charge stage: the command decided in the previous cycle",
    );
    let charge_q = m.reg("charge_q", qw, 0);
    let charge_more = m.reg("charge_more", 1, 0);
    m.comment(
        charge_more.q,
        "its queue holds another command (the new head)",
    );
    let hold = m.net("hold", !enable);
    let decide = m.wire("decide", 1);
    m.comment(decide, "a command is released this cycle");
    let win_idx = m.bind_out(u_sched, "win_idx_o");
    let win_head = select(
        &mut m,
        "win_head",
        win_idx,
        &head.iter().map(|h| h.q.ex()).collect::<Vec<_>>(),
    );
    let win_count = select(&mut m, "win_count", win_idx, &count_items);
    let rd_addr = m.net("win_slot", cat([win_idx.ex(), win_head.ex()]));
    let rd_next = m.net("win_next_slot", cat([win_idx.ex(), (win_head + 1).ex()]));
    let meta = m.mem_read(meta_ram, decide, rd_addr);
    let meta2 = m.mem_read(meta_ram, decide, rd_next);
    let c_ns = m.net("charge_ns", meta.slice(meta_w - 1, BW_BITS + 1));
    let c_cost = m.net("charge_cost", meta.slice(BW_BITS, 1));
    let c_wr = m.net("charge_wr", meta.bit(0));
    let add_bucket = |m: &mut ModuleBuilder,
                      name: &str,
                      module: &Rc<Module>,
                      cfg: (Sig, Sig),
                      spend: Expr,
                      cost: Expr|
     -> Sig {
        let u = m.instance(&format!("u_{name}"), module);
        m.bind(u, "rate_i", cfg.0);
        m.bind(u, "burst_i", cfg.1);
        m.bind(u, "hold_i", hold);
        m.bind(u, "spend_i", spend);
        m.bind(u, "cost_i", cost);
        m.bind_out(u, "ok_o")
    };
    let mut ns_ok_bits = Vec::new();
    for n in 0..nn {
        let (bw_rate, bw_burst, iops_rate, iops_burst) = ns_cfg[n as usize];
        let spend = m.net(
            &format!("ns{}_spend", n + 1),
            charge.q & c_ns.eq(u64::from(n)),
        );
        let a = add_bucket(
            &mut m,
            &format!("ns{}_bw", n + 1),
            &bw_bucket,
            (bw_rate, bw_burst),
            spend.ex(),
            c_cost.ex(),
        );
        let b = add_bucket(
            &mut m,
            &format!("ns{}_iops", n + 1),
            &iops_bucket,
            (iops_rate, iops_burst),
            spend.ex(),
            lit(1, 1),
        );
        ns_ok_bits.push(m.net(&format!("ns{}_budget", n + 1), a & b));
    }
    let ns_ok_vec = m.net("ns_budget", cat(ns_ok_bits.iter().rev().map(|s| s.ex())));

    // ---- Eligibility bitmaps. The queue charged in this cycle (decided in the previous one)
    // takes its budget from the charge itself, and its new head's namespace from the metadata
    // RAM's read, both forwarded: so a queue can be decided in consecutive cycles.
    let c_ok = m.wire("charge_budget", 1);
    m.comment(
        c_ok,
        "the charged queue's buckets have budget after the charge",
    );
    let chg_all = one_hot(&mut m, "charge_bit", charge.q, charge_q.q, nq);
    let chg_more = one_hot(
        &mut m,
        "charge_more_bit",
        charge.q & charge_more.q,
        charge_q.q,
        nq,
    );
    let m2_ns = m.net("next_head_ns", meta2.slice(meta_w - 1, BW_BITS + 1));
    let m2_wr = m.net("next_head_wr", meta2.bit(0));
    let mut nonempty = Vec::new();
    let mut ns_budget = Vec::new();
    for q in 0..nq {
        let qu = q as usize;
        nonempty.push(m.net(&format!("q{q}_nonempty"), count[qu].q.ne(0u64)));
        ns_budget.push(ns_ok_vec.shr_by(q_hns[qu].q).bit(0));
    }
    let nonempty_v = cat_chunked(
        &mut m,
        "nonempty",
        nonempty.iter().map(|s| s.ex()).collect(),
    );
    let nsb_v = cat_chunked(&mut m, "head_ns_budget", ns_budget);
    let nsb_next = m.net("next_head_ns_budget", ns_ok_vec.shr_by(m2_ns).bit(0));
    let qb_eff = m.net(
        "queue_budget",
        (q_budget.q & !chg_all) | (chg_all & c_ok.ex().repeat(nq)),
    );
    let nsb_eff = m.net(
        "ns_budget_of_head",
        (nsb_v & !chg_more) | (chg_more & nsb_next.ex().repeat(nq)),
    );
    let budget_v = m.net("budget", qb_eff & nsb_eff);
    m.comment(
        budget_v,
        "bit i: every bucket of SQ i + 1's head has budget",
    );
    let cand = m.net("candidate", nonempty_v & dst_space);
    m.comment(cand, "buffered, and its channel has space");
    let elig_v = m.net("elig", cand & budget_v);
    m.bind(u_sched, "elig_i", elig_v);
    let class_v = cat_chunked(
        &mut m,
        "queue_class",
        q_class.iter().map(|s| s.q.ex()).collect(),
    );
    m.bind(u_sched, "class_i", class_v);
    let wz_v = cat_chunked(
        &mut m,
        "weight_zero",
        q_wz.iter().map(|s| s.q.ex()).collect(),
    );
    m.bind(u_sched, "wz_i", wz_v);
    let any = m.bind_out(u_sched, "any_o");

    // ---- Output register; the SQE comes from the RAM's registered read.
    let out_valid = m.reg("out_valid", 1, 0);
    let out_sqid = m.reg("out_sqid", 16, 0);
    let free = m.net("out_free", !out_valid.q | m_cmd.ready);
    m.comment(free, "the output register can take a command");
    m.assign(decide, enable & free & any);
    m.bind(u_sched, "decide_i", decide);
    let rdata = m.mem_read(sqe_ram, decide, rd_addr);
    m.assign(out_valid.d, decide | (out_valid.q & !m_cmd.ready));
    m.assign(out_sqid.d, mux(decide, win_idx.zext(16) + 1, out_sqid.q));
    m.assign(m_cmd.valid, out_valid.q);
    m.assign(m_cmd.field("sqid"), out_sqid.q);
    m.assign(m_cmd.field("sqe"), rdata);
    m.assign(charge.d, decide);
    m.assign(charge_q.d, mux(decide, win_idx, charge_q.q));
    m.assign(charge_more.d, decide & win_count.ge(2u64));

    let pop_v = one_hot(&mut m, "pop", decide, win_idx, nq);
    let push_v = one_hot(&mut m, "push_q", push, qi, nq);
    let chg_v = one_hot(
        &mut m,
        "charge_q_bit",
        charge.q & charge_more.q,
        charge_q.q,
        nq,
    );
    for q in 0..nq {
        let qu = q as usize;
        let pop = pop_v.bit(q);
        let push_q = push_v.bit(q);
        m.assign(
            count[qu].d,
            count[qu].q + push_q.zext(dw + 1) - pop.zext(dw + 1),
        );
        m.assign(head[qu].d, mux(pop.clone(), head[qu].q + 1, head[qu].q));
        m.assign(tail[qu].d, mux(push_q.clone(), tail[qu].q + 1, tail[qu].q));
        // The head's namespace and side: from the check stage when the pushed command becomes
        // the head, from the metadata RAM (read at the decision) when the next one does.
        let becomes_head = push_q & (count[qu].q.eq(0u64) | (count[qu].q.eq(1u64) & pop));
        let (hn, hw) = (q_hns[qu], q_hwr[qu]);
        m.comb(|cb| {
            cb.set(hn.d, hn.q);
            cb.set(hw.d, hw.q);
            cb.if_(becomes_head, |cb| {
                cb.set(hn.d, ni);
                cb.set(hw.d, need_w);
            })
            .else_if(chg_v.bit(q), |cb| {
                cb.set(hn.d, meta2.slice(meta_w - 1, BW_BITS + 1));
                cb.set(hw.d, meta2.bit(0));
            });
        });
    }
    m.unused("meta_next_cost", meta2.slice(BW_BITS, 1));

    // ---- Per-queue RAMs: limits (written by software), bucket levels, counters.
    let ram_q = |m: &mut ModuleBuilder, name: &str, w: u32| m.memory(name, w, u64::from(nq));
    let cfg_ram = ram_q(&mut m, "q_cfg_ram", 32);
    let bwr_ram = ram_q(&mut m, "q_bw_rate_ram", 32);
    let bwb_ram = ram_q(&mut m, "q_bw_burst_ram", 32);
    let ior_ram = ram_q(&mut m, "q_iops_rate_ram", 32);
    let (blw, ilw) = (BW.lw(), IOPS.lw());
    let bkt_w = blw + ilw + STAMP_BITS;
    let bkt_ram = ram_q(&mut m, "q_bucket_ram", bkt_w);
    // bkt_ram: bandwidth level, IOPS level, and the cycle they are the levels of.
    let adm_ram = ram_q(&mut m, "q_adm_ram", 6 * cw);
    // adm_ram: counters adm_rd, adm_wr, bytes_rd, bytes_wr, thr_rd, thr_wr (low to high).
    let deny_ram = ram_q(&mut m, "q_deny_ram", 2 * cw);
    // deny_ram: counters deny_rd, deny_wr (low to high).

    // The charge: the decided command's queue buckets and counters, read at the decision.
    let c_cfg = m.mem_read(cfg_ram, decide, win_idx);
    let c_bwr = m.mem_read(bwr_ram, decide, win_idx);
    let c_bwb = m.mem_read(bwb_ram, decide, win_idx);
    let c_ior = m.mem_read(ior_ram, decide, win_idx);
    let c_bkt = m.mem_read(bkt_ram, decide, win_idx);
    let c_adm = m.mem_read(adm_ram, decide, win_idx);
    let bkt_fields = |m: &mut ModuleBuilder, pre: &str, v: Sig| {
        let stamp = m.net(&format!("{pre}_stamp"), v.slice(STAMP_BITS - 1, 0));
        let il = m.net(
            &format!("{pre}_stored_iops"),
            v.slice(STAMP_BITS + ilw - 1, STAMP_BITS),
        );
        let bl = m.net(
            &format!("{pre}_stored_bw"),
            v.slice(bkt_w - 1, STAMP_BITS + ilw),
        );
        let stale = m.net(&format!("{pre}_stale"), stamp.le(enable_at.q));
        m.comment(stale, "stored before the last enable: full");
        (bl, il, stamp, stale)
    };
    // A queue charged in consecutive cycles: the RAM read of the second charge was made while
    // the first one's words were written, so those are forwarded.
    let prev = m.reg("charge_prev_valid", 1, 0);
    let prev_q = m.reg("charge_prev_q", qw, 0);
    let prev_bkt = m.reg("charge_prev_bucket", bkt_w, 0);
    let prev_adm = m.reg("charge_prev_counters", 6 * cw, 0);
    let again = m.net("charge_again", prev.q & prev_q.q.eq(charge_q.q));
    m.comment(again, "the same queue was charged in the previous cycle");
    let c_bkt = m.net("charge_bucket_read", mux(again, prev_bkt.q, c_bkt));
    let c_adm = m.net("charge_counters_read", mux(again, prev_adm.q, c_adm));
    let (cbl, cil, cst, cstale) = bkt_fields(&mut m, "charge", c_bkt);
    let c_iob = m.net("charge_iops_burst", c_cfg.slice(31, 24));
    m.unused("charge_cfg_rest", c_cfg.slice(23, 0));
    let then = m.net("charge_decided_at", now.q - 1);
    m.comment(then, "the decision cycle");
    let bl_then = BW.refill(
        &mut m,
        "charge_bw",
        cbl.ex(),
        cst.ex(),
        then.ex(),
        c_bwr.ex(),
        c_bwb.ex(),
        cstale.ex(),
    );
    let il_then = IOPS.refill(
        &mut m,
        "charge_iops",
        cil.ex(),
        cst.ex(),
        then.ex(),
        c_ior.ex(),
        c_iob.ex(),
        cstale.ex(),
    );
    let bl_next = BW.spend(
        &mut m,
        "charge_bw_spent",
        bl_then.ex(),
        c_cost.ex(),
        c_bwr.ex(),
        c_bwb.ex(),
    );
    let il_next = IOPS.spend(
        &mut m,
        "charge_iops_spent",
        il_then.ex(),
        lit(1, 1),
        c_ior.ex(),
        c_iob.ex(),
    );
    m.assign(c_ok, !bl_next.bit(blw - 1) & !il_next.bit(ilw - 1));
    let c_write = m.net("charge_write", charge.q);
    let c_word = m.net(
        "charge_bucket_word",
        cat([bl_next.ex(), il_next.ex(), now.q.ex()]),
    );
    let cnt = |v: Sig, k: u32| v.slice((k + 1) * cw - 1, k * cw);
    let inc = |v: Sig, k: u32, on: Expr, amount: Expr| -> Expr {
        cnt(v, k) + mux(on, amount.resize(cw), lit(cw, 0))
    };
    let c_rd = !c_wr;
    let c_thr = !c_ok;
    let adm_next = m.net(
        "charge_counters",
        cat([
            inc(c_adm, 5, c_wr & c_thr.clone(), lit(1, 1)),
            inc(c_adm, 4, c_rd.clone() & c_thr, lit(1, 1)),
            inc(c_adm, 3, c_wr.ex(), c_cost.ex()),
            inc(c_adm, 2, c_rd.clone(), c_cost.ex()),
            inc(c_adm, 1, c_wr.ex(), lit(1, 1)),
            inc(c_adm, 0, c_rd, lit(1, 1)),
        ]),
    );

    m.assign(prev.d, charge.q);
    m.assign(prev_q.d, charge_q.q);
    m.assign(prev_bkt.d, c_word);
    m.assign(prev_adm.d, adm_next);

    // The sweep: one queue without budget per cycle, round robin, is checked for budget again.
    let sweep_ptr = m.reg("sweep_ptr", qw, 0);
    let (s_any, s_idx) = next_set(&mut m, "sweep", (!q_budget.q).ex(), sweep_ptr.q);
    let s_go = m.net("sweep_go", s_any & enable & !init.q);
    m.comment(s_go, "a queue without budget is read this cycle");
    m.assign(sweep_ptr.d, mux(s_go, next_index(s_idx, nq), sweep_ptr.q));
    let sweep = m.reg("sweep_valid", 1, 0);
    let sweep_q = m.reg("sweep_q", qw, 0);
    m.assign(sweep.d, s_go);
    m.assign(sweep_q.d, mux(s_go, s_idx, sweep_q.q));
    let s_cfg = m.mem_read(cfg_ram, s_go, s_idx);
    let s_bwr = m.mem_read(bwr_ram, s_go, s_idx);
    let s_bwb = m.mem_read(bwb_ram, s_go, s_idx);
    let s_ior = m.mem_read(ior_ram, s_go, s_idx);
    let s_bkt = m.mem_read(bkt_ram, s_go, s_idx);
    let (sbl, sil, sst, sstale) = bkt_fields(&mut m, "sweep", s_bkt);
    let s_iob = m.net("sweep_iops_burst", s_cfg.slice(31, 24));
    m.unused("sweep_cfg_rest", s_cfg.slice(23, 0));
    let bl_now = BW.refill(
        &mut m,
        "sweep_bw",
        sbl.ex(),
        sst.ex(),
        now.q.ex(),
        s_bwr.ex(),
        s_bwb.ex(),
        sstale.ex(),
    );
    let il_now = IOPS.refill(
        &mut m,
        "sweep_iops",
        sil.ex(),
        sst.ex(),
        now.q.ex(),
        s_ior.ex(),
        s_iob.ex(),
        sstale.ex(),
    );
    let s_ok = m.net(
        "sweep_budget",
        sweep.q & !bl_now.bit(blw - 1) & !il_now.bit(ilw - 1),
    );
    m.comment(s_ok, "the swept queue has budget again");
    m.unused("sweep_bw_rest", bl_now.slice(blw - 2, 0));
    m.unused("sweep_iops_rest", il_now.slice(ilw - 2, 0));

    let swp_all = one_hot(&mut m, "sweep_bit", s_ok, sweep_q.q, nq);
    m.assign(
        q_budget.d,
        mux(
            enable,
            (q_budget.q & !chg_all) | mux(c_ok, chg_all, lit(nq, 0)) | swp_all,
            ones(nq),
        ),
    );

    // Denials per queue: read-modify-write of the deny counters, forwarded back to back.
    let deny_q = m.net("deny_q", deny & q_ok);
    let d_rd = m.mem_read(deny_ram, deny_q, qi);
    let d_valid = m.reg("deny_valid", 1, 0);
    let d_q = m.reg("deny_queue", qw, 0);
    let d_wr = m.reg("deny_wr", 1, 0);
    m.assign(d_valid.d, deny_q);
    m.assign(d_q.d, mux(deny_q, qi, d_q.q));
    m.assign(d_wr.d, mux(deny_q, need_w, d_wr.q));
    let dw_valid = m.reg("deny_wb_valid", 1, 0);
    let dw_q = m.reg("deny_wb_queue", qw, 0);
    let dw_data = m.reg("deny_wb_data", 2 * cw, 0);
    let d_cur = m.net(
        "deny_counters",
        mux(dw_valid.q & dw_q.q.eq(d_q.q), dw_data.q, d_rd),
    );
    m.comment(
        d_cur,
        "the queue's deny counters, with a write of the previous cycle forwarded",
    );
    let d_next = m.net(
        "deny_counters_next",
        cat([
            inc(d_cur, 1, d_wr.q.ex(), lit(1, 1)),
            inc(d_cur, 0, !d_wr.q, lit(1, 1)),
        ]),
    );
    m.assign(dw_valid.d, d_valid.q);
    m.assign(dw_q.d, d_q.q);
    m.assign(dw_data.d, d_next);

    // The queue window (slot 1 of the decoder): limits and counters in the RAMs.
    let qa = |m: &mut ModuleBuilder, n: &str| m.bind_out(u_dec, &format!("m1_axil_{n}_o"));
    let aw_valid = qa(&mut m, "awvalid");
    let aw_addr = qa(&mut m, "awaddr");
    let w_valid = qa(&mut m, "wvalid");
    let w_data = qa(&mut m, "wdata");
    let w_strb = qa(&mut m, "wstrb");
    m.unused("qwin_wstrb", w_strb);
    let b_ready = qa(&mut m, "bready");
    let ar_valid = qa(&mut m, "arvalid");
    let ar_addr = qa(&mut m, "araddr");
    let r_ready = qa(&mut m, "rready");
    let nregs = QUEUE_REGS.len() as u64;
    let b_valid = m.reg("qwin_bvalid", 1, 0);
    let b_resp = m.reg("qwin_bresp", 2, 0);
    let w_go = m.net("qwin_write", aw_valid & w_valid & !b_valid.q & !init.q);
    let w_q = m.net("qwin_w_queue", aw_addr.slice(qbits - 1, 6));
    let w_r = m.net("qwin_w_reg", aw_addr.slice(5, 2));
    m.unused("qwin_w_byte", aw_addr.slice(1, 0));
    let w_ok = m.net(
        "qwin_w_ok",
        w_q.zext(qbits).lt(u64::from(nq)) & w_r.lt(nregs),
    );
    let w_qi = m.net("qwin_w_qi", w_q.resize(qw));
    let cfg_w = |k: u64| w_go & w_ok & w_r.eq(k);
    let cfg_data = m.net(
        "qwin_cfg_data",
        cat([
            w_data.slice(31, 24),
            lit(8, 0),
            w_data.slice(15, 8),
            lit(6, 0),
            w_data.slice(1, 0),
        ]),
    );
    m.comment(
        cfg_data,
        "cfg: class, weight, IOPS burst (other bits read 0)",
    );
    let zero = |w: u32| lit(w, 0);
    let ram_write = |m: &mut ModuleBuilder, mem, w: u32, en: Expr, data: Expr| {
        m.mem_write(
            mem,
            init.q | en,
            mux(init.q, init_addr.q, w_qi),
            mux(init.q, zero(w), data),
        );
    };
    let w_cfg = m.net("qwin_w_cfg", cfg_w(0));
    ram_write(&mut m, cfg_ram, 32, w_cfg.ex(), cfg_data.ex());
    ram_write(&mut m, bwr_ram, 32, cfg_w(1), w_data.ex());
    ram_write(&mut m, bwb_ram, 32, cfg_w(2), w_data.ex());
    ram_write(&mut m, ior_ram, 32, cfg_w(3), w_data.ex());
    m.mem_write(
        bkt_ram,
        init.q | c_write,
        mux(init.q, init_addr.q, charge_q.q),
        mux(init.q, zero(bkt_w), c_word),
    );
    m.mem_write(
        adm_ram,
        init.q | c_write,
        mux(init.q, init_addr.q, charge_q.q),
        mux(init.q, zero(6 * cw), adm_next),
    );
    m.mem_write(
        deny_ram,
        init.q | d_valid.q,
        mux(init.q, init_addr.q, d_q.q),
        mux(init.q, zero(2 * cw), d_next),
    );
    let cfgw_v = one_hot(&mut m, "qwin_cfg_bit", w_cfg, w_qi, nq);
    for q in 0..nq {
        let qu = q as usize;
        let hit = cfgw_v.bit(q);
        m.assign(
            q_class[qu].d,
            mux(hit.clone(), w_data.slice(1, 0), q_class[qu].q),
        );
        m.assign(
            q_wz[qu].d,
            mux(hit, w_data.slice(15, 8).eq(0u64), q_wz[qu].q),
        );
    }
    m.bind(u_sched, "wt_wr_i", w_cfg);
    m.bind(u_sched, "wt_wr_addr_i", w_qi);
    m.bind(u_sched, "wt_wr_data_i", w_data.slice(15, 8));
    let wt_rd = m.bind_out(u_sched, "wt_rd_o");
    let wt_addr = m.bind_out(u_sched, "wt_addr_o");
    let wt_word = m.mem_read(cfg_ram, wt_rd, wt_addr);
    m.bind(u_sched, "wt_data_i", wt_word.slice(15, 8));
    m.unused(
        "wt_word_rest",
        cat([wt_word.slice(31, 16), wt_word.slice(7, 0)]),
    );
    m.assign(b_valid.d, w_go | (b_valid.q & !b_ready));
    m.assign(
        b_resp.d,
        mux(
            w_go,
            mux(w_ok, lit(2, 0), lit(2, RESP_SLVERR as u128)),
            b_resp.q,
        ),
    );
    let qi_ = |m: &mut ModuleBuilder, n: &str, v: Expr| m.bind(u_dec, &format!("m1_axil_{n}_i"), v);
    qi_(&mut m, "awready", w_go.ex());
    qi_(&mut m, "wready", w_go.ex());
    qi_(&mut m, "bvalid", b_valid.q.ex());
    qi_(&mut m, "bresp", b_resp.q.ex());
    let r_pend = m.reg("qwin_rpend", 1, 0);
    m.comment(r_pend.q, "the RAMs answer a read this cycle");
    let r_valid = m.reg("qwin_rvalid", 1, 0);
    let r_data = m.reg("qwin_rdata", 32, 0);
    let r_resp = m.reg("qwin_rresp", 2, 0);
    let r_reg = m.reg("qwin_r_reg", 4, 0);
    let r_ok = m.reg("qwin_r_ok", 1, 0);
    let r_go = m.net("qwin_read", ar_valid & !r_pend.q & !r_valid.q & !init.q);
    let r_q = m.net("qwin_r_queue", ar_addr.slice(qbits - 1, 6));
    let r_rg = m.net("qwin_r_reg_in", ar_addr.slice(5, 2));
    m.unused("qwin_r_byte", ar_addr.slice(1, 0));
    let r_qi = m.net("qwin_r_qi", r_q.resize(qw));
    let rr = |m: &mut ModuleBuilder, mem| m.mem_read(mem, r_go, r_qi);
    let r_cfg = rr(&mut m, cfg_ram);
    let r_bwr = rr(&mut m, bwr_ram);
    let r_bwb = rr(&mut m, bwb_ram);
    let r_ior = rr(&mut m, ior_ram);
    let r_adm = rr(&mut m, adm_ram);
    let r_deny = rr(&mut m, deny_ram);
    m.assign(r_pend.d, r_go);
    m.assign(r_reg.d, mux(r_go, r_rg, r_reg.q));
    m.assign(
        r_ok.d,
        mux(
            r_go,
            r_q.zext(qbits).lt(u64::from(nq)) & r_rg.lt(nregs),
            r_ok.q,
        ),
    );
    let mut items: Vec<Expr> = vec![r_cfg.ex(), r_bwr.ex(), r_bwb.ex(), r_ior.ex()];
    for k in 0..6 {
        items.push(cnt(r_adm, k).zext(32));
    }
    for k in 0..2 {
        items.push(cnt(r_deny, k).zext(32));
    }
    let r_word = select(&mut m, "qwin_r_word", r_reg.q, &items);
    m.assign(r_valid.d, r_pend.q | (r_valid.q & !r_ready));
    m.assign(
        r_data.d,
        mux(r_pend.q, mux(r_ok.q, r_word, lit(32, 0)), r_data.q),
    );
    m.assign(
        r_resp.d,
        mux(
            r_pend.q,
            mux(r_ok.q, lit(2, 0), lit(2, RESP_SLVERR as u128)),
            r_resp.q,
        ),
    );
    qi_(&mut m, "arready", r_go.ex());
    qi_(&mut m, "rvalid", r_valid.q.ex());
    qi_(&mut m, "rdata", r_data.q.ex());
    qi_(&mut m, "rresp", r_resp.q.ex());

    // ---- Namespace counters (flip-flops).
    let counter = |m: &mut ModuleBuilder, name: &str, inc: Expr, amount: Expr| {
        let c = m.reg(name, cw, 0);
        m.assign(c.d, mux(inc, c.q + amount.resize(cw), c.q));
        m.bind(u_csr, &format!("{name}_value_i"), c.q);
    };
    let waiting = m.net("waiting_any", cand & !budget_v);
    let waiting = m.net("waiting_en", mux(enable, waiting, lit(nq, 0)));
    m.comment(
        waiting,
        "bit i: only the budget holds SQ i + 1's head back (its channel has space)",
    );
    let waiting_old = m.net("waiting_head_known", waiting & !chg_more);
    let waiting_next = m.net("waiting_next_head", (waiting & chg_more).any());
    m.comment(
        waiting_next,
        "the charged queue's new head (its namespace from the RAM) waits",
    );
    for n in 0..nn {
        let pre = format!("ns{}", n + 1);
        let pop = charge.q & c_ns.eq(u64::from(n));
        let wait_of = |m: &mut ModuleBuilder, wr: bool| {
            let side = if wr { "wr" } else { "rd" };
            let items = (0..nq as usize)
                .map(|q| {
                    let dir = if wr { q_hwr[q].q.ex() } else { !q_hwr[q].q };
                    waiting_old.bit(q as u32) & q_hns[q].q.eq(u64::from(n)) & dir
                })
                .collect();
            let e = or_chunked(m, &format!("{pre}_wait_{side}_heads"), items);
            let dir = if wr { m2_wr.ex() } else { !m2_wr };
            let e = e | (waiting_next & m2_ns.eq(u64::from(n)) & dir);
            m.net(&format!("{pre}_wait_{side}"), e)
        };
        let wait_rd = wait_of(&mut m, false);
        let wait_wr = wait_of(&mut m, true);
        let deny_n = deny & ns_in & ni.eq(u64::from(n));
        let incs = [
            (pop.clone() & !c_wr, lit(1, 1)),
            (pop.clone() & c_wr, lit(1, 1)),
            (pop.clone() & !c_wr, c_cost.ex()),
            (pop & c_wr, c_cost.ex()),
            (wait_rd.ex(), lit(1, 1)),
            (wait_wr.ex(), lit(1, 1)),
            (deny_n.clone() & !need_w, lit(1, 1)),
            (deny_n & need_w, lit(1, 1)),
        ];
        for ((name, _), (inc, amount)) in COUNTERS.iter().zip(incs) {
            counter(&mut m, &format!("{pre}_{name}"), inc, amount);
        }
    }
    debug_assert_eq!(WEIGHT_BITS, 8);

    // Functional coverage: each denial, a full queue buffer, each reason an eligible-looking
    // queue waits (its own budget, its head's namespace budget, its channel's space), the
    // output held.
    m.cover("deny_0bh_invalid_namespace", deny & !ns_ok);
    m.cover("deny_80h_lba_out_of_range", deny & ns_ok & range_bad);
    m.cover(
        "deny_86h_access_denied",
        deny & ns_ok & !range_bad & !granted,
    );
    m.cover("queue_buffer_full", chk_valid.q & !denied & !room);
    m.cover("waits_for_queue_budget", (cand & !qb_eff).ne(0u64));
    m.cover("waits_for_namespace_budget", (cand & !nsb_eff).ne(0u64));
    m.cover(
        "waits_for_channel_space",
        (nonempty_v & !dst_space).ne(0u64),
    );
    m.cover("cmd_out_held", out_valid.q & !m_cmd.ready);
    m.finish()
}
