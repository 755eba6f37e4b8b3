import collections
import functools
import heapq
import bisect
import itertools
import operator

c = collections.Counter("the quick brown fox jumps over the lazy dog")
print(c.most_common(5))
dq = collections.deque(range(5), maxlen=4)
dq.rotate(1)
print(dq)
Point = collections.namedtuple("Point", "x y")
print(Point(1, 2)._replace(y=5), collections.OrderedDict(b=1, a=2))
dd = collections.defaultdict(list)
for k, v in [("a", 1), ("b", 2), ("a", 3)]:
    dd[k].append(v)
print(dict(dd), collections.ChainMap({"x": 1}, {"x": 2, "y": 3})["y"])
print(list(itertools.permutations("abc", 2)))
print(list(itertools.accumulate([1, 2, 3, 4], operator.mul)))
print([(k, len(list(g))) for k, g in itertools.groupby("aaabccdd")])
print(list(itertools.islice(itertools.cycle("xy"), 5)), list(itertools.product([0, 1], repeat=2)))
print(functools.reduce(operator.add, range(10)))


@functools.lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


print(fib(90), fib.cache_info())
print(functools.partial(int, base=2)("1011"))
h = [5, 1, 8, 3, 2]
heapq.heapify(h)
print([heapq.heappop(h) for _ in range(3)], heapq.nlargest(2, [4, 9, 1, 7]))
print(bisect.bisect_left([1, 3, 5, 7], 4))
