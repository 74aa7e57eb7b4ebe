# A package, so that this conftest.py and tests/conftest.py import under different names.
