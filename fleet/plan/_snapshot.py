"""The tree a plan is made on: the base commit, not whatever the checkout holds.

Units start from ``base_commit``; their findings' lines and byte spans must be those of that
commit. A checkout with uncommitted edits (or untracked source files, or another commit checked
out) would otherwise give spans that miss, or hit the wrong code, in the unit's worktree.
"""

from __future__ import annotations

import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fleet.forge._git import archive, run
from fleet.home import HOME_DIR

__all__ = ["base_tree", "checkout_matches", "kept_base_tree"]


def checkout_matches(root: Path, base: str) -> bool:
    """True when ``root``'s files are exactly ``base``: HEAD is ``base`` and ``git status``
    shows no change and no untracked (not ignored) file. The fleet's own state directory
    (``root/.fleet``, the default, see ``fleet.home``) is not the repository's content, even
    where ``.git/info/exclude`` does not list it yet."""
    head = run(root, "rev-parse", "HEAD")
    if head.returncode != 0 or head.stdout.decode().strip() != base:
        return False
    status = run(root, "status", "--porcelain", "-z", "--untracked-files=normal", "--",
                  ".", f":(exclude,top){HOME_DIR}")
    return status.returncode == 0 and not status.stdout


@contextmanager
def base_tree(root: Path, base: str) -> Iterator[Path]:
    """A directory holding ``base``'s files: ``root`` itself when the checkout matches it, else
    a temporary export (``git archive``; nothing in ``root`` changes), removed on exit."""
    if checkout_matches(root, base):
        yield root
        return
    tmp = Path(tempfile.mkdtemp(prefix="fleet-plan-"))
    try:
        tar_file = tmp / "base.tar"
        archive(root, base, tar_file)
        tree = tmp / "tree"
        with tarfile.open(tar_file) as tar:
            tar.extractall(tree, filter="tar")
        tar_file.unlink()
        yield tree
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def kept_base_tree(root: Path, base: str, dest: Path) -> Path:
    """Like :func:`base_tree`, but an export is kept at ``dest`` (re-exported when ``base``
    changes; ``dest.commit`` beside it records which) instead of removed: ``root`` itself when
    its checkout matches ``base``. The index and the matchers read the graph's sources after
    the export, and a stable root keeps the next index incremental. ``root`` never changes."""
    stamp = dest.with_name(dest.name + ".commit")
    if dest.is_dir() and stamp.is_file() and stamp.read_text() == base:
        return dest
    with base_tree(root, base) as tree:
        if tree == root:
            return root
        shutil.rmtree(dest, ignore_errors=True)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(tree, dest)  # out of the temporary directory base_tree removes
    stamp.write_text(base)
    return dest
