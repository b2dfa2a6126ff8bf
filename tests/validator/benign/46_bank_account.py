"""state machine with exceptions and history"""
class InsufficientFunds(Exception):
    def __init__(self, needed, available):
        super().__init__(f"need {needed}, have {available}")
        self.needed, self.available = needed, available


class Account:
    def __init__(self, owner, balance=0):
        self.owner = owner
        self.balance = balance
        self.history = []

    def deposit(self, amount):
        if amount <= 0:
            raise ValueError("deposit must be positive")
        self.balance += amount
        self.history.append(("deposit", amount))

    def withdraw(self, amount):
        if amount > self.balance:
            raise InsufficientFunds(amount, self.balance)
        self.balance -= amount
        self.history.append(("withdraw", amount))

    def __str__(self):
        return f"{self.owner}: {self.balance}"


acct = Account("ann", 100)
for op, amt in [("deposit", 50), ("withdraw", 500), ("withdraw", 30), ("deposit", -5)]:
    try:
        {"deposit": acct.deposit, "withdraw": acct.withdraw}[op](amt)
    except (InsufficientFunds, ValueError) as e:
        print(f"{op} {amt} failed: {type(e).__name__}: {e}")
print(acct, acct.history)
