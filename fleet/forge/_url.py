"""Repository URLs: ``Remote.parse`` and ``is_url`` (the text of ``FLEET_REPO``, ``FLEET_REMOTE``
and a command's ``REPO`` argument), re-exported by :mod:`fleet.forge.remote`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from fleet.errors import ConfigError

__all__ = ["SCHEMES", "Remote", "is_url"]

SCHEMES = ("file", "ssh", "git", "http", "https")
_SCP = re.compile(r"^(?:[\w.-]+@)?[\w.-]+:(?!//)[^\s]+$")
_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Remote:
    """A git remote by URL (``url`` is what git is given)."""

    url: str

    @classmethod
    def parse(cls, text: str) -> Remote:
        """``text`` as a remote; ``ConfigError`` naming it when it is no repository URL."""
        text = text.strip()
        if not text:
            raise ConfigError("repository URL: empty")
        if "://" in text:
            parts = urlsplit(text)
            if parts.scheme not in SCHEMES:
                raise ConfigError(f"repository URL {text!r}: scheme {parts.scheme!r} is not one "
                                  f"of {', '.join(SCHEMES)}")
            if parts.scheme != "file" and not parts.netloc:
                raise ConfigError(f"repository URL {text!r}: no host")
            if not parts.path.strip("/"):
                raise ConfigError(f"repository URL {text!r}: no repository path")
            return cls(text)
        if _SCP.match(text) and not Path(text).exists():
            return cls(text)
        return cls(Path(text).resolve().as_uri())

    @property
    def name(self) -> str:
        """A short file-system-safe name: the repository's last path component."""
        path = urlsplit(self.url).path if "://" in self.url else self.url.split(":", 1)[-1]
        stem = path.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git") or "repo"
        return _NAME.sub("-", stem)


def is_url(text: str) -> bool:
    """``text`` names a repository by URL (``scheme://`` or scp-style ``host:path``), not by a
    local path."""
    text = text.strip()
    return "://" in text or (bool(_SCP.match(text)) and not Path(text).exists())
