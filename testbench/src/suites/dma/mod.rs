//! The DMA engine: the descriptor walker and the mover, each against its golden model, and the
//! engine end to end against the two composed.
//!
//! What lives here:
//!
//! - `walker.rs`, `mover.rs`: each part against its golden model
//! - `engine.rs`: the engine end to end

pub mod engine;
pub mod mover;
pub mod walker;
