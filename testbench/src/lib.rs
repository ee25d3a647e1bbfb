//! The testbench: drives the Verilator-compiled RTL from Rust and compares it with golden models.

pub mod models;
