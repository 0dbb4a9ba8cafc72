"""The ops of ODS files (MLIR's TableGen op definitions) and their traits, read
without TableGen: enough of the language for how dialects write their ops.

    def Hls_Dialect : Dialect { let name = "hls"; }
    class Hls_Op<string mnemonic, list<Trait> traits = []>
        : Op<Hls_Dialect, mnemonic, traits>;
    def NodeOp : Hls_Op<"dataflow.node", [AffineScope, IsolatedFromAbove,
        DeclareOpInterfaceMethods<RegionKindInterface>]>;

Classes are instantiated with their arguments down to `Op<dialect, mnemonic,
traits>` (defaults, `!listconcat`, `#` pasting, `defvar`s, `let ... in` blocks
and trait lists (`TraitList<[...]>`) included); an op's dialect is the `name` of
its dialect def. Traits are read by name: `Pure` (or the older `NoSideEffect`, or
`NoMemoryEffect` with `AlwaysSpeculatable`), `NativeOpTrait<"Name">` defs by the
name they give, interfaces and parameterised traits by their class. A def that
derives from a class the files do not define, or whose dialect or mnemonic is
not a plain value, is listed with the reason it could not be read; so are
multiclasses and `foreach` loops, which are not expanded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from affine_lsp.ir.registry import PURE_TRAIT, TRAITS

# -- tokens --------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""
    (?P<space>\s+|//[^\n]*|/\*.*?\*/)
  | (?P<code>\[\{.*?\}\])
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<bang>![A-Za-z_]+)
  | (?P<number>0x[0-9a-fA-F]+|0b[01]+|[-+]?[0-9]+(?![A-Za-z_]))
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*|[0-9]+[A-Za-z_][A-Za-z0-9_]*)
  | (?P<var>\$[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>\.\.\.|[<>\[\](){},;:=#?.|-])
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class _Token:
    kind: str  # name | string | number | bang | code | var | punct | end
    text: str
    line: int  # 1-based


def _tokens(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    position, line = 0, 1
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:  # a character of no token: skipped
            line += text[position] == "\n"
            position += 1
            continue
        kind = match.lastgroup or "punct"
        value = match.group()
        if kind != "space":
            tokens.append(_Token(kind, value, line))
        line += value.count("\n")
        position = match.end()
    tokens.append(_Token("end", "", line))
    return tokens


# -- values --------------------------------------------------------------------------


@dataclass(frozen=True)
class Ref:
    """A name: a def, a class parameter, a defvar or a field."""

    name: str


@dataclass(frozen=True)
class Instance:
    """`Class<args>`: an anonymous instance of a class."""

    name: str
    args: tuple[object, ...]


@dataclass(frozen=True)
class Bang:
    """`!operator(args)`."""

    operator: str
    args: tuple[object, ...]


@dataclass(frozen=True)
class Paste:
    """`left # right`."""

    left: object
    right: object


class Unknown:
    """A value the reader does not evaluate (dags, code, `?`, other operators)."""


UNKNOWN = Unknown()


# -- definitions ---------------------------------------------------------------------


@dataclass
class _Record:
    """A class or a def as written: parameters (classes), parents with their
    arguments, and its `let`s and fields."""

    name: str
    path: Path
    line: int
    params: list[tuple[str, object]] = field(default_factory=list)  # (name, default)
    parents: list[Instance] = field(default_factory=list)
    fields: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class OdsOp:
    """An op read from ODS: its full name and the traits of `TRAITS` it has, and
    every trait name it lists."""

    name: str
    traits: tuple[str, ...]
    listed: tuple[str, ...]
    path: Path
    line: int


@dataclass(frozen=True)
class OdsProblem:
    """A def that was not read, and why."""

    path: Path
    line: int
    name: str
    reason: str


@dataclass
class OdsResult:
    ops: list[OdsOp] = field(default_factory=list)
    problems: list[OdsProblem] = field(default_factory=list)
    dialects: list[str] = field(default_factory=list)  # those of the ops, in order
    element_dialects: list[str] = field(default_factory=list)  # types as memref elements
    files: list[Path] = field(default_factory=list)


class _Unreadable(Exception):
    """Why a def cannot be read."""


class _Parser:
    """Statements of one file: classes, defs, defvars, lets and includes."""

    def __init__(self, reader: OdsReader, path: Path, text: str) -> None:
        self.reader = reader
        self.path = path
        self.tokens = _tokens(text)
        self.at = 0
        self.lets: list[dict[str, object]] = []

    # -- token helpers ---------------------------------------------------------

    @property
    def token(self) -> _Token:
        return self.tokens[self.at]

    def take(self) -> _Token:
        token = self.tokens[self.at]
        if token.kind != "end":
            self.at += 1
        return token

    def accept(self, text: str) -> bool:
        if self.token.text == text and self.token.kind in ("punct", "name"):
            self.at += 1
            return True
        return False

    def skip_balanced(self) -> None:
        """Skip one token, or a bracketed group with what it holds."""
        pairs = {"<": ">", "[": "]", "(": ")", "{": "}"}
        token = self.take()
        if token.text not in pairs or token.kind != "punct":
            return
        closing = [pairs[token.text]]
        while closing and self.token.kind != "end":
            token = self.take()
            if token.kind != "punct":
                continue
            if token.text in pairs:
                closing.append(pairs[token.text])
            elif token.text == closing[-1]:
                closing.pop()

    def skip_statement(self) -> None:
        """Skip to the end of a statement: a `;` or a `{...}` body."""
        while self.token.kind != "end":
            if self.token.text == ";":
                self.take()
                return
            if self.token.text == "{":
                self.skip_balanced()
                return
            self.skip_balanced()

    # -- statements --------------------------------------------------------------

    def statements(self, closing: str | None = None) -> None:
        while self.token.kind != "end":
            if closing is not None and self.accept(closing):
                return
            self.statement()

    def statement(self) -> None:
        token = self.token
        word = token.text if token.kind == "name" else ""
        start = self.at
        try:
            if word == "include":
                self.take()
                name = self.take()
                if name.kind == "string":
                    self.reader.include(self.path, _unquote(name.text))
            elif word in ("class", "def"):
                self.take()
                self.record(word, token.line)
            elif word == "defvar":
                self.take()
                name = self.take().text
                self.accept("=")
                self.reader.variables[name] = self.value()
                self.accept(";")
            elif word == "let":
                self.take()
                self.let_block()
            elif word in ("multiclass", "defm", "foreach", "defset", "if"):
                self.take()
                self.unexpanded(word, token.line)
            else:
                self.skip_balanced()
        except _Unreadable:
            self.at = max(self.at, start + 1)
            self.skip_statement()

    def let_block(self) -> None:
        bindings: dict[str, object] = {}
        while self.token.kind == "name":
            name = self.take().text
            if self.accept("="):
                bindings[name] = self.value()
            if not self.accept(","):
                break
        self.accept("in")
        self.lets.append(bindings)
        try:
            if self.accept("{"):
                self.statements("}")
            else:
                self.statement()
        finally:
            self.lets.pop()

    def unexpanded(self, word: str, line: int) -> None:
        name = self.token.text if self.token.kind == "name" else ""
        start = self.at
        self.skip_statement()
        if word in ("multiclass", "defm", "foreach") and any(
            t.kind == "name" and t.text in self.reader.op_classes() | {"Op"}
            for t in self.tokens[start : self.at]
        ):
            what = f"{word} {name}".strip()
            self.reader.problem(
                self.path, line, what, f"{word} is not expanded: its ops are not read"
            )

    def record(self, kind: str, line: int) -> None:
        name = self.take().text if self.token.kind == "name" else ""
        record = _Record(name, self.path, line)
        if kind == "class" and self.accept("<"):
            while self.token.kind != "end" and not self.accept(">"):
                if self.token.kind == "name":  # type, then the parameter's name
                    self.type_name()
                parameter = self.take().text
                default: object = UNKNOWN
                if self.accept("="):
                    default = self.value()
                record.params.append((parameter, default))
                self.accept(",")
        if self.accept(":"):
            while True:
                parent = self.take()
                if parent.kind != "name":
                    raise _Unreadable
                args: tuple[object, ...] = ()
                if self.accept("<"):
                    args = self.arguments(">")
                record.parents.append(Instance(parent.text, args))
                if not self.accept(","):
                    break
        for bindings in self.lets:
            record.fields.update(bindings)
        if self.accept("{"):
            self.body(record)
        else:
            self.accept(";")
        if kind == "class":
            self.reader.classes[name] = record
        else:
            self.reader.add_def(record)

    def body(self, record: _Record) -> None:
        while self.token.kind != "end" and not self.accept("}"):
            if self.accept("let"):
                name = self.take().text
                if self.accept("="):
                    record.fields[name] = self.value()
                self.accept(";")
            elif self.token.kind == "name" and self.token.text not in ("def", "class"):
                # a field: `TYPE name = value;` (or `field TYPE ...`)
                self.accept("field")
                self.type_name()
                name = self.take().text
                if self.accept("="):
                    record.fields[name] = self.value()
                self.accept(";")
            else:
                self.skip_balanced()

    def type_name(self) -> None:
        self.take()
        if self.token.text == "<":
            self.skip_balanced()

    # -- values --------------------------------------------------------------------

    def arguments(self, closing: str) -> tuple[object, ...]:
        values: list[object] = []
        while self.token.kind != "end" and not self.accept(closing):
            values.append(self.value())
            if not self.accept(","):
                if not self.accept(closing):
                    raise _Unreadable
                break
        return tuple(values)

    def value(self) -> object:
        value = self.simple_value()
        while self.token.text == "#" and self.token.kind == "punct":
            self.take()
            if self.token.text in (",", ">", "]", ";", ")"):  # `x#`: nothing pasted
                break
            value = Paste(value, self.simple_value())
        return value

    def simple_value(self) -> object:
        token = self.take()
        if token.kind == "string":
            text = _unquote(token.text)
            while self.token.kind == "string":  # adjacent strings are one
                text += _unquote(self.take().text)
            return text
        if token.kind == "number":
            return int(token.text, 0)
        if token.kind == "code":
            return UNKNOWN
        if token.kind == "bang":
            args: tuple[object, ...] = ()
            if self.accept("<"):  # (a type: `!cast<Trait>(...)`)
                self.at -= 1
                self.skip_balanced()
            if self.accept("("):
                args = self.arguments(")")
            return Bang(token.text[1:], args)
        if token.kind == "name":
            if self.accept("<"):
                return Instance(token.text, self.arguments(">"))
            while self.token.text == "." and self.token.kind == "punct":  # `Def.field`
                self.take()
                self.take()
                return UNKNOWN
            return Ref(token.text)
        if token.text == "[":
            items = self.arguments("]")
            if self.accept("<"):  # `[...]<Type>`: a typed list
                self.at -= 1
                self.skip_balanced()
            return list(items)
        if token.text in ("(", "{"):
            self.at -= 1
            self.skip_balanced()
            return UNKNOWN
        if token.text == "?":
            return UNKNOWN
        raise _Unreadable


def _unquote(text: str) -> str:
    return text[1:-1].encode("utf-8").decode("unicode_escape", "replace")


# -- evaluation ----------------------------------------------------------------------

_BASE_OP = "Op"
_TRAIT_LIST = "TraitList"
_NATIVE_TRAIT = "NativeOpTrait"
_OLD_PURE = "NoSideEffect"  # (MLIR's name for Pure before 2022)
_PURE_PARTS = {"NoMemoryEffect", "AlwaysSpeculatable"}
_MEMREF_ELEMENT = "MemRefElementTypeInterface"
_DEPTH = 64


class OdsReader:
    """Reads ODS files (and the files they include that are found) into ops; the
    files' text comes from `source_of` (this layer reads no files itself)."""

    def __init__(self, source_of: Callable[[Path], str]) -> None:
        self._source_of = source_of
        self.classes: dict[str, _Record] = {}
        self.defs: dict[str, _Record] = {}
        self.order: list[_Record] = []
        self.variables: dict[str, object] = {}
        self.result = OdsResult()
        self._read: set[Path] = set()
        self._roots: list[Path] = []

    # -- reading -----------------------------------------------------------------------

    def read(self, paths: list[Path]) -> OdsResult:
        """The ops of the `.td` files given (folders: every `.td` file under them)."""
        files = [f for path in paths for f in _td_files(path)]
        self._roots = [p if p.is_dir() else p.parent for p in paths]
        for path in files:
            self.read_file(path)
        self.result.files = files
        for record in self.order:
            self.evaluate_def(record)
        self.result.element_dialects = self._element_dialects()
        return self.result

    def read_file(self, path: Path) -> None:
        resolved = path.resolve()
        if resolved in self._read:
            return
        self._read.add(resolved)
        try:
            text = self._source_of(path)
        except OSError as error:
            self.problem(path, 0, path.name, f"cannot read: {error.strerror or error}")
            return
        _Parser(self, path, text).statements()

    def include(self, source: Path, name: str) -> None:
        """Read an included file if it is found beside the file that includes it or
        under a folder given (MLIR's own files are not needed)."""
        for folder in (source.parent, *self._roots):
            for candidate in (folder / name, folder / Path(name).name):
                if candidate.is_file():
                    self.read_file(candidate)
                    return

    def add_def(self, record: _Record) -> None:
        if record.name:
            self.defs[record.name] = record
        self.order.append(record)

    def problem(self, path: Path, line: int, name: str, reason: str) -> None:
        self.result.problems.append(OdsProblem(path, line, name, reason))

    def op_classes(self) -> set[str]:
        """Classes that lead to `Op`."""
        found = set()
        for name in self.classes:
            if self._leads_to_op(name, 0):
                found.add(name)
        return found

    def _leads_to_op(self, name: str, depth: int) -> bool:
        if name == _BASE_OP:
            return True
        record = self.classes.get(name)
        if record is None or depth > _DEPTH:
            return False
        return any(self._leads_to_op(p.name, depth + 1) for p in record.parents)

    # -- defs ------------------------------------------------------------------------

    def evaluate_def(self, record: _Record) -> None:
        """An op from a def that derives from `Op`; defs of other kinds are left be,
        and a def whose parent is not defined is reported when it looks like an op."""
        unknown = [p.name for p in record.parents if p.name != _BASE_OP and not self._known(p)]
        if not any(self._leads_to_op(p.name, 0) for p in record.parents):
            if unknown and any(_looks_like_op_class(name) for name in unknown):
                self.problem(
                    record.path,
                    record.line,
                    record.name,
                    f"its class {unknown[0]} is not defined in the files read",
                )
            return
        try:
            dialect_value, mnemonic, traits = self._op_arguments(record)
            dialect = self._dialect_name(dialect_value)
            if not isinstance(mnemonic, str):
                raise _Unreadable("its mnemonic is not a string")
        except _Unreadable as reason:
            self.problem(record.path, record.line, record.name, str(reason))
            return
        listed = self._trait_names(traits)
        understood = _understood(listed)
        self.result.ops.append(
            OdsOp(
                f"{dialect}.{mnemonic}",
                understood,
                tuple(listed),
                record.path,
                record.line,
            )
        )
        if dialect not in self.result.dialects:
            self.result.dialects.append(dialect)

    def _known(self, parent: Instance) -> bool:
        return parent.name in self.classes

    def _op_arguments(self, record: _Record) -> tuple[object, object, object]:
        """(dialect, mnemonic, traits) of the `Op<...>` a def derives from."""
        environment: dict[str, object] = {}
        for parent in record.parents:
            if self._leads_to_op(parent.name, 0):
                return self._instantiate(parent, environment, 0)
        raise _Unreadable("it does not derive from Op")

    def _instantiate(
        self, instance: Instance, environment: dict[str, object], depth: int
    ) -> tuple[object, object, object]:
        args = [self.evaluate(a, environment, depth) for a in instance.args]
        if instance.name == _BASE_OP:  # Op<dialect, mnemonic, traits = []>
            if len(args) < 2:
                raise _Unreadable("its Op<...> has no dialect and mnemonic")
            return args[0], args[1], args[2] if len(args) > 2 else []
        record = self.classes.get(instance.name)
        if record is None or depth > _DEPTH:
            raise _Unreadable(f"its class {instance.name} is not defined in the files read")
        bound: dict[str, object] = {}
        for index, (name, default) in enumerate(record.params):
            if index < len(args):
                bound[name] = args[index]
            else:
                bound[name] = self.evaluate(default, bound, depth + 1)
        for parent in record.parents:
            if self._leads_to_op(parent.name, 0):
                return self._instantiate(parent, bound, depth + 1)
        raise _Unreadable(f"its class {instance.name} does not derive from Op")

    def evaluate(self, value: object, environment: dict[str, object], depth: int) -> object:
        """A value with names of parameters and defvars replaced, lists concatenated
        and strings pasted (what is not understood stays as it is)."""
        if depth > _DEPTH:
            return UNKNOWN
        if isinstance(value, Ref):
            if value.name in environment:
                return environment[value.name]
            if value.name in self.variables:
                return self.evaluate(self.variables[value.name], {}, depth + 1)
            return value
        if isinstance(value, list):
            return [self.evaluate(item, environment, depth + 1) for item in value]
        if isinstance(value, Instance):
            args = tuple(self.evaluate(a, environment, depth + 1) for a in value.args)
            return Instance(value.name, args)
        if isinstance(value, Paste):
            left = self.evaluate(value.left, environment, depth + 1)
            right = self.evaluate(value.right, environment, depth + 1)
            return _paste(left, right)
        if isinstance(value, Bang):
            args = tuple(self.evaluate(a, environment, depth + 1) for a in value.args)
            lists = [a for a in args if isinstance(a, list)]
            strings = [a for a in args if isinstance(a, str)]
            if value.operator == "listconcat" and len(lists) == len(args):
                return [item for a in lists for item in a]
            if value.operator == "strconcat" and len(strings) == len(args):
                return "".join(strings)
            return UNKNOWN
        return value

    def _dialect_name(self, value: object) -> str:
        if isinstance(value, Ref):
            record = self.defs.get(value.name)
            name = record.fields.get("name") if record is not None else None
            if isinstance(name, str):
                return name
            raise _Unreadable(f"its dialect {value.name} has no name the files give")
        raise _Unreadable("its dialect is not a def")

    def _trait_names(self, traits: object, depth: int = 0) -> list[str]:
        """The names of the traits of a list, trait lists expanded."""
        if not isinstance(traits, list) or depth > _DEPTH:
            return []
        names: list[str] = []
        for trait in traits:
            if isinstance(trait, list):
                names += self._trait_names(trait, depth + 1)
            elif isinstance(trait, Ref):
                names += self._named_trait(trait.name, depth)
            elif isinstance(trait, Instance):
                if trait.name == _TRAIT_LIST and trait.args:
                    names += self._trait_names(self.evaluate(trait.args[0], {}, 0), depth + 1)
                else:
                    names.append(trait.name)
        return names

    def _named_trait(self, name: str, depth: int) -> list[str]:
        """A trait written by name: a def of these files that is a trait list or a
        native trait under another name, or an upstream trait."""
        record = self.defs.get(name)
        if record is None:
            return [name]
        for parent in record.parents:
            if parent.name == _TRAIT_LIST and parent.args:
                return self._trait_names(self.evaluate(parent.args[0], {}, 0), depth + 1)
            if parent.name == _NATIVE_TRAIT and parent.args and isinstance(parent.args[0], str):
                return [parent.args[0]]
        return [name]

    def _element_dialects(self) -> list[str]:
        """Dialects with a type that declares MemRefElementTypeInterface."""
        found: list[str] = []
        for record in self.order:
            for parent in record.parents:
                names = [
                    n
                    for arg in parent.args
                    for n in self._trait_names(self.evaluate(arg, {}, 0))
                    if isinstance(arg, list)
                ]
                if _MEMREF_ELEMENT not in names:
                    continue
                dialect = self._type_dialect(parent, 0)
                if dialect is not None and dialect not in found:
                    found.append(dialect)
        return found

    def _type_dialect(self, instance: Instance, depth: int) -> str | None:
        """The dialect of a type def's class chain (`TypeDef<Dialect, ...>`)."""
        if depth > _DEPTH:
            return None
        if instance.name in ("TypeDef", "AttrDef") and instance.args:
            try:
                return self._dialect_name(instance.args[0])
            except _Unreadable:
                return None
        record = self.classes.get(instance.name)
        if record is None:
            return None
        bound = {name: arg for (name, _), arg in zip(record.params, instance.args, strict=False)}
        for parent in record.parents:
            evaluated = self.evaluate(parent, bound, depth + 1)
            if isinstance(evaluated, Instance):
                found = self._type_dialect(evaluated, depth + 1)
                if found is not None:
                    return found
        return None


def _paste(left: object, right: object) -> object:
    if isinstance(left, str) and isinstance(right, str):
        return left + right
    if isinstance(left, list) and isinstance(right, list):
        return left + right
    return UNKNOWN


def _understood(listed: list[str]) -> tuple[str, ...]:
    """The traits of `TRAITS` among the names an op lists, in `TRAITS`' order."""
    names = set(listed)
    if _OLD_PURE in names or _PURE_PARTS <= names:
        names.add(PURE_TRAIT)
    return tuple(trait for trait in TRAITS if trait in names)


def _looks_like_op_class(name: str) -> bool:
    return name.endswith("Op") or "_Op" in name or name.endswith("Op_")


def _td_files(path: Path) -> Iterator[Path]:
    if path.is_dir():
        yield from sorted(p for p in path.rglob("*.td") if p.is_file())
    else:
        yield path


def read_ods(paths: list[Path], source_of: Callable[[Path], str]) -> OdsResult:
    """The ops of the ODS files (or folders of them) at `paths`, whose text
    `source_of` gives (OSError if it cannot)."""
    return OdsReader(source_of).read(paths)
