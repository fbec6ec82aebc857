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
import os
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from fleet.forge._fake_github_http import HttpError as _HttpError
from fleet.forge._fake_github_http import check_runs as _check_runs
from fleet.forge._fake_github_http import now as _now

__all__ = ["FakeGitHub"]

JSON = dict[str, Any]
BOT = {"login": "fleet-bot", "id": 1, "type": "Bot", "site_admin": False}


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

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        assert self.git_dir is not None
        who = {"NAME": "GitHub", "EMAIL": "noreply@github.invalid"}
        env = {**os.environ, **{f"GIT_{role}_{k}": v for role in ("AUTHOR", "COMMITTER")
                                for k, v in who.items()}}
        proc = subprocess.run(["git", f"--git-dir={self.git_dir}", *args], capture_output=True,
                              text=True, env=env, check=False)
        if check and proc.returncode != 0:
            raise _HttpError(500, f"git {' '.join(args)}: {proc.stderr.strip()}")
        return proc

    def ref_sha(self, branch: str) -> str | None:
        if self.git_dir is None:
            return "0" * 40
        proc = self.git("rev-parse", "--verify", "-q", f"refs/heads/{branch}", check=False)
        return proc.stdout.strip() if proc.returncode == 0 else None


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
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
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
            tree = repo.git("merge-tree", "--write-tree", base_sha, head_sha, check=False)
            if tree.returncode != 0:
                raise _HttpError(405, "Pull Request is not mergeable (conflict)")
            sha = repo.git("commit-tree", tree.stdout.split()[0], "-p", base_sha, "-p", head_sha,
                           "-m", f"Merge pull request #{number} from {repo.owner}/{head}"
                           ).stdout.strip()
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
            return _route(self, repo, method, match.group(2) or "", query, body)


def _page(fake: FakeGitHub, path: str, query: dict[str, str], items: list[JSON]
          ) -> tuple[int, Any, dict]:
    per_page = max(1, min(int(query.get("per_page", 30)), 100))
    page = max(1, int(query.get("page", 1)))
    chunk = items[(page - 1) * per_page: page * per_page]
    headers = {}
    if page * per_page < len(items):
        following = urlencode({**query, "page": page + 1})
        headers["Link"] = f'<{fake.base_url}{path}?{following}>; rel="next"'
    return 200, chunk, headers


def _state_matches(item: JSON, wanted: str) -> bool:
    return wanted == "all" or item["state"] == wanted


def _route(fake: FakeGitHub, repo: _Repo, method: str, sub: str, query: dict[str, str],
           body: Any) -> tuple[int, Any, dict]:
    full_path = f"/repos/{repo.full_name}{sub}"
    items = sorted(repo.items.values(), key=lambda i: -i["number"])  # newest first, as GitHub
    number_match = re.fullmatch(r"/(issues|pulls)/(\d+)(/[a-z]+)?", sub)
    item = repo.items.get(int(number_match.group(2))) if number_match else None
    if number_match and (item is None or (number_match.group(1) == "pulls" and "head" not in item)):
        raise _HttpError(404, "Not Found")
    if sub == "" and method == "GET":
        return 200, fake._repo_json(repo), {}
    if sub == "/pulls" and method == "GET":
        pulls = [p for p in items if "head" in p and _state_matches(p, query.get("state", "open"))]
        if "head" in query:
            pulls = [p for p in pulls if f"{repo.owner}:{p['head']['ref']}" == query["head"]]
        if "base" in query:
            pulls = [p for p in pulls if p["base"]["ref"] == query["base"]]
        return _page(fake, full_path, query,
                     [fake._item_json(repo, p, full=False) for p in pulls])
    if sub == "/pulls" and method == "POST":
        head, base = str(body.get("head", "")).split(":")[-1], body.get("base", "")
        for side, ref in (("head", head), ("base", base)):
            if not ref or repo.ref_sha(ref) is None:
                raise _HttpError(422, "Validation Failed",
                                 [{"resource": "PullRequest", "field": side, "code": "invalid"}])
        if any(p["state"] == "open" and p["head"]["ref"] == head and p["base"]["ref"] == base
               for p in items if "head" in p):
            raise _HttpError(422, "Validation Failed", [{"resource": "PullRequest", "code":
                             "custom", "message": f"A pull request already exists for "
                             f"{repo.owner}:{head}."}])
        pull = fake._new_item(repo, body["title"], body.get("body"), head={"ref": head},
                              base={"ref": base}, draft=bool(body.get("draft", False)),
                              merged=False, mergeable=True, merged_by=None, merged_at=None,
                              merge_commit_sha=None)
        return 201, fake._item_json(repo, pull, full=True), {}
    if sub == "/issues" and method == "GET":
        wanted = {name for name in query.get("labels", "").split(",") if name}
        found = [i for i in items if _state_matches(i, query.get("state", "open"))
                 and wanted <= set(i["_labels"])]
        pull_only = ("head", "base", "merged", "mergeable", "merged_by", "merge_commit_sha",
                     "merged_at", "draft")
        as_issues = [{**{k: v for k, v in i.items() if k not in pull_only}, "_pull": "head" in i}
                     for i in found]
        return _page(fake, full_path, query,
                     [fake._item_json(repo, i, full=False) for i in as_issues])
    if sub == "/issues" and method == "POST":
        if not body.get("title"):
            raise _HttpError(422, "Validation Failed",
                             [{"resource": "Issue", "field": "title", "code": "missing_field"}])
        issue = fake._new_item(repo, body["title"], body.get("body"))
        issue["_labels"] = list(dict.fromkeys(body.get("labels", [])))
        return 201, fake._item_json(repo, issue, full=True), {}
    if number_match and item is not None:
        kind, action = number_match.group(1), number_match.group(3)
        if action is None and method == "GET":
            return 200, fake._item_json(repo, item, full=True), {}
        if action is None and method == "PATCH":
            if kind == "pulls" and body.get("state") == "open" and item["state"] == "closed":
                head = item["head"]["ref"]
                if item["merged"] or repo.ref_sha(head) != item.get("_closed_head"):
                    raise _HttpError(422, "Validation Failed", [{
                        "resource": "PullRequest", "code": "custom", "field": "state",
                        "message": f"state cannot be changed. The {head} branch was "
                                   "force-pushed or recreated."}])
            if "head" in item and body.get("state") == "closed" and item["state"] == "open":
                item["_closed_head"] = repo.ref_sha(item["head"]["ref"])
            for key in ("title", "body", "state", "state_reason"):
                if key in body:
                    item[key] = body[key]
            if "labels" in body:
                item["_labels"] = list(dict.fromkeys(body["labels"]))
            if body.get("state") == "closed":
                item["closed_at"] = _now()
            if kind == "pulls" and "base" in body:
                item["base"] = {"ref": body["base"]}
            item["updated_at"] = _now()
            return 200, fake._item_json(repo, item, full=True), {}
        if action == "/merge" and method == "PUT" and kind == "pulls":
            expected = (body or {}).get("sha")
            if expected and repo.ref_sha(item["head"]["ref"]) not in (expected, "0" * 40):
                raise _HttpError(409, "Head branch was modified. Review and try the merge again.")
            sha = fake._merge(repo, item["number"])
            merged = {"sha": sha, "merged": True, "message": "Pull Request successfully merged"}
            return 200, merged, {}
        if action == "/labels" and kind == "issues":
            if method == "POST":
                names = body if isinstance(body, list) else body.get("labels", [])
                item["_labels"] = list(dict.fromkeys([*item["_labels"], *names]))
            return 200, [fake._label(repo, n) for n in item["_labels"]], {}
        if action == "/comments" and kind == "issues":
            comments = repo.comments.setdefault(item["number"], [])
            if method == "POST":
                fake._next_id += 1
                comment = {"id": fake._next_id, "body": body["body"], "user": BOT,
                           "created_at": _now(), "updated_at": _now(),
                           "url": f"{fake.base_url}{full_path}/{fake._next_id}"}
                comments.append(comment)
                return 201, comment, {}
            return _page(fake, full_path, query, comments)
    checks = _check_runs(fake, repo, method, sub, query, body)
    if checks is not None:
        return checks
    status_match = re.fullmatch(r"/(statuses|commits)/([^/]+)(/status)?", sub)
    if status_match and status_match.group(1) == "commits" and not status_match.group(3):
        ref = status_match.group(2)
        commit = ref if re.fullmatch(r"[0-9a-f]{40}", ref) else repo.ref_sha(ref)
        if commit is None or (repo.git_dir and repo.git("cat-file", "-e", f"{commit}^{{commit}}",
                                                        check=False).returncode):
            raise _HttpError(422, f"No commit found for SHA: {ref}")
        api = f"{fake.base_url}/repos/{repo.full_name}"
        return 200, {"sha": commit, "url": f"{api}/commits/{commit}",
                     "html_url": f"{fake.base_url}/{repo.full_name}/commit/{commit}",
                     "commit": {"message": ""}, "files": [], "parents": []}, {}
    if status_match and status_match.group(1) == "statuses" and method == "POST":
        status = {"state": body["state"], "context": body.get("context", "default"),
                  "description": body.get("description"), "target_url": body.get("target_url"),
                  "created_at": _now(), "updated_at": _now()}
        repo.statuses.setdefault(status_match.group(2), []).append(status)
        return 201, status, {}
    if status_match and status_match.group(3) and method == "GET":
        ref = status_match.group(2)
        sha = ref if re.fullmatch(r"[0-9a-f]{40}", ref) else (repo.ref_sha(ref) or ref)
        latest: dict[str, JSON] = {}
        for status in repo.statuses.get(sha, []):
            latest[status["context"]] = status
        states = {s["state"] for s in latest.values()}
        combined = ("failure" if states & {"failure", "error"} else
                    "pending" if not states or "pending" in states else "success")
        return 200, {"state": combined, "sha": sha, "total_count": len(latest),
                     "statuses": list(latest.values()), "repository": fake._repo_json(repo)}, {}
    raise _HttpError(404, "Not Found")


class _Handler(BaseHTTPRequestHandler):
    server_version = "FakeGitHub/1.0"

    def _dispatch(self) -> None:
        fake: FakeGitHub = self.server.fake  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
            status, payload, headers = fake.handle(self.command, self.path, self.headers, body)
        except _HttpError as exc:
            status, headers = exc.status, {}
            payload = {"message": exc.message,
                       "documentation_url": "https://docs.github.com/rest"}
            if exc.errors:
                payload["errors"] = exc.errors
        except (ValueError, KeyError, TypeError) as exc:
            status, payload, headers = 400, {"message": f"Problems parsing JSON: {exc}"}, {}
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-RateLimit-Limit", "5000")
        self.send_header("X-RateLimit-Remaining", "4999")
        self.send_header("X-RateLimit-Reset", str(int(time.time()) + 3600))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _dispatch

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read .requests
        pass
