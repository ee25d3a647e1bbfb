//! `chip_route`: the routing table between the QoS arbiter and the transports, and the merge of
//! every completion source into the front end's `io_cpl`. The rules are in [`super`] ("Routing"
//! and "Completions"); this file builds them.

use super::{status, Channels, TRANSPORT_CODES};
use crate::blocks::arbiter::rr_arbiter;
use crate::config::Transport;
use hdl_builder::prelude::*;
use hdl_builder::Errors;
use std::rc::Rc;

/// Fields of the internal command stream.
pub fn cmd_def() -> StreamDef {
    StreamDef::new().field("sqid", 16).field("sqe", 512)
}

/// Fields of the internal completion stream.
pub fn cpl_def() -> StreamDef {
    StreamDef::new()
        .field("sqid", 16)
        .field("cid", 16)
        .field("status", 15)
        .field("dw0", 32)
}

/// Bits of a channel number in a route entry (enough for the widest transport).
pub fn chan_bits(ch: &Channels) -> u32 {
    ch.list
        .iter()
        .map(|&(_, n)| clog2(u64::from(n)))
        .max()
        .unwrap_or(1)
        .max(1)
}

/// The module's name: `chip_route_q<queues>` then `_<transport><channels>` per transport, then
/// `_d<default code>`.
pub fn module_name(ch: &Channels) -> String {
    let mut s = format!("chip_route_q{}", ch.queues);
    for &(t, n) in &ch.list {
        s.push_str(&format!("_{}{n}", t.name()));
    }
    s.push_str(&format!("_d{}", code(ch.default)));
    s
}

/// A transport's code in a route entry (bits 17:16): fixed, whatever the configuration holds.
pub fn code(t: Transport) -> u64 {
    TRANSPORT_CODES
        .iter()
        .position(|&c| c == t)
        .expect("every transport has a code") as u64
}

/// The OR of `items` (0 when there are none).
fn any(items: impl IntoIterator<Item = Expr>) -> Expr {
    items
        .into_iter()
        .reduce(|a, b| a | b)
        .unwrap_or_else(|| lit(1, 0))
}

/// The routing table and completion merge for `ch`.
pub fn route(ch: &Channels, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let nq = ch.queues;
    let nt = ch.list.len() as u32;
    let cw = chan_bits(ch);
    let qw = clog2(u64::from(nq)).max(1);
    let ncpl = 2 + nt;
    let cpl_arb = rr_arbiter(ncpl, reset)?;

    let mut m = ModuleBuilder::with_reset(&module_name(ch), reset);
    m.doc("Routing table of the chip top: binds I/O queues (SQ ids 1..Q) one to one to transport");
    m.doc("channels (RoCE QPs, NVMe/TCP connections), sends each admitted command to its queue's");
    m.doc("channel (SQ id rewritten to channel + 1), completes a command of an unbound queue with");
    m.doc(
        "82h Namespace Not Ready (DNR 0) moving no byte, tells QoS which queues' channels take a",
    );
    m.doc("command now, and merges QoS denials, those completions and the transports' completions");
    m.doc("(SQ id mapped back) round robin into the front end's io_cpl. Rules: chip/mod.rs.");
    m.clock();
    m.reset();

    m.group("admitted commands from QoS");
    let s_cmd = m.stream_in("s_cmd", &cmd_def());
    m.group("per-queue space of the bound channel, to QoS (bit i: SQ i + 1)");
    let dst_space = m.output("dst_space_o", nq);
    let mut t_cmd = Vec::new();
    let mut t_space = Vec::new();
    let mut t_cpl = Vec::new();
    for &(t, n) in &ch.list {
        m.group(&format!(
            "{} transport: commands, channel space, completions",
            t.name()
        ));
        t_cmd.push(m.stream_out(&format!("m_{}_cmd", t.name()), &cmd_def()));
        let sp = m.input(&format!("{}_space_i", t.name()), n);
        m.comment(
            sp,
            "bit c: channel c takes a command now (the engine's sq_space_o)",
        );
        t_space.push(sp);
        t_cpl.push(m.stream_in(&format!("s_{}_cpl", t.name()), &cpl_def()));
    }
    m.group("completions: QoS denials in, the merged stream out to the front end");
    let s_qos_cpl = m.stream_in("s_qos_cpl", &cpl_def());
    let m_cpl = m.stream_out("m_cpl", &cpl_def());
    m.group("table access (chip_csr route_sel / route_set / route_get / route_err)");
    let tbl_sel = m.input("tbl_sel_i", 16);
    let tbl_we = m.input("tbl_we_i", 1);
    let tbl_wdata = m.input("tbl_wdata_i", 32);
    let tbl_rdata = m.output("tbl_rdata_o", 32);
    let tbl_err = m.output("tbl_err_o", 2);
    m.comment(
        tbl_err,
        "one-cycle pulses: bit 0 SQ id outside 1..Q, bit 1 transport or channel the chip lacks",
    );
    m.group("events, for the counters");
    let ev_routed = m.output("ev_routed_o", nt);
    m.comment(ev_routed, "bit t: a command left for transport t");
    let ev_unbound = m.output("ev_unbound_o", 1);
    m.comment(ev_unbound, "a command of an unbound queue was taken (82h)");

    // The table: per SQ a valid bit, a transport code and a channel; per channel of each
    // transport the SQ id bound to it (kept after an unbind, so completions of commands still
    // in flight find their queue).
    let dflt = ch
        .list
        .iter()
        .find(|&&(t, _)| t == ch.default)
        .expect("the default transport is held");
    let mut e_valid = Vec::new();
    let mut e_code = Vec::new();
    let mut e_chan = Vec::new();
    for q in 0..nq {
        let bound = q < dflt.1;
        e_valid.push(m.reg(&format!("sq{}_bound", q + 1), 1, u64::from(bound)));
        e_code.push(m.reg(&format!("sq{}_transport", q + 1), 2, code(ch.default)));
        e_chan.push(m.reg(
            &format!("sq{}_channel", q + 1),
            cw,
            if bound { u64::from(q) } else { 0 },
        ));
    }
    let mut rev: Vec<Vec<Reg>> = Vec::new();
    for &(t, n) in &ch.list {
        rev.push(
            (0..n)
                .map(|c| m.reg(&format!("{}{c}_sqid", t.name()), 16, u64::from(c) + 1))
                .collect(),
        );
    }

    // Table writes.
    let w_valid = m.net("tbl_w_bound", tbl_wdata.bit(31));
    let w_code = m.net("tbl_w_transport", tbl_wdata.slice(17, 16));
    let w_chan = m.net("tbl_w_channel", tbl_wdata.slice(7, 0));
    m.unused(
        "tbl_wdata_reserved",
        cat([tbl_wdata.slice(30, 18), tbl_wdata.slice(15, 8)]),
    );
    let sel_ok = m.net("tbl_sel_ok", tbl_sel.ne(0u64) & tbl_sel.le(u64::from(nq)));
    let chan_ok = any(ch
        .list
        .iter()
        .map(|&(t, n)| w_code.eq(code(t)) & w_chan.lt(u64::from(n))));
    let chan_ok = m.net("tbl_chan_ok", chan_ok);
    let bad_sel = m.net("tbl_bad_sel", tbl_we & !sel_ok);
    let bad_chan = m.net("tbl_bad_chan", tbl_we & sel_ok & w_valid & !chan_ok);
    m.assign(tbl_err, cat([bad_chan.ex(), bad_sel.ex()]));
    let wr = m.net("tbl_write", tbl_we & sel_ok & (!w_valid | chan_ok));
    let wr_bind = m.net("tbl_write_bind", wr & w_valid);
    let w_chan_c = m.net("tbl_w_chan", w_chan.resize(cw));
    if cw < 8 {
        m.unused("tbl_w_channel_high", w_chan.slice(7, cw));
    }
    for q in 0..nq {
        let me = m.net(
            &format!("tbl_sel_sq{}", q + 1),
            tbl_sel.eq(u64::from(q) + 1),
        );
        // A bind of another SQ to this SQ's channel unbinds this one (one queue per channel).
        let stolen = m.net(
            &format!("tbl_steal_sq{}", q + 1),
            wr_bind
                & !me
                & e_valid[q as usize].q
                & e_code[q as usize].q.eq(w_code)
                & e_chan[q as usize].q.eq(w_chan_c),
        );
        let (v, cd, cn) = (e_valid[q as usize], e_code[q as usize], e_chan[q as usize]);
        m.comb(|c| {
            c.set(v.d, v.q);
            c.set(cd.d, cd.q);
            c.set(cn.d, cn.q);
            c.if_(wr & me, |c| {
                c.set(v.d, w_valid);
                c.if_(w_valid, |c| {
                    c.set(cd.d, w_code);
                    c.set(cn.d, w_chan_c);
                });
            })
            .else_if(stolen, |c| c.set(v.d, 0u64));
        });
    }
    for (ti, &(t, n)) in ch.list.iter().enumerate() {
        for cidx in 0..n {
            let r = rev[ti][cidx as usize];
            let hit = m.net(
                &format!("tbl_bind_{}{cidx}", t.name()),
                wr_bind & w_code.eq(code(t)) & w_chan_c.eq(u64::from(cidx)),
            );
            m.assign(r.d, mux(hit, tbl_sel, r.q));
        }
    }
    // route_get: the selected SQ's entry, 0 when unbound or out of range.
    m.comb(|c| {
        c.set(tbl_rdata, lit(32, 0));
        c.case(tbl_sel, |k| {
            for q in 0..nq {
                let qi = q as usize;
                let entry = cat([
                    lit(14, 0x2000),
                    e_code[qi].q.ex(),
                    lit(16 - cw, 0),
                    e_chan[qi].q.ex(),
                ]);
                k.arm(u64::from(q) + 1, |c| {
                    c.if_(e_valid[qi].q, |c| c.set(tbl_rdata, entry));
                });
            }
            k.default(|_| {});
        });
    });

    // Routing of the command at s_cmd.
    let sqid = s_cmd.field("sqid");
    let in_range = m.net("cmd_in_range", sqid.ne(0u64) & sqid.le(u64::from(nq)));
    let idx = m.net("cmd_idx", (sqid - 1u64).slice(qw - 1, 0));
    let pick = |m: &mut ModuleBuilder, name: &str, regs: &[Reg], w: u32| -> Sig {
        let out = m.wire(name, w);
        m.comb(|c| {
            c.set(out, lit(w, 0));
            c.case(idx, |k| {
                for (i, r) in regs.iter().enumerate() {
                    k.arm(i as u64, |c| c.set(out, r.q));
                }
                k.default(|_| {});
            });
        });
        out
    };
    let l_valid = pick(&mut m, "cmd_bound_raw", &e_valid, 1);
    let l_code = pick(&mut m, "cmd_transport", &e_code, 2);
    let l_chan = pick(&mut m, "cmd_channel", &e_chan, cw);
    let bound = m.net("cmd_bound", in_range & l_valid);
    m.comment(bound, "the command's queue is bound to a channel");
    let bq = m.reg("bounce_valid", 1, 0);
    let bq_sqid = m.reg("bounce_sqid", 16, 0);
    let bq_cid = m.reg("bounce_cid", 16, 0);
    let take_bounce = m.net("take_bounce", s_cmd.valid & !bound & !bq.q);
    let mut ready = take_bounce.ex();
    let mut routed = Vec::new();
    for (ti, &(t, _)) in ch.list.iter().enumerate() {
        let go = m.net(
            &format!("cmd_to_{}", t.name()),
            s_cmd.valid & bound & l_code.eq(code(t)),
        );
        let o = &t_cmd[ti];
        m.assign(o.valid, go);
        m.assign(o.field("sqid"), l_chan.zext(16) + 1u64);
        m.assign(o.field("sqe"), s_cmd.field("sqe"));
        ready = ready | (go & o.ready);
        routed.push(m.net(&format!("routed_{}", t.name()), go & o.ready));
    }
    m.assign(s_cmd.ready, ready);
    m.assign(ev_routed, cat(routed.iter().rev()));
    m.assign(ev_unbound, take_bounce);

    // Space per queue, for QoS: the bound channel's bit, or the bounce register's room; never
    // while QoS's output register already holds a command of that queue.
    let mut spaces = Vec::new();
    for q in 0..nq {
        let qi = q as usize;
        let held = m.net(
            &format!("held_sq{}", q + 1),
            s_cmd.valid & sqid.eq(u64::from(q) + 1),
        );
        let chan_space = any(ch.list.iter().enumerate().map(|(ti, &(t, _))| {
            e_code[qi].q.eq(code(t)) & t_space[ti].shr_by(e_chan[qi].q).bit(0)
        }));
        spaces.push(m.net(
            &format!("space_sq{}", q + 1),
            !held & mux(e_valid[qi].q, chan_space, !bq.q),
        ));
    }
    m.assign(dst_space, cat(spaces.iter().rev()));

    // Completions: QoS denials, unbound bounces, then each transport's, round robin.
    let ca = m.instance("u_cpl_arbiter", &cpl_arb);
    let mut reqs = vec![s_qos_cpl.valid.ex(), bq.q.ex()];
    reqs.extend(t_cpl.iter().map(|s| s.valid.ex()));
    m.bind(ca, "req_i", cat(reqs.iter().rev().cloned()));
    let cv = m.bind_out(ca, "valid_o");
    let cg = m.bind_out(ca, "gnt_o");
    let ci = m.bind_out(ca, "gnt_idx_o");
    m.bind(ca, "ready_i", m_cpl.ready);
    m.assign(s_qos_cpl.ready, m_cpl.ready & cg.bit(0));
    let bq_fire = m.net("bounce_fire", m_cpl.ready & cg.bit(1));
    for (ti, s) in t_cpl.iter().enumerate() {
        m.assign(s.ready, m_cpl.ready & cg.bit(2 + ti as u32));
    }
    m.comb(|c| {
        c.set(bq.d, bq.q);
        c.set(bq_sqid.d, bq_sqid.q);
        c.set(bq_cid.d, bq_cid.q);
        c.if_(take_bounce, |c| {
            c.set(bq.d, 1u64);
            c.set(bq_sqid.d, sqid);
            c.set(bq_cid.d, s_cmd.field("sqe").slice(31, 16));
        })
        .else_if(bq_fire, |c| c.set(bq.d, 0u64));
    });
    // A transport's completion names channel + 1: the SQ bound to that channel.
    let mut t_sqid = Vec::new();
    for (ti, &(t, n)) in ch.list.iter().enumerate() {
        let csq = t_cpl[ti].field("sqid");
        let cc = m.net(&format!("{}_cpl_chan", t.name()), csq - 1u64);
        let e = (0..n).fold(lit(16, 0), |a, c| {
            mux(cc.eq(u64::from(c)), rev[ti][c as usize].q, a)
        });
        t_sqid.push(m.net(&format!("{}_cpl_sqid", t.name()), e));
    }
    let sel = |qos: Expr, bounce: Expr, ts: &[Expr]| -> Expr {
        let mut e = mux(ci.eq(1u64), bounce, qos);
        for (ti, x) in ts.iter().enumerate() {
            e = mux(ci.eq(2 + ti as u64), x.clone(), e);
        }
        e
    };
    m.assign(m_cpl.valid, cv);
    let sq_ts: Vec<Expr> = t_sqid.iter().map(|s| s.ex()).collect();
    m.assign(
        m_cpl.field("sqid"),
        sel(s_qos_cpl.field("sqid").ex(), bq_sqid.q.ex(), &sq_ts),
    );
    for f in ["cid", "status", "dw0"] {
        let ts: Vec<Expr> = t_cpl.iter().map(|s| s.field(f).ex()).collect();
        let bounce = match f {
            "cid" => bq_cid.q.ex(),
            "status" => lit(15, u128::from(status::NAMESPACE_NOT_READY)),
            _ => lit(32, 0),
        };
        m.assign(m_cpl.field(f), sel(s_qos_cpl.field(f).ex(), bounce, &ts));
    }
    m.finish()
}
