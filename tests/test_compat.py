"""The version shims, against the JAX installed here.

``nox -s compat`` runs this module on the oldest and the newest release in the table.
"""

import pytest

jax = pytest.importorskip("jax")

from cases import compat  # noqa: E402

pytestmark = pytest.mark.jax


def test_version_is_a_tuple_of_ints():
    version = compat.jax_version()
    assert len(version) == 3 and all(isinstance(p, int) for p in version)
    assert ".".join(map(str, version)) in jax.__version__


def test_named_sharding_splits_rows_and_replicates():
    devices = jax.devices()
    x = jax.device_put(jax.numpy.ones((len(devices) * 2, 3)), compat.named_sharding(devices))
    assert x.sharding.is_fully_addressable
    replicated = jax.device_put(jax.numpy.ones(3), compat.named_sharding(devices, replicated=True))
    assert replicated.sharding.is_fully_replicated


def test_positional_sharding_exists_exactly_where_the_release_has_it():
    devices = jax.devices()
    if compat.jax_version() >= (0, 7, 0):
        assert not compat.has_positional_sharding()
        with pytest.raises(compat.Unsupported, match="PositionalSharding"):
            compat.positional_sharding(devices)
    else:
        assert compat.has_positional_sharding()
        x = jax.device_put(jax.numpy.ones((len(devices), 2)), compat.positional_sharding(devices))
        assert x.shape == (len(devices), 2)


def test_pmap_implementation_follows_the_release():
    expected = "jit(shard_map)" if compat.jax_version() >= (0, 8, 0) else "pmap (classic)"
    assert compat.pmap_implementation() == expected
