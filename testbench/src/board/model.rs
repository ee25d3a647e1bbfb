//! The simulated board's model: the board core generated from hdl-gen's library with its clock
//! lowered ([`BIT_CYCLES`] core cycles per UART bit), Verilated and compiled into a shared
//! library in a cache folder keyed by a hash of the generated text (and of Verilator's version
//! and the flags), loaded with `dlopen`, and driven through the emitted `<core>_shim.cpp` C ABI
//! as a [`Dut`].
//!
//! The core is not in rtl/ nor in the testbench's build: it holds the whole chip, and building
//! it would add minutes to every build. The first `testbench board` run builds it (and says
//! so, with the time taken); later runs load the cached library.

use crate::model_flags::MODEL_FLAGS;
use crate::sim::Dut;
use hdl_builder::{Design, EmitOptions, OutFile};
use hdl_gen::boards::{self, Board};
use std::ffi::{c_char, c_void, CString};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Instant;

/// Core cycles per UART bit in the simulated core (the core clock is lowered to `baud *
/// BIT_CYCLES`, 921.6 kHz at 115200 baud): a byte is 80 cycles, so the host tool's exchanges
/// take few cycles, and the bridge's UART still samples each bit at its middle (an even bit
/// time; `hdl-gen/tests/fpga_bringup.rs` covers an odd one).
pub const BIT_CYCLES: u32 = 8;

/// The C++ optimization of the model chosen by default (`--opt`), from the figures in
/// docs/fpga.md ("The simulated board"): see there for build time and cycles per second.
pub const DEFAULT_OPT: u32 = 1;

/// The board core's ports, in the module's (and so the shim's) order: both boards' cores have
/// these. [`build`] checks the generated module against them.
pub const PORTS: &[(&str, u32, bool)] = &[
    ("clk_i", 1, true),
    ("clk_tx_i", 1, true),
    ("clk_rx_i", 1, true),
    ("rst_ni", 1, true),
    ("rst_tx_ni", 1, true),
    ("rst_rx_ni", 1, true),
    ("uart_rx_i", 1, true),
    ("uart_tx_o", 1, false),
    ("eth_rst_no", 1, false),
    ("eth_mdc_o", 1, false),
    ("eth_mdio_o", 1, false),
    ("eth_mdio_oe_o", 1, false),
    ("eth_mdio_i", 1, true),
    ("eth_tx_clk_o", 1, false),
    ("eth_tx_ctl_o", 1, false),
    ("eth_txd_o", 4, false),
    ("eth_rx_ctl_i", 1, true),
    ("eth_rxd_i", 4, true),
    ("status_o", 5, false),
];

/// Verilator's flags for the board core: the testbench's models' ([`MODEL_FLAGS`]) without
/// `-O3` (the C++ optimization is chosen apart, see [`DEFAULT_OPT`]), warnings not fatal.
fn verilator_flags() -> Vec<&'static str> {
    std::iter::once("--cc")
        .chain(MODEL_FLAGS.iter().copied())
        .chain(["-Wno-fatal"])
        .collect()
}

/// The board `name` with its core clock lowered to `baud * BIT_CYCLES`, or an error naming the
/// boards there are.
pub fn lowered_board(name: &str) -> Result<Board, String> {
    let mut b = boards::by_name(name).ok_or_else(|| {
        let names: Vec<&str> = boards::all().iter().map(|b| b.name).collect();
        format!("no board `{name}`; the boards: {}", names.join(", "))
    })?;
    b.core_hz = b.baud * u64::from(BIT_CYCLES);
    Ok(b)
}

/// The simulated board's core: its module name and generated files (SystemVerilog, the shim).
pub struct Generated {
    pub top: String,
    pub files: Vec<OutFile>,
}

/// Generates the core of `b` (a [`lowered_board`]) and checks its ports against [`PORTS`].
pub fn generate(b: &Board) -> Result<Generated, String> {
    let cfg = boards::config(b).map_err(|e| e.to_string())?;
    let core = boards::core(b, &cfg).map_err(|e| e.to_string())?;
    let ports: Vec<(String, u32, bool)> = core
        .ports()
        .into_iter()
        .map(|p| (p.name, p.width, p.input))
        .collect();
    let want: Vec<(String, u32, bool)> = PORTS
        .iter()
        .map(|&(n, w, i)| (n.to_string(), w, i))
        .collect();
    if ports != want {
        return Err(format!(
            "the {} core's ports changed ({ports:?}): update PORTS in testbench/src/board/model.rs",
            b.name
        ));
    }
    let top = core.name().to_string();
    let mut d = Design::new(&top);
    d.add_top(core);
    let files = d
        .emit(&EmitOptions {
            header: vec![format!(
                "The simulated {} core (testbench board), {} core cycles per UART bit.",
                b.title, BIT_CYCLES
            )],
            core_name: format!("nvmeof:board-sim:{}:0", b.name),
            description: "simulated board core".into(),
        })
        .map_err(|e| e.to_string())?;
    Ok(Generated { top, files })
}

fn fnv(bytes: &[u8], mut h: u64) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Runs a build step; the error names the step, its command line and its output.
fn run(what: &str, cmd: &mut Command) -> Result<(), String> {
    let out = cmd
        .output()
        .map_err(|e| format!("{what}: cannot run {cmd:?}: {e}"))?;
    if !out.status.success() {
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = text.lines().rev().take(30).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(format!("{what} failed ({cmd:?}):\n{}", tail.join("\n")));
    }
    Ok(())
}

/// The tools a build needs, each checked by running it: Verilator (its version, part of the
/// cache key), make and a C++ compiler (`CXX`, else `c++`). The error says what is missing.
fn tools() -> Result<(Vec<u8>, String), String> {
    let v = Command::new("verilator")
        .arg("--version")
        .output()
        .map_err(|e| {
            format!(
                "testbench board builds the board core with Verilator, which cannot be run ({e}): \
             install it (`apt-get install verilator`, CI uses 5.006; or run ci/setup.sh)"
            )
        })?;
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    Command::new(&cxx).arg("--version").output().map_err(|e| {
        format!(
            "testbench board compiles the Verilated board core with a C++ compiler, and `{cxx}` \
             cannot be run ({e}): install one (`apt-get install g++`) or set CXX"
        )
    })?;
    Command::new("make").arg("--version").output().map_err(|e| {
        format!("testbench board builds the Verilated model with make, which cannot be run ({e}): `apt-get install make`")
    })?;
    Ok((v.stdout, cxx))
}

/// The shared library of the generated core, from the cache (`<cache>/<top>/<hash>/`) or built
/// into it at C++ optimization `-O<opt>`; says on stderr when it builds, and how long it took.
pub fn build(g: &Generated, cache: &Path, opt: u32) -> Result<PathBuf, String> {
    let (version, cxx) = tools()?;
    let mut files: Vec<&OutFile> = g
        .files
        .iter()
        .filter(|f| f.path.ends_with(".sv") || f.path == format!("{}_shim.cpp", g.top))
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let mut h = fnv(&version, 0xcbf2_9ce4_8422_2325);
    h = fnv(verilator_flags().join(" ").as_bytes(), h);
    h = fnv(format!("-O{opt} {cxx}").as_bytes(), h);
    for f in &files {
        h = fnv(f.path.as_bytes(), h);
        h = fnv(f.contents.as_bytes(), h);
    }
    let dir = cache.join(&g.top).join(format!("{h:016x}-O{opt}"));
    let lib = dir.join(format!("lib{}.so", g.top));
    if lib.exists() {
        return Ok(lib);
    }
    eprintln!(
        "board: building the simulated {} (Verilator, then C++ at -O{opt}) into {}; later runs reuse it",
        g.top,
        dir.display()
    );
    let started = Instant::now();
    let tmp = cache
        .join(&g.top)
        .join(format!("{h:016x}-O{opt}.tmp{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let src = tmp.join("src");
    let mut svs = Vec::new();
    for f in &files {
        let p = src.join(&f.path);
        std::fs::create_dir_all(p.parent().unwrap_or(&src))
            .map_err(|e| format!("{}: {e}", p.display()))?;
        std::fs::write(&p, &f.contents).map_err(|e| format!("{}: {e}", p.display()))?;
        if f.path.ends_with(".sv") {
            svs.push(p);
        }
    }
    let obj = tmp.join("obj");
    run(
        "verilating the board core",
        Command::new("verilator")
            .args(verilator_flags())
            .arg("--Mdir")
            .arg(&obj)
            .args(["--top-module", &g.top])
            .args(&svs),
    )?;
    let verilated = started.elapsed().as_secs_f64();
    let o = format!("-O{opt}");
    run(
        "compiling the Verilated board core",
        Command::new("make")
            .arg("-s")
            .arg("-j2")
            .arg("-C")
            .arg(&obj)
            .arg("-f")
            .arg(format!("V{}.mk", g.top))
            .arg(format!("OPT_FAST={o}"))
            .arg(format!("OPT_SLOW={o}"))
            .arg("OPT_GLOBAL=-O2")
            .arg(format!("CXX={cxx}"))
            .arg(format!("V{}__ALL.a", g.top))
            .args(["verilated.o", "verilated_threads.o", "verilated_fst_c.o"]),
    )?;
    let root = Command::new("verilator")
        .args(["--getenv", "VERILATOR_ROOT"])
        .output()
        .map_err(|e| format!("verilator --getenv VERILATOR_ROOT: {e}"))?;
    let inc = PathBuf::from(String::from_utf8_lossy(&root.stdout).trim()).join("include");
    let out = tmp.join(format!("lib{}.so", g.top));
    // The library carries its own Verilator runtime, bound to itself (-Bsymbolic): the
    // testbench links another copy statically, and neither may see the other's.
    run(
        "linking the board core's shared library",
        Command::new(&cxx)
            .args(["-shared", "-fPIC", "-std=c++17", "-O2"])
            .args(["-DVM_TRACE=1", "-DVM_TRACE_FST=1", "-Wno-unused-parameter"])
            .arg("-I")
            .arg(&obj)
            .arg("-I")
            .arg(&inc)
            .arg("-I")
            .arg(inc.join("vltstd"))
            .arg(src.join(format!("{}_shim.cpp", g.top)))
            .arg(obj.join(format!("V{}__ALL.a", g.top)))
            .arg(obj.join("verilated.o"))
            .arg(obj.join("verilated_threads.o"))
            .arg(obj.join("verilated_fst_c.o"))
            .args(["-Wl,-Bsymbolic", "-lz", "-pthread", "-o"])
            .arg(&out),
    )?;
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::rename(&out, &lib).map_err(|e| format!("{}: {e}", lib.display()))?;
    let _ = std::fs::remove_dir_all(&tmp);
    eprintln!(
        "board: built {} in {:.0} s (Verilator {verilated:.0} s, C++ at -O{opt} {:.0} s)",
        lib.display(),
        started.elapsed().as_secs_f64(),
        started.elapsed().as_secs_f64() - verilated
    );
    Ok(lib)
}

type NewFn = unsafe extern "C" fn(u32) -> *mut c_void;
type PortsFn = unsafe extern "C" fn(*mut c_void, *mut *mut u8);
type ModelFn = unsafe extern "C" fn(*mut c_void);
type OpenFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> i32;
type DumpFn = unsafe extern "C" fn(*mut c_void, u64);

/// The shim's functions in a loaded library.
pub struct Lib {
    new: NewFn,
    ports: PortsFn,
    eval: ModelFn,
    delete: ModelFn,
    trace_open: OpenFn,
    trace_dump: DumpFn,
    trace_close: ModelFn,
}

fn dl_error() -> String {
    // SAFETY: dlerror returns a NUL-terminated message or null.
    unsafe {
        let e = libc::dlerror();
        if e.is_null() {
            "unknown error".into()
        } else {
            std::ffi::CStr::from_ptr(e).to_string_lossy().into_owned()
        }
    }
}

/// Loads `path` (built by [`build`] for module `top`) and finds the shim's functions. The
/// library stays loaded for the life of the process.
pub fn load(path: &Path, top: &str) -> Result<Lib, String> {
    let c = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("{}: not a path", path.display()))?;
    // SAFETY: a plain dlopen of a library built above; its constructors are Verilator's.
    let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if h.is_null() {
        return Err(format!("dlopen {}: {}", path.display(), dl_error()));
    }
    let sym = |name: &str| -> Result<*mut c_void, String> {
        let n = CString::new(format!("{top}_{name}")).unwrap();
        // SAFETY: `h` is a live handle; the name is NUL-terminated.
        let p = unsafe { libc::dlsym(h, n.as_ptr()) };
        if p.is_null() {
            Err(format!(
                "{}: no symbol {top}_{name} ({})",
                path.display(),
                dl_error()
            ))
        } else {
            Ok(p)
        }
    };
    // SAFETY: the shim defines these functions with exactly these C signatures
    // (hdl-gen/builder/src/binding.rs).
    unsafe {
        Ok(Lib {
            new: std::mem::transmute::<*mut c_void, NewFn>(sym("new")?),
            ports: std::mem::transmute::<*mut c_void, PortsFn>(sym("ports")?),
            eval: std::mem::transmute::<*mut c_void, ModelFn>(sym("eval")?),
            delete: std::mem::transmute::<*mut c_void, ModelFn>(sym("delete")?),
            trace_open: std::mem::transmute::<*mut c_void, OpenFn>(sym("trace_open")?),
            trace_dump: std::mem::transmute::<*mut c_void, DumpFn>(sym("trace_dump")?),
            trace_close: std::mem::transmute::<*mut c_void, ModelFn>(sym("trace_close")?),
        })
    }
}

/// A board whose core can be simulated: its core's module name and its loaded library.
pub trait Kind: 'static {
    /// The core's module name (`<board>_core`).
    const NAME: &'static str;
    /// The board's name in hdl-gen (`boards::by_name`).
    const BOARD: &'static str;
    /// The loaded library, set once by [`install`].
    fn lib() -> &'static OnceLock<Lib>;
}

/// The Colorlight i5.
pub struct ColorlightI5;
/// The ButterStick.
pub struct Butterstick;

impl Kind for ColorlightI5 {
    const NAME: &'static str = "colorlight_i5_core";
    const BOARD: &'static str = "colorlight_i5";
    fn lib() -> &'static OnceLock<Lib> {
        static L: OnceLock<Lib> = OnceLock::new();
        &L
    }
}

impl Kind for Butterstick {
    const NAME: &'static str = "butterstick_core";
    const BOARD: &'static str = "butterstick";
    fn lib() -> &'static OnceLock<Lib> {
        static L: OnceLock<Lib> = OnceLock::new();
        &L
    }
}

/// Makes `lib` the library [`Core<K>`] models are created from.
pub fn install<K: Kind>(lib: Lib) {
    let _ = K::lib().set(lib);
}

/// A live model of board `K`'s core, from its loaded library.
pub struct Core<K: Kind> {
    model: *mut c_void,
    ports: Vec<*mut u8>,
    lib: &'static Lib,
    _kind: PhantomData<K>,
}

impl<K: Kind> Dut for Core<K> {
    const NAME: &'static str = K::NAME;
    const PORTS: &'static [(&'static str, u32, bool)] = PORTS;

    fn create(init_seed: u32) -> Self {
        let lib = K::lib()
            .get()
            .unwrap_or_else(|| panic!("{}: the model's library is not loaded", K::NAME));
        let mut ports = vec![std::ptr::null_mut(); PORTS.len()];
        // SAFETY: the shim allocates a model and fills one pointer per port, in PORTS' order
        // (checked against the module when it was generated).
        let model = unsafe {
            let m = (lib.new)(init_seed);
            assert!(!m.is_null(), "{}: model allocation failed", K::NAME);
            (lib.ports)(m, ports.as_mut_ptr());
            m
        };
        Core {
            model,
            ports,
            lib,
            _kind: PhantomData,
        }
    }

    fn eval(&self) {
        // SAFETY: `model` is live until drop.
        unsafe { (self.lib.eval)(self.model) }
    }

    fn port_ptr(&self, name: &str) -> Option<(*mut u8, u32)> {
        let i = PORTS.iter().position(|p| p.0 == name)?;
        Some((self.ports[i], PORTS[i].1))
    }

    fn trace_open(&self, path: &Path) -> bool {
        let Ok(c) = CString::new(path.as_os_str().as_encoded_bytes()) else {
            return false;
        };
        // SAFETY: `model` is live; the string outlives the call.
        unsafe { (self.lib.trace_open)(self.model, c.as_ptr()) != 0 }
    }

    fn trace_dump(&self, time: u64) {
        // SAFETY: `model` is live.
        unsafe { (self.lib.trace_dump)(self.model, time) }
    }

    fn trace_close(&self) {
        // SAFETY: `model` is live.
        unsafe { (self.lib.trace_close)(self.model) }
    }
}

impl<K: Kind> Drop for Core<K> {
    fn drop(&mut self) {
        // SAFETY: `model` came from the shim's `new` and is deleted once.
        unsafe { (self.lib.delete)(self.model) }
    }
}
