//! Standard blocks, each a generator function built on the builder's public API. The golden
//! model of each block lives in `testbench/src/models/` and its property test in
//! `testbench/src/suites/`, under the same name.

pub mod arbiter;
pub mod async_fifo;
pub mod axi_interconnect;
pub mod axi_upsizer;
pub mod axil_decoder;
pub mod chip_info;
pub mod crc;
pub mod ecp5;
pub mod fifo;
pub mod frame_fifo;
pub mod interval_timer;
pub mod reset_sync;
pub mod skid_buffer;
pub mod sync_2ff;
pub mod token_bucket;
pub mod uart;
pub mod uart_bridge;
