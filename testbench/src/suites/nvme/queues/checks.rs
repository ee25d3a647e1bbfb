//! The end-of-case checks against the golden model: paths (offload, fallback), latency
//! histograms, the event log, urgent arbitration, interrupts and the registers.

use super::*;

/// Which path a command took, by the events on its (SQ id, CID) from its doorbell to its CQE
/// or the controller reset that dropped it (see the module documentation). Returns the
/// commands handed to `io_cmd` and to firmware.
pub(super) fn check_paths(
    env: &Env,
    poisoned: &BTreeSet<(u16, Sqe)>,
) -> Result<(u64, u64), String> {
    #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
    enum Ev {
        Sub,
        IoCmd,
        Fw,
        Cqe,
        Reset,
    }
    let mut evs: Vec<(u64, Ev, u16, u16, Option<Sqe>)> = Vec::new();
    let cid_of = |s: &Sqe| u16::from_le_bytes([s[2], s[3]]);
    for (c, q, sqe, _) in &env.host.subs {
        evs.push((*c, Ev::Sub, *q, cid_of(sqe), Some(*sqe)));
    }
    let be = env.backend().borrow();
    for (c, q, sqe) in &be.received {
        evs.push((*c, Ev::IoCmd, *q, cid_of(sqe), Some(*sqe)));
    }
    let fw = env.fallback_received();
    for (c, q, sqe) in &fw {
        evs.push((*c, Ev::Fw, *q, cid_of(sqe), Some(*sqe)));
    }
    for (c, _, e) in &env.host.cqes {
        evs.push((*c, Ev::Cqe, e.sqid, e.cid, None));
    }
    for &c in &env.host.resets {
        evs.push((c, Ev::Reset, 0, 0, None));
    }
    evs.sort_by_key(|e| (e.0, e.1));
    // An open command: its SQE, its path (None: nowhere), io_cmd and firmware receipts.
    type Open = (Sqe, Option<IoRoute>, u32, u32);
    let mut open: BTreeMap<(u16, u16), Open> = BTreeMap::new();
    let path = |q: u16, s: &Sqe| -> Option<IoRoute> {
        if q == 0 || poisoned.contains(&(q, *s)) {
            None
        } else {
            Some(io_route(s, env.host.model.max_blocks))
        }
    };
    for (c, ev, q, cid, sqe) in evs {
        let who = format!("SQ {q} CID {cid:#x}");
        match ev {
            Ev::Sub => {
                let s = sqe.expect("an SQE");
                open.insert((q, cid), (s, path(q, &s), 0, 0));
            }
            Ev::IoCmd | Ev::Fw => {
                let s = sqe.expect("an SQE");
                let port = if ev == Ev::IoCmd {
                    "io_cmd"
                } else {
                    "admin_cmd (fallback)"
                };
                let Some(o) = open.get_mut(&(q, cid)) else {
                    return Err(format!(
                        "{port} at cycle {c}: {who} is not an outstanding command (opcode {:#04x})",
                        s[0]
                    ));
                };
                if o.0 != s {
                    let i = (0..64).find(|&i| o.0[i] != s[i]).unwrap_or(0);
                    return Err(format!(
                        "{port} at cycle {c}: {who}'s SQE differs from the host's at byte {i}                          ({:#04x}, the host wrote {:#04x})",
                        s[i], o.0[i]
                    ));
                }
                let want = if ev == Ev::IoCmd {
                    IoRoute::Offload
                } else {
                    IoRoute::Fallback
                };
                if o.1 != Some(want) {
                    return Err(format!(
                        "{port} at cycle {c}: {who} (opcode {:#04x}) must not go there: its path is {:?}",
                        s[0], o.1
                    ));
                }
                let n = if ev == Ev::IoCmd { &mut o.2 } else { &mut o.3 };
                *n += 1;
                if *n > 1 {
                    return Err(format!(
                        "{port} at cycle {c}: {who} handed out a second time"
                    ));
                }
            }
            Ev::Cqe => {
                let Some((s, p, io, fw)) = open.remove(&(q, cid)) else {
                    continue;
                };
                let want = match p {
                    Some(IoRoute::Offload) => (1, 0),
                    Some(IoRoute::Fallback) => (0, 1),
                    _ => (0, 0),
                };
                if (io, fw) != want {
                    return Err(format!(
                        "{who} (opcode {:#04x}, path {p:?}) completed (CQE read at cycle {c}) after                          {io} io_cmd and {fw} firmware hand-offs, expected {want:?}",
                        s[0]
                    ));
                }
            }
            Ev::Reset => open.clear(),
        }
    }
    Ok((be.received.len() as u64, fw.len() as u64))
}

/// The latency histograms against `models::nvme_lat`: the SQs' lives from the host's
/// doorbells (acceptance cycles from the BAR0 probe) and submissions, every CQE write from the
/// AXI probe (the cycle its AW valid rose, its write response, its bytes). Then a clear
/// zeroes them.
pub(super) fn check_latency(env: &mut Env, poisoned: &BTreeSet<(u16, Sqe)>) -> Result<u32, String> {
    let (hist, timed) = {
        let probe = env.probe().borrow();
        let n = probe.cqes.len();
        if probe.aw_rises.len() != n || probe.responses.len() != n {
            return Err(format!(
                "probe: {n} CQEs written, {} AW requests, {} write responses",
                probe.aw_rises.len(),
                probe.responses.len()
            ));
        }
        let writes: Vec<CqeWrite> = (0..n)
            .map(|k| {
                let e = Cqe::parse(&probe.cqes[k]);
                CqeWrite {
                    post: probe.aw_rises[k] - 1,
                    response: probe.responses[k],
                    ok: probe.responses_ok[k],
                    sqid: e.sqid,
                    cid: e.cid,
                }
            })
            .collect();
        let mut lives = Vec::new();
        for (ri, r) in env.host.rings.iter().enumerate() {
            if r.cq || r.qid == 0 || r.doorbells.is_empty() {
                continue;
            }
            let entries: Vec<(u16, usize)> = env
                .host
                .subs
                .iter()
                .filter(|s| s.3 == ri)
                .map(|s| {
                    let failed = poisoned.contains(&(s.1, s.2));
                    (
                        u16::from_le_bytes([s.2[2], s.2[3]]),
                        direction(s.2[0], failed),
                    )
                })
                .collect();
            let addr = env.doorbell_addr(r.qid, false);
            let mut doorbells = Vec::new();
            let mut before = 0;
            for &(queued, total) in &r.doorbells {
                let tail = (total % u64::from(r.size)) as u32;
                let Some(d) = probe
                    .doorbells
                    .iter()
                    .find(|d| d.0 >= queued && d.1 == addr && d.2 == tail)
                else {
                    return Err(format!(
                        "probe: SQ {} doorbell {tail} queued at cycle {queued} never accepted",
                        r.qid
                    ));
                };
                doorbells.push(Doorbell {
                    accepted: d.0,
                    before,
                });
                before = total;
            }
            let first = doorbells[0].accepted;
            let end = env
                .host
                .resets
                .iter()
                .copied()
                .find(|&c| c > first)
                .unwrap_or(u64::MAX);
            lives.push(SqLife {
                qid: r.qid,
                doorbells,
                entries,
                end,
            });
        }
        let hist = histograms(&lives, &writes);
        let timed: u32 = hist.iter().flatten().sum();
        (hist, timed)
    };
    let names = ["read", "write", "other"];
    for (dir, bins) in hist.iter().enumerate() {
        for (b, &want) in bins.iter().enumerate() {
            env.fw_write_now(csr::LAT_SEL, b as u32 | (dir as u32) << 8)?;
            let got = env.fw_read(csr::LAT_COUNT)?;
            if got != want {
                let nonzero: Vec<(usize, usize, u32)> = hist
                    .iter()
                    .enumerate()
                    .flat_map(|(d, bs)| {
                        bs.iter()
                            .enumerate()
                            .filter(|x| *x.1 > 0)
                            .map(move |(b, &v)| (d, b, v))
                    })
                    .collect();
                return Err(format!(
                    "latency histogram {} bin {b} ({} to {} cycles) is {got}, expected {want} \
                     ({timed} commands timed; expected non-zero (dir, bin, count): {nonzero:?})",
                    names[dir],
                    1u64 << b,
                    (2u64 << b) - 1
                ));
            }
        }
    }
    env.fw_write_now(csr::LAT_SEL, 3 << 8)?;
    if env.fw_read(csr::LAT_COUNT)? != 0 {
        return Err("lat_count of histogram 3 (none) is not 0".into());
    }
    env.fw_write_now(csr::LAT_CTRL, csr::LAT_CTRL_CLEAR_MASK)?;
    let mut k = 0;
    while env.fw_read(csr::STATUS)? & csr::STATUS_LAT_CLEARING_MASK != 0 {
        k += 1;
        if k > 200 {
            return Err("status.lat_clearing never fell after lat_ctrl.clear".into());
        }
    }
    for (dir, bins) in hist.iter().enumerate() {
        for (b, &v) in bins.iter().enumerate() {
            if v == 0 && b % 7 != 0 {
                continue;
            }
            env.fw_write_now(csr::LAT_SEL, b as u32 | (dir as u32) << 8)?;
            let got = env.fw_read(csr::LAT_COUNT)?;
            if got != 0 {
                return Err(format!(
                    "latency histogram {} bin {b} is {got} after lat_ctrl.clear",
                    names[dir]
                ));
            }
        }
    }
    Ok(timed)
}

pub(super) fn check_log(env: &Env) -> Result<(u64, u64), String> {
    let m = env.mem.borrow();
    if let Some(v) = m.violations.first() {
        return Err(format!("AXI protocol: {v} ({} in all)", m.violations.len()));
    }
    let rings = &env.host.rings;
    let mut count = vec![0u64; rings.len()];
    let mut log: Vec<_> = m.log.iter().collect();
    log.sort_by_key(|t| t.accepted);
    let (mut sqes, mut cqes) = (0, 0);
    for t in log {
        let (lo, hi) = t.req.span();
        let write = t.dir == Dir::Write;
        let Some(ri) = rings
            .iter()
            .rposition(|r| r.cq == write && r.range.start <= lo && hi <= r.range.end)
        else {
            return Err(format!(
                "{:?} burst {:x?} at cycle {} touches memory outside every {} ring",
                t.dir,
                t.req,
                t.accepted,
                if write { "CQ" } else { "SQ" }
            ));
        };
        let r = &rings[ri];
        let entry = if write { 16 } else { 64 };
        let slot = (lo - r.range.start) / entry;
        let n = (hi - lo) / entry;
        let size = u64::from(r.size);
        let door = r
            .doorbells
            .iter()
            .rfind(|d| d.0 < t.accepted)
            .map_or(0, |d| d.1);
        if !(lo - r.range.start).is_multiple_of(entry) || !(hi - lo).is_multiple_of(entry) || n == 0
        {
            return Err(format!(
                "{:?} burst {:x?} is not whole entries",
                t.dir, t.req
            ));
        }
        if slot != count[ri] % size {
            return Err(format!(
                "{} {} ring: {:?} of slot {slot} at cycle {}, expected slot {} (ring order)",
                if write { "CQ" } else { "SQ" },
                r.qid,
                t.dir,
                t.accepted,
                count[ri] % size
            ));
        }
        if write {
            if n != 1 {
                return Err(format!("a CQE write of {n} entries"));
            }
            if count[ri] + 1 - door > size - 1 {
                return Err(format!(
                    "CQ {} (size {size}) overrun at cycle {}: entry {} written with only {door} released",
                    r.qid,
                    t.accepted,
                    count[ri] + 1
                ));
            }
            cqes += 1;
        } else {
            if count[ri] + n > door {
                return Err(format!(
                    "SQ {} fetched entries {}..{} at cycle {} but the host had published {door}",
                    r.qid,
                    count[ri],
                    count[ri] + n,
                    t.accepted
                ));
            }
            sqes += n;
        }
        count[ri] += n;
    }
    Ok((sqes, cqes))
}

/// Weighted round robin with an urgent class: once an urgent SQ's doorbell has been answered
/// (plus the few cycles the queue FSM takes to schedule it) and its entries are not all
/// fetched, the next SQ read request picked is for the admin queue or an urgent queue. Only
/// checked in WRR mode with every `sq_space_i` bit high (a throttled queue is skipped).
pub(super) fn check_urgent(env: &Env) -> Result<(), String> {
    const SLACK: u64 = 10;
    let m = env.mem.borrow();
    let rings = &env.host.rings;
    let mut reads: Vec<(u64, usize, u64)> = m
        .log
        .iter()
        .filter(|t| t.dir == Dir::Read)
        .filter_map(|t| {
            let (lo, hi) = t.req.span();
            let ri = rings
                .iter()
                .rposition(|r| !r.cq && r.range.start <= lo && hi <= r.range.end)?;
            Some((t.accepted, ri, (hi - lo) / 64))
        })
        .collect();
    reads.sort_by_key(|r| r.0);
    let mut fetched = vec![0u64; rings.len()];
    for w in reads.windows(2) {
        let (t_prev, ri_prev, n_prev) = w[0];
        fetched[ri_prev] += n_prev;
        let (t, ri, _) = w[1];
        if rings[ri].urgent || rings[ri].qid == 0 {
            continue;
        }
        for (ui, u) in rings.iter().enumerate() {
            if u.cq || !u.urgent || u.qid == 0 || u.dead <= t {
                continue;
            }
            let published = u
                .doorbells_done
                .iter()
                .rfind(|d| d.0 + SLACK <= t_prev)
                .map_or(0, |d| d.1);
            if published > fetched[ui] {
                return Err(format!(
                    "WRR: SQ {} (not urgent) read at cycle {t} while urgent SQ {} had entries {}..{} \
                     published since before cycle {t_prev} and not fetched",
                    rings[ri].qid, u.qid, fetched[ui], published
                ));
            }
        }
    }
    Ok(())
}

pub(super) fn check_irqs(env: &Env) -> Result<(), String> {
    let m = env.mem.borrow();
    let mut done: BTreeMap<u16, Vec<u64>> = BTreeMap::new();
    for t in m.log.iter().filter(|t| t.dir == Dir::Write) {
        let (lo, _) = t.req.span();
        if let Some(r) = env
            .host
            .rings
            .iter()
            .rfind(|r| r.cq && r.range.contains(&lo))
        {
            if let Some(v) = r.vector {
                done.entry(v).or_default().push(t.done);
            }
        }
    }
    let mut irqs: BTreeMap<u16, Vec<u64>> = BTreeMap::new();
    let sink = env.irq.borrow();
    if let Some(v) = sink.violations.first() {
        return Err(format!("irq stream protocol: {v}"));
    }
    for (c, w) in &sink.received {
        irqs.entry(w[0] as u16).or_default().push(c);
    }
    let last_reset = env.host.resets.last().copied().unwrap_or(0);
    for (v, list) in &irqs {
        let cs = done.get(v).cloned().unwrap_or_default();
        if list.len() > cs.len() {
            return Err(format!(
                "vector {v}: {} interrupts for {} completions",
                list.len(),
                cs.len()
            ));
        }
        for &c in list {
            if !cs.iter().any(|&d| d < c) {
                return Err(format!(
                    "vector {v}: interrupt at cycle {c} before any completion"
                ));
            }
        }
    }
    for (v, cs) in &done {
        for &d in cs.iter().filter(|&&d| d > last_reset) {
            if !irqs.get(v).is_some_and(|l| l.iter().any(|&c| c > d)) {
                return Err(format!(
                    "vector {v}: the completion written at cycle {d} was never followed by an interrupt{}",
                    if tracing::enabled!(tracing::Level::TRACE) { format!(" (irqs {irqs:?}, completions {done:?}, end {})", env.sim.cycle()) } else { String::new() }
                ));
            }
        }
    }
    Ok(())
}

pub(super) fn trace(env: &Env) -> String {
    if !tracing::enabled!(tracing::Level::TRACE) {
        return String::new();
    }
    let mut out = String::from("\n");
    for t in &env.mem.borrow().log {
        out += &format!(
            "  axi {:?} {:#x} len {} acc {} done {} {:?}\n",
            t.dir, t.req.addr, t.req.len, t.accepted, t.done, t.resp
        );
    }
    for (c, q, s) in &env.backend().borrow().received {
        out += &format!(
            "  io_cmd {c} sq {q} cid {}\n",
            u16::from_le_bytes([s[2], s[3]])
        );
    }
    for r in &env.host.rings {
        out += &format!(
            "  ring q{} cq {} {:#x}.. size {} doorbells {:?}\n",
            r.qid, r.cq, r.range.start, r.size, r.doorbells
        );
    }
    out
}

/// BAR0 registers before bring-up: CAP, VS, INTMS/INTMC, CC.SHN -> CSTS.SHST, a reserved
/// register, and a doorbell write while the controller is disabled (ignored, not a fault).
pub(super) fn check_registers(env: &mut Env) -> Result<(), String> {
    let cap_lo = env.bar_read(0)?;
    let cap_hi = env.bar_read(4)?;
    let want_lo = (env.host.model.max_entries - 1) | 1 << 16 | 1 << 17;
    if cap_lo & 0x3_ffff != want_lo || cap_hi >> 5 & 1 != 1 || cap_hi & 0xf != env.stride {
        return Err(format!(
            "CAP is {cap_hi:08x}_{cap_lo:08x}: MQES, CQR, AMS (WRR), CSS (NVM) or DSTRD wrong"
        ));
    }
    let vs = env.bar_read(8)?;
    if vs != 0x0001_0400 {
        return Err(format!("VS is {vs:#x}, expected 0x10400"));
    }
    env.bar_write(0x0c, 0x8000_0005)?;
    env.bar_write(0x10, 0x0000_0004)?;
    let (ms, mc) = (env.bar_read(0x0c)?, env.bar_read(0x10)?);
    if ms != 0x8000_0001 || mc != 0x8000_0001 {
        return Err(format!(
            "INTMS/INTMC read {ms:#x}/{mc:#x} after set 0x80000005, clear 4"
        ));
    }
    env.bar_write(0x10, 0xffff_ffff)?;
    env.bar_write(0x14, 1 << 14)?;
    env.run(4)?;
    let csts = env.bar_read(0x1c)?;
    if csts != 2 << 2 {
        return Err(format!(
            "CSTS is {csts:#x} after CC.SHN = 01b, expected SHST 10b and RDY 0"
        ));
    }
    env.bar_write(0x14, 0)?;
    if env.bar_read(0x1c)? != 0 || env.bar_read(0x18)? != 0 {
        return Err("CSTS not 0 after CC.SHN cleared, or the reserved register 18h not 0".into());
    }
    let a = env.doorbell_addr(0, false);
    env.bar_write(a, 1)?;
    Ok(())
}
