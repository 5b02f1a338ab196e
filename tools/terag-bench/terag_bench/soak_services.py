"""`terag bench-soak`'s processes and faults: the two `terag serve` processes (`Services`), and
when each fault happens (`faults`: kill -9 of a service, the managed Neo4j's restart)."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


class Services:
    """Two `terag serve` processes on free loopback ports, sharing a job queue of their own."""

    def __init__(self, env: dict[str, str], log_dir: Path, ready_s: float) -> None:
        from terag_bench.serve_clients import free_port

        self.env, self.log_dir, self.ready_s = env, log_dir, ready_s
        self.ports = [free_port(), free_port()]
        self.procs: list[subprocess.Popen[bytes] | None] = [None, None]
        self.pids: list[list[int]] = [[], []]
        # pid -> [service, RSS when ready, RSS at its end]: each process, the killed ones too
        self.rss: dict[int, list[float | None]] = {}

    def url(self, i: int) -> str:
        return f"http://127.0.0.1:{self.ports[i]}"

    def start(self, i: int, wait: bool = True) -> None:

        out = (self.log_dir / f"serve-{i}.log").open("ab")
        cmd = [sys.executable, "-m", "terag_neo4j.cli", "serve", "--port", str(self.ports[i])]
        proc = subprocess.Popen(cmd, env=self.env, stdout=out, stderr=subprocess.STDOUT)
        out.close()
        self.procs[i] = proc
        self.pids[i].append(proc.pid)
        if wait:
            self.wait(i)

    def wait(self, i: int) -> None:
        from terag_bench.serve_clients import wait_ready

        proc = self.procs[i]
        assert proc is not None
        wait_ready(self.url(i), proc, self.ready_s)
        self.rss.setdefault(proc.pid, [i, None, None])[1] = self.rss_mib(i)
        log.info("service %d ready (pid %d) on %s", i, proc.pid, self.url(i))

    def kill(self, i: int) -> None:
        proc = self.procs[i]
        if proc is not None:
            self.record_end(i)
            proc.kill()  # SIGKILL: no shutdown, its job's lease must run out
            proc.wait()

    def rss_mib(self, i: int) -> float | None:
        from terag_bench.runinfo import process_rss_mib

        proc = self.procs[i]
        mib = process_rss_mib(proc.pid).get("VmRSS") if proc and proc.poll() is None else None
        return round(mib, 1) if mib is not None else None

    def record_end(self, i: int) -> None:
        proc = self.procs[i]
        if proc is not None:
            self.rss.setdefault(proc.pid, [i, None, None])[2] = self.rss_mib(i)

    def rss_by_process(self) -> list[dict[str, Any]]:
        return [
            {"service": i, "pid": pid, "start_mib": start, "end_mib": end}
            for pid, (i, start, end) in self.rss.items()
        ]

    def stop(self) -> None:
        for proc in self.procs:
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def faults(
    seconds: float, services: Services, restart_neo4j: Callable[[], None] | None
) -> list[tuple[float, str, Callable[[], None]]]:
    """When each fault happens (fractions of the run): kill -9 of service 0 at a quarter and at
    three quarters (started again at once, not waited for), the Neo4j restart at half."""

    def kill_and_restart() -> None:
        # Started again at once, ready when it is: traffic meanwhile meets a refused connection
        # or its 503 while it loads, as clients of a crashed replica would
        services.kill(0)
        services.start(0, wait=False)

    out = [(0.25 * seconds, "kill -9 service 0", kill_and_restart)]
    if restart_neo4j is not None:
        out.append((0.5 * seconds, "restart Neo4j", restart_neo4j))
    out.append((0.75 * seconds, "kill -9 service 0", kill_and_restart))
    return out


def neo4j_restarter(settings: Any) -> Callable[[], None]:
    from terag_neo4j.local import neo4j_process as local
    from terag_neo4j.local.neo4j_home import ServerError

    def restart() -> None:
        if not local.stop(settings):
            raise ServerError("the managed Neo4j was not running: cannot restart it")
        local.start(settings)

    return restart
