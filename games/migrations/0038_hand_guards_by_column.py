"""The hand row's guards fire on the columns they guard (the lean move;
docs/decisions/fixed-statements.md).

Every move updates its hand's ``seq``, ``last_event_at``, ``deadline_at`` and ``updated_at``, and
both guards of the row ran on each such update: ``games_hand_guard`` (0021, 0035) compared the
deal's terms — the deck, the ruleset, the seeds and the rest, the jsonb ones decoded on both
sides — before its seq check, and ``games_hand_fair_deal_guard`` (0023) compared the seeds the
players gave. 0.07–0.16 ms of a move's 0.2–0.35 ms UPDATE was the guard (``EXPLAIN ANALYZE``'s
trigger times, warm), for columns a move never names.

Now each guard is a ``BEFORE UPDATE OF`` trigger on its own columns, which PostgreSQL fires only
for an UPDATE whose SET list names one of them:

* ``games_hand_terms_guard`` — the deal's terms never change (id, table, number, seats, dealer,
  stake, room, mode, ruleset, previous winner, deck, seed, seed hash) and the frozen fees and
  xướng sai rule are written at most once: the first check of 0021's guard, moved as it was;
* ``games_hand_guard`` — the rest of 0021's guard, unchanged: seq rises only to an event's seq
  (in the hand's partition, one generic plan: 0035), an ended hand stays ended, the result, end,
  settlement and void are written once; it fires on ``seq``, ``status``, ``result``,
  ``ended_at``, ``settled_at``, ``quan`` and ``voided_at`` (a move names ``seq``: this is the one
  guard a move runs);
* ``games_hand_fair_deal_guard`` — the same function, on ``client_seeds`` and ``next_seed_hash``.

What each refuses is unchanged: an UPDATE that changes a guarded column names it. (A BEFORE
trigger that changed NEW would escape ``UPDATE OF``; ``games_hand`` has none: its other BEFORE
trigger, ``games_hand_created_at_fixed``, only refuses.)
"""

from importlib import import_module

from django.db import migrations

HAND_GUARD_0021 = import_module("games.migrations.0021_handevent_hash_chain").HAND_GUARD
_0035 = import_module("games.migrations.0035_hand_updates_stay_on_their_page")
# The guard as 0035 left it (its whole CREATE, the trigger's too).
HAND_GUARD_0035 = (
    HAND_GUARD_0021.replace(_0035.UNPARTITIONED, _0035.BY_PARTITION)
    + "ALTER FUNCTION games_hand_guard() SET plan_cache_mode = force_generic_plan;"
)

TERMS = (
    "id, table_id, number, n_seats, dealer, stake, room_id, mode, ruleset, previous_winner,"
    " deck, seed, seed_hash, fees, xuong_sai_settled"
)
LIFE = "seq, status, result, ended_at, settled_at, quan, voided_at"
SEEDS = "client_seeds, next_seed_hash"

# 0021's first check, as it was, in a function of its own.
TERMS_CHECK_START = "    IF NEW.id IS DISTINCT FROM OLD.id"
TERMS_CHECK_END = "never change', OLD.id\n            USING ERRCODE = 'integrity_constraint_violation';\n    END IF;\n"
_start = HAND_GUARD_0035.index(TERMS_CHECK_START)
_end = HAND_GUARD_0035.index(TERMS_CHECK_END) + len(TERMS_CHECK_END)
TERMS_CHECK = HAND_GUARD_0035[_start:_end]
assert "NEW.deck IS DISTINCT FROM OLD.deck" in TERMS_CHECK and "NEW.seq" not in TERMS_CHECK

FORWARD = (
    f"""
CREATE FUNCTION games_hand_terms_guard() RETURNS trigger AS $$
BEGIN
{TERMS_CHECK}    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER games_hand_terms_guard
    BEFORE UPDATE OF {TERMS} ON games_hand
    FOR EACH ROW EXECUTE FUNCTION games_hand_terms_guard();
"""
    + HAND_GUARD_0035.replace(TERMS_CHECK, "")
    .replace("BEFORE UPDATE ON games_hand", f"BEFORE UPDATE OF {LIFE} ON games_hand")
    + f"""
DROP TRIGGER games_hand_fair_deal_guard ON games_hand;
CREATE TRIGGER games_hand_fair_deal_guard
    BEFORE UPDATE OF {SEEDS} ON games_hand
    FOR EACH ROW EXECUTE FUNCTION games_hand_fair_deal_guard();
"""
)
assert f"BEFORE UPDATE OF {LIFE} ON games_hand" in FORWARD

BACKWARD = (
    """
DROP TRIGGER games_hand_terms_guard ON games_hand;
DROP FUNCTION games_hand_terms_guard();
DROP TRIGGER games_hand_fair_deal_guard ON games_hand;
CREATE TRIGGER games_hand_fair_deal_guard
    BEFORE UPDATE ON games_hand
    FOR EACH ROW EXECUTE FUNCTION games_hand_fair_deal_guard();
"""
    + HAND_GUARD_0035
)


class Migration(migrations.Migration):
    dependencies = [("games", "0037_move_tables_without_prefix_indexes")]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
