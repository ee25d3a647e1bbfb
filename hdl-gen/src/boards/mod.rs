//! Bring-up boards: pin tables (with where each pin comes from), the board cores built with the
//! builder, the board tops, and the LPF constraints, all generated from one description so the
//! top's ports and the constraint file cannot drift apart.
//!
//! Each board gets, in `fpga/<board>/`:
//!
//! - `<board>_core.sv` and the modules below it (builder-made): the UART bridge onto `chip_info`
//!   and a block-RAM host memory ([`bringup`]), status LEDs, the Ethernet PHY pins held idle;
//! - `reset_gen_c<bits>.sv` (builder-made);
//! - `<board>_top.sv`: the PLL (`EHXPLLL`, a vendor primitive with parameters), the reset
//!   generator and the core, wired together in the clock domain the PLL makes, with the MDIO
//!   pin as an `inout` port: built with the builder like everything else;
//! - `models/EHXPLLL.sv`: the PLL's behavioural model, for Verilator only (synthesis uses
//!   Yosys' ECP5 cell; the file list `<board>.f` leaves it out).
//!
//! and `constraints/<board>.lpf`.

pub mod bringup;
pub mod pll;

use crate::blocks::chip_info::chip_info;
use crate::blocks::ecp5;
use crate::chip::{self, MARKER, VERSION};
use crate::config::Config;
use bringup::{add_bringup, reset_gen, sigma_delta, BringupParams};
use hdl_builder::prelude::*;
use hdl_builder::{Design, EmitOptions, Errors, OutFile};
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
    /// Passed to the board core.
    Core,
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
    /// UART baud rate of the bridge.
    pub baud: u64,
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
        baud: 115_200,
        ports: vec![
            clk,
            btn,
            port(
                "led_o",
                Out,
                &["C13", "D12", "U2", "T3", "D13", "E13", "C16"],
                L,
                "",
                "LED anodes: 0 heartbeat, 1 core out of reset, 2 UART byte seen, 3 bus error",
                "[A] user_led 0-6, [B] LED anodes",
            ),
            port(
                "led_rgb_no",
                Out,
                &["T1", "R1", "U1"],
                L,
                "",
                "LED cathodes, one per colour, all driven low: the LEDs light white",
                "[A] user_led_color, [B] rgb_led 0 cathodes",
            ),
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
            port(
                "vccio_pdm_o",
                Out,
                &["V1", "E11", "T2"],
                L,
                "",
                "SYZYGY VCCIO regulator set points (PDM): 3.3 V, 3.3 V, 1.8 V",
                "[A] vccio_ctrl pdm, [B] vccio_ctrl pdm, levels from [C] VccioCtrl",
            ),
            port(
                "vccio_en_o",
                Out,
                &["E12"],
                L,
                "",
                "SYZYGY VCCIO regulators enable",
                "[A] vccio_ctrl en, [B] vccio_ctrl en",
            ),
            port(
                "eth_rst_no",
                Out,
                &["B20"],
                L,
                FAST,
                "Ethernet PHY reset (held released: the PHY negotiates a link)",
                "[A] eth rst_n, [B] eth_rgmii rst",
            ),
            port(
                "eth_mdc_o",
                Out,
                &["A19"],
                L,
                FAST,
                "PHY management clock (idle low)",
                "[A] eth mdc, [B] eth_rgmii mdc",
            ),
            port(
                "eth_mdio_io",
                InOut,
                &["D16"],
                L,
                FAST,
                "PHY management data (not driven yet)",
                "[A] eth mdio, [B] eth_rgmii mdio",
            ),
            port(
                "eth_tx_clk_o",
                Out,
                &["E15"],
                L,
                FAST,
                "RGMII transmit clock (idle low until the MAC exists)",
                "[A] eth_clocks tx, [B] eth_rgmii tx_clk",
            ),
            port(
                "eth_tx_ctl_o",
                Out,
                &["D15"],
                L,
                FAST,
                "RGMII transmit control (idle low)",
                "[A] eth tx_ctl, [B] eth_rgmii tx_ctl",
            ),
            port(
                "eth_txd_o",
                Out,
                &["C15", "B16", "A18", "B19"],
                L,
                FAST,
                "RGMII transmit data (idle low)",
                "[A] eth tx_data, [B] eth_rgmii tx_data",
            ),
            port(
                "eth_rx_clk_i",
                In,
                &["D11"],
                L,
                "",
                "RGMII receive clock (unused until the MAC exists)",
                "[A] eth_clocks rx, [B] eth_rgmii rx_clk",
            ),
            port(
                "eth_rx_ctl_i",
                In,
                &["B18"],
                L,
                "",
                "RGMII receive control (unused)",
                "[A] eth rx_ctl, [B] eth_rgmii rx_ctl",
            ),
            port(
                "eth_rxd_i",
                In,
                &["A16", "C17", "B17", "A17"],
                L,
                "",
                "RGMII receive data (unused)",
                "[A] eth rx_data, [B] eth_rgmii rx_data",
            ),
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
        baud: 115_200,
        ports: vec![
            clk,
            btn,
            port(
                "led_no",
                Out,
                &["U16"],
                L,
                "",
                "user LED, low lights it: heartbeat, inverted while UART bytes arrive",
                "[A] user_led_n",
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
                "reset of both PHYs (held released)",
                "[A] eth 0 and 1 rst_n",
            ),
            eth(
                "eth_mdc_o",
                Out,
                &["N5"],
                "PHY management clock, both PHYs (idle low)",
                "[A] eth 0 and 1 mdc",
            ),
            eth(
                "eth_mdio_io",
                InOut,
                &["P5"],
                "PHY management data, both PHYs (not driven yet)",
                "[A] eth 0 and 1 mdio",
            ),
            eth(
                "eth0_tx_clk_o",
                Out,
                &["G1"],
                "PHY 0 RGMII transmit clock (idle low)",
                "[A] eth_clocks 0 tx",
            ),
            eth(
                "eth0_tx_ctl_o",
                Out,
                &["K1"],
                "PHY 0 RGMII transmit control (idle low)",
                "[A] eth 0 tx_ctl",
            ),
            eth(
                "eth0_txd_o",
                Out,
                &["G2", "H1", "J1", "J3"],
                "PHY 0 RGMII transmit data (idle low)",
                "[A] eth 0 tx_data",
            ),
            eth(
                "eth0_rx_clk_i",
                In,
                &["H2"],
                "PHY 0 RGMII receive clock (unused)",
                "[A] eth_clocks 0 rx",
            ),
            eth(
                "eth0_rx_ctl_i",
                In,
                &["P2"],
                "PHY 0 RGMII receive control (unused)",
                "[A] eth 0 rx_ctl",
            ),
            eth(
                "eth0_rxd_i",
                In,
                &["K2", "L1", "N1", "P1"],
                "PHY 0 RGMII receive data (unused)",
                "[A] eth 0 rx_data",
            ),
            eth(
                "eth1_tx_clk_o",
                Out,
                &["U19"],
                "PHY 1 RGMII transmit clock (idle low)",
                "[A] eth_clocks 1 tx",
            ),
            eth(
                "eth1_tx_ctl_o",
                Out,
                &["P19"],
                "PHY 1 RGMII transmit control (idle low)",
                "[A] eth 1 tx_ctl",
            ),
            eth(
                "eth1_txd_o",
                Out,
                &["U20", "T19", "T20", "R20"],
                "PHY 1 RGMII transmit data (idle low)",
                "[A] eth 1 tx_data",
            ),
            eth(
                "eth1_rx_clk_i",
                In,
                &["L19"],
                "PHY 1 RGMII receive clock (unused)",
                "[A] eth_clocks 1 rx",
            ),
            eth(
                "eth1_rx_ctl_i",
                In,
                &["M20"],
                "PHY 1 RGMII receive control (unused)",
                "[A] eth 1 rx_ctl",
            ),
            eth(
                "eth1_rxd_i",
                In,
                &["P20", "N19", "N20", "M19"],
                "PHY 1 RGMII receive data (unused)",
                "[A] eth 1 rx_data",
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

/// The core port a board port connects to (an `inout` is read through an `_i` port for now).
fn core_port_name(p: &BoardPort) -> String {
    match p.dir {
        Dir::InOut => format!("{}_i", p.name.trim_end_matches("_io")),
        _ => p.name.to_string(),
    }
}

/// Reset counter bits of the reset generator (released 2^16 cycles after the request ends).
pub const RESET_BITS: u32 = 16;

/// The bring-up parameters of a board for a configuration.
pub fn params(b: &Board, cfg: &Config) -> BringupParams {
    BringupParams {
        clock_hz: b.core_hz,
        baud: b.baud,
        csr_addr_width: cfg.csr.addr_width,
    }
}

/// Builds the board core: its ports are the board's `Core` ports; inside, the bring-up logic and
/// the board's own wiring of LEDs, PHY pins and (ButterStick) VCCIO set points.
pub fn core(b: &Board, cfg: &Config) -> Result<Rc<Module>, Errors> {
    let reset: ResetStyle = cfg.chip.reset.into();
    let csr = chip_info(&chip::facts(cfg), cfg.csr.addr_width, reset)?;
    let mut m = ModuleBuilder::with_reset(&core_name(b), reset);
    m.doc(&format!(
        "Bring-up core of the {} ({}), {} MHz: the UART bridge ({} baud) onto chip_info",
        b.title,
        b.part,
        mhz(b.core_hz),
        b.baud
    ));
    m.doc(&format!(
        "and {} KiB of host memory at 0x{:08x}, status LEDs, Ethernet PHY pins held idle.",
        bringup::HOST_MEM_BYTES / 1024,
        bringup::HOST_MEM_BASE
    ));
    m.clock();
    m.reset();
    let p = params(b, cfg);
    let status = add_bringup(&mut m, &p, &csr)?;
    let alive = m.reg("alive", 1, 0);
    m.comment(alive.q, "set once the core is out of reset");
    m.assign(alive.d, lit(1, 1));

    let mut unused: Vec<Expr> = Vec::new();
    m.group("board pins");
    for bp in b.ports.iter().filter(|bp| bp.role == Role::Core) {
        if bp.name.starts_with("uart_") {
            continue; // declared by add_bringup
        }
        let name = core_port_name(bp);
        let w = bp.width();
        if bp.dir == Dir::Out {
            let o = m.output(&name, w);
            let value: Expr = match bp.name {
                "led_o" => cat([
                    zeros(w - 4),
                    status.bus_error.ex(),
                    status.rx_activity.ex(),
                    alive.q.ex(),
                    status.heartbeat.ex(),
                ]),
                "led_no" => !(status.heartbeat ^ status.rx_activity),
                "led_rgb_no" => zeros(w),
                "vccio_en_o" => ones(1),
                "eth_rst_no" => ones(1),
                "vccio_pdm_o" => {
                    let sd = sigma_delta(10, reset)?;
                    let mut bits = Vec::new();
                    for (i, level) in BUTTERSTICK_VCCIO_LEVELS.iter().enumerate() {
                        let u = m.instance(&format!("u_vccio{i}"), &sd);
                        m.bind(u, "level_i", lit(10, u128::from(*level)));
                        bits.push(m.bind_out(u, "pdm_o"));
                    }
                    bits.reverse();
                    cat(bits)
                }
                // PHY transmit pins and the management clock idle low until the MAC exists.
                _ => zeros(w),
            };
            m.assign(o, value);
        } else {
            // A pin: asynchronous to the core clock (read only through a synchronizer).
            let i = m.input_async(&name, w);
            unused.push(i.ex());
        }
    }
    if b.name != "butterstick" {
        unused.push(cat([status.bus_error.ex(), alive.q.ex()]));
    }
    if !unused.is_empty() {
        m.unused("board_inputs", cat(unused));
    }
    m.finish()
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

/// The PLL setting of a board.
pub fn pll_setting(b: &Board) -> pll::PllSetting {
    pll::compute(b.osc_hz, b.core_hz, 0).unwrap_or_else(|| {
        panic!(
            "{}: no exact PLL setting for {} Hz from {} Hz",
            b.name, b.core_hz, b.osc_hz
        )
    })
}

/// The board top, built with the builder: the PLL (`EHXPLLL`, a vendor primitive), the reset
/// generator and the core, in the clock domain `core` the PLL's output clocks. Board pins are
/// asynchronous inputs (each block that reads one synchronizes it), the MDIO pin an `inout`.
pub fn top(b: &Board, cfg: &Config) -> Result<Rc<Module>, Errors> {
    let reset: ResetStyle = cfg.chip.reset.into();
    let core = core(b, cfg)?;
    let rgen = reset_gen(RESET_BITS, reset)?;
    let pll_prim = ecp5::ehxplll()?;
    let s = pll_setting(b);
    let mut m = ModuleBuilder::with_reset(&top_name(b), reset);
    m.doc(&format!(
        "Board top of the {} ({}): the {} MHz oscillator feeds an EHXPLLL that makes the",
        b.title,
        b.part,
        mhz(b.osc_hz)
    ));
    m.doc(&format!(
        "{} MHz core clock (CLKI_DIV {}, CLKFB_DIV {}, CLKOP_DIV {}, VCO {} MHz); the core is held in",
        mhz(s.fout_hz()),
        s.clki_div,
        s.clkfb_div,
        s.clkop_div,
        mhz(s.fvco_hz())
    ));
    m.doc(&format!(
        "reset until the PLL locks and for 2^{RESET_BITS} cycles after, and while the reset button is held."
    ));
    m.doc(&format!("Pins: constraints/{}.lpf.", b.name));
    let mut pins = std::collections::BTreeMap::new();
    for p in &b.ports {
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
    let locked = m.wire("pll_locked", 1);
    let rst_core_n = m.wire("rst_core_n", 1);
    m.comment(rst_core_n, "the core's reset, active low");
    let osc = b
        .ports
        .iter()
        .find(|p| p.role == Role::Clock)
        .expect("an oscillator");
    let btn = b.ports.iter().find(|p| p.role == Role::ResetButton);

    let u_pll = m.instance("u_pll", &pll_prim);
    let freq = |hz: u64| format!("\"{}\"", pll::attr_mhz(hz));
    m.attr(u_pll, "FREQUENCY_PIN_CLKI", &freq(s.fin_hz));
    m.attr(u_pll, "FREQUENCY_PIN_CLKOP", &freq(s.fout_hz()));
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
    m.bind_out_to(u_pll, "LOCK", locked);

    let core_rst = if reset.active_low() {
        rst_core_n
    } else {
        m.net("rst_core", !rst_core_n)
    };
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

    let u_core = m.instance("u_core", &core);
    m.bind_domain(u_core, "", dom);
    for cp in core.ports().iter().filter(|p| !p.is_clock && !p.is_reset) {
        let bp = b
            .ports
            .iter()
            .find(|bp| core_port_name(bp) == cp.name)
            .unwrap_or_else(|| panic!("core port {} has no board pin", cp.name));
        if cp.input {
            m.bind(u_core, &cp.name, pins[bp.name]);
        } else {
            m.bind_out_to(u_core, &cp.name, pins[bp.name]);
        }
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
    }
    t
}

/// Every file a board needs, relative to the repository root: `fpga/<board>/*.sv`, the file list
/// `fpga/<board>/<board>.f` (children first, the top last) and `constraints/<board>.lpf`.
pub fn files(b: &Board, cfg: &Config) -> Result<Vec<OutFile>, Errors> {
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
