//! Golden model of the RoCEv2 congestion-control block `roce_dcqcn_q<Q>_w<W>` (hdl-gen
//! `roce::dcqcn`): the DCQCN notification point (CNPs asked for on ECN marks, at most one per
//! interval per QP) and reaction point (per-QP rate, target rate and alpha; decrease on a CNP,
//! alpha decay, fast recovery, additive and hyper increase; a byte-credit pacer).
//!
//! Time is what this block computes (timers in `tick_i` units, a credit refilled every clock
//! cycle), so, like the interrupt coalescer of `nvme_arb.rs` and the token bucket, this model
//! is stepped once per clock cycle: [`Dcqcn::step`] with that cycle's inputs. The fixed-point
//! arithmetic is exactly the one documented in `hdl-gen/src/roce/dcqcn.rs`:
//!
//! - rates `Rc`, `Rt`: 16-bit fractions of the line rate, [`LINE`] (FFFFh) is the line rate;
//! - alpha: 10 bits, `alpha / 1024`, [`ALPHA_MAX`] (1023) after reset;
//! - `g = 2^-g_shift`;
//! - the credit: bytes with 16 fraction bits, refilled by `Rc * bytes_per_cycle` each cycle.

/// The line rate as a rate value (a QP at this rate is not paced).
pub const LINE: u16 = 0xffff;
/// Alpha after reset and its ceiling (1023 / 1024).
pub const ALPHA_MAX: u16 = 1023;
/// Fraction bits of the credit.
pub const CREDIT_FRAC: u32 = 16;
/// The credit's floor: 65536 bytes of debt.
pub const CREDIT_MIN: i64 = -(1 << 32);
/// Ceiling of the increase-event counters `T` and `BC`.
pub const STAGE_MAX: u8 = 255;

/// The CSR-ready parameters (the block's configuration inputs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// `enable_i`: 0 holds every rate at the line rate (CNPs are still asked for and counted).
    pub enable: bool,
    /// `cnp_interval_i`: ticks between a QP's CNP sent and its next CNP asked for.
    pub cnp_interval: u16,
    /// `g_shift_i` (4 bits): g = 2^-g_shift.
    pub g_shift: u8,
    /// `rate_ai_i`: additive increase of the target rate.
    pub rate_ai: u16,
    /// `rate_hai_i`: hyper increase step of the target rate.
    pub rate_hai: u16,
    /// `rate_min_i`: floor of both rates.
    pub rate_min: u16,
    /// `alpha_period_i`: ticks without a CNP between alpha decays (0: never).
    pub alpha_period: u16,
    /// `inc_period_i`: ticks between rate-increase timer events (0: never).
    pub inc_period: u16,
    /// `byte_thresh_i` (24 bits): bytes sent between byte-counter events (0: never).
    pub byte_thresh: u32,
    /// `fast_steps_i`: F, the fast-recovery events.
    pub fast_steps: u8,
    /// `burst_i`: the pacer's credit capacity in bytes.
    pub burst: u16,
}

/// One clock cycle's events.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inputs {
    /// `tick_i`: a time unit ended.
    pub tick: bool,
    /// `ecn_valid_i` with `ecn_qp_i`: a frame of this QP arrived with IP ECN 11.
    pub ecn: Option<usize>,
    /// `cnp_done_i`: bit q, the CNP of QP q was sent.
    pub cnp_done: u32,
    /// `cnp_rx_valid_i` with `cnp_rx_qp_i`: a CNP for this QP arrived.
    pub cnp_rx: Option<usize>,
    /// `sent_valid_i` with `sent_qp_i`, `sent_bytes_i`: a frame of this QP started, this long.
    pub sent: Option<(usize, u16)>,
}

/// One QP's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Qp {
    /// A CNP is asked for (`cnp_req_o` bit).
    pub pend: bool,
    /// Ticks left before another CNP may be asked for.
    pub np_timer: u16,
    /// Current rate.
    pub rc: u16,
    /// Target rate.
    pub rt: u16,
    /// Alpha, 10 bits.
    pub alpha: u16,
    /// Ticks counted towards the next alpha decay.
    pub alpha_cnt: u16,
    /// Ticks counted towards the next increase-timer event.
    pub inc_cnt: u16,
    /// Bytes counted towards the next byte-counter event.
    pub bytes: u32,
    /// Increase-timer events since the last CNP (`T`, saturating).
    pub t: u8,
    /// Byte-counter events since the last CNP (`BC`, saturating).
    pub bc: u8,
    /// Credit in bytes with [`CREDIT_FRAC`] fraction bits (negative: debt).
    pub credit: i64,
}

impl Qp {
    fn new() -> Qp {
        Qp {
            pend: false,
            np_timer: 0,
            rc: LINE,
            rt: LINE,
            alpha: ALPHA_MAX,
            alpha_cnt: 0,
            inc_cnt: 0,
            bytes: 0,
            t: 0,
            bc: 0,
            credit: 0,
        }
    }
}

/// The block: every QP and the two counters.
#[derive(Clone, Debug)]
pub struct Dcqcn {
    bytes_per_cycle: u32,
    /// Per-QP state.
    pub qps: Vec<Qp>,
    /// CNPs asked for (`np_cnp_count_o`).
    pub np_count: u32,
    /// CNPs received (`rp_cnp_count_o`).
    pub rp_count: u32,
}

/// A timer counting ticks towards `period` (0: stopped): (next count, expired).
fn timer(cnt: u16, period: u16, tick: bool) -> (u16, bool) {
    if period == 0 {
        (0, false)
    } else if tick {
        if u32::from(cnt) + 1 >= u32::from(period) {
            (0, true)
        } else {
            (cnt + 1, false)
        }
    } else {
        (cnt, false)
    }
}

/// The rate average that converges: `ceil((rt + rc) / 2)`.
fn average(rt: u16, rc: u16) -> u16 {
    ((u32::from(rt) + u32::from(rc) + 1) >> 1) as u16
}

impl Dcqcn {
    /// The block after reset, with `qps` QPs on a stream of `bytes_per_cycle` bytes.
    pub fn new(qps: usize, bytes_per_cycle: u32) -> Dcqcn {
        Dcqcn {
            bytes_per_cycle,
            qps: vec![Qp::new(); qps],
            np_count: 0,
            rp_count: 0,
        }
    }

    fn full(p: &Params) -> i64 {
        i64::from(p.burst) << CREDIT_FRAC
    }

    /// `cnp_req_o` as a bit mask.
    pub fn cnp_req(&self) -> u32 {
        self.qps
            .iter()
            .enumerate()
            .fold(0, |m, (q, x)| m | (u32::from(x.pend) << q))
    }

    /// `may_send_o` bit q under `p` (the enable input acts at once).
    pub fn may_send(&self, q: usize, p: &Params) -> bool {
        let x = &self.qps[q];
        !p.enable || x.rc == LINE || x.credit >= 0
    }

    /// `may_send_o` as a bit mask.
    pub fn may_send_mask(&self, p: &Params) -> u32 {
        (0..self.qps.len()).fold(0, |m, q| m | (u32::from(self.may_send(q, p)) << q))
    }

    /// One clock cycle with configuration `p` and events `i`.
    pub fn step(&mut self, p: &Params, i: &Inputs) {
        let nq = self.qps.len();
        let g = u32::from(p.g_shift);
        let full = Self::full(p);
        if i.cnp_rx.is_some_and(|q| q < nq) {
            self.rp_count = self.rp_count.wrapping_add(1);
        }
        for (q, x) in self.qps.iter_mut().enumerate() {
            // Notification point (old values decide).
            let (pend, timer_old) = (x.pend, x.np_timer);
            if pend && i.cnp_done >> q & 1 == 1 {
                x.pend = false;
                x.np_timer = p.cnp_interval;
            } else if i.tick && timer_old > 0 {
                x.np_timer = timer_old - 1;
            }
            if i.ecn == Some(q) && !pend && timer_old == 0 {
                x.pend = true;
                self.np_count = self.np_count.wrapping_add(1);
            }

            // Pacer (the old rate and credit decide).
            let credit = x.credit;
            let unthrottled = !p.enable || x.rc == LINE;
            x.credit = if unthrottled {
                full
            } else {
                let spent = match i.sent {
                    Some((sq, b)) if sq == q => i64::from(b) << CREDIT_FRAC,
                    _ => 0,
                };
                let refill = i64::from(x.rc) * i64::from(self.bytes_per_cycle);
                (credit - spent + refill).clamp(CREDIT_MIN, full)
            };

            // Reaction point.
            if !p.enable {
                *x = Qp {
                    pend: x.pend,
                    np_timer: x.np_timer,
                    credit: x.credit,
                    ..Qp::new()
                };
                continue;
            }
            if i.cnp_rx == Some(q) {
                let cut = ((u32::from(x.rc) * u32::from(x.alpha)) >> 11) as u16;
                x.rt = x.rc.max(p.rate_min);
                x.rc = (x.rc - cut).max(p.rate_min);
                let a = u32::from(x.alpha) - (u32::from(x.alpha) >> g) + (1024 >> g.min(11));
                x.alpha = a.min(u32::from(ALPHA_MAX)) as u16;
                x.alpha_cnt = 0;
                x.inc_cnt = 0;
                x.bytes = 0;
                x.t = 0;
                x.bc = 0;
                continue;
            }
            let (alpha_cnt, alpha_exp) = timer(x.alpha_cnt, p.alpha_period, i.tick);
            x.alpha_cnt = alpha_cnt;
            if alpha_exp {
                x.alpha -= x.alpha >> g;
            }
            let (inc_cnt, inc_exp) = timer(x.inc_cnt, p.inc_period, i.tick);
            x.inc_cnt = inc_cnt;
            let mut byte_exp = false;
            if p.byte_thresh == 0 {
                x.bytes = 0;
            } else if let Some((sq, b)) = i.sent {
                if sq == q {
                    let sum = x.bytes + u32::from(b);
                    byte_exp = sum >= p.byte_thresh;
                    x.bytes = if byte_exp { 0 } else { sum };
                }
            }
            if inc_exp || byte_exp {
                let t = x.t.saturating_add(u8::from(inc_exp));
                let bc = x.bc.saturating_add(u8::from(byte_exp));
                x.t = t;
                x.bc = bc;
                let f = p.fast_steps;
                let rt = if t.max(bc) <= f {
                    u32::from(x.rt)
                } else if t.min(bc) > f {
                    let steps = u32::from(t.min(bc) - f);
                    u32::from(x.rt) + steps * u32::from(p.rate_hai)
                } else {
                    u32::from(x.rt) + u32::from(p.rate_ai)
                };
                let rt = (rt.min(u32::from(LINE)) as u16).max(p.rate_min);
                x.rt = rt;
                x.rc = average(rt, x.rc).max(p.rate_min);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> Params {
        Params {
            enable: true,
            cnp_interval: 50,
            g_shift: 8,
            rate_ai: 66,
            rate_hai: 655,
            rate_min: 66,
            alpha_period: 55,
            inc_period: 300,
            byte_thresh: 10 << 20,
            fast_steps: 5,
            burst: 4200,
        }
    }

    #[test]
    fn a_cnp_halves_the_rate_at_full_alpha_then_it_recovers() {
        let p = defaults();
        let mut m = Dcqcn::new(1, 8);
        m.step(
            &p,
            &Inputs {
                cnp_rx: Some(0),
                ..Inputs::default()
            },
        );
        // Rc * (1 - 1023/2048): 65535 - (65535 * 1023 >> 11) = 65535 - 32735.
        assert_eq!(m.qps[0].rc, 32800);
        assert_eq!(m.qps[0].rt, LINE);
        // alpha = 1023 - 3 + 4 = 1024, capped.
        assert_eq!(m.qps[0].alpha, ALPHA_MAX);
        let tick = Inputs {
            tick: true,
            ..Inputs::default()
        };
        let mut ticks = 0;
        while m.qps[0].rc != LINE {
            m.step(&p, &tick);
            ticks += 1;
            assert!(ticks < 100_000);
        }
        // Each event halves the gap to the target (32735, rounding up): 15 events.
        assert_eq!(ticks, 300 * 15);
    }

    #[test]
    fn pacing_follows_the_rate() {
        let p = defaults();
        let mut m = Dcqcn::new(1, 8);
        m.qps[0].rc = 0x4000; // a quarter of the line rate: 2 bytes per cycle
        let mut sent = 0u64;
        for _ in 0..100_000 {
            let go = m.may_send(0, &p);
            let i = Inputs {
                sent: go.then_some((0, 1000)),
                ..Inputs::default()
            };
            if go {
                sent += 1000;
            }
            m.step(&p, &i);
        }
        assert!((199_000..=206_000).contains(&sent), "{sent}");
    }

    #[test]
    fn marks_inside_the_interval_are_merged() {
        let p = defaults();
        let mut m = Dcqcn::new(2, 8);
        let ecn = |q| Inputs {
            ecn: Some(q),
            ..Inputs::default()
        };
        m.step(&p, &ecn(1));
        assert_eq!(m.cnp_req(), 0b10);
        m.step(&p, &ecn(1));
        assert_eq!(m.np_count, 1);
        m.step(
            &p,
            &Inputs {
                cnp_done: 0b10,
                ..Inputs::default()
            },
        );
        assert_eq!(m.cnp_req(), 0);
        for _ in 0..49 {
            m.step(
                &p,
                &Inputs {
                    tick: true,
                    ecn: Some(1),
                    ..Inputs::default()
                },
            );
        }
        assert_eq!(m.cnp_req(), 0);
        m.step(
            &p,
            &Inputs {
                tick: true,
                ..Inputs::default()
            },
        );
        m.step(&p, &ecn(1));
        assert_eq!(m.cnp_req(), 0b10);
        assert_eq!(m.np_count, 2);
    }
}
