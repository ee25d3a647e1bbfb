//! Building a module: ports, wires, registers, memories, instances, assignments and processes.
//!
//! One file on purpose (about 2,000 lines): `ModuleBuilder`'s `impl`, 80-odd documented methods,
//! is the builder's API and reads as one reference; checks, emitter and register blocks have
//! files of their own.

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
    /// A bidirectional port (`inout`): read like an input, driven by one [`Item::Tristate`] or
    /// an instance's inout port.
    InOut,
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

/// When an input port's value may change: the clock domain it is sampled in, or never
/// predictably.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Timing {
    /// Launched by a flip-flop of this module's domain (index into `domains`).
    Domain(u32),
    /// Asynchronous to every clock of the module (a button, a pin): no register may take it
    /// combinationally; it must pass through a synchronizer instance.
    Async,
    /// A declared clock-domain crossing: a synchronizer's input. A register of any domain may
    /// take it; the block's own structure (two flip-flops, gray code) makes that safe.
    Crossing,
}

/// A clock domain: its clock, and its reset once something needs one.
#[derive(Clone, Debug)]
pub(crate) struct DomainDecl {
    /// Empty for the default domain (`clk_i`).
    pub name: String,
    pub clock: Option<u32>,
    pub reset: Option<u32>,
    /// The clock and reset are signals of this module (a PLL's output), not ports it creates.
    pub internal: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct SigDecl {
    pub name: String,
    pub width: u32,
    pub kind: SigKind,
    pub role: Role,
    /// For inputs: the domain the value belongs to. For clock and reset ports: their domain.
    pub timing: Timing,
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
    /// Index into `domains`.
    pub dom: u32,
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
    /// The domain whose clock registers the read (index into `domains`).
    pub dom: u32,
}

#[derive(Clone, Debug)]
pub(crate) struct MemDecl {
    pub name: String,
    pub width: u32,
    pub depth: u64,
    pub addr_width: u32,
    pub writes: Vec<MemWrite>,
    pub reads: Vec<MemReadPort>,
    /// The domain whose clock writes (index into `domains`).
    pub dom: u32,
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
    Assign {
        target: Sig,
        value: Expr,
        loc: Loc,
    },
    Comb {
        stmts: Vec<Stmt>,
        loc: Loc,
    },
    /// `assign target = oe ? value : 'z;` on an inout port.
    Tristate {
        target: Sig,
        oe: Expr,
        value: Expr,
        loc: Loc,
    },
}

/// The value of a parameter of a vendor primitive's instance.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ParamValue {
    /// An integer: `.CLKI_DIV (6)`.
    Int(i64),
    /// A string: `.FEEDBK_PATH ("CLKOP")`.
    Str(String),
}

impl ParamValue {
    /// The value as SystemVerilog writes it.
    pub fn sv(&self) -> String {
        match self {
            ParamValue::Int(v) => v.to_string(),
            ParamValue::Str(s) => format!("\"{s}\""),
        }
    }
}

impl From<i64> for ParamValue {
    fn from(v: i64) -> ParamValue {
        ParamValue::Int(v)
    }
}

impl From<&str> for ParamValue {
    fn from(v: &str) -> ParamValue {
        ParamValue::Str(v.to_string())
    }
}

/// What a vendor primitive declares about itself (it has no body the checks could read).
#[derive(Clone, Debug, Default)]
pub(crate) struct PrimitiveDecl {
    /// Output signal -> the domains (or `Async`) that launch it.
    pub launch: Vec<(u32, Timing)>,
    /// Output signal -> the input signals it follows combinationally.
    pub follows: Vec<(u32, Vec<u32>)>,
    /// The behavioural model simulation and lint use in its place.
    pub model: Option<Rc<Module>>,
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
    /// For each domain of `module` (by index), the domain of this module its clock and reset
    /// are bound to; unset ones are settled by `finish` (the default domain to the default).
    pub dom_binds: Vec<Option<(u32, Loc)>>,
    /// Parameter values (`#(.NAME (value))`), for vendor primitives.
    pub params: Vec<(String, ParamValue)>,
    /// Attributes written before the instance (`(* NAME = value *)`), value as written.
    pub attrs: Vec<(String, String)>,
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
    /// Clock domains; index 0 is the default domain (`clk_i`, `rst_ni`).
    pub domains: Vec<DomainDecl>,
    /// SystemVerilog parameters and their defaults: those a vendor primitive accepts, or the
    /// same list on its behavioural model (which emits them).
    pub params: Vec<(String, ParamValue)>,
    /// Set for a vendor primitive: no file is emitted for it, only for its model.
    pub primitive: Option<PrimitiveDecl>,
    /// A primitive's behavioural model: its flip-flops may sample across its clock domains
    /// (both edges of one clock, a pin), as the vendor's cell does by construction.
    pub is_model: bool,
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
                if s.role == role
                    && matches!(s.kind, SigKind::Input | SigKind::Output | SigKind::InOut)
                {
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
    /// The clock domain the port's value belongs to, by name as [`Module::domains`] lists it
    /// (`""` the default domain): an input's declared domain, an output's launching domain
    /// (or that of the inputs it follows); `None` for an asynchronous input or output, a
    /// declared crossing, or a domain without a clock port.
    pub domain: Option<String>,
}

/// A finished, checked module. Instantiate it in other modules or add it to a [`crate::Design`].
#[derive(Clone, Debug)]
pub struct Module {
    pub(crate) data: ModuleData,
    /// For each port (in port order), the input port indices it depends on combinationally.
    pub(crate) comb_inputs: Vec<Vec<usize>>,
    /// For each port (in port order), where its value is launched inside the module: the
    /// domains of the flip-flops it is read from (combinationally), and `Async` when an
    /// internal clock's flip-flops or an asynchronous input reach it. Inputs it follows
    /// combinationally are in `comb_inputs` instead.
    pub(crate) launch: Vec<std::collections::BTreeSet<Timing>>,
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
                    domain: self.port_domain(id),
                }
            })
            .collect()
    }

    fn port_domain(&self, id: u32) -> Option<String> {
        let named = |t: Timing| match t {
            Timing::Domain(k) => {
                let d = &self.data.domains[k as usize];
                (!d.internal && d.clock.is_some()).then(|| d.name.clone())
            }
            _ => None,
        };
        let s = self.data.sig(id);
        if s.kind != SigKind::Output {
            return named(s.timing);
        }
        let ports = self.data.port_ids();
        let pi = ports.iter().position(|&p| p == id)?;
        let mut ts: Vec<Timing> = self.launch[pi].iter().copied().collect();
        ts.extend(
            self.comb_inputs[pi]
                .iter()
                .map(|&i| self.data.sig(ports[i]).timing),
        );
        ts.sort();
        ts.dedup();
        match ts.as_slice() {
            [t] => named(*t),
            _ => None,
        }
    }

    /// The reset style the module was built with.
    pub fn reset_style(&self) -> ResetStyle {
        self.data.reset_style
    }

    /// The names of the module's clock domains whose clock is a port, in declaration order:
    /// `""` for the default domain (`clk_i`), then each [`ModuleBuilder::domain`]. A parent binds
    /// each to one of its own with [`ModuleBuilder::bind_domain`].
    pub fn domains(&self) -> Vec<String> {
        self.data
            .domains
            .iter()
            .filter(|d| !d.internal && d.clock.is_some())
            .map(|d| d.name.clone())
            .collect()
    }

    /// True for a vendor primitive ([`ModuleBuilder::primitive`]): instantiated, never emitted.
    pub fn is_primitive(&self) -> bool {
        self.data.primitive.is_some()
    }

    /// The behavioural model of a vendor primitive, for simulation and lint.
    pub fn model(&self) -> Option<Rc<Module>> {
        self.data.primitive.as_ref().and_then(|p| p.model.clone())
    }

    /// The file a tool reads for this module, relative to the emitted folder: `<name>.sv`, or
    /// `models/<name>.sv` for the behavioural model of a vendor primitive (`model` true) and
    /// for the primitive itself (simulation and lint read the model in its place).
    pub fn file_name(&self, model: bool) -> String {
        if model || self.is_primitive() {
            format!("models/{}.sv", self.name())
        } else {
            format!("{}.sv", self.name())
        }
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

/// A clock domain of the module being built: a clock and (when a register needs one) a
/// reset. Registers, memories and inputs name their domain; [`ModuleBuilder::finish`] refuses
/// a register fed combinationally from another domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Domain {
    module: u32,
    index: u32,
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
                domains: vec![DomainDecl {
                    name: String::new(),
                    clock: None,
                    reset: None,
                    internal: false,
                }],
                params: Vec::new(),
                primitive: None,
                is_model: false,
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
        let group = if matches!(kind, SigKind::Input | SigKind::Output | SigKind::InOut)
            && role == Role::Normal
        {
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
            timing: Timing::Domain(0),
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

    /// The clock input `clk_i` of the default domain, created on first use (registers and
    /// memories create it too).
    #[track_caller]
    pub fn clock(&mut self) -> Sig {
        self.domain_clock_sig(0, Location::caller())
    }

    /// The reset input (`rst_ni` or `rst_i`, by reset style) of the default domain, created on
    /// first use.
    #[track_caller]
    pub fn reset(&mut self) -> Sig {
        self.domain_reset_sig(0, Location::caller())
    }

    /// The default domain: `clk_i` and the reset port.
    pub fn default_domain(&self) -> Domain {
        Domain {
            module: self.d.id,
            index: 0,
        }
    }

    /// A new clock domain `name` with ports of its own, created on first use: clock
    /// `clk_<name>_i` and reset `rst_<name>_ni` (or `rst_<name>_i`, by reset style). Its
    /// registers ([`Self::reg_in`]), memories and inputs ([`Self::input_in`]) name it; the
    /// parent binds it with [`Self::bind_domain`].
    #[track_caller]
    pub fn domain(&mut self, name: &str) -> Domain {
        let loc = Location::caller();
        if name.is_empty() || self.d.domains.iter().any(|d| d.name == name) {
            self.error(
                ErrorKind::NameCollision,
                Some(name),
                loc,
                format!("clock domain name `{name}` is empty or already used; give each domain its own name"),
            );
        }
        self.d.domains.push(DomainDecl {
            name: name.to_string(),
            clock: None,
            reset: None,
            internal: false,
        });
        Domain {
            module: self.d.id,
            index: self.d.domains.len() as u32 - 1,
        }
    }

    /// A clock domain `name` clocked by a signal of this module (a PLL's output, a clock
    /// input pin declared with [`Self::input_async`]) and reset by `reset` (in the design's
    /// reset style; `None` when no register of the domain has a reset value). Nothing outside
    /// the module can bind to it: its outputs are asynchronous to every parent domain.
    #[track_caller]
    pub fn domain_from(&mut self, name: &str, clock: Sig, reset: Option<Sig>) -> Domain {
        let dom = self.domain(name);
        let loc = Location::caller();
        for s in std::iter::once(clock).chain(reset) {
            if s.module != self.d.id || s.width != 1 {
                self.error(
                    ErrorKind::Invalid,
                    Some(name),
                    loc,
                    format!("the clock and reset of domain `{name}` must be 1-bit signals of this module"),
                );
            }
        }
        let dd = &mut self.d.domains[dom.index as usize];
        dd.internal = true;
        dd.clock = Some(clock.id);
        dd.reset = reset.map(|r| r.id);
        dom
    }

    fn check_domain(&mut self, dom: Domain, loc: Loc) -> u32 {
        if dom.module != self.d.id {
            self.error(
                ErrorKind::ForeignSignal,
                None,
                loc,
                "clock domain belongs to another module; declare it in this one".into(),
            );
            return 0;
        }
        dom.index
    }

    /// The clock signal of domain `dom`, created as a port on first use.
    #[track_caller]
    pub fn domain_clock(&mut self, dom: Domain) -> Sig {
        let loc = Location::caller();
        let i = self.check_domain(dom, loc);
        self.domain_clock_sig(i, loc)
    }

    /// The reset signal of domain `dom`, created as a port on first use.
    #[track_caller]
    pub fn domain_reset(&mut self, dom: Domain) -> Sig {
        let loc = Location::caller();
        let i = self.check_domain(dom, loc);
        self.domain_reset_sig(i, loc)
    }

    pub(crate) fn domain_clock_sig(&mut self, dom: u32, loc: Loc) -> Sig {
        if let Some(c) = self.d.domains[dom as usize].clock {
            return self.d.handle(c);
        }
        let name = match self.d.domains[dom as usize].name.as_str() {
            "" => CLOCK_PORT.to_string(),
            n => format!("clk_{n}_i"),
        };
        let s = self.add_sig(&name, 1, SigKind::Input, Role::Clock, None, loc);
        self.d.signals[s.id as usize].timing = Timing::Domain(dom);
        self.d.domains[dom as usize].clock = Some(s.id);
        s
    }

    pub(crate) fn domain_reset_sig(&mut self, dom: u32, loc: Loc) -> Sig {
        let dd = &self.d.domains[dom as usize];
        if let Some(r) = dd.reset {
            return self.d.handle(r);
        }
        if dd.internal {
            let n = dd.name.clone();
            self.error(
                ErrorKind::Invalid,
                Some(&n),
                loc,
                format!("domain `{n}` was made with domain_from without a reset; give it one for registers with a reset value"),
            );
            // A stand-in so building goes on; the error stops `finish`.
            let s = self.add_sig(
                &format!("rst_{n}_missing"),
                1,
                SigKind::Wire,
                Role::Normal,
                None,
                loc,
            );
            self.d.domains[dom as usize].reset = Some(s.id);
            return s;
        }
        let base = self.d.reset_style.port_name();
        let name = match dd.name.as_str() {
            "" => base.to_string(),
            n => base.replacen("rst_", &format!("rst_{n}_"), 1),
        };
        let s = self.add_sig(&name, 1, SigKind::Input, Role::Reset, None, loc);
        self.d.signals[s.id as usize].timing = Timing::Domain(dom);
        self.d.domains[dom as usize].reset = Some(s.id);
        s
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

    /// An input port whose value is launched by flip-flops clocked by domain `dom`'s clock
    /// ([`Self::input`] is the same in the default domain).
    #[track_caller]
    pub fn input_in(&mut self, dom: Domain, name: &str, width: u32) -> Sig {
        let loc = Location::caller();
        let i = self.check_domain(dom, loc);
        let s = self.add_sig(name, width, SigKind::Input, Role::Normal, None, loc);
        self.d.signals[s.id as usize].timing = Timing::Domain(i);
        s
    }

    /// An input port asynchronous to every clock of the module (a button, a pin, another
    /// chip's signal): no register may take it combinationally; pass it through a synchronizer
    /// instance first. A parent may bind anything to it.
    #[track_caller]
    pub fn input_async(&mut self, name: &str, width: u32) -> Sig {
        let s = self.add_sig(
            name,
            width,
            SigKind::Input,
            Role::Normal,
            None,
            Location::caller(),
        );
        self.d.signals[s.id as usize].timing = Timing::Async;
        s
    }

    /// A declared clock-domain crossing: the input of a synchronizer block. A parent may bind
    /// a value of any domain to it, and a register of any domain in this module may take it;
    /// the block's structure (two flip-flops in a row, gray-coded values) is what makes that
    /// safe, so declare only the inputs of such blocks this way.
    #[track_caller]
    pub fn input_crossing(&mut self, name: &str, width: u32) -> Sig {
        let s = self.add_sig(
            name,
            width,
            SigKind::Input,
            Role::Normal,
            None,
            Location::caller(),
        );
        self.d.signals[s.id as usize].timing = Timing::Crossing;
        s
    }

    /// A vendor primitive (an FPGA cell such as ECP5 `ODDRX1F` or `EHXPLLL`): a module the
    /// builder does not generate. Declare its parameters ([`Self::param`]), its clock ports
    /// ([`Self::clock_port`]), its inputs and its outputs with where each is launched
    /// ([`Self::output_in`], [`Self::output_async`], [`Self::output_follows`]), and attach a
    /// behavioural model ([`Self::set_model`]) for simulation and lint. Instances of it take
    /// parameter values ([`Self::set_param`]) and are emitted as `NAME #(.P (v)) u (...)`; no
    /// file is emitted for the primitive itself (synthesis tools have it in their cell library),
    /// only `models/NAME.sv` for its model.
    #[track_caller]
    pub fn primitive(name: &str) -> ModuleBuilder {
        let mut m = Self::with_reset(name, ResetStyle::AsyncLow);
        m.d.primitive = Some(PrimitiveDecl::default());
        m
    }

    /// The behavioural model of a vendor primitive named `name`, for simulation and lint
    /// ([`Self::set_model`] attaches it): an ordinary module, checked like any other except
    /// that its flip-flops may take values across its clock domains (a DDR register samples a
    /// pin on both edges of one clock; the vendor's cell is what makes that safe).
    #[track_caller]
    pub fn model(name: &str) -> ModuleBuilder {
        let mut m = Self::with_reset(name, ResetStyle::AsyncLow);
        m.d.is_model = true;
        m
    }

    /// Declares a SystemVerilog parameter with its default: on a primitive, one its instances
    /// may set; on a primitive's model, emitted in its header (the model must accept what the
    /// instances pass). Ordinary modules have none: generators elaborate their parameters.
    #[track_caller]
    pub fn param(&mut self, name: &str, default: impl Into<ParamValue>) {
        let loc = Location::caller();
        if self.d.params.iter().any(|p| p.0 == name) {
            self.error(
                ErrorKind::NameCollision,
                Some(name),
                loc,
                format!("parameter `{name}` is declared twice"),
            );
        }
        self.d.params.push((name.to_string(), default.into()));
    }

    /// A clock input port named `name` (a vendor primitive's `SCLK`, `CLKI`), as the clock of
    /// a new domain of that name.
    #[track_caller]
    pub fn clock_port(&mut self, name: &str) -> Domain {
        let loc = Location::caller();
        let dom = self.domain(name);
        let s = self.add_sig(name, 1, SigKind::Input, Role::Clock, None, loc);
        self.d.signals[s.id as usize].timing = Timing::Domain(dom.index);
        self.d.domains[dom.index as usize].clock = Some(s.id);
        dom
    }

    fn primitive_output(&mut self, name: &str, width: u32, loc: Loc) -> Option<Sig> {
        if self.d.primitive.is_none() {
            self.error(
                ErrorKind::Invalid,
                Some(name),
                loc,
                "only a vendor primitive declares where an output is launched; a generated module's checks find it".into(),
            );
            return None;
        }
        Some(self.add_sig(name, width, SigKind::Output, Role::Normal, None, loc))
    }

    /// A primitive's output launched by flip-flops of domain `dom` (an `IDDRX1F`'s `Q0`).
    #[track_caller]
    pub fn output_in(&mut self, dom: Domain, name: &str, width: u32) -> Option<Sig> {
        let loc = Location::caller();
        let k = self.check_domain(dom, loc);
        let s = self.primitive_output(name, width, loc)?;
        if let Some(p) = self.d.primitive.as_mut() {
            p.launch.push((s.id, Timing::Domain(k)));
        }
        Some(s)
    }

    /// A primitive's output in no clock domain of its parent (a PLL's clock or lock, a pin):
    /// a parent register may take it only through a synchronizer.
    #[track_caller]
    pub fn output_async(&mut self, name: &str, width: u32) -> Option<Sig> {
        let loc = Location::caller();
        let s = self.primitive_output(name, width, loc)?;
        if let Some(p) = self.d.primitive.as_mut() {
            p.launch.push((s.id, Timing::Async));
        }
        Some(s)
    }

    /// A primitive's output that follows `inputs` combinationally (a delay line's `Z`).
    #[track_caller]
    pub fn output_follows(&mut self, name: &str, width: u32, inputs: &[Sig]) -> Option<Sig> {
        let loc = Location::caller();
        let s = self.primitive_output(name, width, loc)?;
        if let Some(p) = self.d.primitive.as_mut() {
            p.follows
                .push((s.id, inputs.iter().map(|i| i.id).collect()));
        }
        Some(s)
    }

    /// Attaches the behavioural model of this primitive: a module of the same name, ports and
    /// parameters, built with the builder (it is checked like any other), that simulation and
    /// lint read in place of the vendor's cell.
    #[track_caller]
    pub fn set_model(&mut self, model: Rc<Module>) {
        let loc = Location::caller();
        let mine: Vec<(String, u32, SigKind)> = self
            .d
            .port_ids()
            .iter()
            .map(|&p| {
                let s = self.d.sig(p);
                (s.name.clone(), s.width, s.kind)
            })
            .collect();
        let mut theirs: Vec<(String, u32, SigKind)> = model
            .data
            .port_ids()
            .iter()
            .map(|&p| {
                let s = model.data.sig(p);
                (s.name.clone(), s.width, s.kind)
            })
            .collect();
        let mut mine_sorted = mine.clone();
        mine_sorted.sort_by(|a, b| a.0.cmp(&b.0));
        theirs.sort_by(|a, b| a.0.cmp(&b.0));
        let params_match = model.data.params.len() == self.d.params.len()
            && self
                .d
                .params
                .iter()
                .all(|p| model.data.params.iter().any(|q| q.0 == p.0));
        if model.name() != self.d.name || mine_sorted != theirs || !params_match {
            let n = self.d.name.clone();
            self.error(
                ErrorKind::PortMismatch,
                Some(&n),
                loc,
                format!(
                    "the model `{}` must have the primitive `{n}`'s name, ports (name, width, direction) and parameters",
                    model.name()
                ),
            );
        }
        if let Some(p) = self.d.primitive.as_mut() {
            p.model = Some(model);
        }
    }

    /// A bidirectional port (`inout wire`): read it like an input; drive it with
    /// [`Self::tristate`] or bind it to an instance's inout port with [`Self::bind_inout`].
    /// Reading it is asynchronous to every clock.
    #[track_caller]
    pub fn inout(&mut self, name: &str, width: u32) -> Sig {
        let s = self.add_sig(
            name,
            width,
            SigKind::InOut,
            Role::Normal,
            None,
            Location::caller(),
        );
        self.d.signals[s.id as usize].timing = Timing::Async;
        s
    }

    /// Drives the inout port `io` with `value` while `oe` is high, and releases it (high
    /// impedance) otherwise: `assign io = oe ? value : 'z;`.
    #[track_caller]
    pub fn tristate(&mut self, io: Sig, oe: impl Operand, value: impl Operand) {
        let loc = Location::caller();
        let oe = oe.to_expr(1, loc);
        let value = value.to_expr(io.width, loc);
        self.d.items.push(Item::Tristate {
            target: io,
            oe,
            value,
            loc,
        });
    }

    /// Connects the inout port `port` of instance `inst` to the inout port `io` of this module.
    #[track_caller]
    pub fn bind_inout(&mut self, inst: Inst, port: &str, io: Sig) {
        let loc = Location::caller();
        let decl = &self.d.insts[inst.0 as usize];
        let child = decl.module.clone();
        let iname = decl.name.clone();
        let ports = child.data.port_ids();
        let Some(i) = ports.iter().position(|&p| {
            let s = child.data.sig(p);
            s.name == port && s.kind == SigKind::InOut
        }) else {
            return self.error(
                ErrorKind::PortMismatch,
                Some(&iname),
                loc,
                format!("module `{}` has no inout port `{port}`", child.name()),
            );
        };
        self.d.insts[inst.0 as usize].binds[i] = Some((Bind::Out(io), loc));
    }

    /// Sets parameter `name` of instance `inst` of a vendor primitive (`#(.name (value))`).
    #[track_caller]
    pub fn set_param(&mut self, inst: Inst, name: &str, value: impl Into<ParamValue>) {
        let loc = Location::caller();
        let decl = &self.d.insts[inst.0 as usize];
        let iname = decl.name.clone();
        let child = decl.module.clone();
        if !child.data.params.iter().any(|p| p.0 == name) {
            let names: Vec<&str> = child.data.params.iter().map(|p| p.0.as_str()).collect();
            return self.error(
                ErrorKind::PortMismatch,
                Some(&iname),
                loc,
                format!(
                    "module `{}` has no parameter `{name}`; its parameters are {}",
                    child.name(),
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                ),
            );
        }
        let decl = &mut self.d.insts[inst.0 as usize];
        if decl.params.iter().any(|p| p.0 == name) {
            return self.error(
                ErrorKind::MultiplyDriven,
                Some(&iname),
                loc,
                format!("parameter `{name}` of instance `{iname}` is set twice"),
            );
        }
        decl.params.push((name.to_string(), value.into()));
    }

    /// Writes the attribute `(* name = value *)` before instance `inst` (`value` as
    /// SystemVerilog spells it, e.g. `"\"125\""` for a string), for vendor tools.
    pub fn attr(&mut self, inst: Inst, name: &str, value: &str) {
        self.d.insts[inst.0 as usize]
            .attrs
            .push((name.to_string(), value.to_string()));
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
        self.add_reg(name, width, None, Some(reset), 0, loc)
    }

    /// A register without reset, for datapath values that are qualified by a valid bit.
    #[track_caller]
    pub fn reg_noreset(&mut self, name: &str, width: u32) -> Reg {
        self.add_reg(name, width, None, None, 0, Location::caller())
    }

    /// A register with a reset value, clocked and reset by domain `dom`.
    #[track_caller]
    pub fn reg_in(&mut self, dom: Domain, name: &str, width: u32, reset: impl Operand) -> Reg {
        let loc = Location::caller();
        let i = self.check_domain(dom, loc);
        let reset = reset.to_expr(width, loc);
        self.add_reg(name, width, None, Some(reset), i, loc)
    }

    /// A register without reset, clocked by domain `dom`.
    #[track_caller]
    pub fn reg_noreset_in(&mut self, dom: Domain, name: &str, width: u32) -> Reg {
        let loc = Location::caller();
        let i = self.check_domain(dom, loc);
        self.add_reg(name, width, None, None, i, loc)
    }

    /// An enum-typed register (a state machine's state), reset to `reset`.
    #[track_caller]
    pub fn reg_enum(&mut self, name: &str, ty: &EnumTy, reset: Expr) -> Reg {
        let loc = Location::caller();
        self.check_enum(ty, loc);
        self.add_reg(name, ty.width, Some(ty.index), Some(reset), 0, loc)
    }

    fn add_reg(
        &mut self,
        name: &str,
        width: u32,
        ty: Option<u32>,
        reset: Option<Expr>,
        dom: u32,
        loc: Loc,
    ) -> Reg {
        self.domain_clock_sig(dom, loc);
        if reset.is_some() {
            self.domain_reset_sig(dom, loc);
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
            dom,
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
        self.add_memory(name, width, depth, 0, Location::caller())
    }

    /// A memory written in domain `dom` (its write ports use `dom`'s clock); read ports may be
    /// in other domains ([`Self::mem_read_in`]): a dual-clock block RAM.
    #[track_caller]
    pub fn memory_in(&mut self, dom: Domain, name: &str, width: u32, depth: u64) -> Mem {
        let loc = Location::caller();
        let i = self.check_domain(dom, loc);
        self.add_memory(name, width, depth, i, loc)
    }

    fn add_memory(&mut self, name: &str, width: u32, depth: u64, dom: u32, loc: Loc) -> Mem {
        self.domain_clock_sig(dom, loc);
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
            dom,
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
        let dom = self
            .d
            .mems
            .get(mem.index as usize)
            .filter(|_| mem.module == self.d.id)
            .map_or(0, |m| m.dom);
        self.add_mem_read(mem, en.into(), addr.into(), dom, loc)
    }

    /// A registered read port clocked by domain `dom` (another domain than the memory's writes:
    /// the read side of a dual-clock RAM). As [`Self::mem_read`] otherwise.
    #[track_caller]
    pub fn mem_read_in(
        &mut self,
        dom: Domain,
        mem: Mem,
        en: impl Into<Expr>,
        addr: impl Into<Expr>,
    ) -> Sig {
        let loc = Location::caller();
        let i = self.check_domain(dom, loc);
        self.domain_clock_sig(i, loc);
        self.add_mem_read(mem, en.into(), addr.into(), i, loc)
    }

    fn add_mem_read(&mut self, mem: Mem, en: Expr, addr: Expr, dom: u32, loc: Loc) -> Sig {
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
            en,
            addr,
            data: s.id,
            dom,
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
    /// the clock and reset of its default domain are connected to this module's own unless
    /// [`Self::bind_domain`] says otherwise, and every other domain of it must be bound that way.
    #[track_caller]
    pub fn instance(&mut self, name: &str, module: &Rc<Module>) -> Inst {
        let loc = Location::caller();
        let ports = module.data.port_ids();
        let binds: Vec<Option<(Bind, Loc)>> = vec![None; ports.len()];
        let has_reset = ports
            .iter()
            .any(|&p| module.data.sig(p).role == Role::Reset);
        if has_reset && module.data.reset_style != self.d.reset_style {
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
        self.d.insts.push(InstDecl {
            name: name.to_string(),
            module: module.clone(),
            binds,
            dom_binds: vec![None; module.data.domains.len()],
            params: Vec::new(),
            attrs: Vec::new(),
            loc,
        });
        Inst(self.d.insts.len() as u32 - 1)
    }

    /// Clocks (and resets) the domain `child_domain` of instance `inst` (`""` for its default
    /// domain, otherwise a name given to [`Self::domain`] in the child; see
    /// [`Module::domains`]) with this module's domain `dom`: the child's registers of that
    /// domain are then registers of `dom` for the crossing checks.
    #[track_caller]
    pub fn bind_domain(&mut self, inst: Inst, child_domain: &str, dom: Domain) {
        let loc = Location::caller();
        let i = self.check_domain(dom, loc);
        let decl = &self.d.insts[inst.0 as usize];
        let child = decl.module.clone();
        let iname = decl.name.clone();
        let Some(k) = child
            .data
            .domains
            .iter()
            .position(|d| d.name == child_domain && !d.internal && d.clock.is_some())
        else {
            let names: Vec<String> = child.domains().iter().map(|n| format!("`{n}`")).collect();
            return self.error(
                ErrorKind::PortMismatch,
                Some(&iname),
                loc,
                format!(
                    "module `{}` has no clock domain `{child_domain}` with a clock port; its domains are {}",
                    child.name(),
                    names.join(", ")
                ),
            );
        };
        if self.d.insts[inst.0 as usize].dom_binds[k].is_some() {
            return self.error(
                ErrorKind::MultiplyDriven,
                Some(&iname),
                loc,
                format!("domain `{child_domain}` of instance `{iname}` is bound twice"),
            );
        }
        self.d.insts[inst.0 as usize].dom_binds[k] = Some((i, loc));
    }

    /// Binds the clock and reset ports of every domain of every instance (the default domain
    /// to this module's default domain unless bound otherwise).
    fn settle_domains(&mut self) {
        for ii in 0..self.d.insts.len() {
            let child = self.d.insts[ii].module.clone();
            let loc = self.d.insts[ii].loc;
            let ports = child.data.port_ids();
            for (k, cd) in child.data.domains.iter().enumerate() {
                if cd.internal || cd.clock.is_none() {
                    continue;
                }
                let (dom, bloc) = match self.d.insts[ii].dom_binds[k] {
                    Some(b) => b,
                    None if k == 0 => (0, loc),
                    None => {
                        let iname = self.d.insts[ii].name.clone();
                        self.error(
                            ErrorKind::UnconnectedInput,
                            Some(&iname),
                            loc,
                            format!(
                                "clock domain `{}` of instance `{iname}` (module `{}`) is not bound; use bind_domain",
                                cd.name,
                                child.name()
                            ),
                        );
                        continue;
                    }
                };
                self.d.insts[ii].dom_binds[k] = Some((dom, bloc));
                for (pi, &pid) in ports.iter().enumerate() {
                    let p = child.data.sig(pid);
                    if p.timing != Timing::Domain(k as u32) || self.d.insts[ii].binds[pi].is_some()
                    {
                        continue;
                    }
                    let sig = match p.role {
                        Role::Clock => self.domain_clock_sig(dom, bloc),
                        Role::Reset => self.domain_reset_sig(dom, bloc),
                        Role::Normal => continue,
                    };
                    self.d.insts[ii].binds[pi] = Some((Bind::In(sig_expr(sig, bloc)), bloc));
                }
            }
        }
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
        let Some(i) = ports.iter().position(|&p| {
            let s = child.data.sig(p);
            s.role == Role::Reset && s.timing == Timing::Domain(0)
        }) else {
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
            let pd = decl.module.data.sig(decl.module.data.port_ids()[i]);
            if pd.role == Role::Clock {
                let iname = decl.name.clone();
                return self.error(
                    ErrorKind::PortMismatch,
                    Some(&iname),
                    loc,
                    format!("`{port}` is a clock port; bind its domain with bind_domain"),
                );
            }
            let w = pd.width;
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
        if self.d.primitive.is_some() {
            return self.finish_primitive();
        }
        self.settle_domains();
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
        let (comb_inputs, launch) = check::check(&self.d, &mut errors);
        if errors.is_empty() {
            Ok(Rc::new(Module {
                data: self.d,
                comb_inputs,
                launch,
            }))
        } else {
            Err(Errors(errors))
        }
    }
}

impl ModuleBuilder {
    /// A primitive has no body: its port-level facts are what it declared.
    fn finish_primitive(self) -> Result<Rc<Module>, Errors> {
        let d = self.d;
        let decl = d.primitive.clone().unwrap_or_default();
        let ports = d.port_ids();
        let mut comb_inputs = vec![Vec::new(); ports.len()];
        let mut launch = vec![std::collections::BTreeSet::new(); ports.len()];
        for (pi, &p) in ports.iter().enumerate() {
            for (s, t) in &decl.launch {
                if *s == p {
                    launch[pi].insert(*t);
                }
            }
            for (s, ins) in &decl.follows {
                if *s == p {
                    comb_inputs[pi] = ins
                        .iter()
                        .filter_map(|i| ports.iter().position(|q| q == i))
                        .collect();
                }
            }
        }
        let mut errors = self.pending;
        if decl.model.is_none() {
            errors.push(Error {
                kind: ErrorKind::Invalid,
                module: d.name.clone(),
                signal: None,
                loc: d.loc,
                message: format!(
                    "primitive `{}` has no behavioural model; build one and attach it with set_model so simulation and lint can read it",
                    d.name
                ),
            });
        }
        if errors.is_empty() {
            Ok(Rc::new(Module {
                data: d,
                comb_inputs,
                launch,
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
