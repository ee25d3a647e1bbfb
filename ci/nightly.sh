#!/usr/bin/env bash
# The nightly job: what does not fit in ci/test.sh's budget. Today: every mutant of
# ci/mutants.txt on its schemata model with failures shrunk for 20 s (ci/test.sh runs all but
# three, for a verdict only, unshrunk),
# the TCP engine against Linux with bridge faults (real time: a run does not replay exactly),
# the widest configuration's chip top in simulation (ci/config.sh: the chip property and bench;
# verilating its 512-bit chip top takes many minutes when the model cache does not hold it), and
# line and toggle coverage of every suite (`testbench coverage`), and the TCP/IP engine's
# benchmark (`bench --suite tcp --check`, 25 s: too long for ci/test.sh), post-synthesis
# simulation (ci/postsynth.sh, 134 s in a clean CI run), the lint tests with Yosys, mutants
# drawn from the builder's IR in every engine suite (`testbench mutate`), and 10^6 NVMe
# commands through the front end's suite (ci/regress-million.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
step() { echo "== [$(date -u +%H:%M:%S), ${SECONDS}s] $*" >&2; }
step "cargo test with Yosys on the lint tests' other parameterizations (ci/test.sh: Verilator only)"
cargo test -q --workspace
step "mutants: every entry of ci/mutants.txt"
bash ci/mutation.sh
step "tcp-linux with bridge faults (drop, duplicate, reorder up to 3 % per frame), more cases"
CASES=8 bash ci/tcp_linux_check.sh
step "tcp-linux --nvme with bridge faults: NVMe/TCP over the TCP engine against Linux, more cases"
CASES=6 NVME=1 PCAP=target/tcp-linux-nvme.pcap bash ci/tcp_linux_check.sh
step "testbench regress --suite tcp-nvme: more cases than ci/test.sh's 24"
cargo run -q --release -p testbench -- regress --suite tcp-nvme --cases 200
step "smallest configuration: the chip property on its chip top, more cases than ci/test.sh's 200"
CASES=2000 bash ci/config.sh configs/smallest.toml
step "smallest configuration: the rdma suite on its one-QP RoCE engine (tops named after configs/smallest.toml's sizes)"
TB_RTL_DIR="$PWD/target/smallest-rtl" TB_RTL_TOPS=roce_w64_q1_d1,roce_dcqcn_q1_w64 \
  cargo run -q --release -p testbench -- regress --suite rdma --cases 1500
step "testbench regress --suite rdma-long: the 13 longest RNR timers waited out exactly, more cases than ci/test.sh's one"
cargo run -q --release -p testbench -- regress --suite rdma-long --cases 6
step "widest configuration: chip property and bench on its chip top, the dma suite on its 512-bit DMA engine, the tcp suite on its 256-bit TCP/IP engine"
BENCH=1 DMA_CASES=600 TCP_CASES=400 bash ci/config.sh configs/widest.toml
step "the dma suite on the DMA engine at 128 and 256 bits (ci/test.sh: 512 with the widest configuration, 64 in rtl/)"
CASES=300 bash ci/dma-width.sh 128
CASES=300 bash ci/dma-width.sh 256
# Line and toggle coverage of every suite's regression (the case counts of ci/test.sh), each
# suite's report and the merge over the whole chip under target/coverage/ (all/ for the merge).
# The first run Verilates every driven top again with coverage (the chip top for many minutes).
step "the simulated boards with the host tool: both boards, eight blocks, two minutes of the io loop on the Colorlight"
bash ci/board_check.sh
BOARD=butterstick bash ci/board_check.sh
IO_SECONDS=120 bash ci/board_io_check.sh
BOARD=butterstick IO_SECONDS=0 bash ci/board_io_check.sh
step "post-synthesis simulation (the stdlib properties on Yosys netlists; not in ci/test.sh) and the stdlib suite with more cases than ci/test.sh's 1200"
CASES=600 bash ci/postsynth.sh
cargo run -q --release -p testbench -- regress --suite stdlib --cases 5000
step "testbench nbd: Debian's NBD clients on the simulated chip, 8 MiB over RoCE, 1 MiB over NVMe/TCP (ci/test.sh: 1 MiB, 256 KiB)"
bash ci/nbd_check.sh
SIZE=1M NBD_ARGS="--transport nvme_tcp" bash ci/nbd_check.sh
# 10^6 NVMe commands, each CQE checked by the host's golden model (ci/regress-million.sh):
# here the front end's suite (plan nvme, 5600 cases, 187 s on the development machine's two
# threads under a load of 9); the whole chip's plan (45000 cases, hours on one machine) fans out in
# .github/workflows/regress-nightly.yml or a Slurm array (ci/slurm-regress.sbatch).
# MILLION_PLAN="nvme chip" runs both here.
step "10^6 NVMe commands: ci/regress-million.sh, plan ${MILLION_PLAN:-nvme}"
PLAN="${MILLION_PLAN:-nvme}" bash ci/regress-million.sh
step "coverage: every suite, merged for the whole chip (target/coverage/all)"
cargo run -q --release -p testbench -- coverage --suite stdlib:2000 --suite dma:300 \
  --suite nvme-tcp:350 --suite qos:200 --suite rdma:1500 --suite nvme:1100 --suite chip:150 --suite tcp:300 --suite eth:1000
# Last: goal misses fail the job without keeping the steps above from running.
missed=()
step "testbench mutate: 40 mutants drawn from the builder's IR in each engine suite's tops (goal: 90 % caught per module; docs/testbench.md)"
# Each suite at ci/test.sh's case count: a mutant CI's regression would not catch survives.
for sc in dma:300 nvme:1100 qos:200 nvme-tcp:350 rdma:1500 tcp:300 eth:1000 stdlib:1200; do
  s=${sc%%:*}
  cargo run -q --release -p testbench -- mutate --suite "$s" --count 40 --cases "${sc#*:}" --shrink-secs 0 \
    || missed+=("mutate --suite $s")
done
# Its goal misses (runs the golden check stops: docs/tcp.md, "Benchmarks") fail the job too.
step "bench --suite tcp --check: the TCP/IP engine's goodput, loss, recovery, NVMe/TCP on it"
cargo run -q --release -p testbench -- bench --suite tcp --check || missed+=("bench --suite tcp --check")
if [ ${#missed[@]} -gt 0 ]; then
  step "missed: ${missed[*]}"
  exit 1
fi
step "all passed"
