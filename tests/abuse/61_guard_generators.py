# Regression guard: generators, coroutines and asyncio (epoll, eventfd, socketpair).
# expect: status=ok
# expect: stdout-contains=gen=328350 async=done
import asyncio, itertools
def squares(n):
    for i in range(n):
        yield i * i
g = sum(itertools.islice(squares(10**6), 100))
async def main():
    await asyncio.sleep(0.01)
    r = await asyncio.gather(*(asyncio.sleep(0, result=i) for i in range(10)))
    return "done" if r == list(range(10)) else "bad"
print(f"gen={g} async={asyncio.run(main())}")
