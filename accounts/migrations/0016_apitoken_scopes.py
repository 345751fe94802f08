"""Tokens carry scopes (accounts/scopes.py). The tokens issued before scopes existed keep every
scope there was when scopes came (listed here by value, so a later scope is never granted to them
by this migration)."""

import django.contrib.postgres.fields
from django.db import migrations, models

import accounts.scopes

# Every scope as of this migration (docs/api.md: Scopes).
SCOPES_AT_0016 = ["read", "play", "bot:play", "ledger:read", "audit:read", "limits", "tokens"]


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0015_player_limits"),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="scopes",
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.CharField(max_length=32),
                default=list,
                help_text="What the token may do (accounts/scopes.py; docs/api.md: Scopes).",
                size=None,
            ),
        ),
        migrations.RunSQL(
            sql=[
                (
                    "UPDATE accounts_apitoken SET scopes = %s::varchar(32)[]"
                    " WHERE cardinality(scopes) = 0",
                    [SCOPES_AT_0016],
                )
            ],
            reverse_sql=migrations.RunSQL.noop,
        ),
        # New rows made without naming their scopes get every scope of their day.
        migrations.AlterField(
            model_name="apitoken",
            name="scopes",
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.CharField(max_length=32),
                default=accounts.scopes.all_scopes,
                help_text="What the token may do (accounts/scopes.py; docs/api.md: Scopes).",
                size=None,
            ),
        ),
        migrations.AddConstraint(
            model_name="apitoken",
            constraint=models.CheckConstraint(
                condition=models.Q(("scopes__len__gte", 1)), name="accounts_apitoken_has_a_scope"
            ),
        ),
    ]
