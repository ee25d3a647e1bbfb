use clap::Parser;
use testbench::cli::{Cli, Command};

fn main() {
    let cli = Cli::parse();
    let code = match &cli.command {
        Command::Regress(args) => testbench::cli::regress::run(args),
        Command::Bench { .. } => {
            eprintln!("testbench bench: not available yet");
            2
        }
    };
    std::process::exit(code);
}
