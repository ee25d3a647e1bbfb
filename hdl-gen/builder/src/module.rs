//! Building a module: ports, wires, registers, memories, instances, assignments and processes.

use crate::check;
use crate::error::{Error, ErrorKind, Errors, Loc};
use crate::expr::{clog2, sig_expr, Expr, Kind, Operand, Sig, Value};
use std::panic::Location;
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, Ordering};

static NEXT_MODULE: AtomicU32 = AtomicU32::new(1);

/// How registers are reset. One style holds for a whole design.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResetStyle {
    /// Asynchronous, active low: port `rst_ni`, `always_ff @(posedge clk_i or negedge rst_ni)`.
    AsyncLow,
    /// Asynchronous, active high: port `rst_i`.
    AsyncHigh,
    /// Synchronous, active low: port `rst_ni`, sampled on the clock edge.
    SyncLow,
    /// Synchronous, active high: port `rst_i`, sampled on the clock edge.
    SyncHigh,
}

impl ResetStyle {
    /// The reset port's name in this style.
    pub fn port_name(self) -> &'static str {
        match self {
            ResetStyle::AsyncLow | ResetStyle::SyncLow => "rst_ni",
            ResetStyle::AsyncHigh | ResetStyle::SyncHigh => "rst_i",
        }
    }
    /// True when the reset is asserted low.
    pub fn active_low(self) -> bool {
        matches!(self, ResetStyle::AsyncLow | ResetStyle::SyncLow)
    }
    /// True when the reset acts without a clock edge.
    pub fn is_async(self) -> bool {
        matches!(self, ResetStyle::AsyncLow | ResetStyle::AsyncHigh)
    }
}

/// The name of every module's clock port.
pub const CLOCK_PORT: &str = "clk_i";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SigKind {
    Input,
    Output,
    Wire,
    /// Register output `name_q`; the index is into `regs`.
    RegQ(u32),
    /// Register next value `name_d`; driven by the user.
    RegD(u32),
    /// Registered read data of a memory; the index is into `mems`.
    MemRead(u32),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    Clock,
    Reset,
    Normal,
}

#[derive(Clone, Debug)]
pub(crate) struct SigDecl {
    pub name: String,
    pub width: u32,
    pub kind: SigKind,
    pub role: Role,
    pub loc: Loc,
    pub group: Option<String>,
    pub comment: Option<String>,
    pub enum_ty: Option<u32>,
}

#[derive(Clone, Debug)]
pub(crate) struct RegDecl {
    pub q: u32,
    pub d: u32,
    pub reset: Option<Expr>,
}

#[derive(Clone, Debug)]
pub(crate) struct EnumDecl {
    pub name: String,
    pub items: Vec<String>,
    pub width: u32,
    pub loc: Loc,
}

#[derive(Clone, Debug)]
pub(crate) struct MemWrite {
    pub en: Expr,
    pub addr: Expr,
    pub data: Expr,
    pub loc: Loc,
}

#[derive(Clone, Debug)]
pub(crate) struct MemReadPort {
    pub en: Expr,
    pub addr: Expr,
    pub data: u32,
}

#[derive(Clone, Debug)]
pub(crate) struct MemDecl {
    pub name: String,
    pub width: u32,
    pub depth: u64,
    pub addr_width: u32,
    pub writes: Vec<MemWrite>,
    pub reads: Vec<MemReadPort>,
    pub loc: Loc,
}

/// One `if`/`else if` branch: its condition and body.
pub(crate) type Branch = (Expr, Vec<Stmt>);

#[derive(Clone, Debug)]
pub(crate) enum Stmt {
    Assign {
        target: Sig,
        value: Expr,
        loc: Loc,
    },
    If {
        branches: Vec<(Expr, Vec<Stmt>)>,
        otherwise: Option<Vec<Stmt>>,
    },
    Case {
        sel: Expr,
        arms: Vec<(Vec<Expr>, Vec<Stmt>)>,
        default: Option<Vec<Stmt>>,
        loc: Loc,
    },
}

#[derive(Clone, Debug)]
pub(crate) enum Item {
    Assign { target: Sig, value: Expr, loc: Loc },
    Comb { stmts: Vec<Stmt>, loc: Loc },
}

#[derive(Clone, Debug)]
pub(crate) enum Bind {
    In(Expr),
    Out(Sig),
}

#[derive(Clone, Debug)]
pub(crate) struct InstDecl {
    pub name: String,
    pub module: Rc<Module>,
    /// One entry per port of `module`, in its port order.
    pub binds: Vec<Option<(Bind, Loc)>>,
    pub loc: Loc,
}

/// A functional coverage point (see [`ModuleBuilder::cover`]).
#[derive(Clone, Debug)]
pub(crate) struct CoverDecl {
    /// Point name; the emitted label is `cov_<name>`.
    pub name: String,
    /// One bit: the point is hit in a cycle (out of reset) where this holds.
    pub cond: Expr,
    pub loc: Loc,
}

#[derive(Clone, Debug)]
pub(crate) struct ModuleData {
    pub id: u32,
    pub name: String,
    pub doc: Vec<String>,
    pub reset_style: ResetStyle,
    pub signals: Vec<SigDecl>,
    pub regs: Vec<RegDecl>,
    pub enums: Vec<EnumDecl>,
    pub mems: Vec<MemDecl>,
    pub items: Vec<Item>,
    pub insts: Vec<InstDecl>,
    pub covers: Vec<CoverDecl>,
    pub loc: Loc,
}

impl ModuleData {
    /// Port signal ids in port-list order: clock, reset, then declaration order.
    pub fn port_ids(&self) -> Vec<u32> {
        let mut ports: Vec<u32> = Vec::new();
        for role in [Role::Clock, Role::Reset, Role::Normal] {
            for (i, s) in self.signals.iter().enumerate() {
                if s.role == role && matches!(s.kind, SigKind::Input | SigKind::Output) {
                    ports.push(i as u32);
                }
            }
        }
        ports
    }

    pub fn sig(&self, id: u32) -> &SigDecl {
        &self.signals[id as usize]
    }

    pub fn handle(&self, id: u32) -> Sig {
        let d = self.sig(id);
        Sig {
            module: self.id,
            id,
            width: d.width,
            enum_ty: d.enum_ty,
        }
    }
}

/// A port of a finished module, as seen from outside.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortInfo {
    /// Port name, e.g. `s_valid_i`.
    pub name: String,
    /// Width in bits.
    pub width: u32,
    /// True for an input.
    pub input: bool,
    /// True for the clock port.
    pub is_clock: bool,
    /// True for the reset port.
    pub is_reset: bool,
    /// The group comment the port was declared under, if any.
    pub group: Option<String>,
}

/// A finished, checked module. Instantiate it in other modules or add it to a [`crate::Design`].
#[derive(Clone, Debug)]
pub struct Module {
    pub(crate) data: ModuleData,
    /// For each port (in port order), the input port indices it depends on combinationally.
    pub(crate) comb_inputs: Vec<Vec<usize>>,
}

impl Module {
    /// The module's name (and its file's stem).
    pub fn name(&self) -> &str {
        &self.data.name
    }

    /// The ports in port-list order.
    pub fn ports(&self) -> Vec<PortInfo> {
        self.data
            .port_ids()
            .into_iter()
            .map(|id| {
                let s = self.data.sig(id);
                PortInfo {
                    name: s.name.clone(),
                    width: s.width,
                    input: s.kind == SigKind::Input,
                    is_clock: s.role == Role::Clock,
                    is_reset: s.role == Role::Reset,
                    group: s.group.clone(),
                }
            })
            .collect()
    }

    /// The reset style the module was built with.
    pub fn reset_style(&self) -> ResetStyle {
        self.data.reset_style
    }

    /// Names of the modules instantiated directly inside this one, in instance order.
    pub fn children(&self) -> Vec<Rc<Module>> {
        self.data.insts.iter().map(|i| i.module.clone()).collect()
    }

    /// Structural equality of the emitted text, used to merge identical modules in a design.
    pub(crate) fn same_as(&self, other: &Module) -> bool {
        crate::emit::module_body(self) == crate::emit::module_body(other)
    }
}

/// A register: write its next value to `d`, read its current value from `q`.
#[derive(Clone, Copy, Debug)]
pub struct Reg {
    /// Current value (`name_q`).
    pub q: Sig,
    /// Next value (`name_d`); drive it on every path, usually with `q` as the default.
    pub d: Sig,
}

/// An enum type declared in a module, for state machines.
#[derive(Clone, Debug)]
pub struct EnumTy {
    module: u32,
    index: u32,
    items: Vec<String>,
    width: u32,
}

impl EnumTy {
    /// The value of item `name`. Panics (at the caller's line) when the enum has no such item.
    #[track_caller]
    pub fn item(&self, name: &str) -> Expr {
        let Some(i) = self.items.iter().position(|n| n == name) else {
            panic!(
                "enum has no item `{name}`; its items are {}",
                self.items.join(", ")
            );
        };
        Expr::with_enum(
            Kind::EnumItem(i as u32),
            self.width,
            Location::caller(),
            Some((self.module, self.index)),
        )
    }

    /// Width in bits of the enum's encoding.
    pub fn width(&self) -> u32 {
        self.width
    }
}

/// A memory with registered reads; FPGA tools map it to block RAM.
#[derive(Clone, Copy, Debug)]
pub struct Mem {
    module: u32,
    index: u32,
    /// Address width in bits.
    pub addr_width: u32,
    /// Word width in bits.
    pub width: u32,
}

/// A handle to an instance inside the module being built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inst(u32);

/// Builds one module. Finish it with [`ModuleBuilder::finish`], which runs every check.
pub struct ModuleBuilder {
    pub(crate) d: ModuleData,
    group: Option<String>,
    pending: Vec<Error>,
}

impl ModuleBuilder {
    /// A new, empty module with asynchronous active-low reset.
    #[track_caller]
    pub fn new(name: &str) -> ModuleBuilder {
        Self::with_reset(name, ResetStyle::AsyncLow)
    }

    /// A new, empty module with the given reset style.
    #[track_caller]
    pub fn with_reset(name: &str, reset_style: ResetStyle) -> ModuleBuilder {
        ModuleBuilder {
            d: ModuleData {
                id: NEXT_MODULE.fetch_add(1, Ordering::Relaxed),
                name: name.to_string(),
                doc: Vec::new(),
                reset_style,
                signals: Vec::new(),
                regs: Vec::new(),
                enums: Vec::new(),
                mems: Vec::new(),
                items: Vec::new(),
                insts: Vec::new(),
                covers: Vec::new(),
                loc: Location::caller(),
            },
            group: None,
            pending: Vec::new(),
        }
    }

    /// The module's name.
    pub fn name(&self) -> &str {
        &self.d.name
    }

    /// The reset style of this module.
    pub fn reset_style(&self) -> ResetStyle {
        self.d.reset_style
    }

    /// Adds a line to the header comment; say what the block does and its interface contract.
    pub fn doc(&mut self, line: &str) {
        self.d.doc.push(line.to_string());
    }

    /// Ports declared after this call are grouped under `// comment` in the port list.
    pub fn group(&mut self, comment: &str) {
        self.group = Some(comment.to_string());
    }

    /// Sets a trailing comment on a signal's declaration.
    pub fn comment(&mut self, s: Sig, text: &str) {
        if s.module == self.d.id {
            self.d.signals[s.id as usize].comment = Some(text.to_string());
        }
    }

    fn add_sig(
        &mut self,
        name: &str,
        width: u32,
        kind: SigKind,
        role: Role,
        enum_ty: Option<u32>,
        loc: Loc,
    ) -> Sig {
        let group = if matches!(kind, SigKind::Input | SigKind::Output) && role == Role::Normal {
            self.group.clone()
        } else {
            None
        };
        let id = self.d.signals.len() as u32;
        self.d.signals.push(SigDecl {
            name: name.to_string(),
            width,
            kind,
            role,
            loc,
            group,
            comment: None,
            enum_ty,
        });
        self.d.handle(id)
    }

    /// The module of an instance in this builder.
    pub(crate) fn instance_module(&self, inst: Inst) -> Rc<Module> {
        self.d.insts[inst.0 as usize].module.clone()
    }

    pub(crate) fn pending_error(
        &mut self,
        kind: ErrorKind,
        signal: Option<&str>,
        loc: Loc,
        message: String,
    ) {
        self.error(kind, signal, loc, message)
    }

    fn error(&mut self, kind: ErrorKind, signal: Option<&str>, loc: Loc, message: String) {
        self.pending.push(Error {
            kind,
            module: self.d.name.clone(),
            signal: signal.map(str::to_string),
            loc,
            message,
        });
    }

    /// The clock input `clk_i`, created on first use (registers and memories create it too).
    #[track_caller]
    pub fn clock(&mut self) -> Sig {
        if let Some(i) = self.d.signals.iter().position(|s| s.role == Role::Clock) {
            return self.d.handle(i as u32);
        }
        self.add_sig(
            CLOCK_PORT,
            1,
            SigKind::Input,
            Role::Clock,
            None,
            Location::caller(),
        )
    }

    /// The reset input (`rst_ni` or `rst_i`, by reset style), created on first use.
    #[track_caller]
    pub fn reset(&mut self) -> Sig {
        if let Some(i) = self.d.signals.iter().position(|s| s.role == Role::Reset) {
            return self.d.handle(i as u32);
        }
        let name = self.d.reset_style.port_name();
        self.add_sig(
            name,
            1,
            SigKind::Input,
            Role::Reset,
            None,
            Location::caller(),
        )
    }

    /// An input port. Name it with the `_i` suffix.
    #[track_caller]
    pub fn input(&mut self, name: &str, width: u32) -> Sig {
        self.add_sig(
            name,
            width,
            SigKind::Input,
            Role::Normal,
            None,
            Location::caller(),
        )
    }

    /// An output port. Name it with the `_o` suffix; drive it exactly once.
    #[track_caller]
    pub fn output(&mut self, name: &str, width: u32) -> Sig {
        self.add_sig(
            name,
            width,
            SigKind::Output,
            Role::Normal,
            None,
            Location::caller(),
        )
    }

    /// An internal signal; drive it exactly once (an `assign` or one combinational block).
    #[track_caller]
    pub fn wire(&mut self, name: &str, width: u32) -> Sig {
        self.add_sig(
            name,
            width,
            SigKind::Wire,
            Role::Normal,
            None,
            Location::caller(),
        )
    }

    /// An internal enum-typed signal.
    #[track_caller]
    pub fn wire_enum(&mut self, name: &str, ty: &EnumTy) -> Sig {
        let loc = Location::caller();
        self.check_enum(ty, loc);
        self.add_sig(
            name,
            ty.width,
            SigKind::Wire,
            Role::Normal,
            Some(ty.index),
            loc,
        )
    }

    /// A wire driven by `value`, in one call: `let sum = m.net("sum", a + b)`.
    #[track_caller]
    pub fn net(&mut self, name: &str, value: impl Into<Expr>) -> Sig {
        let loc = Location::caller();
        let value = value.into();
        let s = self.add_sig(
            name,
            value.width(),
            SigKind::Wire,
            Role::Normal,
            value.0.enum_ty.map(|t| t.1),
            loc,
        );
        self.d.items.push(Item::Assign {
            target: s,
            value,
            loc,
        });
        s
    }

    fn check_enum(&mut self, ty: &EnumTy, loc: Loc) {
        if ty.module != self.d.id {
            self.error(
                ErrorKind::ForeignSignal,
                None,
                loc,
                "enum type belongs to another module; declare it in this one".into(),
            );
        }
    }

    /// A register with a reset value: signals `name_q` (current) and `name_d` (next).
    #[track_caller]
    pub fn reg(&mut self, name: &str, width: u32, reset: impl Operand) -> Reg {
        let loc = Location::caller();
        let reset = reset.to_expr(width, loc);
        self.add_reg(name, width, None, Some(reset), loc)
    }

    /// A register without reset, for datapath values that are qualified by a valid bit.
    #[track_caller]
    pub fn reg_noreset(&mut self, name: &str, width: u32) -> Reg {
        self.add_reg(name, width, None, None, Location::caller())
    }

    /// An enum-typed register (a state machine's state), reset to `reset`.
    #[track_caller]
    pub fn reg_enum(&mut self, name: &str, ty: &EnumTy, reset: Expr) -> Reg {
        let loc = Location::caller();
        self.check_enum(ty, loc);
        self.add_reg(name, ty.width, Some(ty.index), Some(reset), loc)
    }

    fn add_reg(
        &mut self,
        name: &str,
        width: u32,
        ty: Option<u32>,
        reset: Option<Expr>,
        loc: Loc,
    ) -> Reg {
        self.clock();
        if reset.is_some() {
            self.reset();
        }
        let r = self.d.regs.len() as u32;
        let q = self.add_sig(
            &format!("{name}_q"),
            width,
            SigKind::RegQ(r),
            Role::Normal,
            ty,
            loc,
        );
        let d = self.add_sig(
            &format!("{name}_d"),
            width,
            SigKind::RegD(r),
            Role::Normal,
            ty,
            loc,
        );
        self.d.regs.push(RegDecl {
            q: q.id,
            d: d.id,
            reset,
        });
        Reg { q, d }
    }

    /// Declares an enum type for this module: `typedef enum logic [..] {..} name_e`.
    #[track_caller]
    pub fn enum_type(&mut self, name: &str, items: &[&str]) -> EnumTy {
        let loc = Location::caller();
        let width = clog2(items.len() as u64);
        let index = self.d.enums.len() as u32;
        if items.is_empty() {
            self.error(
                ErrorKind::Invalid,
                Some(name),
                loc,
                "an enum needs at least one item".into(),
            );
        }
        self.d.enums.push(EnumDecl {
            name: format!("{name}_e"),
            items: items.iter().map(|s| s.to_string()).collect(),
            width,
            loc,
        });
        EnumTy {
            module: self.d.id,
            index,
            items: items.iter().map(|s| s.to_string()).collect(),
            width,
        }
    }

    /// A memory of `depth` words of `width` bits, without reset. Reads are registered.
    #[track_caller]
    pub fn memory(&mut self, name: &str, width: u32, depth: u64) -> Mem {
        let loc = Location::caller();
        self.clock();
        if depth < 2 || width == 0 {
            self.error(
                ErrorKind::Invalid,
                Some(name),
                loc,
                format!(
                    "memory of {depth} words of {width} bits: a memory needs at least 2 words of 1 bit (use a register for one word)"
                ),
            );
        }
        let index = self.d.mems.len() as u32;
        let addr_width = clog2(depth);
        self.d.mems.push(MemDecl {
            name: name.to_string(),
            width,
            depth,
            addr_width,
            writes: Vec::new(),
            reads: Vec::new(),
            loc,
        });
        Mem {
            module: self.d.id,
            index,
            addr_width,
            width,
        }
    }

    /// Adds a write port: when `en`, word `addr` takes `data` at the clock edge.
    #[track_caller]
    pub fn mem_write(
        &mut self,
        mem: Mem,
        en: impl Into<Expr>,
        addr: impl Into<Expr>,
        data: impl Into<Expr>,
    ) {
        let loc = Location::caller();
        if mem.module != self.d.id {
            return self.error(
                ErrorKind::ForeignSignal,
                None,
                loc,
                "memory belongs to another module".into(),
            );
        }
        self.d.mems[mem.index as usize].writes.push(MemWrite {
            en: en.into(),
            addr: addr.into(),
            data: data.into(),
            loc,
        });
    }

    /// Adds a registered read port: when `en`, `<mem>_rdata_q` takes word `addr` at the clock
    /// edge (the old word when the same address is written in that cycle).
    #[track_caller]
    pub fn mem_read(&mut self, mem: Mem, en: impl Into<Expr>, addr: impl Into<Expr>) -> Sig {
        let loc = Location::caller();
        let m = &self.d.mems[mem.index as usize];
        let name = if m.reads.is_empty() {
            format!("{}_rdata_q", m.name)
        } else {
            format!("{}_rdata{}_q", m.name, m.reads.len())
        };
        let s = self.add_sig(
            &name,
            mem.width,
            SigKind::MemRead(mem.index),
            Role::Normal,
            None,
            loc,
        );
        if mem.module != self.d.id {
            self.error(
                ErrorKind::ForeignSignal,
                None,
                loc,
                "memory belongs to another module".into(),
            );
            return s;
        }
        self.d.mems[mem.index as usize].reads.push(MemReadPort {
            en: en.into(),
            addr: addr.into(),
            data: s.id,
        });
        s
    }

    /// `assign target = value;`
    #[track_caller]
    pub fn assign(&mut self, target: Sig, value: impl Operand) {
        let loc = Location::caller();
        let value = value.to_expr(target.width, loc);
        self.d.items.push(Item::Assign { target, value, loc });
    }

    /// A combinational process (`always_comb`). Give every signal it drives a default first.
    #[track_caller]
    pub fn comb(&mut self, body: impl FnOnce(&mut Comb)) {
        let loc = Location::caller();
        let mut c = Comb { stmts: Vec::new() };
        body(&mut c);
        self.d.items.push(Item::Comb {
            stmts: c.stmts,
            loc,
        });
    }

    /// Marks bits that are deliberately not read, so the emitted RTL stays lint-clean:
    /// emits `logic unused_<name>; assign unused_<name> = ^{...};`.
    #[track_caller]
    pub fn unused(&mut self, name: &str, value: impl Into<Expr>) {
        let loc = Location::caller();
        let s = self.add_sig(
            &format!("unused_{name}"),
            1,
            SigKind::Wire,
            Role::Normal,
            None,
            loc,
        );
        let value: Expr = value.into();
        let value = Expr::new(
            Kind::Reduce(crate::expr::RedOp::Xor, value),
            1,
            Location::caller(),
        );
        self.d.items.push(Item::Assign {
            target: s,
            value,
            loc,
        });
    }

    /// A functional coverage point: counts the clock edges, out of reset, at which `cond` (one
    /// bit) holds. Emitted as `cov_<name>: cover property (@(posedge clk) <out of reset> &&
    /// (cond));` inside `` `ifndef SYNTHESIS ``, so it costs no hardware: simulators count it
    /// (Verilator with `--coverage-user`; `testbench coverage` lists the points never hit) and
    /// synthesis never sees it. Name the events a suite must reach: every error cause, every
    /// status, each arbitration class, a queue wrapping. Creates the clock and reset ports if
    /// the module has none yet.
    #[track_caller]
    pub fn cover(&mut self, name: &str, cond: impl Into<Expr>) {
        let loc = Location::caller();
        self.clock();
        self.reset();
        self.d.covers.push(CoverDecl {
            name: name.to_string(),
            cond: cond.into(),
            loc,
        });
    }

    /// Instantiates `module` as `name`. Bind its ports with [`Self::bind`] and [`Self::bind_out`];
    /// the clock and reset are connected to this module's own.
    #[track_caller]
    pub fn instance(&mut self, name: &str, module: &Rc<Module>) -> Inst {
        let loc = Location::caller();
        let ports = module.data.port_ids();
        let mut binds: Vec<Option<(Bind, Loc)>> = vec![None; ports.len()];
        for (i, &pid) in ports.iter().enumerate() {
            let role = module.data.sig(pid).role;
            if role == Role::Clock {
                let c = self.clock();
                binds[i] = Some((Bind::In(sig_expr(c, loc)), loc));
            } else if role == Role::Reset {
                if module.data.reset_style != self.d.reset_style {
                    self.error(
                        ErrorKind::PortMismatch,
                        Some(name),
                        loc,
                        format!(
                            "module `{}` uses reset style {:?}, this module {:?}; a design has one reset style",
                            module.name(),
                            module.data.reset_style,
                            self.d.reset_style
                        ),
                    );
                }
                let r = self.reset();
                binds[i] = Some((Bind::In(sig_expr(r, loc)), loc));
            }
        }
        self.d.insts.push(InstDecl {
            name: name.to_string(),
            module: module.clone(),
            binds,
            loc,
        });
        Inst(self.d.insts.len() as u32 - 1)
    }

    fn port_index(&mut self, inst: Inst, port: &str, want_input: bool, loc: Loc) -> Option<usize> {
        let decl = &self.d.insts[inst.0 as usize];
        let child = decl.module.clone();
        let iname = decl.name.clone();
        let ports = child.data.port_ids();
        let Some(i) = ports.iter().position(|&p| child.data.sig(p).name == port) else {
            let names: Vec<&str> = ports
                .iter()
                .map(|&p| child.data.sig(p).name.as_str())
                .collect();
            self.error(
                ErrorKind::PortMismatch,
                Some(&iname),
                loc,
                format!(
                    "module `{}` has no port `{port}`; its ports are {}",
                    child.name(),
                    names.join(", ")
                ),
            );
            return None;
        };
        let is_input = child.data.sig(ports[i]).kind == SigKind::Input;
        if is_input != want_input {
            let (what, use_) = if is_input {
                ("an input", "bind")
            } else {
                ("an output", "bind_out")
            };
            self.error(
                ErrorKind::PortMismatch,
                Some(&iname),
                loc,
                format!("port `{port}` of `{}` is {what}; use {use_}", child.name()),
            );
            return None;
        }
        if self.d.insts[inst.0 as usize].binds[i].is_some() {
            self.error(
                ErrorKind::MultiplyDriven,
                Some(&iname),
                loc,
                format!("port `{port}` is bound twice"),
            );
            return None;
        }
        Some(i)
    }

    /// Drives an instance's reset port with `value` instead of this module's reset: a reset
    /// derived from it (this module's reset combined with a register, so firmware can hold a
    /// block in reset), in the design's one reset style. `value` must come from flip-flops or
    /// this module's reset so it does not glitch.
    #[track_caller]
    pub fn bind_reset(&mut self, inst: Inst, value: impl Operand) {
        let loc = Location::caller();
        let decl = &self.d.insts[inst.0 as usize];
        let child = decl.module.clone();
        let ports = child.data.port_ids();
        let Some(i) = ports
            .iter()
            .position(|&p| child.data.sig(p).role == Role::Reset)
        else {
            let iname = decl.name.clone();
            self.error(
                ErrorKind::PortMismatch,
                Some(&iname),
                loc,
                format!("module `{}` has no reset port", child.name()),
            );
            return;
        };
        let e = value.to_expr(1, loc);
        self.d.insts[inst.0 as usize].binds[i] = Some((Bind::In(e), loc));
    }

    /// Connects an input port of an instance to `value`.
    #[track_caller]
    pub fn bind(&mut self, inst: Inst, port: &str, value: impl Operand) {
        let loc = Location::caller();
        if let Some(i) = self.port_index(inst, port, true, loc) {
            let decl = &self.d.insts[inst.0 as usize];
            let w = decl.module.data.sig(decl.module.data.port_ids()[i]).width;
            let e = value.to_expr(w, loc);
            self.d.insts[inst.0 as usize].binds[i] = Some((Bind::In(e), loc));
        }
    }

    /// Connects an output port of an instance to a new wire named `<instance>_<port>` (without
    /// the `u_` prefix and `_o` suffix) and returns it.
    #[track_caller]
    pub fn bind_out(&mut self, inst: Inst, port: &str) -> Sig {
        let loc = Location::caller();
        let decl = &self.d.insts[inst.0 as usize];
        let iname = decl
            .name
            .strip_prefix("u_")
            .unwrap_or(&decl.name)
            .to_string();
        let child = decl.module.clone();
        let pname = port.strip_suffix("_o").unwrap_or(port);
        let width = child
            .data
            .signals
            .iter()
            .find(|s| s.name == port)
            .map_or(1, |s| s.width);
        let w = self.add_sig(
            &format!("{iname}_{pname}"),
            width,
            SigKind::Wire,
            Role::Normal,
            None,
            loc,
        );
        self.bind_out_to(inst, port, w);
        w
    }

    /// Connects an output port of an instance to an existing wire or output port of this module.
    #[track_caller]
    pub fn bind_out_to(&mut self, inst: Inst, port: &str, target: Sig) {
        let loc = Location::caller();
        if let Some(i) = self.port_index(inst, port, false, loc) {
            self.d.insts[inst.0 as usize].binds[i] = Some((Bind::Out(target), loc));
        }
    }

    /// Makes every port of instance `inst` whose name starts with `prefix` a port of this module
    /// of the same name, direction and width, connected straight through: a bus the instance
    /// serves for the parent, such as its CSR slave.
    #[track_caller]
    pub fn pass_through(&mut self, inst: Inst, prefix: &str) {
        let child = self.d.insts[inst.0 as usize].module.clone();
        for port in child.ports() {
            if !port.name.starts_with(prefix) {
                continue;
            }
            if port.input {
                let s = self.input(&port.name, port.width);
                self.bind(inst, &port.name, s);
            } else {
                let s = self.output(&port.name, port.width);
                self.bind_out_to(inst, &port.name, s);
            }
        }
    }

    /// Runs every elaboration check and returns the finished module, or all the errors found.
    pub fn finish(mut self) -> Result<Rc<Module>, Errors> {
        // Outputs of instances left unbound go to `unused_*` wires, which lint accepts as intended.
        for ii in 0..self.d.insts.len() {
            let child = self.d.insts[ii].module.clone();
            for (pi, &pid) in child.data.port_ids().iter().enumerate() {
                let p = child.data.sig(pid);
                if p.kind == SigKind::Output && self.d.insts[ii].binds[pi].is_none() {
                    let loc = self.d.insts[ii].loc;
                    let name = format!("unused_{}_{}", self.d.insts[ii].name, p.name);
                    let w = self.add_sig(&name, p.width, SigKind::Wire, Role::Normal, None, loc);
                    self.d.insts[ii].binds[pi] = Some((Bind::Out(w), loc));
                }
            }
        }
        let mut errors = self.pending;
        let comb_inputs = check::check(&self.d, &mut errors);
        if errors.is_empty() {
            Ok(Rc::new(Module {
                data: self.d,
                comb_inputs,
            }))
        } else {
            Err(Errors(errors))
        }
    }
}

/// The body of a combinational process: assignments, `if` and `case`.
pub struct Comb {
    pub(crate) stmts: Vec<Stmt>,
}

impl Comb {
    /// `target = value;`
    #[track_caller]
    pub fn set(&mut self, target: Sig, value: impl Operand) {
        let loc = Location::caller();
        let value = value.to_expr(target.width, loc);
        self.stmts.push(Stmt::Assign { target, value, loc });
    }

    /// `if (cond) begin ... end`; chain `.else_if(..)` and `.else_(..)` on the result.
    #[track_caller]
    pub fn if_(&mut self, cond: impl Operand, body: impl FnOnce(&mut Comb)) -> IfChain<'_> {
        let loc = Location::caller();
        let cond = cond.to_expr(1, loc);
        let mut c = Comb { stmts: Vec::new() };
        body(&mut c);
        self.stmts.push(Stmt::If {
            branches: vec![(cond, c.stmts)],
            otherwise: None,
        });
        IfChain { comb: self }
    }

    /// `case (sel) ... endcase`; add arms on the [`CaseArms`] given to `body`.
    #[track_caller]
    pub fn case(&mut self, sel: impl Into<Expr>, body: impl FnOnce(&mut CaseArms)) {
        let loc = Location::caller();
        let sel = sel.into();
        let mut arms = CaseArms {
            width: sel.width(),
            arms: Vec::new(),
            default: None,
        };
        body(&mut arms);
        self.stmts.push(Stmt::Case {
            sel,
            arms: arms.arms,
            default: arms.default,
            loc,
        });
    }
}

/// Continues an `if` with `else if` and `else` branches.
pub struct IfChain<'a> {
    comb: &'a mut Comb,
}

impl<'a> IfChain<'a> {
    fn branches(&mut self) -> (&mut Vec<Branch>, &mut Option<Vec<Stmt>>) {
        match self.comb.stmts.last_mut() {
            Some(Stmt::If {
                branches,
                otherwise,
                ..
            }) => (branches, otherwise),
            _ => unreachable!("IfChain always follows an if"),
        }
    }

    /// `else if (cond) begin ... end`
    #[track_caller]
    pub fn else_if(mut self, cond: impl Operand, body: impl FnOnce(&mut Comb)) -> IfChain<'a> {
        let cond = cond.to_expr(1, Location::caller());
        let mut c = Comb { stmts: Vec::new() };
        body(&mut c);
        self.branches().0.push((cond, c.stmts));
        self
    }

    /// `else begin ... end`
    pub fn else_(mut self, body: impl FnOnce(&mut Comb)) {
        let mut c = Comb { stmts: Vec::new() };
        body(&mut c);
        *self.branches().1 = Some(c.stmts);
    }
}

/// The arms of a `case` statement.
pub struct CaseArms {
    width: u32,
    arms: Vec<(Vec<Expr>, Vec<Stmt>)>,
    default: Option<Vec<Stmt>>,
}

impl CaseArms {
    /// An arm for one label (a constant or an enum item).
    #[track_caller]
    pub fn arm(&mut self, label: impl Operand, body: impl FnOnce(&mut Comb)) {
        let label = label.to_expr(self.width, Location::caller());
        let mut c = Comb { stmts: Vec::new() };
        body(&mut c);
        self.arms.push((vec![label], c.stmts));
    }

    /// An arm for several labels.
    #[track_caller]
    pub fn arms<T: Operand>(&mut self, labels: Vec<T>, body: impl FnOnce(&mut Comb)) {
        let loc = Location::caller();
        let labels = labels
            .into_iter()
            .map(|l| l.to_expr(self.width, loc))
            .collect();
        let mut c = Comb { stmts: Vec::new() };
        body(&mut c);
        self.arms.push((labels, c.stmts));
    }

    /// The `default` arm. Every emitted `case` has one; without a call it is empty.
    pub fn default(&mut self, body: impl FnOnce(&mut Comb)) {
        let mut c = Comb { stmts: Vec::new() };
        body(&mut c);
        self.default = Some(c.stmts);
    }
}

/// Names a signal back from its handle, for messages.
pub(crate) fn sig_name(d: &ModuleData, s: Sig) -> String {
    if s.module == d.id {
        d.sig(s.id).name.clone()
    } else {
        format!("<signal of another module>#{}", s.id)
    }
}

impl Value for Reg {
    #[track_caller]
    fn ex(&self) -> Expr {
        sig_expr(self.q, Location::caller())
    }
}
