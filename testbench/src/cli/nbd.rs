//! `testbench nbd`: exports a device as an NBD server on a Unix domain socket or on TCP
//! 127.0.0.1, for nbdinfo, nbdcopy, fio's `nbd` engine and the kernel's nbd-client (the
//! protocol subset and the server's rules are in [`crate::nbd`]).
//!
//! Exit codes: 0 the server ended as asked (`--once`, `--connections`) after clean sessions;
//! 1 the device failed (message printed), or a session ended in a protocol error; 2 bad usage
//! (no socket given, bad size, socket in use).

use crate::nbd::chip::{ChipConfig, ChipDevice};
use crate::nbd::{self, Device, End, Listener, MemDevice, Options};
use crate::suites::chip::session::Transport;
use std::net::TcpListener;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

/// What the export is backed by.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    /// Every request carried as NVMe commands through the simulated chip.
    Chip,
    /// A byte array with random completion delays and reordering (tests the server).
    Mem,
}

impl DeviceKind {
    /// The name `--device` takes.
    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Chip => "chip",
            DeviceKind::Mem => "mem",
        }
    }
}

/// Arguments of `testbench nbd`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Listen on this Unix domain socket (a stale socket file is replaced, a live one refused).
    #[arg(long, conflicts_with = "port")]
    pub socket: Option<PathBuf>,
    /// Listen on TCP 127.0.0.1:PORT instead.
    #[arg(long)]
    pub port: Option<u16>,
    /// What the export is backed by.
    #[arg(long, value_enum, default_value = "chip")]
    pub device: DeviceKind,
    /// Export size in bytes; K, M, G suffixes are powers of 1024 [chip default: 16M, mem: 64M].
    #[arg(long, value_parser = parse_size)]
    pub size: Option<u64>,
    /// End after the first connection has closed (what CI uses).
    #[arg(long)]
    pub once: bool,
    /// End after this many connections have closed [default: serve forever].
    #[arg(long, conflicts_with = "once")]
    pub connections: Option<u64>,
    /// The export's name (clients may also ask for "", the default export).
    #[arg(long, default_value = "testbench")]
    pub name: String,
    /// chip: the transport the queues are bound to (roce or nvme_tcp).
    #[arg(long, default_value = "roce")]
    pub transport: String,
    /// chip: I/O queues (one per channel of the transport; requests go to the roomiest).
    #[arg(long, default_value_t = 2)]
    pub queues: u16,
    /// chip: commands each queue keeps in flight.
    #[arg(long, default_value_t = 32)]
    pub depth: u16,
    /// chip: remote latency in ns, fixed (plus up to a quarter of it at random).
    #[arg(long, default_value_t = 2000)]
    pub remote_lat_ns: u64,
    /// chip: clock in MHz, to turn the remote latency into cycles.
    #[arg(long, default_value_t = 250.0)]
    pub clock_mhz: f64,
    /// mem: minimum block size, the alignment every request must have.
    #[arg(long, default_value_t = 512)]
    pub block_size: u32,
    /// Largest READ/WRITE payload (K, M suffixes; chip: at most 128K); longer TRIM and
    /// WRITE_ZEROES are split.
    #[arg(long, default_value = "1M", value_parser = parse_size)]
    pub max_payload: u64,
    /// mem: requests in flight before back-pressure.
    #[arg(long, default_value_t = 64)]
    pub mem_depth: usize,
    /// mem: a request finishes 0 to this many advance calls after submission.
    #[arg(long, default_value_t = 16)]
    pub mem_delay: u32,
    /// mem: finish requests in submission order.
    #[arg(long)]
    pub mem_in_order: bool,
    /// Seed of the device's randomness (mem: delays and order).
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,
    /// Print a line when each connection opens.
    #[arg(long, short)]
    pub verbose: bool,
}

/// `4096`, `64K`, `16M`, `1G` (powers of 1024).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (digits, shift) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 10),
        Some('M') => (&t[..t.len() - 1], 20),
        Some('G') => (&t[..t.len() - 1], 30),
        _ => (t, 0),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{s:?} is not a size: give bytes, or a number with K, M or G"))?;
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("{s:?} is too large"))
}

/// The `--device chip` device: the simulated chip ([`crate::nbd::chip`]).
pub fn chip_device(args: &Args) -> Result<Box<dyn Device>, String> {
    let transport = match args.transport.as_str() {
        "roce" | "rdma" => Transport::Roce,
        "nvme_tcp" | "tcp" => Transport::Tcp,
        t => return Err(format!("--transport {t}: expected roce or nvme_tcp")),
    };
    let max = u32::try_from(args.max_payload)
        .map_err(|_| format!("--max-payload {} is over 4 GiB", args.max_payload))?;
    let cycles = |ns: u64| (ns as f64 * args.clock_mhz / 1000.0).round() as u32;
    let dev = ChipDevice::open(&ChipConfig {
        transport,
        queues: args.queues,
        depth: args.depth,
        size: args.size.unwrap_or(16 << 20),
        max_payload: max.min(128 << 10),
        remote_cycles: (cycles(args.remote_lat_ns), cycles(args.remote_lat_ns / 4)),
        seed: args.seed,
    })?;
    Ok(Box::new(dev))
}

/// The `--device mem` device.
pub fn mem_device(args: &Args) -> Result<Box<dyn Device>, String> {
    let size = args.size.unwrap_or(64 << 20);
    let max = u32::try_from(args.max_payload)
        .map_err(|_| format!("--max-payload {} is over 4 GiB", args.max_payload))?;
    let pref = 4096u32.max(args.block_size).min(max.max(512));
    nbd::check_geometry(size, (args.block_size, pref, max))
        .map_err(|e| format!("--size/--block-size/--max-payload: {e}"))?;
    Ok(Box::new(
        MemDevice::new(size, args.seed)
            .with_block_sizes(args.block_size, pref, max)
            .with_depth(args.mem_depth)
            .with_delay(0, args.mem_delay)
            .with_reorder(!args.mem_in_order),
    ))
}

/// Removes the socket file when the server ends.
struct Unlink(Option<PathBuf>);

impl Drop for Unlink {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

fn bind_unix(path: &Path) -> Result<UnixListener, String> {
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(format!(
                "--socket {}: exists and is not a socket; choose another path",
                path.display()
            ));
        }
        if UnixStream::connect(path).is_ok() {
            return Err(format!(
                "--socket {}: another server is listening there; stop it or choose another path",
                path.display()
            ));
        }
        // A socket file nobody listens on: left by a server that was killed.
        std::fs::remove_file(path).map_err(|e| {
            format!(
                "--socket {}: removing the stale socket: {e}",
                path.display()
            )
        })?;
    }
    UnixListener::bind(path).map_err(|e| format!("--socket {}: {e}", path.display()))
}

/// Runs the server; returns the exit code.
pub fn run(args: &Args) -> i32 {
    if args.socket.is_none() && args.port.is_none() {
        eprintln!("testbench nbd: give --socket PATH (a Unix domain socket) or --port N (TCP on 127.0.0.1)");
        return 2;
    }
    // The device first: the socket appears only once the server can answer on it.
    let made = match args.device {
        DeviceKind::Chip => chip_device(args),
        DeviceKind::Mem => mem_device(args),
    };
    let mut device = match made {
        Ok(d) => d,
        Err(e) => {
            eprintln!("testbench nbd: --device {}: {e}", args.device.name());
            return 2;
        }
    };
    let (listener, _unlink) = match (&args.socket, args.port) {
        (Some(path), _) => match bind_unix(path) {
            Ok(l) => (Listener::Unix(l, path.clone()), Unlink(Some(path.clone()))),
            Err(e) => {
                eprintln!("testbench nbd: {e}");
                return 2;
            }
        },
        (None, Some(port)) => match TcpListener::bind(("127.0.0.1", port)) {
            Ok(l) => (Listener::Tcp(l), Unlink(None)),
            Err(e) => {
                eprintln!("testbench nbd: --port {port}: {e}");
                return 2;
            }
        },
        (None, None) => unreachable!("checked above"),
    };
    let (min, pref, max) = device.block_sizes();
    let (flush, trim, zeroes) = device.supports();
    let opts = Options {
        name: args.name.clone(),
        description: format!("testbench {} device", args.device.name()),
        connections: if args.once { Some(1) } else { args.connections },
        verbose: args.verbose,
    };
    println!(
        "nbd: serving {} bytes ({} device; blocks {min}/{pref}/{max}; flush {flush}, trim {trim}, write zeroes {zeroes}) at {}",
        device.size(),
        args.device.name(),
        listener.uri()
    );
    match nbd::serve(&listener, device.as_mut(), &opts) {
        Ok(sessions) => {
            let bad = sessions
                .iter()
                .filter(|s| matches!(s.end, End::Protocol(_)))
                .count();
            if bad > 0 {
                eprintln!(
                    "testbench nbd: {bad} of {} connections ended in a protocol error (see above)",
                    sessions.len()
                );
                1
            } else {
                0
            }
        }
        Err(e) => {
            eprintln!("testbench nbd: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64k"), Ok(64 << 10));
        assert_eq!(parse_size("16M"), Ok(16 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert!(parse_size("1.5M").is_err());
        assert!(parse_size("99999999999G").is_err());
    }
}
