"""``manage.py check_hands``: every cached state must equal the replay of its log."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from games.models import Hand

pytestmark = pytest.mark.django_db


def test_check_hands_passes_on_played_hands(players, win_hand, capsys) -> None:
    players[0].client.post(
        f"/api/v1/hands/{win_hand['hand']}/moves", {"type": "discard", "card": "2N"}, format="json"
    )
    call_command("check_hands")
    assert "1 hand(s) checked" in capsys.readouterr().out


def test_check_hands_reports_a_hand_whose_seq_is_not_its_logs(
    players, win_hand, corrupts_cache
) -> None:
    Hand.objects.filter(pk=win_hand["hand"]).update(seq=99)
    with pytest.raises(CommandError):
        call_command("check_hands", hand=[win_hand["hand"]])


def test_play_bots_settles_every_hand_and_the_books_reconcile() -> None:
    out = StringIO()
    call_command("play_bots", hands=12, seed=3, stdout=out)
    text = out.getvalue()
    assert "12 hands in" in text and "ledger ok" in text
    assert Hand.objects.filter(status="ended", settled_at__isnull=False).count() == 12
