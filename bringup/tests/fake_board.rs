//! The host tool against a model of a bring-up board's bridge on a pseudo-terminal: the
//! framing and byte order, `info`'s decoding (and its check of the configuration hash), the
//! error responses named, recovery after a garbled answer, a silent board, a board that is not a
//! bring-up core, and a memory test that finds a stuck bit. (The RTL side of the protocol and the
//! map is tested under Verilator by hdl-gen/tests/fpga_bringup.rs.)

use bringup::{admin_pending, describe_sqe, identify, info, mdio, memtest, Bridge, Error, Map};
use hdl_gen::boards::{self, board_csr, bringup as map};
use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// What the fake board does wrong, if anything.
#[derive(Clone, Copy, Default)]
struct Faults {
    /// Answer the first command with a garbage status byte.
    garble_first: bool,
    /// Never answer.
    silent: bool,
    /// Host memory bit 5 of every word reads 0.
    stuck_bit: bool,
    /// Address 0 reads this instead of "BRUP".
    id: Option<u32>,
    /// The chip's configuration hash reads this instead of the board's.
    hash: Option<u64>,
    /// An admin command waits: Identify, CID 0x1234, CNS 1.
    admin: bool,
}

/// The master side of a pty answering the bridge protocol as a Colorlight i5 bring-up core
/// would.
fn fake_board(faults: Faults) -> Bridge {
    let (mut master, mut slave) = (0, 0);
    let r = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(r, 0, "openpty");
    let master = unsafe { OwnedFd::from_raw_fd(master) };
    let slave = unsafe { OwnedFd::from_raw_fd(slave) };
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    unsafe {
        libc::tcgetattr(slave.as_raw_fd(), &mut t);
        libc::cfmakeraw(&mut t);
        libc::tcsetattr(slave.as_raw_fd(), libc::TCSANOW, &t);
    }
    let b = boards::colorlight_i5();
    let m = Map::new(b.clone()).unwrap();
    let mut regs: BTreeMap<u32, u32> = BTreeMap::new();
    regs.insert(
        m.board_reg("id"),
        faults.id.unwrap_or(board_csr::BRINGUP_ID),
    );
    regs.insert(m.board_reg("info"), boards::code(&b) | b.mem_bits << 8);
    regs.insert(m.board_reg("info_clock"), (b.core_hz / 1000) as u32);
    let hash = faults.hash.unwrap_or(m.config_hash);
    regs.insert(m.info_reg("id"), hdl_gen::blocks::chip_info::CHIP_ID);
    regs.insert(m.info_reg("version"), 0x0000_0100);
    regs.insert(m.info_reg("config_hash_lo"), hash as u32);
    regs.insert(m.info_reg("config_hash_hi"), (hash >> 32) as u32);
    regs.insert(m.info_reg("nvme_cap"), 7 << 16 | 1);
    regs.insert(map::BAR0_BASE + 8, 0x0001_0400);
    for r in m.board_csr.registers() {
        regs.entry(map::BOARD_CSR_BASE + r.offset).or_insert(0);
    }
    regs.insert(m.board_reg("mac_rx_frames"), 42);
    if faults.admin {
        regs.insert(m.board_reg("admin_status"), 1);
        regs.insert(m.board_reg("admin_sqe0"), 0x1234_0006);
        regs.insert(m.board_reg("admin_sqe10"), 1);
    }
    let mdio_cmd = m.board_reg("mdio_cmd");
    let mdio_status = m.board_reg("mdio_status");
    let mem_end = map::HOST_MEM_BASE + (1u32 << b.mem_bits);
    std::thread::spawn(move || {
        let fd = master.as_raw_fd();
        let mut mem: BTreeMap<u32, u32> = BTreeMap::new();
        let mut garble = faults.garble_first;
        let read = |n: usize| -> Option<Vec<u8>> {
            let mut v = vec![0u8; n];
            let mut off = 0;
            while off < n {
                let k = unsafe { libc::read(fd, v[off..].as_mut_ptr().cast(), n - off) };
                if k <= 0 {
                    return None;
                }
                off += k as usize;
            }
            Some(v)
        };
        let write = |b: &[u8]| unsafe {
            libc::write(fd, b.as_ptr().cast(), b.len());
        };
        loop {
            let Some(op) = read(1) else { return };
            if op[0] != b'R' && op[0] != b'W' {
                continue;
            }
            let Some(a) = read(4) else { return };
            let addr = u32::from_be_bytes([a[0], a[1], a[2], a[3]]);
            let data = if op[0] == b'W' {
                let Some(d) = read(4) else { return };
                Some(u32::from_be_bytes([d[0], d[1], d[2], d[3]]))
            } else {
                None
            };
            if faults.silent {
                continue;
            }
            let in_board = addr < 1 << board_csr::ADDR_WIDTH;
            let in_mem = (map::HOST_MEM_BASE..mem_end).contains(&addr);
            let (status, value) = if in_mem {
                match data {
                    Some(d) => {
                        mem.insert(addr, d);
                        (0xA0, 0)
                    }
                    None => {
                        let v = mem.get(&addr).copied().unwrap_or(0);
                        (0xA0, if faults.stuck_bit { v & !0x20 } else { v })
                    }
                }
            } else if let Some(v) = regs.get(&addr).copied() {
                if let Some(d) = data {
                    if addr == mdio_cmd {
                        regs.insert(mdio_status, if d >> 26 & 1 == 0 { 0xFFFF_0000 } else { 0 });
                    }
                }
                (0xA0, v)
            } else if in_board || addr >> 28 == 1 || addr >> 28 == 2 {
                (0xA2, 0)
            } else {
                (0xA3, 0)
            };
            let status = if garble {
                garble = false;
                0x5A
            } else {
                status
            };
            if data.is_some() {
                write(&[status]);
            } else {
                let v = value.to_be_bytes();
                write(&[status, v[0], v[1], v[2], v[3]]);
            }
        }
    });
    Bridge::from_fd(slave, Duration::from_millis(300))
}

#[test]
fn info_names_the_board_and_checks_the_configuration_hash() {
    let mut br = fake_board(Faults::default());
    let m = identify(&mut br).unwrap();
    assert_eq!(m.board.name, "colorlight_i5");
    let lines = info(&mut br, &m).unwrap().join("\n");
    assert!(lines.contains("Colorlight i5"), "{lines}");
    assert!(lines.contains("(NVMF)"), "{lines}");
    assert!(
        lines.contains("(configs/bringup_colorlight_i5.toml)"),
        "{lines}"
    );
    assert!(lines.contains("BAR0 VS      1.4.0"), "{lines}");
    assert!(
        lines.contains("1 I/O queue pairs, 8 entries at most"),
        "{lines}"
    );
    assert!(lines.contains("mac rx_frames        42"), "{lines}");
    assert!(lines.contains("core clock   100000 kHz\n"), "{lines}");

    let mut br = fake_board(Faults {
        hash: Some(0x1234),
        ..Faults::default()
    });
    let m = identify(&mut br).unwrap();
    let lines = info(&mut br, &m).unwrap().join("\n");
    assert!(
        lines.contains("NOT configs/bringup_colorlight_i5.toml"),
        "{lines}"
    );
}

#[test]
fn bus_errors_are_named() {
    let mut br = fake_board(Faults::default());
    let e = br.read(0x4000_0000).unwrap_err();
    assert_eq!(
        e,
        Error::Bus {
            what: "read 0x40000000".into(),
            resp: 3
        }
    );
    assert!(e
        .to_string()
        .contains("DECERR (no block answers at that address)"));
    let e = br.write(0x0000_00fc, 1).unwrap_err();
    assert!(
        e.to_string()
            .contains("write 0x000000fc: the bus answered SLVERR"),
        "{e}"
    );
    // The line is still in step.
    assert_eq!(br.read(0).unwrap(), board_csr::BRINGUP_ID);
}

#[test]
fn a_garbled_answer_is_reported_and_the_next_command_works() {
    let mut br = fake_board(Faults {
        garble_first: true,
        ..Faults::default()
    });
    let e = br.read(0).unwrap_err();
    assert!(matches!(e, Error::Garbled { byte: 0x5A, .. }), "{e:?}");
    assert_eq!(br.read(0).unwrap(), board_csr::BRINGUP_ID);
}

#[test]
fn a_silent_board_times_out_with_advice() {
    let mut br = fake_board(Faults {
        silent: true,
        ..Faults::default()
    });
    let e = br.read(0).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Timeout {
                got: 0,
                want: 5,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("check the port, the baud rate"));
}

#[test]
fn another_design_is_not_taken_for_a_bring_up_core() {
    let mut br = fake_board(Faults {
        id: Some(0x4e56_4d46),
        ..Faults::default()
    });
    let e = identify(&mut br).err().expect("refused");
    assert!(e.to_string().contains("not a bring-up core's ID"), "{e}");
}

#[test]
fn memtest_passes_on_good_memory_and_finds_a_stuck_bit() {
    let mut br = fake_board(Faults::default());
    assert!(memtest(&mut br, 64).unwrap().is_empty());
    let mut br = fake_board(Faults {
        stuck_bit: true,
        ..Faults::default()
    });
    let bad = memtest(&mut br, 64).unwrap();
    assert!(!bad.is_empty());
    assert!(bad.iter().all(|(_, got, want)| got ^ want == 0x20));
}

#[test]
fn an_mdio_read_returns_the_frame_bits() {
    let mut br = fake_board(Faults::default());
    let m = identify(&mut br).unwrap();
    assert_eq!(mdio(&mut br, &m, 0, 1, None).unwrap(), 0xFFFF);
    assert!(mdio(&mut br, &m, 32, 1, None).is_err());
}

#[test]
fn a_waiting_admin_command_is_read_and_decoded() {
    let mut br = fake_board(Faults::default());
    let m = identify(&mut br).unwrap();
    assert_eq!(admin_pending(&mut br, &m).unwrap(), None);
    let mut br = fake_board(Faults {
        admin: true,
        ..Faults::default()
    });
    let m = identify(&mut br).unwrap();
    let (sqid, sqe) = admin_pending(&mut br, &m).unwrap().expect("a command");
    assert_eq!((sqid, sqe[0], sqe[10]), (0, 0x1234_0006, 1));
    let line = describe_sqe(sqid, &sqe);
    assert_eq!(
        line,
        "sq 0: Identify (0x06), cid 0x1234, nsid 0, cdw10 0x00000001, cdw11 0x00000000"
    );
}

#[test]
fn data_commands_refuse_a_board_that_was_never_set_up() {
    let mut br = fake_board(Faults::default());
    let m = identify(&mut br).unwrap();
    let mut d = bringup::driver::Driver::new(&mut br, &m).unwrap();
    let e = d.load().unwrap_err();
    assert_eq!(e.exit_code(), 4);
    assert!(
        e.to_string().contains("no driver state in host memory")
            && e.to_string().contains("run `bringup setup` first"),
        "{e}"
    );
    let e = bringup::cmd::write(&mut d, 0, 8, 1).unwrap_err();
    assert_eq!(e.exit_code(), 4, "{e}");
}
