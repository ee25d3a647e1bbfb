//! The commands that move data (`write`, `read`, `io`) and `ping`, as the binary runs them:
//! their arguments checked, their work split into commands the chip takes, their results
//! printed. The NVMe work is [`crate::driver`]'s.

use crate::driver::{Driver, IoDone};
use crate::nvme::{compare, opc, pattern, Mismatch, BLOCK};
use crate::ping::{percentile, Pinger};
use crate::{Bridge, Error, Map};
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// `ADDR` or `ADDR<sep>REST`: the IPv4 address (named by `flag` in the error) and the rest.
fn ipv4_and<'a>(flag: &str, s: &'a str, sep: char) -> Result<(Ipv4Addr, Option<&'a str>), Error> {
    let (a, rest) = match s.split_once(sep) {
        Some((a, r)) => (a, Some(r)),
        None => (s, None),
    };
    let ip = a
        .parse()
        .map_err(|_| Error::Board(format!("{flag} {s}: `{a}` is not an IPv4 address")))?;
    Ok((ip, rest))
}

/// `A` or `A/N` (prefix length, default 24).
pub fn parse_ip_prefix(s: &str) -> Result<(Ipv4Addr, u8), Error> {
    let (ip, p) = ipv4_and("--local-ip", s, '/')?;
    let prefix = match p {
        None => 24,
        Some(p) => p
            .parse::<u8>()
            .ok()
            .filter(|&n| (1..=32).contains(&n))
            .ok_or_else(|| Error::Board(format!("--local-ip {s}: prefix `{p}` is not 1 to 32")))?,
    };
    Ok((ip, prefix))
}

/// `IP` or `IP:PORT` (default 4420, NVMe/TCP's).
pub fn parse_target(s: &str) -> Result<(Ipv4Addr, u16), Error> {
    let (ip, p) = ipv4_and("--target", s, ':')?;
    let port = match p {
        None => 4420,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|&n| n != 0)
            .ok_or_else(|| Error::Board(format!("--target {s}: `{p}` is not a TCP port")))?,
    };
    Ok((ip, port))
}

/// `aa:bb:cc:dd:ee:ff` (or with dashes); a multicast address is refused.
pub fn parse_mac(s: &str) -> Result<[u8; 6], Error> {
    let parts: Vec<&str> = s.split([':', '-']).collect();
    let bad = || Error::Board(format!("--mac {s}: six hex bytes, aa:bb:cc:dd:ee:ff"));
    if parts.len() != 6 {
        return Err(bad());
    }
    let mut m = [0u8; 6];
    for (i, p) in parts.iter().enumerate() {
        m[i] = u8::from_str_radix(p, 16).map_err(|_| bad())?;
    }
    if m[0] & 1 != 0 {
        return Err(Error::Board(format!(
            "--mac {s}: a multicast address (first byte odd) cannot be the chip's"
        )));
    }
    Ok(m)
}

/// Splits `count` blocks from `lba` into commands of at most `max` blocks: (LBA, blocks).
pub fn chunks(lba: u64, count: u32, max: u32) -> Vec<(u64, u32)> {
    let mut out = Vec::new();
    let mut done = 0u32;
    while done < count {
        let n = (count - done).min(max);
        out.push((lba + u64::from(done), n));
        done += n;
    }
    out
}

fn check_range(lba: u64, count: u32, blocks: u64) -> Result<(), Error> {
    if count == 0 {
        return Err(Error::Board("COUNT 0: at least one block".into()));
    }
    if lba.checked_add(u64::from(count)).is_none_or(|e| e > blocks) {
        return Err(Error::Board(format!(
            "LBA {lba} + {count} blocks is past namespace 1's {blocks} blocks (setup --blocks)"
        )));
    }
    Ok(())
}

fn fmt_ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// One command's line: its blocks, CID, status and latency.
fn say_done(verb: &str, lba: u64, n: u32, done: &IoDone) {
    println!(
        "{verb}: LBA {lba} + {n} blocks, CID {}: {} (doorbell to CQE {})",
        done.cqe.cid,
        done.cqe.status,
        fmt_ms(done.latency)
    );
}

/// `write LBA COUNT --pattern SEED`.
pub fn write(d: &mut Driver, lba: u64, count: u32, seed: u32) -> Result<(), Error> {
    let mut st = d.load()?;
    check_range(lba, count, st.blocks)?;
    let t0 = Instant::now();
    let parts = chunks(lba, count, st.max_blocks);
    for &(l, n) in &parts {
        let done = d.rw(&mut st, opc::WRITE, l, n, Some(&pattern(seed, l, n)))?;
        say_done("write", l, n, &done);
    }
    println!(
        "write: {count} blocks ({} bytes) at LBA {lba}, pattern {seed}, in {} command(s), {:.2} s",
        u64::from(count) * u64::from(BLOCK),
        parts.len(),
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Mismatches as lines, at most `max` of them and a count of the rest.
pub fn describe_mismatches(base_lba: u64, m: &[Mismatch], max: usize) -> Vec<String> {
    let mut out: Vec<String> = m
        .iter()
        .take(max)
        .map(|x| {
            format!(
                "  offset 0x{:x} (LBA {} byte {}): read 0x{:08x}, expected 0x{:08x}",
                x.offset,
                x.lba,
                x.offset - (x.lba - base_lba) * u64::from(BLOCK),
                x.read,
                x.expected
            )
        })
        .collect();
    if m.len() > max {
        out.push(format!("  ... and {} more words", m.len() - max));
    }
    out
}

/// `read LBA COUNT [--expect SEED]`.
pub fn read(d: &mut Driver, lba: u64, count: u32, expect: Option<u32>) -> Result<(), Error> {
    let mut st = d.load()?;
    check_range(lba, count, st.blocks)?;
    let t0 = Instant::now();
    let parts = chunks(lba, count, st.max_blocks);
    let mut words = Vec::new();
    for &(l, n) in &parts {
        let done = d.rw(&mut st, opc::READ, l, n, None)?;
        say_done("read", l, n, &done);
        words.extend(done.data);
    }
    let bytes = words.len() * 4;
    match expect {
        Some(seed) => {
            let bad = compare(seed, lba, &words);
            if !bad.is_empty() {
                let mut msg = format!(
                    "read: {} of {} words differ from pattern {seed} (LBA {lba} + {count} blocks):",
                    bad.len(),
                    words.len()
                );
                for l in describe_mismatches(lba, &bad, 16) {
                    msg.push('\n');
                    msg.push_str(&l);
                }
                return Err(Error::Data(msg));
            }
            println!(
                "read: {count} blocks ({bytes} bytes) at LBA {lba} match pattern {seed}, {:.2} s",
                t0.elapsed().as_secs_f64()
            );
        }
        None => {
            for (i, row) in words.chunks(8).enumerate() {
                let hex: Vec<String> = row.iter().map(|w| format!("{w:08x}")).collect();
                println!("{:08x}: {}", 32 * i, hex.join(" "));
            }
            println!(
                "read: {count} blocks ({bytes} bytes) at LBA {lba}, not compared (--expect SEED compares), {:.2} s",
                t0.elapsed().as_secs_f64()
            );
        }
    }
    Ok(())
}

/// What `io` is given.
#[derive(Clone, Debug)]
pub struct IoOptions {
    pub seconds: Duration,
    pub qd: u32,
    pub bs: u32,
    pub rw: String,
    pub span: Option<u64>,
    pub expect: Option<u32>,
    pub seed: u64,
}

/// xorshift64*: the loop's choices, repeatable from `--seed`.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Latency figures of one direction: count, mean, p50, p90, p99, max.
pub fn latency_line(name: &str, v: &mut [Duration]) -> String {
    if v.is_empty() {
        return format!("{name:<6} none");
    }
    v.sort();
    let mean = v.iter().sum::<Duration>() / v.len() as u32;
    format!(
        "{name:<6} {:>6} ops  mean {}  p50 {}  p90 {}  p99 {}  max {}",
        v.len(),
        fmt_ms(mean),
        fmt_ms(percentile(v, 50.0)),
        fmt_ms(percentile(v, 90.0)),
        fmt_ms(percentile(v, 99.0)),
        fmt_ms(*v.last().expect("not empty"))
    )
}

/// `io`: a fio-like loop at queue depth 1 with every read verified.
pub fn io(d: &mut Driver, o: &IoOptions) -> Result<(), Error> {
    if o.qd != 1 {
        return Err(Error::Board(format!(
            "--qd {}: the tool keeps one command in flight (it polls each completion over the serial line)",
            o.qd
        )));
    }
    let mut st = d.load()?;
    if o.bs == 0 || !o.bs.is_multiple_of(BLOCK) || o.bs / BLOCK > st.max_blocks {
        return Err(Error::Board(format!(
            "--bs {}: a multiple of {BLOCK} bytes up to {} (the largest command)",
            o.bs,
            st.max_blocks * BLOCK
        )));
    }
    let per = o.bs / BLOCK;
    let span = o.span.unwrap_or(st.blocks.min(2048)).min(st.blocks);
    let slots = span / u64::from(per);
    if slots == 0 {
        return Err(Error::Board(format!(
            "--span {span} blocks holds no {}-block command",
            per
        )));
    }
    let (reads, writes) = match o.rw.as_str() {
        "randrw" => (true, true),
        "randwrite" => (false, true),
        "randread" => (true, false),
        other => {
            return Err(Error::Board(format!(
                "--rw {other}: randrw, randwrite or randread"
            )))
        }
    };
    if !writes && o.expect.is_none() {
        return Err(Error::Board(
            "--rw randread needs --expect SEED (the pattern `write --pattern SEED` left on the blocks) to verify the data".into(),
        ));
    }
    let mut rng = Rng(o.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    // What each slot holds, written by this loop: its pattern seed.
    let mut written: BTreeMap<u64, u32> = BTreeMap::new();
    let (mut rl, mut wl) = (Vec::new(), Vec::new());
    let mut bad_words = 0usize;
    let t0 = Instant::now();
    let mut next_seed = (o.seed as u32).wrapping_mul(2_654_435_761) | 1;
    while t0.elapsed() < o.seconds {
        let read = if !writes {
            true
        } else if !reads || written.is_empty() {
            false
        } else {
            rng.below(2) == 0
        };
        if read {
            let (slot, seed) = if writes {
                let i = rng.below(written.len() as u64) as usize;
                let (s, p) = written.iter().nth(i).expect("not empty");
                (*s, *p)
            } else {
                (rng.below(slots), o.expect.expect("checked"))
            };
            let lba = slot * u64::from(per);
            let done = d.rw(&mut st, opc::READ, lba, per, None)?;
            rl.push(done.latency);
            let bad = compare(seed, lba, &done.data);
            if !bad.is_empty() {
                bad_words += bad.len();
                let mut msg = format!(
                    "io: a read of LBA {lba} + {per} blocks differs from pattern {seed} in {} words:",
                    bad.len()
                );
                for l in describe_mismatches(lba, &bad, 8) {
                    msg.push('\n');
                    msg.push_str(&l);
                }
                eprintln!("{msg}");
            }
        } else {
            let slot = rng.below(slots);
            let lba = slot * u64::from(per);
            next_seed = next_seed.wrapping_add(0x9E37_79B9);
            let seed = next_seed;
            let done = d.rw(
                &mut st,
                opc::WRITE,
                lba,
                per,
                Some(&pattern(seed, lba, per)),
            )?;
            wl.push(done.latency);
            written.insert(slot, seed);
        }
    }
    let el = t0.elapsed().as_secs_f64();
    let ops = rl.len() + wl.len();
    println!(
        "io: {} for {:.1} s, bs {} qd 1 over {span} blocks: {ops} ops, {:.2} IOPS, {:.1} KiB/s",
        o.rw,
        el,
        o.bs,
        ops as f64 / el,
        ops as f64 * f64::from(o.bs) / 1024.0 / el
    );
    println!(
        "  latency, doorbell to CQE seen (polled over the serial line; the data's transfer over it is not counted):"
    );
    println!("  {}", latency_line("read", &mut rl));
    println!("  {}", latency_line("write", &mut wl));
    if bad_words > 0 {
        return Err(Error::Data(format!(
            "io: {bad_words} words read back differed from what was written"
        )));
    }
    println!("  data verified: {} reads compared, no mismatch", rl.len());
    Ok(())
}

/// `ping ADDR`: echo requests from this machine's stack, replies and RTTs, and the chip's
/// counters before and after.
pub fn ping(
    br: &mut Bridge,
    map: &Map,
    addr: Ipv4Addr,
    count: u16,
    wait: Duration,
    size: Option<usize>,
) -> Result<ExitCode, Error> {
    let chip = crate::chip::ChipMap::new(map)?;
    if !chip.has("tcp_csr") {
        return Err(Error::Board(format!(
            "the {}'s chip has no TCP/IP engine to answer ICMP",
            map.board.title
        )));
    }
    let cfg = hdl_gen::boards::config(&map.board).map_err(|e| Error::Board(e.to_string()))?;
    let max = cfg.tcp.echo_bytes as usize - 8;
    let size = size.unwrap_or(max);
    let ip = Ipv4Addr::from(br.read(chip.addr("tcp_csr", "ip")?)?.to_be_bytes());
    if ip.is_unspecified() {
        return Err(Error::NotSetUp(
            "the chip has no IPv4 address yet (tcp_csr.ip reads 0.0.0.0): run `bringup setup` first".into(),
        ));
    }
    if ip != addr {
        println!("ping: note: the chip's address is {ip} (tcp_csr.ip), not {addr}");
    }
    if size > max {
        println!(
            "ping: note: {size} bytes of data: the chip answers echo requests of at most {max} (its [tcp] echo_bytes {}), larger ones it drops",
            cfg.tcp.echo_bytes
        );
    }
    let counters = [
        "echo_out",
        "arp_out",
        "drop_csum",
        "drop_other",
        "drop_malformed",
    ];
    let read_counters = |br: &mut Bridge| -> Result<Vec<u32>, Error> {
        let mut v = Vec::new();
        for c in counters {
            v.push(br.read(chip.addr("tcp_csr", c)?)?);
        }
        v.push(br.read(map.board_reg("mac_rx_frames"))?);
        v.push(br.read(map.board_reg("mac_tx_frames"))?);
        Ok(v)
    };
    let before = read_counters(br)?;
    let mut p = Pinger::open()?;
    println!(
        "PING {addr}: {size} data bytes ({} socket)",
        if p.is_raw() { "raw" } else { "ICMP datagram" }
    );
    let payload: Vec<u8> = (0..size)
        .map(|i| (i as u8).wrapping_mul(7) ^ 0x5A)
        .collect();
    let mut rtts = Vec::new();
    for seq in 1..=count {
        let r = p.ping(addr, seq, &payload, wait)?;
        match r.rtt {
            Some(t) => {
                println!(
                    "{} bytes from {addr}: icmp_seq={seq} time={}",
                    size + 8,
                    fmt_ms(t)
                );
                rtts.push(t);
            }
            None => println!(
                "no reply from {addr}: icmp_seq={seq} within {:.1} s",
                wait.as_secs_f64()
            ),
        }
    }
    let after = read_counters(br)?;
    let d: Vec<u32> = after
        .iter()
        .zip(&before)
        .map(|(a, b)| a.wrapping_sub(*b))
        .collect();
    println!(
        "--- {addr} ping statistics: {count} transmitted, {} received, {}% loss",
        rtts.len(),
        100 - 100 * rtts.len() / usize::from(count.max(1))
    );
    if !rtts.is_empty() {
        let mut s = rtts.clone();
        s.sort();
        println!(
            "rtt min/p50/max = {}/{}/{}",
            fmt_ms(s[0]),
            fmt_ms(percentile(&s, 50.0)),
            fmt_ms(*s.last().expect("not empty"))
        );
    }
    println!(
        "chip: tcp_csr echo_out +{} arp_out +{} drop_csum +{} drop_other +{} drop_malformed +{}; MAC rx_frames +{} tx_frames +{}",
        d[0], d[1], d[2], d[3], d[4], d[5], d[6]
    );
    if rtts.is_empty() {
        let why = if d[5] == 0 {
            "the chip's MAC received no frame: check the cable, the link (mdio 0 1) and that this machine routes the address to that port"
        } else if d[0] == 0 {
            "frames reached the chip but it sent no echo reply: check its address (setup --local-ip) and the drop counters above"
        } else {
            "the chip sent echo replies that never reached this machine: check the chip's MAC and the route back"
        };
        return Err(Error::Board(format!("ping {addr}: no reply: {why}")));
    }
    if (d[0] as usize) < rtts.len() {
        println!(
            "ping: note: {} replies, but the chip counted {} echo replies sent: another host answered?",
            rtts.len(),
            d[0]
        );
    }
    Ok(ExitCode::SUCCESS)
}
