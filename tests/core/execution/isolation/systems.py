"""Systems the isolation tests run in real child processes (importable by module name)."""

from __future__ import annotations

import asyncio
import ctypes
import os
import signal
import sys
import time
import uuid

from oloproof import current_case, system

PROCESS_TOKEN = uuid.uuid4().hex
"""Which process ran a case: in a sandbox every system's process has the same pid (2)."""


@system(name="clock-cheat", version="1")
def clock_cheat(case):
    time.perf_counter = lambda: 0.0
    time.monotonic = lambda: 0.0
    time.time = lambda: 0.0
    time.sleep(0.02)
    return {"n": case["n"]}


@system(name="record-cheat", version="1")
def record_cheat(case):
    record = current_case()._record
    record.measurements.latency_ms = -759352.0
    record.measurements.model_calls.clear()
    record.id = "someone-else"
    time.sleep(0.02)
    return {"n": case["n"]}


@system(name="segfault", version="1")
def segfault_on_three(case):
    if case["n"] == 3:
        ctypes.string_at(0)
    return {"n": case["n"]}


@system(name="sigsegv", version="1")
def sigsegv_on_three(case):
    if case["n"] == 3:
        os.kill(os.getpid(), signal.SIGSEGV)
    return {"n": case["n"]}


@system(name="exits", version="1")
def exits_on_three(case):
    if case["n"] == 3:
        os._exit(3)
    if case["n"] == 5:
        sys.exit(2)
    return {"n": case["n"]}


@system(name="hog", version="1")
def hog_on_three(case):
    if case["n"] == 3:
        hoard = bytearray(3 * 1024 * 1024 * 1024)
        return {"n": len(hoard)}
    return {"n": case["n"]}


@system(name="sleeper", version="1")
def sleeps_forever_on_three(case):
    if case["n"] == 3:
        while True:
            time.sleep(1)
    return {"n": case["n"]}


@system(name="async-sleeper", version="1")
async def async_sleep(case):
    await asyncio.sleep(0.05)
    return {"n": case["n"]}


@system(name="async-blocker", version="1")
async def async_blocks_on_three(case):
    if case["n"] == 3:
        time.sleep(60)  # blocks the child's event loop: only the parent can stop it
    await asyncio.sleep(0.01)
    return {"n": case["n"]}


@system(name="probe", version="1")
def probe(case):
    me = current_case()
    try:
        _ = me.expected
        refused = False
    except Exception:
        refused = True
    me.attach("trace", {"steps": ["read", "answer"], "id": me.id})
    print("a system printing to stdout")
    return {
        "keys": sorted(case),
        "refused": refused,
        "record_expected": me._record.expected,
        "pid": os.getpid(),
        "n": case["n"],
    }


@system(name="environment", version="1")
def environment(case):
    names = (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "OLOPROOF_SYSTEM_API_KEY",
        "DATABASE_URL",
        "OLOPROOF_ISOLATION_TEST",
        "HOME_OF_TESTS",
    )
    return {name: os.environ.get(name) for name in names} | {"n": case["n"]}


warmed = []


@system(name="warm", version="1", warmup=lambda: warmed.append(os.getpid()))
def warm(case):
    return {"warmed": list(warmed), "n": case["n"]}


@system(name="prompted", version="1", components={"instruction": "the declared text"})
def prompted(case):
    from oloproof import component

    return {"instruction": component("instruction"), "pid": os.getpid()}


@system(name="quick-pid", version="1")
def quick_pid(case):
    return {"n": case["n"], "pid": PROCESS_TOKEN}


@system(name="slow-pid", version="1")
def slow_pid(case):
    time.sleep(0.3)
    return {"n": case["n"], "pid": PROCESS_TOKEN}


@system(name="async-blocker-forever", version="1")
async def async_blocks_forever_on_three(case):
    await asyncio.sleep(0.02)  # every case is in flight before case 3 blocks the loop
    if case["n"] == 3:
        time.sleep(10**6)
    return {"n": case["n"]}


@system(name="async-exiter", version="1")
async def async_exits_on_three(case):
    await asyncio.sleep(0.02)
    if case["n"] == 3:
        os._exit(3)
    return {"n": case["n"]}


@system(name="async-segfault", version="1")
async def async_segfaults_on_three(case):
    await asyncio.sleep(0.02)
    if case["n"] == 3:
        ctypes.string_at(0)
    return {"n": case["n"]}


@system(name="async-killed", version="1")
async def async_killed_on_three(case):
    await asyncio.sleep(0.02)
    if case["n"] == 3:
        os.kill(os.getpid(), signal.SIGKILL)  # as the kernel's out-of-memory killer does
    return {"n": case["n"]}
