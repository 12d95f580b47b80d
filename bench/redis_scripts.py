#!/usr/bin/env python3
"""Redis's time inside billing's hold script, per hold, on an idle Redis of its own.

Starts redis-server (no persistence) on a free port in a temporary directory, loads
services/billing/scripts/hold.lua and runs it with redis-benchmark (one connection, fresh
execution ids each time) in batches of 1, 8 and 32 holds of one organization with a 150-byte
detail, then an empty script with the same keys and arguments (what passing them costs).
Reports INFO commandstats' time per hold. The system under load spends more than this (its
caches are shared, and commandstats counts wall time, descheduled time included): use it to
compare scripts, not to predict the system.

    bench/redis_scripts.py [scripts_per_run=4000]
"""
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 4000


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    port = str(free_port())
    data = tempfile.mkdtemp(prefix="redis-scripts-")
    server = subprocess.Popen(["redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no", "--dir", data], stdout=subprocess.DEVNULL)
    cli = lambda *a: subprocess.run(["redis-cli", "-p", port, *a], capture_output=True,
                                    text=True).stdout
    try:
        for _ in range(100):
            if cli("PING").strip() == "PONG":
                break
            time.sleep(0.05)  # not synchronisation of the measurement: waiting for the server
        cli("SET", "tg:bal:org-a", "1000000000000000000")
        scripts = os.path.join(ROOT, "services/billing/scripts")
        hold = open(f"{scripts}/prelude.lua").read() + open(f"{scripts}/hold.lua").read()

        def run(script, n):
            sha = cli("SCRIPT", "LOAD", script).strip()
            # burst, concurrency (off), the default allowance of uncharged timeouts in ms
            keys, args = ["tg:holds"], ["2000", "0", "3600000", "0"]
            for i in range(n):
                keys += ["tg:bal:org-a", "tg:res:org-a", "tg:conc:org-a", "tg:rl:key",
                         f"tg:hold:__rand_int__{i}", "tg:tmo:org-a"]
                # mode "hold", no budgets
                args += [f"e__rand_int__{i}", "100", "0", "99999999999", "org-a", "x" * 150,
                         "hold", "0"]
            cli("DEL", "tg:holds")
            cli("CONFIG", "RESETSTAT")
            subprocess.run(["redis-benchmark", "-p", port, "-c", "1", "-n", str(COUNT), "-r",
                            "1000000000", "--csv", "EVALSHA", sha, str(len(keys)), *keys, *args],
                           capture_output=True, check=True)
            m = re.search(r"cmdstat_evalsha:calls=(\d+),usec=(\d+)", cli("INFO", "commandstats"))
            return int(m.group(2)) / int(m.group(1)) / n

        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        print(f"## bench/redis_scripts.py {COUNT} ({now})")
        print("| script | holds per script | µs per hold |")
        print("|---|---:|---:|")
        for n in (1, 8, 32):
            print(f"| hold.lua | {n} | {run(hold, n):.2f} |")
        print(f"| empty (keys and arguments alone) | 8 | {run('return 1', 8):.2f} |")
    finally:
        server.kill()
        server.wait()
        subprocess.run(["rm", "-rf", data])


if __name__ == "__main__":
    main()
