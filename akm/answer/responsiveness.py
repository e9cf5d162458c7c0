"""Does a supported claim answer the question? A supported claim that does not is not an answer.

Support says a passage states the claim; it says nothing about whether the claim is what was
asked. A verbatim copy of an unrelated paragraph is "supported" and useless. So a PASS needs a
supported claim that is also responsive:

* it shares the question's focus: most of the question's weighted content terms stand in the
  claim or in the passage (and heading path) that supports it, and the claim itself holds some
  of them or is close to the question under the embedding model;
* it holds the kind of answer a typed question asks for, and its score (the sentence score of ``akm.answer.selection``: terms, terms with context, similarity
  and whether it fills the question's answer type — a date for "when" (a day for "which day"), a
  count for "how many" (not a bare year nor a measure in another unit, nor an age), money for a
  price (a bare "34.00" under a "Price" column or after "costs"), an age for "what age", a name
  for "who", a place for "where", a cause for "why") reaches ``SCORE_MIN``;
* it is about what the question names: every number of the question ("Tessel 4.3", "in 1931")
  stands in the claim or its passage; the role a "who is the <role>" question asks the holder of
  stands in the claim or its heading, or its deed does ("Who was the first keeper?" is not answered
  by "designed by the engineer Ingrid Falk"; "led" names the leader), and a claim about another kind
  of what a number or person question narrows ("the last keeper" for the first) does not answer it;
* "How do I thaw a frozen pipe?" is answered only by a claim that names the deed ("Pour warm
  water over the pipe to thaw it"), and a phone number, a weight ("How much does it weigh?"), a
  figure for each one ("at each station") or a condition ("When should I call an engineer?" "If an
  error comes back ...") are narrower kinds of answer (see `fills_answer_type`);
* a "when did ..." question asks for the deed, not a state of the same word ("The lido is open from
  1 May" does not say when it opened), nor is it answered by a claim cut from a sentence whose
  left-out words hold the deed and its own date ("It was restored in 2019" from "It opened in 1937
  and was restored in 2019");
* it is about the document the question names: a term of the question that another document read
  for it is named for ("vet" beside "harbourside-vets.html"), and that the claim's passage and
  document never say, makes the claim another document's subject;
* a quoted table row is about what its first cell names: not where another row of the table names
  more of the question ("| Large | ... |" for an extra large unit, beside "| Extra large | ... |"),
  and, for "which <kind>", a row keyed under a column of that kind is the answer ("| `--one-file-system`
  | ... |" under "Flag");
* a yes-or-no question ("Can cars cross the bridge?") is answered only where every one of its
  terms stands in the claim or its passage: a sentence about the bridge that never names cars says
  neither yes nor no, however much else it shares;
* it adds something: a claim that only restates the question, or talks about "the text", does not;
  nor does one that ends on a demonstrative standing for the very thing asked ("X.25 uses what
  network type?" → "... uses this network type.").

The check and its reason are recorded among the packet's verdict reasons. When no supported claim
passes it, the verdict is HOLD with the reason "no passage in scope answers the question".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from akm.answer.selection import (
    HOLDING_DEEDS,
    MEASURE_TERMS,
    QuestionFocus,
    absent_role,
    answered_kind_terms,
    asks_method,
    asks_price,
    bounds_amount,
    column_band_terms,
    combined_score,
    content_terms,
    cut_event,
    deed_objects,
    fills_answer_type,
    is_polar_question,
    limited_days,
    limited_kinds,
    measured_terms,
    measured_thing,
    mentions_event,
    names_method,
    not_itself,
    one_as_article,
    only_asks,
    opposite_event,
    other_column,
    other_day,
    other_duration,
    other_kind,
    other_length,
    other_noun,
    other_numbered,
    other_unit_numbers,
    other_variant,
    other_variant_row,
    permission_terms,
    priced_object,
    question_codes,
    question_names,
    question_similarities,
    same_sense_terms,
    says_code,
    spanned_count,
    spanned_days,
    spanned_duration,
    states_instead,
    unheaded,
    unnamed_day,
    unnamed_kind,
    unnoticed_deed,
    unrated,
    which_kind,
    within_a_bound,
    within_a_range,
)
from akm.answer.tidy import is_non_answer, refers_ahead, refers_back
from akm.claims import (
    claim_text,
    is_cell_line,
    is_field_entry,
    is_line_entry,
    is_list_item,
    is_table_row,
    line_cells,
    sentence_spans,
)
from akm.embedding import Embedder

# The weighted share of the question's terms that the claim and its supporting passage must hold;
# all of them for a yes-or-no question.
FOCUS_MIN = 0.6
POLAR_FOCUS_MIN = 1.0
# The claim itself must hold this share of the terms, or be this close to the question.
CLAIM_TERMS_MIN = 0.5
CLAIM_SIMILARITY_MIN = 0.65
# And its combined score (the sentence score of akm.answer.selection) must reach this.
SCORE_MIN = 0.55
NO_ANSWER_REASON = "no passage in scope answers the question"
RESPONSIVE_PREFIX = "responsive:"


@dataclass(frozen=True, slots=True)
class ClaimInContext:
    """A supported claim with the text of the passages (and heading paths) that support it."""

    claim_id: str
    text: str
    context: str
    # The heading path of the supporting passage: what it names, every sentence below it is about.
    heading: str = ""
    # What a claim that opens with a pronoun refers back to in its passage (the clause or sentence
    # before it): its words are the claim's own ("it is kept for 30 days" of lost property).
    referent: str = ""
    # The question of an FAQ that a quoted answer answers (also part of ``heading``): it may name
    # the deed a "how do I" question asks about ("Can I extend my stay?" over "Usually, yes ...").
    asked: str = ""
    # The sentences of its paragraph or list item before it: what it goes on from ("On Fridays ...").
    before: str = ""
    # The title of its document (also part of ``heading``): every passage of it shares that name.
    title: str = ""
    # The line that leads in to the list the claim is an item of ("**Every 3 months (owner):**"):
    # what it says, each item says (also part of ``heading``).
    lead: str = ""
    # The header of the table a quoted row belongs to (also part of ``heading``): what its cells are.
    columns: str = ""
    # The terms that two or more of the passages read from its document hold: what the document
    # speaks of throughout ("salon" on a salon's page whose title calls it a studio).
    document_terms: frozenset[str] = frozenset()
    # The terms of the titles (or file names) of the other documents read for the question.
    other_titles: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Responsiveness:
    """Whether the answer addresses the question, which claim does, and why (for the verdict reasons)."""

    responsive: bool
    claim_id: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class _ClaimCheck:
    claim: ClaimInContext
    focus: float
    terms: float
    similarity: float | None
    type_found: bool
    adds: bool
    typed: bool = False
    # The demonstrative phrase that stands where the asked-for thing should ("this network type").
    refers: str | None = None
    # Numbers and names the question gives that neither the claim nor its passage holds ("Tessel
    # 4.3" asked, only "Tessel 4.2" written; "Invisalign" asked of a price list that lacks it): the
    # claim is about something else.
    absent_terms: tuple[str, ...] = ()
    polar: bool = False
    # The kind a "which <kind>" question asks for, where the claim names no thing of it, and the
    # question's first word ("which", "what").
    unnamed: str | None = None
    asking: str = "which"
    # False for a date question whose claim and passage speak only of whom or what it names, not of
    # what happened ("What year did Tesla die?" and a year of Tesla's patents).
    event: bool = True
    # Another kind of the noun the question narrows ("full plot" where a half plot was asked).
    other: str | None = None
    # The role a "who is the <role>" question asks the holder of, where the claim names it not.
    role: str | None = None
    # The (asked, said) words where the claim speaks of the opposite deed ("arrive" for "leave").
    opposite: tuple[str, str] | None = None
    # The claim and its passage share with the question only the name of the document they stand in
    # ("Who looks after the money for Fenbrook Harriers?" and the club's constitution saying "The
    # club shall be called Fenbrook Harriers"): every passage of that document would.
    title_only: bool = False
    # Names the question gives that a quoted entry (a table row, a list item, a line of fields)
    # lacks, with its headings and column headers: an entry says all it is about, so a row of
    # "Maximum bed temperature | 110 °C" does not answer what to set for PETG, though the passage
    # names PETG elsewhere.
    entry_lacks: tuple[str, ...] = ()
    # The question's terms that neither the claim nor its passage holds, heaviest first.
    lacking: tuple[str, ...] = ()
    # What the question asks that the claim does not say, in words ("no amount per month" for "how
    # much is it a month"; a request to the reader for "what happens if").
    misses: str | None = None

    @property
    def focus_min(self) -> float:
        return POLAR_FOCUS_MIN if self.polar else FOCUS_MIN

    @property
    def passes(self) -> bool:
        close = self.terms >= CLAIM_TERMS_MIN or (
            self.similarity is not None and self.similarity >= CLAIM_SIMILARITY_MIN
        )
        # A "how many" answered without a number, a "when" without a date, is not an answer.
        typed_ok = self.type_found or not self.typed
        return (
            self.adds
            and self.refers is None
            and not self.absent_terms
            and self.unnamed is None
            and self.other is None
            and self.role is None
            and self.opposite is None
            and not self.title_only
            and not self.entry_lacks
            and self.misses is None
            and self.event
            and typed_ok
            and self.focus >= self.focus_min - 1e-9
            and close
            and self.strength >= SCORE_MIN
        )

    @property
    def strength(self) -> float:
        return combined_score(self.terms, self.focus, self.similarity, self.type_found, typed=self.typed)

    def describe(self) -> str:
        similarity = "n/a" if self.similarity is None else f"{self.similarity:.2f}"
        return (
            f"claim {self.claim.claim_id}: score {self.strength:.2f} (needs {SCORE_MIN:.2f}), "
            f"focus terms {self.focus:.2f} with its passage "
            f"(needs {self.focus_min:.2f}{', a yes-or-no question' if self.polar else ''}"
            f"{'; lacks ' + ', '.join(self.lacking) if self.lacking else ''}), "
            f"{self.terms:.2f} in the claim, similarity {similarity}, "
            f"answer type {'found' if self.type_found else 'not found'}"
            + ("" if self.adds else ", adds nothing to the question")
            + ("" if self.refers is None else f", answers with a reference back ('{self.refers}')")
            + (
                f", the question's {', '.join(self.absent_terms)} not in its passage"
                if self.absent_terms
                else ""
            )
            + ("" if self.unnamed is None else f", names no {self.unnamed} (asked {self.asking})")
            + ("" if self.event else ", says not what happened then")
            + ("" if self.other is None else f", speaks of another kind: {self.other}")
            + ("" if self.role is None else f", names no {self.role} (asked who)")
            + (
                ""
                if self.opposite is None
                else f", says {self.opposite[1]!r} where the question asks {self.opposite[0]!r}"
            )
            + (", shares only its document's title with the question" if self.title_only else "")
            + (
                f", an entry that does not name the question's {', '.join(self.entry_lacks)}"
                if self.entry_lacks
                else ""
            )
            + ("" if self.misses is None else f", {self.misses}")
        )


def filled_columns(row: str, columns: str) -> set[str]:
    """The terms of the headers of the columns that the table row ``row`` fills: "| Synthetics |
    20-60°C | 3.5 kg |" under "| Programme | Temperature | Max load |" gives the maximum load."""
    if not columns.strip():
        return set()
    headers, values = _row_cells(columns), _row_cells(row)
    if len(headers) < 2 or len(headers) != len(values):
        return set()
    return {
        term
        for header, value in zip(headers, values, strict=True)
        if re.search(r"\w", value)
        for term in content_terms(header)
    }


def _row_cells(line: str) -> list[str]:
    """The cells of a table row: a Markdown row's, or a plain text's set out in columns."""
    line = line.strip()
    if line.startswith("|"):
        return [cell.strip() for cell in line.strip("|").split("|")]
    return line_cells(line) if is_cell_line(line) else []


def _quotes_an_entry(context: str, claim: str) -> bool:
    """Whether ``claim`` quotes an entry of its passage: a table row, a list item or a line of fields."""
    wanted = claim_text(claim)
    for span in sentence_spans(context):
        if claim_text(span.slice(context)) == wanted:
            return (
                is_table_row(context, span)
                or is_list_item(context, span)
                or is_field_entry(context, span)
                or is_line_entry(context, span)
            )
    return False


def _title_only(focus: QuestionFocus, title: str, claim_terms: set[str]) -> bool:
    """Whether the question's terms that its document's title lacks are all missing from the claim
    and its headings (while it has some): only the title's name, which every passage of the
    document shares, then ties the claim to the question, whatever the sentences around it say
    ("... free of charge" for the price of a Gold service, beside a sentence naming the Gold service).
    A measure's word met only by a value counts only where the question names nothing else beyond
    the title ("How much does the museum cost?")."""
    if not title:
        return False
    named = set(content_terms(title))
    beyond = [term for term in focus.weights if term not in named]
    if not beyond or len(beyond) == len(focus.weights):
        return False
    # A measure's word ("price", "open") is met by any value of it: where the question names more
    # than the measure ("the daily price for a small car", "when the café opens"), the claim must
    # meet some of that too, not only state a price or an opening time of the title's subject.
    topic = [term for term in beyond if term not in MEASURE_TERMS]
    return not any(term in claim_terms for term in beyond) or (
        bool(topic) and not any(term in claim_terms for term in topic)
    )


def _other_row(focus: QuestionFocus, claim: ClaimInContext, with_context: set[str]) -> str | None:
    """The thing a quoted table row is about, when it is another than the question's: its first
    cell shares no term with the question while a term of the question stands nowhere in the
    passage ("| Dog | Primary course | £89.00 |" for the price to vaccinate a ferret). A row whose
    first cell names what was asked ("| Band 2 | ... |"), or a question all of whose terms the
    passage holds ("what time is aqua aerobics" and "| Wednesday | Aqua aerobics | 19:00 |"),
    passes."""
    text = claim.text.strip()
    if not text.startswith("|") or not _quotes_an_entry(claim.context, claim.text):
        return None
    cells = [cell.strip() for cell in text.strip("|").split("|")]
    key = cells[0] if cells else ""
    if key and not re.search(r"\w", key):
        # A list set out as a table ("| • | Storm damage to fences. |") keys its rows by no mark.
        key = next((cell for cell in cells[1:] if re.search(r"\w", cell)), "")
    if not key:
        return None
    kind = which_kind(focus.question)
    if kind and claim.columns and kind in content_terms(_row_key(claim.columns)):
        # "Which flag stops it crossing mount points?": in a table whose first column is of flags,
        # the row's key is the answer, not what the row is about.
        return None
    missing = [term for term in focus.weights if term not in with_context]
    key_terms = set(content_terms(key)) | measured_terms(focus.question, key)
    if key_terms & set(focus.weights):
        # "| Large | ... | £41.00 |" for an extra large unit, where another row of the passage is keyed
        # "Extra large": that row names all of the question this one does, and more.
        asked = set(content_terms(text)) & set(focus.weights)
        # "| Trial lesson (30 minutes, one only) | £15.00 |" for a 30 minute lesson, where another row
        # is keyed "30 minutes": that row names only what was asked, this one a kind the question
        # does not ("trial").
        narrowed = bool(set(content_terms(key)) - set(focus.weights) - measured_terms(focus.question, key))
        keyed = (set(content_terms(key)) | measured_terms(focus.question, key)) & set(focus.weights)
        headers = set(content_terms(claim.columns))
        for line in claim.context.splitlines():
            other = _row_key(line)
            if not other or other.lower() == key.lower() or claim_text(line) == claim_text(claim.columns):
                continue
            other_terms = set(content_terms(other)) | measured_terms(focus.question, other)
            # A row keyed by a kind the question does not name ("Trial lesson ...") is no better
            # answer for naming more of it, where this row's key names only what was asked.
            other_narrowed = bool(
                set(content_terms(other)) - set(focus.weights) - measured_terms(focus.question, other)
            )
            if (
                set(content_terms(line)) & set(focus.weights) > asked and (narrowed or not other_narrowed)
            ) or (
                # The other row, with its columns' headers, names all that this row's key names of
                # the question ("| Contents |" is no better answer for a single item's limit than
                # "| Any single article (contents) |").
                narrowed
                and not other_narrowed
                and other_terms & set(focus.weights)
                and keyed <= other_terms | headers
            ):
                return f"{key.lower()} (asked: {other.lower()})"
        return None
    if not missing:
        return None
    return f"{key.lower()} (asked: {', '.join(missing)})"


def _row_key(line: str) -> str:
    """The first cell with a word of a table row's line ("" for other lines)."""
    if not line.strip().startswith("|"):
        return ""
    cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
    return next((cell for cell in cells if re.search(r"\w", cell)), "")


def _unmeasured(focus: QuestionFocus, with_context: set[str]) -> str | None:
    """The thing a "how much is ..." or "how warm is ..." question asks of, or what a priced deed is
    done to, when neither the claim nor its passage and headings name it: "how much is school
    dinner" is not answered by the price of breakfast club, nor "how warm is the jacuzzi" by the
    learner pool's temperature."""
    # And what a priced deed is done to: "how much to fit a child seat" is not answered by "Fit a new
    # chain", whose passage names no seat.
    for thing in (measured_thing(focus.question), priced_object(focus.question)):
        if thing is not None and thing[0] not in with_context:
            return f"no {thing[1].split()[-1]} (asked: {thing[1]})"
    return None


def check_responsiveness(
    focus: QuestionFocus, supported: Sequence[ClaimInContext], embedder: Embedder | None
) -> Responsiveness:
    """The most responsive supported claim, or the reason none answers the question."""
    if not supported:
        return Responsiveness(False, None, f"{NO_ANSWER_REASON}: no claim of the answer is supported")
    similarities = question_similarities(embedder, focus.question, [claim.text for claim in supported])
    numbers = [
        term
        for term in focus.weights
        if any(character.isdigit() for character in term)
        and not (term == "1" and one_as_article(focus.question))
    ]
    # A compound ("e-book", "vice-chair") tells one thing from another as a name does.
    names = [term for term in question_names(focus.question) if term in focus.weights] + [
        term for term in focus.weights if "-" in term.strip("-")
    ]
    codes = question_codes(focus.question)
    polar = is_polar_question(focus.question)
    checks = []
    for claim, similarity in zip(supported, similarities, strict=True):
        # A value of a measure the question names says that word ("11.4 km" the distance).
        # A word the claim adds to its passage ("The details of a new tenant ..." from "New tenants
        # ...") is none of the passage's: it meets no term of the question.
        # A number the question gives of a measure ("5 days") is not met by the same figure of
        # another thing ("5 or more rooms").
        claim_terms = (
            (
                set(content_terms(f"{claim.text} {claim.heading} {claim.referent}"))
                & set(content_terms(f"{claim.context} {claim.heading} {claim.referent} {claim.columns}"))
            )
            - other_unit_numbers(focus.question, claim.text)
            | measured_terms(focus.question, claim.text)
            | spanned_duration(focus.question, claim.columns)
            # "4 to 6 items" speaks of 5 items.
            | spanned_count(focus.question, f"{claim.text} {claim.columns}")
            | column_band_terms(focus.question, claim.text, claim.columns)
            # Days the claim limits the thing to answer whether on another ("Saturdays and Sundays
            # only" for a Friday); only in the claim's check, so that it does not draw to the
            # prompt every sentence that names days ("Yes, for men's cuts on Saturday mornings
            # only" for whether the salon is open on Mondays).
            | limited_days(focus.question, f"{claim.text} {claim.heading}")
            # "Monday to Friday" speaks of a Tuesday asked.
            | spanned_days(focus.question, f"{claim.text} {claim.heading} {claim.columns}")
            # "are trainers ok" is answered by "Trainers are not allowed".
            | permission_terms(focus.question, claim.text)
            # A row's value says what its column's header names ("3.5 kg" under "Max load").
            | filled_columns(claim.text, claim.columns)
        )
        # "Debit cards are accepted for Economy and Compact cars only" answers, no, whether a family
        # car may be paid for by debit card: the kinds it limits the noun to are its answer.
        limited = limited_kinds(focus.question, claim.text)
        claim_terms |= limited
        # An abbreviation the question uses is met where the passage or its headings spell it out.
        with_context = (
            claim_terms
            | (set(content_terms(claim.context)) - other_unit_numbers(focus.question, claim.context))
            | same_sense_terms(focus.question, f"{claim.heading}\n{claim.context}", phrases=False)
            # A band of the passage that holds the asked age or length ("adults aged 65 and over").
            | spanned_duration(focus.question, claim.context)
            | focus.spelled_out(claim.context, claim.heading)
            # A yes-or-no question's name for the place ("is the hair salon open mondays") is met
            # by what the claim's document speaks of throughout.
            | (claim.document_terms if polar else frozenset())
        )
        # "Which tool ..." answered by a claim that names a tool but not the word: the kind is left out
        # when every other term of the question is there.
        claim_focus = focus
        kinds = answered_kind_terms(focus.question, claim.text)
        if kinds and focus.without(kinds).coverage(with_context) >= 1.0 - 1e-9:
            claim_focus = focus.without(kinds)
        # A yes-or-no question's deed of having or moving a thing ("can I bring my bike on the 27")
        # is asked of the thing: a passage on the thing answers it in its own verb ("folding bikes
        # only"), so that deed is not one of the terms it must hold.
        # The claim names the thing itself ("take my electric bike" is not answered by "up to 2
        # bikes" beside "Electric scooters are not allowed").
        deeds = {term for term in claim_focus.weights if term in HOLDING_DEEDS and term not in with_context}
        if polar and deeds and deed_objects(focus.question) & set(claim_focus.weights) <= claim_terms:
            claim_focus = claim_focus.without(deeds)
        # What the asker tells after asking ("do you fix digital pianos? my clavinova has a dead
        # key") is not asked: a yes-or-no question's claim need not hold it.
        if polar:
            claim_focus = claim_focus.without(set(claim_focus.aside) - with_context)
        checks.append(
            _ClaimCheck(
                claim=claim,
                focus=claim_focus.coverage(with_context),
                lacking=tuple(
                    sorted(claim_focus.missing(with_context), key=lambda term: -claim_focus.weights[term])
                ),
                terms=claim_focus.coverage(claim_terms),
                similarity=similarity,
                type_found=fills_answer_type(
                    f"{claim.lead} {claim.text}".strip(), focus.answer_type, focus.question, claim.columns
                )
                and names_method(f"{claim.text} {claim.asked}", focus.question),
                adds=not is_non_answer(claim.text, focus.question),
                # "... during the times below" points to the answer without giving it.
                refers=refers_back(claim.text, focus.question) or refers_ahead(claim.text),
                typed=focus.answer_type != "any" or asks_method(focus.question),
                # A number inside a range the claim gives is there ("19 °C" in "18–20 °C"); a yes-or-no
                # question's amount is answered by a limit on amounts of its unit ("18 months" by
                # "covered for 12 months only").
                # A figure the claim gives of another thing ("Group bookings of 5 or more rooms" for
                # "5 days before") tells that it speaks of another case, whatever limit it sets.
                absent_terms=tuple(
                    term
                    for term in numbers
                    if term not in with_context
                    and (
                        term in other_unit_numbers(focus.question, claim.text)
                        or not (
                            within_a_range(term, claim.text)
                            or within_a_bound(term, focus.question, claim.text)
                            or bounds_amount(term, focus.question, claim.text)
                        )
                    )
                )
                + tuple(term for term in names if term not in with_context)
                # "zone f5" is not answered by a passage on zones F1 to F4 (nor by its "£5").
                + tuple(code for code in codes if not says_code(code, f"{claim.heading}\n{claim.context}"))
                # "vet open saturday?" is not answered by a museum's Saturday hours, beside a
                # document titled "harbourside-vets": what another document is named for, and the
                # claim's passage and document never name, is that document's subject.
                + tuple(
                    term
                    for term in focus.weights
                    if term in claim.other_titles
                    and term not in with_context
                    and term not in claim.document_terms
                    and term not in numbers
                ),
                polar=polar,
                unnamed=unnamed_kind(focus.question, claim.text),
                asking=(focus.question.split() or ["which"])[0].lower(),
                # Another kind of the noun asked ("full plot" for "half plot"), or another day.
                other=_other_row(focus, claim, with_context)
                or (None if limited else other_kind(focus.question, claim.text, claim.context, claim.heading))
                or other_day(focus.question, claim.text, claim.before, claim.heading)
                or other_variant(focus.question, claim.text, claim.heading)
                # "A block of 10 hours is £350." from the manual column, for an automatic.
                or other_column(focus.question, claim.text, claim.context)
                or other_variant_row(focus.question, claim.text, claim.columns, claim.context)
                or other_duration(focus.question, claim.text, claim.context)
                or other_length(focus.question, claim.text)
                or other_numbered(focus.question, claim.text, claim.heading, claim.title)
                or _unmeasured(focus, with_context)
                or other_noun(focus.question, claim.text)
                # A price asked of a day ("an adult swim on a saturday") differs by day as often
                # as not (peak, weekend rates): a claim that names no day does not give it.
                or (
                    unnamed_day(focus.question, f"{claim.text} {claim.columns}", claim.heading)
                    if polar or asks_price(focus.question)
                    else None
                ),
                role=absent_role(focus.question, claim.text, claim.heading),
                title_only=_title_only(focus, claim.title, claim_terms),
                entry_lacks=tuple(
                    term
                    for term in names
                    if term not in claim_terms and term not in focus.spelled_out(claim.text, claim.heading)
                )
                if _quotes_an_entry(claim.context, claim.text)
                else (),
                opposite=opposite_event(focus.question, claim.text),
                misses=unrated(focus.question, claim.text, claim.heading, claim.columns)
                or unheaded(focus.question, claim.text, claim.columns)
                or unnoticed_deed(focus.question, f"{claim.text} {claim.heading}")
                or not_itself(focus.question, claim.text)
                or (
                    "asks the reader to do something, not what happens"
                    if only_asks(focus.question, claim.text)
                    else None
                ),
                event=focus.answer_type != "date"
                or (
                    mentions_event(f"{claim.text} {claim.context}", focus.question)
                    and not states_instead(claim.text, focus.question)
                    and not cut_event(claim.text, claim.context, focus.question)
                ),
            )
        )
    passing = [check for check in checks if check.passes]
    asked = "" if focus.answer_type == "any" else f" (asks for a {focus.answer_type})"
    if passing:
        best = max(passing, key=lambda check: check.strength)
        return Responsiveness(
            True,
            best.claim.claim_id,
            f"{RESPONSIVE_PREFIX} the answer addresses the question{asked}: {best.describe()}",
        )
    best = max(checks, key=lambda check: check.strength)
    return Responsiveness(
        False,
        None,
        f"{NO_ANSWER_REASON}: no supported claim addresses the question{asked}; closest {best.describe()}",
    )


_RESPONSIVE_CLAIM = re.compile(r"claim (claim-[0-9a-f]+-\d+)")


def carried_forward(
    previous_reasons: Sequence[str], claim_statuses: Mapping[str, str]
) -> tuple[bool, str] | None:
    """The responsiveness of a re-verified answer, from its previous verdict reasons.

    Re-verification re-judges support, not the question: an answer that did not address the
    question still does not; one that did, still does while the claim that answered stays
    supported. ``None`` for packets whose reasons hold no responsiveness check.
    """
    for reason in previous_reasons:
        if reason.startswith(NO_ANSWER_REASON):
            return False, reason
        if reason.startswith(RESPONSIVE_PREFIX):
            match = _RESPONSIVE_CLAIM.search(reason)
            claim_id = match.group(1) if match else None
            if claim_id is not None and claim_statuses.get(claim_id) == "supported":
                return True, reason
            return (
                False,
                f"{NO_ANSWER_REASON}: the claim that answered the question ({claim_id or 'unknown'}) "
                "is no longer supported",
            )
    return None


__all__ = [
    "NO_ANSWER_REASON",
    "RESPONSIVE_PREFIX",
    "ClaimInContext",
    "Responsiveness",
    "carried_forward",
    "check_responsiveness",
]
