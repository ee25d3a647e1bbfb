//! Register blocks: elaboration errors point at the Rust line that declared the faulty piece; the
//! CSR module is lint-clean, synthesizes and behaves on its AXI4-Lite port; the Rust accessors
//! compile alone and work; the register map lists what was declared.
//!
//! Verilator, Yosys and rustc must be on the PATH.

use hdl_builder::regs::{Access, RegBlock, RegMap};
use hdl_builder::{Design, EmitOptions, ErrorKind, Errors, Module, ResetStyle};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::rc::Rc;

/// The block the behavioural test bench (regs_tb/demo_csr_tb.sv) is written against.
fn demo() -> RegMap {
    let mut b = RegBlock::new("demo_csr", 6);
    b.doc("A demonstration block with every kind of field.");
    b.reg("ctrl", 0x0, "Engine control")
        .field("en", 0, 1, Access::Rw, 1, "Enable the engine")
        .field("mode", 4, 3, Access::Rw, 2, "Operating mode")
        .field("go", 8, 1, Access::WoPulse, 0, "Start one run")
        .field("len", 16, 12, Access::WoPulse, 0, "Length of the run");
    b.reg("status", 0x4, "Engine status")
        .field("busy", 0, 1, Access::Ro, 0, "A run is in progress")
        .field("count", 8, 16, Access::Ro, 0, "Runs done");
    b.reg("irq", 0x8, "Interrupt status")
        .field("done", 0, 1, Access::W1c, 0, "A run finished")
        .field("err", 1, 2, Access::W1c, 0, "Errors seen | by kind");
    b.reg("scratch", 0x10, "Scratch value for software").field(
        "value",
        0,
        32,
        Access::Rw,
        0xdead_beef,
        "Anything",
    );
    b.finish().unwrap_or_else(|e| panic!("{e}"))
}

/// A fresh scratch folder for one test.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("regs")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a scratch folder");
    dir
}

/// Emits `m` as a design into `dir`; returns the path of its `.sv` file.
fn write_sv(m: &Rc<Module>, dir: &Path) -> PathBuf {
    let mut d = Design::new(m.name());
    d.add_top(m.clone());
    let opts = EmitOptions {
        header: vec!["regs test".into()],
        core_name: "test:regs:csr:0".into(),
        description: "register block test".into(),
    };
    for f in d.emit(&opts).unwrap_or_else(|e| panic!("{e}")) {
        std::fs::write(dir.join(&f.path), &f.contents).expect("write an emitted file");
    }
    dir.join(format!("{}.sv", m.name()))
}

/// Runs a tool, panicking with its output when it fails; returns its standard output.
fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?} ({e}); is it installed?"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

// ---------------------------------------------------------------------------------------------
// Elaboration errors
// ---------------------------------------------------------------------------------------------

/// Checks that `b` fails with exactly one error, about `signal`, declared at `line`.
#[track_caller]
fn one_error(b: RegBlock, signal: Option<&str>, line: u32, words: &str) {
    let errs: Errors = b.finish().expect_err("the block should be refused");
    assert_eq!(errs.0.len(), 1, "expected one error, got:\n{errs}");
    let e = &errs.0[0];
    assert_eq!(e.kind, ErrorKind::Invalid, "{e}");
    assert_eq!(e.module, "blk", "{e}");
    assert_eq!(e.signal.as_deref(), signal, "{e}");
    assert_eq!(e.line(), line, "{e}");
    assert!(e.loc.file().ends_with("regs.rs"), "{e}");
    assert!(e.message.contains(words), "`{words}` not in: {e}");
}

#[test]
fn overlapping_fields_are_refused() {
    let mut b = RegBlock::new("blk", 4);
    let r = b.reg("ctrl", 0x0, "Control");
    let r = r.field("a", 0, 4, Access::Rw, 0, "A");
    let line = line!() + 1;
    r.field("b", 3, 2, Access::Rw, 0, "B");
    one_error(b, Some("ctrl.b"), line, "overlaps field `ctrl.a`");
}

#[test]
fn a_field_past_bit_31_is_refused() {
    let mut b = RegBlock::new("blk", 4);
    let r = b.reg("ctrl", 0x0, "Control");
    let line = line!() + 1;
    r.field("a", 30, 4, Access::Rw, 0, "A");
    one_error(b, Some("ctrl.a"), line, "past bit 31");
}

#[test]
fn an_unaligned_register_is_refused() {
    let mut b = RegBlock::new("blk", 4);
    let line = line!() + 1;
    let r = b.reg("ctrl", 0x6, "Control");
    r.field("a", 0, 1, Access::Rw, 0, "A");
    one_error(b, Some("ctrl"), line, "not a multiple of 4");
}

#[test]
fn a_register_past_the_window_is_refused() {
    let mut b = RegBlock::new("blk", 4);
    b.reg("last", 0xc, "Last in the window")
        .field("a", 0, 1, Access::Rw, 0, "A");
    let line = line!() + 1;
    let r = b.reg("beyond", 0x10, "Past the window");
    r.field("a", 0, 1, Access::Rw, 0, "A");
    one_error(b, Some("beyond"), line, "past the block's 16-byte window");
}

#[test]
fn two_registers_at_one_offset_are_refused() {
    let mut b = RegBlock::new("blk", 4);
    b.reg("one", 0x4, "One")
        .field("a", 0, 1, Access::Rw, 0, "A");
    let line = line!() + 1;
    let r = b.reg("two", 0x4, "Two");
    r.field("a", 0, 1, Access::Rw, 0, "A");
    one_error(b, Some("two"), line, "overlaps register `one`");
}

#[test]
fn duplicate_register_names_are_refused() {
    let mut b = RegBlock::new("blk", 4);
    b.reg("ctrl", 0x0, "One")
        .field("a", 0, 1, Access::Rw, 0, "A");
    let line = line!() + 1;
    let r = b.reg("ctrl", 0x4, "Two");
    r.field("a", 0, 1, Access::Rw, 0, "A");
    one_error(b, Some("ctrl"), line, "already used");
}

#[test]
fn duplicate_field_names_are_refused() {
    let mut b = RegBlock::new("blk", 4);
    let r = b.reg("ctrl", 0x0, "Control");
    let r = r.field("a", 0, 1, Access::Rw, 0, "A");
    let line = line!() + 1;
    r.field("a", 4, 1, Access::Rw, 0, "A again");
    one_error(b, Some("ctrl.a"), line, "already has a field `a`");
}

#[test]
fn a_reset_value_wider_than_its_field_is_refused() {
    let mut b = RegBlock::new("blk", 4);
    let r = b.reg("ctrl", 0x0, "Control");
    let line = line!() + 1;
    r.field("mode", 0, 2, Access::Rw, 4, "Mode");
    one_error(b, Some("ctrl.mode"), line, "does not fit in 2 bits");
}

#[test]
fn a_zero_width_field_is_refused() {
    let mut b = RegBlock::new("blk", 4);
    let r = b.reg("ctrl", 0x0, "Control");
    let line = line!() + 1;
    r.field("a", 0, 0, Access::Rw, 0, "A");
    one_error(b, Some("ctrl.a"), line, "zero bits wide");
}

#[test]
fn illegal_names_and_docs_are_refused() {
    let mut b = RegBlock::new("blk", 4);
    let line = line!() + 1;
    let r = b.reg("Ctrl", 0x0, "Control");
    r.field("a", 0, 1, Access::Rw, 0, "A");
    one_error(b, Some("Ctrl"), line, "not lower_snake_case");

    let mut b = RegBlock::new("blk", 4);
    let r = b.reg("ctrl", 0x0, "Control");
    let line = line!() + 1;
    r.field("a", 0, 1, Access::Rw, 0, "two\nlines");
    one_error(b, Some("ctrl.a"), line, "one line");

    let mut b = RegBlock::new("blk", 4);
    let line = line!() + 1;
    let r = b.reg("ctrl", 0x0, " ");
    r.field("a", 0, 1, Access::Rw, 0, "A");
    one_error(b, Some("ctrl"), line, "no documentation");
}

#[test]
fn a_register_without_fields_and_an_empty_block_are_refused() {
    let mut b = RegBlock::new("blk", 4);
    let line = line!() + 1;
    b.reg("ctrl", 0x0, "Control");
    one_error(b, Some("ctrl"), line, "has no fields");

    let line = line!() + 1;
    let b = RegBlock::new("blk", 4);
    one_error(b, None, line, "has no registers");
}

#[test]
fn address_widths_out_of_range_are_refused() {
    for aw in [0, 1, 33] {
        let line = line!() + 1;
        let mut b = RegBlock::new("blk", aw);
        b.reg("ctrl", 0x0, "Control")
            .field("a", 0, 1, Access::Rw, 0, "A");
        one_error(b, None, line, "out of range");
    }
}

#[test]
fn names_that_generate_the_same_identifier_are_refused() {
    // `a.b_c` and `a_b.c` would both drive `a_b_c_o`.
    let mut b = RegBlock::new("blk", 4);
    b.reg("a", 0x0, "A").field("b_c", 0, 1, Access::Rw, 0, "BC");
    let r = b.reg("a_b", 0x4, "AB");
    let line = line!() + 1;
    r.field("c", 0, 1, Access::Rw, 0, "C");
    one_error(b, Some("a_b.c"), line, "`a_b_c");

    // A field may not take one of the CSR module's own port names.
    let mut b = RegBlock::new("blk", 4);
    let r = b.reg("s", 0x0, "S");
    let line = line!() + 1;
    r.field("axil_awvalid", 0, 1, Access::Ro, 0, "Clash");
    one_error(b, Some("s.axil_awvalid"), line, "`s_axil_awvalid_i`");

    // Register `x_reset`'s offset constant would be register `x`'s reset constant.
    let mut b = RegBlock::new("blk", 4);
    b.reg("x", 0x0, "X").field("a", 0, 1, Access::Rw, 0, "A");
    let line = line!() + 1;
    let r = b.reg("x_reset", 0x4, "X reset");
    r.field("a", 0, 1, Access::Rw, 0, "A");
    one_error(b, Some("x_reset"), line, "`X_RESET`");
}

#[test]
fn every_error_is_reported_at_once() {
    let mut b = RegBlock::new("blk", 4);
    let first = line!() + 1;
    let r = b.reg("ctrl", 0x2, "Control");
    let second = line!() + 1;
    let r = r.field("a", 0, 0, Access::Rw, 0, "A");
    let third = line!() + 1;
    r.field("b", 0, 1, Access::Ro, 2, "B");
    let errs = b.finish().expect_err("three mistakes");
    let lines: Vec<u32> = errs.0.iter().map(|e| e.line()).collect();
    assert_eq!(lines, [first, second, third], "{errs}");
    assert!(errs.0.iter().all(|e| e.kind == ErrorKind::Invalid));
    let shown = errs.to_string();
    assert!(shown.contains("tests/regs.rs"), "{shown}");
    assert!(shown.contains("3 errors"), "{shown}");
}

// ---------------------------------------------------------------------------------------------
// The CSR module
// ---------------------------------------------------------------------------------------------

#[test]
fn the_csr_module_has_the_documented_ports() {
    let m = demo()
        .module(ResetStyle::AsyncLow)
        .unwrap_or_else(|e| panic!("{e}"));
    let ports: Vec<(String, u32, bool)> = m
        .ports()
        .into_iter()
        .map(|p| (p.name, p.width, p.input))
        .collect();
    let want: Vec<(&str, u32, bool)> = vec![
        ("clk_i", 1, true),
        ("rst_ni", 1, true),
        ("s_axil_awvalid_i", 1, true),
        ("s_axil_awready_o", 1, false),
        ("s_axil_awaddr_i", 6, true),
        ("s_axil_wvalid_i", 1, true),
        ("s_axil_wready_o", 1, false),
        ("s_axil_wdata_i", 32, true),
        ("s_axil_wstrb_i", 4, true),
        ("s_axil_bvalid_o", 1, false),
        ("s_axil_bready_i", 1, true),
        ("s_axil_bresp_o", 2, false),
        ("s_axil_arvalid_i", 1, true),
        ("s_axil_arready_o", 1, false),
        ("s_axil_araddr_i", 6, true),
        ("s_axil_rvalid_o", 1, false),
        ("s_axil_rready_i", 1, true),
        ("s_axil_rdata_o", 32, false),
        ("s_axil_rresp_o", 2, false),
        ("ctrl_en_o", 1, false),
        ("ctrl_mode_o", 3, false),
        ("ctrl_go_o", 1, false),
        ("ctrl_go_we_o", 1, false),
        ("ctrl_len_o", 12, false),
        ("ctrl_len_we_o", 1, false),
        ("status_busy_i", 1, true),
        ("status_count_i", 16, true),
        ("irq_done_set_i", 1, true),
        ("irq_done_o", 1, false),
        ("irq_err_set_i", 2, true),
        ("irq_err_o", 2, false),
        ("scratch_value_o", 32, false),
    ];
    let want: Vec<(String, u32, bool)> = want
        .into_iter()
        .map(|(n, w, i)| (n.to_string(), w, i))
        .collect();
    assert_eq!(ports, want);
    let group = |name: &str| {
        m.ports()
            .into_iter()
            .find(|p| p.name == name)
            .and_then(|p| p.group)
    };
    assert_eq!(group("s_axil_rresp_o").as_deref(), Some("AXI4-Lite slave"));
    assert_eq!(
        group("irq_err_o").as_deref(),
        Some("irq (0x08): Interrupt status")
    );
}

/// Blocks that take each branch of the generator: every access kind, sync and async resets, a
/// read-only block (no write data taken at all), a block that takes only some write-data bits,
/// a one-register window (no word address), and the widest window.
fn cases() -> Vec<(RegMap, ResetStyle)> {
    let mut out = vec![(demo(), ResetStyle::AsyncLow)];

    let mut b = RegBlock::new("sync_csr", 6);
    b.reg("ctrl", 0x8, "Control")
        .field("en", 0, 1, Access::Rw, 1, "Enable")
        .field("kick", 1, 1, Access::WoPulse, 0, "Kick");
    b.reg("irq", 0xc, "Interrupts")
        .field("done", 3, 5, Access::W1c, 0, "Done");
    out.push((b.finish().unwrap(), ResetStyle::SyncHigh));

    let mut b = RegBlock::new("ro_csr", 3);
    b.reg("id", 0x0, "Identity")
        .field("vendor", 0, 16, Access::Ro, 0x1234, "Vendor");
    b.reg("version", 0x4, "Version")
        .field("minor", 0, 8, Access::Ro, 0, "Minor")
        .field("major", 24, 8, Access::Ro, 1, "Major");
    out.push((b.finish().unwrap(), ResetStyle::AsyncHigh));

    let mut b = RegBlock::new("sparse_csr", 5);
    b.reg("cfg", 0x1c, "Configuration")
        .field("depth", 9, 5, Access::Rw, 3, "Depth")
        .field("level", 20, 4, Access::Ro, 0, "Level");
    out.push((b.finish().unwrap(), ResetStyle::SyncLow));

    let mut b = RegBlock::new("one_csr", 2);
    b.reg("only", 0x0, "The only register")
        .field("go", 31, 1, Access::WoPulse, 0, "Go")
        .field("value", 0, 31, Access::Rw, 5, "Value");
    out.push((b.finish().unwrap(), ResetStyle::AsyncLow));

    let mut b = RegBlock::new("huge_csr", 32);
    b.reg("low", 0x0, "Lowest")
        .field("a", 0, 1, Access::Rw, 0, "A");
    b.reg("high", 0xffff_fffc, "Highest")
        .field("b", 0, 32, Access::W1c, 0, "B");
    out.push((b.finish().unwrap(), ResetStyle::AsyncLow));
    out
}

#[test]
fn the_csr_module_is_lint_clean_and_synthesizes() {
    let dir = scratch_dir("lint");
    for (map, reset) in cases() {
        let m = map.module(reset).unwrap_or_else(|e| panic!("{e}"));
        let sv = write_sv(&m, &dir);
        let top = m.name();
        run(Command::new("verilator")
            .args(["--lint-only", "-Wall", "--top-module", top])
            .arg(&sv)
            .current_dir(&dir));
        let script = format!(
            "read_verilog -sv {}; hierarchy -check -top {top}; synth -top {top}",
            sv.display()
        );
        run(Command::new("yosys")
            .args(["-q", "-p", &script])
            .current_dir(&dir));
    }
}

#[test]
fn the_csr_module_behaves_on_its_axi4_lite_port() {
    let dir = scratch_dir("sim");
    let m = demo()
        .module(ResetStyle::AsyncLow)
        .unwrap_or_else(|e| panic!("{e}"));
    let sv = write_sv(&m, &dir);
    let tb = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regs_tb/demo_csr_tb.sv");
    run(Command::new("verilator")
        .args([
            "--binary",
            "-j",
            "1",
            "-Wno-fatal",
            "--top-module",
            "demo_csr_tb",
        ])
        .args(["--Mdir", "obj_dir", "-o", "demo_csr_tb"])
        .arg(&tb)
        .arg(&sv)
        .current_dir(&dir));
    let out = run(&mut Command::new(dir.join("obj_dir/demo_csr_tb")));
    assert!(
        out.contains("PASS") && !out.contains("FAIL"),
        "test bench:\n{out}"
    );
}

#[test]
fn output_is_deterministic() {
    let a = demo();
    let b = demo();
    assert_eq!(a.rust(), b.rust());
    assert_eq!(a.markdown(), b.markdown());
    let dir_a = scratch_dir("det_a");
    let dir_b = scratch_dir("det_b");
    let sa = write_sv(&a.module(ResetStyle::AsyncLow).unwrap(), &dir_a);
    let sb = write_sv(&b.module(ResetStyle::AsyncLow).unwrap(), &dir_b);
    assert_eq!(
        std::fs::read_to_string(sa).unwrap(),
        std::fs::read_to_string(sb).unwrap()
    );
}

#[test]
fn declaration_order_does_not_matter() {
    let mut b = RegBlock::new("demo_csr", 6);
    b.doc("A demonstration block with every kind of field.");
    b.reg("scratch", 0x10, "Scratch value for software").field(
        "value",
        0,
        32,
        Access::Rw,
        0xdead_beef,
        "Anything",
    );
    b.reg("irq", 0x8, "Interrupt status")
        .field("err", 1, 2, Access::W1c, 0, "Errors seen | by kind")
        .field("done", 0, 1, Access::W1c, 0, "A run finished");
    b.reg("status", 0x4, "Engine status")
        .field("count", 8, 16, Access::Ro, 0, "Runs done")
        .field("busy", 0, 1, Access::Ro, 0, "A run is in progress");
    b.reg("ctrl", 0x0, "Engine control")
        .field("len", 16, 12, Access::WoPulse, 0, "Length of the run")
        .field("go", 8, 1, Access::WoPulse, 0, "Start one run")
        .field("mode", 4, 3, Access::Rw, 2, "Operating mode")
        .field("en", 0, 1, Access::Rw, 1, "Enable the engine");
    let shuffled = b.finish().unwrap();
    assert_eq!(shuffled.registers(), demo().registers());
    assert_eq!(shuffled.rust(), demo().rust());
    assert_eq!(shuffled.markdown(), demo().markdown());
}

// ---------------------------------------------------------------------------------------------
// Rust accessors and the register map
// ---------------------------------------------------------------------------------------------

/// Uses the accessors of `demo` through a fake bus; compiled against the emitted file.
const ACCESSOR_USE: &str = r#"
#[allow(dead_code)]
#[path = "demo_csr_regs.rs"]
mod regs;

use regs::*;
use std::collections::BTreeMap;

#[derive(Default)]
struct Bus {
    words: BTreeMap<u32, u32>,
}

impl CsrBus for Bus {
    fn read32(&mut self, addr: u32) -> u32 {
        self.words.get(&addr).copied().unwrap_or(0)
    }
    fn write32(&mut self, addr: u32, value: u32) {
        self.words.insert(addr, value);
    }
}

fn main() {
    assert_eq!(WINDOW, 64);
    assert_eq!((CTRL, STATUS, IRQ, SCRATCH), (0x0, 0x4, 0x8, 0x10));
    assert_eq!(REGISTERS.len(), 4);
    assert_eq!(CTRL_RESET, 0x21);
    assert_eq!(SCRATCH_RESET, 0xdead_beef);
    assert_eq!(get_ctrl_en(CTRL_RESET), CTRL_EN_RESET);
    assert_eq!(get_ctrl_mode(CTRL_RESET), 2);
    assert_eq!(CTRL_LEN_MASK, 0x0fff_0000);
    assert_eq!(IRQ_ERR_SHIFT, 1);

    let v = set_ctrl_len(set_ctrl_go(CTRL_RESET, 1), 0xabc);
    assert_eq!(v, 0x0abc_0121);
    assert_eq!(get_ctrl_len(v), 0xabc);
    assert_eq!(set_ctrl_mode(v, 0) & CTRL_MODE_MASK, 0);
    assert_eq!(get_scratch_value(set_scratch_value(0, 7)), 7);

    let mut bus = Bus::default();
    let base = 0x1000;
    write_ctrl(&mut bus, base, v);
    assert_eq!(bus.words[&0x1000], v);
    write_scratch(&mut bus, base, 5);
    modify_scratch(&mut bus, base, |x| x + 1);
    assert_eq!(read_scratch(&mut bus, base), 6);
    write_irq(&mut bus, base, IRQ_DONE_MASK);
    assert_eq!(read_irq(&mut bus, base), 1);
    assert_eq!(read_status(&mut bus, base), 0);
    println!("accessors ok");
}
"#;

#[test]
fn the_rust_accessors_compile_alone_and_work() {
    let dir = scratch_dir("rust");
    let lib = dir.join("demo_csr_regs.rs");
    std::fs::write(&lib, demo().rust()).unwrap();
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    run(Command::new(&rustc)
        .args(["--crate-type", "lib", "--edition", "2021", "-D", "warnings"])
        .arg("--out-dir")
        .arg(&dir)
        .arg(&lib));
    let main = dir.join("use_accessors.rs");
    std::fs::write(&main, ACCESSOR_USE).unwrap();
    run(Command::new(&rustc)
        .args(["--edition", "2021", "-D", "warnings", "-o"])
        .arg(dir.join("use_accessors"))
        .arg(&main));
    let out = run(&mut Command::new(dir.join("use_accessors")));
    assert!(out.contains("accessors ok"), "{out}");
}

#[test]
fn the_rust_accessors_pass_clippy() {
    let dir = scratch_dir("clippy");
    for (map, _) in cases() {
        let file = dir.join(format!("{}_regs.rs", map.name()));
        std::fs::write(&file, map.rust()).unwrap();
        run(Command::new("clippy-driver")
            .args(["--crate-type", "lib", "--edition", "2021", "-D", "warnings"])
            .arg("--out-dir")
            .arg(&dir)
            .arg(&file));
    }
}

#[test]
fn the_rust_accessors_spell_the_map() {
    let rs = demo().rust();
    for line in [
        "pub trait CsrBus {",
        "pub const CTRL: u32 = 0x00;",
        "pub const SCRATCH: u32 = 0x10;",
        "pub const CTRL_MODE_SHIFT: u32 = 4;",
        "pub const CTRL_MODE_MASK: u32 = 0x0000_0070;",
        "pub const SCRATCH_VALUE_RESET: u32 = 0xdead_beef;",
        "pub const fn get_irq_err(reg: u32) -> u32 {",
        "pub const fn set_irq_err(reg: u32, value: u32) -> u32 {",
        "pub fn read_status<B: CsrBus + ?Sized>(bus: &mut B, base: u32) -> u32 {",
        "pub fn write_ctrl<B: CsrBus + ?Sized>(bus: &mut B, base: u32, value: u32) {",
    ] {
        assert!(rs.contains(line), "missing `{line}` in:\n{rs}");
    }
    // No writes to a read-only register; no read-modify-write where it would clear W1C bits
    // or re-send write-only values.
    for absent in ["fn write_status", "fn modify_irq", "fn modify_ctrl"] {
        assert!(!rs.contains(absent), "unexpected `{absent}`");
    }
    assert!(rs.contains("fn modify_scratch"));
}

#[test]
fn the_register_map_lists_registers_then_fields() {
    let md = demo().markdown();
    for line in [
        "# `demo_csr` register map",
        "| Offset | Register | Reset | Description |",
        "| 0x00 | `ctrl` | 0x0000_0021 | Engine control |",
        "| 0x10 | `scratch` | 0xdead_beef | Scratch value for software |",
        "## 0x08 `irq`",
        "| Bits | Field | Access | Reset | Description |",
        "| [0] | `en` | RW | 0x1 | Enable the engine |",
        "| [6:4] | `mode` | RW | 0x2 | Operating mode |",
        "| [27:16] | `len` | WO pulse | 0x0 | Length of the run |",
        "| [23:8] | `count` | RO | 0x0 | Runs done |",
        "| [2:1] | `err` | W1C | 0x0 | Errors seen \\| by kind |",
        "| [31:0] | `value` | RW | 0xdead_beef | Anything |",
    ] {
        assert!(md.contains(line), "missing `{line}` in:\n{md}");
    }
    let ctrl = md.find("## 0x00 `ctrl`").unwrap();
    let status = md.find("## 0x04 `status`").unwrap();
    let scratch = md.find("## 0x10 `scratch`").unwrap();
    assert!(ctrl < status && status < scratch);
}
