//! The AXI4-Lite master against the real `chip_info` register block, and against a Rust slave
//! that raises `awready` and `wready` in different cycles.

use proptest::prelude::*;
use std::collections::VecDeque;
use std::path::Path;
use testbench::drivers::axil::{self, Axil, AxilConfig, AxilError, AxilMaster};
use testbench::drivers::{Dir, Ports, Resp, Wires};
use testbench::prop::{check, Property};
use testbench::rng::Rng;
use testbench::rtl::chip_info::ChipInfo;
use testbench::rtl::regs::chip_info_csr as csr;
use testbench::sim::{Bench, Component, Signal, Sim};

/// The chip_info RTL as committed: its values are checked against what the bus reads.
const CHIP_INFO_SV: &str = include_str!("../../rtl/chip_info.sv");

/// The value tied to input `port` of the CSR instance in chip_info.sv (`.port (N'hX)`).
fn tied(port: &str) -> u32 {
    let line = CHIP_INFO_SV
        .lines()
        .find(|l| l.trim_start().starts_with(&format!(".{port} ")))
        .unwrap_or_else(|| panic!("chip_info.sv ties no `{port}`"));
    let lit = line.split('(').nth(1).unwrap().split(')').next().unwrap();
    let (_, v) = lit.split_once('\'').unwrap();
    let radix = match &v[..1] {
        "h" => 16,
        "d" => 10,
        "b" => 2,
        r => panic!("radix {r}"),
    };
    u32::from_str_radix(&v[1..].replace('_', ""), radix).unwrap()
}

/// (generator version, configuration hash) from the header of chip_info.sv.
fn header() -> ((u32, u32, u32), u64) {
    let first = CHIP_INFO_SV.lines().next().unwrap();
    let ver = first.split("hdl-gen ").nth(1).unwrap();
    let ver: Vec<u32> = ver
        .split_whitespace()
        .next()
        .unwrap()
        .split('.')
        .map(|p| p.parse().unwrap())
        .collect();
    let hash = first.split("(hash ").nth(1).unwrap().trim_end_matches(").");
    (
        (ver[0], ver[1], ver[2]),
        u64::from_str_radix(hash, 16).unwrap(),
    )
}

/// The register block as a model: scratch is RW, the others RO with fixed values, every other
/// offset answers SLVERR and reads as 0. Address bits [1:0] are ignored.
#[derive(Clone, Debug)]
struct ChipInfoModel {
    ro: Vec<(u64, u32)>,
    scratch: u32,
}

impl ChipInfoModel {
    fn new() -> Self {
        let ((major, minor, patch), hash) = header();
        ChipInfoModel {
            ro: vec![
                (0x00, 0x4e56_4d46),
                (0x04, major << 16 | minor << 8 | patch),
                (0x08, hash as u32),
                (0x0c, (hash >> 32) as u32),
                (
                    0x10,
                    tied("nvme_cap_mqes_i") << 16 | tied("nvme_cap_io_queues_i"),
                ),
                (0x14, tied("nvme_dstrd_value_i")),
            ],
            scratch: 0,
        }
    }

    fn read(&self, addr: u64) -> (u64, Resp) {
        let a = addr & 0xffc;
        if a == 0x18 {
            return (self.scratch as u64, Resp::Okay);
        }
        match self.ro.iter().find(|r| r.0 == a) {
            Some(r) => (r.1 as u64, Resp::Okay),
            None => (0, Resp::SlvErr),
        }
    }

    fn write(&mut self, addr: u64, data: u64, strb: u64) -> Resp {
        let a = addr & 0xffc;
        if a == 0x18 {
            let mask = (0..4)
                .filter(|i| strb >> i & 1 == 1)
                .fold(0u32, |m, i| m | 0xff << (8 * i));
            self.scratch = (self.scratch & !mask) | (data as u32 & mask);
            return Resp::Okay;
        }
        if self.ro.iter().any(|r| r.0 == a) {
            Resp::Okay
        } else {
            Resp::SlvErr
        }
    }
}

fn chip_info(cfg: AxilConfig) -> (Sim<ChipInfo>, Axil) {
    let mut sim = Sim::<ChipInfo>::new();
    let axil = Axil::attach(&mut sim, "s_axil", cfg);
    sim.reset(2);
    (sim, axil)
}

#[test]
fn reads_id_version_and_config_hash() -> Result<(), AxilError> {
    let (mut sim, axil) = chip_info(AxilConfig::default());
    let ((major, minor, patch), hash) = header();
    assert_eq!(axil.read(&mut sim, 0x000)?, 0x4e56_4d46);
    let version = axil.read(&mut sim, 0x004)?;
    assert_eq!(
        (version >> 16 & 0xff, version >> 8 & 0xff, version & 0xff),
        (major as u64, minor as u64, patch as u64)
    );
    assert_eq!(version >> 24, 0, "version [31:24] reads as 0");
    let lo = axil.read(&mut sim, 0x008)?;
    let hi = axil.read(&mut sim, 0x00c)?;
    assert_eq!(
        hi << 32 | lo,
        hash,
        "config hash registers vs the RTL header"
    );
    assert_eq!(
        axil.read(&mut sim, 0x010)?,
        (tied("nvme_cap_mqes_i") << 16 | tied("nvme_cap_io_queues_i")) as u64
    );
    assert!(axil.master().violations.is_empty());
    Ok(())
}

#[test]
fn scratch_byte_strobes() -> Result<(), AxilError> {
    let (mut sim, axil) = chip_info(AxilConfig::default());
    assert_eq!(axil.read(&mut sim, 0x018)?, 0, "scratch after reset");
    axil.write(&mut sim, 0x018, 0xffff_ffff)?;
    axil.write_strb(&mut sim, 0x018, 0x1122_3344, 0b0101)?;
    assert_eq!(axil.read(&mut sim, 0x018)?, 0xff22_ff44);
    axil.write_strb(&mut sim, 0x018, 0xaabb_ccdd, 0b1000)?;
    assert_eq!(axil.read(&mut sim, 0x018)?, 0xaa22_ff44);
    axil.write_strb(&mut sim, 0x018, 0x0000_0000, 0b0000)?;
    assert_eq!(
        axil.read(&mut sim, 0x018)?,
        0xaa22_ff44,
        "no strobe, no change"
    );
    // Address bits [1:0] are ignored.
    axil.write(&mut sim, 0x01b, 0x0bad_cafe)?;
    assert_eq!(axil.read(&mut sim, 0x019)?, 0x0bad_cafe);
    // A write to a read-only register is answered OKAY and changes nothing.
    axil.write(&mut sim, 0x000, 0)?;
    assert_eq!(axil.read(&mut sim, 0x000)?, 0x4e56_4d46);
    Ok(())
}

#[test]
fn unmapped_address_answers_slverr_and_reads_zero() {
    let (mut sim, axil) = chip_info(AxilConfig::default());
    for addr in [0x01c, 0x800, 0xffc] {
        assert_eq!(
            axil.read_resp(&mut sim, addr).unwrap(),
            (0, Resp::SlvErr),
            "{addr:#x}"
        );
        match axil.read(&mut sim, addr) {
            Err(AxilError::Resp {
                dir: Dir::Read,
                resp: Resp::SlvErr,
                data: 0,
                ..
            }) => {}
            r => panic!("read of {addr:#x}: {r:?}"),
        }
        assert_eq!(
            axil.write_resp(&mut sim, addr, 0x1234, 0xf).unwrap(),
            Resp::SlvErr
        );
        assert!(axil.write(&mut sim, addr, 0x1234).is_err());
    }
    // The block still works after errors.
    assert_eq!(axil.read(&mut sim, 0).unwrap(), 0x4e56_4d46);
}

#[test]
fn random_idle_and_backpressure() -> Result<(), AxilError> {
    let cfg = AxilConfig {
        seed: 7,
        idle_percent: 60,
        stall_percent: 70,
        max_outstanding: 3,
        ..AxilConfig::default()
    };
    let (mut sim, axil) = chip_info(cfg);
    let mut rng = Rng::new(99);
    let mut scratch = 0u64;
    let start = sim.cycle();
    for _ in 0..200 {
        let v = rng.next_u64() & 0xffff_ffff;
        let strb = rng.below(16);
        axil.write_strb(&mut sim, 0x018, v, strb)?;
        for i in 0..4 {
            if strb >> i & 1 == 1 {
                scratch = (scratch & !(0xff << (8 * i))) | (v & 0xff << (8 * i));
            }
        }
        assert_eq!(axil.read(&mut sim, 0x018)?, scratch);
    }
    let m = axil.master();
    assert!(m.violations.is_empty(), "{:?}", m.violations);
    // Backpressure and idle cycles did happen: 400 accesses took well over 2 cycles each.
    assert!(
        sim.cycle() - start > 400 * 4,
        "{} cycles",
        sim.cycle() - start
    );
    // Responses waited on rready/bready at times: some accesses took long.
    assert!(m.log.iter().any(|c| c.done - c.issued > 6));
    Ok(())
}

#[test]
fn csr_bus_adapter_runs_the_generated_accessors() {
    let (mut sim, axil) = chip_info(AxilConfig {
        idle_percent: 30,
        stall_percent: 30,
        ..AxilConfig::default()
    });
    let mut bus = axil.mmio(&mut sim);
    assert_eq!(csr::read_id(&mut bus, 0), 0x4e56_4d46);
    assert_eq!(
        csr::get_nvme_cap_io_queues(csr::read_nvme_cap(&mut bus, 0)),
        tied("nvme_cap_io_queues_i")
    );
    csr::write_scratch(&mut bus, 0, 0x1234_5678);
    csr::modify_scratch(&mut bus, 0, |v| v ^ 0xffff_0000);
    assert_eq!(csr::read_scratch(&mut bus, 0), 0xedcb_5678);
    // Through the trait object shape the firmware models use.
    fn id_of(bus: &mut dyn csr::CsrBus) -> u32 {
        csr::read_id(bus, 0)
    }
    assert_eq!(id_of(&mut bus), 0x4e56_4d46);
    // Error responses: recorded, not fatal, when asked.
    let mut bus = axil.mmio(&mut sim).record_errors();
    assert_eq!(csr::CsrBus::read32(&mut bus, 0x800), 0);
    csr::CsrBus::write32(&mut bus, 0x800, 1);
    assert_eq!(bus.errors.len(), 2, "{:?}", bus.errors);
}

#[test]
#[should_panic(expected = "answered SlvErr")]
fn csr_bus_adapter_panics_on_an_error_response_by_default() {
    let (mut sim, axil) = chip_info(AxilConfig::default());
    let mut bus = axil.mmio(&mut sim);
    csr::CsrBus::read32(&mut bus, 0x800);
}

#[test]
fn reset_loses_accesses_in_flight_and_keeps_queued_ones() {
    let (mut sim, axil) = chip_info(AxilConfig {
        max_outstanding: 1,
        ..AxilConfig::default()
    });
    let (first, second) = {
        let mut m = axil.master();
        (m.queue_read(0), m.queue_read(4))
    };
    sim.step(); // the first read goes on the bus
    sim.reset(2);
    assert!(matches!(
        axil.wait(&mut sim, first),
        Err(AxilError::Lost { .. })
    ));
    let c = axil.wait(&mut sim, second).unwrap();
    assert_eq!(c.data, ChipInfoModel::new().read(4).0);
}

/// Random access sequences through the master, all queued at once, against the model.
struct ChipInfoProp;

#[derive(Clone, Debug)]
struct Ops {
    seed: u64,
    idle: u8,
    stall: u8,
    outstanding: usize,
    ops: Vec<(bool, u64, u64, u64)>,
}

fn ops_strategy(addr: BoxedStrategy<u64>, data_bits: u32) -> BoxedStrategy<Ops> {
    let data_max = if data_bits == 64 {
        u64::MAX
    } else {
        (1 << data_bits) - 1
    };
    let strb_max = (1u64 << (data_bits / 8)) - 1;
    (
        any::<u64>(),
        0u8..80,
        0u8..80,
        1usize..5,
        prop::collection::vec((any::<bool>(), addr, 0..=data_max, 0..=strb_max), 1..60),
    )
        .prop_map(|(seed, idle, stall, outstanding, ops)| Ops {
            seed,
            idle,
            stall,
            outstanding,
            ops,
        })
        .boxed()
}

/// Queues every op, runs until all are done, and returns the completions in order.
fn run_ops<C: testbench::drivers::Clocked>(
    clk: &mut C,
    axil: &Axil,
    input: &Ops,
) -> Result<Vec<axil::Completion>, String> {
    let tickets: Vec<u64> = {
        let mut m = axil.master();
        input
            .ops
            .iter()
            .map(|&(w, a, d, s)| {
                if w {
                    m.queue_write(a, d, s)
                } else {
                    m.queue_read(a)
                }
            })
            .collect()
    };
    testbench::drivers::wait_until(clk, "every access", 400 * tickets.len() as u64, || {
        axil.master().pending() == 0
    })
    .map_err(|h| h.to_string())?;
    let m = axil.master();
    if !m.violations.is_empty() {
        return Err(format!("violations: {:?}", m.violations));
    }
    let order: Vec<u64> = m.log.iter().map(|c| c.ticket).collect();
    if order != tickets {
        return Err(format!("completion order {order:?}"));
    }
    Ok(m.log.clone())
}

impl Property for ChipInfoProp {
    type Input = Ops;
    const NAME: &'static str = "axil_chip_info";

    fn strategy() -> BoxedStrategy<Ops> {
        let addr = prop_oneof![
            3 => (0u64..8).prop_map(|i| i * 4),
            1 => 0u64..0x1000,
        ]
        .boxed();
        ops_strategy(addr, 32)
    }

    fn run(input: &Ops, waves: Option<&Path>) -> Result<(), String> {
        let mut sim = match waves {
            Some(w) => Sim::<ChipInfo>::with_waves(w),
            None => Sim::<ChipInfo>::new(),
        };
        let axil = Axil::attach(
            &mut sim,
            "s_axil",
            AxilConfig {
                seed: input.seed,
                idle_percent: input.idle,
                stall_percent: input.stall,
                max_outstanding: input.outstanding,
                ..AxilConfig::default()
            },
        );
        sim.reset(2);
        let log = run_ops(&mut sim, &axil, input)?;
        let mut model = ChipInfoModel::new();
        for (c, &(w, a, d, s)) in log.iter().zip(&input.ops) {
            let want = if w {
                (d, model.write(a, d, s))
            } else {
                model.read(a)
            };
            if (c.data, c.resp) != want {
                return Err(format!("{c:x?}: the model says {want:x?}"));
            }
        }
        Ok(())
    }
}

#[test]
fn random_sequences_match_the_register_model() {
    check::<ChipInfoProp>(24);
}

// ---------------------------------------------------------------------------------------------
// A Rust AXI4-Lite slave: 16 registers, SLVERR above them; `awready` and `wready` at random and
// independently, write data accepted before its address, random response latency.

#[derive(Clone, Copy, Default)]
struct Faults {
    /// Drops `rvalid` once while `rready` is low.
    drop_rvalid: bool,
    /// Sends a write response nobody asked for.
    early_b: bool,
    /// Never answers reads.
    mute: bool,
}

struct LiteSlave {
    s: Vec<Signal>,
    rng: Rng,
    regs: [u64; 16],
    bytes: u64,
    aw: VecDeque<u64>,
    w: VecDeque<(u64, u64)>,
    b: VecDeque<(u64, Resp)>,
    r: VecDeque<(u64, u64, Resp)>,
    b_cur: Option<Resp>,
    r_cur: Option<(u64, Resp)>,
    faults: Faults,
    dropped: bool,
    /// Cycles in which exactly one of awready and wready was high while both valids were.
    split: u64,
}

const NAMES: [&str; 17] = [
    "awvalid", "awready", "awaddr", "wvalid", "wready", "wdata", "wstrb", "bvalid", "bready",
    "bresp", "arvalid", "arready", "araddr", "rvalid", "rready", "rdata", "rresp",
];
#[allow(clippy::upper_case_acronyms)]
#[derive(Clone, Copy)]
enum N {
    AwValid,
    AwReady,
    AwAddr,
    WValid,
    WReady,
    WData,
    WStrb,
    BValid,
    BReady,
    BResp,
    ArValid,
    ArReady,
    ArAddr,
    RValid,
    RReady,
    RData,
    RResp,
}

impl LiteSlave {
    fn new(wires: &Wires, prefix: &str, seed: u64, faults: Faults) -> Self {
        let s: Vec<Signal> = NAMES
            .iter()
            .map(|n| wires.port(&format!("{prefix}_{n}")))
            .collect();
        let bytes = s[N::WData as usize].width() as u64 / 8;
        LiteSlave {
            s,
            rng: Rng::new(seed),
            regs: [0; 16],
            bytes,
            aw: VecDeque::new(),
            w: VecDeque::new(),
            b: VecDeque::new(),
            r: VecDeque::new(),
            b_cur: None,
            r_cur: None,
            faults,
            dropped: false,
            split: 0,
        }
    }
    fn get(&self, n: N) -> u64 {
        self.s[n as usize].get()
    }
    fn set(&self, n: N, v: u64) {
        self.s[n as usize].set(v)
    }
}

impl Component for LiteSlave {
    fn sample(&mut self, cycle: u64) {
        let (awv, awr) = (self.get(N::AwValid) == 1, self.get(N::AwReady) == 1);
        let (wv, wr) = (self.get(N::WValid) == 1, self.get(N::WReady) == 1);
        if awv && wv && awr != wr {
            self.split += 1;
        }
        if awv && awr {
            self.aw.push_back(self.get(N::AwAddr));
        }
        if wv && wr {
            self.w.push_back((self.get(N::WData), self.get(N::WStrb)));
        }
        while !self.aw.is_empty() && !self.w.is_empty() {
            let a = self.aw.pop_front().unwrap();
            let (d, strb) = self.w.pop_front().unwrap();
            let i = (a / self.bytes) as usize;
            let resp = if i < 16 {
                for lane in 0..self.bytes {
                    if strb >> lane & 1 == 1 {
                        let m = 0xff << (8 * lane);
                        self.regs[i] = (self.regs[i] & !m) | (d & m);
                    }
                }
                Resp::Okay
            } else {
                Resp::SlvErr
            };
            self.b.push_back((cycle + 1 + self.rng.below(6), resp));
        }
        if self.get(N::ArValid) == 1 && self.get(N::ArReady) == 1 && !self.faults.mute {
            let i = (self.get(N::ArAddr) / self.bytes) as usize;
            let (d, resp) = match self.regs.get(i) {
                Some(v) => (*v, Resp::Okay),
                None => (0xdead, Resp::DecErr),
            };
            self.r.push_back((cycle + 1 + self.rng.below(6), d, resp));
        }
        if self.b_cur.is_some() && self.get(N::BReady) == 1 {
            self.b_cur = None;
        }
        if self.r_cur.is_some() && self.get(N::RReady) == 1 {
            self.r_cur = None;
        }
    }

    fn drive(&mut self, cycle: u64) {
        for n in [N::AwReady, N::WReady, N::ArReady] {
            let r = self.rng.chance(50) as u64;
            self.set(n, r);
        }
        if self.faults.early_b && cycle == 5 {
            self.b_cur = Some(Resp::Okay);
        }
        if self.b_cur.is_none() && self.b.front().is_some_and(|b| b.0 <= cycle) {
            self.b_cur = Some(self.b.pop_front().unwrap().1);
        }
        match self.b_cur {
            Some(r) => {
                self.set(N::BResp, r.bits());
                self.set(N::BValid, 1);
            }
            None => self.set(N::BValid, 0),
        }
        if self.r_cur.is_none() && self.r.front().is_some_and(|r| r.0 <= cycle) {
            let (_, d, resp) = self.r.pop_front().unwrap();
            self.r_cur = Some((d, resp));
        }
        match self.r_cur {
            Some((d, r)) => {
                let drop = self.faults.drop_rvalid && !self.dropped && self.get(N::RValid) == 1;
                self.dropped |= drop;
                self.set(N::RData, d);
                self.set(N::RResp, r.bits());
                self.set(N::RValid, !drop as u64);
            }
            None => self.set(N::RValid, 0),
        }
    }
}

fn lite_bench(
    data_bits: u32,
    cfg: AxilConfig,
    faults: Faults,
) -> (Bench, Axil, std::rc::Rc<std::cell::RefCell<LiteSlave>>) {
    let wires = Wires::new();
    axil::declare(&wires, "s_axil", 16, data_bits);
    let mut bench = Bench::new();
    let axil = Axil::from(bench.add(AxilMaster::new(&wires, "s_axil", cfg)));
    let slave = bench.add(LiteSlave::new(&wires, "s_axil", 5, faults));
    bench.reset(1);
    (bench, axil, slave)
}

/// Random sequences against the Rust slave, 32- and 64-bit buses.
struct SplitReadyProp;

impl Property for SplitReadyProp {
    type Input = (u32, Ops);
    const NAME: &'static str = "axil_split_ready";

    fn strategy() -> BoxedStrategy<(u32, Ops)> {
        prop_oneof![Just(32u32), Just(64u32)]
            .prop_flat_map(|bits| {
                let addr = (0u64..20).prop_map(move |i| i * (bits as u64 / 8)).boxed();
                (Just(bits), ops_strategy(addr, bits))
            })
            .boxed()
    }

    fn run((bits, input): &(u32, Ops), _waves: Option<&Path>) -> Result<(), String> {
        let cfg = AxilConfig {
            seed: input.seed,
            idle_percent: input.idle,
            stall_percent: input.stall,
            max_outstanding: input.outstanding,
            ..AxilConfig::default()
        };
        let (mut bench, axil, _slave) = lite_bench(*bits, cfg, Faults::default());
        let log = run_ops(&mut bench, &axil, input)?;
        let bytes = *bits as u64 / 8;
        let mut regs = [0u64; 16];
        for (c, &(w, a, d, s)) in log.iter().zip(&input.ops) {
            let i = (a / bytes) as usize;
            let want = match (w, i < 16) {
                (false, true) => (regs[i], Resp::Okay),
                (false, false) => (0xdead, Resp::DecErr),
                (true, false) => (d, Resp::SlvErr),
                (true, true) => {
                    for lane in 0..bytes {
                        if s >> lane & 1 == 1 {
                            let m = 0xff << (8 * lane);
                            regs[i] = (regs[i] & !m) | (d & m);
                        }
                    }
                    (d, Resp::Okay)
                }
            };
            if (c.data, c.resp) != want {
                return Err(format!("{c:x?}: the model says {want:x?}"));
            }
        }
        Ok(())
    }
}

#[test]
fn random_sequences_against_a_slave_with_split_aw_w_ready() {
    check::<SplitReadyProp>(24);
}

#[test]
fn awready_and_wready_in_different_cycles() -> Result<(), AxilError> {
    let (mut bench, axil, slave) = lite_bench(
        32,
        AxilConfig {
            idle_percent: 20,
            ..AxilConfig::default()
        },
        Faults::default(),
    );
    for i in 0..100u64 {
        axil.write(&mut bench, (i % 16) * 4, i * 0x0101_0101)?;
        assert_eq!(axil.read(&mut bench, (i % 16) * 4)?, i * 0x0101_0101);
    }
    assert!(
        slave.borrow().split > 20,
        "the slave split AW and W only {} times",
        slave.borrow().split
    );
    // A 64-bit bus through the CsrBus shape: the upper register sits in the upper lanes.
    let (mut bench, axil, slave) = lite_bench(64, AxilConfig::default(), Faults::default());
    let mut bus = axil.mmio(&mut bench);
    bus.write32(0x8, 0x1111_1111);
    bus.write32(0xc, 0x2222_2222);
    assert_eq!(bus.read32(0xc), 0x2222_2222);
    assert_eq!(bus.read32(0x8), 0x1111_1111);
    assert_eq!(slave.borrow().regs[1], 0x2222_2222_1111_1111);
    Ok(())
}

#[test]
fn a_silent_slave_is_a_hang_not_a_stuck_test() {
    let (mut bench, axil, _) = lite_bench(
        32,
        AxilConfig {
            timeout: 200,
            ..AxilConfig::default()
        },
        Faults {
            mute: true,
            ..Faults::default()
        },
    );
    let start = bench.cycle();
    match axil.read(&mut bench, 0) {
        Err(AxilError::Hang(h)) => assert_eq!(h.cycles, 200),
        r => panic!("{r:?}"),
    }
    assert_eq!(bench.cycle() - start, 200);
}

#[test]
fn slave_protocol_breaches_are_recorded() {
    let (mut bench, axil, _) = lite_bench(
        32,
        AxilConfig {
            stall_percent: 80,
            ..AxilConfig::default()
        },
        Faults {
            drop_rvalid: true,
            ..Faults::default()
        },
    );
    for _ in 0..20 {
        axil.read(&mut bench, 0).unwrap();
    }
    let v = axil.master().violations.clone();
    assert!(v.iter().any(|v| v.contains("R: valid dropped")), "{v:?}");

    let (mut bench, axil, _) = lite_bench(
        32,
        AxilConfig::default(),
        Faults {
            early_b: true,
            ..Faults::default()
        },
    );
    bench.run(20);
    let v = axil.master().violations.clone();
    assert!(
        v.iter().any(|v| v.contains("B: a write response before")),
        "{v:?}"
    );
}
