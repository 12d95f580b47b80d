#!/usr/bin/env python3
"""One call's trace as a small tree, for bench/invoke.sh.

  trace_tree.py LOGS_DIR TRACE_ID [EXECUTION_JSON] [--lines] [--wait-s S]

Reads the `span` lines every hop logs (libs/trace: one JSON object a line in the services' logs
under LOGS_DIR, with trace_id, span_id, parent_span_id, name, duration_us) and prints the spans
of TRACE_ID as a tree, children under the span that opened them, siblings in start order. The
logs may be written after the answer (a batched log writer), so it waits up to --wait-s seconds
(default 5) for the edge's span, the last to end, and reads once more after it appeared.

EXECUTION_JSON, the answer of GET /api/v1/executions/{id} for the same call, adds the hops the
chain recorded with the execution (`hops`: name, start, duration), which do not depend on logs.

--lines prints one machine-readable line per span and per hop instead:
  SPAN depth=1 service=auth name=auth duration_us=101
  HOP name=billing.hold start_us=2100 duration_us=345      (start relative to the first hop)
Exit status 1 when neither source had anything for the call.
"""
import json
import os
import sys
import time


def read_spans(logs_dir, trace_id):
    """span_id -> span dict, from every log file under logs_dir."""
    spans = {}
    try:
        names = sorted(os.listdir(logs_dir))
    except OSError:
        return spans
    for name in names:
        try:
            with open(os.path.join(logs_dir, name), errors="replace") as f:
                for line in f:
                    if trace_id not in line:
                        continue
                    try:
                        entry = json.loads(line)
                    except ValueError:
                        continue
                    if entry.get("msg") == "span" and entry.get("trace_id") == trace_id:
                        spans[entry.get("span_id", "")] = entry
        except OSError:
            continue
    return spans


def wait_for_spans(logs_dir, trace_id, wait_s):
    deadline = time.monotonic() + wait_s
    spans = read_spans(logs_dir, trace_id)
    while time.monotonic() < deadline:
        if any(s.get("service") == "edge" for s in spans.values()):
            time.sleep(0.3)  # the other services' writers, flushed independently of the edge's
            return read_spans(logs_dir, trace_id)
        time.sleep(0.1)
        spans = read_spans(logs_dir, trace_id)
    return spans


def end_us(span):
    """When the span ended (its line's timestamp, millisecond precision), in microseconds."""
    ts = span.get("ts", "")
    try:
        from datetime import datetime
        return int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1e6)
    except ValueError:
        return 0


def span_tree(spans):
    """[(depth, span)] in tree order: roots (no parent among the spans) first."""
    children = {}
    for span in spans.values():
        parent = span.get("parent_span_id", "")
        children.setdefault(parent if parent in spans else None, []).append(span)
    start = lambda s: end_us(s) - int(s.get("duration_us", 0))
    out = []

    def walk(parent, depth):
        for span in sorted(children.get(parent, []), key=start):
            out.append((depth, span))
            walk(span.get("span_id"), depth + 1)

    walk(None, 0)
    return out


def print_tree(tree, lines):
    if lines:
        for depth, s in tree:
            print(f"SPAN depth={depth} service={s.get('service', '?')} name={s.get('name', '?')}"
                  f" duration_us={s.get('duration_us', 0)}")
        return
    print(f"  {'span (service)':<44} {'duration':>12}")
    for depth, s in tree:
        label = ("· " * (depth - 1) + "└─ " if depth else "") + \
            f"{s.get('name', '?')} ({s.get('service', '?')})"
        print(f"  {label:<44} {int(s.get('duration_us', 0)):>9,} µs")


def print_hops(execution, lines):
    hops = execution.get("hops") or []
    if not hops:
        return False
    first = min(int(h.get("start_unix_us", 0)) for h in hops)
    if not lines:
        print(f"  {'hop (GET /executions/{id})':<32} {'starts at':>12} {'held':>12}")
    for h in hops:
        at = int(h.get("start_unix_us", 0)) - first
        held = int(h.get("duration_us", 0))
        if lines:
            print(f"HOP name={h.get('name', '?')} start_us={at} duration_us={held}")
        else:
            print(f"  {h.get('name', '?'):<32} {at:>9,} µs {held:>9,} µs")
    return True


def main(argv):
    lines = "--lines" in argv
    args = [a for a in argv if a != "--lines"]
    wait_s = 5.0
    if "--wait-s" in args:
        i = args.index("--wait-s")
        wait_s = float(args[i + 1])
        del args[i:i + 2]
    if len(args) not in (2, 3):
        sys.exit(__doc__)
    logs_dir, trace_id = args[0], args[1]
    tree = span_tree(wait_for_spans(logs_dir, trace_id, wait_s))
    if tree:
        print_tree(tree, lines)
    elif not lines:
        print(f"  no span lines of trace {trace_id} under {logs_dir}")
    had_hops = False
    if len(args) == 3:
        try:
            with open(args[2]) as f:
                had_hops = print_hops(json.load(f), lines)
        except (OSError, ValueError):
            pass
        if not had_hops and not lines:
            print("  no hops in the execution record")
    return 0 if tree or had_hops else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
