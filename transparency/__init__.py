"""The transparency log (docs/audit.md): an append-only Merkle tree (RFC 9162) of the ledger's
transactions and the hands' heads, whose signed heads anyone may hold the server to."""
