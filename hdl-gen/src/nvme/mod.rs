//! The NVMe queue engine: the host-facing controller front end (`nvme_ctrl`).
//!
//! ```text
//!  host MMIO (s_bar, AXI4-Lite) --> BAR0 registers, doorbells --+
//!                                                              v
//!  firmware (s_axil, AXI4-Lite) --> vendor CSRs (nvme_csr) --> queue FSM <--> SQ/CQ state RAMs
//!                                                              |   ^
//!        +----------- SQ fetch (AR/R) <------ class FIFOs <----+   |  completions (3 sources)
//!        v                                                        |
//!   fetch buffer --> dispatch --> io_cmd (I/O SQEs) ... io_cpl ---+
//!                           \--> admin_cmd (admin SQEs) ... admin_cpl
//!                            \-> internal errors (01h, 02h, 04h) --+
//!   CQ post (AW/W/B) --> interrupt coalescing --> irq (MSI-X vector numbers)
//! ```
//!
//! # Interfaces of `nvme_ctrl`
//!
//! All streams follow DESIGN.md: `<name>_valid`, `<name>_ready`, `<name>_<field>`.
//!
//! - `s_bar_*`: AXI4-Lite slave, 32-bit data, BAR0 of the NVMe controller: CAP, VS, INTMS,
//!   INTMC, CC, CSTS, AQA, ASQ, ACQ below 1000h; SQ y tail / CQ y head doorbells at
//!   `1000h + (2y [+1]) * (4 << DSTRD)`. Every access answers OKAY; reserved registers read 0,
//!   writes to them are ignored. A write is accepted only when the previous doorbell has been
//!   taken by the queue FSM (doorbells back-pressure the bus, they are never lost).
//! - `s_axil_*`: AXI4-Lite slave of the vendor CSRs (`nvme_csr`, rtl/nvme_csr.md): the
//!   firmware's window. Firmware creates and deletes I/O queues (`q_*` registers then a
//!   `q_cmd` write; `status.busy` is high until the hardware has applied it), programs the
//!   Arbitration (`arb`, Feature 01h DW11 layout) and Interrupt Coalescing (`coalesce`,
//!   Feature 08h DW11 layout; `vec_cfg`, Feature 09h) features, reads doorbell faults for the
//!   Asynchronous Event Request (`events`, `event_qid`), and reads the counters.
//! - `m_axi_*`: AXI4 master to host memory (ID 0 on every burst, so reads return in order):
//!   SQ fetches (INCR bursts of whole SQEs, never crossing 4 KiB) and CQE writes (16 bytes).
//! - `io_cmd` (out): `sqid` [16], `sqe` [512] (the 64-byte SQE as fetched, byte i at bits
//!   8i+7:8i). Only I/O commands that passed the checks below.
//! - `io_cpl` (in): `sqid` [16], `cid` [16], `status` [15] (CQE DW3[31:17]), `dw0` [32]. The
//!   front end fills SQ head, SQ id and phase and writes the CQE to the SQ's completion queue.
//! - `admin_cmd` (out): `sqe` [512], every SQE of the admin queue, unchecked.
//! - `admin_cpl` (in): `cid` [16], `status` [15], `dw0` [32]: the admin CQE from firmware.
//! - `irq` (out): `vector` [clog2(interrupt_vectors)], one MSI-X vector number per interrupt.
//! - `sq_space_i` [io_queue_pairs]: bit `y - 1` high means SQ y may be fetched from (QoS has
//!   room for it). A queue whose bit is low is skipped by the arbiter and stays scheduled.
//! - `mps_o` [4]: CC.MPS, for the DMA engine.
//!
//! # What the hardware does and does not check
//!
//! Admin commands are not decoded at all: they go to firmware, which answers on `admin_cpl`.
//! I/O commands are checked, in this order: an SQE fetch that returned an AXI error completes
//! with 04h Data Transfer Error when the beat holding CDW0 was good (the CID is known), and
//! sets CSTS.CFS otherwise (nothing can be completed: the controller is fatal until CC.EN
//! 1 -> 0); an opcode other than Flush 00h, Write 01h, Read 02h, Write Zeroes 08h and Dataset
//! Management 09h completes with 01h Invalid Command Opcode (Compare is not supported); CDW0
//! with FUSE (bits 9:8) non-zero (fused operations are not supported), a reserved bit 13:10
//! set, or PSDT (bits 15:14) = 11b completes with 02h Invalid Field in Command.
//!
//! # Queues
//!
//! Per-queue state lives in two RAMs indexed by queue id (0 = admin), so the design scales to
//! thousands of queues: SQ word (enable, scheduled, priority class, CQ id, size, fetch head,
//! tail, base, fetched and completed counters) and CQ word (enable, interrupts enabled, phase,
//! vector, size, head, tail, base). A third small RAM holds each SQ's "arrived" head: the
//! head after the last SQE whose data has come back, reported as SQHD (so the host never
//! reuses an entry the controller has not read yet). One FSM serializes every access: doorbells
//! first, then firmware queue operations, then completions, then fetches.
//!
//! Arbitration: a queue with work is in exactly one of four class FIFOs (urgent, high, medium,
//! low; in round-robin mode, CC.AMS = 0, every queue uses the first). The admin queue is served
//! first, then urgent, then high/medium/low in weighted round robin by selections (a class
//! gets `weight + 1` selections in a row). A selection fetches up to `min(2^AB, fetch_burst,
//! free fetch-buffer slots, entries to the ring's end, entries to the 4 KiB boundary)` SQEs in
//! one burst; a queue with work left goes to the back of its class FIFO. A fetch starts only when
//! `fetch_burst` fetch-buffer slots are free, so a busy queue is read in full bursts.
//!
//! Completions: a CQE is written only when the CQ has a free slot (`tail + 1 != head`); a full
//! CQ holds its completion (and the completion source) until the host's head doorbell frees a
//! slot. After the CQE's write response, its vector's coalescing counter counts it; a vector
//! fires when `THR + 1` completions are pending, or `TIME` time units (`coal_tick` cycles
//! each) after its first pending completion, or at once when coalescing is off for it.
//!
//! Controller reset (CC.EN 1 -> 0): fetching and posting stop, every queue is cleared (one
//! RAM word per cycle), fetched SQEs and returning completions are dropped, and CSTS.RDY falls
//! once nothing is in flight: no AXI burst outstanding, and every command handed out on
//! `io_cmd` and `admin_cmd` answered on `io_cpl`/`admin_cpl` (firmware answers the admin
//! commands it holds, such as Asynchronous Event Requests, when it sees `status.cc_en` low).

pub mod ctrl;
pub mod params;
pub use params::NvmeParams;
