//! `hdl-gen emit`: generate everything in memory first, then write; a failure writes nothing.

use crate::chip;
use crate::config::Config;
use crate::util::{write_tree, Failure};
use std::path::Path;

pub(super) fn run(cfg: &Config, out: &Path) -> Result<(), Failure> {
    let files = chip::files(cfg)?;
    let (written, removed) = write_tree(out, &files)
        .map_err(|e| Failure::usage(format!("cannot write to {}: {e}", out.display())))?;
    tracing::info!(
        "{} files for `{}` in {} ({written} changed, {removed} removed)",
        files.len(),
        cfg.chip.name,
        out.display()
    );
    Ok(())
}
