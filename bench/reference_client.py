"""The peers' TTFT method, for bench/run timing: what SGLang's bench_serving and vLLM's bench serve do per request.

One aiohttp session, a semaphore for the concurrency, the clock started just before session.post with the payload
as a dict (aiohttp runs json.dumps inside the clock, as theirs does), and the first token stamped where they stamp
it: after the line iterator yields the first SSE line with text, stripped, its "data: " removed and json.loads run.

usage: reference_client.py COMPLETIONS_URL STREAMS REQUESTS TOKENS EVENTS RANGE_LO RANGE_HI
Prints "index first_token_monotonic_ns" per request; CLOCK_MONOTONIC is what the stamping server's System.nanoTime
reads on Linux.
"""

import asyncio
import json
import random
import sys
import time

import aiohttp


def prompt(key, tokens, lo, hi):
    """The ids TokenPrompts builds: the first three spell the request key (the server reads it), the rest random."""
    span = hi - lo
    ids = []
    for _ in range(min(3, tokens)):
        ids.append(lo + key % span)
        key //= span
    rng = random.Random(key)
    ids.extend(rng.randrange(lo, hi) for _ in range(tokens - len(ids)))
    return ids


async def one(session, url, payload, index, slots, out):
    async with slots:
        st = time.monotonic_ns()
        first = 0
        async with session.post(url=url, json=payload) as response:
            if response.status != 200:
                raise RuntimeError(f"request {index}: HTTP {response.status}")
            async for chunk_bytes in response.content:
                chunk_bytes = chunk_bytes.strip()
                if not chunk_bytes:
                    continue
                chunk = chunk_bytes.decode("utf-8").removeprefix("data: ")
                if chunk == "[DONE]":
                    continue
                data = json.loads(chunk)
                if data["choices"] and data["choices"][0]["text"] and first == 0:
                    first = time.monotonic_ns()
        if first == 0:
            raise RuntimeError(f"request {index}: no token in the stream")
        out.append((index, first, st))


async def main():
    url, streams, requests, tokens, events, lo, hi = sys.argv[1:8]
    streams, requests, tokens, events, lo, hi = map(int, (streams, requests, tokens, events, lo, hi))
    payloads = [
        {
            "model": "bench",
            "prompt": prompt(i, tokens, lo, hi),
            "max_tokens": events,
            "stream": True,
            "stream_options": {"include_usage": True},
            "ignore_eos": True,
            "temperature": 0,
        }
        for i in range(requests)
    ]
    slots = asyncio.Semaphore(streams)
    out = []
    # vLLM's settings: no connection limit of aiohttp's own (the semaphore is the limit), a 6-hour timeout.
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=6 * 60 * 60)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        # A throwaway request first (keyed after the measured ones), as the peers' "initial test run" does.
        warm = dict(payloads[0], prompt=prompt(requests, tokens, lo, hi))
        await one(session, url, warm, requests, slots, [])
        await asyncio.gather(*(one(session, url, payloads[i], i, slots, out) for i in range(requests)))
    for index, first, _ in out:
        print(index, first)


asyncio.run(main())
