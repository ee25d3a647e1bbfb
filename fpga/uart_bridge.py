#!/usr/bin/env python3
"""Host side of the bring-up UART bridge (hdl-gen/src/blocks/uart_bridge.rs): 32-bit reads and
writes of the chip's registers and of the block-RAM host memory over a serial port.

    python3 fpga/uart_bridge.py --port /dev/ttyUSB0 info
    python3 fpga/uart_bridge.py --port /dev/ttyUSB0 read 0x0 [COUNT]
    python3 fpga/uart_bridge.py --port /dev/ttyUSB0 write 0x10000 0xdeadbeef
    python3 fpga/uart_bridge.py --port /dev/ttyUSB0 memtest [--words N]

Protocol (big-endian): 'R' a3 a2 a1 a0 -> status d3 d2 d1 d0; 'W' a3 a2 a1 a0 d3 d2 d1 d0 ->
status. status = 0xA0 | AXI response (0xA0 OKAY, 0xA2 SLVERR, 0xA3 DECERR). A command whose
bytes stall for about 10-20 ms is dropped by the bridge; this tool waits before each command
if the previous one went wrong, so the bridge is back at a command boundary.

Only the Python standard library is used (termios), so it runs on any Linux host as is.
"""

import argparse
import os
import sys
import termios
import time

CHIP_INFO_BASE = 0x0000_0000
HOST_MEM_BASE = 0x0001_0000
HOST_MEM_BYTES = 16 * 1024
CHIP_ID = 0x4E56_4D46  # "NVMF"
RESP = {0: "OKAY", 1: "EXOKAY", 2: "SLVERR", 3: "DECERR"}


class BridgeError(Exception):
    """The bridge answered an error response, garbage, or nothing."""


class Bridge:
    """A connection to the bridge over an open file descriptor (a tty or a pty)."""

    def __init__(self, fd, timeout=1.0):
        self.fd = fd
        self.timeout = timeout
        self.dirty = False

    @classmethod
    def open(cls, port, baud=115200, timeout=1.0):
        fd = os.open(port, os.O_RDWR | os.O_NOCTTY)
        configure(fd, baud)
        return cls(fd, timeout)

    def close(self):
        os.close(self.fd)

    def _recv(self, n):
        data = b""
        deadline = time.monotonic() + self.timeout
        while len(data) < n:
            if time.monotonic() > deadline:
                self.dirty = True
                raise BridgeError(f"timed out: {len(data)} of {n} answer bytes")
            chunk = os.read(self.fd, n - len(data))
            if chunk:
                data += chunk
            else:
                time.sleep(0.001)
        return data

    def _command(self, frame, answer_len):
        if self.dirty:
            # Let the bridge drop a half-received command, then flush what it sent.
            time.sleep(0.05)
            termios.tcflush(self.fd, termios.TCIOFLUSH)
            self.dirty = False
        os.write(self.fd, frame)
        answer = self._recv(answer_len)
        status = answer[0]
        if status & 0xF0 != 0xA0:
            self.dirty = True
            raise BridgeError(f"garbled status byte 0x{status:02x}")
        resp = status & 0x3
        return resp, answer[1:]

    def read(self, addr):
        resp, data = self._command(b"R" + addr.to_bytes(4, "big"), 5)
        if resp != 0:
            raise BridgeError(f"read 0x{addr:08x}: {RESP[resp]}")
        return int.from_bytes(data, "big")

    def write(self, addr, value):
        resp, _ = self._command(b"W" + addr.to_bytes(4, "big") + value.to_bytes(4, "big"), 1)
        if resp != 0:
            raise BridgeError(f"write 0x{addr:08x}: {RESP[resp]}")


def configure(fd, baud):
    """Raw 8N1 at `baud`, no flow control, non-blocking reads."""
    speed = getattr(termios, f"B{baud}", None)
    if speed is None:
        raise SystemExit(f"uart_bridge: baud rate {baud} is not a standard termios rate")
    attrs = termios.tcgetattr(fd)
    iflag, oflag, cflag, lflag = 0, 0, termios.CS8 | termios.CREAD | termios.CLOCAL, 0
    cc = attrs[6]
    cc[termios.VMIN] = 0
    cc[termios.VTIME] = 1
    termios.tcsetattr(fd, termios.TCSANOW, [iflag, oflag, cflag, lflag, speed, speed, cc])
    termios.tcflush(fd, termios.TCIOFLUSH)


def info(bridge):
    """Reads and decodes chip_info (rtl/chip_info_csr.md)."""
    ident = bridge.read(CHIP_INFO_BASE + 0x00)
    version = bridge.read(CHIP_INFO_BASE + 0x04)
    lo = bridge.read(CHIP_INFO_BASE + 0x08)
    hi = bridge.read(CHIP_INFO_BASE + 0x0C)
    cap = bridge.read(CHIP_INFO_BASE + 0x10)
    dstrd = bridge.read(CHIP_INFO_BASE + 0x14)
    name = ident.to_bytes(4, "big").decode("ascii", "replace")
    lines = [
        f"id          0x{ident:08x} ({name}){'' if ident == CHIP_ID else '  UNEXPECTED'}",
        f"version     {version >> 16 & 0xFF}.{version >> 8 & 0xFF}.{version & 0xFF}",
        f"config hash {hi:08x}{lo:08x}",
        f"io queues   {cap & 0xFFFF}",
        f"max depth   {(cap >> 16) + 1}",
        f"dstrd       {dstrd & 0xF}",
    ]
    return "\n".join(lines)


def memtest(bridge, words):
    """Writes an address-dependent pattern into the host memory and reads it back."""
    pattern = [(0x9E37_79B9 * (i + 1)) & 0xFFFF_FFFF for i in range(words)]
    for i, v in enumerate(pattern):
        bridge.write(HOST_MEM_BASE + 4 * i, v)
    bad = 0
    for i, v in enumerate(pattern):
        got = bridge.read(HOST_MEM_BASE + 4 * i)
        if got != v:
            bad += 1
            print(f"0x{HOST_MEM_BASE + 4 * i:08x}: read 0x{got:08x}, wrote 0x{v:08x}")
    return bad


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--port", default="/dev/ttyUSB0", help="serial port (default /dev/ttyUSB0)")
    p.add_argument("--baud", type=int, default=115200, help="baud rate (default 115200)")
    p.add_argument("--timeout", type=float, default=1.0, help="answer timeout in seconds")
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("read", help="read COUNT words from ADDR")
    r.add_argument("addr", type=lambda s: int(s, 0))
    r.add_argument("count", type=lambda s: int(s, 0), nargs="?", default=1)
    w = sub.add_parser("write", help="write VALUE to ADDR")
    w.add_argument("addr", type=lambda s: int(s, 0))
    w.add_argument("value", type=lambda s: int(s, 0))
    sub.add_parser("info", help="read and decode chip_info")
    m = sub.add_parser("memtest", help="write and read back the host memory")
    m.add_argument("--words", type=int, default=HOST_MEM_BYTES // 4)
    args = p.parse_args(argv)
    try:
        bridge = Bridge.open(args.port, args.baud, args.timeout)
    except OSError as e:
        print(f"uart_bridge: cannot open {args.port}: {e}", file=sys.stderr)
        return 2
    try:
        if args.cmd == "read":
            for i in range(args.count):
                a = args.addr + 4 * i
                print(f"0x{a:08x}: 0x{bridge.read(a):08x}")
        elif args.cmd == "write":
            bridge.write(args.addr, args.value)
        elif args.cmd == "info":
            print(info(bridge))
        elif args.cmd == "memtest":
            bad = memtest(bridge, args.words)
            print(f"memtest: {args.words - bad} of {args.words} words good")
            return 1 if bad else 0
    except BridgeError as e:
        print(f"uart_bridge: {e}", file=sys.stderr)
        return 1
    finally:
        bridge.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
