//! The DMA engine: PRP and SGL scatter-gather between host memory (an AXI4 master port) and the
//! chip's data streams.
//!
//! What lives here:
//!
//! - `mod.rs`: the interface contract between the parts (this text)
//! - `params.rs`: the engine's parameters from the configuration
//! - `walker.rs`: the descriptor walker (PRP lists, SGL segments into host memory segments)
//! - `mover.rs`: the data mover (segments into AXI4 bursts, both directions)
//! - `window.rs`: the segment window of the windowed engine (a byte range of a transfer)
//! - `engine.rs`: the top `dma_engine` (walker, mover, AR arbitration, counters)
//!
//! ```text
//!  s_cmd --> [dma_walker] --seg--> [dma_mover] <--> m_data (host memory -> stream)
//!                |  PRP lists, SGL segments |  <--> s_data (stream -> host memory)
//!                +--- AXI4 reads ----+------+  --> m_done (one completion per command)
//!                                    v
//!                          AXI4 master (host memory)
//! ```
//!
//! # Interfaces (shared by the walker and the mover)
//!
//! Command stream `s_cmd` into the walker: `tag` [T], `write` [1] (1: stream -> host memory,
//! for a host Read; 0: host memory -> stream, for a host Write), `sgl` [1] (PSDT != 0), `dptr`
//! [128] (SQE DW6-9 as one little-endian value: PRP1 = dptr[63:0], PRP2 = dptr[127:64]; or one SGL
//! descriptor: address [63:0], length [95:64], identifier byte [127:120]), `len` [L] (bytes; 0
//! allowed); the walker's own `s_cmd` also has `from` [L] (the first byte needed; `dma_engine`
//! ties it to 0, `dma_engine_win` to `win_off`). Input `mps_i` [4]: CC.MPS, the memory page
//! size is `4096 << mps`.
//!
//! Segment stream `seg` from the walker to the mover: `tag` [T], `write` [1], `addr` [64], `len`
//! [L] (bytes, at least 1 unless `status` is set), `bucket` [1] (an SGL bit bucket: write direction
//! only; the mover consumes `len` stream bytes and drops them, touching no memory), `last` [1]
//! (the transfer's last segment), `status` [11] (`{SCT[2:0], SC[7:0]}`; non-zero ends the
//! transfer with that status, with `last` 1 and `len` = the bytes of the transfer that earlier
//! segments did not cover, so the mover can keep the data streams' framing). A transfer's
//! segments are contiguous and in byte order; transfers follow command order.
//!
//! Data streams: `m_data` (read direction) and `s_data` (write direction): `data` [W], `keep`
//! [W/8], `last` [1] (the transfer's last beat), `tag` [T]. Bytes are packed from lane 0; `keep` is
//! all ones except on a last beat. A zero-length transfer has no beat. Framing never breaks: an
//! errored read-direction transfer still carries exactly `len` bytes (zeros after the error),
//! and the mover always consumes exactly `len` bytes of a write-direction transfer.
//!
//! Windowed variant (`dma_engine_win_*`, see `window.rs`): `s_cmd` also carries `win_off` and
//! `win_len` [L]; the walker walks the pointer (`len` bytes) from the window on (`win_off` is
//! its `from`: a PRP walk replaces PRP1 and the whole list pages before the window by one
//! skip segment and reads the PRP list from the entry the window needs, see `walker.rs`; an
//! SGL is walked whole) and the window stage passes on only the segments' bytes `win_off ..
//! win_off + win_len`, so a transport can write one piece of a command's data (an NVMe/TCP
//! C2HData at DATAO, an RDMA WRITE packet) through the command's own PRP list or SGL without
//! reading the list from its start each time. The data streams carry `win_len` bytes. PRP
//! entries before the window are not checked (an error there is not reported for this piece).
//!
//! Completion stream `m_done`: `tag` [T], `status` [11], one per command, in command order, after
//! the transfer's data has moved (write direction: after its write responses).

pub mod engine;
pub mod mover;
pub mod params;
pub mod walker;
pub mod window;
pub use params::DmaParams;
