"""The part of aloed's wire protocol that the bench scripts speak (src/coord/message.hpp).

One Unix-domain SOCK_SEQPACKET connection per client; each message one record: a 16-byte
header (magic "ALOE", version, kind, size, sequence) and a body of a size fixed by the kind,
every field at a fixed offset in the host's byte order ('=': standard sizes, no padding).
Only what the scripts need is here: a hello (to register a client that uses no CPU) and the
allocations the daemon pushes back. A change of layout in message.hpp/.cpp changes
`protocol_version` there and must change VERSION and the layouts here.
"""
from __future__ import annotations

import os
import socket
import struct

MAGIC, VERSION = 0x454F4C41, 3      # "ALOE" read as a little-endian uint32; protocol_version
HELLO, ALLOCATION = 1, 64           # message_kind
CLIENT_NATIVE = 1 << 2              # client_native: an aloe-native program (hello flags)

HEADER = struct.Struct("=IHHII")              # magic, version, kind, size, sequence
HELLO_BODY = struct.Struct("=iII48s")         # pid, flags, own_threads, job (NUL-padded)
ALLOCATION_BODY = struct.Struct("=IIIHHIIIIQ")  # threads, clients, available, policy, flags,
                                                # share, lent, borrowed, cpu_base, cpu_mask


def hello(own_threads: int, *, pid: int | None = None, flags: int = CLIENT_NATIVE,
          job: bytes = b"", sequence: int = 1) -> bytes:
    """A hello record: this process (or `pid`) would run `own_threads` threads alone."""
    body = HELLO_BODY.pack(os.getpid() if pid is None else pid, flags, own_threads, job)
    return HEADER.pack(MAGIC, VERSION, HELLO, HEADER.size + len(body), sequence) + body


def connect(path: str) -> socket.socket:
    """A client connection to the daemon listening at `path`."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    return s


def allocation_threads(record: bytes) -> int | None:
    """The thread count of an allocation record; None for a record of another kind."""
    _magic, _version, kind, _size, _sequence = HEADER.unpack_from(record)
    if kind != ALLOCATION:
        return None
    return ALLOCATION_BODY.unpack_from(record, HEADER.size)[0]


def next_allocation(sock: socket.socket, timeout: float) -> int | None:
    """The next allocation's thread count (records of other kinds skipped), or None when
    none comes within `timeout` seconds of each receive."""
    sock.settimeout(timeout)
    while True:
        try:
            data = sock.recv(256)
        except socket.timeout:
            return None
        threads = allocation_threads(data)
        if threads is not None:
            return threads
