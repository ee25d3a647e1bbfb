//! `testbench fio`: fio's workloads on the simulated chip, reported as fio reports them.
//!
//! What lives here:
//!
//! - `mod.rs`: jobs, offsets, the data check
//! - `report.rs`: fio's text and JSON/json+ output
//! - `plot.rs`: the SVG of latencies and IOPS
//!
//! Each job is one I/O queue pair bound to a channel of its transport ([`Session`]); it keeps
//! `iodepth` commands in flight, each of `bs` bytes at an offset drawn as fio draws it
//! (sequential from 0, wrapping at `size`; or uniformly random and `bs` aligned, with
//! replacement: fio's `norandommap`), reads or writes as `rw` and `rwmixread` say, until it
//! has moved `size` bytes or `runtime` of simulated time has passed (whichever comes first; with
//! `time_based`, only the runtime), then waits for what is in flight. New commands of a job
//! in one cycle share one doorbell.
//!
//! Latency is the host's: `slat` from the cycle the host begins the SQ tail doorbell write
//! to the cycle the write is answered, `clat` from there to the cycle the host sees the CQE,
//! `lat` the sum; cycles become nanoseconds at `clock_mhz`. Every CQE is checked by the host
//! model (status and DW0 as the target answers, exactly once), and every Read whose blocks no
//! Write touched during its life is checked against the namespace as the completed Writes left
//! it (a mismatch ends the run with an error): the data check fio's `verify` would do.

pub mod plot;
pub mod report;

use crate::rng::Rng;
use crate::rtl::regs::chip_csr;
use crate::suites::chip::session::{Io, Op, Session, Setup, Traffic, Transport, Widths};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Instant;

/// fio's `rw`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rw {
    Read,
    Write,
    RandRead,
    RandWrite,
    RandRw,
    /// `rw` / `readwrite`: sequential mixed.
    ReadWrite,
}

impl Rw {
    /// Parses fio's names.
    pub fn parse(s: &str) -> Result<Rw, String> {
        Ok(match s {
            "read" => Rw::Read,
            "write" => Rw::Write,
            "randread" => Rw::RandRead,
            "randwrite" => Rw::RandWrite,
            "randrw" => Rw::RandRw,
            "rw" | "readwrite" => Rw::ReadWrite,
            _ => {
                return Err(format!(
                    "--rw {s}: expected read, write, randread, randwrite, randrw or rw"
                ))
            }
        })
    }

    /// fio's name.
    pub fn name(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::RandRead => "randread",
            Rw::RandWrite => "randwrite",
            Rw::RandRw => "randrw",
            Rw::ReadWrite => "rw",
        }
    }

    fn random(self) -> bool {
        matches!(self, Rw::RandRead | Rw::RandWrite | Rw::RandRw)
    }

    /// Percent of reads.
    fn reads(self, mix: u8) -> u8 {
        match self {
            Rw::Read | Rw::RandRead => 100,
            Rw::Write | Rw::RandWrite => 0,
            Rw::RandRw | Rw::ReadWrite => mix.min(100),
        }
    }
}

/// One fio job description (the options fio names; `numjobs` copies, one queue each).
#[derive(Clone, Debug)]
pub struct Job {
    pub name: String,
    pub rw: Rw,
    pub rwmixread: u8,
    /// Block size, bytes (a multiple of 512).
    pub bs: u32,
    pub iodepth: u16,
    pub numjobs: u16,
    /// Bytes each job moves, and the size of the region it works in.
    pub size: u64,
    /// Simulated time limit, ns.
    pub runtime_ns: Option<u64>,
    /// Run for `runtime` even when `size` is done (fio's `time_based`).
    pub time_based: bool,
    pub clock_mhz: f64,
    /// Transport of each job, in turn (job j runs on `transports[j % len]`).
    pub transports: Vec<Transport>,
    /// Remote latency per transport (RoCE, NVMe/TCP): fixed and random ns.
    pub remote_ns: [(u64, u64); 2],
    /// Host memory read latency, ns (smallest, largest).
    pub mem_ns: (u64, u64),
    /// Interrupt coalescing (threshold 0's based, time in 100 µs units).
    pub coalesce: Option<(u8, u8)>,
    pub seed: u64,
    pub waves: Option<PathBuf>,
    /// Print a progress line on stderr.
    pub progress: bool,
}

/// Latencies of one direction, ns.
#[derive(Clone, Debug, Default)]
pub struct Lat {
    pub slat: Vec<u64>,
    pub clat: Vec<u64>,
    pub lat: Vec<u64>,
}

/// One direction of one job.
#[derive(Clone, Debug, Default)]
pub struct Dir {
    pub ios: u64,
    pub bytes: u64,
    pub lat: Lat,
    /// Completion times, ns since the job started (for the IOPS plot).
    pub done_at: Vec<u64>,
}

/// What one job did.
#[derive(Clone, Debug)]
pub struct JobResult {
    pub transport: Transport,
    pub read: Dir,
    pub write: Dir,
    /// From the first doorbell to the last CQE, ns.
    pub runtime_ns: u64,
    /// Commands in flight when each was submitted (fio's `IO depths`).
    pub depths: Vec<u16>,
    /// Commands per doorbell, and CQEs per cycle the host found any of this job's.
    pub submits: Vec<usize>,
    pub reaps: Vec<usize>,
}

/// What the whole run did.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub job: Job,
    pub jobs: Vec<JobResult>,
    /// Cycles from the first doorbell to the last CQE.
    pub cycles: u64,
    /// Wall-clock seconds of the traffic part.
    pub wall_s: f64,
    /// Interrupts the host received during the traffic.
    pub interrupts: u64,
    /// Reads whose data was checked against the namespace.
    pub checked_reads: u64,
    /// The chip's routing counters at the end: RoCE, NVMe/TCP, unbound.
    pub chip_counts: (u32, u32, u32),
    /// Frames the RoCE target sent again.
    pub retransmits: u64,
    /// What the chip's links moved during the traffic, and their widths.
    pub traffic: Traffic,
    pub widths: Widths,
    /// The front end's own latency histograms over the traffic (read, write, other; log2 bins
    /// of cycles), and its offloaded and fallback command counts.
    pub hw_latency: [[u32; 32]; 3],
    pub offload_fallback: (u32, u32),
}

/// Upper bound, in cycles, of the bin holding percentile `p` of a log2 histogram (bin b:
/// 2^b to 2^(b+1) - 1 cycles); 0 when empty.
pub fn hw_percentile(bins: &[u32; 32], p: f64) -> u64 {
    let n: u64 = bins.iter().map(|&x| u64::from(x)).sum();
    if n == 0 {
        return 0;
    }
    let rank = ((p / 100.0) * n as f64).ceil().max(1.0) as u64;
    let mut seen = 0u64;
    for (b, &x) in bins.iter().enumerate() {
        seen += u64::from(x);
        if seen >= rank {
            return (2u64 << b) - 1;
        }
    }
    u64::MAX
}

impl Job {
    fn cycles(&self, ns: u64) -> u32 {
        (ns as f64 * self.clock_mhz / 1000.0).round() as u32
    }

    /// Checks the options; the error names the option and what to do.
    pub fn validate(&self) -> Result<(), String> {
        if self.bs == 0 || !self.bs.is_multiple_of(512) {
            return Err(format!(
                "--bs {}: the namespace has 512-byte blocks; use a multiple of 512",
                self.bs
            ));
        }
        if self.size < u64::from(self.bs) || !self.size.is_multiple_of(512) {
            return Err(format!(
                "--size {}: at least one block of --bs {} and a multiple of 512",
                self.size, self.bs
            ));
        }
        if self.iodepth == 0 || self.iodepth > 1023 {
            return Err(format!("--iodepth {}: 1 to 1023", self.iodepth));
        }
        if self.numjobs == 0 {
            return Err("--numjobs 0: at least one job".into());
        }
        if self.clock_mhz <= 0.0 {
            return Err(format!("--clock-mhz {}: must be positive", self.clock_mhz));
        }
        if self.time_based && self.runtime_ns.is_none() {
            return Err("--time_based needs --runtime".into());
        }
        Ok(())
    }

    fn transport(&self, j: usize) -> Transport {
        self.transports[j % self.transports.len()]
    }
}

/// Per transport, per block: Writes in flight, the last cycle a Write completed, and whether
/// the model knows the block's bytes (two Writes that overlapped in flight leave it unknown).
struct Shadow {
    bytes: Vec<u8>,
    writing: Vec<u16>,
    written: Vec<u64>,
    known: Vec<bool>,
}

impl Shadow {
    fn span(slba: u64, n: u32) -> std::ops::Range<usize> {
        slba as usize..slba as usize + n as usize
    }
}

/// A command in flight, as the job sees it.
struct Pending {
    job: usize,
    op: Op,
    slba: u64,
    blocks: u32,
    /// A Write's bytes, and whether another Write overlapped it in flight.
    data: Vec<u8>,
    overlapped: bool,
    /// A Read may be checked (no Write to its blocks in flight when it was submitted).
    clean: bool,
    submitted: u64,
    rung: u64,
}

/// Runs `job` on the simulated chip.
pub fn run(job: &Job) -> Result<RunResult, String> {
    job.validate()?;
    let blocks = job.size / 512;
    let bs_blocks = job.bs / 512;
    let remote = [
        (
            job.cycles(job.remote_ns[0].0),
            job.cycles(job.remote_ns[0].1),
        ),
        (
            job.cycles(job.remote_ns[1].0),
            job.cycles(job.remote_ns[1].1),
        ),
    ];
    let setup = Setup {
        queues: (0..usize::from(job.numjobs))
            .map(|j| job.transport(j))
            .collect(),
        depth: job.iodepth,
        blocks,
        max_blocks: bs_blocks,
        remote,
        mem_latency: (
            job.cycles(job.mem_ns.0).max(1),
            job.cycles(job.mem_ns.1).max(1),
        ),
        coalesce: job.coalesce,
        seed: job.seed,
        waves: job.waves.clone(),
    };
    let mut s = Session::open(&setup)?;
    let mut shadows: BTreeMap<Transport, Shadow> = BTreeMap::new();
    for &t in &setup.queues {
        shadows.entry(t).or_insert_with(|| Shadow {
            bytes: s.namespace(t, 0, blocks as u32),
            writing: vec![0; blocks as usize],
            written: vec![0; blocks as usize],
            known: vec![true; blocks as usize],
        });
    }
    let mut rng = Rng::new(job.seed ^ 0xf10);
    let n = usize::from(job.numjobs);
    let mut results: Vec<JobResult> = (0..n)
        .map(|j| JobResult {
            transport: job.transport(j),
            read: Dir::default(),
            write: Dir::default(),
            runtime_ns: 0,
            depths: Vec::new(),
            submits: Vec::new(),
            reaps: Vec::new(),
        })
        .collect();
    let mut issued = vec![0u64; n];
    let mut next_off = vec![0u64; n];
    let mut pending: BTreeMap<u64, Pending> = BTreeMap::new();
    let mut tag = 0u64;
    let mut checked = 0u64;
    s.clear_hw_latency()?;
    let paths0 = s.offload_fallback()?;
    let start = s.env.sim.cycle();
    let irq0 = s.interrupts();
    let traffic0 = s.traffic();
    let end_cycle = job
        .runtime_ns
        .map(|ns| start + (ns as f64 * job.clock_mhz / 1000.0).round() as u64);
    let ns = |c: u64| (c as f64 * 1000.0 / job.clock_mhz).round() as u64;
    let t0 = Instant::now();
    let mut last_progress = 0u64;
    let mut last = start;
    let reads_pct = job.rw.reads(job.rwmixread);
    loop {
        let now = s.env.sim.cycle();
        let timed_out = end_cycle.is_some_and(|e| now >= e);
        let mut any_open = false;
        for (j, res) in results.iter_mut().enumerate() {
            let sqid = j as u16 + 1;
            let done_size = !job.time_based && issued[j] >= job.size;
            if timed_out || done_size {
                continue;
            }
            any_open = true;
            let room = s.room(sqid);
            if room == 0 {
                continue;
            }
            let mut ios = Vec::new();
            for _ in 0..room {
                if !job.time_based && issued[j] >= job.size {
                    break;
                }
                let read = rng.below(100) < u64::from(reads_pct);
                let slots = blocks / u64::from(bs_blocks);
                let slba = if job.rw.random() {
                    rng.below(slots) * u64::from(bs_blocks)
                } else {
                    let o = next_off[j];
                    next_off[j] = (o + u64::from(bs_blocks)) % (slots * u64::from(bs_blocks));
                    o
                };
                let t = res.transport;
                let sh = shadows.get_mut(&t).expect("shadow");
                let span = Shadow::span(slba, bs_blocks);
                let busy = sh.writing[span.clone()].iter().any(|&w| w > 0);
                let (op, data) = if read {
                    (Op::Read, Vec::new())
                } else {
                    let d: Vec<u8> = (0..job.bs).map(|_| rng.next_u64() as u8).collect();
                    for w in &mut sh.writing[span.clone()] {
                        *w += 1;
                    }
                    (Op::Write, d)
                };
                tag += 1;
                pending.insert(
                    tag,
                    Pending {
                        job: j,
                        op,
                        slba,
                        blocks: bs_blocks,
                        data: data.clone(),
                        overlapped: busy,
                        clean: !busy,
                        submitted: now,
                        rung: 0,
                    },
                );
                ios.push(Io {
                    op,
                    slba,
                    blocks: bs_blocks,
                    data,
                    tag,
                });
                issued[j] += u64::from(job.bs);
            }
            if ios.is_empty() {
                continue;
            }
            let depth = s.in_flight_on(sqid) as u16;
            for k in 0..ios.len() {
                res.depths.push(depth + k as u16 + 1);
            }
            res.submits.push(ios.len());
            s.submit(sqid, &ios)?;
            let rung = s.env.sim.cycle();
            for io in &ios {
                if let Some(p) = pending.get_mut(&io.tag) {
                    p.rung = rung;
                }
            }
        }
        if !any_open && s.in_flight() == 0 {
            break;
        }
        s.step()?;
        let done = s.take_done();
        for (j, res) in results.iter_mut().enumerate() {
            let k = done.iter().filter(|d| usize::from(d.sqid) == j + 1).count();
            if k > 0 {
                res.reaps.push(k);
            }
        }
        for d in done {
            let p = pending.remove(&d.tag).expect("a command the job submitted");
            if d.status != 0 {
                return Err(format!(
                    "job {} {:?} of {} blocks at LBA {} completed with status {:#x}",
                    p.job, p.op, p.blocks, p.slba, d.status
                ));
            }
            let res = &mut results[p.job];
            let sh = shadows.get_mut(&res.transport).expect("shadow");
            let span = Shadow::span(p.slba, p.blocks);
            let dir = if p.op == Op::Read {
                let touched = sh.writing[span.clone()].iter().any(|&w| w > 0)
                    || sh.written[span.clone()].iter().any(|&c| c >= p.submitted)
                    || sh.known[span.clone()].iter().any(|&k| !k);
                if p.clean && !touched {
                    let want = &sh.bytes[span.start * 512..span.end * 512];
                    if d.data != want {
                        let i = (0..want.len()).find(|&i| d.data[i] != want[i]).unwrap_or(0);
                        return Err(format!(
                            "job {}: the Read of {} blocks at LBA {} returned data that is not the namespace's (first difference at byte {i}: {:#04x}, expected {:#04x})",
                            p.job, p.blocks, p.slba, d.data[i], want[i]
                        ));
                    }
                    checked += 1;
                }
                &mut res.read
            } else {
                for b in span.clone() {
                    sh.writing[b] -= 1;
                    sh.written[b] = d.visible;
                    sh.known[b] = !p.overlapped && sh.writing[b] == 0;
                }
                sh.bytes[span.start * 512..span.end * 512].copy_from_slice(&p.data);
                &mut res.write
            };
            dir.ios += 1;
            dir.bytes += u64::from(p.blocks) * 512;
            let slat = ns(p.rung - p.submitted);
            let lat = ns(d.visible - p.submitted);
            dir.lat.slat.push(slat);
            dir.lat.lat.push(lat);
            dir.lat.clat.push(lat - slat);
            dir.done_at.push(ns(d.visible - start));
            res.runtime_ns = ns(d.visible - start);
            last = last.max(d.visible);
        }
        if job.progress && s.env.sim.cycle() - last_progress >= 20_000 {
            last_progress = s.env.sim.cycle();
            let done: u64 = results.iter().map(|r| r.read.ios + r.write.ios).sum();
            let el = (s.env.sim.cycle() - start) as f64;
            let goal = match end_cycle {
                Some(e) if job.time_based => format!("{:.0}%", 100.0 * el / (e - start) as f64),
                _ => format!(
                    "{:.0}%",
                    100.0 * issued.iter().sum::<u64>() as f64 / (job.size * n as u64) as f64
                ),
            };
            eprint!(
                "\rJobs: {n} [{goal}] {done} I/Os, {:.1} µs simulated, {:.0} cycles/s   ",
                ns(el as u64) as f64 / 1000.0,
                el / t0.elapsed().as_secs_f64()
            );
            let _ = std::io::stderr().flush();
        }
    }
    if job.progress {
        eprintln!();
    }
    let wall_s = t0.elapsed().as_secs_f64();
    let interrupts = (s.interrupts() - irq0) as u64;
    let hw_latency = s.hw_latency()?;
    let paths = s.offload_fallback()?;
    let chip_counts = (
        s.fw_read(chip_csr::CNT_ROCE),
        s.fw_read(chip_csr::CNT_NVME_TCP),
        s.fw_read(chip_csr::CNT_UNBOUND),
    );
    Ok(RunResult {
        job: job.clone(),
        jobs: results,
        cycles: last - start,
        wall_s,
        interrupts,
        checked_reads: checked,
        chip_counts,
        retransmits: s.retransmits(),
        traffic: s.traffic() - traffic0,
        widths: s.widths(),
        hw_latency,
        offload_fallback: (
            paths.0.wrapping_sub(paths0.0),
            paths.1.wrapping_sub(paths0.1),
        ),
    })
}

/// Nearest-rank percentile `p` of sorted `v` (0 when empty).
pub fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// fio's default percentile list.
pub const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// min, max, mean, population standard deviation.
pub fn summary(v: &[u64]) -> (u64, u64, f64, f64) {
    if v.is_empty() {
        return (0, 0, 0.0, 0.0);
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<u64>() as f64 / n;
    let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
    (
        *v.iter().min().expect("non-empty"),
        *v.iter().max().expect("non-empty"),
        mean,
        var.sqrt(),
    )
}
