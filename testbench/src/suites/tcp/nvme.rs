//! Property `tcp_nvme`: NVMe/TCP end to end over the TCP/IP engine. The joined unit
//! (`nvme_tcp_ip_*`: the NVMe/TCP engine on the TCP engine, `hdl-gen/src/nvme_tcp/ip.rs`) gets
//! commands on `io_cmd` (Reads and Writes of random lengths at random LBAs, a few Flushes,
//! refused opcodes, Reads past the end, and commands for SQ ids without a connection), its host
//! memory is an AXI4 slave, and its Ethernet port goes over the lossy link (loss, duplication,
//! reordering, corruption, truncation in about two cases of three) to smoltcp, where one
//! listening socket per connection carries the project's NVMe/TCP target model
//! (`models::nvme_tcp_target`, well behaved).
//!
//! It reuses the `nvme-tcp` suite's engine case (`nvme_tcp::rtl::EngineCase`: scenarios, host
//! memory layout, the outcome check) and this suite's environment (`Env` over the joined
//! top); only the byte streams' other end differs from `nvme_tcp_engine`. Checked: every
//! command completes exactly once with the status the target's decisions give, Read data
//! byte for byte in host memory (nothing else written), Write data byte for byte in the
//! target's namespaces (`scenario::check`), the NVMe/TCP counters against what the targets
//! sent and received, and on the TCP side no connection failed, no RST sent, no byte dropped.
//!
//! In about one case of three one connection is killed in mid-traffic, once the engine has
//! sent a chosen number of data segments on it: smoltcp resets it (an RST; the link is calm
//! from then on, so the RST arrives), or every frame of it is lost from then on (the engine's
//! retry limit ends it). Its target stops there. Then (`nvme_tcp/mod.rs`, "A lost TCP
//! connection"): exactly that connection's TCP side failed; every command on it the target had
//! not answered, outstanding or submitted later, completes once with 22h (DW0 0), an answered
//! one with its answer or 22h (`scenario::check_lost`); the other connection is checked as in
//! every case. The NVMe/TCP counters and the TCP side's RST and drop counters are not checked
//! in such a case (what reached the dead connection depends on timing).

use super::{cnt, creg, Env, Faults, Setup, LOCAL_PORT_BASE};
use crate::drivers::axi_mem::AxiMemSlave;
use crate::drivers::axil::{Axil, AxilConfig};
use crate::models::nvme_tcp_target::Target;
use crate::prop::Property;
use crate::rng::Rng;
use crate::rtl::regs::tcp_csr;
use crate::rtl::NvmeTcpIpTop as Top;
use crate::sim::Sim;
use crate::suites::nvme_tcp::rtl::{EngineCase, EngineHarness, EngineInput, NvmeTcpConnProp};
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use smoltcp::iface::{SocketHandle, SocketSet};
use smoltcp::socket::tcp;
use std::path::Path;

/// smoltcp's largest RTO (60 s) in cycles of the suite's clock.
const SMOLTCP_RTO_MAX: u64 = 60_000_000 / super::US_PER_CYCLE as u64;

/// Cycles a lost connection's commands may go without a completion once its TCP side failed.
const LOST_STALL: u64 = 100_000;

/// The stimulus.
#[derive(Clone, Debug)]
pub struct Input {
    /// The NVMe/TCP side: one scenario per connection, stray SQ ids, the seed.
    pub engine: EngineInput,
    /// Fault rates toward smoltcp and toward the engine: drop, dup, reorder, corrupt, truncate.
    pub to_peer: [u8; 5],
    pub to_engine: [u8; 5],
    /// MSS CSR choice, window-shift CSR, smoltcp receive buffer choice.
    pub mss: u8,
    pub wscale: u8,
    pub peer_buf: u8,
    pub key: (u32, u32),
    /// Kill a connection: (by an RST from smoltcp, else by losing its frames; the connection;
    /// after that many data segments of the engine on it, 1 to 4).
    pub kill: Option<(bool, u8, u8)>,
}

fn faults(r: [u8; 5]) -> Faults {
    Faults {
        drop: r[0],
        dup: r[1],
        reorder: r[2],
        corrupt: r[3],
        truncate: r[4],
    }
}

/// The targets on smoltcp: socket i serves the engine connection its peer's port names.
pub struct Peer {
    pub handles: Vec<SocketHandle>,
    conn: Vec<Option<usize>>,
    /// A connection whose target stopped (its TCP connection was killed).
    pub stopped: Option<usize>,
    rng: Rng,
    /// Bytes the targets received and sent, all connections (the engine's `tx_bytes` and
    /// `rx_bytes` counters once everything arrived).
    pub received: u64,
    pub sent: u64,
}

impl Peer {
    /// One listening socket per target on 4420, receive buffers of `rx` bytes.
    pub fn listen(sockets: &mut SocketSet<'static>, n: usize, rx: usize, seed: u64) -> Peer {
        let handles = (0..n)
            .map(|_| {
                let mut s = tcp::Socket::new(
                    tcp::SocketBuffer::new(vec![0; rx]),
                    tcp::SocketBuffer::new(vec![0; 16384]),
                );
                // smoltcp's default without its Reno feature (the bench's loss rows turn it on).
                s.set_congestion_control(tcp::CongestionControl::None);
                s.listen(4420).expect("a fresh socket listens");
                sockets.add(s)
            })
            .collect();
        Peer {
            handles,
            conn: vec![None; n],
            stopped: None,
            rng: Rng::new(seed),
            received: 0,
            sent: 0,
        }
    }

    /// Kills connection `c`: its target stops; with `rst`, its socket resets the connection.
    /// False when smoltcp has no socket for it yet.
    pub fn kill(&mut self, sockets: &mut SocketSet<'static>, c: usize, rst: bool) -> bool {
        let Some(i) = self.conn.iter().position(|x| *x == Some(c)) else {
            return false;
        };
        if rst {
            sockets.get_mut::<tcp::Socket>(self.handles[i]).abort();
        }
        self.stopped = Some(c);
        true
    }

    /// Every socket forgets its connection without a word (no RST: a remote host that
    /// restarted its side) and listens again; no connection is stopped any more.
    pub fn reopen(&mut self, sockets: &mut SocketSet<'static>) {
        for (i, h) in self.handles.iter().enumerate() {
            let s = sockets.get_mut::<tcp::Socket>(*h);
            s.abort();
            s.listen(4420).expect("a closed socket listens");
            self.conn[i] = None;
        }
        self.stopped = None;
    }

    /// Moves bytes between the sockets and the targets, and lets the targets work. A socket
    /// whose connection was reset listens again (a server accepts the next connection).
    pub fn run(&mut self, sockets: &mut SocketSet<'static>, targets: &mut [Target]) {
        for (i, h) in self.handles.iter().enumerate() {
            let s = sockets.get_mut::<tcp::Socket>(*h);
            if s.state() == tcp::State::Closed {
                s.listen(4420).expect("a closed socket listens");
                self.conn[i] = None;
            }
            if self.conn[i].is_none() {
                if let Some(ep) = s.remote_endpoint() {
                    self.conn[i] =
                        Some(usize::from(ep.port).wrapping_sub(LOCAL_PORT_BASE as usize));
                }
            }
            let Some(c) = self.conn[i] else { continue };
            if self.stopped == Some(c) {
                continue;
            }
            let Some(t) = targets.get_mut(c) else {
                continue;
            };
            let mut buf = [0u8; 4096];
            while s.can_recv() {
                match s.recv_slice(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(k) => {
                        t.receive(&buf[..k]);
                        self.received += k as u64;
                    }
                }
            }
            // A few PDUs per poll, in random command order (the target's own choice).
            for _ in 0..1 + self.rng.below(4) {
                if !t.step() {
                    break;
                }
            }
            if s.can_send() {
                let room = s.send_capacity() - s.send_queue();
                let b = t.take(room);
                if !b.is_empty() {
                    let k = s.send_slice(&b).unwrap_or(0);
                    assert_eq!(k, b.len(), "smoltcp took less than its free room");
                    self.sent += k as u64;
                }
            }
        }
    }
}

/// Runs one case.
pub fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
    measure(input, waves, false).map(|_| ())
}

/// When things happened in a case that passed (for `testbench bench --suite tcp`).
pub struct Timing {
    /// The cycle each completion was taken, in order.
    pub completed: Vec<u64>,
    /// Frames into the engine: (first beat's cycle, last beat's cycle, bytes).
    pub to_engine: Vec<(u64, u64, usize)>,
    /// Frames out of the engine: the same and their TCP payload bytes.
    pub from_engine: Vec<(u64, u64, usize, usize)>,
}

/// Runs one case as [`run`] does, every check included; with `steady`, the Ethernet source
/// has no idle cycles and the sink no backpressure (the benchmark's setting).
pub fn measure(input: &Input, waves: Option<&Path>, steady: bool) -> Result<Timing, String> {
    let mut sim = Sim::<Top>::maybe_waves(waves);
    let n = sim.signal("tcp_up_o").width() as usize;
    let seed = input.engine.seed;
    let mem = sim.add(AxiMemSlave::new(
        &sim,
        "m_axi",
        EngineCase::mem_config(&input.engine),
    ));
    mem.borrow_mut().w_gapless = true;
    let mut case = EngineCase::new(&input.engine, n, &mut mem.borrow_mut().mem);
    let h = sim.add(EngineHarness::new(
        &sim,
        std::mem::take(&mut case.order),
        false,
        seed,
    ));
    h.borrow().digests(&case.conns[0]);
    let nvme_csr = Axil::attach(
        &mut sim,
        "s_axil",
        AxilConfig {
            seed: seed ^ 0xa1,
            ..AxilConfig::default()
        },
    );
    let mss = [536u32, 1000, 1460][usize::from(input.mss % 3)];
    let setup = Setup {
        mss,
        wscale: u32::from(input.wscale % 5),
        key: input.key,
        rto_min: 40,
        retries: 12,
        time_wait: 5000,
    };
    let mut env = Env::around(
        sim,
        false,
        "s_tcp_axil",
        seed ^ 0x7c9,
        (faults(input.to_peer), faults(input.to_engine)),
        &setup,
    );
    let peer_rx = [4096usize, 16384, 150_000][usize::from(input.peer_buf % 3)];
    let mut peer = Peer::listen(&mut env.sockets, n, peer_rx, seed ^ 0x5e);
    if steady {
        env.src.borrow_mut().set_idle(0);
        env.sink.borrow_mut().set_stall(0);
    }
    let mut completed = Vec::new();
    for c in 0..n {
        env.write(creg(c, 8), 1);
    }
    if let Some((rst, c, after)) = input.kill {
        env.cut = Some(super::Cut {
            port: (LOCAL_PORT_BASE + u32::from(c) % n as u32) as u16,
            after: u32::from(after % 4 + 1),
            drop: !rst,
            seen: 0,
            active: false,
        });
    }
    // The connection killed, once it is.
    let mut killed: Option<usize> = None;
    let total = case.total();
    // The TCP engine parses headers a byte a cycle (and sends a segment in about its length / 8
    // cycles), and every R2T and C2HData costs a round trip through smoltcp at worst, a lost
    // segment an RTO. smoltcp's RTO doubles with each of its retransmissions the link loses,
    // up to 60 s (1.2 M cycles at 50 us a cycle): two of those on top (a case once waited
    // 690 000 cycles for smoltcp's backed-off retransmission, past the budget without them).
    let limit = 1_000_000 + 5000 * case.data_pdus() + 20 * case.data_bytes() + 2 * SMOLTCP_RTO_MAX;
    let mut quiet = 0u32;
    let mut last_poll = 0u64;
    // Once the killed connection's TCP side has failed: (its completions so far, the cycle the
    // last of them came or the failure was seen).
    let mut lost_progress: Option<(usize, u64)> = None;
    loop {
        env.step(&mut |s| peer.run(s, &mut case.targets))?;
        let cycle = env.sim.cycle();
        completed.resize(h.borrow().completions.len(), cycle);
        if killed.is_none() {
            if let Some(cut) = env.cut.clone().filter(|c| c.active) {
                let c = (u32::from(cut.port) - LOCAL_PORT_BASE) as usize;
                if peer.kill(&mut env.sockets, c, !cut.drop) {
                    killed = Some(c);
                    if !cut.drop {
                        // The RST must arrive (and an answer to what the engine sends after it).
                        env.to_peer.calm();
                        env.to_engine.calm();
                    }
                } else {
                    env.cut = None;
                }
            }
        }
        let spared = killed.map_or(0, |c| 1u64 << c);
        if cycle - last_poll >= 1000 {
            last_poll = cycle;
            let failed = env.sim.signal("tcp_failed_o").get();
            let dropped = env.read(tcp_csr::SEG_IN + 4 * cnt::TX_DROP as u32);
            if let Some(c) = killed.filter(|&c| failed >> c & 1 != 0) {
                // "A lost TCP connection": its commands end, they do not wait for the case's
                // hang limit. The drain the contract allows (bytes already on `rx`, a C2HData
                // payload fed with zeros to its end, an H2CData's host read) is a few thousand
                // cycles; LOST_STALL cycles without one completion on it is a hang.
                let got = h
                    .borrow()
                    .completions
                    .iter()
                    .filter(|(q, _)| usize::from(*q) == c + 1)
                    .count();
                let (seen, at) = *lost_progress.get_or_insert((got, cycle));
                if got != seen {
                    lost_progress = Some((got, cycle));
                } else if got < case.subs[c].len() && cycle - at > LOST_STALL {
                    let hb = h.borrow();
                    return Err(format!(
                        "connection {c}'s TCP side failed, but {} of its {} commands have not \
                         completed and none did for {LOST_STALL} cycles (cycle {cycle}): {:?}",
                        case.subs[c].len() - got,
                        case.subs[c].len(),
                        case.hang_report(&hb.completions),
                    ));
                }
            }
            if failed & !spared != 0 || (dropped != 0 && killed.is_none()) {
                let states: Vec<u32> = (0..n).map(|c| env.read(creg(c, 12))).collect();
                return Err(format!(
                    "TCP connections failed ({failed:#b}) or bytes of the NVMe/TCP engine dropped ({dropped}) at cycle {cycle}: state CSRs {states:x?}, counters {:?}, faults to smoltcp {:?}, to the engine {:?}",
                    env.counters(),
                    env.to_peer.counts,
                    env.to_engine.counts
                ));
            }
        }
        let done = h.borrow().completions.len() >= total
            && case
                .targets
                .iter()
                .enumerate()
                .all(|(i, t)| killed == Some(i) || t.pending() == 0)
            && env.to_peer.idle()
            && env.to_engine.idle();
        quiet = if done { quiet + 1 } else { 0 };
        if quiet > 3000 {
            break;
        }
        if cycle > limit {
            // CSR reads run the model (and its harness): the harness is not borrowed meanwhile.
            let counters = env.counters();
            let states: Vec<u32> = (0..n).map(|c| env.read(creg(c, 12))).collect();
            // State, SND.UNA, SND.NXT, RCV.NXT, RTT, ISS, SND.WND, cwnd, ssthresh.
            let regs: Vec<Vec<u32>> = (0..n)
                .map(|c| (3..12).map(|i| env.read(creg(c, 4 * i))).collect())
                .collect();
            // smoltcp's side: state, bytes queued to send (unacknowledged included), received
            // bytes the target has not read.
            let socks: Vec<String> = peer
                .handles
                .iter()
                .map(|&hd| {
                    let s = env.sockets.get::<tcp::Socket>(hd);
                    format!(
                        "{} send {} recv {}",
                        s.state(),
                        s.send_queue(),
                        s.recv_queue()
                    )
                })
                .collect();
            let adv: Vec<_> = env
                .view
                .conns
                .iter()
                .map(|v| (v.last_adv, v.peer_end))
                .collect();
            let hb = h.borrow();
            return Err(format!(
                "hang: {} of {total} commands completed after {cycle} cycles; {:?}; TCP states {states:x?}, counters {counters:?}; per connection state, SND.UNA, SND.NXT, RCV.NXT, RTT, ISS, SND.WND, cwnd, ssthresh {regs:x?}; smoltcp {socks:?}; the engine's last ACK and window, the peer's end {adv:x?}",
                hb.completions.len(),
                case.hang_report(&hb.completions),
            ));
        }
    }
    if let Some(v) = h.borrow().violations.first() {
        return Err(format!("io_cpl stream protocol: {v}"));
    }
    let all = h.borrow().completions.clone();
    if all.len() != total {
        return Err(format!(
            "{} completions for {total} commands: {all:x?}",
            all.len()
        ));
    }
    case.check_lost(&all, &mem.borrow().mem, killed)?;
    let failed = env.sim.signal("tcp_failed_o").get();
    if let Some(c) = killed {
        if failed != 1 << c {
            return Err(format!(
                "connection {c} was killed ({}) but the TCP connections failed are {failed:#b}",
                if input.kill.is_some_and(|k| k.0) {
                    "RST"
                } else {
                    "every frame lost"
                }
            ));
        }
    } else {
        case.check_counters(&mut nvme_csr.mmio(&mut env.sim), peer.received, peer.sent)?;
        let cn = env.counters();
        for (i, name) in [(cnt::RST_OUT, "rst_out"), (cnt::TX_DROP, "tx_drop")] {
            if cn[i] != 0 {
                return Err(format!("TCP counter {name} is {} (counters {cn:?})", cn[i]));
            }
        }
    }
    for (name, a) in [("NVMe/TCP", &nvme_csr), ("TCP", &env.axil)] {
        if let Some(v) = a.master().violations.first() {
            return Err(format!("{name} AXI4-Lite protocol: {v}"));
        }
    }
    if let Some(v) = mem.borrow().violations.first() {
        return Err(format!("host memory AXI4 protocol: {v}"));
    }
    let v = &env.sink.borrow().violations;
    if !v.is_empty() {
        return Err(format!("m_axis: {}", v.join("; ")));
    }
    let src = env.src.borrow();
    let to_engine = src
        .starts
        .iter()
        .zip(&src.sent)
        .map(|(&first, &(last, len))| (first, last, len))
        .collect();
    let from_engine = env
        .sink
        .borrow()
        .frames
        .iter()
        .map(|f| {
            let payload = super::tcp_ports(&f.data).map_or(0, |p| p.2);
            (f.first, f.last, f.data.len(), payload)
        })
        .collect();
    Ok(Timing {
        completed,
        to_engine,
        from_engine,
    })
}

/// Scenarios sized for a TCP engine that parses a byte a cycle: at most 6 commands per connection, at most 64
/// blocks (32 KiB) each, R2Ts and C2HData PDUs of at least 256 bytes (tinier ones are the
/// `nvme-tcp` suite's business; here each costs a round trip through TCP).
pub fn scenario() -> BoxedStrategy<crate::suites::nvme_tcp::scenario::Scenario> {
    NvmeTcpConnProp::strategy()
        .prop_map(|mut sc| {
            sc.cmds.truncate(6);
            for c in &mut sc.cmds {
                c.nlb %= 64;
            }
            sc.max_r2t = sc.max_r2t.max(256);
            sc.max_c2h = sc.max_c2h.max(256);
            sc
        })
        .boxed()
}

pub struct TcpNvmeProp;

impl Property for TcpNvmeProp {
    type Input = Input;
    const NAME: &'static str = "tcp_nvme";

    fn strategy() -> BoxedStrategy<Input> {
        (
            prop::collection::vec(scenario(), 2),
            0u8..3,
            any::<u64>(),
            super::stream::rates(),
            super::stream::rates(),
            (any::<u8>(), any::<u8>(), any::<u8>()),
            (any::<u32>(), any::<u32>()),
            prop_oneof![
                2 => Just(None),
                1 => (any::<bool>(), 0u8..2, 0u8..4).prop_map(Some),
            ],
        )
            .prop_map(
                |(conns, stray, seed, to_peer, to_engine, (mss, wscale, peer_buf), key, kill)| {
                    Input {
                        engine: EngineInput { conns, stray, seed },
                        to_peer,
                        to_engine,
                        mss,
                        wscale,
                        peer_buf,
                        key,
                        kill,
                    }
                },
            )
            .boxed()
    }

    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        run(input, waves)
    }
}
