//! `testbench regress`: replays the suite's saved regressions, then runs `--cases` cases, spread
//! over the suite's properties and over `--jobs` threads, each shrunk and saved on failure.

use crate::prop::{case_seed, panic_message, saved_seeds, CaseResult, Failure};
use crate::sim::XInit;
use crate::suites;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Arguments of `testbench regress`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Suite to run (`stdlib`, ...).
    #[arg(long)]
    pub suite: String,
    /// Number of random cases.
    #[arg(long, default_value_t = 100)]
    pub cases: u64,
    /// Base seed; case i uses a seed derived from it and i. Same seed, same cases.
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,
    /// Run only shard K of M (1-based): the K-th of M contiguous blocks of the case indices
    /// (cases i with (K-1)*N/M <= i < K*N/M for N cases) and the saved regressions j with
    /// j % M == K - 1 (the M shards together run the whole regression once).
    #[arg(long)]
    pub shard: Option<String>,
    /// Folder for waveforms of the minimal failing cases [default: target/waves].
    #[arg(long)]
    pub waves: Option<PathBuf>,
    /// Write a JUnit XML report here.
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// Regression file: failing seeds are saved here and replayed first
    /// [default: testbench/regressions/<suite>.txt].
    #[arg(long)]
    pub regressions: Option<PathBuf>,
    /// Run only these properties of the suite (comma-separated names) [default: all].
    #[arg(long)]
    pub property: Option<String>,
    /// Record every case's connection into this pcap file (suite nvme-tcp: TCP/IPv4 frames on
    /// port 4420, both directions, for Wireshark and tshark).
    #[arg(long)]
    pub pcap: Option<PathBuf>,
    /// Worker threads [default: the number of CPUs].
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Start no new case once one has failed (the failure is still shrunk, saved and
    /// reported): what a mutant run needs, one shrunk failure, not one per case.
    #[arg(long)]
    pub fail_fast: bool,
    /// Initial values of every model's registers, memory words and X assignments: `zero`
    /// (two-state, all zero) or `random` (drawn from a seed derived from the case's seed, so a
    /// case replays and shrinks with the same values) [default: $TB_X_INIT, else zero].
    /// Saved regressions replay as they were saved, whatever this says.
    #[arg(long, value_name = "zero|random")]
    pub x_init: Option<XInit>,
}

fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let bad = || format!("--shard {s}: expected K/M with 1 <= K <= M, e.g. 2/4");
    let (k, m) = s.split_once('/').ok_or_else(bad)?;
    let (k, m): (u64, u64) = (
        k.trim().parse().map_err(|_| bad())?,
        m.trim().parse().map_err(|_| bad())?,
    );
    if m == 0 || k == 0 || k > m {
        return Err(bad());
    }
    Ok((k, m))
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Writes the JUnit XML report: one `<testsuite>` with the run's settings and the NVMe
/// commands its cases completed as `<properties>`, a `<testcase>` per case.
fn junit(
    path: &Path,
    suite: &str,
    run: &[(&str, String)],
    results: &[(String, CaseResult, f64)],
) -> std::io::Result<()> {
    let failures = results.iter().filter(|r| r.1.failure.is_some()).count();
    let total: f64 = results.iter().map(|r| r.2).sum();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    x.push_str(&format!(
        "<testsuites><testsuite name=\"{suite}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" time=\"{total:.3}\">\n  <properties>\n",
        results.len()
    ));
    for (name, value) in run {
        x.push_str(&format!(
            "    <property name=\"{name}\" value=\"{}\"/>\n",
            xml_escape(value)
        ));
    }
    x.push_str("  </properties>\n");
    for (id, r, secs) in results {
        x.push_str(&format!(
            "  <testcase classname=\"{suite}.{}\" name=\"{}\" time=\"{secs:.3}\"",
            r.property,
            xml_escape(id)
        ));
        match &r.failure {
            None => x.push_str("/>\n"),
            Some(f) => {
                x.push_str(&format!(
                    "><failure message=\"{}\">{}</failure></testcase>\n",
                    xml_escape(f.reason.lines().next().unwrap_or("")),
                    xml_escape(&f.to_string())
                ));
            }
        }
    }
    x.push_str("</testsuite></testsuites>\n");
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d)?;
    }
    std::fs::write(path, x)
}

/// Runs `testbench regress`; returns the exit code.
pub fn run(args: &Args) -> i32 {
    let all = suites::all();
    let Some(suite) = all.iter().find(|s| s.name == args.suite) else {
        let names: Vec<&str> = all.iter().map(|s| s.name).collect();
        eprintln!(
            "testbench: no suite `{}`; suites: {}",
            args.suite,
            names.join(", ")
        );
        return 2;
    };
    let wanted: Option<Vec<&str>> = args.property.as_deref().map(|p| p.split(',').collect());
    if let Some(w) = &wanted {
        for name in w {
            if !suite.properties.iter().any(|p| p.name == *name) {
                let names: Vec<&str> = suite.properties.iter().map(|p| p.name).collect();
                eprintln!(
                    "testbench: suite `{}` has no property `{name}`; its properties: {}",
                    suite.name,
                    names.join(", ")
                );
                return 2;
            }
        }
    }
    let selected: Vec<usize> = (0..suite.properties.len())
        .filter(|&i| {
            wanted
                .as_ref()
                .is_none_or(|w| w.contains(&suite.properties[i].name))
        })
        .collect();
    let (k, m) = match args.shard.as_deref().map(parse_shard).transpose() {
        Ok(s) => s.unwrap_or((1, 1)),
        Err(e) => {
            eprintln!("testbench: {e}");
            return 2;
        }
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let regressions = args
        .regressions
        .clone()
        .unwrap_or_else(|| root.join("regressions").join(format!("{}.txt", suite.name)));
    let waves = args
        .waves
        .clone()
        .unwrap_or_else(|| root.parent().unwrap_or(root).join("target").join("waves"));

    let mutant = match crate::mutants::selected_from_env() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("testbench: {e}");
            return 2;
        }
    };
    let x_init = args.x_init.unwrap_or_else(XInit::from_env);
    let xr = |x: XInit| {
        if x == XInit::Random {
            " x-init=random"
        } else {
            ""
        }
    };
    // (label, property index, seed, initial values): this shard's saved regressions first
    // (the j-th saved case of the selected properties goes to shard j % M + 1, so M shards
    // replay each once between them), then this shard's cases.
    let mut work: Vec<(String, usize, u64, XInit)> = Vec::new();
    let mut j = 0u64;
    for &pi in &selected {
        let p = &suite.properties[pi];
        for (s, x) in saved_seeds(&regressions, p.name) {
            if j % m == k - 1 {
                work.push((format!("{} saved 0x{s:016x}{}", p.name, xr(x)), pi, s, x));
            }
            j += 1;
        }
    }
    let replays = work.len();
    let n = selected.len() as u64;
    // Shard K of M runs a contiguous block of case indices, so every shard draws each
    // property in turn (with `i % M`, M a multiple of the properties would give each shard one).
    let block = |k: u64| (u128::from(args.cases) * u128::from(k) / u128::from(m)) as u64;
    for i in block(k - 1)..block(k) {
        let pi = selected[(i % n) as usize];
        let s = case_seed(args.seed, i);
        work.push((
            format!(
                "{} case {i} seed 0x{s:016x}{}",
                suite.properties[pi].name,
                xr(x_init)
            ),
            pi,
            s,
            x_init,
        ));
    }
    eprintln!(
        "{}: {} cases (seed 0x{:x}, shard {k}/{m}, initial values {x_init}), {replays} saved regressions replayed first",
        suite.name,
        work.len() - replays,
        args.seed
    );

    if args.pcap.is_some() {
        match suite.name {
            "nvme-tcp" => suites::nvme_tcp::start_capture(),
            "rdma" => suites::rdma::start_capture(),
            _ => {
                eprintln!(
                    "testbench: --pcap records transport traffic: use it with --suite nvme-tcp or rdma"
                );
                return 2;
            }
        }
    }

    // Panics inside properties are reported as case failures; the default hook would also
    // print each one (and proptest's shrinking re-runs them many times). With RUST_BACKTRACE
    // set it stays, to show where a property panicked.
    if std::env::var_os("RUST_BACKTRACE").is_none() {
        std::panic::set_hook(Box::new(|_| {}));
    }
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let results: Mutex<Vec<Option<(String, CaseResult, f64)>>> = Mutex::new(vec![None; work.len()]);
    let tty = std::io::stderr().is_terminal();
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((label, pi, seed, x_init)) = work.get(i) else {
                    break;
                };
                let t = Instant::now();
                // A property reports its own panics as failures; one outside its run (its
                // input's strategy, the regression file) would otherwise end the process with
                // no word, as the panic hook is silent.
                let run = || {
                    (suite.properties[*pi].run)(*seed, *x_init, Some(&waves), Some(&regressions))
                };
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(
                    |e| CaseResult {
                        property: suite.properties[*pi].name,
                        seed: *seed,
                        x_init: *x_init,
                        failure: Some(Failure {
                            reason: format!(
                                "the harness panicked outside the property's run: {}",
                                panic_message(&*e)
                            ),
                            minimal: "(not generated)".into(),
                            waves: None,
                        }),
                        commands: 0,
                    },
                );
                let secs = t.elapsed().as_secs_f64();
                if let Some(f) = &r.failure {
                    eprintln!("{}FAILED {label}\n  {f}", if tty { "\r\x1b[K" } else { "" });
                    if args.fail_fast {
                        stop.store(true, Ordering::Relaxed);
                    }
                }
                let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                if tty {
                    eprint!("\r\x1b[K[{d}/{}] {label}", work.len());
                    let _ = std::io::stderr().flush();
                }
                results.lock().unwrap()[i] = Some((label.clone(), r, secs));
            });
        }
    });
    if tty {
        eprint!("\r\x1b[K");
    }
    let results: Vec<(String, CaseResult, f64)> = results
        .into_inner()
        .unwrap()
        .into_iter()
        .flatten()
        .collect();
    let failed = results.iter().filter(|r| r.1.failure.is_some()).count();
    let passed = results.len() - failed;
    let commands: u64 = results.iter().map(|r| r.1.commands).sum();
    if let Some(path) = &args.junit {
        let run = [
            ("seed", format!("0x{:x}", args.seed)),
            ("cases", args.cases.to_string()),
            ("shard", format!("{k}/{m}")),
            (
                "properties",
                selected
                    .iter()
                    .map(|&i| suite.properties[i].name)
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            ("x_init", x_init.to_string()),
            ("replayed", replays.to_string()),
            ("commands", commands.to_string()),
        ];
        if let Err(e) = junit(path, suite.name, &run, &results) {
            eprintln!("testbench: cannot write {}: {e}", path.display());
            return 2;
        }
    }
    if let (Some(path), "rdma") = (&args.pcap, suite.name) {
        match suites::rdma::save_capture(path) {
            Ok(frames) => eprintln!(
                "pcap: {frames} RoCEv2 Ethernet frames (both directions) written to {}",
                path.display()
            ),
            Err(e) => {
                eprintln!("testbench: cannot write {}: {e}", path.display());
                return 2;
            }
        }
    } else if let Some(path) = &args.pcap {
        match suites::nvme_tcp::save_capture(path) {
            Ok((frames, pdus)) => eprintln!(
                "pcap: {frames} frames holding {pdus} NVMe/TCP PDUs written to {}",
                path.display()
            ),
            Err(e) => {
                eprintln!("testbench: cannot write {}: {e}", path.display());
                return 2;
            }
        }
    }
    let secs = started.elapsed().as_secs_f64();
    eprintln!("{secs:.1} s on {jobs} threads");
    if let Some(k) = mutant {
        // `testbench mutants` checks this: a mutant no model read changed nothing.
        eprintln!(
            "mutant {k}: the select was read by {} model instances",
            crate::mutants::select_reads()
        );
    }
    if let Some(dir) = std::env::var_os("TB_COVERAGE_OUT") {
        if let Err(e) = write_coverage(Path::new(&dir)) {
            eprintln!("testbench: coverage: {e}");
            return 2;
        }
    }
    // NVMe commands completed and checked by the host's golden model (`prop::count_command`):
    // the nvme and chip suites drive them; the other suites report 0.
    println!(
        "{}: commands: {commands} ({:.0} per second)",
        suite.name,
        commands as f64 / secs.max(1e-9)
    );
    println!("{}: {passed} passed, {failed} failed", suite.name);
    if failed > 0 {
        1
    } else {
        0
    }
}

/// `TB_COVERAGE_OUT` (set by `testbench coverage`): writes `<dir>/<top>.dat` for every top built
/// for coverage that this run made models of (their counts summed over the models). A top the
/// run drove that was built without coverage is an error: its figures would be missing.
fn write_coverage(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let created = crate::sim::take_tops_created();
    let mut written = Vec::new();
    for top in crate::rtl::COVERAGE_TOPS {
        let path = dir.join(format!("{top}.dat"));
        match crate::rtl::coverage_write(top, &path) {
            Some(n) if n > 0 => written.push(format!("{top} ({n} models)")),
            Some(0) => {}
            Some(_) | None => {
                return Err(format!(
                    "{top} is listed as built for coverage but its shim cannot write it"
                ))
            }
        }
    }
    let missing: Vec<&str> = created
        .into_iter()
        .filter(|t| !crate::rtl::COVERAGE_TOPS.contains(t))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "this run drove {} without coverage (not in TB_COVERAGE when it was built)",
            missing.join(", ")
        ));
    }
    eprintln!(
        "coverage: {} written to {}",
        if written.is_empty() {
            "nothing".to_string()
        } else {
            written.join(", ")
        },
        dir.display()
    );
    Ok(())
}
