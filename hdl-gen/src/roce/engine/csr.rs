//! The engine's register block `roce_csr` (AXI4-Lite): the counters, `tx_tos`, the in-capsule
//! limit, each QP's connection, retry and live-state registers, and (from 0x300) the
//! congestion-control registers of `cc.rs`.

use crate::roce::RoceParams;
use hdl_builder::regs::{Access, RegBlock, RegMap};
use hdl_builder::Errors;

/// The counters, by register name and what they count (32 bits, wrapping).
pub const COUNTERS: [(&str, &str); 20] = [
    ("tx_frames", "Frames sent"),
    ("tx_bytes", "Bytes sent (Ethernet header to ICRC)"),
    ("tx_capsules", "Command capsules sent (SEND Only)"),
    ("tx_ack", "ACKs sent (re-ACKs of duplicates included)"),
    ("tx_nak", "NAKs sent"),
    ("rx_frames", "Frames received (dropped ones too)"),
    ("rx_bytes", "Bytes received (dropped frames too)"),
    ("rx_ack", "ACKs received"),
    ("rx_nak", "NAKs (and RNR NAKs) received"),
    (
        "rx_dup",
        "Duplicate requests (PSN behind the expected one), re-ACKed",
    ),
    ("drop_other", "Frames dropped: not IPv4/UDP to port 4791"),
    (
        "drop_malformed",
        "Frames dropped: malformed Ethernet/IPv4/UDP/BTH/AETH or lengths",
    ),
    ("drop_icrc", "Frames dropped: ICRC wrong"),
    (
        "drop_opcode",
        "Frames dropped: BTH version or an opcode not handled",
    ),
    (
        "drop_qp",
        "Frames dropped: unknown or disabled QP, P_Key, QP in error",
    ),
    (
        "drop_psn",
        "Requests dropped: PSN ahead of the expected one (the first one NAKed)",
    ),
    (
        "tx_retransmits",
        "Command capsules sent again (go-back-N after a NAK 60h or a timeout)",
    ),
    (
        "rx_writes",
        "RDMA WRITE packets accepted (their payload written to host memory)",
    ),
    (
        "rx_reads",
        "RDMA READ requests answered (in order, and duplicates replayed)",
    ),
    ("tx_read_resp", "RDMA READ response frames sent"),
];

/// Base address of QP `q`'s registers.
pub fn qp_base(q: u32) -> u32 {
    0x80 + 0x40 * q
}

/// The register map (`roce_csr`, AXI4-Lite): counters from 0, QP `q` at [`qp_base`].
pub fn register_map(p: &RoceParams) -> Result<RegMap, Errors> {
    let mut b = RegBlock::new("roce_csr", 10);
    b.doc(
        "RoCEv2 engine: counters (32 bits, wrapping) at 0x00, QP q's registers at 0x80 + 0x40 * q.",
    );
    b.doc("A QP's connection registers are read while ctrl.en is 0; setting en starts the QP with");
    b.doc("sq_psn and rq_psn, clearing it resets the QP (its outstanding commands complete with 22h).");
    for (i, (name, doc)) in COUNTERS.iter().enumerate() {
        b.reg(name, 4 * i as u32, doc)
            .field("value", 0, 32, Access::Ro, 0, doc);
    }
    b.reg("tx_tos", 0x78, "IPv4 TOS of the frames sent")
        .field(
            "data_ecn",
            0,
            2,
            Access::Rw,
            2,
            "ECN of capsules, ACKs/NAKs and READ responses (10b ECT(0): switches mark congestion instead of dropping)",
        )
        .field(
            "data_dscp",
            2,
            6,
            Access::Rw,
            0,
            "DSCP of capsules, ACKs/NAKs and READ responses",
        )
        .field(
            "cnp_dscp",
            8,
            6,
            Access::Rw,
            0,
            "DSCP of CNPs (their ECN is 00, Not-ECT)",
        );
    b.reg(
        "in_capsule",
        0x7c,
        "In-capsule data limit (roce.in_capsule_bytes)",
    )
    .field(
        "bytes",
        0,
        17,
        Access::Ro,
        0,
        "A Write of at most this many bytes whose capsule fits one SEND Only carries its data in the capsule",
    );
    for q in 0..p.qps {
        let base = qp_base(q);
        let r = |n: &str| format!("qp{q}_{n}");
        b.reg(
            &r("ctrl"),
            base,
            &format!("QP {q} (SQ id {}) control", q + 1),
        )
        .field("en", 0, 1, Access::Rw, 0, "The QP runs; 0 resets it");
        b.reg(&r("local_qpn"), base + 0x04, "Our QP number").field(
            "value",
            0,
            24,
            Access::Rw,
            0,
            "QPN the peer sends to",
        );
        b.reg(&r("remote_qpn"), base + 0x08, "The peer's QP number")
            .field(
                "value",
                0,
                24,
                Access::Rw,
                0,
                "Destination QP of our frames",
            );
        b.reg(
            &r("local_mac_hi"),
            base + 0x0c,
            "Our MAC address, bytes 0-1",
        )
        .field(
            "value",
            0,
            16,
            Access::Rw,
            0,
            "First byte on the wire in bits 15:8",
        );
        b.reg(
            &r("local_mac_lo"),
            base + 0x10,
            "Our MAC address, bytes 2-5",
        )
        .field("value", 0, 32, Access::Rw, 0, "Byte 2 in bits 31:24");
        b.reg(
            &r("remote_mac_hi"),
            base + 0x14,
            "The peer's MAC address, bytes 0-1",
        )
        .field(
            "value",
            0,
            16,
            Access::Rw,
            0,
            "First byte on the wire in bits 15:8",
        );
        b.reg(
            &r("remote_mac_lo"),
            base + 0x18,
            "The peer's MAC address, bytes 2-5",
        )
        .field("value", 0, 32, Access::Rw, 0, "Byte 2 in bits 31:24");
        b.reg(&r("local_ip"), base + 0x1c, "Our IPv4 address")
            .field(
                "value",
                0,
                32,
                Access::Rw,
                0,
                "First byte on the wire in bits 31:24",
            );
        b.reg(&r("remote_ip"), base + 0x20, "The peer's IPv4 address")
            .field(
                "value",
                0,
                32,
                Access::Rw,
                0,
                "First byte on the wire in bits 31:24",
            );
        b.reg(&r("sq_psn"), base + 0x24, "Initial send PSN").field(
            "value",
            0,
            24,
            Access::Rw,
            0,
            "PSN of the first SEND after en rises",
        );
        b.reg(&r("rq_psn"), base + 0x28, "Initial expected receive PSN")
            .field(
                "value",
                0,
                24,
                Access::Rw,
                0,
                "PSN the first request must carry",
            );
        b.reg(&r("mtu"), base + 0x2c, "Path MTU")
            .field(
                "code",
                0,
                3,
                Access::Rw,
                u64::from(p.mtu_code()),
                "InfiniBand MTU code: 1 = 256 ... 5 = 4096 bytes; a code outside 1 .. the configured MTU's means the configured MTU",
            );
        b.reg(&r("pkey"), base + 0x30, "Partition key").field(
            "value",
            0,
            16,
            Access::Rw,
            0xffff,
            "P_Key of our frames; received ones must match",
        );
        b.reg(&r("retry"), base + 0x3c, "Retransmission")
            .field(
                "timeout",
                0,
                24,
                Access::Rw,
                0x1_0000,
                "Cycles without progress on an unacknowledged capsule before it is sent again",
            )
            .field(
                "limit",
                24,
                3,
                Access::Rw,
                7,
                "Timeouts in a row before the QP goes to error; 7 = no limit",
            );
        b.reg(&r("state"), base + 0x34, "Live state")
            .field("error", 0, 1, Access::Ro, 0, "The QP is in error")
            .field("psn", 8, 24, Access::Ro, 0, "Next send PSN");
        b.reg(&r("epsn"), base + 0x38, "Live receive state").field(
            "value",
            0,
            24,
            Access::Ro,
            0,
            "Expected receive PSN",
        );
    }
    crate::roce::cc::registers(&mut b, p);
    b.finish()
}
