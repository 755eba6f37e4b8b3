# How deep the parser, the compiler, marshal and the C recursion guards go:
# the WASI build has native's stack (8 MiB) and native's limits, so each
# ends where it does natively (CPython's own WASI build parses 4000 parser
# frames deep instead of 6000, marshals 1500 levels instead of 2000).
import ast
import copy
import json
import marshal
import pickle


def attempt(name, fn):
    try:
        result = fn()
        print(name, "ok", result)
    except (SyntaxError, RecursionError, MemoryError, ValueError) as e:
        print(name, type(e).__name__, str(e).split(" (")[0][:60])


def nested(n):
    x = []
    for _ in range(n):
        x = [x]
    return x


for n in (150, 200, 201):
    attempt(f"parens {n}", lambda: eval("(" * n + "1" + ")" * n))
    attempt(f"lists {n}", lambda: len(eval("[" * n + "]" * n)))
    attempt(f"literal_eval {n}", lambda: len(ast.literal_eval("[" * n + "]" * n)))
    attempt(f"calls {n}", lambda: len(compile("f" + "(" * (n - 1) + ")" * (n - 1), "s", "eval").co_code) > 0)
for src in ["-" * 5000 + "1", "not " * 3000 + "1", "1 if 1 else " * 400 + "1", "x" + "[0]" * 3000, "a." * 5000 + "b", "1" + "+1" * 10000]:
    attempt(f"compile {src[:6]!r}x{len(src)}", lambda: compile(src, "s", "eval").co_name)
for n in (1990, 2010):
    attempt(f"marshal {n}", lambda: len(marshal.loads(marshal.dumps(nested(n)))))
for n in (900, 1100):
    attempt(f"json {n}", lambda: len(json.loads("[" * n + "]" * n)))
    attempt(f"repr {n}", lambda: len(repr(nested(n))))
    attempt(f"deepcopy {n}", lambda: len(copy.deepcopy(nested(n))))
    attempt(f"pickle {n}", lambda: len(pickle.loads(pickle.dumps(nested(n)))))
