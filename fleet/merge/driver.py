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
Configure it with ``fleet merge-driver --install [REPO]`` (:func:`install`: the fastest line,
:func:`shell_line`), or by hand::

    git config merge.fleet.name "fleet structural merge"
    git config merge.fleet.driver "$(command -v fleet) merge-driver %O %A %B %P"
    echo '*.py merge=fleet' >> .gitattributes

``fleet_pipelines.cli`` dispatches here before typer is imported, and this module imports only the
line stage: libcst loads only when lines conflict in a Python file.
"""

import os
import sys

TYPE_CHECKING = False  # typing's constant would import typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["ATTRIBUTE", "USAGE", "fast_command", "fleet_executable", "help_text", "install", "main",
           "shell_line"]

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

Set it up in a repository with its fastest line (below), in one command:
  {quoted} merge-driver --install [REPO]
which sets merge.fleet.name and merge.fleet.driver in REPO's .git/config (default: the
repository around the current directory) and adds "*.py merge=fleet" to its .gitattributes.

Or by hand (the absolute path: git's shell may not have fleet on its PATH):
  git config merge.fleet.name "fleet structural merge"
  git config merge.fleet.driver "{quoted} merge-driver %O %A %B %P"
  echo '*.py merge=fleet' >> .gitattributes

The same driver starting in about a third of the time (no console script, no site until lines
conflict), as a .git/config entry:
  [merge "fleet"]
      driver = {fast_command()} %O %A %B %P

Fastest: git's own line merge first, from git's shell; Python starts only if lines conflict:
  [merge "fleet"]
      driver = {shell_line()}

When lines conflict, a warm merge server (libcst already imported; one per user, started on
first use, detached, exits after 10 idle minutes) merges for the driver; the driver merges itself
whenever the server cannot. FLEET_MERGE_SERVER=0 turns it off;
`fleet merge-driver --stop-server` stops it.

To merge three files by hand, use `fleet merge BASE OURS THEIRS`."""


def _read(path: str) -> str:
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8", "surrogateescape")


def _labels(given: list[str], environ: "Mapping[str, str]") -> tuple[str, str, str]:
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


def _whole_file_conflict(paths: tuple[str, str, str], ours_bytes: bytes | None) -> str | None:
    """All of OURS (``ours_bytes`` if given: what OURS held before git wrote to it), BASE and
    THEIRS between conflict markers, None if one cannot be read."""
    try:
        base, ours, theirs = (_read(p) for p in paths)
    except OSError:
        return None
    if ours_bytes is not None:
        ours = ours_bytes.decode("utf-8", "surrogateescape")

    def block(text: str) -> str:
        return text if not text or text.endswith("\n") else text + "\n"

    return (
        f"<<<<<<< ours\n{block(ours)}||||||| base\n{block(base)}"
        f"=======\n{block(theirs)}>>>>>>> theirs\n"
    )


def _fail(message: str, paths: tuple[str, str, str], ours_bytes: bytes | None = None) -> int:
    """Exit 2 with a message; OURS gets the whole file as one conflict so that git (which reads
    any non-zero status as a conflict) never records our side silently."""
    print(f"fleet merge-driver: {message}", file=sys.stderr)
    marked = _whole_file_conflict(paths, ours_bytes)
    if marked is not None:
        try:
            with open(paths[1], "wb") as handle:
                handle.write(marked.encode("utf-8", "surrogateescape"))
        except OSError as exc:
            print(f"fleet merge-driver: cannot write {paths[1]}: {exc}", file=sys.stderr)
    return 2


def main(argv: list[str], *, use_server: bool = True) -> int:
    """Merge the files named by ``argv`` (``%O %A %B [%P [%S [%X [%Y]]]]``), write the result to
    ``%A`` (conflict markers carry the labels, see the module docstring); return 0 (clean),
    1 (conflicted) or 2 (error: a message on stderr, see :func:`_fail`). Never raises: a fault in
    the structural stage keeps git's line merge, any other fault is an error.

    When git's line merge conflicts, the warm merge server (:mod:`fleet.merge._server`) runs
    this same function for it unless ``use_server`` is False (the server's own call) or
    ``FLEET_MERGE_SERVER=0``; if it cannot, this process merges, with the same result.
    ``--stop-server`` asks this user's merge servers to exit; ``--install [REPO]`` configures a
    repository (:func:`install`)."""
    if argv and argv[0] in ("-h", "--help"):
        print(help_text())
        return 0
    if argv[:1] == ["--install"]:
        if len(argv) > 2:
            print("usage: fleet merge-driver --install [REPO]", file=sys.stderr)
            return 2
        return install(argv[1] if len(argv) == 2 else ".")
    if argv == ["--stop-server"]:
        from fleet.merge._client import stop_servers

        print(f"fleet merge-driver: stopped {stop_servers(os.environ)} merge server(s)")
        return 0
    conflicted = False  # known already: git's line merge conflicted (the shell line)
    if len(argv) >= 2 and argv[0] == "--drop":  # shell_line's conflict branch: git's -p output
        try:  # noqa: SIM105 (contextlib is one more import at start-up)
            os.remove(argv[1])
        except OSError:
            pass
        argv = argv[2:]
        conflicted = True
    if not 3 <= len(argv) <= 7:
        print(USAGE, file=sys.stderr)
        return 2
    paths = (argv[0], argv[1], argv[2])
    path = argv[3] if len(argv) >= 4 else argv[1]
    try:
        return _merge(paths, path, argv[4:], argv if use_server else None, conflicted)
    except Exception as exc:  # git's protocol: a fault is exit 2 with a message, not a traceback
        return _fail(f"{path}: {type(exc).__name__}: {exc}", paths)


ATTRIBUTE = "*.py merge=fleet"


def install(where: str) -> int:
    """Configure the repository around ``where`` to merge Python files with this driver's
    :func:`shell_line` (git's line merge first, Python only if lines conflict): ``merge.fleet``
    in its config, ``*.py merge=fleet`` in its top-level ``.gitattributes`` (added once). Exit
    0, or 2 with one line when ``where`` is not in a git work tree or git refuses."""
    import subprocess

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "-C", where, *args], capture_output=True, text=True,
                              check=False)

    try:
        top = git("rev-parse", "--show-toplevel")
    except OSError as exc:  # no git to run
        print(f"fleet merge-driver --install: cannot run git: {exc}", file=sys.stderr)
        return 2
    if top.returncode != 0 or not top.stdout.strip():
        detail = (top.stderr.strip().splitlines() or ["git rev-parse failed"])[-1]
        print(f"fleet merge-driver --install: {where} is not in a git work tree ({detail})",
              file=sys.stderr)
        return 2
    root = top.stdout.strip()
    line = shell_line()
    for key, value in (("merge.fleet.name", "fleet structural merge"),
                       ("merge.fleet.driver", line)):
        done = git("config", key, value)
        if done.returncode != 0:
            print(f"fleet merge-driver --install: git config {key} failed in {root}: "
                  f"{done.stderr.strip()}", file=sys.stderr)
            return 2
    attributes = os.path.join(root, ".gitattributes")
    try:
        with open(attributes, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as exc:
        print(f"fleet merge-driver --install: cannot read {attributes}: {exc}", file=sys.stderr)
        return 2
    if ATTRIBUTE in (" ".join(row.split()) for row in text.splitlines()):
        added = "already had"
    else:
        try:
            with open(attributes, "a", encoding="utf-8") as handle:
                handle.write(("\n" if text and not text.endswith("\n") else "") + ATTRIBUTE + "\n")
        except OSError as exc:
            print(f"fleet merge-driver --install: cannot write {attributes}: {exc}",
                  file=sys.stderr)
            return 2
        added = "added"
    print(f"fleet merge-driver: merge.fleet set in the git config of {root}; {attributes} "
          f"{added} '{ATTRIBUTE}'\n  driver = {line}")
    return 0


def _served(argv: list[str], ours_path: str, ours_bytes: bytes) -> int | None:
    """The warm server's exit status for ``argv`` (OURS put back as it was first: the server
    merges from the start), or None when this process must merge: OURS is then as it was."""
    with open(ours_path, "wb") as handle:
        handle.write(ours_bytes)
    from fleet.merge._client import merge

    status = merge(argv)
    if status is None:  # a server that died mid-request may have written OURS
        with open(ours_path, "wb") as handle:
            handle.write(ours_bytes)
    return status


def _git_in_place(paths: tuple[str, str, str]) -> int:
    """``git merge-file --diff3`` writing the merge into OURS, as git's own merge does; return
    git's status (the number of conflicts, capped at 127). ``os.posix_spawnp`` rather than
    ``subprocess``: importing subprocess costs the driver's start-up more than git's merge.

    This is the one place outside ``fleet.forge._git`` (and ``fleet.merge._line``) that runs git,
    on purpose: through ``fleet.forge._git.run`` the same clean merge (this file, one edit at each
    end, ``python -S _run_driver.py``) took a median of 290 ms against 58 ms here (20 runs each,
    interleaved, on a loaded 2-core machine; ``git merge-file`` alone 14 ms), importing 107
    modules against 26."""
    base_path, ours_path, theirs_path = paths
    command = ["git", "merge-file", "-q", "--diff3", "-L", "ours", "-L", "base", "-L", "theirs"]
    pid = os.posix_spawnp("git", [*command, ours_path, base_path, theirs_path], os.environ)
    status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    if status < 0 or status > 127:
        raise OSError(f"{' '.join(command)} exited {status}")
    return status


def _merge(
    paths: tuple[str, str, str],
    path: str,
    labels: list[str],
    served: list[str] | None,
    conflicted: bool,
) -> int:
    """The fast path first: git merges OURS in place and a clean result is git's, untouched
    (nothing but ``os`` and ``sys`` imported). Only on a conflict are the merge's modules
    loaded, and libcst only for a Python file (the structural stage); first, unless ``served``
    is None, the warm server is asked to run ``main(served)`` (``conflicted``: git's line merge
    is known to conflict, so it is asked before git runs here)."""
    base_path, ours_path, theirs_path = paths
    try:
        with open(ours_path, "rb") as handle:
            ours_bytes = handle.read()  # git overwrites OURS; the structural stage needs it
    except OSError as exc:
        return _fail(f"{path}: {exc}", paths)
    try:
        if served is not None and conflicted:
            status = _served(served, ours_path, ours_bytes)
            if status is not None:
                return status
        conflicts = _git_in_place(paths)
        if conflicts == 0:
            return 0
        with open(ours_path, "rb") as handle:
            merged = handle.read()
        if served is not None and not conflicted:
            status = _served(served, ours_path, ours_bytes)
            if status is not None:
                return status
    except OSError as exc:
        return _fail(f"{path}: {exc}", paths, ours_bytes)
    if sys.flags.no_site and "site" not in sys.modules:  # -S (the fast line): libcst needs site
        import site

        site.main()
    try:
        from fleet.errors import FleetError
        from fleet.merge._line import as_result
        from fleet.merge._merge3 import after_line_stage
        from fleet.merge._result import Clean, MergeResult, relabel

        line = as_result(merged, conflicts)
        ours = ours_bytes.decode("utf-8", "surrogateescape")
        base, theirs = (_read(p) for p in (base_path, theirs_path))
    except (OSError, FleetError) as exc:
        return _fail(f"{path}: {exc}", paths, ours_bytes)
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


def fast_command() -> str:
    """The driver line that starts fastest: ``_run_driver.py`` run as a script by ``python -S``
    (no ``site``, no console script, no ``runpy``); ``site`` is loaded only if lines conflict."""
    import shlex

    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_run_driver.py")
    return f"{shlex.quote(sys.executable)} -S {shlex.quote(script)}"


def shell_line(python: str | None = None) -> str:
    """The whole driver line (``%O %A %B %P`` included) that merges a git-clean file without
    starting Python: git runs a driver line holding shell operators through ``sh -c``, so
    ``git merge-file -p`` writes the line merge beside OURS and, if it is clean, ``mv`` puts it
    in place (git's bytes, as on the other lines). Otherwise (a conflict, or git or ``mv``
    failing) :func:`fast_command`'s line runs with ``--drop FILE``: it removes git's output and
    merges as always, OURS still untouched. ``%A`` is a temporary file git names
    ``.merge_file_XXXXXX``, so ``%A.fleet`` needs no quoting. ``python``: the interpreter
    (tests)."""
    import shlex

    fast = fast_command()
    if python is not None:
        fast = shlex.quote(python) + fast[fast.index(" -S ") :]
    out = "%A.fleet"
    git = f"git merge-file -q -p --diff3 -L ours -L base -L theirs %A %O %B >{out}"
    return f"{git} && mv -f {out} %A || {fast} --drop {out} %O %A %B %P"


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
