//! Suite `tcp`: the TCP/IP engine (`tcp_*`, hdl-gen/src/tcp/mod.rs) against smoltcp, an
//! independent TCP/IP stack, in process. The engine's Ethernet port and smoltcp's interface
//! are joined by a lossy link (per direction: loss, duplication, reordering, corruption,
//! truncation, as the `rdma` suite's link); the engine's byte streams are driven by an
//! application model with random beat sizes and random backpressure. Every frame the engine
//! sends is checked on its own by `models::tcp` (checksums, addresses, sequence numbers inside
//! what the application gave, payload bytes equal to the stream's, ACK numbers never ahead of
//! what the peer sent, the SYN's options and the RFC 6528 ISN).
//!
//! Properties: `tcp_stream` (`stream.rs`: every connection opens to a smoltcp listener on
//! 4420, random byte streams both ways under faults, every byte delivered exactly once and in
//! order, then FIN close from either side, counters checked) and `tcp_ping` (`ping.rs`: ICMP
//! echo from smoltcp answered byte for byte, too-large and corrupted requests and frames for
//! other hosts dropped and counted).
//!
//! `linux/` is not a property: `testbench tcp-linux` runs the engine against the Linux
//! kernel's TCP/IP over a TAP device in a network namespace of its own, in real time (so its
//! cases do not replay or shrink as proptest cases do).

pub mod linux;
pub mod linux_nvme;
pub mod nvme;
pub mod ping;
pub mod reopen;
pub mod rules;
pub mod stream;

use crate::drivers::axil::{Axil, AxilConfig};
use crate::drivers::axis::{AxisSink, AxisSource};
use crate::models::tcp::{self as golden, EngineView};
use crate::rng::Rng;
use crate::rtl::regs::tcp_csr;
use crate::rtl::TcpTop as Top;
use crate::sim::{Component, Dut, Signal, Sim};
use smoltcp::iface::{Config, Interface, SocketSet};
use smoltcp::phy::{self, Device, DeviceCapabilities, Medium};
use smoltcp::time::Instant;
use smoltcp::wire::{EthernetAddress, HardwareAddress, IpAddress, IpCidr};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::path::Path;
use std::rc::Rc;

/// smoltcp time per engine cycle, microseconds (so smoltcp's 1 s minimum RTO is 20 000 cycles).
pub const US_PER_CYCLE: i64 = 50;
/// The engine's MAC and IPv4 address in the suite.
pub const ENGINE_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x01];
pub const ENGINE_IP: [u8; 4] = [10, 0, 0, 1];
/// smoltcp's.
pub const PEER_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x02];
pub const PEER_IP: [u8; 4] = [10, 0, 0, 2];
/// The engine's local port of connection `c` is `LOCAL_PORT_BASE + c` (firmware programs it).
pub const LOCAL_PORT_BASE: u32 = 50000;

/// Fault rates of one direction of the link, percent per frame.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    pub drop: u8,
    pub dup: u8,
    pub reorder: u8,
    pub corrupt: u8,
    pub truncate: u8,
}

/// One direction of the link: frames in, faults applied, frames out after a small delay.
pub struct Lossy {
    rng: Rng,
    faults: Faults,
    /// Frames on the way: (cycle it arrives, bytes).
    queue: VecDeque<(u64, Vec<u8>)>,
    /// A frame held back to be delivered after the next one (reordering).
    held: Option<Vec<u8>>,
    /// What happened: dropped, duplicated, reordered, corrupted, truncated.
    pub counts: [u32; 5],
    /// Loss finer than `faults.drop`, frames per million (the benchmark's 0.1 % and 1 %; 0 in
    /// the suite's cases, which then draw exactly as before). Counted as dropped.
    pub drop_ppm: u32,
    /// A test's own choice of frames to lose (true: lost, counted as dropped), before the faults.
    pub lose: Option<Lose>,
    /// The bytes a short frame is padded with (its own stream, so the faults draw as before).
    pad: Rng,
}

impl Lossy {
    pub fn new(seed: u64, faults: Faults) -> Lossy {
        Lossy {
            rng: Rng::new(seed),
            faults,
            queue: VecDeque::new(),
            held: None,
            counts: [0; 5],
            drop_ppm: 0,
            lose: None,
            pad: Rng::new(seed ^ 0x9ad),
        }
    }

    /// Frame `f` enters the link at `now`.
    pub fn push(&mut self, now: u64, mut f: Vec<u8>) {
        let fa = self.faults.clone();
        let chosen = self.lose.as_mut().is_some_and(|l| l(&f));
        let ppm = self.drop_ppm > 0 && self.rng.below(1_000_000) < u64::from(self.drop_ppm);
        if chosen || ppm || self.rng.chance(fa.drop) {
            self.counts[0] += 1;
            return;
        }
        // A MAC pads a frame to 60 bytes; IEEE 802.3 leaves the pad's bytes open, so they are
        // random here: a receiver must go by the IPv4 total length, never by the frame's.
        while f.len() < 60 {
            f.push(self.pad.next_u64() as u8);
        }
        let ipv4 = f.len() > 34 && f[12..14] == [8, 0];
        if self.rng.chance(fa.corrupt) && ipv4 {
            // IPv4 frames past the Ethernet header, so the frame still reaches its host and is
            // caught by a checksum there (or is a padding byte, which nothing reads). ARP has
            // no checksum: on a real link the MAC's FCS is what catches its corruption.
            let at = 14 + self.rng.below(f.len() as u64 - 14) as usize;
            f[at] ^= 1 << self.rng.below(8);
            self.counts[3] += 1;
        }
        if self.rng.chance(fa.truncate) && f.len() > 20 {
            let keep = 14 + self.rng.below(f.len() as u64 - 20) as usize;
            f.truncate(keep);
            self.counts[4] += 1;
        }
        let delay = 20 + self.rng.below(40);
        if self.rng.chance(fa.dup) {
            self.counts[1] += 1;
            self.queue.push_back((now + delay, f.clone()));
        }
        if self.held.is_none() && self.rng.chance(fa.reorder) {
            self.counts[2] += 1;
            self.held = Some(f);
            return;
        }
        self.queue.push_back((now + delay, f));
        if let Some(h) = self.held.take() {
            self.queue.push_back((now + delay + 1, h));
        }
    }

    /// Frames due at `now`; a held frame is let go when nothing else comes for a while.
    pub fn pop(&mut self, now: u64) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        while self.queue.front().is_some_and(|(t, _)| *t <= now) {
            out.push(self.queue.pop_front().expect("front").1);
        }
        if self.queue.is_empty() && self.rng.chance(1) {
            if let Some(h) = self.held.take() {
                out.push(h);
            }
        }
        out
    }

    /// No more faults from now on (frames on the way keep what happened to them).
    pub fn calm(&mut self) {
        self.faults = Faults::default();
    }

    /// Nothing on the way.
    pub fn idle(&self) -> bool {
        self.queue.is_empty() && self.held.is_none()
    }
}

/// A TCP frame's (source port, destination port, payload bytes), if `f` is one (IPv4 without
/// options or with them, as the header says).
pub fn tcp_ports(f: &[u8]) -> Option<(u16, u16, usize)> {
    if f.len() < 34 || f[12..14] != [8, 0] || f[23] != 6 {
        return None;
    }
    let ihl = usize::from(f[14] & 15) * 4;
    let total = usize::from(u16::from_be_bytes([f[16], f[17]]));
    let t = 14 + ihl;
    if f.len() < t + 20 || total < ihl + 20 {
        return None;
    }
    let doff = usize::from(f[t + 12] >> 4) * 4;
    Some((
        u16::from_be_bytes([f[t], f[t + 1]]),
        u16::from_be_bytes([f[t + 2], f[t + 3]]),
        total.saturating_sub(ihl + doff),
    ))
}

/// Kills one engine connection at a chosen point of its traffic: once the engine has sent
/// `after` segments carrying data on local port `port`, `active` rises; with `drop`, from that
/// segment on every frame of that connection, both ways, is lost (the engine's retry limit
/// ends it), else the test acts on `active` itself (smoltcp resets the connection).
#[derive(Clone, Debug)]
pub struct Cut {
    pub port: u16,
    pub after: u32,
    pub drop: bool,
    pub seen: u32,
    pub active: bool,
}

/// smoltcp's device: frames from the link in, frames to the link out.
#[derive(Default)]
pub struct Dev {
    pub rx: VecDeque<Vec<u8>>,
    pub tx: Vec<Vec<u8>>,
    /// Largest frame, Ethernet header included (1514 when unset); smoltcp's MSS follows it.
    pub mtu: Option<usize>,
}

pub struct RxTok(Vec<u8>);
pub struct TxTok<'a>(&'a mut Vec<Vec<u8>>);

impl phy::RxToken for RxTok {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(&self.0)
    }
}

impl phy::TxToken for TxTok<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let mut b = vec![0u8; len];
        let r = f(&mut b);
        self.0.push(b);
        r
    }
}

impl Device for Dev {
    type RxToken<'a> = RxTok;
    type TxToken<'a> = TxTok<'a>;

    fn receive(&mut self, _t: Instant) -> Option<(RxTok, TxTok<'_>)> {
        let f = self.rx.pop_front()?;
        Some((RxTok(f), TxTok(&mut self.tx)))
    }

    fn transmit(&mut self, _t: Instant) -> Option<TxTok<'_>> {
        Some(TxTok(&mut self.tx))
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut c = DeviceCapabilities::default();
        c.medium = Medium::Ethernet;
        c.max_transmission_unit = self.mtu.unwrap_or(1514);
        c
    }
}

/// The NVMe/TCP side of the engine: writes each connection's stream into `tx` as credit
/// allows (random beat sizes, random idle cycles) and takes `rx` with random `rx_space_i`.
pub struct App {
    tx_valid: Signal,
    tx_ready: Signal,
    tx_conn: Signal,
    tx_data: Signal,
    tx_keep: Signal,
    tx_credit: Signal,
    up: Signal,
    rx_valid: Signal,
    rx_ready: Signal,
    rx_conn: Signal,
    rx_data: Signal,
    rx_keep: Signal,
    rx_space: Signal,
    rng: Rng,
    lanes: usize,
    /// Per connection: the bytes still to write.
    pub to_send: Vec<VecDeque<u8>>,
    /// Per connection: bytes the engine took.
    pub sent: Vec<usize>,
    /// Per connection: bytes received.
    pub got: Vec<Vec<u8>>,
    beat: Option<(usize, Vec<u8>)>,
    space: u64,
    /// Percent of cycles a connection has no `rx_space`.
    pub stall: u8,
    /// Percent of cycles no beat is offered.
    pub idle: u8,
    /// Every beat full (as many bytes as lanes, while there are): the benchmark's steady source.
    pub full_beats: bool,
    pub violations: Vec<String>,
}

impl App {
    pub fn new<M: Dut>(sim: &Sim<M>, seed: u64, n: usize) -> App {
        let s = |x: &str| sim.signal(x);
        App {
            tx_valid: s("tx_valid_i"),
            tx_ready: s("tx_ready_o"),
            tx_conn: s("tx_conn_i"),
            tx_data: s("tx_data_i"),
            tx_keep: s("tx_keep_i"),
            tx_credit: s("tx_credit_o"),
            up: s("up_o"),
            rx_valid: s("rx_valid_o"),
            rx_ready: s("rx_ready_i"),
            rx_conn: s("rx_conn_o"),
            rx_data: s("rx_data_o"),
            rx_keep: s("rx_keep_o"),
            rx_space: s("rx_space_i"),
            rng: Rng::new(seed),
            lanes: (sim.signal("tx_keep_i").width()) as usize,
            to_send: vec![VecDeque::new(); n],
            sent: vec![0; n],
            got: vec![Vec::new(); n],
            beat: None,
            space: 0,
            stall: 0,
            idle: 0,
            full_beats: false,
            violations: Vec::new(),
        }
    }
}

fn bytes_of(words: &[u32], n: usize) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).take(n).collect()
}

impl Component for App {
    fn sample(&mut self, cycle: u64) {
        // A beat offered under credit waits on the bus until taken: its connection's credit
        // must stay up meanwhile while the connection is open (else the engine drops it).
        if let Some((c, _)) = &self.beat {
            let c = *c;
            if (self.tx_credit.get() >> c) & 1 == 0 && (self.up.get() >> c) & 1 == 1 {
                self.violations.push(format!(
                    "cycle {cycle}: tx_credit of connection {c} fell while its beat waited on the bus (the connection still up)"
                ));
            }
        }
        if self.beat.is_some() && self.tx_ready.get() == 1 {
            let (c, b) = self.beat.take().expect("beat");
            self.sent[c] += b.len();
        }
        if self.rx_valid.get() == 1 && self.rx_ready.get() == 1 {
            let c = self.rx_conn.get() as usize;
            let keep = self.rx_keep.get();
            let k = keep.trailing_ones() as usize;
            if keep >> k != 0 || k == 0 {
                self.violations.push(format!(
                    "rx beat with keep {keep:#x}: not a run of ones from lane 0"
                ));
            }
            if (self.space >> c) & 1 == 0 {
                self.violations
                    .push(format!("rx beat of connection {c} taken without rx_space"));
            }
            let data = bytes_of(&self.rx_data.get_words(), k);
            self.got[c].extend(data);
        }
    }

    fn drive(&mut self, _cycle: u64) {
        let n = self.to_send.len();
        if self.beat.is_none() && !self.rng.chance(self.idle) {
            let credit = self.tx_credit.get();
            let start = self.rng.below(n as u64) as usize;
            for j in 0..n {
                let c = (start + j) % n;
                if (credit >> c) & 1 == 1 && !self.to_send[c].is_empty() {
                    let k = if self.full_beats {
                        self.lanes
                    } else {
                        1 + self.rng.below(self.lanes as u64) as usize
                    };
                    let k = k.min(self.to_send[c].len());
                    let b: Vec<u8> = self.to_send[c].drain(..k).collect();
                    self.beat = Some((c, b));
                    break;
                }
            }
        }
        match &self.beat {
            Some((c, b)) => {
                self.tx_valid.set(1);
                self.tx_conn.set(*c as u64);
                let mut words = vec![0u32; self.lanes.div_ceil(4)];
                for (i, x) in b.iter().enumerate() {
                    words[i / 4] |= u32::from(*x) << (8 * (i % 4));
                }
                self.tx_data.set_words(&words);
                self.tx_keep.set((1u64 << b.len()) - 1);
            }
            None => self.tx_valid.set(0),
        }
        let mut space = 0u64;
        for c in 0..n {
            if !self.rng.chance(self.stall) {
                space |= 1 << c;
            }
        }
        self.space = space;
        self.rx_space.set(space);
        let c = self.rx_conn.get();
        self.rx_ready.set((space >> c) & 1);
    }
}

/// A test's own choice of frames a [`Lossy`] loses (true: lost).
pub type Lose = Box<dyn FnMut(&[u8]) -> bool>;

/// A test's own change to smoltcp's frames.
pub type Mangle = Box<dyn FnMut(&mut Vec<u8>)>;

/// The engine, its drivers, the link and smoltcp. `M` is the engine alone (`tcp_*`, the
/// default: its byte streams driven by an [`App`], every frame checked by `models::tcp`) or the
/// NVMe/TCP engine on it (`nvme_tcp_ip_*`: the byte streams are inside, no `App`, the frames'
/// payload unknown to the golden check, which is skipped).
pub struct Env<M: Dut = Top> {
    pub sim: Sim<M>,
    /// The TCP engine's CSRs (`tcp_csr`).
    pub axil: Axil,
    pub src: Rc<RefCell<AxisSource>>,
    pub sink: Rc<RefCell<AxisSink>>,
    app: Option<Rc<RefCell<App>>>,
    pub to_peer: Lossy,
    pub to_engine: Lossy,
    pub dev: Dev,
    pub iface: Interface,
    pub sockets: SocketSet<'static>,
    pub view: EngineView,
    seen_tx: usize,
    next_poll: u64,
    /// Every frame the engine sent (for the counters).
    pub engine_frames: Vec<Vec<u8>>,
    pub n: usize,
    /// Changes smoltcp's frames before the link (a test's own corruption).
    pub mangle: Option<Mangle>,
    /// A connection to kill (see [`Cut`]).
    pub cut: Option<Cut>,
}

/// The engine's receive buffer per connection, bytes (its `params` CSR).
pub fn rx_bytes<M: Dut>(axil: &Axil, sim: &mut Sim<M>) -> u32 {
    1 << ((axil.mmio(sim).read32(tcp_csr::PARAMS) >> 8) & 31)
}

/// Connection `c`'s register at `off`.
pub fn creg(c: usize, off: u32) -> u32 {
    tcp_csr::C0_REMOTE_IP + 0x40 * c as u32 + off
}

/// smoltcp's interface as the peer (`PEER_MAC`, `PEER_IP`/24) on a fresh [`Dev`].
pub fn peer_iface(seed: u64) -> (Dev, Interface) {
    let mut dev = Dev::default();
    let iface = iface(&mut dev, PEER_MAC, PEER_IP, seed);
    (dev, iface)
}

/// A smoltcp interface at `mac`, `ip`/24 on `dev` (whose `mtu` it keeps).
pub fn iface(dev: &mut Dev, mac: [u8; 6], ip: [u8; 4], seed: u64) -> Interface {
    let mut cfg = Config::new(HardwareAddress::Ethernet(EthernetAddress(mac)));
    cfg.random_seed = seed;
    let mut iface = Interface::new(cfg, dev, Instant::ZERO);
    iface.update_ip_addrs(|a| {
        a.push(IpCidr::new(IpAddress::v4(ip[0], ip[1], ip[2], ip[3]), 24))
            .expect("one address");
    });
    iface
}

/// smoltcp's turn at `cycle` (its clock at `US_PER_CYCLE` µs a cycle): a poll, the
/// application `app`, a poll again. Returns the cycle of its next turn if no frame arrives
/// before (at most 64 cycles on).
pub fn turn(
    iface: &mut Interface,
    dev: &mut Dev,
    sockets: &mut SocketSet<'static>,
    cycle: u64,
    app: &mut dyn FnMut(&mut SocketSet<'static>),
) -> u64 {
    let now = Instant::from_micros(cycle as i64 * US_PER_CYCLE);
    iface.poll(now, dev, sockets);
    app(sockets);
    iface.poll(now, dev, sockets);
    let delay = iface.poll_delay(now, sockets).map_or(64, |d| {
        (d.total_micros() / US_PER_CYCLE as u64).clamp(1, 64)
    });
    cycle + delay
}

/// Firmware's set-up of the TCP engine's `tcp_csr` behind `bus` (its base already applied):
/// the engine's and the gateway's addresses, the timers, `setup`, and for each of the `n`
/// connections the peer's address and ports (local `LOCAL_PORT_BASE + c`, remote 4420); no
/// connection is opened.
pub fn program<C: crate::drivers::Clocked + ?Sized>(
    bus: &mut crate::drivers::axil::Mmio<'_, C>,
    setup: &Setup,
    n: usize,
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
    bus.write32(tcp_csr::TICK, 20);
    bus.write32(tcp_csr::RTO_MIN, setup.rto_min);
    bus.write32(tcp_csr::RTO_MAX, 2000);
    bus.write32(tcp_csr::RTO_INIT, 300);
    bus.write32(tcp_csr::RETRIES, 20 << 8 | setup.retries);
    bus.write32(tcp_csr::ARP_RETRY, 100);
    bus.write32(tcp_csr::TIME_WAIT, setup.time_wait);
    bus.write32(tcp_csr::ISN_KEY0, setup.key.0);
    bus.write32(tcp_csr::ISN_KEY1, setup.key.1);
    bus.write32(tcp_csr::MSS, setup.mss);
    bus.write32(tcp_csr::WSCALE, setup.wscale);
    for c in 0..n {
        bus.write32(creg(c, 0), u32::from_be_bytes(PEER_IP));
        bus.write32(creg(c, 4), (LOCAL_PORT_BASE + c as u32) << 16 | 4420);
    }
}

/// Per-case engine settings.
#[derive(Clone, Debug)]
pub struct Setup {
    pub mss: u32,
    pub wscale: u32,
    pub key: (u32, u32),
    pub rto_min: u32,
    pub retries: u32,
    /// TIME-WAIT, ticks (20 cycles each, 1 ms of smoltcp's time).
    pub time_wait: u32,
}

impl Env<Top> {
    pub fn new(
        waves: Option<&Path>,
        seed: u64,
        to_peer: Faults,
        to_engine: Faults,
        setup: &Setup,
    ) -> Env {
        let sim = Sim::<Top>::maybe_waves(waves);
        Env::around(sim, true, "s_axil", seed, (to_peer, to_engine), setup)
    }

    /// [`Env::new`] over a clean link (no faults either way).
    pub fn clean(waves: Option<&Path>, seed: u64, setup: &Setup) -> Env {
        Env::new(waves, seed, Faults::default(), Faults::default(), setup)
    }

    /// The application on the engine's byte streams.
    pub fn app(&self) -> &Rc<RefCell<App>> {
        self.app.as_ref().expect("the engine alone has an App")
    }
}

impl<M: Dut> Env<M> {
    /// smoltcp's interface again on a device whose frames may be `mss` + 54 bytes (its own
    /// MSS follows), for jumbo MSSs above Ethernet's 1460.
    pub fn peer_mss(&mut self, mss: u32, seed: u64) {
        self.dev = Dev {
            mtu: Some(mss as usize + 54),
            ..Dev::default()
        };
        self.iface = iface(&mut self.dev, PEER_MAC, PEER_IP, seed);
    }

    /// The environment around `sim` (a fresh model, not reset yet): the Ethernet drivers, the
    /// TCP engine's CSR bus at `csr` programmed for the suite (addresses, timers, `setup`, the
    /// remote address and ports of every connection, not opened), the link and smoltcp; with
    /// `app`, an [`App`] on the engine's byte streams.
    pub fn around(
        mut sim: Sim<M>,
        app: bool,
        csr: &str,
        seed: u64,
        (to_peer, to_engine): (Faults, Faults),
        setup: &Setup,
    ) -> Env<M> {
        let up = if app { "up_o" } else { "tcp_up_o" };
        let n = sim.signal(up).width() as usize;
        if !app {
            // The joined unit: its NVMe/TCP engine runs (firmware never holds it here).
            sim.signal("run_i").set(1);
        }
        let src = sim.add(AxisSource::new(&sim, "s_axis", seed ^ 1, 10));
        let sink = sim.add(AxisSink::new(&sim, "m_axis", seed ^ 2, 10));
        // The contract: a frame's beats follow each other with no idle cycle (a MAC sends
        // them as they come; the chip top has no store-and-forward FIFO in front).
        sink.borrow_mut().gapless = true;
        let app = app.then(|| sim.add(App::new(&sim, seed ^ 3, n)));
        let axil = Axil::attach(
            &mut sim,
            csr,
            AxilConfig {
                seed: seed ^ 4,
                ..AxilConfig::default()
            },
        );
        sim.reset(3);
        program(&mut axil.mmio(&mut sim), setup, n);
        let (dev, iface) = peer_iface(seed);
        let mut view = EngineView::new(n, setup.mss as u16, setup.wscale as u8, setup.key);
        view.rx_bytes = rx_bytes(&axil, &mut sim);
        Env {
            sim,
            axil,
            src,
            sink,
            app,
            to_peer: Lossy::new(seed ^ 5, to_peer),
            to_engine: Lossy::new(seed ^ 6, to_engine),
            dev,
            iface,
            sockets: SocketSet::new(vec![]),
            view,
            seen_tx: 0,
            next_poll: 0,
            engine_frames: Vec::new(),
            n,
            mangle: None,
            cut: None,
        }
    }

    /// smoltcp's clock now.
    pub fn now(&self) -> Instant {
        Instant::from_micros(self.sim.cycle() as i64 * US_PER_CYCLE)
    }

    /// One cycle: the engine, its frames through the golden check onto the link, the link,
    /// smoltcp when it has work (`app` runs between smoltcp's polls: the peer application).
    pub fn step(&mut self, app: &mut dyn FnMut(&mut SocketSet<'static>)) -> Result<(), String> {
        self.sim.step();
        let cycle = self.sim.cycle();
        let new: Vec<Vec<u8>> = self.sink.borrow().frames[self.seen_tx..]
            .iter()
            .map(|f| f.data.clone())
            .collect();
        self.seen_tx += new.len();
        for f in new {
            if let Some(app) = &self.app {
                let app = app.borrow();
                let got: Vec<usize> = app.got.iter().map(Vec::len).collect();
                golden::check_frame(&mut self.view, &f, &app.sent, &got, cycle)
                    .map_err(|e| format!("cycle {cycle}: engine frame {f:02x?}: {e}"))?;
            }
            self.engine_frames.push(f.clone());
            if let Some(cut) = self.cut.as_mut() {
                if let Some((src, _, len)) = tcp_ports(&f) {
                    if src == cut.port && len > 0 && !cut.active {
                        cut.seen += 1;
                        cut.active = cut.seen >= cut.after;
                    }
                    if cut.drop && cut.active && src == cut.port {
                        continue;
                    }
                }
            }
            self.to_peer.push(cycle, f);
        }
        let arrived = self.to_peer.pop(cycle);
        let busy = !arrived.is_empty();
        self.dev.rx.extend(arrived);
        if busy || cycle >= self.next_poll {
            self.next_poll = turn(
                &mut self.iface,
                &mut self.dev,
                &mut self.sockets,
                cycle,
                app,
            );
        }
        for mut f in std::mem::take(&mut self.dev.tx) {
            self.view.peer_frame(&f);
            if let Some(m) = self.mangle.as_mut() {
                m(&mut f);
            }
            if let Some(cut) = &self.cut {
                let theirs = tcp_ports(&f).is_some_and(|(_, dst, _)| dst == cut.port);
                if cut.drop && cut.active && theirs {
                    continue;
                }
            }
            self.to_engine.push(cycle, f);
        }
        for f in self.to_engine.pop(cycle) {
            self.src.borrow_mut().send(f);
        }
        let v = &self.sink.borrow().violations;
        if !v.is_empty() {
            return Err(format!("m_axis: {}", v.join("; ")));
        }
        if let Some(app) = &self.app {
            let v = &app.borrow().violations;
            if !v.is_empty() {
                return Err(format!("byte streams: {}", v.join("; ")));
            }
        }
        Ok(())
    }

    /// A CSR read.
    pub fn read(&mut self, addr: u32) -> u32 {
        self.axil.mmio(&mut self.sim).read32(addr)
    }

    /// A CSR write.
    pub fn write(&mut self, addr: u32, v: u32) {
        self.axil.mmio(&mut self.sim).write32(addr, v)
    }

    /// The counters, in `tcp_csr` order.
    pub fn counters(&mut self) -> Vec<u32> {
        (0..golden::COUNTERS)
            .map(|i| self.read(tcp_csr::SEG_IN + 4 * i))
            .collect()
    }
}

/// Counter indices.
pub mod cnt {
    pub const SEG_IN: usize = 0;
    pub const SEG_OUT: usize = 1;
    pub const RETRANS: usize = 2;
    pub const RTO_FIRES: usize = 3;
    pub const DROP_CSUM: usize = 4;
    pub const DROP_OTHER: usize = 5;
    pub const DROP_MALFORMED: usize = 6;
    pub const RST_IN: usize = 7;
    pub const RST_OUT: usize = 8;
    pub const ECHO_OUT: usize = 9;
    pub const ARP_OUT: usize = 10;
    pub const TX_DROP: usize = 11;
    pub const OOO_KEPT: usize = 12;
    pub const OOO_DROPPED: usize = 13;
    pub const DUP_ACKS: usize = 14;
    pub const FAST_RETRANS: usize = 15;
    pub const CHALLENGE_ACKS: usize = 16;
    pub const RST_DROPPED: usize = 17;
    pub const RST_CLOSED: usize = 18;
}
