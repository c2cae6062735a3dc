"""The reading order of keys by their SHA-256 digests, as plain indices (see ``_order``).

Apart from ``_order`` so that a store keeping a run's reading order with its values
works it out without NumPy.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Sequence


def key_digest(key: Hashable) -> bytes:
    return hashlib.sha256(str(key).encode("utf-8")).digest()


def digest_order(keys: Sequence[Hashable]) -> list[int]:
    """Indices that read the entries in the order of their keys' SHA-256 digests.

    Ties (equal keys) keep their given order; callers pass distinct keys.
    """
    digests = [key_digest(key) for key in keys]
    return sorted(range(len(digests)), key=digests.__getitem__)
