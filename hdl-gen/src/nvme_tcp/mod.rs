//! The NVMe/TCP protocol engine: the host side of NVMe/TCP connections, over per-connection
//! TCP byte streams; `ip.rs` joins it to the TCP/IP engine (`tcp/`), see "The joined unit".
//!
//! ```text
//!  io_cmd (SQE) --> [nvme_tcp_conn] --tx--> byte stream to the target (ICReq, CapsuleCmd,
//!                        |                   H2CData, H2CTermReq)
//!  io_cpl <-------- [nvme_tcp_conn] <--rx-- byte stream from the target (ICResp, CapsuleResp,
//!                        |                   C2HData, R2T, C2HTermReq)
//!                        +-- dma_cmd / dma_data / dma_rdata / dma_done --> [dma_engine_win] --> AXI4
//! ```
//!
//! # One connection: `nvme_tcp_conn_w<bits>_d<outstanding>_h<hold bytes>[_i<in-capsule bytes>]`
//!
//! - `dgst_i` [2]: the digests to ask for in the ICReq (bit 0 header, bit 1 data), held stable;
//!   masked by the configuration's `digests` switch. HPDA is 0 (no padding asked for).
//! - Command stream `io_cmd`: `sqe` [512], the 64-byte SQE exactly as fetched (byte i at bits
//!   8i+7:8i). It is taken once the connection is up and one of the `outstanding` command slots
//!   is free. It goes out as a CapsuleCmd whose SQE has PSDT 01b and DPTR rewritten to one
//!   transport SGL data block (identifier 5Ah, address 0) of the command's length
//!   (`(NLB + 1) * 512` for Read and Write, 0 otherwise); CCCID is the command's own CID. A
//!   Write of at most `nvme_tcp.in_capsule_bytes` (default 4096; 0: never) carries its data in
//!   the capsule instead: the SGL is a data block with an offset into the capsule (identifier
//!   01h, offset 0, the command's length), PDO is the header and header digest rounded up to
//!   the ICResp's CPDA, then zero padding, the data (read from host memory through the DMA
//!   engine, as for H2CData) and the data digest if negotiated. The target must accept that
//!   much (its IOCCSZ * 16 - 64 bytes): configure the key to match.
//! - Completion stream `io_cpl`: `cid` [16], `status` [15] (the CQE status field), `dw0` [32],
//!   from each CapsuleResp whose CID is outstanding. A completion on offer stays on offer,
//!   unchanged, until taken (a lower slot that becomes ready waits). A command completes once
//!   answered and its data moved: a target that answers while an R2T of the command is not
//!   answered in full still gets that R2T's H2CData first.
//! - Byte streams `tx` (out) and `rx` (in): `data` [W], `keep` [W/8]. Bytes are packed from lane
//!   0 (`keep` a contiguous run of ones from bit 0); any beat may be short, and a beat may hold
//!   the end of one PDU and the start of the next. The engine emits each PDU header as full
//!   beats and a short last one, then the 4-byte header digest in a beat of its own.
//! - `connected_o`: the ICResp was accepted; `dead_o`: the connection ended (TermReq sent or
//!   received, or the TCP connection lost).
//! - `lost_i`: the TCP connection underneath failed (a level; the connection latches it until
//!   reset). It ends the connection as a C2HTermReq does, without a TermReq of its own (see
//!   "A lost TCP connection" below).
//! - Host memory, toward the DMA engine: `dma_cmd` (`tag` = the command's slot, `write` (1: a
//!   C2HData payload to host memory, 0: an H2CData payload from it), `sgl`, `dptr` [128] = the
//!   SQE's DPTR, `len` = the command's data length, `off` = DATAO, `dlen` = DATAL: move bytes
//!   `off .. off + dlen` of the command's data), `dma_data` (writes: `data`, `keep`, `last`:
//!   `dlen` bytes packed from lane 0, keep all ones but on the last beat), `dma_rdata` (reads,
//!   same framing, in the order of the read commands) and `dma_done` (`tag`, `status` [11];
//!   always taken). A command completes only after every move of its data is done; a move that
//!   fails completes it with the DMA engine's status.
//!
//! # Host reads (C2HData)
//!
//! A C2HData header is checked whole before any of its bytes moves: type and sequence (before
//! the ICResp: 02h), HLEN 24, flags (digest flags as negotiated, bits 4-7 zero, SUCCESS only with
//! LAST_PDU: FEI 1), PDO = 24 + 4 (header digest) (HPDA is 0; FEI 3), PLEN at least PDO +
//! 1 + 4 (data digest) (FEI 4), the header digest (03h), CCCID naming an outstanding Read that
//! has not been answered yet (01h, FEI 8), DATAL non-zero and equal to PLEN - PDO - 4 (data
//! digest) (01h, FEI 16), DATAO + DATAL inside the command's data (04h Data Transfer Out of
//! Range), and with data digests DATAL at most the hold buffer (05h Data Transfer Limit
//! Exceeded). TTAG of a C2HData is ignored; DATAO need not follow the previous PDU (any order of
//! non-overlapping pieces is written where it belongs).
//!
//! The payload is packed into full beats and pushed into a per-connection hold FIFO of
//! `hold_bytes` (config `nvme_tcp.c2h_hold_bytes`, default 8192). Its *verdict* decides what
//! leaves the FIFO: without data digests the verdict is known after the header, with them after
//! the data digest. A good verdict moves the payload to host memory; a bad one (data digest
//! error) drops it, so no byte of such a PDU reaches host memory.
//! **Data digest errors do not end the connection**: the command completes with Transient
//! Transport Error (22h) once its answer (CapsuleResp or SUCCESS) arrives, with the answer's DW0
//! (0 for SUCCESS). SUCCESS with
//! LAST_PDU answers a command as a CapsuleResp with status 0 would (a later CapsuleResp for it is
//! then an unknown CCCID, 01h FEI 20).
//!
//! **A good payload is written in moves of at most `hold_bytes / 2`, each issued to the DMA
//! engine only once all its bytes are held** (store and forward per move; without data
//! digests the first move starts when its half of the buffer is full, not at the PDU's end).
//! So a write burst never waits for the network in its middle: the chip's AXI interconnect
//! gives its one W channel to one burst at a time, and a burst paused by a target that stops
//! in the middle of a PDU would hold every other master's writes (RoCE payloads, CQE posts)
//! while the RoCE engine, waiting for its write, holds the shared Ethernet receive path, and
//! with it the rest of that very PDU: a deadlock, seen in the chip suite. Each move counts
//! as one of its command's DMA moves (a command completes after the last is done). Checked:
//! the engine properties' host memory flags a `wvalid` gap inside a burst.
//!
//! With data digests a C2HData may carry at most `hold_bytes` (the whole PDU must be held until
//! its digest is known); a target that sends larger ones (Linux nvmet-tcp may send a command's
//! data in one PDU) needs `c2h_hold_bytes` raised to its largest PDU, or data digests off.
//!
//! Receive checks, in this order, each ending the connection with one H2CTermReq (FES, FEI,
//! the offending PDU's 8-byte common header as its data): a type the host does not receive
//! (01h, FEI 0); ICResp after, or any other PDU before, the connection start (02h); HLEN (01h,
//! FEI 2); flags (FEI 1: digest flags must match what was negotiated); PDO (FEI 3); PLEN
//! (FEI 4); the header digest (03h); ICResp fields: PFV (06h, FEI 8), CPDA > 31 (FEI 10), a
//! digest not asked for (FEI 11), MAXH2CDATA below 4096 or not a multiple of 4 (FEI 12); a
//! CapsuleResp for a CID that is not outstanding (01h, FEI 20). A C2HTermReq ends the
//! connection without an answer. After the end, every outstanding command, and every command
//! that arrives later, completes with Transient Transport Error (22h); received bytes are
//! dropped.
//!
//! # A lost TCP connection (`lost_i`)
//!
//! Once `lost_i` is high the connection ends: every outstanding command, and every command
//! that arrives later, completes with Transient Transport Error (22h, DW0 0), but a command
//! whose answer (CapsuleResp, or SUCCESS) was accepted before completes with that answer, as
//! after a C2HTermReq. No H2CTermReq is sent (there is no TCP connection to carry it). Bytes
//! still on `rx` (the TCP engine may deliver what it had in order before the failure) go
//! first; the receive side then ends where it is:
//!
//! - in a header (common header, the rest of the header, its digest, before the header's
//!   checks act): at once, since nothing was committed; the bytes never become a PDU.
//! - inside a C2HData payload or its data digest: when `rx` has no beat, a full beat of zeros
//!   is fed in its place up to the PDU's end, so that a payload whose verdict was already
//!   given (no data digests) is written whole (zeros in the command's buffer: its data is undefined,
//!   as after any failed Read) and a held one fails its data digest and is dropped. Such a
//!   PDU's SUCCESS flag does not answer the command. Zeros are never fed into a header, whose
//!   checks could pass on bytes the target never sent.
//!
//! A header whose checks act in the cycle `lost_i` rises still acts (it came whole from the
//! target). The transmit side needs nothing of the connection: the engine lets a beat of a
//! lost connection through without credit (the TCP engine drops it, `tx_drop`), so an H2CData
//! in flight drains and its host-memory read ends.
//!
//! # Host writes (R2T and H2CData)
//!
//! A Write's data goes in the capsule (above) or as H2CData in answer to R2Ts. An R2T is
//! checked whole, in this order after the
//! common header checks (HLEN 24, flags = the header digest flag alone (FEI 1), PDO 0 (FEI 3),
//! PLEN 24 + 4 (header digest) (FEI 4), the header digest (03h)): CCCID naming an outstanding
//! Write not yet answered by a CapsuleResp (01h, FEI 8; an R2T for a Read or another command
//! gets this too); no R2T of that command still being answered (02h PDU Sequence Error: the
//! ICReq's MAXR2T 0 allows one outstanding R2T per command, and the command's next R2T may come
//! once the last byte of the previous one's last H2CData left); R2TL non-zero and R2TO + R2TL
//! inside the command's data (04h Data Transfer Out of Range, FEI 12). TTAG is not checked (it
//! is the target's): it is echoed. R2Ts of different commands may arrive in any order and are
//! answered in arrival order (a FIFO of `outstanding` entries, never full: one per command).
//!
//! An R2T is answered with H2CData PDUs of at most MAXH2CDATA bytes (from the ICResp) covering
//! R2TO .. R2TO + R2TL in order: CCCID, the R2T's TTAG, DATAO and DATAL, LAST_PDU on the last;
//! PDO = the header and header digest rounded up to the ICResp's CPDA ((CPDA + 1) * 4 bytes,
//! zero padding); the payload is read through the DMA engine (`write` 0, `off` = DATAO, `dlen`
//! = DATAL) and streamed to `tx` as it comes (header beats, digest beat, padding, payload beats
//! straight from `dma_rdata`, the data digest in a beat of its own), the data digest computed
//! on the fly. Before the data digest (or the next PDU without one) the read's completion is
//! awaited. Answering R2Ts goes before sending new CapsuleCmds.
//!
//! The data PDU on `tx` (H2CData or CapsuleCmd with data) asks for its read on `dma_cmd` and
//! keeps asking until taken, even when a C2HData write (which otherwise goes first) arrives.
//!
//! **A failed host memory read** (a DMA status on the read of an H2CData or of in-capsule
//! data): the DMA engine keeps the framing (zeros after the error), so the PDU is finished, but
//! its data digest, if negotiated, is sent inverted so a checking target drops it; then nothing
//! more is sent on the connection (no TermReq: none of its FES values means "the host cannot
//! read its memory") and the connection ends (`dead_o`; the TCP engine underneath is to reset the TCP connection) once the
//! PDU being received is taken. The command completes with the DMA status, the others with 22h
//! (or their answer, if it came). Without data digests the target has taken the PDU's bytes as
//! data: the command's blocks are then undefined, as after any failed write.
//!
//! # The engine: `nvme_tcp_w<bits>_c<connections>_d<outstanding>`
//!
//! One connection per I/O queue pair: SQ id `i + 1` runs on connection `i`.
//!
//! - `io_cmd`: `sqid` [16], `sqe` [512] (the chip-internal command stream). The command goes to
//!   its SQ id's connection; a command for an SQ id without one (0, or above the connections)
//!   is taken and completed with 22h. `sq_space_o` [C]: bit i, connection i takes a command now
//!   (a slot is free, or the connection has ended and refuses it), for the front end's
//!   eligibility mask, so one busy connection never blocks the command stream.
//! - `io_cpl`: `sqid` [16], `cid` [16], `status` [15], `dw0` [32], the connections' completions
//!   merged round robin (the grant held until taken, so the stream is stable as each
//!   connection's is).
//! - `tx`: one stream to the TCP engine, `conn` [log2 C], `data`, `keep`; beats of different
//!   connections interleave (each connection's bytes stay in order). `tx_credit_i` [C]: the TCP
//!   engine takes bytes of connection i; only connections with credit (or lost: below) win
//!   the round-robin arbitration, and a beat on the bus stays until taken (keep its credit up
//!   meanwhile).
//! - `rx`: one stream from the TCP engine, `conn`, `data`, `keep`. `rx_space_o` [C]: bit i, a
//!   beat of connection i presented now is taken (`rx_ready_o = rx_space_o[rx_conn_i]`; each
//!   connection has a two-beat buffer, so the bit does not depend on `rx_valid_i`). The TCP
//!   engine presents only beats of connections with space, so a stalled connection (one
//!   waiting for `io_cpl`) never holds up another's bytes.
//! - `dgst_i` [2] as for a connection (all connections ask for the same digests);
//!   `connected_o`, `dead_o` [C].
//! - `lost_i` [C]: bit i, TCP connection i failed (the TCP engine's `failed_o`): connection i
//!   ends as "A lost TCP connection" says. A beat of a lost connection on `tx` needs no credit
//!   (the TCP engine takes it and drops it), so its PDU in flight drains.
//!
//! - Host memory: the engine holds one windowed DMA engine (`dma_engine_win_*`, tag
//!   `{connection, slot}`, data width = the stream width, length width, reads in flight and AXI
//!   ID width from `[dma]`) behind an AXI4 master `m_axi_*`, and `mps_i` [4] (CC.MPS). The
//!   connections' DMA commands go to it round robin; each write command's connection is queued
//!   so its payload beats follow in command order; read data (`m_data`) returns by the tag's
//!   connection bits, completions too. The DMA engine moves one transfer at a time in command
//!   order, so a connection whose `tx` has no credit while its H2CData payload is on `m_data`
//!   holds up the host memory moves of the others until it gets credit. The DMA engine's own
//!   counters are not reachable from this top (its AXI4-Lite port is tied off).
//!
//! Not in this block: reading the target's IOCCSZ (Identify Controller, an admin command for
//! firmware): `in_capsule_bytes` is a configuration choice.
//!
//! # The joined unit: `nvme_tcp_ip_w<bits>_c<connections>_d<outstanding>_t<tx>_r<rx>[_nd]` (`ip.rs`)
//!
//! The NVMe/TCP engine above (`u_nvme_tcp`) on the TCP/IP engine (`u_tcp`, `tcp/mod.rs`),
//! built from the two by the builder alone: NVMe/TCP connection i is TCP connection i, their
//! byte streams joined port to port (`tx`, `tx_credit`, `rx`, `rx_space`). Both engines take
//! the stream width and connection count from `[nvme_tcp]` (the TCP engine's buffers from
//! `[tcp]`); mismatched parameters are refused at elaboration. Ports:
//!
//! - `dgst_i`, `io_cmd_*`, `sq_space_o`, `io_cpl_*`, `mps_i`, `m_axi_*`: the NVMe/TCP engine's
//!   own (above), unchanged, so the chip top can swap its byte-stream ports for this unit.
//! - `m_axis_*`, `s_axis_*`: the TCP engine's one Ethernet port (frames without FCS).
//! - Two CSR ports, not a decoder: `s_axil_*` is `nvme_tcp_csr` (as on the NVMe/TCP top),
//!   `s_tcp_axil_*` is `tcp_csr`. The chip's firmware map gives every block's register block
//!   a slot of its own behind one `axil_decoder` (`chip/csr.rs`), so it will give `tcp_csr` a
//!   slot next to `nvme_tcp_csr`; a decoder here would decode twice.
//! - `connected_o`, `dead_o` [C] (NVMe/TCP) and `tcp_up_o`, `tcp_failed_o` [C] (TCP: the TCP
//!   engine's `up_o` and `failed_o`), for status registers and firmware.
//! - `run_i`: 1, the NVMe/TCP engine runs; 0, it alone is held in reset (its connections,
//!   commands and counters cleared; the TCP engine, its connections and `tcp_csr` carry on).
//!   Firmware restarts NVMe/TCP by holding it, aborting the TCP connections, waiting for
//!   CLOSED, reopening them
//!   (a new NVMe/TCP connection must start a new TCP connection: its ICReq is the stream's
//!   first byte), then releasing it; the ICReqs wait for `tcp_up_o`.
//!
//! Bring-up is the TCP engine's: firmware programs `tcp_csr` (addresses, timers, each
//! connection's remote address and port) and sets `open`; each NVMe/TCP connection's ICReq waits
//! on its `tx` until the TCP engine gives credit (ESTABLISHED).
//!
//! **A TCP connection that fails** (RST from the peer, the retry limit, ARP unresolved, abort):
//! `tcp_failed_o[i]` drives the NVMe/TCP engine's `lost_i[i]`, so NVMe/TCP connection i ends
//! as a C2HTermReq ends it (above, "A lost TCP connection"): every outstanding command and
//! every later one on it completes with 22h (an already answered one with its answer), the
//! other connections go on. Its credit bit falls too: the beats the NVMe/TCP engine still has
//! for it are taken and dropped (`tx_drop`). The NVMe/TCP connection stays ended until
//! firmware restarts the engine (in the chip: `tcp_ctrl.run`), also when firmware reopens the
//! TCP connection. Nothing aborts the TCP connection when NVMe/TCP ends one (a TermReq, a
//! failed host-memory read): firmware sees `dead_o` and closes it.

pub mod conn;
pub mod engine;
pub mod ip;

/// The engine's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NvmeTcpParams {
    /// Byte-stream width in bits (64, 128 or 256).
    pub data_width: u32,
    /// Connections, one per I/O queue pair (2 to 16; SQ id i+1 on connection i).
    pub connections: u32,
    /// Commands in flight per connection (1 to 64).
    pub outstanding: u32,
    /// Digests may be negotiated.
    pub digests: bool,
    /// C2HData payload bytes held per connection (a power of two, at least two beats).
    pub hold_bytes: u32,
    /// Largest write whose data goes in the CapsuleCmd (in-capsule data), bytes; 0: none.
    pub icd_bytes: u32,
}
