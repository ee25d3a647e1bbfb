//! Bring-up boards: pin tables (with where each pin comes from), the board cores built with the
//! builder, the board tops, and the LPF constraints, all generated from one description so the
//! top's ports and the constraint file cannot drift apart.
//!
//! One file on purpose (about 1,350 lines): the two boards' pin tables and the core, top and LPF
//! built from them are read together (a pin's source, its port and its constraint).
//!
//! What lives here:
//!
//! - `mod.rs`: the board descriptions (pins and their sources), the core, the top and the LPF
//! - `board_csr.rs`: `bringup_csr`, the board's own registers
//! - `bringup.rs`: the UART bridge's address map and the reset generator
//! - `host_mem.rs`: host memory in block RAM behind the chip's `m_axi`
//! - `pll.rs`: EHXPLLL divider settings
//!
//! Each board gets, in `fpga/<board>/`:
//!
//! - `<board>_core.sv` and the modules below it (builder-made): the chip top of the board's
//!   bring-up configuration (`configs/bringup_<board>.toml`), its Ethernet frame port on the
//!   RGMII MAC (`eth_mac_rgmii`) at the PHY's pins, the MDIO master, its host memory in block
//!   RAM ([`host_mem`]), and the UART bridge onto BAR0, the firmware CSRs, the board's own
//!   registers ([`board_csr`]: admin streams, interrupts, MAC counters, MDIO) and the host
//!   memory ([`bringup`]); status LEDs. Three clock domains: the core, `tx` (125 MHz, RGMII
//!   transmit) and `rx` (the PHY's receive clock);
//! - `reset_gen_c<bits>.sv` (builder-made);
//! - `<board>_top.sv`: the PLL (`EHXPLLL`, a vendor primitive with parameters: the core clock on
//!   `CLKOP`, 125 MHz for RGMII on `CLKOS`), the reset generator, a reset synchronizer per
//!   Ethernet domain, the MDIO pin's `BB` and the core: built with the builder like everything
//!   else;
//! - `models/EHXPLLL.sv`: the PLL's behavioural model, for Verilator only (synthesis uses
//!   Yosys' ECP5 cell; the file list `<board>.f` leaves it out).
//!
//! and `constraints/<board>.lpf`.

pub mod board_csr;
pub mod bringup;
pub mod host_mem;
pub mod pll;

use crate::blocks::ecp5;
use crate::blocks::reset_sync::reset_sync;
use crate::chip::{MARKER, VERSION};
use crate::config::Config;
use crate::eth::{mac::eth_mac_rgmii, mdio::mdio_master, MacParams};
use board_csr::{BoardCsrParams, MAC_COUNTERS};
use bringup::{add_bringup, reset_gen, sigma_delta, BringupParams, Target};
use hdl_builder::prelude::*;
use hdl_builder::{Design, EmitOptions, Errors, OutFile, PortInfo};
use std::fmt::Write;
use std::rc::Rc;

/// A public description a pin was taken from.
#[derive(Clone, Copy, Debug)]
pub struct Source {
    /// Short tag used in the LPF comments (`[A]`).
    pub tag: &'static str,
    /// `owner/name` of the public repository.
    pub repo: &'static str,
    /// Path of the file in it.
    pub path: &'static str,
    /// The commit read.
    pub commit: &'static str,
}

/// Which way a board port points, seen from the FPGA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Input.
    In,
    /// Output.
    Out,
    /// Bidirectional; read only until a driver for it exists.
    InOut,
}

/// What a port is for in the top.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The oscillator feeding the PLL.
    Clock,
    /// A button, low while pressed, that resets the core.
    ResetButton,
    /// Passed to the board core (a core port of the same name).
    Core,
    /// The PHY's RGMII receive clock: clocks the core's `rx` domain.
    EthRxClock,
    /// RGMII receive data and control: core ports of the same name, in the receive clock's
    /// domain.
    EthRx,
    /// The PHY's MDIO pin, through a `BB`.
    Mdio,
    /// Status LEDs (the core's `status_o`, board by board).
    Leds,
    /// Driven low (outputs) or unused (inputs): a second PHY, LED cathodes.
    Idle,
    /// The ButterStick's SYZYGY VCCIO set points (PDM).
    VccioPdm,
    /// The ButterStick's SYZYGY VCCIO regulators' enable (held high).
    VccioEnable,
}

/// A port of a board top and its pins.
#[derive(Clone, Debug)]
pub struct BoardPort {
    /// Port name (`led_o`); bit `i` of a bus is `name[i]` in the LPF.
    pub name: &'static str,
    /// Direction.
    pub dir: Dir,
    /// Role in the top.
    pub role: Role,
    /// Package balls, bit 0 first.
    pub sites: &'static [&'static str],
    /// `IO_TYPE`.
    pub io_type: &'static str,
    /// Further `IOBUF` attributes (`PULLMODE=UP`), space separated.
    pub attrs: &'static str,
    /// What it is, for the port comment.
    pub what: &'static str,
    /// Where the pins come from: source tags and the resource names in them.
    pub cite: &'static str,
}

impl BoardPort {
    /// Width in bits.
    pub fn width(&self) -> u32 {
        self.sites.len() as u32
    }
}

/// What an ECP5 part holds, from Lattice's ECP5 and ECP5-5G family data sheet
/// (FPGA-DS-02012, table 1.1): LUT4s (two per slice, each with its flip-flop), 18-kbit block
/// RAMs and 18x18 multipliers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacity {
    pub lut4: u64,
    pub ff: u64,
    pub dp16kd: u64,
    pub mult18x18d: u64,
}

/// LFE5U-25F and LFE5UM5G-25F: 12,144 slices.
pub const ECP5_25K: Capacity = Capacity {
    lut4: 24_288,
    ff: 24_288,
    dp16kd: 56,
    mult18x18d: 28,
};

/// LFE5U-85F and LFE5UM5G-85F: 41,820 slices.
pub const ECP5_85K: Capacity = Capacity {
    lut4: 83_640,
    ff: 83_640,
    dp16kd: 208,
    mult18x18d: 156,
};

/// A bring-up board.
#[derive(Clone, Debug)]
pub struct Board {
    /// Short name: folder, module and file names.
    pub name: &'static str,
    /// Full name.
    pub title: &'static str,
    /// FPGA part number.
    pub part: &'static str,
    /// nextpnr-ecp5 device options.
    pub device_args: &'static [&'static str],
    /// What the part holds (a module over it is not placed).
    pub capacity: Capacity,
    /// Oscillator frequency in Hz.
    pub osc_hz: u64,
    /// Core clock in Hz (the PLL output, the timing target).
    pub core_hz: u64,
    /// RGMII transmit clock in Hz (the PLL's second output).
    pub eth_hz: u64,
    /// UART baud rate of the bridge.
    pub baud: u64,
    /// The host memory holds 2^mem_bits bytes of block RAM.
    pub mem_bits: u32,
    /// The bring-up configuration (`configs/bringup_<board>.toml`), its text.
    pub config_toml: &'static str,
    /// Ports of the top.
    pub ports: Vec<BoardPort>,
    /// The public descriptions cited.
    pub sources: &'static [Source],
    /// Notes for the LPF header (how to connect the UART, cautions).
    pub notes: &'static [&'static str],
}

/// The boards, primary first.
pub fn all() -> Vec<Board> {
    vec![butterstick(), colorlight_i5()]
}

/// The board called `name`.
pub fn by_name(name: &str) -> Option<Board> {
    all().into_iter().find(|b| b.name == name)
}

/// The board's code in `bringup_csr.info.board`: its place in [`all`].
pub fn code(b: &Board) -> u32 {
    all().iter().position(|x| x.name == b.name).unwrap_or(0) as u32
}

/// The board's bring-up configuration (`configs/bringup_<board>.toml`, compiled in so the
/// board files follow it).
pub fn config(b: &Board) -> Result<Config, Errors> {
    let path = format!("configs/bringup_{}.toml", b.name);
    Config::parse(std::path::Path::new(&path), b.config_toml)
        .map_err(|e| Errors::invalid(&core_name(b), format!("{path}: {e}")))
}

const LITEX_BUTTERSTICK: Source = Source {
    tag: "A",
    repo: "litex-hub/litex-boards",
    path: "litex_boards/platforms/gsd_butterstick.py",
    commit: "06e8829eb4231583cb926ee4054a57b116a5f9df",
};
const AMARANTH_BUTTERSTICK: Source = Source {
    tag: "B",
    repo: "amaranth-lang/amaranth-boards",
    path: "amaranth_boards/butterstick.py",
    commit: "92c156eb19cfe04ac909a46f9c5bcfefc90d7f9d",
};
const LUNA_BUTTERSTICK: Source = Source {
    tag: "C",
    repo: "miek/luna",
    path: "luna/gateware/platform/butterstick.py",
    commit: "98b10788176b93063e9aa6af882cc54d512b29f8",
};
const LITEX_COLORLIGHT_I5: Source = Source {
    tag: "A",
    repo: "litex-hub/litex-boards",
    path: "litex_boards/platforms/colorlight_i5.py",
    commit: "219067ed3a73cbe153e5d1a9831996fbae271276",
};

/// ButterStick VCCIO regulator set points: duty of the PDM pin of each SYZYGY VCCIO rail, in
/// 1/1024: 3.3 V on ports 0 and 1 (duty 0.10), 1.8 V on port 2 and the USB PHY (duty 0.70),
/// as in [C]; the rail is about 3.546 V - 2.601 V * duty.
pub const BUTTERSTICK_VCCIO_LEVELS: [u64; 3] = [102, 102, 717];

fn port(
    name: &'static str,
    dir: Dir,
    sites: &'static [&'static str],
    io_type: &'static str,
    attrs: &'static str,
    what: &'static str,
    cite: &'static str,
) -> BoardPort {
    BoardPort {
        name,
        dir,
        role: Role::Core,
        sites,
        io_type,
        attrs,
        what,
        cite,
    }
}

fn role(mut p: BoardPort, role: Role) -> BoardPort {
    p.role = role;
    p
}

/// GSG ButterStick r1.0.
pub fn butterstick() -> Board {
    use Dir::*;
    const L: &str = "LVCMOS33";
    const FAST: &str = "SLEWRATE=FAST";
    let mut clk = port(
        "clk30_i",
        In,
        &["B12"],
        L,
        "",
        "30 MHz oscillator",
        "[A] clk30, [B] clk30",
    );
    clk.role = Role::Clock;
    let mut btn = port(
        "rst_btn_ni",
        In,
        &["U16"],
        "SSTL135_I",
        "",
        "user button 0, low while pressed: resets the core",
        "[A] user_btn 0 (used as rst_n by its target), [B] button 0 (inverted)",
    );
    btn.role = Role::ResetButton;
    Board {
        name: "butterstick",
        title: "GSG ButterStick r1.0",
        part: "LFE5UM5G-85F-8BG381C",
        device_args: &["--um5g-85k", "--package", "CABGA381", "--speed", "8"],
        capacity: ECP5_85K,
        osc_hz: 30_000_000,
        core_hz: 125_000_000,
        eth_hz: 125_000_000,
        baud: 115_200,
        mem_bits: 17,
        config_toml: include_str!("../../../configs/bringup_butterstick.toml"),
        ports: vec![
            clk,
            btn,
            role(
port(
                "led_o",
                Out,
                &["C13", "D12", "U2", "T3", "D13", "E13", "C16"],
                L,
                "",
                "LED anodes: 0 heartbeat, 1 core out of reset, 2 UART byte seen, 3 bus error, 4 Ethernet frame",
                "[A] user_led 0-6, [B] LED anodes",
            ),
 Role::Leds),
            role(
port(
                "led_rgb_no",
                Out,
                &["T1", "R1", "U1"],
                L,
                "",
                "LED cathodes, one per colour, all driven low: the LEDs light white",
                "[A] user_led_color, [B] rgb_led 0 cathodes",
            ),
 Role::Idle),
            port(
                "uart_tx_o",
                Out,
                &["G2"],
                L,
                "",
                "UART to the host (SYZYGY port 0, S0)",
                "[A] SYZYGY0 S0, [B] syzygy 0 S0",
            ),
            port(
                "uart_rx_i",
                In,
                &["J3"],
                L,
                "PULLMODE=UP",
                "UART from the host (SYZYGY port 0, S1)",
                "[A] SYZYGY0 S1, [B] syzygy 0 S1",
            ),
            role(
port(
                "vccio_pdm_o",
                Out,
                &["V1", "E11", "T2"],
                L,
                "",
                "SYZYGY VCCIO regulator set points (PDM): 3.3 V, 3.3 V, 1.8 V",
                "[A] vccio_ctrl pdm, [B] vccio_ctrl pdm, levels from [C] VccioCtrl",
            ),
 Role::VccioPdm),
            role(
port(
                "vccio_en_o",
                Out,
                &["E12"],
                L,
                "",
                "SYZYGY VCCIO regulators enable",
                "[A] vccio_ctrl en, [B] vccio_ctrl en",
            ),
 Role::VccioEnable),
            port(
                "eth_rst_no",
                Out,
                &["B20"],
                L,
                FAST,
                "Ethernet PHY reset (released unless bringup_csr.ctrl.phy_reset)",
                "[A] eth rst_n, [B] eth_rgmii rst",
            ),
            port(
                "eth_mdc_o",
                Out,
                &["A19"],
                L,
                FAST,
                "PHY management clock (MDIO master)",
                "[A] eth mdc, [B] eth_rgmii mdc",
            ),
            role(
port(
                "eth_mdio_io",
                InOut,
                &["D16"],
                L,
                FAST,
                "PHY management data (MDIO master, through a BB)",
                "[A] eth mdio, [B] eth_rgmii mdio",
            ),
 Role::Mdio),
            port(
                "eth_tx_clk_o",
                Out,
                &["E15"],
                L,
                FAST,
                "RGMII transmit clock (the MAC, forwarded 125 MHz)",
                "[A] eth_clocks tx, [B] eth_rgmii tx_clk",
            ),
            port(
                "eth_tx_ctl_o",
                Out,
                &["D15"],
                L,
                FAST,
                "RGMII transmit control (the MAC)",
                "[A] eth tx_ctl, [B] eth_rgmii tx_ctl",
            ),
            port(
                "eth_txd_o",
                Out,
                &["C15", "B16", "A18", "B19"],
                L,
                FAST,
                "RGMII transmit data (the MAC)",
                "[A] eth tx_data, [B] eth_rgmii tx_data",
            ),
            role(
port(
                "eth_rx_clk_i",
                In,
                &["D11"],
                L,
                "",
                "RGMII receive clock (clocks the MAC's receive side)",
                "[A] eth_clocks rx, [B] eth_rgmii rx_clk",
            ),
 Role::EthRxClock),
            role(
port(
                "eth_rx_ctl_i",
                In,
                &["B18"],
                L,
                "",
                "RGMII receive control (the MAC)",
                "[A] eth rx_ctl, [B] eth_rgmii rx_ctl",
            ),
 Role::EthRx),
            role(
port(
                "eth_rxd_i",
                In,
                &["A16", "C17", "B17", "A17"],
                L,
                "",
                "RGMII receive data (the MAC)",
                "[A] eth rx_data, [B] eth_rgmii rx_data",
            ),
 Role::EthRx),
        ],
        sources: &[LITEX_BUTTERSTICK, AMARANTH_BUTTERSTICK, LUNA_BUTTERSTICK],
        notes: &[
            "The ButterStick has no UART of its own: the bridge uses SYZYGY port 0 pins S0 (FPGA",
            "transmits) and S1 (FPGA receives), 3.3 V, for a USB-serial adapter on a SYZYGY",
            "breakout. The top sets the SYZYGY VCCIO rails with the PDM pins (3.3 V on ports 0",
            "and 1, 1.8 V on port 2) as [C] does; check the rail with a meter before connecting.",
        ],
    }
}

/// Colorlight i5 v7.0 (with its extension board for the button and the UART).
pub fn colorlight_i5() -> Board {
    use Dir::*;
    const L: &str = "LVCMOS33";
    let mut clk = port(
        "clk25_i",
        In,
        &["P3"],
        L,
        "",
        "25 MHz oscillator",
        "[A] clk25",
    );
    clk.role = Role::Clock;
    let mut btn = port(
        "rst_btn_ni",
        In,
        &["K18"],
        L,
        "PULLMODE=UP",
        "reset button on the extension board, low while pressed: resets the core",
        "[A] cpu_reset_n",
    );
    btn.role = Role::ResetButton;
    let eth = |name, dir, sites, what, cite| port(name, dir, sites, L, "", what, cite);
    Board {
        name: "colorlight_i5",
        title: "Colorlight i5 v7.0",
        part: "LFE5U-25F-6BG381C",
        device_args: &["--25k", "--package", "CABGA381", "--speed", "6"],
        capacity: ECP5_25K,
        osc_hz: 25_000_000,
        core_hz: 100_000_000,
        eth_hz: 125_000_000,
        baud: 115_200,
        mem_bits: 15,
        config_toml: include_str!("../../../configs/bringup_colorlight_i5.toml"),
        ports: vec![
            clk,
            btn,
            role(
                port(
                    "led_no",
                    Out,
                    &["U16"],
                    L,
                    "",
                    "user LED, low lights it: heartbeat, inverted while UART bytes arrive",
                    "[A] user_led_n",
                ),
                Role::Leds,
            ),
            port(
                "uart_tx_o",
                Out,
                &["J17"],
                L,
                "",
                "UART to the host",
                "[A] serial tx",
            ),
            port(
                "uart_rx_i",
                In,
                &["H18"],
                L,
                "PULLMODE=UP",
                "UART from the host",
                "[A] serial rx",
            ),
            eth(
                "eth_rst_no",
                Out,
                &["P4"],
                "reset of both PHYs (released unless bringup_csr.ctrl.phy_reset)",
                "[A] eth 0 and 1 rst_n",
            ),
            eth(
                "eth_mdc_o",
                Out,
                &["N5"],
                "PHY management clock, both PHYs (bring-up MAC)",
                "[A] eth 0 and 1 mdc",
            ),
            role(
                eth(
                    "eth_mdio_io",
                    InOut,
                    &["P5"],
                    "PHY management data, both PHYs (MDIO master, through a BB)",
                    "[A] eth 0 and 1 mdio",
                ),
                Role::Mdio,
            ),
            eth(
                "eth_tx_clk_o",
                Out,
                &["G1"],
                "PHY 0 RGMII transmit clock (bring-up MAC)",
                "[A] eth_clocks 0 tx",
            ),
            eth(
                "eth_tx_ctl_o",
                Out,
                &["K1"],
                "PHY 0 RGMII transmit control (bring-up MAC)",
                "[A] eth 0 tx_ctl",
            ),
            eth(
                "eth_txd_o",
                Out,
                &["G2", "H1", "J1", "J3"],
                "PHY 0 RGMII transmit data (bring-up MAC)",
                "[A] eth 0 tx_data",
            ),
            role(
                eth(
                    "eth_rx_clk_i",
                    In,
                    &["H2"],
                    "PHY 0 RGMII receive clock (bring-up MAC)",
                    "[A] eth_clocks 0 rx",
                ),
                Role::EthRxClock,
            ),
            role(
                eth(
                    "eth_rx_ctl_i",
                    In,
                    &["P2"],
                    "PHY 0 RGMII receive control (bring-up MAC)",
                    "[A] eth 0 rx_ctl",
                ),
                Role::EthRx,
            ),
            role(
                eth(
                    "eth_rxd_i",
                    In,
                    &["K2", "L1", "N1", "P1"],
                    "PHY 0 RGMII receive data (bring-up MAC)",
                    "[A] eth 0 rx_data",
                ),
                Role::EthRx,
            ),
            role(
                eth(
                    "eth1_tx_clk_o",
                    Out,
                    &["U19"],
                    "PHY 1 RGMII transmit clock (idle: one port is brought up)",
                    "[A] eth_clocks 1 tx",
                ),
                Role::Idle,
            ),
            role(
                eth(
                    "eth1_tx_ctl_o",
                    Out,
                    &["P19"],
                    "PHY 1 RGMII transmit control (idle: one port is brought up)",
                    "[A] eth 1 tx_ctl",
                ),
                Role::Idle,
            ),
            role(
                eth(
                    "eth1_txd_o",
                    Out,
                    &["U20", "T19", "T20", "R20"],
                    "PHY 1 RGMII transmit data (idle: one port is brought up)",
                    "[A] eth 1 tx_data",
                ),
                Role::Idle,
            ),
            role(
                eth(
                    "eth1_rx_clk_i",
                    In,
                    &["L19"],
                    "PHY 1 RGMII receive clock (idle: one port is brought up)",
                    "[A] eth_clocks 1 rx",
                ),
                Role::Idle,
            ),
            role(
                eth(
                    "eth1_rx_ctl_i",
                    In,
                    &["M20"],
                    "PHY 1 RGMII receive control (idle: one port is brought up)",
                    "[A] eth 1 rx_ctl",
                ),
                Role::Idle,
            ),
            role(
                role(
                    role(
                        eth(
                            "eth1_rxd_i",
                            In,
                            &["P20", "N19", "N20", "M19"],
                            "PHY 1 RGMII receive data (idle: one port is brought up)",
                            "[A] eth 1 rx_data",
                        ),
                        Role::EthRx,
                    ),
                    Role::EthRx,
                ),
                Role::Idle,
            ),
        ],
        sources: &[LITEX_COLORLIGHT_I5],
        notes: &[
            "The button and the UART are on the extension board (its CMSIS-DAP probe carries the",
            "UART to the PC). [A] names its PHYs 0 and 1 in the opposite order to the connector",
            "labels on the board, to match their PHYA[0] straps.",
        ],
    }
}

/// The core clock frequency in whole MHz, as the LPF and reports spell it.
pub fn mhz(hz: u64) -> String {
    if hz.is_multiple_of(1_000_000) {
        format!("{}", hz / 1_000_000)
    } else {
        format!("{:.3}", hz as f64 / 1e6)
    }
}

/// The board core's name.
pub fn core_name(b: &Board) -> String {
    format!("{}_core", b.name)
}

/// The board top's name.
pub fn top_name(b: &Board) -> String {
    format!("{}_top", b.name)
}

/// Reset counter bits of the reset generator (released 2^16 cycles after the request ends).
pub const RESET_BITS: u32 = 16;

/// The bring-up parameters of a board.
pub fn params(b: &Board) -> BringupParams {
    BringupParams {
        clock_hz: b.core_hz,
        baud: b.baud,
    }
}

/// The MAC of the bring-up cores: the default buffers (a 1518-byte frame each way).
pub fn mac_params() -> MacParams {
    MacParams::default()
}

/// Width of the core's `status_o` (LED sources): 0 heartbeat, 1 core out of reset, 2 UART
/// bytes arriving, 3 a bus error was answered to the bridge, 4 an Ethernet frame went or came.
pub const STATUS_BITS: u32 = 5;

/// The chip top of `cfg`, as the bring-up core holds it.
fn chip_top(cfg: &Config) -> Result<Rc<Module>, Errors> {
    crate::chip::top::top(cfg, cfg.chip.reset.into())
}

/// The port of `module` called `name`.
fn port_of(module: &Module, name: &str) -> Option<PortInfo> {
    module.ports().into_iter().find(|p| p.name == name)
}

/// Builds the board core (see the module documentation): clock domains `core` (`clk_i`), `tx`
/// and `rx`; ports `uart_*`, the PHY's (`eth_*`, MDIO as `eth_mdio_o`/`_oe_o`/`_i`) and
/// `status_o`.
pub fn core(b: &Board, cfg: &Config) -> Result<Rc<Module>, Errors> {
    let reset: ResetStyle = cfg.chip.reset.into();
    let chip = chip_top(cfg)?;
    let mac = eth_mac_rgmii(&mac_params(), reset)?;
    let mdio = mdio_master(reset)?;
    let csr_map = board_csr::register_map(&BoardCsrParams {
        board: code(b),
        mem_bits: b.mem_bits,
        mdio_div: (b.core_hz / 5_000_000) as u32,
    })?;
    let csr = csr_map.module(reset)?;
    let axi_addr = port_of(&chip, "m_axi_araddr_o").map_or(64, |p| p.width);
    let axi_id = port_of(&chip, "m_axi_arid_o").map_or(1, |p| p.width);
    let mem = host_mem::host_mem(b.mem_bits, axi_addr, axi_id, reset)?;

    let mut m = ModuleBuilder::with_reset(&core_name(b), reset);
    m.doc(&format!(
        "Bring-up core of the {} ({}), {} MHz: the chip top ({}) of configs/bringup_{}.toml, its",
        b.title,
        b.part,
        mhz(b.core_hz),
        cfg.chip.name,
        b.name
    ));
    m.doc("Ethernet frame port on the RGMII MAC, the MDIO master, host memory in block RAM");
    m.doc(&format!(
        "({} KiB behind m_axi), and a UART bridge ({} baud) onto bringup_csr, the firmware CSRs,",
        (1u64 << b.mem_bits) / 1024,
        b.baud
    ));
    m.doc("BAR0 and the host memory. Map: hdl-gen/src/boards/bringup.rs.");
    m.clock();
    m.reset();
    let tx = m.domain("tx");
    let rx = m.domain("rx");
    m.domain_clock(tx);
    m.domain_reset(tx);
    m.domain_clock(rx);
    m.domain_reset(rx);

    let u_chip = m.instance("u_chip", &chip);
    let u_mem = m.instance("u_host_mem", &mem);
    let u_csr = m.instance("u_board_csr", &csr);
    let u_mac = m.instance("u_mac", &mac);
    let u_mdio = m.instance("u_mdio", &mdio);
    m.bind_domain(u_mac, "tx", tx);
    m.bind_domain(u_mac, "rx", rx);

    let fw_bits = port_of(&chip, "s_axil_awaddr_i").map_or(cfg.csr.addr_width, |p| p.width);
    let bar_bits = port_of(&chip, "s_bar_awaddr_i").map_or(12, |p| p.width);
    let targets = [
        Target {
            name: "board",
            inst: u_csr,
            prefix: "s_axil".into(),
            base: bringup::BOARD_CSR_BASE,
            bits: board_csr::ADDR_WIDTH,
        },
        Target {
            name: "firmware",
            inst: u_chip,
            prefix: "s_axil".into(),
            base: bringup::FIRMWARE_BASE,
            bits: fw_bits,
        },
        Target {
            name: "bar0",
            inst: u_chip,
            prefix: "s_bar".into(),
            base: bringup::BAR0_BASE,
            bits: bar_bits,
        },
        Target {
            name: "host_mem",
            inst: u_mem,
            prefix: "s_axil".into(),
            base: bringup::HOST_MEM_BASE,
            bits: b.mem_bits,
        },
    ];
    let status = add_bringup(&mut m, &params(b), &targets)?;

    // The chip's ports, by group: host memory, frames, admin streams, interrupts; the bridge
    // took BAR0 and the firmware CSRs. Any other port (the NVMe/TCP byte streams while the
    // chip has them) is tied off: inputs zero, outputs unused.
    m.group("the chip's other ports");
    let mut unused: Vec<Expr> = Vec::new();
    let mut cpl_ready = None;
    let mut irq = (None, None);
    let mut admin_valid = None;
    for cp in chip.ports() {
        let n = cp.name.as_str();
        if cp.is_clock || cp.is_reset || n.starts_with("s_bar_") || n.starts_with("s_axil_") {
            continue;
        }
        if let Some(rest) = n.strip_prefix("m_axi_") {
            let mem_port = format!("s_axi_{}", flip(rest));
            if cp.input {
                let v = m.bind_out(u_mem, &mem_port);
                m.bind(u_chip, n, v);
            } else {
                let v = m.bind_out(u_chip, n);
                m.bind(u_mem, &mem_port, v);
            }
        } else if let Some(rest) = n.strip_prefix("m_axis_") {
            if cp.input {
                let r = m.bind_out(u_mac, &format!("s_axis_{}", flip(rest)));
                m.bind(u_chip, n, r);
            } else {
                let v = m.bind_out(u_chip, n);
                m.bind(u_mac, &format!("s_axis_{}", flip(rest)), v);
            }
        } else if let Some(rest) = n.strip_prefix("s_axis_") {
            if cp.input {
                let v = m.bind_out(u_mac, &format!("m_axis_{}", flip(rest)));
                m.bind(u_chip, n, v);
            } else {
                let v = m.bind_out(u_chip, n);
                m.bind(u_mac, &format!("m_axis_{}", flip(rest)), v);
            }
        } else if n == "admin_cmd_valid_o" {
            let v = m.bind_out(u_chip, n);
            m.bind(u_csr, "admin_status_cmd_valid_i", v);
            admin_valid = Some(v);
        } else if n == "admin_cmd_ready_i" {
            let pop = m.bind_out(u_csr, "admin_pop_pop_o");
            let we = m.bind_out(u_csr, "admin_pop_pop_we_o");
            m.bind(u_chip, n, pop & we);
        } else if n == "admin_cmd_sqid_o" {
            let v = m.bind_out(u_chip, n);
            m.bind(u_csr, "admin_cmd_sqid_sqid_i", v);
        } else if n == "admin_cmd_sqe_o" {
            let v = m.bind_out(u_chip, n);
            for i in 0..16u32 {
                m.bind(
                    u_csr,
                    &format!("admin_sqe{i}_dw_i"),
                    v.slice(32 * i + 31, 32 * i),
                );
            }
        } else if let Some(field) = n
            .strip_prefix("admin_cpl_")
            .and_then(|f| f.strip_suffix("_i"))
            .filter(|f| *f != "valid")
        {
            let v = m.bind_out(u_csr, &format!("admin_cpl_{field}_{field}_o"));
            m.bind(u_chip, n, v);
        } else if n == "admin_cpl_valid_i" {
            cpl_ready = Some(());
        } else if n == "admin_cpl_ready_o" {
        } else if n == "irq_valid_o" {
            irq.0 = Some(m.bind_out(u_chip, n));
        } else if n == "irq_vector_o" {
            irq.1 = Some(m.bind_out(u_chip, n));
        } else if n == "irq_ready_i" {
            m.bind(u_chip, n, lit(1, 1));
        } else if cp.input {
            m.bind(u_chip, n, zeros(cp.width));
        } else {
            unused.push(m.bind_out(u_chip, n).ex());
        }
    }
    if admin_valid.is_none() || cpl_ready.is_none() {
        return Err(Errors::invalid(
            &core_name(b),
            "the chip top has no admin_cmd/admin_cpl streams: the bring-up core needs them",
        ));
    }
    // The completion register: pushed by the host tool, taken by the chip.
    let cpl_valid = m.reg("cpl_valid", 1, 0);
    let push = m.bind_out(u_csr, "admin_cpl_push_push_o");
    let push_we = m.bind_out(u_csr, "admin_cpl_push_push_we_o");
    let taken = m.bind_out(u_chip, "admin_cpl_ready_o");
    m.assign(cpl_valid.d, (push & push_we) | (cpl_valid.q & !taken));
    m.bind(u_chip, "admin_cpl_valid_i", cpl_valid.q);
    m.bind(u_csr, "admin_status_cpl_busy_i", cpl_valid.q);
    // Interrupts: always taken, counted, the last vector kept.
    let (Some(irq_valid), Some(irq_vector)) = irq else {
        return Err(Errors::invalid(
            &core_name(b),
            "the chip top has no irq stream: the bring-up core needs it",
        ));
    };
    let irq_count = m.reg("irq_count", 32, 0);
    let irq_last = m.reg("irq_last", 16, 0);
    m.assign(irq_count.d, irq_count.q + irq_valid.zext(32));
    m.assign(
        irq_last.d,
        mux(irq_valid, irq_vector.zext(16), irq_last.q.ex()),
    );
    m.bind(u_csr, "irq_count_count_i", irq_count.q);
    m.bind(u_csr, "irq_last_vector_i", irq_last.q);
    m.bind(
        u_csr,
        "id_value_i",
        lit(32, u128::from(board_csr::BRINGUP_ID)),
    );
    m.bind(u_csr, "info_board_i", lit(8, u128::from(code(b))));
    m.bind(u_csr, "info_mem_bits_i", lit(8, u128::from(b.mem_bits)));
    // The clock the core was built for (a simulated board lowers it): a host tool computes
    // timer ticks from it.
    m.bind(
        u_csr,
        "info_clock_khz_i",
        lit(32, u128::from(b.core_hz / 1000)),
    );
    let mut frame_counts = Vec::new();
    for c in MAC_COUNTERS {
        let v = m.bind_out(u_mac, &format!("{c}_o"));
        m.bind(u_csr, &format!("mac_{c}_count_i"), v);
        if c == "tx_frames" || c == "rx_frames" {
            frame_counts.push(v.bit(0));
        }
    }

    // MDIO: one command register, taken by the master when it is idle.
    let div = m.bind_out(u_csr, "mdio_div_div_o");
    m.bind(u_mdio, "div_i", div);
    let go = m.bind_out(u_csr, "mdio_cmd_write_we_o");
    let pending = m.reg("mdio_pending", 1, 0);
    let cmd_ready = m.bind_out(u_mdio, "cmd_ready_o");
    m.assign(pending.d, go | (pending.q & !cmd_ready));
    m.bind(u_mdio, "cmd_valid_i", pending.q);
    for (f, port) in [
        ("write", "cmd_write_i"),
        ("phy", "cmd_phy_i"),
        ("reg", "cmd_reg_i"),
        ("data", "cmd_data_i"),
    ] {
        let v = m.bind_out(u_csr, &format!("mdio_cmd_{f}_o"));
        m.bind(u_mdio, port, v);
    }
    for f in ["phy", "reg", "data"] {
        unused.push(m.bind_out(u_csr, &format!("mdio_cmd_{f}_we_o")).ex());
    }
    let done = m.bind_out(u_mdio, "done_o");
    unused.push(done.ex());
    let rdata = m.bind_out(u_mdio, "rdata_o");
    m.bind(u_csr, "mdio_status_busy_i", pending.q | !cmd_ready);
    m.bind(u_csr, "mdio_status_rdata_i", rdata);

    m.group("UART is declared by the bridge; PHY pins");
    let phy_rst = m.output("eth_rst_no", 1);
    m.comment(phy_rst, "PHY reset, active low");
    let phy_reset = m.bind_out(u_csr, "ctrl_phy_reset_o");
    m.assign(phy_rst, !phy_reset);
    let mdc = m.output("eth_mdc_o", 1);
    m.bind_out_to(u_mdio, "mdc_o", mdc);
    let mdio_o = m.output("eth_mdio_o", 1);
    m.bind_out_to(u_mdio, "mdio_o", mdio_o);
    let mdio_oe = m.output("eth_mdio_oe_o", 1);
    m.bind_out_to(u_mdio, "mdio_oe_o", mdio_oe);
    let mdio_i = m.input_async("eth_mdio_i", 1);
    m.bind(u_mdio, "mdio_i", mdio_i);
    for (core_port, mac_port) in [
        ("eth_tx_clk_o", "rgmii_txc_o"),
        ("eth_tx_ctl_o", "rgmii_tx_ctl_o"),
        ("eth_txd_o", "rgmii_txd_o"),
    ] {
        let w = port_of(&mac, mac_port).map_or(1, |p| p.width);
        let o = m.output(core_port, w);
        m.bind_out_to(u_mac, mac_port, o);
    }
    let rx_ctl = m.input_in(rx, "eth_rx_ctl_i", 1);
    m.bind(u_mac, "rgmii_rx_ctl_i", rx_ctl);
    let rxd = m.input_in(rx, "eth_rxd_i", 4);
    m.bind(u_mac, "rgmii_rxd_i", rxd);

    m.group("status LEDs");
    let alive = m.reg("alive", 1, 0);
    m.comment(alive.q, "set once the core is out of reset");
    m.assign(alive.d, lit(1, 1));
    // A frame went or came: bit 0 of tx_frames or rx_frames changed.
    let counts = m.net("eth_frame_lsbs", cat(frame_counts));
    let seen = m.reg("eth_frame_lsbs_seen", 2, 0);
    m.assign(seen.d, counts);
    let event = m.net("eth_frame_event", counts.ne(seen.q));
    let act = m.reg("eth_activity", 22, 0);
    m.assign(
        act.d,
        mux(event, ones(22), mux(act.q.any(), act.q - 1, act.q.ex())),
    );
    let st = m.output("status_o", STATUS_BITS);
    m.comment(
        st,
        "0 heartbeat, 1 out of reset, 2 UART bytes, 3 bus error answered, 4 Ethernet frame",
    );
    m.assign(
        st,
        cat([
            act.q.any(),
            status.bus_error.ex(),
            status.rx_activity.ex(),
            alive.q.ex(),
            status.heartbeat.ex(),
        ]),
    );
    if !unused.is_empty() {
        m.unused("chip_unused", cat(unused));
    }
    m.finish()
}

/// `tready` for `tvalid` and the other way round (`rvalid_o` of a master is `rvalid_i` of its
/// slave): a port name's suffix seen from the other side.
fn flip(rest: &str) -> String {
    if let Some(b) = rest.strip_suffix("_o") {
        format!("{b}_i")
    } else if let Some(b) = rest.strip_suffix("_i") {
        format!("{b}_o")
    } else {
        rest.to_string()
    }
}

/// Header lines of every generated board file.
fn header(cfg: &Config) -> Vec<String> {
    vec![
        format!(
            "{MARKER} {VERSION} from configuration `{}` (hash {:016x}).",
            cfg.chip.name,
            cfg.hash()
        ),
        "Do not edit: change the generator or the configuration and run `hdl-gen fpga emit`."
            .to_string(),
    ]
}

/// The PLL setting of a board: the core clock on `CLKOP`, the RGMII clock on `CLKOS`.
pub fn pll_setting(b: &Board) -> pll::PllSetting {
    pll::compute_pair(b.osc_hz, b.core_hz, b.eth_hz).unwrap_or_else(|| {
        panic!(
            "{}: no exact PLL setting for {} Hz and {} Hz from {} Hz",
            b.name, b.core_hz, b.eth_hz, b.osc_hz
        )
    })
}

/// The board top, built with the builder: the PLL (`EHXPLLL`, a vendor primitive), the reset
/// generator, a `reset_sync` for each Ethernet domain, the MDIO pin's `BB` and the core, in
/// three clock domains: `core` and `eth_tx` from the PLL, `eth_rx` from the PHY's receive
/// clock. Board pins are asynchronous inputs (each block that reads one synchronizes it).
pub fn top(b: &Board, cfg: &Config) -> Result<Rc<Module>, Errors> {
    let reset: ResetStyle = cfg.chip.reset.into();
    let core = core(b, cfg)?;
    let rgen = reset_gen(RESET_BITS, reset)?;
    let rsync = reset_sync(reset)?;
    let pll_prim = ecp5::ehxplll()?;
    let bb = ecp5::bb()?;
    let s = pll_setting(b);
    let mut m = ModuleBuilder::with_reset(&top_name(b), reset);
    m.doc(&format!(
        "Board top of the {} ({}): the {} MHz oscillator feeds an EHXPLLL that makes the",
        b.title,
        b.part,
        mhz(b.osc_hz)
    ));
    m.doc(&format!(
        "{} MHz core clock and the {} MHz RGMII clock (CLKI_DIV {}, CLKFB_DIV {}, CLKOP_DIV {},",
        mhz(s.fout_hz()),
        mhz(s.fos_hz()),
        s.clki_div,
        s.clkfb_div,
        s.clkop_div,
    ));
    m.doc(&format!(
        "CLKOS_DIV {}, VCO {} MHz); the core is held in reset until the PLL locks and for 2^{RESET_BITS}",
        s.clkos_div,
        mhz(s.fvco_hz())
    ));
    m.doc("cycles after, and while the reset button is held; the Ethernet domains follow it.");
    m.doc(&format!("Pins: constraints/{}.lpf.", b.name));
    let mut pins = std::collections::BTreeMap::new();
    // The receive pins are declared once their clock's domain exists, below.
    for p in b.ports.iter().filter(|p| p.role != Role::EthRx) {
        let sig = match p.dir {
            Dir::In => m.input_async(p.name, p.width()),
            Dir::Out => m.output(p.name, p.width()),
            Dir::InOut => m.inout(p.name, p.width()),
        };
        m.comment(sig, p.what);
        pins.insert(p.name, sig);
    }
    let clk_core = m.wire("clk_core", 1);
    m.comment(clk_core, &format!("{} MHz, from the PLL", mhz(b.core_hz)));
    let clk_eth = m.wire("clk_eth_tx", 1);
    m.comment(
        clk_eth,
        &format!("{} MHz RGMII transmit clock, from the PLL", mhz(b.eth_hz)),
    );
    let locked = m.wire("pll_locked", 1);
    let rst_core_n = m.wire("rst_core_n", 1);
    m.comment(rst_core_n, "the core's reset, active low");
    let find = |role: Role| b.ports.iter().find(|p| p.role == role);
    let osc = find(Role::Clock).expect("an oscillator");
    let btn = find(Role::ResetButton);
    let rx_clk = find(Role::EthRxClock).expect("an RGMII receive clock");

    let u_pll = m.instance("u_pll", &pll_prim);
    let freq = |hz: u64| format!("\"{}\"", pll::attr_mhz(hz));
    m.attr(u_pll, "FREQUENCY_PIN_CLKI", &freq(s.fin_hz));
    m.attr(u_pll, "FREQUENCY_PIN_CLKOP", &freq(s.fout_hz()));
    m.attr(u_pll, "FREQUENCY_PIN_CLKOS", &freq(s.fos_hz()));
    for (k, v) in pll::LOOP_FILTER {
        m.attr(u_pll, k, &format!("\"{v}\""));
    }
    for (k, v) in pll::params(&s) {
        m.set_param(u_pll, k, v);
    }
    m.bind(u_pll, "CLKI", pins[osc.name]);
    m.bind(u_pll, "CLKFB", clk_core);
    for (port, v) in pll::TIES {
        m.bind(u_pll, port, lit(1, u128::from(*v)));
    }
    m.bind_out_to(u_pll, "CLKOP", clk_core);
    m.bind_out_to(u_pll, "CLKOS", clk_eth);
    m.bind_out_to(u_pll, "LOCK", locked);

    let active = |m: &mut ModuleBuilder, name: &str, n: Sig| -> Sig {
        if reset.active_low() {
            n
        } else {
            m.net(name, !n)
        }
    };
    let core_rst = active(&mut m, "rst_core", rst_core_n);
    let dom = m.domain_from("core", clk_core, Some(core_rst));
    // Reset request: the PLL has not locked, or the button is pressed.
    let request: Expr = match btn {
        Some(bp) => locked & pins[bp.name],
        None => locked.ex(),
    };
    let request = if reset.active_low() {
        request
    } else {
        !request
    };
    let u_rgen = m.instance("u_reset_gen", &rgen);
    m.bind_reset(u_rgen, request);
    m.bind_domain(u_rgen, "", dom);
    m.bind_out_to(u_rgen, "rst_no", rst_core_n);

    // The Ethernet domains: reset with the core, released on their own clocks.
    let rsync_out = if reset.active_low() {
        "rst_no"
    } else {
        "rst_o"
    };
    let eth_dom = |m: &mut ModuleBuilder, name: &str, clk: Sig| -> Domain {
        let rst = m.wire(
            &format!("rst_{name}{}", if reset.active_low() { "_n" } else { "" }),
            1,
        );
        let d = m.domain_from(name, clk, Some(rst));
        let u = m.instance(&format!("u_reset_sync_{name}"), &rsync);
        m.bind_reset(u, core_rst);
        m.bind_domain(u, "", d);
        m.bind_out_to(u, rsync_out, rst);
        d
    };
    let tx = eth_dom(&mut m, "eth_tx", clk_eth);
    let rx = eth_dom(&mut m, "eth_rx", pins[rx_clk.name]);
    for p in b.ports.iter().filter(|p| p.role == Role::EthRx) {
        let sig = m.input_in(rx, p.name, p.width());
        m.comment(sig, p.what);
        pins.insert(p.name, sig);
    }

    let u_core = m.instance("u_core", &core);
    m.bind_domain(u_core, "", dom);
    m.bind_domain(u_core, "tx", tx);
    m.bind_domain(u_core, "rx", rx);
    let status = m.bind_out(u_core, "status_o");

    let mut unused: Vec<Expr> = Vec::new();
    for bp in &b.ports {
        let pin = pins[bp.name];
        let w = bp.width();
        match bp.role {
            Role::Clock | Role::ResetButton | Role::EthRxClock => {}
            Role::Core | Role::EthRx if bp.dir == Dir::In => m.bind(u_core, bp.name, pin),
            Role::EthRx => {}
            Role::Core => m.bind_out_to(u_core, bp.name, pin),
            Role::Mdio => {
                let u = m.instance("u_mdio_pad", &bb);
                let o = m.bind_out(u_core, "eth_mdio_o");
                let oe = m.bind_out(u_core, "eth_mdio_oe_o");
                m.bind(u, "I", o);
                m.bind(u, "T", !oe);
                let back = m.bind_out(u, "O");
                m.bind(u_core, "eth_mdio_i", back);
                m.bind_inout(u, "B", pin);
            }
            Role::Leds if w == 1 => {
                // One LED, low lights it: the heartbeat, inverted while UART bytes arrive.
                m.assign(pin, !(status.bit(0) ^ status.bit(2)));
                unused.push(cat([status.slice(STATUS_BITS - 1, 3), status.bit(1)]));
            }
            Role::Leds => m.assign(pin, cat([zeros(w - STATUS_BITS), status.ex()])),
            Role::Idle if bp.dir == Dir::Out => m.assign(pin, zeros(w)),
            Role::Idle => unused.push(pin.ex()),
            Role::VccioEnable => m.assign(pin, ones(w)),
            Role::VccioPdm => {
                let sd = sigma_delta(10, reset)?;
                let mut bits = Vec::new();
                for (i, level) in BUTTERSTICK_VCCIO_LEVELS.iter().enumerate() {
                    let u = m.instance(&format!("u_vccio{i}"), &sd);
                    m.bind_domain(u, "", dom);
                    m.bind(u, "level_i", lit(10, u128::from(*level)));
                    bits.push(m.bind_out(u, "pdm_o"));
                }
                bits.reverse();
                m.assign(pin, cat(bits));
            }
        }
    }
    if !unused.is_empty() {
        m.unused("idle_inputs", cat(unused));
    }
    m.finish()
}

/// The LPF constraint file of a board.
pub fn lpf_text(b: &Board, cfg: &Config) -> String {
    let mut t = String::new();
    for l in header(cfg) {
        let _ = writeln!(t, "# {l}");
    }
    let _ = writeln!(t, "#");
    let _ = writeln!(
        t,
        "# Pin constraints of the {} ({}) for {}_top.",
        b.title, b.part, b.name
    );
    let _ = writeln!(
        t,
        "# Each pin cites the public board description it was taken from:"
    );
    for s in b.sources {
        let _ = writeln!(
            t,
            "#   [{}] {}, {} at commit {}",
            s.tag, s.repo, s.path, s.commit
        );
    }
    let _ = writeln!(t, "#");
    for n in b.notes {
        let _ = writeln!(t, "# {n}");
    }
    let _ = writeln!(t);
    let _ = writeln!(t, "BLOCK RESETPATHS;");
    let _ = writeln!(t, "BLOCK ASYNCPATHS;");
    for p in &b.ports {
        let _ = writeln!(t);
        let _ = writeln!(t, "# {}: {}", p.name, p.what);
        let _ = writeln!(t, "#   from {}", p.cite);
        for (i, site) in p.sites.iter().enumerate() {
            let comp = if p.width() > 1 {
                format!("{}[{i}]", p.name)
            } else {
                p.name.to_string()
            };
            let attrs = if p.attrs.is_empty() {
                String::new()
            } else {
                format!(" {}", p.attrs)
            };
            let _ = writeln!(t, "LOCATE COMP \"{comp}\" SITE \"{site}\";");
            let _ = writeln!(t, "IOBUF PORT \"{comp}\" IO_TYPE={}{attrs};", p.io_type);
        }
        if p.role == Role::Clock {
            let _ = writeln!(t, "FREQUENCY PORT \"{}\" {} MHZ;", p.name, mhz(b.osc_hz));
        }
        if p.role == Role::EthRxClock {
            // The PHY's RGMII receive clock at 1 Gb/s, for the receive domain's timing.
            let _ = writeln!(t, "FREQUENCY PORT \"{}\" {} MHZ;", p.name, mhz(b.eth_hz));
        }
    }
    t
}

/// Every file a board needs, relative to the repository root: `fpga/<board>/*.sv`, the file list
/// `fpga/<board>/<board>.f` (children first, the top last) and `constraints/<board>.lpf`.
/// Built from the board's bring-up configuration ([`config`]).
pub fn files(b: &Board) -> Result<Vec<OutFile>, Errors> {
    let cfg = &config(b)?;
    let top = top(b, cfg)?;
    let mut d = Design::new(b.name);
    d.add_top(top);
    let opts = EmitOptions {
        header: header(cfg),
        core_name: format!("nvmeof:bringup:{}:{VERSION}", b.name),
        description: format!("bring-up design for the {}", b.title),
    };
    let mut out = Vec::new();
    for f in d.emit(&opts)? {
        // SystemVerilog only (the vendor primitives' models under models/); a board top has no
        // testbench binding.
        if f.path.ends_with(".sv") {
            out.push(OutFile {
                path: format!("fpga/{}/{}", b.name, f.path),
                contents: f.contents,
            });
        }
    }
    // The file list for synthesis: children first, the top last; no models (synthesis has the
    // vendor's cells).
    let mut f = String::new();
    for l in header(cfg) {
        let _ = writeln!(f, "// {l}");
    }
    for m in d.modules()?.iter().filter(|m| !m.is_primitive()) {
        let _ = writeln!(f, "{}.sv", m.name());
    }
    out.push(OutFile {
        path: format!("fpga/{}/{}.f", b.name, b.name),
        contents: f,
    });
    out.push(OutFile {
        path: format!("constraints/{}.lpf", b.name),
        contents: lpf_text(b, cfg),
    });
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}
