from django.apps import AppConfig


class AccountsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "accounts"
    verbose_name = "Accounts and the Quan ledger"

    def ready(self) -> None:
        # Registers the bearer scheme with drf-spectacular.
        from accounts.api import schema  # noqa: F401
