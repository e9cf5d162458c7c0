"""Answer text → atomic claims, each with a stable id, its span, a rule-detected class,
an importance and the evidence it cites.

Class precedence, first match wins (documented because one sentence often fits several):
1. policy          normative rules: must not, forbidden, allowed, required, deny, policy ...
2. recommendation  advice: should, must, recommend, use X, prefer ...
3. date            years, months, weekdays, quarters, ISO dates
4. number          numbers, percentages, quantities with units
5. system-state    state verbs: is enabled, is running, is configured, is stored, defaults to ...
6. interpretation  suggests, likely, means, indicates, implies ...
7. other
Rules come before facts because a rule's truth is about what is allowed, not what is; a date
comes before a number because a year is also a number and the more specific class wins.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal, get_args

from akm.claims.quantities import mentions_date, quantities
from akm.claims.segmentation import (
    CITATION,
    TextSpan,
    cited_evidence,
    claim_text,
    definition_term,
    heads_cell_table,
    is_cell_line,
    is_faq_question,
    is_field_entry,
    is_lead_in,
    is_line_entry,
    is_list_item,
    is_table_row,
    lead_in,
    sentence_spans,
)

ClaimClass = Literal["number", "date", "system-state", "recommendation", "policy", "interpretation", "other"]
CLAIM_CLASSES: tuple[ClaimClass, ...] = get_args(ClaimClass)
Importance = Literal["important", "supporting"]

_POLICY = re.compile(
    r"\b(?:polic(?:y|ies)|must not|mustn't|shall not|may not|not (?:be )?(?:allowed|permitted)|"
    r"(?:is|are|be) (?:not )?(?:allowed|permitted|forbidden|prohibited|required|mandatory)|forbid\w*|"
    r"prohibit\w*|disallow\w*|deny|denies|denied|compliance|complian\w*|mandatory)\b",
    re.IGNORECASE,
)
_RECOMMENDATION = re.compile(
    r"\b(?:should|must|ought to|recommend\w*|advis\w*|prefer\w*|best practice|consider using|"
    r"make sure|ensure|avoid)\b|^(?:use|run|set|enable|disable|install|configure|prefer|avoid|keep)\b",
    re.IGNORECASE,
)
_SYSTEM_STATE = re.compile(
    r"\b(?:is|are|was|were|be|been|stays?|remains?)\s+(?:not\s+)?(?:currently\s+|now\s+)?"
    r"(?:enabled|disabled|running|stopped|configured|stored|installed|deployed|set|on|off|active|"
    r"inactive|available|unavailable|online|offline|locked|cached|encrypted|indexed|mounted|up|down)\b|"
    r"\bdefaults? to\b|\bby default\b|\b(?:is|are) the default\b|\blistens on\b|\bruns (?:on|as|in)\b",
    re.IGNORECASE,
)
_INTERPRETATION = re.compile(
    r"\b(?:suggest\w*|likely|unlikely|probabl\w*|means?|meaning|indicat\w*|impl(?:y|ies|ied)|"
    r"appears? to|seems? to|may|might|could|presumabl\w*|possibl\w*|points? to)\b",
    re.IGNORECASE,
)
# Joins two clauses only when the right side starts like a clause of its own.
_CLAUSE_JOIN = re.compile(r"(?:;\s+|,\s+(?:and|but|whereas|while)\s+|\s+whereas\s+)", re.IGNORECASE)
_AUXILIARY = re.compile(
    r"\b(?:is|are|was|were|has|have|had|does|do|did|can|cannot|will|would|should|must|may|might|"
    r"could|remains?|stays?|defaults?|uses?|runs?|stores?|requires?)\b",
    re.IGNORECASE,
)


# "5. EvidencePacket contract", "§3.2 Verdicts", "#5 Packets": a section number opens a title.
_SECTION_TITLE = re.compile(r"^\s*#*\s*(?:§\s*)?\d+(?:\.\d+)*[.)]?\s+\S")
_HEADING_MARK = re.compile(r"^\s*#{1,6}\s")
_STATEMENT_WORD = re.compile(r"[A-Za-z][\w'’-]*|\d[\w.,]*")
# A lowercase word with a verb's ending: "supports", "opened", "reads".
# An instruction: a sentence that opens with its verb and goes on with what it acts on ("Clean the
# filter once a week.", "Heat the oven to 220 °C.").
_INSTRUCTION = re.compile(
    r"^\W*[A-Z][a-z]{2,}\s+(?:the|a|an|it|them|your|this|these|that|those|all|any|each|every|up|off|"
    r"out|back|down)\b.*[.!]\W*$"
    # Or a verb of a manual's instructions, whatever follows it: "Pour warm water over the pipe.",
    # "Never use boiling water."
    r"|^\W*(?:(?:Never|Always|Do not|Don't|Please)\s+[a-z]+|(?:Pour|Press|Turn|Open|Close|Check|Call|Keep|Use|"
    r"Add|Remove|Place|Put|Set|Hold|Wait|Switch|Insert|Connect|Disconnect|Fill|Empty|Drain|Clean|Wash|Wipe|"
    r"Store|Report|Read|Contact|Send|Bring|Take|Avoid|Leave|Let|Mix|Stir|Heat|Bake|Cool|Cut|Fold|Push|Pull|"
    r"Lift|Lower|Raise|Tighten|Loosen|Replace|Restart|Reset|Unplug|Plug|Charge|Apply|Allow|Make|Ask|Email|"
    r"Phone|Ring|Visit|Book|Register|Sign|Fill|Submit|Return|Follow|Go|Walk|Drive|Park|Lock|Unlock))"
    r"\s+\w.*[.!]\W*$"
)
# A labelled value, closed by a full stop: "Owner: Sam Okoro.", "Absent: Bea (on leave)." (a title
# such as "Incident report: checkout outage" has no full stop).
_LABELLED = re.compile(r"^\W*[A-Z][\w'’-]*(?:\s+[\w'’-]+){0,2}:\s+\w.*[.!]\W*$")
_VERB_ENDING = re.compile(r"\b[a-z]{2,}(?:ed|es|s)\b")
# A verb in its plain form after a plural subject or a pronoun, which has no such ending either:
# "Rehearsals take place every Wednesday", "We meet at 7:30 pm".
_PLAIN_VERB = re.compile(
    r"\b(?:[A-Za-z]{3,}s|[Ww]e|[Tt]hey|[Yy]ou|I)\s+(?:usually\s+|always\s+|often\s+|also\s+)?"
    r"(?:take|run|open|close|start|begin|meet|need|pay|cost|get|go|come|give|make|keep|stay|last|apply|"
    r"include|cover|receive|require|allow|use|remain|finish|end|sing|play|work|serve|offer|provide|"
    r"charge|accept|hold|leave|arrive|return|sit|stand)\b"
)
# Irregular past forms, which have no such ending: "She sank in a storm in 1931."
_IRREGULAR_VERB = re.compile(
    r"\b(?:sank|sunk|sang|sung|swam|began|begun|became|become|came|went|gone|saw|seen|took|taken|gave|"
    r"given|made|found|built|won|lost|ran|fell|fallen|rose|risen|grew|grown|knew|known|wrote|written|"
    r"drove|driven|held|led|met|paid|sold|sent|spent|stood|told|thought|brought|bought|caught|taught|"
    r"fought|kept|felt|meant|heard|broke|broken|chose|chosen|spoke|spoken|stole|stolen|froze|frozen|"
    r"drew|drawn|flew|flown|threw|thrown|blew|shook|shaken|got|struck|drank|fled|fed|hid|hidden|said|"
    r"laid|sat|dug|hung|shot|shone|slid|spun|swung|ate|eaten|forgot|forgotten|rode|ridden|wore|worn|"
    r"tore|torn|bore|born|borne|lent|bent|dealt|slept|swept|wept|burnt|learnt)\b",
    re.IGNORECASE,
)


# A figure in a list entry or a table row, with at least one word beside it.
_LISTED_FIGURE = re.compile(r"(?=.*\d)(?=.*[^\W\d_]{2,})")
# A table row of two cells or more, a label and its values, none empty: "| Chair | Hannah Ruiz |",
# "| `--compression LEVEL` | `off`, `fast`, `auto` or `max` | `auto` |".
_LABELLED_ROW = re.compile(r"\|\s*[^|\s][^|]*\|(?:\s*[^|\s][^|]*\|)+")


# A list entry or a line of fields that gives a label and its value: "Vice-Chair: Hettie Marsh",
# "Oona Breckenridge — Hostel Manager."
_LABELLED_ENTRY = re.compile(r"^\W*[A-Z][\w'’.-]*(?:\s+[\w'’.-]+){0,3}(?::|\s+[—–-])\s+\W*[^\W\d_]{2,}")


def _states_entry(text: str, table_row: bool) -> bool:
    """Whether a list entry or table row states something without a verb: it holds a figure, or it
    gives a label and its values: a table row of two cells or more, none empty ("| Chair | Hannah
    Ruiz |", as "Chair: Hannah Ruiz."), a list entry or field line "Vice-Chair: Hettie Marsh" or "Oona Breckenridge —
    Hostel Manager"."""
    if _LISTED_FIGURE.search(text):
        return True
    if table_row:
        return bool(_LABELLED_ROW.fullmatch(text.strip())) and len(re.findall(r"[^\W\d_]{2,}", text)) >= 2
    return bool(_LABELLED_ENTRY.match(text))


def is_claimable(text: str, span: TextSpan) -> bool:
    """Whether the sentence ``span`` of ``text`` would make a claim: a statement, or an entry of a
    list or table with a figure. A title, a heading or a bare name would not, so it answers nothing."""
    row = is_table_row(text, span)
    # A sentence of a plain text's description states something of its term ("NO SERVICE on any
    # route." under "Wed 25 December (Christmas Day)"), as an item does of the line that leads in
    # to its list; either states something in two words.
    described = definition_term(text, span) is not None
    led = described or (is_list_item(text, span) and lead_in(text, span) is not None)
    listed = (
        is_list_item(text, span)
        or row
        or is_field_entry(text, span)
        or is_line_entry(text, span)
        or described
    )
    sentence = claim_text(span.slice(text))
    if (
        (row and _heads_table(text, span))
        or heads_cell_table(text, span)
        or is_faq_question(text, span)
        or is_lead_in(text, span)
    ):
        return False
    # A row of a plain text's table set out in columns gives its label and value as a table row
    # of cells does ("Kingsmoor and Pelling        Wednesday").
    cells = is_cell_line(span.slice(text)) and len(re.findall(r"[^\W\d_]{2,}", sentence)) >= 2
    return is_statement(sentence) or (
        listed
        and (
            cells or _states_entry(sentence, row) or (led and len(re.findall(r"[^\W\d_]{2,}", sentence)) >= 2)
        )
    )


def _heads_table(text: str, span: TextSpan) -> bool:
    """Whether the table row ``span`` is its table's header: a rule line follows it."""
    line_end = text.find("\n", span.end)
    if line_end < 0:
        return False
    following = text[line_end + 1 :].split("\n", 1)[0]
    return bool(re.fullmatch(r"\s*\|[\s:|-]*\|\s*", following)) and "-" in following


def is_statement(text: str) -> bool:
    """True when ``text`` states something; headings, section titles and bare names do not.

    A statement has at least three words and a verb (an auxiliary such as "is" or "has", a
    lowercase word with a verb's ending, an irregular past form such as "sank", or a plain form
    after a plural subject or a pronoun: "Rehearsals take place ..."), or it is an
    instruction that opens with its verb ("Heat the oven to 220 °C."), or a labelled value with a
    full stop ("Owner: Sam Okoro."). A heading marker, a leading
    section number, or Title Case words with no closing full stop make a title, not a claim.
    """
    if _HEADING_MARK.match(text):
        return False
    words = _STATEMENT_WORD.findall(text)
    if len(words) < 3:
        return False
    if _SECTION_TITLE.match(text) and not text.rstrip().endswith((".", "!", "?")):
        return False
    if _SECTION_TITLE.match(text) and len(words) <= 6 and not _AUXILIARY.search(text):
        return False
    capitalised = sum(1 for word in words if word[0].isupper())
    if capitalised >= 0.6 * len(words) and not text.rstrip().endswith((".", "!", "?")):
        return False
    return bool(
        _AUXILIARY.search(text)
        or _VERB_ENDING.search(text)
        or _IRREGULAR_VERB.search(text)
        or _PLAIN_VERB.search(text)
        or _INSTRUCTION.match(text)
        or _LABELLED.match(text)
    )


@dataclass(frozen=True, slots=True)
class ExtractedClaim:
    """One atomic claim of an answer.

    ``text`` is the claim without citation markers; ``start``/``end`` index the answer, and
    ``claim_text(answer[start:end]) == text``. ``cited_evidence`` holds the numbers of the
    evidence markers ([E1] → 1) the claim cites.
    """

    claim_id: str
    text: str
    start: int
    end: int
    claim_class: ClaimClass
    importance: Importance
    cited_evidence: tuple[int, ...]


def detect_claim_class(text: str) -> ClaimClass:
    """The class of a claim text by the precedence in this module's docstring."""
    if _POLICY.search(text):
        return "policy"
    if _RECOMMENDATION.search(text):
        return "recommendation"
    if mentions_date(text):
        return "date"
    if quantities(text):
        return "number"
    if _SYSTEM_STATE.search(text):
        return "system-state"
    if _INTERPRETATION.search(text):
        return "interpretation"
    return "other"


def _words(text: str) -> int:
    return len(re.findall(r"\w+", claim_text(text)))


def split_clauses(answer: str, sentence: TextSpan) -> list[TextSpan]:
    """Split a sentence at '; ' or ', and/but/whereas/while' only where both sides are clauses.

    Conservative: the right side must start with a clause of its own (an auxiliary or a
    state verb within its first five words) and both sides must have at least three words.
    """
    parts: list[TextSpan] = []
    start = sentence.start
    for join in _CLAUSE_JOIN.finditer(answer, sentence.start, sentence.end):
        left = answer[start : join.start()]
        right = answer[join.end() : sentence.end]
        head = " ".join(re.findall(r"\w+", right)[:5])
        if _words(left) >= 3 and _words(right) >= 3 and _AUXILIARY.search(head):
            parts.append(TextSpan(start, join.start()))
            start = join.end()
    parts.append(TextSpan(start, sentence.end))
    return parts


def claim_id_for(text: str, index: int) -> str:
    """Stable id: the same normalised text at the same position always gets the same id."""
    normalised = re.sub(r"\W+", " ", text.lower()).strip()
    digest = hashlib.sha256(normalised.encode("utf-8")).hexdigest()[:10]
    return f"claim-{digest}-{index}"


def _trim(answer: str, span: TextSpan) -> TextSpan:
    start, end = span.start, span.end
    while start < end and answer[start].isspace():
        start += 1
    while end > start and answer[end - 1].isspace():
        end -= 1
    return TextSpan(start, end)


# A short lead-in after a sentence's last comma: ", and includes:", ", including:", ", as follows:".
_TRAILING_LEAD_IN = re.compile(r",\s*(?P<lead>[^,\d]{1,40}):\s*$")


def _before_lead_in(answer: str, span: TextSpan) -> TextSpan:
    """``span`` without a short lead-in of at most four words after its last comma, where what stands
    before it holds a verb of its own; otherwise ``span`` as it is."""
    raw = span.slice(answer)
    match = _TRAILING_LEAD_IN.search(raw)
    if match is None or len(match.group("lead").split()) > 4:
        return span
    kept = _trim(answer, TextSpan(span.start, span.start + match.start()))
    return kept if is_statement(claim_text(kept.slice(answer))) else span


def extract_claims(answer_text: str, important_classes: Collection[str]) -> list[ExtractedClaim]:
    """Atomic claims of ``answer_text``: sentences and list items, split further at joined clauses.

    A clause without citation markers of its own inherits those of the last clause of its
    sentence, because a trailing marker usually covers the whole sentence.
    """
    claims: list[ExtractedClaim] = []
    for sentence in sentence_spans(answer_text):
        # An entry of a list or a table states its figure without a verb: "400 g rye flour".
        row = is_table_row(answer_text, sentence)
        listed = is_list_item(answer_text, sentence) or row or is_field_entry(answer_text, sentence)
        clauses = [_trim(answer_text, part) for part in split_clauses(answer_text, sentence)]
        clauses = [part for part in clauses if claim_text(part.slice(answer_text))]
        if not clauses:
            continue
        trailing = cited_evidence(clauses[-1].slice(answer_text))
        for part in clauses:
            raw = part.slice(answer_text)
            text = claim_text(raw)
            if text.endswith(":"):
                # "It costs £14.50 a month for cats, and includes:" states its figure before the
                # lead-in to the list that follows: the claim is what stands before that lead-in.
                part = _before_lead_in(answer_text, part)
                raw = part.slice(answer_text)
                text = claim_text(raw)
            # A lead-in ("Key points:") introduces claims rather than making one; a heading, a
            # section title or a bare name states nothing that could be supported.
            # A table's header row names its columns and states nothing ("| Zone | Price per day |"
            # above its rule): a quoted row brings it along, and it must not answer for the rows.
            if (
                not re.search(r"\w", text)
                or CITATION.fullmatch(raw.strip())
                or text.endswith(":")
                or (row and _heads_table(answer_text, part))
                or not (is_statement(text) or (listed and _states_entry(text, row)))
            ):
                continue
            claim_class = detect_claim_class(text)
            claims.append(
                ExtractedClaim(
                    claim_id=claim_id_for(text, len(claims)),
                    text=text,
                    start=part.start,
                    end=part.end,
                    claim_class=claim_class,
                    importance="important" if claim_class in important_classes else "supporting",
                    cited_evidence=cited_evidence(raw) or trailing,
                )
            )
    return claims
