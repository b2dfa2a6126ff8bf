# The validator refuses this before it runs: status "rejected" with the finding's position.
import os

os.system("cat /etc/shadow")
