//! AXI4-Lite master (MMIO), bound to a model's slave port by prefix.
//!
//! It drives `<prefix>_awvalid_i`, `_awaddr_i`, `_wvalid_i`, `_wdata_i`, `_wstrb_i`,
//! `_bready_i`, `_arvalid_i`, `_araddr_i`, `_rready_i` (and `_awprot_i`/`_arprot_i` as 0 when
//! the model has them) and watches `_awready_o`, `_wready_o`, `_bvalid_o`, `_bresp_o`,
//! `_arready_o`, `_rvalid_o`, `_rdata_o`, `_rresp_o`. The data bus is 32 or 64 bits wide.
//!
//! Reads and writes are queued ([`AxilMaster::queue_read`], [`AxilMaster::queue_write`]) and
//! come back as [`Completion`]s, with the response, in the order they were queued: up to
//! `max_outstanding` accesses of one kind are in flight at once, and an access of the other
//! kind waits until they are done (program order, as firmware sees device memory).
//!
//! AW, W and AR each raise `valid` after their own seeded random idle cycles, independently:
//! write data may come before, with or after its address, and a slave may raise `awready` and
//! `wready` in different cycles. `bready` and `rready` are withheld at random. The master
//! checks the slave's side of the protocol (a response only after its request, `valid` held
//! with a stable payload until `ready`) and records breaches in `violations`.
//!
//! Tests read like cocotb through the [`Axil`] handle:
//!
//! ```text
//! let axil = Axil::attach(&mut sim, "s_axil", AxilConfig::default());
//! sim.reset(2);
//! let id = axil.read(&mut sim, 0x000)?;                  // runs the sim until the response
//! axil.write_strb(&mut sim, 0x018, 0xaabb_ccdd, 0b0011)?; // two bytes
//! let (data, resp) = axil.read_resp(&mut sim, 0x800)?;    // error responses as values
//! let mut bus = axil.mmio(&mut sim);                      // a generated `CsrBus`
//! chip_info_csr::write_scratch(&mut bus, 0, 7);
//! ```

use super::{wait_until, Clocked, Dir, Hold, Ports, Resp, Wires};
use crate::rng::Rng;
use crate::sim::{Component, Dut, Hang, Signal, Sim};
use std::cell::{RefCell, RefMut};
use std::collections::VecDeque;
use std::fmt;
use std::rc::Rc;

/// Timing of an [`AxilMaster`].
#[derive(Clone, Debug)]
pub struct AxilConfig {
    /// Seed of the random idle cycles and backpressure.
    pub seed: u64,
    /// Percent of cycles AW, W and AR each stay idle when they have something to send.
    pub idle_percent: u8,
    /// Percent of cycles `bready` and `rready` are each held low.
    pub stall_percent: u8,
    /// Accesses of one kind (reads, or writes) in flight at once; at least 1.
    pub max_outstanding: usize,
    /// Cycle limit of each blocking helper before it reports a hang.
    pub timeout: u64,
}

impl Default for AxilConfig {
    /// Seed 1, no idle cycles, no backpressure, 4 outstanding, 10 000-cycle limit.
    fn default() -> Self {
        AxilConfig {
            seed: 1,
            idle_percent: 0,
            stall_percent: 0,
            max_outstanding: 4,
            timeout: 10_000,
        }
    }
}

/// Declares on `wires` the signals of an AXI4-Lite port `prefix` with `addr_bits`-bit addresses
/// and a `data_bits`-bit data bus, for a master and a Rust slave wired to each other.
pub fn declare(wires: &Wires, prefix: &str, addr_bits: u32, data_bits: u32) {
    for (name, width) in [
        ("awvalid", 1),
        ("awready", 1),
        ("awaddr", addr_bits),
        ("wvalid", 1),
        ("wready", 1),
        ("wdata", data_bits),
        ("wstrb", data_bits / 8),
        ("bvalid", 1),
        ("bready", 1),
        ("bresp", 2),
        ("arvalid", 1),
        ("arready", 1),
        ("araddr", addr_bits),
        ("rvalid", 1),
        ("rready", 1),
        ("rdata", data_bits),
        ("rresp", 2),
    ] {
        wires.add(&format!("{prefix}_{name}"), width);
    }
}

/// A finished access.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The number [`AxilMaster::queue_read`] or [`AxilMaster::queue_write`] returned.
    pub ticket: u64,
    /// Read or write.
    pub dir: Dir,
    /// Byte address.
    pub addr: u64,
    /// Read: the data returned. Write: the data written.
    pub data: u64,
    /// Write strobes (all ones for a read).
    pub strb: u64,
    /// The slave's response.
    pub resp: Resp,
    /// Cycle the request was put on the bus (first of AW/W for a write).
    pub issued: u64,
    /// Cycle of the response handshake.
    pub done: u64,
}

#[derive(Clone, Debug)]
struct Op {
    ticket: u64,
    dir: Dir,
    addr: u64,
    data: u64,
    strb: u64,
    issued: u64,
}

/// The AXI4-Lite master component (see the module documentation).
pub struct AxilMaster {
    awvalid: Signal,
    awaddr: Signal,
    awready: Signal,
    wvalid: Signal,
    wdata: Signal,
    wstrb: Signal,
    wready: Signal,
    bvalid: Signal,
    bresp: Signal,
    bready: Signal,
    arvalid: Signal,
    araddr: Signal,
    arready: Signal,
    rvalid: Signal,
    rdata: Signal,
    rresp: Signal,
    rready: Signal,
    cfg: AxilConfig,
    rng: Rng,
    next_ticket: u64,
    queue: VecDeque<Op>,
    // Issued, per channel, waiting for their handshake; `*_cur` is on the bus now.
    aw_q: VecDeque<u64>,
    w_q: VecDeque<(u64, u64)>,
    ar_q: VecDeque<u64>,
    aw_cur: Option<u64>,
    w_cur: Option<(u64, u64)>,
    ar_cur: Option<u64>,
    // Issued and waiting for their response, oldest first.
    writes: VecDeque<Op>,
    reads: VecDeque<Op>,
    // Handshakes so far, to check that a response follows its request.
    aw_sent: u64,
    w_sent: u64,
    b_got: u64,
    ar_sent: u64,
    r_got: u64,
    b_hold: Hold<u64>,
    r_hold: Hold<(u64, u64)>,
    done: VecDeque<Completion>,
    /// Tickets of accesses that were in flight at a reset: they have no response.
    pub lost: Vec<u64>,
    /// Every completed access, in order (kept for scoreboards; [`AxilMaster::take`] does not
    /// remove from it).
    pub log: Vec<Completion>,
    /// Breaches of the protocol by the slave.
    pub violations: Vec<String>,
}

impl AxilMaster {
    /// A master for the slave port `prefix` of `ports` (a [`Sim`] or [`super::Wires`]).
    #[track_caller]
    pub fn new(ports: &impl Ports, prefix: &str, cfg: AxilConfig) -> AxilMaster {
        let p = |name: &str, dir: &str| ports.port(&format!("{prefix}_{name}_{dir}"));
        let rdata = p("rdata", "o");
        let wdata = p("wdata", "i");
        let wstrb = p("wstrb", "i");
        assert!(
            matches!(rdata.width(), 32 | 64) && wdata.width() == rdata.width(),
            "{prefix}: AXI4-Lite data is 32 or 64 bits wide, not {} (read) and {} (write)",
            rdata.width(),
            wdata.width()
        );
        assert_eq!(
            wstrb.width() * 8,
            wdata.width(),
            "{prefix}: one strobe per byte"
        );
        assert!(cfg.max_outstanding >= 1, "max_outstanding is at least 1");
        for opt in ["awprot", "arprot"] {
            if let Some(s) = ports.find(&format!("{prefix}_{opt}_i")) {
                s.set(0);
            }
        }
        let m = AxilMaster {
            awvalid: p("awvalid", "i"),
            awaddr: p("awaddr", "i"),
            awready: p("awready", "o"),
            wvalid: p("wvalid", "i"),
            wdata,
            wstrb,
            wready: p("wready", "o"),
            bvalid: p("bvalid", "o"),
            bresp: p("bresp", "o"),
            bready: p("bready", "i"),
            arvalid: p("arvalid", "i"),
            araddr: p("araddr", "i"),
            arready: p("arready", "o"),
            rvalid: p("rvalid", "o"),
            rdata,
            rresp: p("rresp", "o"),
            rready: p("rready", "i"),
            rng: Rng::new(cfg.seed),
            cfg,
            next_ticket: 0,
            queue: VecDeque::new(),
            aw_q: VecDeque::new(),
            w_q: VecDeque::new(),
            ar_q: VecDeque::new(),
            aw_cur: None,
            w_cur: None,
            ar_cur: None,
            writes: VecDeque::new(),
            reads: VecDeque::new(),
            aw_sent: 0,
            w_sent: 0,
            b_got: 0,
            ar_sent: 0,
            r_got: 0,
            b_hold: Hold::default(),
            r_hold: Hold::default(),
            done: VecDeque::new(),
            lost: Vec::new(),
            log: Vec::new(),
            violations: Vec::new(),
        };
        m.idle();
        m
    }

    /// Data bus width in bytes (4 or 8).
    pub fn bytes(&self) -> u32 {
        self.wdata.width() / 8
    }

    #[track_caller]
    fn check_addr(&self, addr: u64, sig: &Signal) {
        assert!(
            sig.width() >= 64 || addr >> sig.width() == 0,
            "address {addr:#x} does not fit {sig:?}"
        );
    }

    fn push(&mut self, dir: Dir, addr: u64, data: u64, strb: u64) -> u64 {
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        self.queue.push_back(Op {
            ticket,
            dir,
            addr,
            data,
            strb,
            issued: 0,
        });
        ticket
    }

    /// Queues a read of the bus word at `addr`; returns its ticket.
    #[track_caller]
    pub fn queue_read(&mut self, addr: u64) -> u64 {
        self.check_addr(addr, &self.araddr);
        let all = (1u64 << self.bytes()) - 1;
        self.push(Dir::Read, addr, 0, all)
    }

    /// Queues a write of `data` to the bus word at `addr`, bytes enabled by `strb` (bit i
    /// enables byte lane i); returns its ticket.
    #[track_caller]
    pub fn queue_write(&mut self, addr: u64, data: u64, strb: u64) -> u64 {
        self.check_addr(addr, &self.awaddr);
        assert!(
            strb >> self.bytes() == 0,
            "strobe {strb:#b} is wider than {} byte lanes",
            self.bytes()
        );
        self.push(Dir::Write, addr, data, strb)
    }

    /// Accesses queued or in flight.
    pub fn pending(&self) -> usize {
        self.queue.len() + self.writes.len() + self.reads.len()
    }

    /// Takes the completion of `ticket`, if it is done.
    pub fn take(&mut self, ticket: u64) -> Option<Completion> {
        let i = self.done.iter().position(|c| c.ticket == ticket)?;
        self.done.remove(i)
    }

    /// Takes the oldest completion not yet taken.
    pub fn pop(&mut self) -> Option<Completion> {
        self.done.pop_front()
    }

    /// Drops the accesses queued and not yet issued (their tickets go to `lost`), as a master
    /// whose own side was reset would: with [`Component::reset`] (which drops the ones in
    /// flight) nothing of before a reset reaches the slave after it.
    pub fn cancel_queued(&mut self) {
        for op in self.queue.drain(..) {
            self.lost.push(op.ticket);
        }
    }

    /// Changes the idle and backpressure percentages from now on.
    pub fn set_timing(&mut self, idle_percent: u8, stall_percent: u8) {
        self.cfg.idle_percent = idle_percent;
        self.cfg.stall_percent = stall_percent;
    }

    fn idle(&self) {
        self.awvalid.set(0);
        self.wvalid.set(0);
        self.arvalid.set(0);
        self.bready.set(0);
        self.rready.set(0);
    }

    fn complete(&mut self, op: Op, data: u64, resp: Resp, cycle: u64) {
        let c = Completion {
            ticket: op.ticket,
            dir: op.dir,
            addr: op.addr,
            data,
            strb: op.strb,
            resp,
            issued: op.issued,
            done: cycle,
        };
        self.log.push(c.clone());
        self.done.push_back(c);
    }

    /// Moves queued accesses onto the channels while program order and the limit allow.
    fn issue(&mut self, cycle: u64) {
        while let Some(op) = self.queue.front() {
            let (same, other) = match op.dir {
                Dir::Read => (&self.reads, &self.writes),
                Dir::Write => (&self.writes, &self.reads),
            };
            if !other.is_empty() || same.len() >= self.cfg.max_outstanding {
                return;
            }
            let mut op = self.queue.pop_front().unwrap();
            op.issued = cycle;
            match op.dir {
                Dir::Read => {
                    self.ar_q.push_back(op.addr);
                    self.reads.push_back(op);
                }
                Dir::Write => {
                    self.aw_q.push_back(op.addr);
                    self.w_q.push_back((op.data, op.strb));
                    self.writes.push_back(op);
                }
            }
        }
    }
}

impl Component for AxilMaster {
    fn sample(&mut self, cycle: u64) {
        let mut v = std::mem::take(&mut self.violations);
        // Responses first: one that comes with its request's handshake is too early.
        let bready = self.bready.is_high();
        let (bvalid, bresp) = (&self.bvalid, &self.bresp);
        if let Some(resp) =
            self.b_hold
                .observe(cycle, "B", bvalid.is_high(), bready, || bresp.get(), &mut v)
        {
            if self.b_got < self.aw_sent.min(self.w_sent) {
                self.b_got += 1;
                let op = self.writes.pop_front().unwrap();
                let data = op.data;
                self.complete(op, data, Resp::from_bits(resp), cycle);
            } else {
                v.push(format!(
                    "cycle {cycle}: B: a write response before both the address and the data of a write"
                ));
            }
        }
        let rready = self.rready.is_high();
        let (rvalid, rdata, rresp) = (&self.rvalid, &self.rdata, &self.rresp);
        if let Some((data, resp)) = self.r_hold.observe(
            cycle,
            "R",
            rvalid.is_high(),
            rready,
            || (rdata.get(), rresp.get()),
            &mut v,
        ) {
            if self.r_got < self.ar_sent {
                self.r_got += 1;
                let op = self.reads.pop_front().unwrap();
                self.complete(op, data, Resp::from_bits(resp), cycle);
            } else {
                v.push(format!(
                    "cycle {cycle}: R: read data with no read address accepted"
                ));
            }
        }
        self.violations = v;
        if self.aw_cur.is_some() && self.awready.is_high() {
            self.aw_cur = None;
            self.aw_sent += 1;
        }
        if self.w_cur.is_some() && self.wready.is_high() {
            self.w_cur = None;
            self.w_sent += 1;
        }
        if self.ar_cur.is_some() && self.arready.is_high() {
            self.ar_cur = None;
            self.ar_sent += 1;
        }
    }

    fn drive(&mut self, cycle: u64) {
        self.issue(cycle);
        let idle = self.cfg.idle_percent;
        if self.aw_cur.is_none() && !self.aw_q.is_empty() && !self.rng.chance(idle) {
            self.aw_cur = self.aw_q.pop_front();
        }
        if self.w_cur.is_none() && !self.w_q.is_empty() && !self.rng.chance(idle) {
            self.w_cur = self.w_q.pop_front();
        }
        if self.ar_cur.is_none() && !self.ar_q.is_empty() && !self.rng.chance(idle) {
            self.ar_cur = self.ar_q.pop_front();
        }
        match self.aw_cur {
            Some(a) => {
                self.awaddr.set(a);
                self.awvalid.set(1);
            }
            None => self.awvalid.set(0),
        }
        match self.w_cur {
            Some((d, s)) => {
                self.wdata.set(d);
                self.wstrb.set(s);
                self.wvalid.set(1);
            }
            None => self.wvalid.set(0),
        }
        match self.ar_cur {
            Some(a) => {
                self.araddr.set(a);
                self.arvalid.set(1);
            }
            None => self.arvalid.set(0),
        }
        let stall = self.cfg.stall_percent;
        self.bready.set(!self.rng.chance(stall) as u64);
        self.rready.set(!self.rng.chance(stall) as u64);
    }

    fn reset(&mut self) {
        // Accesses in flight die with the slave's state; queued ones stay queued.
        for op in self.writes.drain(..).chain(self.reads.drain(..)) {
            self.lost.push(op.ticket);
        }
        self.aw_q.clear();
        self.w_q.clear();
        self.ar_q.clear();
        self.aw_cur = None;
        self.w_cur = None;
        self.ar_cur = None;
        (
            self.aw_sent,
            self.w_sent,
            self.b_got,
            self.ar_sent,
            self.r_got,
        ) = (0, 0, 0, 0, 0);
        self.b_hold.clear();
        self.r_hold.clear();
        self.idle();
    }
}

/// Why a blocking access did not give data.
#[derive(Debug)]
pub enum AxilError {
    /// No response within the configured cycle limit.
    Hang(Hang),
    /// The slave answered with an error response.
    Resp {
        /// Read or write.
        dir: Dir,
        /// Byte address.
        addr: u64,
        /// The response.
        resp: Resp,
        /// The data that came with it (reads; 0 for writes).
        data: u64,
    },
    /// The access was in flight at a reset.
    Lost {
        /// Its ticket.
        ticket: u64,
    },
}

impl fmt::Display for AxilError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AxilError::Hang(h) => write!(f, "AXI4-Lite: {h}"),
            AxilError::Resp {
                dir,
                addr,
                resp,
                data,
            } => write!(
                f,
                "AXI4-Lite: {dir:?} of {addr:#x} answered {resp:?} (data {data:#x})"
            ),
            AxilError::Lost { ticket } => {
                write!(f, "AXI4-Lite: access {ticket} was in flight at a reset")
            }
        }
    }
}

impl std::error::Error for AxilError {}

impl From<Hang> for AxilError {
    fn from(h: Hang) -> Self {
        AxilError::Hang(h)
    }
}

/// A handle on an [`AxilMaster`] added to a harness, with blocking helpers that run the harness
/// until the response (or the configured cycle limit). Cheap to clone.
#[derive(Clone)]
pub struct Axil(Rc<RefCell<AxilMaster>>);

impl From<Rc<RefCell<AxilMaster>>> for Axil {
    fn from(rc: Rc<RefCell<AxilMaster>>) -> Self {
        Axil(rc)
    }
}

impl Axil {
    /// Binds a master to the slave port `prefix` of the model and adds it to the sim.
    #[track_caller]
    pub fn attach<M: Dut>(sim: &mut Sim<M>, prefix: &str, cfg: AxilConfig) -> Axil {
        let m = AxilMaster::new(sim, prefix, cfg);
        Axil(sim.add(m))
    }

    /// The master, for non-blocking use (queue several accesses, read `log`, `violations`).
    pub fn master(&self) -> RefMut<'_, AxilMaster> {
        self.0.borrow_mut()
    }

    /// The shared component.
    pub fn rc(&self) -> &Rc<RefCell<AxilMaster>> {
        &self.0
    }

    /// Runs `clk` until access `ticket` completes; takes its completion.
    pub fn wait<C: Clocked + ?Sized>(
        &self,
        clk: &mut C,
        ticket: u64,
    ) -> Result<Completion, AxilError> {
        let limit = self.0.borrow().cfg.timeout;
        let mut got = None;
        let mut lost = false;
        wait_until(clk, &format!("AXI4-Lite response {ticket}"), limit, || {
            let mut m = self.0.borrow_mut();
            lost = m.lost.contains(&ticket);
            got = m.take(ticket);
            got.is_some() || lost
        })?;
        got.ok_or(AxilError::Lost { ticket })
    }

    /// Reads the bus word at `addr`: its data and the response, whatever the response.
    pub fn read_resp<C: Clocked + ?Sized>(
        &self,
        clk: &mut C,
        addr: u64,
    ) -> Result<(u64, Resp), AxilError> {
        let t = self.0.borrow_mut().queue_read(addr);
        let c = self.wait(clk, t)?;
        Ok((c.data, c.resp))
    }

    /// Reads the bus word at `addr`; an error response is an [`AxilError::Resp`].
    pub fn read<C: Clocked + ?Sized>(&self, clk: &mut C, addr: u64) -> Result<u64, AxilError> {
        match self.read_resp(clk, addr)? {
            (data, resp) if resp.is_ok() => Ok(data),
            (data, resp) => Err(AxilError::Resp {
                dir: Dir::Read,
                addr,
                resp,
                data,
            }),
        }
    }

    /// Writes `data` to the bus word at `addr` with strobes `strb`; returns the response,
    /// whatever it is.
    pub fn write_resp<C: Clocked + ?Sized>(
        &self,
        clk: &mut C,
        addr: u64,
        data: u64,
        strb: u64,
    ) -> Result<Resp, AxilError> {
        let t = self.0.borrow_mut().queue_write(addr, data, strb);
        Ok(self.wait(clk, t)?.resp)
    }

    /// Writes `data` to the bus word at `addr` with strobes `strb`; an error response is an
    /// [`AxilError::Resp`].
    pub fn write_strb<C: Clocked + ?Sized>(
        &self,
        clk: &mut C,
        addr: u64,
        data: u64,
        strb: u64,
    ) -> Result<(), AxilError> {
        match self.write_resp(clk, addr, data, strb)? {
            r if r.is_ok() => Ok(()),
            resp => Err(AxilError::Resp {
                dir: Dir::Write,
                addr,
                resp,
                data: 0,
            }),
        }
    }

    /// Writes the whole bus word at `addr`.
    pub fn write<C: Clocked + ?Sized>(
        &self,
        clk: &mut C,
        addr: u64,
        data: u64,
    ) -> Result<(), AxilError> {
        let all = (1u64 << self.0.borrow().bytes()) - 1;
        self.write_strb(clk, addr, data, all)
    }

    /// A 32-bit register bus over this master that runs `clk` for every access: it implements
    /// the generated `CsrBus` traits (see [`Mmio`]).
    pub fn mmio<'a, C: Clocked + ?Sized>(&self, clk: &'a mut C) -> Mmio<'a, C> {
        Mmio {
            axil: self.clone(),
            clk,
            base: 0,
            strict: true,
            errors: Vec::new(),
        }
    }
}

/// 32-bit register accesses through an [`Axil`] master, each run to completion on the borrowed
/// harness: the shape of the generated `CsrBus` traits (`read32`, `write32`), which it
/// implements for every register block listed in this module (the trait is declared once per
/// generated `*_regs.rs`, so each block is one line in `impl_csr_bus!`).
///
/// A 32-bit register on a 64-bit bus is read from, and written to, its byte lanes. By default
/// an error response or a hang panics (a register test cannot go on); after
/// [`Mmio::record_errors`] error responses are recorded in `errors` instead (reads return the
/// data that came with the error), and only a hang panics.
pub struct Mmio<'a, C: Clocked + ?Sized> {
    axil: Axil,
    clk: &'a mut C,
    base: u64,
    strict: bool,
    /// Error responses seen after [`Mmio::record_errors`].
    pub errors: Vec<AxilError>,
}

impl<C: Clocked + ?Sized> Mmio<'_, C> {
    /// Adds `base` to every address (a block's window on the bus).
    pub fn at(mut self, base: u64) -> Self {
        self.base = base;
        self
    }

    /// Records error responses in `errors` instead of panicking.
    pub fn record_errors(mut self) -> Self {
        self.strict = false;
        self
    }

    fn lane(&self, addr: u32) -> u32 {
        8 * (addr & (self.axil.0.borrow().bytes() - 1) & !3)
    }

    fn fail(&mut self, e: AxilError) {
        match e {
            AxilError::Resp { .. } if !self.strict => self.errors.push(e),
            e => panic!("{e}"),
        }
    }

    /// Reads the 32-bit register at byte address `addr` (plus the base).
    pub fn read32(&mut self, addr: u32) -> u32 {
        let shift = self.lane(addr);
        let a = self.base + addr as u64;
        match self.axil.read_resp(self.clk, a) {
            Ok((data, resp)) => {
                if !resp.is_ok() {
                    self.fail(AxilError::Resp {
                        dir: Dir::Read,
                        addr: a,
                        resp,
                        data,
                    });
                }
                (data >> shift) as u32
            }
            Err(e) => {
                self.fail(e);
                0
            }
        }
    }

    /// Writes all four bytes of the 32-bit register at byte address `addr` (plus the base).
    pub fn write32(&mut self, addr: u32, value: u32) {
        let shift = self.lane(addr);
        let a = self.base + addr as u64;
        if let Err(e) =
            self.axil
                .write_strb(self.clk, a, (value as u64) << shift, 0xf << (shift / 8))
        {
            self.fail(e);
        }
    }
}

/// Implements each named register block's generated `CsrBus` for [`Mmio`]. The trait lives in
/// the testbench crate (`crate::rtl::regs::<block>`), so the implementation must too: a test
/// crate may not implement it for `Mmio` (orphan rule).
macro_rules! impl_csr_bus {
    ($($block:ident),* $(,)?) => {$(
        impl<C: Clocked + ?Sized> crate::rtl::regs::$block::CsrBus for Mmio<'_, C> {
            fn read32(&mut self, addr: u32) -> u32 {
                Mmio::read32(self, addr)
            }
            fn write32(&mut self, addr: u32, value: u32) {
                Mmio::write32(self, addr, value)
            }
        }
    )*};
}

impl_csr_bus!(chip_info_csr, dma_csr, nvme_csr);
