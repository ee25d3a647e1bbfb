"""cocotb side of `testbench bench --suite harness`.

The stimulus and checksum are those of the C++ loop (testbench/build.rs, BENCH_LOOP) and of the
Rust loop (testbench/src/cli/bench.rs): per cycle, a 64-bit xorshift step drives s_valid_i,
s_data_i and m_ready_i; the clock goes low, then high; m_data_o is added to the checksum (mod
2**64) whenever m_valid_o and m_ready_i are both high while the clock is low.

Parameters come from the environment:
  COCOTB_BENCH_CYCLES        cycles to run (default 20000)
  COCOTB_BENCH_RUNS          runs, each after a reset (default 1); the fastest is reported and
                             every run must give the same checksum
  COCOTB_BENCH_RESULT        file each test appends one line to: `test=NAME cycles=N runs=R
                             seconds=S checksum=C` (S: the fastest run's stimulus loop)
  COCOTB_BENCH_RESET         reset port name (default rst_ni)
  COCOTB_BENCH_RESET_ACTIVE  its active level, 0 or 1 (default 0)

Two ways to clock, measured on this machine (the faster is the one testbench runs):
  timer loop         the test writes clk_i itself and awaits one reused Timer per half cycle:
                     two coroutine resumptions per cycle. Faster.
  bench_clock_edge   cocotb.clock.Clock drives clk_i and the test awaits RisingEdge. In cocotb
                     1.9 Clock is itself a Python coroutine (two resumptions per cycle), so this
                     costs three resumptions per cycle: 0.4 to 0.95 times the timer loop's
                     speed when run side by side here.
                     Run it with `make TESTCASE=bench_clock_edge`.
Two ways to write, both measured by testbench (TESTCASE=bench_timer_loop,bench_timer_loop_immediate):
  bench_timer_loop            `handle.value = v`, what cocotb tests usually do: cocotb 1.9 queues
                              the write and applies it in the next ReadWrite phase, from its own
                              coroutine, so each cycle resumes that coroutine as well.
  bench_timer_loop_immediate  `handle.setimmediatevalue(v)`: the write happens at once. Safe
                              here because the test only runs from Timer callbacks, at the start
                              of a time step, before the model is evaluated. Faster: 1.2 to 2.5
                              times on this design, on a loaded two-core machine.
Only the stimulus loop is timed (time.perf_counter), not the build, the simulator start or the
resets.
"""

import os
import time

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge, Timer

MASK = (1 << 64) - 1
SEED = 0x9E3779B97F4A7C15


def _params():
    cycles = int(os.environ.get("COCOTB_BENCH_CYCLES", "20000"))
    runs = int(os.environ.get("COCOTB_BENCH_RUNS", "1"))
    rst = os.environ.get("COCOTB_BENCH_RESET", "rst_ni")
    active = int(os.environ.get("COCOTB_BENCH_RESET_ACTIVE", "0"))
    return cycles, runs, rst, active


def _step(x):
    """One xorshift64 step, masked to 64 bits."""
    x ^= (x << 13) & MASK
    x ^= x >> 7
    x ^= (x << 17) & MASK
    return x


async def _reset(dut, rst, active):
    """As the C++ and Rust loops: reset on, clock low, clock high, reset off (the release is
    applied together with the first cycle's inputs)."""
    port = getattr(dut, rst)
    port.value = active
    dut.clk_i.value = 0
    await Timer(1, "ns")
    dut.clk_i.value = 1
    await Timer(1, "ns")
    port.value = 1 - active


async def _bench(dut, name, one_run):
    """Resets and runs `one_run` COCOTB_BENCH_RUNS times; every run must give the same checksum;
    reports the fastest."""
    cycles, runs, rst, active = _params()
    best = None
    checksum = None
    for i in range(runs):
        await _reset(dut, rst, active)
        seconds, total = await one_run(dut, cycles)
        dut._log.info(
            "%s run %d: %d cycles in %.3f s: %.0f cycles/s, checksum %#018x",
            name, i + 1, cycles, seconds, cycles / seconds, total,
        )
        if checksum is not None and total != checksum:
            raise AssertionError(f"run {i + 1}: checksum {total:#x}, run 1 gave {checksum:#x}")
        checksum = total
        best = seconds if best is None else min(best, seconds)
    path = os.environ.get("COCOTB_BENCH_RESULT")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(
                f"test={name} cycles={cycles} runs={runs} seconds={best!r} checksum={checksum}\n"
            )


async def _timer_loop(dut, cycles):
    clk, s_valid, s_data = dut.clk_i, dut.s_valid_i, dut.s_data_i
    m_ready, m_valid, m_data = dut.m_ready_i, dut.m_valid_o, dut.m_data_o
    half = Timer(1, "ns")  # reused: constructing a trigger per await costs time
    x = SEED
    total = 0
    t0 = time.perf_counter()
    for _ in range(cycles):
        x = _step(x)
        ready = ((x >> 1) | (x >> 2)) & 1
        s_valid.value = x & 1
        s_data.value = x
        m_ready.value = ready
        clk.value = 0
        await half
        # Outputs as evaluated with the clock low (registered, so they show the last edge).
        if ready and m_valid.value.integer:
            total = (total + m_data.value.integer) & MASK
        clk.value = 1
        await half
    return time.perf_counter() - t0, total


async def _timer_loop_immediate(dut, cycles):
    """_timer_loop with setimmediatevalue instead of `.value =`."""
    clk, s_valid, s_data = dut.clk_i, dut.s_valid_i, dut.s_data_i
    m_ready, m_valid, m_data = dut.m_ready_i, dut.m_valid_o, dut.m_data_o
    half = Timer(1, "ns")
    x = SEED
    total = 0
    t0 = time.perf_counter()
    for _ in range(cycles):
        x = _step(x)
        ready = ((x >> 1) | (x >> 2)) & 1
        s_valid.setimmediatevalue(x & 1)
        s_data.setimmediatevalue(x)
        m_ready.setimmediatevalue(ready)
        clk.setimmediatevalue(0)
        await half
        if ready and m_valid.value.integer:
            total = (total + m_data.value.integer) & MASK
        clk.setimmediatevalue(1)
        await half
    return time.perf_counter() - t0, total


async def _clock_edge(dut, cycles):
    clk, s_valid, s_data = dut.clk_i, dut.s_valid_i, dut.s_data_i
    m_ready, m_valid, m_data = dut.m_ready_i, dut.m_valid_o, dut.m_data_o
    x = _step(SEED)
    ready = ((x >> 1) | (x >> 2)) & 1
    s_valid.value = x & 1
    s_data.value = x
    m_ready.value = ready
    clock = cocotb.start_soon(Clock(clk, 2, "ns").start(start_high=False))
    edge = RisingEdge(clk)
    total = 0
    t0 = time.perf_counter()
    for _ in range(cycles):
        await edge
        # Resumed at the edge before the model evaluates it: the outputs still show the
        # previous edge, as the other loops see them with the clock low. Writes made now are
        # applied after this edge (cocotb 1.9 defers them to the ReadWrite phase).
        if ready and m_valid.value.integer:
            total = (total + m_data.value.integer) & MASK
        x = _step(x)
        ready = ((x >> 1) | (x >> 2)) & 1
        s_valid.value = x & 1
        s_data.value = x
        m_ready.value = ready
    seconds = time.perf_counter() - t0
    clock.kill()
    return seconds, total


@cocotb.test()
async def bench_timer_loop(dut):
    """The clock written by the test, one Timer per half cycle."""
    await _bench(dut, "bench_timer_loop", _timer_loop)


@cocotb.test()
async def bench_timer_loop_immediate(dut):
    """As bench_timer_loop, writing with setimmediatevalue."""
    await _bench(dut, "bench_timer_loop_immediate", _timer_loop_immediate)


@cocotb.test()
async def bench_clock_edge(dut):
    """cocotb.clock.Clock drives the clock; the test awaits RisingEdge."""
    await _bench(dut, "bench_clock_edge", _clock_edge)
