//! `testbench mutants`: runs the mutant table (`ci/mutants.txt`) on mutant schemata models.
//!
//! 1. Selects mutants (`--suite`, `--match`, `--only`), applies each one's sed expression to
//!    its rtl/ file and merges all mutants of a file into one schemata copy
//!    ([`crate::mutants::schemata`]); a mutant it cannot merge is a fallback, built alone.
//! 2. Runs one case of each selected property in this process to learn which tops it drives;
//!    only those tops (the ones that contain a mutated file) are re-verilated (`TB_RTL_TOPS`),
//!    every other model comes from the cache.
//! 3. Builds the release testbench once against the schemata copy of rtl/ (`TB_RTL_DIR`), and
//!    keeps the binary; a fallback gets a build of its own.
//! 4. Baseline: a few cases of every selected property with no mutant selected must pass (a
//!    broken schemata model would otherwise "catch" every mutant).
//! 5. Each mutant: `regress --fail-fast` of its properties with `TB_MUTANT=<number>`, shrink
//!    time bounded (`PROPTEST_MAX_SHRINK_TIME`); caught when a case failed and was shrunk, with a
//!    waveform (with `--shrink-secs 0`, CI's run: when a case failed, neither shrunk nor
//!    re-run for a waveform). One line per mutant, then the score per file.
//!
//! Exit codes: 0 every mutant caught; 1 a mutant survived; 2 the run could not judge (bad
//! table or usage, a build failed, the baseline failed, a run neither passed nor failed a case,
//! a model never read the select).
//!
//! It rebuilds `target/release/testbench` (against the schemata RTL; with no mutant selected
//! it behaves as rtl/), so it first re-runs itself from a copy of its own binary.

use crate::mutants::{self, Mutant, RtlGraph};
use crate::prop::case_seed;
use crate::sim::{self, XInit};
use crate::suites;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Arguments of `testbench mutants`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The mutant table [default: ci/mutants.txt].
    #[arg(long)]
    pub table: Option<PathBuf>,
    /// Only the mutants of these suites (comma- or space-separated) [default: all].
    #[arg(long)]
    pub suite: Option<String>,
    /// Only the mutants whose name contains this text.
    #[arg(long = "match", value_name = "TEXT")]
    pub matching: Option<String>,
    /// Only these mutants, by number (comma-separated; `--list` shows the numbers).
    #[arg(long)]
    pub only: Option<String>,
    /// Leave out these mutants, by number (comma-separated): the slow ones CI leaves to the
    /// nightly job.
    #[arg(long)]
    pub skip: Option<String>,
    #[command(flatten)]
    pub run: RunOpts,
}

/// Options of a mutant run that `testbench mutants` and `testbench mutate` share.
#[derive(clap::Args, Debug, Clone)]
pub struct RunOpts {
    /// Cases for every mutant, instead of the table's counts (`mutants`) or 100 (`mutate`).
    #[arg(long)]
    pub cases: Option<u64>,
    /// Bound on shrinking one mutant's failure, in seconds (PROPTEST_MAX_SHRINK_TIME); 0: no
    /// shrinking and no waveform, a mutant is caught when a case fails (CI's verdict-only run).
    #[arg(long, default_value_t = 20)]
    pub shrink_secs: u64,
    /// Cases of each selected property run on the schemata model with no mutant selected,
    /// before the mutants, at most as many as its mutants run (0 skips this check).
    #[arg(long, default_value_t = 4)]
    pub baseline_cases: u64,
    /// Worker threads of each run [default: the number of CPUs].
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Initial values of the models' registers and memories (`regress --x-init`): `zero`,
    /// `random`, or `both`: zero first and, for a mutant that survives, its cases again with
    /// random initial values (CI runs both legs, so a mutant only one of them catches is
    /// caught).
    #[arg(long, value_name = "zero|random|both", default_value = "both")]
    pub x_init: XInitRuns,
    /// Print the selected mutants, how each is built and which tops it needs; build nothing.
    #[arg(long)]
    pub list: bool,
    /// Scratch folder (schemata RTL, binaries, logs) [default: target/mutants].
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// A failure that stops the run (exit code 2).
type Fatal = String;

/// The initial values a mutant runs with (`--x-init`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum XInitRuns {
    /// All zero (two-state).
    Zero,
    /// Drawn per case.
    Random,
    /// Zero, then random for a survivor.
    Both,
}

impl XInitRuns {
    /// The legs to run, in order.
    fn legs(self) -> &'static [XInit] {
        match self {
            XInitRuns::Zero => &[XInit::Zero],
            XInitRuns::Random => &[XInit::Random],
            XInitRuns::Both => &[XInit::Zero, XInit::Random],
        }
    }
}

use super::{out, root, target_dir};

/// Runs `testbench mutants`; returns the exit code.
pub fn run(args: &Args) -> i32 {
    match run_inner(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("testbench mutants: {e}");
            2
        }
    }
}

/// How a selected mutant is built.
pub(crate) enum Build {
    /// In the schemata model.
    Schemata,
    /// Alone, as a sed copy of rtl/ (why it could not be merged).
    Fallback(String),
}

fn select(args: &Args, table: Vec<Mutant>) -> Result<Vec<Mutant>, Fatal> {
    let suites: Option<Vec<String>> = args.suite.as_ref().map(|s| {
        s.split([',', ' '])
            .filter(|x| !x.is_empty())
            .map(str::to_string)
            .collect()
    });
    let numbers = |flag: &str, s: &str| -> Result<BTreeSet<u32>, Fatal> {
        s.split(',')
            .map(|x| {
                x.trim()
                    .parse()
                    .map_err(|_| format!("--{flag} {s}: expected mutant numbers"))
            })
            .collect()
    };
    let only = args
        .only
        .as_deref()
        .map(|s| numbers("only", s))
        .transpose()?;
    let skip = args
        .skip
        .as_deref()
        .map(|s| numbers("skip", s))
        .transpose()?;
    Ok(table
        .into_iter()
        .filter(|m| suites.as_ref().is_none_or(|s| s.contains(&m.suite)))
        .filter(|m| {
            args.matching
                .as_ref()
                .is_none_or(|t| m.name.contains(t.as_str()))
        })
        .filter(|m| only.as_ref().is_none_or(|o| o.contains(&m.id)))
        .filter(|m| skip.as_ref().is_none_or(|k| !k.contains(&m.id)))
        .collect())
}

/// Checks each mutant's suite and properties exist.
fn check_properties(sel: &[Mutant], table: &Path) -> Result<(), Fatal> {
    let all = suites::all();
    for m in sel {
        let Some(suite) = all.iter().find(|s| s.name == m.suite) else {
            return Err(format!(
                "{}:{}: no suite `{}`",
                table.display(),
                m.line,
                m.suite
            ));
        };
        for p in m.properties.split(',') {
            if !suite.properties.iter().any(|e| e.name == p) {
                return Err(format!(
                    "{}:{}: suite `{}` has no property `{p}`",
                    table.display(),
                    m.line,
                    m.suite
                ));
            }
        }
    }
    Ok(())
}

/// Runs one case of each property in this process and returns the tops each one created.
fn discover_tops(sel: &[Mutant]) -> BTreeMap<(String, String), BTreeSet<String>> {
    let pairs: Vec<(String, String)> = sel
        .iter()
        .flat_map(|m| {
            m.properties
                .split(',')
                .map(|p| (m.suite.clone(), p.to_string()))
        })
        .collect();
    tops_driven(&pairs)
}

/// The tops each (suite, property) creates, from one case of it run in this process.
pub(crate) fn tops_driven(
    pairs: &[(String, String)],
) -> BTreeMap<(String, String), BTreeSet<String>> {
    let all = suites::all();
    let mut used = BTreeMap::new();
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for key in pairs {
        if used.contains_key(key) {
            continue;
        }
        let Some(entry) = all
            .iter()
            .find(|s| s.name == key.0)
            .and_then(|s| s.properties.iter().find(|e| e.name == key.1))
        else {
            continue;
        };
        sim::take_tops_created();
        let _ = (entry.run)(case_seed(0x5eed, 0), XInit::Zero, None, None);
        let tops = sim::take_tops_created()
            .into_iter()
            .map(str::to_string)
            .collect();
        used.insert(key.clone(), tops);
    }
    std::panic::set_hook(hook);
    used
}

/// Makes `to` hold the regular files of `from`, with `replace` (file name, text) instead of
/// theirs. Files whose text is already right are not touched, so a second run of the same
/// selection finds the build current (cargo watches the files' times).
fn sync_dir(from: &Path, to: &Path, replace: &BTreeMap<String, String>) -> std::io::Result<()> {
    fs::create_dir_all(to)?;
    let mut keep = BTreeSet::new();
    for e in fs::read_dir(from)? {
        let p = e?.path();
        if !p.is_file() {
            continue;
        }
        let name = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let text = match replace.get(&name) {
            Some(t) => t.as_bytes().to_vec(),
            None => fs::read(&p)?,
        };
        let dst = to.join(&name);
        if fs::read(&dst).ok().as_deref() != Some(&text[..]) {
            fs::write(&dst, &text)?;
        }
        keep.insert(name);
    }
    for e in fs::read_dir(to)? {
        let p = e?.path();
        let name = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        if !keep.contains(&name) {
            let _ = fs::remove_file(&p);
        }
    }
    Ok(())
}

/// Builds the release testbench against `rtl` (only `tops` from it) and copies the binary to
/// `bin`. Returns the seconds it took and the build log's lines (models verilated or cached).
fn build(
    root: &Path,
    rtl: &Path,
    tops: &BTreeSet<String>,
    bin: &Path,
    log: &Path,
) -> Result<(f64, Vec<String>), Fatal> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let _ = fs::remove_file(log);
    let t = Instant::now();
    let o = Command::new(cargo)
        .current_dir(root)
        .args(["build", "--release", "-q", "-p", "testbench"])
        .env("TB_RTL_DIR", rtl)
        .env(
            "TB_RTL_TOPS",
            tops.iter().cloned().collect::<Vec<_>>().join(","),
        )
        .env("TB_BUILD_LOG", log)
        .env_remove("TB_MUTANT")
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    let secs = t.elapsed().as_secs_f64();
    if !o.status.success() {
        return Err(format!(
            "the build against {} failed:\n{}{}",
            rtl.display(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    let built = target_dir(root).join("release").join("testbench");
    if let Some(d) = bin.parent() {
        fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let _ = fs::remove_file(bin);
    fs::copy(&built, bin).map_err(|e| format!("cannot copy {}: {e}", built.display()))?;
    let lines = fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    Ok((secs, lines))
}

/// What one `regress` run of a binary said.
struct RunResult {
    code: Option<i32>,
    secs: f64,
    /// The first failing case's label (`<property> case <i> seed <s>`).
    failed: Option<String>,
    shrunk_with_waves: bool,
    /// Select reads the run reported.
    reads: Option<u64>,
    log: String,
}

#[allow(clippy::too_many_arguments)]
fn regress(
    bin: &Path,
    suite: &str,
    properties: &str,
    cases: u64,
    mutant: Option<u32>,
    x_init: XInit,
    args: &RunOpts,
    regressions: &Path,
    waves: &Path,
) -> Result<RunResult, Fatal> {
    let mut cmd = Command::new(bin);
    cmd.args(["regress", "--suite", suite, "--property", properties])
        .args(["--cases", &cases.to_string(), "--fail-fast"])
        .args(["--x-init", &x_init.to_string()])
        .arg("--regressions")
        .arg(regressions)
        .arg("--waves")
        .arg(waves)
        .env(
            "PROPTEST_MAX_SHRINK_TIME",
            (args.shrink_secs * 1000).to_string(),
        )
        .env("TB_MUTANT", mutant.unwrap_or(0).to_string())
        .env_remove("TB_X_INIT");
    if let Some(j) = args.jobs {
        cmd.args(["--jobs", &j.to_string()]);
    }
    let _ = fs::remove_file(regressions);
    let t = Instant::now();
    let o = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    let secs = t.elapsed().as_secs_f64();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stderr),
        String::from_utf8_lossy(&o.stdout)
    );
    let failed = log.lines().find_map(|l| {
        l.split_once("FAILED ")
            .map(|(_, label)| label.trim().to_string())
    });
    let reads = log.lines().find_map(|l| {
        l.split_once("the select was read by ")
            .and_then(|(_, r)| r.split_whitespace().next()?.parse().ok())
    });
    Ok(RunResult {
        code: o.status.code(),
        secs,
        failed,
        shrunk_with_waves: log.contains("minimal case:")
            && log.contains("waveform of the minimal case:"),
        reads,
        log,
    })
}

/// The scratch folder, absolute (the build script that reads TB_RTL_DIR runs in testbench/).
pub(crate) fn scratch(opts: &RunOpts, root: &Path) -> Result<PathBuf, Fatal> {
    let dir = opts
        .dir
        .clone()
        .unwrap_or_else(|| target_dir(root).join("mutants"));
    std::path::absolute(&dir).map_err(|e| format!("{}: {e}", dir.display()))
}

/// Builds replace target/release/testbench, so a run goes on from a copy of this binary:
/// `Some(exit code)` of that copy, `None` in the copy itself (or with `--list`, which builds
/// nothing).
pub(crate) fn run_from_copy(opts: &RunOpts, dir: &Path) -> Result<Option<i32>, Fatal> {
    if opts.list || std::env::var_os("TB_MUTANTS_DRIVER").is_some() {
        return Ok(None);
    }
    let exe = std::env::current_exe().map_err(|e| format!("where am I: {e}"))?;
    let copy = dir.join("bin").join("driver");
    fs::create_dir_all(dir.join("bin")).map_err(|e| format!("{}: {e}", dir.display()))?;
    let _ = fs::remove_file(&copy);
    fs::copy(&exe, &copy).map_err(|e| format!("cannot copy {}: {e}", exe.display()))?;
    let status = Command::new(&copy)
        .args(std::env::args_os().skip(1))
        .env("TB_MUTANTS_DRIVER", "1")
        .status()
        .map_err(|e| format!("cannot run {}: {e}", copy.display()))?;
    Ok(Some(status.code().unwrap_or(2)))
}

/// Selected mutants, with the schemata copies of their files and how each is built.
pub(crate) struct Selection {
    pub sel: Vec<Mutant>,
    /// File of rtl/ -> its schemata text.
    pub schemata_files: BTreeMap<String, String>,
    pub how: BTreeMap<u32, Build>,
    /// Where the mutants come from, for messages (the table's path, or `testbench mutate`).
    pub origin: String,
}

impl Selection {
    /// Where `m` is defined, for messages.
    fn at(&self, m: &Mutant) -> String {
        if m.line > 0 {
            format!("{}:{}", self.origin, m.line)
        } else {
            format!("{} #{}", self.origin, m.id)
        }
    }
}

fn run_inner(args: &Args) -> Result<i32, Fatal> {
    let root = root();
    let rtl = root.join("rtl");
    let table_path = args
        .table
        .clone()
        .unwrap_or_else(|| root.join("ci").join("mutants.txt"));
    let text = fs::read_to_string(&table_path)
        .map_err(|e| format!("cannot read {}: {e}", table_path.display()))?;
    let table = mutants::parse_table(&text, &table_path.display().to_string())?;
    let sel = select(args, table)?;
    if sel.is_empty() {
        return Err("no mutant matches the selection".into());
    }
    check_properties(&sel, &table_path)?;
    let dir = scratch(&args.run, &root)?;
    if let Some(code) = run_from_copy(&args.run, &dir)? {
        return Ok(code);
    }
    let started = Instant::now();

    // 1. Sed copies, merged per file.
    let mut by_file: BTreeMap<String, Vec<(u32, String)>> = BTreeMap::new();
    for m in &sel {
        let path = rtl.join(&m.file);
        if !path.exists() {
            return Err(format!(
                "{}:{}: rtl/{} does not exist (the shipped configuration changed?); update mutant `{}`",
                table_path.display(),
                m.line,
                m.file,
                m.name
            ));
        }
        let mutated = mutants::apply_sed(&m.sed, &path)?;
        let original = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        if mutated == original {
            return Err(format!(
                "{}:{}: mutant `{}` does not change rtl/{}; update its sed expression",
                table_path.display(),
                m.line,
                m.name,
                m.file
            ));
        }
        by_file
            .entry(m.file.clone())
            .or_default()
            .push((m.id, mutated));
    }
    let mut schemata_files: BTreeMap<String, String> = BTreeMap::new();
    let mut how: BTreeMap<u32, Build> = BTreeMap::new();
    for (file, muts) in &by_file {
        let original = fs::read_to_string(rtl.join(file)).map_err(|e| format!("{file}: {e}"))?;
        let s = mutants::schemata(&original, muts).map_err(|e| format!("rtl/{file}: {e}"))?;
        for id in &s.guarded {
            how.insert(*id, Build::Schemata);
        }
        for (id, why) in &s.fallback {
            how.insert(*id, Build::Fallback(why.clone()));
        }
        if !s.guarded.is_empty() {
            schemata_files.insert(file.clone(), s.text);
        }
    }

    let selection = Selection {
        sel,
        schemata_files,
        how,
        origin: table_path.display().to_string(),
    };
    execute(&root, &dir, selection, &args.run, started, None)
}

/// Steps 2 to 5 (the module doc): the tops, the builds, the baseline, the mutants, the scores.
/// Exit code 1 when a mutant survived, or with `goal` (percent) when a file's score is under it.
pub(crate) fn execute(
    root: &Path,
    dir: &Path,
    selection: Selection,
    args: &RunOpts,
    started: Instant,
    goal: Option<u32>,
) -> Result<i32, Fatal> {
    let rtl = root.join("rtl");
    let sel = &selection.sel;
    let how = &selection.how;
    let schemata_files = &selection.schemata_files;

    // 2. The tops each mutant needs re-verilated.
    let graph = RtlGraph::read(&rtl).map_err(|e| format!("{}: {e}", rtl.display()))?;
    let t = Instant::now();
    let used = discover_tops(sel);
    let discover_secs = t.elapsed().as_secs_f64();
    let mut needs: BTreeMap<u32, BTreeSet<String>> = BTreeMap::new();
    for m in sel {
        let module = m.file.trim_end_matches(".sv");
        let containing: BTreeSet<String> = graph.tops_containing(module).into_iter().collect();
        let drives: BTreeSet<String> = m
            .properties
            .split(',')
            .flat_map(|p| used[&(m.suite.clone(), p.to_string())].iter().cloned())
            .collect();
        let need: BTreeSet<String> = containing.intersection(&drives).cloned().collect();
        if need.is_empty() {
            return Err(format!(
                "{}: mutant `{}` changes {module}, which none of the tops {}/{} drives contains ({}): it cannot be caught there",
                selection.at(m),
                m.name,
                m.suite,
                m.properties,
                drives.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
        needs.insert(m.id, need);
    }

    if args.list {
        for m in sel {
            let b = match &how[&m.id] {
                Build::Schemata => "schemata".to_string(),
                Build::Fallback(why) => format!("fallback ({why})"),
            };
            out(&format!(
                "#{:<3} {:<9} {}/{}  rtl/{}  tops: {}  {b}\n     {}",
                m.id,
                m.cases,
                m.suite,
                m.properties,
                m.file,
                needs[&m.id].iter().cloned().collect::<Vec<_>>().join(","),
                m.name
            ));
        }
        return Ok(0);
    }

    // 3. Builds.
    let schem_rtl = dir.join("rtl");
    sync_dir(&rtl, &schem_rtl, schemata_files)
        .map_err(|e| format!("{}: {e}", schem_rtl.display()))?;
    let schem_tops: BTreeSet<String> = sel
        .iter()
        .filter(|m| matches!(how[&m.id], Build::Schemata))
        .flat_map(|m| needs[&m.id].iter().cloned())
        .collect();
    let mut bins: BTreeMap<u32, PathBuf> = BTreeMap::new();
    let mut build_secs = 0.0;
    if !schem_tops.is_empty() {
        out(&format!(
            "== building the schemata model: {} file(s) with {} mutant(s), tops {}",
            schemata_files.len(),
            how.values()
                .filter(|b| matches!(b, Build::Schemata))
                .count(),
            schem_tops.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
        let bin = dir.join("bin").join("schemata");
        let (secs, lines) = build(root, &schem_rtl, &schem_tops, &bin, &dir.join("build.log"))?;
        build_secs += secs;
        report_build("schemata", secs, &lines);
        for m in sel {
            if matches!(how[&m.id], Build::Schemata) {
                bins.insert(m.id, bin.clone());
            }
        }
    }
    for m in sel {
        if let Build::Fallback(why) = &how[&m.id] {
            out(&format!("== fallback build of mutant #{} ({why})", m.id));
            let frtl = dir.join(format!("fallback-{}", m.id));
            let text = mutants::apply_sed(&m.sed, &rtl.join(&m.file))?;
            sync_dir(&rtl, &frtl, &BTreeMap::from([(m.file.clone(), text)]))
                .map_err(|e| format!("{}: {e}", frtl.display()))?;
            let bin = dir.join("bin").join(format!("fallback-{}", m.id));
            let (secs, lines) = build(root, &frtl, &needs[&m.id], &bin, &dir.join("build.log"))?;
            build_secs += secs;
            report_build(&format!("fallback #{}", m.id), secs, &lines);
            bins.insert(m.id, bin);
        }
    }

    let waves = target_dir(root).join("waves").join("mutants");
    let regs = dir.join("regressions.txt");
    let logs = dir.join("logs");
    fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;

    // 4. Baseline: the schemata model with no mutant selected passes.
    let t = Instant::now();
    if args.baseline_cases > 0 && !schem_tops.is_empty() {
        let bin = dir.join("bin").join("schemata");
        let mut done = BTreeSet::new();
        for m in sel {
            if !matches!(how[&m.id], Build::Schemata)
                || !done.insert((m.suite.clone(), m.properties.clone()))
            {
                continue;
            }
            // No more cases than the property's mutants run (an expensive property's table
            // entry asks for one).
            let cases = args
                .baseline_cases
                .min(args.cases.unwrap_or(m.cases).max(1));
            let r = regress(
                &bin,
                &m.suite,
                &m.properties,
                cases,
                None,
                args.x_init.legs()[0],
                args,
                &regs,
                &waves,
            )?;
            fs::write(
                logs.join(format!("baseline-{}-{}.log", m.suite, m.properties)),
                &r.log,
            )
            .map_err(|e| format!("{}: {e}", logs.display()))?;
            let ok = r.code == Some(0) && r.reads.unwrap_or(0) > 0;
            out(&format!(
                "baseline  {}/{}: {} ({} cases, no mutant; select read {} times) {:.1} s",
                m.suite,
                m.properties,
                if ok { "passed" } else { "FAILED" },
                cases,
                r.reads.unwrap_or(0),
                r.secs
            ));
            if !ok {
                return Err(format!(
                    "the schemata model with no mutant selected does not pass {}/{} (or never read the select): fix the schemata before trusting its mutants; log: {}",
                    m.suite,
                    m.properties,
                    logs.join(format!("baseline-{}-{}.log", m.suite, m.properties))
                        .display()
                ));
            }
        }
    }
    let baseline_secs = t.elapsed().as_secs_f64();

    // 5. The mutants.
    let t = Instant::now();
    let mut survivors: Vec<&Mutant> = Vec::new();
    let mut broken: Vec<(&Mutant, String)> = Vec::new();
    let mut score: BTreeMap<&str, (u32, u32)> = BTreeMap::new();
    for m in sel {
        let cases = args.cases.unwrap_or(m.cases);
        // Each leg of --x-init in turn, until one catches the mutant.
        let mut r = None;
        let mut secs = 0.0;
        let mut log = String::new();
        for &x in args.x_init.legs() {
            let run = regress(
                &bins[&m.id],
                &m.suite,
                &m.properties,
                cases,
                Some(m.id),
                x,
                args,
                &regs,
                &waves,
            )?;
            secs += run.secs;
            log.push_str(&run.log);
            let done = run.code != Some(0);
            r = Some(run);
            if done {
                break;
            }
        }
        let mut r = r.expect("at least one leg");
        r.secs = secs;
        r.log = log;
        let log_path = logs.join(format!("{}.log", m.id));
        fs::write(&log_path, &r.log).map_err(|e| format!("{}: {e}", log_path.display()))?;
        let fallback = matches!(how[&m.id], Build::Fallback(_));
        let verdict = match (r.code, &r.failed) {
            _ if !fallback && r.reads.unwrap_or(0) == 0 => {
                Err("no model read the select".to_string())
            }
            // --shrink-secs 0: the verdict only (no shrinking, no waveform).
            (Some(1), Some(case)) if r.shrunk_with_waves || args.shrink_secs == 0 => {
                Ok(Some(case.clone()))
            }
            (Some(1), Some(_)) => {
                Err("the failure report lacks the minimal case or its waveform".into())
            }
            (Some(0), _) => Ok(None),
            (code, _) => Err(format!("regress exited with {code:?} and no failed case")),
        };
        let s = score.entry(m.file.as_str()).or_default();
        s.1 += 1;
        let (word, detail) = match &verdict {
            Ok(Some(case)) => {
                s.0 += 1;
                ("caught", case.clone())
            }
            Ok(None) => {
                survivors.push(m);
                let legs = args.x_init.legs();
                let how = if legs.len() > 1 {
                    " with zero and with random initial values"
                } else if legs[0] == XInit::Random {
                    " with random initial values"
                } else {
                    ""
                };
                ("SURVIVED", format!("{cases} cases passed{how}"))
            }
            Err(e) => {
                broken.push((m, e.clone()));
                ("ERROR", format!("{e}; log: {}", log_path.display()))
            }
        };
        out(&format!(
            "{word:<8} #{:<3} {:<28} {:>6.1} s  {detail}\n         {}",
            m.id,
            format!("{}/{}", m.suite, m.properties),
            r.secs,
            m.name
        ));
    }
    let run_secs = t.elapsed().as_secs_f64();

    out("\nmutation score per file:");
    let mut under = Vec::new();
    for (file, (caught, total)) in &score {
        let pct = 100.0 * f64::from(*caught) / f64::from(*total);
        let mark = match goal {
            Some(g) if pct < f64::from(g) => {
                under.push(format!("{file} {pct:.0} %"));
                format!("  < goal {g} %")
            }
            Some(g) => format!("  (goal {g} %)"),
            None => String::new(),
        };
        out(&format!(
            "  {file:<44} {caught:>3}/{total:<3} caught ({pct:.0} %){mark}"
        ));
    }
    let fallbacks: Vec<String> = how
        .iter()
        .filter_map(|(id, b)| match b {
            Build::Fallback(why) => Some(format!("#{id} ({why})")),
            Build::Schemata => None,
        })
        .collect();
    out(&format!(
        "time: {:.0} s in all: tops found in {discover_secs:.1} s, builds {build_secs:.1} s, baseline {baseline_secs:.1} s, {} mutant runs {run_secs:.1} s (mean {:.1} s)",
        started.elapsed().as_secs_f64(),
        sel.len(),
        run_secs / sel.len() as f64
    ));
    if !fallbacks.is_empty() {
        out(&format!("built on their own: {}", fallbacks.join(", ")));
    }
    if !broken.is_empty() {
        for (m, e) in &broken {
            eprintln!("testbench mutants: #{} {}: {e}", m.id, m.name);
        }
        return Ok(2);
    }
    if !survivors.is_empty() {
        eprintln!("testbench mutants: {} mutant(s) survived:", survivors.len());
        for m in &survivors {
            eprintln!("  #{} {} ({}/{})", m.id, m.name, m.suite, m.properties);
        }
        match goal {
            None => return Ok(1),
            Some(g) if !under.is_empty() => {
                eprintln!("under the goal of {g} %: {}", under.join(", "));
                return Ok(1);
            }
            Some(g) => {
                out(&format!("every file's score met the goal of {g} %"));
                return Ok(0);
            }
        }
    }
    out(&format!(
        "every one of the {} mutants was caught",
        sel.len()
    ));
    Ok(0)
}

/// Prints a build's time and the models it verilated (from `TB_BUILD_LOG`).
fn report_build(what: &str, secs: f64, lines: &[String]) {
    let mut verilated = Vec::new();
    let mut vsecs = 0.0;
    for l in lines {
        let f: Vec<&str> = l.split_whitespace().collect();
        if let ["built", top, s, _] = f[..] {
            let s: f64 = s.parse().unwrap_or(0.0);
            vsecs += s;
            verilated.push(format!("{top} {s:.0} s"));
        }
    }
    out(&format!(
        "build     {what}: {secs:.1} s (verilating {vsecs:.0} s: {}; the rest is Rust and linking)",
        if verilated.is_empty() {
            "every model cached".to_string()
        } else {
            verilated.join(", ")
        }
    ));
}
