//! The board-independent part of the bring-up design: the UART bridge and its address
//! decoder onto the targets a board core lists, a reset generator, and small helpers for status
//! LEDs.
//!
//! Address map seen by the bridge (see [`crate::blocks::uart_bridge`] for the protocol): each
//! [`Target`] answers at `base` for `2^bits` bytes (`base` a multiple of the window); an address
//! that no target covers answers DECERR (status byte 0xA3) and reads 0. The board core's map:
//!
//! | address | what |
//! |---|---|
//! | [`BOARD_CSR_BASE`] | `bringup_csr` (`super::board_csr`): board, admin streams, MAC, MDIO |
//! | [`FIRMWARE_BASE`] | the chip's firmware CSRs (`s_axil`, map in `chip/mod.rs`) |
//! | [`BAR0_BASE`] | the chip's BAR0 (`s_bar`: NVMe registers and doorbells) |
//! | [`HOST_MEM_BASE`] | host memory (`super::host_mem`), address 0 of the chip's `m_axi` |

use crate::blocks::uart::{divider, uart_rx, uart_tx};
use crate::blocks::uart_bridge::{axil_port, uart_axil_bridge, AXIL_MASTER};
use hdl_builder::prelude::*;
use hdl_builder::{Errors, Inst};
use std::collections::BTreeMap;
use std::rc::Rc;

/// Bridge address of `bringup_csr`.
pub const BOARD_CSR_BASE: u32 = 0x0000_0000;
/// Bridge address of the chip's firmware CSRs (`s_axil`).
pub const FIRMWARE_BASE: u32 = 0x1000_0000;
/// Bridge address of the chip's BAR0 (`s_bar`).
pub const BAR0_BASE: u32 = 0x2000_0000;
/// Bridge address of the host memory (its byte 0 is address 0 of the chip's `m_axi`).
pub const HOST_MEM_BASE: u32 = 0x8000_0000;

/// An AXI4-Lite slave the bridge reaches: instance `inst`'s ports `<prefix>_*` (without
/// `awprot`/`arprot`, addresses `bits` wide), answering at `base` for `2^bits` bytes.
#[derive(Clone, Debug)]
pub struct Target {
    /// Short name, for the decoder's nets (`wsel_<name>`).
    pub name: &'static str,
    /// The instance.
    pub inst: Inst,
    /// Its port prefix (`s_axil`, `s_bar`).
    pub prefix: String,
    /// First bridge address.
    pub base: u32,
    /// Address bits of the window.
    pub bits: u32,
}

/// What the bring-up logic needs to know about its board.
#[derive(Clone, Debug)]
pub struct BringupParams {
    /// Core clock in Hz.
    pub clock_hz: u64,
    /// UART baud rate.
    pub baud: u64,
}

impl BringupParams {
    /// Clock cycles per UART bit.
    pub fn uart_div(&self) -> u32 {
        divider(self.clock_hz, self.baud)
    }

    /// Timeout of a stalled command: the power of two of cycles nearest above 10 ms.
    pub fn timeout_bits(&self) -> u32 {
        clog2(self.clock_hz / 100)
    }

    /// Counter bits of a heartbeat that blinks at about 1 Hz.
    pub fn heartbeat_bits(&self) -> u32 {
        clog2(self.clock_hz)
    }
}

/// `reset_gen_c<bits>`: turns an asynchronous reset request (`rst_ni` or `rst_i`, by style:
/// PLL not locked, button pressed) into the core's reset `rst_no` (active low): asserted at once
/// with the request, released synchronously `2^bits + 2` cycles after the request ends (two
/// synchronizer stages, then a counter), so the core starts on a running, settled clock.
pub fn reset_gen(bits: u32, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let mut m = ModuleBuilder::with_reset(&format!("reset_gen_c{bits}"), reset);
    m.doc("Reset generator: the reset request asserts rst_no at once; rst_no is released");
    m.doc(&format!(
        "synchronously 2^{bits} + 2 cycles after the request ends (synchronizer, then a counter)."
    ));
    m.clock();
    m.reset();
    let out = m.output("rst_no", 1);
    let sync = m.reg("sync", 2, 0);
    m.comment(sync.q, "ones shift in once the request ends");
    m.assign(sync.d, cat([sync.q.bit(0), lit(1, 1)]));
    let count = m.reg("count", bits, 0);
    let done = m.reg("done", 1, 0);
    m.assign(count.d, mux(sync.q.bit(1) & !done.q, count.q + 1, count.q));
    m.assign(done.d, done.q | count.q.all());
    m.assign(out, done.q);
    m.finish()
}

/// `sigma_delta_w<width>`: a first-order sigma-delta modulator. `pdm_o` is high for a fraction
/// `level_i / 2^width` of the cycles, spread as evenly as possible (the carry of an accumulator),
/// so a simple RC filter turns it into a voltage.
pub fn sigma_delta(width: u32, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let mut m = ModuleBuilder::with_reset(&format!("sigma_delta_w{width}"), reset);
    m.doc("First-order sigma-delta modulator: pdm_o is high for level_i / 2^width of the cycles.");
    m.clock();
    m.reset();
    let level = m.input("level_i", width);
    let out = m.output("pdm_o", 1);
    let acc = m.reg("acc", width + 1, 0);
    m.assign(
        acc.d,
        acc.q.slice(width - 1, 0).zext(width + 1) + level.zext(width + 1),
    );
    m.assign(out, acc.q.bit(width));
    m.finish()
}

/// What the bring-up logic gives the board core to show on its LEDs.
pub struct Bringup {
    /// Blinks at about 1 Hz while the core runs.
    pub heartbeat: Sig,
    /// High for about 30 ms after each byte received from the host.
    pub rx_activity: Sig,
    /// Set by the first bus error (SLVERR or DECERR) answered to the host; cleared by reset.
    pub bus_error: Sig,
}

/// Adds the bring-up logic to a board core `m`: ports `uart_rx_i` and `uart_tx_o`, the UART,
/// the bridge and the address decoder onto `targets` (instances the caller made).
pub fn add_bringup(
    m: &mut ModuleBuilder,
    params: &BringupParams,
    targets: &[Target],
) -> Result<Bringup, Errors> {
    let reset = m.reset_style();
    let div = params.uart_div();
    let rx_mod = uart_rx(div, reset)?;
    let tx_mod = uart_tx(div, reset)?;
    let bridge_mod = uart_axil_bridge(params.timeout_bits(), reset)?;

    m.group("UART to the host");
    // The pin is asynchronous; the receiver synchronizes it.
    let rx_pin = m.input_async("uart_rx_i", 1);
    let tx_pin = m.output("uart_tx_o", 1);

    let urx = m.instance("u_uart_rx", &rx_mod);
    m.bind(urx, "rx_i", rx_pin);
    let utx = m.instance("u_uart_tx", &tx_mod);
    m.bind_out_to(utx, "tx_o", tx_pin);
    let ub = m.instance("u_bridge", &bridge_mod);
    let def = crate::blocks::uart::byte_stream();
    let rx_bytes = m.stream_wire("rx_byte", &def);
    let tx_bytes = m.stream_wire("tx_byte", &def);
    m.bind_stream(urx, "m", &rx_bytes);
    m.bind_stream(ub, "rx", &rx_bytes);
    m.bind_stream(ub, "tx", &tx_bytes);
    m.bind_stream(utx, "s", &tx_bytes);
    let overrun = m.bind_out(urx, "overrun_o");
    let frame_err = m.bind_out(urx, "frame_err_o");
    m.unused("uart_errors", cat([overrun, frame_err]));

    // The bridge's master side, as wires named after the signals.
    let mut bus = BTreeMap::new();
    for &(name, _, out) in AXIL_MASTER {
        let port = axil_port("m_axil", name, true);
        if out {
            bus.insert(name, m.bind_out(ub, &port));
        } else {
            bus.insert(name, m.wire(&format!("bridge_{name}"), port_width(name)));
        }
    }
    for &(name, _, out) in AXIL_MASTER {
        if !out {
            m.bind(ub, &axil_port("m_axil", name, true), bus[name]);
        }
    }

    // Decode: one transaction at a time and the address holds still until its response, so
    // the selection follows the address combinationally.
    let mut w_hits = Vec::new();
    let mut r_hits = Vec::new();
    for t in targets {
        let name = t.name;
        let page = u64::from(t.base >> t.bits);
        w_hits.push(m.net(
            &format!("wsel_{name}"),
            bus["awaddr"].slice(31, t.bits).eq(page),
        ));
        r_hits.push(m.net(
            &format!("rsel_{name}"),
            bus["araddr"].slice(31, t.bits).eq(page),
        ));
    }
    let none_of = |hits: &[Sig]| -> Expr { hits.iter().fold(lit(1, 1), |acc, h| acc & !*h) };
    let w_none = m.net("wsel_none", none_of(&w_hits));
    let r_none = m.net("rsel_none", none_of(&r_hits));

    let mut answers: BTreeMap<&str, Vec<(Sig, Sig)>> = BTreeMap::new();
    for (k, t) in targets.iter().enumerate() {
        let (wsel, rsel, bits, u) = (w_hits[k], r_hits[k], t.bits, t.inst);
        for &(name, _, master_out) in AXIL_MASTER {
            let port = axil_port(&t.prefix, name, false);
            let dir_sel = if matches!(name, "awvalid" | "wvalid" | "bready") {
                Some(wsel)
            } else if matches!(name, "arvalid" | "rready") {
                Some(rsel)
            } else {
                None
            };
            if master_out {
                let value = match (name, dir_sel) {
                    ("awaddr", _) | ("araddr", _) => bus[name].slice(bits - 1, 0),
                    (_, Some(s)) => bus[name] & s,
                    (_, None) => bus[name].ex(),
                };
                m.bind(u, &port, value);
            } else {
                let w = m.bind_out(u, &port);
                let s = if matches!(name, "awready" | "wready" | "bvalid" | "bresp") {
                    wsel
                } else {
                    rsel
                };
                answers.entry(name).or_default().push((s, w));
            }
        }
    }

    // Neither target: answer DECERR (reads return 0).
    let err_b = m.reg("decerr_bvalid", 1, 0);
    let err_r = m.reg("decerr_rvalid", 1, 0);
    let err_w = m.net(
        "decerr_wr",
        bus["awvalid"] & bus["wvalid"] & w_none & !err_b.q,
    );
    let err_rd = m.net("decerr_rd", bus["arvalid"] & r_none & !err_r.q);
    m.assign(err_b.d, err_w | (err_b.q & !bus["bready"]));
    m.assign(err_r.d, err_rd | (err_r.q & !bus["rready"]));
    let decerr = lit(2, 3);
    let error_answer = |name: &str| -> Expr {
        match name {
            "awready" | "wready" => err_w.ex(),
            "bvalid" => err_b.q.ex(),
            "bresp" => decerr.clone(),
            "arready" => err_rd.ex(),
            "rvalid" => err_r.q.ex(),
            "rresp" => decerr.clone(),
            _ => zeros(32),
        }
    };
    for (name, list) in &answers {
        let none = if matches!(*name, "arready" | "rvalid" | "rdata" | "rresp") {
            r_none
        } else {
            w_none
        };
        let mut value = error_answer(name) & none.repeat(port_width(name));
        for (s, w) in list {
            value = value | (*w & s.repeat(port_width(name)));
        }
        m.assign(bus[name], value);
    }

    // Status for the LEDs.
    let hb = m.reg("heartbeat", params.heartbeat_bits(), 0);
    m.assign(hb.d, hb.q + 1);
    let act = m.reg("rx_activity", 22, 0);
    m.assign(
        act.d,
        mux(
            rx_bytes.fire(),
            ones(22),
            mux(act.q.any(), act.q - 1, act.q),
        ),
    );
    let err = m.reg("bus_error", 1, 0);
    let b_err = m.net("b_err", bus["bvalid"] & bus["bready"] & bus["bresp"].bit(1));
    let r_err = m.net("r_err", bus["rvalid"] & bus["rready"] & bus["rresp"].bit(1));
    m.assign(err.d, err.q | b_err | r_err);
    let heartbeat = m.net("heartbeat", hb.q.bit(params.heartbeat_bits() - 1));
    let rx_activity = m.net("rx_activity", act.q.any());
    let unused_hb = hb.q.slice(params.heartbeat_bits() - 2, 0);
    m.unused("heartbeat_low", unused_hb);
    m.unused("bus_misc", cat([bus["bresp"].bit(0), bus["rresp"].bit(0)]));
    Ok(Bringup {
        heartbeat,
        rx_activity,
        bus_error: err.q,
    })
}

fn port_width(name: &str) -> u32 {
    AXIL_MASTER.iter().find(|p| p.0 == name).map_or(1, |p| p.1)
}
