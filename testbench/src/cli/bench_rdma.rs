//! `testbench bench --suite rdma`: the RoCEv2 engine measured through the property's harness
//! (every check of `suites::rdma` holds while it is measured, host memory included): a lossless
//! link, no idle cycles or backpressure, a target that answers at once, commands over both QPs.
//!
//! - The command path: Flush commands, io_cmd to the first byte on the wire, the transmit
//!   stream's use.
//! - Host reads: 4 KiB and 128 KiB Reads at path MTU 1024 and 4096, the target moving the data
//!   by RDMA WRITE. Goodput is the WRITE payload over the receive stream's raw rate (8 bytes a
//!   cycle), and over the wire-format limit: the payload's share of the frame bytes that went
//!   by (Ethernet, IPv4, UDP, BTH, RETH, ICRC of the WRITEs, and the response capsules).
//! - Host writes: 4 KiB and 128 KiB Writes at path MTU 1024 and 4096, the target fetching the
//!   data by RDMA READ (each Write's window in one to three READs) and the engine streaming
//!   READ responses from host memory. Goodput is the READ response payload over the transmit
//!   stream's raw rate, and over the wire-format limit: the payload's share of the frame bytes
//!   the engine sent meanwhile (READ response headers, AETH, pad, ICRC, capsules and ACKs).
//!
//! A benchmark to read, not a timed test.

use crate::suites::rdma::engine::{bench, bench_reads, bench_writes, Stats};

/// Runs the benchmark; returns the exit code.
pub fn run() -> i32 {
    let n = 2000;
    let s = match bench(n) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("testbench: {e}");
            return 1;
        }
    };
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
    println!("host reads (RDMA WRITE into host memory through the DMA engine), over two QPs:");
    for (bytes, count) in [(4096usize, 64usize), (128 * 1024, 8)] {
        for (mtu, code) in [(1024, 3u8), (4096, 5)] {
            match bench_reads(count, bytes, code) {
                Ok(r) => {
                    let raw = r.rd_payload as f64 / (r.rd_cycles * r.lanes) as f64;
                    let limit = r.rd_payload as f64 / r.rd_wire as f64;
                    println!(
                        "  {:>3} KiB reads x{count:<2} MTU {mtu}: goodput {raw:.3} of the stream, wire-format limit {limit:.3}, {:.3} of the limit ({} payload bytes in {} cycles)",
                        bytes / 1024,
                        raw / limit,
                        r.rd_payload,
                        r.rd_cycles
                    );
                }
                Err(e) => {
                    eprintln!("testbench: {} KiB reads at MTU {mtu}: {e}", bytes / 1024);
                    return 1;
                }
            }
        }
    }
    writes()
}

/// The host write rows: READ responses streamed from host memory.
fn writes() -> i32 {
    println!(
        "host writes (RDMA READ responses from host memory through the DMA engine), over two QPs:"
    );
    for (bytes, count) in [(4096usize, 64usize), (128 * 1024, 8)] {
        for (mtu, code) in [(1024, 3u8), (4096, 5)] {
            match bench_writes(count, bytes, code) {
                Ok(r) => write_row(bytes, count, mtu, &r),
                Err(e) => {
                    eprintln!("testbench: {} KiB writes at MTU {mtu}: {e}", bytes / 1024);
                    return 1;
                }
            }
        }
    }
    0
}

fn write_row(bytes: usize, count: usize, mtu: usize, r: &Stats) {
    let raw = r.wr_payload as f64 / (r.wr_cycles * r.lanes) as f64;
    let limit = r.wr_payload as f64 / r.wr_wire as f64;
    println!(
        "  {:>3} KiB writes x{count:<2} MTU {mtu}: goodput {raw:.3} of the stream, wire-format limit {limit:.3}, {:.3} of the limit ({} payload bytes in {} cycles)",
        bytes / 1024,
        raw / limit,
        r.wr_payload,
        r.wr_cycles
    );
}
