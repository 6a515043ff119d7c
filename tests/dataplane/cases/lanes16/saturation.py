from lane_case import saturation

LINES = saturation(16)
