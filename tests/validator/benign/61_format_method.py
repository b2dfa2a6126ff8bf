"""str.format with positional, keyword and index fields (no attribute traversal)"""
print("{} + {} = {}".format(1, 2, 3))
print("{name} is {age:>3} years".format(name="ann", age=7))
print("{0[0]}-{0[1]}|{1:.3f}".format(["x", "y"], 2 / 3))
print("{:>10}|{:<6}|{:^7}".format("right", "left", "mid"))
row = {"sku": "A1", "qty": 4}
print("{sku}: {qty:03d}".format_map(row))
print(format(0.5, ".1%"), format(255, "x"), "%s=%d" % ("n", 5))
