//! Suite `nvme-tcp`: the NVMe/TCP host side against the target model (`models::nvme_tcp_target`)
//! over the same byte streams, with random command mixes and sizes, random R2T and C2HData
//! sizes and orders, digests on and off, random byte-stream chunking, and a hostile target.
//!
//! What lives here:
//!
//! - `scenario.rs`: stimulus and outcome checks shared by the properties
//! - `model.rs`: `nvme_tcp_model[_hostile]`, host model against target
//! - `rtl/`: `nvme_tcp_conn[_hostile]`, `nvme_tcp_conn_dma_error`, `nvme_tcp_engine`, and the
//!   `EngineCase`/`EngineHarness` the `tcp-nvme` suite reuses
//!
//! `scenario.rs` generates the stimulus and checks an outcome (completions, host-memory writes,
//! the target's namespaces and what it received) against the target's decisions; the
//! properties differ in who plays the host: `model.rs` the reference host model.
//!
//! `regress --pcap FILE` records every case's connection as a TCP/IPv4 conversation on port
//! 4420 (see [`record`]).

pub mod model;
pub mod rtl;
pub mod scenario;

use crate::pcap::Pcap;
use std::path::Path;
use std::sync::Mutex;

/// The capture `regress --pcap` collects cases into, the next client port, and the number of
/// PDUs recorded.
static CAPTURE: Mutex<Option<(Pcap, u16, u64)>> = Mutex::new(None);

/// Starts collecting every case's conversation (for `regress --pcap`).
pub fn start_capture() {
    *CAPTURE.lock().unwrap() = Some((Pcap::new(), 0, 0));
}

/// Writes the collected capture to `path`; returns the number of frames and of PDUs.
pub fn save_capture(path: &Path) -> std::io::Result<(u64, u64)> {
    let guard = CAPTURE.lock().unwrap();
    match guard.as_ref() {
        Some((p, _, pdus)) => {
            p.save(path)?;
            Ok((p.frames(), *pdus))
        }
        None => Ok((0, 0)),
    }
}

/// Whether a capture is being collected.
pub fn capturing() -> bool {
    CAPTURE.lock().unwrap().is_some()
}

/// Appends a case's capture (its own `Pcap`, holding `pdus` whole PDUs) to the collected one.
pub fn record(case: &Pcap, pdus: usize) {
    if let Some((p, _, n)) = CAPTURE.lock().unwrap().as_mut() {
        p.append(case);
        *n += pdus as u64;
    }
}

/// A fresh client port for a recorded connection (40000 and up, wrapping).
pub fn next_port() -> u16 {
    let mut g = CAPTURE.lock().unwrap();
    match g.as_mut() {
        Some((_, n, _)) => {
            *n = n.wrapping_add(1);
            40000 + *n % 20000
        }
        None => 40000,
    }
}
