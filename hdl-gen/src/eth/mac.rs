//! `eth_mac_rgmii_t<tx_buf>_r<rx_buf>[_dt<tx_delay>][_dr<rx_delay>]`: the 1 Gb/s RGMII MAC. The
//! contract is in `super` (the module documentation of `eth`).

use super::{MacParams, CDC_DEPTH, IFG_BYTES, MAX_FRAME, MIN_FRAME};
use crate::blocks::{async_fifo::async_fifo, crc, ecp5, fifo::fifo};
use hdl_builder::prelude::*;
use hdl_builder::Errors;
use std::rc::Rc;

/// The module name for a parameter set.
pub fn module_name(p: &MacParams) -> String {
    let mut n = format!("eth_mac_rgmii_t{}_r{}", p.tx_buf, p.rx_buf);
    if p.tx_delay != 0 {
        n.push_str(&format!("_dt{}", p.tx_delay));
    }
    if p.rx_delay != 0 {
        n.push_str(&format!("_dr{}", p.rx_delay));
    }
    n
}

/// The CRC-32 register (`crc_o` of the stdlib CRC block) after a frame and its own FCS: the
/// residue every good frame leaves (the FCS makes the running value `crc32_le`'s DEBB20E3h).
pub const FCS_RESIDUE: u64 = 0x2144_df1c;

/// Receive status carried with each frame's last entry across the clock domains.
const ST_OK: u64 = 0;
const ST_CTL: u64 = 1;
const ST_OVERSIZE: u64 = 2;
const ST_RUNT: u64 = 3;
const ST_FCS: u64 = 4;
const ST_OVERFLOW: u64 = 5;

/// Builds the MAC for `p` (see the contract in `super`).
pub fn eth_mac_rgmii(p: &MacParams, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let name = module_name(p);
    if p.tx_buf < 2
        || p.rx_buf < 4
        || !p.rx_buf.is_power_of_two()
        || p.tx_delay > 127
        || p.rx_delay > 127
    {
        return Err(Errors::invalid(
            &name,
            format!(
                "{name}: tx_buf {} must be at least 2, rx_buf {} a power of two of at least 4, the delays {} and {} at most 127 DELAYG steps",
                p.tx_buf, p.rx_buf, p.tx_delay, p.rx_delay
            ),
        ));
    }
    let tx_cdc = async_fifo(73, CDC_DEPTH, reset)?;
    let rx_cdc = async_fifo(76, CDC_DEPTH, reset)?;
    let tx_buf = fifo(73, p.tx_buf, true, reset)?;
    let crc8 = crc::crc(&crc::CRC32, 8, reset)?;
    let oddr = ecp5::oddrx1f()?;
    let iddr = ecp5::iddrx1f()?;
    let delay = ecp5::delayg()?;

    let mut m = ModuleBuilder::with_reset(&name, reset);
    m.doc("1 Gb/s RGMII MAC: AXI4-Stream frames without FCS on the core clock, RGMII pins through");
    m.doc("ODDRX1F/IDDRX1F. TX: preamble, SFD, padding to 60 bytes, FCS, 12-byte gap; a frame");
    m.doc(&format!(
        "starts only once whole in the {}-beat TX buffer. RX: preamble and SFD stripped, FCS checked",
        p.tx_buf
    ));
    m.doc(&format!(
        "and stripped; RX_ER, oversize (> {MAX_FRAME}), runt (< {MIN_FRAME}) and bad-FCS frames dropped and"
    ));
    m.doc(&format!(
        "counted; good frames committed whole to an {}-beat buffer, or dropped as overflow.",
        p.rx_buf
    ));
    m.doc(
        "clk_rx_i is the PHY's RXC; the core clock must be at least half of it. Assert the three",
    );
    m.doc("resets together. Contract: hdl-gen/src/eth/mod.rs.");
    let core = m.default_domain();
    let tx = m.domain("tx");
    let rx = m.domain("rx");
    m.clock();
    m.domain_clock(tx);
    m.domain_clock(rx);
    m.reset();
    m.domain_reset(tx);
    m.domain_reset(rx);

    m.group("frames to the wire (core clock)");
    let s_data = m.input("s_axis_tdata_i", 64);
    let s_keep = m.input("s_axis_tkeep_i", 8);
    let s_last = m.input("s_axis_tlast_i", 1);
    let s_valid = m.input("s_axis_tvalid_i", 1);
    let s_ready = m.output("s_axis_tready_o", 1);
    m.group("frames from the wire (core clock)");
    let m_data = m.output("m_axis_tdata_o", 64);
    let m_keep = m.output("m_axis_tkeep_o", 8);
    let m_last = m.output("m_axis_tlast_o", 1);
    m.comment(
        m_last,
        "frames without FCS; only frames that passed every check",
    );
    let m_valid = m.output("m_axis_tvalid_o", 1);
    let m_ready = m.input("m_axis_tready_i", 1);
    m.group("RGMII transmit pins (TXC forwarded from clk_tx_i)");
    let txc = m.output("rgmii_txc_o", 1);
    let txd = m.output("rgmii_txd_o", 4);
    let tx_ctl = m.output("rgmii_tx_ctl_o", 1);
    m.group("RGMII receive pins (RXC is clk_rx_i)");
    let rxd = m.input_in(rx, "rgmii_rxd_i", 4);
    let rx_ctl = m.input_in(rx, "rgmii_rx_ctl_i", 1);
    m.group("counters (core clock), wrapping");
    let counter_names = [
        ("tx_frames", "frames taken from s_axis"),
        ("rx_frames", "frames delivered on m_axis"),
        ("rx_err_ctl", "frames with RX_ER"),
        ("rx_err_oversize", "frames over 1518 bytes"),
        ("rx_err_runt", "frames under 64 bytes"),
        ("rx_err_fcs", "frames with a bad FCS"),
        (
            "rx_err_overflow",
            "good frames the RX buffer could not hold",
        ),
    ];
    let mut counters = Vec::new();
    for (n, what) in counter_names {
        let o = m.output(&format!("{n}_o"), 32);
        m.comment(o, what);
        let r = m.reg(n, 32, 0);
        m.assign(o, r.q);
        counters.push(r);
    }

    // ---------------------------------------------------------------- transmit, core side
    let s_fire = m.net("s_fire", s_valid & s_ready);
    let u_txc = m.instance("u_tx_cdc", &tx_cdc);
    m.bind_domain(u_txc, "wr", core);
    m.bind_domain(u_txc, "rd", tx);
    m.bind(u_txc, "s_valid_i", s_valid);
    m.bind(
        u_txc,
        "s_data_i",
        cat([s_last.ex(), s_keep.ex(), s_data.ex()]),
    );
    m.bind_out_to(u_txc, "s_ready_o", s_ready);
    m.assign(counters[0].d, counters[0].q + (s_fire & s_last).zext(32));

    // ---------------------------------------------------------------- transmit, tx domain
    let cdc_valid = m.bind_out(u_txc, "m_valid_o");
    let cdc_data = m.bind_out(u_txc, "m_data_o");
    let u_buf = m.instance("u_tx_buf", &tx_buf);
    m.bind_domain(u_buf, "", tx);
    m.bind(u_buf, "s_valid_i", cdc_valid);
    m.bind(u_buf, "s_data_i", cdc_data);
    let buf_s_ready = m.bind_out(u_buf, "s_ready_o");
    m.bind(u_txc, "m_ready_i", buf_s_ready);
    let head_valid = m.bind_out(u_buf, "m_valid_o");
    let head = m.bind_out(u_buf, "m_data_o");
    let buf_count = m.bind_out(u_buf, "count_o");
    m.unused("tx_buf_count", buf_count);
    let pop = m.wire("tx_pop", 1);
    m.bind(u_buf, "m_ready_i", pop);
    let head_last = m.net("head_last", head.bit(72));
    let head_keep = m.net("head_keep", head.slice(71, 64));
    // Every beat holds its lane 0 (the contract): only the lanes after it say where it ends.
    m.unused("head_keep0", head_keep.bit(0));

    let fw = clog2(u64::from(p.tx_buf) + 1);
    let frames = m.reg_in(tx, "tx_frames_held", fw, 0);
    m.comment(
        frames.q,
        "whole frames in the TX buffer (last beats in, not yet sent)",
    );
    let fin = m.net("tx_frame_in", cdc_valid & buf_s_ready & cdc_data.bit(72));
    let fout = m.net("tx_frame_out", pop & head_last);
    m.assign(frames.d, frames.q + fin.zext(fw) - fout.zext(fw));
    let go = m.net("tx_go", head_valid & (frames.q.ne(0) | !buf_s_ready));

    let txs = m.reg_in(tx, "txs", 3, 0);
    m.comment(txs.q, "0 idle/gap, 1 preamble, 2 data, 3 pad, 4 FCS");
    let cnt = m.reg_in(tx, "tx_cnt", 4, 0);
    m.comment(cnt.q, "preamble byte, FCS byte or gap bytes left");
    let lane = m.reg_in(tx, "tx_lane", 3, 0);
    let len = m.reg_in(tx, "tx_len", 6, 0);
    m.comment(len.q, "bytes of data and pad sent, up to 60");
    let txd_q = m.reg_in(tx, "txd", 8, 0);
    let txen_q = m.reg_in(tx, "tx_en", 1, 0);
    m.comment(
        txd_q.q,
        "the byte on the pins next TXC cycle (ODDRX1F samples it)",
    );

    let byte = m.wire("tx_byte", 8);
    let last_in_beat = m.wire("tx_last_in_beat", 1);
    m.comb(|c| {
        c.set(byte, 0);
        c.set(last_in_beat, 1);
        c.case(lane.q, |k| {
            for i in 0..8u32 {
                k.arm(lit(3, u128::from(i)), |c| {
                    c.set(byte, head.slice(8 * i + 7, 8 * i));
                    if i < 7 {
                        c.set(last_in_beat, !head_keep.bit(i + 1));
                    }
                });
            }
            k.default(|_| {});
        });
    });
    let crc_o = m.wire("tx_crc", 32);
    let fcs_byte = m.wire("tx_fcs_byte", 8);
    m.comb(|c| {
        c.set(fcs_byte, crc_o.slice(7, 0));
        c.case(cnt.q.slice(1, 0), |k| {
            for i in 1..4u32 {
                k.arm(lit(2, u128::from(i)), |c| {
                    c.set(fcs_byte, crc_o.slice(8 * i + 7, 8 * i))
                });
            }
            k.default(|_| {});
        });
    });
    let in_data = m.net("tx_in_data", txs.q.eq(2));
    let in_pad = m.net("tx_in_pad", txs.q.eq(3));
    let len_next = m.net("tx_len_next", mux(len.q.eq(60), len.q, len.q + 1));
    m.comb(|c| {
        c.set(txs.d, txs.q);
        c.set(cnt.d, cnt.q);
        c.set(lane.d, lane.q);
        c.set(len.d, len.q);
        c.set(txd_q.d, 0);
        c.set(txen_q.d, 0);
        c.set(pop, 0);
        c.case(txs.q, |k| {
            k.arm(lit(3, 0), |c| {
                c.if_(cnt.q.ne(0), |c| c.set(cnt.d, cnt.q - 1))
                    .else_if(go, |c| {
                        c.set(txs.d, 1);
                        c.set(cnt.d, 1);
                        c.set(txd_q.d, 0x55);
                        c.set(txen_q.d, 1);
                    });
            });
            k.arm(lit(3, 1), |c| {
                c.set(txen_q.d, 1);
                c.set(cnt.d, cnt.q + 1);
                c.if_(cnt.q.eq(7), |c| {
                    c.set(txd_q.d, 0xd5);
                    c.set(txs.d, 2);
                    c.set(lane.d, 0);
                    c.set(len.d, 0);
                })
                .else_(|c| c.set(txd_q.d, 0x55));
            });
            k.arm(lit(3, 2), |c| {
                c.set(txen_q.d, 1);
                c.set(txd_q.d, byte);
                c.set(len.d, len_next);
                c.set(lane.d, lane.q + 1);
                c.if_(last_in_beat, |c| {
                    c.set(pop, 1);
                    c.set(lane.d, 0);
                    c.if_(head_last, |c| {
                        c.set(cnt.d, 0);
                        c.set(txs.d, mux(len_next.lt(60), lit(3, 3), lit(3, 4)));
                    });
                });
            });
            k.arm(lit(3, 3), |c| {
                c.set(txen_q.d, 1);
                c.set(len.d, len_next);
                c.if_(len_next.eq(60), |c| {
                    c.set(cnt.d, 0);
                    c.set(txs.d, 4);
                });
            });
            k.arm(lit(3, 4), |c| {
                c.set(txen_q.d, 1);
                c.set(txd_q.d, fcs_byte);
                c.set(cnt.d, cnt.q + 1);
                c.if_(cnt.q.eq(3), |c| {
                    c.set(txs.d, 0);
                    c.set(cnt.d, u64::from(IFG_BYTES));
                });
            });
            k.default(|c| c.set(txs.d, 0));
        });
    });
    let u_tcrc = m.instance("u_tx_crc", &crc8);
    m.bind_domain(u_tcrc, "", tx);
    m.bind(u_tcrc, "start_i", in_data & len.q.eq(0));
    m.bind(u_tcrc, "valid_i", in_data | in_pad);
    m.bind(u_tcrc, "data_i", mux(in_data, byte, lit(8, 0)));
    m.bind(u_tcrc, "keep_i", lit(1, 1));
    m.bind_out_to(u_tcrc, "crc_o", crc_o);

    // The pins: each bit through an ODDRX1F (low nibble while TXC is high, high nibble while it
    // is low; TX_CTL carries TX_EN both halves, as TX_ER is never set), TXC itself as 1/0.
    let pin_out =
        |m: &mut ModuleBuilder, name: &str, d0: Expr, d1: Expr, delay_steps: u32| -> Sig {
            let u = m.instance(&format!("u_oddr_{name}"), &oddr);
            m.bind_domain(u, "SCLK", tx);
            m.bind(u, "D0", d0);
            m.bind(u, "D1", d1);
            m.bind(u, "RST", lit(1, 0));
            let q = m.bind_out(u, "Q");
            if delay_steps == 0 {
                return q;
            }
            let d = m.instance(&format!("u_delay_{name}"), &delay);
            m.set_param(d, "DEL_VALUE", i64::from(delay_steps));
            m.bind(d, "A", q);
            m.bind_out(d, "Z")
        };
    let txc_pin = pin_out(&mut m, "txc", lit(1, 1), lit(1, 0), 0);
    m.assign(txc, txc_pin);
    let mut bits = Vec::new();
    for i in 0..4u32 {
        bits.push(pin_out(
            &mut m,
            &format!("txd{i}"),
            txd_q.q.bit(i),
            txd_q.q.bit(4 + i),
            p.tx_delay,
        ));
    }
    m.assign(txd, cat(bits.iter().rev()));
    let ctl_pin = pin_out(&mut m, "tx_ctl", txen_q.q.ex(), txen_q.q.ex(), p.tx_delay);
    m.assign(tx_ctl, ctl_pin);

    // ---------------------------------------------------------------- receive, rx domain
    let mut q0s = Vec::new();
    let mut q1s = Vec::new();
    for (i, pin) in [rxd.bit(0), rxd.bit(1), rxd.bit(2), rxd.bit(3), rx_ctl.ex()]
        .into_iter()
        .enumerate()
    {
        let pname = if i < 4 {
            format!("rxd{i}")
        } else {
            "rx_ctl".to_string()
        };
        let d = if p.rx_delay == 0 {
            pin
        } else {
            let u = m.instance(&format!("u_delay_{pname}"), &delay);
            m.set_param(u, "DEL_VALUE", i64::from(p.rx_delay));
            m.bind(u, "A", pin);
            m.bind_out(u, "Z").ex()
        };
        let u = m.instance(&format!("u_iddr_{pname}"), &iddr);
        m.bind_domain(u, "SCLK", rx);
        m.bind(u, "D", d);
        m.bind(u, "RST", lit(1, 0));
        q0s.push(m.bind_out(u, "Q0"));
        q1s.push(m.bind_out(u, "Q1"));
    }
    let rise = m.reg_in(rx, "rx_rise", 5, 0);
    m.comment(
        rise.q,
        "RX_CTL and RXD at the last rising edge of RXC (IDDRX1F Q0)",
    );
    m.assign(rise.d, cat(q0s.iter().rev()));
    let fall = m.net("rx_fall", cat(q1s.iter().rev()));
    m.comment(
        fall,
        "RX_CTL and RXD at the falling edge after it (IDDRX1F Q1)",
    );
    let in_byte = m.reg_in(rx, "rx_byte", 8, 0);
    let in_dv = m.reg_in(rx, "rx_dv", 1, 0);
    let in_er = m.reg_in(rx, "rx_er", 1, 0);
    m.assign(in_byte.d, cat([fall.slice(3, 0), rise.q.slice(3, 0)]));
    m.assign(in_dv.d, rise.q.bit(4));
    m.assign(in_er.d, rise.q.bit(4) ^ fall.bit(4));

    let rxs = m.reg_in(rx, "rxs", 2, 0);
    m.comment(
        rxs.q,
        "0 hunting the SFD, 1 in a frame, 2 skipping a frame without SFD",
    );
    let rcnt = m.reg_in(rx, "rx_cnt", 11, 0);
    m.comment(
        rcnt.q,
        "bytes of the frame after the SFD, FCS included (saturates)",
    );
    let er_seen = m.reg_in(rx, "rx_er_seen", 1, 0);
    let dl = m.reg_in(rx, "rx_delay_line", 32, 0);
    m.comment(dl.q, "the last four bytes: the FCS once RX_DV falls");
    let dl_n = m.reg_in(rx, "rx_delay_n", 3, 0);
    let beat = m.reg_in(rx, "rx_beat", 64, 0);
    m.comment(
        beat.q,
        "bytes enter at the top: after k bytes, the first is at [71-8k:64-8k]",
    );
    let lanes = m.reg_in(rx, "rx_lanes", 4, 0);
    let lost = m.reg_in(rx, "rx_lost", 1, 0);
    m.comment(
        lost.q,
        "an entry was refused by the CDC FIFO (core clock too slow)",
    );
    let rcrc = m.wire("rx_crc", 32);

    let in_frame = m.net("rx_in_frame", rxs.q.eq(1));
    let data_byte = m.net("rx_data_byte", in_frame & in_dv.q);
    let end = m.net("rx_end", in_frame & !in_dv.q);
    let byte_out = m.net("rx_byte_out", data_byte & dl_n.q.eq(4));
    m.comment(
        byte_out,
        "a byte four bytes behind the newest: not part of the FCS",
    );
    let push_full = m.net("rx_push_full", byte_out & lanes.q.eq(8));
    let status = m.wire("rx_status", 3);
    m.comb(|c| {
        c.set(status, ST_OK);
        c.if_(lost.q, |c| c.set(status, ST_OVERFLOW))
            .else_if(er_seen.q, |c| c.set(status, ST_CTL))
            .else_if(rcnt.q.gt(u64::from(MAX_FRAME)), |c| {
                c.set(status, ST_OVERSIZE)
            })
            .else_if(rcnt.q.lt(u64::from(MIN_FRAME)), |c| c.set(status, ST_RUNT))
            .else_if(rcrc.ne(FCS_RESIDUE), |c| c.set(status, ST_FCS));
    });
    // The last beat, its bytes moved down to lane 0.
    let end_data = m.wire("rx_end_data", 64);
    let end_keep = m.wire("rx_end_keep", 8);
    m.comb(|c| {
        c.set(end_data, beat.q);
        c.set(end_keep, 0xff);
        c.case(lanes.q, |k| {
            for n in 0..8u32 {
                k.arm(lit(4, u128::from(n)), |c| {
                    let v: Expr = if n == 0 {
                        lit(64, 0)
                    } else {
                        (beat.q >> (64 - 8 * n)).ex()
                    };
                    c.set(end_data, v);
                    c.set(end_keep, lit(8, (1u128 << n) - 1));
                });
            }
            k.default(|_| {});
        });
    });
    let push = m.net("rx_push", push_full | end);
    let entry = m.net(
        "rx_entry",
        mux(
            end,
            cat([status.ex(), lit(1, 1), end_keep.ex(), end_data.ex()]),
            cat([lit(3, ST_OK as u128), lit(1, 0), lit(8, 0xff), beat.q.ex()]),
        ),
    );
    let u_rxc = m.instance("u_rx_cdc", &rx_cdc);
    m.bind_domain(u_rxc, "wr", rx);
    m.bind_domain(u_rxc, "rd", core);
    m.bind(u_rxc, "s_valid_i", push);
    m.bind(u_rxc, "s_data_i", entry);
    let cdc_ready = m.bind_out(u_rxc, "s_ready_o");
    let refused = m.net("rx_refused", push & !cdc_ready);
    m.comb(|c| {
        c.set(rxs.d, rxs.q);
        c.set(rcnt.d, rcnt.q);
        c.set(er_seen.d, er_seen.q);
        c.set(dl.d, dl.q);
        c.set(dl_n.d, dl_n.q);
        c.set(beat.d, beat.q);
        c.set(lanes.d, lanes.q);
        c.set(lost.d, lost.q | refused);
        c.case(rxs.q, |k| {
            k.arm(lit(2, 0), |c| {
                c.if_(in_dv.q & in_byte.q.eq(0xd5), |c| {
                    c.set(rxs.d, 1);
                    c.set(rcnt.d, 0);
                    c.set(er_seen.d, 0);
                    c.set(dl_n.d, 0);
                    c.set(lanes.d, 0);
                })
                .else_if(in_dv.q & in_byte.q.ne(0x55), |c| c.set(rxs.d, 2));
            });
            k.arm(lit(2, 1), |c| {
                c.if_(in_dv.q, |c| {
                    c.set(rcnt.d, mux(rcnt.q.eq(2047), rcnt.q, rcnt.q + 1));
                    c.set(er_seen.d, er_seen.q | in_er.q);
                    c.set(dl.d, cat([dl.q.slice(23, 0), in_byte.q.ex()]));
                    c.set(dl_n.d, mux(dl_n.q.eq(4), dl_n.q, dl_n.q + 1));
                    c.if_(byte_out, |c| {
                        c.set(beat.d, cat([dl.q.slice(31, 24), beat.q.slice(63, 8)]));
                        c.set(lanes.d, mux(lanes.q.eq(8), lit(4, 1), lanes.q + 1));
                    });
                })
                .else_(|c| {
                    c.set(rxs.d, 0);
                    // The end entry carries the loss; once it is in, the next frame is clean.
                    c.set(lost.d, refused);
                });
            });
            k.arm(lit(2, 2), |c| {
                c.if_(!in_dv.q, |c| c.set(rxs.d, 0));
            });
            k.default(|c| c.set(rxs.d, 0));
        });
    });
    let u_rcrc = m.instance("u_rx_crc", &crc8);
    m.bind_domain(u_rcrc, "", rx);
    m.bind(u_rcrc, "start_i", data_byte & rcnt.q.eq(0));
    m.bind(u_rcrc, "valid_i", data_byte);
    m.bind(u_rcrc, "data_i", in_byte.q);
    m.bind(u_rcrc, "keep_i", lit(1, 1));
    m.bind_out_to(u_rcrc, "crc_o", rcrc);

    // ---------------------------------------------------------------- receive, core side
    m.bind(u_rxc, "m_ready_i", lit(1, 1));
    let e_valid = m.bind_out(u_rxc, "m_valid_o");
    let e = m.bind_out(u_rxc, "m_data_o");
    let e_status = m.net("e_status", e.slice(75, 73));
    let e_last = m.net("e_last", e.bit(72));
    let aw = clog2(u64::from(p.rx_buf));
    let pw = aw + 1;
    let wr = m.reg("rx_wr", pw, 0);
    m.comment(
        wr.q,
        "next buffer word to write (rewound to rx_commit_q when a frame is dropped)",
    );
    let commit = m.reg("rx_commit", pw, 0);
    m.comment(
        commit.q,
        "end of the last frame committed: the reader stops here",
    );
    let rd = m.reg("rx_rd", pw, 0);
    m.comment(rd.q, "words taken from m_axis");
    let dropping = m.reg("rx_dropping", 1, 0);
    m.comment(
        dropping.q,
        "the frame did not fit: its remaining entries are discarded",
    );
    let full = m.net(
        "rx_full",
        wr.q.slice(aw - 1, 0).eq(rd.q.slice(aw - 1, 0)) & (wr.q.bit(aw) ^ rd.q.bit(aw)),
    );
    let store = m.net("rx_store", e_valid & !dropping.q & !full);
    let e_end = m.net("rx_entry_end", e_valid & e_last);
    let good = m.net("rx_good", e_status.eq(ST_OK));
    let ram = m.memory("rx_ram", 73, u64::from(p.rx_buf));
    m.mem_write(ram, store, wr.q.slice(aw - 1, 0), e.slice(72, 0));
    m.comb(|c| {
        c.set(wr.d, wr.q);
        c.set(commit.d, commit.q);
        c.set(dropping.d, dropping.q);
        c.if_(store, |c| {
            c.set(wr.d, wr.q + 1);
            c.if_(e_last & good, |c| c.set(commit.d, wr.q + 1))
                .else_if(e_last, |c| c.set(wr.d, commit.q));
        })
        .else_if(e_valid, |c| {
            c.set(wr.d, commit.q);
            c.set(dropping.d, !e_last);
        });
    });
    let committed = m.net("rx_committed", store & e_last & good);
    let overflow = m.net(
        "rx_overflow",
        e_end & ((good & !store) | e_status.eq(ST_OVERFLOW)),
    );
    for (k, ev) in [
        (1usize, committed.ex()),
        (2, e_end & e_status.eq(ST_CTL)),
        (3, e_end & e_status.eq(ST_OVERSIZE)),
        (4, e_end & e_status.eq(ST_RUNT)),
        (5, e_end & e_status.eq(ST_FCS)),
        (6, overflow.ex()),
    ] {
        let r = &counters[k];
        m.assign(r.d, r.q + ev.zext(32));
    }
    let out_valid = m.reg("rx_out_valid", 1, 0);
    m.comment(
        out_valid.q,
        "m_axis (the buffer's read register) holds a word",
    );
    let mpop = m.net("rx_pop", out_valid.q & m_ready);
    let rd_next = m.net("rx_rd_next", rd.q + mpop.zext(pw));
    let avail = m.net("rx_avail", rd_next.ne(commit.q));
    let load = m.net("rx_load", (mpop | !out_valid.q) & avail);
    m.assign(rd.d, rd_next);
    m.assign(out_valid.d, load | (out_valid.q & !mpop));
    let word = m.mem_read(ram, load, rd_next.slice(aw - 1, 0));
    m.assign(m_valid, out_valid.q);
    m.assign(m_data, word.slice(63, 0));
    m.assign(m_keep, word.slice(71, 64));
    m.assign(m_last, word.bit(72));
    m.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::crc::{eval_update, CRC32};

    /// The residue: a frame followed by its own FCS (least significant byte first) leaves the
    /// CRC block's `crc_o` at [`FCS_RESIDUE`], whatever the frame.
    #[test]
    fn fcs_residue_is_the_crc_of_a_frame_and_its_fcs() {
        for frame in [&b"123456789"[..], &[0u8; 60][..], &[0xa5; 1514][..]] {
            let reg = eval_update(&CRC32, CRC32.register_init(), frame);
            let fcs = CRC32.finish(reg) as u32;
            let reg = eval_update(&CRC32, reg, &fcs.to_le_bytes());
            assert_eq!(CRC32.finish(reg), FCS_RESIDUE);
        }
    }

    #[test]
    fn bad_parameters_are_refused() {
        for p in [
            MacParams {
                rx_buf: 100,
                ..MacParams::default()
            },
            MacParams {
                tx_buf: 1,
                ..MacParams::default()
            },
            MacParams {
                tx_delay: 128,
                ..MacParams::default()
            },
        ] {
            assert!(eth_mac_rgmii(&p, ResetStyle::AsyncLow).is_err());
        }
    }
}
