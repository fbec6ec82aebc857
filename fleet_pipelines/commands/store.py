"""``fleet token``, ``fleet memory`` and ``fleet ledger``: the store (``fleet serve``, the
coordinator API on it, is ``fleet_pipelines.commands.serve``). The store URL is ``--store``,
else ``$FLEET_STORE_URL``, else ``fleet.db`` in the state directory: ``$FLEET_HOME``, else the
``.fleet`` of the repository (``fleet serve --repo``, or the one the current directory is in;
``./.fleet`` outside any), see ``fleet.home``."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from fleet.store import Store

__all__ = [
    "StoreOption",
    "default_store_url",
    "ledger_app",
    "ledger_checkpoint",
    "ledger_show",
    "ledger_verify",
    "memory_add",
    "memory_app",
    "memory_list",
    "memory_remove",
    "open_cli_store",
    "register",
    "store_url_option",
    "token_app",
    "token_create",
    "token_list",
    "token_revoke",
]

def default_store_url(repo: Path | None = None) -> str:
    """``$FLEET_STORE_URL``, else ``fleet.db`` in ``$FLEET_HOME``, else in the state directory
    of the repository ``repo`` (default: the one the current directory is in). For a ``repo``
    named (``--repo``), a state directory or a SQLite store of another repository is refused
    (``fleet.home.HomeMismatch``, one line naming both); the store commands that name none
    (``token``, ``memory``, ``ledger show``) take ``$FLEET_HOME`` / ``$FLEET_STORE_URL`` as
    given: the fleet's tokens and notes are no repository's."""
    import os

    from fleet.home import check_home, check_store, home_of, repo_root

    root = repo_root(repo) if repo is not None else None
    home = home_of(root if root is not None else repo)
    if root is not None:
        check_home(home, root)
    url = os.environ.get("FLEET_STORE_URL") or f"sqlite:///{home.resolve() / 'fleet.db'}"
    if root is not None:
        check_store(url, root)
    return url


def store_url_option(value: str | None) -> str | None:
    """``--store``: a URL as given, or a path to a SQLite file (``.fleet/fleet.db``, the path the
    help names as the default) made ``sqlite:////abs/path``."""
    if not value or "://" in value or "dbname=" in value:
        return value
    return f"sqlite:///{Path(value).expanduser().resolve()}"


StoreOption = Annotated[
    str | None,
    typer.Option("--store", callback=store_url_option,
                 help="Store URL or SQLite file (default: $FLEET_STORE_URL, else fleet.db in "
                      "$FLEET_HOME, else in the repository's .fleet)."),
]

token_app = typer.Typer(name="token", help="API tokens of the coordinator.", no_args_is_help=True)
memory_app = typer.Typer(name="memory", help="Project memory notes.", no_args_is_help=True)
ledger_app = typer.Typer(name="ledger", help="The append-only ledger.", no_args_is_help=True)


def _open(url: str | None, *, existing: bool = False) -> Store:
    """The store at ``url`` (default: :func:`default_store_url`). ``existing`` (the commands
    that only read or remove): a SQLite file that does not exist is an error (exit 2), not a
    fresh empty store created wherever the command happened to run."""
    from fleet.errors import FleetError
    from fleet.store import open_store

    try:
        url = url or default_store_url()
    except FleetError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    if existing and url.startswith("sqlite:///") and not Path(url[len("sqlite:///") :]).is_file():
        typer.echo(
            f"error: no fleet store at {url} (pass --store URL or set FLEET_STORE_URL)", err=True
        )
        raise typer.Exit(2)
    try:
        return open_store(url)
    except FleetError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


open_cli_store = _open  # shared with `fleet stop`: the same --store / existing-store rules


def _when(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


@token_app.command("create")
def token_create(
    scope: Annotated[
        list[str],
        typer.Option("--scope", help="leases, jobs or admin (repeatable, or comma-separated)."),
    ],
    name: Annotated[str, typer.Option(help="Who the token is for.")] = "agent",
    store: StoreOption = None,
) -> None:
    """Create a bearer token; it is printed once and stored only hashed."""
    with _open(store) as opened:
        try:
            scopes = [part.strip() for item in scope for part in item.split(",") if part.strip()]
            secret, info = opened.tokens.create(name, scopes)
        except ValueError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from exc
    typer.echo(secret)
    typer.echo(f"token {info.token_id} for {info.name}: scopes {','.join(info.scopes)}", err=True)


@token_app.command("list")
def token_list(store: StoreOption = None) -> None:
    """List tokens (ids, names, scopes; never secrets)."""
    with _open(store, existing=True) as opened:
        for info in opened.tokens.list():
            state = "revoked" if info.revoked else "active"
            typer.echo(f"{info.token_id}  {info.name:<16} {','.join(info.scopes):<20} {state}")


@token_app.command("revoke")
def token_revoke(
    token_id: Annotated[str, typer.Argument(help="The id shown by `fleet token list`.")],
    store: StoreOption = None,
) -> None:
    """Revoke a token by id."""
    with _open(store, existing=True) as opened:
        if not opened.tokens.revoke(token_id):
            typer.echo(f"error: no active token {token_id}", err=True)
            raise typer.Exit(1)


@memory_app.command("add")
def memory_add(
    text: Annotated[str, typer.Argument(help="The note, fed verbatim into agent prompts.")],
    tag: Annotated[str, typer.Option(help="decision, constraint, deadline, note ...")] = "note",
    author: Annotated[str, typer.Option(help="Who wrote the note.")] = "",
    store: StoreOption = None,
) -> None:
    """Add a project memory note (fed into agent prompts)."""
    with _open(store) as opened:
        try:
            note = opened.memory.add(text, tag=tag, author=author)
        except ValueError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from exc
    typer.echo(note.note_id)


@memory_app.command("list")
def memory_list(
    tag: Annotated[str | None, typer.Option(help="Only notes with this tag.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="A JSON array.")] = False,
    store: StoreOption = None,
) -> None:
    """List project memory notes."""
    with _open(store, existing=True) as opened:
        notes = opened.memory.list(tag)
    if as_json:
        typer.echo(json.dumps([n.__dict__ for n in notes], indent=2))
        return
    for n in notes:
        typer.echo(f"{n.note_id:>4}  [{n.tag}] {n.text}" + (f"  ({n.author})" if n.author else ""))


@memory_app.command("remove")
def memory_remove(
    note_id: Annotated[int, typer.Argument(help="The id shown by `fleet memory list`.")],
    store: StoreOption = None,
) -> None:
    """Remove a note by id."""
    with _open(store, existing=True) as opened:
        if not opened.memory.remove(note_id):
            typer.echo(f"error: no note {note_id}", err=True)
            raise typer.Exit(1)


@ledger_app.command("show")
def ledger_show(
    unit: Annotated[str | None, typer.Option(help="Only this work unit.")] = None,
    campaign: Annotated[str | None, typer.Option(help="Only this campaign.")] = None,
    kind: Annotated[str | None, typer.Option(help="Only this event kind.")] = None,
    repository: Annotated[str | None, typer.Option(
        "--repository", help="Only this repository's events (its store key, as every line "
        "shows it in \\[brackets]) and those of no repository.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    store: StoreOption = None,
) -> None:
    """Show ledger events, oldest first, each with the repository it belongs to (a unit's
    ``unit.planned`` event: the unit's). ``--unit`` takes a unit key or its prefix (the 12
    characters every table prints)."""
    from fleet.errors import ConfigError
    from fleet.unit import expand_unit_key

    with _open(store, existing=True) as opened:
        try:
            unit = expand_unit_key(opened.ledger, unit) if unit else None
        except ConfigError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from exc
        events = opened.ledger.events(unit=unit, campaign=campaign, kind=kind, repo=repository)
    for e in events:
        if as_json:
            typer.echo(json.dumps(e.__dict__, sort_keys=True))
        else:
            where = " ".join(x for x in (f"[{e.repo}]" if e.repo else "", e.campaign, e.unit)
                             if x)
            payload = json.dumps(e.payload, sort_keys=True)
            typer.echo(
                f"{e.seq:>6} {_when(e.created_at)} {e.kind:<18} {where} {e.actor}: {payload}"
            )


def _repo_of(repo: Path | None) -> Path | None:
    """``--repo``, else the repository the current directory is in (None outside any)."""
    from fleet.home import repo_root

    return repo if repo is not None else repo_root(Path.cwd())


@ledger_app.command("verify")
def ledger_verify(
    against: Annotated[list[Path] | None, typer.Option(
        "--against",
        help="A checkpoint file (`fleet ledger checkpoint --out`); repeatable.")] = None,
    repo: Annotated[Path | None, typer.Option(
        help="Repository whose hand-over checkpoints (git notes refs/notes/fleet-ledger) are "
             "checked too, and whose store is the default (default: the one the current "
             "directory is in).")] = None,
    store: StoreOption = None,
) -> None:
    """Recompute the hash chain and hold it against the checkpoints kept outside the database
    (every hand-over's git note, and --against files): exit 1 and list every problem when it
    does not verify (events deleted, an event edited, the chain recomputed); exit 2 with one
    line when the store is missing, empty or not a fleet store."""
    from fleet.errors import FleetError
    from fleet.home import check_store
    from fleet.integrate import handover_checkpoints
    from fleet.store.audit import audit_store
    from fleet.store.checkpoint import read_checkpoint
    from fleet.store.errors import StoreNotFound

    try:
        checkpoints = [read_checkpoint(path) for path in against or []]
        where = _repo_of(repo)
        handed = handover_checkpoints(where) if where is not None else []
        url = store or default_store_url(repo)
        if where is not None and (repo is not None or handed):  # (its hand-overs held
            check_store(url, where)  # against another repository's chain would all fail)
        report = audit_store(url, [*checkpoints, *handed])
    except FleetError as exc:
        line = str(exc).splitlines()[0] if str(exc) else repr(exc)
        if isinstance(exc, StoreNotFound):
            line += " (pass --store URL or set FLEET_STORE_URL)"
        typer.echo(f"error: {line}", err=True)
        raise typer.Exit(2) from None
    count, problems = report.count, report.problems
    if problems:
        for p in problems:
            typer.echo(p)
        typer.echo(
            f"ledger does NOT verify: {len(problems)} problem(s) in {count} events", err=True
        )
        raise typer.Exit(1)
    held = len(checkpoints) + len(handed)
    suffix = f", {held} checkpoint(s) hold" if held else ""
    typer.echo(f"ledger verifies: {count} events{suffix}")


@ledger_app.command("checkpoint")
def ledger_checkpoint(
    out: Annotated[Path | None, typer.Option(
        help="Write the checkpoint to this file (default: print it).")] = None,
    store: StoreOption = None,
) -> None:
    """The ledger's head (seq and hash) as one line, to keep outside the database and give to
    `fleet ledger verify --against` later."""
    from fleet.errors import FleetError
    from fleet.store.audit import audit_store

    try:
        report = audit_store(store or default_store_url())
    except FleetError as exc:
        typer.echo(f"error: {str(exc).splitlines()[0] if str(exc) else exc!r}", err=True)
        raise typer.Exit(2) from None
    if report.problems:
        typer.echo(f"error: the ledger does not verify ({report.problems[0]}): no checkpoint "
                   "of a broken chain", err=True)
        raise typer.Exit(1)
    line = report.head.text()
    if out is None:
        typer.echo(line)
        return
    try:
        out.write_text(line + "\n", encoding="utf-8")
    except OSError as exc:
        typer.echo(f"error: cannot write {out}: {exc.strerror}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"wrote {out}: {line}")


def register(app: typer.Typer) -> None:
    app.add_typer(token_app)
    app.add_typer(memory_app)
    app.add_typer(ledger_app)
