"""Money amounts with an ISO-4217 currency, found in free text. Pure: no I/O.

Accepted notations: a currency before the number (``€42.50``, ``USD 1,200.00``, ``US$5``) or
after it (``42.50 EUR``, ``1.200,00 €``, ``42,50 €``, ``42.50 euros``). A number without a
currency is never an amount, so dates, times, phone numbers and versions are not read as money.

Reading rules, in order:

* Grouped thousands with one consistent separator (``1,200,000``, ``1.200.000``, ``1 200``,
  ``1'200``), optionally followed by a decimal part with the other separator (``1,200.50``,
  ``1.200,50``).
* A single ``.`` or ``,`` followed by exactly three digits groups thousands (``1,200`` and
  ``1.200`` are 1200), unless the integer part is ``0``, longer than three digits, or the
  currency has three minor digits (``1.250 BHD`` is 1.250).
* Any other single ``.`` or ``,`` is the decimal separator (``42,50`` is 42.50).

The amount keeps at least the currency's minor digits (``$1,200`` is ``Decimal("1200.00")``,
``¥1200`` is ``Decimal("1200")``). A bare ``$`` is read as USD and ``¥`` as JPY; prefixed
dollars name their currency (``US$`` USD, ``CA$``/``C$`` CAD, ``A$``/``AU$`` AUD, ...).
ISO codes are matched in upper case only, so words such as "try" or "all" are never currencies.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from types import MappingProxyType

__all__ = [
    "DEFAULT_CURRENCIES",
    "DEFAULT_CURRENCY_NAMES",
    "DEFAULT_CURRENCY_SYMBOLS",
    "Money",
    "format_amount",
    "minor_digits",
    "parse_money",
    "with_minor_digits",
]

DEFAULT_CURRENCIES: frozenset[str] = frozenset(
    "USD EUR GBP JPY CHF CAD AUD NZD CNY HKD SGD SEK NOK DKK ISK PLN CZK HUF RON BGN TRY RUB "
    "UAH ILS AED SAR QAR KWD BHD OMR JOD INR PKR BDT LKR IDR MYR THB VND PHP KRW TWD BRL MXN "
    "ARS CLP COP PEN ZAR EGP NGN KES MAD TND".split()
)
DEFAULT_CURRENCY_SYMBOLS: Mapping[str, str] = MappingProxyType(
    {
        "€": "EUR", "£": "GBP", "¥": "JPY", "$": "USD", "₹": "INR", "₩": "KRW", "₺": "TRY",
        "₪": "ILS", "₽": "RUB", "₴": "UAH", "US$": "USD", "CA$": "CAD", "C$": "CAD",
        "A$": "AUD", "AU$": "AUD", "NZ$": "NZD", "HK$": "HKD", "S$": "SGD", "R$": "BRL",
        "MX$": "MXN",
    }
)  # fmt: skip
DEFAULT_CURRENCY_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "euro": "EUR", "euros": "EUR", "dollar": "USD", "dollars": "USD",
        "us dollars": "USD", "yen": "JPY", "pound sterling": "GBP", "pounds sterling": "GBP",
        "swiss francs": "CHF",
    }
)  # fmt: skip

_MINOR_DIGITS = {
    "JPY": 0, "KRW": 0, "ISK": 0, "CLP": 0, "VND": 0, "IDR": 0,
    "BHD": 3, "KWD": 3, "OMR": 3, "JOD": 3, "TND": 3,
}  # fmt: skip
_MAX_DIGITS = 24

# One group separator, used consistently (backreference), then an optional decimal part.
_NUMBER = (
    r"(?P<num>\d{1,3}(?P<sep>[,.'’ \u00a0\u202f])\d{3}(?:(?P=sep)\d{3})*(?:[.,]\d{1,4})?"
    r"|\d+(?:[.,]\d{1,4})?)"
)
# Not inside a word, a date, a time, a version or a longer number (``1234 567`` is not 567).
_BEFORE_NUMBER = r"(?<![\w.,:/'’])(?<!\w-)(?<!\d[ \u00a0\u202f])"
_AFTER_NUMBER = r"(?![\w]|[.,:/]\d)"
_SPACE = r"[ \u00a0\u202f]?"


@dataclass(frozen=True, slots=True)
class Money:
    """An amount found in text.

    ``amount`` keeps at least the currency's minor digits; ``raw`` is the matched text and
    ``span`` its ``(start, end)`` offsets in the input.
    """

    amount: Decimal
    currency: str
    raw: str
    span: tuple[int, int]

    @property
    def text(self) -> str:
        """The canonical text, e.g. ``"1200.00 EUR"``; :func:`parse_money` reads it back."""
        return format_amount(self.amount, self.currency)


def minor_digits(currency: str) -> int:
    """How many decimal digits the currency's minor unit has (2 unless known otherwise)."""
    return _MINOR_DIGITS.get(currency, 2)


def with_minor_digits(amount: Decimal, currency: str) -> Decimal:
    """Return *amount* with at least the currency's minor digits (``42`` EUR -> ``42.00``).

    Three decimals on a two-digit currency become four (``1.125`` -> ``1.1250``), so that the
    canonical text never reads back as grouped thousands.
    """
    minor = minor_digits(currency)
    exponent = amount.as_tuple().exponent
    if isinstance(exponent, int) and -exponent < minor:
        return amount.quantize(Decimal(1).scaleb(-minor))
    if exponent == -3 and minor != 3 and 1 <= abs(amount) < 1000:
        # "1.125 EUR" would read back as 1125.00: a fourth digit keeps the text unambiguous.
        return amount.quantize(Decimal("0.0001"))
    return amount


def format_amount(amount: Decimal, currency: str) -> str:
    """Canonical ``"<amount> <CODE>"`` text, without exponent or grouping."""
    return f"{amount:f} {currency}"


def parse_money(
    text: str,
    *,
    currencies: frozenset[str] = DEFAULT_CURRENCIES,
    symbols: Mapping[str, str] = DEFAULT_CURRENCY_SYMBOLS,
    names: Mapping[str, str] = DEFAULT_CURRENCY_NAMES,
) -> list[Money]:
    """Return the money amounts in *text*, in order of appearance, without overlaps.

    Args:
        text: free text.
        currencies: ISO-4217 codes accepted; a code or symbol mapping elsewhere is ignored.
        symbols: currency symbols (before or after the number) and their ISO code.
        names: lower-case currency words (after the number only) and their ISO code.

    >>> [m.text for m in parse_money("refund €42.50, not 1.200,00 € or 10:30")]
    ['42.50 EUR', '1200.00 EUR']
    """
    prefix, suffix = _patterns(tuple(sorted(symbols)), tuple(sorted(names)))
    found: list[Money] = []
    for pattern in (prefix, suffix):
        for match in pattern.finditer(text):
            marker = match.group("cur")
            code = symbols.get(marker) or names.get(marker.lower()) or marker
            if code not in currencies:
                continue
            amount = _to_decimal(match.group("num"), match.group("sep"), code)
            if amount is not None:
                found.append(Money(amount, code, match.group(0), match.span()))
    found.sort(key=lambda m: (m.span[0], -m.span[1]))
    out: list[Money] = []
    for money in found:
        if not out or money.span[0] >= out[-1].span[1]:
            out.append(money)
    return out


@functools.lru_cache(maxsize=32)
def _patterns(symbols: tuple[str, ...], names: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    marks = "|".join(re.escape(s) for s in sorted(symbols, key=len, reverse=True))
    words = "|".join(
        r"\s+".join(map(re.escape, n.split())) for n in sorted(names, key=len, reverse=True)
    )
    # ISO codes are upper case only: "try", "all" or "cup" in prose are not currencies.
    code = r"(?<![A-Za-z])[A-Z]{3}(?![A-Za-z])"
    marker = "|".join(p for p in (code, marks) if p)
    named = f"|(?i:{words})(?![A-Za-z])" if words else ""
    prefix = re.compile(f"(?<![A-Za-z0-9])(?P<cur>{marker}){_SPACE}{_NUMBER}{_AFTER_NUMBER}")
    # "5 $10" is ten dollars: a marker followed by a digit belongs to the number after it.
    suffix = re.compile(f"{_BEFORE_NUMBER}{_NUMBER}{_SPACE}(?P<cur>{marker}{named})(?!{_SPACE}\\d)")
    return prefix, suffix


def _to_decimal(num: str, group_sep: str | None, currency: str) -> Decimal | None:
    minor = minor_digits(currency)
    separators = [c for c in num if not c.isdigit()]
    if len(separators) == 1 and separators[0] in ".,":
        integer, _, fraction = num.replace(",", ".").partition(".")
        thousands = len(fraction) == 3 and integer != "0" and len(integer) <= 3 and minor != 3
        digits = integer + fraction if thousands else f"{integer}.{fraction}"
    elif group_sep is not None:
        cut = max(num.rfind("."), num.rfind(","))
        if num[-4:-3] == group_sep:
            digits = num.replace(group_sep, "")
        elif num[cut] == group_sep:
            return None
        else:
            digits = num[:cut].replace(group_sep, "") + "." + num[cut + 1 :]
    else:
        digits = num
    if len(digits.partition(".")[0]) > _MAX_DIGITS:
        return None
    try:
        amount = Decimal(digits)
    except InvalidOperation:
        return None
    return with_minor_digits(amount, currency)
