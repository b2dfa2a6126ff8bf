# A comment that mentions exec( and open( is not a finding; the import below is.
import subprocess
print(subprocess.run(["id"], capture_output=True).stdout)
