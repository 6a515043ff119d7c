from lane_case import overflow_per_use

LINES = overflow_per_use(16)
