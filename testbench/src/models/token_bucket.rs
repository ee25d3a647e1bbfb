//! Golden model of the token bucket (hdl-gen `blocks::token_bucket`). A token bucket is about
//! time, so this model counts cycles: exact fixed-point arithmetic (levels in units of
//! `2^-frac_bits` tokens), one [`TokenBucket::step`] per clock cycle.
//!
//! The rule, per cycle (`B` burst, `r` rate, `A` the level available this cycle):
//! `A = B` in the first cycle after reset, else the level left by the previous cycle;
//! ready for a request of cost `c` when `r == 0` or `A >= min(c, B)`; a grant takes `c`
//! (the level may go negative: debt); next level `B` when `r == 0`, else `min(A - spent + r, B)`.
//!
//! Conformance of the RTL is lockstep: drive both with the same rate, burst and offered request
//! each cycle; `req_ready_o` must equal [`TokenBucket::ready`] (so every grant had the tokens,
//! and no request waited while the tokens were there) and `tokens_o` must equal
//! [`TokenBucket::tokens`].

/// The bucket's state and its current configuration.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    frac_bits: u32,
    rate: u64,
    burst: u64,
    /// Level left by the last cycle, in `2^-frac_bits` tokens; negative is debt.
    level: i128,
    /// No cycle since reset: the bucket counts as full.
    just_reset: bool,
}

impl TokenBucket {
    /// The bucket just after reset (it counts as full), with `rate` in `2^-frac_bits` tokens
    /// per cycle (0 = unlimited) and a capacity of `burst` whole tokens.
    pub fn new(frac_bits: u32, rate: u64, burst: u64) -> TokenBucket {
        assert!(frac_bits <= 56, "{frac_bits} fraction bits is more than 56");
        TokenBucket {
            frac_bits,
            rate,
            burst,
            level: 0,
            just_reset: true,
        }
    }

    /// Changes the configuration from this cycle on (the inputs `rate_i` and `burst_i`).
    pub fn configure(&mut self, rate: u64, burst: u64) {
        self.rate = rate;
        self.burst = burst;
    }

    fn full(&self) -> i128 {
        i128::from(self.burst) << self.frac_bits
    }

    /// The level available this cycle, in `2^-frac_bits` tokens (negative: debt).
    pub fn level(&self) -> i128 {
        if self.just_reset {
            self.full()
        } else {
            self.level
        }
    }

    /// Whole tokens available this cycle (`tokens_o`): 0 while in debt.
    pub fn tokens(&self) -> u64 {
        u64::try_from(self.level().max(0) >> self.frac_bits).unwrap_or(u64::MAX)
    }

    /// True when a request costing `cost` whole tokens would be granted this cycle
    /// (`req_ready_o`).
    pub fn ready(&self, cost: u64) -> bool {
        let need = cost.min(self.burst);
        self.rate == 0 || self.level() >= i128::from(need) << self.frac_bits
    }

    /// One clock cycle with `request` (its cost) offered, or none. Returns true when it was
    /// granted.
    pub fn step(&mut self, request: Option<u64>) -> bool {
        let grant = request.is_some_and(|c| self.ready(c));
        let spent = if grant {
            i128::from(request.unwrap_or(0)) << self.frac_bits
        } else {
            0
        };
        self.level = if self.rate == 0 {
            self.full()
        } else {
            (self.level() - spent + i128::from(self.rate)).min(self.full())
        };
        self.just_reset = false;
        grant
    }

    /// `cycles` cycles with no request offered (as many [`TokenBucket::step`]`(None)` calls).
    pub fn idle(&mut self, cycles: u64) {
        if cycles == 0 {
            return;
        }
        // Without grants each cycle is min(A + r, B), which composes to min(A + n r, B).
        self.level = if self.rate == 0 {
            self.full()
        } else {
            let refill = i128::from(self.rate).saturating_mul(i128::from(cycles));
            self.level().saturating_add(refill).min(self.full())
        };
        self.just_reset = false;
    }
}

/// Transaction level: requests `(arrival cycle, cost)`, in arrival order, offered one at a time
/// on one port from reset with a fixed configuration. A request is offered from the cycle it
/// arrives, or the cycle after the previous grant when later, and held until granted. Returns
/// each request's grant cycle.
pub fn grant_cycles(frac_bits: u32, rate: u64, burst: u64, requests: &[(u64, u64)]) -> Vec<u64> {
    let mut bucket = TokenBucket::new(frac_bits, rate, burst);
    let mut now = 0u64;
    let mut grants = Vec::with_capacity(requests.len());
    for &(arrival, cost) in requests {
        if arrival > now {
            bucket.idle(arrival - now);
            now = arrival;
        }
        while !bucket.step(Some(cost)) {
            now += 1;
        }
        grants.push(now);
        now += 1;
    }
    grants
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: u32 = 16;

    /// `tokens` per cycle in Q.16.
    fn q16(tokens: f64) -> u64 {
        (tokens * 65536.0).round() as u64
    }

    /// Saturated demand of `cost`-token requests for `cycles` cycles: the tokens granted.
    fn saturated(rate: u64, burst: u64, cost: u64, cycles: u64) -> u64 {
        let mut b = TokenBucket::new(F, rate, burst);
        (0..cycles).filter(|_| b.step(Some(cost))).count() as u64 * cost
    }

    #[test]
    fn long_run_rate_is_within_one_percent_when_saturated() {
        let cycles = 1_000_000;
        // (rate, burst, cost): IOPS-like, bandwidth-like, fine rate, debt (cost above burst).
        for (rate, burst, cost) in [
            (q16(0.3), 16, 4),
            (q16(2.5), 9000, 1500),
            (q16(0.001), 4, 1),
            (q16(0.5), 10, 100),
            (q16(7.0), 1, 1),
        ] {
            let granted = saturated(rate, burst, cost, cycles) as f64;
            let configured = rate as f64 / 65536.0 * cycles as f64;
            let expect = configured.min(cycles as f64 * cost as f64);
            let err = (granted - expect).abs() / expect;
            assert!(
                err < 0.01,
                "rate {rate} burst {burst} cost {cost}: {granted} tokens granted, {expect} expected"
            );
        }
    }

    #[test]
    fn burst_after_idle_is_the_capacity() {
        // Full after reset: 10 tokens of cost 1 pass back to back, then one every 100 cycles.
        let mut b = TokenBucket::new(F, q16(0.01), 10);
        assert_eq!(b.tokens(), 10);
        let first: Vec<bool> = (0..12).map(|_| b.step(Some(1))).collect();
        assert_eq!(first.iter().filter(|g| **g).count(), 10);
        assert!(!first[10] && !first[11]);
        // Idle long enough to refill far beyond the capacity: still only 10.
        b.idle(1_000_000);
        assert_eq!(b.tokens(), 10);
        let burst = (0..50).take_while(|_| b.step(Some(1))).count();
        assert_eq!(burst, 10);
    }

    /// The largest tokens granted in any window of `n` cycles, minus `rate * n`, over a run.
    fn worst_window_excess(grants: &[u64], rate: u64) -> i128 {
        // P(t) = granted before t (fixed point) - r t; the answer is max over t1 < t2 of
        // P(t2) - P(t1).
        let mut p = 0i128;
        let mut min_p = 0i128;
        let mut worst = i128::MIN;
        for &g in grants {
            p += (i128::from(g) << F) - i128::from(rate);
            worst = worst.max(p - min_p);
            min_p = min_p.min(p);
        }
        worst
    }

    #[test]
    fn no_window_grants_more_than_burst_plus_refill() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for (rate, burst, max_cost) in [(q16(0.3), 16, 8), (q16(1.7), 40, 64), (q16(0.05), 0, 3)] {
            let mut b = TokenBucket::new(F, rate, burst);
            let mut grants = Vec::new();
            let mut pending: Option<u64> = None;
            for _ in 0..200_000 {
                if pending.is_none() && rnd() % 3 == 0 {
                    pending = Some(rnd() % (max_cost + 1));
                }
                let granted = b.step(pending);
                grants.push(if granted {
                    pending.take().unwrap_or(0)
                } else {
                    0
                });
            }
            let slack = i128::from(burst + max_cost.saturating_sub(burst)) << F;
            let excess = worst_window_excess(&grants, rate);
            assert!(
                excess <= slack,
                "rate {rate} burst {burst}: a window got {excess} over its refill, bound {slack}"
            );
        }
    }

    #[test]
    fn a_request_waits_only_while_tokens_are_short() {
        // A quarter token per cycle, cost 1, no burst beyond 1: a grant exactly every 4 cycles.
        let grants = grant_cycles(8, 64, 1, &[(0, 1); 6]);
        assert_eq!(grants, vec![0, 4, 8, 12, 16, 20]);
        // Spend and refill combine: with the bucket at exactly the cost, the same cycle's refill
        // is kept, so 1 token per cycle sustains one cost-1 grant per cycle.
        let grants = grant_cycles(8, 256, 1, &[(0, 1); 5]);
        assert_eq!(grants, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn a_cost_above_the_capacity_waits_for_a_full_bucket_then_leaves_debt() {
        // Capacity 4, half a token per cycle, cost 10: granted when full, then 6 tokens of debt.
        let mut b = TokenBucket::new(F, q16(0.5), 4);
        assert!(b.step(Some(10)));
        assert_eq!(b.level(), (-6i128 << F) + i128::from(q16(0.5)));
        assert_eq!(b.tokens(), 0);
        // Back to full takes 20 cycles in all (6 of debt + 4), then the next one passes.
        let waited = (0..100).take_while(|_| !b.step(Some(10))).count();
        assert_eq!(waited, 19);
    }

    #[test]
    fn zero_burst_is_strict_pacing() {
        // Half a token per cycle, cost 3, capacity 0: one grant every 6 cycles.
        let grants = grant_cycles(F, q16(0.5), 0, &[(0, 3); 4]);
        assert_eq!(grants, vec![0, 6, 12, 18]);
    }

    #[test]
    fn zero_rate_is_unlimited_and_keeps_the_bucket_full() {
        let mut b = TokenBucket::new(F, 0, 5);
        for _ in 0..100 {
            assert!(b.step(Some(1_000)));
            assert_eq!(b.tokens(), 5);
        }
        // Limiting later starts from a full bucket.
        b.configure(q16(0.1), 5);
        let burst = (0..20).take_while(|_| b.step(Some(1))).count();
        assert_eq!(burst, 5);
    }

    #[test]
    fn idle_is_the_same_as_stepping() {
        for (rate, burst) in [(q16(0.3), 7), (0, 7), (q16(3.0), 2)] {
            let mut a = TokenBucket::new(F, rate, burst);
            let mut b = a.clone();
            a.step(Some(20));
            b.step(Some(20));
            a.idle(37);
            for _ in 0..37 {
                b.step(None);
            }
            assert_eq!(a.level(), b.level());
        }
        let arrivals = [
            (0, 3),
            (0, 3),
            (50, 1),
            (51, 9),
            (400, 2),
            (401, 2),
            (402, 2),
        ];
        let mut b = TokenBucket::new(F, q16(0.2), 6);
        let mut slow = Vec::new();
        let mut now = 0;
        for &(arrival, cost) in &arrivals {
            while now < arrival {
                b.step(None);
                now += 1;
            }
            while !b.step(Some(cost)) {
                now += 1;
            }
            slow.push(now);
            now += 1;
        }
        assert_eq!(grant_cycles(F, q16(0.2), 6, &arrivals), slow);
    }
}
