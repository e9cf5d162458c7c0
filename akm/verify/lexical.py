"""A conservative lexical claim-support verifier.

A false "supported" is the worst error this component can make: it would promote evidence
for a claim the source does not make. So every check can only withhold support, and the
claim is supported only when all of them pass on one aligned window of the passage:

1. alignment   the window of one or two consecutive sentences covering most claim content words
               (a joined sentence costs ``joined_sentence_charge`` of coverage);
2. quantities  every number, percentage, unit and year of the claim with the same value there
               (same dimension, different amount → contradicted; absent → insufficient;
               a different dimension, e.g. % vs percentage points → insufficient);
3. dates       every month the claim names (another month there → contradicted);
4. polarity    negation (by scope), direction (increase/decrease ...) and antonyms agree
               (a clean mismatch with the rest aligned → contradicted, else insufficient);
5. entities    every name, acronym and identifier of the claim (missing → insufficient);
6. coverage    at least ``support_coverage`` of the claim's content words (stemmed);
7. polar words every direction word, antonym and negated adjective of the claim is there;
8. comparison  a comparative claim ("more than", "compared with") needs a comparing passage;
9. assertion   a window stating an aim, question or method ("whether", "to assess") supports nothing;
10. hedges     a hedged window ("may", "suggests") does not support a flat assertion.

The defaults were chosen on the even-numbered lines of the SciFact train claims and checked on
the odd ones (``akm bench verify``); they favour precision over recall by design.
"""

from __future__ import annotations

from dataclasses import dataclass

from akm.claims.quantities import Quantity, months, quantities, same_amount
from akm.claims.segmentation import TextSpan, sentence_spans, strip_citations
from akm.verify.judgement import SupportJudgement, SupportLabel
from akm.verify.wording import (
    Word,
    compares,
    direction_neighbours,
    directions,
    form_set,
    hedged,
    is_content_in,
    is_entity,
    is_polar,
    negated_words,
    non_assertive,
    opposed_terms,
    stem,
    word_found,
    words,
)


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
    return QuantityCheck("agree", "")


@dataclass(frozen=True)
class LexicalClaimVerifier:
    """Supports a claim only when one window of the passage states all of it (see module docstring).

    ``support_coverage``: share of claim content words the window must contain.
    ``contradiction_coverage``: share needed before a mismatch counts as a contradiction
    rather than a gap. ``max_window_sentences``: how many consecutive sentences may align.
    """

    support_coverage: float = 0.8
    contradiction_coverage: float = 0.75
    max_window_sentences: int = 2
    joined_sentence_charge: float = 0.1
    reject_hedged_passages: bool = True

    def align(self, claim: str, claim_words: list[Word], passage: str) -> Alignment | None:
        """The best window: highest coverage (less the joined-sentence charge), then fewest sentences, then earliest."""
        content = [word for word in claim_words if is_content_in(word, claim)]
        sentences = sentence_spans(passage)
        sentence_words = [words(passage, sentence.start, sentence.end) for sentence in sentences]
        sentence_forms = [form_set(found) for found in sentence_words]
        best: Alignment | None = None
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
                if (
                    best is None
                    or self._credit(coverage, size) > self._credit(best.coverage, best.sentences) + 1e-12
                ):
                    best = Alignment(span, size, coverage, missing)
        return best

    def _credit(self, coverage: float, sentences: int) -> float:
        """Coverage less a charge per joined sentence: more text, more chance matches."""
        return coverage - self.joined_sentence_charge * (sentences - 1)

    def verify(self, claim: str, passage: str) -> SupportJudgement:
        # Evidence markers ([E1]) name the answer's sources, not anything the passage must say.
        claim = strip_citations(claim)
        claim_words = words(claim)
        content = [word for word in claim_words if is_content_in(word, claim)]
        if not content:
            return SupportJudgement("insufficient", None, "the claim has no content words to check", "claim")
        alignment = self.align(claim, claim_words, passage)
        if alignment is None:
            return SupportJudgement("insufficient", None, "the passage has no sentences", "alignment")
        span = (alignment.span.start, alignment.span.end)
        window_text = alignment.span.slice(passage)
        window_words = words(passage, alignment.span.start, alignment.span.end)
        scores = {"coverage": round(alignment.coverage, 4), "window_sentences": float(alignment.sentences)}

        def judged(label: SupportLabel, decided_by: str, note: str) -> SupportJudgement:
            return SupportJudgement(label, span, note, decided_by, scores)

        # An aim or a question ("to test whether X reduces Y") can neither support nor refute.
        can_contradict = not non_assertive(window_text)
        quantity = check_quantities(claim, window_text)
        if quantity.outcome == "conflict":
            label = self._mismatch_label(content, alignment, ()) if can_contradict else "insufficient"
            return judged(label, "quantity", quantity.detail)
        polarity, polar_terms, clean = self._polarity_mismatch(claim, claim_words, passage, window_words)
        if polarity:
            label = (
                self._mismatch_label(content, alignment, polar_terms)
                if clean and can_contradict
                else "insufficient"
            )
            return judged(label, "polarity", polarity)
        if quantity.outcome == "missing":
            return judged("insufficient", "quantity", quantity.detail)
        gap = self._first_gap(claim, claim_words, content, alignment, window_text, window_words)
        if gap is not None:
            return judged("insufficient", *gap)
        return judged(
            "supported",
            "all-checks",
            f"window covers {alignment.coverage:.0%} of the claim's content words; quantities, names and polarity agree",
        )

    def _first_gap(
        self,
        claim: str,
        claim_words: list[Word],
        content: list[Word],
        alignment: Alignment,
        window_text: str,
        window_words: list[Word],
    ) -> tuple[str, str] | None:
        """The first support check the window fails, as (check, note); None when all pass."""
        forms = form_set(window_words)
        first_word = claim_words[0] if claim_words else None
        absent = [
            word.surface
            for word in claim_words
            if is_entity(word, word is first_word) and not word_found(word, forms)
        ]
        if absent:
            return "entity", f"names not in the passage: {', '.join(absent)}"
        needed = self.support_coverage + self.joined_sentence_charge * (alignment.sentences - 1)
        if alignment.coverage < needed - 1e-12:
            return "coverage", (
                f"best window covers {alignment.coverage:.0%} of the claim's content words"
                f" (needs {needed:.0%}); missing: {', '.join(alignment.missing)}"
            )
        absent_polar = [word.surface for word in content if is_polar(word) and not word_found(word, forms)]
        if absent_polar:
            return "polarity", f"the passage does not state the claim's {', '.join(absent_polar)}"
        if compares(claim) and not compares(window_text):
            return "comparison", "the claim compares but the passage states no comparison"
        if non_assertive(window_text):
            return "assertion", "the passage states an aim, question or method, not a finding"
        if self.reject_hedged_passages and hedged(window_words) and not hedged(claim_words):
            return "hedge", "the passage hedges what the claim asserts"
        return None

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
