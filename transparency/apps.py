from django.apps import AppConfig


class TransparencyConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "transparency"
    verbose_name = "Transparency log"
