from tests.games.conftest import (  # noqa: F401 (fixtures)
    _fresh_caches,
    make_player,
    players,
    start_hand,
    win_hand,
)
