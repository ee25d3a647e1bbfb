//! Frame-building pieces shared by the engine's transmit paths (`engine/tx.rs`: capsules, ACKs,
//! CNPs; `read.rs`: READ responses) and its receiver: byte slicing, the IPv4 header checksum,
//! the Ethernet/IPv4/UDP header bytes and the ICRC's masked bytes.

use hdl_builder::prelude::*;

/// Byte `i` of `v` (byte 0 in bits 7:0).
pub(super) fn byte(v: &Expr, i: u32) -> Expr {
    v.slice(8 * i + 7, 8 * i)
}

/// The bytes of a big-endian field, first byte on the wire first.
pub(super) fn be(v: &Expr, n: u32) -> Vec<Expr> {
    (0..n)
        .map(|i| v.slice(8 * (n - 1 - i) + 7, 8 * (n - 1 - i)))
        .collect()
}

/// One's complement sum of 16-bit words, folded, inverted: the IPv4 header checksum.
pub(super) fn checksum(words: &[Expr]) -> Expr {
    let s = words.iter().fold(lit(20, 0), |acc, w| acc + w.zext(20));
    let f1 = s.slice(15, 0).zext(17) + s.slice(19, 16).zext(17);
    let f2 = f1.slice(15, 0) + f1.bit(16).zext(16);
    !f2
}

/// Frame bytes whose ICRC input is forced to FFh: IPv4 TOS, TTL, header checksum, UDP
/// checksum, BTH FECN/BECN/reserved.
pub(super) const ICRC_MASKED: [u32; 7] = [15, 22, 24, 25, 40, 41, 46];

/// The ICRC byte at `off` [2] bytes into the ICRC (least significant byte first on the wire).
pub(super) fn icrc_byte(crc: &Expr, off: &Expr) -> Expr {
    mux(
        off.eq(0u64),
        crc.slice(7, 0),
        mux(
            off.eq(1u64),
            crc.slice(15, 8),
            mux(off.eq(2u64), crc.slice(23, 16), crc.slice(31, 24)),
        ),
    )
}

/// A frame's addresses and lengths, every field [its wire width].
pub(super) struct NetFields {
    pub rmac: Expr,
    pub lmac: Expr,
    pub lip: Expr,
    pub rip: Expr,
    /// IPv4 total length and UDP length [16].
    pub ip_len: Expr,
    pub udp_len: Expr,
    /// UDP source port [16].
    pub sport: Expr,
    /// IPv4 TOS [8]: DSCP and ECN.
    pub tos: Expr,
}

/// The IPv4 header checksum of a frame with fields `f`.
pub(super) fn ip_checksum(f: &NetFields) -> Expr {
    checksum(&[
        cat([lit(8, 0x45), f.tos.clone()]),
        f.ip_len.clone(),
        lit(16, 0),
        lit(16, 0x4000),
        lit(16, 0x4011),
        f.lip.slice(31, 16),
        f.lip.slice(15, 0),
        f.rip.slice(31, 16),
        f.rip.slice(15, 0),
    ])
}

/// The 42 Ethernet, IPv4 and UDP header bytes in wire order, `sum` the IPv4 header checksum
/// (`ip_checksum`): IPv4 TOS `f.tos`, identification 0, DF, TTL 64; UDP to 4791, checksum 0.
pub(super) fn net_bytes(f: &NetFields, sum: &Expr) -> Vec<Expr> {
    let mut b = Vec::new();
    b.extend(be(&f.rmac, 6));
    b.extend(be(&f.lmac, 6));
    b.extend(be(&lit(16, 0x0800), 2));
    b.push(lit(8, 0x45));
    b.push(f.tos.clone());
    b.extend(be(&f.ip_len, 2));
    b.extend(be(&lit(16, 0), 2));
    b.extend(be(&lit(16, 0x4000), 2));
    b.push(lit(8, 64));
    b.push(lit(8, 17));
    b.extend(be(sum, 2));
    b.extend(be(&f.lip, 4));
    b.extend(be(&f.rip, 4));
    b.extend(be(&f.sport, 2));
    b.extend(be(&lit(16, 4791), 2));
    b.extend(be(&f.udp_len, 2));
    b.extend(be(&lit(16, 0), 2));
    b
}
