#!/usr/bin/env python3
"""CPU time of a process tree, by process name, for "where the time goes" in bench/invoke.sh.

  cpu_by_process.py snapshot ROOT_PID > FILE      # utime+stime of ROOT_PID and its descendants
  cpu_by_process.py report BEFORE AFTER REQUESTS  # CPU microseconds per request, by name

Names group the processes of one kind (every PostgreSQL backend is "postgres", every Lua worker
"toolgate-lua-worker"). Processes that exited between the snapshots are not counted (a worker
recycled mid-run), so the total is a lower bound.
"""
import os
import sys

TICK = os.sysconf("SC_CLK_TCK")


def processes():
    """pid -> (ppid, name, cpu ticks) for every process readable now."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # The name is in parentheses and may contain spaces; the fields after it are fixed.
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        # The command line names a process better than its 15-character comm.
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv0 = f.read().split(b"\0")[0].decode(errors="replace")
        except OSError:
            argv0 = ""
        if argv0:
            name = os.path.basename(argv0.split(":")[0].split()[0])
        out[int(entry)] = (int(fields[1]), name, int(fields[11]) + int(fields[12]))
    return out


def snapshot(root):
    procs = processes()
    children = {}
    for pid, (ppid, _, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    stack, seen = [root], []
    while stack:
        pid = stack.pop()
        if pid in procs:
            seen.append(pid)
            stack.extend(children.get(pid, []))
    for pid in seen:
        _, name, ticks = procs[pid]
        print(pid, ticks, name)


def load(path):
    with open(path) as f:
        return {int(p): (int(t), n) for p, t, n in (line.split(" ", 2) for line in f)}


def report(before_path, after_path, requests):
    before, after = load(before_path), load(after_path)
    by_name = {}
    for pid, (ticks, name) in after.items():
        used = ticks - before.get(pid, (0, name))[0]
        by_name[name.strip()] = by_name.get(name.strip(), 0) + used
    total = sum(by_name.values())
    per_request = lambda ticks: ticks * 1e6 / TICK / max(requests, 1)
    for name, ticks in sorted(by_name.items(), key=lambda kv: -kv[1]):
        if ticks > 0:
            print(f"  {name:<24} {per_request(ticks):7.0f} us/request")
    print(f"  {'total':<24} {per_request(total):7.0f} us/request")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "snapshot":
        snapshot(int(sys.argv[2]))
    elif len(sys.argv) == 5 and sys.argv[1] == "report":
        report(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit(__doc__)
