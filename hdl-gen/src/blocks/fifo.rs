//! Synchronous FIFO of any width and depth, with a block-RAM-friendly registered read, in two
//! flavours: first-word fall-through (a ready/valid stream out) and a classic read port
//! (`rd_en_i` in, data one cycle later).
//!
//! Both flavours keep their words in a builder `memory` (never read combinationally, so FPGA
//! tools infer block RAM); the fall-through flavour adds two flip-flop words in front of it.
//! Pointers wrap explicitly at the RAM's size, so any depth works, not only powers of two. A RAM
//! of a single word is a flip-flop with the same registered-read timing instead of a memory:
//! Yosys turns a one-word array into registers anyway, with a warning.

use hdl_builder::prelude::*;
use hdl_builder::{Error, ErrorKind, Errors};
use std::panic::Location;
use std::rc::Rc;

/// The stream a FIFO carries: one `data` field.
pub fn stream_def(width: u32) -> StreamDef {
    StreamDef::new().field("data", width)
}

/// The module name for a parameter set: `fifo_w8_d16`, or `fifo_fwft_w8_d16` when `fwft`.
pub fn module_name(width: u32, depth: u32, fwft: bool) -> String {
    let kind = if fwft { "fifo_fwft" } else { "fifo" };
    format!("{kind}_w{width}_d{depth}")
}

/// A synchronous FIFO of `depth` words of `width` bits (both at least 1), named by
/// [`module_name`]. Ports: `clk_i`, the reset, then the write port, the read port, `count_o`.
///
/// Common to both flavours:
///
/// - Write port: a ready/valid stream in (`s_valid_i`, `s_ready_o`, `s_data_i`). `s_ready_o` is
///   `count_o != depth`, a function of flip-flops only: it does not look at the read side, so a
///   full FIFO refuses a word even in a cycle where a word leaves.
/// - `count_o` (`clog2(depth + 1)` bits) is the number of words held: accepted and not yet
///   handed out. It changes at the clock edge after a transfer (+1 per write, -1 per read).
/// - Order is kept; nothing is dropped or duplicated. Reset empties the FIFO.
///
/// `fwft = true`, first-word fall-through: the read port is a ready/valid stream out
/// (`m_valid_o`, `m_ready_i`, `m_data_o`). `m_valid_o` is `count_o != 0` and `m_data_o` is the
/// oldest word, both straight from flip-flops. A word accepted in cycle `t` into an empty FIFO is
/// on `m` in cycle `t + 1`: latency one cycle, and `m_valid_o` never drops while a word is held
/// (no bubbles). `m_ready_i` while `m_valid_o` is low does nothing. Throughput is one word per
/// cycle in and out at once for `depth >= 2`; with `depth == 1` the FIFO alternates between full
/// and empty (one word every two cycles). Storage: two flip-flop words in front (the head, which
/// drives `m_data_o`, and the word behind it; only the head for `depth == 1`) and a RAM of
/// `depth - 2` words behind them (none for `depth <= 2`), read one cycle ahead so the head never
/// starves.
///
/// `fwft = false`, read port: `rd_en_i` in a cycle where `empty_o` is low takes the oldest word;
/// in the next cycle `rd_valid_o` is high and `rd_data_o` carries that word (latency one cycle,
/// straight from the RAM's read register). One read per cycle is sustained: back-to-back reads
/// give back-to-back words. `rd_en_i` while `empty_o` is high is ignored (no word is taken and
/// `rd_valid_o` stays low). `empty_o` is `count_o == 0`. `rd_data_o` is meaningful only while
/// `rd_valid_o` is high (it keeps its value between reads; a reset does not clear it, and a read
/// accepted in the cycle before a reset still loads it). A word written in cycle `t` can be read
/// from cycle `t + 1` (its data in `t + 2`).
///
/// The golden model is `testbench::models::fifo`: a bounded queue in which, in each cycle, the
/// write and the read are both decided on the state at the start of the cycle.
pub fn fifo(width: u32, depth: u32, fwft: bool, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let name = module_name(width, depth, fwft);
    if width == 0 || depth == 0 {
        return Err(Errors(vec![Error {
            kind: ErrorKind::Invalid,
            module: name,
            signal: None,
            loc: Location::caller(),
            message: format!(
                "a FIFO of {depth} words of {width} bits: depth and width must both be at least 1"
            ),
        }]));
    }
    let mut m = ModuleBuilder::with_reset(&name, reset);
    if fwft {
        fwft_body(&mut m, width, depth);
    } else {
        read_port_body(&mut m, width, depth);
    }
    m.finish()
}

/// The occupancy counter (`count_q`, `clog2(depth + 1)` bits): +1 on `push`, -1 on `pop`.
fn occupancy(m: &mut ModuleBuilder, depth: u32) -> Reg {
    let count = m.reg("count", clog2(u64::from(depth) + 1), 0);
    m.comment(count.q, "words held");
    count
}

fn count_update(m: &mut ModuleBuilder, count: Reg, push: Sig, pop: Sig) {
    m.comb(|c| {
        c.set(count.d, count.q);
        c.if_(push & !pop, |c| c.set(count.d, count.q + 1))
            .else_if(pop & !push, |c| c.set(count.d, count.q - 1));
    });
}

/// A pointer into a ring of `size` words (at least 2), reset to 0, advancing on `advance` and
/// wrapping explicitly after `size - 1`, so `size` need not be a power of two.
fn ring_pointer(m: &mut ModuleBuilder, name: &str, size: u32, advance: Sig) -> Sig {
    let ptr = m.reg(name, clog2(u64::from(size)), 0);
    let last = u64::from(size - 1);
    m.comb(|c| {
        c.set(ptr.d, ptr.q);
        c.if_(advance & ptr.q.eq(last), |c| c.set(ptr.d, 0))
            .else_if(advance, |c| c.set(ptr.d, ptr.q + 1));
    });
    ptr.q
}

/// Word storage with a registered read: `size` words written at the write pointer when `wr`,
/// and read at the read pointer into `ram_rdata_q` when `rd`. Returns `ram_rdata_q`, which keeps
/// its value while `rd` is low. Two or more words are a memory (block RAM); a single word is a
/// flip-flop (`ram_word_q`) with the same timing.
fn storage(m: &mut ModuleBuilder, width: u32, size: u32, wr: Sig, data: Sig, rd: Sig) -> Sig {
    if size == 1 {
        let word = m.reg_noreset("ram_word", width);
        let rdata = m.reg_noreset("ram_rdata", width);
        m.comment(word.q, "the one RAM word, in a flip-flop");
        m.assign(word.d, mux(wr, data, word.q));
        m.assign(rdata.d, mux(rd, word.q, rdata.q));
        return rdata.q;
    }
    let wr_ptr = ring_pointer(m, "wr_ptr", size, wr);
    let rd_ptr = ring_pointer(m, "rd_ptr", size, rd);
    let ram = m.memory("ram", width, u64::from(size));
    m.mem_write(ram, wr, wr_ptr, data);
    m.mem_read(ram, rd, rd_ptr)
}

/// `fwft = false`: the RAM's read register drives `rd_data_o` directly.
fn read_port_body(m: &mut ModuleBuilder, width: u32, depth: u32) {
    m.doc(&format!(
        "Synchronous FIFO, {depth} x {width} bits, with a read port."
    ));
    m.doc(&format!(
        "Write: s_ready_o = (count_o != {depth}), from flip-flops; a word is taken"
    ));
    m.doc("when s_valid_i & s_ready_o (whatever the read side does in that cycle).");
    m.doc("Read: rd_en_i while empty_o is low takes the oldest word; the next cycle rd_valid_o is");
    m.doc("high and rd_data_o carries the word (back-to-back reads give back-to-back words).");
    m.doc("rd_en_i while empty_o is high is ignored: no word is taken, rd_valid_o stays low.");
    m.doc("rd_data_o is meaningful only with rd_valid_o; it keeps its value between reads.");
    m.doc("One write and one read per cycle; a word written in cycle t can be read from t+1.");
    m.doc("count_o = words held; empty_o = (count_o == 0). Order is kept; reset empties the FIFO.");
    if depth == 1 {
        m.doc("Storage: one flip-flop word (depth 1).");
    } else {
        m.doc(&format!(
            "Storage: a {depth}-word RAM with a registered read."
        ));
    }
    m.clock();
    m.reset();
    let def = stream_def(width);
    m.group("write port");
    let s = m.stream_in("s", &def);
    m.group("read port");
    let rd_en = m.input("rd_en_i", 1);
    let rd_valid_o = m.output("rd_valid_o", 1);
    let rd_data_o = m.output("rd_data_o", width);
    let empty_o = m.output("empty_o", 1);
    m.group("status");
    let count_o = m.output("count_o", clog2(u64::from(depth) + 1));

    let count = occupancy(m, depth);
    let rd_valid = m.reg("rd_valid", 1, 0);
    m.comment(rd_valid.q, "rd_data_o carries a word taken last cycle");
    let full = m.net("full", count.q.eq(u64::from(depth)));
    let empty = m.net("empty", count.q.eq(0));
    m.assign(s.ready, !full);
    m.assign(empty_o, empty);
    m.assign(count_o, count.q);
    m.assign(rd_valid_o, rd_valid.q);

    let push = m.net("push", s.fire());
    let pop = m.net("pop", rd_en & !empty);
    count_update(m, count, push, pop);
    m.assign(rd_valid.d, pop);
    let rdata = storage(m, width, depth, push, s.field("data"), pop);
    m.assign(rd_data_o, rdata);
}

/// `fwft = true`. The words held are, oldest first: the head (`out_data_q`, on `m_data_o`), the
/// next word (in `skid_data_q`, or in `ram_rdata_q` while `rdata_valid_q`), then the RAM. So the
/// RAM holds `count - 2` words when `count > 2` and none otherwise, and every place a word sits
/// follows from `count_q` and `rdata_valid_q` alone:
///
/// - a word accepted now lands `count - pop` places from the head: in the head register (0),
///   the skid register (1, `to_skid`), or the RAM (2 or more, `to_ram`);
/// - each word leaving while the RAM holds words starts the read of the oldest RAM word, which
///   arrives in `ram_rdata_q` next cycle, just in time to be the next word. (Induction on the
///   cycle: while the RAM holds words, the head and the next word are both present.)
///
/// A RAM read and write never meet at one address: a read needs a word in the RAM, and a write
/// while the RAM is full is refused (`s_ready_o` is low when `count == depth`).
fn fwft_body(m: &mut ModuleBuilder, width: u32, depth: u32) {
    m.doc(&format!(
        "Synchronous FIFO, {depth} x {width} bits, first-word fall-through."
    ));
    m.doc(&format!(
        "Write: s_ready_o = (count_o != {depth}), from flip-flops; a word is taken"
    ));
    m.doc("when s_valid_i & s_ready_o (whatever the read side does in that cycle).");
    m.doc("Read: m_valid_o = (count_o != 0) and m_data_o = the oldest word, both from");
    m.doc("flip-flops; a word leaves when m_valid_o & m_ready_i (m_ready_i alone does nothing).");
    m.doc("A word written into an empty FIFO in cycle t is on m in cycle t+1, and m_valid_o");
    m.doc("stays high while words are held. Both sides transfer in the same cycle independently:");
    m.doc("one word per cycle in and out for depth >= 2 (depth 1 alternates).");
    m.doc("count_o = words held. Order is kept; reset empties the FIFO.");
    match depth {
        1 => m.doc("Storage: the output register only (depth 1)."),
        2 => m.doc("Storage: the output register and one register behind it (depth 2)."),
        3 => m.doc("Storage: the output register, one behind it, one flip-flop word read ahead."),
        _ => m.doc(&format!(
            "Storage: the output register, one behind it, a {}-word RAM read ahead.",
            depth - 2
        )),
    }
    m.clock();
    m.reset();
    let def = stream_def(width);
    m.group("write port");
    let s = m.stream_in("s", &def);
    m.group("read port");
    let o = m.stream_out("m", &def);
    m.group("status");
    let count_o = m.output("count_o", clog2(u64::from(depth) + 1));

    let s_data = s.field("data");
    let count = occupancy(m, depth);
    let out = m.reg_noreset("out_data", width);
    m.comment(out.q, "the oldest word");
    m.assign(s.ready, count.q.ne(u64::from(depth)));
    m.assign(o.valid, count.q.ne(0));
    m.assign(o.field("data"), out.q);
    m.assign(count_o, count.q);

    let push = m.net("push", s.fire());
    let pop = m.net("pop", o.fire());
    count_update(m, count, push, pop);

    if depth == 1 {
        // Degenerate: a word is accepted only into an empty FIFO, straight into the head.
        m.assign(out.d, mux(push, s_data, out.q));
        return;
    }

    // Where a word accepted now lands, `count - pop` places from the head, is decided on
    // count_q for both values of pop and chosen by pop: pop (the reader's handshake, often at
    // the end of a long path) meets a mux, not a subtraction and a compare.
    let to_skid = m.net("to_skid", mux(pop, count.q.eq(2), count.q.eq(1)));
    m.comment(to_skid, "a word accepted now lands behind the head");
    let skid = m.reg_noreset("skid_data", width);
    m.comment(skid.q, "the next word, when it came straight from s");
    m.assign(skid.d, mux(push & to_skid, s_data, skid.q));

    let next_data = if depth == 2 {
        skid.q
    } else {
        let to_ram = m.net("to_ram", mux(pop, count.q.ge(3), count.q.ge(2)));
        m.comment(to_ram, "a word accepted now lands in the RAM");
        let ram_wr = m.net("ram_wr", push & to_ram);
        let ram_rd = m.net("ram_rd", pop & count.q.gt(2));
        m.comment(
            ram_rd,
            "the RAM holds words: read the oldest, to follow the head",
        );
        let rdata = storage(m, width, depth - 2, ram_wr, s_data, ram_rd);
        let rdata_valid = m.reg("rdata_valid", 1, 0);
        m.comment(rdata_valid.q, "the next word is in ram_rdata_q");
        // A read started now arrives next cycle; otherwise a word waiting in the read register
        // stays there (it keeps its value) until it moves to the head.
        m.assign(rdata_valid.d, ram_rd | (rdata_valid.q & !pop));
        m.net("next_data", mux(rdata_valid.q, rdata, skid.q))
    };

    // The head loads when it is empty or its word leaves: the next word if there is one,
    // otherwise whatever s offers (kept only if it is accepted, which count_q records).
    let head_free = m.net("head_free", !o.valid | o.ready);
    m.comb(|c| {
        c.set(out.d, out.q);
        c.if_(head_free & count.q.ge(2), |c| c.set(out.d, next_data))
            .else_if(head_free, |c| c.set(out.d, s_data));
    });
}
