"""Skill ratings: openskill's Plackett–Luce model (Weng–Lin), one rating per player
and ruleset family (the preset of the hand's frozen ruleset), chosen on our own self-play hands
(bench/rating_eval.py, docs/decisions/ratings-and-leaderboards.md).

* A rated hand is an ended, settled hand of 2–4 seats at a table that is not a practice table
  (practice tables are the only ones with server bots). The winner ranks first and the other
  seats tie second; a hòa ties everyone.
* :func:`hand_rate` is called by ``hand_settle`` inside its transaction, after the XP, and runs
  once per hand: the ``RatingChange`` rows are unique per (hand, player, reversal) and
  ``hand_settle`` only reaches it on the booking run (``settled_at`` guards it).
* :func:`hand_unrate` is called by ``hand_void`` in its transaction: each player's rating moves
  back by the hand's change (mu and sigma by the differences recorded; later hands stay) and its
  rated hands count goes down by one, recorded as a ``reversal`` row.
* A rating is provisional until :data:`PROVISIONAL_HANDS` rated hands.

Lock order: after the user rows (``hand_award_xp``), the players' rating rows in user id order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.utils import timezone
from openskill.models import PlackettLuce

from games.models import Hand, PlayerRating, RatingChange
from games.rating_terms import PROVISIONAL_HANDS
from games.services.feed import FeedNote

RATING_BASE, RATING_SCALE = 1500, 40
_MODEL = PlackettLuce()
MU0, SIGMA0 = _MODEL.mu, _MODEL.sigma


def shown_rating(mu: float, sigma: float) -> int:
    """The number shown for a rating: 1500 + 40 × (mu − 3·sigma), rounded (1500 at the start)."""
    return round(RATING_BASE + RATING_SCALE * (mu - 3 * sigma))


def hand_family(hand: Hand) -> str:
    """The ruleset family a hand is rated in: the preset of its frozen ruleset (read from the
    stored record, which names it in both its forms, without building the ruleset)."""
    preset = (hand.ruleset or {}).get("preset") if isinstance(hand.ruleset, dict) else None
    return preset or hand.frozen_ruleset().preset


def hand_is_rated(hand: Hand) -> bool:
    return not hand.table.practice and 2 <= hand.n_seats <= 4


@dataclass(frozen=True, slots=True)
class Rated:
    user_id: int
    before: int
    after: int
    hands: int


_LOCK_SQL = """
WITH rated AS (
    SELECT EXISTS (SELECT 1 FROM games_ratingchange WHERE hand_id = %(hand)s AND NOT reversal) AS r
), fresh AS (
    INSERT INTO games_playerrating (user_id, family, mu, sigma, rating, hands, updated_at)
    SELECT u, %(family)s, %(mu)s, %(sigma)s, %(rating)s, 0, now()
    FROM unnest(%(users)s::bigint[]) AS u
    WHERE NOT (SELECT r FROM rated)
    ORDER BY u
    ON CONFLICT (user_id, family) DO NOTHING
    RETURNING id, user_id, mu, sigma, rating, hands
), held AS (
    SELECT id, user_id, mu, sigma, rating, hands FROM games_playerrating
    WHERE family = %(family)s AND user_id = ANY(%(users)s::bigint[])
    ORDER BY user_id FOR NO KEY UPDATE
)
SELECT (SELECT r FROM rated), id, user_id, mu, sigma, rating, hands FROM fresh
UNION ALL
SELECT (SELECT r FROM rated), id, user_id, mu, sigma, rating, hands FROM held
"""


def _locked_ratings(user_ids: list[int], family: str, *, hand_id: int | None = None) -> Any:
    """The players' rating rows in this family, created at the start values when missing,
    locked in user id order — one statement, which also says whether the hand ``hand_id`` has
    been rated (then ``None`` is returned). A row another settlement created meanwhile (the
    statement's snapshot misses it) sends this to the ORM's two statements."""
    params = {
        "hand": hand_id or 0,
        "family": family,
        "mu": MU0,
        "sigma": SIGMA0,
        "rating": shown_rating(MU0, SIGMA0),
        "users": sorted(user_ids),
    }
    with connection.cursor() as cursor:
        cursor.execute(_LOCK_SQL, params)
        found = cursor.fetchall()
    if found and found[0][0]:
        return None
    rows = {}
    for _rated, pk, user_id, mu, sigma, rating, hands in found:
        row = PlayerRating(
            pk=pk, user_id=user_id, family=family, mu=mu, sigma=sigma, rating=rating, hands=hands
        )
        row._state.adding = False
        rows[user_id] = row
    if len(rows) == len(set(user_ids)):
        return dict(sorted(rows.items()))
    locked = PlayerRating.objects.select_for_update(no_key=True).filter(
        user_id__in=user_ids, family=family
    )
    return {r.user_id: r for r in locked.order_by("user_id")}


def hand_rate(*, hand: Hand) -> list[Rated]:
    """Update the ratings of the hand's players from its result (once: a second call finds the
    hand's change rows and changes nothing). Returns each player's change, in play order; an
    unrated hand (practice) returns []."""
    if not hand_is_rated(hand):
        return []
    seats = hand.seat_list()
    family = hand_family(hand)
    ratings = _locked_ratings([s.user_id for s in seats], family, hand_id=hand.pk)
    if ratings is None:  # rated already
        return []
    winner = hand.outcome_result().winner
    ranks = [1 if winner is None or s.position == winner else 2 for s in seats]
    teams = [
        [_MODEL.create_rating([ratings[s.user_id].mu, ratings[s.user_id].sigma])] for s in seats
    ]
    new = _MODEL.rate(teams, ranks=ranks)
    changes, out = [], []
    for seat, (team,) in zip(seats, new, strict=True):
        row = ratings[seat.user_id]
        after_mu, after_sigma = team.mu, team.sigma
        after = shown_rating(after_mu, after_sigma)
        changes.append(
            RatingChange(
                user_id=seat.user_id,
                hand=hand,
                family=family,
                mu_before=row.mu,
                sigma_before=row.sigma,
                mu_after=after_mu,
                sigma_after=after_sigma,
                rating_before=row.rating,
                rating_after=after,
            )
        )
        out.append(Rated(seat.user_id, row.rating, after, row.hands + 1))
        row.mu, row.sigma, row.rating, row.hands = after_mu, after_sigma, after, row.hands + 1
    _save(changes, list(ratings.values()))
    return out


def hand_unrate(*, hand: Hand) -> list[Rated]:
    """Reverse a voided hand's rating changes (once: the reversal rows are unique)."""
    changes = list(RatingChange.objects.filter(hand=hand, reversal=False).order_by("user_id"))
    if not changes or RatingChange.objects.filter(hand=hand, reversal=True).exists():
        return []
    family = changes[0].family
    ratings = _locked_ratings([c.user_id for c in changes], family)
    assert ratings is not None
    reversals, out = [], []
    for c in changes:
        row = ratings[c.user_id]
        mu = row.mu - (c.mu_after - c.mu_before)
        sigma = max(row.sigma - (c.sigma_after - c.sigma_before), 1e-6)
        after = shown_rating(mu, sigma)
        reversals.append(
            RatingChange(
                user_id=c.user_id,
                hand=hand,
                family=family,
                reversal=True,
                mu_before=row.mu,
                sigma_before=row.sigma,
                mu_after=mu,
                sigma_after=sigma,
                rating_before=row.rating,
                rating_after=after,
            )
        )
        hands = max(row.hands - 1, 0)
        out.append(Rated(c.user_id, row.rating, after, hands))
        row.mu, row.sigma, row.rating, row.hands = mu, sigma, after, hands
    _save(reversals, list(ratings.values()))
    return out


_SAVE_SQL = """
WITH changes AS (
    INSERT INTO games_ratingchange (user_id, hand_id, family, reversal, mu_before, sigma_before,
        mu_after, sigma_after, rating_before, rating_after, created_at)
    SELECT c.user_id, %(hand)s, %(family)s, %(reversal)s, c.mu_before, c.sigma_before,
        c.mu_after, c.sigma_after, c.rating_before, c.rating_after, %(now)s
    FROM unnest(%(c_user)s::bigint[], %(c_mu0)s::float8[], %(c_sigma0)s::float8[],
        %(c_mu1)s::float8[], %(c_sigma1)s::float8[], %(c_r0)s::int[], %(c_r1)s::int[])
        AS c(user_id, mu_before, sigma_before, mu_after, sigma_after, rating_before, rating_after)
    ORDER BY c.user_id
)
UPDATE games_playerrating AS p
SET mu = v.mu, sigma = v.sigma, rating = v.rating, hands = v.hands, updated_at = %(now)s
FROM unnest(%(p_id)s::bigint[], %(p_mu)s::float8[], %(p_sigma)s::float8[], %(p_r)s::int[],
    %(p_hands)s::int[]) AS v(id, mu, sigma, rating, hands)
WHERE p.id = v.id
"""


def _save(changes: list[RatingChange], rows: list[PlayerRating]) -> None:
    """The change rows and the new ratings: one statement.
    Once per hand: the callers hold the hand's row lock and check its change rows first (and
    the unique (hand, user, reversal) constraint would refuse a second set)."""
    if not changes:
        return
    first = changes[0]
    params = {
        "hand": first.hand_id,
        "family": first.family,
        "reversal": first.reversal,
        "now": timezone.now(),
        "c_user": [c.user_id for c in changes],
        "c_mu0": [c.mu_before for c in changes],
        "c_sigma0": [c.sigma_before for c in changes],
        "c_mu1": [c.mu_after for c in changes],
        "c_sigma1": [c.sigma_after for c in changes],
        "c_r0": [c.rating_before for c in changes],
        "c_r1": [c.rating_after for c in changes],
        "p_id": [r.pk for r in rows],
        "p_mu": [r.mu for r in rows],
        "p_sigma": [r.sigma for r in rows],
        "p_r": [r.rating for r in rows],
        "p_hands": [r.hands for r in rows],
    }
    with connection.cursor() as cursor:
        cursor.execute(_SAVE_SQL, params)


def rating_notes(*, hand: Hand, rated: list[Rated], voided: bool = False) -> list[FeedNote]:
    """The ``rating_changed`` feed entries of these changes (append them last in the
    transaction, ``games.services.feed``)."""
    family = hand_family(hand) if rated else ""
    return [
        FeedNote(
            r.user_id,
            "rating_changed",
            f"rating:{hand.pk}:{'void' if voided else 'rated'}",
            table_id=hand.table_id,
            hand_id=hand.pk,
            data={
                "family": family,
                "rating": r.after,
                "rating_change": r.after - r.before,
                "provisional": r.hands < PROVISIONAL_HANDS,
                "voided": voided,
            },
        )
        for r in rated
    ]
