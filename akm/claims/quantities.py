"""Numbers, percentages, units and dates mentioned in a text, normalised for comparison.

A quantity is a value with an optional unit. Digits that belong to identifiers (IL-6,
p53, E1, COVID-19, v1.2) are not quantities: they are names, and names are checked as names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Canonical unit per spelling. A dimension groups units that convert into each other.
_UNIT_SPELLINGS: dict[str, str] = {
    "%": "%", "percent": "%", "per cent": "%", "pct": "%",
    "percentage point": "pp", "percentage points": "pp", "points": "pp", "point": "pp", "pp": "pp",
    "ng": "ng", "µg": "µg", "μg": "µg", "ug": "µg", "mcg": "µg", "mg": "mg", "g": "g", "gram": "g",
    "grams": "g", "kg": "kg", "kilogram": "kg", "kilograms": "kg",
    "ml": "ml", "mL": "ml", "l": "l", "L": "l", "litre": "l", "liter": "l", "litres": "l", "liters": "l",
    "µl": "µl", "μl": "µl", "ul": "µl",
    "nm": "nm", "µm": "µm", "μm": "µm", "mm": "mm", "cm": "cm", "m": "m", "km": "km",
    "ms": "ms", "s": "s", "sec": "s", "second": "s", "seconds": "s", "min": "min", "minute": "min",
    "minutes": "min", "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
    "day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month", "months": "month",
    "year": "year", "years": "year", "yr": "year", "yrs": "year",
    "fold": "fold", "x": "fold", "times": "fold",
    "kda": "kda", "da": "da", "mmhg": "mmhg", "bpm": "bpm", "mmol": "mmol", "mol": "mol", "mm3": "mm3",
    "kb": "kb", "mb": "mb", "gb": "gb", "tb": "tb", "kib": "kib", "mib": "mib", "gib": "gib",
    "ghz": "ghz", "mhz": "mhz", "hz": "hz", "ms/token": "ms/token", "tokens/s": "tokens/s",
    "million": "million", "billion": "billion", "thousand": "thousand",
    "patients": "patients", "participants": "participants", "subjects": "subjects",
    "people": "people", "cases": "cases", "cells": "cells", "mice": "mice",
    # Money written out after its figure, and a time of day: "7pm" is no "£7", nor "7am".
    "pound": "gbp", "pounds": "gbp", "euro": "eur", "euros": "eur", "dollar": "usd", "dollars": "usd",
    "am": "am", "a.m.": "am", "pm": "pm", "p.m.": "pm",
}  # fmt: skip
# A currency before a figure: "£7", "$20", "EUR 2,500".
_CURRENCY_BEFORE = re.compile(r"(?:(?P<sign>[£$€])|\b(?P<code>GBP|EUR|USD)\s?)$")
_CURRENCY_SIGNS = {"£": "gbp", "$": "usd", "€": "eur"}
_SCALE_TO_BASE: dict[str, tuple[str, float]] = {
    "ng": ("mass", 1e-9), "µg": ("mass", 1e-6), "mg": ("mass", 1e-3), "g": ("mass", 1.0),
    "kg": ("mass", 1e3), "µl": ("volume", 1e-6), "ml": ("volume", 1e-3), "l": ("volume", 1.0),
    "nm": ("length", 1e-9), "µm": ("length", 1e-6), "mm": ("length", 1e-3), "cm": ("length", 1e-2),
    "m": ("length", 1.0), "km": ("length", 1e3), "ms": ("time", 1e-3), "s": ("time", 1.0),
    "min": ("time", 60.0), "h": ("time", 3600.0), "day": ("time", 86400.0), "week": ("time", 604800.0),
    "kb": ("bytes", 1e3), "mb": ("bytes", 1e6), "gb": ("bytes", 1e9), "tb": ("bytes", 1e12),
    "kib": ("bytes", 1024.0), "mib": ("bytes", 1024.0**2), "gib": ("bytes", 1024.0**3),
}  # fmt: skip
NUMBER_WORDS: dict[str, float] = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "twenty": 20, "hundred": 100, "dozen": 12, "twice": 2, "half": 0.5,
    "double": 2, "triple": 3, "twofold": 2, "threefold": 3,
}  # fmt: skip
MONTHS: dict[str, int] = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
    "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9,
    "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}  # fmt: skip
MONTH_NAMES = (
    r"January|February|March|April|May|June|July|August|September|October|November|December|"
    r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec"
)
_UNIT_ALTERNATION = "|".join(
    re.escape(spelling) for spelling in sorted(_UNIT_SPELLINGS, key=len, reverse=True) if spelling != "%"
)
QUANTITY = re.compile(
    r"(?<![\w\-./·])(?P<number>\d{1,3}(?:,\d{3})+(?:[.·]\d+)?|\d+(?:[.·]\d+)?|\.\d+)(?![\w.·]*\d)(?!-\w*\d)"
    r"(?:(?P<percent>\s?%)|[\s-]?(?P<unit>" + _UNIT_ALTERNATION + r")(?![\w]))?",
    re.IGNORECASE,
)
_NUMBER_WORD = re.compile(
    r"\b(?P<word>" + "|".join(NUMBER_WORDS) + r")\b(?:[\s-](?P<unit>fold))?", re.IGNORECASE
)
ISO_DATE = re.compile(r"\b(?P<year>(?:19|20)\d{2})-(?P<month>0[1-9]|1[0-2])(?:-(?P<day>[0-3]\d))?\b")
YEAR = re.compile(r"(?<![\w\-.])(?:19|20)\d{2}(?![\w.]*\d)(?!-\d)")
MONTH = re.compile(r"\b(?P<month>" + MONTH_NAMES + r")\b\.?", re.IGNORECASE)
WEEKDAY = re.compile(r"\b(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)days?\b", re.IGNORECASE)
# A day of a month, "19 March", "19th of March", "March 19": month names capitalised, as in `months`
# ("1 may" is a verb), and a day of one or two digits, not a year ("March 1932").
DAY_OF_MONTH = re.compile(
    r"\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:" + MONTH_NAMES + r")\b"
    r"|\b(?:" + MONTH_NAMES + r")\.?\s+\d{1,2}(?:st|nd|rd|th)?\b"
)
QUARTER = re.compile(r"\bQ[1-4]\s+(?:19|20)\d{2}\b")


@dataclass(frozen=True, slots=True)
class Quantity:
    """A value, its canonical unit ('' when bare) and where the text said it."""

    value: float
    unit: str
    start: int
    end: int

    @property
    def dimension(self) -> str:
        """The convertible family of the unit, or the unit itself when it has none."""
        return _SCALE_TO_BASE[self.unit][0] if self.unit in _SCALE_TO_BASE else self.unit

    def in_base_unit(self) -> float | None:
        scale = _SCALE_TO_BASE.get(self.unit)
        return None if scale is None else self.value * scale[1]


def _canonical_unit(spelling: str) -> str:
    if spelling in _UNIT_SPELLINGS:
        return _UNIT_SPELLINGS[spelling]
    return _UNIT_SPELLINGS.get(spelling.lower(), spelling.lower())


def quantities(text: str) -> list[Quantity]:
    """Numbers stated in ``text`` with their unit, years included (unit 'year-date')."""
    found: list[Quantity] = []
    taken: set[int] = set()
    for match in ISO_DATE.finditer(text):
        taken.update(range(match.start(), match.end()))
        found.append(Quantity(float(match.group("year")), "year-date", match.start(), match.start() + 4))
    for match in QUANTITY.finditer(text):
        if match.start() in taken:
            continue
        # Some journals print the decimal point as a middle dot (11·9).
        number = match.group("number").replace(",", "").replace("·", ".")
        value = float(number)
        start = match.start()
        if match.group("percent"):
            unit = "%"
        elif match.group("unit"):
            unit = _canonical_unit(match.group("unit"))
        elif currency := _CURRENCY_BEFORE.search(text, max(0, match.start() - 4), match.start()):
            unit = _CURRENCY_SIGNS[currency["sign"]] if currency["sign"] else currency["code"].lower()
            start = currency.start()
        elif YEAR.fullmatch(number) and "." not in number:
            unit = "year-date"
        else:
            unit = ""
        found.append(Quantity(value, unit, start, match.end()))
    for match in _NUMBER_WORD.finditer(text):
        unit = "fold" if match.group("unit") else ""
        found.append(
            Quantity(float(NUMBER_WORDS[match.group("word").lower()]), unit, match.start(), match.end())
        )
    return sorted(found, key=lambda quantity: quantity.start)


_EMPHASIS = re.compile(r"[*`]+")
_AMBIGUOUS_MONTHS = frozenset(
    {"may", "mar", "jan", "jun", "jul", "aug", "sep", "oct", "nov", "dec", "feb", "apr"}
)


_WEEKDAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
# A weekday before the day of the month it falls on: "Friday 24 January", "Friday, the 24th".
_DATED_WEEKDAY = re.compile(
    r"\b(?P<weekday>(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day),?\s+(?:the\s+)?(?P<day>\d{1,2})(?:st|nd|rd|th)?\b(?!\s*[:.]\d)"
)


def weekdays(text: str) -> set[int]:
    """The days of the week ``text`` names (0 = Monday), capitalised as names are."""
    return {
        _WEEKDAY_NAMES.index(match.group()[:3].lower())
        for match in WEEKDAY.finditer(text)
        if match.group()[0].isupper()
    }


def dated_weekdays(text: str) -> set[tuple[int, int]]:
    """(weekday, day of the month) pairs that ``text`` states: "Friday 24 January" is (4, 24)."""
    return {
        (_WEEKDAY_NAMES.index(match.group("weekday")[:3].lower()), int(match.group("day")))
        for match in _DATED_WEEKDAY.finditer(text)
    }


def months(text: str) -> list[int]:
    """Month numbers named in ``text``: capitalised names ("march" is a verb); 'May' and
    abbreviations only with a day, year or time next to them. Markdown emphasis is no text
    between them: "**18:30**, May to August" names May as "18:30, May to August" does."""
    text = _EMPHASIS.sub("", text)
    named: list[int] = []
    for match in MONTH.finditer(text):
        surface = match.group("month")
        word = surface.lower()
        if not surface[0].isupper():
            continue
        around = text[max(0, match.start() - 4) : match.end() + 6]
        if word in _AMBIGUOUS_MONTHS and not re.search(r"\d", around):
            continue
        named.append(MONTHS[word])
    named.extend(int(match.group("month")) for match in ISO_DATE.finditer(text))
    return named


def mentions_date(text: str) -> bool:
    """True when ``text`` names a year, a month, a weekday, a quarter or an ISO date."""
    return bool(
        ISO_DATE.search(text)
        or YEAR.search(text)
        or months(text)
        or WEEKDAY.search(text)
        or QUARTER.search(text)
        or re.search(
            r"\b(?:yesterday|today|tomorrow|last (?:week|month|year)|next (?:week|month|year))\b", text, re.I
        )
    )


def same_amount(first: Quantity, second: Quantity) -> bool:
    """True when two quantities state the same amount, converting units of one dimension."""
    if first.unit == second.unit:
        return abs(first.value - second.value) <= 1e-9 * max(1.0, abs(first.value))
    base_first, base_second = first.in_base_unit(), second.in_base_unit()
    if base_first is None or base_second is None or first.dimension != second.dimension:
        return False
    return abs(base_first - base_second) <= 1e-9 * max(1.0, abs(base_first))
