import abc
import dataclasses
import enum
import typing
from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class Item:
    name: str
    price: float = 0.0
    tags: tuple = field(default_factory=tuple)


items = sorted([Item("b", 2.0), Item("a", 3.5, ("x",)), Item("a", 1.0)])
print(items)
print(dataclasses.asdict(items[0]), dataclasses.replace(items[1], price=9.0), [f.name for f in dataclasses.fields(Item)])
try:
    items[0].name = "z"
except dataclasses.FrozenInstanceError as e:
    print("FrozenInstanceError", e)


class Color(enum.Enum):
    RED = 1
    GREEN = 2


class Perm(enum.IntFlag):
    R = 4
    W = 2
    X = 1


print(Color.RED, Color(2), list(Color), Color["GREEN"].value)
print(Perm.R | Perm.W, int(Perm.R | Perm.X), Perm(7), repr(Perm.W))


class Shape(abc.ABC):
    @abc.abstractmethod
    def area(self) -> float: ...


try:
    Shape()
except TypeError as e:
    print("TypeError", e)

T = typing.TypeVar("T")


class Box(typing.Generic[T]):
    def __init__(self, v: T) -> None:
        self.v = v


def f(x: typing.Optional[int], y: "list[str]" = ()) -> typing.Dict[str, int]:
    return {}


print(typing.get_type_hints(f), typing.get_origin(typing.List[int]), typing.get_args(typing.Union[int, str]))
print(Box[int](3).v, typing.NamedTuple("P", [("x", int)])(1), typing.TypedDict("TD", {"a": int})(a=1))
