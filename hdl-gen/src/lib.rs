//! `hdl-gen`: the chip's generators (standard blocks and chip blocks), its configuration, and the
//! commands behind the `hdl-gen` CLI. The IR, checks and emitter are in `hdl-builder`; this crate
//! only uses its public API.

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
