//! The NBD protocol's numbers, as the specification (NetworkBlockDevice/nbd, doc/proto.md)
//! defines them: every field is big-endian on the wire. Only what this server speaks or refuses
//! by name is here.

/// `NBDMAGIC`, the first 8 bytes the server sends.
pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
/// `IHAVEOPT`: the newstyle handshake's second magic, and the magic of every option request.
pub const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
/// The magic of every option reply (fixed newstyle).
pub const OPT_REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
/// The magic of every transmission request.
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
/// The magic of a simple reply (the only replies this server sends).
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;

/// Handshake flag: the server speaks fixed newstyle.
pub const FLAG_FIXED_NEWSTYLE: u16 = 1 << 0;
/// Handshake flag: the server omits the 124 zero bytes after `NBD_OPT_EXPORT_NAME` if asked.
pub const FLAG_NO_ZEROES: u16 = 1 << 1;
/// Client flag: the client speaks fixed newstyle.
pub const FLAG_C_FIXED_NEWSTYLE: u32 = 1 << 0;
/// Client flag: no 124 zero bytes after `NBD_OPT_EXPORT_NAME`.
pub const FLAG_C_NO_ZEROES: u32 = 1 << 1;

/// Transmission flag: always set.
pub const FLAG_HAS_FLAGS: u16 = 1 << 0;
/// Transmission flag: `NBD_CMD_FLUSH` is accepted.
pub const FLAG_SEND_FLUSH: u16 = 1 << 2;
/// Transmission flag: `NBD_CMD_FLAG_FUA` is accepted.
pub const FLAG_SEND_FUA: u16 = 1 << 3;
/// Transmission flag: `NBD_CMD_TRIM` is accepted.
pub const FLAG_SEND_TRIM: u16 = 1 << 5;
/// Transmission flag: `NBD_CMD_WRITE_ZEROES` (and `NBD_CMD_FLAG_NO_HOLE`) is accepted.
pub const FLAG_SEND_WRITE_ZEROES: u16 = 1 << 6;

/// Option: choose the export and enter transmission (no way to answer an error).
pub const OPT_EXPORT_NAME: u32 = 1;
/// Option: the client ends the session.
pub const OPT_ABORT: u32 = 2;
/// Option: list the exports.
pub const OPT_LIST: u32 = 3;
/// Option: TLS (not offered: answered `NBD_REP_ERR_UNSUP`).
pub const OPT_STARTTLS: u32 = 5;
/// Option: describe an export.
pub const OPT_INFO: u32 = 6;
/// Option: describe an export and enter transmission.
pub const OPT_GO: u32 = 7;
/// Option: structured replies (not offered: answered `NBD_REP_ERR_UNSUP`, simple replies only).
pub const OPT_STRUCTURED_REPLY: u32 = 8;

/// Option reply: done, success.
pub const REP_ACK: u32 = 1;
/// Option reply: one export of `NBD_OPT_LIST`.
pub const REP_SERVER: u32 = 2;
/// Option reply: one information item of `NBD_OPT_INFO`/`NBD_OPT_GO`.
pub const REP_INFO: u32 = 3;
/// Option error: the option is not supported.
pub const REP_ERR_UNSUP: u32 = 0x8000_0001;
/// Option error: the option's data is malformed.
pub const REP_ERR_INVALID: u32 = 0x8000_0003;
/// Option error: no export of that name.
pub const REP_ERR_UNKNOWN: u32 = 0x8000_0006;

/// Information item: size (u64) and transmission flags (u16); length 12.
pub const INFO_EXPORT: u16 = 0;
/// Information item: the export's canonical name.
pub const INFO_NAME: u16 = 1;
/// Information item: a description for people.
pub const INFO_DESCRIPTION: u16 = 2;
/// Information item: minimum, preferred and maximum block size (3 x u32); length 14.
pub const INFO_BLOCK_SIZE: u16 = 3;

/// Command: read.
pub const CMD_READ: u16 = 0;
/// Command: write (the request carries `length` bytes).
pub const CMD_WRITE: u16 = 1;
/// Command: disconnect (no reply).
pub const CMD_DISC: u16 = 2;
/// Command: flush.
pub const CMD_FLUSH: u16 = 3;
/// Command: trim (discard).
pub const CMD_TRIM: u16 = 4;
/// Command: write zeroes.
pub const CMD_WRITE_ZEROES: u16 = 6;

/// Command flag: force unit access (reply only once the data is durable).
pub const CMD_FLAG_FUA: u16 = 1 << 0;
/// Command flag of `NBD_CMD_WRITE_ZEROES`: do not punch a hole (always true here).
pub const CMD_FLAG_NO_HOLE: u16 = 1 << 1;

/// Error: operation not permitted.
pub const NBD_EPERM: u32 = 1;
/// Error: input/output error.
pub const NBD_EIO: u32 = 5;
/// Error: cannot allocate memory.
pub const NBD_ENOMEM: u32 = 12;
/// Error: invalid argument (out of range, unaligned, unknown command or flag).
pub const NBD_EINVAL: u32 = 22;
/// Error: no space left (a write past the end of the export).
pub const NBD_ENOSPC: u32 = 28;
/// Error: value too large.
pub const NBD_EOVERFLOW: u32 = 75;
/// Error: operation not supported.
pub const NBD_ENOTSUP: u32 = 95;
/// Error: the server is shutting down.
pub const NBD_ESHUTDOWN: u32 = 108;

/// Bytes of a transmission request header (magic, flags, type, handle, offset, length).
pub const REQUEST_BYTES: usize = 28;
/// Bytes of a simple reply header (magic, error, handle).
pub const REPLY_BYTES: usize = 16;
