//! The NVMe front end (`nvme_ctrl`): the host's view end to end, against the golden model
//! `models::nvme`, with a Rust firmware model on the vendor CSRs and a Rust model of the rest
//! of the chip on `io_cmd` / `io_cpl`.

pub mod arbitration;
pub mod coalescing;
pub mod env;
pub mod queues;
