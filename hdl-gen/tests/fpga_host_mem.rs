//! The bring-up host memory (`boards/host_mem.rs`) against its golden model: a SystemVerilog
//! test bench (tests/fpga_tb/host_mem_tb.sv) drives random AXI4 bursts (every size, 1 to 8 beats,
//! strobes, gaps on every ready and valid, bursts past the RAM) and AXI4-Lite accesses at once
//! under Verilator, comparing every read with a shadow copy of the bytes.

mod common;

use common::{root, Scratch};
use hdl_builder::{Design, EmitOptions, ResetStyle};
use hdl_gen::boards::host_mem::host_mem;
use std::process::Command;

fn run(cmd: &mut Command) -> String {
    let o = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{cmd:?} failed:\n{text}");
    text
}

#[test]
fn random_bursts_and_lite_accesses_read_back_what_was_written() {
    let mem = host_mem(10, 16, 2, ResetStyle::AsyncLow).unwrap_or_else(|e| panic!("{e}"));
    let mut d = Design::new("tb");
    d.add_top(mem);
    let files = d
        .emit(&EmitOptions {
            header: vec!["test".into()],
            core_name: "t:t:t:0".into(),
            description: "t".into(),
        })
        .unwrap();
    let s = Scratch::new("host-mem");
    let mut svs = Vec::new();
    for f in files.iter().filter(|f| f.path.ends_with(".sv")) {
        std::fs::write(s.path().join(&f.path), &f.contents).unwrap();
        svs.push(f.path.clone());
    }
    let tb = root().join("hdl-gen/tests/fpga_tb/host_mem_tb.sv");
    run(Command::new("verilator")
        .current_dir(s.path())
        .args([
            "--binary",
            "-j",
            "2",
            "-Wno-fatal",
            "--top-module",
            "host_mem_tb",
        ])
        .args(["--Mdir", "obj_dir", "-o", "tb"])
        .arg(&tb)
        .args(&svs));
    for seed in [1, 2, 3] {
        let out = run(Command::new(s.path().join("obj_dir/tb")).arg(format!("+seed={seed}")));
        assert!(
            out.contains("PASS") && !out.contains("FAIL"),
            "seed {seed}:\n{out}"
        );
        eprintln!("seed {seed}: {}", out.lines().next().unwrap_or(""));
    }
}
