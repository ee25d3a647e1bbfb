//! Random initial values (`regress --x-init random`, `TB_X_INIT=random`): the models start from
//! values drawn from the case's seed, registers and RAM words alike; the default is all zero.
//! Observed on the FIFO (fifo_w32_d13): `count_q` has a reset, `ram_rdata_q` (its registered
//! read port) and the RAM have none. Without a reset, a FIFO whose random count says it holds
//! words pops them: what comes out are RAM words nobody wrote.

use testbench::rtl::FifoTop;
use testbench::sim::{with_x_init, Sim, XInit};

/// What a FIFO shows from creation, without a reset: (count, read data, words popped in 40
/// cycles), then its count after a reset.
#[derive(Debug, PartialEq, Clone)]
struct Seen {
    count: u64,
    rdata: u64,
    popped: Vec<u64>,
    count_after_reset: u64,
}

fn observe() -> Seen {
    let mut sim = Sim::<FifoTop>::new();
    sim.settle();
    let (count, rdata) = (sim.signal("count_o").get(), sim.signal("rd_data_o").get());
    let rd_en = sim.signal("rd_en_i");
    let (valid, data) = (sim.signal("rd_valid_o"), sim.signal("rd_data_o"));
    rd_en.set(1);
    let mut popped = Vec::new();
    for _ in 0..40 {
        sim.step();
        if valid.is_high() {
            popped.push(data.get());
        }
    }
    rd_en.set(0);
    sim.reset(2);
    sim.settle();
    Seen {
        count,
        rdata,
        popped,
        count_after_reset: sim.signal("count_o").get(),
    }
}

#[test]
fn zero_by_default() {
    for seed in [1, 2, 3] {
        let s = with_x_init(XInit::Zero, seed, observe);
        assert_eq!(
            s,
            Seen {
                count: 0,
                rdata: 0,
                popped: vec![],
                count_after_reset: 0
            }
        );
    }
}

#[test]
fn random_values_differ_per_seed_and_replay() {
    let seen: Vec<Seen> = (1..=16u64)
        .map(|seed| with_x_init(XInit::Random, seed, observe))
        .collect();
    // The same seed gives the same values (a case replays and shrinks).
    for (i, s) in seen.iter().enumerate().take(4) {
        assert_eq!(*s, with_x_init(XInit::Random, i as u64 + 1, observe));
    }
    // Registers: the read data register differs between seeds, and is mostly nonzero.
    let rdata: std::collections::BTreeSet<u64> = seen.iter().map(|s| s.rdata).collect();
    assert!(rdata.len() >= 15, "read data register: {rdata:x?}");
    let counts: std::collections::BTreeSet<u64> = seen.iter().map(|s| s.count).collect();
    assert!(counts.len() >= 5, "count register: {counts:?}");
    // RAM words: a FIFO left out of reset pops words nobody wrote, random ones.
    let words: Vec<u64> = seen.iter().flat_map(|s| s.popped.clone()).collect();
    let distinct: std::collections::BTreeSet<u64> = words.iter().copied().collect();
    assert!(
        words.len() >= 40 && distinct.len() * 10 >= words.len() * 9,
        "RAM words popped without a reset: {words:x?}"
    );
    // A reset still clears what it resets.
    assert!(seen.iter().all(|s| s.count_after_reset == 0));
}

#[test]
fn models_of_one_case_get_different_values() {
    let (a, b) = with_x_init(XInit::Random, 7, || (observe(), observe()));
    assert_ne!(a, b);
    assert_eq!(
        (a, b),
        with_x_init(XInit::Random, 7, || (observe(), observe()))
    );
}

/// Every output of a model, before any reset.
fn outputs<M: testbench::sim::Dut>() -> Vec<u32> {
    let sim = Sim::<M>::new();
    sim.settle();
    M::PORTS
        .iter()
        .filter(|p| !p.2)
        .flat_map(|p| sim.signal(p.0).get_words())
        .collect()
}

#[test]
fn the_chip_starts_random_too() {
    use testbench::rtl::{ChipTop, NvmeCtrlTop};
    assert_eq!(
        with_x_init(XInit::Zero, 1, outputs::<ChipTop>),
        with_x_init(XInit::Zero, 2, outputs::<ChipTop>)
    );
    let (a, b) = (
        with_x_init(XInit::Random, 1, outputs::<ChipTop>),
        with_x_init(XInit::Random, 2, outputs::<ChipTop>),
    );
    assert_ne!(a, b);
    assert_ne!(
        with_x_init(XInit::Random, 1, outputs::<NvmeCtrlTop>),
        with_x_init(XInit::Random, 2, outputs::<NvmeCtrlTop>)
    );
}
