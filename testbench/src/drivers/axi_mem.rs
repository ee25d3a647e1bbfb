//! AXI4 memory slave: the host memory a model's AXI4 master port (a DMA engine) reads and
//! writes, bound by prefix, with a sparse byte-addressed [`Memory`] behind it.
//!
//! One file on purpose (about 1,100 lines): channels, bursts, reordering and error injection act
//! on one state (`AxiMemSlave`) a cycle at a time; `dpi` is the backdoor RTL uses into the same
//! memory.
//!
//! Ports, seen from the model (master) side: `<prefix>_arvalid_o`, `_araddr_o`, `_arlen_o`,
//! `_arsize_o`, `_arburst_o`, `_arid_o`, `_arready_i`; `_rvalid_i`, `_rdata_i`, `_rresp_i`,
//! `_rlast_i`, `_rid_i`, `_rready_o`; `_awvalid_o`, `_awaddr_o`, `_awlen_o`, `_awsize_o`,
//! `_awburst_o`, `_awid_o`, `_awready_i`; `_wvalid_o`, `_wdata_o`, `_wstrb_o`, `_wlast_o`,
//! `_wready_i`; `_bvalid_i`, `_bresp_i`, `_bid_i`, `_bready_o`. The IDs, `AxLEN`, `AxSIZE` and
//! `AxBURST` are optional: without them every ID is 0, every burst one beat, full width, INCR.
//! The data bus is a power of two from 8 to 1024 bits wide (wide ports go through
//! `Signal::get_words`/`set_words`).
//!
//! Behaviour, all seeded:
//! - AR, AW and W `ready` are withheld at random (`ar_stall`, `aw_stall`, `w_stall` percent);
//!   at most `max_reads` read bursts and `max_writes` write bursts are in flight.
//! - A read burst's first beat is due a random `read_latency` cycles after its address; beats
//!   then go out with random gaps (`r_idle`); `rvalid`, once up, stays up until `rready`.
//! - With `reorder`, read bursts (and write responses) of different IDs complete out of order;
//!   those of one ID always keep their order, as AXI requires. With `interleave`, read beats of
//!   different IDs are interleaved too.
//! - A write response is due a random `write_latency` cycles after the burst's last beat.
//! - Write strobes are honoured within each beat's byte lanes. FIXED, INCR and WRAP bursts are
//!   served; narrow transfers (`AxSIZE` below the bus width) read the whole bus word.
//! - Error injection: address ranges (per direction, or both) or a predicate answer SLVERR or
//!   DECERR. Every beat of such a read carries the error (and zero data); such a write is
//!   answered with the error on B and does not modify memory. A burst is in error if any of
//!   its bytes is. Per-beat injection ([`AxiMemSlave::set_read_beat_error_fn`], off by
//!   default) errors only some R beats of a read burst the rules above left OKAY: those beats
//!   carry the error and zero data, the others carry memory; the burst is logged with the
//!   first beat error.
//! - Protocol checks a monitor would make, recorded in `violations` (the burst is still
//!   served): `valid` dropped or payload changed before `ready` on AR, AW, W; an INCR burst
//!   crossing a 4 KiB boundary; WRAP with a length other than 2, 4, 8, 16 or an unaligned
//!   address; FIXED longer than 16 beats; `AxSIZE` wider than the bus; the reserved burst type
//!   (answered SLVERR); a write burst whose WLAST is not on beat AWLEN+1; strobes outside a
//!   beat's byte lanes.
//!
//! ```text
//! let mem = sim.add(AxiMemSlave::new(&sim, "m_axi", AxiMemConfig { reorder: true, ..Default::default() }));
//! mem.borrow_mut().mem.write(0x1000, &sqe_bytes);
//! mem.borrow_mut().inject_error(Some(Dir::Read), 0x8000..0x9000, Resp::SlvErr);
//! sim.run_until("the DMA", 10_000, |_| dma_done(...))?;
//! assert!(mem.borrow().violations.is_empty());
//! ```

use super::{get_bytes, set_bytes, Dir, Hold, Ports, Resp, Wires};
use crate::rng::Rng;
use crate::sim::{Component, Signal};
use std::collections::{HashMap, VecDeque};
use std::ops::{Range, RangeInclusive};

const PAGE: u64 = 4096;

/// Sparse byte-addressed memory: 4 KiB pages made on first write; bytes never written read 0.
#[derive(Clone, Default)]
pub struct Memory {
    pages: HashMap<u64, Box<[u8; PAGE as usize]>>,
}

impl Memory {
    /// Empty memory.
    pub fn new() -> Memory {
        Memory::default()
    }

    /// Reads `out.len()` bytes from `addr` (wrapping at the end of the 64-bit space).
    pub fn read(&self, addr: u64, out: &mut [u8]) {
        let mut a = addr;
        let mut done = 0;
        while done < out.len() {
            let off = (a % PAGE) as usize;
            let n = (PAGE as usize - off).min(out.len() - done);
            match self.pages.get(&(a / PAGE)) {
                Some(p) => out[done..done + n].copy_from_slice(&p[off..off + n]),
                None => out[done..done + n].fill(0),
            }
            done += n;
            a = a.wrapping_add(n as u64);
        }
    }

    /// `len` bytes from `addr`.
    pub fn read_vec(&self, addr: u64, len: usize) -> Vec<u8> {
        let mut v = vec![0; len];
        self.read(addr, &mut v);
        v
    }

    /// Writes `data` at `addr`.
    pub fn write(&mut self, addr: u64, data: &[u8]) {
        let mut a = addr;
        let mut done = 0;
        while done < data.len() {
            let off = (a % PAGE) as usize;
            let n = (PAGE as usize - off).min(data.len() - done);
            let p = self
                .pages
                .entry(a / PAGE)
                .or_insert_with(|| Box::new([0; PAGE as usize]));
            p[off..off + n].copy_from_slice(&data[done..done + n]);
            done += n;
            a = a.wrapping_add(n as u64);
        }
    }

    /// The byte at `addr`.
    pub fn byte(&self, addr: u64) -> u8 {
        self.pages
            .get(&(addr / PAGE))
            .map_or(0, |p| p[(addr % PAGE) as usize])
    }

    /// Writes one byte.
    pub fn set_byte(&mut self, addr: u64, v: u8) {
        self.write(addr, &[v]);
    }

    /// The little-endian 32-bit word at `addr`.
    pub fn read_u32(&self, addr: u64) -> u32 {
        let mut b = [0; 4];
        self.read(addr, &mut b);
        u32::from_le_bytes(b)
    }

    /// Writes a little-endian 32-bit word.
    pub fn write_u32(&mut self, addr: u64, v: u32) {
        self.write(addr, &v.to_le_bytes());
    }

    /// The little-endian 64-bit word at `addr`.
    pub fn read_u64(&self, addr: u64) -> u64 {
        let mut b = [0; 8];
        self.read(addr, &mut b);
        u64::from_le_bytes(b)
    }

    /// Writes a little-endian 64-bit word.
    pub fn write_u64(&mut self, addr: u64, v: u64) {
        self.write(addr, &v.to_le_bytes());
    }

    /// Pages that have been written.
    pub fn pages(&self) -> usize {
        self.pages.len()
    }
}

/// `AxBURST`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Burst {
    /// 0: every beat at the same address (a FIFO).
    Fixed,
    /// 1: incrementing addresses.
    Incr,
    /// 2: incrementing, wrapping at a boundary of `len * size` bytes (cache lines).
    Wrap,
    /// 3: reserved; answered SLVERR.
    Reserved,
}

impl Burst {
    /// The burst type of the 2-bit `AxBURST` value.
    pub fn from_bits(v: u64) -> Burst {
        match v & 3 {
            0 => Burst::Fixed,
            1 => Burst::Incr,
            2 => Burst::Wrap,
            _ => Burst::Reserved,
        }
    }

    /// The 2-bit `AxBURST` value.
    pub fn bits(self) -> u64 {
        self as u64
    }
}

/// A burst request from AR or AW.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Request {
    /// `AxID`.
    pub id: u64,
    /// `AxADDR`.
    pub addr: u64,
    /// Beats: `AxLEN + 1`.
    pub len: u32,
    /// Bytes per beat: `1 << AxSIZE`.
    pub size: u32,
    /// `AxBURST`.
    pub burst: Burst,
}

impl Request {
    /// The address of beat `n` (0-based), as the AXI specification computes it.
    pub fn beat_addr(&self, n: u32) -> u64 {
        let size = self.size as u64;
        let aligned = self.addr & !(size - 1);
        match self.burst {
            Burst::Fixed | Burst::Reserved => self.addr,
            Burst::Incr => {
                if n == 0 {
                    self.addr
                } else {
                    aligned.wrapping_add(n as u64 * size)
                }
            }
            Burst::Wrap => {
                let total = size * self.len as u64;
                let lower = aligned / total * total;
                lower + (aligned - lower + n as u64 * size) % total
            }
        }
    }

    /// The bytes the burst touches: `[lo, hi)`.
    pub fn span(&self) -> (u64, u64) {
        let size = self.size as u64;
        let aligned = self.addr & !(size - 1);
        match self.burst {
            Burst::Fixed | Burst::Reserved => (self.addr, aligned.saturating_add(size)),
            Burst::Incr => (self.addr, aligned.saturating_add(size * self.len as u64)),
            Burst::Wrap => {
                let total = size * self.len as u64;
                let lower = aligned / total * total;
                (lower, lower + total)
            }
        }
    }
}

/// A finished burst.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transaction {
    /// Read or write.
    pub dir: Dir,
    /// The request.
    pub req: Request,
    /// The response given.
    pub resp: Resp,
    /// Cycle of the AR/AW handshake.
    pub accepted: u64,
    /// Cycle of the last R beat or of the B handshake.
    pub done: u64,
}

/// Timing and ordering of an [`AxiMemSlave`].
#[derive(Clone, Debug)]
pub struct AxiMemConfig {
    /// Seed of every random choice.
    pub seed: u64,
    /// Cycles from a read address to its first beat being due (inclusive range).
    pub read_latency: RangeInclusive<u32>,
    /// Cycles from a write burst's last beat to its response being due.
    pub write_latency: RangeInclusive<u32>,
    /// Percent of cycles `arready` is withheld.
    pub ar_stall: u8,
    /// Percent of cycles `awready` is withheld.
    pub aw_stall: u8,
    /// Percent of cycles `wready` is withheld.
    pub w_stall: u8,
    /// Percent of cycles no R beat is offered although one is due.
    pub r_idle: u8,
    /// Percent of cycles no B response is offered although one is due.
    pub b_idle: u8,
    /// Read bursts in flight at most (`arready` low beyond).
    pub max_reads: usize,
    /// Write bursts in flight (address accepted, response not yet taken) at most.
    pub max_writes: usize,
    /// Complete bursts of different IDs out of order.
    pub reorder: bool,
    /// Interleave read beats of different IDs (needs `reorder`).
    pub interleave: bool,
}

impl Default for AxiMemConfig {
    /// Seed 1, read latency 1..=8, write latency 0..=4, no stalls or gaps, 8 reads and 8
    /// writes in flight, in order.
    fn default() -> Self {
        AxiMemConfig {
            seed: 1,
            read_latency: 1..=8,
            write_latency: 0..=4,
            ar_stall: 0,
            aw_stall: 0,
            w_stall: 0,
            r_idle: 0,
            b_idle: 0,
            max_reads: 8,
            max_writes: 8,
            reorder: false,
            interleave: false,
        }
    }
}

/// Widths of an AXI4 port, for [`declare`].
#[derive(Clone, Copy, Debug)]
pub struct AxiWidths {
    /// Address bits.
    pub addr: u32,
    /// Data bits.
    pub data: u32,
    /// ID bits (0: no ID signals).
    pub id: u32,
}

/// Declares on `wires` every signal of an AXI4 port `prefix` (IDs only when `w.id > 0`), for
/// a Rust master wired to an [`AxiMemSlave`].
pub fn declare(wires: &Wires, prefix: &str, w: AxiWidths) {
    let mut sigs: Vec<(&str, u32)> = Vec::new();
    for ch in ["ar", "aw"] {
        sigs.extend([
            (if ch == "ar" { "arvalid" } else { "awvalid" }, 1),
            (if ch == "ar" { "arready" } else { "awready" }, 1),
            (if ch == "ar" { "araddr" } else { "awaddr" }, w.addr),
            (if ch == "ar" { "arlen" } else { "awlen" }, 8),
            (if ch == "ar" { "arsize" } else { "awsize" }, 3),
            (if ch == "ar" { "arburst" } else { "awburst" }, 2),
        ]);
    }
    sigs.extend([
        ("rvalid", 1),
        ("rready", 1),
        ("rdata", w.data),
        ("rresp", 2),
        ("rlast", 1),
        ("wvalid", 1),
        ("wready", 1),
        ("wdata", w.data),
        ("wstrb", w.data / 8),
        ("wlast", 1),
        ("bvalid", 1),
        ("bready", 1),
        ("bresp", 2),
    ]);
    if w.id > 0 {
        sigs.extend([("arid", w.id), ("rid", w.id), ("awid", w.id), ("bid", w.id)]);
    }
    for (n, width) in sigs {
        wires.add(&format!("{prefix}_{n}"), width);
    }
}

struct AddrChan {
    valid: Signal,
    ready: Signal,
    addr: Signal,
    len: Option<Signal>,
    size: Option<Signal>,
    burst: Option<Signal>,
    id: Option<Signal>,
}

impl AddrChan {
    fn bind(ports: &impl Ports, prefix: &str, ch: &str) -> AddrChan {
        let o = |n: &str| ports.find(&format!("{prefix}_{ch}{n}_o"));
        AddrChan {
            valid: ports.port(&format!("{prefix}_{ch}valid_o")),
            ready: ports.port(&format!("{prefix}_{ch}ready_i")),
            addr: ports.port(&format!("{prefix}_{ch}addr_o")),
            len: o("len"),
            size: o("size"),
            burst: o("burst"),
            id: o("id"),
        }
    }

    /// (id, addr, len field, size field, burst field) as on the bus.
    fn raw(&self, full_size: u64) -> (u64, u64, u64, u64, u64) {
        let g = |s: &Option<Signal>, d: u64| s.as_ref().map_or(d, Signal::get);
        (
            g(&self.id, 0),
            self.addr.get(),
            g(&self.len, 0),
            g(&self.size, full_size),
            g(&self.burst, 1),
        )
    }
}

struct ReadBurst {
    req: Request,
    resp: Resp,
    /// Per-beat responses (empty: every beat carries `resp`).
    beats: Vec<Resp>,
    beat: u32,
    due: u64,
    accepted: u64,
}

struct PendingB {
    req: Request,
    resp: Resp,
    due: u64,
    accepted: u64,
}

/// A W beat: data bytes, strobe bytes, WLAST.
type WBeat = (Vec<u8>, Vec<u8>, bool);

/// An error-injection rule.
#[derive(Clone, Debug)]
struct ErrorRegion {
    dir: Option<Dir>,
    range: Range<u64>,
    resp: Resp,
}

/// A predicate deciding a burst's response: `None` for no injected error.
pub type ErrorFn = Box<dyn FnMut(Dir, &Request) -> Option<Resp>>;

/// A predicate deciding the response of beat `n` of a read burst: `None` for OKAY.
pub type BeatErrorFn = Box<dyn FnMut(&Request, u32) -> Option<Resp>>;

/// The AXI4 memory slave component (see the module documentation).
pub struct AxiMemSlave {
    ar: AddrChan,
    aw: AddrChan,
    rvalid: Signal,
    rready: Signal,
    rdata: Signal,
    rresp: Signal,
    rlast: Signal,
    rid: Option<Signal>,
    wvalid: Signal,
    wready: Signal,
    wdata: Signal,
    wstrb: Signal,
    wlast: Signal,
    bvalid: Signal,
    bready: Signal,
    bresp: Signal,
    bid: Option<Signal>,
    bytes: u32,
    size_log2: u64,
    cfg: AxiMemConfig,
    rng: Rng,
    reads: Vec<ReadBurst>,
    /// Index into `reads` of the burst on R now, and whether its beat is on the bus.
    r_cur: Option<usize>,
    /// Burst whose beats R is sending (without interleaving, until its last beat).
    r_lock: Option<usize>,
    aws: VecDeque<(Request, u64)>,
    wbeats: VecDeque<WBeat>,
    bq: Vec<PendingB>,
    b_cur: Option<usize>,
    ar_hold: Hold<(u64, u64, u64, u64, u64)>,
    aw_hold: Hold<(u64, u64, u64, u64, u64)>,
    w_hold: Hold<WBeat>,
    errors: Vec<ErrorRegion>,
    error_fn: Option<ErrorFn>,
    beat_error_fn: Option<BeatErrorFn>,
    buf: Vec<u8>,
    /// The memory behind the port (kept across resets).
    pub mem: Memory,
    /// Every finished burst, in the order it finished.
    pub log: Vec<Transaction>,
    /// Protocol breaches by the master.
    pub violations: Vec<String>,
    /// Also a breach: `wvalid` low inside a write burst after its first beat went (off by
    /// default). The chip's interconnect needs it of every master: one paused burst holds
    /// every other master's W channel (`hdl-gen/src/blocks/axi_interconnect.rs`).
    pub w_gapless: bool,
    /// A write burst's first beat went and its last has not.
    w_open: bool,
}

impl AxiMemSlave {
    /// A memory slave for the AXI4 master port `prefix` of `ports` (a `Sim` or [`Wires`]).
    #[track_caller]
    pub fn new(ports: &impl Ports, prefix: &str, cfg: AxiMemConfig) -> AxiMemSlave {
        let i = |n: &str| ports.port(&format!("{prefix}_{n}_i"));
        let o = |n: &str| ports.port(&format!("{prefix}_{n}_o"));
        let rdata = i("rdata");
        let wdata = o("wdata");
        let wstrb = o("wstrb");
        let width = rdata.width();
        assert!(
            width.is_power_of_two() && (8..=1024).contains(&width),
            "{prefix}: AXI data is a power of two from 8 to 1024 bits wide, not {width}"
        );
        assert_eq!(wdata.width(), width, "{prefix}: read and write data widths");
        assert_eq!(wstrb.width() * 8, width, "{prefix}: one strobe per byte");
        assert!(
            !cfg.read_latency.is_empty() && !cfg.write_latency.is_empty(),
            "latency ranges must not be empty"
        );
        let ar = AddrChan::bind(ports, prefix, "ar");
        let aw = AddrChan::bind(ports, prefix, "aw");
        let rid = ports.find(&format!("{prefix}_rid_i"));
        let bid = ports.find(&format!("{prefix}_bid_i"));
        for s in [&ar.id, &aw.id, &rid, &bid].into_iter().flatten() {
            assert!(s.width() <= 64, "{s:?}: IDs are at most 64 bits");
        }
        assert_eq!(
            ar.id.is_some(),
            rid.is_some(),
            "{prefix}: arid and rid come together"
        );
        assert_eq!(
            aw.id.is_some(),
            bid.is_some(),
            "{prefix}: awid and bid come together"
        );
        let bytes = width / 8;
        let s = AxiMemSlave {
            ar,
            aw,
            rvalid: i("rvalid"),
            rready: o("rready"),
            rdata,
            rresp: i("rresp"),
            rlast: i("rlast"),
            rid,
            wvalid: o("wvalid"),
            wready: i("wready"),
            wdata,
            wstrb,
            wlast: o("wlast"),
            bvalid: i("bvalid"),
            bready: o("bready"),
            bresp: i("bresp"),
            bid,
            bytes,
            size_log2: bytes.trailing_zeros() as u64,
            rng: Rng::new(cfg.seed),
            cfg,
            reads: Vec::new(),
            r_cur: None,
            r_lock: None,
            aws: VecDeque::new(),
            wbeats: VecDeque::new(),
            bq: Vec::new(),
            b_cur: None,
            ar_hold: Hold::default(),
            aw_hold: Hold::default(),
            w_hold: Hold::default(),
            errors: Vec::new(),
            error_fn: None,
            beat_error_fn: None,
            buf: Vec::new(),
            mem: Memory::new(),
            log: Vec::new(),
            violations: Vec::new(),
            w_gapless: false,
            w_open: false,
        };
        s.idle();
        s
    }

    /// Data bus width in bytes.
    pub fn bytes(&self) -> u32 {
        self.bytes
    }

    /// Answers `resp` to every burst of direction `dir` (both when `None`) that touches a byte
    /// in `range`.
    pub fn inject_error(&mut self, dir: Option<Dir>, range: Range<u64>, resp: Resp) {
        self.errors.push(ErrorRegion { dir, range, resp });
    }

    /// Decides each burst's response with `f` (after the ranges of
    /// [`AxiMemSlave::inject_error`], which win).
    pub fn set_error_fn(&mut self, f: impl FnMut(Dir, &Request) -> Option<Resp> + 'static) {
        self.error_fn = Some(Box::new(f));
    }

    /// Per-beat read error injection: `f(req, n)` answers beat `n` (0-based) of a read burst
    /// that no burst-level rule put in error; `Some(resp)` errors that beat only (zero data).
    pub fn set_read_beat_error_fn(
        &mut self,
        f: impl FnMut(&Request, u32) -> Option<Resp> + 'static,
    ) {
        self.beat_error_fn = Some(Box::new(f));
    }

    /// Removes every injected error.
    pub fn clear_errors(&mut self) {
        self.errors.clear();
        self.error_fn = None;
        self.beat_error_fn = None;
    }

    /// Changes the timing and ordering from now on (the seed is kept).
    pub fn set_config(&mut self, cfg: AxiMemConfig) {
        self.cfg = cfg;
    }

    /// Read bursts in flight.
    pub fn reads_in_flight(&self) -> usize {
        self.reads.len()
    }

    /// Write bursts in flight (address accepted, response not yet taken).
    pub fn writes_in_flight(&self) -> usize {
        self.aws.len() + self.bq.len()
    }

    fn idle(&self) {
        self.ar.ready.set(0);
        self.aw.ready.set(0);
        self.wready.set(0);
        self.rvalid.set(0);
        self.bvalid.set(0);
    }

    fn latency(&mut self, r: &RangeInclusive<u32>) -> u64 {
        let (lo, hi) = (*r.start() as u64, *r.end() as u64);
        lo + self.rng.below(hi - lo + 1)
    }

    /// Decodes and checks a request.
    fn request(&mut self, cycle: u64, dir: Dir, raw: (u64, u64, u64, u64, u64)) -> Request {
        let (id, addr, len, size, burst) = raw;
        let ch = if dir == Dir::Read { "AR" } else { "AW" };
        let req = Request {
            id,
            addr,
            len: len as u32 + 1,
            size: 1 << size.min(7),
            burst: Burst::from_bits(burst),
        };
        let mut bad = |what: String| {
            self.violations
                .push(format!("cycle {cycle}: {ch}: {what} ({req:x?})"))
        };
        if size > self.size_log2 {
            bad(format!(
                "AxSIZE {size} is wider than the {}-byte bus",
                self.bytes
            ));
        }
        match req.burst {
            Burst::Incr => {
                let (lo, hi) = req.span();
                if lo / PAGE != (hi - 1) / PAGE {
                    bad("INCR burst crosses a 4 KiB boundary".into());
                }
            }
            Burst::Wrap => {
                if ![2, 4, 8, 16].contains(&req.len) {
                    bad(format!("WRAP burst of {} beats", req.len));
                }
                if addr % req.size as u64 != 0 {
                    bad("WRAP burst at an address not aligned to its size".into());
                }
            }
            Burst::Fixed => {
                if req.len > 16 {
                    bad(format!("FIXED burst of {} beats", req.len));
                }
            }
            Burst::Reserved => bad("reserved burst type 3: answered SLVERR".into()),
        }
        req
    }

    /// The response to a burst: SLVERR for the reserved burst type, else an injected error,
    /// else OKAY. Asked once per burst: at the read address, or when a write's data is in.
    fn resp_for(&mut self, dir: Dir, req: &Request) -> Resp {
        if req.burst == Burst::Reserved {
            return Resp::SlvErr;
        }
        let (lo, hi) = req.span();
        let hit = self.errors.iter().find(|e| {
            (e.dir.is_none() || e.dir == Some(dir)) && e.range.start < hi && lo < e.range.end
        });
        if let Some(e) = hit {
            return e.resp;
        }
        self.error_fn
            .as_mut()
            .and_then(|f| f(dir, req))
            .unwrap_or(Resp::Okay)
    }

    /// Byte lanes `[lo, hi)` of beat `n` of `req` on this bus.
    fn lanes(&self, req: &Request, n: u32) -> (usize, usize) {
        let a = req.beat_addr(n);
        let bus = self.bytes as u64;
        let size = (req.size as u64).min(bus);
        let lo = a % bus;
        let hi = (a & !(size - 1)) % bus + size;
        (lo as usize, hi as usize)
    }

    /// The bytes `[lo, hi)` of every write burst whose address was accepted and whose
    /// response has not been taken yet (its data may not be in memory, or not answered).
    pub fn unanswered_writes(&self) -> Vec<(u64, u64)> {
        self.aws
            .iter()
            .map(|(r, _)| r.span())
            .chain(self.bq.iter().map(|b| b.req.span()))
            .collect()
    }

    /// Pairs accepted write addresses with their W beats; commits whole bursts.
    fn match_writes(&mut self, cycle: u64) {
        while let Some(&(req, accepted)) = self.aws.front() {
            let n = req.len as usize;
            let early = self.wbeats.iter().take(n).position(|b| b.2);
            let take = match early {
                Some(i) => {
                    if i + 1 < n {
                        self.violations.push(format!(
                            "cycle {cycle}: W: WLAST on beat {} of a {n}-beat burst ({req:x?})",
                            i + 1
                        ));
                    }
                    i + 1
                }
                None if self.wbeats.len() >= n => {
                    self.violations.push(format!(
                        "cycle {cycle}: W: no WLAST on beat {n}, the last of the burst ({req:x?})"
                    ));
                    n
                }
                None => return,
            };
            self.aws.pop_front();
            let beats: Vec<WBeat> = self.wbeats.drain(..take).collect();
            let resp = self.commit(cycle, &req, beats);
            let due = cycle + self.latency(&self.cfg.write_latency.clone());
            self.bq.push(PendingB {
                req,
                resp,
                due,
                accepted,
            });
        }
    }

    /// Commits a write burst unless it is answered with an error; returns the response.
    fn commit(&mut self, cycle: u64, req: &Request, beats: Vec<WBeat>) -> Resp {
        let resp = self.resp_for(Dir::Write, req);
        let bus = self.bytes as u64;
        for (n, (data, strb, _)) in beats.iter().enumerate() {
            let (lo, hi) = self.lanes(req, n as u32);
            let base = req.beat_addr(n as u32) & !(bus - 1);
            for lane in 0..self.bytes as usize {
                if strb[lane / 8] >> (lane % 8) & 1 == 0 {
                    continue;
                }
                if lane < lo || lane >= hi {
                    self.violations.push(format!(
                        "cycle {cycle}: W: strobe on byte lane {lane}, outside lanes {lo}..{hi} of beat {n} ({req:x?})"
                    ));
                } else if resp == Resp::Okay {
                    self.mem.set_byte(base + lane as u64, data[lane]);
                }
            }
        }
        resp
    }

    /// Picks the next read burst to send a beat of: due, and the oldest of its ID.
    fn pick_read(&mut self, cycle: u64) -> Option<usize> {
        if let Some(i) = self.r_lock {
            return Some(i);
        }
        let eligible = |k: usize, reads: &[ReadBurst]| {
            reads[k].due <= cycle && !reads[..k].iter().any(|r| r.req.id == reads[k].req.id)
        };
        if !self.cfg.reorder {
            return (!self.reads.is_empty() && eligible(0, &self.reads)).then_some(0);
        }
        let ok: Vec<usize> = (0..self.reads.len())
            .filter(|&k| eligible(k, &self.reads))
            .collect();
        (!ok.is_empty()).then(|| ok[self.rng.below(ok.len() as u64) as usize])
    }

    fn pick_b(&mut self, cycle: u64) -> Option<usize> {
        let eligible = |k: usize, bq: &[PendingB]| {
            bq[k].due <= cycle && !bq[..k].iter().any(|b| b.req.id == bq[k].req.id)
        };
        if !self.cfg.reorder {
            return (!self.bq.is_empty() && eligible(0, &self.bq)).then_some(0);
        }
        let ok: Vec<usize> = (0..self.bq.len())
            .filter(|&k| eligible(k, &self.bq))
            .collect();
        (!ok.is_empty()).then(|| ok[self.rng.below(ok.len() as u64) as usize])
    }

    fn drive_r_beat(&mut self, k: usize) {
        let r = &self.reads[k];
        let bus = self.bytes as u64;
        let resp = r.beats.get(r.beat as usize).copied().unwrap_or(r.resp);
        let mut data = std::mem::take(&mut self.buf);
        data.clear();
        data.resize(bus as usize, 0);
        if resp.is_ok() {
            self.mem
                .read(r.req.beat_addr(r.beat) & !(bus - 1), &mut data);
        }
        set_bytes(&self.rdata, &data);
        self.buf = data;
        self.rresp.set(resp.bits());
        self.rlast.set((r.beat + 1 == r.req.len) as u64);
        if let Some(s) = &self.rid {
            s.set(r.req.id);
        }
        self.rvalid.set(1);
    }
}

impl Component for AxiMemSlave {
    fn sample(&mut self, cycle: u64) {
        let mut v = std::mem::take(&mut self.violations);
        let full = self.size_log2;
        // R: a beat on the bus goes when rready is up.
        if let Some(k) = self.r_cur {
            if self.rready.is_high() {
                self.r_cur = None;
                let r = &mut self.reads[k];
                r.beat += 1;
                if r.beat == r.req.len {
                    let r = self.reads.remove(k);
                    self.log.push(Transaction {
                        dir: Dir::Read,
                        req: r.req,
                        resp: r.resp,
                        accepted: r.accepted,
                        done: cycle,
                    });
                    self.r_lock = None;
                } else if !self.cfg.interleave {
                    self.r_lock = Some(k);
                }
            }
        }
        // B.
        if let Some(k) = self.b_cur {
            if self.bready.is_high() {
                self.b_cur = None;
                let b = self.bq.remove(k);
                self.log.push(Transaction {
                    dir: Dir::Write,
                    req: b.req,
                    resp: b.resp,
                    accepted: b.accepted,
                    done: cycle,
                });
            }
        }
        // AR.
        let ar = &self.ar;
        let got = self.ar_hold.observe(
            cycle,
            "AR",
            ar.valid.is_high(),
            ar.ready.is_high(),
            || ar.raw(full),
            &mut v,
        );
        // AW.
        let aw = &self.aw;
        let got_aw = self.aw_hold.observe(
            cycle,
            "AW",
            aw.valid.is_high(),
            aw.ready.is_high(),
            || aw.raw(full),
            &mut v,
        );
        // W.
        let (wdata, wstrb, wlast) = (&self.wdata, &self.wstrb, &self.wlast);
        let got_w = self.w_hold.observe(
            cycle,
            "W",
            self.wvalid.is_high(),
            self.wready.is_high(),
            || {
                let (mut d, mut s) = (Vec::new(), Vec::new());
                get_bytes(wdata, &mut d);
                get_bytes(wstrb, &mut s);
                (d, s, wlast.is_high())
            },
            &mut v,
        );
        if self.w_gapless && self.w_open && !self.wvalid.is_high() {
            v.push(format!(
                "cycle {cycle}: wvalid low inside a write burst (a master must not pause a burst it started: it holds every other master's W)"
            ));
        }
        if let Some((_, _, last)) = &got_w {
            self.w_open = !*last;
        }
        self.violations = v;
        if let Some(raw) = got {
            let req = self.request(cycle, Dir::Read, raw);
            let mut resp = self.resp_for(Dir::Read, &req);
            let mut beats = Vec::new();
            if let (true, Some(f)) = (resp.is_ok(), self.beat_error_fn.as_mut()) {
                beats = (0..req.len)
                    .map(|n| f(&req, n).unwrap_or(Resp::Okay))
                    .collect();
                if let Some(e) = beats.iter().find(|b| !b.is_ok()) {
                    resp = *e;
                }
            }
            let due = cycle + self.latency(&self.cfg.read_latency.clone());
            self.reads.push(ReadBurst {
                req,
                resp,
                beats,
                beat: 0,
                due,
                accepted: cycle,
            });
        }
        if let Some(raw) = got_aw {
            let req = self.request(cycle, Dir::Write, raw);
            self.aws.push_back((req, cycle));
        }
        if let Some(beat) = got_w {
            self.wbeats.push_back(beat);
        }
        self.match_writes(cycle);
    }

    fn drive(&mut self, cycle: u64) {
        let cfg = &self.cfg;
        let (ar_stall, aw_stall, w_stall) = (cfg.ar_stall, cfg.aw_stall, cfg.w_stall);
        let ar_room = self.reads.len() < cfg.max_reads;
        let aw_room = self.aws.len() + self.bq.len() < cfg.max_writes;
        let r = ar_room && !self.rng.chance(ar_stall);
        self.ar.ready.set(r as u64);
        let r = aw_room && !self.rng.chance(aw_stall);
        self.aw.ready.set(r as u64);
        let r = !self.rng.chance(w_stall);
        self.wready.set(r as u64);
        // R and B: a response on the bus stays as it is until taken; otherwise maybe offer the
        // next one (its data is read from memory once, when it is put on the bus).
        if self.r_cur.is_none() {
            if !self.rng.chance(self.cfg.r_idle) {
                self.r_cur = self.pick_read(cycle);
            }
            match self.r_cur {
                Some(k) => self.drive_r_beat(k),
                None => self.rvalid.set(0),
            }
        }
        if self.b_cur.is_none() {
            if !self.rng.chance(self.cfg.b_idle) {
                self.b_cur = self.pick_b(cycle);
            }
            match self.b_cur {
                Some(k) => {
                    let b = &self.bq[k];
                    self.bresp.set(b.resp.bits());
                    if let Some(s) = &self.bid {
                        s.set(b.req.id);
                    }
                    self.bvalid.set(1);
                }
                None => self.bvalid.set(0),
            }
        }
    }

    fn reset(&mut self) {
        self.reads.clear();
        self.r_cur = None;
        self.r_lock = None;
        self.aws.clear();
        self.wbeats.clear();
        self.bq.clear();
        self.b_cur = None;
        self.ar_hold.clear();
        self.aw_hold.clear();
        self.w_hold.clear();
        self.w_open = false;
        self.idle();
    }
}

/// DPI-C functions implemented in Rust: the way RTL calls back into the testbench. Here, RTL
/// reads and writes a memory (a backdoor into the host memory, for test modules such as
/// testbench/dpi/dpi_probe.sv):
///
/// ```systemverilog
/// import "DPI-C" context function int unsigned tb_mem_read(input int unsigned addr);
/// import "DPI-C" function void tb_mem_write(input int unsigned addr, input bit [63:0] data);
/// ```
///
/// DPI types, as Verilator passes them (IEEE 1800 Annex H): `int unsigned` is a C `unsigned
/// int` (`u32`); a packed `bit [63:0]` input is a `const svBitVecVal*` (`svdpi`'s
/// `svBitVecVal`, 32-bit words, least significant first). The functions run inside `eval`,
/// on the thread that steps the model, so the handlers are per thread: each test (its own
/// thread under `cargo test`) installs its own, and models on other threads are unaffected.
/// A handler must not step the model that calls it.
///
/// ```text
/// let mem = Rc::new(RefCell::new(Memory::new()));
/// dpi::serve(mem.clone(), |m| m);                   // or dpi::serve(slave, |s| &mut s.mem)
/// ```
pub mod dpi {
    use super::Memory;
    use std::cell::{Cell, RefCell};
    use std::ffi::{c_uint, CStr};
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::rc::Rc;
    use svdpi::sys::dpi::{svBitVecVal, svGetNameFromScope, svGetScope};

    type ReadFn = Box<dyn FnMut(u32) -> u32>;
    type WriteFn = Box<dyn FnMut(u32, u64)>;

    thread_local! {
        static READ: RefCell<Option<ReadFn>> = const { RefCell::new(None) };
        static WRITE: RefCell<Option<WriteFn>> = const { RefCell::new(None) };
        static ERRORS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
        static SCOPE: RefCell<Option<String>> = const { RefCell::new(None) };
        static CALLS: Cell<u64> = const { Cell::new(0) };
    }

    /// What `tb_mem_read` returns without a handler, or when the handler panicked.
    pub const POISON: u32 = 0xdead_beef;

    /// Answers `tb_mem_read(addr)` with `f(addr)` on this thread.
    pub fn on_read(f: impl FnMut(u32) -> u32 + 'static) {
        READ.with(|r| *r.borrow_mut() = Some(Box::new(f)));
    }

    /// Hands `tb_mem_write(addr, data)` to `f` on this thread.
    pub fn on_write(f: impl FnMut(u32, u64) + 'static) {
        WRITE.with(|w| *w.borrow_mut() = Some(Box::new(f)));
    }

    /// Serves both functions from the [`Memory`] that `mem` finds in `owner` (a shared memory,
    /// or a component such as an [`super::AxiMemSlave`]): reads are little-endian 32-bit
    /// words, writes store 8 bytes.
    pub fn serve<T: 'static>(owner: Rc<RefCell<T>>, mem: fn(&mut T) -> &mut Memory) {
        let o = owner.clone();
        on_read(move |a| mem(&mut o.borrow_mut()).read_u32(a as u64));
        on_write(move |a, v| mem(&mut owner.borrow_mut()).write_u64(a as u64, v));
    }

    /// Removes this thread's handlers.
    pub fn clear() {
        READ.with(|r| *r.borrow_mut() = None);
        WRITE.with(|w| *w.borrow_mut() = None);
    }

    /// Calls of either function on this thread so far.
    pub fn calls() -> u64 {
        CALLS.with(Cell::get)
    }

    /// Calls that found no handler, and handlers that panicked (a panic cannot cross into
    /// C++), on this thread; taking them empties the list.
    pub fn take_errors() -> Vec<String> {
        ERRORS.with(|e| std::mem::take(&mut *e.borrow_mut()))
    }

    /// The hierarchical name of the instance behind the last `tb_mem_read` on this thread
    /// (`context` imports only), as `svGetScope` reports it.
    pub fn last_scope() -> Option<String> {
        SCOPE.with(|s| s.borrow().clone())
    }

    fn error(what: String) {
        ERRORS.with(|e| e.borrow_mut().push(what));
    }

    fn call<R>(name: &str, f: impl FnOnce() -> Option<R>) -> Option<R> {
        CALLS.with(|c| c.set(c.get() + 1));
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(Some(r)) => Some(r),
            Ok(None) => {
                error(format!("{name}: no handler on this thread"));
                None
            }
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                error(format!("{name}: the handler panicked: {msg}"));
                None
            }
        }
    }

    /// `import "DPI-C" context function int unsigned tb_mem_read(input int unsigned addr)`.
    #[no_mangle]
    pub extern "C" fn tb_mem_read(addr: c_uint) -> c_uint {
        // SAFETY: called by the simulator inside a DPI call; the scope (null when the import
        // is not `context`) and its name are owned by the model.
        let scope = unsafe {
            let s = svGetScope();
            (!s.is_null()).then(|| {
                CStr::from_ptr(svGetNameFromScope(s))
                    .to_string_lossy()
                    .into_owned()
            })
        };
        SCOPE.with(|s| *s.borrow_mut() = scope);
        call("tb_mem_read", || {
            READ.with(|r| r.borrow_mut().as_mut().map(|f| f(addr)))
        })
        .unwrap_or(POISON)
    }

    /// `import "DPI-C" function void tb_mem_write(input int unsigned addr, input bit [63:0] data)`.
    ///
    /// # Safety
    ///
    /// `data` points to two `svBitVecVal` words, as the simulator passes a 64-bit packed input.
    #[no_mangle]
    pub unsafe extern "C" fn tb_mem_write(addr: c_uint, data: *const svBitVecVal) {
        // SAFETY: per the contract above.
        let w = unsafe { std::slice::from_raw_parts(data, 2) };
        let v = w[0] as u64 | (w[1] as u64) << 32;
        call("tb_mem_write", || {
            WRITE.with(|h| h.borrow_mut().as_mut().map(|f| f(addr, v)))
        });
    }
}
