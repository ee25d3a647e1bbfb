//! Golden model of the synchronous FIFO (`hdl-gen/src/blocks/fifo.rs`): a bounded queue.
//!
//! How the RTL maps onto it, in each cycle (a "transfer opportunity"):
//!
//! - `s_ready_o` is [`Fifo::can_push`] and `count_o` is [`Fifo::len`], both on the state at the
//!   start of the cycle; a write happens when `s_valid_i` is high too.
//! - First-word fall-through: `m_valid_o` is `!`[`Fifo::is_empty`] and `m_data_o` is
//!   [`Fifo::front`]; a read happens when `m_ready_i` is high too.
//! - Read port: `empty_o` is [`Fifo::is_empty`]; `rd_en_i` takes [`Fifo::pop`]'s word, which
//!   shows on `rd_data_o` with `rd_valid_o` high in the next cycle; `rd_en_i` on an empty FIFO
//!   is ignored (`pop` gives `None` and `rd_valid_o` stays low).
//!
//! [`Fifo::transfer`] applies one cycle's write and read together, each decided on the state
//! before either, as the RTL does: a full FIFO refuses a write even when a word leaves in the
//! same cycle, and an empty one gives nothing even when a word arrives.

use std::collections::VecDeque;

/// A FIFO holding at most `depth` words of type `T`, oldest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fifo<T> {
    depth: usize,
    words: VecDeque<T>,
}

/// What one [`Fifo::transfer`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer<T> {
    /// The offered word was accepted.
    pub pushed: bool,
    /// The word that left, if a read was asked for and the FIFO was not empty.
    pub popped: Option<T>,
}

impl<T> Fifo<T> {
    /// An empty FIFO of `depth` words (the state after reset). Panics when `depth` is 0.
    pub fn new(depth: usize) -> Fifo<T> {
        assert!(depth >= 1, "a FIFO holds at least one word");
        Fifo {
            depth,
            words: VecDeque::with_capacity(depth),
        }
    }

    /// The most words it holds.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Words held now (`count_o`).
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// No word held (`empty_o`; `m_valid_o` is the opposite).
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// `depth` words held.
    pub fn is_full(&self) -> bool {
        self.words.len() == self.depth
    }

    /// A word offered now would be accepted (`s_ready_o`).
    pub fn can_push(&self) -> bool {
        !self.is_full()
    }

    /// The oldest word (`m_data_o` while `m_valid_o`).
    pub fn front(&self) -> Option<&T> {
        self.words.front()
    }

    /// Appends `word` unless the FIFO is full, in which case `word` comes back as `Err`.
    pub fn push(&mut self, word: T) -> Result<(), T> {
        if self.is_full() {
            return Err(word);
        }
        self.words.push_back(word);
        Ok(())
    }

    /// Takes the oldest word; `None` when empty (a read that is ignored).
    pub fn pop(&mut self) -> Option<T> {
        self.words.pop_front()
    }

    /// Empties the FIFO (reset).
    pub fn clear(&mut self) {
        self.words.clear();
    }

    /// One cycle: `offer` is the word on the write side when it is valid, `read` says the read
    /// side asks for a word (`m_ready_i`, or `rd_en_i`). Both are decided on the state before
    /// this call; the word read is the oldest one held before it.
    pub fn transfer(&mut self, offer: Option<T>, read: bool) -> Transfer<T> {
        let can_push = self.can_push();
        let popped = if read { self.pop() } else { None };
        let pushed = match offer {
            Some(word) if can_push => {
                self.words.push_back(word);
                true
            }
            _ => false,
        };
        Transfer { pushed, popped }
    }

    /// The words held, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.words.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_and_bounds() {
        let mut f = Fifo::new(3);
        assert!(f.is_empty() && f.can_push());
        for w in 1..=3u64 {
            assert_eq!(f.push(w), Ok(()));
        }
        assert!(f.is_full() && !f.can_push());
        assert_eq!(f.push(4), Err(4));
        assert_eq!(f.len(), 3);
        assert_eq!(f.front(), Some(&1));
        assert_eq!(f.pop(), Some(1));
        assert_eq!(f.push(4), Ok(()));
        assert_eq!(f.iter().copied().collect::<Vec<_>>(), vec![2, 3, 4]);
        assert_eq!(
            (f.pop(), f.pop(), f.pop(), f.pop()),
            (Some(2), Some(3), Some(4), None)
        );
        assert!(f.is_empty());
    }

    #[test]
    fn full_refuses_a_write_even_while_a_word_leaves() {
        let mut f = Fifo::new(2);
        f.transfer(Some(10u8), false);
        f.transfer(Some(11), false);
        let t = f.transfer(Some(12), true);
        assert_eq!(
            t,
            Transfer {
                pushed: false,
                popped: Some(10)
            }
        );
        assert_eq!(f.len(), 1);
    }

    #[test]
    fn empty_gives_nothing_even_while_a_word_arrives() {
        let mut f = Fifo::new(2);
        let t = f.transfer(Some(7u8), true);
        assert_eq!(
            t,
            Transfer {
                pushed: true,
                popped: None
            }
        );
        assert_eq!(f.front(), Some(&7));
    }

    #[test]
    fn one_word_each_way_when_neither_full_nor_empty() {
        let mut f = Fifo::new(4);
        f.transfer(Some(0u32), false);
        for w in 1..100 {
            let t = f.transfer(Some(w), true);
            assert_eq!(
                t,
                Transfer {
                    pushed: true,
                    popped: Some(w - 1)
                }
            );
            assert_eq!(f.len(), 1);
        }
    }

    #[test]
    fn depth_one() {
        let mut f = Fifo::new(1);
        assert_eq!(f.push('a'), Ok(()));
        assert_eq!(f.push('b'), Err('b'));
        assert_eq!(f.pop(), Some('a'));
        assert_eq!(f.pop(), None);
        f.push('c').unwrap();
        f.clear();
        assert!(f.is_empty());
    }

    #[test]
    #[should_panic(expected = "at least one word")]
    fn depth_zero_is_refused() {
        let _ = Fifo::<u8>::new(0);
    }
}
