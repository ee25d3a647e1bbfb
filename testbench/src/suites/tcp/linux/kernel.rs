//! The kernel's side of a case: the listener's connections served on their own threads (a
//! seeded byte stream each way) and the pings of the engine.

use super::kstats::{show_tcp_info, tcp_info};
use super::netns::os_err;
use super::*;

/// A kernel connection's end: it sent `send` and received exactly `expect`.
#[derive(Clone, Debug, Default)]
pub(super) struct ConnEnd {
    pub(super) rtt_us: u32,
}

/// The kernel's side of one connection: sends `send`, checks what arrives against `expect`,
/// then closes (first, or after the engine's FIN). Non-blocking, bounded by `deadline`.
pub(super) fn serve(
    mut s: TcpStream,
    send: &[u8],
    expect: &[u8],
    kernel_first: bool,
    deadline: Instant,
    stop: &AtomicBool,
) -> Result<ConnEnd, String> {
    s.set_nonblocking(true).map_err(|e| e.to_string())?;
    let fd = s.as_raw_fd();
    let (mut off, mut got, mut eof, mut shut) = (0usize, 0usize, false, false);
    let mut buf = vec![0u8; 65536];
    loop {
        if stop.load(Ordering::SeqCst) {
            return Err("stopped".into());
        }
        if Instant::now() > deadline {
            return Err(format!(
                "the kernel sent {off} of {} bytes, received {got} of {}, EOF {eof}, closed \
                 {shut}; its socket: {}",
                send.len(),
                expect.len(),
                tcp_info(fd).map_or_else(|e| e, |ti| show_tcp_info(&ti))
            ));
        }
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN | if off < send.len() { libc::POLLOUT } else { 0 },
            revents: 0,
        };
        unsafe { libc::poll(&mut p, 1, 10) };
        if off < send.len() {
            match s.write(&send[off..]) {
                Ok(k) => off += k,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) => return Err(format!("kernel write after {off} bytes: {e}")),
            }
        }
        while !eof {
            match s.read(&mut buf) {
                Ok(0) => eof = true,
                Ok(k) => {
                    if got + k > expect.len() {
                        return Err(format!(
                            "the kernel received {} bytes, more than the {} the engine sent",
                            got + k,
                            expect.len()
                        ));
                    }
                    if let Some(i) = (0..k).find(|&i| buf[i] != expect[got + i]) {
                        return Err(format!(
                            "the kernel received a wrong byte at stream offset {}: {:#04x}, want {:#04x}",
                            got + i,
                            buf[i],
                            expect[got + i]
                        ));
                    }
                    got += k;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => return Err(format!("kernel read after {got} bytes: {e}")),
            }
        }
        if eof && got < expect.len() {
            return Err(format!(
                "the engine's FIN came after {got} of {} bytes",
                expect.len()
            ));
        }
        let sent_all = off == send.len();
        if !shut && sent_all && ((kernel_first && got == expect.len()) || (!kernel_first && eof)) {
            s.shutdown(Shutdown::Write).map_err(|e| e.to_string())?;
            shut = true;
        }
        if shut && eof {
            break;
        }
    }
    let ti = tcp_info(fd)?;
    Ok(ConnEnd {
        rtt_us: ti.tcpi_rtt,
    })
}

/// Accepts the engine's `n` connections and serves each on its own thread; each result goes
/// to `out` with its connection number (local port - `LOCAL_PORT_BASE`).
pub(super) fn accept_all(
    listener: TcpListener,
    down: Arc<Vec<Vec<u8>>>,
    up: Arc<Vec<Vec<u8>>>,
    kernel_first: bool,
    deadline: Instant,
    stop: Arc<AtomicBool>,
    out: mpsc::Sender<(usize, Result<ConnEnd, String>)>,
) {
    let n = down.len();
    if let Err(e) = listener.set_nonblocking(true) {
        let _ = out.send((0, Err(e.to_string())));
        return;
    }
    let mut seen = vec![false; n];
    let mut done = 0;
    while done < n && !stop.load(Ordering::SeqCst) && Instant::now() < deadline {
        match listener.accept() {
            Ok((s, addr)) => {
                let c = usize::from(addr.port()).wrapping_sub(LOCAL_PORT_BASE as usize);
                if c >= n || seen[c] {
                    let _ = out.send((
                        c.min(n - 1),
                        Err(format!(
                            "the kernel accepted an unexpected connection from {addr}"
                        )),
                    ));
                    return;
                }
                seen[c] = true;
                done += 1;
                let (down, up, stop, out) = (down.clone(), up.clone(), stop.clone(), out.clone());
                std::thread::spawn(move || {
                    let r = serve(s, &down[c], &up[c], kernel_first, deadline, &stop);
                    let _ = out.send((c, r));
                });
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(2))
            }
            Err(e) => {
                let _ = out.send((0, Err(format!("accept: {e}"))));
                return;
            }
        }
    }
}

/// The kernel pings the engine: `sizes.len()` echo requests, one at a time, each answered with
/// its identifier, sequence number and data; waits for `go` first. Then it connects `tcp` to
/// the engine's port 4420, where nothing listens: the engine's RST must refuse it
/// (ECONNREFUSED, RFC 9293 3.10.7.1), within `tcp`'s connect timeout.
#[allow(clippy::too_many_arguments)]
pub(super) fn ping(
    sock: OwnedFd,
    tcp: OwnedFd,
    id: u16,
    sizes: Vec<usize>,
    seed: u64,
    go: mpsc::Receiver<()>,
    deadline: Instant,
    stop: Arc<AtomicBool>,
) -> Result<u32, String> {
    while go.recv_timeout(Duration::from_millis(20)).is_err() {
        if stop.load(Ordering::SeqCst) || Instant::now() > deadline {
            return Err("the pings never started".into());
        }
    }
    let mut rng = Rng::new(seed);
    let dst = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(ENGINE_IP),
        },
        sin_zero: [0; 8],
    };
    let mut answered = 0;
    for (seq, &len) in sizes.iter().enumerate() {
        let mut m = vec![8u8, 0, 0, 0];
        m.extend(id.to_be_bytes());
        m.extend((seq as u16).to_be_bytes());
        m.extend((0..len).map(|_| rng.next_u64() as u8));
        let s = !(sum16(0, &m) as u16);
        m[2..4].copy_from_slice(&s.to_be_bytes());
        let r = unsafe {
            libc::sendto(
                sock.as_raw_fd(),
                m.as_ptr() as *const libc::c_void,
                m.len(),
                0,
                &dst as *const _ as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        };
        if r < 0 {
            return Err(os_err("sendto (echo request)"));
        }
        let until = Instant::now() + Duration::from_secs(3);
        let mut buf = [0u8; 2048];
        loop {
            if stop.load(Ordering::SeqCst) {
                return Err("stopped".into());
            }
            if Instant::now() > until {
                return Err(format!(
                    "echo request {seq} ({len} data bytes) not answered within 3 s"
                ));
            }
            let k = unsafe {
                libc::recv(
                    sock.as_raw_fd(),
                    buf.as_mut_ptr() as *mut libc::c_void,
                    buf.len(),
                    0,
                )
            };
            if k <= 0 {
                continue;
            }
            let p = &buf[..k as usize];
            let ihl = usize::from(p[0] & 15) * 4;
            if p.len() < 20 || p.len() < ihl + 8 || p[12..16] != ENGINE_IP {
                continue;
            }
            let icmp = &p[ihl..];
            if icmp[0] != 0 || icmp[4..6] != id.to_be_bytes() {
                continue;
            }
            if sum16(0, icmp) != 0xffff {
                return Err(format!("echo reply {seq}: ICMP checksum"));
            }
            let rseq = u16::from_be_bytes([icmp[6], icmp[7]]);
            if usize::from(rseq) != seq {
                return Err(format!(
                    "echo reply with sequence {rseq} while waiting for {seq} (a duplicate?)"
                ));
            }
            if icmp[8..] != m[8..] {
                return Err(format!(
                    "echo reply {seq}: its {} data bytes are not the request's {len}",
                    icmp.len() - 8
                ));
            }
            answered += 1;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    refused(tcp)?;
    Ok(answered)
}

/// Connects `tcp` to the engine's address, port 4420: it must be refused.
fn refused(tcp: OwnedFd) -> Result<(), String> {
    let dst = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 4420u16.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(ENGINE_IP),
        },
        sin_zero: [0; 8],
    };
    let r = unsafe {
        libc::connect(
            tcp.as_raw_fd(),
            &dst as *const _ as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    let e = std::io::Error::last_os_error();
    match (r, e.raw_os_error()) {
        (0, _) => {
            Err("a connection to the engine's port 4420 was accepted: nothing listens there".into())
        }
        (_, Some(libc::ECONNREFUSED)) => Ok(()),
        _ => Err(format!(
            "a connection to the engine's port 4420 (nothing listens) ended with \"{e}\", not \
             refused by a RST (RFC 9293 3.10.7.1)"
        )),
    }
}
