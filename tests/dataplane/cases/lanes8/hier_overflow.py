from lane_case import hier_overflow

LINES = hier_overflow(8)
