"""The packet replication engine: multicast groups and clone sessions, each a list of (port, rid).

A backend whose data path keeps its own copy (native/views.py) overrides the `_changed` hooks.
"""

from ina.switch.model.errors import TableError

MAX_PORT = 511
# What one input packet may send, in both engines (native/traffic.py compiles them into the C):
# each packet past either is dropped and counted as stats["dropped_output_full"]. Far above any
# real fan-out (a flood to every port, a job's 32 workers), they bound the memory one packet of
# a runaway program (multicasts that recirculate) can fill.
MAX_OUTPUT_PACKETS = 65536
MAX_OUTPUT_BYTES = 64 << 20


def _check_replicas(what: str, replicas: list[tuple[int, int]]) -> list[tuple[int, int]]:
    checked = []
    for port, rid in replicas:
        if not 0 <= port <= MAX_PORT:
            raise TableError(f"{what}: port {port} is out of range 0..{MAX_PORT}")
        if not 0 <= rid <= 0xFFFF:
            raise TableError(f"{what}: replica id {rid} is out of range 0..65535")
        checked.append((int(port), int(rid)))
    if len(set(checked)) != len(checked):
        raise TableError(f"{what}: the same (port, rid) replica appears twice")
    return checked


class Multicast:
    def __init__(self) -> None:
        self._groups: dict[int, list[tuple[int, int]]] = {}

    def set_group(self, mgid: int, replicas: list[tuple[int, int]]) -> None:
        if not 1 <= mgid <= 0xFFFF:
            raise TableError(f"multicast group id {mgid} is out of range 1..65535")
        self._groups[mgid] = _check_replicas(f"multicast group {mgid}", replicas)
        self._changed(mgid, self._groups[mgid])

    def delete_group(self, mgid: int) -> None:
        if self._groups.pop(mgid, None) is None:
            raise TableError(f"multicast group {mgid} does not exist")
        self._changed(mgid, [])

    def _changed(self, mgid: int, replicas: list[tuple[int, int]]) -> None:
        """Group `mgid` now has `replicas` (none: deleted)."""

    def replicas(self, mgid: int) -> list[tuple[int, int]]:
        return self._groups.get(mgid, [])

    def groups(self) -> dict[int, list[tuple[int, int]]]:
        return {mgid: list(r) for mgid, r in self._groups.items()}


class CloneSessions:
    def __init__(self) -> None:
        self._sessions: dict[int, tuple[list[tuple[int, int]], int]] = {}

    def set_session(self, session: int, replicas: list[tuple[int, int]], truncate: int = 0) -> None:
        if not 0 <= session <= 0xFFFF:
            raise TableError(f"clone session {session} is out of range")
        if not 0 <= truncate < (1 << 64):
            raise TableError(f"clone session {session}: truncate length {truncate} is out of range")
        self._sessions[session] = (
            _check_replicas(f"clone session {session}", replicas),
            int(truncate),
        )
        self._changed(session, self._sessions[session])

    def delete_session(self, session: int) -> None:
        if self._sessions.pop(session, None) is None:
            raise TableError(f"clone session {session} does not exist")
        self._changed(session, None)

    def _changed(self, session: int, config: tuple[list[tuple[int, int]], int] | None) -> None:
        """Session `session` is now (replicas, truncate), or None: deleted."""

    def get(self, session: int) -> tuple[list[tuple[int, int]], int] | None:
        return self._sessions.get(session)

    def sessions(self) -> dict[int, tuple[list[tuple[int, int]], int]]:
        return dict(self._sessions)
