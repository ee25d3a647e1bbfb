//! `testbench bench --suite tcp`: the TCP/IP engine (`tcp_*`) measured through the `tcp`
//! suite's environment (`suites::tcp::Env`: every frame the engine sends passes `models::tcp`'s
//! golden check while it is measured, every byte is compared at the end) against smoltcp over
//! the suite's link, in simulated cycles of the engine's clock (deterministic for the seed).
//! The Ethernet source has no idle cycles and the sink no backpressure; the engine's
//! application writes full beats and never withholds `rx_space`. One connection carries data.
//!
//! - Goodput, no loss, at MSS 1460 and 8960, the engine sending (tx: smoltcp receives) and
//!   receiving (rx: smoltcp sends). Counted from the first beat of the first data segment to
//!   the cycle the last byte reaches the receiving application. Limits, in bytes per cycle:
//!   the wire-format limit of the 64-bit port at one beat per cycle, `8 * MSS / (MSS + 54)`
//!   (Ethernet 14, IPv4 20, TCP 20 per segment; no FCS, preamble or gap on this stream), and
//!   1 GbE at 125 MHz (the board's link: one byte per cycle, `MSS / (MSS + 78)` with preamble
//!   and SFD 8, FCS 4 and the gap 12). And the engine's own bound (hdl-gen/src/tcp/mod.rs,
//!   "Timing"): sending is a beat a cycle with 5 idle cycles between frames (the next segment
//!   chosen, its payload's checksum from the prefix sums in 3, its first beat fetched),
//!   `8 MSS / (MSS + 54 + 40)`; receiving takes a beat a cycle, but the beat of bytes 48-55
//!   in two cycles (the headers end at byte 54), and hands `rx` up to 8 bytes a cycle,
//!   `MSS / (ceil((MSS + 54) / 8) + 1)`. smoltcp sends without Nagle, as NVMe/TCP peers run
//!   (Linux's nvme-tcp host and target set `TCP_NODELAY`).
//!   MSS 8960 needs more than the shipped buffers (8192 bytes each way): a segment is at
//!   most what the transmit buffer holds, and the receive window at most the receive buffer.
//!   The buffers are read from the engine's `params` CSR, so `bash ci/bench-tcp.sh
//!   configs/jumbo.toml` measures the same rows on a TCP top with 32 KiB buffers.
//! - Goodput under loss (0.1 % and 1 % of the frames, each direction, data and ACKs alike),
//!   the engine sending to smoltcp, as a fraction of its loss-free figure; beside it two
//!   smoltcp interfaces through the same link model (the same `Lossy` with the same seeds,
//!   the same smoltcp receiver, sender's buffer the engine's transmit buffer) on the same cycle
//!   clock. Time base: smoltcp runs at `US_PER_CYCLE` = 50 µs of its time per cycle on both
//!   sides, as in the suite, so its timers (1 s minimum RTO = 20 000 cycles, 10 ms delayed
//!   ACK = 200 cycles) are the same number of cycles whichever sender it faces; its frames go
//!   out at the port's rate, one 8-byte beat per cycle, one after the other, as the engine's
//!   source drives them. The engine's timers are CSRs (a tick of 20 cycles, RTO minimum
//!   `RTO_MIN` = 200 ticks = 4000 cycles). smoltcp's sender runs Reno congestion control
//!   (RFC 5681, as the engine; without the feature smoltcp never backs off). A loss pattern is
//!   a few dozen frames, so each row is the mean over `LOSS_SEEDS`, each seed against the same
//!   sender's loss-free run with that seed.
//! - Recovery: one chosen data segment of the engine lost, the cycles from its first beat on
//!   `m_axis` to its retransmission's: a segment in mid-stream (fast retransmit after three
//!   duplicate ACKs) and the last one (nothing follows to be ACKed twice: the RTO).
//! - NVMe/TCP over the engine (`nvme_tcp_ip_*`, `suites::tcp::nvme`, every check of
//!   `tcp_nvme` on): 4 KiB and 128 KiB Reads and Writes, both connections, digests on, the
//!   target on smoltcp. Goodput is the data of all the commands over the cycles from the
//!   engine's first segment with data (the first ICReq) to the last completion; the
//!   wire-format limit is that payload's share of the frame bytes that went by in the data's
//!   direction meanwhile; the fraction of the limit is that direction's busy share of the port.
//!
//! With `--check`, the figures that are reachable gate: each goodput at least 0.9 of the
//! engine's bound. The goals (0.95 and 0.9 of the wire-format limit, ahead of
//! smoltcp under loss) are printed with "met" or "NOT met" and do not gate.

use crate::cli::bench::Goals;
use crate::models::tcp::parse_seg;
use crate::rng::Rng;
use crate::rtl::regs::tcp_csr;
use crate::suites::nvme_tcp::rtl::{bench_scenario, HOLD_BYTES};
use crate::suites::nvme_tcp::scenario::{Cmd, Kind};
use crate::suites::tcp::nvme::{self, Input as NvmeInput};
use crate::suites::tcp::{
    self as suite, cnt, creg, Dev, Env, Faults, Lose, Lossy, Setup, ENGINE_IP, ENGINE_MAC,
    LOCAL_PORT_BASE, PEER_IP, PEER_MAC,
};
use smoltcp::iface::{SocketHandle, SocketSet};
use smoltcp::socket::tcp;
use smoltcp::wire::IpAddress;
use std::cell::RefCell;
use std::rc::Rc;

/// The benchmark's seed (link, drivers, data).
const SEED: u64 = 18;
/// Bytes a cycle of the 64-bit port.
const LANES: f64 = 8.0;
/// Ethernet 14 + IPv4 20 + TCP 20 per segment.
const HDR: f64 = 54.0;
/// 1 GbE's per-frame cost beyond the frame: preamble and SFD 8, FCS 4, gap 12.
const GBE_EXTRA: f64 = 24.0;
/// smoltcp's receive and send buffers facing the engine.
const PEER_RX: usize = 256 * 1024;
const PEER_TX: usize = 64 * 1024;
/// The engine's RTO minimum, ticks of 20 cycles (the suite's).
const RTO_MIN: u32 = 200;

/// The bench's engine set-up at `mss`.
fn setup(mss: u32) -> Setup {
    Setup {
        mss,
        wscale: 0,
        key: (0x1234_5678, 0x9abc_def0),
        rto_min: RTO_MIN,
        retries: 12,
        time_wait: 5000,
    }
}

/// The engine's transmit and receive buffers per connection, bytes, from its `params` CSR: 8192
/// each in the shipped top (`tcp_w64_c2_t8192_r8192_a4_e512`); another configuration's TCP top
/// when the testbench was built with it (`ci/bench-tcp.sh CONFIG`). The smoltcp sender of the
/// loss rows gets the engine's transmit buffer.
fn buffers() -> (usize, usize) {
    let mut env = Env::new(
        None,
        SEED,
        Faults::default(),
        Faults::default(),
        &setup(1460),
    );
    let p = env.read(tcp_csr::PARAMS);
    (1 << (p & 31), 1 << ((p >> 8) & 31))
}

fn wire_limit(mss: f64) -> f64 {
    LANES * mss / (mss + HDR)
}

fn gbe_limit(mss: f64) -> f64 {
    mss / (mss + HDR + GBE_EXTRA)
}

/// An error without the frame bytes a golden-check failure quotes (their count instead).
fn short(e: &str) -> String {
    let Some(i) = e.find("engine frame [") else {
        return e.to_string();
    };
    let from = i + "engine frame ".len();
    let Some(len) = e[from..].find(']') else {
        return e.to_string();
    };
    let bytes = e[from..from + len].split(',').count();
    format!(
        "{}engine frame of {bytes} bytes{}",
        &e[..i],
        &e[from + len + 1..]
    )
}

/// `r`'s value, or `None` when the run failed: a row saying so, and a miss.
fn failed<T>(goals: &mut Goals, what: &str, r: Result<T, String>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            let mark = goals.fail(&format!("{what}: the run failed"));
            println!(
                "  {what}: no figure, the run failed ({mark}): {}",
                short(&e)
            );
            None
        }
    }
}

fn met(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "NOT met"
    }
}

/// What one stream run saw.
struct Flow {
    /// Bytes per cycle.
    goodput: f64,
    cycles: u64,
    /// The largest payload of a data segment.
    largest: usize,
    /// Frames the link lost, both ways.
    lost: u32,
    /// The engine's counters (`retrans`, `rto_fires`, `fast_retrans`, `dup_acks`), when it ran.
    counters: Option<[u32; 4]>,
    /// Data segments the sender sent: (first beat's cycle, sequence number, payload bytes).
    segs: Vec<(u64, u32, usize)>,
    /// Receiving (rx): the engine's pure ACKs, and smoltcp's data segments.
    acks: (usize, usize),
}

fn data(bytes: usize) -> Vec<u8> {
    let mut rng = Rng::new(SEED ^ 0xda7a);
    (0..bytes).map(|_| rng.next_u64() as u8).collect()
}

/// The engine's delayed ACK in the benchmark, in ticks of 20 cycles: 4000 cycles, longer than
/// the receiver takes to take in two full-sized segments (about 480 cycles at MSS 1460), as
/// the reset value (40 ms) is at any clock, and 200 ms on smoltcp's clock (50 µs a cycle):
/// under RFC 5681's 500 ms bound and smoltcp's 1 s RTO minimum. A longer one (2000 ticks,
/// 2 s on smoltcp's clock) let smoltcp's Nagle hold a stream's short last segment while the
/// engine held the ACK of the full one before it, until smoltcp's RTO resent it.
const ACK_DELAY: u32 = 200;

/// `bytes` over the engine's connection 0 and a smoltcp socket, the engine sending (`tx`) or
/// receiving, `ppm` frames per million lost each way, `lose` choosing engine frames to lose,
/// the delayed ACK at `ack_delay` ticks (0: none), the link and the drivers seeded by `seed`.
fn engine_stream(
    tx: bool,
    mss: u32,
    bytes: usize,
    ppm: u32,
    lose: Option<Lose>,
    ack_delay: u32,
    seed: u64,
) -> Result<Flow, String> {
    let mut env = Env::new(
        None,
        seed,
        Faults::default(),
        Faults::default(),
        &setup(mss),
    );
    env.write(tcp_csr::ACK_DELAY, ack_delay);
    env.src.borrow_mut().set_idle(0);
    env.sink.borrow_mut().set_stall(0);
    env.to_peer.drop_ppm = ppm;
    env.to_engine.drop_ppm = ppm;
    env.to_peer.lose = lose;
    // smoltcp's data segments (rx), seen as they enter the link: any yet, the largest, how
    // many.
    let peer_segs = Rc::new(RefCell::new((false, 0usize, 0usize)));
    if !tx {
        let seen = peer_segs.clone();
        env.to_engine.lose = Some(Box::new(move |f| {
            if let Some(s) = parse_seg(f).filter(|s| !s.data.is_empty()) {
                let mut x = seen.borrow_mut();
                *x = (true, x.1.max(s.data.len()), x.2 + 1);
            }
            false
        }));
    }
    if mss > 1460 {
        env.peer_mss(mss, seed);
    }
    let d = data(bytes);
    {
        let app = env.app().clone();
        let mut app = app.borrow_mut();
        app.full_beats = true;
        if tx {
            app.to_send[0] = d.iter().copied().collect();
        }
    }
    if tx {
        env.view.conns[0].data = d.clone();
    }
    let mut s = tcp::Socket::new(
        tcp::SocketBuffer::new(vec![0; PEER_RX]),
        tcp::SocketBuffer::new(vec![0; PEER_TX]),
    );
    // Sending (rx rows) without congestion control, so the rows measure the engine: smoltcp's
    // Reno starts at 2048 bytes, under one and a half segments, and the engine's delayed ACK
    // holds the ACK of a lone segment for its timer (40 000 cycles here): 0.76 of the rx bound.
    s.set_congestion_control(tcp::CongestionControl::None);
    // Without Nagle, as NVMe/TCP peers run (Linux's nvme-tcp host and target set
    // TCP_NODELAY): with it, smoltcp holds a stream's short last segment until every byte
    // before it is ACKed, and the engine's delayed ACK holds the ACK of the lone full segment
    // before it for its timer (4000 cycles, 0.11 of the MSS 1460 rx row).
    s.set_nagle_enabled(false);
    s.listen(4420).map_err(|e| format!("listen: {e:?}"))?;
    let h = env.sockets.add(s);
    env.write(creg(0, 8), 1);
    let mut got = Vec::new();
    let mut off = 0usize;
    let limit = 2_000_000 + 40 * bytes as u64;
    let mut start = None;
    loop {
        let send = if tx { &[][..] } else { &d[..] };
        env.step(&mut |set| peer_io(set, h, send, &mut off, &mut got))?;
        let cycle = env.sim.cycle();
        if start.is_none() && peer_segs.borrow().0 {
            start = Some(cycle);
        }
        let delivered = if tx {
            got.len()
        } else {
            env.app().borrow().got[0].len()
        };
        if delivered >= bytes {
            break;
        }
        if cycle > limit {
            return Err(format!(
                "{} bytes of {bytes} delivered after {cycle} cycles (MSS {mss}, {ppm} ppm lost; counters {:?})",
                delivered,
                env.counters()
            ));
        }
    }
    let end = env.sim.cycle();
    let rx_got = env.app().borrow().got[0].clone();
    if (tx && got != d) || (!tx && rx_got != d) {
        return Err(format!(
            "MSS {mss}: the bytes delivered differ from the bytes sent"
        ));
    }
    let segs: Vec<(u64, u32, usize)> = env
        .sink
        .borrow()
        .frames
        .iter()
        .filter_map(|f| {
            let s = parse_seg(&f.data)?;
            (!s.data.is_empty()).then_some((f.first, s.seq, s.data.len()))
        })
        .collect();
    let pure_acks = env
        .sink
        .borrow()
        .frames
        .iter()
        .filter(|f| parse_seg(&f.data).is_some_and(|s| s.data.is_empty() && s.flags == 0x10))
        .count();
    let peer_data_segs = peer_segs.borrow().2;
    let start = if tx { segs.first().map(|s| s.0) } else { start };
    let start = start.ok_or("no data segment seen")?;
    let cn = env.counters();
    let largest = if tx {
        segs.iter().map(|s| s.2).max().unwrap_or(0)
    } else {
        peer_segs.borrow().1
    };
    Ok(Flow {
        goodput: bytes as f64 / (end - start) as f64,
        cycles: end - start,
        largest,
        lost: env.to_peer.counts[0] + env.to_engine.counts[0],
        counters: Some([
            cn[cnt::RETRANS],
            cn[cnt::RTO_FIRES],
            cn[cnt::FAST_RETRANS],
            cn[cnt::DUP_ACKS],
        ]),
        segs,
        acks: (pure_acks, peer_data_segs),
    })
}

/// One smoltcp socket's application: sends what is left of `send` from `off`, takes what
/// arrived into `got`.
fn peer_io(
    set: &mut SocketSet<'static>,
    h: SocketHandle,
    send: &[u8],
    off: &mut usize,
    got: &mut Vec<u8>,
) {
    let s = set.get_mut::<tcp::Socket>(h);
    if s.can_send() && *off < send.len() {
        *off += s.send_slice(&send[*off..]).unwrap_or(0);
    }
    let mut buf = [0u8; 8192];
    while s.can_recv() {
        match s.recv_slice(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(k) => got.extend_from_slice(&buf[..k]),
        }
    }
}

/// `bytes` from a smoltcp interface at the engine's addresses (a socket with the engine's
/// transmit buffer, `tx_bytes`) to the peer's, through the same link model: each direction's
/// frames at the port's rate (one 8-byte beat per cycle, back to back), then `Lossy` with the
/// engine runs' seeds (`seed` for both), `ppm` frames per million lost.
fn smoltcp_stream(
    mss: u32,
    bytes: usize,
    ppm: u32,
    seed: u64,
    tx_bytes: usize,
) -> Result<Flow, String> {
    let mut devs = [0, 1].map(|_| Dev {
        mtu: Some(mss as usize + 54),
        ..Dev::default()
    });
    let mut ifaces = [
        suite::iface(&mut devs[0], ENGINE_MAC, ENGINE_IP, seed ^ 0x5a),
        suite::iface(&mut devs[1], PEER_MAC, PEER_IP, seed),
    ];
    let mut sets = [SocketSet::new(vec![]), SocketSet::new(vec![])];
    let mut a = tcp::Socket::new(
        tcp::SocketBuffer::new(vec![0; 8192]),
        tcp::SocketBuffer::new(vec![0; tx_bytes]),
    );
    // Congestion control as the engine's (RFC 5681 Reno): the comparison is of loss recovery,
    // not of one sender backing off and the other not (smoltcp's default without the feature).
    a.set_congestion_control(tcp::CongestionControl::Reno);
    let peer = IpAddress::v4(PEER_IP[0], PEER_IP[1], PEER_IP[2], PEER_IP[3]);
    a.connect(ifaces[0].context(), (peer, 4420), LOCAL_PORT_BASE as u16)
        .map_err(|e| format!("connect: {e:?}"))?;
    let ha = sets[0].add(a);
    let mut b = tcp::Socket::new(
        tcp::SocketBuffer::new(vec![0; PEER_RX]),
        tcp::SocketBuffer::new(vec![0; PEER_TX]),
    );
    b.listen(4420).map_err(|e| format!("listen: {e:?}"))?;
    let hb = sets[1].add(b);
    // As `Env`: toward the peer `seed ^ 5`, toward the sender `seed ^ 6`.
    let mut links = [
        Lossy::new(seed ^ 5, Faults::default()),
        Lossy::new(seed ^ 6, Faults::default()),
    ];
    for l in &mut links {
        l.drop_ppm = ppm;
    }
    let d = data(bytes);
    let (mut off, mut got, mut none) = (0usize, Vec::new(), 0usize);
    let mut free = [0u64; 2];
    let mut next = [0u64; 2];
    let mut segs = Vec::new();
    let limit = 2_000_000 + 40 * bytes as u64;
    let mut cycle = 0u64;
    while got.len() < bytes {
        cycle += 1;
        for i in 0..2 {
            let arrived = links[1 - i].pop(cycle);
            let busy = !arrived.is_empty();
            devs[i].rx.extend(arrived);
            if busy || cycle >= next[i] {
                next[i] = if i == 0 {
                    suite::turn(
                        &mut ifaces[0],
                        &mut devs[0],
                        &mut sets[0],
                        cycle,
                        &mut |s| peer_io(s, ha, &d, &mut off, &mut Vec::new()),
                    )
                } else {
                    suite::turn(
                        &mut ifaces[1],
                        &mut devs[1],
                        &mut sets[1],
                        cycle,
                        &mut |s| peer_io(s, hb, &[], &mut none, &mut got),
                    )
                };
            }
            for f in std::mem::take(&mut devs[i].tx) {
                let begin = cycle.max(free[i]);
                free[i] = begin + f.len().div_ceil(8) as u64;
                if i == 0 {
                    if let Some(s) = parse_seg(&f).filter(|s| !s.data.is_empty()) {
                        segs.push((begin, s.seq, s.data.len()));
                    }
                }
                links[i].push(free[i] - 1, f);
            }
        }
        if cycle > limit {
            return Err(format!(
                "smoltcp to smoltcp: {} bytes of {bytes} after {cycle} cycles",
                got.len()
            ));
        }
    }
    if got != d {
        return Err("smoltcp to smoltcp: the bytes delivered differ".into());
    }
    let start = segs.first().ok_or("smoltcp sent no data")?.0;
    Ok(Flow {
        goodput: bytes as f64 / (cycle - start) as f64,
        cycles: cycle - start,
        largest: segs.iter().map(|s| s.2).max().unwrap_or(0),
        lost: links[0].counts[0] + links[1].counts[0],
        counters: None,
        segs,
        acks: (0, 0),
    })
}

/// Runs the benchmark; returns the exit code (1 with `check` when a gated figure misses).
pub fn run(check: bool) -> i32 {
    let mut goals = Goals::default();
    let bufs = buffers();
    let r = goodput(&mut goals, bufs)
        .and_then(|()| loss(&mut goals, bufs.0))
        .and_then(|()| recovery(&mut goals))
        .and_then(|()| nvme_tcp());
    match r {
        Ok(()) => goals.finish(check),
        Err(e) => {
            eprintln!("testbench: {e}");
            1
        }
    }
}

/// The loss-free rows.
fn goodput(goals: &mut Goals, (tx_bytes, rx_bytes): (usize, usize)) -> Result<(), String> {
    let bytes = 256 * 1024;
    println!(
        "tcp, one connection of the TCP engine (buffers {tx_bytes} bytes to send, {rx_bytes} to receive, per connection) against smoltcp, {} KiB each way, no loss, seed {SEED}:",
        bytes / 1024
    );
    println!("  wire-format limit: the 64-bit port at one beat per cycle, 8 * MSS / (MSS + 54) bytes per cycle; 1 GbE at 125 MHz: MSS / (MSS + 78) (preamble, FCS, gap)");
    println!("  the engine's bound: sending is a beat a cycle, 5 idle cycles between frames (the next segment chosen, its payload's checksum from the prefix sums kept beside the transmit buffer in 3, its first beat fetched): 8 MSS / (MSS + 54 + 40); receiving takes a beat a cycle, the beat of bytes 48-55 in two (the headers end at byte 54), and hands rx up to 8 bytes a cycle: MSS / (ceil((MSS + 54) / 8) + 1)");
    for mss in [1460u32, 8960] {
        for tx in [true, false] {
            let what = format!("MSS {mss} {}", if tx { "tx" } else { "rx" });
            let Some(f) = failed(
                goals,
                &what,
                engine_stream(tx, mss, bytes, 0, None, ACK_DELAY, SEED),
            ) else {
                continue;
            };
            let m = mss as f64;
            let wire = wire_limit(m);
            let bound = if tx {
                8.0 * m / (m + HDR + 40.0)
            } else {
                m / (((m + HDR) / 8.0).ceil() + 1.0)
            };
            let of_wire = f.goodput / wire;
            // Receiving jumbo segments with the shipped 8192-byte buffer, the window holds one
            // segment: smoltcp waits for each one's ACK, so the row measures the round trip,
            // not the engine (reported, not gated).
            let window_bound = !tx && 2 * mss as usize > rx_bytes;
            let mark = if window_bound {
                format!("(not gated: the {rx_bytes}-byte receive window holds one segment, stop and wait)")
            } else {
                let m = goals.at_least(
                    &format!("{what} of the engine's bound"),
                    f.goodput / bound,
                    0.9,
                );
                format!("(gate >= 0.9) {m}")
            };
            let [re, rto, _, _] = f.counters.unwrap_or_default();
            println!(
                "  {what} ({}): {:.3} bytes/cycle in {} cycles ({re} retransmitted, {rto} RTOs), largest segment {} bytes; wire-format limit {wire:.3}: {of_wire:.3} of it (goal >= 0.95: {}); {:.3} of 1 GbE's {:.3}; {:.3} of the engine's bound {bound:.3} {mark}",
                if tx { "engine sends" } else { "engine receives" },
                f.goodput,
                f.cycles,
                f.largest,
                met(of_wire >= 0.95),
                f.goodput / gbe_limit(m),
                gbe_limit(m),
                f.goodput / bound,
            );
            if !tx {
                // The delayed ACK (CSR `ack_delay`, RFC 5681 4.2) beside ACKs sent at once:
                // pure ACKs (window updates included) per data segment received.
                let (a, n) = f.acks;
                let per = a as f64 / n.max(1) as f64;
                print!(
                    "    delayed ACK ({ACK_DELAY} ticks): {a} pure ACKs for {n} data segments, {per:.3} per segment"
                );
                if mss == 1460 {
                    let Some(g) = failed(
                        goals,
                        &what,
                        engine_stream(false, mss, bytes, 0, None, 0, SEED),
                    ) else {
                        continue;
                    };
                    let (a0, n0) = g.acks;
                    let per0 = a0 as f64 / n0.max(1) as f64;
                    let mark = goals.at_most(
                        &format!("{what} pure ACKs per segment, delayed over at once"),
                        per / per0,
                        0.75,
                    );
                    print!(
                        "; at once (ack_delay 0): {a0} for {n0}, {per0:.3} per segment, {:.3} bytes/cycle; ratio {:.3} (gate <= 0.75) {mark}",
                        g.goodput,
                        per / per0
                    );
                }
                println!();
            }
        }
        if mss > 1460 && (tx_bytes < 2 * mss as usize || rx_bytes < 2 * mss as usize) {
            println!("    MSS 8960 (jumbo frames of 9014 bytes) needs buffers of two segments or more: a segment is at most what the {tx_bytes}-byte transmit buffer holds and the engine's window at most its {rx_bytes}-byte receive buffer (`bash ci/bench-tcp.sh configs/jumbo.toml` measures a top with 32 KiB buffers)");
        }
    }
    Ok(())
}

/// Link seeds of the loss rows: a loss pattern is a few dozen frames, so one seed's figure is
/// mostly luck (seeds 1 to 5 put smoltcp anywhere from 0.86 to 0.99 of loss-free at 1 %); the
/// rows compare means over these.
const LOSS_SEEDS: [u64; 4] = [SEED, SEED + 1, SEED + 2, SEED + 3];

/// The loss rows: the engine sending under loss beside smoltcp to smoltcp, each over
/// `LOSS_SEEDS`, against the same side's loss-free run with the same seed.
fn loss(goals: &mut Goals, tx_bytes: usize) -> Result<(), String> {
    let bytes = 2 << 20;
    println!(
        "loss, MSS 1460, {} MiB, frames lost each way (data and ACKs); the engine sending to smoltcp beside smoltcp to smoltcp (same link model and seeds, sender buffer {tx_bytes}, smoltcp at 50 µs a cycle: RTO >= 20000 cycles; the engine's RTO >= {} cycles); means over link seeds {LOSS_SEEDS:?}:",
        bytes >> 20,
        RTO_MIN * 20
    );
    let mut base = Vec::new();
    for &seed in &LOSS_SEEDS {
        let Some(e) = failed(
            goals,
            "loss-free, engine sending",
            engine_stream(true, 1460, bytes, 0, None, ACK_DELAY, seed),
        ) else {
            return Ok(());
        };
        base.push((
            e.goodput,
            smoltcp_stream(1460, bytes, 0, seed, tx_bytes)?.goodput,
        ));
    }
    let n = LOSS_SEEDS.len() as f64;
    let (be, bs) = base
        .iter()
        .fold((0.0, 0.0), |(a, b), (e, s)| (a + e / n, b + s / n));
    println!(
        "  no loss: engine {be:.3} bytes/cycle, smoltcp to smoltcp {bs:.3} ({:.3} of the wire-format limit)",
        bs / wire_limit(1460.0)
    );
    for (ppm, what) in [(1000u32, "0.1 %"), (10_000, "1 %")] {
        let what = format!("{what} loss, engine sending");
        let (mut fe, mut fs) = (Vec::new(), Vec::new());
        let (mut lost_e, mut lost_s, mut c) = (0, 0, [0u32; 4]);
        for (&seed, &(b_e, b_s)) in LOSS_SEEDS.iter().zip(&base) {
            let s = smoltcp_stream(1460, bytes, ppm, seed, tx_bytes)?;
            let Some(e) = failed(
                goals,
                &what,
                engine_stream(true, 1460, bytes, ppm, None, ACK_DELAY, seed),
            ) else {
                return Ok(());
            };
            fe.push(e.goodput / b_e);
            fs.push(s.goodput / b_s);
            lost_e += e.lost;
            lost_s += s.lost;
            for (t, x) in c.iter_mut().zip(e.counters.unwrap_or_default()) {
                *t += x;
            }
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let list = |v: &[f64]| {
            v.iter()
                .map(|x| format!("{x:.3}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let [re, rto, fast, _] = c;
        println!(
            "  {what}: engine {:.3} of loss-free (seeds: {}; {lost_e} frames lost; {re} retransmitted, {rto} RTOs, {fast} fast); smoltcp {:.3} (seeds: {}; {lost_s} lost); goal ahead of smoltcp: {}",
            mean(&fe),
            list(&fe),
            mean(&fs),
            list(&fs),
            met(mean(&fe) > mean(&fs))
        );
    }
    Ok(())
}

/// The recovery rows: one engine data segment lost, in mid-stream and last.
fn recovery(goals: &mut Goals) -> Result<(), String> {
    let bytes = 64 * 1024;
    println!("recovery, MSS 1460, {} KiB, one engine data segment lost: cycles from its first beat to its retransmission's", bytes / 1024);
    for fast in [true, false] {
        let lost: Rc<RefCell<Option<u32>>> = Rc::default();
        let l = lost.clone();
        let (mut n, mut first) = (0u32, None::<u32>);
        let lose: Lose = Box::new(move |f| {
            let Some(s) = parse_seg(f).filter(|s| !s.data.is_empty()) else {
                return false;
            };
            n += 1;
            let first = *first.get_or_insert(s.seq);
            let end = s.seq.wrapping_sub(first) as usize + s.data.len();
            let pick = if fast { n == 20 } else { end == bytes };
            if pick && l.borrow().is_none() {
                *l.borrow_mut() = Some(s.seq);
                return true;
            }
            false
        });
        let what = if fast {
            "segment 20 of the stream (fast-retransmit path)"
        } else {
            "the stream's last segment (RTO path)"
        };
        let Some(f) = failed(
            goals,
            what,
            engine_stream(true, 1460, bytes, 0, Some(lose), ACK_DELAY, SEED),
        ) else {
            continue;
        };
        let seq = lost.borrow().ok_or("no segment was lost")?;
        let at = f
            .segs
            .iter()
            .position(|s| s.1 == seq)
            .ok_or("the lost segment is not among the frames")?;
        let again = f.segs[at + 1..]
            .iter()
            .find(|s| seq.wrapping_sub(s.1) < s.2 as u32)
            .ok_or("the lost segment was never sent again")?;
        let [re, rto, fr, dup] = f.counters.unwrap_or_default();
        let how = if fr > 0 {
            "resent by fast retransmit"
        } else {
            "resent by the RTO: no fast retransmit fired"
        };
        println!(
            "  {what}: {} cycles, {how} ({re} retransmitted, {rto} RTOs, {fr} fast, {dup} duplicate ACKs counted in the run)",
            again.0 - f.segs[at].0
        );
    }
    Ok(())
}

/// A seed whose harness and host memory have no idle cycles or stalls.
fn steady_seed() -> u64 {
    (1u64..)
        .find(|&s| {
            let m = crate::suites::nvme_tcp::rtl::EngineCase::mem_config(
                &crate::suites::nvme_tcp::rtl::EngineInput {
                    conns: Vec::new(),
                    stray: 0,
                    seed: s,
                },
            );
            crate::suites::nvme_tcp::rtl::idles(s) == (0, 0, 0, 0)
                && m.aw_stall == 0
                && m.w_stall == 0
                && m.b_idle == 0
        })
        .expect("some seed")
}

/// The NVMe/TCP rows.
fn nvme_tcp() -> Result<(), String> {
    let seed = steady_seed();
    println!("NVMe/TCP over the engine (nvme_tcp_ip_w64_c2_d4_t8192_r8192), two connections, digests on, MSS 1460, no loss, target on smoltcp (harness seed {seed}):");
    for (kind, nlb, per_conn) in [
        (Kind::Read, 7u16, 24usize),
        (Kind::Read, 255, 3),
        (Kind::Write, 7, 24),
        (Kind::Write, 255, 3),
    ] {
        let read = kind == Kind::Read;
        let size = 512 * (usize::from(nlb) + 1);
        let cmds = (0..per_conn)
            .map(|i| Cmd {
                kind,
                nsid: 1,
                nlb,
                seed: i as u8,
            })
            .collect();
        let sc = bench_scenario(HOLD_BYTES, size as u32, cmds);
        let input = NvmeInput {
            engine: crate::suites::nvme_tcp::rtl::EngineInput {
                conns: vec![sc.clone(), sc],
                stray: 0,
                seed,
            },
            to_peer: [0; 5],
            to_engine: [0; 5],
            mss: 2,
            wscale: 0,
            peer_buf: 2,
            key: (0x1234_5678, 0x9abc_def0),
            kill: None,
        };
        let t = nvme::measure(&input, None, true)?;
        let last = *t.completed.last().ok_or("no completion")?;
        // From the engine's first segment with data (the first ICReq).
        let first = t
            .from_engine
            .iter()
            .find(|f| f.3 > 0)
            .ok_or("the engine sent no data")?
            .0;
        let payload = t.completed.len() * size;
        let wire: usize = if read {
            let f = t.to_engine.iter().filter(|f| f.1 >= first && f.1 <= last);
            f.map(|f| f.2).sum()
        } else {
            let f = t.from_engine.iter().filter(|f| f.1 >= first && f.1 <= last);
            f.map(|f| f.2).sum()
        };
        let span = (last - first) as f64;
        let raw = payload as f64 / span;
        let limit = payload as f64 / wire as f64;
        let of_limit = raw / (LANES * limit);
        let what = format!(
            "{} KiB {}",
            size / 1024,
            if read { "reads" } else { "writes" }
        );
        println!(
            "  {what} x{}: {raw:.3} bytes/cycle ({payload} bytes in {span} cycles, {wire} frame bytes {}), wire-format limit {:.3}: {of_limit:.3} of it (goal >= 0.9: {}); {:.3} of 1 GbE's byte per cycle",
            2 * per_conn,
            if read { "into the engine" } else { "out of it" },
            LANES * limit,
            met(of_limit >= 0.9),
            raw,
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_drops_the_frame_bytes() {
        let e = "cycle 5: engine frame [02, 00, 1f]: TCP checksum";
        assert_eq!(short(e), "cycle 5: engine frame of 3 bytes: TCP checksum");
        assert_eq!(short("hang"), "hang");
    }

    /// The smoltcp pair's link serializes at the port's rate: its goodput stays below the
    /// wire-format limit, near it without loss, and loss costs it.
    #[test]
    fn smoltcp_pair_runs_at_most_at_the_wire_rate() {
        let w = wire_limit(1460.0);
        let clean = smoltcp_stream(1460, 64 * 1024, 0, SEED, 8192).expect("runs");
        assert!(
            clean.goodput < w && clean.goodput > 0.9 * w,
            "{} bytes/cycle, the limit {w}",
            clean.goodput
        );
        assert_eq!(clean.lost, 0);
        let lossy = smoltcp_stream(1460, 64 * 1024, 50_000, SEED, 8192).expect("runs");
        assert!(lossy.lost > 0 && lossy.goodput < clean.goodput);
    }
}
