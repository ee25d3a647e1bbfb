//! `hdl-builder`: a typed hardware IR, its elaboration checks, and a SystemVerilog emitter.
//!
//! What lives here:
//!
//! - `expr.rs`: `Sig` and `Expr`, width-carrying expressions
//! - `module.rs`: `ModuleBuilder`: ports, registers, memories, instances, processes, domains
//! - `stream.rs`: ready/valid bundles
//! - `check.rs`, `error.rs`: the elaboration checks and their errors
//! - `emit.rs`: the SystemVerilog emitter
//! - `design.rs`: modules under the tops, file list, FuseSoC core
//! - `binding.rs`: the Rust binding and C++ shim per top
//! - `regs.rs`: register blocks (CSR module, accessors, Markdown map)
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
//!
//! # Clock domains
//!
//! A module has a default domain (`clk_i` and its reset) and may declare more: each register,
//! memory port and input names its domain, and a register fed combinationally from another
//! domain (or from an asynchronous input) is an [`ErrorKind::ClockCrossing`] error. The way
//! across is a synchronizer block whose input is declared with
//! [`ModuleBuilder::input_crossing`]:
//!
//! ```
//! use hdl_builder::prelude::*;
//! use hdl_builder::ErrorKind;
//!
//! // A two-flop synchronizer: its input may come from any domain.
//! let mut s = ModuleBuilder::new("sync2");
//! let d = s.input_crossing("d_i", 1);
//! let q = s.output("q_o", 1);
//! let (a, b) = (s.reg("meta", 1, 0), s.reg("sync", 1, 0));
//! s.assign(a.d, d);
//! s.assign(b.d, a.q);
//! s.assign(q, b.q);
//! let sync = s.finish().unwrap();
//!
//! let build = |through_sync: bool| {
//!     let mut m = ModuleBuilder::new("cross");
//!     let (wr, rd) = (m.domain("wr"), m.domain("rd")); // clk_wr_i, clk_rd_i, rst_wr_ni, rst_rd_ni
//!     let flag = m.reg_in(wr, "flag", 1, 0);
//!     m.assign(flag.d, !flag.q);
//!     let seen = m.reg_in(rd, "seen", 1, 0);
//!     if through_sync {
//!         let u = m.instance("u_sync", &sync);
//!         m.bind_domain(u, "", rd); // the synchronizer runs on clk_rd_i
//!         m.bind(u, "d_i", flag.q);
//!         let synced = m.bind_out(u, "q_o");
//!         m.assign(seen.d, synced);
//!     } else {
//!         m.assign(seen.d, flag.q); // refused: flag_q belongs to `wr`
//!     }
//!     let y = m.output("seen_o", 1);
//!     m.assign(y, seen.q);
//!     m.finish()
//! };
//! assert!(build(false).unwrap_err().has(ErrorKind::ClockCrossing));
//! assert!(build(true).is_ok());
//! ```
//!
//! Vendor primitives (FPGA cells with parameters) are declared with
//! [`ModuleBuilder::primitive`] and carry a behavioural model for simulation; `inout` ports
//! with [`ModuleBuilder::inout`] and [`ModuleBuilder::tristate`].

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
pub use emit::{mutant_schemata, mutation_sites, MutationSite, MUTANT_SELECT};
pub use error::{Error, ErrorKind, Errors, Loc};
pub use expr::{cat, clog2, lit, mux, ones, zeros, Expr, Operand, Sig, Value};
pub use module::{
    CaseArms, Comb, Domain, EnumTy, IfChain, Inst, Mem, Module, ModuleBuilder, ParamValue,
    PortInfo, Reg, ResetStyle, CLOCK_PORT,
};

/// Everything a block generator usually needs.
pub mod prelude {
    pub use crate::expr::{cat, clog2, lit, mux, ones, zeros, Expr, Sig, Value};
    pub use crate::module::{Domain, Module, ModuleBuilder, Reg, ResetStyle};
    pub use crate::stream::{Stream, StreamDef};
}
