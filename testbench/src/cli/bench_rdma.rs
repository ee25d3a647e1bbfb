//! `testbench bench --suite rdma`: the RoCEv2 engine measured through the property's harness
//! (every check of `suites::rdma` holds while it is measured, host memory included): a lossless
//! link, no idle cycles or backpressure, a target that answers at once, commands over both QPs.
//!
//! - The command path: Flush commands, io_cmd to the first byte on the wire, the transmit
//!   stream's use.
//! - Host reads: 4 KiB and 128 KiB Reads at path MTU 1024 and 4096, the target moving the data
//!   by RDMA WRITE. Counted from the first beat of the first WRITE frame to the last beat of the
//!   last (every byte of every Read: the total must be `count * bytes`). Goodput is the WRITE
//!   payload over the receive stream's raw rate (8 bytes a cycle), and over the wire-format
//!   limit: the payload's share of the frame bytes that went by in that span (per WRITE
//!   Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4, RETH 16 on a First/Only; and the 74-byte
//!   response capsules and any other frame between them), that is the goodput of a stream
//!   that carries those frames back to back with no idle beat. The fraction of the limit is
//!   the receive stream's busy share.
//! - Host writes: 4 KiB and 128 KiB Writes at path MTU 1024 and 4096, the target fetching the
//!   data by RDMA READ (each Write's window in one to three READs) and the engine streaming
//!   READ responses from host memory. Counted from the first beat of the first READ response
//!   frame to the last beat of the last (the total must be `count * bytes`). Goodput is the READ
//!   response payload over the transmit stream's raw rate, and over the wire-format limit: the
//!   payload's share of the frame bytes the engine sent meanwhile (READ response headers, AETH,
//!   pad, ICRC, capsules and ACKs).
//! - In-capsule data: Writes of 512 bytes, 2 KiB and 3.5 KiB at path MTU 4096 (each capsule
//!   carries its data: `roce.in_capsule_bytes` permitting, see the `in-capsule` count), side by
//!   side with the same Writes at MTU 2048 or 1024 where they do not fit one SEND Only and the
//!   target fetches them by RDMA READ. Measured as the host writes (the data after the SQE is
//!   the payload, the capsule's other 122 bytes overhead), plus Writes per 1000 cycles over
//!   that span, and the latency of one Write alone (io_cmd valid to its io_cpl, through the
//!   harness's link and a target answering at once: the RDMA READ round trip saved).
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
    println!("  wire-format limit: payload / frame bytes of the frames in the span (Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 per WRITE, RETH 16 on First/Only, 74-byte response capsules), no FCS, preamble or gap on this stream");
    for (bytes, count) in [(4096usize, 64usize), (128 * 1024, 8)] {
        for (mtu, code) in [(1024, 3u8), (4096, 5)] {
            if let Err(e) = read_row(bytes, count, mtu, code) {
                eprintln!("testbench: {} KiB reads at MTU {mtu}: {e}", bytes / 1024);
                return 1;
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
    let sizes = [(4096usize, 64usize, 3u8), (128 * 1024, 8, 3)];
    let small = [(512usize, 128usize, 2u8), (2048, 128, 4), (3584, 64, 4)];
    for (i, &(bytes, count, low)) in sizes.iter().chain(&small).enumerate() {
        if i == sizes.len() {
            println!("in-capsule data: small Writes at MTU 4096 (in the capsule) beside a smaller MTU (fetched by RDMA READ):");
        }
        for code in [low, 5] {
            let mtu = 128usize << code;
            let alone = if i < sizes.len() {
                Ok(None)
            } else {
                bench_writes(1, bytes, code).map(|r| Some(r.cmd_to_cpl))
            };
            match bench_writes(count, bytes, code)
                .and_then(|r| write_row(bytes, count, mtu, &r))
                .and(alone)
            {
                Ok(None) => {}
                Ok(Some(c)) => println!("      one Write alone: io_cmd valid to io_cpl {c} cycles"),
                Err(e) => {
                    eprintln!("testbench: {bytes}-byte writes at MTU {mtu}: {e}");
                    return 1;
                }
            }
        }
    }
    0
}

/// One host-read row: `count` Reads of `bytes` at path MTU `mtu` (code `code`).
fn read_row(bytes: usize, count: usize, mtu: usize, code: u8) -> Result<(), String> {
    let r = bench_reads(count, bytes, code)?;
    let total = (bytes * count) as u64;
    if r.rd_payload != total {
        return Err(format!(
            "WRITE payload {} bytes, the Reads asked for {total}",
            r.rd_payload
        ));
    }
    let raw = r.rd_payload as f64 / (r.rd_cycles * r.lanes) as f64;
    let limit = r.rd_payload as f64 / r.rd_wire as f64;
    println!(
        "  {:>3} KiB reads x{count:<2} MTU {mtu}: goodput {raw:.3} of the stream, wire-format limit {limit:.3}, {:.3} of the limit",
        bytes / 1024,
        raw / limit,
    );
    println!(
        "      {} payload bytes ({count} x {bytes}) in {} frame bytes ({} WRITEs, {} other frames) in {} cycles; io_cmd valid to the first byte on m_axis: {} cycles",
        r.rd_payload,
        r.rd_wire,
        r.rd_write_frames,
        r.rd_frames - r.rd_write_frames,
        r.rd_cycles,
        r.cmd_to_wire
    );
    Ok(())
}

/// One host-write row: `count` Writes of `bytes` at path MTU `mtu`, measured in `r`.
fn write_row(bytes: usize, count: usize, mtu: usize, r: &Stats) -> Result<(), String> {
    let total = (bytes * count) as u64;
    if r.wr_payload != total {
        return Err(format!(
            "READ response payload {} bytes, the Writes asked for {total}",
            r.wr_payload
        ));
    }
    let raw = r.wr_payload as f64 / (r.wr_cycles * r.lanes) as f64;
    let limit = r.wr_payload as f64 / r.wr_wire as f64;
    let size = if bytes.is_multiple_of(1024) {
        format!("{:>3} KiB", bytes / 1024)
    } else {
        format!("{bytes} B")
    };
    println!(
        "  {size} writes x{count:<3} MTU {mtu}: goodput {raw:.3} of the stream, wire-format limit {limit:.3}, {:.3} of the limit; {:.2} writes per 1000 cycles, {} in-capsule ({} payload bytes in {} frame bytes in {} cycles)",
        raw / limit,
        1000.0 * count as f64 / r.wr_cycles as f64,
        r.icd_capsules,
        r.wr_payload,
        r.wr_wire,
        r.wr_cycles
    );
    Ok(())
}
