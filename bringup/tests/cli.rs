//! The binary's exit codes and messages where no board is needed: a missing port, a command not
//! done yet (RoCE set-up), a number that is not one.

use std::process::Command;

fn bringup(args: &[&str]) -> (i32, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_bringup"))
        .args(args)
        .output()
        .expect("the binary runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

#[test]
fn a_missing_port_is_named_with_exit_code_2() {
    let (code, err) = bringup(&["--port", "/nonexistent/ttyX", "info"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("cannot open the serial port /nonexistent/ttyX"),
        "{err}"
    );
}

#[test]
fn commands_not_done_yet_say_so_with_exit_code_3() {
    let (code, err) = bringup(&[
        "--port",
        "/nonexistent/ttyX",
        "setup",
        "--local-ip",
        "10.0.0.2",
        "--target",
        "10.0.0.1",
        "--transport",
        "roce",
    ]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("only NVMe/TCP"), "{err}");
}

#[test]
fn data_commands_need_the_port_first() {
    let (code, err) = bringup(&["--port", "/nonexistent/ttyX", "write", "0", "8"]);
    assert_eq!(code, 2, "{err}");
    let (code, err) = bringup(&["--port", "/nonexistent/ttyX", "io", "--qd", "4"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_bad_number_is_refused() {
    let (code, err) = bringup(&["peek", "0xzz"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`0xzz` is not a 32-bit number"), "{err}");
}
