//! `testbench tcp-linux`: the TCP/IP engine against the Linux kernel's TCP/IP over a TAP
//! device, in network namespaces of its own (`suites/tcp/linux/` says what a case does and
//! checks). Cases run one after the other, in real time.
//!
//! Exit codes: 0 every case passed; 1 a case failed; 2 the machine cannot run the test (not
//! root, no /dev/net/tun, no `ip`, or a namespace could not be made), with what is missing.

use crate::pcap::Pcap;
use crate::prop::case_seed;
use crate::suites::tcp::linux::{self, Options};
use crate::suites::tcp::linux_nvme;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Arguments of `testbench tcp-linux`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Cases, each in its own network namespace (case 0 runs without bridge faults).
    #[arg(long, default_value_t = 3)]
    pub cases: u64,
    /// Base seed; case i draws its streams, faults and settings from a seed derived from it.
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,
    /// Largest byte stream per connection and direction.
    #[arg(long, default_value_t = 65536)]
    pub max_bytes: usize,
    /// Echo requests the kernel sends the engine per case.
    #[arg(long, default_value_t = 4)]
    pub pings: u32,
    /// Largest drop, duplication and reordering rate of the bridge, percent per TCP frame and
    /// direction (each case draws its rates up to it).
    #[arg(long, default_value_t = 3)]
    pub faults: u8,
    /// Simulated clock, cycles per microsecond of wall time at most (the engine's timer tick
    /// is 1 ms of it).
    #[arg(long, default_value_t = 2)]
    pub mhz: u32,
    /// A case not done after this many seconds fails.
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
    /// Run only case K (its seed and faults as in a full run), to replay a failure.
    #[arg(long, value_name = "K")]
    pub only: Option<u64>,
    /// Record every frame crossing the TAP (both directions, every case) into this pcap.
    #[arg(long)]
    pub pcap: Option<PathBuf>,
    /// Do not check the engine's frames with the golden model: the kernel alone judges them.
    #[arg(long)]
    pub no_golden: bool,
    /// NVMe/TCP end to end instead of byte streams: the NVMe/TCP engine on the TCP engine
    /// (`nvme_tcp_ip_*`), the project's NVMe/TCP target model on the kernel's sockets, Reads
    /// and Writes checked byte for byte (`suites/tcp/linux_nvme.rs`; --max-bytes and --pings
    /// do not apply).
    #[arg(long)]
    pub nvme: bool,
}

/// Runs `testbench tcp-linux`; returns the exit code.
pub fn run(args: &Args) -> i32 {
    if args.mhz == 0 || args.mhz > 16 {
        eprintln!("tcp-linux: --mhz {}: allowed 1 to 16", args.mhz);
        return 2;
    }
    if let Err(e) = linux::preflight() {
        eprintln!("tcp-linux: {e}");
        return 2;
    }
    linux::remove_stale();
    let opt = Options {
        max_bytes: args.max_bytes,
        pings: args.pings,
        faults: args.faults,
        mhz: args.mhz,
        timeout: Duration::from_secs(args.timeout),
        golden: !args.no_golden,
    };
    let mut pcap = args.pcap.as_ref().map(|_| Pcap::new());
    if args.nvme {
        return run_nvme(args, &opt, pcap.as_mut());
    }
    let t0 = Instant::now();
    let (mut passed, mut failed) = (0u64, 0u64);
    let (mut up, mut down, mut retrans, mut k_retrans, mut pings) =
        (0usize, 0usize, 0u32, 0u64, 0u32);
    // Kernel RTO expiries and fast retransmits; receive stalls over 1 s, the longest.
    let (mut k_timeouts, mut k_fast, mut stalls, mut stall_max) = (0u64, 0u64, 0u32, 0u64);
    for i in 0..args.cases {
        if args.only.is_some_and(|k| k != i) {
            continue;
        }
        let seed = case_seed(args.seed, i);
        match linux::run_case(i, seed, &opt, pcap.as_mut()) {
            Ok(r) => {
                passed += 1;
                up += r.up;
                down += r.down;
                retrans += r.retrans;
                k_retrans += r.k_retrans;
                k_timeouts += r.k_timeouts;
                k_fast += r.k_fast;
                stalls += u32::from(r.stall_ms > 1000);
                stall_max = stall_max.max(r.stall_ms);
                pings += r.pings;
                println!("case {i} (seed {seed:#x}): passed: {r}");
            }
            Err(e) => {
                failed += 1;
                println!("case {i} (seed {seed:#x}): FAILED: {e}");
                if e.contains("could not make the network namespace") {
                    eprintln!("tcp-linux: {e}");
                    return 2;
                }
            }
        }
    }
    if let (Some(p), Some(path)) = (&pcap, &args.pcap) {
        match p.save(path) {
            Ok(()) => println!("pcap: {} frames in {}", p.frames(), path.display()),
            Err(e) => {
                eprintln!("tcp-linux: {}: {e}", path.display());
                failed += 1;
            }
        }
    }
    println!(
        "tcp-linux: {passed} passed, {failed} failed; engine->linux {up} B, linux->engine {down} B, \
         engine retransmissions {retrans}, linux retransmissions {k_retrans} (RTO expiries \
         {k_timeouts}, fast retransmits {k_fast}); {stalls} passed cases with a receive stall \
         over 1 s (longest {stall_max} ms); {pings} pings answered, {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    if failed > 0 {
        1
    } else {
        0
    }
}

/// `testbench tcp-linux --nvme`: the cases one after the other, the pcap saved; the exit code.
fn run_nvme(args: &Args, opt: &Options, mut pcap: Option<&mut Pcap>) -> i32 {
    let t0 = Instant::now();
    let (mut passed, mut failed) = (0u64, 0u64);
    let (mut cmds, mut bytes, mut retrans, mut k_retrans) = (0usize, 0u64, 0u32, 0u64);
    for i in 0..args.cases {
        if args.only.is_some_and(|k| k != i) {
            continue;
        }
        let seed = case_seed(args.seed, i);
        match linux_nvme::run_case(i, seed, opt, pcap.as_deref_mut()) {
            Ok(r) => {
                passed += 1;
                cmds += r.commands;
                bytes += r.read_bytes + r.write_bytes;
                retrans += r.retrans;
                k_retrans += r.k_retrans;
                println!("case {i} (seed {seed:#x}): passed: {r}");
            }
            Err(e) => {
                failed += 1;
                println!("case {i} (seed {seed:#x}): FAILED: {e}");
                if e.contains("could not make the network namespace") {
                    eprintln!("tcp-linux: {e}");
                    return 2;
                }
            }
        }
    }
    if let (Some(p), Some(path)) = (&pcap, &args.pcap) {
        match p.save(path) {
            Ok(()) => println!("pcap: {} frames in {}", p.frames(), path.display()),
            Err(e) => {
                eprintln!("tcp-linux: {}: {e}", path.display());
                failed += 1;
            }
        }
    }
    println!(
        "tcp-linux --nvme: {passed} passed, {failed} failed; {cmds} NVMe/TCP commands, {bytes} B \
         of Read and Write data checked; engine retransmissions {retrans}, linux retransmissions \
         {k_retrans}; {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    i32::from(failed > 0)
}
