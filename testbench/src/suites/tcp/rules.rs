//! Property `tcp_rules`: the engine's receive and retransmission rules against a scripted peer
//! (no smoltcp: the test writes every frame the peer sends, so each rule is exercised on purpose
//! and checked exactly). A drawn connection (0 or 1; the other stays CLOSED) opens: the script
//! answers its ARP request at once (no second request may come before the SYN: the contract
//! sends one again only after `arp_retry` ticks) and its SYN, with or without a window-scale option, and in some
//! cases with an End of Option List after the MSS (and the window scale, if offered) followed
//! by bytes RFC 9293 makes padding: a window-scale option among them (right after the EOL,
//! after a NOP, after another byte) is not offered, so neither side scales (RFC 7323). The
//! handshake's ACK must advertise the whole receive buffer, shifted only if the peer offered a
//! scale; after the receiving part, SND.WND (its CSR) must be the peer's window as the peer
//! meant it. Then:
//!
//! 1. Receiving (the engine's application sends nothing): the peer's stream, cut into segments,
//!    arrives in a drawn order with repeats (out of order, duplicated, overlapping the kept
//!    range, entirely old) and with probes (no data, sequence number RCV.NXT - 1, as Linux's
//!    zero-window probe) and with segments whose checksum fails (other bytes at a segment's
//!    sequence numbers: unanswered, and never in place of kept bytes). The script waits until
//!    the engine is quiet and its application has taken every byte in order before each
//!    segment, then checks the engine's answer: exactly an ACK of what a one-range reassembly
//!    model says RCV.NXT is; for a segment out of order, old, or a probe, the same ACK number
//!    and window as the engine's previous segment (a duplicate ACK, RFC 5681). Mixed in, RFC
//!    5961's attacks and RFC 9293's unacceptable ACKs: RSTs at sequence numbers inside the
//!    receive window but not RCV.NXT (a challenge ACK: the same pure ACK again, nothing else
//!    changes), at its edges and outside it (dropped unanswered), SYNs in ESTABLISHED at any
//!    sequence number (a challenge ACK), and data segments whose ACK number is drawn around
//!    the acceptable range [SND.UNA - MAX.SND.WND, SND.MAX] (inside: taken as any segment;
//!    outside, with other bytes: a challenge ACK, the bytes never delivered), and data
//!    segments at or past the window's right edge with another window field (not acceptable:
//!    the same ACK again, the bytes dropped, the ACK field and window ignored, so SND.WND
//!    stays the peer's). Also frames that
//!    are not the connection's: data segments at RCV.NXT with other bytes (checksums right)
//!    from another source port of the peer, from another source IP, or to the other
//!    connection's local port or to a port of no connection (dropped: `drop_other`, no RST,
//!    unanswered, the bytes never delivered), and ARP frames the engine must not take (a
//!    request or a reply for another host, an operation other than request and reply, other
//!    hardware or protocol fields) from the peer's address with another MAC (dropped:
//!    `drop_other`, unanswered, the ARP cache keeps the peer's MAC: every IPv4 frame the
//!    engine sends, in the whole test, must go to `PEER_MAC`), and ARP requests for our
//!    address from one of two other hosts (answered with exactly one ARP reply to the
//!    requester, learnt beside the peer's entry). Then every segment in order, so the whole
//!    stream arrives.
//! 2. Sending: the engine's application sends a stream. Its first flight (what it sends
//!    until `GAP` cycles pass without a segment) must fit RFC 5681's initial window. The peer
//!    then ACKs one segment at a time, cumulatively, `GAP` cycles apart (a retransmission is
//!    taken and ACKed next), and drops the first transmissions that hold the drawn stream
//!    offsets (when three undropped ones wait behind, so a third duplicate ACK comes). The RTO
//!    is far longer than the test, so every retransmission must be a fast one: none before the
//!    third duplicate ACK of a loss past `recover`, one within `GAP` cycles of it, and after a
//!    partial ACK in recovery (RFC 6582) the next hole within `GAP` cycles. Every new segment
//!    must end within SND.UNA + the congestion window `models::tcp::Cwnd` allows (slow start,
//!    congestion avoidance, NewReno's ssthresh, inflation and deflation: RFC 5681's bound,
//!    the most generous where the RFCs leave a choice) after one of the ACKs the peer sent in
//!    the `LATE` cycles before it arrived. Then (2b) idle for more than an RTO, more data:
//!    the restart window (RFC 5681 4.1). Then (2c) the sender's silly-window avoidance (RFC
//!    9293 3.8.6.2.1), unless the peer's window unit is an MSS or more: the peer shrinks its
//!    window under an MSS; bytes that all fit go at once; more than fits, queued behind a
//!    closed window that then opens to that small size, must wait for the override timeout
//!    (the persist timer, an RTO) and then go as exactly what fits; once the window opens
//!    again, the rest goes in full-sized segments but the last.
//!
//! Checked at the end: both streams byte for byte, and the counters exactly: `ooo_kept` and
//! `ooo_dropped` (the model's), `drop_csum` (the broken segments), `drop_other` (the frames
//! not the connection's), `dup_acks` (the duplicate ACKs the peer sent), `fast_retrans` and
//! `retrans` (one per dropped segment), `rto_fires`, `rst_in` and `rst_out` 0,
//! `challenge_acks` and `rst_dropped` (the RFC 5961 steps), `seg_out`. Then the connection
//! ends in one of four ways (a quarter of the cases each): a RST exactly at RCV.NXT must reset
//! it (CLOSED, failed, reason 1, `rst_in` 1) and get no answer; or the firmware aborts it
//! (`ctrl.abort`): exactly one RST must go, at SND.NXT (every byte ACKed), without data (RFC
//! 9293 3.10.5; the ACK bit is allowed, and then acknowledges RCV.NXT), then nothing, and the
//! state CSR reads CLOSED, failed, reason 0 (`rst_out` 1); or it closes with FIN, the peer
//! first (CLOSE-WAIT, LAST-ACK) or both at once (FIN-WAIT-1, CLOSING, TIME-WAIT), each state
//! and segment checked as RFC 9293 3.10 says (`rules/close.rs`). The counters are checked
//! exactly again after the end. Then the other connection opens: its ARP lookup must hit the
//! cache (no ARP request), so its SYN goes to the MAC the cache kept for the peer (a
//! connection keeps the MAC it resolved, so only a new lookup shows an overwritten entry).
//! Last, the first connection opens again on the same 4-tuple: its new ISS must lie past its
//! last incarnation's SND.MAX (RFC 9293 3.4.1), and `models::tcp` checks it is M + F or, when
//! M + F falls in the old range, that SND.MAX + 1. And the other connection, still in
//! SYN-SENT, is aborted: nothing may go (RFC 9293 3.10.5: SYN-SENT deletes the TCB), and its
//! state CSR reads CLOSED, failed, reason 0.
//! Every engine frame also passes `models::tcp`'s golden check, window rules included.

use super::{cnt, creg, Env, Setup, ENGINE_IP, ENGINE_MAC, LOCAL_PORT_BASE, PEER_IP, PEER_MAC};
use crate::models::tcp::{parse_seg, sum16, tcp_sum, Cwnd, PeerSeg, Seg};
use crate::prop::Property;
use crate::rng::Rng;
use crate::rtl::regs::tcp_csr;
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use std::collections::VecDeque;
use std::path::Path;

mod close;

/// Cycles the peer leaves between its ACKs in the sending part (and waits for an answer): a
/// full segment takes about 200 cycles to come out (its frame a beat a cycle), and others may
/// be on their way first; far more than that, so the bounds of consecutive ACKs are told
/// apart.
const GAP: u64 = 8000;
/// Cycles without an engine frame that count as quiet.
const QUIET: u64 = 400;
/// How long before a new segment arrives the engine may have chosen it: a segment's frame
/// starts 5 cycles after its choice, a beat a cycle, behind a frame that may be on the wire
/// already: two full frames' worth of beats (2 * 190 cycles), stretched by the sink's stalls,
/// and the handling of the ACK that opened the window (parsed a byte a cycle). The congestion window a new segment was chosen under is the bound
/// after one of the ACKs sent in that time, or the one in force when it began. (`GAP` apart,
/// consecutive ACKs' bounds are told apart.)
const LATE: u64 = 600;
/// Cycles from a segment's last beat into the engine to the first cycle of the frame that must
/// answer it at once: an ACK not delayed (RFC 5681 4.2's out-of-order and gap-filling segments,
/// a second full-sized one) takes no longer.
const AT_ONCE: u64 = 1500;
/// Cycles of the timer tick (`Env`'s `tick` CSR).
const TICK: u64 = 20;

/// One step of the receiving part.
#[derive(Clone, Debug)]
pub enum Step {
    /// Segment `i` of the peer's stream (modulo the segment count).
    Seg(u8),
    /// A segment without data at RCV.NXT - 1.
    Probe,
    /// Segment `i`'s sequence numbers with other bytes and a broken TCP checksum: dropped
    /// unanswered, and its bytes must not replace kept ones.
    Bad(u8),
    /// A RST (with the ACK bit if `ack`) at RCV.NXT + an offset of a class (`class % 5`): 0
    /// inside the window, 1 past its end, 2 before RCV.NXT, 3 the window's last byte, 4 one
    /// past it. Never exactly RCV.NXT (that one ends the test).
    Rst { class: u8, x: u16, ack: bool },
    /// A SYN (with the ACK bit if `ack`) at RCV.NXT + `off` - 32768, carrying `off % 64` bytes.
    Syn { off: u16, ack: bool },
    /// A data segment (`1 + len % 64` other bytes) at RCV.NXT + the receive buffer + `x` (at or
    /// past the right edge of the window, which is at most the buffer), its window field not
    /// the peer's: not acceptable (RFC 9293 3.10.7.4), so ACKed (the same ACK again), dropped
    /// (`ooo_dropped`), and its ACK field and window ignored.
    Beyond { x: u16, len: u8 },
    /// Segment `i` with its ACK number at SND.UNA + an offset of a class (`class % 5`): 0
    /// -MAX.SND.WND exactly, 1 one older, 2 inside (-MAX.SND.WND, 0), 3 older by more, 4 beyond
    /// SND.MAX. Out of range it carries other bytes.
    Ack { seg: u8, class: u8, x: u16 },
    /// A data segment at RCV.NXT with other bytes that matches only part of the connection's
    /// 4-tuple (`class % 4`): 0 another source port of the peer, 1 another source IP, 2 the
    /// other connection's local port (CLOSED), 3 a local port of no connection. Dropped
    /// unanswered (`drop_other`, no RST), its bytes never delivered.
    Foreign { class: u8, x: u16 },
    /// An ARP frame the engine must not take (`class % 5`): 0 a request, 1 a reply, for another
    /// host; for our address, 2 an operation other than request and reply, 3 other hardware or
    /// protocol fields. Its sender is the peer's address with another MAC: dropped
    /// (`drop_other`), unanswered, and the cache keeps the peer's MAC. Or (4) one it takes: a
    /// request for our address from one of two other hosts, answered with an ARP reply to it
    /// and learnt, the peer's entry kept.
    Arp { class: u8, x: u16 },
}

/// The stimulus.
#[derive(Clone, Debug)]
pub struct Input {
    /// The peer's stream, as segment lengths.
    pub seg_lens: Vec<u16>,
    pub steps: Vec<Step>,
    /// The window shift in the peer's SYN-ACK (none: no option, so neither side scales).
    pub peer_ws: Option<u8>,
    /// The SYN-ACK's options end with an End of Option List followed by bytes that must be
    /// ignored (`(class % 4, w)`): 0 a window-scale option of shift `w % 15`, 1 a NOP and it,
    /// 2 another byte and it, 3 `w` and NOPs.
    pub eol: Option<(u8, u8)>,
    /// The connection the test runs on (`% 2`; the other stays CLOSED).
    pub conn: u8,
    /// How the connection ends (`% 4`): 0 the peer's RST at RCV.NXT, 1 the firmware aborts
    /// it, 2 the peer closes first, 3 both close at once (`close`).
    pub end: u8,
    /// The close's draws (ends 2 and 3).
    pub close: close::Close,
    /// MSS CSR choice, window-shift CSR.
    pub mss: u8,
    pub wscale: u8,
    /// The engine's stream, bytes.
    pub tx_bytes: u16,
    /// Which first transmissions the peer drops (fractions of the segment count, in 1/256).
    pub lost: Vec<u8>,
    /// The delayed ACK (`ack_delay % 3`): 0 none (CSR 0), else the CSR at 150 + 50 * that
    /// ticks (3000 or 5000 cycles: longer than any immediate answer takes).
    pub ack_delay: u8,
    pub seed: u64,
}

/// An Ethernet/IPv4/TCP frame to the engine from `src`, port `sport` to port `dport`
/// (checksums right).
pub(super) fn tcp_frame(
    (src, sport, dport): ([u8; 4], u16, u16),
    seq: u32,
    ack: u32,
    flags: u8,
    wnd: u16,
    opts: &[u8],
    data: &[u8],
) -> Vec<u8> {
    let mut t = Vec::new();
    t.extend(sport.to_be_bytes());
    t.extend(dport.to_be_bytes());
    t.extend(seq.to_be_bytes());
    t.extend(ack.to_be_bytes());
    t.push(((20 + opts.len()) as u8 / 4) << 4);
    t.push(flags);
    t.extend(wnd.to_be_bytes());
    t.extend([0, 0, 0, 0]);
    t.extend(opts);
    t.extend(data);
    let s = !(tcp_sum(src, ENGINE_IP, &t) as u16);
    t[16..18].copy_from_slice(&s.to_be_bytes());
    let mut f = Vec::new();
    f.extend(ENGINE_MAC);
    f.extend(PEER_MAC);
    f.extend([8, 0]);
    let mut h = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 6, 0, 0];
    h[2..4].copy_from_slice(&(20 + t.len() as u16).to_be_bytes());
    h.extend(src);
    h.extend(ENGINE_IP);
    let s = !(sum16(0, &h) as u16);
    h[10..12].copy_from_slice(&s.to_be_bytes());
    f.extend(h);
    f.extend(t);
    f.resize(f.len().max(60), 0);
    f
}

/// The peer's side of the engine's connection `c` for [`tcp_frame`]: its address, its port
/// 4420, the connection's local port.
fn peer(c: usize) -> ([u8; 4], u16, u16) {
    (PEER_IP, 4420, (LOCAL_PORT_BASE as usize + c) as u16)
}

/// An ARP frame to the engine: operation `op`, sender `sha`/`spa`, target `tpa`, hardware and
/// protocol fields `hp` (1, 0x0800, 6, 4 for Ethernet/IPv4); a request is broadcast.
fn arp_frame(op: u16, hp: [u8; 6], (sha, spa): ([u8; 6], [u8; 4]), tpa: [u8; 4]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend(if op == 1 { [0xff; 6] } else { ENGINE_MAC });
    f.extend(PEER_MAC);
    f.extend([8, 6]);
    f.extend(hp);
    f.extend(op.to_be_bytes());
    f.extend(sha);
    f.extend(spa);
    f.extend(if op == 1 { [0; 6] } else { ENGINE_MAC });
    f.extend(tpa);
    f.resize(60, 0);
    f
}

fn arp_reply() -> Vec<u8> {
    arp_frame(2, [0, 1, 8, 0, 6, 4], (PEER_MAC, PEER_IP), ENGINE_IP)
}

/// The engine, the frames it sent not yet looked at, and the script's clock.
struct Script {
    env: Env,
    seen: usize,
    /// Segments the engine sent, not yet looked at, with the cycle each arrived.
    inbox: VecDeque<(u64, Seg)>,
    last_out: u64,
    arp_req: u32,
    /// ARP frames the engine sent (requests and replies), and the last one.
    arps: u32,
    last_arp: Vec<u8>,
}

impl Script {
    /// The oldest segment not yet looked at.
    fn pop(&mut self) -> Option<Seg> {
        self.inbox.pop_front().map(|(_, x)| x)
    }

    /// A flight: steps until `GAP` cycles pass without a new data segment from the engine,
    /// handing each one to `each` (segments without data are passed over).
    fn flight(&mut self, mut each: impl FnMut(&Seg) -> Result<(), String>) -> Result<(), String> {
        let mut last = self.env.sim.cycle();
        while self.env.sim.cycle() < last + GAP {
            self.step()?;
            while let Some(x) = self.pop() {
                if !x.data.is_empty() {
                    each(&x)?;
                    last = self.env.sim.cycle();
                }
            }
        }
        Ok(())
    }

    /// Runs `2 * QUIET` cycles in which the engine must send nothing (`what`: the error's
    /// words), then reads connection `c`'s state CSR.
    fn silent_state(&mut self, c: usize, what: &str) -> Result<u32, String> {
        let end = self.env.sim.cycle() + 2 * QUIET;
        while self.env.sim.cycle() < end {
            self.step()?;
        }
        if let Some(x) = self.pop() {
            return Err(format!("{what}: the engine sent {x:?}"));
        }
        Ok(self.env.read(creg(c, 12)))
    }

    fn step(&mut self) -> Result<(), String> {
        self.env.sim.step();
        let cycle = self.env.sim.cycle();
        let new: Vec<Vec<u8>> = self.env.sink.borrow().frames[self.seen..]
            .iter()
            .map(|f| f.data.clone())
            .collect();
        self.seen += new.len();
        for f in new {
            {
                let app = self.env.app().clone();
                let app = app.borrow();
                let got: Vec<usize> = app.got.iter().map(Vec::len).collect();
                crate::models::tcp::check_frame(&mut self.env.view, &f, &app.sent, &got, cycle)
                    .map_err(|e| format!("cycle {cycle}: engine frame {f:02x?}: {e}"))?;
            }
            self.last_out = cycle;
            if f[12..14] == [8, 6] {
                self.arp_req += u32::from(f[21] == 1);
                self.arps += 1;
                self.last_arp = f.clone();
            } else if f[0..6] != PEER_MAC {
                return Err(format!(
                    "cycle {cycle}: engine frame to MAC {:02x?}, not the peer's (its ARP cache \
                     entry was overwritten?)",
                    &f[0..6]
                ));
            } else if let Some(s) = parse_seg(&f) {
                tracing::trace!("cycle {cycle}: engine sends {s:?}");
                self.env.engine_frames.push(f);
                self.inbox.push_back((cycle, s));
            }
        }
        if let Some(v) = self.env.sink.borrow().violations.first() {
            return Err(format!("m_axis: {v}"));
        }
        if let Some(v) = self.env.app().borrow().violations.first() {
            return Err(format!("byte streams: {v}"));
        }
        Ok(())
    }

    fn send(&mut self, f: Vec<u8>) {
        tracing::trace!(
            "cycle {}: peer sends {:?}",
            self.env.sim.cycle(),
            parse_seg(&f)
        );
        self.env.view.peer_frame(&f);
        self.env.src.borrow_mut().send(f);
    }

    /// The engine's next TCP segment within `limit` cycles.
    fn next_seg(&mut self, limit: u64, what: &str) -> Result<Seg, String> {
        self.next_seg_at(limit, what).map(|(_, x)| x)
    }

    /// The cycle the last frame sent to the engine had its last beat taken.
    fn last_in(&self) -> u64 {
        self.env.src.borrow().sent.last().map_or(0, |x| x.0)
    }

    /// The engine's next TCP segment within `limit` cycles, with the cycle it arrived.
    fn next_seg_at(&mut self, limit: u64, what: &str) -> Result<(u64, Seg), String> {
        let end = self.env.sim.cycle() + limit;
        while self.inbox.is_empty() {
            if self.env.sim.cycle() > end {
                return Err(format!(
                    "cycle {}: no segment from the engine within {limit} cycles ({what})",
                    self.env.sim.cycle()
                ));
            }
            self.step()?;
        }
        Ok(self.inbox.pop_front().expect("checked"))
    }

    /// Steps until `done` has held, and no engine frame came, for `QUIET` cycles (a window
    /// update after the application's last byte has had its time).
    fn settle(&mut self, done: &dyn Fn(&Env) -> bool, what: &str) -> Result<(), String> {
        let end = self.env.sim.cycle() + 200_000;
        let mut since: Option<u64> = None;
        loop {
            self.step()?;
            let c = self.env.sim.cycle();
            since = if done(&self.env) {
                since.or(Some(c))
            } else {
                None
            };
            if since.is_some_and(|t| c - t.max(self.last_out) > QUIET) {
                return Ok(());
            }
            if c > end {
                return Err(format!("cycle {c}: never quiet ({what})"));
            }
        }
    }
}

/// One-range reassembly as the contract states it: RCV.NXT and the kept range, offsets in the
/// peer's stream.
#[derive(Default)]
struct Reasm {
    nxt: u32,
    hole: Option<(u32, u32)>,
    kept: u32,
    dropped: u32,
}

impl Reasm {
    /// A data segment [a, b); true when it is out of order.
    fn seg(&mut self, a: u32, b: u32) -> bool {
        if a <= self.nxt {
            if b > self.nxt {
                self.nxt = b;
                if let Some((lo, hi)) = self.hole {
                    if lo <= self.nxt {
                        self.nxt = self.nxt.max(hi);
                        self.hole = None;
                    }
                }
            }
            return false;
        }
        match self.hole {
            None => {
                self.hole = Some((a, b));
                self.kept += 1;
            }
            Some((lo, hi)) if a <= hi && b >= lo => {
                self.hole = Some((lo.min(a), hi.max(b)));
                self.kept += 1;
            }
            Some(_) => self.dropped += 1,
        }
        true
    }
}

pub fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
    let mss = [536u32, 1000, 1460][usize::from(input.mss % 3)];
    let setup = Setup {
        mss,
        wscale: u32::from(input.wscale % 5),
        key: (7, 9),
        // 30000 ticks of 20 cycles, 600 000: no RTO within the test. The peer takes a segment
        // each `GAP` cycles, and a first flight of small segments (the application's bytes
        // trickling in while the engine sends at once) can hold 30 of them: at 6000 ticks the
        // RTO fired while the last of them still waited in the peer's queue.
        rto_min: 30000,
        retries: 8,
        time_wait: 50,
    };
    let mut env = Env::clean(waves, input.seed, &setup);
    env.write(tcp_csr::RTO_INIT, 30000);
    env.write(tcp_csr::RTO_MAX, 60000);
    let delay = match input.ack_delay % 3 {
        0 => 0,
        d => 150 + 50 * u64::from(d),
    };
    env.write(tcp_csr::ACK_DELAY, delay as u32);
    let c = usize::from(input.conn % 2);
    let mut rng = Rng::new(input.seed ^ 11);
    let down: Vec<u8> = {
        let total: usize = input.seg_lens.iter().map(|&l| usize::from(l)).sum();
        (0..total).map(|_| rng.next_u64() as u8).collect()
    };
    let up: Vec<u8> = (0..input.tx_bytes).map(|_| rng.next_u64() as u8).collect();
    env.view.conns[c].data = up.clone();
    let mut s = Script {
        env,
        seen: 0,
        inbox: VecDeque::new(),
        last_out: 0,
        arp_req: 0,
        arps: 0,
        last_arp: Vec::new(),
    };

    // Open: ARP, SYN, SYN-ACK, ACK.
    s.env.write(creg(c, 8), 1);
    let end = s.env.sim.cycle() + 20_000;
    while s.arp_req == 0 {
        if s.env.sim.cycle() > end {
            return Err("no ARP request from the engine".into());
        }
        s.step()?;
    }
    let arp_at = s.env.sim.cycle();
    s.send(arp_reply());
    let syn = s.next_seg(20_000, "the SYN")?;
    // The contract: an ARP request again only after `arp_retry` ticks (100 here), and the
    // reply came at once.
    if s.arp_req != 1 && s.env.sim.cycle() - arp_at < 99 * TICK {
        return Err(format!(
            "the engine sent {} ARP requests before its SYN, {} cycles after the first was \
             answered at once; want one (the next only after arp_retry, 100 ticks)",
            s.arp_req,
            s.env.sim.cycle() - arp_at
        ));
    }
    if syn.flags != 0x02 {
        return Err(format!(
            "the engine's first segment has flags {:#04x}",
            syn.flags
        ));
    }
    let iss = syn.seq;
    let piss = rng.next_u64() as u32;
    // The peer's window: a multiple of any shift, the same in every segment once scaled.
    let pwnd: u32 = 0xf000;
    let mut opts = vec![2, 4, 0x05, 0xb4];
    if let Some(ws) = input.peer_ws {
        opts.extend([1, 3, 3, ws % 13]);
    }
    // After an End of Option List, padding: a window scale there is not offered (RFC 9293).
    if let Some((class, w)) = input.eol {
        opts.push(0);
        opts.extend(match class % 4 {
            0 => vec![3, 3, w % 15],
            1 => vec![1, 3, 3, w % 15],
            2 => vec![w | 0x80, 3, 3, w % 15],
            _ => vec![w, 1, 1],
        });
        opts.resize(opts.len().next_multiple_of(4), 0);
    }
    let pws = input.peer_ws.map_or(0, |w| w % 13);
    s.send(tcp_frame(
        peer(c),
        piss,
        iss.wrapping_add(1),
        0x12,
        pwnd as u16,
        &opts,
        &[],
    ));
    let a = s.next_seg(20_000, "the ACK of the SYN-ACK")?;
    if a.flags != 0x10 || a.ack != piss.wrapping_add(1) || a.seq != iss.wrapping_add(1) {
        return Err(format!("the handshake's ACK: {a:?}"));
    }
    let wfield = (pwnd >> pws) as u16;
    // Nothing received yet: the whole buffer, scaled by our shift only if the peer offered one.
    let rxb = s.env.view.rx_bytes;
    let our_ws = if input.peer_ws.is_some() {
        setup.wscale
    } else {
        0
    };
    if u32::from(a.wnd) != (rxb >> our_ws).min(0xffff) {
        return Err(format!(
            "the handshake's ACK advertises window {}, want {} bytes >> {our_ws} (the peer's \
             window-scale option: {:?}, options {opts:02x?})",
            a.wnd, rxb, input.peer_ws
        ));
    }
    let mut last = (a.ack, a.wnd);

    // 1. Receiving.
    let mut offs = Vec::new();
    let mut o = 0u32;
    for &l in &input.seg_lens {
        offs.push((o, o + u32::from(l)));
        o += u32::from(l);
    }
    let mut m = Reasm::default();
    // Then everything in order, so the whole stream arrives.
    let steps: Vec<Step> = input
        .steps
        .iter()
        .cloned()
        .chain((0..offs.len()).map(|i| Step::Seg(i as u8)))
        .collect();
    let mut bad = 0u32;
    let mut challenges = 0u32;
    let mut rst_dropped = 0u32;
    let ack0 = iss.wrapping_add(1);
    // MAX.SND.WND: the SYN-ACK's window, and every window since (the same once scaled).
    let max_wnd = pwnd;
    let mut others = 0u32;
    let mut closed_rsts = 0u32;
    for (n, st) in steps.iter().enumerate() {
        let nxt = m.nxt as usize;
        s.settle(
            &|e: &Env| e.app().borrow().got[c].len() == nxt,
            "before a segment",
        )?;
        while let Some(x) = s.pop() {
            last = (x.ack, x.wnd);
        }
        let rcv_nxt = piss.wrapping_add(1).wrapping_add(m.nxt);
        // An ARP request to answer (the requester's MAC and IP), and the ARP frames so far.
        let mut arp_answer: Option<([u8; 6], [u8; 4])> = None;
        // A segment to no connection whose RST must come.
        let mut rst_answer: Option<PeerSeg> = None;
        let arps = s.arps;
        // What the engine must answer: `None` nothing, `Some(dup)` a pure ACK of RCV.NXT
        // (repeating the last ACK and window when `dup`).
        // Whether the answer may be a delayed ACK: new data at RCV.NXT, no range kept beyond.
        let mut may_wait = false;
        let (answer, what): (Option<bool>, String) = match *st {
            Step::Bad(i) => {
                let (a, b) = offs[usize::from(i) % offs.len()];
                let seq = piss.wrapping_add(1).wrapping_add(a);
                let junk: Vec<u8> = (a..b).map(|_| rng.next_u64() as u8).collect();
                let mut f = tcp_frame(peer(c), seq, ack0, 0x18, wfield, &[], &junk);
                f[50] ^= 0x5a;
                s.send(f);
                bad += 1;
                (
                    None,
                    format!("step {n}: a segment with a bad checksum over [{a}, {b})"),
                )
            }
            Step::Seg(i) => {
                let i = usize::from(i) % offs.len();
                let (a, b) = offs[i];
                let seq = piss.wrapping_add(1).wrapping_add(a);
                let f = tcp_frame(
                    peer(c),
                    seq,
                    ack0,
                    0x18,
                    wfield,
                    &[],
                    &down[a as usize..b as usize],
                );
                s.send(f);
                may_wait = delay != 0 && a == m.nxt && b > m.nxt && m.hole.is_none();
                let ooo = m.seg(a, b);
                (
                    Some(ooo || b <= nxt as u32),
                    format!("step {n}: segment {i} [{a}, {b})"),
                )
            }
            Step::Probe => {
                let seq = piss.wrapping_add(m.nxt);
                s.send(tcp_frame(peer(c), seq, ack0, 0x10, wfield, &[], &[]));
                (Some(true), format!("step {n}: a probe at RCV.NXT - 1"))
            }
            Step::Rst { class, x, ack } => {
                let x = u32::from(x);
                let (off, inside) = match class % 5 {
                    0 => (1 + x % (rxb - 1), true),
                    1 => (rxb.wrapping_add(x), false),
                    2 => (0u32.wrapping_sub(1 + x), false),
                    3 => (rxb - 1, true),
                    _ => (rxb, false),
                };
                let flags = if ack { 0x14 } else { 0x04 };
                s.send(tcp_frame(
                    peer(c),
                    rcv_nxt.wrapping_add(off),
                    ack0,
                    flags,
                    wfield,
                    &[],
                    &[],
                ));
                if inside {
                    challenges += 1;
                } else {
                    rst_dropped += 1;
                }
                (
                    inside.then_some(true),
                    format!("step {n}: a RST at RCV.NXT + {} (window {rxb})", off as i32),
                )
            }
            Step::Beyond { x, len } => {
                let off = rxb.wrapping_add(u32::from(x) % rxb);
                let junk: Vec<u8> = (0..1 + len % 64).map(|_| rng.next_u64() as u8).collect();
                s.send(tcp_frame(
                    peer(c),
                    rcv_nxt.wrapping_add(off),
                    ack0,
                    0x18,
                    wfield ^ 0x10,
                    &[],
                    &junk,
                ));
                m.dropped += 1;
                (
                    Some(true),
                    format!(
                        "step {n}: a segment at RCV.NXT + {off} (the window at most {rxb}), window field {:#x}",
                        wfield ^ 0x10
                    ),
                )
            }
            Step::Syn { off, ack } => {
                let seq = rcv_nxt.wrapping_add(u32::from(off)).wrapping_sub(32768);
                let junk: Vec<u8> = (0..off % 64).map(|_| rng.next_u64() as u8).collect();
                let flags = if ack { 0x12 } else { 0x02 };
                s.send(tcp_frame(peer(c), seq, ack0, flags, wfield, &[], &junk));
                challenges += 1;
                (
                    Some(true),
                    format!("step {n}: a SYN at RCV.NXT + {}", i32::from(off) - 32768),
                )
            }
            Step::Ack { seg, class, x } => {
                let i = usize::from(seg) % offs.len();
                let (a, b) = offs[i];
                let x = u32::from(x);
                let (off, ok) = match class % 5 {
                    0 => (0u32.wrapping_sub(max_wnd), true),
                    1 => (0u32.wrapping_sub(max_wnd + 1), false),
                    2 => (0u32.wrapping_sub(1 + x % (max_wnd - 1)), true),
                    3 => (0u32.wrapping_sub(max_wnd + 1 + x), false),
                    _ => (1 + x, false),
                };
                let seq = piss.wrapping_add(1).wrapping_add(a);
                let data: Vec<u8> = if ok {
                    down[a as usize..b as usize].to_vec()
                } else {
                    (a..b).map(|_| rng.next_u64() as u8).collect()
                };
                s.send(tcp_frame(
                    peer(c),
                    seq,
                    ack0.wrapping_add(off),
                    0x18,
                    wfield,
                    &[],
                    &data,
                ));
                let what = format!(
                    "step {n}: segment {i} [{a}, {b}) with ACK SND.UNA + {} (MAX.SND.WND \
                     {max_wnd})",
                    off as i32
                );
                if ok {
                    may_wait = delay != 0 && a == m.nxt && b > m.nxt && m.hole.is_none();
                    let ooo = m.seg(a, b);
                    (Some(ooo || b <= nxt as u32), what)
                } else {
                    challenges += 1;
                    (Some(true), what)
                }
            }
            Step::Foreign { class, x } => {
                let lport = LOCAL_PORT_BASE as u16 + c as u16;
                let nc = s.env.n as u16;
                let (tuple, which) = match class % 4 {
                    0 => (
                        (PEER_IP, 4421u16.wrapping_add(x % 65535), lport),
                        "source port",
                    ),
                    1 => (([10, 0, 0, 3 + (x % 250) as u8], 4420, lport), "source IP"),
                    2 => (
                        (
                            PEER_IP,
                            4420,
                            LOCAL_PORT_BASE as u16 + (c as u16 + 1 + x % (nc - 1)) % nc,
                        ),
                        "local port (a CLOSED connection's)",
                    ),
                    _ => (
                        (PEER_IP, 4420, LOCAL_PORT_BASE as u16 + nc + x % 1000),
                        "local port (no connection's)",
                    ),
                };
                let junk: Vec<u8> = (0..1 + x % 300).map(|_| rng.next_u64() as u8).collect();
                // No connection's: answered by <SEQ=SEG.ACK><CTL=RST> (RFC 9293 3.10.7.1),
                // the connection unharmed.
                let f = tcp_frame(tuple, rcv_nxt, ack0, 0x18, wfield, &[], &junk);
                rst_answer = PeerSeg::parse(&f);
                s.send(f);
                closed_rsts += 1;
                (
                    None,
                    format!(
                        "step {n}: {} bytes at RCV.NXT from {:?} port {} to port {}: another {which}, \
                         to be answered by a RST",
                        junk.len(),
                        tuple.0,
                        tuple.1,
                        tuple.2
                    ),
                )
            }
            Step::Arp { class, x } => {
                let bogus = [0x02, 0xee, 0, 0, (x >> 8) as u8, x as u8];
                let other = [10, 0, 0, 3 + (x % 250) as u8];
                let eth_ip = [0, 1, 8, 0, 6, 4];
                if class % 5 == 4 {
                    // Taken: learnt (a second entry), answered, the peer's entry untouched.
                    let host = (
                        [0x02, 0xdd, 0, 0, 0, 3 + (x % 2) as u8],
                        [10, 0, 0, 3 + (x % 2) as u8],
                    );
                    s.env
                        .src
                        .borrow_mut()
                        .send(arp_frame(1, eth_ip, host, ENGINE_IP));
                    arp_answer = Some(host);
                    (
                        None,
                        format!("step {n}: an ARP request for our address from {host:02x?}"),
                    )
                } else {
                    let (op, hp, tpa) = match class % 5 {
                        0 => (1, eth_ip, other),
                        1 => (2, eth_ip, other),
                        2 => ([0, 3, 4, 8, 9][usize::from(x % 5)], eth_ip, ENGINE_IP),
                        _ => {
                            let mut hp = eth_ip;
                            hp[usize::from(x % 4) + 1] ^= 1 << (x % 7);
                            (1 + x % 2, hp, ENGINE_IP)
                        }
                    };
                    s.env
                        .src
                        .borrow_mut()
                        .send(arp_frame(op, hp, (bogus, PEER_IP), tpa));
                    others += 1;
                    (
                        None,
                        format!(
                            "step {n}: an ARP frame (operation {op}, fields {hp:02x?}) from the \
                             peer's address with MAC {bogus:02x?} for {tpa:?}"
                        ),
                    )
                }
            }
        };
        let Some(dup) = answer else {
            let end = s.env.sim.cycle() + 2 * QUIET + 2 * u64::from(rxb.min(2000));
            while s.env.sim.cycle() < end {
                s.step()?;
            }
            if let Some(seg) = rst_answer {
                let f = s.env.engine_frames.last().cloned().unwrap_or_default();
                match s.pop() {
                    Some(_) if seg.answered_by(&f) => {}
                    x => {
                        return Err(format!(
                            "{what}: must be answered by the RST {:x?} (RFC 9293 3.10.7.1), \
                             got {x:?}",
                            seg.rst_answer()
                        ))
                    }
                }
            }
            if let Some(x) = s.pop() {
                return Err(format!("{what}: must be dropped unanswered, but got {x:?}"));
            }
            let want = u32::from(arp_answer.is_some());
            if s.arps - arps != want {
                return Err(format!(
                    "{what}: {} ARP frames from the engine, want {want}",
                    s.arps - arps
                ));
            }
            if let Some((mac, ip)) = arp_answer {
                let f = &s.last_arp;
                if f[0..6] != mac || f[21] != 2 || f[32..38] != mac || f[38..42] != ip {
                    return Err(format!("{what}: the engine's answer is {f:02x?}"));
                }
            }
            continue;
        };
        let (at, r) = s.next_seg_at(5000 + delay * TICK, &what)?;
        // RFC 9293 3.8.6.3, RFC 5681 4.2: new in-order data may wait for the delayed ACK
        // (`ack_delay` ticks at most), anything else is answered at once.
        let took = at - s.last_in();
        let limit = if may_wait {
            AT_ONCE + delay * TICK
        } else {
            AT_ONCE
        };
        if took > limit {
            return Err(format!(
                "{what}: answered {took} cycles after its last beat, want at most {limit} \
                 ({}; delayed ACK {delay} ticks of {TICK} cycles)",
                if may_wait {
                    "new in-order data: the delayed ACK's time"
                } else {
                    "at once"
                }
            ));
        }
        let want = piss.wrapping_add(1).wrapping_add(m.nxt);
        if r.flags != 0x10 || !r.data.is_empty() || r.ack != want {
            return Err(format!(
                "{what}: the engine answered {r:?}, want a pure ACK of {want:#x} (RCV.NXT at \
                 stream offset {}, kept range {:?})",
                m.nxt, m.hole
            ));
        }
        if dup && (r.ack, r.wnd) != last {
            return Err(format!(
                "{what}: a duplicate ACK must repeat the last one, (ACK, window) {last:x?}, \
                 the engine sent {:x?}",
                (r.ack, r.wnd)
            ));
        }
        last = (r.ack, r.wnd);
    }
    let total = down.len();
    s.settle(
        &|e: &Env| e.app().borrow().got[c].len() == total,
        "the stream's end",
    )?;
    if s.env.app().borrow().got[c] != down {
        return Err("the engine delivered bytes other than the peer's stream".into());
    }

    // 1b. Two full-sized segments (RMSS: the MSS CSR) back to back: the second is ACKed at
    // once, delayed ACK or not (RFC 9293 3.8.6.3, RFC 5681 4.2: an ACK at least every second
    // full-sized segment); before it, at most an ACK of the first (a window update, say),
    // after which the second is the only one unacknowledged and may wait.
    while s.pop().is_some() {}
    let mut first_acked = false;
    let fs = mss as usize;
    let full: Vec<u8> = (0..2 * fs).map(|_| rng.next_u64() as u8).collect();
    let at_seq = |off: usize| piss.wrapping_add(1).wrapping_add(off as u32);
    for h in 0..2 {
        let f = tcp_frame(
            peer(c),
            at_seq(total + h * fs),
            ack0,
            0x18,
            wfield,
            &[],
            &full[h * fs..(h + 1) * fs],
        );
        s.send(f);
    }
    loop {
        let (at, r) = s.next_seg_at(
            2 * AT_ONCE + delay * TICK + 4 * fs as u64,
            "the ACK of two full-sized segments",
        )?;
        if r.flags == 0x10 && r.data.is_empty() && r.ack == at_seq(total + 2 * fs) {
            let took = at - s.last_in();
            let limit = if first_acked {
                AT_ONCE + delay * TICK
            } else {
                AT_ONCE
            };
            if took > limit {
                return Err(format!(
                    "two full-sized segments ({fs} bytes each) back to back: the ACK of the \
                     second came {took} cycles after its last beat, want at most {limit} (the \
                     first ACKed before: {first_acked}; an ACK at least every second \
                     full-sized segment; delayed ACK {delay} ticks)"
                ));
            }
            break;
        }
        if r.flags != 0x10 || !r.data.is_empty() || r.ack != at_seq(total + fs) {
            return Err(format!(
                "two full-sized segments ({fs} bytes each) back to back: the engine sent \
                 {r:?}, want a pure ACK of the first ({:#x}) or of both ({:#x})",
                at_seq(total + fs),
                at_seq(total + 2 * fs)
            ));
        }
        first_acked = true;
    }
    let total = total + 2 * fs;
    s.settle(
        &|e: &Env| e.app().borrow().got[c].len() == total,
        "the two full-sized segments",
    )?;
    if s.env.app().borrow().got[c][total - 2 * fs..] != full[..] {
        return Err("the engine delivered bytes other than the two full-sized segments".into());
    }

    // The peer's window as the engine took it from the peer's segments: scaled by the shift
    // the peer offered (none after an End of Option List), so the same as the SYN-ACK's.
    let snd_wnd = s.env.read(creg(c, 36));
    if snd_wnd != pwnd {
        return Err(format!(
            "SND.WND is {snd_wnd:#x} after the peer's segments of window field {wfield:#x}, \
             want {pwnd:#x} (the peer's window-scale option: {:?}, SYN-ACK options {opts:02x?})",
            input.peer_ws
        ));
    }

    // 2. Sending: the first flight, held until the engine stops (its initial window).
    let pseq = piss.wrapping_add(1).wrapping_add(total as u32);
    let start = iss.wrapping_add(1);
    let stream_end = start.wrapping_add(u32::from(input.tx_bytes));
    let rel = |x: u32| x.wrapping_sub(start);
    s.env.app().borrow_mut().to_send[c] = up.iter().copied().collect();
    // RFC 5681's bound on what may be in flight, past SND.UNA (the SYN went once).
    let mut cc = Cwnd::new(mss.min(1460), false);
    let mut firsts: Vec<Seg> = Vec::new();
    let mut sent_end = start;
    let mut last_new = s.env.sim.cycle();
    while sent_end != stream_end && s.env.sim.cycle() < last_new + GAP {
        s.step()?;
        while let Some(x) = s.pop() {
            if x.data.is_empty() {
                continue;
            }
            if x.seq != sent_end {
                return Err(format!(
                    "a retransmission at offset {} before any ACK (RTO is 600000 cycles)",
                    rel(x.seq)
                ));
            }
            sent_end = x.seq.wrapping_add(x.data.len() as u32);
            last_new = s.env.sim.cycle();
            firsts.push(x);
        }
    }
    if firsts.is_empty() {
        return Err(format!(
            "the engine sent none of its {} bytes",
            input.tx_bytes
        ));
    }
    if u64::from(rel(sent_end)) > cc.limit() {
        return Err(format!(
            "the first flight is {} bytes, past the initial window of {} (RFC 5681 3.1, SMSS {})",
            rel(sent_end),
            cc.limit(),
            cc.smss
        ));
    }
    // The first transmissions the peer drops: those holding the drawn stream offsets; one is
    // dropped only when three that are not dropped wait behind it (so its third duplicate ACK
    // comes) and it does not start at `recover` (RFC 6582: duplicate ACKs that do not pass
    // `recover` start no fast retransmit, and the RTO is far away).
    let lost: Vec<u32> = input
        .lost
        .iter()
        .map(|&f| u32::from(f) * u32::from(input.tx_bytes) / 256)
        .collect();
    let holds_lost = |x: &Seg| {
        let a = rel(x.seq);
        lost.iter().any(|&o| a <= o && o < a + x.data.len() as u32)
    };
    let mut dropped: Vec<usize> = Vec::new();
    let mut n_first = firsts.len();
    // The peer's receiver: received ranges (offsets), cumulative ACK.
    let mut have = vec![false; usize::from(input.tx_bytes)];
    let mut queue: VecDeque<(Seg, Option<usize>)> = firsts
        .into_iter()
        .enumerate()
        .map(|(i, x)| (x, Some(i)))
        .collect();
    let mut ack = start;
    // RFC 6582's `recover`, the ISS at first.
    let mut recover = iss;
    let mut dups_sent = 0u32;
    let mut dups_episode = 0u32;
    let mut in_rec = false;
    let mut fast_seen = 0u32;
    // A retransmission is due by this cycle (third duplicate ACK, partial ACK).
    let mut due: Option<(u64, u32, &str)> = None;
    let mut dues = 0u32;
    // The furthest a new segment may end (SND.UNA + the bound) after each ACK, with the
    // cycle it was sent: a segment seen now may have been chosen up to `LATE` cycles earlier.
    let mut limits: VecDeque<(u64, u64)> = VecDeque::new();
    limits.push_back((s.env.sim.cycle(), cc.limit()));
    loop {
        // Take what arrived: retransmissions first in the queue.
        while let Some((seen, x)) = s.inbox.pop_front() {
            if x.data.is_empty() {
                continue;
            }
            let a = rel(x.seq);
            tracing::trace!("cycle {seen}: engine segment at {a} len {}", x.data.len());
            if (x.seq.wrapping_sub(sent_end) as i32) < 0 {
                if !(in_rec || dups_episode >= 3) {
                    return Err(format!(
                        "cycle {}: a retransmission at offset {a} after {dups_episode} duplicate \
                         ACKs (a fast retransmit needs 3; the RTO is far away)",
                        s.env.sim.cycle()
                    ));
                }
                if x.seq != ack {
                    return Err(format!(
                        "a fast retransmission at offset {a}, not at SND.UNA (offset {})",
                        rel(ack)
                    ));
                }
                fast_seen += 1;
                in_rec = true;
                due = None;
                queue.push_front((x, None));
            } else {
                while limits.len() > 1 && limits[1].0 + LATE < seen {
                    limits.pop_front();
                }
                let lim = limits
                    .iter()
                    .filter(|l| l.0 <= seen)
                    .map(|l| l.1)
                    .max()
                    .unwrap_or(0);
                let end_rel = u64::from(rel(x.seq)) + x.data.len() as u64;
                if end_rel > lim {
                    return Err(format!(
                        "cycle {seen}: a new segment ends at offset {end_rel}, past SND.UNA \
                         (offset {}) + the congestion window RFC 5681 allows ({}, SMSS {}; \
                         furthest allowed in the last {LATE} cycles: offset {lim})",
                        rel(ack),
                        cc.limit(),
                        cc.smss
                    ));
                }
                sent_end = x.seq.wrapping_add(x.data.len() as u32);
                queue.push_back((x, Some(n_first)));
                n_first += 1;
            }
        }
        if let Some((t, at, why)) = due {
            if s.env.sim.cycle() > t {
                let cn = s.env.counters();
                let regs: Vec<u32> = [12, 16, 20, 24, 36]
                    .iter()
                    .map(|&o| s.env.read(creg(c, o)))
                    .collect();
                return Err(format!(
                    "no retransmission of offset {} within {GAP} cycles of {why} ({dups_sent} \
                     duplicate ACKs sent; engine counters {cn:?}; state, SND.UNA, SND.NXT, \
                     RCV.NXT, SND.WND {regs:x?}; offsets from {start:#x})",
                    rel(at)
                ));
            }
        }
        // The peer takes nothing more while a retransmission is due: new data may come
        // first, but the retransmission must answer the ACK that asked for it.
        if due.is_some() {
            s.step()?;
            continue;
        }
        if ack == stream_end && queue.is_empty() {
            break;
        }
        let Some((x, idx)) = queue.pop_front() else {
            if due.is_none() {
                return Err(format!(
                    "the engine stopped: ACK at offset {}, of {} bytes",
                    rel(ack),
                    input.tx_bytes
                ));
            }
            s.step()?;
            continue;
        };
        if let Some(i) = idx {
            let behind = queue
                .iter()
                .filter(|(y, j)| j.is_some() && !holds_lost(y))
                .count();
            if holds_lost(&x) && behind >= 3 && x.seq != recover {
                dropped.push(i);
                continue;
            }
        }
        let a = rel(x.seq) as usize;
        for (j, &b) in x.data.iter().enumerate() {
            if up[a + j] != b {
                return Err(format!("the engine sent a wrong byte at offset {}", a + j));
            }
            have[a + j] = true;
        }
        let cum = have.iter().position(|&h| !h).unwrap_or(have.len()) as u32;
        let new_ack = start.wrapping_add(cum);
        if new_ack == ack && ack != sent_end {
            // A duplicate while data is outstanding (once everything is ACKed, a copy the peer
            // already had is ACKed again, but that is no duplicate ACK for the engine).
            dups_sent += 1;
            dups_episode += 1;
            if dups_episode == 3 && !in_rec && (ack.wrapping_sub(recover) as i32) > 0 {
                due = Some((s.env.sim.cycle() + GAP, ack, "the third duplicate ACK"));
                dues += 1;
                cc.fast_retransmit(u64::from(sent_end.wrapping_sub(ack)));
                recover = sent_end;
            } else {
                cc.dup();
            }
        } else {
            dups_episode = 0;
            let partial = in_rec && (new_ack.wrapping_sub(recover) as i32) < 0;
            cc.ack(u64::from(new_ack.wrapping_sub(ack)), !partial);
            if partial {
                due = Some((s.env.sim.cycle() + GAP, new_ack, "a partial ACK"));
                dues += 1;
            } else {
                in_rec = false;
            }
        }
        ack = new_ack;
        tracing::trace!(
            "cycle {}: peer ACK {} (segment at {} len {}), dups {dups_episode}, due {due:?}, \
             window {}",
            s.env.sim.cycle(),
            rel(ack),
            a,
            x.data.len(),
            cc.limit()
        );
        s.send(tcp_frame(peer(c), pseq, ack, 0x10, wfield, &[], &[]));
        limits.push_back((s.env.sim.cycle(), u64::from(rel(ack)) + cc.limit()));
        let until = s.env.sim.cycle() + GAP;
        while s.env.sim.cycle() < until && (s.inbox.is_empty() || due.is_none()) {
            s.step()?;
        }
    }
    if s.env.app().borrow().sent[c] != up.len() {
        return Err("the application's stream was not all taken".into());
    }
    s.settle(&|_| true, "the end")?;
    let cn = s.env.counters();
    let want = [
        (cnt::OOO_KEPT, m.kept, "ooo_kept"),
        (cnt::OOO_DROPPED, m.dropped, "ooo_dropped"),
        (cnt::DUP_ACKS, dups_sent, "dup_acks"),
        (cnt::FAST_RETRANS, dues, "fast_retrans"),
        (cnt::RETRANS, dues, "retrans"),
        (cnt::RTO_FIRES, 0, "rto_fires"),
        (cnt::DROP_CSUM, bad, "drop_csum"),
        (cnt::CHALLENGE_ACKS, challenges, "challenge_acks"),
        (cnt::RST_DROPPED, rst_dropped, "rst_dropped"),
        (cnt::RST_IN, 0, "rst_in"),
        (cnt::RST_OUT, 0, "rst_out"),
        (cnt::DROP_OTHER, others, "drop_other"),
        (cnt::SEG_OUT, s.env.view.tcp, "seg_out"),
        (cnt::RST_CLOSED, closed_rsts, "rst_closed"),
    ];
    if fast_seen != dues {
        return Err(format!(
            "{fast_seen} fast retransmissions seen, {dues} due (third duplicate ACKs and \
             partial ACKs)"
        ));
    }
    for (i, w, name) in want {
        if cn[i] != w {
            return Err(format!(
                "counter {name} is {}, want {w} (counters {cn:?}; {fast_seen} fast \
                 retransmissions seen, first transmissions dropped {dropped:?} of {n_first})",
                cn[i]
            ));
        }
    }

    // 2b. Idle for more than an RTO with every byte ACKed, then more data: the first flight
    // must fit the restart window, min(cwnd, IW) (RFC 5681 4.1), and every later one what the
    // ACKs open from there.
    let rto_ticks = u64::from(s.env.read(creg(c, 28)) >> 16);
    let idle_end = s.env.sim.cycle() + (rto_ticks + 2) * 20;
    while s.env.sim.cycle() < idle_end {
        s.step()?;
    }
    if let Some(x) = s.pop() {
        return Err(format!(
            "the engine sent {x:?} while idle with every byte ACKed"
        ));
    }
    cc.restart();
    let more: Vec<u8> = (0..5 * mss as usize + 100)
        .map(|_| rng.next_u64() as u8)
        .collect();
    s.env.app().borrow_mut().to_send[c] = more.iter().copied().collect();
    s.env.view.conns[c].data.extend_from_slice(&more);
    let (mut got, mut acked) = (0usize, 0usize);
    loop {
        s.flight(|x| {
            let a = x.seq.wrapping_sub(stream_end) as usize;
            if a != got || a + x.data.len() > more.len() {
                return Err(format!(
                    "after the idle time a segment at offset {a} (length {}) of the {} new \
                     bytes, want offset {got} (nothing was lost)",
                    x.data.len(),
                    more.len()
                ));
            }
            if x.data[..] != more[a..a + x.data.len()] {
                return Err(format!(
                    "after the idle time the segment at offset {a} carries other bytes"
                ));
            }
            got += x.data.len();
            if (got - acked) as u64 > cc.limit() {
                return Err(format!(
                    "{} bytes in flight past SND.UNA after more than an RTO ({rto_ticks} \
                     ticks) idle and {acked} bytes ACKed since: past the {} RFC 5681 \
                     allows (4.1's restart window min(cwnd, IW), then slow start; SMSS {})",
                    got - acked,
                    cc.limit(),
                    cc.smss
                ));
            }
            Ok(())
        })?;
        if got == acked {
            if got == more.len() {
                break;
            }
            return Err(format!(
                "after the idle time the engine stopped at {got} of {} new bytes",
                more.len()
            ));
        }
        ack = stream_end.wrapping_add(got as u32);
        s.send(tcp_frame(peer(c), pseq, ack, 0x10, wfield, &[], &[]));
        cc.ack((got - acked) as u64, true);
        acked = got;
    }
    if s.env.app().borrow().sent[c] != up.len() + more.len() {
        return Err("the application's new bytes were not all taken".into());
    }
    s.settle(&|_| true, "the end of the new bytes")?;
    let stream_end = sws_phase(&mut s, c, &mut rng, mss, pws, pseq, ack, wfield)?;

    // 3. The end: a RST at RCV.NXT, the firmware's abort, or a close with FIN (`close.rs`).
    let snd_nxt = s.env.read(creg(c, 20));
    if snd_nxt != stream_end {
        return Err(format!(
            "SND.NXT is {snd_nxt:#x} with every byte ACKed, want {stream_end:#x}"
        ));
    }
    let mut t = close::Tally::default();
    let at = close::At {
        c,
        snd: stream_end,
        rcv: pseq,
        wfield,
        pws,
        rxb,
        smss: mss.min(1460),
        tail: full[fs..].to_vec(),
    };
    let snd_max = match input.end % 4 {
        0 => {
            // A RST exactly at RCV.NXT resets the connection, unanswered (RFC 5961 3.2).
            s.send(tcp_frame(peer(c), pseq, ack, 0x04, wfield, &[], &[]));
            let stw = s.silent_state(c, "a RST at RCV.NXT was answered")?;
            if stw & 0x31f != 0x110 {
                return Err(format!(
                    "after a RST at RCV.NXT the state CSR is {stw:#x}, want CLOSED, failed, \
                     reason 1 (0x110)"
                ));
            }
            t.rst_in = 1;
            stream_end
        }
        1 => {
            // The firmware aborts: one RST at SND.NXT, no data (RFC 9293 3.10.5), CLOSED.
            close::expect_abort_rst(&mut s, c, (snd_nxt, pseq), "ESTABLISHED")?;
            let stw = s.silent_state(c, "after an abort's RST")?;
            if stw & 0x31f != 0x010 {
                return Err(format!(
                    "after an abort the state CSR is {stw:#x}, want CLOSED, failed, reason 0 \
                     (0x010)"
                ));
            }
            t.rst_out = 1;
            stream_end
        }
        2 => close::peer_first(&mut s, &at, &input.close, &mut rng, &mut t)?,
        _ => close::simultaneous(&mut s, &at, &input.close, &mut rng, &mut t)?,
    };
    let cn = s.env.counters();
    let want = [
        (cnt::RST_IN, t.rst_in, "rst_in"),
        (cnt::RST_OUT, t.rst_out, "rst_out"),
        (cnt::RST_DROPPED, rst_dropped + t.rst_dropped, "rst_dropped"),
        (
            cnt::CHALLENGE_ACKS,
            challenges + t.challenges,
            "challenge_acks",
        ),
        (cnt::RTO_FIRES, t.rto_fires, "rto_fires"),
        (cnt::RETRANS, dues + t.retrans, "retrans"),
        (cnt::FAST_RETRANS, dues, "fast_retrans"),
        (cnt::DUP_ACKS, dups_sent + t.dup_acks, "dup_acks"),
        (cnt::RST_CLOSED, closed_rsts + t.closed_rsts, "rst_closed"),
        (cnt::SEG_OUT, s.env.view.tcp, "seg_out"),
    ];
    for (i, w, name) in want {
        if cn[i] != w {
            return Err(format!(
                "at the end (end {}, {t:?}): counter {name} is {}, want {w} (counters {cn:?})",
                input.end % 4,
                cn[i]
            ));
        }
    }

    // 4. The other connection opens: the ARP cache still holds the peer's MAC (no frame the
    // engine did not take changed it), so its SYN goes there without an ARP request.
    let o = 1 - c;
    let reqs = s.arp_req;
    s.env.write(creg(o, 8), 1);
    let syn = s.next_seg(
        5000,
        "the other connection's SYN, from the ARP cache (no ARP request)",
    )?;
    if syn.flags != 0x02 || s.arp_req != reqs {
        return Err(format!(
            "the other connection's open: {} ARP requests, then {syn:?} (want a SYN from the \
             ARP cache)",
            s.arp_req - reqs
        ));
    }

    // 5. The first connection opens again on the same 4-tuple: its ISS must lie past every
    // sequence number its last incarnation used (RFC 9293 3.4.1; `models::tcp` checks which
    // value: M + F, or SND.MAX + 1 when M + F falls in the old range). The other connection's
    // SYN is not retransmitted this soon (the RTO is far longer).
    s.env.view.reopen(c, snd_max);
    s.env.write(creg(c, 8), 1);
    let syn = s.next_seg(5000, "the first connection's SYN when it opens again")?;
    let sport = s
        .env
        .engine_frames
        .last()
        .map(|f| u16::from_be_bytes([f[34], f[35]]));
    if syn.flags != 0x02 || sport != Some((LOCAL_PORT_BASE + c as u32) as u16) {
        return Err(format!(
            "the first connection opened again: {syn:?} from port {sport:?}, want its SYN"
        ));
    }
    if syn.seq.wrapping_sub(snd_max) as i32 <= 0 {
        return Err(format!(
            "the first connection's new ISS {:#x} is not past its last incarnation's SND.MAX \
             {snd_max:#x}",
            syn.seq
        ));
    }

    // 6. The other connection, still in SYN-SENT, is aborted: nothing is sent (RFC 9293
    // 3.10.5: SYN-SENT deletes the TCB), CLOSED, failed (the contract: an abort), reason 0.
    s.env.write(creg(o, 8), 4);
    let stw = s.silent_state(o, "the firmware's abort in SYN-SENT")?;
    if stw & 0x31f != 0x010 {
        return Err(format!(
            "after an abort in SYN-SENT the state CSR is {stw:#x}, want CLOSED, failed, reason 0 \
             (0x010)"
        ));
    }
    Ok(())
}

/// 2c. Sender SWS avoidance (RFC 9293 3.8.6.2.1, MUST-38), every byte ACKed up to `ack`: the
/// peer shrinks its window to W < SMSS (whole units of its scale; skipped when a unit is SMSS or
/// more). Bytes that all fit go at once (everything queued fits). Then more than fits is
/// queued: what fits is under an MSS and under half MAX.SND.WND, so nothing may go until the
/// override timeout (the persist timer: the connection's RTO), which sends exactly W bytes.
/// The peer then opens its window again and every byte follows in full-sized segments but the
/// last. Returns the new end of the engine's stream (everything ACKed).
#[allow(clippy::too_many_arguments)]
fn sws_phase(
    s: &mut Script,
    c: usize,
    rng: &mut Rng,
    smss: u32,
    pws: u8,
    pseq: u32,
    ack: u32,
    wfield: u16,
) -> Result<u32, String> {
    let unit = 1u32 << pws;
    if unit >= smss {
        return Ok(ack);
    }
    let w = unit * (1 + rng.below(u64::from((smss - 1) / unit)) as u32);
    let small = (w >> pws) as u16;
    s.send(tcp_frame(peer(c), pseq, ack, 0x10, small, &[], &[]));
    // Everything queued fits: it goes at once, in segments within the window.
    let first = 1 + rng.below(u64::from(w)) as usize;
    let total = first + 2 * smss as usize + rng.below(u64::from(smss)) as usize;
    let bytes: Vec<u8> = (0..total).map(|_| rng.next_u64() as u8).collect();
    s.env.view.conns[c].data.extend_from_slice(&bytes);
    s.env.app().borrow_mut().to_send[c] = bytes[..first].iter().copied().collect();
    let mut got = 0usize;
    let end = s.env.sim.cycle() + 2 * AT_ONCE;
    while got < first {
        if s.env.sim.cycle() > end {
            return Err(format!(
                "SWS: {first} bytes queued, all within the peer's window of {w}, and only {got} \
                 went within {} cycles",
                2 * AT_ONCE
            ));
        }
        s.step()?;
        while let Some(x) = s.pop() {
            let a = x.seq.wrapping_sub(ack) as usize;
            if x.data.is_empty() {
                continue;
            }
            if a != got || a + x.data.len() > first {
                return Err(format!(
                    "SWS: a segment at offset {a} ({} bytes), want offset {got} of {first}",
                    x.data.len()
                ));
            }
            got += x.data.len();
        }
    }
    // More than fits: queued whole behind a closed window (the application hands the engine
    // a beat a cycle, and while the first beats were all there was, they would fit), then
    // the window opens to W: held until the override timeout, which sends what fits.
    let ack1 = ack.wrapping_add(first as u32);
    s.send(tcp_frame(peer(c), pseq, ack1, 0x10, 0, &[], &[]));
    s.settle(
        &|_| true,
        "SWS: the bytes that fitted ACKed, the window closed",
    )?;
    if let Some(x) = s.pop().filter(|x| !x.data.is_empty()) {
        return Err(format!("SWS: {x:?} after every byte was ACKed"));
    }
    let rto_ticks = u64::from(s.env.read(creg(c, 28)) >> 16);
    let queued = s.env.sim.cycle();
    s.env.app().borrow_mut().to_send[c] = bytes[first..].iter().copied().collect();
    let rest = total - first;
    let handed = s.env.app().borrow().sent[c] + rest;
    while s.env.app().borrow().sent[c] < handed {
        if s.env.sim.cycle() > queued + 5000 {
            return Err("SWS: the application could not hand the engine its bytes".into());
        }
        s.step()?;
    }
    s.send(tcp_frame(peer(c), pseq, ack1, 0x10, small, &[], &[]));
    let opened = s.env.sim.cycle();
    let late = opened + (rto_ticks + 2) * TICK + AT_ONCE;
    let seg = loop {
        if s.env.sim.cycle() > late {
            return Err(format!(
                "SWS: {rest} bytes queued behind a window of {w} (SMSS {smss}): nothing sent \
                 by the override timeout ({rto_ticks} ticks of {TICK} cycles)"
            ));
        }
        s.step()?;
        if let Some(x) = s.pop() {
            if !x.data.is_empty() {
                break x;
            }
        }
    };
    // The persist timer ran from the bytes' arrival (closed window) or from the window update.
    let at = s.env.sim.cycle() - queued;
    let a = seg.seq.wrapping_sub(ack1);
    if at < (rto_ticks - 1) * TICK || a != 0 || seg.data.len() != w as usize {
        return Err(format!(
            "SWS: {rest} bytes queued behind a window of {w} (SMSS {smss}, MAX.SND.WND far \
             larger): a segment of {} bytes at offset {a} came {at} cycles later; want none \
             before the override timeout ({rto_ticks} ticks of {TICK} cycles), then exactly \
             the {w} bytes that fit (RFC 9293 3.8.6.2.1)",
            seg.data.len()
        ));
    }
    // The window opens: the rest in full-sized segments but the last, ACKed flight by flight.
    let mut got = w as usize;
    let mut acked = got;
    loop {
        let nack = ack1.wrapping_add(acked as u32);
        s.send(tcp_frame(peer(c), pseq, nack, 0x10, wfield, &[], &[]));
        s.flight(|x| {
            let a = x.seq.wrapping_sub(ack1) as usize;
            let l = x.data.len();
            if a != got || a + l > rest || (l != smss as usize && a + l != rest) {
                return Err(format!(
                    "SWS: with the window open again a segment at offset {a} of {l} bytes; \
                     want offset {got} and {smss} bytes (SMSS) unless it is the last of the \
                     {rest}"
                ));
            }
            got += l;
            Ok(())
        })?;
        if got == acked {
            return Err(format!(
                "SWS: with the window open again the engine stopped at {got} of {rest} bytes"
            ));
        }
        acked = got;
        if got == rest {
            let end = ack1.wrapping_add(rest as u32);
            s.send(tcp_frame(peer(c), pseq, end, 0x10, wfield, &[], &[]));
            s.settle(&|_| true, "SWS: every byte ACKed")?;
            return Ok(end);
        }
    }
}

pub struct TcpRulesProp;

impl Property for TcpRulesProp {
    type Input = Input;
    const NAME: &'static str = "tcp_rules";

    fn strategy() -> BoxedStrategy<Input> {
        (
            prop::collection::vec(1u16..700, 2..10),
            prop::collection::vec(
                prop_oneof![
                    6 => any::<u8>().prop_map(Step::Seg),
                    1 => Just(Step::Probe),
                    2 => any::<u8>().prop_map(Step::Bad),
                    2 => (any::<u8>(), any::<u16>(), any::<bool>())
                        .prop_map(|(class, x, ack)| Step::Rst { class, x, ack }),
                    1 => (any::<u16>(), any::<bool>()).prop_map(|(off, ack)| Step::Syn { off, ack }),
                    1 => (any::<u16>(), any::<u8>()).prop_map(|(x, len)| Step::Beyond { x, len }),
                    2 => (any::<u8>(), any::<u8>(), any::<u16>())
                        .prop_map(|(seg, class, x)| Step::Ack { seg, class, x }),
                    2 => (any::<u8>(), any::<u16>())
                        .prop_map(|(class, x)| Step::Foreign { class, x }),
                    1 => (any::<u8>(), any::<u16>()).prop_map(|(class, x)| Step::Arp { class, x }),
                ],
                0..16,
            ),
            (
                prop::option::of(0u8..15),
                prop::option::of((any::<u8>(), any::<u8>())),
            ),
            (any::<u8>(), any::<u8>()),
            (1u16..20000, prop::collection::vec(any::<u8>(), 0..3)),
            (any::<u64>(), any::<u8>(), any::<u8>(), any::<u8>()),
            close::strategy(),
        )
            .prop_map(
                |(seg_lens, steps, (peer_ws, eol), (mss, wscale), (tx_bytes, lost), (seed, conn, end, ack_delay), close)| Input {
                    seg_lens,
                    steps,
                    peer_ws,
                    eol,
                    conn,
                    end,
                    close,
                    mss,
                    wscale,
                    tx_bytes,
                    lost,
                    ack_delay,
                    seed,
                },
            )
            .boxed()
    }

    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        run(input, waves)
    }
}
