//! The harness of the NVMe properties: the model under test with its bus models, the firmware
//! model (admin commands, queue CSRs, AER, the fallback I/O commands), the I/O backend (the
//! rest of the chip), and the host (rings in the AXI memory slave's memory, BAR0 through an
//! AXI4-Lite master).
//!
//! One file on purpose (about 1,300 lines): the harness's parts share one `Env` and its
//! firmware model; split, each part would reach back into all the others.

use crate::drivers::axi_mem::{AxiMemConfig, AxiMemSlave};
use crate::drivers::axil::{Axil, AxilConfig};
use crate::drivers::get_array;
use crate::drivers::stream::{StreamSink, StreamSource};
use crate::models::nvme::{
    admin_outcome, backend_result, fallback_outcome, mdts_blocks, status, Controller, Cqe,
};
use crate::rng::Rng;
use crate::rtl::regs::nvme_csr as csr;
use crate::rtl::NvmeCtrlTop as Top;
use crate::sim::{Component, Dut, Signal, Sim};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::ops::Range;
use std::path::Path;
use std::rc::Rc;

/// The rest of the chip: takes `io_cmd` (random backpressure), answers each command on
/// `io_cpl` after a random delay with [`backend_result`], and drives `sq_space_i`.
pub struct Backend {
    valid: Signal,
    ready: Signal,
    sqid: Signal,
    sqe: Signal,
    c_valid: Signal,
    c_ready: Signal,
    c_sqid: Signal,
    c_cid: Signal,
    c_status: Signal,
    c_dw0: Signal,
    space: Signal,
    rng: Rng,
    /// `io_cmd` backpressure, percent.
    pub stall: u8,
    delay: u32,
    space_percent: u8,
    pending: Vec<(u64, [u64; 4])>,
    current: Option<[u64; 4]>,
    /// Every command received: (cycle, sqid, sqe).
    pub received: Vec<(u64, u16, [u8; 64])>,
    ready_now: bool,
    /// `io_cmd_ready_i` held low while set (whatever the stall percent says).
    pub hold: bool,
    /// `sq_space_i` bits held low (bit `y - 1` for SQ y), on top of the random drops.
    pub space_mask: u64,
}

impl Backend {
    fn new<T: Dut>(sim: &Sim<T>, seed: u64, stall: u8, delay: u32, space_percent: u8) -> Backend {
        let s = |n: &str| sim.signal(n);
        Backend {
            valid: s("io_cmd_valid_o"),
            ready: s("io_cmd_ready_i"),
            sqid: s("io_cmd_sqid_o"),
            sqe: s("io_cmd_sqe_o"),
            c_valid: s("io_cpl_valid_i"),
            c_ready: s("io_cpl_ready_o"),
            c_sqid: s("io_cpl_sqid_i"),
            c_cid: s("io_cpl_cid_i"),
            c_status: s("io_cpl_status_i"),
            c_dw0: s("io_cpl_dw0_i"),
            space: s("sq_space_i"),
            rng: Rng::new(seed),
            stall,
            delay,
            space_percent,
            pending: Vec::new(),
            current: None,
            received: Vec::new(),
            ready_now: false,
            hold: false,
            space_mask: 0,
        }
    }
}

impl Component for Backend {
    fn sample(&mut self, cycle: u64) {
        if self.ready_now && self.valid.is_high() {
            let sqe = get_array::<64>(&self.sqe);
            let sqid = self.sqid.get() as u16;
            self.received.push((cycle, sqid, sqe));
            let (st, dw0) = backend_result(&sqe);
            let cid = u64::from(u16::from_le_bytes([sqe[2], sqe[3]]));
            let due = cycle + 1 + self.rng.below(u64::from(self.delay) + 1);
            self.pending
                .push((due, [u64::from(sqid), cid, u64::from(st), u64::from(dw0)]));
        }
        if self.current.is_some() && self.c_ready.is_high() {
            self.current = None;
        }
    }

    fn drive(&mut self, cycle: u64) {
        self.ready_now = !self.rng.chance(self.stall) && !self.hold;
        self.ready.set(self.ready_now as u64);
        if self.current.is_none() {
            if let Some(i) = self.pending.iter().position(|p| p.0 <= cycle) {
                self.current = Some(self.pending.remove(i).1);
            }
        }
        match self.current {
            Some(w) => {
                self.c_valid.set(1);
                self.c_sqid.set(w[0]);
                self.c_cid.set(w[1]);
                self.c_status.set(w[2]);
                self.c_dw0.set(w[3]);
            }
            None => self.c_valid.set(0),
        }
        let width = self.space.width();
        let mut bits = 0u64;
        for i in 0..width.min(64) {
            if !self.rng.chance(self.space_percent) {
                bits |= 1 << i;
            }
        }
        self.space.set(bits & !self.space_mask);
    }
}

/// Watches ports the arbitration and coalescing checks need, cycle by cycle.
pub struct Probe {
    bar_awvalid: Signal,
    bar_awready: Signal,
    bar_awaddr: Signal,
    bar_wdata: Signal,
    arvalid: Signal,
    araddr: Signal,
    arlen: Signal,
    awvalid: Signal,
    awready: Signal,
    awaddr: Signal,
    bvalid: Signal,
    bready: Signal,
    bresp: Signal,
    wvalid: Signal,
    wready: Signal,
    wdata: Signal,
    wlast: Signal,
    aw_was: bool,
    w_words: Vec<u32>,
    irq_valid: Signal,
    irq_ready: Signal,
    irq_vector: Signal,
    ar_was: bool,
    /// Doorbell writes accepted: (cycle, BAR0 address, value).
    pub doorbells: Vec<(u64, u64, u32)>,
    /// SQ read requests, by the cycle `arvalid` rose: (cycle, address, arlen).
    pub reads: Vec<(u64, u64, u32)>,
    /// CQE write requests accepted, in order: (cycle, address).
    pub writes: Vec<(u64, u64)>,
    /// Write responses taken, in order (the k-th answers the k-th write).
    pub responses: Vec<u64>,
    /// Per write response: OKAY.
    pub responses_ok: Vec<bool>,
    /// CQE write requests by the cycle `awvalid` rose, in order.
    pub aw_rises: Vec<u64>,
    /// The 16 bytes of each CQE written, in order (from the W beats and the AW address).
    pub cqes: Vec<[u8; 16]>,
    /// Per cycle from `irq_from`: `irq` valid, its vector, and the sink's ready.
    pub irq: Vec<(bool, u16, bool)>,
    /// First cycle recorded in `irq`.
    pub irq_from: u64,
    /// Record `irq` per cycle (off by default: it costs memory on long runs).
    pub record_irq: bool,
}

impl Probe {
    /// A probe on the model's ports.
    pub fn new<T: Dut>(sim: &Sim<T>) -> Probe {
        let s = |n: &str| sim.signal(n);
        Probe {
            bar_awvalid: s("s_bar_awvalid_i"),
            bar_awready: s("s_bar_awready_o"),
            bar_awaddr: s("s_bar_awaddr_i"),
            bar_wdata: s("s_bar_wdata_i"),
            arvalid: s("m_axi_arvalid_o"),
            araddr: s("m_axi_araddr_o"),
            arlen: s("m_axi_arlen_o"),
            awvalid: s("m_axi_awvalid_o"),
            awready: s("m_axi_awready_i"),
            awaddr: s("m_axi_awaddr_o"),
            bvalid: s("m_axi_bvalid_i"),
            bready: s("m_axi_bready_o"),
            bresp: s("m_axi_bresp_i"),
            wvalid: s("m_axi_wvalid_o"),
            wready: s("m_axi_wready_i"),
            wdata: s("m_axi_wdata_o"),
            wlast: s("m_axi_wlast_o"),
            aw_was: false,
            w_words: Vec::new(),
            irq_valid: s("irq_valid_o"),
            irq_ready: s("irq_ready_i"),
            irq_vector: s("irq_vector_o"),
            ar_was: false,
            doorbells: Vec::new(),
            reads: Vec::new(),
            writes: Vec::new(),
            responses: Vec::new(),
            responses_ok: Vec::new(),
            aw_rises: Vec::new(),
            cqes: Vec::new(),
            irq: Vec::new(),
            irq_from: u64::MAX,
            record_irq: false,
        }
    }
}

impl Component for Probe {
    fn sample(&mut self, cycle: u64) {
        if self.bar_awvalid.is_high() && self.bar_awready.is_high() {
            let a = self.bar_awaddr.get();
            if a >= 0x1000 {
                self.doorbells.push((cycle, a, self.bar_wdata.get() as u32));
            }
        }
        let ar = self.arvalid.is_high();
        if ar && !self.ar_was {
            self.reads
                .push((cycle, self.araddr.get(), self.arlen.get() as u32));
        }
        self.ar_was = ar;
        let aw = self.awvalid.is_high();
        if aw && !self.aw_was {
            self.aw_rises.push(cycle);
        }
        self.aw_was = aw;
        if aw && self.awready.is_high() {
            self.writes.push((cycle, self.awaddr.get()));
        }
        if self.wvalid.is_high() && self.wready.is_high() {
            self.w_words.extend(self.wdata.get_words());
            if self.wlast.is_high() {
                // A 16-byte CQE: two beats of a 64-bit bus, or its lane of one wider beat
                // (W bursts come in AW order, one CQE each).
                let words = std::mem::take(&mut self.w_words);
                let k = self.cqes.len();
                let lane = if words.len() <= 4 {
                    0
                } else {
                    let bytes = words.len() as u64 * 4;
                    self.writes.get(k).map_or(0, |w| (w.1 % bytes) / 16) as usize
                };
                let mut e = [0u8; 16];
                for (i, w) in words.iter().skip(4 * lane).take(4).enumerate() {
                    e[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
                }
                self.cqes.push(e);
            }
        }
        if self.bvalid.is_high() && self.bready.is_high() {
            self.responses.push(cycle);
            self.responses_ok.push(self.bresp.get() == 0);
        }
        if !self.record_irq {
            return;
        }
        if self.irq_from == u64::MAX {
            self.irq_from = cycle;
        }
        while self.irq_from + (self.irq.len() as u64) < cycle {
            self.irq.push((false, 0, false));
        }
        self.irq.push((
            self.irq_valid.is_high(),
            self.irq_vector.get() as u16,
            self.irq_ready.is_high(),
        ));
    }

    fn drive(&mut self, _cycle: u64) {}
}

/// Takes `admin_cmd` SQEs (admin queue, and fallback I/O commands with their SQ id) for the
/// firmware model, with random backpressure.
pub struct AdminPort {
    valid: Signal,
    ready: Signal,
    sqid: Signal,
    sqe: Signal,
    rng: Rng,
    stall: u8,
    ready_now: bool,
    /// SQEs received and not yet taken by firmware: (SQ id, SQE).
    pub queue: VecDeque<(u16, [u8; 64])>,
    /// Every fallback I/O command received: (cycle, SQ id, SQE).
    pub fallback: Vec<(u64, u16, [u8; 64])>,
}

impl Component for AdminPort {
    fn sample(&mut self, cycle: u64) {
        if self.ready_now && self.valid.is_high() {
            let sqid = self.sqid.get() as u16;
            let sqe = get_array::<64>(&self.sqe);
            if sqid != 0 {
                self.fallback.push((cycle, sqid, sqe));
            }
            self.queue.push_back((sqid, sqe));
        }
    }
    fn drive(&mut self, _cycle: u64) {
        self.ready_now = !self.rng.chance(self.stall);
        self.ready.set(self.ready_now as u64);
    }
}

#[derive(Debug)]
enum Act {
    Write(u32, u32),
    WaitIdle,
    Drain(u16, u8, u32),
    Done(u16, u16, u32),
}

/// The firmware model: executes admin commands through the vendor CSRs, and answers the
/// fallback I/O commands by [`fallback_outcome`] after a random delay.
pub struct Firmware {
    acts: VecDeque<Act>,
    ticket: Option<u64>,
    poll: Option<u64>,
    events_read: Option<u64>,
    aers: Vec<u16>,
    enabled: bool,
    sqs: BTreeMap<u16, u16>,
    cqs: BTreeSet<u16>,
    io_queues: u16,
    max_entries: u32,
    vectors: u32,
    /// Base of `nvme_csr` on the firmware bus.
    base: u32,
    /// Namespaces (NSID -> blocks) the fallback commands it executes (Verify) see.
    namespaces: BTreeMap<u32, u64>,
    /// Cycles firmware takes at most to answer a fallback command.
    fallback_delay: u32,
    /// Hold every fallback answer (but on CC.EN low) until cleared.
    hold_io: bool,
    /// Fallback commands taken and not yet answered: (cycle due, SQ id, CID, status, DW0).
    held_io: Vec<(u64, u16, u16, u16, u32)>,
    rng: Rng,
}

impl Firmware {
    /// The chip's reset input: firmware starts over as at power-on (its queue table, the
    /// AERs and fallback commands it held, its pending CSR work and accesses are gone: the
    /// hardware that would take their answers was reset).
    fn power_on(&mut self) {
        self.acts.clear();
        self.ticket = None;
        self.poll = None;
        self.events_read = None;
        self.aers.clear();
        self.enabled = false;
        self.sqs.clear();
        self.cqs.clear();
        self.held_io.clear();
    }

    /// A fallback I/O command of SQ `sqid`: firmware executes it (or refuses its opcode) and
    /// answers after a random delay, with its SQ id.
    fn start_io(&mut self, sqid: u16, sqe: &[u8; 64], cycle: u64) {
        let cid = u16::from_le_bytes([sqe[2], sqe[3]]);
        let (st, dw0) = fallback_outcome(sqe, &self.namespaces);
        let due = cycle + self.rng.below(u64::from(self.fallback_delay) + 1);
        self.held_io.push((due, sqid, cid, st, dw0));
    }

    /// Answers the fallback commands whose time has come (all of them when `all`).
    fn answer_io(&mut self, cpl: &RefCell<StreamSource>, cycle: u64, all: bool) {
        if self.hold_io && !all {
            return;
        }
        let mut i = 0;
        while i < self.held_io.len() {
            let (due, sqid, cid, st, dw0) = self.held_io[i];
            if all || due <= cycle {
                cpl.borrow_mut().push(&[
                    u64::from(sqid),
                    u64::from(cid),
                    u64::from(st),
                    u64::from(dw0),
                ]);
                self.held_io.remove(i);
            } else {
                i += 1;
            }
        }
    }

    fn start(&mut self, sqe: &[u8; 64]) {
        let dw = |i: usize| u32::from_le_bytes(sqe[4 * i..4 * i + 4].try_into().unwrap());
        let cid = (dw(0) >> 16) as u16;
        let (cdw10, cdw11) = (dw(10), dw(11));
        let qid = cdw10 as u16;
        let size = cdw10 >> 16;
        let outcome = admin_outcome(
            sqe,
            self.io_queues,
            self.max_entries,
            self.vectors,
            &self.sqs,
            &self.cqs,
        );
        let Some(st) = outcome else {
            if self.aers.len() >= 4 {
                self.acts.push_back(Act::Done(cid, status::AER_LIMIT, 0));
            } else {
                self.aers.push(cid);
            }
            return;
        };
        if st != 0 {
            self.acts.push_back(Act::Done(cid, st, 0));
            return;
        }
        let base = |acts: &mut VecDeque<Act>| {
            acts.push_back(Act::Write(csr::Q_BASE_LO, dw(6) & !0xfff));
            acts.push_back(Act::Write(csr::Q_BASE_HI, dw(7)));
        };
        match sqe[0] {
            0x05 => {
                base(&mut self.acts);
                self.acts
                    .push_back(Act::Write(csr::Q_CFG, size | (cdw11 & 2) << 17));
                self.acts
                    .push_back(Act::Write(csr::Q_BIND, cdw11 & 0xffff_0000));
                self.acts
                    .push_back(Act::Write(csr::Q_CMD, u32::from(qid) | 2 << 16));
                self.acts.push_back(Act::WaitIdle);
                self.cqs.insert(qid);
            }
            0x01 => {
                base(&mut self.acts);
                self.acts
                    .push_back(Act::Write(csr::Q_CFG, size | (cdw11 >> 1 & 3) << 16));
                self.acts.push_back(Act::Write(csr::Q_BIND, cdw11 >> 16));
                self.acts
                    .push_back(Act::Write(csr::Q_CMD, u32::from(qid) | 1 << 16));
                self.acts.push_back(Act::WaitIdle);
                self.sqs.insert(qid, (cdw11 >> 16) as u16);
            }
            0x00 => {
                self.acts
                    .push_back(Act::Write(csr::Q_CMD, u32::from(qid) | 3 << 16));
                self.acts.push_back(Act::WaitIdle);
                self.acts.push_back(Act::Drain(qid, 0, 0));
                self.sqs.remove(&qid);
            }
            0x04 => {
                self.acts
                    .push_back(Act::Write(csr::Q_CMD, u32::from(qid) | 4 << 16));
                self.acts.push_back(Act::WaitIdle);
                self.cqs.remove(&qid);
            }
            0x09 => {
                let reg = match cdw10 & 0xff {
                    0x01 => csr::ARB,
                    0x08 => csr::COALESCE,
                    _ => csr::VEC_CFG,
                };
                self.acts.push_back(Act::Write(reg, cdw11));
            }
            _ => {}
        }
        self.acts.push_back(Act::Done(cid, 0, 0));
    }

    fn poll(
        &mut self,
        bus: &Axil,
        adm: &RefCell<AdminPort>,
        cpl: &RefCell<StreamSource>,
        cycle: u64,
    ) {
        self.answer_io(cpl, cycle, false);
        let mut m = bus.master();
        let base = self.base;
        let at = move |a: u32| u64::from(base + a);
        if let Some(t) = self.ticket {
            let Some(c) = m.take(t) else { return };
            self.ticket = None;
            let data = c.data as u32;
            match self.acts.front_mut() {
                Some(Act::WaitIdle) => {
                    if data & csr::STATUS_BUSY_MASK == 0 {
                        self.acts.pop_front();
                    }
                }
                Some(Act::Drain(_, stage, fetched)) => match *stage {
                    0 => *stage = 1,
                    1 => {
                        *fetched = data;
                        *stage = 2;
                    }
                    _ => {
                        if data == *fetched {
                            self.acts.pop_front();
                        } else {
                            *stage = 1;
                        }
                    }
                },
                _ => {
                    self.acts.pop_front();
                }
            }
            return;
        }
        if let Some(t) = self.poll {
            let Some(c) = m.take(t) else { return };
            self.poll = None;
            let st = c.data as u32;
            if st & csr::STATUS_CC_EN_MASK != 0 {
                self.enabled = true;
            }
            if st & csr::STATUS_CC_EN_MASK == 0 {
                // Fallback commands still held are answered at once.
                self.answer_io(cpl, cycle, true);
                if self.enabled || !self.aers.is_empty() {
                    // Controller reset: every held command is answered (the hardware drops
                    // the answers), the queue table and the events are gone.
                    for cid in self.aers.drain(..) {
                        cpl.borrow_mut().push(&[
                            0,
                            u64::from(cid),
                            u64::from(status::ABORT_REQUESTED),
                            0,
                        ]);
                    }
                    self.sqs.clear();
                    self.cqs.clear();
                    self.acts.push_back(Act::Write(csr::EVENTS, 3));
                    self.enabled = false;
                }
            } else if !self.aers.is_empty() {
                self.events_read = Some(m.queue_read(at(csr::EVENTS)));
            }
            return;
        }
        if let Some(t) = self.events_read {
            let Some(c) = m.take(t) else { return };
            self.events_read = None;
            let ev = c.data as u32;
            for (bit, info) in [(1u32, 0u32), (2, 1)] {
                if ev & bit != 0 && !self.aers.is_empty() {
                    let cid = self.aers.remove(0);
                    self.acts.push_back(Act::Write(csr::EVENTS, bit));
                    self.acts.push_back(Act::Done(cid, 0, info << 8 | 1 << 16));
                }
            }
            return;
        }
        match self.acts.front_mut() {
            Some(Act::Write(a, v)) => {
                self.ticket = Some(m.queue_write(at(*a), u64::from(*v), 0xf));
            }
            Some(Act::WaitIdle) => {
                self.ticket = Some(m.queue_read(at(csr::STATUS)));
            }
            Some(Act::Drain(q, stage, _)) => {
                self.ticket = Some(match *stage {
                    0 => m.queue_write(at(csr::CNT_SEL), u64::from(*q), 0xf),
                    1 => m.queue_read(at(csr::CNT_FETCHED)),
                    _ => m.queue_read(at(csr::CNT_COMPLETED)),
                });
            }
            Some(Act::Done(cid, st, dw0)) => {
                cpl.borrow_mut()
                    .push(&[0, u64::from(*cid), u64::from(*st), u64::from(*dw0)]);
                self.acts.pop_front();
            }
            None => {
                let next = adm.borrow_mut().queue.pop_front();
                if let Some((sqid, sqe)) = next {
                    if sqid == 0 {
                        self.start(&sqe);
                    } else {
                        self.start_io(sqid, &sqe, cycle);
                    }
                } else {
                    self.poll = Some(m.queue_read(at(csr::STATUS)));
                }
            }
        }
    }
}

/// Timing knobs of a run.
#[derive(Clone, Debug)]
pub struct Timing {
    /// AXI read latency range.
    pub read_latency: (u32, u32),
    /// AR, AW, W stalls, R, B idle (percent).
    pub stalls: (u8, u8, u8, u8, u8),
    /// `io_cmd` backpressure and `admin_cmd` backpressure (percent).
    pub cmd_stall: (u8, u8),
    /// Cycles the backend takes at most to answer.
    pub backend_delay: u32,
    /// Percent of cycles each `sq_space_i` bit is low.
    pub space_low: u8,
    /// `irq` backpressure (percent).
    pub irq_stall: u8,
    /// AXI4-Lite idle/stall (percent).
    pub axil: u8,
}

/// One incarnation of a queue's ring in host memory.
#[derive(Clone, Debug)]
pub struct Ring {
    /// Queue id.
    pub qid: u16,
    /// A CQ (else an SQ).
    pub cq: bool,
    /// Host memory it occupies.
    pub range: Range<u64>,
    /// Entries.
    pub size: u32,
    /// Doorbells the host wrote: (cycle queued, cumulative entries published or released).
    pub doorbells: Vec<(u64, u64)>,
    /// Entries published (SQ) or released (CQ) so far.
    pub total: u64,
    /// Interrupt vector (CQ with interrupts enabled).
    pub vector: Option<u16>,
    /// An SQ of the urgent class in weighted round robin.
    pub urgent: bool,
    /// Doorbells the host wrote, by the cycle their AXI4-Lite response came back.
    pub doorbells_done: Vec<(u64, u64)>,
    /// Cycle from which the ring no longer belongs to a live queue (deleted, or reset).
    pub dead: u64,
}

/// The host: its rings, its view of the controller (the golden model), its CQ heads.
pub struct Host {
    /// The golden model.
    pub model: Controller,
    /// Every ring ever laid out, oldest first.
    pub rings: Vec<Ring>,
    /// Current ring index of each SQ / CQ.
    pub sq_ring: BTreeMap<u16, usize>,
    /// Current ring index of each CQ.
    pub cq_ring: BTreeMap<u16, usize>,
    /// Per CQ: head and expected phase.
    pub cq_head: BTreeMap<u16, (u32, bool)>,
    /// Next CID per SQ.
    pub next_cid: BTreeMap<u16, u16>,
    next_mem: u64,
    /// Doorbell faults the host provoked (the controller must count each).
    pub faults: u64,
    /// `faults` at the last hardware reset (`db_faults` counts from there).
    pub faults_base: u64,
    /// Cycles at which a controller reset ended (CSTS.RDY seen low).
    pub resets: Vec<u64>,
    /// Commands per SQ since its creation (for the per-queue counters).
    pub submitted: BTreeMap<u16, u32>,
    /// CQEs per SQ since its creation.
    pub completed: BTreeMap<u16, u32>,
    /// Every SQE submitted: (cycle its doorbell write was queued, SQ id, SQE, index of its
    /// SQ ring in `rings`).
    pub subs: Vec<(u64, u16, Sqe, usize)>,
    /// Every CQE the host read: (cycle read, CQ id, CQE).
    pub cqes: Vec<(u64, u16, Cqe)>,
    /// Commands get the lowest CID free on their SQ, as a tag allocator gives them, so CIDs
    /// come back soon after their command completes (else each SQ counts CIDs up).
    pub lowest_cid: bool,
}

/// The whole harness: the host and firmware models around a model holding the NVMe front end
/// (`nvme_ctrl` alone, with [`Backend`] and [`Probe`], or the chip top).
pub struct Env<T: Dut = Top> {
    /// The simulation.
    pub sim: Sim<T>,
    /// Host memory.
    pub mem: Rc<RefCell<AxiMemSlave>>,
    /// BAR0 master (the host).
    pub bar: Axil,
    /// Vendor CSR master (firmware).
    pub fw_bus: Axil,
    backend: Option<Rc<RefCell<Backend>>>,
    adm: Rc<RefCell<AdminPort>>,
    adm_cpl: Rc<RefCell<StreamSource>>,
    /// Interrupts received.
    pub irq: Rc<RefCell<StreamSink>>,
    probe: Option<Rc<RefCell<Probe>>>,
    fw: Firmware,
    /// The host.
    pub host: Host,
    /// Cycle budget of the run.
    pub limit: u64,
    /// Queue pairs and vectors of the model.
    pub io_queues: u16,
    /// CAP.DSTRD.
    pub stride: u32,
    /// Admin commands outstanding, by CID.
    pub admin_sqes: BTreeMap<u16, Sqe>,
    /// MSI-X vectors.
    pub vectors: u32,
    /// Base of the front end's vendor CSRs (`nvme_csr`) on the firmware bus.
    pub fw_base: u32,
}

/// Bytes of an SQE.
pub type Sqe = [u8; 64];

/// Firmware's namespace 1 unless the harness says otherwise ([`Env::set_fallback`]), blocks.
pub const DEFAULT_NS_BLOCKS: u64 = 256;
/// Cycles firmware takes at most to answer a fallback command, unless the harness says
/// otherwise.
pub const DEFAULT_FALLBACK_DELAY: u32 = 40;

impl Env<Top> {
    /// The harness around `nvme_ctrl` alone: [`Backend`] plays the rest of the chip, [`Probe`]
    /// watches the ports.
    pub fn new(t: &Timing, seed: u64, waves: Option<&Path>) -> Env {
        let sim = Sim::<Top>::maybe_waves(waves);
        let io_queues = sim.signal("sq_space_i").width() as u16;
        let opts = Attach {
            io_queues,
            fw_base: 0,
            reorder: false,
            backend: true,
        };
        Env::attach(sim, t, seed, &opts)
    }

    /// The stand-in for the rest of the chip.
    pub fn backend(&self) -> &Rc<RefCell<Backend>> {
        self.backend
            .as_ref()
            .expect("nvme_ctrl alone has a backend")
    }

    /// The port watcher.
    pub fn probe(&self) -> &Rc<RefCell<Probe>> {
        self.probe.as_ref().expect("nvme_ctrl alone has a probe")
    }
}

/// How [`Env::attach`] fits the model.
pub struct Attach {
    /// I/O queue pairs the front end offers.
    pub io_queues: u16,
    /// Base of `nvme_csr` on the firmware bus.
    pub fw_base: u32,
    /// Host memory may answer reads of different IDs out of order, interleaved.
    pub reorder: bool,
    /// The model is `nvme_ctrl` alone: add [`Backend`] on `io_cmd`/`io_cpl` and [`Probe`].
    pub backend: bool,
}

impl<T: Dut> Env<T> {
    /// The host (BAR0 on `s_bar`, rings in host memory on `m_axi`) and the firmware (`s_axil`,
    /// `admin_cmd`, `admin_cpl`) around `sim`'s model.
    pub fn attach(mut sim: Sim<T>, t: &Timing, seed: u64, o: &Attach) -> Env<T> {
        let mut rng = Rng::new(seed);
        let io_queues = o.io_queues;
        // The configuration's vectors: `irq_vector_o` is at least one bit wide, so its width
        // says 2 where there is 1 (configs/smallest.toml), 16 where there are 10.
        let vectors = crate::rtl::config::NVME_INTERRUPT_VECTORS;
        debug_assert!(vectors <= 1 << sim.signal("irq_vector_o").width());
        let (ar, aw, w, r, b) = t.stalls;
        let mem = sim.add(AxiMemSlave::new(
            &sim,
            "m_axi",
            AxiMemConfig {
                seed: rng.next_u64(),
                read_latency: t.read_latency.0..=t.read_latency.1,
                write_latency: 0..=t.read_latency.1.min(20),
                ar_stall: ar,
                aw_stall: aw,
                w_stall: w,
                r_idle: r,
                b_idle: b,
                max_reads: 8,
                max_writes: 8,
                reorder: o.reorder,
                interleave: o.reorder,
            },
        ));
        // Every write burst without a pause once started (the chip's interconnect needs it).
        mem.borrow_mut().w_gapless = true;
        // Up to 3 accesses of a kind in flight, as a PCIe core issues them: BAR0 must hold
        // off a read while its last answer waits (or answer every accepted one, in order).
        let axil = |rng: &mut Rng| AxilConfig {
            seed: rng.next_u64(),
            idle_percent: t.axil,
            stall_percent: t.axil,
            max_outstanding: 1 + rng.below(3) as usize,
            timeout: 100_000,
        };
        let bar = Axil::attach(&mut sim, "s_bar", axil(&mut rng));
        let fw_bus = Axil::attach(&mut sim, "s_axil", axil(&mut rng));
        let backend = o.backend.then(|| {
            let be = Backend::new(
                &sim,
                rng.next_u64(),
                t.cmd_stall.0,
                t.backend_delay,
                t.space_low,
            );
            sim.add(be)
        });
        let adm = sim.add(AdminPort {
            valid: sim.signal("admin_cmd_valid_o"),
            ready: sim.signal("admin_cmd_ready_i"),
            sqid: sim.signal("admin_cmd_sqid_o"),
            sqe: sim.signal("admin_cmd_sqe_o"),
            rng: Rng::new(rng.next_u64()),
            stall: t.cmd_stall.1,
            ready_now: false,
            queue: VecDeque::new(),
            fallback: Vec::new(),
        });
        let adm_cpl = sim.add(StreamSource::new(
            &sim,
            "admin_cpl",
            &["sqid", "cid", "status", "dw0"],
            rng.next_u64(),
            20,
        ));
        let irq = sim.add(StreamSink::new(
            &sim,
            "irq",
            &["vector"],
            rng.next_u64(),
            t.irq_stall,
        ));
        let probe = o.backend.then(|| sim.add(Probe::new(&sim)));
        let fw_rng = Rng::new(rng.next_u64());
        let namespaces: BTreeMap<u32, u64> = [(1, DEFAULT_NS_BLOCKS)].into_iter().collect();
        let mut model = Controller::new(
            io_queues,
            0,
            vectors,
            mdts_blocks(crate::rtl::config::DMA_LEN_WIDTH),
        );
        model.namespaces = namespaces.clone();
        Env {
            sim,
            probe,
            mem,
            bar,
            fw_bus,
            backend,
            adm,
            adm_cpl,
            irq,
            fw: Firmware {
                acts: VecDeque::new(),
                ticket: None,
                poll: None,
                events_read: None,
                aers: Vec::new(),
                enabled: false,
                sqs: BTreeMap::new(),
                cqs: BTreeSet::new(),
                io_queues,
                max_entries: 0,
                vectors,
                base: o.fw_base,
                namespaces,
                fallback_delay: DEFAULT_FALLBACK_DELAY,
                hold_io: false,
                held_io: Vec::new(),
                rng: fw_rng,
            },
            host: Host {
                model,
                rings: Vec::new(),
                sq_ring: BTreeMap::new(),
                cq_ring: BTreeMap::new(),
                cq_head: BTreeMap::new(),
                next_cid: BTreeMap::new(),
                next_mem: 0x10_0000_0000,
                faults: 0,
                faults_base: 0,
                resets: Vec::new(),
                submitted: BTreeMap::new(),
                completed: BTreeMap::new(),
                subs: Vec::new(),
                cqes: Vec::new(),
                lowest_cid: false,
            },
            limit: 2_000_000,
            io_queues,
            stride: 0,
            admin_sqes: BTreeMap::new(),
            vectors,
            fw_base: o.fw_base,
        }
    }

    /// Firmware's namespaces (NSID -> blocks), which the fallback commands it executes see,
    /// and the most cycles it takes to answer one; the host model expects the same.
    pub fn set_fallback(&mut self, namespaces: BTreeMap<u32, u64>, delay: u32) {
        self.host.model.namespaces = namespaces.clone();
        self.fw.namespaces = namespaces;
        self.fw.fallback_delay = delay;
    }

    /// Firmware holds every fallback answer from now on (`true`), or answers them again.
    pub fn hold_fallback(&mut self, hold: bool) {
        self.fw.hold_io = hold;
    }

    /// The fallback I/O commands firmware received on `admin_cmd`: (cycle, SQ id, SQE).
    pub fn fallback_received(&self) -> Vec<(u64, u16, Sqe)> {
        self.adm.borrow().fallback.clone()
    }

    /// One cycle: the model, every bus model, the firmware.
    pub fn step(&mut self) -> Result<(), String> {
        self.sim.step();
        let cycle = self.sim.cycle();
        self.fw.poll(&self.fw_bus, &self.adm, &self.adm_cpl, cycle);
        if let Some(v) = self.mem.borrow().violations.first() {
            return Err(format!("host memory AXI4 protocol: {v}"));
        }
        if self.sim.cycle() > self.limit {
            return Err(format!("cycle budget of {} exhausted", self.limit));
        }
        Ok(())
    }

    /// Runs `n` cycles.
    pub fn run(&mut self, n: u64) -> Result<(), String> {
        for _ in 0..n {
            self.step()?;
        }
        Ok(())
    }

    /// A BAR0 write, run to its response; returns the cycle it was queued in.
    pub fn bar_write(&mut self, addr: u64, value: u32) -> Result<u64, String> {
        let at = self.sim.cycle();
        let t = self.bar.master().queue_write(addr, u64::from(value), 0xf);
        loop {
            self.step()?;
            if self.bar.master().take(t).is_some() {
                return Ok(at);
            }
        }
    }

    /// Queues a firmware CSR write (done by the firmware model, in order with its work).
    pub fn fw_write(&mut self, addr: u32, value: u32) {
        self.fw.acts.push_back(Act::Write(addr, value));
    }

    /// A vendor CSR read, run to its response.
    pub fn fw_read(&mut self, addr: u32) -> Result<u32, String> {
        let t = self
            .fw_bus
            .master()
            .queue_read(u64::from(self.fw_base + addr));
        loop {
            self.step()?;
            if let Some(c) = self.fw_bus.master().take(t) {
                return Ok(c.data as u32);
            }
        }
    }

    /// A vendor CSR write, run to its response.
    pub fn fw_write_now(&mut self, addr: u32, value: u32) -> Result<(), String> {
        let t =
            self.fw_bus
                .master()
                .queue_write(u64::from(self.fw_base + addr), u64::from(value), 0xf);
        loop {
            self.step()?;
            if self.fw_bus.master().take(t).is_some() {
                return Ok(());
            }
        }
    }

    /// A BAR0 read.
    pub fn bar_read(&mut self, addr: u64) -> Result<u32, String> {
        let t = self.bar.master().queue_read(addr);
        loop {
            self.step()?;
            if let Some(c) = self.bar.master().take(t) {
                return Ok(c.data as u32);
            }
        }
    }

    /// BAR0 reads queued at once (as many in flight as the master allows): the values, in
    /// the order of `addrs`.
    pub fn bar_reads(&mut self, addrs: &[u64]) -> Result<Vec<u32>, String> {
        let tickets: Vec<u64> = addrs
            .iter()
            .map(|&a| self.bar.master().queue_read(a))
            .collect();
        let mut got = vec![None; tickets.len()];
        while got.iter().any(Option::is_none) {
            self.step()?;
            for (g, &t) in got.iter_mut().zip(&tickets) {
                if g.is_none() {
                    *g = self.bar.master().take(t).map(|c| c.data as u32);
                }
            }
        }
        Ok(got.into_iter().flatten().collect())
    }

    /// BAR0 address of a doorbell.
    pub fn doorbell_addr(&self, qid: u16, cq: bool) -> u64 {
        0x1000 + (2 * u64::from(qid) + cq as u64) * (4 << self.stride)
    }

    /// A faulty doorbell write: `kind` 0 an SQ doorbell of a queue that does not exist, 1 an
    /// SQ tail past queue `qid`'s size, 2 a CQ head past its size, 3 a CQ doorbell of a queue
    /// that does not exist (the first id after the `created` pairs, or past the controller's
    /// queues). Values past a queue are exactly its size (the boundary), a little past it, or
    /// a multiple of 1024 plus the CQ's current head (the same slot once the upper bits are
    /// dropped: only the size check can refuse it). The model is told of the fault; right
    /// after the write `event_qid` must name the doorbell (qid, bit 16 for a CQ) and
    /// `db_faults` count it, and the queue itself does not move (the AXI log's CQ overrun and
    /// SQ fetch-order checks hold the host's released head and tail). Returns false, writing
    /// nothing, when the doorbell lies outside BAR0.
    pub fn bad_doorbell(
        &mut self,
        kind: u8,
        qid: u16,
        created: usize,
        v: u16,
    ) -> Result<bool, String> {
        let exists_sq = self.host.model.sqs.get(&qid).map(|s| s.size);
        let exists_cq = self.host.model.cqs.get(&qid).map(|s| s.size);
        let window = 1u64 << self.sim.signal("s_bar_awaddr_i").width();
        let missing = if created < usize::from(self.io_queues) {
            created as u16 + 1
        } else {
            self.io_queues + 1
        };
        let head = self.host.cq_head.get(&qid).map_or(0, |h| h.0);
        let past = |size: u32| match v % 3 {
            0 => size,
            1 => size + u32::from(v) % 100,
            _ => size.max((1 + u32::from(v) % 63) * 1024 + head),
        };
        let (addr, val, info, ev) = match (kind, exists_sq, exists_cq) {
            (1, Some(size), _) => (
                self.doorbell_addr(qid, false),
                past(size),
                1u8,
                u32::from(qid),
            ),
            (2, _, Some(size)) => (
                self.doorbell_addr(qid, true),
                past(size),
                1,
                u32::from(qid) | 1 << 16,
            ),
            (3, _, _) => (
                self.doorbell_addr(missing, true),
                u32::from(v) % 2,
                0,
                u32::from(missing) | 1 << 16,
            ),
            _ => (
                self.doorbell_addr(missing, false),
                u32::from(v) % 2,
                0,
                u32::from(missing),
            ),
        };
        if addr >= window {
            return Ok(false);
        }
        self.host.model.fault(info);
        self.host.faults += 1;
        self.bar_write(addr, val)?;
        let mut k = 0;
        loop {
            let got = self.fw_read(csr::EVENT_QID)? & 0x1_ffff;
            let cnt = self.fw_read(csr::DB_FAULTS)?;
            if got == ev && cnt == (self.host.faults - self.host.faults_base) as u32 {
                return Ok(true);
            }
            k += 1;
            if k > 50 {
                return Err(format!(
                    "doorbell fault (kind {kind}, value {val} at {addr:#x}): event_qid \
                     {got:#x}, expected {ev:#x}; db_faults {cnt}, expected {} (since the \
                     last hardware reset)",
                    self.host.faults - self.host.faults_base
                ));
            }
        }
    }

    /// Reads CAP and sets up the model's limits. Returns DSTRD.
    pub fn read_cap(&mut self) -> Result<u32, String> {
        // CAP, VS and CAP again, back to back: each read gets its own answer, in order.
        let r = self.bar_reads(&[0, 4, 8, 0])?;
        let (lo, hi) = (r[0], r[1]);
        if r[2] != 0x0001_0400 || r[3] != lo {
            return Err(format!(
                "BAR0 reads of CAP, VS, CAP queued at once returned {r:#010x?}: VS must read \
                 0x00010400 (NVMe 1.4) and CAP the same twice"
            ));
        }
        let mqes = (lo & 0xffff) + 1;
        self.stride = hi & 0xf;
        self.host.model.max_entries = mqes;
        self.fw.max_entries = mqes;
        // MDTS, as firmware reads it for Identify Controller: it must be what the DMA engine
        // of this configuration can move (the model's rule), and the model then holds the
        // front end to it.
        let mdts = self.fw_read(csr::LIMITS)? & csr::LIMITS_MDTS_MASK;
        let want = mdts_blocks(crate::rtl::config::DMA_LEN_WIDTH);
        if !(1..=13).contains(&mdts) || 8 << mdts != want {
            return Err(format!(
                "nvme_csr.limits.mdts reads {mdts}, but a DMA engine of {}-bit lengths gives MDTS {} \
                 blocks of 512 bytes ({} expected)",
                crate::rtl::config::DMA_LEN_WIDTH,
                want,
                want.trailing_zeros() - 3
            ));
        }
        Ok(hi & 0xf)
    }

    /// Lays out a new ring in host memory.
    pub fn alloc_ring(&mut self, qid: u16, cq: bool, size: u32, vector: Option<u16>) -> usize {
        let bytes = u64::from(size) * if cq { 16 } else { 64 };
        let base = self.host.next_mem;
        self.host.next_mem += (bytes.div_ceil(4096) + 1) * 4096;
        self.host.rings.push(Ring {
            qid,
            cq,
            range: base..base + bytes,
            size,
            doorbells: Vec::new(),
            urgent: false,
            doorbells_done: Vec::new(),
            dead: u64::MAX,
            total: 0,
            vector,
        });
        self.host.rings.len() - 1
    }

    /// Brings the controller up: admin queue, CC.EN, CSTS.RDY.
    pub fn enable(&mut self, asq: u32, acq: u32, wrr: bool) -> Result<(), String> {
        let s = self.alloc_ring(0, false, asq, None);
        let c = self.alloc_ring(0, true, acq, Some(0));
        let (sb, cb) = (
            self.host.rings[s].range.start,
            self.host.rings[c].range.start,
        );
        self.bar_write(0x24, (acq - 1) << 16 | (asq - 1))?;
        self.bar_write(0x28, sb as u32)?;
        self.bar_write(0x2c, (sb >> 32) as u32)?;
        self.bar_write(0x30, cb as u32)?;
        self.bar_write(0x34, (cb >> 32) as u32)?;
        self.bar_write(0x14, 1 | u32::from(wrr) << 11 | 6 << 16 | 4 << 20)?;
        let mut n = 0;
        while self.bar_read(0x1c)? & 1 == 0 {
            n += 1;
            if n > 1000 {
                return Err("CSTS.RDY never rose after CC.EN".into());
            }
        }
        self.host.model.enable(asq, acq);
        self.host.sq_ring.insert(0, s);
        self.host.cq_ring.insert(0, c);
        self.host.cq_head.insert(0, (0, true));
        self.host.submitted.insert(0, 0);
        self.host.completed.insert(0, 0);
        self.admin_sqes.clear();
        Ok(())
    }

    /// CC.EN 1 -> 0, wait for CSTS.RDY low.
    pub fn controller_reset(&mut self) -> Result<(), String> {
        let now = self.sim.cycle();
        for &ri in self.host.sq_ring.values().chain(self.host.cq_ring.values()) {
            self.host.rings[ri].dead = self.host.rings[ri].dead.min(now);
        }
        let cc = self.bar_read(0x14)?;
        self.bar_write(0x14, cc & !1)?;
        // RDY falls once nothing is in flight: in a chip, after every command handed to a
        // transport came back, which may take the remote target's retransmissions.
        let start = self.sim.cycle();
        while self.bar_read(0x1c)? & 1 == 1 {
            if self.sim.cycle() - start > 300_000 {
                return Err("CSTS.RDY never fell after CC.EN 1 -> 0 (300k cycles)".into());
            }
        }
        self.host.resets.push(self.sim.cycle());
        self.host.model.reset();
        self.host.sq_ring.clear();
        self.host.cq_ring.clear();
        self.host.cq_head.clear();
        Ok(())
    }

    /// The chip's reset input, asserted for `cycles` cycles wherever the traffic is: every
    /// register, queue and command in flight in the chip is gone. The host's view is then as
    /// after a controller reset (its queues and outstanding commands gone, CC.EN 0: it must
    /// bring the controller up again), firmware's as at power-on, the bus models drop what
    /// they had in flight or queued for the chip, and `db_faults` counts from 0 again.
    pub fn hardware_reset(&mut self, cycles: u64) {
        let now = self.sim.cycle();
        for &ri in self.host.sq_ring.values().chain(self.host.cq_ring.values()) {
            self.host.rings[ri].dead = self.host.rings[ri].dead.min(now);
        }
        self.bar.master().cancel_queued();
        self.fw_bus.master().cancel_queued();
        self.fw.power_on();
        self.adm.borrow_mut().queue.clear();
        self.adm_cpl.borrow_mut().clear();
        self.sim.reset(cycles);
        self.host.model.reset();
        self.host.sq_ring.clear();
        self.host.cq_ring.clear();
        self.host.cq_head.clear();
        self.host.faults_base = self.host.faults;
        self.admin_sqes.clear();
    }

    /// Places SQEs on SQ `sqid` (waiting for room, consuming completions meanwhile) and rings
    /// the tail doorbell once for all (`batch`) or once per entry.
    pub fn submit(&mut self, sqid: u16, sqes: &[Sqe], batch: bool) -> Result<(), String> {
        for chunk in sqes.chunks(if batch { sqes.len().max(1) } else { 1 }) {
            let mut waited = 0u64;
            while self.host.model.sq_room(sqid) < chunk.len() as u32 {
                self.consume_all()?;
                self.step()?;
                waited += 1;
                if waited > 200_000 {
                    return Err(format!("SQ {sqid} never had room (SQHD never moved)"));
                }
            }
            let ri = self.host.sq_ring[&sqid];
            for sqe in chunk {
                if sqid == 0 {
                    self.admin_sqes
                        .insert(u16::from_le_bytes([sqe[2], sqe[3]]), *sqe);
                }
                let q = &self.host.model.sqs[&sqid];
                let addr = self.host.rings[ri].range.start + u64::from(q.tail) * 64;
                self.mem.borrow_mut().mem.write(addr, sqe);
                self.host.model.submit(sqid, sqe)?;
                self.host.subs.push((self.sim.cycle(), sqid, *sqe, ri));
                *self.host.submitted.entry(sqid).or_default() += 1;
            }
            let tail = self.host.model.sqs[&sqid].tail;
            let at = self.sim.cycle();
            self.host.rings[ri].total += chunk.len() as u64;
            let total = self.host.rings[ri].total;
            self.host.rings[ri].doorbells.push((at, total));
            let a = self.doorbell_addr(sqid, false);
            self.bar_write(a, tail)?;
            let done = self.sim.cycle();
            self.host.rings[ri].doorbells_done.push((done, total));
        }
        Ok(())
    }

    /// Reads every new CQE of CQ `cqid`, checks it, and writes the head doorbell if any.
    pub fn consume(&mut self, cqid: u16) -> Result<usize, String> {
        let Some(&ri) = self.host.cq_ring.get(&cqid) else {
            return Ok(0);
        };
        let mut n = 0;
        loop {
            let (head, phase) = self.host.cq_head[&cqid];
            let addr = self.host.rings[ri].range.start + u64::from(head) * 16;
            let bytes = self.mem.borrow().mem.read_vec(addr, 16);
            let e = Cqe::parse(&bytes);
            if e.phase != phase {
                break;
            }
            self.host.model.complete(cqid, &e)?;
            self.host.cqes.push((self.sim.cycle(), cqid, e));
            *self.host.completed.entry(e.sqid).or_default() += 1;
            if e.sqid == 0 {
                if let Some(sqe) = self.admin_sqe(e.cid) {
                    if e.status == 0 {
                        self.host.model.apply_admin(&sqe);
                    }
                }
            }
            let size = self.host.rings[ri].size;
            let next = (head + 1) % size;
            self.host
                .cq_head
                .insert(cqid, (next, if next == 0 { !phase } else { phase }));
            n += 1;
        }
        if n > 0 {
            let (head, _) = self.host.cq_head[&cqid];
            let at = self.sim.cycle();
            self.host.rings[ri].total += n as u64;
            let total = self.host.rings[ri].total;
            self.host.rings[ri].doorbells.push((at, total));
            let a = self.doorbell_addr(cqid, true);
            self.bar_write(a, head)?;
        }
        Ok(n)
    }

    fn admin_sqe(&mut self, cid: u16) -> Option<Sqe> {
        self.admin_sqes.remove(&cid)
    }

    /// Consumes every CQ.
    pub fn consume_all(&mut self) -> Result<(), String> {
        let cqs: Vec<u16> = self.host.cq_head.keys().copied().collect();
        for c in cqs {
            self.consume(c)?;
        }
        Ok(())
    }
}
