//! `testbench tcp-linux`: the TCP/IP engine against the Linux kernel's own TCP/IP, the second
//! independent peer of issue 18 (the first is smoltcp, `stream.rs`).
//!
//! Each case makes its own network namespace (`tbtcp-<pid>-<case>`, deleted by a drop guard
//! even when the case fails or panics; namespaces of dead runs are deleted at the next start)
//! and, from a thread inside it, a TAP device (`/dev/net/tun`, `IFF_TAP | IFF_NO_PI`) with the
//! peer's MAC and 10.0.0.2/24 (IPv6 off, so the kernel sends nothing the test did not cause).
//! The bridge writes every frame of the engine's `m_axis` to the TAP and drives every frame read
//! from it into `s_axis` (padded to 60 bytes, as a MAC delivers it); it may drop, duplicate and
//! reorder TCP frames each way (never ARP or ICMP), and records what crosses the TAP in a pcap
//! (wall-clock timestamps).
//! Everything stays inside the namespace.
//!
//! The kernel side: a `TcpListener` on 10.0.0.2:4420 and a raw ICMP socket, both made inside
//! the namespace. Every engine connection actively opens to the listener (the engine ARPs for
//! 10.0.0.2, the kernel answers); the kernel sends a seeded byte stream and checks the one the
//! engine's application sends, the engine's application does the same the other way, so each
//! byte is checked exactly once and in order on both sides. Once every connection is up the
//! kernel's neighbour entry for the engine is flushed and the kernel pings the engine (it must
//! ARP for it, the engine answers), checking each reply's identifier, sequence number and data.
//! Then FIN close, the engine or the kernel first. Checked at the end: the streams, both ends'
//! close (the engine CLOSED or in TIME-WAIT, never failed; the kernel saw EOF after exactly its
//! bytes), no RST either way (but the kernel's answer to a late copy of an engine segment once
//! its side is closed, RFC 9293 3.10.7.1: `LateRsts`), the kernel's namespace counters (no TCP, IPv4 or ICMP error: the
//! engine's checksums verified by Linux), the engine's counters against the frames the bridge
//! saw, and, unless switched off, every engine frame through `models::tcp`'s golden check.
//!
//! The simulation is paced to wall time (`mhz` cycles per microsecond at most), so the engine's
//! timers, in ticks of 1 ms, run at the kernel's speed; a slower simulation only makes them
//! slower. Needs root (network namespaces and TAP devices); without it the command fails and
//! says so.

use super::{
    cnt, creg, App, Faults, Lossy, ENGINE_IP, ENGINE_MAC, LOCAL_PORT_BASE, PEER_IP, PEER_MAC,
};
use crate::drivers::axil::{Axil, AxilConfig};
use crate::drivers::axis::{AxisSink, AxisSource};
use crate::models::tcp::{self as golden, sum16, EngineView};
use crate::pcap::Pcap;
use crate::rng::Rng;
use crate::rtl::regs::tcp_csr;
use crate::rtl::TcpTop as Top;
use crate::sim::Sim;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The TAP device's name inside the namespace.
pub const TAP: &str = "tbtap0";
/// Namespace names start with this, then `<pid>-<case>`.
pub const NETNS_PREFIX: &str = "tbtcp-";

/// What a run asks for.
#[derive(Clone, Debug)]
pub struct Options {
    /// Largest stream per connection and direction, bytes.
    pub max_bytes: usize,
    /// Echo requests the kernel sends per case.
    pub pings: u32,
    /// Largest drop, duplication and reordering rate per TCP frame and direction, percent.
    pub faults: u8,
    /// Simulated cycles per microsecond of wall time, at most.
    pub mhz: u32,
    /// A case not done after this long fails.
    pub timeout: Duration,
    /// Check every engine frame with `models::tcp` as well as by the kernel.
    pub golden: bool,
}

/// One case's figures.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub conns: usize,
    /// Bytes the engine's application sent (the kernel checked), and received (from the kernel).
    pub up: usize,
    pub down: usize,
    pub engine_closed_first: bool,
    /// Engine counters: segments out and in, retransmitted segments, RTO expiries.
    pub seg_out: u32,
    pub seg_in: u32,
    pub retrans: u32,
    pub rto_fires: u32,
    /// Engine counters: fast retransmissions, duplicate ACKs in, out-of-order segments kept
    /// and dropped.
    pub fast_retrans: u32,
    pub dup_acks: u32,
    pub ooo: [u32; 2],
    /// Kernel (namespace) counters: TCP segments in, out, retransmitted.
    pub k_in: u64,
    pub k_out: u64,
    pub k_retrans: u64,
    /// The kernel's smoothed RTT of its connections at the end, largest, microseconds.
    pub k_rtt_us: u32,
    /// The kernel's RTO expiries and fast retransmits (`TcpExt.TCPTimeouts`,
    /// `TcpExt.TCPFastRetrans` in the namespace's /proc/net/netstat).
    pub k_timeouts: u64,
    pub k_fast: u64,
    /// The longest time a connection's kernel-to-engine stream did not move (bytes left to
    /// deliver, none delivered), milliseconds of wall time.
    pub stall_ms: u64,
    /// Echo requests answered, and their data bytes each.
    pub pings: u32,
    pub ping_bytes: usize,
    /// ARP frames: engine requests, engine replies, kernel requests, kernel replies.
    pub arp: [u32; 4],
    /// Bridge faults on TCP frames (dropped, duplicated, reordered) toward the kernel and the
    /// engine.
    pub faults: [[u32; 3]; 2],
    /// Frames across the TAP each way (to the kernel, to the engine).
    pub frames: [u64; 2],
    pub cycles: u64,
    pub secs: f64,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} conns, engine->linux {} B, linux->engine {} B, {} closed first; engine segs \
             out {} in {}, retrans {} (RTO {}, fast {}), dup ACKs in {}, out of order kept {} dropped {}; linux segs in {} out {} retrans {} (RTO expiries {}, fast \
             retransmits {}), srtt {} us; longest receive stall {} ms; {} pings answered \
             ({} data bytes); ARP engine req {} rep {}, linux req {} rep {}; TAP frames {} to \
             linux, {} to the engine; bridge \
             drop/dup/reorder to linux {:?} to engine {:?}; {} cycles in {:.2} s",
            self.conns,
            self.up,
            self.down,
            if self.engine_closed_first {
                "engine"
            } else {
                "linux"
            },
            self.seg_out,
            self.seg_in,
            self.retrans,
            self.rto_fires,
            self.fast_retrans,
            self.dup_acks,
            self.ooo[0],
            self.ooo[1],
            self.k_in,
            self.k_out,
            self.k_retrans,
            self.k_timeouts,
            self.k_fast,
            self.k_rtt_us,
            self.stall_ms,
            self.pings,
            self.ping_bytes,
            self.arp[0],
            self.arp[1],
            self.arp[2],
            self.arp[3],
            self.frames[0],
            self.frames[1],
            self.faults[0],
            self.faults[1],
            self.cycles,
            self.secs
        )
    }
}

fn os_err(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// Runs `ip ARGS`; the error names the command and its stderr.
fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("`ip {}`: {e} (iproute2's `ip` is needed)", args.join(" ")))?;
    if !out.status.success() {
        return Err(format!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
}

/// What the test needs from the machine, checked before anything is made: root, the TUN/TAP
/// driver and iproute2. The error says what is missing.
pub fn preflight() -> Result<(), String> {
    let need = "tcp-linux needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN: it makes a network \
                namespace with `ip netns add` and a TAP device through /dev/net/tun)";
    if unsafe { libc::geteuid() } != 0 {
        return Err(format!(
            "{need}; run it as root, e.g. `sudo -E cargo run --release -p testbench -- tcp-linux`"
        ));
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Err(format!(
            "{need}; /dev/net/tun is missing (load the tun module: `modprobe tun`)"
        ));
    }
    ip(&["-V"]).map_err(|e| format!("{need}; {e}"))?;
    Ok(())
}

/// Deletes the namespaces an earlier run left behind when it was killed (its pid is gone).
pub fn remove_stale() {
    let Ok(dir) = std::fs::read_dir("/var/run/netns") else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(rest) = name.strip_prefix(NETNS_PREFIX) else {
            continue;
        };
        let pid = rest.split('-').next().unwrap_or("");
        if !pid.is_empty() && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = ip(&["netns", "del", &name]);
        }
    }
}

/// A network namespace of the test's own, deleted on drop (and everything in it with it).
pub struct Netns {
    pub name: String,
    /// Set on drop: the kernel peer's threads stop.
    pub stop: Arc<AtomicBool>,
    /// Owned here so that it is closed before the namespace is deleted.
    tap: Option<File>,
}

impl Netns {
    /// `ip netns add NAME`.
    pub fn create(name: &str) -> Result<Netns, String> {
        ip(&["netns", "add", name]).map_err(|e| {
            format!("could not make the network namespace `{name}` ({e}); tcp-linux needs root with CAP_SYS_ADMIN and CAP_NET_ADMIN")
        })?;
        Ok(Netns {
            name: name.to_string(),
            stop: Arc::new(AtomicBool::new(false)),
            tap: None,
        })
    }

    /// Runs `f` on a thread that has joined the namespace: sockets and TAP devices it makes
    /// belong to the namespace, wherever they are used later.
    pub fn enter<T: Send>(&self, f: impl FnOnce() -> T + Send) -> Result<T, String> {
        let path = format!("/var/run/netns/{}", self.name);
        let ns = File::open(&path).map_err(|e| format!("{path}: {e}"))?;
        std::thread::scope(|s| {
            s.spawn(|| {
                if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                    return Err(os_err(&format!("setns into {}", self.name)));
                }
                Ok(f())
            })
            .join()
            .map_err(|_| "a thread inside the namespace panicked".to_string())?
        })
    }

    /// `ip -n NAME ARGS`.
    pub fn ip(&self, args: &[&str]) -> Result<(), String> {
        let mut all = vec!["-n", &self.name];
        all.extend_from_slice(args);
        ip(&all)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // The TAP's file holds the namespace: close it first.
        self.tap = None;
        if let Err(e) = ip(&["netns", "del", &self.name]) {
            eprintln!("tcp-linux: warning: {e}");
        }
    }
}

#[repr(C)]
struct IfReq {
    name: [u8; 16],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Opens a TAP device named `name` in the calling thread's namespace, non-blocking.
fn open_tap(name: &str) -> Result<File, String> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/net/tun")
        .map_err(|e| format!("/dev/net/tun: {e}"))?;
    let mut req = IfReq {
        name: [0; 16],
        flags: (libc::IFF_TAP | libc::IFF_NO_PI) as libc::c_short,
        _pad: [0; 22],
    };
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    if unsafe { libc::ioctl(f.as_raw_fd(), libc::TUNSETIFF, &mut req as *mut IfReq) } < 0 {
        return Err(os_err("TUNSETIFF (IFF_TAP | IFF_NO_PI)"));
    }
    let fd = f.as_raw_fd();
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if fl < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK) } < 0 {
        return Err(os_err("O_NONBLOCK on the TAP"));
    }
    Ok(f)
}

/// A raw ICMP socket in the calling thread's namespace, with a 20 ms receive timeout.
fn icmp_socket() -> Result<OwnedFd, String> {
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_ICMP) };
    if fd < 0 {
        return Err(os_err("raw ICMP socket"));
    }
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 20_000,
    };
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            &tv as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(os_err("SO_RCVTIMEO"));
    }
    Ok(fd)
}

/// The namespace's `/proc/net/snmp` counters, `Tcp.InSegs` style.
pub(super) fn snmp() -> Result<Vec<(String, u64)>, String> {
    let text = std::fs::read_to_string("/proc/thread-self/net/snmp")
        .map_err(|e| format!("/proc/thread-self/net/snmp: {e}"))?;
    Ok(parse_snmp(&text))
}

/// The namespace's `/proc/net/netstat` counters, `TcpExt.TCPTimeouts` style.
fn netstat() -> Result<Vec<(String, u64)>, String> {
    let text = std::fs::read_to_string("/proc/thread-self/net/netstat")
        .map_err(|e| format!("/proc/thread-self/net/netstat: {e}"))?;
    Ok(parse_snmp(&text))
}

/// `/proc/net/snmp`'s text (pairs of lines: `Group: names...`, `Group: values...`) as
/// `Group.Name` counters (a negative value, such as `Tcp.MaxConn` -1, wraps).
fn parse_snmp(text: &str) -> Vec<(String, u64)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for pair in lines.chunks(2) {
        if pair.len() < 2 {
            break;
        }
        let names: Vec<&str> = pair[0].split_whitespace().collect();
        let values: Vec<&str> = pair[1].split_whitespace().collect();
        let group = names[0].trim_end_matches(':');
        for (n, v) in names.iter().zip(&values).skip(1) {
            out.push((format!("{group}.{n}"), v.parse::<i64>().unwrap_or(0) as u64));
        }
    }
    out
}

pub(super) fn counter(s: &[(String, u64)], name: &str) -> u64 {
    s.iter().find(|(n, _)| n == name).map_or(0, |(_, v)| *v)
}

/// The kernel's namespace counters that tell what it made of the engine's frames.
fn kernel_summary(ns: &Netns) -> String {
    match ns.enter(snmp) {
        Ok(Ok(k)) => [
            "Tcp.InSegs",
            "Tcp.OutSegs",
            "Tcp.RetransSegs",
            "Tcp.InErrs",
            "Tcp.InCsumErrors",
            "Tcp.OutRsts",
            "Tcp.AttemptFails",
            "Ip.InHdrErrors",
            "Icmp.InEchoReps",
        ]
        .iter()
        .map(|n| format!("{n} {}", counter(&k, n)))
        .collect::<Vec<_>>()
        .join(", "),
        Ok(Err(e)) | Err(e) => e,
    }
}

/// A kernel connection's end: it sent `send` and received exactly `expect`.
#[derive(Clone, Debug, Default)]
struct ConnEnd {
    rtt_us: u32,
}

/// The kernel's side of one connection: sends `send`, checks what arrives against `expect`,
/// then closes (first, or after the engine's FIN). Non-blocking, bounded by `deadline`.
fn serve(
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

/// The kernel's `TCP_INFO` of socket `fd`.
fn tcp_info(fd: i32) -> Result<libc::tcp_info, String> {
    let mut ti: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            &mut ti as *mut _ as *mut libc::c_void,
            &mut len,
        )
    };
    if r != 0 {
        return Err(os_err("TCP_INFO"));
    }
    Ok(ti)
}

/// What a stalled kernel socket says about itself: state, congestion state, retransmission
/// and probe counts, backoff, RTO, unacknowledged segments, congestion window, time since it
/// last sent data and last received an ACK.
fn show_tcp_info(ti: &libc::tcp_info) -> String {
    format!(
        "state {}, ca_state {}, retransmits {}, probes {}, backoff {}, rto {} us, unacked {}, \
         cwnd {}, ssthresh {}, total_retrans {}, last data sent {} ms ago, last ACK received \
         {} ms ago",
        ti.tcpi_state,
        ti.tcpi_ca_state,
        ti.tcpi_retransmits,
        ti.tcpi_probes,
        ti.tcpi_backoff,
        ti.tcpi_rto,
        ti.tcpi_unacked,
        ti.tcpi_snd_cwnd,
        ti.tcpi_snd_ssthresh,
        ti.tcpi_total_retrans,
        ti.tcpi_last_data_sent,
        ti.tcpi_last_ack_recv
    )
}

/// Accepts the engine's `n` connections and serves each on its own thread; each result goes
/// to `out` with its connection number (local port - `LOCAL_PORT_BASE`).
fn accept_all(
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
/// its identifier, sequence number and data; waits for `go` first.
fn ping(
    sock: OwnedFd,
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
    Ok(answered)
}

/// What one case does, drawn from its seed.
pub(super) struct Plan {
    up: Vec<Vec<u8>>,
    down: Vec<Vec<u8>>,
    kernel_first: bool,
    pings: Vec<usize>,
    pub(super) to_kernel: Faults,
    pub(super) to_engine: Faults,
    stall: u8,
    idle: u8,
    mss: u32,
    wscale: u32,
    key: (u32, u32),
}

impl Plan {
    /// Where `bytes` (wrong bytes the engine delivered) occur: in which stream or echo request
    /// payload, at which offset.
    fn whence(&self, bytes: &[u8], seed: u64) -> String {
        if bytes.len() < 8 {
            return "too few to say where they come from".into();
        }
        let k = &bytes[..8];
        let find = |h: &[u8]| h.windows(8).position(|w| w == k);
        let mut found = Vec::new();
        for (c, d) in self.down.iter().enumerate() {
            if let Some(i) = find(d) {
                found.push(format!("kernel stream {c} offset {i}"));
            }
        }
        for (c, d) in self.up.iter().enumerate() {
            if let Some(i) = find(d) {
                found.push(format!("engine stream {c} offset {i}"));
            }
        }
        let mut rng = Rng::new(seed ^ 7);
        for (j, &len) in self.pings.iter().enumerate() {
            let p: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            if let Some(i) = find(&p) {
                found.push(format!("echo request {j} data offset {i}"));
            }
        }
        if found.is_empty() {
            "found in no stream and no echo request".into()
        } else {
            format!("found in {}", found.join(", "))
        }
    }

    /// Case `seed`'s plan for `n` connections (`clean`: no bridge faults).
    pub(super) fn draw(seed: u64, n: usize, opt: &Options, clean: bool) -> Plan {
        let mut r = Rng::new(seed);
        let stream = |r: &mut Rng| -> Vec<u8> {
            let len = r.below(opt.max_bytes as u64 + 1) as usize;
            (0..len).map(|_| r.next_u64() as u8).collect()
        };
        let up = (0..n).map(|_| stream(&mut r)).collect();
        let down = (0..n).map(|_| stream(&mut r)).collect();
        let faults = |r: &mut Rng| {
            let mut rate = || {
                if clean {
                    0
                } else {
                    r.below(u64::from(opt.faults) + 1) as u8
                }
            };
            Faults {
                drop: rate(),
                dup: rate(),
                reorder: rate(),
                corrupt: 0,
                truncate: 0,
            }
        };
        let to_kernel = faults(&mut r);
        let to_engine = faults(&mut r);
        Plan {
            up,
            down,
            kernel_first: r.chance(50),
            // The engine answers ICMP messages of up to 512 bytes (`tcp.echo_bytes`).
            pings: (0..opt.pings).map(|_| r.below(505) as usize).collect(),
            to_kernel,
            to_engine,
            stall: r.below(30) as u8,
            idle: r.below(30) as u8,
            mss: [536, 1000, 1460][r.below(3) as usize],
            wscale: r.below(5) as u32,
            key: (r.next_u64() as u32, r.next_u64() as u32),
        }
    }
}

/// The kernel's last TCP segments per connection as the engine got them (after the bridge's
/// faults), sequence numbers relative to the kernel's ISN: what a failure report shows.
struct Trail {
    isn: Vec<Option<u32>>,
    last: Vec<std::collections::VecDeque<(u64, i64, usize, u8)>>,
}

impl Trail {
    fn new(n: usize) -> Trail {
        Trail {
            isn: vec![None; n],
            last: vec![Default::default(); n],
        }
    }

    fn note(&mut self, cycle: u64, f: &[u8]) {
        if !is_tcp(f) || f.len() < 54 {
            return;
        }
        let c =
            usize::from(u16::from_be_bytes([f[36], f[37]])).wrapping_sub(LOCAL_PORT_BASE as usize);
        if c >= self.isn.len() {
            return;
        }
        let seq = u32::from_be_bytes([f[38], f[39], f[40], f[41]]);
        let flags = f[47];
        if flags & 2 != 0 {
            self.isn[c] = Some(seq);
        }
        let ip_len = usize::from(u16::from_be_bytes([f[16], f[17]]));
        let len = ip_len.saturating_sub(20 + usize::from(f[46] >> 4) * 4);
        let rel = self.isn[c].map_or(-1, |i| i64::from(seq.wrapping_sub(i).wrapping_sub(1)));
        let l = &mut self.last[c];
        l.push_back((cycle, rel, len, flags));
        if l.len() > 40 {
            l.pop_front();
        }
    }

    fn show(&self, c: usize) -> String {
        self.last[c]
            .iter()
            .map(|(t, o, l, f)| format!("({t}, {o}, {l}, {f:#04x})"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The kernel's RSTs after its side of a connection is gone. When the engine closes first,
/// the kernel's socket goes from LAST-ACK to CLOSED on the engine's ACK of its FIN; a copy of
/// an engine segment arriving after that (the bridge duplicates and reorders) finds no
/// connection, and RFC 9293 3.10.7.1 has the kernel answer it with `<SEQ=SEG.ACK><CTL=RST>`,
/// which the engine, in TIME-WAIT, takes (3.10.7.4: CLOSED, no failure). Such a RST is allowed;
/// any other is not.
#[derive(Default)]
struct LateRsts {
    /// Per connection: the sequence number after the engine's FIN (as delivered to the kernel).
    eng_fin: Vec<Option<u32>>,
    /// Per connection: the sequence number after the kernel's FIN, when that FIN acknowledged
    /// the engine's (the kernel closed second: LAST-ACK).
    k_last_ack: Vec<Option<u32>>,
    /// Per connection: the kernel got the ACK of its FIN in LAST-ACK: its connection is gone.
    gone: Vec<bool>,
    /// RSTs the kernel sent for a gone connection, as RFC 9293 3.10.7.1 says.
    allowed: u32,
    /// Other RSTs from the kernel: (connection, sequence number, flags).
    other: Vec<(usize, u32, u8)>,
}

impl LateRsts {
    fn new(n: usize) -> LateRsts {
        LateRsts {
            eng_fin: vec![None; n],
            k_last_ack: vec![None; n],
            gone: vec![false; n],
            ..LateRsts::default()
        }
    }

    /// The connection, sequence number, ACK number, flags and sequence space of a TCP frame
    /// whose port `at` (34 source, 36 destination) is the engine's.
    fn fields(&self, f: &[u8], at: usize) -> Option<(usize, u32, u32, u8, u32)> {
        if !is_tcp(f) || f.len() < 54 || f[14] != 0x45 {
            return None;
        }
        let c = usize::from(u16::from_be_bytes([f[at], f[at + 1]]))
            .wrapping_sub(LOCAL_PORT_BASE as usize);
        if c >= self.gone.len() {
            return None;
        }
        let seq = u32::from_be_bytes([f[38], f[39], f[40], f[41]]);
        let ack = u32::from_be_bytes([f[42], f[43], f[44], f[45]]);
        let ip_len = usize::from(u16::from_be_bytes([f[16], f[17]]));
        let plen = ip_len.saturating_sub(20 + usize::from(f[46] >> 4) * 4) as u32;
        let fl = f[47];
        Some((c, seq, ack, fl, plen + u32::from(fl & 1)))
    }

    /// An engine frame written to the TAP.
    fn engine_frame(&mut self, f: &[u8]) {
        let Some((c, seq, ack, fl, len)) = self.fields(f, 34) else {
            return;
        };
        if fl & 1 != 0 {
            self.eng_fin[c] = Some(seq.wrapping_add(len));
        }
        if fl & 0x10 != 0 && self.k_last_ack[c] == Some(ack) {
            self.gone[c] = true;
        }
    }

    /// A kernel frame read from the TAP.
    fn kernel_frame(&mut self, f: &[u8]) {
        let Some((c, seq, ack, fl, len)) = self.fields(f, 36) else {
            return;
        };
        if fl & 1 != 0 && fl & 0x10 != 0 && self.eng_fin[c] == Some(ack) {
            self.k_last_ack[c] = Some(seq.wrapping_add(len));
        }
        if fl & 4 != 0 {
            if self.gone[c] && fl == 4 && self.k_last_ack[c] == Some(seq) {
                self.allowed += 1;
            } else {
                self.other.push((c, seq, fl));
            }
        }
    }
}

/// An ARP frame's operation (1 request, 2 reply).
fn arp_kind(f: &[u8]) -> Option<u8> {
    if f.len() >= 42 && f[12..14] == [8, 6] {
        Some(f[21])
    } else {
        None
    }
}

/// Wall time, microseconds since the Unix epoch: the pcap's timestamps (the kernel's timers run
/// in real time, so a capture shows them as they were).
fn wall_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

fn is_tcp(f: &[u8]) -> bool {
    f.len() >= 34 && f[12..14] == [8, 0] && f[23] == 6
}

/// Case `case`'s namespace (IPv6 off), its TAP device (the peer's MAC and 10.0.0.2/24, up;
/// owned by the namespace guard) and the kernel's listener on 10.0.0.2:4420, all made inside it.
pub(super) fn site(case: u64) -> Result<(Netns, i32, TcpListener), String> {
    let mut ns = Netns::create(&format!("{NETNS_PREFIX}{}-{case}", std::process::id()))?;
    // IPv6 off before the TAP exists: no router solicitations or MLD reports on the link.
    ns.enter(|| {
        for k in ["all", "default"] {
            let p = format!("/proc/sys/net/ipv6/conf/{k}/disable_ipv6");
            // A kernel without IPv6 has nothing to switch off.
            if std::path::Path::new(&p).exists() {
                std::fs::write(&p, "1").map_err(|e| format!("{p}: {e}"))?;
            }
        }
        Ok::<(), String>(())
    })??;
    let tap = ns.enter(|| open_tap(TAP))??;
    let mac = PEER_MAC.map(|b| format!("{b:02x}")).join(":");
    let addr = format!("{}/24", PEER_IP.map(|b| b.to_string()).join("."));
    ns.ip(&["link", "set", TAP, "address", &mac])?;
    ns.ip(&["addr", "add", &addr, "dev", TAP])?;
    ns.ip(&["link", "set", TAP, "up"])?;
    let peer = std::net::SocketAddr::from((PEER_IP, 4420));
    let listener = ns
        .enter(|| TcpListener::bind(peer))?
        .map_err(|e| format!("listen on {peer} in the namespace: {e}"))?;
    let tap_fd = tap.as_raw_fd();
    ns.tap = Some(tap);
    Ok((ns, tap_fd, listener))
}

/// The TCP engine's CSRs for a case against the kernel (`n` connections to 10.0.0.2:4420, not
/// opened yet): addresses, ticks of 1 ms at `tick` cycles, the RTO bounds and retry limits,
/// the plan's ISN key, MSS and window shift.
pub(super) fn program<C: crate::drivers::Clocked + ?Sized>(
    bus: &mut crate::drivers::axil::Mmio<'_, C>,
    n: usize,
    tick: u32,
    plan: &Plan,
) {
    bus.write32(
        tcp_csr::MAC_HI,
        u32::from(u16::from_be_bytes([ENGINE_MAC[0], ENGINE_MAC[1]])),
    );
    bus.write32(
        tcp_csr::MAC_LO,
        u32::from_be_bytes([ENGINE_MAC[2], ENGINE_MAC[3], ENGINE_MAC[4], ENGINE_MAC[5]]),
    );
    bus.write32(tcp_csr::IP, u32::from_be_bytes(ENGINE_IP));
    bus.write32(tcp_csr::NETMASK, 0xffff_ff00);
    bus.write32(tcp_csr::GATEWAY, u32::from_be_bytes([10, 0, 0, 254]));
    // Ticks of 1 ms at the paced clock.
    bus.write32(tcp_csr::TICK, tick);
    bus.write32(tcp_csr::RTO_MIN, 30);
    bus.write32(tcp_csr::RTO_MAX, 2000);
    bus.write32(tcp_csr::RTO_INIT, 250);
    bus.write32(tcp_csr::RETRIES, 5 << 8 | 15);
    bus.write32(tcp_csr::ARP_RETRY, 200);
    bus.write32(tcp_csr::TIME_WAIT, 100);
    bus.write32(tcp_csr::ISN_KEY0, plan.key.0);
    bus.write32(tcp_csr::ISN_KEY1, plan.key.1);
    bus.write32(tcp_csr::MSS, plan.mss);
    bus.write32(tcp_csr::WSCALE, plan.wscale);
    for c in 0..n {
        bus.write32(creg(c, 0), u32::from_be_bytes(PEER_IP));
        bus.write32(creg(c, 4), (LOCAL_PORT_BASE + c as u32) << 16 | 4420);
    }
}

/// What a case looks at as the bridge moves frames (every method defaults to nothing).
pub(super) trait BridgeWatch {
    /// An engine frame off `m_axis`, before the bridge's faults.
    fn engine_frame(&mut self, _cycle: u64, _f: &[u8]) -> Result<(), String> {
        Ok(())
    }
    /// An engine frame written to the TAP.
    fn to_tap(&mut self, _f: &[u8]) {}
    /// A kernel frame read from the TAP, before the bridge's faults.
    fn kernel_frame(&mut self, _f: &[u8]) {}
    /// A kernel frame into `s_axis`, after the bridge's faults.
    fn to_engine(&mut self, _cycle: u64, _f: &[u8]) {}
}

/// The bridge between the engine's Ethernet port and the TAP device: every engine frame to
/// the TAP, every frame read from it into `s_axis` (padded to 60 bytes, as a MAC delivers
/// it), TCP frames through a [`Lossy`] link each way (ARP and ICMP never), and the pacing of
/// the simulation to wall time (`mhz` cycles per microsecond at most).
pub(super) struct Bridge {
    tap_fd: i32,
    pub to_kernel: Lossy,
    pub to_engine: Lossy,
    out_queue: std::collections::VecDeque<Vec<u8>>,
    buf: Vec<u8>,
    /// Engine frames taken off `m_axis`.
    pub seen: usize,
    next_rx: u64,
    next_pace: u64,
    start_cycle: u64,
    pace0: Instant,
    mhz: u32,
    /// Frames across the TAP each way (to the kernel, to the engine).
    pub frames: [u64; 2],
    /// ARP frames: engine requests, engine replies, kernel requests, kernel replies.
    pub arp: [u32; 4],
}

impl Bridge {
    /// A bridge on `tap_fd` whose faults (toward the kernel, toward the engine) draw from
    /// `seed`, paced from `start_cycle` on.
    pub fn new(
        tap_fd: i32,
        seed: u64,
        faults: (Faults, Faults),
        mhz: u32,
        start_cycle: u64,
    ) -> Self {
        Bridge {
            tap_fd,
            to_kernel: Lossy::new(seed ^ 5, faults.0),
            to_engine: Lossy::new(seed ^ 6, faults.1),
            out_queue: Default::default(),
            buf: vec![0u8; 65536],
            seen: 0,
            next_rx: 0,
            next_pace: 0,
            start_cycle,
            pace0: Instant::now(),
            mhz,
            frames: [0; 2],
            arp: [0; 4],
        }
    }

    /// The bridge's work after cycle `cycle` of the model whose Ethernet drivers are
    /// `(sink, src)`; frames crossing the TAP go to `pcap`.
    pub fn pump(
        &mut self,
        cycle: u64,
        (sink, src): (
            &std::cell::RefCell<AxisSink>,
            &std::cell::RefCell<AxisSource>,
        ),
        mut pcap: Option<&mut Pcap>,
        watch: &mut dyn BridgeWatch,
    ) -> Result<(), String> {
        // Engine frames: looked at, recorded as they cross the TAP, written to it.
        let new: Vec<Vec<u8>> = sink.borrow().frames[self.seen..]
            .iter()
            .map(|f| f.data.clone())
            .collect();
        self.seen += new.len();
        for f in new {
            watch.engine_frame(cycle, &f)?;
            match arp_kind(&f) {
                Some(1) => self.arp[0] += 1,
                Some(2) => self.arp[1] += 1,
                _ => {}
            }
            if is_tcp(&f) {
                self.to_kernel.push(cycle, f);
            } else {
                self.out_queue.push_back(f);
            }
        }
        self.out_queue.extend(self.to_kernel.pop(cycle));
        while let Some(f) = self.out_queue.front() {
            let r = unsafe { libc::write(self.tap_fd, f.as_ptr() as *const libc::c_void, f.len()) };
            if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == ErrorKind::WouldBlock {
                    break;
                }
                return Err(format!("write to the TAP: {e}"));
            }
            if let Some(p) = pcap.as_deref_mut() {
                p.ethernet_at(f, wall_us());
            }
            watch.to_tap(f);
            self.frames[0] += 1;
            self.out_queue.pop_front();
        }
        // Kernel frames: recorded, into the bridge's faults, padded as a MAC delivers them.
        if cycle >= self.next_rx {
            self.next_rx = cycle + 32;
            loop {
                let r = unsafe {
                    libc::read(
                        self.tap_fd,
                        self.buf.as_mut_ptr() as *mut libc::c_void,
                        self.buf.len(),
                    )
                };
                if r < 0 {
                    let e = std::io::Error::last_os_error();
                    if e.kind() == ErrorKind::WouldBlock {
                        break;
                    }
                    return Err(format!("read from the TAP: {e}"));
                }
                let mut f = self.buf[..r as usize].to_vec();
                if f.len() < 14 {
                    continue;
                }
                self.frames[1] += 1;
                if let Some(p) = pcap.as_deref_mut() {
                    p.ethernet_at(&f, wall_us());
                }
                match arp_kind(&f) {
                    Some(1) => self.arp[2] += 1,
                    Some(2) => self.arp[3] += 1,
                    _ => {}
                }
                watch.kernel_frame(&f);
                f.resize(f.len().max(60), 0);
                if is_tcp(&f) {
                    self.to_engine.push(cycle, f);
                } else {
                    src.borrow_mut().send(f);
                }
            }
        }
        for f in self.to_engine.pop(cycle) {
            watch.to_engine(cycle, &f);
            src.borrow_mut().send(f);
        }
        // Pacing: no faster than `mhz` cycles per microsecond of wall time.
        if cycle >= self.next_pace {
            self.next_pace = cycle + 256;
            let ahead_us = ((cycle - self.start_cycle) / u64::from(self.mhz)) as i64
                - self.pace0.elapsed().as_micros() as i64;
            if ahead_us > 200 {
                let ts = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: (ahead_us.min(2000) * 1000) as libc::c_long,
                };
                let mut p = libc::pollfd {
                    fd: self.tap_fd,
                    events: libc::POLLIN,
                    revents: 0,
                };
                unsafe { libc::ppoll(&mut p, 1, &ts, std::ptr::null()) };
            }
        }
        Ok(())
    }
}

/// What `run_case` looks at on the bridge: the golden check of every engine frame (when on,
/// with the application's streams), the RSTs the kernel may send, the kernel's segments as the
/// engine got them.
struct Watch<'a> {
    golden: Option<(&'a std::cell::RefCell<App>, &'a mut EngineView)>,
    late: &'a mut LateRsts,
    trail: &'a mut Trail,
}

impl BridgeWatch for Watch<'_> {
    fn engine_frame(&mut self, cycle: u64, f: &[u8]) -> Result<(), String> {
        if let Some((app, view)) = self.golden.as_mut() {
            let a = app.borrow();
            let got: Vec<usize> = a.got.iter().map(Vec::len).collect();
            golden::check_frame(view, f, &a.sent, &got, cycle)
                .map_err(|e| format!("cycle {cycle}: engine frame {f:02x?}: {e}"))?;
        }
        Ok(())
    }
    fn to_tap(&mut self, f: &[u8]) {
        self.late.engine_frame(f);
    }
    fn kernel_frame(&mut self, f: &[u8]) {
        if let Some((_, view)) = self.golden.as_mut() {
            view.peer_frame(f);
        }
        self.late.kernel_frame(f);
    }
    fn to_engine(&mut self, cycle: u64, f: &[u8]) {
        self.trail.note(cycle, f);
    }
}

/// Runs case `case` with `seed`; frames crossing the TAP go to `pcap`.
pub fn run_case(
    case: u64,
    seed: u64,
    opt: &Options,
    mut pcap: Option<&mut Pcap>,
) -> Result<Report, String> {
    let t0 = Instant::now();
    let deadline = t0 + opt.timeout;
    let (ns, tap_fd, listener) = site(case)?;
    let icmp = ns.enter(icmp_socket)??;

    let mut sim = Sim::<Top>::new();
    let n = sim.signal("up_o").width() as usize;
    let plan = Plan::draw(seed, n, opt, case == 0);
    let src = sim.add(AxisSource::new(&sim, "s_axis", seed ^ 1, 0));
    let sink = sim.add(AxisSink::new(&sim, "m_axis", seed ^ 2, 5));
    let app = sim.add(App::new(&sim, seed ^ 3, n));
    let axil = Axil::attach(
        &mut sim,
        "s_axil",
        AxilConfig {
            seed: seed ^ 4,
            ..AxilConfig::default()
        },
    );
    sim.reset(3);
    let tick = opt.mhz * 1000;
    program(&mut axil.mmio(&mut sim), n, tick, &plan);
    let mut view = EngineView::new(n, plan.mss as u16, plan.wscale as u8, plan.key);
    view.rx_bytes = super::rx_bytes(&axil, &mut sim);
    {
        let mut a = app.borrow_mut();
        a.stall = plan.stall;
        a.idle = plan.idle;
        for c in 0..n {
            a.to_send[c] = plan.up[c].iter().copied().collect();
            view.conns[c].data = plan.up[c].clone();
        }
    }

    // The kernel's side.
    let (res_tx, res_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel();
    {
        let (down, up) = (Arc::new(plan.down.clone()), Arc::new(plan.up.clone()));
        let (stop, kf) = (ns.stop.clone(), plan.kernel_first);
        std::thread::spawn(move || accept_all(listener, down, up, kf, deadline, stop, res_tx));
    }
    let ping_thread = {
        let (stop, sizes) = (ns.stop.clone(), plan.pings.clone());
        let id = 0x7a00 | (case as u16 & 0xff);
        std::thread::spawn(move || ping(icmp, id, sizes, seed ^ 7, go_rx, deadline, stop))
    };

    for c in 0..n {
        axil.mmio(&mut sim).write32(creg(c, 8), 1);
    }
    let mut bridge = Bridge::new(
        tap_fd,
        seed,
        (plan.to_kernel.clone(), plan.to_engine.clone()),
        opt.mhz,
        sim.cycle(),
    );
    let mut report = Report {
        conns: n,
        engine_closed_first: !plan.kernel_first,
        ..Report::default()
    };
    let mut ends: Vec<Option<ConnEnd>> = vec![None; n];
    let mut closing = vec![false; n];
    let mut pinging = false;
    let mut ping_result = None;
    let mut ping_thread = Some(ping_thread);
    let mut quiet_from: Option<u64> = None;
    let start_cycle = sim.cycle();
    let mut was_up = vec![false; n];
    // Per connection: bytes delivered at the last look, and when they last moved.
    let mut progress: Vec<(usize, Option<Instant>)> = vec![(0, None); n];
    // CSR accesses run the model too, so the periodic work goes by due cycles.
    let mut next_ctl = 0u64;
    let mut trail = Trail::new(n);
    let mut late = LateRsts::new(n);
    let state = |sim: &mut Sim<Top>, c: usize| axil.mmio(sim).read32(creg(c, 12));
    loop {
        sim.step();
        let cycle = sim.cycle();
        bridge.pump(
            cycle,
            (&sink, &src),
            pcap.as_deref_mut(),
            &mut Watch {
                golden: opt.golden.then_some((&*app, &mut view)),
                late: &mut late,
                trail: &mut trail,
            },
        )?;
        if let Some(v) = sink.borrow().violations.first() {
            return Err(format!("m_axis: {v}"));
        }
        if let Some(v) = app.borrow().violations.first() {
            return Err(format!("byte streams: {v}"));
        }
        if cycle < next_ctl {
            continue;
        }
        next_ctl = cycle + 2048;
        // Control, every 2048 cycles.
        {
            let a = app.borrow();
            let now = Instant::now();
            for c in 0..n {
                let got = a.got[c].len();
                if was_up[c] && got < plan.down[c].len() {
                    match progress[c] {
                        (g, Some(t)) if g == got => {
                            let ms = now.duration_since(t).as_millis() as u64;
                            report.stall_ms = report.stall_ms.max(ms);
                        }
                        _ => progress[c] = (got, Some(now)),
                    }
                }
            }
            for c in 0..n {
                if !plan.down[c].starts_with(&a.got[c]) {
                    let at = a.got[c]
                        .iter()
                        .zip(&plan.down[c])
                        .position(|(x, y)| x != y)
                        .unwrap_or(plan.down[c].len());
                    let wrong = &a.got[c][at..a.got[c].len().min(at + 16)];
                    return Err(format!(
                        "connection {c}: the engine delivered {} bytes, wrong from stream offset \
                         {at}: {wrong:02x?}, want {:02x?} ({}); the kernel's last segments as the \
                         engine got them (cycle, offset, length, flags): {}",
                        a.got[c].len(),
                        &plan.down[c][at..plan.down[c].len().min(at + 16)],
                        plan.whence(wrong, seed),
                        trail.show(c)
                    ));
                }
            }
        }
        while let Ok((c, r)) = res_rx.try_recv() {
            match r {
                Ok(e) => ends[c] = Some(e),
                Err(e) => {
                    let regs: Vec<u32> = [12, 16, 20, 24, 28, 32, 36]
                        .iter()
                        .map(|&o| axil.mmio(&mut sim).read32(creg(c, o)))
                        .collect();
                    let cn: Vec<u32> = (0..golden::COUNTERS)
                        .map(|i| axil.mmio(&mut sim).read32(tcp_csr::SEG_IN + 4 * i))
                        .collect();
                    let a = app.borrow();
                    return Err(format!(
                        "connection {c}, kernel side: {e}; engine (state, snd_una, snd_nxt, \
                         rcv_nxt, rtt, iss, snd_wnd) {regs:x?}, delivered {} of {} bytes, took \
                         {} of {}; engine counters {cn:?}; the kernel's last segments as the \
                         engine got them (cycle, offset, length, flags): {}",
                        a.got[c].len(),
                        plan.down[c].len(),
                        a.sent[c],
                        plan.up[c].len(),
                        trail.show(c)
                    ));
                }
            }
        }
        let states: Vec<u32> = (0..n).map(|c| state(&mut sim, c)).collect();
        if let Some(c) = states.iter().position(|s| s & 0x10 != 0) {
            let cn: Vec<u32> = (0..golden::COUNTERS)
                .map(|i| axil.mmio(&mut sim).read32(tcp_csr::SEG_IN + 4 * i))
                .collect();
            return Err(format!(
                "connection {c} failed (state CSR {:#x}, reason {}); engine counters {cn:?}; \
                 kernel {}",
                states[c],
                (states[c] >> 8) & 3,
                kernel_summary(&ns)
            ));
        }
        for (c, s) in states.iter().enumerate() {
            was_up[c] |= (4..=10).contains(&(s & 0xf));
        }
        if !pinging && was_up.iter().all(|&u| u) {
            // Every connection is up: the kernel forgets the engine's MAC, so its pings (and
            // its next segments) need an ARP request the engine must answer.
            ns.ip(&["neigh", "flush", "dev", TAP])?;
            pinging = true;
            let _ = go_tx.send(());
        }
        // Close: the engine first once its streams are done, or after the kernel's FIN (in
        // CLOSE-WAIT); either way only once the application has handed over every byte.
        let close: Vec<usize> = {
            let a = app.borrow();
            (0..n)
                .filter(|&c| {
                    let now = if plan.kernel_first {
                        states[c] & 0xf == 9
                    } else {
                        a.got[c].len() == plan.down[c].len() && states[c] & 0xf == 4
                    };
                    now && a.sent[c] == plan.up[c].len() && !closing[c]
                })
                .collect()
        };
        for c in close {
            closing[c] = true;
            view.conns[c].closing = true;
            axil.mmio(&mut sim).write32(creg(c, 8), 2);
        }
        if ping_thread.as_ref().is_some_and(|t| t.is_finished()) {
            let r = ping_thread
                .take()
                .expect("thread")
                .join()
                .map_err(|_| "the ping thread panicked".to_string())?;
            ping_result = Some(r.map_err(|e| format!("ping from the kernel: {e}"))?);
        }
        let engine_done = states.iter().all(|s| s & 0xf == 0 || s & 0xf == 8);
        let done = engine_done && ends.iter().all(Option::is_some) && ping_result.is_some();
        if done && quiet_from.is_none() {
            quiet_from = Some(cycle);
        }
        // A quiet 20 ms after the end, so the counters settle and late frames show.
        if quiet_from.is_some_and(|q| cycle - q > u64::from(tick) * 20) {
            break;
        }
        if Instant::now() > deadline {
            let cn: Vec<u32> = (0..golden::COUNTERS)
                .map(|i| axil.mmio(&mut sim).read32(tcp_csr::SEG_IN + 4 * i))
                .collect();
            let kernel = kernel_summary(&ns);
            let a = app.borrow();
            return Err(format!(
                "not done after {:?}: engine states {states:x?}, engine delivered {:?} of {:?} \
                 and took {:?} of {:?} bytes, kernel ends {ends:?}, ping {ping_result:?}, \
                 closing {closing:?}; engine counters {cn:?}; kernel {kernel}",
                opt.timeout,
                a.got.iter().map(Vec::len).collect::<Vec<_>>(),
                plan.down.iter().map(Vec::len).collect::<Vec<_>>(),
                a.sent,
                plan.up.iter().map(Vec::len).collect::<Vec<_>>(),
            ));
        }
    }
    report.cycles = sim.cycle() - start_cycle;
    report.secs = t0.elapsed().as_secs_f64();
    {
        let a = app.borrow();
        for c in 0..n {
            if a.got[c] != plan.down[c] {
                return Err(format!(
                    "connection {c}: the engine delivered {} of the kernel's {} bytes",
                    a.got[c].len(),
                    plan.down[c].len()
                ));
            }
        }
        report.up = plan.up.iter().map(Vec::len).sum();
        report.down = plan.down.iter().map(Vec::len).sum();
    }
    report.pings = ping_result.unwrap_or(0);
    report.ping_bytes = plan.pings.iter().sum::<usize>();
    report.faults = [bridge.to_kernel.counts, bridge.to_engine.counts].map(|c| [c[0], c[1], c[2]]);
    report.frames = bridge.frames;
    report.arp = bridge.arp;
    let seen = bridge.seen;
    let cn: Vec<u32> = (0..golden::COUNTERS)
        .map(|i| axil.mmio(&mut sim).read32(tcp_csr::SEG_IN + 4 * i))
        .collect();
    report.seg_out = cn[cnt::SEG_OUT];
    report.seg_in = cn[cnt::SEG_IN];
    report.retrans = cn[cnt::RETRANS];
    report.rto_fires = cn[cnt::RTO_FIRES];
    report.fast_retrans = cn[cnt::FAST_RETRANS];
    report.dup_acks = cn[cnt::DUP_ACKS];
    report.ooo = [cn[cnt::OOO_KEPT], cn[cnt::OOO_DROPPED]];
    let k = ns.enter(snmp)??;
    report.k_in = counter(&k, "Tcp.InSegs");
    report.k_out = counter(&k, "Tcp.OutSegs");
    report.k_retrans = counter(&k, "Tcp.RetransSegs");
    let kx = ns.enter(netstat)??;
    report.k_timeouts = counter(&kx, "TcpExt.TCPTimeouts");
    report.k_fast = counter(&kx, "TcpExt.TCPFastRetrans");

    // The checks at the end.
    let mut bad = Vec::new();
    if cn[cnt::RST_IN] > late.allowed {
        bad.push(format!(
            "engine counter rst_in is {}, but the kernel sent only {} RSTs for connections it \
             had closed (RFC 9293 3.10.7.1, to a late copy of an engine segment)",
            cn[cnt::RST_IN],
            late.allowed
        ));
    }
    if !late.other.is_empty() {
        bad.push(format!(
            "the kernel sent RSTs (connection, seq, flags) {:x?} while its connection was not \
             closed",
            late.other
        ));
    }
    for (i, name) in [
        (cnt::RST_OUT, "rst_out"),
        (cnt::TX_DROP, "tx_drop"),
        (cnt::DROP_CSUM, "drop_csum"),
        (cnt::DROP_MALFORMED, "drop_malformed"),
    ] {
        if cn[i] != 0 {
            bad.push(format!("engine counter {name} is {}, want 0", cn[i]));
        }
    }
    if cn[cnt::ECHO_OUT] != plan.pings.len() as u32 {
        bad.push(format!(
            "echo_out {}, but the kernel sent {} echo requests",
            cn[cnt::ECHO_OUT],
            plan.pings.len()
        ));
    }
    if cn[cnt::ARP_OUT] != report.arp[0] + report.arp[1] {
        bad.push(format!(
            "arp_out {}, but the engine put {} ARP frames on the TAP",
            cn[cnt::ARP_OUT],
            report.arp[0] + report.arp[1]
        ));
    }
    if report.arp[0] == 0 || report.arp[3] == 0 {
        bad.push(format!(
            "the engine resolved the kernel's address without an ARP request and reply ({:?})",
            report.arp
        ));
    }
    if !plan.pings.is_empty() && (report.arp[2] == 0 || report.arp[1] == 0) {
        bad.push(format!(
            "after its neighbour flush the kernel reached the engine without an ARP request \
             the engine answered ({:?})",
            report.arp
        ));
    }
    if cn[cnt::SEG_OUT] as usize > seen {
        bad.push(format!(
            "seg_out {} is more than the {seen} frames the engine sent",
            cn[cnt::SEG_OUT]
        ));
    }
    if opt.golden && cn[cnt::SEG_OUT] != view.tcp {
        bad.push(format!(
            "seg_out {}, but the engine sent {} TCP segments",
            cn[cnt::SEG_OUT],
            view.tcp
        ));
    }
    if counter(&k, "Tcp.OutRsts") != u64::from(late.allowed) {
        bad.push(format!(
            "kernel counter Tcp.OutRsts is {}, but {} RSTs were for connections it had closed",
            counter(&k, "Tcp.OutRsts"),
            late.allowed
        ));
    }
    for name in [
        "Tcp.InErrs",
        "Tcp.InCsumErrors",
        "Tcp.EstabResets",
        "Tcp.AttemptFails",
        "Ip.InHdrErrors",
        "Ip.InAddrErrors",
        "Icmp.InErrors",
        "Icmp.InCsumErrors",
    ] {
        let v = counter(&k, name);
        if v != 0 {
            bad.push(format!("kernel counter {name} is {v}, want 0"));
        }
    }
    if counter(&k, "Icmp.InEchoReps") != plan.pings.len() as u64 {
        bad.push(format!(
            "the kernel counted {} echo replies, want {}",
            counter(&k, "Icmp.InEchoReps"),
            plan.pings.len()
        ));
    }
    if !bad.is_empty() {
        return Err(format!(
            "{}; engine counters {cn:?}; {report}",
            bad.join("; ")
        ));
    }
    report.k_rtt_us = ends.iter().flatten().map(|e| e.rtt_us).max().unwrap_or(0);
    drop(ns);
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snmp_text_is_read_by_group_and_name() {
        let text = "Ip: Forwarding DefaultTTL InReceives\nIp: 2 64 17\n\
                    Tcp: RtoAlgorithm MaxConn InSegs InCsumErrors\nTcp: 1 -1 42 0\n";
        let k = parse_snmp(text);
        assert_eq!(counter(&k, "Ip.InReceives"), 17);
        assert_eq!(counter(&k, "Tcp.InSegs"), 42);
        assert_eq!(counter(&k, "Tcp.MaxConn"), u64::MAX);
        assert_eq!(counter(&k, "Tcp.Nothing"), 0);
    }

    #[test]
    fn arp_and_tcp_frames_are_told_apart() {
        let mut arp = vec![0xff; 6];
        arp.extend(PEER_MAC);
        arp.extend([8, 6, 0, 1, 8, 0, 6, 4, 0, 2]);
        arp.resize(60, 0);
        assert_eq!(arp_kind(&arp), Some(2));
        assert!(!is_tcp(&arp));
        let mut tcp = arp.clone();
        tcp[12..14].copy_from_slice(&[8, 0]);
        tcp[23] = 6;
        assert_eq!(arp_kind(&tcp), None);
        assert!(is_tcp(&tcp));
    }
}
