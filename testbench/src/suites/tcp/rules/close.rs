//! The ends of property `tcp_rules` that close with FIN (RFC 9293 3.10.4 CLOSE, 3.10.7.4 the
//! segment arrives, 3.6 closing a connection), every byte both ways delivered and ACKed first:
//!
//! - The peer closes first: its FIN (with data or without, and a new window) must be ACKed at
//!   once and put the connection in CLOSE-WAIT, where it still sends: the application's bytes
//!   go (as they come; after a duplicate ACK of the first flight, `dup_acks`; after an idle
//!   RTO, the first flight within RFC 5681 4.1's restart window; or behind a window the peer
//!   closed, one byte once the persist timer runs out, RFC 9293 3.8.6.1), and the peer's ACKs
//!   (from a sequence number past SND.WL1) carry another window, which SND.WND must take (RFC
//!   9293 3.10.7.4: SND.WL1 < SEG.SEQ). The firmware's `close` then
//!   sends the FIN at SND.NXT (LAST-ACK); the peer's ACK of it ends the connection (CLOSED, not
//!   failed), or a RST at RCV.NXT does (RFC 5961 3.2; CLOSED, not failed), or the firmware's
//!   abort (one RST at SND.NXT, RFC 9293 3.10.5).
//! - Both close at once (RFC 9293 3.6, figure 13): the firmware's `close` sends the FIN
//!   (FIN-WAIT-1); the peer's FIN, sent before ours reached it, does not acknowledge ours:
//!   CLOSING, its FIN ACKed at once from SND.NXT past our FIN. The peer's ACK of our FIN then
//!   puts the connection in TIME-WAIT (or a RST at RCV.NXT ends it there), which lasts the
//!   `time_wait` CSR's ticks (the 2 MSL of the contract) from its start or from the peer's last
//!   FIN in it (RFC 9293 3.10.7.4 TIME-WAIT: a retransmitted FIN is ACKed and restarts the
//!   timeout), the engine sending nothing unasked; or it ends at a RST at RCV.NXT, or at the
//!   firmware's abort, which sends nothing there (3.10.5: TIME-WAIT deletes the TCB).
//!
//! In some cases the peer ignores the engine's first FIN, which must then come again after
//! the RTO (the `rto` field of its `rtt` CSR) and not before (`rto_fires`, `retrans`). In each
//! state after the peer's FIN (CLOSE-WAIT and LAST-ACK; CLOSING and TIME-WAIT) the peer also
//! sends drawn segments, each answered as RFC 9293 3.10.7.4 says: its FIN again, a SYN (RFC
//! 5961 4.2: a challenge ACK), a RST inside the window but not at RCV.NXT (5961 3.2: a
//! challenge ACK), old data (unacceptable: an ACK): each by exactly one pure ACK
//! `<SEQ=SND.NXT><ACK=RCV.NXT>` at once, then nothing; a RST outside the window by nothing
//! (`rst_dropped`). The state CSR is read at every step (state, `failed`, `reason`), with the
//! `up_o` and `failed_o` ports. Once CLOSED, the peer's FIN again must be answered as a segment
//! to no connection (RFC 9293 3.10.7.1: `<SEQ=SEG.ACK><CTL=RST>`, `rst_closed`).

use super::{peer, tcp_frame, Script, AT_ONCE, QUIET, TICK};
use crate::models::tcp::{Cwnd, PeerSeg};
use crate::rng::Rng;
use crate::rtl::regs::tcp_csr;
use crate::suites::tcp::creg;
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;

/// The state CSR's values (`state` field).
const CLOSED: u32 = 0;
const FIN_WAIT_1: u32 = 5;
const CLOSING: u32 = 7;
const TIME_WAIT: u32 = 8;
const CLOSE_WAIT: u32 = 9;
const LAST_ACK: u32 = 10;
/// The state CSR's `failed` bit.
const FAILED: u32 = 0x10;
/// Cycles the sink's stalls may hold one short frame longer than another.
const STALLS: u64 = 100;

/// The draws of a close.
#[derive(Clone, Debug)]
pub struct Close {
    /// Bytes the peer's FIN carries: none when `% 3 == 0`, else `1 + x % 600`.
    pub fin_data: u16,
    /// Bytes the engine's application sends in CLOSE-WAIT (the peer first): none when
    /// `% 4 == 0` (the peer sends a window update instead), else `1 + x % 3000` (`cw_way` 2:
    /// IW + 1 + `x % 3000`; 3: `2 + x % 3000`).
    pub cw_bytes: u16,
    /// How they go (`% 4`): 0 as they come, 1 with a duplicate ACK after the first flight, 2
    /// after an idle RTO, 3 behind a window the peer closed.
    pub cw_way: u8,
    /// The peer's windows (`1 + x % 14` times 4096 bytes, a multiple of any shift): in its FIN
    /// and in the ACKs that follow it (drawn apart).
    pub wnd: (u8, u8),
    /// The peer ignores the engine's first FIN: it must come again after the RTO.
    pub lose_fin: bool,
    /// Segments the peer sends (`(state, kind, x)`): `state % 2` 0 in CLOSE-WAIT (the peer
    /// first) or CLOSING (both at once), 1 in LAST-ACK or TIME-WAIT; `kind % 6` 0 its FIN again,
    /// 1 a SYN, 2 a RST inside the window (not at RCV.NXT), 3 a RST outside it, 4 old data, 5 an
    /// ACK of more than was sent.
    pub pokes: Vec<(u8, u8, u16)>,
    /// How LAST-ACK or CLOSING ends (`% 3`): 0 the peer's ACK of our FIN, 1 a RST at RCV.NXT,
    /// 2 (LAST-ACK) the firmware's abort, (CLOSING) the peer's ACK.
    pub how: u8,
    /// How TIME-WAIT ends (`% 4`): 0 its timer, 1 its timer after the peer's FIN again late in
    /// it, 2 a RST at RCV.NXT, 3 the firmware's abort.
    pub tw_end: u8,
    /// TIME-WAIT, ticks: `600 + x`.
    pub tw: u8,
}

pub fn strategy() -> BoxedStrategy<Close> {
    (
        (
            any::<u16>(),
            any::<u16>(),
            any::<u8>(),
            any::<(u8, u8)>(),
            any::<bool>(),
        ),
        prop::collection::vec((any::<u8>(), any::<u8>(), any::<u16>()), 0..7),
        (any::<u8>(), any::<u8>(), any::<u8>()),
    )
        .prop_map(
            |((fin_data, cw_bytes, cw_way, wnd, lose_fin), pokes, (how, tw_end, tw))| Close {
                fin_data,
                cw_bytes,
                cw_way,
                wnd,
                lose_fin,
                pokes,
                how,
                tw_end,
                tw,
            },
        )
        .boxed()
}

/// What a close adds to the counters the test checks at its end.
#[derive(Default, Debug)]
pub struct Tally {
    pub challenges: u32,
    pub dup_acks: u32,
    pub rst_dropped: u32,
    pub rst_in: u32,
    pub rst_out: u32,
    pub rto_fires: u32,
    pub retrans: u32,
    pub closed_rsts: u32,
}

/// The connection as the close starts: everything both ways ACKed and delivered.
pub struct At {
    pub c: usize,
    /// SND.NXT (= SND.UNA = SND.MAX) and RCV.NXT.
    pub snd: u32,
    pub rcv: u32,
    /// The peer's window field so far and its window shift; the receive buffer, bytes; SMSS.
    pub wfield: u16,
    pub pws: u8,
    pub rxb: u32,
    pub smss: u32,
    /// The peer's last bytes before RCV.NXT (for an old segment).
    pub tail: Vec<u8>,
}

/// The peer's FIN and what the connection has received with it.
struct PeerFin {
    /// The frame (sent again as is: a retransmission).
    frame: Vec<u8>,
    /// RCV.NXT past it (its FIN counted), and the peer's bytes before that (its data included).
    rcv: u32,
    tail: Vec<u8>,
    /// Bytes of data the FIN segment carried (the end of `tail`).
    data: usize,
}

/// Connection `c`'s state CSR (state, `failed`, `reason`) must read `want`, and `up_o` (up in
/// ESTABLISHED and CLOSE-WAIT) and `failed_o` agree with it.
fn expect_state(s: &mut Script, c: usize, want: u32, what: &str) -> Result<(), String> {
    let v = s.env.read(creg(c, 12)) & 0x31f;
    let up = (s.env.sim.signal("up_o").get() >> c) & 1;
    let failed = (s.env.sim.signal("failed_o").get() >> c) & 1;
    let want_up = u64::from(matches!(want & 0xf, 4 | CLOSE_WAIT));
    if v != want || up != want_up || failed != u64::from(want & FAILED != 0) {
        let regs: Vec<u32> = [16, 20, 24]
            .iter()
            .map(|&o| s.env.read(creg(c, o)))
            .collect();
        return Err(format!(
            "{what}: the state CSR reads {v:#x} (state, failed, reason), up_o {up}, failed_o \
             {failed}; want {want:#x} (0 CLOSED, 5 FIN-WAIT-1, 7 CLOSING, 8 TIME-WAIT, 9 \
             CLOSE-WAIT, 10 LAST-ACK; 0x10 failed), up_o {want_up} (SND.UNA, SND.NXT, RCV.NXT \
             {regs:x?}, cycle {})",
            s.env.sim.cycle()
        ));
    }
    Ok(())
}

/// Sends `f` and steps until the engine has taken its last beat; returns that cycle.
fn send_taken(s: &mut Script, f: Vec<u8>) -> Result<u64, String> {
    let n = s.env.src.borrow().sent.len();
    s.send(f);
    let end = s.env.sim.cycle() + 5000;
    while s.env.src.borrow().sent.len() == n {
        if s.env.sim.cycle() > end {
            return Err("the engine took no frame for 5000 cycles".into());
        }
        s.step()?;
    }
    Ok(s.last_in())
}

/// `QUIET` cycles in which the engine must send nothing (`what` names why).
fn quiet(s: &mut Script, cycles: u64, what: &str) -> Result<(), String> {
    let end = s.env.sim.cycle() + cycles;
    while s.env.sim.cycle() < end {
        s.step()?;
        if let Some(x) = s.pop() {
            return Err(format!("{what}: then the engine sent {x:?}, want nothing"));
        }
    }
    Ok(())
}

/// The engine's answer to the segment just sent: exactly one pure ACK `<SEQ=snd><ACK=rcv>`,
/// at once, then nothing.
fn expect_ack(s: &mut Script, snd: u32, rcv: u32, what: &str) -> Result<(), String> {
    let (at, r) = s.next_seg_at(AT_ONCE + QUIET, what)?;
    let took = at - s.last_in();
    if r.flags != 0x10 || !r.data.is_empty() || r.seq != snd || r.ack != rcv || took > AT_ONCE {
        return Err(format!(
            "{what}: the engine answered {r:?} {took} cycles after its last beat; want a pure \
             ACK <SEQ={snd:#x}><ACK={rcv:#x}> (SND.NXT, RCV.NXT) within {AT_ONCE} cycles (RFC \
             9293 3.10.7.4)"
        ));
    }
    quiet(s, QUIET, what)
}

/// The engine's FIN after the firmware's `close`: at SND.NXT `snd`, acknowledging `rcv`, no
/// data, at once. Returns the cycle it arrived and the connection's RTO then, ticks.
fn expect_fin(s: &mut Script, c: usize, snd: u32, rcv: u32) -> Result<(u64, u64), String> {
    s.env.view.conns[c].closing = true;
    s.env.write(creg(c, 8), 2);
    let (at, f) = s.next_seg_at(AT_ONCE, "the engine's FIN after the firmware's close")?;
    if f.flags != 0x11 || f.seq != snd || f.ack != rcv || !f.data.is_empty() {
        return Err(format!(
            "the firmware's close, every byte sent and ACKed: the engine sent {f:?}, want its \
             FIN <SEQ={snd:#x}><ACK={rcv:#x}><CTL=FIN,ACK> without data (RFC 9293 3.10.4)"
        ));
    }
    Ok((at, u64::from(s.env.read(creg(c, 28)) >> 16)))
}

/// The peer ignored the engine's FIN (sent at cycle `at` with the RTO `rto` ticks): it must
/// come again once the RTO expires, not before, and nothing else meanwhile.
fn fin_again(
    s: &mut Script,
    (fin, rcv): (u32, u32),
    (at, rto): (u64, u64),
    t: &mut Tally,
) -> Result<(), String> {
    let limit = (at + (rto + 2) * TICK + AT_ONCE).saturating_sub(s.env.sim.cycle());
    let (again, f) = s.next_seg_at(limit, "the engine's FIN again after its RTO (not ACKed)")?;
    let after = again - at;
    if f.flags != 0x11 || f.seq != fin || f.ack != rcv || !f.data.is_empty() {
        return Err(format!(
            "the engine's FIN not ACKed: next it sent {f:?} {after} cycles later, want the FIN \
             again <SEQ={fin:#x}><ACK={rcv:#x}> after its RTO of {rto} ticks"
        ));
    }
    // From arrival to arrival: the timer runs from the FIN's choice, and the sink's stalls may
    // hold one frame longer than the other.
    if after + TICK + STALLS < rto * TICK {
        return Err(format!(
            "the engine's FIN not ACKed came again {after} cycles later, before its RTO of \
             {rto} ticks of {TICK} cycles (RFC 6298)"
        ));
    }
    t.rto_fires += 1;
    t.retrans += 1;
    Ok(())
}

/// One of the peer's drawn segments in a state after its FIN (`kind`, `x`: see
/// [`Close::pokes`]), answered as RFC 9293 3.10.7.4 says. `snd` is SND.NXT, `pack` the ACK
/// the peer sends now. Returns whether it was the peer's FIN again (which restarts TIME-WAIT).
#[allow(clippy::too_many_arguments)]
fn poke(
    s: &mut Script,
    k: &At,
    fin: &PeerFin,
    (snd, pack): (u32, u32),
    (kind, x): (u8, u16),
    t: &mut Tally,
    state: &str,
) -> Result<bool, String> {
    let (c, rcv) = (k.c, fin.rcv);
    let x32 = u32::from(x);
    let (f, what, answered) = match kind % 6 {
        0 => (fin.frame.clone(), "its FIN again".to_string(), true),
        1 => {
            let seq = rcv.wrapping_add(x32).wrapping_sub(32768);
            t.challenges += 1;
            (
                tcp_frame(peer(c), seq, pack, 0x02, k.wfield, &[], &[]),
                format!("a SYN at RCV.NXT + {} (RFC 5961 4.2)", x32 as i32 - 32768),
                true,
            )
        }
        2 => {
            let off = 1 + x32 % (k.rxb - 1);
            t.challenges += 1;
            let flags = if x & 1 == 0 { 0x04 } else { 0x14 };
            (
                tcp_frame(
                    peer(c),
                    rcv.wrapping_add(off),
                    pack,
                    flags,
                    k.wfield,
                    &[],
                    &[],
                ),
                format!("a RST at RCV.NXT + {off}, inside the window (RFC 5961 3.2)"),
                true,
            )
        }
        3 => {
            let off = if x & 1 == 0 {
                k.rxb + x32 % 1000
            } else {
                0u32.wrapping_sub(1 + x32 % 1000)
            };
            t.rst_dropped += 1;
            (
                tcp_frame(
                    peer(c),
                    rcv.wrapping_add(off),
                    pack,
                    0x04,
                    k.wfield,
                    &[],
                    &[],
                ),
                format!(
                    "a RST at RCV.NXT + {}, outside the window (RFC 5961 3.2: dropped)",
                    off as i32
                ),
                false,
            )
        }
        5 => {
            let ack = snd.wrapping_add(1 + x32 % 30000);
            t.challenges += 1;
            (
                tcp_frame(peer(c), rcv, ack, 0x10, k.wfield, &[], &[]),
                format!(
                    "an ACK of SND.NXT + {}, more than was sent (RFC 5961 5.2)",
                    ack.wrapping_sub(snd)
                ),
                true,
            )
        }
        _ => {
            // Half the time old bytes of the FIN segment itself: sequence numbers past SND.WL1
            // (the FIN's), so an engine that looked at an old segment's ACK field would take
            // its window.
            let n = if x & 0x100 != 0 && fin.data > 1 {
                1 + x as usize % (fin.data - 1)
            } else {
                1 + x as usize % fin.tail.len()
            };
            let end = rcv.wrapping_sub(1);
            let seq = end.wrapping_sub(n as u32);
            (
                tcp_frame(
                    peer(c),
                    seq,
                    pack,
                    0x18,
                    k.wfield,
                    &[],
                    &fin.tail[fin.tail.len() - n..],
                ),
                format!("{n} old bytes, before its FIN"),
                true,
            )
        }
    };
    let what = format!("in {state}, the peer's segment: {what}");
    let wnd = s.env.read(creg(c, 36));
    s.send(f);
    if answered {
        expect_ack(s, snd, rcv, &what)?;
    } else {
        quiet(s, 2 * QUIET, &what)?;
    }
    // None of these segments may move the peer's window: each is dropped before its ACK
    // field is looked at (RFC 9293 3.10.7.4: an old or unacceptable segment, a SYN, a RST not
    // at RCV.NXT, an ACK outside the acceptable range; the FIN again is old).
    let now = s.env.read(creg(c, 36));
    if now != wnd {
        return Err(format!(
            "{what}: SND.WND went from {wnd:#x} to {now:#x} (the segment's ACK field must not \
             be looked at: RFC 9293 3.10.7.4)"
        ));
    }
    Ok(kind % 6 == 0)
}

/// The peer's FIN at `k.rcv` acknowledging `ack`, with drawn data and window field `wfield`;
/// sent, ACKed (SND.NXT `snd`) at once, its data delivered.
fn peer_fin(
    s: &mut Script,
    k: &At,
    cl: &Close,
    rng: &mut Rng,
    (snd, ack, wfield): (u32, u32, u16),
    state: &str,
) -> Result<PeerFin, String> {
    let c = k.c;
    let d = if cl.fin_data.is_multiple_of(3) {
        0
    } else {
        1 + usize::from(cl.fin_data) % 600
    };
    let data: Vec<u8> = (0..d).map(|_| rng.next_u64() as u8).collect();
    let flags = if d > 0 { 0x19 } else { 0x11 };
    let frame = tcp_frame(peer(c), k.rcv, ack, flags, wfield, &[], &data);
    let had = s.env.app().borrow().got[c].len();
    s.send(frame.clone());
    let rcv = k.rcv.wrapping_add(d as u32 + 1);
    let what = format!("the peer's FIN ({d} bytes of data) in {state}");
    expect_ack(s, snd, rcv, &what)?;
    s.settle(&|e| e.app().borrow().got[c].len() == had + d, &what)?;
    if let Some(x) = s.pop() {
        return Err(format!("{what}: the engine sent {x:?} after its ACK"));
    }
    if s.env.app().borrow().got[c][had..] != data[..] {
        return Err(format!("{what}: the engine delivered other bytes"));
    }
    let mut tail = k.tail.clone();
    tail.extend_from_slice(&data);
    Ok(PeerFin {
        frame,
        rcv,
        tail,
        data: d,
    })
}

/// Connection `c` is CLOSED: the peer's FIN again (its last ACK lost, as it would think) must
/// be answered as a segment to no connection, `<SEQ=SEG.ACK><CTL=RST>` (RFC 9293 3.10.7.1).
fn closed_rst(s: &mut Script, fin: &PeerFin, t: &mut Tally) -> Result<(), String> {
    let seg = PeerSeg::parse(&fin.frame).expect("a TCP segment");
    s.send(fin.frame.clone());
    let end = s.env.sim.cycle() + 2 * QUIET;
    while s.env.sim.cycle() < end {
        s.step()?;
    }
    let f = s.env.engine_frames.last().cloned().unwrap_or_default();
    match s.pop() {
        Some(_) if seg.answered_by(&f) => {}
        x => {
            return Err(format!(
                "CLOSED, the peer's FIN again: must be answered by the RST {:x?} for no \
                 connection (RFC 9293 3.10.7.1), got {x:?}",
                seg.rst_answer()
            ))
        }
    }
    t.closed_rsts += 1;
    quiet(s, QUIET, "CLOSED, the RST for the peer's FIN")
}

/// The firmware's abort where a RST goes (`what`: the state): exactly one segment, a RST at
/// SND.NXT `snd` without data, acknowledging RCV.NXT `rcv` if it has ACK (RFC 9293 3.10.5).
pub(super) fn expect_abort_rst(
    s: &mut Script,
    c: usize,
    (snd, rcv): (u32, u32),
    what: &str,
) -> Result<(), String> {
    s.env.view.conns[c].rst_ok = true;
    s.env.write(creg(c, 8), 4);
    let r = s.next_seg(2 * QUIET, &format!("the RST of an abort in {what}"))?;
    if r.flags & !0x10 != 0x04 || r.seq != snd || !r.data.is_empty() {
        return Err(format!(
            "an abort in {what} sent {r:?}, want a RST at SND.NXT {snd:#x} without data"
        ));
    }
    if r.flags & 0x10 != 0 && r.ack != rcv {
        return Err(format!(
            "an abort's RST in {what} acknowledges {:#x}, not RCV.NXT {rcv:#x}",
            r.ack
        ));
    }
    Ok(())
}

/// The firmware's abort in LAST-ACK: its RST, then CLOSED, failed, reason 0.
fn abort_rst(s: &mut Script, c: usize, snd: u32, rcv: u32, t: &mut Tally) -> Result<(), String> {
    expect_abort_rst(s, c, (snd, rcv), "LAST-ACK")?;
    t.rst_out += 1;
    quiet(s, 2 * QUIET, "after an abort's RST")?;
    expect_state(s, c, FAILED, "after an abort in LAST-ACK")
}

/// The peer closes first (see the module's text). Returns SND.MAX (past our FIN).
pub fn peer_first(
    s: &mut Script,
    k: &At,
    cl: &Close,
    rng: &mut Rng,
    t: &mut Tally,
) -> Result<u32, String> {
    let c = k.c;
    let w1 = 4096 * (1 + u32::from(cl.wnd.0 % 14));
    let mut w2 = 4096 * (1 + u32::from(cl.wnd.1 % 14));
    if w2 == w1 {
        w2 = if w1 == 4096 { 8192 } else { w1 - 4096 };
    }
    let field = |w: u32| (w >> k.pws) as u16;
    let snd_wnd = |s: &mut Script| s.env.read(creg(c, 36));

    // The peer's FIN with a new window: CLOSE-WAIT.
    let fin = peer_fin(s, k, cl, rng, (k.snd, k.snd, field(w1)), "ESTABLISHED")?;
    let rcv = fin.rcv;
    expect_state(s, c, CLOSE_WAIT, "after the peer's FIN in ESTABLISHED")?;
    if snd_wnd(s) != w1 {
        return Err(format!(
            "SND.WND is {:#x} after the peer's FIN with window {w1:#x} (field {:#x})",
            snd_wnd(s),
            field(w1)
        ));
    }
    for &(st, kind, x) in &cl.pokes {
        if st % 2 == 0 {
            poke(s, k, &fin, (k.snd, k.snd), (kind, x), t, "CLOSE-WAIT")?;
        }
    }

    // CLOSE-WAIT still sends (RFC 9293 3.10.2); the peer's ACKs, from past SND.WL1, carry
    // another window, which SND.WND takes (3.10.7.4: SND.WL1 < SEG.SEQ). The bytes go as they
    // come, or after one of the peer's ACKs is duplicated (`dup_acks`), or after an idle RTO
    // (RFC 5681 4.1: the first flight within the restart window, min(cwnd, IW) <= IW), or
    // behind a window the peer closed (RFC 9293 3.8.6.1: one byte past it once the persist
    // timer, the RTO, runs out, nothing before).
    let way = cl.cw_way % 4;
    let iw = Cwnd::new(k.smss, false).limit() as usize;
    let x = usize::from(cl.cw_bytes) % 3000;
    let cw = match way {
        2 => iw + 1 + x,
        3 => 2 + x,
        _ if cl.cw_bytes.is_multiple_of(4) => 0,
        _ => 1 + x,
    };
    if cw == 0 {
        s.send(tcp_frame(peer(c), rcv, k.snd, 0x10, field(w2), &[], &[]));
        quiet(s, 2 * QUIET, "in CLOSE-WAIT, the peer's window update")?;
    } else {
        let rto = u64::from(s.env.read(creg(c, 28)) >> 16);
        let more: Vec<u8> = (0..cw).map(|_| rng.next_u64() as u8).collect();
        s.env.view.conns[c].data.extend_from_slice(&more);
        let (mut got, mut acked) = (0usize, 0usize);
        if way == 2 {
            quiet(
                s,
                (rto + 2) * TICK,
                "in CLOSE-WAIT, idle for more than an RTO",
            )?;
        }
        if way == 3 {
            s.send(tcp_frame(peer(c), rcv, k.snd, 0x10, 0, &[], &[]));
            quiet(s, QUIET, "in CLOSE-WAIT, the peer's window closed")?;
            if snd_wnd(s) != 0 {
                return Err(format!(
                    "SND.WND is {:#x} after the peer's window update of 0 in CLOSE-WAIT",
                    snd_wnd(s)
                ));
            }
        }
        let before = s.env.app().borrow().sent[c];
        s.env.app().borrow_mut().to_send[c] = more.iter().copied().collect();
        if way == 3 {
            let end = s.env.sim.cycle() + 5000;
            while s.env.app().borrow().sent[c] == before {
                if s.env.sim.cycle() > end {
                    return Err("in CLOSE-WAIT the application could not hand its bytes".into());
                }
                s.step()?;
            }
            let handed = s.env.sim.cycle();
            let (at, x) = s.next_seg_at(
                (rto + 2) * TICK + AT_ONCE,
                "in CLOSE-WAIT, bytes behind a closed window: the probe after the RTO",
            )?;
            if x.seq != k.snd || x.data.len() != 1 || (at - handed) + TICK < rto * TICK {
                return Err(format!(
                    "in CLOSE-WAIT, bytes behind a closed window: the engine sent {x:?} {} \
                     cycles after they came; want one byte at SND.NXT {:#x} once the persist \
                     timer ({rto} ticks of {TICK} cycles) runs out (RFC 9293 3.8.6.1)",
                    at - handed,
                    k.snd
                ));
            }
            got = 1;
            acked = 1;
            s.send(tcp_frame(
                peer(c),
                rcv,
                k.snd.wrapping_add(1),
                0x10,
                field(w2),
                &[],
                &[],
            ));
        }
        loop {
            s.flight(|x| {
                let a = x.seq.wrapping_sub(k.snd) as usize;
                if a != got || a + x.data.len() > cw || x.ack != rcv {
                    return Err(format!(
                        "in CLOSE-WAIT a segment at offset {a} (length {}, ACK {:#x}) of the \
                         {cw} bytes the application sent, want offset {got} and ACK {rcv:#x}",
                        x.data.len(),
                        x.ack
                    ));
                }
                got += x.data.len();
                Ok(())
            })?;
            if got == acked {
                return Err(format!(
                    "in CLOSE-WAIT the engine stopped at {got} of the {cw} bytes the \
                     application sent (CLOSE-WAIT still sends: RFC 9293 3.10.2)"
                ));
            }
            if way == 2 && acked == 0 && got > iw {
                return Err(format!(
                    "in CLOSE-WAIT, after more than an RTO ({rto} ticks) idle, a first flight \
                     of {got} bytes: past the restart window min(cwnd, IW), IW {iw} (RFC 5681 \
                     4.1, SMSS {})",
                    k.smss
                ));
            }
            if way == 1 && acked == 0 {
                // A duplicate ACK (SND.UNA again, data outstanding, the window unchanged).
                s.send(tcp_frame(peer(c), rcv, k.snd, 0x10, field(w1), &[], &[]));
                quiet(s, QUIET, "in CLOSE-WAIT, a duplicate ACK")?;
                t.dup_acks += 1;
            }
            let ack = k.snd.wrapping_add(got as u32);
            s.send(tcp_frame(peer(c), rcv, ack, 0x10, field(w2), &[], &[]));
            acked = got;
            if got == cw {
                break;
            }
        }
        s.settle(&|_| true, "in CLOSE-WAIT, every byte ACKed")?;
        if let Some(x) = s.pop() {
            return Err(format!(
                "in CLOSE-WAIT the engine sent {x:?} after every byte was ACKed"
            ));
        }
    }
    if snd_wnd(s) != w2 {
        return Err(format!(
            "SND.WND is {:#x} after the peer's segments from past its FIN with window {w2:#x} \
             (RFC 9293 3.10.7.4: SND.WL1 < SEG.SEQ, so the window is taken)",
            snd_wnd(s)
        ));
    }
    expect_state(s, c, CLOSE_WAIT, "in CLOSE-WAIT, after the peer's ACKs")?;

    // The firmware closes: the FIN at SND.NXT, LAST-ACK.
    let snd = k.snd.wrapping_add(cw as u32);
    let sent = expect_fin(s, c, snd, rcv)?;
    expect_state(s, c, LAST_ACK, "after the engine's FIN in CLOSE-WAIT")?;
    if cl.lose_fin {
        fin_again(s, (snd, rcv), sent, t)?;
        expect_state(s, c, LAST_ACK, "after the engine's FIN again")?;
    }
    let end = snd.wrapping_add(1);
    for &(st, kind, x) in &cl.pokes {
        if st % 2 == 1 {
            poke(s, k, &fin, (end, snd), (kind, x), t, "LAST-ACK")?;
        }
    }
    expect_state(s, c, LAST_ACK, "LAST-ACK, after the peer's segments")?;
    match cl.how % 3 {
        0 => {
            s.send(tcp_frame(peer(c), rcv, end, 0x10, field(w2), &[], &[]));
            quiet(
                s,
                2 * QUIET,
                "in LAST-ACK, the peer's ACK of the engine's FIN",
            )?;
            expect_state(s, c, CLOSED, "LAST-ACK, after the peer's ACK of our FIN")?;
        }
        1 => {
            rst_at_rcv_nxt(s, c, (rcv, end, field(w2)), "LAST-ACK", t)?;
        }
        _ => abort_rst(s, c, end, rcv, t)?,
    }
    closed_rst(s, &fin, t)?;
    Ok(end)
}

/// The peer's RST at RCV.NXT (`seq_ack_wnd`: its sequence number, ACK and window field) in
/// state `what`: taken without an answer, CLOSED (RFC 9293 3.10.7.4), counted in `rst_in`.
fn rst_at_rcv_nxt(
    s: &mut Script,
    c: usize,
    (seq, ack, wnd): (u32, u32, u16),
    what: &str,
    t: &mut Tally,
) -> Result<(), String> {
    s.send(tcp_frame(peer(c), seq, ack, 0x04, wnd, &[], &[]));
    quiet(s, 2 * QUIET, &format!("in {what}, a RST at RCV.NXT"))?;
    t.rst_in += 1;
    expect_state(
        s,
        c,
        CLOSED,
        &format!("{what}, after a RST at RCV.NXT (RFC 9293 3.10.7.4)"),
    )
}

/// Both close at once (see the module's text). Returns SND.MAX (past our FIN).
pub fn simultaneous(
    s: &mut Script,
    k: &At,
    cl: &Close,
    rng: &mut Rng,
    t: &mut Tally,
) -> Result<u32, String> {
    let c = k.c;
    let tw = 600 + u64::from(cl.tw);
    s.env.write(tcp_csr::TIME_WAIT, tw as u32);

    // The firmware closes: FIN-WAIT-1.
    let sent = expect_fin(s, c, k.snd, k.rcv)?;
    expect_state(s, c, FIN_WAIT_1, "after the engine's FIN in ESTABLISHED")?;
    // The peer's FIN, sent before ours reached it: CLOSING, its FIN ACKed from past ours.
    let end = k.snd.wrapping_add(1);
    let fin = peer_fin(s, k, cl, rng, (end, k.snd, k.wfield), "FIN-WAIT-1")?;
    let rcv = fin.rcv;
    expect_state(
        s,
        c,
        CLOSING,
        "FIN-WAIT-1, after the peer's FIN not ACKing ours",
    )?;
    if cl.lose_fin {
        fin_again(s, (k.snd, rcv), sent, t)?;
        expect_state(s, c, CLOSING, "after the engine's FIN again")?;
    }
    for &(st, kind, x) in &cl.pokes {
        if st % 2 == 0 {
            poke(s, k, &fin, (end, k.snd), (kind, x), t, "CLOSING")?;
        }
    }
    expect_state(s, c, CLOSING, "CLOSING, after the peer's segments")?;
    if cl.how % 3 == 1 {
        rst_at_rcv_nxt(s, c, (rcv, k.snd, k.wfield), "CLOSING", t)?;
        closed_rst(s, &fin, t)?;
        return Ok(end);
    }

    // The peer's ACK of our FIN: TIME-WAIT.
    let mut start = send_taken(s, tcp_frame(peer(c), rcv, end, 0x10, k.wfield, &[], &[]))?;
    quiet(s, QUIET, "in CLOSING, the peer's ACK of our FIN")?;
    expect_state(s, c, TIME_WAIT, "CLOSING, after the peer's ACK of our FIN")?;
    for &(st, kind, x) in &cl.pokes {
        if st % 2 == 1 {
            // Far enough into TIME-WAIT that a timer not restarted by a FIN shows.
            quiet(s, tw * TICK / 24, "in TIME-WAIT")?;
            if poke(s, k, &fin, (end, end), (kind, x), t, "TIME-WAIT")? {
                start = s.last_in();
            }
        }
    }
    match cl.tw_end % 4 {
        2 => {
            rst_at_rcv_nxt(s, c, (rcv, end, k.wfield), "TIME-WAIT", t)?;
        }
        3 => {
            // RFC 9293 3.10.5, ABORT in TIME-WAIT: the TCB deleted, nothing sent; the contract's
            // `failed` with reason 0 (an abort).
            s.env.write(creg(c, 8), 4);
            quiet(s, 2 * QUIET, "in TIME-WAIT, the firmware's abort")?;
            expect_state(s, c, FAILED, "TIME-WAIT, after the firmware's abort")?;
        }
        end_by => {
            if end_by == 1 {
                // Halfway through it (or at once, if the segments above took longer).
                let half = (start + tw * TICK / 2).saturating_sub(s.env.sim.cycle());
                quiet(s, half, "in TIME-WAIT")?;
                poke(s, k, &fin, (end, end), (0, 0), t, "TIME-WAIT")?;
                start = s.last_in();
            }
            let limit = start + (tw + 1) * TICK + 200;
            let closed_at = loop {
                for _ in 0..10 {
                    s.step()?;
                }
                if let Some(x) = s.pop() {
                    return Err(format!("in TIME-WAIT the engine sent {x:?} unasked"));
                }
                let st = s.env.read(creg(c, 12)) & 0x31f;
                let now = s.env.sim.cycle();
                if st == CLOSED {
                    break now;
                }
                if st != TIME_WAIT || now > limit {
                    return Err(format!(
                        "{} cycles after TIME-WAIT began (or the peer's last FIN in it) the state \
                         CSR reads {st:#x}; want TIME-WAIT (8) for the time_wait CSR's {tw} ticks \
                         of {TICK} cycles, then CLOSED (0)",
                        now - start
                    ));
                }
            };
            let lasted = closed_at - start;
            if lasted + TICK < tw * TICK {
                return Err(format!(
                    "TIME-WAIT ended {lasted} cycles after it began or the peer's last FIN in it \
                     (which restarts it: RFC 9293 3.10.7.4), want the time_wait CSR's {tw} ticks \
                     of {TICK} cycles"
                ));
            }
            expect_state(s, c, CLOSED, "after TIME-WAIT")?;
        }
    }
    closed_rst(s, &fin, t)?;
    Ok(end)
}
