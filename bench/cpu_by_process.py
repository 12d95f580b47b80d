#!/usr/bin/env python3
"""CPU time of a process tree, by process name, for "where the time goes" in bench/invoke.sh.

  cpu_by_process.py snapshot ROOT_PID > FILE      # CPU time and context switches of ROOT_PID
                                                  # and of its descendants
  cpu_by_process.py report BEFORE AFTER REQUESTS  # CPU microseconds and context switches per
                                                  # request, by name

A context switch is a thread going to sleep (or being preempted): on the invoke path nearly every
one is a thread that will be woken for the next message, and on this VM waking a thread costs
more than handling the message it brings.

Names group the processes of one kind (every PostgreSQL backend is "postgres", every Lua worker
"toolgate-lua-worker"). Processes that exited between the snapshots are not counted (a worker
recycled mid-run), so the total is a lower bound.
"""
import os
import sys

TICK = os.sysconf("SC_CLK_TCK")


def context_switches(pid):
    """Voluntary plus involuntary context switches, summed over the threads of pid."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/status") as f:
                total += sum(int(line.split()[1]) for line in f if "ctxt_switches:" in line)
        except OSError:
            pass
    return total


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
        print(pid, ticks, context_switches(pid), name)


def load(path):
    with open(path) as f:
        return {int(p): (int(t), int(c), n.strip())
                for p, t, c, n in (line.split(" ", 3) for line in f)}


def report(before_path, after_path, requests):
    before, after = load(before_path), load(after_path)
    ticks_by_name, switches_by_name = {}, {}
    for pid, (ticks, switches, name) in after.items():
        old_ticks, old_switches, _ = before.get(pid, (0, 0, name))
        ticks_by_name[name] = ticks_by_name.get(name, 0) + ticks - old_ticks
        switches_by_name[name] = switches_by_name.get(name, 0) + switches - old_switches
    requests = max(requests, 1)
    micros = lambda ticks: ticks * 1e6 / TICK / requests
    print(f"  {'process':<24} {'CPU us':>7} {'switches':>9}   (per request)")
    for name, ticks in sorted(ticks_by_name.items(), key=lambda kv: -kv[1]):
        if ticks > 0 or switches_by_name[name] > 0:
            print(f"  {name:<24} {micros(ticks):7.0f} {switches_by_name[name] / requests:9.1f}")
    print(f"  {'total':<24} {micros(sum(ticks_by_name.values())):7.0f}"
          f" {sum(switches_by_name.values()) / requests:9.1f}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "snapshot":
        snapshot(int(sys.argv[2]))
    elif len(sys.argv) == 5 and sys.argv[1] == "report":
        report(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit(__doc__)
