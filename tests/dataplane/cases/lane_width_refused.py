from lane_case import width_refused

LINES = width_refused(32)
