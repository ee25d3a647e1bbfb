//! `hdl-gen check`: is the committed RTL what the generator emits now?

use crate::chip;
use crate::config::Config;
use crate::util::{stale_files, Failure};
use std::path::Path;

pub(super) fn run(cfg: &Config, dir: &Path) -> Result<(), Failure> {
    let files = chip::files(cfg)?;
    let mut problems = Vec::new();
    for f in &files {
        match std::fs::read_to_string(dir.join(&f.path)) {
            Ok(text) if text == f.contents => {}
            Ok(_) => problems.push(format!("  differs: {}", f.path)),
            Err(_) => problems.push(format!("  missing: {}", f.path)),
        }
    }
    for name in stale_files(dir, &files) {
        problems.push(format!("  no longer generated: {name}"));
    }
    if problems.is_empty() {
        println!("{}: {} files current", dir.display(), files.len());
        return Ok(());
    }
    Err(Failure {
        code: 1,
        message: format!(
            "{} is stale:\n{}\nrun `hdl-gen emit` and commit the result",
            dir.display(),
            problems.join("\n")
        ),
    })
}
