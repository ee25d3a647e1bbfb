//! RoCEv2 frames at the byte level: Ethernet II / IPv4 / UDP (port 4791) / BTH, the extension
//! headers the reliable-connection opcodes carry (RETH, AETH, ImmDt), the payload with its pad,
//! and the ICRC. One codec for the golden target, the link model, the scoreboards and the pcap
//! writer, so every part of the testbench agrees on the wire format.
//!
//! The ICRC rule (InfiniBand annex A17, as Linux rdma_rxe and scapy compute it): CRC-32 (the
//! Ethernet polynomial, reflected) over 8 bytes of FFh standing for the absent LRH, then the IPv4
//! header with TOS, TTL and the header checksum set to all ones, the UDP header with its checksum
//! set to all ones, the BTH with its FECN/BECN/reserved byte set to all ones, then the rest of the
//! packet up to the ICRC. The CRC's final value goes on the wire least significant byte first.
//! Test vectors from scapy 2.8 (`scapy.contrib.roce`) tie this file to an independent encoder.

use super::crc::{Crc, CRC32};

/// UDP destination port of RoCEv2.
pub const ROCE_PORT: u16 = 4791;
/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// Bytes before the BTH: Ethernet (14), IPv4 without options (20), UDP (8).
pub const NET_HEADER_BYTES: usize = 42;
/// BTH bytes.
pub const BTH_BYTES: usize = 12;
/// ICRC bytes.
pub const ICRC_BYTES: usize = 4;

/// Reliable-connection opcodes (BTH opcode; the transport bits 7:5 are 000 for RC) and CNP.
pub mod op {
    pub const SEND_FIRST: u8 = 0x00;
    pub const SEND_MIDDLE: u8 = 0x01;
    pub const SEND_LAST: u8 = 0x02;
    pub const SEND_LAST_IMM: u8 = 0x03;
    pub const SEND_ONLY: u8 = 0x04;
    pub const SEND_ONLY_IMM: u8 = 0x05;
    pub const WRITE_FIRST: u8 = 0x06;
    pub const WRITE_MIDDLE: u8 = 0x07;
    pub const WRITE_LAST: u8 = 0x08;
    pub const WRITE_LAST_IMM: u8 = 0x09;
    pub const WRITE_ONLY: u8 = 0x0a;
    pub const WRITE_ONLY_IMM: u8 = 0x0b;
    pub const READ_REQUEST: u8 = 0x0c;
    pub const READ_RESPONSE_FIRST: u8 = 0x0d;
    pub const READ_RESPONSE_MIDDLE: u8 = 0x0e;
    pub const READ_RESPONSE_LAST: u8 = 0x0f;
    pub const READ_RESPONSE_ONLY: u8 = 0x10;
    pub const ACKNOWLEDGE: u8 = 0x11;
    /// Congestion notification packet.
    pub const CNP: u8 = 0x81;
}

/// What an opcode carries after the BTH.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// RDMA extended transport header (16 bytes).
    pub reth: bool,
    /// ACK extended transport header (4 bytes).
    pub aeth: bool,
    /// Immediate data (4 bytes).
    pub imm: bool,
    /// A payload may follow.
    pub payload: bool,
}

/// The header layout of `opcode`, or `None` for an opcode this transport does not speak (the
/// receiver drops it). CNP carries 16 reserved bytes, kept as its payload.
pub fn layout(opcode: u8) -> Option<Layout> {
    let l = |reth, aeth, imm, payload| {
        Some(Layout {
            reth,
            aeth,
            imm,
            payload,
        })
    };
    match opcode {
        op::SEND_FIRST | op::SEND_MIDDLE | op::SEND_LAST | op::SEND_ONLY => {
            l(false, false, false, true)
        }
        op::SEND_LAST_IMM | op::SEND_ONLY_IMM => l(false, false, true, true),
        op::WRITE_FIRST | op::WRITE_ONLY => l(true, false, false, true),
        op::WRITE_MIDDLE | op::WRITE_LAST => l(false, false, false, true),
        op::WRITE_LAST_IMM => l(false, false, true, true),
        op::WRITE_ONLY_IMM => l(true, false, true, true),
        op::READ_REQUEST => l(true, false, false, false),
        op::READ_RESPONSE_FIRST | op::READ_RESPONSE_LAST | op::READ_RESPONSE_ONLY => {
            l(false, true, false, true)
        }
        op::READ_RESPONSE_MIDDLE => l(false, false, false, true),
        op::ACKNOWLEDGE => l(false, true, false, false),
        op::CNP => l(false, false, false, true),
        _ => None,
    }
}

/// Ethernet, IPv4 and UDP fields of a frame (the parts the ICRC masks are recomputed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Net {
    pub dst_mac: [u8; 6],
    pub src_mac: [u8; 6],
    pub src_ip: [u8; 4],
    pub dst_ip: [u8; 4],
    /// DSCP (6 bits).
    pub dscp: u8,
    /// ECN (2 bits): 00 not ECT, 10/01 ECT, 11 congestion experienced.
    pub ecn: u8,
    /// IPv4 identification.
    pub ip_id: u16,
    pub ttl: u8,
    /// UDP source port (RoCEv2 uses it for ECMP entropy; any value).
    pub src_port: u16,
}

/// Base transport header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bth {
    pub opcode: u8,
    /// Solicited event.
    pub se: bool,
    /// Migration request.
    pub mig: bool,
    /// Pad bytes after the payload (0 to 3).
    pub pad: u8,
    pub pkey: u16,
    pub fecn: bool,
    pub becn: bool,
    /// Destination queue pair (24 bits).
    pub dest_qp: u32,
    pub ack_req: bool,
    /// Packet sequence number (24 bits).
    pub psn: u32,
}

/// RDMA extended transport header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reth {
    pub va: u64,
    pub rkey: u32,
    pub len: u32,
}

/// ACK extended transport header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Aeth {
    /// 000xxxxx ACK, 001xxxxx RNR NAK, 011xxxxx NAK (60h PSN sequence error, 61h invalid
    /// request, 62h remote access error, 63h remote operational error).
    pub syndrome: u8,
    /// Message sequence number (24 bits).
    pub msn: u32,
}

/// One RoCEv2 packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    pub net: Net,
    pub bth: Bth,
    pub reth: Option<Reth>,
    pub aeth: Option<Aeth>,
    pub imm: Option<u32>,
    /// Payload without the pad.
    pub payload: Vec<u8>,
}

/// Why a receiver drops a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drop {
    /// Shorter than its headers say, or than the fixed headers.
    Truncated,
    /// Not IPv4, or not UDP to port 4791: not for the RoCE engine.
    NotRoce,
    /// IPv4 header malformed: version, IHL (options are not accepted), total length, fragment.
    BadIpHeader,
    /// IPv4 header checksum wrong.
    BadIpChecksum,
    /// UDP length disagrees with the IP length.
    BadUdpLength,
    /// ICRC wrong.
    BadIcrc,
    /// Opcode this transport does not speak, or BTH version not 0.
    BadOpcode,
    /// Pad count larger than the payload, or a payload on an opcode that has none.
    BadLength,
}

/// The Internet checksum (RFC 1071) of `bytes`.
pub fn ip_checksum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for pair in bytes.chunks(2) {
        let word = u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]);
        sum += u32::from(word);
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The UDP checksum (RFC 768, over the IPv4 pseudo-header) of a decodable frame, as a sender
/// puts it in the field (a computed 0 goes out as FFFFh).
pub fn udp_checksum(frame: &[u8]) -> u16 {
    let ip = &frame[14..];
    let ip_len = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
    let udp = &ip[20..ip_len];
    let mut b = Vec::with_capacity(12 + udp.len());
    b.extend_from_slice(&ip[12..20]);
    b.extend_from_slice(&[0, 17]);
    b.extend_from_slice(&(udp.len() as u16).to_be_bytes());
    b.extend_from_slice(udp);
    b[12 + 6] = 0;
    b[12 + 7] = 0;
    match ip_checksum(&b) {
        0 => 0xffff,
        c => c,
    }
}

/// The header fields a receiver's checks let through but a sender must still get right, of a
/// frame that decodes: the IPv4 header checksum is exactly RFC 791's value (the complement of
/// the one's complement sum, which is never +0 for a real header: a receiver's check accepts
/// FFFFh as well as 0000h there, a sender never writes FFFFh), and the UDP checksum is 0 (what
/// RoCEv2 senders put there: the ICRC protects the packet) or the correct one (a receiver
/// that checks it, such as Linux, drops a wrong one).
pub fn check_sender_fields(f: &[u8]) -> Result<(), String> {
    let mut h = f[14..34].to_vec();
    let got = u16::from_be_bytes([h[10], h[11]]);
    h[10] = 0;
    h[11] = 0;
    let want = ip_checksum(&h);
    if got != want {
        return Err(format!(
            "IPv4 header checksum {got:#06x}, RFC 791 gives {want:#06x}"
        ));
    }
    let udp = u16::from_be_bytes([f[40], f[41]]);
    if udp != 0 && udp != udp_checksum(f) {
        return Err(format!(
            "UDP checksum {udp:#06x}: neither 0 nor the checksum ({:#06x})",
            udp_checksum(f)
        ));
    }
    Ok(())
}

/// The ICRC of a frame (Ethernet header first) whose last 4 bytes are the ICRC's place: the
/// value that goes there, as a little-endian u32.
pub fn icrc(frame: &[u8]) -> u32 {
    let body = &frame[14..frame.len() - ICRC_BYTES];
    let mut masked = body.to_vec();
    masked[1] = 0xff; // TOS
    masked[8] = 0xff; // TTL
    masked[10] = 0xff; // header checksum
    masked[11] = 0xff;
    masked[26] = 0xff; // UDP checksum
    masked[27] = 0xff;
    masked[32] = 0xff; // BTH FECN/BECN/reserved
    let mut crc: Crc = CRC32.start();
    crc.update(&[0xff; 8]);
    crc.update(&masked);
    crc.value() as u32
}

/// Marks a frame Congestion Experienced as a switch does: IPv4 ECN 11, the header checksum
/// recomputed (the ICRC does not cover the TOS byte). Frames too short for an IPv4 header are
/// left alone.
pub fn mark_ce(frame: &mut [u8]) {
    if frame.len() < 34 {
        return;
    }
    frame[15] |= 3;
    frame[24] = 0;
    frame[25] = 0;
    let sum = ip_checksum(&frame[14..34]);
    frame[24..26].copy_from_slice(&sum.to_be_bytes());
}

fn put24(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes()[1..]);
}

fn get24(b: &[u8]) -> u32 {
    u32::from_be_bytes([0, b[0], b[1], b[2]])
}

impl Packet {
    /// The frame on the wire, without FCS: headers, payload, pad of `bth.pad` zero bytes, ICRC.
    /// Panics if the packet's extension headers do not match its opcode (a testbench bug).
    pub fn encode(&self) -> Vec<u8> {
        let l = layout(self.bth.opcode)
            .unwrap_or_else(|| panic!("opcode {:#04x} has no layout", self.bth.opcode));
        assert_eq!(
            l.reth,
            self.reth.is_some(),
            "RETH vs opcode {:#x}",
            self.bth.opcode
        );
        assert_eq!(
            l.aeth,
            self.aeth.is_some(),
            "AETH vs opcode {:#x}",
            self.bth.opcode
        );
        assert_eq!(
            l.imm,
            self.imm.is_some(),
            "ImmDt vs opcode {:#x}",
            self.bth.opcode
        );
        self.encode_unchecked()
    }

    /// As [`Packet::encode`], without checking the headers against the opcode: a hostile peer's
    /// frames.
    pub fn encode_unchecked(&self) -> Vec<u8> {
        let n = &self.net;
        let b = &self.bth;
        let mut t = Vec::new(); // transport: BTH .. pad
        t.push(b.opcode);
        t.push(u8::from(b.se) << 7 | u8::from(b.mig) << 6 | (b.pad & 3) << 4);
        t.extend_from_slice(&b.pkey.to_be_bytes());
        t.push(u8::from(b.fecn) << 7 | u8::from(b.becn) << 6);
        put24(&mut t, b.dest_qp & 0xff_ffff);
        t.push(u8::from(b.ack_req) << 7);
        put24(&mut t, b.psn & 0xff_ffff);
        if let Some(r) = self.reth {
            t.extend_from_slice(&r.va.to_be_bytes());
            t.extend_from_slice(&r.rkey.to_be_bytes());
            t.extend_from_slice(&r.len.to_be_bytes());
        }
        if let Some(a) = self.aeth {
            t.push(a.syndrome);
            put24(&mut t, a.msn & 0xff_ffff);
        }
        if let Some(i) = self.imm {
            t.extend_from_slice(&i.to_be_bytes());
        }
        t.extend_from_slice(&self.payload);
        t.extend(std::iter::repeat_n(0u8, usize::from(b.pad & 3)));
        let udp_len = 8 + t.len() + ICRC_BYTES;
        let ip_len = 20 + udp_len;
        let mut f = Vec::with_capacity(14 + ip_len);
        f.extend_from_slice(&n.dst_mac);
        f.extend_from_slice(&n.src_mac);
        f.extend_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        let ip_start = f.len();
        f.push(0x45);
        f.push(n.dscp << 2 | (n.ecn & 3));
        f.extend_from_slice(&(ip_len as u16).to_be_bytes());
        f.extend_from_slice(&n.ip_id.to_be_bytes());
        f.extend_from_slice(&0x4000u16.to_be_bytes()); // DF, offset 0
        f.push(n.ttl);
        f.push(17);
        f.extend_from_slice(&[0, 0]);
        f.extend_from_slice(&n.src_ip);
        f.extend_from_slice(&n.dst_ip);
        let sum = ip_checksum(&f[ip_start..ip_start + 20]);
        f[ip_start + 10..ip_start + 12].copy_from_slice(&sum.to_be_bytes());
        f.extend_from_slice(&n.src_port.to_be_bytes());
        f.extend_from_slice(&ROCE_PORT.to_be_bytes());
        f.extend_from_slice(&(udp_len as u16).to_be_bytes());
        f.extend_from_slice(&[0, 0]); // UDP checksum: not used by RoCEv2
        f.extend_from_slice(&t);
        f.extend_from_slice(&[0; ICRC_BYTES]);
        let c = icrc(&f);
        let at = f.len() - ICRC_BYTES;
        f[at..].copy_from_slice(&c.to_le_bytes());
        f
    }

    /// Parses and checks a frame as the receiver must, in the order a hardware parser meets the
    /// fields; the first fault found is the cause reported.
    pub fn decode(f: &[u8]) -> Result<Packet, Drop> {
        if f.len() < 14 + 20 {
            return Err(Drop::Truncated);
        }
        if u16::from_be_bytes([f[12], f[13]]) != ETHERTYPE_IPV4 {
            return Err(Drop::NotRoce);
        }
        let ip = &f[14..];
        if ip[0] >> 4 != 4 {
            return Err(Drop::NotRoce);
        }
        if ip[0] & 0xf != 5 || u16::from_be_bytes([ip[6], ip[7]]) & 0x3fff != 0 {
            return Err(Drop::BadIpHeader);
        }
        if ip[9] != 17 {
            return Err(Drop::NotRoce);
        }
        let ip_len = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
        if ip_len < 20 + 8 || ip_len > ip.len() {
            return Err(Drop::BadIpHeader);
        }
        if ip_checksum(&ip[..20]) != 0 {
            return Err(Drop::BadIpChecksum);
        }
        let udp = &ip[20..ip_len];
        if u16::from_be_bytes([udp[2], udp[3]]) != ROCE_PORT {
            return Err(Drop::NotRoce);
        }
        if usize::from(u16::from_be_bytes([udp[4], udp[5]])) != udp.len() {
            return Err(Drop::BadUdpLength);
        }
        let t = &udp[8..];
        if t.len() < BTH_BYTES + ICRC_BYTES {
            return Err(Drop::Truncated);
        }
        let frame = &f[..14 + ip_len];
        let got = u32::from_le_bytes(frame[frame.len() - 4..].try_into().expect("4 bytes"));
        if got != icrc(frame) {
            return Err(Drop::BadIcrc);
        }
        let bth = Bth {
            opcode: t[0],
            se: t[1] & 0x80 != 0,
            mig: t[1] & 0x40 != 0,
            pad: (t[1] >> 4) & 3,
            pkey: u16::from_be_bytes([t[2], t[3]]),
            fecn: t[4] & 0x80 != 0,
            becn: t[4] & 0x40 != 0,
            dest_qp: get24(&t[5..8]),
            ack_req: t[8] & 0x80 != 0,
            psn: get24(&t[9..12]),
        };
        let l = layout(bth.opcode).ok_or(Drop::BadOpcode)?;
        if t[1] & 0xf != 0 {
            return Err(Drop::BadOpcode); // transport header version 0 only
        }
        let mut at = BTH_BYTES;
        let end = t.len() - ICRC_BYTES;
        let take = |at: &mut usize, n: usize| -> Result<usize, Drop> {
            let s = *at;
            if s + n > end {
                return Err(Drop::Truncated);
            }
            *at += n;
            Ok(s)
        };
        let reth = if l.reth {
            let s = take(&mut at, 16)?;
            Some(Reth {
                va: u64::from_be_bytes(t[s..s + 8].try_into().expect("8 bytes")),
                rkey: u32::from_be_bytes(t[s + 8..s + 12].try_into().expect("4 bytes")),
                len: u32::from_be_bytes(t[s + 12..s + 16].try_into().expect("4 bytes")),
            })
        } else {
            None
        };
        let aeth = if l.aeth {
            let s = take(&mut at, 4)?;
            Some(Aeth {
                syndrome: t[s],
                msn: get24(&t[s + 1..s + 4]),
            })
        } else {
            None
        };
        let imm = if l.imm {
            let s = take(&mut at, 4)?;
            Some(u32::from_be_bytes(t[s..s + 4].try_into().expect("4 bytes")))
        } else {
            None
        };
        let rest = &t[at..end];
        let pad = usize::from(bth.pad);
        if pad > rest.len() || (!l.payload && !rest.is_empty()) {
            return Err(Drop::BadLength);
        }
        let net = Net {
            dst_mac: f[0..6].try_into().expect("6 bytes"),
            src_mac: f[6..12].try_into().expect("6 bytes"),
            src_ip: ip[12..16].try_into().expect("4 bytes"),
            dst_ip: ip[16..20].try_into().expect("4 bytes"),
            dscp: ip[1] >> 2,
            ecn: ip[1] & 3,
            ip_id: u16::from_be_bytes([ip[4], ip[5]]),
            ttl: ip[8],
            src_port: u16::from_be_bytes([udp[0], udp[1]]),
        };
        Ok(Packet {
            net,
            bth,
            reth,
            aeth,
            imm,
            payload: rest[..rest.len() - pad].to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn net(ip_id: u16, src_port: u16, ecn: u8, from_a: bool) -> Net {
        let (a, b) = ([10, 0, 0, 1], [10, 0, 0, 2]);
        Net {
            dst_mac: [2, 0, 0, 0, 0, 2],
            src_mac: [2, 0, 0, 0, 0, 1],
            src_ip: if from_a { a } else { b },
            dst_ip: if from_a { b } else { a },
            dscp: 0,
            ecn,
            ip_id,
            ttl: 64,
            src_port,
        }
    }

    // Frames built by scapy 2.8 (Ether/IP/UDP/BTH[/AETH]/Raw, `raw()`), ICRC included.
    const SCAPY_SEND_ONLY: &str = "02000000000202000000000108004502003c12344000401114790a0000010a000002c00012b7002800000400ffff0000001280000100000102030405060708090a0b0c0d0e0fcf50757f";
    const SCAPY_WRITE_ONLY: &str = "020000000002020000000001080045030044000740004011269d0a0000010a000002c00112b7003000000a20ffff80abcdef80fffffe1122334455667788aabbccdd0000000668656c6c6f2100005d3880a8";
    const SCAPY_NAK: &str = "02000000000202000000000108004500003000094000401126b20a0000020a000001c00212b7001c00001100ffff000000110000000560000003f500cd0f";

    #[test]
    fn send_only_matches_scapy() {
        let p = Packet {
            net: net(0x1234, 0xc000, 2, true),
            bth: Bth {
                opcode: op::SEND_ONLY,
                pkey: 0xffff,
                dest_qp: 0x12,
                ack_req: true,
                psn: 0x100,
                ..Bth::default()
            },
            reth: None,
            aeth: None,
            imm: None,
            payload: (0..16).collect(),
        };
        assert_eq!(p.encode(), hex(SCAPY_SEND_ONLY));
        assert_eq!(Packet::decode(&hex(SCAPY_SEND_ONLY)), Ok(p));
    }

    #[test]
    fn write_only_with_pad_ecn_and_fecn_matches_scapy() {
        let p = Packet {
            net: net(7, 0xc001, 3, true),
            bth: Bth {
                opcode: op::WRITE_ONLY,
                pad: 2,
                pkey: 0xffff,
                fecn: true,
                dest_qp: 0xab_cdef,
                ack_req: true,
                psn: 0xff_fffe,
                ..Bth::default()
            },
            reth: Some(Reth {
                va: 0x1122_3344_5566_7788,
                rkey: 0xaabb_ccdd,
                len: 6,
            }),
            aeth: None,
            imm: None,
            payload: b"hello!".to_vec(),
        };
        assert_eq!(p.encode(), hex(SCAPY_WRITE_ONLY));
        assert_eq!(Packet::decode(&hex(SCAPY_WRITE_ONLY)), Ok(p));
    }

    #[test]
    fn nak_matches_scapy() {
        let p = Packet {
            net: net(9, 0xc002, 0, false),
            bth: Bth {
                opcode: op::ACKNOWLEDGE,
                pkey: 0xffff,
                dest_qp: 0x11,
                psn: 5,
                ..Bth::default()
            },
            reth: None,
            aeth: Some(Aeth {
                syndrome: 0x60,
                msn: 3,
            }),
            imm: None,
            payload: vec![],
        };
        assert_eq!(p.encode(), hex(SCAPY_NAK));
        assert_eq!(Packet::decode(&hex(SCAPY_NAK)), Ok(p));
    }

    #[test]
    fn the_icrc_ignores_the_fields_routers_change() {
        let mut f = hex(SCAPY_WRITE_ONLY);
        let good = icrc(&f);
        f[15] ^= 0xfc; // DSCP/ECN
        f[22] = 3; // TTL
        f[40] ^= 0x55; // UDP checksum
        f[46] ^= 0x80; // BECN
        assert_eq!(icrc(&f), good);
        f[50] ^= 1; // PSN
        assert_ne!(icrc(&f), good);
    }

    #[test]
    fn every_single_bit_flip_is_dropped() {
        let f = hex(SCAPY_WRITE_ONLY);
        for byte in 0..f.len() {
            for bit in 0..8 {
                let mut g = f.clone();
                g[byte] ^= 1 << bit;
                let r = Packet::decode(&g);
                // The MAC addresses are not the RoCE engine's to check; the UDP checksum and
                // the BTH's FECN/BECN/reserved byte are outside the ICRC (TOS and TTL are too,
                // but the IPv4 header checksum covers them).
                if byte < 12 || byte == 40 || byte == 41 || byte == 46 {
                    continue;
                }
                assert!(r.is_err(), "flip of byte {byte} bit {bit} was accepted");
            }
        }
    }

    #[test]
    fn sender_fields_of_scapy_frames_are_right() {
        for f in [SCAPY_SEND_ONLY, SCAPY_WRITE_ONLY, SCAPY_NAK] {
            let mut f = hex(f);
            assert_eq!(check_sender_fields(&f), Ok(()));
            let c = udp_checksum(&f);
            f[40..42].copy_from_slice(&c.to_be_bytes());
            assert_eq!(check_sender_fields(&f), Ok(()));
            f[41] ^= 1;
            assert!(check_sender_fields(&f).is_err());
        }
    }

    #[test]
    fn the_ip_checksum_of_a_valid_header_is_zero() {
        let f = hex(SCAPY_NAK);
        assert_eq!(ip_checksum(&f[14..34]), 0);
    }
}
