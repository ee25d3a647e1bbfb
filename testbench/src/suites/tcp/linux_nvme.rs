//! `testbench tcp-linux --nvme`: NVMe/TCP end to end over the TCP/IP engine against the Linux
//! kernel's TCP. The joined unit (`nvme_tcp_ip_*`: the NVMe/TCP engine on the TCP engine) runs
//! behind the same TAP bridge as `linux/`'s cases (a namespace of the case's own, bridge
//! faults on TCP frames, pacing to wall time, the pcap); the far end is the project's NVMe/TCP
//! target model (`models::nvme_tcp_target`, one per connection) on the sockets a kernel
//! `TcpListener` on 10.0.0.2:4420 accepts inside the namespace. The commands are the
//! `tcp_nvme` property's (Reads and Writes of random lengths at random LBAs, a few other
//! commands, commands for SQ ids without a connection: `nvme_tcp::rtl::EngineCase`, drawn
//! from the case's seed), and so are the checks: every command completes exactly once with the
//! status the target's decisions give, Read data byte for byte in host memory, Write data byte
//! for byte in the targets' namespaces, the NVMe/TCP counters against what the targets sent
//! and received; on the TCP side no connection failed and no RST, dropped byte or checksum
//! drop on the engine's side, no TCP or IPv4 error in the kernel's counters.
//!
//! The targets run on the simulation's thread (they share their namespaces through `Rc`), on
//! non-blocking sockets served every 64 cycles.

use super::linux::{counter, site, snmp, Bridge, BridgeWatch, Options, Plan};
use super::{cnt, creg};
use crate::drivers::axi_mem::AxiMemSlave;
use crate::drivers::axil::{Axil, AxilConfig};
use crate::drivers::axis::{AxisSink, AxisSource};
use crate::models::nvme_tcp_target::Target;
use crate::pcap::Pcap;
use crate::rng::Rng;
use crate::rtl::regs::tcp_csr;
use crate::rtl::NvmeTcpIpTop as Top;
use crate::sim::Sim;
use crate::suites::nvme_tcp::rtl::{EngineCase, EngineHarness, EngineInput};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Instant;

/// One case's figures.
#[derive(Clone, Debug, Default)]
pub struct NvmeReport {
    pub conns: usize,
    /// Commands completed; of them Reads and Writes, and the bytes they moved.
    pub commands: usize,
    pub reads: usize,
    pub writes: usize,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// NVMe/TCP PDU bytes each way (engine to kernel, kernel to engine).
    pub pdu_bytes: [u64; 2],
    /// Engine counters: segments out, retransmitted, RTO expiries.
    pub seg_out: u32,
    pub retrans: u32,
    pub rto_fires: u32,
    /// Kernel counters: segments retransmitted.
    pub k_retrans: u64,
    /// Bridge faults on TCP frames (dropped, duplicated, reordered) toward the kernel and the
    /// engine.
    pub faults: [[u32; 3]; 2],
    pub cycles: u64,
    pub secs: f64,
}

impl std::fmt::Display for NvmeReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} conns, {} commands ({} Reads {} B, {} Writes {} B) in {} cycles ({:.0} cycles a \
             command); PDU bytes engine->linux {}, linux->engine {}; engine segs out {} retrans \
             {} (RTO {}); linux retrans {}; bridge drop/dup/reorder to linux {:?} to engine \
             {:?}; {:.2} s",
            self.conns,
            self.commands,
            self.reads,
            self.read_bytes,
            self.writes,
            self.write_bytes,
            self.cycles,
            self.cycles as f64 / self.commands.max(1) as f64,
            self.pdu_bytes[0],
            self.pdu_bytes[1],
            self.seg_out,
            self.retrans,
            self.rto_fires,
            self.k_retrans,
            self.faults[0],
            self.faults[1],
            self.secs
        )
    }
}

/// The case's commands: two `tcp_nvme` scenarios, stray SQ ids, drawn from `seed`.
fn draw(seed: u64) -> EngineInput {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let s = (
        proptest::collection::vec(super::nvme::scenario(), 2),
        0u8..3,
    );
    let (conns, stray) = s
        .new_tree(&mut runner)
        .expect("the strategy draws")
        .current();
    EngineInput { conns, stray, seed }
}

/// The kernel's ends of the connections: the targets on the accepted sockets.
struct Kernel {
    /// Per connection: its socket and the bytes its target gave that the kernel did not take.
    socks: Vec<Option<(TcpStream, Vec<u8>)>>,
    buf: Vec<u8>,
    /// Bytes the targets received and sent.
    received: u64,
    sent: u64,
    rng: Rng,
}

impl Kernel {
    /// Accepts connections, moves bytes between the sockets and the targets, lets the targets
    /// work.
    fn serve(&mut self, listener: &TcpListener, targets: &mut [Target]) -> Result<(), String> {
        loop {
            match listener.accept() {
                Ok((s, addr)) => {
                    let c = usize::from(addr.port()).wrapping_sub(super::LOCAL_PORT_BASE as usize);
                    if c >= self.socks.len() || self.socks[c].is_some() {
                        return Err(format!(
                            "the kernel accepted an unexpected connection from {addr}"
                        ));
                    }
                    s.set_nonblocking(true).map_err(|e| e.to_string())?;
                    s.set_nodelay(true).map_err(|e| e.to_string())?;
                    self.socks[c] = Some((s, Vec::new()));
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => return Err(format!("accept: {e}")),
            }
        }
        for (c, slot) in self.socks.iter_mut().enumerate() {
            let Some((s, out)) = slot.as_mut() else {
                continue;
            };
            let t = &mut targets[c];
            loop {
                match s.read(&mut self.buf) {
                    Ok(0) => return Err(format!("connection {c}: the engine closed it")),
                    Ok(k) => {
                        t.receive(&self.buf[..k]);
                        self.received += k as u64;
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => return Err(format!("connection {c}: kernel read: {e}")),
                }
            }
            for _ in 0..1 + self.rng.below(4) {
                if !t.step() {
                    break;
                }
            }
            out.extend(t.take(usize::MAX));
            while !out.is_empty() {
                match s.write(out) {
                    Ok(k) => {
                        self.sent += k as u64;
                        out.drain(..k);
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => return Err(format!("connection {c}: kernel write: {e}")),
                }
            }
        }
        Ok(())
    }

    fn idle(&self) -> bool {
        self.socks
            .iter()
            .all(|s| s.as_ref().is_none_or(|(_, out)| out.is_empty()))
    }
}

/// Nothing to look at on the bridge but what it counts itself.
struct Quiet;

impl BridgeWatch for Quiet {}

/// Runs case `case` with `seed`; frames crossing the TAP go to `pcap`.
pub fn run_case(
    case: u64,
    seed: u64,
    opt: &Options,
    mut pcap: Option<&mut Pcap>,
) -> Result<NvmeReport, String> {
    let t0 = Instant::now();
    let deadline = t0 + opt.timeout;
    let (ns, tap_fd, listener) = site(case)?;
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("listener: {e}"))?;

    let mut sim = Sim::<Top>::new();
    let n = sim.signal("tcp_up_o").width() as usize;
    let plan = Plan::draw(seed, n, opt, case == 0);
    let input = draw(seed);
    let mem = sim.add(AxiMemSlave::new(
        &sim,
        "m_axi",
        EngineCase::mem_config(&input),
    ));
    let mut ec = EngineCase::new(&input, n, &mut mem.borrow_mut().mem);
    let h = sim.add(EngineHarness::new(
        &sim,
        std::mem::take(&mut ec.order),
        false,
        seed,
    ));
    h.borrow().digests(&ec.conns[0]);
    // The NVMe/TCP engine runs (nothing holds it in reset here).
    sim.signal("run_i").set(1);
    let src = sim.add(AxisSource::new(&sim, "s_axis", seed ^ 1, 0));
    let sink = sim.add(AxisSink::new(&sim, "m_axis", seed ^ 2, 5));
    sink.borrow_mut().gapless = true;
    let tcp = Axil::attach(
        &mut sim,
        "s_tcp_axil",
        AxilConfig {
            seed: seed ^ 4,
            ..AxilConfig::default()
        },
    );
    let nvme = Axil::attach(
        &mut sim,
        "s_axil",
        AxilConfig {
            seed: seed ^ 0xa1,
            ..AxilConfig::default()
        },
    );
    sim.reset(3);
    let tick = opt.mhz * 1000;
    super::linux::program(&mut tcp.mmio(&mut sim), n, tick, &plan);
    for c in 0..n {
        tcp.mmio(&mut sim).write32(creg(c, 8), 1);
    }
    let mut bridge = Bridge::new(
        tap_fd,
        seed,
        (plan.to_kernel.clone(), plan.to_engine.clone()),
        opt.mhz,
        sim.cycle(),
    );
    let mut kernel = Kernel {
        socks: (0..n).map(|_| None).collect(),
        buf: vec![0u8; 65536],
        received: 0,
        sent: 0,
        rng: Rng::new(seed ^ 0x5e),
    };
    let total = ec.total();
    let start_cycle = sim.cycle();
    let (mut next_io, mut next_ctl) = (0u64, 0u64);
    let mut quiet_from: Option<u64> = None;
    let counters = |sim: &mut Sim<Top>| -> Vec<u32> {
        (0..crate::models::tcp::COUNTERS)
            .map(|i| tcp.mmio(sim).read32(tcp_csr::SEG_IN + 4 * i))
            .collect()
    };
    loop {
        sim.step();
        let cycle = sim.cycle();
        bridge.pump(cycle, (&sink, &src), pcap.as_deref_mut(), &mut Quiet)?;
        if let Some(v) = sink.borrow().violations.first() {
            return Err(format!("m_axis: {v}"));
        }
        if cycle >= next_io {
            next_io = cycle + 64;
            kernel.serve(&listener, &mut ec.targets)?;
        }
        if cycle < next_ctl {
            continue;
        }
        next_ctl = cycle + 2048;
        let failed = sim.signal("tcp_failed_o").get();
        let cn = counters(&mut sim);
        if failed != 0 || cn[cnt::TX_DROP] != 0 || cn[cnt::RST_OUT] != 0 {
            let states: Vec<u32> = (0..n)
                .map(|c| tcp.mmio(&mut sim).read32(creg(c, 12)))
                .collect();
            return Err(format!(
                "TCP connections failed ({failed:#b}), or bytes dropped or RSTs sent: state CSRs \
                 {states:x?}, counters {cn:?}"
            ));
        }
        let done = h.borrow().completions.len() >= total
            && ec.targets.iter().all(|t| t.pending() == 0)
            && kernel.idle();
        if !done {
            quiet_from = None;
        } else if quiet_from.is_none() {
            quiet_from = Some(cycle);
        }
        // A quiet 20 ms after the last completion, so late frames and counters settle.
        if quiet_from.is_some_and(|q| cycle - q > u64::from(tick) * 20) {
            break;
        }
        if Instant::now() > deadline {
            let hb = h.borrow();
            return Err(format!(
                "not done after {:?}: {} of {total} commands completed; {:?}; engine counters {cn:?}",
                opt.timeout,
                hb.completions.len(),
                ec.hang_report(&hb.completions)
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
    ec.check(&all, &mem.borrow().mem)?;
    ec.check_counters(&mut nvme.mmio(&mut sim), kernel.received, kernel.sent)?;
    let cn = counters(&mut sim);
    let mut bad = Vec::new();
    for (i, name) in [
        (cnt::RST_OUT, "rst_out"),
        (cnt::RST_IN, "rst_in"),
        (cnt::TX_DROP, "tx_drop"),
        (cnt::DROP_CSUM, "drop_csum"),
        (cnt::DROP_MALFORMED, "drop_malformed"),
    ] {
        if cn[i] != 0 {
            bad.push(format!("engine counter {name} is {}, want 0", cn[i]));
        }
    }
    let k = ns.enter(snmp)??;
    for name in [
        "Tcp.InErrs",
        "Tcp.InCsumErrors",
        "Tcp.EstabResets",
        "Tcp.AttemptFails",
        "Tcp.OutRsts",
        "Ip.InHdrErrors",
        "Ip.InAddrErrors",
    ] {
        let v = counter(&k, name);
        if v != 0 {
            bad.push(format!("kernel counter {name} is {v}, want 0"));
        }
    }
    for (name, a) in [("NVMe/TCP", &nvme), ("TCP", &tcp)] {
        if let Some(v) = a.master().violations.first() {
            bad.push(format!("{name} AXI4-Lite protocol: {v}"));
        }
    }
    if !bad.is_empty() {
        return Err(format!("{}; engine counters {cn:?}", bad.join("; ")));
    }
    let mut r = NvmeReport {
        conns: n,
        commands: all.len(),
        pdu_bytes: [kernel.received, kernel.sent],
        seg_out: cn[cnt::SEG_OUT],
        retrans: cn[cnt::RETRANS],
        rto_fires: cn[cnt::RTO_FIRES],
        k_retrans: counter(&k, "Tcp.RetransSegs"),
        faults: [bridge.to_kernel.counts, bridge.to_engine.counts].map(|c| [c[0], c[1], c[2]]),
        cycles: sim.cycle() - start_cycle,
        secs: t0.elapsed().as_secs_f64(),
        ..NvmeReport::default()
    };
    for s in ec.subs.iter().flatten() {
        use crate::suites::nvme_tcp::scenario::Kind;
        match s.kind {
            Kind::Read => {
                r.reads += 1;
                r.read_bytes += s.len as u64;
            }
            Kind::Write => {
                r.writes += 1;
                r.write_bytes += s.len as u64;
            }
            _ => {}
        }
    }
    drop(ns);
    Ok(r)
}
