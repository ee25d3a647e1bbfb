//! The QoS arbiter and namespace isolation: between the NVMe front end and the transports, it
//! checks every I/O command against its queue's grants, completes the ones it refuses, and
//! releases the others one per cycle under per-queue and per-namespace rate limits.
//!
//! ```text
//!  s_io_cmd --> [check] --denied--> [skid] --> m_io_cpl  (86h/SCT 2, 0Bh, 80h; SCT 0)
//!                  |
//!                  +--admitted--> per-queue buffers --> [class + WRR scheduler] --> m_io_cmd
//!                                 (SQE in one RAM)        ^ token buckets: queue and
//!  sq_space_o <-- buffer space per queue                  | namespace, bytes and commands
//!                                                         ^ dst_space_i: the queue's
//!                                                           transport channel has space
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
//! queue: honouring `sq_space_o` is what isolates the queues. Commands of SQ ids outside 1..Q
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
//! CSRs and counters on the AXI4-Lite slave `s_axil` (register map `qos_csr.md`).
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
//! (`ctrl.enable`), its queue's `dst_space_i` bit is 1 in that cycle, and every bucket that
//! applies has budget: its queue's bandwidth and IOPS buckets and its namespace's bandwidth
//! and IOPS buckets. A head that is not eligible is passed over and keeps its place (in its
//! queue and in the round robin); a head passed over for its channel spends no budget. In
//! every cycle where the output
//! register is free (empty, or its command leaves) and some head is eligible, one head is
//! released: from the highest class present among the eligible heads (0 urgent, 1 high,
//! 2 medium, 3 low), weighted round robin among that class's queues (NVMe weights, 0's based:
//! weight w allows w + 1 commands in a row). The decision is work conserving, and a command
//! without budget or channel space waits, never dropped. A command accepted in cycle t is a
//! candidate from cycle t + 2; a decision in cycle t shows on `m_io_cmd` in cycle t + 1.
//!
//! Counters `wait_rd`/`wait_wr` count the cycles a head waited for budget alone: the block
//! is enabled, the head is buffered, its queue's `dst_space_i` bit is 1, and some bucket of
//! the head has no budget. A cycle whose bit is 0 is the channel's wait, not the budget's,
//! and is not counted (with or without budget). The namespace's counters count a cycle once
//! if any queue's head of that namespace and direction waits so.
//!
//! Token buckets (debt model): the level L is a signed fixed-point count; a bucket has budget
//! when L >= 0 or its rate is 0 (unlimited). A released command takes its whole cost, so the
//! level may go negative (one command's worth at most), and the next cycle's level is
//! min(L - spent + rate, burst). So over every window of T cycles a bucket admits at most
//! rate * T + burst + (its largest command), and under saturation exactly rate * T in the long
//! run. While `ctrl.enable` is 0, or a rate is 0, the bucket is held full. Rates are per cycle:
//! bandwidth in bytes per cycle with 16 fraction bits, IOPS in commands per cycle with 24.
//!
//! # Scaling
//!
//! The SQEs are in one RAM (queues x depth words of 512 bits, registered read); per-queue
//! pointers, the heads' metadata (namespace, cost, direction), buckets, WRR state and counters
//! are flip-flops, which suits the tens of queues of the shipped configurations (up to 64).
//! For thousands of queues the same structure keeps the SQE RAM and moves per-queue metadata,
//! bucket levels and counters into RAMs, with a ready-list of eligible queues per class
//! instead of the flat priority encoder.

pub mod arbiter;
pub mod bucket;
pub mod csr;
pub mod sched;

/// Parameters of the QoS arbiter, from the `[qos]` section of the configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QosParams {
    /// I/O queues served (SQ ids 1..=queues).
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
    /// A parameter suffix for module names: `_q8_n4_g8_d4`.
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
