//! One NVMe/TCP connection, host side: connection start, command capsules out, response
//! capsules in, header digests, fatal errors. The interface is documented in `nvme_tcp/mod.rs`.
//!
//! What lives here (one module, built in this order; each part names its nets as before, so
//! the emitted RTL does not depend on how the generator is split):
//!
//! - `mod.rs`: the ports, the connection state and the command slots (`Ctx`)
//! - `rx.rs`: rx byte realignment, the digest CRC, the hold FIFO and the payload packer
//! - `hdr.rs`: the received header's fields and checks
//! - `verdict.rs`: C2HData verdicts, the R2T FIFO, the DMA commands, the held payload
//! - `cpl.rs`: completions onto io_cpl
//! - `tx.rs`: the tx PDU serializer with H2CData and in-capsule payload
//! - `rx_fsm.rs`: the receive state machine and the slot updates

use super::NvmeTcpParams;
use crate::blocks::crc::{crc, CRC32C};
use crate::blocks::fifo::fifo;
use hdl_builder::prelude::*;
use hdl_builder::{Error, ErrorKind, Errors};
use std::panic::Location;
use std::rc::Rc;

mod cpl;
mod hdr;
mod rx;
mod rx_fsm;
mod tx;
mod verdict;

/// The module name: `nvme_tcp_conn_w<bits>_d<outstanding>_h<hold bytes>`, `_i<in-capsule
/// bytes>` when writes may carry in-capsule data, `_nd` without digests.
pub fn module_name(p: &NvmeTcpParams) -> String {
    format!(
        "nvme_tcp_conn_w{}_d{}_h{}{}{}",
        p.data_width,
        p.outstanding,
        p.hold_bytes,
        if p.icd_bytes > 0 {
            format!("_i{}", p.icd_bytes)
        } else {
            String::new()
        },
        if p.digests { "" } else { "_nd" }
    )
}

/// Byte `i` of a little-endian value held in `v`.
fn byte(v: Sig, i: u32) -> Expr {
    v.slice(8 * i + 7, 8 * i)
}

/// Bytes `lo..lo+n` of `v`, little-endian.
fn bytes(v: Sig, lo: u32, n: u32) -> Expr {
    v.slice(8 * (lo + n) - 1, 8 * lo)
}

/// `n` ones from bit 0 in a `lanes`-bit mask (n <= lanes), from a count signal.
fn ones_mask(count: Expr, lanes: u32) -> Expr {
    (lit(lanes + 1, 1).shl_by(count) - 1u64).slice(lanes - 1, 0)
}

/// The index of the lowest set bit of `v` (`d` bits wide) in `sw` bits, as the net `name`.
fn pick_lowest(m: &mut ModuleBuilder, name: &str, v: Sig, d: u32, sw: u32) -> Sig {
    let mut e: Expr = lit(sw, 0);
    for i in (0..d).rev() {
        e = mux(v.bit(i), lit(sw, u128::from(i)), e);
    }
    m.net(name, e)
}

/// What every part reads: the parameters and widths, the sub-modules, the ports, the
/// connection state and the command slots.
pub(super) struct Ctx<'a> {
    pub(super) p: &'a NvmeTcpParams,
    pub(super) dw: u32,
    pub(super) lanes: u32,
    pub(super) cw: u32,
    pub(super) d: u32,
    pub(super) crc_mod: Rc<Module>,
    pub(super) sw: u32,
    pub(super) data_fifo: Rc<Module>,
    pub(super) vcmd_fifo: Rc<Module>,
    pub(super) vdata_fifo: Rc<Module>,
    pub(super) r2t_fifo: Rc<Module>,
    pub(super) cmd: Stream,
    pub(super) cpl: Stream,
    pub(super) tx: Stream,
    pub(super) rx: Stream,
    pub(super) dma_cmd: Stream,
    pub(super) dma_data: Stream,
    pub(super) dma_rdata: Stream,
    pub(super) dma_done: Stream,
    pub(super) space_o: Sig,
    pub(super) ev_tx_pdu: Sig,
    pub(super) ev_tx_bytes: Sig,
    pub(super) ev_rx_pdu: Sig,
    pub(super) ev_rx_bytes: Sig,
    pub(super) ev_hdgst_err: Sig,
    pub(super) ev_ddgst_err: Sig,
    pub(super) asked: Sig,
    pub(super) connected: Reg,
    pub(super) dead: Reg,
    pub(super) hd: Reg,
    pub(super) dd: Reg,
    pub(super) ic_pend: Reg,
    pub(super) term_pend: Reg,
    pub(super) fes: Reg,
    pub(super) fei: Reg,
    pub(super) term_hdr: Reg,
    pub(super) lost_any: Sig,
    pub(super) slot_valid: Reg,
    pub(super) slot_cid: Vec<Reg>,
    pub(super) slot_read: Reg,
    pub(super) slot_write: Reg,
    pub(super) slot_r2t: Reg,
    pub(super) slot_len: Vec<Reg>,
    pub(super) slot_sgl: Reg,
    pub(super) slot_dptr: Vec<Reg>,
    pub(super) slot_resp: Reg,
    pub(super) slot_status: Vec<Reg>,
    pub(super) slot_dw0: Vec<Reg>,
    pub(super) slot_dgerr: Reg,
    pub(super) slot_dmaerr: Vec<Reg>,
    pub(super) slot_pend: Vec<Reg>,
    pub(super) free_any: Sig,
    pub(super) free_idx: Sig,
}

/// A connection, named by [`module_name`].
pub fn conn(p: &NvmeTcpParams, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let name = module_name(p);
    if ![64, 128, 256].contains(&p.data_width)
        || !(1..=64).contains(&p.outstanding)
        || !p.hold_bytes.is_power_of_two()
        || p.hold_bytes < p.data_width / 4
        || p.icd_bytes > 65536
        || !p.icd_bytes.is_multiple_of(16)
    {
        return Err(Errors(vec![Error {
            kind: ErrorKind::Invalid,
            module: name.clone(),
            signal: None,
            loc: Location::caller(),
            message: format!(
                "{name}: data width {} (use 64, 128 or 256), {} outstanding commands (use 1 to 64), hold buffer {} bytes (a power of two, two beats or more) or in-capsule data {} bytes (0 to 65536, a multiple of 16)",
                p.data_width, p.outstanding, p.hold_bytes, p.icd_bytes
            ),
        }]));
    }
    let dw = p.data_width;
    let lanes = dw / 8;
    let cw = clog2(u64::from(lanes) + 1);
    let d = p.outstanding;
    let crc_mod = crc(&CRC32C, dw, reset)?;
    let sw = clog2(u64::from(d)).max(1);
    let hold_beats = p.hold_bytes / lanes;
    let data_fifo = fifo(dw + lanes + 1, hold_beats, true, reset)?;
    let vcmd_fifo = fifo(sw + 64, 4, true, reset)?;
    let vdata_fifo = fifo(1, 8, true, reset)?;
    let r2t_fifo = fifo(sw + 16 + 64, d, true, reset)?;

    let mut m = ModuleBuilder::with_reset(&name, reset);
    m.doc("NVMe/TCP, host side of one connection: ICReq/ICResp, CapsuleCmd out, CapsuleResp in,");
    m.doc("header digests (CRC-32C), fatal errors answered with one H2CTermReq. Byte streams are");
    m.doc(&format!(
        "packed from lane 0, {lanes} bytes per beat, any beat may be short. Up to {d} commands in flight."
    ));
    m.doc("See hdl-gen/src/nvme_tcp/mod.rs for the interface and the order of the checks.");
    m.clock();
    m.reset();
    m.group("configuration");
    let dgst_in = m.input("dgst_i", 2);
    m.comment(dgst_in, "digests to ask for: bit 0 header, bit 1 data");
    m.group("commands in, completions out");
    let cmd = m.stream_in("io_cmd", &StreamDef::new().field("sqe", 512));
    let cpl = m.stream_out(
        "io_cpl",
        &StreamDef::new()
            .field("cid", 16)
            .field("status", 15)
            .field("dw0", 32),
    );
    m.group("byte streams to and from the target");
    let tx = m.stream_out(
        "tx",
        &StreamDef::new().field("data", dw).field("keep", lanes),
    );
    let rx = m.stream_in(
        "rx",
        &StreamDef::new().field("data", dw).field("keep", lanes),
    );
    m.group("host memory: C2HData payload written, H2CData payload read (DMA engine; tag = slot)");
    let dma_cmd = m.stream_out(
        "dma_cmd",
        &StreamDef::new()
            .field("tag", sw)
            .field("write", 1)
            .field("sgl", 1)
            .field("dptr", 128)
            .field("len", 32)
            .field("off", 32)
            .field("dlen", 32),
    );
    m.comment(
        dma_cmd.valid,
        "move dlen bytes at byte off of the command's data (len bytes at dptr); write 1: to host memory",
    );
    let dma_data = m.stream_out(
        "dma_data",
        &StreamDef::new()
            .field("data", dw)
            .field("keep", lanes)
            .field("last", 1),
    );
    let dma_rdata = m.stream_in(
        "dma_rdata",
        &StreamDef::new()
            .field("data", dw)
            .field("keep", lanes)
            .field("last", 1),
    );
    m.comment(
        dma_rdata.valid,
        "H2CData payload read from host memory (write 0 commands), in command order",
    );
    let dma_done = m.stream_in(
        "dma_done",
        &StreamDef::new().field("tag", sw).field("status", 11),
    );
    m.group("state");
    let connected_o = m.output("connected_o", 1);
    let dead_o = m.output("dead_o", 1);
    let space_o = m.output("space_o", 1);
    let lost_in = m.input("lost_i", 1);
    m.comment(
        lost_in,
        "the TCP connection underneath failed: end the connection (latched until reset)",
    );
    m.comment(
        space_o,
        "a command would be taken now (or refused with 22h after the end)",
    );
    m.group("events, for the engine's counters");
    let ev_tx_pdu = m.output("ev_tx_pdu_o", 4);
    m.comment(
        ev_tx_pdu,
        "a PDU starts on tx: bit 0 ICReq, 1 CapsuleCmd, 2 H2CTermReq, 3 H2CData",
    );
    let ev_tx_bytes = m.output("ev_tx_bytes_o", cw);
    m.comment(ev_tx_bytes, "bytes sent on tx this cycle");
    let ev_rx_pdu = m.output("ev_rx_pdu_o", 5);
    m.comment(
        ev_rx_pdu,
        "a PDU accepted: bit 0 ICResp, 1 CapsuleResp, 2 C2HTermReq, 3 C2HData, 4 R2T",
    );
    let ev_rx_bytes = m.output("ev_rx_bytes_o", cw);
    m.comment(
        ev_rx_bytes,
        "bytes taken from rx this cycle (dropped ones too)",
    );
    let ev_hdgst_err = m.output("ev_hdgst_err_o", 1);
    m.comment(ev_hdgst_err, "a header digest error was found");
    let ev_ddgst_err = m.output("ev_ddgst_err_o", 1);
    m.comment(ev_ddgst_err, "a data digest error was found");

    let asked = m.net(
        "dgst_asked",
        if p.digests { dgst_in.ex() } else { lit(2, 0) },
    );
    if !p.digests {
        m.unused("dgst_unused", dgst_in);
    }

    // ------------------------------------------------------------ connection state
    let connected = m.reg("connected", 1, 0);
    let dead = m.reg("dead", 1, 0);
    let hd = m.reg("hd", 1, 0);
    m.comment(hd.q, "header digests negotiated");
    let dd = m.reg("dd", 1, 0);
    m.comment(dd.q, "data digests negotiated");
    let ic_pend = m.reg("ic_pend", 1, 1);
    m.comment(ic_pend.q, "the ICReq is still to be sent");
    let term_pend = m.reg("term_pend", 1, 0);
    m.comment(term_pend.q, "an H2CTermReq is to be sent");
    let fes = m.reg("term_fes", 16, 0);
    let fei = m.reg("term_fei", 32, 0);
    let term_hdr = m.reg("term_hdr", 64, 0);
    m.comment(
        term_hdr.q,
        "the offending PDU's common header, the TermReq's data",
    );
    m.assign(connected_o, connected.q);
    m.assign(dead_o, dead.q);
    let lost = m.reg("lost", 1, 0);
    m.assign(lost.d, lost.q | lost_in);
    let lost_any = m.net("lost_now", lost.q | lost_in);
    m.comment(
        lost_any,
        "the TCP connection is gone: end in a header, feed zeros to a payload's end",
    );

    // ------------------------------------------------------------ command slots
    let slot_valid = m.reg("slot_valid", d, 0);
    let slot_cid: Vec<Reg> = (0..d)
        .map(|i| m.reg(&format!("slot{i}_cid"), 16, 0))
        .collect();
    let slot_read = m.reg("slot_read", d, 0);
    m.comment(
        slot_read.q,
        "the slot's command is a Read (C2HData allowed)",
    );
    let slot_write = m.reg("slot_write", d, 0);
    m.comment(slot_write.q, "the slot's command is a Write (R2T allowed)");
    let slot_r2t = m.reg("slot_r2t", d, 0);
    m.comment(
        slot_r2t.q,
        "an R2T of the slot's command is accepted and not yet answered in full (MAXR2T 0: one)",
    );
    let slot_len: Vec<Reg> = (0..d)
        .map(|i| m.reg(&format!("slot{i}_len"), 32, 0))
        .collect();
    let slot_sgl = m.reg("slot_sgl", d, 0);
    let slot_dptr: Vec<Reg> = (0..d)
        .map(|i| m.reg(&format!("slot{i}_dptr"), 128, 0))
        .collect();
    let slot_resp = m.reg("slot_resp", d, 0);
    m.comment(
        slot_resp.q,
        "the command's answer arrived (CapsuleResp, or SUCCESS): complete once its data is written",
    );
    let slot_status: Vec<Reg> = (0..d)
        .map(|i| m.reg(&format!("slot{i}_status"), 15, 0))
        .collect();
    let slot_dw0: Vec<Reg> = (0..d)
        .map(|i| m.reg(&format!("slot{i}_dw0"), 32, 0))
        .collect();
    let slot_dgerr = m.reg("slot_dgerr", d, 0);
    m.comment(
        slot_dgerr.q,
        "a C2HData of the command failed its data digest",
    );
    let slot_dmaerr: Vec<Reg> = (0..d)
        .map(|i| m.reg(&format!("slot{i}_dmaerr"), 11, 0))
        .collect();
    let slot_pend: Vec<Reg> = (0..d)
        .map(|i| m.reg(&format!("slot{i}_pend"), 6, 0))
        .collect();
    m.comment(
        slot_pend[0].q,
        "host memory writes issued and not yet done (a verdict waits while 63 are)",
    );
    let free = m.net("slot_free", !slot_valid.q);
    let free_any = m.net("slot_free_any", free.any());
    // Lowest free slot and lowest busy slot, priority encoded.
    let free_idx = pick_lowest(&mut m, "slot_free_idx", free, d, sw);
    let cx = Ctx {
        p,
        dw,
        lanes,
        cw,
        d,
        crc_mod,
        sw,
        data_fifo,
        vcmd_fifo,
        vdata_fifo,
        r2t_fifo,
        cmd,
        cpl,
        tx,
        rx,
        dma_cmd,
        dma_data,
        dma_rdata,
        dma_done,
        space_o,
        ev_tx_pdu,
        ev_tx_bytes,
        ev_rx_pdu,
        ev_rx_bytes,
        ev_hdgst_err,
        ev_ddgst_err,
        asked,
        connected,
        dead,
        hd,
        dd,
        ic_pend,
        term_pend,
        fes,
        fei,
        term_hdr,
        lost_any,
        slot_valid,
        slot_cid,
        slot_read,
        slot_write,
        slot_r2t,
        slot_len,
        slot_sgl,
        slot_dptr,
        slot_resp,
        slot_status,
        slot_dw0,
        slot_dgerr,
        slot_dmaerr,
        slot_pend,
        free_any,
        free_idx,
    };
    let ri = rx::receive(&mut m, &cx);
    let hc = hdr::checks(&mut m, &cx, &ri);
    let vd = verdict::verdicts(&mut m, &cx, &ri, &hc);
    let cp = cpl::completions(&mut m, &cx, &vd);
    let tt = tx::transmit(&mut m, &cx, &hc, &vd, &cp);
    rx_fsm::rx_fsm(&mut m, &cx, &ri, &hc, &vd, &cp, &tt);
    m.finish()
}
