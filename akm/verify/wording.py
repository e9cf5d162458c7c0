"""Word-level normalisation for lexical verification: tokens, stems, stopwords, polarity and hedge cues.

The stemmer is a small suffix stripper. It is applied to both sides of every comparison, so
what matters is that inflections of one word meet at one stem, not that the stem is a word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from akm.verify.lexicon import DOWN_WORDS, UP_WORDS

STOPWORDS: frozenset[str] = frozenset(
    ["a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "aren't", "as", "at", "be", "because", "been", "before", "being", "between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "either", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "nor", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves", "s", "t", "via", "per", "thus", "therefore", "however", "within", "upon", "among", "amongst", "whether", "one", "ones", "it's", "that's", "there's", "been", "become", "becomes", "became", "using", "used", "use", "uses", "based", "including", "include", "includes", "included", "overall", "respectively"]
)  # fmt: skip
# Words whose presence flips the polarity of a clause.
NEGATIONS: frozenset[str] = frozenset(
    ["not", "no", "never", "without", "cannot", "can't", "cant", "don't", "dont", "doesn't", "doesnt", "didn't", "didnt", "isn't", "isnt", "aren't", "arent", "wasn't", "wasnt", "weren't", "werent", "won't", "wont", "shouldn't", "wouldn't", "couldn't", "hasn't", "haven't", "hadn't", "neither", "nor", "none", "nothing", "nobody", "lack", "lacks", "lacked", "lacking", "absence", "absent", "unable", "fail", "fails", "failed", "failing"]
)  # fmt: skip
# "not only" and "no doubt" add rather than negate.
_NOT_NEGATING = re.compile(
    r"\b(?:not only|no doubt|not necessarily only|with or without|no longer than)\b", re.IGNORECASE
)
HEDGES: frozenset[str] = frozenset(
    ["may", "might", "could", "possibly", "possible", "potentially", "potential", "perhaps", "suggest", "suggests", "suggested", "suggesting", "suggestive", "likely", "unlikely", "probably", "presumably", "appear", "appears", "appeared", "seem", "seems", "seemed", "hypothesize", "hypothesise", "hypothesized", "hypothesised", "hypothesis", "propose", "proposed", "speculate", "unclear", "uncertain", "putative"]
)  # fmt: skip
# Stems of words that say a quantity goes up / down.
_DIRECTION_UP_STEMS: frozenset[str] = frozenset(
    ["increas", "rais", "elevat", "higher", "greater", "more", "enhanc", "upregulat", "up-regulat", "promot", "improv", "gain", "boost", "accelerat", "stimulat", "exceed", "larger", "rise", "rose", "risen", "augment", "amplif", "positiv", "major", "most", "highest", "maximal", "overexpress", "strengthen", "extend", "prolong"]
)  # fmt: skip
_DIRECTION_DOWN_STEMS: frozenset[str] = frozenset(
    ["decreas", "reduc", "lower", "less", "fewer", "diminish", "downregulat", "down-regulat", "inhibit", "suppress", "impair", "loss", "los", "declin", "drop", "attenuat", "smaller", "slow", "negativ", "minor", "least", "lowest", "minimal", "weaken", "shorten", "fell", "fall", "fallen"]
)  # fmt: skip
# Pairs of stems that cannot both describe the same state.
ANTONYM_PAIRS: tuple[tuple[str, str], ...] = (
    ("enabl", "disabl"),
    ("allow", "deny"),
    ("allow", "deni"),
    ("permit", "forbid"),
    ("accept", "reject"),
    ("present", "absent"),
    ("benign", "malignant"),
    ("agonist", "antagonist"),
    ("sensitiv", "resistant"),
    ("activ", "inactiv"),
    ("includ", "exclud"),
    ("succe", "fail"),
    ("true", "false"),
    ("befor", "after"),
    ("abov", "below"),
    ("start", "stop"),
    ("on", "off"),
    ("harm", "benefit"),
    ("harmful", "beneficial"),
    ("safe", "unsafe"),
)
_NEGATING_PREFIXES: tuple[str, ...] = ("in", "un", "non", "dis", "im", "ir", "il", "anti", "de")
_WORD = re.compile(r"[^\W_]+(?:['’][a-z]+)?(?:[-/][^\W_]+)*")
_IRREGULAR: dict[str, str] = {
    "mice": "mouse",
    "children": "child",
    "women": "woman",
    "men": "man",
    "teeth": "tooth",
    "feet": "foot",
    "analyses": "analysis",
    "data": "datum",
    "criteria": "criterion",
    "phenomena": "phenomenon",
    "bacteria": "bacterium",
    "rose": "rise",
    "risen": "rise",
    "fell": "fall",
    "fallen": "fall",
    "lost": "lose",
    "led": "lead",
    "shown": "show",
    "showed": "show",
    "known": "know",
    "found": "find",
    "better": "good",
    "best": "good",
    "worse": "bad",
    "worst": "bad",
}
_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("ational", "ate"),
    ("izations", "ize"),
    ("ization", "ize"),
    ("isation", "ize"),
    ("ssions", "ss"),
    ("ssion", "ss"),
    ("uctions", "uce"),
    ("uction", "uce"),
    ("itions", "it"),
    ("ition", "it"),
    ("ations", "ate"),
    ("ation", "ate"),
    ("ising", "ize"),
    ("izing", "ize"),
    ("ised", "ize"),
    ("ises", "ize"),
    ("ise", "ize"),
    ("nesses", ""),
    ("ness", ""),
    ("ments", ""),
    ("ment", ""),
    ("ingly", ""),
    ("edly", ""),
    ("ies", "y"),
    ("ied", "y"),
    ("sses", "ss"),
    ("ing", ""),
    ("ed", ""),
    ("ly", ""),
    ("es", ""),
    ("s", ""),
)


@dataclass(frozen=True, slots=True)
class Word:
    """A word of a text: its surface form, where it is, and its comparable forms."""

    surface: str
    start: int
    end: int

    @property
    def lower(self) -> str:
        return self.surface.lower().replace("’", "'")

    @property
    def joined(self) -> str:
        """The word without inner hyphens or slashes, lowercased: 'IL-6' and 'il6' meet here."""
        return re.sub(r"[-/]", "", self.lower)

    @property
    def parts(self) -> list[str]:
        return [part for part in re.split(r"[-/]", self.lower) if part]


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude, consistent stem: 'increases', 'increased', 'increasing', 'increase' → 'increas'."""
    lowered = word.lower().replace("’", "'")
    lowered = lowered.removesuffix("'s").removesuffix("'")
    if lowered in _IRREGULAR:
        lowered = _IRREGULAR[lowered]
    if len(lowered) > 5:
        # British and American spellings meet: ischaemic/ischemic, oestrogen/estrogen.
        lowered = lowered.replace("ae", "e").replace("oe", "e")
    if len(lowered) <= 3 or not lowered.isalpha():
        return lowered
    for suffix, replacement in _SUFFIXES:
        if not lowered.endswith(suffix):
            continue
        base = lowered[: -len(suffix)]
        if suffix == "s" and lowered.endswith(("ss", "us", "is", "ys")):
            break
        if len(base) + len(replacement) < 3:
            break
        lowered = base + replacement
        break
    if len(lowered) > 3 and lowered.endswith("e"):
        lowered = lowered[:-1]
    if len(lowered) > 3 and lowered[-1] == lowered[-2] and lowered[-1] not in "lsz" and lowered[-1].isalpha():
        lowered = lowered[:-1]
    return lowered


# Stems (and whole words) that say a quantity goes up / down: the curated lexicon, stemmed
# with the stemmer above so every inflection meets its entry.
DIRECTION_UP: frozenset[str] = _DIRECTION_UP_STEMS | {stem(word) for word in UP_WORDS} | set(UP_WORDS)
DIRECTION_DOWN: frozenset[str] = _DIRECTION_DOWN_STEMS | {stem(word) for word in DOWN_WORDS} | set(DOWN_WORDS)


def words(text: str, start: int = 0, end: int | None = None) -> list[Word]:
    """Words of ``text[start:end]`` with offsets into ``text``."""
    return [
        Word(match.group(), match.start(), match.end())
        for match in _WORD.finditer(text, start, end or len(text))
    ]


def is_number(word: Word) -> bool:
    return bool(re.fullmatch(r"[\d.,]+", word.surface))


def is_content(word: Word) -> bool:
    """Words that carry meaning for coverage: not stopwords, negations, hedges or bare numbers."""
    lower = word.lower
    return not (
        lower in STOPWORDS or lower in NEGATIONS or lower in HEDGES or is_number(word) or len(lower) < 2
    )


def is_content_in(word: Word, text: str) -> bool:
    """``is_content``, except that "lack"/"absence" before "of" are content there."""
    if _PRIVATIVE_OF.match(text, word.start):
        return True
    return is_content(word)


def is_entity(word: Word, first_in_sentence: bool) -> bool:
    """Names: acronyms (PrP, mTOR, BRCA1), identifiers with digits (IL-6), capitalised words inside a sentence."""
    surface = word.surface
    letters = [char for char in surface if char.isalpha()]
    if not letters or is_number(word):
        return False
    has_digit = any(char.isdigit() for char in surface)
    inner_capital = any(char.isupper() for char in surface[1:])
    greek = any("\u0370" <= char <= "\u03ff" for char in surface)
    if has_digit or inner_capital or greek:
        return True
    return surface[0].isupper() and not first_in_sentence and word.lower not in STOPWORDS


def form_set(text_words: list[Word], pairs: bool = True) -> set[str]:
    """Every comparable form of the words: the words, their parts, and adjacent pairs joined.

    Joined pairs let "T cells" meet "T-cell"; a hyphenated claim word must meet its whole
    compound, so "UCP1-dependent" does not meet "UCP1-independent ... ATP-dependent".
    """
    forms: set[str] = set()
    for index, word in enumerate(text_words):
        forms.add(word.joined)
        forms.add(stem(word.joined))
        for part in word.parts:
            forms.add(part)
            forms.add(stem(part))
        if pairs and index + 1 < len(text_words):
            pair = word.joined + text_words[index + 1].joined
            forms.add(pair)
            forms.add(stem(pair))
    return forms


def word_found(word: Word, forms: set[str]) -> bool:
    """True when ``word`` (a hyphenated word as a whole compound) is among ``forms``."""
    return word.joined in forms or stem(word.joined) in forms


def negated(text: str, text_words: list[Word]) -> bool:
    """True when the text carries a negation cue."""
    return bool(negated_words(text, text_words))


_SCOPE_WORDS = 5
_SCOPE_BREAK = re.compile(r"[,;:.()|]|\bbut\b|\bwhereas\b|\bwhile\b", re.IGNORECASE)


# Privative nouns followed by "of" name an absence ("lack of FGF21 leads to ...") rather than
# negating the statement, so they are content words there.
_PRIVATIVE_OF = re.compile(r"\b(?:lack|absence|loss)\s+of\b", re.IGNORECASE)


def is_negation(word: Word, text: str = "") -> bool:
    if text and _PRIVATIVE_OF.match(text, word.start):
        return False
    return word.lower in NEGATIONS or word.lower.endswith("n't")


def negated_words(text: str, text_words: list[Word]) -> list[Word]:
    """Words in the scope of a negation cue: up to five words after it, within its clause (the three
    before it at the end of a clause, and up to five before it within the clause when those after
    it hold no content word).

    "not only", "no doubt" and "with or without" add rather than negate and open no scope.
    """
    ignored = [(match.start(), match.end()) for match in _NOT_NEGATING.finditer(text)]
    scoped: list[Word] = []
    for index, word in enumerate(text_words):
        if not is_negation(word, text) or any(start <= word.start < end for start, end in ignored):
            continue
        before = len(scoped)
        previous_end = word.end
        for follower in text_words[index + 1 : index + 1 + _SCOPE_WORDS]:
            if _SCOPE_BREAK.search(text, previous_end, follower.start) or is_negation(follower, text):
                break
            scoped.append(follower)
            previous_end = follower.end
        if len(scoped) == before:
            # A cue at the end of a clause ("... was absent") negates what came before it.
            scoped.extend(text_words[max(0, index - 3) : index])
        elif not any(is_content_in(follower, text) for follower in scoped[before:]):
            # Words after the cue that say nothing of what it negates ("a charge of £15 is not
            # possible"): it negates the words before it in its clause.
            next_start = word.start
            for leader in reversed(text_words[max(0, index - _SCOPE_WORDS) : index]):
                if _SCOPE_BREAK.search(text, leader.end, next_start):
                    break
                scoped.append(leader)
                next_start = leader.start
    return scoped


def hedged(text_words: list[Word]) -> bool:
    return any(word.lower in HEDGES for word in text_words)


def direction_of(word: Word) -> str:
    """'up', 'down' or '' for a word that says a quantity rises or falls."""
    for part in [*word.parts, word.joined]:
        stemmed = stem(part)
        if stemmed in DIRECTION_UP or part in DIRECTION_UP:
            return "up"
        if stemmed in DIRECTION_DOWN or part in DIRECTION_DOWN:
            return "down"
    return ""


def _direction_at(text_words: list[Word], index: int) -> str:
    """The direction the word at ``index`` says, where it says one: "at least" and "at most"
    bound a number ("a flow of at least 2 litres/min") rather than say that anything changes."""
    word = text_words[index]
    if word.lower in ("least", "most") and index and text_words[index - 1].lower == "at":
        return ""
    return direction_of(word)


def directions(text_words: list[Word]) -> set[str]:
    """'up' and/or 'down' when the words say a quantity rises or falls."""
    return {direction for index in range(len(text_words)) if (direction := _direction_at(text_words, index))}


def direction_neighbours(text_words: list[Word], reach: int = 3) -> dict[str, set[str]]:
    """For each direction, the stems of content words within ``reach`` words of a word saying it."""
    found: dict[str, set[str]] = {"up": set(), "down": set()}
    for index, word in enumerate(text_words):
        direction = _direction_at(text_words, index)
        if not direction:
            continue
        for neighbour in text_words[max(0, index - reach) : index + reach + 1]:
            if neighbour is not word and is_content(neighbour) and not direction_of(neighbour):
                found[direction].add(stem(neighbour.joined))
    return found


def opposed_terms(claim_forms: set[str], passage_forms: set[str]) -> tuple[str, str] | None:
    """A (claim term, passage term) pair of antonyms when the claim says one and the passage only the other."""
    for first, second in ANTONYM_PAIRS:
        for said, other in ((first, second), (second, first)):
            if (
                said in claim_forms
                and other not in claim_forms
                and other in passage_forms
                and said not in passage_forms
            ):
                return said, other
    for form in claim_forms:
        if len(form) < 4:
            continue
        for prefix in _NEGATING_PREFIXES:
            if prefix + form in passage_forms and form not in passage_forms:
                return form, prefix + form
            if form.startswith(prefix) and form[len(prefix) :] in passage_forms and form not in passage_forms:
                base = form[len(prefix) :]
                if len(base) >= 4:
                    return form, base
    return None


_PRIVATIVE_ADJECTIVE = re.compile(
    r"(?:in|un|non|im|ir|il|dis)-?[a-z]{3,}(?:ate|ive|able|ible|ent|ant|al|ful|ous|ic|ar)"
)


def is_polar(word: Word, extra_terms: tuple[str, ...] = ()) -> bool:
    """True when the word states a direction, one side of an antonym pair, a negated adjective
    ("inaccurate", "ineffective", "unstable") or is one of ``extra_terms``."""
    if _PRIVATIVE_ADJECTIVE.fullmatch(word.lower):
        return True
    antonyms = {term for pair in ANTONYM_PAIRS for term in pair}
    for form in (word.joined, *word.parts):
        stemmed = stem(form)
        if (
            stemmed in DIRECTION_UP
            or stemmed in DIRECTION_DOWN
            or stemmed in antonyms
            or stemmed in extra_terms
        ):
            return True
        if form in DIRECTION_UP or form in DIRECTION_DOWN:
            return True
    return False


# Sentences that state an aim, a question or a method assert no finding.
_NON_ASSERTIVE = re.compile(
    r"\bwhether\b|\?|^\s*(?:OBJECTIVES?|AIMS?|PURPOSE|QUESTION|DESIGN|METHODS?)\b|"
    r"\b(?:to|we) (?:assess|determine|examine|evaluate|investigate|explore|compare|test|study|"
    r"review|analy[sz]e|estimate|measure|quantify|characteri[sz]e|identify)(?:d|ed)?\b|"
    r"\b(?:aims?|aimed|objectives?|purpose|goal) (?:was|is|of|to)\b",
    re.IGNORECASE,
)


def non_assertive(text: str) -> bool:
    """True when the text states an aim, a question or a method rather than a finding."""
    return bool(_NON_ASSERTIVE.search(text))


_COMPARISON = re.compile(
    r"\bthan\b|\bcompared (?:to|with)\b|\bin comparison\b|\bversus\b|\bvs\.?|\brelative to\b|"
    r"\b(?:superior|inferior|similar|equal|equivalent|identical) to\b|\bas \w+ as\b",
    re.IGNORECASE,
)


def compares(text: str) -> bool:
    """True when the text compares two things ("more effective than", "compared with", "as X as")."""
    return bool(_COMPARISON.search(text))
