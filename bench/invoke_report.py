#!/usr/bin/env python3
"""Renders what bench/invoke.sh measured (its --lines output, on stdin) as Markdown tables.

  bench/invoke.sh 10 32 --lines > run.txt; bench/invoke_report.py < run.txt

The lines (one record each, space-separated key=value pairs after the record's kind):
  BENCH    the run's settings (cores, duration_s, connections, edge_http_threads, floor_hops, ...)
  RESULT   run=bare|permsg|batched|inline|toolgate load=throughput|one|paced, then wrk's figures
           (rps, p50_ms, p90_ms, p99_ms, requests, non2xx, errors); the throughput load adds
           ratio_to_bare, cpu_us and switches (per call, every process of that peer)
  CPU      process=NAME cpu_us voluntary involuntary: toolgate's, per call, by process
  SPAN     depth service name duration_us: one call's spans, in tree order
  HOP      name start_us duration_us: the hops recorded with the same call's execution
  REDIS    round_trips_per_call round_trip_us: billing's Redis round trips (commands or
           pipelines) over toolgate's throughput run, and their mean time
"""
import sys

RUNS = ["bare", "permsg", "batched", "inline", "toolgate"]


def parse(stream):
    records = []
    for line in stream:
        kind, _, rest = line.strip().partition(" ")
        if kind in ("BENCH", "RESULT", "CPU", "SPAN", "HOP", "REDIS"):
            records.append((kind, dict(f.split("=", 1) for f in rest.split() if "=" in f)))
    return records


def table(heads, rows, left=1):
    """Markdown, columns padded to their widest cell; the first `left` columns left-aligned."""
    widths = [max(len(str(r[i])) for r in [heads] + rows) for i in range(len(heads))]
    cell = lambda i, v: str(v).ljust(widths[i]) if i < left else str(v).rjust(widths[i])
    out = ["| " + " | ".join(cell(i, h) for i, h in enumerate(heads)) + " |",
           "|" + "|".join("-" * (w + 2) if i < left else "-" * (w + 1) + ":"
                          for i, w in enumerate(widths)) + "|"]
    out += ["| " + " | ".join(cell(i, v) for i, v in enumerate(r)) + " |" for r in rows]
    return "\n".join(out)


def main():
    records = parse(sys.stdin)
    bench = next((r for k, r in records if k == "BENCH"), {})
    results = {(r["run"], r["load"]): r for k, r in records if k == "RESULT"}
    hops = bench.get("floor_hops", "3")
    titles = {"bare": "bare Pistache echo", "permsg": f"floor, {hops} hops, per-message",
              "batched": f"floor, {hops} hops, batched",
              "inline": f"floor, {hops} hops, batched, inline reads",
              "toolgate": "toolgate invoke, Lua echo"}
    paced = int(bench.get("paced_rate", "1000"))
    print(f"wrk -t1, keep-alive, {bench.get('duration_s', '?')} s a run;"
          f" edge HTTP threads: {bench.get('edge_http_threads', '?')} (the bare route's and the"
          f" floors' fronts alike); durable writes: {bench.get('durable_writes', '?')};"
          f" Redis fsync: {bench.get('redis_fsync', 'default')};"
          f" {bench.get('date', '')}")
    print()
    ms = lambda run, load, key: f"{float(results.get((run, load), {}).get(key, 'nan')):.3f} ms"
    rows, problems = [], []
    for run in RUNS:
        t = results.get((run, "throughput"), {})
        rows.append([titles[run], f"{float(t.get('rps', 'nan')):,.0f}",
                     f"{float(t.get('ratio_to_bare', 'nan')):.3f}×", f"{float(t.get('cpu_us', 'nan')):,.0f}",
                     t.get("switches", "?"), ms(run, "one", "p50_ms"), ms(run, "one", "p90_ms"),
                     ms(run, "one", "p99_ms"), ms(run, "paced", "p50_ms")])
        for load in ("throughput", "one", "paced"):
            r = results.get((run, load), {})
            if r.get("non2xx", "0") != "0" or r.get("errors", "0") != "0":
                problems.append(f"FAILED REQUESTS: {titles[run]}, {load}:"
                                f" {r.get('non2xx')} non-2xx answers, {r.get('errors')} socket"
                                " errors; its figures do not count")
        got = float(results.get((run, "paced"), {}).get("rps", "0"))
        if got < 0.95 * paced:
            problems.append(f"note: {titles[run]} kept {got:,.0f} of the paced {paced:,} req/s,"
                            " so its paced p50 is that of a saturated path")
    conns = bench.get("connections", "32")
    print(table(["run", f"req/s, {conns} conn.", "× bare", "CPU µs/call", "switches/call",
                 "p50, 1 conn.", "p90, 1 conn.", "p99, 1 conn.", f"p50, paced {paced:,}/s"],
                rows))
    for p in problems:
        print(p)

    cpu = [r for k, r in records if k == "CPU"]
    if cpu:
        print()
        print(f"toolgate, per call over the {conns}-connection run, by process:")
        print()
        rows = []
        for r in cpu:
            voluntary, involuntary = float(r["voluntary"]), float(r["involuntary"])
            exited = r["process"].startswith("(exited:")  # gone before the run's end
            rows.append([r["process"], f"{float(r['cpu_us']):,.0f}",
                         "-" if exited else f"{voluntary + involuntary:.1f}",
                         "-" if exited else f"{voluntary:.1f}",
                         "-" if exited else f"{involuntary:.1f}"])
        print(table(["process", "CPU µs", "context switches", "voluntary", "involuntary"], rows))
    redis = next((r for k, r in records if k == "REDIS"), None)
    if redis:
        print()
        print(f"billing's Redis round trips: {float(redis['round_trips_per_call']):.2f} per call,"
              f" {float(redis['round_trip_us']):,.0f} µs each on average")

    spans = [r for k, r in records if k == "SPAN"]
    hop_records = [r for k, r in records if k == "HOP"]
    print()
    print(f"One call (trace {bench.get('trace_id', '?')}):")
    print()
    if spans:
        # Leading spaces vanish when Markdown is rendered: the indent is drawn.
        rows = [[("· " * (int(s["depth"]) - 1) + "└─ " if int(s["depth"]) else "") +
                 f"{s['name']} ({s['service']})", f"{int(s['duration_us']):,} µs"] for s in spans]
        print(table(["span (service)", "duration"], rows))
    else:
        print("no span lines of this call in the services' logs")
    if hop_records:
        print()
        rows = [[h["name"], f"{int(h['start_us']):,} µs", f"{int(h['duration_us']):,} µs"]
                for h in hop_records]
        print(table(["hop (GET /executions/{id})", "starts at", "held"], rows))


if __name__ == "__main__":
    main()
