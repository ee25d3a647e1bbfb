//! `chip_csr`: the chip top's own registers (slot 0 of the firmware map): the routing table's
//! access registers, the chip's counters, and the firmware address map as read-only registers.

use super::{Channels, TRANSPORT_CODES};
use crate::config::Transport;
use hdl_builder::regs::{Access, RegBlock, RegMap};
use hdl_builder::Errors;

/// Address bits of `chip_csr`'s window.
pub const ADDR_BITS: u32 = 8;

/// A block in the firmware address map: its CSR block's name and its slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    /// Register block name (`nvme_csr`, ...).
    pub block: &'static str,
    /// Its slot: the block's base is `slot << csr.addr_width`.
    pub slot: u32,
}

/// The blocks of the firmware map in slot order, for the transports `ch` holds.
pub fn slots(ch: &Channels) -> Vec<Slot> {
    let mut names = vec!["chip_csr", "chip_info_csr", "nvme_csr", "qos_csr"];
    for &(t, _) in &ch.list {
        match t {
            Transport::Roce => names.push("roce_csr"),
            // The NVMe/TCP engine and the TCP/IP engine under it.
            Transport::NvmeTcp => names.extend(["nvme_tcp_csr", "tcp_csr"]),
        }
    }
    names
        .into_iter()
        .enumerate()
        .map(|(i, block)| Slot {
            block,
            slot: i as u32,
        })
        .collect()
}

/// The map registers: (register name, block) in offset order from 0x40.
pub const MAP_REGS: [(&str, &str); 7] = [
    ("map_chip_info", "chip_info_csr"),
    ("map_nvme", "nvme_csr"),
    ("map_qos", "qos_csr"),
    ("map_roce", "roce_csr"),
    ("map_nvme_tcp", "nvme_tcp_csr"),
    ("map_chip", "chip_csr"),
    ("map_tcp", "tcp_csr"),
];

/// Counters of `chip_csr`: (name, what it counts), from 0x20.
pub const COUNTERS: [(&str, &str); 4] = [
    ("cnt_roce", "Commands sent to the RoCE transport"),
    ("cnt_nvme_tcp", "Commands sent to the NVMe/TCP transport"),
    (
        "cnt_unbound",
        "Commands of unbound queues completed with 82h",
    ),
    (
        "cnt_frame_drop",
        "Ethernet frames taken and dropped: for an engine the chip does not hold",
    ),
];

/// The base address of `block` in the map of `ch` with slots of `slot_bits`, or FFFF_FFFFh.
pub fn base(ch: &Channels, slot_bits: u32, block: &str) -> u32 {
    slots(ch)
        .iter()
        .find(|s| s.block == block)
        .map_or(u32::MAX, |s| s.slot << slot_bits)
}

/// The register map of `chip_csr` for `ch`, with the address map in its documentation.
pub fn register_map(ch: &Channels, slot_bits: u32) -> Result<RegMap, Errors> {
    let mut b = RegBlock::new("chip_csr", ADDR_BITS);
    b.doc("The chip top's registers: the routing table (I/O queue -> transport channel), the");
    b.doc("chip's counters, and the firmware address map. Rules: hdl-gen/src/chip/mod.rs.");
    b.doc("");
    b.doc(&format!(
        "Firmware address map of this configuration (slots of 0x{:x} bytes; an address outside",
        1u64 << slot_bits
    ));
    b.doc("every block's window answers DECERR):");
    b.doc("");
    for s in slots(ch) {
        b.doc(&format!(
            "- 0x{:05x}: `{}`",
            u64::from(s.slot) << slot_bits,
            s.block
        ));
    }
    b.reg(
        "route_sel",
        0x00,
        "Routing table: the SQ id route_set and route_get name",
    )
    .field("sqid", 0, 16, Access::Rw, 0, "SQ id (1 to the QoS queues)");
    b.reg(
        "route_set",
        0x04,
        "Routing table: write the selected SQ's entry",
    )
    .field(
        "entry",
        0,
        32,
        Access::WoPulse,
        0,
        "bit 31 bound, bits 17:16 transport (0 RoCE, 1 NVMe/TCP), bits 7:0 channel",
    );
    b.reg("route_get", 0x08, "Routing table: the selected SQ's entry")
        .field(
            "entry",
            0,
            32,
            Access::Ro,
            0,
            "as route_set (0 if the SQ id has none)",
        );
    b.reg("route_err", 0x0c, "Routing table writes refused")
        .field("bad_sqid", 0, 1, Access::W1c, 0, "route_sel outside 1..Q")
        .field(
            "bad_channel",
            1,
            1,
            Access::W1c,
            0,
            "a transport or channel the chip does not hold",
        );
    if ch.list.iter().any(|&(t, _)| t == Transport::NvmeTcp) {
        b.reg(
            "tcp_dgst",
            0x10,
            "NVMe/TCP: digests every connection asks for (ICReq)",
        )
        .field("hdgst", 0, 1, Access::Rw, 1, "header digest")
        .field("ddgst", 1, 1, Access::Rw, 1, "data digest");
        b.reg("tcp_ctrl", 0x18, "NVMe/TCP: engine control").field(
            "run",
            0,
            1,
            Access::Rw,
            1,
            "0 holds the NVMe/TCP engine in reset (the TCP/IP engine under it runs on); on 1 every connection starts, its ICReq asking for tcp_dgst once its TCP connection is up",
        );
        let conns = ch
            .list
            .iter()
            .find(|&&(t, _)| t == Transport::NvmeTcp)
            .map_or(1, |&(_, n)| n);
        b.reg("tcp_conn", 0x1c, "NVMe/TCP: each connection's state")
            .field(
                "connected",
                0,
                conns,
                Access::Ro,
                0,
                "bit i: connection i's ICResp was accepted",
            )
            .field(
                "dead",
                16,
                conns,
                Access::Ro,
                0,
                "bit i: connection i ended (TermReq sent or received, or its TCP connection failed)",
            );
        b.reg("tcp_link", 0x30, "TCP/IP: each connection's TCP state")
            .field(
                "up",
                0,
                conns,
                Access::Ro,
                0,
                "bit i: TCP connection i is ESTABLISHED or CLOSE-WAIT",
            )
            .field(
                "failed",
                16,
                conns,
                Access::Ro,
                0,
                "bit i: TCP connection i failed (reset, retry limit, ARP, abort) and waits for open in tcp_csr",
            );
    }
    let codes: Vec<String> = TRANSPORT_CODES
        .iter()
        .enumerate()
        .map(|(i, t)| format!("{i} {}", t.name()))
        .collect();
    b.reg("info", 0x14, "What the table was generated with")
        .field(
            "queues",
            0,
            16,
            Access::Ro,
            u64::from(ch.queues),
            "SQ ids 1..queues have an entry",
        )
        .field(
            "default",
            16,
            2,
            Access::Ro,
            super::route::code(ch.default),
            &format!("transport bound after reset ({})", codes.join(", ")),
        );
    for (i, (name, doc)) in COUNTERS.iter().enumerate() {
        b.reg(name, 0x20 + 4 * i as u32, doc)
            .field("value", 0, 32, Access::Ro, 0, doc);
    }
    for (i, (name, block)) in MAP_REGS.iter().enumerate() {
        let v = base(ch, slot_bits, block);
        b.reg(name, 0x40 + 4 * i as u32, &format!("Base of `{block}`"))
            .field(
                "base",
                0,
                32,
                Access::Ro,
                u64::from(v),
                "firmware address of the block (FFFF_FFFFh: not in this chip)",
            );
    }
    b.finish()
}
