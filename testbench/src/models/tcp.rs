//! Golden checks of the TCP/IP engine's frames (hdl-gen/src/tcp/mod.rs), frame by frame and
//! without cycles: every frame the engine sends must be a well-formed Ethernet/ARP or
//! Ethernet/IPv4/ICMP or Ethernet/IPv4/TCP frame from the engine's addresses, with good IPv4,
//! ICMP and TCP checksums (computed here, independently of the RTL and of smoltcp); a TCP
//! segment's sequence numbers lie inside what the application gave the connection and its
//! payload is the application's bytes at that place; its ACK number is never ahead of what
//! the peer has sent; a SYN carries exactly the MSS and window-scale options and an ISN of
//! RFC 6528's form (M + F, F = HalfSipHash-2-4 of the 4-tuple, M the cycle count / 1024); a
//! RST for a segment to no connection answers one the peer sent exactly as RFC 9293 3.10.7.1
//! says, and only where no connection of the engine is open.

use std::collections::VecDeque;

/// The number of counters in `tcp_csr` (from `seg_in`).
pub const COUNTERS: u32 = 19;

/// How many of the peer's latest TCP segments a RST for no connection may answer.
const ANSWERABLE: usize = 256;

/// The engine's addresses in the suite (see `suites::tcp`).
use crate::suites::tcp::{ENGINE_IP, ENGINE_MAC, PEER_IP};

fn be16(f: &[u8], i: usize) -> u32 {
    u32::from(u16::from_be_bytes([f[i], f[i + 1]]))
}

fn be32(f: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([f[i], f[i + 1], f[i + 2], f[i + 3]])
}

/// One's complement sum of `b` as big-endian 16-bit words (an odd last byte padded), folded.
pub fn sum16(mut acc: u32, b: &[u8]) -> u32 {
    for ch in b.chunks(2) {
        let w = if ch.len() == 2 {
            u32::from(u16::from_be_bytes([ch[0], ch[1]]))
        } else {
            u32::from(ch[0]) << 8
        };
        acc += w;
    }
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc
}

/// The TCP checksum sum (pseudo-header included) of the segment `tcp` from `src` to `dst`:
/// 0xffff when the checksum field in it is right.
pub fn tcp_sum(src: [u8; 4], dst: [u8; 4], tcp: &[u8]) -> u32 {
    let mut ph = Vec::new();
    ph.extend(src);
    ph.extend(dst);
    ph.extend([0, 6]);
    ph.extend((tcp.len() as u16).to_be_bytes());
    sum16(sum16(0, &ph), tcp)
}

fn round(v: &mut [u32; 4]) {
    v[0] = v[0].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(5) ^ v[0];
    v[0] = v[0].rotate_left(16);
    v[2] = v[2].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(8) ^ v[2];
    v[0] = v[0].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(7) ^ v[0];
    v[2] = v[2].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(13) ^ v[2];
    v[2] = v[2].rotate_left(16);
}

/// HalfSipHash-2-4, 32-bit result, over whole 32-bit little-endian message words.
pub fn half_siphash(k0: u32, k1: u32, m: &[u32]) -> u32 {
    let mut v = [k0, k1, 0x6c79_6765 ^ k0, 0x7465_6462 ^ k1];
    let last = ((m.len() as u32 * 4) & 0xff) << 24;
    for &w in m.iter().chain(std::iter::once(&last)) {
        v[3] ^= w;
        round(&mut v);
        round(&mut v);
        v[0] ^= w;
    }
    v[2] ^= 0xff;
    for _ in 0..4 {
        round(&mut v);
    }
    v[1] ^ v[3]
}

/// What the checker knows of each connection.
#[derive(Clone, Debug, Default)]
pub struct ConnView {
    /// The ISS, from the first SYN.
    pub iss: Option<u32>,
    /// The peer's highest sequence number sent (end of data, SYN and FIN counted).
    pub peer_end: Option<u32>,
    /// The application's whole stream for this connection (what `tx` will carry).
    pub data: Vec<u8>,
    /// A close was asked for (a FIN may go once every byte is sent).
    pub closing: bool,
    /// A RST is allowed (abort or retry limit expected).
    pub rst_ok: bool,
    pub syns: u32,
    pub fins: u32,
    pub rsts: u32,
    /// The peer's ISN (from its SYN) and whether its SYN carried a window-scale option (then
    /// the engine's windows are scaled by its own shift).
    pub peer_iss: Option<u32>,
    pub peer_ws: bool,
    /// The engine's last ACK number and window field, and the furthest right edge (ACK +
    /// window << shift) it advertised.
    pub last_adv: Option<(u32, u16)>,
    pub max_edge: Option<u32>,
    /// The peer sent a RST on this connection (the engine's side may be CLOSED since).
    pub peer_rst: bool,
    /// The previous incarnation of this connection (same 4-tuple): its ISS and SND.MAX.
    pub prev: Option<(u32, u32)>,
}

/// A TCP segment the peer sent to the engine's address: the fields a RST for no connection
/// is made of (RFC 9293 3.10.7.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerSeg {
    /// The sender's MAC and IPv4 address (the RST goes back to them).
    pub mac: [u8; 6],
    pub ip: [u8; 4],
    /// The sender's port and the engine's.
    pub ports: (u16, u16),
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    /// SEG.LEN: payload bytes, plus one for SYN and one for FIN.
    pub len: u32,
}

impl PeerSeg {
    /// The segment in Ethernet frame `f` (any ports), if `f` holds a TCP segment for the
    /// engine's address.
    pub fn parse(f: &[u8]) -> Option<PeerSeg> {
        let s = parse_seg(f)?;
        if f[30..34] != ENGINE_IP {
            return None;
        }
        Some(PeerSeg {
            mac: f[6..12].try_into().expect("6"),
            ip: f[26..30].try_into().expect("4"),
            ports: (be16(f, 34) as u16, be16(f, 36) as u16),
            seq: s.seq,
            ack: s.ack,
            flags: s.flags,
            len: s.data.len() as u32 + u32::from(s.flags & 2 != 0) + u32::from(s.flags & 1 != 0),
        })
    }

    /// RFC 9293 3.10.7.1's answer when no connection holds the segment: none to a RST;
    /// `<SEQ=SEG.ACK><CTL=RST>` to one with ACK; else `<SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>`.
    /// As (sequence number, flags, ACK number when the ACK bit is set).
    pub fn rst_answer(&self) -> Option<(u32, u8, Option<u32>)> {
        if self.flags & 4 != 0 {
            None
        } else if self.flags & 0x10 != 0 {
            Some((self.ack, 0x04, None))
        } else {
            Some((0, 0x14, Some(self.seq.wrapping_add(self.len))))
        }
    }

    /// Whether the engine's Ethernet frame `f` is that answer (to the sender's MAC, address
    /// and port, a bare 20-byte TCP header).
    pub fn answered_by(&self, f: &[u8]) -> bool {
        let Some((seq, fl, ack)) = self.rst_answer() else {
            return false;
        };
        if f.len() < 54 || f[0..6] != self.mac || f[30..34] != self.ip || be16(f, 16) != 40 {
            return false;
        }
        let t = &f[34..54];
        be16(t, 0) as u16 == self.ports.1
            && be16(t, 2) as u16 == self.ports.0
            && be32(t, 4) == seq
            && t[13] == fl
            && ack.is_none_or(|a| be32(t, 8) == a)
            && t[12] == 0x50
    }
}

/// The checker's state.
#[derive(Clone, Debug)]
pub struct EngineView {
    pub conns: Vec<ConnView>,
    pub mss: u16,
    pub wscale: u8,
    pub key: (u32, u32),
    /// Frames seen: ARP, ICMP, TCP.
    pub arp: u32,
    pub icmp: u32,
    pub tcp: u32,
    /// TCP segments the peer put on the link.
    pub peer_segments: u32,
    /// The peer's RST segments (their TCP headers), for reports.
    pub peer_rsts: Vec<Vec<u8>>,
    /// The peer's last segments (TCP headers), for reports.
    pub peer_last: Vec<Vec<u8>>,
    /// The engine's receive buffer per connection, bytes (`params.rx_log2`): 0 leaves the
    /// window rules unchecked.
    pub rx_bytes: u32,
    /// The peer's latest TCP segments to the engine's address, any ports (the last
    /// `ANSWERABLE`).
    pub peer_segs: VecDeque<PeerSeg>,
    /// RSTs the engine sent for segments to no connection.
    pub closed_rsts: u32,
}

/// The local port of connection `c` in the suite.
pub fn local_port(c: usize) -> u32 {
    50000 + c as u32
}

impl EngineView {
    pub fn new(n: usize, mss: u16, wscale: u8, key: (u32, u32)) -> EngineView {
        EngineView {
            conns: vec![ConnView::default(); n],
            mss,
            wscale,
            key,
            arp: 0,
            icmp: 0,
            tcp: 0,
            peer_segments: 0,
            peer_rsts: Vec::new(),
            peer_last: Vec::new(),
            rx_bytes: 0,
            peer_segs: VecDeque::new(),
            closed_rsts: 0,
        }
    }

    /// Connection `c` is CLOSED and opens again on the same 4-tuple: what the checker knew of
    /// it is forgotten but for the sequence numbers its last incarnation used, up to
    /// `snd_max` (the next sequence number it would have sent).
    pub fn reopen(&mut self, c: usize, snd_max: u32) {
        let prev = self.conns[c].iss.map(|iss| (iss, snd_max));
        self.conns[c] = ConnView {
            prev,
            ..ConnView::default()
        };
    }

    /// A frame the peer sent (before the link's faults): its TCP sequence space.
    pub fn peer_frame(&mut self, f: &[u8]) {
        if f.len() < 54 || be16(f, 12) != 0x0800 || f[23] != 6 {
            return;
        }
        if let Some(s) = PeerSeg::parse(f) {
            if self.peer_segs.len() == ANSWERABLE {
                self.peer_segs.pop_front();
            }
            self.peer_segs.push_back(s);
        }
        let thl = usize::from(f[46] >> 4) * 4;
        let ip_len = be16(f, 16) as usize;
        let c = be16(f, 36).wrapping_sub(50000) as usize;
        if c >= self.conns.len() {
            return;
        }
        self.peer_segments += 1;
        if f[47] & 4 != 0 {
            self.peer_rsts.push(f[34..54].to_vec());
            self.conns[c].peer_rst = true;
        }
        let plen = (ip_len - 20 - thl) as u32;
        let fl = f[47];
        let end = be32(f, 38)
            .wrapping_add(plen)
            .wrapping_add(u32::from(fl & 2 != 0))
            .wrapping_add(u32::from(fl & 1 != 0));
        let k = &mut self.conns[c];
        if fl & 0x12 == 0x12 && fl & 4 == 0 && k.peer_iss.is_none() {
            k.peer_iss = Some(be32(f, 38));
            let opts = &f[54..(34 + thl).min(f.len())];
            let mut i = 0;
            while i < opts.len() && opts[i] != 0 {
                if opts[i] == 1 {
                    i += 1;
                    continue;
                }
                if opts[i] == 3 {
                    k.peer_ws = true;
                }
                i += usize::from(opts.get(i + 1).copied().unwrap_or(2)).max(2);
            }
        }
        k.peer_end = Some(match k.peer_end {
            Some(e) if (end.wrapping_sub(e) as i32) < 0 => e,
            _ => end,
        });
    }
}

/// Checks one frame the engine sent at `cycle`; `sent[c]` is how many bytes connection `c`'s
/// application had handed to the engine by then, `got[c]` how many it had taken from it.
pub fn check_frame(
    v: &mut EngineView,
    f: &[u8],
    sent: &[usize],
    got: &[usize],
    cycle: u64,
) -> Result<(), String> {
    if f.len() < 60 {
        return Err(format!("{} bytes: shorter than 60", f.len()));
    }
    if f[6..12] != ENGINE_MAC {
        return Err("source MAC is not the engine's".into());
    }
    match be16(f, 12) {
        0x0806 => {
            v.arp += 1;
            if f[14..22] != [0, 1, 8, 0, 6, 4, 0, f[21]] || !(1..=2).contains(&f[21]) {
                return Err("ARP header fields".into());
            }
            if f[22..28] != ENGINE_MAC || f[28..32] != ENGINE_IP {
                return Err("ARP sender is not the engine".into());
            }
            if f[21] == 1 && (f[0..6] != [0xff; 6] || f[38..42] != PEER_IP) {
                return Err("ARP request not broadcast or not for the peer's address".into());
            }
            if f[21] == 2 && f[0..6] != f[32..38] {
                return Err("ARP reply not sent to the requester".into());
            }
            Ok(())
        }
        0x0800 => check_ip(v, f, sent, got, cycle),
        t => Err(format!("EtherType {t:#06x}")),
    }
}

fn check_ip(
    v: &mut EngineView,
    f: &[u8],
    sent: &[usize],
    got: &[usize],
    cycle: u64,
) -> Result<(), String> {
    if f[14] != 0x45 || sum16(0, &f[14..34]) != 0xffff {
        return Err("IPv4 version/IHL or header checksum".into());
    }
    let ip_len = be16(f, 16) as usize;
    if ip_len < 28 || 14 + ip_len > f.len() {
        return Err(format!("IPv4 total length {ip_len}"));
    }
    // Only a RST for a segment to no connection may go to another address than the peer's.
    let to_other =
        f[30..34] != PEER_IP && !(f[23] == 6 && v.peer_segs.iter().any(|s| s.answered_by(f)));
    if be16(f, 20) != 0x4000 || f[22] != 64 || f[26..30] != ENGINE_IP || to_other {
        return Err("IPv4 flags, TTL or addresses".into());
    }
    let l4 = &f[34..14 + ip_len];
    match f[23] {
        1 => {
            v.icmp += 1;
            if l4[0] != 0 || l4[1] != 0 || sum16(0, l4) != 0xffff {
                return Err("ICMP: not an echo reply, or its checksum".into());
            }
            Ok(())
        }
        6 => check_tcp(v, f, l4, sent, got, cycle),
        p => Err(format!("IP protocol {p}")),
    }
}

fn check_tcp(
    v: &mut EngineView,
    f: &[u8],
    t: &[u8],
    sent: &[usize],
    got: &[usize],
    cycle: u64,
) -> Result<(), String> {
    v.tcp += 1;
    let dst: [u8; 4] = f[30..34].try_into().expect("4");
    if tcp_sum(ENGINE_IP, dst, t) != 0xffff {
        return Err("TCP checksum".into());
    }
    let c = be16(t, 0).wrapping_sub(50000) as usize;
    // A RST for a segment to no connection: outside every connection's ports, or on one whose
    // engine side may be CLOSED (no SYN sent yet, a FIN or RST sent, a RST taken).
    let conn_ports = c < v.conns.len() && be16(t, 2) == 4420 && dst == PEER_IP;
    let closed = !conn_ports || {
        let k = &v.conns[c];
        k.iss.is_none() || k.fins > 0 || k.rsts > 0 || k.peer_rst
    };
    if closed && v.peer_segs.iter().any(|s| s.answered_by(f)) {
        v.closed_rsts += 1;
        return Ok(());
    }
    if c >= v.conns.len() || be16(t, 2) != 4420 {
        return Err(format!("TCP ports {} -> {}", be16(t, 0), be16(t, 2)));
    }
    let thl = usize::from(t[12] >> 4) * 4;
    let fl = t[13];
    let seq = be32(t, 4);
    let ack = be32(t, 8);
    let plen = t.len() - thl;
    let (mss, ws, key) = (v.mss, v.wscale, v.key);
    let k = &mut v.conns[c];
    if fl == 0x02 {
        k.syns += 1;
        if thl != 28 || plen != 0 {
            return Err(format!("SYN: header {thl} bytes, payload {plen}"));
        }
        let want = [2, 4, (mss >> 8) as u8, mss as u8, 1, 3, 3, ws];
        if t[20..28] != want {
            return Err(format!("SYN options {:02x?}, want {want:02x?}", &t[20..28]));
        }
        match k.iss {
            Some(iss) if iss != seq => {
                return Err(format!("SYN again with seq {seq:#x}, not the ISS {iss:#x}"))
            }
            Some(_) => {}
            None => {
                let lport = local_port(c);
                let words = [
                    u32::from_be_bytes(ENGINE_IP),
                    u32::from_be_bytes(PEER_IP),
                    lport << 16 | 4420,
                ];
                // RFC 6528: ISN = M + F(4-tuple, key), M the clock (1 per 1024 cycles here; the
                // SYN may leave up to 16 ticks after its ISN was drawn). RFC 9293 3.4.1: a new
                // incarnation of a 4-tuple carries no sequence number its previous one used,
                // so when M + F falls in [old ISS, old SND.MAX] the ISS is old SND.MAX + 1.
                let f = half_siphash(key.0, key.1, &words);
                let clock = (cycle >> 10) as u32;
                let m = seq.wrapping_sub(f);
                let in_old = |x: u32| {
                    k.prev
                        .is_some_and(|(pi, pm)| x.wrapping_sub(pi) <= pm.wrapping_sub(pi))
                };
                match k.prev {
                    Some((pi, pm)) if seq == pm.wrapping_add(1) => {
                        if !(0..=16u32).any(|d| in_old(f.wrapping_add(clock.wrapping_sub(d)))) {
                            return Err(format!(
                                "ISS {seq:#x} is the previous incarnation's SND.MAX + 1, but M + F \
                                 ({:#x}) lies outside its range [{pi:#x}, {pm:#x}]",
                                f.wrapping_add(clock)
                            ));
                        }
                    }
                    _ => {
                        if clock.wrapping_sub(m) > 16 {
                            return Err(format!(
                                "ISN {seq:#x}: minus F is {m:#x}, not the clock ({clock:#x}) of \
                                 RFC 6528"
                            ));
                        }
                        if in_old(seq) {
                            return Err(format!(
                                "ISS {seq:#x} lies in the range its connection's previous \
                                 incarnation used ({:x?}: ISS, SND.MAX): RFC 9293 3.4.1",
                                k.prev
                            ));
                        }
                    }
                }
                k.iss = Some(seq);
            }
        }
        return Ok(());
    }
    if ![0x10, 0x18, 0x11, 0x14, 0x04].contains(&fl) || thl != 20 {
        return Err(format!("flags {fl:#04x} with a {thl}-byte header"));
    }
    // RFC 9293's ABORT sends <SEQ=SND.NXT><CTL=RST> (no ACK, its acknowledgment field
    // meaningless); RST with ACK, as Linux sends, is allowed as well.
    if fl == 0x04 {
        return rst_seen(k);
    }
    let Some(iss) = k.iss else {
        return Err("a segment before any SYN".into());
    };
    let Some(peer_end) = k.peer_end else {
        return Err("an ACK before the peer sent anything".into());
    };
    if (ack.wrapping_sub(peer_end) as i32) > 0 {
        return Err(format!(
            "ACK {ack:#x} is ahead of what the peer sent (up to {peer_end:#x})"
        ));
    }
    if fl & 4 == 0 && v.rx_bytes != 0 {
        let wnd = be16(t, 14) as u16;
        check_window(k, ack, wnd, ws, mss, v.rx_bytes, got[c])?;
    }
    if fl & 4 != 0 {
        return rst_seen(k);
    }
    let rel = seq.wrapping_sub(iss).wrapping_sub(1) as i32;
    let given = sent[c] as i64;
    // After our FIN, a segment's sequence number is one past the data.
    let after_fin = k.fins > 0 && plen == 0 && fl & 1 == 0 && i64::from(rel) == given + 1;
    if !after_fin && (rel < 0 || i64::from(rel) + plen as i64 > given) {
        return Err(format!(
            "seq {seq:#x} + {plen} outside the {given} bytes given (ISS {iss:#x})"
        ));
    }
    let rel = rel as usize;
    if plen > 0 && t[thl..] != k.data[rel..rel + plen] {
        return Err(format!(
            "payload at stream offset {rel} is not the application's bytes"
        ));
    }
    if fl & 1 != 0 {
        k.fins += 1;
        if !k.closing || rel != given as usize || plen != 0 {
            return Err(format!(
                "FIN at offset {rel} (given {given}, close asked: {})",
                k.closing
            ));
        }
    }
    Ok(())
}

/// The receive-window rules (hdl-gen/src/tcp/mod.rs, RFC 9293 3.8.6.2.2): the engine holds the
/// right edge it advertised exactly and moves it only forward, by min(rx_bytes / 2, MSS) at
/// least, and advertises (edge - ACK) >> shift; seen from here, where the edge is rounded down
/// by the shift: (a) the advertised edge never goes back by a whole unit of the shift, (b) two
/// segments in a row with the same ACK number carry the same window unless the edge moved by
/// a threshold's worth (so duplicate ACKs are duplicates, RFC 5681), (c) the edge never passes
/// what the receive buffer holds (the bytes the application has taken, plus `rx_bytes`).
/// A RST from the engine: counted, and an error unless the test expects one.
fn rst_seen(k: &mut ConnView) -> Result<(), String> {
    k.rsts += 1;
    if k.rst_ok {
        Ok(())
    } else {
        Err("a RST nobody asked for".into())
    }
}

fn check_window(
    k: &mut ConnView,
    ack: u32,
    wnd: u16,
    ws: u8,
    mss: u16,
    rx_bytes: u32,
    got: usize,
) -> Result<(), String> {
    let Some(piss) = k.peer_iss else {
        return Ok(());
    };
    let shift = if k.peer_ws { u32::from(ws.min(14)) } else { 0 };
    let unit = 1i64 << shift;
    let edge = ack.wrapping_add(u32::from(wnd) << shift);
    let d = |a: u32, b: u32| i64::from(a.wrapping_sub(b) as i32);
    let thresh = i64::from((rx_bytes / 2).min(u32::from(mss)));
    let capped = wnd == 0xffff;
    if let Some(m) = k.max_edge {
        if d(edge, m) <= -unit && !capped {
            return Err(format!(
                "window: the right edge {edge:#x} (ACK {ack:#x}, window {wnd} << {shift}) is \
                 behind {m:#x}, advertised before: the window shrank"
            ));
        }
    }
    if let Some((pa, pw)) = k.last_adv {
        let pe = pa.wrapping_add(u32::from(pw) << shift);
        if pa == ack && pw != wnd && !capped && d(edge, pe) <= thresh - unit {
            return Err(format!(
                "window: ACK {ack:#x} again with window {wnd} (was {pw}, << {shift}): the edge \
                 moved by {}, less than min(rx_bytes / 2, MSS) = {thresh}, so this is no \
                 duplicate ACK",
                d(edge, pe)
            ));
        }
    }
    let limit = piss
        .wrapping_add(1)
        .wrapping_add(got as u32)
        .wrapping_add(rx_bytes);
    if d(edge, limit) > 0 {
        return Err(format!(
            "window: the right edge {edge:#x} is {} bytes past the receive buffer's end \
             (the application took {got} bytes, the buffer holds {rx_bytes})",
            d(edge, limit)
        ));
    }
    k.last_adv = Some((ack, wnd));
    if k.max_edge.is_none_or(|m| d(edge, m) > 0) {
        k.max_edge = Some(edge);
    }
    Ok(())
}

/// A TCP segment's fields, as read from a frame.
#[derive(Clone, Debug)]
pub struct Seg {
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub wnd: u16,
    pub data: Vec<u8>,
}

/// The TCP segment in Ethernet frame `f`, if it holds one (lengths consistent).
pub fn parse_seg(f: &[u8]) -> Option<Seg> {
    if f.len() < 54 || be16(f, 12) != 0x0800 || f[23] != 6 {
        return None;
    }
    let ip_len = be16(f, 16) as usize;
    let thl = usize::from(f[46] >> 4) * 4;
    if 14 + ip_len > f.len() || ip_len < 20 + thl || thl < 20 {
        return None;
    }
    Some(Seg {
        seq: be32(f, 38),
        ack: be32(f, 42),
        flags: f[47],
        wnd: be16(f, 48) as u16,
        data: f[34 + thl..14 + ip_len].to_vec(),
    })
}

/// The largest congestion window RFC 5681 and RFC 6582 (NewReno) allow a sender, in bytes,
/// driven by the events a scripted peer causes: a sender may always send less, never more
/// than `limit()` past SND.UNA. Where the RFCs leave a choice the bound takes the most
/// generous one (slow start: SMSS per ACK of new data; congestion avoidance: the larger of
/// SMSS * SMSS / cwnd per ACK and SMSS per cwnd bytes acknowledged; after recovery:
/// ssthresh); what they fix is exact (the initial window, ssthresh and cwnd after a loss,
/// the inflation and deflation in recovery). Limited transmit (RFC 3042, which RFC 5681
/// recommends) is allowed: up to two segments more on the first two duplicate ACKs.
#[derive(Clone, Debug)]
pub struct Cwnd {
    pub smss: u64,
    pub cwnd: u64,
    pub ssthresh: u64,
    /// Bytes acknowledged in congestion avoidance since the bound last grew by SMSS.
    acc: u64,
    /// Limited transmit's allowance: SMSS per duplicate ACK before recovery, at most two.
    limited: u64,
    pub in_recovery: bool,
}

impl Cwnd {
    /// After the handshake: RFC 5681 3.1's initial window (one segment when the SYN was
    /// sent again), ssthresh unbounded.
    pub fn new(smss: u32, syn_resent: bool) -> Cwnd {
        let s = u64::from(smss);
        let iw = if syn_resent {
            s
        } else if s > 2190 {
            2 * s
        } else if s > 1095 {
            3 * s
        } else {
            4 * s
        };
        Cwnd {
            smss: s,
            cwnd: iw,
            ssthresh: u64::MAX,
            acc: 0,
            limited: 0,
            in_recovery: false,
        }
    }

    /// The bound, bytes past SND.UNA.
    pub fn limit(&self) -> u64 {
        self.cwnd + self.limited
    }

    /// An ACK of `acked` new bytes; `full`: it reaches `recover` (ends recovery).
    pub fn ack(&mut self, acked: u64, full: bool) {
        self.limited = 0;
        if self.in_recovery {
            if full {
                // RFC 6582 3.2 step 3: min(ssthresh, max(FlightSize, SMSS) + SMSS) or ssthresh.
                self.in_recovery = false;
                self.cwnd = self.ssthresh;
                self.acc = 0;
            } else {
                // Step 5: deflate by the bytes acknowledged, SMSS back if that is a segment
                // or more (the RFC is silent when the ACK covers more than cwnd: one segment).
                let back = if acked >= self.smss { self.smss } else { 0 };
                self.cwnd = if acked >= self.cwnd {
                    self.smss
                } else {
                    self.cwnd - acked + back
                };
            }
        } else if self.cwnd <= self.ssthresh {
            // Slow start: at most SMSS per ACK of new data (either rule when equal).
            self.cwnd += self.smss;
        } else {
            self.acc += acked;
            let counted = if self.acc >= self.cwnd {
                self.acc -= self.cwnd;
                self.smss
            } else {
                0
            };
            let per_ack = (self.smss * self.smss / self.cwnd).max(1);
            self.cwnd += counted.max(per_ack);
        }
    }

    /// The third duplicate ACK with `flight` bytes outstanding: fast retransmit (RFC 5681
    /// 3.2 steps 2 and 3): ssthresh = max(FlightSize / 2, 2 SMSS), cwnd = ssthresh + 3 SMSS.
    pub fn fast_retransmit(&mut self, flight: u64) {
        self.ssthresh = (flight / 2).max(2 * self.smss);
        self.cwnd = self.ssthresh + 3 * self.smss;
        self.acc = 0;
        self.limited = 0;
        self.in_recovery = true;
    }

    /// More than an RTO without data sent (RFC 5681 4.1): the restart window, min(cwnd, IW).
    pub fn restart(&mut self) {
        self.cwnd = self.cwnd.min(Cwnd::new(self.smss as u32, false).cwnd);
        self.limited = 0;
    }

    /// A further duplicate ACK: in recovery cwnd grows by SMSS (a segment left the network).
    pub fn dup(&mut self) {
        if self.in_recovery {
            self.cwnd += self.smss;
        } else {
            self.limited = (self.limited + self.smss).min(2 * self.smss);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Cwnd;

    #[test]
    fn initial_window_follows_rfc_5681_3_1() {
        assert_eq!(Cwnd::new(1460, false).limit(), 4380);
        assert_eq!(Cwnd::new(1095, false).limit(), 4380);
        assert_eq!(Cwnd::new(1096, false).limit(), 3288);
        assert_eq!(Cwnd::new(2190, false).limit(), 6570);
        assert_eq!(Cwnd::new(2191, false).limit(), 4382);
        assert_eq!(Cwnd::new(536, true).limit(), 536);
    }

    #[test]
    fn slow_start_then_newreno_recovery() {
        let s = 1000;
        let mut c = Cwnd::new(1000, false);
        // Slow start: SMSS per ACK, whatever it acknowledges.
        c.ack(400, true);
        c.ack(1000, true);
        assert_eq!(c.limit(), 6 * s);
        // Limited transmit: two segments more on the first two duplicate ACKs, no more.
        c.dup();
        c.dup();
        assert_eq!(c.limit(), 8 * s);
        // The third with 10 SMSS in flight: ssthresh 5 SMSS, cwnd 8; inflation by SMSS.
        c.fast_retransmit(10 * s);
        assert_eq!((c.ssthresh, c.limit()), (5 * s, 8 * s));
        c.dup();
        assert_eq!(c.limit(), 9 * s);
        // A partial ACK of 2 SMSS: less 2 SMSS, one back; of half a segment: nothing back.
        c.ack(2 * s, false);
        assert_eq!(c.limit(), 8 * s);
        c.ack(s / 2, false);
        assert_eq!(c.limit(), 8 * s - s / 2);
        // The full ACK: ssthresh; then congestion avoidance (cwnd > ssthresh after a step).
        c.ack(3 * s, true);
        assert_eq!((c.limit(), c.in_recovery), (5 * s, false));
        c.ack(s, true);
        assert_eq!(c.limit(), 6 * s);
        c.ack(s, true);
        assert_eq!(c.limit(), 6 * s + s * s / (6 * s));
        // Idle for an RTO: back to the initial window, not above it.
        c.restart();
        assert_eq!(c.limit(), 4 * s);
        let mut c = Cwnd::new(1000, true);
        c.restart();
        assert_eq!(c.limit(), s);
    }
}
