"""Which directly read passages bear on the question, and which of their sentences answer it.

Chosen before anything is generated, so a small model's weakness cannot decide the result: the
prompt holds only the answer-bearing sentences, and a passage far below the best one never
reaches it (its exclusion is recorded with the reason).

A sentence is scored from signals the service already has:

* **lexical**: the share of the question's content terms (weighted: names, numbers and long
  words count more) that the sentence holds, by a light stem so "stores" meets "store";
* **context**: the same share over the sentence, its passage and the passage's heading path, so
  a sentence that says "It was opened in 1903" still counts the stadium named in its title;
* **semantic**: the cosine of the question and the sentence under the embedding model
  (MiniLM), when one is loaded;
* **answer type**: whether the sentence holds what the question asks for (a date for "when", a
  number for "how many", a name for "who", a place for "where", a cause for "why").

A sentence that quotes the question itself (an FAQ's list of questions, notes that cite the
question they were asked) is scored without the quoted words: repeating a question does not
answer it. A statement asked about (a claim to check) is not taken out: a passage that states it
word for word supports it.

Nothing here changes evidence state: selection only decides what the generator is shown.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import PurePosixPath
from typing import Literal

import numpy as np

from akm.claims import (
    TextSpan,
    is_claimable,
    is_faq_question,
    is_field_entry,
    is_line_entry,
    is_list_item,
    is_question,
    is_run_in_heading,
    is_table_row,
    lead_in,
    sentence_spans,
    table_header,
)
from akm.claims.quantities import DAY_OF_MONTH, MONTH, MONTH_NAMES, MONTHS, WEEKDAY, mentions_date, quantities
from akm.claims.words import full_form
from akm.contract.models import EvidenceRow
from akm.embedding import Embedder, EmbeddingModelError
from akm.support import ReadEvidence

AnswerType = Literal["date", "number", "person", "place", "reason", "any"]

# Weights of the sentence score; they sum to one so the score stays in [0, 1].
LEXICAL_WEIGHT = 0.35
CONTEXT_WEIGHT = 0.20
SEMANTIC_WEIGHT = 0.35
TYPE_WEIGHT = 0.10
# Taken off a sentence that lacks the kind of answer a typed question asks for.
TYPE_MISS_PENALTY = 0.10
# A passage whose best sentence scores below this share of the best passage's is left out.
PASSAGE_RELATIVE_FLOOR = 0.75
# A sentence with fewer words than this is a fragment (a caption, a heading), not an answer.
MIN_SENTENCE_WORDS = 4
MAX_ANSWER_SENTENCES = 2
# The share of the question an entry of another passage lacks, of what the best entry names, that
# makes it an entry about another thing (see `_another_entry`).
ANOTHER_ENTRY_LOSS = 0.25
# A second sentence joins the first only when it scores nearly as well.
SECOND_SENTENCE_MARGIN = 0.10
NEAR_EMPTY_WORDS = 8
# A question of at least this many words is taken out of a sentence that quotes it.
MIN_QUOTED_QUESTION_WORDS = 4

_STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "whose",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "one",
        "ones",
        "many",
        "much",
        "name",
        "named",
        "called",
        "kind",
        "type",
        "according",
        "main",
        "mainly",
        "often",
        "usually",
        "known",
        "use",
        "used",
        "using",
        "among",
        "did",
        "does",
        "do",
        "make",
        "made",
        # Contractions of "not": "Why doesn't the baker trust ...?" is about the baker and the trust.
        *(
            f"{verb}n{apostrophe}t"
            for verb in (
                "do",
                "does",
                "did",
                "is",
                "are",
                "was",
                "were",
                "has",
                "have",
                "had",
                "ca",
                "wo",
                "should",
                "would",
                "could",
                "must",
                "need",
            )
            for apostrophe in "'’"
        ),
        # Contractions of a question word or a pronoun: "what's the minimum version", "I'm on the plan".
        *(
            f"{word}{apostrophe}{ending}"
            for word in (
                "what",
                "who",
                "where",
                "when",
                "why",
                "how",
                "it",
                "that",
                "there",
                "here",
                "let",
                "i",
                "you",
                "we",
                "they",
                "he",
                "she",
            )
            for ending in ("s", "m", "re", "ve", "ll", "d")
            for apostrophe in "'’"
        ),
        # The same typed without the apostrophe: "whats the ip address", "im an nhs patient".
        "whats",
        "wheres",
        "whos",
        "hows",
        "whens",
        "whys",
        "thats",
        "theres",
        "im",
        "ive",
        "youre",
        "youve",
        "theyre",
        "weve",
        "dont",
        "doesnt",
        "didnt",
        "cant",
        "isnt",
        "arent",
        "wasnt",
        "wont",
        "shouldnt",
        "couldnt",
        "wouldnt",
        "hasnt",
        "havent",
        "hadnt",
        "werent",
        "mustnt",
        "neednt",
        "theyll",
        "youll",
        "itll",
        "hes",
        "shes",
        # "got burgled", "none of the buttons work": no topic.
        "got",
        "none",
        # Words that stand for what is not named: "do u deliver to somewhere 6 miles away".
        "something",
        "someone",
        "somebody",
        "somewhere",
        "anything",
        "anyone",
        "anybody",
        "anywhere",
        # "6 miles away": the distance says it.
        "away",
        # Words as they are typed on a phone: "how much r swimming lessons", "do u deliver", "how much
        # extra wd it cost".
        "u",
        "r",
        "ur",
        "wd",
        "cd",
        "pls",
        "plz",
        "thx",
        "w",
        # The same for function words: "is the car wash open on sundays n what times", "hw much",
        # "wud it cost more", "abt the deposit".
        "n",
        "hw",
        "wud",
        "cud",
        "shud",
        "abt",
        "please",
        "lol",
        "tbh",
        "btw",
        # The asker's word for whom they ask: "do u guys clean windows when its raining", "can our
        # dog stay in the bell tent with us".
        "guys",
        "yall",
        "us",
        # Greetings and thanks: "hi whats the price for an adult swim".
        "hi",
        "hello",
        "hey",
        "thanks",
        "thank",
        "cheers",
        # "wat do i do", "whats gonna happen".
        "wat",
        "wot",
        "wats",
        "gonna",
        "gotta",
        # Words that stress what is said, not what it is about: "broadband totally down, still not
        # fixed".
        "totally",
        "completely",
        "really",
        "literally",
        "actually",
        "still",
        "even",
        "already",
    ]
)
# A number keeps its inner separators ("4.2", "12,000") but not a sentence's full stop or comma
# after it: "in 1931." is the question's "1931".
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d+(?:[.,]\d+)*")
# A compound's parts count as content terms besides the compound itself: "restore-admin" holds
# "admin", which a question about restores lacks (cut at seven letters, the whole compound reads as
# "restore"), and "Cretaceous-Paleogene" meets "Cretaceous–Paleogene" written with a dash.
_PART = re.compile(r"[A-Za-z][A-Za-z'’]*")
_SUFFIXES = (
    "ations",
    "ation",
    # A verb in "-ate" meets its noun in "-ation": "castrated" and "castration", "vaccinate" and
    # "vaccination" (a short stem keeps its "ate": "dated", "rates", "updated").
    "ating",
    "ated",
    "ates",
    "ate",
    "ments",
    "ment",
    "ings",
    "ing",
    "ers",
    "est",
    "ed",
    "es",
    "er",
    "ly",
    "s",
)
# Endings after which a plural adds "-es" rather than "-s".
_SIBILANTS = ("s", "x", "z", "ch", "sh")
_DATE_QUESTION = re.compile(
    r"^\s*(?:when\b|(?:in |during |by |at |until |till |before |after )?(?:what|which) "
    r"(?:year|years|date|dates|day|days|month|months|century|decade|era|period|time|"
    r"nights?|evenings?|mornings?|afternoons?)\b)",
    re.IGNORECASE,
)
_NUMBER_QUESTION = re.compile(
    r"\bhow (?:many|much|long|soon|far|old|large|big|high|tall|deep|wide|often|fast|heavy)\b|"
    r"\b(?:what|which) (?:percentage|percent|number|amount|proportion|fraction|size|length|population)\b|"
    # "What age can my son start?", "age limit for the zip wire": an age.
    r"\b(?:what|which)\s+age\b|\bage\s+(?:limit|range)\b|"
    r"\bwhat (?:is|was|are|were) the (?:[a-z]+ )?(?:population|number|percentage|amount|size|length|height|area|"
    r"cost|price|distance|depth|speed|weight|temperature|salary|wage|fee|fare|rent|excess)\b|"
    # "What salary do new staff get?", "what fee is charged?": an amount of money.
    r"\bwhat (?:salary|salaries|wage|wages|fee|fees|fare|fares|rent|price|prices)\b|"
    # "What oven temperature ...", "how cold can it get?": a temperature.
    r"\b(?:what|which)\s+(?:[a-z]+\s+)?temperatures?\b|\bhow (?:hot|cold|warm|cool)\b|"
    # "Min length for a password?", "what's the maximum load?": a limit is a figure.
    r"^\s*(?:min|max|minimum|maximum)\b|\bwhats?(?:\s+is|\s+are)?\s+the\s+(?:min|max|minimum|maximum)\b|"
    # "grade 8 theory exam fee", "tennis coaching lessons price": a query typed without a question
    # word that names a price asks for one.
    r"^(?!\s*(?:which|what|whats|who|whom|whose|where|when|why|how|do|does|did|is|are|was|were|can|could|"
    r"may|must|should|will|would|has|have|had)\b)(?=.*\b(?:price|prices|cost|costs|fee|fees|charge|charges|rent|"
    r"fare|fares|fine|fines|excess)\b)",
    re.IGNORECASE,
)
_PERSON_QUESTION = re.compile(r"^\s*(?:who|whom|whose)\b|\bwho\s+(?:was|is|were|did)\b", re.IGNORECASE)
# "What is the phone number of ...": a number to dial, not any figure ("64 docking stations").
_PHONE_QUESTION = re.compile(r"\b(?:phone|telephone|mobile|fax|helpline|hotline)\s+numbers?\b", re.IGNORECASE)
_PHONE = re.compile(r"(?<![\w.])\+?\(?\d[\d\s().-]{5,}\d(?![\w.])")
# "How many electric bikes are at each station?": a number for each one, not a total.
_PER_UNIT_QUESTION = re.compile(
    r"\b(?:(?:at|in|on|for|of|with)\s+(?:each|every|a single)|per)\s+(?P<unit>[A-Za-z][\w'’-]*)",
    re.IGNORECASE,
)
# "Who may ...", "who is paged ...", "who reviews ...": asks who is allowed or whose duty it is, which a
# role or a group answers as a name does.
_PERMISSION_QUESTION = re.compile(
    r"^\s*who\s+(?:may|can|could|must|should|is allowed|are allowed|is permitted|are permitted|"
    r"has access|have access|approves|approve|signs off|reviews|maintains|handles|is responsible|"
    r"are responsible|is in charge|(?:is|are|gets|get) (?:paged|notified|alerted|called|contacted|"
    r"informed|told|asked|billed|charged)|"
    # "Who presents the accounts?", "who keeps the keys?": a duty that recurs, which a role holds.
    r"(?!is\b|has\b|does\b|was\b|says\b)[a-z]{3,}(?<!s)s)\b",
    re.IGNORECASE,
)
# "Who founded / designed / wrote X?": the deed itself is the question. A person who led or owned X
# answers something else, so the claim must name the deed (the verb or its agent noun: "founded",
# "its founder", "the inventor"), or the work's maker after "by" ("a play by Shakespeare").
_DEED_QUESTION = re.compile(
    r"^\s*who\s+(?:first\s+|originally\s+|actually\s+)?(?P<verb>founded|invented|discovered|designed|built|"
    r"wrote|created|established|composed|painted|directed|developed|coined|devised|sculpted|engineered)\b",
    re.IGNORECASE,
)
# Irregular or nearby forms of a deed that share no first five letters with it.
_DEED_FORMS = {
    "wrote": r"writ|wrote|author",
    "built": r"buil|architect|construct|engineer",
    "designed": r"design|architect|engineer|drew|drawn|plans",
    "founded": r"found|co-found|set up",
}
_MAKER_AFTER_BY = re.compile(r"\bby\s+(?:(?:Dr|Sir|Mr|Mrs|Ms|Prof|St)\.?\s+)?[A-Z]")
# "Who restored the boat?": the question's verb in the past, whose doer the text may name after "by"
# without a capital ("restored by volunteers", "was run by the parish council").
_DOER_QUESTION = re.compile(r"^\s*who\s+(?:first\s+|later\s+|then\s+)?(?P<verb>[a-z]{3,}ed)\b", re.IGNORECASE)
_DOER_ARTICLES = r"(?:(?:the|a|an|its|their|his|her|local|two|three|several|many)\s+)*"
_GROUP_WORD = re.compile(
    r"\b(?:group|groups|team|teams|role|roles|members|admins?|administrators?|owners?|maintainers?|"
    r"engineers?|staff|employees|users|anyone|everyone|everybody|nobody|managers?|committee|board|"
    r"officers?|holders?|operators?|developers?|reviewers?|on-call|nurses?|doctors?|heads?|directors?|"
    r"supervisors?|chairs?|chairman|chairwoman|chairperson|wardens?|secretary|treasurer|head teacher)\b",
    re.IGNORECASE,
)
# What is handed to someone: "Payroll questions go to Priya Nair", "reported to the Warden".
_HANDED_TO = re.compile(
    r"\b(?:go|goes|went|are sent|is sent|report(?:ed)?|are reported|is reported|addressed|directed|"
    r"forwarded|escalated|submitted|referred)\s+to\s+(?:the\s+)?(?:[a-z]+\s+){0,2}?[A-Z][a-z'’-]+"
)
_PLACE_QUESTION = re.compile(
    r"^\s*where\b|\b(?:what|which) (?:city|country|state|place|region|town|county|continent|location|area|nation|island|river)\b",
    re.IGNORECASE,
)
# "What's the IP address of the router?", "Which address do I send it to?", "whats the website":
# a place of a narrower kind, an address (see `fills_answer_type`).
_ADDRESS_QUESTION = re.compile(
    r"\b(?:what|which)(?:\s+is|\s+are|['’]?s)?\s+(?:the\s+|your\s+|its\s+|their\s+|our\s+|my\s+)?"
    r"(?:(?P<kind>ip|web|website|email|e-mail|internet|postal|street|home|office|delivery|return)\s+)?"
    r"(?:address(?:es)?\b(?!\s+book)|(?P<web>url|website|web\s*site)\b)",
    re.IGNORECASE,
)
# An address on the web or a network: "192.168.1.254", "https://...", "www.example.org", an e-mail.
_WEB_ADDRESS = re.compile(
    r"\b\d{1,3}(?:\.\d{1,3}){3}\b|\b[A-Za-z][\w+.-]*://\S+|\bwww\.[\w-]+\.\S+|\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
    r"|\b[\w-]+\.(?:com|org|net|io|info|co\.uk|org\.uk|gov\.uk|ac\.uk)\b",
    re.IGNORECASE,
)
# An address in a street: "4 Church Lane", "12a High Street", or a postcode ("DE6 1AB", "SW1A 2AA").
_STREET_ADDRESS = re.compile(
    r"\b\d+[A-Za-z]?,?\s+(?:[A-Z][\w'’-]*\s+){1,3}(?:Street|St|Road|Rd|Lane|Ln|Avenue|Ave|Way|Close|Drive|"
    r"Place|Square|Terrace|Crescent|Row|Hill|Court|Gardens|Parade|Walk|Green|Park|Mews|Yard|Quay|Boulevard|"
    r"Blvd)\b|\b[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}\b"
)
_WEB_KINDS = frozenset({"ip", "web", "website", "email", "e-mail", "internet"})


def _states_address(text: str, question: str) -> bool:
    """Whether ``text`` gives the kind of address ``question`` asks for: one on the web or a network
    for an IP, web or e-mail address (or a URL, a website), else that or one in a street."""
    match = _ADDRESS_QUESTION.search(question)
    web = match is not None and (
        bool(match.group("web")) or (match.group("kind") or "").lower() in _WEB_KINDS
    )
    return bool(_WEB_ADDRESS.search(text) or _PATH.search(text)) or (
        not web and bool(_STREET_ADDRESS.search(text))
    )


# Narrower kinds within the date and number types (see `fills_answer_type`).
# A present-tense "when" asks about something that recurs: "When does the job run?" (not "When did
# the bakery open?", which asks for a date).
_WHEN_QUESTION = re.compile(
    r"^\s*when\s+(?:does|do|is|are|will|can|should|must)\b|"
    # "When did the outage start?": an event of one day is answered by its time.
    r"^\s*when\s+(?:did|was|were)\b.*\b(?:start|started|begin|began|end|ended|finish|finished|stop|stopped|"
    r"happen|happened|occur|occurred|break|broke|fail|failed)\b",
    re.IGNORECASE,
)
# "How do I thaw a frozen pipe?": asks how to do a deed, which the answer names.
_HOW_TO_QUESTION = re.compile(
    r"^\s*how\s+(?:do|can|should|must|could|would|may)\s+(?:i|you|we|they|one|staff|users?|residents?)\s+"
    r"(?:best\s+|safely\s+|quickly\s+)?(?P<verb>[a-z]{3,})\b",
    re.IGNORECASE,
)
# "When should I call an engineer?": asks in which case to act.
_WHEN_TO_QUESTION = re.compile(
    r"^\s*when\s+(?:should|must|do|can|shall|may|need)\s+(?:i|you|we|they|one|staff|users?|residents?)\b",
    re.IGNORECASE,
)
_CONDITION = re.compile(
    r"\b(?:if|whenever|once|as soon as|unless|in case|after|before|when)\b", re.IGNORECASE
)
# "What time does the job start?", "at what time ...": a time of day, never a year or a date.
# "What are the off peak hours?", "what are your opening times": times of day, or days closed.
_HOURS_QUESTION = re.compile(
    r"\bwhat\s+(?:are|r|were)\s+(?:the|your|its|their)\s+(?:[a-z-]+\s+){0,2}(?:hours|times)\b(?!\s+(?:of|per|a)\b)",
    re.IGNORECASE,
)
_HOURS_SAID = re.compile(r"\b(?:closed|open\s+all\s+day|all\s+day|24\s+hours)\b", re.IGNORECASE)
_CLOCK_QUESTION = re.compile(r"\bwhat time\b(?!\s+(?:of|period|frame|span|zone)\b)", re.IGNORECASE)
# "What's the latest we can stay", "what is the earliest I can book": a time of day or a date, not a
# day of the week alone nor a number of nights.
_EARLIEST_LATEST = re.compile(
    r"\bwhat(?:['’]?s|\s+is|\s+was)\s+the\s+(?:latest|earliest)\b"
    r"(?!\s+(?:version|model|news|update|edition|release|book|film|episode|issue|one|thing)s?\b)",
    re.IGNORECASE,
)
_CLOCK_OR_DAY = re.compile(
    r"\b\d{1,2}:\d{2}\b|\b\d{1,2}(?:[.:]\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)|\b(?:noon|midday|midnight)\b",
    re.IGNORECASE,
)
_TIME_OR_FREQUENCY = re.compile(
    r"\b\d{1,2}:\d{2}\b|\b\d{1,2}\s?(?:am|pm|a\.m\.|p\.m\.)|\b(?:noon|midnight|dawn|dusk)\b|"
    r"\b(?:every|each)\s+(?:other\s+)?(?:\d+\s+)?(?:night|day|morning|evening|afternoon|week|month|year|hour|minute|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day)s?\b|"
    r"\b(?:daily|nightly|weekly|monthly|yearly|annually|hourly)\b",
    re.IGNORECASE,
)
_YEAR = re.compile(r"\b(1\d{3}|20\d{2})s?\b")
_DAY_QUESTION = re.compile(
    r"\b(?:what|which) (?:days?|nights?|evenings?|mornings?|afternoons?)\b|\bon what day\b", re.IGNORECASE
)
_HOW_OFTEN = re.compile(r"\bhow often\b", re.IGNORECASE)
# A span of time in a table's cell, under a column that says what it is ("Replace after: 3 years").
_TABLE_DURATION = re.compile(
    r"^\|.*\|\s*(?:after\s+|every\s+)?(?:\d+(?:[.,]\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|"
    r"twelve)\s+(?:minutes?|hours?|days?|weeks?|months?|years?)\s*\|",
    re.IGNORECASE,
)
_FREQUENCY = re.compile(
    r"\b(?:once|twice|thrice|(?:\d+|two|three|four|five|six|seven|eight|nine|ten|several|many)\s+times)\b|"
    r"\b(?:a|an|per)\s+(?:day|night|week|fortnight|month|quarter|season|year|hour|minute)\b|"
    r"\b(?:never|always|rarely|seldom|usually|fortnightly|quarterly|biannually)\b|"
    # "every other day", "every 50 printing hours", "every 6,000 miles"
    r"\bevery\s+(?:\d[\d,]*\s+)?(?:[a-z]+\s+)?"
    r"(?:days|nights|weeks|months|years|hours|minutes|decades|centuries|miles|kilomet(?:re|er)s|km|uses|cycles)\b",
    re.IGNORECASE,
)
_EVERY_DAY = re.compile(r"\b(?:daily|every day|each day|weekdays?|weekends?)\b", re.IGNORECASE)
_MONEY_QUESTION = re.compile(
    r"\b(?:price|prices|cost|costs|fee|fees|fine|fines|fare|fares|salary|salaries|wage|wages|excess)\b|"
    r"\bhow much money\b|"
    # "How much is it to get in?", "how much is a band 2 treatment", "how much extra is the
    # exhibition": a price, with no noun after "much"
    # (not "how much flour"), nor a measure or a quantity asked of ("how much does it weigh", "how
    # much is needed").
    r"\bhow much (?:(?:extra|more)\s+)?(?:is|are|r|was|were|will|would|wd|does|do|did)\b"
    r"(?!.*\b(?:weigh\w*|needed|used|required|left|spent|produced|made|grown|sold|eaten|drunk)\b)|"
    # "how much to collect my bike", "how much for a puncture repair", "how much does the vet charge",
    # "school dinner how much a day".
    r"\bhow much (?:to|for|a|an|per|each)\b|\bhow much\b.*\bcharges?\b",
    re.IGNORECASE,
)
_MONEY = re.compile(
    r"[$£€¥₹]\s?\d|\b(?:USD|GBP|EUR|CAD|AUD)\s?\d|\b\d+p\b|\b\d[\d,.]*\s*(?:million|billion|thousand|m|bn|k)?\s*(?:dollars?|pounds?|euros?|pence|cents?|"
    r"yen|francs?|marks?|rupees?|shillings?|guineas?|kronor|krona|kroner|krone|kronur|zlotys?|złoty|forints?|"
    r"lira|lire|liras|pesos?|yuan|renminbi|rubles?|roubles?|dinars?|dirhams?|baht|ringgits?|rupiah|"
    r"USD|GBP|EUR|SEK|NOK|DKK|CHF|JPY|CNY|INR|CAD|AUD|PLN)\b|\b(?:free of charge|no charge|costs? nothing)\b",
    re.IGNORECASE,
)
# "At what temperature ...", "how cold ...": the answer states a temperature ("220 °C", "about 27
# degrees", "gas mark 6", "at room temperature"), not any number near the topic ("two room-temperature
# feeds, 12 hours apart").
_TEMPERATURE_QUESTION = re.compile(
    r"\b(?:what|which)\s+(?:(?:is|was|are|were)\s+)?(?:the\s+|its\s+|their\s+)?(?:[a-z]+\s+)?temperatures?\b(?!-)|"
    r"\bhow (?:hot|cold|warm|cool)\b",
    re.IGNORECASE,
)
_TEMPERATURE = re.compile(
    r"\d\s*(?:°|º|˚|degrees?\b|deg\b)|\bgas mark\s*\d|\b(?:at|to)\s+room temperature\b|"
    r"\b(?:freezing|boiling)(?: point)?\b|\bbelow zero\b",
    re.IGNORECASE,
)
# "How deep", "what is the height": the answer states that dimension ("38 metres high", "a depth of
# 40 m"), not any number near the topic (a volume in cubic metres answers no "how deep").
_DIMENSION_QUESTION = re.compile(
    r"\bhow (?P<how>deep|high|tall|wide|thick|heavy)\b|"
    r"\bwhat (?:is|was|are|were) the (?P<what>depth|height|width|thickness|weight)\b|"
    # "How much does the tank weigh?": a weight, not a price.
    r"\bhow much\b.*\b(?P<weigh>weigh)s?\b",
    re.IGNORECASE,
)
# "How fast", "what is the speed": the answer states a rate ("400 MB per second", "30 km/h", "12
# knots"), not any number near the topic (a memory limit in MB answers no "how fast").
_RATE_QUESTION = re.compile(
    r"\bhow (?:fast|quickly)\b|\b(?:what|which) (?:is |was |are |were )?the (?:speed|rate)\b|"
    r"\bat what (?:speed|rate)\b",
    re.IGNORECASE,
)
_RATE = re.compile(
    r"\bper\s+[A-Za-z]+|\ban?\s+(?:second|minute|hour|day|week|month|year)\b|"
    r"[A-Za-z]/(?:s|sec|min|h|hr|day)\b|\b(?:mph|kph|knots?|fps|rpm|bps|Hz|kHz|MHz|GHz)\b|"
    r"\bspeeds? of\b|\bat \d",
    re.IGNORECASE,
)
_DIMENSION_WORDS = {
    "deep": "deep|depth",
    "depth": "deep|depth",
    "high": "high|height|tall|rises|rising",
    "height": "high|height|tall|rises|rising",
    "tall": "tall|height|high",
    "wide": "wide|width|across|broad",
    "width": "wide|width|across|broad",
    "thick": "thick",
    "thickness": "thick",
    "heavy": "heav|weigh",
    "weight": "heav|weigh",
    "weigh": "heav|weigh|\\d+\\s*(?:kg|g|t|lb|lbs|oz)\\b|kilo|tonne|tons?\\b|grams?\\b|pounds?\\b(?! sterling)|ounces?",
}
_COUNT_QUESTION = re.compile(
    r"\bhow many\s+(?:of\s+the\s+|different\s+|more\s+)?(?P<noun>[A-Za-z][\w'’-]*)"
    r"(?:\s+(?P<next>[A-Za-z][\w'’-]*))?",
    re.IGNORECASE,
)
# "How many missing-receipt declarations", "how many paid holidays": the word after "how many"
# describes the counted noun that follows it.
_COUNT_MODIFIERS = frozenset(
    {
        "new",
        "additional",
        "extra",
        "free",
        "paid",
        "unpaid",
        "public",
        "private",
        "local",
        "full",
        "separate",
        "main",
        "other",
        "total",
        "annual",
        "daily",
        "weekly",
        "monthly",
        "yearly",
        "active",
        "official",
        "permanent",
        "temporary",
        "sick",
        "young",
        "small",
        "large",
        "big",
        "native",
        "foreign",
        "international",
        "national",
        "regional",
        "single",
        "double",
        "spare",
        "empty",
    }
)


def counted_noun(question: str) -> str | None:
    """The stem of what a "how many" question counts: the noun after "how many", or the one after
    that when the first describes it (a compound with a hyphen, an "-ing" or "-ed" form, an adjective
    such as "paid" or "annual")."""
    match = _COUNT_QUESTION.search(question)
    if match is None:
        return None
    noun, following = match.group("noun"), match.group("next")
    describes = (
        "-" in noun.strip("-") or noun.lower().endswith(("ing", "ed")) or noun.lower() in _COUNT_MODIFIERS
    )
    if describes and following and following.lower() not in _STOPWORDS:
        return stem(_base_form(following))
    # "how many ppl" counts people.
    return stem(_base_form(noun))


_NUMBER_WORD = re.compile(
    r"\b\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
    r"forty|fifty|hundred|thousand|million|billion|dozen|half|several)\b",
    re.IGNORECASE,
)
# A number in a text, with the word after it: "19 kilometres", "fourteen people", "1994,".
_COUNT_CANDIDATE = re.compile(
    r"(?P<number>\b\d+(?:[.,]\d+)*|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
    r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|"
    r"ninety|hundred|hundreds|thousand|thousands|million|millions|billion|dozen|dozens|several|both|single|"
    r"none|no|once|twice|thrice)\b)"
    r"(?=(?P<after>(?:[\s-]+[A-Za-z][\w'’-]*){0,3}))",
    re.IGNORECASE,
)
# Units of measure: a number followed by one measures something, it does not count what was asked
# (unless the question counts that unit: "how many kilometres").
_MEASURE_UNITS = frozenset(
    {
        "km",
        "kilometre",
        "kilometres",
        "kilometer",
        "kilometers",
        "metre",
        "metres",
        "meter",
        "meters",
        "mile",
        "miles",
        "foot",
        "feet",
        "ft",
        "inch",
        "inches",
        "cm",
        "mm",
        "kg",
        "kilogram",
        "kilograms",
        "gram",
        "grams",
        "tonne",
        "tonnes",
        "ton",
        "tons",
        "pound",
        "pounds",
        "lb",
        "lbs",
        "percent",
        "per",
        "degrees",
        "hectare",
        "hectares",
        "acre",
        "acres",
        "litre",
        "litres",
        "liter",
        "liters",
        "mph",
        "millimetre",
        "millimetres",
        "millimeter",
        "millimeters",
        "seconds",
        "minutes",
        "hours",
        "days",
        "weeks",
        "months",
        "years",
        "decades",
        "centuries",
        "square",
        "sq",
        "cubic",
        "euro",
        "euros",
        "dollar",
        "dollars",
        "cent",
        "cents",
        "pence",
        "yen",
        "franc",
        "francs",
        "rupees",
    }
)


# Nouns for people of some kind: a count of members or residents is a count of people.
_PEOPLE = (
    "people", "persons", "members", "residents", "staff", "visitors", "players", "students", "adults",
    "children", "volunteers", "employees", "guests", "passengers", "participants", "attendees",
    "pupils", "workers", "customers", "spectators", "voters",
)  # fmt: skip


def _counts_noun(word: str, noun: str) -> bool:
    """Whether ``word`` names what ``noun`` (a stem) counts: itself, or people of some kind for people."""
    said = stem(word)
    return said == noun or (
        noun in (stem("people"), stem("persons")) and said in {stem(kind) for kind in _PEOPLE}
    )


def _states_count(text: str, noun: str, question: str = "") -> bool:
    """Whether ``text`` states a count of ``noun`` (a stem): a number that is not a bare year nor a
    measure in some other unit, nor an amount of money, nor a day of a month ("14 October"), nor a
    version ("version 2.4"), nor one the question names ("How many people contributed to Harbor
    3.0?" is not answered by "3.0"). A number right before the noun counts whatever it looks like. A
    text that speaks of the noun one at a time ("a member may hold at most one plot") counts something
    per noun, not the noun, unless a number stands right before it."""
    named = set(re.findall(r"\d+(?:[.,]\d+)*", question))
    candidates = []
    # A time of day ("09:20 The on-call engineer was paged") counts nothing.
    text = _CLOCK_TIME.sub(" ", text)
    # "for under-5s", "aged 65": someone's age counts nothing.
    ages = [match.span() for pattern in (_AGE_BAND, _AGE_OF_SOMEONE) for match in pattern.finditer(text)]
    for match in _COUNT_CANDIDATE.finditer(text):
        words = re.findall(r"[A-Za-z][\w'’-]*", match.group("after"))
        # "£12 per household" is an amount for each one, not a count of households.
        if any(
            _counts_noun(word, noun)
            # "no need to book": a verb after "to" counts nothing.
            and (at == 0 or words[at - 1].lower() not in ("per", "each", "every", "a", "an", "to"))
            for at, word in enumerate(words)
        ):
            return True
        candidates.append((match, words))
    if any(stem(word) == noun for word in _SINGLE_ONE.findall(text)):
        return False
    # A text that never names the noun counts it only with a number that counts nothing else:
    # "42 raised beds" counts beds, not members.
    names_noun = any(_counts_noun(word, noun) for word in _WORD.findall(text))
    for match, words in candidates:
        if not names_noun and any(_PLURAL.fullmatch(word) and word not in _FRACTIONS for word in words[:2]):
            continue
        number = match.group("number")
        if re.fullmatch(r"1\d{3}|20\d{2}", number):
            continue  # a year: "in 1994" counts nothing
        if number.lower() == "no" or (words and words[0].lower() in _MEASURE_UNITS):
            continue
        if re.match(r"\s*(?:°|º|˚|%)", text[match.end("number") :]):
            continue  # "220 °C", "41%": a measure, not a count
        if _CURRENCY_BEFORE.search(text, 0, match.start()):
            continue  # "€35": an amount of money counts nothing
        if _NUMBER_BEFORE.search(text, 0, match.start()):
            continue  # "million" in "£5 million": the scale of the number before it, judged by itself
        if number in named or _VERSION_BEFORE.search(text, 0, match.start()):
            continue
        if any(start <= match.start("number") < end for start, end in ages):
            continue
        valued = _VALUE_OF.search(text, 0, match.start())
        if not names_noun and valued and valued.group(1).lower() not in _STOPWORDS | _HEAD_COUNTS:
            continue  # "the quorum is 25": the value of another thing, not a count of households
        if (words and MONTH.fullmatch(words[0])) or _MONTH_BEFORE.search(text, 0, match.start()):
            continue  # "14 October", "October 14": a day of a month
        return True
    return False


# A time of day: "09:20", "10:30am", "9 pm".
_CLOCK_TIME = re.compile(r"(?i:\b\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]m)?\b:?|\b\d{1,2}\s*[ap]m\b)")
# "<noun> is 25": a figure that another noun has; a population or a total is a head count.
_VALUE_OF = re.compile(
    r"\b([A-Za-z][\w'’-]*)\s+(?:is|was|are|were|stands at|stood at)\s+(?:about\s+|around\s+)?$"
)
_HEAD_COUNTS = frozenset({"population", "total", "number", "count", "membership", "attendance", "headcount"})
_VERSION_BEFORE = re.compile(r"\b(?:version|release|revision|v)\.?\s*$", re.IGNORECASE)
_MONTH_BEFORE = re.compile(MONTH.pattern + r"\s*$", re.IGNORECASE)


# "a member", "each plot", "per household": the noun one at a time (the word after the article).
_SINGLE_ONE = re.compile(r"\b(?:a|an|each|every|per)\s+([A-Za-z][\w'’-]*)", re.IGNORECASE)
_PLURAL = re.compile(r"[a-z][a-z'’-]+[^su'’]s|people|children|[a-z]*men")
# "two-thirds of its population": a share of what was asked, not a count of something else.
_FRACTIONS = frozenset(
    {"halves", "thirds", "quarters", "fifths", "tenths", "hundreds", "thousands", "millions"}
)
_CURRENCY_BEFORE = re.compile(r"(?:[$£€¥₹]|\b(?:USD|GBP|EUR|CAD|AUD))\s?$")
_NUMBER_BEFORE = re.compile(r"\d\s*$")
_ITEM_NUMBER = re.compile(r"^\s*\(?\d{1,2}[.)]\s+")


_REASON_QUESTION = re.compile(r"^\s*why\b|\bwhat (?:caused|causes|led to|is the reason)\b", re.IGNORECASE)
_REASON_CUE = re.compile(
    r"\b(?:because|due to|since|as a result|owing to|so that|in order to|caused by|led to|thanks to|therefore|"
    r"reasons?|hence|thus|which is why|that is why|cause|root cause|grounds)\b|,\s*so\b",
    re.IGNORECASE,
)
_REASON_COLUMN = re.compile(r"\b(?:causes?|reasons?|why)\b", re.IGNORECASE)
_PLACE_CUE = re.compile(
    r"\b(?:in|at|near|from|on|across|throughout|under|inside|within|beside|outside|off|along|behind|above|"
    r"below|beneath|opposite|between|next\s+to)\s+"
    r"(?:the\s+|a\s+|an\s+)?(?P<words>[\w`~/'’-]+(?:[ \t]+[\w`~/'’-]+){0,2})",
    re.IGNORECASE,
)
# Where something goes, flows or is sent: "to" and "into" name the place too.
_MOTION_QUESTION = re.compile(
    r"^\s*where\b.*\b(?:go|goes|went|gone|flow|flows|flowed|lead|leads|led|run|runs|travel|travels|"
    r"travelled|traveled|move|moves|moved|sent|taken|carried|head|heads|headed|drain|drains|end up|ends up|"
    r"reported|posted|written|logged|delivered|published|uploaded|copied|forwarded)\b",
    re.IGNORECASE,
)
_MOTION_CUE = re.compile(
    r"\b(?:to|into|towards|onto)\s+(?:the\s+|a\s+|an\s+)?(?P<words>[\w`~/'’-]+(?:[ \t]+[\w`~/'’-]+){0,2})",
    re.IGNORECASE,
)
# A word of the three after "in", "at", "from" names a place when it is a name (not a month or a
# weekday: "from April" is a time) or one of these; "in the drought of 1976", "to swimming" name none.
_PLACE_NOUNS = frozenset(
    [
        "city",
        "cities",
        "town",
        "towns",
        "village",
        "villages",
        "country",
        "countries",
        "state",
        "states",
        "region",
        "regions",
        "coast",
        "coasts",
        "sea",
        "seas",
        "ocean",
        "oceans",
        "river",
        "rivers",
        "lake",
        "lakes",
        "island",
        "islands",
        "mountain",
        "mountains",
        "hill",
        "hills",
        "valley",
        "valleys",
        "north",
        "south",
        "east",
        "west",
        "north-east",
        "north-west",
        "south-east",
        "south-west",
        "northern",
        "southern",
        "eastern",
        "western",
        "central",
        "centre",
        "center",
        "capital",
        "border",
        "borders",
        "area",
        "areas",
        "district",
        "districts",
        "province",
        "provinces",
        "county",
        "counties",
        "forest",
        "forests",
        "desert",
        "deserts",
        "bay",
        "harbour",
        "harbor",
        "port",
        "airport",
        "station",
        "building",
        "buildings",
        "room",
        "rooms",
        "office",
        "offices",
        "works",
        "park",
        "street",
        "streets",
        "road",
        "roads",
        "square",
        "house",
        "houses",
        "church",
        "castle",
        "school",
        "schools",
        "university",
        "museum",
        "hospital",
        "library",
        "field",
        "fields",
        "countryside",
        "suburbs",
        "suburb",
        "downtown",
        "abroad",
        "home",
        "world",
        "continent",
        "kingdom",
        "empire",
        "republic",
        "territory",
        "territories",
        "colony",
        "parish",
        "borough",
        "shore",
        "shores",
        "beach",
        "cabinet",
        "cabinets",
        "cupboard",
        "cupboards",
        "shelf",
        "shelves",
        "drawer",
        "drawers",
        "locker",
        "lockers",
        "hood",
        "hoods",
        "fridge",
        "freezer",
        "corridor",
        "corridors",
        "hall",
        "halls",
        "floor",
        "floors",
        "basement",
        "cellar",
        "attic",
        "lobby",
        "entrance",
        "lab",
        "labs",
        "laboratory",
        "laboratories",
        "warehouse",
        "garage",
        "yard",
        "garden",
        "gardens",
        "kitchen",
        "campus",
        "site",
        "bank",
        "banks",
        "folder",
        "folders",
        "directory",
        "cave",
        "caves",
        "estuary",
        "delta",
        "plain",
        "plains",
        "peninsula",
        "gulf",
        "strait",
        "channel",
        "canal",
        "tunnel",
        "tunnels",
        "bridge",
        "market",
        "palace",
        "temple",
        "cathedral",
        "abbey",
        "farm",
        "farms",
        "mine",
        # Where one boards, waits or stays ("from pier 3", "at the depot", "in the Orre hut").
        "pier",
        "piers",
        "quay",
        "dock",
        "docks",
        "wharf",
        "jetty",
        "platform",
        "platforms",
        "terminal",
        "terminals",
        "gate",
        "gates",
        "depot",
        "hut",
        "huts",
        "cabin",
        "cabins",
        "shelter",
        "camp",
        "stadium",
        "arena",
        "theatre",
        "theater",
        "hotel",
        "restaurant",
        "shop",
        "shops",
        "mall",
        "clinic",
        "pharmacy",
        "studio",
        "workshop",
        "factory",
        "mill",
        "tower",
        "chamber",
        "cemetery",
        "mines",
        "factory",
        "plant",
        "mill",
        "shop",
        "camp",
        "base",
        "headquarters",
        "bank",
        "banks",
        "garden",
        "gardens",
        "basement",
        "floor",
        "terrain",
        "zone",
        "zones",
        "hotel",
        "hotels",
        "directory",
        "directories",
        "folder",
        "folders",
        "file",
        "files",
        "server",
        "servers",
        "database",
        "disk",
        "repository",
        "stdout",
        "stderr",
        "terminal",
        "console",
    ]
)
# A file-system path or URL is where something lives in a technical document.
_PATH = re.compile(r"(?:^|[\s`(])(?:~?/|\.{1,2}/|[A-Za-z]+://)[\w.~/<>-]+")
# A capitalised word right after these names a place, not who did something ("off the coast of
# Scotland", "in Paris"), and so do the capitalised words that go on with it ("on Mill Street", "at 4
# Harbour Road").
_PLACE_BEFORE = re.compile(
    r"\b(?i:in|at|on|near|off|from|into|across|throughout|to|(?:coast|island|city|town|county|state|region|"
    r"province|country|kingdom|republic|river|lake|village|north|south|east|west|north-east|north-west|"
    r"south-east|south-west)\s+of)\s+(?i:the\s+)?(?:\d+\s+)?(?:[A-Z][a-z'’-]+\s+)*$",
)
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z'’-]+")
_NUMBER = re.compile(r"\d")


# How often, not how long: "can I pay monthly" is not met by "the remaining months"; "£40 a month"
# and "per month" say it (``content_terms``).
_FREQUENCIES = {
    "hourly": "hourly", "nightly": "nightly", "weekly": "weekly", "fortnightly": "fortnly",
    "monthly": "monthly", "quarterly": "quartly",
}  # fmt: skip
_EACH_UNIT = re.compile(
    r"(?:\b(?:per|each|every)\s+|/\s?|(?:\d\S*|\bonce|\btwice|\btimes)\s+an?\s+)"
    r"(?P<unit>hour|night|week|fortnight|month|quarter)\b(?!['’]s)",
    re.IGNORECASE,
)


# Verbs and nouns in "-l" that double it before "-ed", "-ing", "-ation" and "-er" in British spelling
# ("cancelled", "travelling", "labelled"), and the two spellings of some ("enrol", "enroll"): those
# forms meet the word. Words in "-ll" ("fill", "install", "call") keep theirs.
_DOUBLED_L = frozenset(
    {"cancel", "travel", "label", "fuel", "refuel", "model", "level", "signal", "total", "dial", "enrol",
     "fulfil", "marvel", "channel", "tunnel", "panel", "pedal", "quarrel", "shovel", "funnel", "counsel",
     "equal", "rival", "parcel", "pencil", "gravel", "snorkel", "instil", "distil", "propel", "compel",
     "expel", "repel", "dispel", "patrol", "towel", "jewel", "kennel", "barrel", "cruel", "duel",
     "pixel", "bevel", "chisel", "spiral", "trowel", "yodel", "unravel"}
)  # fmt: skip


def stem(word: str) -> str:
    """A light stem: lowercase, common suffixes off, at most seven letters, so inflections meet.

    A plural meets its singular: "-ies" and "-ied" become "-y" ("cities", "city"), and "-es" is
    taken off only where the singular does not end in "e" ("boxes", "churches"), so that
    "stores" meets "store" and "dates" "date". A word of how often ("monthly") keeps its own stem.
    A doubled "l" of a word in `_DOUBLED_L` is one: "cancelled" meets "cancel".
    """
    stemmed = _stem(word)
    return stemmed[:-1] if stemmed.endswith("ll") and stemmed[:-1] in _DOUBLED_L else stemmed


def _stem(word: str) -> str:
    """`stem` before a doubled "l" is read as one."""
    word = word.lower().strip("'’-")
    if word in _FREQUENCIES:
        return _FREQUENCIES[word]
    if word.endswith(("'s", "’s")):
        word = word[:-2]  # a possessive: "the museum's hours" is about the museum
    if word.endswith(("ies", "ied")) and len(word) >= 5:
        return (word[:-3] + "y")[:7]
    for suffix in _SUFFIXES:
        if len(word) - len(suffix) >= 4 and word.endswith(suffix):
            if suffix == "es" and not word[:-2].endswith(_SIBILANTS):
                continue  # "stores": only the "s" goes
            if suffix == "s" and word.endswith("ss"):
                continue  # "class" is no plural: it meets "classes"
            base = word[: -len(suffix)][:7]
            # A consonant doubled before "-ed" or "-ing": "permitted" and "stopped" meet "permit"
            # and "stop" ("-er" nouns keep theirs: "letter" is no "let").
            if suffix in ("ed", "ing", "ings") and re.search(r"([bdgmnprt])\1$", base):
                return base[:-1]
            return _without_final_e(base)
    # A three-letter verb or noun: "owns" and "owned" meet "own", "runs" meets "run".
    if len(word) == 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")) and word != "news":
        return word[:-1]
    if len(word) == 5 and word.endswith("ed") and word[2] not in "aeiouy":
        return word[:-2]
    # A three-letter verb in "-ie": "died" and "dies" meet "die".
    if len(word) == 4 and word.endswith(("ied", "ies")):
        return word[:-1]
    return _without_final_e(word[:7])


def _without_final_e(stem: str) -> str:
    """A verb that ends in "e" loses it before "-ed" and "-ing": "approve", "approves", "approved" and
    "approving" all stem to "approv"."""
    return stem[:-1] if len(stem) >= 5 and stem.endswith("e") else stem


# Irregular forms of verbs, to their base ("Who took the minutes?" and "Minutes taken by"); words
# that are also common nouns or adjectives ("left", "saw", "rose", "fell", "frozen") stay as they are.
_IRREGULAR_FORMS: dict[str, str] = {
    "took": "take", "taken": "take", "won": "win", "began": "begin", "begun": "begin", "built": "build",
    "became": "become", "bought": "buy", "sold": "sell", "held": "hold", "made": "make", "gave": "give",
    "given": "give", "wrote": "write", "written": "write", "came": "come", "went": "go", "gone": "go",
    "brought": "bring", "sent": "send", "kept": "keep", "grew": "grow", "grown": "grow", "knew": "know",
    "flew": "fly", "flown": "fly", "chose": "choose", "chosen": "choose", "drove": "drive",
    "driven": "drive", "risen": "rise", "spoken": "speak", "thrown": "throw", "threw": "throw",
    "taught": "teach", "caught": "catch", "fought": "fight",
    "ridden": "ride", "sang": "sing", "sung": "sing", "told": "tell", "lost": "lose", "paid": "pay",
    "found": "find", "spent": "spend", "broke": "break", "broken": "break", "stole": "steal",
    "stolen": "steal", "wore": "wear", "worn": "wear", "ate": "eat", "eaten": "eat", "forgot": "forget",
    "forgotten": "forget", "heard": "hear", "lent": "lend", "slept": "sleep", "swam": "swim",
    "swum": "swim", "tore": "tear", "torn": "tear", "bitten": "bite", "hidden": "hide", "woke": "wake",
    "woken": "wake", "fallen": "fall", "understood": "understand", "meant": "mean", "dealt": "deal",
    "thought": "think", "shown": "show", "seen": "see",
}  # fmt: skip


def _base_form(word: str, before: str = "") -> str:
    """The word a term is taken from: a verb's base for an irregular form, the full word for a
    short form ("took": "take", "temp": "temperature"; ``before`` is the word before it); else the
    word itself."""
    lowered = word.lower()
    return _IRREGULAR_FORMS.get(lowered) or full_form(lowered, before) or word


_CAPITALISED_RUN = re.compile(r"\b[A-Z][a-z'’]+(?:[ \t]+(?:of|and|the|for|[A-Z][a-z'’]+)){1,6}\b")


_ORDINAL_ENDINGS = frozenset({"st", "nd", "rd", "th"})


# "off peak", "off-peak", "offpeak": one word, which is not "peak" (the variants tell them apart, and
# content terms read "off peak" as "off-peak", whose terms "peak" alone does not hold).
_OFF_PEAK = re.compile(r"\boff[\s-]?peak\b", re.IGNORECASE)
# Compounds whose first word is a function word, read as one hyphenated word: "off peak" and "after
# school" (an after-school club is no breakfast club "every school day").
_JOINED_COMPOUND = re.compile(r"\b(off)[\s-]?(peak)\b|\b(after|before)[\s-]?(school)\b", re.IGNORECASE)


# "as well" and "as well as" say "too" and "and": "can u do inside windows as well" is not about wells.
_AS_WELL = re.compile(r"\bas\s+well\b", re.IGNORECASE)
# "b4" as typed is "before", not a 4.
_BEFORE_TYPED = re.compile(r"\bb4\b", re.IGNORECASE)
# A count spelt out is its figure too: "2 piece suit" meets "Two-piece suit".
_CARDINALS = {
    "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9",
    "ten": "10", "eleven": "11", "twelve": "12", "twenty": "20",
}  # fmt: skip


def _joined_compounds(text: str) -> str:
    text = _BEFORE_TYPED.sub("before", _AS_WELL.sub(" ", text))
    return _JOINED_COMPOUND.sub(lambda match: "-".join(part for part in match.groups() if part), text)


def content_terms(text: str) -> list[str]:
    """Stems of the content words of ``text`` (function words and question words left out; an
    irregular form of a verb stands for its base: "took" and "taken" for "take"; a short form for
    the full word: "temp" for "temperature")."""
    text = _joined_compounds(text)
    terms: list[str] = []
    before = ""
    for word in _WORD.findall(text):
        if before.isdigit() and word.lower() in _ORDINAL_ENDINGS:
            before = word
            continue  # "28th": the number is the term
        # A short form of a function word is one too: "thru" is "through".
        if word.lower() not in _STOPWORDS and _base_form(word, before).lower() not in _STOPWORDS:
            terms.append(stem(_base_form(word, before)))
        terms.extend(_CARDINALS[part.lower()] for part in _PART.findall(word) if part.lower() in _CARDINALS)
        if "-" in word.strip("-"):
            terms.extend(stem(part) for part in _PART.findall(word) if part.lower() not in _STOPWORDS)
            # "e-bike" is also written "ebike".
            terms.append(stem(word.replace("-", "")))
        before = word
    # "£40 a month" and "per week" say how often, as "monthly" and "weekly" do.
    terms.extend(stem(each.group("unit").lower() + "ly") for each in _EACH_UNIT.finditer(text))
    return terms


@dataclass(frozen=True, slots=True)
class QuestionFocus:
    """What a question is about (weighted content terms) and what kind of answer it asks for."""

    question: str
    weights: dict[str, float]
    answer_type: AnswerType
    # Terms only of what the asker tells after asking (`trailing_aside`), weighed at ASIDE_WEIGHT.
    aside: frozenset[str] = frozenset()

    def spelled_out(self, text: str, heading: str = "") -> set[str]:
        """The question's abbreviations ("AGM", two to six capitals) that ``text`` or ``heading``
        spells out as capitalised words in a row ("Annual General Meeting"; a capitalised function
        word such as "The" or "of" is no part of it), or that ``heading`` spells out as a capitalised
        word and the words after it ("Personal training" for "PT")."""
        wanted = {word for word in _WORD.findall(self.question) if re.fullmatch(r"[A-Z]{2,6}", word)}
        if not wanted:
            return set()
        spelled: set[str] = set()
        for run in _CAPITALISED_RUN.finditer(f"{heading}\n{text}"):
            initials = "".join(word[0] for word in run.group().split() if word.lower() not in _STOPWORDS)
            spelled |= {stem(word) for word in wanted if word in initials.upper()}
        words = [word for word in re.findall(r"[A-Za-z][\w'’-]*", heading) if word.lower() not in _STOPWORDS]
        for word in wanted:
            size = len(word)
            spelled |= {
                stem(word)
                for at in range(len(words) - size + 1)
                if words[at][0].isupper()
                and "".join(part[0] for part in words[at : at + size]).upper() == word
            }
        return spelled

    @property
    def total_weight(self) -> float:
        return sum(self.weights.values())

    def coverage(self, terms: set[str]) -> float:
        """The weighted share of the question's terms found among ``terms``."""
        total = self.total_weight
        return sum(weight for term, weight in self.weights.items() if term in terms) / total if total else 0.0

    def missing(self, terms: set[str]) -> list[str]:
        return [term for term in self.weights if term not in terms]

    def without(self, terms: set[str]) -> QuestionFocus:
        """The same focus without ``terms``: what a claim must still cover once it has answered them."""
        kept = {term: weight for term, weight in self.weights.items() if term not in terms}
        return QuestionFocus(self.question, kept, self.answer_type, self.aside - terms)


_DURATION_QUESTION = re.compile(r"\bhow (?:long|soon)\b", re.IGNORECASE)
# When the one asking says a thing happened ("got burgled last night"): no topic of the question.
_TOLD_WHEN = re.compile(
    r"\b(?:last night|this (?:morning|afternoon|evening)|(?:earlier\s+)?today|tonight|yesterday)\b",
    re.IGNORECASE,
)
# How the one asking came to know it ("just found out I'm pregnant", "the dentist says I need a
# crown"): no topic of the question.
_TOLD_HOW = re.compile(r"\b(?:(?:just\s+)?found\s+out|says|said|reckons|told\s+(?:me|us))\b", re.IGNORECASE)
# "What happens if ...", "what'll happen when ...": how the question asks, not what about.
_WHAT_HAPPENS = re.compile(
    r"\bwhat(?:['’]?s|['’]ll|\s+(?:is|will|would|does|do|should|could|can))?\s+(?:happens?|happening)\b",
    re.IGNORECASE,
)
# Words that say a thing is of the everyday kind: "can I put normal plastic bags in the caddy" asks
# about plastic bags.
_EVERYDAY = frozenset({"normal", "usual", "ordinary", "actual"})
# Nouns that stand for whatever is named beside them: "the keep warm thing" asks about keep warm.
_PLACEHOLDERS = frozenset({"thing", "things", "thingy", "stuff"})
# What answers a "how long": a number of units of time or of length, a span between two years, or
# how long something lasts up to ("until 31 March", "overnight").
_DURATION = re.compile(
    r"(?:\b\d+(?:[.,]\d+)?[\s-]*|\b(?:an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"fifteen|twenty|thirty|forty|fifty|sixty|ninety|hundred|several|few|many|half(?: an?)?)[\s-]+)"
    r"(?:(?:more|extra|working|business|calendar|school|clear|full)\s+)?"
    r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|nights?|weeks?|fortnights?|months?|years?|yrs?|"
    r"decades?|centur(?:y|ies)|terms?|seasons?|semesters?|m|km|kilomet(?:re|er)s?|met(?:re|er)s?|miles?|"
    r"feet|foot|ft|inch(?:es)?|cm|mm|yards?)\b|"
    r"\b1\d{3}\s*(?:-|–|to|until)\s*(?:1\d{3}|\d{2})\b|\b(?:until|till|overnight|indefinitely)\b|"
    # A deadline answers "how long do I have": "by 5pm the day after your collection day".
    r"\bby\s+\d{1,2}(?:[.:]\d{2})?\s*(?:am|pm)\b|\bthe (?:day|week|month) (?:after|before)\b",
    re.IGNORECASE,
)


def question_focus(question: str) -> QuestionFocus:
    """The question's content terms with weights, and its answer type.

    Names (capitalised words past the first), numbers and long words weigh more: they are what
    tells one topic from another, while short common words match almost any passage. Words only of
    what the asker tells after asking ("whats the first ferry on a sunday? need to get over for
    work") weigh ASIDE_WEIGHT as much, numbers aside, and are `QuestionFocus.aside`.
    """
    weights = _focus_weights(question)
    asked, aside = trailing_aside(question)
    # So do the words only of a second alternative ("can I wash the filter or do I need a new one"):
    # a passage that settles the first settles the question.
    asked, alternative = asked_alternative(asked)
    told: frozenset[str] = frozenset()
    if aside or alternative:
        told = frozenset(
            set(weights) - set(_focus_weights(asked)) - {t for t in weights if _NUMBER.search(t)}
        )
        for term in told:
            weights[term] *= ASIDE_WEIGHT
    # Whom the asker asks for ("can my 15 yr old son use the gym", "my mum is 78, how often ...")
    # weighs as what they tell does: the passage speaks of its "young people" or "patients".
    # So does going somewhere ("can I go into the office on a Friday", "going as carer"): the
    # passage says whether the place is open or the visit allowed, in its own words.
    going = {term for term in weights if term in _GOING}
    for person in ({stem(match.group("who")) for match in _ASKED_FOR.finditer(question)} | going) - told:
        if person in weights:
            weights[person] *= ASIDE_WEIGHT
            told |= {person}
    return QuestionFocus(question, weights, answer_type_of(question), told)


# The stems of "go", "goes", "going", "went", "gone".
_GOING = frozenset({"go", "goe", "going"})
# The weight of a word of what the asker tells after asking, against one of the question itself.
ASIDE_WEIGHT = 0.5
# Where a typed question's clauses part: after ? ! or . with a space, at a comma or semicolon with one,
# at a dash between spaces.
_ASIDE_BREAK = re.compile(r"(?<=[?!.])\s+|[,;]\s+|\s+[-–]\s+")
# A clause that asks: it opens with a question word or a verb that asks ("is", "can", "does"), after
# a word or two that lead in ("and", "so", "ok").
_ASKING_CLAUSE = re.compile(
    r"^(?:(?:and|but|so|or|also|please|pls|ok|okay|oh|just)\s+)*"
    r"(?:what|whats|what's|what’s|which|who|whos|whose|where|wheres|when|whens|why|how|hows|is|isnt|are|"
    r"arent|was|were|do|dont|does|doesnt|did|can|cant|could|will|wont|would|should|shall|may|might|have|"
    r"has|any)\b",
    re.IGNORECASE,
)
# A clause that tells: it opens with the asker, what they have or want, or who or what they speak of
# ("need to get over for work", "got a car full of hedge cuttings", "my clavinova has a dead key").
_TELLING_CLAUSE = re.compile(
    r"^(?:i|im|i'm|i’m|ive|i've|i’ve|id|i'd|we|were|we're|we’re|weve|we've|my|our|its|it's|it’s|theres|"
    r"there's|there’s|he|hes|he's|she|shes|she's|they|theyre|they're|theyd|they'd|need|needs|want|wants|"
    r"wanted|got|going|thinking|hoping|trying)\b",
    re.IGNORECASE,
)


def trailing_aside(question: str) -> tuple[str, str]:
    """The question up to what the asker tells after asking, and what they tell (empty when nothing).

    What is told begins at the first clause after the last asking one that opens as telling does
    ("is there a boat back about 9pm on a saturday? going over for dinner"), and only where the
    asking part names two terms or more of its own: "... on the 7.40 on a tuesday, ok?" asks in its
    "ok?" of the clause before it. A clause that does not open as telling ("..., according to the
    council") is part of the question.
    """
    clauses = [clause.strip() for clause in _ASIDE_BREAK.split(question.strip()) if clause.strip()]
    asking = [
        index for index, clause in enumerate(clauses) if _ASKING_CLAUSE.match(clause) or clause.endswith("?")
    ]
    if not asking:
        return question, ""
    told = next(
        (index for index in range(asking[-1] + 1, len(clauses)) if _TELLING_CLAUSE.match(clauses[index])),
        None,
    )
    if told is None:
        return question, ""
    asked = ", ".join(clauses[:told])
    if len(_focus_weights(asked)) < 2:
        return question, ""
    return asked, ", ".join(clauses[told:])


# Where a question's second alternative begins: "or" and a verb that asks again ("... or do I need a
# new one", "... or is there an extra charge"), not "or" between two things ("a sauna or steam room").
_ALTERNATIVE = re.compile(
    r"[,;]?\s+or\s+(?=(?:do|does|did|dont|doesnt|is|isnt|are|arent|was|were|can|cant|could|will|wont|would|"
    r"should|shall|must|have|has|am)\b)",
    re.IGNORECASE,
)


def asked_alternative(question: str) -> tuple[str, str]:
    """The question's first alternative and its second (empty when it offers none), where each asks
    on its own and the first names two terms or more: "is kit included in the membership or do we pay
    extra" asks whether kit is included, and a passage that says so answers the other too."""
    parts = _ALTERNATIVE.split(question, maxsplit=1)
    if (
        len(parts) < 2
        or not any(_ASKING_CLAUSE.match(clause.strip()) for clause in _ASIDE_BREAK.split(parts[0]))
        or len(_focus_weights(parts[0])) < 2
    ):
        return question, ""
    return parts[0], parts[1]


def _focus_weights(question: str) -> dict[str, float]:
    """The weighted content terms of `question_focus`, before what the asker tells is weighed down."""
    weights: dict[str, float] = {}
    # "off peak" is one word, "off-peak", as `content_terms` reads it.
    words = _WORD.findall(
        _joined_compounds(_WHAT_HAPPENS.sub(" ", _TOLD_HOW.sub(" ", _TOLD_WHEN.sub(" ", question))))
    )
    duration = bool(_DURATION_QUESTION.search(question))
    # "In what year did ...": the word the question asks with, not what it is about.
    dated = _DATE_QUESTION.search(question)
    asked_with = dated.group().split()[-1].lower() if dated and len(dated.group().split()) > 1 else None
    for index, word in enumerate(words):
        if (
            word.lower() in _STOPWORDS | _EVERYDAY | _PLACEHOLDERS
            or (index and words[index - 1].isdigit() and word.lower() in _ORDINAL_ENDINGS)
            # A short form of a function word is one too: "thru" is "through".
            or full_form(word) in _STOPWORDS
        ):
            continue
        if asked_with is not None and word.lower() == asked_with:
            asked_with = None
            continue
        if (
            dated
            and word.lower() == "week"
            and [w.lower() for w in words[max(index - 2, 0) : index]] == ["of", "the"]
        ):
            continue  # "which night of the week": it asks for a day, the week is no topic
        if (
            word.lower() in ("old", "olds")
            and index
            and re.fullmatch(r"\d*(?:years?|yrs?|months?|y|yo)", words[index - 1], re.IGNORECASE)
        ):
            continue  # "my 9 year old", "13yr old": the age, not a word of the topic
        if (
            word.lower() in ("place", "places")
            and index
            and words[index - 1].lower() not in _STOPWORDS
            and not _NUMBER.search(words[index - 1])
        ):
            continue  # "the bike hire place": the business the words before it name, no topic
        if word.lower() in ("early", "late") and index > 0 and words[index - 1].lower() == "how":
            continue  # "how early do I need to be there": the question's phrase, as "how long" is
        if duration and (
            (word.lower() in ("long", "soon") and index > 0 and words[index - 1].lower() == "how")
            or word.lower() in {"take", "takes", "took", "last", "lasts", "lasted", "get", "gets"}
        ):
            # "how long does a rollback take?", "how long do I get": the question's phrase, not its topic
            continue
        weight = 1.0
        if (index > 0 and word[:1].isupper()) or _NUMBER.search(word):
            weight = 2.0
        elif len(word) >= 8:
            weight = 1.5
        term = stem(_base_form(word, words[index - 1] if index else ""))
        weights[term] = max(weights.get(term, 0.0), weight)
    if asks_alone(question):
        # "can my 7 year old swim on her own": whether alone, which "must be accompanied" answers.
        weights.setdefault("alon", 1.0)
    return weights


# Being alone, in the words of a question: "on her own", "by himself", "without me".
_ALONE = re.compile(
    r"\bon\s+(?:my|his|her|their|your|our|its)\s+own\b|\bby\s+(?:my|him|her|them|your|our)sel(?:f|ves)\b|"
    r"\bwithout\s+(?:me|us|an?\s+adult|a\s+parent)\b",
    re.IGNORECASE,
)


def asks_alone(question: str) -> bool:
    """Whether ``question`` asks of someone being alone ("can my 7 year old swim on her own"); "on my
    own driveway" is whose the driveway is."""
    for match in _ALONE.finditer(question):
        after = re.match(r"\s+([\w'’]+)", question[match.end() :])
        if match.group().lower().endswith("own") and after and after.group(1).lower() not in _STOPWORDS:
            continue
        return True
    return False


# What says whether someone may be alone: "must be accompanied", "without an adult".
_ALONE_SAID = re.compile(
    r"\balone\b|\b(?:un)?accompan\w*|\bsupervis\w*|\bwithout\s+(?:an?\s+)?(?:adult|parent|grown[\s-]?up)s?\b|"
    r"\bon\s+(?:their|his|her|your)\s+own\b|\bby\s+them(?:selves|self)\b",
    re.IGNORECASE,
)


def question_names(question: str) -> list[str]:
    """The terms of the names a question gives: its capitalised words past the first ("How much does
    Invisalign cost at Brookfield?": "invisal", "brookfi"), function words and "I" left out."""
    words = _WORD.findall(question)
    return [
        stem(word)
        for index, word in enumerate(words)
        if index > 0 and word[:1].isupper() and word.lower() not in _STOPWORDS and len(word) > 1
    ]


# A code of letters and digits ("zone F5", "a V5C", "fault F22"), not a word typed with a digit for
# letters ("b4"), nor a plural ("the u11s"), nor an age group typed short ("u11": under 11).
_CODE = re.compile(r"(?<![\w.-])[A-Za-z]{1,3}\d{1,4}[A-Za-rt-z]?(?![\w-])")
_NO_CODES = frozenset({"b4", "gr8", "m8"})


def question_codes(question: str) -> list[str]:
    """The codes a question gives ("how much is a residents permit in zone f5": "f5"), lower-cased.
    A code names one thing of several ("F1" to "F4" are other zones), as a name does."""
    return [
        code.lower()
        for code in _CODE.findall(question)
        if code.lower() not in _NO_CODES and not re.fullmatch(r"u\d+", code, re.IGNORECASE)
    ]


def says_code(code: str, text: str) -> bool:
    """Whether ``text`` gives ``code`` as a code of its own ("F5", "f-5" or "F 5" is not "F50")."""
    letters, digits = re.fullmatch(r"([a-z]+)(\d+[a-z]?)", code).groups()  # type: ignore[union-attr]
    return re.search(rf"(?<![\w.]){letters}[\s-]?{digits}(?![\w])", text, re.IGNORECASE) is not None


# The question word a question opens with ("In which ...", "Who ..."): what it asks for; a "how
# many" further on belongs to a clause of it ("Which setting sets how many files are uploaded?").
_OPENING_QUESTION_WORD = re.compile(
    r"^\s*(?:(?:in|on|at|for|to|from|by|with|during|of|under|after|before)\s+)?"
    r"(which|what|who|whom|whose|where|when|why|how)\b",
    re.IGNORECASE,
)


# "What's", "who's": the question word and "is", as the patterns of question kinds read them.
_CONTRACTED_IS = re.compile(r"\b(what|who|where|when|how|which)['’]?s\b", re.IGNORECASE)


def answer_type_of(question: str) -> AnswerType:
    """The kind of answer the question's wording asks for ("any" when it does not say)."""
    if _EARLIEST_LATEST.search(question):
        return "date"
    question = _CONTRACTED_IS.sub(r"\1 is", question)
    if _DATE_QUESTION.search(question):
        return "date"
    if _PHONE_QUESTION.search(question):
        return "number"
    number = _NUMBER_QUESTION.search(question)
    opening = _OPENING_QUESTION_WORD.match(question)
    if (
        number
        and (
            opening is None
            or opening.group(1).lower() == "how"
            or number.start() <= opening.start(1)
            # "What does it cost, and how much is the fee?": a second question, not a clause.
            or re.search(r"(?:,|\band|\bor)\s*$", question[: number.start()])
        )
    ):
        return "number"
    if _HOURS_QUESTION.search(question):
        return "number"
    if _PERSON_QUESTION.search(question):
        return "person"
    if _PLACE_QUESTION.search(question) or _ADDRESS_QUESTION.search(question):
        return "place"
    if _REASON_QUESTION.search(question):
        return "reason"
    return "any"


def fills_answer_type(text: str, answer_type: AnswerType, question: str = "", columns: str = "") -> bool:
    """True when ``text`` holds something of the asked-for kind that the question itself lacks.

    ``columns`` is the header of the table ``text`` is a row of, if any: what its cells are.

    Some questions ask for a narrower kind than their type: "which day" for a day (a weekday, a
    day of a month, "every day"), not a year; "what is the price" for an amount of money; "how many
    keepers" for a count, not a year nor a distance in kilometres.
    """
    if answer_type == "any":
        return True
    question = _CONTRACTED_IS.sub(r"\1 is", question)
    if answer_type == "date":
        # A year the question names is what it is about, not its answer ("When did they win the
        # championship prior to 2000?" is not answered by "they won it in 2000").
        for year in set(_YEAR.findall(question)):
            text = re.sub(rf"\b{year}s?\b", " ", text)
        if _DAY_QUESTION.search(question):
            return bool(WEEKDAY.search(text) or DAY_OF_MONTH.search(text) or _EVERY_DAY.search(text))
        if _CLOCK_QUESTION.search(question):
            return bool(_TIME_OR_FREQUENCY.search(text))
        if _EARLIEST_LATEST.search(question):
            return bool(_CLOCK_OR_DAY.search(text) or DAY_OF_MONTH.search(text))
        if mentions_date(text) or re.search(r"\b1\d{3}s?\b|\b20\d{2}s?\b|\bcentury\b", text):
            return True
        # "When should I call an engineer?": a condition answers it ("If an error comes back more
        # than three times in a day, call an engineer.").
        if _WHEN_TO_QUESTION.search(question) and _CONDITION.search(text):
            return True
        # "When does the job run?": a time of day or how often answers it, not a "which year".
        return bool(_WHEN_QUESTION.search(question) and _TIME_OR_FREQUENCY.search(text))
    if answer_type == "number":
        # "5. Type your new password": an item's number in a list is no figure of what it says.
        text = _ITEM_NUMBER.sub("", text)
        if _PHONE_QUESTION.search(question):
            return bool(_PHONE.search(text))
        unit = _PER_UNIT_QUESTION.search(question)
        if (
            unit
            and unit.group("unit").lower().rstrip("s") not in _TIME_UNITS
            and not text.lstrip().startswith("|")
            and not _states_per_unit(text, unit.group("unit"))
        ):
            # A total ("900 bikes, 300 of them electric") says nothing of each station; a table
            # row's header may say what its figures are per.
            return False
        if _HOW_OFTEN.search(question):
            # "How often should the filter be cleaned?": "once a week", "daily", "twice a year"; and
            # a table's interval column: "| Headset | Jabra Evolve2 55 | 3 years |".
            return bool(
                _TIME_OR_FREQUENCY.search(text) or _FREQUENCY.search(text) or _TABLE_DURATION.search(text)
            )
        if _DURATION_QUESTION.search(question):
            # "How long can I keep a DVD?": a length of time or of distance ("1 week", "two
            # working days", "45 km", "until the end of term"), not any figure ("up to 3 DVDs").
            takes = _TAKES_TO.search(question)
            if takes and not text.lstrip().startswith("|"):
                return _states_time_taken(text, takes.group("verb"))
            if _HOW_LONG_TAKES.search(question):
                # "How long does the lead check take?": a length of time, not of a rope ("40 metres").
                lengths = (length.group() for length in _DURATION.finditer(text))
                return any(not _DISTANCE.search(length) for length in lengths) or bool(
                    _TABLE_DURATION.search(text) or _timed_cell(text, columns)
                )
            return bool(_DURATION.search(text) or _TABLE_DURATION.search(text) or _timed_cell(text, columns))
        if _AGE_QUESTION.search(question):
            return _states_age(text, columns)
        if _HOURS_QUESTION.search(question):
            return bool(_TIME_OR_FREQUENCY.search(text) or _HOURS_SAID.search(text))
        if _MONEY_QUESTION.search(question):
            # A price may be written without its currency: "A bike ticket costs 5.00", or a table's
            # "| Family | 34.00 |" under a "Price" column.
            return bool(_MONEY.search(text) or _BARE_PRICE.search(text) or _priced_cell(text, columns))
        if _TEMPERATURE_QUESTION.search(question):
            return bool(_TEMPERATURE.search(text))
        if _RATE_QUESTION.search(question):
            return bool(_NUMBER_WORD.search(text)) and bool(_RATE.search(text))
        dimension = _DIMENSION_QUESTION.search(question)
        if dimension:
            asked = dimension.group("how") or dimension.group("what") or dimension.group("weigh")
            words = _DIMENSION_WORDS[asked.lower()]
            return bool(_NUMBER_WORD.search(text)) and bool(re.search(rf"\b(?:{words})", text, re.IGNORECASE))
        counted = counted_noun(question)
        if counted is not None:
            return _states_count(text, counted, question)
        return bool(quantities(text)) or bool(_NUMBER_WORD.search(text))
    if answer_type == "reason":
        # A table row's cell under a "Cause" or "Reason" column is one, whatever its words.
        return bool(_REASON_CUE.search(text)) or bool(columns and _REASON_COLUMN.search(columns))
    asked = {stem(word) for word in _WORD.findall(question)}
    if answer_type == "person":
        deed = _DEED_QUESTION.search(question)
        if deed and not _names_deed(text, deed.group("verb").lower()):
            return False
        done = _DOER_QUESTION.search(question)
        if not deed and done and not _mentions_verb(text, done.group("verb")):
            return False
        if _names_doer(text, question, asked):
            return True
        if _PERMISSION_QUESTION.search(question):
            # "Who may start a deploy?": a role or a group answers, not only a name; "Who handles
            # payroll questions?" a name questions go to ("go to Priya Nair" names no place).
            groups = {stem(match.group()) for match in _GROUP_WORD.finditer(text)}
            if groups - asked or _HANDED_TO.search(text):
                return True
        return any(
            stem(match.group()) not in asked and not _PLACE_BEFORE.search(text, 0, match.start())
            for match in _CAPITALISED.finditer(text)
        )
    if _ADDRESS_QUESTION.search(question):
        return _states_address(text, question)
    if _PATH.search(text):
        return True
    cues = [*_PLACE_CUE.finditer(text)]
    if _MOTION_QUESTION.search(question):
        cues.extend(_MOTION_CUE.finditer(text))
    return any(
        _names_place(word) and stem(word) not in asked
        for match in cues
        for word in match.group("words").split()
    )


# "How long does the battery take to charge?": the time some deed takes.
# "How long does the check take", "how long will the power cut last": a length of time is asked.
_HOW_LONG_TAKES = re.compile(r"\bhow long\b.*\b(?:take|takes|took|last|lasts|lasted)\b", re.IGNORECASE)
# A length of distance that `_DURATION` also matches ("40 metres", "5 miles").
_DISTANCE = re.compile(
    r"(?:\bm|km|kilomet(?:re|er)s?|met(?:re|er)s?|miles?|feet|foot|ft|inch(?:es)?|cm|mm|yards?)$",
    re.IGNORECASE,
)
_TAKES_TO = re.compile(
    r"\bhow long\b(?:.*\b(?:take|takes|took)\b(?:\s+\w+)?)?\s+to\s+(?P<verb>[a-z]{3,})\b", re.IGNORECASE
)
# The parts of a sentence a length of time belongs to: "**Storing the bike for more than 4 weeks** (e.g.
# over winter): charge the battery to 50%" gives the storing's length, not the charging's.
_CLAUSE_BREAK = re.compile(r"[;()\[\]*]|\s[-–—]\s")
_TAKING = re.compile(r"\b(?:tak(?:e|es|ing|en)|took|lasts?)\b", re.IGNORECASE)


def _states_time_taken(text: str, verb: str) -> bool:
    """Whether ``text`` gives a length of time after ``verb`` or a word of taking, in the same part of
    it: "A full charge takes about 4.5 hours", not "covered for 2 years or 500 full charge cycles"."""
    wanted = stem(_base_form(verb))
    return any(
        wanted in content_terms(part[: length.start()]) or _TAKING.search(part, 0, length.start())
        for part in _CLAUSE_BREAK.split(text)
        for length in _DURATION.finditer(part)
    )


# A column of lengths of time: "Duration (default)", "Run time", "How long".
_DURATION_COLUMN = re.compile(r"\b(?:duration|run\s*time|length|how long|time taken|takes)\b", re.IGNORECASE)


# "What age can my son start?", "age limit for the zip wire", "minimum age": an age is asked.
_AGE_QUESTION = re.compile(
    r"\b(?:what|which)\s+age\b|\bage\s+(?:limit|range)\b|\b(?:min|max|minimum|maximum)\s+age\b", re.IGNORECASE
)
# A price written without its currency, after a word of paying: "costs 5.00", "priced at 12.50".
_BARE_PRICE = re.compile(
    r"\b(?:costs?|costing|priced\s+at|(?:price|fee|charge)\s+(?:is|of)|charged\s+at|pays?|paid)\s+"
    r"(?:only\s+|just\s+|from\s+|about\s+)?\d[\d,]*\.\d{2}\b",
    re.IGNORECASE,
)
_AGE_COLUMN = re.compile(r"\bages?\b", re.IGNORECASE)
_PRICE_COLUMN = re.compile(
    r"\b(?:price|prices|cost|costs|fee|fees|charge|charges|fare|fares|rent)\b|[£€$]", re.IGNORECASE
)


def _figure_under(row: str, columns: str, header: re.Pattern[str]) -> bool:
    """Whether a table row gives a figure in a column whose header ``header`` matches."""
    if not columns or not row.lstrip().startswith("|"):
        return False
    cells = _cells(row)
    return any(
        header.search(name) and at < len(cells) and _NUMBER.search(cells[at])
        for at, name in enumerate(_cells(columns))
    )


def _priced_cell(row: str, columns: str) -> bool:
    """Whether a table row gives a number under a column of prices ("| Family | 34.00 |" under
    "| Ticket | Price |")."""
    return _figure_under(row, columns, _PRICE_COLUMN)


def _states_age(text: str, columns: str) -> bool:
    """Whether ``text`` gives someone's age ("4 years" under a "Minimum age" column, "aged 65 or
    over", "under-5s", "18+", "9 weeks of age"), not any number ("From Stage 1 upwards"), nor a length of time ("for
    3 years")."""
    if any(pattern.search(text) for pattern in (_AGE_BAND, _AGE_OF_SOMEONE, _AGE_LIMIT)):
        return True
    for match in re.finditer(r"\b\d+(?:\.\d+)?\s*-?\s*(?:years?|yrs?|months?)\b", text, re.IGNORECASE):
        if _kind_of_years(text, match.start(), match.end()) != "length":
            return True
    if re.search(r"\b\d{1,2}\s*\+(?!\s*\d)", text):
        return True
    # A young animal's or a baby's age: "from 9 weeks of age", "6 weeks old".
    if re.search(r"\b\d+\s*-?\s*(?:weeks?|wks?|days?)\s*-?\s*(?:of\s+age|old)\b", text, re.IGNORECASE):
        return True
    return _figure_under(text, columns, _AGE_COLUMN)


def _timed_cell(row: str, columns: str) -> bool:
    """Whether a table row gives a figure under a column of lengths of time ("| Cottons | 40 °C | 3:15 |"
    under "| Programme | Default temp | Duration (default) |")."""
    return _figure_under(row, columns, _DURATION_COLUMN)


# Units of time: "per year" asks how often or at what rate, which the other checks judge.
_TIME_UNITS = frozenset(
    {"second", "minute", "hour", "day", "night", "week", "fortnight", "month", "quarter", "year", "annum",
     "season", "term", "semester", "decade", "century"}
)  # fmt: skip


def _states_per_unit(text: str, unit: str) -> bool:
    """Whether ``text`` gives a figure for each ``unit``: "each station has", "20 docks per station",
    "a single station holds"."""
    wanted = stem(unit)
    words = [word.lower() for word in _WORD.findall(text)]
    return any(
        stem(word) == wanted
        and any(before in ("each", "every", "per", "a", "an", "one") for before in words[max(0, at - 2) : at])
        for at, word in enumerate(words)
    )


def _names_deed(text: str, verb: str) -> bool:
    """Whether ``text`` names the deed a "who founded / wrote ..." question asks about, or a maker by name."""
    forms = _DEED_FORMS.get(verb, re.escape(verb[:5]))
    return bool(re.search(rf"\b(?:{forms})", text, re.IGNORECASE) or _MAKER_AFTER_BY.search(text))


# "Which tool ...", "what app ...": the noun after the question word is the kind of thing asked for.
_KIND_QUESTION = re.compile(r"^\s*(?:which|what)\s+(?P<kind>[A-Za-z][\w'’-]*)", re.IGNORECASE)
# Words of a question that ask for a time of day ("opening hours", "what times").
_CLOCK_KIND = frozenset({"hour", "time"})


_CLOCK = r"(?:\d{1,2}(?:[.:]\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)|\d{1,2}:\d{2})"
_TIME_RANGE = re.compile(rf"\b{_CLOCK}\s*(?:-|–|—|to|until|till)\s*{_CLOCK}", re.IGNORECASE)


# Words of a question that name a measure, with what states one: "the distance of the longest hike"
# is answered by "a 11.4 km circuit", "what temperature" by "220 °C", without the word itself.
_MEASURE_VALUES: dict[str, re.Pattern[str]] = {
    "temperature": _TEMPERATURE,
    "degrees": _TEMPERATURE,
    "distance": re.compile(r"\d\s*(?:km|kilomet(?:re|er)s?|mi|miles?|m|met(?:re|er)s?)\b", re.IGNORECASE),
    "price": _MONEY,
    "cost": _MONEY,
    "fee": _MONEY,
    "fare": _MONEY,
    # Opening hours as a range of clock times ("Friday 8.30am - 4.00pm") say when it opens and closes.
    **dict.fromkeys(("open", "opens", "opening", "close", "closes", "closing", "shut", "shuts"), _TIME_RANGE),
    # A time of day says which part of the day it is in: "8.00am - 12.30pm" is open in the morning.
    **dict.fromkeys(
        ("morning", "mornings"),
        re.compile(r"\b(?:[5-9]|1[01])(?:[.:][0-5]\d)?\s?(?:am|a\.m\.)|\b(?:0?[5-9]|1[01]):[0-5]\d\b", re.I),
    ),
    **dict.fromkeys(
        ("afternoon", "afternoons"),
        re.compile(r"\b(?:12|[1-5])(?:[.:][0-5]\d)?\s?(?:pm|p\.m\.)|\b1[2-7]:[0-5]\d\b", re.I),
    ),
    **dict.fromkeys(
        ("evening", "evenings"),
        re.compile(r"\b(?:[5-9]|1[01])(?:[.:][0-5]\d)?\s?(?:pm|p\.m\.)|\b(?:1[7-9]|2[0-3]):[0-5]\d\b", re.I),
    ),
    # A limit: "between 8 and 63 characters" gives the minimum and the maximum, "at least 12" a minimum.
    "minimum": re.compile(
        r"\bat least\b|\bbetween\s+\S+\s+and\b|\bno (?:fewer|less) than\b|\d\S*\s+or (?:more|over|above)\b",
        re.IGNORECASE,
    ),
    "maximum": re.compile(
        r"\bup to\b|\bat most\b|\bbetween\s+\S+\s+and\b|\bno more than\b|\d\S*\s+or (?:fewer|less|under)\b",
        re.IGNORECASE,
    ),
    # An address says where to email, a number where to phone, a web address which website.
    **dict.fromkeys(("email", "emails", "e-mail"), re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")),
    **dict.fromkeys(
        ("phone", "telephone", "tel"),
        re.compile(r"(?<![\d.,])(?:\+\d{1,3}[\s-]?)?\(?0\d{2,4}\)?[\s-]?\d{3,4}[\s-]?\d{3,4}(?![\d.,])"),
    ),
    **dict.fromkeys(
        ("website", "websites"),
        re.compile(r"\b(?:https?://|www\.)\S+|\b[\w-]+\.(?:co\.uk|org\.uk|gov\.uk|com|org|net)\b", re.I),
    ),
    # "8 characters" is a length, as "12 km" or "3 hours" are.
    "length": re.compile(
        r"\d\s*(?:characters?|letters?|digits?|words?|pages?|km|kilomet(?:re|er)s?|miles?|m|met(?:re|er)s?|cm|mm|"
        r"ft|feet|inch(?:es)?|minutes?|hours?|days?|weeks?|months?|years?)\b",
        re.IGNORECASE,
    ),
}


# The stems of those words: a claim that meets the question only in one of them ("£60" for "price")
# says a value of the measure, not of the thing the question asks it of.
MEASURE_TERMS = frozenset(stem(word) for word in _MEASURE_VALUES)


# Words that say the same deed or state, by stem: "When did the mill stop grinding?" is answered by
# "Commercial milling ended in 1961"; "Am I allowed ...?" by "... are not permitted".
_SAME_WORDS: tuple[frozenset[str], ...] = (
    frozenset({"stop", "end", "ceas", "halt"}),
    frozenset({"allow", "permit"}),
    frozenset({"year", "annual"}),
    frozenset({"ring", "call", "phon", "telepho"}),
    frozenset({"rehears", "practis", "practic"}),
    frozenset({"shut", "clos"}),
    frozenset({"begin", "start", "commenc"}),
    # "a second driver" is an additional one
    frozenset({"additio", "second", "extra", "anoth"}),
    # "my son" is the "your child" of a school's letter
    frozenset({"child", "childr", "son", "daught", "kid", "boy", "girl"}),
    # "bring a friend" or "a mate" is bringing a guest
    frozenset({"friend", "mate", "guest"}),
    # "got an uber home" took a taxi
    frozenset({"taxi", "uber", "cab", "minicab"}),
    # "a parking fine" is a penalty charge
    frozenset({"fine", "penalty"}),
    # "when do we have to leave" asks when to depart
    frozenset({"leav", "depart", "departu"}),
    # "the dentist" is the dental practice whose page it is
    frozenset({"dentist", "dental"}),
    # "do bins need to be out by ..." asks what they must be
    frozenset({"need", "must", "requir"}),
    # "can I keep chickens" is answered by the rule on hens
    frozenset({"chicken", "hen"}),
    # "what jabs does my cat need" asks for its vaccinations
    frozenset({"jab", "vaccin"}),
    # "do we still pay" is answered by "fees are payable", "is it refundable" by a refund
    frozenset({"pay", "payabl"}),
    frozenset({"refund", "refunda"}),
    frozenset({"charg", "chargea"}),
    # "the light is flashing orange" is the guide's amber light
    frozenset({"orang", "amber"}),
    # "can I swap my tickets" is answered by "tickets cannot be exchanged"
    frozenset({"swap", "exchang"}),
    # "cheap tix", "his meds"
    frozenset({"tix", "ticket"}),
    frozenset({"med", "medicin", "medic"}),
    # "the light is flashing red" is the guide's blinking LED
    frozenset({"flash", "blink"}),
    # "can i take a mattress to the tip" asks the household recycling centre
    frozenset({"tip", "dump", "recycl"}),
    # "r u taking new patients" asks whether they are accepted
    frozenset({"take", "taking", "took", "accept"}),
    # "walking on w my bike" is the ferry's cyclist
    frozenset({"bike", "bicycl", "cycl", "cyclist"}),
    # "whats the fine for a late dvd" asks the library's overdue charges
    frozenset({"late", "overdu"}),
    frozenset({"fine", "penalt", "charg"}),
    # "at the terminal with the car": "vehicles must check in ..."
    frozenset({"car", "vehicl"}),
    # "my baby ... shes 1": "Infants under 2 ..."
    frozenset({"baby", "infant"}),
)


# A yes-or-no question's deed of having, getting, paying with or moving a thing ("can I bring my bike
# on the 27", "can she keep her earrings in for PE", "is there any help with buying the uniform", "can
# i get a static ip", "can i pay with debit card") is asked of the thing: a passage on the thing
# answers it in whatever verb it uses ("folding bikes only", "Debit cards are accepted").
HOLDING_DEEDS = frozenset({"bring", "take", "keep", "carry", "buy", "buying", "get", "got", "pay"})


def deed_objects(question: str) -> set[str]:
    """The stems of the thing a ``HOLDING_DEEDS`` verb of the question has or moves: the words
    after it up to the next function word, past those right after it ("bring my bike on the 27":
    "bike"; "take my electric bike": "electric", "bike"). The claim that answers for the deed names
    that thing itself: "up to 2 bikes" is not said of an electric one."""
    words = _WORD.findall(question)
    things: set[str] = set()
    for at, word in enumerate(words):
        if stem(_base_form(word, "")) not in HOLDING_DEEDS:
            continue
        after = at + 1
        while after < len(words) and words[after].lower() in _STOPWORDS:
            after += 1
        while after < len(words) and words[after].lower() not in _STOPWORDS:
            things.add(stem(words[after]))
            after += 1
    return things


# Phrases of a question that a word says: "do I get my money back?" asks about a refund.
_SAME_PHRASES: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    # "do I get any money back" is answered by a refund, compensation or a credit; "can I claim it
    # back", "do we get the deposit back" too.
    (
        re.compile(
            r"\bmoney\s+back\b|\b(?:claim|get|getting|got)\s+(?:it|that|this|them|(?:my|our|the)\s+\w+)\s+back\b",
            re.IGNORECASE,
        ),
        frozenset({"refund", "refunda", "compens", "credit", "reimburs"}),
    ),
    # "if both my kids go to the nursery" asks about brothers or sisters who attend it.
    (
        re.compile(
            r"\b(?:both|two|2|all)\s+(?:of\s+)?(?:my|our)\s+(?:kids|children|sons|daughters|boys|girls)\b",
            re.I,
        ),
        frozenset({"broth", "sist", "sibl"}),
    ),
    (re.compile(r"\b(?:go|goes|going)\s+to\b", re.IGNORECASE), frozenset({"attend"})),
    # "can I pick up my race number" asks where and when it is collected.
    (
        re.compile(r"\b(?:pick|picks|picked|picking)\s+(?:\w+\s+){0,3}?up\b", re.IGNORECASE),
        frozenset({"collect"}),
    ),
    # "if I don't send the router back", "where do I drop books back" ask about returning them.
    (
        re.compile(
            r"\b(?:send|sends|sent|sending|bring|brings|brought|bringing|give|gives|gave|giving|take|takes|"
            r"took|taking|post|posts|posted|posting|drop|drops|dropped|dropping|hand|hands|handed|handing)"
            r"\s+(?:\w+\s+){0,3}?back\b",
            re.IGNORECASE,
        ),
        frozenset({"return"}),
    ),
    # "does the plug work on 5ghz wifi" asks whether it supports that, or is compatible.
    (
        re.compile(r"\b(?:work|works|working)\s+(?:on|with)\b", re.IGNORECASE),
        frozenset({"support", "compatib", "compat"}),
    ),
    # "can we bring our dog" asks whether it is allowed.
    (
        re.compile(r"\b(?:can|may)\s+(?:i|we|you)\s+(?:bring|take)\b", re.IGNORECASE),
        frozenset({"allow", "permit", "welcom"}),
    ),
    # "will my bill go up" asks about an increase, "go down" about a fall.
    (re.compile(r"\b(?:go|goes|going|went|gone)\s+up\b", re.IGNORECASE), frozenset({"increas", "rise"})),
    (
        re.compile(r"\b(?:go|goes|going|went|gone)\s+down\b", re.IGNORECASE),
        frozenset({"decreas", "reduc", "fall"}),
    ),
    # "do I get money off", "50% off", "the cheaper amount" ask about a discount.
    (
        re.compile(r"\bmoney\s+off\b|\d+\s*%\s*off\b|\bcheaper\b", re.IGNORECASE),
        frozenset({"discoun", "reduc", "reducti"}),
    ),
    # "if I fall behind on the payments" asks what happens when they are late or unpaid.
    (
        re.compile(
            r"\b(?:fall|falls|fell|fallen|falling|get|got|getting|am|are|is|be|im|i['’]m)\s+behind\b", re.I
        ),
        frozenset({"late", "unpaid", "arrear", "overdu", "miss"}),
    ),
    # "the dog chewed the sofa": damage by pets.
    (re.compile(r"\b(?:dog|cat|puppy|kitten)s?\b", re.IGNORECASE), frozenset({"pet"})),
    # "can I freeze it without paying" asks whether that is free.
    (
        re.compile(r"\b(?:without\s+(?:paying|payment|a\s+fee|charge)|for\s+free)\b", re.IGNORECASE),
        frozenset({"free"}),
    ),
    # "if I pay the whole year up front" asks about paying in advance, or annually.
    (re.compile(r"\bup[\s-]?front\b", re.IGNORECASE), frozenset({"advanc", "annual"})),
    # "didn't turn up to my class" is a no-show.
    (
        re.compile(r"\b(?:did\s*n['’]?t|did\s+not|not|never)\s+(?:turn|show)(?:ed|ing|s)?\s+up\b", re.I),
        frozenset({"no-show", "noshow"}),
    ),
    # "they didn't empty my bin" is a missed collection.
    (
        re.compile(
            r"\b(?:did\s*n['’]?t|did\s+not|was\s*n['’]?t|was\s+not|were\s*n['’]?t|were\s+not|not|never)\s+"
            r"(?:been\s+)?(?:empt(?:y|ied)|collect(?:ed)?|picked\s+up)\b",
            re.IGNORECASE,
        ),
        frozenset({"miss"}),
    ),
    # "before they put their prices up": an increase.
    (
        re.compile(
            r"\bput(?:s|ting)?\s+(?:(?:the|their|your|our|its|my)\s+)?(?:prices?|fees?|rents?|charges?|costs?|"
            r"rates?|premiums?)\s+up\b|\bput(?:s|ting)?\s+up\s+(?:the\s+|their\s+)?(?:prices?|fees?|rents?|"
            r"charges?|costs?|rates?|premiums?)\b",
            re.IGNORECASE,
        ),
        frozenset({"increas", "rise", "rais"}),
    ),
    # "he threw up last night", "she was sick": vomiting.
    (
        re.compile(
            r"\b(?:threw|throw|throws|throwing|thrown)\s+up\b|\b(?:was|been|being|is|were)\s+sick\b(?!\s+note)",
            re.IGNORECASE,
        ),
        frozenset({"vomit"}),
    ),
    # "can I take a pint in", "a glass of wine": a drink, and alcohol.
    (
        re.compile(r"\b(?:pints?|beers?|lagers?|ciders?|wines?|prosecco)\b", re.IGNORECASE),
        frozenset({"drink", "alcohol"}),
    ),
    # "can I put plastic bags in the caddy" asks whether they are accepted there.
    (
        re.compile(r"\b(?:can|may|could)\s+(?:i|we|you)\s+(?:put|chuck|throw)\b", re.IGNORECASE),
        frozenset({"accept", "allow", "permit"}),
    ),
)


def _same_as(term: str) -> frozenset[str]:
    """The stems that say what ``term`` says (itself included)."""
    return next((same for same in _SAME_WORDS if term in same), frozenset({term}))


# A time of day a question gives: "at 6 in the evening", "at 11 at night", "6pm", "18:30".
_ASKED_CLOCK = re.compile(
    r"\bat\s+(?P<at>\d{1,2})(?:[.:]\d{2})?(?=\s*(?:$|[?,.!;]|am\b|pm\b|a\.m\.|p\.m\.|o['’]?clock\b|"
    r"in\s+the\b|at\s+night\b|tonight\b|on\b|and\b|or\b))"
    r"|\b(?P<hour>\d{1,2})(?:[.:]\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)(?!\w)|\b(?P<clock>\d{1,2}):\d{2}\b",
    re.IGNORECASE,
)
_HOURS_GIVEN = re.compile(rf"{_TIME_RANGE.pattern}|\bbetween\s+{_CLOCK}\s+and\s+{_CLOCK}", re.IGNORECASE)


def asked_hours(question: str, text: str) -> set[str]:
    """The hour a yes-or-no question gives ("can I get to my unit at 11 at night") where ``text``
    gives hours ("Site access is 6am to 10pm", "only between 3pm and 5pm"): they answer it, yes or
    no, as a limit answers an amount."""
    if not asks_yes_or_no(question) or not _HOURS_GIVEN.search(text):
        return set()
    return {
        stem(match.group("at") or match.group("hour") or match.group("clock"))
        for match in _ASKED_CLOCK.finditer(question)
    }


# A number of units of time a "how much" question gives ("30 days late", "for 3 nights"), and a
# rate a text gives per such unit ("25p per item per day", "£50 a night", "charged daily").
_AMOUNT_OF_TIME = re.compile(
    r"\b(?P<number>\d+)\s*(?P<unit>minutes|mins|hours|hrs|days|nights|weeks|wks|months|years|yrs)\b",
    re.IGNORECASE,
)
_RATE_OF = {
    # "£5 per 30 minutes (or part)" is a rate of minutes too.
    "min": r"(?:per|a|an|each|every)\s+(?:\d+\s*)?min(?:ute)?s?\b",
    "minut": r"(?:per|a|an|each|every)\s+(?:\d+\s*)?min(?:ute)?s?\b",
    "hour": r"(?:per|an|each|every)\s+(?:hour|hr)\b|\bper\s+half[\s-]+hour\b|\bhourly\b",
    "hr": r"(?:per|an|each|every)\s+(?:hour|hr)\b|\bper\s+half[\s-]+hour\b|\bhourly\b",
    "day": r"(?:per|a|each|every)\s+day\b|\bdaily\b",
    "night": r"(?:per|a|each|every)\s+night\b|\bnightly\b",
    "week": r"(?:per|a|each|every)\s+(?:week|wk)\b|\bweekly\b",
    "wk": r"(?:per|a|each|every)\s+(?:week|wk)\b|\bweekly\b",
    "month": r"(?:per|a|each|every)\s+month\b|\bmonthly\b",
    "year": r"(?:per|a|each|every)\s+(?:year|yr)\b|\b(?:yearly|annually)\b",
    "yr": r"(?:per|a|each|every)\s+(?:year|yr)\b|\b(?:yearly|annually)\b",
}


def rated_amounts(question: str, text: str) -> set[str]:
    """The terms of a number of units of time a "how much" question gives ("my book is 30 days
    late, how much will the fine be") where ``text`` gives a rate per that unit ("25p per item per
    day, maximum £6.00"): the rate answers it, the sum left to the reader. Only a plural unit
    counts: "a 30 day pass" names a ticket, not an amount of days."""
    if answer_type_of(question) != "number":
        return set()
    terms: set[str] = set()
    for match in _AMOUNT_OF_TIME.finditer(question):
        unit = stem(_base_form(match.group("unit"), match.group("number")))
        rate = _RATE_OF.get(unit)
        if rate and re.search(rf"\b(?:{rate})", text, re.IGNORECASE):
            terms |= {stem(match.group("number")), unit}
    return terms


def measured_terms(question: str, text: str) -> set[str]:
    """The question's words that name a measure ("distance", "temperature", "price") which ``text``
    states a value of ("11.4 km", "220 °C", "£6.75"): the value says the word; and the question's
    words that ``text`` says in other words of the same sense ("stopped" as "ended")."""
    words = _WORD.findall(question)
    # A short form asks for its full word's measure ("max" the maximum).
    asked = {(full_form(word, words[at - 1] if at else "") or word).lower() for at, word in enumerate(words)}
    said = {word for word, value in _MEASURE_VALUES.items() if word in asked and value.search(text)}
    return (
        {stem(word) for word in said}
        | same_sense_terms(question, text)
        | spanned_duration(question, text)
        | spanned_month(question, text)
        | generalised_terms(question, text)
        | opposite_said(question, text)
        | asked_hours(question, text)
        | rated_amounts(question, text)
    )


# A month a question asks about: "in July", "mid august", "over december"; "may" and "march" only
# after such a word, since they are also a verb.
_ASKED_MONTH = re.compile(
    rf"\b(?:(?P<after>in|during|over|through|throughout|for|of|early|late|mid|end\s+of|start\s+of)"
    rf"[\s-]+)?(?P<month>{MONTH_NAMES})\b",
    re.IGNORECASE,
)
# A run of months a text gives: "between 1 November and the last day of February", "(1 October to
# 31 March)", "24 May – 8 Sept", "March to November".
_MONTH_RANGE = re.compile(
    rf"\b(?P<first>{MONTH_NAMES})\b[^.;:\n]{{0,12}}?(?:\s+(?:to|and|until|till|through)\s+|\s*[–—-]\s*)"
    rf"[^.;:\n]{{0,24}}?\b(?P<last>{MONTH_NAMES})\b",
    re.IGNORECASE,
)
_ONLY = re.compile(r"\bonly\b", re.IGNORECASE)


def _month_number(name: str) -> int:
    return MONTHS[name.lower()[:3] if name.lower()[:3] != "sep" else "sep"]


def spanned_month(question: str, text: str) -> set[str]:
    """The stems of the months a question asks about ("a bonfire in July") where ``text`` gives a
    run of months that holds the month ("1 April to 30 September" for July), or one that it limits
    something to ("only between 1 November and the last day of February"): the run speaks of it."""
    ranges = [
        (_month_number(match.group("first")), _month_number(match.group("last")))
        for match in _MONTH_RANGE.finditer(text)
    ]
    if not ranges:
        return set()
    limits = bool(_ONLY.search(text))
    spoken: set[str] = set()
    for asked in _ASKED_MONTH.finditer(question):
        word = asked.group("month")
        if word.lower() in ("may", "mar", "march") and not asked.group("after"):
            continue
        month = _month_number(word)
        holds = any(
            first <= month <= last if first <= last else (month >= first or month <= last)
            for first, last in ranges
        )
        if holds or limits:
            spoken.add(stem(word))
    return spoken


# "any bank holiday weekend", "all dogs", "every plan": a rule for each thing of a kind.
_EVERY_OF_KIND = re.compile(
    r"\b(?:any|every|all|each)\s+(?:of\s+)?(?:the\s+|our\s+)?(?P<noun>[A-Za-z][\w-]*)", re.I
)


# "is there a family membership", "do you do ...": whether such a thing is had at all, which a rule
# for every one of them ("on any membership") does not say.
_ASKS_WHETHER_THERE_IS = re.compile(
    r"\b(?:is|are)\s+there\b|\bdo\s+(?:you|they|we|u)\s+(?:have|do|offer|sell|run|take)\b|"
    r"\b(?:have|has)\s+(?:you|they)\s+got\b|\bany\s+\w+\s+(?:for|at)\b",
    re.IGNORECASE,
)


# The times that narrow a kind ("the may bank holiday", "a saturday class", "the christmas
# collection"): every such thing has one, so a rule for all of them holds it. A word of any other
# kind ("the family membership") may name a thing that is not had at all.
_TIME_OF_KIND = re.compile(
    rf"(?:{MONTH_NAMES})|(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:days?)?|"
    r"spring|summer|autumn|winter|christmas|easter|xmas",
    re.IGNORECASE,
)


def generalised_terms(question: str, text: str) -> set[str]:
    """The stems of the times that narrow a kind in the question ("the may bank hol weekend") where
    ``text`` gives a rule for every thing of that kind ("3 nights over any bank holiday weekend"):
    the rule speaks of the one asked. Only a time (``_TIME_OF_KIND``): a number narrows to a row or
    a plan ("HeatSure 1") and another word to a kind that may not be had ("the family membership"
    and "on any membership"); and a rule for every one does not say that one is had at all ("is
    there a ... on a Saturday")."""
    nouns = {stem(match.group("noun")) for match in _EVERY_OF_KIND.finditer(text)} - {""}
    if not nouns or _ASKS_WHETHER_THERE_IS.search(question):
        return set()
    words = _WORD.findall(question)
    return {
        stem(words[at - 1])
        for at in range(1, len(words))
        if stem(words[at]) in nouns
        # The noun itself, not a verb of its stem ("a piano collected" and "all collections").
        and not words[at].lower().endswith(("ed", "ing"))
        and _TIME_OF_KIND.fullmatch(words[at - 1])
    }


# A measure a question gives ("3 weeks before", "30 hours ahead", "a few weeks": about three; "my
# 10 yr old"; "my dog weighs 32kg"), as its dimension and its size in that dimension's unit.
_UNIT_SIZES: dict[str, tuple[str, float]] = {
    "minute": ("time", 1 / 60), "min": ("time", 1 / 60), "hour": ("time", 1), "hr": ("time", 1), "day": ("time", 24), "week": ("time", 168), "wk": ("time", 168),
    "fortnight": ("time", 336), "month": ("time", 730), "year": ("time", 8760), "yr": ("time", 8760),
    "kg": ("weight", 1), "kilo": ("weight", 1), "kilogram": ("weight", 1), "g": ("weight", 0.001),
    "gram": ("weight", 0.001),
    "mile": ("distance", 1.609344), "km": ("distance", 1), "kilometre": ("distance", 1), "kilometer": ("distance", 1),
}  # fmt: skip
_UNIT_WORDS = (
    r"minutes?|mins?|hours?|hrs?|days?|weeks?|wks?|fortnights?|months?|years?|yrs?|kg|kilos?|kilograms?|g|grams?|"
    r"miles?|km|kilomet(?:re|er)s?"
)
_TIME_UNIT = rf"(?P<unit>{_UNIT_WORDS})\b"
_NUMBER_WORDS: dict[str, float] = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "few": 3, "several": 3, "couple": 2,
}  # fmt: skip
_DURATION_GIVEN = re.compile(
    rf"\b(?P<number>\d+(?:\.\d+)?|{'|'.join(_NUMBER_WORDS)})(?:\s+of)?\s*-?\s*{_TIME_UNIT}", re.IGNORECASE
)
# A span a text gives: "14 to 27 days", "between 24 and 48 hours", "28 days or more", "fewer than 14
# days", "at least 7 days", "within 10 days", "25-40kg", "Child (5 - 15 years)".
_DURATION_SPANS = (
    re.compile(
        rf"(?:\bbetween\s+)?(?<![\d.])(?P<low>\d+(?:\.\d+)?)\s*(?:(?P<unit_low>{_UNIT_WORDS})\b)?\s*(?:–|—|-|to|and)\s*"
        rf"(?P<high>\d+(?:\.\d+)?)\s*{_TIME_UNIT}",
        re.IGNORECASE,
    ),
    re.compile(
        rf"(?<![\d.])(?P<low>\d+(?:\.\d+)?)\s*{_TIME_UNIT}\s+(?:or|and)\s+(?:more|longer|over|above|older)\b"
        rf"|\b(?:(?:more|longer)\s+than|after|over|beyond)\s+(?P<above>\d+(?:\.\d+)?)\s*(?P<unit_above>{_UNIT_WORDS})\b"
        rf"|\b(?:at\s+least|minimum(?:\s+of)?)\s+(?P<least>\d+(?:\.\d+)?)\s*(?P<unit_least>{_UNIT_WORDS})\b",
        re.IGNORECASE,
    ),
    re.compile(
        rf"\b(?:(?:fewer|less)\s+than|under|within|up\s+to|maximum(?:\s+of)?)\s+(?P<high>\d+(?:\.\d+)?)\s*{_TIME_UNIT}",
        re.IGNORECASE,
    ),
)


# The people an asker speaks for ("my mum", "our 15 yr old son", "my brother"): they name whom a
# question is asked for, not what it is about. A child, kid or baby is also a kind of ticket or
# place ("child ticket"): those stay terms of the question, and are people only for an age.
_RELATIVES = (
    "mum|mom|mother|dad|father|parent|son|daughter|brother|sister|wife|husband|partner|nan|nana|nanna|"
    "gran|granny|grandma|grandmother|grandad|granddad|grandpa|grandfather|grandson|granddaughter|"
    "grandchild|grandkid|niece|nephew|aunt|auntie|uncle|cousin|friend|mate|lad|lass|boyfriend|girlfriend|"
    "fiance|fiancee|stepson|stepdaughter|bf|gf|hubby|missus|flatmate|housemate|neighbour|neighbor"
)
_SOMEONES = f"{_RELATIVES}|child|kid|boy|girl|baby"
# One the asker speaks for, after "my", "our" ... and up to four words of age or kind ("my 22 yr old
# son", "our eldest daughter").
_ASKED_FOR = re.compile(
    rf"\b(?:my|our|his|her|their)\s+(?:[\w'’-]+\s+){{0,4}}?(?P<who>(?:{_RELATIVES})(?:s|es)?)\b",
    re.IGNORECASE,
)


# An age given without its unit: "im 67", "my son is 2 and a half", "she's 7", "aged 65 and over",
# "over 65s", "Under-16s", "the minimum age for classes is 16".
_AGE_OF_SOMEONE = re.compile(
    rf"\b(?P<who>i['’]?m|i\s+am|(?:he|she)(?:['’]?s|\s+is)|(?:{_SOMEONES})s?\s+(?:is|are)|aged?)\s+"
    r"(?P<number>\d+(?:\.\d+)?)(?P<half>\s+and\s+a\s+half)?"
    r"(?P<more>(?:\s*(?:-|–|—|to|and)\s*\d+(?:\.\d+)?)?)"
    # A colon after the age ends a label ("Aged 8 to 10: ..."); one before digits makes a clock time.
    rf"(?![A-Za-z%£$€]|:\s*\d|[.,]?\d|\s*(?:{_UNIT_WORDS}|ft|feet|foot|cm|m|kg|lbs?|stone|st|y/?o)\b|\s*[%£$€])",
    re.IGNORECASE,
)
_AGE_BAND = re.compile(
    r"\b(?P<side>over|under)[\s-]+(?P<number>\d+)s\b"
    # "Children under 16", "kids over 5": the age of those it names.
    r"|\b(?P<who>(?:children|child|kids|kid|pupils|infants|babies|toddlers|swimmers|juniors?)\s+\(?)"
    r"(?P<side2>over|under)\s+(?P<number2>\d+)"
    r"(?![\d.:%£$€]|\s*(?:am|pm|kg|cm|m|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|yrs?|miles?|km)\b)",
    re.IGNORECASE,
)
_AGE_LIMIT = re.compile(
    r"\b(?P<side>minimum|maximum|min|max)\s+age\b(?:\s+(?:for|of|to)\s+[\w\s-]{1,30}?)?\s+(?:is|of)\s+"
    r"(?P<number>\d+)\b",
    re.IGNORECASE,
)


def _with_ages(text: str) -> str:
    """``text`` with the unit of each age it gives without one written in: "im 67" as "im 67 years",
    "my son is 2 and a half" as "... 2.5 years", "aged 65 and over" as "aged 65 years and over", "over
    65s" as "over 65 years", "The minimum age for classes is 16" as "... at least 16 years"."""

    def someone(match: re.Match[str]) -> str:
        number = match.group("number")
        if match.group("half"):
            number = f"{float(number) + 0.5:g}"
        more = re.sub(r"(\d+(?:\.\d+)?)$", r"\1 years", match.group("more")) if match.group("more") else ""
        return f"{match.group('who')} {number} years{more}"

    text = _AGE_OF_SOMEONE.sub(someone, text)
    text = _AGE_BAND.sub(
        lambda match: (
            f"{match.group('who') or ''}{match.group('side') or match.group('side2')} "
            f"{match.group('number') or match.group('number2')} years"
        ),
        text,
    )
    return _AGE_LIMIT.sub(
        lambda match: (
            f"{match.group()[: match.start('number') - match.start()]}"
            f"{'at least' if match.group('side').lower().startswith('min') else 'up to'} {match.group('number')} years"
        ),
        text,
    )


def _size(number: str, unit: str) -> tuple[str, float]:
    """The dimension of ``unit`` and the size of ``number`` of it in that dimension's unit."""
    value = _NUMBER_WORDS.get(number.lower())
    name = unit.lower()
    dimension, scale = _UNIT_SIZES.get(name) or _UNIT_SIZES[name[:-1] if name.endswith("s") else name]
    return dimension, (value if value is not None else float(number)) * scale


# What marks a number of years as someone's age ("im 23", "aged 25 to 75", "my 9 year old", "the
# minimum age ... is 16") or as a length of time ("held a licence for at least 2 years", "within 3
# years", "2 years ago"): an age is not compared with a length of time, nor a length with an age.
_AGE_BEFORE = re.compile(
    rf"(?:\b(?:i['’]?m|i\s+am|(?:he|she)(?:['’]?s|\s+is)|(?:{_SOMEONES})s?\s+(?:is|are)|aged?|ages)\s+"
    r"(?:(?:between|over|under|from)\s+)?"
    r"|\bage\b[^.;:!?\d]{0,30})$",
    re.IGNORECASE,
)
_AGE_AFTER = re.compile(r"\s*-?\s*(?:olds?\b|of\s+age\b|y/?o\b)", re.IGNORECASE)
_LENGTH_BEFORE = re.compile(
    r"\b(?:for|within|after|every|lasts?|lasting|past|last|(?:the\s+)?(?:first|next))\s+"
    r"(?:(?:at\s+least|up\s+to|more\s+than|less\s+than|over|under|about|around|nearly|almost)\s+)?$",
    re.IGNORECASE,
)
_LENGTH_AFTER = re.compile(r"\s+(?:ago|before|after|later|from)\b|['’]", re.IGNORECASE)


def _kind_of_years(text: str, start: int, end: int) -> str | None:
    """Whether the number of years (or months) at ``text[start:end]`` is someone's "age", a
    "length" of time, or either (None); a number of other units is no age ("i am 5 minutes late")."""
    if not re.search(r"\b\d+(?:\.\d+)?\s*-?\s*(?:years?|yrs?|months?)\b", text[start:end], re.IGNORECASE):
        return None
    before = text[max(0, start - 60) : start]
    if _AGE_BEFORE.search(before) or _AGE_AFTER.match(text, end):
        return "age"
    if _LENGTH_BEFORE.search(before) or _LENGTH_AFTER.match(text, end):
        return "length"
    return None


def _duration_spans(question: str, text: str) -> Iterator[tuple[re.Match[str], re.Match[str], bool]]:
    """Each length of time the question gives with each span of time ``text`` gives, and whether the
    span holds it (ages given without their unit read as years, see `_with_ages`). An age and a
    length of time are not compared ("im 23" and "held a licence for at least 2 years")."""
    question, text = _with_ages(question), _with_ages(text)
    for asked in _DURATION_GIVEN.finditer(question):
        dimension, wanted = _size(asked.group("number"), asked.group("unit"))
        asked_kind = _kind_of_years(question, asked.start(), asked.end())
        for pattern in _DURATION_SPANS:
            for span in pattern.finditer(text):
                found = {name: value for name, value in span.groupdict().items() if value is not None}
                unit = found.get("unit") or found.get("unit_above") or found.get("unit_least") or ""
                if _size("1", unit)[0] != dimension:
                    continue  # days against kilograms: no comparison
                span_kind = _kind_of_years(text, span.start(), span.end())
                if asked_kind and span_kind and asked_kind != span_kind:
                    continue  # an age against a length of time

                def size(number: str, unit: str = unit) -> float:
                    return _size(number, unit)[1]

                if "low" in found and "high" in found:
                    # "between 48 hours and 7 days": the low end in its own unit.
                    low_unit = found.get("unit_low")
                    if low_unit is None or _size("1", low_unit)[0] != dimension:
                        low_unit = unit
                    holds = _size(found["low"], low_unit)[1] <= wanted <= size(found["high"])
                elif "low" in found or "least" in found:
                    holds = wanted >= size(found.get("low") or found["least"])
                elif "above" in found:
                    holds = wanted > size(found["above"])
                else:
                    holds = wanted < size(found["high"]) or (
                        wanted == size(found["high"]) and not re.match(r"(?:fewer|less)", span.group(), re.I)
                    )
                yield asked, span, holds
        # A length the text gives without a bound speaks of the asked one where they are the same
        # ("14 days after the due date" for "a couple of weeks").
        for given in _DURATION_GIVEN.finditer(text):
            if given.group("number").lower() in _NUMBER_WORDS:
                continue
            given_dimension, given_size = _size(given.group("number"), given.group("unit"))
            if (
                given_dimension == dimension
                and abs(given_size - wanted) < 1e-9
                and given.group() != asked.group()
            ):
                kind = _kind_of_years(text, given.start(), given.end())
                if not (asked_kind and kind and asked_kind != kind):
                    yield asked, given, True


def spanned_duration(question: str, text: str) -> set[str]:
    """The terms of a length of time the question gives ("3 weeks") where ``text`` gives a span of
    time that holds it ("14 to 27 days before the booking", "28 days or more", "fewer than 14 days"):
    the span speaks of it, as "18-20 °C" speaks of 19 °C."""
    # A yes-or-no question is answered by a limit that does not hold it: "can my 14 year old come?"
    # by "The minimum age for classes is 16", "for 5 months?" by "a maximum of 3 months".
    polar = is_polar_question(question)
    # So is one about someone's age by the ages a thing is for ("im 23, can i have a courtesy car"
    # and "you must be aged 25 to 75").
    yes_or_no = asks_yes_or_no(question)
    return {
        term
        for asked, span, holds in _duration_spans(question, text)
        if holds
        or (polar and _LIMIT.search(span.group()))
        or (
            yes_or_no
            and _kind_of_years(asked.string, asked.start(), asked.end()) == "age"
            and _kind_of_years(span.string, span.start(), span.end()) == "age"
        )
        for term in _measure_terms(asked)
    }


_MOST_ALLOWED = re.compile(r"\b(?:maximum|up\s+to|at\s+most)\b", re.IGNORECASE)
_LIMIT = re.compile(
    r"\b(?:or|and)\s+(?:more|longer|over|above|older)\b|\b(?:more|longer|fewer|less)\s+than\b|"
    r"\b(?:after|over|beyond|under|within|up\s+to|at\s+least|minimum|maximum)\b",
    re.IGNORECASE,
)


def _measure_terms(asked: re.Match[str]) -> tuple[str, str]:
    """The question's terms for a measure it gives: its number and its unit ("yrs" as "years")."""
    unit = asked.group("unit")
    return stem(asked.group("number")), stem(full_form(unit, asked.group("number")) or unit)


def other_duration(question: str, text: str, context: str) -> str | None:
    """The span ``text`` speaks of where the question gives a length of time (or a weight) that no
    span of the text holds and a span of its passage ``context`` does ("15 days or more before
    arrival" for "10 days before we arrive", beside "7 to 14 days before arrival"): another band, as
    "full plot" is another kind than "half plot". Returned as "15 days or more (asked: 10 days)";
    None where a span of the text holds it, the text gives none, or none of the passage holds it (a
    limit, "a maximum of 3 months", then answers "for 5 months?")."""
    spans = list(_duration_spans(question, text))
    if not spans or any(holds for _, _, holds in spans) or _states_length(question, text):
        return None
    # A most that is allowed ("a maximum of 3 months") answers "for 5 months?" with a no, whatever
    # longer exception the passage gives beside it ("medical freezes may last up to 6 months").
    if all(_MOST_ALLOWED.search(span.group()) for _, span, _ in spans):
        return None
    if not any(holds for _, _, holds in _duration_spans(question, context)):
        return None
    asked, span, _ = spans[0]
    return f"{span.group().strip()} (asked: {asked.group().strip()})"


def _lengths(text: str) -> Iterator[tuple[re.Match[str], str, float]]:
    """Each length of time (or weight) ``text`` gives, with its dimension and its size."""
    for given in _DURATION_GIVEN.finditer(_with_ages(text)):
        yield (given, *_size(given.group("number"), given.group("unit")))


def _states_length(question: str, text: str) -> bool:
    """Whether ``text`` gives a length the question gives ("Intensive course (20 hours)" for a
    "20hr course"), whatever spans beside it say."""
    given = {(dimension, size) for _, dimension, size in _lengths(text)}
    return any((dimension, size) in given for _, dimension, size in _lengths(question))


def other_length(question: str, text: str) -> str | None:
    """For a question that asks for a number of a thing of a length or weight it gives ("How much is
    a 90 min driving lesson?"), the length ``text`` gives instead: where the text gives lengths of
    that dimension, none of them the asked one and no span of it holding that ("Motorway lesson (2
    hours) | £90" is another lesson, its "90" a price). Returned as "2 hours (asked: 90 min)"; None
    where the text gives the length, gives none of that dimension, or the question asks for no
    number (a claim of "3 months" answers "Can I freeze it for 5 months?")."""
    if answer_type_of(question) != "number":
        return None
    for asked, dimension, wanted in _lengths(question):
        given = [(match, size) for match, other, size in _lengths(text) if other == dimension]
        if not given or any(size == wanted for _, size in given):
            continue
        if any(
            holds for spoken, _, holds in _duration_spans(question, text) if spoken.start() == asked.start()
        ):
            continue
        return f"{given[0][0].group().strip()} (asked: {asked.group().strip()})"
    return None


# A unit a table's column header names in brackets: "Water hardness (°dH)", "Weight (kg)".
_HEADER_UNIT = re.compile(r"\(\s*°?\s*(?P<unit>[A-Za-z][A-Za-z/]*)\s*\)")
# A number with a unit a question gives: "25 dH", "25°dH", "30kg".
_GIVEN_MEASURE = re.compile(r"(?<![\w.])(?P<number>\d+(?:\.\d+)?)\s*°?\s*(?P<unit>[A-Za-z][A-Za-z/]*)\b")
# A cell that is a band of bare numbers: "23–34", "over 40", "under 5", "65+".
_CELL_BAND = re.compile(
    r"(?:(?P<low>\d+(?:\.\d+)?)\s*(?:–|—|-|to)\s*(?P<high>\d+(?:\.\d+)?)"
    r"|(?:over|above|more\s+than|>)\s*(?P<above>\d+(?:\.\d+)?)"
    r"|(?:under|below|less\s+than|up\s+to|<)\s*(?P<below>\d+(?:\.\d+)?)"
    r"|(?P<plus>\d+(?:\.\d+)?)\s*\+)",
    re.IGNORECASE,
)


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def column_band_terms(question: str, row: str, columns: str) -> set[str]:
    """The terms of a measure the question gives ("25 dH") that a table row holds in a band of bare
    numbers ("| 23–34 | 4.1–6.1 | H5 |") under a column whose header names the unit ("Water hardness
    (°dH)"): the row speaks of it, as "25–40kg" speaks of 32kg."""
    if not row.strip().startswith("|") or not columns:
        return set()
    headers, values = _cells(columns), _cells(row)
    if len(headers) != len(values):
        return set()
    held: set[str] = set()
    for asked in _GIVEN_MEASURE.finditer(question):
        unit, wanted = asked.group("unit").lower(), float(asked.group("number"))
        for header, value in zip(headers, values, strict=True):
            named = _HEADER_UNIT.search(header)
            band = _CELL_BAND.fullmatch(value)
            if named is None or named.group("unit").lower() != unit or band is None:
                continue
            found = {name: float(number) for name, number in band.groupdict().items() if number is not None}
            if (
                ("low" in found and found["low"] <= wanted <= found["high"])
                or ("above" in found and wanted > found["above"])
                or ("below" in found and wanted < found["below"])
                or ("plus" in found and wanted >= found["plus"])
            ):
                held |= {stem(asked.group("number")), stem(asked.group("unit"))}
    return held


# An amount of money as a table's cell writes it: "£350", "$1,200.50".
_MONEY_CELL = re.compile(r"[$£€]\s?\d[\d,]*(?:\.\d+)?")


def other_column(question: str, claim: str, context: str) -> str | None:
    """The column a claim in its own words ("A block of 10 hours is £350.") takes its amount from,
    where a table row of its passage ("| Block of 10 hours | £350 | £390 |") gives the amount under
    one column ("Manual") and the question names another ("how much is a block of 10 hrs in an
    automatic"). Returned as "manual (asked: automatic)"; None where the claim quotes the row, gives
    the asked column's amount too, or the question names no column."""
    if claim.strip().startswith("|"):
        return None
    amounts = {re.sub(r"\s", "", amount) for amount in _MONEY_CELL.findall(claim)}
    if not amounts:
        return None
    asked = set(question_focus(question).weights)
    claimed = set(content_terms(claim))
    lines = context.splitlines()
    for at, line in enumerate(lines[:-1]):
        if not line.strip().startswith("|") or not re.fullmatch(r"\s*\|[\s:|-]+\|\s*", lines[at + 1]):
            continue
        headers = _cells(line)
        for row in lines[at + 2 :]:
            if not row.strip().startswith("|"):
                break
            cells = _cells(row)
            if len(cells) != len(headers) or len(cells) < 3 or not set(content_terms(cells[0])) & claimed:
                continue
            given = [
                index for index in range(1, len(cells)) if amounts & set(_MONEY_CELL.findall(cells[index]))
            ]
            if not given:
                continue
            # The column the question names: the header that holds most of its terms, then the one
            # of fewest other words ("peak" names "Peak", not "Off-peak").
            keyed = set(content_terms(cells[0]))
            met: dict[int, tuple[int, float]] = {}
            for index in range(1, len(headers)):
                terms = set(content_terms(headers[index]))
                if terms & asked - keyed:
                    met[index] = (len(terms & asked), len(terms & asked) / len(terms))
            named = [index for index, score in met.items() if score == max(met.values())]
            if named and not set(given) & set(named):
                return f"{headers[given[0]].lower()} (asked: {headers[named[0]].lower()})"
    return None


# "the average upload and download", "both": a question that asks two things of a row.
_TWO_ASKED = re.compile(r"\band\b|\bboth\b|&|,", re.IGNORECASE)


def unheaded(question: str, row: str, columns: str) -> str | None:
    """The words a question names a column by ("minimum guaranteed upload") that no one column of a
    quoted table row's header holds together, only several ("Average upload", "Minimum guaranteed
    download"): the row has no such value. The first column names what the rows are, and a word the
    row's cells hold picks the row, not a column; a question that asks two things ("upload and
    download") may name two."""
    if not row.strip().startswith("|") or not columns or _TWO_ASKED.search(question):
        return None
    headers, values = _cells(columns), _cells(row)
    if len(headers) != len(values) or len(headers) < 3:
        return None
    asked = set(question_focus(question).weights) - set(content_terms(" ".join(values)))
    by_column = [set(content_terms(header)) & asked for header in headers[1:]]
    named = set().union(*by_column)
    if len(named) < 2 or any(terms == named for terms in by_column):
        return None
    return f"no column of {' '.join(sorted(named))}"


def duration_terms(question: str) -> set[str]:
    """The stems of the lengths of time a question gives ("10 days": "10", "day")."""
    return {
        term for asked in _DURATION_GIVEN.finditer(_with_ages(question)) for term in _measure_terms(asked)
    }


# Ordinals written in figures and in words.
_ORDINALS = {"1": "first", "2": "second", "3": "third", "4": "fourth", "5": "fifth", "6": "sixth",
             "7": "seventh", "8": "eighth", "9": "ninth", "10": "tenth"}  # fmt: skip
# "permit" as a noun ("a fishing permit", "my parking permit") and as a verb ("are dogs permitted",
# "do they permit dogs").
_PERMIT_NOUN = re.compile(
    r"\b(?!(?:they|you|we|i|not|to|will|would|do|does|can|may|he|she|it)\b)\w+\s+permits?\b", re.I
)
_PERMIT_VERB = re.compile(
    r"\bpermitted\b|\b(?:they|you|we|i|not|to|will|would|do|does|can|may|he|she|it)\s+permits?\b", re.I
)


def same_sense_terms(question: str, text: str, *, phrases: bool = True) -> set[str]:
    """The question's terms that ``text`` says in other words of the same sense ("stopped" as
    "ended", "dentist" as "dental", "money back" as a refund), as the question's stems. Without
    ``phrases``, only words for words: a phrase names the deed asked ("can we bring", "go up"),
    which the claim must say itself, not another sentence of its passage."""
    # An irregular form stands for its base, as in the question's focus ("threw" for "throw").
    asked_stems = {stem(_base_form(word, "")) for word in _WORD.findall(question)}
    # "non-refundable" says "refundable" too.
    text_stems = {stem(word) for token in _WORD.findall(text) for word in {token, *_PART.findall(token)}}
    same_said: set[str] = set()
    for same in _SAME_WORDS:
        if text_stems & same:
            same_said |= (asked_stems & same) - text_stems
    # "my 2nd kid" is the passage's "second child", and "the second" its "2nd".
    for number, word in _ORDINALS.items():
        if re.search(rf"\b{number}(?:st|nd|rd|th)\b", question, re.IGNORECASE) and word in text_stems:
            same_said.add(number)
        if word in asked_stems and re.search(rf"\b{number}(?:st|nd|rd|th)\b", text, re.IGNORECASE):
            same_said.add(word)
    # "a fishing permit" is a thing, not what "allowed" says.
    if "permit" in same_said and _PERMIT_NOUN.search(question) and not _PERMIT_VERB.search(question):
        same_said.discard("permit")
    if "alon" in asked_stems | ({"alon"} if asks_alone(question) else set()) and _ALONE_SAID.search(text):
        same_said.add("alon")
    for phrase, words in _SAME_PHRASES if phrases else ():
        match = phrase.search(question)
        if match and text_stems & words:
            same_said |= {stem(_base_form(word, "")) for word in _WORD.findall(match.group())} - text_stems
    # Stems already: a stem stemmed again may lose more ("practis" would read "practi").
    return same_said


def answered_kind_terms(question: str, text: str) -> set[str]:
    """The question's terms that name the kind of thing it asks for, when ``text`` gives one of that
    kind without naming the kind: the answer to "Which tool must employees use?" names the tool
    ("the travel portal, Waypoint"), not the word "tool"; "opening hours" are answered by "10:00 to
    17:00". The noun after "which" / "what" counts when the text names something the question does
    not (a capitalised word past a sentence's start); "hours" and "times" when it gives a clock time.
    Such terms are left out of what a claim must cover (`QuestionFocus.without`) only where the claim
    and its passage hold every other term of the question."""
    credited: set[str] = set()
    asked = {stem(word) for word in _WORD.findall(question)}
    kind = _KIND_QUESTION.search(question)
    names_other = any(stem(match.group()) not in asked for match in _CAPITALISED.finditer(text))
    if (
        kind
        and kind.group("kind").lower() not in _STOPWORDS
        and answer_type_of(question) == "any"
        and names_other
    ):
        credited.add(stem(kind.group("kind")))
    if _TIME_OR_FREQUENCY.search(text):
        credited |= _CLOCK_KIND & {stem(word) for word in _WORD.findall(question)}
    return credited


# "Which database ...": a question for one particular thing of a kind; "What model ...": of a kind
# whose things are told apart by their names ("What fuel ..." is answered by common words).
_WHICH_QUESTION = re.compile(
    r"^\s*(?:which\s+(?P<kind>[A-Za-z][\w'’-]*)"
    r"|what\s+(?P<named>models?|brands?|makes?|versions?|editions?|names?)\b"
    # "What's the name of the nursery manager?" asks for a name as "What name ..." does.
    r"|what(?:['’]?s|\s+is|\s+are|\s+was|\s+were)?\s+the\s+(?P<name_of>names?|brands?|makes?|models?)\s+of\b)",
    re.IGNORECASE,
)


def which_kind(question: str) -> str | None:
    """The stem of the kind a "which <kind>" (or "what model", "what is the name of") question asks
    one thing of: "Which flag stops ..." gives "flag"."""
    match = _WHICH_QUESTION.search(question)
    if match is None:
        return None
    kind = match.group("kind") or match.group("named") or match.group("name_of")
    return None if kind.lower() in _STOPWORDS else stem(_base_form(kind.lower()))


# A figure that names rather than counts: "the number 14 bus", "route 7 buses", "gate 3".
_NAMING_FIGURE = re.compile(
    r"\b(?:number|no\.?|nr\.?|route|line|gate|platform|room|bay|#)\s*$", re.IGNORECASE
)
# A term of code or a quoted name: `harbor migrate`, "retry_limit", api/v2.
_CODE_OR_QUOTED = re.compile(r"`[^`]+`|\"[^\"]+\"|“[^”]+”|\b\w+[_/]\w+")
# A name past a sentence's start, acronyms and inner capitals included ("SQLite", "AWS", "iOS").
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b(?:[A-Z][\w'’-]*|[a-z]+[A-Z][\w'’-]*)")


# A noun narrowed by the word before it, after an article or a determiner: "a half plot".
_NARROWED = re.compile(
    # A number before it stands in for the article in a query typed without one ("grade 8 theory exam fee").
    # A query typed without its article: "how much is gym membership", "how much for half head highlights".
    r"\b(?:a|an|the|per|each|every|one|my|your|our|their|his|her|its|\d+|"
    r"(?:is|are|for)(?!\s+(?:a|an|the|per|each|every|one|my|your|our|their|his|her|its)\b))\s+"
    r"(?P<modifier>[A-Za-z][\w'’-]*)\s+(?P<noun>[A-Za-z][\w'’-]*)",
    re.IGNORECASE,
)


# A unit after a number: "45 min", "10kg", "2 hours".
_NUMBER_UNIT = re.compile(
    rf"(?:{_UNIT_WORDS}|m|cm|mm|km|ml|l|litres?|liters?|g|lbs?|ft|°\w*|%|"
    # "1 gig full fibre": a speed or a size of data; a power, a voltage, a pressure.
    r"gigs?|megs?|[kmgt]b|[mg]bps|kw|kwh|w|watts?|v|volts?|amps?|bar)",
    re.IGNORECASE,
)


# Words before a noun that say how many or which one, not what kind: "per year", "each plot".
_QUANTIFIERS = frozenset(
    {
        "per",
        "each",
        "every",
        "any",
        "some",
        "no",
        "all",
        "both",
        "either",
        "neither",
        "another",
        "other",
        "such",
        "same",
    }
)


# Words of how a thing looks to the one asking, not of which kind it is.
# A query typed as a kind and its price, with no article: "beard trim price", "day ticket cost".
# A measure typed after the thing it is of: "beard trim price", "half plot cost".
_TYPED_MEASURES = frozenset(
    {"price", "prices", "cost", "costs", "fee", "fees", "charge", "charges", "rate", "rates"}
)
_TYPED_KIND = re.compile(
    r"^\s*(?P<modifier>[A-Za-z][\w'’-]*)\s+(?P<noun>[A-Za-z][\w'’-]*)\s+"
    rf"(?:{'|'.join(sorted(_TYPED_MEASURES))})\b",
    re.IGNORECASE,
)
_DESCRIBING = frozenset({"little", "tiny", "wee", "usual", "normal", "same", "whole", "actual", "old"})


# Verbs that follow the subject of a question ("how long does a rollback take"), whose word before
# is a noun, not a word that narrows one.
_QUESTION_VERBS = frozenset(
    {"take", "takes", "cost", "costs", "last", "lasts", "need", "needs", "open", "opens", "close", "closes",
     "start", "starts", "run", "runs", "work", "works", "go", "goes", "come", "comes", "get", "gets", "have",
     "has", "make", "makes", "do", "does", "be", "is", "are", "pay", "mean", "means", "happen", "stay",
     "leave", "finish", "end", "ends", "charge", "use", "weigh", "hold", "fit", "expire", "arrive", "wear",
     # particles of a phrasal verb: "get my deposit back"
     "back", "up", "down", "out", "off", "away", "over", "in", "on"}
)  # fmt: skip


def _counts_units(match: re.Match[str]) -> bool:
    """Whether a narrowed noun of ``_NARROWED`` is a unit after a number or a rate's word: "a 45
    min piano lesson" is no "min piano", and "price per hour tennis" asks a rate, not of an hour's
    kind of tennis."""
    first = match.group().split()[0].lower()
    return (first.isdigit() or first in ("per", "each", "every")) and bool(
        _NUMBER_UNIT.fullmatch(match.group("modifier"))
    )


# "on 1 plug", "for 1 adult": a one before a noun, not a unit, counts the thing as an article would.
_ONE_OF = re.compile(r"(?<![\w.,£$€])(?:1|one)\s+(?P<noun>[A-Za-z][\w'’-]*)", re.IGNORECASE)


def one_as_article(question: str) -> bool:
    """Whether the question's only "1" stands before a noun as an article would ("how many
    schedules can i set on 1 plug"): the figure is no measure that a claim must give."""
    if len(re.findall(r"(?<![\w.,])1(?![\w.,])", question)) != 1:
        return False
    return any(
        match.group().startswith("1")
        and not _NUMBER_UNIT.fullmatch(match.group("noun"))
        and match.group("noun").lower() not in _STOPWORDS
        for match in _ONE_OF.finditer(question)
    )


_NOUN_PAIR = re.compile(r"(?P<modifier>[A-Za-z][\w'’-]*)[ \t]+(?P<noun>[A-Za-z][\w'’-]*)")


def _narrowed_pairs(question: str) -> list[re.Match[str]]:
    """The nouns of the question narrowed by the word before them (`_NARROWED`, `_TYPED_KIND`); where
    the narrowed noun narrows the next ("the volta day pass", "the choir summer concert"), that
    next noun and the word before it ("day pass", "summer concert"). An age is no kind: in "a 12 yr
    old oil boiler" the pair is "oil boiler"."""
    pairs: list[re.Match[str]] = []
    for match in [*_NARROWED.finditer(question), *_TYPED_KIND.finditer(question)]:
        if match.group("noun").lower() in ("old", "olds") and _narrows_next(question, match.end("noun")):
            after = re.match(r"[ \t]+", question[match.end("noun") :])
            aged = _NOUN_PAIR.match(question, match.end("noun") + (after.end() if after else 0))
            if aged is not None and _narrows_next(question, aged.end("modifier")):
                match = aged
        shifted = _NOUN_PAIR.match(question, match.start("noun"))
        pairs.append(shifted if shifted and _narrows_next(question, match.end("noun")) else match)
    return pairs


def _narrows_next(question: str, end: int) -> bool:
    """Whether the word after ``end`` in the question is a noun that the word before ``end`` narrows
    ("day" in "the volta day pass"): a word of content, not a verb of the question nor a number."""
    following = re.match(r"[ \t]+([A-Za-z][\w'’-]*)", question[end:])
    if following is None:
        return False
    word = following.group(1).lower()
    return (
        word not in _STOPWORDS
        and word not in _QUESTION_VERBS
        and word not in _QUANTIFIERS
        and not _NUMBER_WORD.fullmatch(word)
        and not word.endswith(("ed", "ing", "ly"))
        and word not in _TYPED_MEASURES
    )


def _typed_name(word: str, text: str) -> bool:
    """Whether ``word``, typed in lower case, is a name that ``text`` writes with a capital past a
    sentence's start and never in lower case: "volta bikes" asks of the Volta scheme's bikes, not
    of a kind of bike."""
    found = list(re.finditer(rf"(?<![\w'’-]){re.escape(word)}(?![\w'’-])", text, re.IGNORECASE))
    # Past a sentence's start: after a word or a comma on the same line, not a line's or a cell's first.
    inside = [match for match in found if re.search(r"[\w,][ \t]+$", text[: match.start()])]
    return bool(inside) and all(match.group()[:1].isupper() for match in found)


def _adjacent_words(*texts: str) -> list[tuple[str, str]]:
    """The pairs of words that stand side by side in ``texts``, with only spaces between: a line
    break, a table's cell bar or a stop parts them ("wind sheets |" above "| Car and motorcycle
    tyres |" puts no "sheets" before "Car")."""
    return [
        pair
        for text in texts
        for run in re.split(r"[^\w\s'’-]+|\n|\s-+\s", text)
        for pair in pairwise(_WORD.findall(run))
    ]


# Two words before a noun, joined by "or", "and" or a slash: "lost or damaged fob".
_COORDINATED = re.compile(
    r"\b([A-Za-z][\w'’-]*)\s*(?:,?\s+or\s+|,?\s+and\s+|/)\s*([A-Za-z][\w'’-]*)\s+([A-Za-z][\w'’-]*)"
)
# Nouns that end as verbs do, which a word before them narrows as it does any noun ("car parking" is
# not "cycle parking", nor "evening opening" "morning opening").
_ING_NOUNS = frozenset(
    {"parking", "booking", "training", "clothing", "bedding", "flooring", "heating", "lighting", "seating",
     "housing", "catering", "opening", "building", "wedding", "meeting", "screening", "boarding", "packaging",
     "cleaning", "charging", "plumbing", "fencing", "decking", "landing", "crossing", "filling", "fitting",
     "coaching", "tutoring", "shipping", "washing", "ironing", "servicing", "testing"}
)  # fmt: skip


def other_kind(question: str, claim: str, context: str, heading: str = "") -> str | None:
    """The other kind of thing a claim speaks of, when the question narrows a noun by a word that the
    claim lacks, while the claim or its passage gives the noun another ("How much does a half plot
    cost?" is not answered by "A full plot costs 60 pounds a year", though the passage goes on
    "students pay half"; "How much does a day permit cost?" not by the price of the overnight permit
    the passage speaks of). Where the passage puts the asked word before the noun too, only the
    claim's own words can name another ("Each Intercity train has 8 bike spaces" for a regional
    train, beside "Regional trains take bikes subject to space"). Returned as "full plot
    (asked: half plot)"; None when the claim speaks of what was asked. Only for questions that ask
    for a number (a price, a count, a rate), whose answer differs from one kind to the next, or for
    a person ("Who was the first keeper?" is not answered by "The last keeper, Olof Brandt, ...") or a
    date ("when is the summer concert" not by the winter concert's); a
    name before the noun ("the Amazon forest") is left to the checks of names, and a possessive
    ("the team's coach") says whose, not which kind. A yes-or-no question's answer differs too
    ("can I take my electric bike" is not answered by what may be done with folding bikes)."""
    if (
        answer_type_of(question) not in ("number", "person", "date")
        and not is_polar_question(question)
        and not told_then_polar(question)
    ):
        return None
    # What the claim's heading names (a table row's header: "meals per day"), it speaks of.
    in_claim = set(content_terms(f"{claim} {heading}"))
    said = _adjacent_words(claim, context, heading)
    pairs = [(stem(before), stem(word)) for before, word in said]
    # "they didn't empty my blue bin" asks about a missed bin: a word the question says in other
    # words names no other kind.
    asked_otherwise = {word for phrase, words in _SAME_PHRASES if phrase.search(question) for word in words}
    for match in _narrowed_pairs(question):
        modifier, noun = match.group("modifier"), match.group("noun")
        if (
            modifier.lower() in _STOPWORDS
            or noun.lower() in _STOPWORDS | _QUESTION_VERBS
            or _counts_units(match)
            or _NUMBER_WORD.fullmatch(noun)
            or not modifier.islower()
            or (noun.lower().endswith(("ed", "ing")) and noun.lower() not in _ING_NOUNS)
            # "for printing PETG" says what for, not which kind.
            or (match.group().split()[0].lower() == "for" and modifier.lower().endswith("ing"))
            or len(modifier) < 3
            # "the little filter at the bottom" describes the filter, not a kind of it.
            or modifier.lower() in _DESCRIBING
            or _typed_name(modifier, f"{claim}\n{context}\n{heading}")
            # A noun that narrows the one after it, itself narrowed (three words and more).
            or _narrows_next(question, match.end("noun"))
            or _same_as(stem(modifier)) & in_claim
            # "Labour on all services is guaranteed for 30 days" speaks of every kind of service, as
            # "all services and repairs" of every kind of repair.
            or re.search(
                rf"\b(?:all|every|each|any)\s+(?:[\w'’-]+(?:,\s*|\s+(?:and|or|&)\s+))*{re.escape(stem(noun))}",
                claim,
                re.IGNORECASE,
            )
        ):
            continue
        # A short form is its full word ("bday cake" is a birthday cake).
        asked_forms = _same_as(stem(modifier)) | _same_as(stem(_base_form(modifier)))
        # A claim that names the asked kind itself speaks of it ("A written prescription ... costs
        # £18.50"), whatever its heading names beside.
        if any((same, stem(noun)) in _claim_pairs(claim) for same in asked_forms):
            continue
        words = said
        if any((same, stem(noun)) in pairs for same in asked_forms):
            # The passage speaks of the asked kind too: only the claim's own words can name another
            # ("Each Intercity train has 8 bike spaces" for a regional train, beside "Regional trains
            # take bikes subject to space").
            words = _adjacent_words(claim, heading)
        # "A lost or damaged fob" speaks of the lost fob asked about too: a word of the question
        # coordinated with the claim's word before the noun.
        asked_stems = {stem(word) for word in _WORD.findall(question) if word.lower() not in _STOPWORDS}
        coordinated = {
            stem(pair.group(2))
            for pair in _COORDINATED.finditer(claim)
            if stem(pair.group(1)) in asked_stems and stem(pair.group(3)) == stem(noun)
        } | {
            stem(pair.group(1))
            for pair in _COORDINATED.finditer(claim)
            if stem(pair.group(2)) in asked_stems and stem(pair.group(3)) == stem(noun)
        }
        for before, word in words:
            if (
                stem(word) == stem(noun)
                and stem(before) not in coordinated
                and before[:1].isalpha()
                and before.lower() not in _STOPWORDS
                and before.lower() not in _QUANTIFIERS
                and not _NUMBER_WORD.fullmatch(before)
                and stem(before) != stem(noun)
                and stem(before) not in asked_forms
                and stem(before) not in asked_otherwise
                and not MONTH.fullmatch(before)
                and not before.lower().endswith(("'s", "’s", "s'", "s’"))
            ):
                return f"{before.lower()} {word} (asked: {modifier.lower()} {noun})"
    return None


def _claim_pairs(claim: str) -> set[tuple[str, str]]:
    """The stems of each two adjacent words of the claim."""
    return {(stem(before), stem(word)) for before, word in _adjacent_words(claim)}


def _same_noun(word: str, noun: str) -> bool:
    """Whether ``word`` names ``noun``: the same stem, or one stem of four letters or more starting
    the other ("members" the "membership")."""
    said, asked = stem(word), stem(noun)
    return said == asked or (
        min(len(said), len(asked)) >= 4 and (said.startswith(asked) or asked.startswith(said))
    )


def other_noun(question: str, claim: str) -> str | None:
    """The other thing a claim names with the word the question narrows its noun by, when the
    claim never names that noun: "can I take my electric bike" is not answered by "Electric
    scooters are not allowed". Returned as "electric scooters (asked: electric bike)"; else None.
    Only for a yes-or-no question: asked for a price ("how much if I miss a private dentist appt"),
    "Private patients: ... charged at £30" gives the private dentist's charge."""
    if not is_polar_question(question):
        return None
    said = _WORD.findall(claim)
    for match in _NARROWED.finditer(question):
        modifier, noun = match.group("modifier"), match.group("noun")
        if (
            not modifier.islower()
            or len(modifier) < 3
            or modifier.lower() in _STOPWORDS | _DESCRIBING
            or noun.lower() in _STOPWORDS | _QUESTION_VERBS
            or _NUMBER_WORD.fullmatch(noun)
            or any(_same_noun(word, noun) for word in said)
            or _counts_units(match)
        ):
            continue
        # The word right after it, with nothing but spaces between ("taxi - D4 form" and a table's
        # "| Cottons | Cold |" put none after it).
        for pair in re.finditer(r"\b([A-Za-z][\w'’-]*)[ \t]+([A-Za-z]{3,})\b", claim):
            before, word = pair.groups()
            if (
                stem(before) == stem(modifier)
                and word.lower() not in _STOPWORDS
                and not _same_noun(word, noun)
            ):
                return f"{before.lower()} {word} (asked: {modifier.lower()} {noun})"
    return None


_DAY_NAMES = ("mon", "tues", "wednes", "thurs", "fri", "satur", "sun")
_DAY_WORD = r"(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)(?:days?|\.?)|Tue|Wed|Thu|Sat"
# "Monday – Friday", "Mon to Fri": every day from the first to the last.
_DAY_RANGE = re.compile(
    rf"\b(?P<first>{_DAY_WORD})\s*(?:-|–|—|to|until|till|through)\s*(?P<last>{_DAY_WORD})\b", re.IGNORECASE
)
_DAYS_OF = re.compile(
    r"\b(?:(?P<weekend>weekends?)|(?P<weekday>weekdays?)|(?P<every>daily|every\s+day|seven\s+days(?:\s+a\s+week)?))\b",
    re.IGNORECASE,
)


def _day_index(word: str) -> int:
    word = word.lower()
    return next(index for index, name in enumerate(_DAY_NAMES) if word.startswith(name[:3]))


def _days_named(text: str) -> set[int]:
    """The days of the week ``text`` speaks of (0 = Monday): by name, by a range of names
    ("Monday – Friday"), as weekdays, weekends or every day."""
    days: set[int] = set()
    for match in _DAY_RANGE.finditer(text):
        first, last = _day_index(match.group("first")), _day_index(match.group("last"))
        days |= {day % 7 for day in range(first, first + 7) if (day - first) % 7 <= (last - first) % 7}
    days |= {_day_index(match.group()) for match in WEEKDAY.finditer(text)}
    for match in _DAYS_OF.finditer(text):
        days |= (
            {5, 6} if match.group("weekend") else set(range(5)) if match.group("weekday") else set(range(7))
        )
    return days


def spanned_days(question: str, text: str) -> set[str]:
    """The stems of the days the question names that ``text`` speaks of in other words: a range
    ("Monday to Friday" holds a Tuesday), weekdays, weekends or every day."""
    # "the Easter weekend" is one weekend, not every one: a day is spanned by a range, by plural
    # weekends or weekdays, or by every day.
    general = re.sub(r"\b(?:the|a|an|this|that|next|last|[A-Z][a-z]+)\s+week(?:end|day)\b", " ", text)
    own = _days_named(general) - {_day_index(match.group()) for match in WEEKDAY.finditer(general)}
    for match in _DAY_RANGE.finditer(general):
        first, last = _day_index(match.group("first")), _day_index(match.group("last"))
        own |= {day % 7 for day in range(first, first + 7) if (day - first) % 7 <= (last - first) % 7}
    if not own:
        return set()
    return {stem(word) for word in _WORD.findall(question) if (named := _days_named(word)) and named <= own}


# "are trainers ok as school shoes": whether a thing is allowed, asked in words of its own.
_PERMISSION_ASKED = re.compile(r"\b(?:ok|okay|alright|fine|acceptable|allowed|permitted)\b", re.IGNORECASE)
_PERMISSION_SAID = re.compile(
    r"\b(?:allowed|permitted|prohibited|forbidden|banned|welcome|accepted|may|must|cannot|can['’]?t|"
    r"not\s+(?:allowed|permitted|accepted))\b",
    re.IGNORECASE,
)


def permission_terms(question: str, text: str) -> set[str]:
    """The stems of the words by which a yes-or-no question asks whether a thing is allowed ("are
    trainers ok as school shoes") where ``text`` allows or forbids ("Trainers are not allowed, except
    for PE"): the text answers in its own words."""
    if not asks_yes_or_no(question) or not _PERMISSION_SAID.search(text):
        return set()
    return {stem(match.group().lower()) for match in _PERMISSION_ASKED.finditer(question)}


def limited_kinds(question: str, text: str) -> set[str]:
    """The stems of the words by which a yes-or-no question narrows a noun ("can i pay with debit
    card for a family car") where ``text`` limits that noun to other kinds ("Debit cards are accepted
    for Economy and Compact cars only"): the limit answers it, no, as `limited_days` does for days."""
    if not asks_yes_or_no(question) or not re.search(r"\bonly\b", text, re.IGNORECASE):
        return set()
    said = {stem(word) for word in _WORD.findall(text)}
    limited = set()
    for match in _NARROWED.finditer(question):
        modifier, noun = stem(match.group("modifier")), stem(match.group("noun"))
        if noun in said and modifier not in said and other_kind(question, text, text) is not None:
            limited.add(modifier)
    return limited


def limited_days(question: str, text: str) -> set[str]:
    """The stems of the days a yes-or-no question asks about ("can i book a kids party for a friday
    afternoon") where ``text`` limits the thing to other days ("Parties are held on Saturdays and
    Sundays only"): the limit answers it, no, as the hours a text gives answer an hour asked."""
    if not asks_yes_or_no(question) or not re.search(r"\bonly\b", text, re.IGNORECASE):
        return set()
    asked, own = _days_named(question), _days_named(text)
    if not asked or not own or asked & own:
        return set()
    return {stem(word) for word in _WORD.findall(question) if _days_named(word)}


def other_day(question: str, claim: str, before: str = "", heading: str = "") -> str | None:
    """The other day of the week a claim speaks of, when the question asks about a day ("the last
    sailing back on a Saturday") that neither the claim nor its heading names, and the claim, or the
    sentences of its paragraph before it, name others ("The return sailing from Inchkerran leaves at
    19:20." after "On Fridays the 18:05 from Ardmore departs at 18:35 instead."), or a date, one day
    of the year. Returned as "Friday (asked: Saturday)"; None when the claim speaks of the day asked,
    or of no day at all. A question about a holiday ("on bank holiday Monday", "on Christmas Eve")
    is answered only by a claim that speaks of holidays: the times of an ordinary Monday are not
    those of a bank holiday."""
    holiday = _HOLIDAY_ASKED.search(question)
    if holiday and not _HOLIDAY_SAID.search(f"{claim} {heading}"):
        return f"days that are not holidays (asked: {holiday.group().lower()})"
    if limited_days(question, f"{claim} {heading}"):
        return None  # "Saturdays and Sundays only" answers whether on a Friday
    asked = _days_named(question)
    if not asked:
        return None
    own = _days_named(f"{claim} {heading}")
    if own & asked:
        return None

    def names(days: set[int]) -> str:
        return ", ".join(f"{_DAY_NAMES[day]}day".capitalize() for day in sorted(days))

    said = own or _days_named(before)
    if said:
        return f"{names(said)} (asked: {names(asked)})"
    # A date ("On Christmas Eve and Hogmanay (31 December) the last sailing is ...") is one day of
    # the year, not every Saturday; two dates, or one that bounds a period ("until 30 September"),
    # say when a season runs, Saturdays included.
    dates = list(DAY_OF_MONTH.finditer(claim))
    if (
        len(dates) == 1
        and DAY_OF_MONTH.search(question) is None
        and not _PERIOD_BOUND.search(claim, 0, dates[0].start())
    ):
        return f"{dates[0].group()} (asked: {names(asked)})"
    return None


_EVERY_TIME = re.compile(
    r"\b(?:at all times|any\s?time|24/7|24 hours a day|all week|(?:seven|7) days a week)\b", re.IGNORECASE
)


# A date as a question is typed: "friday 28th november".
_TYPED_DATE = re.compile(DAY_OF_MONTH.pattern, re.IGNORECASE)


def unnamed_day(question: str, claim: str, heading: str = "") -> str | None:
    """The day a yes-or-no question asks about ("can I collect my cat on a Sunday?") when the claim
    names no day and no date the question gives: "Cats can only be collected during the times below"
    says nothing of Sundays, though the table after it does. A claim that holds at all times answers
    for every day. Returned as "no day (asked: Sunday)"; None otherwise."""
    asked = _days_named(question)
    if not asked or _days_named(f"{claim} {heading}") or _EVERY_TIME.search(claim):
        return None
    if _TYPED_DATE.search(question) and DAY_OF_MONTH.search(claim):
        return None  # "Friday 28th November" asked, "28 November: INSET day" said
    days = ", ".join(f"{_DAY_NAMES[day]}day".capitalize() for day in sorted(asked))
    return f"no day (asked: {days})"


# Words of which a thing has one, so that a claim naming another answers for another thing: "solid
# green" is not "solid blue", a Gold service not a Silver one.
_VARIANTS: tuple[frozenset[str], ...] = (
    frozenset({"red", "orange", "amber", "yellow", "green", "blue", "purple", "violet", "pink", "white",
               "black", "grey", "gray", "brown", "turquoise", "magenta", "cyan"}),
    frozenset({"bronze", "silver", "gold", "platinum"}),
    # "an annual membership" is not a monthly one.
    frozenset({"daily", "weekly", "fortnightly", "monthly", "quarterly", "annual"}),
    # "junior off peak" is not the peak price ("off-peak" read as one word, `_OFF_PEAK`).
    frozenset({"peak", "offpeak"}),
)  # fmt: skip

# Names of one colour: a flashing orange light is the guide's amber one; of one period.
_SAME_VARIANT = {
    "amber": "orange",
    "gray": "grey",
    "violet": "purple",
    "yearly": "annual",
    "annually": "annual",
}


# A noun and the number that picks one of its kind: "stage 6", "yr 4", "zone 2"; and a run of them,
# "Stages 5–7".
_NUMBERED = re.compile(
    r"\b(?P<noun>[A-Za-z]{2,})\s+(?P<low>\d{1,3})(?:\s*(?:–|—|-|to|&|and)\s*(?P<high>\d{1,3}))?(?![.,:]?\d|\s*(?:%|°))\b",
    re.IGNORECASE,
)
# Words before a number that bound or count it rather than name one of a kind.
_NOT_NUMBERING = frozenset(
    {"aged", "age", "ages", "under", "over", "than", "from", "to", "and", "or", "by", "for", "of", "in", "on",
     "at", "is", "are", "was", "were", "be", "about", "around", "up", "only", "least", "most", "maximum",
     "minimum", "max", "min", "costs", "cost", "pay", "just", "every", "each", "per", "the", "a", "an",
     "with", "within", "after", "before", "until", "till", "since", "between", "im", "am", "me", "my",
     "it", "its", "his", "her", "he", "she", "they", "we", "you", "i", "x", "times", "out", "top"}
)  # fmt: skip


def _numbered(text: str) -> Iterator[tuple[str, int, int, str]]:
    """The numbered nouns of ``text``: (stem of the noun, first number, last number, as written)."""
    for match in _NUMBERED.finditer(text):
        noun = match.group("noun")
        if noun.lower() in _NOT_NUMBERING or MONTH.fullmatch(noun) or WEEKDAY.fullmatch(noun):
            continue
        low = int(match.group("low"))
        high = int(match.group("high") or low)
        yield stem(_base_form(noun)), low, high, match.group()


def other_numbered(question: str, claim: str, heading: str = "", title: str = "") -> str | None:
    """The other one of a numbered kind a claim speaks of, when the question picks one by its number
    ("how much are swimming lessons for stage 6") and the claim gives that noun only with other
    numbers ("| Stages 1–2 | 6 | £29.50 |": its "6" is a count of pupils). Returned as "Stages 1–2
    (asked: stage 6)"; None when the claim names the asked one, or a run that holds it, or never
    numbers the noun. A claim that never numbers the noun speaks of the one its heading or its
    document's title numbers: "At 3% the band saves your data" in the FAQ titled "PulseBand 4 and
    PulseBand 4 Pro" does not answer what the old PulseBand 3 does."""
    for noun, number, _, asked in _numbered(question):
        for text in (claim, f"{heading}\n{title}"):
            said = [(low, high, written) for other, low, high, written in _numbered(text) if other == noun]
            if said and not any(low <= number <= high for low, high, _ in said):
                return f"{said[0][2]} (asked: {asked})"
            if said:
                break
    # A kind picked by its letter: "how much council tax for a band c house" is not answered by a
    # charge "at Band D".
    for match in _LETTERED.finditer(question):
        noun, letter = stem(match.group("noun")), match.group("letter").lower()
        said_letters = [
            (other.group("letter").lower(), other.group())
            for other in _LETTERED.finditer(claim)
            if stem(other.group("noun")) == noun
        ]
        if said_letters and letter not in {said for said, _ in said_letters}:
            return f"{said_letters[0][1]} (asked: {match.group()})"
    return None


# A kind named by a letter: "Band C", "class a", "Type B" (a lower-case "a" only where no word
# follows it, as it is also the article).
_LETTERED = re.compile(
    r"\b(?P<noun>(?i:bands?|class(?:es)?|grades?|tiers?|zones?|categor(?:y|ies)|types?))\s+"
    r"(?P<letter>[B-Hb-h]|A|a(?=\s*(?:[?,.;:!)]|$)))\b(?![’'-])",
)


# "How much is school dinner for my son", "how warm is the jacuzzi": the thing a measure is asked
# of, up to the word that says for whom, where or when.
_MEASURED_THING = re.compile(
    r"\b(?P<how>how(?:s|['’]s)?\s+(?:much|warm|hot|cold|deep|big|wide|tall|high|heavy|far|old|long))\s+"
    r"(?:(?P<is>is|are|r)|does|do|will|would|wd)\s+(?:(?:a|an|the|my|our|your|his|her|their)\s+)?"
    r"(?P<thing>(?:[A-Za-z][\w'’-]*\s+){0,3}?[A-Za-z][\w'’-]*)"
    r"(?=\s+(?:cost|costs)\b|(?(is)(?:\s+(?:for|at|in|on|per|with|if|when|from|to|each|a|an)\b|\s*[?,.!]|\s*$)|$^))",
    re.IGNORECASE,
)


# "how much does the vet charge to spay a rabbit", "how much to collect my bike": the deed priced.
_PRICED_DEED = re.compile(
    r"\bhow much\s+(?:(?:does|do|will|would|wd)\s+(?:[A-Za-z][\w'’-]*\s+){1,3}?(?:charge|cost|want)\s+)?"
    r"to\s+(?P<thing>[a-z]{3,})\b",
    re.IGNORECASE,
)


# What the priced deed is done to: "how much to fit a child seat on my bike" prices fitting a child
# seat, which "Fit a new chain" does not; the object runs up to a word that leads on to where, when
# or for whom, or to the end of the clause.
_DEED_OBJECT = re.compile(
    r"(?P<object>(?:[\w'’-]+\s+){0,4}?[A-Za-z][\w'’-]*)"
    r"(?=\s+(?:on|at|for|in|into|onto|from|with|to|by|per|if|when|before|after|off|up|out|over|while|so|"
    r"and|or|but|pls|please)\b|\s*[?,.!;]|\s*$)",
    re.IGNORECASE,
)
# Words of an object that say which or whose, not what: "a", "my", "the old", "4".
_OBJECT_LEAD = frozenset({"a", "an", "the", "my", "our", "your", "his", "her", "their", "this", "that", "these",
                          "those", "some", "any", "new", "old", "another", "extra", "each", "every"})  # fmt: skip
_TIME_SPANS = re.compile(rf"(?:{_UNIT_WORDS}|nights?|all|whole|full|half)", re.IGNORECASE)


def priced_object(question: str) -> tuple[str, str] | None:
    """What a priced deed is done to, as (the stem of its last word, the question's words up to
    it): "how much to fit a child seat on my bike" gives ("seat", "how much to fit a child seat");
    None when the deed names no object ("how much to park all day", "how much to put it up")."""
    deed = _PRICED_DEED.search(question)
    if deed is None:
        return None
    rest = question[deed.end() :]
    # "get rid of 4 old tyres": the tyres are what is priced.
    rid = re.match(r"\s+rid\s+of\b", rest, re.IGNORECASE)
    offset = deed.end() + (rid.end() if rid else 0)
    match = _DEED_OBJECT.match(question[offset:].lstrip())
    if match is None:
        return None
    words = [
        word
        for word in match.group("object").split()
        if word.lower() not in _OBJECT_LEAD and not _NUMBER.search(word) and not _NUMBER_WORD.fullmatch(word)
    ]
    # "get 5 items collected": the items, not their collecting.
    if len(words) > 1 and words[-1].lower().endswith("ed"):
        words.pop()
    if not words:
        return None
    head = words[-1].lower()
    if head in _STOPWORDS or _TIME_SPANS.fullmatch(head) or stem(head) in MEASURE_TERMS:
        return None
    start = offset + (len(question[offset:]) - len(question[offset:].lstrip()))
    return stem(_base_form(head)), " ".join(question[deed.start() : start + match.end()].lower().split())


# Deeds that only pay for a thing: "how much to hire the weaver room" asks the room's price, which a
# table of room rates gives without the word "hire".
_PAYING_DEEDS = frozenset({"hire", "rent", "book", "buy", "use", "get", "reserve", "join"})


# "how much notice do ...", "how much deposit is ...": the amount of a thing named right after.
_HOW_MUCH_OF = re.compile(
    r"\bhow\s+much\s+(?P<thing>[A-Za-z][\w'’-]*)\s+(?:do|does|did|is|are|r|will|would|wd|can|should|must|shall|has|have)\b",
    re.IGNORECASE,
)
# Amounts that name no thing of the passage: "how much time do i have", "how much more is it".
_UNNAMED_AMOUNTS = frozenset(
    {"time", "money", "more", "less", "extra", "longer", "roughly", "exactly", "approx"}
)


def measured_thing(question: str) -> tuple[str, str] | None:
    """The thing a "how much is ..." or "how warm is ..." question asks a measure of, as (the stem of
    its last word, the question's words up to it): "how much is school dinner for my yr 4 son" gives
    ("dinn", "how much is school dinner"); None when it asks of no named thing ("how much does it
    cost", "how long is it"). Of a deed priced, its verb: "how much does Harbourside charge to spay
    a rabbit" gives ("spay", "how much does harbourside charge to spay")."""
    match = _MEASURED_THING.search(question)
    named = _HOW_MUCH_OF.search(question)
    if match is None and named is not None:
        # "how much notice do u need to book a party" asks an amount of notice.
        thing = named.group("thing").lower()
        if thing not in _STOPWORDS | _UNNAMED_AMOUNTS and stem(thing) not in MEASURE_TERMS:
            return stem(_base_form(thing)), " ".join(
                question[named.start() : named.end("thing")].lower().split()
            )
    if match is None:
        deed = _PRICED_DEED.search(question)
        if deed is None or deed.group("thing").lower() in _STOPWORDS | _PAYING_DEEDS:
            return None
        return stem(deed.group("thing")), " ".join(question[deed.start() : deed.end()].lower().split())
    head = match.group("thing").split()[-1].lower()
    if head in _STOPWORDS or _NUMBER_WORD.fullmatch(head) or stem(head) in MEASURE_TERMS:
        return None
    return stem(_base_form(head)), " ".join(question[match.start() : match.end()].lower().split())


def _variant_words(text: str) -> set[str]:
    """The words of ``text`` as `_VARIANTS` reads them: one name per colour or period, "off peak" one word."""
    return {
        _SAME_VARIANT.get(word.lower(), word.lower())
        for word in _WORD.findall(_OFF_PEAK.sub("offpeak", text))
    }


def other_variant_row(question: str, claim: str, columns: str, context: str) -> str | None:
    """The row a quoted table row is, when the question asks for a variant (a tier, a period, off
    peak) that neither the row nor its columns name while another row of its passage does ("how
    much is junior off peak" is not answered by "| Monthly unlimited climbing | £49.00 | £32.00 |"
    beside "| Off-peak session | £9.00 | £6.50 |"). Returned as "monthly unlimited climbing (asked:
    offpeak)"; None otherwise."""
    if not claim.strip().startswith("|"):
        return None
    asked_words, said_words = _variant_words(question), _variant_words(f"{claim} {columns}")
    rows = [line for line in context.splitlines() if line.strip().startswith("|")]
    for variants in _VARIANTS:
        asked = asked_words & variants
        if not asked or said_words & variants:
            continue
        if any(_variant_words(line) & asked for line in rows):
            cells = [cell.strip() for cell in claim.strip().strip("|").split("|")]
            key = next((cell for cell in cells if re.search(r"\w", cell)), claim.strip())
            return f"{key.lower()} (asked: {', '.join(sorted(asked))})"
    return None


def other_variant(question: str, claim: str, heading: str = "") -> str | None:
    """The other colour (or tier: bronze, silver, gold; or period: monthly, annual) a claim speaks of,
    when the question names one that neither the claim nor its heading names ("What does a solid
    green light mean?" is not answered by "Solid blue: WPS pairing successful"). Returned as "blue
    (asked: green)"; None otherwise."""
    asked_words, said_words = _variant_words(question), _variant_words(f"{claim} {heading}")
    for variants in _VARIANTS:
        asked = asked_words & variants
        said = said_words & variants
        if asked and said and not asked & said:
            return f"{', '.join(sorted(said))} (asked: {', '.join(sorted(asked))})"
    return None


# Holidays a question may ask about, and what a claim says of holidays (any of those, or "holidays").
_HOLIDAY_ASKED = re.compile(
    r"\b(?:(?:bank|public|national)\s+holidays?|(?:christmas|xmas)(?:\s+(?:eve|day))?|boxing\s+day|easter(?:\s+\w+day)?|"
    r"good\s+friday|new\s+year['’]?s?(?:\s+(?:eve|day))?|thanksgiving|hogmanay)\b",
    re.IGNORECASE,
)
_HOLIDAY_SAID = re.compile(_HOLIDAY_ASKED.pattern + r"|\bholidays?\b", re.IGNORECASE)
# Words before a date that make it the start or end of a period, not a day of its own.
_PERIOD_BOUND = re.compile(
    r"\b(?:until|till|to|from|since|after|before|by|between|through)\s+(?:the\s+)?$", re.IGNORECASE
)


# "what colour is ...", "which colour bin": the answer names a colour.
_COLOUR_QUESTION = re.compile(r"\b(?:what|which|wat|wot)\s+colou?rs?\b", re.IGNORECASE)
_COLOUR = re.compile(
    r"\b(?:red|orange|amber|yellow|green|blue|purple|violet|pink|white|black|grey|gray|brown|turquoise|"
    r"magenta|cyan|navy|maroon|burgundy|beige|cream|khaki|teal|silver|gold|lilac|indigo|scarlet|"
    r"crimson|emerald|bottle\s+green|sky\s+blue|royal\s+blue)\b",
    re.IGNORECASE,
)


def unnamed_kind(question: str, text: str) -> str | None:
    """The kind a "which <kind>" question asks for, when ``text`` names nothing the question does not:
    no name (a capitalised word past a sentence's start), no figure, no term of code or quoted name.
    "Which database does Harbor use?" is not answered by "the migration of a state database takes
    four minutes", which speaks of a database without saying which; nor "What model is the laptop?"
    by "Every new employee receives a laptop" (a model, brand, make, version, edition or name is
    told by its name). A "what colour" question asks for a colour the question does not name. None
    when the text names something, or the question is of another form."""
    if _COLOUR_QUESTION.search(question):
        # "wat colour is the school jumper" is answered by a colour, not by "more than 200 unnamed
        # jumpers ended up in lost property".
        asked = {word.lower() for word in _WORD.findall(question)}
        said = {match.group().lower() for match in _COLOUR.finditer(text)}
        return None if said - asked else "colour"
    which = _WHICH_QUESTION.search(question)
    if which is None:
        return None
    asked_kind = which.group("kind") or which.group("named") or which.group("name_of")
    # "name" is a function word elsewhere; after "what" it is the kind asked for.
    if (which.group("kind") and asked_kind.lower() in _STOPWORDS) or answer_type_of(question) != "any":
        return None
    asked = {stem(word) for word in _WORD.findall(question)}
    asked_figures = set(re.findall(r"\d+(?:[.,]\d+)*", question))
    # A time of day names no thing, nor does a count of things of the kind ("3,200 customers" for
    # "Which customer ..."), though a figure after "number" does ("the number 14 bus"); a word
    # after a time stamp opens its sentence ("09:12 The first ...").
    kind = stem(asked_kind)
    text = re.sub(r"(?m)^\s*" + _CLOCK_TIME.pattern + r"\s*", "", text)
    text = _CLOCK_TIME.sub(" ", text)
    text = re.sub(
        r"\b\d+(?:[.,]\d+)*(?=\s+([A-Za-z][\w'’-]*))",
        lambda match: (
            " "
            if stem(match.group(1)) == kind and not _NAMING_FIGURE.search(text[: match.start()])
            else match.group()
        ),
        text,
    )
    if any(stem(match.group()) not in asked for match in _NAME.finditer(text)):
        return None
    if set(re.findall(r"\d+(?:[.,]\d+)*", text)) - asked_figures:
        return None
    if any(match.group().strip('`"“”') not in question for match in _CODE_OR_QUOTED.finditer(text)):
        return None
    return asked_kind


# "Who was the first keeper of ...?": the role a person question asks the holder of, the last of up
# to four lowercase words after the article, before a preposition, a clause or the question mark.
_ROLE_QUESTION = re.compile(
    r"^\s*(?i:who)\s+(?:(?P<verb>is|was|are|were|will\s+be|has\s+been|had\s+been)\s+(?:the|a|an)|"
    r"(?P<became>became|becomes|has\s+become|was\s+elected|was\s+appointed|was\s+named)(?:\s+(?:the|a|an))?)\s+"
    r"(?P<phrase>[a-z][\w'’-]*(?:\s+[a-z][\w'’-]*){0,3}?)\s*"
    r"(?=\b(?:of|at|in|for|on|to|from|behind|during|with|that|who|whose|when)\b|\?|$)"
)


def absent_role(question: str, claim: str, heading: str = "") -> str | None:
    """The role a "who is the <role> ..." question asks the holder of, when neither the claim nor its
    heading names it: "Who was the first keeper of the lighthouse?" is not answered by "The light
    was designed by the engineer Ingrid Falk", a person in another role. None when the claim names
    the role (in any form: "keepers"), or the question is of another form."""
    match = _ROLE_QUESTION.match(question)
    if match is None:
        return None
    role = match.group("phrase").split()[-1].lower()
    if role in _STOPWORDS:
        return None
    # "Who became chair?", "who is the chair?": the one who holds it now, not the outgoing one
    # ("Chair: Priya Venkataraman (outgoing Chair)").
    current = match.group("became") is not None or (match.group("verb") or "").lower() in ("is", "are")
    former = rf"\b(?:outgoing|former|previous|retiring|retired|past|ex-)\s*{re.escape(role)}"
    if current and re.search(former, claim, re.IGNORECASE) and not re.search(former, question, re.IGNORECASE):
        return f"{role} but a former one"
    if stem(role) in set(content_terms(f"{claim} {heading}")):
        return None
    # A role named by its deed: "A Norman named Oursel led a force" says who the leader was.
    deed = re.sub(r"(?:er|or)$", "", role) if len(role) > 5 else ""
    said = [token.lower() for token in _WORD.findall(claim)]
    if deed and any(_ASKED_FORM.get(token) == deed or _mentions_verb(token, deed) for token in said):
        return None
    return role


# Irregular past forms and nouns of a few verbs, to the word a question asks with ("When did they
# win?" is answered by "they won"; "When did Tesla die?" by "his death").
_ASKED_FORM: dict[str, str] = {
    "won": "win", "began": "begin", "begun": "begin", "built": "build", "became": "become",
    "left": "leave", "took": "take", "taken": "take", "bought": "buy", "sold": "sell",
    "held": "hold", "met": "meet", "fell": "fall", "fallen": "fall", "lost": "lose", "made": "make",
    "gave": "give", "given": "give", "wrote": "write", "written": "write", "came": "come",
    "went": "go", "gone": "go", "got": "get", "ran": "run", "saw": "see", "seen": "see",
    "told": "tell", "said": "say", "brought": "bring", "sent": "send", "spent": "spend",
    "kept": "keep", "grew": "grow", "grown": "grow", "knew": "know", "known": "know",
    "flew": "fly", "flown": "fly", "broke": "break", "broken": "break", "chose": "choose",
    "chosen": "choose", "drove": "drive", "driven": "drive", "rose": "rise", "risen": "rise",
    "spoke": "speak", "spoken": "speak", "threw": "throw", "thrown": "throw", "drew": "draw",
    "drawn": "draw", "shot": "shoot", "led": "lead", "sank": "sink", "sunk": "sink",
    "struck": "strike", "taught": "teach", "caught": "catch", "fought": "fight", "stood": "stand",
    "paid": "pay", "laid": "lay", "fled": "flee", "froze": "freeze", "frozen": "freeze",
    "rode": "ride", "ridden": "ride", "wore": "wear", "worn": "wear", "sang": "sing", "sung": "sing",
    "death": "die", "dead": "die", "birth": "born", "marriage": "marry", "arrival": "arrive",
    "departure": "depart", "founding": "found", "foundation": "found",
}  # fmt: skip
# Words a date question asks with ("In what year ...", "at what time ...") rather than about.
_DATE_WORDS = frozenset(
    {
        "year",
        "years",
        "date",
        "dates",
        "day",
        "days",
        "month",
        "months",
        "century",
        "decade",
        "era",
        "period",
        "time",
    }
)


# Deeds and ends of a span that answer each other's question wrongly: the time one arrives is not
# the time one must leave, a closing time is no opening time. Each side is a pattern over words;
# "end" alone is left out ("until the end of September" answers when a season starts too).
_OPPOSITE_EVENTS: tuple[tuple[str, str], ...] = (
    (r"arriv\w*|check-?ins?|checking in", r"leav\w*|left|depart\w*|vacat\w*|check-?outs?|checking out"),
    (r"open|opens|opened|opening|reopen\w*", r"clos(?:e|es|ed|ing)|shut\w*"),
    (r"start\w*|begin\w*|began|begun|commenc\w*", r"ends|ended|ending|finish\w*"),
    (r"earliest", r"latest"),
    (r"minimum|min|fewest|lowest", r"maximum|max|highest"),
    (r"entr(?:y|ies|ance|ances)|enter\w*", r"exit\w*"),
)


# The pairs whose two ends one span of hours gives: its opening and closing, its start and end.
_SPAN_ENDS = frozenset(first for first, _ in _OPPOSITE_EVENTS[1:3])


_POLAR_QUESTION = re.compile(
    # "r u open on sundays", "r the cakes halal": "are" as it is typed on a phone.
    r"^\s*(?:do|does|did|is|are|r|was|were|can|could|may|must|should|will|would|has|have|had)\b",
    re.IGNORECASE,
)


# A question typed as what the asker tells, then the yes-or-no question, with no stop between: "my
# boiler is a 12 yr old oil boiler can i still get cover", "my son is turning 11 can he have the
# party". Not where a question word follows ("my mum is 78 how often does she need ...").
_TOLD_THEN_POLAR = re.compile(
    r"^\s*(?:my|our|i|im|i['’]m|ive|i['’]ve|we|we['’]re|weve|we['’]ve)\s"
    r"(?!.*\b(?:what|whats|what['’]s|how|hows|when|where|which|who|whos|why)\b)"
    r".*?\b(?:can|could|do|does|is|are|will|should|would|may|must)\s+(?:i|we|he|she|they|you|u|it|me)\b",
    re.IGNORECASE,
)


def is_polar_question(question: str) -> bool:
    """Whether ``question`` asks for a yes or a no ("Do I need ...?", "Can cars cross ...?")."""
    return bool(_POLAR_QUESTION.search(question))


def told_then_polar(question: str) -> bool:
    """Whether ``question`` tells something, then asks for a yes or a no with no stop between ("my
    boiler is a 12 yr old oil boiler can i still get cover"). Only the kind asked of reads it so
    (`other_kind`): as a yes-or-no question throughout, "my nan has the old persons bus pass can she
    use it free at 9" would need every word of what is told in the passage ("older person's")."""
    return _TOLD_THEN_POLAR.search(question) is not None


def opposite_event(question: str, text: str) -> tuple[str, str] | None:
    """The (asked, said) words where ``text`` speaks of the opposite of a deed the question asks
    about and never of the deed itself: "By what time do I have to leave?" is not answered by "If you
    expect to arrive after 22:30, phone reception ...", nor "When does the kitchen close?" by "The
    kitchen opens at 07:00". None for a yes-or-no question, which the opposite answers ("Is the
    clinic open on Sundays?" → "It is closed on Sundays.")."""
    if is_polar_question(question):
        return None
    # Hours given from one time to another ("| Thursday | 08:30 - 20:00 | Late-night opening |") say
    # when a span opens and when it closes, when it starts and when it ends.
    spans = _HOURS_GIVEN.search(text) is not None
    for first, second in _OPPOSITE_EVENTS:
        if spans and first in _SPAN_ENDS:
            continue
        for asked, other in ((first, second), (second, first)):
            in_question = re.search(rf"\b(?:{asked})\b", question, re.IGNORECASE)
            if in_question is None or re.search(rf"\b(?:{other})\b", question, re.IGNORECASE):
                continue
            said = re.search(rf"\b(?:{other})\b", text, re.IGNORECASE)
            if said is not None and re.search(rf"\b(?:{asked})\b", text, re.IGNORECASE) is None:
                return in_question.group().lower(), said.group().lower()
    return None


def opposite_said(question: str, text: str) -> set[str]:
    """The stems of a yes-or-no question's deed that ``text`` answers by saying its opposite: "Is the
    nursery open between Christmas and New Year?" is answered by "We close from Christmas Eve to New
    Year's Day", "Is the salon open on Mondays?" by "| Monday | Closed |"."""
    if not is_polar_question(question):
        return set()
    said: set[str] = set()
    for first, second in _OPPOSITE_EVENTS:
        for asked, other in ((first, second), (second, first)):
            in_question = re.search(rf"\b(?:{asked})\b", question, re.IGNORECASE)
            if in_question is not None and re.search(rf"\b(?:{other})\b", text, re.IGNORECASE):
                said.add(stem(in_question.group()))
    return said


_RANGE = re.compile(r"(?<![\d.,])(\d+(?:\.\d+)?)\s*(?:–|—|-|to)\s*(\d+(?:\.\d+)?)(?![\d.,])")


# A number and what it counts: "5 days", "£5", "5 or more rooms", "3-4 working days", "13yr".
_COUNTED = re.compile(
    r"(?P<money>[£$€]\s*)?(?<![\w.,])(?P<number>\d+(?:[.,]\d+)*)(?![.,]?\d)"
    r"(?:\s*(?:-|–|to|or|and)\s*(?:\d+(?:[.,]\d+)*|more|fewer|less|over|under|above|below|older|younger)\b)?"
    r"(?:\s*-?\s*(?P<noun>[A-Za-z][A-Za-z'’]*)(?:\s+(?P<next>[A-Za-z][A-Za-z'’]*))?)?"
)
# Words between a number and what it counts: "5 working days", "2 more nights".
_COUNT_WORDS = frozenset(
    {"working", "business", "calendar", "clear", "full", "whole", "more", "extra", "further", "consecutive"}
)
# What a number of a measure counts: units of time, weight and length, nights, and money.
_UNIT_STEMS = frozenset({stem(unit) for unit in _UNIT_SIZES} | {"night", "money", "percent"})


def _counted(text: str) -> Iterator[tuple[str, str | None]]:
    """Each number of ``text`` (as its term) with the stem of what it counts ("money" after a
    currency sign, "percent" before "%"), or None where no noun follows it."""
    for match in _COUNTED.finditer(text):
        number = stem(match.group("number"))
        if match.group("money"):
            yield number, "money"
            continue
        if text.startswith("%", match.end("number")):
            yield number, "percent"
            continue
        noun = match.group("noun")
        if noun and noun.lower() in _COUNT_WORDS:
            noun = match.group("next")
        if noun is None or noun.lower() in _STOPWORDS or noun.lower() in _ORDINAL_ENDINGS:
            yield number, None
        else:
            yield number, stem(_base_form(noun, match.group("number")))


def other_unit_numbers(question: str, text: str) -> set[str]:
    """The numbers the question gives of a measure ("5 days") that ``text`` gives only of another
    thing ("Group bookings of 5 or more rooms", "£5"): the same figure, not the same amount. A
    number of ``text`` with nothing after it ("up to 5") may be of the asked measure, unless the text
    gives the asked size of other numbers only: "a 12 inch cake" is none of "| 6 inch round cake |
    8-10 | £38 |" and "| Cupcakes, per dozen | 12 | £30 |"."""
    counted = list(_counted(question))
    asked = {number: unit for number, unit in counted if unit in _UNIT_STEMS}
    sized = {number: unit for number, unit in counted if unit is not None and unit not in _UNIT_STEMS}
    said: dict[str, set[str | None]] = {}
    for number, unit in _counted(text):
        said.setdefault(number, set()).add(unit)
    return {
        number
        for number, unit in asked.items()
        if number in said and None not in said[number] and unit not in said[number]
    } | {
        number
        for number, unit in sized.items()
        if number in said
        and unit not in said[number]
        and any(unit in units for other, units in said.items() if other != number)
    }


def within_a_range(number: str, text: str) -> bool:
    """Whether ``text`` gives a range that holds ``number``: "18–20 °C" holds the 19 of "My kitchen
    is about 19 °C"."""
    try:
        value = float(number.replace(",", ""))
    except ValueError:
        return False
    return any(
        float(low) <= value <= float(high) and float(low) < float(high) for low, high in _RANGE.findall(text)
    )


# A range of whole numbers and what it counts: "4 to 6 items", "2-3 bedrooms".
_COUNTED_RANGE = re.compile(
    r"(?<![\d.,£$€])(?P<low>\d+)\s*(?:–|—|-|to)\s*(?P<high>\d+)(?![\d.,])\s*(?P<noun>[A-Za-z][A-Za-z'’]*)"
)


def spanned_count(question: str, text: str) -> set[str]:
    """The numbers of things the question counts ("5 items") where ``text`` gives a range of the
    same things that holds it ("| 4 to 6 items | £45.00 |"): the range speaks of it."""
    ranges = [
        (int(match.group("low")), int(match.group("high")), stem(_base_form(match.group("noun"), "2")))
        for match in _COUNTED_RANGE.finditer(text)
    ]
    return {
        number
        for number, noun in _counted(question)
        if noun is not None
        and number.isdigit()
        and any(low <= int(number) <= high and noun == counted for low, high, counted in ranges)
    }


# A bound on an amount: "Over EUR 2,500", "up to £500", "more than 3 nights".
_BOUND = re.compile(
    r"\b(?P<side>over|above|more\s+than|exceeding|at\s+least|from|under|below|less\s+than|up\s+to|at\s+most)\s+"
    r"(?:(?P<currency>[A-Z]{3}|[£$€])\s*)?(?P<number>\d[\d,]*(?:\.\d+)?)(?![\d:])(?:\s*(?P<unit>[A-Za-z]+))?",
    re.IGNORECASE,
)
_CURRENCIES = {"£": "gbp", "pound": "gbp", "pounds": "gbp", "$": "usd", "dollar": "usd", "dollars": "usd",
               "€": "eur", "euro": "eur", "euros": "eur"}  # fmt: skip


def _unit_of(currency: str | None, unit: str | None) -> str:
    """The unit of an amount, currencies by one name ("€", "EUR" and "euros" alike)."""
    word = (currency or unit or "").lower()
    return _CURRENCIES.get(word, word if currency else stem(word) if word else "")


def within_a_bound(number: str, question: str, text: str) -> bool:
    """Whether ``text`` bounds amounts of the unit the question gives ``number`` in, on a side that
    holds it: "Over EUR 2,500" holds the 3000 of "who approves a claim of 3000 eur", "up to 5 nights"
    the 3 of "can I stay 3 nights"; a bound on another unit holds nothing ("over 6.1" mmol/l for 25 dH)."""
    try:
        value = float(number.replace(",", ""))
    except ValueError:
        return False
    given = re.search(
        rf"(?:(?P<currency>\b[A-Z]{{3}}|[£$€])\s*)?(?<![\d.,]){re.escape(number)}(?![\d.,])(?:\s*(?P<unit>[A-Za-z]+))?",
        question,
        re.IGNORECASE,
    )
    asked = _unit_of(given.group("currency"), given.group("unit")) if given else ""
    if not asked or asked in _STOPWORDS:
        return False
    for match in _BOUND.finditer(text):
        if _unit_of(match.group("currency"), match.group("unit")) != asked:
            continue
        bound = float(match.group("number").replace(",", ""))
        side = " ".join(match.group("side").lower().split())
        if side in ("over", "above", "more than", "exceeding"):
            if value > bound:
                return True
        elif side in ("at least", "from"):
            if value >= bound:
                return True
        elif value < bound or (value == bound and side in ("up to", "at most")):
            return True
    return False


# A limit a text puts on an amount ("covered for 12 months only", "up to 3 nights", "aged 25 or
# over"): the words before the number, and those after its unit.
_BOUND_BEFORE = re.compile(
    r"\b(?:up\s+to|within|at\s+(?:least|most)|(?:no|not)\s+(?:more|less|fewer)\s+than|(?:more|less|fewer)\s+than|"
    r"over|under|maximum(?:\s+of)?|minimum(?:\s+of)?|max|min|(?:the\s+)?first|only)\s+$",
    re.IGNORECASE,
)
_BOUND_AFTER = re.compile(
    r"\s+(?:only\b|or\s+(?:more|over|above|older|longer|less|fewer|under|younger|below)\b|"
    r"and\s+(?:over|above|under|below)\b|at\s+(?:most|least)\b|max(?:imum)?\b|min(?:imum)?\b)",
    re.IGNORECASE,
)
_AMOUNT = re.compile(r"\b(\d+(?:\.\d+)?)\s*([A-Za-z]+)")


# A yes-or-no clause after what the asker tells ("... after 18 months, is that covered").
_POLAR_CLAUSE = re.compile(
    r"\b(?:is|are|was|will|would|can|could|do|does|did|should|must|has|have)\s+"
    r"(?:i|we|you|he|she|it|they|that|this|there|my|our)\b",
    re.IGNORECASE,
)
_WH_WORD = re.compile(r"\b(?:what|whats|what's|when|where|who|whom|whose|which|why|how)\b", re.IGNORECASE)


def asks_yes_or_no(question: str) -> bool:
    """Whether ``question`` asks yes or no from its start, or in a clause of its own after what the
    asker tells ("im 23, can i have a courtesy car", "..., is that covered") with no question word."""
    return is_polar_question(question) or (
        not _WH_WORD.search(question) and _POLAR_CLAUSE.search(question) is not None
    )


def bounds_amount(number: str, question: str, text: str) -> bool:
    """Whether ``text`` puts a limit on an amount of the unit a yes-or-no question gives ``number``
    in: "covered for 12 months only" answers whether a fault "after 18 months" is covered, by
    comparing the two. The question's number must stand before its unit ("18 months"); the
    question asks yes or no (`asks_yes_or_no`)."""
    if not asks_yes_or_no(question):
        return False
    asked = next((unit for value, unit in _AMOUNT.findall(question) if value == number), None)
    if asked is None or stem(asked) in _STOPWORDS:
        return False
    return any(
        stem(match.group(2)) == stem(asked)
        and match.group(1) != number
        and (
            _BOUND_BEFORE.search(text, 0, match.start()) is not None
            or _BOUND_AFTER.match(text, match.end()) is not None
        )
        for match in _AMOUNT.finditer(text)
    )


def asks_price(question: str) -> bool:
    """Whether the question asks for a price or a charge ("how much is an adult swim", "whats the
    fee")."""
    return _MONEY_QUESTION.search(_CONTRACTED_IS.sub(r"\1 is", question)) is not None


def asks_method(question: str) -> bool:
    """Whether the question asks how to do something ("How do I top up the pressure?")."""
    return _HOW_TO_QUESTION.search(question) is not None


def names_method(text: str, question: str) -> bool:
    """Whether ``text`` speaks of the deed a "how do I <verb>" question asks how to do: "How do I
    thaw a frozen condensate pipe?" is answered by "Pour warm water over the pipe to thaw it", not by
    "The condensate pipe can freeze in very cold weather". True for a question of another form."""
    asked = _HOW_TO_QUESTION.search(question)
    if asked is None:
        return True
    verb = asked.group("verb").lower()
    if verb in _STOPWORDS or verb in ("get", "make", "use", "find", "know", "tell"):
        return True
    # "How do I qualify for the 7-year warranty?" is answered by its condition ("... if the unit is
    # registered within 30 days").
    if verb in ("qualify", "become") and _CONDITION.search(text):
        return True
    return any(
        _IRREGULAR_FORMS.get(token.lower()) == verb or _mentions_verb(token, verb)
        for token in _WORD.findall(text)
    )


def mentions_event(text: str, question: str) -> bool:
    """Whether ``text`` speaks of what a date question asks about, beyond whom or what it names: one
    of the question's words that is no name, no number and no word of asking ("year", "when") is
    there in some form ("die" in "died" or "death", "open" in "opened"). True for a question of
    names only ("When was the Treaty of Rome?")."""
    words = _WORD.findall(question)
    wanted = [
        word.lower()
        for index, word in enumerate(words)
        if word.lower() not in _STOPWORDS
        and word.lower() not in _DATE_WORDS
        and not (index > 0 and word[:1].isupper())
        and not _NUMBER.search(word)
    ]
    if not wanted:
        return True
    # "What time does the library shut?" is spoken of by its hours ("Thursday: 9:30am – 7:30pm").
    if any(word in _MEASURE_VALUES and _MEASURE_VALUES[word].search(text) for word in wanted):
        return True
    said = [token.lower() for token in _WORD.findall(text)]
    return any(
        _ASKED_FORM.get(token) == word or _mentions_verb(token, word) for word in wanted for token in said
    )


# "how much is silver a month", "what does it cost per night": a rate per that unit; not "a day
# ticket" or "a year's membership", which name a kind.
_ASKED_RATE = re.compile(
    r"\b(?:a|per|each|every)\s+(?P<unit>month|week|year|day|night|hour)\b(?!['’])(?:\s+(?P<next>[a-z]+))?|"
    r"\b(?P<often>monthly|weekly|yearly|annually|daily|nightly|hourly)\b",
    re.IGNORECASE,
)
_OFTEN_UNIT = {"monthly": "month", "weekly": "week", "yearly": "year", "annually": "year", "daily": "day",
               "nightly": "night", "hourly": "hour"}  # fmt: skip


_RATE_ABBREVIATIONS = {"month": r"\bpcm\b|\bp/m\b", "year": r"\bper\s+annum\b|\bp\.a\.|\bpa\b"}


def unrated(question: str, text: str, heading: str = "", columns: str = "") -> str | None:
    """What a "how much ... a month" question asks that ``text`` does not give: an amount per that
    unit. A claim, its headings and its table's header that speak of no month ("Under 6 years | £99
    fixed" of an excess) give no monthly price, however much the passage speaks of the plan."""
    if answer_type_of(question) != "number":
        return None
    for match in _ASKED_RATE.finditer(question):
        unit = match.group("unit")
        if unit is None:
            unit = _OFTEN_UNIT[match.group("often").lower()]
        elif match.group("next") and match.group("next").lower() not in _STOPWORDS:
            continue  # "a day ticket": a kind of ticket
        said = set(content_terms(f"{text} {heading} {columns}"))
        # "Annual rent" is a rate per year, as "per annum" and "pcm" (per calendar month) are.
        wanted = _same_as(stem(unit)) | {stem(unit), stem(f"{unit}ly")}
        if said & wanted or re.search(
            _RATE_ABBREVIATIONS.get(unit.lower(), r"$^"), f"{text} {heading} {columns}", re.I
        ):
            continue
        return f"no amount per {unit.lower()}"
    return None


# "how much notice before they put their prices up": the notice of that deed.
_NOTICE_BEFORE = re.compile(
    r"\bnotice\b.*?\bbefore\s+(?:(?:they|you|we|i|he|she|it|u)\s+|the\s+[a-z]+\s+)?(?P<deed>[a-z]+)",
    re.IGNORECASE,
)


def unnoticed_deed(question: str, text: str) -> str | None:
    """The deed a "how much notice ... before <deed>" question asks the notice of, where ``text``
    says nothing of it: the notice for cancelling a booking is not the notice of a price rise."""
    match = _NOTICE_BEFORE.search(question)
    if match is None or match.group("deed").lower() in _STOPWORDS:
        return None
    deed = match.group("deed").lower()
    if mentions_event(text, deed) or stem(_base_form(deed, "")) in same_sense_terms(question, text):
        return None
    return f"says nothing of the notice before {deed!r}"


# "the theory test itself": that thing, not what goes with it.
# A thing after "the" or "a": "turned itself off" is a deed of its own.
_ITSELF = re.compile(
    r"\b(?:the|a|an|this|that|these|those)\s+(?P<thing>(?:[a-z][a-z'-]*\s+){1,3})(?:it|them)sel(?:f|ves)\b",
    re.IGNORECASE,
)


def not_itself(question: str, text: str) -> str | None:
    """The thing a question asks of "itself" ("how much does the theory test itself cost"), where
    ``text`` does not name it: "buy access for £12" under the heading "Theory test help" prices
    the practice app, not the test."""
    match = _ITSELF.search(question)
    if match is None:
        return None
    thing = [stem(word) for word in _WORD.findall(match.group("thing")) if word.lower() not in _STOPWORDS]
    said = set(content_terms(text))
    if not thing or all(term in said for term in thing):
        return None
    return f"names not the {' '.join(word for word in match.group('thing').split() if word.lower() not in _STOPWORDS)} itself"


# "what happens if my gate is locked": what they will do, which a request to the reader ("If side
# gates are locked, please leave them unlocked") does not say.
_WHAT_HAPPENS_ASKED = re.compile(
    r"\bwhat\s+(?:happens|will\s+happen|do\s+(?:they|you)\s+do)\b", re.IGNORECASE
)
_ONLY_A_REQUEST = re.compile(r"^\W*(?:(?:if|when)\b[^,.;]*,\s*)?please\s+(?!note\b)", re.IGNORECASE)


def only_asks(question: str, text: str) -> bool:
    """Whether ``text`` answers a "what happens if" question only with a request to the reader."""
    return bool(_WHAT_HAPPENS_ASKED.search(question) and _ONLY_A_REQUEST.search(text))


def states_instead(text: str, question: str) -> bool:
    """Whether ``text`` speaks of the state a "when did ..." question's verb names, not of the deed:
    "When did the lido open?" asks when it first opened, and "The lido is open from 1 May to 30
    September" says when it is open (a season, not the event), nowhere saying "opened"."""
    if not re.search(r"\bdid\b", question, re.IGNORECASE):
        return False
    said = [token.lower() for token in _WORD.findall(text)]
    for word in (token.lower() for token in _WORD.findall(question)):
        if word in _STOPWORDS or word in _DATE_WORDS or _NUMBER.search(word):
            continue
        state = re.search(rf"\b(?:is|are|remains?|stays?)\s+(?:[a-z]+ly\s+)?{re.escape(word)}\b", text, re.I)
        if state is not None and not any(
            token != word and (_ASKED_FORM.get(token) == word or _mentions_verb(token, word))
            for token in said
        ):
            return True
    return False


def cut_event(claim: str, context: str, question: str) -> bool:
    """Whether ``claim`` was cut from a sentence of ``context`` whose left-out words hold the deed a
    date question asks about and a date of its own: "It was restored in 2019" from "It opened in 1937
    and was restored in 2019" does not say when it opened, though its sentence does."""
    wanted = [
        word.lower()
        for index, word in enumerate(_WORD.findall(question))
        if word.lower() not in _STOPWORDS
        and word.lower() not in _DATE_WORDS
        and not (index > 0 and word[:1].isupper())
        and not _NUMBER.search(word)
    ]
    claimed = [token.lower() for token in _WORD.findall(claim)]
    if not wanted or not claimed or any(_mentions_verb(token, word) for word in wanted for token in claimed):
        return False
    for span in sentence_spans(context):
        said = [token.lower() for token in _WORD.findall(span.slice(context))]
        left = list(said)
        for token in claimed:
            if token in left:
                left.remove(token)
        if len(said) - len(left) < 0.8 * len(claimed) or len(left) == len(said):
            continue
        if any(_YEAR.fullmatch(token) for token in left) and any(
            _ASKED_FORM.get(token) == word or _mentions_verb(token, word) for word in wanted for token in left
        ):
            return True
    return False


def _mentions_verb(text: str, verb: str) -> bool:
    """Whether ``text`` speaks of the deed a "who <verb>ed ..." question asks about, in any form: a
    name in a sentence that does not say "fumbled" does not say who fumbled."""
    asked = stem(verb)
    return any(
        word == asked or word.startswith(asked) or (len(asked) >= 5 and word[:5] == asked[:5])
        for word in (stem(token) for token in _WORD.findall(text))
    )


def _names_doer(text: str, question: str, asked: set[str]) -> bool:
    """Whether ``text`` names who did what a "who <verb>ed ..." question asks, after "by": "restored by
    volunteers" answers "Who restored the Margaret Rose?"."""
    asked_verb = _DOER_QUESTION.search(question)
    if asked_verb is None:
        return False
    verb = stem(asked_verb.group("verb"))
    for match in re.finditer(
        rf"\b[A-Za-z]+ed\s+by\s+{_DOER_ARTICLES}(?P<doer>[A-Za-z][\w'’-]*)", text, re.IGNORECASE
    ):
        done = stem(match.group().split()[0])
        doer = match.group("doer")
        if done == verb and doer.lower() not in _STOPWORDS and stem(doer) not in asked:
            return True
    return False


def _names_place(word: str) -> bool:
    """Whether a word of the three after a place preposition names a place: a name that is no month
    nor weekday ("in a series of New York hotels"), or a word for a place ("in mountainous areas",
    "the west")."""
    word = word.strip("`'’-")
    if word[:1].isupper():
        return not (MONTH.fullmatch(word) or WEEKDAY.fullmatch(word))
    return word.lower() in _PLACE_NOUNS


@dataclass(frozen=True, slots=True)
class ScoredSentence:
    """One sentence of a directly read passage with its offsets in the passage and its scores."""

    evidence: ReadEvidence
    start: int
    end: int
    lexical: float
    context: float
    semantic: float | None
    type_match: bool
    new_terms: int
    # Whether the question asks for a kind of answer (a date, a number, ...): then a sentence
    # without one is unlikely to be the answer, however many words it shares.
    typed: bool = False
    # The question's terms that the sentence or its headings name (what ``lexical`` counts).
    met: frozenset[str] = frozenset()

    @property
    def text(self) -> str:
        return self.evidence.passage[self.start : self.end]

    @property
    def score(self) -> float:
        return combined_score(self.lexical, self.context, self.semantic, self.type_match, typed=self.typed)

    def describe(self) -> str:
        semantic = "n/a" if self.semantic is None else f"{self.semantic:.2f}"
        return (
            f"E{self.evidence.number} sentence {self.start}-{self.end}: score {self.score:.2f} "
            f"(terms {self.lexical:.2f}, with context {self.context:.2f}, similarity {semantic}, "
            f"answer type {'found' if self.type_match else 'not found'})"
        )


@dataclass(frozen=True, slots=True)
class PassageExclusion:
    """A directly read passage kept out of the prompt, and why."""

    evidence: ReadEvidence
    reason: Literal["near-empty", "not-relevant"]
    note: str


@dataclass(frozen=True, slots=True)
class Selection:
    """Passages that bear on the question, the answer-bearing sentences, and what was left out."""

    focus: QuestionFocus
    kept: tuple[ReadEvidence, ...]
    excluded: tuple[PassageExclusion, ...]
    sentences: tuple[ScoredSentence, ...]
    ranked: tuple[ScoredSentence, ...]

    @property
    def best(self) -> ScoredSentence | None:
        return self.sentences[0] if self.sentences else None


def document_title(row: EvidenceRow) -> str:
    """The title of a row's document as its author gave it ("" for one made up from the file's name)."""
    title = row.source.title or ""
    path = row.source.canonical_path or row.source.canonical_uri
    return "" if title == PurePosixPath(path.removeprefix("file:")).stem else title


def heading_words(row: EvidenceRow) -> str:
    """What a passage's headings name, every sentence below them is about: its heading path, after
    its document's title where the path does not already give it (a web page's <title>, "Borrowing
    and membership | Hartwell Green Library", names the library its <main> never heads)."""
    path = " ".join(row.scope.locator.heading_path or ())
    title = document_title(row)
    if not title or set(content_terms(title)) <= set(content_terms(path)):
        return path
    return f"{title} {path}"


def _heading_words(item: ReadEvidence) -> str:
    return heading_words(item.row)


def text_before(item: ReadEvidence) -> str:
    """The text just before the passage that retrieval attached as its context ("" when none)."""
    content = getattr(item.row, "content", None)
    return getattr(content, "before", None) or ""


def columns_of(item: ReadEvidence, span: TextSpan) -> str:
    """The header row of the table a row of the passage belongs to ("" when none): in the passage,
    or, for a table cut in two between chunks, in the text before it (the header of the first
    piece says what the cells of the second are). Context only: it is never quoted as evidence."""
    header = table_header(item.passage, span)
    if header is not None:
        return header.slice(item.passage)
    before = text_before(item)
    if not before or not is_table_row(item.passage, span):
        return ""
    combined = f"{before}\n{item.passage}"
    shift = len(before) + 1
    header = table_header(combined, TextSpan(span.start + shift, span.end + shift))
    return "" if header is None else header.slice(combined)


def _body_words(passage: str) -> int:
    return len(re.findall(r"\w+", re.sub(r"(?m)^[ \t]*#{1,6}[ \t].*$", "", passage)))


def combined_score(
    terms: float, context: float, similarity: float | None, type_found: bool, *, typed: bool
) -> float:
    """The sentence score in [0, 1] (see the module docstring); without an embedder the term
    share stands in for the similarity."""
    semantic = similarity if similarity is not None else terms
    return (
        LEXICAL_WEIGHT * terms
        + CONTEXT_WEIGHT * context
        + SEMANTIC_WEIGHT * max(semantic, 0.0)
        + TYPE_WEIGHT * (1.0 if type_found else 0.0)
        - (TYPE_MISS_PENALTY if typed and not type_found else 0.0)
    )


def question_similarities(
    embedder: Embedder | None, question: str, texts: Sequence[str]
) -> list[float | None]:
    """Cosine of the question and each text under the embedding model; None without one."""
    if embedder is None or not texts:
        return [None] * len(texts)
    try:
        vectors = embedder.embed([question, *texts])
    except EmbeddingModelError:
        return [None] * len(texts)
    scores = np.asarray(vectors[1:]) @ np.asarray(vectors[0])
    return [float(value) for value in scores]


def without_question(text: str, question: str, *, keep_own_lines: bool = False) -> str:
    """``text`` with every verbatim copy of ``question`` taken out (case, spacing and a closing
    question mark aside). Unchanged for a question of fewer than ``MIN_QUOTED_QUESTION_WORDS`` words,
    whose words are common enough to occur by chance, and for a statement (no closing question
    mark): a claim asked about is supported by a passage that states it word for word. With
    ``keep_own_lines``, a copy on a line of its own stays: it heads an FAQ's answer.
    """
    words = re.findall(r"\w+", question)
    if len(words) < MIN_QUOTED_QUESTION_WORDS or not question.rstrip().endswith("?"):
        return text
    # The question's words in order, separated by anything that is not a word character.
    pattern = r"(?<!\w)" + r"\W+".join(re.escape(word) for word in words) + r"(?!\w)\??"

    def taken_out(match: re.Match[str]) -> str:
        if keep_own_lines and _own_line(text, TextSpan(match.start(), match.end())):
            return match.group()
        return " "

    return re.sub(pattern, taken_out, text, flags=re.IGNORECASE)


def _own_line(text: str, span: TextSpan) -> bool:
    """Whether ``span`` of ``text`` stands on a line of its own (bullets and emphasis aside)."""
    line_start = text.rfind("\n", 0, span.start) + 1
    line_end = text.find("\n", span.end)
    before = text[line_start : span.start]
    after = text[span.end : len(text) if line_end < 0 else line_end]
    return not re.sub(r"[\s*_#>`-]", "", before) and not re.sub(r"[\s*_`]", "", after)


def score_sentences(
    focus: QuestionFocus, evidence: Sequence[ReadEvidence], embedder: Embedder | None
) -> list[ScoredSentence]:
    """Every sentence of every passage (fragments under ``MIN_SENTENCE_WORDS`` words left out),
    each scored without any copy of the question it quotes."""
    question_terms = set(focus.weights)
    spans: list[tuple[ReadEvidence, int, int, str, set[str], set[str], set[str], str, str, str]] = []
    for item in evidence:
        # A heading says in words of the same sense what the question asks of ("Dental Practice"
        # for "the dentist").
        heading_terms = set(content_terms(_heading_words(item))) | same_sense_terms(
            focus.question, _heading_words(item)
        )
        # An abbreviation the question uses ("AGM") is met by the passage or its headings spelling it
        # out ("Annual General Meeting"): what the passage is about, not what a sentence says.
        passage = without_question(item.passage, focus.question, keep_own_lines=True)
        # "5 or more rooms" gives no "5" of the "5 days" asked (see `other_unit_numbers`).
        context_terms = (
            (set(content_terms(passage)) - other_unit_numbers(focus.question, passage))
            | heading_terms
            | focus.spelled_out(item.passage, _heading_words(item))
            | spanned_duration(focus.question, item.passage)
        )
        asked: set[str] = set()
        asked_text = ""
        faq = False
        for span in sentence_spans(item.passage):
            if is_faq_question(item.passage, span):
                # "Q. My bin was missed. What should I do?": the whole of an FAQ's question asks.
                asked_text = f"{asked_text} {span.slice(item.passage)}" if faq else span.slice(item.passage)
                asked, faq = set(content_terms(asked_text)), True
                continue
            faq = False
            if is_question(span.slice(item.passage)):
                # A question in the text (an FAQ's) answers nothing itself; the sentences after it
                # answer it, and what it asks they are about, as if it were their heading. A copy
                # of the question inside a line lends nothing (see `without_question`); on a line
                # of its own it heads an FAQ's answer, and the user asked just that.
                asked_text = span.slice(item.passage)
                if not _own_line(item.passage, span):
                    asked_text = without_question(asked_text, focus.question)
                asked = set(content_terms(asked_text))
                continue
            if is_run_in_heading(item.passage, span) and not is_claimable(item.passage, span):
                # "**The float test.** Many books tell you ...": a bold phrase that opens a paragraph
                # names what the paragraph is about, as an FAQ's question does.
                asked_text = span.slice(item.passage)
                asked = set(content_terms(asked_text))
                continue
            text = without_question(span.slice(item.passage), focus.question)
            # A table row, a list entry or a line of fields is a whole entry, however few its words
            # ("| Season pass | £145 |", "Treasurer: Sunita Kaur").
            short = len(re.findall(r"\w+", text)) < MIN_SENTENCE_WORDS and not (
                is_table_row(item.passage, span)
                or is_list_item(item.passage, span)
                or is_field_entry(item.passage, span)
                or is_line_entry(item.passage, span)
            )
            if short or not is_claimable(item.passage, span):
                continue
            # A table row's column headers name what each of its cells is, as a heading does, and
            # so does the line that leads in to a list ("**Every 3 months (owner):**").
            columns = columns_of(item, span)
            # A band in a column's header ("25–40kg") holds the weight or age the question gives.
            named = (
                heading_terms
                | asked
                | set(content_terms(columns))
                | spanned_duration(focus.question, columns)
            )
            lead = lead_in(item.passage, span)
            lead_text = "" if lead is None else lead.slice(item.passage)
            named |= set(content_terms(lead_text))
            terms = (
                (set(content_terms(text)) - other_unit_numbers(focus.question, text))
                | measured_terms(focus.question, text)
                | column_band_terms(focus.question, text, columns)
            )
            if other_duration(focus.question, text, item.passage) and _band_beside(
                focus.question, item.passage, span
            ):
                # "| 7 days or more before the first visit |" speaks of another period than "3 days
                # before", where a row or item beside it gives the band that holds it ("| Between 48
                # hours and 7 days ... |"): entries of one table are alternatives, that one answers.
                continue
            if other_duration(focus.question, text, item.passage) or other_length(focus.question, text):
                # "15 days or more before arrival" speaks of another period than "10 days before":
                # its "days" (or a "£10") does not meet the question's length of time. A sentence
                # stays a candidate: the band that holds the length may be of another deed ("move
                # free of charge up to 48 hours before" beside the refund's "more than 72 hours").
                terms -= duration_terms(focus.question)
            spans.append(
                (
                    item,
                    span.start,
                    span.end,
                    text,
                    terms,
                    named,
                    context_terms,
                    asked_text,
                    lead_text,
                    columns,
                )
            )
    similarities = question_similarities(embedder, focus.question, [text for _, _, _, text, *_ in spans])
    scored: list[ScoredSentence] = []
    for (
        item,
        start,
        end,
        text,
        terms,
        heading_terms,
        context_terms,
        asked_text,
        lead_text,
        columns,
    ), similarity in zip(spans, similarities, strict=True):
        scored.append(
            ScoredSentence(
                evidence=item,
                start=start,
                end=end,
                # What the heading names, every sentence below it is about.
                lexical=focus.coverage(terms | heading_terms),
                context=focus.coverage(terms | context_terms),
                semantic=similarity,
                # The deed a "how do I" asks about may be named by the FAQ question it answers.
                # What a list's lead-in says ("Every 3 months:") its items say too.
                type_match=fills_answer_type(
                    f"{lead_text} {text}".strip(), focus.answer_type, focus.question, columns
                )
                and names_method(f"{text} {asked_text}", focus.question)
                and opposite_event(focus.question, text) is None
                and other_day(focus.question, text, heading=_heading_words(item)) is None
                # Another tier, period or colour than the one asked ("peak" for "off peak").
                and other_variant(focus.question, text, _heading_words(item)) is None,
                new_terms=len(terms - question_terms),
                typed=focus.answer_type != "any" or asks_method(focus.question),
                met=frozenset(term for term in focus.weights if term in terms | heading_terms),
            )
        )
    return scored


def _one_edit(typed: str, word: str) -> bool:
    """Whether ``word`` is ``typed`` with one letter added, one left out, or two neighbours swapped;
    in a word of ``_TYPO_SWAP_MIN_LETTERS`` or more, also with one letter changed ("insurence")."""
    if len(typed) == len(word):
        differ = [at for at, (one, other) in enumerate(zip(typed, word, strict=True)) if one != other]
        if len(differ) == 1:
            return len(typed) >= _TYPO_SWAP_MIN_LETTERS
        return (
            len(differ) == 2
            and differ[1] == differ[0] + 1
            and typed[differ[0]] == word[differ[1]]
            and typed[differ[1]] == word[differ[0]]
        )
    if abs(len(typed) - len(word)) != 1:
        return False
    short, long = sorted((typed, word), key=len)
    at = 0
    while at < len(short) and short[at] == long[at]:
        at += 1
    return short[at:] == long[at + 1 :]


# A word shorter than this is left as typed: "sheep" and "sheet" are both words.
_TYPO_MIN_LETTERS = 6
# A letter changed makes another word more often ("wander", "wonder"): only in longer words.
_TYPO_SWAP_MIN_LETTERS = 8
_LETTERS = re.compile(r"[A-Za-z]+")


def read_as_typed(question: str, texts: Sequence[str]) -> str:
    """The question with each misspelt word read as the word of ``texts`` (the passages read for it)
    that it nearly is: "allotmnt" as "allotment", "dishwaser" as "dishwasher". A lower-case word of
    six letters or more that no text holds (in any inflection) is read so when it is one letter
    added, left out or swapped from words of one stem only (a plural so from a word in the singular,
    "thursdys" as "Thursday"), with the same first letter; names and shorter words stay as typed."""
    vocabulary = {word.lower() for text in texts for word in _LETTERS.findall(text) if len(word) >= 5}
    stems = {stem(word) for word in vocabulary}

    def read(match: re.Match[str]) -> str:
        typed = match.group()
        if len(typed) < _TYPO_MIN_LETTERS or not typed.islower() or stem(typed) in stems:
            return typed
        # A plural typed of a word the texts hold in the singular: "thursdys" for "Thursday".
        near = sorted(
            word
            for word in vocabulary
            if word[0] == typed[0]
            and (_one_edit(typed, word) or (typed.endswith("s") and _one_edit(typed[:-1], word)))
        )
        return near[0] if len({stem(word) for word in near}) == 1 else typed

    return _LETTERS.sub(read, question)


def _band_beside(question: str, passage: str, span: TextSpan) -> bool:
    """Whether ``span`` is a table row or list item of ``passage`` and another row or item of it
    gives a span of time that holds the question's length."""
    if not (is_table_row(passage, span) or is_list_item(passage, span)):
        return False
    at = span.start
    for match in re.finditer(r"[^\n]+", passage):
        if match.start() <= at <= match.end():
            continue
        line = match.group().strip()
        if line.startswith(("|", "-", "*", "•")) and any(
            holds for _, _, holds in _duration_spans(question, line)
        ):
            return True
    return False


def select_evidence(question: str, evidence: Sequence[ReadEvidence], embedder: Embedder | None) -> Selection:
    """Keep the passages that bear on the question and pick the answer-bearing sentence(s).

    A passage is left out when it is near-empty (a title and little else) or when its best
    sentence scores far below the best passage's (``PASSAGE_RELATIVE_FLOOR``). The answer is the
    best sentence, joined by the runner-up when that one is nearly as good and from a kept passage.
    """
    # A misspelt word meets the passages' word it nearly is ("allotmnt": "allotment").
    focus = question_focus(
        read_as_typed(question, [f"{_heading_words(item)}\n{item.passage}" for item in evidence])
    )
    excluded: list[PassageExclusion] = []
    usable: list[ReadEvidence] = []
    for item in evidence:
        words = _body_words(item.passage)
        if words < NEAR_EMPTY_WORDS:
            excluded.append(
                PassageExclusion(item, "near-empty", f"only {words} word(s) besides headings: not evidence")
            )
        else:
            usable.append(item)
    ranked = sorted(
        score_sentences(focus, usable, embedder), key=lambda sentence: sentence.score, reverse=True
    )
    best_by_passage: dict[str, ScoredSentence] = {}
    for sentence in ranked:
        best_by_passage.setdefault(sentence.evidence.row.evidence_id, sentence)
    top = ranked[0].score if ranked else 0.0
    kept: list[ReadEvidence] = []
    for item in usable:
        best = best_by_passage.get(item.row.evidence_id)
        if best is not None and best.score >= PASSAGE_RELATIVE_FLOOR * top:
            kept.append(item)
            continue
        note = (
            "no sentence of it could be scored"
            if best is None
            else f"best sentence scores {best.score:.2f}, below {PASSAGE_RELATIVE_FLOOR:.0%} of the best passage's {top:.2f}"
        )
        excluded.append(PassageExclusion(item, "not-relevant", note))
    kept_ids = {item.row.evidence_id for item in kept}
    chosen: list[ScoredSentence] = []
    for sentence in ranked:
        if sentence.evidence.row.evidence_id not in kept_ids:
            continue
        if chosen and (
            len(chosen) >= MAX_ANSWER_SENTENCES or sentence.score < chosen[0].score - SECOND_SENTENCE_MARGIN
        ):
            break
        # A runner-up that adds nothing, or is another entry beside the best, is passed over for
        # the next one that scores nearly as well.
        if not chosen or (sentence.new_terms > 0 and not _another_entry(chosen[0], sentence, focus)):
            chosen.append(sentence)
    # In passage order, so two sentences of one passage read as they were written.
    chosen.sort(key=lambda sentence: (sentence.evidence.number, sentence.start))
    renumbered = _renumbered(kept)
    return Selection(
        focus=focus,
        kept=renumbered,
        excluded=tuple(excluded),
        sentences=tuple(_moved(sentence, renumbered) for sentence in sorted(chosen, key=_rank_key)),
        ranked=tuple(ranked),
    )


def _is_entry(sentence: ScoredSentence) -> bool:
    passage, span = sentence.evidence.passage, TextSpan(sentence.start, sentence.end)
    return (
        is_table_row(passage, span)
        or is_list_item(passage, span)
        or is_field_entry(passage, span)
        or is_line_entry(passage, span)
    )


def _another_entry(best: ScoredSentence, other: ScoredSentence, focus: QuestionFocus) -> bool:
    """Whether ``other`` is an entry beside ``best``'s about another thing: a row, item or line of
    the same passage whose own words name fewer of the question's terms, none that ``best`` lacks.

    Entries of one table or list are alternatives ("| Silver | £45 |" beside "| Gold | £70 |"): the
    row the question names answers it, the one above it only scores near for sharing the columns.
    A runner-up that names a term the best does not ("Saturday" and "Sunday" both asked) is kept.
    An entry of another passage is about another thing when it, with its headings, lacks a quarter
    or more of the question's weight that ``best`` names, and at least twice what it names that
    ``best`` lacks (for "my son is 18 months, how much is a full day", the funded hours' row for
    "children aged 9 months to 4 years" beside the fees row of the under 2s, whose columns say "Full
    day"); lacking less, it may be the exception to the best ("Giant dogs over 40 kg: solo walks
    only" beside the group walk's row, for a 45 kg dog).
    """
    if not (_is_entry(best) and _is_entry(other)):
        return False
    if best.evidence.row.evidence_id != other.evidence.row.evidence_id:
        lost = focus.coverage(set(best.met - other.met))
        return lost >= ANOTHER_ENTRY_LOSS and lost >= 2 * focus.coverage(set(other.met - best.met))
    asked = set(focus.weights)
    named_best = asked & set(content_terms(best.text))
    named_other = asked & set(content_terms(other.text))
    return named_other < named_best


def _rank_key(sentence: ScoredSentence) -> float:
    return -sentence.score


def _renumbered(kept: Sequence[ReadEvidence]) -> tuple[ReadEvidence, ...]:
    """Kept passages numbered [E1], [E2], ... in their original order."""
    return tuple(
        ReadEvidence(number=index, row=item.row, passage=item.passage)
        for index, item in enumerate(kept, start=1)
    )


def _moved(sentence: ScoredSentence, kept: Sequence[ReadEvidence]) -> ScoredSentence:
    item = next(item for item in kept if item.row.evidence_id == sentence.evidence.row.evidence_id)
    return ScoredSentence(
        evidence=item,
        start=sentence.start,
        end=sentence.end,
        lexical=sentence.lexical,
        context=sentence.context,
        semantic=sentence.semantic,
        type_match=sentence.type_match,
        new_terms=sentence.new_terms,
        typed=sentence.typed,
        met=sentence.met,
    )


__all__ = [
    "MEASURE_TERMS",
    "AnswerType",
    "PassageExclusion",
    "QuestionFocus",
    "ScoredSentence",
    "Selection",
    "answer_type_of",
    "columns_of",
    "combined_score",
    "content_terms",
    "fills_answer_type",
    "other_kind",
    "question_focus",
    "question_similarities",
    "score_sentences",
    "select_evidence",
    "stem",
    "text_before",
    "without_question",
]
