"""Engines the test suite and the long `make` runs share: not tests themselves.

``conformance`` judges models against the JSON Schema oracle (``make
conformance``, ``tests/package/test_conformance.py``); ``fuzz`` feeds hostile bytes to
the codec (``make fuzz``, ``tests/codec/test_decode.py``).
"""
