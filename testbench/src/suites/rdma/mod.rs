//! Suite `rdma`: the RoCEv2 engine (`roce_*`) against the NVMe/RDMA target model
//! (`models::roce_target`) over a lossy, hostile link.
//!
//! What lives here:
//!
//! - `engine/`: property `rdma` with its harness and `RefChip` (its files listed in
//!   `engine/mod.rs`)
//! - `cc.rs`: property `rdma_cc`, congestion control and RNR waits end to end
//! - `dcqcn.rs`: `rdma_dcqcn` and `rdma_dcqcn_recovery`, the DCQCN block alone
//! - `rnr.rs`: property `rdma_rnr`, the RNR waits exactly over the whole timer table
//!
//! `engine/` holds the property, its harness and the reference receiver (`RefChip`) that
//! predicts, frame by frame, what the engine must do with what it receives.
//!
//! `regress --pcap FILE` records every RoCEv2 frame of both directions as its end sent it
//! (before the link's faults) into one capture; `ci/roce_check.sh` dissects it with tshark and
//! checks every ICRC with scapy.

pub mod cc;
pub mod dcqcn;
pub mod engine;
pub mod rnr;

use crate::pcap::Pcap;
use std::path::Path;
use std::sync::Mutex;

/// The capture `regress --pcap` collects frames into.
static CAPTURE: Mutex<Option<Pcap>> = Mutex::new(None);

/// Starts collecting every case's frames (for `regress --pcap`).
pub fn start_capture() {
    *CAPTURE.lock().unwrap() = Some(Pcap::new());
}

/// Whether a capture is being collected.
pub fn capturing() -> bool {
    CAPTURE.lock().unwrap().is_some()
}

/// Appends a case's capture.
pub fn record(case: &Pcap) {
    if let Some(p) = CAPTURE.lock().unwrap().as_mut() {
        p.append(case);
    }
}

/// Writes the collected capture to `path`; returns the number of frames.
pub fn save_capture(path: &Path) -> std::io::Result<u64> {
    let guard = CAPTURE.lock().unwrap();
    match guard.as_ref() {
        Some(p) => {
            p.save(path)?;
            Ok(p.frames())
        }
        None => Ok(0),
    }
}
