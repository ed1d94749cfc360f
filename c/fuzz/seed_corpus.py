"""Write the conformance vectors (valid and must-fail) as libFuzzer seeds."""

import hashlib
import json
import sys
from pathlib import Path

sys.setrecursionlimit(100000)
root = Path(__file__).resolve().parents[2]
out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
count = 0
for f in sorted((root / "spec" / "vectors").glob("*valid/*.json")):
    for v in json.loads(f.read_text())["vectors"]:
        data = bytes.fromhex(v["hex"])
        if len(data) <= 4096:
            (out / hashlib.sha1(data).hexdigest()).write_bytes(data)
            count += 1
for f in sorted((root / "spec" / "vectors" / "corpus" / "seed").glob("*.tersa")):
    (out / f.name).write_bytes(f.read_bytes())
    count += 1
print(f"{count} seeds in {out}")
