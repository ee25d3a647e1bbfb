//! Property: the whole DMA engine (walker, mover, AR arbiter, counters) end to end, against the
//! two golden models composed: the walker model turns each command into segments, the mover
//! model turns the segments into the bytes on `m_data`, the memory after and each status.
//!
//! Random commands of both directions (PRP layouts with lists and chains, SGL layouts with
//! segment chains and bit buckets, built in host memory by the walker property's builders,
//! with their faults), random data, random AXI latency, reordering, interleaving and
//! backpressure on the one AXI4 port (whose ID top bit says walker 0 / mover 1), SLVERR on
//! descriptor fetches and SLVERR/DECERR on data beats, backpressure on `m_data` and `m_done`,
//! idle cycles on `s_cmd` and `s_data` (exactly `len` bytes per write transfer, packed from
//! lane 0), and in some cases a reset in the middle of traffic. Checks after the run: the
//! bytes and tag of every read transfer on `m_data`; one completion per command, in command
//! order, with the model's tag and status; memory after the run equal to the model's (and no
//! byte outside the transfers' segments changed, no page written that the test did not lay
//! out); every AXI burst is one the commands name (walker reads: descriptor fetches with ID top
//! bit 0; mover reads and writes: inside a data segment of that direction, ID top bit 1); no
//! AXI or stream protocol violation; and the counters, read through the AXI4-Lite CSR port:
//! bytes each way (data segments, bit buckets excluded), transfers, errors by status.

use super::mover::Src;
use super::walker::{build_prp, build_sgl, Built, CmdSource, Xfer};
use super::{data_word, split_data};
use crate::drivers::axi_mem::{AxiMemConfig, AxiMemSlave, Memory};
use crate::drivers::axil::{Axil, AxilConfig};
use crate::drivers::stream::StreamSink;
use crate::drivers::{Dir, Resp};
use crate::models::dma_mover::{self as mover_model, Outcome, Transfer};
use crate::models::dma_walker::{bursts, walk, Command, Walk};
use crate::prop::Property;
use crate::rng::Rng;
use crate::rtl::regs::dma_csr;
use crate::rtl::DmaEngineTop as Top;
use crate::sim::Sim;
use proptest::prelude::*;
use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

/// Generated stimulus.
#[derive(Debug, Clone)]
pub struct Input {
    /// Commands cut short by a reset after `reset_at` cycles (only with `reset_at`).
    before: Vec<Xfer>,
    reset_at: Option<u16>,
    /// Commands run to their end and checked.
    xfers: Vec<Xfer>,
    /// Data beats answered with an error: (transfer, position, beats, DECERR?).
    data_errors: Vec<(u8, u64, u8, bool)>,
    read_latency: (u32, u32),
    /// Percent: AR, AW, W stalls, R and B idle cycles.
    stalls: (u8, u8, u8, u8, u8),
    reorder: bool,
    interleave: bool,
    cmd_idle: u8,
    data_idle: u8,
    mdata_stall: u8,
    done_stall: u8,
    seed: u64,
}

fn xfer() -> impl Strategy<Value = Xfer> {
    let len = prop_oneof![
        8 => 0u32..5000,
        4 => 0u32..300,
        4 => 5000u32..40_000,
        2 => 40_000u32..140_000,
        1 => Just(0u32),
        1 => (1u32 << 21) - 1000..(1u32 << 21),
    ];
    (
        any::<bool>(),
        any::<bool>(),
        0u8..=2,
        len,
        prop_oneof![3 => Just(0u8), 2 => 1u8..=6],
        any::<u64>(),
    )
        .prop_map(|(sgl, write, mps, len, fault, seed)| Xfer {
            sgl,
            write,
            mps,
            len,
            fault,
            seed,
            from: 0,
        })
}

fn strategy() -> BoxedStrategy<Input> {
    (
        (
            prop::collection::vec(xfer(), 1..4),
            prop::option::weighted(0.2, 0u16..4000),
            prop::collection::vec(xfer(), 1..6),
            prop::collection::vec((any::<u8>(), any::<u64>(), 1u8..5, any::<bool>()), 0..3),
        ),
        (
            prop_oneof![Just((1u32, 8u32)), Just((100, 100)), Just((1, 140))],
            (0u8..40, 0u8..40, 0u8..40, 0u8..40, 0u8..40),
            any::<bool>(),
            any::<bool>(),
        ),
        (0u8..50, 0u8..50, 0u8..50, 0u8..50, any::<u64>()),
    )
        .prop_map(
            |(
                (before, reset_at, xfers, data_errors),
                (read_latency, stalls, reorder, interleave),
                (cmd_idle, data_idle, mdata_stall, done_stall, seed),
            )| Input {
                before: if reset_at.is_some() {
                    before
                } else {
                    Vec::new()
                },
                reset_at,
                xfers,
                data_errors,
                read_latency,
                stalls,
                reorder,
                interleave,
                cmd_idle,
                data_idle,
                mdata_stall,
                done_stall,
                seed,
            },
        )
        .boxed()
}

/// `r` widened to whole beats of a `bus`-byte data bus.
fn round_out(r: &Range<u64>, bus: u64) -> Range<u64> {
    r.start & !(bus - 1)..r.end.div_ceil(bus) * bus
}

fn overlaps(a: &Range<u64>, b: &Range<u64>) -> bool {
    a.start < b.end && b.start < a.end
}

/// One command, laid out in memory and planned with the models.
struct Planned {
    cmd: Command,
    mps: u8,
    walk: Walk,
    /// Every error region of this command's window (beat aligned), with its response.
    errors: Vec<(Range<u64>, Resp)>,
    /// Write direction: the bytes on `s_data`.
    data: Vec<u8>,
}

impl Planned {
    /// The segments that name memory (data and bit buckets), as ranges, with `bucket`.
    fn named(&self) -> impl Iterator<Item = (Range<u64>, bool)> + '_ {
        self.walk
            .segments
            .iter()
            .filter(|s| s.status == 0 && s.len > 0)
            .map(|s| (s.addr..s.addr + u64::from(s.len), s.bucket))
    }

    /// Descriptor memory the walker may read.
    fn fetched(&self) -> impl Iterator<Item = Range<u64>> + '_ {
        self.walk.fetches.iter().map(|&(a, n)| a..a + u64::from(n))
    }

    fn transfer(&self) -> Transfer {
        Transfer {
            tag: self.cmd.tag as u8,
            write: self.cmd.write,
            segs: self
                .walk
                .segments
                .iter()
                .map(|s| mover_model::Segment {
                    addr: s.addr,
                    len: s.len,
                    bucket: s.bucket,
                    status: s.status,
                })
                .collect(),
            data: self.data.clone(),
        }
    }
}

fn walk_with(
    mem: &Memory,
    cmd: &Command,
    mps: u8,
    errors: &[(Range<u64>, Resp)],
    bus: u64,
) -> Walk {
    walk(cmd, mps, |a, n| {
        let r = round_out(&(a..a + u64::from(n)), bus);
        if errors.iter().any(|(e, _)| overlaps(e, &r)) {
            return Err(());
        }
        Ok(mem.read_vec(a, n as usize))
    })
}

/// Lays out command `index` (window `index + 1` of 1 TiB) and plans it. A layout whose data
/// would overlap its own descriptors is drawn again (a write there would change what the walker
/// reads, which the models do not follow). Data segments are filled with random bytes. `len_mask`
/// and `bus` are the engine's sizes: its length field's mask and its data bus in bytes.
fn plan(
    x: &Xfer,
    index: usize,
    tag: u64,
    (len_mask, bus): (u32, u64),
    data_errors: &[(u64, u8, bool)],
    mem: &mut Memory,
    rng: &mut Rng,
) -> Planned {
    let mut attempt = 0u64;
    let mut p = loop {
        let mut x = x.clone();
        x.len &= len_mask;
        x.seed = x
            .seed
            .wrapping_add(attempt.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let base = ((index as u64 + 1) << 40) + (attempt << 37);
        let b: Built = if x.sgl {
            build_sgl(&x, base, mem, tag)
        } else {
            build_prp(&x, base, mem, tag)
        };
        let mut cmd = b.cmd;
        cmd.len &= len_mask;
        let errors: Vec<(Range<u64>, Resp)> = b
            .errors
            .iter()
            .map(|r| (round_out(r, bus), Resp::SlvErr))
            .collect();
        let walk = walk_with(mem, &cmd, b.mps, &errors, bus);
        let p = Planned {
            cmd,
            mps: b.mps,
            walk,
            errors,
            data: Vec::new(),
        };
        let clash = p
            .named()
            .any(|(r, _)| p.fetched().any(|f| overlaps(&round_out(&f, bus), &r)));
        if !clash || attempt == 7 {
            break p;
        }
        attempt += 1;
    };
    // Errors on data beats, then the walk again (an error may hit a descriptor too).
    let data: Vec<Range<u64>> = p.named().filter(|(_, b)| !b).map(|(r, _)| r).collect();
    if !data.is_empty() {
        for &(pick, beats, dec) in data_errors {
            let r = &data[(pick % data.len() as u64) as usize];
            let at = (r.start + (pick >> 16) % (r.end - r.start)) & !(bus - 1);
            let resp = if dec { Resp::DecErr } else { Resp::SlvErr };
            p.errors.push((at..at + bus * u64::from(beats), resp));
        }
        p.walk = walk_with(mem, &p.cmd, p.mps, &p.errors, bus);
    }
    let named: Vec<Range<u64>> = p.named().map(|(r, _)| r).collect();
    for r in named {
        let bytes: Vec<u8> = (r.start..r.end).map(|_| rng.next_u64() as u8).collect();
        mem.write(r.start, &bytes);
    }
    if p.cmd.write {
        p.data = (0..p.cmd.len).map(|_| rng.next_u64() as u8).collect();
    }
    p
}

/// The stream beats of a write transfer: `bus` bytes each from lane 0, `keep` on the last.
fn data_beats(p: &Planned, bus: usize) -> Vec<Vec<u64>> {
    let n = p.data.len();
    p.data
        .chunks(bus)
        .enumerate()
        .map(|(k, chunk)| data_word(chunk, bus, (k + 1) * bus >= n, p.cmd.tag))
        .collect()
}

/// Memory after the run against the model: every byte of `watch` holds the value the model
/// writes last, or (a failed transfer's write) the old or the written value.
fn check_memory(
    before: &Memory,
    after: &Memory,
    outcome: &Outcome,
    watch: &[Range<u64>],
) -> Result<(), String> {
    let mut want = before.clone();
    for &(a, v) in &outcome.writes {
        want.set_byte(a, v);
    }
    let mut maybe: HashMap<u64, Vec<u8>> = HashMap::new();
    for &(a, v) in &outcome.maybe {
        maybe.entry(a).or_default().push(v);
    }
    let (mut g, mut w) = (vec![0u8; 4096], vec![0u8; 4096]);
    for r in watch {
        let mut a = r.start;
        while a < r.end {
            let n = (r.end - a).min(4096) as usize;
            after.read(a, &mut g[..n]);
            want.read(a, &mut w[..n]);
            if let Some(i) = (0..n).find(|&i| {
                g[i] != w[i]
                    && !maybe
                        .get(&(a + i as u64))
                        .is_some_and(|v| v.contains(&g[i]))
            }) {
                let at = a + i as u64;
                return Err(format!(
                    "memory byte {at:#x} is {:#04x}; before {:#04x}, expected {:#04x}{}",
                    g[i],
                    before.byte(at),
                    w[i],
                    if maybe.contains_key(&at) {
                        " (or a failed write's value)"
                    } else {
                        ""
                    }
                ));
            }
            a += n as u64;
        }
    }
    if after.pages() != want.pages() {
        return Err(format!(
            "memory has {} pages after the run, expected {}: a write landed outside every \
             page the test laid out",
            after.pages(),
            want.pages()
        ));
    }
    Ok(())
}

/// Sorted, merged ranges.
fn merge(mut rs: Vec<Range<u64>>) -> Vec<Range<u64>> {
    rs.sort_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = Vec::new();
    for r in rs {
        match out.last_mut() {
            Some(l) if r.start <= l.end => l.end = l.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
    let mut sim = Sim::<Top>::maybe_waves(waves);
    let bus = u64::from(sim.signal("m_data_data_o").width() / 8);
    let len_mask = ((1u64 << sim.signal("s_cmd_len_i").width()) - 1) as u32;
    let tag_mask = (1u64 << sim.signal("s_cmd_tag_i").width()) - 1;
    let id_top = 1u64 << (sim.signal("m_axi_arid_o").width() - 1);
    let mut rng = Rng::new(input.seed);
    let cmd = sim.add(CmdSource::new(&sim, rng.next_u64(), input.cmd_idle));
    let sdata = sim.add(Src::new(
        &sim,
        "s_data",
        &["data", "keep", "last", "tag"],
        rng.next_u64(),
        input.data_idle,
    ));
    let mdata = sim.add(StreamSink::new(
        &sim,
        "m_data",
        &["data", "keep", "last", "tag"],
        rng.next_u64(),
        input.mdata_stall,
    ));
    let done = sim.add(StreamSink::new(
        &sim,
        "m_done",
        &["tag", "status"],
        rng.next_u64(),
        input.done_stall,
    ));
    let (ar, aw, w, r, b) = input.stalls;
    let mem = sim.add(AxiMemSlave::new(
        &sim,
        "m_axi",
        AxiMemConfig {
            seed: rng.next_u64(),
            read_latency: input.read_latency.0..=input.read_latency.1,
            write_latency: 0..=input.read_latency.1.min(20),
            ar_stall: ar,
            aw_stall: aw,
            w_stall: w,
            r_idle: r,
            b_idle: b,
            max_reads: 8,
            max_writes: 8,
            reorder: input.reorder,
            interleave: input.reorder && input.interleave,
        },
    ));
    let axil = Axil::attach(
        &mut sim,
        "s_axil",
        AxilConfig {
            seed: rng.next_u64(),
            idle_percent: 20,
            stall_percent: 20,
            ..AxilConfig::default()
        },
    );

    // Every command in its own window; the ones cut by the reset first.
    let all: Vec<&Xfer> = input.before.iter().chain(&input.xfers).collect();
    let mut planned = Vec::new();
    {
        let mut m = mem.borrow_mut();
        for (i, x) in all.iter().enumerate() {
            let errs: Vec<(u64, u8, bool)> = input
                .data_errors
                .iter()
                .filter(|e| usize::from(e.0) % all.len() == i)
                .map(|e| (e.1, e.2, e.3))
                .collect();
            let p = plan(
                x,
                i,
                i as u64 & tag_mask,
                (len_mask, bus),
                &errs,
                &mut m.mem,
                &mut rng,
            );
            for (r, resp) in &p.errors {
                m.inject_error(None, r.clone(), *resp);
            }
            planned.push(p);
        }
    }
    let (first, second) = planned.split_at(input.before.len());
    let push = |ps: &[Planned]| {
        for p in ps {
            cmd.borrow_mut().queue.push_back((p.cmd, p.mps));
            sdata.borrow_mut().queue.extend(data_beats(p, bus as usize));
        }
    };
    sim.reset(2);
    if let Some(at) = input.reset_at {
        // Traffic that a reset cuts short: only the protocol is checked.
        push(first);
        sim.run(u64::from(at));
        sim.reset(3);
        mdata.borrow_mut().received.clear();
        done.borrow_mut().received.clear();
    }
    let before: Memory = mem.borrow().mem.clone();
    let log_start = mem.borrow().log.len();
    push(second);
    let transfers: Vec<Transfer> = second.iter().map(Planned::transfer).collect();
    let errors: Vec<Range<u64>> = planned
        .iter()
        .flat_map(|p| p.errors.iter().map(|(r, _)| r.clone()))
        .collect();
    let outcome = mover_model::run(&before, &transfers, &errors);
    let total: u64 = second.iter().map(|p| u64::from(p.cmd.len)).sum();
    let pieces: u64 = second
        .iter()
        .map(|p| (p.walk.segments.len() + p.walk.fetches.len()) as u64)
        .sum();
    let limit = 30_000 + 4 * total + 400 * pieces;
    let want = second.len();
    // A hang is reported after STUCK cycles without progress (a completion, a data beat
    // either way, an AXI burst finished), so a failing case shrinks quickly.
    const STUCK: u64 = 20_000;
    let (d, md, sd, mm) = (done.clone(), mdata.clone(), sdata.clone(), mem.clone());
    let mut last = (0, 0, 0, 0);
    let mut since = 0u64;
    let res = sim.run_until("every completion", limit, |_| {
        let now = (
            d.borrow().received.len(),
            md.borrow().received.len(),
            sd.borrow().queue.len(),
            mm.borrow().log.len(),
        );
        if now == last {
            since += 1;
        } else {
            (last, since) = (now, 0);
        }
        now.0 >= want || since > STUCK
    });
    let res = match res {
        Ok(_) if since > STUCK => Err(format!("hang: no progress for {STUCK} cycles")),
        r => r.map_err(|h| h.to_string()),
    };
    sim.run(20);

    // Completions: in command order, the model's tag and status.
    let got: Vec<(u64, u64)> = done
        .borrow()
        .received
        .iter()
        .map(|(_, w)| (w[0], w[1]))
        .collect();
    for (i, (tag, st)) in got.iter().enumerate() {
        let Some(p) = second.get(i) else {
            return Err(format!("completion {i} (tag {tag}) for {want} commands"));
        };
        if *tag != p.cmd.tag || *st != u64::from(outcome.status[i]) {
            return Err(format!(
                "completion {i}: tag {tag} status {st:#05x}; expected tag {} status {:#05x} \
                 ({:x?}, mps {}; walker segments {:x?})",
                p.cmd.tag, outcome.status[i], p.cmd, p.mps, p.walk.segments
            ));
        }
    }
    if let Err(h) = res {
        let next = &second[got.len()];
        let v = |n: &str| sim.signal(n).get();
        return Err(format!(
            "{h} (R: rvalid {} rid {:#x} rready {}; s_cmd ready {}): {} of {want} completions; \
             next: {:x?}, mps {}, walker segments {:x?}",
            v("m_axi_rvalid_i"),
            v("m_axi_rid_i"),
            v("m_axi_rready_o"),
            v("s_cmd_ready_o"),
            got.len(),
            next.cmd,
            next.mps,
            next.walk.segments
        ));
    }

    // Read data on m_data.
    let groups = split_data(&mdata.borrow().received, bus as usize, false)?;
    let reads: Vec<usize> = (0..want)
        .filter(|&i| !transfers[i].write && !transfers[i].is_empty())
        .collect();
    if reads.len() != groups.len() {
        return Err(format!(
            "{} read transfers on m_data, expected {}",
            groups.len(),
            reads.len()
        ));
    }
    for (&i, (tag, bytes)) in reads.iter().zip(&groups) {
        let t = &transfers[i];
        if *tag != u64::from(t.tag) {
            return Err(format!(
                "transfer {i}: m_data tag {tag}, expected {}",
                t.tag
            ));
        }
        outcome.reads[i]
            .as_ref()
            .expect("a read")
            .check(bytes)
            .map_err(|e| {
                format!(
                    "transfer {i} (read, {:x?}, mps {}): {e}",
                    second[i].cmd, second[i].mps
                )
            })?;
    }

    // Memory: what the model writes, nothing else.
    {
        let m = mem.borrow();
        let page = |r: &Range<u64>| (r.start & !4095) - 4096..(r.end.div_ceil(4096) + 1) * 4096;
        let watch: Vec<Range<u64>> = second
            .iter()
            .flat_map(|p| {
                p.named()
                    .map(|(r, _)| page(&r))
                    .chain(p.fetched().map(|r| page(&r)))
                    .collect::<Vec<_>>()
            })
            .collect();
        check_memory(&before, &m.mem, &outcome, &merge(watch))?;

        // Every burst is one the commands name, with the right ID top bit.
        let fetches: Vec<(u64, u32)> = second
            .iter()
            .flat_map(|p| p.walk.fetches.iter().copied())
            .flat_map(|(a, n)| bursts(a, u64::from(n) / 8))
            .collect();
        let data = |write: bool| -> Vec<Range<u64>> {
            merge(
                second
                    .iter()
                    .filter(|p| p.cmd.write == write)
                    .flat_map(|p| {
                        p.named()
                            .filter(|(_, b)| !b)
                            .map(|(r, _)| round_out(&r, bus))
                    })
                    .collect(),
            )
        };
        let (rd, wr) = (data(false), data(true));
        for t in &m.log[log_start..] {
            let q = &t.req;
            let span = q.addr..q.addr + u64::from(q.len) * bus;
            let ok = match (t.dir, q.id & id_top != 0) {
                (Dir::Read, false) => fetches.iter().any(|&(a, n)| {
                    q.addr == a & !(bus - 1)
                        && u64::from(q.len) == ((a % bus) + u64::from(n)).div_ceil(bus)
                }),
                (Dir::Read, true) => rd
                    .iter()
                    .any(|r| r.start <= span.start && span.end <= r.end),
                (Dir::Write, true) => wr
                    .iter()
                    .any(|r| r.start <= span.start && span.end <= r.end),
                (Dir::Write, false) => false,
            };
            if !ok {
                return Err(format!(
                    "{:?} burst {q:x?} (ID top bit {}) is not one the commands name",
                    t.dir,
                    q.id & id_top != 0
                ));
            }
        }
        if let Some(v) = m.violations.first() {
            return Err(format!("AXI protocol: {v} ({} in all)", m.violations.len()));
        }
    }
    for (name, s) in [("m_data", &mdata), ("m_done", &done)] {
        if let Some(v) = s.borrow().violations.first() {
            return Err(format!("{name} protocol: {v}"));
        }
    }

    // Counters, through the CSR port.
    let mut expect: HashMap<&str, u32> = HashMap::new();
    for p in second {
        let n: u64 = p
            .named()
            .filter(|(_, b)| !b)
            .map(|(r, _)| r.end - r.start)
            .sum();
        let key = if p.cmd.write {
            "bytes_written"
        } else {
            "bytes_read"
        };
        let e = expect.entry(key).or_default();
        *e = e.wrapping_add(n as u32);
    }
    expect.insert("transfers", want as u32);
    for st in &outcome.status {
        let key = match st {
            0 => continue,
            0x04 => "err_data_transfer",
            0x0d => "err_sgl_segment",
            0x0f => "err_sgl_length",
            0x11 => "err_sgl_type",
            0x13 => "err_prp_offset",
            _ => "err_other",
        };
        *expect.entry(key).or_default() += 1;
    }
    // The counters are read-only: a write answers OKAY and changes nothing; an offset past the
    // last register answers SLVERR and reads as 0 (rtl/dma_csr.md).
    let mut rng = Rng::new(input.seed ^ 0xc5a5);
    for &(name, off, _) in dma_csr::REGISTERS {
        if rng.chance(40) {
            let v = rng.next_u64() & 0xffff_ffff;
            let r = axil
                .write_resp(&mut sim, u64::from(off), v, 0xf)
                .map_err(|e| format!("write to counter {name}: {e:?}"))?;
            if r != Resp::Okay {
                return Err(format!(
                    "a write to read-only counter {name} (CSR {off:#04x}) answered {r:?}, not OKAY"
                ));
            }
        }
    }
    let end = dma_csr::REGISTERS
        .iter()
        .map(|r| u64::from(r.1))
        .max()
        .unwrap_or(0)
        + 4;
    if end < dma_csr::WINDOW {
        let off = end + 4 * rng.below((dma_csr::WINDOW - end) / 4);
        let (v, r) = axil
            .read_resp(&mut sim, off)
            .map_err(|e| format!("read of unmapped CSR {off:#04x}: {e:?}"))?;
        if (v, r) != (0, Resp::SlvErr) {
            return Err(format!(
                "a read of unmapped CSR {off:#04x} answered {r:?} with {v:#x}, not SLVERR with 0"
            ));
        }
        let r = axil
            .write_resp(&mut sim, off, rng.next_u64() & 0xffff_ffff, 0xf)
            .map_err(|e| format!("write to unmapped CSR {off:#04x}: {e:?}"))?;
        if r != Resp::SlvErr {
            return Err(format!(
                "a write to unmapped CSR {off:#04x} answered {r:?}, not SLVERR"
            ));
        }
    }
    let mut bus = axil.mmio(&mut sim);
    for &(name, off, _) in dma_csr::REGISTERS {
        let got = bus.read32(off);
        let want = expect.get(name).copied().unwrap_or(0);
        if got != want {
            return Err(format!(
                "counter {name} (CSR {off:#04x}) is {got}, expected {want}"
            ));
        }
    }
    if let Some(v) = axil.master().violations.first() {
        return Err(format!("AXI4-Lite protocol: {v}"));
    }
    Ok(())
}

/// The DMA engine end to end (see the module documentation).
pub struct DmaEngineProp;

impl Property for DmaEngineProp {
    type Input = Input;
    const NAME: &'static str = "dma_engine";
    fn strategy() -> BoxedStrategy<Input> {
        strategy()
    }
    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        run(input, waves)
    }
}
