//! `testbench bench --suite qos`: the QoS arbiter's figures, each run through the property
//! harness (so every check of `suites::qos` holds while it is measured):
//!
//! - decisions per cycle: queues that always have commands waiting, the transport taking one
//!   every cycle: releases per cycle (target 1.0), with one queue alone and with four;
//! - the rate error of the token buckets over a million cycles: tenants limited in bandwidth
//!   (per queue, and two queues sharing one namespace's limit) and in IOPS, flooding 4 KiB
//!   reads; what each got, in bytes (or commands) per second at the configured clock, against
//!   the limit it asked for (target within 1%), measured after a warm-up of 100 000 cycles that
//!   spends the full buckets' initial bursts;
//! - the share each weight gets under saturation (the transport taking a command in half of
//!   the cycles) against `(w + 1) / sum(w + 1)`.
//!
//! A benchmark to read, not a timed test.

use crate::models::qos::{wrr_shares, Config, Grant, Limit, NsCfg, QueueCfg, BW_FRAC, IOPS_FRAC};
use crate::suites::qos::flood::{flooder, run_share};
use crate::suites::qos::{dims, run, Channels, Timing, Traffic};
use std::collections::VecDeque;

/// The chip clock in MHz from `configs/default.toml` (`[qos] clock_mhz`), else 250.
fn clock_mhz() -> f64 {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/default.toml");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let v: Option<toml::Value> = toml::from_str(&text).ok();
    v.as_ref()
        .and_then(|v| v.get("qos")?.get("clock_mhz")?.as_integer())
        .map_or(250.0, |m| m as f64)
}

fn all_granted(queues: Vec<QueueCfg>, namespaces: Vec<NsCfg>, pairs: &[(usize, usize)]) -> Config {
    Config {
        queues,
        namespaces,
        grants: pairs
            .iter()
            .map(|&(q, n)| Grant {
                sqid: q as u16 + 1,
                nsid: n as u8 + 1,
                read: true,
                write: true,
                first: 0,
                last: u64::MAX,
            })
            .collect(),
    }
}

fn big_ns() -> NsCfg {
    NsCfg {
        size: 1 << 30,
        lba_shift: 9,
        ..NsCfg::default()
    }
}

/// Releases per cycle with `k` queues flooding and no backpressure.
fn decisions_per_cycle(k: usize, cycles: u64) -> Result<f64, String> {
    let d = dims();
    let mut queues = vec![QueueCfg::default(); d.queues];
    for q in queues.iter_mut().take(k) {
        q.class = 1;
    }
    let mut namespaces = vec![NsCfg::default(); d.namespaces];
    namespaces[0] = big_ns();
    let pairs: Vec<(usize, usize)> = (0..k).map(|q| (q, 0)).collect();
    let cfg = all_granted(queues, namespaces, &pairs);
    let mut traffic = Traffic {
        lists: Vec::new(),
        timed: Vec::new(),
        gens: (0..k).map(|q| (q as u16 + 1, flooder(None))).collect(),
        feed_end: cycles,
        least_in_flight: true,
        fill: [0; 64],
        weight_writes: VecDeque::new(),
    };
    let timing = Timing {
        in_idle: 0,
        out_stall: 0,
        cpl_stall: 0,
        channels: Channels::OPEN,
        warm_reset: None,
        ignore_space: false,
        lazy_program: false,
    };
    let out = run(&cfg, &mut traffic, timing, 1, cycles * 2, None)?;
    // From the first release to the end of feeding.
    let first = out.releases.first().map_or(0, |r| r.cycle);
    let n = out.releases.iter().filter(|r| r.cycle < cycles).count();
    Ok(n as f64 / (cycles - first) as f64)
}

/// Runs the benchmark; returns the exit code (1 with `check` when a goal is missed).
pub fn run_bench(check: bool) -> i32 {
    let mut goals = crate::cli::bench::Goals::default();
    let mhz = clock_mhz();
    let hz = mhz * 1e6;
    let d = dims();
    println!(
        "qos benchmark: {} ({} queues, {} namespaces, {} grants), clock {mhz} MHz (configs/default.toml)",
        <crate::rtl::QosArbiterTop as crate::sim::Dut>::NAME,
        d.queues,
        d.namespaces,
        d.grants
    );
    let mut status = 0;
    let mut fail = |e: String| {
        eprintln!("testbench: qos benchmark: {e}");
        status = 1;
    };

    println!("decisions per cycle (queues always backlogged, transport always ready; goal 1.0)");
    for k in [1usize, 4] {
        match decisions_per_cycle(k, 200_000) {
            Ok(v) => {
                let mark = goals.at_least(&format!("{k} queue(s) releases per cycle"), v, 1.0);
                println!("  {k} queue(s): {v:.4} releases per cycle over 200000 cycles {mark}")
            }
            Err(e) => fail(e),
        }
    }

    // Token bucket rates over a million cycles, after a warm-up that spends the initial bursts
    // (a full bucket adds its burst once; the long-run rate is what the limit promises).
    let cycles = 1_000_000u64;
    let warm = 100_000u64;
    let bw = |bytes_per_s: f64, burst: u32| Limit {
        rate: (bytes_per_s / hz * f64::from(1u32 << BW_FRAC)).round() as u32,
        burst,
    };
    let iops = |per_s: f64, burst: u32| Limit {
        rate: (per_s / hz * f64::from(1u32 << IOPS_FRAC)).round() as u32,
        burst,
    };
    let mut queues = vec![QueueCfg::default(); d.queues];
    let mut namespaces = vec![NsCfg::default(); d.namespaces];
    namespaces[0] = big_ns();
    namespaces[1] = big_ns();
    // (label, what, asked per second, queues counted, commands or bytes)
    let mut tenants: Vec<(String, f64, Vec<usize>, bool)> = Vec::new();
    queues[0].bw = bw(1.0e9, 65536);
    tenants.push(("SQ 1 bandwidth 1 GB/s".into(), 1.0e9, vec![0], false));
    queues[1].bw = bw(300.0e6, 16384);
    tenants.push(("SQ 2 bandwidth 300 MB/s".into(), 300.0e6, vec![1], false));
    queues[2].iops = iops(200.0e3, 16);
    tenants.push(("SQ 3 IOPS 200 k/s".into(), 200.0e3, vec![2], true));
    namespaces[1].bw = bw(700.0e6, 65536);
    tenants.push((
        "namespace 2 bandwidth 700 MB/s (SQ 4 and 5)".into(),
        700.0e6,
        vec![3, 4],
        false,
    ));
    let cfg = all_granted(
        queues,
        namespaces,
        &[(0, 0), (1, 0), (2, 0), (3, 1), (4, 1)],
    );
    let gens = (0..5)
        .map(|q| {
            let mut g = flooder(Some(7));
            let ns = if q >= 3 { 2 } else { 1 };
            let f: crate::suites::qos::Gen = Box::new(move |rng| {
                let mut s = g(rng);
                s.nsid = ns;
                s
            });
            (q as u16 + 1, f)
        })
        .collect();
    let mut traffic = Traffic {
        lists: Vec::new(),
        gens,
        timed: Vec::new(),
        feed_end: warm + cycles,
        least_in_flight: true,
        fill: [0; 64],
        weight_writes: VecDeque::new(),
    };
    let timing = Timing {
        in_idle: 0,
        out_stall: 0,
        cpl_stall: 0,
        channels: Channels::OPEN,
        warm_reset: None,
        ignore_space: false,
        lazy_program: false,
    };
    println!(
        "token bucket rates over {cycles} cycles after {warm} of warm-up (4 KiB reads, always backlogged; goal within 1%)"
    );
    match run(&cfg, &mut traffic, timing, 2, (warm + cycles) * 2, None) {
        Ok(out) => {
            for (label, asked, qs, commands) in &tenants {
                let rel = out
                    .releases
                    .iter()
                    .filter(|r| qs.contains(&r.queue) && (warm..warm + cycles).contains(&r.cycle));
                let amount: f64 = if *commands {
                    rel.count() as f64
                } else {
                    rel.map(|r| r.cost as f64).sum()
                };
                let got = amount / cycles as f64 * hz;
                let unit = if *commands { "commands/s" } else { "bytes/s" };
                let mark = goals.within(label, got, *asked, 0.01);
                println!(
                    "  {label:<44} got {got:>14.0} {unit:<10}  error {:+.3}% {mark}",
                    (got / asked - 1.0) * 100.0
                );
            }
        }
        Err(e) => fail(e),
    }

    println!("share under saturation (one class, no limits, transport ready half the time; goal within 1% of the weights' shares)");
    let weights = [0u8, 1, 3, 7];
    match run_share(&weights, 0, 2, 50, None, &[], 200_000, 3, None) {
        Ok((_, counts)) => {
            let total: u64 = counts.iter().sum();
            let want = wrr_shares(&weights);
            for (i, &w) in weights.iter().enumerate() {
                let share = counts[i] as f64 / total as f64;
                let mark = goals.within(
                    &format!("weight {w} share under saturation"),
                    share,
                    want[i],
                    0.01,
                );
                println!(
                    "  weight {w} (0's based): {share:.4} of {total} releases, configured {:.4}, error {:+.3}% {mark}",
                    want[i],
                    (share / want[i] - 1.0) * 100.0
                );
            }
        }
        Err(e) => fail(e),
    }
    status.max(goals.finish(check))
}
