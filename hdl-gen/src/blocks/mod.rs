//! Standard blocks, each a generator function built on the builder's public API. The golden
//! model and the property test of each block live in `testbench/`, under the same name.

pub mod interval_timer;
pub mod skid_buffer;
