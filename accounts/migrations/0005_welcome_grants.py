"""Book the 50,000 Quan welcome grant (settings.CHAN_WELCOME_GRANT) for every user registered
before the ledger existed, demo players included: one issuance transaction each, keyed
``grant:welcome:<user id>`` like the grant ``user_register`` books, so it is never booked twice.
"""

from django.conf import settings
from django.db import migrations
from django.db.models import F


def forwards(apps, schema_editor):
    User = apps.get_model("accounts", "User")
    Account = apps.get_model("accounts", "LedgerAccount")
    Transaction = apps.get_model("accounts", "LedgerTransaction")
    Entry = apps.get_model("accounts", "LedgerEntry")
    amount = settings.CHAN_WELCOME_GRANT
    # run again on a schema with sub-accounts (accounts 0017): the issuance parent, chain 0
    sharded = any(field.name == "parent" for field in Account._meta.get_fields())
    issuance, _ = Account.objects.get_or_create(
        kind="issuance", **({"parent": None} if sharded else {})
    )
    chained = any(field.name == "hash" for field in Transaction._meta.get_fields())
    for user in User.objects.order_by("pk"):
        key = f"grant:welcome:{user.pk}"
        if Transaction.objects.filter(idempotency_key=key).exists():
            continue
        wallet, _ = Account.objects.get_or_create(kind="wallet", user=user)
        legs = sorted([(issuance, -amount), (wallet, amount)], key=lambda leg: leg[0].pk)
        link = {}
        if chained:  # run again on a schema with the chain (accounts 0012): link it
            from accounts.ledger_hash import GENESIS, ledger_tx_hash

            chain = Transaction.objects.filter(chain=0) if sharded else Transaction.objects
            prev = chain.order_by("-id").values_list("hash", flat=True).first()
            prev = prev or GENESIS
            entries = [(account.pk, leg) for account, leg in legs]
            link = {
                "prev_hash": prev,
                "hash": ledger_tx_hash(
                    prev=prev,
                    kind="welcome_grant",
                    key=key,
                    memo="Welcome grant",
                    user=user.pk,
                    hand=None,
                    table=None,
                    entries=entries,
                ),
            }
        macked = any(field.name == "mac" for field in Transaction._meta.get_fields())
        if chained and macked:  # run again on a schema with the records' MACs (accounts 0029)
            from accounts.record_keys import record_keys
            from games.rules.record_mac import LEDGER, record_mac

            link["mac"], link["mac_key"] = record_mac(
                record_keys(), domain=LEDGER, digest=link["hash"]
            )
        tx = Transaction.objects.create(
            kind="welcome_grant", idempotency_key=key, user=user, memo="Welcome grant", **link
        )
        # run again on a partitioned schema (accounts 0022): the entries carry their key
        keyed = any(field.name == "transaction_created_at" for field in Entry._meta.get_fields())
        key_of = {"transaction_created_at": tx.created_at} if keyed else {}
        for account, leg in legs:  # the entry trigger moves the balance and sets balance_after
            Entry.objects.create(
                transaction=tx,
                account=account,
                amount=leg,
                balance_after=account.balance,
                **key_of,
            )


class Migration(migrations.Migration):
    dependencies = [("accounts", "0004_ledger_triggers")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
