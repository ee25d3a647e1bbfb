//! Property `axi_interconnect`: `N` random AXI4 masters share host memory (an [`AxiMemSlave`]
//! with latency, reordering and interleaving across IDs, backpressure and injected errors)
//! through the interconnect.
//!
//! Each master ([`Master`], a small AXI4 master BFM) works in its own 16 KiB region with random
//! INCR bursts (full width, random strobes, never across 4 KiB) and a few IDs, and keeps a
//! reference byte image of its region. AXI rules are kept: `valid` stays up with a stable
//! payload until `ready`; W beats may come before, with or after their AW (never waiting for
//! `awready`), with random gaps, even inside a burst; `rready` and `bready` are withheld at
//! random. A master issues its operations in order, and one that overlaps an unfinished write
//! (or a write overlapping an unfinished read) waits for it, so the image is the truth.
//!
//! Checks:
//! - every R beat arrives at the master that issued its burst, with its inner ID, in per-ID
//!   order, with the bytes of the image (zeros and the error for an injected error), `rlast`
//!   on the last beat only; every B likewise, with the injected response;
//! - after the run, each region of the slave's memory equals its master's image, byte-exact
//!   (every write with its strobes, none where an error was answered);
//! - on `m_axi`, the W beats of the n-th burst are exactly the beats of the n-th AW's master's
//!   next burst (no interleaving, routed by the ID's index bits), and the slave saw no
//!   protocol breach; the upstream R and B channels keep `valid` and payload until `ready`;
//! - fairness: from the cycle a master's AR (AW) is eligible (the interconnect's documented
//!   conditions: AR with room for the burst in its R buffer; AW with its first W beat present,
//!   no W beats owed and a free B slot) until its handshake, at most `N - 1` other masters'
//!   handshakes happen on that channel. Eligibility never lapses while a master waits.

use crate::drivers::axi_mem::{AxiMemConfig, AxiMemSlave};
use crate::drivers::{get_bytes, set_bytes, Dir, Hold, Ports, Resp};
use crate::prop::Property;
use crate::rng::Rng;
use crate::rtl::AxiInterconnectTop as Dut;
use crate::sim::{Component, Signal, Sim};
use proptest::prelude::*;
use std::collections::VecDeque;
use std::path::Path;

/// Bytes of each master's region.
pub(crate) const REGION: u64 = 0x4000;
/// The interconnect's B buffer depth (`hdl_gen::blocks::axi_interconnect::B_DEPTH`).
const B_DEPTH: u32 = 8;

pub(crate) fn region_base(master: usize) -> u64 {
    0x10_0000 * (master as u64 + 1)
}

/// One burst of a master.
#[derive(Debug, Clone)]
pub struct Op {
    write: bool,
    id: u8,
    /// Position in the region, in beats (wrapped to the region).
    beat: u16,
    /// Beats minus one (cut so the burst stays in its 4 KiB page).
    pub(crate) len: u8,
}

/// A master's stimulus and manners.
#[derive(Debug, Clone)]
pub struct MasterIn {
    pub(crate) ops: Vec<Op>,
    /// Percent of cycles a ready operation is not issued yet.
    issue_gap: u8,
    /// Percent of cycles no W beat is offered.
    w_gap: u8,
    /// Percent of cycles `rready` / `bready` are low.
    r_stall: u8,
    b_stall: u8,
}

/// Generated stimulus.
#[derive(Debug, Clone)]
pub struct Input {
    masters: Vec<MasterIn>,
    /// Slave: AR, AW, W stall percent, R and B idle percent.
    stalls: [u8; 5],
    reorder: bool,
    interleave: bool,
    /// Per master: an error range (dir: 0 both, 1 read, 2 write; first beat; beats; DECERR).
    errors: Vec<Option<(u8, u16, u16, bool)>>,
    seed: u64,
}

pub(crate) fn op() -> impl Strategy<Value = Op> {
    (
        any::<bool>(),
        0u8..4,
        any::<u16>(),
        prop_oneof![4 => 0u8..8, 2 => 0u8..32, 1 => any::<u8>()],
    )
        .prop_map(|(write, id, beat, len)| Op {
            write,
            id,
            beat,
            len,
        })
}

pub(crate) fn master_in(saturate: bool) -> impl Strategy<Value = MasterIn> {
    let pct = move |hi: u8| if saturate { 0u8..1 } else { 0u8..hi };
    (
        prop::collection::vec(op(), 0..40),
        pct(60),
        pct(60),
        pct(80),
        pct(80),
    )
        .prop_map(|(ops, issue_gap, w_gap, r_stall, b_stall)| MasterIn {
            ops,
            issue_gap,
            w_gap,
            r_stall,
            b_stall,
        })
}

/// Reads the master count from the model's ports.
fn masters() -> usize {
    (0..)
        .take_while(|i| {
            <Dut as crate::sim::Dut>::PORTS
                .iter()
                .any(|p| p.0 == format!("s{i}_axi_arvalid_i"))
        })
        .count()
}

/// See the module documentation.
pub struct AxiInterconnectProp;

impl Property for AxiInterconnectProp {
    type Input = Input;
    const NAME: &'static str = "axi_interconnect";

    fn strategy() -> BoxedStrategy<Input> {
        let n = masters();
        let err = prop::option::weighted(0.3, (0u8..3, any::<u16>(), 1u16..64, any::<bool>()));
        any::<bool>()
            .prop_flat_map(move |saturate| {
                (
                    prop::collection::vec(master_in(saturate), n),
                    prop::array::uniform5(if saturate { 0u8..1 } else { 0u8..60 }),
                    any::<bool>(),
                    any::<bool>(),
                    prop::collection::vec(err.clone(), n),
                    any::<u64>(),
                )
            })
            .prop_map(
                |(masters, stalls, reorder, interleave, errors, seed)| Input {
                    masters,
                    stalls,
                    reorder,
                    interleave,
                    errors,
                    seed,
                },
            )
            .boxed()
    }

    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        let n = input.masters.len();
        let mut sim = Sim::<Dut>::maybe_waves(waves);
        let bytes = sim.port("m_axi_rdata_i").width() / 8;
        let id_width = sim.port("s0_axi_arid_i").width();
        let s = input.stalls;
        let mem = sim.add(AxiMemSlave::new(
            &sim,
            "m_axi",
            AxiMemConfig {
                seed: input.seed,
                read_latency: 1..=12,
                write_latency: 0..=6,
                ar_stall: s[0],
                aw_stall: s[1],
                w_stall: s[2],
                r_idle: s[3],
                b_idle: s[4],
                max_reads: 16,
                max_writes: 16,
                reorder: input.reorder,
                interleave: input.reorder && input.interleave,
            },
        ));
        let mut fill = Rng::new(input.seed ^ 0x5eed);
        let mut ms = Vec::new();
        for (i, mi) in input.masters.iter().enumerate() {
            let mut image = vec![0u8; REGION as usize];
            image.iter_mut().for_each(|b| *b = fill.next_u64() as u8);
            mem.borrow_mut().mem.write(region_base(i), &image);
            let err = input.errors[i].map(|(dir, first, beats, dec)| {
                let lo = region_base(i) + (u64::from(first) * bytes as u64) % REGION;
                let hi = (lo + u64::from(beats) * bytes as u64).min(region_base(i) + REGION);
                let dir = match dir {
                    0 => None,
                    1 => Some(Dir::Read),
                    _ => Some(Dir::Write),
                };
                let resp = if dec { Resp::DecErr } else { Resp::SlvErr };
                mem.borrow_mut().inject_error(dir, lo..hi, resp);
                ErrRange { dir, lo, hi, resp }
            });
            let ops = mi
                .ops
                .iter()
                .map(|o| Burst::new(o, i, bytes, id_width))
                .collect();
            ms.push(sim.add(Master::new(
                &sim,
                &format!("s{i}_axi_"),
                i,
                mi,
                ops,
                image,
                err,
                bytes,
                input.seed.wrapping_add(i as u64 * 7919),
            )));
        }
        let mon = sim.add(Monitor::new(&sim, n, id_width, bytes));
        sim.reset(2);

        let beats: u64 = input
            .masters
            .iter()
            .flat_map(|m| &m.ops)
            .map(|o| u64::from(o.len) + 1)
            .sum();
        let limit = 3_000 + beats * 60;
        let start = sim.cycle();
        // A hang is also declared after QUIET cycles without any handshake on any port (so a
        // shrinking hang case costs a thousand cycles, not the whole budget).
        const QUIET: u64 = 1_000;
        let mut pairs: Vec<(String, String)> = Vec::new();
        for (v, r) in [
            ("arvalid_o", "arready_i"),
            ("awvalid_o", "awready_i"),
            ("wvalid_o", "wready_i"),
            ("rvalid_i", "rready_o"),
            ("bvalid_i", "bready_o"),
        ] {
            pairs.push((format!("m_axi_{v}"), format!("m_axi_{r}")));
            // The upstream ports point the other way.
            let flip = |x: &str| {
                let (stem, dir) = x.split_at(x.len() - 2);
                format!("{stem}{}", if dir == "_o" { "_i" } else { "_o" })
            };
            for i in 0..n {
                pairs.push((
                    format!("s{i}_axi_{}", flip(v)),
                    format!("s{i}_axi_{}", flip(r)),
                ));
            }
        }
        let hs: Vec<(crate::sim::Signal, crate::sim::Signal)> = pairs
            .iter()
            .map(|(v, r)| (sim.signal(v), sim.signal(r)))
            .collect();
        let mut last_move = start;
        loop {
            sim.step();
            if hs.iter().any(|(v, r)| v.is_high() && r.is_high()) {
                last_move = sim.cycle();
            }
            for m in &ms {
                if let Some(e) = m.borrow().errors.first() {
                    return Err(e.clone());
                }
            }
            if let Some(e) = mon.borrow().errors.first() {
                return Err(e.clone());
            }
            if ms.iter().all(|m| m.borrow().idle()) {
                break;
            }
            if sim.cycle() - start > limit || sim.cycle() - last_move > QUIET {
                let left: Vec<String> = ms.iter().map(|m| m.borrow().state()).collect();
                return Err(format!(
                    "hang after {} cycles ({} without a handshake; budget {limit}): {}",
                    sim.cycle() - start,
                    sim.cycle() - last_move,
                    left.join("; ")
                ));
            }
        }
        // A few cycles for nothing more to happen (no stray beats).
        sim.run(20);
        for m in &ms {
            if let Some(e) = m.borrow().errors.first() {
                return Err(e.clone());
            }
        }
        let mem_b = mem.borrow();
        if let Some(v) = mem_b.violations.first() {
            return Err(format!("slave saw a protocol breach: {v}"));
        }
        for (i, m) in ms.iter().enumerate() {
            let m = m.borrow();
            let got = mem_b.mem.read_vec(region_base(i), REGION as usize);
            if let Some(a) = (0..got.len()).find(|&a| got[a] != m.image[a]) {
                return Err(format!(
                    "memory of master {i} at {:#x}: {:#04x}, its image says {:#04x}",
                    region_base(i) + a as u64,
                    got[a],
                    m.image[a]
                ));
            }
        }
        // Downstream W bursts against the AW order and what each master sent.
        let mon = mon.borrow();
        if mon.w_bursts.len() != mon.aws.len() {
            return Err(format!(
                "{} AW on m_axi but {} W bursts",
                mon.aws.len(),
                mon.w_bursts.len()
            ));
        }
        let mut next = vec![0usize; n];
        for (j, (&(idx, len), burst)) in mon.aws.iter().zip(&mon.w_bursts).enumerate() {
            let Some(m) = ms.get(idx) else {
                return Err(format!("AW {j} on m_axi names master {idx}"));
            };
            let m = m.borrow();
            let Some(sent) = m.sent_w.get(next[idx]) else {
                return Err(format!(
                    "W burst {j} on m_axi: master {idx} sent no such burst"
                ));
            };
            next[idx] += 1;
            if burst.len() != len as usize || burst != sent {
                return Err(format!(
                    "W burst {j} on m_axi (AW of master {idx}, {len} beats) is not master {idx}'s burst {}: {} beats {burst:x?}, sent {sent:x?}",
                    next[idx] - 1,
                    burst.len()
                ));
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct ErrRange {
    pub(crate) dir: Option<Dir>,
    pub(crate) lo: u64,
    pub(crate) hi: u64,
    pub(crate) resp: Resp,
}

/// A burst as the master issues it.
#[derive(Debug, Clone)]
pub(crate) struct Burst {
    write: bool,
    id: u64,
    addr: u64,
    beats: u32,
}

impl Burst {
    pub(crate) fn new(o: &Op, master: usize, bytes: u32, id_width: u32) -> Burst {
        let b = u64::from(bytes);
        let off = (u64::from(o.beat) * b) % REGION;
        let to_page = (4096 - off % 4096) / b;
        let beats = (u64::from(o.len) + 1).min(to_page) as u32;
        Burst {
            write: o.write,
            id: u64::from(o.id) & ((1 << id_width.min(63)) - 1),
            addr: region_base(master) + off,
            beats,
        }
    }

    fn span(&self, bytes: u32) -> (u64, u64) {
        (
            self.addr,
            self.addr + u64::from(self.beats) * u64::from(bytes),
        )
    }
}

/// A W beat: data bytes, strobe bits.
pub(crate) type WBeat = (Vec<u8>, u64);

struct ReadOut {
    id: u64,
    addr: u64,
    beats: u32,
    got: u32,
    resp: Resp,
    data: Vec<u8>,
}

struct WriteOut {
    id: u64,
    addr: u64,
    beats: u32,
    resp: Resp,
    /// Bytes to apply on OKAY: (offset in the region, byte).
    bytes: Vec<(usize, u8)>,
}

struct Ports5 {
    arvalid: Signal,
    arready: Signal,
    araddr: Signal,
    arlen: Signal,
    arsize: Signal,
    arburst: Signal,
    arid: Signal,
    rvalid: Signal,
    rready: Signal,
    rdata: Signal,
    rresp: Signal,
    rlast: Signal,
    rid: Signal,
    awvalid: Signal,
    awready: Signal,
    awaddr: Signal,
    awlen: Signal,
    awsize: Signal,
    awburst: Signal,
    awid: Signal,
    wvalid: Signal,
    wready: Signal,
    wdata: Signal,
    wstrb: Signal,
    wlast: Signal,
    bvalid: Signal,
    bready: Signal,
    bresp: Signal,
    bid: Signal,
}

impl Ports5 {
    fn bind(p: &impl Ports, prefix: &str) -> Ports5 {
        let s = |n: &str| p.port(&format!("{prefix}{n}"));
        Ports5 {
            arvalid: s("arvalid_i"),
            arready: s("arready_o"),
            araddr: s("araddr_i"),
            arlen: s("arlen_i"),
            arsize: s("arsize_i"),
            arburst: s("arburst_i"),
            arid: s("arid_i"),
            rvalid: s("rvalid_o"),
            rready: s("rready_i"),
            rdata: s("rdata_o"),
            rresp: s("rresp_o"),
            rlast: s("rlast_o"),
            rid: s("rid_o"),
            awvalid: s("awvalid_i"),
            awready: s("awready_o"),
            awaddr: s("awaddr_i"),
            awlen: s("awlen_i"),
            awsize: s("awsize_i"),
            awburst: s("awburst_i"),
            awid: s("awid_i"),
            wvalid: s("wvalid_i"),
            wready: s("wready_o"),
            wdata: s("wdata_i"),
            wstrb: s("wstrb_i"),
            wlast: s("wlast_i"),
            bvalid: s("bvalid_o"),
            bready: s("bready_i"),
            bresp: s("bresp_o"),
            bid: s("bid_o"),
        }
    }
}

/// A random AXI4 master BFM on `s{i}_axi_*` (or another prefix), checking what comes back
/// against its image.
pub(crate) struct Master {
    i: usize,
    p: Ports5,
    bytes: u32,
    rng: Rng,
    issue_gap: u8,
    w_gap: u8,
    r_stall: u8,
    b_stall: u8,
    ops: VecDeque<Burst>,
    pub(crate) image: Vec<u8>,
    err: Option<ErrRange>,
    reads: Vec<ReadOut>,
    writes: Vec<WriteOut>,
    ar: Option<Burst>,
    aw: Option<Burst>,
    /// W beats to send, with WLAST.
    wq: VecDeque<(WBeat, bool)>,
    w_on: bool,
    /// Every W burst sent, in order, as sent.
    pub(crate) sent_w: Vec<Vec<WBeat>>,
    /// The address of each write burst, in the order issued (the order of `sent_w`).
    sent_w_addr: Vec<u64>,
    cur_w: Vec<WBeat>,
    r_hold: Hold<(Vec<u8>, u64, u64, u64)>,
    b_hold: Hold<(u64, u64)>,
    fired: [bool; 5],
    buf: Vec<u8>,
    pub(crate) errors: Vec<String>,
}

impl Master {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        ports: &impl Ports,
        prefix: &str,
        i: usize,
        mi: &MasterIn,
        ops: VecDeque<Burst>,
        image: Vec<u8>,
        err: Option<ErrRange>,
        bytes: u32,
        seed: u64,
    ) -> Master {
        let m = Master {
            i,
            p: Ports5::bind(ports, prefix),
            bytes,
            rng: Rng::new(seed),
            issue_gap: mi.issue_gap,
            w_gap: mi.w_gap,
            r_stall: mi.r_stall,
            b_stall: mi.b_stall,
            ops,
            image,
            err,
            reads: Vec::new(),
            writes: Vec::new(),
            ar: None,
            aw: None,
            wq: VecDeque::new(),
            w_on: false,
            sent_w: Vec::new(),
            sent_w_addr: Vec::new(),
            cur_w: Vec::new(),
            r_hold: Hold::default(),
            b_hold: Hold::default(),
            fired: [false; 5],
            buf: Vec::new(),
            errors: Vec::new(),
        };
        m.idle_ports();
        m
    }

    fn idle_ports(&self) {
        for s in [
            &self.p.arvalid,
            &self.p.awvalid,
            &self.p.wvalid,
            &self.p.rready,
            &self.p.bready,
        ] {
            s.set(0);
        }
    }

    pub(crate) fn idle(&self) -> bool {
        self.ops.is_empty()
            && self.reads.is_empty()
            && self.writes.is_empty()
            && self.ar.is_none()
            && self.aw.is_none()
            && self.wq.is_empty()
    }

    /// The address of the `j`-th write burst issued.
    pub(crate) fn sent_addr(&self, j: usize) -> u64 {
        self.sent_w_addr[j]
    }

    pub(crate) fn state(&self) -> String {
        format!(
            "master {}: {} ops to issue, {} reads and {} writes outstanding, AR {}, AW {}, {} W beats to send",
            self.i,
            self.ops.len(),
            self.reads.len(),
            self.writes.len(),
            self.ar.is_some(),
            self.aw.is_some(),
            self.wq.len()
        )
    }

    fn expected_resp(&self, dir: Dir, b: &Burst) -> Resp {
        let (lo, hi) = b.span(self.bytes);
        match self.err {
            Some(e) if (e.dir.is_none() || e.dir == Some(dir)) && e.lo < hi && lo < e.hi => e.resp,
            _ => Resp::Okay,
        }
    }

    /// Whether `b` may be issued now: no overlap with an unfinished write, and a write no
    /// overlap with an unfinished read.
    fn hazard_free(&self, b: &Burst) -> bool {
        let (lo, hi) = b.span(self.bytes);
        let hit = |a: u64, n: u32| a < hi && lo < a + u64::from(n) * u64::from(self.bytes);
        let after_write = self.writes.iter().any(|w| hit(w.addr, w.beats));
        let over_read = b.write && self.reads.iter().any(|r| hit(r.addr, r.beats));
        !after_write && !over_read
    }

    fn off(&self, addr: u64) -> usize {
        (addr - region_base(self.i)) as usize
    }

    fn issue(&mut self, b: Burst) {
        let nb = self.bytes as usize;
        let (lo, hi) = b.span(self.bytes);
        if b.write {
            let resp = self.expected_resp(Dir::Write, &b);
            let mut bytes = Vec::new();
            for k in 0..b.beats {
                let data: Vec<u8> = (0..nb).map(|_| self.rng.next_u64() as u8).collect();
                let strb = match self.rng.below(4) {
                    0 => self.rng.next_u64(),
                    _ => u64::MAX,
                } & (u64::MAX >> (64 - nb.min(64)));
                let base = self.off(b.addr) + k as usize * nb;
                for (j, &d) in data.iter().enumerate() {
                    if j < 64 && strb >> j & 1 == 1 {
                        bytes.push((base + j, d));
                    }
                }
                self.wq.push_back(((data, strb), k + 1 == b.beats));
            }
            self.sent_w_addr.push(b.addr);
            self.writes.push(WriteOut {
                id: b.id,
                addr: b.addr,
                beats: b.beats,
                resp,
                bytes,
            });
            self.aw = Some(b);
        } else {
            let resp = self.expected_resp(Dir::Read, &b);
            let data = if resp.is_ok() {
                self.image[self.off(lo)..self.off(hi)].to_vec()
            } else {
                vec![0; (hi - lo) as usize]
            };
            self.reads.push(ReadOut {
                id: b.id,
                addr: b.addr,
                beats: b.beats,
                got: 0,
                resp,
                data,
            });
            self.ar = Some(b);
        }
    }

    fn fail(&mut self, cycle: u64, what: String) {
        self.errors
            .push(format!("cycle {cycle}: master {}: {what}", self.i));
    }
}

impl Component for Master {
    fn sample(&mut self, cycle: u64) {
        let p = &self.p;
        self.fired = [
            p.arvalid.is_high() && p.arready.is_high(),
            p.awvalid.is_high() && p.awready.is_high(),
            p.wvalid.is_high() && p.wready.is_high(),
            false,
            false,
        ];
        // R
        let mut v = Vec::new();
        let rv = p.rvalid.is_high();
        let rr = p.rready.is_high();
        let r = self.r_hold.observe(
            cycle,
            "R",
            rv,
            rr,
            || {
                get_bytes(&p.rdata, &mut self.buf);
                (self.buf.clone(), p.rresp.get(), p.rlast.get(), p.rid.get())
            },
            &mut v,
        );
        let b = self.b_hold.observe(
            cycle,
            "B",
            p.bvalid.is_high(),
            p.bready.is_high(),
            || (p.bresp.get(), p.bid.get()),
            &mut v,
        );
        for e in v {
            self.fail(cycle, e);
        }
        if let Some((data, resp, last, id)) = r {
            let nb = self.bytes as usize;
            match self.reads.iter().position(|x| x.id == id) {
                None => self.fail(
                    cycle,
                    format!("R beat for ID {id} with no read outstanding"),
                ),
                Some(k) => {
                    let rd = &mut self.reads[k];
                    let beat = rd.got as usize;
                    let want = rd.data[beat * nb..(beat + 1) * nb].to_vec();
                    let want_last = rd.got + 1 == rd.beats;
                    let (addr, want_resp) = (rd.addr, rd.resp);
                    rd.got += 1;
                    let done = rd.got == rd.beats;
                    if data != want {
                        self.fail(cycle, format!("R beat {beat} of the read at {addr:#x} (ID {id}): {data:02x?}, memory holds {want:02x?}"));
                    }
                    if Resp::from_bits(resp) != want_resp {
                        self.fail(cycle, format!("R beat {beat} of the read at {addr:#x} (ID {id}): resp {resp}, expected {want_resp:?}"));
                    }
                    if (last == 1) != want_last {
                        self.fail(
                            cycle,
                            format!(
                                "R beat {beat} of the read at {addr:#x} (ID {id}): rlast {last}"
                            ),
                        );
                    }
                    if done {
                        self.reads.remove(k);
                    }
                }
            }
        }
        if let Some((resp, id)) = b {
            match self.writes.iter().position(|x| x.id == id) {
                None => self.fail(cycle, format!("B for ID {id} with no write outstanding")),
                Some(k) => {
                    let w = self.writes.remove(k);
                    if Resp::from_bits(resp) != w.resp {
                        self.fail(
                            cycle,
                            format!(
                                "B of the write at {:#x} (ID {id}): resp {resp}, expected {:?}",
                                w.addr, w.resp
                            ),
                        );
                    }
                    if w.resp.is_ok() {
                        for (o, d) in w.bytes {
                            self.image[o] = d;
                        }
                    }
                }
            }
        }
        if self.fired[2] {
            let ((data, strb), last) = self.wq.pop_front().expect("a W beat was on the bus");
            self.cur_w.push((data, strb));
            if last {
                self.sent_w.push(std::mem::take(&mut self.cur_w));
            }
        }
    }

    fn drive(&mut self, _cycle: u64) {
        if self.fired[0] {
            self.ar = None;
        }
        if self.fired[1] {
            self.aw = None;
        }
        if self.fired[2] {
            self.w_on = false;
        }
        // The next operation, in order, when its channel is free and nothing unfinished overlaps.
        if let Some(b) = self.ops.front() {
            let free = if b.write {
                self.aw.is_none()
            } else {
                self.ar.is_none()
            };
            if free && self.hazard_free(b) && !self.rng.chance(self.issue_gap) {
                let b = self.ops.pop_front().expect("front exists");
                self.issue(b);
            }
        }
        let size = u64::from(self.bytes.trailing_zeros());
        let p = &self.p;
        match &self.ar {
            Some(b) => {
                p.arvalid.set(1);
                p.araddr.set(b.addr);
                p.arlen.set(u64::from(b.beats - 1));
                p.arsize.set(size);
                p.arburst.set(1);
                p.arid.set(b.id);
            }
            None => p.arvalid.set(0),
        }
        match &self.aw {
            Some(b) => {
                p.awvalid.set(1);
                p.awaddr.set(b.addr);
                p.awlen.set(u64::from(b.beats - 1));
                p.awsize.set(size);
                p.awburst.set(1);
                p.awid.set(b.id);
            }
            None => p.awvalid.set(0),
        }
        if !self.w_on && !self.wq.is_empty() && !self.rng.chance(self.w_gap) {
            self.w_on = true;
        }
        match (self.w_on, self.wq.front()) {
            (true, Some(((data, strb), last))) => {
                p.wvalid.set(1);
                set_bytes(&p.wdata, data);
                p.wstrb.set(*strb);
                p.wlast.set(u64::from(*last));
            }
            _ => p.wvalid.set(0),
        }
        p.rready.set(u64::from(!self.rng.chance(self.r_stall)));
        p.bready.set(u64::from(!self.rng.chance(self.b_stall)));
    }
}

/// Watches every port: the W bursts and AW order on `m_axi`, and arbitration fairness.
struct Monitor {
    n: usize,
    id_width: u32,
    up: Vec<Ports5>,
    m_awvalid: Signal,
    m_awready: Signal,
    m_awid: Signal,
    m_awlen: Signal,
    m_wvalid: Signal,
    m_wready: Signal,
    m_wdata: Signal,
    m_wstrb: Signal,
    m_wlast: Signal,
    r_depth: u32,
    /// Per master: R beats reserved, AW granted with W unfinished, B slots reserved.
    r_resv: Vec<u32>,
    w_owed: Vec<u32>,
    b_resv: Vec<u32>,
    /// Per channel (AR, AW) and master: other handshakes seen while eligible and waiting.
    waited: [Vec<Option<usize>>; 2],
    /// (master index, beats) of each AW on m_axi, in order.
    aws: Vec<(usize, u32)>,
    w_bursts: Vec<Vec<WBeat>>,
    cur: Vec<WBeat>,
    buf: Vec<u8>,
    errors: Vec<String>,
}

impl Monitor {
    fn new(p: &impl Ports, n: usize, id_width: u32, bytes: u32) -> Monitor {
        let m = |s: &str| p.port(&format!("m_axi_{s}"));
        Monitor {
            n,
            id_width,
            up: (0..n)
                .map(|i| Ports5::bind(p, &format!("s{i}_axi_")))
                .collect(),
            m_awvalid: m("awvalid_o"),
            m_awready: m("awready_i"),
            m_awid: m("awid_o"),
            m_awlen: m("awlen_o"),
            m_wvalid: m("wvalid_o"),
            m_wready: m("wready_i"),
            m_wdata: m("wdata_o"),
            m_wstrb: m("wstrb_o"),
            m_wlast: m("wlast_o"),
            r_depth: 256.min(4096 / bytes),
            r_resv: vec![0; n],
            w_owed: vec![0; n],
            b_resv: vec![0; n],
            waited: [vec![None; n], vec![None; n]],
            aws: Vec::new(),
            w_bursts: Vec::new(),
            cur: Vec::new(),
            buf: Vec::new(),
            errors: Vec::new(),
        }
    }
}

impl Component for Monitor {
    fn sample(&mut self, cycle: u64) {
        if self.m_awvalid.is_high() && self.m_awready.is_high() {
            let idx = (self.m_awid.get() >> self.id_width) as usize;
            self.aws.push((idx, self.m_awlen.get() as u32 + 1));
        }
        if self.m_wvalid.is_high() && self.m_wready.is_high() {
            get_bytes(&self.m_wdata, &mut self.buf);
            self.cur.push((self.buf.clone(), self.m_wstrb.get()));
            if self.m_wlast.is_high() {
                self.w_bursts.push(std::mem::take(&mut self.cur));
            }
        }
        // Fairness, from the interconnect's documented eligibility.
        let n = self.n;
        let mut fire = [vec![false; n], vec![false; n]];
        let mut eligible = [vec![false; n], vec![false; n]];
        for i in 0..n {
            let p = &self.up[i];
            fire[0][i] = p.arvalid.is_high() && p.arready.is_high();
            fire[1][i] = p.awvalid.is_high() && p.awready.is_high();
            let beats = p.arlen.get() as u32 + 1;
            eligible[0][i] = p.arvalid.is_high()
                && (self.r_resv[i] == 0 || self.r_resv[i] + beats <= self.r_depth);
            eligible[1][i] = p.awvalid.is_high()
                && p.wvalid.is_high()
                && self.w_owed[i] == 0
                && self.b_resv[i] < B_DEPTH;
        }
        for ch in 0..2 {
            let grants = fire[ch].iter().filter(|&&f| f).count();
            if grants > 1 {
                self.errors.push(format!(
                    "cycle {cycle}: {} handshakes of {} masters in one cycle",
                    ["AR", "AW"][ch],
                    grants
                ));
            }
            for i in 0..n {
                if fire[ch][i] {
                    if !eligible[ch][i] {
                        self.errors.push(format!(
                            "cycle {cycle}: master {i}'s {} taken while not eligible",
                            ["AR", "AW"][ch]
                        ));
                    }
                    self.waited[ch][i] = None;
                } else if eligible[ch][i] {
                    let w = self.waited[ch][i].get_or_insert(0);
                    *w += grants;
                    if *w > n - 1 {
                        self.errors.push(format!(
                            "cycle {cycle}: master {i}'s eligible {} waited for {} other grants (bound {})",
                            ["AR", "AW"][ch],
                            *w,
                            n - 1
                        ));
                    }
                } else if self.waited[ch][i].is_some() {
                    self.errors.push(format!(
                        "cycle {cycle}: master {i}'s {} stopped being eligible while waiting",
                        ["AR", "AW"][ch]
                    ));
                }
            }
        }
        for (i, p) in self.up.iter().enumerate() {
            if fire[0][i] {
                self.r_resv[i] += p.arlen.get() as u32 + 1;
            }
            if p.rvalid.is_high() && p.rready.is_high() {
                self.r_resv[i] = self.r_resv[i].saturating_sub(1);
            }
            if fire[1][i] {
                self.w_owed[i] += 1;
                self.b_resv[i] += 1;
            }
            if p.wvalid.is_high() && p.wready.is_high() && p.wlast.is_high() {
                self.w_owed[i] = self.w_owed[i].saturating_sub(1);
            }
            if p.bvalid.is_high() && p.bready.is_high() {
                self.b_resv[i] = self.b_resv[i].saturating_sub(1);
            }
        }
    }

    fn drive(&mut self, _cycle: u64) {}
}
