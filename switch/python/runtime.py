"""Helpers the generated per-packet code calls: the names its namespace starts with."""

import random

from ina.switch.python.expressions import sat_signed, sat_unsigned, two_comp


class ParserErr(Exception):
    def __init__(self, code: int):
        self.code = code
        self.offset: int | None = None  # bytes consumed when the error struck, set by the state


class AssertionFailed(Exception):
    """A P4 assert/assume was false: the packet is dropped and counted."""


def _stack_elem(base: int, stride: int, size: int, index: int) -> int:
    if not 0 <= index < size:
        raise IndexError(f"header stack index {index} out of range (size {size})")
    return base + index * stride


def _stack_last(base: int, stride: int, next_index: int) -> int:
    if next_index == 0:
        raise IndexError("no element of the header stack has been extracted")
    return base + (next_index - 1) * stride


def _lookahead(data: bytes, off: int, bit_offset: int, width: int) -> int:
    start = off + bit_offset // 8
    lead = bit_offset % 8
    nbytes = (lead + width + 7) // 8
    if start + nbytes > len(data):
        raise ParserErr(1)
    value = int.from_bytes(data[start : start + nbytes], "big")
    return (value >> (nbytes * 8 - lead - width)) & ((1 << width) - 1)


def _cell(index: int, size: int) -> bool:
    """Whether a computed index names a cell of a register, counter or meter array of `size`
    cells. One past the array names none: the access is skipped, as simple_switch skips it. A
    negative one (simple_switch stops on it) is an error: the packet is dropped."""
    if index < 0:
        raise ValueError(f"negative index {index} into a register, counter or meter array")
    return index < size


def _count(count: int, size: int) -> int:
    """A push or pop count: at most the stack's size; a negative one drops the packet."""
    if count < 0:
        raise ValueError(f"negative header stack count {count}")
    return min(count, size)


def _push(P: list, base: int, stride: int, size: int, next_slot: int, count: int) -> None:
    count = _count(count, size)
    end = base + stride * size
    P[base + stride * count : end] = P[base : end - stride * count]
    for i in range(count):
        P[base + i * stride] = 0
    P[next_slot] = min(P[next_slot] + count, size)


def _pop(P: list, base: int, stride: int, size: int, next_slot: int, count: int) -> None:
    count = _count(count, size)
    end = base + stride * size
    P[base : end - stride * count] = P[base + stride * count : end]
    for i in range(size - count, size):
        P[base + i * stride] = 0
    P[next_slot] = max(P[next_slot] - count, 0)


def _vset_match(members: set, key: int, mask: int) -> bool:
    return any(key & mask == m & mask for m in members)


def _mod(value: int, size: int) -> int:
    return value % size if size else value


def _assert_failed(kind: str) -> None:
    raise AssertionFailed(f"P4 {kind} failed")


def base_namespace() -> dict:
    return {
        "ParserErr": ParserErr,
        "_stack_elem": _stack_elem,
        "_stack_last": _stack_last,
        "_cell": _cell,
        "_lookahead": _lookahead,
        "_push": _push,
        "_pop": _pop,
        "_vset_match": _vset_match,
        "_mod": _mod,
        "_assert_failed": _assert_failed,
        "_two_comp": two_comp,
        "_sat_signed": sat_signed,
        "_sat_unsigned": sat_unsigned,
        "_randint": random.randint,
    }
