"""Tests of the host tool fpga/uart_bridge.py against a model of the bridge on a pseudo-terminal:
framing, byte order, decoding of chip_info, error responses, and resynchronization after a
garbled answer. (The RTL side of the protocol is tested under Verilator by
hdl-gen/tests/fpga_bringup.rs; this file tests the host side.)

    python3 -m unittest discover -s fpga -p 'test_*.py'
"""

import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import uart_bridge  # noqa: E402


class FakeBridge(threading.Thread):
    """Answers the protocol on the master side of a pty, as the RTL does: chip_info registers,
    16 KiB of host memory, SLVERR for unmapped registers, DECERR elsewhere."""

    def __init__(self, fd, garble_next=False):
        super().__init__(daemon=True)
        self.fd = fd
        self.regs = {0x00: uart_bridge.CHIP_ID, 0x04: 0x0000_0100, 0x08: 0x47A7_FABC,
                     0x0C: 0x7190_D070, 0x10: (1023 << 16) | 64, 0x14: 0, 0x18: 0}
        self.mem = {}
        self.garble_next = garble_next
        self.stop = False

    def byte(self):
        while True:
            b = os.read(self.fd, 1)
            if b:
                return b[0]

    def access(self, write, addr, value=0):
        if addr < 0x1000:
            if addr not in self.regs:
                return 2, 0
            if write and addr == 0x18:
                self.regs[addr] = value
            return 0, self.regs[addr]
        if uart_bridge.HOST_MEM_BASE <= addr < uart_bridge.HOST_MEM_BASE + uart_bridge.HOST_MEM_BYTES:
            if write:
                self.mem[addr & ~3] = value
            return 0, self.mem.get(addr & ~3, 0)
        return 3, 0

    def run(self):
        try:
            while not self.stop:
                cmd = self.byte()
                if cmd not in (0x52, 0x57):
                    continue
                addr = int.from_bytes(bytes(self.byte() for _ in range(4)), "big")
                if cmd == 0x57:
                    value = int.from_bytes(bytes(self.byte() for _ in range(4)), "big")
                    resp, _ = self.access(True, addr, value)
                    answer = bytes([0xA0 | resp])
                else:
                    resp, data = self.access(False, addr)
                    answer = bytes([0xA0 | resp]) + (data if resp == 0 else 0).to_bytes(4, "big")
                if self.garble_next:
                    self.garble_next = False
                    answer = b"\x13" + answer[1:]
                os.write(self.fd, answer)
        except OSError:
            pass


class BridgeTest(unittest.TestCase):
    def setUp(self):
        self.master, slave = os.openpty()
        self.port = os.ttyname(slave)
        self.slave = slave
        self.fake = FakeBridge(self.master)
        self.fake.start()
        self.bridge = uart_bridge.Bridge.open(self.port, 115200, timeout=2.0)

    def tearDown(self):
        self.fake.stop = True
        self.bridge.close()
        os.close(self.slave)
        os.close(self.master)

    def test_reads_and_writes_are_big_endian_words(self):
        self.bridge.write(0x0001_0004, 0x0123_4567)
        self.assertEqual(self.bridge.read(0x0001_0004), 0x0123_4567)
        self.assertEqual(self.fake.mem[0x0001_0004], 0x0123_4567)
        self.assertEqual(self.bridge.read(0x0), uart_bridge.CHIP_ID)

    def test_info_decodes_chip_info(self):
        text = uart_bridge.info(self.bridge)
        self.assertIn("0x4e564d46 (NVMF)", text)
        self.assertIn("config hash 7190d07047a7fabc", text)
        self.assertIn("io queues   64", text)
        self.assertIn("max depth   1024", text)
        self.assertNotIn("UNEXPECTED", text)

    def test_error_responses_raise_with_their_name(self):
        with self.assertRaisesRegex(uart_bridge.BridgeError, "DECERR"):
            self.bridge.read(0x0002_0000)
        with self.assertRaisesRegex(uart_bridge.BridgeError, "SLVERR"):
            self.bridge.write(0x100, 1)
        self.assertEqual(self.bridge.read(0x18), 0)

    def test_a_garbled_answer_raises_and_the_next_command_works(self):
        self.fake.garble_next = True
        with self.assertRaisesRegex(uart_bridge.BridgeError, "garbled"):
            self.bridge.read(0x0)
        self.assertEqual(self.bridge.read(0x0), uart_bridge.CHIP_ID)

    def test_memtest_finds_good_memory_good(self):
        self.assertEqual(uart_bridge.memtest(self.bridge, 32), 0)

    def test_the_command_line_reads_and_writes(self):
        self.assertEqual(uart_bridge.main(["--port", self.port, "write", "0x18", "0xcafe"]), 0)
        self.assertEqual(self.fake.regs[0x18], 0xCAFE)
        self.assertEqual(uart_bridge.main(["--port", self.port, "read", "0x20000"]), 1)


if __name__ == "__main__":
    unittest.main()
