//! AXI4-Lite address decoder: one AXI4-Lite slave port (firmware's view of the chip's CSRs)
//! fanned out to `N` AXI4-Lite register blocks by address.
//!
//! # Address map
//!
//! The address space is cut into `N` slots of `2^slot_bits` bytes, one per downstream block:
//! slave `i` owns the slot `[i << slot_bits, (i + 1) << slot_bits)`, and of it only its first
//! `2^windows[i]` bytes (its window, `windows[i] <= slot_bits`) reach it. So an address `a`
//! goes to slave `i = a >> slot_bits` when `i < N` and `a % 2^slot_bits < 2^windows[i]`, and
//! the slave sees the offset `a % 2^windows[i]` on its `windows[i]`-bit address. Any other
//! address (beyond the last slot, or in a slot past its window) answers DECERR (2'b11),
//! reaches no slave, changes nothing, and reads 0. The upstream address is
//! `slot_bits + clog2(N)` bits wide (at least `slot_bits + 1`).
//!
//! # Protocol and latency
//!
//! Upstream (`s_axil_*`, named like the `regs.rs` CSR modules, without `awprot`/`arprot`):
//! AW and W are accepted independently (`awready` and `wready` come from flip-flops and are
//! high while the decoder waits for that half of a write); once both are in, the write is
//! decoded and carried out. One write and one read are in flight at a time; reads and writes
//! are independent of each other.
//!
//! Downstream (`m<i>_axil_*`, the same names with the directions flipped, address
//! `windows[i]` bits, so it binds straight onto block `i`'s `s_axil_*`): `awvalid` and `wvalid`
//! rise together in the same cycle (the CSR modules accept a write only with both) and each
//! stays up, with its payload, until its own handshake; `bready` is high while the decoder
//! waits for the response. A read raises `arvalid` until its handshake, then `rready` until the
//! data. The slave's response and data are registered and passed back unchanged.
//!
//! Every output is driven from flip-flops (no combinational path from any input to any output),
//! so the decoder adds no path from firmware to a block. Latency with a slave that answers in
//! the cycle after it accepts (the CSR modules): a write whose AW and W are accepted in cycle
//! `t` is presented downstream in `t + 1` and answered upstream in `t + 3`; a read accepted
//! in `t` likewise in `t + 1` and `t + 3`. A decode error is answered in `t + 1`. The next
//! write (read) can be accepted in the cycle after its response's handshake.

use hdl_builder::prelude::*;
use hdl_builder::Errors;
use std::rc::Rc;

/// AXI response OKAY.
pub const RESP_OKAY: u64 = 0b00;
/// AXI response DECERR: the address decodes to no slave.
pub const RESP_DECERR: u64 = 0b11;

/// The module name: `axil_decoder_a<slot_bits>_w<w0>_<w1>_...`.
pub fn module_name(slot_bits: u32, windows: &[u32]) -> String {
    let ws: Vec<String> = windows.iter().map(|w| w.to_string()).collect();
    format!("axil_decoder_a{slot_bits}_w{}", ws.join("_"))
}

/// Width of the upstream address for `n` slaves of `2^slot_bits` bytes each.
pub fn addr_width(slot_bits: u32, n: usize) -> u32 {
    slot_bits + clog2(n as u64)
}

/// The AXI4-Lite signals as the slave sees them: (name, width, is an input of the slave), the
/// address width left as 0 (`awaddr`, `araddr` take the port's own width).
const AXIL_SLAVE: &[(&str, u32, bool)] = &[
    ("awvalid", 1, true),
    ("awready", 1, false),
    ("awaddr", 0, true),
    ("wvalid", 1, true),
    ("wready", 1, false),
    ("wdata", 32, true),
    ("wstrb", 4, true),
    ("bvalid", 1, false),
    ("bready", 1, true),
    ("bresp", 2, false),
    ("arvalid", 1, true),
    ("arready", 1, false),
    ("araddr", 0, true),
    ("rvalid", 1, false),
    ("rready", 1, true),
    ("rdata", 32, false),
    ("rresp", 2, false),
];

/// One AXI4-Lite port's signals, by name.
struct Port(Vec<(&'static str, Sig)>);

impl Port {
    fn get(&self, name: &str) -> Sig {
        self.0
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| *s)
            .expect("an AXI4-Lite signal")
    }
}

/// Declares an AXI4-Lite port `<prefix>_axil_*` with `addr` address bits, as a slave
/// (`slave = true`: the upstream port) or as a master (a downstream port).
fn axil_port(m: &mut ModuleBuilder, prefix: &str, addr: u32, slave: bool) -> Port {
    let mut sigs = Vec::new();
    for &(name, width, slave_in) in AXIL_SLAVE {
        let width = if width == 0 { addr } else { width };
        let input = slave_in == slave;
        let port = format!("{prefix}_axil_{name}_{}", if input { "i" } else { "o" });
        let s = if input {
            m.input(&port, width)
        } else {
            m.output(&port, width)
        };
        sigs.push((name, s));
    }
    Port(sigs)
}

/// The decoder for slots of `2^slot_bits` bytes, slave `i` answering the first
/// `2^windows[i]` bytes of slot `i`; named by [`module_name`]. The address rule, protocol and
/// latency are in the [module documentation](self).
///
/// Ports: `clk_i`, the reset, the upstream slave `s_axil_*` (address
/// [`addr_width`]`(slot_bits, windows.len())` bits), then per slave `i` the master
/// `m<i>_axil_*` (address `windows[i]` bits). Refused: no slaves, a window of 0 bits, a window
/// wider than its slot, `slot_bits` above 32.
pub fn axil_decoder(
    slot_bits: u32,
    windows: &[u32],
    reset: ResetStyle,
) -> Result<Rc<Module>, Errors> {
    let name = module_name(slot_bits, windows);
    if windows.is_empty() {
        return Err(Errors::invalid(&name, "a decoder needs at least one slave"));
    }
    if !(1..=32).contains(&slot_bits) {
        return Err(Errors::invalid(
            &name,
            format!("slot of {slot_bits} address bits: it must be 1 to 32"),
        ));
    }
    if let Some((i, w)) = windows
        .iter()
        .enumerate()
        .find(|(_, &w)| w == 0 || w > slot_bits)
    {
        return Err(Errors::invalid(
            &name,
            format!(
                "slave {i}: a window of {w} address bits in a slot of {slot_bits}: it must be 1 to {slot_bits}"
            ),
        ));
    }
    let n = windows.len();
    let aw = addr_width(slot_bits, n);
    let sel_w = aw - slot_bits;
    let max_w = *windows.iter().max().expect("at least one window");

    let mut m = ModuleBuilder::with_reset(&name, reset);
    m.doc(&format!(
        "AXI4-Lite address decoder: one slave port to {n} AXI4-Lite slaves. Slave i owns the slot"
    ));
    m.doc(&format!(
        "[i << {slot_bits}, (i + 1) << {slot_bits}); of it only the first 2^windows[i] bytes reach it,"
    ));
    let ws: Vec<String> = windows.iter().map(|w| w.to_string()).collect();
    m.doc(&format!(
        "windows = [{}], at the offset within its slot. Any other address answers DECERR,",
        ws.join(", ")
    ));
    m.doc(
        "reaches no slave and reads 0. Downstream AWVALID and WVALID rise together. One write and",
    );
    m.doc(
        "one read in flight; every output comes from a flip-flop. With a slave answering the cycle",
    );
    m.doc("after it accepts, a response is 3 cycles after its upstream handshake (DECERR: 1).");
    m.clock();
    m.reset();
    m.group("AXI4-Lite slave (firmware)");
    let s = axil_port(&mut m, "s", aw, true);
    m.comment(s.get("awaddr"), "{slave, offset in its slot}");
    m.comment(s.get("araddr"), "{slave, offset in its slot}");
    let mut ports = Vec::new();
    for (i, &w) in windows.iter().enumerate() {
        let base = (i as u64) << slot_bits;
        m.group(&format!(
            "AXI4-Lite master {i}: 0x{base:x} to 0x{:x}",
            base + (1u64 << w) - 1
        ));
        ports.push(axil_port(&mut m, &format!("m{i}"), w, false));
    }

    // The decode of an upstream address: the slot index, and whether it falls in a window.
    let decode = |m: &mut ModuleBuilder, ch: &str, addr: Sig| -> Sig {
        let idx = addr.slice(aw - 1, slot_bits);
        let terms: Vec<Expr> = windows
            .iter()
            .enumerate()
            .map(|(i, &w)| {
                let slot = idx.eq(i as u64);
                if w < slot_bits {
                    slot & !addr.slice(slot_bits - 1, w).any()
                } else {
                    slot
                }
            })
            .collect();
        let hit = terms
            .into_iter()
            .reduce(|a, b| a | b)
            .expect("at least one slave");
        let hit = m.net(&format!("{ch}_hit"), hit);
        m.comment(hit, "the address is in some slave's window");
        hit
    };

    // ---------------------------------------------------------------- write channel
    let wst = m.enum_type(
        "wr_state",
        &["WrCollect", "WrIssue", "WrWaitB", "WrRespond"],
    );
    let wr_state = m.reg_enum("wr_state", &wst, wst.item("WrCollect"));
    let aw_full = m.reg("aw_full", 1, 0);
    m.comment(aw_full.q, "the write's address is in (collecting)");
    let w_full = m.reg("w_full", 1, 0);
    m.comment(w_full.q, "the write's data is in (collecting)");
    let aw_hit_r = m.reg("aw_hit", 1, 0);
    let wr_sel = m.reg("wr_sel", sel_w, 0);
    m.comment(wr_sel.q, "the slave of the write in flight");
    let wr_off = m.reg_noreset("wr_off", max_w);
    m.comment(wr_off.q, "the write's offset in its slot");
    let wr_data = m.reg_noreset("wr_data", 32);
    let wr_strb = m.reg_noreset("wr_strb", 4);
    let aw_pend = m.reg("aw_pend", 1, 0);
    m.comment(aw_pend.q, "AWVALID to the selected slave");
    let w_pend = m.reg("w_pend", 1, 0);
    m.comment(w_pend.q, "WVALID to the selected slave");
    let bresp = m.reg("bresp", 2, 0);

    let in_collect = m.net("wr_collect", wr_state.q.eq(wst.item("WrCollect")));
    let in_wait_b = m.net("wr_wait_b", wr_state.q.eq(wst.item("WrWaitB")));
    let in_wr_respond = m.net("wr_respond", wr_state.q.eq(wst.item("WrRespond")));
    m.assign(s.get("awready"), in_collect & !aw_full.q);
    m.assign(s.get("wready"), in_collect & !w_full.q);
    m.assign(s.get("bvalid"), in_wr_respond);
    m.assign(s.get("bresp"), bresp.q);
    let aw_take = m.net("aw_take", s.get("awvalid") & s.get("awready"));
    let w_take = m.net("w_take", s.get("wvalid") & s.get("wready"));
    let aw_hit = decode(&mut m, "aw", s.get("awaddr"));
    let wr_go = m.net("wr_go", (aw_full.q | aw_take) & (w_full.q | w_take));
    m.comment(
        wr_go,
        "both halves of the write are in by the end of this cycle",
    );
    let wr_hit = m.net("wr_hit", mux(aw_full.q, aw_hit_r.q, aw_hit));

    // The selected slave's side of the write, muxed by `wr_sel`.
    let sel_awready = m.wire("sel_awready", 1);
    let sel_wready = m.wire("sel_wready", 1);
    let sel_bvalid = m.wire("sel_bvalid", 1);
    let sel_bresp = m.wire("sel_bresp", 2);
    m.comb(|c| {
        c.set(sel_awready, false);
        c.set(sel_wready, false);
        c.set(sel_bvalid, false);
        c.set(sel_bresp, 0u64);
        c.case(wr_sel.q, |k| {
            for (i, p) in ports.iter().enumerate() {
                k.arm(i as u64, |c| {
                    c.set(sel_awready, p.get("awready"));
                    c.set(sel_wready, p.get("wready"));
                    c.set(sel_bvalid, p.get("bvalid"));
                    c.set(sel_bresp, p.get("bresp"));
                });
            }
        });
    });
    for (i, p) in ports.iter().enumerate() {
        let me = wr_sel.q.eq(i as u64);
        m.assign(p.get("awvalid"), aw_pend.q & me.clone());
        m.assign(p.get("awaddr"), wr_off.q.slice(windows[i] - 1, 0));
        m.assign(p.get("wvalid"), w_pend.q & me.clone());
        m.assign(p.get("wdata"), wr_data.q);
        m.assign(p.get("wstrb"), wr_strb.q);
        m.assign(p.get("bready"), in_wait_b & me);
    }
    let aw_done = m.net("aw_done", !aw_pend.q | sel_awready);
    m.comment(aw_done, "no AWVALID left up after this cycle");
    let w_done = m.net("w_done", !w_pend.q | sel_wready);

    m.comb(|c| {
        c.set(wr_state.d, wr_state.q);
        c.set(aw_full.d, aw_full.q);
        c.set(w_full.d, w_full.q);
        c.set(aw_hit_r.d, aw_hit_r.q);
        c.set(wr_sel.d, wr_sel.q);
        c.set(wr_off.d, wr_off.q);
        c.set(wr_data.d, wr_data.q);
        c.set(wr_strb.d, wr_strb.q);
        c.set(aw_pend.d, aw_pend.q);
        c.set(w_pend.d, w_pend.q);
        c.set(bresp.d, bresp.q);
        c.if_(aw_take, |c| {
            c.set(aw_full.d, true);
            c.set(aw_hit_r.d, aw_hit);
            c.set(wr_sel.d, s.get("awaddr").slice(aw - 1, slot_bits));
            c.set(wr_off.d, s.get("awaddr").slice(max_w - 1, 0));
        });
        c.if_(w_take, |c| {
            c.set(w_full.d, true);
            c.set(wr_data.d, s.get("wdata"));
            c.set(wr_strb.d, s.get("wstrb"));
        });
        c.case(wr_state.q, |k| {
            k.arm(wst.item("WrCollect"), |c| {
                c.if_(wr_go, |c| {
                    c.set(aw_full.d, false);
                    c.set(w_full.d, false);
                    c.if_(wr_hit, |c| {
                        c.set(aw_pend.d, true);
                        c.set(w_pend.d, true);
                        c.set(wr_state.d, wst.item("WrIssue"));
                    })
                    .else_(|c| {
                        c.set(bresp.d, RESP_DECERR);
                        c.set(wr_state.d, wst.item("WrRespond"));
                    });
                });
            });
            k.arm(wst.item("WrIssue"), |c| {
                c.set(aw_pend.d, !aw_done);
                c.set(w_pend.d, !w_done);
                c.if_(aw_done & w_done, |c| c.set(wr_state.d, wst.item("WrWaitB")));
            });
            k.arm(wst.item("WrWaitB"), |c| {
                c.if_(sel_bvalid, |c| {
                    c.set(bresp.d, sel_bresp);
                    c.set(wr_state.d, wst.item("WrRespond"));
                });
            });
            k.arm(wst.item("WrRespond"), |c| {
                c.if_(s.get("bready"), |c| {
                    c.set(wr_state.d, wst.item("WrCollect"))
                });
            });
            k.default(|c| c.set(wr_state.d, wst.item("WrCollect")));
        });
    });

    // ---------------------------------------------------------------- read channel
    let rst_ty = m.enum_type("rd_state", &["RdIdle", "RdIssue", "RdWaitR", "RdRespond"]);
    let rd_state = m.reg_enum("rd_state", &rst_ty, rst_ty.item("RdIdle"));
    let rd_sel = m.reg("rd_sel", sel_w, 0);
    m.comment(rd_sel.q, "the slave of the read in flight");
    let rd_off = m.reg_noreset("rd_off", max_w);
    m.comment(rd_off.q, "the read's offset in its slot");
    let rdata = m.reg_noreset("rdata", 32);
    let rresp = m.reg("rresp", 2, 0);

    let in_idle = m.net("rd_idle", rd_state.q.eq(rst_ty.item("RdIdle")));
    let in_rd_issue = m.net("rd_issue", rd_state.q.eq(rst_ty.item("RdIssue")));
    let in_wait_r = m.net("rd_wait_r", rd_state.q.eq(rst_ty.item("RdWaitR")));
    let in_rd_respond = m.net("rd_respond", rd_state.q.eq(rst_ty.item("RdRespond")));
    m.assign(s.get("arready"), in_idle);
    m.assign(s.get("rvalid"), in_rd_respond);
    m.assign(s.get("rdata"), rdata.q);
    m.assign(s.get("rresp"), rresp.q);
    let ar_take = m.net("ar_take", s.get("arvalid") & in_idle);
    let ar_hit = decode(&mut m, "ar", s.get("araddr"));

    let sel_arready = m.wire("sel_arready", 1);
    let sel_rvalid = m.wire("sel_rvalid", 1);
    let sel_rdata = m.wire("sel_rdata", 32);
    let sel_rresp = m.wire("sel_rresp", 2);
    m.comb(|c| {
        c.set(sel_arready, false);
        c.set(sel_rvalid, false);
        c.set(sel_rdata, 0u64);
        c.set(sel_rresp, 0u64);
        c.case(rd_sel.q, |k| {
            for (i, p) in ports.iter().enumerate() {
                k.arm(i as u64, |c| {
                    c.set(sel_arready, p.get("arready"));
                    c.set(sel_rvalid, p.get("rvalid"));
                    c.set(sel_rdata, p.get("rdata"));
                    c.set(sel_rresp, p.get("rresp"));
                });
            }
        });
    });
    for (i, p) in ports.iter().enumerate() {
        let me = rd_sel.q.eq(i as u64);
        m.assign(p.get("arvalid"), in_rd_issue & me.clone());
        m.assign(p.get("araddr"), rd_off.q.slice(windows[i] - 1, 0));
        m.assign(p.get("rready"), in_wait_r & me);
    }

    m.comb(|c| {
        c.set(rd_state.d, rd_state.q);
        c.set(rd_sel.d, rd_sel.q);
        c.set(rd_off.d, rd_off.q);
        c.set(rdata.d, rdata.q);
        c.set(rresp.d, rresp.q);
        c.case(rd_state.q, |k| {
            k.arm(rst_ty.item("RdIdle"), |c| {
                c.if_(ar_take, |c| {
                    c.set(rd_sel.d, s.get("araddr").slice(aw - 1, slot_bits));
                    c.set(rd_off.d, s.get("araddr").slice(max_w - 1, 0));
                    c.if_(ar_hit, |c| c.set(rd_state.d, rst_ty.item("RdIssue")))
                        .else_(|c| {
                            c.set(rdata.d, 0u64);
                            c.set(rresp.d, RESP_DECERR);
                            c.set(rd_state.d, rst_ty.item("RdRespond"));
                        });
                });
            });
            k.arm(rst_ty.item("RdIssue"), |c| {
                c.if_(sel_arready, |c| c.set(rd_state.d, rst_ty.item("RdWaitR")));
            });
            k.arm(rst_ty.item("RdWaitR"), |c| {
                c.if_(sel_rvalid, |c| {
                    c.set(rdata.d, sel_rdata);
                    c.set(rresp.d, sel_rresp);
                    c.set(rd_state.d, rst_ty.item("RdRespond"));
                });
            });
            k.arm(rst_ty.item("RdRespond"), |c| {
                c.if_(s.get("rready"), |c| {
                    c.set(rd_state.d, rst_ty.item("RdIdle"))
                });
            });
            k.default(|c| c.set(rd_state.d, rst_ty.item("RdIdle")));
        });
    });
    m.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdl_builder::ErrorKind;

    #[test]
    fn names_and_ports() {
        let m = axil_decoder(12, &[7, 11, 10, 6], ResetStyle::AsyncLow).unwrap();
        assert_eq!(m.name(), "axil_decoder_a12_w7_11_10_6");
        let width = |n: &str| m.ports().into_iter().find(|p| p.name == n).map(|p| p.width);
        assert_eq!(width("s_axil_awaddr_i"), Some(14));
        assert_eq!(width("s_axil_araddr_i"), Some(14));
        assert_eq!(width("m0_axil_awaddr_o"), Some(7));
        assert_eq!(width("m1_axil_araddr_o"), Some(11));
        assert_eq!(width("m3_axil_awaddr_o"), Some(6));
        assert_eq!(width("m2_axil_rdata_i"), Some(32));
        let one = axil_decoder(8, &[8], ResetStyle::SyncHigh).unwrap();
        assert_eq!(one.name(), "axil_decoder_a8_w8");
        let w = one
            .ports()
            .into_iter()
            .find(|p| p.name == "s_axil_awaddr_i");
        assert_eq!(w.map(|p| p.width), Some(9));
    }

    #[test]
    fn bad_parameters_are_refused() {
        for (bits, ws) in [(12, vec![]), (12, vec![7, 13]), (12, vec![0]), (0, vec![0])] {
            let e = axil_decoder(bits, &ws, ResetStyle::AsyncLow).unwrap_err();
            assert!(e.has(ErrorKind::Invalid), "{e}");
        }
    }
}
