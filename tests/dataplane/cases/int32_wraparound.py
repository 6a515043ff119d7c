from stf_render import SWITCH_CONFIG, W1, W2, job, result, total, update

A = [2147483647, -2147483648, -1, 1, 1073741824, -1073741824, 0, 5]
B = [1, -1, -1, 2147483647, 1073741824, -1073741825, 0, -5]

LINES = [
    "# Sums wrap modulo 2^32 (two's complement), no saturation: 0x7fffffff + 1 = 0x80000000.",
    SWITCH_CONFIG,
    *job(1, [W1, W2], epoch=0x5EED0001),
    update(W1, epoch=0x5EED0001, values=A, job=1),
    update(W2, epoch=0x5EED0001, values=B, rank=1, job=1),
    result(W1, epoch=0x5EED0001, values=total(A, B), rank=1, job=1, count=2, bitmap=0b11),
    result(W2, epoch=0x5EED0001, values=total(A, B), rank=1, job=1, count=2, bitmap=0b11),
]
