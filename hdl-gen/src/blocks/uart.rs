//! UART receiver and transmitter (8 data bits, no parity, one stop bit: 8N1), for the bring-up
//! bridge. The bit time is a whole number of clock cycles (`div`), fixed at elaboration: the
//! module names carry it (`uart_rx_div1085` is 115200 baud from 125 MHz).

use hdl_builder::prelude::*;
use hdl_builder::{Error, ErrorKind, Errors};
use std::panic::Location;
use std::rc::Rc;

/// The stream of bytes on each side of a UART: one `data` field of 8 bits.
pub fn byte_stream() -> StreamDef {
    StreamDef::new().field("data", 8)
}

/// Clock cycles per bit for `baud` from a `clock_hz` clock, rounded to the nearest cycle.
pub fn divider(clock_hz: u64, baud: u64) -> u32 {
    ((clock_hz + baud / 2) / baud) as u32
}

/// The smallest divider the blocks accept: the receiver samples half a bit after the start edge.
pub const MIN_DIV: u32 = 4;

fn check_div(name: &str, div: u32) -> Result<(), Errors> {
    if div < MIN_DIV {
        return Err(Errors(vec![Error {
            kind: ErrorKind::Invalid,
            module: name.to_string(),
            signal: None,
            loc: Location::caller(),
            message: format!(
                "a bit time of {div} clock cycles is too short; the UART needs at least {MIN_DIV} (lower the baud rate or raise the clock)"
            ),
        }]));
    }
    Ok(())
}

/// `uart_rx_div<div>`: receives 8N1 bytes on `rx_i` (asynchronous; two flip-flops synchronize it)
/// and offers each on the stream `m` (`m_valid_o`, `m_ready_i`, `m_data_o`).
///
/// The start bit is recognised on a falling edge and checked again half a bit later (a shorter
/// low glitch is ignored); data bits are sampled in their middle, least significant first. A byte
/// whose stop bit is low is dropped with a one-cycle `frame_err_o`. A byte completed while the
/// previous one still waits on `m` is dropped with a one-cycle `overrun_o`: the receiver cannot
/// hold the line, so the consumer must take a byte within one byte time.
pub fn uart_rx(div: u32, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let name = format!("uart_rx_div{div}");
    check_div(&name, div)?;
    let mut m = ModuleBuilder::with_reset(&name, reset);
    m.doc(&format!(
        "UART receiver, 8N1, {div} clock cycles per bit. rx_i is synchronized by two flip-flops."
    ));
    m.doc("Each byte is offered on m until taken; a byte completed while the previous one waits");
    m.doc(
        "is dropped (overrun_o pulses), as is a byte whose stop bit is low (frame_err_o pulses).",
    );
    m.clock();
    m.reset();
    m.group("serial line");
    // A declared crossing: the two flip-flops of `rx_sync` below synchronize it.
    let rx = m.input_crossing("rx_i", 1);
    m.group("received bytes");
    let o = m.stream_out("m", &byte_stream());
    m.group("errors");
    let overrun = m.output("overrun_o", 1);
    let frame_err = m.output("frame_err_o", 1);

    let cw = clog2(u64::from(div));
    // Reset to the idle level, so a reset does not look like a start bit.
    let sync = m.reg("rx_sync", 2, 3);
    m.comment(sync.q, "rx_i through two flip-flops; bit 1 is safe to use");
    m.assign(sync.d, cat([sync.q.bit(0), rx.ex()]));
    let line = m.net("line", sync.q.bit(1));

    let st = m.enum_type("state", &["StIdle", "StStart", "StData", "StStop"]);
    let state = m.reg_enum("state", &st, st.item("StIdle"));
    let timer = m.reg("timer", cw, 0);
    m.comment(timer.q, "cycles to the next sampling point");
    let nbit = m.reg("nbit", 3, 0);
    let shift = m.reg_noreset("shift", 8);
    let valid = m.reg("valid", 1, 0);
    let data = m.reg_noreset("data", 8);
    let overrun_q = m.reg("overrun", 1, 0);
    let frame_q = m.reg("frame_err", 1, 0);

    m.assign(o.valid, valid.q);
    m.assign(o.field("data"), data.q);
    m.assign(overrun, overrun_q.q);
    m.assign(frame_err, frame_q.q);

    let sample = m.net("sample", timer.q.eq(0));
    let taken = m.net("taken", o.fire());
    let full_bit = u64::from(div - 1);
    let half_bit = u64::from(div / 2 - 1);
    m.comb(|c| {
        c.set(state.d, state.q);
        c.set(timer.d, mux(sample, timer.q, timer.q - 1));
        c.set(nbit.d, nbit.q);
        c.set(shift.d, shift.q);
        c.set(valid.d, valid.q & !taken);
        c.set(data.d, data.q);
        c.set(overrun_q.d, 0);
        c.set(frame_q.d, 0);
        c.case(state.q, |k| {
            k.arm(st.item("StIdle"), |c| {
                c.if_(!line, |c| {
                    c.set(state.d, st.item("StStart"));
                    c.set(timer.d, lit(cw, u128::from(half_bit)));
                });
            });
            k.arm(st.item("StStart"), |c| {
                c.if_(sample & line, |c| c.set(state.d, st.item("StIdle")))
                    .else_if(sample, |c| {
                        c.set(state.d, st.item("StData"));
                        c.set(timer.d, lit(cw, u128::from(full_bit)));
                        c.set(nbit.d, 0);
                    });
            });
            k.arm(st.item("StData"), |c| {
                c.if_(sample, |c| {
                    c.set(shift.d, cat([line.ex(), shift.q.slice(7, 1)]));
                    c.set(timer.d, lit(cw, u128::from(full_bit)));
                    c.set(nbit.d, nbit.q + 1);
                    c.if_(nbit.q.eq(7), |c| c.set(state.d, st.item("StStop")));
                });
            });
            k.arm(st.item("StStop"), |c| {
                c.if_(sample, |c| {
                    c.set(state.d, st.item("StIdle"));
                    c.if_(!line, |c| c.set(frame_q.d, 1))
                        .else_if(valid.q & !taken, |c| c.set(overrun_q.d, 1))
                        .else_(|c| {
                            c.set(valid.d, 1);
                            c.set(data.d, shift.q);
                        });
                });
            });
            k.default(|c| c.set(state.d, st.item("StIdle")));
        });
    });
    m.finish()
}

/// `uart_tx_div<div>`: sends each byte taken from the stream `s` (`s_valid_i`, `s_ready_o`,
/// `s_data_i`) on `tx_o` as 8N1, least significant bit first. `s_ready_o` is high while the
/// line is idle (from flip-flops); a byte taken in cycle `t` starts its start bit in cycle `t + 1`.
/// `tx_o` comes straight from a flip-flop and idles high.
pub fn uart_tx(div: u32, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let name = format!("uart_tx_div{div}");
    check_div(&name, div)?;
    let mut m = ModuleBuilder::with_reset(&name, reset);
    m.doc(&format!(
        "UART transmitter, 8N1, {div} clock cycles per bit. s_ready_o is high while idle;"
    ));
    m.doc("a byte taken in cycle t starts its start bit in cycle t+1. tx_o is registered.");
    m.clock();
    m.reset();
    m.group("bytes to send");
    let s = m.stream_in("s", &byte_stream());
    m.group("serial line");
    let tx = m.output("tx_o", 1);

    let cw = clog2(u64::from(div));
    // Bit 0 is on the line; ones shift in behind, so the line idles high.
    let shift = m.reg("shift", 10, 0x3ff);
    m.comment(shift.q, "stop bit, data, start bit; bit 0 is on the line");
    let left = m.reg("left", 4, 0);
    m.comment(left.q, "bits still to send, including the one on the line");
    let timer = m.reg("timer", cw, 0);
    let busy = m.net("busy", left.q.ne(0));
    m.assign(s.ready, !busy);
    m.assign(tx, shift.q.bit(0));
    let take = m.net("take", s.fire());
    let full_bit = u64::from(div - 1);
    m.comb(|c| {
        c.set(shift.d, shift.q);
        c.set(left.d, left.q);
        c.set(timer.d, timer.q);
        c.if_(take, |c| {
            c.set(shift.d, cat([lit(1, 1), s.field("data").ex(), lit(1, 0)]));
            c.set(left.d, 10);
            c.set(timer.d, lit(cw, u128::from(full_bit)));
        })
        .else_if(busy & timer.q.eq(0), |c| {
            c.set(shift.d, cat([lit(1, 1), shift.q.slice(9, 1)]));
            c.set(left.d, left.q - 1);
            c.set(timer.d, lit(cw, u128::from(full_bit)));
        })
        .else_if(busy, |c| c.set(timer.d, timer.q - 1));
    });
    m.finish()
}
