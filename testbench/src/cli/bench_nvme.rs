//! `testbench bench --suite nvme`: the NVMe front end under load, default configuration.
//!
//! - SQ fetch throughput: 512 SQEs placed on one I/O queue of depth 1024, then one tail
//!   doorbell (doorbell batching) or one doorbell per SQE; host memory latency 50 cycles, no
//!   backpressure anywhere. Reported: SQE read beats per cycle (and SQEs per read burst) from the first SQ read request
//!   to the last SQE beat, as a fraction of what the AXI data bus carries (one beat per cycle).
//! - Latency on an idle controller: cycles from the tail doorbell's AXI4-Lite write handshake
//!   to the first SQ read request (AR valid) and to `io_cmd` valid; from `io_cpl` valid to the CQE's write request (AW valid).
//! - Interrupts per completion under load (512 commands), without coalescing and with an
//!   aggregation threshold of 8 (THR = 7, aggregation time 255 units of 1000 cycles).
//!
//! A benchmark to read, not a timed test.

use crate::drivers::Dir;
use crate::rng::Rng;
use crate::rtl::regs::nvme_csr as csr;
use crate::suites::nvme::env::{Env, Sqe, Timing};
use crate::suites::nvme::queues::{admin, create_pair, io_sqe, next_cid, Pair};

fn timing(latency: u32) -> Timing {
    Timing {
        read_latency: (latency, latency),
        stalls: (0, 0, 0, 0, 0),
        cmd_stall: (0, 0),
        backend_delay: 0,
        space_low: 0,
        irq_stall: 0,
        axil: 0,
    }
}

fn setup(latency: u32, ab: u32, coalesce: u32) -> Result<Env, String> {
    let mut env = Env::new(&timing(latency), 1, None);
    env.sim.reset(3);
    env.read_cap()?;
    env.fw_write(csr::COAL_TICK, 1000);
    env.enable(16, 16, false)?;
    admin(&mut env, 0x09, 0x01, ab, 0)?;
    admin(&mut env, 0x09, 0x08, coalesce, 0)?;
    let depth = env.host.model.max_entries.min(1024) as u16;
    let pair = Pair {
        sq: depth,
        cq: depth,
        prio: 0,
        vector: 1,
        ien: true,
    };
    let vectors = env.vectors;
    create_pair(&mut env, 1, &pair, vectors)?;
    Ok(env)
}

fn sqes(env: &mut Env, n: usize) -> Vec<Sqe> {
    let mut rng = Rng::new(7);
    let mdts = env.host.model.max_blocks;
    (0..n)
        .map(|_| {
            let cid = next_cid(env, 1);
            env.host.next_cid.insert(1, cid);
            io_sqe(&mut rng, cid, 0, mdts)
        })
        .collect()
}

/// (fraction of the bus, SQEs per read burst, interrupts, completions) for 512 SQEs.
fn throughput(batch: bool, ab: u32, coalesce: u32) -> Result<(f64, f64, usize, usize), String> {
    let mut env = setup(50, ab, coalesce)?;
    let log_start = env.mem.borrow().log.len();
    let irq_start = env.irq.borrow().received.len();
    let list = sqes(&mut env, 512);
    env.submit(1, &list, batch)?;
    let mut n = 0;
    while env.host.model.outstanding() > 0 {
        env.consume_all()?;
        env.step()?;
        n += 1;
        if n > 2_000_000 {
            return Err("the bench's commands never completed".into());
        }
    }
    env.run(300_000)?; // let the aggregation time run out
    let bps = 512.0 / f64::from(env.sim.signal("m_axi_rdata_i").width());
    let m = env.mem.borrow();
    let sq = env.host.rings[env.host.sq_ring[&1]].range.clone();
    let reads: Vec<_> = m.log[log_start..]
        .iter()
        .filter(|t| t.dir == Dir::Read && sq.contains(&t.req.addr))
        .collect();
    let first = reads.iter().map(|t| t.accepted).min().unwrap_or(0);
    let last = reads.iter().map(|t| t.done).max().unwrap_or(0);
    let beats: u64 = reads.iter().map(|t| u64::from(t.req.len)).sum();
    let irqs = env
        .irq
        .borrow()
        .received
        .iter_from(irq_start)
        .filter(|(_, w)| w[0] == 1)
        .count();
    let per_burst = beats as f64 / bps / reads.len().max(1) as f64;
    Ok((
        beats as f64 / (last - first + 1) as f64,
        per_burst,
        irqs,
        512,
    ))
}

/// Cycles from the doorbell handshake to AR valid and to io_cmd valid; io_cpl to AW valid.
fn latency() -> Result<(u64, u64, u64), String> {
    let mut env = setup(50, 7, 0)?;
    env.run(50)?;
    let list = sqes(&mut env, 1);
    let ri = env.host.sq_ring[&1];
    let addr = env.host.rings[ri].range.start;
    env.mem.borrow_mut().mem.write(addr, &list[0]);
    env.host.model.submit(1, &list[0])?;
    env.host.rings[ri].total += 1;
    let door = env.doorbell_addr(1, false);
    env.bar.master().queue_write(door, 1, 0xf);
    let sig = |env: &Env, n: &str| env.sim.signal(n).get() == 1;
    let (mut hs, mut ar, mut cmd, mut cpl, mut aw) = (None, None, None, None, None);
    for _ in 0..2000 {
        env.sim.settle();
        let c = env.sim.cycle();
        if hs.is_none() && sig(&env, "s_bar_awvalid_i") && sig(&env, "s_bar_awready_o") {
            hs = Some(c);
        }
        if hs.is_some() && ar.is_none() && sig(&env, "m_axi_arvalid_o") {
            ar = Some(c);
        }
        if hs.is_some() && cmd.is_none() && sig(&env, "io_cmd_valid_o") {
            cmd = Some(c);
        }
        if cpl.is_none() && sig(&env, "io_cpl_valid_i") {
            cpl = Some(c);
        }
        if cpl.is_some() && aw.is_none() && sig(&env, "m_axi_awvalid_o") {
            aw = Some(c);
        }
        env.step()?;
        env.consume_all()?;
    }
    match (hs, ar, cmd, cpl, aw) {
        (Some(h), Some(a), Some(c), Some(p), Some(w)) => Ok((a - h, c - h, w - p)),
        other => Err(format!("latency run did not see every event: {other:?}")),
    }
}

/// Runs the benchmark and prints its figures; returns the exit code (1 with `check` when a
/// goal is missed).
pub fn run(check: bool) -> i32 {
    let mut goals = crate::cli::bench::Goals::default();
    let res = (|| -> Result<(), String> {
        println!("nvme front end, default configuration, host memory latency 50 cycles");
        let (f, b, i0, c0) = throughput(true, 7, 0)?;
        println!("  SQ fetch, 512 SQEs, one doorbell (batched): {f:.3} of the AXI data bus, {b:.1} SQEs per read burst");
        let (f1, b1, _, _) = throughput(true, 0, 0)?;
        println!("  SQ fetch, 512 SQEs, one doorbell, arbitration burst 1: {f1:.3}, {b1:.1} SQEs per read burst");
        let (f2, b2, _, _) = throughput(false, 7, 0)?;
        println!(
            "  SQ fetch, 512 SQEs, one doorbell per SQE: {f2:.3}, {b2:.1} SQEs per read burst"
        );
        let (ar, cmd, aw) = latency()?;
        println!("  tail doorbell (AXI4-Lite write handshake) to first SQ read request (AR): {ar} cycles");
        println!(
            "  tail doorbell to io_cmd valid: {cmd} cycles (includes 50 cycles of memory latency)"
        );
        println!("  io_cpl valid to CQE write request (AW): {aw} cycles");
        let (_, _, i8, c8) = throughput(true, 7, 7 | 255 << 8)?;
        // Aggregation threshold 8 (THR = 7) with the time limit out of the way: one interrupt
        // per 8 completions, and never fewer (the last partial group still interrupts).
        let per = i8 as f64 / c8 as f64;
        let want = (c8.div_ceil(8)) as f64 / c8 as f64;
        let mark = goals.within("interrupts per completion at threshold 8", per, want, 0.0);
        println!(
            "  interrupts per completion under load: {:.3} without coalescing ({i0}/{c0}), {per:.3} with threshold 8 ({i8}/{c8}; goal ceil(completions/8)/completions = {want:.3}) {mark}",
            i0 as f64 / c0 as f64,
        );
        Ok(())
    })();
    match res {
        Ok(()) => goals.finish(check),
        Err(e) => {
            eprintln!("testbench bench --suite nvme: {e}");
            1
        }
    }
}
