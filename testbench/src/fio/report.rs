//! `testbench fio`'s output: fio's normal text summary and fio's JSON (`--output-format=json`,
//! and `json+` with the latency bins fio's `fio_jsonplus_clat2csv` reads),
//! with the chip's own figures beside them (the `chip` object in JSON, the `Chip:` lines in
//! text). Every key fio 3.33 writes for a job is written, with the same meaning; figures fio
//! measures on a host that have no meaning here (CPU, context switches, bandwidth samples) are
//! 0. `runtime` is in milliseconds as fio writes it, rounded up (a simulated run is often
//! shorter than one): `runtime_ns` beside it is exact, and `bw_bytes`, `bw` and `iops` are
//! computed from it.

use super::{percentile, summary, Dir, JobResult, RunResult, PERCENTILES};
use serde_json::{json, Map, Value};
use std::fmt::Write as _;

/// fio's 3-significant-digit figure with a k/M/G suffix (`132k`, `45.2k`, `8752`).
fn num(v: f64) -> String {
    if v < 10_000.0 {
        return format!("{}", v.round() as u64);
    }
    let (x, s) = if v >= 1e9 {
        (v / 1e9, "G")
    } else if v >= 1e6 {
        (v / 1e6, "M")
    } else {
        (v / 1e3, "k")
    };
    format!("{}{s}", sig3(x))
}

fn sig3(x: f64) -> String {
    if x >= 100.0 {
        format!("{}", x.round() as u64)
    } else if x >= 10.0 {
        format!("{:.1}", x)
    } else {
        format!("{:.2}", x)
    }
}

/// A byte count or rate in binary and decimal units: (`516MiB`, `541MB`).
fn bytes(v: f64) -> (String, String) {
    let bin = ["B", "KiB", "MiB", "GiB", "TiB"];
    let dec = ["B", "kB", "MB", "GB", "TB"];
    let pick = |base: f64, names: &[&str]| {
        let mut x = v;
        let mut i = 0;
        while x >= 1000.0 && i + 1 < names.len() {
            x /= base;
            i += 1;
        }
        format!("{}{}", sig3(x), names[i])
    };
    (pick(1024.0, &bin), pick(1000.0, &dec))
}

/// The unit fio would print latencies of `v` (ns) in, and its divisor.
fn unit(v: &[u64]) -> (&'static str, f64) {
    let max = v.iter().copied().max().unwrap_or(0);
    if max < 10_000 {
        ("nsec", 1.0)
    } else if max < 10_000_000 {
        ("usec", 1000.0)
    } else {
        ("msec", 1e6)
    }
}

fn seconds(ns: u64) -> f64 {
    ns.max(1) as f64 / 1e9
}

fn dir_text(out: &mut String, name: &str, d: &Dir, runtime_ns: u64) {
    if d.ios == 0 {
        return;
    }
    let secs = seconds(runtime_ns);
    let (bw_bin, bw_dec) = bytes(d.bytes as f64 / secs);
    let (io_bin, _) = bytes(d.bytes as f64);
    let run = if runtime_ns < 10_000_000 {
        format!("{}usec", runtime_ns.div_ceil(1000))
    } else {
        format!("{}msec", runtime_ns.div_ceil(1_000_000))
    };
    let _ = writeln!(
        out,
        "  {name}: IOPS={}, BW={bw_bin}/s ({bw_dec}/s)({io_bin}/{run})",
        num(d.ios as f64 / secs)
    );
    for (label, v) in [
        ("    slat", &d.lat.slat),
        ("    clat", &d.lat.clat),
        ("     lat", &d.lat.lat),
    ] {
        let (u, div) = unit(v);
        let (min, max, mean, sd) = summary(v);
        let f = |x: u64| x as f64 / div;
        let _ = writeln!(
            out,
            "{label} ({u}): min={}, max={}, avg={:.2}, stdev={:.2}",
            f(min).round(),
            f(max).round(),
            mean / div,
            sd / div
        );
    }
    let mut sorted = d.lat.clat.clone();
    sorted.sort_unstable();
    let (u, div) = unit(&sorted);
    let _ = writeln!(out, "    clat percentiles ({u}):");
    let rows: Vec<String> = PERCENTILES
        .chunks(4)
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .map(|&p| {
                    let v = (percentile(&sorted, p) as f64 / div).round() as u64;
                    format!("{p:5.2}th=[{v:5}]")
                })
                .collect();
            format!("     | {}", cells.join(", "))
        })
        .collect();
    let _ = writeln!(out, "{}", rows.join(",\n"));
}

/// fio's latency distribution buckets: (unit, bucket upper bounds in that unit).
const LAT_BUCKETS: [(&str, u64, &[u64]); 3] = [
    ("ns", 1, &[2, 4, 10, 20, 50, 100, 250, 500, 750, 1000]),
    ("us", 1000, &[2, 4, 10, 20, 50, 100, 250, 500, 750, 1000]),
    (
        "ms",
        1_000_000,
        &[2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000],
    ),
];

/// Percent of I/Os per fio latency bucket: ((unit, bound label), percent), every bucket
/// (a latency falls in the first bucket whose bound it does not exceed).
fn lat_dist(j: &JobResult) -> Vec<((&'static str, String), f64)> {
    let all: Vec<u64> = j
        .read
        .lat
        .lat
        .iter()
        .chain(&j.write.lat.lat)
        .copied()
        .collect();
    let mut out = Vec::new();
    let mut prev = 0u64;
    for (u, mul, bounds) in LAT_BUCKETS {
        for &b in bounds {
            let hi = b * mul;
            let n = all.iter().filter(|&&x| x > prev && x <= hi).count()
                + if prev == 0 {
                    all.iter().filter(|&&x| x == 0).count()
                } else {
                    0
                };
            out.push(((u, b.to_string()), pct(n, all.len())));
            prev = hi;
        }
    }
    let n = all.iter().filter(|&&x| x > prev).count();
    out.push((("ms", ">=2000".into()), pct(n, all.len())));
    out
}

fn pct(n: usize, of: usize) -> f64 {
    if of == 0 {
        0.0
    } else {
        100.0 * n as f64 / of as f64
    }
}

/// fio's IO depth buckets: depth at submission, 1, 2, 4, 8, 16, 32, >=64.
fn depth_dist(j: &JobResult) -> Vec<(String, f64)> {
    let labels = ["1", "2", "4", "8", "16", "32", ">=64"];
    let mut n = [0usize; 7];
    for &d in &j.depths {
        let i = match d {
            0 | 1 => 0,
            2..=3 => 1,
            4..=7 => 2,
            8..=15 => 3,
            16..=31 => 4,
            32..=63 => 5,
            _ => 6,
        };
        n[i] += 1;
    }
    labels
        .iter()
        .zip(n)
        .map(|(l, c)| (l.to_string(), pct(c, j.depths.len())))
        .collect()
}

/// fio's submit and complete distributions: I/Os per doorbell (per reap: CQEs the host
/// found in one look), buckets 0, 1-4, 5-8, 9-16, 17-32, 33-64, >64 labelled as fio labels
/// them.
fn batch_dist(v: &[usize]) -> Value {
    let labels = ["0", "4", "8", "16", "32", "64", ">=64"];
    let mut n = [0usize; 7];
    for &b in v {
        let i = match b {
            0 => 0,
            1..=4 => 1,
            5..=8 => 2,
            9..=16 => 3,
            17..=32 => 4,
            33..=64 => 5,
            _ => 6,
        };
        n[i] += 1;
    }
    Value::Object(
        labels
            .iter()
            .zip(n)
            .map(|(l, c)| (l.to_string(), json!(pct(c, v.len()))))
            .collect(),
    )
}

/// fio's normal output.
pub fn text(r: &RunResult) -> String {
    let j = &r.job;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: (g=0): rw={}, bs=(R) {bs}B-{bs}B, (W) {bs}B-{bs}B, (T) {bs}B-{bs}B, ioengine=nvmeof-chip, iodepth={}",
        j.name,
        j.rw.name(),
        j.iodepth,
        bs = j.bs
    );
    let _ = writeln!(
        out,
        "testbench fio {}: the simulated chip at {} MHz, simulated time",
        env!("CARGO_PKG_VERSION"),
        j.clock_mhz
    );
    let _ = writeln!(
        out,
        "Starting {} job{}\n",
        j.numjobs,
        if j.numjobs == 1 { "" } else { "s" }
    );
    for (i, jr) in r.jobs.iter().enumerate() {
        let _ = writeln!(
            out,
            "{}: (groupid=0, jobs=1): err= 0: queue={}: transport={}",
            j.name,
            i + 1,
            jr.transport.name()
        );
        dir_text(&mut out, "read", &jr.read, jr.runtime_ns);
        dir_text(&mut out, "write", &jr.write, jr.runtime_ns);
        let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
        for ((u, b), p) in lat_dist(jr) {
            if p == 0.0 {
                continue;
            }
            let name = match u {
                "ns" => "nsec",
                "us" => "usec",
                _ => "msec",
            };
            if groups.last().is_none_or(|g| g.0 != name) {
                groups.push((name, Vec::new()));
            }
            groups
                .last_mut()
                .expect("pushed")
                .1
                .push(format!("{b}={p:.2}%"));
        }
        for (name, cells) in groups {
            let _ = writeln!(out, "  lat ({name})   : {}", cells.join(", "));
        }
        let depths: Vec<String> = depth_dist(jr)
            .iter()
            .map(|(l, p)| format!("{l}={p:.1}%"))
            .collect();
        let _ = writeln!(out, "  IO depths    : {}", depths.join(", "));
        let _ = writeln!(
            out,
            "     issued rwts: total={},{},0,0 short=0,0,0,0 dropped=0,0,0,0\n",
            jr.read.ios, jr.write.ios
        );
    }
    let _ = writeln!(out, "Run status group 0 (all jobs):");
    for (name, pick) in [
        ("READ", (|x: &JobResult| &x.read) as fn(&JobResult) -> &Dir),
        ("WRITE", |x: &JobResult| &x.write),
    ] {
        let total: u64 = r.jobs.iter().map(|x| pick(x).bytes).sum();
        if total == 0 {
            continue;
        }
        let runs: Vec<u64> = r.jobs.iter().map(|x| x.runtime_ns).collect();
        let span = runs.iter().copied().max().unwrap_or(0);
        let rates: Vec<f64> = r
            .jobs
            .iter()
            .map(|x| pick(x).bytes as f64 / seconds(x.runtime_ns))
            .collect();
        let lo = rates.iter().copied().fold(f64::MAX, f64::min);
        let hi = rates.iter().copied().fold(0.0, f64::max);
        let (bw_b, bw_d) = bytes(total as f64 / seconds(span));
        let (lo_b, lo_d) = bytes(lo);
        let (hi_b, hi_d) = bytes(hi);
        let (io_b, io_d) = bytes(total as f64);
        let _ = writeln!(
            out,
            "{name:>7}: bw={bw_b}/s ({bw_d}/s), {lo_b}/s-{hi_b}/s ({lo_d}/s-{hi_d}/s), io={io_b} ({io_d}), run={}-{}usec",
            runs.iter().min().unwrap_or(&0).div_ceil(1000),
            span.div_ceil(1000)
        );
    }
    let ios: u64 = r.jobs.iter().map(|x| x.read.ios + x.write.ios).sum();
    let _ = writeln!(
        out,
        "\nChip: {ios} commands in {} cycles ({:.4} per cycle); interrupts per completion {:.3}; routed RoCE {}, NVMe/TCP {}, unbound {}; RoCE frames sent again by the target {}; Reads checked against the namespace {}",
        r.cycles,
        ios as f64 / r.cycles.max(1) as f64,
        r.interrupts as f64 / ios.max(1) as f64,
        r.chip_counts.0,
        r.chip_counts.1,
        r.chip_counts.2,
        r.retransmits,
        r.checked_reads
    );
    let _ = writeln!(
        out,
        "Chip paths: {} commands offloaded, {} sent to firmware (fallback)",
        r.offload_fallback.0, r.offload_fallback.1
    );
    for (dir, name) in [(0, "read"), (1, "write")] {
        let bins = &r.hw_latency[dir];
        let n: u64 = bins.iter().map(|&x| u64::from(x)).sum();
        if n == 0 {
            continue;
        }
        let host: Vec<u64> = r
            .jobs
            .iter()
            .flat_map(|j| if dir == 0 { &j.read } else { &j.write }.lat.lat.clone())
            .collect();
        let mut sorted = host;
        sorted.sort_unstable();
        let cells: Vec<String> = [50.0, 99.0, 99.9, 99.99]
            .iter()
            .map(|&p| {
                let hw = super::hw_percentile(bins, p) as f64 * 1000.0 / r.job.clock_mhz;
                format!(
                    "P{p} host {:.2} us, chip < {:.2} us",
                    percentile(&sorted, p) as f64 / 1000.0,
                    hw / 1000.0
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "Chip {name} latency histogram ({n} commands timed, one per queue at a time, log2 bins): {}",
            cells.join("; ")
        );
    }
    let _ = writeln!(
        out,
        "Simulation: {} cycles in {:.2} s wall ({:.0} cycles/s, {:.0} commands/s)",
        r.cycles,
        r.wall_s,
        r.cycles as f64 / r.wall_s.max(1e-9),
        ios as f64 / r.wall_s.max(1e-9)
    );
    out
}

fn stats(v: &[u64], with_pct: bool) -> Value {
    stats_bins(v, with_pct, false)
}

/// min/max/mean/stddev/N, fio's percentiles, and with `bins` (json+) the count of every
/// latency value seen (fio's histogram, at 1 ns resolution).
fn stats_bins(v: &[u64], with_pct: bool, bins: bool) -> Value {
    let (min, max, mean, sd) = summary(v);
    let mut m = Map::new();
    m.insert("min".into(), json!(min));
    m.insert("max".into(), json!(max));
    m.insert("mean".into(), json!(mean));
    m.insert("stddev".into(), json!(sd));
    m.insert("N".into(), json!(v.len()));
    if with_pct && !v.is_empty() {
        let mut sorted = v.to_vec();
        sorted.sort_unstable();
        let p: Map<String, Value> = PERCENTILES
            .iter()
            .map(|&p| (format!("{p:.6}"), json!(percentile(&sorted, p))))
            .collect();
        m.insert("percentile".into(), Value::Object(p));
        if bins {
            let mut b: Vec<(u64, u64)> = Vec::new();
            for &x in &sorted {
                match b.last_mut() {
                    Some(l) if l.0 == x => l.1 += 1,
                    _ => b.push((x, 1)),
                }
            }
            let b: Map<String, Value> = b
                .into_iter()
                .map(|(x, n)| (x.to_string(), json!(n)))
                .collect();
            m.insert("bins".into(), Value::Object(b));
        }
    }
    Value::Object(m)
}

fn dir_json(d: &Dir, runtime_ns: u64, plus: bool) -> Value {
    let secs = seconds(runtime_ns);
    let bw_bytes = (d.bytes as f64 / secs).round() as u64;
    json!({
        "io_bytes": d.bytes,
        "io_kbytes": d.bytes / 1024,
        "bw_bytes": bw_bytes,
        "bw": bw_bytes / 1024,
        "iops": d.ios as f64 / secs,
        "runtime": if d.ios == 0 { 0 } else { runtime_ns.div_ceil(1_000_000) },
        "runtime_ns": runtime_ns,
        "total_ios": d.ios,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": stats(&d.lat.slat, false),
        "clat_ns": stats_bins(&d.lat.clat, true, plus),
        "lat_ns": stats(&d.lat.lat, false),
        "bw_min": 0, "bw_max": 0, "bw_agg": 0.0, "bw_mean": 0.0, "bw_dev": 0.0, "bw_samples": 0,
        "iops_min": 0, "iops_max": 0, "iops_mean": 0.0, "iops_stddev": 0.0, "iops_samples": 0,
    })
}

/// fio's percentiles of a hardware log2 histogram, as the upper bound of their bin in ns.
fn hw_pcts(bins: &[u32; 32], clock_mhz: f64) -> Value {
    Value::Object(
        PERCENTILES
            .iter()
            .map(|&p| {
                let ns = super::hw_percentile(bins, p) as f64 * 1000.0 / clock_mhz;
                (format!("{p:.6}"), json!(ns.round() as u64))
            })
            .collect(),
    )
}

/// fio's JSON output; `plus` adds json+'s latency bins.
pub fn json(r: &RunResult, plus: bool) -> Value {
    let j = &r.job;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let jobs: Vec<Value> = r
        .jobs
        .iter()
        .enumerate()
        .map(|(i, jr)| {
            let mut opts = Map::new();
            opts.insert("name".into(), json!(j.name));
            opts.insert("ioengine".into(), json!("nvmeof-chip"));
            opts.insert("rw".into(), json!(j.rw.name()));
            if matches!(j.rw, super::Rw::RandRw | super::Rw::ReadWrite) {
                opts.insert("rwmixread".into(), json!(j.rwmixread.to_string()));
            }
            opts.insert("bs".into(), json!(j.bs.to_string()));
            opts.insert("iodepth".into(), json!(j.iodepth.to_string()));
            opts.insert("size".into(), json!(j.size.to_string()));
            if let Some(ns) = j.runtime_ns {
                opts.insert("runtime".into(), json!(format!("{ns}ns")));
            }
            opts.insert("transport".into(), json!(jr.transport.name()));
            opts.insert("clock_mhz".into(), json!(j.clock_mhz.to_string()));
            let lat = lat_dist(jr);
            let group = |u: &str| -> Value {
                Value::Object(
                    lat.iter()
                        .filter(|x| x.0 .0 == u)
                        .map(|x| (x.0 .1.clone(), json!(x.1)))
                        .collect(),
                )
            };
            let depth: Map<String, Value> = depth_dist(jr)
                .into_iter()
                .map(|(l, p)| (l, json!(p)))
                .collect();
            let sync = json!({"total_ios": 0, "lat_ns": stats(&[], false)});
            json!({
                "jobname": j.name,
                "groupid": 0,
                "error": 0,
                "eta": 0,
                "elapsed": (r.wall_s.ceil() as u64),
                "job options": Value::Object(opts),
                "read": dir_json(&jr.read, jr.runtime_ns, plus),
                "write": dir_json(&jr.write, jr.runtime_ns, plus),
                "trim": dir_json(&Dir::default(), jr.runtime_ns, plus),
                "sync": sync,
                "job_runtime": jr.runtime_ns.div_ceil(1_000_000),
                "usr_cpu": 0.0, "sys_cpu": 0.0, "ctx": 0, "majf": 0, "minf": 0,
                "iodepth_level": Value::Object(depth),
                "iodepth_submit": batch_dist(&jr.submits),
                "iodepth_complete": batch_dist(&jr.reaps),
                "latency_ns": group("ns"),
                "latency_us": group("us"),
                "latency_ms": group("ms"),
                "latency_depth": j.iodepth,
                "latency_target": 0,
                "latency_percentile": 100.0,
                "latency_window": 0,
                "queue": i + 1,
            })
        })
        .collect();
    let ios: u64 = r.jobs.iter().map(|x| x.read.ios + x.write.ios).sum();
    json!({
        "fio version": format!("testbench-fio-{}", env!("CARGO_PKG_VERSION")),
        "timestamp": now.as_secs(),
        "timestamp_ms": now.as_millis() as u64,
        "time": "simulated",
        "jobs": jobs,
        "chip": {
            "clock_mhz": j.clock_mhz,
            "cycles": r.cycles,
            "commands": ios,
            "commands_per_cycle": ios as f64 / r.cycles.max(1) as f64,
            "interrupts": r.interrupts,
            "interrupts_per_completion": r.interrupts as f64 / ios.max(1) as f64,
            "routed": {"roce": r.chip_counts.0, "nvme_tcp": r.chip_counts.1, "unbound": r.chip_counts.2},
            "offloaded": r.offload_fallback.0,
            "fallback": r.offload_fallback.1,
            "latency_histogram_cycles": {
                "read": r.hw_latency[0].to_vec(),
                "write": r.hw_latency[1].to_vec(),
                "other": r.hw_latency[2].to_vec(),
                "percentile_upper_ns": {
                    "read": hw_pcts(&r.hw_latency[0], j.clock_mhz),
                    "write": hw_pcts(&r.hw_latency[1], j.clock_mhz),
                },
            },
            "roce_target_retransmits": r.retransmits,
            "reads_checked": r.checked_reads,
            "wall_seconds": r.wall_s,
            "cycles_per_second": r.cycles as f64 / r.wall_s.max(1e-9),
        },
    })
}
