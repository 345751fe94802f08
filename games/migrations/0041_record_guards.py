"""A hand ends only with the event that ends it; a dealt seat keeps its player.

* ``games_hand_end_guard``: a hand row moves to ``status = 'ended'`` only if the hand's last event
  (``seq`` = the row's new ``seq``) was inserted by this very database transaction and is an
  ending event that says what the stored result says: outcome ``u`` — a ``declare`` by the seat
  the outcome and the win name; ``u_lao`` — the event's effects hold the ``u_lao`` fault of that
  seat; ``hoa`` — the effects hold ``hoa`` (games.rules.engine). What the rules derive beyond
  that (the declaration judged, the settlement) is not replayed here: the verifier does it.
* ``games_handseat_guard``: who sits where in a hand (``hand_id``, ``user_id``, ``position``,
  ``table_seat``) never changes, and no seat is added to or taken from a hand once its deal is
  logged (the seats are inserted just before the deal event: games.services.tables.hand_start).
  The application's role also lacks ``UPDATE`` on those columns (core/db_roles.py).
"""

from django.db import migrations

PATH = "SET search_path = pg_catalog, public, pg_temp"

FORWARD = f"""
CREATE FUNCTION public.games_hand_end_guard() RETURNS trigger
LANGUAGE plpgsql {PATH} AS $$
DECLARE
    ending record;
    outcome text := NEW.result -> 'outcome' ->> 'result';
    seat integer := (NEW.result -> 'outcome' ->> 'seat')::integer;
    said boolean;
BEGIN
    IF NEW.status IS DISTINCT FROM 'ended' OR OLD.status IS NOT DISTINCT FROM 'ended' THEN
        RETURN NEW;
    END IF;
    SELECT e.xmin, e.type, e.actor_seat, e.effects INTO ending FROM public.games_handevent e
        WHERE e.hand_id = NEW.id AND e.hand_created_at = NEW.created_at AND e.seq = NEW.seq;
    IF NOT FOUND OR NOT public.chan_row_inserted_here(ending.xmin) OR EXISTS (
        SELECT 1 FROM public.games_handevent e
        WHERE e.hand_id = NEW.id AND e.hand_created_at = NEW.created_at AND e.seq > NEW.seq
    ) THEN
        RAISE EXCEPTION 'hand %: it ends only with the event that ends it, appended by the same '
            'database transaction (seq %)', OLD.id, NEW.seq
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    said := CASE outcome
        WHEN 'u' THEN ending.type = 'declare' AND ending.actor_seat = seat
            AND (NEW.result -> 'win' ->> 'seat')::integer IS NOT DISTINCT FROM seat
        WHEN 'u_lao' THEN ending.effects @> pg_catalog.jsonb_build_array(
            pg_catalog.jsonb_build_object('type', 'fault', 'fault', 'u_lao', 'seat', seat))
        WHEN 'hoa' THEN ending.effects @> '[{{"type": "hoa"}}]'::jsonb
        ELSE false
    END;
    IF NOT coalesce(said, false) THEN
        RAISE EXCEPTION 'hand %: its result (%) is not what its last event (seq %, %) says',
            OLD.id, NEW.result -> 'outcome', NEW.seq, ending.type
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER games_hand_end_guard BEFORE UPDATE OF status ON public.games_hand
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION public.games_hand_end_guard();

CREATE FUNCTION public.games_handseat_guard() RETURNS trigger
LANGUAGE plpgsql {PATH} AS $$
DECLARE
    hand bigint;
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF NEW.hand_id IS DISTINCT FROM OLD.hand_id OR NEW.user_id IS DISTINCT FROM OLD.user_id
           OR NEW.position IS DISTINCT FROM OLD.position
           OR NEW.table_seat IS DISTINCT FROM OLD.table_seat THEN
            RAISE EXCEPTION 'hand %: who sits where never changes (seat %)',
                OLD.hand_id, OLD.position USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
    END IF;
    hand := CASE TG_OP WHEN 'INSERT' THEN NEW.hand_id ELSE OLD.hand_id END;
    IF EXISTS (
        SELECT 1 FROM public.games_hand h JOIN public.games_handevent e
            ON e.hand_id = h.id AND e.hand_created_at = h.created_at
        WHERE h.id = hand
    ) THEN
        RAISE EXCEPTION 'hand %: its seats are set at the deal (% refused)', hand, TG_OP
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN CASE TG_OP WHEN 'INSERT' THEN NEW ELSE OLD END;
END;
$$;

CREATE TRIGGER games_handseat_guard
    BEFORE INSERT OR DELETE OR UPDATE OF hand_id, user_id, position, table_seat
    ON public.games_handseat FOR EACH ROW EXECUTE FUNCTION public.games_handseat_guard();
"""

BACKWARD = """
DROP TRIGGER games_handseat_guard ON public.games_handseat;
DROP FUNCTION public.games_handseat_guard();
DROP TRIGGER games_hand_end_guard ON public.games_hand;
DROP FUNCTION public.games_hand_end_guard();
"""


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0040_tournamententry_pairings_waited"),
        ("accounts", "0028_privileged_writers"),
    ]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
