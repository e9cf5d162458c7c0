"""Words people shorten when they type a question, and the word a document spells out.

"What's the max nozzle temp?" asks for the "Maximum nozzle temperature": the lexical lane searches
for both forms and the answer's term matching reads the short form as the full word. ("min" is left
out: it may be a minute as well as a minimum.)
"""

from __future__ import annotations

SHORT_FORMS: dict[str, str] = {
    "max": "maximum", "temp": "temperature", "temps": "temperatures", "approx": "approximately",
    "info": "information", "photo": "photograph", "photos": "photographs", "pic": "picture",
    "pics": "pictures", "wifi": "wi-fi", "e-mail": "email", "specs": "specifications",
    "hr": "hour", "hrs": "hours", "yr": "year", "yrs": "years", "wk": "week", "wks": "weeks",
    "dept": "department", "govt": "government", "avg": "average", "qty": "quantity",
}  # fmt: skip


def full_form(word: str) -> str | None:
    """The word a short form stands for ("temp": "temperature"), or None when it is no short form."""
    return SHORT_FORMS.get(word.lower())


__all__ = ["SHORT_FORMS", "full_form"]
