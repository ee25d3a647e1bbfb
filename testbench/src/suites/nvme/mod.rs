//! The NVMe front end (`nvme_ctrl`): the host's view end to end, against the golden model
//! `models::nvme`, with a Rust firmware model on the vendor CSRs and a Rust model of the rest
//! of the chip on `io_cmd` / `io_cpl`.
//!
//! What lives here:
//!
//! - `env.rs`: the harness (host, firmware and backend models, the `Probe`)
//! - `queues/`: property `nvme_queues` (`host.rs`: the host's steps the other properties and
//!   suites share; `checks.rs`: the end-of-case checks)
//! - `arbitration.rs`: property `nvme_arbitration`
//! - `coalescing.rs`: property `nvme_coalescing`

pub mod arbitration;
pub mod coalescing;
pub mod env;
pub mod queues;
