//! Lint: every emitted module through `verilator --lint-only -Wall` and a generic Yosys synthesis.
//! `hdl-gen lint` lints what the generator emits now (not rtl/), so it also guards uncommitted
//! changes; tests use [`lint_design`] on designs of their own.

use crate::chip;
use crate::config::Config;
use crate::util::{write_tree, Failure};
use hdl_builder::{Design, EmitOptions, Module};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::rc::Rc;

/// The module and everything below it, children first, each once: the files a tool needs.
fn subtree(m: &Rc<Module>, out: &mut Vec<String>) {
    for c in m.children() {
        subtree(&c, out);
    }
    // A vendor primitive is read as its behavioural model (`models/<name>.sv`).
    let f = m.file_name(false);
    if !out.contains(&f) {
        out.push(f);
    }
}

/// Every module of `modules` as a job: its name and the files of its subtree.
/// A vendor primitive's model is linted inside every top that holds the primitive, not alone.
fn jobs(modules: &[Rc<Module>]) -> Vec<(String, Vec<String>)> {
    modules
        .iter()
        .filter(|m| !m.is_primitive())
        .map(|m| {
            let mut deps = Vec::new();
            subtree(m, &mut deps);
            (m.name().to_string(), deps)
        })
        .collect()
}

/// Runs `job` on every (top, files) pair on as many threads as the machine has cores (the
/// tools are single-threaded processes), the largest top's file (in `dir`) first: Yosys takes
/// from a fraction of a second to nearly two minutes per module, and a long one started last
/// left the other cores idle. `done` sees each result in the pairs' order, as soon as it and
/// every one before it are finished. Returns the results in that order.
fn run_jobs<T: Send>(
    dir: &Path,
    jobs: &[(String, Vec<String>)],
    job: impl Fn(&str, &[String]) -> T + Sync,
    done: impl Fn(&str, &T) + Sync,
) -> Vec<T> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(jobs.len().max(1));
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| {
        let size = std::fs::metadata(dir.join(format!("{}.sv", jobs[i].0))).map_or(0, |m| m.len());
        std::cmp::Reverse(size)
    });
    let next = AtomicUsize::new(0);
    // The results, and how many of them `done` has seen.
    let state: Mutex<(Vec<Option<T>>, usize)> =
        Mutex::new(((0..jobs.len()).map(|_| None).collect(), 0));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let (top, files) = &jobs[i];
                    let r = job(top, files);
                    let mut st = state.lock().expect("no lint thread panics holding it");
                    st.0[i] = Some(r);
                    while let Some(Some(r)) = st.0.get(st.1) {
                        done(&jobs[st.1].0, r);
                        st.1 += 1;
                    }
                }
            });
        }
    });
    let (results, _) = state.into_inner().expect("no lint thread panicked");
    results
        .into_iter()
        .map(|r| r.expect("every job ran"))
        .collect()
}

fn need(tool: &str, package: &str) -> Result<(), Failure> {
    let found = Command::new(tool).arg("-V").output().is_ok();
    if found {
        Ok(())
    } else {
        Err(Failure::usage(format!(
            "`{tool}` is not on PATH; install the Debian package `{package}` (ci/setup.sh does)"
        )))
    }
}

/// What one tool said about one module.
pub struct Outcome {
    /// No warning, no error.
    pub ok: bool,
    /// One short line: `clean`, a cell count, or `FAILED`.
    pub summary: String,
    /// The tool's messages when it failed.
    pub log: String,
}

/// `verilator --lint-only -Wall` on `files` (in `dir`) with `top` as the top module.
pub fn verilator(dir: &Path, top: &str, files: &[String]) -> Outcome {
    let out = Command::new("verilator")
        .current_dir(dir)
        .args(["--lint-only", "-Wall", "--top-module", top])
        .args(files)
        .output();
    match out {
        Ok(o) => {
            let log = String::from_utf8_lossy(&o.stderr).to_string()
                + &String::from_utf8_lossy(&o.stdout);
            let ok = o.status.success() && !log.contains("%Warning") && !log.contains("%Error");
            Outcome {
                ok,
                summary: if ok { "clean".into() } else { "FAILED".into() },
                log,
            }
        }
        Err(e) => Outcome {
            ok: false,
            summary: "FAILED".into(),
            log: e.to_string(),
        },
    }
}

/// Yosys: read with `-sv`, `hierarchy -check`, generic `synth` up to its fine-grained stage, then
/// the same fine-grained mapping without `memory_map`, `check`, `stat`; any warning fails.
///
/// Memories stay `$mem_v2` cells (counted as RAMs, not flip-flops): every builder memory has a
/// registered read, which is what an FPGA block RAM needs, so mapping it to flip-flops would only
/// misreport the design's size (a 1024-word FIFO as 66k flip-flops) and take most of the lint's
/// time.
pub fn yosys(dir: &Path, top: &str, files: &[String]) -> Outcome {
    // Children were (or will be) synthesized on their own: read them as black boxes, so each
    // module's logic goes through Yosys once and `hierarchy -check` still checks every port.
    let (own, children): (Vec<&String>, Vec<&String>) = files
        .iter()
        .partition(|f| f.as_str() == format!("{top}.sv"));
    let lib = if children.is_empty() {
        String::new()
    } else {
        format!(
            "read_verilog -sv -lib {}; ",
            children
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        )
    };
    let script = format!(
        "{lib}read_verilog -sv {}; hierarchy -check -top {top}; synth -top {top} -run :fine; \
         opt -fast -full; techmap; opt -fast; abc -fast; opt -fast; hierarchy -check; check; stat",
        own.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ")
    );
    let out = Command::new("yosys")
        .current_dir(dir)
        .args(["-Q", "-T", "-p", &script])
        .output();
    match out {
        Ok(o) => {
            let log = String::from_utf8_lossy(&o.stdout).to_string()
                + &String::from_utf8_lossy(&o.stderr);
            let warnings: Vec<&str> = log
                .lines()
                .filter(|l| l.starts_with("Warning:") || l.starts_with("ERROR:"))
                .collect();
            let ok = o.status.success() && warnings.is_empty();
            // The last statistics block is the top module's.
            let stat = log.rsplit("=== ").next().unwrap_or("");
            let cells = stat
                .lines()
                .find_map(|l| l.trim().strip_prefix("Number of cells:"))
                .map(|n| n.trim().to_string())
                .unwrap_or_else(|| "?".into());
            let ffs: u64 = stat
                .lines()
                .filter(|l| l.contains("DFF"))
                .filter_map(|l| l.split_whitespace().last()?.parse::<u64>().ok())
                .sum();
            let rams: u64 = stat
                .lines()
                .filter(|l| l.trim_start().starts_with("$mem"))
                .filter_map(|l| l.split_whitespace().last()?.parse::<u64>().ok())
                .sum();
            Outcome {
                ok,
                summary: if ok {
                    format!(
                        "{cells} cells, {ffs} flip-flops, {rams} RAM{}",
                        if rams == 1 { "" } else { "s" }
                    )
                } else {
                    "FAILED".into()
                },
                log: if warnings.is_empty() {
                    log.lines()
                        .rev()
                        .take(20)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect::<Vec<_>>()
                        .join("\n")
                } else {
                    warnings.join("\n")
                },
            }
        }
        Err(e) => Outcome {
            ok: false,
            summary: "FAILED".into(),
            log: e.to_string(),
        },
    }
}

fn scratch_dir() -> PathBuf {
    std::env::temp_dir().join(format!("hdl-gen-lint-{}", std::process::id()))
}

/// `hdl-gen lint`.
pub fn run(cfg: &Config) -> Result<(), Failure> {
    need("verilator", "verilator")?;
    need("yosys", "yosys")?;
    let design = chip::design(cfg)?;
    let files = chip::files(cfg)?;
    let modules = design.modules()?;
    let dir = scratch_dir();
    write_tree(&dir, &files)
        .map_err(|e| Failure::usage(format!("cannot write to {}: {e}", dir.display())))?;
    let width = modules.iter().map(|m| m.name().len()).max().unwrap_or(0);
    let jobs = jobs(&modules);
    let results = run_jobs(
        &dir,
        &jobs,
        |top, deps| (verilator(&dir, top, deps), yosys(&dir, top, deps)),
        |top, (v, y)| {
            let status = if v.ok && y.ok { "ok  " } else { "FAIL" };
            println!(
                "{status} {top:width$}  verilator -Wall: {:6}  yosys: {}",
                v.summary, y.summary
            );
            if !v.ok {
                eprintln!("{}", v.log.trim_end());
            }
            if !y.ok {
                eprintln!("{}", y.log.trim_end());
            }
        },
    );
    let failed: Vec<&str> = jobs
        .iter()
        .zip(&results)
        .filter(|(_, (v, y))| !(v.ok && y.ok))
        .map(|((name, _), _)| name.as_str())
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    if failed.is_empty() {
        println!("lint: {} modules clean", modules.len());
        Ok(())
    } else {
        Err(Failure {
            code: 1,
            message: format!("lint failed for {}", failed.join(", ")),
        })
    }
}

/// Lints every module of `design` (for tests): emits into a scratch folder and returns, per
/// module, its name and both tools' outcomes.
///
/// With `LINT_TESTS_YOSYS=0` the Yosys half is left out (its outcome says so): ci/test.sh sets
/// it for `cargo test`, where the lint tests took about 135 of the tests' 355 s, nearly all of
/// it Yosys (`qos_lint` 27 s with it, under 2 s without); ci/nightly.sh runs the tests whole.
/// `hdl-gen lint` (every module of rtl/ through both tools) is not affected.
pub fn lint_design(design: &Design) -> Result<Vec<(String, Outcome, Outcome)>, Failure> {
    let with_yosys = std::env::var_os("LINT_TESTS_YOSYS").is_none_or(|v| v != "0");
    need("verilator", "verilator")?;
    if with_yosys {
        need("yosys", "yosys")?;
    }
    let files = design.emit(&EmitOptions {
        header: vec!["lint".into()],
        core_name: "lint:lint:lint:0".into(),
        description: "lint".into(),
    })?;
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = scratch_dir().with_extension(n.to_string());
    write_tree(&dir, &files)
        .map_err(|e| Failure::usage(format!("cannot write to {}: {e}", dir.display())))?;
    let jobs = jobs(&design.modules()?);
    let results = run_jobs(
        &dir,
        &jobs,
        |top, deps| {
            let y = if with_yosys {
                yosys(&dir, top, deps)
            } else {
                Outcome {
                    ok: true,
                    summary: "not run (LINT_TESTS_YOSYS=0)".into(),
                    log: String::new(),
                }
            };
            (verilator(&dir, top, deps), y)
        },
        |_, _| {},
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(jobs
        .into_iter()
        .zip(results)
        .map(|((name, _), (v, y))| (name, v, y))
        .collect())
}

/// Asserts that the module `top` of `design`, with every module under it, passes
/// `verilator --lint-only -Wall` as one hierarchy (for a chip top of a configuration that is
/// not the shipped one: linting each of its modules alone would take minutes).
pub fn assert_top_verilator_clean(design: &Design, top: &str) {
    need("verilator", "verilator").unwrap_or_else(|f| panic!("{}", f.message));
    let files = design
        .emit(&EmitOptions {
            header: vec!["lint".into()],
            core_name: "lint:lint:lint:0".into(),
            description: "lint".into(),
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = scratch_dir().with_extension(format!("top_{top}"));
    write_tree(&dir, &files).unwrap_or_else(|e| panic!("{e}"));
    let m = design
        .modules()
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .find(|m| m.name() == top)
        .unwrap_or_else(|| panic!("no module `{top}` in the design"));
    let mut deps = Vec::new();
    subtree(&m, &mut deps);
    let v = verilator(&dir, m.name(), &deps);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(v.ok, "{top}: verilator -Wall:\n{}", v.log);
}

/// Asserts that every module of `design` passes `verilator --lint-only -Wall` (for tests of
/// parameter sets too large to synthesize on every run; the shipped configuration's modules go
/// through Yosys in `hdl-gen lint`).
pub fn assert_verilator_clean(design: &Design) {
    need("verilator", "verilator").unwrap_or_else(|f| panic!("{}", f.message));
    let files = design
        .emit(&EmitOptions {
            header: vec!["lint".into()],
            core_name: "lint:lint:lint:0".into(),
            description: "lint".into(),
        })
        .unwrap_or_else(|e| panic!("{e}"));
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = scratch_dir().with_extension(format!("v{n}"));
    write_tree(&dir, &files).unwrap_or_else(|e| panic!("{e}"));
    let jobs = jobs(&design.modules().unwrap_or_else(|e| panic!("{e}")));
    let results = run_jobs(
        &dir,
        &jobs,
        |top, deps| verilator(&dir, top, deps),
        |_, _| {},
    );
    let _ = std::fs::remove_dir_all(&dir);
    for ((name, _), v) in jobs.iter().zip(results) {
        assert!(v.ok, "{name}: verilator -Wall:\n{}", v.log);
    }
}

/// Asserts that every module of `design` is lint-clean and synthesizes (for tests).
pub fn assert_clean(design: &Design) {
    let results = lint_design(design).unwrap_or_else(|f| panic!("{}", f.message));
    for (name, v, y) in results {
        assert!(v.ok, "{name}: verilator -Wall:\n{}", v.log);
        assert!(y.ok, "{name}: yosys:\n{}", y.log);
    }
}
