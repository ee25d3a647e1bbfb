//! The QoS arbiter and namespace isolation: between the NVMe front end and the transports, it
//! checks every I/O command against its queue's grants, completes the ones it refuses, and
//! releases the others one per cycle under per-queue and per-namespace rate limits.
//!
//! What lives here:
//!
//! - `mod.rs`: the interfaces, checks, scheduling and bucket rules (this text)
//! - `csr.rs`: the register map `qos_csr`
//! - `bucket.rs`: the debt-model token bucket and its lazy (RAM) form
//! - `sched.rs`: `qos_sched`, class priority and WRR over per-class bitmaps
//! - `arbiter.rs`: the top `qos_arbiter`
//!
//! ```text
//!  s_io_cmd --> [check] --denied--> [skid] --> m_io_cpl  (86h/SCT 2, 0Bh, 80h; SCT 0)
//!                  |
//!                  +--admitted--> per-queue buffers --> [class + WRR scheduler] --> m_io_cmd
//!                                 (SQEs, metadata: RAMs)  ^ bitmaps: non-empty, budget,
//!  sq_space_o <-- buffer space per queue                  | class; dst_space_i (channel)
//!                                                         |
//!                     [charge] <-- decided command: queue buckets (lazy, RAM), namespace
//!                                  buckets, counters (RAM)   [sweep] queues without budget
//! ```
//!
//! # Interfaces
//!
//! I/O command stream `s_io_cmd` (from the front end) and `m_io_cmd` (to the transport), the
//! chip's contract: `sqid` [16] (1..N for I/O queues), `sqe` [512] (the 64-byte SQE as fetched:
//! byte i at bits 8i+7:8i; CDW0 = sqe[31:0], NSID = sqe[63:32], CDW10 = sqe[351:320]). Admitted
//! commands leave on `m_io_cmd` unchanged, in order within a queue (not across queues).
//!
//! I/O completion stream `m_io_cpl` (to the front end), for the commands the block completes
//! itself: `sqid` [16], `cid` [16] (CDW0[31:16]), `status` [15] (the CQE status field, DW3[31:17]:
//! SC 7:0, SCT 10:8, CRD 12:11, M 13, DNR 14), `dw0` [32] (always 0). Denials carry DNR = 1.
//! Denials leave in the order their commands arrived, through a two-entry skid buffer; while
//! it is full (the front end holds `m_io_cpl_ready` low), a denied command waits in the check
//! stage and the input stalls: completion backpressure, unlike a lack of budget, stops all
//! queues.
//!
//! Per-queue space `sq_space_o` [Q]: bit `i` is 1 when a command of SQ `i + 1` can be sent
//! without blocking: the block holds fewer than `queue_depth` commands of that queue, counting
//! the one in its check stage. It comes from flip-flops. The front end is expected to use it as
//! an eligibility mask in its own SQ arbitration (a queue with its bit low is skipped, and its
//! next command stays in host memory), so that a queue waiting for budget never stops another
//! queue's commands. A bit only falls because of a command the front end sent. If the front end
//! sends a command anyway, the check stage holds it until its queue has room, which stalls every
//! queue: honouring `sq_space_o` is what isolates the queues. The held command enters its queue
//! in the cycle after the decision (of that queue) that frees a slot, and is a candidate from
//! the cycle after that. Commands of SQ ids outside 1..Q
//! need no space (they are denied) and have no bit.
//!
//! Per-queue destination space `dst_space_i` [Q] (from the chip): bit `i` is 1 when the
//! destination of SQ `i + 1` (the transport channel the chip routes its commands to: a RoCE QP
//! or an NVMe/TCP connection) takes a command now. A buffered head whose bit is low is not
//! eligible (see Scheduling), so a full channel holds back only its own queues' commands and
//! never reaches the output register, where it would stall every queue. Timing, exactly: the
//! bit is looked at in the decision cycle only: a head of SQ `i + 1` can be decided in cycle t
//! only if bit `i` is 1 in cycle t (combinationally, with that cycle's buckets), and the
//! decided command is on `m_io_cmd` (valid) from cycle t + 1 on. Once decided, a command
//! stays in the output register until `m_io_cmd_ready`, whatever the bit does after cycle t.
//! So a command whose first cycle with `m_io_cmd_valid` is t + 1 had its queue's bit at 1 in
//! cycle t, the cycle before (what the testbench checks).
//! The input reaches no output combinationally (the decision's results are registered), so
//! the chip may compute it from `m_io_cmd_valid`/`m_io_cmd_sqid` without a loop. The chip is
//! expected to compute bit `i` as "SQ `i + 1`'s channel has space, and the output register
//! does not already hold a command for that channel": the chip masks a queue whose command
//! sits in the output register (`m_io_cmd_valid` and `m_io_cmd_sqid` = i + 1, whether or not
//! it leaves in this cycle; and every queue routed to the same channel), since the channel's
//! space bit only falls once it took the command. Without that mask a channel with room for
//! one more command would be promised two, and the second would wait in the output register,
//! stalling every queue. The mask costs a queue whose channel has room for several commands
//! back-to-back decisions: it is decided at most every other cycle (a chip whose channels
//! report "room for two" may drop the mask for them). Tie the input to all ones where no
//! channel can be full (the block then behaves as it did without it).
//!
//! CSRs and counters on the AXI4-Lite slave `s_axil` (register map `qos_csr.md`): the global
//! registers (control, namespaces, grants, namespace counters) in the first `2^queue_shift`
//! bytes, the queue window (per queue: class, weight, limits, counters) in the next, its
//! registers held in RAMs and read through a registered read (an access takes about 5 cycles).
//! A write to the queue window replaces the whole register (`wstrb` is ignored).
//!
//! After reset the block clears its per-queue RAMs, one queue per cycle (Q cycles): until then
//! `s_io_cmd_ready` is low and the queue window takes no access (the AXI4-Lite handshake
//! waits). A queue's limits, class and weight may be changed while the block is enabled; a new
//! limit is applied from the queue's next charge or sweep (the refill since the last charge
//! is computed at the new rate), a new weight from the next decision: every decision after
//! the write's response uses it (one made while the write is in flight may use either).
//!
//! # Checks (the check stage, one command per cycle)
//!
//! | opcode | access needed | LBA range checked | costs bandwidth tokens | counted as |
//! |---|---|---|---|---|
//! | 02h Read, 05h Compare | read | yes | yes, (NLB+1) << lba_shift bytes | read |
//! | 01h Write | write | yes | yes | write |
//! | 08h Write Zeroes | write | yes | no (no data moves) | write |
//! | 09h Dataset Management | write | no (its ranges are in a data buffer) | no | write |
//! | 00h Flush | write | no (Flush has no LBA range) | no | write |
//! | any other | read and write | no | no | write |
//!
//! Every command costs one IOPS token. SLBA is CDW11:CDW10, NLB is CDW12[15:0] (0's based).
//! Statuses, first that applies: NSID not in 1..N, or its namespace size is 0 (absent; this
//! includes the broadcast NSID FFFFFFFFh, so a Flush of all namespaces is refused) -> 0Bh
//! Invalid Namespace or Format; an LBA-checked command with SLBA + NLB >= NSZE (or past
//! 2^64) -> 80h LBA Out of Range; otherwise no grant entry matches (or the SQ id is outside
//! 1..Q) -> 86h Access Denied, SCT 2. A grant entry matches when its SQ id and NSID are the
//! command's, it allows every access the opcode needs, and for an LBA-checked command
//! first <= SLBA and SLBA + NLB <= last. A denied command moves no byte: it never reaches
//! `m_io_cmd`.
//!
//! # Scheduling (one decision per cycle)
//!
//! A buffered command at the head of its queue is eligible when the block is enabled
//! (`ctrl.enable`), its queue's `dst_space_i` bit is 1 in that cycle, its queue's budget bit is
//! 1 and its namespace's bandwidth and IOPS buckets have budget. A head that is not eligible is passed over and keeps its place (in its
//! queue and in the round robin); a head passed over for its channel spends no budget. In every
//! cycle where the output register is free (empty, or its command leaves) and some head is
//! eligible, one head is released: from the highest class present among the eligible heads
//! (0 urgent, 1 high, 2 medium, 3 low), weighted round robin among that class's queues (NVMe
//! weights, 0's based: weight w allows w + 1 commands in a row). The decision is work
//! conserving, and a command without budget or channel space waits, never dropped. A command
//! accepted in cycle t is a candidate from cycle t + 2; a decision in cycle t shows on
//! `m_io_cmd` in cycle t + 1. One queue alone may be decided in consecutive cycles.
//!
//! **Charge.** A command decided in cycle t is charged in cycle t + 1: its cost (from the
//! metadata RAM) is taken from its queue's and its namespace's buckets. So a namespace
//! bucket's level in cycle t + 2 is `min(L(t + 1) - spent(t) + r, B)`, where spent(t) is the
//! cost of the command of that namespace decided in cycle t: a decision in cycle t sees every
//! spend decided up to cycle t - 2. A queue's own buckets see every spend: in the charge cycle
//! the queue's budget comes from the charge itself (forwarded), so it may be decided again at
//! once when its buckets still have budget.
//!
//! **Queue budget bit.** A queue's budget bit is 1 after reset and while the block is disabled.
//! The charge sets it to whether both of the queue's buckets have budget after the spend
//! (level >= 0 or rate 0, as stepped by the rule below), effective in the charge cycle. A bit at 0 is set again by the sweep:
//! each cycle it reads one queue whose bit is 0 (round robin over them, by queue index) and sets
//! the bit when both buckets have budget. Rule: if a queue's buckets reach budget again in cycle
//! x (its levels are exact whatever the lag: lazy refill loses no token), its bit is 1 again by
//! cycle x + Q + 2 at the latest (sooner with fewer queues in debt); it is never 1 while a bucket
//! of the queue has no budget. The check allows exactly that freedom: in the lag window a queue
//! may or may not be eligible, outside it eligibility is exact.
//!
//! Counters. Per queue (RAM, read through the queue window): `adm_*`, `bytes_*` and `deny_*` as
//! before; `thr_rd`/`thr_wr` count the commands whose charge left a bucket of their queue in
//! debt (the queue then waited for budget). Per namespace (flip-flops): `adm_*`, `bytes_*` (in
//! the charge cycle), `deny_*`, and `wait_rd`/`wait_wr`: the cycles in which some queue's head of
//! that namespace and direction waited for budget alone: the block is enabled, the head is
//! buffered, its queue was not decided in the previous cycle, its `dst_space_i` bit is 1, and
//! its queue's budget bit is 0 or its namespace bucket has no budget. With the budget bit's lag
//! the check accepts any count between the cycles that surely waited and those that may have.
//!
//! Token buckets (debt model): the level L is a signed fixed-point count; a bucket has budget
//! when L >= 0 or its rate is 0 (unlimited). A charged command takes its whole cost, so the
//! level may go negative (a queue bucket by one command at most, a namespace bucket by two: the
//! commands decided in two consecutive cycles), and with nothing spent the next cycle's level is
//! min(L + rate, burst). So over every window of T cycles a queue bucket admits at most
//! rate * T + burst + (its largest command), a namespace bucket rate * T + burst + 2 (its
//! largest command), and under saturation exactly rate * T in the long run. While `ctrl.enable`
//! is 0, or a rate is 0, the bucket is held full. Rates are per cycle: bandwidth in bytes per
//! cycle with 16 fraction bits, IOPS in commands per cycle with 24.
//!
//! # Structure and scaling
//!
//! Flip-flops per queue: the buffer pointers and count (3 dw + 1 bits for depth 2^dw), the class
//! (2), "weight is 0" (1), the budget bit (1), the head's namespace index and direction
//! (clog2 N + 1): 14 bits at depth 4 and 4 namespaces, whatever the limits and counters. In RAMs
//! (registered reads): the SQEs (Q x depth x 512 bits) and their metadata (namespace, cost,
//! direction), per queue the limits (4 words of 32 bits), the bucket levels with the cycle they
//! are the levels of (146 bits: lazy refill, `min(L + rate * (now - then), burst)`, idle time
//! counted up to 2^40 cycles), the six charge counters and the two deny counters. The namespace
//! buckets, counters and the grant table stay in flip-flops (at most 64 each).
//!
//! Pipeline: decision (cycle t) -> charge (t + 1: RAM words read at t, lazy refill to cycle t,
//! spend, write back; budget bit, counters, namespace buckets). The charge's budget and the new
//! head's namespace (read from the metadata RAM at the decision) feed the eligibility of the
//! charged queue in the charge cycle itself, and a queue charged in consecutive cycles gets
//! the previous charge's bucket and counter words forwarded (its RAM read saw the old ones).
//! The sweep reads one queue without budget per cycle (RAM read ports of its own) and sets its
//! bit the cycle after. Denials update their queue's counters by read-modify-write with the
//! previous cycle's write forwarded.
//!
//! The command buffer stays per queue (Q x depth SQEs): 16 KiB at 64 queues and depth 4,
//! 256 KiB at 1024 queues and depth 4, 256 KiB at 4096 queues and depth 2 (the configuration to
//! use there). A shared pool with per-queue linked lists would size it by commands in flight
//! instead; not done.
//!
//! Timing of the decision (the critical path): the per-queue eligibility bits (a few gates each,
//! the namespace budget selected by the head's namespace index), four per-class searches for the
//! first eligible queue at or after the class's pointer, each in two levels (`sched.rs`: about
//! 2 sqrt(Q) carry gates in series instead of Q), a priority multiplexer of the four, and the
//! RAM read addresses. The longest path starts at the bucket RAM's read data: the charge's lazy
//! refill (a 32 x 40-bit multiply for each bucket kind), the spend, the budget's sign, the
//! charged queue's eligibility, the search, the next RAM addresses. Fine in simulation; for a
//! fast FPGA clock the refill is to be pipelined or mapped to DSPs (at the price of the
//! charged queue's back-to-back decision, or a second look-ahead budget bit).

pub mod arbiter;
pub mod bucket;
pub mod csr;
pub mod sched;

/// Parameters of the QoS arbiter, from the `[qos]` section of the configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QosParams {
    /// I/O queues served (SQ ids 1..=queues), 2 to 4096.
    pub queues: u32,
    /// Namespaces policed (NSIDs 1..=namespaces).
    pub namespaces: u32,
    /// Grant table entries.
    pub grants: u32,
    /// Commands buffered per queue (a power of two).
    pub queue_depth: u32,
    /// Counter width in bits.
    pub counter_width: u32,
}

impl QosParams {
    /// A parameter suffix for module names: `_q64_n4_g8_d4`.
    pub fn suffix(&self) -> String {
        format!(
            "_q{}_n{}_g{}_d{}",
            self.queues, self.namespaces, self.grants, self.queue_depth
        )
    }
}

/// Fraction bits of a bandwidth rate (bytes per cycle).
pub const BW_FRAC: u32 = 16;
/// Fraction bits of an IOPS rate (commands per cycle).
pub const IOPS_FRAC: u32 = 24;
/// Width of a bandwidth bucket's capacity (bytes) and of a command's cost in bytes.
pub const BW_BITS: u32 = 32;
/// Width of an IOPS bucket's capacity (commands).
pub const IOPS_BURST_BITS: u32 = 8;
