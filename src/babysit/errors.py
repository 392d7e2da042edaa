"""babysit's own exceptions, one tree. Expected outcomes (a crashed trainer) are records, not these.

    BabysitError                  anything babysit reports as one clear line
     ├── UsageError               exit 2: the operator must change a flag, the config or the command
     │    ├── ConfigError         a bad key or value in babysit.toml or the flags
     │    ├── CommandNotFound     the training command is not on PATH / not executable
     │    ├── RunBusy             another babysit already supervises this run
     │    ├── RunNotFound         status/logbook for a run the store does not know
     │    ├── RulesError          a triage rules file (shipped or the team's own) is malformed
     │    └── LogNotFound         triage was given a path that does not exist or cannot be read
     ├── StoreError               the store cannot be opened, read or written
     │    ├── HomeNotWritable     exit 2: the home directory cannot be created or written
     │    ├── StoreCorrupt        exit 2: babysit.db is emptied or damaged (`babysit rebuild`)
     │    └── StoreWriteError     a write failed (disk full, I/O error); supervision goes on
     └── LaunchError              the command could not be started at all
          └── NodesExhausted      exit 4: bans (or a failed preflight) leave too few nodes

Foreign errors (sqlite3, OSError) are translated at the boundary with `raise ... from`.
"""

from __future__ import annotations


class BabysitError(Exception):
    """Base of everything babysit reports as one line instead of a traceback."""


class UsageError(BabysitError):
    pass


class ConfigError(UsageError):
    pass


class CommandNotFound(UsageError):
    pass


class RunBusy(UsageError):
    pass


class RunNotFound(UsageError):
    pass


class RulesError(UsageError):
    pass


class LogNotFound(UsageError):
    pass


class StoreError(BabysitError):
    pass


class HomeNotWritable(StoreError, UsageError):
    pass


class StoreCorrupt(StoreError, UsageError):
    """babysit.db is empty, damaged or gone while events.jsonl still holds the history."""


class StoreWriteError(StoreError):
    pass


class LaunchError(BabysitError):
    pass


class NodesExhausted(LaunchError):
    pass
