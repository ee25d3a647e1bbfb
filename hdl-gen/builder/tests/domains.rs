//! Several clock domains in one module, vendor primitives with parameters, and inout ports:
//! the crossing check fires where a value changes domain without a synchronizer, names both
//! domains and the signal, and points at the Rust line; what passes is emitted as expected.

use hdl_builder::prelude::*;
use hdl_builder::{Design, EmitOptions, ErrorKind, Errors, ParamValue};
use std::rc::Rc;

fn crossing(result: Result<Rc<Module>, Errors>, line: u32) -> String {
    let errors = match result {
        Ok(m) => panic!(
            "module `{}` passed; expected a clock-crossing error",
            m.name()
        ),
        Err(e) => e,
    };
    let e = errors
        .find(ErrorKind::ClockCrossing)
        .unwrap_or_else(|| panic!("no clock-crossing error in:\n{errors}"));
    assert_eq!(e.line(), line, "wrong line for:\n{e}");
    assert!(e.loc.file().ends_with("domains.rs"), "{e}");
    assert!(e.message.contains("synchronizer"), "{e}");
    e.to_string()
}

fn emit(top: Rc<Module>) -> Vec<hdl_builder::OutFile> {
    let mut d = Design::new("t");
    d.add_top(top);
    d.emit(&EmitOptions {
        header: vec!["domains test".into()],
        core_name: "test:domains:t:0".into(),
        description: "domains".into(),
    })
    .expect("emits")
}

fn file<'a>(files: &'a [hdl_builder::OutFile], path: &str) -> &'a str {
    &files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("no {path}"))
        .contents
}

/// A two-flop synchronizer: its input is a declared crossing.
fn sync(width: u32) -> Rc<Module> {
    let mut m = ModuleBuilder::new(&format!("sync_w{width}"));
    m.clock();
    m.reset();
    let d = m.input_crossing("d_i", width);
    let q = m.output("q_o", width);
    let a = m.reg("meta", width, 0);
    let b = m.reg("sync", width, 0);
    m.assign(a.d, d);
    m.assign(b.d, a.q);
    m.assign(q, b.q);
    m.finish().expect("a synchronizer passes")
}

#[test]
fn a_register_fed_from_another_domain_is_refused() {
    let mut m = ModuleBuilder::new("x");
    let wr = m.domain("wr");
    let rd = m.domain("rd");
    let a = m.reg_in(wr, "a", 4, 0);
    let en = m.input_in(wr, "en_i", 1);
    m.assign(a.d, mux(en, a.q + 1, a.q));
    let b = m.reg_in(rd, "b", 4, 0);
    let line = line!() + 1;
    m.assign(b.d, a.q ^ 3);
    let y = m.output("y_o", 4);
    m.assign(y, b.q);
    let msg = crossing(m.finish(), line);
    assert!(msg.contains("`b_q`"), "{msg}");
    assert!(msg.contains("`a_q`"), "{msg}");
    assert!(msg.contains("domain `rd` (clock `clk_rd_i`)"), "{msg}");
    assert!(msg.contains("domain `wr` (clock `clk_wr_i`)"), "{msg}");
}

#[test]
fn an_input_of_another_domain_is_refused() {
    let mut m = ModuleBuilder::new("x");
    let rd = m.domain("rd");
    let x = m.input("x_i", 1); // the default domain
    let b = m.reg_in(rd, "b", 1, 0);
    let line = line!() + 1;
    m.assign(b.d, !x);
    let y = m.output("y_o", 1);
    m.assign(y, b.q);
    let msg = crossing(m.finish(), line);
    assert!(msg.contains("`x_i`"), "{msg}");
    assert!(
        msg.contains("the default domain (which has no clock here"),
        "{msg}"
    );
}

#[test]
fn an_asynchronous_input_needs_a_synchronizer() {
    let mut m = ModuleBuilder::new("x");
    let btn = m.input_async("btn_i", 1);
    let r = m.reg("r", 1, 0);
    let line = line!() + 1;
    m.assign(r.d, btn);
    let y = m.output("y_o", 1);
    m.assign(y, r.q);
    let msg = crossing(m.finish(), line);
    assert!(msg.contains("asynchronous"), "{msg}");
}

#[test]
fn a_synchronizer_instance_makes_the_crossing_legal() {
    let s = sync(4);
    let mut m = ModuleBuilder::new("x");
    let wr = m.domain("wr");
    let rd = m.domain("rd");
    let a = m.reg_in(wr, "a", 4, 0);
    m.assign(a.d, a.q + 1);
    let u = m.instance("u_sync", &s);
    m.bind_domain(u, "", rd);
    m.bind(u, "d_i", a.q);
    let synced = m.bind_out(u, "q_o");
    let b = m.reg_in(rd, "b", 4, 0);
    m.assign(b.d, synced);
    let y = m.output("y_o", 4);
    m.assign(y, b.q);
    let top = m.finish().expect("a synchronized crossing passes");
    let files = emit(top);
    let sv = file(&files, "x.sv");
    assert!(sv.contains("  input  logic       clk_wr_i,\n  input  logic       clk_rd_i,\n  input  logic       rst_wr_ni,\n  input  logic       rst_rd_ni,"), "{sv}");
    assert!(
        sv.contains("always_ff @(posedge clk_wr_i or negedge rst_wr_ni) begin"),
        "{sv}"
    );
    assert!(
        sv.contains("always_ff @(posedge clk_rd_i or negedge rst_rd_ni) begin"),
        "{sv}"
    );
    assert!(sv.contains(".clk_i  (clk_rd_i),"), "{sv}");
    assert!(sv.contains(".rst_ni (rst_rd_ni),"), "{sv}");
}

#[test]
fn an_instance_output_keeps_its_domain_in_the_parent() {
    let s = sync(1);
    let mut m = ModuleBuilder::new("x");
    let rd = m.domain("rd");
    let x = m.input_async("x_i", 1);
    let u = m.instance("u_sync", &s);
    m.bind(u, "d_i", x); // synchronized into the default domain
    let synced = m.bind_out(u, "q_o");
    let b = m.reg_in(rd, "b", 1, 0);
    let line = line!() + 1;
    m.assign(b.d, synced);
    let y = m.output("y_o", 1);
    m.assign(y, b.q);
    let msg = crossing(m.finish(), line);
    assert!(msg.contains("`sync_q`, of the default domain"), "{msg}");
}

#[test]
fn an_instance_input_of_another_domain_is_refused() {
    let mut c = ModuleBuilder::new("child");
    let d = c.input("d_i", 1);
    let r = c.reg("r", 1, 0);
    c.assign(r.d, d);
    let o = c.output("q_o", 1);
    c.assign(o, r.q);
    let child = c.finish().expect("child passes");
    let mut m = ModuleBuilder::new("x");
    let wr = m.domain("wr");
    let rd = m.domain("rd");
    let a = m.reg_in(wr, "a", 1, 0);
    m.assign(a.d, !a.q);
    let u = m.instance("u_child", &child);
    m.bind_domain(u, "", rd);
    let line = line!() + 1;
    m.bind(u, "d_i", a.q);
    let y = m.output("y_o", 1);
    m.bind_out_to(u, "q_o", y);
    let msg = crossing(m.finish(), line);
    assert!(msg.contains("input `d_i` of instance `u_child`"), "{msg}");
}

#[test]
fn an_unbound_child_domain_is_an_error() {
    let mut c = ModuleBuilder::new("child2");
    let k = c.domain("k");
    let r = c.reg_in(k, "r", 1, 0);
    c.assign(r.d, !r.q);
    let o = c.output("q_o", 1);
    c.assign(o, r.q);
    let child = c.finish().expect("child passes");
    let mut m = ModuleBuilder::new("x");
    let u = m.instance("u_child", &child);
    let y = m.output("y_o", 1);
    m.bind_out_to(u, "q_o", y);
    let e = m.finish().expect_err("an unbound domain fails");
    assert!(e.has(ErrorKind::UnconnectedInput), "{e}");
    assert!(e.to_string().contains("bind_domain"), "{e}");
}

#[test]
fn a_dual_clock_memory_reads_in_its_own_domain() {
    let mut m = ModuleBuilder::new("dpram");
    let wr = m.domain("wr");
    let rd = m.domain("rd");
    let we = m.input_in(wr, "we_i", 1);
    let wa = m.input_in(wr, "wa_i", 3);
    let wd = m.input_in(wr, "wd_i", 8);
    let re = m.input_in(rd, "re_i", 1);
    let ra = m.input_in(rd, "ra_i", 3);
    let mem = m.memory_in(wr, "ram", 8, 8);
    m.mem_write(mem, we, wa, wd);
    let q = m.mem_read_in(rd, mem, re, ra);
    let y = m.output("q_o", 8);
    m.assign(y, q);
    let top = m.finish().expect("a dual-clock RAM passes");
    let files = emit(top);
    let sv = file(&files, "dpram.sv");
    assert!(sv.contains("  always_ff @(posedge clk_wr_i) begin\n    if (we_i) begin\n      ram[wa_i] <= wd_i;\n    end\n  end\n  always_ff @(posedge clk_rd_i) begin\n    if (re_i) begin\n      ram_rdata_q <= ram[ra_i];"), "{sv}");
}

/// An output register of the ECP5 kind, with its model.
fn oddr() -> Rc<Module> {
    let mut model = ModuleBuilder::new("ODDRX1F");
    model.param("GSR", "ENABLED");
    let sclk = model.clock_port("SCLK");
    let d0 = model.input_in(sclk, "D0", 1);
    let d1 = model.input_in(sclk, "D1", 1);
    let rst = model.input("RST", 1);
    let q = model.output("Q", 1);
    let a = model.reg_noreset_in(sclk, "d0", 1);
    let b = model.reg_noreset_in(sclk, "d1", 1);
    model.assign(a.d, d0);
    model.assign(b.d, d1);
    let clk = model.domain_clock(sclk);
    model.assign(q, mux(clk, a.q, b.q));
    model.unused("rst", rst);
    let model = model.finish().expect("the model passes");

    let mut p = ModuleBuilder::primitive("ODDRX1F");
    p.param("GSR", "ENABLED");
    let sclk = p.clock_port("SCLK");
    p.input_in(sclk, "D0", 1);
    p.input_in(sclk, "D1", 1);
    p.input("RST", 1);
    p.output_async("Q", 1);
    p.set_model(model);
    p.finish().expect("the primitive passes")
}

#[test]
fn a_primitive_is_instantiated_with_parameters_and_modelled() {
    let prim = oddr();
    let s = sync(1);
    let mut m = ModuleBuilder::new("pins");
    let a = m.reg("a", 1, 0);
    m.assign(a.d, !a.q);
    let u = m.instance("u_oddr", &prim);
    m.attr(u, "keep", "1");
    m.set_param(u, "GSR", "DISABLED");
    let dom = m.default_domain();
    m.bind_domain(u, "SCLK", dom);
    m.bind(u, "D0", a.q);
    m.bind(u, "D1", !a.q);
    m.bind(u, "RST", lit(1, 0));
    let pin = m.output("pin_o", 1);
    m.bind_out_to(u, "Q", pin);
    // MDIO: driven low while `a` is high, read back through a synchronizer.
    let io = m.inout("mdio_io", 1);
    m.tristate(io, a.q, lit(1, 0));
    let us = m.instance("u_mdio_sync", &s);
    m.bind(us, "d_i", io);
    let mdio = m.bind_out(us, "q_o");
    let y = m.output("mdio_o", 1);
    m.assign(y, mdio);
    let top = m.finish().expect("the primitive's instance passes");
    let files = emit(top);
    let sv = file(&files, "pins.sv");
    assert!(sv.contains("  inout  wire  mdio_io"), "{sv}");
    assert!(sv.contains("  (* keep = 1 *)\n  ODDRX1F #(\n    .GSR (\"DISABLED\")\n  ) u_oddr (\n    .SCLK (clk_i),"), "{sv}");
    assert!(sv.contains("  assign mdio_io = a_q ? 1'b0 : 'z;"), "{sv}");
    let model = file(&files, "models/ODDRX1F.sv");
    assert!(
        model.contains("module ODDRX1F #(\n  parameter GSR = \"ENABLED\"\n) ("),
        "{model}"
    );
    assert!(
        model.contains("assign unused_params = (GSR != \"\");"),
        "{model}"
    );
    assert!(!files.iter().any(|f| f.path == "ODDRX1F.sv"));
    assert!(!file(&files, "t.f").contains("ODDRX1F"));
    assert!(file(&files, "t.core").contains("      - models/ODDRX1F.sv\n"));
}

#[test]
fn a_register_may_not_read_a_primitive_output_of_no_domain() {
    let prim = oddr();
    let mut m = ModuleBuilder::new("pins3");
    let u = m.instance("u_oddr", &prim);
    let dom = m.default_domain();
    m.bind_domain(u, "SCLK", dom);
    m.bind(u, "D0", lit(1, 0));
    m.bind(u, "D1", lit(1, 0));
    m.bind(u, "RST", lit(1, 0));
    let q = m.bind_out(u, "Q");
    let r = m.reg("r", 1, 0);
    let line = line!() + 1;
    m.assign(r.d, q);
    let y = m.output("y_o", 1);
    m.assign(y, r.q);
    let msg = crossing(m.finish(), line);
    assert!(msg.contains("`oddr_Q`"), "{msg}");
}

#[test]
fn two_drivers_of_an_inout_are_refused() {
    let mut m = ModuleBuilder::new("io2");
    let a = m.input("a_i", 1);
    let io = m.inout("pin_io", 1);
    m.tristate(io, a, lit(1, 0));
    let line = line!() + 1;
    m.tristate(io, !a, lit(1, 1));
    let y = m.output("y_o", 1);
    m.assign(y, io);
    let e = m.finish().expect_err("two drivers fail");
    let e = e.find(ErrorKind::MultiplyDriven).expect("multiply-driven");
    assert_eq!(e.line(), line);
}

#[test]
fn a_parameter_the_primitive_does_not_have_is_refused() {
    let prim = oddr();
    let mut m = ModuleBuilder::new("pins2");
    let u = m.instance("u_oddr", &prim);
    let line = line!() + 1;
    m.set_param(u, "CLKI_DIV", ParamValue::Int(3));
    m.bind(u, "D0", lit(1, 0));
    m.bind(u, "D1", lit(1, 0));
    m.bind(u, "RST", lit(1, 0));
    let e = m.finish().expect_err("an unknown parameter fails");
    let e = e
        .find(ErrorKind::PortMismatch)
        .expect("a port-mismatch error");
    assert_eq!(e.line(), line);
    assert!(e.message.contains("parameters are GSR"), "{e}");
}
