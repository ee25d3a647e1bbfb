//! The `stdlib` suite: the standard blocks against their golden models.
//!
//! What lives here:
//!
//! - one file per block, named like its generator: `skid_buffer.rs`, `fifo.rs` (and `fifo_ops.rs`,
//!   a state machine), `arbiter.rs`, `interval_timer.rs`, `crc.rs`, `token_bucket.rs`,
//!   `axi_interconnect.rs`, `axi_upsizer.rs`, `axil_decoder.rs`, `async_fifo.rs`, `sync_2ff.rs`,
//!   `reset_sync.rs`

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
