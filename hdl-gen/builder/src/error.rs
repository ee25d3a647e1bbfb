//! Elaboration errors: what went wrong, in which module and signal, and the Rust line that built it.

use std::fmt;
use std::panic::Location;

/// A source location captured with `#[track_caller]` where the offending IR was built.
pub type Loc = &'static Location<'static>;

/// The class of an elaboration error, so tests and tools can match on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Operand or assignment widths differ, a slice is out of range, a constant does not fit.
    Width,
    /// A signal that must be driven has no driver.
    Undriven,
    /// A signal has more than one driver.
    MultiplyDriven,
    /// A combinational path leads from a signal back to itself.
    CombLoop,
    /// An instance input has nothing connected to it.
    UnconnectedInput,
    /// Two declarations share a name, or a name is not a legal SystemVerilog identifier.
    NameCollision,
    /// An input port, a register output or another read-only signal is assigned.
    DrivingInput,
    /// An instance binding names a port the module does not have, or binds it the wrong way.
    PortMismatch,
    /// A signal (or some of its bits) is never read; the emitted RTL would not be lint-clean.
    Unused,
    /// A signal assigned in a combinational block is not assigned on every path (it would be a latch).
    Latch,
    /// A signal of one module is used in another.
    ForeignSignal,
    /// A register, memory port or instance input of one clock domain takes a value of another
    /// (or an asynchronous input) without a synchronizer block in between.
    ClockCrossing,
    /// Anything else the builder refuses (an illegal parameter, a bad register map).
    Invalid,
}

impl ErrorKind {
    fn tag(self) -> &'static str {
        match self {
            ErrorKind::Width => "width",
            ErrorKind::Undriven => "undriven",
            ErrorKind::MultiplyDriven => "multiply-driven",
            ErrorKind::CombLoop => "comb-loop",
            ErrorKind::UnconnectedInput => "unconnected-input",
            ErrorKind::NameCollision => "name",
            ErrorKind::DrivingInput => "driving-input",
            ErrorKind::PortMismatch => "port-mismatch",
            ErrorKind::Unused => "unused",
            ErrorKind::Latch => "latch",
            ErrorKind::ForeignSignal => "foreign-signal",
            ErrorKind::ClockCrossing => "clock-crossing",
            ErrorKind::Invalid => "invalid",
        }
    }
}

/// One elaboration error.
#[derive(Clone, Debug)]
pub struct Error {
    /// What kind of mistake this is.
    pub kind: ErrorKind,
    /// The module being elaborated.
    pub module: String,
    /// The signal (or instance, or register) the error is about, when there is one.
    pub signal: Option<String>,
    /// The Rust source line that built the offending piece of IR.
    pub loc: Loc,
    /// What is wrong and, where it helps, what to do about it.
    pub message: String,
}

impl Error {
    /// The line number of the Rust source that built the offending IR.
    pub fn line(&self) -> u32 {
        self.loc.line()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error[{}]: module `{}`", self.kind.tag(), self.module)?;
        if let Some(s) = &self.signal {
            write!(f, ", `{s}`")?;
        }
        write!(
            f,
            ": {}\n  --> {}:{}:{}",
            self.message,
            self.loc.file(),
            self.loc.line(),
            self.loc.column()
        )
    }
}

/// Every error found while elaborating a module or a design; never empty.
#[derive(Clone, Debug)]
pub struct Errors(pub Vec<Error>);

impl Errors {
    /// One [`ErrorKind::Invalid`] error: a generator refusing its parameters, located at the
    /// generator's caller.
    #[track_caller]
    pub fn invalid(module: &str, message: impl Into<String>) -> Errors {
        Errors(vec![Error {
            kind: ErrorKind::Invalid,
            module: module.to_string(),
            signal: None,
            loc: std::panic::Location::caller(),
            message: message.into(),
        }])
    }

    /// True when some error is of `kind`.
    pub fn has(&self, kind: ErrorKind) -> bool {
        self.0.iter().any(|e| e.kind == kind)
    }

    /// The first error of `kind`, if any.
    pub fn find(&self, kind: ErrorKind) -> Option<&Error> {
        self.0.iter().find(|e| e.kind == kind)
    }
}

impl fmt::Display for Errors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        if self.0.len() > 1 {
            write!(f, "\n{} errors", self.0.len())?;
        }
        Ok(())
    }
}

impl std::error::Error for Errors {}
