//! RTL calling back into Rust through DPI-C: testbench/dpi/dpi_probe.sv imports `tb_mem_read`
//! and `tb_mem_write`, implemented in Rust (`testbench::drivers::axi_mem::dpi`).

use std::cell::RefCell;
use std::rc::Rc;
use testbench::drivers::axi_mem::{dpi, AxiMemConfig, AxiMemSlave, AxiWidths, Memory};
use testbench::drivers::{axi_mem, Wires};
use testbench::rng::Rng;
use testbench::rtl::dpi_probe::DpiProbe;
use testbench::sim::Sim;

fn probe() -> Sim<DpiProbe> {
    let mut sim = Sim::<DpiProbe>::new();
    sim.reset(2);
    sim
}

/// One read through the RTL: request, then the word the RTL got from Rust.
fn rtl_read(sim: &mut Sim<DpiProbe>, addr: u32) -> u32 {
    sim.signal("addr_i").set(addr as u64);
    sim.signal("rd_i").set(1);
    sim.step();
    sim.signal("rd_i").set(0);
    assert!(sim.signal("rvalid_o").is_high());
    sim.signal("rdata_o").get() as u32
}

#[test]
fn rtl_reads_values_from_rust() {
    let mut sim = probe();
    let mem = Rc::new(RefCell::new(Memory::new()));
    let mut rng = Rng::new(3);
    let words: Vec<(u32, u32)> = (0..200)
        .map(|_| ((rng.below(1 << 20) as u32) & !3, rng.next_u64() as u32))
        .collect();
    for &(a, v) in &words {
        mem.borrow_mut().write_u32(a as u64, v);
    }
    dpi::serve(mem.clone(), |m| m);
    let calls = dpi::calls();
    for &(a, _) in &words {
        // The last value written at `a` wins (addresses may repeat).
        let want = mem.borrow().read_u32(a as u64);
        assert_eq!(rtl_read(&mut sim, a), want, "address {a:#x}");
    }
    // Rust changes the memory; the RTL sees the new value at once.
    mem.borrow_mut().write_u32(0x40, 0x1234_5678);
    assert_eq!(rtl_read(&mut sim, 0x40), 0x1234_5678);
    assert_eq!(dpi::calls() - calls, 201);
    assert_eq!(
        sim.signal("reads_o").get(),
        201,
        "one call per read in the RTL"
    );
    // The import is `context`: Rust knows which instance called.
    assert_eq!(dpi::last_scope().as_deref(), Some("TOP.dpi_probe"));
    assert!(dpi::take_errors().is_empty());
}

#[test]
fn rtl_writes_64_bit_values_into_rust() {
    let mut sim = probe();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    dpi::on_write(move |a, v| s.borrow_mut().push((a, v)));
    for (a, v) in [
        (0x10u32, 0x0123_4567_89ab_cdefu64),
        (0x18, u64::MAX),
        (0x20, 1),
    ] {
        sim.signal("addr_i").set(a as u64);
        sim.signal("wdata_i").set(v);
        sim.signal("wr_i").set(1);
        sim.step();
    }
    sim.signal("wr_i").set(0);
    sim.run(3);
    assert_eq!(
        *seen.borrow(),
        [(0x10, 0x0123_4567_89ab_cdef), (0x18, u64::MAX), (0x20, 1)]
    );
}

#[test]
fn rtl_reaches_the_axi_memory_slaves_memory() {
    // The same bytes through the AXI slave's memory and through DPI.
    let wires = Wires::new();
    axi_mem::declare(
        &wires,
        "m_axi",
        AxiWidths {
            addr: 32,
            data: 64,
            id: 0,
        },
    );
    let slave = Rc::new(RefCell::new(AxiMemSlave::new(
        &wires,
        "m_axi",
        AxiMemConfig::default(),
    )));
    slave
        .borrow_mut()
        .mem
        .write_u64(0x1000, 0xfeed_f00d_cafe_beef);
    dpi::serve(slave.clone(), |s| &mut s.mem);
    let mut sim = probe();
    assert_eq!(rtl_read(&mut sim, 0x1000), 0xcafe_beef);
    assert_eq!(rtl_read(&mut sim, 0x1004), 0xfeed_f00d);
    sim.signal("addr_i").set(0x2000);
    sim.signal("wdata_i").set(0x55);
    sim.signal("wr_i").set(1);
    sim.step();
    assert_eq!(slave.borrow().mem.read_u64(0x2000), 0x55);
}

#[test]
fn no_handler_or_a_panicking_one_is_reported_not_fatal() {
    let mut sim = probe();
    dpi::clear();
    assert_eq!(rtl_read(&mut sim, 0), dpi::POISON);
    let e = dpi::take_errors();
    assert!(e[0].contains("no handler"), "{e:?}");
    dpi::on_read(|a| {
        assert!(a < 0x100, "address {a:#x} out of range");
        a
    });
    assert_eq!(rtl_read(&mut sim, 0x20), 0x20);
    assert_eq!(rtl_read(&mut sim, 0x200), dpi::POISON);
    let e = dpi::take_errors();
    assert!(e[0].contains("out of range"), "{e:?}");
}

#[test]
fn handlers_are_per_thread() {
    dpi::on_read(|_| 1);
    let other = std::thread::spawn(|| {
        dpi::on_read(|_| 2);
        rtl_read(&mut probe(), 0)
    })
    .join()
    .unwrap();
    assert_eq!(other, 2);
    assert_eq!(rtl_read(&mut probe(), 0), 1);
}
