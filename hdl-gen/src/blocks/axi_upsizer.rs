//! AXI4 width converter, narrow master to wide slave (upsizer): an engine with an `N`-bit AXI4
//! master (`s_axi_*`) reaches a `W`-bit host-memory bus (`m_axi_*`), as the chip's widest
//! configuration needs (64-bit transports on a 512-bit interconnect).
//!
//! ```text
//!  s AR --> wide AR (aligned down, length in wide beats, ID 0) --> m AR
//!       \-> R info FIFO {ID, first lane, narrow beats}
//!  m R  --> one narrow beat per lane, from the first lane to the burst's last --> s R
//!  s AW --> AW FIFO (wide AW) ; W info FIFO {first lane}
//!  s W  --> packer (lanes into a wide beat, strobes kept) --> W FIFO (whole bursts)
//!  wide AW leaves once its burst is whole in the W FIFO --> m AW, then m W at full rate
//!  m B  --> B info FIFO {ID} --> s B
//! ```
//!
//! Contract of the narrow side (what the chip's DMA engines issue): INCR bursts of full narrow
//! beats (`size = log2(N/8)`) at narrow-aligned addresses, not crossing 4 KiB (AXI4's rule).
//! Other bursts are not converted correctly. The wide bursts are INCR, full wide beats, aligned
//! down to the wide beat, so they cover the narrow burst's bytes (and never cross 4 KiB either).
//!
//! - **IDs.** Every wide burst has ID 0, so the slave answers reads in order and writes in
//!   order; the narrow ID of each burst comes back from the info FIFOs. (One narrow master's
//!   IDs are not reordered against each other: AXI4 allows a slave to keep that order.)
//! - **Reads.** A wide R beat gives the narrow beats of its lanes, from the burst's first lane
//!   (in the first beat) or lane 0, to the last lane or the burst's last narrow beat; each carries
//!   the wide beat's `rresp`. The bytes a wide read fetches outside the narrow burst are dropped
//!   (host memory reads have no side effects). `R_INFO` narrow bursts may be in flight.
//! - **Writes, store and forward per burst.** The packer places each narrow W beat in its lane
//!   of a wide beat (strobes as the master gave them, zero in lanes the burst does not cover) and
//!   pushes the wide beat when its last lane is filled or at `wlast`. A wide AW, and the W beats
//!   of a burst, are offered only once the whole burst is in the W FIFO, so its W beats leave
//!   back to back (whatever the slave takes first): a downstream
//!   interconnect's W channel is never held by a burst that trickles in at the narrow rate (the
//!   interconnect's contract, `axi_interconnect.rs`). The W FIFO holds two of the largest wide
//!   bursts (a narrow burst of 256 beats or 4 KiB, starting in the last lane).
//! - **B.** Passed through in order, with the burst's narrow ID.

use crate::blocks::axi_interconnect::select;
use crate::blocks::fifo::fifo;
use hdl_builder::prelude::*;
use hdl_builder::{Error, ErrorKind, Errors};
use std::panic::Location;
use std::rc::Rc;

/// Narrow read bursts in flight (the R info FIFO's depth).
pub const R_INFO: u32 = 8;
/// Narrow write bursts accepted and not yet sent (the AW and W info FIFOs' depth).
pub const W_INFO: u32 = 4;
/// Write responses owed (the B info FIFO's depth).
pub const B_INFO: u32 = 8;

/// The module name: `axi_upsizer_i4_n64_w512`.
pub fn module_name(id_width: u32, narrow: u32, wide: u32) -> String {
    format!("axi_upsizer_i{id_width}_n{narrow}_w{wide}")
}

/// Wide beats of the largest wide burst: a narrow burst of 256 beats (or 4 KiB) starting in the
/// last lane of a wide beat.
pub fn max_wide_beats(narrow: u32, wide: u32) -> u32 {
    let (nb, wb) = (narrow / 8, wide / 8);
    let bytes = (256 * nb).min(4096);
    (wb - nb + bytes).div_ceil(wb)
}

/// An upsizer from an `narrow`-bit AXI4 master to a `wide`-bit AXI4 slave (powers of two, 8 <=
/// `narrow` < `wide` <= 1024), `id_width`-bit IDs (1 to 16) on both sides, named by
/// [`module_name`]. Behaviour and contract in the [module documentation](self).
pub fn axi_upsizer(
    id_width: u32,
    narrow: u32,
    wide: u32,
    reset: ResetStyle,
) -> Result<Rc<Module>, Errors> {
    let name = module_name(id_width, narrow, wide);
    let invalid = |message: String| {
        Errors(vec![Error {
            kind: ErrorKind::Invalid,
            module: name.clone(),
            signal: None,
            loc: Location::caller(),
            message,
        }])
    };
    if !(1..=16).contains(&id_width) {
        return Err(invalid(format!("ID width {id_width}: use 1 to 16 bits")));
    }
    for (what, w) in [("narrow", narrow), ("wide", wide)] {
        if !w.is_power_of_two() || !(8..=1024).contains(&w) {
            return Err(invalid(format!(
                "{what} data width {w}: use a power of two from 8 to 1024 bits"
            )));
        }
    }
    if narrow >= wide {
        return Err(invalid(format!(
            "narrow width {narrow} is not below the wide width {wide}: an upsizer needs narrow < wide"
        )));
    }
    let iw = id_width;
    let (nw, ww) = (narrow, wide);
    let (nb, wb) = (nw / 8, ww / 8);
    let lanes = ww / nw;
    // Exact logarithms (the widths are powers of two; `clog2(1)` would be 1).
    let lgr = lanes.trailing_zeros();
    let lgn = nb.trailing_zeros();
    let lgw = wb.trailing_zeros();
    let wdepth = 2 * max_wide_beats(nw, ww);

    // {ID, first lane, narrow beats - 1}
    let riw = iw + lgr + 8;
    let r_info = fifo(riw, R_INFO, true, reset)?;
    // {ID, len, addr} of a wide AW
    let aww = iw + 8 + 64;
    let aw_fifo = fifo(aww, W_INFO, true, reset)?;
    let w_info = fifo(lgr, W_INFO, true, reset)?;
    // {last, strobes, data} of a wide W beat
    let wfw = 1 + wb + ww;
    let w_fifo = fifo(wfw, wdepth, true, reset)?;
    let b_info = fifo(iw, B_INFO, true, reset)?;

    let mut m = ModuleBuilder::with_reset(&name, reset);
    m.doc(&format!(
        "AXI4 upsizer: a {nw}-bit AXI4 master (s_axi) onto a {ww}-bit AXI4 slave (m_axi), {iw}-bit IDs."
    ));
    m.doc("Narrow side contract: INCR bursts of full narrow beats at narrow-aligned addresses.");
    m.doc("Wide bursts: INCR, full beats, aligned down, ID 0 (answered in order); narrow IDs come");
    m.doc(&format!(
        "back from info FIFOs. Reads: up to {R_INFO} bursts in flight, one narrow beat per lane."
    ));
    m.doc("Writes: narrow beats packed into wide beats (strobes kept); a wide AW leaves only once");
    m.doc(&format!(
        "its whole burst is in the {wdepth}-beat W FIFO, so its W beats go back to back."
    ));
    m.doc("Contract: hdl-gen/src/blocks/axi_upsizer.rs.");
    m.clock();
    m.reset();

    m.group("narrow master: read address");
    let s_arvalid = m.input("s_axi_arvalid_i", 1);
    let s_arready = m.output("s_axi_arready_o", 1);
    let s_araddr = m.input("s_axi_araddr_i", 64);
    let s_arlen = m.input("s_axi_arlen_i", 8);
    let s_arsize = m.input("s_axi_arsize_i", 3);
    let s_arburst = m.input("s_axi_arburst_i", 2);
    let s_arid = m.input("s_axi_arid_i", iw);
    m.group("narrow master: read data");
    let s_rvalid = m.output("s_axi_rvalid_o", 1);
    let s_rready = m.input("s_axi_rready_i", 1);
    let s_rdata = m.output("s_axi_rdata_o", nw);
    let s_rresp = m.output("s_axi_rresp_o", 2);
    let s_rlast = m.output("s_axi_rlast_o", 1);
    let s_rid = m.output("s_axi_rid_o", iw);
    m.group("narrow master: write address");
    let s_awvalid = m.input("s_axi_awvalid_i", 1);
    let s_awready = m.output("s_axi_awready_o", 1);
    let s_awaddr = m.input("s_axi_awaddr_i", 64);
    let s_awlen = m.input("s_axi_awlen_i", 8);
    let s_awsize = m.input("s_axi_awsize_i", 3);
    let s_awburst = m.input("s_axi_awburst_i", 2);
    let s_awid = m.input("s_axi_awid_i", iw);
    m.group("narrow master: write data");
    let s_wvalid = m.input("s_axi_wvalid_i", 1);
    let s_wready = m.output("s_axi_wready_o", 1);
    let s_wdata = m.input("s_axi_wdata_i", nw);
    let s_wstrb = m.input("s_axi_wstrb_i", nb);
    let s_wlast = m.input("s_axi_wlast_i", 1);
    m.group("narrow master: write response");
    let s_bvalid = m.output("s_axi_bvalid_o", 1);
    let s_bready = m.input("s_axi_bready_i", 1);
    let s_bresp = m.output("s_axi_bresp_o", 2);
    let s_bid = m.output("s_axi_bid_o", iw);

    m.group("wide slave: read address");
    let m_arvalid = m.output("m_axi_arvalid_o", 1);
    let m_arready = m.input("m_axi_arready_i", 1);
    let m_araddr = m.output("m_axi_araddr_o", 64);
    let m_arlen = m.output("m_axi_arlen_o", 8);
    let m_arsize = m.output("m_axi_arsize_o", 3);
    let m_arburst = m.output("m_axi_arburst_o", 2);
    let m_arid = m.output("m_axi_arid_o", iw);
    m.group("wide slave: read data");
    let m_rvalid = m.input("m_axi_rvalid_i", 1);
    let m_rready = m.output("m_axi_rready_o", 1);
    let m_rdata = m.input("m_axi_rdata_i", ww);
    let m_rresp = m.input("m_axi_rresp_i", 2);
    let m_rlast = m.input("m_axi_rlast_i", 1);
    let m_rid = m.input("m_axi_rid_i", iw);
    m.group("wide slave: write address");
    let m_awvalid = m.output("m_axi_awvalid_o", 1);
    let m_awready = m.input("m_axi_awready_i", 1);
    let m_awaddr = m.output("m_axi_awaddr_o", 64);
    let m_awlen = m.output("m_axi_awlen_o", 8);
    let m_awsize = m.output("m_axi_awsize_o", 3);
    let m_awburst = m.output("m_axi_awburst_o", 2);
    let m_awid = m.output("m_axi_awid_o", iw);
    m.group("wide slave: write data");
    let m_wvalid = m.output("m_axi_wvalid_o", 1);
    let m_wready = m.input("m_axi_wready_i", 1);
    let m_wdata = m.output("m_axi_wdata_o", ww);
    let m_wstrb = m.output("m_axi_wstrb_o", wb);
    let m_wlast = m.output("m_axi_wlast_o", 1);
    m.group("wide slave: write response");
    let m_bvalid = m.input("m_axi_bvalid_i", 1);
    let m_bready = m.output("m_axi_bready_o", 1);
    let m_bresp = m.input("m_axi_bresp_i", 2);
    let m_bid = m.input("m_axi_bid_i", iw);

    // The narrow bursts' size and type are the contract's (full beats, INCR); the wide slave's
    // R and B order is ID 0's, so their IDs and RLAST say nothing the info FIFOs do not know.
    m.unused(
        "narrow_size_burst",
        cat([s_arsize.ex(), s_arburst.ex(), s_awsize.ex(), s_awburst.ex()]),
    );
    if lgn > 0 {
        m.unused(
            "addr_in_beat",
            cat([s_araddr.slice(lgn - 1, 0), s_awaddr.slice(lgn - 1, 0)]),
        );
    }
    m.unused(
        "wide_ids_rlast",
        cat([m_rid.ex(), m_rlast.ex(), m_bid.ex()]),
    );

    // ---------------------------------------------------------------- AR
    // The wide burst's ARLEN/AWLEN: from the wide beat holding the first narrow beat to the
    // one holding the last, `(first lane + narrow LEN) >> log2(lanes)`.
    let wide_len = |lane: Sig, len: Sig| ((lane.zext(9) + len.zext(9)) >> lgr).slice(7, 0);
    let ar_lane = m.net("ar_lane", s_araddr.slice(lgw - 1, lgn));
    m.comment(ar_lane, "the narrow burst's first lane in its wide beat");
    let ar_wlen = m.net("ar_wlen", wide_len(ar_lane, s_arlen));
    m.comment(ar_wlen, "the wide burst's ARLEN");
    let arv = m.reg("ar_valid", 1, 0);
    let ara = m.reg_noreset("ar_addr", 64);
    let arl = m.reg_noreset("ar_len", 8);
    let u_rinfo = m.instance("u_r_info", &r_info);
    let rinfo_room = m.bind_out(u_rinfo, "s_ready_o");
    let ar_take = m.net("ar_take", rinfo_room & (!arv.q | m_arready));
    m.comment(
        ar_take,
        "a narrow AR is taken into the output register with room for its R info",
    );
    m.assign(s_arready, ar_take);
    let ar_fire = m.net("ar_fire", s_arvalid & ar_take);
    m.bind(u_rinfo, "s_valid_i", ar_fire);
    m.bind(
        u_rinfo,
        "s_data_i",
        cat([s_arid.ex(), ar_lane.ex(), s_arlen.ex()]),
    );
    m.assign(arv.d, ar_fire | (arv.q & !m_arready));
    m.assign(
        ara.d,
        mux(
            ar_fire,
            cat([s_araddr.slice(63, lgw), zeros(lgw)]),
            ara.q.ex(),
        ),
    );
    m.assign(arl.d, mux(ar_fire, ar_wlen.ex(), arl.q.ex()));
    m.assign(m_arvalid, arv.q);
    m.assign(m_araddr, ara.q);
    m.assign(m_arlen, arl.q);
    m.assign(m_arsize, lit(3, u128::from(lgw)));
    m.assign(m_arburst, lit(2, 1));
    m.assign(m_arid, lit(iw, 0));

    // ---------------------------------------------------------------- R
    let rinfo_valid = m.bind_out(u_rinfo, "m_valid_o");
    let rinfo = m.bind_out(u_rinfo, "m_data_o");
    let r_id = m.net("r_id", rinfo.slice(riw - 1, lgr + 8));
    let r_first = m.net("r_first_lane", rinfo.slice(lgr + 7, 8));
    let r_arlen = m.net("r_arlen", rinfo.slice(7, 0));
    m.comment(r_arlen, "the head burst's narrow ARLEN");
    let r_lane_q = m.reg("r_lane", lgr, 0);
    let r_cnt = m.reg("r_count", 8, 0);
    m.comment(r_cnt.q, "narrow beats of the head burst handed out");
    let r_lane = m.net(
        "r_lane_now",
        mux(r_cnt.q.ne(0), r_lane_q.q.ex(), r_first.ex()),
    );
    let r_last = m.net("r_last", r_cnt.q.eq(r_arlen));
    let r_end = m.net("r_wide_done", r_last | r_lane.eq(u64::from(lanes - 1)));
    m.comment(r_end, "this narrow beat is the wide beat's last");
    let lanes_of = |m: &mut ModuleBuilder, name: &str, word: Sig, w: u32, sel: Sig| {
        let items = (0..lanes)
            .map(|j| word.slice((j + 1) * w - 1, j * w))
            .collect();
        select(m, name, sel, items)
    };
    let r_data = lanes_of(&mut m, "r_lane_data", m_rdata, nw, r_lane);
    m.assign(s_rvalid, rinfo_valid & m_rvalid);
    m.assign(s_rdata, r_data);
    m.assign(s_rresp, m_rresp);
    m.assign(s_rlast, r_last);
    m.assign(s_rid, r_id);
    m.assign(m_rready, rinfo_valid & s_rready & r_end);
    let r_fire = m.net("r_fire", rinfo_valid & m_rvalid & s_rready);
    m.bind(u_rinfo, "m_ready_i", r_fire & r_last);
    m.assign(
        r_cnt.d,
        mux(r_fire, mux(r_last, lit(8, 0), r_cnt.q + 1), r_cnt.q.ex()),
    );
    m.assign(r_lane_q.d, mux(r_fire, r_lane + 1, r_lane_q.q.ex()));

    // ---------------------------------------------------------------- AW
    let aw_lane = m.net("aw_lane", s_awaddr.slice(lgw - 1, lgn));
    m.comment(aw_lane, "the narrow burst's first lane in its wide beat");
    let aw_wlen = m.net("aw_wlen", wide_len(aw_lane, s_awlen));
    let u_aw = m.instance("u_aw_fifo", &aw_fifo);
    let u_winfo = m.instance("u_w_info", &w_info);
    let aw_room = m.bind_out(u_aw, "s_ready_o");
    let winfo_room = m.bind_out(u_winfo, "s_ready_o");
    let aw_take = m.net("aw_take", aw_room & winfo_room);
    m.assign(s_awready, aw_take);
    let aw_fire = m.net("aw_fire", s_awvalid & aw_take);
    m.bind(u_aw, "s_valid_i", aw_fire);
    m.bind(
        u_aw,
        "s_data_i",
        cat([
            s_awid.ex(),
            aw_wlen.ex(),
            cat([s_awaddr.slice(63, lgw), zeros(lgw)]),
        ]),
    );
    m.bind(u_winfo, "s_valid_i", aw_fire);
    m.bind(u_winfo, "s_data_i", aw_lane);

    // ---------------------------------------------------------------- W packer
    let winfo_valid = m.bind_out(u_winfo, "m_valid_o");
    let w_first = m.bind_out(u_winfo, "m_data_o");
    let u_wf = m.instance("u_w_fifo", &w_fifo);
    let wf_room = m.bind_out(u_wf, "s_ready_o");
    let pk_started = m.reg("pk_started", 1, 0);
    m.comment(
        pk_started.q,
        "a narrow beat of the W info head's burst was taken",
    );
    let pk_lane_q = m.reg("pk_lane", lgr, 0);
    let pk_data = m.reg("pk_data", ww, 0);
    m.comment(
        pk_data.q,
        "the wide beat being packed (lanes before the next)",
    );
    let pk_strb = m.reg("pk_strb", wb, 0);
    let pk_lane = m.net(
        "pk_lane_now",
        mux(pk_started.q, pk_lane_q.q.ex(), w_first.ex()),
    );
    let w_take = m.net("w_take", winfo_valid & wf_room);
    m.comment(
        w_take,
        "a narrow W beat is taken once its burst's first lane is known and the W FIFO has room",
    );
    m.assign(s_wready, w_take);
    let w_fire = m.net("w_fire", s_wvalid & w_take);
    let pk_flush = m.net(
        "pk_flush",
        w_fire & (s_wlast | pk_lane.eq(u64::from(lanes - 1))),
    );
    m.comment(pk_flush, "this narrow beat completes a wide beat");
    let lane_hit: Vec<Expr> = (0..lanes).map(|j| pk_lane.eq(u64::from(j))).collect();
    let new_data = m.net(
        "pk_data_new",
        cat((0..lanes).rev().map(|j| {
            mux(
                lane_hit[j as usize].clone(),
                s_wdata.ex(),
                pk_data.q.slice((j + 1) * nw - 1, j * nw),
            )
        })),
    );
    let new_strb = m.net(
        "pk_strb_new",
        cat((0..lanes).rev().map(|j| {
            mux(
                lane_hit[j as usize].clone(),
                s_wstrb.ex(),
                pk_strb.q.slice((j + 1) * nb - 1, j * nb),
            )
        })),
    );
    m.bind(u_wf, "s_valid_i", pk_flush);
    m.bind(
        u_wf,
        "s_data_i",
        cat([s_wlast.ex(), new_strb.ex(), new_data.ex()]),
    );
    m.assign(
        pk_data.d,
        mux(
            pk_flush,
            lit(ww, 0),
            mux(w_fire, new_data.ex(), pk_data.q.ex()),
        ),
    );
    m.assign(
        pk_strb.d,
        mux(
            pk_flush,
            lit(wb, 0),
            mux(w_fire, new_strb.ex(), pk_strb.q.ex()),
        ),
    );
    m.assign(pk_lane_q.d, mux(w_fire, pk_lane + 1, pk_lane_q.q.ex()));
    let w_burst_end = m.net("w_burst_end", w_fire & s_wlast);
    m.assign(pk_started.d, mux(w_fire, !s_wlast, pk_started.q.ex()));
    m.bind(u_winfo, "m_ready_i", w_burst_end);

    // ---------------------------------------------------------------- wide AW and W
    // Bursts whole in the W FIFO whose AW has not left: at most the AW FIFO's depth.
    let whole = m.reg("w_whole", clog2(u64::from(W_INFO) + 1), 0);
    m.comment(
        whole.q,
        "bursts packed whole whose wide AW has not left yet",
    );
    let aw_valid = m.bind_out(u_aw, "m_valid_o");
    let aw_word = m.bind_out(u_aw, "m_data_o");
    let u_binfo = m.instance("u_b_info", &b_info);
    let binfo_room = m.bind_out(u_binfo, "s_ready_o");
    let maw_ok = m.net("m_aw_ok", aw_valid & whole.q.ne(0) & binfo_room);
    m.comment(
        maw_ok,
        "the head AW's burst is whole in the W FIFO and a B info slot is free",
    );
    m.assign(m_awvalid, maw_ok);
    m.assign(m_awaddr, aw_word.slice(63, 0));
    m.assign(m_awlen, aw_word.slice(71, 64));
    m.assign(m_awsize, lit(3, u128::from(lgw)));
    m.assign(m_awburst, lit(2, 1));
    m.assign(m_awid, lit(iw, 0));
    let maw_fire = m.net("m_aw_fire", maw_ok & m_awready);
    m.bind(u_aw, "m_ready_i", maw_fire);
    m.bind(u_binfo, "s_valid_i", maw_fire);
    m.bind(u_binfo, "s_data_i", aw_word.slice(aww - 1, 72));
    m.assign(
        whole.d,
        whole.q + w_burst_end.zext(whole.q.width()) - maw_fire.zext(whole.q.width()),
    );
    let wf_valid = m.bind_out(u_wf, "m_valid_o");
    let wf_word = m.bind_out(u_wf, "m_data_o");
    // W beats are offered only for bursts packed whole, so a slave that takes W before AW
    // cannot make a burst trickle either.
    let sendable = m.reg("w_sendable", clog2(u64::from(wdepth) + 1), 0);
    m.comment(sendable.q, "bursts packed whole whose WLAST has not left");
    let w_sent = m.net(
        "w_sent",
        wf_valid & sendable.q.ne(0) & m_wready & wf_word.bit(wfw - 1),
    );
    m.assign(
        sendable.d,
        sendable.q + w_burst_end.zext(sendable.q.width()) - w_sent.zext(sendable.q.width()),
    );
    m.assign(m_wvalid, wf_valid & sendable.q.ne(0));
    m.assign(m_wdata, wf_word.slice(ww - 1, 0));
    m.assign(m_wstrb, wf_word.slice(ww + wb - 1, ww));
    m.assign(m_wlast, wf_word.bit(wfw - 1));
    m.bind(u_wf, "m_ready_i", m_wready & sendable.q.ne(0));

    // ---------------------------------------------------------------- B
    let binfo_valid = m.bind_out(u_binfo, "m_valid_o");
    let binfo = m.bind_out(u_binfo, "m_data_o");
    m.assign(s_bvalid, binfo_valid & m_bvalid);
    m.assign(s_bresp, m_bresp);
    m.assign(s_bid, binfo);
    m.assign(m_bready, binfo_valid & s_bready);
    m.bind(u_binfo, "m_ready_i", binfo_valid & m_bvalid & s_bready);
    m.finish()
}
