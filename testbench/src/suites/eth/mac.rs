//! Property `eth_mac_rgmii`: the RGMII MAC between a pin-level PHY and the core's streams, with
//! three unrelated clocks drawn per case (RXC and TXC near 125 MHz, the core from 2 ns up to
//! just under twice RXC's period, the MAC's contract; in about one case in eight 10 to 20 times
//! RXC's period, below it: see the last item).
//!
//! - Transmit: random frames on `s_axis` (random idle between beats) come out on TXD/TX_CTL,
//!   sampled at both edges of TXC, each as 7 x 55h, D5h, the frame padded to 60 bytes and its
//!   FCS from the bitwise reference CRC-32, TX_ER never set, at least 12 idle byte times between
//!   frames (`models::eth::TxMonitor`); TXC follows `clk_tx_i`; `tx_frames_o` counts them.
//! - Receive: the PHY drives RXD/RX_CTL at both edges of RXC (RGMII v2.0: low nibble and RX_DV
//!   before the rising edge, high nibble and RX_DV ^ RX_ER before the falling edge), frames
//!   with random preambles, gaps and idle garbage on RXD, some with faults: bad FCS, RX_ER on
//!   one byte, runts, oversize, no SFD (then nothing was received: neither delivered nor
//!   counted). `m_axis` must carry exactly the frames `models::eth::fate`
//!   delivers, byte for byte, in order, except good frames dropped for lack of room, and only
//!   when `m_tready` was held low; each drop counter must equal the golden count exactly, and
//!   `rx_err_overflow_o` the number of good frames missing.
//! - A core clock below the contract's (`Case::slow_core`, `m_tready` always high): the clock
//!   crossing refuses entries, and the contract only says such frames are marked overflow (with
//!   the frames merged into them). Checked: the delivered frames are good frames in order, byte
//!   for byte, `rx_frames_o` counts them, and when good frames are missing `rx_err_overflow_o`
//!   is at least 1 and at most the frames that did not arrive whole. The case ends with a
//!   short good frame after a long gap, so a frame merged into the next is counted.

use crate::models::eth::{ddr_pins, fate, from_pins, wire_bytes, Fate, Symbol, TxMonitor};
use crate::prop::Property;
use crate::rng::Rng;
use crate::rtl::EthMacRgmiiTop as Dut;
use crate::sim::{MultiSim, Signal};
use proptest::prelude::*;
use std::collections::VecDeque;
use std::path::Path;

const FALL: usize = 0; // virtual clock: its rising edge is RXC's falling edge
const RXC: usize = 1;
const TXC: usize = 2;
const CORE: usize = 3;

/// A fault injected into a received frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// None: the frame is good (if its length is).
    None,
    /// One FCS byte flipped.
    BadFcs,
    /// RX_ER asserted on the byte at this index (modulo the length).
    RxEr(usize),
    /// This byte (never 55h or D5h) where the SFD should be: no frame was received at all
    /// (802.3 4.2.9: a receiver looks for the SFD), so it is neither delivered nor counted.
    NoSfd(u8),
}

/// A frame the PHY sends.
#[derive(Clone, Debug)]
pub struct RxFrame {
    payload: Vec<u8>,
    fault: Fault,
    /// 55h bytes before the SFD.
    preamble: usize,
    /// Idle byte times after the frame.
    gap: usize,
}

/// One case.
#[derive(Clone, Debug)]
pub struct Case {
    rx_ps: u64,
    tx_ps: u64,
    core_ps: u64,
    firsts: [u64; 3],
    tx: Vec<Vec<u8>>,
    tx_idle_pct: u8,
    rx: Vec<RxFrame>,
    /// `m_tready` held low for this long from the start (up to 60 us: the RX buffer's 2 KiB
    /// fill in about 16 us), then high with this chance.
    stall_ps: u64,
    ready_pct: u8,
    /// The core clock 10 to 20 times RXC's period, below the contract's minimum (half RXC).
    slow_core: bool,
    seed: u64,
}

fn payload() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        5 => prop::collection::vec(any::<u8>(), 60..300),
        2 => prop::collection::vec(any::<u8>(), 300..900),
        2 => prop::collection::vec(any::<u8>(), 0..60),
        1 => prop::collection::vec(any::<u8>(), 1500..1560),
        1 => prop::collection::vec(any::<u8>(), 1514..=1515),
        1 => prop::collection::vec(any::<u8>(), 59..=61),
    ]
}

fn tx_payload() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => prop::collection::vec(any::<u8>(), 1..200),
        1 => prop::collection::vec(any::<u8>(), 200..1515),
    ]
}

fn rx_frame() -> impl Strategy<Value = RxFrame> {
    let fault = prop_oneof![
        6 => Just(Fault::None),
        1 => Just(Fault::BadFcs),
        1 => any::<usize>().prop_map(Fault::RxEr),
        1 => any::<u8>().prop_map(|b| Fault::NoSfd(if b == 0x55 || b == 0xd5 { 0x54 } else { b })),
    ];
    (
        payload(),
        fault,
        0usize..=7,
        prop_oneof![Just(12usize), 1usize..40],
    )
        .prop_map(|(payload, fault, preamble, gap)| RxFrame {
            payload,
            fault,
            preamble,
            gap,
        })
}

/// See the module documentation.
pub struct EthMacRgmiiProp;

impl Property for EthMacRgmiiProp {
    type Input = Case;
    const NAME: &'static str = "eth_mac_rgmii";

    fn strategy() -> BoxedStrategy<Case> {
        (
            (3_600u64..=4_400, 3_600u64..=4_400, 1_000u64..=7_800),
            (0u64..8_000, 0u64..8_000, 0u64..8_000),
            prop::collection::vec(tx_payload(), 0..6),
            prop_oneof![Just(0u8), 0u8..=80],
            prop::collection::vec(rx_frame(), 0..20),
            prop_oneof![Just(0u64), 0u64..60_000_000],
            prop_oneof![Just(100u8), 5u8..=100],
            (any::<u64>(), prop::option::weighted(0.12, 10u64..=20)),
        )
            .prop_map(
                |(
                    (rx_half, tx_half, core_half),
                    (a, b, c),
                    tx,
                    tx_idle_pct,
                    rx,
                    stall_ps,
                    ready_pct,
                    (seed, slow),
                )| {
                    let rx_ps = 2 * rx_half;
                    let mut rx = rx;
                    if slow.is_some() {
                        // A frame refused at its end merges into the next one, which then
                        // carries the overflow mark: a last good frame after the crossing has
                        // drained (a gap of 4000 byte times: about 200 core cycles at the
                        // slowest core) settles the count.
                        if let Some(last) = rx.last_mut() {
                            last.gap = last.gap.max(4000);
                        }
                        rx.push(RxFrame {
                            payload: (0..60u8).map(|i| i ^ seed as u8).collect(),
                            fault: Fault::None,
                            preamble: 7,
                            gap: 12,
                        });
                    }
                    Case {
                        rx_ps,
                        tx_ps: 2 * tx_half,
                        // The contract: the core clock at least half RXC (unless slow).
                        core_ps: match slow {
                            Some(k) => rx_ps * k + core_half,
                            None => (2 * core_half).min(rx_ps * 19 / 10),
                        },
                        firsts: [a, b, c],
                        tx,
                        tx_idle_pct,
                        rx,
                        // With a slow core every loss is the clock crossing's.
                        stall_ps: if slow.is_some() { 0 } else { stall_ps },
                        ready_pct: if slow.is_some() { 100 } else { ready_pct },
                        slow_core: slow.is_some(),
                        seed,
                    }
                },
            )
            .boxed()
    }

    fn run(case: &Case, waves: Option<&Path>) -> Result<(), String> {
        run(case, waves)
    }
}

fn port(sim: &MultiSim<Dut>, names: &[&str]) -> (Signal, bool) {
    for n in names {
        if Dut::PORTS.iter().any(|p| p.0 == *n) {
            return (sim.signal(n), n.ends_with("ni"));
        }
    }
    panic!("{} has none of the ports {names:?}", Dut::NAME)
}

/// The symbols the PHY sends for `rx`, and each frame's golden fate.
fn rx_symbols(rx: &[RxFrame], rng: &mut Rng) -> (VecDeque<Symbol>, Vec<Fate>) {
    let mut q = VecDeque::new();
    let mut fates = Vec::new();
    let idle = |q: &mut VecDeque<Symbol>, rng: &mut Rng, n: usize| {
        for _ in 0..n {
            // Idle: RX_DV low; RXD carries anything.
            q.push_back(Symbol {
                byte: rng.below(256) as u8,
                en: false,
                er: false,
            });
        }
    };
    idle(&mut q, rng, 4);
    for f in rx {
        let mut bytes = f.payload.clone();
        bytes.extend(crate::models::eth::fcs(&f.payload).to_le_bytes());
        if f.fault == Fault::BadFcs {
            let n = bytes.len();
            bytes[n - 1 - rng.below(4) as usize] ^= 1 << rng.below(8);
        }
        let er_at = match f.fault {
            Fault::RxEr(i) => Some(i % bytes.len()),
            _ => None,
        };
        for _ in 0..f.preamble {
            q.push_back(Symbol {
                byte: 0x55,
                en: true,
                er: false,
            });
        }
        let sfd = match f.fault {
            Fault::NoSfd(b) => b,
            _ => 0xd5,
        };
        q.push_back(Symbol {
            byte: sfd,
            en: true,
            er: false,
        });
        for (i, &b) in bytes.iter().enumerate() {
            q.push_back(Symbol {
                byte: b,
                en: true,
                er: er_at == Some(i),
            });
        }
        if sfd == 0xd5 {
            fates.push(fate(&bytes, er_at.is_some()));
        }
        idle(&mut q, rng, f.gap.max(1));
    }
    (q, fates)
}

fn run(case: &Case, waves: Option<&Path>) -> Result<(), String> {
    let mut sim = MultiSim::<Dut>::new(
        &[
            ("", case.rx_ps, case.firsts[0] + case.rx_ps / 2),
            ("clk_rx_i", case.rx_ps, case.firsts[0]),
            ("clk_tx_i", case.tx_ps, case.firsts[1]),
            ("clk_i", case.core_ps, case.firsts[2]),
        ],
        waves,
    );
    let mut rng = Rng::new(case.seed);
    let (rst, low) = port(&sim, &["rst_ni", "rst_i"]);
    let (rst_tx, _) = port(&sim, &["rst_tx_ni", "rst_tx_i"]);
    let (rst_rx, _) = port(&sim, &["rst_rx_ni", "rst_rx_i"]);
    let (asserted, released) = if low { (0, 1) } else { (1, 0) };
    let sig = |n: &str| sim.signal(n);
    let (s_data, s_keep, s_last, s_valid, s_ready) = (
        sig("s_axis_tdata_i"),
        sig("s_axis_tkeep_i"),
        sig("s_axis_tlast_i"),
        sig("s_axis_tvalid_i"),
        sig("s_axis_tready_o"),
    );
    let (m_data, m_keep, m_last, m_valid, m_ready) = (
        sig("m_axis_tdata_o"),
        sig("m_axis_tkeep_o"),
        sig("m_axis_tlast_o"),
        sig("m_axis_tvalid_o"),
        sig("m_axis_tready_i"),
    );
    let (txc, txd, tx_ctl, rxd, rx_ctl) = (
        sig("rgmii_txc_o"),
        sig("rgmii_txd_o"),
        sig("rgmii_tx_ctl_o"),
        sig("rgmii_rxd_i"),
        sig("rgmii_rx_ctl_i"),
    );
    let counter = |n: &str| sim.signal(&format!("{n}_o"));
    let counters = [
        "tx_frames",
        "rx_frames",
        "rx_err_ctl",
        "rx_err_oversize",
        "rx_err_runt",
        "rx_err_fcs",
        "rx_err_overflow",
    ]
    .map(|n| (n, counter(n)));

    for level in [released, asserted] {
        for r in [&rst, &rst_tx, &rst_rx] {
            r.set(level);
        }
        sim.settle();
    }
    while sim.edges(RXC) < 3 || sim.edges(TXC) < 3 || sim.edges(CORE) < 3 {
        sim.next_edge();
        sim.rise();
    }
    for r in [&rst, &rst_tx, &rst_rx] {
        r.set(released);
    }

    let (mut symbols, fates) = rx_symbols(&case.rx, &mut rng);
    let good: Vec<Vec<u8>> = fates
        .iter()
        .filter_map(|f| match f {
            Fate::Deliver(p) => Some(p.clone()),
            _ => None,
        })
        .collect();
    let count = |pred: fn(&Fate) -> bool| fates.iter().filter(|f| pred(f)).count() as u64;
    let want_ctl = count(|f| *f == Fate::CtlError);
    let want_oversize = count(|f| *f == Fate::Oversize);
    let want_runt = count(|f| *f == Fate::Runt);
    let want_fcs = count(|f| *f == Fate::BadFcs);

    // Transmit beats, packed from lane 0.
    let mut beats: VecDeque<(u64, u64, bool)> = VecDeque::new();
    for p in &case.tx {
        let chunks: Vec<&[u8]> = p.chunks(8).collect();
        for (i, c) in chunks.iter().enumerate() {
            let mut d = 0u64;
            for (k, &b) in c.iter().enumerate() {
                d |= u64::from(b) << (8 * k);
            }
            beats.push_back((d, (1u64 << c.len()) - 1, i + 1 == chunks.len()));
        }
    }
    let mut mon = TxMonitor::default();
    let mut tx_lo: Option<(u8, bool)> = None;
    let mut cur_rx = Symbol::default();
    let mut rx_out: Vec<Vec<u8>> = Vec::new();
    let mut rx_cur: Vec<u8> = Vec::new();
    let mut offered = false;
    let mut stalled = false; // m_tready was ever low with m_tvalid high
    let start = sim.time();
    let mut idle_since: Option<u64> = None;
    let rx_bytes: usize = case.rx.iter().map(|f| f.payload.len() + 20 + f.gap).sum();
    let tx_bytes: usize = case.tx.iter().map(|p| p.len().max(60) + 24).sum();
    let limit_ps = 4 * case.stall_ps
        + (rx_bytes + tx_bytes + 2000) as u64 * 4 * case.rx_ps.max(case.tx_ps).max(case.core_ps);
    loop {
        let done_in = symbols.is_empty() && beats.is_empty() && !offered;
        if done_in {
            let t0 = *idle_since.get_or_insert(sim.time());
            // Drained: everything sent out, every received frame accounted for.
            let rx_accounted: u64 = counters[1..].iter().map(|(_, s)| s.get()).sum();
            // A slow core merges frames whose end the crossing refused: fewer counted.
            if mon.frames.len() == case.tx.len()
                && (rx_accounted == fates.len() as u64 || case.slow_core)
                && !m_valid.is_high()
                && sim.time() - t0 > 200 * case.core_ps.max(case.rx_ps)
            {
                break;
            }
        }
        if sim.time() - start > limit_ps {
            return Err(format!(
                "hang after {} ps: {} of {} frames transmitted, {} received frames accounted for of {}, {} symbols and {} beats left",
                sim.time() - start,
                mon.frames.len(),
                case.tx.len(),
                counters[1..].iter().map(|(_, s)| s.get()).sum::<u64>(),
                fates.len(),
                symbols.len(),
                beats.len()
            ));
        }
        let k = sim.next_edge();
        match k {
            FALL => {
                let [_, hi] = ddr_pins(cur_rx);
                rxd.set(u64::from(hi.0));
                rx_ctl.set(hi.1 as u64);
                sim.settle();
                sim.rise();
            }
            RXC => {
                cur_rx = symbols.pop_front().unwrap_or(Symbol {
                    byte: rng.below(256) as u8,
                    en: false,
                    er: false,
                });
                let [lo, _] = ddr_pins(cur_rx);
                rxd.set(u64::from(lo.0));
                rx_ctl.set(lo.1 as u64);
                sim.settle();
                sim.rise();
            }
            TXC => {
                // TXC low: the high nibble of the byte whose low nibble showed while it was high.
                if txc.is_high() {
                    return Err("rgmii_txc_o is high while clk_tx_i is low".into());
                }
                let hi = (txd.get() as u8, tx_ctl.is_high());
                if let Some(lo) = tx_lo.take() {
                    mon.symbol(from_pins(lo, hi));
                    if mon.frames.len() > case.tx.len() {
                        return Err(format!(
                            "{} frames transmitted, {} given",
                            mon.frames.len(),
                            case.tx.len()
                        ));
                    }
                }
                sim.rise();
                if !txc.is_high() {
                    return Err("rgmii_txc_o is low while clk_tx_i is high".into());
                }
                tx_lo = Some((txd.get() as u8, tx_ctl.is_high()));
            }
            _ => {
                // Core clock: transfers at this edge.
                if offered && s_ready.is_high() {
                    beats.pop_front();
                    offered = false;
                }
                if m_valid.is_high() && m_ready.is_high() {
                    let d = m_data.get();
                    let keep = m_keep.get();
                    let last = m_last.is_high();
                    let n = keep.trailing_ones() as usize;
                    if keep != (1 << n) - 1 || n == 0 || (!last && n != 8) {
                        return Err(format!(
                            "m_axis beat with tkeep {keep:#04x} (last {last}): beats are packed from lane 0, full but the last"
                        ));
                    }
                    rx_cur.extend(&d.to_le_bytes()[..n]);
                    if last {
                        rx_out.push(std::mem::take(&mut rx_cur));
                    }
                }
                if m_valid.is_high() && !m_ready.is_high() {
                    stalled = true;
                }
                sim.rise();
                if !offered {
                    if let Some(&(d, keep, last)) = beats.front() {
                        if !rng.chance(case.tx_idle_pct) {
                            offered = true;
                            s_data.set(d);
                            s_keep.set(keep);
                            s_last.set(last as u64);
                        }
                    }
                }
                s_valid.set(offered as u64);
                let t = sim.time() - start;
                let ready = if symbols.is_empty() && beats.is_empty() {
                    true
                } else if t < case.stall_ps {
                    false
                } else {
                    rng.chance(case.ready_pct)
                };
                m_ready.set(ready as u64);
            }
        }
    }

    // Transmit: every frame as 802.3 says, in order.
    for (k, p) in case.tx.iter().enumerate() {
        mon.check(k, p)?;
    }
    // Receive: delivered frames are the good ones in order, some missing only under stall.
    let mut gi = 0;
    for (k, f) in rx_out.iter().enumerate() {
        loop {
            if gi == good.len() {
                return Err(format!(
                    "received frame {k} on m_axis ({} bytes) is none of the good frames left in order (of {} good, {} delivered before)",
                    f.len(),
                    good.len(),
                    k
                ));
            }
            gi += 1;
            if good[gi - 1] == *f {
                break;
            }
        }
    }
    let missing = (good.len() - rx_out.len()) as u64;
    if case.slow_core {
        let frames = counters[1].1.get();
        let overflow = counters[6].1.get();
        // Frames that did not arrive whole: the good ones missing and every faulty one.
        let not_whole = missing + (fates.len() - good.len()) as u64;
        if frames != rx_out.len() as u64 || (missing > 0 && overflow == 0) || overflow > not_whole {
            return Err(format!(
                "core clock below the contract ({} ps, RXC {} ps): {} of {} good frames delivered, rx_frames_o {frames}, rx_err_overflow_o {overflow} (want at least 1 when good frames are missing, at most {not_whole}); counters {:?}",
                case.core_ps,
                case.rx_ps,
                rx_out.len(),
                good.len(),
                counters.iter().map(|(n, s)| (*n, s.get())).collect::<Vec<_>>()
            ));
        }
        return Ok(());
    }
    if missing > 0 && !stalled {
        return Err(format!(
            "{missing} good frames were not delivered although m_tready never held a frame back"
        ));
    }
    let want = [
        case.tx.len() as u64,
        rx_out.len() as u64,
        want_ctl,
        want_oversize,
        want_runt,
        want_fcs,
        missing,
    ];
    for ((name, s), w) in counters.iter().zip(want) {
        let got = s.get();
        if got != w {
            return Err(format!(
                "counter {name}_o is {got}, expected {w} (frames received: {fates:?})",
                fates = fates
                    .iter()
                    .map(|f| match f {
                        Fate::Deliver(p) => format!("good {}", p.len()),
                        other => format!("{other:?}"),
                    })
                    .collect::<Vec<_>>()
            ));
        }
    }
    let _ = wire_bytes;
    Ok(())
}
