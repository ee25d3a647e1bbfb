//! The `hdl-gen` command: deterministic output, current rtl/, and bad configurations that stop
//! with a message naming the file, the key and the allowed range, writing nothing.

mod common;

use common::{root, Scratch};
use std::path::Path;
use std::process::{Command, Output};

fn hdl_gen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hdl-gen"))
        .args(args)
        .output()
        .expect("hdl-gen runs")
}

/// Every file under `dir` (`models/` included, as `models/<name>`) with its bytes, by name.
fn read_dir_sorted(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().to_string();
        if e.path().is_dir() {
            for (n, b) in read_dir_sorted(&e.path()) {
                v.push((format!("{name}/{n}"), b));
            }
        } else {
            v.push((name, std::fs::read(e.path()).unwrap()));
        }
    }
    v.sort();
    v
}

#[test]
fn emit_into_an_empty_folder_matches_rtl() {
    let s = Scratch::new("emit");
    let out = s.path().join("rtl");
    let o = hdl_gen(&["emit", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let emitted = read_dir_sorted(&out);
    let committed: Vec<_> = read_dir_sorted(&root().join("rtl"))
        .into_iter()
        .filter(|(n, _)| !n.starts_with('.'))
        .collect();
    let names = |v: &[(String, Vec<u8>)]| v.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&emitted), names(&committed));
    for ((n, a), (_, b)) in emitted.iter().zip(&committed) {
        assert!(a == b, "{n} differs from rtl/{n}: run `hdl-gen emit`");
    }
}

#[test]
fn emit_is_deterministic() {
    let s = Scratch::new("determinism");
    let a = s.path().join("a");
    let b = s.path().join("b");
    assert!(hdl_gen(&["emit", "--out", a.to_str().unwrap()])
        .status
        .success());
    assert!(hdl_gen(&["emit", "--out", b.to_str().unwrap()])
        .status
        .success());
    assert_eq!(read_dir_sorted(&a), read_dir_sorted(&b));
}

fn bad_config(name: &str, from: &str, to: &str) -> (String, bool, Scratch) {
    let s = Scratch::new(name);
    let text = std::fs::read_to_string(root().join("configs/default.toml")).unwrap();
    assert!(text.contains(from), "default config lacks `{from}`");
    let cfg = s.path().join(format!("{name}.toml"));
    std::fs::write(&cfg, text.replacen(from, to, 1)).unwrap();
    let out = s.path().join("out");
    let o = hdl_gen(&[
        "emit",
        "--config",
        cfg.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "a bad configuration exits with 2");
    let wrote = out.exists();
    (String::from_utf8_lossy(&o.stderr).to_string(), wrote, s)
}

#[test]
fn unknown_key_is_named_and_nothing_is_written() {
    let (msg, wrote, _s) = bad_config(
        "unknown",
        "doorbell_stride = 0",
        "doorbell_stride = 0\nqueue_magic = 3",
    );
    assert!(!wrote, "nothing may be written");
    assert!(msg.contains("unknown.toml"), "{msg}");
    assert!(msg.contains("nvme.queue_magic"), "{msg}");
    assert!(msg.contains("unknown field `queue_magic`"), "{msg}");
}

#[test]
fn value_past_the_nvme_limit() {
    let (msg, wrote, _s) = bad_config("deep", "max_queue_depth = 1024", "max_queue_depth = 70000");
    assert!(!wrote);
    assert!(
        msg.contains("deep.toml: nvme.max_queue_depth: 70000"),
        "{msg}"
    );
    assert!(msg.contains("allowed 2 to 65536"), "{msg}");
}

#[test]
fn depth_not_a_power_of_two() {
    let (msg, wrote, _s) = bad_config("pow2", "max_queue_depth = 1024", "max_queue_depth = 1000");
    assert!(!wrote);
    assert!(
        msg.contains("nvme.max_queue_depth: 1000 is not a power of two"),
        "{msg}"
    );
}

#[test]
fn qos_keys_are_checked() {
    let (msg, wrote, _s) = bad_config("qdepth", "queue_depth = 4", "queue_depth = 3");
    assert!(!wrote);
    assert!(
        msg.contains("qos.queue_depth: 3 is not allowed; use 2, 4, 8 or 16"),
        "{msg}"
    );
    let (msg, wrote, _s) = bad_config("qqueues", "\nqueues = 64", "\nqueues = 4097");
    assert!(!wrote);
    assert!(
        msg.contains("qos.queues: 4097 is out of range; allowed 2 to 4096"),
        "{msg}"
    );
}

#[test]
fn roce_keys_are_checked() {
    let (msg, wrote, _s) = bad_config("rmtu", "mtu = 4096", "mtu = 1500");
    assert!(!wrote);
    assert!(
        msg.contains("roce.mtu: 1500 is not allowed; use 256, 512, 1024, 2048 or 4096"),
        "{msg}"
    );
    let (msg, wrote, _s) = bad_config("rqps", "qps = 2", "qps = 9");
    assert!(!wrote);
    assert!(
        msg.contains("roce.qps: 9 is out of range; allowed 1 to 8"),
        "{msg}"
    );
}

#[test]
fn hold_buffer_is_checked() {
    let (msg, wrote, _s) = bad_config("hold", "c2h_hold_bytes = 8192", "c2h_hold_bytes = 6000");
    assert!(!wrote);
    assert!(
        msg.contains("nvme_tcp.c2h_hold_bytes: 6000 is not allowed; use a power of two"),
        "{msg}"
    );
    let (msg, wrote, _s) = bad_config("hold8", "c2h_hold_bytes = 8192", "c2h_hold_bytes = 8");
    assert!(!wrote);
    assert!(
        msg.contains("nvme_tcp.c2h_hold_bytes: 8 is not allowed"),
        "{msg}"
    );
}

#[test]
fn in_capsule_size_is_checked() {
    for (tag, bad) in [("icd", "4100"), ("icdbig", "65552")] {
        let (msg, wrote, _s) = bad_config(
            tag,
            "in_capsule_bytes = 4096",
            &format!("in_capsule_bytes = {bad}"),
        );
        assert!(!wrote);
        assert!(
            msg.contains(&format!("nvme_tcp.in_capsule_bytes: {bad} is not allowed")),
            "{msg}"
        );
    }
}

#[test]
fn zero_width() {
    let (msg, wrote, _s) = bad_config("zero", "skid_buffer_width = 64", "skid_buffer_width = 0");
    assert!(!wrote);
    assert!(
        msg.contains("stdlib.skid_buffer_width: 0 is out of range; allowed 1 to 1024"),
        "{msg}"
    );
}

#[test]
fn wrong_type_names_the_key() {
    let (msg, wrote, _s) = bad_config("type", "reset = \"async_low\"", "reset = \"sometimes\"");
    assert!(!wrote);
    assert!(msg.contains("chip.reset"), "{msg}");
}

#[test]
fn missing_config_file() {
    let o = hdl_gen(&[
        "emit",
        "--config",
        "/nonexistent/x.toml",
        "--out",
        "/nonexistent/out",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let msg = String::from_utf8_lossy(&o.stderr);
    assert!(
        msg.contains("/nonexistent/x.toml: cannot read the configuration"),
        "{msg}"
    );
}

#[test]
fn check_names_stale_and_extra_files() {
    let s = Scratch::new("check");
    let dir = s.path().join("rtl");
    assert!(hdl_gen(&["emit", "--out", dir.to_str().unwrap()])
        .status
        .success());
    let o = hdl_gen(&["check", "--dir", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let sv = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "sv"))
        .unwrap();
    let mut text = std::fs::read_to_string(&sv).unwrap();
    text.push_str("// hand edit\n");
    std::fs::write(&sv, text).unwrap();
    std::fs::write(
        dir.join("old_block.sv"),
        "// Generated by hdl-gen 0.0.1 from configuration `x`.\nmodule old_block; endmodule\n",
    )
    .unwrap();
    let o = hdl_gen(&["check", "--dir", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let msg = String::from_utf8_lossy(&o.stderr);
    let name = sv.file_name().unwrap().to_string_lossy();
    assert!(msg.contains(&format!("differs: {name}")), "{msg}");
    assert!(msg.contains("no longer generated: old_block.sv"), "{msg}");

    // emit repairs both: rewrites the edited file and removes the stale generated one.
    assert!(hdl_gen(&["emit", "--out", dir.to_str().unwrap()])
        .status
        .success());
    assert!(!dir.join("old_block.sv").exists());
    assert!(hdl_gen(&["check", "--dir", dir.to_str().unwrap()])
        .status
        .success());
}

#[test]
fn emit_keeps_files_it_did_not_generate() {
    let s = Scratch::new("keep");
    let dir = s.path().join("rtl");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    assert!(hdl_gen(&["emit", "--out", dir.to_str().unwrap()])
        .status
        .success());
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "mine"
    );
}
