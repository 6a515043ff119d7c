from wide_case import reduction_and_retransmission

LINES = reduction_and_retransmission(256)
