//! The Rust binding and the C++ shim emitted for every top compile: the shim against the
//! Verilated model's headers (and, for one top, its coverage side against a coverage model),
//! the binding with rustc `-D warnings`.

mod common;

use common::Scratch;
use std::process::Command;

fn run(cmd: &mut Command) {
    let o = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        o.status.success(),
        "{cmd:?} failed:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn bindings_and_shims_compile() {
    let s = Scratch::new("binding");
    let dir = s.path();
    let o = Command::new(env!("CARGO_BIN_EXE_hdl-gen"))
        .args(["emit", "--out", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let root = String::from_utf8(
        Command::new("verilator")
            .args(["--getenv", "VERILATOR_ROOT"])
            .output()
            .expect("verilator is installed (ci/setup.sh installs it)")
            .stdout,
    )
    .unwrap();
    let inc = format!("{}/include", root.trim());
    let tops: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let n = e.unwrap().file_name().to_string_lossy().to_string();
            n.strip_suffix("_shim.cpp").map(str::to_string)
        })
        .collect();
    assert!(!tops.is_empty());
    // Each top is verilated and compiled alone: spread them over the machine's cores.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|sc| {
        for _ in 0..threads {
            sc.spawn(|| {
                while let Some(top) =
                    tops.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    check_top(dir, &inc, top);
                }
            });
        }
    });
}

/// Verilates `top` (C++ only), compiles its shim against the model's headers with `-Wall
/// -Werror` and its Rust binding with `-D warnings`.
fn check_top(dir: &std::path::Path, inc: &str, top: &str) {
    let obj = dir.join(format!("obj_{top}"));
    // A top with a vendor primitive (the RGMII MAC) finds its behavioural model there.
    let models: &[&str] = if dir.join("models").is_dir() {
        &["-y", "models"]
    } else {
        &[]
    };
    run(Command::new("verilator")
        .current_dir(dir)
        .args(["--cc", "--top-module", top, "--Mdir"])
        .arg(&obj)
        .args(models)
        .arg(format!("{top}.sv")));
    run(Command::new("g++")
        .current_dir(dir)
        .args(["-std=c++17", "-fsyntax-only", "-Wall", "-Werror"])
        .arg(format!("-I{}", obj.display()))
        .arg(format!("-I{inc}"))
        .arg(format!("-I{inc}/vltstd"))
        .arg(format!("{top}_shim.cpp")));
    // The coverage side of the shim (`testbench coverage`), on one small top: it reads the
    // model's coverage counters, which exist only in a model Verilated with coverage.
    if top.starts_with("skid_buffer_w") {
        let cov = dir.join(format!("obj_{top}_cov"));
        run(Command::new("verilator")
            .current_dir(dir)
            .args([
                "--cc",
                "--coverage-line",
                "--coverage-toggle",
                "--coverage-user",
            ])
            .args(["--top-module", top, "--Mdir"])
            .arg(&cov)
            .arg(format!("{top}.sv")));
        run(Command::new("g++")
            .current_dir(dir)
            .args(["-std=c++17", "-fsyntax-only", "-Wall", "-Werror"])
            .arg("-DVM_COVERAGE=1")
            .arg(format!("-I{}", cov.display()))
            .arg(format!("-I{inc}"))
            .arg(format!("-I{inc}/vltstd"))
            .arg(format!("{top}_shim.cpp")));
    }
    run(Command::new("rustc")
        .current_dir(dir)
        .args(["--edition", "2021", "--crate-type", "lib", "-D", "warnings"])
        .args(["--out-dir", obj.to_str().unwrap()])
        .arg(format!("{top}.rs")));
}
