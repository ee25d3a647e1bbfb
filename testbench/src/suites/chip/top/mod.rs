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

mod checks;
mod firmware;
mod golden;
mod link;

use checks::{check, check_irq, check_quiet, check_reset_values, check_tcp, field_u16};
pub(crate) use firmware::wait_tcp_connections;
use firmware::{bring_up_again, mark_dropped, piece, restart_roce, restart_tcp, snapshot, Program};
pub(crate) use golden::target_status;
use golden::{grant_table, qos_status, route_writes, routes, sqe_for};
pub use link::RoceLink;

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
    tracing::debug!(
        "chip case start: die {:?} -> {:?}, dying {dying:?}, table {table:?}",
        input.tcp.die,
        tcp_conf.die
    );
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
    while env.host.model.outstanding() > 0 || !env.host.model.events.is_empty() {
        env.consume_all()?;
        rearm_aer(&mut env)?;
        env.step()?;
        // (Before the run's own budget ends, so that the message says what is missing.)
        if env.sim.cycle() + 1 >= env.limit {
            let t = tcp_link.borrow();
            let held: Vec<Vec<u16>> = t.targets.iter().map(|x| x.held()).collect();
            let missing: Vec<String> = env
                .host
                .model
                .sqs
                .iter()
                .flat_map(|(q, s)| s.outstanding.keys().map(move |c| (*q, *c)))
                .map(|(q, c)| {
                    let via = sent
                        .iter()
                        .rev()
                        .find(|s| s.sqid == q && s.cid == c)
                        .map(|s| {
                            format!(" via {:?}{}", s.via, if s.doomed { " doomed" } else { "" })
                        });
                    format!("SQ {q} CID {c:#x}{}", via.unwrap_or_default())
                })
                .collect();
            return Err(format!(
                "{} commands never completed ({}), doorbell fault events {:?} never reported (RoCE target: {:?}; NVMe/TCP targets hold {held:?}, violations {:?}, tcp_connected_o {:#x}, tcp_dead_o {:#x})",
                env.host.model.outstanding(),
                missing.join(", "),
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
    if tracing::enabled!(tracing::Level::DEBUG) {
        let t = tcp_link.borrow();
        tracing::debug!(
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
