"""The ledger's hash chain: the hashing itself is pure and lives in the rules core
(``games.rules.ledger_chain``), so that the offline verifier shares it; the advisory lock that
serialises appends to the chain (accounts/ledger.py) is the ledger's own.
"""

from __future__ import annotations

from games.rules.ledger_chain import GENESIS, ledger_tx_hash

__all__ = ["GENESIS", "LEDGER_HEAD_LOCK", "ledger_tx_hash"]

# The transaction-level advisory locks that serialise appends to the chains: chain c's is
# LEDGER_HEAD_LOCK + c (accounts/ledger.py, accounts 0017).
LEDGER_HEAD_LOCK = 0x4C45444745525F48  # "LEDGER_H"
