"""json dumps/loads round trip with sorted keys"""
import json

data = {"name": "widget", "tags": ["a", "b"], "price": 9.99, "stock": {"eu": 3, "us": 0}, "active": True}
s = json.dumps(data, sort_keys=True, indent=2)
print(s)
back = json.loads(s)
assert back == data
print("equal:", back == data)
print(json.dumps([1, None, "é"], ensure_ascii=False))
