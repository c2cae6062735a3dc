"""A case's round trip to a system's process: the bare pipe against the pool.

(a) Two Python processes passing a 120-byte message back and forth over two pipes,
each sleeping until the other's message comes (the parent in `poll`); (a') the same,
each side asking for the message for a moment before it sleeps, as the pool and its
processes do (`isolation._spin`): the floor of one case in flight, timed by the
parent. (b) `ProcessPool` running 10,000 cases of the trivial classifier of
`bench.speed` in one process (no sandbox: the round trip, not the start-up): wall, the
parent's own CPU and the system process's CPU per case. Each figure is the best of three.

Run: .venv/bin/python -m bench.speed.round_trip [--cases 10000]
"""

from __future__ import annotations

import argparse
import os
import select
import time


def bare_round_trip(n: int, spin_s: float = 0.0) -> float:
    """Microseconds per round trip of a small message between two processes; `spin_s`:
    how long each side asks before sleeping."""
    from oloproof_core.execution.isolation._spin import poll_soon

    to_child, child_in = os.pipe()
    from_child, child_out = os.pipe()
    pid = os.fork()
    if pid == 0:  # echo until the parent closes its end
        os.close(child_in)
        os.close(from_child)
        waiting = select.poll()
        waiting.register(to_child, select.POLLIN)
        while poll_soon(waiting, -1, spin_s) and (data := os.read(to_child, 1 << 16)):
            os.write(child_out, data)
        os._exit(0)
    os.close(to_child)
    os.close(child_out)
    poller = select.poll()
    poller.register(from_child, select.POLLIN)
    message = b"x" * 120
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for _ in range(n):
            os.write(child_in, message)
            poll_soon(poller, -1, spin_s)
            os.read(from_child, 1 << 16)
        best = min(best, time.perf_counter() - started)
    os.close(child_in)
    os.waitpid(pid, 0)
    return best / n * 1e6


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux `/proc`)."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pool_round_trip(n: int) -> tuple[float, float, float]:
    """Microseconds per case through `ProcessPool`: wall, the parent's CPU, the
    system's process's CPU."""
    from bench.speed.workloads import classify
    from oloproof_core.cases.case import CaseResult
    from oloproof_core.execution.isolation import ProcessPool
    from oloproof_core.execution.isolation._sandbox_choice import SandboxChoice
    from oloproof_core.execution.systems import as_system

    walls, cpus, child_cpus = [], [], []
    with ProcessPool(as_system(classify), processes=1, sandbox=SandboxChoice.without()) as pool:
        pool.start()
        for _ in range(3):
            cases = [
                CaseResult(id=f"c{i}", input={"question": f"refund please #{i}"}, expected=None)
                for i in range(n)
            ]
            child = pool._slots[0].child
            assert child is not None
            wall, cpu, child_cpu = time.perf_counter(), time.process_time(), cpu_seconds(child.pid)
            pool.run(cases)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
            child_cpus.append(cpu_seconds(child.pid) - child_cpu)
    return min(walls) / n * 1e6, min(cpus) / n * 1e6, min(child_cpus) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.speed.round_trip", description=__doc__)
    parser.add_argument("--cases", type=int, default=10_000)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    bare = bare_round_trip(args.cases)
    asking = bare_round_trip(args.cases, spin_s=50e-6)
    wall, cpu, child_cpu = pool_round_trip(args.cases)
    print(
        f"load average {load:.1f}: bare pipe round trip {bare:.1f} µs, asking before "
        f"sleeping {asking:.1f} µs; pool {wall:.1f} µs "
        f"a case, the parent's CPU {cpu:.1f} µs, the system process's {child_cpu:.1f} µs"
    )


if __name__ == "__main__":
    main()
