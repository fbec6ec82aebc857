"""``fleet serve``, ``fleet token``, ``fleet memory`` and ``fleet ledger``: the coordinator API and
the store. The store URL is ``--store``, else ``$FLEET_STORE_URL``, else
``sqlite:///<cwd>/.fleet/fleet.db``."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from fleet.store import Store

StoreOption = Annotated[
    str | None,
    typer.Option("--store", help="Store URL (default: $FLEET_STORE_URL or .fleet/fleet.db)."),
]

token_app = typer.Typer(name="token", help="API tokens of the coordinator.", no_args_is_help=True)
memory_app = typer.Typer(name="memory", help="Project memory notes.", no_args_is_help=True)
ledger_app = typer.Typer(name="ledger", help="The append-only ledger.", no_args_is_help=True)


def _open(url: str | None) -> Store:
    from fleet.errors import FleetError
    from fleet.store import default_store_url, open_store

    try:
        return open_store(url or default_store_url())
    except FleetError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


def _when(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8787,
    store: StoreOption = None,
    repo: Annotated[
        Path, typer.Option(help="Repository the lease paths are relative to.")
    ] = Path(),
) -> None:
    """Serve the coordinator API (leases, jobs) with uvicorn."""
    from fleet.api import serve as run
    from fleet.store import default_store_url

    url = store or default_store_url()
    typer.echo(f"fleet coordinator on http://{host}:{port} (store {url})", err=True)
    run(url, repo.resolve(), host=host, port=port)


@token_app.command("create")
def token_create(
    scope: Annotated[
        list[str], typer.Option("--scope", help="leases, jobs or admin (repeatable).")
    ],
    name: Annotated[str, typer.Option(help="Who the token is for.")] = "agent",
    store: StoreOption = None,
) -> None:
    """Create a bearer token; it is printed once and stored only hashed."""
    with _open(store) as opened:
        try:
            secret, info = opened.tokens.create(name, scope)
        except ValueError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from exc
    typer.echo(secret)
    typer.echo(f"token {info.token_id} for {info.name}: scopes {','.join(info.scopes)}", err=True)


@token_app.command("list")
def token_list(store: StoreOption = None) -> None:
    """List tokens (ids, names, scopes; never secrets)."""
    with _open(store) as opened:
        for info in opened.tokens.list():
            state = "revoked" if info.revoked else "active"
            typer.echo(f"{info.token_id}  {info.name:<16} {','.join(info.scopes):<20} {state}")


@token_app.command("revoke")
def token_revoke(token_id: str, store: StoreOption = None) -> None:
    """Revoke a token by id."""
    with _open(store) as opened:
        if not opened.tokens.revoke(token_id):
            typer.echo(f"error: no active token {token_id}", err=True)
            raise typer.Exit(1)


@memory_app.command("add")
def memory_add(
    text: str,
    tag: Annotated[str, typer.Option(help="decision, constraint, deadline, note ...")] = "note",
    author: Annotated[str, typer.Option()] = "",
    store: StoreOption = None,
) -> None:
    """Add a project memory note (fed into agent prompts)."""
    with _open(store) as opened:
        note = opened.memory.add(text, tag=tag, author=author)
    typer.echo(note.note_id)


@memory_app.command("list")
def memory_list(
    tag: Annotated[str | None, typer.Option()] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    store: StoreOption = None,
) -> None:
    """List project memory notes."""
    with _open(store) as opened:
        notes = opened.memory.list(tag)
    if as_json:
        typer.echo(json.dumps([n.__dict__ for n in notes], indent=2))
        return
    for n in notes:
        typer.echo(f"{n.note_id:>4}  [{n.tag}] {n.text}" + (f"  ({n.author})" if n.author else ""))


@memory_app.command("remove")
def memory_remove(note_id: int, store: StoreOption = None) -> None:
    """Remove a note by id."""
    with _open(store) as opened:
        if not opened.memory.remove(note_id):
            typer.echo(f"error: no note {note_id}", err=True)
            raise typer.Exit(1)


@ledger_app.command("show")
def ledger_show(
    unit: Annotated[str | None, typer.Option(help="Only this work unit.")] = None,
    campaign: Annotated[str | None, typer.Option(help="Only this campaign.")] = None,
    kind: Annotated[str | None, typer.Option(help="Only this event kind.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    store: StoreOption = None,
) -> None:
    """Show ledger events, oldest first."""
    with _open(store) as opened:
        events = opened.ledger.events(unit=unit, campaign=campaign, kind=kind)
    for e in events:
        if as_json:
            typer.echo(json.dumps(e.__dict__, sort_keys=True))
        else:
            where = " ".join(x for x in (e.campaign, e.unit) if x)
            payload = json.dumps(e.payload, sort_keys=True)
            typer.echo(
                f"{e.seq:>6} {_when(e.created_at)} {e.kind:<18} {where} {e.actor}: {payload}"
            )


@ledger_app.command("verify")
def ledger_verify(store: StoreOption = None) -> None:
    """Recompute the hash chain; exit 1 and list every break when it does not verify."""
    with _open(store) as opened:
        problems = opened.ledger.verify()
        count = len(opened.ledger.events())
    if problems:
        for p in problems:
            typer.echo(p)
        typer.echo(
            f"ledger does NOT verify: {len(problems)} problem(s) in {count} events", err=True
        )
        raise typer.Exit(1)
    typer.echo(f"ledger verifies: {count} events")


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.add_typer(token_app)
    app.add_typer(memory_app)
    app.add_typer(ledger_app)
