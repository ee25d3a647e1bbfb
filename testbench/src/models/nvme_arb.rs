//! Golden model of the NVMe front end's SQ arbitration (NVMe base specification 2.0,
//! §3.4.4; Arbitration feature 01h) and of its interrupt coalescing (features 08h and 09h).
//!
//! Arbitration, as `hdl-gen/src/nvme/mod.rs` promises it: plain Rust, no cycles. It follows
//! the events that decide the order, doorbells and arbitration decisions, in the order the
//! front end applied them, and says which SQ each decision picks and how many SQEs it fetches.
//!
//! - Round robin (CC.AMS = 0): every SQ with work, the admin SQ included, waits in one FIFO;
//!   a decision takes the first eligible one.
//! - Weighted round robin with urgent class (CC.AMS = 1): the admin SQ first (strict), then
//!   the urgent class (strict, round robin inside), then high, medium and low in weighted
//!   round robin: the class whose turn it is keeps it while it has fetched fewer than
//!   `weight + 1` commands in this turn and has an eligible SQ with work; otherwise the turn
//!   passes to the next class (high -> medium -> low -> high) with an eligible SQ, which
//!   starts at 0 commands (a class with nothing eligible forfeits what is left of its turn;
//!   when no other class can go, the same class starts a new turn).
//! - A decision fetches `min(2^AB (no limit for 7), fetch_burst, entries published, entries
//!   to the ring's end, entries to the next 4 KiB, what is left of a WRR class's turn)` SQEs
//!   from the picked SQ; an SQ with work left goes to the back of its class FIFO.
//! - A doorbell that makes an idle SQ have work puts it at the back of its class FIFO; a
//!   doorbell for an SQ already waiting only moves its tail.
//! - Eligibility (`sq_space_i`) is a set of SQs passed over: an ineligible SQ keeps no turn,
//!   costs no weight, and the others keep their order. (The RTL rotates ineligible heads to
//!   the back, so the order of an ineligible SQ among the others is only known while the set
//!   does not change; the model keeps it where it was.)
//!
//! Coalescing: see [`Coalescer`].

use std::collections::{BTreeMap, VecDeque};

/// One SQ as the arbiter sees it.
#[derive(Clone, Debug)]
struct Queue {
    size: u32,
    head: u32,
    tail: u32,
    class: usize,
    waiting: bool,
}

/// One arbitration decision: the SQ, the SQE index it starts at, and how many SQEs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fetch {
    /// Submission queue id.
    pub qid: u16,
    /// Index of the first SQE fetched.
    pub head: u32,
    /// SQEs fetched.
    pub n: u32,
}

/// The arbiter's state: class FIFOs, the WRR turn, each SQ's head and tail.
#[derive(Clone, Debug)]
pub struct Arbiter {
    wrr: bool,
    ab: u32,
    /// 0's based weights of high, medium, low.
    weights: [u32; 3],
    fetch_burst: u32,
    fifos: [VecDeque<u16>; 4],
    admin_waiting: bool,
    turn_class: usize,
    turn_used: u32,
    queues: BTreeMap<u16, Queue>,
}

impl Arbiter {
    /// An arbiter after CC.EN: `wrr` is CC.AMS = 1, `arb` the Arbitration feature's DW11.
    pub fn new(wrr: bool, arb: u32, fetch_burst: u32) -> Arbiter {
        Arbiter {
            wrr,
            ab: arb & 7,
            weights: [arb >> 24 & 0xff, arb >> 16 & 0xff, arb >> 8 & 0xff],
            fetch_burst,
            fifos: Default::default(),
            admin_waiting: false,
            turn_class: 1,
            turn_used: 0,
            queues: BTreeMap::new(),
        }
    }

    /// A queue with nothing to fetch, its head and tail at `head`: `prio` 0 urgent, 1 high,
    /// 2 medium, 3 low (the admin queue: 0).
    pub fn create(&mut self, qid: u16, size: u32, prio: u8, head: u32) {
        let class = if self.wrr { usize::from(prio & 3) } else { 0 };
        self.queues.insert(
            qid,
            Queue {
                size,
                head,
                tail: head,
                class,
                waiting: false,
            },
        );
    }

    fn enqueue(&mut self, qid: u16) {
        if qid == 0 && self.wrr {
            self.admin_waiting = true;
        } else {
            let c = self.queues[&qid].class;
            self.fifos[c].push_back(qid);
        }
        self.queues.get_mut(&qid).unwrap().waiting = true;
    }

    /// An SQ tail doorbell (a valid one) applied.
    pub fn doorbell(&mut self, qid: u16, tail: u32) {
        let q = self
            .queues
            .get_mut(&qid)
            .expect("doorbell of a queue the model lacks");
        q.tail = tail;
        if !q.waiting && q.head != q.tail {
            self.enqueue(qid);
        }
    }

    /// SQEs published and not yet fetched, per queue.
    pub fn pending(&self, qid: u16) -> u32 {
        let q = &self.queues[&qid];
        (q.tail + q.size - q.head) % q.size
    }

    fn first_eligible(&self, c: usize, eligible: &dyn Fn(u16) -> bool) -> Option<usize> {
        self.fifos[c].iter().position(|&q| eligible(q))
    }

    /// The next decision among the SQs for which `eligible` holds, or `None` when none of
    /// them has work.
    pub fn decide(&mut self, eligible: &dyn Fn(u16) -> bool) -> Option<Fetch> {
        let (qid, cap) = if self.wrr && self.admin_waiting {
            self.admin_waiting = false;
            (0, u32::MAX)
        } else if let Some(i) = self.first_eligible(0, eligible) {
            (self.fifos[0].remove(i).unwrap(), u32::MAX)
        } else if !self.wrr {
            return None;
        } else {
            let ok = |a: &Arbiter, c: usize| a.first_eligible(c, eligible).is_some();
            let cur = self.turn_class;
            let w = |c: usize| self.weights[c - 1] + 1;
            let next = |c: usize| if c == 3 { 1 } else { c + 1 };
            let c = if ok(self, cur) && self.turn_used < w(cur) {
                cur
            } else {
                let (n1, n2) = (next(cur), next(next(cur)));
                let c = [n1, n2, cur].into_iter().find(|&c| ok(self, c))?;
                self.turn_class = c;
                self.turn_used = 0;
                c
            };
            let i = self.first_eligible(c, eligible).unwrap();
            let qid = self.fifos[c].remove(i).unwrap();
            (qid, w(c) - self.turn_used)
        };
        let q = &self.queues[&qid];
        let ab = if self.ab == 7 {
            self.fetch_burst
        } else {
            (1u32 << self.ab).min(self.fetch_burst)
        };
        let avail = (q.tail + q.size - q.head) % q.size;
        let n = avail
            .min(q.size - q.head)
            .min(64 - q.head % 64)
            .min(ab)
            .min(cap);
        assert!(n > 0, "SQ {qid} waited with no work");
        let head = q.head;
        let class = q.class;
        let q = self.queues.get_mut(&qid).unwrap();
        q.head = (q.head + n) % q.size;
        q.waiting = false;
        if self.wrr && qid != 0 && class != 0 {
            self.turn_used += n;
        }
        if q.head != q.tail {
            self.enqueue(qid);
        }
        Some(Fetch { qid, head, n })
    }
}

/// Interrupt coalescing of one controller, as `hdl-gen/src/nvme/mod.rs` states it, stepped
/// once per clock cycle because aggregation time is time: each call says whether a CQE write
/// of an interrupt-enabled CQ completed (its vector) and whether a time unit (`coal_tick`)
/// ended, and the state of the `irq` stream; it returns what `irq` must show next.
///
/// Per vector: `count` completions not yet covered by an interrupt and `age` time units since
/// the first of them. An interrupt becomes due (and `count`, `age` restart at 0) when a
/// completion posts on a vector with coalescing disabled (09h CD), when a completion makes
/// `count` reach `THR + 1`, when `count` is non-zero and `TIME` is 0, or when a time unit ends
/// that brings `age` to `TIME` while `count` is non-zero. A due interrupt is pending until it
/// is put on `irq` (the lowest pending vector first, whenever the `irq` register is empty or
/// being taken); completions made due while their vector is already pending are covered by
/// that one interrupt.
#[derive(Clone, Debug)]
pub struct Coalescer {
    thr: u32,
    time: u32,
    cd: Vec<bool>,
    count: Vec<u32>,
    age: Vec<u32>,
    pending: Vec<bool>,
    out: Option<u16>,
}

impl Coalescer {
    /// Quiet state with the features set: `thr` and `time` from feature 08h, `cd` per vector.
    pub fn new(thr: u8, time: u8, cd: Vec<bool>) -> Coalescer {
        let v = cd.len();
        Coalescer {
            thr: u32::from(thr),
            time: u32::from(time),
            cd,
            count: vec![0; v],
            age: vec![0; v],
            pending: vec![false; v],
            out: None,
        }
    }

    /// Nothing counted, nothing due, nothing shown.
    pub fn quiet(&self) -> bool {
        self.out.is_none() && self.count.iter().all(|&c| c == 0) && self.pending.iter().all(|&p| !p)
    }

    /// What `irq` shows in this cycle (valid and vector).
    pub fn shows(&self) -> Option<u16> {
        self.out
    }

    /// One cycle: `post` a completion's vector, `tick` a time unit ended, `ready` the `irq`
    /// sink's ready in this cycle.
    pub fn step(&mut self, post: Option<u16>, tick: bool, ready: bool) {
        let mut due = vec![false; self.cd.len()];
        for (v, d) in due.iter_mut().enumerate() {
            let hit = post == Some(v as u16);
            let by_count = hit && (self.cd[v] || self.count[v] + 1 > self.thr);
            let by_time =
                self.count[v] != 0 && (self.time == 0 || tick && self.age[v] + 1 >= self.time);
            *d = by_count || by_time;
            if *d {
                self.count[v] = 0;
                self.age[v] = 0;
            } else {
                if self.count[v] != 0 && tick {
                    self.age[v] += 1;
                }
                self.count[v] += u32::from(hit);
            }
        }
        let free = self.out.is_none() || ready;
        let sel = self.pending.iter().position(|&p| p);
        if free {
            self.out = None;
        }
        if let (true, Some(s)) = (free, sel) {
            self.out = Some(s as u16);
            self.pending[s] = false;
        }
        for (v, d) in due.iter().enumerate() {
            if *d {
                self.pending[v] = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_count_commands() {
        // High weight 1 (two commands per turn), medium 0, low 2; bursts of 4.
        let mut a = Arbiter::new(true, 1 << 24 | 2 << 8 | 2, 8);
        for (q, p) in [(1u16, 1u8), (2, 2), (3, 3)] {
            a.create(q, 64, p, 0);
            a.doorbell(q, 20);
        }
        let all = |_: u16| true;
        let got: Vec<(u16, u32)> = (0..6)
            .map(|_| a.decide(&all).map(|f| (f.qid, f.n)).unwrap())
            .collect();
        assert_eq!(got, [(1, 2), (2, 1), (3, 3), (1, 2), (2, 1), (3, 3)]);
    }

    #[test]
    fn urgent_first_and_admin_in_round_robin() {
        let mut a = Arbiter::new(false, 7, 8);
        a.create(0, 16, 0, 0);
        a.create(1, 16, 3, 0);
        a.doorbell(1, 3);
        a.doorbell(0, 1);
        let all = |_: u16| true;
        assert_eq!(a.decide(&all).unwrap().qid, 1);
        assert_eq!(a.decide(&all).unwrap().qid, 0);
        let mut w = Arbiter::new(true, 0, 8);
        w.create(0, 16, 0, 0);
        w.create(1, 16, 3, 0);
        w.create(2, 16, 0, 0);
        w.doorbell(1, 3);
        w.doorbell(2, 3);
        w.doorbell(0, 1);
        assert_eq!(w.decide(&all).unwrap().qid, 0);
        assert_eq!(w.decide(&all).unwrap().qid, 2);
        assert_eq!(w.decide(&|q| q != 2).unwrap().qid, 1);
    }

    #[test]
    fn coalescing_threshold_and_time() {
        let mut c = Coalescer::new(2, 3, vec![false, true]);
        // Three completions on vector 0: due with the third.
        for _ in 0..2 {
            c.step(Some(0), false, true);
            assert_eq!(c.shows(), None);
        }
        c.step(Some(0), false, true);
        c.step(None, false, true);
        assert_eq!(c.shows(), Some(0));
        // Vector 1 has coalescing disabled: each completion is due at once.
        c.step(Some(1), false, true);
        c.step(None, false, true);
        assert_eq!(c.shows(), Some(1));
        // One completion on vector 0, then three time units.
        c.step(Some(0), false, true);
        for _ in 0..2 {
            c.step(None, true, true);
            assert_eq!(c.shows(), None);
        }
        c.step(None, true, true);
        c.step(None, false, true);
        assert_eq!(c.shows(), Some(0));
    }
}
