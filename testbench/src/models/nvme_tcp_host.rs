//! Reference model of the chip's side of one NVMe/TCP connection (the host), at transaction
//! level: commands in (the SQE as the front end fetched it, and for writes the data the DMA
//! engine would read), PDUs out; PDUs in, completions and host-memory writes out. It is the
//! behaviour the RTL (`hdl-gen/src/nvme_tcp/`) must show, and the model-only property runs it
//! against the target model.
//!
//! Choices (the same in the RTL):
//! - CCCID is the command's own CID (CIDs are unique per SQ, and a connection serves one SQ).
//! - The SQE goes out with PSDT 01b and DPTR rewritten to one SGL descriptor: a data block with
//!   an offset (01h) for in-capsule data, else a transport SGL data block (5Ah); length = the
//!   command's data length, `(NLB + 1) * LBA size` for Read/Write, 0 for anything else.
//! - Writes of at most `icd_max` bytes go in the capsule; larger ones wait for R2Ts and answer
//!   each with H2CData PDUs of at most MAXH2CDATA bytes, the last flagged LAST_PDU.
//! - A C2HData is checked whole (header, CCCID of an outstanding read, DATAO + DATAL inside the
//!   command) before any of its bytes are written to host memory.
//! - A data digest error completes the command with Transient Transport Error (22h) once its
//!   response (or SUCCESS) arrives; the connection stays up.
//! - Any other fatal error sends one H2CTermReq (FES, FEI, the offending header), the connection
//!   stops, and every outstanding command (and every later one) completes with 22h.

use super::nvme_tcp::{
    fes, sqe, Expect, Fatal, Framer, Pdu, Wire, SGL_IN_CAPSULE, SGL_TRANSPORT,
    STATUS_TRANSIENT_TRANSPORT, TERM_REQ_MAX_DATA,
};
use std::collections::{BTreeMap, VecDeque};

/// How the host side is configured.
#[derive(Clone, Copy, Debug)]
pub struct HostConfig {
    /// Ask for header digests.
    pub hdgst: bool,
    /// Ask for data digests.
    pub ddgst: bool,
    /// HPDA asked for (0's based dwords, 0 to 31).
    pub hpda: u8,
    /// Largest write sent in the capsule, bytes.
    pub icd_max: u32,
    /// Logical block size, bytes.
    pub lba_bytes: u32,
    /// Largest PDU accepted (PLEN); bigger is FES 05h.
    pub max_plen: u32,
}

/// One completion toward the front end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// Command identifier.
    pub cid: u16,
    /// Status field (0 success).
    pub status: u16,
    /// DW0.
    pub dw0: u32,
}

#[derive(Clone, Debug)]
struct HCmd {
    write: bool,
    len: u32,
    /// Write data (host memory as the DMA engine reads it).
    data: Vec<u8>,
    /// Data digest error seen.
    digest_error: bool,
    /// Read bytes received.
    received: u32,
}

/// Connection state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// ICReq sent, waiting for the ICResp.
    Connecting,
    /// Commands flow.
    Ready,
    /// Ended by a TermReq (sent or received).
    Dead,
}

/// The host end of one connection.
pub struct Host {
    cfg: HostConfig,
    /// Connection state.
    pub state: State,
    framer: Framer,
    rx: Wire,
    tx: Wire,
    /// MAXH2CDATA from the ICResp.
    pub maxh2cdata: u32,
    cmds: BTreeMap<u16, HCmd>,
    queued: VecDeque<([u8; 64], Vec<u8>)>,
    out: VecDeque<u8>,
    /// Completions, in the order they were made.
    pub completions: Vec<Completion>,
    /// Host-memory writes of read data: (CID, offset in the command's data, bytes).
    pub writes: Vec<(u16, u32, Vec<u8>)>,
    /// The TermReq sent, if any.
    pub term_sent: Option<Fatal>,
    /// A C2HTermReq was received.
    pub term_received: Option<(u16, u32)>,
    /// Every PDU sent, encoded.
    pub sent_pdus: Vec<Vec<u8>>,
}

impl Host {
    /// A host that has just sent its ICReq.
    pub fn new(cfg: HostConfig) -> Host {
        let mut h = Host {
            cfg,
            state: State::Connecting,
            framer: Framer::default(),
            rx: Wire::default(),
            tx: Wire::default(),
            maxh2cdata: 0,
            cmds: BTreeMap::new(),
            queued: VecDeque::new(),
            out: VecDeque::new(),
            completions: Vec::new(),
            writes: Vec::new(),
            term_sent: None,
            term_received: None,
            sent_pdus: Vec::new(),
        };
        h.send(Pdu::IcReq {
            pfv: 0,
            hpda: cfg.hpda,
            hdgst: cfg.hdgst,
            ddgst: cfg.ddgst,
            maxr2t: 0,
        });
        h
    }

    /// The negotiated wire format of PDUs the host sends.
    pub fn tx_wire(&self) -> Wire {
        self.tx
    }

    fn send(&mut self, p: Pdu) {
        let b = p.encode(self.tx);
        self.out.extend(b.iter().copied());
        self.sent_pdus.push(b);
    }

    /// Bytes waiting to go to the target.
    pub fn pending(&self) -> usize {
        self.out.len()
    }

    /// Takes up to `max` bytes of the stream to the target.
    pub fn take(&mut self, max: usize) -> Vec<u8> {
        let n = max.min(self.out.len());
        self.out.drain(..n).collect()
    }

    /// Commands submitted and not completed.
    pub fn outstanding(&self) -> usize {
        self.cmds.len() + self.queued.len()
    }

    /// The data length of a command: `(NLB + 1) * LBA size` for Read and Write, else 0.
    pub fn data_len(&self, s: &[u8; 64]) -> u32 {
        match sqe::opc(s) {
            0x01 | 0x02 => (u32::from(sqe::nlb(s)) + 1) * self.cfg.lba_bytes,
            _ => 0,
        }
    }

    /// Submits a command (`data`: the write data, as host memory holds it).
    pub fn submit(&mut self, s: [u8; 64], data: Vec<u8>) {
        match self.state {
            State::Connecting => self.queued.push_back((s, data)),
            State::Ready => self.issue(s, data),
            State::Dead => self.completions.push(Completion {
                cid: sqe::cid(&s),
                status: STATUS_TRANSIENT_TRANSPORT,
                dw0: 0,
            }),
        }
    }

    /// The SQE as it goes on the wire.
    pub fn wire_sqe(&self, s: &[u8; 64]) -> [u8; 64] {
        let len = self.data_len(s);
        let write = sqe::opc(s) == 0x01;
        let mut w = *s;
        w[1] = (w[1] & 0x3f) | 0x40;
        w[24..40].fill(0);
        w[32..36].copy_from_slice(&len.to_le_bytes());
        w[39] = if write && len <= self.cfg.icd_max && len > 0 {
            SGL_IN_CAPSULE
        } else {
            SGL_TRANSPORT
        };
        w
    }

    fn issue(&mut self, s: [u8; 64], data: Vec<u8>) {
        let len = self.data_len(&s);
        let write = sqe::opc(&s) == 0x01;
        let w = self.wire_sqe(&s);
        let icd = w[39] == SGL_IN_CAPSULE;
        assert_eq!(data.len(), if write { len as usize } else { 0 });
        self.send(Pdu::CapsuleCmd {
            sqe: w,
            data: if icd { data.clone() } else { Vec::new() },
        });
        self.cmds.insert(
            sqe::cid(&s),
            HCmd {
                write,
                len,
                data,
                digest_error: false,
                received: 0,
            },
        );
    }

    fn complete(&mut self, cid: u16, status: u16, dw0: u32) {
        let c = self
            .cmds
            .remove(&cid)
            .expect("completing an outstanding command");
        let status = if c.digest_error && status == 0 {
            STATUS_TRANSIENT_TRANSPORT
        } else {
            status
        };
        self.completions.push(Completion { cid, status, dw0 });
    }

    fn fatal(&mut self, f: Fatal, header: Vec<u8>) {
        let mut data = header;
        data.truncate(TERM_REQ_MAX_DATA);
        self.send(Pdu::TermReq {
            c2h: false,
            fes: f.fes,
            fei: f.fei,
            data,
        });
        self.term_sent = Some(f);
        self.die();
    }

    fn die(&mut self) {
        self.state = State::Dead;
        let cids: Vec<u16> = self.cmds.keys().copied().collect();
        for cid in cids {
            self.cmds.remove(&cid);
            self.completions.push(Completion {
                cid,
                status: STATUS_TRANSIENT_TRANSPORT,
                dw0: 0,
            });
        }
        while let Some((s, _)) = self.queued.pop_front() {
            self.completions.push(Completion {
                cid: sqe::cid(&s),
                status: STATUS_TRANSIENT_TRANSPORT,
                dw0: 0,
            });
        }
    }

    /// Takes bytes from the target.
    pub fn receive(&mut self, bytes: &[u8]) {
        if self.state == State::Dead {
            return;
        }
        self.framer.push(bytes);
        while self.state != State::Dead {
            let e = Expect {
                connected: self.state == State::Ready,
                wire: self.rx,
                host: true,
                max_plen: self.cfg.max_plen,
            };
            match self.framer.next(&e) {
                None => break,
                Some(Err((f, header))) => self.fatal(f, header),
                Some(Ok(r)) => {
                    let header = r.raw[..r.raw.len().min(r.raw[2] as usize + 4)].to_vec();
                    if let Err(f) = self.handle(r.pdu, r.data_digest_error) {
                        self.fatal(f, header);
                    }
                }
            }
        }
    }

    fn handle(&mut self, pdu: Pdu, digest_error: bool) -> Result<(), Fatal> {
        let bad = |fei: u32, why: String| Err(Fatal::new(fes::INVALID_HEADER_FIELD, fei, why));
        match pdu {
            Pdu::IcResp {
                pfv,
                cpda,
                hdgst,
                ddgst,
                maxh2cdata,
            } => {
                let unsup =
                    |fei: u32, why: String| Err(Fatal::new(fes::UNSUPPORTED_PARAMETER, fei, why));
                if pfv != 0 {
                    return unsup(8, format!("PFV {pfv}"));
                }
                if cpda > 31 {
                    return unsup(10, format!("CPDA {cpda}"));
                }
                if (hdgst && !self.cfg.hdgst) || (ddgst && !self.cfg.ddgst) {
                    return unsup(11, "a digest the host did not ask for".into());
                }
                if maxh2cdata < 4096 || maxh2cdata % 4 != 0 {
                    return unsup(12, format!("MAXH2CDATA {maxh2cdata}"));
                }
                self.maxh2cdata = maxh2cdata;
                self.rx = Wire {
                    hdgst,
                    ddgst,
                    pda: self.cfg.hpda,
                };
                self.tx = Wire {
                    hdgst,
                    ddgst,
                    pda: cpda,
                };
                self.state = State::Ready;
                while let Some((s, d)) = self.queued.pop_front() {
                    self.issue(s, d);
                }
                Ok(())
            }
            Pdu::TermReq { fes, fei, .. } => {
                self.term_received = Some((fes, fei));
                self.die();
                Ok(())
            }
            Pdu::CapsuleResp { cqe } => {
                let (cid, status, dw0) = super::nvme_tcp::cqe_fields(&cqe);
                match self.cmds.get(&cid) {
                    None => bad(20, format!("CapsuleResp for CID {cid}, not outstanding")),
                    Some(_) => {
                        self.complete(cid, status, dw0);
                        Ok(())
                    }
                }
            }
            Pdu::Data {
                cccid,
                datao,
                data,
                last,
                success,
                ..
            } => {
                let Some(c) = self.cmds.get_mut(&cccid) else {
                    return bad(8, format!("C2HData for CCCID {cccid}, not outstanding"));
                };
                if c.write {
                    return bad(8, format!("C2HData for CCCID {cccid}, a write"));
                }
                let end = u64::from(datao) + data.len() as u64;
                if end > u64::from(c.len) {
                    return Err(Fatal::new(
                        fes::OUT_OF_RANGE,
                        0,
                        format!("C2HData DATAO {datao} + DATAL {} > {}", data.len(), c.len),
                    ));
                }
                c.received += data.len() as u32;
                // A PDU that failed its data digest writes nothing to host memory.
                if digest_error {
                    c.digest_error = true;
                } else {
                    self.writes.push((cccid, datao, data));
                }
                if success && last {
                    self.complete(cccid, 0, 0);
                }
                Ok(())
            }
            Pdu::R2t {
                cccid,
                ttag,
                r2to,
                r2tl,
            } => {
                let Some(c) = self.cmds.get(&cccid) else {
                    return bad(8, format!("R2T for CCCID {cccid}, not outstanding"));
                };
                if !c.write {
                    return bad(8, format!("R2T for CCCID {cccid}, a read"));
                }
                if u64::from(r2to) + u64::from(r2tl) > u64::from(c.len) || r2tl == 0 {
                    return Err(Fatal::new(
                        fes::OUT_OF_RANGE,
                        0,
                        format!("R2T R2TO {r2to} + R2TL {r2tl} > {}", c.len),
                    ));
                }
                let chunk = self.maxh2cdata;
                let payload = c.data[r2to as usize..(r2to + r2tl) as usize].to_vec();
                let mut off = 0u32;
                while off < r2tl {
                    let n = chunk.min(r2tl - off);
                    self.send(Pdu::Data {
                        c2h: false,
                        cccid,
                        ttag,
                        datao: r2to + off,
                        data: payload[off as usize..(off + n) as usize].to_vec(),
                        last: off + n == r2tl,
                        success: false,
                    });
                    off += n;
                }
                Ok(())
            }
            other => bad(0, format!("unexpected {other:?}")),
        }
    }
}
