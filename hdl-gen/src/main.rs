use hdl_builder::{Design, EmitOptions};
fn main() {
    let mut d = Design::new("t");
    let sb = hdl_gen::blocks::skid_buffer::skid_buffer(8, hdl_builder::ResetStyle::AsyncLow).unwrap_or_else(|e| panic!("{e}"));
    let it = hdl_gen::blocks::interval_timer::interval_timer(8, hdl_builder::ResetStyle::AsyncLow).unwrap_or_else(|e| panic!("{e}"));
    d.add_top(sb); d.add_top(it);
    let files = d.emit(&EmitOptions{header: vec!["hdr".into()], core_name: "a:b:c:0.1".into(), description: "x".into()}).unwrap();
    std::fs::create_dir_all("/tmp/out").unwrap();
    for f in files { std::fs::write(format!("/tmp/out/{}", f.path), f.contents).unwrap(); }
}
