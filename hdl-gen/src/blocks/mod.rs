//! Standard blocks, each a generator function built on the builder's public API. The golden
//! model of each block lives in `testbench/src/models/` and its property test in
//! `testbench/src/suites/`, under the same name.
//!
//! What lives here:
//!
//! - `skid_buffer.rs`: the ready/valid register slice
//! - `fifo.rs`: synchronous FIFOs (first-word fall-through and classic read port)
//! - `async_fifo.rs`, `sync_2ff.rs`, `reset_sync.rs`: the clock-domain crossings (the only declared
//!   crossings)
//! - `arbiter.rs`: round-robin and weighted round-robin arbiters with a locked grant
//! - `interval_timer.rs`: a tick counter that fires at a limit
//! - `crc.rs`: the parallel CRC (CRC-32, CRC-32C) over a byte stream
//! - `token_bucket.rs`: a rate limiter with rate and burst as inputs
//! - `axi_interconnect.rs`, `axi_upsizer.rs`, `axil_decoder.rs`: AXI4 masters onto one port, a
//!   narrow AXI4 master onto a wide bus, one AXI4-Lite port onto register blocks
//! - `chip_info.rs`: the chip identification and bring-up registers
//! - `uart.rs`, `uart_bridge.rs`: the bring-up UART and its byte protocol onto AXI4-Lite
//! - `ecp5.rs`: the ECP5 vendor primitives and their behavioural models

pub mod arbiter;
pub mod async_fifo;
pub mod axi_interconnect;
pub mod axi_upsizer;
pub mod axil_decoder;
pub mod chip_info;
pub mod crc;
pub mod ecp5;
pub mod fifo;
pub mod interval_timer;
pub mod reset_sync;
pub mod skid_buffer;
pub mod sync_2ff;
pub mod token_bucket;
pub mod uart;
pub mod uart_bridge;
