//! `testbench bench` (being written).
