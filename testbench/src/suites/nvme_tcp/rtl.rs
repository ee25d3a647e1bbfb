//! Properties `nvme_tcp_conn` and `nvme_tcp_conn_hostile`: the RTL connection
//! (`nvme_tcp_conn_*`) against the target model over its byte streams, with random beat sizes
//! (any beat may be short, PDUs straddle beats), random idle cycles and backpressure on every
//! stream, digests on and off, and a hostile target. Commands carry no data yet (Flush, a
//! refused opcode, a Read past the namespace's end): the RTL has no data PDUs. The outcome is
//! checked by `scenario::check`, as for the host model.

use super::scenario::{check, strategy, Kind, Outcome, Scenario};
use crate::drivers::axil::{Axil, AxilConfig};
use crate::models::nvme_tcp_host::Completion;
use crate::models::nvme_tcp_target::{Fault, Target};
use crate::pcap::{Endpoints, Pcap, TcpConn};
use crate::prop::Property;
use crate::rng::Rng;
use crate::rtl::regs::nvme_tcp_csr;
use crate::rtl::NvmeTcpConnTop as Top;
use crate::sim::{Component, Signal, Sim};
use proptest::strategy::{BoxedStrategy, Strategy};
use std::collections::VecDeque;
use std::path::Path;

/// Drives the connection's streams: commands, rx beats in; tx bytes, completions out.
struct Harness {
    lanes: usize,
    cmd_valid: Signal,
    cmd_ready: Signal,
    cmd_sqe: Signal,
    cpl_valid: Signal,
    cpl_ready: Signal,
    cpl_cid: Signal,
    cpl_status: Signal,
    cpl_dw0: Signal,
    tx_valid: Signal,
    tx_ready: Signal,
    tx_data: Signal,
    tx_keep: Signal,
    rx_valid: Signal,
    rx_ready: Signal,
    rx_data: Signal,
    rx_keep: Signal,
    dgst: Signal,
    cmds: VecDeque<[u8; 64]>,
    cmd_on: bool,
    beats: VecDeque<Vec<u8>>,
    rx_on: bool,
    rng: Rng,
    idle: (u8, u8, u8, u8),
    /// Bytes the RTL sent, not yet given to the target.
    tx_bytes: Vec<u8>,
    completions: Vec<Completion>,
    violations: Vec<String>,
    last_tx: Option<(Vec<u32>, u64)>,
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|c| c.iter().rev().fold(0u32, |a, b| a << 8 | u32::from(*b)))
        .collect()
}

impl Harness {
    fn new(sim: &Sim<Top>, seed: u64, idle: (u8, u8, u8, u8), dgst: u64) -> Harness {
        let s = |n: &str| sim.signal(n);
        let h = Harness {
            lanes: (s("tx_data_o").width() / 8) as usize,
            cmd_valid: s("io_cmd_valid_i"),
            cmd_ready: s("io_cmd_ready_o"),
            cmd_sqe: s("io_cmd_sqe_i"),
            cpl_valid: s("io_cpl_valid_o"),
            cpl_ready: s("io_cpl_ready_i"),
            cpl_cid: s("io_cpl_cid_o"),
            cpl_status: s("io_cpl_status_o"),
            cpl_dw0: s("io_cpl_dw0_o"),
            tx_valid: s("tx_valid_o"),
            tx_ready: s("tx_ready_i"),
            tx_data: s("tx_data_o"),
            tx_keep: s("tx_keep_o"),
            rx_valid: s("rx_valid_i"),
            rx_ready: s("rx_ready_o"),
            rx_data: s("rx_data_i"),
            rx_keep: s("rx_keep_i"),
            dgst: s("dgst_i"),
            cmds: VecDeque::new(),
            cmd_on: false,
            beats: VecDeque::new(),
            rx_on: false,
            rng: Rng::new(seed),
            idle,
            tx_bytes: Vec::new(),
            completions: Vec::new(),
            violations: Vec::new(),
            last_tx: None,
        };
        h.dgst.set(dgst);
        h
    }
}

impl Component for Harness {
    fn sample(&mut self, _cycle: u64) {
        if self.cmd_on && self.cmd_ready.is_high() {
            self.cmds.pop_front();
            self.cmd_on = false;
        }
        if self.rx_on && self.rx_ready.is_high() {
            self.beats.pop_front();
            self.rx_on = false;
        }
        if self.tx_valid.is_high() {
            let now = (self.tx_data.get_words(), self.tx_keep.get());
            if let Some(prev) = &self.last_tx {
                if *prev != now {
                    self.violations
                        .push("tx payload changed while valid and not ready".into());
                }
            }
            if self.tx_ready.is_high() {
                let (w, keep) = &now;
                let n = keep.trailing_ones() as usize;
                if *keep != (1u64 << n) - 1 || n == 0 {
                    self.violations.push(format!(
                        "tx keep {keep:#x} is not a run of ones from lane 0"
                    ));
                }
                for i in 0..n {
                    self.tx_bytes.push((w[i / 4] >> (8 * (i % 4))) as u8);
                }
                self.last_tx = None;
            } else {
                self.last_tx = Some(now);
            }
        } else if self.last_tx.is_some() {
            self.violations
                .push("tx valid fell before the transfer".into());
            self.last_tx = None;
        }
        if self.cpl_valid.is_high() && self.cpl_ready.is_high() {
            self.completions.push(Completion {
                cid: self.cpl_cid.get() as u16,
                status: self.cpl_status.get() as u16,
                dw0: self.cpl_dw0.get() as u32,
            });
        }
    }

    fn drive(&mut self, _cycle: u64) {
        if !self.cmd_on && !self.cmds.is_empty() && !self.rng.chance(self.idle.0) {
            self.cmd_on = true;
            self.cmd_sqe.set_words(&words(&self.cmds[0]));
        }
        self.cmd_valid.set(u64::from(self.cmd_on));
        if !self.rx_on && !self.beats.is_empty() && !self.rng.chance(self.idle.1) {
            self.rx_on = true;
            let b = &self.beats[0];
            let mut padded = b.clone();
            padded.resize(self.lanes, 0);
            self.rx_data.set_words(&words(&padded));
            self.rx_keep.set((1u64 << b.len()) - 1);
        }
        self.rx_valid.set(u64::from(self.rx_on));
        self.tx_ready.set(u64::from(!self.rng.chance(self.idle.2)));
        self.cpl_ready.set(u64::from(!self.rng.chance(self.idle.3)));
    }
}

/// The scenario with data commands turned into data-less ones (the RTL has no data PDUs yet).
fn dataless(mut sc: Scenario) -> Scenario {
    for c in &mut sc.cmds {
        c.kind = match c.kind {
            Kind::Read => Kind::OutOfRange,
            Kind::Write => Kind::Flush,
            k => k,
        };
    }
    sc
}

/// Stream idle and backpressure percentages, from the scenario's seed.
fn idles(seed: u64) -> (u8, u8, u8, u8) {
    let mut r = Rng::new(seed ^ 0x1d1e);
    let mut p = || [0u8, 10, 30, 60][r.below(4) as usize];
    (p(), p(), p(), p())
}

/// Runs the RTL on a scenario.
pub fn run_rtl(sc: &Scenario, waves: Option<&Path>) -> Result<(), String> {
    let subs = sc.submitted();
    let mut target = Target::new(sc.target());
    let mut sim = Sim::<Top>::maybe_waves(waves);
    let dgst = u64::from(sc.hdgst) | u64::from(sc.ddgst) << 1;
    let h = sim.add(Harness::new(&sim, sc.seed, idles(sc.seed), dgst));
    for s in &subs {
        h.borrow_mut().cmds.push_back(s.sqe);
    }
    sim.reset(3);
    let mut rng = Rng::new(sc.seed ^ 0xbeef);
    let lanes = h.borrow().lanes;
    let mut quiet = 0u32;
    let limit = 200_000u64;
    // `regress --pcap`: the RTL's conversations with a well-behaved target are recorded too.
    let mut pcap = (sc.fault.is_none() && super::capturing()).then(Pcap::new);
    let mut conn = pcap.as_mut().map(|p| {
        TcpConn::open(
            p,
            Endpoints {
                client_ip: [192, 168, 45, 1],
                client_port: super::next_port(),
                server_ip: [192, 168, 45, 2],
                server_port: 4420,
            },
        )
    });
    loop {
        sim.step();
        let mut hb = h.borrow_mut();
        if !hb.violations.is_empty() {
            return Err(format!("stream protocol: {:?}", hb.violations));
        }
        let moved = !hb.tx_bytes.is_empty() || target.pending() > 0;
        if !hb.tx_bytes.is_empty() {
            let b = std::mem::take(&mut hb.tx_bytes);
            if let (Some(p), Some(c)) = (pcap.as_mut(), conn.as_mut()) {
                c.send(p, 0, &b);
            }
            target.receive(&b);
        }
        if rng.chance(50) {
            target.step();
        }
        if target.pending() > 0 && hb.beats.len() < 4 {
            let chunk = target.take(1 + rng.below(u64::from(sc.chunk.1)) as usize);
            if let (Some(p), Some(c)) = (pcap.as_mut(), conn.as_mut()) {
                c.send(p, 1, &chunk);
            }
            for piece in chunk.chunks(1 + rng.below(lanes as u64) as usize) {
                hb.beats.push_back(piece.to_vec());
            }
        }
        let done = hb.completions.len() >= subs.len() && hb.beats.is_empty();
        quiet = if done && !moved { quiet + 1 } else { 0 };
        if quiet > 300 {
            break;
        }
        if sim.cycle() > limit {
            return Err(format!(
                "hang: {} of {} commands completed after {limit} cycles; target holds {:?}",
                hb.completions.len(),
                subs.len(),
                target.held()
            ));
        }
    }
    if let (Some(p), Some(c)) = (pcap.as_mut(), conn.as_mut()) {
        c.close(p);
        super::record(p, target.received.len() + target.sent.len());
    }
    let out = Outcome {
        completions: h.borrow().completions.clone(),
        writes: Vec::new(),
    };
    check(sc, &subs, &out, &target)
}

/// The RTL against a well-behaved target.
pub struct NvmeTcpConnProp;

impl Property for NvmeTcpConnProp {
    type Input = Scenario;
    const NAME: &'static str = "nvme_tcp_conn";
    fn strategy() -> BoxedStrategy<Scenario> {
        strategy(false, 12).prop_map(dataless).boxed()
    }
    fn run(input: &Scenario, waves: Option<&Path>) -> Result<(), String> {
        run_rtl(input, waves)
    }
}

/// The RTL against a hostile target (the faults its PDUs can carry: ICResp fields, types,
/// lengths, CCCIDs, header digests).
pub struct NvmeTcpConnHostileProp;

impl Property for NvmeTcpConnHostileProp {
    type Input = Scenario;
    const NAME: &'static str = "nvme_tcp_conn_hostile";
    fn strategy() -> BoxedStrategy<Scenario> {
        strategy(true, 8)
            .prop_map(|sc| {
                let mut sc = dataless(sc);
                // Faults on data PDUs cannot happen without data commands.
                if let Some((f, at)) = sc.fault {
                    let f = match f {
                        Fault::DataoOutOfRange
                        | Fault::R2tOutOfRange
                        | Fault::R2tForRead
                        | Fault::DataDigest => Fault::WrongCccid,
                        f => f,
                    };
                    sc.fault = Some((f, at % 4));
                }
                sc
            })
            .boxed()
    }
    fn run(input: &Scenario, waves: Option<&Path>) -> Result<(), String> {
        run_rtl(input, waves)
    }
}

/// Drives the engine top: commands with SQ ids, per-connection rx beats (presented only when
/// the connection's `rx_space_o` bit is up, as the contract says), tx credits.
struct EngineHarness {
    n: usize,
    lanes: usize,
    sig: std::collections::HashMap<&'static str, Signal>,
    cmds: VecDeque<(u16, [u8; 64])>,
    cmd_on: bool,
    beats: Vec<VecDeque<Vec<u8>>>,
    rx_on: Option<usize>,
    rng: Rng,
    idle: (u8, u8, u8, u8),
    tx_bytes: Vec<Vec<u8>>,
    completions: Vec<(u16, Completion)>,
    violations: Vec<String>,
    last_tx: Option<(Vec<u32>, u64, u64)>,
    /// Bytes moved on tx and rx, all connections.
    tx_total: u64,
    rx_total: u64,
}

impl EngineHarness {
    fn s(&self, n: &str) -> &Signal {
        &self.sig[n]
    }
}

const ENGINE_PORTS: [&str; 23] = [
    "io_cmd_valid_i",
    "io_cmd_ready_o",
    "io_cmd_sqid_i",
    "io_cmd_sqe_i",
    "io_cpl_valid_o",
    "io_cpl_ready_i",
    "io_cpl_sqid_o",
    "io_cpl_cid_o",
    "io_cpl_status_o",
    "io_cpl_dw0_o",
    "tx_valid_o",
    "tx_ready_i",
    "tx_conn_o",
    "tx_data_o",
    "tx_keep_o",
    "tx_credit_i",
    "rx_valid_i",
    "rx_ready_o",
    "rx_conn_i",
    "rx_data_i",
    "rx_keep_i",
    "rx_space_o",
    "dgst_i",
];

impl Component for EngineHarness {
    fn sample(&mut self, _cycle: u64) {
        if self.cmd_on && self.s("io_cmd_ready_o").is_high() {
            self.cmds.pop_front();
            self.cmd_on = false;
        }
        if let Some(c) = self.rx_on {
            if !self.s("rx_ready_o").is_high() {
                self.violations
                    .push("rx beat presented under rx_space_o was not taken".into());
            }
            if let Some(b) = self.beats[c].pop_front() {
                self.rx_total += b.len() as u64;
            }
            self.rx_on = None;
        }
        if self.s("tx_valid_o").is_high() {
            let now = (
                self.s("tx_data_o").get_words(),
                self.s("tx_keep_o").get(),
                self.s("tx_conn_o").get(),
            );
            if let Some(prev) = &self.last_tx {
                if *prev != now {
                    self.violations
                        .push("tx payload changed while valid and not ready".into());
                }
            }
            if self.s("tx_ready_i").is_high() {
                let (w, keep, conn) = &now;
                let n = keep.trailing_ones() as usize;
                for i in 0..n {
                    self.tx_bytes[*conn as usize].push((w[i / 4] >> (8 * (i % 4))) as u8);
                }
                self.tx_total += n as u64;
                self.last_tx = None;
            } else {
                self.last_tx = Some(now);
            }
        } else if self.last_tx.is_some() {
            self.violations
                .push("tx valid fell before the transfer".into());
            self.last_tx = None;
        }
        if self.s("io_cpl_valid_o").is_high() && self.s("io_cpl_ready_i").is_high() {
            self.completions.push((
                self.s("io_cpl_sqid_o").get() as u16,
                Completion {
                    cid: self.s("io_cpl_cid_o").get() as u16,
                    status: self.s("io_cpl_status_o").get() as u16,
                    dw0: self.s("io_cpl_dw0_o").get() as u32,
                },
            ));
        }
    }

    fn drive(&mut self, _cycle: u64) {
        if !self.cmd_on && !self.cmds.is_empty() && !self.rng.chance(self.idle.0) {
            self.cmd_on = true;
            let (sqid, sqe) = self.cmds[0];
            self.s("io_cmd_sqid_i").set(u64::from(sqid));
            self.s("io_cmd_sqe_i").set_words(&words(&sqe));
        }
        self.s("io_cmd_valid_i").set(u64::from(self.cmd_on));
        // rx: a connection with a beat and space, chosen at random.
        let space = self.s("rx_space_o").get();
        let ready: Vec<usize> = (0..self.n)
            .filter(|&c| !self.beats[c].is_empty() && space >> c & 1 == 1)
            .collect();
        if !ready.is_empty() && !self.rng.chance(self.idle.1) {
            let c = ready[self.rng.below(ready.len() as u64) as usize];
            let mut padded = self.beats[c][0].clone();
            let len = padded.len();
            padded.resize(self.lanes, 0);
            self.s("rx_conn_i").set(c as u64);
            self.s("rx_data_i").set_words(&words(&padded));
            self.s("rx_keep_i").set((1u64 << len) - 1);
            self.rx_on = Some(c);
        }
        self.s("rx_valid_i").set(u64::from(self.rx_on.is_some()));
        let mut credit = self.rng.next_u64() & ((1 << self.n) - 1);
        if let Some((_, _, c)) = &self.last_tx {
            credit |= 1 << c;
        }
        self.s("tx_credit_i").set(credit);
        let tx_ready = !self.rng.chance(self.idle.2);
        let cpl_ready = !self.rng.chance(self.idle.3);
        self.s("tx_ready_i").set(u64::from(tx_ready));
        self.s("io_cpl_ready_i").set(u64::from(cpl_ready));
    }
}

/// Input of the engine property: one scenario per connection (the first one's digests apply to
/// all), and an SQ id outside the connections for some commands.
#[derive(Clone, Debug)]
pub struct EngineInput {
    conns: Vec<Scenario>,
    stray: u8,
    seed: u64,
}

/// Runs the engine top.
pub fn run_engine(input: &EngineInput, waves: Option<&Path>) -> Result<(), String> {
    use crate::rtl::NvmeTcpTop as E;
    let mut sim = Sim::<E>::maybe_waves(waves);
    let n = (sim.signal("rx_space_o").width()) as usize;
    let lanes = (sim.signal("tx_data_o").width() / 8) as usize;
    let mut conns: Vec<Scenario> = input.conns.iter().take(n).cloned().collect();
    while conns.len() < n {
        conns.push(conns[0].clone());
    }
    for c in &mut conns {
        c.hdgst = input.conns[0].hdgst;
        c.ddgst = input.conns[0].ddgst;
    }
    let subs: Vec<_> = conns.iter().map(|c| c.submitted()).collect();
    let mut targets: Vec<Target> = conns.iter().map(|c| Target::new(c.target())).collect();
    let mut rng = Rng::new(input.seed);
    // Interleave the connections' commands; add stray SQ ids.
    let mut order = Vec::new();
    let mut next = vec![0usize; n];
    let mut strays = Vec::new();
    while next.iter().zip(&subs).any(|(i, s)| *i < s.len()) {
        let c = rng.below(n as u64) as usize;
        if next[c] < subs[c].len() {
            order.push((c as u16 + 1, subs[c][next[c]].sqe));
            next[c] += 1;
        }
    }
    for k in 0..input.stray {
        let mut sqe = subs[0][0].sqe;
        let cid = 0x7000 + u16::from(k);
        sqe[2..4].copy_from_slice(&cid.to_le_bytes());
        let sqid = if rng.chance(50) {
            0
        } else {
            n as u16 + 1 + rng.below(100) as u16
        };
        strays.push((sqid, cid));
        let at = rng.below(order.len() as u64 + 1) as usize;
        order.insert(at, (sqid, sqe));
    }
    let sig = ENGINE_PORTS.iter().map(|p| (*p, sim.signal(p))).collect();
    let h = sim.add(EngineHarness {
        n,
        lanes,
        sig,
        cmds: order.into_iter().collect(),
        cmd_on: false,
        beats: vec![VecDeque::new(); n],
        rx_on: None,
        rng: Rng::new(input.seed ^ 0x77),
        idle: idles(input.seed),
        tx_bytes: vec![Vec::new(); n],
        completions: Vec::new(),
        violations: Vec::new(),
        last_tx: None,
        tx_total: 0,
        rx_total: 0,
    });
    let axil = Axil::attach(
        &mut sim,
        "s_axil",
        AxilConfig {
            seed: input.seed ^ 0xa1,
            idle_percent: 20,
            stall_percent: 20,
            ..AxilConfig::default()
        },
    );
    h.borrow()
        .s("dgst_i")
        .set(u64::from(conns[0].hdgst) | u64::from(conns[0].ddgst) << 1);
    sim.reset(3);
    let total: usize = subs.iter().map(Vec::len).sum::<usize>() + strays.len();
    let mut quiet = 0u32;
    loop {
        sim.step();
        let mut hb = h.borrow_mut();
        if !hb.violations.is_empty() {
            return Err(format!("stream protocol: {:?}", hb.violations));
        }
        let mut moved = false;
        for (c, t) in targets.iter_mut().enumerate() {
            if !hb.tx_bytes[c].is_empty() {
                let b = std::mem::take(&mut hb.tx_bytes[c]);
                t.receive(&b);
                moved = true;
            }
            if rng.chance(50) {
                t.step();
            }
            if t.pending() > 0 && hb.beats[c].len() < 4 {
                let chunk = t.take(1 + rng.below(u64::from(conns[c].chunk.1)) as usize);
                for piece in chunk.chunks(1 + rng.below(lanes as u64) as usize) {
                    hb.beats[c].push_back(piece.to_vec());
                }
                moved = true;
            }
        }
        let done = hb.completions.len() >= total && hb.beats.iter().all(VecDeque::is_empty);
        quiet = if done && !moved { quiet + 1 } else { 0 };
        if quiet > 300 {
            break;
        }
        if sim.cycle() > 400_000 {
            return Err(format!(
                "hang: {} of {total} commands completed",
                hb.completions.len()
            ));
        }
    }
    let all = h.borrow().completions.clone();
    for (sqid, cid) in &strays {
        let got: Vec<_> = all
            .iter()
            .filter(|(s, c)| s == sqid && c.cid == *cid)
            .collect();
        if got.len() != 1 || got[0].1.status != 0x22 {
            return Err(format!(
                "command {cid:#x} of SQ id {sqid} (no connection): completions {got:?}, expected one with 22h"
            ));
        }
    }
    for (c, t) in targets.iter().enumerate() {
        let out = Outcome {
            completions: all
                .iter()
                .filter(|(s, _)| usize::from(*s) == c + 1)
                .map(|(_, x)| x.clone())
                .collect(),
            writes: Vec::new(),
        };
        check(&conns[c], &subs[c], &out, t).map_err(|e| format!("connection {c}: {e}"))?;
    }
    // Counters, against what the targets saw.
    let (tx_total, rx_total) = (h.borrow().tx_total, h.borrow().rx_total);
    let count = |t: u8| -> u32 {
        targets
            .iter()
            .map(|x| x.received.iter().filter(|p| p.pdu_type() == t).count() as u32)
            .sum()
    };
    let icresp_ok = targets
        .iter()
        .filter(|t| {
            !matches!(
                t.committed,
                Some((
                    Fault::IcRespPfv
                        | Fault::IcRespCpda
                        | Fault::IcRespDigest
                        | Fault::IcRespMaxh2cdata,
                    _,
                    _
                ))
            )
        })
        .count() as u32;
    let resp = all
        .iter()
        .filter(|(s, c)| (1..=n as u16).contains(s) && c.status != 0x22)
        .count() as u32;
    let hdgst = targets
        .iter()
        .filter(|t| matches!(t.committed, Some((Fault::HeaderDigest, _, _))))
        .count() as u32;
    let want: [(&str, u32); 9] = [
        ("tx_icreq", n as u32),
        ("tx_capsule_cmd", count(0x04)),
        ("tx_h2c_termreq", count(0x02)),
        ("tx_bytes", tx_total as u32),
        ("rx_icresp", icresp_ok),
        ("rx_capsule_resp", resp),
        ("rx_c2h_termreq", 0),
        ("rx_bytes", rx_total as u32),
        ("hdgst_errors", hdgst),
    ];
    let mut bus = axil.mmio(&mut sim);
    for &(name, off, _) in nvme_tcp_csr::REGISTERS {
        let got = bus.read32(off);
        let w = want
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
            .ok_or_else(|| format!("no expectation for counter {name}"))?;
        if got != w {
            return Err(format!(
                "counter {name} (CSR {off:#04x}) is {got}, expected {w}"
            ));
        }
    }
    if let Some(v) = axil.master().violations.first() {
        return Err(format!("AXI4-Lite protocol: {v}"));
    }
    Ok(())
}

/// The engine top: several connections at once, some hostile, commands for SQ ids without one.
pub struct NvmeTcpEngineProp;

impl Property for NvmeTcpEngineProp {
    type Input = EngineInput;
    const NAME: &'static str = "nvme_tcp_engine";
    fn strategy() -> BoxedStrategy<EngineInput> {
        (
            proptest::collection::vec(
                proptest::prop_oneof![
                    NvmeTcpConnProp::strategy(),
                    NvmeTcpConnHostileProp::strategy()
                ],
                4,
            ),
            0u8..3,
            proptest::prelude::any::<u64>(),
        )
            .prop_map(|(conns, stray, seed)| EngineInput { conns, stray, seed })
            .boxed()
    }
    fn run(input: &EngineInput, waves: Option<&Path>) -> Result<(), String> {
        run_engine(input, waves)
    }
}

/// For `testbench bench --suite nvme-tcp`: one RTL connection, header digests on, no idle
/// cycles or backpressure, a target that answers at once, `count` data-less commands. Returns
/// (tx PDU bytes per cycle, rx PDU bytes per cycle), each over the window from the first to the
/// last byte of its direction after the connection is up, and the stream width in bytes.
pub fn bench_capsules(count: usize) -> Result<(f64, f64, usize), String> {
    let sc = Scenario {
        hdgst: true,
        ddgst: true,
        hpda: 0,
        icd_max: 0,
        maxh2cdata: 4096,
        cpda: 0,
        max_c2h: 4096,
        max_r2t: 4096,
        use_success: false,
        cmds: Vec::new(),
        fault: None,
        chunk: (4096, 4096),
        seed: 1,
    };
    let mut target = Target::new(sc.target());
    let mut sim = Sim::<Top>::new();
    let h = sim.add(Harness::new(&sim, 1, (0, 0, 0, 0), 3));
    for i in 0..count {
        let s = crate::models::nvme_tcp::sqe::rw(0x00, i as u16, 1, 0, 0, 0, 0);
        h.borrow_mut().cmds.push_back(s);
    }
    sim.reset(3);
    let lanes = h.borrow().lanes;
    // Totals per direction, and the window in which the bytes after the ICReq/ICResp moved.
    let (mut tx_total, mut tx_first, mut tx_last) = (0u64, None, 0u64);
    let (mut rx_pushed, mut rx_done, mut rx_first, mut rx_last) = (0u64, 0u64, None, 0u64);
    while h.borrow().completions.len() < count {
        if sim.cycle() > 100_000 + 100 * count as u64 {
            return Err("bench: the commands did not complete".into());
        }
        sim.step();
        let now = sim.cycle();
        let mut hb = h.borrow_mut();
        let queued: u64 = hb.beats.iter().map(|b| b.len() as u64).sum();
        let consumed = rx_pushed - queued;
        if consumed > rx_done && consumed > 128 {
            rx_first.get_or_insert(now);
            rx_last = now;
        }
        rx_done = consumed;
        if !hb.tx_bytes.is_empty() {
            let b = std::mem::take(&mut hb.tx_bytes);
            tx_total += b.len() as u64;
            if tx_total > 128 {
                tx_first.get_or_insert(now);
                tx_last = now;
            }
            target.receive(&b);
        }
        while target.step() {}
        let chunk = target.take(usize::MAX);
        rx_pushed += chunk.len() as u64;
        // A packed stream: top up the last queued beat (not the one on the bus) first.
        let mut rest = &chunk[..];
        if hb.beats.len() > 1 {
            let last = hb.beats.back_mut().unwrap();
            let n = (lanes - last.len()).min(rest.len());
            last.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
        }
        for piece in rest.chunks(lanes) {
            hb.beats.push_back(piece.to_vec());
        }
    }
    let (tx_bytes, rx_bytes) = (tx_total.saturating_sub(128), rx_done.saturating_sub(128));
    let frac = |bytes: u64, first: Option<u64>, last: u64| {
        first.map_or(0.0, |f| {
            bytes as f64 / ((last - f + 1) as f64 * lanes as f64)
        })
    };
    Ok((
        frac(tx_bytes, tx_first, tx_last),
        frac(rx_bytes, rx_first, rx_last),
        lanes,
    ))
}
