//! The register map of `qos_csr`: control, per-queue and per-namespace limits, the grant table,
//! and the counters.

use super::{QosParams, BW_FRAC, IOPS_FRAC};
use hdl_builder::clog2;
use hdl_builder::regs::{Access, RegBlock, RegMap};
use hdl_builder::Errors;

/// Offset of SQ 1's registers; SQ `s` is at `QUEUE_BASE + (s - 1) * QUEUE_STRIDE`.
pub const QUEUE_BASE: u32 = 0x100;
/// Bytes between two queues' registers.
pub const QUEUE_STRIDE: u32 = 0x40;
/// Bytes between two namespaces' registers.
pub const NS_STRIDE: u32 = 0x40;
/// Bytes between two grant entries.
pub const GRANT_STRIDE: u32 = 0x20;

/// The counters kept per queue and per namespace, in register order: name and meaning.
pub const COUNTERS: &[(&str, &str)] = &[
    (
        "adm_rd",
        "Read commands admitted (released to the transport)",
    ),
    ("adm_wr", "Write-side commands admitted"),
    ("bytes_rd", "Bytes of read commands admitted"),
    ("bytes_wr", "Bytes of write commands admitted"),
    (
        "wait_rd",
        "Cycles a read command waited for budget alone (its channel had space)",
    ),
    (
        "wait_wr",
        "Cycles a write-side command waited for budget alone (its channel had space)",
    ),
    ("deny_rd", "Read commands denied (0Bh, 80h or 86h)"),
    ("deny_wr", "Write-side commands denied"),
];

/// Offset of namespace 1's registers.
pub fn ns_base(p: &QosParams) -> u32 {
    QUEUE_BASE + p.queues * QUEUE_STRIDE
}

/// Offset of grant entry 0.
pub fn grant_base(p: &QosParams) -> u32 {
    ns_base(p) + p.namespaces * NS_STRIDE
}

/// Address bits of the window.
pub fn addr_width(p: &QosParams) -> u32 {
    clog2(u64::from(grant_base(p) + p.grants * GRANT_STRIDE)).max(6)
}

/// The register map of `qos_csr` for `p`.
pub fn register_map(p: &QosParams) -> Result<RegMap, Errors> {
    let cw = p.counter_width;
    let mut b = RegBlock::new("qos_csr", addr_width(p));
    b.doc("QoS arbiter: rate limits per queue and per namespace, the grant table, counters.");
    b.doc(&format!(
        "Bandwidth rates are bytes per cycle with {BW_FRAC} fraction bits, IOPS rates commands"
    ));
    b.doc(&format!(
        "per cycle with {IOPS_FRAC} fraction bits; a rate of 0 is unlimited. Bursts are bucket"
    ));
    b.doc("capacities. Buckets may go into debt by one command (see hdl-gen/src/qos/mod.rs).");
    b.doc(&format!(
        "Queue registers at 0x{QUEUE_BASE:x} + (sqid - 1) * 0x{QUEUE_STRIDE:x}, namespace registers at 0x{:x} + (nsid - 1) * 0x{NS_STRIDE:x},",
        ns_base(p)
    ));
    b.doc(&format!(
        "grant entries at 0x{:x} + g * 0x{GRANT_STRIDE:x}. Counters ({cw} bits) wrap.",
        grant_base(p)
    ));
    b.reg("ctrl", 0x000, "Control").field(
        "enable",
        0,
        1,
        Access::Rw,
        0,
        "Release commands; while 0 nothing is released and every bucket is held full",
    );
    b.reg("info", 0x004, "What this block was generated with")
        .field(
            "queues",
            0,
            8,
            Access::Ro,
            0,
            "Queues served, SQ ids 1 to n",
        )
        .field(
            "namespaces",
            8,
            8,
            Access::Ro,
            0,
            "Namespaces, NSIDs 1 to n",
        )
        .field("grants", 16, 8, Access::Ro, 0, "Grant table entries")
        .field("depth", 24, 8, Access::Ro, 0, "Commands buffered per queue");
    let counters = |b: &mut RegBlock, prefix: &str, base: u32| {
        for (k, (name, doc)) in COUNTERS.iter().enumerate() {
            b.reg(&format!("{prefix}_{name}"), base + 4 * k as u32, doc)
                .field("value", 0, cw, Access::Ro, 0, "Count, wrapping");
        }
    };
    for q in 0..p.queues {
        let s = q + 1;
        let base = QUEUE_BASE + q * QUEUE_STRIDE;
        let pre = format!("sq{s}");
        b.reg(
            &format!("{pre}_cfg"),
            base,
            &format!("SQ {s}: class, weight, IOPS burst"),
        )
        .field(
            "class",
            0,
            2,
            Access::Rw,
            0,
            "0 urgent, 1 high, 2 medium, 3 low",
        )
        .field(
            "weight",
            8,
            8,
            Access::Rw,
            0,
            "Weight inside its class, 0's based",
        )
        .field(
            "iops_burst",
            24,
            8,
            Access::Rw,
            0,
            "IOPS bucket capacity, commands",
        );
        b.reg(
            &format!("{pre}_bw_rate"),
            base + 0x4,
            &format!("SQ {s}: bandwidth rate"),
        )
        .field(
            "value",
            0,
            32,
            Access::Rw,
            0,
            "Bytes per cycle, 16 fraction bits; 0 unlimited",
        );
        b.reg(
            &format!("{pre}_bw_burst"),
            base + 0x8,
            &format!("SQ {s}: bandwidth burst"),
        )
        .field(
            "value",
            0,
            32,
            Access::Rw,
            0,
            "Bandwidth bucket capacity, bytes",
        );
        b.reg(
            &format!("{pre}_iops_rate"),
            base + 0xc,
            &format!("SQ {s}: IOPS rate"),
        )
        .field(
            "value",
            0,
            32,
            Access::Rw,
            0,
            "Commands per cycle, 24 fraction bits; 0 unlimited",
        );
        counters(&mut b, &pre, base + 0x10);
    }
    for n in 0..p.namespaces {
        let id = n + 1;
        let base = ns_base(p) + n * NS_STRIDE;
        let pre = format!("ns{id}");
        b.reg(
            &format!("{pre}_cfg"),
            base,
            &format!("Namespace {id}: LBA size, IOPS burst"),
        )
        .field(
            "lba_shift",
            0,
            4,
            Access::Rw,
            9,
            "log2 of the LBA size in bytes",
        )
        .field(
            "iops_burst",
            24,
            8,
            Access::Rw,
            0,
            "IOPS bucket capacity, commands",
        );
        b.reg(
            &format!("{pre}_size_lo"),
            base + 0x4,
            &format!("Namespace {id}: size, low"),
        )
        .field(
            "value",
            0,
            32,
            Access::Rw,
            0,
            "NSZE bits 31:0, in LBAs; NSZE 0 = absent",
        );
        b.reg(
            &format!("{pre}_size_hi"),
            base + 0x8,
            &format!("Namespace {id}: size, high"),
        )
        .field("value", 0, 32, Access::Rw, 0, "NSZE bits 63:32");
        b.reg(
            &format!("{pre}_bw_rate"),
            base + 0xc,
            &format!("Namespace {id}: bandwidth rate"),
        )
        .field(
            "value",
            0,
            32,
            Access::Rw,
            0,
            "Bytes per cycle, 16 fraction bits; 0 unlimited",
        );
        b.reg(
            &format!("{pre}_bw_burst"),
            base + 0x10,
            &format!("Namespace {id}: bandwidth burst"),
        )
        .field(
            "value",
            0,
            32,
            Access::Rw,
            0,
            "Bandwidth bucket capacity, bytes",
        );
        b.reg(
            &format!("{pre}_iops_rate"),
            base + 0x14,
            &format!("Namespace {id}: IOPS rate"),
        )
        .field(
            "value",
            0,
            32,
            Access::Rw,
            0,
            "Commands per cycle, 24 fraction bits; 0 unlimited",
        );
        counters(&mut b, &pre, base + 0x18);
    }
    for g in 0..p.grants {
        let base = grant_base(p) + g * GRANT_STRIDE;
        let pre = format!("grant{g}");
        b.reg(
            &format!("{pre}_ctrl"),
            base,
            &format!("Grant {g}: who, what, how"),
        )
        .field("read", 0, 1, Access::Rw, 0, "Read access (Read, Compare)")
        .field(
            "write",
            1,
            1,
            Access::Rw,
            0,
            "Write access (Write, Write Zeroes, DSM, Flush)",
        )
        .field("nsid", 8, 8, Access::Rw, 0, "Namespace granted")
        .field(
            "sqid",
            16,
            16,
            Access::Rw,
            0,
            "Submission queue granted; 0 = entry unused",
        );
        b.reg(
            &format!("{pre}_first_lo"),
            base + 0x4,
            &format!("Grant {g}: first LBA, low"),
        )
        .field(
            "value",
            0,
            32,
            Access::Rw,
            0,
            "First LBA granted, bits 31:0",
        );
        b.reg(
            &format!("{pre}_first_hi"),
            base + 0x8,
            &format!("Grant {g}: first LBA, high"),
        )
        .field(
            "value",
            0,
            32,
            Access::Rw,
            0,
            "First LBA granted, bits 63:32",
        );
        b.reg(
            &format!("{pre}_last_lo"),
            base + 0xc,
            &format!("Grant {g}: last LBA, low"),
        )
        .field(
            "value",
            0,
            32,
            Access::Rw,
            0,
            "Last LBA granted (inclusive), bits 31:0",
        );
        b.reg(
            &format!("{pre}_last_hi"),
            base + 0x10,
            &format!("Grant {g}: last LBA, high"),
        )
        .field(
            "value",
            0,
            32,
            Access::Rw,
            0,
            "Last LBA granted (inclusive), bits 63:32",
        );
    }
    b.finish()
}
