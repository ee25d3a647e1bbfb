//! Property-based runs: proptest generates and shrinks the stimulus; a failing case is saved as a
//! regression (replayed first by every later run) and its minimal form is re-run with an FST
//! waveform whose path is reported.
//!
//! A case is identified by (property, seed): the seed fixes proptest's random stream, so the
//! same case is generated on any machine, and `--shard` can split cases without coordination.
//! With random initial values ([`XInit::Random`]) the seed also fixes every model's initial
//! state, for every run of the case (shrinking, the waveform re-run, a saved regression).

use crate::sim::{with_x_init, XInit};
use proptest::strategy::{BoxedStrategy, Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use std::cell::Cell;
use std::fmt::Debug;
use std::path::{Path, PathBuf};

thread_local! {
    /// NVMe commands completed and checked on this thread (see [`count_command`]).
    static COMMANDS: Cell<u64> = const { Cell::new(0) };
}

/// Counts one NVMe command whose completion the host's golden model checked and retired
/// (`models::nvme::Controller::complete` calls it for every CQE it accepts: admin, I/O and
/// AER completions alike). A property runs on one thread, so [`run_case`] reads the count its
/// case added; `regress` reports the sum.
pub fn count_command() {
    COMMANDS.with(|c| c.set(c.get() + 1));
}

/// NVMe commands counted on this thread so far.
pub fn commands_counted() -> u64 {
    COMMANDS.with(Cell::get)
}

/// A property of one block: stimulus strategy and a check against the golden model.
pub trait Property {
    /// Generated stimulus; `Debug` prints the minimal failing case.
    type Input: Debug + Clone;
    /// Stable name (used in regression files, JUnit and waveform names).
    const NAME: &'static str;
    /// The stimulus strategy.
    fn strategy() -> BoxedStrategy<Self::Input>;
    /// Runs the RTL on `input` and checks it against the golden model; writes an FST waveform
    /// to `waves` when given. `Err` says what differed.
    fn run(input: &Self::Input, waves: Option<&Path>) -> Result<(), String>;
}

/// The outcome of one case.
#[derive(Debug, Clone)]
pub struct CaseResult {
    /// Property name.
    pub property: &'static str,
    /// Case seed.
    pub seed: u64,
    /// How the case's models started.
    pub x_init: XInit,
    /// `None` when it passed; otherwise the failure report.
    pub failure: Option<Failure>,
    /// NVMe commands the case's first run completed and checked ([`count_command`]): 0 for a
    /// property that drives none. Shrinking's re-runs are not counted.
    pub commands: u64,
}

/// A failed case, shrunk.
#[derive(Debug, Clone)]
pub struct Failure {
    /// What differed, on the minimal case.
    pub reason: String,
    /// The minimal failing input, printed.
    pub minimal: String,
    /// The waveform of the minimal case, when one was written.
    pub waves: Option<PathBuf>,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}\n  minimal case: {}", self.reason, self.minimal)?;
        if let Some(w) = &self.waves {
            write!(f, "\n  waveform of the minimal case: {}", w.display())?;
        }
        Ok(())
    }
}

fn rng_for(seed: u64) -> TestRng {
    let mut bytes = [0u8; 32];
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        let v = seed
            .wrapping_add(i as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(17);
        chunk.copy_from_slice(&v.to_le_bytes());
    }
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

/// Generates the input of case `seed` (the same on every machine).
pub fn input_for<P: Property>(seed: u64) -> P::Input {
    let mut runner = TestRunner::new_with_rng(Config::default(), rng_for(seed));
    P::strategy()
        .new_tree(&mut runner)
        .expect("strategy generates")
        .current()
}

/// How long proptest may shrink one failure, in milliseconds: `PROPTEST_MAX_SHRINK_TIME` when
/// set (`testbench mutants` bounds every mutant's shrink with it), else 30 s. A shrink step
/// that started before the bound still finishes. 0 (here, unlike proptest, where 0 is no
/// bound) does not shrink at all, and the failing case is not re-run for a waveform: what
/// `testbench mutants --shrink-secs 0` asks when only the verdict matters.
fn shrink_time_ms() -> u32 {
    std::env::var("PROPTEST_MAX_SHRINK_TIME")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(30_000)
}

/// Runs case `seed` of property `P`, its models starting as `x_init` says; on failure shrinks
/// it, saves it to `regressions` (a file of `<property> <seed> [x-init=random]` lines) and
/// re-runs the minimal case writing `<waves_dir>/<property>-<seed>[-xr].fst`.
pub fn run_case<P: Property>(
    seed: u64,
    x_init: XInit,
    waves_dir: Option<&Path>,
    regressions: Option<&Path>,
) -> CaseResult {
    let shrink_ms = shrink_time_ms();
    let config = Config {
        cases: 1,
        failure_persistence: None,
        max_shrink_iters: if shrink_ms == 0 { 0 } else { 4096 },
        max_shrink_time: shrink_ms,
        ..Config::default()
    };
    let mut runner = TestRunner::new_with_rng(config, rng_for(seed));
    // The case's first run (the generated input) is the one counted; proptest's shrinking
    // runs the property again on smaller inputs.
    let first: Cell<Option<u64>> = Cell::new(None);
    let outcome = runner.run(&P::strategy(), |input| {
        let before = commands_counted();
        let r = run_caught::<P>(&input, seed, x_init, None);
        if first.get().is_none() {
            first.set(Some(commands_counted() - before));
        }
        r.map_err(TestCaseError::fail)
    });
    let commands = first.get().unwrap_or(0);
    let failure = match outcome {
        Ok(()) => None,
        Err(TestError::Fail(reason, minimal)) => {
            if let Some(file) = regressions {
                save_regression(file, P::NAME, seed, x_init);
            }
            let suffix = if x_init == XInit::Random { "-xr" } else { "" };
            let waves = waves_dir.map(|d| d.join(format!("{}-{seed:016x}{suffix}.fst", P::NAME)));
            if shrink_ms == 0 {
                return CaseResult {
                    property: P::NAME,
                    seed,
                    x_init,
                    failure: Some(Failure {
                        reason: reason.to_string(),
                        minimal: format!("{minimal:?}"),
                        waves: None,
                    }),
                    commands,
                };
            }
            // Re-run the minimal case with a waveform; its report is the one to read.
            let rerun = run_caught::<P>(&minimal, seed, x_init, waves.as_deref());
            let reason = match rerun {
                Err(r) => r,
                Ok(()) => format!("{reason} (the minimal case passed when re-run: flaky?)"),
            };
            Some(Failure {
                reason,
                minimal: format!("{minimal:?}"),
                waves,
            })
        }
        Err(TestError::Abort(why)) => Some(Failure {
            reason: format!("aborted: {why}"),
            minimal: String::new(),
            waves: None,
        }),
    };
    CaseResult {
        property: P::NAME,
        seed,
        x_init,
        failure,
        commands,
    }
}

/// Runs the property (its models starting as `x_init` says, from `seed`), turning a panic (a
/// model's assertion, a hang report) into a failure.
fn run_caught<P: Property>(
    input: &P::Input,
    seed: u64,
    x_init: XInit,
    waves: Option<&Path>,
) -> Result<(), String> {
    let run = || with_x_init(x_init, seed, || P::run(input, waves));
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(r) => r,
        Err(e) => Err(format!("panicked: {}", panic_message(&*e))),
    }
}

/// The message a panic carried (`panic!("...")` or a formatted one).
pub fn panic_message(e: &(dyn std::any::Any + Send)) -> &str {
    e.downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| e.downcast_ref::<&str>().copied())
        .unwrap_or("(no message)")
}

/// Cases saved for `property` in a regression file: (seed, how its models started). A line is
/// `<property> <seed>`, with ` x-init=random` when the case failed from random initial values
/// (it replays with the same values whatever the run's own setting).
pub fn saved_seeds(file: &Path, property: &str) -> Vec<(u64, XInit)> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let (p, s) = (it.next()?, it.next()?);
            let x_init = match it.next() {
                Some(x) => x.strip_prefix("x-init=")?.parse().ok()?,
                None => XInit::Zero,
            };
            (p == property)
                .then(|| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok())
                .flatten()
                .map(|seed| (seed, x_init))
        })
        .collect()
}

fn save_regression(file: &Path, property: &str, seed: u64, x_init: XInit) {
    if saved_seeds(file, property).contains(&(seed, x_init)) {
        return;
    }
    let mut text = std::fs::read_to_string(file).unwrap_or_else(|_| {
        "# Failing cases found by property runs: `<property> <seed>`. Every run replays them first.\n"
            .to_string()
    });
    let suffix = match x_init {
        XInit::Zero => String::new(),
        XInit::Random => format!(" x-init={x_init}"),
    };
    text.push_str(&format!("{property} 0x{seed:016x}{suffix}\n"));
    if let Some(dir) = file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = std::fs::write(file, text);
}

/// The seed of case `index` of a run started with `base`.
pub fn case_seed(base: u64, index: u64) -> u64 {
    let mut z = base ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// For `cargo test`: replays the saved regressions of `P`, then runs `cases` cases (overridden
/// by the `TB_CASES` environment variable; their models start as `TB_X_INIT` says), panicking
/// with the shrunk report on a failure.
pub fn check<P: Property>(cases: u64) {
    let cases = std::env::var("TB_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let regressions = root.join("regressions").join("cargo-test.txt");
    let waves = root.join("../target/waves");
    let x_init = XInit::from_env();
    let mut seeds = saved_seeds(&regressions, P::NAME);
    seeds.extend((0..cases).map(|i| (case_seed(0x7e57_0000, i), x_init)));
    for (seed, x_init) in seeds {
        let r = run_case::<P>(seed, x_init, Some(&waves), Some(&regressions));
        if let Some(f) = r.failure {
            panic!(
                "{} failed (seed 0x{seed:016x}, x-init {x_init}): {f}",
                P::NAME
            );
        }
    }
}
