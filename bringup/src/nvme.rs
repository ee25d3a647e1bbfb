//! What the host tool knows of NVMe, without a board: submission and completion queue entries,
//! status codes by name, the Identify data firmware answers with, the data pattern of `write`
//! and `read`, and the driver's state block kept in the board's host memory between runs.
//! Everything here is pure (tested in tests/nvme.rs); the bus work is in [`crate::driver`].

use std::fmt;

/// Host memory page (CC.MPS 0): queues are page aligned, PRPs point at pages.
pub const PAGE: u32 = 4096;
/// Logical block size of namespace 1 (LBA format 0, LBADS 9).
pub const BLOCK: u32 = 512;

/// Admin opcodes the tool sends or firmware serves.
pub mod opc {
    pub const DELETE_IO_SQ: u8 = 0x00;
    pub const CREATE_IO_SQ: u8 = 0x01;
    pub const DELETE_IO_CQ: u8 = 0x04;
    pub const CREATE_IO_CQ: u8 = 0x05;
    pub const IDENTIFY: u8 = 0x06;
    pub const SET_FEATURES: u8 = 0x09;
    /// I/O opcodes.
    pub const WRITE: u8 = 0x01;
    pub const READ: u8 = 0x02;
}

/// A 64-byte submission queue entry as 16 little-endian dwords.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Sqe(pub [u32; 16]);

impl Sqe {
    /// An entry with opcode `opc` and command id `cid` (PRP data pointer, no fuse).
    pub fn new(opc: u8, cid: u16) -> Sqe {
        let mut d = [0u32; 16];
        d[0] = u32::from(opc) | u32::from(cid) << 16;
        Sqe(d)
    }

    pub fn opcode(&self) -> u8 {
        self.0[0] as u8
    }

    pub fn cid(&self) -> u16 {
        (self.0[0] >> 16) as u16
    }

    pub fn nsid(mut self, nsid: u32) -> Sqe {
        self.0[1] = nsid;
        self
    }

    /// PRP entries 1 and 2 (DW6-9).
    pub fn prp(mut self, prp1: u64, prp2: u64) -> Sqe {
        self.0[6] = prp1 as u32;
        self.0[7] = (prp1 >> 32) as u32;
        self.0[8] = prp2 as u32;
        self.0[9] = (prp2 >> 32) as u32;
        self
    }

    pub fn prp1(&self) -> u64 {
        u64::from(self.0[7]) << 32 | u64::from(self.0[6])
    }

    pub fn prp2(&self) -> u64 {
        u64::from(self.0[9]) << 32 | u64::from(self.0[8])
    }

    /// Command dword `i` (10 to 15).
    pub fn cdw(mut self, i: usize, v: u32) -> Sqe {
        assert!((10..16).contains(&i), "CDW{i} is not a command dword");
        self.0[i] = v;
        self
    }

    /// A Read or Write of `blocks` (1 to 65536) from `slba` on NSID 1, data at `prp1`/`prp2`.
    pub fn rw(opc: u8, cid: u16, slba: u64, blocks: u32, prp1: u64, prp2: u64) -> Sqe {
        assert!(
            (1..=65536).contains(&blocks),
            "{blocks} blocks in one command"
        );
        Sqe::new(opc, cid)
            .nsid(1)
            .prp(prp1, prp2)
            .cdw(10, slba as u32)
            .cdw(11, (slba >> 32) as u32)
            .cdw(12, blocks - 1)
    }

    /// Starting LBA of a Read or Write.
    pub fn slba(&self) -> u64 {
        u64::from(self.0[11]) << 32 | u64::from(self.0[10])
    }

    /// Blocks of a Read or Write (NLB + 1).
    pub fn blocks(&self) -> u32 {
        (self.0[12] & 0xFFFF) + 1
    }
}

/// A 16-byte completion queue entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cqe {
    pub dw0: u32,
    pub sqhd: u16,
    pub sqid: u16,
    pub cid: u16,
    pub phase: bool,
    /// The status field, DW3 bits 31:17 (0: success).
    pub status: Status,
}

impl Cqe {
    /// The entry from its four dwords as the controller wrote them.
    pub fn parse(d: [u32; 4]) -> Cqe {
        Cqe {
            dw0: d[0],
            sqhd: d[2] as u16,
            sqid: (d[2] >> 16) as u16,
            cid: d[3] as u16,
            phase: d[3] >> 16 & 1 == 1,
            status: Status((d[3] >> 17) as u16),
        }
    }

    /// Its four dwords.
    pub fn dwords(&self) -> [u32; 4] {
        [
            self.dw0,
            0,
            u32::from(self.sqid) << 16 | u32::from(self.sqhd),
            u32::from(self.status.0) << 17 | u32::from(self.phase) << 16 | u32::from(self.cid),
        ]
    }
}

/// A CQE's status field (DW3 bits 31:17): SC 7:0, SCT 10:8, CRD 12:11, M 13, DNR 14.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Status(pub u16);

impl Status {
    pub const SUCCESS: Status = Status(0);

    /// Status code type `sct`, status code `sc`.
    pub fn new(sct: u8, sc: u8) -> Status {
        Status(u16::from(sct & 7) << 8 | u16::from(sc))
    }

    pub fn sc(self) -> u8 {
        self.0 as u8
    }

    pub fn sct(self) -> u8 {
        (self.0 >> 8 & 7) as u8
    }

    pub fn dnr(self) -> bool {
        self.0 >> 14 & 1 == 1
    }

    pub fn more(self) -> bool {
        self.0 >> 13 & 1 == 1
    }

    pub fn is_success(self) -> bool {
        self.sct() == 0 && self.sc() == 0
    }

    /// The specification's name of this status (SCT and SC), "unknown" if the tool does not
    /// know it.
    pub fn name(self) -> &'static str {
        match (self.sct(), self.sc()) {
            (0, 0x00) => "Successful Completion",
            (0, 0x01) => "Invalid Command Opcode",
            (0, 0x02) => "Invalid Field in Command",
            (0, 0x03) => "Command ID Conflict",
            (0, 0x04) => "Data Transfer Error",
            (0, 0x05) => "Commands Aborted due to Power Loss Notification",
            (0, 0x06) => "Internal Error",
            (0, 0x07) => "Command Abort Requested",
            (0, 0x08) => "Command Aborted due to SQ Deletion",
            (0, 0x0B) => "Invalid Namespace or Format",
            (0, 0x0C) => "Command Sequence Error",
            (0, 0x0D) => "Invalid SGL Segment Descriptor",
            (0, 0x0E) => "Invalid Number of SGL Descriptors",
            (0, 0x0F) => "Data SGL Length Invalid",
            (0, 0x11) => "SGL Descriptor Type Invalid",
            (0, 0x13) => "PRP Offset Invalid",
            (0, 0x16) => "SGL Offset Invalid",
            (0, 0x22) => "Transient Transport Error",
            (0, 0x80) => "LBA Out of Range",
            (0, 0x81) => "Capacity Exceeded",
            (0, 0x82) => "Namespace Not Ready",
            (1, 0x00) => "Completion Queue Invalid",
            (1, 0x01) => "Invalid Queue Identifier",
            (1, 0x02) => "Invalid Queue Size",
            (1, 0x05) => "Asynchronous Event Request Limit Exceeded",
            (1, 0x08) => "Invalid Interrupt Vector",
            (1, 0x0C) => "Invalid Queue Deletion",
            (2, 0x80) => "Write Fault",
            (2, 0x81) => "Unrecovered Read Error",
            (2, 0x86) => "Access Denied",
            _ => "unknown status",
        }
    }

    /// What a person should check, for the statuses this chip gives for a reason of its own.
    pub fn hint(self) -> Option<&'static str> {
        match (self.sct(), self.sc()) {
            (0, 0x82) => Some("the I/O queue is bound to no channel: run `bringup setup`"),
            (0, 0x22) => Some(
                "the transport failed (the NVMe/TCP connection ended or timed out): check the target, then run `bringup setup` again",
            ),
            (2, 0x86) => Some("QoS has no grant for this queue and LBA range: run `bringup setup`"),
            (0, 0x80) => Some("past the end of the namespace (see --blocks)"),
            _ => None,
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (SCT {:X}h, SC {:02X}h{}{})",
            self.name(),
            self.sct(),
            self.sc(),
            if self.dnr() { ", DNR" } else { "" },
            if self.more() { ", M" } else { "" }
        )?;
        if let Some(h) = self.hint() {
            write!(f, ": {h}")?;
        }
        Ok(())
    }
}

/// Writes the ASCII `s`, space padded, into `buf[at..at + n]`.
fn ascii(buf: &mut [u8], at: usize, n: usize, s: &str) {
    let b = s.as_bytes();
    for i in 0..n {
        buf[at + i] = *b.get(i).unwrap_or(&b' ');
    }
}

/// What Identify Controller (CNS 01h) reports.
#[derive(Clone, Debug)]
pub struct ControllerFacts {
    /// Serial number (20 ASCII characters at most).
    pub serial: String,
    /// Model (40 at most).
    pub model: String,
    /// Firmware revision (8 at most).
    pub firmware: String,
    /// MDTS as `nvme_csr.limits.mdts` gives it (2^mdts pages; 0 no limit).
    pub mdts: u8,
    /// Controller ID.
    pub cntlid: u16,
    /// VS as BAR0 reports it.
    pub version: u32,
    /// Namespaces (NN).
    pub namespaces: u32,
}

/// The 4096 bytes of Identify Controller firmware writes for the host: the fields the chip
/// fixes (MDTS, SQES 6, CQES 4, the version), the rest zero.
pub fn identify_controller(f: &ControllerFacts) -> Vec<u8> {
    let mut b = vec![0u8; PAGE as usize];
    // VID, SSVID: none assigned (FFFFh is not a vendor either; 0 says "not reported").
    ascii(&mut b, 4, 20, &f.serial);
    ascii(&mut b, 24, 40, &f.model);
    ascii(&mut b, 64, 8, &f.firmware);
    b[72] = 0; // RAB: 2^0 commands
    b[77] = f.mdts;
    b[78..80].copy_from_slice(&f.cntlid.to_le_bytes());
    b[80..84].copy_from_slice(&f.version.to_le_bytes());
    b[512] = 0x66; // SQES: 64-byte entries, required and maximum
    b[513] = 0x44; // CQES: 16 bytes
    b[516..520].copy_from_slice(&f.namespaces.to_le_bytes());
    b
}

/// The 4096 bytes of Identify Namespace (CNS 00h) for a namespace of `blocks` 512-byte blocks.
pub fn identify_namespace(blocks: u64) -> Vec<u8> {
    let mut b = vec![0u8; PAGE as usize];
    b[0..8].copy_from_slice(&blocks.to_le_bytes()); // NSZE
    b[8..16].copy_from_slice(&blocks.to_le_bytes()); // NCAP
    b[16..24].copy_from_slice(&blocks.to_le_bytes()); // NUSE
    b[25] = 0; // NLBAF: one format
    b[26] = 0; // FLBAS: format 0
    b[128..132].copy_from_slice(&(9u32 << 16).to_le_bytes()); // LBAF0: LBADS 9, no metadata
    b
}

/// Word `word` (0 to 127) of block `lba` in the data of pattern `seed`: every word of the
/// namespace differs from its neighbours and from other seeds, so a block read back from the
/// wrong LBA, a shifted buffer or another run's data shows.
pub fn pattern_word(seed: u32, lba: u64, word: u32) -> u32 {
    // splitmix64 of (seed, lba, word).
    let mut z = (u64::from(seed) << 32 ^ lba.rotate_left(7) ^ u64::from(word) << 48)
        .wrapping_add(0x9E37_79B9_7F4A_7C15u64.wrapping_mul(lba.wrapping_add(u64::from(word)) + 1));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) as u32
}

/// The words of `blocks` blocks from `slba` in pattern `seed`.
pub fn pattern(seed: u32, slba: u64, blocks: u32) -> Vec<u32> {
    let per = BLOCK / 4;
    (0..blocks)
        .flat_map(|b| (0..per).map(move |w| pattern_word(seed, slba + u64::from(b), w)))
        .collect()
}

/// A word read back that differs from the pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// Byte offset from the first byte of the command's data.
    pub offset: u64,
    /// Its LBA.
    pub lba: u64,
    pub read: u32,
    pub expected: u32,
}

/// The words of `got` (read from `slba` on) that differ from pattern `seed`.
pub fn compare(seed: u32, slba: u64, got: &[u32]) -> Vec<Mismatch> {
    let per = (BLOCK / 4) as usize;
    got.iter()
        .enumerate()
        .filter_map(|(i, &v)| {
            let lba = slba + (i / per) as u64;
            let want = pattern_word(seed, lba, (i % per) as u32);
            (v != want).then_some(Mismatch {
                offset: 4 * i as u64,
                lba,
                read: v,
                expected: want,
            })
        })
        .collect()
}

/// One queue as the host driver keeps it: its ring in host memory, entries, and where the
/// host is (SQ tail, CQ head and phase).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Ring {
    /// Host address of the SQ.
    pub sq: u32,
    /// Host address of the CQ.
    pub cq: u32,
    /// Entries of each.
    pub entries: u16,
    pub sq_tail: u16,
    pub cq_head: u16,
    /// The phase the next new CQE carries.
    pub phase: bool,
    /// The CID the next command takes.
    pub next_cid: u16,
}

impl Ring {
    /// A fresh ring pair of `entries` at `sq` and `cq`.
    pub fn new(sq: u32, cq: u32, entries: u16) -> Ring {
        Ring {
            sq,
            cq,
            entries,
            sq_tail: 0,
            cq_head: 0,
            phase: true,
            next_cid: 0,
        }
    }

    /// Host address of the SQ slot the next command goes to.
    pub fn sq_slot(&self) -> u32 {
        self.sq + 64 * u32::from(self.sq_tail)
    }

    /// Host address of the CQ slot the next CQE arrives in.
    pub fn cq_slot(&self) -> u32 {
        self.cq + 16 * u32::from(self.cq_head)
    }

    /// A command placed: the tail moves, the next CID is taken. Returns the new tail (the
    /// doorbell's value).
    pub fn push(&mut self) -> u16 {
        self.sq_tail = (self.sq_tail + 1) % self.entries;
        self.next_cid = self.next_cid.wrapping_add(1);
        self.sq_tail
    }

    /// A CQE consumed: the head moves, the phase flips at the wrap. Returns the new head (the
    /// doorbell's value).
    pub fn pop(&mut self) -> u16 {
        self.cq_head = (self.cq_head + 1) % self.entries;
        if self.cq_head == 0 {
            self.phase = !self.phase;
        }
        self.cq_head
    }
}

/// `"BRIO"`: the state block's magic.
pub const STATE_MAGIC: u32 = 0x4252_494F;
/// Layout version of the state block.
pub const STATE_VERSION: u32 = 1;
/// Words of the state block.
pub const STATE_WORDS: usize = 24;

/// What the driver keeps between runs, in a small block at a fixed place in the board's host
/// memory (as a real driver keeps its queue state in host RAM): written by `setup` once the
/// chip is up, read by `write`, `read` and `io`, updated by them after every command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct State {
    /// `chip_info`'s configuration hash when set up (a different bitstream invalidates it).
    pub config_hash: u64,
    /// The admin queue pair.
    pub admin: Ring,
    /// I/O queue pair 1.
    pub io: Ring,
    /// CAP.DSTRD.
    pub dstrd: u8,
    /// The data buffer: host address and bytes (page aligned, contiguous).
    pub buf: u32,
    pub buf_bytes: u32,
    /// Largest command, blocks (MDTS and the buffer).
    pub max_blocks: u32,
    /// Namespace 1's size, blocks (as QoS was told).
    pub blocks: u64,
    /// The NVMe/TCP target and the chip's address (for messages).
    pub target_ip: u32,
    pub target_port: u16,
    pub local_ip: u32,
}

fn ring_words(r: &Ring) -> [u32; 4] {
    [
        r.sq,
        r.cq,
        u32::from(r.entries) | u32::from(r.sq_tail) << 16,
        u32::from(r.cq_head) | u32::from(r.phase) << 15 | u32::from(r.next_cid) << 16,
    ]
}

fn ring_from(w: &[u32]) -> Ring {
    Ring {
        sq: w[0],
        cq: w[1],
        entries: w[2] as u16,
        sq_tail: (w[2] >> 16) as u16,
        cq_head: (w[3] & 0x7FFF) as u16,
        phase: w[3] >> 15 & 1 == 1,
        next_cid: (w[3] >> 16) as u16,
    }
}

/// Why a state block was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StateError {
    /// No magic: setup never ran (or the memory was overwritten).
    NoMagic(u32),
    /// Another layout version.
    Version(u32),
    /// The check word does not match: a torn or damaged block.
    Check { stored: u32, computed: u32 },
    /// A field out of its range.
    Invalid(String),
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateError::NoMagic(w) => write!(
                f,
                "no driver state in host memory (magic word reads 0x{w:08x}, not \"BRIO\"): run `bringup setup` first"
            ),
            StateError::Version(v) => write!(
                f,
                "the driver state in host memory has layout version {v}, this tool writes {STATE_VERSION}: run `bringup setup` again"
            ),
            StateError::Check { stored, computed } => write!(
                f,
                "the driver state in host memory is damaged (check word 0x{stored:08x}, computed 0x{computed:08x}): run `bringup setup` again"
            ),
            StateError::Invalid(m) => write!(
                f,
                "the driver state in host memory is not usable ({m}): run `bringup setup` again"
            ),
        }
    }
}

fn check_word(w: &[u32]) -> u32 {
    w.iter().enumerate().fold(0x811C_9DC5u32, |h, (i, &x)| {
        (h ^ x.rotate_left(i as u32)).wrapping_mul(0x0100_0193)
    })
}

impl State {
    /// The block as words: magic, version, the fields, and a check word last.
    pub fn encode(&self) -> [u32; STATE_WORDS] {
        let mut w = [0u32; STATE_WORDS];
        w[0] = STATE_MAGIC;
        w[1] = STATE_VERSION;
        w[2] = self.config_hash as u32;
        w[3] = (self.config_hash >> 32) as u32;
        w[4..8].copy_from_slice(&ring_words(&self.admin));
        w[8..12].copy_from_slice(&ring_words(&self.io));
        w[12] = u32::from(self.dstrd);
        w[13] = self.buf;
        w[14] = self.buf_bytes;
        w[15] = self.max_blocks;
        w[16] = self.blocks as u32;
        w[17] = (self.blocks >> 32) as u32;
        w[18] = self.target_ip;
        w[19] = u32::from(self.target_port);
        w[20] = self.local_ip;
        w[STATE_WORDS - 1] = check_word(&w[..STATE_WORDS - 1]);
        w
    }

    /// The state from its words; refused (saying why) without the magic, with another version,
    /// a bad check word or a field out of range.
    pub fn decode(w: &[u32]) -> Result<State, StateError> {
        if w.len() < STATE_WORDS || w[0] != STATE_MAGIC {
            return Err(StateError::NoMagic(w.first().copied().unwrap_or(0)));
        }
        if w[1] != STATE_VERSION {
            return Err(StateError::Version(w[1]));
        }
        let computed = check_word(&w[..STATE_WORDS - 1]);
        if w[STATE_WORDS - 1] != computed {
            return Err(StateError::Check {
                stored: w[STATE_WORDS - 1],
                computed,
            });
        }
        let s = State {
            config_hash: u64::from(w[3]) << 32 | u64::from(w[2]),
            admin: ring_from(&w[4..8]),
            io: ring_from(&w[8..12]),
            dstrd: w[12] as u8,
            buf: w[13],
            buf_bytes: w[14],
            max_blocks: w[15],
            blocks: u64::from(w[17]) << 32 | u64::from(w[16]),
            target_ip: w[18],
            target_port: w[19] as u16,
            local_ip: w[20],
        };
        for (name, r) in [("admin", &s.admin), ("I/O", &s.io)] {
            if r.entries < 2 || r.sq_tail >= r.entries || r.cq_head >= r.entries {
                return Err(StateError::Invalid(format!(
                    "{name} queue of {} entries with SQ tail {} and CQ head {}",
                    r.entries, r.sq_tail, r.cq_head
                )));
            }
        }
        if s.max_blocks == 0 || s.max_blocks * BLOCK > s.buf_bytes {
            return Err(StateError::Invalid(format!(
                "largest command {} blocks, buffer {} bytes",
                s.max_blocks, s.buf_bytes
            )));
        }
        Ok(s)
    }
}

/// `a.b.c.d` as a word, first byte in bits 31:24 (the chip's CSR layout).
pub fn ip_word(ip: std::net::Ipv4Addr) -> u32 {
    u32::from_be_bytes(ip.octets())
}
