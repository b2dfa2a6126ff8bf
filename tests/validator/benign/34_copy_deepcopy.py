"""copy and deepcopy of nested structures and objects"""
import copy


class Node:
    def __init__(self, val, children=None):
        self.val = val
        self.children = children or []

    def __repr__(self):
        return f"Node({self.val}, {self.children})"


tree = Node(1, [Node(2), Node(3, [Node(4)])])
shallow = copy.copy(tree)
deep = copy.deepcopy(tree)
tree.children[1].val = 30
print(shallow.children[1].val, deep.children[1].val)
data = {"a": [1, 2], "b": {"c": [3]}}
d2 = copy.deepcopy(data)
d2["b"]["c"].append(4)
print(data, d2)
