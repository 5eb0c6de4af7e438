"""``TypeSchema`` and ``check_field_value``: tether's home of these names
beside ``tether.core``, where tvm_ffi keeps ``TypeSchema``."""

from .core.type_schema import TypeSchema, check_field_value

__all__ = ["TypeSchema", "check_field_value"]
