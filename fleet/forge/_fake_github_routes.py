"""The REST routes of ``FakeGitHub`` (``fleet/forge/fake_github.py``) for one repository:
the repository, pulls, issues with labels and comments, commit statuses and commits; the Checks
API is in ``_fake_github_http.check_runs``. Each answers ``(status, payload, headers)`` with
GitHub's shapes, or raises ``HttpError``; the caller holds the fake's state lock."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from fleet.forge._fake_github_http import BOT, JSON, page
from fleet.forge._fake_github_http import HttpError as _HttpError
from fleet.forge._fake_github_http import check_runs as _check_runs
from fleet.forge._fake_github_http import now as _now

if TYPE_CHECKING:
    from fleet.forge.fake_github import FakeGitHub, _Repo

__all__ = ["route"]


def _state_matches(item: JSON, wanted: str) -> bool:
    return wanted == "all" or item["state"] == wanted


def route(fake: FakeGitHub, repo: _Repo, method: str, sub: str, query: dict[str, str],
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
        return page(f"{fake.base_url}{full_path}", query,
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
        return page(f"{fake.base_url}{full_path}", query,
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
            return page(f"{fake.base_url}{full_path}", query, comments)
    checks = _check_runs(fake, repo, method, sub, query, body)
    if checks is not None:
        return checks
    status_match = re.fullmatch(r"/(statuses|commits)/([^/]+)(/status)?", sub)
    if status_match and status_match.group(1) == "commits" and not status_match.group(3):
        ref = status_match.group(2)
        commit = ref if re.fullmatch(r"[0-9a-f]{40}", ref) else repo.ref_sha(ref)
        if commit is None or (repo.git_dir and repo.git("cat-file", "-e", f"{commit}^{{commit}}",
                                                        check=False)[0]):
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
