"""Repeated runs folded in ``logscan follow``: a crash-looping engine tailed by follow prints its
run once, then a compact ``repeated`` line, instead of the same selections, findings and failure
for every restart.

``scan`` folds a run into the first run of its input with the same report but for numbers
(``logscan/fold.py``); follow does the same per stream, with what it can know as lines arrive:

- **when a run closes**, its fold key (``fold.keys``) is looked up among the latest
  ``KEEP_REPS`` distinct runs of the stream that closed (``Rep``). Equal: the run is a repeat;
  nothing of it is printed, the representative counts it (``Folded``: how many, where the first
  and the last begin and end). Else the run becomes a representative itself.
- **while a run is open**, a record (selection, finding, failed start) whose key a representative
  also reported, in a run nothing of which was printed yet, is *held*: printed only if the run
  turns out to be no repeat (a record no representative has, a close that does not fold, or,
  after ``REPEAT_EVERY`` seconds held, a run whose report so far is no representative's).
- a ``repeated`` JSON line says the count (only of a representative that printed a record: a
  run of runtime noise that printed nothing repeats silently, as it ran silently): at once for the first repeat, then at most once per
  ``REPEAT_EVERY`` seconds while it grows, and when the loop ends (a run that does not fold
  closes, or the stream ends).

Memory is bounded: ``KEEP_REPS`` representatives of a few keys each, and the held records of the
one open run. Metrics count a folded run's findings and failed start as if printed
(``logscan_start_failures_total`` still rises per restart). ``$LOGSCAN_FOLD=0`` turns it off.
Exactly once across a restart of follow: the representatives and their counts are kept in the
state file (``to_json`` / ``restore``), so a repeat after the restart folds into the same count,
which goes on from where it was (a ``repeated`` line printed before the stop is not printed again
with the same count); a run the restarted follower reads again from its checkpoint (it closed
after the position saved) is recognised by its first line and counted, or made a representative,
once. Limits (docs/follow.md "Crash loops"): an identical start that stays up is held until it
closes or differs; kubelet's per-restart files (``0.log``, ``1.log``) are streams of their own,
each printed.
"""
from __future__ import annotations

import time
from collections import OrderedDict
from typing import Callable, Optional

from ..fold import keys as fold_keys
from ..models import Folded, Run
from .stream import FollowRecord

#: distinct closed runs kept per stream as representatives
KEEP_REPS = 16
#: seconds between two ``repeated`` lines of one representative, and how long an open run's
#: records are held before its report so far is compared with the representatives'
REPEAT_EVERY = 60.0
#: at most this many records held for the open run (more: printed)
MAX_HELD = 256


class Rep:
    """A closed run of the stream that later runs may repeat: its fold keys, the record keys it
    reported, the base of its JSON lines (``run_line``: its first line), its ``Folded`` counts and
    when they were last printed."""

    __slots__ = ("key", "exact", "record_keys", "base", "folded", "emitted", "emitted_at")

    def __init__(self, key: bytes, exact: bytes, record_keys: set[str], base: dict):
        self.key, self.exact, self.record_keys, self.base = key, exact, record_keys, base
        self.folded: Optional[Folded] = None
        self.emitted = 0  #: ``folded.runs`` when its last ``repeated`` line was printed
        self.emitted_at = 0.0

    def counted(self, first_line: int) -> bool:
        """Whether the run beginning at ``first_line`` is this one or a repeat already counted in it
        (a run read again after a restart of follow: line numbers of a stream only grow)."""
        last = self.folded.last_first_line if self.folded is not None else None
        return first_line == self.base.get("run_line") or (last is not None and first_line <= last)

    def to_json(self) -> dict:
        """The state file's form (``Repeats.to_json``)."""
        out = {"key": self.key.hex(), "exact": self.exact.hex(), "records": sorted(self.record_keys),
               "base": self.base, "emitted": self.emitted}
        if self.folded is not None:
            out["folded"] = self.folded.model_dump(mode="json")
        return out

    @classmethod
    def from_json(cls, d: dict, now: float) -> "Rep":
        """``to_json`` read back; its last ``repeated`` line counts as printed at ``now``. Raises
        ``ValueError`` / ``TypeError`` / ``KeyError`` on a malformed entry."""
        base = d["base"]
        if not isinstance(base, dict) or not isinstance(base.get("run_line"), int):
            raise ValueError(f"bad representative base {base!r:.200}")
        rep = cls(bytes.fromhex(d["key"]), bytes.fromhex(d["exact"]), {str(k) for k in d["records"]}, base)
        if d.get("folded") is not None:
            rep.folded = Folded.model_validate(d["folded"])
        rep.emitted, rep.emitted_at = int(d.get("emitted", 0)), now
        return rep


class Repeats:
    """One stream's representatives and the open run's held records (see the module docstring)."""

    def __init__(self, every: float = REPEAT_EVERY):
        self.every = every
        self.reps: OrderedDict[bytes, Rep] = OrderedDict()
        self.held: list[tuple[str, FollowRecord]] = []
        self.held_run: Optional[int] = None  #: first line of the run the held records are of
        self.held_since = 0.0
        self.released: Optional[int] = None  #: first line of an open run known to be no repeat

    def filter(self, run: Run, seen: set[str], new: list[tuple[str, FollowRecord]], closed: bool, base: dict,
               emit: Callable[[FollowRecord], None], count: Callable[[FollowRecord], None]) -> list[tuple[str, FollowRecord]]:
        """Of ``new`` (``stream.new_records`` of ``run``; ``seen``: its keys printed), the records to
        print now. ``closed``: the run closed (``closed``), else it is open (``open_run``). The
        ``repeated`` lines due go to ``emit``; a folded run's records, printed never, to ``count``
        (the metrics) and into ``seen``."""
        if not closed:
            return self.open_run(run, seen, new)
        out, lines, folded = self.closed(run, seen, new, base)
        for rec in lines:
            emit(rec)
        if not folded:
            return out
        for key, rec in out:
            seen.add(key)
            count(rec)
        return []

    def _covered(self, keys: set[str]) -> bool:
        return any(keys <= r.record_keys for r in self.reps.values())

    def open_run(self, run: Run, seen: set[str], new: list[tuple[str, FollowRecord]],
                 now: Optional[float] = None) -> list[tuple[str, FollowRecord]]:
        """Of ``new`` (records of the open ``run`` not printed before; ``seen``: its keys printed),
        the ones to print now; the rest are held."""
        if self.held_run != run.first_line:
            self.held, self.held_run = [], run.first_line
        new = self._unheld(new)  # a held record comes back in every report of its run
        if not self.reps or seen or self.released == run.first_line:
            return self._release(new)
        keys = {k for k, _ in self.held} | {k for k, _ in new}
        if not self._covered(keys) or len(self.held) + len(new) > MAX_HELD:
            self.released = run.first_line  # no repeat: what it held and what is new go out
            return self._release(new)
        if new and not self.held:
            self.held_since = time.monotonic() if now is None else now
        self.held += new
        return []

    def _unheld(self, new: list) -> list:
        held = {k for k, _ in self.held}
        return [(k, r) for k, r in new if k not in held]

    def _release(self, new: list) -> list:
        out, self.held = self.held + new, []
        return out

    def closed(self, run: Run, seen: set[str], new: list[tuple[str, FollowRecord]], base: dict,
               now: Optional[float] = None) -> tuple[list[tuple[str, FollowRecord]], list[FollowRecord], bool]:
        """``run`` closed: ``(records to print, repeated lines to print first, folded)``. ``folded``:
        the run repeats a representative (its held and new records are then not printed)."""
        now = time.monotonic() if now is None else now
        if self.held_run != run.first_line:
            self.held = []
        held, new = self.held, self._unheld(new)
        self.held, self.held_run = [], None
        key, exact = fold_keys(run)
        rep = self.reps.get(key)
        if rep is not None and rep.counted(run.first_line):
            # read again after a restart (it closed past the position saved): counted already
            if rep.base.get("run_line") == run.first_line:
                return held + new, [], False
            seen.update(k for k, _ in held + new)
            return [], [], True
        if rep is not None and not seen:
            f = rep.folded
            if f is None:
                f = rep.folded = Folded(runs=0, first_line=run.first_line, last_first_line=run.first_line,
                                        last_line=run.last_line)
            f.runs += 1
            f.last_first_line, f.last_line = run.first_line, run.last_line
            f.numbers_differ += exact != rep.exact
            self.reps.move_to_end(key)
            lines = self._due(now, first_only=True)
            return held + new, lines, True
        lines = self.flush()  # a run that does not fold: the loop (if any) ended
        out = held + new
        self.reps[key] = Rep(key, exact, set(seen) | {k for k, _ in out}, base)
        self.reps.move_to_end(key)
        while len(self.reps) > KEEP_REPS:
            self.reps.popitem(last=False)
        return out, lines, False

    def to_json(self) -> list:
        """The representatives for the state file, oldest first (held records are not kept: the
        restarted follower reads their lines again from its checkpoint and holds them again)."""
        return [r.to_json() for r in self.reps.values()]

    def restore(self, data: list) -> None:
        """Take back ``to_json``'s list (a state file written before it had none: nothing). Raises
        ``ValueError`` on a malformed one."""
        now = time.monotonic()
        try:
            reps = [Rep.from_json(d, now) for d in data]
        except (TypeError, KeyError, AttributeError) as exc:  # pydantic's ValidationError is a ValueError
            raise ValueError(f"bad representative: {type(exc).__name__}: {str(exc)[:200]}") from None
        self.reps = OrderedDict((r.key, r) for r in reps[-KEEP_REPS:])

    def _line(self, rep: Rep, now: float) -> FollowRecord:
        rep.emitted, rep.emitted_at = rep.folded.runs, now  # type: ignore[union-attr]
        return FollowRecord(type="repeated", folded=rep.folded.model_copy(), **rep.base)  # type: ignore[union-attr]

    def _due(self, now: float, first_only: bool = False) -> list[FollowRecord]:
        out = []
        for rep in self.reps.values():
            f = rep.folded
            if f is None or f.runs == rep.emitted or not rep.record_keys:
                continue  # a run that printed nothing (runtime noise that opened a run): no line either
            if rep.emitted == 0 or (not first_only and now - rep.emitted_at >= self.every):
                out.append(self._line(rep, now))
        return out

    def due(self, open_run: Callable[[], Optional[Run]], emit: Callable[[FollowRecord], None],
            report: Callable[[Run], None]) -> None:
        """At each poll: ``emit`` the ``repeated`` lines due (``tick``); when records were held too
        long (``held_too_long``), ``report`` the open run (``open_run()``) if it reads as no repeat
        now (``still_repeats``), which prints what it held."""
        for rec in self.tick():
            emit(rec)
        run = open_run() if self.held_too_long() else None
        if run is not None and not self.still_repeats(run):
            report(run)

    def tick(self, now: Optional[float] = None) -> list[FollowRecord]:
        """The ``repeated`` lines due now (a count that grew, ``REPEAT_EVERY`` seconds after the last)."""
        return self._due(time.monotonic() if now is None else now)

    def held_too_long(self, now: Optional[float] = None) -> bool:
        """Records were held for ``REPEAT_EVERY`` seconds or more (``Follower`` then compares the
        open run's report so far with the representatives': ``still_repeats``)."""
        now = time.monotonic() if now is None else now
        return bool(self.held) and now - self.held_since >= self.every

    def still_repeats(self, run: Run) -> bool:
        """Whether the open ``run`` as it reads now has a representative's fold key; if not, it is
        marked as no repeat (its held records go out at its next report)."""
        if fold_keys(run)[0] in self.reps:
            self.held_since = time.monotonic()
            return True
        self.released = run.first_line
        return False

    def flush(self, now: Optional[float] = None) -> list[FollowRecord]:
        """Every count not printed yet (the loop ended, or the stream did)."""
        now = time.monotonic() if now is None else now
        return [self._line(r, now) for r in self.reps.values()
                if r.folded is not None and r.folded.runs != r.emitted and r.record_keys]
