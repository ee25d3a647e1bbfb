//! `hdl-gen fpga ...`: the ECP5 flow (src/fpga/) and the bring-up boards (src/boards/).

use super::load;
use crate::fpga;
use crate::util::{default_config, repo_root, Failure};
use clap::Subcommand;
use std::path::PathBuf;

/// What `hdl-gen fpga` does.
#[derive(Subcommand, Debug)]
pub enum FpgaCommand {
    /// Installs the pinned FPGA tools (YoWASP Yosys, nextpnr-ecp5, ecppack) from PyPI into
    /// target/fpga-venv ($HDL_GEN_FPGA_VENV); the other steps do it when needed.
    Setup,
    /// Writes the board tops (fpga/<board>/) and their constraints (constraints/<board>.lpf).
    Emit {
        /// Configuration file [default: configs/default.toml in the repository].
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Fails, naming them, when the board files (fpga/<board>/, constraints/) are stale; notes
    /// report entries (fpga/reports) measured on older RTL.
    Check {
        /// Configuration file [default: configs/default.toml in the repository].
        #[arg(long)]
        config: Option<PathBuf>,
        /// Fail on stale reports too.
        #[arg(long)]
        reports: bool,
    },
    /// Runs `verilator --lint-only -Wall` on each board top and everything below it.
    Lint {
        /// Configuration file [default: configs/default.toml in the repository].
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Per-block report: every module synthesized and placed and routed for each board.
    Blocks {
        /// Configuration file [default: configs/default.toml in the repository].
        #[arg(long)]
        config: Option<PathBuf>,
        /// Only this module (repeatable); the report keeps the other entries.
        #[arg(long)]
        only: Vec<String>,
        /// Report folder [default: fpga/reports in the repository].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Bring-up bitstreams (target/fpga/<board>/<board>.bit) and the board report; fails when
    /// a board misses its clock target.
    Board {
        /// Boards [default: all]: butterstick, colorlight_i5.
        boards: Vec<String>,
        /// Configuration file [default: configs/default.toml in the repository].
        #[arg(long)]
        config: Option<PathBuf>,
        /// Report folder [default: fpga/reports in the repository].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Post-synthesis netlists: a copy of the RTL folder in which each top is replaced by its
    /// synthesized netlist, for the testbench (`TB_RTL_DIR=<out>`).
    Netlist {
        /// Configuration file [default: configs/default.toml in the repository].
        #[arg(long)]
        config: Option<PathBuf>,
        /// Only this top (repeatable) [default: every top with a testbench binding].
        #[arg(long)]
        only: Vec<String>,
        /// Output folder [default: target/postsynth/rtl in the repository].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Synthesize with the `yosys` on PATH instead of the pinned YoWASP build.
        #[arg(long)]
        system_yosys: bool,
    },
    /// Everything that makes the committed results: emit, blocks, board.
    All {
        /// Configuration file [default: configs/default.toml in the repository].
        #[arg(long)]
        config: Option<PathBuf>,
    },
}

pub(super) fn run(cmd: FpgaCommand) -> Result<(), Failure> {
    let reports = |out: Option<PathBuf>| out.unwrap_or_else(fpga::reports_dir);
    match cmd {
        FpgaCommand::Setup => {
            fpga::tools::Tools::ensure(&fpga::tools::venv_dir())?;
            println!("fpga: tools ready in {}", fpga::tools::venv_dir().display());
            Ok(())
        }
        FpgaCommand::Emit { config } => fpga::emit(&load(config)?, &repo_root()),
        FpgaCommand::Check { config, reports } => {
            fpga::check(&load(config)?, &repo_root(), reports)
        }
        FpgaCommand::Lint { config } => fpga::lint(&load(config)?),
        FpgaCommand::Blocks { config, only, out } => {
            fpga::blocks(&load(config)?, &only, &reports(out)).map(|_| ())
        }
        FpgaCommand::Board {
            boards,
            config,
            out,
        } => fpga::board(&load(config)?, &boards, &reports(out)).map(|_| ()),
        FpgaCommand::Netlist {
            config,
            only,
            out,
            system_yosys,
        } => {
            let out = out.unwrap_or_else(|| repo_root().join("target/postsynth/rtl"));
            fpga::netlist(&load(config)?, &only, &out, system_yosys).map(|_| ())
        }
        FpgaCommand::All { config } => {
            let cfg = load(config.clone().or_else(|| Some(default_config())))?;
            fpga::emit(&cfg, &repo_root())?;
            fpga::lint(&cfg)?;
            fpga::blocks(&cfg, &[], &fpga::reports_dir())?;
            fpga::board(&cfg, &[], &fpga::reports_dir())?;
            Ok(())
        }
    }
}
