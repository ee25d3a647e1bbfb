//! Store-and-forward frame FIFO: `eth_frame_fifo_w<bits>_d<beats>`. An AXI4-Stream of
//! Ethernet frames (`tdata`, `tkeep`, `tlast`) in, the same frames out, each frame's beats
//! back to back: a frame starts leaving only once its last beat is inside. A MAC sends a frame
//! on the wire as it gets it and cannot pause in the middle, so a source whose `tvalid` may
//! fall inside a frame (the byte-serial TCP/IP engine, `tcp/mod.rs`) reaches it through one.
//!
//! - `s_axis_*` in, `m_axis_*` out; `s_axis_tready_o` is the FIFO's room (from flip-flops).
//! - `m_axis_tvalid_o` is high while a beat is held and a whole frame is inside (a count of
//!   the `tlast` beats in and out, `frames_q`), so once a frame starts it leaves one beat per
//!   cycle while `m_axis_tready_i` is high. Frames keep their order and their bytes.
//! - A frame longer than `beats` cannot be held whole: when the FIFO is full and holds no
//!   whole frame, its beats leave anyway (cut-through), so it passes, with gaps. Size `beats`
//!   for the longest frame of the source (1514 bytes: 190 beats of 64 bits).
//! - Storage: the fall-through FIFO (`fifo.rs`) of `bits + bits/8 + 1` bits per beat, in RAM.

use crate::blocks::fifo::fifo;
use hdl_builder::prelude::*;
use hdl_builder::Errors;
use std::rc::Rc;

/// The module name: `eth_frame_fifo_w<bits>_d<beats>`.
pub fn module_name(width: u32, beats: u32) -> String {
    format!("eth_frame_fifo_w{width}_d{beats}")
}

/// Beats of `width` bits the longest Ethernet frame without FCS (1514 bytes) takes, rounded
/// up to a power of two: the depth that holds any frame whole.
pub fn beats_for_max_frame(width: u32) -> u32 {
    1514u32.div_ceil(width / 8).next_power_of_two()
}

/// The frame FIFO of `beats` beats of `width` bits (a multiple of 8), named by
/// [`module_name`].
pub fn frame_fifo(width: u32, beats: u32, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let name = module_name(width, beats);
    if width == 0 || !width.is_multiple_of(8) || beats < 2 {
        return Err(Errors::invalid(
            &name,
            format!("{name}: a frame FIFO needs whole bytes per beat and at least 2 beats (got {width} bits, {beats} beats)"),
        ));
    }
    let lanes = width / 8;
    let word = width + lanes + 1;
    let ff = fifo(word, beats, true, reset)?;

    let mut m = ModuleBuilder::with_reset(&name, reset);
    m.doc(&format!(
        "Store-and-forward frame FIFO, {beats} beats of {width} bits: a frame leaves once its"
    ));
    m.doc("last beat is inside, its beats back to back; a frame longer than the FIFO passes");
    m.doc("cut-through (with gaps) once the FIFO is full. Contract: hdl-gen/src/blocks/frame_fifo.rs.");
    m.clock();
    m.reset();
    m.group("frames in");
    let s_data = m.input("s_axis_tdata_i", width);
    let s_keep = m.input("s_axis_tkeep_i", lanes);
    let s_last = m.input("s_axis_tlast_i", 1);
    let s_valid = m.input("s_axis_tvalid_i", 1);
    let s_ready = m.output("s_axis_tready_o", 1);
    m.group("frames out, each back to back");
    let m_data = m.output("m_axis_tdata_o", width);
    let m_keep = m.output("m_axis_tkeep_o", lanes);
    let m_last = m.output("m_axis_tlast_o", 1);
    let m_valid = m.output("m_axis_tvalid_o", 1);
    let m_ready = m.input("m_axis_tready_i", 1);

    let u = m.instance("u_fifo", &ff);
    m.bind(u, "s_valid_i", s_valid);
    m.bind(u, "s_data_i", cat([s_last.ex(), s_keep.ex(), s_data.ex()]));
    let room = m.bind_out(u, "s_ready_o");
    m.assign(s_ready, room);
    let held = m.bind_out(u, "m_valid_o");
    let head = m.bind_out(u, "m_data_o");
    let count = m.bind_out(u, "count_o");

    let cw = clog2(u64::from(beats) + 1);
    let frames = m.reg("frames", cw, 0);
    m.comment(frames.q, "whole frames inside (tlast beats in minus out)");
    let full = m.net("full", count.eq(u64::from(beats)));
    let go = m.net("go", held & (frames.q.ne(0) | full));
    m.assign(m_valid, go);
    m.bind(u, "m_ready_i", go & m_ready);
    m.assign(m_data, head.slice(width - 1, 0));
    m.assign(m_keep, head.slice(width + lanes - 1, width));
    let head_last = m.net("head_last", head.bit(width + lanes));
    m.assign(m_last, head_last);
    let last_in = m.net("last_in", s_valid & room & s_last);
    let last_out = m.net("last_out", go & m_ready & head_last);
    m.assign(
        frames.d,
        mux(
            last_in & !last_out,
            frames.q + 1u64,
            mux(!last_in & last_out, frames.q - 1u64, frames.q.ex()),
        ),
    );
    m.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_the_longest_frame() {
        assert_eq!(beats_for_max_frame(64), 256);
        assert_eq!(beats_for_max_frame(512), 32);
        let m = frame_fifo(64, 256, ResetStyle::AsyncLow).expect("builds");
        assert_eq!(m.name(), "eth_frame_fifo_w64_d256");
    }

    #[test]
    fn odd_widths_are_refused() {
        let e = frame_fifo(60, 16, ResetStyle::AsyncLow).expect_err("refused");
        assert!(e.to_string().contains("whole bytes"), "{e}");
    }
}
