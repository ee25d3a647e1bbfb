//! The `testbench` command line.
//!
//! What lives here:
//!
//! - `regress.rs`: `testbench regress`
//! - `mutants.rs`: `testbench mutants`
//! - `mutate.rs`: `testbench mutate` (mutants from the builder's IR, run as `mutants` runs its table)
//! - `coverage.rs`: `testbench coverage`
//! - `fio.rs`, `nbd.rs`: `testbench fio` and `testbench nbd` (options; the work is in `crate::fio`,
//!   `crate::nbd`)
//! - `tcp_linux.rs`: `testbench tcp-linux`
//! - `board.rs`: `testbench board` (the simulated bring-up board; the work is in `crate::board`)
//! - `bench.rs`, `cocotb.rs`: `testbench bench` and the harness benchmark (with its cocotb side)
//! - `bench_chip.rs`, `bench_dma.rs`, `bench_nvme.rs`, `bench_nvme_tcp.rs`, `bench_qos.rs`,
//!   `bench_rdma.rs`, `bench_tcp.rs`: each engine's and the chip's figures
//!
//! Exit codes: 0 everything passed; 1 some case failed; 2 bad usage (unknown suite, bad shard).
//! `nbd` documents its own (cli/nbd.rs).

pub mod bench;
pub mod bench_chip;
pub mod bench_dma;
pub mod bench_nvme;
pub mod bench_nvme_tcp;
pub mod bench_qos;
pub mod bench_rdma;
pub mod bench_tcp;
pub mod board;
pub mod cocotb;
pub mod coverage;
pub mod fio;
pub mod mutants;
pub mod mutate;
pub mod nbd;
pub mod regress;
pub mod tcp_linux;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Drives the Verilator-compiled RTL with property-based stimulus and checks it against golden
/// Rust models.
#[derive(Parser, Debug)]
#[command(name = "testbench", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Runs a suite's property cases; ends with `NAME: P passed, F failed`.
    Regress(regress::Args),
    /// Runs the mutant table on mutant schemata models (one build, every mutant chosen at run
    /// time); one line per mutant, a score per file; exits 1 when a mutant survives.
    Mutants(mutants::Args),
    /// Mutants drawn from the builder's IR (operators, constants, conditions, stuck bits, FSM
    /// states) in a suite's modules, run as `mutants` runs its table; a score per module with
    /// the survivors named by the generator's line.
    Mutate(mutate::Args),
    /// Verilator line and toggle coverage of the RTL under suites' regressions: lcov, HTML, and
    /// a per-module table (`coverage --help` says how it is built and what is counted).
    Coverage(coverage::Args),
    /// Runs fio's workloads on the simulated chip; prints fio's text or JSON.
    Fio(fio::Args),
    /// Exports a device (the simulated chip, or memory) as an NBD server on a local socket.
    Nbd(nbd::Args),
    /// Runs the TCP/IP engine against the Linux kernel's TCP/IP over a TAP device, in network
    /// namespaces of its own (needs root).
    TcpLinux(tcp_linux::Args),
    /// Runs a bring-up board's core (Verilated, built on first use) as if on the desk: its UART
    /// on a pseudo-terminal for the `bringup` tool, a PHY on MDIO, its RGMII pins bridged to a
    /// TAP device in a network namespace where the NVMe/TCP target model listens (needs root).
    Board(board::Args),
    /// Measures simulation speed (`--suite harness`: Rust vs a plain C++ loop vs cocotb).
    Bench {
        /// Which benchmark.
        #[arg(long)]
        suite: String,
        /// Cycles per measurement.
        #[arg(long, default_value_t = 5_000_000)]
        cycles: u64,
        /// Skip the cocotb measurement (it needs Python and `pip install 'cocotb<2'`).
        #[arg(long)]
        no_cocotb: bool,
        /// Where the cocotb virtual environment lives.
        #[arg(long)]
        venv: Option<PathBuf>,
        /// Exit 1 when a figure in simulated cycles misses its goal (chip, nvme, nvme-tcp, qos).
        #[arg(long)]
        check: bool,
    },
}

/// The repository (the testbench crate's parent folder).
pub(crate) fn root() -> PathBuf {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// Cargo's target folder: `CARGO_TARGET_DIR`, else `<root>/target`.
pub(crate) fn target_dir(root: &std::path::Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
}

/// Prints a progress line at once (stdout may be a pipe).
pub(crate) fn out(line: &str) {
    use std::io::Write;
    println!("{line}");
    let _ = std::io::stdout().flush();
}
