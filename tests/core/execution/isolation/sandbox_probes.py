"""Hostile systems that probe what a sandbox hides and caps, run in real sandboxes."""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import select
import subprocess
import sys
import time

from oloproof import system


@system(name="reader", version="1")
def read_path(case):
    """Reads the file a case names: a dataset, a store, a result file, root's secret."""
    with open(case["path"], "rb") as handle:
        return {"read": handle.read(200).decode(errors="replace")}


@system(name="environment-dump", version="1")
def environment_dump(case):
    return {"environment": dict(os.environ)}


@system(name="tmp-filler", version="1")
def fill_tmp(case):
    """Writes `mb` MiB to its /tmp (also its HOME), as a system downloading or caching."""
    with open(f"/tmp/{case['name']}", "wb") as handle:
        for _ in range(case["mb"]):
            handle.write(b"x" * (1 << 20))
    return {"wrote_mb": case["mb"]}


@system(name="process-starter", version="1")
def start_processes(case):
    """Starts `count` processes that sleep, and keeps them."""
    started = [
        subprocess.Popen(["sleep", "30"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        for _ in range(case["count"])
    ]
    for process in started:
        process.kill()
        process.wait()
    return {"started": len(started)}


@system(name="memory-spreader", version="1")
def spread_memory(case):
    """Holds `each_mb` MiB in each of `children` forked processes at once."""
    ready_read, ready_write = os.pipe()
    children = []
    for _ in range(case["children"]):
        pid = os.fork()
        if pid == 0:
            held = b"x" * (case["each_mb"] << 20)  # written, so resident
            os.write(ready_write, b"1")
            time.sleep(60)
            os._exit(len(held) & 1)
        children.append(pid)
    os.close(ready_write)
    ready, died = 0, []
    while ready + len(died) < len(children):
        if select.select([ready_read], [], [], 0.05)[0]:
            ready += len(os.read(ready_read, 64))
        died += [pid for pid in children if pid not in died and os.waitpid(pid, os.WNOHANG)[0]]
    for pid in children:
        if pid not in died:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
    if died:
        raise RuntimeError(f"{len(died)} of {len(children)} children died holding their memory")
    return {"held_mb": ready * case["each_mb"]}


@system(name="big-output", version="1")
def big_output(case):
    return {"text": "x" * (case["mb"] << 20)}


@system(name="reply-forger", version="1")
def forge_replies(case):
    """Answers its own case early and the next case before it is sent, on the pipe."""
    if case.get("forge"):
        from oloproof_core.execution.isolation._protocol import frame

        caller = sys._getframe(1)
        while "write_fd" not in caller.f_locals or "seq" not in caller.f_locals:
            caller = caller.f_back
        seq, fd = caller.f_locals["seq"], caller.f_locals["write_fd"]
        os.write(
            fd,
            frame([seq, "ok", {"n": case["n"]}, {}, []])
            + frame([seq + 1, "ok", {"n": "forged"}, {}, []]),
        )
        time.sleep(0.2)
    return {"n": case["n"]}


_CALLS = {
    "x86_64": {"keyctl": 250, "add_key": 248, "request_key": 249, "unshare": 272},
    "aarch64": {"keyctl": 219, "add_key": 217, "request_key": 218, "unshare": 97},
}
_KEY_SPEC_THREAD_KEYRING = -1  # a keyring of this thread's own: the probe touches no other
_KEY_SPEC_SESSION_KEYRING = -3
_KEYCTL_GET_KEYRING_ID = 0
_CLONE_NEWUSER = 0x10000000


@system(name="keyring-reader", version="1")
def keyring(case):
    """What the kernel answers to the keyring calls and to a user namespace of its own."""
    libc = ctypes.CDLL(None, use_errno=True)
    numbers = _CALLS[platform.machine()]

    def call(*args):
        ctypes.set_errno(0)
        result = libc.syscall(*args)
        return "ok" if result >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")

    return {
        "keyctl": call(numbers["keyctl"], _KEYCTL_GET_KEYRING_ID, _KEY_SPEC_SESSION_KEYRING, 0),
        "add_key": call(
            numbers["add_key"], b"user", b"oloproof-probe", b"x", 1, _KEY_SPEC_THREAD_KEYRING
        ),
        "request_key": call(numbers["request_key"], b"user", b"oloproof-probe", None, 0),
        "user_namespace": call(numbers["unshare"], _CLONE_NEWUSER),
        "thread_and_process": subprocess.run(["true"], check=False).returncode,
    }
