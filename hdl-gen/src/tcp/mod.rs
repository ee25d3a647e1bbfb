//! The TCP/IP engine under the NVMe/TCP engine (issue 18, first slice): IPv4, ARP, ICMP echo
//! and TCP active opens, one TCP connection per NVMe/TCP connection, over one Ethernet port.
//!
//! ```text
//!  tx (bytes, per conn) --> [tx buffer RAM: unacknowledged bytes] --+
//!                                                                   v
//!  ARP reply/request, ICMP echo reply, TCP segments --> [frame generator: IPv4 + TCP checksums] --> m_axis
//!  rx (bytes, per conn) <-- [rx buffer RAM] <-- [parser: Ethernet, ARP, IPv4, ICMP, TCP, checksums] <-- s_axis
//!                           per-connection TCP state, RTO timers, ARP cache: flip-flops
//!                           CSRs, counters: tcp_csr (AXI4-Lite, rtl/tcp_csr.md)
//! ```
//!
//! # The engine: `tcp_w<bits>_c<connections>_t<tx bytes>_r<rx bytes>_a<arp entries>_e<echo bytes>`
//!
//! Parameters come from `[tcp]` (buffers, ARP cache, echo buffer) and from `[nvme_tcp]` (the
//! byte-stream width and the connection count, so the two engines plug together one to one).
//!
//! - `m_axis_*` (transmit) and `s_axis_*` (receive): AXI4-Stream Ethernet frames without FCS,
//!   `tdata` [64], `tkeep` [8], `tlast`, as the RoCE engine's: bytes packed from lane 0, only
//!   the last beat short. Frames the engine sends are at least 60 bytes (zero padding).
//!   Once `m_axis_tvalid_o` rises for a frame it stays high to the frame's last beat (a beat
//!   goes every cycle `m_axis_tready_i` is high), so a MAC may take the frame straight.
//!   `s_axis_tready_o` may fall in the middle of a frame (the parser takes the headers a byte
//!   per cycle).
//! - `tx` (in, from the NVMe/TCP engine): `conn` [log2 C], `data` [W], `keep` [W/8], exactly
//!   the NVMe/TCP engine's `tx` port: bytes packed from lane 0, any beat short. `tx_credit_o`
//!   [C]: bit i, a beat of connection i is taken (its transmit buffer has room for a full beat
//!   after the bytes of the beat still being written, and the connection may send: ESTABLISHED
//!   or CLOSE-WAIT, no close asked for). The room only grows while a beat waits on the bus (its
//!   writing moves bytes, ACKs free them), so a bit once up stays up until the beat is taken
//!   unless the connection stops sending. A beat of a connection without credit is still taken
//!   eventually, but its bytes are dropped and counted (`tx_drop`): the NVMe/TCP engine
//!   presents only beats of connections with credit.
//! - `rx` (out, to the NVMe/TCP engine): `conn`, `data`, `keep`, the NVMe/TCP engine's `rx`
//!   port. `rx_space_i` [C]: bit i, a beat of connection i presented now is taken. The engine
//!   starts a beat of connection i only while `rx_space_i[i]` is high (and holds it until
//!   taken), so a stalled consumer never holds up another connection. A beat holds up to 8
//!   bytes (the bytes in order at the time it starts, at most 8). A connection that was reset (CLOSED with `failed`: by the peer,
//!   the retry limit, an unresolved ARP or an abort) or that opens (ARP, ISN, SYN-SENT)
//!   delivers nothing: the bytes it left undelivered are dropped, a beat of them already
//!   presented included (RFC 9293 3.10.5 and 3.10.7: a reset and an abort flush the receive
//!   queue), so a reopened connection starts its stream clean. After a close with FIN (CLOSED,
//!   not failed, or a RST in CLOSING, LAST-ACK or TIME-WAIT) they are still delivered, in order.
//! - `up_o` [C]: connection i is ESTABLISHED or CLOSE-WAIT (the NVMe/TCP engine's ICReq waits
//!   for it); `failed_o` [C]: the connection was reset (by the peer, by the retry limit, by an
//!   unresolved ARP or by an abort) and waits in CLOSED for software.
//! - `s_axil_*`: the CSRs, `tcp_csr` (rtl/tcp_csr.md): local MAC, IPv4 address, netmask and
//!   gateway, the timer tick, the RTO bounds, the retry limits, the ISN key, the MSS and window
//!   scale the engine offers, per connection the remote IPv4 address and ports (remote 4420
//!   after reset), open/close/abort, and its live state; the counters.
//!
//! # What it does
//!
//! Receive (a beat a cycle, the TCP options a byte a cycle, the frame's checks at its end, in
//! this order; the first that fails names the counter): a destination MAC neither ours nor
//! broadcast (`drop_other`);
//! ARP: an Ethernet/IPv4 request or reply whose target is our address is taken (a request is
//! answered; the sender is learnt into the cache either way), any other ARP (`drop_other`);
//! IPv4: version 4 with IHL 5 (options: `drop_malformed`), a total length of at least 20 and
//! within the frame, not a fragment (else `drop_malformed`), the header checksum
//! (`drop_csum`), our destination address (`drop_other`); ICMP: an echo request of at most
//! `echo_bytes` with a good checksum is answered (others: `drop_other`; a bad checksum:
//! `drop_csum`; one arriving while the previous reply waits is dropped, `drop_other`); TCP:
//! the checksum over the pseudo-header (`drop_csum`), then the connection whose remote
//! address and ports match and which is not CLOSED (nor still resolving its next hop or
//! drawing its ISN). A segment no connection holds is answered as RFC 9293 3.10.7.1 says
//! for CLOSED (`rst_closed`, and `seg_out`): none to a RST (`drop_other`); to one with ACK
//! `<SEQ=SEG.ACK><CTL=RST>`; else `<SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>` (SEG.LEN
//! counting SYN and FIN), window 0, to the sender's MAC, address and port. One RST waits at
//! a time (after ARP and echo replies, before everything else): a segment arriving while one
//! waits is dropped (`drop_other`), so a flood of segments gets at most one RST of 60 bytes
//! for each.
//! Frames of other EtherTypes and IP protocols: `drop_other`.
//!
//! TCP per connection (RFC 9293), from `open` in a connection's `ctrl` CSR:
//! CLOSED -> ARP (the next hop: the remote address inside the netmask, else the gateway; a
//! cache hit or an ARP request resent every `arp_retry` ticks, `arp_tries` times, after which
//! the connection fails) -> ISN -> SYN-SENT -> ESTABLISHED -> (FIN both ways) -> CLOSED, with
//! FIN-WAIT-1/2, CLOSING, TIME-WAIT (`time_wait` ticks), CLOSE-WAIT and LAST-ACK.
//!
//! - SYN: MSS option (RFC 6691: the `mss` CSR, 1460 after reset, the largest payload the
//!   engine takes), window-scale option (RFC 7323: the `wscale` CSR). No SACK-permitted, no
//!   timestamps (declined). From the SYN-ACK the peer's MSS (536 if absent) and window shift
//!   (if the peer sent none, neither side scales). A SYN-ACK whose ACK is not ISS + 1 is dropped;
//!   a RST with an acceptable ACK fails the connection (refused).
//! - ISN (RFC 6528): ISN = M + F(local IP, remote IP, local port, remote port, key), M a clock
//!   counting cycles / 1024 (4 µs at 250 MHz), F the HalfSipHash-2-4 rounds over the three
//!   32-bit words of the 4-tuple with the 64-bit key of the `isn_key` CSRs, computed a round per
//!   cycle (10 cycles). A connection that opens again keeps clear of its previous incarnation's
//!   sequence numbers (RFC 9293 3.4.1; old segments of the same 4-tuple may still be in the
//!   network, and the engine answers them with a RST at their ACK number): when M + F lies in
//!   [its last ISS, its last SND.MAX] the ISS is that SND.MAX + 1, as stacks do when they reuse
//!   a 4-tuple (RFC 6191). The clock moves far slower than the engine sends, so this is the
//!   common case for a reopen.
//! - Sending: bytes of `tx` go to the connection's transmit buffer (a RAM of `tx_bytes`,
//!   addressed by sequence number) and stay there until acknowledged and no segment being
//!   generated still reads them (an ACK during a segment's checksum pass or transmission does
//!   not free its bytes to `tx` before the segment has left); a segment carries at most
//!   min(our MSS, the peer's MSS) bytes and never goes past SND.UNA + SND.WND (the peer's
//!   window, scaled). Segments are sent as soon as bytes are there (no Nagle), but for the
//!   sender's silly-window avoidance (RFC 9293 3.8.6.2.1): new data waits while more is queued
//!   than the usable window (SND.UNA + SND.WND - SND.NXT: the peer's window alone) allows and
//!   that window is under an MSS and under half the largest one the peer has offered; the
//!   persist timer then runs (nothing in flight) and its expiry sends what fits, without
//!   backing the timer off (the override timeout; a zero window's probe backs it off).
//!   Retransmissions are not held. The FIN goes once every byte is sent after `close`.
//! - Receiving: the receive buffer (a RAM of `rx_bytes` per connection) is addressed by
//!   sequence number. A segment's payload is written only at sequence numbers in [RCV.NXT,
//!   RCV.NXT + free) and outside the kept out-of-order range (its bytes are there already, and a
//!   segment failing its checksum at the frame's end must not overwrite them). At the frame's
//!   end, with a good checksum, an ACK bit, no RST or SYN and an ACK not beyond SND.MAX:
//!   - in order (SEG.SEQ <= RCV.NXT < SEG.SEQ + SEG.LEN): RCV.NXT moves to the end of what
//!     fitted (a retransmission overlapping bytes already received is trimmed); when it
//!     reaches the kept range's start, it moves on to the range's end and the range is gone
//!     (merged);
//!   - out of order (SEG.SEQ > RCV.NXT, with data): one range [start, end) per connection is
//!     kept (two sequence registers). The segment is kept (`ooo_kept`) when its first byte
//!     fits in the free space and there is no range, or it overlaps or touches the range (the
//!     range grows to cover both, up to what fitted); otherwise it is dropped (`ooo_dropped`;
//!     its bytes may be in the RAM, but nothing remembers them). A FIN out of order is not
//!     kept (the peer sends it again). The FIN is taken when it follows the last byte taken.
//! - ACKs sent: every segment that carries data or FIN, a SYN after the handshake, or begins
//!   before RCV.NXT (an old segment, a zero-window probe at RCV.NXT - 1) is answered with an
//!   ACK; an out-of-order segment owes a duplicate ACK of its own (RFC 5681 4.2: up to three
//!   are owed at once), a segment without data even when data waits to go, or the peer would
//!   not count it.
//! - Delayed ACK (RFC 9293 3.8.6.3, RFC 5681 4.2; CSR `ack_delay`, ticks, reset 40, 0 turns it
//!   off): the ACK of a segment may wait only when the segment brings new data at RCV.NXT, no
//!   out-of-order range is kept, it carries no FIN and no old bytes, and less than two RMSS
//!   (the `mss` CSR) are then unacknowledged; it goes when the delay runs out, when a data
//!   segment of our own carries it, or at once when the next segment breaks one of those
//!   rules (a second full-sized segment, a gap, a segment filling one).
//! - Window (receiver silly-window avoidance, RFC 9293 3.8.6.2.2): the right edge advertised
//!   is held exactly, in sequence space, and moves only forward, to RCV.BUF's end (the bytes
//!   the consumer took + `rx_bytes`) once that is at least min(rx_bytes / 2, MSS) past it
//!   (past RCV.NXT if that is beyond the edge). Every segment advertises (edge - RCV.NXT) >>
//!   our shift (0 once RCV.NXT is past the edge; at most 65535), so two ACKs with the same
//!   ACK number carry the same window unless the edge moved: duplicate ACKs are duplicates
//!   for the peer (RFC 5681 counts only ACKs with the same window). When the edge may move in
//!   a receiving state and the window the peer holds is below `rx_bytes` / 2, a window update
//!   (an ACK) goes out; above that the new edge rides on the next ACK of new data (a delayed
//!   one included). The SYN advertises the free space unscaled.
//! - Old segments (RFC 9293 3.10.7.4, first check): a segment wholly before RCV.NXT (the FIN
//!   taken counted) is not acceptable: without data or FIN, SEG.SEQ < RCV.NXT; with them,
//!   SEG.SEQ + SEG.LEN <= RCV.NXT (SEG.LEN counting the FIN). It is answered with an ACK and
//!   its ACK field is not looked at: SND.UNA, the peer's window (SND.WND, WL1, WL2), the
//!   duplicate-ACK count and the FIN's acknowledgement stay as they were. (A FIN again in
//!   TIME-WAIT still restarts its timer, as 3.10.7.4 asks of that state.)
//! - ACKs: cumulative. An ACK in (SND.UNA, SND.MAX] frees buffer bytes; an ACK in
//!   [SND.UNA - MAX.SND.WND, SND.UNA) (a segment the network reordered) is ignored, its data
//!   still taken; an ACK outside [SND.UNA - MAX.SND.WND, SND.MAX] (beyond what was sent, or
//!   older than the largest window the peer ever offered: RFC 5961 5.2) drops the segment and
//!   is answered with a challenge ACK (`challenge_acks`). MAX.SND.WND is the largest window the
//!   peer advertised on the connection (its SYN-ACK's, unscaled, and every window taken since,
//!   scaled). The peer's window is taken from a segment newer than the last one it was taken
//!   from (SND.WL1/SND.WL2, RFC 9293), whose ACK is not below SND.UNA.
//! - Fast retransmit and NewReno (RFC 5681 3.2, RFC 6582): a duplicate ACK (ACK bit, no data,
//!   SYN, FIN or RST, SEG.ACK = SND.UNA with data outstanding, the peer's window unchanged)
//!   is counted (`dup_acks`); the third in a row, outside recovery and with SEG.ACK beyond
//!   `recover`, retransmits the segment at SND.UNA (at most an MSS, data only) at once and
//!   starts recovery with `recover` = SND.MAX; in recovery an ACK that advances SND.UNA but not
//!   to `recover` (partial) retransmits the segment at the new SND.UNA at once, one that
//!   reaches it ends recovery. New data goes on from SND.NXT meanwhile (moved past the
//!   retransmitted segment if behind it); the RTT measurement in progress is dropped (Karn).
//!   An RTO ends recovery and sets `recover` to SND.MAX, so the duplicate ACKs that follow a
//!   go-back-N start no fast retransmit.
//! - Congestion control (RFC 5681, NewReno RFC 6582), in bytes, SMSS = min(`mss`, the peer's
//!   MSS): new data goes while SND.NXT < SND.UNA + min(SND.WND, cwnd) (a fast retransmission
//!   goes whatever the windows). The SYN-ACK sets cwnd to the initial window (RFC 5681 3.1:
//!   2, 3 or 4 SMSS for SMSS > 2190, > 1095, else; 1 SMSS when the SYN was sent again) and
//!   ssthresh to all ones. An ACK that advances SND.UNA outside recovery grows cwnd: by
//!   min(acked, SMSS) in slow start (cwnd < ssthresh), else by SMSS each time the bytes
//!   acknowledged since it last grew reach cwnd (byte counting); cwnd stops growing at 1 GiB.
//!   The third duplicate ACK sets ssthresh = max(FlightSize / 2, 2 SMSS) (FlightSize =
//!   SND.MAX - SND.UNA) and cwnd = ssthresh + 3 SMSS; each further duplicate ACK in recovery
//!   adds SMSS; a partial ACK deflates cwnd by the bytes it acknowledges and adds back SMSS
//!   when that is a segment or more (SMSS when it acknowledges cwnd or more); the ACK that
//!   ends recovery sets cwnd = ssthresh (RFC 6582 3.2 step 3, option 2). An RTO sets cwnd =
//!   SMSS and, on a segment's first timeout only, ssthresh = max(FlightSize / 2, 2 SMSS). The
//!   CSRs `c{c}_cwnd` and `c{c}_ssthresh` show both. Restart after idle (RFC 5681 4.1): once
//!   an open connection has had nothing outstanding for an RTO (counted in ticks from the ACK
//!   that emptied the flight, so no earlier than 4.1's "RTO since the last send"), cwnd drops
//!   to min(cwnd, IW) before it sends again.
//! - Retransmission (RFC 6298, in ticks of `tick` cycles): one RTT measurement at a time, not
//!   on retransmitted data (Karn); SRTT and RTTVAR with 3 and 2 fraction bits; RTO = SRTT +
//!   max(1, 4 RTTVAR) bounded by `rto_min` and `rto_max`, `rto_init` before the first sample.
//!   On expiry: go back to SND.UNA (go-back-N, the bytes re-read from the transmit buffer),
//!   RTO doubled (at most `rto_max`), one retry more; past `retries` the connection sends a
//!   RST and fails (state CSR: `failed`, reason 2).
//! - RST in (RFC 5961 3.2): in a synchronized state a RST is accepted (`rst_in`) only when its
//!   sequence number is exactly RCV.NXT (the FIN taken counted); the connection fails (reason
//!   1), except in CLOSING, LAST-ACK and TIME-WAIT, where it just ends (CLOSED). A RST elsewhere
//!   in the receive window [RCV.NXT, RCV.NXT + max(free, 1)) is answered with a challenge ACK
//!   (`challenge_acks`) and changes nothing; outside it, it is dropped silently
//!   (`rst_dropped`). In SYN-SENT a RST is accepted when it acknowledges the SYN, else dropped
//!   (`rst_dropped`). Challenge ACKs are not rate-limited (RFC 5961 7 is a SHOULD; a flood of
//!   RSTs costs the engine an ACK slot per segment, no state).
//! - SYN in a synchronized state (RFC 5961 4.2): whatever its sequence number, answered with a
//!   challenge ACK (`challenge_acks`) and dropped; the connection is unharmed.
//! - Close: `close` sends FIN after the data; a peer FIN moves to CLOSE-WAIT (its `close`
//!   then sends ours). TIME-WAIT lasts `time_wait` ticks and answers FINs again. `abort`
//!   sends a RST (when synchronized) and goes to CLOSED.
//!
//! Counters (32 bits, wrapping): `seg_in` (TCP segments matched to a connection with a good
//! checksum), `seg_out`, `retrans` (segments carrying bytes below SND.MAX, or a SYN/FIN again),
//! `rto_fires`, `drop_csum` (IPv4, ICMP or TCP checksum), `drop_other`, `drop_malformed`,
//! `rst_in`, `rst_out` (RSTs of a connection: abort, retry limit), `echo_out`, `arp_out` (requests and replies sent), `tx_drop`,
//! `ooo_kept` and `ooo_dropped` (out-of-order segments, by the rule above), `dup_acks`
//! (duplicate ACKs received, by the rule above), `fast_retrans` (segments sent by fast
//! retransmit or on a partial ACK; `retrans` counts them too, so `retrans - fast_retrans` is
//! what timeouts resent), `challenge_acks` (segments answered with a challenge ACK: a RST in
//! the window but not at RCV.NXT, a SYN, an ACK outside the acceptable range; several may be
//! answered by one ACK), `rst_dropped` (RSTs ignored: outside the window, or in SYN-SENT
//! without the ACK of the SYN). Every RST matched to a connection counts in exactly one of
//! `rst_in`, `challenge_acks` and `rst_dropped`. `rst_closed`: RSTs sent for segments no
//! connection holds (above).
//!
//! # Features against the RFCs
//!
//! | Feature | RFC | The engine |
//! |---|---|---|
//! | IPv4 header checksum generated and verified; no options, no fragments | 791 | done (options and fragments dropped) |
//! | ARP responder and resolver, small cache | 826 | done |
//! | ICMP echo reply | 792 | done |
//! | TCP checksum generated and verified | 9293 | done |
//! | Active open, FIN close both ways, TIME-WAIT by CSR | 9293 | done |
//! | Passive open (listen) | 9293 | not done (the NVMe/TCP host only connects) |
//! | MSS option | 6691 | done |
//! | Window scale option | 7323 | done |
//! | Timestamps option, PAWS | 7323 | declined |
//! | SACK | 2018 | declined |
//! | ISN from a keyed function of the 4-tuple plus a clock | 6528 | done (HalfSipHash rounds) |
//! | A reopened connection's ISS past its last incarnation's SND.MAX | 9293 3.4.1, 6191 | done |
//! | Retransmission timer: SRTT/RTTVAR, Karn, backoff, minimum, retry limit | 6298 | done |
//! | Cumulative ACK, peer window respected, window update after the consumer drains | 9293 | done |
//! | Receiver silly-window avoidance (the edge held exactly, moved by min(rx/2, MSS)) | 9293 3.8.6.2.2 | done |
//! | ACK for old segments and zero-window probes | 9293 | done |
//! | Immediate duplicate ACK for an out-of-order segment | 5681 4.2 | done |
//! | Out-of-order segments kept | 9293 | done (one range per connection, merged when RCV.NXT reaches it) |
//! | Fast retransmit, NewReno (cwnd inflation and deflation) | 5681, 6582 | done |
//! | Slow start, congestion avoidance | 5681 | done (byte counting; restart window min(cwnd, IW) after an idle RTO, 4.1) |
//! | Delayed ACK | 9293, 5681 | done (CSR `ack_delay`; an ACK at least every second full-sized segment, at once for gaps) |
//! | Zero-window probes | 9293 | done (basic: one byte past a closed window when the RTO timer expires, backed off) |
//! | RST/SYN/ACK attack mitigations: exact RST, challenge ACKs, ACK range | 5961 | done (no challenge-ACK rate limit, section 7, a SHOULD) |
//! | RST for segments to no connection | 9293 3.10.7.1 | done (one waiting at a time; `rst_closed`) |
//! | Nagle | 896 | declined: NVMe/TCP pushes every PDU, and Linux's NVMe/TCP host sets TCP_NODELAY too |
//! | Sender silly-window avoidance, the persist timer as the override timeout | 9293 3.8.6.2.1 | done |
//!
//! # Timing
//!
//! The buffers are byte-lane RAMs (`lanes.rs`: eight memories one byte wide, each with its own
//! address), so eight bytes that follow any sequence number move in one cycle. Sending is 64
//! bits wide: `tx` writes eight bytes of a beat a cycle (a 64-bit beat a cycle; `tx.ready`
//! stays high while beats follow). As the bytes go in, the stream's one's-complement sum up to
//! each buffer word's first byte is kept beside the word (`tx_psum`, 16 bits a word), so a
//! segment's payload checksum is the difference of two such sums, each completed by the bytes
//! of its word: three cycles whatever the segment's length (read the first byte's word, the
//! last byte's, sum). The generator then sends the frame a beat a cycle, five idle cycles
//! between frames (the choice, the checksum's three, the first fetch), so a full segment of L
//! bytes leaves in about (L + 54 + 40) / 8 cycles. The application may not write into the
//! buffer word of SND.UNA (nor of a segment being read) one lap on: the transmit buffer holds
//! up to 7 bytes less than its size. `rx` presents up to
//! eight bytes a cycle: the next beat (of the connection first in turn with bytes and
//! `rx_space_i`, the same one from after the bytes taken) is read from the buffer in the cycle
//! the one on `rx` is taken, so beats follow back to back while they are taken. Receiving: the
//! parser takes the rest of the held beat each cycle (its bytes summed into the IPv4 and the
//! ICMP/TCP checksums with masks of the bytes each covers, a header byte kept in `rx_hdr` from
//! its lane, as beats are full but a frame's last, an echo request's data and a TCP payload
//! written into their buffers at once, the Ethernet padding after a short segment neither),
//! but a chunk stops at byte 54 where the shortest headers end, and the TCP options go a byte
//! a cycle (the option parser is byte-serial; only a SYN-ACK's options are read). The
//! connection is chosen once bytes 0-47 are in (the beat of bytes 48-55 held). So a full
//! segment of L bytes with no options takes ceil((L + 54) / 8) + 1 cycles, a cycle more than
//! its beats: a connection receives about L / (ceil((L + 54) / 8) + 1) bytes a cycle (7.64
//! at L = 1460, 0.99 of the port) and sends about 8 L / (L + 94).

pub mod engine;
mod isn;
mod lanes;

pub use isn::half_siphash;

/// The engine's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpParams {
    /// Byte-stream width in bits (the NVMe/TCP engine's: 64, 128 or 256).
    pub data_width: u32,
    /// Connections (the NVMe/TCP engine's, 2 to 16).
    pub connections: u32,
    /// Transmit buffer per connection, bytes (a power of two, 1024 to 65536).
    pub tx_bytes: u32,
    /// Receive buffer per connection, bytes (a power of two, 1024 to 65536).
    pub rx_bytes: u32,
    /// ARP cache entries (2 to 16).
    pub arp_entries: u32,
    /// Largest ICMP echo request answered, bytes of ICMP message (a power of two, 64 to 2048).
    pub echo_bytes: u32,
}
