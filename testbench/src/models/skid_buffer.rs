//! Golden model of the skid buffer (and of any lossless, order-keeping stage with a capacity):
//! every accepted word leaves exactly once, in order; the stage never holds more than its
//! capacity; a reset loses what it holds.

use std::collections::VecDeque;

/// An order-keeping, lossless stage of bounded capacity.
#[derive(Debug, Clone)]
pub struct SkidBuffer {
    held: VecDeque<u64>,
    capacity: usize,
}

impl SkidBuffer {
    /// A skid buffer holds two words: the output register and the skid register.
    pub fn new() -> SkidBuffer {
        SkidBuffer::with_capacity(2)
    }

    /// A stage holding at most `capacity` words.
    pub fn with_capacity(capacity: usize) -> SkidBuffer {
        SkidBuffer {
            held: VecDeque::new(),
            capacity,
        }
    }

    /// The stage accepted `word`.
    pub fn accept(&mut self, word: u64) -> Result<(), String> {
        if self.held.len() >= self.capacity {
            return Err(format!(
                "accepted {word:#x} while holding {} words (capacity {})",
                self.held.len(),
                self.capacity
            ));
        }
        self.held.push_back(word);
        Ok(())
    }

    /// The stage delivered `word`: it must be the oldest word held.
    pub fn deliver(&mut self, word: u64) -> Result<(), String> {
        match self.held.pop_front() {
            Some(w) if w == word => Ok(()),
            Some(w) => Err(format!("delivered {word:#x}, expected {w:#x}")),
            None => Err(format!("delivered {word:#x} while holding nothing")),
        }
    }

    /// A reset: whatever was held is gone.
    pub fn reset(&mut self) {
        self.held.clear();
    }

    /// Words held now.
    pub fn len(&self) -> usize {
        self.held.len()
    }

    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }
}

impl Default for SkidBuffer {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_capacity_and_reset() {
        let mut m = SkidBuffer::new();
        m.accept(1).unwrap();
        m.accept(2).unwrap();
        assert!(m.accept(3).is_err());
        assert!(m.deliver(2).is_err());
        m.deliver(2).unwrap();
        m.reset();
        assert!(m.deliver(3).is_err());
    }
}
