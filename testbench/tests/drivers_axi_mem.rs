//! The AXI4 memory slave against a Rust AXI4 master (test-only) that issues random bursts and
//! checks every beat against a model memory; error injection, out-of-order and interleaved
//! reads, wide and narrow buses, and the slave's protocol checks against a misbehaving master.
//!
//! One file on purpose (about 1,000 lines): the test-only master and the properties that use it.

use proptest::prelude::*;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::path::Path;
use std::rc::Rc;
use testbench::drivers::axi_mem::{
    self, AxiMemConfig, AxiMemSlave, AxiWidths, Burst, Memory, Request,
};
use testbench::drivers::{get_bytes, set_bytes, Dir, Ports, Resp, Wires};
use testbench::prop::{check, Property};
use testbench::rng::Rng;
use testbench::sim::{Bench, Component, Signal};

/// What the master expects a burst to be answered with (mirrors the slave's injected errors).
type Expect = Box<dyn Fn(Dir, &Request) -> Resp>;

struct Sig {
    s: Vec<Option<Signal>>,
}

const NAMES: [&str; 29] = [
    "arvalid", "arready", "araddr", "arlen", "arsize", "arburst", "arid", "rvalid", "rready",
    "rdata", "rresp", "rlast", "rid", "awvalid", "awready", "awaddr", "awlen", "awsize", "awburst",
    "awid", "wvalid", "wready", "wdata", "wstrb", "wlast", "bvalid", "bready", "bresp", "bid",
];

impl Sig {
    fn get(&self, n: &str) -> u64 {
        self.opt(n).map_or(0, Signal::get)
    }
    fn set(&self, n: &str, v: u64) {
        if let Some(s) = self.opt(n) {
            s.set(v)
        }
    }
    fn opt(&self, n: &str) -> Option<&Signal> {
        self.s[NAMES.iter().position(|x| *x == n).unwrap()].as_ref()
    }
    fn sig(&self, n: &str) -> &Signal {
        self.opt(n).unwrap()
    }
}

struct ReadOut {
    seq: u64,
    req: Request,
    resp: Resp,
    /// Expected bytes of each beat, lanes `lo..hi` only.
    want: Vec<(usize, Vec<u8>)>,
    beat: u32,
}

struct WriteOut {
    seq: u64,
    req: Request,
    resp: Resp,
    /// (address, byte) written when the response is OKAY.
    bytes: Vec<(u64, u8)>,
}

/// Knobs of the random master.
#[derive(Clone, Debug)]
struct MasterCfg {
    seed: u64,
    bursts: usize,
    ids: u64,
    window: u64,
    max_reads: usize,
    max_writes: usize,
    idle: u8,
    stall: u8,
    read_percent: u8,
    narrow: bool,
}

/// A random AXI4 master: bursts of random type, size, length and ID in a small window (so they
/// overlap), several reads and writes outstanding; a read is not issued over a write in flight
/// nor a write over anything in flight, so the model memory says exactly what each read returns.
struct Master {
    sig: Sig,
    cfg: MasterCfg,
    rng: Rng,
    bytes: u64,
    max_size_log2: u32,
    expect: Expect,
    model: Memory,
    issued: usize,
    seq: u64,
    ar_q: VecDeque<Request>,
    ar_cur: Option<Request>,
    aw_q: VecDeque<Request>,
    aw_cur: Option<Request>,
    w_q: VecDeque<(Vec<u8>, Vec<u8>, bool)>,
    w_cur: Option<(Vec<u8>, Vec<u8>, bool)>,
    reads: Vec<ReadOut>,
    writes: Vec<WriteOut>,
    /// Beats of a read arrived while another read was part-way through.
    interleaved: u64,
    /// Reads that completed while an older read (another ID) was still outstanding.
    overtaken: u64,
    /// The same for write responses.
    b_overtaken: u64,
    reads_done: u64,
    writes_done: u64,
    err_beats: u64,
    err_writes: u64,
    most_reads: usize,
    errors: Vec<String>,
}

impl Master {
    fn new(wires: &Wires, prefix: &str, cfg: MasterCfg, expect: Expect) -> Master {
        let sig = Sig {
            s: NAMES
                .iter()
                .map(|n| wires.find(&format!("{prefix}_{n}")))
                .collect(),
        };
        let bytes = sig.sig("wdata").width() as u64 / 8;
        Master {
            max_size_log2: if sig.opt("arsize").is_some() {
                bytes.trailing_zeros()
            } else {
                0
            },
            sig,
            rng: Rng::new(cfg.seed),
            cfg,
            bytes,
            expect,
            model: Memory::new(),
            issued: 0,
            seq: 0,
            ar_q: VecDeque::new(),
            ar_cur: None,
            aw_q: VecDeque::new(),
            aw_cur: None,
            w_q: VecDeque::new(),
            w_cur: None,
            reads: Vec::new(),
            writes: Vec::new(),
            interleaved: 0,
            overtaken: 0,
            b_overtaken: 0,
            reads_done: 0,
            writes_done: 0,
            err_beats: 0,
            err_writes: 0,
            most_reads: 0,
            errors: Vec::new(),
        }
    }

    fn done(&self) -> bool {
        self.issued == self.cfg.bursts && self.reads.is_empty() && self.writes.is_empty()
    }

    fn random_request(&mut self) -> Request {
        let full = self.sig.opt("arsize").is_some();
        let size_log2 = if full && self.cfg.narrow {
            self.rng.below(self.max_size_log2 as u64 + 1) as u32
        } else {
            self.bytes.trailing_zeros()
        };
        let size = 1u32 << size_log2;
        let has_len = self.sig.opt("arlen").is_some();
        let has_burst = self.sig.opt("arburst").is_some();
        let id = if self.sig.opt("arid").is_some() {
            self.rng.below(self.cfg.ids)
        } else {
            0
        };
        let kind = if has_burst { self.rng.below(10) } else { 9 };
        let mut addr = self.rng.below(self.cfg.window);
        let (burst, len) = match kind {
            0 if has_len => (Burst::Fixed, 1 + self.rng.below(16) as u32),
            1 | 2 if has_len => {
                addr &= !(size as u64 - 1);
                (Burst::Wrap, [2, 4, 8, 16][self.rng.below(4) as usize])
            }
            _ => {
                // INCR, never across 4 KiB.
                let aligned = addr & !(size as u64 - 1);
                let room = (4096 - aligned % 4096) / size as u64;
                let max = if has_len { room.min(256) } else { 1 };
                let cap = self.rng.below(max) + 1;
                let len = 1 + self.rng.below(cap) as u32;
                (Burst::Incr, len)
            }
        };
        Request {
            id,
            addr,
            len,
            size,
            burst,
        }
    }

    fn lanes(&self, req: &Request, n: u32) -> (usize, usize) {
        let a = req.beat_addr(n);
        let size = req.size as u64;
        let lo = a % self.bytes;
        let hi = (a & !(size - 1)) % self.bytes + size;
        (lo as usize, hi as usize)
    }

    fn overlaps(a: &Request, b: &Request) -> bool {
        let (x0, x1) = a.span();
        let (y0, y1) = b.span();
        x0 < y1 && y0 < x1
    }

    fn try_issue(&mut self) {
        if self.issued == self.cfg.bursts {
            return;
        }
        let req = self.random_request();
        let read = self.rng.chance(self.cfg.read_percent);
        let busy_w = self.writes.iter().any(|w| Self::overlaps(&w.req, &req));
        let busy_r = self.reads.iter().any(|r| Self::overlaps(&r.req, &req));
        let resp = (self.expect)(if read { Dir::Read } else { Dir::Write }, &req);
        if read {
            if busy_w || self.reads.len() >= self.cfg.max_reads {
                return;
            }
            let want = (0..req.len)
                .map(|n| {
                    let (lo, hi) = self.lanes(&req, n);
                    let base = req.beat_addr(n) & !(self.bytes - 1);
                    (lo, self.model.read_vec(base + lo as u64, hi - lo))
                })
                .collect();
            self.reads.push(ReadOut {
                seq: self.seq,
                req,
                resp,
                want,
                beat: 0,
            });
            self.ar_q.push_back(req);
        } else {
            if busy_w || busy_r || self.writes.len() >= self.cfg.max_writes {
                return;
            }
            let mut bytes = Vec::new();
            for n in 0..req.len {
                let (lo, hi) = self.lanes(&req, n);
                let base = req.beat_addr(n) & !(self.bytes - 1);
                let mut data = vec![0u8; self.bytes as usize];
                let mut strb = vec![0u8; (self.bytes as usize).div_ceil(8)];
                let all = self.rng.chance(50);
                for lane in 0..self.bytes as usize {
                    data[lane] = self.rng.next_u64() as u8;
                    if (lo..hi).contains(&lane) && (all || self.rng.chance(60)) {
                        strb[lane / 8] |= 1 << (lane % 8);
                        bytes.push((base + lane as u64, data[lane]));
                    }
                }
                self.w_q.push_back((data, strb, n + 1 == req.len));
            }
            self.writes.push(WriteOut {
                seq: self.seq,
                req,
                resp,
                bytes,
            });
            self.aw_q.push_back(req);
        }
        self.seq += 1;
        self.issued += 1;
    }

    fn drive_addr(&self, ch: &str, req: Option<&Request>) {
        match req {
            Some(r) => {
                self.sig.set(&format!("{ch}addr"), r.addr);
                self.sig.set(&format!("{ch}len"), r.len as u64 - 1);
                self.sig
                    .set(&format!("{ch}size"), r.size.trailing_zeros() as u64);
                self.sig.set(&format!("{ch}burst"), r.burst.bits());
                self.sig.set(&format!("{ch}id"), r.id);
                self.sig.set(&format!("{ch}valid"), 1);
            }
            None => self.sig.set(&format!("{ch}valid"), 0),
        }
    }
}

impl Component for Master {
    fn sample(&mut self, cycle: u64) {
        if self.sig.get("rvalid") == 1 && self.sig.get("rready") == 1 {
            let id = self.sig.get("rid");
            let resp = Resp::from_bits(self.sig.get("rresp"));
            let last = self.sig.get("rlast") == 1;
            let mut data = Vec::new();
            get_bytes(self.sig.sig("rdata"), &mut data);
            match self.reads.iter().position(|r| r.req.id == id) {
                None => self
                    .errors
                    .push(format!("cycle {cycle}: R beat of ID {id} with no read out")),
                Some(k) => {
                    if self
                        .reads
                        .iter()
                        .any(|r| r.beat > 0 && r.seq != self.reads[k].seq)
                    {
                        self.interleaved += 1;
                    }
                    let r = &mut self.reads[k];
                    let (lo, want) = &r.want[r.beat as usize];
                    if resp != r.resp {
                        self.errors.push(format!(
                            "cycle {cycle}: {:x?} beat {}: {resp:?}, expected {:?}",
                            r.req, r.beat, r.resp
                        ));
                    }
                    if resp != Resp::Okay {
                        self.err_beats += 1;
                    } else if &data[*lo..lo + want.len()] != want.as_slice() {
                        self.errors.push(format!(
                            "cycle {cycle}: {:x?} beat {}: data {:02x?}, expected {want:02x?} in lanes from {lo}",
                            r.req, r.beat, data
                        ));
                    }
                    if last != (r.beat + 1 == r.req.len) {
                        self.errors.push(format!(
                            "cycle {cycle}: {:x?} beat {}: rlast {last}",
                            r.req, r.beat
                        ));
                    }
                    r.beat += 1;
                    if r.beat == r.req.len {
                        let seq = r.seq;
                        self.reads.remove(k);
                        if self.reads.iter().any(|r| r.seq < seq) {
                            self.overtaken += 1;
                        }
                        self.reads_done += 1;
                    }
                }
            }
        }
        if self.sig.get("bvalid") == 1 && self.sig.get("bready") == 1 {
            let id = self.sig.get("bid");
            let resp = Resp::from_bits(self.sig.get("bresp"));
            match self.writes.iter().position(|w| w.req.id == id) {
                None => self
                    .errors
                    .push(format!("cycle {cycle}: B of ID {id} with no write out")),
                Some(k) => {
                    let w = self.writes.remove(k);
                    if self.writes.iter().any(|o| o.seq < w.seq) {
                        self.b_overtaken += 1;
                    }
                    if resp != w.resp {
                        self.errors.push(format!(
                            "cycle {cycle}: {:x?}: B {resp:?}, expected {:?}",
                            w.req, w.resp
                        ));
                    }
                    if resp == Resp::Okay {
                        for (a, b) in w.bytes {
                            self.model.set_byte(a, b);
                        }
                    } else {
                        self.err_writes += 1;
                    }
                    self.writes_done += 1;
                }
            }
        }
        if self.ar_cur.is_some() && self.sig.get("arready") == 1 {
            self.ar_cur = None;
        }
        if self.aw_cur.is_some() && self.sig.get("awready") == 1 {
            self.aw_cur = None;
        }
        if self.w_cur.is_some() && self.sig.get("wready") == 1 {
            self.w_cur = None;
        }
        let in_flight = self.reads.len() - self.ar_q.len() - self.ar_cur.is_some() as usize;
        self.most_reads = self.most_reads.max(in_flight);
    }

    fn drive(&mut self, _cycle: u64) {
        self.try_issue();
        let idle = self.cfg.idle;
        // A channel whose last request went keeps valid low, or puts up the next one.
        if self.ar_cur.is_none() {
            if !self.rng.chance(idle) {
                self.ar_cur = self.ar_q.pop_front();
            }
            self.drive_addr("ar", self.ar_cur.as_ref());
        }
        if self.aw_cur.is_none() {
            if !self.rng.chance(idle) {
                self.aw_cur = self.aw_q.pop_front();
            }
            self.drive_addr("aw", self.aw_cur.as_ref());
        }
        if self.w_cur.is_none() {
            if !self.rng.chance(idle) {
                self.w_cur = self.w_q.pop_front();
            }
            match &self.w_cur {
                Some((d, s, l)) => {
                    set_bytes(self.sig.sig("wdata"), d);
                    set_bytes(self.sig.sig("wstrb"), s);
                    self.sig.set("wlast", *l as u64);
                    self.sig.set("wvalid", 1);
                }
                None => self.sig.set("wvalid", 0),
            }
        }
        let r = !self.rng.chance(self.cfg.stall);
        self.sig.set("rready", r as u64);
        let b = !self.rng.chance(self.cfg.stall);
        self.sig.set("bready", b as u64);
    }
}

fn master_cfg(seed: u64) -> MasterCfg {
    MasterCfg {
        seed,
        bursts: 300,
        ids: 4,
        window: 3 * 4096,
        max_reads: 6,
        max_writes: 4,
        idle: 20,
        stall: 20,
        read_percent: 50,
        narrow: true,
    }
}

type Handles = (Bench, Rc<RefCell<AxiMemSlave>>, Rc<RefCell<Master>>);

fn bench(w: AxiWidths, mcfg: MasterCfg, scfg: AxiMemConfig, expect: Expect) -> Handles {
    let wires = Wires::new();
    axi_mem::declare(&wires, "m_axi", w);
    bench_on(&wires, mcfg, scfg, expect)
}

fn bench_on(wires: &Wires, mcfg: MasterCfg, scfg: AxiMemConfig, expect: Expect) -> Handles {
    let mut bench = Bench::new();
    let slave = bench.add(AxiMemSlave::new(wires, "m_axi", scfg));
    let master = bench.add(Master::new(wires, "m_axi", mcfg, expect));
    bench.reset(1);
    (bench, slave, master)
}

fn run(h: &mut Handles) -> Result<(), String> {
    let (bench, slave, master) = h;
    let n = master.borrow().cfg.bursts as u64;
    bench
        .run_until("every burst", 2_000 * n + 10_000, |_| {
            master.borrow().done()
        })
        .map_err(|e| e.to_string())?;
    let m = master.borrow();
    let s = slave.borrow();
    if !m.errors.is_empty() {
        return Err(format!(
            "master saw: {:#?}",
            &m.errors[..m.errors.len().min(5)]
        ));
    }
    if !s.violations.is_empty() {
        return Err(format!("slave saw: {:#?}", s.violations));
    }
    if s.log.len() as u64 != n {
        return Err(format!("slave logged {} bursts", s.log.len()));
    }
    // Every byte the model holds, the slave's memory holds too.
    for p in 0..(m.cfg.window + 4096 * 2) / 4096 {
        if m.model.read_vec(p * 4096, 4096) != s.mem.read_vec(p * 4096, 4096) {
            return Err(format!("memory page {p} differs from the model"));
        }
    }
    Ok(())
}

fn okay() -> Expect {
    Box::new(|_, _| Resp::Okay)
}

fn w(data: u32, id: u32) -> AxiWidths {
    AxiWidths { addr: 32, data, id }
}

#[test]
fn random_bursts_every_width() {
    for (i, data) in [8u32, 16, 32, 64, 128, 256, 512, 1024]
        .into_iter()
        .enumerate()
    {
        let scfg = AxiMemConfig {
            seed: i as u64,
            read_latency: 0..=12,
            ar_stall: 30,
            aw_stall: 30,
            w_stall: 30,
            r_idle: 30,
            b_idle: 30,
            reorder: true,
            ..AxiMemConfig::default()
        };
        let mut h = bench(w(data, 3), master_cfg(100 + i as u64), scfg, okay());
        run(&mut h).unwrap_or_else(|e| panic!("{data}-bit bus: {e}"));
        let m = h.2.borrow();
        assert!(m.reads_done > 50 && m.writes_done > 50, "{data}-bit bus");
    }
}

#[test]
fn bursts_of_different_ids_complete_out_of_order_and_in_order_within_an_id() {
    let scfg = |reorder: bool, interleave: bool| AxiMemConfig {
        seed: 5,
        read_latency: 1..=40,
        reorder,
        interleave,
        ..AxiMemConfig::default()
    };
    let mcfg = MasterCfg {
        read_percent: 90,
        ..master_cfg(6)
    };
    // In order: no read overtakes an older one.
    let mut h = bench(w(64, 4), mcfg.clone(), scfg(false, false), okay());
    run(&mut h).unwrap();
    assert_eq!(h.2.borrow().overtaken, 0);
    assert_eq!(h.2.borrow().interleaved, 0);
    // Reordered across IDs (the master checks the order within each ID on every beat).
    let mut h = bench(w(64, 4), mcfg.clone(), scfg(true, false), okay());
    run(&mut h).unwrap();
    assert!(h.2.borrow().overtaken > 20, "{}", h.2.borrow().overtaken);
    assert_eq!(h.2.borrow().interleaved, 0);
    // Interleaved beats.
    let mut h = bench(w(64, 4), mcfg, scfg(true, true), okay());
    run(&mut h).unwrap();
    assert!(
        h.2.borrow().interleaved > 20,
        "{}",
        h.2.borrow().interleaved
    );
    // Write responses too, in order and reordered.
    let writes = MasterCfg {
        read_percent: 10,
        ..master_cfg(6)
    };
    let wlat = |reorder| AxiMemConfig {
        write_latency: 0..=30,
        ..scfg(reorder, false)
    };
    let mut h = bench(w(64, 4), writes.clone(), wlat(false), okay());
    run(&mut h).unwrap();
    assert_eq!(h.2.borrow().b_overtaken, 0);
    let mut h = bench(w(64, 4), writes, wlat(true), okay());
    run(&mut h).unwrap();
    assert!(h.2.borrow().b_overtaken > 5, "{}", h.2.borrow().b_overtaken);
    // One ID only: reordering has nothing to reorder.
    let one = MasterCfg {
        ids: 1,
        read_percent: 90,
        ..master_cfg(7)
    };
    let mut h = bench(w(64, 4), one, scfg(true, true), okay());
    run(&mut h).unwrap();
    assert_eq!(h.2.borrow().overtaken, 0);
    assert_eq!(h.2.borrow().b_overtaken, 0);
}

#[test]
fn outstanding_reads_are_limited() {
    for max in [1usize, 2, 5] {
        let scfg = AxiMemConfig {
            read_latency: 10..=30,
            max_reads: max,
            reorder: true,
            ..AxiMemConfig::default()
        };
        let mcfg = MasterCfg {
            max_reads: 8,
            read_percent: 100,
            ..master_cfg(8)
        };
        let mut h = bench(w(32, 2), mcfg, scfg, okay());
        run(&mut h).unwrap();
        assert_eq!(h.2.borrow().most_reads, max);
    }
}

#[test]
fn error_regions_answer_every_read_beat_and_the_write_response_and_protect_memory() {
    let region = 0x1000..0x1800u64;
    let bad = |r: &Request, range: &std::ops::Range<u64>| {
        let (lo, hi) = r.span();
        lo < range.end && range.start < hi
    };
    for (resp, dir) in [
        (Resp::SlvErr, None),
        (Resp::DecErr, None),
        (Resp::SlvErr, Some(Dir::Read)),
        (Resp::DecErr, Some(Dir::Write)),
    ] {
        let r2 = region.clone();
        let expect: Expect = Box::new(move |d, req| {
            if bad(req, &r2) && (dir.is_none() || dir == Some(d)) {
                resp
            } else {
                Resp::Okay
            }
        });
        // Reordered across IDs, with long write latencies: a response given to the wrong write
        // of an ID would carry the wrong error.
        let scfg = AxiMemConfig {
            reorder: true,
            read_latency: 1..=20,
            write_latency: 0..=20,
            ..AxiMemConfig::default()
        };
        let mut h = bench(w(64, 2), master_cfg(9), scfg, expect);
        // Known contents in the region: error writes must leave them.
        h.1.borrow_mut().mem.write(0x1000, &[0xa5; 0x800]);
        h.2.borrow_mut().model.write(0x1000, &[0xa5; 0x800]);
        h.1.borrow_mut().inject_error(dir, region.clone(), resp);
        run(&mut h).unwrap_or_else(|e| panic!("{resp:?} {dir:?}: {e}"));
        let m = h.2.borrow();
        if dir != Some(Dir::Write) {
            assert!(
                m.err_beats > 20,
                "{resp:?} {dir:?}: {} error beats",
                m.err_beats
            );
        }
        if dir != Some(Dir::Read) {
            assert!(
                m.err_writes > 5,
                "{resp:?} {dir:?}: {} error writes",
                m.err_writes
            );
            // Every byte of the region is still 0xa5: no error write touched it.
            let s = h.1.borrow();
            assert!(s.mem.read_vec(0x1000, 0x800).iter().all(|b| *b == 0xa5));
        }
        let s = h.1.borrow();
        assert!(s.log.iter().all(|t| (t.resp != Resp::Okay)
            == (bad(&t.req, &region) && (dir.is_none() || dir == Some(t.dir)))));
    }
}

#[test]
fn error_predicate_decides_per_burst() {
    // Bursts of ID 3 are refused with DECERR, whatever their address.
    let expect: Expect = Box::new(|_, r| if r.id == 3 { Resp::DecErr } else { Resp::Okay });
    let mut h = bench(w(32, 2), master_cfg(10), AxiMemConfig::default(), expect);
    let asked = Rc::new(RefCell::new(0u64));
    let a = asked.clone();
    h.1.borrow_mut().set_error_fn(move |_, r| {
        *a.borrow_mut() += 1;
        (r.id == 3).then_some(Resp::DecErr)
    });
    run(&mut h).unwrap();
    assert!(h.2.borrow().err_beats > 0 && h.2.borrow().err_writes > 0);
    // Asked once per burst.
    assert_eq!(*asked.borrow(), 300);
}

#[test]
fn optional_signals_absent() {
    // No IDs, no AxLEN/AxSIZE/AxBURST: single full-width beats at ID 0.
    let wires = Wires::new();
    for (n, width) in [
        ("arvalid", 1),
        ("arready", 1),
        ("araddr", 20),
        ("rvalid", 1),
        ("rready", 1),
        ("rdata", 64),
        ("rresp", 2),
        ("rlast", 1),
        ("awvalid", 1),
        ("awready", 1),
        ("awaddr", 20),
        ("wvalid", 1),
        ("wready", 1),
        ("wdata", 64),
        ("wstrb", 8),
        ("wlast", 1),
        ("bvalid", 1),
        ("bready", 1),
        ("bresp", 2),
    ] {
        wires.add(&format!("m_axi_{n}"), width);
    }
    let mut h = bench_on(
        &wires,
        MasterCfg {
            window: 0x800,
            ..master_cfg(11)
        },
        AxiMemConfig {
            reorder: true,
            ar_stall: 40,
            ..AxiMemConfig::default()
        },
        okay(),
    );
    run(&mut h).unwrap();
    assert!(h
        .1
        .borrow()
        .log
        .iter()
        .all(|t| t.req.len == 1 && t.req.size == 8));
}

/// Random master and slave settings: everything the master reads matches the model.
struct RandomProp;

#[derive(Clone, Debug)]
struct Case {
    data: u32,
    master: MasterCfg,
    lat: (u32, u32),
    stalls: [u8; 5],
    max_reads: usize,
    reorder: bool,
    interleave: bool,
}

impl Property for RandomProp {
    type Input = Case;
    const NAME: &'static str = "axi_mem_random";

    fn strategy() -> BoxedStrategy<Case> {
        (
            prop::sample::select(vec![8u32, 32, 64, 128, 512]),
            (any::<u64>(), 1usize..120, 1u64..6, 1usize..8, 1usize..6),
            (0u8..70, 0u8..70, 0u8..101, any::<bool>()),
            (0u32..10, 0u32..30),
            prop::array::uniform5(0u8..70),
            (1usize..10, any::<bool>(), any::<bool>()),
        )
            .prop_map(
                |(
                    data,
                    (seed, bursts, ids, mr, mw),
                    (idle, stall, rp, narrow),
                    lat,
                    stalls,
                    (max_reads, reorder, interleave),
                )| Case {
                    data,
                    master: MasterCfg {
                        seed,
                        bursts,
                        ids,
                        window: 2 * 4096,
                        max_reads: mr,
                        max_writes: mw,
                        idle,
                        stall,
                        read_percent: rp,
                        narrow,
                    },
                    lat,
                    stalls,
                    max_reads,
                    reorder,
                    interleave,
                },
            )
            .boxed()
    }

    fn run(c: &Case, _waves: Option<&Path>) -> Result<(), String> {
        let scfg = AxiMemConfig {
            seed: c.master.seed ^ 1,
            read_latency: c.lat.0..=c.lat.0 + c.lat.1,
            write_latency: 0..=c.lat.1,
            ar_stall: c.stalls[0],
            aw_stall: c.stalls[1],
            w_stall: c.stalls[2],
            r_idle: c.stalls[3],
            b_idle: c.stalls[4],
            max_reads: c.max_reads,
            max_writes: 4,
            reorder: c.reorder,
            interleave: c.interleave,
        };
        let mut h = bench(w(c.data, 3), c.master.clone(), scfg, okay());
        run(&mut h)
    }
}

#[test]
fn random_settings_property() {
    check::<RandomProp>(32);
}

// ---------------------------------------------------------------------------------------------
// Protocol checks: a hand-driven master breaks one rule at a time.

struct Hand {
    bench: Bench,
    wires: Wires,
    slave: Rc<RefCell<AxiMemSlave>>,
}

impl Hand {
    fn new(cfg: AxiMemConfig) -> Hand {
        let wires = Wires::new();
        axi_mem::declare(&wires, "m_axi", w(64, 4));
        let mut bench = Bench::new();
        let slave = bench.add(AxiMemSlave::new(&wires, "m_axi", cfg));
        bench.reset(1);
        wires.port("m_axi_rready").set(1);
        wires.port("m_axi_bready").set(1);
        Hand {
            bench,
            wires,
            slave,
        }
    }
    fn set(&self, n: &str, v: u64) {
        self.wires.port(&format!("m_axi_{n}")).set(v);
    }
    fn get(&self, n: &str) -> u64 {
        self.wires.port(&format!("m_axi_{n}")).get()
    }
    /// Holds `valid` of channel `ch` until the slave takes it.
    fn send(&mut self, ch: &str, fields: &[(&str, u64)]) {
        for (n, v) in fields {
            self.set(n, *v);
        }
        self.set(&format!("{ch}valid"), 1);
        loop {
            let ready = self.get(&format!("{ch}ready")) == 1;
            self.bench.step();
            if ready {
                break;
            }
        }
        self.set(&format!("{ch}valid"), 0);
    }
    fn ar(&mut self, addr: u64, len: u64, size: u64, burst: u64) {
        self.send(
            "ar",
            &[
                ("araddr", addr),
                ("arlen", len),
                ("arsize", size),
                ("arburst", burst),
            ],
        );
    }
    fn aw(&mut self, addr: u64, len: u64, size: u64, burst: u64) {
        self.send(
            "aw",
            &[
                ("awaddr", addr),
                ("awlen", len),
                ("awsize", size),
                ("awburst", burst),
            ],
        );
    }
    fn w(&mut self, data: u64, strb: u64, last: bool) {
        self.send(
            "w",
            &[("wdata", data), ("wstrb", strb), ("wlast", last as u64)],
        );
    }
    fn violations(&mut self) -> Vec<String> {
        self.bench.run(50);
        self.slave.borrow().violations.clone()
    }
}

fn assert_flags(v: &[String], want: &str) {
    assert!(
        v.iter().any(|v| v.contains(want)),
        "want `{want}` in {v:#?}"
    );
}

#[test]
fn flags_an_incr_burst_across_4k() {
    let mut h = Hand::new(AxiMemConfig::default());
    h.ar(0xff0, 3, 3, 1); // 4 beats of 8 bytes from 0xff0: 0xff0..0x1010
    assert_flags(&h.violations(), "crosses a 4 KiB boundary");
    let mut h = Hand::new(AxiMemConfig::default());
    h.ar(0xfe0, 3, 3, 1); // ends exactly at 0x1000: fine
    h.ar(0x1000, 255, 3, 1); // 2 KiB, fine
    assert!(h.violations().is_empty());
}

#[test]
fn flags_valid_dropped_or_payload_changed_before_ready() {
    let mut h = Hand::new(AxiMemConfig {
        ar_stall: 100,
        w_stall: 100,
        ..AxiMemConfig::default()
    });
    h.set("araddr", 0x100);
    h.set("arvalid", 1);
    h.bench.run(3);
    h.set("arvalid", 0);
    h.set("wvalid", 1);
    h.set("wdata", 1);
    h.bench.run(2);
    h.set("wdata", 2);
    let v = h.violations();
    assert_flags(&v, "AR: valid dropped");
    assert_flags(&v, "W: payload changed");
}

#[test]
fn flags_wlast_misplaced_and_wrong_beat_counts() {
    let mut h = Hand::new(AxiMemConfig::default());
    h.aw(0x0, 3, 3, 1); // 4 beats
    h.w(1, 0xff, false);
    h.w(2, 0xff, true); // WLAST on beat 2
    assert_flags(&h.violations(), "WLAST on beat 2 of a 4-beat burst");
    let mut h = Hand::new(AxiMemConfig::default());
    h.aw(0x0, 1, 3, 1); // 2 beats
    h.w(1, 0xff, false);
    h.w(2, 0xff, false); // no WLAST
    assert_flags(&h.violations(), "no WLAST on beat 2");
    // Data before its address is fine.
    let mut h = Hand::new(AxiMemConfig::default());
    h.w(0x1122_3344_5566_7788, 0xff, true);
    h.bench.run(5);
    h.aw(0x40, 0, 3, 1);
    assert!(h.violations().is_empty());
    assert_eq!(h.slave.borrow().mem.read_u64(0x40), 0x1122_3344_5566_7788);
}

#[test]
fn flags_bad_wrap_fixed_size_and_strobes_and_refuses_the_reserved_burst() {
    let mut h = Hand::new(AxiMemConfig::default());
    h.ar(0x0, 2, 3, 2); // WRAP of 3 beats
    h.ar(0x4, 3, 3, 2); // WRAP, unaligned
    h.ar(0x0, 16, 3, 0); // FIXED of 17 beats
    h.ar(0x0, 0, 4, 1); // 16-byte beats on an 8-byte bus
    h.aw(0x2, 0, 1, 1); // 2 bytes at 0x2: lanes 2..4
    h.w(0, 0x01, true); // strobe on lane 0
    let v = h.violations();
    assert_flags(&v, "WRAP burst of 3 beats");
    assert_flags(&v, "not aligned to its size");
    assert_flags(&v, "FIXED burst of 17 beats");
    assert_flags(&v, "wider than the 8-byte bus");
    assert_flags(&v, "strobe on byte lane 0, outside lanes 2..4");
    // The reserved burst type: flagged, and every beat answered SLVERR.
    let mut h = Hand::new(AxiMemConfig::default());
    h.ar(0x0, 1, 3, 3);
    let v = h.violations();
    assert_flags(&v, "reserved burst type");
    let log = &h.slave.borrow().log;
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].resp, Resp::SlvErr);
}

#[test]
fn wrap_and_fixed_bursts_hit_the_right_bytes() {
    let mut h = Hand::new(AxiMemConfig::default());
    h.slave
        .borrow_mut()
        .mem
        .write(0x100, &(0..64u8).collect::<Vec<u8>>());
    // WRAP, 4 beats of 8 bytes from 0x110: 0x110, 0x118, 0x100, 0x108.
    let req = Request {
        id: 0,
        addr: 0x110,
        len: 4,
        size: 8,
        burst: Burst::Wrap,
    };
    let addrs: Vec<u64> = (0..4).map(|n| req.beat_addr(n)).collect();
    assert_eq!(addrs, [0x110, 0x118, 0x100, 0x108]);
    assert_eq!(req.span(), (0x100, 0x120));
    let beats = Rc::new(RefCell::new(Vec::new()));
    struct Tap(Signal, Signal, Rc<RefCell<Vec<u64>>>);
    impl Component for Tap {
        fn sample(&mut self, _c: u64) {
            if self.0.is_high() {
                self.2.borrow_mut().push(self.1.get());
            }
        }
        fn drive(&mut self, _c: u64) {}
    }
    h.bench.add(Tap(
        h.wires.port("m_axi_rvalid"),
        h.wires.port("m_axi_rdata"),
        beats.clone(),
    ));
    h.ar(0x110, 3, 3, 2);
    h.bench.run(20);
    let want: Vec<u64> = [0x10u64, 0x18, 0x00, 0x08]
        .iter()
        .map(|o| u64::from_le_bytes(std::array::from_fn(|i| (o + i as u64) as u8)))
        .collect();
    assert_eq!(*beats.borrow(), want);
    // FIXED writes: every beat to the same bytes; the last one stays.
    h.aw(0x200, 2, 2, 0);
    h.w(0xaaaa_aaaa, 0x0f, false);
    h.w(0xbbbb_bbbb, 0x0f, false);
    h.w(0xcccc_cccc, 0x0f, true);
    assert!(h.violations().is_empty());
    assert_eq!(h.slave.borrow().mem.read_u64(0x200), 0xcccc_cccc);
}

#[test]
fn memory_is_sparse_and_crosses_pages() {
    let mut m = Memory::new();
    assert_eq!(m.read_u64(0xdead_0000), 0);
    m.write(0xffe, &[1, 2, 3, 4]);
    assert_eq!(m.pages(), 2);
    assert_eq!(m.read_u32(0xffe), 0x0403_0201);
    m.write_u64(u64::MAX - 3, 0x0807_0605_0403_0201); // wraps to address 0
    assert_eq!(m.byte(u64::MAX), 4);
    assert_eq!(m.byte(0), 5);
}
