"""A chain of proven rewrites of one nest, proven once more as a whole: the final
text against the original.

Each step of the chain was proven against the text before it (`proof.py`); its
`Rewrite` says which op of that text every new op repeats (`Origin`) and under
which names. Composing the origins step by step gives, for every op of the final
text, the op of the original it repeats and the names its original ivs have
there (followed through each step's renaming: a name that no longer names a
value, a loop hoisted out of, leaves the coordinate free, as in a single proof).
The composed rewrite then goes through the same `Prover` as any transformation.

Every step must rewrite only lines of the nest (the region the original nest's
lines span, as it grows or shrinks), with no edit after it and no values
declared by the transformation (`stands_for`, `operands`), which do not compose:
a chain with such a step is refused (`ProofFailed`), and the caller keeps the
longest prefix that proves.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from affine_lsp.ir import (
    AffineForOp,
    AffineIfOp,
    ModuleModel,
    Operation,
    Value,
    build_module,
    function_of,
)
from affine_lsp.poly import AffineForm, IslSession
from affine_lsp.syntax import SourceDocument, decode, encode
from affine_lsp.transforms.edits import EditMap, line_start, next_line_start
from affine_lsp.transforms.loops.nest import ops_by_start
from affine_lsp.transforms.loops.proof import ProofFailed, Prover, Rewrite, visible_value
from affine_lsp.transforms.loops.scalars import Rotation
from affine_lsp.transforms.loops.text import Origin, Renames

_FREE = "%<free>"  # a name no value has: the coordinate stays free


@dataclass
class Step:
    """One proven step: the model of the text it rewrote, and its rewrite (whose
    origins are ops of that model)."""

    model: ModuleModel
    rewrite: Rewrite


def nest_region(data: bytes, root: AffineForOp) -> tuple[int, int]:
    """The bytes of the lines `root` spans."""
    return line_start(data, root.span.start_byte), next_line_start(data, root.span.end_byte)


def prove_chain(
    session: IslSession, data: bytes, model: ModuleModel, root: AffineForOp, steps: list[Step]
) -> bytes:
    """The final text, proven against `data` (whose nest `root` the steps rewrote
    one after the other); ProofFailed when it is not."""
    if not steps:
        return data
    start, end = nest_region(data, root)
    texts = [data]
    ends = [end]
    for step in steps:
        rewrite = step.rewrite
        if rewrite.extra or rewrite.stands_for or rewrite.operands:
            raise ProofFailed("a step declares values of its own; the chain is proven step by step")
        if not (start <= rewrite.start <= rewrite.end <= ends[-1]):
            raise ProofFailed("a step rewrote code outside the nest")
        new = rewrite.apply(texts[-1])
        ends.append(ends[-1] + len(new) - len(texts[-1]))
        texts.append(new)
    final = texts[-1]
    final_model = build_module(SourceDocument(final).tree.root_node)
    models = [step.model for step in steps] + [final_model]
    by_start = [ops_by_start(m) for m in models]
    origins: dict[int, Origin] = {}
    for op in final_model.walk():
        offset = op.span.start_byte
        if not start <= offset < ends[-1]:
            continue
        origin = _compose(steps, by_start, op, len(steps))
        if origin is not None:
            origins[offset] = origin
    declared = _declared(steps, by_start, final_model)
    carries = _carries(steps, by_start, final_model)
    if carries:  # (the copies of a jammed loop carrying values are told apart by their copy)
        last = steps[-1].rewrite.origins
        for offset, origin in list(origins.items()):
            own = last.get(offset)
            if own is not None and own.copy != origin.copy:
                origins[offset] = replace(origin, copy=own.copy)
        declared["carries"] = carries
    composed = Rewrite(start, end, decode(final[start : ends[-1]]), origins, **declared)  # type: ignore[arg-type]
    function = function_of(root)
    block = root.parent_block
    if function is None or block is None:
        raise ProofFailed("the loop is not in a function")
    position = block.operations.index(root)
    prover = Prover(session, data, model, function, block, position, position)
    proven = prover.prove(composed)
    if proven.new_text != final:
        raise ProofFailed("the composed rewrite does not give the final text")
    return final


def _compose(
    steps: list[Step], by_start: list[dict[int, Operation]], op: Operation, count: int
) -> Origin | None:
    """The origin in the original text of `op` (an op of the text after `count`
    steps), with the value each original iv has at `op`: a name (renames) or, once
    a step generated the code (`Origin.substitution`), an affine form of names."""
    found = _walk_back(steps, by_start, op, count)
    return None if found is None else _origin_from(*found)


def _walk_back(
    steps: list[Step], by_start: list[dict[int, Operation]], op: Operation, count: int
) -> tuple[Operation, list[tuple[Operation, Origin | None]]] | None:
    """(the original op `op` repeats, and each step's (op, origin) on the way, the
    last step first)."""
    chain: list[tuple[Operation, Origin | None]] = []  # (op in text k, origin of step k)
    current = op
    for k in reversed(range(count)):
        rewrite = steps[k].rewrite
        offset = current.span.start_byte
        new_end = rewrite.start + len(encode(rewrite.text))
        if rewrite.start <= offset < new_end:
            origin = rewrite.origins.get(offset) or _loop_origin(rewrite, current)
            if origin is None:
                return None
            chain.append((current, origin))
            current = origin.op
            continue
        old, edit = EditMap(rewrite.edits).to_old(offset)
        previous = by_start[k].get(old) if old is not None else None
        if edit is not None or previous is None:
            return None
        chain.append((current, None))
        current = previous
    return current, chain


def _loop_origin(rewrite: Rewrite, loop: Operation) -> Origin | None:
    """A loop header a step wrote (a jammed loop) stands for the loop around the
    origin of the first op of its body that has one."""
    if not isinstance(loop, AffineForOp) or loop.body is None or loop.body.entry is None:
        return None
    for op in _ops_of_body(loop):
        origin = rewrite.origins.get(op.span.start_byte)
        if origin is None:
            continue
        outer = origin.op.parent_op
        while outer is not None and not isinstance(outer, AffineForOp):
            outer = outer.parent_op
        if outer is None:
            return None
        return Origin(outer, origin.renames, 0)
    return None


def _ops_of_body(loop: AffineForOp) -> list[Operation]:
    """The ops of the loop's body, and of the `affine.if`s in it (a guard the code
    generator wrote around a statement), in order; not those of inner loops."""
    found: list[Operation] = []
    blocks = [loop.body.entry] if loop.body is not None and loop.body.entry is not None else []
    while blocks:
        block = blocks.pop(0)
        for op in block.operations:
            found.append(op)
            if isinstance(op, AffineIfOp):
                blocks += [b for region in op.regions for b in region.blocks]
    return found


def _origin_from(
    original: Operation, chain: list[tuple[Operation, Origin | None]]
) -> Origin | None:
    substituted = any(getattr(o, "substitution", None) for _, o in chain if o is not None)
    renames = Renames()
    forms: dict[int, AffineForm] = {}
    for iv in _ivs_around(original):
        form = _followed(iv, original, chain)
        if form is None:
            renames.set(iv, _FREE)
            continue
        name = form.single_name()
        if name is not None:
            renames.set(iv, name)
        forms[id(iv)] = form
    if not substituted:
        return Origin(original, renames, 0)
    if "substitution" not in Origin.__dataclass_fields__:
        return None
    return Origin(original, renames, 0, forms)  # type: ignore[call-arg, unused-ignore]


def _declared(
    steps: list[Step], by_start: list[dict[int, Operation]], final: ModuleModel
) -> dict[str, object]:
    """What the last step declares for its proof besides origins (scalar
    replacement's promoted elements, ops repeating a first iteration), composed back
    to the original; only the last step may declare any."""
    for step in steps[:-1]:
        if getattr(step.rewrite, "promotions", None) or getattr(
            step.rewrite, "first_iteration", None
        ):
            raise ProofFailed("a step promoted elements to registers before the last step")
    last = steps[-1].rewrite
    rotations = _rotations(steps, by_start)
    promotions = getattr(last, "promotions", None)
    if not promotions:
        return {"rotations": rotations} if rotations else {}
    loops = {op.span.start_byte: op for op in final.walk() if isinstance(op, AffineForOp)}
    count = len(steps)
    composed = []
    for promotion in promotions:
        loop = loops.get(promotion.loop_at)
        if loop is None:
            raise ProofFailed("a promoted element's loop was not found")
        ends = []
        for origin in (promotion.load, promotion.store):
            earlier = _walk_back(steps, by_start, origin.op, count - 1)
            if earlier is None:
                raise ProofFailed("a promoted element has no original")
            original, chain = earlier
            ends.append(_origin_from(original, [(loop, origin), *chain]))
        if ends[0] is None or ends[1] is None:
            raise ProofFailed("a promoted element has no original")
        composed.append(replace(promotion, load=ends[0], store=ends[1]))
    found: dict[str, object] = {
        "promotions": composed,
        "first_iteration": set(last.first_iteration),
    }
    if rotations:
        found["rotations"] = rotations
    return found


def _rotations(steps: list[Step], by_start: list[dict[int, Operation]]) -> list[Rotation]:
    """The values scalar replacement carries to the next iterations, of every step
    (a later step may rewrite other loops only: their offsets followed through its
    edits), each load composed back to the original."""
    ops = by_start[-1]  # (the final text's)
    composed = []
    for k, step in enumerate(steps):
        for rotation in getattr(step.rewrite, "rotations", []):
            loop_at, load_at = rotation.loop_at, rotation.load_at
            for later in steps[k + 1 :]:
                edits = EditMap(later.rewrite.edits)
                loop_at, load_at = edits.to_new(loop_at), edits.to_new(load_at)
                if loop_at is None or load_at is None:
                    raise ProofFailed("a later step rewrote a loop that carries values")
            loop = ops.get(loop_at)
            body = loop.body.entry if isinstance(loop, AffineForOp) and loop.body else None
            if body is None or not body.operations:
                raise ProofFailed("a loop carrying values was not found")
            earlier = _walk_back(steps, by_start, rotation.load.op, k)
            if earlier is None:
                raise ProofFailed("a carried value has no original")
            original, chain = earlier
            origin = _origin_from(original, [(body.operations[-1], rotation.load), *chain])
            if origin is None:
                raise ProofFailed("a carried value has no original")
            composed.append(replace(rotation, loop_at=loop_at, load_at=load_at, load=origin))
    return composed


def _carries(
    steps: list[Step], by_start: list[dict[int, Operation]], final: ModuleModel
) -> dict[int, list[tuple[int, Origin]]]:
    """The loops of the last step carrying the values of several copies (an
    unroll-and-jam across iter_args), each copy composed back to the original; only
    the last step may declare any."""
    for step in steps[:-1]:
        if getattr(step.rewrite, "carries", None):
            raise ProofFailed("a step carried several copies' values before the last step")
    last: dict[int, list[tuple[int, Origin]]] = getattr(steps[-1].rewrite, "carries", {})
    if not last:
        return {}
    loops = {op.span.start_byte: op for op in final.walk() if isinstance(op, AffineForOp)}
    count = len(steps)
    composed: dict[int, list[tuple[int, Origin]]] = {}
    for offset, entries in last.items():
        loop = loops.get(offset)
        if loop is None:
            raise ProofFailed("a loop carrying values was not found")
        found = []
        for position, origin in entries:
            earlier = _walk_back(steps, by_start, origin.op, count - 1)
            if earlier is None:
                raise ProofFailed("a carried value has no original")
            original, chain = earlier
            copy = _origin_from(original, [(loop, origin), *chain])
            if copy is None:
                raise ProofFailed("a carried value has no original")
            found.append((position, replace(copy, copy=origin.copy)))
        composed[offset] = found
    return composed


def _followed(
    iv: Value, original: Operation, chain: list[tuple[Operation, Origin | None]]
) -> AffineForm | None:
    """The value of the original `iv` at the last op of `chain`, as an affine form of
    the names visible there (None: it names nothing any more, the coordinate is
    free)."""
    form = AffineForm(((iv.name, 1),))
    before = original
    for later, origin in reversed(chain):
        mapping: dict[str, AffineForm] = {}
        for name in form.names():
            value = iv if before is original and name == iv.name else _visible(before, name)
            if value is None:
                return None
            if origin is None:
                mapping[name] = AffineForm(((value.name, 1),))
                continue
            substitution = getattr(origin, "substitution", None) or {}
            found = substitution.get(id(value))
            if found is None:
                found = AffineForm(((origin.renames.get(value), 1),))
            mapping[name] = found
        form = _substitute(form, mapping)
        for name in form.names():
            if _visible(later, name) is None:
                return None
        before = later
    return form


def _scaled(form: AffineForm, factor: int) -> AffineForm:
    return AffineForm(
        tuple((name, c * factor) for name, c in form.terms),
        tuple((inner, divisor, c * factor) for inner, divisor, c in form.floors),
        form.constant * factor,
    )


def _sum(forms: list[AffineForm], constant: int) -> AffineForm:
    terms: dict[str, int] = {}
    floors: list[tuple[AffineForm, int, int]] = []
    for form in forms:
        for name, c in form.terms:
            terms[name] = terms.get(name, 0) + c
        floors += form.floors
        constant += form.constant
    return AffineForm(tuple((n, c) for n, c in terms.items() if c), tuple(floors), constant)


def _substitute(form: AffineForm, mapping: dict[str, AffineForm]) -> AffineForm:
    """`form` with each name replaced by its form in `mapping` (iterative over floors)."""
    parts = [_scaled(mapping[name], c) for name, c in form.terms]
    floors = [
        AffineForm((), ((_substitute(inner, mapping), divisor, c),), 0)
        for inner, divisor, c in form.floors
    ]
    return _sum(parts + floors, form.constant)


def _ivs_around(op: Operation) -> list[Value]:
    found: list[Value] = []
    current = op.parent_op
    while current is not None:
        if isinstance(current, AffineForOp) and current.induction_variable is not None:
            found.append(current.induction_variable)
        current = current.parent_op
    return found


def _visible(op: Operation, name: str) -> Value | None:
    """The value named `name` that `op` sees (`visible_value`), or its own induction
    variable."""
    if isinstance(op, AffineForOp) and op.induction_variable is not None:
        if op.induction_variable.name == name:
            return op.induction_variable
    return visible_value(op, name)
