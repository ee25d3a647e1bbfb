//! `testbench tcp-linux`: the TCP/IP engine against the Linux kernel's own TCP/IP, the second
//! independent peer of issue 18 (the first is smoltcp, `stream.rs`).
//!
//! Each case makes its own network namespace (`tbtcp-<pid>-<case>`, deleted by a drop guard
//! even when the case fails or panics; namespaces of dead runs are deleted at the next start)
//! and, from a thread inside it, a TAP device (`/dev/net/tun`, `IFF_TAP | IFF_NO_PI`) with the
//! peer's MAC and 10.0.0.2/24 (IPv6 off, so the kernel sends nothing the test did not cause).
//! The bridge writes every frame of the engine's `m_axis` to the TAP and drives every frame read
//! from it into `s_axis` (padded to 60 bytes, as a MAC delivers it); it may drop, duplicate and
//! reorder TCP frames each way (never ARP or ICMP), and records what crosses the TAP in a pcap
//! (wall-clock timestamps).
//! Everything stays inside the namespace.
//!
//! The kernel side: a `TcpListener` on 10.0.0.2:4420 and a raw ICMP socket, both made inside
//! the namespace. Every engine connection actively opens to the listener (the engine ARPs for
//! 10.0.0.2, the kernel answers); the kernel sends a seeded byte stream and checks the one the
//! engine's application sends, the engine's application does the same the other way, so each
//! byte is checked exactly once and in order on both sides. Once every connection is up the
//! kernel's neighbour entry for the engine is flushed and the kernel pings the engine (it must
//! ARP for it, the engine answers), checking each reply's identifier, sequence number and data.
//! Then FIN close, the engine or the kernel first. Checked at the end: the streams, both ends'
//! close (the engine CLOSED or in TIME-WAIT, never failed; the kernel saw EOF after exactly its
//! bytes), no RST either way (but the kernel's answer to a late copy of an engine segment once
//! its side is closed, RFC 9293 3.10.7.1: `LateRsts`), the kernel's namespace counters (no TCP, IPv4 or ICMP error: the
//! engine's checksums verified by Linux), the engine's counters against the frames the bridge
//! saw, and, unless switched off, every engine frame through `models::tcp`'s golden check.
//!
//! The simulation is paced to wall time (`mhz` cycles per microsecond at most), so the engine's
//! timers, in ticks of 1 ms, run at the kernel's speed; a slower simulation only makes them
//! slower. Needs root (network namespaces and TAP devices); without it the command fails and
//! says so.

use super::{
    cnt, creg, App, Faults, Lossy, ENGINE_IP, ENGINE_MAC, LOCAL_PORT_BASE, PEER_IP, PEER_MAC,
};
use crate::drivers::axil::{Axil, AxilConfig};
use crate::drivers::axis::{AxisSink, AxisSource};
use crate::models::tcp::{self as golden, sum16, EngineView};
use crate::pcap::Pcap;
use crate::rng::Rng;
use crate::rtl::regs::tcp_csr;
use crate::rtl::TcpTop as Top;
use crate::sim::Sim;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod bridge;
mod kernel;
mod kstats;
mod netns;

pub(super) use bridge::{Bridge, BridgeWatch};
use bridge::{LateRsts, Trail, Watch};
use kernel::{accept_all, ping, ConnEnd};
pub(super) use kstats::{counter, snmp};
use kstats::{kernel_summary, netstat};
pub(super) use netns::site;
use netns::{icmp_socket, tcp_socket};
pub(crate) use netns::{open_tap, preflight_for, remove_stale_of};
pub use netns::{preflight, remove_stale, Netns};

/// The TAP device's name inside the namespace.
pub const TAP: &str = "tbtap0";
/// Namespace names start with this, then `<pid>-<case>`.
pub const NETNS_PREFIX: &str = "tbtcp-";

/// What a run asks for.
#[derive(Clone, Debug)]
pub struct Options {
    /// Largest stream per connection and direction, bytes.
    pub max_bytes: usize,
    /// Echo requests the kernel sends per case.
    pub pings: u32,
    /// Largest drop, duplication and reordering rate per TCP frame and direction, percent.
    pub faults: u8,
    /// Simulated cycles per microsecond of wall time, at most.
    pub mhz: u32,
    /// A case not done after this long fails.
    pub timeout: Duration,
    /// Check every engine frame with `models::tcp` as well as by the kernel.
    pub golden: bool,
}

/// One case's figures.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub conns: usize,
    /// Bytes the engine's application sent (the kernel checked), and received (from the kernel).
    pub up: usize,
    pub down: usize,
    pub engine_closed_first: bool,
    /// Engine counters: segments out and in, retransmitted segments, RTO expiries.
    pub seg_out: u32,
    pub seg_in: u32,
    pub retrans: u32,
    pub rto_fires: u32,
    /// Engine counters: fast retransmissions, duplicate ACKs in, out-of-order segments kept
    /// and dropped.
    pub fast_retrans: u32,
    pub dup_acks: u32,
    pub ooo: [u32; 2],
    /// Kernel (namespace) counters: TCP segments in, out, retransmitted.
    pub k_in: u64,
    pub k_out: u64,
    pub k_retrans: u64,
    /// The kernel's smoothed RTT of its connections at the end, largest, microseconds.
    pub k_rtt_us: u32,
    /// The kernel's RTO expiries and fast retransmits (`TcpExt.TCPTimeouts`,
    /// `TcpExt.TCPFastRetrans` in the namespace's /proc/net/netstat).
    pub k_timeouts: u64,
    pub k_fast: u64,
    /// The longest time a connection's kernel-to-engine stream did not move (bytes left to
    /// deliver, none delivered), milliseconds of wall time.
    pub stall_ms: u64,
    /// Echo requests answered, and their data bytes each.
    pub pings: u32,
    pub ping_bytes: usize,
    /// ARP frames: engine requests, engine replies, kernel requests, kernel replies.
    pub arp: [u32; 4],
    /// Bridge faults on TCP frames (dropped, duplicated, reordered) toward the kernel and the
    /// engine.
    pub faults: [[u32; 3]; 2],
    /// Frames across the TAP each way (to the kernel, to the engine).
    pub frames: [u64; 2],
    pub cycles: u64,
    pub secs: f64,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} conns, engine->linux {} B, linux->engine {} B, {} closed first; engine segs \
             out {} in {}, retrans {} (RTO {}, fast {}), dup ACKs in {}, out of order kept {} dropped {}; linux segs in {} out {} retrans {} (RTO expiries {}, fast \
             retransmits {}), srtt {} us; longest receive stall {} ms; {} pings answered \
             ({} data bytes); ARP engine req {} rep {}, linux req {} rep {}; TAP frames {} to \
             linux, {} to the engine; bridge \
             drop/dup/reorder to linux {:?} to engine {:?}; {} cycles in {:.2} s",
            self.conns,
            self.up,
            self.down,
            if self.engine_closed_first {
                "engine"
            } else {
                "linux"
            },
            self.seg_out,
            self.seg_in,
            self.retrans,
            self.rto_fires,
            self.fast_retrans,
            self.dup_acks,
            self.ooo[0],
            self.ooo[1],
            self.k_in,
            self.k_out,
            self.k_retrans,
            self.k_timeouts,
            self.k_fast,
            self.k_rtt_us,
            self.stall_ms,
            self.pings,
            self.ping_bytes,
            self.arp[0],
            self.arp[1],
            self.arp[2],
            self.arp[3],
            self.frames[0],
            self.frames[1],
            self.faults[0],
            self.faults[1],
            self.cycles,
            self.secs
        )
    }
}

/// What one case does, drawn from its seed.
pub(super) struct Plan {
    up: Vec<Vec<u8>>,
    down: Vec<Vec<u8>>,
    kernel_first: bool,
    pings: Vec<usize>,
    pub(super) to_kernel: Faults,
    pub(super) to_engine: Faults,
    stall: u8,
    idle: u8,
    mss: u32,
    wscale: u32,
    key: (u32, u32),
}

impl Plan {
    /// Where `bytes` (wrong bytes the engine delivered) occur: in which stream or echo request
    /// payload, at which offset.
    fn whence(&self, bytes: &[u8], seed: u64) -> String {
        if bytes.len() < 8 {
            return "too few to say where they come from".into();
        }
        let k = &bytes[..8];
        let find = |h: &[u8]| h.windows(8).position(|w| w == k);
        let mut found = Vec::new();
        for (c, d) in self.down.iter().enumerate() {
            if let Some(i) = find(d) {
                found.push(format!("kernel stream {c} offset {i}"));
            }
        }
        for (c, d) in self.up.iter().enumerate() {
            if let Some(i) = find(d) {
                found.push(format!("engine stream {c} offset {i}"));
            }
        }
        let mut rng = Rng::new(seed ^ 7);
        for (j, &len) in self.pings.iter().enumerate() {
            let p: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            if let Some(i) = find(&p) {
                found.push(format!("echo request {j} data offset {i}"));
            }
        }
        if found.is_empty() {
            "found in no stream and no echo request".into()
        } else {
            format!("found in {}", found.join(", "))
        }
    }

    /// Case `seed`'s plan for `n` connections (`clean`: no bridge faults).
    pub(super) fn draw(seed: u64, n: usize, opt: &Options, clean: bool) -> Plan {
        let mut r = Rng::new(seed);
        let stream = |r: &mut Rng| -> Vec<u8> {
            let len = r.below(opt.max_bytes as u64 + 1) as usize;
            (0..len).map(|_| r.next_u64() as u8).collect()
        };
        let up = (0..n).map(|_| stream(&mut r)).collect();
        let down = (0..n).map(|_| stream(&mut r)).collect();
        let faults = |r: &mut Rng| {
            let mut rate = || {
                if clean {
                    0
                } else {
                    r.below(u64::from(opt.faults) + 1) as u8
                }
            };
            Faults {
                drop: rate(),
                dup: rate(),
                reorder: rate(),
                corrupt: 0,
                truncate: 0,
            }
        };
        let to_kernel = faults(&mut r);
        let to_engine = faults(&mut r);
        Plan {
            up,
            down,
            kernel_first: r.chance(50),
            // The engine answers ICMP messages of up to 512 bytes (`tcp.echo_bytes`).
            pings: (0..opt.pings).map(|_| r.below(505) as usize).collect(),
            to_kernel,
            to_engine,
            stall: r.below(30) as u8,
            idle: r.below(30) as u8,
            mss: [536, 1000, 1460][r.below(3) as usize],
            wscale: r.below(5) as u32,
            key: (r.next_u64() as u32, r.next_u64() as u32),
        }
    }
}

/// The TCP engine's CSRs for a case against the kernel (`n` connections to 10.0.0.2:4420, not
/// opened yet): addresses, ticks of 1 ms at `tick` cycles, the RTO bounds and retry limits,
/// the plan's ISN key, MSS and window shift.
pub(super) fn program<C: crate::drivers::Clocked + ?Sized>(
    bus: &mut crate::drivers::axil::Mmio<'_, C>,
    n: usize,
    tick: u32,
    plan: &Plan,
) {
    bus.write32(
        tcp_csr::MAC_HI,
        u32::from(u16::from_be_bytes([ENGINE_MAC[0], ENGINE_MAC[1]])),
    );
    bus.write32(
        tcp_csr::MAC_LO,
        u32::from_be_bytes([ENGINE_MAC[2], ENGINE_MAC[3], ENGINE_MAC[4], ENGINE_MAC[5]]),
    );
    bus.write32(tcp_csr::IP, u32::from_be_bytes(ENGINE_IP));
    bus.write32(tcp_csr::NETMASK, 0xffff_ff00);
    bus.write32(tcp_csr::GATEWAY, u32::from_be_bytes([10, 0, 0, 254]));
    // Ticks of 1 ms at the paced clock.
    bus.write32(tcp_csr::TICK, tick);
    bus.write32(tcp_csr::RTO_MIN, 30);
    bus.write32(tcp_csr::RTO_MAX, 2000);
    bus.write32(tcp_csr::RTO_INIT, 250);
    bus.write32(tcp_csr::RETRIES, 5 << 8 | 15);
    bus.write32(tcp_csr::ARP_RETRY, 200);
    bus.write32(tcp_csr::TIME_WAIT, 100);
    bus.write32(tcp_csr::ISN_KEY0, plan.key.0);
    bus.write32(tcp_csr::ISN_KEY1, plan.key.1);
    bus.write32(tcp_csr::MSS, plan.mss);
    bus.write32(tcp_csr::WSCALE, plan.wscale);
    for c in 0..n {
        bus.write32(creg(c, 0), u32::from_be_bytes(PEER_IP));
        bus.write32(creg(c, 4), (LOCAL_PORT_BASE + c as u32) << 16 | 4420);
    }
}

/// Runs case `case` with `seed`; frames crossing the TAP go to `pcap`.
pub fn run_case(
    case: u64,
    seed: u64,
    opt: &Options,
    mut pcap: Option<&mut Pcap>,
) -> Result<Report, String> {
    let t0 = Instant::now();
    let deadline = t0 + opt.timeout;
    let (ns, tap_fd, listener) = site(case)?;
    let icmp = ns.enter(icmp_socket)??;
    let refuse = ns.enter(|| tcp_socket(12))??;

    let mut sim = Sim::<Top>::new();
    let n = sim.signal("up_o").width() as usize;
    let plan = Plan::draw(seed, n, opt, case == 0);
    let src = sim.add(AxisSource::new(&sim, "s_axis", seed ^ 1, 0));
    let sink = sim.add(AxisSink::new(&sim, "m_axis", seed ^ 2, 5));
    let app = sim.add(App::new(&sim, seed ^ 3, n));
    let axil = Axil::attach(
        &mut sim,
        "s_axil",
        AxilConfig {
            seed: seed ^ 4,
            ..AxilConfig::default()
        },
    );
    sim.reset(3);
    let tick = opt.mhz * 1000;
    program(&mut axil.mmio(&mut sim), n, tick, &plan);
    let mut view = EngineView::new(n, plan.mss as u16, plan.wscale as u8, plan.key);
    view.rx_bytes = super::rx_bytes(&axil, &mut sim);
    {
        let mut a = app.borrow_mut();
        a.stall = plan.stall;
        a.idle = plan.idle;
        for c in 0..n {
            a.to_send[c] = plan.up[c].iter().copied().collect();
            view.conns[c].data = plan.up[c].clone();
        }
    }

    // The kernel's side.
    let (res_tx, res_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel();
    {
        let (down, up) = (Arc::new(plan.down.clone()), Arc::new(plan.up.clone()));
        let (stop, kf) = (ns.stop.clone(), plan.kernel_first);
        std::thread::spawn(move || accept_all(listener, down, up, kf, deadline, stop, res_tx));
    }
    let ping_thread = {
        let (stop, sizes) = (ns.stop.clone(), plan.pings.clone());
        let id = 0x7a00 | (case as u16 & 0xff);
        std::thread::spawn(move || ping(icmp, refuse, id, sizes, seed ^ 7, go_rx, deadline, stop))
    };

    for c in 0..n {
        axil.mmio(&mut sim).write32(creg(c, 8), 1);
    }
    let mut bridge = Bridge::new(
        tap_fd,
        seed,
        (plan.to_kernel.clone(), plan.to_engine.clone()),
        opt.mhz,
        sim.cycle(),
    );
    let mut report = Report {
        conns: n,
        engine_closed_first: !plan.kernel_first,
        ..Report::default()
    };
    let mut ends: Vec<Option<ConnEnd>> = vec![None; n];
    let mut closing = vec![false; n];
    let mut pinging = false;
    let mut ping_result = None;
    let mut ping_thread = Some(ping_thread);
    let mut quiet_from: Option<u64> = None;
    let start_cycle = sim.cycle();
    let mut was_up = vec![false; n];
    // Per connection: bytes delivered at the last look, and when they last moved.
    let mut progress: Vec<(usize, Option<Instant>)> = vec![(0, None); n];
    // CSR accesses run the model too, so the periodic work goes by due cycles.
    let mut next_ctl = 0u64;
    let mut trail = Trail::new(n);
    let mut late = LateRsts::new(n);
    let state = |sim: &mut Sim<Top>, c: usize| axil.mmio(sim).read32(creg(c, 12));
    loop {
        sim.step();
        let cycle = sim.cycle();
        bridge.pump(
            cycle,
            (&sink, &src),
            pcap.as_deref_mut(),
            &mut Watch {
                golden: opt.golden.then_some((&*app, &mut view)),
                late: &mut late,
                trail: &mut trail,
            },
        )?;
        if let Some(v) = sink.borrow().violations.first() {
            return Err(format!("m_axis: {v}"));
        }
        if let Some(v) = app.borrow().violations.first() {
            return Err(format!("byte streams: {v}"));
        }
        if cycle < next_ctl {
            continue;
        }
        next_ctl = cycle + 2048;
        // Control, every 2048 cycles.
        {
            let a = app.borrow();
            let now = Instant::now();
            for c in 0..n {
                let got = a.got[c].len();
                if was_up[c] && got < plan.down[c].len() {
                    match progress[c] {
                        (g, Some(t)) if g == got => {
                            let ms = now.duration_since(t).as_millis() as u64;
                            report.stall_ms = report.stall_ms.max(ms);
                        }
                        _ => progress[c] = (got, Some(now)),
                    }
                }
            }
            for c in 0..n {
                if !plan.down[c].starts_with(&a.got[c]) {
                    let at = a.got[c]
                        .iter()
                        .zip(&plan.down[c])
                        .position(|(x, y)| x != y)
                        .unwrap_or(plan.down[c].len());
                    let wrong = &a.got[c][at..a.got[c].len().min(at + 16)];
                    return Err(format!(
                        "connection {c}: the engine delivered {} bytes, wrong from stream offset \
                         {at}: {wrong:02x?}, want {:02x?} ({}); the kernel's last segments as the \
                         engine got them (cycle, offset, length, flags): {}",
                        a.got[c].len(),
                        &plan.down[c][at..plan.down[c].len().min(at + 16)],
                        plan.whence(wrong, seed),
                        trail.show(c)
                    ));
                }
            }
        }
        while let Ok((c, r)) = res_rx.try_recv() {
            match r {
                Ok(e) => ends[c] = Some(e),
                Err(e) => {
                    let regs: Vec<u32> = [12, 16, 20, 24, 28, 32, 36]
                        .iter()
                        .map(|&o| axil.mmio(&mut sim).read32(creg(c, o)))
                        .collect();
                    let cn: Vec<u32> = (0..golden::COUNTERS)
                        .map(|i| axil.mmio(&mut sim).read32(tcp_csr::SEG_IN + 4 * i))
                        .collect();
                    let a = app.borrow();
                    return Err(format!(
                        "connection {c}, kernel side: {e}; engine (state, snd_una, snd_nxt, \
                         rcv_nxt, rtt, iss, snd_wnd) {regs:x?}, delivered {} of {} bytes, took \
                         {} of {}; engine counters {cn:?}; the kernel's last segments as the \
                         engine got them (cycle, offset, length, flags): {}",
                        a.got[c].len(),
                        plan.down[c].len(),
                        a.sent[c],
                        plan.up[c].len(),
                        trail.show(c)
                    ));
                }
            }
        }
        let states: Vec<u32> = (0..n).map(|c| state(&mut sim, c)).collect();
        if let Some(c) = states.iter().position(|s| s & 0x10 != 0) {
            let cn: Vec<u32> = (0..golden::COUNTERS)
                .map(|i| axil.mmio(&mut sim).read32(tcp_csr::SEG_IN + 4 * i))
                .collect();
            return Err(format!(
                "connection {c} failed (state CSR {:#x}, reason {}); engine counters {cn:?}; \
                 kernel {}",
                states[c],
                (states[c] >> 8) & 3,
                kernel_summary(&ns)
            ));
        }
        for (c, s) in states.iter().enumerate() {
            was_up[c] |= (4..=10).contains(&(s & 0xf));
        }
        if !pinging && was_up.iter().all(|&u| u) {
            // Every connection is up: the kernel forgets the engine's MAC, so its pings (and
            // its next segments) need an ARP request the engine must answer.
            ns.ip(&["neigh", "flush", "dev", TAP])?;
            pinging = true;
            let _ = go_tx.send(());
        }
        // Close: the engine first once its streams are done, or after the kernel's FIN (in
        // CLOSE-WAIT); either way only once the application has handed over every byte.
        let close: Vec<usize> = {
            let a = app.borrow();
            (0..n)
                .filter(|&c| {
                    let now = if plan.kernel_first {
                        states[c] & 0xf == 9
                    } else {
                        a.got[c].len() == plan.down[c].len() && states[c] & 0xf == 4
                    };
                    now && a.sent[c] == plan.up[c].len() && !closing[c]
                })
                .collect()
        };
        for c in close {
            closing[c] = true;
            view.conns[c].closing = true;
            axil.mmio(&mut sim).write32(creg(c, 8), 2);
        }
        if ping_thread.as_ref().is_some_and(|t| t.is_finished()) {
            let r = ping_thread
                .take()
                .expect("thread")
                .join()
                .map_err(|_| "the ping thread panicked".to_string())?;
            ping_result = Some(r.map_err(|e| format!("ping from the kernel: {e}"))?);
        }
        let engine_done = states.iter().all(|s| s & 0xf == 0 || s & 0xf == 8);
        let done = engine_done && ends.iter().all(Option::is_some) && ping_result.is_some();
        if done && quiet_from.is_none() {
            quiet_from = Some(cycle);
        }
        // A quiet 20 ms after the end, so the counters settle and late frames show.
        if quiet_from.is_some_and(|q| cycle - q > u64::from(tick) * 20) {
            break;
        }
        if Instant::now() > deadline {
            let cn: Vec<u32> = (0..golden::COUNTERS)
                .map(|i| axil.mmio(&mut sim).read32(tcp_csr::SEG_IN + 4 * i))
                .collect();
            let kernel = kernel_summary(&ns);
            let a = app.borrow();
            return Err(format!(
                "not done after {:?}: engine states {states:x?}, engine delivered {:?} of {:?} \
                 and took {:?} of {:?} bytes, kernel ends {ends:?}, ping {ping_result:?}, \
                 closing {closing:?}; engine counters {cn:?}; kernel {kernel}",
                opt.timeout,
                a.got.iter().map(Vec::len).collect::<Vec<_>>(),
                plan.down.iter().map(Vec::len).collect::<Vec<_>>(),
                a.sent,
                plan.up.iter().map(Vec::len).collect::<Vec<_>>(),
            ));
        }
    }
    report.cycles = sim.cycle() - start_cycle;
    report.secs = t0.elapsed().as_secs_f64();
    {
        let a = app.borrow();
        for c in 0..n {
            if a.got[c] != plan.down[c] {
                return Err(format!(
                    "connection {c}: the engine delivered {} of the kernel's {} bytes",
                    a.got[c].len(),
                    plan.down[c].len()
                ));
            }
        }
        report.up = plan.up.iter().map(Vec::len).sum();
        report.down = plan.down.iter().map(Vec::len).sum();
    }
    report.pings = ping_result.unwrap_or(0);
    report.ping_bytes = plan.pings.iter().sum::<usize>();
    report.faults = [bridge.to_kernel.counts, bridge.to_engine.counts].map(|c| [c[0], c[1], c[2]]);
    report.frames = bridge.frames;
    report.arp = bridge.arp;
    let seen = bridge.seen;
    let cn: Vec<u32> = (0..golden::COUNTERS)
        .map(|i| axil.mmio(&mut sim).read32(tcp_csr::SEG_IN + 4 * i))
        .collect();
    report.seg_out = cn[cnt::SEG_OUT];
    report.seg_in = cn[cnt::SEG_IN];
    report.retrans = cn[cnt::RETRANS];
    report.rto_fires = cn[cnt::RTO_FIRES];
    report.fast_retrans = cn[cnt::FAST_RETRANS];
    report.dup_acks = cn[cnt::DUP_ACKS];
    report.ooo = [cn[cnt::OOO_KEPT], cn[cnt::OOO_DROPPED]];
    let k = ns.enter(snmp)??;
    report.k_in = counter(&k, "Tcp.InSegs");
    report.k_out = counter(&k, "Tcp.OutSegs");
    report.k_retrans = counter(&k, "Tcp.RetransSegs");
    let kx = ns.enter(netstat)??;
    report.k_timeouts = counter(&kx, "TcpExt.TCPTimeouts");
    report.k_fast = counter(&kx, "TcpExt.TCPFastRetrans");

    // The checks at the end.
    let mut bad = Vec::new();
    if cn[cnt::RST_IN] > late.allowed {
        bad.push(format!(
            "engine counter rst_in is {}, but the kernel sent only {} RSTs for connections it \
             had closed (RFC 9293 3.10.7.1, to a late copy of an engine segment)",
            cn[cnt::RST_IN],
            late.allowed
        ));
    }
    if cn[cnt::RST_CLOSED] == 0 || (opt.golden && cn[cnt::RST_CLOSED] != view.closed_rsts) {
        bad.push(format!(
            "engine counter rst_closed is {}, but it sent {} RSTs for segments to no connection \
             (at least one: the kernel's connection to port 4420)",
            cn[cnt::RST_CLOSED],
            view.closed_rsts
        ));
    }
    if counter(&k, "Tcp.AttemptFails") != 1 {
        bad.push(format!(
            "kernel counter Tcp.AttemptFails is {}, want 1 (its connection the engine refused)",
            counter(&k, "Tcp.AttemptFails")
        ));
    }
    if !late.other.is_empty() {
        bad.push(format!(
            "the kernel sent RSTs (connection, seq, flags) {:x?} while its connection was not \
             closed",
            late.other
        ));
    }
    for (i, name) in [
        (cnt::RST_OUT, "rst_out"),
        (cnt::TX_DROP, "tx_drop"),
        (cnt::DROP_CSUM, "drop_csum"),
        (cnt::DROP_MALFORMED, "drop_malformed"),
    ] {
        if cn[i] != 0 {
            bad.push(format!("engine counter {name} is {}, want 0", cn[i]));
        }
    }
    if cn[cnt::ECHO_OUT] != plan.pings.len() as u32 {
        bad.push(format!(
            "echo_out {}, but the kernel sent {} echo requests",
            cn[cnt::ECHO_OUT],
            plan.pings.len()
        ));
    }
    if cn[cnt::ARP_OUT] != report.arp[0] + report.arp[1] {
        bad.push(format!(
            "arp_out {}, but the engine put {} ARP frames on the TAP",
            cn[cnt::ARP_OUT],
            report.arp[0] + report.arp[1]
        ));
    }
    if report.arp[0] == 0 || report.arp[3] == 0 {
        bad.push(format!(
            "the engine resolved the kernel's address without an ARP request and reply ({:?})",
            report.arp
        ));
    }
    if !plan.pings.is_empty() && (report.arp[2] == 0 || report.arp[1] == 0) {
        bad.push(format!(
            "after its neighbour flush the kernel reached the engine without an ARP request \
             the engine answered ({:?})",
            report.arp
        ));
    }
    if cn[cnt::SEG_OUT] as usize > seen {
        bad.push(format!(
            "seg_out {} is more than the {seen} frames the engine sent",
            cn[cnt::SEG_OUT]
        ));
    }
    if opt.golden && cn[cnt::SEG_OUT] != view.tcp {
        bad.push(format!(
            "seg_out {}, but the engine sent {} TCP segments",
            cn[cnt::SEG_OUT],
            view.tcp
        ));
    }
    if counter(&k, "Tcp.OutRsts") != u64::from(late.allowed) {
        bad.push(format!(
            "kernel counter Tcp.OutRsts is {}, but {} RSTs were for connections it had closed",
            counter(&k, "Tcp.OutRsts"),
            late.allowed
        ));
    }
    for name in [
        "Tcp.InErrs",
        "Tcp.InCsumErrors",
        "Tcp.EstabResets",
        "Ip.InHdrErrors",
        "Ip.InAddrErrors",
        "Icmp.InErrors",
        "Icmp.InCsumErrors",
    ] {
        let v = counter(&k, name);
        if v != 0 {
            bad.push(format!("kernel counter {name} is {v}, want 0"));
        }
    }
    if counter(&k, "Icmp.InEchoReps") != plan.pings.len() as u64 {
        bad.push(format!(
            "the kernel counted {} echo replies, want {}",
            counter(&k, "Icmp.InEchoReps"),
            plan.pings.len()
        ));
    }
    if !bad.is_empty() {
        return Err(format!(
            "{}; engine counters {cn:?}; {report}",
            bad.join("; ")
        ));
    }
    report.k_rtt_us = ends.iter().flatten().map(|e| e.rtt_us).max().unwrap_or(0);
    drop(ns);
    Ok(report)
}
