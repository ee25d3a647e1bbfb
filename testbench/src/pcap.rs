//! A pcap writer for byte streams: each conversation becomes a TCP/IPv4 connection over
//! Ethernet (three-way handshake, data segments of at most one MSS with consistent sequence and
//! acknowledgement numbers per direction, FIN at the end), with valid IPv4 header and TCP
//! checksums, so Wireshark and tshark reassemble and dissect the streams as if captured.
//!
//! Transports use it: NVMe/TCP (port 4420) records each connection's two byte streams; RoCEv2
//! records its Ethernet frames as they are ([`Pcap::ethernet`]).

use std::io::Write;
use std::path::Path;

/// Largest TCP payload per frame (Ethernet MTU 1500 - 20 IPv4 - 20 TCP).
pub const MSS: usize = 1460;

const ETH_HDR: usize = 14;

/// The endpoints of a recorded TCP connection: client (host side) and server (target side).
#[derive(Clone, Copy, Debug)]
pub struct Endpoints {
    /// Client IPv4 address.
    pub client_ip: [u8; 4],
    /// Client TCP port.
    pub client_port: u16,
    /// Server IPv4 address.
    pub server_ip: [u8; 4],
    /// Server TCP port (4420 for NVMe/TCP).
    pub server_port: u16,
}

/// A pcap file being written (classic pcap, Ethernet link type, microsecond timestamps).
pub struct Pcap {
    out: Vec<u8>,
    /// Pseudo time, microseconds: one step per frame.
    time_us: u64,
    frames: u64,
}

impl Default for Pcap {
    fn default() -> Self {
        Pcap::new()
    }
}

impl Pcap {
    /// An empty capture.
    pub fn new() -> Pcap {
        let mut out = Vec::new();
        out.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
        out.extend_from_slice(&2u16.to_le_bytes());
        out.extend_from_slice(&4u16.to_le_bytes());
        out.extend_from_slice(&0i32.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&65535u32.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes()); // LINKTYPE_ETHERNET
        Pcap {
            out,
            time_us: 1_000_000,
            frames: 0,
        }
    }

    /// Frames written so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// The capture's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.out
    }

    /// Writes the capture to `path`.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if let Some(d) = path.parent() {
            if !d.as_os_str().is_empty() {
                std::fs::create_dir_all(d)?;
            }
        }
        let mut f = std::fs::File::create(path)?;
        f.write_all(&self.out)
    }

    /// Appends every frame of `other` (its own timestamps are replaced to keep time monotonic).
    pub fn append(&mut self, other: &Pcap) {
        let mut off = 24;
        let b = &other.out;
        while off + 16 <= b.len() {
            let len = u32::from_le_bytes(b[off + 8..off + 12].try_into().unwrap()) as usize;
            self.record(&b[off + 16..off + 16 + len]);
            off += 16 + len;
        }
    }

    /// Records one Ethernet frame as it is (without FCS): transports that build their own
    /// frames, such as RoCEv2, record them this way.
    pub fn ethernet(&mut self, frame: &[u8]) {
        self.record(frame);
    }

    /// Records one Ethernet frame with its own timestamp, `us` microseconds since the Unix
    /// epoch (a capture of real time, such as `tcp-linux`'s; kept monotonic: never before the
    /// previous frame).
    pub fn ethernet_at(&mut self, frame: &[u8], us: u64) {
        self.time_us = self.time_us.max(us.saturating_sub(10));
        self.record(frame);
    }

    fn record(&mut self, frame: &[u8]) {
        self.time_us += 10;
        let (s, us) = (self.time_us / 1_000_000, self.time_us % 1_000_000);
        self.out.extend_from_slice(&(s as u32).to_le_bytes());
        self.out.extend_from_slice(&(us as u32).to_le_bytes());
        self.out
            .extend_from_slice(&(frame.len() as u32).to_le_bytes());
        self.out
            .extend_from_slice(&(frame.len() as u32).to_le_bytes());
        self.out.extend_from_slice(frame);
        self.frames += 1;
    }
}

/// One's complement sum of 16-bit big-endian words.
fn sum16(mut acc: u32, b: &[u8]) -> u32 {
    let mut chunks = b.chunks_exact(2);
    for c in &mut chunks {
        acc += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        acc += u32::from(*last) << 8;
    }
    acc
}

fn fold(mut acc: u32) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// The internet checksum (RFC 1071) of `b`.
pub fn inet_checksum(b: &[u8]) -> u16 {
    fold(sum16(0, b))
}

/// TCP flag bits.
mod tcpf {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
}

/// One direction's state: next sequence number to send.
#[derive(Clone, Copy, Debug)]
struct Side {
    ip: [u8; 4],
    port: u16,
    mac: [u8; 6],
    seq: u32,
    ip_id: u16,
}

/// A recorded TCP connection. Bytes sent by either side become segments of at most [`MSS`]
/// bytes; each segment acknowledges everything the other side has sent so far.
pub struct TcpConn {
    sides: [Side; 2],
    closed: bool,
}

impl TcpConn {
    /// Opens a connection (records SYN, SYN-ACK, ACK). Side 0 is the client.
    pub fn open(pcap: &mut Pcap, ep: Endpoints) -> TcpConn {
        let isn = |p: u16| 0x1000_0000u32.wrapping_mul(u32::from(p % 13) + 1) ^ u32::from(p) << 8;
        let mut c = TcpConn {
            sides: [
                Side {
                    ip: ep.client_ip,
                    port: ep.client_port,
                    mac: [0x02, 0, 0, 0, 0, 0x01],
                    seq: isn(ep.client_port),
                    ip_id: 1,
                },
                Side {
                    ip: ep.server_ip,
                    port: ep.server_port,
                    mac: [0x02, 0, 0, 0, 0, 0x02],
                    seq: isn(ep.server_port ^ 0x5a5a),
                    ip_id: 1,
                },
            ],
            closed: false,
        };
        c.segment(pcap, 0, tcpf::SYN, &[], false);
        c.sides[0].seq = c.sides[0].seq.wrapping_add(1);
        c.segment(pcap, 1, tcpf::SYN | tcpf::ACK, &[], true);
        c.sides[1].seq = c.sides[1].seq.wrapping_add(1);
        c.segment(pcap, 0, tcpf::ACK, &[], true);
        c
    }

    /// Records `bytes` sent by side `from` (0 client, 1 server), in MSS-sized segments.
    pub fn send(&mut self, pcap: &mut Pcap, from: usize, bytes: &[u8]) {
        assert!(!self.closed, "send on a closed recorded connection");
        for chunk in bytes.chunks(MSS) {
            self.segment(pcap, from, tcpf::ACK | tcpf::PSH, chunk, true);
            self.sides[from].seq = self.sides[from].seq.wrapping_add(chunk.len() as u32);
        }
    }

    /// Closes the connection (FIN from each side, and the last ACK).
    pub fn close(&mut self, pcap: &mut Pcap) {
        if self.closed {
            return;
        }
        self.segment(pcap, 0, tcpf::FIN | tcpf::ACK, &[], true);
        self.sides[0].seq = self.sides[0].seq.wrapping_add(1);
        self.segment(pcap, 1, tcpf::FIN | tcpf::ACK, &[], true);
        self.sides[1].seq = self.sides[1].seq.wrapping_add(1);
        self.segment(pcap, 0, tcpf::ACK, &[], true);
        self.closed = true;
    }

    fn segment(&mut self, pcap: &mut Pcap, from: usize, flags: u8, payload: &[u8], ack: bool) {
        let (s, d) = (self.sides[from], self.sides[1 - from]);
        let mut tcp = vec![0u8; 20];
        tcp[0..2].copy_from_slice(&s.port.to_be_bytes());
        tcp[2..4].copy_from_slice(&d.port.to_be_bytes());
        tcp[4..8].copy_from_slice(&s.seq.to_be_bytes());
        if ack {
            tcp[8..12].copy_from_slice(&d.seq.to_be_bytes());
        }
        tcp[12] = 5 << 4;
        tcp[13] = flags;
        tcp[14..16].copy_from_slice(&65535u16.to_be_bytes());
        tcp.extend_from_slice(payload);
        let tcp_len = tcp.len() as u16;
        let mut pseudo = Vec::with_capacity(12);
        pseudo.extend_from_slice(&s.ip);
        pseudo.extend_from_slice(&d.ip);
        pseudo.extend_from_slice(&[0, 6]);
        pseudo.extend_from_slice(&tcp_len.to_be_bytes());
        let ck = fold(sum16(sum16(0, &pseudo), &tcp));
        tcp[16..18].copy_from_slice(&ck.to_be_bytes());

        let mut ip = vec![0u8; 20];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&(20 + tcp_len).to_be_bytes());
        ip[4..6].copy_from_slice(&s.ip_id.to_be_bytes());
        ip[6] = 0x40; // don't fragment
        ip[8] = 64;
        ip[9] = 6;
        ip[12..16].copy_from_slice(&s.ip);
        ip[16..20].copy_from_slice(&d.ip);
        let ck = inet_checksum(&ip);
        ip[10..12].copy_from_slice(&ck.to_be_bytes());
        self.sides[from].ip_id = s.ip_id.wrapping_add(1);

        let mut frame = Vec::with_capacity(ETH_HDR + ip.len() + tcp.len());
        frame.extend_from_slice(&d.mac);
        frame.extend_from_slice(&s.mac);
        frame.extend_from_slice(&0x0800u16.to_be_bytes());
        frame.extend_from_slice(&ip);
        frame.extend_from_slice(&tcp);
        pcap.record(&frame);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_verify_to_zero() {
        let mut p = Pcap::new();
        let ep = Endpoints {
            client_ip: [10, 0, 0, 1],
            client_port: 40000,
            server_ip: [10, 0, 0, 2],
            server_port: 4420,
        };
        let mut c = TcpConn::open(&mut p, ep);
        c.send(&mut p, 0, &[7u8; 3001]);
        c.close(&mut p);
        assert_eq!(p.frames(), 3 + 3 + 3);
        // Check the first data frame (4th record): IPv4 header and TCP checksums.
        let mut off = 24;
        for _ in 0..3 {
            let len = u32::from_le_bytes(p.bytes()[off + 8..off + 12].try_into().unwrap());
            off += 16 + len as usize;
        }
        let len = u32::from_le_bytes(p.bytes()[off + 8..off + 12].try_into().unwrap()) as usize;
        let frame = &p.bytes()[off + 16..off + 16 + len];
        let ip = &frame[14..34];
        assert_eq!(inet_checksum(ip), 0);
        let tcp = &frame[34..];
        let mut pseudo = Vec::new();
        pseudo.extend_from_slice(&ip[12..20]);
        pseudo.extend_from_slice(&[0, 6]);
        pseudo.extend_from_slice(&(tcp.len() as u16).to_be_bytes());
        assert_eq!(fold(sum16(sum16(0, &pseudo), tcp)), 0);
        assert_eq!(tcp.len(), 20 + MSS);
    }
}
