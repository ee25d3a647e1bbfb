//! `testbench board`: a bring-up board on the desk, simulated. The board's bring-up core
//! (hdl-gen's `boards::core`: the chip top of `configs/bringup_<board>.toml`, the RGMII MAC,
//! the MDIO master, host memory in block RAM, the UART bridge) runs under Verilator with its
//! three clocks, and everything around it is at its pins:
//!
//! - the UART on a pseudo-terminal (`uart.rs`), so the host tool (`bringup --port <pty>`) runs
//!   against it unchanged;
//! - a clause 22 PHY (`models::eth::MdioPhy`) on MDC/MDIO at address [`PHY_ADDR`], link up;
//! - the RGMII pins decoded into frames and frames encoded onto them (`rgmii.rs`), bridged to a
//!   TAP device in a network namespace of the run's own where the project's NVMe/TCP target
//!   model listens on a kernel socket (`net.rs`).
//!
//! The core clock is lowered so that a UART bit takes [`model::BIT_CYCLES`] cycles; the RGMII
//! clocks keep their real ratio to it (125 MHz against the ButterStick's 125 MHz core and the
//! Colorlight i5's 100 MHz), the receive clock 100 ppm slow (the link partner's oscillator,
//! within 802.3's tolerance). Simulated time runs as fast as the model goes, unpaced.
//!
//! What lives here: `model.rs` (generation, the cached build, `dlopen`, the `Dut`), `uart.rs`,
//! `rgmii.rs`, `net.rs`; the command line is `cli/board.rs`.

pub mod model;
pub mod net;
pub mod rgmii;
pub mod uart;

use crate::models::eth::MdioPhy;
use crate::sim::{MultiSim, Signal};
use model::{Butterstick, ColorlightI5, Core, Kind};
use net::{dotted, Site, CHIP_IP, NETNS_PREFIX, TAP_IP, TARGET_PORT};
use rgmii::{RgmiiRx, RgmiiTx};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use uart::{Pty, Uart};

/// The MDIO address the PHY model answers at: the Colorlight i5's PHY 0 (the one the core
/// drives) is at 0; the ButterStick's KSZ9031 answers 0 as its broadcast address (register
/// 16h bit 9 clear after reset), whatever its strap pins say.
pub const PHY_ADDR: u8 = 0;

/// The PHY's registers after reset, link up: BMCR 1140h (auto-negotiation on, 1000 Mb/s full
/// duplex), BMSR 796Dh (802.3 22.2.4.2: auto-negotiation complete, link up, capabilities);
/// the others zero.
pub fn phy_regs() -> [u16; 32] {
    let mut r = [0u16; 32];
    r[0] = 0x1140;
    r[1] = 0x796d;
    r
}

/// What a run asks for.
#[derive(Clone, Debug)]
pub struct Options {
    /// The board (`boards::by_name`).
    pub board: String,
    /// Stop after this long (else at SIGINT or SIGTERM).
    pub seconds: Option<f64>,
    /// Write an FST waveform here.
    pub waves: Option<PathBuf>,
    /// Blocks of 512 bytes in the target's namespace 1.
    pub blocks: u64,
    /// C++ optimization of the model.
    pub opt: u32,
    /// Where built models are kept.
    pub cache: PathBuf,
}

/// A run's figures.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub cycles: u64,
    pub secs: f64,
    /// Frames from the core to the TAP (good, forwarded), bad frames from the core, frames from
    /// the TAP to the core.
    pub to_tap: u64,
    pub bad: u64,
    pub to_core: u64,
    /// UART bytes from the host to the core and back; frames from the core with a low stop bit.
    pub uart_in: u64,
    pub uart_out: u64,
    pub framing_errors: u64,
    /// Connections the target accepted.
    pub conns: u64,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "board summary: {} core cycles in {:.1} s ({:.0} cycles/s); frames core->tap {} \
             (bad {}), tap->core {}; UART bytes host->core {}, core->host {} (framing errors \
             {}); target connections {}",
            self.cycles,
            self.secs,
            self.cycles as f64 / self.secs.max(1e-9),
            self.to_tap,
            self.bad,
            self.to_core,
            self.uart_in,
            self.uart_out,
            self.framing_errors,
            self.conns
        )
    }
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// SIGINT and SIGTERM end the run (at the next check, with the summary).
fn catch_signals() {
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
        libc::signal(
            libc::SIGTERM,
            on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
}

/// Runs the board until stopped; prints the ready line (stdout) once out of reset.
pub fn run(opts: &Options) -> Result<Summary, String> {
    match opts.board.as_str() {
        ColorlightI5::BOARD => run_kind::<ColorlightI5>(opts),
        Butterstick::BOARD => run_kind::<Butterstick>(opts),
        other => Err(model::lowered_board(other)
            .err()
            .unwrap_or_else(|| format!("board `{other}` has no simulated core yet"))),
    }
}

fn run_kind<K: Kind>(opts: &Options) -> Result<Summary, String> {
    let b = model::lowered_board(K::BOARD)?;
    let real = hdl_gen::boards::by_name(K::BOARD).expect("a board of hdl-gen");
    crate::suites::tcp::linux::preflight_for("board")?;
    crate::suites::tcp::linux::remove_stale_of(NETNS_PREFIX);
    let g = model::generate(&b)?;
    let lib = model::build(&g, &opts.cache, opts.opt)?;
    model::install::<K>(model::load(&lib, &g.top)?);
    let site = Site::create(opts.blocks)?;
    let pty = Pty::open()?;
    catch_signals();

    // Picoseconds: the lowered core clock, the RGMII clocks in their real ratio to it.
    let core_ps = (1e12 / b.core_hz as f64).round() as u64;
    let eth_ps = (core_ps as f64 * real.core_hz as f64 / real.eth_hz as f64).round() as u64;
    let rx_ps = eth_ps + eth_ps / 10_000;
    const FALL: usize = 0;
    const RXC: usize = 1;
    const TXC: usize = 2;
    let mut sim = MultiSim::<Core<K>>::new(
        &[
            ("", rx_ps, rx_ps / 3 + rx_ps / 2),
            ("clk_rx_i", rx_ps, rx_ps / 3),
            ("clk_tx_i", eth_ps, eth_ps / 5),
            ("clk_i", core_ps, core_ps / 2),
        ],
        opts.waves.as_deref(),
    );
    let sig = |n: &str| -> Signal { sim.signal(n) };
    let (rst, rst_tx, rst_rx) = (sig("rst_ni"), sig("rst_tx_ni"), sig("rst_rx_ni"));
    let (uart_rx, uart_tx) = (sig("uart_rx_i"), sig("uart_tx_o"));
    let phy_rst_n = sig("eth_rst_no");
    let (mdc, mdio_o, mdio_oe, mdio_i) = (
        sig("eth_mdc_o"),
        sig("eth_mdio_o"),
        sig("eth_mdio_oe_o"),
        sig("eth_mdio_i"),
    );
    let (txd, tx_ctl, rxd, rx_ctl) = (
        sig("eth_txd_o"),
        sig("eth_tx_ctl_o"),
        sig("eth_rxd_i"),
        sig("eth_rx_ctl_i"),
    );
    // Idle lines before reset: the UART high (a low line is a break), MDIO pulled up.
    uart_rx.set(1);
    mdio_i.set(1);
    for level in [1, 0] {
        for r in [&rst, &rst_tx, &rst_rx] {
            r.set(level);
        }
        sim.settle();
    }
    while (0..4).any(|k| sim.edges(k) < 4) {
        sim.next_edge();
        sim.rise();
    }
    for r in [&rst, &rst_tx, &rst_rx] {
        r.set(1);
    }

    let mut uart = Uart::new(model::BIT_CYCLES);
    let mut phy = MdioPhy::new(PHY_ADDR, phy_regs());
    let mut last_mdc = false;
    let mut tx = RgmiiTx::default();
    let mut rx = RgmiiRx::default();
    let mut errors: Vec<String> = Vec::new();
    let mut frame = vec![0u8; 16384];
    let mut cycles = 0u64;

    crate::cli::out(&format!(
        "board ready: pty={} netns={} target={}:{TARGET_PORT} chip_ip={}",
        pty.path,
        site.ns.name,
        dotted(TAP_IP),
        dotted(CHIP_IP)
    ));
    eprintln!(
        "board: the {} core at {} Hz ({} cycles per UART bit at {} baud; the board runs at {} \
         MHz), RGMII at {} ps a clock; PHY at MDIO address {PHY_ADDR}; the TAP {} is {}/24 in \
         namespace {}",
        b.title,
        b.core_hz,
        model::BIT_CYCLES,
        b.baud,
        hdl_gen::boards::mhz(real.core_hz),
        eth_ps,
        net::TAP,
        dotted(TAP_IP),
        site.ns.name
    );
    let started = Instant::now();
    let deadline = opts.seconds.map(|s| started + Duration::from_secs_f64(s));
    loop {
        let k = sim.next_edge();
        match k {
            FALL => {
                let (hi, ctl) = rx.fall();
                rxd.set(u64::from(hi));
                rx_ctl.set(u64::from(ctl));
                sim.settle();
                sim.rise();
            }
            RXC => {
                let (lo, en) = rx.rise();
                rxd.set(u64::from(lo));
                rx_ctl.set(u64::from(en));
                sim.settle();
                sim.rise();
            }
            TXC => {
                tx.before_rise(txd.get() as u8, tx_ctl.is_high());
                sim.rise();
                tx.after_rise(txd.get() as u8, tx_ctl.is_high());
            }
            _ => {
                uart.sample(uart_tx.is_high());
                // A PHY held in reset (bringup_csr.ctrl.phy_reset) forgets its state and
                // leaves the line alone.
                if !phy_rst_n.is_high() {
                    phy = MdioPhy::new(PHY_ADDR, phy_regs());
                }
                // MDIO: the master's level while it drives, else the PHY's, else the pull-up.
                let line = if mdio_oe.is_high() {
                    mdio_o.is_high()
                } else {
                    phy.driving().unwrap_or(true)
                };
                mdio_i.set(u64::from(line));
                let level = mdc.is_high();
                if level && !last_mdc {
                    phy.rise(line);
                }
                last_mdc = level;
                sim.rise();
                uart_rx.set(u64::from(uart.drive()));
                cycles += 1;
                if cycles.is_multiple_of(256) {
                    if uart.to_core.len() < 64 {
                        pty.read_into(&mut uart.to_core);
                    }
                    if !uart.from_core.is_empty() {
                        pty.write(&uart.from_core);
                        uart.from_core.clear();
                    }
                    for f in tx.frames(&mut errors) {
                        if let Err(e) = site.write_frame(&f) {
                            errors.push(e);
                        }
                    }
                    if rx.idle() {
                        if let Some(n) = site.read_frame(&mut frame) {
                            rx.send(&frame[..n]);
                        }
                    }
                    for e in errors.drain(..) {
                        eprintln!("board: {e}");
                    }
                    for e in site.errors.lock().unwrap().drain(..) {
                        eprintln!("board: {e}");
                    }
                    for e in phy.errors.drain(..) {
                        eprintln!("board: MDIO: {e}");
                    }
                    if cycles.is_multiple_of(4096)
                        && (STOP.load(Ordering::SeqCst)
                            || deadline.is_some_and(|d| Instant::now() >= d))
                    {
                        break;
                    }
                }
            }
        }
    }
    let secs = started.elapsed().as_secs_f64();
    Ok(Summary {
        cycles,
        secs,
        to_tap: tx.good,
        bad: tx.bad,
        to_core: rx.frames,
        uart_in: uart.sent,
        uart_out: uart.received,
        framing_errors: uart.framing_errors,
        conns: site.conns.load(Ordering::SeqCst),
    })
}
