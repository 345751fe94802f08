"""Xướng (RULES.md §8): the winner's declaration is judged against the true cước and ends the hand.

Money follows the declaration: :func:`judge` says whether it is đúng (equal to the true cước, or
to a reading tied with it: RULES §6's named hands equal in điểm and dịch), thiếu (a strict part of
one) or sai (anything not there, or there fewer times). :func:`declare` gives
the engine the judged :class:`Declaration` of a ``declare`` move; :func:`auto_declaration` is what
the server declares for a winner who asks for it or lets the deadline pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from games.rules.cuoc import (
    BACH_THU_CUOC,
    detect_cuoc,
    facts_from_state,
    ruleset_of,
    tied_readings,
)
from games.rules.errors import IllegalMove, InvalidInput, gettext_noop, shown
from games.rules.moves import Declare
from games.rules.results import Declaration, Outcome, Result, Verdict
from games.rules.ruleset import CUOC_MAX_COUNT, CUOC_SLUGS, Ruleset
from games.rules.scoring import score
from games.rules.state import HandState

__all__ = ["DUNG", "SAI", "THIEU", "auto_declaration", "check_declaration", "declare", "judge"]

DUNG, THIEU, SAI = Verdict.DUNG, Verdict.THIEU, Verdict.SAI


def check_declaration(declared: Mapping[str, int]) -> dict[str, int]:
    """The declaration without zero counts, in declaration order; refuse what is no declaration.

    Refused: nothing declared (``empty_declaration``), an unknown slug (``unknown_cuoc``), a count
    no win can reach such as 5 Tôm or 2 Chì (``invalid_cuoc_count``). These are input errors the
    winner may correct before its deadline, not a xướng sai.
    """
    for slug, n in declared.items():
        if slug not in CUOC_MAX_COUNT:
            raise InvalidInput(
                "unknown_cuoc", gettext_noop("Unknown cước %(slug)s."), slug=shown(slug, 40)
            )
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= CUOC_MAX_COUNT[slug]:
            raise InvalidInput(
                "invalid_cuoc_count",
                gettext_noop("Cước '%(slug)s' can be declared 1 to %(most)s times, not %(count)s."),
                slug=slug,
                most=CUOC_MAX_COUNT[slug],
                count=shown(n),
            )
    cleaned = {slug: declared[slug] for slug in CUOC_SLUGS if declared.get(slug)}
    if not cleaned:
        raise IllegalMove(
            "empty_declaration",
            gettext_noop(
                "Declare at least one cước (xuong for a plain win), or ask for auto-declare."
            ),
        )
    return cleaned


def _judge_one(true: Mapping[str, int], said: Mapping[str, int], rs: Ruleset) -> Verdict:
    if any(n > true.get(slug, 0) for slug, n in said.items()):
        return SAI
    if rs.bach_thu_must_be_declared:
        held = [slug for slug in BACH_THU_CUOC if slug in true]
        if held and not any(slug in said for slug in held):
            return SAI
    return DUNG if said == true else THIEU


def judge(
    true_cuoc: Mapping[str, int],
    declared: Mapping[str, int],
    ruleset: Ruleset | None = None,
    equally_right: Iterable[Mapping[str, int]] = (),
) -> Verdict:
    """``dung``, ``thieu`` or ``sai`` for a declaration against the true cước (§8).

    Anything declared that is not in the true cước, or more times than it is there, is sai; this
    covers an unknown slug, ``xuong`` beside other cước, ``bach_thu`` on a bạch thủ chi and
    ``chi``/``bach_thu`` beside a named hand, since the true cước already applies subsumption.
    With ``bach_thu_must_be_declared`` a bạch-thủ win (bạch thủ, bạch thủ chi or a named hand)
    whose declaration leaves that cước out is sai too. An empty declaration is refused.

    ``equally_right`` are readings as right as the true cước (named hands tied in điểm and
    dịch, §6): the declaration is judged against each reading and gets the best verdict, so
    declaring exactly one of them is đúng and a strict part of one is thiếu. Naming two tied
    named hands at once is sai: a win keeps one named hand.
    """
    said = {slug: n for slug, n in declared.items() if n}
    if not said:
        raise IllegalMove(
            "empty_declaration", gettext_noop("An empty declaration cannot be judged.")
        )
    rs = ruleset_of(ruleset)
    verdicts = {
        _judge_one({slug: n for slug, n in reading.items() if n}, said, rs)
        for reading in (true_cuoc, *equally_right)
    }
    return next(v for v in (DUNG, THIEU, SAI) if v in verdicts)


def auto_declaration(state: HandState) -> dict[str, int]:
    """What the server declares for the winner of ``state`` (in the declare phase): its true cước."""
    return detect_cuoc(state.config.ruleset, facts_from_state(state))


def declare(state: HandState, move: Declare) -> tuple[Declaration, Outcome]:
    """The winner's declaration judged against its true cước, and the outcome of the hand.

    ``state`` is the hand in the declare phase. ``declared_score`` is P of §10 (what the winner
    declared, also when sai) and ``true_score`` is T (its true cước).
    """
    win = state.win
    assert win is not None
    ruleset = state.config.ruleset
    facts = facts_from_state(state)
    true_cuoc = detect_cuoc(ruleset, facts)
    tied = tied_readings(ruleset, facts)
    declared = dict(true_cuoc) if move.auto else check_declaration(dict(move.cuoc))
    declaration = Declaration(
        cuoc=tuple(declared.items()),
        auto=move.auto,
        verdict=judge(true_cuoc, declared, ruleset, tied),
        true_cuoc=tuple(true_cuoc.items()),
        declared_score=score(ruleset, declared),
        true_score=score(ruleset, true_cuoc),
        equally_right=tuple(tuple(reading.items()) for reading in tied),
    )
    return declaration, Outcome(Result.U, win.seat)
