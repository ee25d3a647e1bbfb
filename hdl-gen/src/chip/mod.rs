//! The chip generator: the chip top (one module from the NVMe front end to the wire), and the
//! list of every module and file a configuration emits under rtl/.
//!
//! # The chip top: `<chip.name>` (this is the contract between its blocks)
//!
//! ```text
//!  s_bar (BAR0) --> nvme_ctrl --io_cmd--> qos_arbiter --m_io_cmd--> chip_route --> roce (QPs) ------------> frame --> m_axis
//!                      |  ^                  ^   |                    |  |  \---> nvme_tcp (conns) on tcp -->  mux  <-- s_axis
//!                      |  +--io_cpl-- merge (chip_route) <-denials----+  |           |        |
//!                      |                 ^  ^------- transport completions (SQ id mapped back)
//!                      |                 +-- 82h for a command of an unbound queue
//!   admin_cmd/admin_cpl (admin + fallback I/O), irq, mps   sq_space <- qos.sq_space_o; qos.dst_space_i <- chip_route
//!                      |
//!  m_axi <== axi_interconnect <== nvme_ctrl (SQ fetch, CQ post), roce DMA, nvme_tcp DMA
//!  s_axil (firmware) --> axil_decoder --> chip_csr, chip_info_csr, nvme_csr, qos_csr, roce_csr, nvme_tcp_csr, tcp_csr
//! ```
//!
//! ## Ports
//!
//! - `s_bar_*`: BAR0, AXI4-Lite slave (the front end's, see `nvme/mod.rs`).
//! - `s_axil_*`: the firmware's AXI4-Lite slave: every block's CSRs, one slot of
//!   `2^csr.addr_width` bytes each (below, "Firmware address map"). An address outside every
//!   block's window answers DECERR and reads 0.
//! - `admin_cmd` / `admin_cpl`: the front end's streams to and from firmware, with their
//!   `sqid` fields (`admin_cmd_sqid_o`, `admin_cpl_sqid_i`): the admin queue's commands
//!   (`sqid` 0) and the fallback path's I/O commands (`sqid` their SQ), whose opcode no
//!   block of the chip carries (`nvme/mod.rs`, "offload and fallback"). Firmware answers each
//!   on `admin_cpl` with the `sqid` it came with.
//! - `irq`: MSI-X vector numbers (the front end's coalesced interrupts).
//! - `m_axi_*`: the one AXI4 master to host memory. IDs are `{master, inner id}`: master 0 the
//!   front end (SQ fetch, CQ posts; inner id 0, so its reads stay in order), then one per
//!   transport held, RoCE before NVMe/TCP (its DMA engine's IDs). See `blocks/axi_interconnect.rs`
//!   for arbitration and what a slow master can and cannot hold up: R and B never wait for a
//!   slow master, an AW is granted only with its first W beat, but a write burst paused in
//!   its middle holds the shared W channel. No master does: the front end writes single
//!   beats, RoCE writes from a full payload bank, and NVMe/TCP issues a C2HData move only
//!   once its bytes are all held (`nvme_tcp/mod.rs`, "Host reads"). The host memory of the
//!   chip, NVMe and NVMe/TCP suites flags any `wvalid` gap inside a burst.
//! - `m_axis_*` / `s_axis_*`: the one Ethernet port (AXI4-Stream frames without FCS, to and
//!   from a MAC), shared through the frame mux (below) by RoCEv2 (UDP 4791) and the TCP/IP
//!   engine (ARP, ICMP, TCP), whichever the chip holds. A frame for an engine the chip does not
//!   hold is dropped and counted in `chip_csr.cnt_frame_drop`.
//! - NVMe/TCP (when `nvme_tcp` is held) runs on the TCP/IP engine: the joined unit
//!   `nvme_tcp_ip_*` (`nvme_tcp/mod.rs`, "The joined unit"), connection i on TCP connection i,
//!   a failed TCP connection ending its NVMe/TCP connection (22h for its commands). Status
//!   outputs per connection, also readable in `chip_csr` (`tcp_conn`, `tcp_link`):
//!   `tcp_connected_o` (ICResp accepted), `tcp_dead_o` (NVMe/TCP connection ended),
//!   `tcp_up_o` (TCP ESTABLISHED or CLOSE-WAIT), `tcp_failed_o` (TCP connection failed).
//!   Firmware programs `tcp_csr` (addresses, timers, each connection's remote address and
//!   ports) and opens each connection there; the digests the ICReqs ask for come from
//!   `chip_csr.tcp_dgst`.
//!   A connection sends its ICReq as its TCP connection comes up, so firmware that changes the
//!   digests or restarts NVMe/TCP (after a connection ended) holds the NVMe/TCP engine in reset
//!   meanwhile (`tcp_ctrl.run` 0; the TCP/IP engine runs on), aborts the TCP connections in
//!   `tcp_csr`, waits for each to read CLOSED in its `state` (its RST sent: `open` counts only
//!   in CLOSED), opens them again (a new NVMe/TCP connection needs a new TCP stream), writes
//!   `tcp_dgst`, and releases it (`tcp_ctrl.run` 1; reset value 1). Holding it drops the
//!   engine's commands: do it only while no queue bound to a connection has one in flight.
//!
//! ## Routing (`chip_route`, in `route.rs`)
//!
//! A table in flip-flops binds each I/O queue the QoS block serves (SQ ids 1..`qos.queues`) to
//! one transport channel: a RoCE QP or an NVMe/TCP connection, as an NVMe-oF host driver binds
//! each I/O queue to one fabric queue. One queue per channel: binding a queue to a channel
//! unbinds whichever queue had it. After reset SQ y is bound to channel y - 1 of
//! `chip.default_transport` where that channel exists; the other queues are unbound.
//! Firmware reads and writes entries through `chip_csr` (`route_sel` names the SQ,
//! `route_set` writes its entry, `route_get` reads it back, 0 when unbound; entry layout: bit 31 bound, bits
//! 17:16 the transport (0 RoCE, 1 NVMe/TCP: fixed codes, whatever the configuration holds),
//! bits 7:0 the channel). A write naming an SQ id outside 1..Q, or binding to a transport or
//! channel the chip lacks, changes nothing and sets `route_err`.
//!
//! A command admitted by QoS goes to its queue's channel with its SQ id rewritten to
//! channel + 1 (the engines' own convention). A command of an unbound queue completes with
//! **82h Namespace Not Ready** (SCT 0, DNR 0: the path to the namespace is not up; a host
//! retries) and moves no byte and no frame; it is counted in `chip_csr.cnt_unbound`.
//! (SQ ids above `qos.queues` never reach the table: QoS denies them with 86h.)
//!
//! Firmware rebinds a queue only while it has no command in flight (after Delete I/O SQ, or
//! before Create I/O SQ): a completion names its channel, and the table maps a channel back to
//! the last SQ bound to it.
//!
//! The table stays in flip-flops, unlike QoS's per-queue state: every cycle QoS needs every
//! queue's `dst_space_i` bit, which is the space bit of that queue's channel, so every entry is
//! read in every cycle (a RAM gives one entry per port per cycle). An entry is small: bound (1),
//! transport (2) and channel (clog2 of the most channels) bits, 5 to 7 bits per queue (at
//! 64 queues, about 450 flip-flops), plus one SQ id per channel for the way back. `route_get`
//! reads the selected entry through a multiplexer of Q entries.
//!
//! ## Flow control (no full channel stalls another)
//!
//! Each transport channel gives a space bit (the engine's `sq_space_o`: a command is taken
//! now). `chip_route` turns them into QoS's `dst_space_i`: bit i is the space bit of the
//! channel SQ i + 1 is bound to (for an unbound queue: the 82h register is free), and is low
//! while QoS's output register already holds a command of that queue (the channel's bit only
//! falls once it has taken the command). QoS releases a head only when its bit is high, so its
//! output register is always taken by its channel at once, and a full channel holds back only
//! its own queue. The front end's `sq_space_i` is QoS's `sq_space_o` for SQ 1..Q (and high
//! for the SQ ids QoS denies), so a queue waiting on its channel or its budget keeps its
//! commands in host memory and costs no other queue anything.
//!
//! ## Completions
//!
//! Every command completes exactly once, on exactly one path: completed by the front end
//! (02h, 04h), by firmware (a fallback command: an opcode other than Flush, Write, Read, Write
//! Zeroes and Dataset Management, Compare included until a transport carries it; it never
//! reaches QoS or a transport), denied by QoS (0Bh, 80h, 86h),
//! completed by the table (82h), or completed by its transport (the target's CQE, or the
//! transport's own error status, 22h Transient Transport Error). `nvme_csr.cnt_offload` and
//! `nvme_csr.cnt_fallback` count the commands of the two paths apart. `chip_route` merges these
//! four sources round robin into the front end's `io_cpl` (a source waits at most for the
//! three others). A transport completes a command only once every host-memory write of it
//! has its AXI B response (the engines' rule), so a CQE never overtakes its data.
//!
//! Host memory errors (SLVERR or DECERR on a command's data): the transport's DMA engine
//! reports 04h Data Transfer Error and the command completes with it in place of the
//! target's status (DW0 as the target's CQE carried it); on NVMe/TCP a failed read of a
//! Write's data also ends that connection (`nvme_tcp/mod.rs`).
//!
//! Controller reset (CC.EN 1 -> 0): QoS and the transports do not see it. The front end
//! stops fetching and holds CSTS.RDY until every command it handed out came back: QoS passes
//! them on (or denies them), the table answers 82h, the transports finish them against their
//! targets, and the front end drops those completions. So once RDY is 0 no block of the chip
//! writes host memory for a command of the old queues, and the host may free its buffers.
//!
//! ## Firmware address map
//!
//! Slot k is `[k << csr.addr_width, (k + 1) << csr.addr_width)`: 0 `chip_csr` (the table,
//! counters, the map itself as read-only registers), 1 `chip_info_csr`, 2 `nvme_csr`,
//! 3 `qos_csr`, then `roce_csr`, and `nvme_tcp_csr` followed by `tcp_csr` (the TCP/IP engine
//! under it), in that order for the transports held.
//! `chip_csr.map_*` give each block's base (FFFF_FFFFh: not held), so firmware finds the
//! blocks without knowing the configuration. `rtl/chip_csr.md` lists the map of the shipped
//! configuration.
//!
//! ## The frame mux: `eth_frame_mux_w<bits>_<r><t>` (`frame_mux.rs`)
//!
//! One Ethernet port (AXI4-Stream frames without FCS: `tdata`, `tkeep` contiguous from lane 0,
//! `tlast`) shared by the RoCEv2 engine (`r`: `s_roce_axis_*` in, `m_roce_axis_*` out) and the
//! TCP/IP engine (`t`: `s_tcp_axis_*`, `m_tcp_axis_*`), either or both; the wire side is
//! `m_axis_*` (to the MAC) and `s_axis_*` (from it). Beats of 64 to 512 bits.
//!
//! - Egress: whole frames, never interleaved. When no frame is on the port, the next one's
//!   engine is chosen (one idle cycle per frame): the one with a frame, or, when both have one,
//!   the other than last time (round robin); its frame then flows through until `tlast`.
//! - Ingress: per frame, from its headers. A frame is RoCEv2 when it has at least 38 bytes,
//!   EtherType 0800h, an IPv4 header without options (first byte 45h: the RoCE engine takes no
//!   options either), protocol 17 (UDP) and UDP destination port 4791; every other frame (ARP,
//!   ICMP, TCP, IPv4 with options, other EtherTypes, runts) is the TCP/IP engine's. The first
//!   ceil(38 / beat bytes) beats are held until the decision (5 at 64 bits) and replayed to the
//!   engine, then the rest of the frame flows through; the port waits meanwhile (a frame of n
//!   beats takes about n + ceil(38 / beat bytes) + 1 cycles, plenty for a 1 or 10 Gb/s MAC at
//!   the chip's clock). A frame for an engine the chip does not hold is taken and dropped whole,
//!   with a pulse on `ev_drop_o` (counted by the chip); with both engines held nothing is
//!   dropped. An engine that does not take its frame holds up the port.
//!
//! Property `frame_mux` (suite `chip`, golden model `models::frame_mux`). The chip top holds it
//! as `u_eth_mux` in front of the engines it has, the wire side on the top's `m_axis`/`s_axis`.
//!
//!
//! ## Limits
//!
//! A transport whose DMA master is narrower than the host bus (`dma.data_width`) reaches it
//! through the width converter (`blocks/axi_upsizer.rs`); a wider one is refused (there is no
//! downsizer). QoS serves SQ ids 1..`qos.queues`, which the shipped configuration sets to
//! `nvme.io_queue_pairs` (64); a configuration with fewer QoS queues gets 86h for the rest.
//! The TCP/IP engine sends a beat a cycle with five idle cycles between frames and receives a
//! beat a cycle with one more cycle a segment (`tcp/mod.rs`, "Timing"), so NVMe/TCP moves
//! its data at about 0.93-0.97 of the port, where RoCE moves a beat.

pub mod csr;
pub mod frame_mux;
pub mod route;
pub mod top;

use crate::blocks;
use crate::config::{Config, Transport};
use hdl_builder::regs::RegMap;
use hdl_builder::{Design, EmitOptions, Errors, OutFile, ResetStyle};

/// Transport codes in a route entry (bits 17:16), by index: fixed for every configuration.
pub const TRANSPORT_CODES: [Transport; 2] = [Transport::Roce, Transport::NvmeTcp];

/// Statuses the chip top itself returns (the CQE status field, DW3[31:17]).
pub mod status {
    /// 82h Namespace Not Ready, SCT 0, DNR 0: a command of a queue bound to no channel.
    pub const NAMESPACE_NOT_READY: u16 = 0x0082;
}

/// What the routing table covers: the queues, each transport held with its channel count
/// (RoCE first, then NVMe/TCP), and the default transport.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Channels {
    /// SQ ids 1..=queues have an entry (QoS's queues).
    pub queues: u32,
    /// Each transport held and its channels (RoCE QPs, NVMe/TCP connections).
    pub list: Vec<(Transport, u32)>,
    /// The transport queues are bound to after reset.
    pub default: Transport,
}

/// The routing table's shape for `cfg`.
pub fn channels(cfg: &Config) -> Channels {
    Channels {
        queues: cfg.qos.queues,
        list: TRANSPORT_CODES
            .iter()
            .filter(|t| cfg.chip.transports.contains(t))
            .map(|&t| {
                (
                    t,
                    match t {
                        Transport::Roce => cfg.roce.qps,
                        Transport::NvmeTcp => cfg.nvme_tcp.connections,
                    },
                )
            })
            .collect(),
        default: cfg.chip.default_transport,
    }
}

/// The generator's version, written into every file header.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Marker in every generated file's header; `emit` only ever deletes files that carry it.
pub const MARKER: &str = "Generated by hdl-gen";

/// Builds the design for `cfg`: every top module the configuration asks for.
pub fn design(cfg: &Config) -> Result<Design, Errors> {
    let reset: ResetStyle = cfg.chip.reset.into();
    let mut d = Design::new(&cfg.chip.name);
    d.add_top(blocks::skid_buffer::skid_buffer(
        cfg.stdlib.skid_buffer_width,
        reset,
    )?);
    d.add_top(blocks::interval_timer::interval_timer(
        cfg.stdlib.interval_timer_width,
        reset,
    )?);
    let st = &cfg.stdlib;
    d.add_top(blocks::crc::crc(
        &blocks::crc::CRC32,
        st.crc_data_width,
        reset,
    )?);
    d.add_top(blocks::crc::crc(
        &blocks::crc::CRC32C,
        st.crc_data_width,
        reset,
    )?);
    d.add_top(blocks::token_bucket::token_bucket(
        &blocks::token_bucket::TokenBucketParams {
            cost_width: st.token_bucket_cost_width,
            token_bits: st.token_bucket_token_bits,
            frac_bits: st.token_bucket_frac_bits,
        },
        reset,
    )?);
    d.add_top(blocks::fifo::fifo(
        st.fifo_width,
        st.fifo_depth,
        false,
        reset,
    )?);
    d.add_top(blocks::fifo::fifo(
        st.fifo_width,
        st.fifo_depth,
        true,
        reset,
    )?);
    // Clock-domain crossing: the asynchronous FIFO at the FIFOs' width and the power of two at
    // or above their depth, its pointer synchronizer as a top of its own (so its property
    // drives exactly the instance the FIFO holds), and the reset synchronizer.
    let afifo = blocks::async_fifo::async_fifo(
        st.fifo_width,
        st.fifo_depth.next_power_of_two().max(2),
        reset,
    )?;
    if let Some(sync) = afifo.children().first() {
        d.add_top(sync.clone());
    }
    d.add_top(afifo);
    d.add_top(blocks::reset_sync::reset_sync(reset)?);
    // The RGMII MAC and the MDIO master (issue 20), as tops for their properties (suite `eth`).
    d.add_top(crate::eth::mac::eth_mac_rgmii(
        &crate::eth::MacParams::default(),
        reset,
    )?);
    d.add_top(crate::eth::mdio::mdio_master(reset)?);
    d.add_top(blocks::arbiter::rr_arbiter(st.arbiter_requesters, reset)?);
    d.add_top(blocks::arbiter::wrr_arbiter(
        st.arbiter_requesters,
        st.arbiter_weight_width,
        reset,
    )?);
    // The width converter the widest configuration needs between a transport's DMA master
    // (`roce.data_width`) and a 512-bit host bus, as a top of its own for its property.
    d.add_top(blocks::axi_upsizer::axi_upsizer(
        cfg.dma.id_width,
        cfg.roce.data_width,
        512,
        reset,
    )?);
    d.add_top(crate::dma::walker::walker(&dma_params(cfg), reset)?);
    d.add_top(crate::dma::mover::mover(&dma_params(cfg), reset)?);
    d.add_top(crate::dma::engine::engine(&dma_params(cfg), reset)?);
    d.add_top(crate::nvme_tcp::conn::conn(&nvme_tcp_params(cfg), reset)?);
    d.add_top(crate::nvme_tcp::engine::engine(
        &nvme_tcp_params(cfg),
        &dma_params(cfg),
        reset,
    )?);
    d.add_top(crate::tcp::engine::engine(&tcp_params(cfg), reset)?);
    // The NVMe/TCP engine on the TCP engine (not in the chip top yet).
    d.add_top(crate::nvme_tcp::ip::nvme_tcp_ip(
        &nvme_tcp_params(cfg),
        &tcp_params(cfg),
        &dma_params(cfg),
        reset,
    )?);
    // The frame mux the chip will hold in front of the Ethernet port (RoCE and TCP), as a top
    // for its property (suite `chip`, property `frame_mux`).
    d.add_top(frame_mux::frame_mux(64, true, true, reset)?);
    d.add_top(crate::qos::arbiter::arbiter(&qos_params(cfg), reset)?);
    d.add_top(crate::roce::engine::engine(
        &roce_params(cfg),
        &dma_params(cfg),
        reset,
    )?);
    d.add_top(crate::roce::dcqcn::dcqcn(&dcqcn_params(cfg), reset)?);
    d.add_top(crate::nvme::ctrl::ctrl(&nvme_params(cfg), reset)?);
    d.add_top(blocks::chip_info::chip_info(
        &facts(cfg),
        cfg.csr.addr_width,
        reset,
    )?);
    // The chip top, and its interconnect and CSR decoder as tops of their own too (so their
    // properties drive exactly the instances the chip holds).
    let chip = top::top(cfg, reset)?;
    for child in chip.children() {
        let n = child.name();
        if n.starts_with("axi_interconnect_") || n.starts_with("axil_decoder_") {
            d.add_top(child);
        }
    }
    d.add_top(chip);
    Ok(d)
}

/// The DMA engine's parameters from the `[dma]` section of `cfg`.
pub fn dma_params(cfg: &Config) -> crate::dma::DmaParams {
    let d = &cfg.dma;
    crate::dma::DmaParams {
        data_width: d.data_width,
        tag_width: d.tag_width,
        len_width: d.len_width,
        max_reads: d.max_reads,
        id_width: d.id_width,
    }
}

/// The NVMe/TCP engine's parameters from the `[nvme_tcp]` section of `cfg`.
pub fn nvme_tcp_params(cfg: &Config) -> crate::nvme_tcp::NvmeTcpParams {
    let t = &cfg.nvme_tcp;
    crate::nvme_tcp::NvmeTcpParams {
        data_width: t.data_width,
        connections: t.connections,
        outstanding: t.outstanding,
        digests: t.digests,
        hold_bytes: t.c2h_hold_bytes,
        icd_bytes: t.in_capsule_bytes,
    }
}

/// The TCP/IP engine's parameters from `[tcp]`, with the stream width and connection count of
/// `[nvme_tcp]` (the two engines are joined one connection to one).
pub fn tcp_params(cfg: &Config) -> crate::tcp::TcpParams {
    let t = &cfg.tcp;
    crate::tcp::TcpParams {
        data_width: cfg.nvme_tcp.data_width,
        connections: cfg.nvme_tcp.connections,
        tx_bytes: t.tx_buffer_bytes,
        rx_bytes: t.rx_buffer_bytes,
        arp_entries: t.arp_entries,
        echo_bytes: t.echo_bytes,
    }
}

/// The RoCEv2 engine's parameters from the `[roce]` section of `cfg`.
pub fn roce_params(cfg: &Config) -> crate::roce::RoceParams {
    let r = &cfg.roce;
    crate::roce::RoceParams {
        data_width: r.data_width,
        qps: r.qps,
        outstanding: r.outstanding,
        mtu: r.mtu,
        in_capsule_bytes: r.in_capsule_bytes,
    }
}

/// The RoCEv2 congestion-control block's parameters from the `[roce]` section of `cfg`.
pub fn dcqcn_params(cfg: &Config) -> crate::roce::dcqcn::DcqcnParams {
    crate::roce::dcqcn::DcqcnParams {
        qps: cfg.roce.qps,
        data_width: cfg.roce.data_width,
    }
}

/// The QoS arbiter's parameters from the `[qos]` section of `cfg`.
pub fn qos_params(cfg: &Config) -> crate::qos::QosParams {
    let q = &cfg.qos;
    crate::qos::QosParams {
        queues: q.queues,
        namespaces: q.namespaces,
        grants: q.grants,
        queue_depth: q.queue_depth,
        counter_width: q.counter_width,
    }
}

/// The NVMe front end's parameters from the `[nvme]` and `[dma]` sections of `cfg`.
pub fn nvme_params(cfg: &Config) -> crate::nvme::NvmeParams {
    let n = &cfg.nvme;
    crate::nvme::NvmeParams {
        io_queues: n.io_queue_pairs,
        max_depth: n.max_queue_depth,
        stride: n.doorbell_stride,
        data_width: cfg.dma.data_width,
        vectors: n.interrupt_vectors,
        fetch_burst: n.fetch_burst,
        fetch_slots: n.fetch_slots,
        mdts: crate::nvme::mdts_for_len_width(cfg.dma.len_width),
    }
}

/// What `chip_info` reports for `cfg`.
pub fn facts(cfg: &Config) -> blocks::chip_info::ChipFacts {
    let v: Vec<u8> = VERSION.split('.').map(|p| p.parse().unwrap_or(0)).collect();
    blocks::chip_info::ChipFacts {
        version: (v[0], v[1], v[2]),
        config_hash: cfg.hash(),
        io_queue_pairs: cfg.nvme.io_queue_pairs,
        max_queue_depth: cfg.nvme.max_queue_depth,
        doorbell_stride: cfg.nvme.doorbell_stride,
    }
}

/// The register maps whose Rust accessors and Markdown maps are emitted next to the RTL.
pub fn register_maps(cfg: &Config) -> Result<Vec<RegMap>, Errors> {
    Ok(vec![
        blocks::chip_info::register_map(cfg.csr.addr_width)?,
        crate::dma::engine::register_map()?,
        crate::nvme_tcp::engine::register_map()?,
        crate::qos::csr::register_map(&qos_params(cfg))?,
        crate::roce::engine::register_map(&roce_params(cfg))?,
        crate::tcp::engine::register_map(&tcp_params(cfg))?,
        crate::nvme::params::register_map()?,
        csr::register_map(&channels(cfg), cfg.csr.addr_width)?,
    ])
}

/// Every file `hdl-gen emit` writes for `cfg`, sorted by path, with headers.
pub fn files(cfg: &Config) -> Result<Vec<OutFile>, Errors> {
    let d = design(cfg)?;
    let opts = EmitOptions {
        header: vec![
            format!(
                "{MARKER} {VERSION} from configuration `{}` (hash {:016x}).",
                cfg.chip.name,
                cfg.hash()
            ),
            "Do not edit: change the generator or the configuration and run `hdl-gen emit`."
                .to_string(),
        ],
        core_name: format!("nvmeof:offload:{}:{VERSION}", cfg.chip.name),
        description: "NVMe-oF offload chip RTL generated by hdl-gen".to_string(),
    };
    let mut files = d.emit(&opts)?;
    for map in register_maps(cfg)? {
        let mut rs = String::new();
        let mut md = String::new();
        for l in &opts.header {
            rs.push_str(&format!("// {l}\n"));
            md.push_str(&format!("<!-- {l} -->\n"));
        }
        rs.push_str("//\n");
        rs.push_str(&map.rust());
        md.push('\n');
        md.push_str(&map.markdown());
        files.push(OutFile {
            path: format!("{}_regs.rs", map.name()),
            contents: rs,
        });
        files.push(OutFile {
            path: format!("{}.md", map.name()),
            contents: md,
        });
    }
    let mut rs = String::new();
    for l in &opts.header {
        rs.push_str(&format!("// {l}\n"));
    }
    rs.push_str("//\n");
    rs.push_str(&config_rust(cfg));
    files.push(OutFile {
        path: "chip_config.rs".into(),
        contents: rs,
    });
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// `chip_config.rs`: every key of `cfg` as a Rust constant (`SECTION_KEY`), so a harness built
/// against an emitted tree reads the sizes that tree was generated with (a testbench built
/// against another configuration's RTL, as ci/config.sh does, sees that configuration).
pub fn config_rust(cfg: &Config) -> String {
    let mut rs = String::from(
        "// Every key of the configuration this tree was generated from, as a Rust constant.\n",
    );
    let value = toml::Value::try_from(cfg).unwrap_or(toml::Value::Boolean(false));
    for (section, keys) in value.as_table().into_iter().flatten() {
        let Some(keys) = keys.as_table() else {
            continue;
        };
        rs.push_str(&format!("\n// [{section}]\n"));
        for (key, v) in keys {
            let name = format!("{section}_{key}").to_uppercase();
            let (ty, text) = match v {
                toml::Value::Integer(i) => ("u32", i.to_string()),
                toml::Value::Boolean(b) => ("bool", b.to_string()),
                toml::Value::String(s) => ("&str", format!("{s:?}")),
                toml::Value::Array(a) => (
                    "&[&str]",
                    format!(
                        "&[{}]",
                        a.iter()
                            .map(|x| x
                                .as_str()
                                .map_or_else(|| x.to_string(), |s| format!("{s:?}")))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ),
                other => ("&str", format!("{:?}", other.to_string())),
            };
            rs.push_str(&format!("pub const {name}: {ty} = {text};\n"));
        }
    }
    rs
}
