"""Who may read a babysit home: its owner only by default, or a group when asked.

    mode = home_mode(os.environ)      # PRIVATE; BABYSIT_HOME_MODE=group -> GROUP; =keep -> KEEP
    notices = secure_home(home, mode) # create the home 0700 (02750), or tighten an old 0755 one
    secure_file(path, mode)           # a file babysit made itself: 0600 (0640)
    previous = set_umask(mode)        # while babysit runs: what it creates gets the same modes
    user_umask()                      # the umask babysit found, handed back to the training
    restore_umask(previous)

The home holds the run's output, its command lines and environment-derived paths: nobody else on
a shared login node should read them by default. `group` shares the home with the group that
owns it (directories 02750, setgid so new files keep that group; files 0640). `keep` leaves
modes and the umask as they are, for a home someone widened on purpose. An existing home wider
than the mode asks for (a 0755 one made by an older babysit) is tightened once, with a notice;
only its owner can change it, and babysit does not try on someone else's home.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from enum import Enum
from pathlib import Path

from babysit.errors import ConfigError

ENV = "BABYSIT_HOME_MODE"


class HomeMode(str, Enum):
    PRIVATE = "private"  # directories 0700, files 0600
    GROUP = "group"  # directories 02750, files 0640
    KEEP = "keep"  # babysit changes no mode and no umask

    @property
    def dir_mode(self) -> int | None:
        return {HomeMode.PRIVATE: 0o700, HomeMode.GROUP: 0o2750}.get(self)

    @property
    def file_mode(self) -> int | None:
        return {HomeMode.PRIVATE: 0o600, HomeMode.GROUP: 0o640}.get(self)

    @property
    def umask(self) -> int | None:
        return {HomeMode.PRIVATE: 0o077, HomeMode.GROUP: 0o027}.get(self)


def home_mode(env: Mapping[str, str]) -> HomeMode:
    """The mode BABYSIT_HOME_MODE asks for (default private). Raises ConfigError."""
    value = env.get(ENV, "").strip().lower() or HomeMode.PRIVATE.value
    try:
        return HomeMode(value)
    except ValueError:
        raise ConfigError(
            f"{ENV}={env.get(ENV)!r}: expected private (the default: only you can read the home), "
            "group (your group can read it) or keep (babysit leaves the modes alone)"
        ) from None


def secure_home(home: Path, mode: HomeMode) -> list[str]:
    """Create `home` with the mode's directory mode, or bring an existing one to it. Returns the
    notices for the operator (one line each). Raises OSError when it cannot be created."""
    want = mode.dir_mode
    if not home.is_dir():
        home.mkdir(parents=True, exist_ok=True)
        if want is not None:
            os.chmod(home, want)
        return []
    if want is None:
        return []
    try:
        st = home.stat()
    except OSError:
        return []
    have = stat.S_IMODE(st.st_mode)
    if have == want or st.st_uid != os.geteuid():
        return []  # someone else's home (a teammate's, shared): theirs to set
    try:
        os.chmod(home, want)
    except OSError:
        return []
    if mode is HomeMode.GROUP:
        return [
            f"babysit home {home} was {have:04o}: now {want:04o}, readable by its group "
            f"({ENV}=group)"
        ]
    return [
        f"babysit home {home} was {have:04o} (others could read the run's logs): made it private "
        f"({want:04o}). Set {ENV}=group to share it with your group, or {ENV}=keep to keep "
        "modes as you set them"
    ]


def secure_file(path: Path, mode: HomeMode) -> None:
    """Give a file babysit made the mode's file mode (when it is ours; a missing one is fine)."""
    want = mode.file_mode
    if want is None:
        return
    try:
        st = path.stat()
        if stat.S_IMODE(st.st_mode) != want and st.st_uid == os.geteuid():
            os.chmod(path, want)
    except OSError:
        pass


_found_umask: int | None = None  # the umask babysit found, before set_umask changed it


def set_umask(mode: HomeMode) -> int | None:
    """Set the process umask the mode asks for; return the one it replaced (give it back with
    restore_umask), or None when the mode is `keep`. The one found first is the training's."""
    global _found_umask
    if mode.umask is None:
        return None
    previous = os.umask(mode.umask)
    if _found_umask is None:
        _found_umask = previous
    return previous


def restore_umask(previous: int | None) -> None:
    global _found_umask
    if previous is not None:
        os.umask(previous)
        _found_umask = None


def user_umask() -> int | None:
    """The umask babysit found before set_umask changed it (else None): the training command
    gets it back, so that its checkpoints keep the modes they always had."""
    return _found_umask
