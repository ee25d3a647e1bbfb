//! A small seeded generator for drivers' idle cycles and backpressure: fast, reproducible, and
//! independent of any crate's version.

/// xorshift64* generator.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed` (any value, zero included).
    pub fn new(seed: u64) -> Rng {
        // splitmix64 of the seed, so nearby seeds give unrelated streams and zero is fine.
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Rng((z ^ (z >> 31)) | 1)
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// True with probability `percent`/100.
    #[inline]
    pub fn chance(&mut self, percent: u8) -> bool {
        // Multiply-shift instead of `% 100`: no division in the per-cycle path.
        percent > 0 && ((self.next_u64() >> 32) * 100) >> 32 < percent as u64
    }

    /// A value in `0..n` (n > 0).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}
