//! `hdl-builder`: a typed hardware IR, its elaboration checks, and a SystemVerilog emitter.
//!
//! The builder knows nothing about NVMe or any other protocol: it is the library that the chip
//! generators in `hdl-gen` use, through this public API only.
//!
//! ```
//! use hdl_builder::prelude::*;
//!
//! let mut m = ModuleBuilder::new("adder8");
//! let a = m.input("a_i", 8);
//! let b = m.input("b_i", 8);
//! let sum = m.output("sum_o", 8);
//! let acc = m.reg("acc", 8, 0);
//! m.assign(acc.d, acc.q + a + b);
//! m.assign(sum, acc.q);
//! let module = m.finish().expect("checks pass");
//! assert_eq!(module.name(), "adder8");
//! ```
//!
//! Every check runs in [`ModuleBuilder::finish`]; errors name the module, the signal and the
//! Rust line that built the faulty piece (see [`ErrorKind`]).

mod binding;
mod check;
mod design;
mod emit;
mod error;
mod expr;
mod module;
pub mod regs;
pub mod stream;

pub use design::{Design, EmitOptions, OutFile};
pub use error::{Error, ErrorKind, Errors, Loc};
pub use expr::{cat, clog2, lit, mux, ones, zeros, Expr, Operand, Sig, Value};
pub use module::{
    CaseArms, Comb, EnumTy, IfChain, Inst, Mem, Module, ModuleBuilder, PortInfo, Reg, ResetStyle,
    CLOCK_PORT,
};

/// Everything a block generator usually needs.
pub mod prelude {
    pub use crate::expr::{cat, clog2, lit, mux, ones, zeros, Expr, Sig, Value};
    pub use crate::module::{Module, ModuleBuilder, Reg, ResetStyle};
    pub use crate::stream::{Stream, StreamDef};
}
