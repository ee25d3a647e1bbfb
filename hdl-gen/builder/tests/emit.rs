//! Emitted text that tools other than Verilator must read as Verilator does.

use hdl_builder::prelude::*;
use hdl_builder::{Design, EmitOptions};

fn emit(m: std::rc::Rc<Module>) -> String {
    let name = m.name().to_string();
    let mut d = Design::new(&name);
    d.add_top(m);
    let files = d
        .emit(&EmitOptions {
            header: vec!["test".into()],
            core_name: "test:emit:emit:0".into(),
            description: "emit".into(),
        })
        .unwrap();
    files
        .into_iter()
        .find(|f| f.path == format!("{name}.sv"))
        .unwrap()
        .contents
}

/// A bit picked out of an expression is a size cast, `1'(x >> i)`; negated it must be
/// `~(1'(...))`: Yosys reads `~1'(...)` as a cast to `~1` bits and stops.
#[test]
fn negated_size_cast_is_parenthesized() {
    let mut m = ModuleBuilder::new("neg_cast");
    let a = m.input("a_i", 4);
    let s = m.input("s_i", 2);
    let y = m.output("y_o", 1);
    m.assign(y, !a.shr_by(s).bit(0));
    let sv = emit(m.finish().unwrap());
    assert!(sv.contains("assign y_o = ~(1'(a_i >> s_i));"), "{sv}");
}
