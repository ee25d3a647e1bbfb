//! The TCP/IP engine `tcp_*`: see `mod.rs` for the contract. Built in this order: the CSRs,
//! the Ethernet byte deserializer and the parser (header bytes kept, checksums summed a byte
//! at a time, payload written into the receive buffer or the echo buffer), the checks at a
//! frame's end, the ARP cache, the ISN unit, the per-connection TCP state, the transmit
//! buffers' writer (`tx`), the receive buffers' reader (`rx`), and the frame generator.
//!
//! Long (about 3,000 lines) for now: one generator function whose ~200 nets the stages share;
//! splitting it means passing them through structs (as `roce/engine/`), left for the 64-bit
//! header parser, which replaces the byte-serial one anyway. The buffers are `lanes::Lanes`.

use super::isn::round_expr;
use super::lanes::Lanes;
use super::TcpParams;
use hdl_builder::prelude::*;
use hdl_builder::regs::{Access, RegBlock, RegMap};
use hdl_builder::{Comb, Error, ErrorKind, Errors};
use std::panic::Location;
use std::rc::Rc;

/// The engine's module name.
pub fn module_name(p: &TcpParams) -> String {
    format!(
        "tcp_w{}_c{}_t{}_r{}_a{}_e{}",
        p.data_width, p.connections, p.tx_bytes, p.rx_bytes, p.arp_entries, p.echo_bytes
    )
}

/// The counters, in register order from [`COUNTER_BASE`].
pub const COUNTERS: [(&str, &str); 19] = [
    (
        "seg_in",
        "TCP segments matched to a connection, good checksum",
    ),
    ("seg_out", "TCP segments sent"),
    (
        "retrans",
        "segments sent again (bytes below SND.MAX, a SYN or FIN again)",
    ),
    ("rto_fires", "retransmission timer expiries"),
    ("drop_csum", "frames dropped: IPv4, ICMP or TCP checksum"),
    (
        "drop_other",
        "frames dropped: not for us, no connection, not handled",
    ),
    (
        "drop_malformed",
        "frames dropped: IPv4 options, fragment, lengths",
    ),
    ("rst_in", "RSTs accepted"),
    ("rst_out", "RSTs sent on a connection (abort, retry limit)"),
    ("echo_out", "ICMP echo replies sent"),
    ("arp_out", "ARP requests and replies sent"),
    ("tx_drop", "tx bytes dropped (a beat without credit)"),
    (
        "ooo_kept",
        "out-of-order segments kept (first byte in the free space, touching the kept range)",
    ),
    (
        "ooo_dropped",
        "out-of-order segments dropped (no room, or apart from the kept range)",
    ),
    ("dup_acks", "duplicate ACKs received (RFC 5681)"),
    (
        "fast_retrans",
        "segments sent by fast retransmit or a NewReno partial ACK (in retrans too)",
    ),
    (
        "challenge_acks",
        "segments answered by a challenge ACK (RFC 5961: RST in window not at RCV.NXT, SYN, ACK out of range)",
    ),
    (
        "rst_dropped",
        "RSTs dropped: outside the receive window, or in SYN-SENT without the ACK of the SYN",
    ),
    (
        "rst_closed",
        "RSTs sent for segments to no connection (RFC 9293 3.10.7.1, in seg_out too)",
    ),
];

/// Byte offset of the first counter.
pub const COUNTER_BASE: u32 = 0x80;

/// Byte offset of connection `c`'s registers.
pub fn conn_base(c: u32) -> u32 {
    0x100 + 0x40 * c
}

/// State codes of a connection's `state` CSR (and its state register).
pub const STATES: [&str; 11] = [
    "StClosed",
    "StArp",
    "StIsn",
    "StSynSent",
    "StEstab",
    "StFinWait1",
    "StFinWait2",
    "StClosing",
    "StTimeWait",
    "StCloseWait",
    "StLastAck",
];

/// The smallest window shift that lets `rx_bytes` be advertised in 16 bits.
pub fn min_wscale(p: &TcpParams) -> u32 {
    let mut s = 0;
    while (p.rx_bytes >> s) > 65535 {
        s += 1;
    }
    s
}

/// The register map (`tcp_csr`, AXI4-Lite).
pub fn register_map(p: &TcpParams) -> Result<RegMap, Errors> {
    let mut b = RegBlock::new("tcp_csr", 11);
    b.doc("TCP/IP engine: addresses, timers, ISN key, per-connection control and state, counters.");
    b.doc("Ticks are `tick` cycles; counters are 32 bits and wrap.");
    b.reg(
        "mac_hi",
        0x00,
        "Local MAC address, bytes 0-1 (byte 0 first on the wire)",
    )
    .field("value", 0, 16, Access::Rw, 0x0200, "MAC bits 47:32");
    b.reg("mac_lo", 0x04, "Local MAC address, bytes 2-5").field(
        "value",
        0,
        32,
        Access::Rw,
        0,
        "MAC bits 31:0",
    );
    b.reg("ip", 0x08, "Local IPv4 address").field(
        "value",
        0,
        32,
        Access::Rw,
        0,
        "address, first byte in bits 31:24",
    );
    b.reg(
        "netmask",
        0x0c,
        "IPv4 netmask: remote addresses outside go through the gateway",
    )
    .field("value", 0, 32, Access::Rw, 0xffff_ff00, "netmask");
    b.reg("gateway", 0x10, "IPv4 gateway")
        .field("value", 0, 32, Access::Rw, 0, "address");
    b.reg("tick", 0x14, "Timer tick").field(
        "cycles",
        0,
        24,
        Access::Rw,
        250_000,
        "cycles per tick, at least 1 (1 ms at 250 MHz)",
    );
    b.reg("rto_min", 0x18, "Smallest retransmission timeout")
        .field(
            "ticks",
            0,
            16,
            Access::Rw,
            200,
            "ticks (RFC 6298 says 1 s; Linux uses 200 ms)",
        );
    b.reg("rto_max", 0x1c, "Largest retransmission timeout")
        .field("ticks", 0, 16, Access::Rw, 60_000, "ticks");
    b.reg(
        "rto_init",
        0x20,
        "Retransmission timeout before the first RTT sample",
    )
    .field("ticks", 0, 16, Access::Rw, 1000, "ticks");
    b.reg("retries", 0x24, "Retry limits")
        .field(
            "tcp",
            0,
            8,
            Access::Rw,
            8,
            "RTO expiries in a row after which the connection is reset",
        )
        .field(
            "arp",
            8,
            8,
            Access::Rw,
            4,
            "ARP requests after which an open fails",
        );
    b.reg("arp_retry", 0x28, "ARP request interval").field(
        "ticks",
        0,
        16,
        Access::Rw,
        1000,
        "ticks",
    );
    b.reg("time_wait", 0x2c, "TIME-WAIT duration")
        .field("ticks", 0, 16, Access::Rw, 2000, "ticks");
    b.reg("isn_key0", 0x30, "ISN key, word 0 (RFC 6528 secret)")
        .field("value", 0, 32, Access::Rw, 0, "key k0");
    b.reg("isn_key1", 0x34, "ISN key, word 1")
        .field("value", 0, 32, Access::Rw, 0, "key k1");
    b.reg(
        "mss",
        0x38,
        "MSS offered in the SYN and largest payload sent",
    )
    .field("bytes", 0, 16, Access::Rw, 1460, "bytes, 64 or more");
    b.reg("wscale", 0x3c, "Window shift offered in the SYN (RFC 7323)")
        .field(
            "shift",
            0,
            4,
            Access::Rw,
            u64::from(min_wscale(p)),
            "0 to 14",
        );
    b.reg(
        "ack_delay",
        0x44,
        "Delayed ACK (RFC 9293 3.8.6.3, RFC 5681 4.2)",
    )
    .field(
        "ticks",
        0,
        16,
        Access::Rw,
        40,
        "ticks an in-order data segment's ACK may wait for a second segment, data to send or the timer (RFC 9293: under 0.5 s); 0: every segment ACKed at once",
    );
    b.reg("params", 0x40, "Build parameters")
        .field(
            "tx_log2",
            0,
            5,
            Access::Ro,
            0,
            "log2 of the transmit buffer bytes per connection",
        )
        .field(
            "rx_log2",
            8,
            5,
            Access::Ro,
            0,
            "log2 of the receive buffer bytes per connection",
        )
        .field("conns", 16, 5, Access::Ro, 0, "connections");
    for (i, (name, doc)) in COUNTERS.iter().enumerate() {
        b.reg(name, COUNTER_BASE + 4 * i as u32, doc)
            .field("value", 0, 32, Access::Ro, 0, doc);
    }
    for c in 0..p.connections {
        let o = conn_base(c);
        b.reg(&format!("c{c}_remote_ip"), o, "Remote IPv4 address")
            .field("value", 0, 32, Access::Rw, 0, "address");
        b.reg(&format!("c{c}_ports"), o + 4, "TCP ports")
            .field(
                "remote",
                0,
                16,
                Access::Rw,
                4420,
                "remote port (NVMe/TCP 4420)",
            )
            .field(
                "local",
                16,
                16,
                Access::Rw,
                u64::from(49152 + c),
                "local port",
            );
        b.reg(&format!("c{c}_ctrl"), o + 8, "Connection control")
            .field(
                "open",
                0,
                1,
                Access::WoPulse,
                0,
                "write 1 in CLOSED: active open",
            )
            .field(
                "close",
                1,
                1,
                Access::WoPulse,
                0,
                "write 1: FIN after the data",
            )
            .field(
                "abort",
                2,
                1,
                Access::WoPulse,
                0,
                "write 1: RST (if synchronized), to CLOSED",
            );
        b.reg(&format!("c{c}_state"), o + 12, "Connection state")
            .field("state", 0, 4, Access::Ro, 0, "0 CLOSED 1 ARP 2 ISN 3 SYN-SENT 4 ESTABLISHED 5 FIN-WAIT-1 6 FIN-WAIT-2 7 CLOSING 8 TIME-WAIT 9 CLOSE-WAIT 10 LAST-ACK")
            .field("failed", 4, 1, Access::Ro, 0, "the last connection failed")
            .field("reason", 8, 2, Access::Ro, 0, "why: 1 RST received, 2 retry limit, 3 ARP unresolved (0 abort)")
            .field("retries", 16, 8, Access::Ro, 0, "RTO expiries in a row");
        b.reg(&format!("c{c}_snd_una"), o + 16, "SND.UNA").field(
            "value",
            0,
            32,
            Access::Ro,
            0,
            "oldest unacknowledged sequence number",
        );
        b.reg(&format!("c{c}_snd_nxt"), o + 20, "SND.NXT").field(
            "value",
            0,
            32,
            Access::Ro,
            0,
            "next sequence number to send",
        );
        b.reg(&format!("c{c}_rcv_nxt"), o + 24, "RCV.NXT").field(
            "value",
            0,
            32,
            Access::Ro,
            0,
            "next sequence number expected (data)",
        );
        b.reg(&format!("c{c}_rtt"), o + 28, "Round-trip estimate")
            .field("srtt", 0, 16, Access::Ro, 0, "SRTT, ticks")
            .field("rto", 16, 16, Access::Ro, 0, "current RTO, ticks");
        b.reg(&format!("c{c}_iss"), o + 32, "Initial send sequence number")
            .field("value", 0, 32, Access::Ro, 0, "ISS");
        b.reg(&format!("c{c}_snd_wnd"), o + 36, "Peer's window, scaled")
            .field("value", 0, 32, Access::Ro, 0, "bytes");
        b.reg(
            &format!("c{c}_cwnd"),
            o + 40,
            "Congestion window (RFC 5681)",
        )
        .field("value", 0, 32, Access::Ro, 0, "bytes");
        b.reg(
            &format!("c{c}_ssthresh"),
            o + 44,
            "Slow start threshold (RFC 5681)",
        )
        .field(
            "value",
            0,
            32,
            Access::Ro,
            0,
            "bytes (all ones: not set by a loss yet)",
        );
    }
    b.finish()
}

/// Bytes of a big-endian value, first on the wire first.
fn be(v: &Expr, n: u32) -> Vec<Expr> {
    (0..n)
        .map(|i| v.slice(8 * (n - 1 - i) + 7, 8 * (n - 1 - i)))
        .collect()
}

/// A 32-bit one's-complement accumulator folded to 16 bits.
fn fold16(s: &Expr) -> Expr {
    let f1 = s.slice(15, 0).zext(17) + s.slice(31, 16).zext(17);
    f1.slice(15, 0) + f1.bit(16).zext(16)
}

/// `vals[idx]` as a mux chain (`idx` compared with each index; the last is the default).
fn sel(idx: &Expr, vals: &[Expr]) -> Expr {
    let mut e = vals[vals.len() - 1].clone();
    for i in (0..vals.len() - 1).rev() {
        e = mux(idx.eq(i as u64), vals[i].clone(), e);
    }
    e
}

/// Signed "a - b > 0" on 32-bit sequence numbers.
fn seq_gt(a: &Expr, b: &Expr) -> Expr {
    let d = a.clone() - b.clone();
    d.bit(31).eq(0u64) & d.any()
}

/// Signed "a - b >= 0" on 32-bit sequence numbers.
fn seq_ge(a: &Expr, b: &Expr) -> Expr {
    let d = a.clone() - b.clone();
    d.bit(31).eq(0u64)
}

/// `a < b ? a : b`.
fn min(a: Expr, b: Expr) -> Expr {
    mux(a.lt(&b), a, b)
}

/// `min(x, 8)` in 4 bits: the bytes of `x` left that one 8-byte step takes.
fn upto8(x: &Expr) -> Expr {
    mux(x.ge(8u64), lit(4, 8), x.resize(4))
}

/// An 8-bit mask of the first `n` bytes: bit i is `n > i`.
fn first(n: &Expr) -> Expr {
    cat((0..8u32).rev().map(|i| n.gt(u64::from(i))))
}

/// An 8-bit mask of the lanes below `lane` (3 bits): bit i is `lane > i`.
fn below(lane: &Expr) -> Expr {
    cat(std::iter::once(lit(1, 0)).chain((0..7u32).rev().map(|i| lane.gt(u64::from(i)))))
}

/// The one's-complement contribution (32-bit, unfolded) of the bytes of `bytes` (64 bits,
/// byte i in bits 8i+7:8i) whose bit is set in `mask` (8 bits) to a checksum: byte i is a
/// word's high byte when it sits at an even offset of the summed bytes, which is when i is
/// even unless `odd` (the offset of byte 0 is odd).
fn bytes_sum(bytes: &Expr, mask: &Expr, odd: Option<&Expr>) -> Expr {
    (0..8u32).fold(lit(32, 0), |a, i| {
        let x = mux(mask.bit(i), bytes.slice(8 * i + 7, 8 * i), lit(8, 0));
        let (hi, lo) = (cat([x.clone(), lit(8, 0)]), x.zext(16));
        let w = match odd {
            None if i % 2 == 0 => hi,
            None => lo,
            Some(o) if i % 2 == 0 => mux(!o.clone(), hi, lo),
            Some(o) => mux(o.clone(), hi, lo),
        };
        a + w.zext(32)
    })
}

/// RFC 5681 3.1's initial window for a 32-bit SMSS: 2, 3 or 4 SMSS (above 2190, above 1095,
/// else).
fn initial_window(smss: &Expr) -> Expr {
    mux(
        smss.gt(2190u64),
        smss.shl_by(lit(1, 1)),
        mux(
            smss.gt(1095u64),
            smss.clone() + smss.shl_by(lit(1, 1)),
            smss.shl_by(lit(2, 2)),
        ),
    )
}

/// Number of header bytes kept from a received frame (Ethernet, IPv4, TCP without options).
const RX_HDR: u32 = 54;
/// Number of header bytes of a frame the engine sends (the longest: a SYN with options).
const TX_HDR: u32 = 62;

struct Conn {
    st: Reg,
    failed: Reg,
    reason: Reg,
    iss: Reg,
    seq_used: Reg,
    snd_una: Reg,
    snd_nxt: Reg,
    snd_max: Reg,
    snd_wnd: Reg,
    max_wnd: Reg,
    wl1: Reg,
    wl2: Reg,
    wr: Reg,
    wsum: Reg,
    young: Reg,
    fin_req: Reg,
    fin_sent: Reg,
    rcv_nxt: Reg,
    rd: Reg,
    fin_in: Reg,
    ack_pend: Reg,
    adv_edge: Reg,
    peer_ws: Reg,
    ws_ok: Reg,
    peer_mss: Reg,
    rmac: Reg,
    tmr: Reg,
    retries: Reg,
    rto: Reg,
    srtt8: Reg,
    rttvar4: Reg,
    has_rtt: Reg,
    rtt_on: Reg,
    rtt_end: Reg,
    rtt_start: Reg,
    rst_pend: Reg,
    abort_req: Reg,
    arp_due: Reg,
    probe: Reg,
    ooo_on: Reg,
    ooo_lo: Reg,
    ooo_hi: Reg,
    dup_owed: Reg,
    dupacks: Reg,
    in_rec: Reg,
    recover: Reg,
    fr_pend: Reg,
    cwnd: Reg,
    ssthresh: Reg,
    ca_acc: Reg,
    idle: Reg,
    ack_dly: Reg,
    ack_tmr: Reg,
    ack_sent: Reg,
}

/// The engine (see `mod.rs`).
pub fn engine(p: &TcpParams, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let name = module_name(p);
    let ok = [64, 128, 256].contains(&p.data_width)
        && (2..=16).contains(&p.connections)
        && p.tx_bytes.is_power_of_two()
        && (1024..=65536).contains(&p.tx_bytes)
        && p.rx_bytes.is_power_of_two()
        && (1024..=65536).contains(&p.rx_bytes)
        && (2..=16).contains(&p.arp_entries)
        && p.echo_bytes.is_power_of_two()
        && (64..=2048).contains(&p.echo_bytes);
    if !ok {
        return Err(Errors(vec![Error {
            kind: ErrorKind::Invalid,
            module: name.clone(),
            signal: None,
            loc: Location::caller(),
            message: format!(
                "{name}: parameters out of range ({p:?}); see [tcp] in configs/default.toml"
            ),
        }]));
    }
    let map = register_map(p)?;
    let csr = map.module(reset)?;
    let n = p.connections;
    let cw = clog2(u64::from(n));
    let dw = p.data_width;
    let lanes = dw / 8;
    let tab = clog2(u64::from(p.tx_bytes));
    let rab = clog2(u64::from(p.rx_bytes));
    let na = p.arp_entries;
    let aw = clog2(u64::from(na));

    let mut m = ModuleBuilder::with_reset(&name, reset);
    m.doc(&format!(
        "TCP/IP engine: {n} TCP connections (active open), ARP, ICMP echo, IPv4 and TCP checksums."
    ));
    m.doc("Sends and receives 8 bytes a cycle (TCP options a byte a cycle). See hdl-gen/src/tcp/mod.rs for the contract.");
    m.clock();
    m.reset();
    m.group("Ethernet transmit (AXI4-Stream)");
    let tx_data = m.output("m_axis_tdata_o", 64);
    let tx_keep = m.output("m_axis_tkeep_o", 8);
    let tx_last = m.output("m_axis_tlast_o", 1);
    let tx_valid = m.output("m_axis_tvalid_o", 1);
    let tx_ready = m.input("m_axis_tready_i", 1);
    m.group("Ethernet receive (AXI4-Stream)");
    let rx_data = m.input("s_axis_tdata_i", 64);
    let rx_keep = m.input("s_axis_tkeep_i", 8);
    let rx_last = m.input("s_axis_tlast_i", 1);
    let rx_valid = m.input("s_axis_tvalid_i", 1);
    let rx_ready = m.output("s_axis_tready_o", 1);
    m.group("byte streams of the NVMe/TCP engine");
    let app_tx = m.stream_in(
        "tx",
        &StreamDef::new()
            .field("conn", cw)
            .field("data", dw)
            .field("keep", lanes),
    );
    let credit = m.output("tx_credit_o", n);
    m.comment(credit, "bit i: a tx beat of connection i is taken now");
    let app_rx = m.stream_out(
        "rx",
        &StreamDef::new()
            .field("conn", cw)
            .field("data", dw)
            .field("keep", lanes),
    );
    let rx_space = m.input("rx_space_i", n);
    m.comment(
        rx_space,
        "bit i: a beat of connection i presented now is taken",
    );
    m.group("state");
    let up = m.output("up_o", n);
    let failed_o = m.output("failed_o", n);

    // ------------------------------------------------------------ CSRs
    let u_csr = m.instance("u_csr", &csr);
    let csr_o = |m: &mut ModuleBuilder, port: &str| m.bind_out(u_csr, &format!("{port}_o"));
    let mac_hi = csr_o(&mut m, "mac_hi_value");
    let mac_lo = csr_o(&mut m, "mac_lo_value");
    let lmac = m.net("local_mac", cat([mac_hi.ex(), mac_lo.ex()]));
    let lip = csr_o(&mut m, "ip_value");
    let mask = csr_o(&mut m, "netmask_value");
    let gw = csr_o(&mut m, "gateway_value");
    let tick_cycles = csr_o(&mut m, "tick_cycles");
    let rto_min = csr_o(&mut m, "rto_min_ticks");
    let rto_max = csr_o(&mut m, "rto_max_ticks");
    let rto_init = csr_o(&mut m, "rto_init_ticks");
    let retry_lim = csr_o(&mut m, "retries_tcp");
    let arp_lim = csr_o(&mut m, "retries_arp");
    let arp_retry = csr_o(&mut m, "arp_retry_ticks");
    let tw_ticks = csr_o(&mut m, "time_wait_ticks");
    let key0 = csr_o(&mut m, "isn_key0_value");
    let key1 = csr_o(&mut m, "isn_key1_value");
    let mss_csr = csr_o(&mut m, "mss_bytes");
    let wscale_csr = csr_o(&mut m, "wscale_shift");
    let ack_delay = csr_o(&mut m, "ack_delay_ticks");
    m.bind(u_csr, "params_tx_log2_i", lit(5, u128::from(tab)));
    m.bind(u_csr, "params_rx_log2_i", lit(5, u128::from(rab)));
    m.bind(u_csr, "params_conns_i", lit(5, u128::from(n)));
    let our_ws = m.net(
        "our_wscale",
        mux(wscale_csr.gt(14u64), lit(4, 14), wscale_csr.ex()),
    );
    m.comment(our_ws, "the window shift offered, at most 14");

    // Timer tick and the ISN clock.
    let tick_cnt = m.reg("tick_cnt", 24, 0);
    let tick = m.net(
        "tick",
        tick_cnt.q.ge(tick_cycles.ex() - 1u64) | tick_cycles.le(1u64),
    );
    m.comment(tick, "one cycle every `tick` cycles");
    m.assign(tick_cnt.d, mux(tick, lit(24, 0), tick_cnt.q + 1u64));
    let now = m.reg("now", 16, 0);
    m.comment(now.q, "ticks since reset (RTT samples)");
    m.assign(now.d, mux(tick, now.q + 1u64, now.q.ex()));
    let isn_clk = m.reg("isn_clock", 42, 0);
    m.comment(isn_clk.q, "cycles; bits 41:10 are RFC 6528's M");
    m.assign(isn_clk.d, isn_clk.q + 1u64);

    // ------------------------------------------------------------ Ethernet in: a beat a
    // cycle, but the TCP options a byte a cycle
    let ib_data = m.reg("ib_data", 64, 0);
    let ib_keep = m.reg("ib_keep", 8, 0);
    let ib_last = m.reg("ib_last", 1, 0);
    let ib_valid = m.reg("ib_valid", 1, 0);
    let ib_lane = m.reg("ib_lane", 3, 0);
    m.comment(
        ib_lane.q,
        "the lane of the held beat the parser takes from this cycle",
    );
    let nkeep = (0..8u32).fold(lit(4, 0), |a, l| a + ib_keep.q.bit(l).zext(4));
    let nrest = m.net("rx_beat_rest", nkeep - ib_lane.q.zext(4));
    m.comment(nrest, "bytes of the held beat from the current lane on");
    let step = m.wire("rx_step", 4);
    m.comment(
        step,
        "bytes of the frame taken this cycle: the rest of the beat, but the headers end at byte 54 and the TCP options go a byte a cycle",
    );
    let lane_last = m.net("ib_lane_last", nrest.le(step));
    m.comment(lane_last, "the held beat is done after this cycle");
    m.assign(rx_ready, !ib_valid.q | lane_last);
    let in_fire = m.net("ib_fire", rx_valid & (!ib_valid.q | lane_last));
    m.comb(|c| {
        c.set(ib_data.d, ib_data.q);
        c.set(ib_keep.d, ib_keep.q);
        c.set(ib_last.d, ib_last.q);
        c.set(ib_valid.d, ib_valid.q);
        c.set(ib_lane.d, ib_lane.q);
        c.if_(in_fire, |c| {
            c.set(ib_data.d, rx_data);
            c.set(ib_keep.d, rx_keep);
            c.set(ib_last.d, rx_last);
            c.set(ib_valid.d, 1u64);
            c.set(ib_lane.d, 0u64);
        })
        .else_if(ib_valid.q & lane_last, |c| c.set(ib_valid.d, 0u64))
        .else_if(ib_valid.q, |c| {
            c.set(ib_lane.d, ib_lane.q + step.slice(2, 0))
        });
    });
    let bv = m.net("rx_byte_valid", ib_valid.q.ex());
    let eof = m.net("rx_eof", ib_valid.q & lane_last & ib_last.q);
    let chunk = m.net(
        "rx_chunk",
        ib_data.q.shr_by(cat([ib_lane.q.ex(), lit(3, 0)])),
    );
    m.comment(
        chunk,
        "the held beat from the current lane on, that lane's byte in 7:0",
    );
    let b = m.net("rx_byte", chunk.slice(7, 0));
    m.comment(
        b,
        "the chunk's first byte (the one taken, in the TCP options)",
    );

    // ------------------------------------------------------------ parser
    let ri = m.reg("rx_idx", 16, 0);
    m.comment(
        ri.q,
        "index in its frame of the chunk's first byte (saturates); lane ri mod 8, as beats are full but the last",
    );
    m.assign(
        ri.d,
        mux(
            bv & eof,
            lit(16, 0),
            mux(bv & ri.q.lt(0xfff0u64), ri.q + step.zext(16), ri.q.ex()),
        ),
    );
    let hdr = m.reg("rx_hdr", RX_HDR * 8, 0);
    m.comment(hdr.q, "the frame's first 54 bytes, byte 0 in bits 7:0");
    // Byte i of the frame is in lane i mod 8 of its beat (i / 8): a header byte is written
    // while the held beat is its beat (again, with the same value, while the options of
    // that beat go a byte a cycle).
    let hdr_next: Vec<Expr> = (0..RX_HDR)
        .map(|i| {
            let l = i % 8;
            mux(
                bv & ri.q.slice(15, 3).eq(u64::from(i / 8)) & ib_keep.q.bit(l),
                ib_data.q.slice(8 * l + 7, 8 * l),
                hdr.q.slice(8 * i + 7, 8 * i),
            )
        })
        .collect();
    m.assign(hdr.d, cat(hdr_next.into_iter().rev()));
    let hb = |i: u32| hdr.q.slice(8 * i + 7, 8 * i);
    let hbe = |i: u32, nb: u32| cat((i..i + nb).map(hb));
    let dmac = m.net("rx_dmac", hbe(0, 6));
    let smac = m.net("rx_smac", hbe(6, 6));
    let etype = m.net("rx_etype", hbe(12, 2));
    let ver_ihl = m.net("rx_ver_ihl", hb(14));
    let totlen = m.net("rx_totlen", hbe(16, 2));
    let frag = m.net("rx_frag", hbe(20, 2));
    let proto = m.net("rx_proto", hb(23));
    let sip = m.net("rx_sip", hbe(26, 4));
    let dip = m.net("rx_dip", hbe(30, 4));
    let sport = m.net("rx_sport", hbe(34, 2));
    let dport = m.net("rx_dport", hbe(36, 2));
    let seq = m.net("rx_seq", hbe(38, 4));
    let ackn = m.net("rx_ack", hbe(42, 4));
    let thl = m.net("rx_thl", cat([hb(46).slice(7, 4), lit(2, 0)]));
    m.comment(thl, "TCP header length, bytes");
    let flags = m.net("rx_flags", hb(47));
    let wnd = m.net("rx_wnd", hbe(48, 2));
    // ARP fields (same bytes, another reading).
    let arp_hp = m.net("rx_arp_hp", hbe(14, 6));
    m.comment(arp_hp, "ARP htype, ptype, hlen, plen");
    let arp_op = m.net("rx_arp_op", hbe(20, 2));
    let arp_sha = m.net("rx_arp_sha", hbe(22, 6));
    let arp_spa = m.net("rx_arp_spa", hbe(28, 4));
    let arp_tpa = m.net("rx_arp_tpa", hbe(38, 4));
    let icmp_tc = m.net("rx_icmp_type_code", hbe(34, 2));
    let icmp_csum = m.net("rx_icmp_csum", hbe(36, 2));
    m.unused(
        "rx_hdr_unused",
        cat([
            hb(15),
            hbe(18, 2),
            hb(22),
            hbe(24, 2),
            hb(46).slice(3, 0),
            hbe(50, 4),
        ]),
    );
    m.unused("rx_arp_tha", hbe(32, 6));
    m.unused("rx_frag_flags", frag.slice(15, 14));
    m.unused("rx_flags_other", cat([flags.slice(7, 5), flags.bit(3)]));
    let is_ip = m.net("rx_is_ip", etype.eq(0x0800u64));
    let is_tcp_hdr = m.net("rx_tcp_frame", is_ip & proto.eq(6u64));
    m.comment(
        is_tcp_hdr,
        "the frame so far is IPv4 carrying TCP (from byte 24 on)",
    );

    let ip_end = m.net("rx_ip_end", totlen.zext(17) + 14u64);
    m.comment(ip_end, "frame offset one past the IPv4 packet");
    let ri17 = m.net("rx_idx17", ri.q.zext(17));
    let pay_start = m.net("rx_pay_start", thl.zext(16) + 34u64);
    // `thl` comes from byte 46, so only from byte 48 on is it this frame's: never before 54
    // (the shortest TCP header), or a frame after one with a small byte 46 (an ARP frame, an
    // echo request) has its header bytes written as payload (found against Linux).
    let tcp_tail = m.net("rx_in_tcp_tail", bv & ri.q.ge(54u64) & is_tcp_hdr);
    m.comment(
        tcp_tail,
        "a TCP frame's byte 54 or later is taken: its options, then its payload",
    );
    let fast = m.net("rx_in_pay", tcp_tail & ri.q.ge(pay_start));
    m.comment(
        fast,
        "inside a TCP segment's payload: the rest of the beat goes this cycle",
    );
    let in_opt = m.net("rx_in_opt", tcp_tail & ri.q.lt(pay_start));
    m.comment(
        in_opt,
        "a TCP option byte is taken this cycle (one a cycle)",
    );
    let to_hdr_end = m.net("rx_to_hdr_end", lit(6, 54) - ri.q.slice(5, 0));
    m.assign(
        step,
        mux(
            ri.q.lt(54u64),
            min(nrest.zext(6), to_hdr_end.ex()).slice(3, 0),
            mux(in_opt, lit(4, 1), nrest.ex()),
        ),
    );
    let vmask = m.net("rx_chunk_mask", first(&step.ex()));
    m.comment(vmask, "bit i: the chunk's byte i is taken this cycle");
    // Byte i of the chunk is at frame offset ri + i.
    let off: Vec<Expr> = (0..8u32).map(|i| ri17.ex() + u64::from(i)).collect();
    let in_range = |lo: &Expr, hi: &Expr| -> Expr {
        cat(off
            .iter()
            .enumerate()
            .rev()
            .map(|(i, o)| vmask.bit(i as u32) & o.ge(lo.clone()) & o.lt(hi.clone())))
    };
    // Checksums: the IPv4 header (bytes 14..33), the ICMP/TCP bytes (34 .. ip_end).
    let ip_mask = m.net("rx_ip_mask", in_range(&lit(17, 14), &lit(17, 34)));
    m.comment(ip_mask, "bit i: the chunk's byte i is in the IPv4 header");
    let l4_mask = m.net("rx_l4_mask", in_range(&lit(17, 34), &ip_end.ex()));
    m.comment(
        l4_mask,
        "bit i: the chunk's byte i is in the ICMP message or TCP segment",
    );
    let ip_sum = m.reg("rx_ip_sum", 32, 0);
    let l4_sum = m.reg("rx_l4_sum", 32, 0);
    for (sum, mask) in [(&ip_sum, ip_mask), (&l4_sum, l4_mask)] {
        m.assign(
            sum.d,
            mux(
                bv,
                mux(ri.q.eq(0u64), lit(32, 0), sum.q.ex())
                    + bytes_sum(&chunk.ex(), &mask.ex(), Some(&ri.q.bit(0))),
                sum.q.ex(),
            ),
        );
    }
    // Inside a TCP payload the chunk's bytes below ip_end (not the Ethernet padding) are
    // written at once: `pay_n` of them, from byte 0 of the chunk.
    let pay_left = m.net("rx_pay_left", ip_end.ex() - ri17.ex());
    let pay_n = m.net(
        "rx_pay_n",
        mux(
            fast & ri17.lt(ip_end),
            min(nrest.zext(17), pay_left.ex()).slice(3, 0),
            lit(4, 0),
        ),
    );
    m.comment(pay_n, "payload bytes of the chunk taken this cycle");
    // TCP options (SYN-ACK: MSS and window scale).
    let o_st = m.reg("rx_opt_state", 2, 0);
    m.comment(o_st.q, "0 kind, 1 length, 2 data, 3 end of options");
    let o_kind = m.reg("rx_opt_kind", 8, 0);
    let o_left = m.reg("rx_opt_left", 8, 0);
    let o_idx = m.reg("rx_opt_idx", 8, 0);
    let mss_in = m.reg("rx_mss", 16, 0);
    let mss_seen = m.reg("rx_mss_seen", 1, 0);
    let ws_in = m.reg("rx_ws", 8, 0);
    let ws_seen = m.reg("rx_ws_seen", 1, 0);
    m.comb(|c| {
        c.set(o_st.d, o_st.q);
        c.set(o_kind.d, o_kind.q);
        c.set(o_left.d, o_left.q);
        c.set(o_idx.d, o_idx.q);
        c.set(mss_in.d, mss_in.q);
        c.set(mss_seen.d, mss_seen.q);
        c.set(ws_in.d, ws_in.q);
        c.set(ws_seen.d, ws_seen.q);
        c.if_(bv & ri.q.eq(0u64), |c| {
            c.set(o_st.d, 0u64);
            c.set(mss_seen.d, 0u64);
            c.set(ws_seen.d, 0u64);
        })
        .else_if(in_opt, |c| {
            c.case(o_st.q, |k| {
                k.arm(0u64, |c| {
                    c.if_(b.eq(0u64), |c| c.set(o_st.d, 3u64))
                        .else_if(b.ne(1u64), |c| {
                            c.set(o_kind.d, b);
                            c.set(o_st.d, 1u64);
                        });
                });
                k.arm(1u64, |c| {
                    c.set(o_left.d, b.ex() - 2u64);
                    c.set(o_idx.d, 0u64);
                    c.set(o_st.d, mux(b.le(2u64), lit(2, 0), lit(2, 2)));
                });
                k.arm(2u64, |c| {
                    c.set(o_idx.d, o_idx.q + 1u64);
                    c.set(o_left.d, o_left.q - 1u64);
                    c.if_(o_left.q.le(1u64), |c| c.set(o_st.d, 0u64));
                    c.if_(o_kind.q.eq(2u64) & o_idx.q.eq(0u64), |c| {
                        c.set(mss_in.d, cat([b.ex(), mss_in.q.slice(7, 0)]));
                    });
                    c.if_(o_kind.q.eq(2u64) & o_idx.q.eq(1u64), |c| {
                        c.set(mss_in.d, cat([mss_in.q.slice(15, 8), b.ex()]));
                        c.set(mss_seen.d, 1u64);
                    });
                    c.if_(o_kind.q.eq(3u64) & o_idx.q.eq(0u64), |c| {
                        c.set(ws_in.d, b);
                        c.set(ws_seen.d, 1u64);
                    });
                });
                k.default(|_| {});
            });
        });
    });

    // ------------------------------------------------------------ connections: declarations
    let st_ty = m.enum_type("tcp_state", &STATES);
    let s = |x: &str| st_ty.item(x);
    let mut conns: Vec<Conn> = Vec::new();
    for c in 0..n {
        let r = |m: &mut ModuleBuilder, f: &str, w: u32| m.reg(&format!("c{c}_{f}"), w, 0);
        conns.push(Conn {
            st: m.reg_enum(&format!("c{c}_state"), &st_ty, s("StClosed")),
            failed: r(&mut m, "failed", 1),
            reason: r(&mut m, "reason", 2),
            iss: r(&mut m, "iss", 32),
            seq_used: r(&mut m, "seq_used", 1),
            snd_una: r(&mut m, "snd_una", 32),
            snd_nxt: r(&mut m, "snd_nxt", 32),
            snd_max: r(&mut m, "snd_max", 32),
            snd_wnd: r(&mut m, "snd_wnd", 32),
            max_wnd: r(&mut m, "max_snd_wnd", 32),
            wl1: r(&mut m, "snd_wl1", 32),
            wl2: r(&mut m, "snd_wl2", 32),
            wr: r(&mut m, "app_wr", 32),
            wsum: r(&mut m, "app_wr_sum", 16),
            young: r(&mut m, "tx_young", 1),
            fin_req: r(&mut m, "fin_req", 1),
            fin_sent: r(&mut m, "fin_sent", 1),
            rcv_nxt: r(&mut m, "rcv_nxt", 32),
            rd: r(&mut m, "app_rd", 32),
            fin_in: r(&mut m, "fin_in", 1),
            ack_pend: r(&mut m, "ack_pend", 1),
            adv_edge: r(&mut m, "adv_edge", 32),
            peer_ws: r(&mut m, "peer_ws", 4),
            ws_ok: r(&mut m, "ws_ok", 1),
            peer_mss: r(&mut m, "peer_mss", 16),
            rmac: r(&mut m, "rmac", 48),
            tmr: r(&mut m, "tmr", 16),
            retries: r(&mut m, "retries", 8),
            rto: r(&mut m, "rto", 16),
            srtt8: r(&mut m, "srtt8", 19),
            rttvar4: r(&mut m, "rttvar4", 18),
            has_rtt: r(&mut m, "has_rtt", 1),
            rtt_on: r(&mut m, "rtt_on", 1),
            rtt_end: r(&mut m, "rtt_end", 32),
            rtt_start: r(&mut m, "rtt_start", 16),
            rst_pend: r(&mut m, "rst_pend", 1),
            abort_req: r(&mut m, "abort_req", 1),
            arp_due: r(&mut m, "arp_due", 1),
            probe: r(&mut m, "probe", 1),
            ooo_on: r(&mut m, "ooo_on", 1),
            ooo_lo: r(&mut m, "ooo_lo", 32),
            ooo_hi: r(&mut m, "ooo_hi", 32),
            dup_owed: r(&mut m, "dup_owed", 2),
            dupacks: r(&mut m, "dupacks", 2),
            in_rec: r(&mut m, "in_recovery", 1),
            recover: r(&mut m, "recover", 32),
            fr_pend: r(&mut m, "fr_pend", 1),
            cwnd: r(&mut m, "cwnd", 32),
            ssthresh: r(&mut m, "ssthresh", 32),
            ca_acc: r(&mut m, "ca_acc", 32),
            idle: r(&mut m, "idle", 16),
            ack_dly: r(&mut m, "ack_dly", 1),
            ack_tmr: r(&mut m, "ack_tmr", 16),
            ack_sent: r(&mut m, "ack_sent", 32),
        });
        let k = &conns[c as usize];
        m.comment(
            k.wsum.q,
            "one's-complement sum of the stream's bytes from ISS+1 to app_wr (a byte at an even sequence number high)",
        );
        m.comment(
            k.young.q,
            "SND.UNA may still be in the stream's first buffer word (bytes before ISS+1 in it are not the stream's)",
        );
    }
    let rport: Vec<Sig> = (0..n)
        .map(|c| csr_o(&mut m, &format!("c{c}_ports_remote")))
        .collect();
    let lport: Vec<Sig> = (0..n)
        .map(|c| csr_o(&mut m, &format!("c{c}_ports_local")))
        .collect();
    let rip: Vec<Sig> = (0..n)
        .map(|c| csr_o(&mut m, &format!("c{c}_remote_ip_value")))
        .collect();
    let in_state = |c: &Conn, names: &[&str]| -> Expr {
        names
            .iter()
            .map(|x| c.st.q.eq(st_ty.item(x)))
            .reduce(|a, b| a | b)
            .expect("states")
    };
    // Free receive-buffer space per connection.
    let rfree: Vec<Sig> = (0..n as usize)
        .map(|c| {
            let k = &conns[c];
            m.net(
                &format!("c{c}_rx_free"),
                lit(32, u128::from(p.rx_bytes)) - (k.rcv_nxt.q.ex() - k.rd.q.ex()),
            )
        })
        .collect();

    // ------------------------------------------------------------ connection match, payload
    let matches: Vec<Sig> = (0..n as usize)
        .map(|c| {
            let k = &conns[c];
            m.net(
                &format!("c{c}_rx_match"),
                is_ip
                    & proto.eq(6u64)
                    & dip.eq(lip)
                    & sip.eq(rip[c])
                    & sport.eq(rport[c])
                    & dport.eq(lport[c])
                    & !in_state(k, &["StClosed", "StArp", "StIsn"]),
            )
        })
        .collect();
    let pm = m.reg("rx_conn_hit", 1, 0);
    m.comment(
        pm.q,
        "the frame's segment belongs to connection rx_conn (latched at byte 48)",
    );
    let pc = m.reg("rx_conn", cw, 0);
    let pfree = m.reg("rx_conn_free", 32, 0);
    m.comment(
        pfree.q,
        "its free receive space when the frame began (bytes written only there)",
    );
    let prn = m.reg("rx_conn_rcv_nxt", 32, 0);
    let pseq = m.reg("rx_pseq", 32, 0);
    m.comment(pseq.q, "the sequence number of the payload byte taken next");
    // Bytes 0..47 are in `rx_hdr` once the beat of bytes 48..55 is held.
    let latch_at = m.net("rx_latch_conn", bv & ri.q.eq(48u64));
    let hit_any = m.net(
        "rx_hit_any",
        matches
            .iter()
            .map(|x| x.ex())
            .reduce(|a, b| a | b)
            .expect("conns"),
    );
    let hit_idx = m.net(
        "rx_hit_idx",
        (0..n as usize)
            .rev()
            .fold(lit(cw, 0), |a, c| mux(matches[c], lit(cw, c as u128), a)),
    );
    m.assign(
        pm.d,
        mux(
            latch_at,
            hit_any.ex(),
            mux(bv & ri.q.eq(0u64), lit(1, 0), pm.q.ex()),
        ),
    );
    m.assign(pc.d, mux(latch_at, hit_idx.ex(), pc.q.ex()));
    let free_sel = sel(
        &hit_idx.ex(),
        &rfree.iter().map(|x| x.ex()).collect::<Vec<_>>(),
    );
    let rn_sel = sel(
        &hit_idx.ex(),
        &conns.iter().map(|k| k.rcv_nxt.q.ex()).collect::<Vec<_>>(),
    );
    m.assign(pfree.d, mux(latch_at, free_sel, pfree.q.ex()));
    m.assign(prn.d, mux(latch_at, rn_sel, prn.q.ex()));
    m.assign(pseq.d, mux(latch_at, seq.ex(), pseq.q + pay_n.zext(32)));
    let mut rxbuf = Lanes::new(&mut m, "rx_buf", u64::from(n), p.rx_bytes);
    // Bytes inside the kept out-of-order range are there already (a good segment carries the
    // same bytes at the same sequence numbers); not writing them keeps a segment that fails
    // its checksum later from overwriting them.
    let pk_sel = |f: &dyn Fn(&Conn) -> Expr| -> Expr {
        sel(&pc.q.ex(), &conns.iter().map(f).collect::<Vec<_>>())
    };
    let p_oon = m.net("rx_conn_ooo_on", pk_sel(&|k| k.ooo_on.q.ex()));
    let p_olo = m.net("rx_conn_ooo_lo", pk_sel(&|k| k.ooo_lo.q.ex()));
    let p_ohi = m.net("rx_conn_ooo_hi", pk_sel(&|k| k.ooo_hi.q.ex()));
    let pos: Vec<Expr> = (0..8u32).map(|i| pseq.q.ex() + u64::from(i)).collect();
    let in_kept = m.net(
        "rx_in_kept",
        cat(pos
            .iter()
            .rev()
            .map(|x| p_oon & (x.clone() - p_olo.ex()).lt(p_ohi.ex() - p_olo.ex()))),
    );
    m.comment(
        in_kept,
        "bit i: the chunk's payload byte i falls in the kept out-of-order range",
    );
    let rx_we = m.net(
        "rx_buf_we",
        first(&pay_n.ex())
            & cat(pos
                .iter()
                .rev()
                .map(|x| pm.q & (x.clone() - prn.q.ex()).lt(pfree.q)))
            & !in_kept,
    );
    m.comment(
        rx_we,
        "bit i: payload byte i inside the free space after RCV.NXT, not kept already",
    );
    rxbuf.write(
        &mut m,
        Some(&pc.q.ex()),
        &pseq.q.ex(),
        &chunk.ex(),
        &rx_we.ex(),
    );
    // The echo buffer: an echo request's bytes after the ICMP checksum.
    let e_pend = m.reg("echo_pend", 1, 0);
    m.comment(
        e_pend.q,
        "an echo reply waits or is being sent (its bytes are in echo_buf)",
    );
    let mut echo = Lanes::new(&mut m, "echo_buf", 1, p.echo_bytes);
    let e_idx = m.net(
        "rx_echo_idx",
        (ri.q.ex() - 38u64).slice(clog2(u64::from(p.echo_bytes)) - 1, 0),
    );
    m.comment(e_idx, "the echo buffer's offset of the chunk's byte 0");
    let e_end = min(ip_end.ex(), lit(17, 38 + u128::from(p.echo_bytes)));
    let e_on = m.net("rx_echo_on", bv & is_ip & proto.eq(1u64) & !e_pend.q);
    let e_we = m.net(
        "rx_echo_we",
        in_range(&lit(17, 38), &e_end) & e_on.repeat(8),
    );
    m.comment(
        e_we,
        "bit i: the chunk's byte i is an echo request's byte after its checksum, kept",
    );
    echo.write(&mut m, None, &e_idx.ex(), &chunk.ex(), &e_we.ex());

    // ------------------------------------------------------------ the frame's checks
    let cm = m.reg("rx_done", 1, 0);
    m.comment(
        cm.q,
        "the frame ended last cycle: its checks and effects now",
    );
    m.assign(cm.d, bv & eof);
    let flen = m.reg("rx_len", 16, 0);
    m.assign(flen.d, mux(bv & eof, ri.q + step.zext(16), flen.q.ex()));
    let for_us = m.net("rx_for_us", dmac.eq(lmac) | dmac.eq(0xffff_ffff_ffffu64));
    let arp_ok = m.net(
        "rx_arp_ok",
        etype.eq(0x0806u64)
            & flen.q.ge(42u64)
            & arp_hp.eq(0x0001_0800_0604u64)
            & arp_tpa.eq(lip)
            & (arp_op.eq(1u64) | arp_op.eq(2u64)),
    );
    let ip_malformed = m.net(
        "rx_ip_malformed",
        flen.q.lt(34u64)
            | ver_ihl.ne(0x45u64)
            | totlen.lt(20u64)
            | ip_end.gt(flen.q.zext(17))
            | frag.slice(13, 0).any(),
    );
    let ip_csum_ok = m.net("rx_ip_csum_ok", fold16(&ip_sum.q.ex()).eq(0xffffu64));
    let l4len = m.net("rx_l4_len", totlen.ex() - 20u64);
    let icmp_ok_sum = m.net("rx_icmp_csum_ok", fold16(&l4_sum.q.ex()).eq(0xffffu64));
    let pseudo = [
        sip.slice(31, 16),
        sip.slice(15, 0),
        dip.slice(31, 16),
        dip.slice(15, 0),
        lit(16, 6),
        l4len.ex(),
    ];
    let tcp_sum = pseudo.iter().fold(l4_sum.q.ex(), |a, w| a + w.zext(32));
    let tcp_csum_ok = m.net("rx_tcp_csum_ok", fold16(&tcp_sum).eq(0xffffu64));
    let tcp_malformed = m.net("rx_tcp_malformed", thl.lt(20u64) | l4len.lt(thl.zext(16)));
    let plen = m.net("rx_plen", l4len.ex() - thl.zext(16));
    m.comment(plen, "the segment's payload bytes");
    let is_icmp = m.net("rx_is_icmp", proto.eq(1u64));
    let is_tcp = m.net("rx_is_tcp", proto.eq(6u64));
    let good_ip = m.net(
        "rx_good_ip",
        for_us & is_ip & !ip_malformed & ip_csum_ok & dip.eq(lip),
    );
    let echo_ok = m.net(
        "rx_echo_ok",
        good_ip
            & is_icmp
            & icmp_ok_sum
            & l4len.ge(8u64)
            & l4len.le(u64::from(p.echo_bytes))
            & icmp_tc.eq(0x0800u64)
            & !e_pend.q,
    );
    let seg_ok = m.net(
        "rx_seg_ok",
        cm.q & good_ip & is_tcp & !tcp_malformed & tcp_csum_ok & pm.q,
    );
    m.comment(seg_ok, "a good segment for connection rx_conn, this cycle");
    let drop_csum = m.net(
        "rx_drop_csum",
        cm.q & for_us
            & is_ip
            & !ip_malformed
            & (!ip_csum_ok
                | (dip.eq(lip)
                    & ((is_icmp & !icmp_ok_sum) | (is_tcp & !tcp_malformed & !tcp_csum_ok)))),
    );
    let drop_mal = m.net(
        "rx_drop_malformed",
        cm.q & for_us
            & is_ip
            & (ip_malformed | (ip_csum_ok & dip.eq(lip) & is_tcp & tcp_malformed)),
    );
    let echo_take = m.net("rx_echo_take", cm.q & echo_ok);
    let arp_take = m.net("rx_arp_take", cm.q & for_us & arp_ok);
    // A segment to no connection (RFC 9293 3.10.7.1: CLOSED, no TCB; here also a connection
    // still resolving its next hop or drawing its ISN, which has sent nothing): without RST it
    // is answered by a RST, one at a time (one waiting: the segment is dropped, `drop_other`).
    let r_pend = m.reg("rst_pend", 1, 0);
    m.comment(r_pend.q, "a RST for a segment to no connection waits");
    let rst_take = m.net(
        "rx_rst_take",
        cm.q & good_ip & is_tcp & !tcp_malformed & tcp_csum_ok & !pm.q & !flags.bit(2) & !r_pend.q,
    );
    let drop_other = m.net(
        "rx_drop_other",
        cm.q & !seg_ok & !echo_take & !arp_take & !drop_csum & !drop_mal & !rst_take,
    );

    // Echo reply state.
    let e_mac = m.reg("echo_mac", 48, 0);
    let e_ip = m.reg("echo_ip", 32, 0);
    let e_len = m.reg("echo_len", 16, 0);
    let e_csum = m.reg("echo_csum", 16, 0);
    m.comment(
        e_csum.q,
        "the reply's checksum: the request's, type 8 -> 0 (RFC 1624)",
    );
    let e_done = m.wire("echo_done", 1);
    m.assign(
        e_pend.d,
        mux(echo_take, lit(1, 1), mux(e_done, lit(1, 0), e_pend.q.ex())),
    );
    m.assign(e_mac.d, mux(echo_take, smac.ex(), e_mac.q.ex()));
    m.assign(e_ip.d, mux(echo_take, sip.ex(), e_ip.q.ex()));
    m.assign(e_len.d, mux(echo_take, l4len.ex(), e_len.q.ex()));
    let inc = (!icmp_csum.ex()).zext(32) + 0xf7ffu64;
    m.assign(e_csum.d, mux(echo_take, !fold16(&inc), e_csum.q.ex()));

    // The RST's fields: <SEQ=SEG.ACK><CTL=RST> for a segment with ACK, else
    // <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK> (SEG.LEN counts SYN and FIN); window 0.
    let r_mac = m.reg("rst_mac", 48, 0);
    let r_ip = m.reg("rst_ip", 32, 0);
    let r_lport = m.reg("rst_lport", 16, 0);
    let r_rport = m.reg("rst_rport", 16, 0);
    let r_seq = m.reg("rst_seq", 32, 0);
    let r_ack = m.reg("rst_ack", 32, 0);
    let r_flags = m.reg("rst_flags", 8, 0);
    let r_sent = m.wire("rst_sent", 1);
    m.assign(
        r_pend.d,
        mux(rst_take, lit(1, 1), mux(r_sent, lit(1, 0), r_pend.q.ex())),
    );
    let seg_len = plen.ex() + flags.bit(1).zext(16) + flags.bit(0).zext(16);
    let has_ack = flags.bit(4);
    let mut keep = |r: &Reg, v: Expr| m.assign(r.d, mux(rst_take, v, r.q.ex()));
    keep(&r_mac, smac.ex());
    keep(&r_ip, sip.ex());
    keep(&r_lport, dport.ex());
    keep(&r_rport, sport.ex());
    keep(&r_seq, mux(has_ack.clone(), ackn.ex(), lit(32, 0)));
    keep(
        &r_ack,
        mux(has_ack.clone(), lit(32, 0), seq.ex() + seg_len.zext(32)),
    );
    keep(&r_flags, mux(has_ack, lit(8, 0x04), lit(8, 0x14)));

    // ARP reply state and the cache.
    let ar_pend = m.reg("arp_reply_pend", 1, 0);
    let ar_mac = m.reg("arp_reply_mac", 48, 0);
    let ar_ip = m.reg("arp_reply_ip", 32, 0);
    let ar_sent = m.wire("arp_reply_sent", 1);
    let ar_req = m.net("rx_arp_request", arp_take & arp_op.eq(1u64));
    m.assign(
        ar_pend.d,
        mux(ar_req, lit(1, 1), mux(ar_sent, lit(1, 0), ar_pend.q.ex())),
    );
    m.assign(ar_mac.d, mux(ar_req, arp_sha.ex(), ar_mac.q.ex()));
    m.assign(ar_ip.d, mux(ar_req, arp_spa.ex(), ar_ip.q.ex()));
    let a_valid: Vec<Reg> = (0..na)
        .map(|i| m.reg(&format!("arp{i}_valid"), 1, 0))
        .collect();
    let a_ip: Vec<Reg> = (0..na)
        .map(|i| m.reg(&format!("arp{i}_ip"), 32, 0))
        .collect();
    let a_mac: Vec<Reg> = (0..na)
        .map(|i| m.reg(&format!("arp{i}_mac"), 48, 0))
        .collect();
    let a_next = m.reg("arp_next", aw, 0);
    m.comment(a_next.q, "the cache entry a new address replaces");
    let a_same: Vec<Expr> = (0..na as usize)
        .map(|i| a_valid[i].q & a_ip[i].q.eq(arp_spa))
        .collect();
    let a_any = m.net(
        "arp_learn_known",
        a_same
            .iter()
            .cloned()
            .reduce(|a, b| a | b)
            .expect("entries"),
    );
    for i in 0..na as usize {
        let wr_i = arp_take & (a_same[i].clone() | (!a_any & a_next.q.eq(i as u64)));
        m.assign(
            a_valid[i].d,
            mux(wr_i.clone(), lit(1, 1), a_valid[i].q.ex()),
        );
        m.assign(a_ip[i].d, mux(wr_i.clone(), arp_spa.ex(), a_ip[i].q.ex()));
        m.assign(a_mac[i].d, mux(wr_i, arp_sha.ex(), a_mac[i].q.ex()));
    }
    let a_wrap = if na.is_power_of_two() {
        a_next.q + 1u64
    } else {
        mux(a_next.q.eq(u64::from(na - 1)), lit(aw, 0), a_next.q + 1u64)
    };
    m.assign(a_next.d, mux(arp_take & !a_any, a_wrap, a_next.q.ex()));
    // Next hop and cache lookup per connection.
    let mut nexthop: Vec<Sig> = Vec::new();
    let mut hit: Vec<Sig> = Vec::new();
    let mut hit_mac: Vec<Sig> = Vec::new();
    for (c, rip_c) in rip.iter().enumerate() {
        let local = ((rip_c.ex() ^ lip.ex()) & mask.ex()).eq(0u64);
        let nh = m.net(&format!("c{c}_next_hop"), mux(local, rip_c.ex(), gw.ex()));
        let hits: Vec<Expr> = (0..na as usize)
            .map(|i| a_valid[i].q & a_ip[i].q.eq(nh))
            .collect();
        hit.push(m.net(
            &format!("c{c}_arp_hit"),
            hits.iter().cloned().reduce(|a, b| a | b).expect("entries"),
        ));
        let mac = (0..na as usize).fold(lit(48, 0), |a, i| {
            a | (a_mac[i].q.ex() & hits[i].repeat(48))
        });
        hit_mac.push(m.net(&format!("c{c}_arp_mac"), mac));
        nexthop.push(nh);
    }

    // ------------------------------------------------------------ ISN unit
    let isn_busy = m.reg("isn_busy", 1, 0);
    let isn_round = m.reg("isn_round", 4, 0);
    let isn_conn = m.reg("isn_conn", cw, 0);
    let isn_m: Vec<Reg> = (0..3)
        .map(|i| m.reg(&format!("isn_msg{i}"), 32, 0))
        .collect();
    let isn_v: Vec<Reg> = (0..4).map(|i| m.reg(&format!("isn_v{i}"), 32, 0)).collect();
    let isn_want: Vec<Expr> = conns.iter().map(|k| k.st.q.eq(s("StIsn"))).collect();
    let isn_any = m.net(
        "isn_want_any",
        isn_want
            .iter()
            .cloned()
            .reduce(|a, b| a | b)
            .expect("conns"),
    );
    let isn_pick = m.net(
        "isn_pick",
        (0..n as usize).rev().fold(lit(cw, 0), |a, c| {
            mux(isn_want[c].clone(), lit(cw, c as u128), a)
        }),
    );
    let isn_start = m.net("isn_start", !isn_busy.q & isn_any);
    let isn_fin = m.net("isn_done", isn_busy.q & isn_round.q.eq(11u64));
    m.comment(isn_fin, "F is v1 ^ v3 after this cycle's round");
    let word = sel(
        &isn_round.q.slice(3, 1),
        &[
            isn_m[0].q.ex(),
            isn_m[1].q.ex(),
            isn_m[2].q.ex(),
            lit(32, 12 << 24),
        ],
    );
    let pre_xor = isn_busy.q & isn_round.q.lt(8u64) & !isn_round.q.bit(0);
    let post_xor = isn_busy.q & isn_round.q.lt(8u64) & isn_round.q.bit(0);
    let v3_in = isn_v[3].q.ex() ^ (word.clone() & pre_xor.repeat(32));
    let v2_in = isn_v[2].q.ex() ^ mux(isn_round.q.eq(8u64), lit(32, 0xff), lit(32, 0));
    let rnd = round_expr([isn_v[0].q.ex(), isn_v[1].q.ex(), v2_in, v3_in]);
    let v0_out = rnd[0].clone() ^ (word & post_xor.repeat(32));
    let isn_out = [v0_out, rnd[1].clone(), rnd[2].clone(), rnd[3].clone()];
    let isn_f = m.net("isn_f", isn_out[1].clone() ^ isn_out[3].clone());
    let isn_val = m.net("isn_value", isn_f.ex() + isn_clk.q.slice(41, 10));
    m.comment(isn_val, "ISN = M + F (valid in the isn_done cycle)");
    let tuple_sel =
        |c: usize| -> [Expr; 3] { [lip.ex(), rip[c].ex(), cat([lport[c].ex(), rport[c].ex()])] };
    let tuples: Vec<[Expr; 3]> = (0..n as usize).map(tuple_sel).collect();
    m.comb(|c| {
        c.set(isn_busy.d, isn_busy.q);
        c.set(isn_round.d, isn_round.q);
        c.set(isn_conn.d, isn_conn.q);
        for r in isn_m.iter().chain(isn_v.iter()) {
            c.set(r.d, r.q);
        }
        c.if_(isn_start, |c| {
            c.set(isn_busy.d, 1u64);
            c.set(isn_round.d, 0u64);
            c.set(isn_conn.d, isn_pick);
            for i in 0..3 {
                let w = sel(
                    &isn_pick.ex(),
                    &tuples.iter().map(|t| t[i].clone()).collect::<Vec<_>>(),
                );
                c.set(isn_m[i].d, w);
            }
            c.set(isn_v[0].d, key0);
            c.set(isn_v[1].d, key1);
            c.set(isn_v[2].d, key0.ex() ^ 0x6c79_6765u64);
            c.set(isn_v[3].d, key1.ex() ^ 0x7465_6462u64);
        })
        .else_if(isn_busy.q, |c| {
            c.set(isn_round.d, isn_round.q + 1u64);
            for i in 0..4 {
                c.set(isn_v[i].d, isn_out[i].clone());
            }
            c.if_(isn_fin, |c| c.set(isn_busy.d, 0u64));
        });
    });

    // ------------------------------------------------------------ CSR pulses
    let pulse = |m: &mut ModuleBuilder, c: u32, f: &str| -> Sig {
        let v = m.bind_out(u_csr, &format!("c{c}_ctrl_{f}_o"));
        let we = m.bind_out(u_csr, &format!("c{c}_ctrl_{f}_we_o"));
        m.net(&format!("c{c}_{f}_pulse"), v & we)
    };
    let open_p: Vec<Sig> = (0..n).map(|c| pulse(&mut m, c, "open")).collect();
    let close_p: Vec<Sig> = (0..n).map(|c| pulse(&mut m, c, "close")).collect();
    let abort_p: Vec<Sig> = (0..n).map(|c| pulse(&mut m, c, "abort")).collect();

    // ------------------------------------------------------------ transmit requests
    // Per connection: what its next segment would be, from its state now.
    struct Want {
        any: Sig,
        rst: Sig,
        syn: Sig,
        data: Sig,
        fin: Sig,
        dup: Sig,
        fr: Sig,
        len: Sig,
        seq: Sig,
        flags: Sig,
        ack: Sig,
        wnd: Sig,
        edge: Sig,
        retx: Sig,
        arp: Sig,
        avail: Sig,
        room: Sig,
        sws: Sig,
        mss: Sig,
    }
    let mut wants: Vec<Want> = Vec::new();
    for c in 0..n as usize {
        let k = &conns[c];
        let sends = in_state(
            k,
            &[
                "StEstab",
                "StCloseWait",
                "StFinWait1",
                "StClosing",
                "StLastAck",
            ],
        );
        // A sequence-space difference, 0 where it is negative.
        let at_least_0 = |x: Expr| mux(x.bit(31), lit(32, 0), x);
        let avail = m.net(
            &format!("c{c}_tx_avail"),
            at_least_0(k.wr.q.ex() - k.snd_nxt.q.ex()),
        );
        m.comment(avail, "bytes in the transmit buffer not sent yet");
        // RFC 5681: what is in flight never passes min(cwnd, rwnd) (a fast retransmission
        // excepted: it is sent whatever the windows).
        let swnd = m.net(
            &format!("c{c}_send_wnd"),
            min(k.snd_wnd.q.ex(), k.cwnd.q.ex()),
        );
        let room = m.net(
            &format!("c{c}_tx_room"),
            at_least_0(k.snd_una.q.ex() + swnd.ex() - k.snd_nxt.q.ex()),
        );
        m.comment(
            room,
            "bytes the peer's window and the congestion window still allow",
        );
        let mss_eff = m.net(&format!("c{c}_mss"), min(mss_csr.ex(), k.peer_mss.q.ex()));
        // RFC 9293 3.8.6.2.1 (sender SWS avoidance, MUST-38), with its usable window U =
        // SND.UNA + SND.WND - SND.NXT (the peer's window alone; the congestion window bounds
        // the length, not this choice): new data goes when a full segment fits U, or
        // everything waiting fits (every byte is pushed: no Nagle), or U is at least half the
        // largest window the peer has offered; otherwise it waits for the window to open, or
        // for the override timeout (the persist timer, then `probe`). Retransmissions
        // (SND.NXT behind SND.MAX) are not held.
        let usable = m.net(
            &format!("c{c}_tx_usable"),
            at_least_0(k.snd_una.q.ex() + k.snd_wnd.q.ex() - k.snd_nxt.q.ex()),
        );
        m.comment(
            usable,
            "RFC 9293's usable window U: what the peer's window still allows",
        );
        let sws = m.net(
            &format!("c{c}_sws_hold"),
            !k.probe.q
                & seq_ge(&k.snd_nxt.q.ex(), &k.snd_max.q.ex())
                & avail.gt(usable)
                & usable.lt(mss_eff.zext(32))
                & usable.lt(k.max_wnd.q.ex() >> 1u32),
        );
        m.comment(
            sws,
            "sender SWS avoidance: more waits than U allows, and U is under an MSS and under half MAX.SND.WND",
        );
        let len = m.net(
            &format!("c{c}_tx_len"),
            mux(
                sws,
                lit(16, 0),
                min(min(avail.ex(), room.ex()), mss_eff.zext(32)).slice(15, 0),
            ),
        );
        let rst = m.net(&format!("c{c}_want_rst"), k.rst_pend.q.ex());
        let syn = m.net(
            &format!("c{c}_want_syn"),
            k.st.q.eq(s("StSynSent")) & k.snd_nxt.q.eq(k.iss.q),
        );
        let len = m.net(
            &format!("c{c}_tx_len_probe"),
            mux(
                k.probe.q & len.eq(0u64) & avail.ne(0u64),
                lit(16, 1),
                len.ex(),
            ),
        );
        m.comment(len, "a zero-window probe sends one byte past the window");
        // Fast retransmission: the segment at SND.UNA, data bytes only (a FIN outstanding
        // alone is the RTO's).
        let data_max = mux(
            seq_gt(&k.snd_max.q.ex(), &k.wr.q.ex()),
            k.wr.q.ex(),
            k.snd_max.q.ex(),
        );
        let fr_out = m.net(&format!("c{c}_fr_out"), data_max - k.snd_una.q.ex());
        m.comment(fr_out, "data bytes sent and not acknowledged");
        let fr_len = m.net(
            &format!("c{c}_fr_len"),
            min(fr_out.ex(), mss_eff.zext(32)).slice(15, 0),
        );
        // An out-of-order segment owes the peer a duplicate ACK of its own (RFC 5681 4.2): a
        // segment without data, or the peer does not count it.
        let dup = m.net(
            &format!("c{c}_want_dup_ack"),
            k.dup_owed.q.ne(0u64) & in_state(k, &["StEstab", "StFinWait1", "StFinWait2"]),
        );
        let fr = m.net(
            &format!("c{c}_want_fr"),
            sends.clone() & !dup & k.fr_pend.q & fr_out.bit(31).eq(0u64) & fr_out.ne(0u64),
        );
        let data = m.net(
            &format!("c{c}_want_data"),
            sends.clone() & !dup & (fr | len.ne(0u64)),
        );
        let fin = m.net(
            &format!("c{c}_want_fin"),
            k.fin_req.q & sends & !dup & k.snd_nxt.q.eq(k.wr.q),
        );
        // Receive window (RFC 9293 3.8.6.2.2): the right edge we advertised is held exactly,
        // in sequence space, and moves only forward, by at least min(rx_bytes / 2, MSS) at a
        // time; every segment advertises (edge - RCV.NXT) >> shift, so ACKs with the same
        // ACK number carry the same window (RFC 5681's duplicate ACKs).
        let rcv_ack = m.net(
            &format!("c{c}_tx_ack"),
            k.rcv_nxt.q.ex() + k.fin_in.q.zext(32),
        );
        let ack = rcv_ack;
        let redge = m.net(
            &format!("c{c}_rx_edge"),
            k.rd.q.ex() + u64::from(p.rx_bytes),
        );
        m.comment(redge, "the right edge the free receive space allows");
        let base = mux(
            seq_gt(&rcv_ack.ex(), &k.adv_edge.q.ex()),
            rcv_ack.ex(),
            k.adv_edge.q.ex(),
        );
        let moved = redge.ex() - base;
        let thresh = min(lit(32, u128::from(p.rx_bytes / 2)), mss_csr.zext(32));
        let bump = m.net(
            &format!("c{c}_rx_edge_moves"),
            moved.bit(31).eq(0u64) & moved.ge(thresh),
        );
        m.comment(
            bump,
            "the advertised edge may move: by min(rx_bytes / 2, MSS) at least",
        );
        // A window update of its own only once the window the peer has is below half the
        // buffer; above that the new edge waits for the next ACK that acknowledges new data
        // (a delayed one included), so ACKs of one number still carry one window.
        let wlow = m.net(
            &format!("c{c}_rx_wnd_low"),
            (k.adv_edge.q.ex() - rcv_ack.ex()).lt(u64::from(p.rx_bytes / 2)),
        );
        m.comment(wlow, "the advertised window left is under half the buffer");
        let edge = m.net(
            &format!("c{c}_tx_edge"),
            mux(
                bump & (wlow | rcv_ack.ne(k.ack_sent.q)),
                redge.ex(),
                k.adv_edge.q.ex(),
            ),
        );
        let wupd = m.net(
            &format!("c{c}_want_wupd"),
            in_state(k, &["StEstab", "StFinWait1", "StFinWait2"]) & bump & wlow,
        );
        let ackw = (k.ack_pend.q.ex() | wupd | dup)
            & !in_state(k, &["StClosed", "StArp", "StIsn", "StSynSent"]);
        let arp = m.net(
            &format!("c{c}_want_arp"),
            k.st.q.eq(s("StArp")) & k.arp_due.q & !hit[c],
        );
        let any = m.net(&format!("c{c}_tx_want"), rst | syn | data | fin | ackw);
        let seq = m.net(
            &format!("c{c}_tx_seq"),
            mux(
                rst,
                k.snd_max.q.ex(),
                mux(
                    dup,
                    k.snd_nxt.q.ex(),
                    mux(
                        fr,
                        k.snd_una.q.ex(),
                        mux(fin & !data, k.wr.q.ex(), k.snd_nxt.q.ex()),
                    ),
                ),
            ),
        );
        // Flags: FIN 0, SYN 1, RST 2, PSH 3, ACK 4.
        let fl = mux(
            rst,
            lit(8, 0x14),
            mux(
                syn,
                lit(8, 0x02),
                mux(data, lit(8, 0x18), mux(fin, lit(8, 0x11), lit(8, 0x10))),
            ),
        );
        let flags = m.net(&format!("c{c}_tx_flags"), fl);
        let rws = mux(k.ws_ok.q, our_ws.ex(), lit(4, 0));
        let wopen = edge.ex() - rcv_ack.ex();
        let wscaled = mux(wopen.bit(31), lit(32, 0), wopen).shr_by(rws);
        let wfull = mux(syn, rfree[c].ex(), wscaled);
        let wnd = m.net(
            &format!("c{c}_tx_wnd"),
            mux(wfull.gt(0xffffu64), lit(16, 0xffff), wfull.slice(15, 0)),
        );
        let seg_len = m.net(
            &format!("c{c}_tx_seg_len"),
            mux(
                !rst & !syn & data,
                mux(fr, fr_len.ex(), len.ex()),
                lit(16, 0),
            ),
        );
        let retx = m.net(
            &format!("c{c}_tx_retx"),
            !rst & ((syn & k.snd_max.q.ne(k.iss.q))
                | (!syn & data & (fr | seq_gt(&k.snd_max.q.ex(), &k.snd_nxt.q.ex())))
                | (!syn & !data & fin & k.fin_sent.q)),
        );
        wants.push(Want {
            any,
            rst,
            syn,
            data,
            fin,
            dup,
            fr,
            len: seg_len,
            seq,
            flags,
            ack,
            wnd,
            edge,
            retx,
            arp,
            avail,
            room,
            sws,
            mss: mss_eff,
        });
    }

    // ------------------------------------------------------------ frame generator: choice
    let g_st = m.reg("gen_state", 2, 0);
    m.comment(
        g_st.q,
        "0 idle, 1 payload checksum from the prefix sums, 2 sending",
    );
    let g_idle = m.net("gen_idle", g_st.q.eq(0u64));
    let rr = m.reg("gen_rr", cw, 0);
    m.comment(rr.q, "round-robin pointer over the connections' segments");
    // A connection whose state changes this cycle on a received segment waits a cycle.
    let tcp_req: Vec<Sig> = (0..n as usize)
        .map(|c| {
            m.net(
                &format!("c{c}_tx_req"),
                wants[c].any & !(seg_ok & pc.q.eq(c as u64)),
            )
        })
        .collect();
    let any_tcp = m.net(
        "gen_any_tcp",
        tcp_req
            .iter()
            .map(|x| x.ex())
            .reduce(|a, b| a | b)
            .expect("conns"),
    );
    let arp_reqs: Vec<Expr> = wants.iter().map(|w| w.arp.ex()).collect();
    let any_arpq = m.net(
        "gen_any_arp_req",
        arp_reqs
            .iter()
            .cloned()
            .reduce(|a, b| a | b)
            .expect("conns"),
    );
    let per_rr: Vec<Expr> = (0..n)
        .map(|r| {
            (0..n).rev().fold(lit(cw, 0), |e, j| {
                let c = (r + j) % n;
                mux(tcp_req[c as usize], lit(cw, u128::from(c)), e)
            })
        })
        .collect();
    let tpick = m.net("gen_tcp_pick", sel(&rr.q.ex(), &per_rr));
    m.comment(
        tpick,
        "the first connection wanting to send at or after gen_rr",
    );
    let apick = m.net(
        "gen_arp_pick",
        (0..n as usize).rev().fold(lit(cw, 0), |a, c| {
            mux(arp_reqs[c].clone(), lit(cw, c as u128), a)
        }),
    );
    // Priority: ARP reply, echo reply, RST for no connection, ARP request, TCP segment.
    let go_arep = m.net("gen_go_arp_reply", g_idle & ar_pend.q);
    let go_echo = m.net("gen_go_echo", g_idle & !ar_pend.q & e_pend.q);
    let pick_rst = m.net("gen_pick_rst", !ar_pend.q & !e_pend.q & r_pend.q);
    m.comment(
        pick_rst,
        "the next TCP header is the RST for no connection (seg_* carry its fields)",
    );
    let go_rst = m.net("gen_go_rst", g_idle & pick_rst);
    let go_areq = m.net(
        "gen_go_arp_req",
        g_idle & !ar_pend.q & !e_pend.q & !r_pend.q & any_arpq,
    );
    let go_tcp = m.net(
        "gen_go_tcp",
        g_idle & !ar_pend.q & !e_pend.q & !r_pend.q & !any_arpq & any_tcp,
    );
    m.assign(ar_sent, go_arep.ex());
    m.assign(r_sent, go_rst.ex());
    m.assign(
        rr.d,
        mux(
            go_tcp,
            mux(tpick.eq(u64::from(n - 1)), lit(cw, 0), tpick.ex() + 1u64),
            rr.q.ex(),
        ),
    );
    let latch_tcp: Vec<Sig> = (0..n as usize)
        .map(|c| m.net(&format!("c{c}_tx_latch"), go_tcp & tpick.eq(c as u64)))
        .collect();
    let latch_arp: Vec<Sig> = (0..n as usize)
        .map(|c| m.net(&format!("c{c}_arp_latch"), go_areq & apick.eq(c as u64)))
        .collect();

    // The picked segment's fields.
    let pk = |f: &dyn Fn(&Want) -> Expr| -> Expr {
        sel(&tpick.ex(), &wants.iter().map(f).collect::<Vec<_>>())
    };
    let or_rst = |r: Expr, e: Expr| mux(pick_rst, r, e);
    let t_syn = m.net("seg_syn", or_rst(lit(1, 0), pk(&|w| w.syn.ex())));
    let t_len = m.net("seg_len", or_rst(lit(16, 0), pk(&|w| w.len.ex())));
    let t_seq = m.net("seg_seq", or_rst(r_seq.q.ex(), pk(&|w| w.seq.ex())));
    let t_ack = m.net("seg_ack", or_rst(r_ack.q.ex(), pk(&|w| w.ack.ex())));
    let t_flags = m.net("seg_flags", or_rst(r_flags.q.ex(), pk(&|w| w.flags.ex())));
    let t_wnd = m.net("seg_wnd", or_rst(lit(16, 0), pk(&|w| w.wnd.ex())));
    let t_retx = m.net("seg_retx", pk(&|w| w.retx.ex()));
    let t_rst = m.net("seg_rst", pk(&|w| w.rst.ex()));
    let t_fr = m.net("seg_fast_retx", pk(&|w| w.fr.ex()));
    let t_rip = m.net(
        "seg_rip",
        or_rst(
            r_ip.q.ex(),
            sel(&tpick.ex(), &rip.iter().map(|x| x.ex()).collect::<Vec<_>>()),
        ),
    );
    let t_rmac = m.net(
        "seg_rmac",
        or_rst(
            r_mac.q.ex(),
            sel(
                &tpick.ex(),
                &conns.iter().map(|k| k.rmac.q.ex()).collect::<Vec<_>>(),
            ),
        ),
    );
    let t_sport = m.net(
        "seg_sport",
        or_rst(
            r_lport.q.ex(),
            sel(
                &tpick.ex(),
                &lport.iter().map(|x| x.ex()).collect::<Vec<_>>(),
            ),
        ),
    );
    let t_dport = m.net(
        "seg_dport",
        or_rst(
            r_rport.q.ex(),
            sel(
                &tpick.ex(),
                &rport.iter().map(|x| x.ex()).collect::<Vec<_>>(),
            ),
        ),
    );
    let t_thl = m.net("seg_thl", mux(t_syn, lit(8, 28), lit(8, 20)));
    let t_tcplen = m.net("seg_tcp_len", t_thl.zext(16) + t_len.ex());
    let a_tpa = m.net(
        "arp_req_ip",
        sel(
            &apick.ex(),
            &nexthop.iter().map(|x| x.ex()).collect::<Vec<_>>(),
        ),
    );

    // Header bytes of each kind of frame.
    let eth = |dst: Expr, ty: u64| -> Vec<Expr> {
        let mut v = be(&dst, 6);
        v.extend(be(&lmac.ex(), 6));
        v.extend(be(&lit(16, u128::from(ty)), 2));
        v
    };
    let ipv4 = |len: Expr, proto: u64, dst: Expr| -> Vec<Expr> {
        let sum = [
            lit(16, 0x4500),
            len.clone(),
            lit(16, 0),
            lit(16, 0x4000),
            lit(16, 0x4000 | u128::from(proto)),
            lip.slice(31, 16),
            lip.slice(15, 0),
            dst.slice(31, 16),
            dst.slice(15, 0),
        ]
        .iter()
        .fold(lit(32, 0), |a, w| a + w.zext(32));
        let csum = !fold16(&sum);
        let mut v = vec![lit(8, 0x45), lit(8, 0)];
        v.extend(be(&len, 2));
        v.extend([lit(8, 0), lit(8, 0), lit(8, 0x40), lit(8, 0), lit(8, 64)]);
        v.push(lit(8, u128::from(proto)));
        v.extend(be(&csum, 2));
        v.extend(be(&lip.ex(), 4));
        v.extend(be(&dst, 4));
        v
    };
    let arp_frame = |op: u64, tha: Expr, tpa: Expr, dst: Expr| -> Vec<Expr> {
        let mut v = eth(dst, 0x0806);
        v.extend(be(&lit(48, 0x0001_0800_0604), 6));
        v.extend(be(&lit(16, u128::from(op)), 2));
        v.extend(be(&lmac.ex(), 6));
        v.extend(be(&lip.ex(), 4));
        v.extend(be(&tha, 6));
        v.extend(be(&tpa, 4));
        v
    };
    let pad = |mut v: Vec<Expr>| -> Expr {
        while v.len() < TX_HDR as usize {
            v.push(lit(8, 0));
        }
        cat(v.into_iter().rev())
    };
    let h_arep = pad(arp_frame(2, ar_mac.q.ex(), ar_ip.q.ex(), ar_mac.q.ex()));
    let h_areq = pad(arp_frame(
        1,
        lit(48, 0),
        a_tpa.ex(),
        lit(48, 0xffff_ffff_ffff),
    ));
    let h_echo = {
        let mut v = eth(e_mac.q.ex(), 0x0800);
        v.extend(ipv4(e_len.q.ex() + 20u64, 1, e_ip.q.ex()));
        v.extend([lit(8, 0), lit(8, 0)]);
        v.extend(be(&e_csum.q.ex(), 2));
        pad(v)
    };
    let t_opts = [
        lit(16, 0x0204),
        mss_csr.ex(),
        lit(16, 0x0103),
        cat([lit(12, 0x030), our_ws.ex()]),
    ];
    let tcp_words: Vec<Expr> = {
        let mut w = vec![
            lip.slice(31, 16),
            lip.slice(15, 0),
            t_rip.slice(31, 16),
            t_rip.slice(15, 0),
            lit(16, 6),
            t_tcplen.ex(),
            t_sport.ex(),
            t_dport.ex(),
            t_seq.slice(31, 16),
            t_seq.slice(15, 0),
            t_ack.slice(31, 16),
            t_ack.slice(15, 0),
            cat([t_thl.slice(5, 2), lit(4, 0), t_flags.ex()]),
            t_wnd.ex(),
        ];
        for o in &t_opts {
            w.push(o.clone() & t_syn.repeat(16));
        }
        w
    };
    let t_sum = m.net(
        "seg_sum",
        tcp_words.iter().fold(lit(32, 0), |a, w| a + w.zext(32)),
    );
    m.comment(
        t_sum,
        "pseudo-header and TCP header words, before the payload",
    );
    let h_tcp = {
        let mut v = eth(t_rmac.ex(), 0x0800);
        v.extend(ipv4(t_tcplen.ex() + 20u64, 6, t_rip.ex()));
        v.extend(be(&t_sport.ex(), 2));
        v.extend(be(&t_dport.ex(), 2));
        v.extend(be(&t_seq.ex(), 4));
        v.extend(be(&t_ack.ex(), 4));
        v.push(cat([t_thl.slice(5, 2), lit(4, 0)]));
        v.push(t_flags.ex());
        v.extend(be(&t_wnd.ex(), 2));
        // Checksum: filled in once the payload is summed (or now, without payload).
        let now_csum = !fold16(&t_sum.ex());
        v.extend(be(&now_csum, 2));
        v.extend([lit(8, 0), lit(8, 0)]);
        for o in &t_opts {
            for b in be(o, 2) {
                v.push(b & t_syn.repeat(8));
            }
        }
        pad(v)
    };

    // ------------------------------------------------------------ frame generator: state
    let g_hdr = m.reg("gen_hdr", TX_HDR * 8, 0);
    m.comment(g_hdr.q, "the frame's header bytes, byte 0 in bits 7:0");
    let g_echo = m.reg("gen_echo", 1, 0);
    m.comment(
        g_echo.q,
        "the frame is an echo reply (payload from echo_buf)",
    );
    let g_conn = m.reg("gen_conn", cw, 0);
    let g_seq = m.reg("gen_seq", 32, 0);
    let g_hlen = m.reg("gen_hlen", 8, 0);
    let g_plen = m.reg("gen_plen", 16, 0);
    let g_flen = m.reg("gen_flen", 16, 0);
    let g_acc = m.reg("gen_acc", 32, 0);
    m.comment(g_acc.q, "the pseudo-header's and TCP header's checksum sum");
    let mut txbuf = Lanes::new(&mut m, "tx_buf", u64::from(n), p.tx_bytes);
    // Beside each transmit buffer word, the stream's sum up to its first byte: a segment's
    // payload sum is the difference of two of those, each completed by the bytes of its word.
    let psum = m.memory("tx_psum", 16, u64::from(n) * u64::from(p.tx_bytes / 8));
    let g_step = m.reg("gen_sum_step", 2, 0);
    m.comment(
        g_step.q,
        "the checksum's step: 0 reads the first payload byte's word, 1 the last's, 2 sums",
    );
    let g_sa = m.reg("gen_sum_first", 16, 0);
    m.comment(
        g_sa.q,
        "the stream's sum up to the payload's first byte (a byte at an even sequence number high)",
    );
    let g_k = m.reg("gen_k", 16, 0);
    m.comment(
        g_k.q,
        "frame byte index of the next beat fetched (8 bytes each)",
    );
    let g_bv = m.reg("gen_beat_valid", 1, 0);
    m.comment(
        g_bv.q,
        "a fetched beat waits: its payload bytes in the buffer's read data",
    );
    let hlen_sel = mux(
        go_arep | go_areq,
        lit(8, 42),
        mux(go_echo, lit(8, 38), mux(t_syn, lit(8, 62), lit(8, 54))),
    );
    let plen_sel = mux(
        go_echo,
        e_len.q.ex() - 4u64,
        mux(go_tcp, t_len.ex(), lit(16, 0)),
    );
    let tot = hlen_sel.zext(16) + plen_sel.clone();
    let flen_sel = mux(tot.lt(60u64), lit(16, 60), tot);
    let hdr_sel = mux(
        go_arep,
        h_arep,
        mux(go_areq, h_areq, mux(go_echo, h_echo, h_tcp)),
    );
    let go_any = m.net("gen_go", go_arep | go_areq | go_echo | go_tcp | go_rst);
    // The payload's checksum, in three cycles whatever its length: the stream's sum S(x) of
    // the bytes before sequence number x is P(w) + the bytes of word w before x, where w is
    // x's buffer word and P(w) the sum kept in `tx_psum` beside it (written as the bytes went
    // in). The payload [a, b) sums to S(b) - S(a), byte-swapped when a is odd. Step 0 reads
    // the word of a, step 1 that of b - 1 (S(b) is its sum through b - 1), step 2 sums.
    let sum_rd = m.net("gen_sum_read", g_st.q.eq(1u64) & g_step.q.ne(2u64));
    let sum_done = m.net("gen_sum_done", g_st.q.eq(1u64) & g_step.q.eq(2u64));
    let pay_last = m.net("gen_pay_last_seq", g_seq.q.ex() + g_plen.q.zext(32) - 1u64);
    let sum_y = m.net(
        "gen_sum_rd_seq",
        cat([
            mux(g_step.q.eq(0u64), g_seq.q.ex(), pay_last.ex()).slice(31, 3),
            lit(3, 0),
        ]),
    );
    m.comment(sum_y, "the first byte of the word the step reads");
    let psum_rd = m.mem_read(psum, sum_rd, cat([g_conn.q.ex(), sum_y.slice(tab - 1, 3)]));
    let hlen16 = m.net("gen_hlen16", g_hlen.q.zext(16));
    let pay_end = m.net("gen_pay_end", hlen16.ex() + g_plen.q.ex());
    // Sending: a beat of eight frame bytes a cycle. A beat is fetched (its payload read from
    // the buffer) when the one before it leaves the fetch stage, and goes into the output
    // register the cycle after, so beats leave back to back while `m_axis_tready_i` is high.
    let sending = m.net("gen_sending", g_st.q.eq(2u64));
    let o_data = m.reg("out_data", 64, 0);
    let o_keep = m.reg("out_keep", 8, 0);
    let o_last = m.reg("out_last", 1, 0);
    let o_valid = m.reg("out_valid", 1, 0);
    let out_free = m.net("out_free", !o_valid.q | tx_ready);
    // g_k moves on by 8 as a beat is fetched, so the waiting beat is the one before it.
    let g_bk = m.net("gen_beat_k", g_k.q.ex() - 8u64);
    m.comment(g_bk, "the waiting beat's first frame byte index");
    let b_left = m.net("gen_beat_left", g_flen.q.ex() - g_bk.ex());
    m.comment(b_left, "frame bytes from the waiting beat's first on");
    let b_last = m.net("gen_beat_last", b_left.le(8u64));
    let b_move = m.net("gen_beat_move", g_bv.q & out_free);
    m.comment(b_move, "the waiting beat goes into the output register");
    let fetch = m.net(
        "gen_fetch",
        sending & g_k.q.lt(g_flen.q) & (!g_bv.q | b_move),
    );
    // Payload offset of the fetched beat's first byte (below 0 while it holds header bytes:
    // those lanes take the header, whatever the read returns).
    let f_off = m.net("gen_fetch_off", g_k.q.ex() - hlen16.ex());
    let tx_rd_en = m.net("gen_tx_read", sum_rd | (fetch & !g_echo.q));
    let tx_rdata = txbuf.read(
        &mut m,
        &tx_rd_en.ex(),
        Some(&g_conn.q.ex()),
        &mux(sum_rd, sum_y.ex(), g_seq.q.ex() + f_off.zext(32)),
    );
    let echo_rd_en = m.net("gen_echo_read", fetch & g_echo.q);
    let echo_rdata = echo.read(&mut m, &echo_rd_en.ex(), None, &f_off.ex());
    // The word read last cycle (step 1: a's, step 2: b - 1's). Its byte l is at an even
    // sequence number when l is. Bytes of the stream's first word before ISS+1 are not the
    // stream's: while the connection is young and the word is before ISS+1, P is 0 and they
    // are left out.
    let y = m.net(
        "gen_sum_seq",
        mux(g_step.q.eq(1u64), g_seq.q.ex(), pay_last.ex()),
    );
    let y_lane = y.slice(2, 0);
    let g_iss = sel(
        &g_conn.q.ex(),
        &conns.iter().map(|k| k.iss.q.ex()).collect::<Vec<_>>(),
    );
    let g_young = sel(
        &g_conn.q.ex(),
        &conns.iter().map(|k| k.young.q.ex()).collect::<Vec<_>>(),
    );
    let y_off = m.net("gen_sum_stream_off", y.ex() - g_iss - 1u64);
    m.comment(y_off, "that byte's offset in the stream (from ISS+1)");
    let y_pre = m.net("gen_sum_pre_stream", g_young & y_off.lt(y_lane.zext(32)));
    m.comment(y_pre, "the word starts before ISS+1");
    let y_mask = m.net(
        "gen_sum_mask",
        mux(
            g_step.q.eq(1u64),
            below(&y_lane),
            first(&(y_lane.zext(4) + 1u64)),
        ) & mux(
            y_pre,
            !below(&(y_lane.clone() - y_off.slice(2, 0))),
            lit(8, 0xff),
        ),
    );
    m.comment(
        y_mask,
        "the word's bytes in S: before a (step 1), through b - 1 (step 2), from ISS+1 on",
    );
    let y_bytes = m.net(
        "gen_sum_raw",
        mux(y_pre, lit(32, 0), psum_rd.zext(32)) + bytes_sum(&tx_rdata, &y_mask.ex(), None),
    );
    let s_y = m.net("gen_sum_s", fold16(&y_bytes.ex()));
    m.comment(s_y, "S(a) in step 1, S(b) in step 2");
    let pay_diff = m.net("gen_pay_diff", s_y.zext(32) + (!g_sa.q.ex()).zext(32));
    let pay_sum = m.net("gen_pay_sum", fold16(&pay_diff.ex()));
    m.comment(pay_sum, "S(b) - S(a)");
    let final_sum = m.net(
        "gen_csum_raw",
        g_acc.q.ex()
            + mux(
                g_seq.q.bit(0),
                cat([pay_sum.slice(7, 0), pay_sum.slice(15, 8)]),
                pay_sum.ex(),
            )
            .zext(32),
    );
    m.comment(
        final_sum,
        "the headers' sum and the payload's (swapped when it starts at an odd sequence number)",
    );
    let csum_fin = m.net("gen_tcp_csum", !fold16(&final_sum.ex()));
    m.assign(e_done, b_move & b_last & g_echo.q);
    let patched = {
        // Bytes 50 and 51: the TCP checksum.
        let lo = g_hdr.q.slice(399, 0);
        let hi = g_hdr.q.slice(TX_HDR * 8 - 1, 416);
        cat([hi, csum_fin.slice(7, 0), csum_fin.slice(15, 8), lo])
    };
    m.comb(|c| {
        c.set(g_st.d, g_st.q);
        c.set(g_hdr.d, g_hdr.q);
        c.set(g_echo.d, g_echo.q);
        c.set(g_conn.d, g_conn.q);
        c.set(g_seq.d, g_seq.q);
        c.set(g_hlen.d, g_hlen.q);
        c.set(g_plen.d, g_plen.q);
        c.set(g_flen.d, g_flen.q);
        c.set(g_acc.d, g_acc.q);
        c.set(g_step.d, g_step.q);
        c.set(g_sa.d, g_sa.q);
        c.set(g_k.d, g_k.q);
        c.set(g_bv.d, g_bv.q);
        c.if_(go_any, |c| {
            c.set(g_hdr.d, hdr_sel.clone());
            c.set(g_echo.d, go_echo);
            c.set(g_conn.d, tpick);
            c.set(g_seq.d, t_seq);
            c.set(g_hlen.d, hlen_sel.clone());
            c.set(g_plen.d, plen_sel.clone());
            c.set(g_flen.d, flen_sel.clone());
            c.set(g_acc.d, t_sum);
            c.set(g_step.d, 0u64);
            c.set(g_k.d, 0u64);
            c.set(g_bv.d, 0u64);
            c.set(g_st.d, mux(go_tcp & t_len.ne(0u64), lit(2, 1), lit(2, 2)));
        })
        .else_if(g_st.q.eq(1u64), |c| {
            c.set(g_step.d, g_step.q + 1u64);
            c.if_(g_step.q.eq(1u64), |c| c.set(g_sa.d, s_y));
            c.if_(sum_done, |c| {
                c.set(g_hdr.d, patched.clone());
                c.set(g_st.d, 2u64);
            });
        })
        .else_if(sending, |c| {
            c.if_(fetch, |c| {
                c.set(g_k.d, g_k.q + 8u64);
                c.set(g_bv.d, 1u64);
            })
            .else_if(b_move, |c| c.set(g_bv.d, 0u64));
            c.if_(b_move & b_last, |c| c.set(g_st.d, 0u64));
        });
    });
    // The waiting beat's bytes: lane l is frame byte g_bk + l, a header byte, a payload byte
    // or padding.
    let hdr_bytes = m.net(
        "gen_beat_hdr",
        g_hdr
            .q
            .shr_by(cat([g_bk.slice(6, 0), lit(3, 0)]))
            .slice(63, 0),
    );
    let pay_bytes = m.net("gen_beat_pay", mux(g_echo.q, echo_rdata, tx_rdata.clone()));
    let lanes_out: Vec<Expr> = (0..8u32)
        .map(|l| {
            let pos = g_bk.ex() + u64::from(l);
            mux(
                pos.lt(hlen16),
                hdr_bytes.slice(8 * l + 7, 8 * l),
                mux(
                    pos.lt(pay_end),
                    pay_bytes.slice(8 * l + 7, 8 * l),
                    lit(8, 0),
                ),
            )
        })
        .collect();
    let beat = m.net("out_beat", cat(lanes_out.into_iter().rev()));
    let keep_now = m.net("out_keep_now", first(&b_left.ex()));
    m.comb(|c| {
        c.set(o_data.d, o_data.q);
        c.set(o_keep.d, o_keep.q);
        c.set(o_last.d, o_last.q);
        c.set(o_valid.d, o_valid.q & !tx_ready);
        c.if_(b_move, |c| {
            c.set(o_data.d, beat);
            c.set(o_keep.d, keep_now);
            c.set(o_last.d, b_last);
            c.set(o_valid.d, 1u64);
        });
    });
    m.assign(tx_data, o_data.q);
    m.assign(tx_keep, o_keep.q);
    m.assign(tx_last, o_last.q);
    m.assign(tx_valid, o_valid.q);

    // ------------------------------------------------------------ tx bytes into the buffers
    let u_valid = m.reg("app_tx_valid", 1, 0);
    m.comment(u_valid.q, "a tx beat is being written, eight bytes a cycle");
    let u_conn = m.reg("app_tx_conn", cw, 0);
    let u_data = m.reg("app_tx_data", dw, 0);
    let nbw = clog2(u64::from(lanes) + 1);
    let u_n = m.reg("app_tx_n", nbw, 0);
    let u_i = m.reg("app_tx_i", nbw, 0);
    let u_ok = m.reg("app_tx_ok", 1, 0);
    m.comment(
        u_ok.q,
        "the beat came with credit (else its bytes are dropped)",
    );
    // A segment of a connection in the generator (its checksum's reads or its bytes going
    // out) still reads its bytes from the buffer: an ACK arriving meanwhile must not free them
    // for the application to overwrite (the checksum is of the bytes read first), so the
    // buffer's occupied part starts at the older of SND.UNA and that segment's first byte,
    // rounded down to its word: the bytes before it in the word and the stream's sum kept
    // beside the word are what the checksum of a segment starting there reads.
    // The beat being written (taken with credit) still has `app_tx_left` bytes to come: they
    // count as used, so that a connection's room only grows while a beat waits on the bus
    // (the bytes written move from the beat to the buffer, ACKs free bytes) and its credit,
    // once up, stays up until the beat is taken (unless the connection stops sending).
    let u_left = m.net("app_tx_left", u_n.q.ex() - u_i.q.ex());
    m.comment(u_left, "bytes of the beat not written yet");
    let tused: Vec<Sig> = (0..n as usize)
        .map(|c| {
            let k = &conns[c];
            let reading = m.net(
                &format!("c{c}_tx_reading"),
                g_st.q.ne(0u64) & !g_echo.q & g_conn.q.eq(c as u64) & g_plen.q.ne(0u64),
            );
            m.comment(
                reading,
                "a segment of this connection with payload is in the generator",
            );
            let base = m.net(
                &format!("c{c}_tx_base"),
                cat([
                    mux(
                        reading & seq_gt(&k.snd_una.q.ex(), &g_seq.q.ex()),
                        g_seq.q.ex(),
                        k.snd_una.q.ex(),
                    )
                    .slice(31, 3),
                    lit(3, 0),
                ]),
            );
            m.comment(
                base,
                "the first byte of the oldest word the buffer must keep: SND.UNA's, or the segment's being read",
            );
            let pending = mux(
                u_valid.q & u_ok.q & u_conn.q.eq(c as u64),
                u_left.ex().resize(32),
                lit(32, 0),
            );
            let used = m.net(
                &format!("c{c}_tx_used"),
                k.wr.q.ex() - base.ex() + pending,
            );
            m.comment(
                used,
                "buffer bytes held: from the base to the end of the beat being written",
            );
            used
        })
        .collect();
    let may_send: Vec<Sig> = (0..n as usize)
        .map(|c| {
            let k = &conns[c];
            m.net(
                &format!("c{c}_may_send"),
                in_state(k, &["StEstab", "StCloseWait"]) & !k.fin_req.q,
            )
        })
        .collect();
    let credits: Vec<Sig> = (0..n as usize)
        .map(|c| {
            let credit = m.net(
                &format!("c{c}_tx_credit"),
                may_send[c] & tused[c].le(u64::from(p.tx_bytes - lanes)),
            );
            m.comment(
                credit,
                "room for a full beat after the one being written, and the connection may send",
            );
            credit
        })
        .collect();
    m.assign(credit, cat(credits.iter().rev().map(|c| c.ex())));
    let u_cnt = m.net("app_tx_cnt", upto8(&u_left.ex()));
    m.comment(u_cnt, "bytes written this cycle");
    let u_end = m.net("app_tx_end", u_valid.q & u_left.le(8u64));
    m.comment(u_end, "the beat's last bytes are written this cycle");
    m.assign(app_tx.ready, !u_valid.q | u_end);
    let tx_conn = app_tx.field("conn");
    // A beat is kept exactly when its connection has credit in the cycle it is taken.
    let ok_now = sel(
        &tx_conn.ex(),
        &credits.iter().map(|c| c.ex()).collect::<Vec<_>>(),
    );
    let keep_in = app_tx.field("keep");
    let cnt = (0..lanes).fold(lit(nbw, 0), |a, i| a + keep_in.bit(i).zext(nbw));
    let app_fire = m.net("app_tx_fire", app_tx.fire());
    m.comb(|c| {
        c.set(u_valid.d, u_valid.q);
        c.set(u_conn.d, u_conn.q);
        c.set(u_data.d, u_data.q);
        c.set(u_n.d, u_n.q);
        c.set(u_i.d, u_i.q);
        c.set(u_ok.d, u_ok.q);
        c.if_(app_fire, |c| {
            c.set(u_valid.d, cnt.ne(0u64));
            c.set(u_conn.d, tx_conn);
            c.set(u_data.d, app_tx.field("data"));
            c.set(u_n.d, cnt.clone());
            c.set(u_i.d, 0u64);
            c.set(u_ok.d, ok_now.clone());
        })
        .else_if(u_valid.q, |c| {
            c.set(u_i.d, u_i.q + 8u64);
            c.if_(u_end, |c| c.set(u_valid.d, 0u64));
        });
    });
    let u_bytes = m.net(
        "app_tx_bytes",
        u_data.q.shr_by(cat([u_i.q.ex(), lit(3, 0)])).resize(64),
    );
    let u_wr_seq = m
        .net(
            "app_tx_wr_seq",
            sel(
                &u_conn.q.ex(),
                &conns.iter().map(|k| k.wr.q.ex()).collect::<Vec<_>>(),
            ),
        )
        .ex();
    let app_w = m.net("app_tx_write", u_valid.q & u_ok.q);
    let u_mask = app_w.repeat(8) & first(&u_cnt.ex());
    txbuf.write(
        &mut m,
        Some(&u_conn.q.ex()),
        &u_wr_seq,
        &u_bytes.ex(),
        &u_mask,
    );
    // The stream's sum: the bytes written this cycle added to the connection's `app_wr_sum`,
    // and, as a word's first byte is written, the sum up to it kept beside the word.
    let u_lane = m.net("app_tx_lane", u_wr_seq.slice(2, 0));
    let u_odd = m.net("app_tx_odd", u_wr_seq.bit(0));
    m.comment(u_odd, "the write starts at an odd sequence number");
    let u_wmask = m.net("app_tx_mask", first(&u_cnt.ex()));
    let u_sum = m.net(
        "app_tx_sum",
        bytes_sum(&u_bytes.ex(), &u_wmask.ex(), Some(&u_odd.ex())),
    );
    m.comment(
        u_sum,
        "the bytes written this cycle (a byte at an even sequence number high)",
    );
    let u_pre_n = m.net(
        "app_tx_pre_n",
        mux(u_lane.eq(0u64), lit(4, 0), lit(4, 8) - u_lane.zext(4)),
    );
    m.comment(
        u_pre_n,
        "bytes of the write before the next word's first byte",
    );
    let u_wsum = m.net(
        "app_wr_sum_cur",
        sel(
            &u_conn.q.ex(),
            &conns.iter().map(|k| k.wsum.q.ex()).collect::<Vec<_>>(),
        ),
    );
    let u_wsum_new = m.net("app_wr_sum_raw", u_wsum.zext(32) + u_sum.ex());
    let u_wsum_next = m.net("app_wr_sum_next", fold16(&u_wsum_new.ex()));
    m.comment(
        u_wsum_next,
        "the writing connection's app_wr_sum after the write",
    );
    let u_pmask = m.net("app_tx_pre_mask", first(&u_pre_n.ex()));
    let psum_raw = m.net(
        "tx_psum_raw",
        u_wsum.zext(32) + bytes_sum(&u_bytes.ex(), &u_pmask.ex(), Some(&u_odd.ex())),
    );
    let psum_wdata = m.net("tx_psum_wdata", fold16(&psum_raw.ex()));
    m.comment(
        psum_wdata,
        "the stream's sum up to the next word's first byte",
    );
    let psum_we = m.net("tx_psum_write", app_w & u_cnt.gt(u_pre_n.ex()));
    m.comment(psum_we, "the write holds a word's first byte");
    let psum_word = m.net(
        "tx_psum_wr_word",
        (u_wr_seq.clone() + u_pre_n.zext(32)).slice(tab - 1, 3),
    );
    m.comment(
        psum_word,
        "the buffer word whose first byte the write holds",
    );
    m.mem_write(
        psum,
        psum_we,
        cat([u_conn.q.ex(), psum_word.ex()]),
        psum_wdata,
    );
    let tx_drop_inc = m.net(
        "app_tx_drop",
        mux(u_valid.q & !u_ok.q, u_cnt.ex(), lit(4, 0)),
    );
    m.comment(
        tx_drop_inc,
        "bytes dropped this cycle (a beat without credit)",
    );

    // ------------------------------------------------------------ rx bytes out of the buffers
    let r_busy = m.reg("app_rx_valid", 1, 0);
    m.comment(r_busy.q, "bytes read from rx_buf are on rx");
    let r_conn = m.reg("app_rx_conn", cw, 0);
    let r_ptr = m.reg("app_rx_rr", cw, 0);
    // A connection that was reset (CLOSED, failed) or is opening (ARP, ISN, SYN-SENT) has no
    // received bytes: what its buffer pointers still say belongs to a reset connection, and is
    // never delivered (a beat of it already on rx is dropped), so a reopened connection starts
    // its stream clean (RFC 9293 3.10.5, 3.10.7: a reset flushes the receive queue).
    let opening: Vec<Sig> = (0..n as usize)
        .map(|c| {
            let st = conns[c].st.q;
            m.net(
                &format!("c{c}_rx_flushed"),
                st.eq(s("StArp"))
                    | st.eq(s("StIsn"))
                    | st.eq(s("StSynSent"))
                    | (st.eq(s("StClosed")) & conns[c].failed.q),
            )
        })
        .collect();
    // The beat on rx may be taken this cycle: the next one (of any connection, the same one
    // from after the bytes taken) is read at once, so beats follow a cycle apart.
    let r_cnt = m.reg("app_rx_cnt", 4, 0);
    m.comment(r_cnt.q, "bytes of the beat on rx (1 to 8)");
    let r_pop = m.net("app_rx_pop", app_rx.fire());
    let r_free = m.net("app_rx_free", !r_busy.q | r_pop);
    m.comment(r_free, "rx holds no beat after this cycle");
    let rd_now: Vec<Sig> = (0..n as usize)
        .map(|c| {
            let k = &conns[c];
            m.net(
                &format!("c{c}_rx_rd_next"),
                k.rd.q.ex() + mux(r_pop & r_conn.q.eq(c as u64), r_cnt.q.zext(32), lit(32, 0)),
            )
        })
        .collect();
    let r_have: Vec<Sig> = (0..n as usize)
        .map(|c| {
            let k = &conns[c];
            m.net(
                &format!("c{c}_rx_have"),
                k.rcv_nxt.q.ne(rd_now[c]) & rx_space.bit(c as u32) & !opening[c],
            )
        })
        .collect();
    let r_any = m.net(
        "app_rx_any",
        r_have
            .iter()
            .map(|x| x.ex())
            .reduce(|a, b| a | b)
            .expect("conns"),
    );
    let r_per: Vec<Expr> = (0..n)
        .map(|r| {
            (0..n).rev().fold(lit(cw, 0), |e, j| {
                let c = (r + j) % n;
                mux(r_have[c as usize], lit(cw, u128::from(c)), e)
            })
        })
        .collect();
    let r_next_ptr = m.net(
        "app_rx_rr_next",
        mux(
            r_pop,
            mux(r_conn.q.eq(u64::from(n - 1)), lit(cw, 0), r_conn.q + 1u64),
            r_ptr.q.ex(),
        ),
    );
    m.comment(
        r_next_ptr,
        "the connection first in turn (after the one taken now)",
    );
    let r_pick = m.net("app_rx_pick", sel(&r_next_ptr.ex(), &r_per));
    let r_start = m.net("app_rx_start", r_free & r_any);
    let r_rd_sel = sel(
        &r_pick.ex(),
        &rd_now.iter().map(|x| x.ex()).collect::<Vec<_>>(),
    );
    let r_data = rxbuf.read(&mut m, &r_start.ex(), Some(&r_pick.ex()), &r_rd_sel);
    let r_avail = m.net(
        "app_rx_avail",
        sel(
            &r_pick.ex(),
            &conns
                .iter()
                .zip(&rd_now)
                .map(|(k, rd)| k.rcv_nxt.q.ex() - rd.ex())
                .collect::<Vec<_>>(),
        ),
    );
    m.assign(r_cnt.d, mux(r_start, upto8(&r_avail.ex()), r_cnt.q.ex()));
    let r_stale = m.net(
        "app_rx_stale",
        sel(
            &r_conn.q.ex(),
            &opening.iter().map(|x| x.ex()).collect::<Vec<_>>(),
        ),
    );
    m.assign(
        r_busy.d,
        mux(
            r_start,
            lit(1, 1),
            mux(r_pop | r_stale, lit(1, 0), r_busy.q.ex()),
        ),
    );
    m.assign(r_conn.d, mux(r_start, r_pick.ex(), r_conn.q.ex()));
    m.assign(r_ptr.d, r_next_ptr);
    m.assign(app_rx.valid, r_busy.q & !r_stale);
    m.assign(app_rx.field("conn"), r_conn.q);
    m.assign(app_rx.field("data"), r_data.zext(dw));
    m.assign(app_rx.field("keep"), first(&r_cnt.q.ex()).zext(lanes));

    // ------------------------------------------------------------ connections: behaviour
    let mut rto_fire: Vec<Sig> = Vec::new();
    let mut rst_acc: Vec<Sig> = Vec::new();
    let mut rst_drop: Vec<Sig> = Vec::new();
    let mut challenge: Vec<Sig> = Vec::new();
    let mut dup_in: Vec<Sig> = Vec::new();
    let mut ooo_kept: Vec<Sig> = Vec::new();
    let mut ooo_drop: Vec<Sig> = Vec::new();
    // A SYN-ACK's MSS option (536 without one, or below 64), the SMSS it makes with ours, and
    // RFC 5681 3.1's initial window for that SMSS.
    let mss_min = m.net(
        "syn_peer_mss",
        mux(!mss_seen.q | mss_in.lt(64u64), lit(16, 536), mss_in.ex()),
    );
    m.comment(
        mss_min,
        "the peer's MSS a SYN-ACK carries (536 without the option)",
    );
    let syn_smss = m.net("syn_smss", min(mss_csr.ex(), mss_min.ex()).zext(32));
    m.comment(syn_smss, "SMSS after a SYN-ACK: min(our MSS, the peer's)");
    let syn_iw = m.net("syn_iw", initial_window(&syn_smss.ex()));
    m.comment(syn_iw, "initial window: 2, 3 or 4 SMSS (RFC 5681 3.1)");
    for c in 0..n as usize {
        let k = &conns[c];
        let segc = m.net(&format!("c{c}_seg"), seg_ok & pc.q.eq(c as u64));
        m.comment(segc, "a good segment of this connection ends this cycle");
        let lat = latch_tcp[c];
        let w = &wants[c];
        let fl = |i: u32| flags.bit(i);
        let (f_fin, f_syn, f_rst, f_ack) = (fl(0), fl(1), fl(2), fl(4));
        let sync = in_state(
            k,
            &[
                "StEstab",
                "StFinWait1",
                "StFinWait2",
                "StClosing",
                "StTimeWait",
                "StCloseWait",
                "StLastAck",
            ],
        );
        let outstanding = m.net(&format!("c{c}_outstanding"), k.snd_una.q.ne(k.snd_max.q));
        let rto_run = outstanding
            & in_state(
                k,
                &[
                    "StSynSent",
                    "StEstab",
                    "StFinWait1",
                    "StClosing",
                    "StCloseWait",
                    "StLastAck",
                ],
            );
        let rto_run = m.net(&format!("c{c}_rto_run"), rto_run);
        let persist = m.net(
            &format!("c{c}_persist_run"),
            in_state(k, &["StEstab", "StCloseWait"])
                & !outstanding
                & !k.probe.q
                & w.avail.ne(0u64)
                & (w.room.eq(0u64) | w.sws),
        );
        m.comment(
            persist,
            "bytes wait for a closed window (the timer runs for a probe) or for a larger one (SWS avoidance's override timeout)",
        );
        let tmr_run = m.net(
            &format!("c{c}_tmr_run"),
            (k.st.q.eq(s("StArp")) & !k.arp_due.q) | rto_run | persist | k.st.q.eq(s("StTimeWait")),
        );
        let expire = m.net(
            &format!("c{c}_rto_expired"),
            (rto_run | persist) & k.tmr.q.ge(k.rto.q) & !segc & !lat,
        );
        let give_up = m.net(&format!("c{c}_give_up"), k.retries.q.ge(retry_lim));
        rto_fire.push(m.net(
            &format!("c{c}_rto_fire"),
            expire & outstanding & !k.abort_req.q,
        ));
        // RTT sample (RFC 6298 in ticks, SRTT << 3, RTTVAR << 2).
        let r = m.net(&format!("c{c}_rtt_r"), now.q.ex() - k.rtt_start.q.ex());
        let srtt = k.srtt8.q.slice(18, 3);
        let err_abs = mux(r.ge(&srtt), r.ex() - srtt.clone(), srtt.clone() - r.ex());
        let var_new = m.net(
            &format!("c{c}_rttvar_new"),
            mux(
                k.has_rtt.q,
                k.rttvar4.q.ex() - k.rttvar4.q.slice(17, 2).zext(18) + err_abs.zext(18),
                cat([r.ex(), lit(1, 0)]).zext(18),
            ),
        );
        let srtt_new = m.net(
            &format!("c{c}_srtt_new"),
            mux(
                k.has_rtt.q,
                k.srtt8.q.ex() - k.srtt8.q.slice(18, 3).zext(19) + r.zext(19),
                cat([r.ex(), lit(3, 0)]),
            ),
        );
        let var_term = mux(var_new.eq(0u64), lit(18, 1), var_new.ex());
        let rto_raw = srtt_new.slice(18, 3).zext(19) + var_term.zext(19);
        let rto_new = m.net(
            &format!("c{c}_rto_new"),
            mux(
                rto_raw.lt(rto_min.zext(19)),
                rto_min.ex(),
                mux(
                    rto_raw.gt(rto_max.zext(19)),
                    rto_max.ex(),
                    rto_raw.slice(15, 0),
                ),
            ),
        );
        let rto_dbl = k.rto.q.zext(17) + k.rto.q.zext(17);
        let rto_back = m.net(
            &format!("c{c}_rto_backoff"),
            mux(
                rto_dbl.gt(rto_max.zext(17)),
                rto_max.ex(),
                rto_dbl.slice(15, 0),
            ),
        );
        // Received segment: the acceptance tests.
        let ack_ok_syn = ackn.eq(k.iss.q.ex() + 1u64);
        let rcv_ack = k.rcv_nxt.q.ex() + k.fin_in.q.zext(32);
        let rwin = mux(rfree[c].eq(0u64), lit(32, 1), rfree[c].ex());
        let rst_ok = (seq.ex() - rcv_ack.clone()).lt(rwin);
        let ack_beyond = m.net(
            &format!("c{c}_ack_beyond"),
            seq_gt(&ackn.ex(), &k.snd_max.q.ex()),
        );
        m.comment(
            ack_beyond,
            "an ACK of data not sent: answered, the segment dropped",
        );
        let ack_old = m.net(
            &format!("c{c}_ack_old"),
            seq_gt(&k.snd_una.q.ex(), &ackn.ex()),
        );
        m.comment(
            ack_old,
            "an ACK below SND.UNA (a reordered segment): ignored, its data still taken",
        );
        let ack_floor = m.net(
            &format!("c{c}_ack_floor"),
            k.snd_una.q.ex() - k.max_wnd.q.ex(),
        );
        m.comment(
            ack_floor,
            "SND.UNA - MAX.SND.WND: the oldest acceptable ACK (RFC 5961 5.2)",
        );
        let ack_too_old = m.net(
            &format!("c{c}_ack_too_old"),
            seq_gt(&ack_floor.ex(), &ackn.ex()),
        );
        m.comment(
            ack_too_old,
            "an ACK older than any window the peer offered: a challenge ACK, the segment dropped",
        );
        // RFC 9293 3.10.7.4, first check: a segment wholly before RCV.NXT (the FIN taken
        // counted; SEG.LEN counts the FIN) is not acceptable. It is answered with an ACK
        // (`seg_old` below) and its ACK field is not looked at.
        let rcv_now = k.rcv_nxt.q.ex() + k.fin_in.q.zext(32);
        let seq_past = seq.ex() + plen.zext(32) + f_fin.clone().zext(32);
        let stale = m.net(
            &format!("c{c}_seg_stale"),
            seq_gt(&rcv_now, &seq.ex()) & !seq_gt(&seq_past, &rcv_now),
        );
        m.comment(
            stale,
            "a segment wholly before RCV.NXT: ACKed, its ACK field ignored (RFC 9293 3.10.7.4)",
        );
        // And one beginning at or past the right edge of a window we advertised open (with the
        // window closed a segment at RCV.NXT is taken for its ACK, as RFC 9293 allows).
        let beyond = m.net(
            &format!("c{c}_seg_beyond"),
            seq_gt(&k.adv_edge.q.ex(), &rcv_now) & seq_ge(&seq.ex(), &k.adv_edge.q.ex()),
        );
        m.comment(
            beyond,
            "a segment at or past the open window's right edge: ACKed, its ACK field ignored (RFC 9293 3.10.7.4)",
        );
        let unacceptable = m.net(&format!("c{c}_seg_unacceptable"), stale | beyond);
        m.comment(
            unacceptable,
            "not acceptable (wholly old, or past the open window): its ACK field and window ignored",
        );
        let ack_adv = m.net(
            &format!("c{c}_ack_adv"),
            !unacceptable & seq_gt(&ackn.ex(), &k.snd_una.q.ex()),
        );
        let wnd_new = !unacceptable
            & !ack_old.ex()
            & (seq_gt(&seq.ex(), &k.wl1.q.ex())
                | (seq.eq(k.wl1.q) & seq_ge(&ackn.ex(), &k.wl2.q.ex())));
        let wnd_scaled = mux(k.ws_ok.q, wnd.zext(32).shl_by(k.peer_ws.q), wnd.zext(32));
        let fin_acked = m.net(
            &format!("c{c}_fin_acked"),
            !unacceptable & k.fin_sent.q & ackn.eq(k.snd_max.q),
        );
        // RFC 5681's duplicate ACK: data outstanding, none in the segment, no SYN or FIN, the
        // ACK number SND.UNA and the window unchanged.
        let is_dup = m.net(
            &format!("c{c}_dup_ack"),
            segc & f_ack.clone()
                & !f_rst.clone()
                & !f_syn.clone()
                & !f_fin.clone()
                & plen.eq(0u64)
                & !unacceptable
                & ackn.eq(k.snd_una.q)
                & outstanding
                & wnd_scaled.eq(k.snd_wnd.q)
                & in_state(
                    k,
                    &[
                        "StEstab",
                        "StFinWait1",
                        "StClosing",
                        "StCloseWait",
                        "StLastAck",
                    ],
                ),
        );
        dup_in.push(is_dup);
        let fr_enter = m.net(
            &format!("c{c}_fr_enter"),
            is_dup & k.dupacks.q.eq(2u64) & !k.in_rec.q & seq_gt(&ackn.ex(), &k.recover.q.ex()),
        );
        m.comment(
            fr_enter,
            "the third duplicate ACK: fast retransmit, NewReno recovery (RFC 6582)",
        );
        let full_ack = seq_ge(&ackn.ex(), &k.recover.q.ex());
        // Congestion control (RFC 5681, NewReno RFC 6582), in bytes; SMSS = min(our MSS, the
        // peer's).
        let smss = w.mss.zext(32);
        let acked = m.net(&format!("c{c}_cc_acked"), ackn.ex() - k.snd_una.q.ex());
        m.comment(acked, "bytes a new ACK acknowledges");
        let flight = k.snd_max.q.ex() - k.snd_una.q.ex();
        let half = flight.slice(31, 1).zext(32);
        let two_smss = w.mss.zext(32).shl_by(lit(1, 1));
        let ss_loss = m.net(
            &format!("c{c}_cc_ssthresh_loss"),
            mux(half.gt(&two_smss), half, two_smss.clone()),
        );
        m.comment(
            ss_loss,
            "max(FlightSize / 2, 2 SMSS): ssthresh after a loss (RFC 5681 (4))",
        );
        let grow_ok = m.net(&format!("c{c}_cc_grow_ok"), k.cwnd.q.bit(30).eq(0u64));
        m.comment(grow_ok, "cwnd stops growing at 1 GiB (no wrap)");
        let slow = m.net(&format!("c{c}_cc_slow_start"), k.cwnd.q.lt(k.ssthresh.q));
        let ca_sum = m.net(&format!("c{c}_cc_ca_sum"), k.ca_acc.q.ex() + acked.ex());
        m.comment(
            ca_sum,
            "bytes acknowledged in congestion avoidance since cwnd last grew",
        );
        let smss3 = smss.clone() + two_smss.clone();
        let deflated = m.net(
            &format!("c{c}_cc_deflated"),
            mux(
                acked.ge(k.cwnd.q),
                smss.clone(),
                k.cwnd.q.ex() - acked.ex() + mux(acked.ge(&smss), smss.clone(), lit(32, 0)),
            ),
        );
        m.comment(
            deflated,
            "a partial ACK: cwnd less what it acknowledges, plus SMSS if that is a segment or more (RFC 6582 3.2 step 5)",
        );
        // RFC 5681 4.1: after more than an RTO without data in flight (so none sent), the
        // restart window, min(cwnd, IW).
        let idle_run = m.net(
            &format!("c{c}_cc_idle_run"),
            in_state(k, &["StEstab", "StCloseWait"]) & !outstanding,
        );
        m.comment(idle_run, "nothing in flight: the idle time counts");
        let restart = m.net(&format!("c{c}_cc_restart"), idle_run & k.idle.q.ge(k.rto.q));
        m.comment(restart, "idle for an RTO: cwnd to the restart window");
        let iw = m.net(&format!("c{c}_cc_iw"), initial_window(&smss));
        m.comment(iw, "initial window for the SMSS (RFC 5681 3.1)");
        let restart_wnd = m.net(&format!("c{c}_cc_restart_wnd"), min(k.cwnd.q.ex(), iw.ex()));
        m.comment(restart_wnd, "restart window: min(cwnd, IW) (RFC 5681 4.1)");
        let receives = in_state(k, &["StEstab", "StFinWait1", "StFinWait2"]);
        let seg_end = m.net(&format!("c{c}_seg_end"), seq.ex() + plen.zext(32));
        let starts_ok = seq_ge(&k.rcv_nxt.q.ex(), &seq.ex());
        let takes = m.net(
            &format!("c{c}_takes"),
            receives.clone() & starts_ok.clone() & seq_gt(&seg_end.ex(), &k.rcv_nxt.q.ex()),
        );
        let newb = seg_end.ex() - k.rcv_nxt.q.ex();
        let fit_end = m.net(
            &format!("c{c}_fit_end"),
            k.rcv_nxt.q.ex() + min(newb, pfree.q.ex()),
        );
        m.comment(
            fit_end,
            "one past the segment's last byte written (the free space ends the rest)",
        );
        let merge = m.net(
            &format!("c{c}_ooo_merge"),
            takes & k.ooo_on.q & seq_ge(&fit_end.ex(), &k.ooo_lo.q.ex()),
        );
        m.comment(merge, "RCV.NXT reaches the kept out-of-order range");
        let rn_new = m.net(
            &format!("c{c}_rcv_nxt_new"),
            mux(
                merge,
                mux(
                    seq_gt(&k.ooo_hi.q.ex(), &fit_end.ex()),
                    k.ooo_hi.q.ex(),
                    fit_end.ex(),
                ),
                mux(takes, fit_end.ex(), k.rcv_nxt.q.ex()),
            ),
        );
        // Out of order: data beginning past RCV.NXT. One range is kept per connection; a
        // segment is kept when its first byte fits in the free space and it overlaps or
        // touches the range (or there is none), else dropped.
        let ooo = m.net(
            &format!("c{c}_ooo_seg"),
            receives.clone() & seq_gt(&seq.ex(), &k.rcv_nxt.q.ex()) & plen.ne(0u64),
        );
        let ooo_fits = (seq.ex() - k.rcv_nxt.q.ex()).lt(pfree.q);
        let touches = seq_ge(&k.ooo_hi.q.ex(), &seq.ex()) & seq_ge(&fit_end.ex(), &k.ooo_lo.q.ex());
        let keep = m.net(
            &format!("c{c}_ooo_keep"),
            ooo & ooo_fits & (!k.ooo_on.q | touches),
        );
        let seg_data = m.net(
            &format!("c{c}_seg_data"),
            segc & f_ack.clone()
                & !f_rst.clone()
                & !f_syn.clone()
                & sync.clone()
                & !ack_beyond
                & !ack_too_old,
        );
        m.comment(seg_data, "the segment's data and FIN are looked at");
        ooo_kept.push(m.net(&format!("c{c}_ooo_kept"), seg_data & keep));
        ooo_drop.push(m.net(&format!("c{c}_ooo_dropped"), seg_data & ooo & !keep));
        let fin_take = m.net(
            &format!("c{c}_fin_take"),
            f_fin.clone() & !k.fin_in.q & receives & starts_ok & seg_end.eq(rn_new),
        );
        let rcv_ack_now = k.rcv_nxt.q.ex() + k.fin_in.q.zext(32);
        let seg_old = m.net(&format!("c{c}_seg_old"), seq_gt(&rcv_ack_now, &seq.ex()));
        m.comment(
            seg_old,
            "the segment begins before RCV.NXT: answered with an ACK (zero-window probes)",
        );
        // Delayed ACK (RFC 9293 3.8.6.3, RFC 5681 4.2): new in-order data with no kept
        // out-of-order range, no FIN, nothing old in it, and less than 2 RMSS unacknowledged
        // may wait; anything else is ACKed at once.
        let unacked = rn_new.ex() - k.ack_sent.q.ex();
        let may_wait = m.net(
            &format!("c{c}_ack_may_wait"),
            ack_delay.ne(0u64)
                & plen.ne(0u64)
                & takes
                & !k.ooo_on.q
                & !f_fin.clone()
                & !seg_old
                & unacked.lt(mss_csr.zext(32).shl_by(lit(1, 1))),
        );
        m.comment(
            may_wait,
            "in-order data under 2 RMSS unacknowledged: its ACK may wait (delayed ACK)",
        );
        let st_ack = mux(
            fin_acked & k.st.q.eq(s("StFinWait1")),
            s("StFinWait2"),
            mux(
                fin_acked & k.st.q.eq(s("StClosing")),
                s("StTimeWait"),
                mux(
                    fin_acked & k.st.q.eq(s("StLastAck")),
                    s("StClosed"),
                    k.st.q.ex(),
                ),
            ),
        );
        let st_ack = m.net(&format!("c{c}_state_after_ack"), st_ack);
        let st_fin = mux(
            st_ack.eq(s("StEstab")),
            s("StCloseWait"),
            mux(
                st_ack.eq(s("StFinWait1")),
                s("StClosing"),
                mux(st_ack.eq(s("StFinWait2")), s("StTimeWait"), st_ack.ex()),
            ),
        );
        let st_fin = m.net(&format!("c{c}_state_after_fin"), st_fin);
        let rst_now = m.net(
            &format!("c{c}_rst_in"),
            segc & f_rst.clone()
                & ((k.st.q.eq(s("StSynSent")) & f_ack.clone() & ack_ok_syn.clone())
                    | (sync.clone() & seq.eq(rcv_ack.clone()))),
        );
        m.comment(
            rst_now,
            "a RST taken: in SYN-SENT acknowledging the SYN, else exactly at RCV.NXT (RFC 5961 3.2)",
        );
        rst_acc.push(rst_now);
        let rst_chal = m.net(
            &format!("c{c}_rst_challenge"),
            segc & f_rst.clone() & sync.clone() & !rst_now & rst_ok,
        );
        m.comment(
            rst_chal,
            "a RST in the receive window but not at RCV.NXT: a challenge ACK",
        );
        let rst_dropped = m.net(
            &format!("c{c}_rst_dropped"),
            segc & f_rst.clone() & !rst_now & !rst_chal,
        );
        m.comment(
            rst_dropped,
            "a RST outside the window (or in SYN-SENT without the SYN's ACK): ignored",
        );
        rst_drop.push(rst_dropped);
        let chal = m.net(
            &format!("c{c}_challenge"),
            rst_chal
                | (segc
                    & sync.clone()
                    & !f_rst.clone()
                    & (f_syn.clone() | (f_ack.clone() & (ack_beyond | ack_too_old)))),
        );
        m.comment(
            chal,
            "a challenge ACK is owed: that RST, a SYN, or an ACK outside the acceptable range",
        );
        challenge.push(chal);
        let (k_iss, k_una, k_nxt, k_max) = (&k.iss, &k.snd_una, &k.snd_nxt, &k.snd_max);
        let nn = m.net(
            &format!("c{c}_snd_nxt_after"),
            k_nxt.q.ex() + w.len.zext(32),
        );
        let hit_c = hit[c];
        let hit_mac_c = hit_mac[c];
        let alat = latch_arp[c];
        let isn_here = m.net(&format!("c{c}_isn_done"), isn_fin & isn_conn.q.eq(c as u64));
        // RFC 9293 3.4.1: no segment of a new incarnation may carry a sequence number an old
        // segment of the previous one (same 4-tuple, still in the network) may carry. The ISN
        // clock moves 1 per 1024 cycles, far slower than the engine sends, so M + F of a
        // reopened connection often falls inside the range the last one used; then the ISS is
        // one past that range (as stacks do when they reuse a 4-tuple, RFC 6191).
        let in_old = k.seq_used.q & (isn_val.ex() - k_iss.q.ex()).le(k_max.q.ex() - k_iss.q.ex());
        let iss_next = m.net(
            &format!("c{c}_iss_next"),
            mux(in_old, k_max.q.ex() + 1u64, isn_val.ex()),
        );
        m.comment(
            iss_next,
            "M + F, or SND.MAX + 1 of the previous incarnation if M + F lies in [its ISS, its SND.MAX]",
        );
        let rpop = m.net(&format!("c{c}_rx_pop"), r_pop & r_conn.q.eq(c as u64));
        let wpush = m.net(&format!("c{c}_tx_push"), app_w & u_conn.q.eq(c as u64));
        let syn_ack = f_syn.clone() & f_ack.clone() & ack_ok_syn.clone() & !f_rst.clone();
        let ws_min = mux(ws_in.gt(14u64), lit(4, 14), ws_in.slice(3, 0));
        m.comb(|b| {
            for r in [
                &k.st,
                &k.failed,
                &k.reason,
                &k.iss,
                &k.seq_used,
                &k.snd_una,
                &k.snd_nxt,
                &k.snd_max,
                &k.snd_wnd,
                &k.max_wnd,
                &k.wl1,
                &k.wl2,
                &k.fin_req,
                &k.fin_sent,
                &k.rcv_nxt,
                &k.fin_in,
                &k.ack_pend,
                &k.ack_dly,
                &k.ack_sent,
                &k.adv_edge,
                &k.peer_ws,
                &k.ws_ok,
                &k.peer_mss,
                &k.rmac,
                &k.retries,
                &k.rto,
                &k.srtt8,
                &k.rttvar4,
                &k.has_rtt,
                &k.rtt_on,
                &k.rtt_end,
                &k.rtt_start,
                &k.rst_pend,
                &k.arp_due,
                &k.probe,
                &k.ooo_on,
                &k.ooo_lo,
                &k.ooo_hi,
                &k.dup_owed,
                &k.dupacks,
                &k.in_rec,
                &k.recover,
                &k.fr_pend,
                &k.cwnd,
                &k.ssthresh,
                &k.ca_acc,
                &k.young,
            ] {
                b.set(r.d, r.q);
            }
            b.set(k.abort_req.d, k.abort_req.q | abort_p[c]);
            b.set(
                k.tmr.d,
                mux(tmr_run, mux(tick, k.tmr.q + 1u64, k.tmr.q.ex()), lit(16, 0)),
            );
            b.set(
                k.idle.d,
                mux(
                    idle_run,
                    mux(
                        tick & k.idle.q.ne(0xffffu64),
                        k.idle.q + 1u64,
                        k.idle.q.ex(),
                    ),
                    lit(16, 0),
                ),
            );
            b.if_(restart, |b| b.set(k.cwnd.d, restart_wnd));
            b.set(
                k.ack_tmr.d,
                mux(
                    k.ack_dly.q,
                    mux(tick, k.ack_tmr.q + 1u64, k.ack_tmr.q.ex()),
                    lit(16, 0),
                ),
            );
            // The delay is over: the ACK goes.
            b.if_(k.ack_dly.q & k.ack_tmr.q.ge(ack_delay), |b| {
                b.set(k.ack_pend.d, 1u64);
                b.set(k.ack_dly.d, 0u64);
            });
            b.set(k.wr.d, mux(wpush, k.wr.q + u_cnt.zext(32), k.wr.q.ex()));
            b.set(k.wsum.d, mux(wpush, u_wsum_next.ex(), k.wsum.q.ex()));
            // 16 bytes on from ISS+1, SND.UNA has left the stream's first word for good.
            b.if_(seq_gt(&k_una.q.ex(), &(k_iss.q.ex() + 16u64)), |b| {
                b.set(k.young.d, 0u64)
            });
            b.set(k.rd.d, mux(rpop, k.rd.q + r_cnt.q.zext(32), k.rd.q.ex()));
            let sample = |b: &mut Comb| {
                b.set(k.srtt8.d, srtt_new);
                b.set(k.rttvar4.d, var_new);
                b.set(k.rto.d, rto_new);
                b.set(k.has_rtt.d, 1u64);
                b.set(k.rtt_on.d, 0u64);
            };
            b.if_(segc, |b| {
                b.if_(k.st.q.eq(s("StSynSent")), |b| {
                    b.if_(f_rst.clone() & f_ack.clone() & ack_ok_syn.clone(), |b| {
                        b.set(k.st.d, s("StClosed"));
                        b.set(k.failed.d, 1u64);
                        b.set(k.reason.d, 1u64);
                    })
                    .else_if(syn_ack.clone(), |b| {
                        b.set(k.rcv_nxt.d, seq.ex() + 1u64);
                        b.set(k.rd.d, seq.ex() + 1u64);
                        b.set(k.adv_edge.d, seq.ex() + 1u64 + u64::from(p.rx_bytes));
                        b.set(k.snd_una.d, ackn);
                        // An RTO may have set SND.NXT back to the ISS for the SYN again: the
                        // SYN-ACK ends that (else the ACK and data would go from the ISS).
                        b.set(k_nxt.d, ackn);
                        b.set(k.snd_wnd.d, wnd.zext(32));
                        b.set(k.max_wnd.d, wnd.zext(32));
                        b.set(k.wl1.d, seq);
                        b.set(k.wl2.d, ackn);
                        b.set(k.ws_ok.d, ws_seen.q);
                        b.set(k.peer_ws.d, mux(ws_seen.q, ws_min.clone(), lit(4, 0)));
                        b.set(k.peer_mss.d, mss_min);
                        // RFC 5681 3.1: one segment after a SYN that was sent again.
                        b.set(k.cwnd.d, mux(k.retries.q.ne(0u64), syn_smss, syn_iw));
                        b.set(k.ssthresh.d, lit(32, 0xffff_ffff));
                        b.set(k.ca_acc.d, 0u64);
                        b.set(k.st.d, s("StEstab"));
                        b.set(k.ack_pend.d, 1u64);
                        b.set(k.ack_dly.d, 0u64);
                        b.set(k.ack_sent.d, seq.ex() + 1u64);
                        b.set(k.retries.d, 0u64);
                        b.set(k.fin_in.d, 0u64);
                        b.if_(k.rtt_on.q, sample);
                    });
                })
                .else_if(sync.clone(), |b| {
                    b.if_(f_rst.clone(), |b| {
                        // In CLOSING, LAST-ACK and TIME-WAIT a RST ends a closed connection.
                        let done = in_state(k, &["StClosing", "StLastAck", "StTimeWait"]);
                        b.if_(rst_now, |b| {
                            b.set(k.st.d, s("StClosed"));
                            b.set(k.failed.d, !done.clone());
                            b.set(k.reason.d, mux(done, lit(2, 0), lit(2, 1)));
                        })
                        .else_if(rst_chal, |b| b.set(k.ack_pend.d, 1u64));
                    })
                    .else_if(f_syn.clone(), |b| b.set(k.ack_pend.d, 1u64))
                    .else_if(f_ack.clone() & (ack_beyond | ack_too_old), |b| {
                        b.set(k.ack_pend.d, 1u64)
                    })
                    .else_if(f_ack.clone(), |b| {
                        b.if_(ack_adv, |b| {
                            b.set(k.snd_una.d, ackn);
                            b.set(k.retries.d, 0u64);
                            b.set(k.tmr.d, 0u64);
                            b.if_(seq_gt(&ackn.ex(), &k_nxt.q.ex()), |b| b.set(k_nxt.d, ackn));
                            b.if_(k.rtt_on.q & seq_ge(&ackn.ex(), &k.rtt_end.q.ex()), sample);
                            // NewReno: a partial ACK retransmits the next hole at once, a full
                            // one ends recovery.
                            b.if_(!k.in_rec.q | full_ack.clone(), |b| {
                                b.set(k.in_rec.d, 0u64);
                                b.set(k.dupacks.d, 0u64);
                                b.set(k.fr_pend.d, 0u64);
                                // Recovery ends with cwnd = ssthresh (RFC 6582 3.2 step 3,
                                // option 2); else slow start adds min(acked, SMSS) (RFC 5681
                                // (2)), congestion avoidance SMSS per cwnd bytes acknowledged
                                // (the byte-counting form of RFC 5681 (3)).
                                b.if_(k.in_rec.q, |b| {
                                    b.set(k.cwnd.d, k.ssthresh.q);
                                    b.set(k.ca_acc.d, 0u64);
                                })
                                .else_if(slow, |b| {
                                    b.if_(grow_ok, |b| {
                                        b.set(
                                            k.cwnd.d,
                                            k.cwnd.q.ex() + min(acked.ex(), smss.clone()),
                                        )
                                    });
                                })
                                .else_if(ca_sum.ge(k.cwnd.q), |b| {
                                    b.if_(grow_ok, |b| {
                                        b.set(k.cwnd.d, k.cwnd.q.ex() + smss.clone())
                                    });
                                    b.set(k.ca_acc.d, ca_sum.ex() - k.cwnd.q.ex());
                                })
                                .else_(|b| b.set(k.ca_acc.d, ca_sum));
                            })
                            .else_(|b| {
                                b.set(k.fr_pend.d, 1u64);
                                b.set(k.cwnd.d, deflated);
                            });
                        });
                        b.if_(is_dup & !k.dupacks.q.eq(3u64), |b| {
                            b.set(k.dupacks.d, k.dupacks.q + 1u64)
                        });
                        // Each further duplicate ACK in recovery inflates cwnd by SMSS (RFC
                        // 6582 3.2 step 4): a segment left the network.
                        b.if_(is_dup & k.in_rec.q & grow_ok, |b| {
                            b.set(k.cwnd.d, k.cwnd.q.ex() + smss.clone())
                        });
                        b.if_(fr_enter, |b| {
                            b.set(k.in_rec.d, 1u64);
                            b.set(k.recover.d, k_max.q);
                            b.set(k.fr_pend.d, 1u64);
                            b.set(k.rtt_on.d, 0u64);
                            b.set(k.ssthresh.d, ss_loss);
                            b.set(k.cwnd.d, ss_loss.ex() + smss3.clone());
                            b.set(k.ca_acc.d, 0u64);
                        });
                        b.if_(wnd_new.clone(), |b| {
                            b.set(k.snd_wnd.d, wnd_scaled.clone());
                            b.if_(wnd_scaled.gt(k.max_wnd.q), |b| {
                                b.set(k.max_wnd.d, wnd_scaled.clone())
                            });
                            b.set(k.wl1.d, seq);
                            b.set(k.wl2.d, ackn);
                        });
                        b.set(k.st.d, st_ack);
                        b.set(k.rcv_nxt.d, rn_new);
                        b.if_(may_wait, |b| b.set(k.ack_dly.d, 1u64))
                            .else_if(plen.ne(0u64) | f_fin.clone() | seg_old | beyond, |b| {
                                b.set(k.ack_pend.d, 1u64)
                            });
                        b.if_(takes, |b| b.set(k.dup_owed.d, 0u64));
                        b.if_(merge, |b| b.set(k.ooo_on.d, 0u64));
                        b.if_(ooo & !k.dup_owed.q.eq(3u64), |b| {
                            b.set(k.dup_owed.d, k.dup_owed.q + 1u64)
                        });
                        b.if_(keep, |b| {
                            b.set(k.ooo_on.d, 1u64);
                            b.if_(!k.ooo_on.q | seq_gt(&k.ooo_lo.q.ex(), &seq.ex()), |b| {
                                b.set(k.ooo_lo.d, seq)
                            });
                            b.if_(!k.ooo_on.q | seq_gt(&fit_end.ex(), &k.ooo_hi.q.ex()), |b| {
                                b.set(k.ooo_hi.d, fit_end)
                            });
                        });
                        b.if_(fin_take, |b| {
                            b.set(k.fin_in.d, 1u64);
                            b.set(k.st.d, st_fin);
                        });
                        b.if_(k.st.q.eq(s("StTimeWait")) & f_fin.clone(), |b| {
                            b.set(k.tmr.d, 0u64)
                        });
                    });
                });
            })
            .else_if(lat, |b| {
                b.set(k.ack_pend.d, 0u64);
                b.if_(!w.syn, |b| {
                    b.set(k.adv_edge.d, w.edge);
                    b.set(k.ack_dly.d, 0u64);
                    b.set(k.ack_sent.d, w.ack);
                });
                b.if_(w.dup, |b| b.set(k.dup_owed.d, k.dup_owed.q - 1u64));
                b.if_(w.rst, |b| {
                    b.set(k.st.d, s("StClosed"));
                    b.set(k.failed.d, 1u64);
                    b.set(k.rst_pend.d, 0u64);
                })
                .else_if(w.syn, |b| {
                    b.set(k_nxt.d, k_iss.q.ex() + 1u64);
                    b.set(k_max.d, k_iss.q.ex() + 1u64);
                    b.if_(k_max.q.eq(k_iss.q), |b| {
                        b.set(k.rtt_on.d, 1u64);
                        b.set(k.rtt_end.d, k_iss.q.ex() + 1u64);
                        b.set(k.rtt_start.d, now.q);
                    });
                })
                .else_if(w.fr, |b| {
                    // Fast retransmission of the segment at SND.UNA; new data goes on from
                    // SND.NXT (moved past it if it was behind).
                    let fr_end = k_una.q.ex() + w.len.zext(32);
                    b.set(k.fr_pend.d, 0u64);
                    b.set(k.rtt_on.d, 0u64);
                    b.if_(seq_gt(&fr_end, &k_nxt.q.ex()), |b| {
                        b.set(k_nxt.d, fr_end.clone())
                    });
                })
                .else_if(w.data, |b| {
                    b.set(k.probe.d, 0u64);
                    b.set(k_nxt.d, nn);
                    b.if_(seq_gt(&nn.ex(), &k_max.q.ex()), |b| b.set(k_max.d, nn));
                    b.if_(!k.rtt_on.q & seq_ge(&k_nxt.q.ex(), &k_max.q.ex()), |b| {
                        b.set(k.rtt_on.d, 1u64);
                        b.set(k.rtt_end.d, nn);
                        b.set(k.rtt_start.d, now.q);
                    });
                })
                .else_if(w.fin, |b| {
                    b.set(k_nxt.d, k.wr.q.ex() + 1u64);
                    b.set(k_max.d, k.wr.q.ex() + 1u64);
                    b.set(k.fin_sent.d, 1u64);
                    b.if_(k.st.q.eq(s("StEstab")), |b| b.set(k.st.d, s("StFinWait1")));
                    b.if_(k.st.q.eq(s("StCloseWait")), |b| {
                        b.set(k.st.d, s("StLastAck"))
                    });
                });
            })
            .else_if(k.abort_req.q, |b| {
                b.set(k.abort_req.d, abort_p[c]);
                b.set(k.reason.d, 0u64);
                b.if_(sync.clone() & !k.st.q.eq(s("StTimeWait")), |b| {
                    b.set(k.rst_pend.d, 1u64)
                })
                .else_(|b| {
                    b.set(k.st.d, s("StClosed"));
                    b.set(k.failed.d, !k.st.q.eq(s("StClosed")));
                });
            })
            .else_if(alat, |b| {
                b.set(k.arp_due.d, 0u64);
                b.set(k.retries.d, k.retries.q + 1u64);
            })
            .else_if(expire & !outstanding, |b| {
                // A zero-window probe backs the timer off (RFC 9293 3.8.6.1); SWS avoidance's
                // override is no loss, and sends what fits.
                b.set(k.probe.d, 1u64);
                b.if_(w.room.eq(0u64), |b| b.set(k.rto.d, rto_back));
                b.set(k.tmr.d, 0u64);
            })
            .else_if(expire, |b| {
                b.if_(give_up, |b| {
                    b.set(k.failed.d, 1u64);
                    b.set(k.reason.d, 2u64);
                    b.if_(k.st.q.eq(s("StSynSent")), |b| b.set(k.st.d, s("StClosed")))
                        .else_(|b| b.set(k.rst_pend.d, 1u64));
                })
                .else_(|b| {
                    b.set(k.retries.d, k.retries.q + 1u64);
                    b.set(k.rto.d, rto_back);
                    // RFC 6582: after a timeout, duplicate ACKs below SND.MAX start no fast
                    // retransmit.
                    b.set(k.in_rec.d, 0u64);
                    b.set(k.dupacks.d, 0u64);
                    b.set(k.fr_pend.d, 0u64);
                    b.set(k.recover.d, k_max.q);
                    // RFC 5681 (4): ssthresh from the flight at the first timeout of a
                    // segment, held on its later ones; cwnd to the loss window, one segment.
                    b.if_(k.retries.q.eq(0u64), |b| b.set(k.ssthresh.d, ss_loss));
                    b.set(k.cwnd.d, smss.clone());
                    b.set(k.ca_acc.d, 0u64);
                    b.set(
                        k_nxt.d,
                        mux(k.st.q.eq(s("StSynSent")), k_iss.q.ex(), k_una.q.ex()),
                    );
                    b.set(k.rtt_on.d, 0u64);
                    b.set(k.tmr.d, 0u64);
                });
            })
            .else_(|b| {
                b.case(k.st.q, |a| {
                    a.arm(s("StClosed"), |b| {
                        b.if_(open_p[c], |b| {
                            b.set(k.st.d, s("StArp"));
                            b.set(k.failed.d, 0u64);
                            b.set(k.reason.d, 0u64);
                            b.set(k.retries.d, 0u64);
                            b.set(k.arp_due.d, 1u64);
                        });
                    });
                    a.arm(s("StArp"), |b| {
                        b.if_(hit_c, |b| {
                            b.set(k.rmac.d, hit_mac_c);
                            b.set(k.st.d, s("StIsn"));
                        })
                        .else_if(k.retries.q.gt(arp_lim), |b| {
                            b.set(k.st.d, s("StClosed"));
                            b.set(k.failed.d, 1u64);
                            b.set(k.reason.d, 3u64);
                        })
                        .else_if(!k.arp_due.q & k.tmr.q.ge(arp_retry), |b| {
                            b.set(k.arp_due.d, 1u64)
                        });
                    });
                    a.arm(s("StIsn"), |b| {
                        b.if_(isn_here, |b| {
                            b.set(k.iss.d, iss_next);
                            b.set(k.seq_used.d, 1u64);
                            b.set(k_una.d, iss_next);
                            b.set(k_nxt.d, iss_next);
                            b.set(k_max.d, iss_next);
                            b.set(k.wr.d, iss_next.ex() + 1u64);
                            b.set(k.wsum.d, 0u64);
                            b.set(k.young.d, 1u64);
                            b.set(k.st.d, s("StSynSent"));
                            b.set(k.rto.d, rto_init);
                            b.set(k.has_rtt.d, 0u64);
                            b.set(k.rtt_on.d, 0u64);
                            b.set(k.retries.d, 0u64);
                            b.set(k.ws_ok.d, 0u64);
                            b.set(k.peer_ws.d, 0u64);
                            b.set(k.peer_mss.d, 536u64);
                            b.set(k.snd_wnd.d, 0u64);
                            b.set(k.max_wnd.d, 0u64);
                            b.set(k.fin_req.d, 0u64);
                            b.set(k.fin_sent.d, 0u64);
                            b.set(k.fin_in.d, 0u64);
                            b.set(k.ack_pend.d, 0u64);
                            b.set(k.ack_dly.d, 0u64);
                            b.set(k.rst_pend.d, 0u64);
                            b.set(k.ooo_on.d, 0u64);
                            b.set(k.dup_owed.d, 0u64);
                            b.set(k.dupacks.d, 0u64);
                            b.set(k.in_rec.d, 0u64);
                            b.set(k.recover.d, iss_next);
                            b.set(k.fr_pend.d, 0u64);
                        });
                    });
                    a.arm(s("StTimeWait"), |b| {
                        b.if_(k.tmr.q.ge(tw_ticks), |b| b.set(k.st.d, s("StClosed")));
                    });
                    a.default(|_| {});
                });
            });
            b.if_(close_p[c] & in_state(k, &["StEstab", "StCloseWait"]), |b| {
                b.set(k.fin_req.d, 1u64)
            });
        });
    }
    m.assign(
        up,
        cat((0..n as usize)
            .rev()
            .map(|c| in_state(&conns[c], &["StEstab", "StCloseWait"]))),
    );
    m.assign(failed_o, cat(conns.iter().rev().map(|k| k.failed.q.ex())));
    for (c, k) in conns.iter().enumerate() {
        let b = |m: &mut ModuleBuilder, port: &str, v: Expr| {
            m.bind(u_csr, &format!("c{c}_{port}_i"), v)
        };
        b(&mut m, "state_state", k.st.q.ex());
        b(&mut m, "state_failed", k.failed.q.ex());
        b(&mut m, "state_reason", k.reason.q.ex());
        b(&mut m, "state_retries", k.retries.q.ex());
        b(&mut m, "snd_una_value", k.snd_una.q.ex());
        b(&mut m, "snd_nxt_value", k.snd_nxt.q.ex());
        b(&mut m, "rcv_nxt_value", k.rcv_nxt.q.ex());
        b(&mut m, "rtt_srtt", k.srtt8.q.slice(18, 3));
        b(&mut m, "rtt_rto", k.rto.q.ex());
        b(&mut m, "iss_value", k.iss.q.ex());
        b(&mut m, "snd_wnd_value", k.snd_wnd.q.ex());
        b(&mut m, "cwnd_value", k.cwnd.q.ex());
        b(&mut m, "ssthresh_value", k.ssthresh.q.ex());
    }

    // ------------------------------------------------------------ counters
    let popc = |v: &[Sig]| -> Expr { v.iter().fold(lit(32, 0), |a, x| a + x.zext(32)) };
    let incs: Vec<Expr> = vec![
        seg_ok.zext(32),
        (go_tcp | go_rst).zext(32),
        (go_tcp & t_retx).zext(32),
        popc(&rto_fire),
        drop_csum.zext(32),
        drop_other.zext(32),
        drop_mal.zext(32),
        popc(&rst_acc),
        (go_tcp & t_rst).zext(32),
        go_echo.zext(32),
        (go_arep | go_areq).zext(32),
        tx_drop_inc.zext(32),
        popc(&ooo_kept),
        popc(&ooo_drop),
        popc(&dup_in),
        (go_tcp & t_fr).zext(32),
        popc(&challenge),
        popc(&rst_drop),
        go_rst.zext(32),
    ];
    for (i, (cname, _)) in COUNTERS.iter().enumerate() {
        let r = m.reg(&format!("cnt_{cname}"), 32, 0);
        m.assign(r.d, r.q.ex() + incs[i].clone());
        m.bind(u_csr, &format!("{cname}_value_i"), r.q);
    }
    m.pass_through(u_csr, "s_axil_");
    m.finish()
}
