//! Properties `nvme_tcp_conn` and `nvme_tcp_conn_hostile`: the RTL connection
//! (`nvme_tcp_conn_*`) against the target model over its byte streams, with random beat sizes
//! (any beat may be short, PDUs straddle beats), random idle cycles and backpressure on every
//! stream, digests on and off, and a hostile target. Commands carry no data yet (Flush, a
//! refused opcode, a Read past the namespace's end): the RTL has no data PDUs. The outcome is
//! checked by `scenario::check`, as for the host model.

use super::scenario::{check, strategy, Kind, Outcome, Scenario};
use crate::drivers::axi_mem::{AxiMemConfig, AxiMemSlave};
use crate::drivers::axil::{Axil, AxilConfig};
use crate::drivers::tcp_streams::ByteStreams;
use crate::drivers::Clocked;
use crate::models::nvme_tcp_host::Completion;
use crate::models::nvme_tcp_target::{Fault, Target};
use crate::pcap::{Endpoints, Pcap, TcpConn};
use crate::prop::Property;
use crate::rng::Rng;
use crate::rtl::regs::nvme_tcp_csr;
use crate::rtl::NvmeTcpConnTop as Top;
use crate::sim::{Component, Dut, Signal, Sim};
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
    /// The DMA engine's side of the connection: commands taken (slot, PRP1, off, dlen), the
    /// payload bytes of the head one, completions owed (slot).
    dma: Option<DmaSide>,
}

/// Stands in for the DMA engine on a lone connection: takes `dma_cmd`, collects `dma_data`
/// (checking its framing), answers on `dma_done`, and records each write as (PRP1, offset,
/// bytes) for the scenario check; serves reads (`write` 0) on `dma_rdata` from the write data
/// of the command whose PRP1 it names, and fails the `fail_read`-th read (status 04h, zeros
/// from a random byte on), if set.
struct DmaSide {
    cmd_valid: Signal,
    cmd_ready: Signal,
    cmd_tag: Signal,
    cmd_write: Signal,
    cmd_dptr: Signal,
    cmd_off: Signal,
    cmd_dlen: Signal,
    data_valid: Signal,
    data_ready: Signal,
    data_data: Signal,
    data_keep: Signal,
    data_last: Signal,
    done_valid: Signal,
    done_tag: Signal,
    done_status: Signal,
    rd_valid: Signal,
    rd_ready: Signal,
    rd_data: Signal,
    rd_keep: Signal,
    rd_last: Signal,
    /// Write data by PRP1.
    host: std::collections::HashMap<u64, Vec<u8>>,
    /// Reads to serve: (tag, bytes, status), the head's next byte, a beat on the bus.
    reads: VecDeque<(u64, Vec<u8>, u64)>,
    rd_pos: usize,
    rd_on: bool,
    /// Reads taken so far, and the one to fail.
    reads_taken: u32,
    fail_read: Option<u32>,
    /// The read that failed: (PRP1, offset, length).
    failed: Option<(u64, u32, u32)>,
    cmds: VecDeque<(u64, u64, u32, u32)>,
    bytes: Vec<u8>,
    owed: VecDeque<(u64, u64)>,
    writes: Vec<(u64, u32, Vec<u8>)>,
    cmd_r: bool,
    data_r: bool,
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
            dma: Some(DmaSide {
                cmd_valid: s("dma_cmd_valid_o"),
                cmd_ready: s("dma_cmd_ready_i"),
                cmd_tag: s("dma_cmd_tag_o"),
                cmd_write: s("dma_cmd_write_o"),
                cmd_dptr: s("dma_cmd_dptr_o"),
                cmd_off: s("dma_cmd_off_o"),
                cmd_dlen: s("dma_cmd_dlen_o"),
                data_valid: s("dma_data_valid_o"),
                data_ready: s("dma_data_ready_i"),
                data_data: s("dma_data_data_o"),
                data_keep: s("dma_data_keep_o"),
                data_last: s("dma_data_last_o"),
                done_valid: s("dma_done_valid_i"),
                done_tag: s("dma_done_tag_i"),
                done_status: s("dma_done_status_i"),
                rd_valid: s("dma_rdata_valid_i"),
                rd_ready: s("dma_rdata_ready_o"),
                rd_data: s("dma_rdata_data_i"),
                rd_keep: s("dma_rdata_keep_i"),
                rd_last: s("dma_rdata_last_i"),
                host: Default::default(),
                reads: VecDeque::new(),
                rd_pos: 0,
                rd_on: false,
                reads_taken: 0,
                fail_read: None,
                failed: None,
                cmds: VecDeque::new(),
                bytes: Vec::new(),
                owed: VecDeque::new(),
                writes: Vec::new(),
                cmd_r: false,
                data_r: false,
            }),
        };
        h.dgst.set(dgst);
        h
    }
}

impl DmaSide {
    fn sample(&mut self, lanes: usize, violations: &mut Vec<String>) {
        if self.rd_on && self.rd_ready.is_high() {
            self.rd_on = false;
            self.rd_pos += lanes;
            if self.rd_pos >= self.reads[0].1.len() {
                let (tag, _, st) = self.reads.pop_front().unwrap();
                self.rd_pos = 0;
                self.owed.push_back((tag, st));
            }
        }
        if self.cmd_valid.is_high() && self.cmd_r {
            let prp1 = self.cmd_dptr.get_words();
            let prp1 = u64::from(prp1[0]) | u64::from(prp1[1]) << 32;
            let (tag, off, dlen) = (
                self.cmd_tag.get(),
                self.cmd_off.get() as u32,
                self.cmd_dlen.get() as u32,
            );
            if self.cmd_write.is_high() {
                self.cmds.push_back((tag, prp1, off, dlen));
            } else {
                let src = self.host.get(&prp1).cloned().unwrap_or_default();
                let (o, n) = (off as usize, dlen as usize);
                if n == 0 || o + n > src.len() {
                    violations.push(format!(
                        "dma_cmd read {n} bytes at {o} of a write of {} bytes (PRP1 {prp1:#x})",
                        src.len()
                    ));
                } else {
                    let mut bytes = src[o..o + n].to_vec();
                    let mut st = 0;
                    if self.fail_read == Some(self.reads_taken) {
                        let from = (prp1 as usize ^ n) % n;
                        bytes[from..].fill(0);
                        st = 0x004;
                        self.failed = Some((prp1, off, dlen));
                    }
                    self.reads.push_back((tag, bytes, st));
                }
                self.reads_taken += 1;
            }
        }
        if self.data_valid.is_high() && self.data_r {
            let w = self.data_data.get_words();
            let keep = self.data_keep.get();
            let n = keep.trailing_ones() as usize;
            let last = self.data_last.is_high();
            if n == 0 || keep != (1u64 << n) - 1 || (!last && n != lanes) {
                violations.push(format!("dma_data keep {keep:#x} (last {last})"));
            }
            for i in 0..n {
                self.bytes.push((w[i / 4] >> (8 * (i % 4))) as u8);
            }
            if last {
                match self.cmds.pop_front() {
                    Some((tag, prp1, off, dlen)) => {
                        let b = std::mem::take(&mut self.bytes);
                        if b.len() != dlen as usize {
                            violations.push(format!(
                                "dma_data carried {} bytes for a command of {dlen}",
                                b.len()
                            ));
                        }
                        self.writes.push((prp1, off, b));
                        self.owed.push_back((tag, 0));
                    }
                    None => violations.push("dma_data before its dma_cmd".into()),
                }
            }
        }
        if self.done_valid.is_high() {
            self.owed.pop_front();
        }
    }

    fn drive(&mut self, rng: &mut Rng, idle: u8, lanes: usize) {
        if !self.rd_on && !self.reads.is_empty() && !rng.chance(idle) {
            self.rd_on = true;
            let b = &self.reads[0].1;
            let end = (self.rd_pos + lanes).min(b.len());
            let mut beat = b[self.rd_pos..end].to_vec();
            let n = beat.len();
            beat.resize(lanes, 0);
            self.rd_data.set_words(&words(&beat));
            self.rd_keep
                .set(if n == 64 { u64::MAX } else { (1u64 << n) - 1 });
            self.rd_last.set(u64::from(end == b.len()));
        }
        self.rd_valid.set(u64::from(self.rd_on));
        self.cmd_r = !rng.chance(idle);
        self.data_r = !self.cmds.is_empty() && !rng.chance(idle);
        self.cmd_ready.set(u64::from(self.cmd_r));
        self.data_ready.set(u64::from(self.data_r));
        let done = !self.owed.is_empty() && !rng.chance(idle);
        self.done_valid.set(u64::from(done));
        if let Some((tag, st)) = self.owed.front() {
            self.done_tag.set(*tag);
            self.done_status.set(*st);
        }
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
        if let Some(d) = self.dma.as_mut() {
            d.sample(self.lanes, &mut self.violations);
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
        if let Some(d) = self.dma.as_mut() {
            d.drive(&mut self.rng, self.idle.2, self.lanes);
        }
    }
}

/// The scenario for the RTL: the configuration's in-capsule data limit (host and target), and
/// with data digests the target's C2HData no larger than the hold buffer.
fn rtl_fit(mut sc: Scenario) -> Scenario {
    sc.icd_max = ICD_BYTES;
    if sc.ddgst {
        sc.max_c2h = sc.max_c2h.min(HOLD_BYTES);
    }
    sc
}

/// The configuration's `nvme_tcp.c2h_hold_bytes` (the hold buffer of a connection).
pub const HOLD_BYTES: u32 = crate::rtl::config::NVME_TCP_C2H_HOLD_BYTES;

/// The configuration's `nvme_tcp.in_capsule_bytes` (writes up to this size carry their data in
/// the CapsuleCmd).
pub const ICD_BYTES: u32 = crate::rtl::config::NVME_TCP_IN_CAPSULE_BYTES;

/// Stream idle and backpressure percentages, from the scenario's seed.
pub(crate) fn idles(seed: u64) -> (u8, u8, u8, u8) {
    let mut r = Rng::new(seed ^ 0x1d1e);
    let mut p = || [0u8, 10, 30, 60][r.below(4) as usize];
    (p(), p(), p(), p())
}

/// The data PDUs a well-behaved target may send at most for the scenario's reads (C2HData)
/// and writes (R2Ts, and the H2CData answering them).
fn c2h_pdus(sc: &Scenario) -> u64 {
    sc.cmds
        .iter()
        .map(|c| {
            let len = (u64::from(c.nlb) + 1) * 512;
            match c.kind {
                Kind::Read => len.div_ceil(u64::from(sc.max_c2h.max(1))),
                Kind::Write => 2 * len.div_ceil(u64::from(sc.max_r2t.max(1))) + len / 4096,
                _ => 0,
            }
        })
        .sum()
}

/// Bytes the scenario's reads and writes carry.
fn read_bytes(sc: &Scenario) -> u64 {
    sc.cmds
        .iter()
        .filter(|c| matches!(c.kind, Kind::Read | Kind::Write))
        .map(|c| (u64::from(c.nlb) + 1) * 512)
        .sum()
}

/// Runs the RTL on a scenario.
pub fn run_rtl(sc: &Scenario, waves: Option<&Path>) -> Result<(), String> {
    run_rtl_with(sc, None, waves)
}

/// Runs the RTL on a scenario; `fail_read`: the host memory read (0 first) that fails.
fn run_rtl_with(sc: &Scenario, fail_read: Option<u32>, waves: Option<&Path>) -> Result<(), String> {
    let subs = sc.submitted();
    let mut target = Target::new(sc.target());
    let mut sim = Sim::<Top>::maybe_waves(waves);
    let dgst = u64::from(sc.hdgst) | u64::from(sc.ddgst) << 1;
    let h = sim.add(Harness::new(&sim, sc.seed, idles(sc.seed), dgst));
    h.borrow_mut().dma.as_mut().unwrap().fail_read = fail_read;
    for s in &subs {
        h.borrow_mut().cmds.push_back(s.sqe);
        if s.kind == Kind::Write {
            let prp1 = u64::from_le_bytes(s.sqe[24..32].try_into().unwrap());
            let mut hb = h.borrow_mut();
            hb.dma.as_mut().unwrap().host.insert(prp1, s.data.clone());
        }
    }
    sim.reset(3);
    let mut rng = Rng::new(sc.seed ^ 0xbeef);
    let lanes = h.borrow().lanes;
    let mut quiet = 0u32;
    let limit = 200_000 + 80 * c2h_pdus(sc) + 4 * read_bytes(sc);
    // `regress --pcap`: the RTL's conversations with a well-behaved target are recorded too
    // (not those with CPDA padding, which Wireshark 4.0 ignores, nor a failed host memory read,
    // whose H2CData carries a wrong data digest on purpose).
    let recordable = sc.fault.is_none() && sc.cpda == 0 && fail_read.is_none();
    let mut pcap = (recordable && super::capturing()).then(Pcap::new);
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
    // Writes by PRP1 (unique per command) back to CIDs.
    let by_prp: std::collections::HashMap<u64, u16> = subs
        .iter()
        .map(|s| {
            (
                u64::from_le_bytes(s.sqe[24..32].try_into().unwrap()),
                crate::models::nvme_tcp::sqe::cid(&s.sqe),
            )
        })
        .collect();
    let hb = h.borrow();
    let failed = hb.dma.as_ref().unwrap().failed;
    let mut writes = Vec::new();
    for (prp1, off, b) in &hb.dma.as_ref().unwrap().writes {
        let cid = by_prp
            .get(prp1)
            .ok_or_else(|| format!("host memory write through PRP1 {prp1:#x}, no command's"))?;
        writes.push((*cid, *off, b.clone()));
    }
    let out = Outcome {
        completions: hb.completions.clone(),
        writes,
    };
    match failed {
        None => check(sc, &subs, &out, &target),
        Some((prp1, off, dlen)) => {
            let cid = *by_prp
                .get(&prp1)
                .ok_or("a failed read through no command's PRP1")?;
            check_read_failed(sc, &subs, &out, &target, cid, off, dlen)
        }
    }
}

/// The outcome after the host memory read of an H2CData or of a CapsuleCmd's in-capsule data
/// (CCCID `cid`, DATAO `off`, DATAL `dlen`) failed: that PDU was the host's last (framing kept, its data digest wrong if
/// negotiated), no TermReq followed, the command completed with the DMA status (04h), every
/// other command with its answer or 22h, and the namespaces hold what the successful writes
/// wrote.
fn check_read_failed(
    sc: &Scenario,
    subs: &[super::scenario::Submitted],
    out: &Outcome,
    target: &Target,
    cid: u16,
    off: u32,
    dlen: u32,
) -> Result<(), String> {
    use crate::models::nvme_tcp::{sqe, Pdu};
    use crate::models::nvme_tcp_target::status;
    let digest_flagged = target
        .violations
        .iter()
        .filter(|v| v.contains("bad data digest"))
        .count();
    if target.violations.len() != digest_flagged || digest_flagged != usize::from(sc.ddgst) {
        return Err(format!(
            "after a failed host memory read (data digests {}), the target found: {:?}",
            sc.ddgst, target.violations
        ));
    }
    if !target.term_reqs.is_empty() || target.bytes_after_term > 0 {
        return Err(format!(
            "the host sent TermReqs {:x?} after a failed host memory read",
            target.term_reqs
        ));
    }
    match target.received.last() {
        Some(Pdu::Data {
            c2h: false,
            cccid,
            datao,
            data,
            ..
        }) if *cccid == cid && *datao == off && data.len() as u32 == dlen => {}
        Some(Pdu::CapsuleCmd { sqe: q, data })
            if sqe::cid(q) == cid && off == 0 && data.len() as u32 == dlen => {}
        other => {
            return Err(format!(
                "the failed read's H2CData (CCCID {cid:#x}, DATAO {off}, DATAL {dlen}) is not the host's last PDU: {other:?}"
            ))
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for c in &out.completions {
        if !seen.insert(c.cid) {
            return Err(format!("CID {:#x} completed twice", c.cid));
        }
        let s = subs
            .iter()
            .find(|s| sqe::cid(&s.sqe) == c.cid)
            .ok_or_else(|| format!("completion for CID {:#x}, never submitted", c.cid))?;
        let answer = match s.kind {
            Kind::BadOpcode => status::INVALID_OPCODE,
            Kind::OutOfRange => status::LBA_OUT_OF_RANGE,
            _ => 0,
        };
        let ok = if c.cid == cid {
            c.status == 0x004
        } else {
            c.status == answer || c.status == 0x22
        };
        if !ok {
            return Err(format!(
                "CID {:#x} ({:?}) completed with {:#x} after the failed read of CID {cid:#x}",
                c.cid, s.kind, c.status
            ));
        }
        if c.status == 0 && s.kind == Kind::Read {
            let mut covered = vec![false; s.len];
            for (w, o, b) in &out.writes {
                if *w == c.cid {
                    covered[*o as usize..*o as usize + b.len()].fill(true);
                }
            }
            if covered.iter().any(|c| !c) {
                return Err(format!(
                    "CID {:#x}: a successful read not all written",
                    c.cid
                ));
            }
        }
    }
    if seen.len() != subs.len() {
        return Err(format!(
            "{} of {} commands completed after a failed read",
            seen.len(),
            subs.len()
        ));
    }
    super::scenario::check_namespaces(subs, &out.completions, target)
}

/// The RTL when one host memory read of an H2CData payload fails (the DMA engine's status 04h):
/// no garbage is sent as good data, the connection ends, the command gets the DMA status.
pub struct NvmeTcpConnDmaErrorProp;

impl Property for NvmeTcpConnDmaErrorProp {
    type Input = (Scenario, u32);
    const NAME: &'static str = "nvme_tcp_conn_dma_error";
    fn strategy() -> BoxedStrategy<(Scenario, u32)> {
        (
            strategy(false, 6).prop_map(|sc| {
                let mut sc = rtl_fit(sc);
                sc.cmds[0].kind = Kind::Write;
                sc
            }),
            0u32..3,
        )
            .boxed()
    }
    fn run(input: &(Scenario, u32), waves: Option<&Path>) -> Result<(), String> {
        run_rtl_with(&input.0, Some(input.1), waves)
    }
}

/// The RTL against a well-behaved target.
pub struct NvmeTcpConnProp;

impl Property for NvmeTcpConnProp {
    type Input = Scenario;
    const NAME: &'static str = "nvme_tcp_conn";
    fn strategy() -> BoxedStrategy<Scenario> {
        strategy(false, 12).prop_map(rtl_fit).boxed()
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
                let mut sc = rtl_fit(sc);
                // Faults on C2HData (a payload out of range, a corrupted data digest) and on
                // R2Ts (out of range, a second one while the first is answered) get a sixth of
                // the cases each.
                if let Some((f, at)) = sc.fault {
                    let mut at = at % 4;
                    let f = match (sc.seed % 6, f) {
                        (0, _) => {
                            sc.ddgst = true;
                            Fault::DataDigest
                        }
                        (1, _) => Fault::DataoOutOfRange,
                        (2, _) => Fault::R2tOutOfRange,
                        (3, _) => {
                            // A write of 16 KiB whose first R2T is stretched over all of it.
                            sc.cmds[0].kind = Kind::Write;
                            sc.cmds[0].nlb = 31;
                            at = 0;
                            Fault::R2tWhilePending
                        }
                        (_, f) => f,
                    };
                    if f == Fault::DataDigest {
                        sc.max_c2h = sc.max_c2h.min(HOLD_BYTES);
                    }
                    sc.fault = Some((f, at));
                }
                sc
            })
            .boxed()
    }
    fn run(input: &Scenario, waves: Option<&Path>) -> Result<(), String> {
        run_rtl(input, waves)
    }
}

/// Drives the engine top: commands with SQ ids, completions (and, for the engine top alone,
/// per-connection rx beats presented only when the connection's `rx_space_o` bit is up, as the
/// contract says, and tx credits: the byte streams are [`ByteStreams`]). The joined unit
/// (`nvme_tcp_ip_*`) has no byte-stream ports: there the TCP engine is their other end.
pub struct EngineHarness {
    sig: std::collections::HashMap<&'static str, Signal>,
    cmds: VecDeque<(u16, [u8; 64])>,
    cmd_on: bool,
    /// The byte streams, when the top has them.
    pub streams: Option<ByteStreams>,
    rng: Rng,
    idle: (u8, u8, u8, u8),
    /// Completions taken: (SQ id, completion).
    pub completions: Vec<(u16, Completion)>,
}

impl EngineHarness {
    fn s(&self, n: &str) -> &Signal {
        &self.sig[n]
    }

    /// A harness on `sim`'s command ports submitting `order`, with the byte streams when
    /// `streams`; idle and backpressure percentages from `seed`.
    pub fn new<M: Dut>(
        sim: &Sim<M>,
        order: Vec<(u16, [u8; 64])>,
        streams: bool,
        seed: u64,
    ) -> Self {
        let idle = idles(seed);
        EngineHarness {
            sig: ENGINE_PORTS.iter().map(|p| (*p, sim.signal(p))).collect(),
            cmds: order.into_iter().collect(),
            cmd_on: false,
            streams: streams.then(|| ByteStreams::new(sim, "", (idle.1, idle.2))),
            rng: Rng::new(seed ^ 0x77),
            idle,
            completions: Vec::new(),
        }
    }

    /// Asks every connection for the digests of `sc`.
    pub fn digests(&self, sc: &Scenario) {
        self.s("dgst_i")
            .set(u64::from(sc.hdgst) | u64::from(sc.ddgst) << 1);
    }
}

const ENGINE_PORTS: [&str; 11] = [
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
    "dgst_i",
];

impl Component for EngineHarness {
    fn sample(&mut self, _cycle: u64) {
        if self.cmd_on && self.s("io_cmd_ready_o").is_high() {
            self.cmds.pop_front();
            self.cmd_on = false;
        }
        if let Some(st) = self.streams.as_mut() {
            st.sample();
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
        if let Some(st) = self.streams.as_mut() {
            st.drive(&mut self.rng);
        }
        let cpl_ready = !self.rng.chance(self.idle.3);
        self.s("io_cpl_ready_i").set(u64::from(cpl_ready));
    }
}

/// Input of the engine property: one scenario per connection (the first one's digests apply to
/// all), and an SQ id outside the connections for some commands.
#[derive(Clone, Debug)]
pub struct EngineInput {
    pub conns: Vec<Scenario>,
    pub stray: u8,
    pub seed: u64,
}

/// A read command's buffer in host memory: its pieces in data order, and what the namespace
/// holds for it.
struct Placed {
    conn: usize,
    cid: u16,
    pieces: Vec<(u64, usize)>,
    want: Vec<u8>,
}

/// Host memory for the engine property: the commands' read buffers and write data behind
/// PRP1/PRP2 (PRP lists when longer than two pages, random dword offsets) or one SGL data block
/// (any byte address), laid out from `BASE` with random bytes around them; read buffers hold the
/// complement of the namespace's bytes, so every byte written is seen; write data must not change.
struct Layout {
    placed: Vec<Placed>,
    end: u64,
}

const BASE: u64 = 0x10_0000;

fn layout(
    subs: &mut [Vec<super::scenario::Submitted>],
    mem: &mut crate::drivers::axi_mem::Memory,
    rng: &mut Rng,
) -> Layout {
    use crate::models::nvme_tcp::sqe;
    use crate::models::nvme_tcp_target::{pattern, LBA_BYTES};
    let mut next = BASE;
    let mut page = |n: u64| {
        let a = next;
        next += n * 4096;
        a
    };
    let mut placed = Vec::new();
    let mut sources = Vec::new();
    for (conn, cs) in subs.iter_mut().enumerate() {
        for s in cs.iter_mut() {
            let write = s.kind == Kind::Write;
            if !(write || matches!(s.kind, Kind::Read | Kind::OutOfRange)) || s.len == 0 {
                continue;
            }
            let ns = sqe::nsid(&s.sqe);
            let want: Vec<u8> = if write {
                s.data.clone()
            } else {
                (0..s.len)
                    .map(|k| {
                        let p = s.ns_offset + k;
                        pattern(ns, (p / LBA_BYTES) as u64, p % LBA_BYTES)
                    })
                    .collect()
            };
            let mut pieces = Vec::new();
            let mut dptr = [0u8; 16];
            if rng.chance(25) {
                // One SGL data block.
                let a = page((s.len as u64 + 8191) / 4096) + rng.below(4096);
                pieces.push((a, s.len));
                dptr[0..8].copy_from_slice(&a.to_le_bytes());
                dptr[8..12].copy_from_slice(&(s.len as u32).to_le_bytes());
                s.sqe[1] = (s.sqe[1] & 0x3f) | 0x40;
            } else {
                let off = if rng.chance(50) {
                    0
                } else {
                    rng.below(1024) * 4
                };
                let first = (4096 - off as usize).min(s.len);
                let rest = s.len - first;
                let pages = rest.div_ceil(4096);
                let mut addrs = vec![page(1) + off];
                for _ in 0..pages {
                    addrs.push(page(1));
                }
                let prp2 = match pages {
                    0 => 0,
                    1 => addrs[1],
                    _ => {
                        let list = page(1) + rng.below(16) * 8;
                        for (k, a) in addrs[1..].iter().enumerate() {
                            mem.write_u64(list + 8 * k as u64, *a);
                        }
                        list
                    }
                };
                pieces.push((addrs[0], first));
                for (k, a) in addrs[1..].iter().enumerate() {
                    pieces.push((*a, (rest - 4096 * k).min(4096)));
                }
                dptr[0..8].copy_from_slice(&addrs[0].to_le_bytes());
                dptr[8..16].copy_from_slice(&prp2.to_le_bytes());
                s.sqe[1] &= 0x3f;
            }
            s.sqe[24..40].copy_from_slice(&dptr);
            if write {
                // A write's data: read by the DMA engine, never changed.
                sources.push((pieces, want));
                continue;
            }
            placed.push(Placed {
                conn,
                cid: sqe::cid(&s.sqe),
                pieces,
                want,
            });
        }
    }
    let end = next + 4096;
    // Random bytes everywhere (PRP lists excepted), then the complements in the buffers.
    let mut a = BASE;
    while a < end {
        if mem.read_u64(a) == 0 && mem.read_u64(a + 8) == 0 {
            let mut junk = vec![0u8; 4096 - (a % 4096) as usize];
            for b in junk.iter_mut() {
                *b = rng.next_u64() as u8;
            }
            // Keep list entries: only fill words that are still zero.
            for (k, chunk) in junk.chunks(8).enumerate() {
                let w = a + 8 * k as u64;
                if mem.read_u64(w) == 0 {
                    mem.write(w, chunk);
                }
            }
        }
        a = (a / 4096 + 1) * 4096;
    }
    for (pieces, data) in &sources {
        let mut k = 0;
        for (addr, n) in pieces {
            mem.write(*addr, &data[k..k + n]);
            k += n;
        }
    }
    for p in &placed {
        let mut k = 0;
        for (addr, n) in &p.pieces {
            let c: Vec<u8> = p.want[k..k + n].iter().map(|b| !b).collect();
            mem.write(*addr, &c);
            k += n;
        }
    }
    Layout { placed, end }
}

/// Host-memory writes of one connection: (CID, offset in the command's data, bytes).
type Writes = Vec<(u16, u32, Vec<u8>)>;

/// Reads the buffers back: per connection, the writes seen (CID, offset, bytes); an error for a
/// byte that is neither the namespace's nor untouched, or any change outside the buffers. In
/// the buffers of connection `lost` (its TCP connection failed: a payload it was receiving is
/// ended with zeros) any byte is allowed; only the namespace's bytes count as writes.
fn read_back(
    lay: &Layout,
    before: &crate::drivers::axi_mem::Memory,
    after: &crate::drivers::axi_mem::Memory,
    n: usize,
    lost: Option<usize>,
) -> Result<Vec<Writes>, String> {
    let mut writes = vec![Vec::new(); n];
    let mut inside = vec![false; (lay.end - BASE) as usize];
    for p in &lay.placed {
        let mut k = 0usize;
        let mut run: Option<(u32, Vec<u8>)> = None;
        for (addr, len) in &p.pieces {
            let got = after.read_vec(*addr, *len);
            inside[(*addr - BASE) as usize..(*addr - BASE) as usize + len].fill(true);
            for (j, b) in got.iter().enumerate() {
                let off = k + j;
                let w = p.want[off];
                if *b == w {
                    match run.as_mut() {
                        Some((o, v)) if *o as usize + v.len() == off => v.push(*b),
                        _ => {
                            if let Some(r) = run.take() {
                                writes[p.conn].push((p.cid, r.0, r.1));
                            }
                            run = Some((off as u32, vec![*b]));
                        }
                    }
                } else if Some(p.conn) == lost {
                    if let Some(r) = run.take() {
                        writes[p.conn].push((p.cid, r.0, r.1));
                    }
                } else if *b != !w {
                    return Err(format!(
                        "connection {}: CID {:#x}: host memory byte {off} at {:#x} is {b:#04x}: neither the namespace's {w:#04x} nor untouched",
                        p.conn, p.cid, addr + j as u64
                    ));
                }
            }
            k += len;
        }
        if let Some(r) = run {
            writes[p.conn].push((p.cid, r.0, r.1));
        }
    }
    let a = before.read_vec(BASE, inside.len());
    let b = after.read_vec(BASE, inside.len());
    if let Some(i) = (0..inside.len()).find(|&i| !inside[i] && a[i] != b[i]) {
        return Err(format!(
            "host memory at {:#x}, outside every read buffer, changed from {:#04x} to {:#04x}",
            BASE + i as u64,
            a[i],
            b[i]
        ));
    }
    if after.pages() != before.pages() {
        return Err(format!(
            "host memory written outside the buffers' pages ({} pages before, {} after)",
            before.pages(),
            after.pages()
        ));
    }
    Ok(writes)
}

/// One case of an engine top, prepared: the scenarios (as many as the top has connections),
/// the commands as submitted with their host memory laid out, the targets, the order the
/// commands go in (stray SQ ids among them). What the engine top alone and the joined unit
/// (`nvme_tcp_ip_*`, suite `tcp`) share: only the byte streams' other end differs.
pub struct EngineCase {
    pub n: usize,
    pub conns: Vec<Scenario>,
    pub subs: Vec<Vec<super::scenario::Submitted>>,
    pub targets: Vec<Target>,
    lay: Layout,
    before: crate::drivers::axi_mem::Memory,
    /// Commands for SQ ids without a connection: (SQ id, CID).
    pub strays: Vec<(u16, u16)>,
    /// The submission order: (SQ id, SQE).
    pub order: Vec<(u16, [u8; 64])>,
    /// The case's random source, after the preparation.
    pub rng: Rng,
}

impl EngineCase {
    /// Prepares `input` for a top of `n` connections whose host memory is `mem` (the AXI4
    /// slave on `m_axi`).
    pub fn new(input: &EngineInput, n: usize, mem: &mut crate::drivers::axi_mem::Memory) -> Self {
        let mut conns: Vec<Scenario> = input.conns.iter().take(n).cloned().collect();
        while conns.len() < n {
            conns.push(conns[0].clone());
        }
        for c in &mut conns {
            c.hdgst = input.conns[0].hdgst;
            c.ddgst = input.conns[0].ddgst;
            if c.ddgst {
                c.max_c2h = c.max_c2h.min(HOLD_BYTES);
            }
        }
        let mut subs: Vec<_> = conns.iter().map(|c| c.submitted()).collect();
        let targets: Vec<Target> = conns.iter().map(|c| Target::new(c.target())).collect();
        let mut rng = Rng::new(input.seed);
        // The AXI4 slave's own draws came first (see `mem_config`).
        rng.next_u64();
        rng.below(3);
        rng.below(3);
        rng.below(2);
        let lay = layout(&mut subs, mem, &mut rng);
        let before = mem.clone();
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
        EngineCase {
            n,
            conns,
            subs,
            targets,
            lay,
            before,
            strays,
            order,
            rng,
        }
    }

    /// The AXI4 memory slave's settings for `input` (latencies and stalls drawn from its seed).
    pub fn mem_config(input: &EngineInput) -> AxiMemConfig {
        let mut rng = Rng::new(input.seed);
        AxiMemConfig {
            seed: rng.next_u64(),
            read_latency: 1..=12,
            write_latency: 0..=8,
            aw_stall: [0u8, 10, 40][rng.below(3) as usize],
            w_stall: [0u8, 10, 40][rng.below(3) as usize],
            b_idle: [0u8, 20][rng.below(2) as usize],
            ..AxiMemConfig::default()
        }
    }

    /// Completions the case expects: one per command.
    pub fn total(&self) -> usize {
        self.subs.iter().map(Vec::len).sum::<usize>() + self.strays.len()
    }

    /// A bound on the cycles the case needs on the byte streams alone.
    pub fn cycle_limit(&self) -> u64 {
        400_000 + 80 * self.data_pdus() + 4 * self.data_bytes()
    }

    /// The data PDUs (C2HData, R2T, H2CData) a well-behaved target's answers take at most.
    pub fn data_pdus(&self) -> u64 {
        self.conns.iter().map(c2h_pdus).sum()
    }

    /// The bytes the Reads and Writes carry.
    pub fn data_bytes(&self) -> u64 {
        self.conns.iter().map(read_bytes).sum()
    }

    /// Per connection: what its target holds and the host's commands not completed yet.
    pub fn hang_report(&self, completions: &[(u16, Completion)]) -> Vec<String> {
        self.targets
            .iter()
            .enumerate()
            .map(|(c, t)| {
                let open: Vec<String> = self.subs[c]
                    .iter()
                    .filter(|s| {
                        let cid = crate::models::nvme_tcp::sqe::cid(&s.sqe);
                        !completions
                            .iter()
                            .any(|(q, x)| usize::from(*q) == c + 1 && x.cid == cid)
                    })
                    .map(|s| {
                        format!(
                            "{:#x}:{:?}/{}",
                            crate::models::nvme_tcp::sqe::cid(&s.sqe),
                            s.kind,
                            s.len
                        )
                    })
                    .collect();
                format!(
                    "target holds {:?}, last received {:?}, {} bytes to send, {} sent, host open {open:?}",
                    t.held(),
                    t.received.last().map(|p| p.pdu_type()),
                    t.pending(),
                    t.sent.len(),
                )
            })
            .collect()
    }

    /// The outcome against the scenarios: exactly one 22h for each stray command, host memory
    /// byte for byte (`read_back`), each connection's completions, writes and namespaces
    /// (`scenario::check`).
    pub fn check(
        &self,
        all: &[(u16, Completion)],
        after: &crate::drivers::axi_mem::Memory,
    ) -> Result<(), String> {
        self.check_lost(all, after, None)
    }

    /// [`check`](Self::check) when the TCP connection of connection `lost` failed (its target
    /// stopped then): that connection by `scenario::check_lost`, the others as ever.
    pub fn check_lost(
        &self,
        all: &[(u16, Completion)],
        after: &crate::drivers::axi_mem::Memory,
        lost: Option<usize>,
    ) -> Result<(), String> {
        for (sqid, cid) in &self.strays {
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
        let mut writes = read_back(&self.lay, &self.before, after, self.n, lost)?;
        for (c, t) in self.targets.iter().enumerate() {
            let out = Outcome {
                completions: all
                    .iter()
                    .filter(|(s, _)| usize::from(*s) == c + 1)
                    .map(|(_, x)| x.clone())
                    .collect(),
                writes: std::mem::take(&mut writes[c]),
            };
            if Some(c) == lost {
                super::scenario::check_lost(&self.subs[c], &out, t)
            } else {
                check(&self.conns[c], &self.subs[c], &out, t)
            }
            .map_err(|e| format!("connection {c}: {e}"))?;
        }
        Ok(())
    }

    /// `nvme_tcp_csr`'s counters on `bus` against what the targets saw; `tx_total` and
    /// `rx_total`: bytes the engine sent and took on its byte streams, all connections.
    pub fn check_counters<C: Clocked + ?Sized>(
        &self,
        bus: &mut crate::drivers::axil::Mmio<'_, C>,
        tx_total: u64,
        rx_total: u64,
    ) -> Result<(), String> {
        let targets = &self.targets;
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
        // PDUs of a type the targets sent, less the one a fatal fault broke (always a target's
        // last PDU).
        let sent = |t: u8| -> u32 {
            targets
                .iter()
                .map(|x| {
                    let all = x.sent.iter().filter(|p| p[0] == t).count() as u32;
                    let broke = x.committed.is_some_and(|(f, _, _)| f != Fault::DataDigest)
                        && x.sent.last().is_some_and(|p| p[0] == t);
                    all - u32::from(broke)
                })
                .sum()
        };
        let resp = sent(0x05);
        let ddgst = targets
            .iter()
            .filter(|t| matches!(t.committed, Some((Fault::DataDigest, _, _))))
            .count() as u32;
        let hdgst = targets
            .iter()
            .filter(|t| matches!(t.committed, Some((Fault::HeaderDigest, _, _))))
            .count() as u32;
        let want: [(&str, u32); 13] = [
            ("tx_icreq", self.n as u32),
            ("tx_capsule_cmd", count(0x04)),
            ("tx_h2c_termreq", count(0x02)),
            ("tx_bytes", tx_total as u32),
            ("rx_icresp", icresp_ok),
            ("rx_capsule_resp", resp),
            ("rx_c2h_termreq", 0),
            ("rx_bytes", rx_total as u32),
            ("hdgst_errors", hdgst),
            ("rx_c2h_data", sent(0x07)),
            ("ddgst_errors", ddgst),
            ("tx_h2c_data", count(0x06)),
            ("rx_r2t", sent(0x09)),
        ];
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
        Ok(())
    }
}

/// Runs the engine top.
pub fn run_engine(input: &EngineInput, waves: Option<&Path>) -> Result<(), String> {
    use crate::rtl::NvmeTcpTop as E;
    let mut sim = Sim::<E>::maybe_waves(waves);
    let n = (sim.signal("rx_space_o").width()) as usize;
    let lanes = (sim.signal("tx_data_o").width() / 8) as usize;
    let mem = sim.add(AxiMemSlave::new(
        &sim,
        "m_axi",
        EngineCase::mem_config(input),
    ));
    let mut case = EngineCase::new(input, n, &mut mem.borrow_mut().mem);
    let h = sim.add(EngineHarness::new(
        &sim,
        std::mem::take(&mut case.order),
        true,
        input.seed,
    ));
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
    h.borrow().digests(&case.conns[0]);
    sim.reset(3);
    let total = case.total();
    let mut quiet = 0u32;
    let mut rng = std::mem::replace(&mut case.rng, Rng::new(0));
    loop {
        sim.step();
        let mut hbm = h.borrow_mut();
        let hb = &mut *hbm;
        let st = hb
            .streams
            .as_mut()
            .expect("the engine top has byte streams");
        if !st.violations.is_empty() {
            return Err(format!("stream protocol: {:?}", st.violations));
        }
        let mut moved = false;
        for (c, t) in case.targets.iter_mut().enumerate() {
            if !st.tx_bytes[c].is_empty() {
                let b = std::mem::take(&mut st.tx_bytes[c]);
                t.receive(&b);
                moved = true;
            }
            if rng.chance(50) {
                t.step();
            }
            if t.pending() > 0 && st.beats[c].len() < 4 {
                let chunk = t.take(1 + rng.below(u64::from(case.conns[c].chunk.1)) as usize);
                for piece in chunk.chunks(1 + rng.below(lanes as u64) as usize) {
                    st.beats[c].push_back(piece.to_vec());
                }
                moved = true;
            }
        }
        let done = hb.completions.len() >= total && st.beats.iter().all(VecDeque::is_empty);
        quiet = if done && !moved { quiet + 1 } else { 0 };
        if quiet > 300 {
            break;
        }
        if sim.cycle() > case.cycle_limit() {
            let why = case.hang_report(&hb.completions);
            let ports: Vec<String> = [
                "tx_valid_o",
                "tx_conn_o",
                "rx_space_o",
                "sq_space_o",
                "dead_o",
                "m_axi_arvalid_o",
                "m_axi_awvalid_o",
                "m_axi_wvalid_o",
                "m_axi_rvalid_i",
                "m_axi_rready_o",
                "m_axi_bvalid_i",
            ]
            .iter()
            .map(|p| format!("{p}={}", sim.signal(p).get()))
            .collect();
            return Err(format!(
                "hang: {} of {total} commands completed; {why:?}; {}",
                hb.completions.len(),
                ports.join(" ")
            ));
        }
    }
    let all = h.borrow().completions.clone();
    case.check(&all, &mem.borrow().mem)?;
    // Counters, against what the targets saw.
    let (tx_total, rx_total) = {
        let hb = h.borrow();
        let st = hb.streams.as_ref().expect("byte streams");
        (st.tx_total, st.rx_total)
    };
    case.check_counters(&mut axil.mmio(&mut sim), tx_total, rx_total)?;
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
    bench(count, None)
}

/// For `testbench bench --suite nvme-tcp`: as [`bench_capsules`], with `count` reads of
/// `blocks` 512-byte blocks each, the target sending C2HData PDUs of the hold buffer's size
/// (the last of a command shorter) and a CapsuleResp per command, the payload written through
/// a DMA side without backpressure. Returns (tx, rx) PDU bytes per cycle and the stream width.
pub fn bench_reads(count: usize, blocks: u16) -> Result<(f64, f64, usize), String> {
    bench(count, Some((0x02, blocks)))
}

/// For `testbench bench --suite nvme-tcp`: as [`bench_reads`], with `count` writes: the target
/// sends one R2T for each command's whole data and MAXH2CDATA [`BENCH_MAXH2CDATA`], the host
/// answers with H2CData PDUs read through a DMA side without stalls. Returns (tx, rx) PDU
/// bytes per cycle and the stream width.
pub fn bench_writes(count: usize, blocks: u16) -> Result<(f64, f64, usize), String> {
    bench(count, Some((0x01, blocks)))
}

/// MAXH2CDATA of the benchmark's target.
pub const BENCH_MAXH2CDATA: u32 = 8192;

/// The benchmarks' scenario (here and `bench --suite tcp`): digests on, in-capsule data up to
/// [`ICD_BYTES`], MAXH2CDATA [`BENCH_MAXH2CDATA`], a well-behaved target sending C2HData of up
/// to `max_c2h` bytes and R2Ts of up to `max_r2t`, the commands `cmds`.
pub fn bench_scenario(max_c2h: u32, max_r2t: u32, cmds: Vec<super::scenario::Cmd>) -> Scenario {
    Scenario {
        hdgst: true,
        ddgst: true,
        hpda: 0,
        icd_max: ICD_BYTES,
        maxh2cdata: BENCH_MAXH2CDATA,
        cpda: 0,
        max_c2h,
        max_r2t,
        use_success: false,
        cmds,
        fault: None,
        chunk: (4096, 4096),
        seed: 1,
    }
}

fn bench(count: usize, data_cmd: Option<(u8, u16)>) -> Result<(f64, f64, usize), String> {
    let read_blocks = data_cmd.map(|(_, b)| b);
    let sc = bench_scenario(4096, 4096, Vec::new());
    let mut tc = sc.target();
    tc.max_c2h = HOLD_BYTES;
    tc.max_r2t = 512 * (u32::from(read_blocks.unwrap_or(0)) + 1);
    tc.full_c2h = true;
    let mut target = Target::new(tc);
    let mut sim = Sim::<Top>::new();
    let h = sim.add(Harness::new(&sim, 1, (0, 0, 0, 0), 3));
    for i in 0..count {
        let s = match data_cmd {
            None => crate::models::nvme_tcp::sqe::rw(0x00, i as u16, 1, 0, 0, 0, 0),
            Some((opc, nlb)) => {
                let n = u64::from(nlb) + 1;
                let slba = (i as u64 * n) % (super::scenario::NS_BLOCKS / n * n);
                crate::models::nvme_tcp::sqe::rw(opc, i as u16, 1, slba, nlb, 0x1000, 0)
            }
        };
        h.borrow_mut().cmds.push_back(s);
        if let Some((0x01, nlb)) = data_cmd {
            let data = (0..512 * (usize::from(nlb) + 1)).map(|k| k as u8).collect();
            h.borrow_mut()
                .dma
                .as_mut()
                .unwrap()
                .host
                .insert(0x1000, data);
        }
    }
    sim.reset(3);
    let lanes = h.borrow().lanes;
    // Totals per direction, and the window in which the bytes after the ICReq/ICResp moved.
    let (mut tx_total, mut tx_first, mut tx_last) = (0u64, None, 0u64);
    let (mut rx_pushed, mut rx_done, mut rx_first, mut rx_last) = (0u64, 0u64, None, 0u64);
    while h.borrow().completions.len() < count {
        if sim.cycle() > 100_000 + 100 * count as u64 * u64::from(read_blocks.unwrap_or(0) + 1) {
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
