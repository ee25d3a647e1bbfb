//! The NVMe/TCP engine on the TCP/IP engine: `nvme_tcp_ip_*`, the two joined one connection
//! to one (contract in `mod.rs`, section "The joined unit").

use super::NvmeTcpParams;
use crate::dma::DmaParams;
use crate::tcp::TcpParams;
use hdl_builder::prelude::*;
use hdl_builder::{Error, ErrorKind, Errors};
use std::panic::Location;
use std::rc::Rc;

/// The module name: `nvme_tcp_ip_w<bits>_c<connections>_d<outstanding>_t<tx>_r<rx>`
/// (`_nd` without digests), the parameters that tell two joined units apart.
pub fn module_name(p: &NvmeTcpParams, t: &TcpParams) -> String {
    format!(
        "nvme_tcp_ip_w{}_c{}_d{}_t{}_r{}{}",
        p.data_width,
        p.connections,
        p.outstanding,
        t.tx_bytes,
        t.rx_bytes,
        if p.digests { "" } else { "_nd" }
    )
}

/// The byte-stream ports the two engines share: the NVMe/TCP engine's port, the TCP engine's.
const JOINS: [(&str, &str); 12] = [
    ("tx_valid_o", "tx_valid_i"),
    ("tx_ready_i", "tx_ready_o"),
    ("tx_conn_o", "tx_conn_i"),
    ("tx_data_o", "tx_data_i"),
    ("tx_keep_o", "tx_keep_i"),
    ("tx_credit_i", "tx_credit_o"),
    ("rx_valid_i", "rx_valid_o"),
    ("rx_ready_o", "rx_ready_i"),
    ("rx_conn_i", "rx_conn_o"),
    ("rx_data_i", "rx_data_o"),
    ("rx_keep_i", "rx_keep_o"),
    ("rx_space_o", "rx_space_i"),
];

/// The joined unit, named by [`module_name`]: the NVMe/TCP engine of `p` (its DMA engine from
/// `dma`) over the TCP/IP engine of `t`, which must have the same stream width and connection
/// count.
pub fn nvme_tcp_ip(
    p: &NvmeTcpParams,
    t: &TcpParams,
    dma: &DmaParams,
    reset: ResetStyle,
) -> Result<Rc<Module>, Errors> {
    let name = module_name(p, t);
    if p.data_width != t.data_width || p.connections != t.connections {
        return Err(Errors(vec![Error {
            kind: ErrorKind::Invalid,
            module: name.clone(),
            signal: None,
            loc: Location::caller(),
            message: format!(
                "{name}: the NVMe/TCP engine has {} connections of {} bits, the TCP engine {} of {}: \
                 they are joined one to one (take both from [nvme_tcp])",
                p.connections, p.data_width, t.connections, t.data_width
            ),
        }]));
    }
    let nvme = super::engine::engine(p, dma, reset)?;
    let tcp = crate::tcp::engine::engine(t, reset)?;

    let mut m = ModuleBuilder::with_reset(&name, reset);
    m.doc(&format!(
        "NVMe/TCP over TCP/IPv4: {} connections, NVMe/TCP connection i on TCP connection i.",
        p.connections
    ));
    m.doc("Host side as the NVMe/TCP engine's top; one Ethernet port; two CSR ports. Contract:");
    m.doc("hdl-gen/src/nvme_tcp/mod.rs, section \"The joined unit\".");
    m.clock();
    let rst = m.reset();
    let u_nvme = m.instance("u_nvme_tcp", &nvme);
    let u_tcp = m.instance("u_tcp", &tcp);
    // run_i = 0 holds the NVMe/TCP engine alone in reset: the TCP engine, its connections and
    // its CSRs carry on (firmware aborts and reopens the connections meanwhile).
    let run = m.input("run_i", 1);
    m.comment(
        run,
        "1: the NVMe/TCP engine runs; 0: it is held in reset (the TCP engine is not)",
    );
    let held = if reset.active_low() {
        m.net("nvme_tcp_rst_n", rst & run)
    } else {
        m.net("nvme_tcp_rst", rst | !run)
    };
    m.bind_reset(u_nvme, held);

    m.group("configuration");
    m.pass_through(u_nvme, "dgst_i");
    m.group("commands in, completions out (SQ id i+1 on connection i)");
    m.pass_through(u_nvme, "io_cmd_");
    m.pass_through(u_nvme, "sq_space_o");
    m.pass_through(u_nvme, "io_cpl_");
    m.group("host memory (AXI4 master of the NVMe/TCP engine's DMA engine)");
    m.pass_through(u_nvme, "mps_i");
    m.pass_through(u_nvme, "m_axi_");
    m.group("Ethernet frames without FCS (AXI4-Stream)");
    m.pass_through(u_tcp, "m_axis_");
    m.pass_through(u_tcp, "s_axis_");
    m.group("CSRs: nvme_tcp_csr on s_axil, tcp_csr on s_tcp_axil");
    m.pass_through(u_nvme, "s_axil_");
    for port in tcp.ports() {
        let Some(rest) = port.name.strip_prefix("s_axil_") else {
            continue;
        };
        let outer = format!("s_tcp_axil_{rest}");
        if port.input {
            let s = m.input(&outer, port.width);
            m.bind(u_tcp, &port.name, s);
        } else {
            let s = m.output(&outer, port.width);
            m.bind_out_to(u_tcp, &port.name, s);
        }
    }
    m.group("state per connection");
    let connected = m.output("connected_o", p.connections);
    m.comment(connected, "NVMe/TCP: the ICResp was accepted");
    m.bind_out_to(u_nvme, "connected_o", connected);
    let dead = m.output("dead_o", p.connections);
    m.comment(
        dead,
        "NVMe/TCP: the connection ended (TermReq sent or received)",
    );
    m.bind_out_to(u_nvme, "dead_o", dead);
    let up = m.output("tcp_up_o", p.connections);
    m.comment(up, "TCP: ESTABLISHED or CLOSE-WAIT");
    m.bind_out_to(u_tcp, "up_o", up);
    let failed = m.output("tcp_failed_o", p.connections);
    m.comment(
        failed,
        "TCP: reset (peer, retry limit, ARP, abort), waits in CLOSED",
    );
    let tcp_failed = m.bind_out(u_tcp, "failed_o");
    m.assign(failed, tcp_failed);
    // A failed TCP connection ends its NVMe/TCP connection (22h for its commands).
    m.bind(u_nvme, "lost_i", tcp_failed);

    // The byte streams, port to port.
    for (np, tp) in JOINS {
        if np.ends_with("_o") {
            let s = m.bind_out(u_nvme, np);
            m.bind(u_tcp, tp, s);
        } else {
            let s = m.bind_out(u_tcp, tp);
            m.bind(u_nvme, np, s);
        }
    }
    m.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> (NvmeTcpParams, TcpParams, DmaParams) {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let cfg = crate::config::Config::load(&root.join("configs/default.toml")).expect("config");
        (
            crate::chip::nvme_tcp_params(&cfg),
            crate::chip::tcp_params(&cfg),
            crate::chip::dma_params(&cfg),
        )
    }

    #[test]
    fn every_stream_port_is_joined() {
        let (p, t, d) = params();
        let m = nvme_tcp_ip(&p, &t, &d, ResetStyle::AsyncLow).expect("builds");
        let names: Vec<String> = m.ports().iter().map(|p| p.name.clone()).collect();
        // No byte-stream port of either engine leaks out.
        for n in &names {
            assert!(
                !(n.starts_with("tx_") || n.starts_with("rx_")),
                "{n} is a port of the joined unit"
            );
        }
        for want in [
            "s_axil_awvalid_i",
            "s_tcp_axil_awvalid_i",
            "m_axis_tvalid_o",
        ] {
            assert!(names.iter().any(|n| n == want), "no port {want}");
        }
    }

    #[test]
    fn mismatched_engines_are_refused() {
        let (p, mut t, d) = params();
        t.connections = p.connections * 2;
        let e = nvme_tcp_ip(&p, &t, &d, ResetStyle::AsyncLow).expect_err("refused");
        assert!(e.to_string().contains("joined one to one"), "{e}");
    }
}
