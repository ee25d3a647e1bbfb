//! The bring-up core behaves on its UART pins: a SystemVerilog test bench (tests/fpga_tb/) talks
//! the bridge's protocol to the Colorlight i5 core (the chip of its bring-up configuration
//! inside) under Verilator, at an odd number of cycles per bit. The core is the one the board
//! emits, with its clock lowered so a bit takes a few cycles. One bit time only: the model holds
//! the whole chip (a few minutes to build); the UART blocks' own tests cover even bit times.

mod common;

use common::{root, Scratch};
use hdl_builder::{Design, EmitOptions};
use hdl_gen::boards;
use std::process::Command;

fn run(cmd: &mut Command) -> String {
    let o = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{cmd:?} failed:\n{text}");
    text
}

fn simulate(div: u32) {
    let mut b = boards::colorlight_i5();
    let cfg = boards::config(&b).unwrap_or_else(|e| panic!("{e}"));
    b.core_hz = b.baud * u64::from(div);
    let p = boards::params(&b);
    assert_eq!(p.uart_div(), div);
    let core = boards::core(&b, &cfg).unwrap_or_else(|e| panic!("{e}"));
    let mut d = Design::new("tb");
    d.add_top(core);
    let files = d
        .emit(&EmitOptions {
            header: vec!["test".into()],
            core_name: "t:t:t:0".into(),
            description: "t".into(),
        })
        .unwrap();
    let s = Scratch::new(&format!("bringup-{div}"));
    let mut svs = Vec::new();
    for f in files.iter().filter(|f| f.path.ends_with(".sv")) {
        let path = s.path().join(&f.path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, &f.contents).unwrap();
        svs.push(f.path.clone());
    }
    let tb = root().join("hdl-gen/tests/fpga_tb/bringup_core_tb.sv");
    run(Command::new("verilator")
        .current_dir(s.path())
        .args([
            "--binary",
            "-j",
            "2",
            "-Wno-fatal",
            "--top-module",
            "bringup_core_tb",
            // The model holds the whole chip: compiling it unoptimized takes a fraction of the
            // time, and the test runs a few hundred thousand cycles only.
            "-MAKEFLAGS",
            "OPT_FAST=-O0 OPT_SLOW=-O0 OPT_GLOBAL=-O0",
        ])
        .arg(format!("-GDIV={div}"))
        .arg(format!("-GTIMEOUT={}", 1u64 << p.timeout_bits()))
        .args(["--Mdir", "obj_dir", "-o", "tb"])
        .arg(&tb)
        .args(&svs));
    let t = std::time::Instant::now();
    let out = run(&mut Command::new(s.path().join("obj_dir/tb")));
    eprintln!("simulation: {:.1} s", t.elapsed().as_secs_f64());
    assert!(
        out.contains("PASS") && !out.contains("FAIL"),
        "bit time {div}:\n{out}"
    );
}

#[test]
fn the_bridge_answers_over_the_uart_at_7_cycles_per_bit() {
    simulate(7);
}
