//! The simulated board's network: a namespace of its own (`tbboard-<pid>`, deleted by its drop
//! guard; those of killed runs deleted at the next start), a TAP device in it with
//! [`TAP_IP`]/24 (IPv6 off, so the kernel sends nothing nobody asked for), and the project's
//! NVMe/TCP target model (`models::nvme_tcp_target`) serving every connection the kernel
//! accepts on [`TAP_IP`]:[`TARGET_PORT`], until the board stops.

use crate::models::nvme_tcp_target::{Target, TargetConfig};
use crate::suites::tcp::linux::{open_tap, Netns};
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Namespace names: this, then the process id.
pub const NETNS_PREFIX: &str = "tbboard-";
/// The TAP device inside the namespace.
pub const TAP: &str = "tbboard0";
/// The TAP side's (the target's) address, /24.
pub const TAP_IP: [u8; 4] = [10, 77, 0, 1];
/// The TAP side's MAC (locally administered).
pub const TAP_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x77, 0x00, 0x01];
/// The address the chip is given on the link (by the host tool's set-up).
pub const CHIP_IP: [u8; 4] = [10, 77, 0, 2];
/// The NVMe/TCP port the target listens on.
pub const TARGET_PORT: u16 = 4420;

/// `a.b.c.d`.
pub fn dotted(ip: [u8; 4]) -> String {
    ip.map(|b| b.to_string()).join(".")
}

/// The namespace, its TAP and the target's thread.
pub struct Site {
    /// Dropped last: deletes the namespace (closing the TAP first).
    pub ns: Netns,
    /// The TAP, non-blocking (owned by `ns`).
    tap_fd: i32,
    target: Option<JoinHandle<()>>,
    /// Connections the target accepted.
    pub conns: Arc<AtomicU64>,
    /// A target error, if one stopped a connection.
    pub errors: Arc<std::sync::Mutex<Vec<String>>>,
}

impl Site {
    /// Makes the namespace, the TAP (up, [`TAP_MAC`], [`TAP_IP`]/24) and the listener inside
    /// it, and starts the target: namespace 1 of `blocks` blocks of 512 bytes.
    pub fn create(blocks: u64) -> Result<Site, String> {
        let mut ns = Netns::create(&format!("{NETNS_PREFIX}{}", std::process::id()))?;
        ns.disable_ipv6()?;
        let tap: File = ns.enter(|| open_tap(TAP))??;
        let mac = TAP_MAC.map(|b| format!("{b:02x}")).join(":");
        ns.ip(&["link", "set", TAP, "address", &mac])?;
        ns.ip(&["addr", "add", &format!("{}/24", dotted(TAP_IP)), "dev", TAP])?;
        ns.ip(&["link", "set", TAP, "up"])?;
        // Loopback up: a client inside the namespace reaches the target on the TAP's address
        // (local delivery goes through lo).
        ns.ip(&["link", "set", "lo", "up"])?;
        let at = std::net::SocketAddr::from((TAP_IP, TARGET_PORT));
        let listener = ns
            .enter(|| TcpListener::bind(at))?
            .map_err(|e| format!("listen on {at} in the namespace: {e}"))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("listener: {e}"))?;
        let tap_fd = tap.as_raw_fd();
        ns.tap = Some(tap);
        let conns = Arc::new(AtomicU64::new(0));
        let errors = Arc::new(std::sync::Mutex::new(Vec::new()));
        let stop = ns.stop.clone();
        let (c, e) = (conns.clone(), errors.clone());
        let target = std::thread::spawn(move || serve(listener, blocks, &stop, &c, &e));
        Ok(Site {
            ns,
            tap_fd,
            target: Some(target),
            conns,
            errors,
        })
    }

    /// A frame the kernel sent on the TAP, if one is waiting.
    pub fn read_frame(&self, buf: &mut [u8]) -> Option<usize> {
        // SAFETY: reads into a live buffer of the length given; the TAP is non-blocking.
        let n = unsafe { libc::read(self.tap_fd, buf.as_mut_ptr().cast(), buf.len()) };
        (n > 0).then_some(n as usize)
    }

    /// Hands `frame` to the kernel through the TAP; the error says why it was refused.
    pub fn write_frame(&self, frame: &[u8]) -> Result<(), String> {
        // SAFETY: writes a live slice of the length given.
        let n = unsafe { libc::write(self.tap_fd, frame.as_ptr().cast(), frame.len()) };
        if n < 0 {
            return Err(format!(
                "TAP write of a {}-byte frame: {}",
                frame.len(),
                std::io::Error::last_os_error()
            ));
        }
        Ok(())
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        self.ns.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.target.take() {
            let _ = t.join();
        }
    }
}

/// The target's loop: accepts every connection (each gets its own target model, all sharing
/// one namespace of `blocks` blocks), moves bytes between the sockets and the models, until
/// `stop`. A connection that fails is closed and its error kept; the others go on.
fn serve(
    listener: TcpListener,
    blocks: u64,
    stop: &AtomicBool,
    conns: &AtomicU64,
    errors: &std::sync::Mutex<Vec<String>>,
) {
    let cfg = TargetConfig {
        namespaces: vec![blocks],
        maxh2cdata: 8192,
        cpda: 0,
        max_c2h: 8192,
        max_r2t: 8192,
        use_success: false,
        full_c2h: true,
        icd_max: 8192,
        seed: 0,
        fault: None,
    };
    // The first model holds the namespace; every later one shares it.
    let first = Target::new(cfg.clone());
    let mut live: Vec<(TcpStream, Target, Vec<u8>)> = Vec::new();
    let mut buf = vec![0u8; 65536];
    while !stop.load(Ordering::SeqCst) {
        let mut busy = false;
        match listener.accept() {
            Ok((s, addr)) => {
                let ok = s.set_nonblocking(true).and_then(|_| s.set_nodelay(true));
                if let Err(e) = ok {
                    errors.lock().unwrap().push(format!("{addr}: {e}"));
                } else {
                    // Its namespace sizes too (its range checks read them); the bytes are
                    // the first model's.
                    let mut t = Target::new(cfg.clone());
                    t.share_namespaces(&first);
                    live.push((s, t, Vec::new()));
                    conns.fetch_add(1, Ordering::SeqCst);
                    eprintln!("board: the target accepted a connection from {addr}");
                }
                busy = true;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => errors.lock().unwrap().push(format!("accept: {e}")),
        }
        live.retain_mut(|(s, t, out)| {
            let peer = s
                .peer_addr()
                .map_or_else(|_| "?".to_string(), |a| a.to_string());
            let r = (|| -> Result<bool, String> {
                loop {
                    match s.read(&mut buf) {
                        Ok(0) => return Ok(false),
                        Ok(k) => {
                            t.receive(&buf[..k]);
                            busy = true;
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                        Err(e) => return Err(format!("read: {e}")),
                    }
                }
                while t.step() {}
                out.extend(t.take(usize::MAX));
                // The model keeps every PDU for scoreboards; a board runs for hours.
                t.sent.clear();
                t.received.clear();
                for v in t.violations.drain(..) {
                    eprintln!("board: the target saw a host protocol violation from {peer}: {v}");
                }
                while !out.is_empty() {
                    match s.write(out) {
                        Ok(k) => {
                            out.drain(..k);
                            busy = true;
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                        Err(e) => return Err(format!("write: {e}")),
                    }
                }
                Ok(!t.dead || !out.is_empty())
            })();
            match r {
                Ok(keep) => {
                    if !keep {
                        eprintln!("board: the connection from {peer} closed");
                    }
                    keep
                }
                Err(e) => {
                    errors
                        .lock()
                        .unwrap()
                        .push(format!("target connection from {peer}: {e}"));
                    false
                }
            }
        });
        if !busy {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}
