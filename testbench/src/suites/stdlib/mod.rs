//! The `stdlib` suite: the standard blocks against their golden models.

pub mod interval_timer;
pub mod skid_buffer;
