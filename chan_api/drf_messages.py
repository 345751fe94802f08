"""The Django REST framework's own field messages that our API can answer, marked here so that
``makemessages`` keeps their Vietnamese in ``locale/vi`` (DRF ships almost no Vietnamese).

Nothing imports this module; ``gettext_noop`` only marks the strings, exactly as DRF spells them.
"""

from django.utils.translation import gettext_noop

DRF_FIELD_MESSAGES = (
    gettext_noop("This field is required."),
    gettext_noop("This field may not be null."),
    gettext_noop("This field may not be blank."),
    gettext_noop("Not a valid string."),
    gettext_noop("Null characters are not allowed."),
    gettext_noop("Surrogate characters are not allowed: U+{code_point:X}."),
    gettext_noop("Ensure this field has no more than {max_length} characters."),
    gettext_noop("Ensure this field has at least {min_length} characters."),
    gettext_noop("A valid integer is required."),
    gettext_noop("Ensure this value is less than or equal to {max_value}."),
    gettext_noop("Ensure this value is greater than or equal to {min_value}."),
    gettext_noop("String value too large."),
    gettext_noop("Must be a valid boolean."),
    gettext_noop('"{input}" is not a valid choice.'),
    gettext_noop('Expected a list of items but got type "{input_type}".'),
    gettext_noop('Expected a dictionary of items but got type "{input_type}".'),
    gettext_noop("This list may not be empty."),
    gettext_noop("This dictionary may not be empty."),
    gettext_noop("Ensure this field has at least {min_length} elements."),
    gettext_noop("Ensure this field has no more than {max_length} elements."),
    gettext_noop("Invalid data. Expected a dictionary, but got {datatype}."),
    gettext_noop("Value must be valid JSON."),
    gettext_noop("No data provided"),
)
