# The `graph` tool through a live run, as an agent calls it: the MCP Python SDK starts
# `cc-harness mcp --root TREE` (its index already built in XDG_CACHE_HOME) and times each call
# from request to answer, freshness included (the run checks the tree before it answers).
#
# argv: HARNESS TREE SAMPLE_JSON FOCUS
#   SAMPLE_JSON: [[name, path, line], ...], definitions spread over the map's ranking.
#   FOCUS: a source file; a shell-style write appends a function to it (put back after).
# Prints one JSON object: per action the p50, p95 and max in ms, how many calls and errors.
import asyncio
import json
import os
import sys
import time

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

HARNESS, TREE, SAMPLE, FOCUS = sys.argv[1:5]
WRITES = 5
MAPS = 5


def summary(times, errors):
    ordered = sorted(times)
    if not ordered:
        return {"calls": 0, "errors": errors}
    at = lambda p: ordered[min(len(ordered) - 1, round((len(ordered) - 1) * p))]
    return {
        "calls": len(ordered),
        "errors": errors,
        "p50_ms": at(0.5),
        "p95_ms": at(0.95),
        "max_ms": ordered[-1],
    }


def text_of(result):
    return " ".join(c.text for c in result.content if getattr(c, "type", "") == "text")[:400]


def hits(result):
    """How many definitions a `symbols` answer found (-1: it failed)."""
    if result.is_error:
        return -1
    return (result.structured_content or {}).get("total", -1)


async def main():
    sample = json.load(open(SAMPLE))
    params = StdioServerParameters(
        command=HARNESS, args=["mcp", "--root", TREE], env=dict(os.environ)
    )
    times = {}
    errors = {}
    first_errors = []

    async def timed(label, args):
        started = time.perf_counter()
        result = await session.call_tool("graph", args)
        elapsed = (time.perf_counter() - started) * 1000
        if result.is_error:
            errors[label] = errors.get(label, 0) + 1
            if len(first_errors) < 5:
                first_errors.append(f"{label} {args}: {text_of(result)}")
        else:
            times.setdefault(label, []).append(elapsed)
        return elapsed, result

    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            first_ms, _ = await timed("first call", {"action": "status"})
            times.pop("first call", None)
            for name, path, line in sample:
                await timed("symbols", {"action": "symbols", "query": name})
                await timed("outline", {"action": "outline", "file": path})
                place = {"file": path, "line": line, "symbol": name}
                for action in ["callers", "callees", "impact"]:
                    await timed(action, dict(place, action=action))
            for _ in range(MAPS):
                await timed("map", {"action": "map"})
                await timed("map around a file", {"action": "map", "focus": [FOCUS]})
            # A shell write between calls: the next call re-reads the file before it answers.
            focus = os.path.join(TREE, FOCUS)
            original = open(focus, "rb").read()
            try:
                for i in range(WRITES):
                    probe = f"bench_live_probe_{i}"
                    with open(focus, "ab") as f:
                        f.write(f"\nint {probe}(void) {{ return 0; }}\n".encode())
                    elapsed, result = await timed(
                        "symbols after a shell write", {"action": "symbols", "query": probe}
                    )
                    if hits(result) == 0:
                        errors["stale after a write"] = errors.get("stale after a write", 0) + 1
                        first_errors.append(f"{probe} not found after its write: {text_of(result)}")
                    with open(focus, "wb") as f:
                        f.write(original)
                    elapsed, result = await timed(
                        "symbols after the file is put back", {"action": "symbols", "query": probe}
                    )
                    if hits(result) > 0:
                        errors["stale after a write"] = errors.get("stale after a write", 0) + 1
                        first_errors.append(f"{probe} found after the file was put back: {text_of(result)}")
            finally:
                with open(focus, "wb") as f:
                    f.write(original)
    out = {"first_call_ms": first_ms, "first_errors": first_errors}
    for action in sorted(set(times) | set(errors)):
        out[action] = summary(times.get(action, []), errors.get(action, 0))
    print(json.dumps(out))


asyncio.run(main())
