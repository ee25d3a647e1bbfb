#!/usr/bin/env bash
# Records an rdma regression as a pcap (`regress --pcap`: every RoCEv2 frame of both
# directions, as its end sent it) and has the real tools check it: tshark must dissect every
# frame as InfiniBand over UDP 4791 (RoCEv2) with no malformed or error frame and good IPv4
# header checksums, and every ICRC must be the one scapy's scapy.contrib.roce computes (scapy
# pinned, installed from PyPI into target/roce-venv on first use). Needs tshark and python3
# with venv (ci/setup.sh installs them).
#   CASES=N (default 40) PCAP=FILE (default target/rdma.pcap)
set -euo pipefail
cd "$(dirname "$0")/.."
cases=${CASES:-40}
pcap=${PCAP:-target/rdma.pcap}
venv=target/roce-venv
command -v tshark >/dev/null || { echo "roce_check: tshark not found (bash ci/setup.sh)" >&2; exit 2; }
if ! "$venv/bin/python" -c 'import scapy.contrib.roce' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q 'scapy==2.8.0'
fi
log=$(cargo run -q --release -p testbench -- regress --suite rdma --cases "$cases" --pcap "$pcap" 2>&1) || {
  echo "$log" >&2; echo "roce_check: the regression failed" >&2; exit 1; }
frames=$(echo "$log" | sed -n 's/^pcap: \([0-9]*\) RoCEv2 Ethernet frames.*/\1/p')
[ -n "$frames" ] && [ "$frames" -gt 0 ] || { echo "$log" >&2; echo "roce_check: nothing recorded" >&2; exit 1; }
opts=(-o ip.check_checksum:TRUE)
total=$(tshark -r "$pcap" "${opts[@]}" | wc -l)
roce=$(tshark -r "$pcap" "${opts[@]}" -Y 'infiniband && udp.dstport == 4791' | wc -l)
bad=$(tshark -r "$pcap" "${opts[@]}" -Y '_ws.malformed || _ws.expert.severity == "Error" || ip.checksum.status == "Bad"' | wc -l)
# Command capsules with in-capsule data: SEND Only longer than the 122 bytes of an SQE alone.
icd=$(tshark -r "$pcap" "${opts[@]}" -Y 'infiniband.bth.opcode == 4 && frame.len > 122' | wc -l)
echo "roce_check: $frames frames recorded, tshark read $total, $roce dissected as RoCEv2 (InfiniBand over UDP 4791), $bad malformed or error frames, $icd capsules with in-capsule data ($pcap)"
fail=0
[ "$icd" -gt 0 ] || { echo "roce_check: no capsule with in-capsule data was recorded (raise CASES)" >&2; fail=1; }
[ "$total" -eq "$frames" ] && [ "$roce" -eq "$frames" ] || { echo "roce_check: not every frame was dissected as RoCEv2" >&2; fail=1; }
[ "$bad" -eq 0 ] || { tshark -r "$pcap" "${opts[@]}" -Y '_ws.malformed || _ws.expert.severity == "Error"' | head >&2; fail=1; }
"$venv/bin/python" ci/roce_icrc.py "$pcap" || fail=1
[ "$fail" -eq 0 ] && echo "roce_check: passed"
exit "$fail"
