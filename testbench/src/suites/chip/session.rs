//! The whole chip ready for traffic, driven one command at a time: what `testbench fio`,
//! `testbench nbd` and `bench --suite chip` run on.
//!
//! [`Session::open`] builds the chip top with the host, the firmware and the remote targets
//! around it (as the `chip` property does), has firmware give every queue a full grant on
//! namespace 1 and bind it to a channel of its transport (SQ y to the next free RoCE QP or
//! NVMe/TCP connection), and has the host enable the controller, set interrupt coalescing
//! and create the I/O queues. Then [`Session::submit`] writes SQEs with PRP buffers in host
//! memory and rings the doorbell, and [`Session::step`] runs one cycle and returns the
//! commands whose CQE the host saw, with the doorbell and CQE cycles (latency as the host
//! sees it) and a Read's data.
//!
//! Every CQE is still checked by the host model (status and DW0 as the target of the queue's
//! channel must answer, SQHD, phase, exactly once), and the targets by their own rules; a
//! violation ends the session with an error. One namespace lives behind every channel: the
//! RoCE target serves all QPs, and the NVMe/TCP targets share one namespace (one subsystem),
//! so data written on one queue reads back on any queue of the same transport.

use crate::drivers::axis::AxisSink;
use crate::models::roce_target::{Target, BLOCK};
use crate::rtl::regs::{chip_csr, qos_csr, roce_csr};
use crate::rtl::ChipTop;
use crate::sim::Sim;
use crate::suites::chip::tcp::{self, TcpConf, TcpLink};
use crate::suites::chip::top::{self as prop, RoceLink};
use crate::suites::nvme::env::{Attach, Env, Sqe, Timing};
use crate::suites::nvme::queues::{admin, create_pair, next_cid, Pair};
use crate::suites::nvme_tcp::rtl::{HOLD_BYTES, ICD_BYTES};
use crate::suites::rdma::engine::{confs, program_qp, reg};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::rc::Rc;

/// A fabric transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Transport {
    /// NVMe over RDMA (RoCEv2).
    Roce,
    /// NVMe/TCP.
    Tcp,
}

impl Transport {
    /// The name the command line uses.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Roce => "roce",
            Transport::Tcp => "nvme_tcp",
        }
    }
}

/// How a session is built.
#[derive(Clone, Debug)]
pub struct Setup {
    /// One I/O queue pair per entry (SQ id = index + 1), bound to a channel of that transport.
    pub queues: Vec<Transport>,
    /// Commands each queue may have in flight (its SQ and CQ hold one entry more).
    pub depth: u16,
    /// Size of namespace 1, in 512-byte blocks.
    pub blocks: u64,
    /// Largest command, in blocks (each command slot's host buffer is this large).
    pub max_blocks: u32,
    /// The remote latency per transport (RoCE, NVMe/TCP): cycles added to every frame or
    /// byte chunk the chip sends before the target sees it, fixed plus up to the random part.
    pub remote: [(u32, u32); 2],
    /// Host memory read latency, cycles (smallest, largest).
    pub mem_latency: (u32, u32),
    /// Interrupt coalescing (Feature 08h): aggregation threshold (0's based) and time (100 µs
    /// units); `None` leaves it off (one interrupt per completion).
    pub coalesce: Option<(u8, u8)>,
    /// Seed of every random choice (the targets' namespaces, memory latencies).
    pub seed: u64,
    /// Write an FST waveform of the whole session here.
    pub waves: Option<PathBuf>,
}

/// What a command does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Read 02h.
    Read,
    /// Write 01h.
    Write,
    /// Flush 00h.
    Flush,
    /// Write Zeroes 08h.
    WriteZeroes,
    /// Dataset Management 09h, one range, Attribute - Deallocate.
    Deallocate,
}

/// One command to submit.
#[derive(Clone, Debug)]
pub struct Io {
    pub op: Op,
    /// First block.
    pub slba: u64,
    /// Blocks (at least 1; ignored by Flush).
    pub blocks: u32,
    /// A Write's bytes (`blocks * 512`).
    pub data: Vec<u8>,
    /// The caller's tag, returned in [`Done`].
    pub tag: u64,
}

/// A command whose completion the host saw.
#[derive(Clone, Debug)]
pub struct Done {
    pub tag: u64,
    pub sqid: u16,
    pub op: Op,
    /// CQE status field (0: success).
    pub status: u16,
    /// A successful Read's bytes.
    pub data: Vec<u8>,
    /// Cycle the host began the doorbell write that published the command.
    pub doorbell: u64,
    /// Cycle the host saw its CQE.
    pub visible: u64,
}

/// Data moved on the chip's links so far (subtract two snapshots for a window).
#[derive(Clone, Copy, Debug, Default)]
pub struct Traffic {
    /// Host memory AXI4: R beats (SQE fetches, PRP lists, Write data) and W beats (CQEs,
    /// Read data), of finished bursts.
    pub axi_r: u64,
    pub axi_w: u64,
    /// RoCEv2 port: beats and bytes the chip sent (`m_axis`) and took (`s_axis`).
    pub roce_tx_beats: u64,
    pub roce_rx_beats: u64,
    pub roce_tx_bytes: u64,
    pub roce_rx_bytes: u64,
    /// NVMe/TCP streams: bytes each way (all connections).
    pub tcp_tx_bytes: u64,
    pub tcp_rx_bytes: u64,
}

impl std::ops::Sub for Traffic {
    type Output = Traffic;
    fn sub(self, o: Traffic) -> Traffic {
        Traffic {
            axi_r: self.axi_r - o.axi_r,
            axi_w: self.axi_w - o.axi_w,
            roce_tx_beats: self.roce_tx_beats - o.roce_tx_beats,
            roce_rx_beats: self.roce_rx_beats - o.roce_rx_beats,
            roce_tx_bytes: self.roce_tx_bytes - o.roce_tx_bytes,
            roce_rx_bytes: self.roce_rx_bytes - o.roce_rx_bytes,
            tcp_tx_bytes: self.tcp_tx_bytes - o.tcp_tx_bytes,
            tcp_rx_bytes: self.tcp_rx_bytes - o.tcp_rx_bytes,
        }
    }
}

/// Bytes per beat of the chip's links.
#[derive(Clone, Copy, Debug)]
pub struct Widths {
    /// Host memory AXI4 data.
    pub bus: u64,
    /// RoCEv2 AXI4-Stream.
    pub roce: u64,
    /// NVMe/TCP byte streams.
    pub tcp: u64,
}

/// A channel a queue is bound to.
#[derive(Clone, Copy, Debug)]
struct Chan {
    transport: Transport,
    index: usize,
}

/// A command in flight.
struct Flight {
    tag: u64,
    op: Op,
    slot: usize,
    len: usize,
    doorbell: u64,
}

/// One I/O queue of the session.
struct Queue {
    chan: Chan,
    /// Free command slots (host buffers).
    free: Vec<usize>,
    /// First byte of slot 0's buffer; slot `i` is `stride` bytes further.
    base: u64,
    in_flight: BTreeMap<u16, Flight>,
}

/// The chip, its host, firmware and targets.
pub struct Session {
    pub env: Env<ChipTop>,
    pub roce: Rc<RefCell<RoceLink>>,
    pub tcp: Rc<RefCell<TcpLink>>,
    sink: Rc<RefCell<AxisSink>>,
    queues: BTreeMap<u16, Queue>,
    stride: u64,
    max_blocks: u32,
    blocks: u64,
    /// Commands completed, per op.
    pub completed: u64,
    done: Vec<Done>,
}

/// The RoCE engines' retransmit timeout, cycles: long enough that the slowest remote latency
/// the session is given does not fire it.
fn retry_timeout(remote: (u32, u32)) -> u32 {
    (20_000 + 4 * (remote.0 + remote.1)).min(0xff_ffff)
}

impl Session {
    /// Builds the chip and brings it up; an error says what failed.
    pub fn open(s: &Setup) -> Result<Session, String> {
        let io_queues = crate::rtl::config::NVME_IO_QUEUE_PAIRS as u16;
        let routed = field(chip_csr::INFO_QUEUES_RESET);
        let qps = channels(Transport::Roce);
        let mtu_code = roce_csr::QP0_MTU_RESET;
        let mtus = vec![128usize << mtu_code; qps];
        let qp_confs = confs(&[0, 0x10_0000, 0x20_0000, 0x30_0000], qps, &mtus);
        let t = Timing {
            read_latency: s.mem_latency,
            stalls: (0, 0, 0, 0, 0),
            cmd_stall: (0, 0),
            backend_delay: 0,
            space_low: 0,
            irq_stall: 0,
            axil: 0,
        };
        let sim = Sim::<ChipTop>::maybe_waves(s.waves.as_deref());
        let opts = Attach {
            io_queues,
            fw_base: chip_csr::MAP_NVME_BASE_RESET,
            reorder: true,
            backend: false,
        };
        let mut env = Env::attach(sim, &t, s.seed, &opts);
        env.limit = u64::MAX;
        let (sink, roce) = RoceLink::attach(
            &mut env,
            Target::new(&qp_confs, s.blocks as usize, s.seed),
            0,
            s.seed,
        );
        roce.borrow_mut().set_idle(0);
        roce.borrow_mut().target.whole_reads = true;
        roce.borrow_mut().delay = s.remote[0];
        let conf = TcpConf {
            maxh2cdata: 65536,
            cpda: 0,
            max_c2h: HOLD_BYTES,
            max_r2t: 65536,
            use_success: false,
            full: true,
            die: None,
        };
        let wire = roce.borrow().wire.clone();
        let tcp = env.sim.add(TcpLink::new(
            channels(Transport::Tcp),
            wire,
            &conf,
            s.blocks,
            ICD_BYTES,
            s.seed,
        ));
        tcp.borrow_mut().share_namespaces();
        tcp.borrow_mut().delay = s.remote[1];
        let conns = tcp.borrow().targets.len();
        env.sim.reset(3);

        // Channels: SQ y takes the next free channel of its transport.
        let mut chans = Vec::new();
        let (mut nq, mut nc) = (0, 0);
        for (i, &tr) in s.queues.iter().enumerate() {
            let (n, have) = match tr {
                Transport::Roce => (&mut nq, qps),
                Transport::Tcp => (&mut nc, conns),
            };
            if *n >= have {
                return Err(format!(
                    "queue {} wants a {} channel, but the chip has {have} (one queue per channel: use fewer jobs on {})",
                    i + 1,
                    tr.name(),
                    tr.name()
                ));
            }
            chans.push(Chan {
                transport: tr,
                index: *n,
            });
            *n += 1;
        }
        if s.queues.is_empty() || s.queues.len() > usize::from(routed) {
            return Err(format!(
                "{} queues asked for; the chip routes 1 to {routed}",
                s.queues.len()
            ));
        }

        // Firmware.
        {
            let mut bus = env.fw_bus.mmio(&mut env.sim);
            bus.write32(chip_csr::TCP_CTRL, 0);
            bus.write32(chip_csr::TCP_DGST, 3);
            // The TCP/IP engine: addresses, timers, and every connection opened.
            crate::suites::chip::tcp::open_all(&mut env, conns);
            let mut bus = env.fw_bus.mmio(&mut env.sim);
            bus.write32(chip_csr::TCP_CTRL, 1);
            let qos = chip_csr::MAP_QOS_BASE_RESET;
            let q = |n: &str| qos + qos_reg(n);
            bus.write32(q("ns1_size_lo"), s.blocks as u32);
            bus.write32(q("ns1_size_hi"), (s.blocks >> 32) as u32);
            for (g, _) in s.queues.iter().enumerate() {
                let y = g as u32 + 1;
                let p = format!("grant{g}");
                bus.write32(q(&format!("{p}_first_lo")), 0);
                bus.write32(q(&format!("{p}_first_hi")), 0);
                bus.write32(q(&format!("{p}_last_lo")), u32::MAX);
                bus.write32(q(&format!("{p}_last_hi")), u32::MAX >> 1);
                bus.write32(q(&format!("{p}_ctrl")), 3 | 1 << 8 | y << 16);
            }
            bus.write32(q("ctrl"), 1);
            let mut rbus = env
                .fw_bus
                .mmio(&mut env.sim)
                .at(u64::from(chip_csr::MAP_ROCE_BASE_RESET));
            let retry = 7 << 24 | retry_timeout(s.remote[0]);
            for (i, c) in qp_confs.iter().enumerate() {
                program_qp(&mut rbus, i, c, mtu_code, retry);
                rbus.write32(reg(&format!("qp{i}_ctrl")), 1);
            }
            roce.borrow_mut().target.icd_max = rbus.read32(roce_csr::IN_CAPSULE) as usize;
            let mut bus = env.fw_bus.mmio(&mut env.sim);
            // Unbind every queue first, then bind ours (binding steals the channel).
            for y in 1..=routed {
                bus.write32(chip_csr::ROUTE_SEL, u32::from(y));
                bus.write32(chip_csr::ROUTE_SET, 0);
            }
            for (i, c) in chans.iter().enumerate() {
                let tr = u32::from(c.transport == Transport::Tcp) << 16;
                bus.write32(chip_csr::ROUTE_SEL, i as u32 + 1);
                bus.write32(chip_csr::ROUTE_SET, 1 << 31 | tr | c.index as u32);
            }
            let err = bus.read32(chip_csr::ROUTE_ERR);
            if err != 0 {
                return Err(format!("route_err reads {err:#x} after binding the queues"));
            }
        }
        // Every NVMe/TCP connection up (TCP, then ICReq/ICResp) before the host starts.
        crate::suites::chip::top::wait_tcp_connections(&mut env)?;

        // The host.
        env.read_cap()?;
        env.enable(32, 32, false)?;
        if let Some((thr, time)) = s.coalesce {
            admin(
                &mut env,
                0x09,
                0x08,
                u32::from(thr) | u32::from(time) << 8,
                0,
            )?;
        }
        let entries = s.depth + 1;
        let stride = (u64::from(s.max_blocks) * BLOCK as u64).div_ceil(4096) * 4096 + 4096;
        let mut queues = BTreeMap::new();
        for (i, &chan) in chans.iter().enumerate() {
            let y = i as u16 + 1;
            let p = Pair {
                sq: entries,
                cq: entries,
                prio: 2,
                vector: (i % 4) as u8,
                ien: true,
            };
            let vectors = env.vectors;
            create_pair(&mut env, y, &p, vectors)?;
            if !env.host.model.sqs.contains_key(&y) {
                return Err(format!("the controller refused to create I/O queue {y}"));
            }
            queues.insert(
                y,
                Queue {
                    chan,
                    free: (0..usize::from(s.depth)).rev().collect(),
                    base: 0x40_0000_0000 + u64::from(y) * 0x1_0000_0000,
                    in_flight: BTreeMap::new(),
                },
            );
        }
        env.host.cqes.clear();
        env.host.subs.clear();
        Ok(Session {
            env,
            roce,
            tcp,
            sink,
            queues,
            stride,
            max_blocks: s.max_blocks,
            blocks: s.blocks,
            completed: 0,
            done: Vec::new(),
        })
    }

    /// Commands queue `sqid` can take now.
    pub fn room(&self, sqid: u16) -> usize {
        self.queues.get(&sqid).map_or(0, |q| q.free.len())
    }

    /// Commands in flight on queue `sqid`.
    pub fn in_flight_on(&self, sqid: u16) -> usize {
        self.queues.get(&sqid).map_or(0, |q| q.in_flight.len())
    }

    /// Commands in flight on every queue.
    pub fn in_flight(&self) -> usize {
        self.queues.values().map(|q| q.in_flight.len()).sum()
    }

    /// Namespace size in blocks.
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// Largest command in blocks.
    pub fn max_blocks(&self) -> u32 {
        self.max_blocks
    }

    /// Places `ios` on SQ `sqid` and rings its doorbell once; each must fit ([`Session::room`],
    /// `blocks` within the namespace and [`Session::max_blocks`]).
    pub fn submit(&mut self, sqid: u16, ios: &[Io]) -> Result<(), String> {
        let stride = self.stride;
        let Some(q) = self.queues.get(&sqid) else {
            return Err(format!("no I/O queue {sqid}"));
        };
        if ios.len() > q.free.len() {
            return Err(format!(
                "{} commands for SQ {sqid}, which has room for {}",
                ios.len(),
                q.free.len()
            ));
        }
        let chan = q.chan;
        let mut sqes: Vec<Sqe> = Vec::new();
        let mut flights = Vec::new();
        for io in ios {
            let n = io.blocks.max(1);
            if n > self.max_blocks
                || io
                    .slba
                    .checked_add(u64::from(n))
                    .is_none_or(|e| e > self.blocks)
            {
                return Err(format!(
                    "{:?} of {n} blocks at {} does not fit (namespace {} blocks, largest command {})",
                    io.op, io.slba, self.blocks, self.max_blocks
                ));
            }
            let cid = next_cid(&mut self.env, sqid);
            let q = self.queues.get_mut(&sqid).expect("queue");
            let slot = q.free.pop().expect("room was checked");
            let buf = q.base + slot as u64 * stride;
            let len = n as usize * BLOCK;
            let mut s = [0u8; 64];
            let opc = match io.op {
                Op::Flush => 0x00,
                Op::Write => 0x01,
                Op::Read => 0x02,
                Op::WriteZeroes => 0x08,
                Op::Deallocate => 0x09,
            };
            s[0] = opc;
            s[2..4].copy_from_slice(&cid.to_le_bytes());
            s[4..8].copy_from_slice(&1u32.to_le_bytes());
            let mut mem = self.env.mem.borrow_mut();
            match io.op {
                Op::Read | Op::Write => {
                    if io.op == Op::Write {
                        if io.data.len() != len {
                            return Err(format!(
                                "a Write of {n} blocks with {} bytes of data",
                                io.data.len()
                            ));
                        }
                        mem.mem.write(buf, &io.data);
                    }
                    // PRPs: the buffer is page aligned and contiguous; a list (the slot's
                    // last page) when it spans more than two pages.
                    let pages = len.div_ceil(4096) as u64;
                    let prp2 = match pages {
                        1 => 0,
                        2 => buf + 4096,
                        _ => {
                            let list = buf + stride - 4096;
                            for i in 1..pages {
                                mem.mem.write_u64(list + 8 * (i - 1), buf + 4096 * i);
                            }
                            list
                        }
                    };
                    s[24..32].copy_from_slice(&buf.to_le_bytes());
                    s[32..40].copy_from_slice(&prp2.to_le_bytes());
                    s[40..48].copy_from_slice(&io.slba.to_le_bytes());
                    s[48..50].copy_from_slice(&((n - 1) as u16).to_le_bytes());
                }
                Op::Flush => {}
                Op::WriteZeroes => {
                    s[40..48].copy_from_slice(&io.slba.to_le_bytes());
                    s[48..50].copy_from_slice(&((n - 1) as u16).to_le_bytes());
                }
                Op::Deallocate => {
                    // One range (NR 0) with the Deallocate attribute, in the slot's buffer.
                    let mut range = [0u8; 16];
                    range[4..8].copy_from_slice(&n.to_le_bytes());
                    range[8..16].copy_from_slice(&io.slba.to_le_bytes());
                    mem.mem.write(buf, &range);
                    s[24..32].copy_from_slice(&buf.to_le_bytes());
                    s[44..48].copy_from_slice(&4u32.to_le_bytes());
                }
            }
            drop(mem);
            // What the host must see: the status and DW0 the target of this channel answers.
            let (status, dw0) = match chan.transport {
                Transport::Roce => (
                    prop::target_status(&s, self.blocks),
                    Some(u32::from(cid) << 8 ^ 0x5a00_0000 ^ chan.index as u32),
                ),
                Transport::Tcp => (
                    tcp::target_status(&s, self.blocks),
                    Some(tcp::dw0(cid, chan.index)),
                ),
            };
            self.env
                .host
                .model
                .io_expect
                .insert((sqid, cid), vec![(status, dw0)]);
            sqes.push(s);
            flights.push((
                cid,
                Flight {
                    tag: io.tag,
                    op: io.op,
                    slot,
                    len: if io.op == Op::Read { len } else { 0 },
                    doorbell: 0,
                },
            ));
        }
        let at = self.env.sim.cycle();
        let q = self.queues.get_mut(&sqid).expect("queue");
        for (cid, mut f) in flights {
            f.doorbell = at;
            q.in_flight.insert(cid, f);
        }
        self.env.submit(sqid, &sqes, true)?;
        self.collect()
    }

    /// Runs one cycle; the host consumes every new CQE (checking it); the commands it
    /// completed are in [`Session::take_done`].
    pub fn step(&mut self) -> Result<(), String> {
        self.env.step()?;
        self.env.consume_all()?;
        self.collect()
    }

    /// Commands completed since the last call.
    pub fn take_done(&mut self) -> Vec<Done> {
        std::mem::take(&mut self.done)
    }

    fn collect(&mut self) -> Result<(), String> {
        // The host's CQEs since the last call (the host keeps every SQE and CQE; a session
        // takes them, so a long one does not grow).
        self.env.host.subs.clear();
        let new = std::mem::take(&mut self.env.host.cqes);
        for (visible, _, e) in new {
            let Some(q) = self.queues.get_mut(&e.sqid) else {
                continue;
            };
            let Some(f) = q.in_flight.remove(&e.cid) else {
                return Err(format!(
                    "a CQE for SQ {} CID {} the session did not submit",
                    e.sqid, e.cid
                ));
            };
            let buf = q.base + f.slot as u64 * self.stride;
            q.free.push(f.slot);
            let data = if f.op == Op::Read && e.status == 0 {
                self.env.mem.borrow().mem.read_vec(buf, f.len)
            } else {
                Vec::new()
            };
            self.completed += 1;
            self.done.push(Done {
                tag: f.tag,
                sqid: e.sqid,
                op: f.op,
                status: e.status,
                data,
                doorbell: f.doorbell,
                visible,
            });
        }
        self.check_links()
    }

    /// The targets' and links' own rules: a violation ends the session.
    fn check_links(&self) -> Result<(), String> {
        if let Some(e) = self.roce.borrow().target.errors.first() {
            return Err(format!("RoCE target: {e}"));
        }
        if let Some(v) = self.sink.borrow().violations.first() {
            return Err(format!("m_axis protocol: {v}"));
        }
        let t = self.tcp.borrow();
        for (c, x) in t.targets.iter().enumerate() {
            if let Some(v) = x.violations.first() {
                return Err(format!("NVMe/TCP target {c}: {v}"));
            }
            if x.dead {
                return Err(format!(
                    "NVMe/TCP connection {c} ended (TermReqs {:?})",
                    x.term_reqs
                ));
            }
        }
        Ok(())
    }

    /// What the links moved so far.
    pub fn traffic(&self) -> Traffic {
        use crate::drivers::Dir;
        let mem = self.env.mem.borrow();
        let beats = |d: Dir| {
            mem.log
                .iter()
                .filter(|t| t.dir == d)
                .map(|t| u64::from(t.req.len))
                .sum::<u64>()
        };
        let roce = self.roce.borrow();
        let (_, tx_beats, tx_bytes) = roce.tx_totals();
        let tcp = self.tcp.borrow();
        Traffic {
            axi_r: beats(Dir::Read),
            axi_w: beats(Dir::Write),
            roce_tx_beats: tx_beats,
            roce_rx_beats: roce.rx_beats,
            roce_tx_bytes: tx_bytes,
            roce_rx_bytes: roce.rx_bytes,
            tcp_tx_bytes: tcp.tx_total,
            tcp_rx_bytes: tcp.rx_total,
        }
    }

    /// Bytes per beat of the links.
    pub fn widths(&self) -> Widths {
        Widths {
            bus: u64::from(self.env.sim.signal("m_axi_wdata_o").width()) / 8,
            roce: u64::from(self.env.sim.signal("m_axis_tdata_o").width()) / 8,
            // NVMe/TCP bytes go out on the same Ethernet port.
            tcp: u64::from(self.env.sim.signal("m_axis_tdata_o").width()) / 8,
        }
    }

    /// Interrupts the host received so far.
    pub fn interrupts(&self) -> usize {
        self.env.irq.borrow().received.len()
    }

    /// Zeroes the front end's latency histograms (`nvme_csr.lat_ctrl.clear`) and waits for it.
    pub fn clear_hw_latency(&mut self) -> Result<(), String> {
        use crate::rtl::regs::nvme_csr as csr;
        self.env
            .fw_write_now(csr::LAT_CTRL, csr::LAT_CTRL_CLEAR_MASK)?;
        for _ in 0..300 {
            if self.env.fw_read(csr::STATUS)? & csr::STATUS_LAT_CLEARING_MASK == 0 {
                return Ok(());
            }
        }
        Err("status.lat_clearing never fell after lat_ctrl.clear".into())
    }

    /// The front end's latency histograms (read, write, other): 32 log2 bins of
    /// doorbell-to-CQE cycles each (bin b: 2^b to 2^(b+1) - 1), one command per SQ timed at
    /// a time (`hdl-gen/src/nvme/mod.rs`).
    pub fn hw_latency(&mut self) -> Result<[[u32; 32]; 3], String> {
        use crate::rtl::regs::nvme_csr as csr;
        let mut h = [[0u32; 32]; 3];
        for (dir, bins) in h.iter_mut().enumerate() {
            for (b, v) in bins.iter_mut().enumerate() {
                self.env
                    .fw_write_now(csr::LAT_SEL, b as u32 | (dir as u32) << 8)?;
                *v = self.env.fw_read(csr::LAT_COUNT)?;
            }
        }
        Ok(h)
    }

    /// The front end's path counters: commands offloaded (`io_cmd`) and sent to firmware.
    pub fn offload_fallback(&mut self) -> Result<(u32, u32), String> {
        use crate::rtl::regs::nvme_csr as csr;
        Ok((
            self.env.fw_read(csr::CNT_OFFLOAD)?,
            self.env.fw_read(csr::CNT_FALLBACK)?,
        ))
    }

    /// Reads a register through the firmware bus.
    pub fn fw_read(&mut self, addr: u32) -> u32 {
        self.env.fw_bus.mmio(&mut self.env.sim).read32(addr)
    }

    /// Namespace 1 as the target of `transport` holds it now (for checks).
    pub fn namespace(&self, transport: Transport, slba: u64, blocks: u32) -> Vec<u8> {
        let (a, b) = (
            slba as usize * BLOCK,
            (slba as usize + blocks as usize) * BLOCK,
        );
        match transport {
            Transport::Roce => self.roce.borrow().target.ns[a..b].to_vec(),
            Transport::Tcp => self.tcp.borrow().targets[0].ns.borrow()[0][a..b].to_vec(),
        }
    }

    /// The retransmissions and timeouts the links saw (RoCE target retransmits).
    pub fn retransmits(&self) -> u64 {
        self.roce.borrow().target.retransmits
    }
}

/// The channels the chip has for `t`: RoCE QPs (`roce_csr`'s `qpN_ctrl`), NVMe/TCP
/// connections (the width of the status output `tcp_connected_o`).
pub fn channels(t: Transport) -> usize {
    match t {
        Transport::Roce => roce_csr::REGISTERS
            .iter()
            .filter(|r| r.0.starts_with("qp") && r.0.ends_with("_ctrl"))
            .count(),
        Transport::Tcp => ChipTop::PORTS
            .iter()
            .find(|p| p.0 == "tcp_connected_o")
            .map_or(0, |p| p.1 as usize),
    }
}

fn qos_reg(n: &str) -> u32 {
    qos_csr::REGISTERS
        .iter()
        .find(|r| r.0 == n)
        .unwrap_or_else(|| panic!("qos_csr has no {n}"))
        .1
}

fn field(v: u32) -> u16 {
    v as u16
}
