//! `testbench coverage`: Verilator line and toggle coverage of the RTL under suites' regressions.
//!
//! 1. Runs one case of each selected property in this process to learn which tops the suites
//!    drive (as `testbench mutants` does).
//! 2. Builds the release testbench with those tops Verilated for coverage (`TB_COVERAGE`), in
//!    a target folder of its own (`<target>/coverage/build`, so the normal
//!    `target/release/testbench` is not touched), with the coverage models in a cache of their
//!    own (`<target>/coverage/models`) and every other model from the normal cache.
//! 3. Runs `regress` of each suite on that binary, as `testbench regress` would (same cases,
//!    seeds, saved regressions); each model adds its counts to its top's sums as it is deleted,
//!    and at the end the run writes one data file per top (`TB_COVERAGE_OUT`).
//! 4. Merges the data (per suite, then over all suites given), writes lcov `.info` through
//!    `verilator_coverage --write-info`, HTML through `genhtml`, and prints the per-module table.

use crate::coverage::{format_table, Coverage, Kind};
use crate::prop::case_seed;
use crate::sim::{self, XInit};
use crate::suites;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const ABOUT: &str = "\
Measures Verilator line and toggle coverage of the RTL under a suite's regression, and prints a
table per module (lines hit/total, toggles hit/total), worst first, flagging modules under 90 %
line coverage.

The tops the suite drives are Verilated again with --coverage-line --coverage-toggle
--coverage-user, kept apart from the normal models (a cache and a target folder of their own,
so nothing else is rebuilt); the suite's regression then runs on that build with the same
properties, cases and seeds as `testbench regress` (saved regressions first), every model
adding its counts as it is deleted.
The data of every top, run and suite is merged point by point (a module counts once, however
many tops instantiate it).

A line is a source line holding a line-coverage point (a procedural block or a branch: `if`,
`else`, a `case` item), hit when one of its points was; a toggle is one bit of one signal that
changed (Verilator skips signals wider than 256 bits, so memories are not counted). Functional
coverage points, the `cover property` statements the generators write through the builder
(`ModuleBuilder::cover`: every DMA error cause, ...), get a column of their own, and those
never hit are listed after the table.

Output, under <out>/<suite>/ (<out> is target/coverage):
  raw/<top>.dat      what the run wrote, one file per top
  coverage.dat       merged (verilator_coverage reads it: --annotate, --rank)
  line.info, toggle.info   lcov, by verilator_coverage --write-info
  html/index.html    genhtml of line.info (branches: the points of a line)
  html-toggle/       genhtml of toggle.info (a line per signal, its bits as branches)
  table.txt          the table, with the command that made it
  uncovered.txt      every line point, signal bit and cover point never hit, per module
With several --suite (or --suite all) each suite gets its folder and the merge over all of
them goes to <out>/<s1>+<s2>/ (<out>/all/ when every suite is measured).

Costs: the first run Verilates the suite's tops with coverage (the chip top takes many minutes)
and builds the testbench's dependencies once in <target>/coverage/build; later runs reuse both.

Examples:
  testbench coverage --suite stdlib --cases 200
  testbench coverage --suite stdlib:2000 --suite dma:300 --suite chip:150
  testbench coverage --suite all --report-only      # merge what the suites' last runs wrote
  testbench coverage --suite dma --rtl DIR --out target/coverage-x   # the tops of another emit
";

/// Arguments of `testbench coverage`.
#[derive(clap::Args, Debug)]
#[command(long_about = ABOUT)]
pub struct Args {
    /// Suites to measure: a name, `name:CASES`, a comma-separated list, or `all`; repeatable.
    #[arg(long, required = true)]
    pub suite: Vec<String>,
    /// Cases of each suite that names no count.
    #[arg(long, default_value_t = 100)]
    pub cases: u64,
    /// Base seed, as `regress --seed`.
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,
    /// Only these properties (comma-separated; with one suite).
    #[arg(long)]
    pub property: Option<String>,
    /// Worker threads of each run [default: the number of CPUs].
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Output folder [default: target/coverage].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Take the driven tops from this RTL folder instead of rtl/ (another emit, a mutant):
    /// `TB_RTL_DIR` with `TB_RTL_TOPS` set to those tops, every other top from rtl/.
    #[arg(long, value_name = "DIR")]
    pub rtl: Option<PathBuf>,
    /// Do not build or run: report on the data the suites' last runs left in <out>/<suite>/raw.
    #[arg(long)]
    pub report_only: bool,
    /// Skip genhtml (the table and the .info files are still written).
    #[arg(long)]
    pub no_html: bool,
}

/// A failure that stops the run (exit code 2).
type Fatal = String;

use super::{out, root, target_dir};

/// Runs `testbench coverage`; returns the exit code.
pub fn run(args: &Args) -> i32 {
    match run_inner(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("testbench coverage: {e}");
            2
        }
    }
}

/// The suites asked for, with their case counts, in the order given.
fn parse_suites(args: &Args) -> Result<(Vec<(String, u64)>, bool), Fatal> {
    let names: Vec<&'static str> = suites::all().iter().map(|s| s.name).collect();
    let mut sel: Vec<(String, u64)> = Vec::new();
    let mut all = false;
    for item in args.suite.iter().flat_map(|s| s.split(',')) {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let (name, cases) = match item.split_once(':') {
            Some((n, c)) => (
                n,
                c.parse()
                    .map_err(|_| format!("--suite {item}: expected NAME or NAME:CASES"))?,
            ),
            None => (item, args.cases),
        };
        let wanted: Vec<&str> = if name == "all" {
            all = true;
            names.clone()
        } else if names.contains(&name) {
            vec![name]
        } else {
            return Err(format!(
                "no suite `{name}`; suites: {} (or all)",
                names.join(", ")
            ));
        };
        for n in wanted {
            if !sel.iter().any(|(s, _)| s == n) {
                sel.push((n.to_string(), cases));
            }
        }
    }
    if sel.is_empty() {
        return Err("--suite names no suite".into());
    }
    if args.property.is_some() && sel.len() > 1 {
        return Err("--property needs a single --suite".into());
    }
    Ok((sel, all))
}

/// The properties of `suite` that run (all, or `--property`).
fn properties(suite: &suites::Suite, only: Option<&str>) -> Result<Vec<&'static str>, Fatal> {
    let all: Vec<&'static str> = suite.properties.iter().map(|p| p.name).collect();
    match only {
        None => Ok(all),
        Some(list) => list
            .split(',')
            .map(|p| {
                all.iter().copied().find(|a| *a == p).ok_or_else(|| {
                    format!(
                        "suite `{}` has no property `{p}`; its properties: {}",
                        suite.name,
                        all.join(", ")
                    )
                })
            })
            .collect(),
    }
}

/// Runs one case of every selected property in this process; the tops they created.
fn discover_tops(sel: &[(String, u64)], only: Option<&str>) -> Result<BTreeSet<String>, Fatal> {
    let all = suites::all();
    let mut tops = BTreeSet::new();
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    sim::take_tops_created();
    for (name, _) in sel {
        let suite = all.iter().find(|s| s.name == name).expect("checked");
        for p in properties(suite, only)? {
            let entry = suite
                .properties
                .iter()
                .find(|e| e.name == p)
                .expect("checked");
            let _ = (entry.run)(case_seed(0x5eed, 0), XInit::Zero, None, None);
        }
    }
    tops.extend(sim::take_tops_created().into_iter().map(str::to_string));
    std::panic::set_hook(hook);
    Ok(tops)
}

/// Builds the coverage testbench; returns its binary and the build's seconds.
fn build(
    root: &Path,
    tops: &BTreeSet<String>,
    rtl: Option<&Path>,
) -> Result<(PathBuf, f64), Fatal> {
    let target = target_dir(root);
    let build_dir = target.join("coverage").join("build");
    let cache = std::env::var_os("TB_MODEL_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| target.join("verilated"));
    let log = target.join("coverage").join("build.log");
    let _ = fs::remove_file(&log);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let t = Instant::now();
    let list = tops.iter().cloned().collect::<Vec<_>>().join(",");
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args(["build", "--release", "-q", "-p", "testbench"])
        .env("CARGO_TARGET_DIR", &build_dir)
        .env("TB_COVERAGE", &list)
        .env("TB_MODEL_CACHE", &cache)
        .env("TB_COVERAGE_CACHE", target.join("coverage").join("models"))
        .env("TB_BUILD_LOG", &log);
    match rtl {
        Some(dir) => cmd.env("TB_RTL_DIR", dir).env("TB_RTL_TOPS", &list),
        None => cmd.env_remove("TB_RTL_DIR").env_remove("TB_RTL_TOPS"),
    };
    let o = cmd.output().map_err(|e| format!("cannot run cargo: {e}"))?;
    let secs = t.elapsed().as_secs_f64();
    if !o.status.success() {
        return Err(format!(
            "the coverage build failed:\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    let built: Vec<String> = fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f[..] {
                ["built", top, s, _] => Some(format!("{top} {s} s")),
                _ => None,
            }
        })
        .collect();
    out(&format!(
        "build     {secs:.1} s ({})",
        if built.is_empty() {
            "every model cached".to_string()
        } else {
            format!("verilated {}", built.join(", "))
        }
    ));
    Ok((build_dir.join("release").join("testbench"), secs))
}

/// Where a source file named in the data is now: the `--rtl` folder, rtl/ or testbench/dpi/ of
/// this tree (cached models keep the path they were Verilated from), else as named.
fn source_path(root: &Path, rtl: Option<&Path>, file: &str) -> String {
    let base = file.rsplit('/').next().unwrap_or(file);
    let dirs = rtl
        .map(Path::to_path_buf)
        .into_iter()
        .chain([root.join("rtl"), root.join("testbench").join("dpi")]);
    for dir in dirs {
        let p = dir.join(base);
        if p.exists() {
            return p.to_string_lossy().to_string();
        }
    }
    file.to_string()
}

/// Merges `raws` (folders of data files) into `dir`'s report; returns the table's text.
fn report(
    root: &Path,
    rtl: Option<&Path>,
    title: &str,
    raws: &[PathBuf],
    dir: &Path,
    html: bool,
    header: &str,
) -> Result<String, Fatal> {
    let io = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    let mut cov = Coverage::new();
    let mut files = 0;
    for raw in raws {
        let mut entries: Vec<PathBuf> = fs::read_dir(raw)
            .map_err(|e| io(raw, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "dat"))
            .collect();
        entries.sort();
        for p in entries {
            let text = fs::read_to_string(&p).map_err(|e| io(&p, e))?;
            cov.add_dat(&text, &p.display().to_string())?;
            files += 1;
        }
    }
    if cov.is_empty() {
        return Err(format!(
            "no coverage data in {}",
            raws.iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let cov = cov.filtered(|_| true, |f| source_path(root, rtl, f));
    fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let write = |name: &str, text: &str| -> Result<PathBuf, Fatal> {
        let p = dir.join(name);
        fs::write(&p, text).map_err(|e| io(&p, e))?;
        Ok(p)
    };
    write("coverage.dat", &cov.to_dat())?;
    for (kind, stem, html_dir) in [
        (Kind::Line, "line", "html"),
        (Kind::Toggle, "toggle", "html-toggle"),
    ] {
        let part = cov.filtered(|p| p.kind == Some(kind), |f| f.to_string());
        let dat = write(&format!("{stem}.dat"), &part.to_dat())?;
        let info = dir.join(format!("{stem}.info"));
        let o = Command::new("verilator_coverage")
            .arg("--write-info")
            .arg(&info)
            .arg(&dat)
            .output()
            .map_err(|e| {
                format!("cannot run verilator_coverage: {e} (ci/setup.sh installs Verilator)")
            })?;
        if !o.status.success() {
            return Err(format!(
                "verilator_coverage --write-info {} failed: {}",
                info.display(),
                String::from_utf8_lossy(&o.stderr)
            ));
        }
        let _ = fs::remove_file(&dat);
        if html {
            let hd = dir.join(html_dir);
            let _ = fs::remove_dir_all(&hd);
            let o = Command::new("genhtml")
                .args(["--quiet", "--branch-coverage", "--legend", "--title"])
                .arg(format!("{title}: {stem} coverage"))
                .arg("--output-directory")
                .arg(&hd)
                .arg(&info)
                .output()
                .map_err(|e| {
                    format!(
                        "cannot run genhtml: {e}; install Debian's lcov (ci/setup.sh does), or pass --no-html"
                    )
                })?;
            if !o.status.success() {
                return Err(format!(
                    "genhtml {} failed: {}",
                    info.display(),
                    String::from_utf8_lossy(&o.stderr)
                ));
            }
        }
    }
    let table = format_table(&cov.table());
    write("table.txt", &format!("{header}\n{table}"))?;
    let mut missed = String::new();
    let mut covers = String::new();
    for (module, items) in cov.never_hit() {
        missed.push_str(&format!("{module}:\n"));
        for i in &items {
            missed.push_str(&format!("  {i}\n"));
            if i.starts_with("cover ") {
                covers.push_str(&format!("  {module}: {i}\n"));
            }
        }
    }
    write("uncovered.txt", &missed)?;
    out(&format!(
        "\n== coverage of {title} ({files} data files, {} points): {}",
        cov.len(),
        dir.display()
    ));
    out(&table);
    if !covers.is_empty() {
        out(&format!("functional coverage points never hit:\n{covers}"));
    }
    Ok(table)
}

/// The runs whose data `raws` hold (their `run.txt`), one line each.
fn runs_of(raws: &[PathBuf]) -> String {
    raws.iter()
        .map(|r| {
            fs::read_to_string(r.join("run.txt"))
                .map(|t| t.trim_end().to_string())
                .unwrap_or_else(|_| format!("{}: run unknown", r.display()))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn run_inner(args: &Args) -> Result<i32, Fatal> {
    let started = Instant::now();
    let root = root();
    let (sel, all) = parse_suites(args)?;
    let out_dir = args
        .out
        .clone()
        .unwrap_or_else(|| target_dir(&root).join("coverage"));
    let out_dir =
        std::path::absolute(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    let raw = |s: &str| out_dir.join(s).join("raw");
    let only = args.property.as_deref();
    let rtl = match &args.rtl {
        Some(d) => Some(
            d.canonicalize()
                .map_err(|e| format!("--rtl {}: {e}", d.display()))?,
        ),
        None => None,
    };
    let all_suites = suites::all();
    for (name, _) in &sel {
        let suite = all_suites.iter().find(|s| s.name == name).expect("checked");
        properties(suite, only)?;
    }

    let mut code = 0;
    let mut times: Vec<String> = Vec::new();
    if !args.report_only {
        let t = Instant::now();
        let tops = discover_tops(&sel, only)?;
        out(&format!(
            "tops      {}: found in {:.1} s",
            tops.iter().cloned().collect::<Vec<_>>().join(", "),
            t.elapsed().as_secs_f64()
        ));
        let (bin, secs) = build(&root, &tops, rtl.as_deref())?;
        times.push(format!("build {secs:.0} s"));
        for (name, cases) in &sel {
            let r = raw(name);
            let _ = fs::remove_dir_all(&r);
            let mut cmd = Command::new(&bin);
            cmd.args(["regress", "--suite", name])
                .args(["--cases", &cases.to_string()])
                .args(["--seed", &args.seed.to_string()])
                .env("TB_COVERAGE_OUT", &r);
            if let Some(p) = only {
                cmd.args(["--property", p]);
            }
            if let Some(j) = args.jobs {
                cmd.args(["--jobs", &j.to_string()]);
            }
            out(&format!(
                "== regress --suite {name} --cases {cases} (coverage build)"
            ));
            let t = Instant::now();
            let status = cmd
                .status()
                .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
            let secs = t.elapsed().as_secs_f64();
            times.push(format!("{name} {secs:.0} s"));
            let run = format!(
                "regress --suite {name}{} --cases {cases} --seed 0x{:x}: exit {}, {secs:.0} s",
                only.map(|p| format!(" --property {p}")).unwrap_or_default(),
                args.seed,
                status
                    .code()
                    .map_or("by a signal".into(), |c| c.to_string())
            );
            fs::create_dir_all(&r)
                .and_then(|()| fs::write(r.join("run.txt"), run + "\n"))
                .map_err(|e| format!("{}: {e}", r.display()))?;
            match status.code() {
                Some(0) => {}
                Some(1) => {
                    eprintln!(
                        "testbench coverage: suite {name} had failing cases; its coverage is still reported"
                    );
                    code = 1;
                }
                c => return Err(format!("regress --suite {name} exited with {c:?}")),
            }
        }
    }

    let t = Instant::now();
    for (name, _) in &sel {
        let r = raw(name);
        if !r.is_dir() {
            return Err(format!(
                "no data for suite {name} in {}: run without --report-only first",
                r.display()
            ));
        }
        let header = runs_of(std::slice::from_ref(&r));
        report(
            &root,
            rtl.as_deref(),
            &format!("suite {name}"),
            &[r],
            &out_dir.join(name),
            !args.no_html,
            &header,
        )?;
    }
    if sel.len() > 1 {
        let every = suites::all()
            .iter()
            .all(|s| sel.iter().any(|(n, _)| n == s.name));
        let name = if all || every {
            "all".to_string()
        } else {
            sel.iter()
                .map(|(s, _)| s.as_str())
                .collect::<Vec<_>>()
                .join("+")
        };
        let raws: Vec<PathBuf> = sel.iter().map(|(s, _)| raw(s)).collect();
        let header = format!("merged over:\n{}", runs_of(&raws));
        report(
            &root,
            rtl.as_deref(),
            &format!("suites {name}"),
            &raws,
            &out_dir.join(&name),
            !args.no_html,
            &header,
        )?;
    }
    times.push(format!("reports {:.0} s", t.elapsed().as_secs_f64()));
    out(&format!(
        "time: {:.0} s in all ({})",
        started.elapsed().as_secs_f64(),
        times.join(", ")
    ));
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(suites: &[&str]) -> Args {
        Args {
            suite: suites.iter().map(|s| s.to_string()).collect(),
            cases: 7,
            seed: 1,
            property: None,
            jobs: None,
            out: None,
            rtl: None,
            report_only: true,
            no_html: true,
        }
    }

    #[test]
    fn suites_with_and_without_case_counts() {
        let (sel, all) = parse_suites(&args(&["stdlib:20,dma", "chip:3", "dma:9"])).unwrap();
        assert!(!all);
        assert_eq!(
            sel,
            vec![
                ("stdlib".to_string(), 20),
                ("dma".to_string(), 7),
                ("chip".to_string(), 3)
            ],
            "a suite named twice keeps its first count"
        );
        let (sel, all) = parse_suites(&args(&["all"])).unwrap();
        assert!(all);
        assert_eq!(sel.len(), suites::all().len());
        assert!(parse_suites(&args(&["nope"]))
            .unwrap_err()
            .contains("no suite `nope`"));
        assert!(parse_suites(&args(&["dma:x"]))
            .unwrap_err()
            .contains("expected NAME or NAME:CASES"));
        let mut a = args(&["dma", "chip"]);
        a.property = Some("x".into());
        assert!(parse_suites(&a).unwrap_err().contains("single --suite"));
    }
}
