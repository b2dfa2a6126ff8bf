"""statistics module on fixed data"""
import statistics as st

xs = [2, 4, 4, 4, 5, 5, 7, 9]
print("mean", st.mean(xs))
print("median", st.median(xs))
print("mode", st.mode(xs))
print("pstdev", st.pstdev(xs))
print("stdev", round(st.stdev(xs), 6))
print("quantiles", st.quantiles(xs, n=4))
print("fmean", st.fmean([1.5, 2.5, 3.5]))
