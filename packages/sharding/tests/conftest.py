"""Fixtures and helpers shared by the polyjax-sharding tests.

Tests that need several devices are ``multidevice/md_*.py``; `test_multidevice.py`
runs each of those files in a pytest process of its own with 8 host devices
(`polyjax_interpreters.multidevice` says how).
"""
