//! `qos_arbiter`: the top of the QoS block: the check stage (decode, namespace and grant checks,
//! denials), the per-queue buffers (SQEs in one RAM, metadata in flip-flops), the token buckets,
//! the scheduler, the output register and the counters, with `qos_csr` on an AXI4-Lite port.
//! The behaviour is documented in [`super`].

use super::bucket::{bucket, RATE_BITS};
use super::csr::{register_map, COUNTERS};
use super::sched::{sched, CLASSES, WEIGHT_BITS};
use super::{QosParams, BW_BITS, BW_FRAC, IOPS_BURST_BITS, IOPS_FRAC};
use crate::blocks::arbiter::index_width;
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

/// One of `items` chosen by `sel` (a case with a default of zeros).
fn select(m: &mut ModuleBuilder, name: &str, sel: Sig, items: &[Expr]) -> Sig {
    let w = items[0].width();
    let out = m.wire(name, w);
    m.comb(|cb| {
        cb.set(out, lit(w, 0));
        cb.case(sel, |k| {
            for (i, it) in items.iter().enumerate() {
                k.arm(i as u64, |cb| cb.set(out, it.clone()));
            }
            k.default(|_| {});
        });
    });
    out
}

fn or_all(items: impl IntoIterator<Item = Expr>) -> Expr {
    items
        .into_iter()
        .reduce(|a, b| a | b)
        .unwrap_or_else(|| lit(1, 0))
}

/// The QoS arbiter, named `qos_arbiter` + `p.suffix()`.
pub fn arbiter(p: &QosParams, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let (nq, nn, ng, depth, cw) = (
        p.queues,
        p.namespaces,
        p.grants,
        p.queue_depth,
        p.counter_width,
    );
    let qw = index_width(nq).max(1);
    let nw = index_width(nn).max(1);
    let dw = clog2(u64::from(depth));
    let map = register_map(p)?;
    let csr = map.module(reset)?;
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
    m.doc("sq_space_o tells the front end which queues can take a command. CSRs on s_axil.");
    m.clock();
    m.reset();
    let u_csr = m.instance("u_csr", &csr);
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

    m.group("CSRs (AXI4-Lite slave)");
    m.pass_through(u_csr, "s_axil_");
    m.bind(u_csr, "info_queues_i", lit(8, u128::from(nq)));
    m.bind(u_csr, "info_namespaces_i", lit(8, u128::from(nn)));
    m.bind(u_csr, "info_grants_i", lit(8, u128::from(ng)));
    m.bind(u_csr, "info_depth_i", lit(8, u128::from(depth)));
    let enable = m.bind_out(u_csr, "ctrl_enable_o");

    // Configuration from the CSRs.
    let mut q_class = Vec::new();
    let mut q_weight = Vec::new();
    let mut q_cfg = Vec::new();
    for q in 0..nq {
        let pre = format!("sq{}", q + 1);
        q_class.push(m.bind_out(u_csr, &format!("{pre}_cfg_class_o")));
        q_weight.push(m.bind_out(u_csr, &format!("{pre}_cfg_weight_o")));
        let iops_burst = m.bind_out(u_csr, &format!("{pre}_cfg_iops_burst_o"));
        let bw_rate = m.bind_out(u_csr, &format!("{pre}_bw_rate_value_o"));
        let bw_burst = m.bind_out(u_csr, &format!("{pre}_bw_burst_value_o"));
        let iops_rate = m.bind_out(u_csr, &format!("{pre}_iops_rate_value_o"));
        q_cfg.push((bw_rate, bw_burst, iops_rate, iops_burst));
    }
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
    let shift = select(&mut m, "chk_lba_shift", ni, &shift_items);
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
            (nlb.zext(BW_BITS) + 1).shl_by(shift),
            lit(BW_BITS, 0),
        ),
    );
    m.comment(
        cost,
        "bytes: (NLB + 1) << lba_shift for Read, Compare, Write; else 0",
    );

    // ---- Per-queue buffers.
    let sqe_ram = m.memory("sqe_ram", 512, u64::from(nq * depth));
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
    m.assign(s_cmd.ready, !chk_valid.q | chk_leave);
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

    // Metadata of each buffered command: namespace index, cost, write-side.
    let meta_w = nw + BW_BITS + 1;
    let chk_meta = m.net("chk_meta", cat([ni.ex(), cost.ex(), need_w.ex()]));
    let mut head_ns = Vec::new();
    let mut head_cost = Vec::new();
    let mut head_wr = Vec::new();
    let mut nonempty = Vec::new();
    let mut space = Vec::new();
    for q in 0..nq {
        let push_q = m.net(&format!("q{q}_push"), push & qi.eq(u64::from(q)));
        let mut slots = Vec::new();
        for k in 0..depth {
            let r = m.reg_noreset(&format!("q{q}_meta{k}"), meta_w);
            let wr = push_q & tail[q as usize].q.eq(u64::from(k));
            m.assign(r.d, mux(wr, chk_meta, r.q));
            slots.push(r.q.ex());
        }
        let hm = select(
            &mut m,
            &format!("q{q}_head_meta"),
            head[q as usize].q,
            &slots,
        );
        head_ns.push(m.net(&format!("q{q}_head_ns"), hm.slice(meta_w - 1, BW_BITS + 1)));
        head_cost.push(m.net(&format!("q{q}_head_cost"), hm.slice(BW_BITS, 1)));
        head_wr.push(m.net(&format!("q{q}_head_wr"), hm.bit(0)));
        nonempty.push(m.net(&format!("q{q}_nonempty"), count[q as usize].q.ne(0u64)));
        let in_chk = chk_valid.q & q_ok & qi.eq(u64::from(q));
        space.push((count[q as usize].q.zext(dw + 2) + in_chk.zext(dw + 2)).lt(u64::from(depth)));
    }
    m.assign(space_o, cat(space.into_iter().rev()));

    // ---- Token buckets and eligibility.
    let decide = m.wire("decide", 1);
    m.comment(decide, "a command is released this cycle");
    let win = m.bind_out(u_sched, "win_o");
    let win_idx = m.bind_out(u_sched, "win_idx_o");
    let hold = m.net("hold", !enable);
    let win_cost = select(
        &mut m,
        "win_cost",
        win_idx,
        &head_cost.iter().map(|s| s.ex()).collect::<Vec<_>>(),
    );
    let win_ns = select(
        &mut m,
        "win_ns",
        win_idx,
        &head_ns.iter().map(|s| s.ex()).collect::<Vec<_>>(),
    );
    let win_wr = select(
        &mut m,
        "win_wr",
        win_idx,
        &head_wr.iter().map(|s| s.ex()).collect::<Vec<_>>(),
    );
    let add_bucket = |m: &mut ModuleBuilder,
                      name: &str,
                      module: &Rc<Module>,
                      rate: Sig,
                      burst: Sig,
                      spend: Expr,
                      cost: Expr|
     -> Sig {
        let u = m.instance(&format!("u_{name}"), module);
        m.bind(u, "rate_i", rate);
        m.bind(u, "burst_i", burst);
        m.bind(u, "hold_i", hold);
        m.bind(u, "spend_i", spend);
        m.bind(u, "cost_i", cost);
        m.bind_out(u, "ok_o")
    };
    let mut q_ok_bits = Vec::new();
    for q in 0..nq {
        let (bw_rate, bw_burst, iops_rate, iops_burst) = q_cfg[q as usize];
        let spend = decide & win.bit(q);
        let a = add_bucket(
            &mut m,
            &format!("sq{}_bw", q + 1),
            &bw_bucket,
            bw_rate,
            bw_burst,
            spend.clone(),
            head_cost[q as usize].ex(),
        );
        let b = add_bucket(
            &mut m,
            &format!("sq{}_iops", q + 1),
            &iops_bucket,
            iops_rate,
            iops_burst,
            spend,
            lit(1, 1),
        );
        q_ok_bits.push(m.net(&format!("sq{}_budget", q + 1), a & b));
    }
    let mut ns_ok_bits = Vec::new();
    for n in 0..nn {
        let (bw_rate, bw_burst, iops_rate, iops_burst) = ns_cfg[n as usize];
        let spend = m.net(
            &format!("ns{}_spend", n + 1),
            decide & win_ns.eq(u64::from(n)),
        );
        let a = add_bucket(
            &mut m,
            &format!("ns{}_bw", n + 1),
            &bw_bucket,
            bw_rate,
            bw_burst,
            spend.ex(),
            win_cost.ex(),
        );
        let b = add_bucket(
            &mut m,
            &format!("ns{}_iops", n + 1),
            &iops_bucket,
            iops_rate,
            iops_burst,
            spend.ex(),
            lit(1, 1),
        );
        ns_ok_bits.push(m.net(&format!("ns{}_budget", n + 1), a & b));
    }
    let ns_ok_vec = m.net("ns_budget", cat(ns_ok_bits.iter().rev().map(|s| s.ex())));
    let mut budget = Vec::new();
    let mut elig = Vec::new();
    for q in 0..nq {
        let ns_b = ns_ok_vec.shr_by(head_ns[q as usize]).bit(0);
        let b = m.net(&format!("q{q}_budget"), q_ok_bits[q as usize] & ns_b);
        m.comment(b, "every bucket of the head command has budget");
        budget.push(b);
        elig.push(nonempty[q as usize] & b & dst_space.bit(q));
    }
    let elig_v = m.net("elig", cat(elig.into_iter().rev()));
    m.bind(u_sched, "elig_i", elig_v);
    m.bind(
        u_sched,
        "class_i",
        cat(q_class.iter().rev().map(|s| s.ex())),
    );
    m.bind(
        u_sched,
        "weight_i",
        cat(q_weight.iter().rev().map(|s| s.ex())),
    );
    debug_assert_eq!(CLASSES, 4);
    debug_assert_eq!(WEIGHT_BITS, 8);
    debug_assert_eq!(RATE_BITS, 32);
    let any = m.bind_out(u_sched, "any_o");

    // ---- Output register; the SQE comes from the RAM's registered read.
    let out_valid = m.reg("out_valid", 1, 0);
    let out_sqid = m.reg("out_sqid", 16, 0);
    let free = m.net("out_free", !out_valid.q | m_cmd.ready);
    m.comment(free, "the output register can take a command");
    m.assign(decide, enable & free & any);
    m.bind(u_sched, "decide_i", decide);
    let head_items: Vec<Expr> = head.iter().map(|h| h.q.ex()).collect();
    let win_head = select(&mut m, "win_head", win_idx, &head_items);
    let rd_addr = cat([win_idx.ex().resize(qw), win_head.ex()]
        .into_iter()
        .filter(|e| e.width() > 0));
    let wr_addr = cat([
        qi.ex(),
        select(
            &mut m,
            "chk_tail",
            qi,
            &tail.iter().map(|t| t.q.ex()).collect::<Vec<_>>(),
        )
        .ex(),
    ]);
    m.mem_write(sqe_ram, push, wr_addr, sqe);
    let rdata = m.mem_read(sqe_ram, decide, rd_addr);
    m.assign(out_valid.d, decide | (out_valid.q & !m_cmd.ready));
    m.assign(out_sqid.d, mux(decide, win_idx.zext(16) + 1, out_sqid.q));
    m.assign(m_cmd.valid, out_valid.q);
    m.assign(m_cmd.field("sqid"), out_sqid.q);
    m.assign(m_cmd.field("sqe"), rdata);

    for q in 0..nq {
        let qu = q as usize;
        let pop = m.net(&format!("q{q}_pop"), decide & win.bit(q));
        let push_q = push & qi.eq(u64::from(q));
        m.assign(
            count[qu].d,
            count[qu].q + push_q.zext(dw + 1) - pop.zext(dw + 1),
        );
        m.assign(head[qu].d, mux(pop, head[qu].q + 1, head[qu].q));
        m.assign(tail[qu].d, mux(push_q, tail[qu].q + 1, tail[qu].q));
    }

    // ---- Counters.
    let counter = |m: &mut ModuleBuilder, name: &str, inc: Expr, amount: Expr| {
        let c = m.reg(name, cw, 0);
        m.assign(c.d, mux(inc, c.q + amount.resize(cw), c.q));
        m.bind(u_csr, &format!("{name}_value_i"), c.q);
    };
    let waiting: Vec<Sig> = (0..nq as usize)
        .map(|q| {
            let w = m.net(
                &format!("q{q}_waiting"),
                enable & nonempty[q] & dst_space.bit(q as u32) & !budget[q],
            );
            m.comment(
                w,
                "only the budget holds the head back (its channel has space)",
            );
            w
        })
        .collect();
    for q in 0..nq {
        let qu = q as usize;
        let pre = format!("sq{}", q + 1);
        let pop = decide & win.bit(q);
        let rd = !head_wr[qu];
        let wr = head_wr[qu].ex();
        let deny_q = deny & q_ok & qi.eq(u64::from(q));
        let incs = [
            (pop.clone() & rd.clone(), lit(1, 1)),
            (pop.clone() & wr.clone(), lit(1, 1)),
            (pop.clone() & rd.clone(), head_cost[qu].ex()),
            (pop & wr.clone(), head_cost[qu].ex()),
            (waiting[qu] & rd, lit(1, 1)),
            (waiting[qu] & wr, lit(1, 1)),
            (deny_q.clone() & !need_w, lit(1, 1)),
            (deny_q & need_w, lit(1, 1)),
        ];
        for ((name, _), (inc, amount)) in COUNTERS.iter().zip(incs) {
            counter(&mut m, &format!("{pre}_{name}"), inc, amount);
        }
    }
    for n in 0..nn {
        let pre = format!("ns{}", n + 1);
        let pop = decide & win_ns.eq(u64::from(n));
        let wait_of = |m: &mut ModuleBuilder, wr: bool| {
            let e = or_all((0..nq as usize).map(|q| {
                let dir = if wr { head_wr[q].ex() } else { !head_wr[q] };
                waiting[q] & head_ns[q].eq(u64::from(n)) & dir
            }));
            m.net(&format!("{pre}_wait_{}", if wr { "wr" } else { "rd" }), e)
        };
        let wait_rd = wait_of(&mut m, false);
        let wait_wr = wait_of(&mut m, true);
        let deny_n = deny & ns_in & ni.eq(u64::from(n));
        let incs = [
            (pop.clone() & !win_wr, lit(1, 1)),
            (pop.clone() & win_wr, lit(1, 1)),
            (pop.clone() & !win_wr, win_cost.ex()),
            (pop & win_wr, win_cost.ex()),
            (wait_rd.ex(), lit(1, 1)),
            (wait_wr.ex(), lit(1, 1)),
            (deny_n.clone() & !need_w, lit(1, 1)),
            (deny_n & need_w, lit(1, 1)),
        ];
        for ((name, _), (inc, amount)) in COUNTERS.iter().zip(incs) {
            counter(&mut m, &format!("{pre}_{name}"), inc, amount);
        }
    }
    m.finish()
}
