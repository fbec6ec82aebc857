from auth.policies import default_policy, parse_policies


def test_builtin_roles():
    assert default_policy.allows("owner", "anything.at_all")
    assert default_policy.allows("admin", "members.invite")
    assert not default_policy.allows("member", "billing.charge")
    assert not default_policy.allows(None, "tenant.read")


def test_wildcards_and_inheritance():
    policy = parse_policies(
        "roles:\n  support: ['tenant.*']\n  lead: [reports.read]\ninherits:\n  lead: support\n"
    )
    assert policy.allows("support", "tenant.update")
    assert policy.allows("lead", "tenant.read") and policy.allows("lead", "reports.read")
    assert policy.known_roles() == ["lead", "support"]


def test_safe_loader_refuses_python_tags():
    import pytest
    import yaml

    with pytest.raises(yaml.constructor.ConstructorError):
        parse_policies("roles: !!python/object/apply:os.getcwd []\n")
