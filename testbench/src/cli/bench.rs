//! `testbench bench --suite harness`: the same generated model, the same number of cycles, the
//! same stimulus, driven (1) by a plain C++ Verilator loop built by the project, (2) from Rust
//! through the generated binding, (3) from Rust through `Sim` with stream drivers (random idle
//! cycles and backpressure, protocol checks), and (4) by cocotb 1.9 on the same RTL. Prints
//! cycles/s and ratios. A benchmark to read, not a timed test.

use crate::drivers::stream::{StreamSink, StreamSource};
use crate::rtl::BenchTop;
use crate::sim::{Dut, Sim};
use std::path::Path;
use std::time::Instant;

extern "C" {
    fn bench_cpp_loop(cycles: u64, checksum: *mut u64) -> f64;
}

fn cpp(cycles: u64) -> (f64, u64) {
    let mut sum = 0u64;
    // SAFETY: plain C function; `sum` outlives the call.
    let secs = unsafe { bench_cpp_loop(cycles, &mut sum) };
    (secs, sum)
}

/// The C++ loop's stimulus, through the generated Rust binding.
fn rust_binding(cycles: u64) -> (f64, u64) {
    let top = BenchTop::create(0);
    let rst = top.port_ptr("rst_ni").is_some();
    let set_rst = |on: bool| {
        let (ptr, _) = top
            .port_ptr(if rst { "rst_ni" } else { "rst_i" })
            .expect("reset port");
        // SAFETY: a 1-bit port of the live model.
        unsafe { *ptr = if on != rst { 1 } else { 0 } };
    };
    set_rst(true);
    top.set_clk_i(0);
    top.eval();
    top.set_clk_i(1);
    top.eval();
    set_rst(false);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut sum = 0u64;
    let t0 = Instant::now();
    for _ in 0..cycles {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        top.set_s_valid_i((x & 1) as u8);
        top.set_s_data_i(x);
        top.set_m_ready_i((((x >> 1) | (x >> 2)) & 1) as u8);
        top.set_clk_i(0);
        top.eval();
        if top.m_valid_o() != 0 && top.m_ready_i() != 0 {
            sum = sum.wrapping_add(top.m_data_o());
        }
        top.set_clk_i(1);
        top.eval();
    }
    (t0.elapsed().as_secs_f64(), sum)
}

/// The way most tests drive models: `Sim` with a stream source and sink added to it (shared
/// handles: each call through `Rc<RefCell<dyn Component>>`).
fn rust_sim(cycles: u64) -> f64 {
    let mut sim = Sim::<BenchTop>::new();
    let src = sim.add(StreamSource::new(&sim, "s", &["data"], 1, 50));
    let sink = sim.add(StreamSink::new(&sim, "m", &["data"], 2, 25));
    sim.reset(2);
    let t0 = Instant::now();
    let mut next = 0u64;
    let mut left = cycles;
    while left > 0 {
        {
            let mut s = src.borrow_mut();
            while s.pending() < 1024 {
                s.push(&[next]);
                next += 1;
            }
        }
        let n = left.min(1024);
        sim.run(n);
        left -= n;
        // Keep memory flat: the benchmark checks order as it goes, like a scoreboard.
        let mut k = sink.borrow_mut();
        assert!(k.violations.is_empty());
        k.received.clear();
        src.borrow_mut().accepted.clear();
    }
    t0.elapsed().as_secs_f64()
}

/// The same drivers owned by the test and clocked by [`Sim::run_with`]: static calls.
fn rust_sim_static(cycles: u64) -> f64 {
    let mut sim = Sim::<BenchTop>::new();
    let mut drivers = (
        StreamSource::new(&sim, "s", &["data"], 1, 50),
        StreamSink::new(&sim, "m", &["data"], 2, 25),
    );
    sim.reset_with(2, &mut drivers);
    let t0 = Instant::now();
    let mut next = 0u64;
    let mut left = cycles;
    while left > 0 {
        while drivers.0.pending() < 1024 {
            drivers.0.push(&[next]);
            next += 1;
        }
        let n = left.min(1024);
        sim.run_with(n, &mut drivers);
        left -= n;
        assert!(drivers.1.violations.is_empty());
        drivers.1.received.clear();
        drivers.0.accepted.clear();
    }
    t0.elapsed().as_secs_f64()
}

/// Runs of each loop, interleaved; the best is kept (the machine is shared and noisy).
const RUNS: usize = 7;

/// Cycles cocotb runs (at most `--cycles`): it is about a thousand times slower, so a run of
/// this length takes a second or two.
const COCOTB_CYCLES: u64 = 30_000;

/// The C++ loop's checksum over `cycles` cycles, cross-checked with the Rust binding's: what
/// the cocotb run of the same length must give.
pub fn checksum(cycles: u64) -> Result<u64, String> {
    let (_, c) = cpp(cycles);
    let (_, r) = rust_binding(cycles);
    if c != r {
        return Err(format!(
            "the C++ and Rust loops disagree over {cycles} cycles (checksums {c:#x} and {r:#x})"
        ));
    }
    Ok(c)
}

/// A benchmark's goals: each figure is compared with its goal as it is printed (the mark to
/// print beside it is returned), and [`Goals::finish`] prints the misses; with `--check` a miss
/// is exit code 1. Figures in simulated cycles are deterministic, so a miss is a regression,
/// not noise; wall-clock figures never get a goal.
#[derive(Default)]
pub struct Goals {
    missed: Vec<String>,
}

impl Goals {
    /// `v` must be at least `goal`.
    pub fn at_least(&mut self, what: &str, v: f64, goal: f64) -> &'static str {
        if v >= goal {
            "ok"
        } else {
            self.missed.push(format!("{what}: {v:.3} < {goal}"));
            "BELOW GOAL"
        }
    }

    /// `v` must be at most `goal`.
    pub fn at_most(&mut self, what: &str, v: f64, goal: f64) -> &'static str {
        if v <= goal {
            "ok"
        } else {
            self.missed.push(format!("{what}: {v:.3} > {goal}"));
            "ABOVE GOAL"
        }
    }

    /// `v` must be within `tolerance` (a fraction) of `want`.
    pub fn within(&mut self, what: &str, v: f64, want: f64, tolerance: f64) -> &'static str {
        if (v / want - 1.0).abs() <= tolerance {
            "ok"
        } else {
            self.missed.push(format!(
                "{what}: {v:.4} is {:+.3}% off {want:.4} (allowed {}%)",
                (v / want - 1.0) * 100.0,
                tolerance * 100.0
            ));
            "OFF GOAL"
        }
    }

    /// A figure that could not be measured (its run failed): a miss.
    pub fn fail(&mut self, what: &str) -> &'static str {
        self.missed.push(what.to_string());
        "FAILED"
    }

    /// Prints the misses; the exit code: 1 with `check` when a goal was missed.
    pub fn finish(&self, check: bool) -> i32 {
        if self.missed.is_empty() {
            println!("  every gated figure met its goal");
            0
        } else {
            println!("  goals missed: {}", self.missed.join("; "));
            i32::from(check)
        }
    }
}

/// Runs `testbench bench`; returns the exit code.
pub fn run(suite: &str, cycles: u64, cocotb: bool, venv: Option<&Path>, check: bool) -> i32 {
    match suite {
        "harness" => {}
        "chip" => return crate::cli::bench_chip::run(check),
        "dma" => return crate::cli::bench_dma::run(),
        "nvme-tcp" => return crate::cli::bench_nvme_tcp::run(check),
        "qos" => return crate::cli::bench_qos::run_bench(check),
        "nvme" => return crate::cli::bench_nvme::run(check),
        "rdma" => return crate::cli::bench_rdma::run(),
        "tcp" => return crate::cli::bench_tcp::run(check),
        _ => {
            eprintln!(
                "testbench: no benchmark `{suite}`; benchmarks: harness, chip, dma, nvme, nvme-tcp, qos, rdma, tcp"
            );
            return 2;
        }
    }
    println!(
        "harness benchmark: {} ({} ports), {cycles} cycles per run, {RUNS} rounds",
        BenchTop::NAME,
        BenchTop::PORTS.len()
    );
    // Each round runs the four loops back to back; a loop's ratio to C++ is taken within a
    // round (the machine's speed drifts between rounds) and the median over the rounds is
    // printed, beside the best rate of each loop.
    let mut times: [Vec<f64>; 4] = Default::default();
    let mut sums = (0u64, 0u64);
    for _ in 0..RUNS {
        let (t, sum) = cpp(cycles);
        times[0].push(t);
        sums.0 = sum;
        let (t, sum) = rust_binding(cycles);
        times[1].push(t);
        sums.1 = sum;
        times[2].push(rust_sim_static(cycles));
        times[3].push(rust_sim(cycles));
    }
    if sums.0 != sums.1 {
        eprintln!(
            "testbench: the C++ and Rust loops disagree (checksums {:#x} and {:#x})",
            sums.0, sums.1
        );
        return 1;
    }
    let rate = |secs: f64| cycles as f64 / secs;
    let best = |k: usize| rate(times[k].iter().copied().fold(f64::MAX, f64::min));
    let ratio = |k: usize| {
        let mut r: Vec<f64> = (0..RUNS).map(|i| times[0][i] / times[k][i]).collect();
        r.sort_by(f64::total_cmp);
        r[RUNS / 2]
    };
    let cpp_rate = best(0);
    let sim_rate = best(2);
    println!("  loop                        best cycles/s   median ratio to C++ within a round");
    println!("  C++ Verilator loop          {cpp_rate:>14.0}   1.00");
    println!(
        "  Rust, generated binding     {:>14.0}   {:.2}",
        best(1),
        ratio(1)
    );
    println!(
        "  Rust, Sim::run_with drivers {sim_rate:>14.0}   {:.2}   (stream source and sink: random idle/backpressure, protocol checks, every word kept; static calls)",
        ratio(2)
    );
    println!(
        "  Rust, Sim::add drivers      {:>14.0}   {:.2}   (the same drivers as shared handles: Rc<RefCell<dyn Component>>)",
        best(3),
        ratio(3)
    );
    if cocotb {
        let n = cycles.min(COCOTB_CYCLES);
        let expected = match checksum(n) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("testbench: {e}");
                return 1;
            }
        };
        let results = match crate::cli::cocotb::measure(venv, n, 3) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("testbench: cocotb measurement failed: {e}");
                return 1;
            }
        };
        for m in &results {
            if m.checksum != expected {
                eprintln!(
                    "testbench: cocotb `{}` disagrees with the C++ and Rust loops over {n} cycles (checksums {:#x} and {expected:#x})",
                    m.test, m.checksum
                );
                return 1;
            }
        }
        println!(
            "  cocotb {} on the same RTL: {n} cycles per run, best of 3 in one simulator, checksum {expected:#x} = C++ = Rust",
            crate::cli::cocotb::COCOTB
        );
        for (m, (_, label)) in results.iter().zip(crate::cli::cocotb::TESTS) {
            let co = m.rate();
            println!(
                "    {label:<26}{co:>14.0} cycles/s   {:.4} of C++; Rust Sim is {:.0}x, Rust binding {:.0}x",
                co / cpp_rate,
                sim_rate / co,
                best(1) / co
            );
        }
    }
    0
}
