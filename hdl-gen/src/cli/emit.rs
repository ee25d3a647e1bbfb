//! `hdl-gen emit`: generate everything in memory first, then write; a failure writes nothing.

use super::Failure;
use crate::chip;
use crate::config::Config;
use hdl_builder::OutFile;
use std::path::Path;

/// Files in `dir` that an earlier `emit` wrote and this one would not.
pub(crate) fn stale_files(dir: &Path, files: &[OutFile]) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut stale: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_file())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            if files.iter().any(|f| f.path == name) {
                return None;
            }
            let text = std::fs::read_to_string(e.path()).ok()?;
            text.lines()
                .take(3)
                .any(|l| l.contains(chip::MARKER))
                .then_some(name)
        })
        .collect();
    stale.sort();
    stale
}

/// Writes `files` into `dir`, leaving unchanged files untouched (so builds that depend on them
/// do not rerun), and deletes files an earlier run generated that are no longer emitted.
pub fn write_tree(dir: &Path, files: &[OutFile]) -> std::io::Result<(usize, usize)> {
    std::fs::create_dir_all(dir)?;
    let mut written = 0;
    for f in files {
        let path = dir.join(&f.path);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(f.contents.as_str()) {
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, &f.contents)?;
        tracing::debug!(file = %path.display(), "wrote");
        written += 1;
    }
    let stale = stale_files(dir, files);
    for name in &stale {
        std::fs::remove_file(dir.join(name))?;
        tracing::info!(file = %name, "removed a file the generator no longer emits");
    }
    Ok((written, stale.len()))
}

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
