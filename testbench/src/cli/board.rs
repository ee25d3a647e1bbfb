//! `testbench board --board <colorlight_i5|butterstick>`: the simulated bring-up board
//! (`crate::board` says what it holds). Prints one ready line on stdout once the core is out of
//! reset, exactly
//!
//! ```text
//! board ready: pty=<path> netns=<name> target=10.77.0.1:4420 chip_ip=10.77.0.2
//! ```
//!
//! (the contract with scripts and the host tool's tests), runs until SIGINT, SIGTERM or
//! `--seconds`, then prints a summary line.
//!
//! Exit codes: 0 the board ran and stopped; 2 it could not start (no Verilator or C++
//! compiler, not root, no /dev/net/tun, an unknown board), with what is missing.

use crate::board::{self, model, Options};
use std::path::PathBuf;

/// Arguments of `testbench board`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The board: colorlight_i5 or butterstick.
    #[arg(long)]
    pub board: String,
    /// Stop after this many seconds of wall time (else run until SIGINT or SIGTERM).
    #[arg(long)]
    pub seconds: Option<f64>,
    /// Write an FST waveform of the whole core here (large: for short runs).
    #[arg(long)]
    pub waves: Option<PathBuf>,
    /// Blocks of 512 bytes in namespace 1 of the NVMe/TCP target.
    #[arg(long, default_value_t = 2048)]
    pub blocks: u64,
    /// C++ optimization level of the model (0 to 3; each level is built and cached apart).
    #[arg(long, default_value_t = model::DEFAULT_OPT)]
    pub opt: u32,
}

/// Runs `testbench board`; returns the exit code.
pub fn run(args: &Args) -> i32 {
    if args.opt > 3 {
        eprintln!("board: --opt {}: 0 to 3", args.opt);
        return 2;
    }
    if args.blocks == 0 {
        eprintln!("board: --blocks 0: the target's namespace needs at least one block");
        return 2;
    }
    let opts = Options {
        board: args.board.clone(),
        seconds: args.seconds,
        waves: args.waves.clone(),
        blocks: args.blocks,
        opt: args.opt,
        cache: super::target_dir(&super::root()).join("board-sim"),
    };
    match board::run(&opts) {
        Ok(s) => {
            super::out(&s.to_string());
            0
        }
        Err(e) => {
            eprintln!("board: {e}");
            2
        }
    }
}
