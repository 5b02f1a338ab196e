"""GET /v1/jobs pages against a real `terag serve`: `limit` newest jobs after the `offset`
newest, oldest first, bounded (a limit over 1000 is a 422)."""

from __future__ import annotations

import uuid

from tests.service.conftest import Service


def test_the_job_list_pages_and_its_limit_is_bounded(service: Service) -> None:
    ns = f"svc-{uuid.uuid4().hex[:8]}-pages"
    with service.client() as http:
        made = []
        for i in range(3):
            r = http.post(
                f"/v1/namespaces/{ns}/documents",
                json={"documents": [{"id": f"page-{i}", "text": f"Page {i} of the list."}]},
            )
            assert r.status_code == 202, r.text
            made.append(r.json()["id"])
        everything = [j["id"] for j in http.get("/v1/jobs").json()]
        assert everything[-3:] == made  # oldest first, these the newest
        newest = http.get("/v1/jobs", params={"limit": 2}).json()
        older = http.get("/v1/jobs", params={"limit": 2, "offset": 2}).json()
        assert [j["id"] for j in newest] == made[1:]
        assert [j["id"] for j in older][-1] == made[0]
        assert http.get("/v1/jobs", params={"limit": 1001}).status_code == 422
        assert http.get("/v1/jobs", params={"offset": -1}).status_code == 422
