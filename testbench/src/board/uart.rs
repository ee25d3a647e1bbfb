//! The board's UART on a pseudo-terminal: what the host tool writes to the slave side becomes
//! start, data and stop bits on the core's `uart_rx_i` at the core's bit time; what the core
//! sends on `uart_tx_o` is sampled at the middle of each bit and written back as bytes. 8N1,
//! least significant bit first, as the bridge speaks it.

use std::collections::VecDeque;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// The master side of a pseudo-terminal in raw mode (no echo, no line discipline), and the
/// slave's path for the host tool.
pub struct Pty {
    master: OwnedFd,
    /// Kept open so that the master never reads end-of-file between two runs of the host tool.
    _slave: OwnedFd,
    /// The slave's path (`/dev/pts/N`).
    pub path: String,
}

fn os_err(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

impl Pty {
    /// Opens a pseudo-terminal, raw, both sides non-blocking on the master.
    pub fn open() -> Result<Pty, String> {
        let (mut m, mut s) = (-1, -1);
        let mut name = [0 as libc::c_char; 128];
        // SAFETY: openpty fills two descriptors and the NUL-terminated name.
        let r = unsafe {
            libc::openpty(
                &mut m,
                &mut s,
                name.as_mut_ptr(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        if r != 0 {
            return Err(os_err("openpty"));
        }
        // SAFETY: both descriptors are ours from here on.
        let (master, slave) = unsafe { (OwnedFd::from_raw_fd(m), OwnedFd::from_raw_fd(s)) };
        // SAFETY: `name` is NUL-terminated by openpty.
        let path = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: `t` is a valid termios for the slave's settings.
        unsafe {
            if libc::tcgetattr(slave.as_raw_fd(), &mut t) != 0 {
                return Err(os_err("tcgetattr on the pty"));
            }
            libc::cfmakeraw(&mut t);
            libc::cfsetispeed(&mut t, libc::B115200);
            libc::cfsetospeed(&mut t, libc::B115200);
            if libc::tcsetattr(slave.as_raw_fd(), libc::TCSANOW, &t) != 0 {
                return Err(os_err("tcsetattr (raw) on the pty"));
            }
            let fd = master.as_raw_fd();
            let fl = libc::fcntl(fd, libc::F_GETFL);
            if fl < 0 || libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK) < 0 {
                return Err(os_err("O_NONBLOCK on the pty"));
            }
        }
        Ok(Pty {
            master,
            _slave: slave,
            path,
        })
    }

    /// Bytes the host wrote, appended to `to`, if any.
    pub fn read_into(&self, to: &mut VecDeque<u8>) {
        let mut buf = [0u8; 256];
        loop {
            // SAFETY: reads into a buffer of the length given.
            let n =
                unsafe { libc::read(self.master.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                return;
            }
            to.extend(&buf[..n as usize]);
        }
    }

    /// Writes `bytes` for the host (dropped when the pty's buffer is full: a host that reads
    /// nothing for kilobytes has gone away).
    pub fn write(&self, bytes: &[u8]) {
        let mut off = 0;
        while off < bytes.len() {
            // SAFETY: writes from a live slice of the length given.
            let n = unsafe {
                libc::write(
                    self.master.as_raw_fd(),
                    bytes[off..].as_ptr().cast(),
                    bytes.len() - off,
                )
            };
            if n <= 0 {
                return;
            }
            off += n as usize;
        }
    }
}

/// What the receiver of the core's transmit pin is doing.
#[derive(Clone, Copy, Debug)]
enum Rx {
    /// The line is idle (high).
    Idle,
    /// A start bit began; `wait` cycles to the next sample, bit `bit` (0 start, 1-8 data, 9
    /// stop) is sampled then.
    Bits { bit: u32, wait: u32, byte: u8 },
}

/// A UART at the pins, one call per core cycle: [`Uart::drive`] the level of the core's
/// receive pin for the next cycle, [`Uart::sample`] its transmit pin.
pub struct Uart {
    cycles_per_bit: u32,
    /// Bytes to send to the core, in order.
    pub to_core: VecDeque<u8>,
    /// The frame being sent: its 10 bits (start, data, stop) and where it is.
    sending: Option<(u16, u32, u32)>,
    rx: Rx,
    /// Bytes received from the core, not yet written to the host.
    pub from_core: Vec<u8>,
    /// Bytes sent to and received from the core.
    pub sent: u64,
    pub received: u64,
    /// Frames from the core whose stop bit was low.
    pub framing_errors: u64,
}

impl Uart {
    /// A UART of `cycles_per_bit` core cycles per bit (at least 2).
    pub fn new(cycles_per_bit: u32) -> Uart {
        assert!(cycles_per_bit >= 2, "a UART bit takes at least 2 cycles");
        Uart {
            cycles_per_bit,
            to_core: VecDeque::new(),
            sending: None,
            rx: Rx::Idle,
            from_core: Vec::new(),
            sent: 0,
            received: 0,
            framing_errors: 0,
        }
    }

    /// The level of the core's receive pin for the next cycle (idle high; a byte is a low start
    /// bit, 8 data bits least significant first, a high stop bit, each `cycles_per_bit` long).
    pub fn drive(&mut self) -> bool {
        if self.sending.is_none() {
            if let Some(b) = self.to_core.pop_front() {
                self.sending = Some((u16::from(b) << 1 | 1 << 9, 0, 0));
                self.sent += 1;
            }
        }
        let Some((frame, bit, cycle)) = self.sending.as_mut() else {
            return true;
        };
        let level = *frame >> *bit & 1 == 1;
        *cycle += 1;
        if *cycle == self.cycles_per_bit {
            *cycle = 0;
            *bit += 1;
            if *bit == 10 {
                self.sending = None;
            }
        }
        level
    }

    /// The core's transmit pin as it is this cycle.
    pub fn sample(&mut self, tx: bool) {
        self.rx = match self.rx {
            Rx::Idle if !tx => Rx::Bits {
                bit: 0,
                wait: self.cycles_per_bit / 2 - 1,
                byte: 0,
            },
            Rx::Idle => Rx::Idle,
            Rx::Bits { bit, wait, byte } if wait > 0 => Rx::Bits {
                bit,
                wait: wait - 1,
                byte,
            },
            Rx::Bits { bit: 0, byte, .. } => {
                if tx {
                    // A glitch, not a start bit.
                    Rx::Idle
                } else {
                    Rx::Bits {
                        bit: 1,
                        wait: self.cycles_per_bit - 1,
                        byte,
                    }
                }
            }
            Rx::Bits { bit: 9, byte, .. } => {
                if tx {
                    self.from_core.push(byte);
                    self.received += 1;
                } else {
                    self.framing_errors += 1;
                }
                Rx::Idle
            }
            Rx::Bits { bit, byte, .. } => Rx::Bits {
                bit: bit + 1,
                wait: self.cycles_per_bit - 1,
                byte: byte | u8::from(tx) << (bit - 1),
            },
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes driven by one UART are received by another sampling the same line.
    #[test]
    fn a_uart_receives_what_a_uart_sends() {
        for bit in [2, 3, 8, 16] {
            let mut a = Uart::new(bit);
            let mut b = Uart::new(bit);
            let data: Vec<u8> = (0..=255u8).chain([0, 0xff, 0x55]).collect();
            a.to_core.extend(&data);
            for _ in 0..(data.len() as u32 + 2) * 10 * bit {
                let level = a.drive();
                b.sample(level);
            }
            assert_eq!(b.from_core, data, "{bit} cycles per bit");
            assert_eq!(b.framing_errors, 0);
        }
    }
}
