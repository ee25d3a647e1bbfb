//! Asynchronous (dual-clock) FIFO: a ready/valid stream from a write clock domain to a read
//! clock domain, through a dual-clock RAM, with gray-coded pointers crossing through two-flop
//! synchronizers.

use super::sync_2ff::sync_2ff;
use hdl_builder::prelude::*;
use hdl_builder::Errors;
use std::rc::Rc;

/// The module name for a parameter set: `async_fifo_w<width>_d<depth>`.
pub fn module_name(width: u32, depth: u32) -> String {
    format!("async_fifo_w{width}_d{depth}")
}

/// Read-side clock edges from a push to the word on `m`, at most, when the word is next out:
/// two for the synchronizer, one for the read register.
pub const LATENCY_RD_EDGES: u32 = 3;

/// An asynchronous FIFO of `depth` words (a power of two, at least 2) of `width` bits, named by
/// [`module_name`].
///
/// Ports, clocks first, then resets: `clk_wr_i`, `clk_rd_i`, `rst_wr_n?i`, `rst_rd_n?i` (by
/// style); in the write domain the stream in (`s_valid_i`, `s_ready_o`, `s_data_i`), in the
/// read domain the stream out (`m_valid_o`, `m_ready_i`, `m_data_o`).
///
/// Contract:
/// - Order is kept; every word accepted on `s` leaves on `m` exactly once.
/// - `s_ready_o` is "not full": low exactly when the write side sees `depth` words not yet
///   taken from `m`, counting with the read pointer as the synchronizer last delivered it, so
///   it never admits a word too many and rises at the second `clk_wr_i` edge after the read
///   that makes room (the third on silicon). It comes from flip-flops only.
/// - `m_valid_o` (a register) never shows a word that is not there; a word pushed at a
///   `clk_wr_i` edge is on `m` at the latest at the third `clk_rd_i` edge after that edge, or
///   at the edge its predecessor leaves if that is later ([`LATENCY_RD_EDGES`]). A word
///   followed by others leaves back to back: one word per `clk_rd_i` cycle.
/// - Both resets empty the FIFO; assert them together (each released in its own domain, by a
///   `reset_sync`), since each side resets only its own pointer.
///
/// Storage: a `depth`-word dual-clock RAM written on `clk_wr_i` and read (registered, into
/// `m_data_o`) on `clk_rd_i`; the word on `m` stays in its RAM slot until it leaves, so the
/// FIFO holds exactly `depth` words.
pub fn async_fifo(width: u32, depth: u32, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let name = module_name(width, depth);
    if width == 0 || depth < 2 || !depth.is_power_of_two() {
        return Err(Errors::invalid(
            &name,
            format!(
                "an asynchronous FIFO of {depth} words of {width} bits: the depth must be a power of two of at least 2 (gray-coded pointers wrap at a power of two) and the width at least 1"
            ),
        ));
    }
    let aw = clog2(u64::from(depth));
    let pw = aw + 1; // pointers carry one wrap bit above the address
    let sync = sync_2ff(pw, reset)?;
    let mut m = ModuleBuilder::with_reset(&name, reset);
    m.doc(&format!(
        "Asynchronous FIFO, {depth} x {width} bits, from the clk_wr_i domain to the clk_rd_i domain."
    ));
    m.doc(
        "Write: s_ready_o = not full, from flip-flops; a word is taken when s_valid_i & s_ready_o.",
    );
    m.doc("Read: m_valid_o and m_data_o are registers; a word leaves when m_valid_o & m_ready_i.");
    m.doc("Pointers cross gray-coded through two-flop synchronizers: a push shows on m at most");
    m.doc(&format!(
        "{LATENCY_RD_EDGES} clk_rd_i edges later; a pop frees its slot for s 2 clk_wr_i edges later."
    ));
    m.doc("Order is kept; both resets empty the FIFO (assert them together).");
    let wr = m.domain("wr");
    let rd = m.domain("rd");
    m.domain_clock(wr);
    m.domain_clock(rd);
    m.domain_reset(wr);
    m.domain_reset(rd);
    m.group("write side (clk_wr_i)");
    let s_valid = m.input_in(wr, "s_valid_i", 1);
    let s_ready = m.output("s_ready_o", 1);
    let s_data = m.input_in(wr, "s_data_i", width);
    m.group("read side (clk_rd_i)");
    let m_valid = m.output("m_valid_o", 1);
    let m_ready = m.input_in(rd, "m_ready_i", 1);
    let m_data = m.output("m_data_o", width);

    // Write domain: the binary pointer addresses the RAM, its gray copy crosses.
    let wr_bin = m.reg_in(wr, "wr_bin", pw, 0);
    let wr_gray = m.reg_in(wr, "wr_gray", pw, 0);
    m.comment(
        wr_gray.q,
        "gray code of wr_bin_q: read by the clk_rd_i synchronizer",
    );
    let u_rd = m.instance("u_rd_gray_sync", &sync);
    m.bind_domain(u_rd, "", wr);
    let rd_gray = m.reg_in(rd, "rd_gray", pw, 0);
    m.bind(u_rd, "d_i", rd_gray.q);
    let rd_gray_w = m.bind_out(u_rd, "q_o");
    // Full: the write pointer is `depth` ahead of the read pointer, which in gray code is the
    // two top bits inverted and the rest equal.
    let full_at = if aw >= 2 {
        cat([!rd_gray_w.slice(aw, aw - 1), rd_gray_w.slice(aw - 2, 0)])
    } else {
        !rd_gray_w.ex()
    };
    let full = m.net("full", wr_gray.q.eq(full_at));
    let push = m.net("push", s_valid & !full);
    let wr_next = m.net("wr_next", wr_bin.q + push.zext(pw));
    let wr_gray_next = m.net("wr_gray_next", wr_next ^ (wr_next >> 1));
    m.assign(wr_bin.d, wr_next);
    m.assign(wr_gray.d, wr_gray_next);
    m.assign(s_ready, !full);
    let ram = m.memory_in(wr, "ram", width, u64::from(depth));
    m.mem_write(ram, push, wr_bin.q.slice(aw - 1, 0), s_data);

    // Read domain: the head word sits in the RAM's read register while `out_valid_q`.
    let rd_bin = m.reg_in(rd, "rd_bin", pw, 0);
    let out_valid = m.reg_in(rd, "out_valid", 1, 0);
    m.comment(
        out_valid.q,
        "m_data_o (the RAM's read register) holds the head word",
    );
    let u_wr = m.instance("u_wr_gray_sync", &sync);
    m.bind_domain(u_wr, "", rd);
    m.bind(u_wr, "d_i", wr_gray.q);
    let wr_gray_r = m.bind_out(u_wr, "q_o");
    let pop = m.net("pop", out_valid.q & m_ready);
    let rd_next = m.net("rd_next", rd_bin.q + pop.zext(pw));
    let rd_gray_next = m.net("rd_gray_next", rd_next ^ (rd_next >> 1));
    // A word is at `rd_next` when that pointer has not caught up with the write pointer.
    let avail = m.net("avail", rd_gray_next.ne(wr_gray_r));
    let load = m.net("load", (pop | !out_valid.q) & avail);
    m.assign(rd_bin.d, rd_next);
    m.assign(rd_gray.d, rd_gray_next);
    m.assign(out_valid.d, load | (out_valid.q & !pop));
    let head = m.mem_read_in(rd, ram, load, rd_next.slice(aw - 1, 0));
    m.assign(m_valid, out_valid.q);
    m.assign(m_data, head);
    m.finish()
}
