# Regression guard: output just under the cap is delivered whole, not truncated.
# expect: status=ok
# expect: stdout-contains=END
# limits: output_bytes=65536
sys.stdout.write("a" * 60000 + "END\n")
