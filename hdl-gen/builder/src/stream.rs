//! Ready/valid stream bundles: declared once, connected as one unit.
//!
//! A transfer happens on a cycle where both `valid` and `ready` are high. The source keeps `valid`
//! up and the payload stable until the transfer. Port names follow `<prefix>_valid_i`,
//! `<prefix>_ready_o`, `<prefix>_<field>_i` for a stream into a module, and the mirror image
//! for a stream out of it; tests and other modules bind to these names.

use crate::error::{ErrorKind, Loc};
use crate::expr::{sig_expr, Expr, Sig};
use crate::module::{Inst, ModuleBuilder};
use std::panic::Location;

/// The payload of a stream: named fields with widths, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamDef {
    fields: Vec<(String, u32)>,
}

impl StreamDef {
    /// A stream without payload (a pure handshake).
    pub fn new() -> StreamDef {
        StreamDef::default()
    }

    /// Adds a payload field.
    pub fn field(mut self, name: &str, width: u32) -> StreamDef {
        self.fields.push((name.to_string(), width));
        self
    }

    /// The payload fields, in order.
    pub fn fields(&self) -> &[(String, u32)] {
        &self.fields
    }

    /// Total payload width in bits.
    pub fn width(&self) -> u32 {
        self.fields.iter().map(|f| f.1).sum()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    /// Input port bundle: this module reads valid and payload, drives ready.
    In,
    /// Output port bundle: this module drives valid and payload, reads ready.
    Out,
    /// Internal bundle: one side is driven by a producer, the other by a consumer.
    Wire,
}

/// One stream bundle in a module: its handshake and payload signals.
#[derive(Clone, Debug)]
pub struct Stream {
    /// The prefix the bundle's signals are named with.
    pub name: String,
    /// Source has data.
    pub valid: Sig,
    /// Sink takes data.
    pub ready: Sig,
    fields: Vec<(String, Sig)>,
    side: Side,
}

impl Stream {
    /// The payload field `name`. Panics (at the caller's line) when the stream has no such field.
    #[track_caller]
    pub fn field(&self, name: &str) -> Sig {
        match self.fields.iter().find(|f| f.0 == name) {
            Some(f) => f.1,
            None => panic!(
                "stream `{}` has no field `{name}`; its fields are {}",
                self.name,
                self.fields
                    .iter()
                    .map(|f| f.0.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// The payload fields, in order.
    pub fn fields(&self) -> &[(String, Sig)] {
        &self.fields
    }

    /// `valid & ready`: a transfer happens this cycle.
    #[track_caller]
    pub fn fire(&self) -> Expr {
        let loc = Location::caller();
        let v = sig_expr(self.valid, loc);
        let r = sig_expr(self.ready, loc);
        v & r
    }
}

impl ModuleBuilder {
    /// A stream into this module: ports `<prefix>_valid_i`, `<prefix>_ready_o`, `<prefix>_<f>_i`.
    #[track_caller]
    pub fn stream_in(&mut self, prefix: &str, def: &StreamDef) -> Stream {
        let valid = self.input(&format!("{prefix}_valid_i"), 1);
        let ready = self.output(&format!("{prefix}_ready_o"), 1);
        let fields = def
            .fields
            .iter()
            .map(|(n, w)| (n.clone(), self.input(&format!("{prefix}_{n}_i"), *w)))
            .collect();
        Stream {
            name: prefix.to_string(),
            valid,
            ready,
            fields,
            side: Side::In,
        }
    }

    /// A stream out of this module: ports `<prefix>_valid_o`, `<prefix>_ready_i`, `<prefix>_<f>_o`.
    #[track_caller]
    pub fn stream_out(&mut self, prefix: &str, def: &StreamDef) -> Stream {
        let valid = self.output(&format!("{prefix}_valid_o"), 1);
        let ready = self.input(&format!("{prefix}_ready_i"), 1);
        let fields = def
            .fields
            .iter()
            .map(|(n, w)| (n.clone(), self.output(&format!("{prefix}_{n}_o"), *w)))
            .collect();
        Stream {
            name: prefix.to_string(),
            valid,
            ready,
            fields,
            side: Side::Out,
        }
    }

    /// An internal stream: wires `<prefix>_valid`, `<prefix>_ready`, `<prefix>_<f>`.
    #[track_caller]
    pub fn stream_wire(&mut self, prefix: &str, def: &StreamDef) -> Stream {
        let valid = self.wire(&format!("{prefix}_valid"), 1);
        let ready = self.wire(&format!("{prefix}_ready"), 1);
        let fields = def
            .fields
            .iter()
            .map(|(n, w)| (n.clone(), self.wire(&format!("{prefix}_{n}"), *w)))
            .collect();
        Stream {
            name: prefix.to_string(),
            valid,
            ready,
            fields,
            side: Side::Wire,
        }
    }

    fn stream_mismatch(&mut self, a: &Stream, b: &[(String, u32)], loc: Loc) -> bool {
        let fa: Vec<(String, u32)> = a
            .fields
            .iter()
            .map(|(n, s)| (n.clone(), s.width()))
            .collect();
        if fa == b {
            return false;
        }
        let show = |f: &[(String, u32)]| {
            f.iter()
                .map(|(n, w)| format!("{n}:{w}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let name = self.name().to_string();
        self.pending_error(
            ErrorKind::PortMismatch,
            Some(&a.name),
            loc,
            format!(
                "stream payloads differ: `{}` has [{}], the other side [{}] (module `{name}`)",
                a.name,
                show(&fa),
                show(b)
            ),
        );
        true
    }

    /// Connects two streams of this module as one unit: `dst` takes `src`'s valid and payload,
    /// `src` takes `dst`'s ready. `src` is an input bundle or a wire, `dst` an output bundle or a
    /// wire, and their payloads must match field for field.
    #[track_caller]
    pub fn connect(&mut self, dst: &Stream, src: &Stream) {
        let loc = Location::caller();
        if src.side == Side::Out || dst.side == Side::In {
            let msg = format!(
                "cannot connect `{}` to `{}`: the source must be an input stream or a wire, the destination an output stream or a wire",
                src.name, dst.name
            );
            return self.pending_error(ErrorKind::DrivingInput, Some(&dst.name), loc, msg);
        }
        let sf: Vec<(String, u32)> = src
            .fields
            .iter()
            .map(|(n, s)| (n.clone(), s.width()))
            .collect();
        if self.stream_mismatch(dst, &sf, loc) {
            return;
        }
        self.assign(dst.valid, sig_expr(src.valid, loc));
        self.assign(src.ready, sig_expr(dst.ready, loc));
        for ((_, d), (_, s)) in dst.fields.iter().zip(&src.fields) {
            self.assign(*d, sig_expr(*s, loc));
        }
    }

    /// Binds the stream ports `<prefix>_*` of an instance to `stream`, whichever way they point.
    #[track_caller]
    pub fn bind_stream(&mut self, inst: Inst, prefix: &str, stream: &Stream) {
        let loc = Location::caller();
        let child = self.instance_module(inst);
        let ports = child.ports();
        let find = |suffix: &str| {
            ports
                .iter()
                .find(|p| p.name == format!("{prefix}_{suffix}"))
        };
        let child_is_sink = find("valid_i").is_some();
        if !child_is_sink && find("valid_o").is_none() {
            let msg = format!("module `{}` has no stream `{prefix}` (no `{prefix}_valid_i` or `{prefix}_valid_o` port)", child.name());
            return self.pending_error(ErrorKind::PortMismatch, Some(prefix), loc, msg);
        }
        let (dir, ready_dir) = if child_is_sink {
            ("_i", "_o")
        } else {
            ("_o", "_i")
        };
        let fields: Vec<(String, u32)> = ports
            .iter()
            .filter_map(|p| {
                let rest = p
                    .name
                    .strip_prefix(&format!("{prefix}_"))?
                    .strip_suffix(dir)?;
                if rest == "valid" || rest == "ready" {
                    return None;
                }
                Some((rest.to_string(), p.width))
            })
            .collect();
        if self.stream_mismatch(stream, &fields, loc) {
            return;
        }
        let valid = format!("{prefix}_valid{dir}");
        let ready = format!("{prefix}_ready{ready_dir}");
        if child_is_sink {
            self.bind(inst, &valid, sig_expr(stream.valid, loc));
            for (n, s) in &stream.fields {
                self.bind(inst, &format!("{prefix}_{n}{dir}"), sig_expr(*s, loc));
            }
            self.bind_out_to(inst, &ready, stream.ready);
        } else {
            self.bind_out_to(inst, &valid, stream.valid);
            for (n, s) in &stream.fields {
                self.bind_out_to(inst, &format!("{prefix}_{n}{dir}"), *s);
            }
            self.bind(inst, &ready, sig_expr(stream.ready, loc));
        }
    }
}
