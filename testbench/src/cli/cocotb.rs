//! The cocotb side of the harness benchmark.
//!
//! Runs `testbench/cocotb/test_harness_bench.py` under cocotb 1.9 and Verilator on the RTL file
//! of the top the Rust benchmark drives (`rtl/<BenchTop>.sv`, or the folder `TB_RTL_DIR` named
//! when the testbench was built), with the C++ loop's stimulus, and reads back its cycles per
//! second and checksum.
//!
//! - The Python side lives in a project-local virtual environment (`target/cocotb-venv`, or
//!   `--venv`), created with `python3 -m venv` and filled with a pinned cocotb from PyPI the
//!   first time, reused afterwards.
//! - cocotb builds its own Verilator model (cocotb's `verilator.cpp` main loop, with VPI) under
//!   `target/cocotb-build`; the full make and simulator log is kept there as `make.log`.

use crate::rtl::BenchTop;
use crate::sim::Dut;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The cocotb release installed into the virtual environment. cocotb 2.x refuses Verilator
/// 5.006, Debian 12's; 1.9.2 works with it.
pub const COCOTB: &str = "1.9.2";
/// cocotb's one dependency, pinned too so the environment is the same everywhere.
const FIND_LIBPYTHON: &str = "0.5.1";

/// The cocotb tests run (testbench/cocotb/test_harness_bench.py), with the label each is
/// reported under. Both clock from the test with a reused `Timer` (faster than
/// `cocotb.clock.Clock` + `RisingEdge` in cocotb 1.9); they differ in how they write inputs.
pub const TESTS: &[(&str, &str)] = &[
    ("bench_timer_loop", "`.value =` writes"),
    ("bench_timer_loop_immediate", "setimmediatevalue writes"),
];

/// What one cocotb benchmark measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// The cocotb test (a name in `TESTS`).
    pub test: String,
    /// Cycles per run.
    pub cycles: u64,
    /// Runs (each after a reset); `secs` is the fastest.
    pub runs: u64,
    /// Wall time of the fastest run's stimulus loop.
    pub secs: f64,
    /// Sum of `m_data_o` over the transfers, modulo 2^64 (the C++ loop's checksum).
    pub checksum: u64,
}

impl Measured {
    /// Cycles per second of the fastest run.
    pub fn rate(&self) -> f64 {
        self.cycles as f64 / self.secs
    }
}

/// The repository root (the testbench crate's parent).
fn repo() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// The RTL folder the testbench's models were built from: `TB_RTL_DIR` at build time (relative
/// to testbench/, as build.rs reads it), else rtl/.
fn rtl_dir() -> PathBuf {
    match option_env!("TB_RTL_DIR") {
        Some(d) => Path::new(env!("CARGO_MANIFEST_DIR")).join(d),
        None => repo().join("rtl"),
    }
}

/// Runs each of `TESTS` for `cycles` cycles, `runs` times (each after a reset; all in one
/// simulator process), on the same RTL as the Rust benchmark; returns their results in the
/// order of `TESTS`.
pub fn measure(venv: Option<&Path>, cycles: u64, runs: u64) -> Result<Vec<Measured>, String> {
    let venv = match venv {
        Some(v) => {
            std::path::absolute(v).map_err(|e| format!("bad --venv path {}: {e}", v.display()))?
        }
        None => repo().join("target/cocotb-venv"),
    };
    ensure_venv(&venv)?;
    require_tool("make", "make")?;
    require_tool("verilator", "verilator")?;
    require_tool("g++", "g++")?;

    let top = <BenchTop as Dut>::NAME;
    let sv = rtl_dir().join(format!("{top}.sv"));
    if !sv.is_file() {
        return Err(format!(
            "{} not found: run `cargo run -p hdl-gen -- emit` to generate rtl/",
            sv.display()
        ));
    }
    let (rst, active) = if BenchTop::PORTS.iter().any(|p| p.0 == "rst_ni") {
        ("rst_ni", "0")
    } else {
        ("rst_i", "1")
    };
    let makefile = repo().join("testbench/cocotb/Makefile");
    let build = repo().join("target/cocotb-build");
    fs::create_dir_all(&build).map_err(|e| format!("cannot create {}: {e}", build.display()))?;
    // cocotb's makefiles rebuild the model only when a source is newer than it: a different
    // file, top, venv (its library is linked by path) or Makefile would reuse a stale model.
    let stamp = build.join("inputs.txt");
    let inputs = format!(
        "top={top}\nsv={}\nvenv={}\n{}",
        sv.display(),
        venv.display(),
        fs::read_to_string(&makefile)
            .map_err(|e| format!("cannot read {}: {e}", makefile.display()))?
    );
    if fs::read_to_string(&stamp).ok().as_deref() != Some(inputs.as_str()) {
        let _ = fs::remove_dir_all(build.join("sim_build"));
        fs::write(&stamp, &inputs).map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
    }
    let result = build.join("result.txt");
    let _ = fs::remove_file(&result);
    let log_path = build.join("make.log");
    let log = fs::File::create(&log_path)
        .map_err(|e| format!("cannot write {}: {e}", log_path.display()))?;
    let log2 = log
        .try_clone()
        .map_err(|e| format!("cannot write {}: {e}", log_path.display()))?;

    eprintln!(
        "cocotb: building cocotb's Verilator model of {} in {} (if out of date), then running {runs} x {cycles} cycles; log: {}",
        sv.display(),
        build.display(),
        log_path.display()
    );
    let bin = venv.join("bin");
    let path = match std::env::var_os("PATH") {
        Some(p) => {
            let mut v = vec![bin.clone()];
            v.extend(std::env::split_paths(&p));
            std::env::join_paths(v).map_err(|e| format!("bad PATH: {e}"))?
        }
        None => bin.clone().into_os_string(),
    };
    let status = Command::new("make")
        .arg("-C")
        .arg(&build)
        .arg("-f")
        .arg(&makefile)
        .arg(format!("TOPLEVEL={top}"))
        .arg(format!("VERILOG_SOURCES={}", sv.display()))
        .arg("MODULE=test_harness_bench")
        .arg(format!(
            "TESTCASE={}",
            TESTS.iter().map(|t| t.0).collect::<Vec<_>>().join(",")
        ))
        // As `activate` does: cocotb's embedded interpreter finds the venv through these.
        .env("PATH", path)
        .env("VIRTUAL_ENV", &venv)
        .env_remove("PYTHONHOME")
        .env("COCOTB_BENCH_CYCLES", cycles.to_string())
        .env("COCOTB_BENCH_RUNS", runs.to_string())
        .env("COCOTB_BENCH_RESULT", &result)
        .env("COCOTB_BENCH_RESET", rst)
        .env("COCOTB_BENCH_RESET_ACTIVE", active)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log2)
        .status()
        .map_err(|e| format!("cannot run make: {e}; install Debian's make (ci/setup.sh)"))?;
    if !status.success() {
        return Err(format!(
            "the cocotb run failed ({status}); the end of {}:\n{}",
            log_path.display(),
            tail(&log_path, 25)
        ));
    }
    let text = fs::read_to_string(&result).map_err(|e| {
        format!(
            "the cocotb test wrote no result ({}: {e}); see {}:\n{}",
            result.display(),
            log_path.display(),
            tail(&log_path, 25)
        )
    })?;
    let all = parse_result(&text).map_err(|e| format!("{}: {e}", result.display()))?;
    let mut out = Vec::new();
    for (test, _) in TESTS {
        let m = all
            .iter()
            .find(|m| m.test == *test)
            .ok_or_else(|| format!("{}: no result from the test `{test}`", result.display()))?;
        if m.cycles != cycles || m.runs != runs {
            return Err(format!(
                "{}: `{test}` ran {} x {} cycles, {runs} x {cycles} were asked for",
                result.display(),
                m.runs,
                m.cycles
            ));
        }
        out.push(m.clone());
    }
    Ok(out)
}

/// The last `n` lines of a log file.
fn tail(path: &Path, n: usize) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Reads the tests' result lines: `test=NAME cycles=N runs=R seconds=S checksum=C`.
fn parse_result(text: &str) -> Result<Vec<Measured>, String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let get = |key: &str| {
                line.split_whitespace()
                    .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
                    .ok_or_else(|| format!("no `{key}=` in `{line}`"))
            };
            let num = |key: &str| {
                get(key)?
                    .parse::<u64>()
                    .map_err(|e| format!("`{key}` in `{line}`: {e}"))
            };
            let secs = get("seconds")?
                .parse::<f64>()
                .map_err(|e| format!("`seconds` in `{line}`: {e}"))?;
            if secs.is_nan() || secs <= 0.0 {
                return Err(format!("`seconds` in `{line}`: {secs} is not a duration"));
            }
            Ok(Measured {
                test: get("test")?.to_string(),
                cycles: num("cycles")?,
                runs: num("runs")?,
                secs,
                checksum: num("checksum")?,
            })
        })
        .collect()
}

/// Fails, naming the Debian package, when `tool` is not on PATH.
fn require_tool(tool: &str, package: &str) -> Result<(), String> {
    match Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(_) => Ok(()),
        Err(e) => Err(format!(
            "cannot run `{tool}` ({e}): the cocotb flow needs it; install the Debian package {package} (ci/setup.sh does, as root)"
        )),
    }
}

/// The cocotb version importable in the venv, if any.
fn installed_cocotb(python: &Path) -> Option<String> {
    let out = Command::new(python)
        .args(["-c", "import cocotb; print(cocotb.__version__)"])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Creates the virtual environment and installs the pinned cocotb into it, unless it is
/// already there.
fn ensure_venv(venv: &Path) -> Result<(), String> {
    let python = venv.join("bin/python");
    if python.exists() && installed_cocotb(&python).as_deref() == Some(COCOTB) {
        return Ok(());
    }
    if !python.exists() {
        let existed = venv.exists();
        eprintln!(
            "cocotb: creating the Python virtual environment {} (python3 -m venv)",
            venv.display()
        );
        let out = Command::new("python3")
            .args(["-m", "venv"])
            .arg(venv)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| {
                format!("cannot run python3 ({e}): install the Debian packages python3 and python3-venv (ci/setup.sh does, as root)")
            })?;
        if !out.status.success() || !python.exists() {
            // A half-made venv (Debian without python3-venv leaves one without pip) would be
            // mistaken for a usable one next time; only a folder made here is removed.
            if !existed {
                let _ = fs::remove_dir_all(venv);
            }
            // Debian's "ensurepip is not available" goes to stdout.
            let said = String::from_utf8_lossy(&out.stdout).to_string()
                + &String::from_utf8_lossy(&out.stderr);
            let hint = if said.contains("ensurepip") || said.contains("No module named venv") {
                "install the Debian package python3-venv (ci/setup.sh does, as root)"
            } else {
                "see Python's message below; --venv chooses another place"
            };
            return Err(format!(
                "python3 -m venv {} failed: {hint}:\n{}",
                venv.display(),
                said.trim_end()
            ));
        }
    }
    eprintln!(
        "cocotb: installing cocotb=={COCOTB} from PyPI into {} (once; takes a while)",
        venv.display()
    );
    let status = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--progress-bar",
            "off",
        ])
        .arg(format!("cocotb=={COCOTB}"))
        .arg(format!("find-libpython=={FIND_LIBPYTHON}"))
        .stdin(Stdio::null())
        // pip's progress goes to our stderr: stdout carries the benchmark table.
        .stdout(std::io::stderr())
        .status()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if !status.success() {
        return Err(format!(
            "pip install cocotb=={COCOTB} into {} failed ({status}): cocotb comes from PyPI, so pypi.org must be reachable; \
             if the environment is broken, delete {} and run again",
            venv.display(),
            venv.display()
        ));
    }
    match installed_cocotb(&python) {
        Some(v) if v == COCOTB => Ok(()),
        other => Err(format!(
            "after pip install, {} imports cocotb {:?}, not {COCOTB}; delete {} and run again",
            python.display(),
            other,
            venv.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_result_file() {
        let m = parse_result(
            "test=bench_timer_loop cycles=20000 runs=3 seconds=0.5 checksum=6025468646128552262\n\
             test=bench_timer_loop_immediate cycles=20000 runs=3 seconds=0.25 checksum=1\n",
        )
        .unwrap();
        assert_eq!(
            m[0],
            Measured {
                test: "bench_timer_loop".into(),
                cycles: 20000,
                runs: 3,
                secs: 0.5,
                checksum: 6025468646128552262
            }
        );
        assert_eq!(m[0].rate(), 40000.0);
        assert_eq!(m[1].rate(), 80000.0);
        assert!(parse_result("test=a cycles=1 runs=1 checksum=2\n").is_err());
        assert!(parse_result("test=a cycles=1 runs=1 seconds=0 checksum=2\n").is_err());
    }
}
