//! `testbench bench --suite dma`: the DMA mover's throughput. For 4 KiB and 128 KiB transfers,
//! each direction, 100 cycles of host memory latency and no backpressure: bytes per cycle as a
//! fraction of the AXI data bus width (over a run of back-to-back transfers, from the first
//! segment accepted to the last completion), and the cycles from a segment accepted to its
//! first read request (AR). A benchmark to read, not a timed test.
//!
//! Then the whole engine (walker, mover, shared AR): the same transfers as PRP commands (4 KiB:
//! PRP1 alone; 128 KiB: PRP1 and a PRP list of 31 entries), memory page size 4 KiB, with the
//! bytes per cycle over the run (from the first command accepted to the last completion) and
//! the cycles from the first command accepted to the first read request (AR) and, for writes,
//! to the first write request (AW).

use crate::drivers::axi_mem::{AxiMemConfig, AxiMemSlave};
use crate::drivers::stream::{StreamSink, StreamSource};
use crate::models::dma_walker::Command;
use crate::rtl::DmaEngineTop as EngineTop;
use crate::rtl::DmaMoverTop as Top;
use crate::sim::Sim;
use crate::suites::dma::walker::CmdSource;

/// One measurement: (fraction of the bus, cycles from segment to first AR).
fn measure(write: bool, len: u64, count: u64) -> Result<(f64, Option<u64>), String> {
    let mut sim = Sim::<Top>::new();
    let bytes = u64::from(sim.signal("m_data_data_o").width() / 8);
    let seg = sim.add(StreamSource::new(
        &sim,
        "s_seg",
        &["tag", "write", "addr", "len", "bucket", "last", "status"],
        1,
        0,
    ));
    let sdata = sim.add(StreamSource::new(
        &sim,
        "s_data",
        &["data", "keep", "last", "tag"],
        2,
        0,
    ));
    let _mdata = sim.add(StreamSink::new(
        &sim,
        "m_data",
        &["data", "keep", "last", "tag"],
        3,
        0,
    ));
    let done = sim.add(StreamSink::new(&sim, "m_done", &["tag", "status"], 4, 0));
    let mem = sim.add(AxiMemSlave::new(
        &sim,
        "m_axi",
        AxiMemConfig {
            read_latency: 100..=100,
            write_latency: 100..=100,
            max_reads: 32,
            max_writes: 32,
            ..AxiMemConfig::default()
        },
    ));
    let arvalid = sim.signal("m_axi_arvalid_o");
    sim.reset(2);
    for i in 0..count {
        let addr = 0x1000_0000 + i * len;
        seg.borrow_mut()
            .push(&[i & 7, write as u64, addr, len, 0, 1, 0]);
        if write {
            let beats = len.div_ceil(bytes);
            for k in 0..beats {
                sdata
                    .borrow_mut()
                    .push(&[k, 0xff, (k + 1 == beats) as u64, i & 7]);
            }
        }
    }
    let start = sim.cycle();
    let mut first_ar = None;
    let mut first_seg = None;
    let limit = 200_000 + count * len;
    while done.borrow().received.len() < count as usize {
        if sim.cycle() - start > limit {
            return Err(format!("{count} transfers of {len} bytes did not complete"));
        }
        sim.step();
        if first_seg.is_none() {
            first_seg = seg.borrow().accepted.first().map(|a| a.0);
        }
        if first_ar.is_none() && arvalid.is_high() {
            first_ar = Some(sim.cycle());
        }
    }
    let t0 = first_seg.unwrap_or(start);
    let cycles = done.borrow().received.last().map_or(0, |d| d.0) - t0;
    let m = mem.borrow();
    if let Some(v) = m.violations.first() {
        return Err(format!("AXI protocol: {v}"));
    }
    let frac = (count * len) as f64 / cycles as f64 / bytes as f64;
    Ok((frac, first_ar.map(|a| a.saturating_sub(t0))))
}

/// One engine measurement: (fraction of the bus, cycles from command to first AR, to first AW).
#[allow(clippy::type_complexity)]
fn measure_engine(
    write: bool,
    len: u64,
    count: u64,
) -> Result<(f64, Option<u64>, Option<u64>), String> {
    let mut sim = Sim::<EngineTop>::new();
    let bytes = u64::from(sim.signal("m_data_data_o").width() / 8);
    let cmd = sim.add(CmdSource::new(&sim, 1, 0));
    let sdata = sim.add(StreamSource::new(
        &sim,
        "s_data",
        &["data", "keep", "last", "tag"],
        2,
        0,
    ));
    let _mdata = sim.add(StreamSink::new(
        &sim,
        "m_data",
        &["data", "keep", "last", "tag"],
        3,
        0,
    ));
    let done = sim.add(StreamSink::new(&sim, "m_done", &["tag", "status"], 4, 0));
    let mem = sim.add(AxiMemSlave::new(
        &sim,
        "m_axi",
        AxiMemConfig {
            read_latency: 100..=100,
            write_latency: 100..=100,
            max_reads: 32,
            max_writes: 32,
            ..AxiMemConfig::default()
        },
    ));
    let (cmd_valid, cmd_ready) = (sim.signal("s_cmd_valid_i"), sim.signal("s_cmd_ready_o"));
    let (arvalid, awvalid) = (sim.signal("m_axi_arvalid_o"), sim.signal("m_axi_awvalid_o"));
    sim.reset(2);
    for i in 0..count {
        let addr = 0x1000_0000 + i * len;
        let mut prp2 = 0;
        if len > 8192 {
            // A PRP list for the pages after the first.
            prp2 = 0x8000_0000 + i * 4096;
            for k in 1..len.div_ceil(4096) {
                mem.borrow_mut()
                    .mem
                    .write_u64(prp2 + 8 * (k - 1), addr + 4096 * k);
            }
        } else if len > 4096 {
            prp2 = addr + 4096;
        }
        let c = Command {
            tag: i & 7,
            write,
            sgl: false,
            dptr: u128::from(addr) | u128::from(prp2) << 64,
            len: len as u32,
            from: 0,
        };
        cmd.borrow_mut().queue.push_back((c, 0));
        if write {
            let beats = len.div_ceil(bytes);
            for k in 0..beats {
                sdata
                    .borrow_mut()
                    .push(&[k, 0xff, (k + 1 == beats) as u64, i & 7]);
            }
        }
    }
    let start = sim.cycle();
    let (mut t_cmd, mut t_ar, mut t_aw) = (None, None, None);
    let limit = 200_000 + count * len;
    while done.borrow().received.len() < count as usize {
        if sim.cycle() - start > limit {
            return Err(format!(
                "engine: {count} transfers of {len} bytes did not complete"
            ));
        }
        // Handshakes and requests as they stand at the coming edge.
        let now = Some(sim.cycle());
        if t_cmd.is_none() && cmd_valid.is_high() && cmd_ready.is_high() {
            t_cmd = now;
        }
        if t_ar.is_none() && arvalid.is_high() {
            t_ar = now;
        }
        if t_aw.is_none() && awvalid.is_high() {
            t_aw = now;
        }
        sim.step();
    }
    let t0 = t_cmd.unwrap_or(start);
    let cycles = done.borrow().received.last().map_or(0, |d| d.0) - t0;
    let m = mem.borrow();
    if let Some(v) = m.violations.first() {
        return Err(format!("engine: AXI protocol: {v}"));
    }
    if let Some((_, w)) = done.borrow().received.iter().find(|(_, w)| w[1] != 0) {
        return Err(format!(
            "engine: a transfer completed with status {:#x}",
            w[1]
        ));
    }
    let frac = (count * len) as f64 / cycles as f64 / bytes as f64;
    let since = |t: Option<u64>| t.map(|t| t.saturating_sub(t0));
    Ok((frac, since(t_ar), since(t_aw)))
}

/// Runs the benchmark; returns the exit code.
pub fn run() -> i32 {
    println!(
        "dma benchmark: {} ({} bytes per beat), 100 cycles of memory latency, no backpressure",
        <Top as crate::sim::Dut>::NAME,
        Top::PORTS
            .iter()
            .find(|p| p.0 == "m_axi_rdata_i")
            .map_or(0, |p| p.1 / 8)
    );
    println!("  transfer   direction          transfers  bus utilisation  segment -> first AR");
    let mut status = 0;
    for (len, count) in [(4096u64, 64u64), (131_072, 4)] {
        for write in [false, true] {
            let label = if write {
                "write (stream->mem)"
            } else {
                "read (mem->stream)"
            };
            match measure(write, len, count) {
                Ok((frac, ar)) => println!(
                    "  {:>6} B   {label:<19} {count:>8}  {frac:>15.3}  {}",
                    len,
                    ar.map_or("-".to_string(), |c| format!("{c} cycles"))
                ),
                Err(e) => {
                    eprintln!("testbench: dma benchmark: {e}");
                    status = 1;
                }
            }
        }
    }
    println!(
        "dma engine benchmark: {}, PRP commands, 4 KiB pages",
        <EngineTop as crate::sim::Dut>::NAME
    );
    println!(
        "  transfer   direction          transfers  bus utilisation  command -> first AR  command -> first AW"
    );
    let cycles = |c: Option<u64>| c.map_or("-".to_string(), |c| format!("{c} cycles"));
    for (len, count) in [(4096u64, 64u64), (131_072, 4)] {
        for write in [false, true] {
            let label = if write {
                "write (stream->mem)"
            } else {
                "read (mem->stream)"
            };
            match measure_engine(write, len, count) {
                Ok((frac, ar, aw)) => println!(
                    "  {len:>6} B   {label:<19} {count:>8}  {frac:>15.3}  {:>19}  {:>19}",
                    cycles(ar),
                    cycles(aw)
                ),
                Err(e) => {
                    eprintln!("testbench: dma benchmark: {e}");
                    status = 1;
                }
            }
        }
    }
    status
}
