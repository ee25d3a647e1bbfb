"""Checks every RoCEv2 frame of a pcap against scapy's own ICRC (scapy.contrib.roce).

Usage: python roce_icrc.py FILE.pcap. Prints one summary line; exits 1 if any frame is not
RoCEv2 over IPv4/UDP 4791 or carries an ICRC other than the one scapy computes for it.
"""

import sys

from scapy.contrib.roce import BTH
from scapy.layers.l2 import Ether
from scapy.utils import rdpcap


def main(path):
    frames = rdpcap(path)
    good = bad = other = 0
    for i, f in enumerate(frames, 1):
        raw = bytes(f)
        p = Ether(raw)
        if BTH not in p:
            other += 1
            print(f"roce_icrc: frame {i} is not RoCEv2: {p.summary()}", file=sys.stderr)
            continue
        want = p[BTH].compute_icrc(b"")
        if raw[-4:] == want:
            good += 1
        else:
            bad += 1
            if bad <= 5:
                print(
                    f"roce_icrc: frame {i}: ICRC {raw[-4:].hex()}, scapy computes {want.hex()}",
                    file=sys.stderr,
                )
    print(f"roce_icrc: {len(frames)} frames: ICRC {good} good {bad} bad; {other} not RoCEv2")
    return 0 if bad == 0 and other == 0 and good > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
