"""What a question names, read from its words: a day, which a packed recall opens the scenes of
(docs/concepts.md, "The evidence"). English only; a question that names none is recalled as
any other."""

from __future__ import annotations

import datetime as dt
import re

_MONTHS = {m.lower(): n for n, m in enumerate(("January February March April May June July August September "
                                                "October November December").split(), 1)}
_MONTH = r"(?P<{}>" + "|".join(sorted({m[:3] for m in _MONTHS} | set(_MONTHS) | {"sept"}, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<{}>\d{{1,2}})(?:st|nd|rd|th)?"
_YEAR = r"(?:(?:,\s*|\s+)(?P<{}>\d{{4}}))?"   # "8 May 2023", "8 May, 2023", "May 8,2023"; or none
NAMED_DAY = re.compile(r"\b(?:" + _DAY.format("d1") + r"\s+(?:of\s+)?" + _MONTH.format("m1") + _YEAR.format("y1") +
                       r"|" + _MONTH.format("m2") + r"\s+" + _DAY.format("d2") + _YEAR.format("y2") +
                       r"|(?P<y3>\d{4})-(?P<m3>\d\d)-(?P<d3>\d\d))\b", re.IGNORECASE)
DAY_AFTER = 2     # the days after a named day whose turns may tell of it ("yesterday", "last night")


def named_days(query: str) -> tuple[str, str] | None:
    """The window of days a query names, from its first named day to DAY_AFTER days after its
    last, as (since, until): ISO days, `until` exclusive ("What did Jo watch on 1 May, 2022?":
    ("2022-05-01", "2022-05-04")). A day written without its year takes the year of the next
    day the query names with one ("between August 11 and August 15 2023"). None when it names
    no whole day (a month or a year alone, a day of no year)."""
    named = []   # (year or None, month, day)
    for m in NAMED_DAY.finditer(query or ""):
        year, month, day = ((m["y1"], m["m1"], m["d1"]) if m["m1"] else (m["y2"], m["m2"], m["d2"]) if m["m2"]
                            else (m["y3"], m["m3"], m["d3"]))
        number = int(month) if month.isdigit() else next(n for name, n in _MONTHS.items()
                                                         if name.startswith(month.lower()))
        named.append((int(year) if year else None, number, int(day)))
    days, later = [], None
    for year, month, day in reversed(named):
        later = year or later
        if later is None:
            continue
        try:
            days.append(dt.date(later, month, day))
        except ValueError:   # "31 February": not a day
            continue
    if not days:
        return None
    try:
        return min(days).isoformat(), (max(days) + dt.timedelta(days=DAY_AFTER + 1)).isoformat()
    except OverflowError:
        return None
