//! Property `chip`: NVMe command streams from a host through the whole chip to the remote
//! targets, NVMe/RDMA (RoCEv2) and NVMe/TCP, and back.
//!
//! The host (the `nvme` suite's [`Env`], generic over the model) enables the controller,
//! creates I/O queue pairs with admin commands (answered by the firmware model), and submits
//! random Read, Write, Flush, Write Zeroes, Dataset Management, Compare, Verify and unknown
//! opcodes with PRP and SGL buffers in host memory, batched doorbells, on several queues at
//! once.
//! Firmware programs, through the chip's one CSR bus (bases read from `chip_csr`'s map):
//! `chip_csr.tcp_dgst` (with the engine held in reset by `tcp_ctrl.run`), QoS namespaces
//! and grants (per queue: full, read-only, write-only, an LBA window, none), the RoCE QPs, and
//! the routing table: all RoCE (the reset binding, the QPs swapped between SQ 1 and SQ 2, or
//! SQ 2 unbound), all NVMe/TCP or mixed (SQ 1 to 3 written in order, each to a QP, a
//! connection or unbound; refused writes checked on `route_err`).
//!
//! Bad input at chip level, in a third of the cases, right after a batch's doorbell (so
//! commands are in flight in every block): a controller reset (CC.EN 1 -> 0, CSTS.RDY awaited,
//! a new bring-up with the same queues while firmware keeps QoS, the QPs and the routes), and
//! faulty doorbells (a queue that does not exist, values past a queue: `event_qid` and
//! `db_faults` right after, an Asynchronous Event completion later), and the RoCE target dying
//! (the link drops everything; the QPs give up after a retry limit of 5, their commands
//! complete with 22h; a command the target acknowledged before dying is completed with 22h
//! when the host's keep-alive expires and firmware disables the QPs; firmware then resets
//! every QP and the target comes back), and a hardware reset (the chip's reset input, for 2 to
//! 9 cycles, up to 300 cycles after the doorbells: firmware programs everything again as at
//! power-on, the host brings the controller up again with the same queues, the RoCE target
//! resets its QPs and every NVMe/TCP connection starts anew with fresh targets). A data digest error (not fatal) completes only the
//! command it hit with 22h (and its answer's DW0). One command in twelve
//! has host memory fail the chip's accesses to its buffer (SLVERR on a Read's data writes or a
//! Write's data reads) when it would otherwise succeed. In a third of the cases one NVMe/TCP
//! target (on a connection a queue is bound to) is hostile: it breaks the protocol once (any
//! of the target model's faults: bad ICResp, bad header fields, DATAO or R2T out of range,
//! digests, a wrong CCCID), so the chip ends the connection; after the batch that saw it die,
//! firmware waits for the NVMe/TCP queues to drain and restarts the engine (`tcp_ctrl.run`
//! 0 then 1) with fresh targets, and later commands must succeed again.
//!
//! The RoCE port (`m_axis`/`s_axis`) goes to the RoCE target model (one, all QPs), the NVMe/TCP
//! port (`tcp_*`) to one NVMe/TCP target model per connection ([`super::tcp`]); every target's
//! NSID 1 has QoS's ns1 size, NSID 2 is on none.
//!
//! The golden reference states the contract's rules, not the RTL's: a command whose opcode
//! the chip does not carry (Compare, Verify, unknown) goes to firmware, which answers it
//! (`models::nvme::fallback_outcome`: Verify against its namespace 1 of QoS's ns1 size, 01h
//! for the others), reaches firmware exactly once with its SQE and SQ id, and no target; any
//! other command's status is the first of QoS's (0Bh, 80h, 86h
//! from its namespace table and grants), the routing table's (82h for an unbound queue) and
//! the answer of the target its queue is bound to (each model is the remote namespace; the
//! two answer some opcodes differently); DW0 is what that target's CQE carries (RoCE:
//! CID << 8 ^ 5A00_0000h ^ QP; NVMe/TCP: CID << 8 ^ 7C00_0000h ^ connection, or 0 for a Read
//! the target may end with SUCCESS), 0 for the chip's own completions. Then: every command
//! completes exactly once (the host model checks each CQE: queue, CID, phase, SQHD, status,
//! DW0); a command the chip must not carry reaches no target, and every other reaches exactly
//! once the target of the channel its queue is bound to (an NVMe/TCP target receives exactly
//! the CIDs of its queue, each capsule with the host's opcode, NSID and CDW10-15); a
//! successful Read's host buffer holds exactly what its target sent (RoCE: its RDMA WRITEs;
//! NVMe/TCP: its C2HData PDUs, every byte once); a successful Write carried exactly its host
//! buffer (RDMA READ responses or capsule; H2CData PDUs or capsule); host memory outside the
//! Reads' buffers never changes; every NVMe/TCP connection asked for `tcp_dgst`'s digests,
//! stayed up, and neither side broke the protocol (target `violations`, stream rules); the
//! chip's routing counters (`cnt_roce`, `cnt_nvme_tcp`, `cnt_unbound`) and the front end's
//! path counters (`nvme_csr.cnt_offload`, `cnt_fallback`) are exact.
//!
//! Under bad input: a command whose host memory failed completes exactly once with 04h Data
//! Transfer Error (the DMA engine's status, in place of the target's; DW0 still the target's),
//! its buffer's bytes undefined and no byte outside it changed. A command outstanding when
//! the host reset the controller or the chip's reset input rose (dropped: its CQE is never
//! seen) reaches its target or firmware at most once, a Write that reached it carried its
//! buffer, a Read's buffer holds, byte by byte, what it held or what the target sent (for a
//! Read a hardware reset cut short: sent so far); no host-memory write is accepted from
//! CSTS.RDY's fall (or the reset input's rise) to the new bring-up, and no byte of a region
//! placed before the last reset changes after RDY fell or the reset ended (nothing stale
//! reaches host memory); commands after the reset complete as the rules above say. Right
//! after a hardware reset, before firmware writes anything, every register of every block on
//! the firmware bus reads as it did at power-on (counters, routing table, QPs included); the
//! counters' final check counts the commands sent since the last hardware reset (and the
//! targets' receptions since), exactly, allowing only the freedom a controller reset gives
//! (a dropped command may have been fetched, routed or not); interrupts cover the last CQE of
//! each CQ the controller still has. A command in flight on RoCE when its target died, or
//! sent to a connection its hostile target kills before the restart, completes with its target's answer or 22h (DW0 0), reaches the
//! target at most once, and is checked by the status it got (a success moved every byte); the
//! engine's connections all come up again after the restart.

use crate::drivers::axis::{AxisSink, AxisSource};
use crate::drivers::{Dir, Resp};
use crate::models::frame_mux::{classify, Engine};
use crate::models::nvme::{fallback_outcome, io_route, IoRoute, VERIFY};
use crate::models::nvme_tcp::Pdu;
use crate::models::nvme_tcp_target::Fault as TcpFault;
use crate::models::roce_target::{QpConf, Target};
use crate::prop::Property;
use crate::rng::Rng;
use crate::rtl::regs::{chip_csr, nvme_csr, qos_csr, roce_csr};
use crate::rtl::{config, ChipTop};
use crate::sim::{Component, Dut, Sim};
use crate::suites::chip::tcp::{self, EthWire, TcpConf, TcpLink};
use crate::suites::nvme::env::{Attach, Env, Sqe, Timing};
use crate::suites::nvme::queues::{create_pair, io_batch, rearm_aer, Pair};
use crate::suites::nvme_tcp::rtl::{HOLD_BYTES, ICD_BYTES};
use crate::suites::rdma::engine::{buf_bytes, confs, place, program_qp, Buf, BASE};
use proptest::prelude::*;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;
use std::rc::Rc;

/// Blocks of the target's namespace (NSID 1; QoS's ns1 size).
const BLOCKS: u64 = 64;
/// QoS's size of namespace 2, which the target does not have (it answers 0Bh).
const NS2_BLOCKS: u64 = 16;
/// Every `chip_csr.tcp_dgst` value: bit 0 header digest, bit 1 data digest.
const TCP_DGST_ALL: [u8; 4] = [0, 1, 2, 3];
/// The RoCE engines' retransmit timeout in the property, cycles.
const RETRY_TIMEOUT: u32 = 4000;
/// The host's keep-alive after the RoCE target died, cycles: five retransmit timeouts and a
/// margin, after which a command still waiting was acknowledged by the dead target.
const KEEP_ALIVE: u64 = 100_000;

/// One I/O command of the stimulus.
#[derive(Clone, Debug)]
pub struct Cmd {
    /// Queue selector (modulo the queues created).
    pub q: u8,
    /// 0 Flush, 1 Write Zeroes, 2 Read past the end, 3 an unknown opcode (even `nlb`) or a
    /// Verify of NSID 1 (odd `nlb`; firmware executes it), 4 Write Zeroes on
    /// NSID 2 (even `nlb`) or a Read of NSID 2 (odd), 5 a Write (up to 32 blocks), 6 a Read of NSID 3 (absent), 7 Dataset
    /// Management, 8 Compare, 9 a small Write (in its capsule), 10 and more a Read (up to 32
    /// blocks).
    pub kind: u8,
    pub slba: u64,
    pub nlb: u16,
    /// Host memory fails the chip's data accesses to the first piece of its buffer (SLVERR:
    /// a Read's writes, a Write's reads), if it has one and would otherwise succeed. Not for
    /// a Write on a queue bound to NVMe/TCP (a failed read ends the connection, by contract).
    pub mem_err: bool,
}

/// QoS grants of one queue.
#[derive(Clone, Copy, Debug)]
pub enum Grant {
    /// Read and write on NSID 1 and 2, every LBA.
    Full,
    /// Read only, NSID 1.
    ReadOnly,
    /// Write only, NSID 1.
    WriteOnly,
    /// Read and write on NSID 1, LBAs `first..=last` only.
    Window(u8, u8),
    /// No grant: every command that passes the namespace checks gets 86h.
    None,
}

/// One routing-table entry firmware writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bind {
    /// RoCE QP (modulo the QPs).
    Roce(u8),
    /// NVMe/TCP connection (modulo the connections).
    Tcp(u8),
    /// Unbound.
    Off,
}

/// How firmware binds the queues.
#[derive(Clone, Copy, Debug)]
pub enum Routes {
    /// The reset binding: SQ y on QP y - 1.
    Reset,
    /// SQ 1 on QP 1, SQ 2 on QP 0.
    Swapped,
    /// SQ 2 unbound (its commands complete with 82h).
    Sq2Unbound,
    /// Firmware writes SQ 1, 2 and 3's entries in that order, over the reset binding (binding
    /// a channel unbinds whichever queue had it, so a later SQ may take an earlier one's).
    Table([Bind; 3]),
}

/// A transport channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Chan {
    /// RoCE QP.
    Roce(usize),
    /// NVMe/TCP connection.
    Tcp(usize),
}

/// Bad input at chip level, right after a batch's doorbells (commands in flight in every
/// block).
#[derive(Clone, Copy, Debug)]
pub enum Fault {
    /// The host resets the controller (CC.EN 1 -> 0), waits for CSTS.RDY to fall and brings
    /// it up again with the same queues (firmware keeps QoS, the QPs and the routes).
    Reset,
    /// A faulty doorbell ([`Env::bad_doorbell`]'s kinds) on pair `q`.
    Doorbell { kind: u8, q: u8, v: u16 },
    /// The RoCE target dies (the link drops every frame both ways): the chip's QPs give up
    /// after `retry.limit` timeouts and their commands complete with 22h; once the queues on
    /// RoCE drained, firmware resets every QP (`ctrl.en` 0 then 1) and the target comes back.
    RoceDies,
    /// The chip's reset input is asserted for 2 to 9 cycles, `wait` (modulo 300) cycles after
    /// the doorbells, whatever is in flight: every CSR is back at its reset value, so
    /// firmware programs everything again (as at power-on), the host brings the controller
    /// up again with the same queues, the RoCE target resets its QPs and every NVMe/TCP
    /// connection starts anew (fresh targets).
    HwReset { wait: u16, cycles: u8 },
}

/// The stimulus.
#[derive(Clone, Debug)]
pub struct Input {
    /// Queue pairs to create (1 to 3; the shipped chip has 2 QPs, so SQ 3 is unbound).
    pub pairs: Vec<Pair>,
    pub grants: Vec<Grant>,
    pub routes: Routes,
    /// `chip_csr.tcp_dgst`: the digests the NVMe/TCP connections ask for (bit 0 header, bit 1
    /// data).
    pub tcp_dgst: u8,
    /// The NVMe/TCP targets' behaviour.
    pub tcp: TcpConf,
    /// Batches of commands: (commands, one doorbell for the batch).
    pub batches: Vec<(Vec<Cmd>, bool)>,
    /// Faults, each after batch `.0` (modulo the batches).
    pub faults: Vec<(u8, Fault)>,
    pub timing: Timing,
    /// Percent of frames lost each way between the chip and the target.
    pub loss: u8,
    pub psn: [u32; 4],
    pub seed: u64,
}

/// The chip's Ethernet port (`m_axis`/`s_axis`): RoCEv2 frames between it and the RoCE
/// target model; every other frame (ARP, TCP: the TCP/IP engine's) to and from the TCP side
/// through [`EthWire`] (`models::frame_mux::classify` tells them apart, as the chip's frame
/// mux does).
pub struct RoceLink {
    sink: Rc<RefCell<AxisSink>>,
    src: Rc<RefCell<AxisSource>>,
    /// The TCP side of the port.
    pub wire: Rc<RefCell<EthWire>>,
    /// RoCEv2 beats and bytes the chip took from the fabric.
    pub rx_beats: u64,
    pub rx_bytes: u64,
    /// The last frame handed to the port was RoCE's (the two sides take turns).
    last_roce: bool,
    /// The remote NVMe/RDMA target.
    pub target: Target,
    seen: usize,
    quiet: u64,
    rng: Rng,
    loss: u8,
    to_host: VecDeque<Vec<u8>>,
    /// Frames the chip sent.
    pub frames: u64,
    /// The remote latency: every frame the chip sends reaches the target this many cycles
    /// later (fixed, plus up to the random part), in order.
    pub delay: (u32, u32),
    /// Frames on their way to the target: (cycle they arrive, frame).
    in_flight: VecDeque<(u64, Vec<u8>)>,
    /// The target is gone: every frame either way is dropped.
    pub dead: bool,
}

impl RoceLink {
    /// Binds `target` to `env`'s RoCEv2 port (`m_axis` to the target, `s_axis` back), losing
    /// `loss` percent of the frames each way.
    pub fn attach<T: Dut>(
        env: &mut Env<T>,
        target: Target,
        loss: u8,
        seed: u64,
    ) -> (Rc<RefCell<AxisSink>>, Rc<RefCell<RoceLink>>) {
        let sink = env.sim.add(AxisSink::new(&env.sim, "m_axis", seed ^ 2, 10));
        sink.borrow_mut().gapless = true;
        let src = env
            .sim
            .add(AxisSource::new(&env.sim, "s_axis", seed ^ 1, 10));
        let link = env.sim.add(RoceLink {
            sink: sink.clone(),
            src,
            wire: Rc::new(RefCell::new(EthWire::default())),
            rx_beats: 0,
            rx_bytes: 0,
            last_roce: false,
            target,
            seen: 0,
            quiet: 0,
            rng: Rng::new(seed ^ 9),
            loss,
            to_host: VecDeque::new(),
            frames: 0,
            delay: (0, 0),
            in_flight: VecDeque::new(),
            dead: false,
        });
        (sink, link)
    }

    /// Sets how often the AXI4-Stream ports idle (`s_axis`) and stall (`m_axis`), percent.
    pub fn set_idle(&mut self, percent: u8) {
        self.src.borrow_mut().set_idle(percent);
        self.sink.borrow_mut().set_stall(percent);
    }

    /// The `s_axis` source (frames the chip took from the fabric).
    pub fn source(&self) -> std::cell::Ref<'_, AxisSource> {
        self.src.borrow()
    }

    /// The chip was reset: the target's side of every one of the `qps` QPs starts afresh (as
    /// after the dying-target recovery) and the frames on the wire either way are lost.
    pub fn peer_gone(&mut self, qps: usize) {
        self.in_flight.clear();
        self.to_host.clear();
        self.src.borrow_mut().clear();
        self.wire.borrow_mut().from_tcp.clear();
        self.quiet = 0;
        for q in 0..qps {
            self.target.reset_qp(q);
        }
    }

    /// The cycle of each RoCEv2 frame's first beat the chip sent, in order.
    pub fn frame_starts(&self) -> Vec<u64> {
        self.sink
            .borrow()
            .frames
            .iter()
            .filter(|f| classify(&f.data) == Engine::Roce)
            .map(|f| f.first)
            .collect()
    }

    /// The RoCEv2 frames the chip sent: (frames, beats, bytes).
    pub fn tx_totals(&self) -> (u64, u64, u64) {
        let sink = self.sink.borrow();
        let roce = sink
            .frames
            .iter()
            .filter(|f| classify(&f.data) == Engine::Roce);
        roce.fold((0, 0, 0), |(n, b, y), f| {
            (n + 1, b + f.beats as u64, y + f.data.len() as u64)
        })
    }
}

impl Component for RoceLink {
    fn sample(&mut self, cycle: u64) {
        let mut moved = false;
        let n = self.sink.borrow().frames.len();
        for i in self.seen..n {
            let f = self.sink.borrow().frames[i].data.clone();
            if classify(&f) == Engine::Tcp {
                self.wire.borrow_mut().to_tcp.push_back((cycle, f));
                continue;
            }
            moved = true;
            self.frames += 1;
            if !self.dead && !self.rng.chance(self.loss) {
                let (fixed, random) = self.delay;
                let jitter = if random > 0 {
                    self.rng.below(u64::from(random) + 1)
                } else {
                    0
                };
                let at = cycle + u64::from(fixed) + jitter;
                let at = self.in_flight.back().map_or(at, |x| x.0.max(at));
                self.in_flight.push_back((at, f));
            }
        }
        self.seen = n;
        while self.in_flight.front().is_some_and(|x| x.0 <= cycle) {
            let (_, f) = self.in_flight.pop_front().expect("front");
            self.target.receive(&f);
            moved = true;
        }
        if self.dead {
            self.in_flight.clear();
            self.to_host.clear();
        }
        while let Some(f) = self.target.out.pop_front() {
            moved = true;
            if !self.dead && !self.rng.chance(self.loss) {
                self.to_host.push_back(f);
            }
        }
        if self.src.borrow().pending() < 2 {
            // RoCE's and the TCP side's frames take turns on the port.
            let tcp_waits = !self.wire.borrow().from_tcp.is_empty();
            if !self.to_host.is_empty() && (!tcp_waits || !self.last_roce) {
                let f = self.to_host.pop_front().expect("a frame");
                self.rx_beats += f.len().div_ceil(8) as u64;
                self.rx_bytes += f.len() as u64;
                self.src.borrow_mut().send(f);
                self.last_roce = true;
                moved = true;
            } else if tcp_waits {
                let mut w = self.wire.borrow_mut();
                let f = w.from_tcp.pop_front().expect("a frame");
                if crate::suites::tcp::tcp_ports(&f).is_some_and(|p| p.2 > 0) {
                    w.delivered.push(cycle);
                }
                self.src.borrow_mut().send(f);
                self.last_roce = false;
            }
        }
        let busy = moved
            || !self.in_flight.is_empty()
            || self.src.borrow().pending() > 0
            || !self.sink.borrow().partial().is_empty();
        self.quiet = if busy { 0 } else { self.quiet + 1 };
        if self.quiet == 1500 && self.target.unacked() > 0 {
            self.target.timeout();
            self.quiet = 0;
        }
    }
    fn drive(&mut self, _cycle: u64) {}
}

/// The SQE of `c` with CID `cid`.
fn sqe_for(c: &Cmd, cid: u16) -> Sqe {
    let mut s = [0u8; 64];
    let (opc, nsid, slba, nlb): (u8, u32, u64, u16) = match c.kind {
        0 => (0x00, 1, 0, 0),
        1 => (0x08, 1, c.slba % (BLOCKS + 4), c.nlb % 8),
        2 => (0x02, 1, BLOCKS + c.slba % 8, c.nlb % 8),
        3 if c.nlb.is_multiple_of(2) => (0x7e, 1, 0, 0),
        3 => (VERIFY, 1, c.slba % (BLOCKS + 4), c.nlb / 2 % 8),
        4 if c.nlb.is_multiple_of(2) => (0x08, 2, c.slba % NS2_BLOCKS, 0),
        4 => (0x02, 2, c.slba % (NS2_BLOCKS - 4), c.nlb / 2 % 4),
        5 => (0x01, 1, c.slba % (BLOCKS - 32), c.nlb % 32),
        6 => (0x02, 3, 0, 0),
        7 => (0x09, 1, 0, 0),
        8 => (0x05, 1, c.slba % (BLOCKS - 8), c.nlb % 8),
        9 => (0x01, 1, c.slba % (BLOCKS - 8), c.nlb % 2),
        _ => (0x02, 1, c.slba % (BLOCKS - 32), c.nlb % 32),
    };
    s[0] = opc;
    s[2..4].copy_from_slice(&cid.to_le_bytes());
    s[4..8].copy_from_slice(&nsid.to_le_bytes());
    s[40..48].copy_from_slice(&slba.to_le_bytes());
    s[48..50].copy_from_slice(&nlb.to_le_bytes());
    s[60] = cid as u8;
    s
}

/// Which grant entries firmware writes for queue `sqid`: (nsid, read, write, first, last).
fn grant_entries(g: Grant) -> Vec<(u32, bool, bool, u64, u64)> {
    let all = (0, u64::MAX >> 1);
    match g {
        Grant::Full => vec![(1, true, true, all.0, all.1), (2, true, true, all.0, all.1)],
        Grant::ReadOnly => vec![(1, true, false, all.0, all.1)],
        Grant::WriteOnly => vec![(1, false, true, all.0, all.1)],
        Grant::Window(a, b) => {
            let (lo, hi) = (u64::from(a.min(b)) % BLOCKS, u64::from(a.max(b)) % BLOCKS);
            vec![(1, true, true, lo, hi)]
        }
        Grant::None => vec![],
    }
}

/// One grant table entry: (sqid, nsid, read, write, first, last).
type GrantEntry = (u16, u32, bool, bool, u64, u64);

/// The grant table firmware writes, in its order: each queue's entries ([`grant_entries`]) for
/// the namespaces QoS polices, as many as the table holds (`qos.grants`; a queue whose entries
/// do not fit gets what fits, and QoS then denies the rest).
fn grant_table(grants: &BTreeMap<u16, Grant>) -> Vec<GrantEntry> {
    grants
        .iter()
        .flat_map(|(&y, &g)| {
            grant_entries(g)
                .into_iter()
                .map(move |(n, r, w, first, last)| (y, n, r, w, first, last))
        })
        .filter(|e| e.1 <= config::QOS_NAMESPACES)
        .take(config::QOS_GRANTS as usize)
        .collect()
}

/// Blocks of namespace `nsid` as firmware sizes it in QoS: 0 for one QoS does not police.
fn ns_blocks(nsid: u32) -> u64 {
    match nsid {
        _ if nsid > config::QOS_NAMESPACES => 0,
        1 => BLOCKS,
        2 => NS2_BLOCKS,
        _ => 0,
    }
}

/// The status QoS gives `sqe` of `sqid`, or `None` when it admits it (the rules of
/// `hdl-gen/src/qos/mod.rs`, "Checks").
fn qos_status(sqid: u16, sqe: &Sqe, queues: u16, table: &[GrantEntry]) -> Option<u16> {
    let opc = sqe[0];
    let nsid = u32::from_le_bytes(sqe[4..8].try_into().unwrap());
    let slba = u64::from_le_bytes(sqe[40..48].try_into().unwrap());
    let nlb = u64::from(u16::from_le_bytes([sqe[48], sqe[49]]));
    let nsze = ns_blocks(nsid);
    if nsze == 0 {
        return Some(0x400b);
    }
    let lba = matches!(opc, 0x01 | 0x02 | 0x05 | 0x08);
    let (read, write) = match opc {
        0x02 | 0x05 => (true, false),
        0x00 | 0x01 | 0x08 | 0x09 => (false, true),
        _ => (true, true),
    };
    if lba && slba.checked_add(nlb).is_none_or(|e| e >= nsze) {
        return Some(0x4080);
    }
    let granted = sqid >= 1
        && sqid <= queues
        && table.iter().any(|&(y, n, r, w, first, last)| {
            y == sqid
                && n == nsid
                && (r || !read)
                && (w || !write)
                && (!lba || (first <= slba && slba + nlb <= last))
        });
    (!granted).then_some(0x4286)
}

/// What the RoCE target with a namespace 1 of `blocks` blocks answers for a command it
/// executes (`models::roce_target`).
pub(crate) fn target_status(sqe: &Sqe, blocks: u64) -> u16 {
    let opc = sqe[0];
    let nsid = u32::from_le_bytes(sqe[4..8].try_into().unwrap());
    let slba = u64::from_le_bytes(sqe[40..48].try_into().unwrap());
    let nlb = u64::from(u16::from_le_bytes([sqe[48], sqe[49]])) + 1;
    match opc {
        0x00 => 0,
        0x01 | 0x02 | 0x08 if nsid != 1 => 0x0b,
        0x01 | 0x02 | 0x08 if slba + nlb <= blocks => 0,
        0x01 | 0x02 | 0x08 => 0x80,
        _ => 0x01,
    }
}

/// Firmware's routing-table writes for `r`: (SQ id, `route_set` entry), in order.
fn route_writes(r: Routes, qps: usize, conns: usize) -> Vec<(u16, u32)> {
    match r {
        Routes::Reset => vec![],
        Routes::Swapped => vec![(1, 1 << 31 | 1), (2, 1 << 31)],
        Routes::Sq2Unbound => vec![(2, 0)],
        Routes::Table(b) => (1..=3u16)
            .zip(b)
            .map(|(y, b)| {
                let e = match b {
                    Bind::Roce(c) => 1 << 31 | (u32::from(c) % qps as u32),
                    Bind::Tcp(c) => 1 << 31 | 1 << 16 | (u32::from(c) % conns as u32),
                    Bind::Off => 0,
                };
                (y, e)
            })
            .collect(),
    }
}

/// The routing table as the contract says firmware's writes leave it: SQ id -> channel. After
/// reset SQ y is on QP y - 1 (the default transport is RoCE); binding a channel unbinds
/// whichever queue had it; an entry of 0 unbinds; a write for an SQ id beyond `queues`, or
/// binding to a transport or channel the chip lacks (`qps` QPs, `conns` connections), is refused.
fn routes(writes: &[(u16, u32)], qps: usize, conns: usize, queues: u16) -> BTreeMap<u16, Chan> {
    let mut t: BTreeMap<u16, Chan> = (1..=queues)
        .filter(|&y| usize::from(y) <= qps)
        .map(|y| (y, Chan::Roce(usize::from(y) - 1)))
        .collect();
    for &(y, e) in writes {
        // A write for an SQ id without an entry (1..queues have one) is refused: nothing
        // changes (configs/smallest.toml has two).
        if y == 0 || y > queues {
            continue;
        }
        if e >> 31 == 0 {
            t.remove(&y);
            continue;
        }
        let ch = (e & 0xff) as usize;
        let c = match e >> 16 & 3 {
            0 if ch < qps => Chan::Roce(ch),
            1 if ch < conns => Chan::Tcp(ch),
            _ => continue,
        };
        t.retain(|_, v| *v != c);
        t.insert(y, c);
    }
    t
}

/// A command the host submitted.
struct Sent {
    sqid: u16,
    cid: u16,
    sqe: Sqe,
    /// Its expected status, and the channel when it must reach a target.
    status: u16,
    via: Option<Chan>,
    /// The front end hands it to firmware (an opcode the chip does not carry).
    fallback: bool,
    /// Host memory failed its data accesses (`Cmd::mem_err`): its buffer's bytes are
    /// undefined.
    mem_err: bool,
    /// Sent to the connection whose target kills it, before firmware restarted the engine:
    /// it completes with its answer or 22h (`status` is then the one it got), and reaches the
    /// target at most once.
    doomed: bool,
    /// Outstanding when the host reset the controller: dropped, its completion never seen.
    /// It reaches its target (or firmware) at most once, and its buffer may or may not hold
    /// the target's data; nothing of it touches host memory once CSTS.RDY fell.
    dropped: bool,
    /// Hardware resets before it was sent (the chip's counters count from the last one).
    epoch: usize,
}

fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
    let sim = Sim::<ChipTop>::maybe_waves(waves);
    let io_queues = crate::rtl::config::NVME_IO_QUEUE_PAIRS as u16;
    let nvme_base = chip_csr::MAP_NVME_BASE_RESET;
    let opts = Attach {
        io_queues,
        fw_base: nvme_base,
        reorder: true,
        backend: false,
    };
    let mut env = Env::attach(sim, &input.timing, input.seed, &opts);
    env.limit = 400_000
        + 40_000 * input.batches.iter().map(|b| b.0.len() as u64).sum::<u64>()
        + 100_000 * input.faults.len() as u64;
    // Firmware's namespace for the commands it executes is the remote one (QoS's ns1).
    env.set_fallback(
        [(1, BLOCKS)].into_iter().collect(),
        (input.seed % 300) as u32,
    );
    let qps = super::session::channels(super::session::Transport::Roce);
    let mtu_code = roce_csr::QP0_MTU_RESET;
    let mtus = vec![128usize << mtu_code; qps];
    let confs: Vec<QpConf> = confs(&input.psn, qps, &mtus);
    let (sink, link) = RoceLink::attach(
        &mut env,
        Target::new(&confs, BLOCKS as usize, input.seed),
        input.loss,
        input.seed,
    );
    // A target can refuse a digest only if the host did not ask for both: the next fault
    // otherwise.
    // The hostile target is on a connection some created queue is bound to, if there is one.
    let conns = super::session::channels(super::session::Transport::Tcp);
    let queues = (input.pairs.len() as u16).min(io_queues);
    let writes = route_writes(input.routes, qps, conns);
    let table = routes(&writes, qps, conns, field_u16(chip_csr::INFO_QUEUES_RESET));
    let mut tcp_conf = input.tcp;
    if let Some((c, f, at)) = tcp_conf.die {
        let k = usize::from(f) % TcpFault::ALL.len();
        let f = if TcpFault::ALL[k] == TcpFault::IcRespDigest
            && input.tcp_dgst & supported_digests() == 3
        {
            (k + 1) as u8
        } else {
            f
        };
        let bound: Vec<u8> = table
            .iter()
            .filter(|(y, _)| **y <= queues)
            .filter_map(|(_, ch)| match ch {
                Chan::Tcp(x) => Some(*x as u8),
                Chan::Roce(_) => None,
            })
            .collect();
        let c = if bound.is_empty() {
            c
        } else {
            bound[usize::from(c) % bound.len()]
        };
        tcp_conf.die = Some((c, f, at));
    }
    let wire = link.borrow().wire.clone();
    let tcp_link = env.sim.add(TcpLink::new(
        conns, wire, &tcp_conf, BLOCKS, ICD_BYTES, input.seed,
    ));
    env.sim.reset(3);
    let power_on = check_reset_values(&mut env, None)?;

    // Firmware: find the blocks, program QoS, the QPs and the routing table.
    let grants: BTreeMap<u16, Grant> = (1..=queues)
        .map(|y| (y, input.grants[usize::from(y - 1) % input.grants.len()]))
        .collect();
    let grant_tab = grant_table(&grants);
    let fw = Program {
        input,
        confs: &confs,
        mtu_code,
        grants: &grants,
        writes: &writes,
        table: &table,
    };
    fw.run(&mut env, &link)?;

    // The host brings the controller up and creates its queues.
    env.read_cap()?;
    env.enable(32, 32, false)?;
    for (i, p) in input.pairs.iter().take(usize::from(queues)).enumerate() {
        let vectors = env.vectors;
        create_pair(&mut env, i as u16 + 1, p, vectors)?;
    }
    rearm_aer(&mut env)?;
    let live: Vec<u16> = (1..=queues)
        .filter(|y| env.host.model.sqs.contains_key(y))
        .collect();
    if live.is_empty() {
        return Err("no I/O queue could be created".into());
    }
    // Controller resets: (CSTS.RDY fell, CC.EN 1 again), and host memory's regions as they
    // were when RDY last fell: nothing may change them after.
    let mut resets: Vec<(u64, u64)> = Vec::new();
    let mut frozen: Vec<(u64, Vec<u8>)> = Vec::new();
    // Hardware resets: the cycle the reset input rose, and where the RoCE target's executed
    // commands and the NVMe/TCP connections' retired targets stood after it (the chip's
    // counters count from there).
    let mut hw: Vec<(u64, usize, usize)> = Vec::new();
    // The connection a hostile target kills (if a queue is bound to it), and whether firmware
    // restarted the engine since.
    let dying = tcp_link
        .borrow()
        .dying()
        .filter(|&c| table.values().any(|&x| x == Chan::Tcp(c)));
    let mut recovered = false;
    if std::env::var_os("CHIP_DEBUG").is_some() {
        eprintln!(
            "chip case start: die {:?} -> {:?}, dying {dying:?}, table {table:?}",
            input.tcp.die, tcp_conf.die
        );
    }
    // A data digest error does not end the connection: the one command whose C2HData failed
    // completes with 22h and its answer's DW0 once that answer arrives, every other as usual.
    let digest_only = dying.is_some()
        && input.tcp.die.is_some_and(|d| {
            TcpFault::ALL[usize::from(d.1) % TcpFault::ALL.len()] == TcpFault::DataDigest
        });

    // Commands.
    let mut rng = Rng::new(input.seed ^ 0x5eed);
    let mut bufs: Vec<Buf> = Vec::new();
    let mut sent: Vec<Sent> = Vec::new();
    // Each buffer's region (its pages and PRP list) as placed, before any traffic.
    let mut regions: Vec<(u64, Vec<u8>)> = Vec::new();
    for (bi, (cmds, batch)) in input.batches.iter().enumerate() {
        let mut by_q: BTreeMap<u16, Vec<&Cmd>> = BTreeMap::new();
        for c in cmds {
            by_q.entry(live[usize::from(c.q) % live.len()])
                .or_default()
                .push(c);
        }
        for (sqid, cs) in by_q {
            let room = env.host.model.sqs[&sqid].size as usize - 1;
            let cs: Vec<&Cmd> = cs.into_iter().take(room).collect();
            let mut k = 0;
            let sqes = io_batch(&mut env, sqid, cs.len() as u32, |cid| {
                let s = sqe_for(cs[k], cid);
                k += 1;
                s
            });
            let mut placed = Vec::new();
            for (j, mut s) in sqes.into_iter().enumerate() {
                let cid = u16::from_le_bytes([s[2], s[3]]);
                if matches!(s[0], 0x01 | 0x02) {
                    let start = bufs.last().map_or(BASE, |b| b.end);
                    place(
                        &mut s,
                        &mut bufs,
                        &mut env.mem.borrow_mut().mem,
                        &mut rng,
                        cid,
                        sqid,
                    );
                    // No reserved SGL descriptor type on a queue bound to NVMe/TCP: a failed
                    // host-memory read ends the connection (the engine's contract), which
                    // would fail every other command on it with 22h.
                    if matches!(table.get(&sqid), Some(Chan::Tcp(_))) {
                        let b = bufs.last_mut().expect("placed");
                        if b.bad {
                            b.bad = false;
                            s[39] = 0;
                        }
                    }
                    let end = bufs.last().map_or(BASE, |b| b.end);
                    let orig = env.mem.borrow().mem.read_vec(start, (end - start) as usize);
                    regions.push((start, orig));
                }
                let route = io_route(&s, env.host.model.max_blocks);
                let qos = if route == IoRoute::Offload {
                    qos_status(sqid, &s, field_u16(chip_csr::INFO_QUEUES_RESET), &grant_tab)
                } else {
                    None
                };
                let chan = table.get(&sqid).copied();
                let bad = bufs
                    .last()
                    .is_some_and(|b| b.cid == cid && b.sqid == sqid && b.bad);
                let (mut status, reaches) = match (route, qos, chan) {
                    (IoRoute::Front(st), _, _) => (st, None),
                    (IoRoute::Fallback, _, _) => {
                        (fallback_outcome(&s, &env.host.model.namespaces).0, None)
                    }
                    (_, Some(st), _) => (st, None),
                    (_, None, None) => (0x0082, None),
                    // A Write whose SGL descriptor type is reserved: the DMA engine's 11h.
                    (_, None, Some(c)) if bad => (0x0011, Some(c)),
                    (_, None, Some(c @ Chan::Roce(_))) => (target_status(&s, BLOCKS), Some(c)),
                    (_, None, Some(c @ Chan::Tcp(_))) => (tcp::target_status(&s, BLOCKS), Some(c)),
                };
                // DW0: the RoCE target's CQE carries CID << 8 ^ 5A00_0000h ^ QP, the NVMe/TCP
                // target's CID << 8 ^ 7C00_0000h ^ connection (so it proves the completion
                // came back from the right channel), but for a successful Read it may answer
                // with SUCCESS on its last C2HData (no CQE: DW0 0); the chip's own completions
                // carry 0.
                let dw0 = match reaches {
                    Some(Chan::Roce(q)) => Some(u32::from(cid) << 8 ^ 0x5a00_0000 ^ q as u32),
                    Some(Chan::Tcp(_)) if s[0] == 0x02 && status == 0 && input.tcp.use_success => {
                        None
                    }
                    Some(Chan::Tcp(c)) => Some(tcp::dw0(cid, c)),
                    None => Some(0),
                };
                // A failing host memory under a command that would succeed: the DMA engine's
                // 04h Data Transfer Error (SCT 0) in place of the target's status (DW0 is still
                // what the target's CQE carried).
                let doomed =
                    !recovered && matches!(reaches, Some(Chan::Tcp(c)) if Some(c) == dying);
                let mem_err = cs[j].mem_err
                    && !doomed
                    && status == 0
                    && reaches.is_some()
                    && bufs.last().is_some_and(|b| {
                        b.cid == cid
                            && b.sqid == sqid
                            && !(b.write && matches!(reaches, Some(Chan::Tcp(_))))
                    });
                if mem_err {
                    let b = bufs.last().expect("checked");
                    let (a, n) = b.pieces[0];
                    let dir = if b.write { Dir::Read } else { Dir::Write };
                    env.mem
                        .borrow_mut()
                        .inject_error(Some(dir), a..a + n as u64, Resp::SlvErr);
                    status = 0x0004;
                }
                if route == IoRoute::Offload {
                    env.host.model.io_expect.insert(
                        (sqid, cid),
                        if doomed && digest_only {
                            vec![(status, dw0), (0x0022, dw0)]
                        } else if doomed {
                            // The chip's own 22h carries DW0 0.
                            vec![(status, dw0), (0x0022, Some(0))]
                        } else {
                            vec![(status, dw0)]
                        },
                    );
                }
                sent.push(Sent {
                    sqid,
                    cid,
                    sqe: s,
                    status,
                    via: reaches,
                    fallback: route == IoRoute::Fallback,
                    mem_err,
                    doomed,
                    dropped: false,
                    epoch: hw.len(),
                });
                placed.push(s);
            }
            env.submit(sqid, &placed, *batch)?;
        }
        env.consume_all()?;
        for &(_, f) in input
            .faults
            .iter()
            .filter(|f| usize::from(f.0) % input.batches.len() == bi)
        {
            match f {
                Fault::Reset => {
                    mark_dropped(&env, &mut sent);
                    env.controller_reset()?;
                    let fall = env.sim.cycle();
                    frozen = snapshot(&env, &regions);
                    // Quiet from RDY's fall to the new bring-up's first BAR write.
                    resets.push((fall, env.sim.cycle()));
                    bring_up_again(&mut env, &input.pairs, queues, &live, "controller")?;
                }
                Fault::HwReset { wait, cycles } => {
                    // The traffic runs on a little, so the reset hits anywhere.
                    let until = env.sim.cycle() + u64::from(wait) % 300;
                    while env.sim.cycle() < until {
                        env.consume_all()?;
                        env.step()?;
                    }
                    mark_dropped(&env, &mut sent);
                    let at = env.sim.cycle();
                    // The remote side sees its peer gone: the RoCE target resets its QPs, the
                    // TCP engine underneath opens new connections (fresh targets) once
                    // firmware has programmed the chip again.
                    link.borrow_mut().peer_gone(qps);
                    tcp_link.borrow_mut().restart();
                    env.hardware_reset(2 + u64::from(cycles) % 8);
                    frozen = snapshot(&env, &regions);
                    check_reset_values(&mut env, Some(&power_on))?;
                    hw.push((
                        at,
                        link.borrow().target.executed.len(),
                        tcp_link.borrow().retired.len(),
                    ));
                    fw.run(&mut env, &link)?;
                    // The connections' targets are fresh: none is hostile any more.
                    recovered = true;
                    // Quiet from the reset to the new bring-up's first BAR write.
                    resets.push((at, env.sim.cycle()));
                    bring_up_again(&mut env, &input.pairs, queues, &live, "hardware")?;
                }
                Fault::Doorbell { kind, q, v } => {
                    let qid = live[usize::from(q) % live.len()];
                    env.bad_doorbell(kind, qid, usize::from(queues), v)?;
                }
                Fault::RoceDies => {
                    // Commands on RoCE not completed yet may now also get 22h (DW0 0).
                    for s in sent
                        .iter_mut()
                        .filter(|s| !s.dropped && matches!(s.via, Some(Chan::Roce(_))))
                    {
                        if let Some(e) = env
                            .host
                            .model
                            .sqs
                            .get_mut(&s.sqid)
                            .and_then(|q| q.outstanding.get_mut(&s.cid))
                        {
                            e.push((0x0022, Some(0)));
                            s.doomed = true;
                        }
                    }
                    link.borrow_mut().dead = true;
                    restart_roce(&mut env, &link, &table, qps)?;
                }
            }
        }
        if dying.is_some() && !recovered && env.sim.signal("tcp_dead_o").get() != 0 {
            restart_tcp(&mut env, &tcp_link, &table)?;
            recovered = true;
        }
    }
    // Run until every command completed.
    let mut n = 0u64;
    while env.host.model.outstanding() > 0 || !env.host.model.events.is_empty() {
        env.consume_all()?;
        rearm_aer(&mut env)?;
        env.step()?;
        n += 1;
        if n > env.limit {
            let t = tcp_link.borrow();
            let held: Vec<Vec<u16>> = t.targets.iter().map(|x| x.held()).collect();
            return Err(format!(
                "{} commands never completed, doorbell fault events {:?} never reported (RoCE target: {:?}; NVMe/TCP targets hold {held:?}, violations {:?}, tcp_connected_o {:#x}, tcp_dead_o {:#x})",
                env.host.model.outstanding(),
                env.host.model.events,
                link.borrow().target.errors.first(),
                t.targets.iter().flat_map(|x| x.violations.first()).collect::<Vec<_>>(),
                env.sim.signal("tcp_connected_o").get(),
                env.sim.signal("tcp_dead_o").get(),
            ));
        }
    }
    // A doomed command's status is the one it got (its answer or 22h: the host model allowed
    // both).
    for s in sent.iter_mut().filter(|s| s.doomed && !s.dropped) {
        s.status = env
            .host
            .cqes
            .iter()
            .rev()
            .find(|c| c.2.sqid == s.sqid && c.2.cid == s.cid)
            .map(|c| c.2.status)
            .ok_or(format!("SQ {} CID {:#x}: no CQE seen", s.sqid, s.cid))?;
    }
    if digest_only {
        // Exactly the command the bad data digest hit (if the target got to commit it) got 22h.
        let t = tcp_link.borrow();
        let hit = dying
            .and_then(|c| t.all(c).first().and_then(|x| x.committed))
            .is_some_and(|(f, _, cid)| f == TcpFault::DataDigest && cid.is_some());
        let on = |s: &&Sent| s.doomed && s.via.is_some_and(|v| Some(v) == dying.map(Chan::Tcp));
        let n = sent.iter().filter(on).filter(|s| s.status == 0x22).count();
        // (A controller reset may have dropped the command it hit.)
        let dropped = sent.iter().filter(on).any(|s| s.dropped);
        if n > usize::from(hit) || (n < usize::from(hit) && !dropped) {
            return Err(format!(
                "a data digest error {} but {n} commands on its connection completed with 22h",
                if hit {
                    "hit one command"
                } else {
                    "never happened"
                }
            ));
        }
    }
    // Let the last bytes on the NVMe/TCP streams settle (a PDU the target got after the host
    // saw its command complete cannot be, but a stray one must be seen).
    env.sim.run(200);
    check(
        &env,
        &link.borrow(),
        &tcp_link.borrow(),
        &sent,
        &bufs,
        &regions,
    )?;
    check_quiet(&env, &resets, &frozen)?;
    check_tcp(&env, &tcp_link.borrow(), input.tcp_dgst, &sent)?;
    check_irq(&env)?;
    if let Some(v) = sink.borrow().violations.first() {
        return Err(format!("m_axis protocol: {v}"));
    }
    if std::env::var_os("CHIP_DEBUG").is_some() {
        let t = tcp_link.borrow();
        eprintln!(
            "chip case: {} controller resets, {} hardware resets ({} commands dropped), {} doorbell faults, NVMe/TCP target fault {:?} ({} doomed, {} of them 22h, {} engine restarts), {} commands, {} to RoCE ({} executed, {} frames), {} to NVMe/TCP ({} capsules, {}/{} bytes tx/rx), digests {}, {} cycles",
            resets.len() - hw.len(),
            hw.len(),
            sent.iter().filter(|s| s.dropped).count(),
            env.host.faults,
            (input.tcp.die, dying, t.all(dying.unwrap_or(0)).iter().find_map(|x| x.committed.map(|c| c.0))),
            sent.iter().filter(|s| s.doomed).count(),
            sent.iter().filter(|s| s.doomed && s.status == 0x22).count(),
            t.retired.len() / t.targets.len().max(1),
            sent.len(),
            sent.iter().filter(|s| matches!(s.via, Some(Chan::Roce(_)))).count(),
            link.borrow().target.executed.len(),
            link.borrow().frames,
            sent.iter().filter(|s| matches!(s.via, Some(Chan::Tcp(_)))).count(),
            t.targets
                .iter()
                .map(|x| x.received.iter().filter(|p| matches!(p, Pdu::CapsuleCmd { .. })).count())
                .sum::<usize>(),
            t.tx_total,
            t.rx_total,
            input.tcp_dgst,
            env.sim.cycle()
        );
    }
    // The routing counters: the commands routed to each transport are the ones its targets
    // got (checked above against what the chip had to carry: a command dropped by a reset may
    // or may not have been routed); an unbound queue's are counted unless a reset dropped
    // them before the table saw them. A command doomed by its connection's death was routed
    // to it but may have been answered 22h by the engine without reaching the target.
    // The counters restart from 0 at a hardware reset (checked right after it with every
    // other register): they count the commands of the last epoch, the ones sent since the
    // last hardware reset, which reached the targets the chip had since.
    let epoch = hw.len();
    let (roce_base, tcp_base, hw_at) = hw.last().map_or((0, 0, 0), |h| (h.1, h.2, h.0));
    let sent: Vec<&Sent> = sent.iter().filter(|s| s.epoch == epoch).collect();
    let roce = {
        let t = &link.borrow().target;
        let executed = &t.executed[roce_base..];
        let got = executed.len() as u32;
        let lost = sent
            .iter()
            .filter(|s| {
                s.doomed
                    && matches!(s.via, Some(Chan::Roce(q)) if !executed.iter().any(|e| e.cid == s.cid && e.qp == q))
            })
            .count() as u32;
        (got, got + lost)
    };
    let nvme_tcp = {
        let t = tcp_link.borrow();
        let got = t
            .targets
            .iter()
            .chain(t.retired[tcp_base..].iter().map(|r| &r.1))
            .flat_map(|t| t.received.iter())
            .filter(|p| matches!(p, Pdu::CapsuleCmd { .. }))
            .count() as u32;
        let lost = sent
            .iter()
            .filter(|s| {
                s.doomed
                    && match s.via {
                        Some(Chan::Tcp(c)) => tcp::capsules(t.holder(c, s.cid), s.cid).is_empty(),
                        _ => false,
                    }
            })
            .count() as u32;
        (got, got + lost)
    };
    let range = |f: &dyn Fn(&Sent) -> bool| {
        let all = sent.iter().filter(|s| f(s));
        let n = all.clone().filter(|s| !s.dropped).count() as u32;
        (n, n + all.filter(|s| s.dropped).count() as u32)
    };
    let unbound = range(&|s| s.status == 0x0082);
    let fallback = env
        .fallback_received()
        .iter()
        .filter(|r| r.0 >= hw_at)
        .count() as u32;
    let mut bus = env.fw_bus.mmio(&mut env.sim);
    let got = (
        bus.read32(chip_csr::CNT_ROCE),
        bus.read32(chip_csr::CNT_NVME_TCP),
        bus.read32(chip_csr::CNT_UNBOUND),
    );
    if got.0 < roce.0
        || got.0 > roce.1
        || got.1 < nvme_tcp.0
        || got.1 > nvme_tcp.1
        || got.2 < unbound.0
        || got.2 > unbound.1
    {
        return Err(format!(
            "chip_csr counts (RoCE, NVMe/TCP, unbound) {got:?}; the targets got {roce:?} and {nvme_tcp:?} (without, with the doomed commands that never reached theirs), the host sent {unbound:?} to unbound queues (without, with the ones a reset dropped)"
        ));
    }
    // The front end's paths: every command but its own 02h completions goes to QoS or to
    // firmware (firmware got exactly the fallback ones counted; a dropped command may have
    // been fetched or not).
    let max_blocks = env.host.model.max_blocks;
    let offload = range(&|s| io_route(&s.sqe, max_blocks) == IoRoute::Offload);
    let got = (
        bus.read32(nvme_base + nvme_csr::CNT_OFFLOAD),
        bus.read32(nvme_base + nvme_csr::CNT_FALLBACK),
    );
    if got.1 != fallback || got.0 < offload.0 || got.0 > offload.1 {
        return Err(format!(
            "nvme_csr counts (offload, fallback) {got:?}; firmware got {fallback} fallback commands, the host sent {offload:?} to offload (without, with the ones a reset dropped)"
        ));
    }
    Ok(())
}

/// What firmware programs, at power-on and again after every hardware reset (every CSR is
/// then at its reset value).
struct Program<'a> {
    input: &'a Input,
    confs: &'a [QpConf],
    mtu_code: u32,
    grants: &'a BTreeMap<u16, Grant>,
    writes: &'a [(u16, u32)],
    table: &'a BTreeMap<u16, Chan>,
}

impl Program<'_> {
    /// Firmware finds the blocks, programs `chip_csr.tcp_dgst` (the engine held in reset by
    /// `tcp_ctrl.run`), QoS's namespaces and grants, the RoCE QPs and the routing table, and
    /// checks what it reads back.
    fn run<T: Dut>(&self, env: &mut Env<T>, link: &Rc<RefCell<RoceLink>>) -> Result<(), String> {
        let (input, confs, mtu_code, grants, writes, table) = (
            self.input,
            self.confs,
            self.mtu_code,
            self.grants,
            self.writes,
            self.table,
        );
        let nvme_base = chip_csr::MAP_NVME_BASE_RESET;
        let mut bus = env.fw_bus.mmio(&mut env.sim);
        // The digests every NVMe/TCP connection asks for in its ICReq: the engine is held in
        // reset while firmware sets them, as the contract says (a connection starts, ICReq
        // and all, when tcp_ctrl.run rises and its TCP connection is up). The TCP/IP engine
        // under it gets its addresses and timers, and opens every connection.
        bus.write32(chip_csr::TCP_CTRL, 0);
        bus.write32(chip_csr::TCP_DGST, u32::from(input.tcp_dgst));
        let conns = super::session::channels(super::session::Transport::Tcp);
        tcp::open_all(env, conns);
        let mut bus = env.fw_bus.mmio(&mut env.sim);
        bus.write32(chip_csr::TCP_CTRL, 1);
        let map: Vec<u32> = [
            chip_csr::MAP_NVME,
            chip_csr::MAP_QOS,
            chip_csr::MAP_ROCE,
            chip_csr::MAP_CHIP,
            chip_csr::MAP_NVME_TCP,
            chip_csr::MAP_TCP,
        ]
        .iter()
        .map(|&a| bus.read32(a))
        .collect();
        let want = [
            nvme_base,
            chip_csr::MAP_QOS_BASE_RESET,
            chip_csr::MAP_ROCE_BASE_RESET,
            0,
            chip_csr::MAP_NVME_TCP_BASE_RESET,
            chip_csr::MAP_TCP_BASE_RESET,
        ];
        if map != want {
            return Err(format!(
                "chip_csr map reads {map:#x?}, the generated map says {want:#x?}"
            ));
        }
        let (qos, roce) = (map[1], map[2]);
        let qreg = |n: &str| {
            qos + qos_csr::REGISTERS
                .iter()
                .find(|r| r.0 == n)
                .unwrap_or_else(|| panic!("qos_csr has no {n}"))
                .1
        };
        bus.write32(qreg("ns1_size_lo"), BLOCKS as u32);
        if config::QOS_NAMESPACES >= 2 {
            bus.write32(qreg("ns2_size_lo"), NS2_BLOCKS as u32);
        }
        for (g, (y, nsid, r, w, first, last)) in grant_table(grants).into_iter().enumerate() {
            let p = format!("grant{g}");
            bus.write32(qreg(&format!("{p}_first_lo")), first as u32);
            bus.write32(qreg(&format!("{p}_first_hi")), (first >> 32) as u32);
            bus.write32(qreg(&format!("{p}_last_lo")), last as u32);
            bus.write32(qreg(&format!("{p}_last_hi")), (last >> 32) as u32);
            bus.write32(
                qreg(&format!("{p}_ctrl")),
                u32::from(r) | u32::from(w) << 1 | nsid << 8 | u32::from(y) << 16,
            );
        }
        bus.write32(qreg("ctrl"), 1);
        // A finite retry limit where the target may die (7: none).
        let retry_limit = if input.faults.iter().any(|f| matches!(f.1, Fault::RoceDies)) {
            5
        } else {
            7
        };
        let mut rbus = env.fw_bus.mmio(&mut env.sim).at(u64::from(roce));
        for (i, c) in confs.iter().enumerate() {
            program_qp(&mut rbus, i, c, mtu_code, retry_limit << 24 | RETRY_TIMEOUT);
            rbus.write32(crate::suites::rdma::engine::reg(&format!("qp{i}_ctrl")), 1);
        }
        link.borrow_mut().target.icd_max = rbus.read32(roce_csr::IN_CAPSULE) as usize;
        let mut bus = env.fw_bus.mmio(&mut env.sim);
        // A refused write (a QP the chip does not have) changes nothing and is reported.
        bus.write32(chip_csr::ROUTE_SEL, 1);
        bus.write32(chip_csr::ROUTE_SET, 1 << 31 | 0x7f);
        let err = bus.read32(chip_csr::ROUTE_ERR);
        if err != 2 {
            return Err(format!(
                "route_err reads {err:#x} after binding SQ 1 to QP 127 (expected bad_channel)"
            ));
        }
        bus.write32(chip_csr::ROUTE_ERR, 3);
        // The same for a connection the chip does not have.
        bus.write32(chip_csr::ROUTE_SET, 1 << 31 | 1 << 16 | 0x7f);
        let err = bus.read32(chip_csr::ROUTE_ERR);
        if err != 2 {
            return Err(format!(
            "route_err reads {err:#x} after binding SQ 1 to NVMe/TCP connection 127 (expected bad_channel)"
        ));
        }
        bus.write32(chip_csr::ROUTE_ERR, 3);
        for &(y, e) in writes.iter() {
            bus.write32(chip_csr::ROUTE_SEL, u32::from(y));
            bus.write32(chip_csr::ROUTE_SET, e);
        }
        for y in 1..=field_u16(chip_csr::INFO_QUEUES_RESET) {
            bus.write32(chip_csr::ROUTE_SEL, u32::from(y));
            let got = bus.read32(chip_csr::ROUTE_GET);
            let want = route_word(table, y);
            if got != want {
                return Err(format!(
                    "route_get of SQ {y} reads {got:#x}, the contract says {want:#x}"
                ));
            }
        }
        let dgst = bus.read32(chip_csr::TCP_DGST);
        if dgst != u32::from(input.tcp_dgst) {
            return Err(format!(
                "chip_csr.tcp_dgst reads {dgst:#x}, firmware wrote {:#x}",
                input.tcp_dgst
            ));
        }
        wait_tcp_connections(env)
    }
}

/// Firmware waits, reading `chip_csr.tcp_conn`, until every NVMe/TCP connection either took its
/// ICResp or ended (a hostile target's); what it reads must match the status outputs.
pub(crate) fn wait_tcp_connections<T: Dut>(env: &mut Env<T>) -> Result<(), String> {
    let n = super::session::channels(super::session::Transport::Tcp);
    let all = (1u32 << n) - 1;
    let start = env.sim.cycle();
    loop {
        let v = env.fw_bus.mmio(&mut env.sim).read32(chip_csr::TCP_CONN);
        let (up, dead) = (v & 0xffff, v >> 16);
        let (o_up, o_dead) = (
            env.sim.signal("tcp_connected_o").get() as u32,
            env.sim.signal("tcp_dead_o").get() as u32,
        );
        // The register is sampled a few cycles before the outputs: a bit may have risen since.
        if up & !o_up != 0 || dead & !o_dead != 0 {
            return Err(format!(
                "chip_csr.tcp_conn reads {v:#x}, but tcp_connected_o is {o_up:#x} and tcp_dead_o {o_dead:#x}"
            ));
        }
        if (up | dead) & all == all {
            return Ok(());
        }
        if env.sim.cycle() - start > 100_000 {
            let link = env.fw_bus.mmio(&mut env.sim).read32(chip_csr::TCP_LINK);
            return Err(format!(
                "the NVMe/TCP connections never came up: chip_csr.tcp_conn {v:#x}, tcp_link {link:#x} (TCP up bits 15:0, failed 31:16)"
            ));
        }
    }
}

/// Runs until no queue bound to a channel `on` accepts has a command outstanding (the host
/// consuming completions meanwhile); `Ok(false)` if that takes more than `limit` cycles.
/// After a reset hit: the commands the host still waited for are dropped (their CQEs may
/// never come).
fn mark_dropped<T: Dut>(env: &Env<T>, sent: &mut [Sent]) {
    let out: BTreeSet<(u16, u16)> = env
        .host
        .model
        .sqs
        .iter()
        .flat_map(|(q, s)| s.outstanding.keys().map(move |c| (*q, *c)))
        .collect();
    for s in sent.iter_mut() {
        s.dropped |= out.contains(&(s.sqid, s.cid));
    }
}

/// Host memory's regions as they are now: nothing may change them after a reset.
fn snapshot<T: Dut>(env: &Env<T>, regions: &[(u64, Vec<u8>)]) -> Vec<(u64, Vec<u8>)> {
    regions
        .iter()
        .map(|(a, r)| (*a, env.mem.borrow().mem.read_vec(*a, r.len())))
        .collect()
}

/// The host's bring-up after a `what` (controller or hardware) reset: the controller enabled,
/// the same I/O queue pairs created, the AERs armed again.
fn bring_up_again<T: Dut>(
    env: &mut Env<T>,
    pairs: &[Pair],
    queues: u16,
    live: &[u16],
    what: &str,
) -> Result<(), String> {
    env.enable(32, 32, false)?;
    for (i, p) in pairs.iter().take(usize::from(queues)).enumerate() {
        let vectors = env.vectors;
        create_pair(env, i as u16 + 1, p, vectors)?;
    }
    rearm_aer(env)?;
    let again: Vec<u16> = (1..=queues)
        .filter(|y| env.host.model.sqs.contains_key(y))
        .collect();
    if again != live {
        return Err(format!(
            "after the {what} reset the host created the queues {again:?}, before it {live:?}"
        ));
    }
    Ok(())
}

/// What `chip_csr.route_get` reads for SQ `y` under `table`: bit 31 bound, bit 16 NVMe/TCP
/// (else RoCE), the channel in the low bits; 0 for an unbound queue.
fn route_word(table: &BTreeMap<u16, Chan>, y: u16) -> u32 {
    table.get(&y).map_or(0, |&c| match c {
        Chan::Roce(q) => 1 << 31 | q as u32,
        Chan::Tcp(q) => 1 << 31 | 1 << 16 | q as u32,
    })
}

/// The region of `regions` holding the buffer piece of `n` bytes at `addr`, and the piece's
/// offset in it.
fn piece(
    regions: &mut [(u64, Vec<u8>)],
    addr: u64,
    n: usize,
) -> Result<(&mut Vec<u8>, usize), String> {
    let r = regions
        .iter_mut()
        .find(|r| r.0 <= addr && addr + n as u64 <= r.0 + r.1.len() as u64)
        .ok_or("a buffer piece outside its region")?;
    Ok((&mut r.1, (addr - r.0) as usize))
}

fn drain<T: Dut>(
    env: &mut Env<T>,
    table: &BTreeMap<u16, Chan>,
    on: impl Fn(&Chan) -> bool,
    limit: u64,
) -> Result<bool, String> {
    let sqs: Vec<u16> = table
        .iter()
        .filter(|(_, c)| on(c))
        .map(|(y, _)| *y)
        .collect();
    let start = env.sim.cycle();
    while sqs.iter().any(|y| {
        env.host
            .model
            .sqs
            .get(y)
            .is_some_and(|q| !q.outstanding.is_empty())
    }) {
        env.consume_all()?;
        env.step()?;
        if env.sim.cycle() - start > limit {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The RoCE target died: the host waits for every command of the queues on RoCE to complete
/// (the QPs give up after their retry limit, or firmware disables them once the keep-alive
/// expires: 22h), then firmware resets each QP (`ctrl.en` 0
/// then 1, from the same connection registers) and the target's side of it, and the target
/// is reachable again.
fn restart_roce<T: Dut>(
    env: &mut Env<T>,
    link: &Rc<RefCell<RoceLink>>,
    table: &BTreeMap<u16, Chan>,
    qps: usize,
) -> Result<(), String> {
    let roce = chip_csr::MAP_ROCE_BASE_RESET;
    let ctrl = |q: usize| crate::suites::rdma::engine::reg(&format!("qp{q}_ctrl"));
    // A QP gives up after its retry limit only while a capsule is unacknowledged; a command
    // whose capsule the target acknowledged before dying waits for a response that never
    // comes. The host's keep-alive then expires (as an NVMe-oF host's would) and firmware
    // disables the QPs, which completes what they hold with 22h.
    if !drain(env, table, |c| matches!(c, Chan::Roce(_)), KEEP_ALIVE)? {
        let mut rbus = env.fw_bus.mmio(&mut env.sim).at(u64::from(roce));
        for q in 0..qps {
            rbus.write32(ctrl(q), 0);
        }
        if !drain(env, table, |c| matches!(c, Chan::Roce(_)), 50_000)? {
            return Err("the RoCE target died and the commands of the queues on RoCE never completed, neither after the retry limit (5) nor with their QPs disabled".to_string());
        }
    }
    let mut rbus = env.fw_bus.mmio(&mut env.sim).at(u64::from(roce));
    for q in 0..qps {
        rbus.write32(ctrl(q), 0);
        link.borrow_mut().target.reset_qp(q);
        rbus.write32(ctrl(q), 1);
    }
    link.borrow_mut().dead = false;
    Ok(())
}

/// Firmware restarts the NVMe/TCP engine after a target killed a connection, as the contract
/// says: once no queue bound to a connection has a command in flight (the dead connection's
/// complete with 22h), `tcp_ctrl.run` 0 then 1; the TCP engine underneath opens new
/// connections (fresh targets) and every connection must come up again.
fn restart_tcp<T: Dut>(
    env: &mut Env<T>,
    tcp_link: &Rc<RefCell<TcpLink>>,
    table: &BTreeMap<u16, Chan>,
) -> Result<(), String> {
    if !drain(env, table, |c| matches!(c, Chan::Tcp(_)), 300_000)? {
        return Err(format!(
            "a target killed its NVMe/TCP connection (tcp_dead_o {:#x}) and the commands of the queues on NVMe/TCP never completed",
            env.sim.signal("tcp_dead_o").get()
        ));
    }
    // NVMe/TCP held in reset, every TCP connection aborted (an RST to the old peer) and,
    // once the remote side listens anew, opened again; then NVMe/TCP runs.
    let n = tcp_link.borrow().targets.len();
    env.fw_bus.mmio(&mut env.sim).write32(chip_csr::TCP_CTRL, 0);
    let mut tbus = env
        .fw_bus
        .mmio(&mut env.sim)
        .at(u64::from(chip_csr::MAP_TCP_BASE_RESET));
    for c in 0..n {
        tbus.write32(crate::suites::tcp::creg(c, 8), 4);
    }
    // `open` counts only in CLOSED: wait for each abort's RST to go out.
    for c in 0..n {
        let mut tries = 0;
        while tbus.read32(crate::suites::tcp::creg(c, 12)) & 0xf != 0 {
            tries += 1;
            if tries > 2000 {
                return Err(format!(
                    "TCP connection {c} never reached CLOSED after abort (state {:#x})",
                    tbus.read32(crate::suites::tcp::creg(c, 12))
                ));
            }
        }
    }
    tcp_link.borrow_mut().restart();
    for c in 0..n {
        tbus.write32(crate::suites::tcp::creg(c, 8), 1);
    }
    env.fw_bus.mmio(&mut env.sim).write32(chip_csr::TCP_CTRL, 1);
    let all = (1u64 << n) - 1;
    let start = env.sim.cycle();
    while env.sim.signal("tcp_connected_o").get() != all || env.sim.signal("tcp_dead_o").get() != 0
    {
        env.consume_all()?;
        env.step()?;
        if env.sim.cycle() - start > 50_000 {
            let (up, dead) = (
                env.sim.signal("tcp_connected_o").get(),
                env.sim.signal("tcp_dead_o").get(),
            );
            let mut tbus = env
                .fw_bus
                .mmio(&mut env.sim)
                .at(u64::from(chip_csr::MAP_TCP_BASE_RESET));
            let states: Vec<u32> = (0..n)
                .map(|c| tbus.read32(crate::suites::tcp::creg(c, 12)))
                .collect();
            let t = tcp_link.borrow();
            return Err(format!(
                "after tcp_ctrl.run 0 -> 1 the NVMe/TCP connections never came up again: tcp_connected_o {up:#x}, tcp_dead_o {dead:#x}, TCP state CSRs {states:#x?}, targets' violations {:?}, TermReqs {:?}",
                t.targets.iter().map(|x| x.violations.first()).collect::<Vec<_>>(),
                t.targets.iter().map(|x| &x.term_reqs).collect::<Vec<_>>(),
            ));
        }
    }
    Ok(())
}

/// Every register of every block on the firmware bus (the generated maps' `RESET_CHECK`), read
/// before firmware writes anything: at power-on the readings are returned (`power_on` is
/// `None`); right after a hardware reset in mid-traffic each must read as it did at power-on
/// (no register, counter or table entry survives the reset). Both times, the bits the register
/// block itself holds (read-write fields; write-only ones read 0) must read the map's reset
/// value; the other bits show live state or constants, so for them power-on is the rule.
fn check_reset_values<T: Dut>(
    env: &mut Env<T>,
    power_on: Option<&[u32]>,
) -> Result<Vec<u32>, String> {
    use crate::rtl::regs::{chip_info_csr, nvme_tcp_csr, tcp_csr};
    // (block, base, its registers: name, offset, the bits the block decides, reset value)
    type Regs = &'static [(&'static str, u32, u32, u32)];
    let blocks: [(&str, u32, Regs); 7] = [
        (
            "chip_csr",
            chip_csr::MAP_CHIP_BASE_RESET,
            chip_csr::RESET_CHECK,
        ),
        (
            "chip_info_csr",
            chip_csr::MAP_CHIP_INFO_BASE_RESET,
            chip_info_csr::RESET_CHECK,
        ),
        (
            "nvme_csr",
            chip_csr::MAP_NVME_BASE_RESET,
            nvme_csr::RESET_CHECK,
        ),
        (
            "qos_csr",
            chip_csr::MAP_QOS_BASE_RESET,
            qos_csr::RESET_CHECK,
        ),
        (
            "roce_csr",
            chip_csr::MAP_ROCE_BASE_RESET,
            roce_csr::RESET_CHECK,
        ),
        (
            "nvme_tcp_csr",
            chip_csr::MAP_NVME_TCP_BASE_RESET,
            nvme_tcp_csr::RESET_CHECK,
        ),
        (
            "tcp_csr",
            chip_csr::MAP_TCP_BASE_RESET,
            tcp_csr::RESET_CHECK,
        ),
    ];
    let mut bad = Vec::new();
    let mut got = Vec::new();
    let mut bus = env.fw_bus.mmio(&mut env.sim);
    for (block, base, regs) in blocks {
        for &(name, off, mask, reset) in regs {
            let v = bus.read32(base + off);
            if v & mask != reset & mask {
                bad.push(format!(
                    "{block}.{name} {v:#x}: its read-write bits {mask:#x} are not the map's reset value {reset:#x}"
                ));
            }
            if let Some(&was) = power_on.and_then(|p| p.get(got.len())) {
                if v != was {
                    bad.push(format!("{block}.{name} {v:#x} (at power-on {was:#x})"));
                }
            }
            got.push(v);
        }
    }
    // The tables behind a select register: the routing table must hold the contract's reset
    // binding (SQ y on QP y - 1, the default transport RoCE), and each queue's counters
    // (`nvme_csr.cnt_sel`) read as at power-on.
    let queues = field_u16(chip_csr::INFO_QUEUES_RESET);
    let qps = super::session::channels(super::session::Transport::Roce);
    let table = routes(&[], qps, 0, queues);
    for y in 1..=queues {
        bus.write32(chip_csr::ROUTE_SEL, u32::from(y));
        let v = bus.read32(chip_csr::ROUTE_GET);
        let want = route_word(&table, y);
        if v != want {
            bad.push(format!(
                "chip_csr.route_get of SQ {y} {v:#x} (the reset binding {want:#x})"
            ));
        }
    }
    bus.write32(chip_csr::ROUTE_SEL, 0);
    let nvme = chip_csr::MAP_NVME_BASE_RESET;
    for q in 0..=4u32 {
        bus.write32(nvme + nvme_csr::CNT_SEL, q);
        for (name, off) in [
            ("cnt_fetched", nvme_csr::CNT_FETCHED),
            ("cnt_completed", nvme_csr::CNT_COMPLETED),
        ] {
            let v = bus.read32(nvme + off);
            if let Some(&was) = power_on.and_then(|p| p.get(got.len())) {
                if v != was {
                    bad.push(format!(
                        "nvme_csr.{name} of queue {q} {v:#x} (at power-on {was:#x})"
                    ));
                }
            }
            got.push(v);
        }
    }
    bus.write32(nvme + nvme_csr::CNT_SEL, 0);
    if bad.is_empty() {
        Ok(got)
    } else {
        Err(format!(
            "{}, registers do not read as they should: {}",
            if power_on.is_some() {
                "right after a hardware reset in mid-traffic"
            } else {
                "at power-on"
            },
            bad.join(", ")
        ))
    }
}

fn field_u16(v: u32) -> u16 {
    v as u16
}

/// Nothing reaches host memory while the controller is reset: no AXI write is accepted from
/// CSTS.RDY's fall (a controller reset) or the reset input's rise (a hardware reset) to the
/// new bring-up, and every region placed before the last reset holds, at the end, what it
/// held when RDY fell or the reset input was released (no late byte of a dropped command
/// lands later).
fn check_quiet<T: Dut>(
    env: &Env<T>,
    resets: &[(u64, u64)],
    frozen: &[(u64, Vec<u8>)],
) -> Result<(), String> {
    let mem = env.mem.borrow();
    for t in mem.log.iter().filter(|t| t.dir == Dir::Write) {
        if let Some(r) = resets
            .iter()
            .find(|r| r.0 <= t.accepted && t.accepted < r.1)
        {
            return Err(format!(
                "a host-memory write of {} bytes at {:#x} accepted at cycle {}, after CSTS.RDY fell at cycle {} and before the host enabled the controller again (cycle {})",
                t.req.len, t.req.addr, t.accepted, r.0, r.1
            ));
        }
    }
    for (start, want) in frozen {
        let got = mem.mem.read_vec(*start, want.len());
        if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
            return Err(format!(
                "host memory at {:#x} changed after the last controller reset (CSTS.RDY had fallen): {:#04x}, was {:#04x}",
                start + i as u64,
                got[i],
                want[i]
            ));
        }
    }
    Ok(())
}

fn check<T: Dut>(
    env: &Env<T>,
    link: &RoceLink,
    tcp_link: &TcpLink,
    sent: &[Sent],
    bufs: &[Buf],
    regions: &[(u64, Vec<u8>)],
) -> Result<(), String> {
    let t = &link.target;
    if let Some(e) = t.errors.first() {
        return Err(format!("RoCE target: {e}"));
    }
    // Exactly the fallback commands reached firmware, once each (a dropped one at most once),
    // with their SQE and SQ id.
    let fw: Vec<(u16, Sqe)> = env.fallback_received().iter().map(|r| (r.1, r.2)).collect();
    let cmd = |r: &(u16, Sqe)| (r.0, u16::from_le_bytes([r.1[2], r.1[3]]), r.1[0]);
    if let Some(r) = fw
        .iter()
        .find(|r| !sent.iter().any(|s| s.fallback && (s.sqid, s.sqe) == **r))
    {
        return Err(format!(
            "firmware received a fallback command (SQ, CID, opcode) {:?} the host did not send as one",
            cmd(r)
        ));
    }
    for s in sent.iter().filter(|s| s.fallback) {
        let n = fw.iter().filter(|r| **r == (s.sqid, s.sqe)).count();
        if n > 1 || (n == 0 && !s.dropped) {
            return Err(format!(
                "firmware received fallback command (SQ, CID, opcode) {:?} {n} times{}",
                cmd(&(s.sqid, s.sqe)),
                if s.dropped {
                    " (dropped by a reset)"
                } else {
                    ""
                }
            ));
        }
    }
    // Exactly the commands the chip must carry over RoCE reached the RoCE target, once each,
    // on their QP.
    for s in sent {
        let n = t
            .executed
            .iter()
            .filter(|e| e.cid == s.cid && Some(Chan::Roce(e.qp)) == s.via)
            .count();
        let want = usize::from(matches!(s.via, Some(Chan::Roce(_))));
        if n > want || (n < want && !s.dropped && !s.doomed) {
            return Err(format!(
                "SQ {} CID {:#x} (opcode {:#04x}, status {:#x}{}): the RoCE target executed it {n} times on its channel {:?}, expected {want}",
                s.sqid, s.cid, s.sqe[0], s.status,
                if s.dropped { ", dropped by a reset" } else { "" },
                s.via
            ));
        }
    }
    if let Some(e) = t.executed.iter().find(|e| {
        !sent
            .iter()
            .any(|s| s.cid == e.cid && s.via == Some(Chan::Roce(e.qp)))
    }) {
        return Err(format!(
            "the RoCE target executed CID {:#x} on QP {}, which the chip had not to carry there",
            e.cid, e.qp
        ));
    }
    // Host memory: every region as placed, but for the successful Reads' buffers, which hold
    // exactly what their target sent; Writes carried exactly their buffers.
    // A dropped Read's buffer may hold, byte by byte, what it held or what its target sent
    // (`alt`).
    let mem = &env.mem.borrow().mem;
    let mut expect: Vec<(u64, Vec<u8>)> = regions.to_vec();
    let mut alt: Vec<(u64, Vec<u8>)> = regions.to_vec();
    for b in bufs {
        let Some(s) = sent.iter().find(|s| s.sqid == b.sqid && s.cid == b.cid) else {
            continue;
        };
        let Some(via) = s.via else { continue };
        if (s.mem_err || (s.doomed && (s.status != 0 || s.dropped))) && !b.write {
            // Host memory failed the Read's writes, or its connection died under it (and it
            // did not succeed, or a reset dropped it): its buffer's bytes are undefined (a
            // cut-through C2HData's bytes may reach memory before the PDU is found bad).
            for &(addr, n) in &b.pieces {
                let (r, o) = piece(&mut alt, addr, n)?;
                r[o..o + n].copy_from_slice(&mem.read_vec(addr, n));
            }
            continue;
        }
        if s.status != 0 {
            continue;
        }
        let len = b.pieces.iter().map(|p| p.1).sum::<usize>();
        let who = format!("SQ {} CID {:#x} on {via:?}", b.sqid, b.cid);
        if b.write {
            let want = buf_bytes(b, mem);
            let got = match via {
                Chan::Roce(q) => t
                    .write_data
                    .iter()
                    .find(|w| w.0 == q && w.1 == b.cid)
                    .map(|w| w.2.clone())
                    .ok_or(format!(
                        "{who}: a successful Write the target got no data for"
                    )),
                Chan::Tcp(c) => tcp::write_data(tcp_link.holder(c, b.cid), b.cid, len)
                    .map_err(|e| format!("{who}: {e}")),
            };
            // A dropped Write need not have reached its target; if it did, it carried its
            // buffer.
            let got = match got {
                Err(_) if s.dropped => continue,
                g => g?,
            };
            if got != want {
                let i = (0..want.len().min(got.len()))
                    .find(|&i| got[i] != want[i])
                    .unwrap_or(want.len().min(got.len()));
                return Err(format!(
                    "{who}: the Write carried {} bytes to the target, not its {} host bytes (first difference at byte {i})",
                    got.len(),
                    want.len()
                ));
            }
            continue;
        }
        let data = match via {
            Chan::Roce(q) => t
                .read_data
                .iter()
                .find(|r| r.0 == q && r.1 == b.cid)
                .map(|r| r.2.clone())
                .ok_or(format!(
                    "{who}: a successful Read the target sent no data for"
                )),
            Chan::Tcp(c) => tcp::read_data(tcp_link.holder(c, b.cid), b.cid, len)
                .map_err(|e| format!("{who}: {e}")),
        };
        let data = match data {
            Err(_) if s.dropped => {
                // A hardware reset may cut a dropped Read's C2HData short: each byte of its
                // buffer holds what it held or what its target sent for it.
                if let Chan::Tcp(c) = via {
                    let part = tcp::read_bytes(tcp_link.holder(c, b.cid), b.cid, len);
                    let mut k = 0;
                    for &(addr, n) in &b.pieces {
                        let (r, o) = piece(&mut alt, addr, n)?;
                        for (i, x) in part[k..k + n].iter().enumerate() {
                            if let Some(x) = x {
                                r[o + i] = *x;
                            }
                        }
                        k += n;
                    }
                }
                continue;
            }
            d => d?,
        };
        let mut k = 0;
        for &(addr, n) in &b.pieces {
            for e in [&mut alt, &mut expect] {
                let (r, o) = piece(e, addr, n)?;
                r[o..o + n].copy_from_slice(&data[k..k + n]);
                if s.dropped {
                    break;
                }
            }
            k += n;
        }
    }
    for ((start, want), (_, or)) in expect.iter().zip(&alt) {
        let got = mem.read_vec(*start, want.len());
        if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i] && got[i] != or[i]) {
            let b = bufs.iter().find(|b| {
                b.pieces
                    .iter()
                    .any(|&(a, n)| a <= start + i as u64 && start + (i as u64) < a + n as u64)
            });
            return Err(format!(
                "host memory at {:#x} is {:#04x}, expected {:#04x} (in the buffer of {})",
                start + i as u64,
                got[i],
                want[i],
                b.map_or("no command".to_string(), |b| format!(
                    "SQ {} CID {:#x}",
                    b.sqid, b.cid
                ))
            ));
        }
    }
    Ok(())
}

/// Interrupts (coalescing off: the reset value of Feature 08h): each lands on a vector some
/// interrupt-enabled CQ uses, after a CQE of such a CQ was written; there are no more on a
/// vector than CQEs were written to its CQs; and the last CQE written to each such CQ is
/// covered by an interrupt on its vector at or after its write response (no completion is
/// left without an interrupt). The exact coalescing rule is the `nvme` suite's.
fn check_irq<T: Dut>(env: &Env<T>) -> Result<(), String> {
    let mem = env.mem.borrow();
    let irqs: Vec<(u64, u16)> = env
        .irq
        .borrow()
        .received
        .iter()
        .map(|(c, v)| (*c, v[0] as u16))
        .collect();
    // CQE writes per vector: the cycles of their write responses.
    let mut cqes: BTreeMap<u16, Vec<u64>> = BTreeMap::new();
    for r in env.host.rings.iter().filter(|r| r.cq) {
        let Some(v) = r.vector else { continue };
        let e = cqes.entry(v).or_default();
        e.extend(
            mem.log
                .iter()
                .filter(|t| t.dir == Dir::Write && r.range.contains(&t.req.addr))
                .map(|t| t.done),
        );
    }
    for &(at, v) in &irqs {
        let Some(w) = cqes.get(&v) else {
            return Err(format!(
                "interrupt on vector {v} at cycle {at}: no interrupt-enabled CQ uses it"
            ));
        };
        if !w.iter().any(|&c| c <= at) {
            return Err(format!(
                "interrupt on vector {v} at cycle {at} before any CQE was written to its CQs"
            ));
        }
    }
    // The last CQE of each CQ the controller still has (not one a reset dropped).
    let mut last: BTreeMap<u16, u64> = BTreeMap::new();
    for r in env.host.rings.iter().filter(|r| r.cq && r.dead == u64::MAX) {
        let Some(v) = r.vector else { continue };
        if let Some(d) = mem
            .log
            .iter()
            .filter(|t| t.dir == Dir::Write && r.range.contains(&t.req.addr))
            .map(|t| t.done)
            .max()
        {
            let e = last.entry(v).or_default();
            *e = (*e).max(d);
        }
    }
    for (v, w) in &cqes {
        let n = irqs.iter().filter(|x| x.1 == *v).count();
        if n > w.len() {
            return Err(format!(
                "{n} interrupts on vector {v}, for {} CQEs written to its CQs",
                w.len()
            ));
        }
        if let Some(&last) = last.get(v) {
            if !irqs.iter().any(|&(c, x)| x == *v && c >= last) {
                return Err(format!(
                    "the last CQE on vector {v} (written at cycle {last}) is followed by no interrupt on it (interrupts: {:?})",
                    irqs.iter().filter(|x| x.1 == *v).map(|x| x.0).collect::<Vec<_>>()
                ));
            }
        }
    }
    Ok(())
}

/// The largest C2HData payloads the target may send: any size the engine takes, up to the hold
/// buffer when data digests are possible (a C2HData is then held whole until its digest is
/// checked: larger ones are refused with FES 05h). Mostly 256 bytes and more, below that only
/// where the hold buffer is smaller (configs/smallest.toml: 16 bytes).
fn c2h_sizes() -> BoxedStrategy<u32> {
    let cap = if config::NVME_TCP_DIGESTS {
        HOLD_BYTES
    } else {
        8192
    };
    if cap >= 1024 {
        prop_oneof![256u32..1024, 1024u32..=cap].boxed()
    } else {
        (cap.min(256)..=cap).boxed()
    }
}

/// The digests the chip's NVMe/TCP engine can ask for: both, or none where the configuration
/// leaves them out (`nvme_tcp.digests = false`: `chip_csr.tcp_dgst` is then written in vain).
fn supported_digests() -> u8 {
    if config::NVME_TCP_DIGESTS {
        3
    } else {
        0
    }
}

/// The NVMe/TCP side: every connection came up asking for `chip_csr.tcp_dgst`'s digests (each
/// target it had: a restart opens new ones) and stayed up with no protocol fault on either
/// side, but for the hostile target that killed its connection ([`TcpConf::die`]), which
/// must have been answered as the specification says (its own checks) and never by a host
/// protocol fault; each connection's targets together received exactly the commands of the
/// queue bound to it, once each (a dropped or doomed one at most once), as the host wrote them
/// (opcode, NSID, CDW10-15). At the end every connection is up, unless its hostile target
/// killed it after the last restart could be done.
fn check_tcp<T: Dut>(
    env: &Env<T>,
    tcp_link: &TcpLink,
    dgst: u8,
    sent: &[Sent],
) -> Result<(), String> {
    let n = tcp_link.targets.len();
    // The TCP connections under NVMe/TCP never failed: a lossless link, and a hostile target
    // kills only its NVMe/TCP connection.
    let (tup, tfailed) = (
        env.sim.signal("tcp_up_o").get(),
        env.sim.signal("tcp_failed_o").get(),
    );
    if tup != (1u64 << n) - 1 || tfailed != 0 {
        return Err(format!(
            "TCP connections: tcp_up_o {tup:#x}, tcp_failed_o {tfailed:#x}: every one should be up"
        ));
    }
    let mut down = 0u64;
    for c in 0..n {
        let all = tcp_link.all(c);
        for (k, t) in all.iter().enumerate() {
            let who = format!("NVMe/TCP connection {c} (target {k})");
            if let Some(v) = t.violations.first() {
                return Err(format!("{who}: {v}"));
            }
            match t.received.first() {
                Some(Pdu::IcReq { hdgst, ddgst, .. }) => {
                    let asked = u8::from(*hdgst) | u8::from(*ddgst) << 1;
                    if asked != dgst & supported_digests() {
                        return Err(format!(
                            "{who}: the ICReq asks for digests {asked:#x}, chip_csr.tcp_dgst is {dgst:#x} (the configuration supports {:#x})",
                            supported_digests()
                        ));
                    }
                }
                other => {
                    return Err(format!(
                        "{who}: the first PDU the target got is {other:?}, not an ICReq"
                    ))
                }
            }
            let hostile = t.committed.is_some();
            if (!t.term_reqs.is_empty() || t.dead) && !hostile {
                return Err(format!(
                    "{who}: connection ended, with no fault of the target (TermReqs {:?})",
                    t.term_reqs
                ));
            }
            if hostile && k + 1 == all.len() {
                down |= 1 << c;
            }
        }
        let mut got: Vec<u16> = all
            .iter()
            .flat_map(|t| t.received.iter())
            .filter_map(|p| match p {
                Pdu::CapsuleCmd { sqe, .. } => Some(u16::from_le_bytes([sqe[2], sqe[3]])),
                _ => None,
            })
            .collect();
        let mine: Vec<&Sent> = sent
            .iter()
            .filter(|s| s.via == Some(Chan::Tcp(c)))
            .collect();
        // Each command once; one dropped by a controller reset or doomed by its connection's
        // death at most once.
        let mut want: Vec<u16> = mine
            .iter()
            .filter(|s| !(s.dropped || s.doomed) || got.contains(&s.cid))
            .map(|s| s.cid)
            .collect();
        got.sort_unstable();
        want.sort_unstable();
        if got != want {
            let extra: Vec<&Sent> = sent
                .iter()
                .filter(|s| s.via != Some(Chan::Tcp(c)) && got.contains(&s.cid))
                .collect();
            return Err(format!(
                "NVMe/TCP connection {c}'s targets received the CIDs {got:#x?}; the chip had {want:#x?} to carry to it (commands of other channels with those CIDs: {:?})",
                extra
                    .iter()
                    .map(|s| format!("SQ {} CID {:#x} status {:#x} via {:?}", s.sqid, s.cid, s.status, s.via))
                    .collect::<Vec<_>>()
            ));
        }
        for s in mine.into_iter().filter(|s| got.contains(&s.cid)) {
            let cap = tcp::capsules(tcp_link.holder(c, s.cid), s.cid)[0];
            if cap[0] != s.sqe[0] || cap[4..8] != s.sqe[4..8] || cap[40..64] != s.sqe[40..64] {
                return Err(format!(
                    "SQ {} CID {:#x}: the capsule's SQE {:02x?} is not the host's {:02x?} (opcode, NSID, CDW10-15)",
                    s.sqid,
                    s.cid,
                    &cap[..],
                    &s.sqe[..]
                ));
            }
        }
    }
    let (up, dead) = (
        env.sim.signal("tcp_connected_o").get(),
        env.sim.signal("tcp_dead_o").get(),
    );
    let all = (1u64 << n) - 1;
    if up | down != all || dead & !down != 0 {
        return Err(format!(
            "tcp_connected_o {up:#x}, tcp_dead_o {dead:#x}: every connection should be up (but {down:#x}, killed by its target)"
        ));
    }
    Ok(())
}

/// The property.
pub struct ChipProp;

impl Property for ChipProp {
    type Input = Input;
    const NAME: &'static str = "chip";
    fn strategy() -> BoxedStrategy<Input> {
        let pair = (
            prop_oneof![Just(4u16), 8u16..33],
            8u16..33,
            0u8..4,
            any::<bool>(),
        )
            .prop_map(|(sq, cq, vector, ien)| Pair {
                sq,
                cq,
                prio: 2,
                vector,
                ien,
            });
        let grant = prop_oneof![
            6 => Just(Grant::Full),
            1 => Just(Grant::ReadOnly),
            1 => Just(Grant::WriteOnly),
            1 => (any::<u8>(), any::<u8>()).prop_map(|(a, b)| Grant::Window(a, b)),
            1 => Just(Grant::None),
        ];
        // A third of the cases all RoCE (today's bindings), a quarter all NVMe/TCP (SQ 3 may
        // take SQ 1's or SQ 2's connection, or be unbound), the rest mixed.
        let tcp_bind = prop_oneof![
            4 => (0u8..2).prop_map(Bind::Tcp),
            1 => Just(Bind::Off),
        ];
        let any_bind = prop_oneof![
            3 => (0u8..2).prop_map(Bind::Tcp),
            3 => (0u8..2).prop_map(Bind::Roce),
            1 => Just(Bind::Off),
        ];
        let routes = prop_oneof![
            3 => Just(Routes::Reset),
            2 => Just(Routes::Swapped),
            1 => Just(Routes::Sq2Unbound),
            5 => [tcp_bind.clone(), tcp_bind.clone(), tcp_bind].prop_map(Routes::Table),
            7 => [any_bind.clone(), any_bind.clone(), any_bind].prop_map(Routes::Table),
        ];
        let tcp = (
            prop_oneof![
                Just(4096u32),
                Just(8192),
                (1024u32..4096).prop_map(|x| x * 4)
            ],
            prop_oneof![3 => Just(0u8), 1 => 1u8..=3],
            c2h_sizes(),
            prop_oneof![256u32..1024, 1024u32..17_000],
            any::<bool>(),
            prop_oneof![
                2 => Just(None),
                1 => (0u8..2, any::<u8>(), 0u8..2).prop_map(Some),
            ],
        )
            .prop_map(
                |(maxh2cdata, cpda, max_c2h, max_r2t, use_success, die)| TcpConf {
                    maxh2cdata,
                    cpda,
                    max_c2h,
                    max_r2t,
                    use_success,
                    full: false,
                    die,
                },
            );
        // Mostly commands that move data: Reads (kind 10) and Writes (5, 9).
        let kind = prop_oneof![
            4 => Just(10u8),
            2 => Just(5u8),
            1 => Just(9u8),
            3 => 0u8..9,
        ];
        let cmd =
            (0u8..4, kind, 0u64..80, 0u16..64, 0u8..12).prop_map(|(q, kind, slba, nlb, e)| Cmd {
                q,
                kind,
                slba,
                nlb,
                mem_err: e == 0,
            });
        let batch = (proptest::collection::vec(cmd, 1..12), any::<bool>());
        let fault = prop_oneof![
            1 => Just(Fault::Reset),
            1 => (0u8..4, 0u8..4, any::<u16>()).prop_map(|(kind, q, v)| Fault::Doorbell { kind, q, v }),
            1 => Just(Fault::RoceDies),
            1 => (any::<u16>(), any::<u8>()).prop_map(|(wait, cycles)| Fault::HwReset { wait, cycles }),
        ];
        let timing =
            (1u32..30, 0u8..30, 0u8..30, 0u8..20).prop_map(|(lat, stall, idle, axil)| Timing {
                read_latency: (1, lat),
                stalls: (stall, stall, stall, idle, idle),
                cmd_stall: (0, 20),
                backend_delay: 0,
                space_low: 0,
                irq_stall: 20,
                axil,
            });
        let psn = prop_oneof![Just(0u32), 0xff_fff0u32..0x100_0000, any::<u32>()];
        (
            // Two or three queues mostly, so a mixed binding has queues on both transports.
            prop_oneof![
                1 => proptest::collection::vec(pair.clone(), 1..2),
                3 => proptest::collection::vec(pair, 2..4),
            ],
            proptest::collection::vec(grant, 1..4),
            routes,
            (
                proptest::collection::vec(batch, 1..8),
                prop_oneof![
                    2 => Just(vec![]),
                    1 => proptest::collection::vec((any::<u8>(), fault), 1..3),
                ],
            ),
            timing,
            prop_oneof![4 => Just(0u8), 1 => 1u8..6],
            [psn.clone(), psn.clone(), psn.clone(), psn],
            any::<u64>(),
            proptest::sample::select(TCP_DGST_ALL.to_vec()),
            tcp,
        )
            .prop_map(
                |(
                    pairs,
                    grants,
                    routes,
                    (batches, faults),
                    timing,
                    loss,
                    psn,
                    seed,
                    tcp_dgst,
                    tcp,
                )| Input {
                    pairs,
                    grants,
                    routes,
                    tcp_dgst,
                    tcp,
                    batches,
                    faults,
                    timing,
                    loss,
                    psn,
                    seed,
                },
            )
            .boxed()
    }
    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        run(input, waves)
    }
}
