//! The NVMe front end (`nvme_ctrl`): the host's view end to end, against the golden model
//! `models::nvme`, with a Rust firmware model on the vendor CSRs and a Rust model of the rest
//! of the chip on `io_cmd` / `io_cpl`.
//!
//! What lives here:
//!
//! - `env.rs`: the harness (host, firmware and backend models, the `Probe`)
//! - `queues.rs`: property `nvme_queues`
//! - `arbitration.rs`: property `nvme_arbitration`
//! - `coalescing.rs`: property `nvme_coalescing`

pub mod arbitration;
pub mod coalescing;
pub mod env;
pub mod queues;
