"""The package version, in the names tvm_ffi's ``_version`` module uses."""

from __future__ import annotations

__all__ = ["__version__", "__version_tuple__", "version", "version_tuple", "__commit_id__", "commit_id"]

__version__ = version = "0.1.0"
__version_tuple__ = version_tuple = (0, 1, 0)
__commit_id__ = commit_id = None
