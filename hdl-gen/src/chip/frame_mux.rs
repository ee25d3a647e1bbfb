//! The frame mux: one Ethernet port (AXI4-Stream frames without FCS) shared by the RoCEv2
//! engine and the TCP/IP engine. Contract in [`super`], section "The frame mux"; golden model
//! `testbench/src/models/frame_mux.rs`, property `frame_mux` (suite `chip`).

use hdl_builder::prelude::*;
use hdl_builder::Errors;
use std::rc::Rc;

/// Bytes of a frame the ingress decision reads: Ethernet (14), an IPv4 header without options
/// (20), the UDP source and destination ports (4).
pub const DECIDE_BYTES: u32 = 38;
/// The RoCEv2 UDP destination port (IANA).
pub const ROCE_UDP_PORT: u16 = 4791;

/// The module name: `eth_frame_mux_w<bits>_<r: RoCE held><t: TCP held>`.
pub fn module_name(width: u32, roce: bool, tcp: bool) -> String {
    format!(
        "eth_frame_mux_w{width}_{}{}",
        if roce { "r" } else { "" },
        if tcp { "t" } else { "" }
    )
}

/// The frame mux for `width`-bit beats (a multiple of 8, 64 to 512), with the RoCE side when
/// `roce`, the TCP side when `tcp` (at least one).
pub fn frame_mux(
    width: u32,
    roce: bool,
    tcp: bool,
    reset: ResetStyle,
) -> Result<Rc<Module>, Errors> {
    let name = module_name(width, roce, tcp);
    if !(roce || tcp) || !width.is_multiple_of(64) || !(64..=512).contains(&width) {
        return Err(Errors::invalid(
            &name,
            format!(
                "{name}: a frame mux needs a transport (RoCE {roce}, TCP {tcp}) and a beat of 64 to 512 bits in steps of 64 (got {width})"
            ),
        ));
    }
    let lanes = width / 8;
    // Beats that hold the bytes the decision reads.
    let hb = DECIDE_BYTES.div_ceil(lanes);
    let cw = clog2(u64::from(hb) + 1);

    let mut m = ModuleBuilder::with_reset(&name, reset);
    m.doc("Ethernet frame mux: one port (frames without FCS) shared by the fabric engines.");
    m.doc(
        "Ingress: a frame is RoCEv2 when it is IPv4 without options, UDP, destination port 4791,",
    );
    m.doc(
        "else it goes to the TCP/IP engine (ARP, ICMP, TCP, anything else); a frame for an engine",
    );
    m.doc(&format!(
        "not held is dropped (ev_drop_o). The first {hb} beats are held until the decision."
    ));
    m.doc("Egress: whole frames, round robin between the engines, never interleaved.");
    m.doc("Contract: hdl-gen/src/chip/mod.rs, section \"The frame mux\".");
    m.clock();
    m.reset();

    struct Axis {
        data: Sig,
        keep: Sig,
        last: Sig,
        valid: Sig,
        ready: Sig,
    }
    let axis_in = |m: &mut ModuleBuilder, pre: &str| Axis {
        data: m.input(&format!("{pre}_tdata_i"), width),
        keep: m.input(&format!("{pre}_tkeep_i"), lanes),
        last: m.input(&format!("{pre}_tlast_i"), 1),
        valid: m.input(&format!("{pre}_tvalid_i"), 1),
        ready: m.output(&format!("{pre}_tready_o"), 1),
    };
    let axis_out = |m: &mut ModuleBuilder, pre: &str| Axis {
        data: m.output(&format!("{pre}_tdata_o"), width),
        keep: m.output(&format!("{pre}_tkeep_o"), lanes),
        last: m.output(&format!("{pre}_tlast_o"), 1),
        valid: m.output(&format!("{pre}_tvalid_o"), 1),
        ready: m.input(&format!("{pre}_tready_i"), 1),
    };
    m.group("the Ethernet port (toward the MAC)");
    let wire_out = axis_out(&mut m, "m_axis");
    let wire_in = axis_in(&mut m, "s_axis");
    let roce_side = roce.then(|| {
        m.group("RoCEv2 engine: frames from it, frames to it");
        (
            axis_in(&mut m, "s_roce_axis"),
            axis_out(&mut m, "m_roce_axis"),
        )
    });
    let tcp_side = tcp.then(|| {
        m.group("TCP/IP engine: frames from it, frames to it");
        (
            axis_in(&mut m, "s_tcp_axis"),
            axis_out(&mut m, "m_tcp_axis"),
        )
    });
    m.group("events");
    let ev_drop = m.output("ev_drop_o", 1);
    m.comment(
        ev_drop,
        "a frame for an engine not held was dropped (one cycle per frame)",
    );

    // ------------------------------------------------------------ egress
    // A frame's source is chosen when no frame is on the port (one idle cycle per frame) and
    // kept until its last beat leaves.
    let srcs: Vec<&Axis> = roce_side
        .iter()
        .map(|(s, _)| s)
        .chain(tcp_side.iter().map(|(s, _)| s))
        .collect();
    let e_busy = m.reg("tx_busy", 1, 0);
    m.comment(e_busy.q, "a frame is on the Ethernet port");
    let e_sel = m.reg("tx_sel", 1, 0);
    m.comment(
        e_sel.q,
        "its source: 0 the first engine held (RoCE before TCP), 1 the second",
    );
    let e_prev = m.reg("tx_prev", 1, 1);
    m.comment(
        e_prev.q,
        "the source of the last frame (round robin: the other goes first)",
    );
    let (v0, v1) = match srcs.as_slice() {
        [a] => (a.valid.ex(), lit(1, 0)),
        [a, b] => (a.valid.ex(), b.valid.ex()),
        _ => unreachable!("one or two sources"),
    };
    let pick = m.net(
        "tx_pick",
        mux(v0.clone() & v1.clone(), !e_prev.q, v1.clone() & !v0.clone()),
    );
    m.comment(
        pick,
        "the next frame's source when both have one: not the last one's",
    );
    let start = m.net("tx_start", !e_busy.q & (v0 | v1));
    let sel_any = |m: &mut ModuleBuilder, nm: &str, f: &dyn Fn(&Axis) -> Sig| -> Sig {
        let e = match srcs.as_slice() {
            [a] => f(a).ex(),
            [a, b] => mux(e_sel.q, f(b), f(a)),
            _ => unreachable!("one or two sources"),
        };
        m.net(nm, e)
    };
    let o_valid = sel_any(&mut m, "tx_src_valid", &|a| a.valid);
    let o_last = sel_any(&mut m, "tx_src_last", &|a| a.last);
    let o_data = sel_any(&mut m, "tx_src_data", &|a| a.data);
    let o_keep = sel_any(&mut m, "tx_src_keep", &|a| a.keep);
    m.assign(wire_out.valid, e_busy.q & o_valid);
    m.assign(wire_out.data, o_data);
    m.assign(wire_out.keep, o_keep);
    m.assign(wire_out.last, o_last);
    let e_end = m.net("tx_end", e_busy.q & o_valid & wire_out.ready & o_last);
    for (i, s) in srcs.iter().enumerate() {
        let me = if i == 0 { !e_sel.q } else { e_sel.q.ex() };
        m.assign(s.ready, e_busy.q & me & wire_out.ready);
    }
    m.comb(|c| {
        c.set(e_busy.d, e_busy.q);
        c.set(e_sel.d, e_sel.q);
        c.set(e_prev.d, e_prev.q);
        c.if_(start, |c| {
            c.set(e_busy.d, 1u64);
            c.set(e_sel.d, pick);
            c.set(e_prev.d, pick);
        })
        .else_if(e_end, |c| c.set(e_busy.d, 0u64));
    });

    // ------------------------------------------------------------ ingress
    // COLLECT: the first beats are taken into `hold`; DECIDE: the decision from their bytes;
    // REPLAY: the held beats go to the engine chosen (or nowhere); PASS: the rest of the frame
    // flows through until its last beat.
    let st = m.enum_type("rx_state", &["RX_COLLECT", "RX_REPLAY", "RX_PASS"]);
    let rs = m.reg_enum("rx_state", &st, st.item("RX_COLLECT"));
    let in_collect = m.net("rx_in_collect", rs.q.eq(st.item("RX_COLLECT")));
    let in_replay = m.net("rx_in_replay", rs.q.eq(st.item("RX_REPLAY")));
    let in_pass = m.net("rx_in_pass", rs.q.eq(st.item("RX_PASS")));
    let hold: Vec<Reg> = (0..hb)
        .map(|i| m.reg_noreset(&format!("rx_hold{i}"), width + lanes + 1))
        .collect();
    m.comment(hold[0].q, "a held beat: {last, keep, data}");
    let n_held = m.reg("rx_held", cw, 0);
    m.comment(n_held.q, "beats held of the current frame");
    let n_out = m.reg("rx_sent", cw, 0);
    m.comment(n_out.q, "held beats already replayed");
    let to_roce = m.reg("rx_to_roce", 1, 0);
    m.comment(to_roce.q, "the frame is RoCEv2");
    let drop = m.reg("rx_drop", 1, 0);
    m.comment(
        drop.q,
        "the frame's engine is not held: its beats are taken and dropped",
    );
    let ended = m.reg("rx_ended", 1, 0);
    m.comment(ended.q, "the frame's last beat is among the held ones");

    // The decision's bytes: the held beats, and the beat taken now (the last one collected).
    let take_hold = m.net("rx_take_hold", in_collect & wire_in.valid);
    let beat = m.net(
        "rx_beat",
        cat([wire_in.last.ex(), wire_in.keep.ex(), wire_in.data.ex()]),
    );
    let full = m.net(
        "rx_collect_done",
        take_hold & (wire_in.last | n_held.q.eq(u64::from(hb - 1))),
    );
    m.comment(
        full,
        "the beat taken now completes what the decision needs (or ends the frame)",
    );
    // Byte b of the frame as it will be once this beat is held.
    let byte = |b: u32| -> Expr {
        let (i, lo) = (b / lanes, (b % lanes) * 8);
        mux(
            n_held.q.eq(u64::from(i)),
            wire_in.data.slice(lo + 7, lo),
            hold[i as usize].q.slice(lo + 7, lo),
        )
    };
    // Bytes present: the frame's length when it ends in these beats (keep is contiguous).
    let kcount = m.net(
        "rx_keep_count",
        (0..lanes).fold(lit(clog2(u64::from(lanes) + 1), 0), |a, i| {
            a + wire_in.keep.bit(i).zext(clog2(u64::from(lanes) + 1))
        }),
    );
    let lane_bits = clog2(u64::from(lanes));
    let have = m.net(
        "rx_hdr_bytes",
        cat([n_held.q.ex(), zeros(lane_bits)]).zext(16) + kcount.zext(16),
    );
    m.comment(have, "bytes of the frame so far, this beat included");
    // The header fields the decision reads, named as the frame names them (network order).
    let ethertype = m.net("rx_ethertype", cat([byte(12), byte(13)]));
    let ver_ihl = m.net("rx_ip_ver_ihl", byte(14));
    let proto = m.net("rx_ip_proto", byte(23));
    let dport = m.net("rx_udp_dport", cat([byte(36), byte(37)]));
    let is_roce = m.net(
        "rx_is_roce",
        have.ge(u64::from(DECIDE_BYTES))
            & ethertype.eq(0x0800u64)
            & ver_ihl.eq(0x45u64)
            & proto.eq(17u64)
            & dport.eq(u64::from(ROCE_UDP_PORT)),
    );
    m.comment(
        is_roce,
        "EtherType 0800h, IPv4 without options (45h), protocol 17 (UDP), destination port 4791",
    );
    let drop_now = m.net(
        "rx_drop_now",
        if roce && tcp {
            lit(1, 0)
        } else if roce {
            !is_roce
        } else {
            is_roce.ex()
        },
    );

    // The engine's output: the held beats (REPLAY), then the port itself (PASS).
    let head = m.net(
        "rx_head",
        (0..hb).rev().fold(hold[0].q.ex(), |e, i| {
            mux(n_out.q.eq(u64::from(i)), hold[i as usize].q, e)
        }),
    );
    let r_data = m.net(
        "rx_out_data",
        mux(in_replay, head.slice(width - 1, 0), wire_in.data),
    );
    let r_keep = m.net(
        "rx_out_keep",
        mux(
            in_replay,
            head.slice(width + lanes - 1, width),
            wire_in.keep,
        ),
    );
    let r_last = m.net(
        "rx_out_last",
        mux(in_replay, head.bit(width + lanes), wire_in.last),
    );
    let r_valid = m.net("rx_out_valid", in_replay | (in_pass & wire_in.valid));
    let sinks: Vec<(&str, Expr, &Axis)> = roce_side
        .iter()
        .map(|(_, o)| ("roce", to_roce.q.ex(), o))
        .chain(tcp_side.iter().map(|(_, o)| ("tcp", !to_roce.q, o)))
        .collect();
    let mut taken: Expr = drop.q.ex();
    for (nm, me, o) in sinks {
        let mine = m.net(&format!("rx_for_{nm}"), me & !drop.q);
        m.assign(o.valid, r_valid & mine);
        m.assign(o.data, r_data);
        m.assign(o.keep, r_keep);
        m.assign(o.last, r_last);
        taken = taken | (mine & o.ready);
    }
    let out_ready = m.net("rx_out_ready", taken);
    m.comment(
        out_ready,
        "the chosen engine takes the beat (a dropped frame's beats: always)",
    );
    m.assign(wire_in.ready, in_collect | (in_pass & out_ready));
    let replay_fire = m.net("rx_replay_fire", in_replay & out_ready);
    let replay_end = m.net("rx_replay_end", replay_fire & (n_out.q + 1u64).eq(n_held.q));
    m.assign(ev_drop, full & drop_now);
    m.comb(|c| {
        c.set(rs.d, rs.q);
        c.set(n_held.d, n_held.q);
        c.set(n_out.d, n_out.q);
        c.set(to_roce.d, to_roce.q);
        c.set(drop.d, drop.q);
        c.set(ended.d, ended.q);
        for (i, h) in hold.iter().enumerate() {
            c.set(h.d, h.q);
            c.if_(take_hold & n_held.q.eq(i as u64), |c| c.set(h.d, beat));
        }
        c.case(rs.q, |k| {
            k.arm(st.item("RX_COLLECT"), |c| {
                c.if_(take_hold, |c| c.set(n_held.d, n_held.q + 1u64));
                c.if_(full, |c| {
                    c.set(to_roce.d, is_roce);
                    c.set(drop.d, drop_now);
                    c.set(ended.d, wire_in.last);
                    c.set(n_out.d, 0u64);
                    c.set(rs.d, st.item("RX_REPLAY"));
                });
            });
            k.arm(st.item("RX_REPLAY"), |c| {
                c.if_(replay_fire, |c| c.set(n_out.d, n_out.q + 1u64));
                c.if_(replay_end, |c| {
                    c.set(n_held.d, 0u64);
                    c.set(
                        rs.d,
                        mux(ended.q, st.item("RX_COLLECT"), st.item("RX_PASS")),
                    );
                });
            });
            k.arm(st.item("RX_PASS"), |c| {
                c.if_(wire_in.valid & out_ready & wire_in.last, |c| {
                    c.set(rs.d, st.item("RX_COLLECT"))
                });
            });
            k.default(|_| {});
        });
    });
    m.finish()
}
