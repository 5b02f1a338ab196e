"""Uploads go through the same readers as `terag index`, by content: a PDF, a .docx and an HTML
page uploaded to a real `terag serve` are indexed under their file names with their own text;
a scanned PDF is refused with the reader's one-line reason."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from terag_neo4j.client import TeragClient
from tests.fixtures.document_files import article_html, write_docx, write_pdf
from tests.service.conftest import Service
from tests.service.test_http import wait_job

pytestmark = pytest.mark.integration


def test_pdf_docx_and_html_uploads_are_read_by_content(service: Service, tmp_path: Path) -> None:
    name = f"svc-{uuid.uuid4().hex[:8]}-up"
    pdf = write_pdf(tmp_path / "a.pdf", ["Zeppelins flew over Lake Constance.", "Page two."])
    docx = write_docx(tmp_path / "b.docx", [("h1", "Gliders"), ("p", "Lilienthal flew gliders.")])
    page = article_html("Kites", [("History", "Kites came from China long ago.")])
    files = [
        ("files", ("a.pdf", pdf.read_bytes(), "application/pdf")),
        ("files", ("b.docx", docx.read_bytes(), "application/octet-stream")),
        ("files", ("c.html", page.encode(), "text/html")),
    ]
    with service.client() as http:
        try:
            r = http.post(f"/v1/namespaces/{name}/documents/upload", files=files)
            assert r.status_code == 202, r.text
            assert wait_job(http, r.json()["id"])["state"] == "succeeded"
            listed = http.get(f"/v1/namespaces/{name}/documents").json()["documents"]
            assert sorted(d["id"] for d in listed) == ["a.pdf", "b.docx", "c.html"]
            with TeragClient(service.settings) as client, client.store.session() as s:
                rows = s.run(
                    "MATCH (p:Passage {namespace: $ns}) RETURN p.doc_id AS d, p.text AS t",
                    ns=name,
                ).data()
            text = {r["d"]: r["t"] for r in rows}
            assert "Lake Constance" in text["a.pdf"] and "Page two." in text["a.pdf"]
            assert "Lilienthal" in text["b.docx"]
            assert "China" in text["c.html"] and "Products catalogue" not in text["c.html"]

            scan = write_pdf(tmp_path / "scan.pdf", [""], image_only=True).read_bytes()
            r = http.post(
                f"/v1/namespaces/{name}/documents/upload",
                files=[("files", ("scan.pdf", scan, "application/pdf"))],
            )
            assert r.status_code == 415
            assert "scan.pdf: no text layer" in r.text and "OCR" in r.text
            assert "terag-upload-" not in r.text  # the upload's name, not the temporary copy
        finally:
            http.delete(f"/v1/namespaces/{name}")


def test_jsonl_records_cite_the_uploaded_file_not_a_temporary_copy(service: Service) -> None:
    name = f"svc-{uuid.uuid4().hex[:8]}-jl"
    record = b'{"id": "r1", "text": "Pierre Curie was born in Paris."}\n'
    with service.client() as http:
        try:
            r = http.post(
                f"/v1/namespaces/{name}/documents/upload",
                files=[("files", ("records.jsonl", record, "application/json"))],
            )
            assert r.status_code == 202, r.text
            assert wait_job(http, r.json()["id"])["state"] == "succeeded"
            with TeragClient(service.settings) as client, client.store.session() as s:
                sources = s.run(
                    "MATCH (p:Passage {namespace: $ns}) RETURN DISTINCT p.source AS s", ns=name
                ).value()
            assert sources == ["records.jsonl:1"]
        finally:
            http.delete(f"/v1/namespaces/{name}")
