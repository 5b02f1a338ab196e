"""`uid_bounds` brackets a namespace's uids and no other namespace's: an export's keyset pages
read between them."""

from __future__ import annotations

import string

from terag_neo4j.core.concepts import Concept
from terag_neo4j.store.ids import NAMESPACE_RE, concept_uid, passage_uid, uid_bounds

# every character a namespace may hold, as prefixes, extensions and neighbours of one another
NAMES = ["n", "ns", "ns_x", "ns-x", "nsz", "nsZ", "ns0", "nz", "n_", "zz", "Z9", "ns_imp"]
IDS = ["", "0", "a|b", "~", "\U0010ffff", "doc#3", "}"]


def test_a_namespaces_uids_and_no_others_fall_between_its_bounds() -> None:
    assert set(string.ascii_letters + string.digits + "_-") < set(map(chr, range(ord("|"))))
    for ns in NAMES:
        assert NAMESPACE_RE.fullmatch(ns)
        low, high = uid_bounds(ns)
        for other in NAMES:
            uids = [passage_uid(other, i) for i in IDS if i]
            uids += [concept_uid(other, Concept(name="Ada", type="person"))]
            inside = [low < u < high for u in uids]
            assert all(inside) if other == ns else not any(inside), (ns, other)
