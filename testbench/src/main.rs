//! `testbench`: parses the command line and runs the subcommand (`testbench::cli`).

use clap::Parser;
use testbench::cli::{Cli, Command};
use tracing_subscriber::EnvFilter;

fn main() {
    // Diagnostics through `tracing`, filtered by RUST_LOG (as hdl-gen): e.g.
    // `RUST_LOG=testbench::suites::chip=trace` for the chip suite's per-case and per-frame
    // lines. Results and failures are printed, not logged.
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .without_time()
        .init();
    let cli = Cli::parse();
    let code = match &cli.command {
        Command::Regress(args) => testbench::cli::regress::run(args),
        Command::Mutants(args) => testbench::cli::mutants::run(args),
        Command::Mutate(args) => testbench::cli::mutate::run(args),
        Command::Coverage(args) => testbench::cli::coverage::run(args),
        Command::Fio(args) => testbench::cli::fio::run(args),
        Command::Nbd(args) => testbench::cli::nbd::run(args),
        Command::TcpLinux(args) => testbench::cli::tcp_linux::run(args),
        Command::Board(args) => testbench::cli::board::run(args),
        Command::Bench {
            suite,
            cycles,
            no_cocotb,
            venv,
            check,
        } => testbench::cli::bench::run(suite, *cycles, !*no_cocotb, venv.as_deref(), *check),
    };
    std::process::exit(code);
}
