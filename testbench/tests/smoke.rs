use testbench::drivers::stream::{StreamSink, StreamSource};
use testbench::rtl::skid_buffer_w64::SkidBufferW64;
use testbench::sim::Sim;

#[test]
fn skid_buffer_passes_words_in_order() {
    let mut sim = Sim::<SkidBufferW64>::new();
    let src = sim.add(StreamSource::new(&sim, "s", &["data"], 1, 30));
    let sink = sim.add(StreamSink::new(&sim, "m", &["data"], 2, 30));
    sim.reset(3);
    for i in 0..1000u64 {
        src.borrow_mut().push(vec![i * 0x1234_5678_9abc]);
    }
    sim.run_until("1000 words out", 10_000, |_| {
        sink.borrow().received.len() == 1000
    })
    .unwrap();
    let got: Vec<u64> = sink.borrow().received.iter().map(|w| w.1[0]).collect();
    let want: Vec<u64> = (0..1000u64).map(|i| i * 0x1234_5678_9abc).collect();
    assert_eq!(got, want);
    assert!(sink.borrow().violations.is_empty());
}
