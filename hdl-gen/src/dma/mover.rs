//! The DMA data mover: carries the walker's segments between host memory (an AXI4 master port)
//! and the chip's data streams, in both directions, with completions in command order.
//!
//! ```text
//!  s_seg --+--> AR issuer --ar--> host      R --> data FIFO --> read realigner --> m_data
//!          |        \--desc FIFO (one entry per segment)-------------^     \--> m_done
//!          +--> AW issuer --aw--> host      W <-- write realigner <-- s_data      ^
//!                   \--chunk FIFO (one entry per burst or drain)--^               |
//!                   \--burst FIFO (one entry per AW, or per drained tail) -- B --+
//! ```
//!
//! Interface decisions (see [`crate::dma`] for the shared contract):
//!
//! - **Status segments carry the bytes left.** A segment with a non-zero `status` ends its
//!   transfer with that status, and its `len` is the number of the transfer's bytes not covered
//!   by earlier segments (0 when the error was found after the last data byte). The mover
//!   answers it without touching memory: read direction, `len` zero bytes on `m_data`; write
//!   direction, `len` bytes of `s_data` consumed and dropped. That is how framing stays intact
//!   ("an errored read-direction transfer still carries exactly `len` bytes") although the mover
//!   never sees the command's length.
//! - A `bucket` segment touches no memory: write direction, its bytes are dropped; read direction
//!   (not produced by the walker), it reads as zeros.
//! - AXI errors (`xRESP` SLVERR or DECERR) end the transfer with status 04h (Data Transfer
//!   Error); a walker status that follows an AXI error in the same transfer is superseded by it.
//!   Read direction: every burst of the transfer is still read, and the bytes from the first
//!   errored beat on are zeros. Write direction: every burst is still issued (so the W channel
//!   never owes beats); a slave that answers an error does not write that burst.
//! - Bursts are INCR, full width (`AxSIZE = log2(W/8)`), addresses aligned down to the bus,
//!   never across 4 KiB and at most 256 beats; all bursts of one segment end on beat boundaries,
//!   so a segment's R beats are the aligned beats that cover it. One ID (0): R data and B
//!   responses come back in issue order.
//! - Read and write transfers are not mixed in flight: a segment of the other direction waits
//!   until every started transfer has completed. Transfers of one direction are pipelined.
//! - A read is issued only when the data FIFO (`max_reads` bursts of the largest size) has room
//!   reserved for all its beats, so `m_data` backpressure never blocks the R channel.

use super::DmaParams;
use crate::blocks::fifo::fifo;
use hdl_builder::prelude::*;
use hdl_builder::{Error, ErrorKind, Errors};
use std::panic::Location;
use std::rc::Rc;

/// NVMe status 04h Data Transfer Error (SCT 0), as `{SCT, SC}`.
pub const STATUS_DATA_TRANSFER_ERROR: u64 = 0x004;

/// Beats of the largest burst the mover issues at `bytes` per beat: 256, or a 4 KiB page.
pub fn max_burst_beats(bytes: u32) -> u32 {
    256.min(4096 / bytes)
}

/// Words of the read data FIFO: `max_reads` bursts of the largest size.
pub fn read_buffer_beats(p: &DmaParams) -> u32 {
    p.max_reads * max_burst_beats(p.bytes())
}

/// The module name: `dma_mover_w64_t3_l21`.
pub fn module_name(p: &DmaParams) -> String {
    format!("dma_mover{}", p.suffix())
}

fn validate(p: &DmaParams) -> Result<(), String> {
    if ![64, 128, 256, 512].contains(&p.data_width) {
        return Err(format!(
            "data width {} bits: use 64, 128, 256 or 512",
            p.data_width
        ));
    }
    if !(1..=8).contains(&p.tag_width) {
        return Err(format!("tag width {}: use 1 to 8 bits", p.tag_width));
    }
    if !(13..=32).contains(&p.len_width) {
        return Err(format!(
            "length width {}: use 13 to 32 bits (a 4 KiB burst must fit)",
            p.len_width
        ));
    }
    if !(1..=32).contains(&p.max_reads) {
        return Err(format!("{} outstanding reads: use 1 to 32", p.max_reads));
    }
    if !(1..=8).contains(&p.id_width) {
        return Err(format!("ID width {}: use 1 to 8 bits", p.id_width));
    }
    Ok(())
}

/// The burst that starts at `addr` with `rem` (> 0) bytes left: its bytes `n` (13 bits) and
/// `AxLEN` (8 bits). It ends at the segment's end, a 4 KiB boundary or after 256 beats.
///
/// For the clock, no compare waits on another's result: which cap applies (the 4 KiB page or
/// 256 beats) is a compare of address bits with a constant, whether the segment ends first is
/// an addition per cap made side by side, and `AxLEN` is one of three values computed beside
/// them (the page's: the beats left in it, `~addr[11:lg]`; 256 beats: 255; the segment's end).
fn burst(m: &mut ModuleBuilder, pre: &str, addr: Sig, rem: Sig, bytes: u32) -> (Sig, Sig) {
    let lg = bytes.trailing_zeros();
    let l = rem.width();
    let off = addr.slice(lg - 1, 0).zext(13);
    let page_beats = 4096 / bytes;
    let beat_idx = addr.slice(11, lg);
    let room = m.net(
        &format!("{pre}_room"),
        lit(13, 4096) - addr.slice(11, 0).zext(13),
    );
    m.comment(room, "bytes to the next 4 KiB boundary");
    let rem_w = rem.zext(l + 1);
    let rem_in_page = m.net(
        &format!("{pre}_rem_in_page"),
        (rem_w.clone() + addr.slice(11, 0).zext(l + 1)).lt(4096),
    );
    m.comment(rem_in_page, "the segment ends before the 4 KiB boundary");
    // The page's AxLEN when the burst runs to its end: its beats left, less one.
    let page_len = (!beat_idx.clone()).zext(8.max(12 - lg)).slice(7, 0);
    let (cap, rem_fits, cap_len) = if page_beats <= 256 {
        (room, rem_in_page, page_len)
    } else {
        let page_first = m.net(
            &format!("{pre}_page_first"),
            beat_idx.gt(u64::from(page_beats - 256)),
        );
        m.comment(page_first, "the 4 KiB boundary comes before 256 beats");
        let beat_cap = m.net(
            &format!("{pre}_beat_cap"),
            lit(13, u128::from(bytes) * 256) - off.clone(),
        );
        m.comment(beat_cap, "bytes in 256 beats from this offset");
        let rem_in_beats = m.net(
            &format!("{pre}_rem_in_beats"),
            (rem_w + off.zext(l + 1)).lt(u64::from(bytes) * 256),
        );
        let cap = m.net(&format!("{pre}_cap"), mux(page_first, room, beat_cap));
        let fits = m.net(
            &format!("{pre}_rem_fits"),
            mux(page_first, rem_in_page, rem_in_beats),
        );
        m.comment(fits, "the segment ends first: the burst is the rest of it");
        (cap, fits, mux(page_first, page_len, lit(8, 255)))
    };
    let n = m.net(&format!("{pre}_n"), mux(rem_fits, rem.slice(12, 0), cap));
    m.comment(n, "bytes of the next burst");
    let rem_len = ((off + rem.slice(12, 0)) - 1) >> lg;
    let len = m.net(
        &format!("{pre}_len"),
        mux(rem_fits, rem_len.slice(7, 0), cap_len),
    );
    (n, len)
}

/// [`burst`]'s size and AXI length, registered (`<pre>_burst_n`, `<pre>_burst_len`), so the
/// size's comparisons and the request's additions are not one path. The returned register
/// `<pre>_burst_ok` says they are those of the present `addr` and `rem`: the caller sets its
/// `d` low in every cycle that changes them, so a burst goes at most every other cycle (a
/// burst's many beats never notice).
fn burst_reg(m: &mut ModuleBuilder, pre: &str, addr: Sig, rem: Sig, bytes: u32) -> (Sig, Sig, Reg) {
    let (n_next, len_next) = burst(m, pre, addr, rem, bytes);
    let n = m.reg_noreset(&format!("{pre}_burst_n"), 13);
    let len = m.reg_noreset(&format!("{pre}_burst_len"), 8);
    let ok = m.reg(&format!("{pre}_burst_ok"), 1, 0);
    m.comment(
        ok.q,
        &format!("{pre}_burst_n and {pre}_burst_len are those of {pre}_addr and {pre}_rem"),
    );
    m.assign(n.d, n_next);
    m.assign(len.d, len_next);
    (n.q, len.q, ok)
}

/// A bus-wide byte mask of the low `k` bytes (`k` from 0 to the bus bytes).
fn low_bytes(width: u32, k: impl Into<Expr>) -> Expr {
    !(ones(width).shl_by(cat([k.into(), zeros(3)])))
}

/// The DMA data mover `dma_mover<suffix>` for `p` (see the module documentation).
pub fn mover(p: &DmaParams, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let name = module_name(p);
    if let Err(message) = validate(p) {
        return Err(Errors(vec![Error {
            kind: ErrorKind::Invalid,
            module: name.clone(),
            signal: None,
            loc: Location::caller(),
            message: format!("{name}: {message}"),
        }]));
    }
    let w = p.data_width;
    let b = p.bytes();
    let lg = b.trailing_zeros();
    let nb = lg + 1; // a byte count 0..=B
    let (t, l) = (p.tag_width, p.len_width);
    let depth = read_buffer_beats(p);
    let cw = clog2(u64::from(depth) + 1);

    let data_fifo = fifo(w + 1, depth, true, reset)?;
    let desc_w = 1 + 1 + 1 + 11 + t + lg + l;
    let desc_fifo = fifo(desc_w, 8, true, reset)?;
    let chunk_w = lg + l + 1 + 1 + 1 + nb;
    let chunk_fifo = fifo(chunk_w, 8, true, reset)?;
    let bent_w = 1 + 1 + t + 11;
    let bent_fifo = fifo(bent_w, 16, true, reset)?;
    let done_fifo = fifo(t + 11, 4, true, reset)?;

    let mut m = ModuleBuilder::with_reset(&name, reset);
    m.doc(&format!(
        "DMA data mover: {w}-bit AXI4 master and data streams, {t}-bit tags, {l}-bit lengths."
    ));
    m.doc("Segments (s_seg) from the walker are split into INCR bursts that never cross 4 KiB");
    m.doc("and are at most 256 beats; memory bytes are realigned to and from the packed streams.");
    m.doc(&format!(
        "Up to {} read bursts in flight, each with room reserved in a {depth}-beat buffer.",
        p.max_reads
    ));
    m.doc("A status segment's len is the transfer's bytes left: zeros (read) or drained (write).");
    m.doc("AXI errors end the transfer with status 04h; framing never breaks.");
    m.doc("One completion (m_done) per transfer, in order, after its data (and B) moved.");
    m.clock();
    m.reset();
    m.group("segments from the walker");
    let seg = m.stream_in(
        "s_seg",
        &StreamDef::new()
            .field("tag", t)
            .field("write", 1)
            .field("addr", 64)
            .field("len", l)
            .field("bucket", 1)
            .field("last", 1)
            .field("status", 11),
    );
    let data_def = StreamDef::new()
        .field("data", w)
        .field("keep", b)
        .field("last", 1)
        .field("tag", t);
    m.group("read direction: host memory -> stream");
    let md = m.stream_out("m_data", &data_def);
    m.group("write direction: stream -> host memory");
    let sd = m.stream_in("s_data", &data_def);
    m.group("completions");
    let done = m.stream_out(
        "m_done",
        &StreamDef::new().field("tag", t).field("status", 11),
    );
    m.group("AXI4 master: read address");
    let arvalid = m.output("m_axi_arvalid_o", 1);
    let arready = m.input("m_axi_arready_i", 1);
    let araddr = m.output("m_axi_araddr_o", 64);
    let arlen = m.output("m_axi_arlen_o", 8);
    let arsize = m.output("m_axi_arsize_o", 3);
    let arburst = m.output("m_axi_arburst_o", 2);
    let arid = m.output("m_axi_arid_o", p.id_width);
    m.group("AXI4 master: read data");
    let rvalid = m.input("m_axi_rvalid_i", 1);
    let rready = m.output("m_axi_rready_o", 1);
    let rdata = m.input("m_axi_rdata_i", w);
    let rresp = m.input("m_axi_rresp_i", 2);
    let rlast = m.input("m_axi_rlast_i", 1);
    let rid = m.input("m_axi_rid_i", p.id_width);
    m.group("AXI4 master: write address");
    let awvalid = m.output("m_axi_awvalid_o", 1);
    let awready = m.input("m_axi_awready_i", 1);
    let awaddr = m.output("m_axi_awaddr_o", 64);
    let awlen = m.output("m_axi_awlen_o", 8);
    let awsize = m.output("m_axi_awsize_o", 3);
    let awburst = m.output("m_axi_awburst_o", 2);
    let awid = m.output("m_axi_awid_o", p.id_width);
    m.group("AXI4 master: write data");
    let wvalid = m.output("m_axi_wvalid_o", 1);
    let wready = m.input("m_axi_wready_i", 1);
    let wdata = m.output("m_axi_wdata_o", w);
    let wstrb = m.output("m_axi_wstrb_o", b);
    let wlast = m.output("m_axi_wlast_o", 1);
    m.group("AXI4 master: write response");
    let bvalid = m.input("m_axi_bvalid_i", 1);
    let bready = m.output("m_axi_bready_o", 1);
    let bresp = m.input("m_axi_bresp_i", 2);
    let bid = m.input("m_axi_bid_i", p.id_width);

    m.assign(arsize, u64::from(lg));
    m.assign(awsize, u64::from(lg));
    m.assign(arburst, 1u64);
    m.assign(awburst, 1u64);
    m.assign(arid, 0u64);
    m.assign(awid, 0u64);
    m.unused("axi", cat([rid.ex(), bid.ex(), rresp.bit(0), bresp.bit(0)]));
    // The stream's own framing is not needed: segment lengths say where transfers end.
    m.unused(
        "s_data",
        cat([
            sd.field("keep").ex(),
            sd.field("last").ex(),
            sd.field("tag").ex(),
        ]),
    );

    let s_tag = seg.field("tag");
    let s_write = seg.field("write");
    let s_addr = seg.field("addr");
    let s_len = seg.field("len");
    let s_bucket = seg.field("bucket");
    let s_last = seg.field("last");
    let s_status = seg.field("status");
    let s_mem = m.net("seg_mem", s_status.eq(0u64) & !s_bucket & s_len.ne(0u64));
    m.comment(s_mem, "the segment reads or writes memory");

    // ---------------------------------------------------------------- front end
    let dir = m.reg("dir", 1, 0);
    m.comment(dir.q, "direction of the transfers in flight (1: write)");
    let open = m.reg("open", 8, 0);
    m.comment(open.q, "transfers started and not yet completed");
    let mid = m.reg("mid", 1, 0);
    m.comment(
        mid.q,
        "inside a transfer: its last segment is still to come",
    );
    let ar_busy = m.reg("ar_busy", 1, 0);
    let aw_busy = m.reg("aw_busy", 1, 0);

    // ---------------------------------------------------------------- read: AR issuer
    let u_desc = m.instance("u_rd_desc", &desc_fifo);
    let desc_ready = m.bind_out(u_desc, "s_ready_o");
    let dir_ok = m.net("dir_ok", s_write.eq(dir.q) | open.q.eq(0u64));
    let path_ok = m.net("path_ok", mux(s_write, !aw_busy.q, !ar_busy.q & desc_ready));
    m.assign(seg.ready, dir_ok & path_ok);
    let seg_fire = m.net("seg_fire", seg.fire());
    let rd_accept = m.net("rd_accept", seg_fire & !s_write);
    let wr_accept = m.net("wr_accept", seg_fire & s_write);
    let s_zero = m.net("seg_zero", !s_status.eq(0u64) | s_bucket);
    let s_off = s_addr.slice(lg - 1, 0);
    let s_fits = m.net(
        "seg_fits",
        s_len.le((lit(nb, u128::from(b)) - s_off.zext(nb)).zext(l)),
    );
    m.comment(
        s_fits,
        "the segment's bytes all sit in its first beat (the realigner takes them in one step)",
    );
    m.bind(u_desc, "s_valid_i", rd_accept);
    m.bind(
        u_desc,
        "s_data_i",
        cat([
            s_fits.ex(),
            s_zero.ex(),
            s_last.ex(),
            s_status.ex(),
            s_tag.ex(),
            s_off,
            s_len.ex(),
        ]),
    );

    let ar_addr = m.reg_noreset("ar_addr", 64);
    let ar_rem = m.reg_noreset("ar_rem", l);
    m.comment(ar_rem.q, "bytes of the segment still to request");
    let (ar_n, ar_len, ar_ok) = burst_reg(&mut m, "ar", ar_addr.q, ar_rem.q, b);
    let arv = m.reg("arv", 1, 0);
    let ara = m.reg_noreset("ara", 64);
    let arl = m.reg_noreset("arl", 8);
    let reserved = m.reg("reserved", cw, 0);
    m.comment(
        reserved.q,
        "read buffer beats reserved: issued, not yet realigned",
    );
    let outs_w = clog2(u64::from(p.max_reads) + 1);
    let outs = m.reg("outs", outs_w, 0);
    m.comment(outs.q, "read bursts in flight");
    let ar_beats = m.net("ar_beats", ar_len.zext(cw + 1) + 1);
    let credit_ok = m.net(
        "credit_ok",
        (reserved.q.zext(cw + 1) + ar_beats).le(u64::from(depth)),
    );
    let ar_issue = m.net(
        "ar_issue",
        ar_busy.q & ar_ok.q & (!arv.q | arready) & credit_ok & outs.q.lt(u64::from(p.max_reads)),
    );
    m.assign(ar_ok.d, !(rd_accept | ar_issue));
    let ar_final = m.net("ar_final", ar_rem.q.eq(ar_n.zext(l)));
    m.assign(
        ar_busy.d,
        mux(rd_accept, s_mem, ar_busy.q & !(ar_issue & ar_final)),
    );
    m.assign(
        ar_addr.d,
        mux(
            rd_accept,
            s_addr,
            mux(ar_issue, ar_addr.q + ar_n.zext(64), ar_addr.q),
        ),
    );
    m.assign(
        ar_rem.d,
        mux(
            rd_accept,
            s_len,
            mux(ar_issue, ar_rem.q - ar_n.zext(l), ar_rem.q),
        ),
    );
    m.assign(arv.d, ar_issue | (arv.q & !arready));
    m.assign(
        ara.d,
        mux(ar_issue, cat([ar_addr.q.slice(63, lg), zeros(lg)]), ara.q),
    );
    m.assign(arl.d, mux(ar_issue, ar_len, arl.q));
    m.assign(arvalid, arv.q);
    m.assign(araddr, ara.q);
    m.assign(arlen, arl.q);

    // ---------------------------------------------------------------- read: data buffer
    let u_data = m.instance("u_rd_data", &data_fifo);
    let data_ready = m.bind_out(u_data, "s_ready_o");
    m.assign(rready, data_ready);
    let r_fire = m.net("r_fire", rvalid & data_ready);
    m.bind(u_data, "s_valid_i", r_fire);
    m.bind(u_data, "s_data_i", cat([rresp.bit(1), rdata.ex()]));
    let fv = m.bind_out(u_data, "m_valid_o");
    let fword = m.bind_out(u_data, "m_data_o");
    let data_pop = m.wire("data_pop", 1);
    m.bind(u_data, "m_ready_i", data_pop);
    m.assign(
        outs.d,
        outs.q + ar_issue.zext(outs_w) - (r_fire & rlast).zext(outs_w),
    );
    m.assign(
        reserved.d,
        reserved.q + mux(ar_issue, ar_beats.slice(cw - 1, 0), lit(cw, 0)) - data_pop.zext(cw),
    );

    // ---------------------------------------------------------------- read: realigner
    let dv = m.bind_out(u_desc, "m_valid_o");
    let dword = m.bind_out(u_desc, "m_data_o");
    let desc_pop = m.wire("desc_pop", 1);
    m.bind(u_desc, "m_ready_i", desc_pop);
    let mut at = 0;
    let mut field = |m: &mut ModuleBuilder, name: &str, width: u32| {
        let s = m.net(name, dword.slice(at + width - 1, at));
        at += width;
        s
    };
    let d_len = field(&mut m, "d_len", l);
    let d_off = field(&mut m, "d_off", lg);
    let d_tag = field(&mut m, "d_tag", t);
    let d_status = field(&mut m, "d_status", 11);
    let d_last = field(&mut m, "d_last", 1);
    let d_zero = field(&mut m, "d_zero", 1);
    let d_fits = field(&mut m, "d_fits", 1);

    let started = m.reg("rd_started", 1, 0);
    m.comment(
        started.q,
        "the head segment is part done (rd_rem_q holds what is left)",
    );
    let rrem = m.reg_noreset("rd_rem", l);
    let rrem_fits = m.reg_noreset("rd_rem_fits", 1);
    m.comment(
        rrem_fits.q,
        "rd_rem_q <= one beat: the next step ends the segment",
    );
    let acc = m.reg("rd_acc", w, 0);
    m.comment(
        acc.q,
        "packed bytes waiting for a full beat, from lane 0; zeros above",
    );
    let acc_n = m.reg("rd_acc_n", nb, 0);
    let flush = m.reg("rd_flush", 1, 0);
    m.comment(
        flush.q,
        "the transfer's bytes are all in: send the rest and complete",
    );
    let rerr = m.reg("rd_err", 1, 0);
    let rst_q = m.reg("rd_status", 11, 0);
    let ftag = m.reg_noreset("rd_tag", t);
    let mv = m.reg("m_valid", 1, 0);
    let mdat = m.reg_noreset("m_data", w);
    let mkeep = m.reg_noreset("m_keep", b);
    let mlast = m.reg_noreset("m_last", 1);
    let mtag = m.reg_noreset("m_tag", t);
    let out_free = m.net("out_free", !mv.q | md.ready);

    let rem = m.net("rd_rem_now", mux(started.q, rrem.q, d_len));
    let s_lane = m.net("rd_lane", mux(started.q, lit(lg, 0), d_off));
    m.comment(s_lane, "byte lane of the head beat's first wanted byte");
    let avail = m.net("rd_avail", lit(nb, u128::from(b)) - s_lane.zext(nb));
    // Whether the head segment ends in this step (rem <= avail) is known ahead, from the
    // segment (seg_fits) or from the step before (rd_rem_fits): no compare of the length
    // delays the step.
    let seg_done = m.net("rd_seg_done", mux(started.q, rrem_fits.q, d_fits));
    let k = m.net("rd_k", mux(seg_done, rem.slice(nb - 1, 0), avail));
    m.comment(k, "bytes this step takes from the head segment");
    // A part-done segment has bytes left (rd_started is cleared when the last are taken).
    let need = m.net("rd_need", !d_zero & (started.q | d_len.ne(0u64)));
    let total = m.net("rd_total", acc_n.q.zext(nb + 1) + k.zext(nb + 1));
    let emit_full = m.net("rd_emit_full", total.gt(u64::from(b)));
    let step = m.net(
        "rd_step",
        dv & !flush.q & (!need | fv) & (!emit_full | out_free),
    );
    let f_err = fword.bit(w);
    let f_data = fword.slice(w - 1, 0);
    let kill = m.net("rd_kill", d_zero | rerr.q | f_err.clone());
    m.comment(
        kill,
        "zeros: a zero segment, or an AXI error in this transfer",
    );
    let beat = m.net(
        "rd_beat",
        mux(
            kill,
            lit(w, 0),
            f_data.shr_by(cat([s_lane.ex(), zeros(3)])) & low_bytes(w, k),
        ),
    );
    let comb2 = m.net(
        "rd_combined",
        acc.q.zext(2 * w) | beat.zext(2 * w).shl_by(cat([acc_n.q.ex(), zeros(3)])),
    );
    let rem_next = m.net("rd_rem_next", rem - k.zext(l));
    m.assign(data_pop, step & need);
    m.assign(desc_pop, step & seg_done);
    let done_ready = m.wire("done_ready", 1);
    let has_bytes = m.net("rd_has_bytes", acc_n.q.ne(0u64));
    let flush_go = m.net(
        "rd_flush_go",
        flush.q & done_ready & (!has_bytes | out_free),
    );
    m.comb(|c| {
        c.set(started.d, started.q);
        c.set(rrem.d, rrem.q);
        c.set(rrem_fits.d, rrem_fits.q);
        c.set(acc.d, acc.q);
        c.set(acc_n.d, acc_n.q);
        c.set(flush.d, flush.q);
        c.set(rerr.d, rerr.q);
        c.set(rst_q.d, rst_q.q);
        c.set(ftag.d, ftag.q);
        c.if_(step, |c| {
            c.if_(emit_full, |c| {
                c.set(acc.d, comb2.slice(2 * w - 1, w));
                c.set(acc_n.d, (total - u64::from(b)).slice(nb - 1, 0));
            })
            .else_(|c| {
                c.set(acc.d, comb2.slice(w - 1, 0));
                c.set(acc_n.d, total.slice(nb - 1, 0));
            });
            c.if_(need & f_err.clone(), |c| c.set(rerr.d, 1u64));
            c.if_(d_status.ne(0u64), |c| c.set(rst_q.d, d_status));
            c.if_(seg_done, |c| {
                c.set(started.d, 0u64);
                c.if_(d_last, |c| {
                    c.set(flush.d, 1u64);
                    c.set(ftag.d, d_tag);
                });
            })
            .else_(|c| {
                c.set(started.d, 1u64);
                c.set(rrem.d, rem_next);
                c.set(rrem_fits.d, rem_next.le(u64::from(b)));
            });
        })
        .else_if(flush_go, |c| {
            c.set(acc.d, 0u64);
            c.set(acc_n.d, 0u64);
            c.set(flush.d, 0u64);
            c.set(rerr.d, 0u64);
            c.set(rst_q.d, 0u64);
        });
    });
    let out_full = m.net("rd_out_full", step & emit_full);
    let out_tail = m.net("rd_out_tail", flush_go & has_bytes);
    m.comb(|c| {
        c.set(mv.d, mv.q & !md.ready);
        c.set(mdat.d, mdat.q);
        c.set(mkeep.d, mkeep.q);
        c.set(mlast.d, mlast.q);
        c.set(mtag.d, mtag.q);
        c.if_(out_full, |c| {
            c.set(mv.d, 1u64);
            c.set(mdat.d, comb2.slice(w - 1, 0));
            c.set(mkeep.d, ones(b));
            c.set(mlast.d, 0u64);
            c.set(mtag.d, d_tag);
        })
        .else_if(out_tail, |c| {
            c.set(mv.d, 1u64);
            c.set(mdat.d, acc.q);
            c.set(mkeep.d, !(ones(b).shl_by(acc_n.q)));
            c.set(mlast.d, 1u64);
            c.set(mtag.d, ftag.q);
        });
    });
    m.assign(md.valid, mv.q);
    m.assign(md.field("data"), mdat.q);
    m.assign(md.field("keep"), mkeep.q);
    m.assign(md.field("last"), mlast.q);
    m.assign(md.field("tag"), mtag.q);
    let rd_status = m.net(
        "rd_done_status",
        mux(
            rerr.q,
            lit(11, u128::from(STATUS_DATA_TRANSFER_ERROR)),
            rst_q.q,
        ),
    );

    // ---------------------------------------------------------------- write: AW issuer
    let aw_addr = m.reg_noreset("aw_addr", 64);
    let aw_rem = m.reg_noreset("aw_rem", l);
    m.comment(
        aw_rem.q,
        "bytes of the segment not yet handed to the write realigner",
    );
    let aw_mem = m.reg_noreset("aw_mem", 1);
    let aw_lastseg = m.reg_noreset("aw_last", 1);
    let aw_status = m.reg_noreset("aw_status", 11);
    let aw_tag = m.reg_noreset("aw_tag", t);
    let (aw_n, aw_len, aw_ok) = burst_reg(&mut m, "aw", aw_addr.q, aw_rem.q, b);
    let chunk_n = m.net("chunk_n", mux(aw_mem.q, aw_n.zext(l), aw_rem.q));
    m.comment(
        chunk_n,
        "a burst, or the whole of a segment that is drained",
    );
    let chunk_final = m.net("chunk_final", chunk_n.eq(aw_rem.q));
    let chunk_eot = m.net("chunk_eot", aw_lastseg.q & chunk_final);
    let need_entry = m.net("need_entry", aw_mem.q | chunk_eot);
    let u_chunk = m.instance("u_wr_chunk", &chunk_fifo);
    let chunk_ready = m.bind_out(u_chunk, "s_ready_o");
    let u_bent = m.instance("u_wr_burst", &bent_fifo);
    let bent_ready = m.bind_out(u_bent, "s_ready_o");
    let awv = m.reg("awv", 1, 0);
    let awa = m.reg_noreset("awa", 64);
    let awl = m.reg_noreset("awl", 8);
    let aw_issue = m.net(
        "aw_issue",
        aw_busy.q
            & aw_ok.q
            & chunk_ready
            & (!need_entry | bent_ready)
            & (!aw_mem.q | !awv.q | awready),
    );
    m.assign(aw_ok.d, !(wr_accept | aw_issue));
    m.comment(
        aw_issue,
        "hand over a chunk (with its AW when it writes memory)",
    );
    let aw_burst = m.net("aw_burst", aw_issue & aw_mem.q);
    let chunk_lane = m.net(
        "chunk_lane",
        mux(aw_mem.q, aw_addr.q.slice(lg - 1, 0), lit(lg, 0)),
    );
    let chunk_avail = m.net("chunk_avail", lit(nb, u128::from(b)) - chunk_lane.zext(nb));
    let chunk_fits = m.net("chunk_fits", chunk_n.le(chunk_avail.zext(l)));
    m.comment(
        chunk_fits,
        "the chunk's bytes all sit in its first beat (the realigner takes them in one step)",
    );
    let chunk_k = m.net(
        "chunk_k",
        mux(chunk_fits, chunk_n.slice(nb - 1, 0), chunk_avail),
    );
    m.comment(
        chunk_k,
        "bytes the realigner's first step on the chunk takes",
    );
    m.bind(u_chunk, "s_valid_i", aw_issue);
    m.bind(
        u_chunk,
        "s_data_i",
        cat([
            chunk_k.ex(),
            chunk_fits.ex(),
            chunk_eot.ex(),
            aw_mem.q.ex(),
            aw_addr.q.slice(lg - 1, 0),
            chunk_n.ex(),
        ]),
    );
    m.bind(u_bent, "s_valid_i", aw_issue & need_entry);
    m.bind(
        u_bent,
        "s_data_i",
        cat([
            chunk_eot.ex(),
            (!aw_mem.q).ex(),
            aw_tag.q.ex(),
            aw_status.q.ex(),
        ]),
    );
    m.assign(
        aw_busy.d,
        mux(wr_accept, 1u64, aw_busy.q & !(aw_issue & chunk_final)),
    );
    m.assign(
        aw_addr.d,
        mux(
            wr_accept,
            s_addr,
            mux(aw_issue, aw_addr.q + chunk_n.zext(64), aw_addr.q),
        ),
    );
    m.assign(
        aw_rem.d,
        mux(
            wr_accept,
            s_len,
            mux(aw_issue, aw_rem.q - chunk_n, aw_rem.q),
        ),
    );
    m.assign(aw_mem.d, mux(wr_accept, s_mem, aw_mem.q));
    m.assign(aw_lastseg.d, mux(wr_accept, s_last, aw_lastseg.q));
    m.assign(aw_status.d, mux(wr_accept, s_status, aw_status.q));
    m.assign(aw_tag.d, mux(wr_accept, s_tag, aw_tag.q));
    m.assign(awv.d, aw_burst | (awv.q & !awready));
    m.assign(
        awa.d,
        mux(aw_burst, cat([aw_addr.q.slice(63, lg), zeros(lg)]), awa.q),
    );
    m.assign(awl.d, mux(aw_burst, aw_len, awl.q));
    m.assign(awvalid, awv.q);
    m.assign(awaddr, awa.q);
    m.assign(awlen, awl.q);

    // ---------------------------------------------------------------- write: realigner
    let cv = m.bind_out(u_chunk, "m_valid_o");
    let cword = m.bind_out(u_chunk, "m_data_o");
    let chunk_pop = m.wire("chunk_pop", 1);
    m.bind(u_chunk, "m_ready_i", chunk_pop);
    let c_n = m.net("c_n", cword.slice(l - 1, 0));
    let c_off = m.net("c_off", cword.slice(l + lg - 1, l));
    let c_mem = m.net("c_mem", cword.bit(l + lg));
    let c_eot = m.net("c_eot", cword.bit(l + lg + 1));
    let c_fits = m.net("c_fits", cword.bit(l + lg + 2));
    let c_k = m.net("c_k", cword.slice(l + lg + 2 + nb, l + lg + 3));
    let wstarted = m.reg("wr_started", 1, 0);
    let wrem = m.reg_noreset("wr_rem", l);
    let wrem_fits = m.reg_noreset("wr_rem_fits", 1);
    m.comment(
        wrem_fits.q,
        "wr_rem_q <= one beat: the next step ends the chunk",
    );
    let wrem_k = m.reg_noreset("wr_rem_k", nb);
    m.comment(
        wrem_k.q,
        "bytes the next step takes: min(wr_rem_q, one beat)",
    );
    let wacc = m.reg("wr_acc", w, 0);
    m.comment(
        wacc.q,
        "stream bytes taken and not yet written, from lane 0; zeros above",
    );
    let wacc_n = m.reg("wr_acc_n", nb, 0);
    let w_ahead = m.reg("w_ahead", 8, 0);
    m.comment(
        w_ahead.q,
        "transfers whose stream bytes are all consumed, not yet completed",
    );
    let wv = m.reg("wv", 1, 0);
    let wd = m.reg_noreset("wd", w);
    let ws = m.reg_noreset("ws", b);
    let wl = m.reg_noreset("wl", 1);
    let wrem_now = m.net("wr_rem_now", mux(wstarted.q, wrem.q, c_n));
    let w_lane = m.net("wr_lane", mux(wstarted.q | !c_mem, lit(lg, 0), c_off));
    // The chunk ends in this beat when what is left of it fits the bytes available. That is
    // known ahead, from the chunk (chunk_fits) or from the step before (wr_rem_fits): no
    // compare of the length delays the step.
    let w_fits = m.net("wr_fits", mux(wstarted.q, wrem_fits.q, c_fits));
    m.comment(w_fits, "the chunk's bytes left fit this beat: it ends here");
    let wk = m.net("wr_k", mux(wstarted.q, wrem_k.q, c_k));
    m.comment(
        wk,
        "bytes this step takes from the chunk: min(what is left, wr_avail)",
    );
    let need_in = m.net("wr_need_in", wk.gt(wacc_n.q));
    m.comment(
        need_in,
        "the buffered bytes are not enough: take a stream beat",
    );
    let wstep = m.net(
        "wr_step",
        cv & (!need_in | sd.valid) & (!c_mem | !wv.q | wready),
    );
    m.assign(sd.ready, wstep & need_in);
    let wcomb = m.net(
        "wr_combined",
        wacc.q.zext(2 * w)
            | mux(
                need_in,
                sd.field("data")
                    .zext(2 * w)
                    .shl_by(cat([wacc_n.q.ex(), zeros(3)])),
                lit(2 * w, 0),
            ),
    );
    let wtake = m.net("wr_take", wcomb.slice(w - 1, 0) & low_bytes(w, wk));
    let wleft = m.net(
        "wr_left",
        wcomb.shr_by(cat([wk.ex(), zeros(3)])).slice(w - 1, 0),
    );
    let wleft_n = m.net(
        "wr_left_n",
        (wacc_n.q.zext(nb + 1) + mux(need_in, lit(nb + 1, u128::from(b)), lit(nb + 1, 0))
            - wk.zext(nb + 1))
        .slice(nb - 1, 0),
    );
    let wrem_next = m.net("wr_rem_next", wrem_now - wk.zext(l));
    let wchunk_done = m.net("wr_chunk_done", w_fits);
    m.assign(chunk_pop, wstep & wchunk_done);
    let w_eot = m.net("wr_eot", wstep & wchunk_done & c_eot);
    m.comb(|c| {
        c.set(wstarted.d, wstarted.q);
        c.set(wrem.d, wrem.q);
        c.set(wrem_fits.d, wrem_fits.q);
        c.set(wrem_k.d, wrem_k.q);
        c.set(wacc.d, wacc.q);
        c.set(wacc_n.d, wacc_n.q);
        c.if_(wstep, |c| {
            c.set(wacc.d, wleft);
            c.set(wacc_n.d, wleft_n);
            c.if_(wchunk_done, |c| {
                c.set(wstarted.d, 0u64);
                // The transfer's stream bytes end here: drop what the last beat had beyond.
                c.if_(c_eot, |c| {
                    c.set(wacc.d, 0u64);
                    c.set(wacc_n.d, 0u64);
                });
            })
            .else_(|c| {
                c.set(wstarted.d, 1u64);
                c.set(wrem.d, wrem_next);
                let fits_next = wrem_next.le(u64::from(b));
                c.set(wrem_fits.d, fits_next.clone());
                c.set(
                    wrem_k.d,
                    mux(
                        fits_next,
                        wrem_next.slice(nb - 1, 0),
                        lit(nb, u128::from(b)),
                    ),
                );
            });
        });
    });
    let w_load = m.net("wr_w_load", wstep & c_mem);
    m.assign(wv.d, w_load | (wv.q & !wready));
    m.assign(
        wd.d,
        mux(w_load, wtake.shl_by(cat([w_lane.ex(), zeros(3)])), wd.q),
    );
    m.assign(
        ws.d,
        mux(w_load, (!(ones(b).shl_by(wk))).shl_by(w_lane), ws.q),
    );
    m.assign(wl.d, mux(w_load, wchunk_done, wl.q));
    m.assign(wvalid, wv.q);
    m.assign(wdata, wd.q);
    m.assign(wstrb, ws.q);
    m.assign(wlast, wl.q);

    // ---------------------------------------------------------------- write: responses
    let bv = m.bind_out(u_bent, "m_valid_o");
    let bword = m.bind_out(u_bent, "m_data_o");
    let bent_pop = m.wire("bent_pop", 1);
    m.bind(u_bent, "m_ready_i", bent_pop);
    let b_status = m.net("b_status", bword.slice(10, 0));
    let b_tag = m.net("b_tag", bword.slice(10 + t, 11));
    let b_nob = m.net("b_nob", bword.bit(11 + t));
    m.comment(b_nob, "a drained tail: completes without a write response");
    let b_eot = m.net("b_eot", bword.bit(12 + t));
    let berr = m.reg("wr_err", 1, 0);
    let can_done = m.net("wr_can_done", done_ready & w_ahead.q.ne(0u64) & !flush.q);
    let b_take = m.net("b_take", bv & !b_nob & (!b_eot | can_done));
    m.assign(bready, b_take);
    let b_fire = m.net("b_fire", bvalid & b_take);
    let nob_fire = m.net("nob_fire", bv & b_nob & can_done);
    m.assign(bent_pop, b_fire | nob_fire);
    let wr_done = m.net("wr_done", (b_fire & b_eot) | nob_fire);
    let b_bad = m.net("b_bad", b_fire & bresp.bit(1));
    m.assign(berr.d, mux(wr_done, lit(1, 0), berr.q | b_bad));
    let wr_status = m.net(
        "wr_done_status",
        mux(
            berr.q | b_bad,
            lit(11, u128::from(STATUS_DATA_TRANSFER_ERROR)),
            b_status,
        ),
    );
    m.assign(w_ahead.d, w_ahead.q + w_eot.zext(8) - wr_done.zext(8));

    // ---------------------------------------------------------------- completions
    let u_done = m.instance("u_done", &done_fifo);
    m.bind_out_to(u_done, "s_ready_o", done_ready);
    let done_push = m.net("done_push", flush_go | wr_done);
    m.bind(u_done, "s_valid_i", done_push);
    m.bind(
        u_done,
        "s_data_i",
        mux(
            flush_go,
            cat([ftag.q.ex(), rd_status.ex()]),
            cat([b_tag.ex(), wr_status.ex()]),
        ),
    );
    m.bind_out_to(u_done, "m_valid_o", done.valid);
    m.bind(u_done, "m_ready_i", done.ready);
    let done_word = m.bind_out(u_done, "m_data_o");
    m.assign(done.field("status"), done_word.slice(10, 0));
    m.assign(done.field("tag"), done_word.slice(10 + t, 11));

    let first = m.net("seg_first", seg_fire & !mid.q);
    m.assign(mid.d, mux(seg_fire, !s_last, mid.q));
    m.assign(dir.d, mux(first, s_write, dir.q));
    m.assign(open.d, open.q + first.zext(8) - done_push.zext(8));

    // ------------------------------------------------------- functional coverage
    m.cover(
        "read_unaligned",
        rd_accept & s_mem & (s_addr.slice(lg - 1, 0).ne(0u64)),
    );
    m.cover(
        "write_unaligned",
        wr_accept & s_mem & (s_addr.slice(lg - 1, 0).ne(0u64)),
    );
    m.cover("seg_without_memory", seg_fire & !s_mem);
    m.cover(
        "read_burst_ends_at_4k",
        ar_issue & !ar_final & (ar_addr.q.slice(11, 0).zext(13) + ar_n).eq(4096u64),
    );
    m.cover(
        "read_bursts_in_flight_max",
        outs.q.eq(u64::from(p.max_reads)),
    );
    m.cover("read_buffer_full", ar_busy.q & !credit_ok);
    m.cover("read_error_response", rvalid & rready & rresp.bit(1));
    m.cover("write_error_response", bvalid & bready & bresp.bit(1));
    m.cover("write_partial_strobes", wvalid & wready & wstrb.ne(ones(b)));
    m.cover("write_segment_split", aw_burst & !chunk_final);
    m.cover("data_out_backpressure", mv.q & !md.ready);
    m.cover("direction_waits_for_drain", seg.valid & !dir_ok);
    m.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(data_width: u32) -> DmaParams {
        DmaParams {
            data_width,
            tag_width: 3,
            len_width: 21,
            max_reads: 4,
            id_width: 4,
        }
    }

    #[test]
    fn builds_for_every_width() {
        for w in [64, 128, 256, 512] {
            let m = mover(&params(w), ResetStyle::AsyncLow).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(m.name(), format!("dma_mover_w{w}_t3_l21"));
        }
    }

    #[test]
    fn bad_parameters_are_refused_with_the_module_name() {
        let mut p = params(64);
        p.data_width = 32;
        let e = mover(&p, ResetStyle::SyncHigh).unwrap_err();
        assert!(e.to_string().contains("dma_mover_w32_t3_l21"), "{e}");
    }
}
