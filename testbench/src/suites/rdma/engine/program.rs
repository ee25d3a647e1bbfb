//! Firmware's programming of the engine through its CSRs: the QPs' configurations and the
//! traffic classes (also used by the `chip` suites).

use super::*;

pub(crate) fn confs(psn: &[u32; 4], qps: usize, mtu: &[usize]) -> Vec<QpConf> {
    (0..qps)
        .map(|q| QpConf {
            host_mac: [0x02, 0, 0, 0, 0x10, q as u8],
            target_mac: [0x02, 0, 0, 0, 0x20, q as u8],
            host_ip: [10, 0, 0, 1],
            target_ip: [10, 0, 1, 1 + q as u8],
            host_qpn: 0x11 + 0x100 * q as u32,
            target_qpn: 0x2000 + q as u32,
            pkey: if q == 0 { 0xffff } else { 0x8001 },
            host_psn: psn[2 * q] & 0xff_ffff,
            target_psn: psn[2 * q + 1] & 0xff_ffff,
            mtu: mtu[q],
        })
        .collect()
}

pub(crate) fn reg(name: &str) -> u32 {
    roce_csr::REGISTERS
        .iter()
        .find(|r| r.0 == name)
        .unwrap_or_else(|| panic!("roce_csr has no register {name}"))
        .1
}

/// Firmware's set-up of QP `q` from `c`: addresses, QPNs, PSNs, P_Key, MTU code `mtu`, the
/// `retry` CSR (limit << 24 | timeout); `ctrl` (enable) is left to the caller.
pub(crate) fn program_qp<C: Clocked + ?Sized>(
    bus: &mut Mmio<C>,
    q: usize,
    c: &QpConf,
    mtu: u32,
    retry: u32,
) {
    let r = |n: &str| reg(&format!("qp{q}_{n}"));
    let mac = |m: [u8; 6]| {
        (
            u32::from(m[0]) << 8 | u32::from(m[1]),
            u32::from_be_bytes([m[2], m[3], m[4], m[5]]),
        )
    };
    bus.write32(r("local_qpn"), c.host_qpn);
    bus.write32(r("remote_qpn"), c.target_qpn);
    bus.write32(r("local_mac_hi"), mac(c.host_mac).0);
    bus.write32(r("local_mac_lo"), mac(c.host_mac).1);
    bus.write32(r("remote_mac_hi"), mac(c.target_mac).0);
    bus.write32(r("remote_mac_lo"), mac(c.target_mac).1);
    bus.write32(r("local_ip"), u32::from_be_bytes(c.host_ip));
    bus.write32(r("remote_ip"), u32::from_be_bytes(c.target_ip));
    bus.write32(r("sq_psn"), c.host_psn);
    bus.write32(r("rq_psn"), c.target_psn);
    bus.write32(r("pkey"), u32::from(c.pkey));
    bus.write32(r("mtu"), mtu);
    bus.write32(r("retry"), retry);
}

/// Firmware's choice of the frames' IPv4 TOS (`tx_tos`), drawn from `seed`: the reset value
/// (ECT(0), DSCP 0) one time in four, else any DSCPs and a data ECN of 00, 01 or 10. Returns
/// what the target must see.
pub(crate) fn program_tos<C: Clocked + ?Sized>(bus: &mut Mmio<C>, seed: u64) -> HostTos {
    if seed.is_multiple_of(4) {
        return HostTos::default();
    }
    let t = host_tos(seed);
    bus.write32(
        roce_csr::TX_TOS,
        u32::from(t.cnp_dscp) << 8 | u32::from(t.data_dscp) << 2 | u32::from(t.data_ecn),
    );
    t
}

/// The traffic classes `program_tos(seed)` gives the engine (before it runs: the addresses
/// [`edge_addresses`] solves for depend on the TOS bytes).
pub(crate) fn host_tos(seed: u64) -> HostTos {
    if seed.is_multiple_of(4) {
        return HostTos::default();
    }
    HostTos {
        data_dscp: (seed >> 8) as u8 & 63,
        data_ecn: (seed >> 16) as u8 % 3,
        cnp_dscp: (seed >> 24) as u8 & 63,
    }
}

/// The 20-bit sum of an engine frame's IPv4 header words (checksum field 0), before the
/// one's complement fold: version/IHL and `tos`, total length `ip_len`, identification 0,
/// DF, TTL 64 and UDP, the addresses.
pub(crate) fn ip_header_sum(tos: u8, ip_len: u32, src: [u8; 4], dst: [u8; 4]) -> u32 {
    let w = |a: [u8; 4]| {
        u32::from(u16::from_be_bytes([a[0], a[1]])) + u32::from(u16::from_be_bytes([a[2], a[3]]))
    };
    (0x4500 | u32::from(tos)) + ip_len + 0x4000 + 0x4011 + w(src) + w(dst)
}

/// When `draw` is not 0, gives every QP of `confs` host and target IPv4 addresses (drawn from
/// `draw`) that put the header sum of one kind of frame the engine sends on that QP (an ACK,
/// a CNP, a capsule with or without 512 bytes of data, a READ response packet of a full path
/// MTU), with the traffic classes `tos`, at an edge of the one's complement fold: the low 16
/// bits just under or at a carry (the folded sum FFFFh: checksum 0), just past one, or a
/// folded sum whose low byte is near FFh. With fixed addresses the sum never
/// carries, and an adder's carry or fold in the engine's checksums goes unexercised.
pub(crate) fn edge_addresses(confs: &mut [QpConf], draw: u64, tos: &HostTos) {
    if draw == 0 {
        return;
    }
    let mut rng = Rng::new(draw);
    let data = tos.data_dscp << 2 | tos.data_ecn;
    let cnp = tos.cnp_dscp << 2;
    for c in confs.iter_mut() {
        let mtu = c.mtu as u32;
        let (t, ip_len) = match rng.below(6) {
            0 => (data, 48),        // ACK / NAK
            1 => (cnp, 60),         // CNP
            2 => (data, 108),       // capsule
            3 => (data, 108 + 512), // capsule with in-capsule data
            4 => (data, 44 + mtu),  // READ response middle
            _ => (data, 48 + mtu),  // READ response first, or last / only of a full MTU
        };
        // Address words: all small (a sum without a carry is possible), or each small, large
        // (several carries: an operand's change moves the carry count) or anything.
        let small = rng.chance(30);
        let mut word = || match if small { 0 } else { rng.below(3) } {
            0 => rng.below(0x1000) as u16,
            1 => 0xf000 | rng.below(0x1000) as u16,
            _ => rng.next_u64() as u16,
        };
        let (a, b, d) = (word(), word(), word());
        let src = [(a >> 8) as u8, a as u8, (b >> 8) as u8, b as u8];
        let rest = ip_header_sum(t, ip_len, src, [(d >> 8) as u8, d as u8, 0, 0]);
        // The low 16 bits wanted, given the high part `h` of the sum.
        let pick = rng.below(7);
        let low = |h: u32, r: u64| -> u32 {
            match pick {
                0 => 0xffff - h,                  // folds to FFFFh
                1 => 0xffff,                      // at a carry
                2 => 0xfffe - h,                  // one under FFFFh
                3 => (r % 0x100) as u32,          // just past a carry
                4 => 0xff00 + (r % 0x100) as u32, // just under one
                // The folded sum's low byte near FFh.
                5 => ((r as u32 & 0xff00) | 0xf0 | (r >> 16) as u32 & 15).wrapping_sub(h) & 0xffff,
                _ => r as u32 & 0xffff,
            }
        };
        let r = rng.next_u64();
        let e = (0..8u32)
            .map(|h| (h, h << 16 | low(h, r)))
            .find(|&(_, s)| s >= rest && s - rest <= 0xffff)
            .map_or(0, |(_, s)| s - rest);
        let dst = [(d >> 8) as u8, d as u8, (e >> 8) as u8, e as u8];
        c.host_ip = src;
        c.target_ip = dst;
    }
}
