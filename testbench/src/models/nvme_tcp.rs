//! NVMe/TCP PDU codec: the one Rust description of the wire format, used by the target model,
//! the host reference model, the scoreboards and the pcap writer.
//!
//! Facts (NVMe/TCP transport specification, Linux `include/linux/nvme-tcp.h`): every PDU starts
//! with an 8-byte common header `type, flags, hlen, pdo, plen (LE)`; the PDU specific header
//! follows up to `hlen`; then an optional header digest (CRC-32C of the `hlen` bytes, 4 bytes
//! LE), padding up to `pdo`, the data, and an optional data digest (CRC-32C of the data only).
//! ICReq/ICResp and TermReqs never carry digests.

use super::crc::CRC32C;

/// PDU types.
pub mod ty {
    /// Initialize Connection Request (host to controller).
    pub const IC_REQ: u8 = 0x00;
    /// Initialize Connection Response.
    pub const IC_RESP: u8 = 0x01;
    /// Host to controller Terminate Connection Request.
    pub const H2C_TERM_REQ: u8 = 0x02;
    /// Controller to host Terminate Connection Request.
    pub const C2H_TERM_REQ: u8 = 0x03;
    /// Command capsule.
    pub const CAPSULE_CMD: u8 = 0x04;
    /// Response capsule.
    pub const CAPSULE_RESP: u8 = 0x05;
    /// Host to controller data.
    pub const H2C_DATA: u8 = 0x06;
    /// Controller to host data.
    pub const C2H_DATA: u8 = 0x07;
    /// Ready to transfer.
    pub const R2T: u8 = 0x09;
}

/// Common header flags.
pub mod flag {
    /// A header digest follows the header.
    pub const HDGSTF: u8 = 0x01;
    /// A data digest follows the data.
    pub const DDGSTF: u8 = 0x02;
    /// The last data PDU of a transfer (C2HData: of the command; H2CData: of the R2T).
    pub const LAST_PDU: u8 = 0x04;
    /// C2HData: the command succeeded and no CapsuleResp follows (only with LAST_PDU).
    pub const SUCCESS: u8 = 0x08;
}

/// Fatal error status (TermReq FES).
pub mod fes {
    /// Invalid PDU header field (FEI: byte offset of the field).
    pub const INVALID_HEADER_FIELD: u16 = 0x01;
    /// PDU sequence error.
    pub const SEQUENCE_ERROR: u16 = 0x02;
    /// Header digest error.
    pub const HEADER_DIGEST: u16 = 0x03;
    /// Data transfer out of range.
    pub const OUT_OF_RANGE: u16 = 0x04;
    /// Data transfer limit exceeded.
    pub const LIMIT_EXCEEDED: u16 = 0x05;
    /// Unsupported parameter (FEI: byte offset of the field).
    pub const UNSUPPORTED_PARAMETER: u16 = 0x06;
}

/// Header lengths (`hlen`) by type.
pub const ICREQ_LEN: usize = 128;
/// CapsuleCmd header: common header + SQE.
pub const CMD_HLEN: usize = 72;
/// CapsuleResp, data PDUs, R2T and TermReq headers.
pub const HLEN24: usize = 24;
/// The largest TermReq: header + the offending PDU's header (at most 128 + digest bytes kept).
pub const TERM_REQ_MAX_DATA: usize = 152 - HLEN24;

/// NVMe Transient Transport Error status (SCT 0, SC 22h), the CQE status field value.
pub const STATUS_TRANSIENT_TRANSPORT: u16 = 0x22;

/// CRC-32C as the digests use it.
pub fn crc32c(data: &[u8]) -> u32 {
    CRC32C.checksum(data) as u32
}

/// The expected header length of a PDU type, `None` for an unknown type.
pub fn hlen_of(t: u8) -> Option<usize> {
    match t {
        ty::IC_REQ | ty::IC_RESP => Some(ICREQ_LEN),
        ty::CAPSULE_CMD => Some(CMD_HLEN),
        ty::H2C_TERM_REQ
        | ty::C2H_TERM_REQ
        | ty::CAPSULE_RESP
        | ty::H2C_DATA
        | ty::C2H_DATA
        | ty::R2T => Some(HLEN24),
        _ => None,
    }
}

/// Whether PDUs of this type may carry a header digest (all but ICReq/ICResp/TermReqs).
pub fn has_digests(t: u8) -> bool {
    !matches!(
        t,
        ty::IC_REQ | ty::IC_RESP | ty::H2C_TERM_REQ | ty::C2H_TERM_REQ
    )
}

/// Whether PDUs of this type carry data (and so may have a data digest).
pub fn carries_data(t: u8) -> bool {
    matches!(t, ty::CAPSULE_CMD | ty::H2C_DATA | ty::C2H_DATA)
}

/// One PDU, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pdu {
    /// ICReq: PFV, HPDA (0's based dwords), digests asked for, MAXR2T (0's based).
    IcReq {
        pfv: u16,
        hpda: u8,
        hdgst: bool,
        ddgst: bool,
        maxr2t: u32,
    },
    /// ICResp: PFV, CPDA, digests enabled, MAXH2CDATA.
    IcResp {
        pfv: u16,
        cpda: u8,
        hdgst: bool,
        ddgst: bool,
        maxh2cdata: u32,
    },
    /// H2CTermReq (`c2h` false) or C2HTermReq: FES, FEI, the offending header.
    TermReq {
        c2h: bool,
        fes: u16,
        fei: u32,
        data: Vec<u8>,
    },
    /// CapsuleCmd: the SQE and in-capsule data.
    CapsuleCmd { sqe: [u8; 64], data: Vec<u8> },
    /// CapsuleResp: the CQE.
    CapsuleResp { cqe: [u8; 16] },
    /// H2CData (`c2h` false) or C2HData.
    Data {
        c2h: bool,
        cccid: u16,
        ttag: u16,
        datao: u32,
        data: Vec<u8>,
        last: bool,
        success: bool,
    },
    /// R2T.
    R2t {
        cccid: u16,
        ttag: u16,
        r2to: u32,
        r2tl: u32,
    },
}

/// How a side encodes its PDUs: negotiated digests and the data alignment the peer asked for
/// (the host pads to CPDA, the controller to HPDA; 0's based dwords).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wire {
    /// Header digests on.
    pub hdgst: bool,
    /// Data digests on.
    pub ddgst: bool,
    /// Data alignment of PDUs this side sends, 0's based dwords (0 to 31).
    pub pda: u8,
}

impl Pdu {
    /// The PDU type byte.
    pub fn pdu_type(&self) -> u8 {
        match self {
            Pdu::IcReq { .. } => ty::IC_REQ,
            Pdu::IcResp { .. } => ty::IC_RESP,
            Pdu::TermReq { c2h: false, .. } => ty::H2C_TERM_REQ,
            Pdu::TermReq { c2h: true, .. } => ty::C2H_TERM_REQ,
            Pdu::CapsuleCmd { .. } => ty::CAPSULE_CMD,
            Pdu::CapsuleResp { .. } => ty::CAPSULE_RESP,
            Pdu::Data { c2h: false, .. } => ty::H2C_DATA,
            Pdu::Data { c2h: true, .. } => ty::C2H_DATA,
            Pdu::R2t { .. } => ty::R2T,
        }
    }

    /// Encodes the PDU with `wire`'s digests and padding.
    pub fn encode(&self, wire: Wire) -> Vec<u8> {
        let t = self.pdu_type();
        let hlen = hlen_of(t).expect("known type");
        let mut h = vec![0u8; hlen];
        h[0] = t;
        h[2] = hlen as u8;
        let mut flags = 0u8;
        let mut data: &[u8] = &[];
        match self {
            Pdu::IcReq {
                pfv,
                hpda,
                hdgst,
                ddgst,
                maxr2t,
            } => {
                h[8..10].copy_from_slice(&pfv.to_le_bytes());
                h[10] = *hpda;
                h[11] = u8::from(*hdgst) | u8::from(*ddgst) << 1;
                h[12..16].copy_from_slice(&maxr2t.to_le_bytes());
            }
            Pdu::IcResp {
                pfv,
                cpda,
                hdgst,
                ddgst,
                maxh2cdata,
            } => {
                h[8..10].copy_from_slice(&pfv.to_le_bytes());
                h[10] = *cpda;
                h[11] = u8::from(*hdgst) | u8::from(*ddgst) << 1;
                h[12..16].copy_from_slice(&maxh2cdata.to_le_bytes());
            }
            Pdu::TermReq { fes, fei, data, .. } => {
                h[8..10].copy_from_slice(&fes.to_le_bytes());
                h[10..14].copy_from_slice(&fei.to_le_bytes());
                let mut out = h;
                out.extend_from_slice(data);
                let plen = out.len() as u32;
                out[4..8].copy_from_slice(&plen.to_le_bytes());
                return out;
            }
            Pdu::CapsuleCmd { sqe, data: d } => {
                h[8..72].copy_from_slice(sqe);
                data = d;
            }
            Pdu::CapsuleResp { cqe } => h[8..24].copy_from_slice(cqe),
            Pdu::Data {
                c2h: _,
                cccid,
                ttag,
                datao,
                data: d,
                last,
                success,
            } => {
                h[8..10].copy_from_slice(&cccid.to_le_bytes());
                h[10..12].copy_from_slice(&ttag.to_le_bytes());
                h[12..16].copy_from_slice(&datao.to_le_bytes());
                h[16..20].copy_from_slice(&(d.len() as u32).to_le_bytes());
                if *last {
                    flags |= flag::LAST_PDU;
                }
                if *success {
                    flags |= flag::SUCCESS;
                }
                data = d;
            }
            Pdu::R2t {
                cccid,
                ttag,
                r2to,
                r2tl,
            } => {
                h[8..10].copy_from_slice(&cccid.to_le_bytes());
                h[10..12].copy_from_slice(&ttag.to_le_bytes());
                h[12..16].copy_from_slice(&r2to.to_le_bytes());
                h[16..20].copy_from_slice(&r2tl.to_le_bytes());
            }
        }
        let digests = has_digests(t);
        let hd = digests && wire.hdgst;
        let dd = digests && wire.ddgst && !data.is_empty();
        if hd {
            flags |= flag::HDGSTF;
        }
        if dd {
            flags |= flag::DDGSTF;
        }
        h[1] = flags;
        let hd_len = if hd { 4 } else { 0 };
        let pdo = if data.is_empty() {
            0
        } else {
            data_offset(hlen + hd_len, wire.pda)
        };
        let plen = if data.is_empty() {
            hlen + hd_len
        } else {
            pdo + data.len() + if dd { 4 } else { 0 }
        };
        h[3] = pdo as u8;
        h[4..8].copy_from_slice(&(plen as u32).to_le_bytes());
        let mut out = h;
        if hd {
            let d = crc32c(&out);
            out.extend_from_slice(&d.to_le_bytes());
        }
        out.resize(pdo.max(out.len()), 0);
        out.extend_from_slice(data);
        if dd {
            out.extend_from_slice(&crc32c(data).to_le_bytes());
        }
        debug_assert_eq!(out.len(), plen);
        out
    }
}

/// Where the data starts after `hdr` header (and header digest) bytes, aligned to `(pda+1)*4`.
pub fn data_offset(hdr: usize, pda: u8) -> usize {
    let a = (pda as usize + 1) * 4;
    hdr.div_ceil(a) * a
}

/// A fatal error found in a received PDU: what goes into the TermReq.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fatal {
    /// FES.
    pub fes: u16,
    /// FEI (byte offset of the field for FES 01h and 06h, else 0).
    pub fei: u32,
    /// Why, for reports.
    pub why: String,
}

impl Fatal {
    /// A fatal error with FES and FEI.
    pub fn new(fes: u16, fei: u32, why: impl Into<String>) -> Fatal {
        Fatal {
            fes,
            fei,
            why: why.into(),
        }
    }
}

/// A PDU received, with what its checks found that is not fatal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Received {
    /// The PDU.
    pub pdu: Pdu,
    /// Its data digest did not match (the PDU is otherwise well formed).
    pub data_digest_error: bool,
    /// The raw bytes, as received.
    pub raw: Vec<u8>,
}

/// The fields of a common header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Type.
    pub t: u8,
    /// Flags.
    pub flags: u8,
    /// HLEN.
    pub hlen: u8,
    /// PDO.
    pub pdo: u8,
    /// PLEN.
    pub plen: u32,
}

impl Header {
    /// Reads the common header (8 bytes).
    pub fn read(b: &[u8]) -> Header {
        Header {
            t: b[0],
            flags: b[1],
            hlen: b[2],
            pdo: b[3],
            plen: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        }
    }
}

/// What a receiver expects: the digests it negotiated, the alignment the peer was told to use,
/// the largest data PDU it takes, and which direction it receives (true: a host, receiving C2H).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expect {
    /// Connection established (ICReq/ICResp done): digests apply.
    pub connected: bool,
    /// Negotiated digests and the peer's data alignment.
    pub wire: Wire,
    /// The receiver is the host.
    pub host: bool,
    /// Largest PLEN accepted (a limit of the receiver's buffers).
    pub max_plen: u32,
}

/// Checks a common header as soon as its 8 bytes are in: the type, HLEN, PDO, PLEN and flags
/// against what the connection negotiated. Returns the PDU's length.
pub fn check_header(h: &Header, e: &Expect) -> Result<usize, Fatal> {
    let bad = |fei: u32, why: String| Err(Fatal::new(fes::INVALID_HEADER_FIELD, fei, why));
    let ours: &[u8] = if e.host {
        &[
            ty::IC_RESP,
            ty::C2H_TERM_REQ,
            ty::CAPSULE_RESP,
            ty::C2H_DATA,
            ty::R2T,
        ]
    } else {
        &[ty::IC_REQ, ty::H2C_TERM_REQ, ty::CAPSULE_CMD, ty::H2C_DATA]
    };
    if !ours.contains(&h.t) {
        return bad(
            0,
            format!("PDU type {:#04x} is not one this side receives", h.t),
        );
    }
    let ic = matches!(h.t, ty::IC_REQ | ty::IC_RESP);
    if ic == e.connected && h.t != ty::C2H_TERM_REQ && h.t != ty::H2C_TERM_REQ {
        return Err(Fatal::new(
            fes::SEQUENCE_ERROR,
            0,
            format!(
                "PDU type {:#04x} {} the connection is initialized",
                h.t,
                if e.connected { "after" } else { "before" }
            ),
        ));
    }
    let hlen = hlen_of(h.t).unwrap();
    if h.hlen as usize != hlen {
        return bad(
            2,
            format!("HLEN {} for type {:#04x}, expected {hlen}", h.hlen, h.t),
        );
    }
    let term = matches!(h.t, ty::C2H_TERM_REQ | ty::H2C_TERM_REQ);
    if ic || term {
        if h.flags != 0 {
            return bad(
                1,
                format!("flags {:#04x} on an ICReq/ICResp/TermReq", h.flags),
            );
        }
        if h.pdo != 0 {
            return bad(3, format!("PDO {} on an ICReq/ICResp/TermReq", h.pdo));
        }
        let ok = if ic {
            h.plen as usize == hlen
        } else {
            (hlen as u32..=(hlen + TERM_REQ_MAX_DATA) as u32).contains(&h.plen)
        };
        if !ok {
            return bad(4, format!("PLEN {} for type {:#04x}", h.plen, h.t));
        }
        return Ok(h.plen as usize);
    }
    let mut allowed = flag::HDGSTF | flag::DDGSTF;
    if h.t == ty::C2H_DATA {
        allowed |= flag::LAST_PDU | flag::SUCCESS;
    }
    if h.t == ty::H2C_DATA {
        allowed |= flag::LAST_PDU;
    }
    let hd = h.flags & flag::HDGSTF != 0;
    let dd = h.flags & flag::DDGSTF != 0;
    let data_pdu = carries_data(h.t);
    if h.flags & !allowed != 0
        || hd != e.wire.hdgst
        || (dd && !(e.wire.ddgst && data_pdu))
        || (h.flags & flag::SUCCESS != 0 && h.flags & flag::LAST_PDU == 0)
    {
        return bad(1, format!("flags {:#04x} on type {:#04x}", h.flags, h.t));
    }
    let hdr = hlen + if hd { 4 } else { 0 };
    let plen = h.plen as usize;
    if h.pdo == 0 {
        // No data: only a command capsule without in-capsule data, or a PDU without data.
        if matches!(h.t, ty::H2C_DATA | ty::C2H_DATA) || dd {
            return bad(3, format!("PDO 0 on a data PDU of type {:#04x}", h.t));
        }
        if plen != hdr {
            return bad(
                4,
                format!("PLEN {plen} on a PDU without data, expected {hdr}"),
            );
        }
        return Ok(plen);
    }
    if !data_pdu {
        return bad(
            3,
            format!("PDO {} on type {:#04x}, which has no data", h.pdo, h.t),
        );
    }
    if h.pdo as usize != data_offset(hdr, e.wire.pda) {
        return bad(
            3,
            format!(
                "PDO {}, expected {} (header {hdr}, alignment {})",
                h.pdo,
                data_offset(hdr, e.wire.pda),
                (e.wire.pda as usize + 1) * 4
            ),
        );
    }
    let min = h.pdo as usize + 1 + if dd { 4 } else { 0 };
    if e.wire.ddgst && !dd {
        return bad(1, format!("no data digest flag on type {:#04x}", h.t));
    }
    if plen < min {
        return bad(4, format!("PLEN {plen} shorter than PDO + data"));
    }
    if h.plen > e.max_plen {
        return Err(Fatal::new(
            fes::LIMIT_EXCEEDED,
            0,
            format!("PLEN {plen} above the limit {}", e.max_plen),
        ));
    }
    Ok(plen)
}

/// Decodes a PDU a peer sent that may be deliberately malformed (a hostile target's, when a
/// scoreboard reads back what it sent): `None` unless its common header is sound (a known
/// type with its HLEN, PLEN the PDU's length, digests and PDO inside it), then [`decode`].
pub fn decode_sent(b: &[u8]) -> Option<Received> {
    if b.len() < 8 {
        return None;
    }
    let (t, flags, hlen, pdo) = (b[0], b[1], b[2] as usize, b[3] as usize);
    let plen = u32::from_le_bytes(b[4..8].try_into().unwrap()) as usize;
    let hd = if flags & flag::HDGSTF != 0 { 4 } else { 0 };
    let dd = if flags & flag::DDGSTF != 0 { 4 } else { 0 };
    let sound = hlen_of(t) == Some(hlen)
        && plen == b.len()
        && hlen + hd <= plen
        && (pdo == 0 && plen == hlen + hd
            || pdo >= hlen + hd && pdo + dd <= plen && (dd == 0 || pdo + dd < plen));
    if !sound {
        return None;
    }
    decode(b).ok()
}

/// Decodes a whole PDU of `check_header`'s length: header digest (fatal), PDU specific fields,
/// data digest (reported in [`Received::data_digest_error`]).
pub fn decode(b: &[u8]) -> Result<Received, Fatal> {
    let h = Header::read(b);
    let hlen = h.hlen as usize;
    let hd = h.flags & flag::HDGSTF != 0;
    let dd = h.flags & flag::DDGSTF != 0;
    if hd {
        let want = crc32c(&b[..hlen]);
        let got = u32::from_le_bytes(b[hlen..hlen + 4].try_into().unwrap());
        if want != got {
            return Err(Fatal::new(
                fes::HEADER_DIGEST,
                0,
                format!("header digest {got:08x}, computed {want:08x}"),
            ));
        }
    }
    let u16at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
    let u32at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    let (data, ddg_err) = if h.pdo != 0 {
        let end = b.len() - if dd { 4 } else { 0 };
        let data = b[h.pdo as usize..end].to_vec();
        let err = dd && crc32c(&data) != u32at(end);
        (data, err)
    } else {
        (Vec::new(), false)
    };
    let pdu = match h.t {
        ty::IC_REQ | ty::IC_RESP => {
            let pfv = u16at(8);
            let hdgst = b[11] & 1 != 0;
            let ddgst = b[11] & 2 != 0;
            if h.t == ty::IC_REQ {
                Pdu::IcReq {
                    pfv,
                    hpda: b[10],
                    hdgst,
                    ddgst,
                    maxr2t: u32at(12),
                }
            } else {
                Pdu::IcResp {
                    pfv,
                    cpda: b[10],
                    hdgst,
                    ddgst,
                    maxh2cdata: u32at(12),
                }
            }
        }
        ty::H2C_TERM_REQ | ty::C2H_TERM_REQ => Pdu::TermReq {
            c2h: h.t == ty::C2H_TERM_REQ,
            fes: u16at(8),
            fei: u32at(10),
            data: b[hlen..].to_vec(),
        },
        ty::CAPSULE_CMD => Pdu::CapsuleCmd {
            sqe: b[8..72].try_into().unwrap(),
            data,
        },
        ty::CAPSULE_RESP => Pdu::CapsuleResp {
            cqe: b[8..24].try_into().unwrap(),
        },
        ty::H2C_DATA | ty::C2H_DATA => {
            let datal = u32at(16);
            if datal as usize != data.len() {
                return Err(Fatal::new(
                    fes::INVALID_HEADER_FIELD,
                    16,
                    format!("DATAL {datal} but the PDU carries {} bytes", data.len()),
                ));
            }
            Pdu::Data {
                c2h: h.t == ty::C2H_DATA,
                cccid: u16at(8),
                ttag: u16at(10),
                datao: u32at(12),
                data,
                last: h.flags & flag::LAST_PDU != 0,
                success: h.flags & flag::SUCCESS != 0,
            }
        }
        ty::R2T => Pdu::R2t {
            cccid: u16at(8),
            ttag: u16at(10),
            r2to: u32at(12),
            r2tl: u32at(16),
        },
        // A type `check_header` lets through but no PDU has (a hostile peer's, seen when a
        // scoreboard decodes what a target sent): refused like any bad type.
        t => {
            return Err(Fatal::new(
                fes::INVALID_HEADER_FIELD,
                0,
                format!("PDU type {t:#04x} is not one of the specification's"),
            ))
        }
    };
    Ok(Received {
        pdu,
        data_digest_error: ddg_err,
        raw: b.to_vec(),
    })
}

/// Cuts a byte stream into PDUs, checking each header as soon as it is in.
#[derive(Clone, Debug, Default)]
pub struct Framer {
    buf: Vec<u8>,
    /// Bytes received in total.
    pub bytes: u64,
    /// A fatal error ended the stream; nothing more is decoded.
    pub failed: bool,
}

impl Framer {
    /// Adds received bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        self.bytes += bytes.len() as u64;
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes buffered but not yet a whole PDU.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// The next whole PDU, if one is in; `Err` on a fatal error (the stream stops there; the
    /// error carries the offending header bytes received so far in `Fatal::why`).
    pub fn next(&mut self, e: &Expect) -> Option<Result<Received, (Fatal, Vec<u8>)>> {
        if self.failed || self.buf.len() < 8 {
            return None;
        }
        let h = Header::read(&self.buf);
        let hdr_bytes = |buf: &[u8]| buf[..buf.len().min(h.hlen.max(8) as usize)].to_vec();
        let plen = match check_header(&h, e) {
            Ok(p) => p,
            Err(f) => {
                self.failed = true;
                return Some(Err((f, hdr_bytes(&self.buf))));
            }
        };
        if self.buf.len() < plen {
            return None;
        }
        let pdu: Vec<u8> = self.buf.drain(..plen).collect();
        match decode(&pdu) {
            Ok(r) => Some(Ok(r)),
            Err(f) => {
                self.failed = true;
                Some(Err((f, hdr_bytes(&pdu))))
            }
        }
    }
}

/// SQE helpers: byte `i` of the SQE is byte `i` of the 64-byte array.
pub mod sqe {
    /// Opcode.
    pub fn opc(s: &[u8; 64]) -> u8 {
        s[0]
    }
    /// Command identifier (CDW0 31:16).
    pub fn cid(s: &[u8; 64]) -> u16 {
        u16::from_le_bytes([s[2], s[3]])
    }
    /// Namespace identifier.
    pub fn nsid(s: &[u8; 64]) -> u32 {
        u32::from_le_bytes(s[4..8].try_into().unwrap())
    }
    /// Starting LBA (CDW10-11).
    pub fn slba(s: &[u8; 64]) -> u64 {
        u64::from_le_bytes(s[40..48].try_into().unwrap())
    }
    /// Number of logical blocks, 0's based (CDW12 15:0).
    pub fn nlb(s: &[u8; 64]) -> u16 {
        u16::from_le_bytes([s[48], s[49]])
    }
    /// The SGL descriptor in DPTR: (address, length, identifier byte).
    pub fn sgl(s: &[u8; 64]) -> (u64, u32, u8) {
        (
            u64::from_le_bytes(s[24..32].try_into().unwrap()),
            u32::from_le_bytes(s[32..36].try_into().unwrap()),
            s[39],
        )
    }
    /// PSDT (CDW0 15:14).
    pub fn psdt(s: &[u8; 64]) -> u8 {
        s[1] >> 6
    }
    /// A Read (02h) or Write (01h) SQE with PRP pointers.
    pub fn rw(opc: u8, cid: u16, nsid: u32, slba: u64, nlb: u16, prp1: u64, prp2: u64) -> [u8; 64] {
        let mut s = [0u8; 64];
        s[0] = opc;
        s[2..4].copy_from_slice(&cid.to_le_bytes());
        s[4..8].copy_from_slice(&nsid.to_le_bytes());
        s[24..32].copy_from_slice(&prp1.to_le_bytes());
        s[32..40].copy_from_slice(&prp2.to_le_bytes());
        s[40..48].copy_from_slice(&slba.to_le_bytes());
        s[48..50].copy_from_slice(&nlb.to_le_bytes());
        s
    }
}

/// SGL identifier of a data block with an offset into the capsule (in-capsule data).
pub const SGL_IN_CAPSULE: u8 = 0x01;
/// SGL identifier of a transport SGL data block, transport specific subtype Ah (Linux
/// `NVME_TRANSPORT_SGL_DATA_DESC << 4 | NVME_SGL_FMT_TRANSPORT_A`).
pub const SGL_TRANSPORT: u8 = 0x5a;

/// A CQE: DW0, SQ head, SQ id, CID, status field (phase bit 0).
pub fn cqe(dw0: u32, sqhd: u16, sqid: u16, cid: u16, status: u16) -> [u8; 16] {
    let mut c = [0u8; 16];
    c[0..4].copy_from_slice(&dw0.to_le_bytes());
    c[8..10].copy_from_slice(&sqhd.to_le_bytes());
    c[10..12].copy_from_slice(&sqid.to_le_bytes());
    c[12..14].copy_from_slice(&cid.to_le_bytes());
    c[14..16].copy_from_slice(&(status << 1).to_le_bytes());
    c
}

/// A CQE's (CID, status field, DW0).
pub fn cqe_fields(c: &[u8; 16]) -> (u16, u16, u32) {
    (
        u16::from_le_bytes([c[12], c[13]]),
        u16::from_le_bytes([c[14], c[15]]) >> 1,
        u32::from_le_bytes(c[0..4].try_into().unwrap()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expect(host: bool, wire: Wire) -> Expect {
        Expect {
            connected: true,
            wire,
            host,
            max_plen: u32::MAX,
        }
    }

    #[test]
    fn round_trip_every_type_with_and_without_digests() {
        let pdus = [
            Pdu::CapsuleCmd {
                sqe: sqe::rw(1, 7, 1, 3, 0, 0, 0),
                data: (0..100).collect(),
            },
            Pdu::CapsuleCmd {
                sqe: sqe::rw(2, 8, 1, 3, 0, 0, 0),
                data: vec![],
            },
            Pdu::Data {
                c2h: false,
                cccid: 3,
                ttag: 9,
                datao: 512,
                data: vec![5; 33],
                last: true,
                success: false,
            },
        ];
        for hdgst in [false, true] {
            for ddgst in [false, true] {
                for pda in [0, 3, 31] {
                    let wire = Wire { hdgst, ddgst, pda };
                    for p in &pdus {
                        let b = p.encode(wire);
                        let mut f = Framer::default();
                        f.push(&b);
                        let r = f.next(&expect(false, wire)).unwrap().unwrap();
                        assert_eq!(&r.pdu, p);
                        assert!(!r.data_digest_error);
                    }
                }
            }
        }
    }

    #[test]
    fn corrupted_digests_are_found() {
        let wire = Wire {
            hdgst: true,
            ddgst: true,
            pda: 0,
        };
        let p = Pdu::Data {
            c2h: true,
            cccid: 1,
            ttag: 0,
            datao: 0,
            data: vec![1, 2, 3, 4],
            last: true,
            success: true,
        };
        let mut b = p.encode(wire);
        b[24] ^= 1;
        assert_eq!(decode(&b).unwrap_err().fes, fes::HEADER_DIGEST);
        let mut b = p.encode(wire);
        let n = b.len();
        b[n - 1] ^= 0x80;
        assert!(decode(&b).unwrap().data_digest_error);
    }

    #[test]
    fn crc32c_check_values() {
        assert_eq!(crc32c(b"123456789"), 0xe306_9283);
        assert_eq!(crc32c(&[0; 32]), 0x8a91_36aa);
    }
}
