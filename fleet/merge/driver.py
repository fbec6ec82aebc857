"""The git merge driver: ``fleet merge-driver %O %A %B %P [%S %X %Y]``.

Git's merge-driver protocol: ``%O`` is the ancestor's version, ``%A`` ours (the result is written
back to it), ``%B`` theirs, ``%P`` the path in the tree (it picks the language profile). Exit
status 0 means clean, 1 conflicted (``%A`` then holds the text with markers), 2 an error: a
message on stderr, and ``%A`` holds the whole file between conflict markers when the three files
could be read, because git reads every non-zero status as "conflicted" and would otherwise
record our side as if it were the merge. The driver never exits by a traceback.

Conflict markers carry git's labels: ``%S``/``%X``/``%Y`` (ancestor, ours, theirs; git >= 2.44
expands them, older git passes them through unexpanded and they are ignored). Without them, under
``git merge`` of one branch (git sets ``GITHEAD_<sha>=<branch>`` for its merge drivers) the labels
are ``HEAD`` and the branch name, as in git's own markers; otherwise ``ours``/``base``/``theirs``.
Configure it with::

    git config merge.fleet.name "fleet structural merge"
    git config merge.fleet.driver "$(command -v fleet) merge-driver %O %A %B %P"
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


def fleet_executable() -> str:
    """The absolute path of the ``fleet`` executable running now (git runs the driver through
    ``sh`` with its own PATH, which may not hold a virtualenv's ``bin``)."""
    first = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if os.path.basename(first) == "fleet" and os.access(first, os.X_OK):
        return first
    return os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "fleet")


def help_text() -> str:
    import shlex

    quoted = shlex.quote(fleet_executable())
    return f"""{USAGE}

The git merge driver: a structural three-way merge written back to OURS (%A).
Exit 0 clean, 1 conflicted (OURS holds diff3 markers), 2 error: a message on stderr and, when
the three files could be read, OURS holds the whole file between conflict markers (never a
silent "ours").
PATH (%P) is the path in the tree; it picks the language (default: OURS).
The labels (%S %X %Y, expanded by git >= 2.44) name the sides in the conflict markers;
without them `git merge`'s labels are used (HEAD and the branch name), else ours/base/theirs.

Set it up in a repository (the absolute path: git's shell may not have fleet on its PATH):
  git config merge.fleet.name "fleet structural merge"
  git config merge.fleet.driver "{quoted} merge-driver %O %A %B %P"
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


def _whole_file_conflict(paths: tuple[str, str, str]) -> str | None:
    """All of OURS, BASE and THEIRS between conflict markers, None if one cannot be read."""
    try:
        base, ours, theirs = (_read(p) for p in paths)
    except OSError:
        return None

    def block(text: str) -> str:
        return text if not text or text.endswith("\n") else text + "\n"

    return (
        f"<<<<<<< ours\n{block(ours)}||||||| base\n{block(base)}"
        f"=======\n{block(theirs)}>>>>>>> theirs\n"
    )


def _fail(message: str, paths: tuple[str, str, str]) -> int:
    """Exit 2 with a message; OURS gets the whole file as one conflict so that git (which reads
    any non-zero status as a conflict) never records our side silently."""
    print(f"fleet merge-driver: {message}", file=sys.stderr)
    marked = _whole_file_conflict(paths)
    if marked is not None:
        try:
            with open(paths[1], "wb") as handle:
                handle.write(marked.encode("utf-8", "surrogateescape"))
        except OSError as exc:
            print(f"fleet merge-driver: cannot write {paths[1]}: {exc}", file=sys.stderr)
    return 2


def main(argv: list[str]) -> int:
    """Merge the files named by ``argv`` (``%O %A %B [%P [%S [%X [%Y]]]]``), write the result to
    ``%A`` (conflict markers carry the labels, see the module docstring); return 0 (clean),
    1 (conflicted) or 2 (error: a message on stderr, see :func:`_fail`). Never raises: a fault in
    the structural stage keeps git's line merge, any other fault is an error."""
    if argv and argv[0] in ("-h", "--help"):
        print(help_text())
        return 0
    if not 3 <= len(argv) <= 7:
        print(USAGE, file=sys.stderr)
        return 2
    paths = (argv[0], argv[1], argv[2])
    path = argv[3] if len(argv) >= 4 else argv[1]
    try:
        return _merge(paths, path, argv[4:])
    except Exception as exc:  # git's protocol: a fault is exit 2 with a message, not a traceback
        return _fail(f"{path}: {type(exc).__name__}: {exc}", paths)


def _merge(paths: tuple[str, str, str], path: str, labels: list[str]) -> int:
    from fleet.errors import FleetError
    from fleet.merge._line import git_merge_file_paths

    base_path, ours_path, theirs_path = paths
    try:
        # git's own files go straight to git; a clean line merge is written back as git's bytes.
        merged, conflicts = git_merge_file_paths(base_path, ours_path, theirs_path)
        if conflicts == 0:
            with open(ours_path, "wb") as handle:
                handle.write(merged)
            return 0
        from fleet.merge._line import as_result
        from fleet.merge._merge3 import after_line_stage
        from fleet.merge._result import Clean, MergeResult, relabel

        line = as_result(merged, conflicts)
        base, ours, theirs = (_read(p) for p in paths)
    except (OSError, FleetError) as exc:
        return _fail(f"{path}: {exc}", paths)
    result: MergeResult
    try:
        result = after_line_stage(base, ours, theirs, path, line)
    except Exception as exc:  # a fault of the structural stage: git's line merge stands
        print(
            f"fleet merge-driver: {path}: structural stage failed ({type(exc).__name__}: {exc});"
            " git's line merge kept",
            file=sys.stderr,
        )
        result = line
    if isinstance(result, Clean):
        text = result.text
    else:
        base_label, ours_label, theirs_label = _labels(labels, os.environ)
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
