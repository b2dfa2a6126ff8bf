"""f-strings with format specs, conversions and nested widths"""
name, value, width = "ratio", 0.123456, 12
print(f"{name!r:>{width}}|{value:.2%}|{value:10.4f}|{value:e}")
print(f"{1234567:,} {1234567:_x} {255:#06b} {42:^9d}|")
print(f"{'left':<8}|{'right':>8}|{'mid':*^9}")
items = {"a": 1.5, "bb": 22.25}
for k, v in sorted(items.items()):
    print(f"{k:3} = {v:8.3f}")
print(f"{3 + 4 = }", f"{'nested ' + str(len(items))}")
