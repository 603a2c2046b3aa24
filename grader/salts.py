"""Which salt a run grades with, where it came from, and how to name it without telling it.

The salt (``--salt``, else ``GRADER_SALT``, else the public default) chooses the hidden
inputs. The grader never prints or stores it: a stored result keeps a hash of it, and
messages name it by its *fingerprint*, the first eight hex digits of that hash, so an
instructor can tell two salts apart (and which one a results folder was graded with)
without either being shown.
"""

import hashlib
import os
from dataclasses import dataclass

FINGERPRINT_DIGITS = 8


def salt_hash(salt):
    return hashlib.sha256(b"replay-grader salt\0" + salt.encode()).hexdigest()[:16]


def fingerprint(salt):
    """The salt's short name in messages: it tells salts apart, and tells none of them."""
    return salt_hash(salt)[:FINGERPRINT_DIGITS]


@dataclass(frozen=True)
class ChosenSalt:
    value: str
    source: str  # "--salt", "GRADER_SALT" or "default"

    @property
    def words(self):
        """Where the salt came from, and its fingerprint, for a message."""
        where = {"--salt": "the salt given with --salt", "GRADER_SALT": "GRADER_SALT",
                 "default": "the public default salt"}[self.source]
        return f"{where} (fingerprint {fingerprint(self.value)})"


def chosen_salt(given, default):
    """The salt of a run: ``given`` (``--salt``), else ``GRADER_SALT``, else ``default``."""
    if given:
        return ChosenSalt(given, "--salt")
    if os.environ.get("GRADER_SALT"):
        return ChosenSalt(os.environ["GRADER_SALT"], "GRADER_SALT")
    return ChosenSalt(default, "default")
