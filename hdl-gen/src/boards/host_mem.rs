//! `host_mem_a<bits>_i<id_width>`: the bring-up boards' "host memory", `2^bits` bytes of block
//! RAM behind the chip's AXI4 master (`s_axi_*`) and, for the host tool, the UART bridge's
//! AXI4-Lite master (`s_axil_*`).
//!
//! Contract:
//! - `s_axi`: AXI4 slave, 64-bit data, INCR bursts of any length and any size up to 8 bytes
//!   (the address advances by `1 << size` per beat; `arburst`/`awburst` are taken as INCR), IDs
//!   echoed. One read burst and one write burst at a time: `arready` is high while no read
//!   burst is active or has a beat waiting, `awready` while no write burst is active or has its
//!   response waiting. A read beat comes the cycle after its RAM read; beats flow one per
//!   cycle while `rready` is high. `wready` is high during a write burst; the burst ends with
//!   the beat that has `wlast`. A burst whose start address is at or above `2^bits` moves no
//!   byte and answers DECERR (on every read beat, on the write response); otherwise OKAY.
//! - `s_axil`: AXI4-Lite slave, 32-bit data on the same bytes (address bit 2 picks the half of
//!   the 64-bit word), served only while `s_axi` is idle in that direction and not asking
//!   (`awvalid`/`arvalid` low), so the chip's traffic goes first; one transaction at a time,
//!   responses (OKAY) the cycle after the access.
//! - The RAM is eight byte lanes of `2^(bits-3)` words, one write and one registered read port
//!   each, so FPGA tools infer block RAM; the contents are not reset.

use hdl_builder::prelude::*;
use hdl_builder::Errors;
use std::rc::Rc;

use crate::blocks::uart_bridge::{axil_port, AXIL_MASTER};

/// Bytes per word of the AXI4 side.
const BYTES: u32 = 8;

/// The AXI4 slave's signals: (name, width (0: address, `u32::MAX`: ID), driven by the master).
const AXI: &[(&str, u32, bool)] = &[
    ("arvalid", 1, true),
    ("arready", 1, false),
    ("araddr", 0, true),
    ("arlen", 8, true),
    ("arsize", 3, true),
    ("arburst", 2, true),
    ("arid", u32::MAX, true),
    ("rvalid", 1, false),
    ("rready", 1, true),
    ("rdata", 64, false),
    ("rresp", 2, false),
    ("rlast", 1, false),
    ("rid", u32::MAX, false),
    ("awvalid", 1, true),
    ("awready", 1, false),
    ("awaddr", 0, true),
    ("awlen", 8, true),
    ("awsize", 3, true),
    ("awburst", 2, true),
    ("awid", u32::MAX, true),
    ("wvalid", 1, true),
    ("wready", 1, false),
    ("wdata", 64, true),
    ("wstrb", 8, true),
    ("wlast", 1, true),
    ("bvalid", 1, false),
    ("bready", 1, true),
    ("bresp", 2, false),
    ("bid", u32::MAX, false),
];

/// The module name.
pub fn module_name(bits: u32, id_width: u32) -> String {
    format!("host_mem_a{bits}_i{id_width}")
}

/// Builds `host_mem_a<bits>_i<id_width>` (see the module documentation): `addr_width` is the
/// width of the AXI4 addresses (64 on the chip's master).
pub fn host_mem(
    bits: u32,
    addr_width: u32,
    id_width: u32,
    reset: ResetStyle,
) -> Result<Rc<Module>, Errors> {
    let name = module_name(bits, id_width);
    if !(4..=24).contains(&bits) || addr_width <= bits || id_width == 0 {
        return Err(Errors::invalid(
            &name,
            format!(
                "{name}: the RAM holds 2^{bits} bytes: bits must be 4 to 24 and below the address width {addr_width}, the ID at least 1 bit"
            ),
        ));
    }
    let words = 1u64 << (bits - 3);
    let mut m = ModuleBuilder::with_reset(&name, reset);
    m.doc(&format!(
        "Bring-up host memory: {} KiB of block RAM (eight byte lanes) behind an AXI4 slave (INCR",
        (1u64 << bits) / 1024
    ));
    m.doc("bursts, one read and one write burst at a time, DECERR at or above the RAM) and an");
    m.doc("AXI4-Lite slave served while the AXI4 side is idle. Contract: hdl-gen/src/boards/host_mem.rs.");
    m.clock();
    m.reset();
    m.group("AXI4 slave (the chip's host-memory master)");
    let mut a = std::collections::BTreeMap::new();
    for &(n, w, from_master) in AXI {
        let w = match w {
            0 => addr_width,
            u32::MAX => id_width,
            w => w,
        };
        let port = format!("s_axi_{n}_{}", if from_master { "i" } else { "o" });
        let s = if from_master {
            m.input(&port, w)
        } else {
            m.output(&port, w)
        };
        a.insert(n, s);
    }
    m.group("AXI4-Lite slave (the UART bridge)");
    let mut l = std::collections::BTreeMap::new();
    for &(n, w, from_master) in AXIL_MASTER {
        let w = if n.ends_with("addr") { bits } else { w };
        let port = axil_port("s_axil", n, false);
        let s = if from_master {
            m.input(&port, w)
        } else {
            m.output(&port, w)
        };
        l.insert(n, s);
    }
    m.unused(
        "unused_axi",
        cat([
            a["arburst"].ex(),
            a["awburst"].ex(),
            a["awlen"].ex(),
            l["awaddr"].slice(1, 0),
            l["araddr"].slice(1, 0),
        ]),
    );
    let step = |size: Sig| -> Expr {
        mux(
            size.eq(0),
            lit(bits, 1),
            mux(
                size.eq(1),
                lit(bits, 2),
                mux(size.eq(2), lit(bits, 4), lit(bits, 8)),
            ),
        )
    };
    let word = |addr: Expr| addr.slice(bits - 1, 3);

    // ------------------------------------------------------------------ reads
    let rd_busy = m.reg("rd_busy", 1, 0);
    m.comment(
        rd_busy.q,
        "a read burst has beats left to read from the RAM",
    );
    let rd_addr = m.reg("rd_addr", bits, 0);
    let rd_left = m.reg("rd_left", 8, 0);
    m.comment(rd_left.q, "beats left after the next one");
    let rd_size = m.reg("rd_size", 3, 0);
    let rd_id = m.reg("rd_id", id_width, 0);
    let rd_oob = m.reg("rd_oob", 1, 0);
    m.comment(
        rd_oob.q,
        "the burst starts outside the RAM: DECERR, no byte read",
    );
    let r_valid = m.reg("r_valid", 1, 0);
    let r_last = m.reg("r_last", 1, 0);
    let l_rvalid = m.reg("l_rvalid", 1, 0);
    let l_rhalf = m.reg("l_rhalf", 1, 0);
    let ar_ready = m.net("ar_ready", !rd_busy.q & !r_valid.q & !l_rvalid.q);
    let ar_fire = m.net("ar_fire", a["arvalid"] & ar_ready);
    let issue = m.net("rd_issue", rd_busy.q & (!r_valid.q | a["rready"]));
    let l_rd = m.net(
        "l_rd",
        l["arvalid"] & !rd_busy.q & !r_valid.q & !l_rvalid.q & !a["arvalid"],
    );
    let ar_oob = m.net("ar_oob", a["araddr"].slice(addr_width - 1, bits).ne(0));
    m.assign(a["arready"], ar_ready);
    m.assign(
        rd_busy.d,
        mux(ar_fire, lit(1, 1), rd_busy.q & !(issue & rd_left.q.eq(0))),
    );
    m.assign(
        rd_addr.d,
        mux(
            ar_fire,
            a["araddr"].slice(bits - 1, 0),
            mux(issue, rd_addr.q + step(rd_size.q), rd_addr.q.ex()),
        ),
    );
    m.assign(
        rd_left.d,
        mux(
            ar_fire,
            a["arlen"].ex(),
            mux(issue, rd_left.q - 1, rd_left.q.ex()),
        ),
    );
    m.assign(rd_size.d, mux(ar_fire, a["arsize"], rd_size.q));
    m.assign(rd_id.d, mux(ar_fire, a["arid"], rd_id.q));
    m.assign(rd_oob.d, mux(ar_fire, ar_oob, rd_oob.q));
    m.assign(r_valid.d, issue | (r_valid.q & !a["rready"]));
    m.assign(r_last.d, mux(issue, rd_left.q.eq(0), r_last.q.ex()));
    m.assign(l_rvalid.d, l_rd | (l_rvalid.q & !l["rready"]));
    m.assign(l_rhalf.d, mux(l_rd, l["araddr"].bit(2), l_rhalf.q));
    let rd_word = m.net(
        "rd_word",
        mux(l_rd, word(l["araddr"].ex()), word(rd_addr.q.ex())),
    );

    // ------------------------------------------------------------------ writes
    let wr_busy = m.reg("wr_busy", 1, 0);
    m.comment(wr_busy.q, "a write burst takes beats");
    let wr_addr = m.reg("wr_addr", bits, 0);
    let wr_size = m.reg("wr_size", 3, 0);
    let wr_id = m.reg("wr_id", id_width, 0);
    let wr_oob = m.reg("wr_oob", 1, 0);
    let b_valid = m.reg("b_valid", 1, 0);
    let l_bvalid = m.reg("l_bvalid", 1, 0);
    let aw_ready = m.net("aw_ready", !wr_busy.q & !b_valid.q);
    let aw_fire = m.net("aw_fire", a["awvalid"] & aw_ready);
    let beat = m.net("w_beat", wr_busy.q & a["wvalid"]);
    let l_wr = m.net(
        "l_wr",
        l["awvalid"] & l["wvalid"] & !l_bvalid.q & !wr_busy.q & !a["awvalid"],
    );
    let aw_oob = m.net("aw_oob", a["awaddr"].slice(addr_width - 1, bits).ne(0));
    m.assign(a["awready"], aw_ready);
    m.assign(a["wready"], wr_busy.q);
    m.assign(
        wr_busy.d,
        mux(aw_fire, lit(1, 1), wr_busy.q & !(beat & a["wlast"])),
    );
    m.assign(
        wr_addr.d,
        mux(
            aw_fire,
            a["awaddr"].slice(bits - 1, 0),
            mux(beat, wr_addr.q + step(wr_size.q), wr_addr.q.ex()),
        ),
    );
    m.assign(wr_size.d, mux(aw_fire, a["awsize"], wr_size.q));
    m.assign(wr_id.d, mux(aw_fire, a["awid"], wr_id.q));
    m.assign(wr_oob.d, mux(aw_fire, aw_oob, wr_oob.q));
    m.assign(b_valid.d, (beat & a["wlast"]) | (b_valid.q & !a["bready"]));
    m.assign(l_bvalid.d, l_wr | (l_bvalid.q & !l["bready"]));
    let l_strb = m.net(
        "l_strb",
        mux(
            l["awaddr"].bit(2),
            cat([l["wstrb"].ex(), zeros(4)]),
            cat([zeros(4), l["wstrb"].ex()]),
        ),
    );
    let wr_word = m.net(
        "wr_word",
        mux(l_wr, word(l["awaddr"].ex()), word(wr_addr.q.ex())),
    );
    let wr_data = m.net(
        "wr_data",
        mux(
            l_wr,
            cat([l["wdata"].ex(), l["wdata"].ex()]),
            a["wdata"].ex(),
        ),
    );
    let wr_strb = m.net(
        "wr_strb",
        mux(
            l_wr,
            l_strb.ex(),
            a["wstrb"] & (beat & !wr_oob.q).repeat(BYTES),
        ),
    );

    // ------------------------------------------------------------------ the RAM
    let rd_en = m.net("rd_en", issue | l_rd);
    let mut lanes = Vec::new();
    for lane in 0..BYTES {
        let mem = m.memory(&format!("lane{lane}"), 8, words);
        m.mem_write(
            mem,
            wr_strb.bit(lane),
            wr_word,
            wr_data.slice(lane * 8 + 7, lane * 8),
        );
        lanes.push(m.mem_read(mem, rd_en, rd_word));
    }
    lanes.reverse();
    let rdata = m.net("rdata", cat(lanes));

    m.assign(a["rvalid"], r_valid.q);
    m.assign(a["rdata"], rdata);
    m.assign(a["rresp"], mux(rd_oob.q, lit(2, 3), lit(2, 0)));
    m.assign(a["rlast"], r_last.q);
    m.assign(a["rid"], rd_id.q);
    m.assign(a["bvalid"], b_valid.q);
    m.assign(a["bresp"], mux(wr_oob.q, lit(2, 3), lit(2, 0)));
    m.assign(a["bid"], wr_id.q);

    m.assign(l["arready"], l_rd);
    m.assign(l["rvalid"], l_rvalid.q);
    m.assign(
        l["rdata"],
        mux(l_rhalf.q, rdata.slice(63, 32), rdata.slice(31, 0)),
    );
    m.assign(l["rresp"], zeros(2));
    m.assign(l["awready"], l_wr);
    m.assign(l["wready"], l_wr);
    m.assign(l["bvalid"], l_bvalid.q);
    m.assign(l["bresp"], zeros(2));
    m.finish()
}
