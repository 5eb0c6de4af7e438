"""Reflection (``TypeInfo``, ``TypeField``, ``TypeMethod``): tether's home
of these names beside ``tether.core``, where tvm_ffi keeps them."""

from .core.type_info import TypeField, TypeInfo, TypeMethod, type_info_of_class, type_info_of_index

__all__ = ["TypeInfo", "TypeField", "TypeMethod", "type_info_of_index", "type_info_of_class"]
