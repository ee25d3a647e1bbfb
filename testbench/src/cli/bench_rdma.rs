//! `testbench bench --suite rdma`: the RoCEv2 engine's command path, measured through the
//! property's harness (every check of `suites::rdma` holds while it is measured): a lossless
//! link, no idle cycles or backpressure, a target that answers at once, Flush commands over
//! both QPs. Until the engine has its RDMA data path (READ responses, WRITEs through the DMA
//! engine) the 4 KiB and 128 KiB goodput figures cannot be measured. A benchmark to
//! read, not a timed test.

use crate::suites::rdma::engine::bench;

/// Runs the benchmark; returns the exit code.
pub fn run() -> i32 {
    let n = 2000;
    match bench(n) {
        Ok(s) => {
            let busy = s.tx_bytes as f64 / (s.tx_cycles * s.lanes) as f64;
            println!(
                "rdma, {n} Flush commands over two QPs, {}-byte stream, lossless link, target answering at once:",
                s.lanes
            );
            println!(
                "  io_cmd valid to the first byte on m_axis: {} cycles (load the frame, then stream it; the ICRC adds none)",
                s.cmd_to_wire
            );
            println!(
                "  transmit stream busy: {busy:.3} of its width ({} bytes of capsules and ACKs in {} cycles; one load cycle per frame)",
                s.tx_bytes, s.tx_cycles
            );
            println!(
                "  capsules per 1000 cycles: {:.1} ({} capsules, {} completions)",
                1000.0 * s.capsules as f64 / s.tx_cycles as f64,
                s.capsules,
                s.completions
            );
            println!("  4 KiB and 128 KiB read/write goodput: not measured (no RDMA data path in the RTL yet)");
            0
        }
        Err(e) => {
            eprintln!("testbench: {e}");
            1
        }
    }
}
