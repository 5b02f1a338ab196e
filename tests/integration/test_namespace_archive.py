"""Namespace archives against the real Neo4j+GDS: a round trip keeps the fingerprint, the counts
and every question's top-10; each refused archive (corrupt, truncated, tampered, newer, hostile
paths and counts, links to nodes it lacks, another embedding model) leaves the target as it was;
a killed import's leftover is replaced by the next import; the CLI does both ends."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import threading
import uuid
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.errors import IngestCancelled
from terag_neo4j.indexing.namespace_import import import_archive
from terag_neo4j.store import NamespaceDropped, namespace_export
from terag_neo4j.store.archive_format import MANIFEST
from terag_neo4j.store.archive_rows import ArchiveError
from tests.integration.conftest import connection_env

pytestmark = pytest.mark.integration

QUESTIONS = [
    "Who designed the Volkswagen Beetle?",
    "Where is the headquarters of Porsche?",
    "Which city is the capital of Lower Saxony?",
    "Where was the Beetle built in Mexico?",
    "Who founded Porsche?",
]


@pytest.fixture(scope="module")
def archive(sample_client: TeragClient, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("archive") / "sample.zip"
    return sample_client.export_namespace(out, sample_client.settings.namespace)


@pytest.fixture
def fresh(sample_client: TeragClient) -> Iterator[str]:
    ns = f"imp-{uuid.uuid4().hex[:10]}"
    yield ns
    if sample_client.store.namespaces.exists(ns):
        sample_client.drop(ns)


def top10(client: TeragClient, ns: str, mode: str | None = None) -> list[list[str]]:
    return [
        [p.id for p in client.retrieve(q, top_k=10, namespace=ns, mode=mode).passages]
        for q in QUESTIONS
    ]


def counts(client: TeragClient, ns: str) -> tuple[int, ...]:
    i = client.stats(ns)
    return (i.passages, i.documents, i.concepts, i.has_passage, i.co_occurrence, i.input_tokens)


def test_a_round_trip_keeps_the_fingerprint_the_counts_and_every_top_10(
    sample_client: TeragClient, archive: Path, fresh: str
) -> None:
    src = sample_client.settings.namespace
    report = sample_client.import_namespace(archive, fresh)
    assert report.passages == sample_client.stats(src).passages > 0
    assert report.synonym > 0 and report.co_occurrence > 0
    store = sample_client.store
    assert store.namespaces.fingerprint(fresh) == store.namespaces.fingerprint(src)
    assert counts(sample_client, fresh) == counts(sample_client, src)
    for mode in (None, "flat", "dense"):
        assert top10(sample_client, fresh, mode) == top10(sample_client, src, mode), mode
    row = store.read("namespace_version", namespace=fresh)[0]
    want = store.read("namespace_version", namespace=src)[0]
    for key in ("embedding_model", "embedding_dimensions", "extractor", "model", "pairs"):
        assert row[key] == want[key], key
    # exported again, every member but the runs (renamed for their new namespace) is the
    # same bytes: rows and their keys come in an order of their own, not Neo4j's storage
    again = _members(sample_client.export_namespace(archive.with_name(f"{fresh}.zip"), fresh))
    first = _members(archive)
    assert set(again) == set(first)
    for name in set(first) - {"runs.jsonl", MANIFEST}:
        assert again[name] == first[name], name
    # the import finished: no mark left, and a second import into it is refused
    assert store.read("import_target", namespace=fresh)[0]["importing"] is None
    with pytest.raises(ArchiveError, match=r"holds .* passages"):
        sample_client.import_namespace(archive, fresh)


def _runs(lines: list[bytes], key: str) -> tuple[int, int]:
    """How many runs of one `key` value the rows make, and how many values there are."""
    values = [json.loads(line)[key] for line in lines]
    runs = sum(1 for i, v in enumerate(values) if i == 0 or values[i - 1] != v)
    return runs, len(set(values))


def test_links_in_any_order_import_the_same_graph(
    sample_client: TeragClient, archive: Path, fresh: str, tmp_path: Path
) -> None:
    """An export writes each passage's links and each concept's pairs together, which the
    import sends as one group; rows in any other order (as earlier exports wrote them) make
    the same graph."""
    members = _members(archive)
    for name, key in (("has_passage.jsonl", "passage"), ("co_occurrence.jsonl", "a")):
        lines = members[name].splitlines(keepends=True)
        runs, values = _runs(lines, key)
        assert runs == values > 1, name
        random.Random(7).shuffle(lines)
        assert _runs(lines, key)[0] > values, name
        members[name] = b"".join(lines)
    shuffled = _write(tmp_path / "shuffled.zip", members, reseal=True)
    sample_client.import_namespace(shuffled, fresh)
    src = sample_client.settings.namespace
    store = sample_client.store
    assert store.namespaces.fingerprint(fresh) == store.namespaces.fingerprint(src)
    assert counts(sample_client, fresh) == counts(sample_client, src)


def test_a_concepts_pairs_in_several_records_export_the_same_lines(
    sample_client: TeragClient, archive: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hub concept's pairs come from Neo4j a chunk at a time; two a record here."""
    monkeypatch.setattr(namespace_export, "PAIR_CHUNK", 2)
    chunked = _members(sample_client.export_namespace(tmp_path / "chunked.zip"))
    whole = _members(archive)
    for name in ("co_occurrence.jsonl", "synonym.jsonl"):
        lines = chunked[name].splitlines()
        assert sorted(lines) == sorted(whole[name].splitlines()), name
        runs, values = _runs(lines, "a")
        assert runs == values, name  # still one run a concept
    per_concept = Counter(
        json.loads(line)["a"] for line in chunked["co_occurrence.jsonl"].splitlines()
    )
    assert max(per_concept.values()) > 2  # some concept's pairs came in several records


def test_members_read_in_small_pages_export_the_same_lines(
    sample_client: TeragClient, archive: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each member is read a page of nodes a statement; three a page here, so every member
    takes several pages, and the lines are the same as in one page."""
    monkeypatch.setattr(namespace_export, "PAGE", 3)
    paged = _members(sample_client.export_namespace(tmp_path / "paged.zip"))
    whole = _members(archive)
    assert paged.keys() == whole.keys()
    for name in paged:
        if name.endswith(".jsonl"):
            assert sorted(paged[name].splitlines()) == sorted(whole[name].splitlines()), name
    assert len(whole["passages.jsonl"].splitlines()) > 3 * 2
    counts = json.loads(paged[MANIFEST])["counts"]
    assert counts == json.loads(whole[MANIFEST])["counts"]


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {i.filename: zf.read(i.filename) for i in zf.infolist()}


def _write(path: Path, members: dict[str, bytes], reseal: bool = False) -> Path:
    """Write `members` as an archive; `reseal`: the manifest's checksums made to match."""
    if reseal:
        manifest = json.loads(members[MANIFEST])
        for name, info in manifest["members"].items():
            data = members[name]
            info |= {
                "sha256": hashlib.sha256(data).hexdigest(),
                "bytes": len(data),
                "rows": data.count(b"\n"),
            }
        members = {**members, MANIFEST: json.dumps(manifest).encode()}
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def _manifest_edit(edit: Callable[[dict[str, object]], None]) -> Callable[[Path, Path], Path]:
    def make(src: Path, out: Path) -> Path:
        members = _members(src)
        manifest = json.loads(members[MANIFEST])
        edit(manifest)
        return _write(out, {**members, MANIFEST: json.dumps(manifest).encode()})

    return make


def _truncated(src: Path, out: Path) -> Path:
    data = src.read_bytes()
    out.write_bytes(data[: len(data) * 2 // 3])
    return out


def _corrupt(src: Path, out: Path) -> Path:
    data = bytearray(src.read_bytes())
    for i in range(len(data) // 3, len(data) // 3 + 64):  # inside the passages' deflated bytes
        data[i] ^= 0xFF
    out.write_bytes(bytes(data))
    return out


def _tampered(src: Path, out: Path) -> Path:
    members = _members(src)
    members["passages.jsonl"] = members["passages.jsonl"].replace(
        b"Porsche", b"Porshce", 1
    )  # same size: only the sha256 differs
    return _write(out, members)


def _traversal(src: Path, out: Path) -> Path:
    return _write(out, {**_members(src), "../../evil.jsonl": b"{}\n"})


def _dangling_link(src: Path, out: Path) -> Path:
    members = _members(src)
    extra = json.dumps({"concept": "entity:nobody", "passage": "nowhere#0"}).encode() + b"\n"
    members["has_passage.jsonl"] += extra
    return _write(out, members, reseal=True)


def _bad_row(src: Path, out: Path) -> Path:
    members = _members(src)
    members["concepts.jsonl"] += b'{"props": {"key": "x", "frequency": 1, "uid": "evil|x"}}\n'
    return _write(out, members, reseal=True)


def _newer(m: dict[str, object]) -> None:
    m["format_version"] = 99


def _huge_counts(m: dict[str, object]) -> None:
    m["members"]["passages.jsonl"]["rows"] = 10**12  # type: ignore[index]


REFUSED = {
    "truncated": (_truncated, "zip|corrupt"),
    "corrupt": (_corrupt, "corrupt|sha256|zip"),
    "tampered member": (_tampered, "does not match its manifest"),
    "newer format": (_manifest_edit(_newer), "format_version is 99, newer"),
    "path traversal member": (_traversal, "unexpected or repeated: '../../evil.jsonl'"),
    "oversize counts": (_manifest_edit(_huge_counts), "row count in the manifest"),
    "hostile row property": (_bad_row, "property name 'uid' is not allowed"),
}


@pytest.mark.adversarial
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_each_refused_archive_leaves_the_target_untouched(
    sample_client: TeragClient, archive: Path, fresh: str, tmp_path: Path, case: str
) -> None:
    make, message = REFUSED[case]
    bad = make(archive, tmp_path / "bad.zip")
    src = sample_client.settings.namespace
    before = (counts(sample_client, src), sample_client.store.namespaces.fingerprint(src))
    with pytest.raises(ArchiveError, match=message) as e:
        sample_client.import_namespace(bad, fresh)
    assert "\n" not in str(e.value)
    assert not sample_client.store.namespaces.exists(fresh)
    # into the source's own name: refused the same way, the source unchanged
    with pytest.raises(ArchiveError):
        sample_client.import_namespace(bad, src)
    after = (counts(sample_client, src), sample_client.store.namespaces.fingerprint(src))
    assert after == before


@pytest.mark.adversarial
def test_links_to_nodes_the_archive_lacks_leave_nothing_behind(
    sample_client: TeragClient, archive: Path, fresh: str, tmp_path: Path
) -> None:
    bad = _dangling_link(archive, tmp_path / "dangling.zip")
    with pytest.raises(ArchiveError, match="links 1 node"):
        sample_client.import_namespace(bad, fresh)
    assert not sample_client.store.namespaces.exists(fresh)
    assert not sample_client.store.read("import_target", namespace=fresh)


def test_another_embedding_model_is_refused_naming_the_setting(
    base_settings: Settings, sample_client: TeragClient, archive: Path, tmp_path: Path
) -> None:
    """The target records bge-small; an archive of another model is refused before writing."""
    src = sample_client.settings.namespace
    other = _manifest_edit(lambda m: m["embedding"].update(model="all-MiniLM-L6-v2"))  # type: ignore[attr-defined]
    bad = other(archive, tmp_path / "other-model.zip")
    before = counts(sample_client, src)
    with pytest.raises(ArchiveError, match=r"^TERAG_EMBEDDING_MODEL: .*all-MiniLM-L6-v2"):
        sample_client.import_namespace(bad, src)
    assert counts(sample_client, src) == before


def test_a_killed_imports_leftover_is_replaced_by_the_next_import(
    sample_client: TeragClient, archive: Path, fresh: str
) -> None:
    """A first import stopped after its first write (as kill -9 would leave it: marked, its
    lease given up); the next import, by the same token as a resumed job, drops it and ends
    with the source's fingerprint."""
    store = sample_client.store
    with pytest.raises(KeyboardInterrupt):

        def stop(what: str, n: int) -> None:
            if what == "concepts":
                raise KeyboardInterrupt

        import_archive(store, archive, fresh, token="job-1", progress=stop)
    # the failure dropped what it wrote; leave a leftover as kill -9 would, by hand
    assert not store.namespaces.exists(fresh)
    from terag_neo4j.indexing import namespace_import as ni

    zf, manifest = ni.open_archive(archive)
    with zf:
        ni._begin(store, fresh, zf, manifest, "job-1")
        partial = ni.ImportReport(fresh, "x")
        with pytest.raises(KeyboardInterrupt):
            ni._write(store, fresh, zf, manifest, partial, stop)
    assert store.read("import_target", namespace=fresh)[0]["importing"] == "job-1"
    report = import_archive(store, archive, fresh, token="job-1")
    assert report.passages > 0
    src = sample_client.settings.namespace
    assert store.namespaces.fingerprint(fresh) == store.namespaces.fingerprint(src)


@pytest.mark.parametrize("noticed", [True, False], ids=["noticed", "not-noticed"])
def test_an_import_that_lost_its_lease_leaves_the_next_workers_namespace_alone(
    sample_client: TeragClient,
    archive: Path,
    fresh: str,
    noticed: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Worker A stalls after its first batch of passages; its job's lease runs out and worker B
    (the same job, so the same token) drops A's leftover and imports the whole archive on its
    own thread. A then either learns it lost (its progress raises, as the import job's does) or
    goes on writing as if it had not; either way A's next batch is refused and A's cleanup
    leaves B's namespace whole (it dropped it: the defect this fences)."""
    store = sample_client.store
    monkeypatch.setattr(store, "write_batch", 2)  # several passage batches: A stops midway
    taken: list[object] = []

    def stalled(what: str, n: int) -> None:
        if what != "passages" or taken:
            return
        b = threading.Thread(
            target=lambda: taken.append(import_archive(store, archive, fresh, token="job-1"))
        )
        b.start()
        b.join()
        if noticed:
            raise IngestCancelled("import stopped: lost")

    with pytest.raises((IngestCancelled, NamespaceDropped)):
        import_archive(store, archive, fresh, token="job-1", progress=stalled)
    assert len(taken) == 1, "worker B's import did not finish"
    src = sample_client.settings.namespace
    assert store.namespaces.fingerprint(fresh) == store.namespaces.fingerprint(src)
    assert store.read("import_target", namespace=fresh)[0]["importing"] is None
    assert top10(sample_client, fresh) == top10(sample_client, src)


def test_the_cli_exports_and_imports(
    base_settings: Settings, sample_client: TeragClient, fresh: str, tmp_path: Path
) -> None:
    env = {**os.environ, **connection_env(base_settings)}
    src = sample_client.settings.namespace
    out = tmp_path / "cli.zip"
    cli = [sys.executable, "-m", "terag_neo4j.cli"]
    done = subprocess.run(
        [*cli, "export", src, str(out)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert not list(tmp_path.glob(".*.part"))
    done = subprocess.run(
        [*cli, "import", str(out), "-n", fresh, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["namespace"] == fresh
    store = sample_client.store
    assert store.namespaces.fingerprint(fresh) == store.namespaces.fingerprint(src)
    out.write_bytes(out.read_bytes()[:1000])
    done = subprocess.run(
        [*cli, "import", str(out), "-n", fresh + "x"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0 and len(done.stderr.strip().splitlines()) == 1, done.stderr
