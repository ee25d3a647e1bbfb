// golden test header
//
// Rust binding for `skid_buffer_w8`, generated from the IR that emitted skid_buffer_w8.sv.
// Link it with the Verilated model and skid_buffer_w8_shim.cpp (the testbench build does).

/// Pointers into the Verilated `skid_buffer_w8` model, one per port.
#[repr(C)]
pub struct SkidBufferW8Ports {
    pub clk_i: *mut u8,
    pub rst_ni: *mut u8,
    pub s_valid_i: *mut u8,
    pub s_ready_o: *mut u8,
    pub s_data_i: *mut u8,
    pub m_valid_o: *mut u8,
    pub m_ready_i: *mut u8,
    pub m_data_o: *mut u8,
}

extern "C" {
    fn skid_buffer_w8_new(init_seed: u32) -> *mut core::ffi::c_void;
    fn skid_buffer_w8_ports(model: *mut core::ffi::c_void, ports: *mut SkidBufferW8Ports);
    fn skid_buffer_w8_eval(model: *mut core::ffi::c_void);
    fn skid_buffer_w8_delete(model: *mut core::ffi::c_void);
    fn skid_buffer_w8_trace_open(model: *mut core::ffi::c_void, path: *const core::ffi::c_char) -> i32;
    fn skid_buffer_w8_trace_dump(model: *mut core::ffi::c_void, time: u64);
    fn skid_buffer_w8_trace_close(model: *mut core::ffi::c_void);
}

/// The Verilated `skid_buffer_w8`: set inputs, call [`SkidBufferW8::eval`], read outputs.
pub struct SkidBufferW8 {
    model: *mut core::ffi::c_void,
    ports: SkidBufferW8Ports,
}

impl SkidBufferW8 {
    /// Module name.
    pub const NAME: &'static str = "skid_buffer_w8";
    /// Every port: (name, width in bits, is input).
    pub const PORTS: &'static [(&'static str, u32, bool)] = &[
        ("clk_i", 1, true),
        ("rst_ni", 1, true),
        ("s_valid_i", 1, true),
        ("s_ready_o", 1, false),
        ("s_data_i", 8, true),
        ("m_valid_o", 1, false),
        ("m_ready_i", 1, true),
        ("m_data_o", 8, false),
    ];

    /// A new model instance with its own Verilator context; every register and memory word
    /// starts at zero.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Self::with_init_seed(0)
    }

    /// A new model instance whose registers, memory words and X assignments start from
    /// random values drawn from `seed` (Verilator's `randReset(2)`); seed 0 starts from zero,
    /// as [`SkidBufferW8::new`]. Random values reach X assignments and undriven initial values only
    /// in a model Verilated with `--x-assign unique --x-initial unique`. Verilator's random
    /// state is per thread but reseeded by any thread: build random models one at a time.
    pub fn with_init_seed(seed: u32) -> Self {
        // SAFETY: the shim allocates a model and fills one valid pointer per port field.
        unsafe {
            let model = skid_buffer_w8_new(seed);
            assert!(!model.is_null(), "skid_buffer_w8: model allocation failed");
            let mut ports = core::mem::MaybeUninit::<SkidBufferW8Ports>::zeroed();
            skid_buffer_w8_ports(model, ports.as_mut_ptr());
            SkidBufferW8 { model, ports: ports.assume_init() }
        }
    }

    /// Evaluates the model: outputs follow the inputs and any clock edge.
    #[inline]
    pub fn eval(&self) {
        // SAFETY: `model` is live until drop.
        unsafe { skid_buffer_w8_eval(self.model) }
    }

    /// Starts an FST waveform at `path`; false when the model was built without tracing.
    pub fn trace_open(&self, path: &std::path::Path) -> bool {
        let Ok(c) = std::ffi::CString::new(path.to_string_lossy().as_bytes()) else { return false };
        // SAFETY: `model` is live; the string outlives the call.
        unsafe { skid_buffer_w8_trace_open(self.model, c.as_ptr()) != 0 }
    }

    /// Writes the current values into the open waveform at `time`.
    #[inline]
    pub fn trace_dump(&self, time: u64) {
        // SAFETY: `model` is live; the shim ignores the call when no trace is open.
        unsafe { skid_buffer_w8_trace_dump(self.model, time) }
    }

    /// Flushes and closes the waveform, if one is open.
    pub fn trace_close(&self) {
        // SAFETY: `model` is live.
        unsafe { skid_buffer_w8_trace_close(self.model) }
    }

    /// The storage of port `name` in the live model and its width in bits, for drivers that
    /// bind ports by name. The pointer stays valid while `self` lives; it addresses a `u8`,
    /// `u16`, `u32` or `u64` for widths up to 8, 16, 32 or 64 bits, else 32-bit words.
    pub fn port_ptr(&self, name: &str) -> Option<(*mut u8, u32)> {
        match name {
            "clk_i" => Some((self.ports.clk_i as *mut u8, 1)),
            "rst_ni" => Some((self.ports.rst_ni as *mut u8, 1)),
            "s_valid_i" => Some((self.ports.s_valid_i as *mut u8, 1)),
            "s_ready_o" => Some((self.ports.s_ready_o as *mut u8, 1)),
            "s_data_i" => Some((self.ports.s_data_i as *mut u8, 8)),
            "m_valid_o" => Some((self.ports.m_valid_o as *mut u8, 1)),
            "m_ready_i" => Some((self.ports.m_ready_i as *mut u8, 1)),
            "m_data_o" => Some((self.ports.m_data_o as *mut u8, 8)),
            _ => None,
        }
    }

    /// Drives input `clk_i` (1 bits); bits above the width are dropped.
    #[inline]
    pub fn set_clk_i(&self, v: u8) {
        // SAFETY: the pointer addresses this port's field in the live model.
        unsafe { *self.ports.clk_i = v & 0x1 }
    }

    /// Reads input `clk_i` (1 bits).
    #[inline]
    pub fn clk_i(&self) -> u8 {
        // SAFETY: the pointer addresses this port's field in the live model.
        unsafe { *self.ports.clk_i }
    }

    /// Drives input `rst_ni` (1 bits); bits above the width are dropped.
    #[inline]
    pub fn set_rst_ni(&self, v: u8) {
        // SAFETY: the pointer addresses this port's field in the live model.
        unsafe { *self.ports.rst_ni = v & 0x1 }
    }

    /// Reads input `rst_ni` (1 bits).
    #[inline]
    pub fn rst_ni(&self) -> u8 {
        // SAFETY: the pointer addresses this port's field in the live model.
        unsafe { *self.ports.rst_ni }
    }

    /// Drives input `s_valid_i` (1 bits); bits above the width are dropped.
    #[inline]
    pub fn set_s_valid_i(&self, v: u8) {
        // SAFETY: the pointer addresses this port's field in the live model.
        unsafe { *self.ports.s_valid_i = v & 0x1 }
    }

    /// Reads input `s_valid_i` (1 bits).
    #[inline]
    pub fn s_valid_i(&self) -> u8 {
        // SAFETY: the pointer addresses this port's field in the live model.
        unsafe { *self.ports.s_valid_i }
    }

    /// Reads output `s_ready_o` (1 bits).
    #[inline]
    pub fn s_ready_o(&self) -> u8 {
        // SAFETY: the pointer addresses this port's field in the live model.
        unsafe { *self.ports.s_ready_o }
    }

    /// Drives input `s_data_i` (8 bits); bits above the width are dropped.
    #[inline]
    pub fn set_s_data_i(&self, v: u8) {
        // SAFETY: the pointer addresses this port's field in the live model.
        unsafe { *self.ports.s_data_i = v }
    }

    /// Reads input `s_data_i` (8 bits).
    #[inline]
    pub fn s_data_i(&self) -> u8 {
        // SAFETY: the pointer addresses this port's field in the live model.
        unsafe { *self.ports.s_data_i }
    }

    /// Reads output `m_valid_o` (1 bits).
    #[inline]
    pub fn m_valid_o(&self) -> u8 {
        // SAFETY: the pointer addresses this port's field in the live model.
        unsafe { *self.ports.m_valid_o }
    }

    /// Drives input `m_ready_i` (1 bits); bits above the width are dropped.
    #[inline]
    pub fn set_m_ready_i(&self, v: u8) {
        // SAFETY: the pointer addresses this port's field in the live model.
        unsafe { *self.ports.m_ready_i = v & 0x1 }
    }

    /// Reads input `m_ready_i` (1 bits).
    #[inline]
    pub fn m_ready_i(&self) -> u8 {
        // SAFETY: the pointer addresses this port's field in the live model.
        unsafe { *self.ports.m_ready_i }
    }

    /// Reads output `m_data_o` (8 bits).
    #[inline]
    pub fn m_data_o(&self) -> u8 {
        // SAFETY: the pointer addresses this port's field in the live model.
        unsafe { *self.ports.m_data_o }
    }
}

impl Drop for SkidBufferW8 {
    fn drop(&mut self) {
        // SAFETY: `model` came from `skid_buffer_w8_new` and is dropped once.
        unsafe { skid_buffer_w8_delete(self.model) }
    }
}
