"""How namespaces, passages and concepts are named in the graph."""

from __future__ import annotations

import re
import unicodedata

from terag_neo4j.core.concepts import Concept

# Named here too: the store's callers read them from `store.ids` (`core.namespace_names`)
from terag_neo4j.core.namespace_names import NAMESPACE_RE as NAMESPACE_RE
from terag_neo4j.core.namespace_names import InvalidNamespace as InvalidNamespace
from terag_neo4j.core.namespace_names import check_namespace as check_namespace


def passage_uid(namespace: str, passage_id: str) -> str:
    return f"{namespace}|{passage_id}"


def concept_uid(namespace: str, concept: Concept) -> str:
    return f"{namespace}|{concept.key}"


def uid_bounds(namespace: str) -> tuple[str, str]:
    """Every uid of `namespace` sorts strictly between these two: `namespace|` and the string
    one past the separator (no namespace name holds a character that sorts after it)."""
    low = passage_uid(namespace, "")
    return low, low[:-1] + chr(ord(low[-1]) + 1)


# The walk's flags in a projection's name, in this order (`gds.projection_spec`): co-occurrence, synonyms,
# titles, noun chunks, adjacent passages. Every pattern below is made from this one list, so a
# new flag cannot make projections that eviction and a namespace's drop never find.
WALK_FLAGS = "cstna"
_WALK_CODE = "[du]" + "".join(f"{f}?" for f in WALK_FLAGS) + r"(?:h\d+)?(?:f\d+)?"


def projection_name_re(namespace: str | None = None, code: str | None = None) -> re.Pattern[str]:
    """Full-match pattern of the GDS graph names of one namespace (see `graph_name`), or of any
    namespace's (None: what eviction may drop).

    Namespaces may contain '_', so `wiki`'s pattern must not match `terag_wiki_en_utn_v3`: the
    walk code (orientation d/u, the `WALK_FLAGS` in their order, a hub cap h<n>, a fold's
    damping f<n>; default any)
    has no '_', and only `_v<n>[_<epoch>]` may follow it.
    """
    ns = re.escape(namespace) if namespace is not None else "[A-Za-z0-9][A-Za-z0-9_-]*"
    pattern = re.escape(code) if code else _WALK_CODE
    return re.compile(rf"terag_{ns}_(?P<walk>{pattern})_v(?P<version>\d+)(?:_[0-9a-f]{{8}})?")


# Each namespace has its own full-text and vector index over its own passages, which carry a
# label of the namespace: Lucene's BM25 statistics (document frequencies, average lengths,
# deleted documents until a merge) and the vector graph are then the namespace's alone, so one
# namespace's ranking never moves when another is written, deleted or merged.
def passage_label(namespace: str) -> str:
    """The label every passage of `namespace` carries (safe to splice: the name is checked)."""
    return f"Passage_{check_namespace(namespace)}"


def text_index(namespace: str) -> str:
    return f"terag_text_{check_namespace(namespace)}"


def vector_index(namespace: str) -> str:
    return f"terag_vector_{check_namespace(namespace)}"


# Letters that Unicode does not decompose into a base letter and a mark.
_FOLD = str.maketrans(
    {
        "ß": "ss",
        "æ": "ae",
        "Æ": "AE",
        "œ": "oe",
        "Œ": "OE",
        "ø": "o",
        "Ø": "O",
        "ł": "l",
        "Ł": "L",
        "đ": "d",
        "Đ": "D",
        "ð": "d",
        "Ð": "D",
        "þ": "th",
        "Þ": "Th",
        "\u0131": "i",  # dotless i
    }
)


def fold(text: str) -> str:
    """`text` without accents ("Osnabrück" -> "Osnabruck", "Straße" -> "Strasse"): what the
    full-text index holds and what questions are matched as, so accented and plain spellings
    meet. Neo4j's `english` analyzer stems but does not fold, and no built-in one does both."""
    if text.isascii():  # nothing to fold: _FOLD maps only non-ASCII characters
        return text
    decomposed = unicodedata.normalize("NFKD", text.translate(_FOLD))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))
