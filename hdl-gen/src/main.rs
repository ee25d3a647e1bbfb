//! `hdl-gen`: parses the command line, runs it (`hdl_gen::cli`), and exits with its code.

use clap::Parser;
use tracing_subscriber::EnvFilter;

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .init();
    if let Err(f) = hdl_gen::cli::run(hdl_gen::cli::Cli::parse()) {
        eprintln!("hdl-gen: {}", f.message);
        std::process::exit(f.code);
    }
}
