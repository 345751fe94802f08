"""The players' feeds keep CHAN_FEED_RETENTION_DAYS (games.services.feed.feed_prune): older
entries go, each player's last one stays (its seq numbers the next), and a reader whose cursor
is older than what is kept is told (``truncated``), with a new ETag."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.utils import timezone

from games.models import FeedEntry
from games.services.feed import FeedNote, feed_append, feed_prune
from games.tasks import feed_prune_due
from tests.games.conftest import Player

pytestmark = pytest.mark.django_db

LATER = timedelta(days=31)  # past the default 30 days


def note(player: Player, n: int) -> FeedNote:
    return FeedNote(user_id=player.user.pk, kind="bonus_available", key=f"test:{n}", data={})


def append(player: Player, *ns: int) -> None:
    feed_append(notes=[note(player, n) for n in ns])


def seqs(player: Player) -> list[int]:
    return list(
        FeedEntry.objects.filter(user_id=player.user.pk)
        .order_by("seq")
        .values_list("seq", flat=True)
    )


def feed(player: Player, etag: str | None = None, **query: Any) -> Any:
    headers = {} if etag is None else {"HTTP_IF_NONE_MATCH": etag}
    return player.client.get("/api/v1/me/feed", query, **headers)


def test_the_default_keeps_thirty_days_and_the_beat_runs_the_sweep_hourly() -> None:
    assert settings.CHAN_FEED_RETENTION_DAYS == 30
    entry = settings.CELERY_BEAT_SCHEDULE["feed-prune"]
    assert entry["task"] == "games.tasks.feed_prune_due"


def test_entries_within_the_retention_stay(players) -> None:
    append(players[0], 1, 2, 3)
    assert feed_prune(now=timezone.now() + timedelta(days=29)) == 0
    assert seqs(players[0]) == [1, 2, 3]


def test_old_entries_go_but_each_players_last_stays_and_numbers_the_next(players) -> None:
    a, b = players[0], players[1]
    append(a, 1, 2, 3, 4)
    append(b, 1)
    later = timezone.now() + LATER
    removed = feed_prune(now=later, batch=2)  # several batches
    assert removed == 3
    assert seqs(a) == [4] and seqs(b) == [1]
    assert feed_prune(now=later) == 0  # safe to run again: nothing more
    assert feed_prune_due() == 0  # today: nothing is 30 days old
    append(a, 5)
    assert seqs(a) == [4, 5]  # never a seq given twice


def test_zero_days_keeps_everything(players) -> None:
    append(players[0], 1, 2)
    assert feed_prune(now=timezone.now() + timedelta(days=3650), days=0) == 0
    assert seqs(players[0]) == [1, 2]


def test_a_reader_behind_the_oldest_kept_entry_is_told_and_its_etag_changes(players) -> None:
    a = players[0]
    feed(a)  # a first read appends today's bonus_available entry: out of the way
    append(a, 1, 2, 3)
    head = seqs(a)[-1]
    before = feed(a, after=1)
    page = before.json()
    assert [e["seq"] for e in page["entries"]] == list(range(2, head + 1))
    assert page["truncated"] is False
    etag = before["ETag"]
    assert feed(a, after=1, etag=etag).status_code == 304

    feed_prune(now=timezone.now() + LATER)
    assert seqs(a) == [head]

    after = feed(a, after=1, etag=etag)
    assert after.status_code == 200  # the page changed: no 304 for the old copy
    page = after.json()
    # (the read may append today's bonus entry again: the sweep's "now" is a month ahead)
    assert [e["seq"] for e in page["entries"]][0] == head and page["truncated"] is True
    head = page["head"]
    # A reader that was up to date is not told anything.
    assert feed(a, after=head - 1).json()["truncated"] is False
    assert feed(a, after=head).json() == {
        "entries": [],
        "head": head,
        "next_after": head,
        "has_more": False,
        "truncated": False,
    }


def test_a_new_players_feed_from_the_start_is_not_truncated(players) -> None:
    assert feed(players[2]).json()["truncated"] is False
    append(players[2], 1)
    assert feed(players[2]).json()["truncated"] is False
