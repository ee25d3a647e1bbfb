//! Register blocks (in progress).
