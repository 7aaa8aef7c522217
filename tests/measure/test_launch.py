from harness.measure.launch import default_isolation


def test_a_fork_of_a_warm_server_unless_a_gpu_is_pinned():
    assert default_isolation({"JAX_PLATFORMS": "cpu"}) == "fork"
    assert default_isolation({}) == "fork"
    assert default_isolation({"JAX_PLATFORMS": "cuda"}) == "spawn"
    assert default_isolation({"JAX_PLATFORMS": "cpu, cuda"}) == "spawn"
