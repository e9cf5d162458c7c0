"""A conservative lexical claim-support verifier with a support score.

A false "supported" is the worst error this component can make: it would promote evidence
for a claim the source does not make. So every check can only withhold support. Each check of
one aligned window of the passage either passes or multiplies the support score by its factor
(``CHECK_FACTORS``); the score starts from the window's coverage of the claim's content words,
and the claim is supported only when the score reaches ``support_threshold``:

1. alignment   the window of one or two consecutive sentences covering most claim content words
               (a joined sentence costs ``joined_sentence_charge`` of coverage); a literal quote
               of the claim is judged on the sentence it was copied from;
2. quantities  every number, percentage, unit and year of the claim with the same value there
               (same dimension, different amount → contradicted; absent → insufficient;
               a different dimension, e.g. % vs percentage points → insufficient); in a window
               of two sentences, all its years in one sentence, and no number taken from another clause
               than the one that states the rest when that clause names another number of the
               same unit (both else insufficient);
3. dates       every month the claim names (another month there → contradicted); days of the
               week paired in one part of the claim are paired so in the passage
               (``check_day_pairs``; else insufficient);
4. polarity    negation (by scope), direction (increase/decrease ...) and antonyms agree
               (a clean mismatch with the rest aligned → contradicted, else insufficient);
5. direction   the passage's direction word governing the claim's arguments points the same way;
6. entities    every name, acronym and identifier of the claim (missing → insufficient);
7. coverage    the score's base: the share of the claim's content words (stemmed);
8. polar words every direction word, antonym and negated adjective of the claim is there;
9. comparison  a comparative claim ("more than", "compared with") needs a comparing passage;
10. assertion  a window stating an aim, question or method ("whether", "to assess") supports nothing;
11. hedges and reports: a claim word stated only under a hedge ("may") or a report ("it was
               claimed that", "critics say") does not support a flat assertion;
12. structure  roles, list entries, degree words, predicates and proximity
               (``akm.verify.structure``; skipped for a close quote of the passage);
13. joined     a claim drawn from two sentences, each giving words the other lacks, needs the
               two to speak of one thing: the second refers back (a pronoun, a shared name), or
               the claim keeps the subject of the sentence that gives most of it.

The defaults were chosen on the even-numbered lines of the SciFact train claims and checked on
the odd ones (``akm bench verify``); they favour precision over recall by design.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from akm.claims.quantities import Quantity, dated_weekdays, months, quantities, same_amount, weekdays
from akm.claims.segmentation import TextSpan, sentence_spans, strip_citations
from akm.verify.judgement import CheckOutcome, SupportJudgement, SupportLabel
from akm.verify.structure import (
    Finding,
    WindowIndex,
    clause_bounds,
    comparison_roles_finding,
    degree_finding,
    direction_finding,
    hedge_finding,
    list_finding,
    near_verbatim,
    predicate_finding,
    proximity_finding,
    qualifier_finding,
    relation_roles_finding,
    replaced_word_finding,
    statement_bounds,
    swapped_finding,
)
from akm.verify.wording import (
    Word,
    compares,
    direction_neighbours,
    direction_of,
    directions,
    form_set,
    is_content_in,
    is_entity,
    is_number,
    is_polar,
    negated_words,
    non_assertive,
    opposed_terms,
    stem,
    word_found,
    words,
)

DEFAULT_SUPPORT_THRESHOLD = 0.8
# What a failed check multiplies the support score by. Checks that show the passage says
# something else (a conflict, another direction, swapped roles, a reported statement) leave
# at most a third of the score; checks that show it may say something else (a predicate word
# unstated, words scattered) leave more, still below the default threshold. Coverage is the
# score's base, so its own factor is 1.
CHECK_FACTORS: dict[str, float] = {
    "quantity": 0.1,
    "polarity": 0.1,
    "direction": 0.15,
    "entity": 0.3,
    "coverage": 1.0,
    "polar-words": 0.3,
    "comparison": 0.35,
    "assertion": 0.3,
    "hedge": 0.35,
    "attribution": 0.25,
    "roles": 0.25,
    "list": 0.25,
    "degree": 0.5,
    "predicate": 0.6,
    "modifier": 0.5,
    "proximity": 0.7,
    "joined": 0.25,
    "substitution": 0.25,
}
# A check whose failure is reported under an older, broader name.
DECIDED_BY: dict[str, str] = {"polar-words": "polarity"}


@dataclass(frozen=True, slots=True)
class Alignment:
    """The passage window that best covers the claim's content words."""

    span: TextSpan
    sentences: int
    coverage: float
    missing: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class QuantityCheck:
    outcome: str  # "agree", "missing" or "conflict"
    detail: str


def _claim_quantity_found(claim_quantity: Quantity, window: list[Quantity]) -> bool:
    if any(same_amount(claim_quantity, quantity) for quantity in window):
        return True
    if claim_quantity.unit == "":
        return any(abs(quantity.value - claim_quantity.value) < 1e-9 for quantity in window)
    # "between 5 and 10 mg": a bare number counts when the window states the claim's unit nearby.
    bare = any(q.unit == "" and abs(q.value - claim_quantity.value) < 1e-9 for q in window)
    return bare and any(q.dimension == claim_quantity.dimension for q in window)


def check_quantities(claim: str, window_text: str) -> QuantityCheck:
    """Compare every quantity and month of the claim with those of the window."""
    window = quantities(window_text)
    for claim_quantity in quantities(claim):
        if _claim_quantity_found(claim_quantity, window):
            continue
        stated = claim[claim_quantity.start : claim_quantity.end]
        rivals = [q for q in window if claim_quantity.unit and q.dimension == claim_quantity.dimension]
        if rivals:
            rival = rivals[0]
            return QuantityCheck(
                "conflict", f"claim says {stated!r}, passage says {window_text[rival.start : rival.end]!r}"
            )
        return QuantityCheck("missing", f"claim quantity {stated!r} is not in the passage")
    claim_months, window_months = months(claim), months(window_text)
    for month in claim_months:
        if month not in window_months:
            if window_months:
                return QuantityCheck("conflict", f"claim names month {month}, passage names {window_months}")
            return QuantityCheck("missing", f"claim month {month} is not in the passage")
    # A day of the week, and the date it falls on: "Monday 24 January" where the passage says "Friday
    # 24 January" (and "Monday 13 January" beside it) is another day.
    claim_days, window_days = weekdays(claim), weekdays(window_text)
    for day in sorted(claim_days - window_days):
        name = _DAY_NAMES[day]
        if window_days:
            return QuantityCheck("conflict", f"claim names {name}, passage names {_names(window_days)}")
        return QuantityCheck("missing", f"claim day {name} is not in the passage")
    window_dated = dated_weekdays(window_text)
    for day, date in sorted(dated_weekdays(claim)):
        said = {other for other, on in window_dated if on == date}
        if said and day not in said:
            return QuantityCheck(
                "conflict", f"claim puts {_DAY_NAMES[day]} on the {date}th, passage puts {_names(said)}"
            )
    return QuantityCheck("agree", "")


_DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _names(days: set[int]) -> str:
    return ", ".join(_DAY_NAMES[day] for day in sorted(days))


def check_quantity_clauses(claim: str, content: list[Word], passage: str, span: TextSpan) -> QuantityCheck:
    """A claim's number must not come from another clause than what it says of it.

    "It needs Python 3.11 or newer; Python 3.10 is no longer supported." holds every word and the
    number of "Python 3.11 is no longer supported", but the clause that says "no longer supported"
    names 3.10. So when the clause holding most of the claim's other content words states a number
    of the same unit that the claim does not, and not the claim's own, the claim is not supported.
    """
    return _number_of_main_part(
        claim, content, passage, clause_bounds(passage, span.start, span.end), whole=False
    )


def check_quantity_sentences(claim: str, content: list[Word], passage: str, span: TextSpan) -> QuantityCheck:
    """A claim wholly about one sentence (or list entry) of a window must not take its number from
    another: "Sunday series: first start at 18:30" is not supported by a Sunday entry at 10:30
    beside a Wednesday entry at 18:30. A claim that joins sentences ("Tessel 4.2 needs Python 3.11",
    the version from one and what it needs from the next) is not wholly about either."""
    bounds = [TextSpan(first, last) for first, last in statement_bounds(passage, span.start, span.end)]
    return _number_of_main_part(claim, content, passage, bounds, whole=True)


def _number_of_main_part(
    claim: str, content: list[Word], passage: str, parts: list[TextSpan], *, whole: bool
) -> QuantityCheck:
    """The check of `check_quantity_clauses` over ``parts``; with ``whole``, only where the part
    holding most of the claim's other content words holds all of them."""
    claimed = quantities(claim)
    if not claimed or len(parts) < 2:
        return QuantityCheck("agree", "")
    inside = [(quantity.start, quantity.end) for quantity in claimed]
    plain = [word for word in content if not any(start <= word.start < end for start, end in inside)]
    if not plain:
        return QuantityCheck("agree", "")

    def held(part: TextSpan) -> int:
        forms = form_set(words(passage, part.start, part.end))
        return sum(1 for word in plain if word_found(word, forms))

    main = max(parts, key=held)
    if whole and held(main) < len(plain):
        return QuantityCheck("agree", "")
    stated = quantities(main.slice(passage))
    for quantity in claimed:
        if _claim_quantity_found(quantity, stated):
            continue
        rivals = [
            other
            for other in stated
            if other.unit == quantity.unit
            and not any(_claim_quantity_found(other, [mine]) for mine in claimed)
        ]
        if rivals:
            said = main.slice(passage)
            rival = said[rivals[0].start : rivals[0].end]
            what = "sentence" if whole else "clause"
            return QuantityCheck(
                "missing",
                f"claim says {claim[quantity.start : quantity.end]!r} where the passage's {what} says {rival!r}",
            )
    return QuantityCheck("agree", "")


# Markdown emphasis and code marks: no text of a quote (see LexicalClaimVerifier.literal_alignment).
_EMPHASIS = re.compile(r"[*`]+")
# Where the parts of a sentence that pair days part: a stop, a semicolon or colon, ", and", ", or".
_PAIR_BREAK = re.compile(r"[;:.!?]|,\s*(?:and|or|but|while|whereas)\b|\bwhereas\b", re.IGNORECASE)


def check_day_pairs(claim: str, window_text: str) -> QuantityCheck:
    """A claim that pairs days must pair them as the passage does. "for a Tuesday delivery, it is
    9am on Wednesday" holds every word of "the deadline for a Tuesday delivery is 9am on Sunday, and
    for a Friday delivery it is 9am on Wednesday", but the passage's Tuesday goes with Sunday and its
    Wednesday with Friday. A part of the claim (parted at a stop, a semicolon, ", and" ...) naming
    two days or more fails when no part of the passage names them all and every part that names one
    of them names another day beside it."""
    said = [weekdays(part) for part in _PAIR_BREAK.split(window_text)]
    for part in _PAIR_BREAK.split(claim):
        days = weekdays(part)
        if len(days) < 2 or any(days <= other for other in said):
            continue
        beside = [other for other in said if other & days]
        if beside and all(other - days for other in beside):
            day = min(day for other in beside for day in other & days)
            partners = set().union(*(other - days for other in beside if day in other))
            return QuantityCheck(
                "missing",
                f"claim pairs {_DAY_NAMES[day]} with {_names(days - {day})}, passage with {_names(partners)}",
            )
    return QuantityCheck("agree", "")


# Words by which a sentence speaks of what the one before it named ("It needs Python 3.11").
_REFERRING = frozenset(
    {"it", "its", "they", "their", "them", "he", "his", "him", "she", "her", "this", "these", "those", "both"}
)


def check_joined(content: list[Word], passage: str, window: TextSpan) -> str | None:
    """A claim drawn from two sentences, each giving words the other lacks, holds only when the two
    speak of one thing: the second refers back to the first (a pronoun: "Tessel 4.2 was released
    in May. It needs Python 3.11."; or a name both give, an abbreviation included), or the claim
    keeps the subject of the sentence that gives most of it and adds what the other says of it
    ("... has housed the Sörmark industrial museum. Entry costs 80 kronor for adults." for "Entry to
    the Sörmark industrial museum costs 80 kronor"). Else the claim puts what one sentence says of
    its subject on something of the other ("Marek will move the database to the managed service by
    4 December. The next retrospective is on 4 December." does not say the retrospective will be
    moved). None when the claim holds together."""
    spans = [
        span for span in sentence_spans(passage) if window.start <= span.start and span.end <= window.end
    ]
    if len(spans) < 2:
        return None
    first, second = (words(passage, span.start, span.end) for span in (spans[0], spans[-1]))
    first_forms, second_forms = form_set(first), form_set(second)
    only_first = [
        w.surface for w in content if word_found(w, first_forms) and not word_found(w, second_forms)
    ]
    only_second = [
        w.surface for w in content if word_found(w, second_forms) and not word_found(w, first_forms)
    ]
    if not only_first or not only_second:
        return None
    # A claim that keeps one sentence whole but for one word, put in from the other sentence, says
    # what neither does: "The condensate pipe can freeze in very cold weather. Pour warm water over
    # the pipe to thaw it." does not say the pipe can thaw in very cold weather.
    claim_forms = form_set(content)
    for sentence, taken in ((first, only_second), (second, only_first)):
        own = [word for word in sentence if is_content_in(word, passage)]
        left_out = [word for word in own if not word_found(word, claim_forms)]
        if len(taken) == 1 and len(left_out) == 1 and len(own) - 1 >= 3:
            return (
                f"the claim puts {taken[0]!r} of one sentence in place of {left_out[0].surface!r} of the "
                "sentence it otherwise repeats"
            )
    if any(word.lower in _REFERRING for word in second):
        return None
    # A name both sentences give ("pyridostatin (PDS) ... PDS reduces ...") links them too; a date
    # or a number two statements share does not.
    if any(
        is_entity(word, word is second[0])
        and not months(word.surface)
        and any(character.isalpha() for character in word.surface)
        and word_found(word, first_forms)
        for word in second
    ):
        return None
    # The sentence that gives most of the claim: its subject (its first content word) in the claim,
    # a subject of its own: a word both sentences give ("Payroll questions go to Priya Nair.
    # Questions about the building go to Tomás Rivera.") says not which one the claim keeps.
    # The claim's own subject must not be what only the other sentence names: "The Puy de Lassolas
    # is the highest point we reach" from "The highest point we reach will be 1,465 m. Friday is
    # shorter, roughly 6 km around the Puy de Lassolas ..." keeps the first sentence's subject and
    # puts what it says on the second's place.
    claim_subject = content[0] if content else None
    most = max(len(only_first), len(only_second))
    for sentence, given, other in ((first, only_first, second_forms), (second, only_second, first_forms)):
        subject = next((word for word in sentence if is_content_in(word, passage)), None)
        own_forms = form_set(sentence)
        if (
            len(given) == most
            and subject is not None
            and word_found(subject, claim_forms)
            and not word_found(subject, other)
            and not (
                claim_subject is not None
                and word_found(claim_subject, other)
                and not word_found(claim_subject, own_forms)
            )
        ):
            return None
    return (
        f"the claim joins two sentences about different things: {', '.join(only_first)} from one, "
        f"{', '.join(only_second)} from the next"
    )


def check_quantities_together(claim: str, window_text: str) -> QuantityCheck:
    """A claim's years must stand in one sentence of a joined window.

    A window of two sentences may state a claim whose words run across both ("Tessel 4.2 needs
    Python 3.11" from "Tessel 4.2 was released ... It needs Python 3.11"), but a claim that takes one
    year from each ("The Marigold in 1931 was sold ... in 1923" from "The Marigold was sold ... in
    1923 ... She sank ... in 1931.") dates an event by another one.
    """
    claimed = [quantity for quantity in quantities(claim) if quantity.unit == "year-date"]
    if len(claimed) < 2:
        return QuantityCheck("agree", "")
    spans = sentence_spans(window_text)
    if len(spans) < 2:
        return QuantityCheck("agree", "")
    for span in spans:
        stated = quantities(span.slice(window_text))
        if all(_claim_quantity_found(quantity, stated) for quantity in claimed):
            return QuantityCheck("agree", "")
    named = ", ".join(repr(claim[quantity.start : quantity.end]) for quantity in claimed)
    return QuantityCheck("missing", f"claim years {named} are stated in different sentences of the passage")


@dataclass(frozen=True)
class LexicalClaimVerifier:
    """Supports a claim only when one window of the passage states all of it (see module docstring).

    ``support_threshold``: the support score a claim needs (the ``support_threshold`` setting);
    with every check passed the score is the window's coverage of the claim's content words
    less the joined-sentence charge, and each failed check multiplies it by its factor in
    ``CHECK_FACTORS``. ``structural_checks``: run the checks of ``akm.verify.structure``.
    ``contradiction_coverage``: share needed before a mismatch counts as a contradiction
    rather than a gap. ``max_window_sentences``: how many consecutive sentences may align.
    """

    support_threshold: float = DEFAULT_SUPPORT_THRESHOLD
    contradiction_coverage: float = 0.75
    max_window_sentences: int = 2
    joined_sentence_charge: float = 0.1
    reject_hedged_passages: bool = True
    structural_checks: bool = True
    extra_windows: int = 3

    def align(self, claim: str, claim_words: list[Word], passage: str) -> Alignment | None:
        """The best window: highest coverage (less the joined-sentence charge), then fewest sentences, then earliest."""
        windows = self.alignments(claim, claim_words, passage)
        return windows[0] if windows else None

    def alignments(self, claim: str, claim_words: list[Word], passage: str) -> list[Alignment]:
        """Every window of up to ``max_window_sentences`` sentences, best first (see ``align``)."""
        content = [word for word in claim_words if is_content_in(word, claim)]
        sentences = sentence_spans(passage)
        sentence_words = [words(passage, sentence.start, sentence.end) for sentence in sentences]
        sentence_forms = [form_set(found) for found in sentence_words]
        found: list[Alignment] = []
        for size in range(1, self.max_window_sentences + 1):
            for first in range(len(sentences) - size + 1):
                span = TextSpan(sentences[first].start, sentences[first + size - 1].end)
                forms = set().union(*sentence_forms[first : first + size])
                for left, right in zip(
                    sentence_words[first : first + size - 1],
                    sentence_words[first + 1 : first + size],
                    strict=True,
                ):
                    if left and right:
                        forms |= form_set([left[-1], right[0]])
                missing = tuple(word.surface for word in content if not word_found(word, forms))
                coverage = (len(content) - len(missing)) / len(content) if content else 0.0
                found.append(Alignment(span, size, coverage, missing))
        # sorted() is stable: equal credit keeps fewer sentences first, then the earlier window.
        return sorted(found, key=lambda window: -round(self._credit(window.coverage, window.sentences), 9))

    def _credit(self, coverage: float, sentences: int) -> float:
        """Coverage less a charge per joined sentence: more text, more chance matches."""
        return coverage - self.joined_sentence_charge * (sentences - 1)

    @staticmethod
    def literal_alignment(claim: str, passage: str) -> tuple[Alignment, TextSpan] | None:
        """The sentences around a literal quote of the claim in the passage (case and spacing aside).

        An answer that copies a sentence or a clause of its evidence is judged on the sentences
        it was copied from: its words stand in the passage's own relation, and a hedge or a
        report around the copied clause is still seen.

        Markdown emphasis is no text ("first start at **18:30**" is quoted as "first start at
        18:30"), and a table row ("| Under 18 | £9.00 | £7.00 |") is also found as the line of a
        table laid out with spaces ("Under 18      £9.00      £7.00").
        """
        core = " ".join(_EMPHASIS.sub("", claim).split()).rstrip(" .;:!")
        if len(words(core)) < 3:
            return None
        cores = [core]
        if core.startswith("|") and core.endswith("|"):
            cores.append(" ".join(cell.strip() for cell in core.strip("|").split("|") if cell.strip()))
        flat_chars: list[str] = []
        offsets: list[int] = []
        previous_space = False
        for offset, char in enumerate(passage):
            if char in "*`":
                continue
            if char.isspace():
                if previous_space:
                    continue
                char, previous_space = " ", True
            else:
                previous_space = False
            flat_chars.append(char.lower())
            offsets.append(offset)
        flat = "".join(flat_chars)
        at, core = next(
            ((flat.find(text.lower()), text) for text in cores if text.lower() in flat), (-1, core)
        )
        if at == -1:
            return None
        start, end = offsets[at], offsets[at + len(core) - 1] + 1
        around = [
            (first, last)
            for first, last in statement_bounds(passage, 0, len(passage))
            if first < end and start < last
        ]
        if not around:
            return None
        window = TextSpan(around[0][0], around[-1][1])
        clauses = [
            clause for clause in clause_bounds(passage, window.start, window.end) if clause.start <= start
        ]
        quote = TextSpan(clauses[-1].start if clauses else start, end)
        return Alignment(window, len(around), 1.0, ()), quote

    def verify(self, claim: str, passage: str) -> SupportJudgement:
        """The verdict on the best window; when that window does not support the claim, up to
        ``extra_windows`` more windows whose coverage alone would reach the threshold are
        tried, since one supporting window is enough."""
        # Evidence markers ([E1]) name the answer's sources, not anything the passage must say.
        claim = strip_citations(claim)
        claim_words = words(claim)
        content = [word for word in claim_words if is_content_in(word, claim)]
        literal = self.literal_alignment(claim, passage)
        if not content:
            # "| D | £68,001 to £88,000 | £2,247.84 |": a table row of a band's letter and figures
            # says what its cells say; it is checked as the quote of the passage it is, or not at all.
            cells = row_cell_words(claim, claim_words) or row_words(claim, claim_words)
            if cells and literal is not None:
                return self._judge(claim, claim_words, cells, passage, *literal)
            return SupportJudgement(
                "insufficient", None, "the claim has no content words to check", "claim", {}, 0.0, ()
            )
        if literal is not None:
            quoted = self._judge(claim, claim_words, content, passage, *literal)
            if quoted.label == "supported":
                return quoted
        windows = self.alignments(claim, claim_words, passage)
        if not windows:
            return SupportJudgement(
                "insufficient", None, "the passage has no sentences", "alignment", {}, 0.0, ()
            )
        first = self._judge(claim, claim_words, content, passage, windows[0])
        if first.label == "supported":
            return first
        for window in windows[1 : 1 + self.extra_windows]:
            if self._credit(window.coverage, window.sentences) < self.support_threshold - 1e-12:
                break
            judgement = self._judge(claim, claim_words, content, passage, window)
            if judgement.label == "supported":
                return judgement
        return first

    def _judge(
        self,
        claim: str,
        claim_words: list[Word],
        content: list[Word],
        passage: str,
        alignment: Alignment,
        quote: TextSpan | None = None,
    ) -> SupportJudgement:
        """Every check of one window, the support score and the verdict (see the module docstring).

        For a literal quote (``quote``: the quoted text and the start of its clause before it),
        negation, quantities and the aim check read only that stretch: the rest of the
        sentence may negate or question something else ("..., but not for learning").
        Hedges and reports are still read over the whole sentence.
        """
        literal = quote is not None
        span = (alignment.span.start, alignment.span.end)
        read = quote if quote is not None else alignment.span
        window_text = read.slice(passage)
        window_words = words(passage, read.start, read.end)
        scores = {"coverage": round(alignment.coverage, 4), "window_sentences": float(alignment.sentences)}
        checks: list[CheckOutcome] = []

        def record(name: str, failure: str | None) -> None:
            failed = failure is not None
            checks.append(
                CheckOutcome(name, not failed, failure or "", CHECK_FACTORS[name] if failed else 1.0)
            )

        # An aim or a question ("to test whether X reduces Y") can neither support nor refute.
        can_contradict = not non_assertive(window_text)
        quantity = check_quantities(claim, window_text)
        if quantity.outcome == "agree" and alignment.sentences > 1 and not literal:
            quantity = check_quantities_together(claim, window_text)
        if quantity.outcome == "agree" and not literal:
            quantity = check_quantity_clauses(claim, content, passage, read)
        if quantity.outcome == "agree" and not literal and alignment.sentences > 1:
            quantity = check_quantity_sentences(claim, content, passage, read)
        if quantity.outcome == "agree" and not literal:
            quantity = check_day_pairs(claim, window_text)
        record("quantity", quantity.detail if quantity.outcome != "agree" else None)
        polarity, polar_terms, clean = self._polarity_mismatch(claim, claim_words, passage, window_words)
        record("polarity", polarity or None)
        index = WindowIndex(passage, alignment.span)
        direction = (
            direction_finding(claim, claim_words, index)
            if not polarity and not literal and self.structural_checks
            else None
        )
        record("direction", direction.detail if direction else None)
        record(
            "joined",
            check_joined(content, passage, alignment.span)
            if alignment.sentences > 1 and not literal
            else None,
        )
        credit = 1.0 if literal else max(0.0, self._credit(alignment.coverage, alignment.sentences))
        for name, note in self._gaps(claim, claim_words, content, window_text, window_words):
            if name == "comparison":
                record(
                    "coverage",
                    None if credit >= self.support_threshold - 1e-12 else self._coverage_note(alignment),
                )
            record(name, note)
        findings = self._structure(claim, claim_words, index, literal)
        if self.structural_checks and not literal and not any(f.check == "predicate" for f in findings):
            swapped = swapped_finding(claim_words, index, passage)
            if swapped is not None:
                findings.append(swapped)
        if self.structural_checks and not literal:
            replaced = replaced_word_finding(claim_words, index, passage)
            if replaced is not None:
                findings.append(replaced)
        for finding in findings:
            checks.append(CheckOutcome(finding.check, False, finding.detail, CHECK_FACTORS[finding.check]))
        score = credit
        for check in checks:
            score *= check.factor
        score = round(min(1.0, score), 4)
        outcome = tuple(checks)

        def judged(label: SupportLabel, decided_by: str, note: str) -> SupportJudgement:
            return SupportJudgement(label, span, note, decided_by, scores, score, outcome)

        if quantity.outcome == "conflict":
            # The unit of a quantity is no subject: "| 45 minutes | £32 | £352 |" shares only
            # "minutes" with "at least 15 minutes a day" and speaks of another thing.
            said = [(amount.start, amount.end) for amount in quantities(claim)]
            subject = [word for word in content if not any(start <= word.start < end for start, end in said)]
            label = self._mismatch_label(subject, alignment, ()) if can_contradict else "insufficient"
            return judged(label, "quantity", quantity.detail)
        if polarity:
            label = (
                self._mismatch_label(content, alignment, polar_terms)
                if clean and can_contradict
                else "insufficient"
            )
            return judged(label, "polarity", polarity)
        if direction is not None:
            terms = tuple(stem(word.joined) for word in claim_words if direction_of(word))
            label = (
                self._mismatch_label(content, alignment, terms)
                if can_contradict and direction.clean
                else "insufficient"
            )
            return judged(label, "direction", direction.detail)
        if quantity.outcome == "missing":
            return judged("insufficient", "quantity", quantity.detail)
        # Past the conflicts above, the score alone decides: every failed check has already
        # lowered it, so the threshold is the one knob (see CHECK_FACTORS).
        failed = [check for check in checks if not check.passed]
        if score < self.support_threshold - 1e-12:
            if failed:
                return judged(
                    "insufficient", DECIDED_BY.get(failed[0].name, failed[0].name), failed[0].detail
                )
            return judged(
                "insufficient",
                "score",
                f"support score {score:.2f} is below the threshold {self.support_threshold:.2f}",
            )
        caveat = f"; failed but within the threshold: {', '.join(c.name for c in failed)}" if failed else ""
        how = (
            "the claim quotes the passage"
            if literal
            else f"window covers {alignment.coverage:.0%} of the claim's content words"
        )
        return judged(
            "supported",
            "all-checks" if not failed else "score",
            f"{how}; quantities, names, polarity, direction and roles agree (support score {score:.2f}){caveat}",
        )

    def _coverage_note(self, alignment: Alignment) -> str:
        needed = self.support_threshold + self.joined_sentence_charge * (alignment.sentences - 1)
        return (
            f"best window covers {alignment.coverage:.0%} of the claim's content words"
            f" (needs {needed:.0%}); missing: {', '.join(alignment.missing)}"
        )

    def _gaps(
        self,
        claim: str,
        claim_words: list[Word],
        content: list[Word],
        window_text: str,
        window_words: list[Word],
    ) -> list[tuple[str, str | None]]:
        """The outcome of each gap check (None when it passed), for the score's reasons."""
        forms = form_set(window_words)
        first_word = claim_words[0] if claim_words else None
        absent = [
            word.surface
            for word in claim_words
            if is_entity(word, word is first_word) and not word_found(word, forms)
        ]
        absent_polar = [word.surface for word in content if is_polar(word) and not word_found(word, forms)]
        return [
            ("entity", f"names not in the passage: {', '.join(absent)}" if absent else None),
            (
                "polar-words",
                f"the passage does not state the claim's {', '.join(absent_polar)}" if absent_polar else None,
            ),
            (
                "comparison",
                "the claim compares but the passage states no comparison"
                if compares(claim) and not compares(window_text)
                else None,
            ),
            (
                "assertion",
                "the passage states an aim, question or method, not a finding"
                if non_assertive(window_text) and not non_assertive(claim)
                else None,
            ),
        ]

    def _structure(
        self, claim: str, claim_words: list[Word], index: WindowIndex, literal: bool = False
    ) -> list[Finding]:
        """Failed structural checks (see akm.verify.structure); a near-verbatim quote skips all but hedges."""
        findings: list[Finding] = []
        if self.reject_hedged_passages:
            hedge = hedge_finding(claim, claim_words, index)
            if hedge is not None:
                findings.append(hedge)
        if not self.structural_checks or literal:
            return findings
        degree = degree_finding(claim_words, index)
        if degree is not None:
            findings.append(degree)
        if not self.structural_checks or near_verbatim(claim_words, index, claim):
            return findings
        first_word = claim_words[0] if claim_words else None
        anchors = [word for word in claim_words if is_entity(word, word is first_word)]
        for finding in (
            comparison_roles_finding(claim, claim_words, index),
            relation_roles_finding(claim, claim_words, index),
            list_finding(claim, claim_words, index, anchors),
            predicate_finding(claim_words, index),
            qualifier_finding(claim_words, index),
            proximity_finding(claim, claim_words, index),
        ):
            if finding is not None:
                findings.append(finding)
        return findings

    def _mismatch_label(
        self, content: list[Word], alignment: Alignment, polar_terms: tuple[str, ...]
    ) -> SupportLabel:
        """Contradicted when the rest of the claim aligns well; otherwise only a gap.

        Words that carry the opposed polarity are left out of the coverage here, since the
        passage states their opposite rather than them.
        """
        rest = [word for word in content if not is_polar(word, polar_terms)]
        if not rest:
            return "insufficient"
        missing = set(alignment.missing)
        covered = sum(1 for word in rest if word.surface not in missing) / len(rest)
        return "contradicted" if covered >= self.contradiction_coverage else "insufficient"

    @staticmethod
    def _polarity_mismatch(
        claim: str, claim_words: list[Word], passage: str, window_words: list[Word]
    ) -> tuple[str, tuple[str, ...], bool]:
        """How polarity disagrees (empty when it does not), the claim terms involved, and
        whether the disagreement is clean enough to call a contradiction.

        Clean means the disagreement is about the claim's own terms: the passage affirms what
        the claim negates (or negates, and nowhere affirms, what the claim asserts), or states
        the opposite direction next to a word the claim puts next to its direction.
        """
        content_words = [word for word in claim_words if is_content_in(word, claim)]
        claim_forms = form_set(content_words)
        claim_scoped = [word for word in negated_words(claim, claim_words) if is_content_in(word, claim)]
        claim_scope = {stem(word.joined) for word in claim_scoped}
        window_scoped = [
            word for word in negated_words(passage, window_words) if word_found(word, claim_forms)
        ]
        window_scope = {stem(word.joined) for word in window_scoped}
        scoped_positions = {word.start for word in window_scoped}
        affirmed = {
            stem(word.joined)
            for word in window_words
            if word.start not in scoped_positions and word_found(word, claim_forms)
        }
        if claim_scope and not window_scope:
            clean = bool(claim_scoped) and stem(claim_scoped[0].joined) in affirmed
            return "negation differs: the claim negates what the passage states", (), clean
        if window_scope and not claim_scope:
            clean = not window_scope & affirmed
            return "negation differs: the passage negates " + ", ".join(sorted(window_scope)), (), clean
        if claim_scope and not claim_scope & window_scope:
            return "negation differs: claim and passage negate different things", (), False
        claim_scoped_positions = {word.start for word in claim_scoped}
        claim_affirmed = {
            stem(word.joined) for word in content_words if word.start not in claim_scoped_positions
        }
        # A term the passage both states and negates, where the claim only negates it, leaves
        # open which statement the claim's negation matches.
        mixed = (claim_scope & window_scope & affirmed) - claim_affirmed
        if mixed:
            terms = ", ".join(sorted(mixed))
            return f"negation is ambiguous: the passage both states and negates {terms}", (), False
        claim_directions, window_directions = directions(claim_words), directions(window_words)
        if (
            len(claim_directions) == 1
            and len(window_directions) == 1
            and claim_directions != window_directions
        ):
            said, other = next(iter(claim_directions)), next(iter(window_directions))
            shared = direction_neighbours(claim_words)[said] & direction_neighbours(window_words)[other]
            return f"direction differs: claim says {said}, passage says {other}", (), bool(shared)
        opposed = opposed_terms(form_set(claim_words, pairs=False), form_set(window_words, pairs=False))
        if opposed:
            return (
                f"opposite terms: claim says {opposed[0]!r}, passage says {opposed[1]!r}",
                (opposed[0],),
                True,
            )
        return "", (), False


def row_words(claim: str, claim_words: list[Word]) -> list[Word]:
    """The words of a table row's claim that are no figures ("Under" in "| Under 18 | £9.00 |"),
    or none when the claim is no table row."""
    if not (claim.strip().startswith("|") and claim.strip().endswith("|")):
        return []
    return [word for word in claim_words if not is_number(word)]


def row_cell_words(claim: str, claim_words: list[Word]) -> list[Word]:
    """The words of a table row's claim that fill a cell alone ("D" in "| D | £68,001 | ... |"), or
    none when the claim is no table row; a figure is no such word."""
    if not (claim.strip().startswith("|") and claim.strip().endswith("|")):
        return []
    cells = {cell.strip() for cell in claim.strip().strip("|").split("|")}
    return [word for word in claim_words if word.surface in cells and not is_number(word)]
