//! The RDMA READ responder of the RoCEv2 engine (host Writes): a READ request the receiver
//! accepted (or a duplicate it replays) becomes a job; the job's host memory window is read by
//! one windowed DMA command and streamed out as READ response frames (First / Middle / Last,
//! or Only), segmented at the QP's MTU, with the ICRC computed as the frame streams. Rules in
//! `mod.rs` ("RDMA READ").
//!
//! A command capsule with in-capsule data (`mod.rs`, "In-capsule data") is a job of the same
//! queue: its data is read by one DMA command and sent as one SEND Only of the 64-byte SQE
//! followed by the data. Sharing the queue keeps `m_data` in the order of the DMA commands.
//!
//! Streaming: the frame is produced in beats `A(a)` of frame bytes `8a - 2 .. 8a + 6` (so
//! `A(a)`, `a >= 2`, is exactly the ICRC input beat at frame byte `14 + 8(a - 2)`); the CRC
//! takes `A(a)` as it enters register `B` (the older one moves to `C`), and the output beat
//! `a - 2` is `C` lanes 2-7 followed by `B` lanes 0-1, so every byte before the ICRC has gone
//! through the CRC when the ICRC's beat leaves. The payload (DMA `m_data`, packed from lane 0)
//! starts at frame byte 54 (Middle: `A` lanes 0-7 of one `m_data` beat), 58 (with an AETH:
//! lanes 4-7 of this beat and 0-3 of the previous one, kept in `carry`) or 118 (a capsule: the
//! BTH and the SQE before it, lanes 0-7 again): one beat in, one beat out, a cycle per frame to
//! load its header.
//!
//! `m_data` goes through a FIFO of two frames' payload (`2 * roce.mtu` bytes): a frame is
//! loaded only once its whole payload is in it, so a frame never stalls mid-way on host
//! memory (a MAC takes a frame's beats back to back), while the next frame's data comes in
//! as this one leaves.

use super::frame::{be, byte, icrc_byte, ip_checksum, net_bytes, NetFields, ICRC_MASKED};
use super::RoceParams;
use crate::blocks::crc::{crc, CRC32};
use crate::blocks::fifo::fifo;
use hdl_builder::prelude::*;
use hdl_builder::Errors;

/// What the responder needs of one QP (CSRs and live state).
#[derive(Clone, Copy)]
pub struct RespQp {
    pub lmac: Sig,
    pub rmac: Sig,
    pub lip: Sig,
    pub rip: Sig,
    pub pkey: Sig,
    pub rqpn: Sig,
    /// Path MTU in bytes [13].
    pub mtu: Sig,
    /// Messages received [24] (the AETH's MSN).
    pub msn: Sig,
    /// The QP's pending ACK: valid and its PSN (held while a READ response before it is due).
    pub ack_pend: Sig,
    pub ack_psn: Sig,
}

/// The signals the responder takes from the engine.
pub struct RespIn {
    pub qps: Vec<RespQp>,
    /// A READ request becomes a job this cycle, with its QP, slot, PSN, VA [24] and length [24],
    /// (both DMA length width: the bounds check keeps them inside the command's data)
    /// and its command's data pointer, PSDT bit and data length (DMA length width).
    pub accept: Sig,
    pub qp: Sig,
    pub slot: Sig,
    pub psn: Sig,
    pub va: Sig,
    pub len: Sig,
    pub dptr: Sig,
    pub sgl: Sig,
    pub dlen: Sig,
    /// A command capsule with in-capsule data becomes a job this cycle (never with `accept`):
    /// its QP, slot, PSN, data length (DMA length width, at most the QP's MTU - 64), its
    /// command's own data pointer and PSDT bit.
    pub cap_accept: Sig,
    pub cap_qp: Sig,
    pub cap_slot: Sig,
    pub cap_psn: Sig,
    pub cap_len: Sig,
    pub cap_dptr: Sig,
    pub cap_sgl: Sig,
    /// The capsule SQE (as sent) of slot `RespOut::cur_slot` of QP `RespOut::cur_qp`.
    pub cap_sqe: Sig,
    /// IPv4 TOS of the frames [8].
    pub tos: Sig,
    /// The frame buffer path is sending.
    pub tbuf_busy: Sig,
    /// An ACK not held back wants the transmitter.
    pub ack_any: Sig,
    /// A CNP or a capsule of the frame buffer waits: it goes before the next frame.
    pub others_first: Sig,
    pub axis_ready: Sig,
    /// The DMA engine takes a command (and the WRITE path does not offer one).
    pub cmd_ready: Sig,
    pub md_valid: Sig,
    pub md_data: Sig,
    pub md_keep: Sig,
    pub md_last: Sig,
}

/// The signals the responder gives back.
pub struct RespOut {
    /// A READ request or a capsule job cannot be taken now (both jobs taken or a DMA command
    /// waiting).
    pub full: Sig,
    /// A capsule job is queued: the frame buffer's capsules wait (PSN order).
    pub cap_queued: Sig,
    /// The current job's QP and slot (its capsule SQE comes back as `RespIn::cap_sqe`).
    pub cur_qp: Sig,
    pub cur_slot: Sig,
    /// Bit q: QP q's pending ACK waits for a READ response before it.
    pub ack_hold: Sig,
    /// The responder holds the transmitter (loading or streaming a frame), and streams one.
    pub tx: Sig,
    pub on: Sig,
    pub cmd_valid: Sig,
    pub cmd_fire: Sig,
    pub cmd_tag: Sig,
    pub cmd_sgl: Sig,
    pub cmd_dptr: Sig,
    pub cmd_len: Sig,
    pub cmd_off: Sig,
    pub cmd_wlen: Sig,
    pub md_ready: Sig,
    pub valid: Sig,
    pub data: Sig,
    pub keep: Sig,
    pub last: Sig,
    /// Bytes of the beat leaving now (0 when none).
    pub beat_bytes: Sig,
    /// A frame's last beat leaves (a READ response or a capsule).
    pub frame_done: Sig,
    /// A READ response frame's last beat leaves.
    pub resp_done: Sig,
}

/// PSNs a READ of `len` [24] bytes takes at path MTU `mtu` [13] (a power of two up to
/// `p.mtu`): ceil(len / mtu), at least 1.
pub fn psn_span(m: &mut ModuleBuilder, p: &RoceParams, len: Expr, mtu: Sig) -> Sig {
    let mut e = lit(24, 1);
    let mut size = 256u32;
    while size <= p.mtu {
        let k = size.trailing_zeros();
        let n = (len.zext(25) + u64::from(size - 1)).slice(24, k).zext(24);
        e = mux(mtu.eq(u64::from(size)), n, e);
        size *= 2;
    }
    let e = m.net("rr_span_raw", e);
    m.net("rr_span", mux(e.eq(0u64), lit(24, 1), e.ex()))
}

/// Jobs: the one being sent and those queued behind it, whose data the DMA engine fetches
/// ahead into the payload FIFO.
const JOBS: usize = 4;

/// Header bytes kept: Ethernet to the end of a capsule's SQE (118), up to the beat `A(15)`
/// where its data starts.
const HDR: u32 = 120;

/// Builds the responder into `m`. `tag_qp_bits` and `sw` size the DMA tag `{qp, slot}`; `l` is
/// the DMA length width.
pub fn responder(
    m: &mut ModuleBuilder,
    p: &RoceParams,
    x: &RespIn,
    sw: u32,
    l: u32,
    reset: ResetStyle,
) -> Result<RespOut, Errors> {
    let nq = p.qps;
    let qw = clog2(u64::from(nq)).max(1);
    let sel = |idx: &Expr, f: &dyn Fn(&RespQp) -> Expr| -> Expr {
        let mut e = f(&x.qps[0]);
        for (q, r) in x.qps.iter().enumerate().skip(1) {
            e = mux(idx.eq(q as u64), f(r), e);
        }
        e
    };

    // ---- jobs: cur (being sent) and the queue behind it
    struct Job {
        v: Reg,
        qp: Reg,
        psn0: Reg,
        psn: Reg,
        left: Reg,
        first: Reg,
        cap: Reg,
        slot: Reg,
    }
    let job = |m: &mut ModuleBuilder, n: &str| Job {
        v: m.reg(&format!("rr_{n}_valid"), 1, 0),
        qp: m.reg(&format!("rr_{n}_qp"), qw, 0),
        psn0: m.reg(&format!("rr_{n}_psn0"), 24, 0),
        psn: m.reg(&format!("rr_{n}_psn"), 24, 0),
        left: m.reg(&format!("rr_{n}_left"), 24, 0),
        first: m.reg(&format!("rr_{n}_first"), 1, 0),
        cap: m.reg(&format!("rr_{n}_capsule"), 1, 0),
        slot: m.reg(&format!("rr_{n}_slot"), sw, 0),
    };
    // The payload FIFO: `md_valid`/`md_data` below are its head.
    let depth = p.mtu / 4;
    let fifo_mod = fifo(64, depth, true, reset)?;
    let u_fifo = m.instance("u_rr_fifo", &fifo_mod);
    m.bind(u_fifo, "s_valid_i", x.md_valid);
    m.bind(u_fifo, "s_data_i", x.md_data);
    let md_ready = m.bind_out(u_fifo, "s_ready_o");
    let md_valid = m.bind_out(u_fifo, "m_valid_o");
    let md_data = m.bind_out(u_fifo, "m_data_o");
    let held = m.bind_out(u_fifo, "count_o");
    m.comment(
        held,
        "payload beats in the FIFO (two frames' worth at most)",
    );
    let mut jobs = vec![job(m, "cur")];
    m.comment(
        jobs[0].v.q,
        "the job being sent (a READ's responses or a capsule with data)",
    );
    for i in 1..JOBS {
        let j = job(m, &format!("next{i}"));
        m.comment(
            j.v.q,
            "a job queued behind it, in order (its DMA command already issued)",
        );
        jobs.push(j);
    }
    let cur = &jobs[0];
    let rc_v = m.reg("rr_cmd_pending", 1, 0);
    m.comment(rc_v.q, "a job's DMA command waits for s_cmd");
    let tw = x.qp.width() + sw;
    let rc_tag = m.reg("rr_cmd_tag", tw, 0);
    let rc_sgl = m.reg("rr_cmd_sgl", 1, 0);
    let rc_dptr = m.reg("rr_cmd_dptr", 128, 0);
    let rc_len = m.reg("rr_cmd_len", l, 0);
    let rc_off = m.reg("rr_cmd_off", l, 0);
    let rc_wlen = m.reg("rr_cmd_win_len", l, 0);
    let full = m.net("rr_full", jobs[JOBS - 1].v.q | rc_v.q);
    // The new job (a READ, or a capsule with data: never both in one cycle).
    let nj_qp = m.net("rr_new_qp", mux(x.cap_accept, x.cap_qp, x.qp));
    let nj_slot = m.net("rr_new_slot", mux(x.cap_accept, x.cap_slot, x.slot));
    let nj_psn = m.net("rr_new_psn", mux(x.cap_accept, x.cap_psn, x.psn));
    let nj_len = m.net("rr_new_len", mux(x.cap_accept, x.cap_len, x.len));
    let cmd_fire = m.net("rr_cmd_fire", rc_v.q & x.cmd_ready);
    m.comb(|c| {
        c.set(rc_v.d, rc_v.q & !x.cmd_ready);
        for r in [rc_tag, rc_sgl, rc_dptr, rc_len, rc_off, rc_wlen] {
            c.set(r.d, r.q);
        }
        c.if_((x.accept & x.len.ne(0u64)) | x.cap_accept, |c| {
            c.set(rc_v.d, 1u64);
            c.set(rc_tag.d, cat([nj_qp.ex(), nj_slot.ex()]));
            c.set(rc_sgl.d, mux(x.cap_accept, x.cap_sgl, x.sgl));
            c.set(rc_dptr.d, mux(x.cap_accept, x.cap_dptr, x.dptr));
            c.set(rc_len.d, mux(x.cap_accept, x.cap_len, x.dlen));
            c.set(rc_off.d, mux(x.cap_accept, lit(l, 0), x.va.ex()));
            c.set(rc_wlen.d, nj_len);
        });
    });
    // Hold a QP's ACK while a job of that QP at or before its PSN is due.
    let mut bits = Vec::new();
    for q in 0..nq {
        let r = x.qps[q as usize];
        // 24-bit serial order: the ACK's PSN is the job's first PSN or after it.
        let after = |j: &Job| {
            j.v.q & !j.cap.q & j.qp.eq(u64::from(q)) & (r.ack_psn - j.psn0.q).lt(0x80_0000u64)
        };
        let b = jobs.iter().fold(lit(1, 0), |e, j| e | after(j));
        bits.push(r.ack_pend & b);
    }
    let hold = m.net("rr_ack_hold", cat(bits.into_iter().rev()));

    // ---- the packet: loaded from cur, streamed
    let on = m.reg("rr_on", 1, 0);
    m.comment(on.q, "a READ response frame is loaded and streams");
    let hdr = m.reg("rr_hdr", HDR * 8, 0);
    m.comment(
        hdr.q,
        "its header bytes (Ethernet to AETH), byte 0 in bits 7:0",
    );
    let aeth = m.reg("rr_aeth", 1, 0);
    let capf = m.reg("rr_capsule", 1, 0);
    m.comment(capf.q, "the frame is a capsule (SEND Only, SQE and data)");
    let plen = m.reg("rr_plen", 13, 0);
    m.comment(plen.q, "its payload bytes");
    let flen = m.reg("rr_flen", 13, 0);
    m.comment(flen.q, "its length in bytes (Ethernet header to ICRC)");
    let a = m.reg("rr_a", 10, 0);
    m.comment(
        a.q,
        "next beat A(a) to make: frame bytes 8a-2 .. 8a+5 (the output shows beat a-2)",
    );
    let bq = m.reg("rr_b", 64, 0);
    let cq = m.reg("rr_c", 64, 0);
    let carry = m.reg("rr_carry", 32, 0);
    m.comment(
        carry.q,
        "lanes 4-7 of the last payload beat taken (AETH frames)",
    );
    let ov = m.reg("rr_out_valid", 1, 0);

    let q_mtu = m.net("rr_mtu", sel(&cur.qp.q.ex(), &|r| r.mtu.ex()));
    let last_pkt = m.net("rr_last_packet", cur.left.q.le(q_mtu.zext(24)));
    let n_pay = m.net(
        "rr_next_plen",
        mux(last_pkt, cur.left.q.slice(12, 0), q_mtu.ex()),
    );
    let n_aeth = m.net("rr_next_aeth", !cur.cap.q & (cur.first.q | last_pkt));
    let n_opc = m.net(
        "rr_next_opcode",
        mux(
            cur.cap.q,
            lit(8, 0x04),
            mux(
                cur.first.q & last_pkt,
                lit(8, 0x10),
                mux(
                    cur.first.q,
                    lit(8, 0x0d),
                    mux(last_pkt, lit(8, 0x0f), lit(8, 0x0e)),
                ),
            ),
        ),
    );
    let n_pad = m.net("rr_next_pad", (lit(2, 0) - n_pay.slice(1, 0)).ex());
    let n_flen = m.net(
        "rr_next_flen",
        n_pay
            + n_pad.zext(13)
            + mux(
                cur.cap.q,
                lit(13, 122),
                mux(n_aeth, lit(13, 62), lit(13, 58)),
            ),
    );
    let ip_len = m.net("rr_next_ip_len", (n_flen - 14u64).zext(16));
    let udp_len = m.net("rr_next_udp_len", (n_flen - 34u64).zext(16));
    let cq_e = cur.qp.q.ex();
    let lip = m.net("rr_lip", sel(&cq_e, &|r| r.lip.ex()));
    let rip = m.net("rr_rip", sel(&cq_e, &|r| r.rip.ex()));
    let f = NetFields {
        rmac: sel(&cq_e, &|r| r.rmac.ex()),
        lmac: sel(&cq_e, &|r| r.lmac.ex()),
        lip: lip.ex(),
        rip: rip.ex(),
        ip_len: ip_len.ex(),
        udp_len: udp_len.ex(),
        sport: lit(16, 0xc000) + cur.qp.q.zext(16),
        tos: x.tos.ex(),
    };
    let sum = m.net("rr_ip_sum", ip_checksum(&f));
    let msn = m.net("rr_msn", sel(&cq_e, &|r| r.msn.ex()));
    m.comment(msn, "the current job's QP's MSN (its AETH)");
    let mut b: Vec<Expr> = net_bytes(&f, &sum.ex());
    b.push(n_opc.ex());
    b.push(cat([lit(2, 0), n_pad.ex(), lit(4, 0)]));
    b.extend(be(&sel(&cq_e, &|r| r.pkey.ex()), 2));
    b.push(lit(8, 0));
    b.extend(be(&sel(&cq_e, &|r| r.rqpn.ex()), 3));
    // AckReq on a capsule.
    b.push(cat([cur.cap.q.ex(), zeros(7)]));
    b.extend(be(&cur.psn.q.ex(), 3));
    // A capsule's SQE; else the AETH (ACK, the QP's MSN), where a Middle's payload starts
    // instead: the bytes after the header (`rr_hdr_end`) are not taken.
    let sqe = x.cap_sqe.ex();
    let aeth_b = [
        lit(8, 0x1f),
        byte(&msn.ex(), 2),
        byte(&msn.ex(), 1),
        byte(&msn.ex(), 0),
    ];
    for (i, a) in aeth_b.into_iter().enumerate() {
        b.push(mux(cur.cap.q, byte(&sqe, i as u32), a));
    }
    b.extend((4..64).map(|i| byte(&sqe, i)));
    let new_hdr = m.net(
        "rr_next_hdr",
        cat([zeros(HDR * 8 - 118 * 8), cat(b.into_iter().rev())]),
    );
    let n_beats = m.net("rr_next_beats", (n_pay + 7u64).slice(12, 3));
    let load = m.net(
        "rr_load",
        cur.v.q
            & !on.q
            & !x.tbuf_busy
            & !x.ack_any
            & !x.others_first
            & held
                .resize(held.width().max(10))
                .ge(n_beats.resize(held.width().max(10))),
    );
    m.comment(
        load,
        "the current job's next frame is loaded (its whole payload is in the FIFO)",
    );

    // ---- the beat A(a)
    let h_end = m.net(
        "rr_hdr_end",
        mux(capf.q, lit(13, 120), mux(aeth.q, lit(13, 60), lit(13, 56))),
    );
    m.comment(h_end, "frame offset + 2 of the payload's first byte");
    let p_end = m.net("rr_pay_end", h_end + plen.q);
    let n_d = m.net("rr_pay_beats", (plen.q + 7u64).slice(12, 3).zext(10));
    let n_out = m.net("rr_frame_beats", (flen.q + 7u64).slice(12, 3).zext(10));
    let a0 = m.net("rr_pay_a0", mux(capf.q, lit(10, 15), lit(10, 7)));
    m.comment(a0, "the beat A(a) that takes the first payload beat");
    let ai = m.net("rr_pay_index", a.q - a0);
    let need_d = m.net("rr_need_data", a.q.ge(a0) & ai.lt(n_d));
    m.comment(need_d, "A(a) takes a payload beat from m_data");
    let a_avail = m.net("rr_a_ready", !need_d | md_valid);
    let step = m.net(
        "rr_step",
        on.q & a.q.le(n_out) & (!ov.q | x.axis_ready) & a_avail,
    );
    let hx = m.net(
        "rr_hdr_beat",
        cat([hdr.q.ex(), zeros(16)])
            .shr_by(cat([a.q.ex(), zeros(6)]))
            .slice(63, 0),
    );
    let d = md_data.ex();
    let lanes: Vec<Expr> = (0..8u32)
        .map(|l| {
            let g = cat([a.q.ex(), lit(3, u128::from(l))]).zext(13);
            let pay = if l >= 4 {
                mux(aeth.q, byte(&d, l - 4), byte(&d, l))
            } else {
                mux(aeth.q, byte(&carry.q.ex(), l), byte(&d, l))
            };
            mux(
                g.lt(h_end),
                byte(&hx.ex(), l),
                mux(g.lt(p_end), pay, lit(8, 0)),
            )
        })
        .collect();
    let abeat = m.net("rr_a_beat", cat(lanes.into_iter().rev()));
    // CRC: the pseudo-header (8 bytes of FFh) with A(1), then A(2) on, masked, up to the ICRC.
    let masked: Vec<Expr> = (0..8u32)
        .map(|l| {
            let mut e = byte(&abeat.ex(), l);
            for &f in ICRC_MASKED.iter().filter(|&&f| (f + 2) % 8 == l) {
                e = mux(a.q.eq(u64::from((f + 2) / 8)), ones(8), e);
            }
            e
        })
        .collect();
    let crc_end = m.net("rr_crc_end", flen.q - 2u64);
    m.comment(crc_end, "frame offset + 2 of the ICRC");
    let g0 = m.net("rr_beat_at", cat([a.q.ex(), zeros(3)]).zext(13));
    let crc_n = m.net(
        "rr_crc_count",
        mux(
            crc_end.gt(g0),
            mux(
                (crc_end - g0).gt(8u64),
                lit(4, 8),
                (crc_end - g0).slice(3, 0),
            ),
            lit(4, 0),
        ),
    );
    let crc_mod = crc(&CRC32, 64, reset)?;
    let u_crc = m.instance("u_rr_crc", &crc_mod);
    let first_crc = m.net("rr_crc_start", step & a.q.eq(1u64));
    m.bind(u_crc, "start_i", first_crc);
    m.bind(u_crc, "valid_i", step & a.q.ne(0u64));
    m.bind(
        u_crc,
        "data_i",
        mux(first_crc, ones(64), cat(masked.into_iter().rev())),
    );
    let keep_n = m.net(
        "rr_crc_keep",
        (lit(9, 1).shl_by(crc_n.ex()) - 1u64).slice(7, 0),
    );
    m.bind(u_crc, "keep_i", mux(first_crc, ones(8), keep_n));
    let crc_o = m.bind_out(u_crc, "crc_o");

    // ---- the output beat a-2: C lanes 2-7, B lanes 0-1, the ICRC in its place
    let k = m.net("rr_out_beat", a.q - 2u64);
    let icrc_at = m.net("rr_icrc_at", flen.q - 4u64);
    let obytes: Vec<Expr> = (0..8u32)
        .map(|l| {
            let raw = if l < 6 {
                byte(&cq.q.ex(), l + 2)
            } else {
                byte(&bq.q.ex(), l - 6)
            };
            let o = cat([k.ex(), lit(3, u128::from(l))]).zext(13);
            let off = (o.clone() - icrc_at).slice(1, 0);
            let ib = icrc_byte(&crc_o.ex(), &off);
            mux(o.ge(icrc_at), ib, raw)
        })
        .collect();
    let out_at = m.net("rr_out_at", cat([k.ex(), zeros(3)]).zext(13));
    let left_out = m.net("rr_out_left", flen.q - out_at);
    let out_last = m.net("rr_out_last", left_out.le(8u64));
    let out_keep = m.net(
        "rr_out_keep",
        mux(
            out_last,
            (lit(9, 1).shl_by(left_out.slice(3, 0)) - 1u64).slice(7, 0),
            ones(8),
        ),
    );
    let fire = m.net("rr_fire", ov.q & x.axis_ready);
    let done = m.net("rr_frame_done", fire & out_last);
    let beat_bytes = m.net(
        "rr_beat_bytes",
        mux(
            fire,
            mux(out_last, left_out.slice(3, 0), lit(4, 8)),
            lit(4, 0),
        ),
    );
    let fin = m.net("rr_job_done", done & last_pkt);
    m.comment(fin, "the job's last frame left");

    m.comb(|c| {
        c.set(on.d, on.q);
        c.set(hdr.d, hdr.q);
        c.set(aeth.d, aeth.q);
        c.set(capf.d, capf.q);
        c.set(plen.d, plen.q);
        c.set(flen.d, flen.q);
        c.set(a.d, a.q);
        c.set(bq.d, bq.q);
        c.set(cq.d, cq.q);
        c.set(carry.d, carry.q);
        c.set(ov.d, ov.q & !fire);
        c.if_(load, |c| {
            c.set(on.d, 1u64);
            c.set(hdr.d, new_hdr);
            c.set(aeth.d, n_aeth);
            c.set(capf.d, cur.cap.q);
            c.set(plen.d, n_pay);
            c.set(flen.d, n_flen);
            c.set(a.d, 1u64);
            c.set(bq.d, cat([new_hdr.slice(47, 0), zeros(16)]));
            c.set(ov.d, 0u64);
        });
        c.if_(step, |c| {
            c.set(a.d, a.q + 1u64);
            c.set(bq.d, abeat);
            c.set(cq.d, bq.q);
            c.set(ov.d, a.q.ge(1u64));
            c.if_(need_d, |c| c.set(carry.d, md_data.slice(63, 32)));
        });
        c.if_(done, |c| c.set(on.d, 0u64));
    });
    m.unused("rr_md_tail", cat([x.md_keep.ex(), x.md_last.ex()]));

    // ---- job bookkeeping
    // A new job takes the first free place, counted after the queue moves up on `fin`.
    let new_job = m.net("rr_new_job", x.accept | x.cap_accept);
    let puts: Vec<Sig> = (0..JOBS)
        .map(|i| {
            let v = |k: usize| jobs[k].v.q.ex();
            let mut now = vec![!v(i)];
            let mut moved = Vec::new();
            if i > 0 {
                now.push(v(i - 1));
                moved.push(v(i));
            }
            if i + 1 < JOBS {
                moved.push(!v(i + 1));
            }
            let all = |t: Vec<Expr>| t.into_iter().reduce(|a, b| a & b).unwrap_or(lit(1, 1));
            let name = if i == 0 {
                "cur".to_string()
            } else {
                format!("next{i}")
            };
            m.net(
                &format!("rr_put_{name}"),
                new_job & mux(fin, all(moved), all(now)),
            )
        })
        .collect();
    // ---- job bookkeeping
    m.comb(|c| {
        for j in &jobs {
            c.set(j.v.d, j.v.q);
            c.set(j.qp.d, j.qp.q);
            c.set(j.psn0.d, j.psn0.q);
            c.set(j.psn.d, j.psn.q);
            c.set(j.left.d, j.left.q);
            c.set(j.first.d, j.first.q);
            c.set(j.cap.d, j.cap.q);
            c.set(j.slot.d, j.slot.q);
        }
        c.if_(done, |c| {
            c.set(cur.psn.d, cur.psn.q + 1u64);
            c.set(cur.left.d, cur.left.q - plen.q.zext(24));
            c.set(cur.first.d, 0u64);
        });
        // The current job's last frame left: the queue moves up one place.
        c.if_(fin, |c| {
            for w in jobs.windows(2) {
                let (to, from) = (&w[0], &w[1]);
                c.set(to.v.d, from.v.q);
                c.set(to.qp.d, from.qp.q);
                c.set(to.psn0.d, from.psn0.q);
                c.set(to.psn.d, from.psn.q);
                c.set(to.left.d, from.left.q);
                c.set(to.first.d, from.first.q);
                c.set(to.cap.d, from.cap.q);
                c.set(to.slot.d, from.slot.q);
            }
            c.set(jobs[JOBS - 1].v.d, 0u64);
        });
        for (j, put) in jobs.iter().zip(&puts) {
            c.if_(*put, |c| {
                c.set(j.v.d, 1u64);
                c.set(j.qp.d, nj_qp);
                c.set(j.psn0.d, nj_psn);
                c.set(j.psn.d, nj_psn);
                c.set(j.left.d, nj_len.zext(24));
                c.set(j.first.d, 1u64);
                c.set(j.cap.d, x.cap_accept);
                c.set(j.slot.d, nj_slot);
            });
        }
    });

    m.bind(u_fifo, "m_ready_i", step & need_d);
    let tx = m.net("rr_tx", on.q | load);
    let cap_queued = m.net(
        "rr_capsule_queued",
        jobs.iter().fold(lit(1, 0), |e, j| e | (j.v.q & j.cap.q)),
    );
    Ok(RespOut {
        full,
        cap_queued,
        cur_qp: cur.qp.q,
        cur_slot: cur.slot.q,
        ack_hold: hold,
        tx,
        on: on.q,
        cmd_valid: rc_v.q,
        cmd_fire,
        cmd_tag: rc_tag.q,
        cmd_sgl: rc_sgl.q,
        cmd_dptr: rc_dptr.q,
        cmd_len: rc_len.q,
        cmd_off: rc_off.q,
        cmd_wlen: rc_wlen.q,
        md_ready,
        valid: ov.q,
        data: m.net("rr_out_data", cat(obytes.into_iter().rev())),
        keep: out_keep,
        last: out_last,
        beat_bytes,
        frame_done: done,
        resp_done: m.net("rr_resp_done", done & !capf.q),
    })
}
