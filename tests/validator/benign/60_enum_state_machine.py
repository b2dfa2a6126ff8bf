"""enum-driven state machine with match"""
from enum import Enum, auto


class State(Enum):
    IDLE = auto()
    RUNNING = auto()
    DONE = auto()
    FAILED = auto()


def step(state: State, event: str) -> State:
    match (state, event):
        case (State.IDLE, "start"):
            return State.RUNNING
        case (State.RUNNING, "finish"):
            return State.DONE
        case (State.RUNNING, "error"):
            return State.FAILED
        case (_, "reset"):
            return State.IDLE
        case _:
            return state


s = State.IDLE
for ev in ["finish", "start", "error", "reset", "start", "finish"]:
    s = step(s, ev)
    print(f"{ev:>6} -> {s.name}")
