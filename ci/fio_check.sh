#!/usr/bin/env bash
# `testbench fio` on the simulated chip: fio's four basic workloads (read, write, randread,
# randwrite) on each transport, in fio's json+ format, each then loaded by fio's own
# fio_jsonplus_clat2csv (Debian's fio package) and validated, and compared key by key with the
# json+ real fio 3.33 writes for the same workload on its null engine (every key fio writes for a job must be
# there, with the same JSON type). A run fails on any CQE the host model rejects and on any
# Read whose data is not the namespace's (testbench fio checks both).
# Env: SIZE (bytes per run, default 256k), BS (4k), IODEPTH (16), OUT (target/fio-check).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${SIZE:-256k}
BS=${BS:-4k}
IODEPTH=${IODEPTH:-16}
OUT=${OUT:-target/fio-check}
for tool in fio fio_jsonplus_clat2csv python3; do
  command -v "$tool" >/dev/null || { echo "fio_check: $tool missing (bash ci/setup.sh installs Debian's fio)" >&2; exit 2; }
done
rm -rf "$OUT" && mkdir -p "$OUT"
cargo build -q --release -p testbench
for rw in read write randread randwrite; do
  # Real fio's json+ for the same workload on the null engine: the reference layout.
  fio --name=ref --ioengine=null --rw="$rw" --bs=4k --size=1m --iodepth=4 \
    --output-format=json+ --output="$OUT/fio-$rw.json" >/dev/null
done
for transport in roce nvme_tcp; do
  for rw in read write randread randwrite; do
    f="$OUT/$transport-$rw.json"
    target/release/testbench fio --quiet --name="$rw" --rw="$rw" --bs="$BS" --iodepth="$IODEPTH" \
      --size="$SIZE" --transport="$transport" --output-format=json+ --output="$f"
    fio_jsonplus_clat2csv "$f" "$OUT/$transport-$rw.csv" >/dev/null
    fio_jsonplus_clat2csv "$f" "$OUT/$transport-$rw.csv" --validate | grep -q validated
    python3 - "$f" "$OUT/fio-$rw.json" "$rw" "$transport" <<'EOF'
import json, sys
ours, ref, rw, transport = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]

def kind(v):
    return "number" if isinstance(v, (int, float)) and not isinstance(v, bool) else type(v).__name__

def compare(a, b, path):
    # Every key of fio's (b) must be in ours (a) with the same type; objects recursively.
    # Percentile and bin keys depend on the data, so only their presence is compared.
    if kind(a) != kind(b):
        sys.exit(f"{sys.argv[1]}: {path} is a {kind(a)}, fio writes a {kind(b)}")
    if isinstance(b, dict) and not path.endswith(("percentile", "bins", "job options")):
        for k in b:
            if k not in a:
                sys.exit(f"{sys.argv[1]}: {path}.{k} missing (fio writes it)")
            compare(a[k], b[k], f"{path}.{k}")

for k in ref:
    if k not in ours:
        sys.exit(f"{sys.argv[1]}: top-level key {k!r} missing")
job, refjob = ours["jobs"][0], ref["jobs"][0]
compare(job, refjob, "jobs[0]")
d = "read" if "read" in rw else "write"
other = "write" if d == "read" else "read"
got = job[d]
if got["total_ios"] <= 0 or got["iops"] <= 0 or got["bw_bytes"] <= 0 or job[other]["total_ios"] != 0:
    sys.exit(f"{sys.argv[1]}: {rw} moved {got['total_ios']} {d}s and {job[other]['total_ios']} {other}s")
if got["io_bytes"] != got["total_ios"] * int(job["job options"]["bs"]):
    sys.exit(f"{sys.argv[1]}: io_bytes {got['io_bytes']} is not total_ios x bs")
p = got["clat_ns"]["percentile"]
if not (p["50.000000"] <= p["99.000000"] <= p["99.900000"] <= p["99.990000"] <= got["clat_ns"]["max"]):
    sys.exit(f"{sys.argv[1]}: percentiles out of order: {p}")
chip = ours["chip"]
routed = chip["routed"]["roce" if transport == "roce" else "nvme_tcp"]
if routed != got["total_ios"]:
    sys.exit(f"{sys.argv[1]}: the chip routed {routed} commands to {transport}, fio issued {got['total_ios']}")
if chip["offloaded"] != got["total_ios"] or chip["fallback"] != 0:
    sys.exit(f"{sys.argv[1]}: nvme_csr counts {chip['offloaded']} offloaded and {chip['fallback']} fallback commands, fio issued {got['total_ios']}")
timed = sum(chip["latency_histogram_cycles"]["read" if d == "read" else "write"])
if not 0 < timed <= got["total_ios"]:
    sys.exit(f"{sys.argv[1]}: the chip's latency histogram timed {timed} of {got['total_ios']} commands")
if d == "read" and chip["reads_checked"] == 0:
    sys.exit(f"{sys.argv[1]}: no Read's data was checked")
print(f"fio_check: {transport:8} {rw:9} {got['total_ios']:4} I/Os, {got['iops']/1e3:7.1f}k IOPS, "
      f"P50 {p['50.000000']/1e3:6.2f} us, P99.99 {p['99.990000']/1e3:6.2f} us, "
      f"{chip['interrupts_per_completion']:.3f} interrupts per completion, {chip['reads_checked']} Reads checked")
EOF
  done
done
echo "fio_check: every workload ran, fio_jsonplus_clat2csv validated every json+, every key fio writes is there"
