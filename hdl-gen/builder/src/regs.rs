//! Register blocks: a block's control and status registers, described once and emitted three ways.
//!
//! One file on purpose (about 1,400 lines): a map is described, checked and emitted three ways
//! from the same private declarations, and the three emitters are read side by side.
//!
//! A [`RegBlock`] lists 32-bit registers at byte offsets and their fields: name, bits, [`Access`],
//! reset value and one line of documentation. [`RegBlock::finish`] checks the map and returns a
//! [`RegMap`], which emits
//!
//! - the CSR module ([`RegMap::module`]), built with [`ModuleBuilder`] like any other block: an
//!   AXI4-Lite slave on one side, ports named after the fields on the other;
//! - Rust accessors for tests and firmware models ([`RegMap::rust`]);
//! - a Markdown register map ([`RegMap::markdown`]).
//!
//! ```
//! use hdl_builder::regs::{Access, RegBlock};
//! use hdl_builder::ResetStyle;
//!
//! let mut b = RegBlock::new("timer_csr", 4);
//! b.doc("A free-running timer.");
//! b.reg("ctrl", 0x0, "Timer control")
//!     .field("en", 0, 1, Access::Rw, 0, "Count while set")
//!     .field("restart", 8, 1, Access::WoPulse, 0, "Write 1 to restart from zero");
//! b.reg("status", 0x4, "Timer status")
//!     .field("count", 0, 16, Access::Ro, 0, "Current count")
//!     .field("wrapped", 31, 1, Access::W1c, 0, "The count wrapped; write 1 to clear");
//! let map = b.finish().expect("a valid register map");
//! let csr = map.module(ResetStyle::AsyncLow).expect("checks pass");
//! assert!(csr.ports().iter().any(|p| p.name == "ctrl_en_o"));
//! assert!(map.rust().contains("pub const STATUS: u32 = 0x4;"));
//! assert!(map.markdown().contains("| 0x4 | `status` |"));
//! ```
//!
//! # The CSR module
//!
//! Ports: the clock, the reset, the AXI4-Lite slave (`s_axil_*`; `awprot` and `arprot` are left
//! out, so no access is refused for its protection attributes), then per field, under a comment
//! naming its register:
//!
//! | Access | Ports |
//! |--------|-------|
//! | [`Access::Rw`] | output `<reg>_<field>_o`: the register's value |
//! | [`Access::Ro`] | input `<reg>_<field>_i`: the value software reads |
//! | [`Access::W1c`] | input `<reg>_<field>_set_i` sets bits (one per bit; a set wins over a clear in the same cycle); output `<reg>_<field>_o` holds them |
//! | [`Access::WoPulse`] | output `<reg>_<field>_o` holds the last value written; output `<reg>_<field>_we_o` is high for one cycle, with the new value, after a write that enables any of the field's bytes |
//!
//! Protocol: one write and one read at a time. A write is accepted (`awready` and `wready`
//! together) in a cycle where `awvalid` and `wvalid` are both high and no write response is
//! pending; `wstrb` selects the bytes written. A read is accepted while no read data is pending.
//! Responses are registered. Address bits `[1:0]` are ignored. An address that maps no register
//! answers SLVERR, changes nothing, and reads as 0; a write-only field reads as 0.

use crate::error::{Error, ErrorKind, Errors, Loc};
use crate::expr::{cat, zeros, Expr, Sig, Value};
use crate::module::{Comb, Module, ModuleBuilder, ResetStyle};
use std::collections::{BTreeSet, HashMap};
use std::fmt::{self, Write};
use std::panic::Location;
use std::rc::Rc;

/// How software and hardware reach a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Read-write: software writes and reads it back; hardware sees it on `<reg>_<field>_o`.
    Rw,
    /// Read-only: hardware presents the value on `<reg>_<field>_i`; writes are ignored.
    Ro,
    /// Write-one-to-clear status: hardware sets bits through `<reg>_<field>_set_i`, software
    /// reads them and clears each by writing 1 to it.
    W1c,
    /// Write-only with a strobe: hardware sees the value written on `<reg>_<field>_o` and a
    /// one-cycle pulse on `<reg>_<field>_we_o`; reads return 0.
    WoPulse,
}

impl Access {
    /// The short name used in register maps: `RW`, `RO`, `W1C`, `WO pulse`.
    pub fn label(self) -> &'static str {
        match self {
            Access::Rw => "RW",
            Access::Ro => "RO",
            Access::W1c => "W1C",
            Access::WoPulse => "WO pulse",
        }
    }

    /// True when a bus write can change the field.
    pub fn is_writable(self) -> bool {
        self != Access::Ro
    }

    /// True when a bus read returns the field's value (write-only fields read as 0).
    pub fn is_readable(self) -> bool {
        self != Access::WoPulse
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

#[derive(Clone, Debug)]
struct FieldDecl {
    name: String,
    lsb: u32,
    width: u32,
    access: Access,
    reset: u64,
    doc: String,
    loc: Loc,
}

impl FieldDecl {
    /// The field's bits as a mask, clamped to 64 bits so a bad field cannot overflow.
    fn bits(&self) -> u64 {
        let lsb = self.lsb.min(64);
        let top = (self.lsb as u64 + self.width as u64).min(64);
        let below = |n: u64| if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
        below(top) & !below(lsb as u64)
    }
}

#[derive(Clone, Debug)]
struct RegDecl {
    name: String,
    offset: u32,
    doc: String,
    fields: Vec<FieldDecl>,
    loc: Loc,
}

/// Describes a register block. Add registers with [`RegBlock::reg`], then check the map with
/// [`RegBlock::finish`].
///
/// Registers are 32 bits wide, at byte offsets aligned to 4 inside a window of
/// `2^addr_width` bytes. Every mistake in the description (overlapping fields, a field past bit 31,
/// an unaligned offset or one past the window, two registers at one offset, a duplicate or
/// illegal name, a reset value too wide for its field) is an elaboration error that points at the
/// Rust line which declared the faulty register or field.
pub struct RegBlock {
    name: String,
    addr_width: u32,
    doc: Vec<String>,
    regs: Vec<RegDecl>,
    errors: Vec<Error>,
    loc: Loc,
}

/// Adds fields to the register just declared; returned by [`RegBlock::reg`].
pub struct RegBuilder<'a> {
    block: &'a mut RegBlock,
    index: usize,
}

/// `name` is lower_snake_case: a lowercase letter, then lowercase letters, digits or `_`.
fn snake_error(what: &str, name: &str) -> Option<String> {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    let rest_ok = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if first_ok && rest_ok {
        None
    } else {
        Some(format!(
            "{what} name `{name}` is not lower_snake_case (a lowercase letter, then lowercase letters, digits or `_`)"
        ))
    }
}

/// Documentation is one non-empty line: it goes into comments and table cells.
fn doc_error(what: &str, doc: &str) -> Option<String> {
    if doc.trim().is_empty() {
        Some(format!("{what} has no documentation; give it one line"))
    } else if doc.contains(['\n', '\r']) {
        Some(format!(
            "{what}'s documentation spans several lines; give it one line"
        ))
    } else {
        None
    }
}

fn at(loc: Loc) -> String {
    format!("{}:{}", loc.file(), loc.line())
}

impl RegBlock {
    /// A register block named `name` (the CSR module's name) whose window is `2^addr_width`
    /// bytes, `addr_width` from 2 to 32.
    #[track_caller]
    pub fn new(name: &str, addr_width: u32) -> RegBlock {
        let mut b = RegBlock {
            name: name.to_string(),
            addr_width,
            doc: Vec::new(),
            regs: Vec::new(),
            errors: Vec::new(),
            loc: Location::caller(),
        };
        if let Some(msg) = snake_error("block", name) {
            b.error(None, b.loc, msg);
        }
        if !(2..=32).contains(&addr_width) {
            b.error(
                None,
                b.loc,
                format!(
                    "address width {addr_width} is out of range: a window holds at least one 32-bit register (2 bits) and at most 4 GiB (32 bits)"
                ),
            );
        }
        b
    }

    /// Adds a paragraph line to the block's documentation (module header, Rust docs, register
    /// map).
    pub fn doc(&mut self, line: &str) {
        self.doc.push(line.to_string());
    }

    /// The block's window in bytes.
    fn window(&self) -> u64 {
        1u64 << self.addr_width.clamp(2, 32)
    }

    fn error(&mut self, signal: Option<String>, loc: Loc, message: String) {
        self.errors.push(Error {
            kind: ErrorKind::Invalid,
            module: self.name.clone(),
            signal,
            loc,
            message,
        });
    }

    /// Declares the 32-bit register `name` at byte `offset`; add its fields on the result.
    #[track_caller]
    pub fn reg(&mut self, name: &str, offset: u32, doc: &str) -> RegBuilder<'_> {
        let loc = Location::caller();
        let sig = Some(name.to_string());
        if let Some(msg) = snake_error("register", name) {
            self.error(sig.clone(), loc, msg);
        }
        if let Some(msg) = doc_error(&format!("register `{name}`"), doc) {
            self.error(sig.clone(), loc, msg);
        }
        if offset & 3 != 0 {
            self.error(
                sig.clone(),
                loc,
                format!(
                    "register `{name}` is at offset 0x{offset:x}, which is not a multiple of 4; registers are 32 bits wide and 4-byte aligned"
                ),
            );
        }
        let window = self.window();
        if offset as u64 + 4 > window {
            self.error(
                sig.clone(),
                loc,
                format!(
                    "register `{name}` at offset 0x{offset:x} is past the block's {window}-byte window (address width {}); widen the window or move the register",
                    self.addr_width
                ),
            );
        }
        let same_name = self.regs.iter().find(|r| r.name == name).map(|r| r.loc);
        if let Some(first) = same_name {
            self.error(
                sig.clone(),
                loc,
                format!(
                    "register name `{name}` is already used (declared at {}); rename one",
                    at(first)
                ),
            );
        }
        let same_offset = self
            .regs
            .iter()
            .find(|r| r.offset / 4 == offset / 4)
            .map(|r| (r.name.clone(), r.loc));
        if let Some((other, first)) = same_offset {
            self.error(
                sig,
                loc,
                format!(
                    "register `{name}` at offset 0x{offset:x} overlaps register `{other}` (declared at {}); give each register its own 4 bytes",
                    at(first)
                ),
            );
        }
        self.regs.push(RegDecl {
            name: name.to_string(),
            offset,
            doc: doc.to_string(),
            fields: Vec::new(),
            loc,
        });
        let index = self.regs.len() - 1;
        RegBuilder { block: self, index }
    }

    /// Checks the whole map and returns it, or every error found.
    pub fn finish(mut self) -> Result<RegMap, Errors> {
        if self.regs.is_empty() {
            let loc = self.loc;
            self.error(
                None,
                loc,
                format!("register block `{}` has no registers", self.name),
            );
        }
        for i in 0..self.regs.len() {
            if self.regs[i].fields.is_empty() {
                let r = &self.regs[i];
                let (name, loc) = (r.name.clone(), r.loc);
                self.error(
                    Some(name.clone()),
                    loc,
                    format!("register `{name}` has no fields; add one with .field(..)"),
                );
            }
        }
        self.check_generated_names();
        if !self.errors.is_empty() {
            return Err(Errors(self.errors));
        }
        let mut regs: Vec<Register> = self
            .regs
            .iter()
            .map(|r| {
                let mut fields: Vec<Field> = r
                    .fields
                    .iter()
                    .map(|f| Field {
                        name: f.name.clone(),
                        lsb: f.lsb,
                        width: f.width,
                        access: f.access,
                        reset: f.reset as u32,
                        doc: f.doc.clone(),
                    })
                    .collect();
                fields.sort_by_key(|f| f.lsb);
                Register {
                    name: r.name.clone(),
                    offset: r.offset,
                    doc: r.doc.clone(),
                    fields,
                }
            })
            .collect();
        regs.sort_by_key(|r| r.offset);
        Ok(RegMap {
            name: self.name,
            addr_width: self.addr_width,
            doc: self.doc,
            regs,
        })
    }

    /// Names that the emitted SystemVerilog and Rust derive from register and field names must
    /// not meet (`a.b_c` and `a_b.c` both give `a_b_c_o`), nor meet the CSR logic's own names.
    fn check_generated_names(&mut self) {
        // (language, generated name) -> (owner, where it was declared).
        let mut seen: HashMap<(&str, String), (String, Option<Loc>)> = HashMap::new();
        for n in SV_FIXED {
            seen.insert(
                ("SystemVerilog", n.to_string()),
                ("the CSR logic".into(), None),
            );
        }
        for n in RUST_FIXED {
            seen.insert(("Rust", n.to_string()), ("the accessors".into(), None));
        }
        let mut errors = Vec::new();
        let mut reported = BTreeSet::new();
        for r in &self.regs {
            let mut owned: Vec<(String, Loc, &str, String)> = Vec::new();
            let up = r.name.to_uppercase();
            for n in [up.clone(), format!("{up}_RESET")] {
                owned.push((r.name.clone(), r.loc, "Rust", n));
            }
            for n in ["read", "write", "modify"] {
                owned.push((r.name.clone(), r.loc, "Rust", format!("{n}_{}", r.name)));
            }
            if r.fields.iter().any(|f| f.access.is_writable()) {
                owned.push((r.name.clone(), r.loc, "SystemVerilog", we_name(&r.name)));
            }
            for f in &r.fields {
                let owner = format!("{}.{}", r.name, f.name);
                let base = format!("{}_{}", r.name, f.name);
                for n in sv_field_names(&base, f.access) {
                    owned.push((owner.clone(), f.loc, "SystemVerilog", n));
                }
                let ub = base.to_uppercase();
                for s in ["SHIFT", "MASK", "RESET"] {
                    owned.push((owner.clone(), f.loc, "Rust", format!("{ub}_{s}")));
                }
                for p in ["get", "set"] {
                    owned.push((owner.clone(), f.loc, "Rust", format!("{p}_{base}")));
                }
            }
            for (owner, loc, lang, name) in owned {
                match seen.get(&(lang, name.clone())) {
                    Some((other, _)) if *other == owner => {}
                    Some((other, other_loc)) => {
                        if reported.insert((owner.clone(), other.clone())) {
                            let where_ = match other_loc {
                                Some(l) => format!("`{other}` (declared at {})", at(l)),
                                None => other.clone(),
                            };
                            errors.push((
                                owner.clone(),
                                loc,
                                format!(
                                    "`{owner}` gives the {lang} name `{name}`, which {where_} uses too; rename one"
                                ),
                            ));
                        }
                    }
                    None => {
                        seen.insert((lang, name), (owner, Some(loc)));
                    }
                }
            }
        }
        for (owner, loc, msg) in errors {
            self.error(Some(owner), loc, msg);
        }
    }
}

/// Names the CSR module uses for itself; a register or field may not produce them.
const SV_FIXED: &[&str] = &[
    "clk_i",
    "rst_i",
    "rst_ni",
    "s_axil_awvalid_i",
    "s_axil_awready_o",
    "s_axil_awaddr_i",
    "s_axil_wvalid_i",
    "s_axil_wready_o",
    "s_axil_wdata_i",
    "s_axil_wstrb_i",
    "s_axil_bvalid_o",
    "s_axil_bready_i",
    "s_axil_bresp_o",
    "s_axil_arvalid_i",
    "s_axil_arready_o",
    "s_axil_araddr_i",
    "s_axil_rvalid_o",
    "s_axil_rready_i",
    "s_axil_rdata_o",
    "s_axil_rresp_o",
    "resp_e",
    "bvalid_q",
    "bvalid_d",
    "bresp_q",
    "bresp_d",
    "rvalid_q",
    "rvalid_d",
    "rdata_q",
    "rdata_d",
    "rresp_q",
    "rresp_d",
    "wr_accept",
    "rd_accept",
    "wr_mask",
    "unused_addr",
    "unused_wdata",
];

/// Names the Rust accessors use for themselves.
const RUST_FIXED: &[&str] = &["CsrBus", "WINDOW", "REGISTERS", "RESET_CHECK"];

/// The write strobe of register `reg`.
fn we_name(reg: &str) -> String {
    format!("{reg}_we")
}

/// Every SystemVerilog name a field `<reg>_<field>` (`base`) produces.
fn sv_field_names(base: &str, access: Access) -> Vec<String> {
    let suffixes: &[&str] = match access {
        Access::Rw => &["q", "d", "o"],
        Access::Ro => &["i"],
        Access::W1c => &["q", "d", "set_i", "o"],
        Access::WoPulse => &["q", "d", "o", "we_q", "we_d", "we_o"],
    };
    suffixes.iter().map(|s| format!("{base}_{s}")).collect()
}

impl RegBuilder<'_> {
    /// Adds field `name`: bits `lsb + width - 1` down to `lsb` of the register, reading and
    /// writing as `access`, holding `reset` after reset.
    #[track_caller]
    pub fn field(
        self,
        name: &str,
        lsb: u32,
        width: u32,
        access: Access,
        reset: u64,
        doc: &str,
    ) -> Self {
        let loc = Location::caller();
        let b = &mut *self.block;
        let reg = b.regs[self.index].name.clone();
        let full = format!("{reg}.{name}");
        let sig = Some(full.clone());
        if let Some(msg) = snake_error("field", name) {
            b.error(sig.clone(), loc, msg);
        }
        if let Some(msg) = doc_error(&format!("field `{full}`"), doc) {
            b.error(sig.clone(), loc, msg);
        }
        if width == 0 {
            b.error(
                sig.clone(),
                loc,
                format!("field `{full}` is zero bits wide; give it at least one bit"),
            );
        } else if lsb as u64 + width as u64 > 32 {
            b.error(
                sig.clone(),
                loc,
                format!(
                    "field `{full}` is bits [{}:{lsb}], past bit 31 of its 32-bit register",
                    lsb as u64 + width as u64 - 1
                ),
            );
        }
        if width < 64 && reset >> width != 0 {
            b.error(
                sig.clone(),
                loc,
                format!("reset value 0x{reset:x} of field `{full}` does not fit in {width} bits"),
            );
        }
        let decl = FieldDecl {
            name: name.to_string(),
            lsb,
            width,
            access,
            reset,
            doc: doc.to_string(),
            loc,
        };
        let fields = &b.regs[self.index].fields;
        let dup = fields.iter().find(|f| f.name == name).map(|f| f.loc);
        let overlap = fields
            .iter()
            .find(|f| f.bits() & decl.bits() != 0)
            .map(|f| (f.name.clone(), f.lsb, f.width, f.loc));
        if let Some(first) = dup {
            b.error(
                sig.clone(),
                loc,
                format!(
                    "register `{reg}` already has a field `{name}` (declared at {}); rename one",
                    at(first)
                ),
            );
        }
        if let Some((other, olsb, owidth, oloc)) = overlap {
            b.error(
                sig,
                loc,
                format!(
                    "field `{full}` (bits {}) overlaps field `{reg}.{other}` (bits {}, declared at {}); move one",
                    bits_label(lsb, width),
                    bits_label(olsb, owidth),
                    at(oloc)
                ),
            );
        }
        b.regs[self.index].fields.push(decl);
        self
    }
}

/// `[hi:lo]`, or `[b]` for one bit.
fn bits_label(lsb: u32, width: u32) -> String {
    let msb = lsb as u64 + (width.max(1) as u64) - 1;
    if width <= 1 {
        format!("[{lsb}]")
    } else {
        format!("[{msb}:{lsb}]")
    }
}

/// A checked register map; emits the CSR module, Rust accessors and a Markdown register map.
#[derive(Clone, Debug)]
pub struct RegMap {
    name: String,
    addr_width: u32,
    doc: Vec<String>,
    regs: Vec<Register>,
}

/// A register of a checked map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Register {
    /// lower_snake name.
    pub name: String,
    /// Byte offset inside the block's window; a multiple of 4.
    pub offset: u32,
    /// One line of documentation.
    pub doc: String,
    /// Fields, lowest bits first.
    pub fields: Vec<Field>,
}

/// A field of a checked register.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// lower_snake name.
    pub name: String,
    /// Lowest bit.
    pub lsb: u32,
    /// Width in bits, 1 to 32.
    pub width: u32,
    /// How software and hardware reach it.
    pub access: Access,
    /// Value after reset (for a read-only field: the value documented for software).
    pub reset: u32,
    /// One line of documentation.
    pub doc: String,
}

impl Field {
    /// Highest bit.
    pub fn msb(&self) -> u32 {
        self.lsb + self.width - 1
    }

    /// The field's bits within the register.
    pub fn mask(&self) -> u32 {
        (u32::MAX >> (32 - self.width)) << self.lsb
    }
}

impl Register {
    /// The value a read returns after reset: each readable field's reset value in place,
    /// write-only fields as 0.
    pub fn reset(&self) -> u32 {
        self.fields
            .iter()
            .filter(|f| f.access.is_readable())
            .fold(0, |v, f| v | (f.reset << f.lsb))
    }

    /// The bits whose value right after reset the register block itself decides: read-write
    /// fields (their reset value) and write-only ones (read as 0).
    pub fn reset_mask(&self) -> u32 {
        self.fields
            .iter()
            .filter(|f| matches!(f.access, Access::Rw | Access::WoPulse))
            .fold(0, |v, f| {
                let ones = if f.width >= 32 {
                    u32::MAX
                } else {
                    (1u32 << f.width) - 1
                };
                v | (ones << f.lsb)
            })
    }

    /// True when some field of the register can be written.
    pub fn is_writable(&self) -> bool {
        self.fields.iter().any(|f| f.access.is_writable())
    }
}

/// The signals of one field inside the CSR module.
#[derive(Clone, Copy)]
struct FieldSigs {
    /// `_o` (RW, W1C, WO pulse) or `_i` (RO): the value hardware sees or presents.
    port: Sig,
    /// W1C: `_set_i`. WO pulse: `_we_o`.
    aux: Option<Sig>,
    /// The field's register (`q`, `d`), except for RO.
    state: Option<(Sig, Sig)>,
    /// WO pulse: the strobe register.
    strobe: Option<(Sig, Sig)>,
}

impl RegMap {
    /// The block's name, which is also the CSR module's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Address bits of the block's window.
    pub fn addr_width(&self) -> u32 {
        self.addr_width
    }

    /// The window in bytes, `2^addr_width`.
    pub fn window(&self) -> u64 {
        1u64 << self.addr_width
    }

    /// The block's documentation lines.
    pub fn doc(&self) -> &[String] {
        &self.doc
    }

    /// The registers, lowest offset first.
    pub fn registers(&self) -> &[Register] {
        &self.regs
    }

    /// An offset in hex, as many digits as the window needs, in groups of four.
    fn offset_hex(&self, offset: u32) -> String {
        let digits = self.addr_width.div_ceil(4) as usize;
        group_hex(&format!("{offset:0digits$x}"))
    }

    /// Builds the CSR module (named after the block) with the given reset style. See the
    /// [module documentation](self) for its ports and protocol.
    #[track_caller]
    pub fn module(&self, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
        let mut m = ModuleBuilder::with_reset(&self.name, reset);
        self.module_doc(&mut m);
        m.clock();
        m.reset();

        let aw = self.addr_width;
        m.group("AXI4-Lite slave");
        let awvalid = m.input("s_axil_awvalid_i", 1);
        let awready = m.output("s_axil_awready_o", 1);
        let awaddr = m.input("s_axil_awaddr_i", aw);
        m.comment(awaddr, "byte address; bits [1:0] are ignored");
        let wvalid = m.input("s_axil_wvalid_i", 1);
        let wready = m.output("s_axil_wready_o", 1);
        let wdata = m.input("s_axil_wdata_i", 32);
        let wstrb = m.input("s_axil_wstrb_i", 4);
        let bvalid_o = m.output("s_axil_bvalid_o", 1);
        let bready = m.input("s_axil_bready_i", 1);
        let bresp_o = m.output("s_axil_bresp_o", 2);
        let arvalid = m.input("s_axil_arvalid_i", 1);
        let arready = m.output("s_axil_arready_o", 1);
        let araddr = m.input("s_axil_araddr_i", aw);
        m.comment(araddr, "byte address; bits [1:0] are ignored");
        let rvalid_o = m.output("s_axil_rvalid_o", 1);
        let rready = m.input("s_axil_rready_i", 1);
        let rdata_o = m.output("s_axil_rdata_o", 32);
        let rresp_o = m.output("s_axil_rresp_o", 2);

        // Field ports, grouped by register.
        let mut port_sigs: Vec<Vec<FieldSigs>> = Vec::new();
        for r in &self.regs {
            m.group(&format!(
                "{} ({}): {}",
                r.name,
                self.offset_hex(r.offset),
                r.doc
            ));
            let mut sigs = Vec::new();
            for f in &r.fields {
                let base = format!("{}_{}", r.name, f.name);
                let (port, aux) = match f.access {
                    Access::Rw => (m.output(&format!("{base}_o"), f.width), None),
                    Access::Ro => (m.input(&format!("{base}_i"), f.width), None),
                    Access::W1c => {
                        let set = m.input(&format!("{base}_set_i"), f.width);
                        m.comment(set, "1 sets a bit");
                        (m.output(&format!("{base}_o"), f.width), Some(set))
                    }
                    Access::WoPulse => {
                        let o = m.output(&format!("{base}_o"), f.width);
                        let we = m.output(&format!("{base}_we_o"), 1);
                        m.comment(we, &format!("`{base}_o` was just written"));
                        (o, Some(we))
                    }
                };
                m.comment(port, &f.doc);
                sigs.push(FieldSigs {
                    port,
                    aux,
                    state: None,
                    strobe: None,
                });
            }
            port_sigs.push(sigs);
        }

        // The response registers; `resp_e` spells the AXI response codes.
        let resp = m.enum_type(
            "resp",
            &["RespOkay", "RespExokay", "RespSlverr", "RespDecerr"],
        );
        let okay = resp.item("RespOkay");
        let slverr = resp.item("RespSlverr");
        let bvalid = m.reg("bvalid", 1, 0u64);
        let bresp = m.reg_enum("bresp", &resp, okay.clone());
        let rvalid = m.reg("rvalid", 1, 0u64);
        let rdata = m.reg("rdata", 32, 0u64);
        let rresp = m.reg_enum("rresp", &resp, okay.clone());

        // The field registers and the write strobes.
        let mut wes: Vec<Option<Sig>> = Vec::new();
        for (r, sigs) in self.regs.iter().zip(port_sigs.iter_mut()) {
            for (f, s) in r.fields.iter().zip(sigs.iter_mut()) {
                let base = format!("{}_{}", r.name, f.name);
                if f.access != Access::Ro {
                    let q = m.reg(&base, f.width, f.reset as u64);
                    s.state = Some((q.q, q.d));
                }
                if f.access == Access::WoPulse {
                    let p = m.reg(&format!("{base}_we"), 1, 0u64);
                    s.strobe = Some((p.q, p.d));
                }
            }
            wes.push(if r.is_writable() {
                let we = m.wire(&we_name(&r.name), 1);
                m.comment(we, &format!("a write to `{}` is accepted", r.name));
                Some(we)
            } else {
                None
            });
        }

        // Handshakes: one write and one read at a time.
        let wr_accept = m.net("wr_accept", awvalid & wvalid & !bvalid.q);
        m.comment(
            wr_accept,
            "address and data arrive together, no response pending",
        );
        m.assign(awready, wr_accept);
        m.assign(wready, wr_accept);
        m.assign(bvalid_o, bvalid.q);
        m.assign(bresp_o, bresp.q);
        let rd_accept = m.net("rd_accept", arvalid & !rvalid.q);
        m.assign(arready, !rvalid.q);
        m.assign(rvalid_o, rvalid.q);
        m.assign(rdata_o, rdata.q);
        m.assign(rresp_o, rresp.q);

        // Bits of the write data that some field takes, and the byte strobes spread to bits.
        let mut written = [false; 32];
        for f in self.regs.iter().flat_map(|r| &r.fields) {
            if f.access.is_writable() {
                for b in f.lsb..=f.msb() {
                    written[b as usize] = true;
                }
            }
        }
        let wr_mask = if written.iter().any(|b| *b) {
            let lanes = (0..4).rev().map(|i| wstrb.bit(i).repeat(8));
            let mask = m.net("wr_mask", cat(lanes));
            m.comment(mask, "write strobes, one per data bit");
            Some(mask)
        } else {
            None
        };

        // Outputs of the field registers.
        for sigs in &port_sigs {
            for s in sigs {
                if let Some((q, _)) = s.state {
                    m.assign(s.port, q);
                }
                if let (Some((q, _)), Some(we_o)) = (s.strobe, s.aux) {
                    m.assign(we_o, q);
                }
            }
        }

        // Only the word address decodes registers; a one-register window has none.
        let words: Vec<u64> = self.regs.iter().map(|r| (r.offset / 4) as u64).collect();
        let word_sel = |addr: Sig| (aw > 2).then(|| addr.slice(aw - 1, 2));
        let wsel = word_sel(awaddr);
        let rsel = word_sel(araddr);

        // Write channel: accept, decode, respond.
        m.comb(|c| {
            c.set(bvalid.d, bvalid.q);
            c.set(bresp.d, bresp.q);
            for we in wes.iter().flatten() {
                c.set(*we, false);
            }
            c.if_(wr_accept, |c| {
                c.set(bvalid.d, true);
                let mapped = |c: &mut Comb, i: usize| {
                    c.set(bresp.d, okay.clone());
                    if let Some(we) = wes[i] {
                        c.set(we, true);
                    }
                };
                let unmapped = |c: &mut Comb| c.set(bresp.d, slverr.clone());
                decode(c, wsel.as_ref(), &words, &mapped, &unmapped);
            })
            .else_if(bready, |c| c.set(bvalid.d, false));
        });

        // Read channel: accept, decode, register the data and response.
        let read_values: Vec<Option<Expr>> = port_sigs
            .iter()
            .zip(&self.regs)
            .map(|(sigs, r)| read_value(r, sigs))
            .collect();
        m.comb(|c| {
            c.set(rvalid.d, rvalid.q);
            c.set(rdata.d, rdata.q);
            c.set(rresp.d, rresp.q);
            c.if_(rd_accept, |c| {
                c.set(rvalid.d, true);
                let mapped = |c: &mut Comb, i: usize| {
                    c.set(rresp.d, okay.clone());
                    c.set(rdata.d, read_values[i].clone().unwrap_or_else(|| zeros(32)));
                };
                let unmapped = |c: &mut Comb| {
                    c.set(rresp.d, slverr.clone());
                    c.set(rdata.d, zeros(32));
                };
                decode(c, rsel.as_ref(), &words, &mapped, &unmapped);
            })
            .else_if(rready, |c| c.set(rvalid.d, false));
        });

        // Field updates, one block per register that holds state.
        for ((r, sigs), we) in self.regs.iter().zip(&port_sigs).zip(&wes) {
            let (Some(we), Some(mask)) = (*we, wr_mask) else {
                continue;
            };
            m.comb(|c| {
                for (f, s) in r.fields.iter().zip(sigs) {
                    let Some((q, d)) = s.state else { continue };
                    match (f.access, s.aux) {
                        (Access::W1c, Some(set)) => c.set(d, q | set),
                        _ => c.set(d, q),
                    }
                    if let Some((_, pd)) = s.strobe {
                        c.set(pd, false);
                    }
                }
                c.if_(we, |c| {
                    for (f, s) in r.fields.iter().zip(sigs) {
                        let Some((q, d)) = s.state else { continue };
                        let (hi, lo) = (f.msb(), f.lsb);
                        let data = part(wdata, hi, lo);
                        let bits = part(mask, hi, lo);
                        match (f.access, s.aux) {
                            (Access::W1c, Some(set)) => c.set(d, (q & !(data & bits)) | set),
                            _ => c.set(d, (q & !bits.clone()) | (data & bits)),
                        }
                        if let Some((_, pd)) = s.strobe {
                            let (lane_hi, lane_lo) = (hi / 8, lo / 8);
                            let lanes = part(wstrb, lane_hi, lane_lo);
                            c.set(
                                pd,
                                if lane_hi == lane_lo {
                                    lanes
                                } else {
                                    lanes.any()
                                },
                            );
                        }
                    }
                });
            });
        }

        // Bits that decode nothing, kept visible to lint as deliberately unread.
        m.unused("addr", cat([awaddr.slice(1, 0), araddr.slice(1, 0)]));
        let mut idle: Vec<Expr> = Vec::new();
        for (hi, lo) in ranges_of(&written, false) {
            idle.push(part(wdata, hi, lo));
            if let Some(mask) = wr_mask {
                idle.push(part(mask, hi, lo));
            }
        }
        if wr_mask.is_none() {
            idle.push(wstrb.into());
        }
        if !idle.is_empty() {
            m.unused("wdata", cat(idle));
        }

        m.finish()
    }

    fn module_doc(&self, m: &mut ModuleBuilder) {
        m.doc(&format!(
            "{}: control and status registers on an AXI4-Lite slave port ({}-byte window).",
            self.name,
            self.window()
        ));
        for l in &self.doc {
            m.doc(l);
        }
        m.doc("");
        let nw = self.regs.iter().map(|r| r.name.len()).max().unwrap_or(0);
        for r in &self.regs {
            m.doc(&format!(
                "  {} {:nw$}  {}",
                self.offset_hex(r.offset),
                r.name,
                r.doc
            ));
        }
        m.doc("");
        for l in [
            "One write and one read at a time. A write is accepted (awready and wready together) when",
            "awvalid and wvalid are both high and no write response is pending; wstrb selects the bytes",
            "written. A read is accepted while no read data is pending. Address bits [1:0] are ignored;",
            "awprot and arprot are not ports. An address that maps no register answers SLVERR, changes",
            "nothing and reads as 0. Write-only fields read as 0. W1C fields: a set from hardware wins",
            "over a clear in the same cycle. `<reg>_<field>_we_o` pulses for one cycle, with the new value",
            "on `<reg>_<field>_o`, after a write that enables any of the field's bytes.",
        ] {
            m.doc(l);
        }
    }

    /// Rust accessors for tests and firmware models: one standalone file, no dependencies.
    ///
    /// Per register `<REG>` (its offset) and `<REG>_RESET`; per field `<REG>_<FIELD>_SHIFT`,
    /// `_MASK` (the field's bits in place), `_RESET`, and `get_<reg>_<field>` /
    /// `set_<reg>_<field>` const fns on register values; per register `read_<reg>`, and for
    /// writable registers `write_<reg>`, through the `CsrBus` trait the file declares (each file
    /// its own, so it compiles alone). Registers with read-write fields and otherwise only
    /// read-only ones also get `modify_<reg>` (a read-modify-write would clear W1C bits).
    /// `WINDOW` is the window's size, `REGISTERS` lists (name, offset, reset value) and
    /// `RESET_CHECK` (name, offset, the bits the block decides after reset, reset value).
    pub fn rust(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "// Register accessors for the `{}` block, generated together with its RTL and register map.",
            self.name
        );
        if !self.doc.is_empty() {
            s.push_str("//\n");
            for l in &self.doc {
                let _ = writeln!(s, "// {l}");
            }
        }
        s.push_str("//\n");
        s.push_str("// Offsets are bytes from the block's base address; `<REG>_<FIELD>_MASK` is a field's bits in\n");
        s.push_str("// place within its register and `<REG>_<FIELD>_SHIFT` its lowest bit. Write-only fields read\n");
        s.push_str("// as 0; write 1 to a W1C bit to clear it.\n\n");
        s.push_str("/// The bus that reaches the block's registers: an AXI4-Lite master in a testbench, or a\n");
        s.push_str("/// firmware model's MMIO.\n");
        s.push_str("pub trait CsrBus {\n");
        s.push_str("    /// Reads the 32-bit register at byte address `addr`.\n");
        s.push_str("    fn read32(&mut self, addr: u32) -> u32;\n");
        s.push_str("    /// Writes `value` to the 32-bit register at byte address `addr`, all four bytes.\n");
        s.push_str("    fn write32(&mut self, addr: u32, value: u32);\n");
        s.push_str("}\n\n");
        let _ = writeln!(s, "/// The block's window in bytes.");
        let _ = writeln!(s, "pub const WINDOW: u64 = {};", hex_grouped(self.window()));
        s.push('\n');
        let _ = writeln!(s, "/// Every register: name, offset, value after reset.");
        let _ = writeln!(s, "pub const REGISTERS: &[(&str, u32, u32)] = &[");
        for r in &self.regs {
            let up = r.name.to_uppercase();
            let _ = writeln!(s, "    (\"{}\", {up}, {up}_RESET),", r.name);
        }
        let _ = writeln!(s, "];");
        s.push('\n');
        let _ = writeln!(
            s,
            "/// Every register: name, offset, the bits the block itself holds (read-write fields) or"
        );
        let _ = writeln!(
            s,
            "/// reads as 0 (write-only), and its value after reset: right after a reset, before any"
        );
        let _ = writeln!(
            s,
            "/// write, `read & mask == reset & mask`. Read-only and W1C bits show hardware state."
        );
        let _ = writeln!(s, "pub const RESET_CHECK: &[(&str, u32, u32, u32)] = &[");
        for r in &self.regs {
            let up = r.name.to_uppercase();
            let _ = writeln!(
                s,
                "    (\"{}\", {up}, {}, {up}_RESET),",
                r.name,
                hex32(r.reset_mask())
            );
        }
        let _ = writeln!(s, "];");
        for r in &self.regs {
            self.rust_register(&mut s, r);
        }
        s
    }

    fn rust_register(&self, s: &mut String, r: &Register) {
        let up = r.name.to_uppercase();
        let n = &r.name;
        s.push('\n');
        let _ = writeln!(s, "/// Offset of `{n}`: {}", r.doc);
        let _ = writeln!(s, "pub const {up}: u32 = {};", self.offset_hex(r.offset));
        let _ = writeln!(s, "/// Value of `{n}` after reset.");
        let _ = writeln!(s, "pub const {up}_RESET: u32 = {};", hex32(r.reset()));
        for f in &r.fields {
            let fu = format!("{up}_{}", f.name.to_uppercase());
            let fname = format!("{n}_{}", f.name);
            let what = format!(
                "`{n}.{}` {}, {}",
                f.name,
                bits_label(f.lsb, f.width),
                f.access.label()
            );
            let bits = if f.width == 1 {
                "1 bit".to_string()
            } else {
                format!("{} bits", f.width)
            };
            s.push('\n');
            let _ = writeln!(s, "/// {what}: {}", f.doc);
            let _ = writeln!(s, "pub const {fu}_SHIFT: u32 = {};", f.lsb);
            let _ = writeln!(s, "/// Bits of `{n}.{}` within `{n}`.", f.name);
            let _ = writeln!(s, "pub const {fu}_MASK: u32 = {};", hex32(f.mask()));
            let _ = writeln!(s, "/// Value of `{n}.{}` after reset.", f.name);
            let _ = writeln!(s, "pub const {fu}_RESET: u32 = {};", hex_grouped(f.reset));
            // Shifts by 0 and masks of all 32 bits are spelled out of the code, for clippy.
            let (get, set) = if f.width == 32 {
                ("reg".to_string(), "value".to_string())
            } else if f.lsb == 0 {
                (
                    format!("reg & {fu}_MASK"),
                    format!("(reg & !{fu}_MASK) | (value & {fu}_MASK)"),
                )
            } else {
                (
                    format!("(reg & {fu}_MASK) >> {fu}_SHIFT"),
                    format!("(reg & !{fu}_MASK) | ((value << {fu}_SHIFT) & {fu}_MASK)"),
                )
            };
            let _ = writeln!(s, "/// `{n}.{}` in a value of `{n}`.", f.name);
            let _ = writeln!(s, "#[inline]");
            let _ = writeln!(s, "#[must_use]");
            let _ = writeln!(s, "pub const fn get_{fname}(reg: u32) -> u32 {{");
            let _ = writeln!(s, "    {get}");
            let _ = writeln!(s, "}}");
            let _ = writeln!(
                s,
                "/// `reg`, a value of `{n}`, with `{n}.{}` replaced by `value` ({bits}).",
                f.name
            );
            let _ = writeln!(s, "#[inline]");
            let _ = writeln!(s, "#[must_use]");
            if f.width == 32 {
                let _ = writeln!(
                    s,
                    "pub const fn set_{fname}(_reg: u32, value: u32) -> u32 {{"
                );
            } else {
                let _ = writeln!(
                    s,
                    "pub const fn set_{fname}(reg: u32, value: u32) -> u32 {{"
                );
                let _ = writeln!(
                    s,
                    "    debug_assert!(value >> {} == 0, \"`{n}.{}` is {bits} wide\");",
                    f.width, f.name
                );
            }
            let _ = writeln!(s, "    {set}");
            let _ = writeln!(s, "}}");
        }
        s.push('\n');
        let _ = writeln!(s, "/// Reads `{n}` of the block at byte address `base`.");
        let _ = writeln!(
            s,
            "pub fn read_{n}<B: CsrBus + ?Sized>(bus: &mut B, base: u32) -> u32 {{"
        );
        let _ = writeln!(s, "    bus.read32(base.wrapping_add({up}))");
        let _ = writeln!(s, "}}");
        if r.is_writable() {
            let _ = writeln!(
                s,
                "/// Writes `value` to `{n}` of the block at byte address `base`."
            );
            let _ = writeln!(
                s,
                "pub fn write_{n}<B: CsrBus + ?Sized>(bus: &mut B, base: u32, value: u32) {{"
            );
            let _ = writeln!(s, "    bus.write32(base.wrapping_add({up}), value);");
            let _ = writeln!(s, "}}");
        }
        let plain = r.fields.iter().any(|f| f.access == Access::Rw)
            && r.fields
                .iter()
                .all(|f| matches!(f.access, Access::Rw | Access::Ro));
        if plain {
            let _ = writeln!(
                s,
                "/// Reads `{n}` of the block at byte address `base`, applies `f` and writes the result."
            );
            let _ = writeln!(
                s,
                "pub fn modify_{n}<B: CsrBus + ?Sized>(bus: &mut B, base: u32, f: impl FnOnce(u32) -> u32) {{"
            );
            let _ = writeln!(s, "    let value = read_{n}(bus, base);");
            let _ = writeln!(s, "    write_{n}(bus, base, f(value));");
            let _ = writeln!(s, "}}");
        }
    }

    /// A Markdown register map: a table of registers, then a table of fields per register.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# `{}` register map", self.name);
        s.push('\n');
        for l in &self.doc {
            let _ = writeln!(s, "{}", md_escape(l));
        }
        if !self.doc.is_empty() {
            s.push('\n');
        }
        let _ = writeln!(
            s,
            "32-bit registers in a {}-byte window, on an AXI4-Lite slave port. Offsets are bytes from the",
            self.window()
        );
        s.push_str("block's base address; an offset that maps no register answers SLVERR and reads as 0.\n");
        s.push('\n');
        s.push_str("| Offset | Register | Reset | Description |\n");
        s.push_str("|--------|----------|-------|-------------|\n");
        for r in &self.regs {
            let _ = writeln!(
                s,
                "| {} | `{}` | {} | {} |",
                self.offset_hex(r.offset),
                r.name,
                hex32(r.reset()),
                md_escape(&r.doc)
            );
        }
        s.push('\n');
        s.push_str("Access: RW read-write; RO read-only, writes ignored; W1C set by hardware, write 1 to clear\n");
        s.push_str("(a set wins over a clear in the same cycle); WO pulse write-only, reads as 0, hardware sees\n");
        s.push_str("the value written and a one-cycle strobe.\n");
        for r in &self.regs {
            s.push('\n');
            let _ = writeln!(s, "## {} `{}`", self.offset_hex(r.offset), r.name);
            s.push('\n');
            let _ = writeln!(s, "{}", md_escape(&r.doc));
            s.push('\n');
            s.push_str("| Bits | Field | Access | Reset | Description |\n");
            s.push_str("|------|-------|--------|-------|-------------|\n");
            for f in &r.fields {
                let _ = writeln!(
                    s,
                    "| {} | `{}` | {} | {} | {} |",
                    bits_label(f.lsb, f.width),
                    f.name,
                    f.access.label(),
                    hex_grouped(f.reset),
                    md_escape(&f.doc)
                );
            }
        }
        s
    }
}

/// Runs `mapped(c, i)` under a `case` on the word address, one arm per register `i`, and
/// `unmapped(c)` as the default; without a word address (a one-register window) the only
/// register is always addressed.
fn decode(
    c: &mut Comb,
    sel: Option<&Expr>,
    words: &[u64],
    mapped: &dyn Fn(&mut Comb, usize),
    unmapped: &dyn Fn(&mut Comb),
) {
    match sel {
        Some(sel) => c.case(sel.clone(), |a| {
            for (i, w) in words.iter().enumerate() {
                a.arm(*w, |c| mapped(c, i));
            }
            a.default(unmapped);
        }),
        None => mapped(c, 0),
    }
}

/// What a read of register `r` returns: readable fields in place, zeros elsewhere; `None` when
/// that is all zeros.
fn read_value(r: &Register, sigs: &[FieldSigs]) -> Option<Expr> {
    let mut parts: Vec<Expr> = Vec::new();
    let mut next = 32; // the bit above the part added last
    for (f, s) in r.fields.iter().zip(sigs).rev() {
        if !f.access.is_readable() {
            continue;
        }
        let value = s.state.map_or(s.port, |(q, _)| q);
        if f.msb() + 1 < next {
            parts.push(zeros(next - f.msb() - 1));
        }
        parts.push(value.into());
        next = f.lsb;
    }
    if parts.is_empty() {
        return None;
    }
    if next > 0 {
        parts.push(zeros(next));
    }
    Some(if parts.len() == 1 {
        parts.remove(0)
    } else {
        cat(parts)
    })
}

/// Bits `hi` down to `lo` of `s`; all of `s` without a slice when that is what they are.
#[track_caller]
fn part(s: Sig, hi: u32, lo: u32) -> Expr {
    if lo == 0 && hi + 1 == s.width() {
        s.into()
    } else {
        s.slice(hi, lo)
    }
}

/// Runs of bits equal to `value`, highest first, as (hi, lo).
fn ranges_of(bits: &[bool; 32], value: bool) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut i = 32;
    while i > 0 {
        i -= 1;
        if bits[i] != value {
            continue;
        }
        let hi = i;
        while i > 0 && bits[i - 1] == value {
            i -= 1;
        }
        out.push((hi as u32, i as u32));
    }
    out
}

/// `0x0000_0001`.
fn hex32(v: u32) -> String {
    format!("0x{:04x}_{:04x}", v >> 16, v & 0xffff)
}

/// `0x1`, `0x1_0000`: hex digits in groups of four.
fn hex_grouped(v: impl fmt::LowerHex) -> String {
    group_hex(&format!("{v:x}"))
}

/// `0x` and `digits` with `_` between groups of four, counted from the right.
fn group_hex(digits: &str) -> String {
    let head = match digits.len() & 3 {
        0 => digits.len().min(4),
        n => n,
    };
    let mut out = format!("0x{}", &digits[..head]);
    for i in (head..digits.len()).step_by(4) {
        out.push('_');
        out.push_str(&digits[i..i + 4]);
    }
    out
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|")
}
