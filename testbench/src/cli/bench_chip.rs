//! `testbench bench --suite chip`: the whole chip top's figures, in simulated cycles (so they
//! are deterministic; `--check` fails below a goal). Host memory answers reads in 50 to 100
//! cycles; the targets are the `chip` suite's models, as fast as the wire.
//!
//! - **Bandwidth**: 4 KiB random reads and writes at QD 32 on each transport ([`crate::fio`],
//!   remote latency 2 µs + up to 0.5 µs): each link's busy fraction in the direction the data
//!   moves: the host bus (AXI4 W beats for Reads, R beats for Writes, per cycle) and the wire
//!   (RoCEv2 stream beats, NVMe/TCP stream bytes / lanes, per cycle). The bottleneck is the
//!   busier link; goal: it is >= 0.9 busy.
//! - **Command rate**: Flushes (no data) and 512-byte Reads, QD 32 on every channel of the
//!   transport, remote latency 0: commands per cycle beside the bound the narrowest link sets
//!   (1 / the most beats per command any link carried: SQE fetch and CQE beats on the bus,
//!   capsule and response frame beats on the wire); goal >= 0.9 of the bound.
//! - **Added latency**: one command at a time, remote latency 0, host memory answering reads in
//!   1 cycle (so the figure is the chip's own: add the host's read latency once per SQE fetch,
//!   and for a Write its data reads): from the cycle the host begins the doorbell write to the
//!   first beat of the chip's first frame (RoCE) or byte (NVMe/TCP) for it, and from the last
//!   beat the chip takes from the fabric to the cycle the host sees the CQE; goal <= 100
//!   cycles each. A Read's data is held until its frame's ICRC (RoCE) or its C2HData's data
//!   digest (NVMe/TCP) is checked, so no byte of a bad frame reaches host memory: its last
//!   data frame is written to the host after its last beat, and the CQE follows that write.
//! - **Interrupts per completion** at coalescing threshold 8 (Feature 08h THR = 7, TIME = 0 is
//!   "no delay" so TIME = 255), QD 32 4 KiB reads: goal 0.125.
//! - **Simulation speed**: cycles and commands per wall-clock second (a figure to read).
//!
//! It measures the chip top the testbench was built with: the shipped one (rtl/), or another
//! configuration's (`TB_RTL_DIR=... TB_RTL_TOPS=nvmeof_offload`, as ci/config.sh builds the
//! widest one); the header names the link widths, and every bound is in beats of those widths.

use crate::cli::bench::Goals;
use crate::fio::{self, Job, Rw};
use crate::rtl::ChipTop;
use crate::suites::chip::session::{self, Io, Op, Session, Setup, Traffic, Transport, Widths};
use std::time::Instant;

const CLOCK_MHZ: f64 = 250.0;

fn job(rw: Rw, t: Transport, iodepth: u16, size: u64, coalesce: Option<(u8, u8)>) -> Job {
    Job {
        name: "bench".into(),
        rw,
        rwmixread: 50,
        bs: 4096,
        iodepth,
        numjobs: 1,
        size,
        runtime_ns: None,
        time_based: false,
        clock_mhz: CLOCK_MHZ,
        transports: vec![t],
        remote_ns: [(2000, 500), (2000, 500)],
        mem_ns: (200, 400),
        coalesce,
        seed: 7,
        waves: None,
        progress: false,
    }
}

/// Busy fractions (bus, wire) of the direction the data moves.
fn busy(t: Transport, read: bool, tr: &Traffic, w: &Widths, cycles: u64) -> (f64, f64) {
    let c = cycles.max(1) as f64;
    let bus = if read { tr.axi_w } else { tr.axi_r } as f64 / c;
    let wire = match (t, read) {
        (Transport::Roce, true) => tr.roce_rx_beats as f64,
        (Transport::Roce, false) => tr.roce_tx_beats as f64,
        (Transport::Tcp, true) => tr.tcp_rx_bytes.div_ceil(w.tcp) as f64,
        (Transport::Tcp, false) => tr.tcp_tx_bytes.div_ceil(w.tcp) as f64,
    } / c;
    (bus, wire)
}

/// A session with no remote latency: `queues`, `depth` each, a namespace of `blocks`,
/// commands of up to `max_blocks`, host memory read latency `mem` cycles.
fn quiet_setup(
    queues: Vec<Transport>,
    depth: u16,
    blocks: u64,
    max_blocks: u32,
    mem: (u32, u32),
) -> Setup {
    Setup {
        queues,
        depth,
        blocks,
        max_blocks,
        remote: [(0, 0), (0, 0)],
        mem_latency: mem,
        coalesce: None,
        seed: 3,
        waves: None,
    }
}

/// Beats per command on each link: (link, beats).
type LinkBeats = [(&'static str, f64); 6];

/// Commands per cycle of Flushes or 512-byte Reads on `channels` channels of `t` (one queue
/// each), host memory answering reads in `mem` cycles, and the beats per command of each link.
fn command_rate(
    t: Transport,
    op: Op,
    count: u64,
    channels: usize,
    mem: (u32, u32),
) -> Result<(f64, LinkBeats), String> {
    let mut s = Session::open(&quiet_setup(vec![t; channels], 32, 4096, 1, mem))?;
    let queues = channels as u16;
    let warm = count / 10;
    let (mut sent, mut done) = (0u64, 0u64);
    let mut window: Option<(u64, Traffic, u64)> = None;
    let mut tag = 0;
    while done < count {
        for q in 1..=queues {
            let room = s.room(q).min((count - sent) as usize);
            if room == 0 {
                continue;
            }
            let ios: Vec<Io> = (0..room)
                .map(|k| {
                    tag += 1;
                    Io {
                        op,
                        slba: (sent + k as u64) % 4096,
                        blocks: 1,
                        data: Vec::new(),
                        tag,
                    }
                })
                .collect();
            sent += room as u64;
            s.submit(q, &ios)?;
        }
        s.step()?;
        for d in s.take_done() {
            if d.status != 0 {
                return Err(format!(
                    "{op:?} on {} completed with {:#x}",
                    t.name(),
                    d.status
                ));
            }
            done += 1;
            if done == warm {
                window = Some((s.env.sim.cycle(), s.traffic(), done));
            }
        }
    }
    let (c0, t0, d0) = window.expect("count > warm");
    let cycles = (s.env.sim.cycle() - c0) as f64;
    let n = (done - d0) as f64;
    let tr = s.traffic() - t0;
    let w = s.widths();
    let per = |x: u64| x as f64 / n;
    Ok((
        n / cycles,
        [
            ("host bus R (SQE fetch)", per(tr.axi_r)),
            ("host bus W (CQEs, data)", per(tr.axi_w)),
            ("RoCE tx (capsules)", per(tr.roce_tx_beats)),
            ("RoCE rx (responses, data)", per(tr.roce_rx_beats)),
            ("NVMe/TCP tx", per(tr.tcp_tx_bytes.div_ceil(w.tcp))),
            ("NVMe/TCP rx", per(tr.tcp_rx_bytes.div_ceil(w.tcp))),
        ],
    ))
}

/// Added latency at QD 1: (doorbell -> first fabric beat, last fabric beat -> CQE), the worst
/// over `count` commands of `op`.
fn added_latency(t: Transport, op: Op, count: u64) -> Result<(u64, u64), String> {
    let mut s = Session::open(&quiet_setup(vec![t], 1, 64, 8, (1, 1)))?;
    s.tcp.borrow_mut().activity = Some((Vec::new(), Vec::new()));
    let (mut a, mut b) = (0u64, 0u64);
    for i in 0..count {
        let before = s.env.sim.cycle();
        s.submit(
            1,
            &[Io {
                op,
                slba: i % 56,
                blocks: 8,
                data: if op == Op::Write {
                    vec![0x5a; 4096]
                } else {
                    Vec::new()
                },
                tag: i,
            }],
        )?;
        let done = loop {
            s.step()?;
            if let Some(d) = s.take_done().pop() {
                break d;
            }
        };
        let (first_out, last_in) = match t {
            Transport::Roce => {
                let r = s.roce.borrow();
                let first = s_first(&r, before);
                let last = r
                    .source()
                    .sent
                    .iter()
                    .map(|x| x.0)
                    .filter(|&c| c <= done.visible)
                    .max();
                (first, last)
            }
            Transport::Tcp => {
                let l = s.tcp.borrow();
                let (tx, rx) = l.activity.as_ref().expect("recording");
                (
                    tx.iter().copied().find(|&c| c >= before),
                    rx.iter().copied().filter(|&c| c <= done.visible).max(),
                )
            }
        };
        let (Some(f), Some(l)) = (first_out, last_in) else {
            return Err(format!(
                "{op:?} {i} on {}: no fabric traffic seen",
                t.name()
            ));
        };
        a = a.max(f - done.doorbell);
        b = b.max(done.visible - l);
        // Let the acknowledgements settle before the next command.
        for _ in 0..200 {
            s.step()?;
        }
    }
    Ok((a, b))
}

fn s_first(r: &crate::suites::chip::top::RoceLink, after: u64) -> Option<u64> {
    r.frame_starts().into_iter().find(|&c| c >= after)
}

/// Runs the benchmark; the exit code (1 with `check` when a goal is missed).
pub fn run(check: bool) -> i32 {
    let mut goals = Goals::default();
    let wall = Instant::now();
    let mut cycles_total = 0u64;
    let mut cmds_total = 0u64;
    let mut secs = 0.0;
    let res = (|| -> Result<(), String> {
        let bits = |port: &str| {
            ChipTop::PORTS
                .iter()
                .find(|p| p.0 == port)
                .map_or(0, |p| p.1)
        };
        println!(
            "chip: the top built (host bus {} bits, Ethernet port {} bits: RoCEv2, and NVMe/TCP on the TCP/IP engine: a beat a cycle each way) at {CLOCK_MHZ} MHz, host memory reads 50-100 cycles",
            bits("m_axi_wdata_o"),
            bits("m_axis_tdata_o"),
        );
        println!("  4 KiB random I/O at QD 32, remote latency 2 us + up to 0.5 us:");
        for t in [Transport::Roce, Transport::Tcp] {
            for rw in [Rw::RandRead, Rw::RandWrite] {
                let r = fio::run(&job(rw, t, 32, 2 << 20, None))?;
                let read = rw == Rw::RandRead;
                let (bus, wire) = busy(t, read, &r.traffic, &r.widths, r.cycles);
                let jr = &r.jobs[0];
                let d = if read { &jr.read } else { &jr.write };
                let gbs = d.bytes as f64 / (r.cycles as f64 / CLOCK_MHZ * 1e-6) / 1e9;
                let bottleneck = bus.max(wire);
                let mark = goals.at_least(
                    &format!("{} {} bottleneck busy", t.name(), rw.name()),
                    bottleneck,
                    0.9,
                );
                println!(
                    "    {:8} {:9}: {:5.2} GB/s, {:6.0}k IOPS; host bus {bus:.3} busy, wire {wire:.3} busy; bottleneck {:4} {bottleneck:.3} (goal >= 0.9) {mark}",
                    t.name(),
                    rw.name(),
                    gbs,
                    d.ios as f64 / (r.cycles as f64 / CLOCK_MHZ * 1e-6) / 1e3,
                    if bus >= wire { "bus" } else { "wire" },
                );
                cycles_total += r.cycles;
                cmds_total += d.ios;
                secs += r.wall_s;
            }
        }
        println!("  Command rate, QD 32 on every channel, remote latency 0:");
        for t in [Transport::Roce, Transport::Tcp] {
            for (op, what) in [(Op::Flush, "Flush"), (Op::Read, "Read 512 B")] {
                let channels = session::channels(t);
                let (rate, links) = command_rate(t, op, 2000, channels, (50, 100))?;
                let (name, worst) =
                    links
                        .iter()
                        .copied()
                        .fold(("", 0.0), |a, b| if b.1 > a.1 { b } else { a });
                let bound = 1.0 / worst;
                let frac = rate / bound;
                let mark = goals.at_least(
                    &format!("{} {what} fraction of the bound", t.name()),
                    frac,
                    0.9,
                );
                println!(
                    "    {:8} {what:10}: {rate:.4} commands/cycle ({:.1} M/s); bound {bound:.4} ({name}: {worst:.2} beats per command) -> {frac:.3} (goal >= 0.9) {mark}",
                    t.name(),
                    rate * CLOCK_MHZ,
                );
                // Where the rate is set: a limit per channel (the transport's commands in
                // flight per QP or connection) halves it on one channel of two; a shared block
                // (QoS, routing, the front end) or a link does not; the SQE fetch's host memory
                // latency shows in the rate with host memory answering in 1 cycle.
                let (one, _) = command_rate(t, op, 1000, 1, (50, 100))?;
                let (fast, _) = command_rate(t, op, 1000, channels, (1, 1))?;
                println!(
                    "    {:8} {what:10}: on 1 channel of {channels}: {one:.4} commands/cycle ({:.2} of the rate on all); host memory in 1 cycle: {fast:.4} ({:.2})",
                    t.name(),
                    one / rate,
                    fast / rate,
                );
            }
        }
        println!("  Added latency, one command at a time, remote latency 0, host memory answering in 1 cycle (worst of 20):");
        for t in [Transport::Roce, Transport::Tcp] {
            for (op, what) in [
                (Op::Read, "Read 4 KiB"),
                (Op::Write, "Write 4 KiB"),
                (Op::Flush, "Flush"),
            ] {
                let (a, b) = added_latency(t, op, 20)?;
                let m1 = goals.at_most(
                    &format!("{} {what} doorbell to first fabric beat", t.name()),
                    a as f64,
                    100.0,
                );
                let m2 = goals.at_most(
                    &format!("{} {what} last fabric beat to CQE", t.name()),
                    b as f64,
                    100.0,
                );
                println!(
                    "    {:8} {what:11}: doorbell -> first fabric beat {a:3} cycles {m1}; last fabric beat -> CQE {b:3} cycles {m2} (goal <= 100)",
                    t.name()
                );
            }
        }
        let r = fio::run(&job(
            Rw::RandRead,
            Transport::Roce,
            32,
            1 << 20,
            Some((7, 255)),
        ))?;
        let n = r.jobs[0].read.ios;
        let ipc = r.interrupts as f64 / n as f64;
        let mark = goals.at_most(
            "interrupts per completion at threshold 8",
            ipc,
            0.125 + 1.0 / n as f64,
        );
        println!(
            "  Interrupts per completion, coalescing threshold 8 (THR 7), {n} reads at QD 32: {ipc:.4} (goal 0.125) {mark}"
        );
        cycles_total += r.cycles;
        cmds_total += n;
        secs += r.wall_s;
        Ok(())
    })();
    if let Err(e) = res {
        eprintln!("testbench bench --suite chip: {e}");
        return 1;
    }
    println!(
        "  Simulation speed of the traffic in the bandwidth and interrupt runs: {:.0} cycles/s, {:.0} commands/s ({cycles_total} cycles, {cmds_total} commands; whole bench {:.1} s wall)",
        cycles_total as f64 / secs,
        cmds_total as f64 / secs,
        wall.elapsed().as_secs_f64()
    );
    goals.finish(check)
}
