"""Games endpoints, mounted at /api/v1/ by chan_api/urls.py."""

from django.urls import path, register_converter

from games.api.friends_views import (
    BlockDetailApi,
    BlockListApi,
    ChallengeAcceptApi,
    ChallengeCancelApi,
    ChallengeDeclineApi,
    ChallengeDetailApi,
    ChallengeListCreateApi,
)
from games.api.integrity_views import IntegrityFlagDetailApi, IntegrityFlagListApi
from games.api.leaderboard_views import LeaderboardApi
from games.api.live_views import MeFeedApi
from games.api.tournament_views import (
    TournamentDetailApi,
    TournamentJoinApi,
    TournamentLeaveApi,
    TournamentListCreateApi,
    TournamentStandingsApi,
)
from games.api.views import (
    HandDetailApi,
    HandEventListApi,
    HandExportApi,
    HandReplayApi,
    MeHandListApi,
    MoveSubmitApi,
    PlayerDetailApi,
    PlayerHandListApi,
    RoomListApi,
    RoomQuickJoinApi,
    RulesEvaluateApi,
    RulesPresetListApi,
    RulesScoreApi,
    SeatJoinApi,
    SeatLeaveApi,
    SeatReadyApi,
    TableDetailApi,
    TableHandListApi,
    TableHandRedirectApi,
    TableListCreateApi,
)


class IdConverter:
    """A database id: at most 18 digits, so an absurd id is a 404, never an overflow (500)."""

    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


class UsernameConverter:
    """A username as Django's validator allows it (letters, digits, @.+-_; at most 150)."""

    regex = r"[\w.@+-]{1,150}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(IdConverter, "id")
register_converter(UsernameConverter, "username")

app_name = "games"

urlpatterns = [
    path("me/feed", MeFeedApi.as_view(), name="me-feed"),
    path("integrity/flags", IntegrityFlagListApi.as_view(), name="integrity-flags"),
    path("integrity/flags/<int:flag_id>", IntegrityFlagDetailApi.as_view(), name="integrity-flag"),
    path("rooms", RoomListApi.as_view(), name="room-list"),
    path("rooms/<slug:slug>/quick-join", RoomQuickJoinApi.as_view(), name="room-quick-join"),
    path("me/hands", MeHandListApi.as_view(), name="me-hands"),
    path("leaderboards/<str:board>", LeaderboardApi.as_view(), name="leaderboard"),
    path("players/<username:username>", PlayerDetailApi.as_view(), name="player-detail"),
    path("players/<username:username>/hands", PlayerHandListApi.as_view(), name="player-hands"),
    path("tables", TableListCreateApi.as_view(), name="table-list"),
    path("tables/<id:table_id>", TableDetailApi.as_view(), name="table-detail"),
    path("tables/<id:table_id>/join", SeatJoinApi.as_view(), name="table-join"),
    path("tables/<id:table_id>/leave", SeatLeaveApi.as_view(), name="table-leave"),
    path("tables/<id:table_id>/ready", SeatReadyApi.as_view(), name="table-ready"),
    path("tables/<id:table_id>/hand", TableHandRedirectApi.as_view(), name="table-hand"),
    path("tables/<id:table_id>/hands", TableHandListApi.as_view(), name="table-hands"),
    path("hands/<id:hand_id>", HandDetailApi.as_view(), name="hand-detail"),
    path("hands/<id:hand_id>/events", HandEventListApi.as_view(), name="hand-events"),
    path("hands/<id:hand_id>/moves", MoveSubmitApi.as_view(), name="hand-moves"),
    path("hands/<id:hand_id>/replay", HandReplayApi.as_view(), name="hand-replay"),
    path("hands/<id:hand_id>/export", HandExportApi.as_view(), name="hand-export"),
    path("rules/presets", RulesPresetListApi.as_view(), name="rules-presets"),
    path("rules/score", RulesScoreApi.as_view(), name="rules-score"),
    path("rules/evaluate", RulesEvaluateApi.as_view(), name="rules-evaluate"),
    # tables among friends
    path("challenges", ChallengeListCreateApi.as_view(), name="challenge-list"),
    path("challenges/<id:challenge_id>", ChallengeDetailApi.as_view(), name="challenge-detail"),
    path(
        "challenges/<id:challenge_id>/accept", ChallengeAcceptApi.as_view(), name="challenge-accept"
    ),
    path(
        "challenges/<id:challenge_id>/decline",
        ChallengeDeclineApi.as_view(),
        name="challenge-decline",
    ),
    path(
        "challenges/<id:challenge_id>/cancel",
        ChallengeCancelApi.as_view(),
        name="challenge-cancel",
    ),
    path("me/blocks", BlockListApi.as_view(), name="me-blocks"),
    path("me/blocks/<username:username>", BlockDetailApi.as_view(), name="me-block"),
    # arenas
    path("tournaments", TournamentListCreateApi.as_view(), name="tournament-list"),
    path("tournaments/<id:tournament_id>", TournamentDetailApi.as_view(), name="tournament-detail"),
    path(
        "tournaments/<id:tournament_id>/join", TournamentJoinApi.as_view(), name="tournament-join"
    ),
    path(
        "tournaments/<id:tournament_id>/leave",
        TournamentLeaveApi.as_view(),
        name="tournament-leave",
    ),
    path(
        "tournaments/<id:tournament_id>/standings",
        TournamentStandingsApi.as_view(),
        name="tournament-standings",
    ),
]
