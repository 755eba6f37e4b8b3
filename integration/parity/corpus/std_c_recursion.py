# Recursion through C with a raised recursion limit, as dynamic
# programming and tree code does: each level is Python called from C (an
# lru_cache'd function, __init__, a property, map, deepcopy, a __repr__),
# or C alone (pickle's), so each takes C stack. Natively each of these
# fails somewhere between 11,000 and 19,000 levels, on the guest's 8 MiB
# stack. Under wazero a level takes about three times that in linear
# memory (the eval loop's frame is larger in wasm32), so the WASI build's
# C stack is 32 MiB there, four times native's (python/wasi/build.sh), and
# wazero's own stack of compiled frames grows as far as the run's memory
# limit lets it (internal/sandbox/wazero/memory.go, ChargeStack). With
# native's 8 MiB and wazero's fixed 50 MB ceiling, each pattern below
# ended in SIGSEGV under wazero from about 4,700 levels.
import copy
import functools
import pickle
import sys

sys.setrecursionlimit(10**6)


@functools.lru_cache(maxsize=None)
def depth(k):
    return 0 if k == 0 else 1 + depth(k - 1)


print("lru_cache", depth(9000))


class Chain:
    def __init__(self, k):
        self.child = Chain(k - 1) if k else None


Chain(8000)
print("__init__ 8000")


class Prop:
    def __init__(self, k):
        self.k = k

    @property
    def value(self):
        return 0 if self.k == 0 else 1 + Prop(self.k - 1).value


print("property", Prop(8000).value)


def through_map(k):
    return 0 if k == 0 else sum(map(through_map, [k - 1])) + 1


print("map", through_map(9000))


class Node:
    def __init__(self, nxt=None):
        self.nxt = nxt


def chain(n):
    head = None
    for _ in range(n):
        head = Node(head)
    return head


def length(node):
    n = 0
    while node is not None:
        n, node = n + 1, node.nxt
    return n


head = chain(14000)
print("deepcopy", length(copy.deepcopy(head)))
head = chain(14000)
print("pickle", length(pickle.loads(pickle.dumps(head))))


class Nested:
    def __init__(self, k):
        self.k = k

    def __repr__(self):
        return "x" if self.k == 0 else "(" + repr(Nested(self.k - 1)) + ")"


print("repr", len(repr(Nested(9000))))
