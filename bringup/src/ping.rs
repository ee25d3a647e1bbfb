//! `bringup ping`: ICMP echo from this machine's own stack to the chip's IPv4 address, and the
//! chip's counters that prove the chip answered (its TCP/IP engine's `echo_out` and `arp_out`,
//! the MAC's frame counters), read over the bridge before and after.
//!
//! The echo requests go through an unprivileged ICMP datagram socket (Linux "ping socket",
//! allowed by `net.ipv4.ping_group_range`), or a raw socket as root when that is not allowed
//! (a fresh network namespace allows none).

use crate::Error;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// One echo's outcome.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reply {
    pub seq: u16,
    /// Round trip, `None` if no reply came in time.
    pub rtt: Option<Duration>,
}

/// The Internet checksum of `b` (RFC 1071).
pub fn checksum(b: &[u8]) -> u16 {
    let mut s = 0u32;
    for c in b.chunks(2) {
        s += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    while s >> 16 != 0 {
        s = (s & 0xFFFF) + (s >> 16);
    }
    !(s as u16)
}

/// An ICMP echo request: type 8, `id`, `seq`, `payload`, checksummed.
pub fn echo_request(id: u16, seq: u16, payload: &[u8]) -> Vec<u8> {
    let mut p = vec![8, 0, 0, 0];
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&seq.to_be_bytes());
    p.extend_from_slice(payload);
    let c = checksum(&p);
    p[2..4].copy_from_slice(&c.to_be_bytes());
    p
}

/// The echo reply in `icmp` (no IP header), if it is one: (id, seq, payload).
pub fn parse_reply(icmp: &[u8]) -> Option<(u16, u16, &[u8])> {
    if icmp.len() < 8 || icmp[0] != 0 || icmp[1] != 0 || checksum(icmp) != 0 {
        return None;
    }
    Some((
        u16::from_be_bytes([icmp[4], icmp[5]]),
        u16::from_be_bytes([icmp[6], icmp[7]]),
        &icmp[8..],
    ))
}

/// An ICMP socket: datagram (the kernel keeps the id and strips the IP header) or raw.
pub struct Pinger {
    fd: OwnedFd,
    raw: bool,
    id: u16,
}

impl Pinger {
    /// A ping socket, else a raw one; the error says what to change when neither is allowed.
    pub fn open() -> Result<Pinger, Error> {
        let dgram = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, libc::IPPROTO_ICMP) };
        if dgram >= 0 {
            return Ok(Pinger {
                fd: unsafe { OwnedFd::from_raw_fd(dgram) },
                raw: false,
                id: 0,
            });
        }
        let e1 = std::io::Error::last_os_error();
        let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_ICMP) };
        if raw >= 0 {
            return Ok(Pinger {
                fd: unsafe { OwnedFd::from_raw_fd(raw) },
                raw: true,
                id: (std::process::id() & 0xFFFF) as u16,
            });
        }
        let e2 = std::io::Error::last_os_error();
        Err(Error::Port(format!(
            "no ICMP socket: a ping socket was refused ({e1}; allow this group in net.ipv4.ping_group_range) and a raw one too ({e2}; run as root)"
        )))
    }

    /// Whether this is a raw socket.
    pub fn is_raw(&self) -> bool {
        self.raw
    }

    /// Sends echo `seq` to `to` and waits up to `wait` for its reply.
    pub fn ping(
        &mut self,
        to: Ipv4Addr,
        seq: u16,
        payload: &[u8],
        wait: Duration,
    ) -> Result<Reply, Error> {
        let pkt = echo_request(self.id, seq, payload);
        let sa = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: 0,
            sin_addr: libc::in_addr {
                s_addr: u32::from_ne_bytes(to.octets()),
            },
            sin_zero: [0; 8],
        };
        let t0 = Instant::now();
        let n = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                pkt.as_ptr().cast(),
                pkt.len(),
                0,
                (&sa as *const libc::sockaddr_in).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        };
        if n < 0 {
            return Err(Error::Port(format!(
                "sending an ICMP echo request to {to}: {} (no route to it from this network namespace?)",
                std::io::Error::last_os_error()
            )));
        }
        let mut buf = [0u8; 2048];
        loop {
            let left = wait.saturating_sub(t0.elapsed());
            if left.is_zero() {
                return Ok(Reply { seq, rtt: None });
            }
            let mut p = libc::pollfd {
                fd: self.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = left.as_millis().clamp(1, 1000) as libc::c_int;
            if unsafe { libc::poll(&mut p, 1, ms) } <= 0 {
                continue;
            }
            let mut from: libc::sockaddr_in = unsafe { std::mem::zeroed() };
            let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            let got = unsafe {
                libc::recvfrom(
                    self.fd.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    0,
                    (&mut from as *mut libc::sockaddr_in).cast(),
                    &mut len,
                )
            };
            if got <= 0 {
                continue;
            }
            let got = got as usize;
            if Ipv4Addr::from(from.sin_addr.s_addr.to_ne_bytes()) != to {
                continue;
            }
            let icmp = if self.raw {
                let ihl = usize::from(buf[0] & 0xF) * 4;
                if got < ihl {
                    continue;
                }
                &buf[ihl..got]
            } else {
                &buf[..got]
            };
            if let Some((id, s, data)) = parse_reply(icmp) {
                // A ping socket's id is the kernel's: it delivers only its own replies.
                if (!self.raw || id == self.id) && s == seq && data == payload {
                    return Ok(Reply {
                        seq,
                        rtt: Some(t0.elapsed()),
                    });
                }
            }
        }
    }
}

/// The `p`-th percentile (0 to 100) of sorted `v`, nearest rank.
pub fn percentile(v: &[Duration], p: f64) -> Duration {
    if v.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}
