import json

doc = {"b": [1, 2.5, None, True], "a": "é ü ✓", "c": {"z": -0.0, "y": 1e300, "x": 10**20}}
text = json.dumps(doc, sort_keys=True, ensure_ascii=False)
print(text)
print(json.dumps(doc, sort_keys=True, indent=2))
back = json.loads(text)
print(back == doc, sorted(back))
print(json.loads('{"n": 1.0000000000000002, "big": 123456789012345678901234567890}'))
try:
    json.loads('{"a": nan_}')
except json.JSONDecodeError as e:
    print("JSONDecodeError", e.msg, e.pos)
print(json.dumps([float("inf")], allow_nan=True))
