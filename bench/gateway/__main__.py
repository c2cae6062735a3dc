"""Gateway overhead: (a) added latency per call, (b) throughput with 64 concurrent clients.

(a) One httpx client in a child process makes `--calls` calls straight to the provider
and as many through the gateway, alternating one by one; the figure is the difference
of the p50 (and p99) latencies. (b) 64 aiohttp clients in a child process call the
gateway as fast as they can; the provider alone, called the same way, is the floor.

The provider is a small aiohttp server in its own process (bench/gateway/_upstream.py),
not the tests' ThreadingHTTPServer, which would be the bottleneck. The gateway runs in
this process, as it does for a run, and its ledger is checked to hold every call.

Run: .venv/bin/python -m bench.gateway [--calls 2000] [--throughput-calls 20000]
Writes bench/results/gateway.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from oloproof_core.execution.gateway import Gateway, Route

RESULTS = Path(__file__).resolve().parents[1] / "results"
PRICE = (0.15, 0.60)


def percentile(values: list[float], q: int) -> float:
    """The q-th percentile, 1 <= q <= 99."""
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def child(*args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "bench.gateway._load", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out)


def latency(direct: str, gateway: Gateway, key: str, calls: int) -> dict:
    timings = child(
        "latency",
        "--direct",
        direct,
        "--gateway",
        gateway.base_url,
        "--key",
        key,
        "--calls",
        str(calls),
    )
    figures = {
        name: {
            "p50_ms": round(percentile(values, 50), 3),
            "p99_ms": round(percentile(values, 99), 3),
        }
        for name, values in timings.items()
    }
    figures["added"] = {
        "p50_ms": round(figures["gateway"]["p50_ms"] - figures["direct"]["p50_ms"], 3),
        "p99_ms": round(figures["gateway"]["p99_ms"] - figures["direct"]["p99_ms"], 3),
    }
    return {"calls_each": calls, **figures}


def throughput(url: str, key: str, calls: int, concurrency: int) -> dict:
    result = child(
        "throughput",
        "--gateway",
        url,
        "--key",
        key,
        "--calls",
        str(calls),
        "--concurrency",
        str(concurrency),
    )
    assert result["failures"] == 0, result
    return {
        "calls": calls,
        "concurrency": concurrency,
        "seconds": round(result["seconds"], 3),
        "calls_per_s": round(result["calls_per_s"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--throughput-calls", type=int, default=20_000)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    upstream = subprocess.Popen(
        [sys.executable, "-m", "bench.gateway._upstream"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert upstream.stdout is not None
        direct = f"http://127.0.0.1:{upstream.stdout.readline().strip()}/v1"
        route = Route(
            role="system",
            base_url=direct,
            api_key="sk-provider",
            model="bench-model",
            price=PRICE,
            timeout_s=30.0,
        )
        with Gateway(routes={"system": route}) as gateway:
            key = gateway.issue_key("system", "bench")
            gateway.bind(key, "bench-case")
            a = latency(direct, gateway, key, args.calls)
            b = throughput(gateway.base_url, key, args.throughput_calls, args.concurrency)
            floor = throughput(direct, "sk-provider", args.throughput_calls, args.concurrency)
            totals = gateway.totals()["system"]
        # Warm-up calls are metered too: 2 × 50 latency warm-ups count only the gateway's 50.
        expected = 50 + args.calls + 4 * args.concurrency + args.throughput_calls
        assert totals.calls == expected, (totals, expected)
        assert totals.unmeasured_calls == 0, totals
        figures = {
            "a_added_latency": a,
            "b_throughput_gateway": b,
            "b_throughput_provider_alone": floor,
            "ledger": {"calls": totals.calls, "cost_usd": round(totals.cost_usd, 6)},
        }
    finally:
        upstream.terminate()
        upstream.wait()
    print(json.dumps(figures, indent=2))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "gateway.json").write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
