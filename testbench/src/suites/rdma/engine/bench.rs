//! `testbench bench --suite rdma`: throughput on the property's harness (a lossless link, no
//! idle cycles), for `cli/bench_rdma.rs`.

use super::*;

/// For `testbench bench --suite rdma`: `count` Flush commands over both QPs, a lossless link,
/// no idle cycles or backpressure, the target answering at once.
pub fn bench(count: usize) -> Result<Stats, String> {
    bench_with(
        (0..count)
            .map(|i| Cmd {
                sq: 1 + (i % 2) as u8,
                kind: 0,
                slba: 0,
                nlb: 0,
            })
            .collect(),
        2,
    )
}

/// For `testbench bench --suite rdma`: `count` Reads of `bytes` each (a multiple of 512) over
/// both QPs at path MTU `128 << code`, as [`bench`] otherwise.
pub fn bench_reads(count: usize, bytes: usize, code: u8) -> Result<Stats, String> {
    bench_with(
        (0..count)
            .map(|i| Cmd {
                sq: 1 + (i % 2) as u8,
                kind: 8,
                slba: 0,
                nlb: (bytes / 512 - 1) as u16,
            })
            .collect(),
        code - 1,
    )
}

/// For `testbench bench --suite rdma`: `count` Writes of `bytes` each (a multiple of 512)
/// over both QPs at path MTU `128 << code` (the target fetches each by RDMA READ), as
/// [`bench`] otherwise.
pub fn bench_writes(count: usize, bytes: usize, code: u8) -> Result<Stats, String> {
    bench_with(
        (0..count)
            .map(|i| Cmd {
                sq: 1 + (i % 2) as u8,
                kind: 9,
                slba: 0,
                nlb: (bytes / 512 - 1) as u16,
            })
            .collect(),
        code - 1,
    )
}

pub(super) fn bench_with(cmds: Vec<Cmd>, mtu: u8) -> Result<Stats, String> {
    let input = Input {
        cmds,
        link: Link {
            drop: 0,
            dup: 0,
            reorder: 0,
            corrupt: 0,
            truncate: 0,
            host_dup: 0,
            host_drop: 0,
            host_reorder: 0,
            host_corrupt: 0,
            blackhole: 0,
        },
        hostile: Vec::new(),
        psn: [0; 4],
        idle: [0; 4],
        mtu: [mtu; 4],
        mem_stall: 0,
        ips: 0,
        seed: 1,
    };
    run(&input, None, 512)
}
