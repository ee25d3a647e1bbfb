//! The reference receiver (`RefChip`): the engine's rules (hdl-gen/src/roce/mod.rs) over the
//! frames it was given, in order: what it must answer, complete and count.

use super::*;

/// What the engine must do with a received frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Cat {
    Other,
    Malformed,
    Icrc,
    Opcode,
    Qp,
    Pass(usize),
}

#[derive(Clone, Debug)]
pub(super) struct RefQp {
    pub(super) qpn: u32,
    pub(super) pkey: u16,
    pub(super) epsn: u32,
    pub(super) nak_sent: bool,
    pub(super) msn: u32,
    pub(super) err: bool,
    pub(super) mtu: usize,
    /// The RDMA WRITE message in progress: (key, next offset, bytes left).
    pub(super) wr: Option<(u32, u32, u32)>,
}

/// An outstanding command's keyed window as the engine made it: (QP, CID, opcode, length).
pub(super) type Window = (usize, u16, u8, u32);

/// The reference receiver: the engine's rules (hdl-gen/src/roce/mod.rs) over the frames it
/// was given, in order.
pub(super) struct RefChip {
    pub(super) qps: Vec<RefQp>,
    pub(super) counts: BTreeMap<&'static str, u32>,
    /// ACK/NAK requests per QP: (syndrome, PSN, MSN).
    pub(super) acks: Vec<Vec<(u8, u32, u32)>>,
    /// Completions from accepted response capsules: (QP, CID, status, DW0).
    pub(super) cpls: Vec<(usize, u16, u16, u32)>,
    /// Keys of the capsules the engine sent, until their command completes.
    pub(super) keys: BTreeMap<u32, Window>,
    /// Accepted WRITE payloads: (QP, CID, offset, bytes).
    pub(super) writes: Vec<(usize, u16, u32, Vec<u8>)>,
    /// Every key the engine sent (kept after completion).
    pub(super) windows: BTreeMap<u32, Window>,
    /// READ requests the engine must answer (in order or replayed): (QP, PSN, key, VA, length).
    pub(super) reads: Vec<(usize, u32, u32, u64, u32)>,
    /// For each of `reads`, the number of ACK requests of its QP before it.
    pub(super) read_at: Vec<usize>,
}

pub(super) fn is_write(opc: u8) -> bool {
    matches!(
        opc,
        op::WRITE_FIRST | op::WRITE_MIDDLE | op::WRITE_LAST | op::WRITE_ONLY
    )
}

pub(super) fn be16(f: &[u8], i: usize) -> usize {
    usize::from(u16::from_be_bytes([f[i], f[i + 1]]))
}

pub(super) fn be24(f: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([0, f[i], f[i + 1], f[i + 2]])
}

impl RefChip {
    pub(super) fn count(&mut self, k: &'static str) {
        *self.counts.entry(k).or_default() += 1;
    }

    /// The drop cause of `f`, in the engine's order, or the QP it passes to.
    pub(super) fn classify(&self, f: &[u8]) -> Cat {
        if f.len() < 34 {
            return Cat::Malformed;
        }
        if be16(f, 12) != 0x0800 || f[14] >> 4 != 4 {
            return Cat::Other;
        }
        if f[14] & 0xf != 5 || be16(f, 20) & 0x3fff != 0 {
            return Cat::Malformed;
        }
        if f[23] != 17 {
            return Cat::Other;
        }
        let ip_len = be16(f, 16);
        if ip_len < 28 || ip_len > f.len() - 14 || ip_checksum(&f[14..34]) != 0 {
            return Cat::Malformed;
        }
        if be16(f, 36) != 4791 {
            return Cat::Other;
        }
        if be16(f, 38) != ip_len - 20 || ip_len - 28 < 16 {
            return Cat::Malformed;
        }
        let fr = &f[..14 + ip_len];
        let got = u32::from_le_bytes(fr[fr.len() - 4..].try_into().expect("4 bytes"));
        if got != icrc(fr) {
            return Cat::Icrc;
        }
        let (opc, flags) = (f[42], f[43]);
        let known = opc == op::SEND_ONLY
            || opc == op::ACKNOWLEDGE
            || opc == op::CNP
            || opc == op::READ_REQUEST
            || is_write(opc);
        if !known || flags & 0xf != 0 {
            return Cat::Opcode;
        }
        let t_len = ip_len - 28;
        let pad = usize::from(flags >> 4 & 3);
        let wr_hdr = if matches!(opc, op::WRITE_FIRST | op::WRITE_ONLY) {
            32
        } else {
            16
        };
        if (opc == op::ACKNOWLEDGE && (t_len != 20 || pad != 0))
            || (opc == op::CNP && (t_len != 32 || pad != 0))
            || (opc == op::SEND_ONLY && pad > t_len - 16)
            || (is_write(opc) && (t_len < wr_hdr || pad > t_len - wr_hdr))
            || (opc == op::READ_REQUEST && (t_len != 32 || pad != 0))
        {
            return Cat::Malformed;
        }
        let dqp = be24(f, 47);
        match self.qps.iter().position(|q| q.qpn == dqp) {
            Some(q) if self.qps[q].pkey as usize == be16(f, 44) && !self.qps[q].err => Cat::Pass(q),
            _ => Cat::Qp,
        }
    }

    pub(super) fn deliver(&mut self, f: &[u8]) {
        self.count("rx_frames");
        match self.classify(f) {
            Cat::Other => self.count("drop_other"),
            Cat::Malformed => self.count("drop_malformed"),
            Cat::Icrc => self.count("drop_icrc"),
            Cat::Opcode => self.count("drop_opcode"),
            Cat::Qp => self.count("drop_qp"),
            Cat::Pass(q) => {
                let p = Packet::decode(f).expect("a frame that passes the checks decodes");
                if p.bth.opcode == op::CNP {
                    return; // congestion control only (property rdma_cc)
                }
                let x = &mut self.qps[q];
                if p.bth.opcode == op::ACKNOWLEDGE {
                    let s = p.aeth.expect("AETH").syndrome;
                    if s >> 5 == 0 {
                        self.count("rx_ack");
                    } else {
                        self.count("rx_nak");
                        if (0x61..=0x63).contains(&s) {
                            self.qps[q].err = true;
                        }
                    }
                    return;
                }
                let psn = p.bth.psn;
                let d = psn.wrapping_sub(x.epsn) & 0xff_ffff;
                if p.bth.opcode == op::READ_REQUEST {
                    let reth = p.reth.expect("RETH");
                    let key_ok = self.keys.get(&reth.rkey).is_some_and(|w| {
                        w.0 == q
                            && matches!(w.2, 0x01 | 0x05)
                            && reth.va + u64::from(reth.len) <= u64::from(w.3)
                    });
                    let x = &mut self.qps[q];
                    let m = x.msn;
                    if d == 0 {
                        x.nak_sent = false;
                        if x.wr.is_some() {
                            x.err = true;
                            self.acks[q].push((0x61, psn, m));
                        } else if !key_ok {
                            x.err = true;
                            self.acks[q].push((0x62, psn, m));
                        } else {
                            let span = reth.len.div_ceil(x.mtu as u32).max(1);
                            x.epsn = (x.epsn + span) & 0xff_ffff;
                            x.msn = (x.msn + 1) & 0xff_ffff;
                            *self.counts.entry("rx_reads").or_default() += 1;
                            self.reads.push((q, psn, reth.rkey, reth.va, reth.len));
                            self.read_at.push(self.acks[q].len());
                        }
                    } else if d < 0x80_0000 {
                        *self.counts.entry("drop_psn").or_default() += 1;
                        if !x.nak_sent {
                            x.nak_sent = true;
                            let e = x.epsn;
                            self.acks[q].push((0x60, e, m));
                        }
                    } else {
                        *self.counts.entry("rx_dup").or_default() += 1;
                        if key_ok {
                            *self.counts.entry("rx_reads").or_default() += 1;
                            self.reads.push((q, psn, reth.rkey, reth.va, reth.len));
                            self.read_at.push(self.acks[q].len());
                        }
                    }
                    return;
                }
                if d == 0 && is_write(p.bth.opcode) {
                    x.nak_sent = false;
                    let opc = p.bth.opcode;
                    let n = p.payload.len() as u32;
                    let mtu = x.mtu as u32;
                    let first = matches!(opc, op::WRITE_FIRST | op::WRITE_ONLY);
                    let seq_bad = first == x.wr.is_some();
                    let left = x.wr.map_or(0, |w| w.2);
                    let reth = p.reth.unwrap_or_default();
                    let len_bad = match opc {
                        op::WRITE_FIRST => n != mtu || p.bth.pad != 0 || reth.len <= mtu,
                        op::WRITE_MIDDLE => n != mtu || p.bth.pad != 0 || left <= mtu,
                        op::WRITE_LAST => n > mtu || n != left,
                        _ => n > mtu || n != reth.len,
                    };
                    let key_ok = !first
                        || self.keys.get(&reth.rkey).is_some_and(|w| {
                            w.0 == q
                                && w.2 == 0x02
                                && reth.va + u64::from(reth.len) <= u64::from(w.3)
                        });
                    let m = x.msn;
                    if seq_bad || len_bad {
                        x.err = true;
                        self.acks[q].push((0x61, psn, m));
                    } else if !key_ok {
                        x.err = true;
                        self.acks[q].push((0x62, psn, m));
                    } else {
                        let (key, off) = if first {
                            (reth.rkey, reth.va as u32)
                        } else {
                            let w = x.wr.expect("in a message");
                            (w.0, w.1)
                        };
                        let total_left = if first { reth.len } else { left };
                        x.wr = matches!(opc, op::WRITE_FIRST | op::WRITE_MIDDLE).then_some((
                            key,
                            off + n,
                            total_left - n,
                        ));
                        x.epsn = (x.epsn + 1) & 0xff_ffff;
                        if x.wr.is_none() {
                            x.msn = (x.msn + 1) & 0xff_ffff;
                        }
                        let m = x.msn;
                        self.acks[q].push((0x1f, psn, m));
                        self.count("rx_writes");
                        let w = self.keys[&key];
                        if n > 0 {
                            self.writes.push((q, w.1, off, p.payload.clone()));
                        }
                    }
                } else if d == 0 {
                    x.nak_sent = false;
                    if p.payload.len() == 16 && x.wr.is_none() {
                        x.epsn = (x.epsn + 1) & 0xff_ffff;
                        x.msn = (x.msn + 1) & 0xff_ffff;
                        let c = &p.payload;
                        let dw3 = u32::from_le_bytes(c[12..16].try_into().expect("4"));
                        let dw0 = u32::from_le_bytes(c[0..4].try_into().expect("4"));
                        self.cpls.push((q, dw3 as u16, (dw3 >> 17) as u16, dw0));
                        let cid = dw3 as u16;
                        self.keys.retain(|_, w| !(w.0 == q && w.1 == cid));
                        let m = x.msn;
                        self.acks[q].push((0x1f, psn, m));
                    } else {
                        x.err = true;
                        let m = x.msn;
                        self.acks[q].push((0x61, psn, m));
                    }
                } else if d < 0x80_0000 {
                    *self.counts.entry("drop_psn").or_default() += 1;
                    if !x.nak_sent {
                        x.nak_sent = true;
                        let (e, m) = (x.epsn, x.msn);
                        self.acks[q].push((0x60, e, m));
                    }
                } else {
                    *self.counts.entry("rx_dup").or_default() += 1;
                    let (e, m) = ((x.epsn + 0xff_ffff) & 0xff_ffff, x.msn);
                    self.acks[q].push((0x1f, e, m));
                }
            }
        }
    }
}
