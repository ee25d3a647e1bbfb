//! The chip's Ethernet port in the property: RoCEv2 frames to and from the RoCE target model,
//! every other frame to the TCP side.

use super::*;

/// The chip's Ethernet port (`m_axis`/`s_axis`): RoCEv2 frames between it and the RoCE
/// target model; every other frame (ARP, TCP: the TCP/IP engine's) to and from the TCP side
/// through [`EthWire`] (`models::frame_mux::classify` tells them apart, as the chip's frame
/// mux does).
pub struct RoceLink {
    pub(super) sink: Rc<RefCell<AxisSink>>,
    pub(super) src: Rc<RefCell<AxisSource>>,
    /// The TCP side of the port.
    pub wire: Rc<RefCell<EthWire>>,
    /// RoCEv2 beats and bytes the chip took from the fabric.
    pub rx_beats: u64,
    pub rx_bytes: u64,
    /// The last frame handed to the port was RoCE's (the two sides take turns).
    pub(super) last_roce: bool,
    /// The remote NVMe/RDMA target.
    pub target: Target,
    pub(super) seen: usize,
    pub(super) quiet: u64,
    pub(super) rng: Rng,
    pub(super) loss: u8,
    pub(super) to_host: VecDeque<Vec<u8>>,
    /// Frames the chip sent.
    pub frames: u64,
    /// The remote latency: every frame the chip sends reaches the target this many cycles
    /// later (fixed, plus up to the random part), in order.
    pub delay: (u32, u32),
    /// Frames on their way to the target: (cycle they arrive, frame).
    pub(super) in_flight: VecDeque<(u64, Vec<u8>)>,
    /// The target is gone: every frame either way is dropped.
    pub dead: bool,
}

impl RoceLink {
    /// Binds `target` to `env`'s RoCEv2 port (`m_axis` to the target, `s_axis` back), losing
    /// `loss` percent of the frames each way.
    pub fn attach<T: Dut>(
        env: &mut Env<T>,
        target: Target,
        loss: u8,
        seed: u64,
    ) -> (Rc<RefCell<AxisSink>>, Rc<RefCell<RoceLink>>) {
        let sink = env.sim.add(AxisSink::new(&env.sim, "m_axis", seed ^ 2, 10));
        sink.borrow_mut().gapless = true;
        let src = env
            .sim
            .add(AxisSource::new(&env.sim, "s_axis", seed ^ 1, 10));
        let link = env.sim.add(RoceLink {
            sink: sink.clone(),
            src,
            wire: Rc::new(RefCell::new(EthWire::default())),
            rx_beats: 0,
            rx_bytes: 0,
            last_roce: false,
            target,
            seen: 0,
            quiet: 0,
            rng: Rng::new(seed ^ 9),
            loss,
            to_host: VecDeque::new(),
            frames: 0,
            delay: (0, 0),
            in_flight: VecDeque::new(),
            dead: false,
        });
        (sink, link)
    }

    /// Sets how often the AXI4-Stream ports idle (`s_axis`) and stall (`m_axis`), percent.
    pub fn set_idle(&mut self, percent: u8) {
        self.src.borrow_mut().set_idle(percent);
        self.sink.borrow_mut().set_stall(percent);
    }

    /// The `s_axis` source (frames the chip took from the fabric).
    pub fn source(&self) -> std::cell::Ref<'_, AxisSource> {
        self.src.borrow()
    }

    /// The chip was reset: the target's side of every one of the `qps` QPs starts afresh (as
    /// after the dying-target recovery) and the frames on the wire either way are lost.
    pub fn peer_gone(&mut self, qps: usize) {
        self.in_flight.clear();
        self.to_host.clear();
        self.src.borrow_mut().clear();
        self.wire.borrow_mut().from_tcp.clear();
        self.quiet = 0;
        for q in 0..qps {
            self.target.reset_qp(q);
        }
    }

    /// The cycle of each RoCEv2 frame's first beat the chip sent, in order.
    pub fn frame_starts(&self) -> Vec<u64> {
        self.sink
            .borrow()
            .frames
            .iter()
            .filter(|f| classify(&f.data) == Engine::Roce)
            .map(|f| f.first)
            .collect()
    }

    /// The RoCEv2 frames the chip sent: (frames, beats, bytes).
    pub fn tx_totals(&self) -> (u64, u64, u64) {
        let sink = self.sink.borrow();
        let roce = sink
            .frames
            .iter()
            .filter(|f| classify(&f.data) == Engine::Roce);
        roce.fold((0, 0, 0), |(n, b, y), f| {
            (n + 1, b + f.beats as u64, y + f.data.len() as u64)
        })
    }
}

impl Component for RoceLink {
    fn sample(&mut self, cycle: u64) {
        let mut moved = false;
        let n = self.sink.borrow().frames.len();
        for i in self.seen..n {
            let f = self.sink.borrow().frames[i].data.clone();
            if classify(&f) == Engine::Tcp {
                self.wire.borrow_mut().to_tcp.push_back((cycle, f));
                continue;
            }
            moved = true;
            self.frames += 1;
            if !self.dead && !self.rng.chance(self.loss) {
                let (fixed, random) = self.delay;
                let jitter = if random > 0 {
                    self.rng.below(u64::from(random) + 1)
                } else {
                    0
                };
                let at = cycle + u64::from(fixed) + jitter;
                let at = self.in_flight.back().map_or(at, |x| x.0.max(at));
                self.in_flight.push_back((at, f));
            }
        }
        self.seen = n;
        while self.in_flight.front().is_some_and(|x| x.0 <= cycle) {
            let (_, f) = self.in_flight.pop_front().expect("front");
            self.target.receive(&f);
            moved = true;
        }
        if self.dead {
            self.in_flight.clear();
            self.to_host.clear();
        }
        while let Some(f) = self.target.out.pop_front() {
            moved = true;
            if !self.dead && !self.rng.chance(self.loss) {
                self.to_host.push_back(f);
            }
        }
        if self.src.borrow().pending() < 2 {
            // RoCE's and the TCP side's frames take turns on the port.
            let tcp_waits = !self.wire.borrow().from_tcp.is_empty();
            if !self.to_host.is_empty() && (!tcp_waits || !self.last_roce) {
                let f = self.to_host.pop_front().expect("a frame");
                self.rx_beats += f.len().div_ceil(8) as u64;
                self.rx_bytes += f.len() as u64;
                self.src.borrow_mut().send(f);
                self.last_roce = true;
                moved = true;
            } else if tcp_waits {
                let mut w = self.wire.borrow_mut();
                let f = w.from_tcp.pop_front().expect("a frame");
                if crate::suites::tcp::tcp_ports(&f).is_some_and(|p| p.2 > 0) {
                    w.delivered.push(cycle);
                }
                self.src.borrow_mut().send(f);
                self.last_roce = false;
            }
        }
        let busy = moved
            || !self.in_flight.is_empty()
            || self.src.borrow().pending() > 0
            || !self.sink.borrow().partial().is_empty();
        self.quiet = if busy { 0 } else { self.quiet + 1 };
        if self.quiet == 1500 && self.target.unacked() > 0 {
            self.target.timeout();
            self.quiet = 0;
        }
    }
    fn drive(&mut self, _cycle: u64) {}
}
