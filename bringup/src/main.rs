//! `bringup`: the bring-up engineer's host tool, over a board's serial port (or the simulated
//! board's pseudo-terminal). See docs/fpga.md, "Bring-up".
//!
//! Exit codes: 0 done; 1 the board answered an error, a command completed with an error status,
//! or something read back wrong (data compared, a ping unanswered); 2 the port (or an ICMP
//! socket) could not be used or the board did not answer; 3 a command this tool does not do
//! yet; 4 `write`, `read` or `io` without a valid `setup` (run it first).

use bringup::{admin_pending, describe_sqe, identify, info, mdio, memtest, Bridge, Error};
use clap::{Parser, Subcommand};
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use bringup::cmd;

#[derive(Parser)]
#[command(
    name = "bringup",
    about = "Drive a bring-up board over its UART bridge"
)]
struct Cli {
    /// Serial port of the board (a pseudo-terminal for the simulated board).
    #[arg(long, default_value = "/dev/ttyUSB0")]
    port: PathBuf,
    /// Baud rate.
    #[arg(long, default_value_t = 115_200)]
    baud: u32,
    /// Seconds to wait for each answer.
    #[arg(long, default_value_t = 1.0)]
    timeout: f64,
    /// Seconds a command may take (admin or I/O, the connection excepted): the simulated board
    /// is slow.
    #[arg(long, default_value_t = 30.0)]
    cmd_timeout: f64,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// The board, the chip's identity and configuration, NVMe version, interrupts, MAC counters.
    Info,
    /// Read COUNT 32-bit words from bridge address ADDR.
    Peek {
        #[arg(value_parser = num)]
        addr: u32,
        #[arg(value_parser = num, default_value = "1")]
        count: u32,
    },
    /// Write VALUE at bridge address ADDR.
    Poke {
        #[arg(value_parser = num)]
        addr: u32,
        #[arg(value_parser = num)]
        value: u32,
    },
    /// Write and read back a pattern in the host memory (WORDS words, default all).
    Memtest {
        #[arg(long, value_parser = num)]
        words: Option<u32>,
    },
    /// Read a PHY register over MDIO, or write it with --write.
    Mdio {
        #[arg(value_parser = num)]
        phy: u32,
        #[arg(value_parser = num)]
        reg: u32,
        #[arg(long, value_parser = num)]
        write: Option<u32>,
    },
    /// The admin (or fallback I/O) command the chip offers firmware, decoded; it stays offered.
    Admin,
    /// ICMP echo from this machine to the chip's IPv4 address, with the chip's counters that
    /// prove it answered (run it where the chip's network is: `ip netns exec NS bringup ...`
    /// for the simulated board).
    Ping {
        addr: Ipv4Addr,
        /// Echo requests.
        #[arg(long, default_value_t = 4)]
        count: u16,
        /// Seconds to wait for each reply.
        #[arg(long, default_value_t = 5.0)]
        wait: f64,
        /// Bytes of echo data (the chip answers echo requests of at most [tcp] echo_bytes
        /// bytes of ICMP header and data; default: that many).
        #[arg(long)]
        size: Option<usize>,
    },
    /// Bring the chip up for I/O: controller disabled and re-enabled, the NVMe/TCP connection
    /// to the target, QoS and routing, admin and I/O queues (safe to run again any time).
    Setup {
        /// The chip's IPv4 address, optionally with a prefix length (default /24).
        #[arg(long)]
        local_ip: String,
        /// The NVMe/TCP target: IPv4 address and port (default 4420).
        #[arg(long)]
        target: String,
        /// Gateway, for a target outside the chip's network.
        #[arg(long)]
        gateway: Option<Ipv4Addr>,
        /// The chip's MAC address (default 02:00 and the local address).
        #[arg(long)]
        mac: Option<String>,
        /// Namespace 1's size in 512-byte blocks, as the chip's QoS polices it.
        #[arg(long, default_value_t = DEFAULT_BLOCKS)]
        blocks: u64,
        /// I/O queue entries (at most the controller's CAP.MQES + 1).
        #[arg(long, default_value_t = 8)]
        entries: u16,
        /// Seconds to wait for the connection.
        #[arg(long, default_value_t = 60.0)]
        connect_timeout: f64,
        /// The fabric transport: nvme-tcp (RoCE is not done yet).
        #[arg(long, default_value = "nvme-tcp")]
        transport: String,
    },
    /// Write COUNT blocks from LBA with a data pattern (SEED), through host memory PRPs.
    Write {
        lba: u64,
        count: u32,
        /// Pattern seed: every 4-byte word depends on it, its LBA and its place.
        #[arg(long, default_value_t = 1)]
        pattern: u32,
    },
    /// Read COUNT blocks from LBA; with --expect, compare them with that pattern.
    Read {
        lba: u64,
        count: u32,
        /// The pattern seed the blocks were written with.
        #[arg(long)]
        expect: Option<u32>,
    },
    /// A small fio-like loop: random reads and writes for some seconds, IOPS and latency
    /// percentiles, every read compared with what the loop (or --expect) wrote.
    Io {
        #[arg(long, default_value_t = 10.0)]
        seconds: f64,
        /// Commands in flight (1: the tool polls each completion over the serial line).
        #[arg(long, default_value_t = 1)]
        qd: u32,
        /// Bytes per command (a multiple of 512, at most the largest command).
        #[arg(long, default_value_t = 4096)]
        bs: u32,
        /// randrw, randwrite or randread (randread checks against --expect).
        #[arg(long, default_value = "randrw")]
        rw: String,
        /// LBAs the loop uses, from 0 (default: the namespace, at most 2048).
        #[arg(long)]
        span: Option<u64>,
        /// Pattern of the data already on the blocks, for randread.
        #[arg(long)]
        expect: Option<u32>,
        /// Seed of the loop's random choices.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

/// Namespace size `setup` gives QoS unless told.
const DEFAULT_BLOCKS: u64 = 2048;

fn num(s: &str) -> Result<u32, String> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(&h.replace('_', ""), 16),
        None => s.replace('_', "").parse(),
    };
    r.map_err(|_| format!("`{s}` is not a 32-bit number (decimal or 0x hex)"))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("bringup: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s.clamp(0.01, 1e6))
}

/// The host driver over the bridge, its command timeout from `--cmd-timeout`.
fn driver<'a>(
    br: &'a mut Bridge,
    map: &'a bringup::Map,
    cmd_timeout: f64,
) -> Result<bringup::driver::Driver<'a>, Error> {
    let mut d = bringup::driver::Driver::new(br, map)?;
    d.cmd_timeout = secs(cmd_timeout);
    Ok(d)
}

fn not_yet(what: &str, why: &str) -> ExitCode {
    eprintln!("bringup: `{what}` is not done yet: {why} (see docs/fpga.md, Bring-up)");
    ExitCode::from(3)
}

fn run(cli: Cli) -> Result<ExitCode, Error> {
    // Commands the tool does not do yet fail before touching the board.
    if let Cmd::Setup { transport, .. } = &cli.cmd {
        match transport.as_str() {
            "nvme-tcp" | "tcp" => {}
            "roce" => {
                return Ok(not_yet(
                    "setup --transport roce",
                    "only NVMe/TCP is brought up so far",
                ))
            }
            t => return Err(Error::Board(format!("--transport {t}: nvme-tcp or roce"))),
        }
    }
    let timeout = Duration::from_secs_f64(cli.timeout.max(0.01));
    let mut br = Bridge::open(&cli.port, cli.baud, timeout)?;
    match cli.cmd {
        Cmd::Info => {
            let map = identify(&mut br)?;
            for l in info(&mut br, &map)? {
                println!("{l}");
            }
        }
        Cmd::Admin => {
            let map = identify(&mut br)?;
            match admin_pending(&mut br, &map)? {
                None => println!("no admin command waits for firmware"),
                Some((sqid, sqe)) => {
                    println!("{}", describe_sqe(sqid, &sqe));
                    for (i, d) in sqe.iter().enumerate() {
                        println!("  dw{i:<2} 0x{d:08x}");
                    }
                }
            }
        }
        Cmd::Peek { addr, count } => {
            for i in 0..count {
                let a = addr.wrapping_add(4 * i);
                println!("0x{a:08x}: 0x{:08x}", br.read(a)?);
            }
        }
        Cmd::Poke { addr, value } => br.write(addr, value)?,
        Cmd::Memtest { words } => {
            let map = identify(&mut br)?;
            let all = map.mem_bytes() / 4;
            let words = words.unwrap_or(all);
            if words > all {
                return Err(Error::Board(format!(
                    "--words {words}: the host memory holds {all} words"
                )));
            }
            let bad = memtest(&mut br, words)?;
            for (a, got, want) in &bad {
                println!("0x{a:08x}: read 0x{got:08x}, wrote 0x{want:08x}");
            }
            println!(
                "memtest: {} of {words} words good",
                words - bad.len() as u32
            );
            if !bad.is_empty() {
                return Ok(ExitCode::from(1));
            }
        }
        Cmd::Mdio { phy, reg, write } => {
            let map = identify(&mut br)?;
            let data = write
                .map(|w| {
                    u16::try_from(w)
                        .map_err(|_| Error::Board(format!("--write 0x{w:x}: 16 bits at most")))
                })
                .transpose()?;
            let phy = u8::try_from(phy).unwrap_or(u8::MAX);
            let reg = u8::try_from(reg).unwrap_or(u8::MAX);
            let v = mdio(&mut br, &map, phy, reg, data)?;
            if data.is_none() {
                println!("phy {phy} reg {reg}: 0x{v:04x}");
            }
        }
        Cmd::Ping {
            addr,
            count,
            wait,
            size,
        } => {
            let map = identify(&mut br)?;
            return cmd::ping(&mut br, &map, addr, count, secs(wait), size);
        }
        Cmd::Setup {
            local_ip,
            target,
            gateway,
            mac,
            blocks,
            entries,
            connect_timeout,
            transport: _,
        } => {
            let (ip, prefix) = cmd::parse_ip_prefix(&local_ip)?;
            let (tip, port) = cmd::parse_target(&target)?;
            let mac = match mac {
                Some(m) => cmd::parse_mac(&m)?,
                None => bringup::driver::default_mac(ip),
            };
            let o = bringup::driver::SetupOptions {
                local_ip: ip,
                prefix,
                target: tip,
                port,
                gateway: gateway.unwrap_or(Ipv4Addr::UNSPECIFIED),
                mac,
                blocks,
                io_entries: entries,
                connect_timeout: secs(connect_timeout),
            };
            let map = identify(&mut br)?;
            let mut d = driver(&mut br, &map, cli.cmd_timeout)?;
            let t0 = std::time::Instant::now();
            let st = d.setup(&o)?;
            println!(
                "setup: done in {:.1} s: SQ {} on NVMe/TCP connection 0 to {}:{}, namespace 1 of {} blocks, commands of up to {} blocks",
                t0.elapsed().as_secs_f64(),
                bringup::driver::IO_QID,
                tip,
                port,
                st.blocks,
                st.max_blocks
            );
        }
        Cmd::Write {
            lba,
            count,
            pattern,
        } => {
            let map = identify(&mut br)?;
            let mut d = driver(&mut br, &map, cli.cmd_timeout)?;
            cmd::write(&mut d, lba, count, pattern)?;
        }
        Cmd::Read { lba, count, expect } => {
            let map = identify(&mut br)?;
            let mut d = driver(&mut br, &map, cli.cmd_timeout)?;
            cmd::read(&mut d, lba, count, expect)?;
        }
        Cmd::Io {
            seconds,
            qd,
            bs,
            rw,
            span,
            expect,
            seed,
        } => {
            let map = identify(&mut br)?;
            let mut d = driver(&mut br, &map, cli.cmd_timeout)?;
            let o = cmd::IoOptions {
                seconds: secs(seconds),
                qd,
                bs,
                rw,
                span,
                expect,
                seed,
            };
            cmd::io(&mut d, &o)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
