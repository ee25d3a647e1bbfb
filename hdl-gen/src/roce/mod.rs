//! The RoCEv2 transport engine (NVMe over RDMA), host side: NVMe command capsules out as RC
//! SENDs, response capsules in, over Ethernet/IPv4/UDP 4791 frames with the ICRC computed and
//! checked at line rate. Facts in ../shared/PROTOCOLS.md (RoCEv2); the frame format is the one
//! of `testbench/src/models/roce.rs` (checked byte for byte against scapy).
//!
//! What lives here:
//!
//! - `mod.rs`: the interface and the rules (this text), `RoceParams`
//! - `engine/`: the top `roce_w*`: `mod.rs` (ports, completions, QP state updates, counters),
//!   `csr.rs` (`roce_csr`), `qp.rs` (per-QP registers), `tx.rs` (transmit), `rx.rs` (receive)
//! - `frame.rs`: frame pieces both directions share (header bytes, IPv4 checksum, ICRC bytes)
//! - `read.rs`: the RDMA READ responder (and capsules with in-capsule data)
//! - `records.rs`: per-slot completion records
//! - `dcqcn.rs`, `cc.rs`: DCQCN, and what wires it and the RNR waits into the engine
//!
//! ```text
//!  io_cmd (SQE) --> [capsule: SGL rewritten] --+--> [frame builder + ICRC] --> m_axis (Ethernet)
//!  io_cpl <------- [CQE from a SEND] <--+      |  ACK / NAK per QP
//!                                       +-- [parser: headers, ICRC, QP, PSN] <-- s_axis (Ethernet)
//!                                       |        | payload buffer (store and forward)
//!                                       |        v
//!                                       +-- [RDMA WRITE: key, bounds] --> [dma_engine_win] --> m_axi
//!                                       +-- [RDMA READ: key, bounds] --> READ jobs -->  ^   |
//!         m_axis <-- [READ responses + ICRC, read.rs] <-- DMA read data (m_data) <------+---+
//!                   QP state and counters: roce_csr (AXI4-Lite)
//!   ECN 11 in -> [roce_dcqcn: CNP requests, rates, pacing] -> CNP out, capsules paced
//! ```
//!
//! # The engine: `roce_w<bits>_q<qps>_d<outstanding>`
//!
//! - `io_cmd`: `sqid` [16], `sqe` [512] (the chip-internal command stream). SQ id `q + 1` runs on
//!   queue pair `q`. A command for an SQ id without a QP, for a QP that is not enabled, or for a
//!   QP in error is taken and completes at once with Transient Transport Error (22h).
//!   `sq_space_o` [Q]: bit q, a command of SQ id q+1 is taken without waiting for a completion
//!   (a command slot is free, or it would be refused).
//! - `io_cpl`: `sqid` [16], `cid` [16], `status` [15], `dw0` [32]. Sources, in priority order:
//!   a completion record (a received response capsule whose command's DMA writes are all
//!   answered; lowest QP, then slot, first), the outstanding commands of a QP in error or
//!   disabled (22h), a refused command (22h).
//! - `m_axis` (transmit) and `s_axis` (receive): AXI4-Stream Ethernet frames without FCS,
//!   `tdata` [W], `tkeep` [W/8], `tlast`; bytes packed from lane 0, only the last beat short.
//! - `m_axi_*`, `mps_i` [4]: host memory, the AXI4 master of the embedded windowed DMA engine
//!   (`dma_engine_win_*`, tag `{qp, slot}`; its own counters are not on this top's CSR port),
//!   and CC.MPS for its PRP walks.
//! - `s_axil_*`: the CSRs (`roce_csr`, rtl/roce_csr.md): per QP the connection (local and
//!   remote QPN, MAC, IPv4 address, initial send and receive PSNs, MTU, P_Key, enable) and its
//!   live state (next send PSN, expected receive PSN, error); the counters; from 0x300 the
//!   congestion-control registers (`cc.rs`: CNP and ECN counters, the tick, the DCQCN
//!   parameters, per QP the rates and alpha read back and the RNR retry limit).
//!
//! # Transmit
//!
//! A command capsule is one SEND Only (opcode 04h, AckReq set) of the 64-byte SQE with PSDT
//! 01b and DPTR rewritten to one keyed SGL data block (identifier 40h): address 0, length
//! `(NLB + 1) * 512` for Read, Write and Compare (0 otherwise), key `{qp[7:0], slot[7:0],
//! cid[15:0]}`, the window the target's RDMA READ/WRITE will be checked against, or, for a Write
//! with in-capsule data (below), one SGL data block with subtype Offset. Its PSN is the
//! QP's next send PSN. ACKs (opcode 11h, AETH) answer received requests; READ responses
//! (below) answer RDMA READ requests. Frame sources in priority order: an ACK/NAK (one held
//! behind an earlier READ response), a CNP (below), a capsule sent again, a new capsule, a
//! READ response frame (or a capsule with data, which the READ responder sends); a frame once
//! started is never cut, and the responder's frames wait for the others only between frames;
//! the two capsule sources only for a QP that DCQCN's pacing lets send and that is not waiting
//! out an RNR NAK. Each frame is built whole in a buffer register in the cycle its source is
//! chosen, then streamed; the IPv4 header checksum is computed in that cycle, and the ICRC
//! while the frame streams out,
//! by the stdlib CRC-32 block (a beat per cycle, no added cycle: the CRC runs one beat ahead of
//! the output over the masked pseudo-header, so the ICRC is ready when its beat goes out).
//! IPv4: TOS from the `tx_tos` CSR (capsules, ACKs/NAKs and READ responses: `data_dscp` and
//! `data_ecn`, reset ECT(0), so that a congested switch marks them CE rather than dropping
//! them; CNPs: `cnp_dscp` and ECN 00), identification 0, DF, TTL 64; UDP source port C000h +
//! QP index, checksum 0.
//!
//! # Receive
//!
//! A frame's first 80 bytes are kept; the ICRC is computed as the frame streams in (the beats
//! realigned by the 14 Ethernet header bytes, the masked fields forced to FFh, the CRC ending
//! where the IPv4 total length says). At the end of a frame, the checks in this order (the
//! first that fails names the counter, as `models::roce::Packet::decode` orders them):
//!
//! 1. `drop_other` / `drop_malformed`: shorter than 34 bytes (malformed); not IPv4 (EtherType,
//!    version), not UDP, not to port 4791 (other); IHL not 5, a fragment, a total length below 28
//!    or beyond the frame, a bad header checksum, a UDP length that disagrees (malformed); fewer
//!    than 16 transport bytes (malformed).
//! 2. `drop_icrc`: the ICRC.
//! 3. `drop_opcode`: BTH version not 0, or an opcode other than SEND Only (04h), RDMA WRITE
//!    First/Middle/Last/Only (06h-08h, 0Ah), RDMA READ Request (0Ch), Acknowledge (11h) and
//!    CNP (81h): the other RC opcodes (WRITE with immediate, multi-packet SENDs) are not
//!    handled yet.
//! 4. `drop_malformed`: an ACK with a pad or a payload, a CNP with a pad or other than 16
//!    bytes after its BTH, a SEND whose pad exceeds its payload, a
//!    WRITE shorter than its headers (BTH, RETH on First/Only, ICRC) or whose pad exceeds its
//!    payload, a READ request that is not exactly BTH, RETH and ICRC (32 bytes, pad 0).
//! 5. `drop_qp`: no enabled QP has the destination QPN, the P_Key differs from the QP's, or the
//!    QP is in error.
//!
//! A frame that passed these checks with IPv4 ECN 11 (Congestion Experienced, any opcode) is
//! counted in `ecn_rx` and may ask for a CNP; a CNP is counted in `cnp_rx` and goes to the
//! reaction point; neither touches the PSNs. Then per QP (the responder's expected PSN, 24-bit
//! arithmetic):
//!
//! - SEND Only, PSN expected: the payload must be one 16-byte CQE (pad allowed) whose CID is
//!   outstanding on the QP: it completes that command (`io_cpl`), the expected PSN and MSN step
//!   and an ACK (syndrome 1Fh, the request's PSN) is queued. Otherwise NAK 61h (invalid request)
//!   and the QP goes to error.
//! - RDMA WRITE, PSN expected: see below. A SEND Only inside a WRITE message (First taken, Last
//!   not yet) is an invalid request (NAK 61h, QP to error).
//! - RDMA READ request, PSN expected: see "RDMA READ" below.
//! - SEND Only, WRITE or READ, PSN ahead: the first time, NAK 60h (PSN sequence error, the
//!   expected PSN); the frame is dropped (`drop_psn`), and so is every frame until the
//!   expected PSN arrives.
//! - SEND Only or WRITE, PSN behind (a duplicate): re-ACK (the expected PSN - 1), counted in
//!   `rx_dup`; nothing is written again. A READ request behind (counted in `rx_dup`) is
//!   answered again from host memory if its key and bounds pass as below (its command is still
//!   outstanding), else dropped: no ACK, no NAK, the QP stays up.
//! - Acknowledge: counted in `rx_ack` (syndrome 000xxxxx) or `rx_nak` (any other). An ACK
//!   whose PSN is among the unacknowledged capsules acknowledges it and all before it; a NAK
//!   60h rewinds the QP to its PSN (go-back-N, below); a NAK 61h, 62h or 63h puts the QP in
//!   error; an RNR NAK waits (below).
//!
//! # RDMA WRITE (host reads)
//!
//! The target moves a Read's data with RDMA WRITE against the capsule's keyed SGL. Every frame
//! from byte 54 on (after the BTH) goes, realigned to lane 0, into a payload buffer bank of
//! `(mtu + 16) / 8` words of 8 bytes (`roce.mtu` is the largest MTU a QP may use: 130 words
//! at 1024, 514 at 4096; two banks, one memory with registered reads): store and forward, so
//! no byte of a frame reaches host memory before its ICRC and every check below passed. An
//! accepted WRITE's bank drains into the DMA engine while the next frame streams into the
//! other bank (pipelining below). An in-order WRITE packet, in this order:
//!
//! 1. Sequence (NAK 61h, QP to error): First/Only only outside a message, Middle/Last only
//!    inside one.
//! 2. Length (NAK 61h, QP to error), `mtu` the QP's CSR (a code of 0 or above the configured
//!    MTU's means the configured MTU): First and Middle carry exactly `mtu` bytes and no pad;
//!    Last and Only at most `mtu`; a First's DMA length exceeds `mtu`, a Middle leaves bytes for
//!    a Last, a Last ends the message's DMA length, an Only carries its DMA length (0 allowed:
//!    nothing is written).
//! 3. Key and bounds, First/Only (NAK 62h, remote access error, QP to error): the R_Key
//!    `{qp, slot, cid}` must name this QP, an outstanding command slot with that CID whose
//!    command is a Read (02h) whose data fits the DMA engine's length (`dma.len_width`), and
//!    `VA + DMA length` must lie in `0 ..` its data length (VA below 2^24).
//!
//! A packet that passes is ACKed (1Fh, its PSN; the QP holds one pending ACK, so a burst
//! coalesces), the expected PSN steps (the MSN too on Last/Only) and its payload goes to host
//! memory: one windowed DMA command (write direction, the command's own PRP or SGL from its
//! SQE, `len` its data length, `win_off` the byte offset, `win_len` the payload bytes), then the
//! payload beats from its bank. The DMA engine's walker starts a PRP walk at the window (it
//! reads only the list entries from the window's page on, see `dma/walker.rs`), so a WRITE
//! deep into a 128 KiB command costs no more than the first.
//!
//! Pipelining: a frame that is not a WRITE is checked at once; a WRITE is checked once the
//! previous WRITE's DMA command has been taken by the DMA engine. If the other bank still
//! drains then, the checked WRITE's drain is queued behind it (its DMA command already goes
//! out, so its walk overlaps the drain) and the next frame waits until its bank is free. Per
//! frame the receiver spends one cycle on the checks, the wire-format limit otherwise.
//!
//! Completion records (`records.rs`): a response capsule's CQE (status, DW0) is kept in its
//! command's slot and the receiver moves on; the slot no longer takes a CQE or a WRITE (NAK 61h,
//! 62h) and is not sent again. Each slot counts its DMA commands in flight (from the WRITE's
//! check to the DMA engine's `m_done`); the completion leaves on `io_cpl` only when that count
//! is 0, so it never overtakes its data. A DMA error status (a bad PRP or SGL) of one of the
//! command's WRITEs replaces the CQE's status. The drain of a QP in error waits for every DMA
//! command in flight; a slot whose CQE came in completes with the CQE, not 22h.
//! A WRITE that fails a check writes nothing; its QP goes to error and its outstanding
//! commands complete with 22h (Transient Transport Error) as for any QP error.
//!
//! # RDMA READ (host writes), `read.rs`
//!
//! The target fetches a Write's (or Compare's) data with RDMA READ against the capsule's keyed
//! SGL. An in-order READ request, in this order: inside a WRITE message (First taken, Last not
//! yet): NAK 61h, QP to error; the R_Key `{qp, slot, cid}` must name this QP, an outstanding
//! slot with that CID whose command is a Write (01h) or Compare (05h) whose data fits the DMA
//! engine's length, and `VA + length` must lie in `0 ..` its data length (VA below 2^24), else
//! NAK 62h, QP to error (nothing is read from host memory). A READ that passes takes
//! ceil(length / MTU) PSNs (at least 1) of the expected PSN, steps the MSN, sends no ACK (its
//! responses acknowledge it) and becomes a job (`rx_reads` counts jobs, replays included).
//!
//! Jobs: four (the one being answered and three queued, in order); a READ request waits in the
//! receiver while all are taken or the last job's DMA command has not gone yet. Each job
//! issues one windowed DMA command at once (read direction, tag `{qp, slot}`, the command's own
//! PRP or SGL, `len` its data length, `win_off` the VA, `win_len` the length; none for length
//! 0), so the DMA engine fetches the queued jobs' data while the current one streams, into a
//! FIFO of `2 * roce.mtu` bytes (`read.rs`): a frame is loaded only when its whole payload is
//! in the FIFO, so no frame ever waits for host memory mid-way (`m_axis_tvalid` stays up from
//! a frame's first beat to its last, as a MAC needs). The responses are the last frame
//! source, taken between frames: First (0Dh, AETH) / Middle (0Eh) /
//! Last (0Fh, AETH), or Only (10h, AETH) when the length fits one MTU (length 0 included),
//! First and Middle carrying exactly the QP's MTU, PSNs from the request's on, AETH syndrome
//! 1Fh with the QP's MSN, pad to 4 bytes, AckReq 0. A frame is loaded in one cycle (its header
//! with the IPv4 checksum) and then streams a beat per cycle: the header beats, the payload
//! beats from `m_data` (realigned by 6 or 2 lanes), pad and ICRC; the ICRC is computed as the
//! beats are made, two beats ahead of the output (see `read.rs`), so it adds no cycle.
//!
//! Responder order: a QP's pending ACK (or NAK) whose PSN is at or after the first PSN of a
//! job of that QP waits until that job's last response left (`rr_ack_hold`), so an ACK never
//! overtakes a READ response before it; an ACK for an earlier PSN goes first.
//!
//! DMA read error (a bad PRP or SGL: the DMA engine's status, e.g. 11h SGL Descriptor Type
//! Invalid, 04h Data Transfer Error): the DMA engine still delivers the window's length, zeros
//! from the error on, so the responses go out with zeros in place of the bytes it could not
//! read (no host byte outside the window is ever read), and the status is kept in the slot: the
//! command completes with it in place of the response capsule's status (as for a WRITE's DMA
//! error). A QP that goes to error while a job is queued still sends that job's responses (its
//! DMA command is out; the QP's drain waits for it).
//!
//! # In-capsule data
//!
//! A Write (01h) of `n = (NLB + 1) * 512` bytes with `n <= roce.in_capsule_bytes` and `64 + n`
//! at most its QP's MTU (one SEND Only; at MTU 4096 up to 3584 bytes, at 1024 up to 512)
//! carries its data in its capsule: DPTR is an SGL data block with subtype Offset (identifier
//! 01h, offset 0, length `n`), the SQE is followed by the `n` bytes read from host memory, and
//! the target needs no RDMA READ. `roce.in_capsule_bytes` must not exceed what the target
//! accepts (IOCCSZ * 16 - 64); larger Writes keep the keyed SGL.
//!
//! The capsule is a job of the READ responder (`read.rs`): in the cycle the command is taken
//! (or sent again) the job is queued with its QP, slot and PSN, and one windowed DMA command
//! (read direction, tag `{qp, slot}`, the command's own PRP or SGL, window `0 .. n`) is
//! issued, counted in the slot's record as a READ fetch is; the frame (SEND Only, AckReq,
//! 122 + n bytes) goes out when its turn in the responder comes, the ICRC computed as it
//! streams. A capsule with data waits while the responder holds four jobs (or its last job's
//! DMA command) or a READ request is taken that cycle; while one is queued (its data coming
//! in), the frame buffer's capsules wait behind it, so capsules leave in PSN order. Sent again (go-back-N,
//! timeout, RNR), it is read from host memory again. DCQCN counts its 122 + n bytes. A DMA
//! read error sends zeros in place of the bytes not read and completes the command with the
//! DMA status, as for a READ response. A READ request naming a slot whose capsule carried its
//! data (no key was given) is a remote access error (NAK 62h).
//!
//! # Retransmission (go-back-N)
//!
//! Each command slot keeps its capsule's SQE and PSN. Per QP, `una` is the oldest capsule PSN
//! not acknowledged and `rpsn` the next PSN to send again; while `rpsn` differs from the next
//! new PSN the QP resends its capsules in PSN order (byte for byte as the first time, skipping
//! PSNs whose commands already completed), and its new commands wait. A NAK 60h sets both to
//! its PSN. The retransmit timer counts cycles while a capsule is unacknowledged; reaching
//! `retry.timeout` (CSR, cycles) rewinds `rpsn` to `una`; `retry.limit` timeouts in a row
//! (7: no limit) put the QP in error. An acknowledgement that moves `una` restarts both.
//!
//! # RNR
//!
//! An RNR NAK (AETH syndrome 001xxxxx) whose PSN is among the QP's unacknowledged capsules
//! acknowledges every capsule before it and sets `una` and `rpsn` to its PSN, as a NAK 60h
//! does, but the QP then sends no capsule (neither again nor new) until the NAK's timer ran
//! out: the syndrome's bits 4:0 are the InfiniBand RNR timer code (vol. 1, "RNR NAK Timer
//! Field Encodings": 1 = 0.01 ms ... 31 = 491.52 ms, 0 = 655.36 ms), counted in ticks of
//! `cc_tick` cycles (1 µs when it holds the clock in MHz; `cc::RNR_TIMER_US`). The
//! specification only bounds the wait from below (the requester waits at least the timer);
//! the engine waits the timer rounded up to whole ticks: code `c` of `T` µs loads `T + 1`
//! ticks, since the first tick may come right after the NAK. So, with `P` = `cc_tick` (at
//! least 2), `qpN_rnr.waiting` rises in the cycle after the NAK is taken and stays high for
//! more than `T * P` and at most `(T + 1) * P` cycles (which of those the tick's phase
//! decides), and the capsule goes out again only after it fell. Its retransmit timer is held
//! at 0 meanwhile. A new RNR NAK restarts the wait. `qpN_rnr.limit` (7: no limit) is the
//! number of RNR NAKs in a row (no acknowledgement moving `una` between them) the QP waits
//! out: one more puts it in error. RNR NAKs are counted in `rx_nak`.
//!
//! A QP holds one pending ACK: a newer ACK or NAK replaces it, except that a pending NAK 61h or
//! 62h (fatal) stays. A QP in error (or disabled) completes its outstanding commands with 22h;
//! clearing `ctrl.en` resets it, and while it is clear the QP's PSNs follow the CSRs.
//!
//! Not in this block yet (issue 7): WRITE with immediate, multi-packet SENDs (in-capsule data
//! larger than one MTU).
//!
//! # Congestion control
//!
//! The engine instantiates `roce_dcqcn_q<Q>_w<W>` (`dcqcn.rs`, exact rules there): DCQCN (Zhu
//! et al., SIGCOMM 2015) for its QPs, both ends; `cc.rs` wires it in. Time is `tick_i`, one
//! cycle every `cc_tick` cycles (the stdlib interval timer; reset 250: 1 µs at 250 MHz, write
//! the clock in MHz).
//!
//! - Notification point: a frame accepted for QP q (it passed every check above, the QP check
//!   included) with IPv4 ECN 11 raises QP q's CNP request unless one is pending or its
//!   interval (`dcqcn_cnp_interval` ticks from the last CNP sent) runs. A CNP is a frame
//!   source after the ACKs: Ethernet/IPv4 (DSCP `tx_tos.cnp_dscp`, ECN 00)/UDP (source port C000h + q)
//!   /BTH (opcode 81h, BECN set, P_Key the QP's, destination QP the remote QPN, AckReq 0,
//!   PSN 0)/16 reserved zero bytes/ICRC, 74 bytes (RoCEv2 annex A17.9.3; scapy's
//!   `scapy.contrib.roce.cnp` builds the same BTH). Counted in `cnp_tx`.
//! - Reaction point: a CNP accepted for QP q (the QP check passed) cuts its rate by alpha/2;
//!   the alpha and increase timers and the bytes sent raise it back (fast recovery, additive,
//!   hyper increase). A capsule (new or sent again) starts only while `may_send_o[q]` (the
//!   QP's byte credit at its rate `Rc`) allows, and is reported to the block with its 122
//!   bytes (122 + n with in-capsule data) in the cycle it is loaded; ACKs, NAKs and CNPs are not paced. A QP at the line rate
//!   is never held.
//! - CSRs: `dcqcn_*` (global; reset values `cc::defaults`: `DcqcnDefaults` for a line of 64 bits
//!   at 250 MHz, 16 Gb/s), `qpN_rate` (Rc, Rt) and `qpN_alpha` read back, counters `cnp_tx`,
//!   `cnp_rx` (CNPs received for an enabled QP), `ecn_rx` (CE-marked frames accepted).

pub mod cc;
pub mod dcqcn;
pub mod engine;
mod frame;
pub mod read;
mod records;

/// The engine's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoceParams {
    /// Ethernet stream width in bits (64).
    pub data_width: u32,
    /// Queue pairs (1 to 8; SQ id q+1 on QP q).
    pub qps: u32,
    /// Commands in flight per QP (1 to 16).
    pub outstanding: u32,
    /// Path MTU a QP's `mtu` CSR holds after reset and the largest it may select, in bytes
    /// (256 to 4096, a power of two); it sizes the payload buffer.
    pub mtu: u32,
    /// A Write of at most this many bytes whose capsule fits one SEND Only at its QP's MTU
    /// carries its data in the capsule (0: never).
    pub in_capsule_bytes: u32,
}

impl RoceParams {
    /// The InfiniBand MTU code of `mtu` (1 = 256 ... 5 = 4096).
    pub fn mtu_code(&self) -> u32 {
        self.mtu.trailing_zeros() - 7
    }
}
