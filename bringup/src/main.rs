//! `bringup`: the bring-up engineer's host tool, over a board's serial port (or the simulated
//! board's pseudo-terminal). See docs/fpga.md, "Bring-up".
//!
//! Exit codes: 0 done; 1 the board answered an error or something read back wrong; 2 the port
//! could not be used or the board did not answer; 3 a command this tool does not do yet.

use bringup::{admin_pending, describe_sqe, identify, info, mdio, memtest, Bridge, Error};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

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
    /// ARP and ICMP through the chip (needs the TCP/IP engine in the chip top: not yet).
    Ping { addr: String },
    /// Enable the controller, create I/O queues and bring up a RoCE QP (not yet).
    Setup { target: String },
    /// Read LBAs and compare them (not yet).
    Read { lba: u64, count: u32 },
    /// Write LBAs (not yet).
    Write { lba: u64, count: u32 },
}

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
            ExitCode::from(match e {
                Error::Port(_) | Error::Timeout { .. } | Error::Garbled { .. } => 2,
                _ => 1,
            })
        }
    }
}

fn not_yet(what: &str, why: &str) -> ExitCode {
    eprintln!("bringup: `{what}` is not done yet: {why} (see docs/fpga.md, Bring-up)");
    ExitCode::from(3)
}

fn run(cli: Cli) -> Result<ExitCode, Error> {
    // Commands the tool does not do yet fail before touching the board.
    match &cli.cmd {
        Cmd::Ping { .. } => {
            return Ok(not_yet(
                "ping",
                "the chip answers ARP and ICMP only once the TCP/IP engine is in the chip top",
            ))
        }
        Cmd::Setup { .. } | Cmd::Read { .. } | Cmd::Write { .. } => {
            return Ok(not_yet(
                "setup/read/write",
                "the firmware's admin work over the bridge is not written yet",
            ))
        }
        _ => {}
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
        Cmd::Ping { .. } | Cmd::Setup { .. } | Cmd::Read { .. } | Cmd::Write { .. } => {
            unreachable!("answered above")
        }
    }
    Ok(ExitCode::SUCCESS)
}
