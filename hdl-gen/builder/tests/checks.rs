//! Each elaboration check fires, names the module and signal, and points at the Rust line that
//! built the fault.

use hdl_builder::prelude::*;
use hdl_builder::{ErrorKind, Errors};
use std::rc::Rc;

fn expect(result: Result<Rc<Module>, Errors>, kind: ErrorKind, line: u32) -> String {
    let errors = match result {
        Ok(m) => panic!("module `{}` passed; expected a {kind:?} error", m.name()),
        Err(e) => e,
    };
    let e = errors
        .find(kind)
        .unwrap_or_else(|| panic!("no {kind:?} error in:\n{errors}"));
    assert_eq!(e.line(), line, "wrong line for:\n{e}");
    assert!(e.loc.file().ends_with("checks.rs"), "{e}");
    e.to_string()
}

#[test]
fn width_mismatch_in_assign() {
    let mut m = ModuleBuilder::new("w");
    let a = m.input("a_i", 8);
    let y = m.output("y_o", 16);
    let line = line!() + 1;
    m.assign(y, a);
    let msg = expect(m.finish(), ErrorKind::Width, line);
    assert!(msg.contains("module `w`"), "{msg}");
    assert!(msg.contains("`y_o`"), "{msg}");
    assert!(
        msg.contains("8-bit value is assigned to the 16-bit"),
        "{msg}"
    );
}

#[test]
fn width_mismatch_in_operator() {
    let mut m = ModuleBuilder::new("w");
    let a = m.input("a_i", 8);
    let b = m.input("b_i", 4);
    let y = m.output("y_o", 8);
    let line = line!() + 1;
    let sum = a + b;
    m.assign(y, sum);
    let msg = expect(m.finish(), ErrorKind::Width, line);
    assert!(
        msg.contains("operands of `+` are 8 and 4 bits wide"),
        "{msg}"
    );
}

#[test]
fn constant_too_wide() {
    let mut m = ModuleBuilder::new("w");
    let a = m.input("a_i", 4);
    let y = m.output("y_o", 1);
    let line = line!() + 1;
    m.assign(y, a.eq(20));
    let msg = expect(m.finish(), ErrorKind::Width, line);
    assert!(msg.contains("constant 20 does not fit in 4 bits"), "{msg}");
}

#[test]
fn slice_out_of_range() {
    let mut m = ModuleBuilder::new("w");
    let a = m.input("a_i", 4);
    let y = m.output("y_o", 2);
    let line = line!() + 1;
    let s = a.slice(5, 4);
    m.assign(y, s);
    let msg = expect(m.finish(), ErrorKind::Width, line);
    assert!(
        msg.contains("slice [5:4] is outside a 4-bit value"),
        "{msg}"
    );
}

#[test]
fn combinational_loop() {
    let mut m = ModuleBuilder::new("loopy");
    let a = m.input("a_i", 1);
    let y = m.output("y_o", 1);
    let x = m.wire("x", 1);
    let z = m.wire("z", 1);
    let line = line!() + 1;
    m.assign(x, z & a);
    m.assign(z, !x);
    m.assign(y, z);
    let msg = expect(m.finish(), ErrorKind::CombLoop, line);
    assert!(msg.contains("combinational loop: x -> z -> x"), "{msg}");
}

#[test]
fn loop_through_an_instance() {
    // The child passes its input straight to its output, so the parent's feedback is a loop.
    let mut c = ModuleBuilder::new("pass");
    let i = c.input("i_i", 1);
    let o = c.output("o_o", 1);
    c.assign(o, i);
    let child = c.finish().unwrap();
    let mut m = ModuleBuilder::new("top");
    let y = m.output("y_o", 1);
    let u = m.instance("u_pass", &child);
    let w = m.bind_out(u, "o_o");
    m.bind(u, "i_i", !w);
    m.assign(y, w);
    let e = m.finish().unwrap_err();
    assert!(e.has(ErrorKind::CombLoop), "{e}");
}

#[test]
fn a_register_breaks_a_loop() {
    let mut m = ModuleBuilder::new("counter");
    let y = m.output("y_o", 4);
    let r = m.reg("count", 4, 0);
    m.assign(r.d, r.q + 1);
    m.assign(y, r.q);
    m.finish().expect("a register in the path is not a loop");
}

#[test]
fn undriven_signal() {
    let mut m = ModuleBuilder::new("u");
    let a = m.input("a_i", 1);
    let y = m.output("y_o", 1);
    let line = line!() + 1;
    let x = m.wire("x", 1);
    m.assign(y, x & a);
    let msg = expect(m.finish(), ErrorKind::Undriven, line);
    assert!(msg.contains("`x` is never driven"), "{msg}");
}

#[test]
fn undriven_output() {
    let mut m = ModuleBuilder::new("u");
    let a = m.input("a_i", 1);
    let line = line!() + 1;
    let _y = m.output("y_o", 1);
    m.unused("a", a);
    expect(m.finish(), ErrorKind::Undriven, line);
}

#[test]
fn doubly_driven_signal() {
    let mut m = ModuleBuilder::new("d");
    let a = m.input("a_i", 1);
    let b = m.input("b_i", 1);
    let y = m.output("y_o", 1);
    m.assign(y, a);
    let line = line!() + 1;
    m.assign(y, b);
    let msg = expect(m.finish(), ErrorKind::MultiplyDriven, line);
    assert!(msg.contains("`y_o` has more than one driver"), "{msg}");
}

#[test]
fn doubly_driven_by_assign_and_process() {
    let mut m = ModuleBuilder::new("d");
    let a = m.input("a_i", 1);
    let y = m.output("y_o", 1);
    m.assign(y, a);
    m.comb(|c| {
        c.set(y, !a);
    });
    let e = m.finish().unwrap_err();
    assert!(e.has(ErrorKind::MultiplyDriven), "{e}");
}

#[test]
fn driving_an_input() {
    let mut m = ModuleBuilder::new("d");
    let a = m.input("a_i", 1);
    let y = m.output("y_o", 1);
    m.assign(y, a);
    let line = line!() + 1;
    m.assign(a, 1);
    let msg = expect(m.finish(), ErrorKind::DrivingInput, line);
    assert!(msg.contains("`a_i` is an input port"), "{msg}");
}

#[test]
fn driving_a_register_output() {
    let mut m = ModuleBuilder::new("d");
    let y = m.output("y_o", 2);
    let r = m.reg("r", 2, 0);
    m.assign(r.d, r.q);
    let line = line!() + 1;
    m.assign(r.q, 3);
    m.assign(y, r.q);
    let msg = expect(m.finish(), ErrorKind::DrivingInput, line);
    assert!(msg.contains("drive its next value `r_d`"), "{msg}");
}

#[test]
fn name_collision() {
    let mut m = ModuleBuilder::new("n");
    let a = m.input("a_i", 1);
    let y = m.output("y_o", 1);
    let line = line!() + 1;
    let w = m.wire("a_i", 1);
    m.assign(w, a);
    m.assign(y, w);
    let msg = expect(m.finish(), ErrorKind::NameCollision, line);
    assert!(msg.contains("name `a_i` is already used"), "{msg}");
}

#[test]
fn keyword_name() {
    let mut m = ModuleBuilder::new("n");
    let line = line!() + 1;
    let a = m.input("logic", 1);
    let y = m.output("y_o", 1);
    m.assign(y, a);
    let msg = expect(m.finish(), ErrorKind::NameCollision, line);
    assert!(msg.contains("keyword"), "{msg}");
}

#[test]
fn latch_in_process() {
    let mut m = ModuleBuilder::new("l");
    let a = m.input("a_i", 1);
    let y = m.output("y_o", 1);
    let line = line!() + 1;
    m.comb(|c| {
        c.if_(a, |c| c.set(y, 1));
    });
    let msg = expect(m.finish(), ErrorKind::Latch, line);
    assert!(msg.contains("not assigned on every path"), "{msg}");
}

#[test]
fn unused_bits() {
    let mut m = ModuleBuilder::new("u");
    let line = line!() + 1;
    let a = m.input("a_i", 8);
    let y = m.output("y_o", 4);
    m.assign(y, a.slice(3, 0));
    let msg = expect(m.finish(), ErrorKind::Unused, line);
    assert!(msg.contains("bits [7:4] of `a_i` are never read"), "{msg}");
}

#[test]
fn unused_sink_silences_unused_bits() {
    let mut m = ModuleBuilder::new("u");
    let a = m.input("a_i", 8);
    let y = m.output("y_o", 4);
    m.assign(y, a.slice(3, 0));
    m.unused("a_high", a.slice(7, 4));
    m.finish().expect("bits passed to unused() are read");
}

fn child() -> Rc<Module> {
    let mut c = ModuleBuilder::new("child");
    let i = c.input("i_i", 4);
    let o = c.output("o_o", 4);
    c.assign(o, !i);
    c.finish().unwrap()
}

#[test]
fn unconnected_instance_input() {
    let ch = child();
    let mut m = ModuleBuilder::new("top");
    let y = m.output("y_o", 4);
    let line = line!() + 1;
    let u = m.instance("u_child", &ch);
    let o = m.bind_out(u, "o_o");
    m.assign(y, o);
    let msg = expect(m.finish(), ErrorKind::UnconnectedInput, line);
    assert!(msg.contains("input `i_i` of instance `u_child`"), "{msg}");
}

#[test]
fn instance_port_that_does_not_exist() {
    let ch = child();
    let mut m = ModuleBuilder::new("top");
    let a = m.input("a_i", 4);
    let u = m.instance("u_child", &ch);
    m.bind(u, "i_i", a);
    let line = line!() + 1;
    m.bind(u, "in_i", a);
    let msg = expect(m.finish(), ErrorKind::PortMismatch, line);
    assert!(
        msg.contains("has no port `in_i`; its ports are i_i, o_o"),
        "{msg}"
    );
}

#[test]
fn instance_port_width_mismatch() {
    let ch = child();
    let mut m = ModuleBuilder::new("top");
    let a = m.input("a_i", 8);
    let y = m.output("y_o", 4);
    let u = m.instance("u_child", &ch);
    let line = line!() + 1;
    m.bind(u, "i_i", a);
    let o = m.bind_out(u, "o_o");
    m.assign(y, o);
    let msg = expect(m.finish(), ErrorKind::PortMismatch, line);
    assert!(
        msg.contains("port `i_i` of `child` is 4 bits wide"),
        "{msg}"
    );
}

#[test]
fn instance_output_bound_as_input() {
    let ch = child();
    let mut m = ModuleBuilder::new("top");
    let a = m.input("a_i", 4);
    let u = m.instance("u_child", &ch);
    m.bind(u, "i_i", a);
    let line = line!() + 1;
    m.bind(u, "o_o", a);
    let msg = expect(m.finish(), ErrorKind::PortMismatch, line);
    assert!(msg.contains("is an output; use bind_out"), "{msg}");
}

#[test]
fn foreign_signal() {
    let mut other = ModuleBuilder::new("other");
    let foreign = other.input("f_i", 1);
    let mut m = ModuleBuilder::new("m");
    let y = m.output("y_o", 1);
    let line = line!() + 1;
    m.assign(y, foreign);
    expect(m.finish(), ErrorKind::ForeignSignal, line);
}

#[test]
fn stream_payload_mismatch() {
    let mut m = ModuleBuilder::new("s");
    let a = m.stream_in("s", &StreamDef::new().field("data", 8));
    let b = m.stream_out("m", &StreamDef::new().field("data", 16));
    let line = line!() + 1;
    m.connect(&b, &a);
    let msg = expect(m.finish(), ErrorKind::PortMismatch, line);
    assert!(msg.contains("stream payloads differ"), "{msg}");
}

#[test]
fn streams_connect_as_one_unit() {
    let def = StreamDef::new().field("data", 8).field("last", 1);
    let mut m = ModuleBuilder::new("pass_stream");
    let a = m.stream_in("s", &def);
    let b = m.stream_out("m", &def);
    m.connect(&b, &a);
    let pass = m.finish().expect("a straight stream connection is legal");
    // A parent binds the whole bundle of the child by prefix.
    let mut p = ModuleBuilder::new("parent");
    let s = p.stream_in("s", &def);
    let o = p.stream_out("m", &def);
    let mid = p.stream_wire("mid", &def);
    let u = p.instance("u_pass", &pass);
    p.bind_stream(u, "s", &s);
    p.bind_stream(u, "m", &mid);
    p.connect(&o, &mid);
    p.finish().expect("bundles bind by name");
}

#[test]
fn all_errors_are_reported_together() {
    let mut m = ModuleBuilder::new("many");
    let a = m.input("a_i", 8);
    let y = m.output("y_o", 4);
    let z = m.output("z_o", 1);
    m.assign(y, a);
    m.assign(z, a);
    let e = m.finish().unwrap_err();
    assert_eq!(
        e.0.iter().filter(|x| x.kind == ErrorKind::Width).count(),
        2,
        "{e}"
    );
}

#[test]
fn duplicate_case_label() {
    let mut m = ModuleBuilder::new("c");
    let a = m.input("a_i", 2);
    let y = m.output("y_o", 1);
    let line = line!() + 5;
    m.comb(|c| {
        c.set(y, 0);
        c.case(a, |k| {
            k.arm(1, |c| c.set(y, 1));
            k.arm(1, |c| c.set(y, 0));
        });
    });
    let msg = expect(m.finish(), ErrorKind::Invalid, line);
    assert!(msg.contains("repeats an earlier one"), "{msg}");
}

#[test]
fn bind_reset_drives_a_child_reset_from_a_derived_one() {
    let style = ResetStyle::AsyncLow;
    let mut c = ModuleBuilder::with_reset("child_r", style);
    c.clock();
    c.reset();
    let q = c.reg("q", 1, 0);
    let d = c.input("d_i", 1);
    let o = c.output("q_o", 1);
    c.assign(q.d, d);
    c.assign(o, q.q);
    let child = c.finish().expect("child passes");

    let mut m = ModuleBuilder::with_reset("parent_r", style);
    m.clock();
    let rst = m.reset();
    let run = m.reg("run", 1, 1);
    let en = m.input("en_i", 1);
    m.assign(run.d, en);
    let u = m.instance("u_child", &child);
    let held = m.net("held_rst_n", rst & run.q);
    m.bind_reset(u, held);
    m.bind(u, "d_i", en);
    let y = m.output("y_o", 1);
    m.bind_out_to(u, "q_o", y);
    let top = m.finish().expect("a derived reset passes the checks");
    let mut d = hdl_builder::Design::new("parent_r");
    d.add_top(top);
    let opts = hdl_builder::EmitOptions {
        header: vec!["bind_reset test".into()],
        core_name: "test:checks:bind_reset:0".into(),
        description: "bind_reset".into(),
    };
    let files = d.emit(&opts).expect("emits");
    let sv = &files
        .iter()
        .find(|f| f.path == "parent_r.sv")
        .expect("parent_r.sv")
        .contents;
    assert!(sv.contains(".rst_ni (held_rst_n)"), "{sv}");

    // A child without a reset port refuses it, at the call.
    let mut c2 = ModuleBuilder::new("child_nr");
    let a = c2.input("a_i", 1);
    let b = c2.output("b_o", 1);
    c2.assign(b, a);
    let child2 = c2.finish().expect("child passes");
    let mut m2 = ModuleBuilder::with_reset("parent_nr", style);
    m2.clock();
    let rst2 = m2.reset();
    let u2 = m2.instance("u_child", &child2);
    m2.bind(u2, "a_i", rst2);
    let b2 = m2.bind_out(u2, "b_o");
    m2.unused("child_b", b2);
    let line = line!() + 1;
    m2.bind_reset(u2, rst2);
    let msg = expect(m2.finish(), ErrorKind::PortMismatch, line);
    assert!(msg.contains("has no reset port"), "{msg}");
}

#[test]
fn cover_points_are_emitted_for_simulation_only() {
    let mut m = ModuleBuilder::new("cov");
    let a = m.input("a_i", 4);
    let y = m.output("y_o", 4);
    m.assign(y, a);
    m.cover("a_max", a.eq(15));
    m.cover("a_zero", a.eq(0));
    let module = m
        .finish()
        .expect("a cover point reads its condition, clock and reset");
    let mut d = hdl_builder::Design::new("cov");
    d.add_top(module);
    let files = d
        .emit(&hdl_builder::EmitOptions {
            header: vec!["test".into()],
            core_name: "test:cov:cov:0".into(),
            description: "cov".into(),
        })
        .unwrap();
    let sv = &files.iter().find(|f| f.path == "cov.sv").unwrap().contents;
    assert!(
        sv.contains("input  logic clk_i") || sv.contains("clk_i"),
        "{sv}"
    );
    let block = "`ifndef SYNTHESIS\n  cov_a_max: cover property (@(posedge clk_i) rst_ni && (a_i == 4'hf));\n  cov_a_zero: cover property (@(posedge clk_i) rst_ni && (a_i == 4'd0));\n`endif\n";
    assert!(sv.contains(block), "{sv}");
}

#[test]
fn cover_condition_is_one_bit() {
    let mut m = ModuleBuilder::new("cov");
    let a = m.input("a_i", 4);
    let y = m.output("y_o", 4);
    m.assign(y, a);
    m.cover("a", a);
    let errors = m.finish().unwrap_err();
    let e = errors.find(ErrorKind::Width).expect("a width error");
    assert!(
        e.to_string().contains("cover condition is 4 bits wide"),
        "{e}"
    );
}

#[test]
fn cover_names_are_unique() {
    let mut m = ModuleBuilder::new("cov");
    let a = m.input("a_i", 1);
    let y = m.output("y_o", 1);
    m.assign(y, a);
    m.cover("a", a);
    let line = line!() + 1;
    m.cover("a", !a);
    let msg = expect(m.finish(), ErrorKind::NameCollision, line);
    assert!(msg.contains("`cov_a` is already used"), "{msg}");
}
