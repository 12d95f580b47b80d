#!/usr/bin/env python3
"""CPU time and context switches of process trees, by process name, for "where the time goes"
in bench/invoke.sh.

  cpu_by_process.py snapshot ROOT_PID... > FILE   # every process of the trees under ROOT_PIDs
  cpu_by_process.py report BEFORE AFTER CALLS [--lines|--total]
                                                  # per call, by name, between two snapshots

A context switch is a thread going to sleep (voluntary: it waits for a message, a lock, a
reply) or being preempted (involuntary). On the invoke path nearly every voluntary one is a
thread that will be woken for the next message, and on a small VM waking a thread costs more
than handling the message it brings. The counts are summed over the threads of each process,
from /proc/PID/task/TID/status (the thread group leader's own line, /proc/PID/status, is one of
those; adding it again would count the leader twice).

Names group the processes of one kind (every PostgreSQL backend is "postgres", every Lua worker
"toolgate-lua-worker"). A process that exited between the snapshots (a worker recycled
mid-run) leaves its CPU time in its parent's count of reaped children: that shows as
"(exited:PARENT)", PARENT being the name of the process that reaped it. Its context switches,
and those of threads that exited, are lost, so the switch counts are a lower bound.

report prints a table; --lines prints one line per process for docs and scripts
(`CPU process=NAME cpu_us=.. voluntary=.. involuntary=..`, per call, then `CPU process=total`);
--total prints only "CPU_US SWITCHES" per call, for all processes together.
"""
import os
import sys

TICK = os.sysconf("SC_CLK_TCK")
EXITED = "(exited:{})"


def context_switches(pid):
    """(voluntary, involuntary) context switches, summed over the live threads of pid."""
    voluntary = involuntary = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0, 0
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        voluntary += int(line.split()[1])
                    elif line.startswith("nonvoluntary_ctxt_switches:"):
                        involuntary += int(line.split()[1])
        except OSError:
            pass
    return voluntary, involuntary


def processes():
    """pid -> (ppid, name, own CPU ticks, reaped children's CPU ticks) for every process now."""
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
        # utime, stime, cutime, cstime (proc(5): fields 14-17).
        out[int(entry)] = (int(fields[1]), name, int(fields[11]) + int(fields[12]),
                           int(fields[13]) + int(fields[14]))
    return out


def snapshot(roots):
    procs = processes()
    children = {}
    for pid, (ppid, _, _, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    stack, seen = list(roots), set()
    while stack:
        pid = stack.pop()
        if pid in procs and pid not in seen:
            seen.add(pid)
            stack.extend(children.get(pid, []))
    for pid in sorted(seen):
        ppid, name, ticks, reaped = procs[pid]
        voluntary, involuntary = context_switches(pid)
        print(pid, ppid, ticks, reaped, voluntary, involuntary, name)


def load(path):
    """pid -> (ppid, ticks, reaped ticks, voluntary, involuntary, name)."""
    out = {}
    with open(path) as f:
        for line in f:
            pid, ppid, ticks, reaped, voluntary, involuntary, name = \
                line.rstrip("\n").split(" ", 6)
            out[int(pid)] = (int(ppid), int(ticks), int(reaped), int(voluntary),
                             int(involuntary), name)
    return out


def per_name(before, after):
    """name -> [ticks, voluntary, involuntary] over the interval, exited processes included."""
    rows = {}
    for pid, (_, ticks, _, voluntary, involuntary, name) in after.items():
        old = before.get(pid, (0, 0, 0, 0, 0, name))
        row = rows.setdefault(name, [0, 0, 0])
        row[0] += ticks - old[1]
        row[1] += voluntary - old[3]
        row[2] += involuntary - old[4]
    # A process that exited was reaped by one still running: its whole lifetime's CPU is now in
    # that reaper's count of reaped children, less what it had used before the interval.
    reaped = {pid: r - before.get(pid, (0, 0, 0))[2] for pid, (_, _, r, _, _, _) in after.items()}
    for pid, (ppid, t, r, _, _, _) in before.items():
        if pid in after:
            continue
        while ppid in before and ppid not in after:  # reaped, in the end, by a live ancestor
            ppid = before[ppid][0]
        if ppid in reaped:
            reaped[ppid] -= t + r
    for pid, ticks in reaped.items():
        if ticks > 0:
            rows.setdefault(EXITED.format(after[pid][5]), [0, 0, 0])[0] += ticks
    return rows


def report(before_path, after_path, calls, mode):
    rows = per_name(load(before_path), load(after_path))
    calls = max(calls, 1)
    micros = lambda ticks: ticks * 1e6 / TICK / calls
    total = [sum(r[i] for r in rows.values()) for i in range(3)]
    if mode == "--total":
        print(f"{micros(total[0]):.0f} {(total[1] + total[2]) / calls:.1f}")
        return
    ordered = sorted(rows.items(), key=lambda kv: (-kv[1][0], kv[0])) + [("total", total)]
    if mode == "--lines":
        for name, (ticks, voluntary, involuntary) in ordered:
            print(f"CPU process={name} cpu_us={micros(ticks):.1f}"
                  f" voluntary={voluntary / calls:.2f} involuntary={involuntary / calls:.2f}")
        return
    print(f"| {'process':<26} | {'CPU µs':>7} | {'switches':>8} | {'voluntary':>9} |"
          f" {'involuntary':>11} |")
    print(f"|{'-' * 28}|{'-' * 8}:|{'-' * 9}:|{'-' * 10}:|{'-' * 12}:|")
    for name, (ticks, voluntary, involuntary) in ordered:
        exited = name.startswith("(exited:")
        switches = f"{(voluntary + involuntary) / calls:8.1f}" if not exited else f"{'-':>8}"
        print(f"| {name:<26} | {micros(ticks):7.0f} | {switches} |"
              f" {voluntary / calls:9.1f} | {involuntary / calls:11.1f} |")


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "snapshot":
        snapshot([int(a) for a in args[1:]])
    elif len(args) in (4, 5) and args[0] == "report" and args[4:] in ([], ["--lines"],
                                                                       ["--total"]):
        report(args[1], args[2], int(args[3]), args[4] if len(args) == 5 else "")
    else:
        sys.exit(__doc__)
