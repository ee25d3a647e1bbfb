//! The descriptor walker: turns a command's data pointer (PRP1/PRP2 with PRP lists, or an SGL)
//! into the host memory segments the mover moves, fetching PRP list pages and SGL segments
//! through an AXI4 read-only master.
//!
//! ```text
//!  s_cmd --> [FSM] --> seg register --> m_seg
//!              ^  pop
//!        [qword FIFO] <-- unpacker <-- R        fetch engine --> AR
//!                            ^--- [burst info FIFO, 2] <---------+
//! ```
//!
//! Descriptor memory is fetched as 64-bit words (PRP entries; SGL descriptors are two words).
//! The fetch engine walks one run of words at a time (a PRP list page, or an SGL segment) in
//! INCR bursts of the full bus width: a burst takes `min(words left in the run, words to the
//! next 4 KiB boundary, 256)` words, starting at the run's next word (the address on AR is that
//! word's address rounded down to the bus width). At most two bursts are in flight (the burst
//! information FIFO), all with ID 0, so they return in order. The unpacker hands the words of
//! each beat to a FIFO one per cycle, marking every word of a burst answered SLVERR or DECERR.
//! A burst is issued only when that FIFO has room reserved for all its words (two bursts of 256
//! words), so R beats are always taken at once: a segment output blocked by the mover never
//! holds up the R channel, which the engine shares with the mover's reads (the mover may need
//! read data that a slave queues behind a descriptor beat to free its own segment input).
//!
//! # Behaviour (the golden model is `testbench::models::dma_walker`)
//!
//! Status codes are SCT 0 (`status` = `{3'h0, SC}`): 04h Data Transfer Error, 0Dh Invalid SGL
//! Segment Descriptor, 0Fh Data SGL Length Invalid, 11h SGL Descriptor Type Invalid, 13h PRP
//! Offset Invalid. An error ends the transfer with a status segment (`last` 1, `len` = the bytes
//! no earlier segment covered, `addr` 0); segments already emitted stay. A zero-length transfer
//! (and an SGL whose last data block was not its last descriptor) ends with an *end segment*:
//! `len` 0, `last` 1, `status` 0. Otherwise `last` is on the last data segment.
//!
//! PRP (page size `P = 4096 << mps`, `mps_i` sampled when the command is accepted): a zero
//! length uses no PRP. PRP1 must be dword aligned (else 13h); its segment runs to the end of its
//! page or of the transfer. If the rest fits in one page, PRP2 is that page (offset 0, else 13h).
//! Otherwise PRP2 points to a PRP list (qword aligned, else 13h), which may start mid-page; each
//! data entry has offset 0 (else 13h) and gives `min(rest, P)` bytes. When the last slot of a
//! list page is reached and more than one entry is still needed, that slot points to the next
//! list page (qword aligned, else 13h; it too may start mid-page). Only the entries needed are
//! fetched.
//!
//! Walking from a window (`s_cmd_from`, the first byte the caller needs; 0 walks everything):
//! when PRP2 is a well-formed list pointer (the rest does not fit in one page, PRP2 qword
//! aligned) and `from` is at or past PRP1's bytes, PRP1's segment and the first `k` list entries'
//! pages are replaced by one *skip segment* (`addr` 0, `bucket` 1, `last` 0, `len` = PRP1's
//! bytes + `k * P`), and the list is read from entry `k`: `k = (from - PRP1's bytes) / P`, at
//! most the last data entry of the first list page (a chain pointer is never skipped, so a
//! chained list is walked from there on). The entries left out are neither read nor checked;
//! PRP1's alignment still is. The window stage (`window.rs`) drops the skip segment (it lies
//! wholly before the window), so the mover never sees it. SGLs are walked whole (`from` is
//! ignored): a descriptor's length is only known once it is read.
//!
//! SGL (`dptr` is one descriptor; descriptors are 16 bytes; type = byte 15 bits 7:4):
//! - Data Block (0), and Bit Bucket (1) in the write direction only (a bucket segment, `addr` =
//!   the descriptor's address): longer than the bytes left -> 0Fh; the *final* descriptor (the
//!   command's own, or the last of its segment) must cover exactly the bytes left (else 0Fh; a
//!   final zero-length one with nothing left gives an end segment); other zero-length ones emit
//!   nothing.
//! - Bit Bucket in the read direction, Keyed Data Block (4, RDMA only) and types 5-15 -> 11h.
//! - Segment (2) / Last Segment (3): only as the command's descriptor or the last descriptor of a
//!   Segment (else 0Dh); the length must be a non-zero multiple of 16 and the address qword
//!   aligned (else 0Dh). Its descriptors are fetched and walked; within a Last Segment a
//!   segment descriptor is 0Dh.
//! - An AXI error on a fetched word -> 04h, when the walker reaches that word.
//!
//! Throughput: one segment per cycle from a PRP list while its words arrive; PRP1's segment goes
//! out before any list fetch; one SGL descriptor per three cycles.
//!
//! Timing (ECP5 at 125 MHz, `fpga/reports/blocks.md`): no path holds more than about two carry
//! chains. A PRP command's set-up takes two cycles before PRP1's segment (StPrpA: PRP1's bytes
//! and the bytes after them from one subtraction, the first list page's slots; StPrpB: the
//! entries needed, whether to skip), four when it skips to a window (StPrpC, StPrpD: k). Page
//! sizes and offsets are 28 bits (pages up to 2^27 bytes). A burst's size is registered, so a
//! burst is issued at the earliest in the cycle after its run's address was set.

use super::DmaParams;
use crate::blocks::fifo::fifo;
use hdl_builder::prelude::*;
use hdl_builder::{Comb, Error, ErrorKind, Errors};
use std::panic::Location;
use std::rc::Rc;

/// NVMe status codes the walker reports (SCT 0).
pub mod sc {
    /// Data Transfer Error: a descriptor fetch answered with an AXI error.
    pub const DATA_TRANSFER_ERROR: u16 = 0x04;
    /// Invalid SGL Segment Descriptor.
    pub const INVALID_SGL_SEGMENT: u16 = 0x0d;
    /// Data SGL Length Invalid.
    pub const SGL_LENGTH_INVALID: u16 = 0x0f;
    /// SGL Descriptor Type Invalid.
    pub const SGL_TYPE_INVALID: u16 = 0x11;
    /// PRP Offset Invalid.
    pub const PRP_OFFSET_INVALID: u16 = 0x13;
}

/// The walker's states.
const STATES: &[&str] = &[
    "StIdle",
    "StPrpA",
    "StPrpB",
    "StPrpC",
    "StPrpD",
    "StPrp1",
    "StPrp2",
    "StList",
    "StListPtr",
    "StSglQ0",
    "StSglQ1",
    "StSglDesc",
    "StStatus",
    "StDrain",
];

/// Bits of a page size and of an offset in a page: pages are at most 4096 << 15 = 2^27 bytes.
const PW: u32 = 28;

/// Depth of the FIFO of fetched words: two bursts of the largest size (256 words), each
/// reserved when it is issued.
fn word_fifo_depth(_p: &DmaParams) -> u32 {
    512
}

/// The walker, named `dma_walker` + [`DmaParams::suffix`] (see the module documentation).
pub fn walker(p: &DmaParams, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let name = format!("dma_walker{}", p.suffix());
    let bad = |message: String| {
        Err(Errors(vec![Error {
            kind: ErrorKind::Invalid,
            module: name.clone(),
            signal: None,
            loc: Location::caller(),
            message,
        }]))
    };
    if ![64, 128, 256, 512].contains(&p.data_width) {
        return bad(format!(
            "{name}: data width {} is not one of 64, 128, 256, 512",
            p.data_width
        ));
    }
    if !(1..=8).contains(&p.tag_width) || !(13..=32).contains(&p.len_width) {
        return bad(format!(
            "{name}: tag width {} (1 to 8) or length width {} (13 to 32) out of range",
            p.tag_width, p.len_width
        ));
    }
    if !(1..=8).contains(&p.id_width) {
        return bad(format!(
            "{name}: id width {} out of range (1 to 8)",
            p.id_width
        ));
    }
    let (w, t, l) = (p.data_width, p.tag_width, p.len_width);
    let lanes = w / 64;
    let lane_bits = lanes.trailing_zeros();
    let bus_bits = (w / 8).trailing_zeros();
    // Width of a length compared with an SGL descriptor's 32-bit length.
    let k = l.max(32);

    let info_w = 9 + lane_bits;
    let info_fifo = fifo(info_w, 2, true, reset)?;
    let word_fifo = fifo(65, word_fifo_depth(p), true, reset)?;

    let mut m = ModuleBuilder::with_reset(&name, reset);
    m.doc("DMA descriptor walker: PRP1/PRP2, PRP lists (chained) and SGLs into host memory");
    m.doc("segments on m_seg; PRP list pages and SGL segments are read on the AXI4 master m_axi");
    m.doc("(INCR, full width, ID 0, never across 4 KiB, at most two bursts in flight).");
    m.doc("An error ends the transfer with a status segment (last, len = bytes not covered).");
    m.doc("A zero-length transfer gives one end segment (len 0, last 1, status 0).");
    m.clock();
    m.reset();
    m.group("configuration");
    let mps = m.input("mps_i", 4);
    m.group("commands");
    let cmd = m.stream_in(
        "s_cmd",
        &StreamDef::new()
            .field("tag", t)
            .field("write", 1)
            .field("sgl", 1)
            .field("dptr", 128)
            .field("len", l)
            .field("from", l),
    );
    m.group("segments");
    let seg = m.stream_out(
        "m_seg",
        &StreamDef::new()
            .field("tag", t)
            .field("write", 1)
            .field("addr", 64)
            .field("len", l)
            .field("bucket", 1)
            .field("last", 1)
            .field("status", 11),
    );
    m.group("descriptor reads (AXI4 read-only master)");
    let arvalid = m.output("m_axi_arvalid_o", 1);
    let arready = m.input("m_axi_arready_i", 1);
    let araddr = m.output("m_axi_araddr_o", 64);
    let arlen = m.output("m_axi_arlen_o", 8);
    let arsize = m.output("m_axi_arsize_o", 3);
    let arburst = m.output("m_axi_arburst_o", 2);
    let arid = m.output("m_axi_arid_o", p.id_width);
    let rvalid = m.input("m_axi_rvalid_i", 1);
    let rready = m.output("m_axi_rready_o", 1);
    let rdata = m.input("m_axi_rdata_i", w);
    let rresp = m.input("m_axi_rresp_i", 2);
    let rlast = m.input("m_axi_rlast_i", 1);
    let rid = m.input("m_axi_rid_i", p.id_width);
    m.unused("r", cat([rlast.ex(), rid.ex(), rresp.bit(0)]));

    // ---------------------------------------------------------------- state
    let st = m.enum_type("state", STATES);
    let state = m.reg_enum("state", &st, st.item("StIdle"));
    let tag = m.reg("tag", t, 0);
    let write = m.reg("write", 1, 0);
    let mps_r = m.reg("mps", 4, 0);
    let rem = m.reg("rem", l, 0);
    m.comment(rem.q, "bytes of the transfer no segment has covered yet");
    let daddr = m.reg("desc_addr", 64, 0);
    m.comment(daddr.q, "PRP1, or the SGL descriptor's address");
    let prp2 = m.reg("prp2", 64, 0);
    let dlen = m.reg("desc_len", 32, 0);
    let dtype = m.reg("desc_type", 4, 0);
    let dfinal = m.reg("desc_final", 1, 0);
    m.comment(
        dfinal.q,
        "the descriptor is the SGL's last (the command's, or its segment's last)",
    );
    let ptr_ok = m.reg("ptr_ok", 1, 0);
    m.comment(
        ptr_ok.q,
        "a Segment or Last Segment descriptor is allowed here",
    );
    let entries = m.reg("entries", 32, 0);
    m.comment(entries.q, "PRP list data entries still needed");
    let list_left = m.reg("list_left", 32, 0);
    m.comment(list_left.q, "slots left in the current PRP list page");
    let seg_count = m.reg("seg_count", 32, 0);
    m.comment(seg_count.q, "descriptors left in the current SGL segment");
    let seg_is_last = m.reg("seg_is_last", 1, 0);
    let status = m.reg("status", 11, 0);
    let from = m.reg("from", l, 0);
    m.comment(
        from.q,
        "the first byte the caller needs (a window's offset)",
    );
    let skip_k = m.reg("skip_entries", 32, 0);
    m.comment(skip_k.q, "PRP list entries left out before the window");
    // PRP set-up, one step per cycle (StPrpA..StPrpD) so no path holds more than two carry
    // chains or a chain and a shifter. A page is at most 4096 << 15 = 2^27 bytes, so its size
    // and the offsets in it have PW bits.
    let page_r = m.reg("page", PW, 4096);
    m.comment(
        page_r.q,
        "memory page size, 4096 << CC.MPS (set when the command is accepted)",
    );
    let pmask_r = m.reg("page_mask", PW, 4095);
    m.comment(
        pmask_r.q,
        "page size - 1, registered so that an offset in the page costs no carry chain",
    );
    let first_r = m.reg("prp1_len", l, 0);
    m.comment(
        first_r.q,
        "PRP1's bytes: to the end of its page or of the transfer",
    );
    let after1_r = m.reg("prp1_rest", l, 0);
    m.comment(after1_r.q, "the transfer's bytes after PRP1's");
    let slots2_r = m.reg("list_slots_prp2", 32, 0);
    m.comment(
        slots2_r.q,
        "slots of the PRP list page PRP2 points into, from PRP2 on",
    );
    let need1_r = m.reg("entries_after_prp1", 32, 0);
    m.comment(need1_r.q, "PRP entries the bytes after PRP1's need");
    let can_skip_r = m.reg("can_skip", 1, 0);
    m.comment(
        can_skip_r.q,
        "PRP2 is a well-formed list pointer and the window starts past PRP1's bytes",
    );
    let from_rest_r = m.reg("from_rest", l, 0);
    m.comment(from_rest_r.q, "the window's offset less PRP1's bytes");
    let kwant_r = m.reg("skip_entries_want", 32, 0);
    let kmax_r = m.reg("skip_entries_max", 32, 0);
    m.comment(
        kmax_r.q,
        "a chain pointer is never skipped: the walk reaches it",
    );
    let skipped = m.reg("skipped", 1, 0);
    m.comment(
        skipped.q,
        "PRP1's segment was replaced by a skip (bit bucket) segment: PRP2 is a list",
    );
    // fetch engine
    let faddr = m.reg("fetch_addr", 64, 0);
    let fleft = m.reg("fetch_left", 32, 0);
    m.comment(fleft.q, "words of the current run not yet requested");
    let ar_v = m.reg("ar_valid", 1, 0);
    let ar_a = m.reg("ar_addr", 64, 0);
    let ar_l = m.reg("ar_len", 8, 0);
    // unpacker
    let mid = m.reg("mid", 1, 0);
    m.comment(
        mid.q,
        "inside the head burst: lane_q and left_q are current",
    );
    let lane = (lane_bits > 0).then(|| m.reg("lane", lane_bits, 0));
    let left = m.reg("left", 9, 0);
    // segment output register
    let sv = m.reg("seg_valid", 1, 0);
    let stag = m.reg("seg_tag", t, 0);
    let swrite = m.reg("seg_write", 1, 0);
    let saddr = m.reg("seg_addr", 64, 0);
    let slen = m.reg("seg_len", l, 0);
    let sbucket = m.reg("seg_bucket", 1, 0);
    let slast = m.reg("seg_last", 1, 0);
    let sstatus = m.reg("seg_status", 11, 0);

    m.assign(seg.valid, sv.q);
    m.assign(seg.field("tag"), stag.q);
    m.assign(seg.field("write"), swrite.q);
    m.assign(seg.field("addr"), saddr.q);
    m.assign(seg.field("len"), slen.q);
    m.assign(seg.field("bucket"), sbucket.q);
    m.assign(seg.field("last"), slast.q);
    m.assign(seg.field("status"), sstatus.q);
    m.assign(arvalid, ar_v.q);
    m.assign(araddr, ar_a.q);
    m.assign(arlen, ar_l.q);
    m.assign(arsize, lit(3, u128::from(bus_bits)));
    m.assign(arburst, lit(2, 1));
    m.assign(arid, zeros(p.id_width));
    m.assign(cmd.ready, state.q.eq(st.item("StIdle")));

    // ---------------------------------------------------------------- fetch engine
    let u_info = m.instance("u_info_fifo", &info_fifo);
    let info_push = m.wire("info_push", 1);
    let info_data = m.wire("info_data", info_w);
    let info_pop = m.wire("info_pop", 1);
    m.bind(u_info, "s_valid_i", info_push);
    m.bind(u_info, "s_data_i", info_data);
    m.bind(u_info, "m_ready_i", info_pop);
    let info_room = m.bind_out(u_info, "s_ready_o");
    let info_valid = m.bind_out(u_info, "m_valid_o");
    let info_head = m.bind_out(u_info, "m_data_o");

    // Words to the next 4 KiB boundary (1 to 512), and the burst's words (1 to 256).
    let to_4k = m.net(
        "to_4k",
        ((lit(13, 4096) - faddr.q.slice(11, 0).zext(13)) >> 3).slice(9, 0),
    );
    let n_a = m.net(
        "burst_words_a",
        mux(fleft.q.le(to_4k.zext(32)), fleft.q, to_4k.zext(32)),
    );
    let n_next = m.net(
        "burst_words_next",
        mux(n_a.le(256), n_a, lit(32, 256)).slice(8, 0),
    );
    // The burst's size is registered: a burst is issued from the cycle after the run's
    // address and words last changed (`burst_words_ok`), so the size's comparisons and the
    // issue's additions are not one path.
    let n_r = m.reg("burst_words", 9, 0);
    let n_ok = m.reg("burst_words_ok", 1, 0);
    m.comment(
        n_ok.q,
        "burst_words is that of the run's present address and words",
    );
    let n = n_r.q;
    let first_lane = if lane_bits > 0 {
        Some(m.net("first_lane", faddr.q.slice(bus_bits - 1, 3)))
    } else {
        None
    };
    let beats = match first_lane {
        Some(fl) => m.net(
            "burst_beats",
            (fl.zext(10) + n.zext(10) + u64::from(lanes - 1)) >> lane_bits,
        ),
        None => m.net("burst_beats", n.zext(10)),
    };
    // Words of the FIFO reserved: requested and not yet popped (every requested word is pushed).
    let depth = word_fifo_depth(p);
    let cw = clog2(u64::from(depth) + 1);
    let credit = m.reg("word_credit", cw, 0);
    m.comment(
        credit.q,
        "word FIFO slots reserved by bursts issued, not yet popped",
    );
    let room_ok = m.net(
        "word_room_ok",
        (credit.q.zext(cw + 1) + n.zext(cw + 1)).le(u64::from(depth)),
    );
    let issue = m.net(
        "issue",
        !ar_v.q & n_ok.q & fleft.q.ne(0) & info_room & room_ok,
    );
    m.assign(info_push, issue);
    match first_lane {
        Some(fl) => m.assign(info_data, cat([fl.ex(), n.ex()])),
        None => m.assign(info_data, n),
    }

    // ---------------------------------------------------------------- unpacker
    let u_words = m.instance("u_word_fifo", &word_fifo);
    let w_push = m.wire("word_push", 1);
    let w_in = m.wire("word_in", 65);
    let w_pop = m.wire("word_pop", 1);
    m.bind(u_words, "s_valid_i", w_push);
    m.bind(u_words, "s_data_i", w_in);
    m.bind(u_words, "m_ready_i", w_pop);
    let w_room = m.bind_out(u_words, "s_ready_o");
    let w_valid = m.bind_out(u_words, "m_valid_o");
    let w_head = m.bind_out(u_words, "m_data_o");
    let word = m.net("word", w_head.slice(63, 0));
    let word_err = m.net("word_err", w_head.bit(64));

    let info_n = m.net("info_words", info_head.slice(8, 0));
    let cur_left = m.net("cur_left", mux(mid.q, left.q, info_n));
    let (cur_lane, rword) = match lane {
        Some(lr) => {
            let info_lane = m.net("info_lane", info_head.slice(info_w - 1, 9));
            let cl = m.net("cur_lane", mux(mid.q, lr.q, info_lane));
            let shift = cat([cl.ex(), zeros(6)]);
            (Some(cl), m.net("r_word", rdata.shr_by(shift).slice(63, 0)))
        }
        None => (None, m.net("r_word", rdata)),
    };
    let take = m.net("r_take", info_valid & rvalid & w_room);
    let burst_end = m.net("burst_end", cur_left.eq(1));
    let beat_end = match cur_lane {
        Some(cl) => m.net("beat_end", burst_end | cl.eq(u64::from(lanes - 1))),
        None => m.net("beat_end", lit(1, 1)),
    };
    m.assign(w_push, take);
    m.assign(
        credit.d,
        credit.q + mux(issue, n.zext(cw), lit(cw, 0)) - w_pop.zext(cw),
    );
    m.assign(w_in, cat([rresp.bit(1), rword.ex()]));
    m.assign(rready, take & beat_end);
    m.assign(info_pop, take & burst_end);
    m.comb(|c| {
        c.set(mid.d, mid.q);
        c.set(left.d, left.q);
        if let (Some(lr), Some(cl)) = (lane, cur_lane) {
            c.set(lr.d, lr.q);
            c.if_(take, |c| c.set(lr.d, cl + 1u64));
        }
        c.if_(take, |c| {
            c.set(mid.d, !burst_end);
            c.set(left.d, cur_left - 1u64);
        });
    });

    // ---------------------------------------------------------------- page arithmetic
    // Byte counts and page sizes are compared in `cw` bits (both fit).
    let cw = PW.max(l) + 1;
    let rem_c = m.net("rem_c", rem.q.zext(cw));
    let page_c = m.net("page_c", page_r.q.zext(cw));
    let rest_fits = m.net("rest_fits", rem_c.le(page_c));
    let page_len = m.net("page_len", mux(rest_fits, rem.q, page_c.slice(l - 1, 0)));
    let off = |a: &Sig| a.slice(PW - 1, 0) & pmask_r.q;
    // StPrpA: PRP1's bytes and the bytes after them from one subtraction.
    let prp1_end = m.net("prp1_to_end", page_r.q - off(&daddr.q));
    let rest_after = m.net("rem_less_prp1_end", rem_c.ex() - prp1_end.zext(cw));
    let fits1 = m.net("prp1_holds_rest", rest_after.bit(cw - 1) | rest_after.eq(0));
    m.comment(fits1, "the transfer ends in PRP1's page");
    let first = m.net(
        "prp1_len_next",
        mux(fits1, rem.q, prp1_end.zext(cw).slice(l - 1, 0)),
    );
    let after1 = m.net(
        "prp1_rest_next",
        mux(fits1, lit(l, 0), rest_after.slice(l - 1, 0)),
    );
    // A PRP list page starting at `prp2` (from PRP2) or at `word` (a chain pointer).
    let slots_of = |a: &Sig| ((page_r.q - off(a)) >> 3).zext(32);
    let slots_prp2 = m.net("list_slots_prp2_next", slots_of(&prp2.q));
    let slots_ptr = m.net("list_slots_ptr", slots_of(&word));
    let is_ptr = m.net("is_list_ptr", list_left.q.eq(1) & entries.q.gt(1));
    // StPrpB: entries needed after PRP1 (whole pages, rounded up), and whether the walk may
    // skip to the window: entry k of the first list page is read first, k = (from - PRP1's
    // bytes) / P, at most the page's last data entry.
    let in_pages = |x: Expr| (x >> 12).shr_by(mps_r.q);
    let need1 = m.net(
        "entries_after_prp1_next",
        in_pages(after1_r.q.zext(cw) + pmask_r.q.zext(cw)).resize(32),
    );
    let can_skip = m.net(
        "can_skip_next",
        from.q.ge(first_r.q) & after1_r.q.zext(cw).gt(page_c) & prp2.q.slice(2, 0).eq(0),
    );
    // StPrpC, StPrpD: k.
    let k_want = m.net("skip_entries_want_next", in_pages(from_rest_r.q.zext(32)));
    let k_max = m.net(
        "skip_entries_max_next",
        mux(
            need1_r.q.le(slots2_r.q),
            need1_r.q - 1u64,
            mux(slots2_r.q.ge(2), slots2_r.q - 2u64, lit(32, 0)),
        ),
    );
    let k_skip = m.net("skip_k", mux(kwant_r.q.le(kmax_r.q), kwant_r.q, kmax_r.q));
    // StPrp1: the skip segment covers PRP1's bytes and k pages.
    let skip_pages = m.net(
        "skip_bytes",
        cat([skip_k.q.resize(l - 12), zeros(12)]).shl_by(mps_r.q),
    );
    let skip_len = m.net("skip_len", first_r.q + skip_pages);
    let dlen_k = m.net("desc_len_k", dlen.q.zext(k));
    let rem_k = m.net("rem_k", rem.q.zext(k));

    let out_free = m.net("out_free", !sv.q | seg.ready);
    let s_tag = cmd.field("tag");
    let s_write = cmd.field("write");
    let s_sgl = cmd.field("sgl");
    let s_dptr = cmd.field("dptr");
    let s_len = cmd.field("len");

    // ---------------------------------------------------------------- main FSM
    m.comb(|c| {
        let sx = |n: &str| st.item(n);
        for r in [
            tag,
            write,
            mps_r,
            rem,
            daddr,
            prp2,
            dlen,
            dtype,
            dfinal,
            ptr_ok,
            entries,
            list_left,
            seg_count,
            seg_is_last,
            status,
            from,
            skip_k,
            skipped,
            page_r,
            pmask_r,
            first_r,
            after1_r,
            slots2_r,
            need1_r,
            can_skip_r,
            from_rest_r,
            kwant_r,
            kmax_r,
        ] {
            c.set(r.d, r.q);
        }
        c.set(state.d, state.q);
        c.set(w_pop, lit(1, 0));
        // fetch engine defaults: issue a burst when idle and words remain
        c.set(ar_v.d, ar_v.q & !arready);
        c.set(ar_a.d, ar_a.q);
        c.set(ar_l.d, ar_l.q);
        c.set(faddr.d, faddr.q);
        c.set(fleft.d, fleft.q);
        c.set(n_r.d, n_next);
        c.set(n_ok.d, lit(1, 1));
        c.if_(issue, |c| {
            c.set(ar_v.d, lit(1, 1));
            c.set(ar_a.d, cat([faddr.q.slice(63, bus_bits), zeros(bus_bits)]));
            c.set(ar_l.d, (beats - 1u64).slice(7, 0));
            c.set(faddr.d, faddr.q + cat([zeros(52), n.ex(), zeros(3)]));
            c.set(fleft.d, fleft.q - n.zext(32));
            c.set(n_ok.d, lit(1, 0));
        });
        // segment register
        c.set(sv.d, sv.q & !seg.ready);
        for r in [stag, swrite, saddr, slen, sbucket, slast, sstatus] {
            c.set(r.d, r.q);
        }
        let emit = |c: &mut Comb, addr: Expr, len: Expr, bucket: Expr, last: Expr, code: Expr| {
            c.set(sv.d, lit(1, 1));
            c.set(stag.d, tag.q);
            c.set(swrite.d, write.q);
            c.set(saddr.d, addr);
            c.set(slen.d, len);
            c.set(sbucket.d, bucket);
            c.set(slast.d, last);
            c.set(sstatus.d, code);
        };
        let fail = |c: &mut Comb, code: u16| {
            c.set(status.d, lit(11, u128::from(code)));
            c.set(state.d, sx("StStatus"));
            c.set(fleft.d, lit(32, 0));
            c.set(n_ok.d, lit(1, 0));
        };
        c.case(state.q, |k| {
            k.arm(sx("StIdle"), |c| {
                c.if_(cmd.valid, |c| {
                    c.set(tag.d, s_tag);
                    c.set(write.d, s_write);
                    c.set(mps_r.d, mps);
                    let page = lit(PW, 4096).shl_by(mps);
                    c.set(page_r.d, page.clone());
                    c.set(pmask_r.d, page - 1u64);
                    c.set(skip_k.d, lit(32, 0));
                    c.set(rem.d, s_len);
                    c.set(daddr.d, s_dptr.slice(63, 0));
                    c.set(prp2.d, s_dptr.slice(127, 64));
                    c.set(dlen.d, s_dptr.slice(95, 64));
                    c.set(dtype.d, s_dptr.slice(127, 124));
                    c.set(dfinal.d, lit(1, 1));
                    c.set(ptr_ok.d, lit(1, 1));
                    c.set(seg_is_last.d, lit(1, 0));
                    c.set(status.d, lit(11, 0));
                    c.set(from.d, cmd.field("from"));
                    c.set(skipped.d, lit(1, 0));
                    c.if_(s_sgl, |c| c.set(state.d, sx("StSglDesc")))
                        .else_if(s_len.eq(0), |c| c.set(state.d, sx("StStatus")))
                        .else_(|c| c.set(state.d, sx("StPrpA")));
                });
            });
            k.arm(sx("StPrpA"), |c| {
                c.set(first_r.d, first);
                c.set(after1_r.d, after1);
                c.set(slots2_r.d, slots_prp2);
                c.set(state.d, sx("StPrpB"));
            });
            k.arm(sx("StPrpB"), |c| {
                c.set(need1_r.d, need1);
                c.set(can_skip_r.d, can_skip);
                c.set(from_rest_r.d, from.q - first_r.q);
                c.if_(can_skip, |c| c.set(state.d, sx("StPrpC")))
                    .else_(|c| c.set(state.d, sx("StPrp1")));
            });
            k.arm(sx("StPrpC"), |c| {
                c.set(kwant_r.d, k_want);
                c.set(kmax_r.d, k_max);
                c.set(state.d, sx("StPrpD"));
            });
            k.arm(sx("StPrpD"), |c| {
                c.set(skip_k.d, k_skip);
                c.set(state.d, sx("StPrp1"));
            });
            k.arm(sx("StPrp1"), |c| {
                c.if_(out_free, |c| {
                    c.if_(daddr.q.slice(1, 0).ne(0), |c| {
                        fail(c, sc::PRP_OFFSET_INVALID)
                    })
                    .else_if(can_skip_r.q, |c| {
                        // The bytes before the window as one bit bucket segment.
                        emit(
                            c,
                            lit(64, 0),
                            skip_len.ex(),
                            lit(1, 1),
                            lit(1, 0),
                            lit(11, 0),
                        );
                        c.set(rem.d, after1_r.q - skip_pages);
                        c.set(entries.d, need1_r.q - skip_k.q);
                        c.set(skipped.d, lit(1, 1));
                        c.set(state.d, sx("StPrp2"));
                    })
                    .else_(|c| {
                        let done = after1_r.q.eq(0);
                        emit(
                            c,
                            daddr.q.ex(),
                            first_r.q.ex(),
                            lit(1, 0),
                            done.clone(),
                            lit(11, 0),
                        );
                        c.set(rem.d, after1_r.q);
                        c.set(entries.d, need1_r.q);
                        c.if_(done, |c| c.set(state.d, sx("StDrain")))
                            .else_(|c| c.set(state.d, sx("StPrp2")));
                    });
                });
            });
            k.arm(sx("StPrp2"), |c| {
                c.if_(out_free, |c| {
                    c.if_(rest_fits & !skipped.q, |c| {
                        c.if_(off(&prp2.q).ne(0), |c| fail(c, sc::PRP_OFFSET_INVALID))
                            .else_(|c| {
                                emit(c, prp2.q.ex(), rem.q.ex(), lit(1, 0), lit(1, 1), lit(11, 0));
                                c.set(rem.d, lit(l, 0));
                                c.set(state.d, sx("StDrain"));
                            });
                    })
                    .else_if(prp2.q.slice(2, 0).ne(0), |c| {
                        fail(c, sc::PRP_OFFSET_INVALID)
                    })
                    .else_(|c| {
                        let slots = slots2_r.q - skip_k.q;
                        c.set(list_left.d, slots.clone());
                        c.set(faddr.d, prp2.q + cat([zeros(29), skip_k.q.ex(), zeros(3)]));
                        c.set(fleft.d, mux(entries.q.le(slots.clone()), entries.q, slots));
                        c.set(n_ok.d, lit(1, 0));
                        c.set(state.d, sx("StList"));
                    });
                });
            });
            k.arm(sx("StList"), |c| {
                c.if_(w_valid & out_free, |c| {
                    c.set(w_pop, lit(1, 1));
                    c.if_(word_err, |c| fail(c, sc::DATA_TRANSFER_ERROR))
                        .else_if(is_ptr, |c| {
                            c.if_(word.slice(2, 0).ne(0), |c| fail(c, sc::PRP_OFFSET_INVALID))
                                .else_(|c| {
                                    // The next list page: its slots now, the words to
                                    // fetch from it in StListPtr (for the clock: the
                                    // slots' subtraction and the compare with `entries`
                                    // were one path from the word FIFO). Every word of
                                    // this page is requested by now (`fleft` is 0).
                                    c.set(list_left.d, slots_ptr);
                                    c.set(faddr.d, word);
                                    c.set(n_ok.d, lit(1, 0));
                                    c.set(state.d, sx("StListPtr"));
                                });
                        })
                        .else_if(off(&word).ne(0), |c| fail(c, sc::PRP_OFFSET_INVALID))
                        .else_(|c| {
                            emit(
                                c,
                                word.ex(),
                                page_len.ex(),
                                lit(1, 0),
                                rest_fits.ex(),
                                lit(11, 0),
                            );
                            c.set(rem.d, rem.q - page_len);
                            c.set(entries.d, entries.q - 1u64);
                            c.set(list_left.d, list_left.q - 1u64);
                            c.if_(rest_fits, |c| c.set(state.d, sx("StDrain")));
                        });
                });
            });
            k.arm(sx("StListPtr"), |c| {
                c.set(
                    fleft.d,
                    mux(entries.q.le(list_left.q), entries.q, list_left.q),
                );
                c.set(n_ok.d, lit(1, 0));
                c.set(state.d, sx("StList"));
            });
            k.arm(sx("StSglQ0"), |c| {
                c.if_(w_valid, |c| {
                    c.set(w_pop, lit(1, 1));
                    c.set(daddr.d, word);
                    c.if_(word_err, |c| fail(c, sc::DATA_TRANSFER_ERROR))
                        .else_(|c| c.set(state.d, sx("StSglQ1")));
                });
            });
            k.arm(sx("StSglQ1"), |c| {
                c.if_(w_valid, |c| {
                    c.set(w_pop, lit(1, 1));
                    c.set(dlen.d, word.slice(31, 0));
                    c.set(dtype.d, word.slice(63, 60));
                    let last = seg_count.q.eq(1);
                    c.set(dfinal.d, last.clone());
                    c.set(ptr_ok.d, last & !seg_is_last.q);
                    c.set(seg_count.d, seg_count.q - 1u64);
                    c.if_(word_err, |c| fail(c, sc::DATA_TRANSFER_ERROR))
                        .else_(|c| c.set(state.d, sx("StSglDesc")));
                });
            });
            k.arm(sx("StSglDesc"), |c| {
                let is_data = dtype.q.eq(0) | (dtype.q.eq(1) & write.q);
                let is_seg = dtype.q.eq(2) | dtype.q.eq(3);
                c.if_(out_free, |c| {
                    c.if_(is_data, |c| {
                        c.if_(dlen_k.gt(rem_k), |c| fail(c, sc::SGL_LENGTH_INVALID))
                            .else_if(dfinal.q, |c| {
                                c.if_(dlen_k.ne(rem_k), |c| fail(c, sc::SGL_LENGTH_INVALID))
                                    .else_if(dlen.q.eq(0), |c| c.set(state.d, sx("StStatus")))
                                    .else_(|c| {
                                        emit(
                                            c,
                                            daddr.q.ex(),
                                            dlen.q.resize(l),
                                            dtype.q.bit(0),
                                            lit(1, 1),
                                            lit(11, 0),
                                        );
                                        c.set(rem.d, lit(l, 0));
                                        c.set(state.d, sx("StDrain"));
                                    });
                            })
                            .else_if(dlen.q.eq(0), |c| c.set(state.d, sx("StSglQ0")))
                            .else_(|c| {
                                emit(
                                    c,
                                    daddr.q.ex(),
                                    dlen.q.resize(l),
                                    dtype.q.bit(0),
                                    lit(1, 0),
                                    lit(11, 0),
                                );
                                c.set(rem.d, rem.q - dlen.q.resize(l));
                                c.set(state.d, sx("StSglQ0"));
                            });
                    })
                    .else_if(is_seg, |c| {
                        let bad = !ptr_ok.q
                            | dlen.q.eq(0)
                            | dlen.q.slice(3, 0).ne(0)
                            | daddr.q.slice(2, 0).ne(0);
                        c.if_(bad, |c| fail(c, sc::INVALID_SGL_SEGMENT)).else_(|c| {
                            c.set(faddr.d, daddr.q);
                            c.set(fleft.d, dlen.q >> 3);
                            c.set(n_ok.d, lit(1, 0));
                            c.set(seg_count.d, dlen.q >> 4);
                            c.set(seg_is_last.d, dtype.q.bit(0));
                            c.set(state.d, sx("StSglQ0"));
                        });
                    })
                    .else_(|c| fail(c, sc::SGL_TYPE_INVALID));
                });
            });
            k.arm(sx("StStatus"), |c| {
                c.if_(out_free, |c| {
                    emit(
                        c,
                        lit(64, 0),
                        rem.q.ex(),
                        lit(1, 0),
                        lit(1, 1),
                        status.q.ex(),
                    );
                    c.set(rem.d, lit(l, 0));
                    c.set(state.d, sx("StDrain"));
                });
            });
            k.arm(sx("StDrain"), |c| {
                // Discard what is still arriving from fetches the transfer no longer needs.
                c.set(w_pop, w_valid);
                c.if_(!ar_v.q & !info_valid & !w_valid, |c| {
                    c.set(state.d, sx("StIdle"))
                });
            });
            k.default(|c| c.set(state.d, sx("StIdle")));
        });
    });

    // ------------------------------------------------------- functional coverage
    // Each status the walker can end a transfer with, every state, and the events between.
    let seg_fire = m.net("seg_fire", seg.valid & seg.ready);
    for (name, code) in [
        ("status_04h_data_transfer", sc::DATA_TRANSFER_ERROR),
        ("status_0dh_sgl_segment", sc::INVALID_SGL_SEGMENT),
        ("status_0fh_sgl_length", sc::SGL_LENGTH_INVALID),
        ("status_11h_sgl_type", sc::SGL_TYPE_INVALID),
        ("status_13h_prp_offset", sc::PRP_OFFSET_INVALID),
    ] {
        m.cover(name, seg_fire & sstatus.q.eq(u64::from(code)));
    }
    m.cover("seg_bit_bucket", seg_fire & sbucket.q);
    m.cover(
        "seg_zero_length_end",
        seg_fire & slast.q & slen.q.eq(0) & sstatus.q.eq(0),
    );
    m.cover("seg_backpressure", seg.valid & !seg.ready);
    for name in STATES {
        m.cover(&format!("state_{name}"), state.q.eq(st.item(name)));
    }
    m.cover("prp_list_chained", state.q.eq(st.item("StList")) & is_ptr);
    m.cover("descriptor_read_error", rvalid & rready & rresp.bit(1));
    m.cover("descriptor_fifo_full", !room_ok & fleft.q.ne(0));
    m.finish()
}
