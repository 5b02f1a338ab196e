"""`terag bench-upgrade --from REV`: a database an older release built, served and written by
today's code.

The older release is installed as a user would have it: `git archive` of REV into a folder of
its own and a venv made there with `uv venv` and `uv pip install` of that checkout under its
own constraints.txt (kept in the cache, so a second run takes seconds). That release then
indexes a namespace, records the top-10 of each question, runs one service job to its end and
leaves another queued (upgrade_old.py). Today's code, on the same Neo4j, then reads it
(namespaces, counts, document ids, fingerprint, the same top-10s, the finished job's view),
runs the queued job with today's worker, writes a document, deletes one, runs a new job and
retrieves again. Every check is printed and written to `<out>/upgrade_<rev>.json`; the
command fails when one does.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from terag_neo4j.client import TeragClient
    from terag_neo4j.config import Settings
    from terag_neo4j.service.job_store import JobStore

log = logging.getLogger(__name__)

DEFAULT_OUT = Path("bench") / "results"
EXTRAS = "spacy,service"  # what the older release's half needs of it: spaCy and the job store
BUILD_TIMEOUT_S = 1800
OLD_TIMEOUT_S = 3600
JOB_TIMEOUT_S = 600
# Environment the older release must not see: this checkout on its path, this venv
HIDDEN = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")


def register_cli(subparsers: Any) -> None:
    s = subparsers.add_parser(
        "bench-upgrade",
        help="A database an older release built, served and written by today's code",
        description=__doc__,
    )
    s.add_argument("--from", dest="rev", required=True, metavar="REV", help="the older commit")
    s.add_argument(
        "--repo", type=Path, default=Path.cwd(), help="a git checkout holding REV (default: .)"
    )
    s.add_argument("--dataset", default="2wikimultihopqa", help="dataset folder, or its name")
    s.add_argument("--limit", type=int, default=200, help="first N passages (default 200)")
    s.add_argument("--questions", type=int, default=10, help="questions whose top-10 compare")
    s.add_argument(
        "--cache",
        type=Path,
        help="where the older release's venvs are kept (default: TERAG_HOME/upgrade)",
    )
    s.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})"
    )
    s.add_argument("--keep", action="store_true", help="leave the namespaces for a look")
    s.set_defaults(func=cmd_bench_upgrade)


# ---------------------------------------------------------------------- the older release


def resolve(repo: Path, rev: str) -> str:
    if rev.startswith("-"):  # git would read it as an option
        raise SystemExit(f"bench-upgrade: {rev!r} is not a commit")
    done = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"bench-upgrade: {rev!r} is not a commit of {repo}")
    return done.stdout.strip()


def old_release(repo: Path, sha: str, cache: Path) -> Path:
    """The older release's Python, its venv built on first use: REV's files (git archive),
    `uv venv`, `uv pip install` of them with their constraints.txt."""
    root = cache / sha[:12]
    python = root / "venv" / "bin" / "python"
    if (root / "ready").is_file() and python.is_file():
        return python
    shutil.rmtree(root, ignore_errors=True)
    src = root / "src"
    src.mkdir(parents=True)
    tar = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", sha],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        t.extractall(src, filter="data")
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    run = {"capture_output": True, "text": True, "timeout": BUILD_TIMEOUT_S, "env": _clean_env()}
    for cmd in (
        [uv, "venv", "-q", "--python", sys.executable, str(root / "venv")],
        [
            uv,
            "pip",
            "install",
            "-q",
            "--python",
            str(python),
            "-c",
            str(src / "constraints.txt"),
            f"{src}[{EXTRAS}]",
        ],
    ):
        done = subprocess.run(cmd, check=False, **run)  # type: ignore[call-overload]
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:]
            raise SystemExit(f"bench-upgrade: {' '.join(cmd[:3])} failed: {' '.join(tail)}")
    (root / "ready").write_text(sha, encoding="utf-8")
    return python


def _clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in HIDDEN}
    return {**env, **(extra or {})}


def run_old(python: Path, spec: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """The older release's half (upgrade_old.py), copied out of this package and run from a
    folder of its own, so only that release's terag_neo4j is importable."""
    with tempfile.TemporaryDirectory(prefix="terag-upgrade-") as tmp:
        script = Path(tmp) / "old_half.py"
        shutil.copyfile(Path(__file__).with_name("upgrade_old.py"), script)
        (Path(tmp) / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
        out = Path(tmp) / "out.json"
        done = subprocess.run(
            [str(python), str(script), "spec.json", str(out)],
            cwd=tmp,
            env=_clean_env(env),
            capture_output=True,
            text=True,
            timeout=OLD_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0 or not out.is_file():
            raise SystemExit(f"bench-upgrade: the older release failed:\n{done.stderr[-3000:]}")
        result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
        return result


# ---------------------------------------------------------------------- today's code


def run_jobs(client: TeragClient, jobs: JobStore, ids: list[str]) -> dict[str, str]:
    """Today's ingest worker, on the queue of `jobs`, until the jobs `ids` have ended."""
    from terag_neo4j.service.job_worker import Worker
    from terag_neo4j.service.runtime import Runtime

    runtime = cast(Runtime, SimpleNamespace(warm=True, client=client))
    worker = Worker(runtime, lease_s=30.0, retention_s=86400.0, queue=jobs.queue)
    worker.start()
    states: dict[str, str] = {}
    try:
        end = time.monotonic() + JOB_TIMEOUT_S
        while time.monotonic() < end and len(states) < len(ids):
            worker.wake()
            for i in ids:
                job = jobs.get(i)
                if job is not None and job.row["state"] in ("succeeded", "failed", "cancelled"):
                    states[i] = str(job.row["state"])
            time.sleep(0.5)
    finally:
        worker.close(timeout=30.0)
    return {i: states.get(i, "unfinished") for i in ids}


def check_today(settings: Settings, spec: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """Today's reads, writes, deletes, jobs and retrievals of what the older release left."""
    from terag_neo4j.client import TeragClient
    from terag_neo4j.core.documents import Document
    from terag_neo4j.service.job_store import JobStore

    ns, job_ns = spec["namespace"], spec["job_namespace"]
    checks: dict[str, bool] = {}
    facts: dict[str, Any] = {}
    with TeragClient(settings, namespace=ns) as client:
        listed = {n.name: n for n in client.namespaces()}
        checks["listed"] = ns in listed and listed[ns].passages == old["stats"]["passages"]
        info = client.stats(ns)
        stats = {
            "passages": info.passages,
            "concepts": info.concepts,
            "documents": info.documents,
            "has_passage": info.has_passage,
        }
        facts["stats"] = stats
        checks["same_counts"] = stats == old["stats"]
        ids = sorted(d.id for d in client.documents(ns, limit=1000).documents)
        checks["same_documents"] = ids == old["documents"]
        checks["same_fingerprint"] = client.store.namespaces.fingerprint(ns) == old["fingerprint"]
        questions = spec["questions"]
        top = [[p.id for p in client.retrieve(q, top_k=10).passages] for q in questions]
        same = sum(a == b for a, b in zip(top, old["top10"], strict=True))
        facts["same_top10"] = f"{same}/{len(questions)}"
        checks["same_top10"] = same == len(questions)

        jobs = JobStore(client.store, queue=spec["queue"])
        finished = jobs.get(old["finished_job"]["id"])
        view = finished.view() if finished is not None else None
        was = old["finished_job"]["view"] or {}
        checks["old_job_read"] = (
            view is not None
            and view.state == "succeeded"
            and view.kind == "ingest"
            and view.passages_done == was.get("passages_done")
            and view.documents_done == was.get("documents_done")
        )
        before_jobs = client.stats(job_ns).passages
        ran = run_jobs(client, jobs, [old["queued_job"]])
        facts["old_queued_job"] = ran
        checks["old_queued_job_ran"] = set(ran.values()) == {"succeeded"} and (
            client.stats(job_ns).passages > before_jobs
        )

        written = client.index(
            [Document(id="upgrade-new", text=spec["new_text"], title="Upgrade")],
            progress=False,
        )
        checks["write"] = written.passages_new > 0 and client.stats(ns).passages == (
            old["stats"]["passages"] + written.passages_new
        )
        gone = old["documents"][0]
        removed = client.delete(gone)
        left = {d.id for d in client.documents(ns, limit=1000).documents}
        checks["delete"] = removed > 0 and gone not in left and "upgrade-new" in left

        job = jobs.submit(
            job_ns,
            [Document(id="upgrade-job-new", text=spec["new_text"], title="Upgrade job")],
            "upgrade",
            settings.chunk_tokens,
        )
        ran = run_jobs(client, jobs, [job.id])
        view = jobs.get(job.id).view()  # type: ignore[union-attr]
        checks["new_job"] = ran[job.id] == "succeeded" and view.passages_done > 0

        after = [[p.id for p in client.retrieve(q, top_k=10).passages] for q in questions]
        prefix = gone + "#"
        checks["retrieve_after"] = all(
            len(a) == 10 and not any(p == gone or p.startswith(prefix) for p in a) for a in after
        )
        facts["same_top10_after_writes"] = sum(a == b for a, b in zip(after, top, strict=True))
    return {"checks": checks, **facts}


def spec_for(dataset: Any, limit: int, questions: int, sha: str) -> dict[str, Any]:
    tag = uuid.uuid4().hex[:6]
    docs = dataset.documents[:limit]
    fields = ("id", "text", "title", "source", "is_passage")
    rows = [{k: getattr(d, k) for k in fields} for d in docs]
    job_rows = [{**r, "id": f"job-{r['id']}"} for r in rows[:5]]
    queued_rows = [{**r, "id": f"queued-{r['id']}"} for r in rows[5:10]]
    return {
        "namespace": f"upgrade-{sha[:8]}-{tag}",
        "job_namespace": f"upgrade-{sha[:8]}-{tag}-jobs",
        "queue": f"upgrade-{tag}",
        "documents": rows,
        "job_documents": job_rows,
        "queued_documents": queued_rows,
        "questions": [q.question for q in dataset.questions[:questions]],
        "new_text": "Upgrade Hall is a concert hall in Wolfsburg, opened in 2026 by the city.",
    }


def upgrade(
    settings: Settings,
    repo: Path,
    rev: str,
    dataset: Any,
    limit: int,
    questions: int,
    cache: Path,
    old_env: dict[str, str],
    keep: bool = False,
) -> dict[str, Any]:
    """Build (or reuse) REV's venv, let it write, check today's code on what it wrote."""
    from terag_neo4j.client import TeragClient
    from terag_neo4j.store import NamespaceNotFound

    sha = resolve(repo, rev)
    t = time.perf_counter()
    python = old_release(repo, sha, cache)
    build_s = time.perf_counter() - t
    spec = spec_for(dataset, limit, questions, sha)
    t = time.perf_counter()
    old = run_old(python, spec, old_env)
    old_s = time.perf_counter() - t
    t = time.perf_counter()
    try:
        today = check_today(settings, spec, old)
    finally:
        if not keep:
            with TeragClient(settings) as client:
                for ns in (spec["namespace"], spec["job_namespace"]):
                    with contextlib.suppress(NamespaceNotFound):
                        client.drop(ns)
    today_s = time.perf_counter() - t
    return {
        "from": rev,
        "commit": sha,
        "passages": old["indexed"],
        "questions": len(spec["questions"]),
        "old_venv_s": round(build_s, 1),
        "old_run_s": round(old_s, 1),
        "today_s": round(today_s, 1),
        **today,
        "ok": all(today["checks"].values()),
    }


def cmd_bench_upgrade(args: argparse.Namespace) -> int:
    from terag_bench.datasets import load_dataset
    from terag_bench.runinfo import write_result
    from terag_neo4j.config import Settings

    settings = Settings().model_copy(update={"extractor": "spacy"})
    if settings.neo4j_uri is None:
        from terag_neo4j.local.neo4j_process import start

        start(settings)
    dataset = load_dataset(args.dataset, limit=args.questions)
    cache = args.cache or settings.home / "upgrade"
    load = os.getloadavg()
    result = upgrade(
        settings,
        args.repo,
        args.rev,
        dataset,
        args.limit,
        args.questions,
        cache,
        {"TERAG_EXTRACTOR": "spacy"},
        args.keep,
    )
    result["load_avg"] = [round(x, 2) for x in (*load, *os.getloadavg())]
    out = write_result(args.out, f"upgrade_{result['commit'][:8]}", result)
    for name, ok in result["checks"].items():
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
    print(
        f"from {args.rev} ({result['commit'][:8]}): {result['passages']} passages of "
        f"{dataset.name}; same top-10 {result['same_top10']}; the older venv "
        f"{result['old_venv_s']}s, its run {result['old_run_s']}s, today's checks "
        f"{result['today_s']}s; load {result['load_avg']}; wrote {out}"
    )
    return 0 if result["ok"] else 1
