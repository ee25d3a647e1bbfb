//! Congestion control and RNR waits inside the RoCEv2 engine: the DCQCN block
//! (`roce_dcqcn_q<Q>_w<W>`, `dcqcn.rs`) with its CSRs, the 1 µs tick, the CNP counters, and the
//! per-QP RNR timer. The engine (`engine/`) calls in at a few points (its CSR block, its frame
//! sources, its receive checks, its per-QP state); the rules are in `mod.rs`
//! ("# Congestion control", "# RNR").
//!
//! Registers (in `roce_csr`, a region of their own from [`BASE`]):
//!
//! - `cnp_tx`, `cnp_rx`, `ecn_rx` (counters, 32 bits, wrapping),
//! - `cc_tick` (the tick period in clock cycles, reset [`DEFAULT_CLOCK_MHZ`]: 1 µs at that
//!   clock),
//! - the DCQCN parameters, global (reset values: [`DcqcnDefaults::new`] at the line rate of
//!   `data_width` bits per cycle at [`DEFAULT_CLOCK_MHZ`]),
//! - per QP at [`qp_base`]: `rate` (Rc and Rt read back), `alpha`, `rnr` (the RNR retry limit).

use super::dcqcn::{self, DcqcnDefaults, DcqcnParams};
use super::RoceParams;
use crate::blocks::interval_timer::interval_timer;
use hdl_builder::prelude::*;
use hdl_builder::regs::{Access, RegBlock};
use hdl_builder::{Errors, Inst};
use std::cell::Cell;

/// Start of the congestion-control registers in `roce_csr` (the QPs' own end at 0x280).
pub const BASE: u32 = 0x300;
/// The clock the reset values assume, MHz: `cc_tick` resets to this many cycles (1 µs).
pub const DEFAULT_CLOCK_MHZ: u32 = 250;
/// Bytes of a CNP frame: Ethernet 14, IPv4 20, UDP 8, BTH 12, 16 reserved, ICRC 4.
pub const CNP_BYTES: u32 = 74;
/// Width of the RNR countdown, ticks (the longest RNR NAK timer is 655.36 ms).
const RNR_BITS: u32 = 20;

/// The RNR NAK timer field (AETH syndrome bits 4:0) in µs: InfiniBand Architecture
/// Specification vol. 1, table "RNR NAK Timer Field Encodings" (0 is the longest, 655.36 ms).
pub const RNR_TIMER_US: [u32; 32] = [
    655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920, 2560, 3840,
    5120, 7680, 10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920, 122_880, 163_840, 245_760,
    327_680, 491_520,
];

/// Base address of QP `q`'s congestion-control registers.
pub fn qp_base(q: u32) -> u32 {
    BASE + 0x40 + 0x10 * q
}

/// The DCQCN defaults for the engine: its line rate is `data_width` bits per cycle at
/// [`DEFAULT_CLOCK_MHZ`].
pub fn defaults(p: &RoceParams) -> DcqcnDefaults {
    DcqcnDefaults::new(p.data_width * DEFAULT_CLOCK_MHZ)
}

/// The global DCQCN parameters: (register, `roce_dcqcn` input, width, reset value, doc).
fn params(p: &RoceParams) -> Vec<(&'static str, &'static str, u32, u64, &'static str)> {
    let d = defaults(p);
    vec![
        (
            "dcqcn_enable",
            "enable_i",
            1,
            u64::from(d.enable),
            "1: rates follow DCQCN; 0: every QP at the line rate (CNPs are still sent)",
        ),
        (
            "dcqcn_cnp_interval",
            "cnp_interval_i",
            dcqcn::TIME_BITS,
            u64::from(d.cnp_interval),
            "Ticks from a CNP sent to the next one a QP may send",
        ),
        (
            "dcqcn_g_shift",
            "g_shift_i",
            dcqcn::G_BITS,
            u64::from(d.g_shift),
            "g = 2^-g_shift (alpha's gain)",
        ),
        (
            "dcqcn_rate_ai",
            "rate_ai_i",
            dcqcn::RATE_BITS,
            u64::from(d.rate_ai),
            "Additive increase, 1/65536 of the line rate",
        ),
        (
            "dcqcn_rate_hai",
            "rate_hai_i",
            dcqcn::RATE_BITS,
            u64::from(d.rate_hai),
            "Hyper increase step, 1/65536 of the line rate",
        ),
        (
            "dcqcn_rate_min",
            "rate_min_i",
            dcqcn::RATE_BITS,
            u64::from(d.rate_min),
            "Floor of a QP's rate, 1/65536 of the line rate",
        ),
        (
            "dcqcn_alpha_period",
            "alpha_period_i",
            dcqcn::TIME_BITS,
            u64::from(d.alpha_period),
            "Ticks between alpha decays (0: never)",
        ),
        (
            "dcqcn_inc_period",
            "inc_period_i",
            dcqcn::TIME_BITS,
            u64::from(d.inc_period),
            "Ticks between rate increase events (0: never)",
        ),
        (
            "dcqcn_byte_thresh",
            "byte_thresh_i",
            dcqcn::BYTE_BITS,
            u64::from(d.byte_thresh),
            "Bytes sent between rate increase events (0: never)",
        ),
        (
            "dcqcn_fast_steps",
            "fast_steps_i",
            dcqcn::STAGE_BITS,
            u64::from(d.fast_steps),
            "F: increase events of fast recovery",
        ),
        (
            "dcqcn_burst",
            "burst_i",
            dcqcn::FRAME_BITS,
            u64::from(d.burst),
            "Pacing credit of a QP below the line rate, bytes",
        ),
    ]
}

/// The counters: (register, doc).
const COUNTERS: [(&str, &str); 3] = [
    ("cnp_tx", "CNPs sent (notification point)"),
    ("cnp_rx", "CNPs received for an enabled QP (reaction point)"),
    (
        "ecn_rx",
        "Frames accepted (QP check passed) with IP ECN 11 (CE)",
    ),
];

/// Adds the congestion-control and RNR registers to the engine's register block.
pub fn registers(b: &mut RegBlock, p: &RoceParams) {
    for (i, (name, doc)) in COUNTERS.iter().enumerate() {
        b.reg(name, BASE + 4 * i as u32, doc)
            .field("value", 0, 32, Access::Ro, 0, doc);
    }
    b.reg(
        "cc_tick",
        BASE + 0x0c,
        "Congestion-control time unit (DCQCN timers, RNR waits)",
    )
    .field(
        "cycles",
        0,
        16,
        Access::Rw,
        u64::from(DEFAULT_CLOCK_MHZ),
        "Clock cycles per tick (1 µs: the clock in MHz); below 2 means 2",
    );
    for (i, (name, _, width, reset, doc)) in params(p).into_iter().enumerate() {
        b.reg(name, BASE + 0x10 + 4 * i as u32, doc).field(
            "value",
            0,
            width,
            Access::Rw,
            reset,
            doc,
        );
    }
    for q in 0..p.qps {
        let base = qp_base(q);
        b.reg(
            &format!("qp{q}_rate"),
            base,
            &format!("QP {q}: DCQCN rates"),
        )
        .field(
            "current",
            0,
            16,
            Access::Ro,
            0,
            "Rc, 1/65536 of the line rate (FFFFh: the line rate, not paced)",
        )
        .field(
            "target",
            16,
            16,
            Access::Ro,
            0,
            "Rt, 1/65536 of the line rate",
        );
        b.reg(
            &format!("qp{q}_alpha"),
            base + 4,
            &format!("QP {q}: DCQCN alpha"),
        )
        .field("value", 0, 10, Access::Ro, 0, "alpha, 1/1024");
        b.reg(&format!("qp{q}_rnr"), base + 8, &format!("QP {q}: RNR retries"))
            .field(
                "limit",
                0,
                3,
                Access::Rw,
                7,
                "RNR NAKs in a row (no progress between them) the QP waits out; one more puts it in error; 7 = no limit",
            )
            .field(
                "waiting",
                8,
                1,
                Access::Ro,
                0,
                "The QP waits out an RNR NAK's timer (it sends no capsule)",
            );
    }
}

/// What the engine sees of the block and feeds into it.
pub struct Cc {
    /// One cycle per tick (1 µs by default).
    pub tick: Sig,
    /// Per QP: it may start a capsule (first transmission or again): DCQCN's pacing allows it
    /// and it is not waiting out an RNR NAK (driven by [`Cc::rnr`]).
    pub go: Vec<Sig>,
    /// Bit q: QP q owes a CNP.
    pub cnp_req: Sig,
    /// Driven by [`Cc::on_receive`] and [`Cc::on_transmit`].
    ecn_valid: Sig,
    ecn_qp: Sig,
    rx_valid: Sig,
    rx_qp: Sig,
    sent_valid: Sig,
    sent_qp: Sig,
    sent_bytes: Sig,
    cnp_done: Sig,
    cnp_load: Sig,
    may_send: Sig,
    /// The RNR timer of the received AETH in ticks, shared by the QPs (built by the first
    /// [`Cc::rnr`]).
    rnr_ticks: Cell<Option<Sig>>,
    csr: Inst,
    qw: u32,
}

/// Instantiates the DCQCN block and the tick timer in the engine `m`, bound to the CSR
/// instance `csr` (from [`registers`]).
pub fn attach(
    m: &mut ModuleBuilder,
    csr: Inst,
    p: &RoceParams,
    reset: ResetStyle,
) -> Result<Cc, Errors> {
    let nq = p.qps;
    let dp = DcqcnParams {
        qps: nq,
        data_width: p.data_width,
    };
    let dq = dcqcn::dcqcn(&dp, reset)?;
    let timer = interval_timer(16, reset)?;
    let qw = clog2(u64::from(nq)).max(1);

    // The tick: the interval timer restarted as it fires, tick_period cycles apart.
    let period = m.bind_out(csr, "cc_tick_cycles_o");
    let limit = m.net(
        "cc_tick_limit",
        mux(period.lt(2u64), lit(16, 0), period - 2u64),
    );
    m.comment(
        limit,
        "the timer runs limit + 1 cycles and fires in the next: a period of cc_tick cycles",
    );
    let u_tick = m.instance("u_cc_tick", &timer);
    let busy = m.bind_out(u_tick, "busy_o");
    let tick = m.bind_out(u_tick, "expired_o");
    let count = m.bind_out(u_tick, "count_o");
    m.unused("cc_tick_count", count);
    m.bind(u_tick, "start_i", !busy);
    m.bind(u_tick, "stop_i", lit(1, 0));
    m.bind(u_tick, "tick_i", lit(1, 1));
    m.bind(u_tick, "limit_i", limit);

    let u = m.instance("u_dcqcn", &dq);
    for (reg, port, _, _, _) in params(p) {
        let v = m.bind_out(csr, &format!("{reg}_value_o"));
        m.bind(u, port, v);
    }
    m.bind(u, "tick_i", tick);
    let has_qp = |port: &str| dq.ports().iter().any(|x| x.name == port && x.width > 0);
    let ecn_valid = m.wire("cc_ecn_valid", 1);
    let ecn_qp = m.wire("cc_ecn_qp", qw);
    let rx_valid = m.wire("cc_cnp_rx_valid", 1);
    let rx_qp = m.wire("cc_cnp_rx_qp", qw);
    let sent_valid = m.wire("cc_sent_valid", 1);
    let sent_qp = m.wire("cc_sent_qp", qw);
    let sent_bytes = m.wire("cc_sent_bytes", dcqcn::FRAME_BITS);
    let cnp_done = m.wire("cc_cnp_done", nq);
    let cnp_load = m.wire("cc_cnp_load", 1);
    m.comment(cnp_load, "a CNP frame is loaded this cycle");
    m.bind(u, "ecn_valid_i", ecn_valid);
    m.bind(u, "cnp_rx_valid_i", rx_valid);
    m.bind(u, "sent_valid_i", sent_valid);
    m.bind(u, "sent_bytes_i", sent_bytes);
    m.bind(u, "cnp_done_i", cnp_done);
    if has_qp("ecn_qp_i") {
        m.bind(u, "ecn_qp_i", ecn_qp);
        m.bind(u, "cnp_rx_qp_i", rx_qp);
        m.bind(u, "sent_qp_i", sent_qp);
    } else {
        // One QP: the indices carry nothing.
        m.unused("cc_qp_single", cat([ecn_qp, rx_qp, sent_qp]));
    }
    let cnp_req = m.bind_out(u, "cnp_req_o");
    let may_send = m.bind_out(u, "may_send_o");
    let rate = m.bind_out(u, "rate_o");
    let target = m.bind_out(u, "target_o");
    let alpha = m.bind_out(u, "alpha_o");
    let np = m.bind_out(u, "np_cnp_count_o");
    m.unused("cc_np_count", np);
    let rp = m.bind_out(u, "rp_cnp_count_o");
    for q in 0..nq {
        let r = dcqcn::RATE_BITS;
        let a = dcqcn::ALPHA_BITS;
        m.bind(
            csr,
            &format!("qp{q}_rate_current_i"),
            rate.slice(r * q + r - 1, r * q),
        );
        m.bind(
            csr,
            &format!("qp{q}_rate_target_i"),
            target.slice(r * q + r - 1, r * q),
        );
        m.bind(
            csr,
            &format!("qp{q}_alpha_value_i"),
            alpha.slice(a * q + a - 1, a * q),
        );
    }
    m.bind(csr, "cnp_rx_value_i", rp);
    for (name, ev) in [("cnp_tx", cnp_load), ("ecn_rx", ecn_valid)] {
        let c = m.reg(&format!("cnt_{name}"), 32, 0);
        m.assign(c.d, c.q + ev.zext(32));
        m.bind(csr, &format!("{name}_value_i"), c.q);
    }
    let go = (0..nq)
        .map(|q| m.wire(&format!("qp{q}_cc_go"), 1))
        .collect();
    Ok(Cc {
        tick,
        may_send,
        go,
        rnr_ticks: Cell::new(None),
        cnp_req,
        ecn_valid,
        ecn_qp,
        rx_valid,
        rx_qp,
        sent_valid,
        sent_qp,
        sent_bytes,
        cnp_done,
        cnp_load,
        csr,
        qw,
    })
}

impl Cc {
    /// Whether the QP `idx` (of `nq`) may start a capsule: [`Cc::go`] selected.
    pub fn go_of(&self, m: &mut ModuleBuilder, name: &str, idx: Sig) -> Sig {
        let mut e = self.go[0].ex();
        for (q, g) in self.go.iter().enumerate().skip(1) {
            e = mux(idx.eq(q as u64), *g, e);
        }
        m.net(name, e)
    }

    /// A received frame at the end of its checks: `pass` (it passed the QP check, for QP
    /// `qp`), `cnp` (its opcode is 81h), `tos` its IPv4 TOS byte.
    pub fn on_receive(&self, m: &mut ModuleBuilder, pass: Sig, cnp: Sig, tos: Expr, qp: Sig) {
        m.assign(self.ecn_valid, pass & tos.slice(1, 0).eq(3u64));
        m.assign(self.ecn_qp, qp.resize(self.qw));
        m.assign(self.rx_valid, pass & cnp);
        m.assign(self.rx_qp, qp.resize(self.qw));
    }

    /// The transmitter: `capsule` (a capsule of QP `cap_qp`, `bytes` long, is loaded: first
    /// transmission or again), `cnp` (a CNP of QP `cnp_qp` is loaded).
    pub fn on_transmit(
        &self,
        m: &mut ModuleBuilder,
        capsule: Expr,
        cap_qp: Sig,
        bytes: Expr,
        cnp: Sig,
        cnp_qp: Sig,
    ) {
        let nq = self.go.len() as u32;
        m.assign(self.sent_valid, capsule);
        m.assign(self.sent_qp, cap_qp.resize(self.qw));
        m.assign(self.sent_bytes, bytes.resize(dcqcn::FRAME_BITS));
        m.assign(
            self.cnp_done,
            mux(cnp, lit(nq, 1).shl_by(cnp_qp), lit(nq, 0)),
        );
        m.assign(self.cnp_load, cnp);
    }

    /// QP `q`'s RNR timer. `rnr_in`: an RNR NAK for one of its unacknowledged capsules arrived
    /// (AETH syndrome `syn`); `progress`: an acknowledgement moved its oldest unacknowledged
    /// PSN; `up`: the QP runs. Returns (`waiting`: the QP sends no capsule, `give_up`: the RNR
    /// retry limit is exhausted, the QP goes to error).
    pub fn rnr(
        &self,
        m: &mut ModuleBuilder,
        q: u32,
        rnr_in: Sig,
        syn: Sig,
        progress: Sig,
        up: Sig,
    ) -> (Sig, Sig) {
        let n = |s: &str| format!("qp{q}_rnr_{s}");
        let limit = m.bind_out(self.csr, &format!("qp{q}_rnr_limit_o"));
        let wait = m.reg(&n("wait"), RNR_BITS, 0);
        m.comment(wait.q, "ticks left of the RNR NAK's timer");
        let tries = m.reg(&n("tries"), 3, 0);
        m.comment(tries.q, "RNR NAKs since the last progress");
        let ticks = match self.rnr_ticks.get() {
            Some(t) => t,
            None => {
                let t = m.wire("rnr_ticks", RNR_BITS);
                m.comment(
                    t,
                    "a received RNR NAK's timer field in ticks (µs), IB table",
                );
                let code = m.net("rnr_timer_code", syn.slice(4, 0));
                m.comb(|c| {
                    c.case(code, |k| {
                        for (i, v) in RNR_TIMER_US.iter().enumerate().skip(1) {
                            k.arm(lit(5, i as u128), |c| c.set(t, u64::from(*v)));
                        }
                        k.default(|c| c.set(t, u64::from(RNR_TIMER_US[0])));
                    });
                });
                self.rnr_ticks.set(Some(t));
                t
            }
        };
        let give_up = m.net(&n("give_up"), rnr_in & limit.ne(7u64) & tries.q.eq(limit));
        let waiting = m.net(&n("waiting"), wait.q.ne(0u64));
        m.bind(self.csr, &format!("qp{q}_rnr_waiting_i"), waiting);
        m.assign(self.go[q as usize], self.may_send.bit(q) & !waiting);
        m.comb(|c| {
            c.set(wait.d, wait.q);
            c.set(tries.d, tries.q);
            c.if_(!up, |c| {
                c.set(wait.d, 0u64);
                c.set(tries.d, 0u64);
            })
            .else_if(rnr_in, |c| {
                // T + 1 ticks: the first may come in the next cycle, so the wait is never
                // shorter than T whole ticks (IBA: the requester waits at least the timer).
                c.set(wait.d, ticks + 1u64);
                c.if_(tries.q.ne(7u64), |c| c.set(tries.d, tries.q + 1u64));
            })
            .else_(|c| {
                c.if_(progress, |c| c.set(tries.d, 0u64));
                c.if_(self.tick & waiting, |c| c.set(wait.d, wait.q - 1u64));
            });
        });
        (waiting, give_up)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dma::DmaParams;

    #[test]
    fn the_engine_builds_with_congestion_control_at_one_to_eight_qps() {
        let dma = DmaParams {
            data_width: 64,
            tag_width: 3,
            len_width: 21,
            max_reads: 4,
            id_width: 4,
        };
        for qps in [1, 3, 8] {
            let p = RoceParams {
                data_width: 64,
                qps,
                outstanding: 2,
                mtu: 256,
                in_capsule_bytes: 0,
            };
            let m = super::super::engine::engine(&p, &dma, ResetStyle::SyncHigh)
                .unwrap_or_else(|e| panic!("{qps} QPs: {e}"));
            assert_eq!(m.name(), format!("roce_w64_q{qps}_d2"));
            let map = super::super::engine::register_map(&p).expect("a valid map");
            let last = qp_base(qps - 1) + 8;
            assert!(map.registers().iter().any(|r| r.offset == last));
        }
    }

    #[test]
    fn the_rnr_table_is_the_ib_one() {
        // IBA vol. 1, RNR NAK timer field: 1 = 0.01 ms, 14 = 1.28 ms, 31 = 491.52 ms, 0 = 655.36 ms.
        assert_eq!(RNR_TIMER_US[1], 10);
        assert_eq!(RNR_TIMER_US[14], 1280);
        assert_eq!(RNR_TIMER_US[31], 491_520);
        assert_eq!(RNR_TIMER_US[0], 655_360);
        assert!(RNR_TIMER_US[1..].windows(2).all(|w| w[0] < w[1]));
        // Loaded plus one (the partial first tick).
        assert!(RNR_TIMER_US.iter().all(|&t| t + 1 < 1 << RNR_BITS));
    }
}
