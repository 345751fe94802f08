from django.apps import AppConfig


class GamesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "games"
    verbose_name = "Chắn tables and hands"

    def ready(self) -> None:
        # ledger_check also checks the games' money (accounts does not import games).
        from accounts.ledger_selectors import LEDGER_CHECKS
        from games.audit import GAMES_LEDGER_CHECKS

        LEDGER_CHECKS.extend(c for c in GAMES_LEDGER_CHECKS if c not in LEDGER_CHECKS)
