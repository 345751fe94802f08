"""The transparency log's tree (games.rules.merkle): RFC 6962 / RFC 9162's test vectors (the
8-leaf tree Certificate Transparency implementations test with), then random trees: every
inclusion and consistency proof verifies, and a tampered one does not."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.rules.merkle import (
    EMPTY_ROOT,
    appended,
    consistency_proof,
    frontier_after,
    inclusion_proof,
    leaf_hash,
    leaves_subtrees,
    root,
    subtrees_needed,
    verify_consistency,
    verify_inclusion,
)

LEAVES = [
    bytes.fromhex(h)
    for h in [
        "",
        "00",
        "10",
        "2021",
        "3031",
        "40414243",
        "5051525354555657",
        "606162636465666768696a6b6c6d6e6f",
    ]
]
# The roots of the trees of the first 1 … 8 leaves.
ROOTS = [
    bytes.fromhex(h)
    for h in [
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
        "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
        "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
        "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
        "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
    ]
]
# (leaf index, tree size, proof)
INCLUSION = [
    (0, 8, ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]),
    (5, 8, ["bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
    (2, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
    (1, 5, ["6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]),
    (0, 1, []),
]  # fmt: skip
# (first size, second size, proof)
CONSISTENCY = [
    (1, 1, []),
    (1, 8, ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]),
    (6, 8, ["0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
    (2, 5, ["5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]),
    (6, 7, ["0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
]  # fmt: skip

HASHES = [leaf_hash(d) for d in LEAVES]
TREE = leaves_subtrees(HASHES)


def test_the_empty_tree_s_root_is_the_hash_of_nothing() -> None:
    assert root(0, TREE) == EMPTY_ROOT == hashlib.sha256(b"").digest()


def test_a_leaf_is_hashed_with_0x00_and_a_node_with_0x01() -> None:
    assert HASHES[1] == hashlib.sha256(b"\x00\x00").digest()
    two = hashlib.sha256(b"\x01" + HASHES[0] + HASHES[1]).digest()
    assert root(2, TREE) == two


@pytest.mark.parametrize("size", range(1, 9))
def test_the_roots_of_the_rfc_vectors(size: int) -> None:
    assert root(size, TREE) == ROOTS[size - 1]


@pytest.mark.parametrize(("index", "size", "proof"), INCLUSION)
def test_the_inclusion_proofs_of_the_rfc_vectors(index: int, size: int, proof: list[str]) -> None:
    expected = [bytes.fromhex(h) for h in proof]
    assert inclusion_proof(index, size, TREE) == expected
    assert verify_inclusion(index, size, HASHES[index], expected, ROOTS[size - 1])


@pytest.mark.parametrize(("first", "second", "proof"), CONSISTENCY)
def test_the_consistency_proofs_of_the_rfc_vectors(
    first: int, second: int, proof: list[str]
) -> None:
    expected = [bytes.fromhex(h) for h in proof]
    assert consistency_proof(first, second, TREE) == expected
    assert verify_consistency(first, second, ROOTS[first - 1], ROOTS[second - 1], expected)


@pytest.mark.parametrize(("index", "size", "proof"), INCLUSION[:4])
def test_a_corrupted_inclusion_proof_of_the_vectors_fails(
    index: int, size: int, proof: list[str]
) -> None:
    path = [bytes.fromhex(h) for h in proof]
    leaf, top = HASHES[index], ROOTS[size - 1]
    some = bytes.fromhex("abacaba0" + "0" * 56)
    wrong = [
        (index - 1, size, leaf, path, top),
        (index + 1, size, leaf, path, top),
        (index ^ 2, size, leaf, path, top),
        (index, size * 2, leaf, path, top),
        (index, size // 2, leaf, path, top),
        (index, size, leaf_hash(b"WrongLeaf"), path, top),
        (index, size, leaf, path, EMPTY_ROOT),
        (index, size, leaf, path, some),
        (index, size, leaf, [*path, b""], top),
        (index, size, leaf, [*path, top], top),
        (index, size, leaf, [top, *path], top),
        (index, size, leaf, path[:-1], top),
        (index, size, leaf, [path[0], some, *path[1:]], top),
    ]
    for i in range(len(path)):
        flipped = list(path)
        flipped[i] = bytes([flipped[i][0] ^ 8]) + flipped[i][1:]
        wrong.append((index, size, leaf, flipped, top))
    for case in wrong:
        assert not verify_inclusion(*case), case


@pytest.mark.parametrize(("first", "second", "proof"), CONSISTENCY[1:])
def test_a_corrupted_consistency_proof_of_the_vectors_fails(
    first: int, second: int, proof: list[str]
) -> None:
    path = [bytes.fromhex(h) for h in proof]
    r1, r2 = ROOTS[first - 1], ROOTS[second - 1]
    wrong = [
        (first - 1, second, r1, r2, path),
        (first + 1, second, r1, r2, path),
        (first ^ 2, second, r1, r2, path),
        (first, second * 2, r1, r2, path),
        (first, second // 2, r1, r2, path),
        (first, second, leaf_hash(b"WrongRoot"), r2, path),
        (first, second, r1, leaf_hash(b"WrongRoot"), path),
        (first, second, r2, r1, path),
        (first, second, r1, r2, []),
        (first, second, r1, r2, [*path, r1]),
        (first, second, r1, r2, [*path, r2]),
        (first, second, r1, r2, [r1, *path]),
        (first, second, r1, r2, [path[0], *path]),
        (first, second, r1, r2, path[:-1]),
    ]
    for i in range(len(path)):
        flipped = list(path)
        flipped[i] = bytes([flipped[i][0] ^ 16]) + flipped[i][1:]
        wrong.append((first, second, r1, r2, flipped))
    for case in wrong:
        assert not verify_consistency(*case), case


def test_the_trivial_consistency_cases() -> None:
    assert verify_consistency(0, 0, ROOTS[0], ROOTS[1], [])
    assert verify_consistency(0, 5, ROOTS[0], ROOTS[4], [])
    assert verify_consistency(3, 3, ROOTS[2], ROOTS[2], [])
    assert not verify_consistency(3, 3, ROOTS[2], ROOTS[3], [])
    assert not verify_consistency(3, 3, ROOTS[2], ROOTS[2], [EMPTY_ROOT])
    assert not verify_consistency(2, 1, ROOTS[1], ROOTS[0], [])


def _tree(size: int) -> tuple[list[bytes], object]:
    hashes = [leaf_hash(i.to_bytes(4, "big")) for i in range(size)]
    return hashes, leaves_subtrees(hashes)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_every_proof_of_a_random_tree_verifies_and_a_tampered_one_does_not(
    data: st.DataObject,
) -> None:
    size = data.draw(st.integers(1, 300), label="size")
    hashes, tree = _tree(size)
    top = root(size, tree)  # type: ignore[arg-type]
    index = data.draw(st.integers(0, size - 1), label="index")
    path = inclusion_proof(index, size, tree)  # type: ignore[arg-type]
    assert verify_inclusion(index, size, hashes[index], path, top)
    assert not verify_inclusion(index, size, leaf_hash(b"other"), path, top)
    if path:
        at = data.draw(st.integers(0, len(path) - 1), label="tampered")
        tampered = list(path)
        tampered[at] = hashlib.sha256(tampered[at]).digest()
        assert not verify_inclusion(index, size, hashes[index], tampered, top)
        assert not verify_inclusion(index, size, hashes[index], path[:-1], top)
    if size > 1:
        assert not verify_inclusion((index + 1) % size, size, hashes[index], path, top)

    first = data.draw(st.integers(1, size), label="first")
    before = root(first, tree)  # type: ignore[arg-type]
    proof = consistency_proof(first, size, tree)  # type: ignore[arg-type]
    assert verify_consistency(first, size, before, top, proof)
    if first < size:
        at = data.draw(st.integers(0, len(proof) - 1), label="tampered consistency")
        tampered = list(proof)
        tampered[at] = hashlib.sha256(tampered[at]).digest()
        assert not verify_consistency(first, size, before, top, tampered)
        # a rewritten leaf before ``first``: the old root is no prefix of the new tree
        rewritten = list(hashes)
        rewritten[data.draw(st.integers(0, first - 1), label="rewritten")] = leaf_hash(b"x")
        other = leaves_subtrees(rewritten)
        new_top = root(size, other)
        assert not verify_consistency(
            first, size, before, new_top, consistency_proof(first, size, other)
        )


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=1, max_size=6))
def test_appending_in_batches_makes_the_subtrees_of_the_whole_tree(batches: list[int]) -> None:
    total = sum(batches)
    hashes, tree = _tree(total)
    stored: dict[tuple[int, int], bytes] = {}
    size, frontier = 0, []
    for batch in batches:
        assert [stored[node] for node in frontier_after(size)] == frontier
        frontier, made = appended(size, frontier, hashes[size : size + batch])
        stored.update({(level, index): digest for level, index, digest in made})
        size += batch
        needed = subtrees_needed(lambda s, n=size: root(n, s))
        assert all(node in stored for node in needed)
        assert root(size, lambda lv, i: stored[(lv, i)]) == root(size, tree)  # type: ignore[arg-type]
    for level, index in stored:
        assert stored[(level, index)] == tree(level, index)  # type: ignore[operator]
