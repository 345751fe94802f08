"""The ledger's row locks in the database take ``FOR NO KEY UPDATE`` (docs/decisions/row-locks-no-key-update.md).

``chan_ledger_lock`` (0017: the accounts of a posting, ascending id) and the hold trigger
``accounts_ledgerhold_post`` (0014: the wallet of a hold event) locked their account rows
``FOR UPDATE``, which also blocks the ``FOR KEY SHARE`` read of a deferred foreign key's check
at another transaction's COMMIT: a transaction that appended rows pointing at a locked row and
holds a lock the locker waits for then deadlocks at its commit. ``FOR NO KEY UPDATE`` excludes
every other locker just the same (an UPDATE of the balance takes it anyway) and lets the
foreign keys' checks through. The functions are rewritten from their own definitions, so the
rest of their bodies stays exactly as 0014 and 0017 left it.
"""

from django.db import migrations


def _rewrite(signature: str, old: str, new: str) -> str:
    return f"""
DO $rewrite$
DECLARE
    body text := pg_get_functiondef('{signature}'::regprocedure);
BEGIN
    IF position('{old}' IN body) = 0 THEN
        RAISE EXCEPTION '{signature}: no "{old}" to rewrite';
    END IF;
    EXECUTE replace(body, '{old}', '{new}');
END
$rewrite$;
"""


LOCK = "chan_ledger_lock(bigint[], integer, text)"
HOLD = "accounts_ledgerhold_post()"
FORWARD = _rewrite(LOCK, "ORDER BY a.id FOR UPDATE LOOP", "ORDER BY a.id FOR NO KEY UPDATE LOOP")
FORWARD += _rewrite(HOLD, "NEW.account_id FOR UPDATE;", "NEW.account_id FOR NO KEY UPDATE;")
BACKWARD = _rewrite(LOCK, "ORDER BY a.id FOR NO KEY UPDATE LOOP", "ORDER BY a.id FOR UPDATE LOOP")
BACKWARD += _rewrite(HOLD, "NEW.account_id FOR NO KEY UPDATE;", "NEW.account_id FOR UPDATE;")


class Migration(migrations.Migration):
    dependencies = [("accounts", "0022_ledger_entry_partitioned")]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
