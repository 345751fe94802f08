"""OAuth authorization codes already traded for tokens, kept as their SHA-256 with the family of
the refresh tokens issued from them: a code presented again is refused and revokes those tokens
(RFC 6749 §4.1.2)."""

import django.db.models.deletion
import django.db.models.functions.text
import django.db.models.lookups
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0025_limits_follow_their_history'),
        migrations.swappable_dependency(settings.OAUTH2_PROVIDER_APPLICATION_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='SpentAuthorizationCode',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('code_checksum', models.CharField(help_text='SHA-256 hex of the authorization code.', max_length=64, unique=True)),
                ('token_family', models.UUIDField(blank=True, help_text='The family of the refresh tokens issued from it.', null=True)),
                ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                ('application', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.OAUTH2_PROVIDER_APPLICATION_MODEL)),
            ],
            options={
                'ordering': ['-created_at', '-id'],
                'constraints': [models.CheckConstraint(condition=models.Q(django.db.models.lookups.Exact(django.db.models.functions.text.Length('code_checksum'), 64), django.db.models.lookups.Exact(models.Func(models.F('code_checksum'), models.Value('0123456789abcdef'), function='LTRIM', output_field=models.CharField()), models.Value(''))), name='accounts_spentauthorizationcode_checksum_sha256')],
            },
        ),
    ]
