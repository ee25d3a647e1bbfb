//! The chip's NVMe/TCP side: the TCP/IP frames of the chip's Ethernet port (the ones
//! [`super::top::RoceLink`] does not take: ARP, TCP) go to smoltcp, an independent TCP/IP
//! stack in process, where one listening socket per connection carries an NVMe/TCP target
//! model; and what the scoreboard reads back from the targets (the commands each received, a
//! Read's data as its C2HData PDUs carried it, a Write's data as its H2CData PDUs or its
//! capsule carried it).

use crate::models::nvme_tcp::{decode_sent, Pdu};
use crate::models::nvme_tcp_target::{status, Fault, Target, TargetConfig};
use crate::rng::Rng;
use crate::sim::Component;
use crate::suites::tcp::nvme::Peer;
use crate::suites::tcp::{tcp_ports, Dev, Setup, US_PER_CYCLE};
use smoltcp::iface::{Interface, SocketSet};
use smoltcp::time::Instant;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

/// How the targets behave in a case (the same for every connection; each target has its own
/// random choices).
#[derive(Clone, Copy, Debug)]
pub struct TcpConf {
    /// MAXH2CDATA announced (a multiple of 4, at least 4096).
    pub maxh2cdata: u32,
    /// CPDA announced (0 to 31).
    pub cpda: u8,
    /// Largest C2HData and R2T the targets send.
    pub max_c2h: u32,
    pub max_r2t: u32,
    /// A successful Read may end with SUCCESS instead of a CapsuleResp (its DW0 is then 0).
    pub use_success: bool,
    /// A target as fast as the wire: every C2HData and R2T as large as `max_c2h` and
    /// `max_r2t` allow; otherwise random sizes.
    pub full: bool,
    /// A target that breaks the protocol and so kills its connection: (connection, fault
    /// (index into [`Fault::ALL`]), the eligible PDU it breaks, 0 first). Its replacement
    /// after [`TcpLink::restart`] behaves.
    pub die: Option<(u8, u8, u8)>,
}

/// The TCP engine's settings firmware programs in the chip (`tcp_csr`): the standard MSS, no
/// window scaling, a short RTO (the link loses nothing; an RTO only covers a race).
pub const SETUP: Setup = Setup {
    mss: 1460,
    wscale: 0,
    key: (0x1234_5678, 0x9abc_def0),
    rto_min: 40,
    retries: 12,
    time_wait: 50,
};

/// Firmware's set-up of the chip's TCP/IP engine (`tcp_csr`, at its slot in the chip's map):
/// [`SETUP`], the targets' addresses, and each of the `n` connections opened.
pub fn open_all<T: crate::sim::Dut>(env: &mut crate::suites::nvme::env::Env<T>, n: usize) {
    let mut bus = env
        .fw_bus
        .mmio(&mut env.sim)
        .at(u64::from(crate::rtl::regs::chip_csr::MAP_TCP_BASE_RESET));
    crate::suites::tcp::program(&mut bus, &SETUP, n);
    for c in 0..n {
        bus.write32(crate::suites::tcp::creg(c, 8), 1);
    }
}

/// DW0 of connection `conn`'s CapsuleResps for command `cid` (the target's tag, so the
/// scoreboard proves a completion came back from the right connection).
pub fn dw0(cid: u16, conn: usize) -> u32 {
    u32::from(cid) << 8 ^ tag(conn)
}

fn tag(conn: usize) -> u32 {
    0x7c00_0000 ^ conn as u32
}

/// Frames between the chip's one Ethernet port (driven by [`super::top::RoceLink`], which
/// keeps the RoCEv2 frames) and the TCP side.
#[derive(Debug, Default)]
pub struct EthWire {
    /// Frames the chip sent that are not RoCEv2 (ARP, TCP, ...): (cycle seen, frame).
    pub to_tcp: VecDeque<(u64, Vec<u8>)>,
    /// Frames for the chip from the TCP side, in order.
    pub from_tcp: VecDeque<Vec<u8>>,
    /// The cycles in which a TCP frame with payload for the chip entered its port.
    pub delivered: Vec<u64>,
}

/// The NVMe/TCP side: smoltcp behind the chip's Ethernet port and a target per connection.
pub struct TcpLink {
    wire: Rc<RefCell<EthWire>>,
    /// Connections.
    n: usize,
    /// The remote NVMe/TCP targets, by connection.
    pub targets: Vec<Target>,
    rng: Rng,
    /// The remote latency: every frame the chip sends reaches smoltcp this many cycles later
    /// (fixed, plus up to the random part), in order.
    pub delay: (u32, u32),
    /// When `Some`, the cycles in which the chip sent NVMe/TCP bytes (a TCP segment with
    /// payload seen) and took them (filled when read, from the port's record), for latency
    /// measurements.
    pub activity: Option<(Vec<u64>, Vec<u64>)>,
    /// Frames on their way to smoltcp: (cycle they arrive, frame).
    in_flight: VecDeque<(u64, Vec<u8>)>,
    /// Earlier targets of each connection, replaced by [`TcpLink::restart`], oldest first.
    pub retired: Vec<(usize, Target)>,
    /// What a fresh target is made from.
    conf: TcpConf,
    blocks: u64,
    icd_max: u32,
    seed: u64,
    dev: Dev,
    iface: Interface,
    sockets: SocketSet<'static>,
    peer: Peer,
    next_poll: u64,
    /// NVMe/TCP bytes the targets received from the chip, and sent to it.
    pub tx_total: u64,
    pub rx_total: u64,
}

impl TcpLink {
    /// `n` connections behind `wire`; each target has NSID 1 of `blocks` blocks and accepts
    /// `icd_max` in-capsule bytes.
    pub fn new(
        n: usize,
        wire: Rc<RefCell<EthWire>>,
        conf: &TcpConf,
        blocks: u64,
        icd_max: u32,
        seed: u64,
    ) -> TcpLink {
        let (dev, iface) = crate::suites::tcp::peer_iface(seed);
        let mut sockets = SocketSet::new(vec![]);
        let peer = Peer::listen(&mut sockets, n, 65536, seed ^ 0x5e);
        let mut link = TcpLink {
            wire,
            n,
            targets: Vec::new(),
            rng: Rng::new(seed ^ 0x7c9),
            delay: (0, 0),
            activity: None,
            in_flight: VecDeque::new(),
            retired: Vec::new(),
            conf: *conf,
            blocks,
            icd_max,
            seed,
            dev,
            iface,
            sockets,
            peer,
            next_poll: 0,
            tx_total: 0,
            rx_total: 0,
        };
        link.targets = (0..n).map(|c| link.target(c, 0)).collect();
        link
    }

    /// The connection a hostile target kills, if any.
    pub fn dying(&self) -> Option<usize> {
        self.conf.die.map(|d| usize::from(d.0) % self.n.max(1))
    }

    /// A fresh target for connection `c` (its `gen`-th); the first of the dying connection
    /// commits the fault.
    fn target(&self, c: usize, gen: u64) -> Target {
        let fault = match self.conf.die {
            Some((_, f, at)) if gen == 0 && self.dying() == Some(c) => {
                Some((Fault::ALL[usize::from(f) % Fault::ALL.len()], u32::from(at)))
            }
            _ => None,
        };
        let mut t = Target::new(TargetConfig {
            namespaces: vec![self.blocks],
            maxh2cdata: self.conf.maxh2cdata,
            cpda: self.conf.cpda,
            max_c2h: self.conf.max_c2h,
            max_r2t: self.conf.max_r2t,
            use_success: self.conf.use_success,
            full_c2h: self.conf.full,
            icd_max: self.icd_max,
            seed: self.seed ^ (0x1000 + c as u64) ^ gen << 32,
            fault,
        });
        t.dw0_tag = Some(tag(c));
        t
    }

    /// The chip's NVMe/TCP side starts anew (firmware restarts it, or the chip was reset):
    /// every connection gets a fresh target (the old ones are kept in `retired` for the
    /// checks), smoltcp's sockets forget their connections without a word and listen again (a
    /// remote host that restarted its side), and frames on their way to smoltcp are lost.
    /// Firmware then opens new TCP connections.
    pub fn restart(&mut self) {
        let gen = 1 + self.retired.len() as u64;
        for c in 0..self.targets.len() {
            let fresh = self.target(c, gen);
            let old = std::mem::replace(&mut self.targets[c], fresh);
            self.retired.push((c, old));
        }
        self.in_flight.clear();
        self.wire.borrow_mut().to_tcp.clear();
        self.peer.reopen(&mut self.sockets);
    }

    /// The target of connection `c` that received command `cid`'s capsule (the current one if
    /// none did).
    pub fn holder(&self, c: usize, cid: u16) -> &Target {
        self.all(c)
            .into_iter()
            .find(|t| !capsules(t, cid).is_empty())
            .unwrap_or(&self.targets[c])
    }

    /// Every target connection `c` had, oldest first (the current one last).
    pub fn all(&self, c: usize) -> Vec<&Target> {
        self.retired
            .iter()
            .filter(|r| r.0 == c)
            .map(|r| &r.1)
            .chain(std::iter::once(&self.targets[c]))
            .collect()
    }

    /// Every target serves the first one's namespaces (one subsystem behind every connection).
    pub fn share_namespaces(&mut self) {
        if let Some((first, rest)) = self.targets.split_first_mut() {
            for t in rest {
                t.share_namespaces(first);
            }
        }
    }

    /// smoltcp polls, and the targets work between its polls.
    fn poll(&mut self, cycle: u64) {
        let now = Instant::from_micros(cycle as i64 * US_PER_CYCLE);
        self.iface.poll(now, &mut self.dev, &mut self.sockets);
        let (r, s) = (self.peer.received, self.peer.sent);
        self.peer.run(&mut self.sockets, &mut self.targets);
        self.tx_total += self.peer.received - r;
        self.rx_total += self.peer.sent - s;
        self.iface.poll(now, &mut self.dev, &mut self.sockets);
        let delay = self.iface.poll_delay(now, &self.sockets).map_or(64, |d| {
            (d.total_micros() / US_PER_CYCLE as u64).clamp(1, 64)
        });
        self.next_poll = cycle + delay;
    }
}

impl Component for TcpLink {
    fn sample(&mut self, cycle: u64) {
        let sent: Vec<(u64, Vec<u8>)> = self.wire.borrow_mut().to_tcp.drain(..).collect();
        for (seen, f) in sent {
            dbg_frame(cycle, "chip->", &f);
            if let Some((tx, _)) = &mut self.activity {
                if tcp_ports(&f).is_some_and(|p| p.2 > 0) {
                    tx.push(seen);
                }
            }
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
        // One frame at a time, so the peer answers each as it arrives (a socket closed by one
        // frame listens again before the next).
        let mut polled = false;
        while self.in_flight.front().is_some_and(|x| x.0 <= cycle) {
            let (_, f) = self.in_flight.pop_front().expect("front");
            self.dev.rx.push_back(f);
            self.poll(cycle);
            polled = true;
        }
        if !polled && cycle >= self.next_poll {
            self.poll(cycle);
        }
        let out = std::mem::take(&mut self.dev.tx);
        for f in &out {
            dbg_frame(cycle, "<-peer", f);
        }
        self.wire.borrow_mut().from_tcp.extend(out);
        if let Some((_, rx)) = &mut self.activity {
            rx.clone_from(&self.wire.borrow().delivered);
        }
    }

    fn drive(&mut self, _cycle: u64) {}
}

/// What the target answers for a command it executes (`models::nvme_tcp_target`, `command`):
/// Flush 0; Read and Write: Invalid Namespace (0Bh) for an NSID it lacks, LBA Out of Range
/// (80h) past its end (the engine's SGL length is always the command's); every other opcode
/// (Write Zeroes, Dataset Management, Compare, ...) Invalid Command Opcode (01h).
pub fn target_status(sqe: &[u8; 64], blocks: u64) -> u16 {
    let opc = sqe[0];
    let nsid = u32::from_le_bytes(sqe[4..8].try_into().unwrap());
    let slba = u64::from_le_bytes(sqe[40..48].try_into().unwrap());
    let nlb = u64::from(u16::from_le_bytes([sqe[48], sqe[49]])) + 1;
    match opc {
        0x00 => 0,
        0x01 | 0x02 if nsid != 1 => status::INVALID_NAMESPACE,
        0x01 | 0x02 if slba.checked_add(nlb).is_some_and(|e| e <= blocks) => 0,
        0x01 | 0x02 => status::LBA_OUT_OF_RANGE,
        _ => status::INVALID_OPCODE,
    }
}

/// The CapsuleCmds `t` received for `cid` (their SQEs).
pub fn capsules(t: &Target, cid: u16) -> Vec<[u8; 64]> {
    t.received
        .iter()
        .filter_map(|p| match p {
            Pdu::CapsuleCmd { sqe, .. } if u16::from_le_bytes([sqe[2], sqe[3]]) == cid => {
                Some(*sqe)
            }
            _ => None,
        })
        .collect()
}

/// Assembles `len` bytes from pieces (DATAO, bytes); an error names a gap, an overlap or a
/// piece past the end.
fn assemble(len: usize, pieces: &[(u32, &[u8])], what: &str) -> Result<Vec<u8>, String> {
    let mut out = vec![0u8; len];
    let mut seen = vec![false; len];
    for &(o, d) in pieces {
        let o = o as usize;
        if o + d.len() > len {
            return Err(format!(
                "{what}: a piece at {o} of {} bytes past the data's {len}",
                d.len()
            ));
        }
        for (i, b) in d.iter().enumerate() {
            if seen[o + i] {
                return Err(format!("{what}: byte {} carried twice", o + i));
            }
            seen[o + i] = true;
            out[o + i] = *b;
        }
    }
    if let Some(i) = seen.iter().position(|s| !s) {
        return Err(format!("{what}: byte {i} of {len} never carried"));
    }
    Ok(out)
}

/// The data target `t` sent for Read `cid` of `len` bytes (its C2HData PDUs, as encoded).
pub fn read_data(t: &Target, cid: u16, len: usize) -> Result<Vec<u8>, String> {
    let pdus: Vec<Pdu> = t
        .sent
        .iter()
        .filter_map(|b| decode_sent(b).map(|r| r.pdu))
        .collect();
    let pieces: Vec<(u32, &[u8])> = pdus
        .iter()
        .filter_map(|p| match p {
            Pdu::Data {
                c2h: true,
                cccid,
                datao,
                data,
                ..
            } if *cccid == cid => Some((*datao, data.as_slice())),
            _ => None,
        })
        .collect();
    assemble(len, &pieces, &format!("C2HData of CID {cid:#x}"))
}

/// Byte by byte, what target `t` sent for Read `cid` of `len` bytes (its C2HData PDUs, as
/// encoded), `None` for a byte it never sent (a reset cut the Read short).
pub fn read_bytes(t: &Target, cid: u16, len: usize) -> Vec<Option<u8>> {
    let mut out = vec![None; len];
    for b in &t.sent {
        if let Some(Pdu::Data {
            c2h: true,
            cccid,
            datao,
            data,
            ..
        }) = decode_sent(b).map(|r| r.pdu)
        {
            if cccid == cid {
                for (i, x) in data.iter().enumerate() {
                    if let Some(o) = out.get_mut(datao as usize + i) {
                        *o = Some(*x);
                    }
                }
            }
        }
    }
    out
}

/// The data target `t` received for Write `cid` of `len` bytes: in its capsule, or as H2CData.
pub fn write_data(t: &Target, cid: u16, len: usize) -> Result<Vec<u8>, String> {
    let mut pieces: Vec<(u32, &[u8])> = Vec::new();
    for p in &t.received {
        match p {
            Pdu::CapsuleCmd { sqe, data }
                if u16::from_le_bytes([sqe[2], sqe[3]]) == cid && !data.is_empty() =>
            {
                pieces.push((0, data.as_slice()))
            }
            Pdu::Data {
                c2h: false,
                cccid,
                datao,
                data,
                ..
            } if *cccid == cid => pieces.push((*datao, data.as_slice())),
            _ => {}
        }
    }
    assemble(len, &pieces, &format!("Write data of CID {cid:#x}"))
}

/// At `RUST_LOG=testbench::suites::chip=trace`, one line per frame between the chip and smoltcp: the cycle, the
/// direction, and a TCP segment's ports, flags, sequence and acknowledgment numbers and
/// payload length.
fn dbg_frame(cycle: u64, dir: &str, f: &[u8]) {
    if !tracing::enabled!(tracing::Level::TRACE) {
        return;
    }
    if let Some((sp, dp, len)) = crate::suites::tcp::tcp_ports(f) {
        let t = 14 + usize::from(f[14] & 15) * 4;
        let seq = u32::from_be_bytes(f[t + 4..t + 8].try_into().unwrap());
        let ack = u32::from_be_bytes(f[t + 8..t + 12].try_into().unwrap());
        let fl = f[t + 13];
        tracing::trace!(
            "{cycle} {dir} {sp}->{dp} fl {fl:#04x} seq {seq:#x} ack {ack:#x} len {len}"
        );
    } else {
        tracing::trace!(
            "{cycle} {dir} non-tcp len {} type {:02x}{:02x}",
            f.len(),
            f[12],
            f[13]
        );
    }
}
