from django.apps import AppConfig


class GamesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "games"
    verbose_name = "Chắn tables and hands"

    def ready(self) -> None:
        # The project's Celery app, before any task is sent: shared_task binds to it
        # (chan_api/__init__.py says why it is not imported there).
        import chan_api.celery  # noqa: F401

        # ledger_check also checks the games' money (accounts does not import games).
        from accounts.ledger_selectors import LEDGER_CHECKS
        from games.audit import GAMES_LEDGER_CHECKS

        LEDGER_CHECKS.extend(c for c in GAMES_LEDGER_CHECKS if c not in LEDGER_CHECKS)
        # A banned player stands up at its tables (accounts does not import games).
        from accounts.signals import player_banned
        from games.services.tables import seats_vacate

        player_banned.connect(
            lambda sender, user_id, **kw: seats_vacate(user_id=user_id),
            weak=False,
            dispatch_uid="games.seats_vacate",
        )
        # A player cooling off or self-excluded is freed of its seats after the hand in play.
        from accounts.signals import player_excluded
        from games.services.table_limits import seats_release_excluded

        player_excluded.connect(
            lambda sender, user_id, **kw: seats_release_excluded(user_id=user_id),
            weak=False,
            dispatch_uid="games.seats_release_excluded",
        )
