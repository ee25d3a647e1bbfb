//! The server: listening, the handshake, and the transmission loop (see the module above for
//! the protocol subset and the invariants).

use super::proto::*;
use super::{check_geometry, Device, Op, Reply, Request, MAX_WRITE_BYTES};
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::fmt;
use std::io::{self, ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;

/// How the server presents its one export.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The export's name; the default export `""` is the same export.
    pub name: String,
    /// A line for people (`NBD_INFO_DESCRIPTION`, `NBD_OPT_LIST`).
    pub description: String,
    /// [`serve`] returns after this many connections have ended (`None`: serve forever).
    pub connections: Option<u64>,
    /// Print one line per connection when it starts (the summary at its end is always printed).
    pub verbose: bool,
}

/// A stream the server can talk over: a Unix domain or TCP socket.
pub trait Socket: Read + Write + AsRawFd {
    /// Switches the socket between blocking and non-blocking reads and writes.
    fn set_nonblocking(&self, on: bool) -> io::Result<()>;
}

impl Socket for UnixStream {
    fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        UnixStream::set_nonblocking(self, on)
    }
}

impl Socket for TcpStream {
    fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        TcpStream::set_nonblocking(self, on)
    }
}

/// Where the server listens.
pub enum Listener {
    /// A Unix domain socket at this path.
    Unix(UnixListener, PathBuf),
    /// A TCP socket (the CLI binds 127.0.0.1 only).
    Tcp(TcpListener),
}

impl Listener {
    /// The NBD URI a client (nbdinfo, nbdcopy, fio `--uri`) connects to.
    pub fn uri(&self) -> String {
        match self {
            Listener::Unix(_, path) => format!("nbd+unix:///?socket={}", path.display()),
            Listener::Tcp(l) => match l.local_addr() {
                Ok(a) => format!("nbd://{a}/"),
                Err(_) => "nbd://?/".to_string(),
            },
        }
    }
}

/// Per-connection counts; printed as one line when the connection ends.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Requests by command (DISC not counted).
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub trims: u64,
    pub write_zeroes: u64,
    /// Requests of other (unknown or unsupported) commands.
    pub other: u64,
    /// Requests with `NBD_CMD_FLAG_FUA` that reached the device.
    pub fua: u64,
    /// Bytes the client read and wrote successfully.
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Requests the server answered with an error without reaching the device.
    pub rejected: u64,
    /// Replies with an error from the device.
    pub device_errors: u64,
    /// Requests submitted to the device (splits and FUA flushes included).
    pub device_requests: u64,
    /// Calls of [`Device::advance`].
    pub advances: u64,
    /// Most requests outstanding in the device at once.
    pub max_in_flight: usize,
    /// Replies sent while an earlier request of the client was still unanswered.
    pub out_of_order: u64,
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let kib = |b: u64| b.div_ceil(1024);
        write!(
            f,
            "{} requests ({} reads, {} writes, {} flushes, {} trims, {} write-zeroes, {} other; {} FUA), \
             {} KiB read, {} KiB written, {} rejected by the server, {} device errors, \
             {} device requests, at most {} in flight, {} replies out of order, {} advance calls",
            self.reads + self.writes + self.flushes + self.trims + self.write_zeroes + self.other,
            self.reads,
            self.writes,
            self.flushes,
            self.trims,
            self.write_zeroes,
            self.other,
            self.fua,
            kib(self.bytes_read),
            kib(self.bytes_written),
            self.rejected,
            self.device_errors,
            self.device_requests,
            self.max_in_flight,
            self.out_of_order,
            self.advances
        )
    }
}

/// How a connection ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// The client sent `NBD_CMD_DISC` (the clean end of transmission).
    Disconnect,
    /// The client sent `NBD_OPT_ABORT` during the handshake.
    Abort,
    /// The client closed the socket between messages (a hard disconnect).
    Closed,
    /// The client broke the protocol, or went away in the middle of a message: what was wrong.
    Protocol(String),
}

/// One finished connection.
#[derive(Clone, Debug)]
pub struct Session {
    pub end: End,
    pub stats: Stats,
}

/// Accepts connections one after another and serves each until it ends, printing a summary
/// line per connection (ours, then the device's). Returns the sessions once
/// `opts.connections` have ended (never, without a limit); a protocol error of a client ends
/// that connection only. `Err` is fatal: the device failed (or broke its contract), or
/// accepting failed.
pub fn serve(
    listener: &Listener,
    device: &mut dyn Device,
    opts: &Options,
) -> Result<Vec<Session>, String> {
    check_geometry(device.size(), device.block_sizes())?;
    let mut sessions = Vec::new();
    loop {
        let session = match listener {
            Listener::Unix(l, path) => {
                let (s, _) = l
                    .accept()
                    .map_err(|e| format!("accept on {}: {e}", path.display()))?;
                serve_stream(s, device, opts)?
            }
            Listener::Tcp(l) => {
                let (s, _) = l.accept().map_err(|e| format!("accept on TCP: {e}"))?;
                // Replies are small and latency-bound: do not wait to coalesce them.
                let _ = s.set_nodelay(true);
                serve_stream(s, device, opts)?
            }
        };
        if let Some(n) = opts.connections {
            sessions.push(session);
            if sessions.len() as u64 >= n {
                return Ok(sessions);
            }
        }
    }
}

/// Serves one connection over `sock` (already connected) until it ends; prints the summary
/// line. `Err` is fatal (the device failed or broke its contract).
pub fn serve_stream<S: Socket>(
    sock: S,
    device: &mut dyn Device,
    opts: &Options,
) -> Result<Session, String> {
    let export = Export::of(device, opts)?;
    if opts.verbose {
        println!("nbd: connection opened");
    }
    let mut conn = Conn::new(sock, device, &export);
    let end = match conn.handshake() {
        Ok(Handshake::Transmit) => conn.transmit()?,
        Ok(Handshake::Ended(end)) => end,
        Err(Stop::Protocol(m)) => End::Protocol(m),
        Err(Stop::Fatal(m)) => return Err(m),
    };
    let stats = conn.stats.clone();
    let how = match &end {
        End::Disconnect => "client disconnected".to_string(),
        End::Abort => "client aborted the handshake".to_string(),
        End::Closed => "client closed the connection".to_string(),
        End::Protocol(m) => format!("protocol error, connection dropped: {m}"),
    };
    println!("nbd: {how}: {stats}");
    println!("nbd: device: {}", device.summary());
    Ok(Session { end, stats })
}

/// What the server tells clients about its export.
struct Export {
    name: String,
    description: String,
    size: u64,
    flags: u16,
    min: u32,
    pref: u32,
    max: u32,
    flush: bool,
    trim: bool,
    zeroes: bool,
}

impl Export {
    fn of(device: &dyn Device, opts: &Options) -> Result<Export, String> {
        let size = device.size();
        let (min, pref, max) = device.block_sizes();
        check_geometry(size, (min, pref, max))?;
        let (flush, trim, zeroes) = device.supports();
        let mut flags = FLAG_HAS_FLAGS;
        if flush {
            flags |= FLAG_SEND_FLUSH | FLAG_SEND_FUA;
        }
        if trim {
            flags |= FLAG_SEND_TRIM;
        }
        if zeroes {
            flags |= FLAG_SEND_WRITE_ZEROES;
        }
        Ok(Export {
            name: opts.name.clone(),
            description: opts.description.clone(),
            size,
            flags,
            min,
            pref,
            max,
            flush,
            trim,
            zeroes,
        })
    }

    fn matches(&self, name: &[u8]) -> bool {
        name.is_empty() || name == self.name.as_bytes()
    }
}

/// Why a connection stops early.
enum Stop {
    /// The client broke the protocol (or left mid-message): drop the connection.
    Protocol(String),
    /// The device failed: the server ends.
    Fatal(String),
}

enum Handshake {
    Transmit,
    Ended(End),
}

/// A client request being carried by the device (possibly as several device requests).
struct Inflight {
    handle: u64,
    cmd: u16,
    len: u32,
    /// Device requests of it not yet answered.
    parts: u32,
    /// The first error of its parts.
    error: u32,
    /// Send the device a Flush once the parts have finished (FUA).
    flush_after: bool,
    data: Vec<u8>,
}

struct Conn<'a, S: Socket> {
    sock: S,
    dev: &'a mut dyn Device,
    export: &'a Export,
    no_zeroes: bool,
    /// Received bytes; `inbuf[in_at..]` not yet parsed.
    inbuf: Vec<u8>,
    in_at: usize,
    /// Reply bytes; `outbuf[out_at..]` not yet sent.
    outbuf: Vec<u8>,
    out_at: usize,
    /// Device requests waiting for the device to accept them.
    queue: VecDeque<Request>,
    /// Client requests in the device, by sequence number.
    inflight: HashMap<u64, Inflight>,
    /// Device handle -> the client request's sequence number.
    tags: HashMap<u64, u64>,
    next_tag: u64,
    next_seq: u64,
    /// Sequence numbers of the client requests not yet answered.
    open: BTreeSet<u64>,
    /// No more requests will come: DISC seen, the client went away, or a protocol error.
    done_reading: bool,
    /// Why the connection ends (the first reason seen).
    end: Option<End>,
    /// Replies are dropped: the client is gone, or broke the protocol.
    discard: bool,
    /// What one read takes from the socket.
    rbuf: Vec<u8>,
    stats: Stats,
}

impl<'a, S: Socket> Conn<'a, S> {
    fn new(sock: S, dev: &'a mut dyn Device, export: &'a Export) -> Self {
        Conn {
            sock,
            dev,
            export,
            no_zeroes: false,
            inbuf: Vec::new(),
            in_at: 0,
            outbuf: Vec::new(),
            out_at: 0,
            queue: VecDeque::new(),
            inflight: HashMap::new(),
            tags: HashMap::new(),
            next_tag: 1,
            next_seq: 0,
            open: BTreeSet::new(),
            done_reading: false,
            end: None,
            discard: false,
            rbuf: vec![0; 256 << 10],
            stats: Stats::default(),
        }
    }

    // ---- handshake (blocking reads and writes) ----

    /// Reads exactly `buf.len()` bytes; `Ok(false)` when the client closed before the first
    /// byte (a clean end between messages).
    fn read_msg(&mut self, buf: &mut [u8], what: &str) -> Result<bool, Stop> {
        let mut got = 0;
        while got < buf.len() {
            match self.sock.read(&mut buf[got..]) {
                Ok(0) if got == 0 => return Ok(false),
                Ok(0) => {
                    return Err(Stop::Protocol(format!(
                        "the client closed the connection in the middle of {what}"
                    )))
                }
                Ok(n) => got += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(Stop::Protocol(format!("reading {what}: {e}"))),
            }
        }
        Ok(true)
    }

    fn send(&mut self, bytes: &[u8]) -> Result<(), Stop> {
        self.sock
            .write_all(bytes)
            .map_err(|e| Stop::Protocol(format!("writing to the client: {e}")))
    }

    fn opt_reply(&mut self, opt: u32, kind: u32, data: &[u8]) -> Result<(), Stop> {
        let mut m = Vec::with_capacity(20 + data.len());
        m.extend_from_slice(&OPT_REPLY_MAGIC.to_be_bytes());
        m.extend_from_slice(&opt.to_be_bytes());
        m.extend_from_slice(&kind.to_be_bytes());
        m.extend_from_slice(&(data.len() as u32).to_be_bytes());
        m.extend_from_slice(data);
        self.send(&m)
    }

    fn handshake(&mut self) -> Result<Handshake, Stop> {
        let mut hello = Vec::with_capacity(18);
        hello.extend_from_slice(&NBDMAGIC.to_be_bytes());
        hello.extend_from_slice(&IHAVEOPT.to_be_bytes());
        hello.extend_from_slice(&(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES).to_be_bytes());
        self.send(&hello)?;
        let mut cf = [0u8; 4];
        if !self.read_msg(&mut cf, "the client flags")? {
            return Ok(Handshake::Ended(End::Closed));
        }
        let client_flags = u32::from_be_bytes(cf);
        if client_flags & !(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES) != 0 {
            return Err(Stop::Protocol(format!(
                "client flags {client_flags:#x} set bits the server did not offer (only fixed newstyle 0x1 and no-zeroes 0x2)"
            )));
        }
        self.no_zeroes = client_flags & FLAG_C_NO_ZEROES != 0;
        loop {
            let mut h = [0u8; 16];
            if !self.read_msg(&mut h, "an option header")? {
                return Ok(Handshake::Ended(End::Closed));
            }
            let magic = u64::from_be_bytes(h[0..8].try_into().unwrap());
            let opt = u32::from_be_bytes(h[8..12].try_into().unwrap());
            let len = u32::from_be_bytes(h[12..16].try_into().unwrap());
            if magic != IHAVEOPT {
                return Err(Stop::Protocol(format!(
                    "option magic {magic:#018x}, expected IHAVEOPT {IHAVEOPT:#018x} (not an NBD newstyle client?)"
                )));
            }
            // Export names are at most 4096 bytes; nothing this server understands is longer.
            if len > 16384 {
                return Err(Stop::Protocol(format!(
                    "option {opt} carries {len} bytes of data (at most 16384 accepted)"
                )));
            }
            let mut data = vec![0u8; len as usize];
            if !self.read_msg(&mut data, "an option's data")? && len > 0 {
                return Err(Stop::Protocol(
                    "the client closed the connection in the middle of an option".into(),
                ));
            }
            match opt {
                OPT_EXPORT_NAME => {
                    if !self.export.matches(&data) {
                        // No way to answer an error to EXPORT_NAME: the session ends.
                        return Err(Stop::Protocol(format!(
                            "NBD_OPT_EXPORT_NAME asked for export {:?}; this server has {:?} (or \"\")",
                            String::from_utf8_lossy(&data),
                            self.export.name
                        )));
                    }
                    let mut m = Vec::with_capacity(134);
                    m.extend_from_slice(&self.export.size.to_be_bytes());
                    m.extend_from_slice(&self.export.flags.to_be_bytes());
                    if !self.no_zeroes {
                        m.extend_from_slice(&[0u8; 124]);
                    }
                    self.send(&m)?;
                    return Ok(Handshake::Transmit);
                }
                OPT_ABORT => {
                    // The client may already have closed; the ACK is a courtesy.
                    let _ = self.opt_reply(opt, REP_ACK, &[]);
                    return Ok(Handshake::Ended(End::Abort));
                }
                OPT_LIST => {
                    if !data.is_empty() {
                        self.opt_reply(opt, REP_ERR_INVALID, b"NBD_OPT_LIST takes no data")?;
                        continue;
                    }
                    let name = self.export.name.as_bytes();
                    let mut d = Vec::new();
                    d.extend_from_slice(&(name.len() as u32).to_be_bytes());
                    d.extend_from_slice(name);
                    d.extend_from_slice(self.export.description.as_bytes());
                    self.opt_reply(opt, REP_SERVER, &d)?;
                    self.opt_reply(opt, REP_ACK, &[])?;
                }
                OPT_INFO | OPT_GO => {
                    if self.info(opt, &data)? && opt == OPT_GO {
                        return Ok(Handshake::Transmit);
                    }
                }
                OPT_STRUCTURED_REPLY => self.opt_reply(
                    opt,
                    REP_ERR_UNSUP,
                    b"structured replies are not supported: this server sends simple replies only",
                )?,
                _ => {
                    let msg = format!("option {opt} is not supported by this server");
                    self.opt_reply(opt, REP_ERR_UNSUP, msg.as_bytes())?
                }
            }
        }
    }

    /// Answers `NBD_OPT_INFO`/`NBD_OPT_GO`; true when it ended with `NBD_REP_ACK`.
    fn info(&mut self, opt: u32, data: &[u8]) -> Result<bool, Stop> {
        // 32-bit name length, name, 16-bit count, count x 16-bit information requests.
        let parsed = (|| {
            let nlen = u32::from_be_bytes(data.get(0..4)?.try_into().ok()?) as usize;
            let name = data.get(4..4 + nlen)?;
            let at = 4 + nlen;
            let n = u16::from_be_bytes(data.get(at..at + 2)?.try_into().ok()?) as usize;
            let reqs = data.get(at + 2..)?;
            if reqs.len() != 2 * n {
                return None;
            }
            let reqs: Vec<u16> = reqs
                .chunks(2)
                .map(|c| u16::from_be_bytes([c[0], c[1]]))
                .collect();
            Some((name.to_vec(), reqs))
        })();
        let Some((name, reqs)) = parsed else {
            self.opt_reply(
                opt,
                REP_ERR_INVALID,
                b"malformed NBD_OPT_INFO/NBD_OPT_GO data (name length, name, count, requests)",
            )?;
            return Ok(false);
        };
        if !self.export.matches(&name) {
            let msg = format!(
                "no export {:?}: this server has {:?} (or \"\", the default)",
                String::from_utf8_lossy(&name),
                self.export.name
            );
            self.opt_reply(opt, REP_ERR_UNKNOWN, msg.as_bytes())?;
            return Ok(false);
        }
        let mut export = Vec::with_capacity(12);
        export.extend_from_slice(&INFO_EXPORT.to_be_bytes());
        export.extend_from_slice(&self.export.size.to_be_bytes());
        export.extend_from_slice(&self.export.flags.to_be_bytes());
        self.opt_reply(opt, REP_INFO, &export)?;
        // Sent whether asked or not: the server enforces a minimum block size, and the
        // specification lets it send unrequested information.
        let mut bs = Vec::with_capacity(14);
        bs.extend_from_slice(&INFO_BLOCK_SIZE.to_be_bytes());
        for v in [self.export.min, self.export.pref, self.export.max] {
            bs.extend_from_slice(&v.to_be_bytes());
        }
        self.opt_reply(opt, REP_INFO, &bs)?;
        for r in reqs {
            let text = match r {
                INFO_NAME => self.export.name.clone(),
                INFO_DESCRIPTION => self.export.description.clone(),
                _ => continue,
            };
            let mut d = r.to_be_bytes().to_vec();
            d.extend_from_slice(text.as_bytes());
            self.opt_reply(opt, REP_INFO, &d)?;
        }
        self.opt_reply(opt, REP_ACK, &[])?;
        Ok(true)
    }

    // ---- transmission ----

    fn outstanding(&self) -> bool {
        !self.tags.is_empty() || !self.queue.is_empty()
    }

    fn out_pending(&self) -> bool {
        self.out_at < self.outbuf.len()
    }

    /// Sleeps until the socket is readable (`read`) or writable (`write`), or hung up.
    fn wait(&self, read: bool, write: bool) -> Result<(), Stop> {
        let mut events = 0;
        if read {
            events |= libc::POLLIN;
        }
        if write {
            events |= libc::POLLOUT;
        }
        let mut p = libc::pollfd {
            fd: self.sock.as_raw_fd(),
            events,
            revents: 0,
        };
        loop {
            // SAFETY: one valid pollfd, for the duration of the call.
            if unsafe { libc::poll(&mut p, 1, -1) } >= 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.kind() != ErrorKind::Interrupted {
                return Err(Stop::Protocol(format!("waiting for the client: {e}")));
            }
        }
    }

    /// Runs transmission until the client disconnects; every device request is finished
    /// before it returns.
    fn transmit(&mut self) -> Result<End, String> {
        if let Err(e) = self.sock.set_nonblocking(true) {
            return Ok(End::Protocol(format!(
                "making the socket non-blocking: {e}"
            )));
        }
        loop {
            match self.step() {
                Ok(true) => {}
                Ok(false) => break,
                Err(Stop::Fatal(m)) => return Err(m),
                Err(Stop::Protocol(m)) => {
                    // Hard disconnect: nothing more is read or answered, but the device
                    // finishes what it has.
                    self.stop_reading(End::Protocol(m));
                    self.discard = true;
                }
            }
        }
        Ok(self.end.take().unwrap_or(End::Closed))
    }

    /// No more requests will be taken; the first reason given is the one reported.
    fn stop_reading(&mut self, why: End) {
        self.done_reading = true;
        if self.end.is_none() {
            self.end = Some(why);
        }
    }

    /// The client is gone: nobody reads the replies any more.
    fn gone(&mut self) {
        self.stop_reading(End::Closed);
        self.discard = true;
        self.outbuf.clear();
        self.out_at = 0;
    }

    /// One round: parse and submit, advance the device, send replies, read more. False when
    /// the connection is over (no more requests coming, nothing outstanding, replies sent).
    fn step(&mut self) -> Result<bool, Stop> {
        if !self.done_reading && self.parse()? {
            self.stop_reading(End::Disconnect);
        }
        self.submit()?;
        if self.outstanding() {
            let replies = self.dev.advance().map_err(Stop::Fatal)?;
            self.stats.advances += 1;
            for r in replies {
                self.complete(r)?;
            }
            self.submit()?;
        }
        if self.out_pending() {
            self.write_out();
        }
        if self.done_reading && !self.outstanding() && !self.out_pending() {
            return Ok(false);
        }
        let want_read = !self.done_reading && self.queue.is_empty() && !self.has_request();
        if !self.outstanding() {
            if !want_read && !self.out_pending() {
                // A whole request is buffered: the next round takes it.
                return Ok(true);
            }
            // The device has nothing to do: sleep until the client sends or takes bytes.
            self.wait(want_read, self.out_pending())?;
        }
        if want_read && !self.read_in()? {
            if self.in_at < self.inbuf.len() {
                return Err(Stop::Protocol(
                    "the client closed the connection in the middle of a request".into(),
                ));
            }
            // A client that only shut its sending side still gets its replies.
            self.stop_reading(End::Closed);
        }
        Ok(true)
    }

    /// Sends what the socket takes now; a client that went away ends the connection (and
    /// drops the replies).
    fn write_out(&mut self) {
        match self.sock.write(&self.outbuf[self.out_at..]) {
            Ok(0) => self.gone(),
            Ok(n) => {
                self.out_at += n;
                if self.out_at == self.outbuf.len() {
                    self.outbuf.clear();
                    self.out_at = 0;
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {}
            Err(_) => self.gone(),
        }
    }

    /// Reads what the socket has now (it is non-blocking); false at end of stream.
    fn read_in(&mut self) -> Result<bool, Stop> {
        if self.in_at > 0 {
            self.inbuf.drain(..self.in_at);
            self.in_at = 0;
        }
        match self.sock.read(&mut self.rbuf) {
            Ok(0) => Ok(false),
            Ok(n) => {
                self.inbuf.extend_from_slice(&self.rbuf[..n]);
                Ok(true)
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {
                Ok(true)
            }
            Err(e) if e.kind() == ErrorKind::ConnectionReset => Ok(false),
            Err(e) => Err(Stop::Protocol(format!("reading a request: {e}"))),
        }
    }

    /// Bytes the next request needs in all (header, and a WRITE's payload).
    fn needed(&self) -> usize {
        let b = &self.inbuf[self.in_at..];
        if b.len() < REQUEST_BYTES {
            return REQUEST_BYTES;
        }
        let cmd = u16::from_be_bytes([b[6], b[7]]);
        let len = u32::from_be_bytes(b[24..28].try_into().unwrap());
        if cmd == CMD_WRITE {
            REQUEST_BYTES + len.min(MAX_WRITE_BYTES) as usize
        } else {
            REQUEST_BYTES
        }
    }

    fn has_request(&self) -> bool {
        self.inbuf.len() - self.in_at >= self.needed()
    }

    /// Takes complete requests from the input while no device request waits for the device
    /// (back-pressure). True when the client sent DISC.
    fn parse(&mut self) -> Result<bool, Stop> {
        while self.queue.is_empty() && self.inbuf.len() - self.in_at >= REQUEST_BYTES {
            let b = &self.inbuf[self.in_at..];
            let magic = u32::from_be_bytes(b[0..4].try_into().unwrap());
            if magic != REQUEST_MAGIC {
                return Err(Stop::Protocol(format!(
                    "request magic {magic:#010x}, expected {REQUEST_MAGIC:#010x}"
                )));
            }
            let flags = u16::from_be_bytes([b[4], b[5]]);
            let cmd = u16::from_be_bytes([b[6], b[7]]);
            let handle = u64::from_be_bytes(b[8..16].try_into().unwrap());
            let offset = u64::from_be_bytes(b[16..24].try_into().unwrap());
            let len = u32::from_be_bytes(b[24..28].try_into().unwrap());
            if cmd == CMD_WRITE && len > MAX_WRITE_BYTES {
                return Err(Stop::Protocol(format!(
                    "a WRITE of {len} bytes (the server reads at most {MAX_WRITE_BYTES}; the export's maximum block size is {})",
                    self.export.max
                )));
            }
            if !self.has_request() {
                break;
            }
            let payload = if cmd == CMD_WRITE {
                b[REQUEST_BYTES..REQUEST_BYTES + len as usize].to_vec()
            } else {
                Vec::new()
            };
            self.in_at += REQUEST_BYTES + payload.len();
            if cmd == CMD_DISC {
                return Ok(true);
            }
            self.request(flags, cmd, handle, offset, len, payload);
        }
        Ok(false)
    }

    /// Checks one request; answers it at once, or queues it for the device.
    fn request(&mut self, flags: u16, cmd: u16, handle: u64, offset: u64, len: u32, data: Vec<u8>) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.open.insert(seq);
        let e = self.export;
        match cmd {
            CMD_READ => self.stats.reads += 1,
            CMD_WRITE => self.stats.writes += 1,
            CMD_FLUSH => self.stats.flushes += 1,
            CMD_TRIM => self.stats.trims += 1,
            CMD_WRITE_ZEROES => self.stats.write_zeroes += 1,
            _ => self.stats.other += 1,
        }
        let fua = flags & CMD_FLAG_FUA != 0;
        let allowed = match cmd {
            CMD_WRITE_ZEROES => CMD_FLAG_FUA | CMD_FLAG_NO_HOLE,
            _ => CMD_FLAG_FUA,
        };
        let aligned = offset.is_multiple_of(u64::from(e.min)) && len.is_multiple_of(e.min);
        let in_range = offset
            .checked_add(u64::from(len))
            .is_some_and(|end| end <= e.size);
        let check = || -> Result<(), u32> {
            let carried = match cmd {
                CMD_READ | CMD_WRITE => true,
                CMD_FLUSH => e.flush,
                CMD_TRIM => e.trim,
                CMD_WRITE_ZEROES => e.zeroes,
                _ => false,
            };
            if !carried || flags & !allowed != 0 || (fua && !e.flush) {
                return Err(NBD_EINVAL);
            }
            if cmd == CMD_FLUSH {
                return if offset == 0 && len == 0 {
                    Ok(())
                } else {
                    Err(NBD_EINVAL)
                };
            }
            if !in_range {
                let writes = cmd == CMD_WRITE || cmd == CMD_WRITE_ZEROES;
                return Err(if writes { NBD_ENOSPC } else { NBD_EINVAL });
            }
            if !aligned || (matches!(cmd, CMD_READ | CMD_WRITE) && len > e.max) {
                return Err(NBD_EINVAL);
            }
            Ok(())
        };
        if let Err(error) = check() {
            self.stats.rejected += 1;
            self.reply(seq, handle, error, &[]);
            return;
        }
        if len == 0 && cmd != CMD_FLUSH {
            self.reply(seq, handle, 0, &[]);
            return;
        }
        let writes = matches!(cmd, CMD_WRITE | CMD_TRIM | CMD_WRITE_ZEROES);
        let flush_after = fua && writes;
        if flush_after {
            self.stats.fua += 1;
        }
        let mut inf = Inflight {
            handle,
            cmd,
            len,
            parts: 0,
            error: 0,
            flush_after,
            data: Vec::new(),
        };
        let mut push = |this: &mut Self, op: Op, offset: u64, len: u32| {
            let tag = this.next_tag;
            this.next_tag += 1;
            this.tags.insert(tag, seq);
            inf.parts += 1;
            this.queue.push_back(Request {
                handle: tag,
                op,
                offset,
                len,
                fua: flush_after,
            });
        };
        match cmd {
            CMD_READ => push(self, Op::Read, offset, len),
            CMD_WRITE => push(self, Op::Write(data), offset, len),
            CMD_FLUSH => push(self, Op::Flush, 0, 0),
            _ => {
                // TRIM and WRITE_ZEROES: in pieces of at most the maximum block size.
                let step = e.max / e.min * e.min;
                let mut at = 0u32;
                while at < len {
                    let n = step.min(len - at);
                    let op = if cmd == CMD_TRIM {
                        Op::Trim
                    } else {
                        Op::WriteZeroes
                    };
                    push(self, op, offset + u64::from(at), n);
                    at += n;
                }
            }
        }
        self.inflight.insert(seq, inf);
    }

    /// Submits queued device requests while the device takes them.
    fn submit(&mut self) -> Result<(), Stop> {
        while !self.queue.is_empty() && self.dev.can_accept() {
            let r = self.queue.pop_front().unwrap();
            let what = format!("{:?} at {} len {}", OpName(&r.op), r.offset, r.len);
            self.dev
                .submit(r)
                .map_err(|m| Stop::Fatal(format!("the device refused {what}: {m}")))?;
            self.stats.device_requests += 1;
        }
        let in_flight = self.tags.len() - self.queue.len();
        self.stats.max_in_flight = self.stats.max_in_flight.max(in_flight);
        Ok(())
    }

    /// Takes one device reply: a finished client request gets its reply (or, for FUA, its
    /// flush first).
    fn complete(&mut self, r: Reply) -> Result<(), Stop> {
        let Some(seq) = self.tags.remove(&r.handle) else {
            return Err(Stop::Fatal(format!(
                "the device replied to handle {} that is not outstanding (a duplicate or made-up completion)",
                r.handle
            )));
        };
        let inf = self
            .inflight
            .get_mut(&seq)
            .expect("every tag has its request");
        if r.error == 0 && inf.cmd == CMD_READ {
            if r.data.len() != inf.len as usize {
                return Err(Stop::Fatal(format!(
                    "the device answered a read of {} bytes with {} bytes",
                    inf.len,
                    r.data.len()
                )));
            }
            inf.data = r.data;
        }
        if r.error != 0 {
            self.stats.device_errors += 1;
            if inf.error == 0 {
                inf.error = r.error;
            }
        }
        inf.parts -= 1;
        if inf.parts > 0 {
            return Ok(());
        }
        if inf.flush_after && inf.error == 0 {
            inf.flush_after = false;
            inf.parts = 1;
            let tag = self.next_tag;
            self.next_tag += 1;
            self.tags.insert(tag, seq);
            self.queue.push_back(Request {
                handle: tag,
                op: Op::Flush,
                offset: 0,
                len: 0,
                fua: false,
            });
            return Ok(());
        }
        let inf = self.inflight.remove(&seq).unwrap();
        if inf.error == 0 {
            match inf.cmd {
                CMD_READ => self.stats.bytes_read += u64::from(inf.len),
                CMD_WRITE => self.stats.bytes_written += u64::from(inf.len),
                _ => {}
            }
        }
        let data = if inf.error == 0 { &inf.data[..] } else { &[] };
        self.reply(seq, inf.handle, inf.error, data);
        Ok(())
    }

    /// Queues a simple reply for sending.
    fn reply(&mut self, seq: u64, handle: u64, error: u32, data: &[u8]) {
        if self.open.first().is_some_and(|&first| first < seq) {
            self.stats.out_of_order += 1;
        }
        self.open.remove(&seq);
        if self.discard {
            return;
        }
        self.outbuf
            .extend_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
        self.outbuf.extend_from_slice(&error.to_be_bytes());
        self.outbuf.extend_from_slice(&handle.to_be_bytes());
        self.outbuf.extend_from_slice(data);
    }
}

/// An [`Op`]'s name without its payload, for messages.
struct OpName<'a>(&'a Op);

impl fmt::Debug for OpName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self.0 {
            Op::Read => "Read",
            Op::Write(_) => "Write",
            Op::Flush => "Flush",
            Op::Trim => "Trim",
            Op::WriteZeroes => "WriteZeroes",
        })
    }
}
