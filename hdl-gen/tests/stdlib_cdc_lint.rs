//! The clock-domain-crossing blocks (two-flop synchronizer, reset synchronizer, asynchronous
//! FIFO) over a spread of parameters and every reset style, and the ECP5 primitives' models in
//! a module that instantiates each: lint-clean under `verilator --lint-only -Wall` and
//! synthesized by Yosys; bad parameters are refused.

use hdl_builder::prelude::*;
use hdl_builder::{Design, ErrorKind};
use hdl_gen::blocks::async_fifo::async_fifo;
use hdl_gen::blocks::ecp5;
use hdl_gen::blocks::reset_sync::reset_sync;
use hdl_gen::blocks::sync_2ff::sync_2ff;

const STYLES: [ResetStyle; 4] = [
    ResetStyle::AsyncLow,
    ResetStyle::AsyncHigh,
    ResetStyle::SyncLow,
    ResetStyle::SyncHigh,
];

#[test]
fn the_crossing_blocks_are_lint_clean() {
    for (i, style) in STYLES.into_iter().enumerate() {
        let mut d = Design::new("lint");
        d.add_top(sync_2ff(1 + 3 * i as u32, style).unwrap());
        d.add_top(reset_sync(style).unwrap());
        let (width, depth) = [(1, 2), (8, 4), (32, 16), (13, 64)][i];
        d.add_top(async_fifo(width, depth, style).unwrap());
        hdl_gen::lint::assert_clean(&d);
    }
}

#[test]
fn bad_parameters_are_refused() {
    let style = ResetStyle::AsyncLow;
    for (w, dep) in [(8, 12), (8, 1), (0, 4)] {
        let e = async_fifo(w, dep, style).expect_err("refused");
        assert!(e.has(ErrorKind::Invalid), "{e}");
        assert!(e.to_string().contains("power of two"), "{e}");
    }
    assert!(sync_2ff(0, style).is_err());
}

/// A module that drives a pin through each ECP5 primitive: what a board top does.
#[test]
fn the_primitive_models_are_lint_clean() {
    let mut m = ModuleBuilder::new("ecp5_pins");
    let pll = m.instance("u_pll", &ecp5::ehxplll().unwrap());
    let osc = m.input_async("osc_i", 1);
    let clk = m.wire("clk_fast", 1);
    let lock = m.wire("pll_lock", 1);
    m.set_param(pll, "CLKI_DIV", 2);
    m.set_param(pll, "FEEDBK_PATH", "CLKOP");
    m.attr(pll, "FREQUENCY_PIN_CLKI", "\"25\"");
    m.bind(pll, "CLKI", osc);
    m.bind(pll, "CLKFB", clk);
    for p in [
        "RST",
        "STDBY",
        "PHASESEL0",
        "PHASESEL1",
        "PHASEDIR",
        "PHASESTEP",
        "PHASELOADREG",
        "PLLWAKESYNC",
        "ENCLKOP",
        "ENCLKOS",
    ] {
        m.bind(pll, p, lit(1, 0));
    }
    m.bind_out_to(pll, "CLKOP", clk);
    m.bind_out_to(pll, "LOCK", lock);
    let rst = m.net("rst_fast_n", lock);
    let fast = m.domain_from("fast", clk, Some(rst));
    let t = m.reg_in(fast, "toggle", 1, 0);
    m.assign(t.d, !t.q);
    let oddr = m.instance("u_oddr", &ecp5::oddrx1f().unwrap());
    m.bind_domain(oddr, "SCLK", fast);
    m.bind(oddr, "D0", t.q);
    m.bind(oddr, "D1", !t.q);
    m.bind(oddr, "RST", lit(1, 0));
    let pin_out = m.output("pin_o", 1);
    let dly = m.instance("u_dly", &ecp5::delayg().unwrap());
    m.set_param(dly, "DEL_VALUE", 8);
    let q = m.bind_out(oddr, "Q");
    m.bind(dly, "A", q);
    m.bind_out_to(dly, "Z", pin_out);
    let pin_in = m.input_in(fast, "pin_i", 1);
    let iddr = m.instance("u_iddr", &ecp5::iddrx1f().unwrap());
    m.bind_domain(iddr, "SCLK", fast);
    m.bind(iddr, "D", pin_in);
    m.bind(iddr, "RST", lit(1, 0));
    let q0 = m.bind_out(iddr, "Q0");
    let q1 = m.bind_out(iddr, "Q1");
    let both = m.reg_in(fast, "both", 2, 0);
    m.assign(both.d, cat([q1.ex(), q0.ex()]));
    let y = m.output("both_o", 2);
    m.assign(y, both.q);
    // MDIO-like: driven low while `toggle` is high, read back through a synchronizer.
    let mdio = m.inout("mdio_io", 1);
    let bb = m.instance("u_mdio", &ecp5::bb().unwrap());
    m.bind(bb, "I", lit(1, 0));
    m.bind(bb, "T", !t.q);
    m.bind_inout(bb, "B", mdio);
    let mdio_in = m.bind_out(bb, "O");
    let sync = m.instance("u_mdio_sync", &sync_2ff(1, ResetStyle::AsyncLow).unwrap());
    m.bind_domain(sync, "", fast);
    m.bind(sync, "d_i", mdio_in);
    let mdio_q = m.bind_out(sync, "q_o");
    let mdio_o = m.output("mdio_o", 1);
    m.assign(mdio_o, mdio_q);
    let top = m.finish().unwrap_or_else(|e| panic!("{e}"));
    let mut d = Design::new("ecp5_pins");
    d.add_top(top);
    hdl_gen::lint::assert_clean(&d);
}
