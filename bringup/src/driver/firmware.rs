//! The chip's firmware side of `bringup setup`: the TCP/IP engine programmed and its
//! connection opened and waited for, QoS's namespace and grant and the routing table, and the
//! admin commands the chip hands to firmware, executed through `nvme_csr` (Create I/O
//! CQ/SQ, Identify). The host's side (the controller, its queues, the I/O commands) is in
//! `mod.rs`.

use super::*;

impl Driver<'_> {
    pub(super) fn program_tcp(&mut self, o: &SetupOptions) -> Result<(u32, &'static str), Error> {
        let (khz, src) = clock_khz(self.br, self.map)?;
        let tcp = "tcp_csr";
        self.fw_write("chip_csr", "tcp_ctrl", &[("run", 0)])?;
        self.fw_write("chip_csr", "tcp_dgst", &[("hdgst", 0), ("ddgst", 0)])?;
        // Every connection closed first: an RST to the old peer of a synchronized one.
        for c in 0..self.chip.tcp_conns {
            let st = self.fw_field(tcp, &format!("c{c}_state"), "state")?;
            if st != 0 {
                self.fw_write(tcp, &format!("c{c}_ctrl"), &[("abort", 1)])?;
            }
        }
        for c in 0..self.chip.tcp_conns {
            let start = Instant::now();
            loop {
                let st = self.fw_field(tcp, &format!("c{c}_state"), "state")?;
                if st == 0 {
                    break;
                }
                if start.elapsed() > Duration::from_secs(5) {
                    return Err(Error::Board(format!(
                        "TCP connection {c} stays in {} after abort",
                        state_name(st)
                    )));
                }
            }
        }
        let m = o.mac;
        self.fw_write(
            tcp,
            "mac_hi",
            &[("value", u64::from(u16::from_be_bytes([m[0], m[1]])))],
        )?;
        self.fw_write(
            tcp,
            "mac_lo",
            &[(
                "value",
                u64::from(u32::from_be_bytes([m[2], m[3], m[4], m[5]])),
            )],
        )?;
        self.fw_write(tcp, "ip", &[("value", u64::from(ip_word(o.local_ip)))])?;
        let mask = if o.prefix == 0 {
            0
        } else {
            u32::MAX << (32 - u32::from(o.prefix))
        };
        self.fw_write(tcp, "netmask", &[("value", u64::from(mask))])?;
        self.fw_write(tcp, "gateway", &[("value", u64::from(ip_word(o.gateway)))])?;
        // Timers in ticks of 1 ms.
        self.fw_write(tcp, "tick", &[("cycles", u64::from(khz))])?;
        self.fw_write(tcp, "rto_min", &[("ticks", 200)])?;
        self.fw_write(tcp, "rto_max", &[("ticks", 60_000)])?;
        self.fw_write(tcp, "rto_init", &[("ticks", 1000)])?;
        self.fw_write(tcp, "retries", &[("tcp", 8), ("arp", 6)])?;
        self.fw_write(tcp, "arp_retry", &[("ticks", 500)])?;
        self.fw_write(tcp, "time_wait", &[("ticks", 100)])?;
        let (k0, k1) = isn_key();
        self.fw_write(tcp, "isn_key0", &[("value", u64::from(k0))])?;
        self.fw_write(tcp, "isn_key1", &[("value", u64::from(k1))])?;
        self.fw_write(tcp, "mss", &[("bytes", 1460)])?;
        // A fresh local port each setup: a target that still holds the old connection (the
        // chip was reset without an RST) does not see the new SYN as part of it.
        let local = 49152 + (k0 % 16384) as u64;
        let c = CONN;
        self.fw_write(
            tcp,
            &format!("c{c}_remote_ip"),
            &[("value", u64::from(ip_word(o.target)))],
        )?;
        self.fw_write(
            tcp,
            &format!("c{c}_ports"),
            &[("remote", u64::from(o.port)), ("local", local)],
        )?;
        (self.say)(&format!(
            "      chip {}/{} MAC {} gateway {}, connection {c}: local port {local} -> {}:{}",
            o.local_ip,
            o.prefix,
            m.iter()
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(":"),
            o.gateway,
            o.target,
            o.port
        ));
        Ok((khz, src))
    }

    pub(super) fn program_qos_route(&mut self, blocks: u64) -> Result<(), Error> {
        let q = "qos_csr";
        self.fw_word(q, "ns1_size_lo", blocks as u32)?;
        self.fw_word(q, "ns1_size_hi", (blocks >> 32) as u32)?;
        // Grant 0: SQ 1, namespace 1, read and write, every LBA. The other grants unused.
        self.fw_word(q, "grant0_first_lo", 0)?;
        self.fw_word(q, "grant0_first_hi", 0)?;
        self.fw_word(q, "grant0_last_lo", u32::MAX)?;
        self.fw_word(q, "grant0_last_hi", u32::MAX >> 1)?;
        self.fw_write(
            q,
            "grant0_ctrl",
            &[
                ("read", 1),
                ("write", 1),
                ("nsid", 1),
                ("sqid", u64::from(IO_QID)),
            ],
        )?;
        for g in 1..self.chip.qos_grants {
            self.fw_write(q, &format!("grant{g}_ctrl"), &[("sqid", 0)])?;
        }
        self.fw_write(q, "ctrl", &[("enable", 1)])?;
        // Routing: unbind every SQ (binding steals a channel), then SQ 1 to connection 0.
        let ch = "chip_csr";
        self.fw_write(ch, "route_err", &[("bad_sqid", 1), ("bad_channel", 1)])?;
        for y in 1..=self.chip.qos_queues {
            self.fw_write(ch, "route_sel", &[("sqid", u64::from(y))])?;
            self.fw_write(ch, "route_set", &[("entry", 0)])?;
        }
        let entry = route_entry(CONN);
        self.fw_write(ch, "route_sel", &[("sqid", u64::from(IO_QID))])?;
        self.fw_write(ch, "route_set", &[("entry", u64::from(entry))])?;
        let err = self.fw_read(ch, "route_err")?;
        if err != 0 {
            return Err(Error::Board(format!(
                "chip_csr.route_err reads 0x{err:x} after binding SQ 1 to NVMe/TCP connection {CONN} (bit 0 bad SQ id, bit 1 bad channel)"
            )));
        }
        let got = self.fw_read(ch, "route_get")?;
        if got != entry {
            return Err(Error::Board(format!(
                "chip_csr.route_get of SQ 1 reads 0x{got:08x}, firmware wrote 0x{entry:08x}"
            )));
        }
        Ok(())
    }

    /// Opens connection 0 and waits (wall clock, bounded) for TCP ESTABLISHED and then the
    /// NVMe/TCP engine's ICResp; each TCP state reached is printed, and a failure names the
    /// state or the reason the engine gives.
    pub(super) fn connect(&mut self, o: &SetupOptions) -> Result<(), Error> {
        let tcp = "tcp_csr";
        let c = CONN;
        let sreg = format!("c{c}_state");
        // `failed` and `reason` still tell of the connection before this one until the new
        // one fails: a failure is this connection's once it left CLOSED, or once its ISS (a
        // fresh key and port each setup) is not the old one.
        let iss_reg = format!("c{c}_iss");
        let iss0 = self.fw_read(tcp, &iss_reg)?;
        self.fw_write(tcp, &format!("c{c}_ctrl"), &[("open", 1)])?;
        self.fw_write("chip_csr", "tcp_ctrl", &[("run", 1)])?;
        let start = Instant::now();
        let mut last = u32::MAX;
        let mut left_closed = false;
        loop {
            let v = self.fw_read(tcp, &sreg)?;
            let st = self.chip.get(tcp, &sreg, "state", v)?;
            let failed = self.chip.get(tcp, &sreg, "failed", v)? == 1;
            if st != last {
                (self.say)(&format!(
                    "      {:>6.2} s  TCP {}",
                    start.elapsed().as_secs_f64(),
                    state_name(st)
                ));
                last = st;
            }
            left_closed |= st != 0;
            if failed && st == 0 && !left_closed {
                left_closed = self.fw_read(tcp, &iss_reg)? != iss0;
            }
            if failed && st == 0 && left_closed {
                let reason = self.chip.get(tcp, &sreg, "reason", v)?;
                return Err(Error::Board(match reason {
                    1 => format!(
                        "the target refused the connection (RST received): is an NVMe/TCP target listening on {}:{}?",
                        o.target, o.port
                    ),
                    2 => format!(
                        "no answer from {}:{} (the retry limit was reached after {} RTO expiries)",
                        o.target, o.port,
                        self.chip.get(tcp, &sreg, "retries", v)?
                    ),
                    3 => format!(
                        "no ARP answer for {} (the {}): check the cable, the link and the addresses",
                        if o.gateway.is_unspecified() || same_net(o) { o.target } else { o.gateway },
                        if o.gateway.is_unspecified() || same_net(o) { "target" } else { "gateway" }
                    ),
                    _ => "the connection was aborted".to_string(),
                }));
            }
            if st == 4 {
                break;
            }
            if start.elapsed() > o.connect_timeout {
                return Err(Error::Board(format!(
                    "timeout after {} s in TCP state {}{}",
                    o.connect_timeout.as_secs(),
                    state_name(st),
                    match st {
                        1 => ": no ARP answer yet",
                        3 => ": no SYN-ACK from the target yet",
                        0 => ": the connection never left CLOSED (open not taken)",
                        _ => "",
                    }
                )));
            }
        }
        // NVMe/TCP: ICReq sent once TCP is up; ICResp accepted or the connection dead.
        loop {
            let v = self.fw_read("chip_csr", "tcp_conn")?;
            let up = self.chip.get("chip_csr", "tcp_conn", "connected", v)? >> c & 1;
            let dead = self.chip.get("chip_csr", "tcp_conn", "dead", v)? >> c & 1;
            if dead == 1 {
                let st = self.fw_field(tcp, &sreg, "state")?;
                return Err(Error::Board(format!(
                    "the NVMe/TCP connection ended before its ICResp was accepted (chip_csr.tcp_conn 0x{v:08x}, TCP {}): a TermReq, or the TCP connection failed; check the target's log",
                    state_name(st)
                )));
            }
            if up == 1 {
                (self.say)(&format!(
                    "      {:>6.2} s  NVMe/TCP ICResp accepted",
                    start.elapsed().as_secs_f64()
                ));
                return Ok(());
            }
            if start.elapsed() > o.connect_timeout {
                return Err(Error::Board(format!(
                    "timeout after {} s: TCP is established but no ICResp was accepted (chip_csr.tcp_conn 0x{v:08x})",
                    o.connect_timeout.as_secs()
                )));
            }
        }
    }

    /// Firmware: waits for the chip to offer the admin command `cid`, takes it and answers.
    pub(super) fn serve_admin(&mut self, cid: u16) -> Result<(), Error> {
        let start = Instant::now();
        let (sqid, sqe) = loop {
            if let Some(x) = crate::admin_pending(self.br, self.map)? {
                break x;
            }
            if start.elapsed() > self.cmd_timeout {
                return Err(Error::Board(format!(
                    "the chip never offered the admin command (CID {cid}) to firmware within {} s: no SQE fetch (bringup_csr.admin_status.cmd_valid stays 0)",
                    self.cmd_timeout.as_secs()
                )));
            }
        };
        let sqe = Sqe(sqe);
        self.br.write(self.map.board_reg("admin_pop"), 1)?;
        if sqid != 0 || sqe.cid() != cid {
            return Err(Error::Board(format!(
                "firmware was offered SQ {sqid} CID {} ({}), expected the admin command CID {cid}",
                sqe.cid(),
                crate::describe_sqe(sqid, &sqe.0)
            )));
        }
        let (status, dw0) = self.execute_admin(&sqe)?;
        let b = |n: &str| self.map.board_reg(n);
        let (s, c, stt, d, p) = (
            b("admin_cpl_sqid"),
            b("admin_cpl_cid"),
            b("admin_cpl_status"),
            b("admin_cpl_dw0"),
            b("admin_cpl_push"),
        );
        self.br.write(s, 0)?;
        self.br.write(c, u32::from(cid))?;
        self.br.write(stt, u32::from(status.0))?;
        self.br.write(d, dw0)?;
        self.br.write(p, 1)?;
        let start = Instant::now();
        while self.br.read(self.map.board_reg("admin_status"))? & 2 != 0 {
            if start.elapsed() > self.cmd_timeout {
                return Err(Error::Board(
                    "the chip never took firmware's completion (bringup_csr.admin_status.cpl_busy stays 1)".into(),
                ));
            }
        }
        Ok(())
    }

    /// What firmware does for an admin command: Identify from what the chip reports, queue
    /// creation and deletion through `nvme_csr`'s queue registers; other opcodes refused.
    pub(super) fn execute_admin(&mut self, sqe: &Sqe) -> Result<(Status, u32), Error> {
        let cdw10 = sqe.0[10];
        let cdw11 = sqe.0[11];
        let qid = cdw10 as u16;
        let size = cdw10 >> 16;
        let cap = self.bar_read(0)?;
        let mqes = cap & 0xFFFF;
        let bad_qid = qid == 0 || u32::from(qid) > self.chip.io_queues;
        let bad_size = !(1..=mqes).contains(&size);
        let invalid_qid = Status::new(1, 0x01);
        let invalid_size = Status::new(1, 0x02);
        match sqe.opcode() {
            opc::IDENTIFY => {
                let cns = cdw10 & 0xFF;
                let data = match cns {
                    1 => {
                        let mdts = self.fw_field("nvme_csr", "limits", "mdts")? as u8;
                        let vs = self.bar_read(8)?;
                        let id = self.br.read(self.map.info_reg("id"))?;
                        identify_controller(&ControllerFacts {
                            serial: format!("{:016x}", self.map.config_hash),
                            model: format!("nvmeof_offload bring-up ({})", self.map.board.name),
                            firmware: format!("{:08x}", id),
                            mdts,
                            cntlid: 1,
                            version: vs,
                            namespaces: 1,
                        })
                    }
                    0 if sqe.0[1] == 1 => {
                        let lo = self.fw_read("qos_csr", "ns1_size_lo")?;
                        let hi = self.fw_read("qos_csr", "ns1_size_hi")?;
                        identify_namespace(u64::from(hi) << 32 | u64::from(lo))
                    }
                    0 => return Ok((Status::new(0, 0x0B), 0)),
                    _ => return Ok((Status::new(0, 0x02), 0)),
                };
                let prp1 = sqe.prp1();
                if prp1 & u64::from(PAGE - 1) != 0
                    || prp1 + u64::from(PAGE) > u64::from(self.map.mem_bytes())
                {
                    // Firmware writes whole pages inside the board's memory only.
                    return Ok((Status::new(0, 0x04), 0));
                }
                let words: Vec<u32> = data
                    .chunks(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                self.mem_write(prp1 as u32, &words)?;
                Ok((Status::SUCCESS, 0))
            }
            opc::CREATE_IO_CQ | opc::CREATE_IO_SQ => {
                if bad_qid {
                    return Ok((invalid_qid, 0));
                }
                if bad_size {
                    return Ok((invalid_size, 0));
                }
                if cdw11 & 1 == 0 {
                    // Not physically contiguous: the chip walks no PRP list for a queue.
                    return Ok((Status::new(0, 0x02), 0));
                }
                let cq = sqe.opcode() == opc::CREATE_IO_CQ;
                if cq && (cdw11 >> 16) != 0 {
                    return Ok((Status::new(1, 0x08), 0));
                }
                let n = "nvme_csr";
                let base = sqe.prp1();
                self.fw_write(n, "q_base_lo", &[("addr", (base & 0xFFFF_FFFF) >> 12)])?;
                self.fw_write(n, "q_base_hi", &[("addr", base >> 32)])?;
                if cq {
                    self.fw_write(
                        n,
                        "q_cfg",
                        &[
                            ("size", u64::from(size)),
                            ("ien", u64::from(cdw11 >> 1 & 1)),
                        ],
                    )?;
                    self.fw_write(n, "q_bind", &[("vector", u64::from(cdw11 >> 16))])?;
                    self.fw_write(n, "q_cmd", &[("qid", u64::from(qid)), ("op", 2)])?;
                } else {
                    let cqid = cdw11 >> 16;
                    if cqid == 0 || cqid > self.chip.io_queues {
                        return Ok((Status::new(1, 0x00), 0));
                    }
                    self.fw_write(
                        n,
                        "q_cfg",
                        &[
                            ("size", u64::from(size)),
                            ("prio", u64::from(cdw11 >> 1 & 3)),
                        ],
                    )?;
                    self.fw_write(n, "q_bind", &[("cqid", u64::from(cqid))])?;
                    self.fw_write(n, "q_cmd", &[("qid", u64::from(qid)), ("op", 1)])?;
                }
                self.wait_nvme_idle()?;
                Ok((Status::SUCCESS, 0))
            }
            opc::DELETE_IO_SQ | opc::DELETE_IO_CQ => {
                if bad_qid {
                    return Ok((invalid_qid, 0));
                }
                let op = if sqe.opcode() == opc::DELETE_IO_SQ {
                    3
                } else {
                    4
                };
                self.fw_write("nvme_csr", "q_cmd", &[("qid", u64::from(qid)), ("op", op)])?;
                self.wait_nvme_idle()?;
                Ok((Status::SUCCESS, 0))
            }
            _ => Ok((Status::new(0, 0x01), 0)),
        }
    }
}
