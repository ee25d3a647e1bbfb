//! Lattice ECP5 vendor primitives the board tops instantiate: declared to the builder (ports,
//! parameters, the clock domain of each port) and each with a behavioural model the builder
//! emits to `models/<NAME>.sv` for Verilator. Synthesis (`synth_ecp5`) uses Yosys' own cells.
//!
//! Port lists and parameter names as Yosys' ECP5 cell library declares them; the models are
//! functional, not timing-accurate: zero delay, and the DDR registers without the vendor
//! cell's extra pipeline stages.

use hdl_builder::prelude::*;
use hdl_builder::{Errors, ParamValue};
use std::rc::Rc;

/// `ODDRX1F`: a DDR output register. `D0` leaves on `Q` while `SCLK` is high, `D1` while it is
/// low; both are sampled at the rising edge of `SCLK`. `Q` goes to a pin (no clock domain).
/// `RST` clears the registers (the model clears them at a rising edge of `SCLK`).
pub fn oddrx1f() -> Result<Rc<Module>, Errors> {
    let mut m = ModuleBuilder::model("ODDRX1F");
    m.doc("ODDRX1F: D0 and D1 sampled at the rising edge of SCLK; Q shows D0 while SCLK is high,");
    m.doc("D1 while it is low (the vendor cell adds pipeline stages). RST high at a rising edge");
    m.doc("clears both (Q then drives 0).");
    m.param("GSR", "ENABLED");
    let sclk = m.clock_port("SCLK");
    let d0 = m.input_in(sclk, "D0", 1);
    let d1 = m.input_in(sclk, "D1", 1);
    let rst = m.input_in(sclk, "RST", 1);
    let q = m.output("Q", 1);
    let r0 = m.reg_noreset_in(sclk, "d0", 1);
    let r1 = m.reg_noreset_in(sclk, "d1", 1);
    m.assign(r0.d, mux(rst, lit(1, 0), d0));
    m.assign(r1.d, mux(rst, lit(1, 0), d1));
    let clk = m.domain_clock(sclk);
    m.assign(q, mux(clk, r0.q, r1.q));
    let model = m.finish()?;

    let mut p = ModuleBuilder::primitive("ODDRX1F");
    p.param("GSR", "ENABLED");
    let sclk = p.clock_port("SCLK");
    p.input_in(sclk, "D0", 1);
    p.input_in(sclk, "D1", 1);
    p.input_in(sclk, "RST", 1);
    p.output_async("Q", 1);
    p.set_model(model);
    p.finish()
}

/// `IDDRX1F`: a DDR input register. `Q0` is `D` sampled at a rising edge of `SCLK`, `Q1` at the
/// falling edge before it; both change at the rising edge, in the `SCLK` domain. `D` comes from
/// a pin clocked with `SCLK` (source-synchronous), so it is in that domain. `RST` clears the
/// registers (modelled synchronously, as `ODDRX1F`).
pub fn iddrx1f() -> Result<Rc<Module>, Errors> {
    let mut m = ModuleBuilder::model("IDDRX1F");
    m.doc("IDDRX1F: Q0 is D at a rising edge of SCLK, Q1 is D at the falling edge before it,");
    m.doc("both updated at the rising edge. RST high at a rising edge clears both.");
    m.param("GSR", "ENABLED");
    let sclk = m.clock_port("SCLK");
    let d = m.input_in(sclk, "D", 1);
    let rst = m.input_in(sclk, "RST", 1);
    let q0 = m.output("Q0", 1);
    let q1 = m.output("Q1", 1);
    let clk = m.domain_clock(sclk);
    let clk_n = m.net("sclk_n", !clk);
    let fall = m.domain_from("fall", clk_n, None);
    let f = m.reg_noreset_in(fall, "fall", 1);
    m.comment(f.q, "D at the falling edge of SCLK");
    m.assign(f.d, d);
    let r0 = m.reg_noreset_in(sclk, "q0", 1);
    let r1 = m.reg_noreset_in(sclk, "q1", 1);
    m.assign(r0.d, mux(rst, lit(1, 0), d));
    m.assign(r1.d, mux(rst, lit(1, 0), f.q));
    m.assign(q0, r0.q);
    m.assign(q1, r1.q);
    let model = m.finish()?;

    let mut p = ModuleBuilder::primitive("IDDRX1F");
    p.param("GSR", "ENABLED");
    let sclk = p.clock_port("SCLK");
    p.input_in(sclk, "D", 1);
    p.input_in(sclk, "RST", 1);
    p.output_in(sclk, "Q0", 1);
    p.output_in(sclk, "Q1", 1);
    p.set_model(model);
    p.finish()
}

/// `DELAYG`: a fixed input or output delay (`DEL_VALUE` steps of about 25 ps in
/// `USER_DEFINED` mode). `Z` follows `A`; the model has no delay.
pub fn delayg() -> Result<Rc<Module>, Errors> {
    let mut m = ModuleBuilder::model("DELAYG");
    m.doc(
        "DELAYG: Z follows A (the vendor cell delays it by DEL_VALUE steps; the model does not).",
    );
    m.param("DEL_MODE", "USER_DEFINED");
    m.param("DEL_VALUE", ParamValue::Int(0));
    let a = m.input_async("A", 1);
    let z = m.output("Z", 1);
    m.assign(z, a);
    let model = m.finish()?;

    let mut p = ModuleBuilder::primitive("DELAYG");
    p.param("DEL_MODE", "USER_DEFINED");
    p.param("DEL_VALUE", ParamValue::Int(0));
    let a = p.input_async("A", 1);
    p.output_follows("Z", 1, &[a]);
    p.set_model(model);
    p.finish()
}

/// `BB`: a bidirectional pin buffer. The pad `B` is driven with `I` while `T` is low and left
/// to the outside while `T` is high; `O` reads the pad. Use it for every pin driven and read
/// (MDIO): Yosys maps it to the I/O cell, and the RTL has no `'z` of its own (a generic Yosys
/// run warns about tri-state logic).
pub fn bb() -> Result<Rc<Module>, Errors> {
    let mut m = ModuleBuilder::model("BB");
    m.doc("BB: the pad B is driven with I while T is low, released while T is high; O reads B.");
    let i = m.input_async("I", 1);
    let t = m.input_async("T", 1);
    let o = m.output("O", 1);
    let b = m.inout("B", 1);
    m.tristate(b, !t, i);
    m.assign(o, b);
    let model = m.finish()?;

    let mut p = ModuleBuilder::primitive("BB");
    p.input_async("I", 1);
    p.input_async("T", 1);
    p.output_async("O", 1);
    p.inout("B", 1);
    p.set_model(model);
    p.finish()
}

/// The `EHXPLLL` parameters the board tops set (the rest keep Yosys' defaults), with the
/// defaults the model declares.
const PLL_PARAMS: &[(&str, Default)] = &[
    ("PLLRST_ENA", Default::Str("DISABLED")),
    ("INTFB_WAKE", Default::Str("DISABLED")),
    ("STDBY_ENABLE", Default::Str("DISABLED")),
    ("DPHASE_SOURCE", Default::Str("DISABLED")),
    ("OUTDIVIDER_MUXA", Default::Str("DIVA")),
    ("OUTDIVIDER_MUXB", Default::Str("DIVB")),
    ("OUTDIVIDER_MUXC", Default::Str("DIVC")),
    ("OUTDIVIDER_MUXD", Default::Str("DIVD")),
    ("CLKI_DIV", Default::Int(1)),
    ("CLKOP_ENABLE", Default::Str("ENABLED")),
    ("CLKOP_DIV", Default::Int(8)),
    ("CLKOP_CPHASE", Default::Int(0)),
    ("CLKOP_FPHASE", Default::Int(0)),
    ("FEEDBK_PATH", Default::Str("CLKOP")),
    ("CLKFB_DIV", Default::Int(1)),
    ("CLKOS_ENABLE", Default::Str("DISABLED")),
    ("CLKOS_DIV", Default::Int(8)),
    ("CLKOS_CPHASE", Default::Int(0)),
    ("CLKOS_FPHASE", Default::Int(0)),
];

#[derive(Clone, Copy)]
enum Default {
    Int(i64),
    Str(&'static str),
}

impl Default {
    fn value(self) -> ParamValue {
        match self {
            Default::Int(v) => ParamValue::Int(v),
            Default::Str(s) => ParamValue::Str(s.to_string()),
        }
    }
}

/// The `EHXPLLL` inputs the board tops tie off.
const PLL_CONTROLS: &[&str] = &[
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
];

/// `EHXPLLL`: the PLL, with the ports and parameters the board tops use. `CLKOP` and `CLKOS`
/// are new clocks (no domain of the parent), `LOCK` asynchronous. The model passes `CLKI`
/// through to both outputs and reports lock at once: a simulation drives `CLKI` at the output
/// frequency (the bring-up cores are simulated below the PLL, with their own clocks).
pub fn ehxplll() -> Result<Rc<Module>, Errors> {
    let mut m = ModuleBuilder::model("EHXPLLL");
    m.doc(
        "EHXPLLL: CLKOP and CLKOS follow CLKI (the vendor cell multiplies it; a simulation drives",
    );
    m.doc("CLKI at the output frequency) and LOCK is always high.");
    for (n, v) in PLL_PARAMS {
        m.param(n, v.value());
    }
    let clki = m.input_async("CLKI", 1);
    let clkfb = m.input_async("CLKFB", 1);
    let mut controls = vec![clkfb.ex()];
    for n in PLL_CONTROLS {
        controls.push(m.input_async(n, 1).ex());
    }
    let clkop = m.output("CLKOP", 1);
    let clkos = m.output("CLKOS", 1);
    let lock = m.output("LOCK", 1);
    m.assign(clkop, clki);
    m.assign(clkos, clki);
    m.assign(lock, lit(1, 1));
    m.unused("controls", cat(controls));
    let model = m.finish()?;

    let mut p = ModuleBuilder::primitive("EHXPLLL");
    for (n, v) in PLL_PARAMS {
        p.param(n, v.value());
    }
    p.input_async("CLKI", 1);
    p.input_async("CLKFB", 1);
    for n in PLL_CONTROLS {
        p.input_async(n, 1);
    }
    p.output_async("CLKOP", 1);
    p.output_async("CLKOS", 1);
    p.output_async("LOCK", 1);
    p.set_model(model);
    p.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_primitive_has_a_matching_model() {
        for p in [oddrx1f(), iddrx1f(), delayg(), ehxplll(), bb()] {
            let p = p.unwrap_or_else(|e| panic!("{e}"));
            assert!(p.is_primitive());
            let model = p.model().expect("a model");
            assert_eq!(model.name(), p.name());
            assert_eq!(model.ports().len(), p.ports().len());
        }
    }
}
