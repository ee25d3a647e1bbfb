//! The DMA engine: the descriptor walker and the mover, each against its golden model, and the
//! engine end to end against the two composed.

pub mod engine;
pub mod mover;
pub mod walker;
