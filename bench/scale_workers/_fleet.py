"""Worker processes, their memory, and a private broker that can be restarted.

Each worker is `oloproof worker --concurrency 1` in a session of its own: Celery's main
process, its one pool process (which runs the chunks and the finalising), and the
system's processes under it. Memory is read from /proc: `VmHWM` (the kernel's peak
resident size of a process) at every sample, and `VmRSS` sampled while the run is
finalising, so the finalising step's peak can be told from the chunks'.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path


def kill_worker(worker: subprocess.Popen[bytes]) -> None:
    """SIGKILL a worker's whole session: main process, pool process, system processes."""
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(child) for child in text.split()]


def _status_kb(pid: int, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


@dataclass
class MemorySampler:
    """Peak memory of each worker's Celery processes (main and pool), sampled in a thread."""

    workers: list[subprocess.Popen[bytes]]
    interval: float = 0.25
    finalising: bool = False
    peak_kb: dict[int, int] = field(default_factory=dict)  # worker pid -> largest VmHWM
    final_kb: dict[int, int] = field(default_factory=dict)  # worker pid -> VmRSS, finalising
    before_final_kb: dict[int, int] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)

    def __enter__(self) -> MemorySampler:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            for worker in self.workers:
                if worker.poll() is not None:
                    continue
                celery = [worker.pid, *_children(worker.pid)]
                hwm = max(_status_kb(pid, "VmHWM") for pid in celery)
                self.peak_kb[worker.pid] = max(self.peak_kb.get(worker.pid, 0), hwm)
                rss = max(_status_kb(pid, "VmRSS") for pid in celery)
                if not self.finalising:
                    self.before_final_kb[worker.pid] = rss
                else:
                    self.final_kb[worker.pid] = max(self.final_kb.get(worker.pid, 0), rss)

    def report(self) -> dict[str, object]:
        mb = 1024
        finalising = {
            pid: (self.before_final_kb.get(pid, 0), peak) for pid, peak in self.final_kb.items()
        }
        # The worker that finalised is the one whose memory rose most meanwhile.
        grew = max(finalising.items(), key=lambda item: item[1][1] - item[1][0], default=None)
        return {
            "worker_peak_rss_mb": [round(self.peak_kb[w.pid] / mb) for w in self.workers],
            "finalising_rss_mb": None
            if grew is None
            else {"before": round(grew[1][0] / mb), "peak": round(grew[1][1] / mb)},
        }


class PrivateRedis:
    """A redis-server of the benchmark's own, without persistence: a restart empties it."""

    def __init__(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        self.process = subprocess.Popen(
            [*command, "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL
        )
        import redis

        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if redis.Redis(host="127.0.0.1", port=self.port).ping():
                    return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise SystemExit("the private redis-server did not start within 10 s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
