//! The bring-up host tool's library: the UART bridge protocol over a serial port (or the
//! pseudo-terminal of a simulated board), and what the tool reads and writes through it.
//!
//! The bridge (hdl-gen/src/blocks/uart_bridge.rs) speaks big-endian frames: `'R' a3 a2 a1 a0`
//! answers `status d3 d2 d1 d0`; `'W' a3 a2 a1 a0 d3 d2 d1 d0` answers `status`; status is
//! `0xA0 | resp` (0xA0 OKAY, 0xA2 SLVERR, 0xA3 DECERR). A command whose bytes stall for about
//! 10-20 ms is dropped by the bridge, so after any failed exchange the tool waits 50 ms and
//! flushes the line before the next command: the bridge is back at a command boundary.
//!
//! Addresses come from the generator ([`Map`]): the bridge's windows
//! (hdl-gen/src/boards/bringup.rs) and the registers of `bringup_csr` and `chip_info_csr` by
//! name, so the tool cannot drift from the bitstream's generator.

pub mod chip;
pub mod cmd;
pub mod driver;
pub mod nvme;
pub mod ping;

use hdl_builder::regs::RegMap;
use hdl_gen::boards::{self, board_csr, bringup, Board};
use std::fmt;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::time::{Duration, Instant};

/// What went wrong, named for the person at the bench.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The serial port could not be opened or set up.
    Port(String),
    /// The bridge did not answer in time (no board, wrong port or baud, board in reset).
    Timeout {
        what: String,
        got: usize,
        want: usize,
    },
    /// The first answer byte was not a status byte.
    Garbled { what: String, byte: u8 },
    /// The bus answered an error response.
    Bus { what: String, resp: u8 },
    /// The board answered, but not what a bring-up core answers (or not what the step
    /// needed).
    Board(String),
    /// A step of `setup` failed: which, why, and what the chip is left with.
    Setup {
        step: String,
        cause: Box<Error>,
        left: String,
    },
    /// `write`, `read` or `io` before a (still valid) `setup`.
    NotSetUp(String),
    /// A command completed with an error status.
    Nvme { what: String, status: nvme::Status },
    /// Data read back differs from what was written.
    Data(String),
}

impl Error {
    /// The tool's exit code for this error (main.rs documents them).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Port(_) | Error::Timeout { .. } | Error::Garbled { .. } => 2,
            Error::Setup { cause, .. } => cause.exit_code(),
            Error::NotSetUp(_) => 4,
            _ => 1,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Port(m) => write!(f, "{m}"),
            Error::Timeout { what, got, want } => write!(
                f,
                "{what}: no answer from the board ({got} of {want} bytes within the timeout): check the port, the baud rate, the wiring and that the bitstream is loaded"
            ),
            Error::Garbled { what, byte } => write!(
                f,
                "{what}: garbled answer (status byte 0x{byte:02x}, expected 0xA0..0xA3): wrong baud rate or noise on the line"
            ),
            Error::Bus { what, resp } => write!(
                f,
                "{what}: the bus answered {} ({})",
                resp_name(*resp),
                match resp {
                    3 => "no block answers at that address",
                    2 => "the block has no register there",
                    _ => "unexpected",
                }
            ),
            Error::Board(m) => write!(f, "{m}"),
            Error::Setup { step, cause, left } => write!(
                f,
                "setup failed at step \"{step}\": {cause}\n  the chip is left: {left}\n  (`bringup setup` may be run again at any time)"
            ),
            Error::NotSetUp(m) => write!(f, "{m}"),
            Error::Nvme { what, status } => write!(f, "{what}: the controller answered {status}"),
            Error::Data(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for Error {}

/// The name of an AXI response code.
pub fn resp_name(resp: u8) -> &'static str {
    match resp & 3 {
        0 => "OKAY",
        1 => "EXOKAY",
        2 => "SLVERR",
        _ => "DECERR",
    }
}

/// A connection to the bridge over an open file descriptor (a tty or a pty).
pub struct Bridge {
    fd: OwnedFd,
    timeout: Duration,
    dirty: bool,
}

impl Bridge {
    /// Opens `port` (a serial port or a pseudo-terminal), raw 8N1 at `baud`.
    pub fn open(port: &Path, baud: u32, timeout: Duration) -> Result<Bridge, Error> {
        let c = std::ffi::CString::new(port.as_os_str().as_encoded_bytes())
            .map_err(|_| Error::Port(format!("{}: not a path", port.display())))?;
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(Error::Port(format!(
                "cannot open the serial port {}: {}",
                port.display(),
                std::io::Error::last_os_error()
            )));
        }
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        configure(fd.as_raw_fd(), baud)
            .map_err(|e| Error::Port(format!("{}: {e}", port.display())))?;
        Ok(Bridge::from_fd(fd, timeout))
    }

    /// A bridge over an already configured descriptor.
    pub fn from_fd(fd: OwnedFd, timeout: Duration) -> Bridge {
        Bridge {
            fd,
            timeout,
            dirty: false,
        }
    }

    fn recv(&mut self, what: &str, n: usize) -> Result<Vec<u8>, Error> {
        let mut data = Vec::with_capacity(n);
        let deadline = Instant::now() + self.timeout;
        while data.len() < n {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                self.dirty = true;
                return Err(Error::Timeout {
                    what: what.to_string(),
                    got: data.len(),
                    want: n,
                });
            }
            let mut p = libc::pollfd {
                fd: self.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = left.as_millis().clamp(1, 100) as libc::c_int;
            if unsafe { libc::poll(&mut p, 1, ms) } <= 0 {
                continue;
            }
            let mut buf = [0u8; 16];
            let want = (n - data.len()).min(buf.len());
            let got = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), want) };
            if got > 0 {
                data.extend_from_slice(&buf[..got as usize]);
            } else {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        Ok(data)
    }

    fn send(&mut self, frame: &[u8]) -> Result<(), Error> {
        let mut off = 0;
        while off < frame.len() {
            let n = unsafe {
                libc::write(
                    self.fd.as_raw_fd(),
                    frame[off..].as_ptr().cast(),
                    frame.len() - off,
                )
            };
            if n < 0 {
                return Err(Error::Port(format!(
                    "write to the serial port: {}",
                    std::io::Error::last_os_error()
                )));
            }
            off += n as usize;
        }
        Ok(())
    }

    fn command(&mut self, what: &str, frame: &[u8], answer: usize) -> Result<(u8, Vec<u8>), Error> {
        if self.dirty {
            // Let the bridge drop a half-received command, then drop what it sent.
            std::thread::sleep(Duration::from_millis(50));
            unsafe { libc::tcflush(self.fd.as_raw_fd(), libc::TCIOFLUSH) };
            self.dirty = false;
        }
        self.send(frame)?;
        let a = self.recv(what, answer)?;
        if a[0] & 0xF0 != 0xA0 || a[0] & 0x0C != 0 {
            self.dirty = true;
            return Err(Error::Garbled {
                what: what.to_string(),
                byte: a[0],
            });
        }
        Ok((a[0] & 3, a[1..].to_vec()))
    }

    /// Reads the 32-bit word at bridge address `addr`.
    pub fn read(&mut self, addr: u32) -> Result<u32, Error> {
        let what = format!("read 0x{addr:08x}");
        let mut f = vec![b'R'];
        f.extend_from_slice(&addr.to_be_bytes());
        let (resp, d) = self.command(&what, &f, 5)?;
        if resp != 0 {
            return Err(Error::Bus { what, resp });
        }
        Ok(u32::from_be_bytes([d[0], d[1], d[2], d[3]]))
    }

    /// Writes the 32-bit word `value` at bridge address `addr`.
    pub fn write(&mut self, addr: u32, value: u32) -> Result<(), Error> {
        let what = format!("write 0x{addr:08x}");
        let mut f = vec![b'W'];
        f.extend_from_slice(&addr.to_be_bytes());
        f.extend_from_slice(&value.to_be_bytes());
        let (resp, _) = self.command(&what, &f, 1)?;
        if resp != 0 {
            return Err(Error::Bus { what, resp });
        }
        Ok(())
    }
}

/// Raw 8N1 at `baud`, no flow control, no echo.
fn configure(fd: i32, baud: u32) -> Result<(), String> {
    let speed = match baud {
        9600 => libc::B9600,
        19200 => libc::B19200,
        38400 => libc::B38400,
        57600 => libc::B57600,
        115200 => libc::B115200,
        230400 => libc::B230400,
        460800 => libc::B460800,
        921600 => libc::B921600,
        1000000 => libc::B1000000,
        3000000 => libc::B3000000,
        _ => return Err(format!("baud rate {baud} is not a standard termios rate")),
    };
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    if unsafe { libc::tcgetattr(fd, &mut t) } != 0 {
        return Err(format!(
            "not a serial port or terminal ({})",
            std::io::Error::last_os_error()
        ));
    }
    unsafe { libc::cfmakeraw(&mut t) };
    t.c_cflag |= libc::CLOCAL | libc::CREAD;
    t.c_cflag &= !(libc::CSTOPB | libc::PARENB | libc::CRTSCTS);
    t.c_cc[libc::VMIN] = 0;
    t.c_cc[libc::VTIME] = 0;
    unsafe {
        libc::cfsetispeed(&mut t, speed);
        libc::cfsetospeed(&mut t, speed);
    }
    if unsafe { libc::tcsetattr(fd, libc::TCSANOW, &t) } != 0 {
        return Err(format!(
            "cannot set 8N1 at {baud} baud: {}",
            std::io::Error::last_os_error()
        ));
    }
    unsafe { libc::tcflush(fd, libc::TCIOFLUSH) };
    Ok(())
}

/// Where things are, seen from the bridge, for one board: from the generator.
pub struct Map {
    /// The board.
    pub board: Board,
    /// `bringup_csr`'s register map.
    pub board_csr: RegMap,
    /// `chip_info_csr`'s register map.
    pub chip_info: RegMap,
    /// Bridge address of `chip_info_csr` (slot 1 of the firmware window).
    pub chip_info_base: u32,
    /// The configuration hash the board's bitstream carries in `chip_info`.
    pub config_hash: u64,
}

impl Map {
    /// The map of `board`.
    pub fn new(board: Board) -> Result<Map, Error> {
        let cfg = boards::config(&board).map_err(|e| Error::Board(e.to_string()))?;
        let board_csr = board_csr::register_map(&board_csr::BoardCsrParams {
            board: boards::code(&board),
            mem_bits: board.mem_bits,
            mdio_div: 0,
        })
        .map_err(|e| Error::Board(e.to_string()))?;
        let chip_info = hdl_gen::blocks::chip_info::register_map(cfg.csr.addr_width)
            .map_err(|e| Error::Board(e.to_string()))?;
        Ok(Map {
            chip_info_base: bringup::FIRMWARE_BASE + (1 << cfg.csr.addr_width),
            config_hash: cfg.hash(),
            board,
            board_csr,
            chip_info,
        })
    }

    /// Bridge address of `bringup_csr` register `name`.
    pub fn board_reg(&self, name: &str) -> u32 {
        bringup::BOARD_CSR_BASE + offset(&self.board_csr, name)
    }

    /// Bridge address of `chip_info_csr` register `name`.
    pub fn info_reg(&self, name: &str) -> u32 {
        self.chip_info_base + offset(&self.chip_info, name)
    }

    /// Bytes of host memory.
    pub fn mem_bytes(&self) -> u32 {
        1 << self.board.mem_bits
    }
}

fn offset(map: &RegMap, name: &str) -> u32 {
    map.registers()
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("{} has no register `{name}`", map.name()))
        .offset
}

/// The board a bridge answers for: `bringup_csr.id` must read "BRUP", `info.board` names it.
pub fn identify(br: &mut Bridge) -> Result<Map, Error> {
    let id = br.read(bringup::BOARD_CSR_BASE)?;
    if id != board_csr::BRINGUP_ID {
        return Err(Error::Board(format!(
            "address 0 reads 0x{id:08x}, not a bring-up core's ID 0x{:08x} (\"BRUP\"): an older bitstream or another design",
            board_csr::BRINGUP_ID
        )));
    }
    let info = br.read(bringup::BOARD_CSR_BASE + 4)?;
    let code = (info & 0xFF) as usize;
    let board = boards::all()
        .into_iter()
        .nth(code)
        .ok_or_else(|| Error::Board(format!("board code {code} names no board this tool knows")))?;
    let map = Map::new(board)?;
    let mem_bits = info >> 8 & 0xFF;
    if mem_bits != map.board.mem_bits {
        return Err(Error::Board(format!(
            "the {} answers with 2^{mem_bits} bytes of host memory, this tool's generator builds 2^{}: rebuild the bitstream or the tool",
            map.board.title, map.board.mem_bits
        )));
    }
    Ok(map)
}

/// One line per fact: the board, the chip's identity and whether its configuration hash is the
/// board's bring-up configuration's, the NVMe version, interrupts and the MAC's counters.
pub fn info(br: &mut Bridge, map: &Map) -> Result<Vec<String>, Error> {
    let mut out = vec![format!(
        "board        {} ({}), {} KiB host memory",
        map.board.title,
        map.board.part,
        map.mem_bytes() / 1024
    )];
    let khz = br.read(map.board_reg("info_clock"))?;
    out.push(format!(
        "core clock   {} kHz{}",
        khz,
        if u64::from(khz) * 1000 == map.board.core_hz {
            String::new()
        } else {
            format!(
                " (the {} runs at {} kHz: a simulated board's clock is lowered)",
                map.board.title,
                map.board.core_hz / 1000
            )
        }
    ));
    let id = br.read(map.info_reg("id"))?;
    let v = br.read(map.info_reg("version"))?;
    let lo = br.read(map.info_reg("config_hash_lo"))?;
    let hi = br.read(map.info_reg("config_hash_hi"))?;
    let hash = u64::from(hi) << 32 | u64::from(lo);
    out.push(format!(
        "chip         id 0x{id:08x}{}, generator {}.{}.{}",
        if id == hdl_gen::blocks::chip_info::CHIP_ID {
            " (NVMF)"
        } else {
            " UNEXPECTED"
        },
        v >> 16 & 0xFF,
        v >> 8 & 0xFF,
        v & 0xFF
    ));
    out.push(format!(
        "config hash  {hash:016x} ({})",
        if hash == map.config_hash {
            format!("configs/bringup_{}.toml", map.board.name)
        } else {
            format!(
                "NOT configs/bringup_{}.toml, which hashes to {:016x}",
                map.board.name, map.config_hash
            )
        }
    ));
    let cap = br.read(map.info_reg("nvme_cap"))?;
    out.push(format!(
        "nvme         {} I/O queue pairs, {} entries at most",
        cap & 0xFFFF,
        (cap >> 16) + 1
    ));
    let vs = br.read(bringup::BAR0_BASE + 8)?;
    out.push(format!(
        "BAR0 VS      {}.{}.{}",
        vs >> 16,
        vs >> 8 & 0xFF,
        vs & 0xFF
    ));
    let irq = br.read(map.board_reg("irq_count"))?;
    out.push(format!("interrupts   {irq}"));
    let st = br.read(map.board_reg("admin_status"))?;
    out.push(format!(
        "admin        {}{}",
        if st & 1 != 0 {
            "a command waits for firmware"
        } else {
            "idle"
        },
        if st & 2 != 0 {
            ", a completion not taken yet"
        } else {
            ""
        }
    ));
    for c in board_csr::MAC_COUNTERS {
        let n = br.read(map.board_reg(&format!("mac_{c}")))?;
        out.push(format!("mac {c:<16} {n}"));
    }
    Ok(out)
}

/// The admin command the chip offers firmware, if any: its SQ id and its 16 dwords.
pub fn admin_pending(br: &mut Bridge, map: &Map) -> Result<Option<(u16, [u32; 16])>, Error> {
    if br.read(map.board_reg("admin_status"))? & 1 == 0 {
        return Ok(None);
    }
    let sqid = br.read(map.board_reg("admin_cmd_sqid"))? as u16;
    let mut sqe = [0u32; 16];
    for (i, d) in sqe.iter_mut().enumerate() {
        *d = br.read(map.board_reg(&format!("admin_sqe{i}")))?;
    }
    Ok(Some((sqid, sqe)))
}

/// One line describing an SQE: opcode (named for the admin commands), CID, NSID, CDW10-11.
pub fn describe_sqe(sqid: u16, sqe: &[u32; 16]) -> String {
    let opc = sqe[0] & 0xFF;
    let name = if sqid == 0 {
        match opc {
            0x00 => "Delete I/O SQ",
            0x01 => "Create I/O SQ",
            0x02 => "Get Log Page",
            0x04 => "Delete I/O CQ",
            0x05 => "Create I/O CQ",
            0x06 => "Identify",
            0x08 => "Abort",
            0x09 => "Set Features",
            0x0A => "Get Features",
            0x0C => "Asynchronous Event Request",
            _ => "admin opcode",
        }
    } else {
        "fallback I/O opcode"
    };
    format!(
        "sq {sqid}: {name} (0x{opc:02x}), cid 0x{:04x}, nsid {}, cdw10 0x{:08x}, cdw11 0x{:08x}",
        sqe[0] >> 16,
        sqe[1],
        sqe[10],
        sqe[11]
    )
}

/// One MDIO frame: a read of `reg` of PHY `phy` (its 16 bits) or a write of `data`.
pub fn mdio(
    br: &mut Bridge,
    map: &Map,
    phy: u8,
    reg: u8,
    write: Option<u16>,
) -> Result<u16, Error> {
    if phy > 31 || reg > 31 {
        return Err(Error::Board(format!(
            "MDIO PHY address {phy} or register {reg} out of range (0 to 31)"
        )));
    }
    let status = map.board_reg("mdio_status");
    wait_mdio(br, status)?;
    let cmd = u32::from(write.unwrap_or(0))
        | u32::from(reg) << 16
        | u32::from(phy) << 21
        | u32::from(write.is_some()) << 26;
    br.write(map.board_reg("mdio_cmd"), cmd)?;
    let s = wait_mdio(br, status)?;
    Ok((s >> 16) as u16)
}

fn wait_mdio(br: &mut Bridge, status: u32) -> Result<u32, Error> {
    for _ in 0..100 {
        let s = br.read(status)?;
        if s & 1 == 0 {
            return Ok(s);
        }
    }
    Err(Error::Board(
        "the MDIO master stays busy: is mdio_div set?".into(),
    ))
}

/// Writes an address-dependent pattern into the first `words` words of host memory and reads
/// it back; the mismatches, as (address, read, written).
pub fn memtest(br: &mut Bridge, words: u32) -> Result<Vec<(u32, u32, u32)>, Error> {
    let pat = |i: u32| 0x9E37_79B9u32.wrapping_mul(i + 1);
    for i in 0..words {
        br.write(bringup::HOST_MEM_BASE + 4 * i, pat(i))?;
    }
    let mut bad = Vec::new();
    for i in 0..words {
        let a = bringup::HOST_MEM_BASE + 4 * i;
        let got = br.read(a)?;
        if got != pat(i) {
            bad.push((a, got, pat(i)));
        }
    }
    Ok(bad)
}
