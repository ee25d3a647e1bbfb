//! An NBD server (`testbench nbd`): exports a [`Device`] (the simulated chip, or the
//! [`MemDevice`] that tests the server) to unmodified NBD clients: nbdinfo, nbdcopy, fio's
//! `nbd` engine (libnbd), the kernel's nbd-client.
//!
//! What lives here:
//!
//! - `mod.rs`: the `Device` trait and the protocol subset (this text)
//! - `proto.rs`, `server.rs`: the protocol's numbers; the server
//! - `chip.rs`: the simulated chip as a device
//! - `mem.rs`: a byte array that answers late and out of order, for the server's tests
//! - `tests.rs`: the server against a hand-written client
//!
//! What the server speaks (the NBD protocol, NetworkBlockDevice/nbd doc/proto.md):
//!
//! - Fixed newstyle handshake only. Options: `NBD_OPT_EXPORT_NAME`, `NBD_OPT_GO` and
//!   `NBD_OPT_INFO` (answering `NBD_INFO_EXPORT` and `NBD_INFO_BLOCK_SIZE` always,
//!   `NBD_INFO_NAME` and `NBD_INFO_DESCRIPTION` when asked), `NBD_OPT_LIST`, `NBD_OPT_ABORT`.
//!   Everything else, `NBD_OPT_STRUCTURED_REPLY` and `NBD_OPT_STARTTLS` included, is answered
//!   `NBD_REP_ERR_UNSUP`: simple replies only, no TLS. One export, reachable as `""` (the
//!   default export) and by its name ([`Options::name`]). A client that does not ask for
//!   `NBD_INFO_BLOCK_SIZE` is still let in (the checks below keep its unaligned requests from
//!   the device).
//! - Transmission: `READ`, `WRITE`, `FLUSH`, `TRIM`, `WRITE_ZEROES`, `DISC`. Replies go out as
//!   requests finish, so out of order (the client matches them by handle).
//! - Checked by the server, never reaching the device (counted as `rejected`): a request past
//!   the end of the export (`NBD_ENOSPC` for WRITE and WRITE_ZEROES, as the specification asks,
//!   `NBD_EINVAL` otherwise), an offset or length not a multiple of the minimum block size, a
//!   READ or WRITE longer than the maximum block size, a FLUSH with a nonzero offset or length,
//!   a command the device does not carry, an unknown command or command flag (`NBD_EINVAL`).
//!   A WRITE's payload is read even when the request is refused, so the stream stays in step; a
//!   WRITE of more than [`MAX_WRITE_BYTES`] ends the connection. Zero-length requests are
//!   answered success by the server.
//! - TRIM and WRITE_ZEROES longer than the maximum block size are split: the device never sees
//!   a request longer than its maximum, and the client gets one reply (the first error of the
//!   parts).
//! - FUA: advertised only when the device carries FLUSH. A WRITE, TRIM or WRITE_ZEROES with
//!   `NBD_CMD_FLAG_FUA` goes to the device with [`Request::fua`] set, and once it has finished
//!   without error the server sends the device a [`Op::Flush`] and replies only when that
//!   flush has finished. The flush is what makes FUA hold for any device; `fua` is a hint a
//!   device may also use (the chip: the NVMe FUA bit) or ignore. FUA on a READ or FLUSH is
//!   accepted and has no further effect.
//! - A FLUSH is sent to the device as it comes; it must make durable every write the device
//!   finished before the flush was submitted (NVMe Flush semantics). The server replies to a
//!   write only after the device finished it, so that covers every write the client saw
//!   answered.
//!
//! Architecture invariants: one thread, one connection at a time (`NBD_FLAG_CAN_MULTI_CONN`
//! is not advertised, so clients do not open a second one). The socket is read without
//! blocking while the device has work, and only while the device can take another request
//! ([`Device::can_accept`]: back-pressure reaches the client through TCP); the device is
//! advanced only while it has outstanding requests; with nothing outstanding the server blocks
//! on the socket, so an idle server costs no CPU. When a connection ends, for whatever reason,
//! every request still in the device is finished (and its reply dropped) before the next
//! connection is accepted: a connection never sees another's completions.

pub mod chip;
pub mod mem;
pub mod proto;
mod server;
#[cfg(test)]
mod tests;

pub use mem::MemDevice;
pub use proto::{NBD_EINVAL, NBD_EIO, NBD_ENOSPC, NBD_EPERM};
pub use server::{serve, serve_stream, End, Listener, Options, Session, Socket, Stats};

/// Largest WRITE payload the server reads. A longer WRITE (whatever the device's maximum) ends
/// the connection: the specification lets a server disconnect on a payload large enough to be
/// a denial of service, and asks that nothing under 32 MiB be treated as one.
pub const MAX_WRITE_BYTES: u32 = 32 << 20;

/// One NBD request as the device sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// Read `len` bytes at `offset`.
    Read,
    /// Write these `len` bytes at `offset`.
    Write(Vec<u8>),
    /// Make every write finished before this was submitted durable (`offset`, `len` zero).
    Flush,
    /// Discard `len` bytes at `offset` (the client assumes nothing about them afterwards).
    Trim,
    /// Make `len` bytes at `offset` read as zeroes.
    WriteZeroes,
}

/// One request for the device. `handle` is the server's tag (not the client's handle), unique
/// among the requests outstanding in the device; the device echoes it in its [`Reply`]. The
/// server guarantees `offset` and `len` are multiples of the minimum block size, `len` is at
/// most the maximum block size and nonzero, `offset + len` is within the export, and `Flush`
/// has `offset` and `len` zero; `Write` carries exactly `len` bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub handle: u64,
    pub op: Op,
    pub offset: u64,
    pub len: u32,
    pub fua: bool,
}

/// A finished request: `error` is an NBD error value (0 ok, NBD_EIO 5, NBD_EINVAL 22, NBD_ENOSPC 28, ...); `data` the read bytes (only for a successful Read, `len` bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub handle: u64,
    pub error: u32,
    pub data: Vec<u8>,
}

/// A block device the server exports; it may complete requests out of order and later.
///
/// The server calls [`Device::submit`] only when [`Device::can_accept`] said yes, and
/// [`Device::advance`] only while some submitted request has not been answered. A reply to a
/// handle that is not outstanding, or a successful Read whose `data` is not `len` bytes, is a
/// device bug: the server stops with an error naming it. `Err` from `submit` is fatal too.
pub trait Device {
    /// Export size in bytes.
    fn size(&self) -> u64;
    /// Preferred/minimum block size (NBD_INFO_BLOCK_SIZE: minimum, preferred, maximum payload).
    fn block_sizes(&self) -> (u32, u32, u32);
    /// Which optional commands it carries (flush, trim, write zeroes) -> transmission flags.
    fn supports(&self) -> (bool, bool, bool);
    /// Whether it can take another request now (back-pressure: the server stops reading the socket when false).
    fn can_accept(&self) -> bool;
    fn submit(&mut self, r: Request) -> Result<(), String>;
    /// Advances the device (for the chip: runs the simulation some cycles) and returns what finished; Err is fatal (the server ends, exit code 1, message printed).
    fn advance(&mut self) -> Result<Vec<Reply>, String>;
    /// A line of progress/statistics the server prints at the end of each connection (e.g. commands, cycles).
    fn summary(&self) -> String;
}

/// Checks a device's geometry against the specification's rules for `NBD_INFO_BLOCK_SIZE`:
/// minimum a power of two up to 64 KiB, preferred a power of two at least the minimum and 512,
/// maximum a multiple of the minimum and at least the smaller of preferred and the export size,
/// the export size a nonzero multiple of the minimum.
pub fn check_geometry(size: u64, (min, pref, max): (u32, u32, u32)) -> Result<(), String> {
    let fix = "(the device's block_sizes() and size())";
    if !min.is_power_of_two() || min > 65536 {
        return Err(format!(
            "minimum block size {min} must be a power of two of at most 65536 {fix}"
        ));
    }
    if !pref.is_power_of_two() || pref < min.max(512) {
        return Err(format!(
            "preferred block size {pref} must be a power of two of at least {} {fix}",
            min.max(512)
        ));
    }
    if !max.is_multiple_of(min) || u64::from(max) < u64::from(pref).min(size) {
        return Err(format!(
            "maximum block size {max} must be a multiple of the minimum {min} and at least {} {fix}",
            u64::from(pref).min(size)
        ));
    }
    if size == 0 || !size.is_multiple_of(u64::from(min)) {
        return Err(format!(
            "export size {size} must be a nonzero multiple of the minimum block size {min} {fix}"
        ));
    }
    Ok(())
}
