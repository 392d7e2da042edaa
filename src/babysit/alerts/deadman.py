"""The dead-man switch: a URL pinged while babysit is alive, so that an outside monitor
(healthchecks.io, Cronitor, Uptime Kuma) notices when babysit itself died.

    d = Deadman("https://hc-ping.com/UUID", every_s=60, say=say)
    d.start(); ...; d.close()

One GET every `every_s`, from its own thread, with a short timeout. A failure is said once, and
again when it works again; the URL is only ever shown masked.
"""

from __future__ import annotations

import threading
import urllib.request
from collections.abc import Callable

from babysit.alerts.sender import mask_url
from babysit.records import Level, Say

TIMEOUT_S = 10.0


def _get(url: str) -> None:
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as resp:  # the operator's URL
        resp.read(1024)


class Deadman:
    def __init__(
        self, url: str, every_s: float, say: Say, get: Callable[[str], None] = _get
    ) -> None:
        self.url, self.every_s, self.say, self.get = url, every_s, say, get
        self.name = mask_url(url)
        self.pings = 0
        self.failing = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="babysit-deadman", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(TIMEOUT_S + 1)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.get(self.url)
            except Exception as exc:
                if not self.failing:
                    self.failing = True
                    self.say(
                        Level.WARN,
                        f"the dead-man URL {self.name} cannot be reached ({type(exc).__name__}); "
                        "babysit keeps trying, and the outside monitor may raise a false alarm",
                    )
            else:
                self.pings += 1
                if self.failing:
                    self.failing = False
                    self.say(Level.INFO, f"the dead-man URL {self.name} is reached again")
            self._stop.wait(self.every_s)
