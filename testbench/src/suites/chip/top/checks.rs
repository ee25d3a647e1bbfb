//! The scoreboard's checks at the end of a run (and after a hardware reset): reset values,
//! quiet host memory, every command's outcome, interrupts, the NVMe/TCP side.

use super::golden::route_word;
use super::*;

/// Every register of every block on the firmware bus (the generated maps' `RESET_CHECK`), read
/// before firmware writes anything: at power-on the readings are returned (`power_on` is
/// `None`); right after a hardware reset in mid-traffic each must read as it did at power-on
/// (no register, counter or table entry survives the reset). Both times, the bits the register
/// block itself holds (read-write fields; write-only ones read 0) must read the map's reset
/// value; the other bits show live state or constants, so for them power-on is the rule.
pub(super) fn check_reset_values<T: Dut>(
    env: &mut Env<T>,
    power_on: Option<&[u32]>,
) -> Result<Vec<u32>, String> {
    use crate::rtl::regs::{chip_info_csr, nvme_tcp_csr, tcp_csr};
    // (block, base, its registers: name, offset, the bits the block decides, reset value)
    type Regs = &'static [(&'static str, u32, u32, u32)];
    let blocks: [(&str, u32, Regs); 7] = [
        (
            "chip_csr",
            chip_csr::MAP_CHIP_BASE_RESET,
            chip_csr::RESET_CHECK,
        ),
        (
            "chip_info_csr",
            chip_csr::MAP_CHIP_INFO_BASE_RESET,
            chip_info_csr::RESET_CHECK,
        ),
        (
            "nvme_csr",
            chip_csr::MAP_NVME_BASE_RESET,
            nvme_csr::RESET_CHECK,
        ),
        (
            "qos_csr",
            chip_csr::MAP_QOS_BASE_RESET,
            qos_csr::RESET_CHECK,
        ),
        (
            "roce_csr",
            chip_csr::MAP_ROCE_BASE_RESET,
            roce_csr::RESET_CHECK,
        ),
        (
            "nvme_tcp_csr",
            chip_csr::MAP_NVME_TCP_BASE_RESET,
            nvme_tcp_csr::RESET_CHECK,
        ),
        (
            "tcp_csr",
            chip_csr::MAP_TCP_BASE_RESET,
            tcp_csr::RESET_CHECK,
        ),
    ];
    let mut bad = Vec::new();
    let mut got = Vec::new();
    let mut bus = env.fw_bus.mmio(&mut env.sim);
    for (block, base, regs) in blocks {
        for &(name, off, mask, reset) in regs {
            let v = bus.read32(base + off);
            if v & mask != reset & mask {
                bad.push(format!(
                    "{block}.{name} {v:#x}: its read-write bits {mask:#x} are not the map's reset value {reset:#x}"
                ));
            }
            if let Some(&was) = power_on.and_then(|p| p.get(got.len())) {
                if v != was {
                    bad.push(format!("{block}.{name} {v:#x} (at power-on {was:#x})"));
                }
            }
            got.push(v);
        }
    }
    // The tables behind a select register: the routing table must hold the contract's reset
    // binding (SQ y on QP y - 1, the default transport RoCE), and each queue's counters
    // (`nvme_csr.cnt_sel`) read as at power-on.
    let queues = field_u16(chip_csr::INFO_QUEUES_RESET);
    let qps = crate::suites::chip::session::channels(crate::suites::chip::session::Transport::Roce);
    let table = routes(&[], qps, 0, queues);
    for y in 1..=queues {
        bus.write32(chip_csr::ROUTE_SEL, u32::from(y));
        let v = bus.read32(chip_csr::ROUTE_GET);
        let want = route_word(&table, y);
        if v != want {
            bad.push(format!(
                "chip_csr.route_get of SQ {y} {v:#x} (the reset binding {want:#x})"
            ));
        }
    }
    bus.write32(chip_csr::ROUTE_SEL, 0);
    let nvme = chip_csr::MAP_NVME_BASE_RESET;
    for q in 0..=4u32 {
        bus.write32(nvme + nvme_csr::CNT_SEL, q);
        for (name, off) in [
            ("cnt_fetched", nvme_csr::CNT_FETCHED),
            ("cnt_completed", nvme_csr::CNT_COMPLETED),
        ] {
            let v = bus.read32(nvme + off);
            if let Some(&was) = power_on.and_then(|p| p.get(got.len())) {
                if v != was {
                    bad.push(format!(
                        "nvme_csr.{name} of queue {q} {v:#x} (at power-on {was:#x})"
                    ));
                }
            }
            got.push(v);
        }
    }
    bus.write32(nvme + nvme_csr::CNT_SEL, 0);
    if bad.is_empty() {
        Ok(got)
    } else {
        Err(format!(
            "{}, registers do not read as they should: {}",
            if power_on.is_some() {
                "right after a hardware reset in mid-traffic"
            } else {
                "at power-on"
            },
            bad.join(", ")
        ))
    }
}

pub(super) fn field_u16(v: u32) -> u16 {
    v as u16
}

/// Nothing reaches host memory while the controller is reset: no AXI write is accepted from
/// CSTS.RDY's fall (a controller reset) or the reset input's rise (a hardware reset) to the
/// new bring-up, and every region placed before the last reset holds, at the end, what it
/// held when RDY fell or the reset input was released (no late byte of a dropped command
/// lands later).
pub(super) fn check_quiet<T: Dut>(
    env: &Env<T>,
    resets: &[(u64, u64)],
    frozen: &[(u64, Vec<u8>)],
) -> Result<(), String> {
    let mem = env.mem.borrow();
    for t in mem.log.iter().filter(|t| t.dir == Dir::Write) {
        if let Some(r) = resets
            .iter()
            .find(|r| r.0 <= t.accepted && t.accepted < r.1)
        {
            return Err(format!(
                "a host-memory write of {} bytes at {:#x} accepted at cycle {}, after CSTS.RDY fell at cycle {} and before the host enabled the controller again (cycle {})",
                t.req.len, t.req.addr, t.accepted, r.0, r.1
            ));
        }
    }
    for (start, want) in frozen {
        let got = mem.mem.read_vec(*start, want.len());
        if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
            return Err(format!(
                "host memory at {:#x} changed after the last controller reset (CSTS.RDY had fallen): {:#04x}, was {:#04x}",
                start + i as u64,
                got[i],
                want[i]
            ));
        }
    }
    Ok(())
}

pub(super) fn check<T: Dut>(
    env: &Env<T>,
    link: &RoceLink,
    tcp_link: &TcpLink,
    sent: &[Sent],
    bufs: &[Buf],
    regions: &[(u64, Vec<u8>)],
) -> Result<(), String> {
    let t = &link.target;
    if let Some(e) = t.errors.first() {
        return Err(format!("RoCE target: {e}"));
    }
    // Exactly the fallback commands reached firmware, once each (a dropped one at most once),
    // with their SQE and SQ id.
    let fw: Vec<(u16, Sqe)> = env.fallback_received().iter().map(|r| (r.1, r.2)).collect();
    let cmd = |r: &(u16, Sqe)| (r.0, u16::from_le_bytes([r.1[2], r.1[3]]), r.1[0]);
    if let Some(r) = fw
        .iter()
        .find(|r| !sent.iter().any(|s| s.fallback && (s.sqid, s.sqe) == **r))
    {
        return Err(format!(
            "firmware received a fallback command (SQ, CID, opcode) {:?} the host did not send as one",
            cmd(r)
        ));
    }
    for s in sent.iter().filter(|s| s.fallback) {
        let n = fw.iter().filter(|r| **r == (s.sqid, s.sqe)).count();
        if n > 1 || (n == 0 && !s.dropped) {
            return Err(format!(
                "firmware received fallback command (SQ, CID, opcode) {:?} {n} times{}",
                cmd(&(s.sqid, s.sqe)),
                if s.dropped {
                    " (dropped by a reset)"
                } else {
                    ""
                }
            ));
        }
    }
    // Exactly the commands the chip must carry over RoCE reached the RoCE target, once each,
    // on their QP.
    for s in sent {
        let n = t
            .executed
            .iter()
            .filter(|e| e.cid == s.cid && Some(Chan::Roce(e.qp)) == s.via)
            .count();
        let want = usize::from(matches!(s.via, Some(Chan::Roce(_))));
        if n > want || (n < want && !s.dropped && !s.doomed) {
            return Err(format!(
                "SQ {} CID {:#x} (opcode {:#04x}, status {:#x}{}): the RoCE target executed it {n} times on its channel {:?}, expected {want}",
                s.sqid, s.cid, s.sqe[0], s.status,
                if s.dropped { ", dropped by a reset" } else { "" },
                s.via
            ));
        }
    }
    if let Some(e) = t.executed.iter().find(|e| {
        !sent
            .iter()
            .any(|s| s.cid == e.cid && s.via == Some(Chan::Roce(e.qp)))
    }) {
        return Err(format!(
            "the RoCE target executed CID {:#x} on QP {}, which the chip had not to carry there",
            e.cid, e.qp
        ));
    }
    // Host memory: every region as placed, but for the successful Reads' buffers, which hold
    // exactly what their target sent; Writes carried exactly their buffers.
    // A dropped Read's buffer may hold, byte by byte, what it held or what its target sent
    // (`alt`).
    let mem = &env.mem.borrow().mem;
    let mut expect: Vec<(u64, Vec<u8>)> = regions.to_vec();
    let mut alt: Vec<(u64, Vec<u8>)> = regions.to_vec();
    for b in bufs {
        let Some(s) = sent.iter().find(|s| s.sqid == b.sqid && s.cid == b.cid) else {
            continue;
        };
        let Some(via) = s.via else { continue };
        if (s.mem_err || (s.doomed && (s.status != 0 || s.dropped))) && !b.write {
            // Host memory failed the Read's writes, or its connection died under it (and it
            // did not succeed, or a reset dropped it): its buffer's bytes are undefined (a
            // cut-through C2HData's bytes may reach memory before the PDU is found bad).
            for &(addr, n) in &b.pieces {
                let (r, o) = piece(&mut alt, addr, n)?;
                r[o..o + n].copy_from_slice(&mem.read_vec(addr, n));
            }
            continue;
        }
        if s.status != 0 {
            continue;
        }
        let len = b.pieces.iter().map(|p| p.1).sum::<usize>();
        let who = format!("SQ {} CID {:#x} on {via:?}", b.sqid, b.cid);
        if b.write {
            let want = buf_bytes(b, mem);
            let got = match via {
                Chan::Roce(q) => t
                    .write_data
                    .iter()
                    .find(|w| w.0 == q && w.1 == b.cid)
                    .map(|w| w.2.clone())
                    .ok_or(format!(
                        "{who}: a successful Write the target got no data for"
                    )),
                Chan::Tcp(c) => tcp::write_data(tcp_link.holder(c, b.cid), b.cid, len)
                    .map_err(|e| format!("{who}: {e}")),
            };
            // A dropped Write need not have reached its target; if it did, it carried its
            // buffer.
            let got = match got {
                Err(_) if s.dropped => continue,
                g => g?,
            };
            if got != want {
                let i = (0..want.len().min(got.len()))
                    .find(|&i| got[i] != want[i])
                    .unwrap_or(want.len().min(got.len()));
                return Err(format!(
                    "{who}: the Write carried {} bytes to the target, not its {} host bytes (first difference at byte {i})",
                    got.len(),
                    want.len()
                ));
            }
            continue;
        }
        let data = match via {
            Chan::Roce(q) => t
                .read_data
                .iter()
                .find(|r| r.0 == q && r.1 == b.cid)
                .map(|r| r.2.clone())
                .ok_or(format!(
                    "{who}: a successful Read the target sent no data for"
                )),
            Chan::Tcp(c) => tcp::read_data(tcp_link.holder(c, b.cid), b.cid, len)
                .map_err(|e| format!("{who}: {e}")),
        };
        let data = match data {
            Err(_) if s.dropped => {
                // A hardware reset may cut a dropped Read's C2HData short: each byte of its
                // buffer holds what it held or what its target sent for it.
                if let Chan::Tcp(c) = via {
                    let part = tcp::read_bytes(tcp_link.holder(c, b.cid), b.cid, len);
                    let mut k = 0;
                    for &(addr, n) in &b.pieces {
                        let (r, o) = piece(&mut alt, addr, n)?;
                        for (i, x) in part[k..k + n].iter().enumerate() {
                            if let Some(x) = x {
                                r[o + i] = *x;
                            }
                        }
                        k += n;
                    }
                }
                continue;
            }
            d => d?,
        };
        let mut k = 0;
        for &(addr, n) in &b.pieces {
            for e in [&mut alt, &mut expect] {
                let (r, o) = piece(e, addr, n)?;
                r[o..o + n].copy_from_slice(&data[k..k + n]);
                if s.dropped {
                    break;
                }
            }
            k += n;
        }
    }
    for ((start, want), (_, or)) in expect.iter().zip(&alt) {
        let got = mem.read_vec(*start, want.len());
        if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i] && got[i] != or[i]) {
            let b = bufs.iter().find(|b| {
                b.pieces
                    .iter()
                    .any(|&(a, n)| a <= start + i as u64 && start + (i as u64) < a + n as u64)
            });
            return Err(format!(
                "host memory at {:#x} is {:#04x}, expected {:#04x} (in the buffer of {})",
                start + i as u64,
                got[i],
                want[i],
                b.map_or("no command".to_string(), |b| format!(
                    "SQ {} CID {:#x}",
                    b.sqid, b.cid
                ))
            ));
        }
    }
    Ok(())
}

/// Interrupts (coalescing off: the reset value of Feature 08h): each lands on a vector some
/// interrupt-enabled CQ uses, after a CQE of such a CQ was written; there are no more on a
/// vector than CQEs were written to its CQs; and the last CQE written to each such CQ is
/// covered by an interrupt on its vector at or after its write response (no completion is
/// left without an interrupt). The exact coalescing rule is the `nvme` suite's.
pub(super) fn check_irq<T: Dut>(env: &Env<T>) -> Result<(), String> {
    let mem = env.mem.borrow();
    let irqs: Vec<(u64, u16)> = env
        .irq
        .borrow()
        .received
        .iter()
        .map(|(c, v)| (c, v[0] as u16))
        .collect();
    // CQE writes per vector: the cycles of their write responses.
    let mut cqes: BTreeMap<u16, Vec<u64>> = BTreeMap::new();
    for r in env.host.rings.iter().filter(|r| r.cq) {
        let Some(v) = r.vector else { continue };
        let e = cqes.entry(v).or_default();
        e.extend(
            mem.log
                .iter()
                .filter(|t| t.dir == Dir::Write && r.range.contains(&t.req.addr))
                .map(|t| t.done),
        );
    }
    for &(at, v) in &irqs {
        let Some(w) = cqes.get(&v) else {
            return Err(format!(
                "interrupt on vector {v} at cycle {at}: no interrupt-enabled CQ uses it"
            ));
        };
        if !w.iter().any(|&c| c <= at) {
            return Err(format!(
                "interrupt on vector {v} at cycle {at} before any CQE was written to its CQs"
            ));
        }
    }
    // The last CQE of each CQ the controller still has (not one a reset dropped).
    let mut last: BTreeMap<u16, u64> = BTreeMap::new();
    for r in env.host.rings.iter().filter(|r| r.cq && r.dead == u64::MAX) {
        let Some(v) = r.vector else { continue };
        if let Some(d) = mem
            .log
            .iter()
            .filter(|t| t.dir == Dir::Write && r.range.contains(&t.req.addr))
            .map(|t| t.done)
            .max()
        {
            let e = last.entry(v).or_default();
            *e = (*e).max(d);
        }
    }
    for (v, w) in &cqes {
        let n = irqs.iter().filter(|x| x.1 == *v).count();
        if n > w.len() {
            return Err(format!(
                "{n} interrupts on vector {v}, for {} CQEs written to its CQs",
                w.len()
            ));
        }
        if let Some(&last) = last.get(v) {
            if !irqs.iter().any(|&(c, x)| x == *v && c >= last) {
                return Err(format!(
                    "the last CQE on vector {v} (written at cycle {last}) is followed by no interrupt on it (interrupts: {:?})",
                    irqs.iter().filter(|x| x.1 == *v).map(|x| x.0).collect::<Vec<_>>()
                ));
            }
        }
    }
    Ok(())
}

/// The NVMe/TCP side: every connection came up asking for `chip_csr.tcp_dgst`'s digests (each
/// target it had: a restart opens new ones) and stayed up with no protocol fault on either
/// side, but for the hostile target that killed its connection ([`TcpConf::die`]), which
/// must have been answered as the specification says (its own checks) and never by a host
/// protocol fault; each connection's targets together received exactly the commands of the
/// queue bound to it, once each (a dropped or doomed one at most once), as the host wrote them
/// (opcode, NSID, CDW10-15). At the end every connection is up, unless its hostile target
/// killed it after the last restart could be done.
pub(super) fn check_tcp<T: Dut>(
    env: &Env<T>,
    tcp_link: &TcpLink,
    dgst: u8,
    sent: &[Sent],
) -> Result<(), String> {
    let n = tcp_link.targets.len();
    // The TCP connections under NVMe/TCP never failed: a lossless link, and a hostile target
    // kills only its NVMe/TCP connection.
    let (tup, tfailed) = (
        env.sim.signal("tcp_up_o").get(),
        env.sim.signal("tcp_failed_o").get(),
    );
    if tup != (1u64 << n) - 1 || tfailed != 0 {
        return Err(format!(
            "TCP connections: tcp_up_o {tup:#x}, tcp_failed_o {tfailed:#x}: every one should be up"
        ));
    }
    let mut down = 0u64;
    for c in 0..n {
        let all = tcp_link.all(c);
        for (k, t) in all.iter().enumerate() {
            let who = format!("NVMe/TCP connection {c} (target {k})");
            if let Some(v) = t.violations.first() {
                return Err(format!("{who}: {v}"));
            }
            match t.received.first() {
                Some(Pdu::IcReq { hdgst, ddgst, .. }) => {
                    let asked = u8::from(*hdgst) | u8::from(*ddgst) << 1;
                    if asked != dgst & supported_digests() {
                        return Err(format!(
                            "{who}: the ICReq asks for digests {asked:#x}, chip_csr.tcp_dgst is {dgst:#x} (the configuration supports {:#x})",
                            supported_digests()
                        ));
                    }
                }
                other => {
                    return Err(format!(
                        "{who}: the first PDU the target got is {other:?}, not an ICReq"
                    ))
                }
            }
            let hostile = t.committed.is_some();
            if (!t.term_reqs.is_empty() || t.dead) && !hostile {
                return Err(format!(
                    "{who}: connection ended, with no fault of the target (TermReqs {:?})",
                    t.term_reqs
                ));
            }
            if hostile && k + 1 == all.len() {
                down |= 1 << c;
            }
        }
        let mut got: Vec<u16> = all
            .iter()
            .flat_map(|t| t.received.iter())
            .filter_map(|p| match p {
                Pdu::CapsuleCmd { sqe, .. } => Some(u16::from_le_bytes([sqe[2], sqe[3]])),
                _ => None,
            })
            .collect();
        let mine: Vec<&Sent> = sent
            .iter()
            .filter(|s| s.via == Some(Chan::Tcp(c)))
            .collect();
        // Each command once; one dropped by a controller reset or doomed by its connection's
        // death at most once.
        let mut want: Vec<u16> = mine
            .iter()
            .filter(|s| !(s.dropped || s.doomed) || got.contains(&s.cid))
            .map(|s| s.cid)
            .collect();
        got.sort_unstable();
        want.sort_unstable();
        if got != want {
            let extra: Vec<&Sent> = sent
                .iter()
                .filter(|s| s.via != Some(Chan::Tcp(c)) && got.contains(&s.cid))
                .collect();
            return Err(format!(
                "NVMe/TCP connection {c}'s targets received the CIDs {got:#x?}; the chip had {want:#x?} to carry to it (commands of other channels with those CIDs: {:?})",
                extra
                    .iter()
                    .map(|s| format!("SQ {} CID {:#x} status {:#x} via {:?}", s.sqid, s.cid, s.status, s.via))
                    .collect::<Vec<_>>()
            ));
        }
        for s in mine.into_iter().filter(|s| got.contains(&s.cid)) {
            let cap = tcp::capsules(tcp_link.holder(c, s.cid), s.cid)[0];
            if cap[0] != s.sqe[0] || cap[4..8] != s.sqe[4..8] || cap[40..64] != s.sqe[40..64] {
                return Err(format!(
                    "SQ {} CID {:#x}: the capsule's SQE {:02x?} is not the host's {:02x?} (opcode, NSID, CDW10-15)",
                    s.sqid,
                    s.cid,
                    &cap[..],
                    &s.sqe[..]
                ));
            }
        }
    }
    let (up, dead) = (
        env.sim.signal("tcp_connected_o").get(),
        env.sim.signal("tcp_dead_o").get(),
    );
    let all = (1u64 << n) - 1;
    if up | down != all || dead & !down != 0 {
        return Err(format!(
            "tcp_connected_o {up:#x}, tcp_dead_o {dead:#x}: every connection should be up (but {down:#x}, killed by its target)"
        ));
    }
    Ok(())
}
