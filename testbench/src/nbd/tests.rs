//! The server against a hand-written client over a Unix socket pair: the handshake's options
//! and errors, every command, the checks that keep bad requests from the device, out-of-order
//! replies, FUA, splitting, device errors, and an idle server that does not advance its
//! device.

use super::proto::*;
use super::*;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::thread::{self, JoinHandle};
use std::time::Duration;

const MIB: u64 = 1 << 20;

/// The server's thread: what `serve_stream` returned, and the device.
type Server<D> = JoinHandle<(Result<Session, String>, D)>;

/// The server in a thread, serving one connection over a socket pair.
fn start(dev: MemDevice) -> (UnixStream, Server<MemDevice>) {
    start_dyn(dev, |d, s| {
        let opts = Options {
            name: "disk".into(),
            description: "a test disk".into(),
            ..Options::default()
        };
        serve_stream(s, d, &opts)
    })
}

fn start_dyn<D: Device + Send + 'static>(
    mut dev: D,
    f: impl FnOnce(&mut D, UnixStream) -> Result<Session, String> + Send + 'static,
) -> (UnixStream, Server<D>) {
    let (client, server) = UnixStream::pair().unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let h = thread::spawn(move || {
        let r = f(&mut dev, server);
        (r, dev)
    });
    (client, h)
}

/// A minimal NBD client: exactly the bytes the specification describes.
struct Client {
    s: UnixStream,
}

/// One option reply.
#[derive(Debug)]
struct OptReply {
    opt: u32,
    kind: u32,
    data: Vec<u8>,
}

/// One simple reply; `data` is read only when the caller says how much (a successful READ).
#[derive(Debug)]
struct SimpleReply {
    error: u32,
    handle: u64,
}

impl Client {
    fn new(s: UnixStream) -> Client {
        Client { s }
    }

    fn read_n(&mut self, n: usize) -> Vec<u8> {
        let mut b = vec![0; n];
        self.s.read_exact(&mut b).expect("read from the server");
        b
    }

    fn u16(&mut self) -> u16 {
        u16::from_be_bytes(self.read_n(2).try_into().unwrap())
    }

    fn u32(&mut self) -> u32 {
        u32::from_be_bytes(self.read_n(4).try_into().unwrap())
    }

    fn u64(&mut self) -> u64 {
        u64::from_be_bytes(self.read_n(8).try_into().unwrap())
    }

    /// Reads the greeting and answers `flags`.
    fn hello(&mut self, flags: u32) -> u16 {
        assert_eq!(self.u64(), NBDMAGIC);
        assert_eq!(self.u64(), IHAVEOPT);
        let hflags = self.u16();
        self.s.write_all(&flags.to_be_bytes()).unwrap();
        hflags
    }

    fn option(&mut self, opt: u32, data: &[u8]) {
        let mut m = IHAVEOPT.to_be_bytes().to_vec();
        m.extend_from_slice(&opt.to_be_bytes());
        m.extend_from_slice(&(data.len() as u32).to_be_bytes());
        m.extend_from_slice(data);
        self.s.write_all(&m).unwrap();
    }

    fn opt_reply(&mut self) -> OptReply {
        assert_eq!(self.u64(), OPT_REPLY_MAGIC, "option reply magic");
        let opt = self.u32();
        let kind = self.u32();
        let len = self.u32() as usize;
        let data = self.read_n(len);
        OptReply { opt, kind, data }
    }

    /// INFO/GO data: name, then the information requests.
    fn go_data(name: &str, infos: &[u16]) -> Vec<u8> {
        let mut d = (name.len() as u32).to_be_bytes().to_vec();
        d.extend_from_slice(name.as_bytes());
        d.extend_from_slice(&(infos.len() as u16).to_be_bytes());
        for i in infos {
            d.extend_from_slice(&i.to_be_bytes());
        }
        d
    }

    /// Replies to INFO/GO up to the final one.
    fn info_replies(&mut self) -> (Vec<OptReply>, OptReply) {
        let mut infos = Vec::new();
        loop {
            let r = self.opt_reply();
            if r.kind == REP_INFO {
                infos.push(r);
            } else {
                return (infos, r);
            }
        }
    }

    /// Handshake with GO on the default export; returns (size, transmission flags).
    fn go(&mut self) -> (u64, u16) {
        self.hello(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES);
        self.option(OPT_GO, &Client::go_data("", &[INFO_BLOCK_SIZE]));
        let (infos, last) = self.info_replies();
        assert_eq!(last.kind, REP_ACK);
        let e = infos.iter().find(|r| r.data[0..2] == [0, 0]).unwrap();
        (
            u64::from_be_bytes(e.data[2..10].try_into().unwrap()),
            u16::from_be_bytes(e.data[10..12].try_into().unwrap()),
        )
    }

    /// The bytes of one request.
    fn encode(flags: u16, cmd: u16, handle: u64, offset: u64, len: u32, data: &[u8]) -> Vec<u8> {
        let mut m = REQUEST_MAGIC.to_be_bytes().to_vec();
        m.extend_from_slice(&flags.to_be_bytes());
        m.extend_from_slice(&cmd.to_be_bytes());
        m.extend_from_slice(&handle.to_be_bytes());
        m.extend_from_slice(&offset.to_be_bytes());
        m.extend_from_slice(&len.to_be_bytes());
        m.extend_from_slice(data);
        m
    }

    fn request(&mut self, flags: u16, cmd: u16, handle: u64, offset: u64, len: u32, data: &[u8]) {
        let m = Client::encode(flags, cmd, handle, offset, len, data);
        self.s.write_all(&m).unwrap();
    }

    fn reply(&mut self) -> SimpleReply {
        assert_eq!(self.u32(), SIMPLE_REPLY_MAGIC, "simple reply magic");
        let error = self.u32();
        let handle = self.u64();
        SimpleReply { error, handle }
    }

    /// One request, one reply (with `len` bytes of data for a successful read).
    fn call(&mut self, flags: u16, cmd: u16, offset: u64, len: u32, data: &[u8]) -> (u32, Vec<u8>) {
        self.request(flags, cmd, 0xabc, offset, len, data);
        let r = self.reply();
        assert_eq!(r.handle, 0xabc);
        let data = if cmd == CMD_READ && r.error == 0 {
            self.read_n(len as usize)
        } else {
            Vec::new()
        };
        (r.error, data)
    }

    fn disc(&mut self) {
        self.request(0, CMD_DISC, 0, 0, 0, &[]);
    }

    /// True when the server closes the connection (end of stream, or a reset) without
    /// sending another byte first.
    fn closed(&mut self) -> bool {
        let mut b = [0u8; 1];
        match self.s.read(&mut b) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
        }
    }
}

fn pattern(seed: u8, n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

#[test]
fn handshake_options_then_every_command() {
    let (s, h) = start(MemDevice::new(4 * MIB, 1));
    let mut c = Client::new(s);
    let hflags = c.hello(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES);
    assert_eq!(hflags, FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES);

    // Structured replies and unknown options are refused, and the handshake goes on.
    c.option(OPT_STRUCTURED_REPLY, &[]);
    let r = c.opt_reply();
    assert_eq!((r.opt, r.kind), (OPT_STRUCTURED_REPLY, REP_ERR_UNSUP));
    c.option(0x4242, b"whatever data");
    let r = c.opt_reply();
    assert_eq!((r.opt, r.kind), (0x4242, REP_ERR_UNSUP));
    c.option(OPT_STARTTLS, &[]);
    assert_eq!(c.opt_reply().kind, REP_ERR_UNSUP);

    // LIST: one export, then ACK; with data it is invalid.
    c.option(OPT_LIST, &[]);
    let r = c.opt_reply();
    assert_eq!(r.kind, REP_SERVER);
    assert_eq!(&r.data[0..4], &4u32.to_be_bytes());
    assert_eq!(&r.data[4..8], b"disk");
    assert_eq!(&r.data[8..], b"a test disk");
    assert_eq!(c.opt_reply().kind, REP_ACK);
    c.option(OPT_LIST, b"x");
    assert_eq!(c.opt_reply().kind, REP_ERR_INVALID);

    // INFO by name, asking for the name and the description too.
    c.option(
        OPT_INFO,
        &Client::go_data("disk", &[INFO_NAME, INFO_DESCRIPTION, INFO_BLOCK_SIZE]),
    );
    let (infos, last) = c.info_replies();
    assert_eq!((last.opt, last.kind), (OPT_INFO, REP_ACK));
    let find = |t: u16| {
        infos
            .iter()
            .find(|r| r.data[0..2] == t.to_be_bytes())
            .unwrap()
    };
    let e = &find(INFO_EXPORT).data;
    assert_eq!(e.len(), 12);
    assert_eq!(u64::from_be_bytes(e[2..10].try_into().unwrap()), 4 * MIB);
    let flags = u16::from_be_bytes(e[10..12].try_into().unwrap());
    let want =
        FLAG_HAS_FLAGS | FLAG_SEND_FLUSH | FLAG_SEND_FUA | FLAG_SEND_TRIM | FLAG_SEND_WRITE_ZEROES;
    assert_eq!(flags, want);
    let b = &find(INFO_BLOCK_SIZE).data;
    assert_eq!(b.len(), 14);
    let word = |i: usize| u32::from_be_bytes(b[i..i + 4].try_into().unwrap());
    assert_eq!((word(2), word(6), word(10)), (512, 4096, 1 << 20));
    assert_eq!(&find(INFO_NAME).data[2..], b"disk");
    assert_eq!(&find(INFO_DESCRIPTION).data[2..], b"a test disk");

    // INFO on an unknown export, and malformed INFO data.
    c.option(OPT_INFO, &Client::go_data("nope", &[]));
    let (infos, last) = c.info_replies();
    assert!(infos.is_empty());
    assert_eq!(last.kind, REP_ERR_UNKNOWN);
    c.option(OPT_INFO, &[0, 0, 0, 9, b'x']);
    assert_eq!(c.opt_reply().kind, REP_ERR_INVALID);

    // GO on the default export, then transmission.
    c.option(OPT_GO, &Client::go_data("", &[]));
    let (infos, last) = c.info_replies();
    assert_eq!(last.kind, REP_ACK);
    assert!(infos.iter().any(|r| r.data[0..2] == [0, 0]));

    let data = pattern(7, 8192);
    assert_eq!(c.call(0, CMD_WRITE, 4096, 8192, &data).0, 0);
    assert_eq!(c.call(0, CMD_READ, 4096, 8192, &[]), (0, data.clone()));
    assert_eq!(c.call(0, CMD_FLUSH, 0, 0, &[]).0, 0);
    assert_eq!(c.call(0, CMD_TRIM, 4096, 4096, &[]).0, 0);
    assert_eq!(
        c.call(CMD_FLAG_NO_HOLE, CMD_WRITE_ZEROES, 8192, 2048, &[])
            .0,
        0
    );
    let (e, back) = c.call(0, CMD_READ, 4096, 8192, &[]);
    assert_eq!(e, 0);
    assert!(back[..6144].iter().all(|&b| b == 0), "trimmed and zeroed");
    assert_eq!(&back[6144..], &data[6144..]);
    // A zero-length read is answered by the server with no data.
    assert_eq!(c.call(0, CMD_READ, 0, 0, &[]), (0, vec![]));
    c.disc();
    assert!(c.closed());
    let (r, dev) = h.join().unwrap();
    let s = r.unwrap();
    assert_eq!(s.end, End::Disconnect);
    assert_eq!(
        (
            s.stats.reads,
            s.stats.writes,
            s.stats.flushes,
            s.stats.trims,
            s.stats.write_zeroes
        ),
        (3, 1, 1, 1, 1)
    );
    assert_eq!(s.stats.device_requests, 6);
    assert_eq!(s.stats.rejected, 0);
    assert_eq!(&dev.contents()[10240..12288], &data[6144..]);
}

#[test]
fn export_name_sends_zeroes_unless_told_not_to() {
    for no_zeroes in [false, true] {
        let (s, h) = start(MemDevice::new(MIB, 2));
        let mut c = Client::new(s);
        let cf = FLAG_C_FIXED_NEWSTYLE | if no_zeroes { FLAG_C_NO_ZEROES } else { 0 };
        c.hello(cf);
        c.option(OPT_EXPORT_NAME, b"disk");
        assert_eq!(c.u64(), MIB);
        let flags = c.u16();
        assert_ne!(flags & FLAG_HAS_FLAGS, 0);
        if !no_zeroes {
            assert_eq!(c.read_n(124), vec![0; 124]);
        }
        // The next bytes are the reply to our first request, not padding.
        assert_eq!(c.call(0, CMD_READ, 0, 512, &[]), (0, vec![0; 512]));
        c.disc();
        assert_eq!(h.join().unwrap().0.unwrap().end, End::Disconnect);
    }
}

#[test]
fn export_name_of_an_unknown_export_ends_the_session() {
    let (s, h) = start(MemDevice::new(MIB, 3));
    let mut c = Client::new(s);
    c.hello(FLAG_C_FIXED_NEWSTYLE);
    c.option(OPT_EXPORT_NAME, b"other");
    assert!(c.closed());
    let end = h.join().unwrap().0.unwrap().end;
    assert!(
        matches!(&end, End::Protocol(m) if m.contains("other")),
        "{end:?}"
    );
}

#[test]
fn abort_is_acknowledged() {
    let (s, h) = start(MemDevice::new(MIB, 4));
    let mut c = Client::new(s);
    c.hello(FLAG_C_FIXED_NEWSTYLE);
    c.option(OPT_ABORT, &[]);
    let r = c.opt_reply();
    assert_eq!((r.opt, r.kind), (OPT_ABORT, REP_ACK));
    assert!(c.closed());
    assert_eq!(h.join().unwrap().0.unwrap().end, End::Abort);
}

#[test]
fn bad_option_magic_drops_the_connection() {
    let (s, h) = start(MemDevice::new(MIB, 5));
    let mut c = Client::new(s);
    c.hello(FLAG_C_FIXED_NEWSTYLE);
    let mut m = 0x1122_3344_5566_7788u64.to_be_bytes().to_vec();
    m.extend_from_slice(&OPT_GO.to_be_bytes());
    m.extend_from_slice(&0u32.to_be_bytes());
    c.s.write_all(&m).unwrap();
    assert!(c.closed());
    let end = h.join().unwrap().0.unwrap().end;
    assert!(
        matches!(&end, End::Protocol(m) if m.contains("IHAVEOPT")),
        "{end:?}"
    );
}

#[test]
fn unknown_client_flags_drop_the_connection() {
    let (s, h) = start(MemDevice::new(MIB, 6));
    let mut c = Client::new(s);
    c.hello(FLAG_C_FIXED_NEWSTYLE | 0x80);
    assert!(c.closed());
    assert!(matches!(h.join().unwrap().0.unwrap().end, End::Protocol(_)));
}

#[test]
fn bad_request_magic_drops_the_connection_after_the_device_finishes() {
    let (s, h) = start(MemDevice::new(MIB, 7).with_delay(20, 40));
    let mut c = Client::new(s);
    c.go();
    // A write, and garbage in the same segment: the write is in the device when the garbage
    // is seen, and its reply is dropped with the connection.
    let mut m = Client::encode(0, CMD_WRITE, 1, 0, 512, &[9; 512]);
    m.extend_from_slice(&0xdead_beefu32.to_be_bytes());
    m.extend_from_slice(&[0; 24]);
    c.s.write_all(&m).unwrap();
    assert!(c.closed());
    let (r, dev) = h.join().unwrap();
    let s = r.unwrap();
    assert!(
        matches!(&s.end, End::Protocol(m) if m.contains("0xdeadbeef")),
        "{:?}",
        s.end
    );
    // The write in flight was finished (its reply dropped) before the connection ended.
    assert_eq!(&dev.contents()[..512], &[9; 512]);
}

#[test]
fn bad_requests_never_reach_the_device() {
    let dev = MemDevice::new(MIB, 8)
        .with_supports(true, false, true)
        .with_block_sizes(512, 4096, 64 << 10);
    let (s, h) = start(dev);
    let mut c = Client::new(s);
    c.go();
    let end = MIB;
    let mut refused = 0;
    // A WRITE carries its `len` bytes, refused or not.
    let mut check = |what: &str, flags, cmd, offset, len, want| {
        let data = if cmd == CMD_WRITE {
            vec![1; len as usize]
        } else {
            vec![]
        };
        let (e, got) = c.call(flags, cmd, offset, len, &data);
        assert_eq!(e, want, "{what}");
        assert!(got.is_empty(), "{what}: an error reply carries no data");
        refused += 1;
    };
    let (r, w, z) = (CMD_READ, CMD_WRITE, CMD_WRITE_ZEROES);
    let (einval, enospc) = (NBD_EINVAL, NBD_ENOSPC);
    check("read past the end", 0, r, end - 512, 1024, einval);
    check("offset overflow", 0, r, u64::MAX - 511, 1024, einval);
    check("write past the end", 0, w, end - 512, 1024, enospc);
    check("write zeroes past the end", 0, z, end, 512, enospc);
    check("unaligned read offset", 0, r, 100, 512, einval);
    check("unaligned write length", 0, w, 0, 1000, einval);
    check("read over the maximum", 0, r, 0, 128 << 10, einval);
    check("trim, not carried", 0, CMD_TRIM, 0, 512, einval);
    check("flush with a length", 0, CMD_FLUSH, 0, 512, einval);
    check("unknown command", 0, 42, 0, 512, einval);
    check("cache, not carried", 0, 5, 0, 512, einval);
    check("unknown flag", 0x40, r, 0, 512, einval);
    check("no-hole on a write", CMD_FLAG_NO_HOLE, w, 0, 512, einval);
    // The refused writes' payloads were consumed: the stream is still in step.
    assert_eq!(c.call(0, CMD_READ, 0, 1024, &[]), (0, vec![0; 1024]));
    c.disc();
    let (r, dev) = h.join().unwrap();
    let s = r.unwrap();
    assert_eq!(s.stats.rejected, refused);
    assert_eq!(
        s.stats.device_requests, 1,
        "only the last read reached the device"
    );
    assert!(dev.contents().iter().all(|&b| b == 0));
}

#[test]
fn fua_needs_flush_support() {
    let dev = MemDevice::new(MIB, 9).with_supports(false, true, true);
    let (s, h) = start(dev);
    let mut c = Client::new(s);
    let (_, flags) = c.go();
    assert_eq!(flags & (FLAG_SEND_FLUSH | FLAG_SEND_FUA), 0);
    assert_eq!(
        c.call(CMD_FLAG_FUA, CMD_WRITE, 0, 512, &[1; 512]).0,
        NBD_EINVAL
    );
    assert_eq!(c.call(0, CMD_FLUSH, 0, 0, &[]).0, NBD_EINVAL);
    c.disc();
    assert_eq!(h.join().unwrap().0.unwrap().stats.device_requests, 0);
}

/// Records what the device is asked, on top of a MemDevice.
struct Spy {
    mem: MemDevice,
    log: Vec<(Op, u64, u32, bool)>,
}

impl Device for Spy {
    fn size(&self) -> u64 {
        self.mem.size()
    }
    fn block_sizes(&self) -> (u32, u32, u32) {
        self.mem.block_sizes()
    }
    fn supports(&self) -> (bool, bool, bool) {
        self.mem.supports()
    }
    fn can_accept(&self) -> bool {
        self.mem.can_accept()
    }
    fn submit(&mut self, r: Request) -> Result<(), String> {
        let op = match &r.op {
            Op::Write(_) => Op::Write(vec![]),
            o => o.clone(),
        };
        self.log.push((op, r.offset, r.len, r.fua));
        self.mem.submit(r)
    }
    fn advance(&mut self) -> Result<Vec<Reply>, String> {
        self.mem.advance()
    }
    fn summary(&self) -> String {
        self.mem.summary()
    }
}

fn start_spy(mem: MemDevice) -> (UnixStream, Server<Spy>) {
    start_dyn(Spy { mem, log: vec![] }, |d, s| {
        serve_stream(s, d, &Options::default())
    })
}

#[test]
fn fua_write_is_followed_by_a_flush_before_the_reply() {
    let (s, h) = start_spy(MemDevice::new(MIB, 10).with_delay(3, 9));
    let mut c = Client::new(s);
    c.go();
    assert_eq!(c.call(CMD_FLAG_FUA, CMD_WRITE, 512, 512, &[3; 512]).0, 0);
    assert_eq!(c.call(CMD_FLAG_FUA, CMD_READ, 0, 512, &[]).0, 0);
    c.disc();
    let (r, spy) = h.join().unwrap();
    assert_eq!(r.unwrap().stats.fua, 1, "FUA on a read is ignored");
    assert_eq!(
        spy.log,
        vec![
            (Op::Write(vec![]), 512, 512, true),
            (Op::Flush, 0, 0, false),
            (Op::Read, 0, 512, false),
        ]
    );
}

#[test]
fn long_trim_and_write_zeroes_are_split_into_one_reply() {
    let mem = MemDevice::new(MIB, 11).with_block_sizes(512, 4096, 64 << 10);
    let (s, h) = start_spy(mem);
    let mut c = Client::new(s);
    c.go();
    let data = pattern(1, 64 << 10);
    for i in 0..4 {
        assert_eq!(c.call(0, CMD_WRITE, i * (64 << 10), 64 << 10, &data).0, 0);
    }
    // 200 KiB: three full pieces and one of 8 KiB.
    assert_eq!(
        c.call(CMD_FLAG_FUA, CMD_WRITE_ZEROES, 4096, 200 << 10, &[])
            .0,
        0
    );
    assert_eq!(c.call(0, CMD_TRIM, 0, 256 << 10, &[]).0, 0);
    c.disc();
    let (r, spy) = h.join().unwrap();
    let s = r.unwrap();
    assert_eq!((s.stats.write_zeroes, s.stats.trims), (1, 1));
    let zeroes: Vec<_> = spy.log.iter().filter(|l| l.0 == Op::WriteZeroes).collect();
    let lens: Vec<u32> = zeroes.iter().map(|l| l.2).collect();
    assert_eq!(lens, vec![64 << 10, 64 << 10, 64 << 10, 8 << 10]);
    assert_eq!(zeroes[1].1, 4096 + (64 << 10));
    assert!(
        zeroes.iter().all(|l| l.3),
        "every piece carries the FUA hint"
    );
    let flushes = spy.log.iter().filter(|l| l.0 == Op::Flush).count();
    assert_eq!(flushes, 1, "one flush after all the pieces");
    assert_eq!(spy.log.iter().filter(|l| l.0 == Op::Trim).count(), 4);
    assert!(spy.mem.contents().iter().all(|&b| b == 0));
}

#[test]
fn replies_come_back_out_of_order_and_match_their_handles() {
    let mem = MemDevice::new(4 * MIB, 12).with_delay(0, 60).with_depth(16);
    let (s, h) = start(mem);
    let mut c = Client::new(s);
    c.go();
    let n = 64u64;
    // Pipelined writes, sent at once so the server sees many together (the device takes 16
    // at a time: back-pressure).
    let mut m = Vec::new();
    for i in 0..n {
        m.extend(Client::encode(
            0,
            CMD_WRITE,
            1000 + i,
            i * 4096,
            4096,
            &pattern(i as u8, 4096),
        ));
    }
    c.s.write_all(&m).unwrap();
    let mut order = Vec::new();
    for _ in 0..n {
        let r = c.reply();
        assert_eq!(r.error, 0);
        order.push(r.handle - 1000);
    }
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "one reply per handle");
    assert_ne!(order, sorted, "the device reorders, so must the replies");
    // Pipelined reads: each reply's data is its own block's.
    let mut m = Vec::new();
    for i in 0..n {
        m.extend(Client::encode(0, CMD_READ, 2000 + i, i * 4096, 4096, &[]));
    }
    c.s.write_all(&m).unwrap();
    let mut order = Vec::new();
    for _ in 0..n {
        let r = c.reply();
        assert_eq!(r.error, 0);
        let i = r.handle - 2000;
        assert_eq!(
            c.read_n(4096),
            pattern(i as u8, 4096),
            "data of handle {}",
            r.handle
        );
        order.push(i);
    }
    assert_ne!(order, (0..n).collect::<Vec<_>>());
    c.disc();
    let s = h.join().unwrap().0.unwrap();
    assert!(s.stats.out_of_order > 0);
    assert_eq!(
        s.stats.max_in_flight, 16,
        "back-pressure holds the device at its depth"
    );
}

#[test]
fn device_errors_reach_the_client_without_data() {
    let mem = MemDevice::new(MIB, 13).with_failing_range(8192, 512);
    let (s, h) = start(mem);
    let mut c = Client::new(s);
    c.go();
    assert_eq!(c.call(0, CMD_READ, 4096, 8192, &[]), (NBD_EIO, vec![]));
    assert_eq!(
        c.call(CMD_FLAG_FUA, CMD_WRITE, 8192, 512, &[1; 512]).0,
        NBD_EIO
    );
    assert_eq!(c.call(0, CMD_READ, 0, 4096, &[]), (0, vec![0; 4096]));
    c.disc();
    let s = h.join().unwrap().0.unwrap();
    assert_eq!(s.stats.device_errors, 2);
    assert_eq!(
        s.stats.device_requests, 3,
        "no flush after a failed FUA write"
    );
}

/// A device that breaks its contract in a chosen way.
struct Broken {
    what: &'static str,
    pending: Vec<Request>,
}

impl Device for Broken {
    fn size(&self) -> u64 {
        MIB
    }
    fn block_sizes(&self) -> (u32, u32, u32) {
        (512, 4096, 65536)
    }
    fn supports(&self) -> (bool, bool, bool) {
        (true, true, true)
    }
    fn can_accept(&self) -> bool {
        true
    }
    fn submit(&mut self, r: Request) -> Result<(), String> {
        self.pending.push(r);
        Ok(())
    }
    fn advance(&mut self) -> Result<Vec<Reply>, String> {
        let Some(r) = self.pending.pop() else {
            return Ok(vec![]);
        };
        match self.what {
            "fail" => Err("the simulation hung".into()),
            "short" => Ok(vec![Reply {
                handle: r.handle,
                error: 0,
                data: vec![0; 10],
            }]),
            _ => Ok(vec![Reply {
                handle: r.handle + 77,
                error: 0,
                data: vec![],
            }]),
        }
    }
    fn summary(&self) -> String {
        "broken".into()
    }
}

#[test]
fn a_device_that_fails_or_breaks_its_contract_ends_the_server() {
    for (what, msg) in [
        ("fail", "the simulation hung"),
        ("short", "answered a read of 512 bytes with 10 bytes"),
        ("stranger", "not outstanding"),
    ] {
        let dev = Broken {
            what,
            pending: vec![],
        };
        let (s, h) = start_dyn(dev, |d, s| serve_stream(s, d, &Options::default()));
        let mut c = Client::new(s);
        c.go();
        c.request(0, CMD_READ, 1, 0, 512, &[]);
        let err = h.join().unwrap().0.unwrap_err();
        assert!(err.contains(msg), "{what}: {err}");
    }
}

#[test]
fn geometry_is_checked_before_serving() {
    let (s, h) = start(MemDevice::new(MIB, 14).with_block_sizes(500, 4096, 1 << 20));
    drop(s);
    let err = h.join().unwrap().0.unwrap_err();
    assert!(
        err.contains("minimum block size 500 must be a power of two"),
        "{err}"
    );
    assert!(check_geometry(MIB + 512, (4096, 4096, 65536)).is_err());
    assert!(check_geometry(MIB, (512, 256, 65536)).is_err());
    assert!(check_geometry(MIB, (512, 4096, 1000)).is_err());
    assert!(check_geometry(MIB, (512, 4096, 65536)).is_ok());
}

#[test]
fn an_idle_server_does_not_advance_its_device() {
    let (s, h) = start(MemDevice::new(MIB, 15).with_delay(5, 5));
    let mut c = Client::new(s);
    c.go();
    assert_eq!(c.call(0, CMD_WRITE, 0, 512, &[1; 512]).0, 0);
    thread::sleep(Duration::from_millis(200));
    assert_eq!(c.call(0, CMD_READ, 0, 512, &[]), (0, vec![1; 512]));
    c.disc();
    let s = h.join().unwrap().0.unwrap();
    // Six advance calls per request (submitted, then due five calls later), none while idle.
    assert_eq!(s.stats.advances, 12);
}

#[test]
fn a_client_that_hangs_up_mid_request_is_a_protocol_error() {
    let (s, h) = start(MemDevice::new(MIB, 16));
    let mut c = Client::new(s);
    c.go();
    let mut m = REQUEST_MAGIC.to_be_bytes().to_vec();
    m.extend_from_slice(&[0; 10]);
    c.s.write_all(&m).unwrap();
    drop(c);
    let end = h.join().unwrap().0.unwrap().end;
    assert!(
        matches!(&end, End::Protocol(m) if m.contains("middle of a request")),
        "{end:?}"
    );
}

#[test]
fn a_client_that_closes_between_requests_has_its_requests_finished() {
    let (s, h) = start(MemDevice::new(MIB, 17).with_delay(30, 30));
    let mut c = Client::new(s);
    c.go();
    c.request(0, CMD_WRITE, 1, 0, 512, &[4; 512]);
    drop(c);
    let (r, dev) = h.join().unwrap();
    assert_eq!(r.unwrap().end, End::Closed);
    assert_eq!(&dev.contents()[..512], &[4; 512]);
}

#[test]
fn serve_takes_connections_one_after_another_over_a_socket_path() {
    let dir = std::env::temp_dir().join(format!("tb-nbd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s");
    let _ = std::fs::remove_file(&path);
    let l = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let listener = Listener::Unix(l, path.clone());
    assert_eq!(
        listener.uri(),
        format!("nbd+unix:///?socket={}", path.display())
    );
    let h = thread::spawn(move || {
        let mut dev = MemDevice::new(MIB, 18);
        let opts = Options {
            connections: Some(2),
            ..Options::default()
        };
        serve(&listener, &mut dev, &opts)
    });
    // The first client writes, the second reads it back: the same device.
    let mut c = Client::new(UnixStream::connect(&path).unwrap());
    c.go();
    assert_eq!(c.call(0, CMD_WRITE, 0, 512, &[8; 512]).0, 0);
    c.disc();
    let mut c = Client::new(UnixStream::connect(&path).unwrap());
    c.go();
    assert_eq!(c.call(0, CMD_READ, 0, 512, &[]), (0, vec![8; 512]));
    drop(c);
    let sessions = h.join().unwrap().unwrap();
    let ends: Vec<_> = sessions.iter().map(|s| s.end.clone()).collect();
    assert_eq!(ends, vec![End::Disconnect, End::Closed]);
    let _ = std::fs::remove_dir_all(&dir);
}
