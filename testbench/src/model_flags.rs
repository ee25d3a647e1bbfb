// One list of Verilator flags for every model the testbench Verilates: the tops of rtl/
// (testbench/build.rs, which `include!`s this file, adding `--cc -O3`) and a board's bring-up
// core (`board::model`, which chooses its C++ optimization apart).

/// Verilator's flags for every model the testbench runs, besides `--cc` and the optimization.
pub const MODEL_FLAGS: &[&str] = &[
    // X assignments and variables without a reset get their values at construction from the
    // model's context: all zero unless the shim asks for random ones (`--x-init random`, see
    // sim.rs). `fast` would fix them at Verilation time, and the same for every run.
    "--x-assign",
    "unique",
    "--x-initial",
    "unique",
    "--noassert",
    // Verilator 5.006 miscompiles some XNOR trees in its bit-op-tree optimization (Yosys
    // netlists of the CRC blocks simulated wrongly; iverilog and `-O0` agree with the RTL).
    // Upstream issue verilator#4059, fixed after 5.006. A wrong simulator result costs more
    // than the optimization gives.
    "-fno-const-bit-op-tree",
    "--trace-fst",
    "-CFLAGS",
    "-fPIC",
];
