// Register accessors for the `demo_csr` block, generated together with its RTL and register map.
//
// A demonstration block with one field of each access type.
//
// Offsets are bytes from the block's base address; `<REG>_<FIELD>_MASK` is a field's bits in
// place within its register and `<REG>_<FIELD>_SHIFT` its lowest bit. Write-only fields read
// as 0; write 1 to a W1C bit to clear it.

/// The bus that reaches the block's registers: an AXI4-Lite master in a testbench, or a
/// firmware model's MMIO.
pub trait CsrBus {
    /// Reads the 32-bit register at byte address `addr`.
    fn read32(&mut self, addr: u32) -> u32;
    /// Writes `value` to the 32-bit register at byte address `addr`, all four bytes.
    fn write32(&mut self, addr: u32, value: u32);
}

/// The block's window in bytes.
pub const WINDOW: u64 = 0x10;

/// Every register: name, offset, value after reset.
pub const REGISTERS: &[(&str, u32, u32)] = &[
    ("ctrl", CTRL, CTRL_RESET),
    ("status", STATUS, STATUS_RESET),
];

/// Every register: name, offset, the bits the block itself holds (read-write fields) or
/// reads as 0 (write-only), and its value after reset: right after a reset, before any
/// write, `read & mask == reset & mask`. Read-only and W1C bits show hardware state.
pub const RESET_CHECK: &[(&str, u32, u32, u32)] = &[
    ("ctrl", CTRL, 0x0000_0131, CTRL_RESET),
    ("status", STATUS, 0x0000_0000, STATUS_RESET),
];

/// Offset of `ctrl`: Control
pub const CTRL: u32 = 0x0;
/// Value of `ctrl` after reset.
pub const CTRL_RESET: u32 = 0x0000_0021;

/// `ctrl.en` [0], RW: Enable
pub const CTRL_EN_SHIFT: u32 = 0;
/// Bits of `ctrl.en` within `ctrl`.
pub const CTRL_EN_MASK: u32 = 0x0000_0001;
/// Value of `ctrl.en` after reset.
pub const CTRL_EN_RESET: u32 = 0x1;
/// `ctrl.en` in a value of `ctrl`.
#[inline]
#[must_use]
pub const fn get_ctrl_en(reg: u32) -> u32 {
    reg & CTRL_EN_MASK
}
/// `reg`, a value of `ctrl`, with `ctrl.en` replaced by `value` (1 bit).
#[inline]
#[must_use]
pub const fn set_ctrl_en(reg: u32, value: u32) -> u32 {
    debug_assert!(value >> 1 == 0, "`ctrl.en` is 1 bit wide");
    (reg & !CTRL_EN_MASK) | (value & CTRL_EN_MASK)
}

/// `ctrl.mode` [5:4], RW: Operating mode
pub const CTRL_MODE_SHIFT: u32 = 4;
/// Bits of `ctrl.mode` within `ctrl`.
pub const CTRL_MODE_MASK: u32 = 0x0000_0030;
/// Value of `ctrl.mode` after reset.
pub const CTRL_MODE_RESET: u32 = 0x2;
/// `ctrl.mode` in a value of `ctrl`.
#[inline]
#[must_use]
pub const fn get_ctrl_mode(reg: u32) -> u32 {
    (reg & CTRL_MODE_MASK) >> CTRL_MODE_SHIFT
}
/// `reg`, a value of `ctrl`, with `ctrl.mode` replaced by `value` (2 bits).
#[inline]
#[must_use]
pub const fn set_ctrl_mode(reg: u32, value: u32) -> u32 {
    debug_assert!(value >> 2 == 0, "`ctrl.mode` is 2 bits wide");
    (reg & !CTRL_MODE_MASK) | ((value << CTRL_MODE_SHIFT) & CTRL_MODE_MASK)
}

/// `ctrl.kick` [8], WO pulse: Write 1 to start
pub const CTRL_KICK_SHIFT: u32 = 8;
/// Bits of `ctrl.kick` within `ctrl`.
pub const CTRL_KICK_MASK: u32 = 0x0000_0100;
/// Value of `ctrl.kick` after reset.
pub const CTRL_KICK_RESET: u32 = 0x0;
/// `ctrl.kick` in a value of `ctrl`.
#[inline]
#[must_use]
pub const fn get_ctrl_kick(reg: u32) -> u32 {
    (reg & CTRL_KICK_MASK) >> CTRL_KICK_SHIFT
}
/// `reg`, a value of `ctrl`, with `ctrl.kick` replaced by `value` (1 bit).
#[inline]
#[must_use]
pub const fn set_ctrl_kick(reg: u32, value: u32) -> u32 {
    debug_assert!(value >> 1 == 0, "`ctrl.kick` is 1 bit wide");
    (reg & !CTRL_KICK_MASK) | ((value << CTRL_KICK_SHIFT) & CTRL_KICK_MASK)
}

/// Reads `ctrl` of the block at byte address `base`.
pub fn read_ctrl<B: CsrBus + ?Sized>(bus: &mut B, base: u32) -> u32 {
    bus.read32(base.wrapping_add(CTRL))
}
/// Writes `value` to `ctrl` of the block at byte address `base`.
pub fn write_ctrl<B: CsrBus + ?Sized>(bus: &mut B, base: u32, value: u32) {
    bus.write32(base.wrapping_add(CTRL), value);
}

/// Offset of `status`: Status
pub const STATUS: u32 = 0x4;
/// Value of `status` after reset.
pub const STATUS_RESET: u32 = 0x0000_0000;

/// `status.level` [7:0], RO: Current level
pub const STATUS_LEVEL_SHIFT: u32 = 0;
/// Bits of `status.level` within `status`.
pub const STATUS_LEVEL_MASK: u32 = 0x0000_00ff;
/// Value of `status.level` after reset.
pub const STATUS_LEVEL_RESET: u32 = 0x0;
/// `status.level` in a value of `status`.
#[inline]
#[must_use]
pub const fn get_status_level(reg: u32) -> u32 {
    reg & STATUS_LEVEL_MASK
}
/// `reg`, a value of `status`, with `status.level` replaced by `value` (8 bits).
#[inline]
#[must_use]
pub const fn set_status_level(reg: u32, value: u32) -> u32 {
    debug_assert!(value >> 8 == 0, "`status.level` is 8 bits wide");
    (reg & !STATUS_LEVEL_MASK) | (value & STATUS_LEVEL_MASK)
}

/// `status.overflow` [31], W1C: An overflow happened; write 1 to clear
pub const STATUS_OVERFLOW_SHIFT: u32 = 31;
/// Bits of `status.overflow` within `status`.
pub const STATUS_OVERFLOW_MASK: u32 = 0x8000_0000;
/// Value of `status.overflow` after reset.
pub const STATUS_OVERFLOW_RESET: u32 = 0x0;
/// `status.overflow` in a value of `status`.
#[inline]
#[must_use]
pub const fn get_status_overflow(reg: u32) -> u32 {
    (reg & STATUS_OVERFLOW_MASK) >> STATUS_OVERFLOW_SHIFT
}
/// `reg`, a value of `status`, with `status.overflow` replaced by `value` (1 bit).
#[inline]
#[must_use]
pub const fn set_status_overflow(reg: u32, value: u32) -> u32 {
    debug_assert!(value >> 1 == 0, "`status.overflow` is 1 bit wide");
    (reg & !STATUS_OVERFLOW_MASK) | ((value << STATUS_OVERFLOW_SHIFT) & STATUS_OVERFLOW_MASK)
}

/// Reads `status` of the block at byte address `base`.
pub fn read_status<B: CsrBus + ?Sized>(bus: &mut B, base: u32) -> u32 {
    bus.read32(base.wrapping_add(STATUS))
}
/// Writes `value` to `status` of the block at byte address `base`.
pub fn write_status<B: CsrBus + ?Sized>(bus: &mut B, base: u32, value: u32) {
    bus.write32(base.wrapping_add(STATUS), value);
}
