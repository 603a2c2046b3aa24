"""What a lesson requires, as data: the rules its checks test and the tags that tie them to
the sentences of the lesson that state them.

A :class:`Rule` is one requirement a student is told ("sample draws with replacement",
"len counts the transitions held now"), named so that feedback, the lesson's text and the
bug suite can refer to it. A check declares the rules it tests (``Check.rules``) and every
failed verdict names the one it found broken (``failed(..., rule=...)``): the feedback
ends with ``[rule: name]``, the same tag that stands beside the sentence in the lesson, so
a student can find the requirement their code missed.

In a lesson's Markdown a requirement's sentence carries its tag, ``[rule: name]``
(written ``<sub>[rule: name]</sub>`` so that it reads as a footnote);
tests/lessons/test_requirements.py holds each lesson to it: every tag names a rule of the
lesson's checks, every rule is tagged in the text, and every rule has a bug in
``tests/bugs`` that breaks it.
"""

import re
import textwrap
from dataclasses import dataclass

# A rule's name: lower-case words joined by hyphens, unique within its lesson.
RULE_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
TAG = re.compile(r"\[rule: ([^\]\s]+)\]")


@dataclass(frozen=True)
class Rule:
    """A requirement: ``name`` (``len-after-wrap``), and what it ``says`` in one sentence."""

    name: str
    says: str

    def __post_init__(self):
        if not RULE_NAME.fullmatch(self.name):
            raise ValueError(f"a rule's name is lower-case words joined by hyphens, got "
                             f"{self.name!r}")
        if not self.says.strip():
            raise ValueError(f"rule {self.name!r} says nothing")

    @property
    def tag(self):
        """How feedback and the lesson's text name it."""
        return f"[rule: {self.name}]"


def tagged(feedback, rule):
    """``feedback`` ending with the tag of ``rule`` (a :class:`Rule`, or None: untouched)."""
    if rule is None:
        return feedback
    if not isinstance(rule, Rule):
        raise TypeError(f"a verdict names a Rule, got {type(rule).__name__}")
    return f"{feedback.rstrip()} {rule.tag}"


def tags_in(text):
    """The rule names tagged in ``text`` (a lesson's Markdown), in order."""
    return TAG.findall(text)


def comment_lines(asks, width=92):
    """``asks`` as the comment a test cell starts with: ``# `` lines no wider than
    ``width``, broken between words only."""
    return textwrap.wrap(asks, width, initial_indent="# ", subsequent_indent="# ",
                         break_long_words=False, break_on_hyphens=False) or ["#"]
