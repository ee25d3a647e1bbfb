//! The `hdl-gen` command line: one file per subcommand, all of them thin over the library.
//!
//! What lives here:
//!
//! - `mod.rs`: the argument parser and the dispatch
//! - `emit.rs`, `check.rs`: `hdl-gen emit` and `hdl-gen check`
//! - `fpga.rs`: `hdl-gen fpga ...` over `crate::fpga`
//! - `hdl-gen lint` is `crate::lint`'s
//!
//! Exit codes: 0 success; 1 `check` found stale files or `lint` found a failing module;
//! 2 the configuration, the generator or the environment is at fault (nothing was written).

mod check;
mod emit;
mod fpga;

pub(crate) use emit::stale_files;
pub use emit::write_tree;

use crate::config::{Config, ConfigError};
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};

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

/// The repository root this binary was built from.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The shipped default configuration.
pub fn default_config() -> PathBuf {
    repo_root().join("configs").join("default.toml")
}

/// The committed RTL folder.
pub fn default_rtl() -> PathBuf {
    repo_root().join("rtl")
}

/// A failure that ends the command with an exit code.
#[derive(Debug)]
pub struct Failure {
    /// Process exit code.
    pub code: i32,
    /// What to tell the user.
    pub message: String,
}

impl Failure {
    pub(crate) fn usage(message: impl Into<String>) -> Failure {
        Failure {
            code: 2,
            message: message.into(),
        }
    }
}

impl From<ConfigError> for Failure {
    fn from(e: ConfigError) -> Failure {
        Failure::usage(format!("bad configuration: {e}\nnothing was written"))
    }
}

impl From<hdl_builder::Errors> for Failure {
    fn from(e: hdl_builder::Errors) -> Failure {
        Failure::usage(format!("{e}\nelaboration failed; nothing was written"))
    }
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
