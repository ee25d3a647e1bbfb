//! AXI4 interconnect: `N` AXI4 masters (slave ports `s{i}_axi_*`) share one AXI4 master port
//! (`m_axi_*`) to host memory, routed by ID.
//!
//! ```text
//!  s0..sN-1 AR --(room for the burst in its R buffer)--> rr_arbiter --> skid --> m_axi AR
//!  s0..sN-1 AW --(first W beat there, no W owed, room in its B buffer)--> rr_arbiter --> skid --> m_axi AW
//!                                                                   \--> W order FIFO (master index)
//!  m_axi W  <-- the master at the head of the W order FIFO, until its WLAST
//!  m_axi R  --> by the ID's index bits --> R buffer of that master --> s{i} R
//!  m_axi B  --> by the ID's index bits --> B buffer of that master --> s{i} B
//! ```
//!
//! - **IDs.** The outgoing ID is `{master index, inner ID}` (`I + clog2(N)` bits); R and B go
//!   back to the master named by the index bits with the inner ID restored. Per-ID order on the
//!   slave is per-(master, inner ID) order, so every master sees AXI ordering for its own IDs.
//! - **Arbitration.** AR and AW have a round-robin arbiter each (stdlib `rr_arbiter`, grant held
//!   until the skid buffer takes it). A master whose request is eligible waits for at most
//!   `N - 1` other grants on that channel. Reads and writes are independent: a read never waits
//!   for a write.
//! - **Slow masters on R and B: they cannot block the shared channels.** The chip's masters do
//!   not all accept R and B at once: the DMA mover holds `bready` low until its completion
//!   stream (`m_done`) is taken, and at data widths above 64 bits the walker takes an R beat
//!   only every few cycles. So each master has its own R buffer (the largest full-width burst,
//!   `min(256, 4096 / bytes)` beats, a block RAM) and B buffer (8 responses), and space is
//!   reserved when the address is granted: a master's AR is eligible only while its R buffer
//!   has room for the whole burst (`ARLEN + 1` beats) beyond the beats already reserved, its AW
//!   only while fewer than 8 of its B responses are reserved. So every R and B beat the slave
//!   sends finds room: `m_axi_rready_o` and `m_axi_bready_o` stay high (they are the selected
//!   buffer's `s_ready`, which reservation keeps high). Cost: a master has at most 4 KiB of
//!   reads and 8 write bursts in flight. A burst longer than the R buffer (narrow beats) is
//!   granted only when the master has nothing reserved, and may then stall R until it drains.
//! - **W.** AXI4 has no write interleaving: an AW grant queues its master index, and W beats
//!   are taken from the master at the head until its WLAST. A master that is slow with the
//!   data of a granted burst would hold every other master's W. The DMA mover issues AW before
//!   its W data is there (its AW issuer runs ahead of the write stream), so an AW is eligible
//!   only while the master also presents `wvalid` and owes no W beats of an earlier burst: the
//!   interconnect, as an AXI slave may, waits for the first W beat before accepting AW. (This
//!   needs a master that raises `wvalid` without waiting for `awready`, as AXI4 requires.) A
//!   master that stalls in the middle of a burst still holds the W channel for the others:
//!   that is the contract, **a master must not hold a write burst's beats back once it has
//!   started it** (the mover's W beats stall only on its own input stream).
//! - AR and AW leave through a skid buffer (registered valid and payload); W, R and B pass
//!   through without a register on the slave side (R and B through their buffers).

use crate::blocks::arbiter::{index_width, rr_arbiter};
use crate::blocks::fifo::fifo;
use crate::blocks::skid_buffer::skid_buffer;
use hdl_builder::prelude::*;
use hdl_builder::{Error, ErrorKind, Errors};
use std::panic::Location;
use std::rc::Rc;

/// Responses a master may have outstanding on B (its B buffer's depth).
pub const B_DEPTH: u32 = 8;

/// Beats of each master's R buffer for a `data_width`-bit bus: the largest full-width INCR
/// burst, `min(256, 4096 / bytes)`.
pub fn r_depth(data_width: u32) -> u32 {
    256.min(4096 / (data_width / 8))
}

/// The module name: `axi_interconnect_m3_i5_w64`.
pub fn module_name(masters: u32, id_width: u32, data_width: u32) -> String {
    format!("axi_interconnect_m{masters}_i{id_width}_w{data_width}")
}

/// An AXI4 interconnect for `masters` (2 to 8) upstream AXI4 masters with `id_width`-bit IDs (1
/// to 16) and a `data_width`-bit bus (a power of two, 8 to 1024), onto one AXI4 master port with
/// `id_width + clog2(masters)`-bit IDs, named by [`module_name`]. The policy and the contract for
/// slow masters are in the [module documentation](self).
pub fn axi_interconnect(
    masters: u32,
    id_width: u32,
    data_width: u32,
    reset: ResetStyle,
) -> Result<Rc<Module>, Errors> {
    let name = module_name(masters, id_width, data_width);
    let invalid = |message: String| {
        Errors(vec![Error {
            kind: ErrorKind::Invalid,
            module: name.clone(),
            signal: None,
            loc: Location::caller(),
            message,
        }])
    };
    if !(2..=8).contains(&masters) {
        return Err(invalid(format!("{masters} masters: use 2 to 8")));
    }
    if !(1..=16).contains(&id_width) {
        return Err(invalid(format!("ID width {id_width}: use 1 to 16 bits")));
    }
    if !data_width.is_power_of_two() || !(8..=1024).contains(&data_width) {
        return Err(invalid(format!(
            "data width {data_width}: use a power of two from 8 to 1024 bits"
        )));
    }
    let n = masters;
    let iw = id_width;
    let k = index_width(n);
    let ow = iw + k;
    let w = data_width;
    let sb = w / 8;
    let rd = r_depth(w);
    let rcw = clog2(u64::from(rd) + 1);
    let bcw = clog2(u64::from(B_DEPTH) + 1);
    // {id, burst, size, len, addr}
    let axw = ow + 2 + 3 + 8 + 64;
    let rw = iw + 2 + 1 + w;
    let bw = iw + 2;

    let arb = rr_arbiter(n, reset)?;
    let ax_skid = skid_buffer(axw, reset)?;
    let r_fifo = fifo(rw, rd, true, reset)?;
    let b_fifo = fifo(bw, B_DEPTH, true, reset)?;
    let w_order = fifo(k, n, true, reset)?;

    let mut m = ModuleBuilder::with_reset(&name, reset);
    m.doc(&format!(
        "AXI4 interconnect: {n} masters (s<i>_axi, {iw}-bit IDs) onto m_axi ({ow}-bit IDs), {w}-bit data."
    ));
    m.doc("Outgoing ID = {master index, inner ID}; R and B go back by the index bits, inner ID restored.");
    m.doc(
        "AR and AW: one round-robin arbiter each (a waiting eligible master sees at most N-1 other",
    );
    m.doc("grants), then a skid buffer. Reads and writes are independent.");
    m.doc(&format!(
        "R and B: a buffer per master ({rd} R beats, {B_DEPTH} B responses), space reserved at the"
    ));
    m.doc(
        "address grant (AR eligible only with room for ARLEN+1 beats, AW only with a free B slot),",
    );
    m.doc(
        "so m_axi_rready_o/bready_o stay high: a master slow to take R or B never blocks another.",
    );
    m.doc("W: no interleaving; an AW grant queues its master index, W beats come from the head master");
    m.doc(
        "until WLAST. An AW is eligible only while its master presents wvalid and owes no W beats",
    );
    m.doc(
        "(a master must raise wvalid without waiting for awready, as AXI4 requires). Contract: a",
    );
    m.doc("master must not pause a write burst once started: that holds the other masters' W.");
    m.clock();
    m.reset();

    struct Up {
        arvalid: Sig,
        arready: Sig,
        ar: Expr,
        arlen: Sig,
        rvalid: Sig,
        rready: Sig,
        rdata: Sig,
        rresp: Sig,
        rlast: Sig,
        rid: Sig,
        awvalid: Sig,
        awready: Sig,
        aw: Expr,
        wvalid: Sig,
        wready: Sig,
        wdata: Sig,
        wstrb: Sig,
        wlast: Sig,
        bvalid: Sig,
        bready: Sig,
        bresp: Sig,
        bid: Sig,
    }
    let mut ups = Vec::new();
    for i in 0..n {
        let p = format!("s{i}_axi_");
        m.group(&format!("upstream master {i}: read address"));
        let arvalid = m.input(&format!("{p}arvalid_i"), 1);
        let arready = m.output(&format!("{p}arready_o"), 1);
        let araddr = m.input(&format!("{p}araddr_i"), 64);
        let arlen = m.input(&format!("{p}arlen_i"), 8);
        let arsize = m.input(&format!("{p}arsize_i"), 3);
        let arburst = m.input(&format!("{p}arburst_i"), 2);
        let arid = m.input(&format!("{p}arid_i"), iw);
        m.group(&format!("upstream master {i}: read data"));
        let rvalid = m.output(&format!("{p}rvalid_o"), 1);
        let rready = m.input(&format!("{p}rready_i"), 1);
        let rdata = m.output(&format!("{p}rdata_o"), w);
        let rresp = m.output(&format!("{p}rresp_o"), 2);
        let rlast = m.output(&format!("{p}rlast_o"), 1);
        let rid = m.output(&format!("{p}rid_o"), iw);
        m.group(&format!("upstream master {i}: write address"));
        let awvalid = m.input(&format!("{p}awvalid_i"), 1);
        let awready = m.output(&format!("{p}awready_o"), 1);
        let awaddr = m.input(&format!("{p}awaddr_i"), 64);
        let awlen = m.input(&format!("{p}awlen_i"), 8);
        let awsize = m.input(&format!("{p}awsize_i"), 3);
        let awburst = m.input(&format!("{p}awburst_i"), 2);
        let awid = m.input(&format!("{p}awid_i"), iw);
        m.group(&format!("upstream master {i}: write data"));
        let wvalid = m.input(&format!("{p}wvalid_i"), 1);
        let wready = m.output(&format!("{p}wready_o"), 1);
        let wdata = m.input(&format!("{p}wdata_i"), w);
        let wstrb = m.input(&format!("{p}wstrb_i"), sb);
        let wlast = m.input(&format!("{p}wlast_i"), 1);
        m.group(&format!("upstream master {i}: write response"));
        let bvalid = m.output(&format!("{p}bvalid_o"), 1);
        let bready = m.input(&format!("{p}bready_i"), 1);
        let bresp = m.output(&format!("{p}bresp_o"), 2);
        let bid = m.output(&format!("{p}bid_o"), iw);
        let idx = lit(k, u128::from(i));
        let ar = cat([
            idx.clone(),
            arid.ex(),
            arburst.ex(),
            arsize.ex(),
            arlen.ex(),
            araddr.ex(),
        ]);
        let aw = cat([
            idx,
            awid.ex(),
            awburst.ex(),
            awsize.ex(),
            awlen.ex(),
            awaddr.ex(),
        ]);
        ups.push(Up {
            arvalid,
            arready,
            ar,
            arlen,
            rvalid,
            rready,
            rdata,
            rresp,
            rlast,
            rid,
            awvalid,
            awready,
            aw,
            wvalid,
            wready,
            wdata,
            wstrb,
            wlast,
            bvalid,
            bready,
            bresp,
            bid,
        });
    }

    m.group("downstream: read address");
    let m_arvalid = m.output("m_axi_arvalid_o", 1);
    let m_arready = m.input("m_axi_arready_i", 1);
    let m_araddr = m.output("m_axi_araddr_o", 64);
    let m_arlen = m.output("m_axi_arlen_o", 8);
    let m_arsize = m.output("m_axi_arsize_o", 3);
    let m_arburst = m.output("m_axi_arburst_o", 2);
    let m_arid = m.output("m_axi_arid_o", ow);
    m.group("downstream: read data");
    let m_rvalid = m.input("m_axi_rvalid_i", 1);
    let m_rready = m.output("m_axi_rready_o", 1);
    let m_rdata = m.input("m_axi_rdata_i", w);
    let m_rresp = m.input("m_axi_rresp_i", 2);
    let m_rlast = m.input("m_axi_rlast_i", 1);
    let m_rid = m.input("m_axi_rid_i", ow);
    m.group("downstream: write address");
    let m_awvalid = m.output("m_axi_awvalid_o", 1);
    let m_awready = m.input("m_axi_awready_i", 1);
    let m_awaddr = m.output("m_axi_awaddr_o", 64);
    let m_awlen = m.output("m_axi_awlen_o", 8);
    let m_awsize = m.output("m_axi_awsize_o", 3);
    let m_awburst = m.output("m_axi_awburst_o", 2);
    let m_awid = m.output("m_axi_awid_o", ow);
    m.group("downstream: write data");
    let m_wvalid = m.output("m_axi_wvalid_o", 1);
    let m_wready = m.input("m_axi_wready_i", 1);
    let m_wdata = m.output("m_axi_wdata_o", w);
    let m_wstrb = m.output("m_axi_wstrb_o", sb);
    let m_wlast = m.output("m_axi_wlast_o", 1);
    m.group("downstream: write response");
    let m_bvalid = m.input("m_axi_bvalid_i", 1);
    let m_bready = m.output("m_axi_bready_o", 1);
    let m_bresp = m.input("m_axi_bresp_i", 2);
    let m_bid = m.input("m_axi_bid_i", ow);

    // ---------------------------------------------------------------- AR
    let ar_room: Vec<Sig> = (0..n).map(|i| m.wire(&format!("ar_room{i}"), 1)).collect();
    let ar_req = m.net(
        "ar_req",
        cat((0..n)
            .rev()
            .map(|i| ups[i as usize].arvalid & ar_room[i as usize])),
    );
    m.comment(ar_req, "bit i: master i's AR, with room for its burst");
    let u_ar_arb = m.instance("u_ar_arb", &arb);
    m.bind(u_ar_arb, "req_i", ar_req);
    let ar_valid = m.bind_out(u_ar_arb, "valid_o");
    let ar_gnt = m.bind_out(u_ar_arb, "gnt_o");
    let ar_idx = m.bind_out(u_ar_arb, "gnt_idx_o");
    let ar_sel = select(
        &mut m,
        "ar_sel",
        ar_idx,
        ups.iter().map(|u| u.ar.clone()).collect(),
    );
    let u_ar_skid = m.instance("u_ar_skid", &ax_skid);
    m.bind(u_ar_skid, "s_valid_i", ar_valid);
    m.bind(u_ar_skid, "s_data_i", ar_sel);
    let ar_take = m.bind_out(u_ar_skid, "s_ready_o");
    m.bind(u_ar_arb, "ready_i", ar_take);
    m.bind_out_to(u_ar_skid, "m_valid_o", m_arvalid);
    m.bind(u_ar_skid, "m_ready_i", m_arready);
    let ar_out = m.bind_out(u_ar_skid, "m_data_o");
    m.assign(m_araddr, ar_out.slice(63, 0));
    m.assign(m_arlen, ar_out.slice(71, 64));
    m.assign(m_arsize, ar_out.slice(74, 72));
    m.assign(m_arburst, ar_out.slice(76, 75));
    m.assign(m_arid, ar_out.slice(axw - 1, 77));

    // ---------------------------------------------------------------- R
    let r_idx = m.net("r_idx", m_rid.slice(ow - 1, iw));
    m.comment(r_idx, "the master an R beat goes back to");
    let r_word = m.net(
        "r_word",
        cat([
            m_rid.slice(iw - 1, 0),
            m_rresp.ex(),
            m_rlast.ex(),
            m_rdata.ex(),
        ]),
    );
    let mut r_rooms = Vec::new();
    for (i, u) in ups.iter().enumerate() {
        let inst = m.instance(&format!("u_r_buf{i}"), &r_fifo);
        m.bind(inst, "s_valid_i", m_rvalid & r_idx.eq(i as u64));
        m.bind(inst, "s_data_i", r_word);
        r_rooms.push(m.bind_out(inst, "s_ready_o").ex());
        m.bind_out_to(inst, "m_valid_o", u.rvalid);
        m.bind(inst, "m_ready_i", u.rready);
        let word = m.bind_out(inst, "m_data_o");
        m.assign(u.rdata, word.slice(w - 1, 0));
        m.assign(u.rlast, word.bit(w));
        m.assign(u.rresp, word.slice(w + 2, w + 1));
        m.assign(u.rid, word.slice(rw - 1, w + 3));

        // Beats reserved in this buffer: granted bursts' beats not yet handed to the master.
        let resv = m.reg(&format!("r_resv{i}"), rcw, 0);
        m.comment(resv.q, "R buffer beats reserved: granted, not yet taken");
        let cw = rcw.max(9) + 1;
        let beats = m.net(&format!("ar_beats{i}"), u.arlen.zext(cw) + 1);
        m.assign(
            ar_room[i],
            resv.q.eq(0) | (resv.q.zext(cw) + beats).le(u64::from(rd)),
        );
        let fire = m.net(&format!("ar_fire{i}"), u.arvalid & u.arready);
        let pop = m.net(&format!("r_pop{i}"), u.rvalid & u.rready);
        m.assign(
            resv.d,
            (resv.q.zext(cw) + mux(fire, beats, lit(cw, 0)) - pop.zext(cw)).slice(rcw - 1, 0),
        );
        m.assign(u.arready, ar_gnt.bit(i as u32) & ar_take);
    }
    let r_ready = select_default(&mut m, "r_ready", r_idx, r_rooms, lit(1, 1));
    m.assign(m_rready, r_ready);

    // ---------------------------------------------------------------- AW and W order
    let aw_ok: Vec<Sig> = (0..n).map(|i| m.wire(&format!("aw_ok{i}"), 1)).collect();
    let aw_req = m.net(
        "aw_req",
        cat((0..n)
            .rev()
            .map(|i| ups[i as usize].awvalid & aw_ok[i as usize])),
    );
    m.comment(
        aw_req,
        "bit i: master i's AW, with its first W beat there and a free B slot",
    );
    let u_aw_arb = m.instance("u_aw_arb", &arb);
    m.bind(u_aw_arb, "req_i", aw_req);
    let aw_valid = m.bind_out(u_aw_arb, "valid_o");
    let aw_gnt = m.bind_out(u_aw_arb, "gnt_o");
    let aw_idx = m.bind_out(u_aw_arb, "gnt_idx_o");
    let aw_sel = select(
        &mut m,
        "aw_sel",
        aw_idx,
        ups.iter().map(|u| u.aw.clone()).collect(),
    );
    let u_aw_skid = m.instance("u_aw_skid", &ax_skid);
    let u_worder = m.instance("u_w_order", &w_order);
    let aw_skid_ready = m.bind_out(u_aw_skid, "s_ready_o");
    let worder_ready = m.bind_out(u_worder, "s_ready_o");
    let aw_take = m.net("aw_take", aw_skid_ready & worder_ready);
    m.comment(
        aw_take,
        "both the AW skid buffer and the W order FIFO take a grant",
    );
    m.bind(u_aw_arb, "ready_i", aw_take);
    m.bind(u_aw_skid, "s_valid_i", aw_valid & worder_ready);
    m.bind(u_aw_skid, "s_data_i", aw_sel);
    m.bind(u_worder, "s_valid_i", aw_valid & aw_skid_ready);
    m.bind(u_worder, "s_data_i", aw_idx);
    m.bind_out_to(u_aw_skid, "m_valid_o", m_awvalid);
    m.bind(u_aw_skid, "m_ready_i", m_awready);
    let aw_out = m.bind_out(u_aw_skid, "m_data_o");
    m.assign(m_awaddr, aw_out.slice(63, 0));
    m.assign(m_awlen, aw_out.slice(71, 64));
    m.assign(m_awsize, aw_out.slice(74, 72));
    m.assign(m_awburst, aw_out.slice(76, 75));
    m.assign(m_awid, aw_out.slice(axw - 1, 77));

    // ---------------------------------------------------------------- W
    let w_head_valid = m.bind_out(u_worder, "m_valid_o");
    let w_head = m.bind_out(u_worder, "m_data_o");
    m.comment(w_head, "the master whose W beats go out now");
    let w_valid_sel = select(
        &mut m,
        "w_valid_sel",
        w_head,
        ups.iter().map(|u| u.wvalid.ex()).collect(),
    );
    let w_sel = select(
        &mut m,
        "w_sel",
        w_head,
        ups.iter()
            .map(|u| cat([u.wlast.ex(), u.wstrb.ex(), u.wdata.ex()]))
            .collect(),
    );
    m.assign(m_wvalid, w_head_valid & w_valid_sel);
    m.assign(m_wdata, w_sel.slice(w - 1, 0));
    m.assign(m_wstrb, w_sel.slice(w + sb - 1, w));
    m.assign(m_wlast, w_sel.bit(w + sb));
    let w_done = m.net("w_done", m_wvalid & m_wready & w_sel.bit(w + sb));
    m.comment(w_done, "the head master's burst ends");
    m.bind(u_worder, "m_ready_i", w_done);
    let worder_count = m.bind_out(u_worder, "count_o");
    m.unused("w_order_count", worder_count);

    // ---------------------------------------------------------------- B
    let b_idx = m.net("b_idx", m_bid.slice(ow - 1, iw));
    m.comment(b_idx, "the master a B response goes back to");
    let b_word = m.net("b_word", cat([m_bid.slice(iw - 1, 0), m_bresp.ex()]));
    let mut b_rooms = Vec::new();
    for (i, u) in ups.iter().enumerate() {
        let inst = m.instance(&format!("u_b_buf{i}"), &b_fifo);
        m.bind(inst, "s_valid_i", m_bvalid & b_idx.eq(i as u64));
        m.bind(inst, "s_data_i", b_word);
        b_rooms.push(m.bind_out(inst, "s_ready_o").ex());
        m.bind_out_to(inst, "m_valid_o", u.bvalid);
        m.bind(inst, "m_ready_i", u.bready);
        let word = m.bind_out(inst, "m_data_o");
        m.assign(u.bresp, word.slice(1, 0));
        m.assign(u.bid, word.slice(bw - 1, 2));

        let at_head = m.net(&format!("w_at_head{i}"), w_head_valid & w_head.eq(i as u64));
        m.assign(u.wready, at_head & m_wready);
        let owed = m.reg(&format!("w_owed{i}"), 1, 0);
        m.comment(owed.q, "an AW granted, its W burst not yet done");
        let b_resv = m.reg(&format!("b_resv{i}"), bcw, 0);
        m.comment(
            b_resv.q,
            "B buffer slots reserved: AW granted, B not yet taken",
        );
        m.assign(
            aw_ok[i],
            u.wvalid & !owed.q & b_resv.q.lt(u64::from(B_DEPTH)),
        );
        let fire = m.net(&format!("aw_fire{i}"), u.awvalid & u.awready);
        let last = m.net(&format!("w_last{i}"), u.wvalid & u.wready & u.wlast);
        let pop = m.net(&format!("b_pop{i}"), u.bvalid & u.bready);
        m.assign(owed.d, fire | (owed.q & !last));
        m.assign(b_resv.d, b_resv.q + fire.zext(bcw) - pop.zext(bcw));
        m.assign(u.awready, aw_gnt.bit(i as u32) & aw_take);
    }
    let b_ready = select_default(&mut m, "b_ready", b_idx, b_rooms, lit(1, 1));
    m.assign(m_bready, b_ready);
    m.finish()
}

/// A wire `name` that is `items[sel]` (all of one width), zero for other values of `sel`.
pub(crate) fn select(m: &mut ModuleBuilder, name: &str, sel: Sig, items: Vec<Expr>) -> Sig {
    let width = items[0].width();
    select_default(m, name, sel, items, lit(width, 0))
}

/// A wire `name` that is `items[sel]`, `default` for other values of `sel`.
fn select_default(
    m: &mut ModuleBuilder,
    name: &str,
    sel: Sig,
    items: Vec<Expr>,
    default: Expr,
) -> Sig {
    let out = m.wire(name, default.width());
    m.comb(|c| {
        c.set(out, default);
        c.case(sel, |k| {
            for (i, e) in items.into_iter().enumerate() {
                k.arm(i as u64, |c| c.set(out, e));
            }
            k.default(|_| {});
        });
    });
    out
}
