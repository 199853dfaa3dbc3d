"""The review store: one SQLite database (standard library) under the user's data directory.

``reviews``: one row per problem under review (host, subject, the test that failed, the before state,
the checklist). ``attempts``: one row per attempt at a workaround (state, note, before and after, the
suggested and the confirmed outcome, the boot it started in). Writes are committed at once, so a crash
or a reboot loses nothing; a review left with an attempt under way picks up where it stopped.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

#: Checklist states of a workaround, in the order a person meets them.
STATES: dict[str, str] = {
    "not_tried": "not tried",
    "trying": "trying",
    "helped": "helped",
    "did_not_help": "did not help",
    "not_applicable": "not applicable",
}
OUTCOMES = ("helped", "did_not_help", "not_applicable")
SCHEMA = 1

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS reviews (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  created TEXT NOT NULL, updated TEXT NOT NULL,
  host TEXT, subject TEXT NOT NULL, test TEXT NOT NULL, problem TEXT NOT NULL,
  before TEXT NOT NULL, items TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'open');
CREATE TABLE IF NOT EXISTS attempts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  review_id INTEGER NOT NULL REFERENCES reviews(id),
  item INTEGER NOT NULL, entry_id TEXT, action TEXT NOT NULL,
  state TEXT NOT NULL, note TEXT NOT NULL DEFAULT '',
  started TEXT NOT NULL, finished TEXT, boot_id TEXT,
  before TEXT, after TEXT, comparison TEXT, suggested TEXT, confirmed INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS attempts_review ON attempts(review_id);
"""


class StoreError(RuntimeError):
    """The store could not be opened, read or written (the message says which file and why)."""


def default_path() -> Path:
    """``$P2PTOP_DATA_DIR/reviews.sqlite3``, else ``$XDG_DATA_HOME/p2ptop/`` (``~/.local/share/p2ptop/``)."""
    base = os.environ.get("P2PTOP_DATA_DIR")
    if base:
        return Path(base) / "reviews.sqlite3"
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(data) / "p2ptop" / "reviews.sqlite3"


def boot_id() -> Optional[str]:
    """This boot's id (Linux), so a review knows a reboot happened since an attempt started."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


@dataclass
class Attempt:
    id: int
    review_id: int
    item: int  # index into the review's items
    entry_id: Optional[str]
    action: str
    state: str
    note: str = ""
    started: str = ""
    finished: Optional[str] = None
    boot_id: Optional[str] = None
    before: Optional[dict[str, Any]] = None
    after: Optional[dict[str, Any]] = None
    comparison: Optional[dict[str, Any]] = None
    suggested: Optional[str] = None
    confirmed: bool = False

    @property
    def rebooted_since(self) -> bool:
        """True when the machine booted again since this attempt started (a BIOS or kernel fix)."""
        current = boot_id()
        return bool(self.boot_id and current and current != self.boot_id)

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("id", "review_id", "item", "entry_id", "action", "state", "note",
                                              "started", "finished", "boot_id", "before", "after", "comparison",
                                              "suggested", "confirmed")}


@dataclass
class Review:
    id: int
    created: str
    updated: str
    host: Optional[str]
    subject: str  # "pair:0-1", "gpu:0", "host", "paste"
    test: str  # copy | host_link | nccl | log
    problem: str
    before: dict[str, Any]  # {"result": ..., "snapshot": ..., "log": ...}
    items: list[dict[str, Any]]  # plan items (plan.PlanItem.to_dict())
    status: str = "open"
    attempts: list[Attempt] = field(default_factory=list)

    def item_state(self, index: int) -> str:
        """The state of a checklist item: that of its latest attempt, or not tried."""
        latest = [a for a in self.attempts if a.item == index]
        return latest[-1].state if latest else "not_tried"

    def latest_attempt(self, index: int) -> Optional[Attempt]:
        latest = [a for a in self.attempts if a.item == index]
        return latest[-1] if latest else None

    @property
    def open_attempt(self) -> Optional[Attempt]:
        """The attempt under way (tried, outcome not confirmed), if any."""
        for a in reversed(self.attempts):
            if a.state == "trying":
                return a
        return None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "created": self.created, "updated": self.updated, "host": self.host,
                "subject": self.subject, "test": self.test, "problem": self.problem, "before": self.before,
                "items": self.items, "status": self.status, "attempts": [a.to_dict() for a in self.attempts]}


def _dump(value: Any) -> Optional[str]:
    return None if value is None else json.dumps(value, sort_keys=True, default=str)


def _load(text: Optional[str]) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


class ReviewStore:
    """The reviews of this user. Each call opens its own short transaction; safe across processes."""

    def __init__(self, path: Optional[os.PathLike | str] = None):
        self.path = Path(path) if path else default_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), timeout=10, check_same_thread=False)
            self._db.executescript(_DDL)
            row = self._db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                self._db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA),))
                self._db.commit()
            elif int(row[0]) > SCHEMA:
                raise StoreError(f"{self.path}: written by a newer p2ptop (schema {row[0]}, this one reads {SCHEMA})")
        except (OSError, sqlite3.Error) as e:
            raise StoreError(f"cannot open the review store {self.path}: {e}") from e

    @staticmethod
    def exists(path: Optional[os.PathLike | str] = None) -> bool:
        """True when the store file is there (reports do not create one)."""
        return (Path(path) if path else default_path()).is_file()

    def close(self) -> None:
        self._db.close()

    def _write(self, sql: str, args: tuple) -> int:
        try:
            with self._db:
                cur = self._db.execute(sql, args)
            return int(cur.lastrowid or 0)
        except sqlite3.Error as e:
            raise StoreError(f"cannot write the review store {self.path}: {e}") from e

    def _read(self, sql: str, args: tuple = ()) -> list[tuple]:
        try:
            return self._db.execute(sql, args).fetchall()
        except sqlite3.Error as e:
            raise StoreError(f"cannot read the review store {self.path}: {e}") from e

    # -- reviews --
    def create(self, *, host: Optional[str], subject: str, test: str, problem: str, before: dict[str, Any],
               items: list[dict[str, Any]]) -> Review:
        t = now()
        rid = self._write("INSERT INTO reviews (created, updated, host, subject, test, problem, before, items) "
                          "VALUES (?,?,?,?,?,?,?,?)", (t, t, host, subject, test, problem, _dump(before), _dump(items)))
        return self.get(rid)

    def find_open(self, host: Optional[str], subject: str, test: str) -> Optional[Review]:
        """The open review of this problem on this host, to pick up where it stopped."""
        rows = self._read("SELECT id FROM reviews WHERE status='open' AND subject=? AND test=? AND "
                          "(host IS ? OR host=?) ORDER BY id DESC LIMIT 1", (subject, test, host, host))
        return self.get(rows[0][0]) if rows else None

    def get(self, review_id: int) -> Review:
        rows = self._read("SELECT id, created, updated, host, subject, test, problem, before, items, status "
                          "FROM reviews WHERE id=?", (int(review_id),))
        if not rows:
            raise StoreError(f"no review {review_id} in {self.path}")
        r = rows[0]
        review = Review(r[0], r[1], r[2], r[3], r[4], r[5], r[6], _load(r[7]) or {}, _load(r[8]) or [], r[9])
        review.attempts = self._attempts(review.id)
        return review

    def list(self) -> list[Review]:
        return [self.get(r[0]) for r in self._read("SELECT id FROM reviews ORDER BY id")]

    def set_status(self, review_id: int, status: str) -> None:
        self._write("UPDATE reviews SET status=?, updated=? WHERE id=?", (status, now(), int(review_id)))

    # -- attempts --
    def _attempts(self, review_id: int) -> list[Attempt]:
        rows = self._read("SELECT id, review_id, item, entry_id, action, state, note, started, finished, boot_id, "
                          "before, after, comparison, suggested, confirmed FROM attempts WHERE review_id=? "
                          "ORDER BY id", (review_id,))
        return [Attempt(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], _load(r[10]), _load(r[11]),
                        _load(r[12]), r[13], bool(r[14])) for r in rows]

    def try_item(self, review: Review, item: int, before: Optional[dict[str, Any]] = None) -> Attempt:
        """Start an attempt at checklist item ``item``: the before state is the review's unless given."""
        it = review.items[item]
        aid = self._write("INSERT INTO attempts (review_id, item, entry_id, action, state, started, boot_id, before) "
                          "VALUES (?,?,?,?,?,?,?,?)", (review.id, item, it.get("entry_id"), it.get("action", ""),
                                                       "trying", now(), boot_id(), _dump(before or review.before)))
        self._touch(review.id)
        return self._attempt(aid)

    def record_after(self, attempt: Attempt, after: dict[str, Any], comparison: dict[str, Any],
                     suggested: Optional[str]) -> Attempt:
        self._write("UPDATE attempts SET after=?, comparison=?, suggested=?, finished=? WHERE id=?",
                    (_dump(after), _dump(comparison), suggested, now(), attempt.id))
        self._touch(attempt.review_id)
        return self._attempt(attempt.id)

    def set_outcome(self, attempt: Attempt, state: str, note: Optional[str] = None) -> Attempt:
        if state not in STATES:
            raise StoreError(f"unknown state {state!r}: one of {', '.join(STATES)}")
        confirmed = 1 if state in OUTCOMES else 0
        if note is None:
            self._write("UPDATE attempts SET state=?, confirmed=?, finished=COALESCE(finished, ?) WHERE id=?",
                        (state, confirmed, now(), attempt.id))
        else:
            self._write("UPDATE attempts SET state=?, confirmed=?, note=?, finished=COALESCE(finished, ?) WHERE id=?",
                        (state, confirmed, note, now(), attempt.id))
        self._touch(attempt.review_id)
        return self._attempt(attempt.id)

    def mark(self, review: Review, item: int, state: str, note: str = "") -> Attempt:
        """Mark an item without a re-test (not applicable, or an outcome seen elsewhere)."""
        attempt = self.try_item(review, item)
        return self.set_outcome(attempt, state, note)

    def set_note(self, attempt: Attempt, note: str) -> Attempt:
        self._write("UPDATE attempts SET note=? WHERE id=?", (note, attempt.id))
        self._touch(attempt.review_id)
        return self._attempt(attempt.id)

    def _attempt(self, aid: int) -> Attempt:
        rows = self._read("SELECT review_id FROM attempts WHERE id=?", (aid,))
        if not rows:
            raise StoreError(f"no attempt {aid} in {self.path}")
        return next(a for a in self._attempts(rows[0][0]) if a.id == aid)

    def _touch(self, review_id: int) -> None:
        self._write("UPDATE reviews SET updated=? WHERE id=?", (now(), int(review_id)))

    def all_attempts(self) -> list[tuple[Review, Attempt]]:
        out = []
        for review in self.list():
            out.extend((review, a) for a in review.attempts)
        return out
