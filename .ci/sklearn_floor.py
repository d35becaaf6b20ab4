"""Print the floor ``X.Y`` of pyproject.toml's ``scikit-learn>=X.Y`` pin."""

import re
import sys
import tomllib

with open(sys.argv[1], "rb") as f:
    dependencies = tomllib.load(f)["project"]["dependencies"]
pin = next(d for d in dependencies if re.match(r"scikit-learn\b", d))
floor = re.search(r">=\s*(\d+\.\d+)", pin)
if floor is None:
    sys.exit(f"no >=X.Y floor in the scikit-learn pin {pin!r}")
print(floor.group(1))
