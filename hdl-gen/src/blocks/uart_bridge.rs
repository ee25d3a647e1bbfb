//! The bring-up bridge: 32-bit reads and writes framed over a byte stream (a UART), carried out
//! as an AXI4-Lite master.
//!
//! # Protocol
//!
//! Every multi-byte value is big-endian (most significant byte first).
//!
//! | host sends | bridge answers |
//! |---|---|
//! | `'R'` (0x52), address (4 bytes) | status (1 byte), then the data read (4 bytes) |
//! | `'W'` (0x57), address (4 bytes), data (4 bytes) | status (1 byte) |
//!
//! The status byte is `0xA0 | resp`, `resp` being the AXI response: 0xA0 OKAY, 0xA2 SLVERR,
//! 0xA3 DECERR; a read answers its 4 data bytes whatever the status. Writes set all four byte
//! strobes. Bytes other than `'R'` and `'W'` where a command is expected are ignored, and a
//! command whose next byte does not come within the timeout (2^`timeout_bits` cycles; the
//! generator picks about 10 ms) is dropped without an answer, so a host resynchronizes by
//! waiting 20 ms. Commands are carried out one at a time, in order; bytes sent while the
//! bridge waits for the bus or answers are held back by the byte stream's ready.

use super::uart::byte_stream;
use hdl_builder::prelude::*;
use hdl_builder::Errors;
use std::rc::Rc;

/// Command byte of a read.
pub const CMD_READ: u8 = b'R';
/// Command byte of a write.
pub const CMD_WRITE: u8 = b'W';
/// The status byte is this value ORed with the AXI response.
pub const STATUS_BASE: u8 = 0xa0;

/// The AXI4-Lite master ports, `m_axil_<name>_<dir>`: (name, width, is an output of the master).
pub const AXIL_MASTER: &[(&str, u32, bool)] = &[
    ("awvalid", 1, true),
    ("awready", 1, false),
    ("awaddr", 32, true),
    ("wvalid", 1, true),
    ("wready", 1, false),
    ("wdata", 32, true),
    ("wstrb", 4, true),
    ("bvalid", 1, false),
    ("bready", 1, true),
    ("bresp", 2, false),
    ("arvalid", 1, true),
    ("arready", 1, false),
    ("araddr", 32, true),
    ("rvalid", 1, false),
    ("rready", 1, true),
    ("rdata", 32, false),
    ("rresp", 2, false),
];

/// The port name of AXI4-Lite signal `name` with prefix `prefix` (`m_axil`, `s_axil`) seen from
/// a master (`master = true`) or a slave.
pub fn axil_port(prefix: &str, name: &str, master: bool) -> String {
    let out = AXIL_MASTER
        .iter()
        .find(|p| p.0 == name)
        .is_some_and(|p| p.2 == master);
    format!("{prefix}_{name}_{}", if out { "o" } else { "i" })
}

/// `uart_axil_bridge_t<timeout_bits>`: the protocol above, between a byte stream in (`rx`), a
/// byte stream out (`tx`) and an AXI4-Lite master (`m_axil_*`, without `awprot`/`arprot`).
///
/// AXI4-Lite: one transaction at a time. A write raises `awvalid` and `wvalid` together and
/// keeps each up until its handshake; `bready` is high while the write waits. A read raises
/// `arvalid` until its handshake; `rready` is high while the read waits. Valid signals never
/// depend on ready signals; the address and data hold still from the first valid to the
/// response.
pub fn uart_axil_bridge(timeout_bits: u32, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let mut m = ModuleBuilder::with_reset(&format!("uart_axil_bridge_t{timeout_bits}"), reset);
    m.doc("Bring-up bridge: framed 32-bit reads and writes from a byte stream, carried out as an");
    m.doc("AXI4-Lite master. Big-endian. 'R' a3 a2 a1 a0 -> status d3 d2 d1 d0;");
    m.doc("'W' a3 a2 a1 a0 d3 d2 d1 d0 -> status. status = 0xA0 | resp (OKAY, SLVERR, DECERR).");
    m.doc("Other bytes where a command is expected are ignored; a command stalled for");
    m.doc(&format!(
        "2^{timeout_bits} cycles between bytes is dropped. One transaction at a time, in order."
    ));
    m.clock();
    m.reset();
    m.group("bytes from the host");
    let rx = m.stream_in("rx", &byte_stream());
    m.group("bytes to the host");
    let tx = m.stream_out("tx", &byte_stream());
    m.group("AXI4-Lite master");
    let mut p = std::collections::BTreeMap::new();
    for &(name, width, out) in AXIL_MASTER {
        let port = axil_port("m_axil", name, true);
        let s = if out {
            m.output(&port, width)
        } else {
            m.input(&port, width)
        };
        p.insert(name, s);
    }

    let st = m.enum_type(
        "state",
        &[
            "StCmd", "StAddr", "StData", "StWrite", "StRead", "StStatus", "StRdata",
        ],
    );
    let state = m.reg_enum("state", &st, st.item("StCmd"));
    let is_write = m.reg("is_write", 1, 0);
    let addr = m.reg("addr", 32, 0);
    let data = m.reg("data", 32, 0);
    m.comment(data.q, "write data, then read data shifted out to tx");
    let nbyte = m.reg("nbyte", 2, 0);
    m.comment(nbyte.q, "bytes of the address, data or read data done");
    let resp = m.reg("resp", 2, 0);
    let aw_done = m.reg("aw_done", 1, 0);
    let w_done = m.reg("w_done", 1, 0);
    let ar_done = m.reg("ar_done", 1, 0);
    let idle = m.reg("idle", timeout_bits, 0);
    m.comment(
        idle.q,
        "cycles since the last byte of an unfinished command",
    );

    let in_write = m.net("in_write", state.q.eq(st.item("StWrite")));
    let in_read = m.net("in_read", state.q.eq(st.item("StRead")));
    let receiving = m.net(
        "receiving",
        state.q.eq(st.item("StCmd"))
            | state.q.eq(st.item("StAddr"))
            | state.q.eq(st.item("StData")),
    );
    m.assign(rx.ready, receiving);
    let byte = rx.field("data");
    let got = m.net("got", rx.fire());
    let sent = m.net("sent", tx.fire());
    let mid_command = m.net(
        "mid_command",
        state.q.eq(st.item("StAddr")) | state.q.eq(st.item("StData")),
    );
    let timed_out = m.net("timed_out", idle.q.all());

    m.assign(p["awvalid"], in_write & !aw_done.q);
    m.assign(p["awaddr"], addr.q);
    m.assign(p["wvalid"], in_write & !w_done.q);
    m.assign(p["wdata"], data.q);
    m.assign(p["wstrb"], ones(4));
    m.assign(p["bready"], in_write);
    m.assign(p["arvalid"], in_read & !ar_done.q);
    m.assign(p["araddr"], addr.q);
    m.assign(p["rready"], in_read);
    let aw_fire = m.net("aw_fire", p["awvalid"] & p["awready"]);
    let w_fire = m.net("w_fire", p["wvalid"] & p["wready"]);
    let b_fire = m.net("b_fire", p["bready"] & p["bvalid"]);
    let ar_fire = m.net("ar_fire", p["arvalid"] & p["arready"]);
    let r_fire = m.net("r_fire", p["rready"] & p["rvalid"]);

    let in_status = m.net("in_status", state.q.eq(st.item("StStatus")));
    m.assign(tx.valid, in_status | state.q.eq(st.item("StRdata")));
    m.assign(
        tx.field("data"),
        mux(
            in_status,
            cat([lit(6, u128::from(STATUS_BASE >> 2)), resp.q.ex()]),
            data.q.slice(31, 24),
        ),
    );

    m.assign(
        idle.d,
        mux(mid_command & !got, idle.q + 1, zeros(timeout_bits)),
    );
    m.assign(aw_done.d, in_write & !b_fire & (aw_done.q | aw_fire));
    m.assign(w_done.d, in_write & !b_fire & (w_done.q | w_fire));
    m.assign(ar_done.d, in_read & !r_fire & (ar_done.q | ar_fire));

    m.comb(|c| {
        c.set(state.d, state.q);
        c.set(is_write.d, is_write.q);
        c.set(addr.d, addr.q);
        c.set(data.d, data.q);
        c.set(nbyte.d, nbyte.q);
        c.set(resp.d, resp.q);
        c.case(state.q, |k| {
            k.arm(st.item("StCmd"), |c| {
                c.set(nbyte.d, 0);
                c.if_(got & byte.eq(u64::from(CMD_READ)), |c| {
                    c.set(is_write.d, 0);
                    c.set(state.d, st.item("StAddr"));
                })
                .else_if(got & byte.eq(u64::from(CMD_WRITE)), |c| {
                    c.set(is_write.d, 1);
                    c.set(state.d, st.item("StAddr"));
                });
            });
            k.arm(st.item("StAddr"), |c| {
                c.if_(timed_out, |c| c.set(state.d, st.item("StCmd")))
                    .else_if(got, |c| {
                        c.set(addr.d, cat([addr.q.slice(23, 0), byte.ex()]));
                        c.set(nbyte.d, nbyte.q + 1);
                        c.if_(nbyte.q.eq(3) & is_write.q, |c| {
                            c.set(state.d, st.item("StData"));
                        })
                        .else_if(nbyte.q.eq(3), |c| c.set(state.d, st.item("StRead")));
                    });
            });
            k.arm(st.item("StData"), |c| {
                c.if_(timed_out, |c| c.set(state.d, st.item("StCmd")))
                    .else_if(got, |c| {
                        c.set(data.d, cat([data.q.slice(23, 0), byte.ex()]));
                        c.set(nbyte.d, nbyte.q + 1);
                        c.if_(nbyte.q.eq(3), |c| c.set(state.d, st.item("StWrite")));
                    });
            });
            k.arm(st.item("StWrite"), |c| {
                c.if_(b_fire, |c| {
                    c.set(resp.d, p["bresp"]);
                    c.set(state.d, st.item("StStatus"));
                });
            });
            k.arm(st.item("StRead"), |c| {
                c.if_(r_fire, |c| {
                    c.set(resp.d, p["rresp"]);
                    c.set(data.d, p["rdata"]);
                    c.set(state.d, st.item("StStatus"));
                });
            });
            k.arm(st.item("StStatus"), |c| {
                c.set(nbyte.d, 0);
                c.if_(sent & is_write.q, |c| c.set(state.d, st.item("StCmd")))
                    .else_if(sent, |c| c.set(state.d, st.item("StRdata")));
            });
            k.arm(st.item("StRdata"), |c| {
                c.if_(sent, |c| {
                    c.set(data.d, cat([data.q.slice(23, 0), lit(8, 0)]));
                    c.set(nbyte.d, nbyte.q + 1);
                    c.if_(nbyte.q.eq(3), |c| c.set(state.d, st.item("StCmd")));
                });
            });
            k.default(|c| c.set(state.d, st.item("StCmd")));
        });
    });
    m.finish()
}
