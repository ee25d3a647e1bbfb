//! Golden files pin the emitted text of small blocks: any change to the emitter or a block
//! generator shows up as a reviewed diff. Refresh with `UPDATE_GOLDEN=1 cargo test -p hdl-gen`.

mod common;

use hdl_builder::{Design, EmitOptions, Module, ResetStyle};
use hdl_gen::blocks::{interval_timer::interval_timer, skid_buffer::skid_buffer};
use std::rc::Rc;

fn emit_one(m: Rc<Module>) -> Vec<hdl_builder::OutFile> {
    let mut d = Design::new("golden");
    d.add_top(m);
    d.emit(&EmitOptions {
        header: vec!["golden test header".into()],
        core_name: "test:golden:golden:0".into(),
        description: "golden".into(),
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

fn file(files: &[hdl_builder::OutFile], path: &str) -> String {
    files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("{path} not emitted"))
        .contents
        .clone()
}

#[test]
fn skid_buffer_sv() {
    let files = emit_one(skid_buffer(8, ResetStyle::AsyncLow).unwrap());
    common::golden("skid_buffer_w8.sv", &file(&files, "skid_buffer_w8.sv"));
}

#[test]
fn skid_buffer_binding() {
    let files = emit_one(skid_buffer(8, ResetStyle::AsyncLow).unwrap());
    common::golden("skid_buffer_w8.rs", &file(&files, "skid_buffer_w8.rs"));
    common::golden(
        "skid_buffer_w8_shim.cpp",
        &file(&files, "skid_buffer_w8_shim.cpp"),
    );
}

#[test]
fn interval_timer_sv() {
    let files = emit_one(interval_timer(8, ResetStyle::AsyncLow).unwrap());
    common::golden(
        "interval_timer_w8.sv",
        &file(&files, "interval_timer_w8.sv"),
    );
}

#[test]
fn interval_timer_sync_reset_sv() {
    let files = emit_one(interval_timer(4, ResetStyle::SyncHigh).unwrap());
    common::golden(
        "interval_timer_w4_sync_high.sv",
        &file(&files, "interval_timer_w4.sv"),
    );
}

#[test]
fn core_and_file_list() {
    let files = emit_one(skid_buffer(8, ResetStyle::AsyncLow).unwrap());
    common::golden("golden.core", &file(&files, "golden.core"));
    common::golden("golden.f", &file(&files, "golden.f"));
}

/// A small register block: its CSR logic, Rust accessors and Markdown map are pinned together,
/// so a change to one shows up next to the others in review.
#[test]
fn register_block_sv_rust_markdown() {
    use hdl_builder::regs::{Access, RegBlock};
    let mut b = RegBlock::new("demo_csr", 4);
    b.doc("A demonstration block with one field of each access type.");
    b.reg("ctrl", 0x0, "Control")
        .field("en", 0, 1, Access::Rw, 1, "Enable")
        .field("mode", 4, 2, Access::Rw, 2, "Operating mode")
        .field("kick", 8, 1, Access::WoPulse, 0, "Write 1 to start");
    b.reg("status", 0x4, "Status")
        .field("level", 0, 8, Access::Ro, 0, "Current level")
        .field(
            "overflow",
            31,
            1,
            Access::W1c,
            0,
            "An overflow happened; write 1 to clear",
        );
    let map = b.finish().unwrap_or_else(|e| panic!("{e}"));
    let module = map
        .module(ResetStyle::AsyncLow)
        .unwrap_or_else(|e| panic!("{e}"));
    let files = emit_one(module.clone());
    common::golden("demo_csr.sv", &file(&files, "demo_csr.sv"));
    common::golden("demo_csr_regs.rs", &map.rust());
    common::golden("demo_csr.md", &map.markdown());
    let mut d = Design::new("demo");
    d.add_top(module);
    hdl_gen::lint::assert_clean(&d);
}
