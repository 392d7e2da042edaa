"""Schema migrations: MIGRATIONS[i] brings the database from version i to i + 1.

The version lives in SQLite's `PRAGMA user_version`. Append new migrations; never edit an old one.
"""

from __future__ import annotations

MIGRATIONS: list[tuple[str, ...]] = [
    (
        """CREATE TABLE runs (
            name TEXT PRIMARY KEY,
            created REAL NOT NULL,
            updated REAL NOT NULL,
            state TEXT NOT NULL,
            reason TEXT,
            exit_code INTEGER,
            command TEXT NOT NULL,
            cwd TEXT NOT NULL,
            config TEXT,
            supervisor_pid INTEGER,
            supervisor_started REAL,
            supervisor_host TEXT,
            budget_from INTEGER NOT NULL DEFAULT 1
        )""",
        """CREATE TABLE attempts (
            run TEXT NOT NULL REFERENCES runs(name),
            number INTEGER NOT NULL,
            started REAL NOT NULL,
            ended REAL,
            host TEXT,
            pid INTEGER,
            launcher_pid INTEGER,
            launcher_started REAL,
            argv TEXT,
            resume_from TEXT,
            log_dir TEXT,
            token TEXT,
            outcome TEXT NOT NULL,
            exit_code INTEGER,
            signal INTEGER,
            first_step INTEGER,
            last_step INTEGER,
            category TEXT,
            transient INTEGER,
            fingerprint TEXT,
            summary TEXT,
            stdout_offset INTEGER NOT NULL DEFAULT 0,
            stderr_offset INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (run, number)
        )""",
        """CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            run TEXT NOT NULL,
            attempt INTEGER,
            ts REAL NOT NULL,
            kind TEXT NOT NULL,
            message TEXT NOT NULL,
            data TEXT
        )""",
        "CREATE INDEX events_run ON events (run, id)",
    ),
    (
        """CREATE TABLE incidents (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            run TEXT NOT NULL,
            attempt INTEGER,
            ts REAL NOT NULL,
            kind TEXT NOT NULL,
            category TEXT NOT NULL,
            step INTEGER,
            metric TEXT,
            value REAL,
            baseline REAL,
            line INTEGER,
            message TEXT NOT NULL,
            window TEXT
        )""",
        "CREATE INDEX incidents_run ON incidents (run, id)",
        """CREATE TABLE metrics (
            run TEXT NOT NULL,
            attempt INTEGER,
            ts REAL NOT NULL,
            step INTEGER,
            vals TEXT NOT NULL
        )""",
        "CREATE INDEX metrics_run ON metrics (run, ts)",
    ),
    (
        # v3: triage verdicts, searchable by fingerprint ("seen before") and host.
        """CREATE TABLE diagnoses (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            run TEXT NOT NULL,
            attempt INTEGER,
            ts REAL NOT NULL,
            category TEXT NOT NULL,
            transient INTEGER,
            suspect TEXT,
            host TEXT,
            rank INTEGER,
            gpu TEXT,
            fingerprint TEXT,
            confidence REAL,
            summary TEXT NOT NULL,
            document TEXT NOT NULL
        )""",
        "CREATE INDEX diagnoses_run ON diagnoses (run, id)",
        "CREATE INDEX diagnoses_fingerprint ON diagnoses (fingerprint, ts)",
    ),
    (
        # v4: recovery. What each attempt resumed from and was handed (rollbacks), the node
        # registry (failures and health checks per host, bans with expiry and probation), and
        # the grouped stacks of hung attempts.
        "ALTER TABLE attempts ADD COLUMN resume_step INTEGER",
        "ALTER TABLE attempts ADD COLUMN suspect_host TEXT",
        "ALTER TABLE attempts ADD COLUMN anomaly_step INTEGER",
        "ALTER TABLE attempts ADD COLUMN anomaly_kind TEXT",
        "ALTER TABLE attempts ADD COLUMN anomaly_message TEXT",
        "ALTER TABLE attempts ADD COLUMN skip_steps TEXT",
        "ALTER TABLE attempts ADD COLUMN lr_scale REAL",
        "ALTER TABLE attempts ADD COLUMN hosts TEXT",
        """CREATE TABLE node_events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            ts REAL NOT NULL,
            host TEXT NOT NULL,
            gpu TEXT,
            run TEXT,
            attempt INTEGER,
            kind TEXT NOT NULL,
            category TEXT,
            reason TEXT NOT NULL,
            data TEXT
        )""",
        "CREATE INDEX node_events_host ON node_events (host, ts)",
        """CREATE TABLE bans (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            host TEXT NOT NULL,
            reason TEXT NOT NULL,
            since REAL NOT NULL,
            expires REAL,
            probation_s REAL NOT NULL DEFAULT 0,
            by TEXT NOT NULL,
            run TEXT,
            lifted REAL,
            lifted_reason TEXT
        )""",
        "CREATE INDEX bans_host ON bans (host, since)",
        """CREATE TABLE stacks (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            run TEXT NOT NULL,
            attempt INTEGER,
            ts REAL NOT NULL,
            summary TEXT NOT NULL,
            report TEXT NOT NULL
        )""",
        "CREATE INDEX stacks_run ON stacks (run, id)",
    ),
]
