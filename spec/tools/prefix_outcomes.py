"""Every proper prefix of every valid vector (up to 300 bytes, without
dictionaries or joins) and what the reference codec makes of it: the code and
offset of its DecodeError (SPEC 10), or "ok". Printed as JSON lines
{"stream", "hex", "code", "offset"}, for the suites that check that each
implementation reports the same defect the same way (Ruby, TypeScript)."""

import json
import sys
from pathlib import Path

sys.setrecursionlimit(100000)
sys.path.insert(0, str(Path(__file__).parent))
import tersaref as P  # noqa: E402

VALID = Path(__file__).resolve().parent.parent / "vectors" / "valid"

for path in sorted(VALID.glob("*.json")):
    for v in json.loads(path.read_text())["vectors"]:
        data = bytes.fromhex(v["hex"])
        if v.get("dictionary") or v.get("join") or len(data) > 300:
            continue
        stream = bool(v.get("stream"))
        for k in range(len(data)):
            out = {"stream": stream, "hex": data[:k].hex(), "code": "ok", "offset": None}
            try:
                (P.decode_stream if stream else P.decode)(data[:k])
            except P.DecodeError as e:
                out["code"], out["offset"] = e.code, e.offset
            print(json.dumps(out))
