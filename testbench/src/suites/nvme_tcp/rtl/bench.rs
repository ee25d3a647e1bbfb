//! `testbench bench --suite nvme-tcp` (for `cli/bench_nvme_tcp.rs`): PDU bytes per cycle of one
//! RTL connection on the connection properties' harness.

use super::*;

/// For `testbench bench --suite nvme-tcp`: one RTL connection, header digests on, no idle
/// cycles or backpressure, a target that answers at once, `count` data-less commands. Returns
/// (tx PDU bytes per cycle, rx PDU bytes per cycle), each over the window from the first to the
/// last byte of its direction after the connection is up, and the stream width in bytes.
pub fn bench_capsules(count: usize) -> Result<(f64, f64, usize), String> {
    bench(count, None)
}

/// For `testbench bench --suite nvme-tcp`: as [`bench_capsules`], with `count` reads of
/// `blocks` 512-byte blocks each, the target sending C2HData PDUs of the hold buffer's size
/// (the last of a command shorter) and a CapsuleResp per command, the payload written through
/// a DMA side without backpressure. Returns (tx, rx) PDU bytes per cycle and the stream width.
pub fn bench_reads(count: usize, blocks: u16) -> Result<(f64, f64, usize), String> {
    bench(count, Some((0x02, blocks)))
}

/// For `testbench bench --suite nvme-tcp`: as [`bench_reads`], with `count` writes: the target
/// sends one R2T for each command's whole data and MAXH2CDATA [`BENCH_MAXH2CDATA`], the host
/// answers with H2CData PDUs read through a DMA side without stalls. Returns (tx, rx) PDU
/// bytes per cycle and the stream width.
pub fn bench_writes(count: usize, blocks: u16) -> Result<(f64, f64, usize), String> {
    bench(count, Some((0x01, blocks)))
}

/// MAXH2CDATA of the benchmark's target.
pub const BENCH_MAXH2CDATA: u32 = 8192;

/// The benchmarks' scenario (here and `bench --suite tcp`): digests on, in-capsule data up to
/// [`ICD_BYTES`], MAXH2CDATA [`BENCH_MAXH2CDATA`], a well-behaved target sending C2HData of up
/// to `max_c2h` bytes and R2Ts of up to `max_r2t`, the commands `cmds`.
pub fn bench_scenario(
    max_c2h: u32,
    max_r2t: u32,
    cmds: Vec<super::super::scenario::Cmd>,
) -> Scenario {
    Scenario {
        hdgst: true,
        ddgst: true,
        hpda: 0,
        icd_max: ICD_BYTES,
        maxh2cdata: BENCH_MAXH2CDATA,
        cpda: 0,
        max_c2h,
        max_r2t,
        use_success: false,
        cmds,
        fault: None,
        chunk: (4096, 4096),
        seed: 1,
    }
}

pub(super) fn bench(
    count: usize,
    data_cmd: Option<(u8, u16)>,
) -> Result<(f64, f64, usize), String> {
    let read_blocks = data_cmd.map(|(_, b)| b);
    let sc = bench_scenario(4096, 4096, Vec::new());
    let mut tc = sc.target();
    tc.max_c2h = HOLD_BYTES;
    tc.max_r2t = 512 * (u32::from(read_blocks.unwrap_or(0)) + 1);
    tc.full_c2h = true;
    let mut target = Target::new(tc);
    let mut sim = Sim::<Top>::new();
    let h = sim.add(Harness::new(&sim, 1, (0, 0, 0, 0), 3));
    for i in 0..count {
        let s = match data_cmd {
            None => crate::models::nvme_tcp::sqe::rw(0x00, i as u16, 1, 0, 0, 0, 0),
            Some((opc, nlb)) => {
                let n = u64::from(nlb) + 1;
                let slba = (i as u64 * n) % (crate::suites::nvme_tcp::scenario::NS_BLOCKS / n * n);
                crate::models::nvme_tcp::sqe::rw(opc, i as u16, 1, slba, nlb, 0x1000, 0)
            }
        };
        h.borrow_mut().cmds.push_back(s);
        if let Some((0x01, nlb)) = data_cmd {
            let data = (0..512 * (usize::from(nlb) + 1)).map(|k| k as u8).collect();
            h.borrow_mut()
                .dma
                .as_mut()
                .unwrap()
                .host
                .insert(0x1000, data);
        }
    }
    sim.reset(3);
    let lanes = h.borrow().lanes;
    // Totals per direction, and the window in which the bytes after the ICReq/ICResp moved.
    let (mut tx_total, mut tx_first, mut tx_last) = (0u64, None, 0u64);
    let (mut rx_pushed, mut rx_done, mut rx_first, mut rx_last) = (0u64, 0u64, None, 0u64);
    while h.borrow().completions.len() < count {
        if sim.cycle() > 100_000 + 100 * count as u64 * u64::from(read_blocks.unwrap_or(0) + 1) {
            return Err("bench: the commands did not complete".into());
        }
        sim.step();
        let now = sim.cycle();
        let mut hb = h.borrow_mut();
        let queued: u64 = hb.beats.iter().map(|b| b.len() as u64).sum();
        let consumed = rx_pushed - queued;
        if consumed > rx_done && consumed > 128 {
            rx_first.get_or_insert(now);
            rx_last = now;
        }
        rx_done = consumed;
        if !hb.tx_bytes.is_empty() {
            let b = std::mem::take(&mut hb.tx_bytes);
            tx_total += b.len() as u64;
            if tx_total > 128 {
                tx_first.get_or_insert(now);
                tx_last = now;
            }
            target.receive(&b);
        }
        while target.step() {}
        let chunk = target.take(usize::MAX);
        rx_pushed += chunk.len() as u64;
        // A packed stream: top up the last queued beat (not the one on the bus) first.
        let mut rest = &chunk[..];
        if hb.beats.len() > 1 {
            let last = hb.beats.back_mut().unwrap();
            let n = (lanes - last.len()).min(rest.len());
            last.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
        }
        for piece in rest.chunks(lanes) {
            hb.beats.push_back(piece.to_vec());
        }
    }
    let (tx_bytes, rx_bytes) = (tx_total.saturating_sub(128), rx_done.saturating_sub(128));
    let frac = |bytes: u64, first: Option<u64>, last: u64| {
        first.map_or(0.0, |f| {
            bytes as f64 / ((last - f + 1) as f64 * lanes as f64)
        })
    };
    Ok((
        frac(tx_bytes, tx_first, tx_last),
        frac(rx_bytes, rx_first, rx_last),
        lanes,
    ))
}
