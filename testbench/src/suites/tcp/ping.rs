//! Property `tcp_ping`: smoltcp pings the engine (after resolving its address by ARP, which
//! the engine answers) with echo requests of random sizes, some too large for the engine's
//! echo buffer and some with a wrong ICMP checksum, while frames the engine must drop arrive in
//! between (an ARP request for another address, an IPv4 packet for another address, a frame
//! for another MAC, a bad IPv4 header checksum, a UDP datagram, an IPv4 header with options).
//! TCP segments to no connection arrive too (random flags, sequence and ACK numbers and payload,
//! to random ports or to a connection's ports while it is CLOSED).
//! Checked: each good request is answered exactly once with its identifier, sequence number and
//! data; no other request is; each TCP segment without RST is answered by exactly the RST
//! RFC 9293 3.10.7.1 gives, in order, unless it came while the RST of one before it may have
//! been waiting (then it may be dropped); no RST is answered; every engine frame passes the
//! golden check; the counters `echo_out`, `rst_closed`, `seg_out`, `drop_csum`, `drop_other`,
//! `drop_malformed` and `arp_out` are exact.

use super::rules::tcp_frame;
use super::{cnt, Env, Setup, ENGINE_IP, ENGINE_MAC, LOCAL_PORT_BASE, PEER_IP, PEER_MAC};
use crate::models::tcp::{parse_seg, sum16, PeerSeg};
use crate::prop::Property;
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use smoltcp::iface::SocketSet;
use smoltcp::socket::icmp;
use smoltcp::wire::IpAddress;
use std::collections::BTreeMap;
use std::path::Path;

/// The engine's echo buffer in the shipped configuration (`tcp.echo_bytes`).
const ECHO_BYTES: usize = 512;

/// The stimulus.
#[derive(Clone, Debug)]
pub struct Input {
    /// Echo requests: (data bytes, checksum broken).
    pub pings: Vec<(u16, bool)>,
    /// Hostile frames (kind 0 to 5), sent after that many cycles.
    pub hostile: Vec<(u8, u16)>,
    /// TCP segments to no connection.
    pub closed: Vec<Closed>,
    pub seed: u64,
}

/// A TCP segment to no connection, sent after `at` cycles.
#[derive(Clone, Debug)]
pub struct Closed {
    pub at: u16,
    /// URG, ACK, PSH, RST, SYN, FIN as drawn.
    pub flags: u8,
    pub seq: u32,
    pub ack: u32,
    pub payload: u8,
    /// `None`: connection 0's ports (4420 to its local port; CLOSED here); else these
    /// (the peer's, the engine's).
    pub ports: Option<(u16, u16)>,
}

/// Cycles from a segment to no connection arriving to its RST leaving, at most (an echo reply
/// of the largest size may go first); one arriving sooner after another may find that one's
/// RST still waiting, and be dropped.
const RST_BUSY: u64 = 3000;

impl Closed {
    fn frame(&self) -> Vec<u8> {
        let (sport, dport) = self.ports.unwrap_or((4420, LOCAL_PORT_BASE as u16));
        let data: Vec<u8> = (0..self.payload).map(|i| i.wrapping_mul(37)).collect();
        tcp_frame(
            (PEER_IP, sport, dport),
            self.seq,
            self.ack,
            self.flags,
            4096,
            &[],
            &data,
        )
    }
}

pub(crate) fn hostile_frame(kind: u8) -> Vec<u8> {
    let mut f = Vec::new();
    let eth = |f: &mut Vec<u8>, dst: [u8; 6], ty: u16| {
        f.extend(dst);
        f.extend(PEER_MAC);
        f.extend(ty.to_be_bytes());
    };
    let ip = |f: &mut Vec<u8>, dst: [u8; 4], proto: u8, len: u16| {
        let mut h = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, proto, 0, 0];
        h[2..4].copy_from_slice(&(20 + len).to_be_bytes());
        h.extend(PEER_IP);
        h.extend(dst);
        let s = !(sum16(0, &h) as u16);
        h[10..12].copy_from_slice(&s.to_be_bytes());
        f.extend(h);
    };
    match kind % 6 {
        0 => {
            eth(&mut f, [0xff; 6], 0x0806);
            f.extend([0, 1, 8, 0, 6, 4, 0, 1]);
            f.extend(PEER_MAC);
            f.extend(PEER_IP);
            f.extend([0; 6]);
            f.extend([10, 0, 0, 77]);
        }
        1 => {
            eth(&mut f, ENGINE_MAC, 0x0800);
            ip(&mut f, [10, 0, 0, 99], 1, 8);
            f.extend([8, 0, 0xf7, 0xff, 0, 0, 0, 0]);
        }
        2 => {
            eth(&mut f, [0x02, 0, 0, 0, 0, 0x33], 0x0800);
            ip(&mut f, ENGINE_IP, 1, 8);
            f.extend([8, 0, 0xf7, 0xff, 0, 0, 0, 0]);
        }
        3 => {
            eth(&mut f, ENGINE_MAC, 0x0800);
            ip(&mut f, ENGINE_IP, 1, 8);
            f[24] ^= 0x40;
            f.extend([8, 0, 0xf7, 0xff, 0, 0, 0, 0]);
        }
        4 => {
            eth(&mut f, ENGINE_MAC, 0x0800);
            ip(&mut f, ENGINE_IP, 17, 8);
            f.extend([0x12, 0x34, 0x12, 0xb7, 0, 8, 0, 0]);
        }
        _ => {
            eth(&mut f, ENGINE_MAC, 0x0800);
            ip(&mut f, ENGINE_IP, 1, 12);
            f[14] = 0x46;
            f.extend([0; 12]);
        }
    }
    while f.len() < 60 {
        f.push(0);
    }
    f
}

/// Runs one case.
pub fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
    let setup = Setup {
        mss: 1460,
        wscale: 0,
        key: (1, 2),
        rto_min: 40,
        retries: 8,
        time_wait: 50,
    };
    let mut env = Env::clean(waves, input.seed, &setup);
    let mut s = icmp::Socket::new(
        icmp::PacketBuffer::new(vec![icmp::PacketMetadata::EMPTY; 64], vec![0; 65536]),
        icmp::PacketBuffer::new(vec![icmp::PacketMetadata::EMPTY; 64], vec![0; 65536]),
    );
    s.bind(icmp::Endpoint::Ident(0x4242))
        .map_err(|e| format!("bind: {e:?}"))?;
    let h = env.sockets.add(s);
    // smoltcp's ICMP socket recomputes the checksum: break it on the link instead.
    let broken: Vec<bool> = input.pings.iter().map(|p| p.1).collect();
    env.mangle = Some(Box::new(move |f: &mut Vec<u8>| {
        let echo = f.len() >= 42 && f[12..14] == [8, 0] && f[23] == 1 && f[34] == 8;
        if echo {
            let seq = usize::from(u16::from_be_bytes([f[40], f[41]]));
            if broken.get(seq) == Some(&true) {
                f[36] ^= 0x10;
            }
        }
    }));
    let engine = IpAddress::v4(ENGINE_IP[0], ENGINE_IP[1], ENGINE_IP[2], ENGINE_IP[3]);
    let mut next = 0usize;
    let mut replies: BTreeMap<u16, Vec<u8>> = BTreeMap::new();
    let mut bad: Vec<String> = Vec::new();
    let payload = |i: usize, len: usize| -> Vec<u8> {
        (0..len)
            .map(|j| (i * 31 + j * 7 + input.seed as usize) as u8)
            .collect()
    };
    let mut hostile = input.hostile.clone();
    hostile.sort_by_key(|h| h.1);
    let mut hostile = hostile.into_iter().peekable();
    let mut closed = input.closed.clone();
    closed.sort_by_key(|c| c.at);
    let mut closed = closed.into_iter().peekable();
    // Segments to no connection as sent: the segment, and whether its RST may be dropped.
    let mut closed_sent: Vec<(PeerSeg, bool)> = Vec::new();
    let mut last_closed: Option<u64> = None;
    let (mut want_other, mut want_csum, mut want_mal) = (0u32, 0u32, 0u32);
    let mut quiet = 0u64;
    let mut sent_at = 0u64;
    loop {
        let now = env.sim.cycle();
        // One echo at a time: the engine drops a request while its previous reply waits.
        let prev_done = next == 0 || {
            let (len, broken) = input.pings[next - 1];
            replies.contains_key(&(next as u16 - 1))
                || ((broken || 8 + usize::from(len) > ECHO_BYTES) && now > sent_at + 3000)
                || now > sent_at + 30_000
        };
        let mut app = |sockets: &mut SocketSet<'static>| {
            let s = sockets.get_mut::<icmp::Socket>(h);
            while let Ok((p, _)) = s.recv() {
                if p.len() < 8 || p[0] != 0 || be(p, 4) != 0x4242 {
                    bad.push(format!("unexpected ICMP message {p:02x?}"));
                    continue;
                }
                if replies.insert(be(p, 6), p[8..].to_vec()).is_some() {
                    bad.push(format!("a second reply to sequence number {}", be(p, 6)));
                }
            }
            if next < input.pings.len() && prev_done && s.can_send() {
                let (len, _) = input.pings[next];
                let data = payload(next, usize::from(len));
                let mut m = vec![8, 0, 0, 0, 0x42, 0x42];
                m.extend((next as u16).to_be_bytes());
                m.extend(&data);
                let sum = !(sum16(0, &m) as u16);
                m[2..4].copy_from_slice(&sum.to_be_bytes());
                if let Ok(buf) = s.send(m.len(), engine) {
                    buf.copy_from_slice(&m);
                    next += 1;
                    sent_at = now;
                }
            }
        };
        env.step(&mut app)?;
        let cycle = env.sim.cycle();
        while hostile.peek().is_some_and(|h| u64::from(h.1) <= cycle) {
            let (k, _) = hostile.next().expect("peeked");
            match k % 6 {
                0..=2 | 4 => want_other += 1,
                3 => want_csum += 1,
                _ => want_mal += 1,
            }
            env.src.borrow_mut().send(hostile_frame(k));
        }
        while closed.peek().is_some_and(|c| u64::from(c.at) <= cycle) {
            let f = closed.next().expect("peeked").frame();
            env.view.peer_frame(&f);
            let seg = PeerSeg::parse(&f).expect("a TCP segment to the engine");
            if seg.flags & 4 != 0 {
                want_other += 1;
            } else {
                let crowded = last_closed.is_some_and(|t| cycle < t + RST_BUSY);
                closed_sent.push((seg, crowded));
                last_closed = Some(cycle);
            }
            env.src.borrow_mut().send(f);
        }
        if !bad.is_empty() {
            return Err(bad.join("; "));
        }
        let busy = next < input.pings.len()
            || hostile.peek().is_some()
            || closed.peek().is_some()
            || !env.to_engine.idle()
            || !env.to_peer.idle()
            || env.src.borrow().pending() > 0;
        quiet = if busy { 0 } else { quiet + 1 };
        if quiet > 20_000 {
            break;
        }
        if cycle > 2_000_000 {
            return Err(format!(
                "not done: {next} of {} pings sent",
                input.pings.len()
            ));
        }
    }
    let mut good = 0u32;
    for (i, &(len, broken)) in input.pings.iter().enumerate() {
        let answerable = !broken && 8 + usize::from(len) <= ECHO_BYTES;
        let got = replies.get(&(i as u16));
        match (answerable, got) {
            (true, Some(d)) if *d == payload(i, usize::from(len)) => good += 1,
            (true, Some(_)) => return Err(format!("echo {i}: the reply's data differs")),
            (true, None) => return Err(format!("echo {i} ({len} data bytes) not answered")),
            (false, Some(_)) => {
                return Err(format!(
                    "echo {i} ({len} data bytes, checksum broken: {broken}) answered"
                ))
            }
            (false, None) => {}
        }
        if broken {
            want_csum += 1;
        } else if !answerable {
            want_other += 1;
        }
    }
    // The RSTs, in order, each the answer to the next segment that has one.
    let rsts: Vec<Vec<u8>> = env
        .sink
        .borrow()
        .frames
        .iter()
        .filter(|f| parse_seg(&f.data).is_some())
        .map(|f| f.data.clone())
        .collect();
    let mut answers = rsts.iter().peekable();
    for (i, (seg, crowded)) in closed_sent.iter().enumerate() {
        if answers.peek().is_some_and(|t| seg.answered_by(t)) {
            answers.next();
        } else if *crowded {
            want_other += 1;
        } else {
            return Err(format!(
                "segment {i} to no connection {seg:x?} not answered by {:x?} (RFC 9293 \
                 3.10.7.1); next RST sent {:02x?}",
                seg.rst_answer(),
                answers.peek()
            ));
        }
    }
    if let Some(t) = answers.next() {
        return Err(format!("a TCP segment no segment asked for: {t:02x?}"));
    }
    let cn = env.counters();
    let want = [
        (cnt::ECHO_OUT, good, "echo_out"),
        (cnt::RST_CLOSED, rsts.len() as u32, "rst_closed"),
        (cnt::DROP_CSUM, want_csum, "drop_csum"),
        (cnt::DROP_OTHER, want_other, "drop_other"),
        (cnt::DROP_MALFORMED, want_mal, "drop_malformed"),
        (cnt::ARP_OUT, env.view.arp, "arp_out"),
        (cnt::SEG_OUT, rsts.len() as u32, "seg_out"),
    ];
    for (i, w, name) in want {
        if cn[i] != w {
            return Err(format!(
                "counter {name} is {}, want {w} (counters {cn:?})",
                cn[i]
            ));
        }
    }
    Ok(())
}

fn be(p: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([p[i], p[i + 1]])
}

fn closed_strategy() -> impl Strategy<Value = Closed> {
    (
        0u16..24_000,
        prop_oneof![
            2 => Just(0x02u8),
            2 => Just(0x10u8),
            1 => Just(0x04u8),
            3 => 0u8..0x40,
        ],
        any::<u32>(),
        any::<u32>(),
        prop_oneof![2 => Just(0u8), 1 => 1u8..64],
        prop_oneof![1 => Just(None), 2 => (1u16.., 1u16..).prop_map(Some)],
    )
        .prop_map(|(at, flags, seq, ack, payload, ports)| Closed {
            at,
            flags,
            seq,
            ack,
            payload,
            ports,
        })
}

pub struct TcpPingProp;

impl Property for TcpPingProp {
    type Input = Input;
    const NAME: &'static str = "tcp_ping";

    fn strategy() -> BoxedStrategy<Input> {
        (
            prop::collection::vec(
                (
                    prop_oneof![3 => 0u16..200, 1 => 0u16..700],
                    prop::bool::weighted(0.2),
                ),
                1..8,
            ),
            prop::collection::vec((any::<u8>(), 0u16..20_000), 0..6),
            prop::collection::vec(closed_strategy(), 0..8),
            any::<u64>(),
        )
            .prop_map(|(pings, hostile, closed, seed)| Input {
                pings,
                hostile,
                closed,
                seed,
            })
            .boxed()
    }

    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        run(input, waves)
    }
}
