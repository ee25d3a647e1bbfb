#!/usr/bin/env bash
# Exports a device with `testbench nbd` and has Debian's unmodified NBD clients use it:
# - nbdinfo must report the export's size;
# - fio (--ioengine=nbd, through libnbd) runs a mixed random read/write job with crc32c verify
#   and flushes, then (when the export can trim) a random trim job; fio must exit 0 and its
#   JSON output must report no error, and the I/O the job exists for;
# - nbdcopy copies a sparse random image in (WRITEs, WRITE_ZEROES for the holes, a FLUSH) and
#   back out to a file, which must equal the image.
# Each client gets a fresh server that ends by itself once the client is done (`--once`;
# fio's nbd engine connects twice per job, once for the size and once for the I/O, and the
# nbdcopy round trip needs both copies on one device: those servers take two connections). A
# server that does not exit 0 fails the check. Needs fio and libnbd-bin (bash ci/setup.sh).
#   NBD_ARGS=extra testbench nbd options (e.g. --transport nvme_tcp)
#   NBD_DEVICE=chip|mem (default chip)   SIZE=export size, K/M/G suffixes (default 8M)
#   FIO_SIZE=bytes fio's job covers (default SIZE)   RUNTIME=seconds, cap on fio's job (default 60)
#   BSSPLIT=fio's block sizes (default 512/10:4k/50:8k/20:16k/20)   IODEPTH (default 8)
#   SEED (default 1)   OUT=logs and images (default target/nbd-check)
#   START_TIMEOUT=seconds a server may take to build its device and listen (default 120)
set -euo pipefail
cd "$(dirname "$0")/.."
device=${NBD_DEVICE:-chip}
out=${OUT:-target/nbd-check}
runtime=${RUNTIME:-60}
bssplit=${BSSPLIT:-512/10:4k/50:8k/20:16k/20}
iodepth=${IODEPTH:-8}
seed=${SEED:-1}
start_timeout=${START_TIMEOUT:-120}
fail() { echo "nbd_check: $*" >&2; exit 1; }
for tool in fio nbdinfo nbdcopy python3 numfmt; do
  command -v "$tool" >/dev/null || { echo "nbd_check: $tool not found (bash ci/setup.sh installs fio and libnbd-bin)" >&2; exit 2; }
done
fio --enghelp=nbd 2>/dev/null | grep -q uri || {
  echo "nbd_check: this fio has no nbd engine (Debian's fio is built with libnbd; fio --enghelp lists the engines)" >&2; exit 2; }
size=$(numfmt --from=iec "${SIZE:-8M}")
fio_size=$(numfmt --from=iec "${FIO_SIZE:-$size}")
mkdir -p "$out"
cargo build -q --release -p testbench
bin=${CARGO_TARGET_DIR:-target}/release/testbench
# Unix socket paths are limited to 108 bytes: keep them short, under /tmp.
sockdir=$(mktemp -d /tmp/nbd-check.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$sockdir"' EXIT

# start NAME CONNECTIONS: a fresh server for one client; sets sock, uri, log, pid.
start() {
  sock=$sockdir/$1.sock
  uri="nbd+unix:///?socket=$sock"
  log=$out/$1-server.log
  local ends=(--once)
  [ "$2" -gt 1 ] && ends=(--connections "$2")
  # shellcheck disable=SC2086 # NBD_ARGS: extra server options, split on spaces.
  "$bin" nbd --device "$device" --size "$size" --seed "$seed" --socket "$sock" "${ends[@]}" ${NBD_ARGS:-} >"$log" 2>&1 &
  pid=$!
  for _ in $(seq $((start_timeout * 10))); do
    [ -S "$sock" ] && return 0
    if ! kill -0 "$pid" 2>/dev/null; then
      local rc=0
      wait "$pid" || rc=$?
      pid=
      cat "$log" >&2
      fail "the $1 server exited with $rc before listening (its log is above)"
    fi
    sleep 0.1
  done
  cat "$log" >&2
  fail "the $1 server did not come up on $sock within $start_timeout s (its log is above; START_TIMEOUT)"
}

# finish NAME: the server must end by itself (within a minute of its last client), with exit
# code 0; prints its summary lines.
finish() {
  local rc=0
  for _ in $(seq 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    cat "$log" >&2
    fail "the $1 server still waits for a connection after its client ended (fewer connections than expected?)"
  fi
  wait "$pid" || rc=$?
  pid=
  sed -n 's/^nbd: \(client\|protocol\|device\)/  server: \1/p' "$log"
  [ "$rc" -eq 0 ] || { cat "$log" >&2; fail "the $1 server exited with $rc (its log is above)"; }
}

SECONDS=0
echo "nbd_check: device $device, export $size bytes, fio over $fio_size bytes (runtime cap ${runtime}s)"

# nbdinfo: the size, and what the export carries (the fio trim job needs trim).
start nbdinfo 1
nbdinfo --json "$uri" >"$out/nbdinfo.json" || { cat "$log" >&2; fail "nbdinfo failed"; }
finish nbdinfo
python3 - "$out/nbdinfo.json" "$size" <<'EOF' || exit 1
import json, sys
e = json.load(open(sys.argv[1]))["exports"][0]
want = int(sys.argv[2])
print(f"nbdinfo: export {e['export-name']!r}, {e['export-size']} bytes, blocks {e['block_size_minimum']}/"
      f"{e['block_size_preferred']}/{e['block_size_maximum']}, flush {e['can_flush']}, fua {e['can_fua']}, "
      f"trim {e['can_trim']}, zero {e['can_zero']}")
if e["export-size"] != want:
    sys.exit(f"nbd_check: nbdinfo reports {e['export-size']} bytes, the server was started with {want}")
EOF
can_trim=$(python3 -c 'import json, sys; print(int(json.load(open(sys.argv[1]))["exports"][0]["can_trim"]))' "$out/nbdinfo.json")
# nbdcopy (libnbd 1.14) sends 256 KiB requests whatever the export's maximum block size says;
# it is told the maximum.
max_request=$(python3 -c 'import json, sys; print(min(262144, json.load(open(sys.argv[1]))["exports"][0]["block_size_maximum"]))' "$out/nbdinfo.json")
echo "nbd_check: nbdinfo passed (${SECONDS}s)"

# run_fio NAME JOB-OPTIONS...: one fio job against a fresh server; fio must exit 0 and its
# JSON report no error.
run_fio() {
  local name=$1 rc=0
  shift
  start "fio-$name" 2
  fio --ioengine=nbd --uri="$uri" --output-format=json --output="$out/fio-$name.json" \
    --name="$name" "$@" 2>"$out/fio-$name.err" || rc=$?
  cat "$out/fio-$name.err" >&2
  if [ "$rc" -ne 0 ]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=
    cat "$log" >&2
    fail "fio $name exited with $rc: a verify failure or an I/O error (fio's messages and the server's log are above; $out/fio-$name.json)"
  fi
  finish "fio-$name"
  python3 - "$out/fio-$name.json" <<'EOF' || fail "fio $name reported errors ($out/fio-$name.json)"
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
r, w, t = j["read"], j["write"], j["trim"]
print(f"fio {j['jobname']}: error {j['error']}; read {r['io_bytes']} bytes in {r['total_ios']} I/Os, "
      f"write {w['io_bytes']} bytes in {w['total_ios']} I/Os, trim {t['io_bytes']} bytes in {t['total_ios']} I/Os, "
      f"{j['sync']['total_ios']} flushes; {r['iops']:.0f} read IOPS, {w['iops']:.0f} write IOPS, "
      f"{t['iops']:.0f} trim IOPS in {j['job_runtime']} ms")
ios = {"randrw": r["total_ios"] and w["total_ios"], "trim": t["total_ios"]}[j["jobname"]]
if j["error"] != 0 or not ios:
    sys.exit(f"fio {j['jobname']}: error {j['error']}, or none of the I/O the job exists for")
EOF
  echo "nbd_check: fio $name passed (${SECONDS}s)"
}

# fio: mixed random reads and writes with crc32c verify and a flush every 16 writes; then
# random trims when the export can trim.
run_fio randrw --rw=randrw --bssplit="$bssplit" --iodepth="$iodepth" --size="$fio_size" \
  --runtime="$runtime" --fsync=16 --verify=crc32c --verify_fatal=1 --verify_state_save=0
if [ "$can_trim" = 1 ]; then
  run_fio trim --rw=randtrim --bs=64k --iodepth="$iodepth" --size="$fio_size" --runtime="$runtime"
fi

# nbdcopy: a sparse random image in, the export back out, compared.
img=$out/image.bin
rm -f "$img" "$out/copy.bin"
truncate -s "$size" "$img"
python3 - "$img" "$size" "$seed" <<'EOF'
import random, sys
path, size, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
with open(path, "r+b") as f:
    # Random runs of data between holes: nbdcopy writes the data and zeroes the holes.
    at = 0
    while at < size:
        n = min(size - at, rng.choice([4096, 65536, 300 * 1024, 1 << 20]))
        if rng.random() < 0.6:
            f.seek(at)
            f.write(rng.randbytes(n))
        at += n
EOF
start nbdcopy 2
nbdcopy --request-size="$max_request" --flush "$img" "$uri" || fail "nbdcopy into the export failed"
nbdcopy --request-size="$max_request" "$uri" "$out/copy.bin" || fail "nbdcopy out of the export failed"
finish nbdcopy
cmp "$img" "$out/copy.bin" || fail "the export's contents differ from the image copied in ($img, $out/copy.bin)"
echo "nbd_check: nbdcopy passed (${SECONDS}s)"
echo "nbd_check: passed (device $device, ${SECONDS}s)"
