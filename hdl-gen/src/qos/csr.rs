//! The register map of `qos_csr`: control, per-queue and per-namespace limits, the grant table,
//! and the counters.

use super::{QosParams, BW_FRAC, IOPS_FRAC};
use hdl_builder::clog2;
use hdl_builder::regs::{Access, RegBlock, RegMap};
use hdl_builder::Errors;

/// Offset of namespace 1's registers.
pub const NS_BASE: u32 = 0x100;
/// Bytes between two queues' registers in the queue window.
pub const QUEUE_STRIDE: u32 = 0x40;
/// Bytes between two namespaces' registers.
pub const NS_STRIDE: u32 = 0x40;
/// Bytes between two grant entries.
pub const GRANT_STRIDE: u32 = 0x20;

/// The per-queue registers of the queue window, in offset order (offset = 4 * index): name,
/// read-write, meaning. Counters (the read-only ones) wrap at the counter width.
pub const QUEUE_REGS: &[(&str, bool, &str)] = &[
    (
        "cfg",
        true,
        "class [1:0] (0 urgent .. 3 low), weight [15:8] (0's based), IOPS burst [31:24] (commands)",
    ),
    (
        "bw_rate",
        true,
        "bytes per cycle, 16 fraction bits; 0 unlimited",
    ),
    ("bw_burst", true, "bandwidth bucket capacity, bytes"),
    (
        "iops_rate",
        true,
        "commands per cycle, 24 fraction bits; 0 unlimited",
    ),
    (
        "adm_rd",
        false,
        "Read commands admitted (released to the transport)",
    ),
    ("adm_wr", false, "Write-side commands admitted"),
    ("bytes_rd", false, "Bytes of read commands admitted"),
    ("bytes_wr", false, "Bytes of write commands admitted"),
    (
        "thr_rd",
        false,
        "Read commands after which a bucket of the queue was in debt (the queue had to wait)",
    ),
    (
        "thr_wr",
        false,
        "Write-side commands after which a bucket of the queue was in debt",
    ),
    ("deny_rd", false, "Read commands denied (0Bh, 80h or 86h)"),
    ("deny_wr", false, "Write-side commands denied"),
];

/// The counters kept per namespace, in register order: name and meaning.
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

/// Offset of grant entry 0.
pub fn grant_base(p: &QosParams) -> u32 {
    NS_BASE + p.namespaces * NS_STRIDE
}

/// Address bits of the global registers' window (`qos_csr`).
pub fn global_bits(p: &QosParams) -> u32 {
    clog2(u64::from(grant_base(p) + p.grants * GRANT_STRIDE)).max(6)
}

/// Address bits of the queue window (queues x 0x40 bytes).
pub fn queue_bits(p: &QosParams) -> u32 {
    clog2(u64::from(p.queues) * u64::from(QUEUE_STRIDE)).max(6)
}

/// log2 of the queue window's offset: the global registers and the queue window each take one
/// slot of `2^queue_shift` bytes (the queue window is the second).
pub fn queue_shift(p: &QosParams) -> u32 {
    global_bits(p).max(queue_bits(p))
}

/// Address bits of the whole block (`s_axil_*addr`).
pub fn addr_width(p: &QosParams) -> u32 {
    queue_shift(p) + 1
}

/// The register map of `qos_csr` (the global registers) for `p`; the queue window is described
/// in its documentation.
pub fn register_map(p: &QosParams) -> Result<RegMap, Errors> {
    let cw = p.counter_width;
    let qbase = 1u32 << queue_shift(p);
    let mut b = RegBlock::new("qos_csr", global_bits(p));
    b.doc("QoS arbiter: rate limits per queue and per namespace, the grant table, counters.");
    b.doc(&format!(
        "Bandwidth rates are bytes per cycle with {BW_FRAC} fraction bits, IOPS rates commands"
    ));
    b.doc(&format!(
        "per cycle with {IOPS_FRAC} fraction bits; a rate of 0 is unlimited. Bursts are bucket"
    ));
    b.doc("capacities. Buckets may go into debt (see hdl-gen/src/qos/mod.rs).");
    b.doc(&format!(
        "This table is the global window (offsets 0 to 0x{:x}): namespace registers at 0x{NS_BASE:x} + (nsid - 1) * 0x{NS_STRIDE:x},",
        (1u32 << global_bits(p)) - 1
    ));
    b.doc(&format!(
        "grant entries at 0x{:x} + g * 0x{GRANT_STRIDE:x}. Counters ({cw} bits) wrap.",
        grant_base(p)
    ));
    b.doc("");
    b.doc(&format!(
        "Queue window at 0x{qbase:x} (1 << info2.queue_shift): SQ s's registers at 0x{qbase:x} + (s - 1) * 0x{QUEUE_STRIDE:x},"
    ));
    b.doc(
        "held in RAMs (cleared after reset; until then the whole block waits to answer). A write",
    );
    b.doc("replaces the whole register (wstrb is not looked at); counters are read-only (writes");
    b.doc("ignored); an offset past the last one below, or a queue past the last, answers SLVERR.");
    b.doc("");
    b.doc("| Offset in the queue's 0x40 bytes | Register | Access | Description |");
    b.doc("|---|---|---|---|");
    for (i, (name, rw, doc)) in QUEUE_REGS.iter().enumerate() {
        b.doc(&format!(
            "| 0x{:02x} | `{name}` | {} | {doc} |",
            4 * i,
            if *rw { "RW" } else { "RO" }
        ));
    }
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
            16,
            Access::Ro,
            0,
            "Queues served, SQ ids 1 to n",
        )
        .field(
            "namespaces",
            16,
            8,
            Access::Ro,
            0,
            "Namespaces, NSIDs 1 to n",
        )
        .field("grants", 24, 8, Access::Ro, 0, "Grant table entries");
    b.reg(
        "info2",
        0x008,
        "What this block was generated with, continued",
    )
    .field("depth", 0, 8, Access::Ro, 0, "Commands buffered per queue")
    .field(
        "queue_shift",
        8,
        8,
        Access::Ro,
        0,
        "The queue window is at offset 1 << queue_shift",
    );
    let counters = |b: &mut RegBlock, prefix: &str, base: u32| {
        for (k, (name, doc)) in COUNTERS.iter().enumerate() {
            b.reg(&format!("{prefix}_{name}"), base + 4 * k as u32, doc)
                .field("value", 0, cw, Access::Ro, 0, "Count, wrapping");
        }
    };
    for n in 0..p.namespaces {
        let id = n + 1;
        let base = NS_BASE + n * NS_STRIDE;
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
