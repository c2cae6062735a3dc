"""The system calls a sandbox refuses: the kernel's keyrings, and new user namespaces.

bubblewrap loads a seccomp filter (`--seccomp FD`) into the system's process just before
it starts it; every process the system starts inherits it. The filter, a classic BPF
program built here, answers:

- `keyctl`, `add_key`, `request_key`: EPERM. Without it the system could read the
  session keyring it inherits from oloproof (a key it possesses, whatever its uid).
- `clone` and `unshare` asking for a new user namespace (`CLONE_NEWUSER`): EPERM; and
  `clone3`, whose flags a filter cannot read, ENOSYS, so the C library falls back to
  `clone`. In a user namespace of its own the system would hold every capability there,
  and could mount a file system of any size past its `/tmp` cap.
- any other call: allowed.

It knows the calls' numbers on x86_64 (with the 32-bit i386 calls such a kernel also
serves, and x32's, refused whole) and on aarch64 (with 32-bit arm's). A call made under
another architecture kills the process: the filter cannot tell what it is.
"""

from __future__ import annotations

import errno
import platform
import struct
from collections.abc import Mapping

_AUDIT_ARCH = {
    "x86_64": 0xC000003E,
    "i386": 0x40000003,
    "aarch64": 0xC00000B7,
    "arm": 0x40000028,
}
_CALLS: Mapping[str, Mapping[str, int]] = {
    "x86_64": {
        "keyctl": 250,
        "add_key": 248,
        "request_key": 249,
        "clone": 56,
        "unshare": 272,
        "clone3": 435,
    },
    "i386": {
        "keyctl": 288,
        "add_key": 286,
        "request_key": 287,
        "clone": 120,
        "unshare": 310,
        "clone3": 435,
    },
    "aarch64": {
        "keyctl": 219,
        "add_key": 217,
        "request_key": 218,
        "clone": 220,
        "unshare": 97,
        "clone3": 435,
    },
    "arm": {
        "keyctl": 311,
        "add_key": 309,
        "request_key": 310,
        "clone": 120,
        "unshare": 337,
        "clone3": 435,
    },
}
_COMPAT = {"x86_64": "i386", "aarch64": "arm"}
_MACHINES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}

_X32_SYSCALL_BIT = 0x40000000
_CLONE_NEWUSER = 0x10000000

# struct seccomp_data: nr (u32), arch (u32), instruction_pointer (u64), args (6 x u64)
_NR, _ARCH, _ARG0_LOW = 0, 4, 16

_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06

_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_RET_KILL_PROCESS = 0x80000000

KEYRING_CALLS = ("keyctl", "add_key", "request_key")
"""Refused with EPERM inside every sandbox."""


def native_architecture() -> str | None:
    """The architecture whose calls the filter knows (x86_64, aarch64), or None."""
    return _MACHINES.get(platform.machine().lower())


def seccomp_filter(architecture: str | None = None) -> bytes | None:
    """The BPF program (`struct sock_filter[]`, native byte order) for this machine, or
    None where the filter does not know the calls' numbers."""
    native = architecture or native_architecture()
    if native not in _COMPAT:
        return None
    program = _Program()
    arches = (native, _COMPAT[native])
    program.load(_ARCH)
    for arch in arches:
        program.jump_if(_JEQ_K, _AUDIT_ARCH[arch], arch)
    program.ret(_RET_KILL_PROCESS)
    for arch in arches:
        calls = _CALLS[arch]
        program.label(arch)
        program.load(_NR)
        if arch == "x86_64":
            program.jump_if(_JGE_K, _X32_SYSCALL_BIT, "eperm")
        for name in KEYRING_CALLS:
            program.jump_if(_JEQ_K, calls[name], "eperm")
        program.jump_if(_JEQ_K, calls["clone3"], "enosys")
        program.jump_if(_JEQ_K, calls["clone"], "flags")
        program.jump_if(_JEQ_K, calls["unshare"], "flags")
        program.ret(_RET_ALLOW)
    program.label("flags")  # clone's and unshare's flags are their first argument
    program.load(_ARG0_LOW)
    program.jump_if(_JSET_K, _CLONE_NEWUSER, "eperm")
    program.ret(_RET_ALLOW)
    program.label("eperm")
    program.ret(_RET_ERRNO | errno.EPERM)
    program.label("enosys")
    program.ret(_RET_ERRNO | errno.ENOSYS)
    return program.assemble()


class _Program:
    """A few BPF instructions with named jump targets, assembled once complete."""

    def __init__(self) -> None:
        self._code: list[tuple[int, str | None, int]] = []
        self._labels: dict[str, int] = {}

    def load(self, offset: int) -> None:
        self._code.append((_LD_W_ABS, None, offset))

    def jump_if(self, test: int, value: int, target: str) -> None:
        """Jump to `target` when the test holds, else go on with the next instruction."""
        self._code.append((test, target, value))

    def ret(self, value: int) -> None:
        self._code.append((_RET_K, None, value))

    def label(self, name: str) -> None:
        self._labels[name] = len(self._code)

    def assemble(self) -> bytes:
        out = bytearray()
        for index, (code, target, value) in enumerate(self._code):
            jump = 0 if target is None else self._labels[target] - index - 1
            if not 0 <= jump <= 255:
                raise ValueError(f"a jump of {jump} instructions does not fit a BPF jump")
            out += struct.pack("=HBBI", code, jump, 0, value)
        return bytes(out)
