//! The host side of the harness: the command stream on `io_cmd`/`io_cpl` (`Cmds`) and its
//! SQEs, the buffers placed in host memory and the checks on host memory and READ responses.

use super::*;

/// Drives `io_cmd` and takes `io_cpl`.
pub(in crate::suites::rdma) struct Cmds {
    pub(super) valid: Signal,
    pub(super) ready: Signal,
    pub(super) sqid: Signal,
    pub(super) sqe: Signal,
    pub(super) cv: Signal,
    pub(super) cr: Signal,
    pub(super) c_sqid: Signal,
    pub(super) c_cid: Signal,
    pub(super) c_status: Signal,
    pub(super) c_dw0: Signal,
    pub(in crate::suites::rdma) queue: VecDeque<(u16, [u8; 64])>,
    pub(super) on: bool,
    pub(super) rng: Rng,
    pub(super) idle: (u8, u8),
    pub(in crate::suites::rdma) cpls: Vec<(u16, u16, u16, u32)>,
    pub(in crate::suites::rdma) violations: Vec<String>,
    pub(super) held: Option<(u64, u64, u64, u64)>,
    /// The cycle the first command was presented, and the cycle of the last completion.
    pub(super) first_valid: Option<u64>,
    pub(super) last_cpl: u64,
}

impl Cmds {
    /// The `io_cmd` / `io_cpl` driver of `sim`, idle percentages `idle` (commands,
    /// completions).
    pub(in crate::suites::rdma) fn new(sim: &Sim<Top>, seed: u64, idle: (u8, u8)) -> Cmds {
        let s = |n: &str| sim.signal(n);
        Cmds {
            valid: s("io_cmd_valid_i"),
            ready: s("io_cmd_ready_o"),
            sqid: s("io_cmd_sqid_i"),
            sqe: s("io_cmd_sqe_i"),
            cv: s("io_cpl_valid_o"),
            cr: s("io_cpl_ready_i"),
            c_sqid: s("io_cpl_sqid_o"),
            c_cid: s("io_cpl_cid_o"),
            c_status: s("io_cpl_status_o"),
            c_dw0: s("io_cpl_dw0_o"),
            queue: VecDeque::new(),
            on: false,
            rng: Rng::new(seed),
            idle,
            cpls: Vec::new(),
            violations: Vec::new(),
            held: None,
            first_valid: None,
            last_cpl: 0,
        }
    }
}

impl Component for Cmds {
    fn sample(&mut self, cycle: u64) {
        if self.on && self.ready.is_high() {
            self.queue.pop_front();
            self.on = false;
        }
        if self.cv.is_high() {
            let now = (
                self.c_sqid.get(),
                self.c_cid.get(),
                self.c_status.get(),
                self.c_dw0.get(),
            );
            if let Some(h) = self.held {
                if h != now {
                    self.violations
                        .push("io_cpl payload changed while valid".into());
                }
            }
            if self.cr.is_high() {
                self.cpls
                    .push((now.0 as u16, now.1 as u16, now.2 as u16, now.3 as u32));
                self.last_cpl = cycle;
                self.held = None;
            } else {
                self.held = Some(now);
            }
        } else if self.held.take().is_some() {
            self.violations.push("io_cpl valid fell".into());
        }
    }
    fn drive(&mut self, cycle: u64) {
        if !self.on && !self.queue.is_empty() && !self.rng.chance(self.idle.0) {
            self.on = true;
        }
        if let Some((sqid, sqe)) = self.queue.front().filter(|_| self.on) {
            self.first_valid.get_or_insert(cycle);
            self.valid.set(1);
            self.sqid.set(u64::from(*sqid));
            let w: Vec<u32> = sqe
                .chunks(4)
                .map(|c| u32::from_le_bytes(c.try_into().expect("4")))
                .collect();
            self.sqe.set_words(&w);
        } else {
            self.valid.set(0);
        }
        self.cr.set(u64::from(!self.rng.chance(self.idle.1)));
    }
}

pub(in crate::suites::rdma) fn sqe_for(c: &Cmd, cid: u16) -> [u8; 64] {
    let mut s = [0u8; 64];
    let (opc, nsid, slba, nlb) = match c.kind {
        0 => (0x00, 1, 0, 0),
        1 => (0x08, 1, c.slba % (BLOCKS + 4), c.nlb % 8),
        2 => (0x02, 1, BLOCKS + c.slba % 8, c.nlb % 8),
        3 => (0x7e, 1, 0, 0),
        4 => (0x08, 2, 0, 0),
        5 => (0x01, 1, c.slba % (BLOCKS - 8), c.nlb % 8),
        8 => (0x02, 1, c.slba, c.nlb),
        9 => (0x01, 1, c.slba, c.nlb),
        10 => (0x01, 1, c.slba % (BLOCKS - 8), c.nlb % 2),
        _ => (0x02, 1, c.slba % (BLOCKS - 8), c.nlb % 8),
    };
    s[0] = opc;
    s[2..4].copy_from_slice(&cid.to_le_bytes());
    s[4..8].copy_from_slice(&(nsid as u32).to_le_bytes());
    // A host's PRP pointer in DPTR: the engine replaces it.
    s[24..32].copy_from_slice(&0x1234_5000u64.to_le_bytes());
    s[40..48].copy_from_slice(&slba.to_le_bytes());
    s[48..50].copy_from_slice(&nlb.to_le_bytes());
    s[60] = cid as u8; // CDW15: travels untouched
    s
}

/// Base of the Read buffers in host memory: each command's pages follow the previous one's.
pub(crate) const BASE: u64 = 0x10_0000;

/// A Read's or a Write's buffer: its SQ id and CID, and its pieces (address, bytes) in data
/// order.
pub(crate) struct Buf {
    pub(crate) sqid: u16,
    pub(crate) cid: u16,
    /// A Write's (host memory must not change).
    pub(crate) write: bool,
    /// A Write whose SGL descriptor has a reserved type: the DMA engine answers 11h (SGL
    /// Descriptor Type Invalid) and zeros; the engine's READ responses carry the zeros and the
    /// command completes with 11h whatever its CQE says.
    pub(crate) bad: bool,
    pub(crate) pieces: Vec<(u64, usize)>,
    /// The end of its region (buffer pages and a PRP list page).
    pub(crate) end: u64,
}

/// Gives the Read `sqe` a data pointer into fresh host memory (random bytes): PRP1 (and PRP2
/// when it crosses a page), or one SGL data block.
pub(crate) fn place(
    sqe: &mut [u8; 64],
    bufs: &mut Vec<Buf>,
    mem: &mut Memory,
    rng: &mut Rng,
    cid: u16,
    sqid: u16,
) {
    let len = (usize::from(u16::from_le_bytes([sqe[48], sqe[49]])) + 1) * 512;
    let base = bufs.last().map_or(BASE, |b| b.end);
    let pages = len.div_ceil(4096) as u64 + 1;
    let end = base + 4096 * (pages + 1);
    let junk: Vec<u8> = (0..end - base).map(|_| rng.next_u64() as u8).collect();
    mem.write(base, &junk);
    let off = rng.below(1024) * 4;
    let a = base + off;
    let mut dptr = [0u8; 16];
    dptr[0..8].copy_from_slice(&a.to_le_bytes());
    let mut bad = false;
    let pieces = if rng.chance(25) {
        dptr[8..12].copy_from_slice(&(len as u32).to_le_bytes());
        if sqe[0] == 0x01 && rng.chance(20) {
            bad = true;
            dptr[15] = 0x50;
        }
        sqe[1] = (sqe[1] & 0x3f) | 0x40;
        vec![(a, len)]
    } else {
        let first = (4096 - off as usize).min(len);
        let mut p = vec![(a, first)];
        let mut k = first;
        while k < len {
            let page = base + 4096 * p.len() as u64;
            p.push((page, (len - k).min(4096)));
            k += 4096;
        }
        let prp2 = match p.len() {
            1 => 0,
            2 => p[1].0,
            _ => {
                let list = end - 4096;
                for (i, (page, _)) in p[1..].iter().enumerate() {
                    mem.write_u64(list + 8 * i as u64, *page);
                }
                list
            }
        };
        dptr[8..16].copy_from_slice(&prp2.to_le_bytes());
        sqe[1] &= 0x3f;
        p
    };
    sqe[24..40].copy_from_slice(&dptr);
    bufs.push(Buf {
        sqid,
        cid,
        write: sqe[0] == 0x01,
        bad,
        pieces,
        end,
    });
}

/// Host memory after the run, against the Reads' buffers (see the call).
pub(super) fn check_memory(
    bufs: &[Buf],
    before: &Memory,
    after: &Memory,
    target: &Target,
    cpls: &[(u16, u16, u16, u32)],
    reference: &RefChip,
) -> Result<(), String> {
    let mut inside = vec![false; (bufs.last().map_or(BASE, |b| b.end) - BASE) as usize];
    for b in bufs {
        let q = usize::from(b.sqid) - 1;
        let sent = target
            .read_data
            .iter()
            .find(|r| r.0 == q && r.1 == b.cid)
            .map(|r| &r.2);
        let ok = cpls
            .iter()
            .any(|c| c.0 == b.sqid && c.1 == b.cid && c.2 == 0);
        if b.write {
            for &(addr, n) in &b.pieces {
                let i0 = (addr - BASE) as usize;
                inside[i0..i0 + n].fill(true);
                if after.read_vec(addr, n) != before.read_vec(addr, n) {
                    return Err(format!(
                        "SQ id {} CID {:#x}: a Write's buffer at {addr:#x} changed",
                        b.sqid, b.cid
                    ));
                }
            }
            continue;
        }
        let mut k = 0usize;
        for &(addr, n) in &b.pieces {
            let i0 = (addr - BASE) as usize;
            inside[i0..i0 + n].fill(true);
            let got = after.read_vec(addr, n);
            let old = before.read_vec(addr, n);
            for j in 0..n {
                let want = sent.map(|d| d[k + j]);
                let good = if ok {
                    Some(got[j]) == want
                } else {
                    got[j] == old[j] || Some(got[j]) == want
                };
                if !good {
                    return Err(format!(
                        "SQ id {} CID {:#x}: host memory byte {} at {:#x} is {:#04x}: sent {want:x?}, was {:#04x} (completed with success: {ok})",
                        b.sqid, b.cid, k + j, addr + j as u64, got[j], old[j]
                    ));
                }
            }
            k += n;
        }
    }
    let a = before.read_vec(BASE, inside.len());
    let b = after.read_vec(BASE, inside.len());
    if let Some(i) = (0..inside.len()).find(|&i| !inside[i] && a[i] != b[i]) {
        return Err(format!(
            "host memory at {:#x}, outside every Read's buffer, changed",
            BASE + i as u64
        ));
    }
    if after.pages() != before.pages() {
        return Err("host memory written outside the Read buffers' pages".into());
    }
    // Every accepted WRITE lies inside its command's data and carries the target's bytes.
    for (q, cid, off, data) in &reference.writes {
        let sent = target
            .read_data
            .iter()
            .find(|r| r.0 == *q && r.1 == *cid)
            .ok_or(format!(
                "QP {q} CID {cid:#x}: WRITE accepted for no Read the target sent"
            ))?;
        let o = *off as usize;
        if sent.2.get(o..o + data.len()) != Some(&data[..]) {
            return Err(format!(
                "QP {q} CID {cid:#x}: WRITE accepted at offset {off} that the target did not send"
            ));
        }
    }
    Ok(())
}

/// A buffer's bytes in data order, from `mem` (zeros for a bad SGL: what the DMA engine gives).
pub(crate) fn buf_bytes(b: &Buf, mem: &Memory) -> Vec<u8> {
    if b.bad {
        return vec![0; b.pieces.iter().map(|p| p.1).sum()];
    }
    b.pieces
        .iter()
        .flat_map(|&(a, n)| mem.read_vec(a, n))
        .collect()
}

/// A READ response the engine sent on QP `q` must be one packet of a READ request the
/// reference says it answers, with that packet's opcode, length and the host buffer's bytes:
/// nothing outside the command's data ever leaves.
pub(super) fn check_read_response(
    q: usize,
    p: &Packet,
    mtu: u32,
    reference: &RefChip,
    bufs: &[Buf],
    before: &Memory,
) -> Result<(), String> {
    let r = p.bth.psn;
    let aeth_ok = match p.aeth {
        Some(a) => a.syndrome == 0x1f,
        None => p.bth.opcode == op::READ_RESPONSE_MIDDLE,
    };
    let pad_ok = usize::from(p.bth.pad) == (4 - p.payload.len() % 4) % 4;
    if !aeth_ok || !pad_ok || p.bth.ack_req {
        return Err(format!(
            "QP {q}: READ response PSN {r:#x}: {:?} {:?}",
            p.bth, p.aeth
        ));
    }
    let fits = |&(rq, psn0, key, va, len): &(usize, u32, u32, u64, u32)| -> bool {
        let i = r.wrapping_sub(psn0) & 0xff_ffff;
        if rq != q || i >= len.div_ceil(mtu).max(1) {
            return false;
        }
        let off = i * mtu;
        let left = len - off;
        let opc = match (off == 0, left <= mtu) {
            (true, true) => op::READ_RESPONSE_ONLY,
            (true, false) => op::READ_RESPONSE_FIRST,
            (false, true) => op::READ_RESPONSE_LAST,
            (false, false) => op::READ_RESPONSE_MIDDLE,
        };
        let n = left.min(mtu) as usize;
        if p.bth.opcode != opc || p.payload.len() != n {
            return false;
        }
        let Some(w) = reference.windows.get(&key) else {
            return false;
        };
        let Some(b) = bufs
            .iter()
            .find(|b| usize::from(b.sqid) == w.0 + 1 && b.cid == w.1 && b.write)
        else {
            return false;
        };
        let data = buf_bytes(b, before);
        let at = (va + u64::from(off)) as usize;
        data.get(at..at + n) == Some(&p.payload[..])
    };
    if reference.reads.iter().any(fits) {
        Ok(())
    } else {
        Err(format!(
            "QP {q}: READ response {:#04x} PSN {r:#x} ({} bytes) is no packet of a READ the engine had to answer, or carries other bytes",
            p.bth.opcode,
            p.payload.len()
        ))
    }
}
