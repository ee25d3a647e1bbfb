//! Golden reference models: plain Rust, transaction level, no knowledge of cycles.

pub mod arbiter;
pub mod crc;
pub mod dma_mover;
pub mod dma_walker;
pub mod eth;
pub mod fifo;
pub mod frame_mux;
pub mod interval_timer;
pub mod nvme;
pub mod nvme_arb;
pub mod nvme_lat;
pub mod nvme_tcp;
pub mod nvme_tcp_host;
pub mod nvme_tcp_target;
pub mod qos;
pub mod roce;
pub mod roce_dcqcn;
pub mod roce_target;
pub mod skid_buffer;
pub mod tcp;
pub mod token_bucket;
