//! The DMA engine: the descriptor walker and the mover, each against its golden model.

pub mod mover;
pub mod walker;
