//! What the tool's NVMe driver encodes and decodes, without a board: SQEs and CQEs at the
//! specification's bit positions (docs PROTOCOLS.md), status names, the rings' phase, the
//! state block kept in host memory (refused when absent, torn or inconsistent), Identify data,
//! the data pattern and its mismatch report, argument parsing, ICMP, and the chip's registers
//! found by name in the generator's maps.

use bringup::chip::ChipMap;
use bringup::cmd::{chunks, describe_mismatches, parse_ip_prefix, parse_mac, parse_target};
use bringup::driver::{route_entry, state_name};
use bringup::nvme::*;
use bringup::ping::{checksum, echo_request, parse_reply, percentile};
use bringup::Map;
use std::net::Ipv4Addr;
use std::time::Duration;

fn bytes(s: &Sqe) -> Vec<u8> {
    s.0.iter().flat_map(|d| d.to_le_bytes()).collect()
}

#[test]
fn a_write_sqe_has_every_field_where_the_specification_puts_it() {
    let s = Sqe::rw(opc::WRITE, 0xBEEF, 0x1_2345_6789, 16, 0x5000, 0x6000);
    let b = bytes(&s);
    assert_eq!(b[0], 0x01, "CDW0 OPC 7:0");
    assert_eq!(b[1] & 0xC0, 0, "PSDT 00: PRPs");
    assert_eq!(u16::from_le_bytes([b[2], b[3]]), 0xBEEF, "CID 31:16");
    assert_eq!(u32::from_le_bytes(b[4..8].try_into().unwrap()), 1, "NSID");
    assert_eq!(
        u64::from_le_bytes(b[24..32].try_into().unwrap()),
        0x5000,
        "PRP1"
    );
    assert_eq!(
        u64::from_le_bytes(b[32..40].try_into().unwrap()),
        0x6000,
        "PRP2"
    );
    assert_eq!(
        u64::from_le_bytes(b[40..48].try_into().unwrap()),
        0x1_2345_6789,
        "SLBA CDW10-11"
    );
    assert_eq!(u16::from_le_bytes([b[48], b[49]]), 15, "NLB 0's based");
    assert_eq!(b[50..52], [0, 0], "no FUA, no PRINFO");
    assert_eq!(
        (s.opcode(), s.cid(), s.slba(), s.blocks()),
        (1, 0xBEEF, 0x1_2345_6789, 16)
    );
    assert_eq!((s.prp1(), s.prp2()), (0x5000, 0x6000));
    let r = Sqe::rw(opc::READ, 7, 0, 1, 0x5000, 0);
    assert_eq!((r.opcode(), r.blocks(), r.prp2()), (2, 1, 0));
}

#[test]
#[should_panic(expected = "not a command dword")]
fn only_command_dwords_are_set_as_such() {
    let _ = Sqe::new(opc::IDENTIFY, 1).cdw(9, 1);
}

#[test]
fn a_cqe_decodes_cid_phase_and_status_and_back() {
    // SQHD 3, SQID 1, CID 0x42, phase 1, SCT 0 SC 80h (LBA Out of Range), DNR.
    let dw3 = 0x42 | 1 << 16 | (0x80 | 1 << 14) << 17;
    let e = Cqe::parse([0xAABB_CCDD, 0, 1 << 16 | 3, dw3]);
    assert_eq!(
        (e.dw0, e.sqhd, e.sqid, e.cid, e.phase),
        (0xAABB_CCDD, 3, 1, 0x42, true)
    );
    assert_eq!(
        (e.status.sct(), e.status.sc(), e.status.dnr()),
        (0, 0x80, true)
    );
    assert_eq!(e.status.name(), "LBA Out of Range");
    assert_eq!(Cqe::parse(e.dwords()), e);
    let ok = Cqe::parse([0, 0, 0, 5]);
    assert!(ok.status.is_success() && !ok.phase);
}

#[test]
fn statuses_are_named_with_their_type_and_code() {
    let s = Status::new(2, 0x86);
    assert_eq!(s.name(), "Access Denied");
    let t = s.to_string();
    assert!(t.starts_with("Access Denied (SCT 2h, SC 86h)"), "{t}");
    assert!(t.contains("grant"), "{t}");
    assert_eq!(Status::new(1, 0x01).name(), "Invalid Queue Identifier");
    assert_eq!(Status::new(0, 0x22).name(), "Transient Transport Error");
    let u = Status::new(7, 0x55);
    assert_eq!(u.to_string(), "unknown status (SCT 7h, SC 55h)");
    let nnr = Status::new(0, 0x82).to_string();
    assert!(nnr.contains("bound to no channel"), "{nnr}");
}

#[test]
fn a_ring_wraps_its_tail_and_flips_the_phase_at_the_cq_wrap() {
    let mut r = Ring::new(0x2000, 0x3000, 3);
    assert_eq!((r.sq_slot(), r.cq_slot(), r.phase), (0x2000, 0x3000, true));
    assert_eq!([r.push(), r.push(), r.push()], [1, 2, 0]);
    assert_eq!(r.next_cid, 3);
    assert_eq!(r.pop(), 1);
    assert!(r.phase);
    assert_eq!(r.cq_slot(), 0x3010);
    r.pop();
    assert_eq!(r.pop(), 0);
    assert!(
        !r.phase,
        "the controller writes the inverted phase after a wrap"
    );
    r.pop();
    r.pop();
    r.pop();
    assert!(r.phase);
}

fn a_state() -> State {
    let mut io = Ring::new(0x2000, 0x3000, 8);
    io.push();
    io.pop();
    State {
        config_hash: 0x0123_4567_89AB_CDEF,
        admin: Ring::new(0, 0x1000, 4),
        io,
        dstrd: 0,
        buf: 0x5000,
        buf_bytes: 8192,
        max_blocks: 16,
        blocks: 2048,
        target_ip: 0x0A4D_0001,
        target_port: 4420,
        local_ip: 0x0A4D_0002,
    }
}

#[test]
fn the_state_block_round_trips() {
    let s = a_state();
    let w = s.encode();
    assert_eq!(w[0], STATE_MAGIC);
    assert_eq!(State::decode(&w), Ok(s));
    // A wrapped phase survives too.
    let mut t = s;
    for _ in 0..8 {
        t.io.push();
        t.io.pop();
    }
    assert!(!t.io.phase);
    assert_eq!(State::decode(&t.encode()), Ok(t));
}

#[test]
fn a_missing_torn_or_inconsistent_state_block_is_refused_with_advice() {
    let zero = [0u32; STATE_WORDS];
    let e = State::decode(&zero).unwrap_err();
    assert_eq!(e, StateError::NoMagic(0));
    assert!(e.to_string().contains("run `bringup setup` first"), "{e}");
    let mut w = a_state().encode();
    w[9] ^= 1 << 4;
    let e = State::decode(&w).unwrap_err();
    assert!(matches!(e, StateError::Check { .. }), "{e:?}");
    assert!(e.to_string().contains("damaged"), "{e}");
    let mut w = a_state().encode();
    w[1] = 7;
    assert_eq!(State::decode(&w).unwrap_err(), StateError::Version(7));
    // Consistent check word, impossible queue position.
    let mut bad = a_state();
    bad.io.sq_tail = 8;
    let e = State::decode(&bad.encode()).unwrap_err();
    assert!(
        e.to_string()
            .contains("I/O queue of 8 entries with SQ tail 8"),
        "{e}"
    );
    let mut bad = a_state();
    bad.max_blocks = 17;
    assert!(matches!(
        State::decode(&bad.encode()),
        Err(StateError::Invalid(_))
    ));
    assert!(State::decode(&w[..3]).is_err());
}

#[test]
fn identify_data_carries_what_the_chip_fixes() {
    let f = ControllerFacts {
        serial: "0123456789abcdef".into(),
        model: "nvmeof_offload bring-up (colorlight_i5)".into(),
        firmware: "4e564d46".into(),
        mdts: 1,
        cntlid: 1,
        version: 0x0001_0400,
        namespaces: 1,
    };
    let b = identify_controller(&f);
    assert_eq!(b.len(), 4096);
    assert_eq!(&b[4..20], b"0123456789abcdef");
    assert_eq!(&b[20..24], b"    ", "serial space padded");
    assert_eq!(&b[24..30], b"nvmeof");
    assert_eq!(b[77], 1, "MDTS");
    assert_eq!(
        u32::from_le_bytes(b[80..84].try_into().unwrap()),
        0x0001_0400
    );
    assert_eq!((b[512], b[513]), (0x66, 0x44), "SQES, CQES");
    assert_eq!(u32::from_le_bytes(b[516..520].try_into().unwrap()), 1, "NN");
    let n = identify_namespace(2048);
    assert_eq!(
        u64::from_le_bytes(n[0..8].try_into().unwrap()),
        2048,
        "NSZE"
    );
    assert_eq!(n[26], 0, "FLBAS");
    assert_eq!(n[130], 9, "LBAF0 LBADS: 512 bytes");
}

#[test]
fn the_pattern_differs_by_seed_block_and_word_and_mismatches_are_placed() {
    let a = pattern(1, 0, 2);
    assert_eq!(a.len(), 256);
    assert_ne!(a, pattern(2, 0, 2));
    assert_ne!(a[..128], a[128..], "two blocks differ");
    assert_eq!(
        a[128..],
        pattern(1, 1, 1)[..],
        "block 1 is LBA 1's wherever it is written"
    );
    let distinct: std::collections::BTreeSet<u32> = a.iter().copied().collect();
    assert_eq!(distinct.len(), a.len());
    assert!(compare(1, 0, &a).is_empty());
    let mut got = a.clone();
    got[130] ^= 0x100;
    let m = compare(1, 0, &got);
    assert_eq!(m.len(), 1);
    assert_eq!((m[0].offset, m[0].lba, m[0].expected), (520, 1, a[130]));
    let lines = describe_mismatches(0, &m, 16);
    assert_eq!(
        lines[0],
        format!(
            "  offset 0x208 (LBA 1 byte 8): read 0x{:08x}, expected 0x{:08x}",
            a[130] ^ 0x100,
            a[130]
        )
    );
    // A buffer shifted by one word is caught everywhere.
    let mut shifted = a.clone();
    shifted.rotate_left(1);
    assert_eq!(compare(1, 0, &shifted).len(), 256);
    let many: Vec<u32> = vec![0; 64];
    let l = describe_mismatches(0, &compare(1, 0, &many), 4);
    assert_eq!(l.len(), 5);
    assert_eq!(l[4], "  ... and 60 more words");
}

#[test]
fn transfers_are_split_at_the_largest_command() {
    assert_eq!(chunks(10, 8, 16), vec![(10, 8)]);
    assert_eq!(chunks(0, 40, 16), vec![(0, 16), (16, 16), (32, 8)]);
    assert!(chunks(0, 0, 16).is_empty());
}

#[test]
fn addresses_and_options_are_parsed_or_refused_by_name() {
    assert_eq!(
        parse_ip_prefix("10.77.0.2").unwrap(),
        (Ipv4Addr::new(10, 77, 0, 2), 24)
    );
    assert_eq!(parse_ip_prefix("10.1.2.3/16").unwrap().1, 16);
    assert!(parse_ip_prefix("10.1.2.3/33")
        .unwrap_err()
        .to_string()
        .contains("prefix `33`"));
    assert!(parse_ip_prefix("host")
        .unwrap_err()
        .to_string()
        .contains("not an IPv4"));
    assert_eq!(
        parse_target("10.77.0.1:4420").unwrap(),
        (Ipv4Addr::new(10, 77, 0, 1), 4420)
    );
    assert_eq!(parse_target("10.77.0.1").unwrap().1, 4420);
    assert!(parse_target("10.77.0.1:0").is_err());
    assert_eq!(
        parse_mac("02:00:0a:4d:00:02").unwrap(),
        [2, 0, 0x0a, 0x4d, 0, 2]
    );
    assert!(parse_mac("01:00:5e:00:00:01")
        .unwrap_err()
        .to_string()
        .contains("multicast"));
    assert!(parse_mac("02:00:0a").is_err());
    assert_eq!(
        bringup::driver::default_mac(Ipv4Addr::new(10, 77, 0, 2)),
        [2, 0, 10, 77, 0, 2]
    );
}

#[test]
fn icmp_echo_is_checksummed_and_replies_are_recognised() {
    // RFC 1071's example: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2, checksum 220d.
    assert_eq!(
        checksum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]),
        0x220d
    );
    let req = echo_request(0x1234, 7, b"hello");
    assert_eq!(req[0], 8);
    assert_eq!(checksum(&req), 0, "a checksummed packet sums to zero");
    let mut rep = req.clone();
    rep[0] = 0;
    let c = u16::from_be_bytes([rep[2], rep[3]]).wrapping_add(0x0800);
    rep[2..4].copy_from_slice(&c.to_be_bytes());
    assert_eq!(parse_reply(&rep), Some((0x1234, 7, &b"hello"[..])));
    assert_eq!(parse_reply(&req), None, "a request is not a reply");
    rep[9] ^= 1;
    assert_eq!(parse_reply(&rep), None, "a corrupted reply is dropped");
    let v: Vec<Duration> = (1..=10).map(Duration::from_millis).collect();
    assert_eq!(percentile(&v, 50.0), Duration::from_millis(5));
    assert_eq!(percentile(&v, 99.0), Duration::from_millis(10));
    assert_eq!(percentile(&v, 0.0), Duration::from_millis(1));
}

#[test]
fn the_chips_registers_come_from_the_generators_maps() {
    let map = Map::new(hdl_gen::boards::colorlight_i5()).unwrap();
    let c = ChipMap::new(&map).unwrap();
    assert!(c.has("tcp_csr") && c.has("nvme_csr") && c.has("qos_csr") && c.has("chip_csr"));
    assert_eq!((c.tcp_conns, c.io_queues), (2, 1));
    // chip_csr is slot 0 of the firmware window, chip_info_csr slot 1 (what `info` reads).
    assert_eq!(c.addr("chip_csr", "route_sel").unwrap(), 0x1000_0000);
    assert_eq!(c.addr("chip_info_csr", "id").unwrap(), map.info_reg("id"));
    // Connection registers are 0x40 apart, the state 12 bytes in.
    let s0 = c.addr("tcp_csr", "c0_state").unwrap();
    let s1 = c.addr("tcp_csr", "c1_state").unwrap();
    assert_eq!(s1 - s0, 0x40);
    assert_eq!(s0 - c.addr("tcp_csr", "c0_remote_ip").unwrap(), 12);
    assert_eq!(
        c.pack("tcp_csr", "c0_ports", &[("remote", 4420), ("local", 50000)])
            .unwrap(),
        50000 << 16 | 4420
    );
    assert_eq!(
        c.pack(
            "qos_csr",
            "grant0_ctrl",
            &[("read", 1), ("write", 1), ("nsid", 1), ("sqid", 1)]
        )
        .unwrap(),
        3 | 1 << 8 | 1 << 16
    );
    let e = c.pack("tcp_csr", "retries", &[("tcp", 256)]).unwrap_err();
    assert!(
        e.to_string()
            .contains("does not fit `tcp_csr.retries.tcp` (8 bits)"),
        "{e}"
    );
    assert!(c.addr("tcp_csr", "nope").is_err());
    assert!(c
        .addr("dma_csr", "ctrl")
        .unwrap_err()
        .to_string()
        .contains("has no `dma_csr`"));
    assert_eq!(
        c.get("tcp_csr", "c0_state", "reason", 3 << 8 | 1 << 4 | 1)
            .unwrap(),
        3
    );
    // The route entry as chip_csr.route_set documents it: bound, NVMe/TCP (1), channel.
    assert_eq!(route_entry(0), 0x8001_0000);
    assert_eq!(route_entry(1), 0x8001_0001);
    assert_eq!(state_name(4), "ESTABLISHED");
    assert!(state_name(1).starts_with("ARP"));
    assert_eq!(state_name(15), "state 15");
}

#[test]
fn a_failed_setup_step_names_the_step_the_cause_and_what_is_left() {
    let e = bringup::Error::Setup {
        step: "connection 0 opened".into(),
        cause: Box::new(bringup::Error::Board(
            "no ARP answer for 10.77.0.1 (the target)".into(),
        )),
        left: "controller disabled".into(),
    };
    let t = e.to_string();
    assert!(
        t.contains("setup failed at step \"connection 0 opened\": no ARP answer"),
        "{t}"
    );
    assert!(t.contains("the chip is left: controller disabled"), "{t}");
    assert_eq!(e.exit_code(), 1);
    let e = bringup::Error::Setup {
        step: "x".into(),
        cause: Box::new(bringup::Error::Port("gone".into())),
        left: "y".into(),
    };
    assert_eq!(e.exit_code(), 2, "a lost port is still exit code 2");
    let e = bringup::Error::Nvme {
        what: "Read of 8 blocks at LBA 4090".into(),
        status: Status::new(0, 0x80),
    };
    assert_eq!(
        e.to_string(),
        "Read of 8 blocks at LBA 4090: the controller answered LBA Out of Range (SCT 0h, SC 80h): past the end of the namespace (see --blocks)"
    );
}
