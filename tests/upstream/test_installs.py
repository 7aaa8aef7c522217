"""A draft's words for a script's environment: "plain JAX" only for jax, numpy and the standard
library; each side's install line pins every package whose version differs between the two sides."""

from harness.upstream.installs import exact_install, imported_besides_jax, script_words

LIBRARY_SCRIPT = """
import json, time
import jax, jax.numpy as jnp
import numpy as np
import diffrax
from equinox import filter_jit
from . import helpers
"""


def test_plain_jax_only_when_the_script_imports_nothing_else():
    assert script_words("import jax\nimport numpy as np\nimport time\n") == "plain JAX"
    assert imported_besides_jax(LIBRARY_SCRIPT) == [".", "diffrax", "equinox"]
    assert script_words(LIBRARY_SCRIPT) == "with ., diffrax, equinox"
    assert imported_besides_jax("def broken(:\n") == []


def test_every_package_that_moved_between_the_sides_is_pinned_on_each():
    """diffrax is declared; its dependency equinox moved one release between the two releases'
    dates, and numpy too: each side pins its own; what did not move (typing-extensions) is left to
    the resolver."""
    older = ("diffrax==0.6.0", "equinox==0.11.11", "jax==0.5.1", "jaxlib==0.5.1", "numpy==2.2.3")
    older += ("typing_extensions==4.12.2",)
    newer = ("diffrax==0.6.0", "equinox==0.11.12", "jax==0.5.2", "jaxlib==0.5.1", "numpy==2.2.4")
    newer += ("typing-extensions==4.12.2", "wadler-lindig==0.1.3")
    line = ["jax==0.5.1", "jaxlib==0.5.1", "diffrax==0.6.0"]
    assert exact_install(line, older, newer) == [*line, "equinox==0.11.11", "numpy==2.2.3"]
    line = ["jax==0.5.2", "jaxlib==0.5.1", "diffrax==0.6.0"]
    assert exact_install(line, newer, older) == [
        *line,
        "equinox==0.11.12",
        "numpy==2.2.4",
        "wadler-lindig==0.1.3",
    ], "a package only one side holds is pinned there"
    assert exact_install(line, newer, newer) == line, "nothing moved: the line as it was"
