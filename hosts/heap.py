"""Keep freed memory in the process's heap, so an all-reduce's buffers do not fault in anew.

Every all-reduce allocates the same large buffers again: the packed chunks, the RESULT datagrams
joined, the sums (megabytes each). glibc maps a large block afresh and returns a freed heap top
to the kernel once it passes a threshold, so each all-reduce wrote to fresh pages: a page fault
and a zeroed page per 4 KB, 20% of the core benchmark's CPU (docs/performance.md). With both
thresholds raised, a freed block stays in the heap and the next all-reduce reuses its pages. The
cost is memory a process holds after its peak: at most TRIM_THRESHOLD beyond what it uses.
"""

import ctypes

M_TRIM_THRESHOLD = -1  # mallopt's parameters (malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20  # glibc's largest: a block above it is still mapped (and unmapped)
TRIM_THRESHOLD = 256 << 20  # free heap top kept before any is returned


def keep_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds for this process; False where the C library has no
    `mallopt` (not glibc) or refuses them, and nothing changes."""
    # the symbols the process has loaded (its C library's among them): no search for libc
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    if mallopt is None:
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
