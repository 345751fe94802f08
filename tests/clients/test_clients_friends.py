"""The Python client's methods of tables among friends against the real app: a challenge
accepted, a private table joined with its code, a block put and lifted."""

from __future__ import annotations

import pytest
from chan_client import ApiError, ChanClient

PASSWORD = "a-long-enough-Passw0rd!"


@pytest.mark.django_db(transaction=True)
def test_challenge_private_table_and_block_through_the_client(live_server) -> None:
    a, b, c = (ChanClient(live_server.url) for _ in range(3))
    with a, b, c:
        a.login_or_register("friend_a", PASSWORD)
        b.login_or_register("friend_b", PASSWORD)
        c.login_or_register("friend_c", PASSWORD)
        # a challenges b to a 3-seat table; b accepts
        sent = a.challenge("friend_b", stake=10, max_seats=3)
        assert sent["status"] == "pending"
        assert [x["id"] for x in b.challenges(box="received")] == [sent["id"]]
        accepted = b.accept_challenge(sent["id"])
        assert accepted["status"] == "accepted"
        table = a.table(accepted["table_id"])
        assert table["private"] is True and len(table["seats"]) == 2
        assert a.challenge_detail(sent["id"])["table_id"] == table["id"]
        # c joins with the code a passes on
        with pytest.raises(ApiError) as refused:
            c.join(table["id"])
        assert refused.value.code == "invite_code_required"
        assert len(c.join(table["id"], code=table["invite_code"])["seats"]) == 3
        # blocks
        assert a.block("friend_c")["user"]["username"] == "friend_c"
        assert [x["user"]["username"] for x in a.blocks()] == ["friend_c"]
        with pytest.raises(ApiError) as blocked:
            c.challenge("friend_a", stake=10)
        assert blocked.value.code == "player_blocked"
        a.unblock("friend_c")
        assert a.blocks() == []
        declined = a.decline_challenge(c.challenge("friend_a", stake=10)["id"])
        assert declined["status"] == "declined"
