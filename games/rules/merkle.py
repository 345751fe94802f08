"""The Merkle tree of the transparency log (docs/audit.md), exactly as RFC 9162 §2.1 defines it
(the tree of RFC 6962, Certificate Transparency): SHA-256, a leaf's hash over ``0x00 ‖ data``,
a node's over ``0x01 ‖ left ‖ right``, the empty tree's the hash of nothing; the tree over ``n``
leaves splits at ``k``, the largest power of two below ``n``.

Pure, so that the server (which keeps the tree in PostgreSQL: ``transparency``) and the monitor
anyone can run (``python -m games.rules.verify monitor``) share it. The server does not keep the
whole tree in memory: every function that builds a root or a proof reads the tree through a
``Subtrees`` callable, the hash of the *perfect* subtree ``(level, index)`` (the ``2**level``
leaves from ``index * 2**level``). Every range RFC 9162's recursion visits splits into such
subtrees, so a root or a proof costs O(log² n) of them, whatever the log's size;
:func:`subtrees_needed` names them before they are read, for one query.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

HASH_SIZE = 32
EMPTY_ROOT = hashlib.sha256(b"").digest()

# The perfect subtree (level, index): the hash of leaves [index << level, (index + 1) << level).
Subtrees = Callable[[int, int], bytes]


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than ``n`` (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def _range_hash(start: int, size: int, subtree: Subtrees) -> bytes:
    """MTH of the ``size`` leaves from ``start`` (a range RFC 9162's recursion visits: ``start``
    is a multiple of the power of two at or above ``size``)."""
    if size & (size - 1) == 0:
        level = size.bit_length() - 1
        return subtree(level, start >> level)
    k = _split(size)
    return node_hash(_range_hash(start, k, subtree), _range_hash(start + k, size - k, subtree))


def root(size: int, subtree: Subtrees) -> bytes:
    """MTH(D[size]): the root of the tree of the first ``size`` leaves."""
    return EMPTY_ROOT if size == 0 else _range_hash(0, size, subtree)


def inclusion_proof(index: int, size: int, subtree: Subtrees) -> list[bytes]:
    """PATH(index, D[size]) (RFC 9162 §2.1.3.1): the inclusion proof of leaf ``index``."""
    if not 0 <= index < size:
        raise ValueError(f"leaf {index} is not in a tree of {size}")
    path: list[bytes] = []
    start, n, m = 0, size, index
    while n > 1:
        k = _split(n)
        if m < k:
            path.append(_range_hash(start + k, n - k, subtree))
            n = k
        else:
            path.append(_range_hash(start, k, subtree))
            start, n, m = start + k, n - k, m - k
    path.reverse()  # the recursion appends its sibling after the deeper part of the path
    return path


def consistency_proof(first: int, second: int, subtree: Subtrees) -> list[bytes]:
    """PROOF(first, D[second]) (RFC 9162 §2.1.4.1): empty when ``first`` is 0 or ``second``."""
    if not 0 <= first <= second:
        raise ValueError(f"no consistency proof from {first} to {second}")
    if first in (0, second):
        return []
    path: list[bytes] = []
    start, n, m, whole = 0, second, first, True
    while m != n:
        k = _split(n)
        if m <= k:
            path.append(_range_hash(start + k, n - k, subtree))
            n = k
        else:
            path.append(_range_hash(start, k, subtree))
            start, n, m, whole = start + k, n - k, m - k, False
    if not whole:
        path.append(_range_hash(start, n, subtree))
    path.reverse()
    return path


def subtrees_needed(build: Callable[[Subtrees], object]) -> list[tuple[int, int]]:
    """The perfect subtrees ``build`` reads (the shape of a proof does not depend on hashes), in
    the order it reads them: to fetch them all at once, then build again from what was read."""
    wanted: list[tuple[int, int]] = []

    def record(level: int, index: int) -> bytes:
        wanted.append((level, index))
        return EMPTY_ROOT

    build(record)
    return wanted


def leaves_subtrees(leaf_hashes: Sequence[bytes]) -> Subtrees:
    """The subtrees of a tree held whole in memory (tests, small trees)."""

    def subtree(level: int, index: int) -> bytes:
        if level == 0:
            return leaf_hashes[index]
        return node_hash(subtree(level - 1, 2 * index), subtree(level - 1, 2 * index + 1))

    return subtree


def frontier_after(size: int) -> list[tuple[int, int]]:
    """The perfect subtrees ``(level, index)`` that a tree of ``size`` leaves is made of, the
    largest first (its compact range): all a log needs to append the next leaves."""
    nodes = []
    start = 0
    for level in range(size.bit_length() - 1, -1, -1):
        if size & (1 << level):
            nodes.append((level, start >> level))
            start += 1 << level
    return nodes


def appended(
    size: int, frontier: Sequence[bytes], leaves: Sequence[bytes]
) -> tuple[list[bytes], list[tuple[int, int, bytes]]]:
    """Append ``leaves`` (leaf hashes) to a tree of ``size`` whose compact range (the hashes of
    :func:`frontier_after`'s subtrees, largest first) is ``frontier``: the new compact range and
    every perfect subtree ``(level, index, hash)`` completed on the way (the new leaves included)."""
    stack = list(zip([lv for lv, _ in frontier_after(size)], frontier, strict=True))
    made: list[tuple[int, int, bytes]] = []
    for leaf in leaves:
        level, digest, position = 0, leaf, size
        made.append((0, position, digest))
        while stack and stack[-1][0] == level:
            _, left = stack.pop()
            digest = node_hash(left, digest)
            level += 1
            made.append((level, position >> level, digest))
        stack.append((level, digest))
        size += 1
    return [digest for _, digest in stack], made


def verify_inclusion(
    index: int, size: int, leaf: bytes, proof: Sequence[bytes], root_hash: bytes
) -> bool:
    """Whether ``proof`` shows leaf hash ``leaf`` at ``index`` of the tree of ``size`` whose
    root is ``root_hash`` (RFC 9162 §2.1.3.2, step by step)."""
    if not 0 <= index < size or not _hashes(leaf, root_hash, *proof):
        return False
    fn, sn = index, size - 1
    r = leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            fn, sn = _to_odd(fn, sn)
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root_hash


def verify_consistency(
    first: int, second: int, first_root: bytes, second_root: bytes, proof: Sequence[bytes]
) -> bool:
    """Whether ``proof`` shows the tree of ``first`` leaves (root ``first_root``) to be a prefix
    of the tree of ``second`` (root ``second_root``): RFC 9162 §2.1.4.2, step by step, for
    ``0 < first < second``; a tree is consistent with itself (an empty proof, equal roots) and
    the empty tree with every tree (an empty proof)."""
    if not 0 <= first <= second or not _hashes(first_root, second_root, *proof):
        return False
    if first == 0:
        return not proof
    if first == second:
        return not proof and first_root == second_root
    if not proof:
        return False
    path = list(proof)
    if first & (first - 1) == 0:
        path.insert(0, first_root)
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            fn, sn = _to_odd(fn, sn)
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return fr == first_root and sr == second_root and sn == 0


def _to_odd(fn: int, sn: int) -> tuple[int, int]:
    """RFC 9162's "right-shift both fn and sn equally until either LSB(fn) is set or fn is 0"."""
    while fn and not fn & 1:
        fn >>= 1
        sn >>= 1
    return fn, sn


def _hashes(*values: bytes) -> bool:
    return all(isinstance(v, bytes) and len(v) == HASH_SIZE for v in values)
