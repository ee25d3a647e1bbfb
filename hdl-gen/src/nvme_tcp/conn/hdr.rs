//! The received PDU header: its fields by PDU type and the checks on them (ICResp, CapsuleResp,
//! C2HData, R2T, C2HTermReq), in the order `mod.rs` states.

use super::rx::Rx;
use super::{byte, bytes, pick_lowest, Ctx};
use hdl_builder::prelude::*;

/// What the later parts read.
#[derive(Clone, Copy)]
pub(super) struct Hdr {
    pub(super) h_type: Sig,
    pub(super) h_flags: Sig,
    pub(super) h_hlen: Sig,
    pub(super) t_icresp: Sig,
    pub(super) t_term: Sig,
    pub(super) t_resp: Sig,
    pub(super) t_data: Sig,
    pub(super) t_r2t: Sig,
    pub(super) hd4: Sig,
    pub(super) dd4: Sig,
    pub(super) chk_fail: Sig,
    pub(super) chk_fes: Sig,
    pub(super) chk_fei: Sig,
    pub(super) ic_pfv: Sig,
    pub(super) ic_cpda: Sig,
    pub(super) ic_dgst: Sig,
    pub(super) ic_maxh2c: Sig,
    pub(super) ic_bad_dgst: Sig,
    pub(super) ic_cap_pdo: Sig,
    pub(super) ic_pdo: Sig,
    pub(super) r_dw0: Sig,
    pub(super) r_status: Sig,
    pub(super) c_datao: Sig,
    pub(super) c_datal: Sig,
    pub(super) r_ttag: Sig,
    pub(super) hit: Sig,
    pub(super) hit_idx: Sig,
    pub(super) dhit: Sig,
    pub(super) dhit_idx: Sig,
    pub(super) whit: Sig,
    pub(super) whit_idx: Sig,
    pub(super) r_range_bad: Sig,
    pub(super) r_busy: Sig,
    pub(super) c_range_bad: Sig,
    pub(super) c_datal_bad: Sig,
    pub(super) c_too_big: Sig,
    pub(super) in_act: Sig,
    pub(super) dgst_bad: Sig,
}

pub(super) fn checks(m: &mut ModuleBuilder, cx: &Ctx, ri: &Rx) -> Hdr {
    let p = cx.p;
    let Ctx {
        d,
        sw,
        asked,
        connected,
        hd,
        dd,
        slot_valid,
        ref slot_cid,
        slot_read,
        slot_write,
        slot_r2t,
        ref slot_len,
        slot_resp,
        ..
    } = *cx;
    let Rx {
        ref rx_st,
        rst,
        hdr,
        dg,
        rcrc,
        ..
    } = *ri;
    // Common header fields (valid in RX_CHK and later).
    let h_type = m.net("h_type", byte(hdr.q, 0));
    let h_flags = m.net("h_flags", byte(hdr.q, 1));
    let h_hlen = m.net("h_hlen", byte(hdr.q, 2));
    let h_pdo = m.net("h_pdo", byte(hdr.q, 3));
    let h_plen = m.net("h_plen", bytes(hdr.q, 4, 4));
    let t_icresp = m.net("t_icresp", h_type.eq(0x01u64));
    let t_term = m.net("t_term", h_type.eq(0x03u64));
    let t_resp = m.net("t_resp", h_type.eq(0x05u64));
    let t_data = m.net("t_data", h_type.eq(0x07u64));
    let t_r2t = m.net("t_r2t", h_type.eq(0x09u64));
    let hd_flag = m.net("hd_flag", hd.q.zext(8));
    let dg_flags = m.net("dg_flags", cat([zeros(6), dd.q.ex(), hd.q.ex()]));
    let hd4 = m.net("hd_bytes", cat([zeros(29), hd.q.ex(), zeros(2)]));
    let dd4 = m.net("dd_bytes", cat([zeros(29), dd.q.ex(), zeros(2)]));
    let resp_plen = m.net("resp_plen", lit(32, 24) + hd4);
    let data_pdo = m.net("data_pdo", lit(8, 24) + hd4.slice(7, 0));
    m.comment(
        data_pdo,
        "the C2HData's PDO: HPDA is 0, so the data follows the header digest",
    );
    // (FES, FEI) of the first failing check of the common header, or none.
    let chk_fail = m.wire("chk_fail", 1);
    let chk_fes = m.wire("chk_fes", 16);
    let chk_fei = m.wire("chk_fei", 32);
    let want_hlen = m.net("chk_hlen", mux(t_icresp, lit(8, 128), lit(8, 24)));
    let flags_bad = m.net(
        "chk_flags_bad",
        mux(
            t_data,
            (h_flags & 0xf3u64).ne(dg_flags) | (h_flags.bit(3) & !h_flags.bit(2)),
            h_flags.ne(mux(t_resp | t_r2t, hd_flag, lit(8, 0))),
        ),
    );
    m.comment(
        flags_bad,
        "digest flags as negotiated; a C2HData may add LAST_PDU, and SUCCESS only with LAST_PDU",
    );
    let pdo_bad = m.net("chk_pdo_bad", h_pdo.ne(mux(t_data, data_pdo, lit(8, 0))));
    let plen_bad = m.net(
        "chk_plen_bad",
        (t_icresp & h_plen.ne(128u64))
            | ((t_resp | t_r2t) & h_plen.ne(resp_plen))
            | (t_term & (h_plen.lt(24u64) | h_plen.gt(152u64)))
            | (t_data & h_plen.le(data_pdo.zext(32) + dd4)),
    );
    m.comb(|c| {
        c.set(chk_fail, 1u64);
        c.set(chk_fes, 0x01u64);
        c.set(chk_fei, 0u64);
        c.if_(!(t_icresp | t_term | t_resp | t_data | t_r2t), |_| {})
            .else_if(
                (t_icresp & connected.q) | ((t_resp | t_data | t_r2t) & !connected.q),
                |c| c.set(chk_fes, 0x02u64),
            )
            .else_if(h_hlen.ne(want_hlen), |c| c.set(chk_fei, 2u64))
            .else_if(flags_bad, |c| c.set(chk_fei, 1u64))
            .else_if(pdo_bad, |c| c.set(chk_fei, 3u64))
            .else_if(plen_bad, |c| c.set(chk_fei, 4u64))
            .else_(|c| c.set(chk_fail, 0u64));
    });

    // ICResp fields.
    let ic_pfv = m.net("ic_pfv", bytes(hdr.q, 8, 2));
    let ic_cpda = m.net("ic_cpda", byte(hdr.q, 10));
    let ic_dgst = m.net("ic_dgst", byte(hdr.q, 11));
    let ic_maxh2c = m.net("ic_maxh2cdata", bytes(hdr.q, 12, 4));
    m.unused("ic_dgst_rsvd", ic_dgst.slice(7, 2));
    let ic_bad_dgst = m.net("ic_bad_dgst", (ic_dgst.slice(1, 0) & !asked).ne(0u64));
    let ic_cap_pdo = m.wire("ic_capsule_pdo", 8);
    m.comment(
        ic_cap_pdo,
        "CapsuleCmd PDO with in-capsule data: header (and digest) rounded up to (CPDA + 1) * 4",
    );
    let ic_pdo = m.wire("ic_h2c_pdo", 8);
    m.comment(
        ic_pdo,
        "H2CData PDO: header (and header digest) rounded up to (CPDA + 1) * 4 bytes",
    );
    m.comb(|c| {
        c.set(ic_pdo, 24u64);
        c.set(ic_cap_pdo, 72u64);
        c.case(cat([ic_dgst.bit(0), ic_cpda.slice(4, 0)]), |k| {
            for hdv in 0..2u32 {
                for cpda in 0..32u32 {
                    let a = (cpda + 1) * 4;
                    let pdo = (24 + 4 * hdv).div_ceil(a) * a;
                    let cap = (72 + 4 * hdv).div_ceil(a) * a;
                    k.arm(lit(6, u128::from(hdv << 5 | cpda)), |c| {
                        c.set(ic_pdo, u64::from(pdo));
                        c.set(ic_cap_pdo, u64::from(cap));
                    });
                }
            }
            k.default(|c| {
                c.set(ic_pdo, 24u64);
                c.set(ic_cap_pdo, 72u64);
            });
        });
    });
    // CapsuleResp fields: CQE DW0, CID, status.
    let r_dw0 = m.net("resp_dw0", bytes(hdr.q, 8, 4));
    let r_cid = m.net("resp_cid", bytes(hdr.q, 20, 2));
    let r_status = m.net("resp_status", hdr.q.slice(191, 177));
    m.unused("resp_rsvd", cat([hdr.q.bit(176), hdr.q.slice(159, 96)]));
    // C2HData fields: CCCID, TTAG (ignored for C2HData), DATAO, DATAL.
    let c_cid = m.net("c2h_cccid", bytes(hdr.q, 8, 2));
    let c_datao = m.net("c2h_datao", bytes(hdr.q, 12, 4));
    let c_datal = m.net("c2h_datal", bytes(hdr.q, 16, 4));
    let r_ttag = m.net("r2t_ttag", bytes(hdr.q, 10, 2));
    m.comment(
        r_ttag,
        "TTAG: echoed in the R2T's H2CData (ignored for C2HData)",
    );
    let open = m.net("slot_open", slot_valid.q & !slot_resp.q);
    m.comment(open, "slots whose command still waits for its answer");
    let hit = m.net(
        "resp_hit",
        cat((0..d)
            .rev()
            .map(|i| open.bit(i) & slot_cid[i as usize].q.eq(r_cid))),
    );
    let hit_idx = pick_lowest(m, "resp_hit_idx", hit, d, sw);
    let dhit = m.net(
        "c2h_hit",
        cat((0..d)
            .rev()
            .map(|i| open.bit(i) & slot_read.q.bit(i) & slot_cid[i as usize].q.eq(c_cid))),
    );
    let dhit_idx = pick_lowest(m, "c2h_hit_idx", dhit, d, sw);
    let slot_len_of = |idx: Sig| -> Expr {
        let mut e: Expr = slot_len[0].q.ex();
        for i in 1..d {
            e = mux(idx.eq(u64::from(i)), slot_len[i as usize].q, e);
        }
        e
    };
    let dlen_of_hit = m.net("c2h_cmd_len", slot_len_of(dhit_idx));
    let c_end = m.net("c2h_end", c_datao.zext(33) + c_datal.zext(33));
    // R2T: CCCID, TTAG, R2TO and R2TL sit where C2HData has CCCID, TTAG, DATAO and DATAL.
    let whit = m.net(
        "r2t_hit",
        cat((0..d)
            .rev()
            .map(|i| open.bit(i) & slot_write.q.bit(i) & slot_cid[i as usize].q.eq(c_cid))),
    );
    let whit_idx = pick_lowest(m, "r2t_hit_idx", whit, d, sw);
    let wlen_of_hit = m.net("r2t_cmd_len", slot_len_of(whit_idx));
    let r_range_bad = m.net(
        "r2t_out_of_range",
        c_datal.eq(0u64) | c_end.gt(wlen_of_hit.zext(33)),
    );
    m.comment(
        r_range_bad,
        "R2TL is 0, or R2TO + R2TL runs past the command's data",
    );
    let r_busy = m.net("r2t_busy", slot_r2t.q.shr_by(whit_idx).bit(0));
    m.comment(
        r_busy,
        "the command's previous R2T is not answered yet (MAXR2T 0): PDU sequence error",
    );
    let c_range_bad = m.net("c2h_out_of_range", c_end.gt(dlen_of_hit.zext(33)));
    let c_datal_bad = m.net(
        "c2h_datal_bad",
        c_datal.eq(0u64) | c_datal.ne(h_plen - data_pdo.zext(32) - dd4),
    );
    m.comment(
        c_datal_bad,
        "DATAL is 0, or is not what PLEN leaves for the payload",
    );
    let c_too_big = m.net("c2h_too_big", dd.q & c_datal.gt(u64::from(p.hold_bytes)));
    m.comment(
        c_too_big,
        "with data digests the payload is held whole: at most the hold buffer",
    );
    let in_act = m.net("rx_in_act", rst.q.eq(rx_st.item("RX_ACT")));
    let dgst_bad = m.net(
        "rx_dgst_bad",
        (t_resp | t_data | t_r2t) & hd.q & dg.q.ne(rcrc),
    );
    Hdr {
        h_type,
        h_flags,
        h_hlen,
        t_icresp,
        t_term,
        t_resp,
        t_data,
        t_r2t,
        hd4,
        dd4,
        chk_fail,
        chk_fes,
        chk_fei,
        ic_pfv,
        ic_cpda,
        ic_dgst,
        ic_maxh2c,
        ic_bad_dgst,
        ic_cap_pdo,
        ic_pdo,
        r_dw0,
        r_status,
        c_datao,
        c_datal,
        r_ttag,
        hit,
        hit_idx,
        dhit,
        dhit_idx,
        whit,
        whit_idx,
        r_range_bad,
        r_busy,
        c_range_bad,
        c_datal_bad,
        c_too_big,
        in_act,
        dgst_bad,
    }
}
