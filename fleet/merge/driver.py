"""The git merge driver: ``fleet merge-driver %O %A %B %P``.

Git's merge-driver protocol: ``%O`` is the ancestor's version, ``%A`` ours (the result is written
back to it), ``%B`` theirs, ``%P`` the path in the tree (it picks the language profile). Exit
status 0 means clean, 1 conflicted (``%A`` then holds the text with markers), anything above 1 an
error (``%A`` untouched). Configure it with::

    git config merge.fleet.name "fleet structural merge"
    git config merge.fleet.driver "fleet merge-driver %O %A %B %P"
    echo '*.py merge=fleet' >> .gitattributes

``fleet_pipelines.cli`` dispatches here before typer is imported, and this module imports only the
line stage: libcst loads only when lines conflict in a Python file.
"""

from __future__ import annotations

import sys

USAGE = "usage: fleet merge-driver BASE(%O) OURS(%A) THEIRS(%B) [PATH(%P)]"
HELP = f"""{USAGE}

The git merge driver: a structural three-way merge written back to OURS (%A).
Exit 0 clean, 1 conflicted (OURS holds diff3 markers), 2 error (OURS untouched).
PATH (%P) is the path in the tree; it picks the language (default: OURS).

Set it up in a repository:
  git config merge.fleet.name "fleet structural merge"
  git config merge.fleet.driver "fleet merge-driver %O %A %B %P"
  echo '*.py merge=fleet' >> .gitattributes

To merge three files by hand, use `fleet merge BASE OURS THEIRS`."""


def _read(path: str) -> str:
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8", "surrogateescape")


def main(argv: list[str]) -> int:
    """Merge the files named by ``argv`` (``%O %A %B [%P]``), write the result to ``%A``;
    return 0 (clean), 1 (conflicted) or 2 (error, with a message on stderr)."""
    if argv and argv[0] in ("-h", "--help"):
        print(HELP)
        return 0
    if len(argv) not in (3, 4):
        print(USAGE, file=sys.stderr)
        return 2
    base_path, ours_path, theirs_path = argv[:3]
    path = argv[3] if len(argv) == 4 else ours_path
    from fleet.errors import FleetError
    from fleet.merge._line import as_result, git_merge_file_paths
    from fleet.merge._merge3 import after_line_stage
    from fleet.merge._result import Clean, MergeResult

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
    text = result.text if isinstance(result, Clean) else result.text_with_markers
    try:
        with open(ours_path, "wb") as handle:
            handle.write(text.encode("utf-8", "surrogateescape"))
    except OSError as exc:
        print(f"fleet merge-driver: cannot write {ours_path}: {exc}", file=sys.stderr)
        return 2
    return 0 if isinstance(result, Clean) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
