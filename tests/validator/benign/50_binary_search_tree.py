"""a binary search tree with recursion and in-order generator"""
class Node:
    def __init__(self, key):
        self.key = key
        self.left = self.right = None


class BST:
    def __init__(self):
        self.root = None
        self.size = 0

    def insert(self, key):
        self.root = self._insert(self.root, key)

    def _insert(self, node, key):
        if node is None:
            self.size += 1
            return Node(key)
        if key < node.key:
            node.left = self._insert(node.left, key)
        elif key > node.key:
            node.right = self._insert(node.right, key)
        return node

    def __iter__(self):
        def walk(n):
            if n:
                yield from walk(n.left)
                yield n.key
                yield from walk(n.right)
        return walk(self.root)

    def __len__(self):
        return self.size

    def __contains__(self, key):
        n = self.root
        while n:
            if key == n.key:
                return True
            n = n.left if key < n.key else n.right
        return False


t = BST()
for k in [50, 30, 70, 20, 40, 60, 80, 30]:
    t.insert(k)
print(list(t), len(t), 60 in t, 65 in t)
