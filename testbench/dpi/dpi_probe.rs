// Hand-written Rust binding for the Verilated `dpi_probe` (testbench/dpi/dpi_probe.sv),
// included by testbench/build.rs like the generated bindings of rtl/ (same functions: the
// build adds the `Dut` implementation). Ports are found by name through the shim.

extern "C" {
    fn dpi_probe_new(init_seed: u32) -> *mut core::ffi::c_void;
    fn dpi_probe_eval(model: *mut core::ffi::c_void);
    fn dpi_probe_delete(model: *mut core::ffi::c_void);
    fn dpi_probe_port(
        model: *mut core::ffi::c_void,
        name: *const core::ffi::c_char,
        width: *mut u32,
    ) -> *mut u8;
    fn dpi_probe_trace_open(model: *mut core::ffi::c_void, path: *const core::ffi::c_char) -> i32;
    fn dpi_probe_trace_dump(model: *mut core::ffi::c_void, time: u64);
    fn dpi_probe_trace_close(model: *mut core::ffi::c_void);
}

/// The Verilated `dpi_probe`: RTL that reads and writes Rust memory through DPI-C.
pub struct DpiProbe {
    model: *mut core::ffi::c_void,
}

impl DpiProbe {
    /// Module name.
    pub const NAME: &'static str = "dpi_probe";
    /// Every port: (name, width in bits, is input).
    pub const PORTS: &'static [(&'static str, u32, bool)] = &[
        ("clk_i", 1, true),
        ("rst_ni", 1, true),
        ("rd_i", 1, true),
        ("wr_i", 1, true),
        ("addr_i", 32, true),
        ("wdata_i", 64, true),
        ("rvalid_o", 1, false),
        ("rdata_o", 32, false),
        ("reads_o", 32, false),
    ];

    /// A new model instance with its own Verilator context; every register starts at zero.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Self::with_init_seed(0)
    }

    /// A new model instance whose registers start from random values drawn from `seed` (0:
    /// all zero), as the generated bindings do.
    pub fn with_init_seed(seed: u32) -> Self {
        // SAFETY: the shim allocates a model or returns null.
        let model = unsafe { dpi_probe_new(seed) };
        assert!(!model.is_null(), "dpi_probe: model allocation failed");
        DpiProbe { model }
    }

    /// Evaluates the model (the DPI-C imports run in here, on the calling thread).
    #[inline]
    pub fn eval(&self) {
        // SAFETY: `model` is live until drop.
        unsafe { dpi_probe_eval(self.model) }
    }

    /// Starts an FST waveform at `path`; false when the model was built without tracing.
    pub fn trace_open(&self, path: &std::path::Path) -> bool {
        let Ok(c) = std::ffi::CString::new(path.to_string_lossy().as_bytes()) else {
            return false;
        };
        // SAFETY: `model` is live; the string outlives the call.
        unsafe { dpi_probe_trace_open(self.model, c.as_ptr()) != 0 }
    }

    /// Writes the current values into the open waveform at `time`.
    #[inline]
    pub fn trace_dump(&self, time: u64) {
        // SAFETY: `model` is live; the shim ignores the call when no trace is open.
        unsafe { dpi_probe_trace_dump(self.model, time) }
    }

    /// Flushes and closes the waveform, if one is open.
    pub fn trace_close(&self) {
        // SAFETY: `model` is live.
        unsafe { dpi_probe_trace_close(self.model) }
    }

    /// The storage of port `name` in the live model and its width in bits (a `u8`, `u32` or
    /// `u64` by width, as Verilator stores them).
    pub fn port_ptr(&self, name: &str) -> Option<(*mut u8, u32)> {
        let c = std::ffi::CString::new(name).ok()?;
        let mut width = 0u32;
        // SAFETY: `model` is live; the shim writes `width` only when it finds the port.
        let p = unsafe { dpi_probe_port(self.model, c.as_ptr(), &mut width) };
        (!p.is_null()).then_some((p, width))
    }
}

impl Drop for DpiProbe {
    fn drop(&mut self) {
        // SAFETY: `model` came from `dpi_probe_new` and is dropped once.
        unsafe { dpi_probe_delete(self.model) }
    }
}
