import datetime

import pytest

from auth.sessions import AccountStore
from common import clock
from common.errors import AuthenticationFailed, ValidationFailed


def test_register_login_and_resolve(frozen_day):
    store = AccountStore()
    account = store.register("Ana@Example.com", "Sturdy-Passw0rd")
    session = store.login("ana@example.com", "Sturdy-Passw0rd")
    assert store.resolve(session.session_id).user_id == account.user_id
    store.logout(session.session_id)
    with pytest.raises(AuthenticationFailed):
        store.resolve(session.session_id)


def test_weak_passwords_are_refused():
    with pytest.raises(ValidationFailed, match="mixed case"):
        AccountStore().register("b@example.com", "alllowercase1")


def test_lockout_after_repeated_failures():
    store = AccountStore(max_failed_logins=3)
    store.register("c@example.com", "Sturdy-Passw0rd")
    start = datetime.datetime(2024, 5, 1, 12, 0)
    with clock.frozen(start):
        for _ in range(3):
            with pytest.raises(AuthenticationFailed):
                store.login("c@example.com", "wrong")
        with pytest.raises(AuthenticationFailed, match="locked"):
            store.login("c@example.com", "Sturdy-Passw0rd")
    with clock.frozen(start + datetime.timedelta(minutes=16)):
        assert store.login("c@example.com", "Sturdy-Passw0rd").user_id


def test_sessions_expire():
    store = AccountStore()
    store.register("d@example.com", "Sturdy-Passw0rd")
    with clock.frozen(datetime.datetime(2024, 5, 1)):
        session = store.login("d@example.com", "Sturdy-Passw0rd")
    with clock.frozen(datetime.datetime(2024, 5, 2)), pytest.raises(AuthenticationFailed):
        store.resolve(session.session_id)
