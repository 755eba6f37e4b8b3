import sys


def depth(n):
    try:
        return depth(n + 1)
    except RecursionError:
        return n


print("limit", sys.getrecursionlimit())
print("reached", depth(0))
sys.setrecursionlimit(200)
print("reached at 200", depth(0))


def build(n):
    return [build(n - 1)] if n else []


import json

print(len(json.dumps(build(150))))
