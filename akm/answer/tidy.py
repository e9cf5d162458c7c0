"""The generated text as presented and checked: echoes, repeats, non-answers and cut-off ends removed.

Small models repeat themselves, echo headings and the prompt's labels, restate the question,
and talk about "the text" instead of answering. None of that is a claim worth checking, so it
never reaches the claim splitter.
"""

from __future__ import annotations

import re

from akm.answer.selection import content_terms, is_polar_question
from akm.claims import sentence_spans, strip_citations

_HEADING_LINE = re.compile(r"^[ \t]*(?:\[E\d+\][ \t]*)?#{1,6}[ \t].*$", re.MULTILINE)
# The prompt's own labels, which a small model sometimes repeats before answering.
_QUESTION_ECHO = re.compile(r"^Question\s*:", re.IGNORECASE)
_ANSWER_LABEL = re.compile(
    r"^(?:Answer|(?:the\s+)?(?:key\s+to\s+(?:this|the|your)\s+answer|(?:short\s+|final\s+)?answer"
    r"(?:\s+to\s+(?:this|the|your)\s+question)?)\s+is|here\s+is\s+the\s+answer)\s*:\s*(?=\S)",
    re.IGNORECASE,
)
# A title-case label before a sentence ("Production Deploy: Only members ..."): a heading the
# model made up or echoed, not part of the claim.
_TITLE_LABEL = re.compile(r"^[A-Z][\w'’-]*(?:[ \t]+[A-Z][\w'’-]*){0,3}[ \t]*:[ \t]+(?=[A-Z`\"“])")
_LEAD_IN = re.compile(r":\s*$")
_FINISHED = re.compile(r"[.!?][\"'”’)\]]*(?:\s*\[[^\]]*\])*\s*$")
# Talk about the prompt instead of the subject: "the evidence provided...", "according to the text".
_META_TALK = re.compile(
    r"\b(?:the|this|that|provided|given|above)\s+(?:evidence|text|passage|context|excerpt|question)s?\b",
    re.IGNORECASE,
)


def tidy_answer(text: str, *, complete: bool = True) -> str:
    """The answer as presented and checked: heading lines echoed from the evidence, title-case labels
    before a sentence ("Production Deploy: ...") and an echoed question dropped, a label before the
    answer ("Answer:", "The key to this answer is:") dropped, each repeated sentence kept once, a lead-in left with nothing after it ("The
    answer is:") dropped, and, when generation was cut off, the unfinished last sentence dropped.
    """
    body = _HEADING_LINE.sub("", text)
    spans = sentence_spans(body)
    kept: list[str] = []
    seen: set[str] = set()
    for index, span in enumerate(spans):
        sentence = _ANSWER_LABEL.sub("", span.slice(body).strip())
        if _QUESTION_ECHO.match(sentence):
            continue
        sentence = _TITLE_LABEL.sub("", sentence)
        key = " ".join(strip_citations(sentence).lower().split())
        if not key or key in seen:
            continue
        if not complete and index == len(spans) - 1 and not _FINISHED.search(sentence):
            continue
        seen.add(key)
        kept.append(" ".join(sentence.split()))
    # A lead-in ("The answer is:") left at the end introduces nothing: what followed it was a
    # repeat or was cut off.
    while kept and _LEAD_IN.search(kept[-1]):
        kept.pop()
    # An unfinished sentence stays a block of its own so it cannot absorb the next sentence.
    joined = ""
    for sentence in kept:
        separator = " " if not joined or _FINISHED.search(joined) else "\n\n"
        joined = f"{joined}{separator}{sentence}" if joined else sentence
    return joined


# A yes-or-no question, and the words that answer one with a no.
_NEGATION = re.compile(r"\b(?:no|not|never|none|neither|nor|cannot)\b|n[’']t\b", re.IGNORECASE)


def is_non_answer(sentence: str, question: str) -> bool:
    """True for a sentence that talks about the prompt or only restates the question.

    A restatement adds no content term the question lacks ("Where is Harvard Stadium located?"
    → "Harvard Stadium is located."), unless it says no to a yes-or-no question ("Do I need an
    appointment?" → "No appointment is needed."); meta talk names the evidence, text or passage itself.
    """
    if _META_TALK.search(sentence):
        return True
    if is_polar_question(question) and _NEGATION.search(sentence) and not _NEGATION.search(question):
        return False  # "Do I need an appointment?" → "No appointment is needed.": the "no" answers
    asked = set(content_terms(question))
    return not (set(content_terms(sentence)) - asked)


# A demonstrative phrase that ends a sentence: "... uses this network type."
_DEMONSTRATIVE_END = re.compile(
    r"\b(?:this|that|these|those|such)\s+((?:[\w.'’-]+\s+){0,2}[\w.'’-]+)\W*$", re.IGNORECASE
)
# What a "what ..." / "which ..." question asks for: the words after the question word.
_ASKED_KIND = re.compile(r"\b(?:what|which)\s+((?:[\w.'’-]+\s+){0,2}[\w.'’-]+)", re.IGNORECASE)


def refers_back(sentence: str, question: str) -> str | None:
    """The demonstrative phrase a sentence ends with where the question asks for that very thing,
    or None: "X.25 uses what type network type?" → "The X.25 protocol suite uses this network type."
    A passage that names the thing earlier and then says "this network type" is supported, but the
    sentence does not say which type. One that goes on ("This type is called ...") is not caught.
    """
    ending = _DEMONSTRATIVE_END.search(sentence.strip())
    asked = _ASKED_KIND.search(question)
    if ending is None or asked is None:
        return None
    if set(content_terms(ending.group(1))) & set(content_terms(asked.group(1))):
        return ending.group(0).strip().rstrip(".!?")
    return None


def drop_non_answers(text: str, question: str) -> str:
    """``text`` without its non-answer sentences (see :func:`is_non_answer`)."""
    kept = [
        span.slice(text).strip()
        for span in sentence_spans(text)
        if not is_non_answer(span.slice(text), question)
    ]
    return " ".join(sentence for sentence in kept if sentence)


# A sentence that points to what comes after it: "... during the times below.", "... as follows:".
_POINTS_AHEAD = re.compile(
    r"\b((?:(?:shown|listed|given|set out)\s+)?below|as follows|the following)\s*[.:]?\s*$", re.IGNORECASE
)


def refers_ahead(sentence: str) -> str | None:
    """The words by which a sentence points to what follows it ("below", "as follows"), or None:
    "Cats can only be dropped off or collected during the times below." says no time itself."""
    ahead = _POINTS_AHEAD.search(sentence.strip())
    return None if ahead is None else ahead.group(1)


__all__ = ["drop_non_answers", "is_non_answer", "refers_ahead", "refers_back", "tidy_answer"]
