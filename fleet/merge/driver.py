"""The git merge driver: ``fleet merge-driver %O %A %B %P [%S %X %Y]``.

Git's merge-driver protocol: ``%O`` is the ancestor's version, ``%A`` ours (the result is written
back to it), ``%B`` theirs, ``%P`` the path in the tree (it picks the language profile). Exit
status 0 means clean, 1 conflicted (``%A`` then holds the text with markers), anything above 1 an
error (``%A`` untouched).

Conflict markers carry git's labels: ``%S``/``%X``/``%Y`` (ancestor, ours, theirs; git >= 2.44
expands them, older git passes them through unexpanded and they are ignored). Without them, under
``git merge`` of one branch (git sets ``GITHEAD_<sha>=<branch>`` for its merge drivers) the labels
are ``HEAD`` and the branch name, as in git's own markers; otherwise ``ours``/``base``/``theirs``.
Configure it with::

    git config merge.fleet.name "fleet structural merge"
    git config merge.fleet.driver "fleet merge-driver %O %A %B %P"
    echo '*.py merge=fleet' >> .gitattributes

``fleet_pipelines.cli`` dispatches here before typer is imported, and this module imports only the
line stage: libcst loads only when lines conflict in a Python file.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

USAGE = (
    "usage: fleet merge-driver BASE(%O) OURS(%A) THEIRS(%B) [PATH(%P)"
    " [BASE_LABEL(%S) [OURS_LABEL(%X) [THEIRS_LABEL(%Y)]]]]"
)
HELP = f"""{USAGE}

The git merge driver: a structural three-way merge written back to OURS (%A).
Exit 0 clean, 1 conflicted (OURS holds diff3 markers), 2 error (OURS untouched).
PATH (%P) is the path in the tree; it picks the language (default: OURS).
The labels (%S %X %Y, expanded by git >= 2.44) name the sides in the conflict markers;
without them `git merge`'s labels are used (HEAD and the branch name), else ours/base/theirs.

Set it up in a repository:
  git config merge.fleet.name "fleet structural merge"
  git config merge.fleet.driver "fleet merge-driver %O %A %B %P"
  echo '*.py merge=fleet' >> .gitattributes

To merge three files by hand, use `fleet merge BASE OURS THEIRS`."""


def _read(path: str) -> str:
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8", "surrogateescape")


def _labels(given: list[str], environ: Mapping[str, str]) -> tuple[str, str, str]:
    """The (base, ours, theirs) marker labels: the given ones, else ``git merge``'s, else
    ``base``/``ours``/``theirs``. An empty or unexpanded placeholder (``%X``) is not given."""
    merged = [v for k, v in environ.items() if k.startswith("GITHEAD_") and v]
    defaults = ["base", "HEAD", merged[0]] if len(merged) == 1 else ["base", "ours", "theirs"]
    labels = []
    for index, fallback in enumerate(defaults):
        value = given[index] if index < len(given) else ""
        value = " ".join(value.split())  # one marker line, whatever the label holds
        unexpanded = len(value) == 2 and value.startswith("%")
        labels.append(fallback if not value or unexpanded else value)
    return labels[0], labels[1], labels[2]


def main(argv: list[str]) -> int:
    """Merge the files named by ``argv`` (``%O %A %B [%P [%S [%X [%Y]]]]``), write the result to
    ``%A`` (conflict markers carry the labels, see the module docstring); return 0 (clean),
    1 (conflicted) or 2 (error, with a message on stderr)."""
    if argv and argv[0] in ("-h", "--help"):
        print(HELP)
        return 0
    if not 3 <= len(argv) <= 7:
        print(USAGE, file=sys.stderr)
        return 2
    base_path, ours_path, theirs_path = argv[:3]
    path = argv[3] if len(argv) >= 4 else ours_path
    from fleet.errors import FleetError
    from fleet.merge._line import as_result, git_merge_file_paths
    from fleet.merge._merge3 import after_line_stage
    from fleet.merge._result import Clean, MergeResult, relabel

    result: MergeResult
    try:
        # git's own files go straight to git; a clean line merge is written back as git's bytes.
        merged, conflicts = git_merge_file_paths(base_path, ours_path, theirs_path)
        if conflicts == 0:
            with open(ours_path, "wb") as handle:
                handle.write(merged)
            return 0
        line = as_result(merged, conflicts)
        base, ours, theirs = (_read(p) for p in (base_path, ours_path, theirs_path))
        result = after_line_stage(base, ours, theirs, path, line)
    except (OSError, FleetError) as exc:
        print(f"fleet merge-driver: {path}: {exc}", file=sys.stderr)
        return 2
    if isinstance(result, Clean):
        text = result.text
    else:
        base_label, ours_label, theirs_label = _labels(argv[4:], os.environ)
        text = relabel(result.text_with_markers, ours_label, base_label, theirs_label)
    try:
        with open(ours_path, "wb") as handle:
            handle.write(text.encode("utf-8", "surrogateescape"))
    except OSError as exc:
        print(f"fleet merge-driver: cannot write {ours_path}: {exc}", file=sys.stderr)
        return 2
    return 0 if isinstance(result, Clean) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
