//! The `hdl-gen` command line: one file per subcommand, all of them thin over the library.
//!
//! What lives here:
//!
//! - `mod.rs`: the argument parser and the dispatch
//! - `emit.rs`, `check.rs`: `hdl-gen emit` and `hdl-gen check`
//! - `fpga.rs`: `hdl-gen fpga ...` over `crate::fpga`
//! - `hdl-gen lint` is `crate::lint`'s; errors, paths and `write_tree` are `crate::util`'s
//!
//! Exit codes: 0 success; 1 `check` found stale files or `lint` found a failing module;
//! 2 the configuration, the generator or the environment is at fault (nothing was written).

mod check;
mod emit;
mod fpga;

use crate::config::Config;
use crate::util::{default_config, default_rtl, Failure};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Generates the NVMe-oF offload chip's SystemVerilog from a TOML configuration.
#[derive(Parser, Debug)]
#[command(name = "hdl-gen", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Writes the RTL, bindings, file list and FuseSoC core for a configuration.
    Emit {
        /// Configuration file [default: configs/default.toml in the repository].
        #[arg(long)]
        config: Option<PathBuf>,
        /// Output folder [default: rtl/ in the repository].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Fails, naming the stale files, when a folder differs from what the generator emits now.
    Check {
        /// Configuration file [default: configs/default.toml in the repository].
        #[arg(long)]
        config: Option<PathBuf>,
        /// Folder to compare [default: rtl/ in the repository].
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Runs `verilator --lint-only -Wall` and a Yosys synthesis on every emitted module.
    Lint {
        /// Configuration file [default: configs/default.toml in the repository].
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// The ECP5 FPGA flow: board tops, bitstreams, per-block reports, post-synthesis netlists.
    Fpga {
        #[command(subcommand)]
        command: fpga::FpgaCommand,
    },
}

fn load(config: Option<PathBuf>) -> Result<Config, Failure> {
    let path = config.unwrap_or_else(default_config);
    tracing::debug!(config = %path.display(), "loading configuration");
    Ok(Config::load(&path)?)
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Emit { config, out } => {
            let cfg = load(config)?;
            emit::run(&cfg, &out.unwrap_or_else(default_rtl))
        }
        Command::Check { config, dir } => {
            let cfg = load(config)?;
            check::run(&cfg, &dir.unwrap_or_else(default_rtl))
        }
        Command::Lint { config } => {
            let cfg = load(config)?;
            crate::lint::run(&cfg)
        }
        Command::Fpga { command } => fpga::run(command),
    }
}
