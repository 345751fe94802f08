"""Input and output of the transparency log's API (transparency/api/views.py)."""

from __future__ import annotations

from rest_framework import serializers

from chan_api.strict_input import QueryIntegerField

HEX_HASH = "SHA-256, lowercase hex."
MAX_SIZE = 2**62


class TreeHeadSerializer(serializers.Serializer):
    size = serializers.IntegerField(help_text="The number of leaves.")
    # "root" is also DRF's Field.root property; the metaclass moves the field out of the class.
    root = serializers.CharField(  # type: ignore[assignment]
        help_text=f"The Merkle tree's root (RFC 9162 §2.1): {HEX_HASH}"
    )
    timestamp = serializers.IntegerField(help_text="When it was signed: ms since the Unix epoch.")
    key_id = serializers.CharField(help_text="SHA-256 (hex) of the key's DER public key.")
    signature = serializers.CharField(
        help_text="Ed25519 over RFC 6962's TreeHeadSignature (0x00 0x01, the timestamp and the "
        "size as big-endian uint64, the 32-byte root), base64."
    )


class LogKeySerializer(serializers.Serializer):
    key_id = serializers.CharField(help_text="SHA-256 (hex) of the key's DER public key.")
    algorithm = serializers.CharField(help_text="`ed25519`.")
    public_key = serializers.CharField(help_text="The 32 raw bytes of the public key, base64.")
    public_key_pem = serializers.CharField(help_text="The same key as PEM (SubjectPublicKeyInfo).")


class ConsistencyQuerySerializer(serializers.Serializer):
    first = QueryIntegerField(
        min_value=0, max_value=MAX_SIZE, help_text="The size of the earlier tree."
    )
    second = QueryIntegerField(
        min_value=0, max_value=MAX_SIZE, help_text="The size of the later tree."
    )


class ConsistencyProofSerializer(serializers.Serializer):
    first = serializers.IntegerField()
    second = serializers.IntegerField()
    proof = serializers.ListField(
        child=serializers.CharField(), help_text=f"RFC 9162 §2.1.4's proof: {HEX_HASH}"
    )


class InclusionQuerySerializer(serializers.Serializer):
    leaf = serializers.CharField(help_text=f"The leaf's hash (SHA-256 of 0x00 ‖ data): {HEX_HASH}")
    size = QueryIntegerField(
        min_value=1, max_value=MAX_SIZE, help_text="The size of the tree to prove it in."
    )


class InclusionProofSerializer(serializers.Serializer):
    leaf = serializers.CharField()
    index = serializers.IntegerField(help_text="The leaf's position, from 0.")
    size = serializers.IntegerField()
    proof = serializers.ListField(
        child=serializers.CharField(), help_text=f"RFC 9162 §2.1.3's audit path: {HEX_HASH}"
    )


class LeafProofSerializer(serializers.Serializer):
    """A leaf's inclusion proof under a signed head given beside it."""

    leaf_hash = serializers.CharField(
        help_text=f"The leaf's hash (SHA-256 of 0x00 ‖ data): {HEX_HASH}"
    )
    index = serializers.IntegerField(help_text="The leaf's position, from 0.")
    proof = serializers.ListField(
        child=serializers.CharField(), help_text=f"RFC 9162 §2.1.3's audit path: {HEX_HASH}"
    )
