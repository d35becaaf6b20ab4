"""Check the built wheel's metadata against what the project claims.

* ``Requires-Python`` is the README's "Python 3.X+" claim;
* the ``Programming Language :: Python :: 3.Y`` classifiers are every minor
  from that floor to the newest declared one, without a gap (3.11 to 3.13);
* ``Requires-Dist`` pins scikit-learn with the floor the CI's oldest-version
  step installs (``.ci/sklearn_floor.py``) and an upper bound.
"""

import re
import subprocess
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

minors = sorted(
    int(m)
    for m in re.findall(
        r"^Classifier: Programming Language :: Python :: 3\.(\d+)$",
        metadata,
        re.MULTILINE,
    )
)
floor = int(claim.split(".")[1])
if not minors or minors[0] != floor or minors != list(range(floor, minors[-1] + 1)):
    sys.exit(
        f"wheel classifiers declare Python 3.{minors} but Requires-Python is "
        f"{requires}: declare every minor from 3.{floor}, without a gap"
    )
if minors[-1] < 13:
    sys.exit(f"wheel classifiers stop at Python 3.{minors[-1]}; 3.13 is supported")
print(f"wheel classifiers: Python 3.{minors[0]} to 3.{minors[-1]}")

pin = re.search(r"^Requires-Dist: scikit-learn(.*)$", metadata, re.MULTILINE)
if pin is None:
    sys.exit("wheel has no Requires-Dist on scikit-learn")
pin = pin.group(1).strip()
sk_floor = subprocess.run(
    [sys.executable, str(Path(__file__).parent / "sklearn_floor.py"), "pyproject.toml"],
    capture_output=True,
    text=True,
    check=True,
).stdout.strip()
if f">={sk_floor}" not in pin or "<" not in pin:
    sys.exit(
        f"wheel pins scikit-learn {pin!r}; expected >={sk_floor} (the version the "
        "oldest-scikit-learn step tests) and an upper bound"
    )
print(f"wheel Requires-Dist scikit-learn {pin} (floor tested by CI: {sk_floor})")
