//! `testbench bench --suite nvme-tcp`: PDU bytes per cycle of one RTL connection, header and
//! data digests on, as a fraction of the stream width, with a target that answers at once and
//! no idle cycles or backpressure. Until the engine has data PDUs (C2HData, R2T, H2CData) the
//! stream is command capsules out (72-byte header + header digest) and response capsules in
//! (24 + 4 bytes); the 4 KiB and 128 KiB transfer figures need the data path. A
//! benchmark to read, not a timed test.

use crate::suites::nvme_tcp::rtl::bench_capsules;

/// Runs the benchmark; returns the exit code.
pub fn run() -> i32 {
    match bench_capsules(2000) {
        Ok((tx, rx, lanes)) => {
            println!("nvme-tcp, one connection, {lanes}-byte streams, digests on, 2000 commands without data:");
            println!("  tx (CapsuleCmd + header digest): {tx:.3} of the stream width");
            println!("  rx (CapsuleResp + header digest): {rx:.3} of the stream width (paced by the commands: one 28-byte response per capsule)");
            println!("  4 KiB and 128 KiB transfers: not measured (no data PDUs in the RTL yet)");
            0
        }
        Err(e) => {
            eprintln!("testbench: {e}");
            1
        }
    }
}
