//! Property: the descriptor walker emits exactly the model's segments, transfer by transfer,
//! for random PRP layouts (page sizes, offsets, lists anywhere, chains) and SGL layouts
//! (fragmented data blocks, bit buckets, segment chains), with injected faults (bad offsets,
//! bad types, bad segment descriptors, length mismatches, SLVERR on descriptor fetches), random
//! AXI latency, reordering and backpressure, random backpressure on `m_seg`, commands back to
//! back, and a reset mid-traffic. Every descriptor burst the walker reads is one the model
//! plans for a command (the descriptor memory the command names), and no protocol is broken.

use crate::drivers::axi_mem::{AxiMemConfig, AxiMemSlave, Memory};
use crate::drivers::stream::StreamSink;
use crate::drivers::{Dir, Ports, Resp, Wires};
use crate::models::dma_walker::{bursts, sgl_desc, walk, Command, Segment, Walk};
use crate::prop::Property;
use crate::rng::Rng;
use crate::sim::{Component, Dut, Signal, Sim};
use proptest::prelude::*;
use std::collections::VecDeque;
use std::ops::Range;
use std::path::Path;

/// One transfer: a layout drawn from `seed`, a length, a fault.
#[derive(Debug, Clone)]
pub struct Xfer {
    pub(crate) sgl: bool,
    pub(crate) write: bool,
    pub(crate) mps: u8,
    pub(crate) len: u32,
    /// 0: none; otherwise a fault of the layout's kind (see `build_prp` / `build_sgl`).
    pub(crate) fault: u8,
    pub(crate) seed: u64,
    /// The command's `from` (a window's offset), modulo `len + 1`; 0 half the time.
    pub(crate) from: u32,
}

/// Generated stimulus.
#[derive(Debug, Clone)]
pub struct Input {
    /// Commands before the reset (cut short by it), then commands after it.
    before: Vec<Xfer>,
    after: Vec<Xfer>,
    /// Cycle of the reset, counted from the first command.
    reset_at: u16,
    read_latency: (u32, u32),
    ar_stall: u8,
    r_idle: u8,
    reorder: bool,
    seg_stall: u8,
    cmd_idle: u8,
    seed: u64,
}

fn xfer() -> impl Strategy<Value = Xfer> {
    let len = prop_oneof![
        3 => 0u32..20_000,
        1 => 0u32..300,
        1 => (1u32 << 21) - 70_000..(1u32 << 21),
        1 => Just(0u32),
    ];
    (
        any::<bool>(),
        any::<bool>(),
        0u8..=2,
        len,
        prop_oneof![3 => Just(0u8), 2 => 1u8..=6],
        any::<u64>(),
        prop_oneof![Just(0u32), any::<u32>()],
    )
        .prop_map(|(sgl, write, mps, len, fault, seed, from)| Xfer {
            sgl,
            write,
            mps,
            len,
            fault,
            seed,
            from,
        })
}

fn strategy() -> BoxedStrategy<Input> {
    (
        prop::collection::vec(xfer(), 0..4),
        prop::collection::vec(xfer(), 1..6),
        0u16..600,
        (0u32..4, 0u32..40),
        0u8..60,
        0u8..60,
        any::<bool>(),
        0u8..70,
        0u8..50,
        any::<u64>(),
    )
        .prop_map(
            |(
                before,
                after,
                reset_at,
                lat,
                ar_stall,
                r_idle,
                reorder,
                seg_stall,
                cmd_idle,
                seed,
            )| {
                Input {
                    before,
                    after,
                    reset_at,
                    read_latency: (lat.0, lat.0 + lat.1),
                    ar_stall,
                    r_idle,
                    reorder,
                    seg_stall,
                    cmd_idle,
                    seed,
                }
            },
        )
        .boxed()
}

/// A command with its layout in memory: the command, its page size, the ranges to answer
/// SLVERR.
pub(crate) struct Built {
    pub(crate) cmd: Command,
    pub(crate) mps: u8,
    pub(crate) errors: Vec<Range<u64>>,
}

/// PRP faults: 1 PRP1 not dword aligned, 2 PRP2 (page or list pointer) misaligned, 3 a list
/// entry with an offset, 4 a chain pointer not qword aligned, 5 SLVERR on a list page, 6 none.
pub(crate) fn build_prp(x: &Xfer, base: u64, mem: &mut Memory, tag: u64) -> Built {
    let mut rng = Rng::new(x.seed);
    let page = 4096u64 << x.mps;
    let mut errors = Vec::new();
    // Pages of this transfer are drawn from its own 4 GiB window.
    let page_at = |rng: &mut Rng| base + rng.below(1 << 16) * page;
    let mut prp1 = page_at(&mut rng) + rng.below(page / 4) * 4;
    if rng.chance(30) {
        prp1 = prp1 - prp1 % page + page - 4 * (1 + rng.below(8));
    }
    if x.fault == 1 {
        prp1 |= 1 + rng.below(3);
    }
    let first = (x.len as u64).min(page - prp1 % page);
    let rest = x.len as u64 - first;
    let mut prp2 = 0;
    if rest > 0 && rest <= page {
        prp2 = page_at(&mut rng);
        if x.fault == 2 {
            prp2 += 8 * (1 + rng.below(page / 8 - 1));
        }
    } else if rest > page {
        let mut entries = rest.div_ceil(page);
        let mut list = page_at(&mut rng)
            + if rng.chance(50) {
                page - 8 * (1 + rng.below(4))
            } else {
                8 * rng.below(page / 8)
            };
        prp2 = list;
        if x.fault == 2 {
            prp2 += 1 + rng.below(7);
        }
        let bad_entry = rng.below(entries);
        let mut k = 0;
        while entries > 0 {
            let slots = (page - list % page) / 8;
            if x.fault == 5 && (rng.chance(40) || entries <= slots) {
                errors.push(list..list + 8);
            }
            let mut next_list = None;
            for s in 0..slots {
                let at = list + 8 * s;
                if s == slots - 1 && entries > 1 {
                    // The chain pointer: the next list page, anywhere, maybe mid-page.
                    let next = page_at(&mut rng)
                        + if rng.chance(50) {
                            page - 8 * (1 + rng.below(3))
                        } else {
                            0
                        };
                    mem.write_u64(at, if x.fault == 4 { next | 4 } else { next });
                    next_list = Some(next);
                    break;
                }
                let mut e = page_at(&mut rng);
                if x.fault == 3 && k == bad_entry {
                    e += 4 * (1 + rng.below(page / 4 - 1));
                }
                mem.write_u64(at, e);
                k += 1;
                entries -= 1;
                if entries == 0 {
                    break;
                }
            }
            match next_list {
                Some(n) => list = n,
                None => break,
            }
        }
    }
    Built {
        cmd: Command {
            tag,
            write: x.write,
            sgl: false,
            dptr: prp1 as u128 | (prp2 as u128) << 64,
            len: x.len,
            from: x.from % (x.len + 1),
        },
        mps: x.mps,
        errors,
    }
}

/// SGL faults: 1 a descriptor of a bad type (bit bucket in the read direction included), 2 the
/// command's length too long, 3 too short, 4 SLVERR on a segment, 5 a bad segment descriptor
/// length, 6 none.
pub(crate) fn build_sgl(x: &Xfer, base: u64, mem: &mut Memory, tag: u64) -> Built {
    let mut rng = Rng::new(x.seed);
    let mut errors = Vec::new();
    let at = |rng: &mut Rng, align: u64| base + rng.below((1 << 36) / align) * align;
    // Data descriptors: random lengths summing to len; some zero, buckets when writing.
    let mut descs: Vec<u128> = Vec::new();
    let mut left = x.len as u64;
    // One case in 16 (by the seed, so the other cases keep their draws): one long segment of
    // 260 to 459 descriptors, more than the walker's word buffer (512 words) holds, so its
    // fetches wait for room (cover point `descriptor_fifo_full`).
    let long = x.seed % 16 == 5;
    let pieces = if long {
        260 + x.seed / 16 % 200
    } else {
        1 + rng.below(12)
    };
    for i in 0..pieces {
        let n = if i + 1 == pieces {
            left
        } else {
            rng.below(left / 2 + 1)
        };
        left -= n;
        let ty = if x.write && rng.chance(25) { 1 } else { 0 };
        descs.push(sgl_desc(at(&mut rng, 1), n as u32, ty));
    }
    if x.fault == 1 {
        let i = rng.below(descs.len() as u64) as usize;
        let ty = if !x.write && rng.chance(50) {
            1
        } else {
            4 + rng.below(12) as u8
        };
        descs[i] = descs[i] & !(0xffu128 << 120) | ((ty as u128) << 4) << 120;
    }
    let len = match x.fault {
        2 => x.len.saturating_add(1 + rng.below(100) as u32),
        3 if x.len > 0 => x.len - 1 - rng.below(x.len.min(100) as u64) as u32,
        _ => x.len,
    };
    let dptr = if descs.len() == 1 && rng.chance(50) {
        descs[0]
    } else {
        // Split into segments; each but the last ends with a pointer to the next.
        let mut chunks: Vec<Vec<u128>> = Vec::new();
        let mut i = 0;
        while i < descs.len() {
            let n = if long {
                descs.len() - i
            } else {
                (1 + rng.below(4) as usize).min(descs.len() - i)
            };
            chunks.push(descs[i..i + n].to_vec());
            i += n;
        }
        let mut next: Option<u128> = None;
        for (ci, chunk) in chunks.iter().enumerate().rev() {
            let mut body = chunk.clone();
            if let Some(p) = next {
                body.push(p);
            }
            let bytes = 16 * body.len() as u64;
            // Segments anywhere (qword aligned), sometimes across a 4 KiB boundary.
            let addr = if rng.chance(30) {
                at(&mut rng, 4096) + 4096 - 8 * (1 + rng.below(4))
            } else {
                at(&mut rng, 8)
            };
            for (k, d) in body.iter().enumerate() {
                mem.write(addr + 16 * k as u64, &d.to_le_bytes());
            }
            if x.fault == 4 && (ci == 0 || rng.chance(50)) {
                errors.push(addr + bytes - 1..addr + bytes);
            }
            let last = ci + 1 == chunks.len();
            let ty = if last && rng.chance(70) { 3 } else { 2 };
            let mut l = bytes as u32;
            if x.fault == 5 && ci == 0 {
                l += 8;
            }
            next = Some(sgl_desc(addr, l, ty));
        }
        next.unwrap()
    };
    Built {
        cmd: Command {
            tag,
            write: x.write,
            sgl: true,
            dptr,
            len,
            from: x.from % (len + 1),
        },
        mps: x.mps,
        errors,
    }
}

/// Drives `s_cmd` (the 128-bit `dptr` needs wide writes) and `mps_i` with each command.
pub(crate) struct CmdSource {
    valid: Signal,
    ready: Signal,
    tag: Signal,
    write: Signal,
    sgl: Signal,
    dptr: Signal,
    len: Signal,
    /// `s_cmd_from_i` (the walker's; the engines set it themselves).
    from: Option<Signal>,
    mps: Signal,
    pub(crate) queue: VecDeque<(Command, u8)>,
    current: Option<(Command, u8)>,
    rng: Rng,
    idle: u8,
    accepted: usize,
}

impl CmdSource {
    /// A command source on `s_cmd` (and `mps_i`) of `sim`, idle `idle` percent of cycles.
    pub(crate) fn new<M: Dut>(sim: &Sim<M>, seed: u64, idle: u8) -> CmdSource {
        CmdSource {
            valid: sim.signal("s_cmd_valid_i"),
            ready: sim.signal("s_cmd_ready_o"),
            tag: sim.signal("s_cmd_tag_i"),
            write: sim.signal("s_cmd_write_i"),
            sgl: sim.signal("s_cmd_sgl_i"),
            dptr: sim.signal("s_cmd_dptr_i"),
            len: sim.signal("s_cmd_len_i"),
            from: sim.find("s_cmd_from_i"),
            mps: sim.signal("mps_i"),
            queue: VecDeque::new(),
            current: None,
            rng: Rng::new(seed),
            idle,
            accepted: 0,
        }
    }
}

impl Component for CmdSource {
    fn sample(&mut self, _cycle: u64) {
        if self.current.is_some() && self.ready.is_high() {
            self.current = None;
            self.accepted += 1;
        }
    }
    fn drive(&mut self, _cycle: u64) {
        if self.current.is_none() && !self.rng.chance(self.idle) {
            self.current = self.queue.pop_front();
        }
        match &self.current {
            Some((c, mps)) => {
                self.valid.set(1);
                self.tag.set(c.tag);
                self.write.set(c.write as u64);
                self.sgl.set(c.sgl as u64);
                let d = c.dptr;
                self.dptr.set_words(&[
                    d as u32,
                    (d >> 32) as u32,
                    (d >> 64) as u32,
                    (d >> 96) as u32,
                ]);
                self.len.set(c.len as u64);
                if let Some(f) = &self.from {
                    f.set(u64::from(c.from));
                }
                self.mps.set(*mps as u64);
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

/// The walker's ports, and detached write-channel wires for the memory slave (the walker is a
/// read-only master).
struct ReadOnly<'a, M: Dut> {
    sim: &'a Sim<M>,
    wires: Wires,
}

impl<M: Dut> Ports for ReadOnly<'_, M> {
    fn find(&self, name: &str) -> Option<Signal> {
        self.sim.find(name).or_else(|| self.wires.find(name))
    }
    fn describe(&self) -> String {
        self.sim.describe()
    }
}

fn seg_of(w: &[u64]) -> Segment {
    Segment {
        tag: w[0],
        write: w[1] != 0,
        addr: w[2],
        len: w[3] as u32,
        bucket: w[4] != 0,
        last: w[5] != 0,
        status: w[6] as u16,
    }
}

/// Splits segments into transfers at `last`.
fn transfers(segs: &[Segment]) -> Vec<Vec<Segment>> {
    let mut out = vec![Vec::new()];
    for s in segs {
        out.last_mut().unwrap().push(*s);
        if s.last {
            out.push(Vec::new());
        }
    }
    if out.last().is_some_and(Vec::is_empty) {
        out.pop();
    }
    out
}

fn run<M: Dut>(input: &Input, waves: Option<&Path>) -> Result<(), String> {
    let mut sim = match waves {
        Some(p) => Sim::<M>::with_waves(p),
        None => Sim::<M>::new(),
    };
    let len_w = sim.signal("s_cmd_len_i").width();
    let tag_w = sim.signal("s_cmd_tag_i").width();
    let wires = Wires::new();
    for (n, w) in [
        ("m_axi_awvalid_o", 1),
        ("m_axi_awready_i", 1),
        ("m_axi_awaddr_o", 64),
        ("m_axi_wvalid_o", 1),
        ("m_axi_wready_i", 1),
        ("m_axi_wdata_o", sim.signal("m_axi_rdata_i").width()),
        ("m_axi_wstrb_o", sim.signal("m_axi_rdata_i").width() / 8),
        ("m_axi_wlast_o", 1),
        ("m_axi_bvalid_i", 1),
        ("m_axi_bready_o", 1),
        ("m_axi_bresp_i", 2),
    ] {
        wires.add(n, w);
    }
    let cfg = AxiMemConfig {
        seed: input.seed,
        read_latency: input.read_latency.0..=input.read_latency.1,
        ar_stall: input.ar_stall,
        r_idle: input.r_idle,
        reorder: input.reorder,
        ..AxiMemConfig::default()
    };
    let slave = AxiMemSlave::new(&ReadOnly { sim: &sim, wires }, "m_axi", cfg);
    let bus = slave.bytes() as u64;
    let mem = sim.add(slave);
    let sink = sim.add(StreamSink::new(
        &sim,
        "m_seg",
        &["tag", "write", "addr", "len", "bucket", "last", "status"],
        input.seed ^ 0x5e9,
        input.seg_stall,
    ));
    let src = sim.add(CmdSource::new(&sim, input.seed ^ 0xc0d, input.cmd_idle));
    sim.reset(2);

    // Lay out every transfer in its own window of memory, and plan it with the model.
    let plan = |xs: &[Xfer], first: usize| -> Vec<(Built, Walk)> {
        let mut out = Vec::new();
        for (i, x) in xs.iter().enumerate() {
            let mut x = x.clone();
            x.len &= ((1u64 << len_w) - 1) as u32;
            let base = (first + i + 1) as u64 * (1u64 << 40);
            let tag = (first + i) as u64 & ((1 << tag_w) - 1);
            let mut m = mem.borrow_mut();
            let mut b = if x.sgl {
                build_sgl(&x, base, &mut m.mem, tag)
            } else {
                build_prp(&x, base, &mut m.mem, tag)
            };
            b.cmd.len &= ((1u64 << len_w) - 1) as u32;
            for r in &b.errors {
                m.inject_error(Some(Dir::Read), r.clone(), Resp::SlvErr);
            }
            let snapshot = m.mem.clone();
            let errs = b.errors.clone();
            let w = walk(&b.cmd, b.mps, |a, n| {
                let lo = a & !(bus - 1);
                let hi = (a + n as u64).div_ceil(bus) * bus;
                if errs.iter().any(|r| r.start < hi && lo < r.end) {
                    return Err(());
                }
                Ok(snapshot.read_vec(a, n as usize))
            });
            out.push((b, w));
        }
        out
    };
    let before = plan(&input.before, 0);
    let after = plan(&input.after, input.before.len());
    let allowed: Vec<(u64, u32)> = before
        .iter()
        .chain(&after)
        .flat_map(|(_, w)| w.fetches.iter().copied())
        .flat_map(|(a, n)| bursts(a, n as u64 / 8))
        .collect();

    let check_prefix =
        |got: &[Segment], want: &[(Built, Walk)], exact: bool| -> Result<(), String> {
            let got_t = transfers(got);
            for (k, t) in got_t.iter().enumerate() {
                let Some((b, w)) = want.get(k) else {
                    return Err(format!(
                        "transfer {k}: {t:x?} but only {} commands",
                        want.len()
                    ));
                };
                let complete = t.last().is_some_and(|s| s.last);
                let ok = if complete || exact {
                    *t == w.segments
                } else {
                    w.segments.starts_with(t)
                };
                if !ok {
                    return Err(format!(
                        "transfer {k} ({:x?}, mps {}):\n    RTL   {t:x?}\n    model {:x?}",
                        b.cmd, b.mps, w.segments
                    ));
                }
            }
            if exact && got_t.len() != want.len() {
                return Err(format!(
                    "{} transfers for {} commands",
                    got_t.len(),
                    want.len()
                ));
            }
            Ok(())
        };

    // Phase 1: commands, cut by a reset.
    for (b, _) in &before {
        src.borrow_mut().queue.push_back((b.cmd, b.mps));
    }
    sim.run(input.reset_at as u64);
    let got: Vec<Segment> = sink
        .borrow()
        .received
        .iter()
        .map(|(_, w)| seg_of(w))
        .collect();
    check_prefix(&got, &before, false).map_err(|e| format!("before the reset: {e}"))?;
    sim.reset(2);
    sink.borrow_mut().received.clear();

    // Phase 2: every command to its end.
    for (b, _) in &after {
        src.borrow_mut().queue.push_back((b.cmd, b.mps));
    }
    let n = after.len();
    let limit = 20_000
        + after
            .iter()
            .map(|(_, w)| 40 * w.segments.len() as u64)
            .sum::<u64>();
    let res = sim.run_until("the last segment of every command", limit, |_| {
        sink.borrow()
            .received
            .iter()
            .filter(|(_, w)| w[5] != 0)
            .count()
            >= n
    });
    sim.run(20);
    let got: Vec<Segment> = sink
        .borrow()
        .received
        .iter()
        .map(|(_, w)| seg_of(w))
        .collect();
    check_prefix(&got, &after, res.is_ok())?;
    res.map_err(|h| h.to_string())?;

    let m = mem.borrow();
    if let Some(v) = m.violations.first() {
        return Err(format!("AXI protocol: {v}"));
    }
    if let Some(v) = sink.borrow().violations.first() {
        return Err(format!("m_seg protocol: {v}"));
    }
    for t in &m.log {
        let r = &t.req;
        let named = allowed.iter().any(|&(a, n)| {
            let lanes_before = (a % bus) / 8;
            let beats = (lanes_before * 8 + n as u64).div_ceil(bus);
            r.addr == a & !(bus - 1) && r.len as u64 == beats
        });
        if t.dir == Dir::Read && !named {
            return Err(format!(
                "read burst {r:x?} is not a descriptor fetch any command names"
            ));
        }
    }
    Ok(())
}

/// The descriptor walker against its model.
pub struct DmaWalkerProp;

impl Property for DmaWalkerProp {
    type Input = Input;
    const NAME: &'static str = "dma_walker";
    fn strategy() -> BoxedStrategy<Input> {
        strategy()
    }
    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        run::<crate::rtl::DmaWalkerTop>(input, waves)
    }
}
