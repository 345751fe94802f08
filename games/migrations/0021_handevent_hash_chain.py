"""Tamper evidence for the hand's record (docs/audit.md).

* Each hand event gets ``prev_hash`` and ``hash`` (games.rules.chain): existing hands are
  chained in seq order here, ``BATCH`` hands at a time. The append-only trigger refuses UPDATE,
  so this migration disables it for itself inside its own transaction (as the owner: the
  ``ALTER TABLE`` holds the table's lock until the migration commits, so no other session ever
  sees the log unguarded) and enables it again before it commits.
* A BEFORE INSERT trigger refuses an event whose ``hash`` is not 64 lowercase hex digits or
  whose ``prev_hash`` is not its predecessor's ``hash`` (the hand's ``seed_hash`` for seq 0):
  an insert that bypasses ``hand_event_append`` cannot extend the chain without computing it.
* TRUNCATE of the hand log (games 0004) and of the ledger (accounts 0004, replaced by accounts
  0012) is allowed by ``chan.allow_log_truncate = 'on'`` only in a database whose name starts
  with ``test_`` (``chan_log_truncate_allowed``): no session setting opens it in production.
* A BEFORE UPDATE trigger guards the hand row: ``seq`` never goes down and rises only to the
  seq of an event already in the log; the deal's terms (table, number, seats, dealer, stake,
  room, mode, ruleset, previous winner, deck, seed, seed hash) never change, and the frozen fees
  and xướng sai rule are written at most once (NULL → value, for hands dealt before 0018);
  status only moves forward (playing → ended); the result, ``ended_at``, ``settled_at``,
  ``quan`` and ``voided_at`` are written once (NULL → value) and never changed afterwards.
"""

from django.db import migrations, models

BATCH = 1_000

TRUNCATE_ALLOWED = r"""
CREATE OR REPLACE FUNCTION chan_log_truncate_allowed(dbname text) RETURNS boolean AS $$
    SELECT dbname LIKE 'test\_%'
       AND current_setting('chan.allow_log_truncate', true) IS NOT DISTINCT FROM 'on';
$$ LANGUAGE sql STABLE;

CREATE OR REPLACE FUNCTION games_handevent_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' AND chan_log_truncate_allowed(current_database()) THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'games_handevent is append-only (% refused)', TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
"""

# Back to games 0004's function (any database honours the setting).
TRUNCATE_ANY = """
CREATE OR REPLACE FUNCTION games_handevent_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'TRUNCATE'
       AND current_setting('chan.allow_log_truncate', true) IS NOT DISTINCT FROM 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'games_handevent is append-only (% refused)', TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
"""

CHAIN = r"""
CREATE OR REPLACE FUNCTION games_handevent_chain() RETURNS trigger AS $$
DECLARE
    wanted text;
BEGIN
    IF NEW.hash IS NULL OR NEW.hash !~ '^[0-9a-f]{64}$' THEN
        RAISE EXCEPTION 'hand event %/% has no hash', NEW.hand_id, NEW.seq
            USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.seq = 0 THEN
        SELECT seed_hash INTO wanted FROM games_hand WHERE id = NEW.hand_id;
    ELSE
        SELECT hash INTO wanted FROM games_handevent
            WHERE hand_id = NEW.hand_id AND seq = NEW.seq - 1;
    END IF;
    IF wanted IS NULL OR NEW.prev_hash IS DISTINCT FROM wanted THEN
        RAISE EXCEPTION 'hand event %/%: prev_hash is not the previous event''s hash',
            NEW.hand_id, NEW.seq USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS games_handevent_chain ON games_handevent;
CREATE TRIGGER games_handevent_chain
    BEFORE INSERT ON games_handevent
    FOR EACH ROW EXECUTE FUNCTION games_handevent_chain();
"""

HAND_GUARD = """
CREATE OR REPLACE FUNCTION games_hand_guard() RETURNS trigger AS $$
BEGIN
    IF NEW.id IS DISTINCT FROM OLD.id OR NEW.table_id IS DISTINCT FROM OLD.table_id
       OR NEW.number IS DISTINCT FROM OLD.number OR NEW.n_seats IS DISTINCT FROM OLD.n_seats
       OR NEW.dealer IS DISTINCT FROM OLD.dealer OR NEW.stake IS DISTINCT FROM OLD.stake
       OR NEW.room_id IS DISTINCT FROM OLD.room_id OR NEW.mode IS DISTINCT FROM OLD.mode
       OR NEW.ruleset IS DISTINCT FROM OLD.ruleset
       OR NEW.previous_winner IS DISTINCT FROM OLD.previous_winner
       OR NEW.deck IS DISTINCT FROM OLD.deck OR NEW.seed IS DISTINCT FROM OLD.seed
       OR NEW.seed_hash IS DISTINCT FROM OLD.seed_hash
       OR (OLD.fees IS NOT NULL AND NEW.fees IS DISTINCT FROM OLD.fees)
       OR (OLD.xuong_sai_settled IS NOT NULL
           AND NEW.xuong_sai_settled IS DISTINCT FROM OLD.xuong_sai_settled) THEN
        RAISE EXCEPTION 'hand %: the terms of its deal never change', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF NEW.seq < OLD.seq OR (NEW.seq > OLD.seq AND NOT EXISTS (
        SELECT 1 FROM games_handevent WHERE hand_id = NEW.id AND seq = NEW.seq)) THEN
        RAISE EXCEPTION 'hand %: seq moves from % to % only with a new event',
            OLD.id, OLD.seq, NEW.seq USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF OLD.status = 'ended' AND NEW.status IS DISTINCT FROM 'ended' THEN
        RAISE EXCEPTION 'hand %: an ended hand stays ended', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF (OLD.result IS NOT NULL AND NEW.result IS DISTINCT FROM OLD.result)
       OR (OLD.ended_at IS NOT NULL AND NEW.ended_at IS DISTINCT FROM OLD.ended_at)
       OR (OLD.settled_at IS NOT NULL AND NEW.settled_at IS DISTINCT FROM OLD.settled_at)
       OR (OLD.quan IS NOT NULL AND NEW.quan IS DISTINCT FROM OLD.quan)
       OR (OLD.voided_at IS NOT NULL AND NEW.voided_at IS DISTINCT FROM OLD.voided_at) THEN
        RAISE EXCEPTION 'hand %: its result, end, settlement and void are written once', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS games_hand_guard ON games_hand;
CREATE TRIGGER games_hand_guard
    BEFORE UPDATE ON games_hand
    FOR EACH ROW EXECUTE FUNCTION games_hand_guard();
"""

DROP = """
DROP TRIGGER IF EXISTS games_hand_guard ON games_hand;
DROP FUNCTION IF EXISTS games_hand_guard();
DROP TRIGGER IF EXISTS games_handevent_chain ON games_handevent;
DROP FUNCTION IF EXISTS games_handevent_chain();
"""


def backfill_chain(apps, schema_editor):
    """Chain every existing hand's events in seq order (a hand at a time, BATCH per query)."""
    from games.rules.chain import event_hash

    Hand = apps.get_model("games", "Hand")
    HandEvent = apps.get_model("games", "HandEvent")
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("ALTER TABLE games_handevent DISABLE TRIGGER games_handevent_append_only")
        hands = Hand.objects.order_by("id").values_list("id", "seed_hash")
        last_id = 0
        while True:
            batch = list(hands.filter(id__gt=last_id)[:BATCH])
            if not batch:
                break
            last_id = batch[-1][0]
            seed_hashes = dict(batch)
            events = HandEvent.objects.filter(hand_id__in=seed_hashes).order_by("hand_id", "seq")
            prev: dict[int, str] = {}
            rows = []
            for e in events.values_list(
                "id", "hand_id", "seq", "type", "actor_seat", "system", "bot", "payload", "effects"
            ):
                pk, hand_id, seq, type_, seat, system, bot, payload, effects = e
                before = prev.get(hand_id, seed_hashes[hand_id])
                digest = event_hash(
                    hand=hand_id,
                    seq=seq,
                    type=type_,
                    actor_seat=seat,
                    system=system,
                    bot=bot,
                    payload=payload,
                    effects=effects,
                    prev=before,
                )
                prev[hand_id] = digest
                rows.append((before, digest, pk))
            cursor.executemany(
                "UPDATE games_handevent SET prev_hash = %s, hash = %s WHERE id = %s", rows
            )
        cursor.execute("ALTER TABLE games_handevent ENABLE TRIGGER games_handevent_append_only")


def forwards(apps, schema_editor):
    schema_editor.execute(TRUNCATE_ALLOWED + CHAIN + HAND_GUARD, params=None)


def backwards(apps, schema_editor):
    schema_editor.execute(DROP + TRUNCATE_ANY, params=None)


class Migration(migrations.Migration):
    dependencies = [("games", "0020_settled_voided_events")]

    operations = [
        migrations.AddField(
            model_name="handevent",
            name="prev_hash",
            field=models.CharField(
                default="",
                help_text="The previous event's hash (the hand's seed_hash for the deal).",
                max_length=64,
            ),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="handevent",
            name="hash",
            field=models.CharField(
                default="",
                help_text="SHA-256 (hex) of this event's canonical JSON (games.rules.chain).",
                max_length=64,
            ),
            preserve_default=False,
        ),
        migrations.RunPython(backfill_chain, migrations.RunPython.noop),
        migrations.RunPython(forwards, backwards),
    ]
