//! `hdl-gen`: the chip's generators (standard blocks and chip blocks), its configuration, and the
//! commands behind the `hdl-gen` CLI. The IR, checks and emitter are in `hdl-builder`; this crate
//! only uses its public API.
//!
//! What lives here:
//!
//! - `config.rs`: the configuration schema and its checks
//! - `blocks/`: standard blocks (FIFOs, arbiters, CRC, AXI plumbing, CDC, UART, ECP5 primitives)
//! - `chip/`: the chip top and the list of everything a configuration emits
//! - `nvme/`, `qos/`, `dma/`, `roce/`, `nvme_tcp/`, `tcp/`, `eth/`: the engines, each with its
//!   contract in its `mod.rs`
//! - `boards/`: the bring-up boards (core, top, pin constraints)
//! - `lint.rs`, `fpga/`: Verilator/Yosys lint and the ECP5 flow
//! - `util.rs`: what the tool's layers share: `Failure`, the repository's paths, `write_tree`
//! - `cli/`: the `hdl-gen` command line, the top layer; nothing imports from it

pub mod blocks;
pub mod boards;
pub mod chip;
pub mod cli;
pub mod config;
pub mod dma;
pub mod eth;
pub mod fpga;
pub mod lint;
pub mod nvme;
pub mod nvme_tcp;
pub mod qos;
pub mod roce;
pub mod tcp;
pub mod util;
