//! `testbench nbd --device chip`: the simulated chip as an NBD export. Every request becomes
//! NVMe commands through the host model, the chip top and a remote target model
//! ([`Session`]): READ -> Read, WRITE -> Write, FLUSH -> Flush, TRIM -> Dataset Management
//! (Deallocate), WRITE_ZEROES -> Write Zeroes. The export is namespace 1 of the transport's
//! target; with several queues (one per channel) requests go to the queue with the most room.
//!
//! Where the remote target does not carry a command, the device does what a Linux host does:
//! a TRIM the target answers Invalid Command Opcode is a hint not taken (success: TRIM
//! promises nothing about the data), and a WRITE_ZEROES it answers so is carried as Writes of
//! zeroes (`blkdev_issue_zeroout`'s fallback). Any other error status is `NBD_EIO`. Each
//! fallback is counted in the summary.

use super::{Device, Op, Reply, Request, NBD_EIO};
use crate::suites::chip::session::{self as chip, Io, Session, Setup, Transport};
use std::collections::BTreeMap;

/// A request in the chip: its NVMe commands not yet finished, its first error.
struct Pending {
    op: chip::Op,
    len: u32,
    left: usize,
    error: u32,
    data: Vec<u8>,
    offset: u64,
}

/// The chip behind the export.
pub struct ChipDevice {
    s: Session,
    queues: u16,
    pending: BTreeMap<u64, Pending>,
    /// NVMe commands not yet submitted (a Write Zeroes' fallback Writes): (request, command).
    backlog: Vec<(u64, Io)>,
    next_tag: u64,
    /// NVMe command tag -> request handle.
    tags: BTreeMap<u64, u64>,
    counts: BTreeMap<&'static str, u64>,
    start: u64,
}

/// How the chip device is built.
pub struct ChipConfig {
    pub transport: Transport,
    pub queues: u16,
    pub depth: u16,
    pub size: u64,
    pub max_payload: u32,
    pub remote_cycles: (u32, u32),
    pub seed: u64,
}

impl ChipDevice {
    /// Builds the chip and brings it up.
    pub fn open(c: &ChipConfig) -> Result<ChipDevice, String> {
        if c.size == 0 || !c.size.is_multiple_of(4096) {
            return Err(format!("--size {}: a non-zero multiple of 4096", c.size));
        }
        if c.max_payload < 4096 || !c.max_payload.is_multiple_of(4096) {
            return Err(format!(
                "--max-payload {}: a multiple of 4096, at least 4096",
                c.max_payload
            ));
        }
        let s = Session::open(&Setup {
            queues: vec![c.transport; usize::from(c.queues)],
            depth: c.depth,
            blocks: c.size / 512,
            max_blocks: c.max_payload / 512,
            remote: [c.remote_cycles; 2],
            mem_latency: (50, 100),
            coalesce: None,
            seed: c.seed,
            waves: None,
        })?;
        let start = s.env.sim.cycle();
        Ok(ChipDevice {
            s,
            queues: c.queues,
            pending: BTreeMap::new(),
            backlog: Vec::new(),
            next_tag: 0,
            tags: BTreeMap::new(),
            counts: BTreeMap::new(),
            start,
        })
    }

    fn count(&mut self, what: &'static str) {
        *self.counts.entry(what).or_default() += 1;
    }

    /// The queue with the most room, if any has room.
    fn roomiest(&self) -> Option<u16> {
        (1..=self.queues)
            .map(|q| (self.s.room(q), q))
            .filter(|x| x.0 > 0)
            .max()
            .map(|x| x.1)
    }

    fn issue(&mut self, handle: u64, mut io: Io) -> Result<(), String> {
        self.next_tag += 1;
        io.tag = self.next_tag;
        self.tags.insert(io.tag, handle);
        match self.roomiest() {
            Some(q) => self.s.submit(q, &[io]),
            None => {
                self.backlog.push((handle, io));
                Ok(())
            }
        }
    }

    /// Writes of zeroes covering a request the target would not zero.
    fn zero_writes(&self, offset: u64, len: u32) -> Vec<Io> {
        let max = self.s.max_blocks();
        let mut out = Vec::new();
        let (mut lba, mut left) = (offset / 512, len / 512);
        while left > 0 {
            let n = left.min(max);
            out.push(Io {
                op: chip::Op::Write,
                slba: lba,
                blocks: n,
                data: vec![0; n as usize * 512],
                tag: 0,
            });
            lba += u64::from(n);
            left -= n;
        }
        out
    }
}

impl Device for ChipDevice {
    fn size(&self) -> u64 {
        self.s.blocks() * 512
    }

    fn block_sizes(&self) -> (u32, u32, u32) {
        (512, 4096, self.s.max_blocks() * 512)
    }

    fn supports(&self) -> (bool, bool, bool) {
        (true, true, true)
    }

    fn can_accept(&self) -> bool {
        self.backlog.is_empty() && self.roomiest().is_some()
    }

    fn submit(&mut self, r: Request) -> Result<(), String> {
        let (op, data, what) = match r.op {
            Op::Read => (chip::Op::Read, Vec::new(), "reads"),
            Op::Write(d) => (chip::Op::Write, d, "writes"),
            Op::Flush => (chip::Op::Flush, Vec::new(), "flushes"),
            Op::Trim => (chip::Op::Deallocate, Vec::new(), "trims"),
            Op::WriteZeroes => (chip::Op::WriteZeroes, Vec::new(), "write zeroes"),
        };
        self.count(what);
        self.pending.insert(
            r.handle,
            Pending {
                op,
                len: r.len,
                left: 1,
                error: 0,
                data: Vec::new(),
                offset: r.offset,
            },
        );
        let io = Io {
            op,
            slba: r.offset / 512,
            blocks: r.len / 512,
            data,
            tag: 0,
        };
        self.issue(r.handle, io)
    }

    fn advance(&mut self) -> Result<Vec<Reply>, String> {
        let mut out = Vec::new();
        for _ in 0..256 {
            // Commands waiting for room (fallback Writes).
            while !self.backlog.is_empty() {
                let Some(q) = self.roomiest() else { break };
                let (_, io) = self.backlog.remove(0);
                self.s.submit(q, &[io])?;
            }
            self.s.step()?;
            for d in self.s.take_done() {
                let handle = self.tags.remove(&d.tag).expect("a command the device sent");
                let op = self.pending[&handle].op;
                self.pending.get_mut(&handle).expect("its request").left -= 1;
                match (op, d.status) {
                    (_, 0) => {
                        if d.op == chip::Op::Read {
                            self.pending.get_mut(&handle).expect("pending").data = d.data;
                        }
                    }
                    // Invalid Command Opcode from the target.
                    (chip::Op::Deallocate, 0x01) => self.count("trims not taken by the target"),
                    (chip::Op::WriteZeroes, 0x01) if d.op == chip::Op::WriteZeroes => {
                        self.count("write zeroes carried as writes");
                        let (offset, len) = {
                            let p = &self.pending[&handle];
                            (p.offset, p.len)
                        };
                        let writes = self.zero_writes(offset, len);
                        self.pending.get_mut(&handle).expect("pending").left += writes.len();
                        for io in writes {
                            self.issue(handle, io)?;
                        }
                    }
                    (_, st) => {
                        let p = self.pending.get_mut(&handle).expect("pending");
                        if p.error == 0 {
                            p.error = NBD_EIO;
                        }
                        self.count("errors");
                        if std::env::var_os("NBD_DEBUG").is_some() {
                            eprintln!("nbd chip: {:?} failed with status {st:#x}", d.op);
                        }
                    }
                }
                let p = &self.pending[&handle];
                if p.left == 0 {
                    let p = self.pending.remove(&handle).expect("pending");
                    let data = if p.op == chip::Op::Read && p.error == 0 {
                        p.data
                    } else {
                        Vec::new()
                    };
                    out.push(Reply {
                        handle,
                        error: p.error,
                        data,
                    });
                }
            }
            if !out.is_empty() {
                break;
            }
        }
        Ok(out)
    }

    fn summary(&self) -> String {
        let cycles = self.s.env.sim.cycle() - self.start;
        let counts: Vec<String> = self
            .counts
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect();
        format!(
            "chip: {} NVMe commands in {cycles} cycles ({}); {} interrupts",
            self.s.completed,
            counts.join(", "),
            self.s.interrupts()
        )
    }
}
