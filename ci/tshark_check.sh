#!/usr/bin/env bash
# Records an nvme-tcp regression as a pcap (`regress --pcap`) and has Wireshark's own dissector
# check it: every PDU the testbench recorded must be dissected as NVMe/TCP, every header and
# data digest must be Good (-o nvme-tcp.check_hdgst/check_ddgst), IPv4 and TCP checksums must
# verify, and no frame may be malformed. Needs tshark (ci/setup.sh installs it).
#   CASES=N (default 60) PCAP=FILE (default target/nvme-tcp.pcap)
set -euo pipefail
cd "$(dirname "$0")/.."
cases=${CASES:-60}
pcap=${PCAP:-target/nvme-tcp.pcap}
command -v tshark >/dev/null || { echo "tshark_check: tshark not found (bash ci/setup.sh)" >&2; exit 2; }
log=$(cargo run -q --release -p testbench -- regress --suite nvme-tcp --cases "$cases" --pcap "$pcap" 2>&1) || {
  echo "$log" >&2; echo "tshark_check: the regression failed" >&2; exit 1; }
pdus=$(echo "$log" | sed -n 's/^pcap: [0-9]* frames holding \([0-9]*\) NVMe\/TCP PDUs.*/\1/p')
[ -n "$pdus" ] && [ "$pdus" -gt 0 ] || { echo "$log" >&2; echo "tshark_check: nothing recorded" >&2; exit 1; }
opts=(-o nvme-tcp.check_hdgst:TRUE -o nvme-tcp.check_ddgst:TRUE -o tcp.check_checksum:TRUE -o ip.check_checksum:TRUE)
# One line per PDU: type, header digest status, data digest status (1 Good, 0 Bad).
fields=$(tshark -r "$pcap" "${opts[@]}" -T fields -E occurrence=a -E aggregator=';' \
  -e nvme-tcp.type -e nvme-tcp.hdgst.status -e nvme-tcp.ddgst.status)
count() { echo "$fields" | cut -f"$1" | tr ';' '\n' | grep -c "^$2\$" || true; }
dissected=$(echo "$fields" | cut -f1 | tr ';' '\n' | grep -c . || true)
hgood=$(count 2 1); hbad=$(count 2 0); dgood=$(count 3 1); dbad=$(count 3 0)
# Host writes: R2Ts (type 9) and H2CData (type 6), with their digests.
r2ts=$(count 1 9); h2cs=$(count 1 6)
h2c_dgood=$(tshark -r "$pcap" "${opts[@]}" -Y 'nvme-tcp.type == 6 && nvme-tcp.ddgst.status == 1' | wc -l)
bad=$(tshark -r "$pcap" "${opts[@]}" -Y '_ws.malformed || _ws.expert.severity == "Error" || ip.checksum.status == "Bad" || tcp.checksum.status == "Bad"' | wc -l)
echo "tshark_check: $pdus PDUs recorded, $dissected dissected as NVMe/TCP; header digests $hgood good $hbad bad; data digests $dgood good $dbad bad; $r2ts R2T, $h2cs H2CData ($h2c_dgood frames with H2CData and a Good data digest); $bad malformed or error frames ($pcap)"
fail=0
[ "$dissected" -eq "$pdus" ] || { echo "tshark_check: tshark dissected $dissected PDUs, the testbench recorded $pdus" >&2; fail=1; }
[ "$hbad" -eq 0 ] && [ "$dbad" -eq 0 ] || { echo "tshark_check: bad digests" >&2; fail=1; }
[ "$hgood" -gt 0 ] && [ "$dgood" -gt 0 ] || { echo "tshark_check: no digests were checked" >&2; fail=1; }
[ "$r2ts" -gt 0 ] && [ "$h2cs" -gt 0 ] && [ "$h2c_dgood" -gt 0 ] || { echo "tshark_check: no host write (R2T, H2CData with a data digest) was checked" >&2; fail=1; }
[ "$bad" -eq 0 ] || { tshark -r "$pcap" "${opts[@]}" -Y '_ws.malformed || _ws.expert.severity == "Error"' | head >&2; fail=1; }
[ "$fail" -eq 0 ] && echo "tshark_check: passed"
exit "$fail"
