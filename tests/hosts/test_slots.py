"""The core's per-slot records and the reader of an answer's header: the waiting slots in the order
sent, and the words read by position exactly as the header's struct unpacks them."""

import random

import pytest

from ina.hosts.core import _answer
from ina.hosts.slots import Slot, Waiting
from ina.p4src.protocol import HEADER, HEADER_LEN, WORDS, word_span


def order(waiting: Waiting) -> list[int]:
    return [slot.index for slot in waiting]


def test_the_waiting_slots_keep_the_order_sent_and_a_resend_goes_last():
    slots = [Slot(k) for k in range(4)]
    waiting = Waiting()
    for k in (2, 0, 3, 1):
        waiting.append(slots[k])
    assert order(waiting) == [2, 0, 3, 1] and waiting.oldest is slots[2]
    waiting.append(slots[0])  # resent: the latest transmission
    assert order(waiting) == [2, 3, 1, 0] and waiting.newest is slots[0]
    waiting.remove(slots[2])  # the oldest answered
    waiting.remove(slots[1])  # one in the middle
    waiting.remove(slots[1])  # not waiting: nothing changes
    assert order(waiting) == [3, 0] and (waiting.oldest, waiting.newest) == (slots[3], slots[0])
    assert [s.waiting for s in slots] == [True, False, False, True]
    waiting.remove(slots[0])
    waiting.remove(slots[3])
    assert (order(waiting), waiting.oldest, waiting.newest) == ([], None, None)


def test_a_slot_may_leave_the_waiting_list_while_it_is_walked():
    slots = [Slot(k) for k in range(3)]
    waiting = Waiting()
    for slot in slots:
        waiting.append(slot)
    seen = []
    for slot in waiting:
        seen.append(slot.index)
        waiting.remove(slot)
    assert seen == [0, 1, 2] and waiting.oldest is None


def test_the_header_words_are_where_the_header_struct_puts_them():
    assert [word_span(word) for word in WORDS] == [
        (0, 1),
        (1, 1),
        (2, 2),
        (4, 2),
        (6, 1),
        (7, 1),
        (8, 2),
        (10, 4),
        (14, 4),
        (18, 4),
    ]
    with pytest.raises(ValueError, match="the header has no word 'seq'"):
        word_span("seq")


def test_an_answer_is_read_by_position_as_the_header_struct_unpacks_it():
    rng = random.Random(32)
    read = ("msg_type", "job_id", "pool", "exponent", "flags", "count", "epoch", "round", "bitmap")
    for _ in range(200):
        data = bytes(rng.randrange(256) for _ in range(HEADER_LEN)) + b"\x5a" * 8
        words = dict(zip(WORDS, HEADER.unpack_from(data), strict=True))
        assert _answer(data) == tuple(words[name] for name in read)
