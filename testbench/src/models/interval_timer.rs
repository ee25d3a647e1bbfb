//! Golden model of the interval timer: what its outputs must show after each clock edge, for
//! the inputs of that cycle.
//!
//! Contract: `start` (when idle, or in the firing cycle) latches the limit and clears the count;
//! while running, a cycle with `tick` adds one until the count equals the limit; the cycle after
//! that, `expired` is high for exactly one cycle. `stop` while running cancels without firing.

/// Timer state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Waiting for a start.
    Idle,
    /// Counting ticks.
    Run,
    /// The one cycle `expired` is high.
    Fire,
}

/// The interval timer, `width`-bit counter.
#[derive(Clone, Debug)]
pub struct IntervalTimer {
    width: u32,
    state: State,
    count: u64,
    limit: u64,
}

/// The outputs the RTL must show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outputs {
    /// Counting.
    pub busy: bool,
    /// The limit was reached.
    pub expired: bool,
    /// Ticks counted since the start.
    pub count: u64,
}

impl IntervalTimer {
    /// A timer in reset state.
    pub fn new(width: u32) -> IntervalTimer {
        IntervalTimer {
            width,
            state: State::Idle,
            count: 0,
            limit: 0,
        }
    }

    fn mask(&self) -> u64 {
        if self.width >= 64 {
            u64::MAX
        } else {
            (1 << self.width) - 1
        }
    }

    /// One clock edge with these inputs.
    pub fn clock(&mut self, start: bool, stop: bool, tick: bool, limit: u64) {
        match self.state {
            State::Idle | State::Fire => {
                self.state = State::Idle;
                if start {
                    self.state = State::Run;
                    self.count = 0;
                    self.limit = limit & self.mask();
                }
            }
            State::Run => {
                if stop {
                    self.state = State::Idle;
                } else if self.count == self.limit {
                    self.state = State::Fire;
                } else if tick {
                    self.count = (self.count + 1) & self.mask();
                }
            }
        }
    }

    /// A reset.
    pub fn reset(&mut self) {
        *self = IntervalTimer::new(self.width);
    }

    /// The outputs after the last edge.
    pub fn outputs(&self) -> Outputs {
        Outputs {
            busy: self.state == State::Run,
            expired: self.state == State::Fire,
            count: self.count,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fires_once_after_limit_ticks() {
        let mut t = IntervalTimer::new(8);
        t.clock(true, false, false, 3);
        let mut fired = 0;
        for _ in 0..20 {
            t.clock(false, false, true, 0);
            fired += t.outputs().expired as u32;
        }
        assert_eq!(fired, 1);
        assert!(!t.outputs().busy);
    }
}
