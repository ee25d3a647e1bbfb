//! The chip's firmware registers seen from the bridge, by name, from the generator: every block
//! of the bring-up configuration's firmware map (`chip_csr`'s slots) with its register map, so
//! the tool addresses `tcp_csr.c0_state` or the field `qos_csr.grant0_ctrl.sqid` the way the
//! bitstream's generator laid them out, and never by a hard-coded offset.

use crate::{Error, Map};
use hdl_builder::regs::{Field, RegMap, Register};
use hdl_gen::boards::{self, bringup};
use std::collections::BTreeMap;

/// The firmware-visible blocks of the board's chip: name -> (bridge base, map).
pub struct ChipMap {
    blocks: BTreeMap<String, (u32, RegMap)>,
    /// NVMe/TCP connections, RoCE QPs and I/O queue pairs of the configuration.
    pub tcp_conns: u32,
    pub roce_qps: u32,
    pub io_queues: u32,
    /// QoS queues (SQ ids with a routing table entry) and grants.
    pub qos_queues: u32,
    pub qos_grants: u32,
}

impl ChipMap {
    /// The map of the board `map` describes.
    pub fn new(map: &Map) -> Result<ChipMap, Error> {
        let cfg = boards::config(&map.board).map_err(|e| Error::Board(e.to_string()))?;
        let ch = hdl_gen::chip::channels(&cfg);
        let mut blocks = BTreeMap::new();
        for m in hdl_gen::chip::register_maps(&cfg).map_err(|e| Error::Board(e.to_string()))? {
            let base = hdl_gen::chip::csr::base(&ch, cfg.csr.addr_width, m.name());
            if base != u32::MAX {
                blocks.insert(m.name().to_string(), (bringup::FIRMWARE_BASE + base, m));
            }
        }
        Ok(ChipMap {
            blocks,
            tcp_conns: if cfg
                .chip
                .transports
                .contains(&hdl_gen::config::Transport::NvmeTcp)
            {
                cfg.nvme_tcp.connections
            } else {
                0
            },
            roce_qps: if cfg
                .chip
                .transports
                .contains(&hdl_gen::config::Transport::Roce)
            {
                cfg.roce.qps
            } else {
                0
            },
            io_queues: cfg.nvme.io_queue_pairs,
            qos_queues: cfg.qos.queues,
            qos_grants: cfg.qos.grants,
        })
    }

    /// Whether the chip holds `block`.
    pub fn has(&self, block: &str) -> bool {
        self.blocks.contains_key(block)
    }

    fn reg(&self, block: &str, reg: &str) -> Result<(u32, &Register), Error> {
        let (base, m) = self.blocks.get(block).ok_or_else(|| {
            Error::Board(format!(
                "this board's chip has no `{block}` (its configuration holds {})",
                self.blocks.keys().cloned().collect::<Vec<_>>().join(", ")
            ))
        })?;
        let r = m
            .registers()
            .iter()
            .find(|r| r.name == reg)
            .ok_or_else(|| Error::Board(format!("`{block}` has no register `{reg}`")))?;
        Ok((*base, r))
    }

    /// Bridge address of `block.reg`.
    pub fn addr(&self, block: &str, reg: &str) -> Result<u32, Error> {
        let (base, r) = self.reg(block, reg)?;
        Ok(base + r.offset)
    }

    /// Field `field` of `block.reg`.
    pub fn field(&self, block: &str, reg: &str, field: &str) -> Result<Field, Error> {
        let (_, r) = self.reg(block, reg)?;
        r.fields
            .iter()
            .find(|f| f.name == field)
            .cloned()
            .ok_or_else(|| Error::Board(format!("`{block}.{reg}` has no field `{field}`")))
    }

    /// The value of `block.reg` with the named fields set; a value too wide for its field is
    /// an error naming it.
    pub fn pack(&self, block: &str, reg: &str, fields: &[(&str, u64)]) -> Result<u32, Error> {
        let mut v = 0u32;
        for &(name, x) in fields {
            let f = self.field(block, reg, name)?;
            if f.width < 64 && x >> f.width != 0 {
                return Err(Error::Board(format!(
                    "{x} does not fit `{block}.{reg}.{name}` ({} bits)",
                    f.width
                )));
            }
            v |= (x as u32) << f.lsb;
        }
        Ok(v)
    }

    /// Field `field` of the value `v` read from `block.reg`.
    pub fn get(&self, block: &str, reg: &str, field: &str, v: u32) -> Result<u32, Error> {
        let f = self.field(block, reg, field)?;
        Ok((v >> f.lsb) & f.mask() >> f.lsb)
    }
}

/// The core clock in kHz: `bringup_csr.info_clock` when the board core has it (the simulated
/// board runs a lowered clock), else the board's `core_hz` from the generator.
pub fn clock_khz(br: &mut crate::Bridge, map: &Map) -> Result<(u32, &'static str), Error> {
    if map
        .board_csr
        .registers()
        .iter()
        .any(|r| r.name == "info_clock")
    {
        let v = br.read(map.board_reg("info_clock"))?;
        let f = map
            .board_csr
            .registers()
            .iter()
            .find(|r| r.name == "info_clock")
            .and_then(|r| r.fields.first().cloned());
        let khz = f.map_or(v, |f| (v & f.mask()) >> f.lsb);
        if khz == 0 {
            return Err(Error::Board(
                "bringup_csr.info_clock reads 0 kHz: the board core does not say its clock".into(),
            ));
        }
        return Ok((khz, "bringup_csr.info_clock"));
    }
    Ok(((map.board.core_hz / 1000) as u32, "the board's core_hz"))
}
