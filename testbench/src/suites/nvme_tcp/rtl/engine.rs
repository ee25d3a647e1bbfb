//! Property `nvme_tcp_engine`: the engine top, a target model per connection. Its case
//! (`EngineCase`: scenarios, host memory layout, the outcome and counter checks) and harness
//! (`EngineHarness`) are what the `tcp-nvme` suites reuse on the joined unit.

use super::*;

/// Drives the engine top: commands with SQ ids, completions (and, for the engine top alone,
/// per-connection rx beats presented only when the connection's `rx_space_o` bit is up, as the
/// contract says, and tx credits: the byte streams are [`ByteStreams`]). The joined unit
/// (`nvme_tcp_ip_*`) has no byte-stream ports: there the TCP engine is their other end.
pub struct EngineHarness {
    pub(super) sig: std::collections::HashMap<&'static str, Signal>,
    pub(super) cmds: VecDeque<(u16, [u8; 64])>,
    pub(super) cmd_on: bool,
    /// The byte streams, when the top has them.
    pub streams: Option<ByteStreams>,
    pub(super) rng: Rng,
    pub(super) idle: (u8, u8, u8, u8),
    /// Completions taken: (SQ id, completion).
    pub completions: Vec<(u16, Completion)>,
    /// io_cpl stream rule broken: an offer not taken changed or went away.
    pub violations: Vec<String>,
    last_cpl: Option<(u16, Completion)>,
}

impl EngineHarness {
    pub(super) fn s(&self, n: &str) -> &Signal {
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
            violations: Vec::new(),
            last_cpl: None,
        }
    }

    /// Asks every connection for the digests of `sc`.
    pub fn digests(&self, sc: &Scenario) {
        self.s("dgst_i")
            .set(u64::from(sc.hdgst) | u64::from(sc.ddgst) << 1);
    }
}

pub(super) const ENGINE_PORTS: [&str; 11] = [
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
        let offer = self.s("io_cpl_valid_o").is_high().then(|| {
            (
                self.s("io_cpl_sqid_o").get() as u16,
                Completion {
                    cid: self.s("io_cpl_cid_o").get() as u16,
                    status: self.s("io_cpl_status_o").get() as u16,
                    dw0: self.s("io_cpl_dw0_o").get() as u32,
                },
            )
        });
        let ready = self.s("io_cpl_ready_i").is_high();
        let taken = held_offer(&mut self.last_cpl, offer, ready, &mut self.violations);
        self.completions.extend(taken);
    }

    fn drive(&mut self, _cycle: u64) {
        if !self.cmd_on && !self.cmds.is_empty() && !self.rng.chance(self.idle.0) {
            self.cmd_on = true;
            let (sqid, sqe) = self.cmds[0];
            self.s("io_cmd_sqid_i").set(u64::from(sqid));
            set_bytes(self.s("io_cmd_sqe_i"), &sqe);
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
pub(super) struct Placed {
    pub(super) conn: usize,
    pub(super) cid: u16,
    pub(super) pieces: Vec<(u64, usize)>,
    pub(super) want: Vec<u8>,
}

/// Host memory for the engine property: the commands' read buffers and write data behind
/// PRP1/PRP2 (PRP lists when longer than two pages, random dword offsets) or one SGL data block
/// (any byte address), laid out from `BASE` with random bytes around them; read buffers hold the
/// complement of the namespace's bytes, so every byte written is seen; write data must not change.
pub(super) struct Layout {
    pub(super) placed: Vec<Placed>,
    pub(super) end: u64,
}

pub(super) const BASE: u64 = 0x10_0000;

pub(super) fn layout(
    subs: &mut [Vec<crate::suites::nvme_tcp::scenario::Submitted>],
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
pub(super) type Writes = Vec<(u16, u32, Vec<u8>)>;

/// Reads the buffers back: per connection, the writes seen (CID, offset, bytes); an error for a
/// byte that is neither the namespace's nor untouched, or any change outside the buffers. In
/// the buffers of connection `lost` (its TCP connection failed: a payload it was receiving is
/// ended with zeros) any byte is allowed; only the namespace's bytes count as writes.
pub(super) fn read_back(
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
    pub subs: Vec<Vec<crate::suites::nvme_tcp::scenario::Submitted>>,
    pub targets: Vec<Target>,
    pub(super) lay: Layout,
    pub(super) before: crate::drivers::axi_mem::Memory,
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
        let targets: Vec<Target> = conns.iter().map(|c| c.new_target()).collect();
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
                crate::suites::nvme_tcp::scenario::check_lost(&self.subs[c], &out, t)
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
    // Every write burst without a pause once started (the chip's interconnect needs it).
    mem.borrow_mut().w_gapless = true;
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
    if let Some(v) = mem.borrow().violations.first() {
        return Err(format!("host memory AXI4 protocol: {v}"));
    }
    if let Some(v) = h.borrow().violations.first() {
        return Err(format!("io_cpl stream protocol: {v}"));
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
