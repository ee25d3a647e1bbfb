//! A small seeded generator for drivers' idle cycles and backpressure: fast, reproducible, and
//! independent of any crate's version.

/// A probability in percent, with the threshold [`Rng::hit`] compares the top 32 bits of a
/// draw against: `floor(100 y / 2^32) < p` exactly when `y < ceil(p 2^32 / 100)`, so a hit is
/// what [`Rng::chance`] always gave, one compare instead of a multiply and two shifts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Percent {
    percent: u8,
    threshold: u64,
}

impl Percent {
    /// `percent`/100 (100 and above: always).
    pub const fn new(percent: u8) -> Percent {
        Percent {
            percent,
            threshold: ((percent as u64) << 32).div_ceil(100),
        }
    }

    /// The percentage.
    pub fn get(self) -> u8 {
        self.percent
    }
}

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
        self.hit(Percent::new(percent))
    }

    /// True with probability `p` (what [`Rng::chance`] draws, from a threshold computed once:
    /// drivers draw every cycle). No draw for 0 %.
    #[inline]
    pub fn hit(&mut self, p: Percent) -> bool {
        p.percent > 0 && (self.next_u64() >> 32) < p.threshold
    }

    /// A value in `0..n` (n > 0).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The threshold form gives what `floor(100 y / 2^32) < p` gives, for every percentage, at
    /// the edges of each threshold and on random draws.
    #[test]
    fn hit_is_the_percent_rule() {
        let mut r = Rng::new(7);
        for p in 0..=255u8 {
            let t = Percent::new(p);
            let mut ys: Vec<u64> = (0..2000).map(|_| r.next_u64() >> 32).collect();
            for d in [0u64, 1, 2] {
                ys.push(t.threshold.saturating_sub(d).min(u32::MAX as u64));
                ys.push((t.threshold + d).min(u32::MAX as u64));
            }
            ys.extend([0, u32::MAX as u64]);
            for y in ys {
                let rule = (y * 100) >> 32 < p as u64;
                assert_eq!(p > 0 && y < t.threshold, p > 0 && rule, "p {p} y {y:#x}");
            }
        }
    }
}
