//! `mdio_master`: IEEE 802.3 clause 22 management frames on MDC/MDIO, for firmware to set the
//! PHY up (the B50612D's TX delay, the KSZ9031's skews).
//!
//! Interface contract:
//! - `div_i` (from a CSR): MDC's half period in `clk_i` cycles; values below 2 count as 2. A
//!   clause 22 PHY wants MDC at 2.5 MHz at most: 25 or more at 125 MHz.
//! - Commands on the stream `cmd` (`cmd_write_i`, `cmd_phy_i`, `cmd_reg_i`, `cmd_data_i`), taken
//!   while idle (`cmd_ready_o`, from a flip-flop). Each becomes one frame, MSB first: 32 ones of
//!   preamble, ST 01, OP 01 (write) or 10 (read), PHYAD, REGAD, TA, 16 data bits: 64 MDC
//!   periods. A write drives TA as 10 and its data; a read releases MDIO from TA on, and the PHY
//!   drives TA's second bit 0 and the data.
//! - `done_o` is high for one cycle when a frame ends; after a read `rdata_o` holds the 16 bits
//!   sampled (FFFFh where no PHY answered and the pull-up held the line) until the next read.
//! - Pins: MDIO changes (`mdio_o`, `mdio_oe_o`) at MDC's falling edge and is sampled by the PHY
//!   at its rising edge; read bits are sampled from `mdio_i` (through a `sync_2ff`, so two cycles
//!   late) at the cycle MDC rises, a whole period after the PHY drove them on the rising edge
//!   before. The board top puts `mdio_o`/`mdio_oe_o`/`mdio_i` on the pin through a `BB`.

use crate::blocks::sync_2ff::sync_2ff;
use hdl_builder::prelude::*;
use hdl_builder::Errors;
use std::rc::Rc;

/// The module name.
pub const NAME: &str = "mdio_master";

/// Builds `mdio_master` (see the module documentation).
pub fn mdio_master(reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let sync = sync_2ff(1, reset)?;
    let mut m = ModuleBuilder::with_reset(NAME, reset);
    m.doc(
        "MDIO master, IEEE 802.3 clause 22: one frame (32-bit preamble, ST, OP, PHYAD, REGAD, TA,",
    );
    m.doc("16 data bits) per command; MDC half period div_i clk_i cycles (at least 2). MDIO changes at");
    m.doc("MDC's falling edge; read bits are sampled (synchronized) at its rising edge.");
    m.clock();
    m.reset();
    m.group("configuration (CSR)");
    let div = m.input("div_i", 8);
    m.comment(div, "MDC half period in clk_i cycles; below 2 counts as 2");
    m.group("commands");
    let cmd_valid = m.input("cmd_valid_i", 1);
    let cmd_ready = m.output("cmd_ready_o", 1);
    let cmd_write = m.input("cmd_write_i", 1);
    let cmd_phy = m.input("cmd_phy_i", 5);
    let cmd_reg = m.input("cmd_reg_i", 5);
    let cmd_data = m.input("cmd_data_i", 16);
    m.group("status");
    let done = m.output("done_o", 1);
    let rdata = m.output("rdata_o", 16);
    m.group("pins");
    let mdc = m.output("mdc_o", 1);
    let mdio_o = m.output("mdio_o", 1);
    let mdio_oe = m.output("mdio_oe_o", 1);
    let mdio_i = m.input_async("mdio_i", 1);

    let u_sync = m.instance("u_mdio_sync", &sync);
    m.bind(u_sync, "d_i", mdio_i);
    let mdio_s = m.bind_out(u_sync, "q_o");

    let busy = m.reg("busy", 1, 0);
    let shift = m.reg("shift", 64, 0);
    m.comment(shift.q, "the frame, bit 63 on MDIO");
    let drive = m.reg("drive", 64, 0);
    m.comment(drive.q, "bit 63: the master drives MDIO in this bit");
    let slot = m.reg("slot", 6, 0);
    m.comment(slot.q, "bit of the frame on MDIO");
    let timer = m.reg("timer", 8, 0);
    let mdc_q = m.reg("mdc", 1, 0);
    let rsh = m.reg("rdata", 16, 0);
    let done_q = m.reg("done", 1, 0);
    let out = m.reg("mdio_out", 1, 1);
    let oe = m.reg("mdio_oe", 1, 0);
    let half = m.net("half", mux(div.lt(2), lit(8, 1), div - 1));
    m.comment(half, "timer reload: div_i - 1, at least 1");
    let take = m.net("take", cmd_valid & !busy.q);
    let op = m.net("op", mux(cmd_write, lit(2, 0b01), lit(2, 0b10)));
    let frame = m.net(
        "frame",
        cat([
            lit(32, 0xffff_ffff),
            lit(2, 0b01),
            op.ex(),
            cmd_phy.ex(),
            cmd_reg.ex(),
            mux(cmd_write, lit(2, 0b10), lit(2, 0b11)),
            mux(cmd_write, cmd_data.ex(), lit(16, 0xffff)),
        ]),
    );
    let drives = m.net(
        "drives",
        mux(
            cmd_write,
            lit(64, u64::MAX as u128),
            lit(64, (u64::MAX as u128) << 18 & u128::from(u64::MAX)),
        ),
    );
    m.comment(
        drives,
        "a write drives all 64 bits, a read the 46 before TA",
    );
    let tick = m.net("tick", busy.q & timer.q.eq(0));
    m.comb(|c| {
        c.set(busy.d, busy.q);
        c.set(shift.d, shift.q);
        c.set(drive.d, drive.q);
        c.set(slot.d, slot.q);
        c.set(timer.d, mux(timer.q.eq(0), timer.q, timer.q - 1));
        c.set(mdc_q.d, mdc_q.q);
        c.set(rsh.d, rsh.q);
        c.set(done_q.d, 0);
        c.set(out.d, out.q);
        c.set(oe.d, oe.q);
        c.if_(take, |c| {
            c.set(busy.d, 1);
            c.set(shift.d, frame);
            c.set(drive.d, drives);
            c.set(slot.d, 0);
            c.set(timer.d, half);
            c.set(mdc_q.d, 0);
            c.set(out.d, frame.bit(63));
            c.set(oe.d, 1);
        })
        .else_if(tick & !mdc_q.q, |c| {
            // Rising edge of MDC: the PHY samples; a read bit is sampled here.
            c.set(mdc_q.d, 1);
            c.set(timer.d, half);
            c.if_(slot.q.ge(48) & !drive.q.bit(63), |c| {
                c.set(rsh.d, cat([rsh.q.slice(14, 0), mdio_s.ex()]))
            });
        })
        .else_if(tick, |c| {
            // Falling edge: the next bit, or the end of the frame.
            c.set(mdc_q.d, 0);
            c.set(timer.d, half);
            c.set(slot.d, slot.q + 1);
            c.set(shift.d, shift.q << 1);
            c.set(drive.d, drive.q << 1);
            c.set(out.d, shift.q.bit(62));
            c.set(oe.d, drive.q.bit(62));
            c.if_(slot.q.eq(63), |c| {
                c.set(busy.d, 0);
                c.set(done_q.d, 1);
                c.set(out.d, 1);
                c.set(oe.d, 0);
            });
        });
    });
    m.assign(cmd_ready, !busy.q);
    m.assign(done, done_q.q);
    m.assign(rdata, rsh.q);
    m.assign(mdc, mdc_q.q);
    m.assign(mdio_o, out.q);
    m.assign(mdio_oe, oe.q);
    m.finish()
}
