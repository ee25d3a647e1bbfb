#!/usr/bin/env bash
# `testbench bench --suite tcp` on another configuration's TCP/IP engine:
# `bash ci/bench-tcp.sh configs/jumbo.toml [bench arguments]` (its 32 KiB buffers hold more
# than one MSS 8960 segment each way; the shipped 8 KiB ones hold one). Emits CONFIG to
# target/<stem>-rtl, builds the release testbench with the TCP top taken from there (TB_RTL_DIR
# + TB_RTL_TOPS: it takes the place of rtl/'s TCP top in the tcp suite; every other top comes
# from rtl/ and the model cache), and runs the bench, which reads the buffers from the
# engine's `params` CSR. It leaves target/release/testbench built against that top; the next
# plain `cargo build --release -p testbench` rebuilds the testbench crate against rtl/.
set -euo pipefail
cd "$(dirname "$0")/.."
step() { echo "== [$(date -u +%H:%M:%S), ${SECONDS}s] $*" >&2; }
config=${1:?usage: ci/bench-tcp.sh CONFIG.toml [bench arguments]}
shift
stem=$(basename "$config" .toml)
out=target/$stem-rtl
step "emit $config to $out"
cargo run -q -p hdl-gen -- emit --config "$config" --out "$out"
tops=("$out"/tcp_w*.sv)
if [ "${#tops[@]}" != 1 ] || [ ! -f "${tops[0]}" ]; then
  echo "ci/bench-tcp.sh: $out holds ${#tops[@]} TCP/IP engine tops (tcp_w*.sv), want one" >&2
  exit 1
fi
top=$(basename "${tops[0]}" .sv)
step "release testbench with the $stem TCP/IP engine ($top from $out)"
TB_RTL_DIR="$PWD/$out" TB_RTL_TOPS="$top" cargo build --release -q -p testbench
step "bench --suite tcp on $top"
target/release/testbench bench --suite tcp "$@"
step "$stem: bench done"
