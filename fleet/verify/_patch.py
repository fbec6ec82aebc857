"""Unified diffs: parse them into files and line numbers, and materialise the base and the
patched tree of a repository in a scratch directory (``git archive``, then ``git apply``)."""

from __future__ import annotations

import io
import re
import shutil
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from fleet.errors import GitError
from fleet.forge._git import run as run_git
from fleet.graph import read_source
from fleet.verify.spans import decode_source

__all__ = ["FilePatch", "Trees", "apply_patch", "export_tree", "parse_patch", "read"]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class FilePatch:
    """One file of a diff: removed lines (old numbering) and added lines (new numbering)."""

    old_path: str | None
    new_path: str | None
    removed: list[int] = field(default_factory=list)
    added: list[int] = field(default_factory=list)
    removed_text: dict[int, str] = field(default_factory=dict)
    added_text: dict[int, str] = field(default_factory=dict)
    binary: bool = False

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""


def _strip(name: str) -> str | None:
    name = name.split("\t", 1)[0].strip()
    if name == "/dev/null":
        return None
    return name[2:] if name[:2] in ("a/", "b/") else name


def parse_patch(text: str) -> list[FilePatch]:
    """Every file of a unified (git) diff. Raises ``ValueError`` on a malformed hunk."""
    files: list[FilePatch] = []
    current: FilePatch | None = None
    old_no = new_no = 0
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("diff --git "):
            parts = line[len("diff --git ") :].split(" b/", 1)
            old = parts[0][2:] if parts[0].startswith("a/") else parts[0]
            current = FilePatch(old, parts[1] if len(parts) > 1 else old)
            files.append(current)
        elif line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            if current is None or current.removed or current.added:
                current = FilePatch(None, None)
                files.append(current)
            current.old_path = _strip(line[4:])
            current.new_path = _strip(lines[i + 1][4:])
            i += 1
        elif line.startswith(("new file mode", "deleted file mode")) and current is not None:
            if line.startswith("new"):
                current.old_path = None
            else:
                current.new_path = None
        elif line.startswith("rename from ") and current is not None:
            current.old_path = line[len("rename from ") :]
        elif line.startswith("rename to ") and current is not None:
            current.new_path = line[len("rename to ") :]
        elif line.startswith(("Binary files", "GIT binary patch")) and current is not None:
            current.binary = True
        elif line.startswith("@@"):
            match = _HUNK.match(line)
            if match is None or current is None:
                raise ValueError(f"malformed hunk header: {line!r}")
            old_no, new_no = int(match.group(1)), int(match.group(3))
            old_left = int(match.group(2) or 1)
            new_left = int(match.group(4) or 1)
            while (old_left > 0 or new_left > 0) and i + 1 < len(lines):
                i += 1
                body = lines[i]
                tag, content = (body[:1], body[1:]) if body else (" ", "")
                if tag == "\\":
                    continue
                if tag == "-":
                    current.removed.append(old_no)
                    current.removed_text[old_no] = content
                    old_no, old_left = old_no + 1, old_left - 1
                elif tag == "+":
                    current.added.append(new_no)
                    current.added_text[new_no] = content
                    new_no, new_left = new_no + 1, new_left - 1
                elif tag == " ":
                    old_no, new_no = old_no + 1, new_no + 1
                    old_left, new_left = old_left - 1, new_left - 1
                else:
                    raise ValueError(f"malformed hunk line: {body!r}")
        i += 1
    return files


def export_tree(repo: Path, rev: str, dest: Path) -> None:
    """Write the tree of ``rev`` into ``dest`` (no .git; the repository is not touched)."""
    done = run_git(repo, "archive", "--format=tar", rev)
    if done.returncode != 0:
        raise GitError(f"git archive {rev} in {repo}: {done.stderr.decode(errors='replace')}")
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as tar:
        tar.extractall(dest, filter="data")


def apply_patch(tree: Path, patch: str, check: bool = False) -> tuple[bool, str]:
    """``git apply`` (``--check`` only when ``check``) in a plain directory tree."""
    args = ["apply", "--whitespace=nowarn", *(["--check"] if check else []), "-"]
    done = run_git(tree, *args, input=patch.encode(errors="surrogateescape"))
    return done.returncode == 0, done.stderr.decode(errors="replace").strip()


class Trees:
    """Scratch copies of the base (``rev``) and of the base with ``patch`` applied.

    ``applied`` is False (and ``error`` says why) when the patch does not apply; then
    ``patched`` is absent. Removes everything on exit.
    """

    def __init__(self, repo: Path, patch: str, rev: str = "HEAD") -> None:
        self.repo, self.patch, self.rev = repo, patch, rev
        self.root = Path(tempfile.mkdtemp(prefix="fleet-verify-"))
        self.base = self.root / "base"
        self.patched = self.root / "patched"
        self.applied = False
        self.error = ""
        self.base_sha = ""

    def __enter__(self) -> Trees:
        self.base.mkdir()
        done = run_git(self.repo, "rev-parse", "--verify", f"{self.rev}^{{commit}}")
        if done.returncode != 0:
            raise GitError(f"no commit {self.rev} in {self.repo}: {done.stderr.decode().strip()}")
        self.base_sha = done.stdout.decode().strip()
        export_tree(self.repo, self.base_sha, self.base)
        self.applied, self.error = apply_patch(self.base, self.patch, check=True)
        if self.applied:
            shutil.copytree(self.base, self.patched, symlinks=True)
            self.applied, self.error = apply_patch(self.patched, self.patch)
        for tree in (self.base, self.patched):
            if tree.exists():
                tree.chmod(0o777)  # a sandbox may run as nobody: let it write its reports here
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def scratch(self, name: str) -> Path:
        """A fresh copy of the base for a partial application (the test-first gate)."""
        dest = self.root / name
        shutil.copytree(self.base, dest, symlinks=True)
        dest.chmod(0o777)
        return dest


def read(tree: Path, path: str | None) -> str | None:
    """The text of ``path`` in ``tree`` (None when absent or not text)."""
    if path is None:
        return None
    raw, _ = read_source(tree, path)  # never a link, device, FIFO or oversized file
    if raw is None:
        return None
    try:
        # PEP 263: a Python file's coding declaration or BOM
        text = decode_source(raw)[0] if path.endswith((".py", ".pyi")) else raw.decode("utf-8")
    except (UnicodeDecodeError, SyntaxError, LookupError):
        return None
    return text.replace("\r\n", "\n").replace("\r", "\n")
