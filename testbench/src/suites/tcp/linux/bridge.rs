//! The bridge between the engine's Ethernet port and the TAP device (faults on TCP frames, the
//! pcap), and what `run_case` watches on it: the golden check, the kernel's late RSTs and last
//! segments.

use super::*;

/// The kernel's last TCP segments per connection as the engine got them (after the bridge's
/// faults), sequence numbers relative to the kernel's ISN: what a failure report shows.
pub(super) struct Trail {
    pub(super) isn: Vec<Option<u32>>,
    pub(super) last: Vec<std::collections::VecDeque<(u64, i64, usize, u8)>>,
}

impl Trail {
    pub(super) fn new(n: usize) -> Trail {
        Trail {
            isn: vec![None; n],
            last: vec![Default::default(); n],
        }
    }

    pub(super) fn note(&mut self, cycle: u64, f: &[u8]) {
        if !is_tcp(f) || f.len() < 54 {
            return;
        }
        let c =
            usize::from(u16::from_be_bytes([f[36], f[37]])).wrapping_sub(LOCAL_PORT_BASE as usize);
        if c >= self.isn.len() {
            return;
        }
        let seq = u32::from_be_bytes([f[38], f[39], f[40], f[41]]);
        let flags = f[47];
        if flags & 2 != 0 {
            self.isn[c] = Some(seq);
        }
        let ip_len = usize::from(u16::from_be_bytes([f[16], f[17]]));
        let len = ip_len.saturating_sub(20 + usize::from(f[46] >> 4) * 4);
        let rel = self.isn[c].map_or(-1, |i| i64::from(seq.wrapping_sub(i).wrapping_sub(1)));
        let l = &mut self.last[c];
        l.push_back((cycle, rel, len, flags));
        if l.len() > 40 {
            l.pop_front();
        }
    }

    pub(super) fn show(&self, c: usize) -> String {
        self.last[c]
            .iter()
            .map(|(t, o, l, f)| format!("({t}, {o}, {l}, {f:#04x})"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The kernel's RSTs after its side of a connection is gone. When the engine closes first,
/// the kernel's socket goes from LAST-ACK to CLOSED on the engine's ACK of its FIN; a copy of
/// an engine segment arriving after that (the bridge duplicates and reorders) finds no
/// connection, and RFC 9293 3.10.7.1 has the kernel answer it with `<SEQ=SEG.ACK><CTL=RST>`,
/// which the engine, in TIME-WAIT, takes (3.10.7.4: CLOSED, no failure). Such a RST is allowed;
/// any other is not.
#[derive(Default)]
pub(super) struct LateRsts {
    /// Per connection: the sequence number after the engine's FIN (as delivered to the kernel).
    pub(super) eng_fin: Vec<Option<u32>>,
    /// Per connection: the sequence number after the kernel's FIN, when that FIN acknowledged
    /// the engine's (the kernel closed second: LAST-ACK).
    pub(super) k_last_ack: Vec<Option<u32>>,
    /// Per connection: the kernel got the ACK of its FIN in LAST-ACK: its connection is gone.
    pub(super) gone: Vec<bool>,
    /// RSTs the kernel sent for a gone connection, as RFC 9293 3.10.7.1 says.
    pub(super) allowed: u32,
    /// Other RSTs from the kernel: (connection, sequence number, flags).
    pub(super) other: Vec<(usize, u32, u8)>,
}

impl LateRsts {
    pub(super) fn new(n: usize) -> LateRsts {
        LateRsts {
            eng_fin: vec![None; n],
            k_last_ack: vec![None; n],
            gone: vec![false; n],
            ..LateRsts::default()
        }
    }

    /// The connection, sequence number, ACK number, flags and sequence space of a TCP frame
    /// whose port `at` (34 source, 36 destination) is the engine's.
    pub(super) fn fields(&self, f: &[u8], at: usize) -> Option<(usize, u32, u32, u8, u32)> {
        if !is_tcp(f) || f.len() < 54 || f[14] != 0x45 {
            return None;
        }
        let c = usize::from(u16::from_be_bytes([f[at], f[at + 1]]))
            .wrapping_sub(LOCAL_PORT_BASE as usize);
        if c >= self.gone.len() {
            return None;
        }
        let seq = u32::from_be_bytes([f[38], f[39], f[40], f[41]]);
        let ack = u32::from_be_bytes([f[42], f[43], f[44], f[45]]);
        let ip_len = usize::from(u16::from_be_bytes([f[16], f[17]]));
        let plen = ip_len.saturating_sub(20 + usize::from(f[46] >> 4) * 4) as u32;
        let fl = f[47];
        Some((c, seq, ack, fl, plen + u32::from(fl & 1)))
    }

    /// An engine frame written to the TAP.
    pub(super) fn engine_frame(&mut self, f: &[u8]) {
        let Some((c, seq, ack, fl, len)) = self.fields(f, 34) else {
            return;
        };
        if fl & 1 != 0 {
            self.eng_fin[c] = Some(seq.wrapping_add(len));
        }
        if fl & 0x10 != 0 && self.k_last_ack[c] == Some(ack) {
            self.gone[c] = true;
        }
    }

    /// A kernel frame read from the TAP.
    pub(super) fn kernel_frame(&mut self, f: &[u8]) {
        let Some((c, seq, ack, fl, len)) = self.fields(f, 36) else {
            return;
        };
        if fl & 1 != 0 && fl & 0x10 != 0 && self.eng_fin[c] == Some(ack) {
            self.k_last_ack[c] = Some(seq.wrapping_add(len));
        }
        if fl & 4 != 0 {
            if self.gone[c] && fl == 4 && self.k_last_ack[c] == Some(seq) {
                self.allowed += 1;
            } else {
                self.other.push((c, seq, fl));
            }
        }
    }
}

/// An ARP frame's operation (1 request, 2 reply).
pub(super) fn arp_kind(f: &[u8]) -> Option<u8> {
    if f.len() >= 42 && f[12..14] == [8, 6] {
        Some(f[21])
    } else {
        None
    }
}

/// Wall time, microseconds since the Unix epoch: the pcap's timestamps (the kernel's timers run
/// in real time, so a capture shows them as they were).
pub(super) fn wall_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

pub(super) fn is_tcp(f: &[u8]) -> bool {
    f.len() >= 34 && f[12..14] == [8, 0] && f[23] == 6
}

/// What a case looks at as the bridge moves frames (every method defaults to nothing).
pub(in crate::suites::tcp) trait BridgeWatch {
    /// An engine frame off `m_axis`, before the bridge's faults.
    fn engine_frame(&mut self, _cycle: u64, _f: &[u8]) -> Result<(), String> {
        Ok(())
    }
    /// An engine frame written to the TAP.
    fn to_tap(&mut self, _f: &[u8]) {}
    /// A kernel frame read from the TAP, before the bridge's faults.
    fn kernel_frame(&mut self, _f: &[u8]) {}
    /// A kernel frame into `s_axis`, after the bridge's faults.
    fn to_engine(&mut self, _cycle: u64, _f: &[u8]) {}
}

/// The bridge between the engine's Ethernet port and the TAP device: every engine frame to
/// the TAP, every frame read from it into `s_axis` (padded to 60 bytes, as a MAC delivers
/// it), TCP frames through a [`Lossy`] link each way (ARP and ICMP never), and the pacing of
/// the simulation to wall time (`mhz` cycles per microsecond at most).
pub(in crate::suites::tcp) struct Bridge {
    pub(super) tap_fd: i32,
    pub to_kernel: Lossy,
    pub to_engine: Lossy,
    pub(super) out_queue: std::collections::VecDeque<Vec<u8>>,
    pub(super) buf: Vec<u8>,
    /// Engine frames taken off `m_axis`.
    pub seen: usize,
    pub(super) next_rx: u64,
    pub(super) next_pace: u64,
    pub(super) start_cycle: u64,
    pub(super) pace0: Instant,
    pub(super) mhz: u32,
    /// Frames across the TAP each way (to the kernel, to the engine).
    pub frames: [u64; 2],
    /// ARP frames: engine requests, engine replies, kernel requests, kernel replies.
    pub arp: [u32; 4],
}

impl Bridge {
    /// A bridge on `tap_fd` whose faults (toward the kernel, toward the engine) draw from
    /// `seed`, paced from `start_cycle` on.
    pub fn new(
        tap_fd: i32,
        seed: u64,
        faults: (Faults, Faults),
        mhz: u32,
        start_cycle: u64,
    ) -> Self {
        Bridge {
            tap_fd,
            to_kernel: Lossy::new(seed ^ 5, faults.0),
            to_engine: Lossy::new(seed ^ 6, faults.1),
            out_queue: Default::default(),
            buf: vec![0u8; 65536],
            seen: 0,
            next_rx: 0,
            next_pace: 0,
            start_cycle,
            pace0: Instant::now(),
            mhz,
            frames: [0; 2],
            arp: [0; 4],
        }
    }

    /// The bridge's work after cycle `cycle` of the model whose Ethernet drivers are
    /// `(sink, src)`; frames crossing the TAP go to `pcap`.
    pub fn pump(
        &mut self,
        cycle: u64,
        (sink, src): (
            &std::cell::RefCell<AxisSink>,
            &std::cell::RefCell<AxisSource>,
        ),
        mut pcap: Option<&mut Pcap>,
        watch: &mut dyn BridgeWatch,
    ) -> Result<(), String> {
        // Engine frames: looked at, recorded as they cross the TAP, written to it.
        let new: Vec<Vec<u8>> = sink.borrow().frames[self.seen..]
            .iter()
            .map(|f| f.data.clone())
            .collect();
        self.seen += new.len();
        for f in new {
            watch.engine_frame(cycle, &f)?;
            match arp_kind(&f) {
                Some(1) => self.arp[0] += 1,
                Some(2) => self.arp[1] += 1,
                _ => {}
            }
            if is_tcp(&f) {
                self.to_kernel.push(cycle, f);
            } else {
                self.out_queue.push_back(f);
            }
        }
        self.out_queue.extend(self.to_kernel.pop(cycle));
        while let Some(f) = self.out_queue.front() {
            let r = unsafe { libc::write(self.tap_fd, f.as_ptr() as *const libc::c_void, f.len()) };
            if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == ErrorKind::WouldBlock {
                    break;
                }
                return Err(format!("write to the TAP: {e}"));
            }
            if let Some(p) = pcap.as_deref_mut() {
                p.ethernet_at(f, wall_us());
            }
            watch.to_tap(f);
            self.frames[0] += 1;
            self.out_queue.pop_front();
        }
        // Kernel frames: recorded, into the bridge's faults, padded as a MAC delivers them.
        if cycle >= self.next_rx {
            self.next_rx = cycle + 32;
            loop {
                let r = unsafe {
                    libc::read(
                        self.tap_fd,
                        self.buf.as_mut_ptr() as *mut libc::c_void,
                        self.buf.len(),
                    )
                };
                if r < 0 {
                    let e = std::io::Error::last_os_error();
                    if e.kind() == ErrorKind::WouldBlock {
                        break;
                    }
                    return Err(format!("read from the TAP: {e}"));
                }
                let mut f = self.buf[..r as usize].to_vec();
                if f.len() < 14 {
                    continue;
                }
                self.frames[1] += 1;
                if let Some(p) = pcap.as_deref_mut() {
                    p.ethernet_at(&f, wall_us());
                }
                match arp_kind(&f) {
                    Some(1) => self.arp[2] += 1,
                    Some(2) => self.arp[3] += 1,
                    _ => {}
                }
                watch.kernel_frame(&f);
                f.resize(f.len().max(60), 0);
                if is_tcp(&f) {
                    self.to_engine.push(cycle, f);
                } else {
                    src.borrow_mut().send(f);
                }
            }
        }
        for f in self.to_engine.pop(cycle) {
            watch.to_engine(cycle, &f);
            src.borrow_mut().send(f);
        }
        // Pacing: no faster than `mhz` cycles per microsecond of wall time.
        if cycle >= self.next_pace {
            self.next_pace = cycle + 256;
            let ahead_us = ((cycle - self.start_cycle) / u64::from(self.mhz)) as i64
                - self.pace0.elapsed().as_micros() as i64;
            if ahead_us > 200 {
                let ts = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: (ahead_us.min(2000) * 1000) as libc::c_long,
                };
                let mut p = libc::pollfd {
                    fd: self.tap_fd,
                    events: libc::POLLIN,
                    revents: 0,
                };
                unsafe { libc::ppoll(&mut p, 1, &ts, std::ptr::null()) };
            }
        }
        Ok(())
    }
}

/// What `run_case` looks at on the bridge: the golden check of every engine frame (when on,
/// with the application's streams), the RSTs the kernel may send, the kernel's segments as the
/// engine got them.
pub(super) struct Watch<'a> {
    pub(super) golden: Option<(&'a std::cell::RefCell<App>, &'a mut EngineView)>,
    pub(super) late: &'a mut LateRsts,
    pub(super) trail: &'a mut Trail,
}

impl BridgeWatch for Watch<'_> {
    fn engine_frame(&mut self, cycle: u64, f: &[u8]) -> Result<(), String> {
        if let Some((app, view)) = self.golden.as_mut() {
            let a = app.borrow();
            let got: Vec<usize> = a.got.iter().map(Vec::len).collect();
            golden::check_frame(view, f, &a.sent, &got, cycle)
                .map_err(|e| format!("cycle {cycle}: engine frame {f:02x?}: {e}"))?;
        }
        Ok(())
    }
    fn to_tap(&mut self, f: &[u8]) {
        self.late.engine_frame(f);
    }
    fn kernel_frame(&mut self, f: &[u8]) {
        if let Some((_, view)) = self.golden.as_mut() {
            view.peer_frame(f);
        }
        self.late.kernel_frame(f);
    }
    fn to_engine(&mut self, cycle: u64, f: &[u8]) {
        self.trail.note(cycle, f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arp_and_tcp_frames_are_told_apart() {
        let mut arp = vec![0xff; 6];
        arp.extend(PEER_MAC);
        arp.extend([8, 6, 0, 1, 8, 0, 6, 4, 0, 2]);
        arp.resize(60, 0);
        assert_eq!(arp_kind(&arp), Some(2));
        assert!(!is_tcp(&arp));
        let mut tcp = arp.clone();
        tcp[12..14].copy_from_slice(&[8, 0]);
        tcp[23] = 6;
        assert_eq!(arp_kind(&tcp), None);
        assert!(is_tcp(&tcp));
    }
}
