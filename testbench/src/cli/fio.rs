//! `testbench fio`: fio's job options on the simulated chip ([`crate::fio`]).

use crate::fio::{self, Job, Rw};
use crate::suites::chip::session::Transport;
use clap::Args as ClapArgs;
use std::path::PathBuf;

/// Options, named as fio names them.
#[derive(ClapArgs, Debug)]
pub struct Args {
    /// Job name.
    #[arg(long, default_value = "chip")]
    pub name: String,
    /// read, write, randread, randwrite, randrw or rw.
    #[arg(long, default_value = "randread")]
    pub rw: String,
    /// Percent of reads in a mixed workload.
    #[arg(long, default_value_t = 50)]
    pub rwmixread: u8,
    /// Block size (a multiple of 512; suffixes k, m: 4k).
    #[arg(long, default_value = "4k")]
    pub bs: String,
    /// Commands each job keeps in flight.
    #[arg(long, default_value_t = 1)]
    pub iodepth: u16,
    /// Jobs, one I/O queue pair each, each on its own channel of its transport.
    #[arg(long, default_value_t = 1)]
    pub numjobs: u16,
    /// Bytes each job moves, and the namespace region it works in (suffixes k, m, g).
    #[arg(long, default_value = "1m")]
    pub size: String,
    /// Simulated time limit (suffixes ns, us, ms, s; a bare number is seconds, as in fio).
    #[arg(long)]
    pub runtime: Option<String>,
    /// Run for the whole runtime, even after `size` is done.
    #[arg(long = "time_based")]
    pub time_based: bool,
    /// Chip clock, MHz: turns cycles into time.
    #[arg(long = "clock-mhz", default_value_t = 250.0)]
    pub clock_mhz: f64,
    /// Transport: roce, nvme_tcp, or both (jobs alternate: roce,nvme_tcp).
    #[arg(long, default_value = "roce")]
    pub transport: String,
    /// Remote latency of NVMe/RDMA (RoCEv2): FIXED[:RANDOM] in ns, added to every frame the
    /// chip sends before the target sees it.
    #[arg(long = "roce-lat", default_value = "2000:500")]
    pub roce_lat: String,
    /// Remote latency of NVMe/TCP: FIXED[:RANDOM] ns, added to every chunk of bytes the chip
    /// sends.
    #[arg(long = "tcp-lat", default_value = "2000:500")]
    pub tcp_lat: String,
    /// Host memory read latency, MIN:MAX ns.
    #[arg(long = "host-lat", default_value = "200:400")]
    pub host_lat: String,
    /// Interrupt coalescing: THRESHOLD[:TIME] (Feature 08h: threshold 0's based, time in
    /// 100 µs units); off by default.
    #[arg(long)]
    pub coalesce: Option<String>,
    /// normal, json or json+ (json with every latency's count, as fio's json+).
    #[arg(long = "output-format", default_value = "normal")]
    pub output_format: String,
    /// Write the report here instead of stdout.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Draw latency distributions and IOPS over time into this SVG.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Seed of every random choice.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write an FST waveform of the run.
    #[arg(long)]
    pub waves: Option<PathBuf>,
    /// No progress line.
    #[arg(long)]
    pub quiet: bool,
}

/// `4k` -> 4096; `1m`, `1g`; plain bytes.
pub fn parse_size(s: &str, what: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let t = t
        .strip_suffix("ib")
        .or_else(|| t.strip_suffix('b'))
        .unwrap_or(&t);
    let (num, mul) = match t.chars().last() {
        Some('k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('m') => (&t[..t.len() - 1], 1 << 20),
        Some('g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .ok_or(format!(
            "{what} {s}: expected a byte count such as 512, 4k, 16m or 1g"
        ))
}

/// `200us` -> 200_000 ns; a bare number is seconds (fio's unit).
pub fn parse_time(s: &str, what: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let mul = match unit {
        "ns" => 1,
        "us" | "usec" => 1000,
        "ms" | "msec" => 1_000_000,
        "" | "s" | "sec" => 1_000_000_000,
        _ => 0,
    };
    num.parse::<u64>()
        .ok()
        .filter(|_| mul > 0)
        .map(|n| n * mul)
        .ok_or(format!(
            "{what} {s}: expected a time such as 200us, 2ms or 1s"
        ))
}

/// `A[:B]` -> (A, B), B 0 when absent.
fn parse_pair(s: &str, what: &str) -> Result<(u64, u64), String> {
    let bad = || format!("{what} {s}: expected A or A:B, numbers");
    let mut it = s.split(':');
    let a = it.next().and_then(|x| x.parse().ok()).ok_or_else(bad)?;
    let b = match it.next() {
        Some(x) => x.parse().map_err(|_| bad())?,
        None => 0,
    };
    if it.next().is_some() {
        return Err(bad());
    }
    Ok((a, b))
}

/// The job the options describe.
pub fn job(a: &Args) -> Result<Job, String> {
    let transports = a
        .transport
        .split(',')
        .map(|t| match t.trim() {
            "roce" | "rdma" => Ok(Transport::Roce),
            "nvme_tcp" | "tcp" => Ok(Transport::Tcp),
            other => Err(format!(
                "--transport {other}: expected roce, nvme_tcp or roce,nvme_tcp"
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let host = parse_pair(&a.host_lat, "--host-lat")?;
    let coalesce = match &a.coalesce {
        None => None,
        Some(c) => {
            let (thr, time) = parse_pair(c, "--coalesce")?;
            if thr > 255 || time > 255 {
                return Err(format!("--coalesce {c}: threshold and time are 0 to 255"));
            }
            Some((thr as u8, time as u8))
        }
    };
    let j = Job {
        name: a.name.clone(),
        rw: Rw::parse(&a.rw)?,
        rwmixread: a.rwmixread,
        bs: u32::try_from(parse_size(&a.bs, "--bs")?).map_err(|_| "--bs: too large")?,
        iodepth: a.iodepth,
        numjobs: a.numjobs,
        size: parse_size(&a.size, "--size")?,
        runtime_ns: a
            .runtime
            .as_deref()
            .map(|r| parse_time(r, "--runtime"))
            .transpose()?,
        time_based: a.time_based,
        clock_mhz: a.clock_mhz,
        transports,
        remote_ns: [
            parse_pair(&a.roce_lat, "--roce-lat")?,
            parse_pair(&a.tcp_lat, "--tcp-lat")?,
        ],
        mem_ns: (host.0, host.1.max(host.0)),
        coalesce,
        seed: a.seed,
        waves: a.waves.clone(),
        progress: !a.quiet,
    };
    if !matches!(a.output_format.as_str(), "normal" | "json" | "json+") {
        return Err(format!(
            "--output-format {}: expected normal, json or json+",
            a.output_format
        ));
    }
    j.validate()?;
    Ok(j)
}

/// Runs the command; the exit code.
pub fn run(a: &Args) -> i32 {
    let j = match job(a) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("testbench fio: {e}");
            return 2;
        }
    };
    let r = match fio::run(&j) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("testbench fio: the run failed: {e}");
            return 1;
        }
    };
    let out = if a.output_format.starts_with("json") {
        let plus = a.output_format == "json+";
        serde_json::to_string_pretty(&fio::report::json(&r, plus)).expect("JSON") + "\n"
    } else {
        fio::report::text(&r)
    };
    match &a.output {
        Some(p) => {
            if let Err(e) = std::fs::write(p, &out) {
                eprintln!("testbench fio: cannot write {}: {e}", p.display());
                return 1;
            }
        }
        None => print!("{out}"),
    }
    if let Some(p) = &a.plot {
        if let Err(e) = fio::plot::write(&r, p) {
            eprintln!("testbench fio: {e}");
            return 1;
        }
    }
    0
}
