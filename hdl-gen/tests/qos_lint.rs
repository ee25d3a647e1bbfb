//! The QoS arbiter elaborates and is lint-clean at sizes and a reset style other than the
//! shipped ones (which `hdl-gen lint` also synthesizes): queues and namespaces not powers of
//! two, one grant entry, the smallest buffers, 16-bit counters.

use hdl_builder::{Design, ResetStyle};
use hdl_gen::qos::{arbiter::arbiter, QosParams};

#[test]
fn arbiter_is_clean() {
    let p = QosParams {
        queues: 3,
        namespaces: 1,
        grants: 1,
        queue_depth: 2,
        counter_width: 16,
    };
    let mut d = Design::new("qos");
    d.add_top(arbiter(&p, ResetStyle::SyncHigh).unwrap_or_else(|e| panic!("{e}")));
    hdl_gen::lint::assert_verilator_clean(&d);
}

fn params(queues: u32) -> QosParams {
    QosParams {
        queues,
        namespaces: 4,
        grants: 8,
        queue_depth: 4,
        counter_width: 32,
    }
}

/// Thousands of queues (issue 17): the arbiter at 1024 queues is lint-clean.
#[test]
fn arbiter_at_1024_queues_is_clean() {
    let mut d = Design::new("qos");
    d.add_top(arbiter(&params(1024), ResetStyle::AsyncLow).unwrap_or_else(|e| panic!("{e}")));
    hdl_gen::lint::assert_verilator_clean(&d);
}

/// Flip-flop bits of the arbiter at `queues` queues, the whole hierarchy flattened, memories
/// kept as memories (Yosys `proc; flatten; memory -nomap; stat -width`).
fn flip_flops(queues: u32) -> u64 {
    let mut d = Design::new("qos");
    let top = arbiter(&params(queues), ResetStyle::AsyncLow).unwrap_or_else(|e| panic!("{e}"));
    let name = top.name().to_string();
    d.add_top(top);
    let files = d
        .emit(&hdl_builder::EmitOptions {
            header: vec!["ff count".into()],
            core_name: "ff:ff:ff:0".into(),
            description: "ff".into(),
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = std::env::temp_dir().join(format!("qos-ff-{}-{queues}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut svs = Vec::new();
    for f in &files {
        let path = dir.join(&f.path);
        std::fs::write(&path, &f.contents).unwrap();
        if f.path.ends_with(".sv") {
            svs.push(f.path.clone());
        }
    }
    let script = format!(
        "read_verilog -sv {}; hierarchy -top {name}; proc; flatten; opt_clean; memory -nomap; \
         opt_clean; tee -o stat.txt stat -width",
        svs.join(" ")
    );
    let out = std::process::Command::new("yosys")
        .current_dir(&dir)
        .args(["-q", "-p", &script])
        .output()
        .expect("yosys runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stat = std::fs::read_to_string(dir.join("stat.txt")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    stat.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let cell = it.next()?;
            let count: u64 = it.next()?.parse().ok()?;
            let (kind, width) = cell.rsplit_once('_')?;
            kind.ends_with("dff").then_some(())?;
            Some(width.parse::<u64>().ok()? * count)
        })
        .sum()
}

/// Flip-flops grow by a few bits per queue: 64 and 1024 queues through Yosys (a few minutes:
/// `cargo test --release -p hdl-gen --test qos_lint -- --ignored --nocapture`).
#[test]
#[ignore]
fn flip_flops_grow_by_a_few_bits_per_queue() {
    let (a, b) = (flip_flops(64), flip_flops(1024));
    let per_queue = (b - a) as f64 / 960.0;
    println!("qos_arbiter flip-flops: {a} at 64 queues, {b} at 1024: {per_queue:.1} per queue");
    assert!(per_queue < 24.0, "{per_queue:.1} flip-flops per queue");
}
