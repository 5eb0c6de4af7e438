"""Can a type's native memory layout be rebuilt from reflection?

A target with native structs may embed a reflected object by value only if
it reproduces the object's bytes exactly. The registry gives each type's
``sizeof`` (``ObjectInfo.total_size``) and each field's size, alignment and
offset; the rule is:

    the type's own fields, by ascending offset, must cover the bytes
    ``[parent's total_size, total_size)``, leaving only gaps that alignment
    forces (each field starts at the cursor rounded up to its alignment; the
    end is the cursor rounded up to the object's alignment, the largest
    along the chain, the 8-byte header's included).

The type must have its own size (a type without metadata of its own only
shares its parent's), every field its byte facts, and the parent must pass
first. A type that fails is *opaque*, which is an ordinary outcome: a
generator then reads the fields through the C ABI. Targets add two rules of
their own: which fields have a native mirror, and which types must stay
opaque regardless. The coverage report records each verdict with its byte
evidence.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Literal, Optional, Tuple

if TYPE_CHECKING:
    from collections.abc import Mapping
    from collections.abc import Set as AbstractSet
    from pathlib import Path

    from .utils import NamedTypeSchema, ObjectInfo

#: Alignment of the object header (its 64-bit reference count): the least any object has.
OBJECT_HEADER_ALIGNMENT = 8

OpaqueReason = Literal[
    "layout-unknown",
    "parent-opaque",
    "field-overlap",
    "uncovered-bytes",
    "unrenderable-field",
    "by-directive",
    "no-mirror",
]
"""Why a type is opaque: no size or field facts (``layout-unknown``), an opaque
parent (``parent-opaque``), a field before the cursor or past the end
(``field-overlap``), bytes no field or alignment explains (``uncovered-bytes``),
a field the target cannot mirror (``unrenderable-field``), a veto of the
target (``by-directive``), or a type whose bytes the target never mirrors
(``no-mirror``)."""

_Failure = Tuple[OpaqueReason, str]


def align_up(value: int, alignment: int) -> int:
    """``value`` rounded up to a multiple of ``alignment``."""
    return -(-value // alignment) * alignment


@dataclasses.dataclass(frozen=True)
class ByteRange:
    """Bytes ``[start, end)`` of an object."""

    start: int
    end: int

    def __str__(self) -> str:
        return f"[{self.start}, {self.end})"

    def to_json_obj(self) -> List[int]:
        """``[start, end]``."""
        return [self.start, self.end]


@dataclasses.dataclass(frozen=True)
class FieldBytes:
    """Where one reflected field sits."""

    name: str
    offset: int
    size: int
    alignment: int

    @property
    def end(self) -> int:
        """The byte after the field."""
        return self.offset + self.size

    def to_json_obj(self) -> Dict[str, Any]:
        """The four facts as a JSON object."""
        return {"name": self.name, "offset": self.offset, "size": self.size, "alignment": self.alignment}


@dataclasses.dataclass
class Verdict:
    """Whether one type's layout is reproducible, and the bytes that decided it."""

    type_key: str
    verdict: Literal["complete", "opaque"]
    reason: Optional[OpaqueReason]
    """``None`` when complete; else the rule that failed."""
    detail: str
    """The decision in words, quoting bytes."""
    parent_type_key: Optional[str]
    ancestors: List[str]
    total_size: Optional[int]
    is_final: Optional[bool]
    alignment: Optional[int] = None
    """The object's alignment along its chain."""
    own_bytes: Optional[ByteRange] = None
    """The bytes the type's own fields must cover."""
    fields: List[FieldBytes] = dataclasses.field(default_factory=list)
    """The type's own fields by offset (empty when their bytes are unknown)."""
    uncovered: List[ByteRange] = dataclasses.field(default_factory=list)
    """Bytes of ``own_bytes`` neither a field nor alignment explains."""
    padding: List[ByteRange] = dataclasses.field(default_factory=list)
    """Gaps alignment explains."""

    @property
    def is_complete(self) -> bool:
        """Whether the layout is reproducible."""
        return self.verdict == "complete"

    def to_json_obj(self) -> Dict[str, Any]:
        """The target-neutral coverage-report entry."""
        return {
            "verdict": self.verdict,
            "reason": self.reason,
            "detail": self.detail,
            "parent": self.parent_type_key,
            "ancestors": list(self.ancestors),
            "total_size": self.total_size,
            "is_final": self.is_final,
            "own_bytes": self.own_bytes.to_json_obj() if self.own_bytes is not None else None,
            "fields": [f.to_json_obj() for f in self.fields],
            "uncovered": [r.to_json_obj() for r in self.uncovered],
            "padding": [r.to_json_obj() for r in self.padding],
        }


def classify(
    infos: Mapping[str, ObjectInfo],
    *,
    forced_opaque: AbstractSet[str] = frozenset(),
    unmirrored: AbstractSet[str] = frozenset(),
    field_renderable: Optional[Callable[[NamedTypeSchema], bool]] = None,
) -> Dict[str, Verdict]:
    """Decide every type of ``infos`` (which must hold each one's ancestors too).

    ``forced_opaque`` demotes otherwise complete types (``by-directive``);
    ``unmirrored`` marks types the target never reproduces (``no-mirror``,
    before any byte is looked at); ``field_renderable`` says whether the
    target can mirror a field (``unrenderable-field`` when not; every field
    can when it is ``None``).
    """
    verdicts: Dict[str, Verdict] = {}

    def decide(key: str) -> Verdict:
        done = verdicts.get(key)
        if done is not None:
            return done
        if key not in infos:
            raise KeyError(f"Ancestor {key!r} is not among the types to classify")
        info = infos[key]
        parent = decide(info.parent_type_key) if info.parent_type_key is not None else None
        verdicts[key] = _classify_one(info, parent, forced_opaque, unmirrored, field_renderable)
        return verdicts[key]

    for key in infos:
        decide(key)
    return verdicts


def _classify_one(
    info: ObjectInfo,
    parent: Optional[Verdict],
    forced_opaque: AbstractSet[str],
    unmirrored: AbstractSet[str],
    field_renderable: Optional[Callable[[NamedTypeSchema], bool]],
) -> Verdict:
    if info.type_key is None:
        raise ValueError("cannot classify an ObjectInfo without a type key")
    out = Verdict(
        type_key=info.type_key,
        verdict="opaque",
        reason=None,
        detail="",
        parent_type_key=info.parent_type_key,
        ancestors=list(info.ancestors),
        total_size=info.total_size,
        is_final=info.is_final,
    )
    if info.type_key in unmirrored:
        out.reason, out.detail = "no-mirror", "its bytes are owned by the target's runtime and never mirrored"
        return out
    failure = _prove_layout(info, parent, out) or _apply_target_rules(info, forced_opaque, field_renderable)
    if failure is not None:
        out.reason, out.detail = failure
        return out
    out.verdict = "complete"
    if parent is None:
        out.detail = f"object header [0, {info.total_size}): owned by the C ABI"
    else:
        out.detail = f"reflected fields fill {out.own_bytes} exactly"
        if out.padding:
            out.detail += f" (alignment padding {', '.join(map(str, out.padding))})"
    return out


def _prove_layout(info: ObjectInfo, parent: Optional[Verdict], verdict: Verdict) -> Optional[_Failure]:
    """Check the facts exist and the fields cover the type's bytes; ``None`` when they do.

    The evidence (fields, own bytes, alignment, gaps) is recorded on ``verdict``.
    """
    if info.total_size is None:
        return "layout-unknown", "no metadata of its own: total_size is unknown"
    fields = _field_bytes(info)
    if isinstance(fields, str):
        return "layout-unknown", fields
    verdict.fields = fields
    if parent is None:  # the root: the object header, which the C ABI owns
        verdict.alignment = OBJECT_HEADER_ALIGNMENT
        verdict.own_bytes = ByteRange(info.total_size, info.total_size)
        return None
    if not parent.is_complete:
        return "parent-opaque", f"parent {parent.type_key!r} is opaque ({parent.reason})"
    assert parent.total_size is not None and parent.alignment is not None
    verdict.own_bytes = ByteRange(parent.total_size, info.total_size)
    verdict.alignment = max([parent.alignment] + [f.alignment for f in fields])
    return _fill(verdict)


def _field_bytes(info: ObjectInfo) -> Any:
    """The type's own fields sorted by offset, or (a string) why their bytes are unknown."""
    out: List[FieldBytes] = []
    for f in info.fields:
        if f.size is None or f.alignment is None or f.offset is None:
            return f"field {f.name!r} carries no native layout facts"
        out.append(FieldBytes(name=f.name, offset=f.offset, size=f.size, alignment=f.alignment))
    out.sort(key=lambda f: f.offset)
    return out


def _fill(verdict: Verdict) -> Optional[_Failure]:
    """Walk the fields across the own bytes, sorting each gap into padding or a hole."""
    assert verdict.own_bytes is not None and verdict.alignment is not None
    limit = verdict.own_bytes.end
    cursor = verdict.own_bytes.start
    overlap: Optional[str] = None
    for f in verdict.fields:
        if f.offset < cursor:
            if overlap is None:
                overlap = f"field {f.name!r} at [{f.offset}, {f.end}) starts before byte {cursor}"
            cursor = max(cursor, f.end)
            continue
        _record_gap(verdict, cursor, align_up(cursor, f.alignment), f.offset)
        cursor = f.end
    if cursor > limit:
        if overlap is None:
            overlap = f"fields extend to byte {cursor}, past total_size {limit}"
    else:
        _record_gap(verdict, cursor, align_up(cursor, verdict.alignment), limit)
    if overlap is not None:
        return "field-overlap", overlap
    if verdict.uncovered:
        holes = ", ".join(map(str, verdict.uncovered))
        return "uncovered-bytes", f"bytes {holes} of {verdict.own_bytes} are not accounted for by reflected fields"
    return None


def _record_gap(verdict: Verdict, cursor: int, expected: int, actual: int) -> None:
    """File the gap from ``cursor`` to the next boundary ``actual``.

    Alignment alone would put that boundary at ``expected``: a gap ending
    there is padding, any other is a hole.
    """
    if actual != expected:
        verdict.uncovered.append(ByteRange(cursor, actual))
    elif expected != cursor:
        verdict.padding.append(ByteRange(cursor, expected))


def _apply_target_rules(
    info: ObjectInfo,
    forced_opaque: AbstractSet[str],
    field_renderable: Optional[Callable[[NamedTypeSchema], bool]],
) -> Optional[_Failure]:
    """The target's own rules, for a type whose bytes are accounted for."""
    if field_renderable is not None:
        for f in info.fields:
            if not field_renderable(f):
                return "unrenderable-field", f"field {f.name!r} ({f.repr()}) has no native mirror"
    if info.type_key in forced_opaque:
        return "by-directive", "vetoed by directive although the layout is reproducible"
    return None


def coverage_report(verdicts: Mapping[str, Verdict]) -> Dict[str, Any]:
    """The JSON coverage report: each type key (sorted) to its entry."""
    return {key: verdicts[key].to_json_obj() for key in sorted(verdicts)}


def write_coverage_report(path: Path, verdicts: Mapping[str, Verdict]) -> None:
    """Write :func:`coverage_report` to ``path`` as indented JSON."""
    path.write_text(json.dumps(coverage_report(verdicts), indent=2) + "\n", encoding="utf-8")
