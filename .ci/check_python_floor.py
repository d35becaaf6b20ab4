"""Check the wheel's Requires-Python against the README's "Python 3.X+" claim."""

import re
import sys
import zipfile
from pathlib import Path

wheel, readme = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as archive:
    name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
    metadata = archive.read(name).decode()
requires = re.search(r"^Requires-Python: (.+)$", metadata, re.MULTILINE)
requires = requires.group(1).strip()
claim = re.search(r"Python (3\.\d+)\+", Path(readme).read_text()).group(1)
if requires != f">={claim}":
    sys.exit(f"wheel Requires-Python {requires!r} but the README says Python {claim}+")
print(f"wheel Requires-Python {requires}, README: Python {claim}+")
