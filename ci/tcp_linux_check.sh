#!/usr/bin/env bash
# The TCP/IP engine against the Linux kernel's TCP/IP over a TAP device (`testbench tcp-linux`,
# as root: each case makes its own network namespace), then Wireshark's dissectors check the
# capture of the TAP: no malformed frame, no expert error, IPv4, ICMP and TCP checksums good.
# Prints what tshark counted (TCP segments, retransmissions it saw, ARP, echo requests and replies).
# NVME=1: `tcp-linux --nvme` (NVMe/TCP Reads and Writes over the engine, the target model on the
# kernel's sockets); the capture must then hold NVMe/TCP PDUs that Wireshark dissects (no pings).
# A retransmission the bridge caused may overlap data Wireshark already reassembled into a PDU:
# that "overlaps old data" error on a retransmitted segment is not counted as bad. Nor is a
# malformed NVMe/TCP PDU in a segment after a gap ("previous segment not captured": the bridge
# dropped or held back the one before, so Wireshark takes the middle of a PDU for its start);
# checksums are checked on every frame whatever the dissector made of its payload.
#   CASES=N (default 3) PCAP=FILE (default target/tcp-linux.pcap) NVME=1 TCP_LINUX_ARGS="--max-bytes 32768 ..."
set -euo pipefail
cd "$(dirname "$0")/.."
cases=${CASES:-3}
nvme=${NVME:-0}
pcap=${PCAP:-target/tcp-linux.pcap}
mode=()
[ "$nvme" = 1 ] && mode=(--nvme)
command -v tshark >/dev/null || { echo "tcp_linux_check: tshark not found (bash ci/setup.sh)" >&2; exit 2; }
# shellcheck disable=SC2086
cargo run -q --release -p testbench -- tcp-linux "${mode[@]}" --cases "$cases" --pcap "$pcap" ${TCP_LINUX_ARGS:-}
opts=(-o tcp.check_checksum:TRUE -o ip.check_checksum:TRUE)
count() { tshark -r "$pcap" "${opts[@]}" -Y "$1" | wc -l; }
# One line per frame: its protocols and ICMP type.
fields=$(tshark -r "$pcap" "${opts[@]}" -T fields -E separator=/t -e frame.protocols -e icmp.type)
frames=$(echo "$fields" | grep -c . || true)
tcp=$(echo "$fields" | cut -f1 | grep -c ':tcp' || true)
arp=$(echo "$fields" | cut -f1 | grep -c ':arp' || true)
req=$(echo "$fields" | cut -f2 | grep -cx 8 || true)
rep=$(echo "$fields" | cut -f2 | grep -cx 0 || true)
retrans=$(count tcp.analysis.retransmission)
overlap='(tcp.analysis.retransmission || tcp.analysis.fast_retransmission) && _ws.expert.message contains "overlaps old data"'
gap='_ws.malformed && tcp.analysis.lost_segment'
filter="((_ws.malformed || _ws.expert.severity == \"Error\") && !($overlap) && !($gap)) || ip.checksum.status == \"Bad\" || tcp.checksum.status == \"Bad\" || icmp.checksum.status == \"Bad\""
bad=$(count "$filter")
pdus=$(count nvme-tcp)
echo "tcp_linux_check: $frames frames: $tcp TCP ($retrans retransmissions by tshark's analysis), $arp ARP, $req echo requests, $rep echo replies, $pdus with NVMe/TCP PDUs; $bad malformed, error or bad-checksum frames ($pcap)"
fail=0
if [ "$nvme" = 1 ]; then
  [ "$tcp" -gt 0 ] && [ "$arp" -gt 0 ] && [ "$pdus" -gt 0 ] || {
    echo "tcp_linux_check: the capture lacks TCP, ARP or NVMe/TCP PDUs" >&2; fail=1; }
else
  [ "$tcp" -gt 0 ] && [ "$arp" -gt 0 ] && [ "$rep" -gt 0 ] && [ "$rep" -eq "$req" ] || {
    echo "tcp_linux_check: the capture lacks TCP, ARP or answered pings" >&2; fail=1; }
fi
[ "$bad" -eq 0 ] || { tshark -r "$pcap" "${opts[@]}" -Y "$filter" | head >&2; fail=1; }
[ "$fail" -eq 0 ] && echo "tcp_linux_check: passed"
exit "$fail"
