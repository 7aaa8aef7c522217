"""Reproducibility harness for JAX performance surprises.

The pipeline is discover → select → run (one subprocess per case) → store → render;
each step lives in its own module and none of them imports JAX except the child
process that executes a case.
"""

__version__ = "0.1.0"
