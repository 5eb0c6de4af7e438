"""The ``MISSING`` sentinel: "no value given" for defaults and signatures."""

__all__ = ["MISSING"]


class _MissingType:
    """The type of :data:`MISSING` (one instance; prints as ``<MISSING>``, as TVM-FFI's)."""

    __slots__ = ()
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<MISSING>"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self):
        return (_MissingType, ())


MISSING = _MissingType()
