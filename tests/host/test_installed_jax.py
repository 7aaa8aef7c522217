import pytest

from harness.host import installed_jax


@pytest.mark.parametrize(
    ("installed", "build"),
    [
        ({"jax": "0.7.2", "jaxlib": "0.7.2", "jax_cuda13_plugin": "0.7.2"}, "cuda13"),
        ({"jax": "0.6.2", "jaxlib": "0.6.2", "jax_cuda12_plugin": "0.6.2"}, "cuda12"),
        ({"jax": "0.4.23", "jaxlib": "0.4.23+cuda12.cudnn89"}, "cuda12"),
        ({"jax": "0.4.35", "jaxlib": "0.4.35"}, None),
        ({}, None),
    ],
)
def test_the_cuda_build_comes_from_the_installed_distributions(monkeypatch, installed, build):
    monkeypatch.setattr(installed_jax, "version", installed.get)
    assert installed_jax.cuda_build() == build


def test_a_cuda_build_gets_its_profile_only_where_a_gpu_is_usable(monkeypatch):
    monkeypatch.setattr(installed_jax, "cuda_build", lambda: "cuda12")
    monkeypatch.setattr(installed_jax.gpu, "absence_reason", lambda: None)
    assert installed_jax.device_profile() == "cuda12"
    monkeypatch.setattr(installed_jax.gpu, "absence_reason", lambda: "no /dev/nvidia*")
    assert installed_jax.device_profile() is None


def test_a_package_not_installed_has_no_version():
    assert installed_jax.version("no_such_package_here") is None
    assert installed_jax.version("packaging") is not None
