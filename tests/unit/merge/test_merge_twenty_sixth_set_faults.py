"""What the twenty-sixth unseen set (jupyterhub, xonsh, python-prompt-toolkit, sqlfluff, yt,
bpython; 7 Dec 2026) showed that the driver now handles, from an excerpt shaped like the real
input: a wrong clean merge where one side's new statement stored into an object that the other
side's edit of the next statement replaced."""

from __future__ import annotations

from fleet.merge._merge3 import merge3
from fleet.merge._names import rebinds_what_other_uses
from fleet.merge._result import Clean, Conflicted

# jupyterhub 70dbe2f04989 (jupyterhub/apihandlers/base.py): ours added the group's roles to the
# model; theirs builds the model in one dict literal where base stored the users into it.
GROUP = '''class Handler:
    def group_model(self, group):
        """Get the JSON model for a Group object"""
        model = {'kind': 'group', 'name': group.name}
        req_scope = 'read:groups'
        if req_scope in self.parsed_scopes:
            scope_filter = self.get_scope_filter(req_scope)
            if scope_filter(group, kind='group'):
                model['users'] = [u.name for u in group.users]
        return model

    def service_model(self, service):
        return {'kind': 'service', 'name': service.name}
'''
GROUP_OURS = GROUP.replace(
    "                model['users']",
    "                model['roles'] = [r.name for r in group.roles]\n"
    "                model['users']")
GROUP_THEIRS = GROUP.replace(
    "        model = {'kind': 'group', 'name': group.name}", "        model = {}").replace(
    "                model['users'] = [u.name for u in group.users]\n",
    "                model = {\n"
    "                    'kind': 'group',\n"
    "                    'name': group.name,\n"
    "                    'users': [u.name for u in group.users],\n"
    "                }\n")


def test_a_store_into_what_the_other_side_rebinds_next_is_a_conflict() -> None:
    result = merge3(GROUP, GROUP_OURS, GROUP_THEIRS, "jupyterhub/apihandlers/base.py")
    assert isinstance(result, Conflicted), result
    # the roles line is never silently followed by the new ``model = {...}``: both inside
    # the markers
    text = result.text_with_markers
    start, end = text.index("<<<<<<<"), text.index(">>>>>>>")
    assert start < text.index("model['roles']") < end
    assert start < text.index("'kind': 'group',") < end


def test_the_same_insertion_beside_an_edit_that_binds_nothing_new_still_composes() -> None:
    # theirs only changes what is stored: nothing is bound anew, the two edits compose
    theirs = GROUP.replace("[u.name for u in group.users]", "sorted(u.name for u in group.users)")
    result = merge3(GROUP, GROUP_OURS, theirs, "jupyterhub/apihandlers/base.py")
    assert isinstance(result, Clean), result.text
    assert result.text == GROUP_OURS.replace("[u.name for u in group.users]",
                                             "sorted(u.name for u in group.users)")


def test_the_rule_reads_the_composed_order() -> None:
    base = ["model['users'] = users"]
    ours = ["model['roles'] = roles", "model['users'] = users"]
    theirs = ["model = {'users': users}"]
    # ours' new statement before theirs' rebinding: a dead write
    assert rebinds_what_other_uses([base, ours, theirs], [("ours", 0), ("theirs", 0)])
    # after it, the store reaches the new model
    ours_after = ["model['users'] = users", "model['roles'] = roles"]
    assert not rebinds_what_other_uses([base, ours_after, theirs], [("theirs", 0), ("ours", 1)])
    # a name the new statement binds for itself alone (yt 230a9b769427: a new loop over
    # ``field`` before the loop the other side renamed to ``field``)
    loop = ["for name in names:\n    use(name)\n"]
    own = ["for field in fields:\n    fix(field)\n", *loop]
    renamed = ["for field in names:\n    use(field)\n"]
    assert not rebinds_what_other_uses([loop, own, renamed], [("ours", 0), ("theirs", 0)])
    # ... unless its own side reads it after the new statement
    kept = ["timeout = 5", "call(timeout)"]
    assert rebinds_what_other_uses([["call(1)"], kept, ["timeout = compute()"]],
                                   [("ours", 0), ("theirs", 0)])
    # a rebinding the base statement already made is not new
    rebound = ["model = dict(users=users)"]
    assert not rebinds_what_other_uses([rebound, ["log(model)", *rebound], theirs],
                                       [("ours", 0), ("theirs", 0)])
