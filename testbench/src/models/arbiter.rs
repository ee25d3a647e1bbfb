//! Golden models of the round-robin and weighted round-robin arbiters
//! (`hdl-gen/src/blocks/arbiter.rs`).
//!
//! A policy ([`RoundRobin`], [`WeightedRoundRobin`]) answers one question: given the requests at
//! a decision, who wins ([`Policy::pick`]); and it updates its pointer (and turn count) at each
//! transfer ([`Policy::transfer`]). [`Locked`] adds the RTL's locking: a grant that is not taken
//! is held, whatever the requests do, until its transfer.
//!
//! How the RTL maps onto it, in each cycle: `valid_o`/`gnt_idx_o` is [`Locked::grant`] on the
//! cycle's `req_i`, and [`Locked::step`] with `ready_i` ends the cycle (a transfer when the grant
//! is taken, the weights being `weight_i` of that cycle).

/// An arbitration policy: who wins a decision, and how a transfer moves the priority.
pub trait Policy {
    /// Number of requesters.
    fn requesters(&self) -> usize;

    /// The winner of a decision where `req[i]` says requester `i` is requesting (`req` has one
    /// entry per requester); `None` when nobody requests.
    fn pick(&self, req: &[bool]) -> Option<usize>;

    /// Records the transfer of `winner`; `weights[i]` is requester `i`'s weight at that moment
    /// (ignored by [`RoundRobin`], which accepts an empty slice).
    fn transfer(&mut self, winner: usize, weights: &[u64]);
}

/// The first requester at or after `ptr`, going round.
fn first_from(ptr: usize, req: &[bool]) -> Option<usize> {
    let n = req.len();
    (0..n).map(|k| (ptr + k) % n).find(|&i| req[i])
}

/// Round robin: the pointer names the requester with the highest priority (0 after reset); the
/// winner is the first requester at or after it, going round; after a transfer the pointer moves
/// to the requester after the winner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoundRobin {
    n: usize,
    ptr: usize,
}

impl RoundRobin {
    /// The state after reset, for `n >= 1` requesters.
    pub fn new(n: usize) -> RoundRobin {
        assert!(n >= 1, "an arbiter needs at least one requester");
        RoundRobin { n, ptr: 0 }
    }

    /// The requester with the highest priority at the next decision.
    pub fn pointer(&self) -> usize {
        self.ptr
    }
}

impl Policy for RoundRobin {
    fn requesters(&self) -> usize {
        self.n
    }

    fn pick(&self, req: &[bool]) -> Option<usize> {
        assert_eq!(req.len(), self.n, "one request flag per requester");
        first_from(self.ptr, req)
    }

    fn transfer(&mut self, winner: usize, _weights: &[u64]) {
        assert!(winner < self.n, "requester {winner} does not exist");
        self.ptr = (winner + 1) % self.n;
    }
}

/// Weighted round robin with zero's based weights (as in NVMe): weight `w` allows `w + 1`
/// transfers in a row while others wait.
///
/// State: the pointer (whose turn it is; 0 after reset) and the turn count (transfers made in
/// that turn; 0 after reset). The winner is picked as in [`RoundRobin`]. At the winner's transfer,
/// with its weight `w` at that moment: `done` is the turn count if the winner is the requester at
/// the pointer, else 0 (the winner starts a turn); if `done >= w` the turn ends (pointer to the
/// requester after the winner, count 0), otherwise the pointer is the winner and the count
/// `done + 1`. A lone requester keeps winning (work conserving).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WeightedRoundRobin {
    n: usize,
    ptr: usize,
    turn_count: u64,
}

impl WeightedRoundRobin {
    /// The state after reset, for `n >= 1` requesters.
    pub fn new(n: usize) -> WeightedRoundRobin {
        assert!(n >= 1, "an arbiter needs at least one requester");
        WeightedRoundRobin {
            n,
            ptr: 0,
            turn_count: 0,
        }
    }

    /// The requester whose turn it is.
    pub fn pointer(&self) -> usize {
        self.ptr
    }

    /// Transfers the requester at the pointer has made in its turn.
    pub fn turn_count(&self) -> u64 {
        self.turn_count
    }
}

impl Policy for WeightedRoundRobin {
    fn requesters(&self) -> usize {
        self.n
    }

    fn pick(&self, req: &[bool]) -> Option<usize> {
        assert_eq!(req.len(), self.n, "one request flag per requester");
        first_from(self.ptr, req)
    }

    fn transfer(&mut self, winner: usize, weights: &[u64]) {
        assert!(winner < self.n, "requester {winner} does not exist");
        assert_eq!(weights.len(), self.n, "one weight per requester");
        let done = if winner == self.ptr {
            self.turn_count
        } else {
            0
        };
        if done >= weights[winner] {
            self.ptr = (winner + 1) % self.n;
            self.turn_count = 0;
        } else {
            self.ptr = winner;
            self.turn_count = done + 1;
        }
    }
}

/// A policy with the RTL's grant lock: a grant that is not taken stays until its transfer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Locked<P> {
    policy: P,
    held: Option<usize>,
}

impl<P: Policy> Locked<P> {
    /// The state after reset: no grant held.
    pub fn new(policy: P) -> Locked<P> {
        Locked { policy, held: None }
    }

    /// The policy inside, for its pointer.
    pub fn policy(&self) -> &P {
        &self.policy
    }

    /// The grant held from an earlier decision, if any.
    pub fn held(&self) -> Option<usize> {
        self.held
    }

    /// The grant shown with requests `req`: the held one, or else a new decision.
    pub fn grant(&self, req: &[bool]) -> Option<usize> {
        self.held.or_else(|| self.policy.pick(req))
    }

    /// One handshake opportunity: shows [`Self::grant`] for `req` and returns it; when `taken`
    /// (the downstream was ready) it is a transfer, with `weights` of this moment, otherwise the
    /// grant is held. Panics when the held requester has dropped its request: requests must stay
    /// up until their transfer.
    pub fn step(&mut self, req: &[bool], weights: &[u64], taken: bool) -> Option<usize> {
        if let Some(h) = self.held {
            assert!(
                req[h],
                "requester {h} dropped its request before its transfer; requests must stay up"
            );
        }
        let g = self.grant(req);
        if let Some(w) = g {
            if taken {
                self.policy.transfer(w, weights);
                self.held = None;
            } else {
                self.held = Some(w);
            }
        }
        g
    }

    /// Back to the state after reset.
    pub fn reset(&mut self)
    where
        P: Resettable,
    {
        self.policy.reset();
        self.held = None;
    }
}

/// Policies that can go back to their state after reset.
pub trait Resettable {
    /// The state after reset.
    fn reset(&mut self);
}

impl Resettable for RoundRobin {
    fn reset(&mut self) {
        *self = RoundRobin::new(self.n);
    }
}

impl Resettable for WeightedRoundRobin {
    fn reset(&mut self) {
        *self = WeightedRoundRobin::new(self.n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Grants of `count` decisions where `req` requests every time and each grant is taken.
    fn run<P: Policy>(p: &mut P, req: &[bool], weights: &[u64], count: usize) -> Vec<usize> {
        (0..count)
            .map(|_| {
                let w = p.pick(req).expect("someone requests");
                p.transfer(w, weights);
                w
            })
            .collect()
    }

    fn tally(grants: &[usize], n: usize) -> Vec<usize> {
        (0..n)
            .map(|i| grants.iter().filter(|&&g| g == i).count())
            .collect()
    }

    #[test]
    fn rr_all_requesting_goes_round() {
        let mut rr = RoundRobin::new(4);
        let g = run(&mut rr, &[true; 4], &[], 9);
        assert_eq!(g, vec![0, 1, 2, 3, 0, 1, 2, 3, 0]);
    }

    #[test]
    fn rr_pointer_moves_past_the_winner() {
        let mut rr = RoundRobin::new(5);
        let req = [false, true, false, true, false];
        assert_eq!(rr.pick(&req), Some(1));
        rr.transfer(1, &[]);
        assert_eq!(rr.pointer(), 2);
        assert_eq!(rr.pick(&req), Some(3));
        rr.transfer(3, &[]);
        assert_eq!(rr.pick(&req), Some(1), "wraps round");
        assert_eq!(rr.pick(&[false; 5]), None);
        // The last requester wins: the pointer wraps to 0.
        rr.transfer(4, &[]);
        assert_eq!(rr.pointer(), 0);
    }

    #[test]
    fn rr_is_fair_under_any_request_pattern() {
        // Whoever is requesting waits for at most n - 1 other transfers.
        let n = 5;
        let mut rr = RoundRobin::new(n);
        let mut waited = vec![0usize; n];
        let mut x = 12345u32;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let req: Vec<bool> = (0..n).map(|i| (x >> i) & 1 == 1 || waited[i] > 0).collect();
            let Some(w) = rr.pick(&req) else { continue };
            rr.transfer(w, &[]);
            for i in 0..n {
                if i == w {
                    waited[i] = 0;
                } else if req[i] {
                    waited[i] += 1;
                    assert!(
                        waited[i] < n,
                        "requester {i} waited {} transfers",
                        waited[i]
                    );
                }
            }
        }
    }

    #[test]
    fn single_requester() {
        let mut rr = RoundRobin::new(1);
        assert_eq!(run(&mut rr, &[true], &[], 3), vec![0, 0, 0]);
        let mut wrr = WeightedRoundRobin::new(1);
        assert_eq!(run(&mut wrr, &[true], &[5], 8), vec![0; 8]);
    }

    #[test]
    fn wrr_weights_0_1_3_give_1_2_4_per_round() {
        let mut wrr = WeightedRoundRobin::new(3);
        let g = run(&mut wrr, &[true; 3], &[0, 1, 3], 14);
        assert_eq!(g, vec![0, 1, 1, 2, 2, 2, 2, 0, 1, 1, 2, 2, 2, 2]);
        let g = run(&mut wrr, &[true; 3], &[0, 1, 3], 7 * 100);
        assert_eq!(tally(&g, 3), vec![100, 200, 400]);
    }

    #[test]
    fn wrr_zero_weights_is_round_robin() {
        let mut wrr = WeightedRoundRobin::new(4);
        let mut rr = RoundRobin::new(4);
        let mut x = 99u32;
        for _ in 0..500 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let req: Vec<bool> = (0..4).map(|i| (x >> (i + 16)) & 1 == 1).collect();
            let a = wrr.pick(&req);
            assert_eq!(a, rr.pick(&req));
            if let Some(w) = a {
                wrr.transfer(w, &[0; 4]);
                rr.transfer(w, &[]);
            }
        }
    }

    #[test]
    fn wrr_is_work_conserving() {
        // Only requester 1 requests: it keeps going beyond its weight, turn after turn.
        let mut wrr = WeightedRoundRobin::new(3);
        let g = run(&mut wrr, &[false, true, false], &[0, 1, 0], 7);
        assert_eq!(g, vec![1; 7]);
        // Seven transfers: three full turns of two and one begun.
        assert_eq!((wrr.pointer(), wrr.turn_count()), (1, 1));
        // Requester 0 joins: it gets the grant when 1's current turn ends, then 1 again.
        let g = run(&mut wrr, &[true, true, false], &[0, 1, 0], 4);
        assert_eq!(g, vec![1, 0, 1, 1]);
    }

    #[test]
    fn wrr_turn_ends_when_the_requester_stops() {
        let mut wrr = WeightedRoundRobin::new(3);
        let w = [3, 3, 3];
        assert_eq!(run(&mut wrr, &[true, true, true], &w, 2), vec![0, 0]);
        // Requester 0 stops after two of its four; 1 starts a full turn of its own.
        assert_eq!(
            run(&mut wrr, &[false, true, true], &w, 5),
            vec![1, 1, 1, 1, 2]
        );
        // 0 comes back: it waits for 2's turn to end.
        assert_eq!(run(&mut wrr, &[true, true, true], &w, 4), vec![2, 2, 2, 0]);
    }

    #[test]
    fn wrr_winner_away_from_the_pointer_starts_a_turn() {
        let mut wrr = WeightedRoundRobin::new(4);
        // Pointer at 0, but only 2 requests: 2 starts a turn of weight 1 (two transfers).
        let g = run(&mut wrr, &[false, false, true, true], &[0, 0, 1, 0], 3);
        assert_eq!(g, vec![2, 2, 3]);
        assert_eq!(wrr.pointer(), 0);
    }

    #[test]
    fn wrr_lowering_a_weight_mid_turn_ends_the_turn() {
        let mut wrr = WeightedRoundRobin::new(2);
        assert_eq!(run(&mut wrr, &[true, true], &[5, 0], 3), vec![0, 0, 0]);
        assert_eq!(wrr.turn_count(), 3);
        // The weight drops to 1, below the three already made: the next transfer ends the turn.
        assert_eq!(run(&mut wrr, &[true, true], &[1, 0], 3), vec![0, 1, 0]);
    }

    #[test]
    fn lock_holds_the_grant_until_it_is_taken() {
        let mut a = Locked::new(RoundRobin::new(3));
        // Requester 2 alone: granted but not taken, so held.
        assert_eq!(a.step(&[false, false, true], &[], false), Some(2));
        assert_eq!(a.held(), Some(2));
        // 0 arrives and would win a fresh decision (pointer at 0), but 2 is held.
        assert_eq!(a.grant(&[true, false, true]), Some(2));
        assert_eq!(a.step(&[true, false, true], &[], false), Some(2));
        assert_eq!(a.step(&[true, false, true], &[], true), Some(2));
        // Transfer done: the pointer moved past 2 to 0.
        assert_eq!(a.held(), None);
        assert_eq!(a.policy().pointer(), 0);
        assert_eq!(a.step(&[true, true, false], &[], true), Some(0));
        assert_eq!(a.step(&[false, false, false], &[], true), None);
        assert_eq!(a.step(&[false, true, false], &[], false), Some(1));
        a.reset();
        assert_eq!((a.held(), a.policy().pointer()), (None, 0));
    }

    #[test]
    fn lock_samples_weights_at_the_transfer() {
        let mut a = Locked::new(WeightedRoundRobin::new(2));
        a.step(&[true, true], &[0, 0], false);
        // Held; the weight at the transfer (1) decides that 0 may go again.
        a.step(&[true, true], &[1, 0], true);
        assert_eq!(a.step(&[true, true], &[1, 0], true), Some(0));
        assert_eq!(a.step(&[true, true], &[1, 0], true), Some(1));
    }

    #[test]
    #[should_panic(expected = "dropped its request")]
    fn dropping_a_held_request_is_a_contract_violation() {
        let mut a = Locked::new(RoundRobin::new(2));
        a.step(&[false, true], &[], false);
        a.step(&[true, false], &[], false);
    }
}
