//! Property, as a state machine (`proptest-state-machine`): a sequence of FIFO operations (write,
//! read, both, idle, reset) generated from a reference state, so the generator favours reads
//! when the reference is full and writes when it is empty, and shrinking keeps sequences
//! meaningful. The standard FIFO runs the sequence one operation per cycle; after every
//! operation its ports must agree with the reference.

use crate::models::fifo::Fifo as Model;
use crate::prop::Property;
use crate::rtl::FifoTop as Dut;
use crate::sim::Sim;
use proptest::prelude::*;
use proptest_state_machine::ReferenceStateMachine;
use std::path::Path;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// One cycle's operation.
#[derive(Clone, Debug)]
pub enum Op {
    /// Offer a word (taken only when not full).
    Write(u32),
    /// Ask for a word (`rd_en_i`).
    Read,
    /// Both in one cycle.
    WriteRead(u32),
    /// Neither.
    Idle,
    /// One cycle of reset.
    Reset,
}

/// The reference: words held, and the depth (from the module name).
#[derive(Clone, Debug)]
pub struct Reference {
    held: usize,
    depth: usize,
}

fn depth() -> usize {
    Dut::NAME
        .rsplit("_d")
        .next()
        .and_then(|d| d.parse().ok())
        .expect("the FIFO's depth is in its name")
}

fn initial() -> Reference {
    Reference {
        held: 0,
        depth: depth(),
    }
}

/// The reference state machine.
pub struct FifoMachine;

impl ReferenceStateMachine for FifoMachine {
    type State = Reference;
    type Transition = Op;

    fn init_state() -> BoxedStrategy<Reference> {
        Just(initial()).boxed()
    }

    fn transitions(state: &Reference) -> BoxedStrategy<Op> {
        // Weights follow the state, so sequences reach full and empty and stay near them.
        let (w, r) = if state.held == state.depth {
            (1, 6)
        } else if state.held == 0 {
            (6, 1)
        } else {
            (3, 3)
        };
        prop_oneof![
            w => any::<u32>().prop_map(Op::Write),
            r => Just(Op::Read),
            2 => any::<u32>().prop_map(Op::WriteRead),
            1 => Just(Op::Idle),
            1 => Just(Op::Reset),
        ]
        .boxed()
    }

    fn apply(mut state: Reference, op: &Op) -> Reference {
        let before = state.held;
        match op {
            Op::Write(_) => state.held += (before < state.depth) as usize,
            Op::Read => state.held -= (before > 0) as usize,
            Op::WriteRead(_) => {
                state.held = state.held + (before < state.depth) as usize - (before > 0) as usize
            }
            Op::Idle => {}
            Op::Reset => state.held = 0,
        }
        state
    }
}

/// See the module documentation.
pub struct FifoOpsProp;

impl Property for FifoOpsProp {
    type Input = (Reference, Vec<Op>, Option<Arc<AtomicUsize>>);
    const NAME: &'static str = "fifo_ops";

    fn strategy() -> BoxedStrategy<Self::Input> {
        FifoMachine::sequential_strategy(1..400).boxed()
    }

    fn run(input: &Self::Input, waves: Option<&Path>) -> Result<(), String> {
        let (_, ops, seen) = input;
        let mut sim = Sim::<Dut>::maybe_waves(waves);
        let (s_valid, s_ready, s_data, rd_en, rd_valid, rd_data, empty, count) = (
            sim.signal("s_valid_i"),
            sim.signal("s_ready_o"),
            sim.signal("s_data_i"),
            sim.signal("rd_en_i"),
            sim.signal("rd_valid_o"),
            sim.signal("rd_data_o"),
            sim.signal("empty_o"),
            sim.signal("count_o"),
        );
        let mask = (1u64 << s_data.width().min(63)) - 1;
        let mut model: Model<u64> = Model::new(depth());
        let mut reference = initial();
        sim.reset(2);
        let mut expect: Option<u64> = None;
        for (i, op) in ops.iter().enumerate() {
            // Tell the shrinker how far the run got: it first drops the operations never run.
            if let Some(seen) = seen {
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            if let Op::Reset = op {
                sim.reset(1);
                model.clear();
                expect = None;
                reference = FifoMachine::apply(reference, op);
                continue;
            }
            let (offer, read) = match op {
                Op::Write(v) => (Some(*v as u64 & mask), false),
                Op::Read => (None, true),
                Op::WriteRead(v) => (Some(*v as u64 & mask), true),
                _ => (None, false),
            };
            s_valid.set(offer.is_some() as u64);
            s_data.set(offer.unwrap_or(0));
            rd_en.set(read as u64);
            sim.settle();
            let full = model.len() == model.depth();
            if s_ready.is_high() == full || empty.is_high() != model.is_empty() {
                return Err(format!(
                    "op {i} {op:?}: s_ready_o {} empty_o {} with {} words held",
                    s_ready.get(),
                    empty.get(),
                    model.len()
                ));
            }
            match expect.take() {
                Some(w) if rd_valid.is_high() && rd_data.get() == w => {}
                Some(w) => {
                    return Err(format!(
                        "op {i} {op:?}: expected word {w:#x}, rd_valid_o {} rd_data_o {:#x}",
                        rd_valid.get(),
                        rd_data.get()
                    ))
                }
                None if rd_valid.is_high() => {
                    return Err(format!("op {i} {op:?}: rd_valid_o without a read"))
                }
                None => {}
            }
            sim.step();
            expect = model.transfer(offer, read).popped;
            reference = FifoMachine::apply(reference, op);
            if count.get() as usize != model.len() || reference.held != model.len() {
                return Err(format!(
                    "op {i} {op:?}: count_o {}, model {}, reference {}",
                    count.get(),
                    model.len(),
                    reference.held
                ));
            }
        }
        Ok(())
    }
}
