"""grouping, merging, inverting and nested dict access"""
records = [
    {"team": "red", "player": "ann", "score": 10},
    {"team": "blue", "player": "bob", "score": 7},
    {"team": "red", "player": "cyd", "score": 12},
    {"team": "blue", "player": "dee", "score": 15},
]
by_team = {}
for r in records:
    by_team.setdefault(r["team"], []).append(r)
summary = {t: {"total": sum(r["score"] for r in rs), "best": max(rs, key=lambda r: r["score"])["player"]}
           for t, rs in sorted(by_team.items())}
print(summary)
defaults = {"color": "grey", "size": "m"}
print({**defaults, "size": "l"}, defaults | {"x": 1})
inverted = {v: k for k, v in {"a": 1, "b": 2}.items()}
print(inverted, summary.get("green", {}).get("total", 0))
