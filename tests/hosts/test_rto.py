"""The worker core's RTT estimator alone: RFC 6298's arithmetic, its floor and cap, the shared
backoff and the spurious-resend undo. RTTs are powers of two, so every figure is exact."""

from ina.hosts.rto import MAX_BACKOFF, MAX_RTO, RttEstimator

MS = 2.0**-10  # about a millisecond, exact in binary


def test_the_first_sample_sets_srtt_rttvar_and_an_rto_of_three_rtts():
    rtt = RttEstimator(timeout=0.5, min_rto=0.0, window=4)
    assert (rtt.srtt, rtt.rto, rtt.timer) == (None, 0.5, 0.5)  # `timeout` until the first sample
    rtt.sample(MS)
    assert (rtt.srtt, rtt.rttvar, rtt.min_rtt, rtt.rto, rtt.timer) == (
        MS,
        MS / 2,
        MS,
        3 * MS,
        3 * MS,
    )
    assert rtt.reo_wnd == MS / 4


def test_the_deviation_grows_with_the_rfcs_gain_and_shrinks_window_times_slower():
    rtt = RttEstimator(timeout=0.5, min_rto=0.0, window=4)
    rtt.sample(MS)
    rtt.sample(2 * MS)  # err = MS > rttvar: rttvar += (err - rttvar) / 4
    assert (rtt.srtt, rtt.rttvar, rtt.rto) == (9 * MS / 8, 5 * MS / 8, 29 * MS / 8)
    rtt.sample(9 * MS / 8)  # err = 0 < rttvar: rttvar shrinks by 1/4 / window
    assert (rtt.srtt, rtt.rttvar, rtt.rto) == (9 * MS / 8, 75 * MS / 128, 444 * MS / 128)


def test_the_rto_lies_between_the_floor_and_max_rto():
    floored = RttEstimator(timeout=0.5, min_rto=0.01, window=4)
    floored.sample(MS)
    assert floored.rto == 0.01  # min_rto: a host's scheduling noise
    capped = RttEstimator(timeout=0.5, min_rto=0.0, window=4)
    capped.sample(1.0)
    assert capped.rto == MAX_RTO
    steady = RttEstimator(timeout=0.5, min_rto=0.0, window=1)  # window 1: RFC 6298's own gains
    for _ in range(4):
        steady.sample(MS)
    assert steady.rttvar == MS / 2 * (3 / 4) ** 3  # srtt + 4 rttvar = 1.84 MS, below the floor
    assert steady.rto == 2 * MS  # RTO_MIN_RTTS x min_rtt: never within the fastest answer seen


def test_timeouts_double_the_timer_up_to_max_backoff_and_a_sample_ends_the_backoff():
    rtt = RttEstimator(timeout=0.5, min_rto=0.0, window=4)
    rtt.sample(MS)
    rtt.timed_out(1)
    assert (rtt.backoff, rtt.timer) == (1, 6 * MS)
    rtt.timed_out(1)  # another slot's first timeout: the backoff is the path's, shared
    assert (rtt.backoff, rtt.timer) == (1, 6 * MS)
    rtt.timed_out(MAX_BACKOFF + 3)
    assert (rtt.backoff, rtt.timer) == (MAX_BACKOFF, 3 * MS * 2**MAX_BACKOFF)
    rtt.sample(MS)
    assert (rtt.backoff, rtt.timer) == (0, rtt.rto)


def test_a_spurious_resend_widens_the_reordering_window_up_to_srtt_and_undoes_the_backoff():
    rtt = RttEstimator(timeout=0.5, min_rto=0.0, window=4)
    rtt.sample(MS)
    rtt.timed_out(2)
    widths = []
    for _ in range(5):
        rtt.spurious()
        widths.append(rtt.reo_wnd)
    assert widths == [
        MS / 2,
        3 * MS / 4,
        MS,
        MS,
        MS,
    ]  # min_rtt / 4 more each time, never beyond srtt
    assert (rtt.backoff, rtt.timer) == (0, rtt.rto)
