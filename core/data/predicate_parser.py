"""The ``--where`` parser: SQL-like text to a :class:`~.predicate.Predicate` tree, literals
typed by the column they are compared with, NOT pushed down to the leaves while parsing."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..errors import InvalidInput
from ..utils.suggest import did_you_mean
from .predicate import Constant, Leaf, Predicate, and_, or_
from .predicate_literal import RawLiteral, coerce_literal
from .types import BooleanType, DataField

# the operator seen from the other side: ``1 < a`` is ``a > 1``
_FLIP = {"=": "=", "<>": "<>", "<": ">", ">": "<", "<=": ">=", ">=": "<="}
_TOKEN = re.compile(
    r"\s*(?:"
    r"(?P<bq>`(?:[^`]|``)*`)"
    r"|(?P<hex>[xX]'[0-9a-fA-F\s]*')"
    r"|(?P<str>'(?:[^']|'')*')"
    r"|(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
    r"|(?P<op><>|!=|<=|>=|==|=|<|>|\(|\)|,|-|\+)"
    r"|(?P<word>[A-Za-z_$][A-Za-z0-9_$]*)"
    r")"
)


def _tokenize(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise InvalidInput(f"--where: cannot parse at {text[pos:pos + 20].strip()!r} (position {pos + 1})")
        kind = m.lastgroup or ""
        val = m.group(kind)
        if kind == "bq":
            val = val[1:-1].replace("``", "`")
        elif kind == "str":
            val = val[1:-1].replace("''", "'")
        elif kind == "hex":
            val = re.sub(r"\s", "", val[2:-1])
        out.append((kind, val))
        pos = m.end()
    return out


# parenthesised levels a predicate may nest: the parser recurses a few frames per level, and
# the predicate tree it builds is walked recursively too
MAX_WHERE_NESTING = 100


class _Parser:
    """Recursive descent: or_expr := and_expr (OR and_expr)*; and_expr := not_expr (AND not_expr)*.

    NOT chains are read in a loop and parentheses may nest MAX_WHERE_NESTING deep, so no input
    can exhaust the stack."""

    def __init__(self, text: str, fields: Sequence[DataField]) -> None:
        self.text = text
        self.toks = _tokenize(text)
        self.i = 0
        self.depth = 0
        self.fields = {f.name: f for f in fields}
        self.lower: dict[str, list[DataField]] = {}
        for f in fields:
            self.lower.setdefault(f.name.lower(), []).append(f)

    # -- token helpers --------------------------------------------------------------------

    def peek(self, k: int = 0) -> tuple[str, str] | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def at_word(self, *words: str, k: int = 0) -> bool:
        t = self.peek(k)
        return t is not None and t[0] == "word" and t[1].upper() in words

    def at_op(self, *ops: str) -> bool:
        t = self.peek()
        return t is not None and t[0] == "op" and t[1] in ops

    def take(self) -> tuple[str, str]:
        t = self.peek()
        if t is None:
            raise InvalidInput(f"--where: unexpected end of {self.text!r}")
        self.i += 1
        return t

    def expect_op(self, op: str) -> None:
        t = self.take()
        if t != ("op", op):
            raise InvalidInput(f"--where: expected {op!r} but found {t[1]!r} in {self.text!r}")

    def expect_word(self, word: str) -> None:
        t = self.take()
        if t[0] != "word" or t[1].upper() != word:
            raise InvalidInput(f"--where: expected {word} but found {t[1]!r} in {self.text!r}")

    # -- grammar --------------------------------------------------------------------------

    def parse(self) -> Predicate:
        if not self.toks:
            raise InvalidInput("--where: empty predicate")
        p = self.or_expr()
        if self.i != len(self.toks):
            raise InvalidInput(f"--where: unexpected {self.toks[self.i][1]!r} in {self.text!r}")
        return p

    def or_expr(self) -> Predicate:
        parts = [self.and_expr()]
        while self.at_word("OR"):
            self.take()
            parts.append(self.and_expr())
        return or_(parts)

    def and_expr(self) -> Predicate:
        parts = [self.not_expr()]
        while self.at_word("AND"):
            self.take()
            parts.append(self.not_expr())
        return and_(parts)

    def not_expr(self) -> Predicate:
        nots = 0
        while self.at_word("NOT"):
            self.take()
            nots += 1
        p = self.primary()
        return p.negate() if nots % 2 else p

    def primary(self) -> Predicate:
        if self.at_op("("):
            self.take()
            self.depth += 1
            if self.depth > MAX_WHERE_NESTING:
                raise InvalidInput(f"--where: parentheses nest more than {MAX_WHERE_NESTING} levels deep")
            p = self.or_expr()
            self.expect_op(")")
            self.depth -= 1
            return p
        if self.at_word("TRUE", "FALSE") and not self._is_column_here():
            return Constant(self.take()[1].upper() == "TRUE")
        if self._is_column_here():
            return self.column_predicate()
        # literal op column
        raw = self.literal()
        t = self.take()
        if t[0] != "op" or t[1] not in ("=", "==", "<>", "!=", "<", "<=", ">", ">="):
            raise InvalidInput(f"--where: expected a comparison after {raw.show()} in {self.text!r}")
        f = self.column()
        op = _FLIP[_norm_op(t[1])]
        return self._compare(op, f, raw)

    def _is_column_here(self) -> bool:
        t = self.peek()
        if t is None:
            return False
        if t[0] == "bq":
            return True
        if t[0] != "word":
            return False
        if t[1].upper() in ("DATE", "TIME", "TIMESTAMP") and (self.peek(1) or ("", ""))[0] == "str":
            return False
        if t[1].upper() in ("NULL", "TRUE", "FALSE"):
            return self._resolve(t[1], quiet=True) is not None
        return True

    def _resolve(self, name: str, quiet: bool = False) -> DataField | None:
        f = self.fields.get(name)
        if f is None:
            cands = self.lower.get(name.lower(), [])
            f = cands[0] if len(cands) == 1 else None
        if f is None and not quiet:
            raise InvalidInput(f"--where: unknown column {name!r}{did_you_mean(name, self.fields)}; "
                               f"columns: {', '.join(self.fields)}")
        return f

    def column(self) -> DataField:
        kind, name = self.take()
        if kind not in ("word", "bq"):
            raise InvalidInput(f"--where: expected a column name but found {name!r} in {self.text!r}")
        f = self._resolve(name)
        assert f is not None
        return f

    def column_predicate(self) -> Predicate:
        f = self.column()
        if self.at_word("IS"):
            self.take()
            neg = False
            if self.at_word("NOT"):
                self.take()
                neg = True
            self.expect_word("NULL")
            return Leaf("is not null" if neg else "is null", f.name, f.type)
        neg = False
        if self.at_word("NOT") and self.at_word("IN", "BETWEEN", k=1):
            self.take()
            neg = True
        if self.at_word("IN"):
            self.take()
            self.expect_op("(")
            raws = [self.literal()]
            while self.at_op(","):
                self.take()
                raws.append(self.literal())
            self.expect_op(")")
            lits = tuple(coerce_literal(r, f.type, f.name) for r in raws)
            return Leaf("not in" if neg else "in", f.name, f.type, lits)
        if self.at_word("BETWEEN"):
            self.take()
            lo = self.literal()
            self.expect_word("AND")
            hi = self.literal()
            p = and_([self._compare(">=", f, lo), self._compare("<=", f, hi)])
            return p.negate() if neg else p
        t = self.peek()
        if t is None or t[0] != "op" or t[1] not in ("=", "==", "<>", "!=", "<", "<=", ">", ">="):
            if isinstance(f.type, BooleanType):  # a bare boolean column means "is true"
                return Leaf("=", f.name, f.type, (True,))
            found = "end of input" if t is None else repr(t[1])
            raise InvalidInput(f"--where: expected a comparison after column {f.name} but found {found}")
        self.take()
        start = self.i
        if self._is_column_here():
            if self.toks[start][0] == "word" and self._resolve(self.toks[start][1], quiet=True) is None:
                raise self._unquoted(f, t[1], start)
            raise InvalidInput(f"--where: comparing two columns is not supported ({f.name} {t[1]} ...)")
        raw = self.literal()
        if self.at_op("-", "+", "/", ":", "."):  # dt = 2024-05-01: a date read as 2024 minus 5 ...
            raise self._unquoted(f, t[1], start)
        return self._compare(_norm_op(t[1]), f, raw)

    def _unquoted(self, f: DataField, op: str, start: int) -> InvalidInput:
        """An unquoted string or date where a literal belongs, with the quoted form as a hint."""
        parts: list[str] = []
        for kind, val in self.toks[start:]:
            if (kind == "word" and val.upper() in ("AND", "OR")) or (kind == "op" and val in "(),"):
                break
            parts.append(val)
        bare = "".join(parts)
        return InvalidInput(f"--where: {bare} is neither a column nor a literal; quote strings and dates: "
                            f"{f.name} {op} '{bare}'")

    def _compare(self, op: str, f: DataField, raw: RawLiteral) -> Predicate:
        v = coerce_literal(raw, f.type, f.name)
        if v is None:
            return Constant(False)  # comparison with NULL is never true
        return Leaf(op, f.name, f.type, (v,))

    def literal(self) -> RawLiteral:
        kind, val = self.take()
        if kind == "op" and val in ("-", "+"):
            k2, v2 = self.take()
            if k2 != "num":
                raise InvalidInput(f"--where: expected a number after {val!r} in {self.text!r}")
            return RawLiteral("num" if "." in v2 or "e" in v2.lower() else "int", ("-" if val == "-" else "") + v2)
        if kind == "num":
            return RawLiteral("num" if "." in val or "e" in val.lower() else "int", val)
        if kind == "str":
            return RawLiteral("str", val)
        if kind == "hex":
            return RawLiteral("hex", val)
        if kind == "word":
            up = val.upper()
            if up in ("TRUE", "FALSE"):
                return RawLiteral("bool", up.lower())
            if up == "NULL":
                return RawLiteral("null", "NULL")
            if up in ("DATE", "TIME", "TIMESTAMP"):
                k2, v2 = self.take()
                if k2 != "str":
                    raise InvalidInput(f"--where: expected a quoted value after {up} in {self.text!r}")
                return RawLiteral(up.lower(), v2)
        raise InvalidInput(f"--where: expected a literal but found {val!r} in {self.text!r}")


def _norm_op(op: str) -> str:
    return {"==": "=", "!=": "<>"}.get(op, op)


def parse_predicate(text: str, fields: Sequence[DataField]) -> Predicate:
    """Parse ``--where`` text against the table's columns (literals typed by column)."""
    return _Parser(text, fields).parse()
