//! `roce_dcqcn_q<Q>_w<W>`: RoCEv2 congestion control, DCQCN (Zhu et al., "Congestion Control
//! for Large-Scale RDMA Deployments", SIGCOMM 2015), both ends of it for `Q` queue pairs on a
//! `W`-bit transmit stream. The engine instantiates it and feeds it events; the block decides
//! when a CNP is due and when a QP may start a frame. It knows nothing of frames beyond their
//! length, and nothing of time beyond `tick_i` (the engine feeds a 1 µs interval timer).
//!
//! # Notification point (receiver side)
//!
//! `ecn_valid_i` with `ecn_qp_i`: a frame accepted for QP q carried IP ECN 11. If QP q has no
//! CNP pending and its interval timer is 0, `cnp_req_o[q]` rises (and `np_cnp_count_o` counts
//! it); it stays high until `cnp_done_i[q]` (the engine sent the CNP), which loads the QP's
//! interval timer with `cnp_interval_i`; each tick counts it down. Marks while a CNP is pending
//! or the timer runs are merged into that CNP (dropped, not remembered): at most one CNP per QP
//! per `cnp_interval_i` ticks (a mark asks for the next one from the cycle after the interval's
//! last tick on).
//!
//! # Reaction point (sender side)
//!
//! Per QP: current rate `Rc`, target rate `Rt` (16 bits each, a fraction of the line rate;
//! `FFFFh` is the line rate itself), `alpha` (10 bits, alpha/1024), the alpha timer, the
//! increase timer, the byte counter, and the increase-event counts `T` (timer) and `BC`
//! (bytes), 8 bits each, saturating. After reset: `Rc = Rt = FFFFh`, `alpha = 1023`, all
//! counters 0. `g = 2^-g_shift_i`. In one clock cycle, for QP q (old values on the right):
//!
//! - `enable_i` low: `Rc = Rt = FFFFh`, `alpha = 1023`, timers, counters and counts 0.
//! - a CNP received (`cnp_rx_valid_i`, `cnp_rx_qp_i == q`): `Rt = max(Rc, rate_min)`,
//!   `Rc = max(Rc - (Rc * alpha >> 11), rate_min)` (Rc * (1 - alpha/2)),
//!   `alpha = min(alpha - (alpha >> g) + (1024 >> g), 1023)` ((1 - g) alpha + g); the alpha
//!   timer, the increase timer, the byte counter, `T` and `BC` restart from 0. Nothing else
//!   happens to the QP in that cycle (its ticks and sent bytes are dropped).
//! - otherwise, each timer (alpha: `alpha_period_i`, increase: `inc_period_i`; 0 = stopped,
//!   held at 0) counts ticks and expires on a tick that brings it to its period (then restarts
//!   from 0). The byte counter adds the QP's `sent_bytes_i` and expires when the sum reaches
//!   `byte_thresh_i` (0 = off), restarting from 0 (the rest is not carried).
//!   - alpha timer expired: `alpha = alpha - (alpha >> g)`.
//!   - increase timer or byte counter expired (or both: one increase): `T += timer expired`,
//!     `BC += byte counter expired` (saturating at 255), then with `F = fast_steps_i`:
//!     `max(T, BC) <= F`: fast recovery, `Rt` unchanged; `min(T, BC) > F`: hyper increase,
//!     `Rt += (min(T, BC) - F) * rate_hai`; otherwise additive increase, `Rt += rate_ai`;
//!     `Rt` saturates at FFFFh; then `Rt = max(Rt, rate_min)` and
//!     `Rc = max(ceil((Rt + Rc) / 2), rate_min)` (the ceiling lets `Rc` reach `Rt`: with a
//!     floor it would stop one short of the line rate).
//!
//! Indices `>= Q` on the event inputs are ignored (and not counted). `rp_cnp_count_o` counts
//! every CNP received for a QP, enabled or not.
//!
//! # Pacing
//!
//! `may_send_o[q]`: QP q may start a frame now. A QP at the line rate (`Rc == FFFFh`), or any QP
//! while `enable_i` is low, is not paced: `may_send_o` is 1 and its credit is held full
//! (`burst_i` bytes). Below the line rate the credit (bytes, 16 fraction bits, signed) is a
//! token bucket in the debt model: `may_send_o[q] = credit >= 0`; every cycle
//! `credit = clamp(credit - spent + Rc * (W / 8), -65536 bytes, burst_i)`, where `spent` is
//! `sent_bytes_i` when `sent_valid_i` names the QP (whether or not it was allowed). So a paced
//! QP sends `Rc / 65536` of the line's bytes in the long run, in bursts of at most `burst_i`
//! plus one frame; a QP never throttled costs no cycle. The engine should report a frame on
//! `sent_*` in the cycle it starts it (the cycle it looked at `may_send_o`).
//!
//! # Timing
//!
//! Every output is a register or (`may_send_o`) a function of registers and `enable_i`; an
//! event acts on the next cycle's outputs.
//!
//! # Scaling
//!
//! Per-QP state is about 165 flip-flops (Yosys: 390 for two QPs and the two counters) and each
//! QP has its own update datapath (a 16x10 and an 8x16 multiplier), which is right for the 1
//! to 8 QPs of `[roce] qps`. For thousands of QPs the
//! state moves to one RAM word per QP, read-modify-written by one pipeline, as `nvme_ctrl` does
//! for its queues: events (CNP, sent, mark) go through a small FIFO; the timers become one
//! free-running time-unit counter with per-QP "last event" timestamps compared when the QP's
//! word is visited (a round-robin sweep visits each QP once per time unit, which bounds `Q` by
//! the cycles in a tick); `may_send` becomes a per-QP "next send time" checked when the
//! transmitter picks the QP, instead of a bit vector.

use hdl_builder::prelude::*;
use hdl_builder::{Error, ErrorKind, Errors};
use std::panic::Location;
use std::rc::Rc;

/// Width of a rate (`Rc`, `Rt`, `rate_*_i`, `rate_o`).
pub const RATE_BITS: u32 = 16;
/// Width of alpha.
pub const ALPHA_BITS: u32 = 10;
/// Width of a period in ticks (`cnp_interval_i`, `alpha_period_i`, `inc_period_i`).
pub const TIME_BITS: u32 = 16;
/// Width of `byte_thresh_i` and of the byte counters.
pub const BYTE_BITS: u32 = 24;
/// Width of `sent_bytes_i` and `burst_i`.
pub const FRAME_BITS: u32 = 16;
/// Width of `g_shift_i`.
pub const G_BITS: u32 = 4;
/// Width of `fast_steps_i` and of the counts `T` and `BC`.
pub const STAGE_BITS: u32 = 8;
/// Width of the CNP counters.
pub const COUNT_BITS: u32 = 32;
/// Fraction bits of the credit.
pub const CREDIT_FRAC: u32 = 16;

/// The block's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DcqcnParams {
    /// Queue pairs (1 to 8: per-QP state is in flip-flops).
    pub qps: u32,
    /// Width of the transmit stream in bits (a multiple of 8, 8 to 512): the line rate is
    /// `data_width / 8` bytes per cycle.
    pub data_width: u32,
}

impl DcqcnParams {
    /// The module name: `roce_dcqcn_q<qps>_w<data_width>`.
    pub fn module_name(&self) -> String {
        format!("roce_dcqcn_q{}_w{}", self.qps, self.data_width)
    }

    /// Bits of a QP index on the event inputs.
    pub fn qp_bits(&self) -> u32 {
        clog2(u64::from(self.qps))
    }

    fn validate(&self) -> Result<(), String> {
        if !(1..=8).contains(&self.qps) {
            return Err(format!(
                "{} queue pairs is out of range; use 1 to 8 (per-QP state is in flip-flops)",
                self.qps
            ));
        }
        let bytes = self.data_width / 8;
        if self.data_width & 7 != 0 || !bytes.is_power_of_two() || !(1..=64).contains(&bytes) {
            return Err(format!(
                "stream width {} is not 8, 16, 32, ... 512 bits",
                self.data_width
            ));
        }
        Ok(())
    }
}

/// Default values of the CSR-ready parameters, for a 1 µs tick. Where they come from:
///
/// - `g = 1/256` (`g_shift = 8`), alpha timer 55 µs, CNP interval 50 µs, `F = 5` fast-recovery
///   steps: the values of the DCQCN paper (Zhu et al., SIGCOMM 2015, section 3: g, K = 55 µs,
///   N = 50 µs, F = 5).
/// - rate-increase timer 300 µs: Mellanox's default rate-increase timer (`rpg_time_reset`).
/// - byte counter 2 MB, additive increase 5 Mb/s, hyper increase 40 Mb/s, minimum rate
///   2 Mb/s: the defaults of a commercial RoCEv2 tester's DCQCN profile (Spirent TestCenter
///   `Rocev2DcqcnProfile`: ByteResetInMb 2, AdditiveIncreaseRateInMbps 5,
///   HyperIncreaseRateInMbps 40, MinRateInMbps 2), turned into fractions of the line rate by
///   [`DcqcnDefaults::new`].
/// - `burst`: one maximum frame at MTU 4096 (4096 + 14 + 20 + 8 + 12 + 4 header and ICRC bytes,
///   rounded up to 4200).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DcqcnDefaults {
    /// `enable_i`.
    pub enable: bool,
    /// `cnp_interval_i`, ticks.
    pub cnp_interval: u16,
    /// `g_shift_i`.
    pub g_shift: u8,
    /// `rate_ai_i`, a fraction of the line rate (1/65536).
    pub rate_ai: u16,
    /// `rate_hai_i`.
    pub rate_hai: u16,
    /// `rate_min_i`.
    pub rate_min: u16,
    /// `alpha_period_i`, ticks.
    pub alpha_period: u16,
    /// `inc_period_i`, ticks.
    pub inc_period: u16,
    /// `byte_thresh_i`, bytes.
    pub byte_thresh: u32,
    /// `fast_steps_i`.
    pub fast_steps: u8,
    /// `burst_i`, bytes.
    pub burst: u16,
}

impl DcqcnDefaults {
    /// The defaults for a link of `line_mbps` Mb/s (the rate steps are absolute figures in the
    /// sources, so their fractions depend on the line rate; each is at least 1).
    pub fn new(line_mbps: u32) -> DcqcnDefaults {
        let frac = |mbps: u32| -> u16 {
            let f = (u64::from(mbps) * 65536).div_ceil(u64::from(line_mbps.max(1)));
            f.clamp(1, 0xffff) as u16
        };
        DcqcnDefaults {
            enable: true,
            cnp_interval: 50,
            g_shift: 8,
            rate_ai: frac(5),
            rate_hai: frac(40),
            rate_min: frac(2),
            alpha_period: 55,
            inc_period: 300,
            byte_thresh: 2 << 20,
            fast_steps: 5,
            burst: 4200,
        }
    }
}

/// Per-QP values as one vector, QP 0 in the low bits.
fn pack(parts: &[Expr]) -> Expr {
    cat(parts.iter().rev().cloned())
}

/// The DCQCN block for `p`, named `roce_dcqcn_q<qps>_w<data_width>`. See the module
/// documentation for the exact rules.
pub fn dcqcn(p: &DcqcnParams, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let name = p.module_name();
    if let Err(message) = p.validate() {
        return Err(Errors(vec![Error {
            kind: ErrorKind::Invalid,
            module: name.clone(),
            signal: None,
            loc: Location::caller(),
            message: format!("{name}: {message}"),
        }]));
    }
    let nq = p.qps;
    let qw = p.qp_bits();
    let bpc_log = (p.data_width / 8).trailing_zeros();
    let line = u64::from(u16::MAX);

    let mut m = ModuleBuilder::with_reset(&name, reset);
    m.doc(&format!(
        "DCQCN congestion control for {nq} queue pair(s) on a {}-bit stream (Zhu et al., SIGCOMM 2015).",
        p.data_width
    ));
    m.doc(
        "Notification point: an ECN mark raises cnp_req_o[q] unless a CNP is pending or the QP's",
    );
    m.doc("interval (cnp_interval_i ticks from cnp_done_i) runs. Reaction point: per QP rate Rc,");
    m.doc(
        "target Rt (FFFFh = line rate), alpha/1024; a CNP cuts Rc by alpha/2; timers (tick_i) and",
    );
    m.doc("sent bytes raise it again (fast recovery, additive, hyper). may_send_o paces each QP at Rc");
    m.doc("with a byte credit of burst_i. Exact rules: hdl-gen/src/roce/dcqcn.rs.");
    m.clock();
    m.reset();

    m.group("configuration (CSRs)");
    let enable = m.input("enable_i", 1);
    m.comment(
        enable,
        "0: every rate held at the line rate (CNPs still asked for)",
    );
    let cnp_interval = m.input("cnp_interval_i", TIME_BITS);
    m.comment(
        cnp_interval,
        "ticks from a CNP sent to the next one asked for",
    );
    let g_shift = m.input("g_shift_i", G_BITS);
    m.comment(g_shift, "g = 2^-g_shift");
    let rate_ai = m.input("rate_ai_i", RATE_BITS);
    m.comment(rate_ai, "additive increase, 1/65536 of the line rate");
    let rate_hai = m.input("rate_hai_i", RATE_BITS);
    m.comment(rate_hai, "hyper increase step");
    let rate_min = m.input("rate_min_i", RATE_BITS);
    m.comment(rate_min, "floor of Rc and Rt");
    let alpha_period = m.input("alpha_period_i", TIME_BITS);
    m.comment(alpha_period, "ticks between alpha decays; 0: never");
    let inc_period = m.input("inc_period_i", TIME_BITS);
    m.comment(inc_period, "ticks between increase events; 0: never");
    let byte_thresh = m.input("byte_thresh_i", BYTE_BITS);
    m.comment(byte_thresh, "bytes sent between increase events; 0: never");
    let fast_steps = m.input("fast_steps_i", STAGE_BITS);
    m.comment(fast_steps, "F: fast-recovery events");
    let burst = m.input("burst_i", FRAME_BITS);
    m.comment(burst, "pacing credit capacity, bytes");
    let tick = m.input("tick_i", 1);
    m.comment(tick, "one time unit ended");

    m.group("notification point");
    let ecn_valid = m.input("ecn_valid_i", 1);
    m.comment(ecn_valid, "a frame accepted for ecn_qp_i carried IP ECN 11");
    let ecn_qp = m.input("ecn_qp_i", qw);
    let cnp_req = m.output("cnp_req_o", nq);
    m.comment(cnp_req, "bit q: send a CNP for QP q");
    let cnp_done = m.input("cnp_done_i", nq);
    m.comment(cnp_done, "bit q: the CNP of QP q was sent");

    m.group("reaction point");
    let rx_valid = m.input("cnp_rx_valid_i", 1);
    m.comment(rx_valid, "a CNP for cnp_rx_qp_i arrived");
    let rx_qp = m.input("cnp_rx_qp_i", qw);
    let sent_valid = m.input("sent_valid_i", 1);
    m.comment(sent_valid, "a frame of sent_qp_i started");
    let sent_qp = m.input("sent_qp_i", qw);
    let sent_bytes = m.input("sent_bytes_i", FRAME_BITS);
    m.comment(sent_bytes, "its length in bytes");
    let may_send = m.output("may_send_o", nq);
    m.comment(may_send, "bit q: QP q may start a frame now");

    m.group("status");
    let rate_out = m.output("rate_o", nq * RATE_BITS);
    m.comment(rate_out, "Rc of each QP, QP 0 in the low bits");
    let target_out = m.output("target_o", nq * RATE_BITS);
    m.comment(target_out, "Rt of each QP");
    let alpha_out = m.output("alpha_o", nq * ALPHA_BITS);
    m.comment(alpha_out, "alpha of each QP");
    let np_count = m.output("np_cnp_count_o", COUNT_BITS);
    m.comment(np_count, "CNPs asked for");
    let rp_count = m.output("rp_cnp_count_o", COUNT_BITS);
    m.comment(rp_count, "CNPs received");

    // Shared terms.
    let g_term = m.net("g_term", lit(11, 1024).shr_by(g_shift));
    m.comment(g_term, "g as alpha: 1024 >> g_shift");
    let full = m.net(
        "credit_full",
        cat([lit(2, 1), burst.ex(), zeros(CREDIT_FRAC)]),
    );
    m.comment(full, "burst_i as a biased credit (2^32 + burst << 16)");

    let np_cnt = m.reg("np_count", COUNT_BITS, 0);
    let rp_cnt = m.reg("rp_count", COUNT_BITS, 0);
    m.assign(np_count, np_cnt.q);
    m.assign(rp_count, rp_cnt.q);

    let mut req_bits = Vec::new();
    let mut may_bits = Vec::new();
    let mut rates = Vec::new();
    let mut targets = Vec::new();
    let mut alphas = Vec::new();
    let mut np_new = Vec::new();
    for q in 0..nq {
        let qn = |s: &str| format!("qp{q}_{s}");
        let qv = u64::from(q);

        // Notification point.
        let pend = m.reg(&qn("cnp_pend"), 1, 0);
        let np_timer = m.reg(&qn("cnp_timer"), TIME_BITS, 0);
        m.comment(np_timer.q, "ticks before another CNP may be asked for");
        let done = m.net(&qn("cnp_sent"), pend.q & cnp_done.bit(q));
        let mark = m.net(
            &qn("cnp_new"),
            ecn_valid & ecn_qp.eq(qv) & !pend.q & np_timer.q.eq(0u64),
        );
        m.comment(mark, "a mark that asks for a CNP (others are merged)");
        m.comb(|c| {
            c.set(pend.d, pend.q);
            c.set(np_timer.d, np_timer.q);
            c.if_(done, |c| {
                c.set(pend.d, 0u64);
                c.set(np_timer.d, cnp_interval);
            })
            .else_if(tick & np_timer.q.ne(0u64), |c| {
                c.set(np_timer.d, np_timer.q - 1u64)
            });
            c.if_(mark, |c| c.set(pend.d, 1u64));
        });
        req_bits.push(pend.q.ex());
        np_new.push(mark);

        // Reaction point state.
        let rc = m.reg(&qn("rc"), RATE_BITS, line);
        m.comment(rc.q, "current rate, FFFFh = line rate");
        let rt = m.reg(&qn("rt"), RATE_BITS, line);
        m.comment(rt.q, "target rate");
        let alpha = m.reg(&qn("alpha"), ALPHA_BITS, 1023u64);
        let alpha_cnt = m.reg(&qn("alpha_cnt"), TIME_BITS, 0);
        let inc_cnt = m.reg(&qn("inc_cnt"), TIME_BITS, 0);
        let bytes = m.reg(&qn("bytes"), BYTE_BITS, 0);
        m.comment(bytes.q, "bytes sent towards the next byte-counter event");
        let t_cnt = m.reg(&qn("t"), STAGE_BITS, 0);
        m.comment(t_cnt.q, "T: increase-timer events since the last CNP");
        let bc_cnt = m.reg(&qn("bc"), STAGE_BITS, 0);
        m.comment(bc_cnt.q, "BC: byte-counter events since the last CNP");

        let cnp_here = m.net(&qn("cnp_rx"), rx_valid & rx_qp.eq(qv));
        let sent_here = m.net(&qn("sent"), sent_valid & sent_qp.eq(qv));

        // CNP: Rt = Rc, Rc = Rc * (1 - alpha/2), alpha = (1 - g) alpha + g.
        let cut = m.net(
            &qn("cut"),
            rc.q.mul(alpha.q.zext(RATE_BITS))
                .slice(RATE_BITS + ALPHA_BITS - 1, 11),
        );
        m.comment(cut, "Rc * alpha / 2048");
        let rc_cut = m.net(&qn("rc_cut"), rc.q - cut.zext(RATE_BITS));
        let alpha_decayed = m.net(&qn("alpha_decayed"), alpha.q - alpha.q.shr_by(g_shift));
        m.comment(alpha_decayed, "(1 - g) alpha");
        let alpha_raised = m.net(
            &qn("alpha_raised"),
            alpha_decayed.zext(12) + g_term.zext(12),
        );
        m.comment(alpha_raised, "(1 - g) alpha + g, before the ceiling");

        // Timers and the byte counter.
        let alpha_next = m.net(&qn("alpha_cnt_inc"), alpha_cnt.q.zext(TIME_BITS + 1) + 1u64);
        let alpha_exp = m.net(
            &qn("alpha_expired"),
            tick & alpha_period.ne(0u64) & alpha_next.ge(alpha_period.zext(TIME_BITS + 1)),
        );
        let inc_next = m.net(&qn("inc_cnt_inc"), inc_cnt.q.zext(TIME_BITS + 1) + 1u64);
        let inc_exp = m.net(
            &qn("inc_expired"),
            tick & inc_period.ne(0u64) & inc_next.ge(inc_period.zext(TIME_BITS + 1)),
        );
        let byte_sum = m.net(
            &qn("byte_sum"),
            bytes.q.zext(BYTE_BITS + 1) + sent_bytes.zext(BYTE_BITS + 1),
        );
        let byte_exp = m.net(
            &qn("byte_expired"),
            sent_here & byte_thresh.ne(0u64) & byte_sum.ge(byte_thresh.zext(BYTE_BITS + 1)),
        );

        // Increase: stage from T and BC after this event.
        let t_new = m.net(
            &qn("t_new"),
            mux(inc_exp & t_cnt.q.ne(255u64), t_cnt.q + 1u64, t_cnt.q),
        );
        let bc_new = m.net(
            &qn("bc_new"),
            mux(byte_exp & bc_cnt.q.ne(255u64), bc_cnt.q + 1u64, bc_cnt.q),
        );
        let st_max = m.net(&qn("stage_max"), mux(t_new.ge(bc_new), t_new, bc_new));
        let st_min = m.net(&qn("stage_min"), mux(t_new.ge(bc_new), bc_new, t_new));
        let fast = m.net(&qn("fast"), st_max.le(fast_steps));
        m.comment(fast, "fast recovery: Rt unchanged");
        let hyper = m.net(&qn("hyper"), st_min.gt(fast_steps));
        let hyper_i = m.net(&qn("hyper_steps"), st_min - fast_steps);
        let rt_step = m.net(
            &qn("rt_step"),
            mux(
                fast,
                lit(STAGE_BITS + RATE_BITS, 0),
                mux(
                    hyper,
                    hyper_i.mul(rate_hai),
                    rate_ai.zext(STAGE_BITS + RATE_BITS),
                ),
            ),
        );
        m.comment(
            rt_step,
            "0 (fast), i * rate_hai (hyper) or rate_ai (additive)",
        );
        let rt_sum = m.net(
            &qn("rt_sum"),
            rt.q.zext(STAGE_BITS + RATE_BITS + 1) + rt_step.zext(STAGE_BITS + RATE_BITS + 1),
        );
        let rt_sat = m.net(
            &qn("rt_sat"),
            mux(
                rt_sum.gt(line),
                lit(RATE_BITS, u128::from(line)),
                rt_sum.slice(RATE_BITS - 1, 0),
            ),
        );
        let rt_inc = m.net(&qn("rt_inc"), mux(rt_sat.lt(rate_min), rate_min, rt_sat));
        let rc_avg = m.net(
            &qn("rc_avg"),
            (rt_inc.zext(RATE_BITS + 1) + rc.q.zext(RATE_BITS + 1) + 1u64).slice(RATE_BITS, 1),
        );
        m.comment(rc_avg, "ceil((Rt + Rc) / 2)");
        let increase = m.net(&qn("increase"), inc_exp | byte_exp);

        m.comb(|c| {
            c.set(rc.d, rc.q);
            c.set(rt.d, rt.q);
            c.set(alpha.d, alpha.q);
            c.set(alpha_cnt.d, alpha_cnt.q);
            c.set(inc_cnt.d, inc_cnt.q);
            c.set(bytes.d, bytes.q);
            c.set(t_cnt.d, t_cnt.q);
            c.set(bc_cnt.d, bc_cnt.q);
            c.if_(!enable, |c| {
                c.set(rc.d, line);
                c.set(rt.d, line);
                c.set(alpha.d, 1023u64);
                c.set(alpha_cnt.d, 0u64);
                c.set(inc_cnt.d, 0u64);
                c.set(bytes.d, 0u64);
                c.set(t_cnt.d, 0u64);
                c.set(bc_cnt.d, 0u64);
            })
            .else_if(cnp_here, |c| {
                c.set(rt.d, mux(rc.q.lt(rate_min), rate_min, rc.q));
                c.set(rc.d, mux(rc_cut.lt(rate_min), rate_min, rc_cut));
                c.set(
                    alpha.d,
                    mux(
                        alpha_raised.gt(1023u64),
                        lit(ALPHA_BITS, 1023),
                        alpha_raised.slice(ALPHA_BITS - 1, 0),
                    ),
                );
                c.set(alpha_cnt.d, 0u64);
                c.set(inc_cnt.d, 0u64);
                c.set(bytes.d, 0u64);
                c.set(t_cnt.d, 0u64);
                c.set(bc_cnt.d, 0u64);
            })
            .else_(|c| {
                c.if_(alpha_period.eq(0u64) | alpha_exp, |c| {
                    c.set(alpha_cnt.d, 0u64)
                })
                .else_if(tick, |c| {
                    c.set(alpha_cnt.d, alpha_next.slice(TIME_BITS - 1, 0))
                });
                c.if_(alpha_exp, |c| c.set(alpha.d, alpha_decayed));
                c.if_(inc_period.eq(0u64) | inc_exp, |c| c.set(inc_cnt.d, 0u64))
                    .else_if(tick, |c| c.set(inc_cnt.d, inc_next.slice(TIME_BITS - 1, 0)));
                c.if_(byte_thresh.eq(0u64) | byte_exp, |c| c.set(bytes.d, 0u64))
                    .else_if(sent_here, |c| {
                        c.set(bytes.d, byte_sum.slice(BYTE_BITS - 1, 0))
                    });
                c.if_(increase, |c| {
                    c.set(t_cnt.d, t_new);
                    c.set(bc_cnt.d, bc_new);
                    c.set(rt.d, rt_inc);
                    c.set(rc.d, mux(rc_avg.lt(rate_min), rate_min, rc_avg));
                });
            });
        });

        // Pacer: the credit biased by 2^32 (so 0 is 65536 bytes of debt), 34 bits.
        let credit = m.reg(&qn("credit"), 34, 0);
        m.comment(
            credit.q,
            "bytes (16 fraction bits) + 2^32: >= 2^32 is no debt",
        );
        // After reset the credit is 0 (the floor), but Rc is the line rate, so the QP is not
        // paced and the credit is full by the time a CNP can lower Rc.
        let unpaced = m.net(&qn("unpaced"), !enable | rc.q.eq(line));
        m.comment(unpaced, "at the line rate: credit held full, never waits");
        let spent = m.net(
            &qn("spent"),
            mux(
                sent_here,
                cat([sent_bytes.ex(), zeros(CREDIT_FRAC)]),
                lit(FRAME_BITS + CREDIT_FRAC, 0),
            ),
        );
        let refill = m.net(&qn("refill"), cat_nonempty(rc.q.ex(), bpc_log));
        m.comment(refill, "Rc * bytes per cycle, 16 fraction bits");
        // credit - spent + refill, biased by 2^33 (the stored bias 2^32 plus 2^32 more), so the
        // sum is never negative: 36 bits.
        let credit_sum = m.net(
            &qn("credit_sum"),
            lit(36, 1 << 32) + credit.q.zext(36) - spent.zext(36) + refill.zext(36),
        );
        m.comment(credit_sum, "credit - spent + refill, biased by 2^33");
        let floor = m.net(&qn("credit_floor"), credit_sum.lt(1u64 << 32));
        m.comment(floor, "more than 65536 bytes of debt");
        let ceiling = m.net(
            &qn("credit_ceiling"),
            credit_sum.gt(full.zext(36) + (1u64 << 32)),
        );
        m.comment(ceiling, "above burst_i");
        m.comb(|c| {
            c.if_(unpaced | ceiling, |c| c.set(credit.d, full))
                .else_if(floor, |c| c.set(credit.d, 0u64))
                .else_(|c| c.set(credit.d, (credit_sum - (1u64 << 32)).slice(33, 0)));
        });
        may_bits.push((unpaced | credit.q.slice(33, 32).ne(0u64)).ex());
        rates.push(rc.q.ex());
        targets.push(rt.q.ex());
        alphas.push(alpha.q.ex());
    }
    m.assign(cnp_req, pack(&req_bits));
    m.assign(may_send, pack(&may_bits));
    m.assign(rate_out, pack(&rates));
    m.assign(target_out, pack(&targets));
    m.assign(alpha_out, pack(&alphas));

    let np_any = np_new.iter().fold(lit(1, 0), |e, s| e | *s);
    m.assign(np_cnt.d, mux(np_any, np_cnt.q + 1u64, np_cnt.q));
    // Every value of the index names a QP only when there are 2^qw of them (one QP still has
    // a 1-bit index, whose value 1 names none).
    let rx_known = if u64::from(nq) == 1u64 << qw {
        rx_valid.ex()
    } else {
        rx_valid & rx_qp.lt(u64::from(nq))
    };
    m.assign(rp_cnt.d, mux(rx_known, rp_cnt.q + 1u64, rp_cnt.q));
    m.finish()
}

/// `v << shift` with the width grown by `shift`.
fn cat_nonempty(v: Expr, shift: u32) -> Expr {
    if shift == 0 {
        v
    } else {
        cat([v, zeros(shift)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_at_one_to_eight_qps() {
        for (qps, w) in [(1, 8), (2, 64), (3, 64), (8, 512)] {
            let p = DcqcnParams { qps, data_width: w };
            let m = dcqcn(&p, ResetStyle::SyncHigh).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(m.name(), format!("roce_dcqcn_q{qps}_w{w}"));
        }
    }

    #[test]
    fn bad_parameters_are_refused_with_the_module_name() {
        let e = dcqcn(
            &DcqcnParams {
                qps: 9,
                data_width: 64,
            },
            ResetStyle::AsyncLow,
        )
        .unwrap_err();
        assert!(e.to_string().contains("roce_dcqcn_q9_w64"), "{e}");
        assert!(dcqcn(
            &DcqcnParams {
                qps: 2,
                data_width: 24,
            },
            ResetStyle::AsyncLow,
        )
        .is_err());
    }

    #[test]
    fn defaults_scale_with_the_line_rate() {
        let d = DcqcnDefaults::new(10_000);
        // 5 Mb/s of 10 Gb/s = 32.8 / 65536, rounded up.
        assert_eq!((d.rate_ai, d.rate_hai, d.rate_min), (33, 263, 14));
        let d = DcqcnDefaults::new(1_000);
        assert_eq!((d.rate_ai, d.rate_hai, d.rate_min), (328, 2622, 132));
        assert!(d.byte_thresh < 1 << BYTE_BITS);
    }
}
