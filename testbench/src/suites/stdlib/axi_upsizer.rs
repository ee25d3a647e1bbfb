//! Property `axi_upsizer`: a random narrow AXI4 master (the interconnect property's
//! [`Master`] BFM on `s_axi_*`) reaches wide host memory (an [`AxiMemSlave`] with latency,
//! reordering across IDs, backpressure and injected errors) through the upsizer.
//!
//! The master keeps the narrow side's contract (INCR bursts of full narrow beats at aligned
//! addresses, never across 4 KiB) and AXI's rules (stable payloads, W before, with or after
//! AW, random gaps, `rready`/`bready` withheld), with a few IDs and a byte image of its region.
//! Host memory errors cover whole wide beats (an IOMMU or a memory hole has at least that
//! granule), so a narrow burst is in error exactly when the wide burst carrying it is.
//!
//! Checks:
//! - every narrow R beat with its burst's ID, in per-ID order, the image's bytes (zeros and the
//!   error for a burst in an error range), `rlast` on the last beat only; every B with its
//!   burst's ID and response (the [`Master`]'s checks);
//! - after the run, the region in memory equals the image byte for byte (each narrow beat's
//!   strobes kept, nothing written in the lanes a wide beat carries around the burst);
//! - on `m_axi`: every AR and AW is INCR, full wide beats, aligned to the wide beat, ID 0;
//!   every W burst is the narrow burst packed (the n-th wide burst carries the n-th narrow
//!   burst's beats in its lanes with their strobes, strobes zero elsewhere; the data of bytes
//!   not strobed is free, as AXI says); once a W burst's first beat is
//!   offered, `wvalid` stays up until its WLAST (no trickle at the narrow rate), and an AW is
//!   offered only with a W beat there (what the interconnect asks of its masters); the slave
//!   saw no protocol breach.

use super::axi_interconnect::{
    master_in, region_base, Burst, ErrRange, Master, MasterIn, WBeat, REGION,
};
use crate::drivers::axi_mem::{AxiMemConfig, AxiMemSlave};
use crate::drivers::{get_bytes, Dir, Ports, Resp};
use crate::prop::Property;
use crate::rng::Rng;
use crate::rtl::AxiUpsizerTop as Dut;
use crate::sim::{Component, Signal, Sim};
use proptest::prelude::*;
use std::path::Path;

/// Generated stimulus.
#[derive(Debug, Clone)]
pub struct Input {
    master: MasterIn,
    /// Slave: AR, AW, W stall percent, R and B idle percent.
    stalls: [u8; 5],
    reorder: bool,
    /// An error range (dir: 0 both, 1 read, 2 write; first wide beat; wide beats; DECERR).
    error: Option<(u8, u16, u16, bool)>,
    seed: u64,
}

/// See the module documentation.
pub struct AxiUpsizerProp;

impl Property for AxiUpsizerProp {
    type Input = Input;
    const NAME: &'static str = "axi_upsizer";

    fn strategy() -> BoxedStrategy<Input> {
        any::<bool>()
            .prop_flat_map(move |saturate| {
                (
                    master_in(saturate),
                    prop::array::uniform5(if saturate { 0u8..1 } else { 0u8..60 }),
                    any::<bool>(),
                    prop::option::weighted(0.3, (0u8..3, any::<u16>(), 1u16..16, any::<bool>())),
                    any::<u64>(),
                )
            })
            .prop_map(|(master, stalls, reorder, error, seed)| Input {
                master,
                stalls,
                reorder,
                error,
                seed,
            })
            .boxed()
    }

    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        let mut sim = Sim::<Dut>::maybe_waves(waves);
        let nb = sim.port("s_axi_rdata_o").width() / 8;
        let wb = sim.port("m_axi_rdata_i").width() / 8;
        let id_width = sim.port("s_axi_arid_i").width();
        let s = input.stalls;
        let mem = sim.add(AxiMemSlave::new(
            &sim,
            "m_axi",
            AxiMemConfig {
                seed: input.seed,
                read_latency: 1..=12,
                write_latency: 0..=6,
                ar_stall: s[0],
                aw_stall: s[1],
                w_stall: s[2],
                r_idle: s[3],
                b_idle: s[4],
                max_reads: 16,
                max_writes: 16,
                reorder: input.reorder,
                interleave: input.reorder,
            },
        ));
        let mut fill = Rng::new(input.seed ^ 0x5eed);
        let mut image = vec![0u8; REGION as usize];
        image.iter_mut().for_each(|b| *b = fill.next_u64() as u8);
        mem.borrow_mut().mem.write(region_base(0), &image);
        let err = input.error.map(|(dir, first, beats, dec)| {
            let w = u64::from(wb);
            let lo = region_base(0) + (u64::from(first) * w) % REGION;
            let hi = (lo + u64::from(beats) * w).min(region_base(0) + REGION);
            let dir = match dir {
                0 => None,
                1 => Some(Dir::Read),
                _ => Some(Dir::Write),
            };
            let resp = if dec { Resp::DecErr } else { Resp::SlvErr };
            mem.borrow_mut().inject_error(dir, lo..hi, resp);
            ErrRange { dir, lo, hi, resp }
        });
        let ops = input
            .master
            .ops
            .iter()
            .map(|o| Burst::new(o, 0, nb, id_width))
            .collect();
        let master = sim.add(Master::new(
            &sim,
            "s_axi_",
            0,
            &input.master,
            ops,
            image,
            err,
            nb,
            input.seed.wrapping_add(7919),
        ));
        let mon = sim.add(Monitor::new(&sim, wb));
        sim.reset(2);

        let beats: u64 = input.master.ops.iter().map(|o| u64::from(o.len) + 1).sum();
        let limit = 3_000 + beats * 60;
        let start = sim.cycle();
        const QUIET: u64 = 1_000;
        let hs: Vec<(Signal, Signal)> = [
            ("m_axi_arvalid_o", "m_axi_arready_i"),
            ("m_axi_awvalid_o", "m_axi_awready_i"),
            ("m_axi_wvalid_o", "m_axi_wready_i"),
            ("m_axi_rvalid_i", "m_axi_rready_o"),
            ("m_axi_bvalid_i", "m_axi_bready_o"),
            ("s_axi_arvalid_i", "s_axi_arready_o"),
            ("s_axi_awvalid_i", "s_axi_awready_o"),
            ("s_axi_wvalid_i", "s_axi_wready_o"),
            ("s_axi_rvalid_o", "s_axi_rready_i"),
            ("s_axi_bvalid_o", "s_axi_bready_i"),
        ]
        .iter()
        .map(|(v, r)| (sim.signal(v), sim.signal(r)))
        .collect();
        let mut last_move = start;
        loop {
            sim.step();
            if hs.iter().any(|(v, r)| v.is_high() && r.is_high()) {
                last_move = sim.cycle();
            }
            if let Some(e) = master.borrow().errors.first() {
                return Err(e.clone());
            }
            if let Some(e) = mon.borrow().errors.first() {
                return Err(e.clone());
            }
            if master.borrow().idle() {
                break;
            }
            if sim.cycle() - start > limit || sim.cycle() - last_move > QUIET {
                return Err(format!(
                    "hang after {} cycles ({} without a handshake; budget {limit}): {}",
                    sim.cycle() - start,
                    sim.cycle() - last_move,
                    master.borrow().state()
                ));
            }
        }
        sim.run(20);
        if let Some(e) = master.borrow().errors.first() {
            return Err(e.clone());
        }
        if let Some(e) = mon.borrow().errors.first() {
            return Err(e.clone());
        }
        let mem_b = mem.borrow();
        if let Some(v) = mem_b.violations.first() {
            return Err(format!("slave saw a protocol breach: {v}"));
        }
        let m = master.borrow();
        let got = mem_b.mem.read_vec(region_base(0), REGION as usize);
        if let Some(a) = (0..got.len()).find(|&a| got[a] != m.image[a]) {
            return Err(format!(
                "memory at {:#x}: {:#04x}, the image says {:#04x}",
                region_base(0) + a as u64,
                got[a],
                m.image[a]
            ));
        }
        // Each wide W burst is its narrow burst packed into lanes.
        let mon = mon.borrow();
        if mon.w_bursts.len() != m.sent_w.len() || mon.aws.len() != m.sent_w.len() {
            return Err(format!(
                "the master sent {} W bursts; m_axi saw {} AW and {} W bursts",
                m.sent_w.len(),
                mon.aws.len(),
                mon.w_bursts.len()
            ));
        }
        for (j, ((addr, len), (wide, narrow))) in mon
            .aws
            .iter()
            .zip(mon.w_bursts.iter().zip(&m.sent_w))
            .enumerate()
        {
            let want = pack(narrow, m.sent_addr(j), *addr, nb as usize, wb as usize);
            // Strobes exact; data only where strobed (AXI leaves the other bytes free).
            let same = |(a, b): (&WBeat, &WBeat)| {
                a.1 == b.1 && (0..a.0.len()).all(|k| a.1 >> k & 1 == 0 || a.0[k] == b.0[k])
            };
            if wide.len() != *len as usize + 1
                || wide.len() != want.len()
                || !wide.iter().zip(&want).all(same)
            {
                return Err(format!(
                    "wide W burst {j} (AW at {addr:#x}, {} beats): {} beats {wide:x?}; the narrow burst packed: {want:x?}",
                    len + 1,
                    wide.len()
                ));
            }
        }
        Ok(())
    }
}

/// The narrow W beats `narrow` of a burst at `addr`, placed in wide beats from `wide_addr`:
/// each beat in its lane, strobes zero in lanes the burst does not cover (data zero there, but
/// the check compares data only where strobed).
fn pack(narrow: &[WBeat], addr: u64, wide_addr: u64, nb: usize, wb: usize) -> Vec<WBeat> {
    let mut out: Vec<WBeat> = Vec::new();
    for (k, (data, strb)) in narrow.iter().enumerate() {
        let at = (addr - wide_addr) as usize + k * nb;
        let (beat, lane_byte) = (at / wb, at % wb);
        while out.len() <= beat {
            out.push((vec![0; wb], 0));
        }
        let w = &mut out[beat];
        w.0[lane_byte..lane_byte + nb].copy_from_slice(data);
        w.1 |= strb << lane_byte;
    }
    out
}

/// One address channel of `m_axi` (`ar` or `aw`).
struct AddrPorts {
    valid: Signal,
    ready: Signal,
    addr: Signal,
    len: Signal,
    size: Signal,
    burst: Signal,
    id: Signal,
}

impl AddrPorts {
    fn bind(p: &impl Ports, ch: &str) -> AddrPorts {
        let s = |n: &str, dir: &str| p.port(&format!("m_axi_{ch}{n}_{dir}"));
        AddrPorts {
            valid: s("valid", "o"),
            ready: s("ready", "i"),
            addr: s("addr", "o"),
            len: s("len", "o"),
            size: s("size", "o"),
            burst: s("burst", "o"),
            id: s("id", "o"),
        }
    }

    fn fired(&self) -> bool {
        self.valid.is_high() && self.ready.is_high()
    }
}

/// Watches `m_axi`: the shape of every AR and AW, the W bursts as they leave, and that a W
/// burst, once started, is never paused by the upsizer.
struct Monitor {
    wb: u32,
    ar: AddrPorts,
    aw: AddrPorts,
    wvalid: Signal,
    wready: Signal,
    wdata: Signal,
    wstrb: Signal,
    wlast: Signal,
    /// (address, AWLEN) of each AW, in order.
    aws: Vec<(u64, u32)>,
    w_bursts: Vec<Vec<WBeat>>,
    cur: Vec<WBeat>,
    /// A W burst's first beat was offered and its WLAST has not been taken.
    in_burst: bool,
    buf: Vec<u8>,
    errors: Vec<String>,
}

impl Monitor {
    fn new(p: &impl Ports, wb: u32) -> Monitor {
        let m = |s: &str| p.port(&format!("m_axi_{s}"));
        Monitor {
            wb,
            ar: AddrPorts::bind(p, "ar"),
            aw: AddrPorts::bind(p, "aw"),
            wvalid: m("wvalid_o"),
            wready: m("wready_i"),
            wdata: m("wdata_o"),
            wstrb: m("wstrb_o"),
            wlast: m("wlast_o"),
            aws: Vec::new(),
            w_bursts: Vec::new(),
            cur: Vec::new(),
            in_burst: false,
            buf: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// Checks a handshaken AR or AW: INCR, full wide beats, aligned, ID 0.
    fn shape(&mut self, cycle: u64, what: &str, write: bool) {
        let c = if write { &self.aw } else { &self.ar };
        let (addr, size, burst, id) = (c.addr.get(), c.size.get(), c.burst.get(), c.id.get());
        let lg = u64::from(self.wb.trailing_zeros());
        if size != lg || burst != 1 || id != 0 || !addr.is_multiple_of(u64::from(self.wb)) {
            self.errors.push(format!(
                "cycle {cycle}: {what} on m_axi at {addr:#x}: size {size}, burst {burst}, ID {id}; expected size {lg} (full {}-byte beats), INCR, ID 0, aligned",
                self.wb
            ));
        }
    }
}

impl Component for Monitor {
    fn sample(&mut self, cycle: u64) {
        let (wv, wr) = (self.wvalid.is_high(), self.wready.is_high());
        if self.ar.fired() {
            self.shape(cycle, "AR", false);
        }
        // The AW of a burst whose W beats have not all left comes with a W beat (a slave may
        // take the W beats first, as this one does).
        if self.aw.valid.is_high() && !wv && self.w_bursts.len() <= self.aws.len() {
            self.errors.push(format!(
                "cycle {cycle}: AW {} offered on m_axi without a W beat (the interconnect waits for one)",
                self.aws.len()
            ));
        }
        if self.aw.fired() {
            self.shape(cycle, "AW", true);
            self.aws
                .push((self.aw.addr.get(), self.aw.len.get() as u32));
        }
        if self.in_burst && !wv {
            self.errors.push(format!(
                "cycle {cycle}: wvalid fell inside W burst {} on m_axi (a started burst must not pause)",
                self.w_bursts.len()
            ));
        }
        if wv && wr {
            get_bytes(&self.wdata, &mut self.buf);
            self.cur.push((self.buf.clone(), self.wstrb.get()));
            let last = self.wlast.is_high();
            if last {
                self.w_bursts.push(std::mem::take(&mut self.cur));
            }
            self.in_burst = !last;
        } else if wv {
            self.in_burst = true;
        }
    }

    fn drive(&mut self, _cycle: u64) {}
}
