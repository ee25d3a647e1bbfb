//! `bringup_csr`: the bring-up core's own registers, at the start of the UART bridge's address
//! map (see [`super::bringup`]): what the board is and the core clock it was built for
//! (`info_clock`, kHz: a simulated board's is lowered), the chip's admin streams (the firmware's
//! work, done by the host tool), the interrupts the chip raised, the MAC's counters and the
//! MDIO master.
//!
//! Admin streams: `admin_status.cmd_valid` is high while the chip offers an admin command (or a
//! fallback I/O command); its SQE is in `admin_sqe0`..`admin_sqe15` (dword 0 first) and its SQ
//! id in `admin_cmd_sqid`; writing 1 to `admin_pop.pop` takes it (the chip then offers the
//! next). A completion is written to `admin_cpl_*` and sent by writing 1 to
//! `admin_cpl_push.push`; `admin_status.cpl_busy` is high until the chip took it.
//!
//! MDIO: write `mdio_cmd` (one 32-bit write: data, register, PHY address, write bit) while
//! `mdio_status.busy` is low; the frame starts then. After a read, `mdio_status.rdata` holds the
//! 16 bits once `busy` falls.

use hdl_builder::regs::{Access, RegBlock, RegMap};
use hdl_builder::Errors;

/// The block's name.
pub const NAME: &str = "bringup_csr";
/// Address bits of its window (256 bytes).
pub const ADDR_WIDTH: u32 = 8;
/// `id.value`: ASCII "BRUP".
pub const BRINGUP_ID: u32 = 0x4252_5550;

/// The MAC counters mirrored in the map, in the MAC's port order (`<name>_o`).
pub const MAC_COUNTERS: [&str; 7] = [
    "tx_frames",
    "rx_frames",
    "rx_err_ctl",
    "rx_err_oversize",
    "rx_err_runt",
    "rx_err_fcs",
    "rx_err_overflow",
];

/// Offset of `admin_sqe0`; `admin_sqe<i>` is 4 bytes further per dword.
pub const ADMIN_SQE: u32 = 0x40;
/// Offset of the first MAC counter (`mac_<name>`, 4 bytes apart in [`MAC_COUNTERS`] order).
pub const MAC_COUNTER_BASE: u32 = 0x80;

/// What the map's reset values depend on.
#[derive(Clone, Copy, Debug)]
pub struct BoardCsrParams {
    /// Board code in `info.board` (the board's index in `boards::all()`).
    pub board: u32,
    /// `info.mem_bits`: the host memory holds 2^mem_bits bytes.
    pub mem_bits: u32,
    /// `mdio_div.div` after reset: MDC half period in core cycles (2.5 MHz or slower).
    pub mdio_div: u32,
}

/// The register map of `bringup_csr`.
pub fn register_map(p: &BoardCsrParams) -> Result<RegMap, Errors> {
    let mut b = RegBlock::new(NAME, ADDR_WIDTH);
    b.doc("Bring-up core registers: board identity, the chip's admin streams, interrupts seen,");
    b.doc("the RGMII MAC's counters and the MDIO master (hdl-gen/src/boards/board_csr.rs).");
    b.reg("id", 0x00, "Bring-up core identifier").field(
        "value",
        0,
        32,
        Access::Ro,
        u64::from(BRINGUP_ID),
        "ASCII \"BRUP\"",
    );
    b.reg("info", 0x04, "What the board holds")
        .field(
            "board",
            0,
            8,
            Access::Ro,
            0,
            "Board code: 0 ButterStick, 1 Colorlight i5",
        )
        .field(
            "mem_bits",
            8,
            8,
            Access::Ro,
            0,
            "Host memory holds 2^mem_bits bytes",
        );
    b.reg("ctrl", 0x08, "Board control").field(
        "phy_reset",
        0,
        1,
        Access::Rw,
        0,
        "Hold the Ethernet PHY in reset while 1",
    );
    b.reg("info_clock", 0x0c, "The core clock").field(
        "khz",
        0,
        32,
        Access::Ro,
        0,
        "Core clock in kHz: the board's on hardware, the lowered one in the simulated board",
    );
    b.reg("admin_status", 0x10, "Admin stream state")
        .field(
            "cmd_valid",
            0,
            1,
            Access::Ro,
            0,
            "An admin command waits in admin_sqe*",
        )
        .field(
            "cpl_busy",
            1,
            1,
            Access::Ro,
            0,
            "The completion pushed is not taken yet",
        );
    b.reg("admin_cmd_sqid", 0x14, "SQ id of the command shown")
        .field("sqid", 0, 16, Access::Ro, 0, "0 for the admin queue");
    b.reg("admin_pop", 0x18, "Take the command shown").field(
        "pop",
        0,
        1,
        Access::WoPulse,
        0,
        "Write 1 to take it",
    );
    b.reg("admin_cpl_sqid", 0x1c, "Completion: SQ id").field(
        "sqid",
        0,
        16,
        Access::Rw,
        0,
        "The command's SQ id",
    );
    b.reg("admin_cpl_cid", 0x20, "Completion: command id")
        .field("cid", 0, 16, Access::Rw, 0, "The command's CID");
    b.reg("admin_cpl_status", 0x24, "Completion: status field")
        .field("status", 0, 15, Access::Rw, 0, "CQE DW3[31:17]: 0 success");
    b.reg("admin_cpl_dw0", 0x28, "Completion: dword 0").field(
        "dw0",
        0,
        32,
        Access::Rw,
        0,
        "Command specific",
    );
    b.reg("admin_cpl_push", 0x2c, "Send the completion").field(
        "push",
        0,
        1,
        Access::WoPulse,
        0,
        "Write 1 to send it",
    );
    b.reg("irq_count", 0x30, "Interrupts the chip raised")
        .field("count", 0, 32, Access::Ro, 0, "MSI-X messages, wrapping");
    b.reg("irq_last", 0x34, "Last interrupt").field(
        "vector",
        0,
        16,
        Access::Ro,
        0,
        "Its MSI-X vector",
    );
    for i in 0..16u32 {
        b.reg(
            &format!("admin_sqe{i}"),
            ADMIN_SQE + 4 * i,
            &format!("Admin command, dword {i}"),
        )
        .field("dw", 0, 32, Access::Ro, 0, "SQE dword");
    }
    for (i, n) in MAC_COUNTERS.iter().enumerate() {
        b.reg(
            &format!("mac_{n}"),
            MAC_COUNTER_BASE + 4 * i as u32,
            &format!("MAC counter {n}"),
        )
        .field("count", 0, 32, Access::Ro, 0, "Frames, wrapping");
    }
    b.reg("mdio_div", 0xa0, "MDC half period").field(
        "div",
        0,
        8,
        Access::Rw,
        u64::from(p.mdio_div),
        "Core cycles",
    );
    b.reg(
        "mdio_cmd",
        0xa4,
        "MDIO frame (write all four bytes at once)",
    )
    .field("data", 0, 16, Access::WoPulse, 0, "Data written")
    .field("reg", 16, 5, Access::WoPulse, 0, "Register address")
    .field("phy", 21, 5, Access::WoPulse, 0, "PHY address")
    .field("write", 26, 1, Access::WoPulse, 0, "1 write, 0 read");
    b.reg("mdio_status", 0xa8, "MDIO state")
        .field("busy", 0, 1, Access::Ro, 0, "A frame is queued or running")
        .field("rdata", 16, 16, Access::Ro, 0, "Bits read by the last read");
    b.finish()
}
