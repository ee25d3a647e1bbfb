//! Firmware and host steps of a run: what firmware programs (at power-on and after a hardware
//! reset), the waits for the NVMe/TCP connections and for quiet queues, the bring-up after a
//! reset, and the restarts after the RoCE target died or an NVMe/TCP target killed a
//! connection.

use super::golden::route_word;
use super::*;

/// What firmware programs, at power-on and again after every hardware reset (every CSR is
/// then at its reset value).
pub(super) struct Program<'a> {
    pub(super) input: &'a Input,
    pub(super) confs: &'a [QpConf],
    pub(super) mtu_code: u32,
    pub(super) grants: &'a BTreeMap<u16, Grant>,
    pub(super) writes: &'a [(u16, u32)],
    pub(super) table: &'a BTreeMap<u16, Chan>,
}

impl Program<'_> {
    /// Firmware finds the blocks, programs `chip_csr.tcp_dgst` (the engine held in reset by
    /// `tcp_ctrl.run`), QoS's namespaces and grants, the RoCE QPs and the routing table, and
    /// checks what it reads back.
    pub(super) fn run<T: Dut>(
        &self,
        env: &mut Env<T>,
        link: &Rc<RefCell<RoceLink>>,
    ) -> Result<(), String> {
        let (input, confs, mtu_code, grants, writes, table) = (
            self.input,
            self.confs,
            self.mtu_code,
            self.grants,
            self.writes,
            self.table,
        );
        let nvme_base = chip_csr::MAP_NVME_BASE_RESET;
        let mut bus = env.fw_bus.mmio(&mut env.sim);
        // The digests every NVMe/TCP connection asks for in its ICReq: the engine is held in
        // reset while firmware sets them, as the contract says (a connection starts, ICReq
        // and all, when tcp_ctrl.run rises and its TCP connection is up). The TCP/IP engine
        // under it gets its addresses and timers, and opens every connection.
        bus.write32(chip_csr::TCP_CTRL, 0);
        bus.write32(chip_csr::TCP_DGST, u32::from(input.tcp_dgst));
        let conns =
            crate::suites::chip::session::channels(crate::suites::chip::session::Transport::Tcp);
        tcp::open_all(env, conns);
        let mut bus = env.fw_bus.mmio(&mut env.sim);
        bus.write32(chip_csr::TCP_CTRL, 1);
        let map: Vec<u32> = [
            chip_csr::MAP_NVME,
            chip_csr::MAP_QOS,
            chip_csr::MAP_ROCE,
            chip_csr::MAP_CHIP,
            chip_csr::MAP_NVME_TCP,
            chip_csr::MAP_TCP,
        ]
        .iter()
        .map(|&a| bus.read32(a))
        .collect();
        let want = [
            nvme_base,
            chip_csr::MAP_QOS_BASE_RESET,
            chip_csr::MAP_ROCE_BASE_RESET,
            0,
            chip_csr::MAP_NVME_TCP_BASE_RESET,
            chip_csr::MAP_TCP_BASE_RESET,
        ];
        if map != want {
            return Err(format!(
                "chip_csr map reads {map:#x?}, the generated map says {want:#x?}"
            ));
        }
        let (qos, roce) = (map[1], map[2]);
        let qreg = |n: &str| {
            qos + qos_csr::REGISTERS
                .iter()
                .find(|r| r.0 == n)
                .unwrap_or_else(|| panic!("qos_csr has no {n}"))
                .1
        };
        bus.write32(qreg("ns1_size_lo"), BLOCKS as u32);
        if config::QOS_NAMESPACES >= 2 {
            bus.write32(qreg("ns2_size_lo"), NS2_BLOCKS as u32);
        }
        for (g, (y, nsid, r, w, first, last)) in grant_table(grants).into_iter().enumerate() {
            let p = format!("grant{g}");
            bus.write32(qreg(&format!("{p}_first_lo")), first as u32);
            bus.write32(qreg(&format!("{p}_first_hi")), (first >> 32) as u32);
            bus.write32(qreg(&format!("{p}_last_lo")), last as u32);
            bus.write32(qreg(&format!("{p}_last_hi")), (last >> 32) as u32);
            bus.write32(
                qreg(&format!("{p}_ctrl")),
                u32::from(r) | u32::from(w) << 1 | nsid << 8 | u32::from(y) << 16,
            );
        }
        bus.write32(qreg("ctrl"), 1);
        // A finite retry limit where the target may die (7: none).
        let retry_limit = if input.faults.iter().any(|f| matches!(f.1, Fault::RoceDies)) {
            5
        } else {
            7
        };
        let mut rbus = env.fw_bus.mmio(&mut env.sim).at(u64::from(roce));
        for (i, c) in confs.iter().enumerate() {
            program_qp(&mut rbus, i, c, mtu_code, retry_limit << 24 | RETRY_TIMEOUT);
            rbus.write32(crate::suites::rdma::engine::reg(&format!("qp{i}_ctrl")), 1);
        }
        link.borrow_mut().target.icd_max = rbus.read32(roce_csr::IN_CAPSULE) as usize;
        let mut bus = env.fw_bus.mmio(&mut env.sim);
        // A refused write (a QP the chip does not have) changes nothing and is reported.
        bus.write32(chip_csr::ROUTE_SEL, 1);
        bus.write32(chip_csr::ROUTE_SET, 1 << 31 | 0x7f);
        let err = bus.read32(chip_csr::ROUTE_ERR);
        if err != 2 {
            return Err(format!(
                "route_err reads {err:#x} after binding SQ 1 to QP 127 (expected bad_channel)"
            ));
        }
        bus.write32(chip_csr::ROUTE_ERR, 3);
        // The same for a connection the chip does not have.
        bus.write32(chip_csr::ROUTE_SET, 1 << 31 | 1 << 16 | 0x7f);
        let err = bus.read32(chip_csr::ROUTE_ERR);
        if err != 2 {
            return Err(format!(
            "route_err reads {err:#x} after binding SQ 1 to NVMe/TCP connection 127 (expected bad_channel)"
        ));
        }
        bus.write32(chip_csr::ROUTE_ERR, 3);
        for &(y, e) in writes.iter() {
            bus.write32(chip_csr::ROUTE_SEL, u32::from(y));
            bus.write32(chip_csr::ROUTE_SET, e);
        }
        for y in 1..=field_u16(chip_csr::INFO_QUEUES_RESET) {
            bus.write32(chip_csr::ROUTE_SEL, u32::from(y));
            let got = bus.read32(chip_csr::ROUTE_GET);
            let want = route_word(table, y);
            if got != want {
                return Err(format!(
                    "route_get of SQ {y} reads {got:#x}, the contract says {want:#x}"
                ));
            }
        }
        let dgst = bus.read32(chip_csr::TCP_DGST);
        if dgst != u32::from(input.tcp_dgst) {
            return Err(format!(
                "chip_csr.tcp_dgst reads {dgst:#x}, firmware wrote {:#x}",
                input.tcp_dgst
            ));
        }
        wait_tcp_connections(env)
    }
}

/// Firmware waits, reading `chip_csr.tcp_conn`, until every NVMe/TCP connection either took its
/// ICResp or ended (a hostile target's); what it reads must match the status outputs.
pub(crate) fn wait_tcp_connections<T: Dut>(env: &mut Env<T>) -> Result<(), String> {
    let n = crate::suites::chip::session::channels(crate::suites::chip::session::Transport::Tcp);
    let all = (1u32 << n) - 1;
    let start = env.sim.cycle();
    loop {
        let v = env.fw_bus.mmio(&mut env.sim).read32(chip_csr::TCP_CONN);
        let (up, dead) = (v & 0xffff, v >> 16);
        let (o_up, o_dead) = (
            env.sim.signal("tcp_connected_o").get() as u32,
            env.sim.signal("tcp_dead_o").get() as u32,
        );
        // The register is sampled a few cycles before the outputs: a bit may have risen since.
        if up & !o_up != 0 || dead & !o_dead != 0 {
            return Err(format!(
                "chip_csr.tcp_conn reads {v:#x}, but tcp_connected_o is {o_up:#x} and tcp_dead_o {o_dead:#x}"
            ));
        }
        if (up | dead) & all == all {
            return Ok(());
        }
        if env.sim.cycle() - start > 100_000 {
            let link = env.fw_bus.mmio(&mut env.sim).read32(chip_csr::TCP_LINK);
            return Err(format!(
                "the NVMe/TCP connections never came up: chip_csr.tcp_conn {v:#x}, tcp_link {link:#x} (TCP up bits 15:0, failed 31:16)"
            ));
        }
    }
}

/// After a reset hit: the commands the host still waited for are dropped (their CQEs may
/// never come).
pub(super) fn mark_dropped<T: Dut>(env: &Env<T>, sent: &mut [Sent]) {
    let out: BTreeSet<(u16, u16)> = env
        .host
        .model
        .sqs
        .iter()
        .flat_map(|(q, s)| s.outstanding.keys().map(move |c| (*q, *c)))
        .collect();
    for s in sent.iter_mut() {
        s.dropped |= out.contains(&(s.sqid, s.cid));
    }
}

/// Host memory's regions as they are now: nothing may change them after a reset.
pub(super) fn snapshot<T: Dut>(env: &Env<T>, regions: &[(u64, Vec<u8>)]) -> Vec<(u64, Vec<u8>)> {
    regions
        .iter()
        .map(|(a, r)| (*a, env.mem.borrow().mem.read_vec(*a, r.len())))
        .collect()
}

/// The host's bring-up after a `what` (controller or hardware) reset: the controller enabled,
/// the same I/O queue pairs created, the AERs armed again.
pub(super) fn bring_up_again<T: Dut>(
    env: &mut Env<T>,
    pairs: &[Pair],
    queues: u16,
    live: &[u16],
    what: &str,
) -> Result<(), String> {
    env.enable(32, 32, false)?;
    for (i, p) in pairs.iter().take(usize::from(queues)).enumerate() {
        let vectors = env.vectors;
        create_pair(env, i as u16 + 1, p, vectors)?;
    }
    rearm_aer(env)?;
    let again: Vec<u16> = (1..=queues)
        .filter(|y| env.host.model.sqs.contains_key(y))
        .collect();
    if again != live {
        return Err(format!(
            "after the {what} reset the host created the queues {again:?}, before it {live:?}"
        ));
    }
    Ok(())
}

/// The region of `regions` holding the buffer piece of `n` bytes at `addr`, and the piece's
/// offset in it.
pub(super) fn piece(
    regions: &mut [(u64, Vec<u8>)],
    addr: u64,
    n: usize,
) -> Result<(&mut Vec<u8>, usize), String> {
    let r = regions
        .iter_mut()
        .find(|r| r.0 <= addr && addr + n as u64 <= r.0 + r.1.len() as u64)
        .ok_or("a buffer piece outside its region")?;
    Ok((&mut r.1, (addr - r.0) as usize))
}

/// Runs until no queue bound to a channel `on` accepts has a command outstanding (the host
/// consuming completions meanwhile); `Ok(false)` if that takes more than `limit` cycles.
pub(super) fn drain<T: Dut>(
    env: &mut Env<T>,
    table: &BTreeMap<u16, Chan>,
    on: impl Fn(&Chan) -> bool,
    limit: u64,
) -> Result<bool, String> {
    let sqs: Vec<u16> = table
        .iter()
        .filter(|(_, c)| on(c))
        .map(|(y, _)| *y)
        .collect();
    let start = env.sim.cycle();
    while sqs.iter().any(|y| {
        env.host
            .model
            .sqs
            .get(y)
            .is_some_and(|q| !q.outstanding.is_empty())
    }) {
        env.consume_all()?;
        env.step()?;
        if env.sim.cycle() - start > limit {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The RoCE target died: the host waits for every command of the queues on RoCE to complete
/// (the QPs give up after their retry limit, or firmware disables them once the keep-alive
/// expires: 22h), then firmware resets each QP (`ctrl.en` 0
/// then 1, from the same connection registers) and the target's side of it, and the target
/// is reachable again.
pub(super) fn restart_roce<T: Dut>(
    env: &mut Env<T>,
    link: &Rc<RefCell<RoceLink>>,
    table: &BTreeMap<u16, Chan>,
    qps: usize,
) -> Result<(), String> {
    let roce = chip_csr::MAP_ROCE_BASE_RESET;
    let ctrl = |q: usize| crate::suites::rdma::engine::reg(&format!("qp{q}_ctrl"));
    // A QP gives up after its retry limit only while a capsule is unacknowledged; a command
    // whose capsule the target acknowledged before dying waits for a response that never
    // comes. The host's keep-alive then expires (as an NVMe-oF host's would) and firmware
    // disables the QPs, which completes what they hold with 22h.
    if !drain(env, table, |c| matches!(c, Chan::Roce(_)), KEEP_ALIVE)? {
        let mut rbus = env.fw_bus.mmio(&mut env.sim).at(u64::from(roce));
        for q in 0..qps {
            rbus.write32(ctrl(q), 0);
        }
        if !drain(env, table, |c| matches!(c, Chan::Roce(_)), 50_000)? {
            return Err("the RoCE target died and the commands of the queues on RoCE never completed, neither after the retry limit (5) nor with their QPs disabled".to_string());
        }
    }
    let mut rbus = env.fw_bus.mmio(&mut env.sim).at(u64::from(roce));
    for q in 0..qps {
        rbus.write32(ctrl(q), 0);
        link.borrow_mut().target.reset_qp(q);
        rbus.write32(ctrl(q), 1);
    }
    link.borrow_mut().dead = false;
    Ok(())
}

/// Firmware restarts the NVMe/TCP engine after a target killed a connection, as the contract
/// says: once no queue bound to a connection has a command in flight (the dead connection's
/// complete with 22h), `tcp_ctrl.run` 0 then 1; the TCP engine underneath opens new
/// connections (fresh targets) and every connection must come up again.
pub(super) fn restart_tcp<T: Dut>(
    env: &mut Env<T>,
    tcp_link: &Rc<RefCell<TcpLink>>,
    table: &BTreeMap<u16, Chan>,
) -> Result<(), String> {
    if !drain(env, table, |c| matches!(c, Chan::Tcp(_)), 300_000)? {
        return Err(format!(
            "a target killed its NVMe/TCP connection (tcp_dead_o {:#x}) and the commands of the queues on NVMe/TCP never completed",
            env.sim.signal("tcp_dead_o").get()
        ));
    }
    // NVMe/TCP held in reset, every TCP connection aborted (an RST to the old peer) and,
    // once the remote side listens anew, opened again; then NVMe/TCP runs.
    let n = tcp_link.borrow().targets.len();
    env.fw_bus.mmio(&mut env.sim).write32(chip_csr::TCP_CTRL, 0);
    let mut tbus = env
        .fw_bus
        .mmio(&mut env.sim)
        .at(u64::from(chip_csr::MAP_TCP_BASE_RESET));
    for c in 0..n {
        tbus.write32(crate::suites::tcp::creg(c, 8), 4);
    }
    // `open` counts only in CLOSED: wait for each abort's RST to go out.
    for c in 0..n {
        let mut tries = 0;
        while tbus.read32(crate::suites::tcp::creg(c, 12)) & 0xf != 0 {
            tries += 1;
            if tries > 2000 {
                return Err(format!(
                    "TCP connection {c} never reached CLOSED after abort (state {:#x})",
                    tbus.read32(crate::suites::tcp::creg(c, 12))
                ));
            }
        }
    }
    tracing::debug!("tcp_ctrl.run 0 -> 1: new connections");
    tcp_link.borrow_mut().restart();
    for c in 0..n {
        tbus.write32(crate::suites::tcp::creg(c, 8), 1);
    }
    env.fw_bus.mmio(&mut env.sim).write32(chip_csr::TCP_CTRL, 1);
    let all = (1u64 << n) - 1;
    let start = env.sim.cycle();
    while env.sim.signal("tcp_connected_o").get() != all || env.sim.signal("tcp_dead_o").get() != 0
    {
        env.consume_all()?;
        env.step()?;
        if env.sim.cycle() - start > 50_000 {
            let (up, dead) = (
                env.sim.signal("tcp_connected_o").get(),
                env.sim.signal("tcp_dead_o").get(),
            );
            let mut tbus = env
                .fw_bus
                .mmio(&mut env.sim)
                .at(u64::from(chip_csr::MAP_TCP_BASE_RESET));
            let states: Vec<u32> = (0..n)
                .map(|c| tbus.read32(crate::suites::tcp::creg(c, 12)))
                .collect();
            let t = tcp_link.borrow();
            return Err(format!(
                "after tcp_ctrl.run 0 -> 1 the NVMe/TCP connections never came up again: tcp_connected_o {up:#x}, tcp_dead_o {dead:#x}, TCP state CSRs {states:#x?}, targets' violations {:?}, TermReqs {:?}",
                t.targets.iter().map(|x| x.violations.first()).collect::<Vec<_>>(),
                t.targets.iter().map(|x| &x.term_reqs).collect::<Vec<_>>(),
            ));
        }
    }
    Ok(())
}
