"""Structural checks: does the passage link the claim's words the way the claim does?

Coverage alone says that the claim's words appear in the passage. These checks ask whether
they appear in the same relation:

* direction   the claim's direction word (increase, slower, inhibit ...) and the passage's word
              that governs the same arguments point the same way;
* roles       the compared terms of a comparison ("higher in A than in B") and the subject and
              object of a relation verb ("A inhibits B") are on the same sides;
* attribution a claim word stated only inside a hedge ("may") or a reported statement
              ("it was claimed that", "critics say") is not asserted by the passage;
* list        words found in another entry of a list belong to someone else;
* predicate   the words after the claim's verb must all be there (coverage may only spare
              subject words), its degree words ("only", "too much") too, and a word the claim
              predicates must not appear only as a modifier in front of the claim's subject;
* proximity   the claim's words must be found close together, not scattered over the window.

Every check here only ever withholds support. A claim that quotes its passage closely
(``near_verbatim``) skips the role, list, predicate and proximity checks: its wording is the
passage's own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from akm.claims.segmentation import TextSpan, sentence_spans
from akm.verify.lexicon import DEGREE_WORDS, RELATION_WORDS, REPORTERS, REPORTING_VERBS
from akm.verify.wording import (
    HEDGES,
    Word,
    direction_of,
    form_set,
    is_content,
    is_entity,
    stem,
    word_found,
    words,
)

_RELATION_STEMS: frozenset[str] = frozenset(stem(word) for word in RELATION_WORDS)
_AUXILIARIES: frozenset[str] = frozenset(
    ["is", "are", "was", "were", "has", "have", "had", "can", "could", "may", "might", "will",
     "would", "does", "do", "did", "should", "must", "remains", "remain", "becomes", "become",
     "represents", "represent", "constitutes", "constitute"]
)  # fmt: skip
_NOMINAL_SUFFIXES: tuple[str, ...] = ("tion", "tions", "sion", "sions", "ment", "ments", "ance", "ence")
# Words after a direction verb that show it is used without an object ("increased with dose").
_INTRANSITIVE_FOLLOWERS: frozenset[str] = frozenset(
    ["with", "by", "after", "from", "to", "at", "during", "over", "in", "among", "when", "following",
     "than", "across", "between", "significantly", "markedly", "slightly", "and", "but"]
)  # fmt: skip
_ADJUNCT_PREPOSITIONS: frozenset[str] = frozenset(
    ["on", "at", "during", "for", "in", "among", "after", "before", "with", "from", "by", "over",
     "under", "within", "across", "when", "while", "because", "despite", "to"]
)  # fmt: skip
_CLAUSE_BREAK = re.compile(
    r"[;:]|,\s*(?=(?:but|whereas|while|although|though|yet|however|suggesting|indicating|implying|"
    r"which|who)\b)|\b(?:whereas|although)\b",
    re.IGNORECASE,
)
# Frames that report a statement instead of making it: the whole sentence is reported.
_ATTRIBUTION = re.compile(
    r"\b(?:it|this|that)\s+(?:is|was|has\s+been|had\s+been|have\s+been|is\s+being)\s+"
    r"(?:widely\s+|often\s+|also\s+|long\s+|previously\s+)?"
    r"(?:claimed|argued|suggested|proposed|alleged|believed|thought|said|speculated|rumou?red|"
    r"hypothesi[sz]ed|postulated|asserted|contended|assumed|presumed|reported)\b|"
    rf"\b(?:{REPORTERS})\s+(?:\w+\s+){{0,2}}?(?:{REPORTING_VERBS})\b|"
    rf"\b(?:{REPORTING_VERBS})\s+that\b|"
    r"\b(?:is|are|was|were)\s+(?:widely\s+|often\s+|generally\s+|commonly\s+)?(?:thought|believed|"
    r"said|claimed|alleged|rumou?red|presumed|assumed|supposed|purported|reputed|hypothesi[sz]ed|"
    r"proposed|suggested|speculated)\s+to\b|"
    r"\b(?:was|were|has\s+been|have\s+been)\s+(?:proposed|hypothesi[sz]ed|suggested|postulated|"
    r"speculated|claimed|alleged)\b|"
    r"\baccording\s+to\s+(?:some|critics|opponents|proponents|rumou?rs?|claims?|one|another)\b|"
    r"\b(?:another|one|an|a|the|this|that|some)\s+(?:\w+\s+)?(?:analysis|study|report|paper|article|"
    r"source|estimate|commentator|critic)\s+(?:claimed|claims|argued|argues|alleged|alleges|"
    r"suggested|suggests|asserted|asserts)\b|"
    r"\b(?:allegedly|reportedly|purportedly|supposedly|ostensibly|rumou?red)\b",
    re.IGNORECASE,
)
# A comparison marker; "than" before a number ("more than ten times") bounds a quantity instead.
_COMPARE_MARKER = re.compile(
    r"\bthan\b(?!\s+(?:\d|one|two|three|four|five|six|seven|eight|nine|ten|twice|half|double|a\s+"
    r"(?:third|quarter|half)|expected|before|previously|usual)\b)|"
    r"\bcompared\s+(?:to|with)\b|\brelative\s+to\b|\bversus\b|\bvs\.?(?=\s)|"
    r"\b(?:times|twice|half|fold)\s+(?:that|those)\s+(?:of|in|for|among)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Finding:
    """A structural check that failed: its name and why, in words."""

    check: str
    detail: str
    # For a direction finding: the claim's subject is stated beside the opposite word, so the
    # passage says the opposite of the claim rather than of something near it.
    clean: bool = True


class WindowIndex:
    """The words of a passage window with where each claim word occurs in it."""

    def __init__(self, passage: str, span: TextSpan) -> None:
        self.passage = passage
        self.span = span
        self.words = words(passage, span.start, span.end)
        self._forms = [form_set([word]) for word in self.words]
        for index in range(len(self.words) - 1):
            pair = self.words[index].joined + self.words[index + 1].joined
            self._forms[index] |= {pair, stem(pair)}

    def positions(self, word: Word) -> list[int]:
        """Indices of window words that ``word`` meets (a joined pair counts at its first word)."""
        return [index for index, forms in enumerate(self._forms) if word_found(word, forms)]

    def text(self, start: int, end: int) -> str:
        return self.passage[start:end]


def _content(text: str, text_words: Sequence[Word]) -> list[Word]:
    return [word for word in text_words if is_content(word)]


def clause_bounds(text: str, start: int, end: int) -> list[TextSpan]:
    """Sentences of ``text[start:end]`` cut further at clause breaks (; : ", whereas" ...)."""
    clauses: list[TextSpan] = []
    for sentence in sentence_spans(text[start:end]):
        cut = sentence.start
        for match in _CLAUSE_BREAK.finditer(text, start + sentence.start, start + sentence.end):
            clauses.append(TextSpan(start + cut, match.start()))
            cut = match.end() - start
        clauses.append(TextSpan(start + cut, start + sentence.end))
    return [clause for clause in clauses if clause.end > clause.start]


def _clause_of(clauses: Sequence[TextSpan], offset: int) -> TextSpan | None:
    return next((clause for clause in clauses if clause.start <= offset < clause.end), None)


def claim_is_hedged(claim: str, claim_words: Sequence[Word]) -> bool:
    """True when the claim itself hedges or reports ("may", "it was claimed that")."""
    return any(word.lower in HEDGES for word in claim_words) or bool(_ATTRIBUTION.search(claim))


# Where a hedge word's reach ends: a comma or a clause break.
_HEDGE_BREAK = re.compile(r"[,;:()]|\b(?:but|whereas|although|though)\b", re.IGNORECASE)
_STATEMENT_END = re.compile(r"[.!?]\s+")


def statement_bounds(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Sentences, also cut where a period is followed by a lower-case word ("(iHepSCs). iHepSCs can"):
    a report or a hedge does not reach past a full stop."""
    bounds: list[tuple[int, int]] = []
    for sentence in sentence_spans(text[start:end]):
        cut = start + sentence.start
        for match in _STATEMENT_END.finditer(text, cut, start + sentence.end):
            if match.end() < start + sentence.end and not _is_initial(text, match.start()):
                bounds.append((cut, match.start() + 1))
                cut = match.end()
        bounds.append((cut, start + sentence.end))
    return bounds


def _is_initial(text: str, dot: int) -> bool:
    """A period after a single letter or a short abbreviation ("e.g.", "vs.", "J.") ends no statement."""
    before = text[max(0, dot - 4) : dot].split()
    token = before[-1] if before else ""
    return len(token.strip("(").rstrip(".")) <= 2 or token.lower() in {"e.g", "i.e", "vs", "al", "fig"}


def hedged_scopes(text: str, start: int, end: int) -> list[tuple[int, int, str]]:
    """(start, end, kind) of the parts of ``text[start:end]`` under a hedge or an attribution.

    A reporting frame ("it was claimed that", "critics say", "is thought to") covers what
    follows it up to the end of its sentence, or the whole sentence when it trails ("...,
    critics say."). A hedge word ("may", "suggesting") covers only the stretch between the
    commas or clause breaks around it.
    """
    scopes: list[tuple[int, int, str]] = []
    for first, last in statement_bounds(text, start, end):
        for frame in _ATTRIBUTION.finditer(text, first, last):
            trailing = len(words(text, frame.end(), last)) <= 2
            scopes.append((first if trailing else frame.start(), last, "attribution"))
        for word in words(text, first, last):
            if word.lower in HEDGES:
                left = max([first] + [m.end() for m in _HEDGE_BREAK.finditer(text, first, word.start)])
                following = _HEDGE_BREAK.search(text, word.end, last)
                scopes.append((left, following.start() if following else last, "hedge"))
    return scopes


def hedge_finding(claim: str, claim_words: Sequence[Word], index: WindowIndex) -> Finding | None:
    """A claim word the window states only under a hedge or an attribution, unless the claim hedges too."""
    if claim_is_hedged(claim, claim_words):
        return None
    scopes = hedged_scopes(index.passage, index.span.start, index.span.end)
    if not scopes:
        return None
    reported: list[str] = []
    kinds: set[str] = set()
    for word in _content(claim, claim_words):
        found = index.positions(word)
        if not found:
            continue
        covering = [
            next((kind for first, last, kind in scopes if first <= index.words[at].start < last), "")
            for at in found
        ]
        if all(covering):
            reported.append(word.surface)
            kinds.update(covering)
    if not reported:
        return None
    check = "attribution" if "attribution" in kinds else "hedge"
    what = "reports" if check == "attribution" else "hedges"
    return Finding(check, f"the passage only {what} the claim's {', '.join(reported)}")


def near_verbatim(claim_words: Sequence[Word], index: WindowIndex, claim: str) -> bool:
    """True when the claim's content words appear in the window in the claim's order, close together.

    At most one content word in ten may be missing or out of order (a subject named instead
    of "it", a dropped "However"), and the matched words must lie within one and a half claim
    lengths of each other.
    """
    content = _content(claim, claim_words)
    if not content:
        return False
    sequence = [index.positions(word) for word in content]
    best_run: list[int] = []
    # Longest chain of claim words matched at increasing window positions (small inputs: O(n·m)).
    chains: dict[int, list[int]] = {}
    for positions in sequence:
        updated = dict(chains)
        for position in positions:
            previous = max((chain for end, chain in chains.items() if end < position), key=len, default=[])
            candidate = [*previous, position]
            if len(candidate) > len(updated.get(position, [])):
                updated[position] = candidate
        chains = updated
    for chain in chains.values():
        if len(chain) > len(best_run):
            best_run = chain
    missing = len(content) - len(best_run)
    if missing > len(content) // 10:
        return False
    if not best_run:
        return False
    extent = best_run[-1] - best_run[0] + 1
    # A quote lies within one statement: the matched words must not straddle a ";" or a full stop.
    between = index.text(index.words[best_run[0]].start, index.words[best_run[-1]].end)
    if ";" in between or re.search(r"[.!?]\s", between):
        return False
    return extent <= 1.5 * len(claim_words) + 3


def _sides(
    text: str, text_words: Sequence[Word], clauses: Sequence[TextSpan], marker_start: int, marker_end: int
) -> tuple[list[Word], list[Word]]:
    """Content words of the marker's clause before and after it (the right side stops at a comma)."""
    clause = _clause_of(clauses, marker_start) or TextSpan(0, len(text))
    right_end = clause.end
    comma = text.find(",", marker_end, clause.end)
    if comma != -1:
        right_end = comma
    left = [w for w in text_words if clause.start <= w.start < marker_start and is_content(w)]
    right: list[Word] = []
    for word in text_words:
        if not marker_end <= word.start < right_end:
            continue
        if right and word.lower in _ADJUNCT_PREPOSITIONS:
            # "than boys on the reading test": the compared item ends where an adjunct begins.
            break
        if is_content(word):
            right.append(word)
    return left, right


def _side_evidence(
    claim_left: Sequence[Word], claim_right: Sequence[Word], left: Sequence[Word], right: Sequence[Word]
) -> tuple[int, int, list[str]]:
    """(swapped, kept, swapped words): claim words found only on the other / the same side."""
    left_forms, right_forms = form_set(list(left)), form_set(list(right))
    claim_left_forms, claim_right_forms = form_set(list(claim_left)), form_set(list(claim_right))
    swapped, kept, moved = 0, 0, []
    for claim_side, own, other, claim_other, counts_kept in (
        (claim_left, left_forms, right_forms, claim_right_forms, False),
        (claim_right, right_forms, left_forms, claim_left_forms, True),
    ):
        for word in claim_side:
            if word_found(word, claim_other) or direction_of(word):
                continue
            on_own, on_other = word_found(word, own), word_found(word, other)
            if on_other and not on_own:
                swapped += 1
                moved.append(word.surface)
            elif on_own and not on_other and counts_kept:
                # Only the right side names the compared item or the object; the left side
                # also holds what is measured ("mortality was higher in A than in B"), which
                # stays on the left whichever way round A and B are.
                kept += 1
    return swapped, kept, moved


def _side_direction(side: Sequence[Word]) -> str:
    found = [direction_of(word) for word in side if direction_of(word)]
    return found[-1] if found else ""


def comparison_roles_finding(claim: str, claim_words: Sequence[Word], index: WindowIndex) -> Finding | None:
    """The compared terms swap sides: "higher in A than in B" against "higher in B than in A".

    A swap together with an opposite direction ("lower in B than in A") says the same thing,
    so it is not counted as a swap.
    """
    claim_marker = _COMPARE_MARKER.search(claim)
    if claim_marker is None:
        return None
    claim_clauses = clause_bounds(claim, 0, len(claim))
    claim_left, claim_right = _sides(claim, claim_words, claim_clauses, *claim_marker.span())
    claim_direction = _side_direction(claim_left)
    text = index.passage
    clauses = clause_bounds(text, index.span.start, index.span.end)
    best: tuple[int, int, list[str]] | None = None
    for marker in _COMPARE_MARKER.finditer(text, index.span.start, index.span.end):
        left, right = _sides(text, index.words, clauses, *marker.span())
        swapped, kept, moved = _side_evidence(claim_left, claim_right, left, right)
        direction = _side_direction(left)
        if claim_direction and direction and direction != claim_direction:
            swapped, kept = kept, swapped
            moved = []
        if best is None or swapped + kept > best[0] + best[1]:
            best = (swapped, kept, moved)
    if best is None or not (best[0] >= 1 and best[0] > best[1]):
        return None
    return Finding(
        "roles", f"the passage compares the other way round ({', '.join(best[2])} on the other side)"
    )


def _relation_word_index(claim_words: Sequence[Word]) -> int | None:
    for position, word in enumerate(claim_words):
        if position and stem(word.joined) in _RELATION_STEMS:
            return position
    return None


def _passive_after(text_words: Sequence[Word], position: int) -> bool:
    """ "inhibited by", "is inhibited directly by", "inhibition by": the agent comes after."""
    return any(word.lower == "by" for word in text_words[position + 1 : position + 3])


def relation_roles_finding(claim: str, claim_words: Sequence[Word], index: WindowIndex) -> Finding | None:
    """The subject and object of the claim's relation verb swap around the same verb in the passage."""
    if _COMPARE_MARKER.search(claim):
        return None
    position = _relation_word_index(claim_words)
    if position is None:
        return None
    relation = claim_words[position]
    claim_clauses = clause_bounds(claim, 0, len(claim))
    claim_left, claim_right = _sides(claim, claim_words, claim_clauses, relation.start, relation.end)
    if _passive_after(claim_words, position):
        claim_left, claim_right = claim_right, claim_left
    text = index.passage
    clauses = clause_bounds(text, index.span.start, index.span.end)
    relation_stem = stem(relation.joined)
    best: tuple[int, int, list[str]] | None = None
    nominal = relation.lower.endswith(_NOMINAL_SUFFIXES)
    linked: set[str] = set()
    for at, word in enumerate(index.words):
        # "transcription regulation" puts the object before a noun; only a verb form has sides.
        if stem(word.joined) != relation_stem or word.lower.endswith(_NOMINAL_SUFFIXES) != nominal:
            continue
        clause = _clause_of(clauses, word.start)
        if clause is not None:
            linked |= form_set([w for w in index.words if clause.start <= w.start < clause.end])
        left, right = _sides(text, index.words, clauses, word.start, word.end)
        if _passive_after(index.words, at):
            left, right = right, left
        evidence = _side_evidence(claim_left, claim_right, left, right)
        if best is None or evidence[0] + evidence[1] > best[0] + best[1]:
            best = evidence
    if best is None:
        return None
    # A name the claim links by the verb, stated in the passage but outside every clause of that
    # verb ("founded in 1990; John Smith joined in 1995"), is not linked by it.
    unlinked = [
        w.surface
        for w in (*claim_left, *claim_right)
        if is_entity(w, w is claim_words[0]) and index.positions(w) and not word_found(w, linked)
    ]
    if unlinked:
        return Finding(
            "predicate",
            f"the passage's {relation.surface!r} does not link {', '.join(unlinked)}: it is stated in another clause",
        )
    if best[0] < 2 or best[0] <= best[1]:
        return None
    return Finding(
        "roles",
        f"the passage's {relation.surface!r} links the claim's terms the other way round ({', '.join(best[2])})",
    )


def _right_arguments(text_words: Sequence[Word], position: int, reach: int = 4) -> set[str]:
    """Stems of the content words a direction word governs, within its clause.

    After it ("increased risk of bleeding", "reduces mortality"), up to ``reach`` words and up
    to the next direction word ("weakened X and strengthened Y"); before it when it is used
    intransitively ("the level increased with dose", "mortality fell"), i.e. when a
    preposition or nothing follows.
    """
    following = text_words[position + 1] if position + 1 < len(text_words) else None
    before = _governed(list(reversed(text_words[:position])), reach, leftwards=True)
    if (following is None or following.lower in _INTRANSITIVE_FOLLOWERS) and before:
        return before
    return _governed(list(text_words[position + 1 :]), reach) or before


def _governed(sequence: Sequence[Word], reach: int, leftwards: bool = False) -> set[str]:
    """Up to ``reach`` content stems along ``sequence``, stopping at a direction word once one is
    found and, leftwards, at a conjunction ("X and a faster rise": X is not what rises)."""
    found: list[str] = []
    for word in sequence:
        if len(found) >= reach or (leftwards and word.lower in {"and", "or", "but", "whereas", "while"}):
            break
        if direction_of(word):
            if found:
                break
            continue
        if is_content(word):
            found.append(stem(word.joined))
    return set(found)


def _subject_beside(claim_words: Sequence[Word], index: WindowIndex, position: int) -> bool:
    """True when a subject word of the claim is stated in the clause of the passage word at ``position``."""
    subject = subject_words(claim_words)
    if not subject:
        return False
    clauses = clause_bounds(index.passage, index.span.start, index.span.end)
    clause = _clause_of(clauses, index.words[position].start)
    if clause is None:
        return False
    return any(
        clause.start <= index.words[found].start < clause.end
        for word in subject
        for found in index.positions(word)
    )


def direction_finding(claim: str, claim_words: Sequence[Word], index: WindowIndex) -> Finding | None:
    """The passage's direction word that governs the claim's arguments points the other way.

    For each direction word of the claim, the passage's direction word sharing most of its
    arguments (the words after it: "increased risk of bleeding") is taken; when that word and
    every other one sharing as many arguments say the opposite direction, the passage states
    the opposite change of the same thing.
    """
    claim_clauses = clause_bounds(claim, 0, len(claim))
    for word in claim_words:
        said = direction_of(word)
        if not said:
            continue
        claim_clause = _clause_of(claim_clauses, word.start)
        own_clause = (
            [w for w in claim_words if claim_clause.start <= w.start < claim_clause.end]
            if claim_clause
            else list(claim_words)
        )
        arguments = _right_arguments(own_clause, own_clause.index(word) if word in own_clause else 0)
        if not arguments:
            continue
        clauses = clause_bounds(index.passage, index.span.start, index.span.end)
        overlaps: list[tuple[int, str, str, int]] = []
        for at, other in enumerate(index.words):
            stated = direction_of(other)
            if not stated:
                continue
            clause = _clause_of(clauses, other.start)
            clause_words = (
                [w for w in index.words if clause.start <= w.start < clause.end] if clause else index.words
            )
            local = clause_words.index(other) if other in clause_words else at
            shared = len(arguments & _right_arguments(clause_words, local))
            overlaps.append((shared, stated, other.surface, at))
        if not overlaps:
            continue
        top = max(shared for shared, _, _, _ in overlaps)
        if top < 1 or (top < 2 and len(arguments) > 1):
            continue
        best = [(stated, surface, at) for shared, stated, surface, at in overlaps if shared == top]
        if all(stated != said for stated, _, _ in best):
            return Finding(
                "direction",
                f"claim says {word.surface!r} ({said}); the passage says {best[0][1]!r} ({best[0][0]}) of the same thing",
                _subject_beside(claim_words, index, best[0][2]),
            )
    return None


def list_items(text: str, start: int, end: int) -> tuple[list[TextSpan], TextSpan | None]:
    """The entries of a list in ``text[start:end]`` and its header (text before a colon), if it is one.

    A list: sentences that are short lines, or a sentence with two or more semicolons, or
    three or more short comma-separated entries.
    """
    sentences = [TextSpan(start + s.start, start + s.end) for s in sentence_spans(text[start:end])]
    if len(sentences) > 1 and all(len(words(text, s.start, s.end)) <= 12 for s in sentences):
        return sentences, None
    for sentence in sentences:
        body_start = sentence.start
        header: TextSpan | None = None
        colon = text.find(":", sentence.start, sentence.end)
        first_separator = min(
            (
                at
                for at in (
                    text.find(",", sentence.start, sentence.end),
                    text.find(";", sentence.start, sentence.end),
                )
                if at != -1
            ),
            default=sentence.end,
        )
        if colon != -1 and colon < first_separator:
            header = TextSpan(sentence.start, colon)
            body_start = colon + 1
        body = text[body_start : sentence.end]
        separator = ";" if body.count(";") >= 2 else ","
        pieces = body.split(separator)
        if len(pieces) < 3:
            continue
        if separator == "," and sum(len(piece.split()) for piece in pieces) / len(pieces) > 6:
            continue
        items: list[TextSpan] = []
        cursor = body_start
        for piece in pieces:
            items.append(TextSpan(cursor, cursor + len(piece)))
            cursor += len(piece) + 1
        return items, header
    return [], None


def list_finding(
    claim: str, claim_words: Sequence[Word], index: WindowIndex, anchors: Iterable[Word]
) -> Finding | None:
    """A claim word found only in another entry of a list than the claim's anchor (its name)."""
    items, header = list_items(index.passage, index.span.start, index.span.end)
    if len(items) < 2 or list_items(claim, 0, len(claim))[0]:
        return None

    def item_of(position: int) -> int | None:
        offset = index.words[position].start
        return next((n for n, item in enumerate(items) if item.start <= offset < item.end), None)

    anchor_items: set[int] = set()
    for anchor in anchors:
        anchor_items |= {n for n in map(item_of, index.positions(anchor)) if n is not None}
    if not anchor_items:
        return None
    foreign: list[str] = []
    for word in _content(claim, claim_words):
        found = index.positions(word)
        if not found:
            continue
        places = {item_of(position) for position in found}
        in_header = header is not None and any(
            header.start <= index.words[position].start < header.end for position in found
        )
        if None in places or in_header or places & anchor_items:
            continue
        foreign.append(word.surface)
    if not foreign:
        return None
    return Finding(
        "list", f"{', '.join(foreign)} belongs to another entry of the list than the claim's subject"
    )


def verb_position(claim_words: Sequence[Word]) -> int | None:
    """Index of the claim's main verb: the first auxiliary, relation verb or direction verb after the subject."""
    for position, word in enumerate(claim_words):
        if position == 0:
            continue
        if word.lower in _AUXILIARIES or stem(word.joined) in _RELATION_STEMS:
            return position
        if direction_of(word) and word.lower.endswith(("s", "ed")) and not word.lower.endswith("ss"):
            return position
    return None


def subject_words(claim_words: Sequence[Word]) -> list[Word]:
    position = verb_position(claim_words)
    return [w for w in claim_words[: position or 0] if is_content(w)]


_EVALUATIVE = re.compile(r"[a-z]{3,}(?:ive|ous|ful|less|able|ible|ly)")


def degree_finding(claim_words: Sequence[Word], index: WindowIndex) -> Finding | None:
    """The claim's degree words ("only", "too much", "minuscule") must be stated: they are what the
    claim says of the thing, and a quote always carries them."""
    degree = [
        w.surface
        for at, w in enumerate(claim_words)
        if w.lower in DEGREE_WORDS
        and not index.positions(w)
        and not (at and claim_words[at - 1].lower == "not")  # "not only ... but" adds, it does not limit
    ]
    if degree:
        return Finding("degree", f"the passage does not state the claim's {', '.join(degree)}")
    return None


def swapped_finding(claim_words: Sequence[Word], index: WindowIndex, passage: str) -> Finding | None:
    """The word the claim puts after an auxiliary or modal ("can thaw") must not be one the passage
    says elsewhere, outside the window, while the window, after that same auxiliary, says another
    one the claim leaves out: "The condensate pipe can freeze in very cold weather. Pour warm water
    over the pipe to thaw it." does not support "The condensate pipe can thaw in very cold weather",
    though one sentence holds four of its five content words. A word the passage never uses (a
    synonym: "is involved" for "is associated") is left to the coverage score."""
    claim_forms = form_set(list(claim_words))
    elsewhere = form_set(words(passage))
    for position in range(len(claim_words) - 1):
        auxiliary, said = claim_words[position], claim_words[position + 1]
        if (
            auxiliary.lower not in _AUXILIARIES
            or not is_content(said)
            or _ADVERB.fullmatch(said.lower)
            or index.positions(said)
            or not word_found(said, elsewhere)
        ):
            continue
        for found in range(len(index.words) - 1):
            if index.words[found].lower != auxiliary.lower:
                continue
            instead = next(
                (word for word in index.words[found + 1 : found + 3] if not _ADVERB.fullmatch(word.lower)),
                None,
            )
            if instead is not None and is_content(instead) and not word_found(instead, claim_forms):
                return Finding(
                    "predicate",
                    f"the passage says {auxiliary.surface!r} {instead.surface!r} where the claim says "
                    f"{auxiliary.surface!r} {said.surface!r}, a word the passage uses elsewhere",
                )
    return None


def replaced_word_finding(claim_words: Sequence[Word], index: WindowIndex, passage: str) -> Finding | None:
    """A claim that repeats the window word for word around one content word, where the window has
    another content word the claim lacks, says that of another thing, when the claim's word is one
    the passage uses elsewhere: "A dog must be at least 8 weeks old and under 10 years old when a
    new policy starts" is "A cat must be at least 8 weeks old and under 10 years old when a new
    policy starts" with the dog of the sentence before ("A dog must be at least 8 weeks old and
    under 8 years old ..."), though the cat's sentence holds all of it but the dog. The words on
    both sides of the slot must match (two on the one side at the claim's first or last word); a
    word the passage never uses (a synonym) is left to the coverage score, and a number to the
    quantity checks. A table row is no running text: a claim puts its own words between the cells
    it quotes ("ORBIT_LOG sets how much ..." of "| `ORBIT_LOG` | `info` | how much ... |")."""
    if "|" in index.text(index.span.start, index.span.end):
        return None
    window = [word.lower for word in index.words]
    claim_forms = form_set(list(claim_words))
    passage_forms: set[str] | None = None
    last = len(claim_words) - 1
    for position, said in enumerate(claim_words):
        if (
            not is_content(said)
            or any(character.isdigit() for character in said.surface)
            or index.positions(said)
        ):
            continue
        before = [claim_words[position - offset].lower for offset in (1, 2) if position - offset >= 0]
        after = [claim_words[position + offset].lower for offset in (1, 2) if position + offset <= last]
        # Both neighbours, or two on the one side where the claim has none on the other.
        before, after = (before[:1], after[:1]) if before and after else (before, after)
        for found, instead in enumerate(index.words):
            if (
                not is_content(instead)
                or word_found(instead, claim_forms)
                or any(
                    found - 1 - offset < 0 or window[found - 1 - offset] != word
                    for offset, word in enumerate(before)
                )
                or any(
                    found + 1 + offset >= len(window) or window[found + 1 + offset] != word
                    for offset, word in enumerate(after)
                )
            ):
                continue
            if passage_forms is None:
                passage_forms = form_set(words(passage))
            if word_found(said, passage_forms):
                return Finding(
                    "substitution",
                    f"the passage says {instead.surface!r} where the claim says {said.surface!r}, "
                    "a word the passage uses elsewhere",
                )
    return None


_DETERMINERS = frozenset(
    {"the", "a", "an", "its", "their", "his", "her", "our", "your", "my", "this", "that"}
)


def qualifier_finding(claim_words: Sequence[Word], index: WindowIndex) -> Finding | None:
    """A word the claim puts between a determiner and a noun the window states, which the window
    nor the passage anywhere says, narrows that noun into another thing: "Oona Breckenridge is the
    deputy manager" is not "Oona Breckenridge — Hostel Manager", nor is "a half plot" the passage's
    "a plot". A word the passage uses elsewhere is its topic ("a steam engine" in a passage about
    steam engines whose window says "an internal combustion engine"). Numbers and names are left to
    the quantity and entity checks."""
    passage_forms: set[str] | None = None
    for position in range(1, len(claim_words) - 1):
        before, word, noun = claim_words[position - 1], claim_words[position], claim_words[position + 1]
        if (
            before.lower in _DETERMINERS
            and is_content(word)
            and word.surface[:1].islower()
            and not any(character.isdigit() for character in word.surface)
            and not index.positions(word)
            and is_content(noun)
            and index.positions(noun)
        ):
            if passage_forms is None:
                passage_forms = form_set(words(index.passage))
            if word_found(word, passage_forms):
                continue
            return Finding(
                "modifier",
                f"the claim says {word.surface!r} {noun.surface!r} where the passage says {noun.surface!r} "
                f"without {word.surface!r}",
            )
    return None


# Words between an auxiliary and its verb that say how, how often or whether, not what.
_ADVERB = re.compile(r"[a-z]+ly|not|never|also|often|still|now|then|usually|always|already|just|even|only")


def predicate_finding(claim_words: Sequence[Word], index: WindowIndex) -> Finding | None:
    """What the claim says of its subject must be stated in the same relation.

    Its evaluative words after the verb ("effective", "significantly") must be stated; and a word the claim predicates must not
    appear only as a modifier right in front of the claim's subject with nothing of the claim
    said after it ("global sea level rise" does not say "sea level rise is global").
    """
    position = verb_position(claim_words)
    if position is None:
        return None
    predicate = [w for w in claim_words[position:] if is_content(w) and w.lower not in _AUXILIARIES]
    missing = [
        w.surface
        for w in predicate
        if _EVALUATIVE.fullmatch(w.lower) and not direction_of(w) and not index.positions(w)
    ]
    if missing:
        return Finding("predicate", f"the passage does not state the claim's {', '.join(missing)}")
    predicate_forms = form_set(predicate)
    subject = [w for w in claim_words[:position] if is_content(w) and not word_found(w, predicate_forms)]
    subject_positions = {p for w in subject for p in index.positions(w)}
    if not subject_positions:
        return None
    claim_forms = form_set(list(claim_words))
    subject_forms = form_set(subject)
    for word in predicate:
        if word_found(word, subject_forms):
            continue
        found = index.positions(word)
        if found and all(_modifies(index, p, subject_positions, claim_forms) for p in found):
            return Finding(
                "modifier",
                f"the passage uses {word.surface!r} only to qualify the claim's subject, not as what it says of it",
            )
    return None


def _modifies(index: WindowIndex, position: int, subject_positions: set[int], claim_forms: set[str]) -> bool:
    """True when the word at ``position`` stands right before a subject word (no punctuation
    between) and nothing of the claim follows that noun phrase in its clause."""
    following = position + 1
    if following not in subject_positions:
        return False
    between = index.text(index.words[position].end, index.words[following].start)
    if between.strip():
        return False
    while following + 1 in subject_positions:
        following += 1
    clauses = clause_bounds(index.passage, index.span.start, index.span.end)
    clause = _clause_of(clauses, index.words[following].start)
    clause_end = clause.end if clause else index.span.end
    rest = [
        w for w in index.words[following + 1 :] if w.start < clause_end and (is_content(w) or direction_of(w))
    ]
    return not any(word_found(w, claim_forms) for w in rest)


def proximity_finding(claim: str, claim_words: Sequence[Word], index: WindowIndex) -> Finding | None:
    """The claim's found words spread over much more text than the claim has (at least one occurrence each)."""
    content = _content(claim, claim_words)
    occurrences = [(position, n) for n, word in enumerate(content) for position in index.positions(word)]
    needed = {n for _, n in occurrences}
    if len(needed) < 3:
        return None
    occurrences.sort()
    counts: dict[int, int] = {}
    best = len(index.words) + 1
    left = 0
    for right_position, n in occurrences:
        counts[n] = counts.get(n, 0) + 1
        while len(counts) == len(needed):
            first_position, first_n = occurrences[left]
            best = min(best, right_position - first_position + 1)
            counts[first_n] -= 1
            if counts[first_n] == 0:
                del counts[first_n]
            left += 1
    limit = 3 * len(claim_words) + 10
    if best > limit and len(sentence_spans(index.text(index.span.start, index.span.end))) == 1:
        return Finding(
            "proximity",
            f"the claim's words are spread over {best} words of the passage (allowed {limit:.0f})",
        )
    return None
