//! The chip top `<chip.name>`: the front end, QoS, the routing table, the transports the
//! configuration holds, the AXI4 interconnect to host memory and the firmware CSR decoder,
//! wired as [`super`] states. Built with the builder's public API only.

use super::csr::{self, MAP_REGS};
use super::route::{self, code};
use super::{
    channels, dma_params, facts, frame_mux, nvme_params, nvme_tcp_params, qos_params, roce_params,
    tcp_params,
};
use crate::blocks::axi_interconnect::axi_interconnect;
use crate::blocks::axi_upsizer::axi_upsizer;
use crate::blocks::axil_decoder::axil_decoder;
use crate::blocks::chip_info::chip_info;
use crate::config::{Config, Transport};
use hdl_builder::prelude::*;
use hdl_builder::Errors;
use hdl_builder::Inst;
use std::rc::Rc;

fn port_width(module: &Rc<Module>, name: &str) -> Option<u32> {
    module
        .ports()
        .iter()
        .find(|p| p.name == name)
        .map(|p| p.width)
}

/// Ports of `inst` named `from<rest>` become ports `to<rest>` of the top.
fn expose(m: &mut ModuleBuilder, inst: Inst, module: &Rc<Module>, from: &str, to: &str) {
    for port in module.ports() {
        let Some(rest) = port.name.strip_prefix(from) else {
            continue;
        };
        let name = format!("{to}{rest}");
        if port.input {
            let s = m.input(&name, port.width);
            m.bind(inst, &port.name, s);
        } else {
            let s = m.output(&name, port.width);
            m.bind_out_to(inst, &port.name, s);
        }
    }
}

/// Connects bus `a_pre*` of `a` to bus `b_pre*` of `b`, port by port (`<a_pre>x_o` to
/// `<b_pre>x_i` and back). A narrower output is zero-extended into a wider input; a wider
/// output feeds a narrower input with its low bits (the rest marked unused). `b`'s inputs
/// without a partner are tied to 0 (an AXI ID a master does not have); outputs without one
/// are left unused.
fn connect_bus(
    m: &mut ModuleBuilder,
    (a, a_mod, a_pre): (Inst, &Rc<Module>, &str),
    (b, b_mod, b_pre): (Inst, &Rc<Module>, &str),
) {
    let b_ports = b_mod.ports();
    let mut matched = Vec::new();
    for port in a_mod.ports() {
        let Some(rest) = port.name.strip_prefix(a_pre) else {
            continue;
        };
        let other = if let Some(s) = rest.strip_suffix("_o") {
            format!("{b_pre}{s}_i")
        } else if let Some(s) = rest.strip_suffix("_i") {
            format!("{b_pre}{s}_o")
        } else {
            continue;
        };
        let Some(bp) = b_ports.iter().find(|p| p.name == other) else {
            continue;
        };
        matched.push(other.clone());
        let (src, src_port, src_w, dst, dst_port, dst_w): (Inst, String, u32, Inst, String, u32) =
            if port.input {
                (
                    b,
                    bp.name.clone(),
                    bp.width,
                    a,
                    port.name.clone(),
                    port.width,
                )
            } else {
                (
                    a,
                    port.name.clone(),
                    port.width,
                    b,
                    bp.name.clone(),
                    bp.width,
                )
            };
        let w = m.bind_out(src, &src_port);
        if src_w > dst_w {
            m.unused(&format!("{dst_port}_high"), w.slice(src_w - 1, dst_w));
            m.bind(dst, &dst_port, w.slice(dst_w - 1, 0));
        } else {
            m.bind(dst, &dst_port, w.zext(dst_w));
        }
    }
    for bp in b_ports {
        if bp.name.starts_with(b_pre) && bp.input && !matched.contains(&bp.name) {
            m.bind(b, &bp.name, lit(bp.width, 0));
        }
    }
}

/// Connects stream `prefix_a` of `a` to stream `prefix_b` of `b` through a wire bundle.
fn connect_stream(
    m: &mut ModuleBuilder,
    name: &str,
    def: &StreamDef,
    (a, pa): (Inst, &str),
    (b, pb): (Inst, &str),
) {
    let w = m.stream_wire(name, def);
    m.bind_stream(a, pa, &w);
    m.bind_stream(b, pb, &w);
}

/// The chip top for `cfg`, named `cfg.chip.name`.
pub fn top(cfg: &Config, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let name = cfg.chip.name.clone();
    let ch = channels(cfg);
    let slot_bits = cfg.csr.addr_width;
    let nvme = crate::nvme::ctrl::ctrl(&nvme_params(cfg), reset)?;
    let qos = crate::qos::arbiter::arbiter(&qos_params(cfg), reset)?;
    let rt = route::route(&ch, reset)?;
    let info = chip_info(&facts(cfg), slot_bits, reset)?;
    let ccsr = csr::register_map(&ch, slot_bits)?.module(reset)?;
    let mut engines: Vec<(Transport, Rc<Module>)> = Vec::new();
    for &(t, _) in &ch.list {
        engines.push((
            t,
            match t {
                Transport::Roce => {
                    crate::roce::engine::engine(&roce_params(cfg), &dma_params(cfg), reset)?
                }
                // The NVMe/TCP engine on the TCP/IP engine (`nvme_tcp/ip.rs`).
                Transport::NvmeTcp => crate::nvme_tcp::ip::nvme_tcp_ip(
                    &nvme_tcp_params(cfg),
                    &tcp_params(cfg),
                    &dma_params(cfg),
                    reset,
                )?,
            },
        ));
    }

    // Host memory: the front end's data width is the bus's (dma.data_width); an engine with a
    // narrower master reaches it through an upsizer.
    let dw = port_width(&nvme, "m_axi_rdata_i").unwrap_or(64);
    let mut idw = 1;
    let mut ups: Vec<Option<Rc<Module>>> = Vec::new();
    for (t, e) in &engines {
        let w = port_width(e, "m_axi_rdata_i").unwrap_or(0);
        let id = port_width(e, "m_axi_arid_o").unwrap_or(1);
        if w > dw {
            return Err(Errors::invalid(
                &name,
                format!(
                    "the {} engine's host-memory master is {w} bits wide, the host bus (dma.data_width) {dw}: raise dma.data_width to at least {w} (there is no downsizer)",
                    t.name()
                ),
            ));
        }
        ups.push(if w < dw {
            Some(axi_upsizer(id, w, dw, reset)?)
        } else {
            None
        });
        idw = idw.max(id);
    }
    let ic = axi_interconnect(1 + engines.len() as u32, idw, dw, reset)?;

    // Ethernet: one port, the frame mux in front of the engines that have one.
    let eth_width = engines
        .iter()
        .filter_map(|(_, e)| port_width(e, "m_axis_tdata_o"))
        .max()
        .unwrap_or(64);
    let held = |t: Transport| engines.iter().any(|(x, _)| *x == t);
    let fmux = frame_mux::frame_mux(
        eth_width,
        held(Transport::Roce),
        held(Transport::NvmeTcp),
        reset,
    )?;

    // Firmware: one slot per CSR block: (block, its module, whose port (None: the chip's own
    // blocks, Some(i): engine i), the port's prefix).
    let slots = csr::slots(&ch);
    let mut blocks: Vec<(&str, Rc<Module>, Option<usize>, &str)> = vec![
        ("chip_csr", ccsr.clone(), None, "s_axil_"),
        ("chip_info_csr", info.clone(), None, "s_axil_"),
        ("nvme_csr", nvme.clone(), None, "s_axil_"),
        ("qos_csr", qos.clone(), None, "s_axil_"),
    ];
    for (i, (t, e)) in engines.iter().enumerate() {
        match t {
            Transport::Roce => blocks.push(("roce_csr", e.clone(), Some(i), "s_axil_")),
            Transport::NvmeTcp => {
                blocks.push(("nvme_tcp_csr", e.clone(), Some(i), "s_axil_"));
                blocks.push(("tcp_csr", e.clone(), Some(i), "s_tcp_axil_"));
            }
        }
    }
    debug_assert_eq!(blocks.len(), slots.len());
    let windows: Vec<u32> = blocks
        .iter()
        .map(|(_, module, _, pre)| port_width(module, &format!("{pre}awaddr_i")).unwrap_or(2))
        .collect();
    // Name every block that does not fit and the width that fits them all, so one edit of the
    // configuration is enough.
    let need = windows.iter().copied().max().unwrap_or(2);
    if need > slot_bits {
        let short: Vec<String> = blocks
            .iter()
            .zip(&windows)
            .filter(|(_, &w)| w > slot_bits)
            .map(|((b, ..), w)| format!("`{b}` {w}"))
            .collect();
        return Err(Errors::invalid(
            &name,
            format!(
                "csr.addr_width {slot_bits} is too small for these CSR windows (address bits each needs): {}; raise csr.addr_width to at least {need}",
                short.join(", ")
            ),
        ));
    }
    let dec = axil_decoder(slot_bits, &windows, reset)?;

    let mut m = ModuleBuilder::with_reset(&name, reset);
    m.doc("NVMe-oF offload chip top: NVMe front end (BAR0, queues, SQ fetch, CQ post, MSI-X),");
    m.doc("QoS arbiter, routing table (I/O queue -> transport channel) and completion merge, the");
    m.doc("fabric transports (NVMe/TCP on the TCP/IP engine), one Ethernet port through the frame");
    m.doc("mux, one AXI4 master to host memory through an ID-routing interconnect, and one");
    m.doc("firmware AXI4-Lite slave over every block's CSRs (map in chip_csr.md).");
    m.doc("Contract: hdl-gen/src/chip/mod.rs.");
    m.clock();
    m.reset();
    let u_nvme = m.instance("u_nvme", &nvme);
    let u_qos = m.instance("u_qos", &qos);
    let u_route = m.instance("u_route", &rt);
    let u_info = m.instance("u_info", &info);
    let u_csr = m.instance("u_chip_csr", &ccsr);
    let u_ic = m.instance("u_axi", &ic);
    let u_dec = m.instance("u_fw", &dec);
    let u_mux = m.instance("u_eth_mux", &fmux);
    let u_eng: Vec<Inst> = engines
        .iter()
        .map(|(t, e)| m.instance(&format!("u_{}", t.name()), e))
        .collect();
    let u_ups: Vec<Option<Inst>> = engines
        .iter()
        .zip(&ups)
        .map(|((t, _), u)| {
            u.as_ref()
                .map(|u| m.instance(&format!("u_{}_upsizer", t.name()), u))
        })
        .collect();

    m.group("host: BAR0, interrupts");
    expose(&mut m, u_nvme, &nvme, "s_bar_", "s_bar_");
    expose(&mut m, u_nvme, &nvme, "irq_", "irq_");
    // admin_cmd/admin_cpl carry the admin queue (sqid 0) and the fallback I/O commands (their
    // SQ id): every field of the front end's streams becomes a port.
    m.group("firmware: CSRs of every block, admin and fallback I/O commands and completions");
    expose(&mut m, u_dec, &dec, "s_axil_", "s_axil_");
    expose(&mut m, u_nvme, &nvme, "admin_cmd_", "admin_cmd_");
    expose(&mut m, u_nvme, &nvme, "admin_cpl_", "admin_cpl_");
    m.group("host memory: one AXI4 master, IDs {master, inner id}");
    expose(&mut m, u_ic, &ic, "m_axi_", "m_axi_");
    m.group("Ethernet: frames without FCS, RoCEv2 and TCP/IP (ARP, ICMP, TCP) on one port");
    expose(&mut m, u_mux, &fmux, "m_axis_", "m_axis_");
    expose(&mut m, u_mux, &fmux, "s_axis_", "s_axis_");
    // Each NVMe/TCP connection's state: (chip_csr register_field, the engine's value).
    let mut tcp_state: Vec<(&str, Sig)> = Vec::new();
    for (i, (t, e)) in engines.iter().enumerate() {
        let side = match t {
            Transport::Roce => "roce",
            Transport::NvmeTcp => "tcp",
        };
        // Both engines send a frame's beats back to back (their contracts), as a MAC needs.
        connect_bus(
            &mut m,
            (u_eng[i], e, "m_axis_"),
            (u_mux, &fmux, &format!("s_{side}_axis_")),
        );
        connect_bus(
            &mut m,
            (u_mux, &fmux, &format!("m_{side}_axis_")),
            (u_eng[i], e, "s_axis_"),
        );
        if *t == Transport::NvmeTcp {
            m.group("NVMe/TCP and TCP/IP: each connection's state (also in chip_csr)");
            for (from, to, field) in [
                ("connected_o", "tcp_connected_o", "tcp_conn_connected"),
                ("dead_o", "tcp_dead_o", "tcp_conn_dead"),
                ("tcp_up_o", "tcp_up_o", "tcp_link_up"),
                ("tcp_failed_o", "tcp_failed_o", "tcp_link_failed"),
            ] {
                let v = m.bind_out(u_eng[i], from);
                let o = m.output(to, port_width(e, from).unwrap_or(1));
                m.assign(o, v);
                tcp_state.push((field, v));
            }
        }
    }
    let eth_drop = m.bind_out(u_mux, "ev_drop_o");

    // Firmware CSR slots.
    for (k, (_, module, whose, port)) in blocks.iter().enumerate() {
        let inst = match (k, whose) {
            (_, Some(i)) => u_eng[*i],
            (0, None) => u_csr,
            (1, None) => u_info,
            (2, None) => u_nvme,
            _ => u_qos,
        };
        let pre = format!("m{k}_axil_");
        connect_bus(&mut m, (u_dec, &dec, &pre), (inst, module, port));
    }

    // Host memory masters: 0 the front end, then the engines.
    connect_bus(&mut m, (u_nvme, &nvme, "m_axi_"), (u_ic, &ic, "s0_axi_"));
    for (i, (_, e)) in engines.iter().enumerate() {
        let pre = format!("s{}_axi_", i + 1);
        match (&ups[i], u_ups[i]) {
            (Some(up), Some(u)) => {
                connect_bus(&mut m, (u_eng[i], e, "m_axi_"), (u, up, "s_axi_"));
                connect_bus(&mut m, (u, up, "m_axi_"), (u_ic, &ic, &pre));
            }
            _ => connect_bus(&mut m, (u_eng[i], e, "m_axi_"), (u_ic, &ic, &pre)),
        }
    }

    // Commands: front end -> QoS -> routing table -> transports; completions back.
    let cmd = route::cmd_def();
    let cpl = route::cpl_def();
    connect_stream(
        &mut m,
        "fe_cmd",
        &cmd,
        (u_nvme, "io_cmd"),
        (u_qos, "s_io_cmd"),
    );
    connect_stream(
        &mut m,
        "qos_cmd",
        &cmd,
        (u_qos, "m_io_cmd"),
        (u_route, "s_cmd"),
    );
    connect_stream(
        &mut m,
        "qos_cpl",
        &cpl,
        (u_qos, "m_io_cpl"),
        (u_route, "s_qos_cpl"),
    );
    connect_stream(
        &mut m,
        "fe_cpl",
        &cpl,
        (u_route, "m_cpl"),
        (u_nvme, "io_cpl"),
    );
    let mps = m.bind_out(u_nvme, "mps_o");
    for (i, (t, _)) in engines.iter().enumerate() {
        let tn = t.name();
        connect_stream(
            &mut m,
            &format!("{tn}_cmd"),
            &cmd,
            (u_route, &format!("m_{tn}_cmd")),
            (u_eng[i], "io_cmd"),
        );
        connect_stream(
            &mut m,
            &format!("{tn}_cpl"),
            &cpl,
            (u_eng[i], "io_cpl"),
            (u_route, &format!("s_{tn}_cpl")),
        );
        let sp = m.bind_out(u_eng[i], "sq_space_o");
        m.bind(u_route, &format!("{tn}_space_i"), sp);
        m.bind(u_eng[i], "mps_i", mps);
    }

    // Space: the front end may fetch a queue QoS has room for; SQ ids above QoS's queues need
    // none (QoS denies them). QoS may release a queue whose channel takes it now.
    let nq_fe = port_width(&nvme, "sq_space_i").unwrap_or(1);
    let qos_space = m.bind_out(u_qos, "sq_space_o");
    let fe_space = if nq_fe > ch.queues {
        cat([ones(nq_fe - ch.queues), qos_space.ex()])
    } else {
        qos_space.slice(nq_fe - 1, 0)
    };
    if nq_fe < ch.queues {
        m.unused("qos_space_unused", qos_space.slice(ch.queues - 1, nq_fe));
    }
    m.bind(u_nvme, "sq_space_i", fe_space);
    let dst = m.bind_out(u_route, "dst_space_o");
    m.bind(u_qos, "dst_space_i", dst);

    // chip_csr: the table port, the digests, the counters, the map.
    let sel = m.bind_out(u_csr, "route_sel_sqid_o");
    m.bind(u_route, "tbl_sel_i", sel);
    let we = m.bind_out(u_csr, "route_set_entry_we_o");
    m.bind(u_route, "tbl_we_i", we);
    let wd = m.bind_out(u_csr, "route_set_entry_o");
    m.bind(u_route, "tbl_wdata_i", wd);
    let rd = m.bind_out(u_route, "tbl_rdata_o");
    m.bind(u_csr, "route_get_entry_i", rd);
    let err = m.bind_out(u_route, "tbl_err_o");
    m.bind(u_csr, "route_err_bad_sqid_set_i", err.bit(0));
    m.bind(u_csr, "route_err_bad_channel_set_i", err.bit(1));
    m.bind(u_csr, "info_queues_i", lit(16, u128::from(ch.queues)));
    m.bind(
        u_csr,
        "info_default_i",
        lit(2, u128::from(code(ch.default))),
    );
    for (reg, block) in MAP_REGS {
        let v = csr::base(&ch, slot_bits, block);
        m.bind(u_csr, &format!("{reg}_base_i"), lit(32, u128::from(v)));
    }
    for (i, (t, _)) in engines.iter().enumerate() {
        if *t == Transport::NvmeTcp {
            let h = m.bind_out(u_csr, "tcp_dgst_hdgst_o");
            let d = m.bind_out(u_csr, "tcp_dgst_ddgst_o");
            m.bind(u_eng[i], "dgst_i", cat([d.ex(), h.ex()]));
            // tcp_ctrl.run = 0 holds the NVMe/TCP engine in reset: firmware picks the
            // digests, then starts the connections (an ICReq asks for them as the connection
            // starts). The TCP/IP engine under it runs on.
            let run = m.bind_out(u_csr, "tcp_ctrl_run_o");
            m.bind(u_eng[i], "run_i", run);
            for (field, v) in &tcp_state {
                m.bind(u_csr, &format!("{field}_i"), *v);
            }
        }
    }
    let routed = m.bind_out(u_route, "ev_routed_o");
    let unbound = m.bind_out(u_route, "ev_unbound_o");
    for (name, _) in csr::COUNTERS {
        let inc = match name {
            "cnt_unbound" => Some(unbound.ex()),
            "cnt_frame_drop" => Some(eth_drop.ex()),
            _ => ch
                .list
                .iter()
                .position(|&(t, _)| name == format!("cnt_{}", t.name()))
                .map(|i| routed.bit(i as u32)),
        };
        let port = format!("{name}_value_i");
        match inc {
            Some(e) => {
                let c = m.reg(name, 32, 0);
                m.assign(c.d, c.q + e.zext(32));
                m.bind(u_csr, &port, c.q);
            }
            None => m.bind(u_csr, &port, lit(32, 0)),
        }
    }
    m.finish()
}
