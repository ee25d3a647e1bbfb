//! Property: the DMA mover against its golden model (`models::dma_mover`). Random transfers,
//! read and write mixed back to back, of 1 byte to more than 128 KiB in random segments (memory,
//! bit bucket, a closing status segment), at random offsets; random AXI latency (up to 100
//! cycles and more), backpressure, stream idle cycles and sink stalls, injected SLVERR/DECERR
//! on beat-aligned regions, and a reset in the middle of traffic. Checks: the bytes of every
//! read transfer, the framing and tags of `m_data`, completions in order with their status,
//! memory after the run (bytes no segment names unchanged), and no AXI protocol violation
//! (4 KiB crossings included) or stream protocol violation.

use super::{data_word, split_data};
use crate::drivers::axi_mem::{AxiMemConfig, AxiMemSlave, Memory};
use crate::drivers::stream::{drive_fields, StreamSink};
use crate::drivers::Resp;
use crate::models::dma_mover::{self as model, Segment, Transfer};
use crate::prop::Property;
use crate::rng::Rng;
use crate::rtl::DmaMoverTop as Top;
use crate::sim::{Component, Dut, Signal, Sim};
use proptest::prelude::*;
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::ops::Range;
use std::path::Path;
use std::rc::Rc;

/// Base of the host memory window the transfers use.
pub const BASE: u64 = 0x4000_0000;
/// Size of the window.
pub const WINDOW: u64 = 0x4_0000;

/// One generated segment: offset in the window, length, kind (0 memory, 1 bucket, 2 status).
#[derive(Debug, Clone)]
pub struct SegIn {
    off: u64,
    len: u32,
    kind: u8,
}

/// One generated transfer.
#[derive(Debug, Clone)]
pub struct XferIn {
    write: bool,
    segs: Vec<SegIn>,
}

/// Generated stimulus.
#[derive(Debug, Clone)]
pub struct Input {
    xfers: Vec<XferIn>,
    /// Reset after this many cycles of the first half, then run the second half.
    reset_at: Option<u16>,
    latency: (u32, u32),
    stalls: (u8, u8, u8, u8),
    src_idle: u8,
    sink_stall: u8,
    /// Error regions: (offset in the window / 64, beats, DECERR?)
    errors: Vec<(u64, u8, bool)>,
    seed: u64,
}

fn seg_strategy() -> impl Strategy<Value = SegIn> {
    let len = prop_oneof![
        6 => 1u32..80,
        3 => 80u32..5000,
        1 => 5000u32..140_000,
    ];
    (
        0u64..WINDOW,
        len,
        prop_oneof![9 => Just(0u8), 1 => Just(1u8)],
    )
        .prop_map(|(off, len, kind)| SegIn { off, len, kind })
}

fn xfer_strategy() -> impl Strategy<Value = XferIn> {
    (
        any::<bool>(),
        prop::collection::vec(seg_strategy(), 0..4),
        0u8..10,
        1u32..600,
    )
        .prop_map(|(write, mut segs, st, tail)| {
            if st == 0 || segs.is_empty() {
                // A closing status segment with the bytes left (maybe none).
                segs.push(SegIn {
                    off: 0,
                    len: if st == 0 { tail % 200 } else { 0 },
                    kind: 2,
                });
            }
            XferIn { write, segs }
        })
}

fn strategy() -> BoxedStrategy<Input> {
    (
        prop::collection::vec(xfer_strategy(), 1..8),
        prop::option::weighted(0.15, 0u16..3000),
        prop_oneof![Just((1u32, 8u32)), Just((100, 100)), Just((1, 140))],
        (0u8..40, 0u8..40, 0u8..40, 0u8..40),
        0u8..50,
        0u8..50,
        prop::collection::vec((0u64..WINDOW / 64, 1u8..9, any::<bool>()), 0..3),
        any::<u64>(),
    )
        .prop_map(
            |(xfers, reset_at, latency, stalls, src_idle, sink_stall, errors, seed)| Input {
                xfers,
                reset_at,
                latency,
                stalls,
                src_idle,
                sink_stall,
                errors,
                seed,
            },
        )
        .boxed()
}

/// A ready/valid source whose queue a test can drop (after a reset mid-traffic).
pub(crate) struct Src {
    valid: Signal,
    ready: Signal,
    fields: Vec<Signal>,
    pub(crate) queue: VecDeque<Vec<u64>>,
    current: Option<Vec<u64>>,
    rng: Rng,
    idle: u8,
}

impl Src {
    pub(crate) fn new<M: Dut>(
        sim: &Sim<M>,
        prefix: &str,
        fields: &[&str],
        seed: u64,
        idle: u8,
    ) -> Src {
        let s = Src {
            valid: sim.signal(&format!("{prefix}_valid_i")),
            ready: sim.signal(&format!("{prefix}_ready_o")),
            fields: fields
                .iter()
                .map(|f| sim.signal(&format!("{prefix}_{f}_i")))
                .collect(),
            queue: VecDeque::new(),
            current: None,
            rng: Rng::new(seed),
            idle,
        };
        s.valid.set(0);
        s
    }
}

impl Component for Src {
    fn sample(&mut self, _cycle: u64) {
        if self.current.is_some() && self.ready.is_high() {
            self.current = None;
        }
    }
    fn drive(&mut self, _cycle: u64) {
        if self.current.is_none() && !self.queue.is_empty() && !self.rng.chance(self.idle) {
            self.current = self.queue.pop_front();
        }
        match &self.current {
            Some(w) => {
                self.valid.set(1);
                drive_fields(&self.fields, w);
            }
            None => self.valid.set(0),
        }
    }
    fn reset(&mut self) {
        self.current = None;
        self.queue.clear();
        self.valid.set(0);
    }
}

/// The transfers of the input, as the model sees them; tags count up. Write data is drawn
/// from `rng`.
fn transfers(xs: &[XferIn], rng: &mut Rng, tag_mask: u64, first_tag: u64) -> Vec<Transfer> {
    xs.iter()
        .enumerate()
        .map(|(i, x)| {
            let segs: Vec<Segment> = x
                .segs
                .iter()
                .map(|s| {
                    let len = s
                        .len
                        .min((WINDOW - s.off) as u32)
                        .max(u32::from(s.kind == 0));
                    Segment {
                        addr: BASE + s.off,
                        len,
                        bucket: s.kind == 1,
                        status: if s.kind == 2 { 0x013 } else { 0 },
                    }
                })
                .collect();
            let n: usize = segs.iter().map(|s| s.len as usize).sum();
            let data = if x.write {
                (0..n).map(|_| rng.next_u64() as u8).collect()
            } else {
                Vec::new()
            };
            Transfer {
                tag: ((first_tag + i as u64) & tag_mask) as u8,
                write: x.write,
                segs,
                data,
            }
        })
        .collect()
}

struct Bench {
    sim: Sim<Top>,
    seg: Rc<RefCell<Src>>,
    sdata: Rc<RefCell<Src>>,
    mdata: Rc<RefCell<StreamSink>>,
    done: Rc<RefCell<StreamSink>>,
    mem: Rc<RefCell<AxiMemSlave>>,
    bytes: usize,
    tag_mask: u64,
}

fn push(b: &Bench, ts: &[Transfer]) {
    let bytes = b.bytes;
    for t in ts {
        let last = t.segs.len() - 1;
        for (i, s) in t.segs.iter().enumerate() {
            b.seg.borrow_mut().queue.push_back(vec![
                u64::from(t.tag),
                t.write as u64,
                s.addr,
                u64::from(s.len),
                s.bucket as u64,
                (i == last) as u64,
                u64::from(s.status),
            ]);
        }
        if t.write {
            let n = t.data.len();
            for (k, chunk) in t.data.chunks(bytes).enumerate() {
                let is_last = (k + 1) * bytes >= n;
                b.sdata.borrow_mut().queue.push_back(data_word(
                    chunk,
                    bytes,
                    is_last,
                    u64::from(t.tag),
                ));
            }
        }
    }
}

/// The model's expectation for read transfer `i`, loosened where an earlier write failed: a
/// write that ended with an AXI error may have landed in part (the bursts the slave did not
/// refuse), so a later read of its bytes may see the old value or the written one. A byte the
/// RTL gave that such a write put there is taken as expected.
fn loosen(ts: &[Transfer], outcome: &model::Outcome, i: usize, got: &[u8]) -> model::ReadExpect {
    let mut e = outcome.reads[i].clone().expect("a read");
    let mut maybe: HashMap<u64, Vec<u8>> = HashMap::new();
    for (j, t) in ts[..i].iter().enumerate() {
        if !t.write || outcome.status[j] != model::DATA_TRANSFER_ERROR {
            continue;
        }
        let mut pos = 0;
        for s in &t.segs {
            if s.status == 0 && !s.bucket {
                for k in 0..s.len as usize {
                    maybe
                        .entry(s.addr + k as u64)
                        .or_default()
                        .push(t.data[pos + k]);
                }
            }
            pos += s.len as usize;
        }
    }
    if maybe.is_empty() {
        return e;
    }
    let mut pos = 0;
    for s in &ts[i].segs {
        if s.status == 0 && !s.bucket {
            for k in 0..s.len as usize {
                let p = pos + k;
                let a = s.addr + k as u64;
                if p < got.len() && maybe.get(&a).is_some_and(|v| v.contains(&got[p])) {
                    e.bytes[p] = got[p];
                }
            }
        }
        pos += s.len as usize;
    }
    e
}

/// Runs `ts` to completion and checks everything against the model.
fn run_phase(b: &mut Bench, ts: &[Transfer], errors: &[Range<u64>]) -> Result<(), String> {
    let before: Memory = b.mem.borrow().mem.clone();
    b.mdata.borrow_mut().received.clear();
    b.done.borrow_mut().received.clear();
    push(b, ts);
    let total: u64 = ts.iter().map(|t| t.len() as u64).sum();
    let limit = 20_000 + total * 4;
    let want = ts.len();
    let done = b.done.clone();
    b.sim
        .run_until("every completion", limit, |_| {
            done.borrow().received.len() >= want
        })
        .map_err(|h| h.to_string())?;
    b.sim.run(20);
    let outcome = model::run(&before, ts, errors);
    let got: Vec<(u64, u64)> = b
        .done
        .borrow()
        .received
        .iter()
        .map(|(_, w)| (w[0], w[1]))
        .collect();
    if got.len() != want {
        return Err(format!("{} completions for {want} transfers", got.len()));
    }
    for (i, (t, (tag, st))) in ts.iter().zip(&got).enumerate() {
        if *tag != u64::from(t.tag) || *st != u64::from(outcome.status[i]) {
            return Err(format!(
                "completion {i}: tag {tag} status {st:#05x}; expected tag {} status {:#05x}",
                t.tag, outcome.status[i]
            ));
        }
    }
    let groups = split_data(&b.mdata.borrow().received, b.bytes, true)?;
    let reads: Vec<(usize, &Transfer)> = ts
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.write && !t.is_empty())
        .collect();
    if reads.len() != groups.len() {
        return Err(format!(
            "{} read transfers on m_data, expected {}",
            groups.len(),
            reads.len()
        ));
    }
    for ((i, t), (tag, bytes)) in reads.iter().zip(&groups) {
        if *tag != u64::from(t.tag) {
            return Err(format!(
                "transfer {i}: m_data tag {tag}, expected {}",
                t.tag
            ));
        }
        loosen(ts, &outcome, *i, bytes)
            .check(bytes)
            .map_err(|e| format!("transfer {i} (read, tag {}): {e}", t.tag))?;
    }
    let mem = b.mem.borrow();
    model::check_memory(
        &before,
        &mem.mem,
        &outcome,
        BASE - 4096..BASE + WINDOW + 4096,
    )?;
    Ok(())
}

fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
    let mut sim = match waves {
        Some(p) => Sim::<Top>::with_waves(p),
        None => Sim::<Top>::new(),
    };
    let bytes = (sim.signal("m_data_data_o").width() / 8) as usize;
    let tag_mask = (1u64 << sim.signal("s_seg_tag_i").width()) - 1;
    let mut rng = Rng::new(input.seed);
    let seg = sim.add(Src::new(
        &sim,
        "s_seg",
        &["tag", "write", "addr", "len", "bucket", "last", "status"],
        rng.next_u64(),
        input.src_idle,
    ));
    let sdata = sim.add(Src::new(
        &sim,
        "s_data",
        &["data", "keep", "last", "tag"],
        rng.next_u64(),
        input.src_idle,
    ));
    let mdata = sim.add(StreamSink::new(
        &sim,
        "m_data",
        &["data", "keep", "last", "tag"],
        rng.next_u64(),
        input.sink_stall,
    ));
    let done = sim.add(StreamSink::new(
        &sim,
        "m_done",
        &["tag", "status"],
        rng.next_u64(),
        input.sink_stall,
    ));
    let (ar, aw, w, r) = input.stalls;
    let mem = sim.add(AxiMemSlave::new(
        &sim,
        "m_axi",
        AxiMemConfig {
            seed: rng.next_u64(),
            read_latency: input.latency.0..=input.latency.1,
            write_latency: 0..=input.latency.1.min(20),
            ar_stall: ar,
            aw_stall: aw,
            w_stall: w,
            r_idle: r,
            b_idle: r,
            max_reads: 8,
            max_writes: 8,
            reorder: true,
            interleave: false,
        },
    ));
    {
        let mut m = mem.borrow_mut();
        let mut fill = vec![0u8; (WINDOW + 8192) as usize];
        for x in fill.iter_mut() {
            *x = rng.next_u64() as u8;
        }
        m.mem.write(BASE - 4096, &fill);
    }
    let errors: Vec<Range<u64>> = input
        .errors
        .iter()
        .map(|&(o, n, dec)| {
            // Beat aligned at every width (a slave answers a whole beat).
            let lo = (BASE + o * 64) & !(bytes as u64 - 1);
            let r = lo..lo + u64::from(n) * bytes as u64;
            let resp = if dec { Resp::DecErr } else { Resp::SlvErr };
            mem.borrow_mut().inject_error(None, r.clone(), resp);
            r
        })
        .collect();
    sim.reset(2);
    let mut b = Bench {
        sim,
        seg,
        sdata,
        mdata,
        done,
        mem,
        bytes,
        tag_mask,
    };
    let (first, second) = match input.reset_at {
        Some(_) => input.xfers.split_at(input.xfers.len() / 2),
        None => (&input.xfers[..0], &input.xfers[..]),
    };
    if let Some(at) = input.reset_at {
        // Traffic that a reset cuts short: nothing is checked but the protocol.
        let ts = transfers(first, &mut rng, b.tag_mask, 0);
        push(&b, &ts);
        b.sim.run(u64::from(at));
        b.sim.reset(3);
        b.mdata.borrow_mut().received.clear();
        b.done.borrow_mut().received.clear();
    }
    let ts = transfers(second, &mut rng, b.tag_mask, 5);
    run_phase(&mut b, &ts, &errors)?;
    let mem = b.mem.borrow();
    if let Some(v) = mem.violations.first() {
        return Err(format!(
            "AXI protocol: {v} ({} in all)",
            mem.violations.len()
        ));
    }
    for s in [&b.mdata, &b.done] {
        if let Some(v) = s.borrow().violations.first() {
            return Err(format!("stream protocol: {v}"));
        }
    }
    Ok(())
}

/// The mover property (see the module documentation).
pub struct DmaMoverProp;

impl Property for DmaMoverProp {
    type Input = Input;
    const NAME: &'static str = "dma_mover";
    fn strategy() -> BoxedStrategy<Input> {
        strategy()
    }
    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        run(input, waves)
    }
}
