from collections.abc import Sequence

import tether


class Point(tether.Object):
    def __init__(self, arg0: int, arg1: int, arg2: str, /) -> None: ...

    @property
    def x(self) -> int:
        """the x coordinate"""

    @property
    def y(self) -> int:
        """the y coordinate"""

    @property
    def label(self) -> str:
        """a label, writable"""

    @label.setter
    def label(self, arg: str, /) -> None: ...

    @property
    def child(self) -> tether.Object | None:
        """any object"""

    @child.setter
    def child(self, arg: tether.Object | None, /) -> None: ...

    def norm2(self) -> int:
        """x*x + y*y"""

    def shift(self, arg: int, /) -> None:
        """moves x"""


def allocations_are_registry(arg: tether.Object | None, /) -> bool: ...

def fail(arg0: str, arg1: str, /) -> int: ...

def make_point(arg0: int, arg1: int, arg2: str, arg3: tether.Object | None, /) -> Point: ...

def sum_x(arg: tether.Array | Sequence[Point], /) -> int: ...
