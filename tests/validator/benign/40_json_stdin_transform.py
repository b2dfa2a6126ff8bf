"""json document on stdin, transformed and re-emitted"""
import json

doc = json.loads("".join(iter(input, "END")))
users = sorted(doc["users"], key=lambda u: (u["age"], u["name"]))
out = {
    "count": len(users),
    "names": [u["name"] for u in users],
    "avg_age": round(sum(u["age"] for u in users) / len(users), 2),
    "by_city": {c: sorted(u["name"] for u in users if u["city"] == c) for c in sorted({u["city"] for u in users})},
}
print(json.dumps(out, indent=1, sort_keys=True))
