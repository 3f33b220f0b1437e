"""The guards' shared state in the learner store: one signing key per installation, whichever replica
asks first, and failure counts that concurrent replicas never lose."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from core.attempts import Backoff, Failures
from core.signing import check_key
from store import LearnerStore
from store.guards import SIGNING_KEY, GuardStore

BACKOFF = Backoff(free=5, first_wait_s=2.0, max_wait_s=300.0, forget_after_s=3600.0)


def test_the_installation_key_is_made_once_and_every_replica_reads_it(store_url: str) -> None:
    replicas = [GuardStore(LearnerStore.open(store_url)) for _ in range(6)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        keys = set(pool.map(lambda replica: replica.installation_secret(SIGNING_KEY), replicas))
    assert len(keys) == 1
    [key] = keys
    assert check_key(key) == key  # as strong as a key a host would be asked for
    # A replica started later, on a fresh connection, reads the same key.
    assert GuardStore(LearnerStore.open(store_url)).installation_secret(SIGNING_KEY) == key


def test_two_installations_make_different_keys(store: LearnerStore, tmp_path) -> None:
    other = LearnerStore.open(f"sqlite:///{tmp_path / 'other.sqlite3'}")
    assert GuardStore(store).installation_secret(SIGNING_KEY) != GuardStore(other).installation_secret(
        SIGNING_KEY
    )


def test_failures_are_counted_and_forgotten_worked_by_hand(store: LearnerStore) -> None:
    guards = GuardStore(store)
    assert guards.failures("instructor", BACKOFF, 1000.0) == Failures()
    assert guards.fail("instructor", BACKOFF, 1000.0) == Failures(count=1, last_s=1000.0)
    assert guards.fail("instructor", BACKOFF, 1001.5) == Failures(count=2, last_s=1001.5)
    assert guards.failures("instructor", BACKOFF, 1002.0) == Failures(count=2, last_s=1001.5)
    assert guards.failures("room:127.0.0.1", BACKOFF, 1002.0) == Failures()  # each scope its own
    # An hour after the last failure the count is forgotten, and the next failure is the first again.
    assert guards.failures("instructor", BACKOFF, 1001.5 + 3600) == Failures()
    assert guards.fail("instructor", BACKOFF, 1001.5 + 3600) == Failures(count=1, last_s=4601.5)


def test_concurrent_failures_on_many_replicas_are_all_counted(store_url: str) -> None:
    replicas = [GuardStore(LearnerStore.open(store_url)) for _ in range(4)]

    def fail_five(replica: GuardStore) -> None:
        for i in range(5):
            replica.fail("instructor", BACKOFF, 2000.0 + i)

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(fail_five, replicas * 4))
    assert replicas[0].failures("instructor", BACKOFF, 2010.0).count == 80
