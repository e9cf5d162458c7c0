"""Words people shorten when they type a question, and the word a document spells out.

"What's the max nozzle temp?" asks for the "Maximum nozzle temperature": the lexical lane searches
for both forms and the answer's term matching reads the short form as the full word. "min" is a
minimum ("min length") unless a number comes before it ("10 min"): then it is minutes. "sat" and
"sun" are days after a word that leads to one ("open on sat").
"""

from __future__ import annotations

SHORT_FORMS: dict[str, str] = {
    "max": "maximum", "temp": "temperature", "temps": "temperatures", "approx": "approximately",
    "info": "information", "photo": "photograph", "photos": "photographs", "pic": "picture",
    "pics": "pictures", "wifi": "wi-fi", "e-mail": "email", "specs": "specifications",
    "hr": "hour", "hrs": "hours", "yr": "year", "yrs": "years", "wk": "week", "wks": "weeks",
    "pw": "password", "pwd": "password", "xmas": "christmas", "dept": "department", "govt": "government", "avg": "average", "qty": "quantity",
    "bday": "birthday", "ppl": "people", "hol": "holiday", "hols": "holidays",
    "brekky": "breakfast", "brekkie": "breakfast", "thru": "through",
    "jan": "january", "feb": "february", "apr": "april", "aug": "august", "sept": "september",
    "oct": "october", "nov": "november", "dec": "december",
    "mon": "monday", "tue": "tuesday", "tues": "tuesday", "wed": "wednesday", "weds": "wednesday",
    "thu": "thursday", "thur": "thursday", "thurs": "thursday", "fri": "friday",
    "appt": "appointment", "appts": "appointments", "mins": "minutes", "secs": "seconds",
    "mth": "month", "mths": "months", "incl": "including", "rd": "road", "ave": "avenue",
}  # fmt: skip
# "sat" and "sun" are days only after a word that leads to a day ("open on sat", "fri to sun").
_DAYS_AFTER = frozenset({"on", "this", "next", "every", "each", "last", "till", "til", "until", "to", "and",
                         "or", "from", "thru", "through", "fri", "friday", "sat", "saturday"})  # fmt: skip
_WEEKEND_DAYS = {"sat": "saturday", "sun": "sunday"}


def full_form(word: str, before: str = "") -> str | None:
    """The word a short form stands for ("temp": "temperature"), or None when it is no short form;
    ``before`` is the word before it ("min" after a number is "minutes", else "minimum"; "sat" after
    "on" is "saturday", else no short form)."""
    lowered = word.lower()
    if lowered == "min":
        return "minutes" if before[:1].isdigit() else "minimum"
    if lowered in _WEEKEND_DAYS:
        return _WEEKEND_DAYS[lowered] if before.lower() in _DAYS_AFTER else None
    return SHORT_FORMS.get(lowered)


__all__ = ["SHORT_FORMS", "full_form"]
