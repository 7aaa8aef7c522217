"""Upstream issues: a case exported as a standalone script (``export``, with its measuring end
``standalone``), and the draft in the shape of JAX's bug-report form (``draft``) written with the
script's real output (``issue``).
"""
