//! The segment window: trims the walker's segments of a transfer to a byte window of it, so a
//! transport can move one piece of a command's data (an NVMe/TCP C2HData PDU at DATAO) through
//! the command's own PRP or SGL pointer.
//!
//! ```text
//!  s_win (off, len; one per transfer, in command order)
//!    |
//!  s_seg --> [window] --> m_seg      (combinational: no register, no bubble)
//! ```
//!
//! The walker walks the pointer (its length and its checks are the command's; a PRP walk starts
//! at the window's page with one skip segment before it, see `walker.rs`); the window passes on
//! only bytes `off .. off + len` of it:
//! - a data or bucket segment is cut to its overlap with the window (address moved on by the
//!   bytes cut from its front); a segment without overlap is dropped; the segment that reaches
//!   the window's end is marked `last`, and every later segment of the transfer is dropped;
//! - a status segment (an error) before the window's end becomes the window's status segment:
//!   `len` = the window's bytes not yet covered; after the window's end it is dropped (the error
//!   lies outside the bytes moved);
//! - a zero-length window gives one end segment (`len` 0, `last` 1) on the transfer's first
//!   segment;
//! - the walker's `last` segment before the window's end (a window running past the walked
//!   data: the caller broke the contract) ends the window with status 04h, Data Transfer Error.
//!
//! `s_win`'s head is the current transfer's window; it is taken with the transfer's `last`
//! walker segment.

use super::DmaParams;
use hdl_builder::prelude::*;
use hdl_builder::Errors;
use std::rc::Rc;

/// The window stage, named `dma_window` + [`DmaParams::suffix`].
pub fn window(p: &DmaParams, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let (t, l) = (p.tag_width, p.len_width);
    let lw = l + 1;
    let mut m = ModuleBuilder::with_reset(&format!("dma_window{}", p.suffix()), reset);
    m.doc("DMA segment window: passes on only bytes off .. off+len of each transfer's segments");
    m.doc(
        "(cut, dropped, the last one marked), so a transfer can move a piece of a command's data.",
    );
    m.clock();
    m.reset();
    m.group("windows, one per transfer in command order");
    let win = m.stream_in("s_win", &StreamDef::new().field("off", l).field("len", l));
    let seg_def = StreamDef::new()
        .field("tag", t)
        .field("write", 1)
        .field("addr", 64)
        .field("len", l)
        .field("bucket", 1)
        .field("last", 1)
        .field("status", 11);
    m.group("segments from the walker");
    let si = m.stream_in("s_seg", &seg_def);
    m.group("segments to the mover");
    let so = m.stream_out("m_seg", &seg_def);

    let pos = m.reg("pos", lw, 0);
    m.comment(
        pos.q,
        "bytes of the transfer's walked segments before this one",
    );
    let done = m.reg("done", 1, 0);
    m.comment(done.q, "the window's last segment went out: drop the rest");

    let ws = m.net("win_start", win.field("off").zext(lw));
    let we = m.net(
        "win_end",
        win.field("off").zext(lw) + win.field("len").zext(lw),
    );
    let s_len = m.net("seg_len", si.field("len").zext(lw));
    let s_end = m.net("seg_end", pos.q + s_len);
    let lo = m.net("ovl_lo", mux(pos.q.lt(ws), ws, pos.q));
    let hi = m.net("ovl_hi", mux(s_end.gt(we), we, s_end));
    let is_err = m.net("seg_is_error", si.field("status").ne(0u64));
    let overlap = m.net("ovl_any", hi.gt(lo) & !is_err);
    let reaches = m.net("ovl_reaches_end", overlap & hi.eq(we));
    let empty = m.net("win_empty", win.field("len").eq(0u64));
    let short = m.net("walk_short", si.field("last") & !is_err & !empty & !reaches);
    m.comment(short, "the walked data ended before the window: 04h");
    let covered = m.net("win_covered", mux(pos.q.gt(ws), pos.q, ws));
    let uncovered = m.net("win_uncovered", (we - covered).resize(l));

    // What goes out for this input segment, if anything.
    let emit = m.net("emit", !done.q & (empty | is_err | short | overlap));
    let o_status = m.net(
        "out_status",
        mux(
            empty,
            lit(11, 0),
            mux(
                is_err,
                si.field("status"),
                mux(short, lit(11, 0x004), lit(11, 0)),
            ),
        ),
    );
    let o_len = m.net(
        "out_len",
        mux(
            empty,
            lit(l, 0),
            mux(is_err | short, uncovered, (hi - lo).resize(l)),
        ),
    );
    let o_addr = m.net(
        "out_addr",
        mux(
            empty | is_err | short,
            lit(64, 0),
            si.field("addr") + (lo - pos.q).zext(64),
        ),
    );
    let o_last = m.net("out_last", empty | is_err | short | reaches);

    m.assign(so.valid, si.valid & win.valid & emit);
    m.assign(so.field("tag"), si.field("tag"));
    m.assign(so.field("write"), si.field("write"));
    m.assign(so.field("addr"), o_addr);
    m.assign(so.field("len"), o_len);
    m.assign(
        so.field("bucket"),
        si.field("bucket") & !(empty | is_err | short),
    );
    m.assign(so.field("last"), o_last);
    m.assign(so.field("status"), o_status);
    m.assign(si.ready, win.valid & (!emit | so.ready));
    let fire = m.net("seg_fire", si.valid & si.ready);
    let end = m.net("xfer_end", fire & si.field("last"));
    m.assign(win.ready, end);
    m.comb(|c| {
        c.set(pos.d, pos.q);
        c.set(done.d, done.q);
        c.if_(end, |c| {
            c.set(pos.d, lit(lw, 0));
            c.set(done.d, lit(1, 0));
        })
        .else_if(fire, |c| {
            c.set(pos.d, s_end);
            c.set(done.d, done.q | (emit & o_last));
        });
    });
    m.finish()
}
