//! The host's NVMe driver and the chip's firmware, both over the bridge: what `bringup setup`,
//! `write`, `read` and `io` do. The order is the testbench's (testbench/src/suites/chip/
//! session.rs `Session::open`, suites/chip/top/firmware.rs `Program::run`): firmware programs
//! the NVMe/TCP engine (held in reset), the TCP/IP engine and its connection, QoS's namespace
//! and grant and the routing table, waits for the connection (TCP, then ICReq/ICResp); then
//! the host enables the controller and creates its I/O queue pair through admin commands that
//! the chip hands to firmware (`bringup_csr`'s admin registers), which firmware executes
//! through `nvme_csr`.
//!
//! Host memory layout (board addresses = the chip's host addresses), every piece page aligned:
//!
//! | host address | what |
//! |---|---|
//! | [`ADMIN_SQ`] | admin SQ, [`ADMIN_ENTRIES`] entries |
//! | [`ADMIN_CQ`] | admin CQ |
//! | [`IO_SQ`] | I/O SQ 1 |
//! | [`IO_CQ`] | I/O CQ 1 |
//! | [`STATE`] | the driver's state block ([`crate::nvme::State`]) |
//! | [`BUF`] | the data buffer, [`BUF_PAGES`] pages (Identify data, Read and Write data) |

use crate::chip::{clock_khz, ChipMap};
use crate::nvme::{
    identify_controller, identify_namespace, ip_word, opc, ControllerFacts, Cqe, Ring, Sqe, State,
    Status, BLOCK, PAGE, STATE_WORDS,
};
use crate::{Bridge, Error, Map};
use hdl_gen::boards::bringup::{BAR0_BASE, HOST_MEM_BASE};
use hdl_gen::tcp::engine::STATES;
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

mod firmware;

/// Host address of the admin SQ.
pub const ADMIN_SQ: u32 = 0x0000;
/// Host address of the admin CQ.
pub const ADMIN_CQ: u32 = 0x1000;
/// Host address of I/O SQ 1.
pub const IO_SQ: u32 = 0x2000;
/// Host address of I/O CQ 1.
pub const IO_CQ: u32 = 0x3000;
/// Host address of the driver's state block.
pub const STATE: u32 = 0x4000;
/// Host address of the data buffer.
pub const BUF: u32 = 0x5000;
/// Pages of the data buffer (PRP1 and PRP2, no list).
pub const BUF_PAGES: u32 = 2;
/// Admin queue entries.
pub const ADMIN_ENTRIES: u16 = 4;

/// The NVMe/TCP connection and SQ the tool uses: SQ 1 on connection 0.
pub const CONN: u32 = 0;
pub const IO_QID: u16 = 1;

/// What `setup` is given.
#[derive(Clone, Debug)]
pub struct SetupOptions {
    /// The chip's IPv4 address and prefix length.
    pub local_ip: Ipv4Addr,
    pub prefix: u8,
    /// The NVMe/TCP target.
    pub target: Ipv4Addr,
    pub port: u16,
    /// Gateway for a target outside the local network (0.0.0.0: none).
    pub gateway: Ipv4Addr,
    /// The chip's MAC address.
    pub mac: [u8; 6],
    /// Namespace 1's size in blocks, as QoS polices it.
    pub blocks: u64,
    /// I/O queue entries (at most CAP.MQES + 1).
    pub io_entries: u16,
    /// How long to wait for the connection, wall clock.
    pub connect_timeout: Duration,
}

/// The chip's default MAC for an address: locally administered, 02:00 and the address.
pub fn default_mac(ip: Ipv4Addr) -> [u8; 6] {
    let o = ip.octets();
    [0x02, 0x00, o[0], o[1], o[2], o[3]]
}

/// The host tool as driver and firmware of one board.
pub struct Driver<'a> {
    pub br: &'a mut Bridge,
    pub map: &'a Map,
    pub chip: ChipMap,
    /// Where step lines go (stdout in the tool).
    pub say: Box<dyn FnMut(&str) + 'a>,
    /// How long a command may take, wall clock (the simulated board is slow).
    pub cmd_timeout: Duration,
    /// The state block's words as last written or read.
    saved: Option<[u32; STATE_WORDS]>,
}

/// A failed step: which, why, and what the chip is left with.
fn step_err(step: &str, cause: Error, left: &str) -> Error {
    Error::Setup {
        step: step.to_string(),
        cause: Box::new(cause),
        left: left.to_string(),
    }
}

impl<'a> Driver<'a> {
    pub fn new(br: &'a mut Bridge, map: &'a Map) -> Result<Driver<'a>, Error> {
        let chip = ChipMap::new(map)?;
        Ok(Driver {
            br,
            map,
            chip,
            say: Box::new(|s| println!("{s}")),
            cmd_timeout: Duration::from_secs(30),
            saved: None,
        })
    }

    // ---- bus helpers -------------------------------------------------------------------

    fn fw_write(&mut self, block: &str, reg: &str, fields: &[(&str, u64)]) -> Result<(), Error> {
        let a = self.chip.addr(block, reg)?;
        let v = self.chip.pack(block, reg, fields)?;
        self.br.write(a, v)
    }

    /// A whole register word (a register of one 32-bit field, or several written together).
    fn fw_word(&mut self, block: &str, reg: &str, v: u32) -> Result<(), Error> {
        let a = self.chip.addr(block, reg)?;
        self.br.write(a, v)
    }

    fn fw_read(&mut self, block: &str, reg: &str) -> Result<u32, Error> {
        let a = self.chip.addr(block, reg)?;
        self.br.read(a)
    }

    fn fw_field(&mut self, block: &str, reg: &str, field: &str) -> Result<u32, Error> {
        let v = self.fw_read(block, reg)?;
        self.chip.get(block, reg, field, v)
    }

    fn mem_write(&mut self, host: u32, words: &[u32]) -> Result<(), Error> {
        self.check_host(host, 4 * words.len() as u32)?;
        for (i, &w) in words.iter().enumerate() {
            self.br.write(HOST_MEM_BASE + host + 4 * i as u32, w)?;
        }
        Ok(())
    }

    fn mem_read(&mut self, host: u32, words: usize) -> Result<Vec<u32>, Error> {
        self.check_host(host, 4 * words as u32)?;
        (0..words)
            .map(|i| self.br.read(HOST_MEM_BASE + host + 4 * i as u32))
            .collect()
    }

    fn check_host(&self, host: u32, bytes: u32) -> Result<(), Error> {
        if u64::from(host) + u64::from(bytes) > u64::from(self.map.mem_bytes()) {
            return Err(Error::Board(format!(
                "host address 0x{host:x} + {bytes} bytes is past the board's {} KiB of host memory",
                self.map.mem_bytes() / 1024
            )));
        }
        Ok(())
    }

    fn bar_read(&mut self, off: u32) -> Result<u32, Error> {
        self.br.read(BAR0_BASE + off)
    }

    fn bar_write(&mut self, off: u32, v: u32) -> Result<(), Error> {
        self.br.write(BAR0_BASE + off, v)
    }

    fn doorbell(&mut self, dstrd: u8, qid: u16, cq: bool, v: u16) -> Result<(), Error> {
        let off = 0x1000 + (2 * u32::from(qid) + u32::from(cq)) * (4 << dstrd);
        self.bar_write(off, u32::from(v))
    }

    fn step<T>(
        &mut self,
        n: usize,
        total: usize,
        name: &str,
        left: &str,
        f: impl FnOnce(&mut Self) -> Result<T, Error>,
    ) -> Result<T, Error> {
        (self.say)(&format!("[{n}/{total}] {name}"));
        f(self).map_err(|e| step_err(name, e, left))
    }

    // ---- setup -----------------------------------------------------------------------

    /// The whole bring-up; each step printed. Safe to run again at any time: the state block
    /// is invalidated first, the controller disabled, the connection aborted, and everything
    /// programmed anew.
    pub fn setup(&mut self, o: &SetupOptions) -> Result<State, Error> {
        const N: usize = 9;
        if self.chip.tcp_conns == 0 {
            return Err(Error::Board(format!(
                "the {}'s chip holds no NVMe/TCP engine (configs/bringup_{}.toml)",
                self.map.board.title, self.map.board.name
            )));
        }
        let hash = self.step(1, N, "board and chip identity", "untouched", |d| {
            let lo = d.br.read(d.map.info_reg("config_hash_lo"))?;
            let hi = d.br.read(d.map.info_reg("config_hash_hi"))?;
            let hash = u64::from(hi) << 32 | u64::from(lo);
            if hash != d.map.config_hash {
                return Err(Error::Board(format!(
                    "the chip's configuration hash is {hash:016x}, configs/bringup_{}.toml hashes to {:016x}: the register maps this tool uses would be wrong (rebuild the bitstream or the tool)",
                    d.map.board.name, d.map.config_hash
                )));
            }
            // The old state is void from here on, whatever happens next.
            d.mem_write(STATE, &[0])?;
            (d.say)(&format!(
                "      {}, chip configuration {hash:016x}",
                d.map.board.title
            ));
            Ok(hash)
        })?;
        let cap = self.step(
            2,
            N,
            "controller disabled (CC.EN 0, CSTS.RDY 0)",
            "the controller may still be enabled; firmware registers untouched",
            |d| d.disable(),
        )?;
        let (khz, src) = self.step(
            3,
            N,
            "NVMe/TCP engine held in reset, TCP/IP engine programmed",
            "controller disabled; the NVMe/TCP engine held in reset (chip_csr.tcp_ctrl.run 0); TCP/IP engine partly programmed",
            |d| d.program_tcp(o),
        )?;
        (self.say)(&format!(
            "      core clock {khz} kHz (from {src}): tick {khz} cycles = 1 ms"
        ));
        self.step(
            4,
            N,
            "QoS: namespace 1 and a grant for SQ 1; routing: SQ 1 to NVMe/TCP connection 0",
            "controller disabled; NVMe/TCP engine in reset; QoS or routing table partly programmed",
            |d| d.program_qos_route(o.blocks),
        )?;
        self.step(
            5,
            N,
            &format!(
                "connection 0 opened to {}:{} and waited for (ARP, SYN, ICReq/ICResp)",
                o.target, o.port
            ),
            "controller disabled; routing and QoS programmed; NVMe/TCP connection 0 not up (see the state above)",
            |d| d.connect(o),
        )?;
        let mut st = self.step(
            6,
            N,
            "controller enabled (admin queues, CC.EN 1, CSTS.RDY 1)",
            "connection 0 up; the controller not enabled (or CSTS.RDY never rose)",
            |d| d.enable(cap),
        )?;
        st.config_hash = hash;
        st.blocks = o.blocks;
        st.target_ip = ip_word(o.target);
        st.target_port = o.port;
        st.local_ip = ip_word(o.local_ip);
        let facts = self.step(
            7,
            N,
            "Identify Controller, answered by firmware",
            "controller enabled, no I/O queues",
            |d| d.identify(&mut st),
        )?;
        (self.say)(&format!(
            "      model \"{}\", MDTS {} ({} KiB), largest command {} blocks (the data buffer's {} pages)",
            facts.model.trim_end(),
            facts.mdts,
            if facts.mdts == 0 { 0 } else { 4u32 << facts.mdts },
            st.max_blocks,
            BUF_PAGES
        ));
        self.step(
            8,
            N,
            &format!("I/O queue pair {IO_QID} created ({} entries)", o.io_entries),
            "controller enabled; I/O queue pair 1 missing or half made (CQ without SQ)",
            |d| d.create_pair(&mut st, o.io_entries, cap),
        )?;
        self.step(
            9,
            N,
            &format!("driver state saved in host memory at 0x{STATE:x}"),
            "everything up, but write/read will refuse (no driver state)",
            |d| d.save(&st),
        )?;
        Ok(st)
    }

    /// CC.EN 1 -> 0 if set, CSTS.RDY awaited low (CAP.TO bounds it); stale admin commands
    /// still offered to firmware are dropped. Returns CAP.
    fn disable(&mut self) -> Result<u64, Error> {
        let cap = u64::from(self.bar_read(4)?) << 32 | u64::from(self.bar_read(0)?);
        let to = Duration::from_millis(500 * ((cap >> 24) & 0xFF).max(1));
        let cc = self.bar_read(0x14)?;
        if cc & 1 != 0 {
            self.bar_write(0x14, cc & !1)?;
        }
        let start = Instant::now();
        while self.bar_read(0x1C)? & 1 != 0 {
            if start.elapsed() > to.max(self.cmd_timeout) {
                return Err(Error::Board(format!(
                    "CSTS.RDY stays 1 after CC.EN 1 -> 0 ({} s, CAP.TO): commands in flight never came back from the transport",
                    to.max(self.cmd_timeout).as_secs()
                )));
            }
        }
        // Commands the chip offered firmware before the reset: their answers would be dropped.
        let mut dropped = 0;
        while self.br.read(self.map.board_reg("admin_status"))? & 1 != 0 {
            self.br.write(self.map.board_reg("admin_pop"), 1)?;
            dropped += 1;
            if dropped > 64 {
                return Err(Error::Board(
                    "bringup_csr.admin_status.cmd_valid stays 1 after 64 pops".into(),
                ));
            }
        }
        // Doorbell faults of the old queues are forgotten, as firmware does on a reset.
        let ev = self.chip.pack(
            "nvme_csr",
            "events",
            &[("bad_db_reg", 1), ("bad_db_value", 1)],
        )?;
        let a = self.chip.addr("nvme_csr", "events")?;
        self.br.write(a, ev)?;
        (self.say)(&format!(
            "      CAP 0x{cap:016x}: MQES {} entries, DSTRD {}, TO {} ms{}",
            (cap & 0xFFFF) + 1,
            (cap >> 32) & 0xF,
            to.as_millis(),
            if dropped > 0 {
                format!("; {dropped} stale admin command(s) dropped")
            } else {
                String::new()
            }
        ));
        Ok(cap)
    }

    /// Admin queues laid out, CC written, CSTS.RDY awaited.
    fn enable(&mut self, cap: u64) -> Result<State, Error> {
        let mqes = (cap & 0xFFFF) as u32 + 1;
        let dstrd = ((cap >> 32) & 0xF) as u8;
        let to = Duration::from_millis(500 * ((cap >> 24) & 0xFF).max(1));
        if cap >> 37 & 1 == 0 {
            return Err(Error::Board(format!(
                "CAP.CSS 0x{:02x} lacks the NVM command set",
                (cap >> 37) & 0xFF
            )));
        }
        let a = u32::from(ADMIN_ENTRIES).min(mqes) as u16;
        // Fresh rings: zeroed CQs, so no old entry carries the phase the host waits for.
        self.mem_write(ADMIN_CQ, &vec![0; usize::from(a) * 4])?;
        self.bar_write(0x24, (u32::from(a) - 1) << 16 | (u32::from(a) - 1))?;
        self.bar_write(0x28, ADMIN_SQ)?;
        self.bar_write(0x2C, 0)?;
        self.bar_write(0x30, ADMIN_CQ)?;
        self.bar_write(0x34, 0)?;
        // EN, CSS 0 (NVM), MPS 0 (4 KiB), AMS 0 (round robin), IOSQES 6, IOCQES 4.
        self.bar_write(0x14, 1 | 6 << 16 | 4 << 20)?;
        let start = Instant::now();
        loop {
            let csts = self.bar_read(0x1C)?;
            if csts & 2 != 0 {
                return Err(Error::Board(format!(
                    "CSTS.CFS (controller fatal status) is set: CSTS 0x{csts:08x}"
                )));
            }
            if csts & 1 != 0 {
                break;
            }
            if start.elapsed() > to.max(Duration::from_secs(1)) {
                return Err(Error::Board(format!(
                    "CSTS.RDY never rose after CC.EN 1 ({} ms, CAP.TO)",
                    to.as_millis()
                )));
            }
        }
        Ok(State {
            admin: Ring::new(ADMIN_SQ, ADMIN_CQ, a),
            dstrd,
            buf: BUF,
            buf_bytes: BUF_PAGES * PAGE,
            ..State::default()
        })
    }

    fn identify(&mut self, st: &mut State) -> Result<ControllerFacts, Error> {
        let sqe = Sqe::new(opc::IDENTIFY, 0).prp(u64::from(BUF), 0).cdw(10, 1);
        let cqe = self.admin(st, sqe)?;
        if !cqe.status.is_success() {
            return Err(Error::Nvme {
                what: "Identify Controller".into(),
                status: cqe.status,
            });
        }
        let words = self.mem_read(BUF, 130)?;
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let s = |a: usize, n: usize| String::from_utf8_lossy(&bytes[a..a + n]).to_string();
        let mdts = bytes[77];
        let sqes = bytes[512];
        if sqes & 0xF > 6 || sqes >> 4 < 6 {
            return Err(Error::Board(format!(
                "Identify Controller SQES 0x{sqes:02x} does not allow 64-byte entries"
            )));
        }
        let mdts_blocks = if mdts == 0 {
            u32::MAX
        } else {
            (PAGE << mdts) / BLOCK
        };
        st.max_blocks = mdts_blocks.min(st.buf_bytes / BLOCK);
        Ok(ControllerFacts {
            serial: s(4, 20),
            model: s(24, 40),
            firmware: s(64, 8),
            mdts,
            cntlid: u16::from_le_bytes([bytes[78], bytes[79]]),
            version: u32::from_le_bytes([bytes[80], bytes[81], bytes[82], bytes[83]]),
            namespaces: u32::from_le_bytes([bytes[516], bytes[517], bytes[518], bytes[519]]),
        })
    }

    fn create_pair(&mut self, st: &mut State, entries: u16, cap: u64) -> Result<(), Error> {
        let mqes = (cap & 0xFFFF) as u32 + 1;
        let n = u32::from(entries).min(mqes).min(PAGE / 64) as u16;
        if n < 2 {
            return Err(Error::Board(format!(
                "{entries} I/O queue entries: at least 2"
            )));
        }
        self.mem_write(IO_CQ, &vec![0; usize::from(n) * 4])?;
        // Create I/O CQ 1: physically contiguous, interrupts off (the tool polls), vector 0.
        let cq = Sqe::new(opc::CREATE_IO_CQ, 0)
            .prp(u64::from(IO_CQ), 0)
            .cdw(10, (u32::from(n) - 1) << 16 | u32::from(IO_QID))
            .cdw(11, 1);
        let e = self.admin(st, cq)?;
        if !e.status.is_success() {
            return Err(Error::Nvme {
                what: "Create I/O CQ 1".into(),
                status: e.status,
            });
        }
        // Create I/O SQ 1 on CQ 1, priority medium.
        let sq = Sqe::new(opc::CREATE_IO_SQ, 0)
            .prp(u64::from(IO_SQ), 0)
            .cdw(10, (u32::from(n) - 1) << 16 | u32::from(IO_QID))
            .cdw(11, 1 | 2 << 1 | u32::from(IO_QID) << 16);
        let e = self.admin(st, sq)?;
        if !e.status.is_success() {
            return Err(Error::Nvme {
                what: "Create I/O SQ 1".into(),
                status: e.status,
            });
        }
        st.io = Ring::new(IO_SQ, IO_CQ, n);
        Ok(())
    }

    // ---- admin commands: host and firmware -----------------------------------------------

    /// One admin command: the host places it and rings the doorbell; firmware takes it from
    /// `bringup_csr`, executes it and pushes its completion; the host reads the CQE the chip
    /// posted. The command's CID is the ring's next one.
    pub fn admin(&mut self, st: &mut State, sqe: Sqe) -> Result<Cqe, Error> {
        let cid = st.admin.next_cid;
        let mut sqe = sqe;
        sqe.0[0] = sqe.0[0] & 0xFFFF | u32::from(cid) << 16;
        let slot = st.admin.sq_slot();
        self.mem_write(slot, &sqe.0)?;
        let tail = st.admin.push();
        self.doorbell(st.dstrd, 0, false, tail)?;
        self.serve_admin(cid)?;
        let dstrd = st.dstrd;
        let cqe = self.wait_cqe(&mut st.admin, dstrd, 0, "admin")?;
        if cqe.cid != cid || cqe.sqid != 0 {
            return Err(Error::Board(format!(
                "the admin CQE carries SQ {} CID {}, the command was SQ 0 CID {cid}",
                cqe.sqid, cqe.cid
            )));
        }
        Ok(cqe)
    }

    fn wait_nvme_idle(&mut self) -> Result<(), Error> {
        let start = Instant::now();
        while self.fw_field("nvme_csr", "status", "busy")? != 0 {
            if start.elapsed() > Duration::from_secs(5) {
                return Err(Error::Board(
                    "nvme_csr.status.busy stays 1 after a queue operation".into(),
                ));
            }
        }
        Ok(())
    }

    /// Waits for the CQE at the ring's head (its phase), consumes it and rings the CQ head
    /// doorbell.
    fn wait_cqe(&mut self, ring: &mut Ring, dstrd: u8, qid: u16, what: &str) -> Result<Cqe, Error> {
        let slot = ring.cq_slot();
        let start = Instant::now();
        let dw3 = loop {
            let v = self.br.read(HOST_MEM_BASE + slot + 12)?;
            if (v >> 16 & 1 == 1) == ring.phase {
                break v;
            }
            if start.elapsed() > self.cmd_timeout {
                return Err(Error::Board(format!(
                    "no {what} completion within {} s (CQ {qid} slot {} at host 0x{slot:x} still has the old phase)",
                    self.cmd_timeout.as_secs(),
                    ring.cq_head
                )));
            }
        };
        let dw0 = self.br.read(HOST_MEM_BASE + slot)?;
        let dw2 = self.br.read(HOST_MEM_BASE + slot + 8)?;
        let cqe = Cqe::parse([dw0, 0, dw2, dw3]);
        let head = ring.pop();
        self.doorbell(dstrd, qid, true, head)?;
        Ok(cqe)
    }
}

/// A command the I/O queue completed.
#[derive(Clone, Debug)]
pub struct IoDone {
    pub cqe: Cqe,
    /// From the doorbell write to the CQE seen (polled over the bridge: its resolution is
    /// one bridge exchange).
    pub latency: Duration,
    /// A Read's words.
    pub data: Vec<u32>,
}

impl Driver<'_> {
    /// Writes the state block (only the words that changed since the last save or load; the
    /// check word last, so a save cut short reads as damaged, never as valid).
    pub fn save(&mut self, st: &State) -> Result<(), Error> {
        let w = st.encode();
        let old = self.saved.unwrap_or([!0; STATE_WORDS]);
        for i in (0..STATE_WORDS).filter(|&i| w[i] != old[i] && i != STATE_WORDS - 1) {
            self.br.write(HOST_MEM_BASE + STATE + 4 * i as u32, w[i])?;
        }
        let last = STATE_WORDS - 1;
        self.br
            .write(HOST_MEM_BASE + STATE + 4 * last as u32, w[last])?;
        self.saved = Some(w);
        Ok(())
    }

    /// The driver state `setup` left, checked against the chip: the same bitstream, the
    /// controller ready, NVMe/TCP connection 0 up. Refuses, saying why and what to run, if
    /// not.
    pub fn load(&mut self) -> Result<State, Error> {
        let w = self.mem_read(STATE, STATE_WORDS)?;
        let st = State::decode(&w).map_err(|e| Error::NotSetUp(e.to_string()))?;
        let lo = self.br.read(self.map.info_reg("config_hash_lo"))?;
        let hi = self.br.read(self.map.info_reg("config_hash_hi"))?;
        if u64::from(hi) << 32 | u64::from(lo) != st.config_hash {
            return Err(Error::NotSetUp(format!(
                "the driver state was written for chip configuration {:016x}, the board now holds {:016x}: run `bringup setup`",
                st.config_hash,
                u64::from(hi) << 32 | u64::from(lo)
            )));
        }
        let csts = self.bar_read(0x1C)?;
        if csts & 1 == 0 {
            return Err(Error::NotSetUp(format!(
                "the controller is not ready (CSTS 0x{csts:08x}): the chip was reset or disabled since setup; run `bringup setup`"
            )));
        }
        if self.chip.tcp_conns > 0 {
            let v = self.fw_read("chip_csr", "tcp_conn")?;
            let up = self.chip.get("chip_csr", "tcp_conn", "connected", v)? >> CONN & 1;
            let dead = self.chip.get("chip_csr", "tcp_conn", "dead", v)? >> CONN & 1;
            if up == 0 || dead == 1 {
                let st = self.fw_field("tcp_csr", &format!("c{CONN}_state"), "state")?;
                return Err(Error::NotSetUp(format!(
                    "NVMe/TCP connection {CONN} is {} (chip_csr.tcp_conn 0x{v:08x}, TCP {}): run `bringup setup`",
                    if dead == 1 { "dead" } else { "not up" },
                    state_name(st)
                )));
            }
        }
        self.saved = Some(st.encode());
        Ok(st)
    }

    /// One Read or Write of `blocks` from `slba` through the data buffer (a Write's `data`
    /// placed there first, a Read's read back after), on I/O queue 1.
    pub fn rw(
        &mut self,
        st: &mut State,
        opcode: u8,
        slba: u64,
        blocks: u32,
        data: Option<&[u32]>,
    ) -> Result<IoDone, Error> {
        if blocks == 0 || blocks > st.max_blocks {
            return Err(Error::Board(format!(
                "{blocks} blocks in one command: 1 to {} (MDTS and the data buffer)",
                st.max_blocks
            )));
        }
        let bytes = blocks * BLOCK;
        if let Some(d) = data {
            if d.len() as u32 * 4 != bytes {
                return Err(Error::Board(format!(
                    "a Write of {blocks} blocks with {} bytes of data",
                    d.len() * 4
                )));
            }
            self.mem_write(st.buf, d)?;
        }
        let prp2 = if bytes > PAGE {
            u64::from(st.buf + PAGE)
        } else {
            0
        };
        let cid = st.io.next_cid;
        let sqe = Sqe::rw(opcode, cid, slba, blocks, u64::from(st.buf), prp2);
        let slot = st.io.sq_slot();
        self.mem_write(slot, &sqe.0)?;
        let tail = st.io.push();
        // Saved before the doorbell: a run cut short after it leaves a state that still
        // matches the chip's SQ.
        self.save(st)?;
        self.doorbell(st.dstrd, IO_QID, false, tail)?;
        let t0 = Instant::now();
        let what = if opcode == crate::nvme::opc::READ {
            "Read"
        } else {
            "Write"
        };
        let dstrd = st.dstrd;
        let cqe = self.wait_cqe(&mut st.io, dstrd, IO_QID, what);
        let latency = t0.elapsed();
        let cqe = match cqe {
            Ok(c) => c,
            Err(e) => {
                return Err(Error::Board(format!(
                    "{e}; the command (CID {cid}) is still outstanding: run `bringup setup` before the next command"
                )))
            }
        };
        self.save(st)?;
        if cqe.cid != cid || cqe.sqid != IO_QID {
            return Err(Error::Board(format!(
                "the CQE read carries SQ {} CID {}, the command was SQ {IO_QID} CID {cid} (an older command's completion? run `bringup setup`)",
                cqe.sqid, cqe.cid
            )));
        }
        if !cqe.status.is_success() {
            return Err(Error::Nvme {
                what: format!("{what} of {blocks} blocks at LBA {slba}"),
                status: cqe.status,
            });
        }
        let data = if opcode == crate::nvme::opc::READ {
            self.mem_read(st.buf, (bytes / 4) as usize)?
        } else {
            Vec::new()
        };
        Ok(IoDone { cqe, latency, data })
    }
}

/// A TCP state's name (tcp_csr `cN_state.state`).
pub fn state_name(s: u32) -> String {
    match STATES.get(s as usize) {
        Some(n) => match *n {
            "StClosed" => "CLOSED".into(),
            "StArp" => "ARP (resolving the next hop)".into(),
            "StIsn" => "ISN".into(),
            "StSynSent" => "SYN-SENT".into(),
            "StEstab" => "ESTABLISHED".into(),
            "StFinWait1" => "FIN-WAIT-1".into(),
            "StFinWait2" => "FIN-WAIT-2".into(),
            "StClosing" => "CLOSING".into(),
            "StTimeWait" => "TIME-WAIT".into(),
            "StCloseWait" => "CLOSE-WAIT".into(),
            "StLastAck" => "LAST-ACK".into(),
            other => other.into(),
        },
        None => format!("state {s}"),
    }
}

/// A routing table entry binding a queue to NVMe/TCP connection `conn` (chip_csr `route_set`:
/// bit 31 bound, bits 17:16 the transport's code, the channel below).
pub fn route_entry(conn: u32) -> u32 {
    1 << 31 | (hdl_gen::chip::route::code(hdl_gen::config::Transport::NvmeTcp) as u32) << 16 | conn
}

fn same_net(o: &SetupOptions) -> bool {
    let mask = if o.prefix == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(o.prefix))
    };
    ip_word(o.local_ip) & mask == ip_word(o.target) & mask
}

/// An ISN key (RFC 6528 secret) that differs every setup.
fn isn_key() -> (u32, u32) {
    let mut b = [0u8; 8];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        use std::io::Read;
        let _ = f.read_exact(&mut b);
    }
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let k = u64::from_le_bytes(b) ^ t ^ u64::from(std::process::id()) << 40;
    (k as u32, (k >> 32) as u32)
}
