//! `testbench bench --suite nvme-tcp`: PDU bytes per cycle of one RTL connection, header and
//! data digests on, as a fraction of the stream width, with a target that answers at once and
//! no idle cycles or backpressure: command capsules alone, then 4 KiB and 128 KiB reads
//! (C2HData PDUs of the hold buffer's size, written through a DMA side that never stalls), and
//! 4 KiB writes (in-capsule data, `nvme_tcp.in_capsule_bytes`) and 128 KiB writes (one R2T per
//! command, H2CData PDUs of MAXH2CDATA), the data read through a DMA side that never stalls. A benchmark to read, not a timed test.

use crate::cli::bench::Goals;
use crate::suites::nvme_tcp::rtl::{
    bench_capsules, bench_reads, bench_writes, BENCH_MAXH2CDATA, HOLD_BYTES, ICD_BYTES,
};

/// Runs the benchmark; returns the exit code (1 with `check` when a goal is missed).
pub fn run(check: bool) -> i32 {
    let mut goals = Goals::default();
    let mut run = || -> Result<(), String> {
        let (tx, rx, lanes) = bench_capsules(2000)?;
        println!("nvme-tcp, one connection, {lanes}-byte streams, digests on:");
        println!("  2000 commands without data: tx (CapsuleCmd + header digest) {tx:.3}, rx (CapsuleResp + header digest) {rx:.3} of the stream width (rx paced by the commands)");
        for (count, blocks, what) in [(400usize, 7u16, "4 KiB"), (24, 255, "128 KiB")] {
            let (_, rx, _) = bench_reads(count, blocks)?;
            let mark = goals.at_least(&format!("{what} reads rx"), rx, 0.95);
            println!(
                "  {count} reads of {what}: rx (C2HData of up to {HOLD_BYTES} bytes + CapsuleResp, digests on) {rx:.3} of the stream width (goal >= 0.95) {mark}"
            );
        }
        for (count, blocks, what) in [(400usize, 7u16, "4 KiB"), (24, 255, "128 KiB")] {
            let (tx, _, _) = bench_writes(count, blocks)?;
            let how = if 512 * (u32::from(blocks) + 1) <= ICD_BYTES {
                "CapsuleCmd with in-capsule data".to_string()
            } else {
                format!("CapsuleCmd + H2CData of up to MAXH2CDATA {BENCH_MAXH2CDATA} bytes")
            };
            let mark = goals.at_least(&format!("{what} writes tx"), tx, 0.95);
            println!(
                "  {count} writes of {what}: tx ({how}, digests on) {tx:.3} of the stream width (goal >= 0.95) {mark}"
            );
        }
        Ok(())
    };
    match run() {
        Ok(()) => goals.finish(check),
        Err(e) => {
            eprintln!("testbench: {e}");
            1
        }
    }
}
