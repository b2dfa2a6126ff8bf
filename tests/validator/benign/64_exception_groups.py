"""ExceptionGroup and except* in agent code"""
def validate(rows):
    errors = []
    for i, r in enumerate(rows):
        if not isinstance(r.get("age"), int):
            errors.append(TypeError(f"row {i}: age must be int"))
        elif r["age"] < 0:
            errors.append(ValueError(f"row {i}: negative age"))
    if errors:
        raise ExceptionGroup("invalid rows", errors)


try:
    validate([{"age": 3}, {"age": "x"}, {"age": -1}, {}])
except* TypeError as eg:
    print("type errors:", [str(e) for e in eg.exceptions])
except* ValueError as eg:
    print("value errors:", [str(e) for e in eg.exceptions])
