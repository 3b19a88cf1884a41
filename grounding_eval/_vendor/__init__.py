"""Released third-party code the pack carries with a documented change, because its PyPI release cannot be
installed from wheels on every supported Python (eyecite: scripts/vendor_eyecite.py, issue 42)."""
