//! Golden files for the FIFO and arbiter generators: one FIFO of each flavour and one arbiter
//! of each kind, so changes to their emitted text show up as reviewed diffs. Refresh with
//! `UPDATE_GOLDEN=1 cargo test -p hdl-gen --test stdlib_fifo_arbiter_golden`.

mod common;

use hdl_builder::{Design, EmitOptions, Module, ResetStyle};
use hdl_gen::blocks::arbiter::{rr_arbiter, wrr_arbiter};
use hdl_gen::blocks::fifo::fifo;
use std::rc::Rc;

fn sv(m: Rc<Module>) -> String {
    let name = format!("{}.sv", m.name());
    let mut d = Design::new("golden");
    d.add_top(m);
    d.emit(&EmitOptions {
        header: vec!["golden test header".into()],
        core_name: "test:golden:golden:0".into(),
        description: "golden".into(),
    })
    .unwrap_or_else(|e| panic!("{e}"))
    .into_iter()
    .find(|f| f.path == name)
    .unwrap_or_else(|| panic!("{name} not emitted"))
    .contents
}

#[test]
fn fifo_fwft_sv() {
    let m = fifo(8, 5, true, ResetStyle::AsyncLow).unwrap();
    common::golden("fifo_fwft_w8_d5.sv", &sv(m));
}

#[test]
fn fifo_read_port_sv() {
    let m = fifo(8, 5, false, ResetStyle::AsyncLow).unwrap();
    common::golden("fifo_w8_d5.sv", &sv(m));
}

#[test]
fn rr_arbiter_sv() {
    let m = rr_arbiter(4, ResetStyle::AsyncLow).unwrap();
    common::golden("rr_arbiter_n4.sv", &sv(m));
}

#[test]
fn wrr_arbiter_sv() {
    let m = wrr_arbiter(3, 4, ResetStyle::AsyncLow).unwrap();
    common::golden("wrr_arbiter_n3_w4.sv", &sv(m));
}
