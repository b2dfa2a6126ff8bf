# Regression guard: multiprocessing.Pool (fork, pipes, POSIX semaphores in /dev/shm).
# expect: status=ok
# expect: stdout-contains=pool=[0, 1, 4, 9, 16, 25, 36, 49]
import multiprocessing as mp
def sq(x):
    return x * x
if __name__ == "__main__":
    with mp.get_context("fork").Pool(2) as p:
        print(f"pool={p.map(sq, range(8))}")
