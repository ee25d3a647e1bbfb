//! Parameters of the NVMe queue engine, from the chip configuration, and its vendor CSR map.

use hdl_builder::clog2;
use hdl_builder::regs::{Access, RegBlock, RegMap};
use hdl_builder::Errors;

/// Sizes of the NVMe front end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NvmeParams {
    /// I/O queue pairs (queue ids 1..=io_queues; 0 is the admin queue).
    pub io_queues: u32,
    /// Largest queue size in entries (CAP.MQES + 1), a power of two.
    pub max_depth: u32,
    /// CAP.DSTRD.
    pub stride: u32,
    /// AXI4 data width in bits: 64, 128, 256 or 512.
    pub data_width: u32,
    /// MSI-X vectors.
    pub vectors: u32,
    /// Largest number of SQEs fetched in one burst.
    pub fetch_burst: u32,
    /// SQEs the fetch buffer holds (fetched, not yet handed out).
    pub fetch_slots: u32,
    /// Maximum Data Transfer Size as Identify Controller reports it (1 to 13): a Read or Write
    /// may move at most `2^mdts * 4 KiB` (CAP.MPSMIN is 0); longer ones complete with 02h. The
    /// chip sets it from the DMA engine's length width (`mdts_for_len_width`). 13 (32 MiB) is
    /// the most NLB can ask for, so it never refuses.
    pub mdts: u32,
}

/// The largest admin queue AQA can set (ASQS and ACQS are 12-bit, 0's based).
pub const ADMIN_MAX_ENTRIES: u32 = 4096;

/// Write responses (CQE writes) the front end keeps in flight.
pub const MAX_WRITES: u32 = 8;

/// The MDTS a DMA engine of `len_width`-bit lengths (transfers up to `2^len_width - 1` bytes)
/// can honour: the largest `n` with `2^n * 4 KiB` bytes within its reach (at least 1: MDTS 0
/// means "no limit"), capped at 13, where NLB's 65536 blocks of 512 bytes are reached.
pub fn mdts_for_len_width(len_width: u32) -> u32 {
    len_width.saturating_sub(13).clamp(1, 13)
}

impl NvmeParams {
    /// The largest Read or Write in 512-byte blocks that MDTS allows (`NLB + 1` at most this).
    pub fn max_blocks(&self) -> u32 {
        8 << self.mdts
    }
    /// Bits of a queue id inside the chip (RAM address): `clog2(io_queues + 1)`.
    pub fn qid_width(&self) -> u32 {
        clog2(u64::from(self.io_queues) + 1)
    }
    /// Bits of a queue index (head, tail, 0's based size): enough for `max_depth` entries and
    /// for the admin queues, which AQA sizes up to 4096 entries whatever CAP.MQES says (MQES
    /// bounds the I/O queues only; NVMe base specification, AQA.ASQS and ACQS). Linux asks for
    /// 32 admin entries, more than the smallest configuration's I/O queues hold.
    pub fn idx_width(&self) -> u32 {
        clog2(u64::from(self.max_depth.max(ADMIN_MAX_ENTRIES)))
    }
    /// Bits of an interrupt vector number.
    pub fn vec_width(&self) -> u32 {
        clog2(u64::from(self.vectors))
    }
    /// AXI beats per 64-byte SQE.
    pub fn beats_per_sqe(&self) -> u32 {
        512 / self.data_width
    }
    /// Address bits of BAR0: registers, then two doorbells per queue.
    pub fn bar_addr_width(&self) -> u32 {
        let end = 0x1000u64 + 2 * (u64::from(self.io_queues) + 1) * (4u64 << self.stride);
        clog2(end)
    }
    /// A parameter suffix for module names.
    pub fn suffix(&self) -> String {
        format!(
            "_q{}_d{}_s{}_w{}_v{}_b{}_f{}_m{}",
            self.io_queues,
            self.max_depth,
            self.stride,
            self.data_width,
            self.vectors,
            self.fetch_burst,
            self.fetch_slots,
            self.mdts
        )
    }
}

/// Firmware queue operations (`q_cmd.op`).
pub const OP_CREATE_SQ: u64 = 1;
/// Create an I/O completion queue.
pub const OP_CREATE_CQ: u64 = 2;
/// Delete an I/O submission queue.
pub const OP_DELETE_SQ: u64 = 3;
/// Delete an I/O completion queue.
pub const OP_DELETE_CQ: u64 = 4;

/// The vendor CSR map `nvme_csr`: the firmware's window on the front end.
pub fn register_map() -> Result<RegMap, Errors> {
    let mut b = RegBlock::new("nvme_csr", 7);
    b.doc("NVMe front end: firmware's queue, feature and event registers, and counters.");
    b.reg(
        "q_base_lo",
        0x00,
        "Queue base address, low word (page aligned)",
    )
    .field("addr", 12, 20, Access::Rw, 0, "Base address bits 31:12");
    b.reg("q_base_hi", 0x04, "Queue base address, high word")
        .field("addr", 0, 32, Access::Rw, 0, "Base address bits 63:32");
    b.reg("q_cfg", 0x08, "Queue size and attributes")
        .field("size", 0, 16, Access::Rw, 0, "Queue size, 0's based")
        .field(
            "prio",
            16,
            2,
            Access::Rw,
            0,
            "SQ priority class: 0 urgent, 1 high, 2 medium, 3 low",
        )
        .field("ien", 18, 1, Access::Rw, 0, "CQ interrupts enabled");
    b.reg("q_bind", 0x0c, "Queue binding")
        .field(
            "cqid",
            0,
            16,
            Access::Rw,
            0,
            "SQ: the completion queue it posts to",
        )
        .field("vector", 16, 16, Access::Rw, 0, "CQ: its MSI-X vector");
    b.reg(
        "q_cmd",
        0x10,
        "Queue operation, applied with the q_* registers above",
    )
    .field(
        "qid",
        0,
        16,
        Access::WoPulse,
        0,
        "Queue id (1 to io_queue_pairs)",
    )
    .field(
        "op",
        16,
        3,
        Access::WoPulse,
        0,
        "1 create SQ, 2 create CQ, 3 delete SQ, 4 delete CQ",
    );
    b.reg("status", 0x14, "Front-end status")
        .field(
            "busy",
            0,
            1,
            Access::Ro,
            0,
            "A queue operation is pending; wait before the next",
        )
        .field("cc_en", 1, 1, Access::Ro, 0, "CC.EN as the host wrote it")
        .field("rdy", 2, 1, Access::Ro, 0, "CSTS.RDY")
        .field("cfs", 3, 1, Access::Ro, 0, "CSTS.CFS")
        .field(
            "lat_clearing",
            4,
            1,
            Access::Ro,
            0,
            "The latency histograms are being cleared (96 cycles)",
        );
    b.reg("arb", 0x18, "Arbitration feature (01h), DW11 layout")
        .field(
            "ab",
            0,
            3,
            Access::Rw,
            7,
            "Arbitration burst 2^AB SQEs; 7 = no limit",
        )
        .field("lpw", 8, 8, Access::Rw, 0, "Low priority weight, 0's based")
        .field(
            "mpw",
            16,
            8,
            Access::Rw,
            0,
            "Medium priority weight, 0's based",
        )
        .field(
            "hpw",
            24,
            8,
            Access::Rw,
            0,
            "High priority weight, 0's based",
        );
    b.reg(
        "coalesce",
        0x1c,
        "Interrupt coalescing feature (08h), DW11 layout",
    )
    .field(
        "thr",
        0,
        8,
        Access::Rw,
        0,
        "Aggregation threshold, 0's based completions",
    )
    .field(
        "time",
        8,
        8,
        Access::Rw,
        0,
        "Aggregation time in coal_tick units; 0 = none",
    );
    b.reg("coal_tick", 0x20, "Length of the aggregation time unit")
        .field(
            "cycles",
            0,
            24,
            Access::Rw,
            25_000,
            "Clock cycles per 100 us",
        );
    b.reg(
        "vec_cfg",
        0x24,
        "Interrupt vector configuration feature (09h)",
    )
    .field("vector", 0, 16, Access::WoPulse, 0, "Vector")
    .field(
        "cd",
        16,
        1,
        Access::WoPulse,
        0,
        "Coalescing disabled for the vector",
    );
    b.reg(
        "events",
        0x28,
        "Doorbell faults for the Asynchronous Event Request",
    )
    .field(
        "bad_db_reg",
        0,
        1,
        Access::W1c,
        0,
        "Write to the doorbell of a queue that does not exist (info 00h)",
    )
    .field(
        "bad_db_value",
        1,
        1,
        Access::W1c,
        0,
        "Doorbell value outside the queue (info 01h)",
    );
    b.reg("event_qid", 0x2c, "The last faulty doorbell")
        .field("qid", 0, 16, Access::Ro, 0, "Queue id")
        .field(
            "cq",
            16,
            1,
            Access::Ro,
            0,
            "1: a CQ head doorbell; 0: an SQ tail doorbell",
        );
    b.reg(
        "cnt_sel",
        0x30,
        "Queue whose counters cnt_fetched and cnt_completed show",
    )
    .field("qid", 0, 16, Access::Rw, 0, "Queue id");
    b.reg(
        "cnt_fetched",
        0x34,
        "Commands fetched from SQ cnt_sel since its creation",
    )
    .field("value", 0, 32, Access::Ro, 0, "Commands");
    b.reg(
        "cnt_completed",
        0x38,
        "Commands of SQ cnt_sel whose CQE was posted since its creation",
    )
    .field("value", 0, 32, Access::Ro, 0, "Commands");
    b.reg("irqs", 0x3c, "Interrupts raised (32 bits, wrapping)")
        .field("value", 0, 32, Access::Ro, 0, "Interrupts");
    b.reg("db_faults", 0x40, "Doorbell faults (32 bits, wrapping)")
        .field("value", 0, 32, Access::Ro, 0, "Faulty doorbell writes");
    b.reg(
        "fetched",
        0x44,
        "SQEs fetched, all queues (32 bits, wrapping)",
    )
    .field("value", 0, 32, Access::Ro, 0, "SQEs");
    b.reg(
        "completed",
        0x48,
        "CQEs posted, all queues (32 bits, wrapping)",
    )
    .field("value", 0, 32, Access::Ro, 0, "CQEs");
    b.reg(
        "cnt_offload",
        0x4c,
        "I/O commands handed to the hardware path on io_cmd (32 bits, wrapping)",
    )
    .field("value", 0, 32, Access::Ro, 0, "Commands");
    b.reg(
        "cnt_fallback",
        0x50,
        "I/O commands handed to firmware on admin_cmd, opcodes the hardware does not carry (32 bits, wrapping)",
    )
    .field("value", 0, 32, Access::Ro, 0, "Commands");
    b.reg(
        "lat_sel",
        0x54,
        "Latency histogram bin that lat_count shows (see hdl-gen/src/nvme/mod.rs)",
    )
    .field(
        "bin",
        0,
        5,
        Access::Rw,
        0,
        "Bin b: doorbell-to-CQE latencies of 2^b to 2^(b+1) - 1 cycles (31: 2^31 and more)",
    )
    .field(
        "dir",
        8,
        2,
        Access::Rw,
        0,
        "Histogram: 0 read, 1 write, 2 other",
    );
    b.reg(
        "lat_count",
        0x58,
        "Timed commands in bin lat_sel (32 bits, saturating; 0 for dir 3)",
    )
    .field("value", 0, 32, Access::Ro, 0, "Commands");
    b.reg("lat_ctrl", 0x5c, "Latency histograms control").field(
        "clear",
        0,
        1,
        Access::WoPulse,
        0,
        "Zero every bin (status.lat_clearing while it runs)",
    );
    b.reg(
        "limits",
        0x60,
        "What the hardware carries, for Identify Controller",
    )
    .field(
        "mdts",
        0,
        8,
        Access::Ro,
        0,
        "MDTS: a Read or Write moves at most 2^mdts * 4 KiB; longer ones complete with 02h",
    );
    b.finish()
}
