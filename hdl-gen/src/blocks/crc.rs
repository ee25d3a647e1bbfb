//! Parallel CRC over a byte stream, for any polynomial up to 64 bits and any beat width that is
//! a whole number of bytes, with byte enables for the last beat of a message.
//!
//! The update equations are worked out here, at elaboration: the bit-serial LFSR is run
//! symbolically over the beat's bits, so each next-state bit comes out as the XOR of a subset of
//! the running value's bits and the data bits. The generator emits one equation per CRC bit and
//! per number of valid bytes, and a `case` on `keep_i` picks the one that applies.
//!
//! The running value is kept in the output's bit order (reflected when `reflect_out` is set), so
//! the register holds exactly what a table-driven software CRC keeps between calls (for CRC-32,
//! Linux `crc32_le`'s state), and the finished CRC is that value XOR `xor_out`.

use hdl_builder::prelude::*;
use hdl_builder::Errors;
use std::rc::Rc;

/// A CRC algorithm in the usual catalogue terms (Williams' model, as in the reveng catalogue).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrcParams {
    /// Short name; the module is named `<name>_d<data bits>`, e.g. `crc32c_d64`.
    pub name: &'static str,
    /// CRC width in bits, 1 to 64.
    pub width: u32,
    /// Generator polynomial without its top (x^width) term, most significant bit first.
    pub poly: u64,
    /// Register value before the first bit, in the unreflected (most significant bit first) order.
    pub init: u64,
    /// Each byte enters least significant bit first (as on Ethernet) instead of most.
    pub reflect_in: bool,
    /// The final register is bit-reversed before `xor_out`.
    pub reflect_out: bool,
    /// XORed into the final value.
    pub xor_out: u64,
}

/// CRC-32 as used by Ethernet's FCS and the RoCEv2 ICRC (check value `cbf43926`).
pub const CRC32: CrcParams = CrcParams {
    name: "crc32",
    width: 32,
    poly: 0x04c1_1db7,
    init: 0xffff_ffff,
    reflect_in: true,
    reflect_out: true,
    xor_out: 0xffff_ffff,
};

/// CRC-32C (Castagnoli), the NVMe/TCP header and data digest (check value `e3069283`).
pub const CRC32C: CrcParams = CrcParams {
    name: "crc32c",
    width: 32,
    poly: 0x1edc_6f41,
    init: 0xffff_ffff,
    reflect_in: true,
    reflect_out: true,
    xor_out: 0xffff_ffff,
};

impl CrcParams {
    /// All ones in the CRC's width.
    fn mask(&self) -> u64 {
        if self.width >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        }
    }

    /// The running register's value at the start of a message (its reset value), in the
    /// register's bit order: `init`, bit-reversed when `reflect_out` is set.
    pub fn register_init(&self) -> u64 {
        if self.reflect_out {
            reverse(self.init, self.width)
        } else {
            self.init
        }
    }

    /// The finished CRC for a register value: what `crc_o` shows.
    pub fn finish(&self, register: u64) -> u64 {
        register ^ self.xor_out
    }

    fn validate(&self, data_width: u32) -> Result<(), String> {
        if self.width == 0 || self.width > 64 {
            return Err(format!(
                "CRC width {} is not supported; use 1 to 64 bits",
                self.width
            ));
        }
        for (what, v) in [
            ("polynomial", self.poly),
            ("init", self.init),
            ("xor_out", self.xor_out),
        ] {
            if v & !self.mask() != 0 {
                return Err(format!(
                    "{what} {v:#x} does not fit in the CRC's {} bits",
                    self.width
                ));
            }
        }
        if self.poly & 1 == 0 {
            return Err(format!(
                "polynomial {:#x} has no x^0 term; a CRC generator polynomial always has one",
                self.poly
            ));
        }
        if data_width == 0 || !data_width.is_multiple_of(8) {
            return Err(format!(
                "data width {data_width} is not a whole number of bytes; use a multiple of 8"
            ));
        }
        Ok(())
    }
}

/// The low `width` bits of `v` in reverse order.
fn reverse(v: u64, width: u32) -> u64 {
    v.reverse_bits() >> (64 - width)
}

/// One next-state bit: the XOR (parity) of the register bits set in `state` and the data bits set
/// in `data` (bit `i` of `data_i` is bit `i % 64` of `data[i / 64]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XorTerms {
    /// Register bits, one bit per register bit.
    pub state: u64,
    /// Data bits, 64 per word, byte 0 of the beat in the low bits of word 0.
    pub data: Vec<u64>,
}

impl XorTerms {
    fn zero(words: usize) -> XorTerms {
        XorTerms {
            state: 0,
            data: vec![0; words],
        }
    }

    fn xor_with(&mut self, other: &XorTerms) {
        self.state ^= other.state;
        for (a, b) in self.data.iter_mut().zip(&other.data) {
            *a ^= b;
        }
    }

    /// Evaluates the equation for a register value and the beat's bytes.
    pub fn eval(&self, register: u64, data: &[u8]) -> bool {
        let mut p = (self.state & register).count_ones();
        for (i, byte) in data.iter().enumerate() {
            let word = self.data.get(i / 8).copied().unwrap_or(0);
            p += ((word >> (8 * (i % 8))) as u8 & byte).count_ones();
        }
        p % 2 == 1
    }
}

/// The register update over `1..=bytes` bytes: element `k - 1` gives, for each register bit, the
/// equation of its value after the first `k` bytes of a beat.
fn updates(p: &CrcParams, bytes: u32) -> Vec<Vec<XorTerms>> {
    let w = p.width as usize;
    let words = (bytes as usize * 8).div_ceil(64);
    // Register bit r holds LFSR bit w-1-r when the output is reflected, else LFSR bit r.
    let reg_of = |i: usize| if p.reflect_out { w - 1 - i } else { i };
    // lfsr[i]: bit i of the unreflected LFSR (bit w-1 is shifted out first).
    let mut lfsr: Vec<XorTerms> = (0..w)
        .map(|i| {
            let mut t = XorTerms::zero(words);
            t.state = 1 << reg_of(i);
            t
        })
        .collect();
    let mut out = Vec::new();
    for byte in 0..bytes as usize {
        for step in 0..8 {
            let bit = 8 * byte + if p.reflect_in { step } else { 7 - step };
            let mut feedback = lfsr[w - 1].clone();
            feedback.data[bit / 64] ^= 1 << (bit % 64);
            lfsr.rotate_right(1);
            lfsr[0] = XorTerms::zero(words);
            for (i, b) in lfsr.iter_mut().enumerate() {
                if (p.poly >> i) & 1 == 1 {
                    b.xor_with(&feedback);
                }
            }
        }
        out.push((0..w).map(|r| lfsr[reg_of(r)].clone()).collect());
    }
    out
}

/// The equations the generator emits for a beat of `bytes` valid bytes: for each register bit
/// (in the register's order, see [`CrcParams::register_init`]), its next value.
pub fn update_equations(p: &CrcParams, bytes: u32) -> Vec<XorTerms> {
    updates(p, bytes).pop().unwrap_or_default()
}

/// Evaluates [`update_equations`]: the register after adding `data` to `register`.
pub fn eval_update(p: &CrcParams, register: u64, data: &[u8]) -> u64 {
    if data.is_empty() {
        return register;
    }
    update_equations(p, data.len() as u32)
        .iter()
        .enumerate()
        .fold(0, |acc, (r, eq)| {
            acc | (eq.eval(register, data) as u64) << r
        })
}

/// The bits `hi..=lo` of `sig` selected by `mask` (bit 0 of `mask` is bit `lo`), as readable as it
/// gets: a plain bit when one is selected, `sig[hi:lo] & mask` otherwise (reduced by the caller).
fn masked(sig: Sig, hi: u32, lo: u32, mask: u128) -> Option<Expr> {
    let width = hi - lo + 1;
    let all = u128::MAX >> (128 - width);
    let slice = if width == sig.width() {
        sig.ex()
    } else {
        sig.slice(hi, lo)
    };
    match mask.count_ones() {
        0 => None,
        1 => Some(sig.bit(lo + mask.trailing_zeros())),
        _ if mask == all => Some(slice),
        _ => Some(slice & lit(width, mask)),
    }
}

/// One next-state bit as an expression over `seed` (the register value the beat starts from) and
/// the low `bytes` bytes of `data`: the parity of the selected bits.
fn equation(eq: &XorTerms, seed: Sig, data: Sig, bytes: u32) -> Expr {
    let mut parts: Vec<Expr> = Vec::new();
    parts.extend(masked(seed, seed.width() - 1, 0, eq.state as u128));
    // Data in slices of at most 128 bits, so each mask is one literal.
    let bits = 8 * bytes;
    for lo in (0..bits).step_by(128) {
        let hi = (lo + 128).min(bits) - 1;
        let mut mask = 0u128;
        for i in lo..=hi {
            let word = eq.data[(i / 64) as usize];
            mask |= (((word >> (i % 64)) & 1) as u128) << (i - lo);
        }
        parts.extend(masked(data, hi, lo, mask));
    }
    match parts.len() {
        0 => lit(1, 0),
        1 if parts[0].width() == 1 => parts.remove(0),
        1 => parts.remove(0).parity(),
        _ => cat(parts).parity(),
    }
}

/// A parallel CRC over `data_width`-bit beats (a multiple of 8), named `<name>_d<data_width>`.
///
/// Interface contract, one beat per cycle, no back-pressure:
/// - `data_i` carries bytes in stream order: byte 0 is `data_i[7:0]` and is added first (as on
///   AXI4-Stream `tdata`). `keep_i` has one bit per byte.
/// - On a cycle with `valid_i`, the beat's bytes are added to the running value. `keep_i` must be
///   a contiguous run of ones from bit 0 (1 to `data_width / 8` bytes, as `tkeep` on the last
///   beat of a packed stream); any other pattern, all zeros included, adds no data.
/// - `start_i` sets the running value back to the initial value before this cycle's beat is
///   added, so a message may start on any beat, right after the previous one; without `valid_i`
///   it only clears.
/// - `crc_o` is the finished CRC (reflected and XORed as the algorithm says) of every byte added
///   since the last start. It comes from the running register: it covers a beat from the cycle
///   after that beat.
///
/// The register itself is `crc_o ^ xor_out`; for CRC-32 it is Linux `crc32_le`'s running value.
pub fn crc(p: &CrcParams, data_width: u32, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let name = format!("{}_d{data_width}", p.name);
    if let Err(msg) = p.validate(data_width) {
        return Err(Errors::invalid(&name, format!("{name}: {msg}")));
    }
    let w = p.width;
    let lanes = data_width / 8;
    let mut m = ModuleBuilder::with_reset(&name, reset);
    let order = match (p.reflect_in, p.reflect_out) {
        (true, true) => "reflected in and out",
        (false, false) => "not reflected",
        (true, false) => "reflected in, not out",
        (false, true) => "reflected out, not in",
    };
    let digits = w.div_ceil(4) as usize;
    m.doc(&format!(
        "{}: polynomial {:0digits$x}, init {:0digits$x}, {order}, xor out {:0digits$x}; {lanes}-byte beats.",
        p.name.to_uppercase(),
        p.poly,
        p.init,
        p.xor_out,
    ));
    m.doc("Byte 0 (data_i[7:0]) goes first. keep_i must be a contiguous run of ones from bit 0;");
    m.doc("any other keep_i adds no data. start_i restarts from the initial value before this");
    m.doc(
        "cycle's beat. crc_o is the finished CRC of all bytes since the start, from the register:",
    );
    m.doc("it includes a beat from the next cycle on.");
    m.clock();
    m.reset();
    m.group("beats");
    let start = m.input("start_i", 1);
    let valid = m.input("valid_i", 1);
    let data = m.input("data_i", data_width);
    let keep = m.input("keep_i", lanes);
    m.comment(start, "restart from the initial value before this beat");
    m.comment(keep, "contiguous from bit 0; other patterns add no data");
    m.group("result");
    let crc_out = m.output("crc_o", w);
    m.comment(
        crc_out,
        "CRC of every byte since the start, up to the last cycle's beat",
    );

    let state = m.reg("crc", w, p.register_init());
    m.comment(
        state.q,
        "running value, in crc_o's bit order, before xor out",
    );
    let seed = m.net(
        "crc_seed",
        mux(start, lit(w, p.register_init() as u128), state.q),
    );
    m.comment(seed, "the value this cycle's bytes are added to");

    let after: Vec<Sig> = updates(p, lanes)
        .iter()
        .enumerate()
        .map(|(k, eqs)| {
            let n = k as u32 + 1;
            let bits: Vec<Sig> = eqs
                .iter()
                .enumerate()
                .map(|(r, eq)| m.net(&format!("crc_bytes{n}_{r}"), equation(eq, seed, data, n)))
                .collect();
            let v = m.net(&format!("crc_bytes{n}"), cat(bits.iter().rev()));
            let plural = if n == 1 { "" } else { "s" };
            m.comment(v, &format!("after the beat's first {n} byte{plural}"));
            v
        })
        .collect();

    m.comb(|c| {
        c.set(state.d, seed);
        c.if_(valid, |c| {
            c.case(keep, |k| {
                for (i, v) in after.iter().enumerate() {
                    let pattern = (1u128 << (i + 1)) - 1;
                    k.arm(lit(lanes, pattern), |c| c.set(state.d, *v));
                }
                k.default(|_| {});
            });
        });
    });
    if p.xor_out == 0 {
        m.assign(crc_out, state.q);
    } else {
        m.assign(crc_out, state.q ^ lit(w, p.xor_out as u128));
    }
    m.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdl_builder::ErrorKind;

    /// Bit-at-a-time reference, straight from the algorithm's definition.
    fn reference(p: &CrcParams, data: &[u8]) -> u64 {
        let mut reg = p.init;
        for &byte in data {
            for step in 0..8 {
                let bit = if p.reflect_in {
                    (byte >> step) & 1
                } else {
                    (byte >> (7 - step)) & 1
                };
                let feedback = ((reg >> (p.width - 1)) & 1) ^ bit as u64;
                reg = (reg << 1) & p.mask();
                if feedback == 1 {
                    reg ^= p.poly;
                }
            }
        }
        if p.reflect_out {
            reg = reverse(reg, p.width);
        }
        reg ^ p.xor_out
    }

    /// Feeds `data` through the emitted equations in beats of `lanes` bytes.
    fn through_equations(p: &CrcParams, lanes: usize, data: &[u8]) -> u64 {
        let mut reg = p.register_init();
        for beat in data.chunks(lanes) {
            reg = eval_update(p, reg, beat);
        }
        p.finish(reg)
    }

    const CHECK: &[u8] = b"123456789";

    #[test]
    fn check_values_in_every_beat_width() {
        for lanes in [1, 2, 3, 4, 8, 16] {
            assert_eq!(through_equations(&CRC32, lanes, CHECK), 0xcbf4_3926);
            assert_eq!(through_equations(&CRC32C, lanes, CHECK), 0xe306_9283);
            assert_eq!(through_equations(&CRC32C, lanes, &[0; 32]), 0x8a91_36aa);
        }
    }

    #[test]
    fn other_catalogue_algorithms() {
        let cases: [(CrcParams, u64); 6] = [
            (
                CrcParams {
                    name: "crc16_arc",
                    width: 16,
                    poly: 0x8005,
                    init: 0,
                    reflect_in: true,
                    reflect_out: true,
                    xor_out: 0,
                },
                0xbb3d,
            ),
            (
                CrcParams {
                    name: "crc16_ibm3740",
                    width: 16,
                    poly: 0x1021,
                    init: 0xffff,
                    reflect_in: false,
                    reflect_out: false,
                    xor_out: 0,
                },
                0x29b1,
            ),
            (
                CrcParams {
                    name: "crc32_bzip2",
                    width: 32,
                    poly: 0x04c1_1db7,
                    init: 0xffff_ffff,
                    reflect_in: false,
                    reflect_out: false,
                    xor_out: 0xffff_ffff,
                },
                0xfc89_1918,
            ),
            (
                CrcParams {
                    name: "crc5_usb",
                    width: 5,
                    poly: 0x05,
                    init: 0x1f,
                    reflect_in: true,
                    reflect_out: true,
                    xor_out: 0x1f,
                },
                0x19,
            ),
            (
                CrcParams {
                    name: "crc64_xz",
                    width: 64,
                    poly: 0x42f0_e1eb_a9ea_3693,
                    init: u64::MAX,
                    reflect_in: true,
                    reflect_out: true,
                    xor_out: u64::MAX,
                },
                0x995d_c9bb_df19_39fa,
            ),
            (
                CrcParams {
                    name: "crc8_smbus",
                    width: 8,
                    poly: 0x07,
                    init: 0,
                    reflect_in: false,
                    reflect_out: false,
                    xor_out: 0,
                },
                0xf4,
            ),
        ];
        for (p, check) in cases {
            assert_eq!(reference(&p, CHECK), check, "{} reference", p.name);
            for lanes in [1, 4, 8] {
                assert_eq!(through_equations(&p, lanes, CHECK), check, "{}", p.name);
            }
        }
    }

    #[test]
    fn equations_match_the_reference_on_pseudo_random_data() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let data: Vec<u8> = (0..300)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        for p in [CRC32, CRC32C] {
            for len in [0, 1, 7, 31, 64, 299] {
                let expect = reference(&p, &data[..len]);
                for lanes in [1, 5, 8, 16, 24] {
                    assert_eq!(through_equations(&p, lanes, &data[..len]), expect);
                }
            }
        }
    }

    #[test]
    fn register_matches_linux_crc32_le_seed() {
        // The RoCEv2 ICRC starts from the register after 8 bytes of ff: Linux seeds 0xdebb20e3.
        let reg = eval_update(&CRC32, CRC32.register_init(), &[0xff; 8]);
        assert_eq!(reg, 0xdebb_20e3);
    }

    #[test]
    fn modules_build_and_are_named_by_parameters() {
        for (p, dw, name) in [
            (CRC32, 8, "crc32_d8"),
            (CRC32C, 32, "crc32c_d32"),
            (CRC32, 64, "crc32_d64"),
            (CRC32C, 256, "crc32c_d256"),
        ] {
            let m = crc(&p, dw, ResetStyle::AsyncLow).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(m.name(), name);
        }
    }

    #[test]
    fn bad_parameters_are_refused_with_the_module_name() {
        let e = crc(&CRC32, 12, ResetStyle::AsyncLow).unwrap_err();
        assert!(e.has(ErrorKind::Invalid));
        assert!(e.to_string().contains("crc32_d12"), "{e}");
        let even = CrcParams {
            poly: 0x04c1_1db6,
            ..CRC32
        };
        assert!(crc(&even, 32, ResetStyle::AsyncLow).is_err());
        let wide = CrcParams {
            init: 1 << 40,
            ..CRC32
        };
        assert!(crc(&wide, 32, ResetStyle::AsyncLow).is_err());
    }
}
