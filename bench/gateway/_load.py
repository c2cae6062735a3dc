"""The benchmark's clients, run in a child process as a system under test would be.

    latency     one keep-alive httpx client, calls one at a time, alternating between
                the provider directly and the gateway; prints both lists of latencies
    throughput  `--concurrency` aiohttp clients calling as fast as they can; prints
                calls per second

Run by `bench.gateway`; not meant to be run by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

import aiohttp
import httpx

BODY = {
    "model": "bench-model",
    "messages": [{"role": "user", "content": "Classify: where is my parcel?"}],
    "max_tokens": 16,
}


def latency(direct: str, gateway: str, key: str, calls: int) -> dict[str, list[float]]:
    timings: dict[str, list[float]] = {"direct": [], "gateway": []}
    targets = {
        "direct": httpx.Client(base_url=direct, headers={"Authorization": "Bearer sk-provider"}),
        "gateway": httpx.Client(base_url=gateway, headers={"Authorization": f"Bearer {key}"}),
    }
    for client in targets.values():  # warm both connections first
        for _ in range(50):
            client.post("/chat/completions", json=BODY).raise_for_status()
    for i in range(calls):
        # Alternate which goes first, so neither side always follows the other.
        order = ("direct", "gateway") if i % 2 == 0 else ("gateway", "direct")
        for name in order:
            started = time.perf_counter()
            targets[name].post("/chat/completions", json=BODY).raise_for_status()
            timings[name].append((time.perf_counter() - started) * 1000.0)
    for client in targets.values():
        client.close()
    return timings


async def throughput(url: str, key: str, calls: int, concurrency: int) -> dict[str, float]:
    payload = json.dumps(BODY).encode()
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    remaining = 4 * concurrency  # warm-up: open every connection first
    failures = 0

    async def client(session: aiohttp.ClientSession) -> None:
        nonlocal remaining, failures
        while remaining > 0:
            remaining -= 1
            async with session.post(f"{url}/chat/completions", data=payload) as response:
                await response.read()
                failures += response.status != 200

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:
        await asyncio.gather(*(client(session) for _ in range(concurrency)))
        remaining, failures = calls, 0
        started = time.perf_counter()
        await asyncio.gather(*(client(session) for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    return {
        "calls": calls,
        "seconds": elapsed,
        "calls_per_s": calls / elapsed,
        "failures": failures,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("latency", "throughput"))
    parser.add_argument("--direct")
    parser.add_argument("--gateway")
    parser.add_argument("--key", default="sk-provider")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    if args.mode == "latency":
        result: object = latency(args.direct, args.gateway, args.key, args.calls)
    else:
        result = asyncio.run(throughput(args.gateway, args.key, args.calls, args.concurrency))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
