"""BMv2 JSON's values as both code generators read them: hex strings, expression wrappers,
field offsets, and names made identifiers. The program model and both backends import them from
here, below every generator, so neither backend reaches into the other for them."""

import re

from ina.switch.model.errors import PipelineError
from ina.switch.model.layout import HeaderLayout, num

MAX_HEX_DIGITS = 1024  # 4096 bits: shapes.MAX_BITS, the widest value a program may hold
HEXSTR = re.compile(rf"-?0x[0-9a-fA-F]{{1,{MAX_HEX_DIGITS}}}")  # BMv2's hexstr, as p4c writes it


def hexint(text: str) -> int:
    """The value of a BMv2 hex string ("0x..." or "-0x..."); PipelineError for anything else."""
    if type(text) is not str or not HEXSTR.fullmatch(text):
        shown = repr(text[:40]) if isinstance(text, str) else f"a {type(text).__name__}"
        raise PipelineError(f"expected a hex string (0x... or -0x...), got {shown}")
    return int(text, 16)


def field_index(hl: HeaderLayout, index: object) -> int:
    """The offset of an access_field expression, checked against the header's fields."""
    if not 0 <= num(index) < len(hl.fields):
        raise PipelineError(f"header '{hl.name}' has no field at offset {index}")
    return index  # type: ignore[return-value]


def unwrap(expr: dict) -> dict:
    """The operator object of an expression, however many `expression` wrappers p4c put around it."""
    while "op" not in expr and expr.get("type") == "expression":
        expr = expr["value"]
    return expr


def ident(text: str) -> str:
    """`text` with every character but ASCII letters and digits made `_`: safe in a Python or C
    identifier (str.isalnum alone would pass Unicode digits, which are not)."""
    return "".join(c if c.isascii() and c.isalnum() else "_" for c in text)
