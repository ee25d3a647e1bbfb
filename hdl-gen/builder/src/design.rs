//! A design: the top modules, everything they instantiate, and the files they are emitted to.

use crate::binding;
use crate::emit::module_body;
use crate::error::{Error, ErrorKind, Errors};
use crate::module::Module;
use std::collections::BTreeMap;
use std::rc::Rc;

/// One emitted file, relative to the output folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutFile {
    /// Path relative to the output folder, with `/` separators.
    pub path: String,
    /// The file's full text.
    pub contents: String,
}

/// How a design is written out.
#[derive(Clone, Debug)]
pub struct EmitOptions {
    /// Comment lines put at the top of every file (generator version, configuration hash).
    pub header: Vec<String>,
    /// FuseSoC VLNV of the generated IP, e.g. `nvmeof:chip:default:0.1.0`.
    pub core_name: String,
    /// One-line description for the `.core` file.
    pub description: String,
}

/// The modules to emit: tops, and (found through instances) everything below them.
pub struct Design {
    name: String,
    tops: Vec<Rc<Module>>,
}

impl Design {
    /// An empty design; `name` names the file list and the `.core` file.
    pub fn new(name: &str) -> Design {
        Design {
            name: name.to_string(),
            tops: Vec::new(),
        }
    }

    /// Adds a top module: it gets its own Rust binding for the testbench.
    pub fn add_top(&mut self, m: Rc<Module>) {
        self.tops.push(m);
    }

    /// The top modules, in the order added.
    pub fn tops(&self) -> &[Rc<Module>] {
        &self.tops
    }

    /// Every module, children before parents, each name once. Two different modules with one
    /// name are an error.
    pub fn modules(&self) -> Result<Vec<Rc<Module>>, Errors> {
        let mut order: Vec<Rc<Module>> = Vec::new();
        let mut errors = Vec::new();
        fn visit(m: &Rc<Module>, order: &mut Vec<Rc<Module>>, errors: &mut Vec<Error>) {
            for c in m.children() {
                visit(&c, order, errors);
            }
            if let Some(prev) = order.iter().find(|o| o.name() == m.name()) {
                if !Rc::ptr_eq(prev, m) && !prev.same_as(m) {
                    errors.push(Error {
                        kind: ErrorKind::NameCollision,
                        module: m.name().to_string(),
                        signal: None,
                        loc: m.data.loc,
                        message: format!(
                            "two different modules are named `{}` (the other built at {}:{}); encode the parameters in the name",
                            m.name(),
                            prev.data.loc.file(),
                            prev.data.loc.line()
                        ),
                    });
                }
                return;
            }
            order.push(m.clone());
        }
        for t in &self.tops {
            visit(t, &mut order, &mut errors);
        }
        let styles: Vec<_> = order
            .iter()
            .filter(|m| !m.is_primitive())
            .map(|m| m.reset_style())
            .collect();
        if let Some(m) = order
            .iter()
            .find(|m| !m.is_primitive() && m.reset_style() != styles[0])
        {
            errors.push(Error {
                kind: ErrorKind::Invalid,
                module: m.name().to_string(),
                signal: None,
                loc: m.data.loc,
                message: format!(
                    "reset style {:?} differs from the design's {:?}; a design has one reset style",
                    m.reset_style(),
                    styles[0]
                ),
            });
        }
        if errors.is_empty() {
            Ok(order)
        } else {
            Err(Errors(errors))
        }
    }

    /// The behavioural models of the vendor primitives the design instantiates, each once.
    pub fn models(&self) -> Result<Vec<Rc<Module>>, Errors> {
        let mut out: Vec<Rc<Module>> = Vec::new();
        for m in self.modules()? {
            if let Some(model) = m.model() {
                if !out.iter().any(|o| o.name() == model.name()) {
                    out.push(model);
                }
            }
        }
        Ok(out)
    }

    /// Emits every file: `<module>.sv` for each module (none for a vendor primitive: synthesis
    /// has it in its cell library; its behavioural model goes to `models/<primitive>.sv`, for
    /// simulation and lint only, and is left out of the file list), `<top>.rs` and `<top>_shim.cpp` for each
    /// top, the file list `<design>.f` and the FuseSoC core `<design>.core`. Sorted by path.
    pub fn emit(&self, opts: &EmitOptions) -> Result<Vec<OutFile>, Errors> {
        let modules = self.modules()?;
        let mut files: BTreeMap<String, String> = BTreeMap::new();
        let header = |prefix: &str| -> String {
            let mut h = String::new();
            for l in &opts.header {
                h.push_str(prefix);
                if !l.is_empty() {
                    h.push(' ');
                    h.push_str(l);
                }
                h.push('\n');
            }
            h
        };
        let models = self.models()?;
        for m in modules.iter().filter(|m| !m.is_primitive()).chain(&models) {
            let mut text = header("//");
            text.push_str("//\n");
            let is_model = models.iter().any(|x| Rc::ptr_eq(x, m));
            if is_model {
                text.push_str(&format!(
                    "// Behavioural model of the vendor primitive `{}`, for simulation and lint only:\n// synthesis uses the vendor's cell.\n",
                    m.name()
                ));
            }
            text.push_str(&module_body(m));
            files.insert(m.file_name(is_model), text);
        }
        for t in &self.tops {
            let mut rs = header("//");
            rs.push_str(&binding::rust(t));
            files.insert(format!("{}.rs", t.name()), rs);
            let mut cpp = header("//");
            cpp.push_str(&binding::shim(t));
            files.insert(format!("{}_shim.cpp", t.name()), cpp);
        }
        let mut flist = header("//");
        for m in modules.iter().filter(|m| !m.is_primitive()) {
            flist.push_str(&format!("{}.sv\n", m.name()));
        }
        files.insert(format!("{}.f", self.name), flist);
        files.insert(
            format!("{}.core", self.name),
            core_file(opts, &modules, &models, &self.tops),
        );
        Ok(files
            .into_iter()
            .map(|(path, contents)| OutFile { path, contents })
            .collect())
    }
}

fn core_file(
    opts: &EmitOptions,
    modules: &[Rc<Module>],
    models: &[Rc<Module>],
    tops: &[Rc<Module>],
) -> String {
    let mut s = String::from("CAPI=2:\n");
    for l in &opts.header {
        s.push('#');
        if !l.is_empty() {
            s.push(' ');
            s.push_str(l);
        }
        s.push('\n');
    }
    s.push_str(&format!("name: \"{}\"\n", opts.core_name));
    s.push_str(&format!("description: \"{}\"\n\n", opts.description));
    s.push_str("filesets:\n  rtl:\n    file_type: systemVerilogSource\n    files:\n");
    for m in modules.iter().filter(|m| !m.is_primitive()) {
        s.push_str(&format!("      - {}.sv\n", m.name()));
    }
    let lint_sets = if models.is_empty() {
        "[rtl]"
    } else {
        s.push_str("  models:\n    file_type: systemVerilogSource\n    files:\n");
        for m in models {
            s.push_str(&format!("      - models/{}.sv\n", m.name()));
        }
        "[models, rtl]"
    };
    s.push_str("\ntargets:\n  default:\n    filesets: [rtl]\n");
    for t in tops {
        s.push_str(&format!(
            "\n  lint_{0}:\n    default_tool: verilator\n    filesets: {lint_sets}\n    toplevel: {0}\n    tools:\n      verilator:\n        mode: lint-only\n        verilator_options: [-Wall]\n",
            t.name()
        ));
    }
    s
}
