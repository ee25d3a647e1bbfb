//! The Rust binding and C++ shim that drive a top module under Verilator.
//!
//! Both come from the same IR as the SystemVerilog, so port names and widths cannot drift. The
//! shim hands Rust one pointer per port field of the Verilated model; after that, setting an
//! input or reading an output is a plain memory access, and only `eval` crosses the FFI.

use crate::module::Module;
use std::fmt::Write;

/// Verilator's storage for a port of `width` bits: (C++ type, Rust type, 32-bit words if wide).
fn storage(width: u32) -> (&'static str, &'static str, Option<u32>) {
    match width {
        0..=8 => ("CData", "u8", None),
        9..=16 => ("SData", "u16", None),
        17..=32 => ("IData", "u32", None),
        33..=64 => ("QData", "u64", None),
        _ => ("EData", "u32", Some(width.div_ceil(32))),
    }
}

/// `skid_buffer` -> `SkidBuffer`.
pub(crate) fn camel(name: &str) -> String {
    name.split('_')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut c = p.chars();
            match c.next() {
                Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

fn mask(width: u32, rust_ty: &str) -> String {
    let bits = match rust_ty {
        "u8" => 8,
        "u16" => 16,
        "u32" => 32,
        _ => 64,
    };
    if width >= bits {
        String::new()
    } else {
        format!(" & 0x{:x}", (1u128 << width) - 1)
    }
}

/// The Rust side: a port-pointer struct, the `extern "C"` declarations and a safe handle.
pub(crate) fn rust(m: &Module) -> String {
    let name = m.name();
    let ty = camel(name);
    let ports = m.ports();
    let mut s = String::new();
    let _ = writeln!(s, "//");
    let _ = writeln!(
        s,
        "// Rust binding for `{name}`, generated from the IR that emitted {name}.sv."
    );
    let _ = writeln!(
        s,
        "// Link it with the Verilated model and {name}_shim.cpp (the testbench build does)."
    );
    s.push('\n');
    let _ = writeln!(
        s,
        "/// Pointers into the Verilated `{name}` model, one per port."
    );
    let _ = writeln!(s, "#[repr(C)]");
    let _ = writeln!(s, "pub struct {ty}Ports {{");
    for p in &ports {
        let (_, rt, _) = storage(p.width);
        let _ = writeln!(s, "    pub {}: *mut {rt},", p.name);
    }
    if ports.is_empty() {
        let _ = writeln!(s, "    pub _none: *mut u8,");
    }
    let _ = writeln!(s, "}}");
    s.push('\n');
    let _ = writeln!(s, "extern \"C\" {{");
    let _ = writeln!(
        s,
        "    fn {name}_new(init_seed: u32) -> *mut core::ffi::c_void;"
    );
    let _ = writeln!(
        s,
        "    fn {name}_ports(model: *mut core::ffi::c_void, ports: *mut {ty}Ports);"
    );
    let _ = writeln!(s, "    fn {name}_eval(model: *mut core::ffi::c_void);");
    let _ = writeln!(s, "    fn {name}_delete(model: *mut core::ffi::c_void);");
    let _ = writeln!(s, "    fn {name}_trace_open(model: *mut core::ffi::c_void, path: *const core::ffi::c_char) -> i32;");
    let _ = writeln!(
        s,
        "    fn {name}_trace_dump(model: *mut core::ffi::c_void, time: u64);"
    );
    let _ = writeln!(
        s,
        "    fn {name}_trace_close(model: *mut core::ffi::c_void);"
    );
    let _ = writeln!(s, "}}");
    s.push('\n');
    let _ = writeln!(
        s,
        "/// The Verilated `{name}`: set inputs, call [`{ty}::eval`], read outputs."
    );
    let _ = writeln!(s, "pub struct {ty} {{");
    let _ = writeln!(s, "    model: *mut core::ffi::c_void,");
    let _ = writeln!(s, "    ports: {ty}Ports,");
    let _ = writeln!(s, "}}");
    s.push('\n');
    let _ = writeln!(s, "impl {ty} {{");
    let _ = writeln!(s, "    /// Module name.");
    let _ = writeln!(s, "    pub const NAME: &'static str = \"{name}\";");
    let _ = writeln!(s, "    /// Every port: (name, width in bits, is input).");
    let _ = writeln!(
        s,
        "    pub const PORTS: &'static [(&'static str, u32, bool)] = &["
    );
    for p in &ports {
        let _ = writeln!(s, "        (\"{}\", {}, {}),", p.name, p.width, p.input);
    }
    let _ = writeln!(s, "    ];");
    s.push('\n');
    let _ = writeln!(
        s,
        "    /// A new model instance with its own Verilator context; every register and memory word"
    );
    let _ = writeln!(s, "    /// starts at zero.");
    let _ = writeln!(s, "    #[allow(clippy::new_without_default)]");
    let _ = writeln!(s, "    pub fn new() -> Self {{");
    let _ = writeln!(s, "        Self::with_init_seed(0)");
    let _ = writeln!(s, "    }}");
    s.push('\n');
    let _ = writeln!(
        s,
        "    /// A new model instance whose registers, memory words and X assignments start from"
    );
    let _ = writeln!(
        s,
        "    /// random values drawn from `seed` (Verilator's `randReset(2)`); seed 0 starts from zero,"
    );
    let _ = writeln!(
        s,
        "    /// as [`{ty}::new`]. Random values reach X assignments and undriven initial values only"
    );
    let _ = writeln!(
        s,
        "    /// in a model Verilated with `--x-assign unique --x-initial unique`. Verilator's random"
    );
    let _ = writeln!(
        s,
        "    /// state is per thread but reseeded by any thread: build random models one at a time."
    );
    let _ = writeln!(s, "    pub fn with_init_seed(seed: u32) -> Self {{");
    let _ = writeln!(
        s,
        "        // SAFETY: the shim allocates a model and fills one valid pointer per port field."
    );
    let _ = writeln!(s, "        unsafe {{");
    let _ = writeln!(s, "            let model = {name}_new(seed);");
    let _ = writeln!(
        s,
        "            assert!(!model.is_null(), \"{name}: model allocation failed\");"
    );
    let _ = writeln!(
        s,
        "            let mut ports = core::mem::MaybeUninit::<{ty}Ports>::zeroed();"
    );
    let _ = writeln!(s, "            {name}_ports(model, ports.as_mut_ptr());");
    let _ = writeln!(
        s,
        "            {ty} {{ model, ports: ports.assume_init() }}"
    );
    let _ = writeln!(s, "        }}");
    let _ = writeln!(s, "    }}");
    s.push('\n');
    let _ = writeln!(
        s,
        "    /// Evaluates the model: outputs follow the inputs and any clock edge."
    );
    let _ = writeln!(s, "    #[inline]");
    let _ = writeln!(s, "    pub fn eval(&self) {{");
    let _ = writeln!(s, "        // SAFETY: `model` is live until drop.");
    let _ = writeln!(s, "        unsafe {{ {name}_eval(self.model) }}");
    let _ = writeln!(s, "    }}");
    s.push('\n');
    let _ = writeln!(
        s,
        "    /// Starts an FST waveform at `path`; false when the model was built without tracing."
    );
    let _ = writeln!(
        s,
        "    pub fn trace_open(&self, path: &std::path::Path) -> bool {{"
    );
    let _ = writeln!(s, "        let Ok(c) = std::ffi::CString::new(path.to_string_lossy().as_bytes()) else {{ return false }};");
    let _ = writeln!(
        s,
        "        // SAFETY: `model` is live; the string outlives the call."
    );
    let _ = writeln!(
        s,
        "        unsafe {{ {name}_trace_open(self.model, c.as_ptr()) != 0 }}"
    );
    let _ = writeln!(s, "    }}");
    s.push('\n');
    let _ = writeln!(
        s,
        "    /// Writes the current values into the open waveform at `time`."
    );
    let _ = writeln!(s, "    #[inline]");
    let _ = writeln!(s, "    pub fn trace_dump(&self, time: u64) {{");
    let _ = writeln!(
        s,
        "        // SAFETY: `model` is live; the shim ignores the call when no trace is open."
    );
    let _ = writeln!(
        s,
        "        unsafe {{ {name}_trace_dump(self.model, time) }}"
    );
    let _ = writeln!(s, "    }}");
    s.push('\n');
    let _ = writeln!(
        s,
        "    /// Flushes and closes the waveform, if one is open."
    );
    let _ = writeln!(s, "    pub fn trace_close(&self) {{");
    let _ = writeln!(s, "        // SAFETY: `model` is live.");
    let _ = writeln!(s, "        unsafe {{ {name}_trace_close(self.model) }}");
    let _ = writeln!(s, "    }}");
    s.push('\n');
    let _ = writeln!(s, "    /// The storage of port `name` in the live model and its width in bits, for drivers that");
    let _ = writeln!(s, "    /// bind ports by name. The pointer stays valid while `self` lives; it addresses a `u8`,");
    let _ = writeln!(
        s,
        "    /// `u16`, `u32` or `u64` for widths up to 8, 16, 32 or 64 bits, else 32-bit words."
    );
    let _ = writeln!(
        s,
        "    pub fn port_ptr(&self, name: &str) -> Option<(*mut u8, u32)> {{"
    );
    let _ = writeln!(s, "        match name {{");
    for p in &ports {
        let _ = writeln!(
            s,
            "            \"{0}\" => Some((self.ports.{0} as *mut u8, {1})),",
            p.name, p.width
        );
    }
    let _ = writeln!(s, "            _ => None,");
    let _ = writeln!(s, "        }}");
    let _ = writeln!(s, "    }}");
    for p in &ports {
        let (_, rt, words) = storage(p.width);
        let n = &p.name;
        s.push('\n');
        match words {
            None => {
                if p.input {
                    let _ = writeln!(
                        s,
                        "    /// Drives input `{n}` ({} bits); bits above the width are dropped.",
                        p.width
                    );
                    let _ = writeln!(s, "    #[inline]");
                    let _ = writeln!(s, "    pub fn set_{n}(&self, v: {rt}) {{");
                    let _ = writeln!(s, "        // SAFETY: the pointer addresses this port's field in the live model.");
                    let _ = writeln!(
                        s,
                        "        unsafe {{ *self.ports.{n} = v{} }}",
                        mask(p.width, rt)
                    );
                    let _ = writeln!(s, "    }}");
                    s.push('\n');
                }
                let dir = if p.input { "input" } else { "output" };
                let _ = writeln!(s, "    /// Reads {dir} `{n}` ({} bits).", p.width);
                let _ = writeln!(s, "    #[inline]");
                let _ = writeln!(s, "    pub fn {n}(&self) -> {rt} {{");
                let _ = writeln!(
                    s,
                    "        // SAFETY: the pointer addresses this port's field in the live model."
                );
                let _ = writeln!(s, "        unsafe {{ *self.ports.{n} }}");
                let _ = writeln!(s, "    }}");
            }
            Some(w) => {
                let top_bits = p.width - (w - 1) * 32;
                if p.input {
                    let _ = writeln!(s, "    /// Drives input `{n}` ({} bits) from 32-bit words, least significant first.", p.width);
                    let _ = writeln!(s, "    #[inline]");
                    let _ = writeln!(s, "    pub fn set_{n}(&self, v: &[u32; {w}]) {{");
                    let _ = writeln!(s, "        // SAFETY: the pointer addresses this port's {w} words in the live model.");
                    let _ = writeln!(s, "        unsafe {{");
                    let _ = writeln!(s, "            core::ptr::copy_nonoverlapping(v.as_ptr(), self.ports.{n}, {w});");
                    if top_bits < 32 {
                        let _ = writeln!(
                            s,
                            "            *self.ports.{n}.add({}) &= 0x{:x};",
                            w - 1,
                            (1u64 << top_bits) - 1
                        );
                    }
                    let _ = writeln!(s, "        }}");
                    let _ = writeln!(s, "    }}");
                    s.push('\n');
                }
                let dir = if p.input { "input" } else { "output" };
                let _ = writeln!(
                    s,
                    "    /// Reads {dir} `{n}` ({} bits) as 32-bit words, least significant first.",
                    p.width
                );
                let _ = writeln!(s, "    #[inline]");
                let _ = writeln!(s, "    pub fn {n}(&self) -> [u32; {w}] {{");
                let _ = writeln!(s, "        let mut v = [0u32; {w}];");
                let _ = writeln!(s, "        // SAFETY: the pointer addresses this port's {w} words in the live model.");
                let _ = writeln!(s, "        unsafe {{ core::ptr::copy_nonoverlapping(self.ports.{n}, v.as_mut_ptr(), {w}) }};");
                let _ = writeln!(s, "        v");
                let _ = writeln!(s, "    }}");
            }
        }
    }
    let _ = writeln!(s, "}}");
    s.push('\n');
    let _ = writeln!(s, "impl Drop for {ty} {{");
    let _ = writeln!(s, "    fn drop(&mut self) {{");
    let _ = writeln!(
        s,
        "        // SAFETY: `model` came from `{name}_new` and is dropped once."
    );
    let _ = writeln!(s, "        unsafe {{ {name}_delete(self.model) }}");
    let _ = writeln!(s, "    }}");
    let _ = writeln!(s, "}}");
    s
}

/// The C++ side: `extern "C"` functions over the Verilated class `V<name>`.
pub(crate) fn shim(m: &Module) -> String {
    let name = m.name();
    let ports = m.ports();
    let mut s = String::new();
    let _ = writeln!(s, "//");
    let _ = writeln!(
        s,
        "// C shim between the Verilated `V{name}` and its Rust binding {name}.rs."
    );
    let _ = writeln!(
        s,
        "// Build with -DVM_TRACE_FST=1 (and verilate with --trace-fst) for waveforms, with"
    );
    let _ = writeln!(
        s,
        "// -DVM_COVERAGE=1 (and verilate with --coverage-*) for coverage."
    );
    s.push('\n');
    let _ = writeln!(s, "#include \"V{name}.h\"");
    let _ = writeln!(s, "#include \"verilated.h\"");
    let _ = writeln!(s, "#if VM_TRACE_FST");
    let _ = writeln!(s, "#include \"verilated_fst_c.h\"");
    let _ = writeln!(s, "#endif");
    let _ = writeln!(s, "#if VM_COVERAGE");
    let _ = writeln!(s, "#include \"V{name}__Syms.h\"");
    let _ = writeln!(s, "#include \"verilated_cov.h\"");
    let _ = writeln!(s, "#include <cstddef>");
    let _ = writeln!(s, "#include <mutex>");
    let _ = writeln!(s, "#include <vector>");
    let _ = writeln!(s, "#endif");
    s.push('\n');
    let _ = writeln!(s, "namespace {{");
    for l in [
        "#if VM_COVERAGE",
        "// A model's coverage counters live in it and die with it: each model adds them here as it is",
        "// deleted, point by point (every model of this top has the same points, in the same order),",
        "// and `_coverage_write` writes the sums through a fresh model's coverage context.",
        "std::mutex cov_mutex;",
        "std::vector<uint64_t> cov_sums;",
        "uint64_t cov_models = 0;",
        "// The counters are `uint32_t` (`std::atomic<uint32_t>` in Verilator 5.006).",
        "template <class Counter>",
        "void cov_add(const Counter* counts, size_t n) {",
        "  std::lock_guard<std::mutex> lock{cov_mutex};",
        "  if (cov_sums.size() < n) cov_sums.resize(n, 0);",
        "  for (size_t i = 0; i < n; ++i) cov_sums[i] += counts[i];",
        "  ++cov_models;",
        "}",
        "#endif",
    ] {
        let _ = writeln!(s, "{l}");
    }
    let _ = writeln!(s, "struct Model {{");
    let _ = writeln!(s, "  VerilatedContext ctx;");
    let _ = writeln!(s, "  V{name}* top;");
    let _ = writeln!(s, "#if VM_TRACE_FST");
    let _ = writeln!(s, "  VerilatedFstC* fst = nullptr;");
    let _ = writeln!(s, "#endif");
    let _ = writeln!(
        s,
        "  // Verilator draws initial values while it constructs the model, from the context that"
    );
    let _ = writeln!(
        s,
        "  // constructed last on this thread: this one. A seed of 0 keeps them all zero."
    );
    let _ = writeln!(s, "  explicit Model(uint32_t init_seed) {{");
    let _ = writeln!(s, "    if (init_seed != 0) {{");
    let _ = writeln!(s, "      ctx.randReset(2);");
    let _ = writeln!(s, "      ctx.randSeed(static_cast<int>(init_seed));");
    let _ = writeln!(s, "    }}");
    let _ = writeln!(s, "    top = new V{name}{{&ctx}};");
    let _ = writeln!(s, "  }}");
    let _ = writeln!(s, "  ~Model() {{");
    let _ = writeln!(s, "#if VM_TRACE_FST");
    let _ = writeln!(s, "    if (fst) {{ fst->close(); delete fst; }}");
    let _ = writeln!(s, "#endif");
    let _ = writeln!(s, "    top->final();");
    let _ = writeln!(s, "#if VM_COVERAGE");
    let _ = writeln!(s, "    const auto& c = top->rootp->vlSymsp->__Vcoverage;");
    let _ = writeln!(s, "    cov_add(c, sizeof(c) / sizeof(c[0]));");
    let _ = writeln!(s, "#endif");
    let _ = writeln!(s, "    delete top;");
    let _ = writeln!(s, "  }}");
    let _ = writeln!(s, "}};");
    let _ = writeln!(s, "}}  // namespace");
    s.push('\n');
    let _ = writeln!(s, "extern \"C\" {{");
    s.push('\n');
    let _ = writeln!(s, "struct {name}_ports {{");
    for p in &ports {
        let (ct, _, _) = storage(p.width);
        let _ = writeln!(s, "  {ct}* {};", p.name);
    }
    if ports.is_empty() {
        let _ = writeln!(s, "  CData* _none;");
    }
    let _ = writeln!(s, "}};");
    s.push('\n');
    let _ = writeln!(
        s,
        "void* {name}_new(uint32_t init_seed) {{ return new Model(init_seed); }}"
    );
    s.push('\n');
    let _ = writeln!(s, "void {name}_ports(void* model, {name}_ports* p) {{");
    let _ = writeln!(s, "  V{name}* t = static_cast<Model*>(model)->top;");
    for p in &ports {
        let (_, _, words) = storage(p.width);
        match words {
            None => {
                let _ = writeln!(s, "  p->{0} = &t->{0};", p.name);
            }
            Some(_) => {
                let _ = writeln!(s, "  p->{0} = t->{0}.data();", p.name);
            }
        }
    }
    if ports.is_empty() {
        let _ = writeln!(s, "  (void)t;");
    }
    let _ = writeln!(s, "}}");
    s.push('\n');
    let _ = writeln!(
        s,
        "void {name}_eval(void* model) {{ static_cast<Model*>(model)->top->eval(); }}"
    );
    s.push('\n');
    let _ = writeln!(
        s,
        "void {name}_delete(void* model) {{ delete static_cast<Model*>(model); }}"
    );
    s.push('\n');
    let _ = writeln!(s, "int {name}_trace_open(void* model, const char* path) {{");
    let _ = writeln!(s, "#if VM_TRACE_FST");
    let _ = writeln!(s, "  Model* m = static_cast<Model*>(model);");
    let _ = writeln!(s, "  if (m->fst) return 1;");
    let _ = writeln!(s, "  m->ctx.traceEverOn(true);");
    let _ = writeln!(s, "  m->fst = new VerilatedFstC;");
    let _ = writeln!(s, "  m->top->trace(m->fst, 99);");
    let _ = writeln!(s, "  m->fst->open(path);");
    let _ = writeln!(s, "  return 1;");
    let _ = writeln!(s, "#else");
    let _ = writeln!(s, "  (void)model;");
    let _ = writeln!(s, "  (void)path;");
    let _ = writeln!(s, "  return 0;");
    let _ = writeln!(s, "#endif");
    let _ = writeln!(s, "}}");
    s.push('\n');
    let _ = writeln!(s, "void {name}_trace_dump(void* model, uint64_t time) {{");
    let _ = writeln!(s, "#if VM_TRACE_FST");
    let _ = writeln!(s, "  Model* m = static_cast<Model*>(model);");
    let _ = writeln!(s, "  if (m->fst) m->fst->dump(time);");
    let _ = writeln!(s, "#else");
    let _ = writeln!(s, "  (void)model;");
    let _ = writeln!(s, "  (void)time;");
    let _ = writeln!(s, "#endif");
    let _ = writeln!(s, "}}");
    s.push('\n');
    let _ = writeln!(s, "void {name}_trace_close(void* model) {{");
    let _ = writeln!(s, "#if VM_TRACE_FST");
    let _ = writeln!(s, "  Model* m = static_cast<Model*>(model);");
    let _ = writeln!(
        s,
        "  if (m->fst) {{ m->fst->close(); delete m->fst; m->fst = nullptr; }}"
    );
    let _ = writeln!(s, "#else");
    let _ = writeln!(s, "  (void)model;");
    let _ = writeln!(s, "#endif");
    let _ = writeln!(s, "}}");
    s.push('\n');
    for l in [
        "// Writes the coverage counts of every model of this top deleted so far, summed, to `path`",
        "// (Verilator's coverage.dat format). Returns the number of models summed (0: none, no file",
        "// written), or -1 when the model was not built for coverage.",
    ] {
        let _ = writeln!(s, "{l}");
    }
    let _ = writeln!(s, "int64_t {name}_coverage_write(const char* path) {{");
    let _ = writeln!(s, "#if VM_COVERAGE");
    for l in [
        "  std::lock_guard<std::mutex> lock{cov_mutex};",
        "  if (cov_models == 0) return 0;",
        "  VerilatedContext ctx;",
        "  V{name} top{&ctx};",
        "  auto& c = top.rootp->vlSymsp->__Vcoverage;",
        "  for (size_t i = 0; i < sizeof(c) / sizeof(c[0]) && i < cov_sums.size(); ++i)",
        "    c[i] = cov_sums[i] > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(cov_sums[i]);",
        "  ctx.coveragep()->write(path);",
        "  return static_cast<int64_t>(cov_models);",
    ] {
        let _ = writeln!(s, "{}", l.replace("{name}", name));
    }
    let _ = writeln!(s, "#else");
    let _ = writeln!(s, "  (void)path;");
    let _ = writeln!(s, "  return -1;");
    let _ = writeln!(s, "#endif");
    let _ = writeln!(s, "}}");
    s.push('\n');
    let _ = writeln!(s, "}}  // extern \"C\"");
    s
}
