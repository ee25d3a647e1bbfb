//! The `stdlib` suite: the standard blocks against their golden models.

pub mod arbiter;
pub mod async_fifo;
pub mod axi_interconnect;
pub mod axi_upsizer;
pub mod axil_decoder;
pub mod crc;
pub mod fifo;
pub mod fifo_ops;
pub mod interval_timer;
pub mod reset_sync;
pub mod skid_buffer;
pub mod sync_2ff;
pub mod token_bucket;
