//! Chip identification and bring-up registers: the first thing a bring-up engineer reads over
//! the CSR bus to learn which generator, configuration and NVMe parameters a bitstream carries.

use hdl_builder::prelude::*;
use hdl_builder::regs::{Access, RegBlock, RegMap};
use hdl_builder::Errors;
use std::rc::Rc;

/// `ID` register value: ASCII "NVMF".
pub const CHIP_ID: u32 = 0x4e56_4d46;

/// What the chip reports about itself.
#[derive(Clone, Debug)]
pub struct ChipFacts {
    /// Generator version (major, minor, patch).
    pub version: (u8, u8, u8),
    /// Configuration hash (as in every file header).
    pub config_hash: u64,
    /// I/O queue pairs.
    pub io_queue_pairs: u32,
    /// Largest queue size in entries (CAP.MQES + 1).
    pub max_queue_depth: u32,
    /// CAP.DSTRD.
    pub doorbell_stride: u32,
}

/// The register map of `chip_info_csr`.
pub fn register_map(addr_width: u32) -> Result<RegMap, Errors> {
    let mut b = RegBlock::new("chip_info_csr", addr_width);
    b.doc("Chip identification and bring-up registers.");
    b.reg("id", 0x00, "Chip identifier").field(
        "value",
        0,
        32,
        Access::Ro,
        CHIP_ID as u64,
        "ASCII \"NVMF\"",
    );
    b.reg("version", 0x04, "Generator version")
        .field("patch", 0, 8, Access::Ro, 0, "Patch version")
        .field("minor", 8, 8, Access::Ro, 0, "Minor version")
        .field("major", 16, 8, Access::Ro, 0, "Major version");
    b.reg("config_hash_lo", 0x08, "Configuration hash, low word")
        .field(
            "value",
            0,
            32,
            Access::Ro,
            0,
            "Bits 31:0 of the configuration hash",
        );
    b.reg("config_hash_hi", 0x0c, "Configuration hash, high word")
        .field(
            "value",
            0,
            32,
            Access::Ro,
            0,
            "Bits 63:32 of the configuration hash",
        );
    b.reg("nvme_cap", 0x10, "NVMe parameters of this configuration")
        .field("io_queues", 0, 16, Access::Ro, 0, "I/O queue pairs")
        .field(
            "mqes",
            16,
            16,
            Access::Ro,
            0,
            "Largest queue size minus one (CAP.MQES)",
        );
    b.reg("nvme_dstrd", 0x14, "Doorbell stride").field(
        "value",
        0,
        4,
        Access::Ro,
        0,
        "CAP.DSTRD: doorbells are 4 << n bytes apart",
    );
    b.reg("scratch", 0x18, "Scratch register for bus tests")
        .field("value", 0, 32, Access::Rw, 0, "Reads back what was written");
    b.finish()
}

/// `chip_info`: the CSR block with its read-only fields tied to this configuration's facts.
pub fn chip_info(
    facts: &ChipFacts,
    addr_width: u32,
    reset: ResetStyle,
) -> Result<Rc<Module>, Errors> {
    let csr = register_map(addr_width)?.module(reset)?;
    let mut m = ModuleBuilder::with_reset("chip_info", reset);
    m.doc("Chip identification registers (AXI4-Lite): ID, generator version, configuration");
    m.doc("hash, NVMe parameters, and a scratch register.");
    m.clock();
    m.reset();
    let u = m.instance("u_csr", &csr);
    m.group("AXI4-Lite slave");
    for p in csr.ports() {
        if !p.name.starts_with("s_axil_") {
            continue;
        }
        if p.input {
            let s = m.input(&p.name, p.width);
            m.bind(u, &p.name, s);
        } else {
            let s = m.output(&p.name, p.width);
            m.bind_out_to(u, &p.name, s);
        }
    }
    let (major, minor, patch) = facts.version;
    m.bind(u, "id_value_i", lit(32, CHIP_ID as u128));
    m.bind(u, "version_major_i", lit(8, major as u128));
    m.bind(u, "version_minor_i", lit(8, minor as u128));
    m.bind(u, "version_patch_i", lit(8, patch as u128));
    m.bind(
        u,
        "config_hash_lo_value_i",
        lit(32, (facts.config_hash & 0xffff_ffff) as u128),
    );
    m.bind(
        u,
        "config_hash_hi_value_i",
        lit(32, (facts.config_hash >> 32) as u128),
    );
    m.bind(
        u,
        "nvme_cap_io_queues_i",
        lit(16, facts.io_queue_pairs as u128),
    );
    m.bind(
        u,
        "nvme_cap_mqes_i",
        lit(16, (facts.max_queue_depth - 1) as u128),
    );
    m.bind(
        u,
        "nvme_dstrd_value_i",
        lit(4, facts.doorbell_stride as u128),
    );
    m.finish()
}
