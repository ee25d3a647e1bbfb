//! The case's network namespace: its set-up check, the drop guard that deletes it (and those of
//! dead runs), the TAP device and the kernel's sockets made inside it.

use super::*;

pub(super) fn os_err(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// Runs `ip ARGS`; the error names the command and its stderr.
pub(super) fn ip(args: &[&str]) -> Result<(), String> {
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
    preflight_for("tcp-linux")
}

/// [`preflight`] for the `testbench` command `cmd` (named in the error).
pub(crate) fn preflight_for(cmd: &str) -> Result<(), String> {
    let need = format!(
        "{cmd} needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN: it makes a network namespace with \
         `ip netns add` and a TAP device through /dev/net/tun)"
    );
    if unsafe { libc::geteuid() } != 0 {
        return Err(format!(
            "{need}; run it as root, e.g. `sudo -E cargo run --release -p testbench -- {cmd}`"
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
    remove_stale_of(NETNS_PREFIX)
}

/// [`remove_stale`] for namespaces named `<prefix><pid>...`.
pub(crate) fn remove_stale_of(prefix: &str) {
    let Ok(dir) = std::fs::read_dir("/var/run/netns") else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(rest) = name.strip_prefix(prefix) else {
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
    pub(crate) tap: Option<File>,
}

impl Netns {
    /// `ip netns add NAME`.
    pub fn create(name: &str) -> Result<Netns, String> {
        ip(&["netns", "add", name]).map_err(|e| {
            format!("could not make the network namespace `{name}` ({e}); it needs root with CAP_SYS_ADMIN and CAP_NET_ADMIN")
        })?;
        Ok(Netns {
            name: name.to_string(),
            stop: Arc::new(AtomicBool::new(false)),
            tap: None,
        })
    }

    /// Switches IPv6 off in the namespace (before its TAP exists: no router solicitations or
    /// MLD reports on the link). A kernel without IPv6 has nothing to switch off.
    pub fn disable_ipv6(&self) -> Result<(), String> {
        self.enter(|| {
            for k in ["all", "default"] {
                let p = format!("/proc/sys/net/ipv6/conf/{k}/disable_ipv6");
                if std::path::Path::new(&p).exists() {
                    std::fs::write(&p, "1").map_err(|e| format!("{p}: {e}"))?;
                }
            }
            Ok(())
        })?
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
            eprintln!("warning: {e}");
        }
    }
}

#[repr(C)]
pub(super) struct IfReq {
    pub(super) name: [u8; 16],
    pub(super) flags: libc::c_short,
    pub(super) _pad: [u8; 22],
}

/// Opens a TAP device named `name` in the calling thread's namespace, non-blocking.
pub(crate) fn open_tap(name: &str) -> Result<File, String> {
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

/// A socket of `kind` and `proto` in the calling thread's namespace, with socket option `opt`
/// (a timeout: `SO_RCVTIMEO` or `SO_SNDTIMEO`) set to `tv`; `what` names it in errors.
fn socket_with_timeout(
    kind: i32,
    proto: i32,
    opt: i32,
    tv: libc::timeval,
    what: &str,
) -> Result<OwnedFd, String> {
    let fd = unsafe { libc::socket(libc::AF_INET, kind, proto) };
    if fd < 0 {
        return Err(os_err(what));
    }
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            opt,
            &tv as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(os_err(&format!("{what}: its timeout")));
    }
    Ok(fd)
}

/// A raw ICMP socket in the calling thread's namespace, with a 20 ms receive timeout.
pub(super) fn icmp_socket() -> Result<OwnedFd, String> {
    let tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 20_000,
    };
    socket_with_timeout(
        libc::SOCK_RAW,
        libc::IPPROTO_ICMP,
        libc::SO_RCVTIMEO,
        tv,
        "raw ICMP socket",
    )
}

/// A TCP socket (for a connection the engine must refuse), its connect bounded by `secs`
/// seconds (SO_SNDTIMEO): made inside the namespace by [`Netns::enter`].
pub(super) fn tcp_socket(secs: i64) -> Result<OwnedFd, String> {
    let tv = libc::timeval {
        tv_sec: secs,
        tv_usec: 0,
    };
    socket_with_timeout(libc::SOCK_STREAM, 0, libc::SO_SNDTIMEO, tv, "TCP socket")
}

/// Case `case`'s namespace (IPv6 off), its TAP device (the peer's MAC and 10.0.0.2/24, up;
/// owned by the namespace guard) and the kernel's listener on 10.0.0.2:4420, all made inside it.
pub(in crate::suites::tcp) fn site(case: u64) -> Result<(Netns, i32, TcpListener), String> {
    let mut ns = Netns::create(&format!("{NETNS_PREFIX}{}-{case}", std::process::id()))?;
    ns.disable_ipv6()?;
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
