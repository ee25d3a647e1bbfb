//! Golden reference models: plain Rust, transaction level, no knowledge of cycles.
//!
//! What lives here:
//!
//! - `skid_buffer.rs`, `fifo.rs`, `arbiter.rs`, `interval_timer.rs`, `crc.rs`, `token_bucket.rs`:
//!   the standard blocks
//! - `dma_walker.rs`, `dma_mover.rs`: the DMA engine's parts
//! - `nvme.rs`, `nvme_arb.rs`, `nvme_lat.rs`: the NVMe front end, its arbitration and coalescing,
//!   its latency histograms
//! - `qos.rs`: the QoS arbiter
//! - `roce.rs`, `roce_target.rs`, `roce_dcqcn.rs`: RoCEv2 frames, the NVMe/RDMA target, DCQCN
//! - `nvme_tcp.rs`, `nvme_tcp_target.rs`, `nvme_tcp_host.rs`: the NVMe/TCP PDU codec, target and
//!   host reference
//! - `tcp.rs`: frame-by-frame checks of the TCP/IP engine
//! - `eth.rs`: the RGMII MAC's 802.3 rules and the MDIO PHY
//! - `frame_mux.rs`: the chip's Ethernet frame mux

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
