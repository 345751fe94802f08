"""Limits players set for themselves: a row per limit (value in force, pending change),
the cooling-off periods and self-exclusions, and the history of every change.

``accounts_playerexclusion`` and ``accounts_playerlimitchange`` are append-only in PostgreSQL:
UPDATE and DELETE are refused by a row trigger and TRUNCATE by a statement trigger (the ledger's
``accounts_ledger_append_only``, migration 0004, which lets TRUNCATE pass only in a session with
``chan.allow_log_truncate = 'on'``: the test database). So nobody, staff included and whatever
the Python code does, shortens a self-exclusion or rewrites the history. Plain SQL (no
pgtrigger/pghistory: a fresh migrate stays fast).
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


APPEND_ONLY = """
CREATE TRIGGER accounts_playerexclusion_append_only
    BEFORE UPDATE OR DELETE ON accounts_playerexclusion
    FOR EACH ROW EXECUTE FUNCTION accounts_ledger_append_only();
CREATE TRIGGER accounts_playerexclusion_no_truncate
    BEFORE TRUNCATE ON accounts_playerexclusion
    FOR EACH STATEMENT EXECUTE FUNCTION accounts_ledger_append_only();
CREATE TRIGGER accounts_playerlimitchange_append_only
    BEFORE UPDATE OR DELETE ON accounts_playerlimitchange
    FOR EACH ROW EXECUTE FUNCTION accounts_ledger_append_only();
CREATE TRIGGER accounts_playerlimitchange_no_truncate
    BEFORE TRUNCATE ON accounts_playerlimitchange
    FOR EACH STATEMENT EXECUTE FUNCTION accounts_ledger_append_only();
"""

DROP = """
DROP TRIGGER IF EXISTS accounts_playerexclusion_append_only ON accounts_playerexclusion;
DROP TRIGGER IF EXISTS accounts_playerexclusion_no_truncate ON accounts_playerexclusion;
DROP TRIGGER IF EXISTS accounts_playerlimitchange_append_only ON accounts_playerlimitchange;
DROP TRIGGER IF EXISTS accounts_playerlimitchange_no_truncate ON accounts_playerlimitchange;
"""


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(APPEND_ONLY, params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0014_holds"),
    ]

    operations = [
        migrations.CreateModel(
            name="PlayerExclusion",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[("cool_off", "Cooling off"), ("self_exclusion", "Self-exclusion")],
                        max_length=16,
                    ),
                ),
                (
                    "days",
                    models.PositiveIntegerField(
                        blank=True, help_text="Empty: permanent.", null=True
                    ),
                ),
                ("starts_at", models.DateTimeField()),
                (
                    "ends_at",
                    models.DateTimeField(blank=True, help_text="Empty: permanent.", null=True),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="exclusions",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-starts_at", "-id"],
                "indexes": [models.Index(fields=["user", "-starts_at"], name="accounts_excl_user")],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("kind__in", ["cool_off", "self_exclusion"])),
                        name="accounts_playerexclusion_kind_known",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            models.Q(
                                ("days__gte", 1),
                                ("days__lte", 42),
                                ("ends_at__isnull", False),
                                ("kind", "cool_off"),
                            ),
                            models.Q(
                                ("days__gte", 183),
                                ("ends_at__isnull", False),
                                ("kind", "self_exclusion"),
                            ),
                            models.Q(
                                ("days__isnull", True),
                                ("ends_at__isnull", True),
                                ("kind", "self_exclusion"),
                            ),
                            _connector="OR",
                        ),
                        name="accounts_playerexclusion_days_in_range",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("ends_at__isnull", True),
                            ("ends_at__gt", models.F("starts_at")),
                            _connector="OR",
                        ),
                        name="accounts_playerexclusion_ends_after_start",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="PlayerLimit",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("loss_limit_day", "Loss limit per day"),
                            ("loss_limit_week", "Loss limit per week"),
                            ("loss_limit_month", "Loss limit per month"),
                            ("max_stake", "Highest stake"),
                            ("reminder_minutes", "Reality check every N minutes"),
                        ],
                        max_length=32,
                    ),
                ),
                ("value", models.PositiveBigIntegerField(blank=True, null=True)),
                ("pending_value", models.PositiveBigIntegerField(blank=True, null=True)),
                ("pending_at", models.DateTimeField(blank=True, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="limits",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["user_id", "kind"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("user", "kind"), name="accounts_playerlimit_one_kind"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            (
                                "kind__in",
                                [
                                    "loss_limit_day",
                                    "loss_limit_week",
                                    "loss_limit_month",
                                    "max_stake",
                                    "reminder_minutes",
                                ],
                            )
                        ),
                        name="accounts_playerlimit_kind_known",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("value__isnull", True), ("value__gte", 1), _connector="OR"
                        ),
                        name="accounts_playerlimit_value_positive",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("pending_at__isnull", False),
                            models.Q(("pending_at__isnull", True), ("pending_value__isnull", True)),
                            _connector="OR",
                        ),
                        name="accounts_playerlimit_pending_has_time",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="PlayerLimitChange",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("kind", models.CharField(max_length=32)),
                ("old_value", models.PositiveBigIntegerField(blank=True, null=True)),
                ("new_value", models.PositiveBigIntegerField(blank=True, null=True)),
                ("effective_at", models.DateTimeField()),
                ("created_at", models.DateTimeField()),
                (
                    "changed_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="limit_changes",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-id"],
                "indexes": [
                    models.Index(fields=["user", "-created_at"], name="accounts_limchg_user")
                ],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(
                            (
                                "kind__in",
                                [
                                    "loss_limit_day",
                                    "loss_limit_week",
                                    "loss_limit_month",
                                    "max_stake",
                                    "reminder_minutes",
                                    "cool_off",
                                    "self_exclusion",
                                ],
                            )
                        ),
                        name="accounts_playerlimitchange_kind_known",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("effective_at__gte", models.F("created_at"))),
                        name="accounts_playerlimitchange_not_backdated",
                    ),
                ],
            },
        ),
        migrations.RunPython(forwards, backwards),
    ]
