//! What the tool's layers share: the error that ends a command with an exit code, the
//! repository's paths, and writing a tree of generated files. It sits below `lint.rs`,
//! `fpga/` and `cli/` (each uses it, it uses none of them) and above the generators: it knows
//! the configuration's error, the builder's, and the marker every generated file carries
//! (`chip::MARKER`), so it never deletes a file the generator did not write.

use crate::chip;
use crate::config::ConfigError;
use hdl_builder::OutFile;
use std::path::{Path, PathBuf};

/// A failure that ends the command with an exit code.
#[derive(Debug)]
pub struct Failure {
    /// Process exit code.
    pub code: i32,
    /// What to tell the user.
    pub message: String,
}

impl Failure {
    /// A failure with exit code 2: the configuration, the generator or the environment is at
    /// fault.
    pub(crate) fn usage(message: impl Into<String>) -> Failure {
        Failure {
            code: 2,
            message: message.into(),
        }
    }
}

impl From<ConfigError> for Failure {
    fn from(e: ConfigError) -> Failure {
        Failure::usage(format!("bad configuration: {e}\nnothing was written"))
    }
}

impl From<hdl_builder::Errors> for Failure {
    fn from(e: hdl_builder::Errors) -> Failure {
        Failure::usage(format!("{e}\nelaboration failed; nothing was written"))
    }
}

/// The repository root this binary was built from.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The shipped default configuration.
pub fn default_config() -> PathBuf {
    repo_root().join("configs").join("default.toml")
}

/// The committed RTL folder.
pub fn default_rtl() -> PathBuf {
    repo_root().join("rtl")
}

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
