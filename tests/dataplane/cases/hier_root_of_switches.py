from stf_render import SWITCH_CONFIG, Host, from_parent, job, result, total, update

L1 = Host(1, "02:cc:00:00:00:01", "10.0.2.1")  # a leaf switch holding 2 workers
L2 = Host(2, "02:cc:00:00:00:02", "10.0.2.2")  # a leaf switch holding 3 workers
X = [1, 2, 3, 4, 5, 6, 7, 8]
Y = [-10, 20, -30, 40, -50, 60, -70, 80]
E = 0x5EED0001

LINES = [
    "# The root of a hierarchical job whose children are two leaf switches (admit_switch: an",
    "# UPDATE's count is its weight, at most the workers below it): the job completes when the",
    "# partial sums hold all 5 workers, and the RESULT goes to both leaves; a leaf that lost it",
    "# resends its partial sum and gets the RESULT alone.",
    SWITCH_CONFIG,
    *job(1, [L1, L2], epoch=E, below=[2, 3], quorum=5),
    "# a partial sum of no worker, or of more than the leaf holds, is refused",
    update(L2, epoch=E, values=Y, rank=1, job=1, count=0),
    update(L2, epoch=E, values=Y, rank=1, job=1, count=4),
    "check_counter port_refused(2) packets == 2",
    update(L1, epoch=E, values=X, job=1, count=2, exponent=5),
    "# ina: register slot_count[0] == 2",
    update(L2, epoch=E, values=Y, rank=1, job=1, count=3, exponent=2),
    result(L1, epoch=E, values=total(X, Y), rank=1, job=1, exponent=5, count=5, bitmap=0b11),
    result(L2, epoch=E, values=total(X, Y), rank=1, job=1, exponent=5, count=5, bitmap=0b11),
    "check_counter job_completed(1) packets == 1",
    "check_counter job_results_sent(1) packets == 2",
    "check_counter job_partials_sent(1) packets == 0",
    "# ina: register slot_count[0] == 5",
    "# the RESULT to leaf 0 was lost: its resent partial sum is answered, never added",
    update(L1, epoch=E, values=X, job=1, count=2, exponent=5),
    result(L1, epoch=E, values=total(X, Y), job=1, exponent=5, count=5, bitmap=0b11),
    "check_counter job_retrans_answered(1) packets == 1",
    "# a job without a parent takes no RESULT: not from a child, not from port 0 and address",
    "# 0.0.0.0 (what a missing job_parent entry leaves)",
    from_parent(L1, epoch=E, values=X, job=1, index=1, count=5, bitmap=0b11),
    from_parent(Host(0, "02:00:00:00:00:00", "0.0.0.0"), epoch=E, values=X, job=1, index=1),
    "check_counter job_parent_refused(1) packets == 2",
    "check_counter job_accepted(1) packets == 2",
    "# ina: register slot_count[0] == 5",
]
