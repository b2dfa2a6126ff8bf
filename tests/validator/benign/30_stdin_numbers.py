"""read numbers from stdin, summary stats"""
import statistics


def read_numbers():
    nums = []
    while True:
        try:
            line = input()
        except EOFError:
            return nums
        nums.extend(float(tok) for tok in line.split())


nums = read_numbers()
print(f"n={len(nums)} sum={sum(nums):g} min={min(nums):g} max={max(nums):g}")
print(f"mean={statistics.mean(nums):.3f} median={statistics.median(nums):g}")
