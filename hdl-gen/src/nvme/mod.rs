//! The NVMe queue engine: the host-facing controller front end (`nvme_ctrl`).
//!
//! What lives here:
//!
//! - `mod.rs`: the interfaces and policies (this text)
//! - `params.rs`: parameters from the configuration and the vendor CSR map `nvme_csr`
//! - `ctrl/`: `nvme_ctrl`: BAR0, the queue FSM over the SQ/CQ state RAMs, SQ fetch and
//!   arbitration, dispatch, CQ post, interrupt coalescing, latency histograms (one file per
//!   concern, listed in `ctrl/mod.rs`)
//!
//! ```text
//!  host MMIO (s_bar, AXI4-Lite) --> BAR0 registers, doorbells --+
//!                                                              v
//!  firmware (s_axil, AXI4-Lite) --> vendor CSRs (nvme_csr) --> queue FSM <--> SQ/CQ state RAMs
//!                                                              |   ^
//!        +----------- SQ fetch (AR/R) <------ class FIFOs <----+   |  completions (3 sources)
//!        v                                                        |
//!   fetch buffer --> dispatch --> io_cmd (offloaded I/O SQEs) ... io_cpl ---+
//!                           \--> admin_cmd (admin SQEs, fallback I/O SQEs) ... admin_cpl
//!                            \-> internal errors (02h, 04h) --+
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
//!   taken by the queue FSM (doorbells back-pressure the bus, they are never lost). The admin
//!   queues take any size AQA can hold (2 to 4096 entries), whatever `max_queue_depth` (CAP.MQES
//!   + 1) is: MQES bounds the I/O queues only, so queue indices are at least 12 bits wide.
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
//! - `admin_cmd` (out): `sqid` [16], `sqe` [512]: to firmware. `sqid` 0: an SQE of the admin
//!   queue, unchecked. `sqid` y > 0: an I/O SQE of SQ y on the fallback path (below), which
//!   passed the front end's own checks but whose opcode the hardware does not carry; firmware
//!   executes it, or completes it with 01h Invalid Command Opcode.
//! - `admin_cpl` (in): `sqid` [16], `cid` [16], `status` [15], `dw0` [32]: a CQE from firmware,
//!   posted on SQ `sqid`'s completion queue with its SQ head, as `io_cpl` is (0: the admin
//!   queue). Firmware answers each command `admin_cmd` handed it exactly once, with the `sqid`
//!   it came with. An `sqid` above `io_queue_pairs` is dropped.
//! - `irq` (out): `vector` [clog2(interrupt_vectors)], one MSI-X vector number per interrupt.
//! - `sq_space_i` [io_queue_pairs]: bit `y - 1` high means SQ y may be fetched from (QoS has
//!   room for it). A queue whose bit is low is skipped by the arbiter and stays scheduled.
//! - `mps_o` [4]: CC.MPS, for the DMA engine.
//!
//! # What the hardware does and does not check; offload and fallback
//!
//! Admin commands are not decoded at all: they go to firmware, which answers on `admin_cpl`.
//! I/O commands are checked, in this order (the first that applies decides):
//!
//! 1. An SQE fetch that returned an AXI error completes with 04h Data Transfer Error when the
//!    beat holding CDW0 was good (the CID is known), and sets CSTS.CFS otherwise (nothing can
//!    be completed: the controller is fatal until CC.EN 1 -> 0).
//! 2. CDW0 with FUSE (bits 9:8) non-zero (fused operations are not supported), a reserved bit
//!    13:10 set, or PSDT (bits 15:14) = 11b completes with 02h Invalid Field in Command. CDW0's
//!    layout is common to every opcode, so this is checked before the opcode is looked at:
//!    firmware never sees a malformed CDW0.
//! 3. A Write 01h or Read 02h of more blocks than MDTS allows (`NLB + 1 > 2^mdts * 8`: 512-byte
//!    blocks, CAP.MPSMIN 4 KiB) completes with 02h Invalid Field in Command, as the
//!    specification requires of a command that exceeds MDTS. `mdts` is a parameter (the chip
//!    sets it from the DMA engine's length width: transfers up to `2^len_width - 1` bytes, so
//!    MDTS is `2^(len_width - 1)` bytes) and `nvme_csr.limits.mdts` reads it, for firmware's
//!    Identify Controller. No transport ever sees a command its DMA engine cannot move.
//! 4. **Offload**: Flush 00h, Write 01h, Read 02h, Write Zeroes 08h and Dataset Management 09h
//!    go out on `io_cmd` (counted in `nvme_csr.cnt_offload`).
//! 5. **Fallback**: every other opcode goes to firmware on `admin_cmd` with its SQ id (counted
//!    in `nvme_csr.cnt_fallback`), and firmware's answer on `admin_cpl` is posted on that SQ's
//!    completion queue. Compare 05h takes this path until a transport carries it; so does any
//!    optional or vendor-specific opcode firmware chooses to implement. The hardware itself no
//!    longer completes any I/O command with 01h.
//!
//! The fallback path shares `admin_cmd` with the admin queue, in fetch order: a fallback SQE
//! at the head of the fetch buffer waits only for the `admin_cmd` register to be free (the
//! offloaded SQEs behind it wait with it, as they wait for `io_cmd`), never for firmware to
//! execute it, since firmware takes the SQE and answers later. Firmware that stops taking
//! `admin_cmd` stalls the front end's dispatch, so it must keep taking it (it may hold the
//! commands it took as long as it likes). A fallback command is not seen by QoS (no budget,
//! no namespace grant check): firmware is responsible for what it executes.
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
//! # Arbitration (NVMe base specification 2.0, §3.4.4; Arbitration feature 01h)
//!
//! Every SQ with work to fetch waits in exactly one of four class FIFOs (urgent, high, medium,
//! low), each at most once. One decision picks one SQ and fetches one burst from it; the
//! order of decisions is exact and is what `models::nvme_arb::Arbiter` computes:
//!
//! - **Round robin** (CC.AMS = 0): every SQ, the admin SQ included, waits in the first FIFO, so
//!   all SQs take equal turns (the specification's round robin "amongst all submission queues,
//!   including the admin submission queue").
//! - **Weighted round robin with urgent class** (CC.AMS = 1): the admin SQ is served first
//!   (strict priority, outside the FIFOs), then the urgent class (strict, round robin inside),
//!   then high, medium and low in weighted round robin. Weights count commands, as the feature
//!   defines them ("the number of commands that may be executed from the class in each
//!   arbitration round", 0's based): the class whose turn it is keeps it while it has fetched
//!   fewer than `weight + 1` SQEs in this turn and has an eligible SQ with work; otherwise the
//!   turn passes to the next class in the order high -> medium -> low -> high that has one,
//!   starting at 0 (a class with nothing eligible forfeits the rest of its turn; when no
//!   other class can go, the same class starts a new turn). The turn survives urgent and
//!   admin decisions in between; CC.EN 1 -> 0 gives it back to high.
//! - **Round robin within a class**: the FIFO's order. A decision takes the head; an SQ with
//!   work left after its burst goes to the back (written one cycle after ST_FETCH_N, while its
//!   read request is on AR and no decision can be made; its class's rotation waits that
//!   cycle, so the order is as if it went back at once); a doorbell that gives an idle SQ
//!   work puts it at the back; a doorbell for an SQ already waiting moves only its tail.
//! - **Burst**: a decision fetches `min(2^AB (AB = 7: no limit), fetch_burst, entries
//!   published, entries to the ring's end, entries to the next 4 KiB, what is left of a WRR
//!   class's turn)` SQEs in one AXI burst. So no SQ ever launches more than 2^AB commands at a
//!   time, and no class more than its weight in a round. (A fetch starts only when
//!   `fetch_burst` fetch-buffer slots are free, so the burst never waits for room.)
//! - **Eligibility** (`sq_space_i`): an SQ whose bit is low is passed over, costs its class
//!   nothing and keeps no turn. In IDLE each class FIFO whose head is ineligible moves that
//!   head to the back (one per class per cycle); after a whole circle of ineligible heads the
//!   class is blocked (it takes no part in decisions until a head is eligible or the FIFO is
//!   pushed). A decision waits while a class is still rotating, so it always sees each class
//!   with an eligible head, empty, or blocked: a throttled queue never blocks another, and the
//!   order among eligible SQs is the model's with the ineligible ones left out. The bit is
//!   looked at again when the burst is issued; if it fell in between, the SQ goes to the back
//!   without fetching and without cost.
//! - **When a doorbell counts**: a doorbell whose BAR0 write is accepted in cycle `t` takes
//!   part in every decision whose SQ read request rises on AR in cycle `t + 5` or later, and
//!   in none before (the decision is made in IDLE four cycles before `arvalid` rises: ST_READ
//!   reads the SQ's state, ST_FETCH registers its ring distances, ST_FETCH_N sizes the burst;
//!   and IDLE serves a pending doorbell before deciding). `nvme_arbitration` relies on this.
//! - **Fetch latency**: ineligible SQs never stall fetching. A class rotates one ineligible head
//!   away per IDLE cycle and holds decisions up only until it has been around once since its
//!   last push (it keeps rotating while blocked, holding nothing up), and a FIFO holds at most
//!   `io_queue_pairs` I/O SQs. So when the FSM has nothing else to serve (no doorbell, firmware
//!   queue operation or completion pending, no read request outstanding, fetch credits and
//!   descriptor room for a burst), a doorbell accepted in cycle `t` that gives an eligible SQ
//!   work has a read request rise on AR by cycle `t + 8 + io_queue_pairs`: IDLE takes the
//!   doorbell up at `t + 1`, ST_READ reads the queue's state at `t + 2`, ST_DB pushes the SQ to
//!   its class at `t + 3`, and the decision is made in IDLE from `t + 4` (AR four cycles later),
//!   after at most one circle of a FIFO: `io_queue_pairs` IDLE cycles. `nvme_arbitration`
//!   checks this with whole classes throttled.
//!
//! # Completions
//!
//! A CQE is written only when the CQ has a free slot (`tail + 1 != head`); a full CQ holds its
//! completion (and the completion source) until the host's head doorbell frees a slot.
//!
//! The three sources (internal errors, `admin_cpl`, `io_cpl`) are arbitrated round robin into
//! a one-completion buffer, taken whenever it is empty: the stream's handshake ends there, and
//! the queue FSM posts from the buffer (so a source's payload is read only in its handshake
//! cycle). `io_cpl` valid to the CQE's AW valid is 5 cycles on an idle front end.
//!
//! # Interrupt coalescing (features 08h and 09h)
//!
//! Per vector, `count` is the completions not yet covered by an interrupt and `age` the time
//! units (`coal_tick` cycles each, one free-running prescaler for all vectors) since the first
//! of them. A completion counts when the write response of its CQE comes back OK and its CQ
//! has interrupts enabled. An interrupt becomes due, and `count` and `age` restart at 0, when:
//! a completion posts on a vector with coalescing disabled (09h CD: one interrupt per
//! completion); a completion makes `count` reach `THR + 1` (so with THR = n the (n + 1)th
//! completion not yet signalled raises it, in its own cycle); `count` is non-zero and TIME is
//! 0 (no delay); or a time unit ends that brings `age` to TIME while `count` is non-zero (TIME
//! units after the first completion at most, never later). A due interrupt is pending until it
//! is loaded into the `irq` register, the lowest pending vector first, whenever the register is
//! empty or being taken; a vector that becomes due again while pending is covered by that one
//! interrupt (one interrupt per batch: the completions posted up to the moment it is loaded).
//! A completion whose response arrives in cycle `t` and makes its vector due shows on `irq` in
//! cycle `t + 2` if nothing else is pending. So every completion is followed by an interrupt,
//! and every interrupt by a completion before it. `models::nvme_arb::Coalescer` is the rule,
//! and `nvme_coalescing` checks it cycle by cycle.
//!
//! # Latency histograms (read and write latency kept apart)
//!
//! Three histograms, by the timed command's opcode: 0 read (02h), 1 write (01h), 2 other
//! (every other opcode, fallback commands included, and a command whose SQE fetch failed).
//! Bin b (0..31) counts latencies L with 2^b <= L < 2^(b + 1) cycles (bin 31: L >= 2^31);
//! counters are 32 bits and saturate. Firmware computes P50/P99/P99.9/P99.99 from them, each to
//! within its bin (a factor of two).
//!
//! What is timed: an exact latency for a sample of the commands, one command per I/O SQ at
//! a time (a per-entry doorbell timestamp for every outstanding command would cost a RAM word
//! per queue entry; this costs a few fields of the SQ's state word and one small RAM word per
//! queue). Exactly:
//!
//! - **Sampler.** Each I/O SQ (not the admin queue) has one. It is free when the SQ is created
//!   and after CC.EN 1 -> 0.
//! - **Start.** A tail doorbell of SQ y accepted on BAR0 in cycle t (`s_bar` AW/W handshake)
//!   that is not a fault and moves the tail arms y's sampler if the sampler is free in cycle
//!   t: the timed command is the one in the first entry that doorbell publishes (the old
//!   tail), and its latency starts at t.
//! - **Busy.** The sampler is busy from then until the cycle the front end decides to post
//!   the timed command's CQE (the cycle before that CQE's `m_axi_awvalid` rises), and free
//!   from the next cycle on; so a doorbell accepted in the cycle of that decision or earlier
//!   does not arm it. A timed command that never gets a CQE (its SQE fetch failed on the CDW0
//!   beat; a controller reset dropped it) keeps the sampler busy until CC.EN 1 -> 0 or a new
//!   Create I/O SQ of that id.
//! - **End.** The cycle the timed CQE's write response is taken (`m_axi` B handshake) with
//!   OKAY: the CQE is in host memory. L = end - start (at least 1). Only then is it counted.
//! - **Clearing.** `lat_ctrl.clear` zeroes every bin, one per cycle (96 cycles,
//!   `status.lat_clearing`); write responses taken meanwhile are not counted. Reset starts a
//!   clear by itself; CC.EN does not clear the histograms.
//!
//! Firmware reads bin `lat_sel.bin` of histogram `lat_sel.dir` in `lat_count` (a RAM read:
//! a completion whose write response was taken in the cycle of the read or the four before
//! may be missing).
//! Timestamps are 32 bits: a doorbell that comes a multiple of 2^32 cycles after the last
//! post of its SQ's timed command could find the sampler busy.
//!
//! Controller reset (CC.EN 1 -> 0): fetching and posting stop, every queue is cleared (one
//! RAM word per cycle), fetched SQEs and returning completions are dropped, and CSTS.RDY falls
//! once nothing is in flight: no AXI burst outstanding, and every command handed out on
//! `io_cmd` and `admin_cmd` answered on `io_cpl`/`admin_cpl` (firmware answers the commands it
//! holds, such as Asynchronous Event Requests and fallback I/O commands it has not finished,
//! when it sees `status.cc_en` low; the front end drops those answers).
//!
//! # Functions (SR-IOV): the contract for `[nvme] virtual_functions = N` (not built yet)
//!
//! Nothing below is in the RTL yet (issue 21); it is the contract the front end with functions
//! is to be built and checked against, written here first so the transports, QoS, the DMA
//! engine and the chip top can be changed to it. With `N = 0` every interface stays as above.
//!
//! - **Functions.** Function 0 is the physical function (the primary controller), 1..N the
//!   virtual functions (secondary controllers, controller ids 1..N). Every field that names a
//!   function is `fn` [FW], FW = clog2(N + 1) (at least 1).
//! - **BAR0.** `s_bar_awuser`/`s_bar_aruser` [FW] carry the function of each access, as a PCIe
//!   core delivers its function number beside the address. Each function sees the BAR0 layout
//!   above, with its own CC, CSTS, AQA, ASQ, ACQ and INTMS/INTMC, kept in a RAM word per
//!   function (a few flip-flops per function: the goal of the issue). CAP is the same for all.
//! - **Queue pool.** The SQ/CQ state RAMs are indexed by pool entry, not by queue id. Entry f
//!   is function f's admin queue pair; entries N + 1 .. N + `io_queue_pairs` are the I/O pool.
//!   A map RAM, (function, local queue id 1..`max_queues_per_function`) -> pool entry + valid,
//!   is written only by the primary controller's firmware through `nvme_csr` (Virtualization
//!   Management 1Ch: VQ resources assigned with action 8h Secondary Assign, taken back with
//!   7h Secondary Offline); every entry's state word holds its owner and local id back.
//!   A function sees its own local ids 1..n only; Create I/O SQ/CQ of a function (firmware's
//!   work, as today) names a local id and the hardware resolves it through the map.
//! - **Vectors.** The same for MSI-X (VI resources): (function, local vector) -> pool vector,
//!   coalescing state per pool vector, Features 08h and 09h per function; `irq` adds `fn`
//!   and gives the function's local vector.
//! - **Doorbells.** A doorbell of function f is decoded through f's map. A local id that is
//!   not mapped, or whose queue is not created, changes nothing and raises f's Invalid
//!   Doorbell Register asynchronous event (f's own `events`/`event_qid`, read by firmware with
//!   the function); so does a write to a function that is offline (its CC and doorbells are
//!   ignored, CSTS.RDY stays 0). No doorbell of f ever reaches another function's entries.
//! - **Streams out and in.** `io_cmd` and `admin_cmd` add `fn`; their `sqid` becomes the pool
//!   entry (unique over functions, so QoS, the routing table and the transports keep one
//!   queue index), and `admin_cmd`'s `sqid` f is function f's admin queue. `io_cpl`/`admin_cpl`
//!   answer with the pool entry; the CQE carries the local SQ id. `m_axi_aruser`/`awuser`
//!   [FW] carry the function of every SQE fetch and CQE write; the transports carry `fn` to
//!   the DMA engine, whose bursts carry it too, so host memory can be checked per function.
//! - **Arbitration.** Round robin between functions with an eligible SQ (one decision each
//!   in turn), then, inside the function, its own Feature 01h and CC.AMS as above. The class
//!   FIFOs become linked lists in RAM (a next-entry RAM over the pool, head and tail per
//!   function and class), so 64 functions cost RAM words, not flip-flops.
//! - **Function reset** (FLR, or CC.EN 1 -> 0 of one function): fetching and posting stop for
//!   that function's entries only; its fetched SQEs and returning completions are dropped;
//!   `fn_fence_o` [N + 1] holds its bit high from the reset's start until its CSTS.RDY falls,
//!   and the DMA engine completes, without writing host memory, every burst of a fenced
//!   function; the bit falls, and the reset finishes, only when that function has no command
//!   unanswered on `io_cmd`/`admin_cmd` and no AXI burst outstanding (counted per function).
//!   So no byte of a command from before the reset reaches its memory after it. The sweep of
//!   its entries yields to every other function's doorbells and completions, so another
//!   function waits at most one queue-FSM cycle per operation for it. After an FLR the
//!   function's VQ and VI assignments stay (firmware takes them back with 7h).
//! - **Firmware.** `admin_cmd` carries the function of each admin command; Identify
//!   Controller (CNTLID, the Secondary Controller List CNS 15h, the Primary Controller
//!   Capabilities CNS 14h) and Virtualization Management are firmware's, with `nvme_csr`
//!   giving it the map, the per-function online state and each function's resources.

pub mod ctrl;
pub mod params;
pub use params::{mdts_for_len_width, NvmeParams};
