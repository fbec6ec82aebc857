"""``FakeGitHub``: a local fake of the GitHub REST endpoints that ``GitHubForge`` uses.

A real HTTP server (stdlib ``http.server``) on 127.0.0.1 in a background thread, reached by the
real PyGithub through ``Github(base_url=fake.base_url)``. It is the test double at the GitHub
network edge; nothing of ours is faked. Covered endpoints, with GitHub's shapes, status codes,
token check and ``Link`` pagination:

- ``GET /repos/{o}/{r}``
- ``GET|POST /repos/{o}/{r}/pulls``, ``GET|PATCH /repos/{o}/{r}/pulls/{n}``,
  ``PUT /repos/{o}/{r}/pulls/{n}/merge``
- ``GET|POST /repos/{o}/{r}/issues`` (the list includes pull requests, as on GitHub),
  ``GET|PATCH /repos/{o}/{r}/issues/{n}``, ``GET|POST .../issues/{n}/labels``,
  ``GET|POST .../issues/{n}/comments``
- ``POST /repos/{o}/{r}/statuses/{sha}``, ``GET /repos/{o}/{r}/commits/{ref}`` and
  ``GET /repos/{o}/{r}/commits/{ref}/status`` (combined status)
- ``POST /repos/{o}/{r}/check-runs``, ``GET /repos/{o}/{r}/check-runs/{id}`` and
  ``GET /repos/{o}/{r}/commits/{ref}/check-runs`` (the Checks API; ``check_name`` filter)

When a repository is added with ``git_dir`` (a bare repository that ``git push`` targets), pull
requests are checked against it like GitHub does: the head branch must exist (else 422), head
SHAs are read live from the refs, and a merge is a real merge commit on the base branch
(``git merge-tree --write-tree`` + ``commit-tree``; a conflict is 405 "not mergeable").

State lives in memory for the lifetime of the server; several processes may use one server.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from fleet.forge._fake_github_http import BOT, JSON, Handler
from fleet.forge._fake_github_http import HttpError as _HttpError
from fleet.forge._fake_github_http import now as _now
from fleet.forge._fake_github_routes import route
from fleet.forge._git import run as run_git

__all__ = ["FakeGitHub"]

# the merges GitHub makes are GitHub's, not fleet's
GITHUB_IDENTITY = {f"GIT_{role}_{key}": value for role in ("AUTHOR", "COMMITTER")
                   for key, value in (("NAME", "GitHub"), ("EMAIL", "noreply@github.invalid"))}


@dataclass
class _Repo:
    owner: str
    name: str
    default_branch: str
    git_dir: Path | None
    items: dict[int, JSON] = field(default_factory=dict)  # issues and pulls share numbers
    comments: dict[int, list[JSON]] = field(default_factory=dict)
    statuses: dict[str, list[JSON]] = field(default_factory=dict)
    check_runs: list[JSON] = field(default_factory=list)

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    def git(self, *args: str, check: bool = True) -> tuple[int, str]:
        """``git *args`` on the bare repository, committing as GitHub does: (exit code,
        output); with ``check`` a failure is a 500."""
        assert self.git_dir is not None
        proc = run_git(self.git_dir, f"--git-dir={self.git_dir}", *args, env=GITHUB_IDENTITY)
        if check and proc.returncode != 0:
            raise _HttpError(500, f"git {' '.join(args)}: {proc.stderr.decode().strip()}")
        return proc.returncode, proc.stdout.decode().strip()

    def ref_sha(self, branch: str) -> str | None:
        if self.git_dir is None:
            return "0" * 40
        code, sha = self.git("rev-parse", "--verify", "-q", f"refs/heads/{branch}", check=False)
        return sha if code == 0 else None


class FakeGitHub:
    """The fake server. ``with FakeGitHub(token="t") as gh: gh.add_repo("acme/shop", git_dir=...)``.

    ``requests`` records ``(method, path)`` of every request, for tests that count calls;
    ``latency`` delays chosen requests (outside the state lock), for tests that need overlap.
    """

    def __init__(self, token: str = "fake-token", *, port: int = 0) -> None:
        self.token = token
        self._repos: dict[str, _Repo] = {}
        self._lock = threading.Lock()
        self._next_id = 1000
        self.requests: list[tuple[str, str]] = []
        self.latency: dict[str, float] = {}  # "POST /repos/o/r/issues" -> seconds before handling
        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self._server.fake = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FakeGitHub:
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        daemon=True, name="fake-github")
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- set-up and inspection (what a test does "on github.com") ---------------------------

    def add_repo(self, full_name: str, *, git_dir: Path | str | None = None,
                 default_branch: str = "main") -> None:
        owner, name = full_name.split("/", 1)
        with self._lock:
            self._repos[full_name] = _Repo(owner, name, default_branch,
                                           Path(git_dir) if git_dir else None)

    def issues(self, full_name: str, *, pulls: bool = False) -> list[JSON]:
        """Snapshot of the repository's issues (or pull requests), by number."""
        with self._lock:
            items = self._repos[full_name].items.values()
            return [json.loads(json.dumps(i)) for i in items if ("head" in i) == pulls]

    def checks(self, full_name: str, sha: str | None = None) -> list[JSON]:
        """Snapshot of the check runs created (on commit ``sha`` when given), oldest first."""
        with self._lock:
            runs = self._repos[full_name].check_runs
            return [json.loads(json.dumps(r)) for r in runs if sha in (None, r["head_sha"])]

    def merge_pull(self, full_name: str, number: int) -> str:
        """Merge pull request ``number`` as a user clicking the button would; returns the SHA."""
        with self._lock:
            return self._merge(self._repos[full_name], number)

    def set_state(self, full_name: str, number: int, state: str) -> None:
        """Close or reopen an issue or pull request as a user would (without merging)."""
        with self._lock:
            repo = self._repos[full_name]
            item = repo.items[number]
            if "head" in item and state == "closed":
                item["_closed_head"] = repo.ref_sha(item["head"]["ref"])
            item.update(state=state, closed_at=_now() if state == "closed" else None)

    # --- request handling -------------------------------------------------------------------

    def _item_json(self, repo: _Repo, item: JSON, *, full: bool) -> JSON:
        base = f"{self.base_url}/repos/{repo.full_name}"
        number = item["number"]
        kind = "pull" if "head" in item or item.get("_pull") else "issues"
        out = {k: v for k, v in item.items() if not k.startswith("_")}
        out["labels"] = [self._label(repo, name) for name in item["_labels"]]
        out.update(comments=len(repo.comments.get(number, [])),
                   html_url=f"{self.base_url}/{repo.full_name}/{kind}/{number}",
                   comments_url=f"{base}/issues/{number}/comments", user=BOT,
                   repository_url=base)
        if "head" in item:
            out.update(url=f"{base}/pulls/{number}", issue_url=f"{base}/issues/{number}")
            for side in ("head", "base"):
                ref = item[side]["ref"]
                sha = item[side].get("_sha") or repo.ref_sha(ref) or "0" * 40
                out[side] = {"ref": ref, "sha": sha, "label": f"{repo.owner}:{ref}",
                             "user": BOT, "repo": self._repo_json(repo)}
            if not full:  # GitHub's list omits the merge fields; PyGithub completes lazily
                for key in ("merged", "mergeable", "merged_by", "merge_commit_sha"):
                    out.pop(key, None)
        else:
            out["url"] = f"{base}/issues/{number}"
            if item.get("_pull"):
                out["pull_request"] = {"url": f"{base}/pulls/{number}",
                                       "html_url": out["html_url"]}
        return out

    def _label(self, repo: _Repo, name: str) -> JSON:
        return {"id": abs(hash(name)) % 10**9, "name": name, "color": "ededed", "default": False,
                "description": None,
                "url": f"{self.base_url}/repos/{repo.full_name}/labels/{name}"}

    def _repo_json(self, repo: _Repo) -> JSON:
        return {"id": abs(hash(repo.full_name)) % 10**9, "name": repo.name,
                "full_name": repo.full_name, "owner": {**BOT, "login": repo.owner},
                "private": False, "default_branch": repo.default_branch,
                "url": f"{self.base_url}/repos/{repo.full_name}",
                "html_url": f"{self.base_url}/{repo.full_name}"}

    def _new_item(self, repo: _Repo, title: str, body: str | None, **extra: Any) -> JSON:
        self._next_id += 1
        number = max(repo.items, default=0) + 1
        item: JSON = {"id": self._next_id, "node_id": f"I_{self._next_id}", "number": number,
                      "title": title, "body": body, "state": "open", "state_reason": None,
                      "locked": False, "created_at": _now(), "updated_at": _now(),
                      "closed_at": None, "_labels": [], **extra}
        repo.items[number] = item
        return item

    def _merge(self, repo: _Repo, number: int) -> str:
        pull = repo.items.get(number)
        if pull is None or "head" not in pull:
            raise _HttpError(404, "Not Found")
        if pull["state"] != "open" or pull["merged"]:
            raise _HttpError(405, "Pull Request is not mergeable")
        head, base = pull["head"]["ref"], pull["base"]["ref"]
        if repo.git_dir is None:
            sha = f"{number:040x}"
        else:
            head_sha, base_sha = repo.ref_sha(head), repo.ref_sha(base)
            if head_sha is None or base_sha is None:
                raise _HttpError(405, "Pull Request is not mergeable")
            code, tree = repo.git("merge-tree", "--write-tree", base_sha, head_sha, check=False)
            if code != 0:
                raise _HttpError(405, "Pull Request is not mergeable (conflict)")
            _, sha = repo.git("commit-tree", tree.split()[0], "-p", base_sha, "-p", head_sha,
                              "-m", f"Merge pull request #{number} from {repo.owner}/{head}")
            repo.git("update-ref", f"refs/heads/{base}", sha, base_sha)
            pull["head"]["_sha"] = head_sha
        pull.update(merged=True, state="closed", merge_commit_sha=sha, merged_by=BOT,
                    merged_at=_now(), closed_at=_now(), updated_at=_now())
        return sha

    def handle(self, method: str, raw_path: str, headers: Any, body: Any) -> tuple[int, Any, dict]:
        url = urlsplit(raw_path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        self.requests.append((method, url.path))
        delay = self.latency.get(f"{method} {url.path}")
        if delay:
            time.sleep(delay)
        auth = headers.get("Authorization", "")
        if auth not in (f"token {self.token}", f"Bearer {self.token}"):
            raise _HttpError(401, "Bad credentials")
        match = re.fullmatch(r"/repos/([^/]+/[^/]+)(/.*)?", url.path)
        if match is None:
            raise _HttpError(404, "Not Found")
        with self._lock:
            repo = self._repos.get(match.group(1))
            if repo is None:
                raise _HttpError(404, "Not Found")
            return route(self, repo, method, match.group(2) or "", query, body)
