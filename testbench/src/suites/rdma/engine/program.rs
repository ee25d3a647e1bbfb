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
    let t = HostTos {
        data_dscp: (seed >> 8) as u8 & 63,
        data_ecn: (seed >> 16) as u8 % 3,
        cnp_dscp: (seed >> 24) as u8 & 63,
    };
    bus.write32(
        roce_csr::TX_TOS,
        u32::from(t.cnp_dscp) << 8 | u32::from(t.data_dscp) << 2 | u32::from(t.data_ecn),
    );
    t
}
