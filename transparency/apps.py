from django.apps import AppConfig


class TransparencyConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "transparency"
    verbose_name = "Transparency log"

    def ready(self) -> None:
        # ledger_check also holds the ledger to the log (accounts does not import transparency).
        from accounts.ledger_selectors import LEDGER_CHECKS
        from transparency.selectors import check_ledger_matches_log

        if check_ledger_matches_log not in LEDGER_CHECKS:
            LEDGER_CHECKS.append(check_ledger_matches_log)
