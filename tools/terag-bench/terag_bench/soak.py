"""`terag bench-soak`: mixed traffic from several keys against two `terag serve` processes on one
Neo4j, for `--seconds` (default 10 minutes), while Neo4j is restarted once and one of the two
services is killed with SIGKILL twice (and started again each time).

Each key has a namespace of its own and three clients: one retrieves, one uploads small
documents of new ids, one polls its jobs; each request goes to either service, has a client
timeout, and is counted however it ends. An upload refused or cut off is sent again (the same
ids), as a client would; so are the documents of a job that ends failed. At the end every job is
waited for and every namespace listed: each document id accepted must be stored, once.

Reports errors by kind, requests that never ended (0: every request has a timeout), documents
accepted against documents stored, p50/p99 latency per kind, each service's RSS at start and end
(and its pids), and the load average; prints them and writes JSON under --out.

Needs the managed local Neo4j (`terag server start`; NEO4J_URI unset) to restart it; with
NEO4J_URI set, pass --no-neo4j-restart.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import secrets
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from terag_bench.soak_accounting import Ledger, account, table
from terag_bench.soak_services import Services, faults, neo4j_restarter
from terag_bench.soak_traffic import (
    REQUEST_TIMEOUT_S,
    Traffic,
    document,
    settle,
    stored_documents,
)
from terag_neo4j.errors import TeragError

log = logging.getLogger(__name__)

HELP = "Mixed traffic on two services for minutes while Neo4j restarts and one is killed twice"
DEFAULT_OUT = Path("bench") / "results"


def register_cli(subparsers: Any) -> None:
    s = subparsers.add_parser(
        "bench-soak",
        help=HELP,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("--seconds", type=float, default=600.0, help="traffic time (default 600)")
    s.add_argument("--keys", type=int, default=3, help="keys, each with its namespace (3)")
    s.add_argument("--docs-per-upload", type=int, default=2)
    s.add_argument("--upload-every", type=float, default=2.0, help="seconds between uploads")
    s.add_argument("--no-neo4j-restart", action="store_true", help="for a server not ours")
    s.add_argument("--settle", type=float, default=300.0, help="seconds to wait for jobs after")
    s.add_argument("--ready-timeout", type=float, default=600.0)
    s.add_argument("--out", type=Path, default=DEFAULT_OUT)
    s.add_argument("--name", default="soak", help="result file stem (default soak)")
    s.set_defaults(func=cmd_bench_soak)


def cmd_bench_soak(args: argparse.Namespace) -> int:
    from terag_bench.runinfo import write_result
    from terag_neo4j.config import Settings

    settings = Settings()
    restart_neo4j = None
    if not args.no_neo4j_restart:
        if settings.neo4j_uri is not None:
            from terag_bench.serve_clients import BenchServeError

            raise BenchServeError(
                "bench-soak restarts the managed Neo4j: unset NEO4J_URI, or pass --no-neo4j-restart"
            )
        from terag_neo4j.local.neo4j_process import start

        start(settings)
        restart_neo4j = neo4j_restarter(settings)
    tag = f"soak{os.getpid()}"
    keys = {f"{tag}-key{i}-{secrets.token_urlsafe(24)}": f"{tag}_k{i}" for i in range(args.keys)}
    env = {**os.environ, "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1")}
    env.update(
        TERAG_EXTRACTOR=env.get("TERAG_EXTRACTOR", "spacy"),
        TOKENIZERS_PARALLELISM="false",
        TERAG_SERVE_HOST="127.0.0.1",
        TERAG_JOB_QUEUE=tag,
        TERAG_API_KEYS=json.dumps(
            {k: {"namespaces": [ns], "access": "write"} for k, ns in keys.items()}
        ),
    )
    log_dir = Path(tempfile.mkdtemp(prefix=f"terag-{tag}-"))
    result: dict[str, Any] = {
        "seconds": args.seconds,
        "keys": args.keys,
        "load_average_start": os.getloadavg(),
        "service_logs": str(log_dir),
    }
    services = Services(env, log_dir, args.ready_timeout)
    ledger = Ledger()
    try:
        for i in (0, 1):
            services.start(i, wait=False)  # both load their models at once
        for i in (0, 1):
            services.wait(i)
        traffic = Traffic(services, keys, ledger, args.docs_per_upload, args.upload_every)
        for key, ns in keys.items():  # each namespace has a document before retrievals start
            while not traffic.upload(key, ns, [document(ns, -1)]):
                time.sleep(1.0)
        settle(traffic, keys, args.settle)
        traffic.t0 = time.monotonic()
        result["rss_start_mib"] = [services.rss_mib(0), services.rss_mib(1)]
        threads = traffic.threads(keys)
        for t in threads:
            t.start()
        done = []
        for at, what, fault in faults(args.seconds, services, restart_neo4j):
            traffic.stop.wait(max(0.0, at - (time.monotonic() - traffic.t0)))
            began = time.monotonic() - traffic.t0
            log.info("%.0f s: %s", began, what)
            fault()
            done.append({"at_s": round(began, 1), "what": what,
                           "took_s": round(time.monotonic() - traffic.t0 - began, 1)})  # fmt: skip
        traffic.stop.wait(max(0.0, args.seconds - (time.monotonic() - traffic.t0)))
        traffic.stop.set()
        for t in threads:
            t.join(REQUEST_TIMEOUT_S * 3)
        result["traffic_s"] = round(time.monotonic() - traffic.t0, 1)
        result["faults"] = done
        write_result(args.out, args.name, result)  # what is measured survives a later failure
        services.wait(0)  # the last restart is up before the end's RSS
        unfinished = settle(traffic, keys, args.settle)
        result["rss_end_mib"] = [services.rss_mib(0), services.rss_mib(1)]
        for i in (0, 1):
            services.record_end(i)
        result["rss_by_process"] = services.rss_by_process()
        result["service_pids"] = services.pids
        try:
            stored = stored_documents(services, keys, keys)
        except (httpx.HTTPError, TeragError) as e:  # the traffic's numbers are still reported
            log.error("listing the soak's documents failed: %s", e)
            result["listing_error"] = f"{type(e).__name__}: {e}"
            stored = {}
        result.update(account(ledger, stored, unfinished))
    finally:
        services.stop()
        _drop(settings, keys.values())
    result["load_average_end"] = os.getloadavg()
    path = write_result(args.out, args.name, result)
    print(table(result))
    print(f"wrote {path}")
    return 0 if result.get("lost_nothing") else 1


def _drop(settings: Any, namespaces: Any) -> None:
    from terag_neo4j.client import TeragClient

    try:
        with TeragClient(settings) as client:
            for ns in namespaces:
                if client.store.namespaces.exists(ns):
                    client.drop(ns)
    except Exception as e:  # the numbers are what matters; leftovers are named
        log.warning("could not drop the soak's namespaces %s: %s", list(namespaces), e)
