"""An arena entry counts the pairings in a row at which it was free but left out while others
sat (``TournamentEntry.waited``): the pairing seats such a player first, so the one left out
changes from one pairing to the next (games.rules.arena_pairing)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('games', '0039_hand_lock_as_kept'),
    ]

    operations = [
        migrations.AddField(
            model_name='tournamententry',
            name='waited',
            field=models.PositiveIntegerField(default=0, help_text='Pairings in a row it was left out at while others sat.'),
        ),
    ]
