//! Verilates every top in rtl/ (the ones with a `<top>_shim.cpp`) and links the models, the
//! generated shims and the Verilator runtime into the testbench.
//!
//! Each top is rebuilt only when the SystemVerilog it depends on (or the flags) changed: models
//! are kept in `target/verilated/<top>/<hash of those inputs>/`, shared by every profile and RTL
//! folder (see `model_cache`). Models are built with FST tracing compiled in;
//! waveforms are only written when a test opens one.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::PathBuf;
use std::process::Command;

include!("src/model_flags.rs");

/// `--cc -O3` and [`MODEL_FLAGS`], in that order (the order is part of every model's hash).
fn verilator_flags() -> Vec<&'static str> {
    ["--cc", "-O3"]
        .into_iter()
        .chain(MODEL_FLAGS.iter().copied())
        .collect()
}

/// The C++ optimization of the models' hot code (Verilator's `OPT_FAST`, `-Os` by default; its
/// slow code, construction and tracing set-up, stays at `OPT_SLOW`, unoptimized). Measured on
/// the chip top: `-Os` 248 s of compile CPU, `-O1` 153 s, `-O0` 86 s; the suites ran as fast at
/// `-O1` as at `-Os`, within the shared machine's noise (chip 300 cases 127 and 128 s, qos 200
/// cases 54 and 55 s, nvme-tcp 300 cases 37 and 36 s; chip 150 cases, alternated, 113 and 100 s
/// then 101 and 99 s) and 3.5 times slower at `-O0` (chip 447 s). Part of every model's hash.
const MODEL_OPT_FAST: &str = "-O1";

/// Added for the tops `TB_COVERAGE` names (`testbench coverage`): line coverage (every block and
/// branch), toggle coverage (every bit of every signal up to 256 bits wide: Verilator skips
/// wider ones, memories included) and user coverage (the generators' `cover property` points).
const COVERAGE_FLAGS: &[&str] = &["--coverage-line", "--coverage-toggle", "--coverage-user"];

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("cannot run {cmd:?}: {e}; run ci/setup.sh to install Verilator")
    });
    if !out.status.success() {
        panic!(
            "{cmd:?} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Modules instantiated by `text`, among the modules we have files for.
fn instantiated(text: &str, known: &BTreeSet<String>) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let (module, _inst, paren) = (it.next()?, it.next()?, it.next()?);
            (paren == "(" && known.contains(module)).then(|| module.to_string())
        })
        .collect()
}

/// Each module's children (the modules it instantiates).
type Deps = BTreeMap<String, Vec<String>>;

fn subtree(top: &str, deps: &Deps, out: &mut Vec<String>) {
    for d in deps.get(top).into_iter().flatten() {
        subtree(d, deps, out);
    }
    if !out.iter().any(|x| x == top) {
        out.push(top.to_string());
    }
}

/// `skid_buffer_w64` -> `SkidBufferW64`, as the binding names its type.
fn camel(name: &str) -> String {
    name.split('_')
        .map(|p| {
            let mut c = p.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

fn fnv(bytes: &[u8], mut h: u64) -> u64 {
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Where Verilated models are kept: `<target dir>/verilated/<top>/<input hash>/`, shared by
/// every profile (debug, release, clippy) and by every RTL folder (`TB_RTL_DIR`), so switching
/// to a mutant or a netlist and back rebuilds nothing that was built before. `TB_MODEL_CACHE`
/// overrides the place.
fn model_cache(out: &std::path::Path) -> PathBuf {
    println!("cargo:rerun-if-env-changed=TB_MODEL_CACHE");
    if let Some(dir) = std::env::var_os("TB_MODEL_CACHE") {
        return PathBuf::from(dir);
    }
    // OUT_DIR is <target dir>[/<triple>]/<profile>/build/<package>-<hash>/out.
    out.ancestors()
        .nth(4)
        .expect("OUT_DIR lies four levels under the target dir")
        .join("verilated")
}

/// Where coverage models (the tops `TB_COVERAGE` names) are kept: `TB_COVERAGE_CACHE`, else
/// `<target dir>/verilated-coverage`. Apart from the normal models, so that their versions never
/// push a normal model out of its top's most-recently-used list (a shared cache may hold both).
fn coverage_cache(out: &std::path::Path) -> PathBuf {
    println!("cargo:rerun-if-env-changed=TB_COVERAGE_CACHE");
    if let Some(dir) = std::env::var_os("TB_COVERAGE_CACHE") {
        return PathBuf::from(dir);
    }
    out.ancestors()
        .nth(4)
        .expect("OUT_DIR lies four levels under the target dir")
        .join("verilated-coverage")
}

/// Appends `line` to the file `TB_BUILD_LOG` names, when set: which models a build verilated
/// and in how many seconds (`testbench mutants` reports them). Not an input of the build.
fn build_log(line: &str) {
    if let Some(path) = std::env::var_os("TB_BUILD_LOG") {
        use std::io::Write;
        if let Ok(mut f) = fs::OpenOptions::new().create(true).append(true).open(path) {
            let _ = writeln!(f, "{line}");
        }
    }
}

/// Versions of one top's model kept in the cache (the most recently used ones).
const CACHE_KEEP: usize = 4;

/// The model of `top` for inputs of hash `h`: Verilates and compiles it into the cache unless a
/// build of the same inputs is there. A build goes to a scratch folder that is renamed into place
/// when complete, so concurrent builds (a debug and a release one) never see half a model.
fn cached_model(
    cache: &std::path::Path,
    top: &str,
    h: u64,
    flags: &[&str],
    files: &[PathBuf],
) -> PathBuf {
    let top_dir = cache.join(top);
    let mdir = top_dir.join(format!("{h:016x}"));
    let archive = format!("V{top}__ALL.a");
    let started = std::time::Instant::now();
    let built = !mdir.join(&archive).exists();
    if built {
        let tmp = top_dir.join(format!("{h:016x}.tmp{}", std::process::id()));
        let _ = fs::remove_dir_all(&tmp);
        fs::create_dir_all(&tmp).unwrap();
        let mut cmd = Command::new("verilator");
        cmd.args(flags)
            .arg("--Mdir")
            .arg(&tmp)
            .args(["--top-module", top])
            .args(files);
        run(&mut cmd);
        // Only the model archive: the runtime is compiled once per profile, for all models.
        run(Command::new("make")
            .arg("-s")
            .arg("-j2")
            .arg("-C")
            .arg(&tmp)
            .arg("-f")
            .arg(format!("V{top}.mk"))
            .arg(format!("OPT_FAST={MODEL_OPT_FAST}"))
            .arg(&archive));
        if fs::rename(&tmp, &mdir).is_err() {
            // Another build put the same model in place first.
            let _ = fs::remove_dir_all(&tmp);
        }
    }
    build_log(&format!(
        "{} {top} {:.1} {h:016x}",
        if built { "built" } else { "cached" },
        started.elapsed().as_secs_f64()
    ));
    // Mark it used, and keep only the most recently used versions of this top.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    fs::write(mdir.join("used"), now.to_string()).unwrap();
    let mut versions: Vec<(std::time::SystemTime, PathBuf)> = fs::read_dir(&top_dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            let used = fs::metadata(p.join("used")).ok()?.modified().ok()?;
            Some((used, p))
        })
        .collect();
    versions.sort();
    versions.reverse();
    for (_, old) in versions.into_iter().skip(CACHE_KEEP) {
        let _ = fs::remove_dir_all(old);
    }
    mdir
}

/// One top's model to build (or find in the cache): what [`cached_model`] and [`cached_shim`]
/// take.
struct ModelJob<'a> {
    top: String,
    coverage: bool,
    flags: &'a [&'a str],
    h: u64,
    paths: Vec<PathBuf>,
    cache_dir: PathBuf,
    shim_src: PathBuf,
    /// Its SystemVerilog's size: the largest models start first.
    bytes: usize,
}

/// Every job's model and shim, in the jobs' order, built on two threads, the largest first so
/// neither thread ends alone on one long build. Verilating is single-threaded and the small
/// models are one C++ file each; the large ones already compile with `make -j2`, so the gain
/// is modest: clippy's build of an empty cache went from 539 s to 515 s in CI. The same
/// work-queue shape as `hdl_gen::lint`'s `run_jobs` (a build script cannot use it).
fn build_models(jobs: &[ModelJob], inc: &std::path::Path) -> Vec<(PathBuf, PathBuf)> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(jobs[i].bytes));
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<(PathBuf, PathBuf)>>> = Mutex::new(vec![None; jobs.len()]);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while let Some(&i) = order.get(next.fetch_add(1, Ordering::SeqCst)) {
                    let j = &jobs[i];
                    let mdir = cached_model(&j.cache_dir, &j.top, j.h, j.flags, &j.paths);
                    let shim = cached_shim(&mdir, &j.top, &j.shim_src, inc, j.coverage);
                    done.lock().expect("no build thread panics holding it")[i] = Some((mdir, shim));
                }
            });
        }
    });
    done.into_inner()
        .expect("no build thread panicked")
        .into_iter()
        .map(|d| d.expect("every model built"))
        .collect()
}

/// Compiler settings of the shims (part of their cache key); a coverage model's shim adds
/// `VM_COVERAGE=1`.
const SHIM_FLAGS: &str = "c++17 -O2 -Wno-unused-parameter VM_TRACE=1 VM_TRACE_FST=1";

/// The C++ build of shims (and of the bench loop), with the settings [`SHIM_FLAGS`] names.
fn shim_build(inc: &std::path::Path, coverage: bool) -> cc::Build {
    let mut b = cc::Build::new();
    b.cpp(true)
        .std("c++17")
        .opt_level(2)
        .flag_if_supported("-Wno-unused-parameter")
        .define("VM_TRACE", "1")
        .define("VM_TRACE_FST", "1")
        .include(inc)
        .include(inc.join("vltstd"));
    if coverage {
        b.define("VM_COVERAGE", "1");
    }
    b
}

/// The compiled shim of `top` (its C++ glue to the model in `mdir`), kept next to the model as
/// `lib<top>_shim_<hash>.a`: a shim depends only on its source and the model's headers, so a
/// build script run that finds every model cached (a mutant, a netlist, another profile) compiles
/// no C++ at all.
fn cached_shim(
    mdir: &std::path::Path,
    top: &str,
    src: &std::path::Path,
    inc: &std::path::Path,
    coverage: bool,
) -> PathBuf {
    let text = fs::read(src).unwrap();
    let mut h = fnv(SHIM_FLAGS.as_bytes(), fnv(&text, 0xcbf2_9ce4_8422_2325));
    if coverage {
        h = fnv(b"VM_COVERAGE=1", h);
    }
    let lib = mdir.join(format!("lib{top}_shim_{h:016x}.a"));
    if !lib.exists() {
        let tmp = mdir.join(format!("shim.tmp{}", std::process::id()));
        let _ = fs::remove_dir_all(&tmp);
        fs::create_dir_all(&tmp).unwrap();
        shim_build(inc, coverage)
            .include(mdir)
            .file(src)
            .out_dir(&tmp)
            .cargo_metadata(false)
            .compile(&format!("{top}_shim"));
        if fs::rename(tmp.join(format!("lib{top}_shim.a")), &lib).is_err() && !lib.exists() {
            panic!("cannot keep the shim of {top} in {}", mdir.display());
        }
        let _ = fs::remove_dir_all(&tmp);
    }
    lib
}

/// The suites' aliases of the tops (`pub type FifoTop = ...`), by the prefix of the top's name,
/// so the suites do not depend on the configuration's widths.
const ALIASES: &[(&str, &str)] = &[
    ("Crc32Top", "crc32_d"),
    ("Crc32cTop", "crc32c_d"),
    ("TokenBucketTop", "token_bucket_"),
    ("FifoTop", "fifo_w"),
    ("FifoFwftTop", "fifo_fwft_w"),
    ("RrArbiterTop", "rr_arbiter_"),
    ("WrrArbiterTop", "wrr_arbiter_"),
    ("AxiInterconnectTop", "axi_interconnect_"),
    ("AxiUpsizerTop", "axi_upsizer_"),
    ("SkidBufferTop", "skid_buffer_w"),
    ("AxilDecoderTop", "axil_decoder_"),
    ("IntervalTimerTop", "interval_timer_w"),
    ("DmaWalkerTop", "dma_walker_"),
    ("DmaMoverTop", "dma_mover_"),
    ("DmaEngineTop", "dma_engine_"),
    ("NvmeTcpConnTop", "nvme_tcp_conn_"),
    ("NvmeTcpTop", "nvme_tcp_w"),
    ("NvmeTcpIpTop", "nvme_tcp_ip_"),
    ("QosArbiterTop", "qos_arbiter_"),
    ("NvmeCtrlTop", "nvme_ctrl_"),
    ("RoceTop", "roce_w"),
    ("RoceDcqcnTop", "roce_dcqcn_"),
    ("TcpTop", "tcp_w"),
    ("AsyncFifoTop", "async_fifo_w"),
    ("Sync2ffTop", "sync_2ff_w"),
    ("ResetSyncTop", "reset_sync"),
    ("EthMacRgmiiTop", "eth_mac_rgmii_"),
    ("MdioMasterTop", "mdio_master"),
    ("FrameMuxTop", "eth_frame_mux_"),
];

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    // TB_RTL_DIR points the testbench at another RTL folder (ci/mutation.sh uses it to run the
    // suites on deliberately broken copies of rtl/).
    println!("cargo:rerun-if-env-changed=TB_RTL_DIR");
    let rtl = std::env::var_os("TB_RTL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../rtl"))
        .canonicalize()
        .expect("the RTL folder exists");
    println!("cargo:rerun-if-changed=src/model_flags.rs");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    println!("cargo:rerun-if-changed={}", rtl.display());
    println!("cargo:rerun-if-changed=build.rs");

    let mut sources: BTreeMap<String, String> = BTreeMap::new();
    let mut tops: Vec<String> = Vec::new();
    let mut reg_maps: Vec<String> = Vec::new();
    for e in fs::read_dir(&rtl).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        println!("cargo:rerun-if-changed={}", p.display());
        if let Some(m) = name.strip_suffix(".sv") {
            sources.insert(m.to_string(), fs::read_to_string(&p).unwrap());
        } else if let Some(t) = name.strip_suffix("_shim.cpp") {
            tops.push(t.to_string());
        } else if let Some(r) = name.strip_suffix("_regs.rs") {
            reg_maps.push(r.to_string());
        }
    }
    // Hand-written extra tops in testbench/dpi/ (`<top>.sv`, `<top>_shim.cpp`, `<top>.rs`):
    // modules that call back into Rust through DPI-C. Built like the tops of rtl/ (they may
    // instantiate rtl/ modules); `dir_of` says where a module's files are when not in rtl/.
    let dpi = manifest.join("dpi");
    let mut dir_of: BTreeMap<String, PathBuf> = BTreeMap::new();
    println!("cargo:rerun-if-changed={}", dpi.display());
    for e in fs::read_dir(&dpi).into_iter().flatten() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        println!("cargo:rerun-if-changed={}", p.display());
        if let Some(m) = name.strip_suffix(".sv") {
            sources.insert(m.to_string(), fs::read_to_string(&p).unwrap());
            dir_of.insert(m.to_string(), dpi.clone());
        } else if let Some(t) = name.strip_suffix("_shim.cpp") {
            tops.push(t.to_string());
        }
    }
    // The behavioural models of the vendor primitives (`models/<PRIMITIVE>.sv`, outside the
    // file list): a top that instantiates an ECP5 cell simulates its model. From the RTL folder
    // built, else from rtl/ (a mutant or netlist folder may not copy them).
    let models = [rtl.join("models"), manifest.join("../rtl/models")]
        .into_iter()
        .find(|d| d.is_dir());
    for mdir in models.iter() {
        println!("cargo:rerun-if-changed={}", mdir.display());
        for e in fs::read_dir(mdir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if let Some(m) = name.strip_suffix(".sv") {
                println!("cargo:rerun-if-changed={}", p.display());
                sources.insert(m.to_string(), fs::read_to_string(&p).unwrap());
                dir_of.insert(m.to_string(), mdir.clone());
            }
        }
    }
    let dir = |m: &str| dir_of.get(m).unwrap_or(&rtl).clone();
    tops.sort();
    let known: BTreeSet<String> = sources.keys().cloned().collect();
    let deps: BTreeMap<String, Vec<String>> = sources
        .iter()
        .map(|(m, t)| (m.clone(), instantiated(t, &known)))
        .collect();

    // TB_RTL_TOPS (a comma-separated list, with TB_RTL_DIR): only these tops are built from
    // TB_RTL_DIR; every other top is built from rtl/ (so it is found in the model cache). A
    // mutant run (`testbench mutants`) re-verilates only the tops its properties drive, not
    // every top that contains the mutated module.
    println!("cargo:rerun-if-env-changed=TB_RTL_TOPS");
    let only: Option<BTreeSet<String>> = std::env::var("TB_RTL_TOPS").ok().map(|v| {
        v.split(',')
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect()
    });
    for t in only.iter().flatten() {
        assert!(
            tops.contains(t),
            "TB_RTL_TOPS names `{t}`, which is not a top of {} (tops: {})",
            rtl.display(),
            tops.join(", ")
        );
    }
    let default_rtl = manifest.join("../rtl").canonicalize().expect("rtl/ exists");
    // With TB_RTL_TOPS, the tops are rtl/'s (and testbench/dpi/'s): TB_RTL_DIR may hold another
    // configuration (configs/widest.toml), whose other tops have other names (dma_engine_w512_...)
    // the suites do not build against. The named tops (same names in both) come from TB_RTL_DIR.
    let mut rtl_tops: Vec<String> = tops
        .iter()
        .filter(|t| dir_of.contains_key(*t))
        .cloned()
        .collect();
    let base: Option<(BTreeMap<String, String>, Deps)> = (only.is_some() && default_rtl != rtl)
        .then(|| {
            println!("cargo:rerun-if-changed={}", default_rtl.display());
            let mut src: BTreeMap<String, String> = sources
                .iter()
                .filter(|(m, _)| dir_of.contains_key(*m))
                .map(|(m, t)| (m.clone(), t.clone()))
                .collect();
            for e in fs::read_dir(&default_rtl).unwrap() {
                let p = e.unwrap().path();
                let name = p.file_name().unwrap().to_string_lossy().to_string();
                if let Some(m) = name.strip_suffix(".sv") {
                    println!("cargo:rerun-if-changed={}", p.display());
                    src.insert(m.to_string(), fs::read_to_string(&p).unwrap());
                } else if let Some(t) = name.strip_suffix("_shim.cpp") {
                    rtl_tops.push(t.to_string());
                }
            }
            let known: BTreeSet<String> = src.keys().cloned().collect();
            let dep = src
                .iter()
                .map(|(m, t)| (m.clone(), instantiated(t, &known)))
                .collect();
            (src, dep)
        });
    if base.is_some() {
        // A named top of another name than rtl/'s (another configuration's `nvme_ctrl_q1_...`)
        // takes the place of rtl/'s top of its family (its alias below), so that family's
        // suite drives it.
        for t in only.iter().flatten() {
            if rtl_tops.contains(t) {
                continue;
            }
            let family = ALIASES.iter().find(|(_, prefix)| t.starts_with(prefix));
            let old =
                family.and_then(|(_, prefix)| rtl_tops.iter().position(|r| r.starts_with(prefix)));
            match old {
                Some(i) => rtl_tops[i] = t.clone(),
                None => panic!(
                    "TB_RTL_TOPS names `{t}`, which is neither a top of rtl/ nor of a family of one (tops: {})",
                    rtl_tops.join(", ")
                ),
            }
        }
        rtl_tops.sort();
        tops = rtl_tops;
    }
    // Whether a top's files come from rtl/ although TB_RTL_DIR points elsewhere (a top that
    // TB_RTL_TOPS leaves out).
    let from_rtl = |top: &str| base.is_some() && !only.as_ref().is_some_and(|o| o.contains(top));
    // The folder a top's files (SystemVerilog, shim, binding) come from.
    let top_dir = |top: &str| -> PathBuf {
        if from_rtl(top) {
            dir_of.get(top).unwrap_or(&default_rtl).clone()
        } else {
            dir(top)
        }
    };

    let root = String::from_utf8(
        Command::new("verilator")
            .args(["--getenv", "VERILATOR_ROOT"])
            .output()
            .expect("verilator is installed (run ci/setup.sh)")
            .stdout,
    )
    .unwrap();
    let inc = PathBuf::from(root.trim()).join("include");
    let version = Command::new("verilator")
        .arg("--version")
        .output()
        .unwrap()
        .stdout;

    // TB_COVERAGE (a comma-separated list of tops, or `all`): these tops are Verilated with
    // coverage (COVERAGE_FLAGS) into their own cache, and their shims count and write it
    // (`testbench coverage` sets it to the tops a suite drives); every other top is the normal
    // model, from the normal cache.
    println!("cargo:rerun-if-env-changed=TB_COVERAGE");
    let covered: BTreeSet<String> = match std::env::var("TB_COVERAGE").ok().as_deref() {
        None | Some("") => BTreeSet::new(),
        Some("all") => tops.iter().cloned().collect(),
        Some(v) => v
            .split(',')
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect(),
    };
    for t in &covered {
        assert!(
            tops.contains(t),
            "TB_COVERAGE names `{t}`, which is not a top (tops: {})",
            tops.join(", ")
        );
    }
    let base_flags = verilator_flags();
    let cov_flags: Vec<&str> = base_flags.iter().chain(COVERAGE_FLAGS).copied().collect();

    let libdir = out.join("lib");
    fs::create_dir_all(&libdir).unwrap();
    let cache = model_cache(&out);
    let cov_cache = (!covered.is_empty()).then(|| coverage_cache(&out));
    // Every top's inputs first (its files and their hash), then the builds.
    let mut jobs = Vec::new();
    for top in &tops {
        let coverage = covered.contains(top);
        let flags: &[&str] = if coverage { &cov_flags } else { &base_flags };
        // Where this top's SystemVerilog comes from: TB_RTL_DIR, or rtl/ for a top that
        // TB_RTL_TOPS leaves out.
        let (srcs, dps, sv_dir) = match &base {
            Some((s, d)) if from_rtl(top) => (s, d, &default_rtl),
            _ => (&sources, &deps, &rtl),
        };
        let mut files = Vec::new();
        subtree(top, dps, &mut files);
        let mut h = fnv(&version, 0xcbf2_9ce4_8422_2325);
        h = fnv(flags.join(" ").as_bytes(), h);
        h = fnv(MODEL_OPT_FAST.as_bytes(), h);
        let mut bytes = 0;
        for f in &files {
            h = fnv(f.as_bytes(), h);
            h = fnv(srcs[f].as_bytes(), h);
            bytes += srcs[f].len();
        }
        let paths: Vec<PathBuf> = files
            .iter()
            .map(|f| dir_of.get(f).unwrap_or(sv_dir).join(format!("{f}.sv")))
            .collect();
        let cache_dir = match (&cov_cache, coverage) {
            (Some(c), true) => c.clone(),
            _ => cache.clone(),
        };
        jobs.push(ModelJob {
            top: top.clone(),
            coverage,
            flags,
            h,
            paths,
            cache_dir,
            shim_src: top_dir(top).join(format!("{top}_shim.cpp")),
            bytes,
        });
    }
    let model_dirs = build_models(&jobs, &inc);
    for (job, (mdir, shim)) in jobs.iter().zip(&model_dirs) {
        let top = &job.top;
        fs::copy(
            mdir.join(format!("V{top}__ALL.a")),
            libdir.join(format!("lib{top}_vl.a")),
        )
        .unwrap();
        fs::copy(shim, libdir.join(format!("lib{top}_shim.a"))).unwrap();
    }
    let model_dirs: Vec<PathBuf> = model_dirs.into_iter().map(|(m, _)| m).collect();

    let mut rs = String::from("// Generated by testbench/build.rs from rtl/.\n");

    // Link order matters for static archives: shims, then models, then the runtime.
    let mut shims = shim_build(&inc, false);
    for d in &model_dirs {
        shims.include(d);
    }
    // The plain C++ loop `testbench bench --suite harness` compares the Rust harness with.
    if let Some(top) = tops.iter().find(|t| t.starts_with("skid_buffer_w")) {
        let bench = out.join("bench_loop.cpp");
        let text = match &base {
            Some((s, _)) if from_rtl(top) => &s[top.as_str()],
            _ => &sources[top.as_str()],
        };
        let (rst, on, off) = if text.contains("rst_ni") {
            ("rst_ni", "0", "1")
        } else {
            ("rst_i", "1", "0")
        };
        let code = BENCH_LOOP
            .replace("TOP", top)
            .replace("RST_NAME", rst)
            .replace("RST_ON", on)
            .replace("RST_OFF", off);
        fs::write(&bench, code).unwrap();
        rs.push_str(&format!(
            "\n/// The top `testbench bench --suite harness` measures.\npub type BenchTop = {top}::{};\n",
            camel(top)
        ));
        shims.file(bench);
    }
    if tops.iter().any(|t| t.starts_with("skid_buffer_w")) {
        shims.compile("tb_shims");
    }
    println!("cargo:rustc-link-search=native={}", libdir.display());
    for top in &tops {
        println!("cargo:rustc-link-lib=static={top}_shim");
    }
    for top in &tops {
        println!("cargo:rustc-link-lib=static={top}_vl");
    }
    // Verilator's coverage runtime, for coverage models only (after them in the link order).
    if !covered.is_empty() {
        let stamp = out.join("runtime_cov.version");
        if fs::read(&stamp).ok().as_deref() != Some(&version[..])
            || !out.join("libtb_verilated_cov.a").exists()
        {
            cc::Build::new()
                .cpp(true)
                .std("c++17")
                .opt_level(2)
                .warnings(false)
                .define("VM_COVERAGE", "1")
                .include(&inc)
                .include(inc.join("vltstd"))
                .file(inc.join("verilated_cov.cpp"))
                .cargo_metadata(false)
                .compile("tb_verilated_cov");
            fs::write(&stamp, &version).unwrap();
        }
        println!("cargo:rustc-link-search=native={}", out.display());
        println!("cargo:rustc-link-lib=static=tb_verilated_cov");
    }
    let runtime_stamp = out.join("runtime.version");
    let runtime_current = fs::read(&runtime_stamp).ok().as_deref() == Some(&version[..])
        && out.join("libtb_verilated.a").exists()
        && out.join("libtb_fst.a").exists();
    if runtime_current {
        println!("cargo:rustc-link-search=native={}", out.display());
        println!("cargo:rustc-link-lib=static=tb_verilated");
        println!("cargo:rustc-link-lib=static=tb_fst");
        println!("cargo:rustc-link-lib=stdc++");
    } else {
        cc::Build::new()
            .cpp(true)
            .std("c++17")
            .opt_level(2)
            .warnings(false)
            .define("VM_TRACE", "1")
            .define("VM_TRACE_FST", "1")
            .include(&inc)
            .include(inc.join("vltstd"))
            .file(inc.join("verilated.cpp"))
            .file(inc.join("verilated_dpi.cpp"))
            .file(inc.join("verilated_threads.cpp"))
            .file(inc.join("verilated_fst_c.cpp"))
            .compile("tb_verilated");
        cc::Build::new()
            .opt_level(2)
            .warnings(false)
            .include(inc.join("gtkwave"))
            .define("FST_CONFIG_INCLUDE", "\"fst_config.h\"")
            .file(inc.join("gtkwave/fstapi.c"))
            .file(inc.join("gtkwave/fastlz.c"))
            .file(inc.join("gtkwave/lz4.c"))
            .compile("tb_fst");
        fs::write(&runtime_stamp, &version).unwrap();
    }
    println!("cargo:rustc-link-lib=z");

    // The bindings, one module per top, and their `Dut` implementations.
    for top in &tops {
        let ty = top
            .split('_')
            .map(|p| {
                let mut c = p.chars();
                c.next()
                    .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                    .unwrap_or_default()
            })
            .collect::<String>();
        rs.push_str(&format!(
            "\n/// The Verilated `{top}` (binding generated by hdl-gen into rtl/{top}.rs).\npub mod {top} {{\n    include!({:?});\n\n    impl crate::sim::Dut for {ty} {{\n        const NAME: &'static str = {ty}::NAME;\n        const PORTS: &'static [(&'static str, u32, bool)] = {ty}::PORTS;\n        fn create(init_seed: u32) -> Self {{ {ty}::with_init_seed(init_seed) }}\n        fn eval(&self) {{ {ty}::eval(self) }}\n        fn port_ptr(&self, name: &str) -> Option<(*mut u8, u32)> {{ {ty}::port_ptr(self, name) }}\n        fn trace_open(&self, path: &std::path::Path) -> bool {{ {ty}::trace_open(self, path) }}\n        fn trace_dump(&self, time: u64) {{ {ty}::trace_dump(self, time) }}\n        fn trace_close(&self) {{ {ty}::trace_close(self) }}\n    }}\n}}\n",
            top_dir(top).join(format!("{top}.rs"))
        ));
    }
    // Coverage (`testbench coverage`): every top whose shim can write it (the generated ones).
    let with_cov: Vec<&String> = tops
        .iter()
        .filter(|t| {
            fs::read_to_string(top_dir(t).join(format!("{t}_shim.cpp")))
                .is_ok_and(|s| s.contains(&format!("{t}_coverage_write")))
        })
        .collect();
    rs.push_str("\nextern \"C\" {\n");
    for t in &with_cov {
        rs.push_str(&format!(
            "    fn {t}_coverage_write(path: *const std::ffi::c_char) -> i64;\n"
        ));
    }
    rs.push_str("}\n");
    rs.push_str(&format!(
        "\n/// The tops built for coverage (`TB_COVERAGE`).\npub const COVERAGE_TOPS: &[&str] = &{:?};\n",
        covered.iter().collect::<Vec<_>>()
    ));
    rs.push_str(
        "\n/// Writes the summed coverage counts of every deleted model of `top` to `path` (Verilator's\n/// coverage.dat): the number of models summed (0: none, nothing written), -1 when `top` was not\n/// built for coverage, `None` when its shim cannot write coverage.\npub fn coverage_write(top: &str, path: &std::path::Path) -> Option<i64> {\n    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).ok()?;\n    // SAFETY: `c` is a NUL-terminated path; the shim only reads it.\n    match top {\n",
    );
    for t in &with_cov {
        rs.push_str(&format!(
            "        {t:?} => Some(unsafe {{ {t}_coverage_write(c.as_ptr()) }}),\n"
        ));
    }
    rs.push_str("        _ => {\n            let _ = c;\n            None\n        }\n    }\n}\n");

    // Aliases for the suites, so they do not depend on the configuration's widths.
    for (alias, prefix) in ALIASES {
        if let Some(top) = tops.iter().find(|t| t.starts_with(prefix)) {
            rs.push_str(&format!(
                "\n/// The `{prefix}*` top of rtl/.\npub type {alias} = {top}::{};\n",
                camel(top)
            ));
        }
    }
    // The chip top: the top named like the file list (rtl/<chip.name>.f).
    let chip = std::fs::read_dir(&rtl)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            n.strip_suffix(".f").map(str::to_string)
        })
        .find(|stem| tops.contains(stem));
    if let Some(top) = chip {
        rs.push_str(&format!(
            "\n/// The chip top of rtl/ (named like its file list).\npub type ChipTop = {top}::{};\n",
            camel(&top)
        ));
    }
    // The configuration the RTL folder was generated from (TB_RTL_DIR's when set: a build
    // against another configuration's chip top sizes its harness from that configuration).
    let config = rtl.join("chip_config.rs");
    assert!(
        config.exists(),
        "{} has no chip_config.rs (the configuration's keys the harness is sized from): emit the folder again with this hdl-gen (`hdl-gen emit --out DIR`)",
        rtl.display()
    );
    rs.push_str(&format!(
        "\n/// Every key of the configuration the RTL was generated from (rtl/chip_config.rs).\npub mod config {{\n    include!({config:?});\n}}\n"
    ));
    reg_maps.sort();
    rs.push_str(
        "\n/// Register accessors generated by hdl-gen (rtl/<block>_regs.rs).\npub mod regs {\n",
    );
    for r in &reg_maps {
        rs.push_str(&format!(
            "    /// Accessors of `{r}`.\n    pub mod {r} {{\n        include!({:?});\n    }}\n",
            rtl.join(format!("{r}_regs.rs"))
        ));
    }
    rs.push_str("}\n");
    fs::write(out.join("models.rs"), rs).unwrap();
}

/// A plain Verilator loop: the same stimulus as the Rust benchmark, no harness at all.
const BENCH_LOOP: &str = r#"
#include "VTOP.h"
#include "verilated.h"
#include <chrono>
#include <cstdint>

extern "C" double bench_cpp_loop(uint64_t cycles, uint64_t* checksum) {
  VerilatedContext ctx;
  VTOP top{&ctx};
  top.RST_NAME = RST_ON;
  top.clk_i = 0;
  top.eval();
  top.clk_i = 1;
  top.eval();
  top.RST_NAME = RST_OFF;
  uint64_t x = 0x9e3779b97f4a7c15ull;
  uint64_t sum = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < cycles; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    top.s_valid_i = x & 1;
    top.s_data_i = x;
    top.m_ready_i = ((x >> 1) | (x >> 2)) & 1;
    top.clk_i = 0;
    top.eval();
    if (top.m_valid_o && top.m_ready_i) sum += top.m_data_o;
    top.clk_i = 1;
    top.eval();
  }
  auto t1 = std::chrono::steady_clock::now();
  *checksum = sum;
  top.final();
  return std::chrono::duration<double>(t1 - t0).count();
}
"#;
