//! The cocotb side of the harness benchmark.

use std::path::Path;

/// Runs the cocotb benchmark on the same RTL; returns its cycles per second.
pub fn measure(_venv: Option<&Path>) -> Result<f64, String> {
    Err("the cocotb benchmark is not wired up yet; run with --no-cocotb".into())
}
