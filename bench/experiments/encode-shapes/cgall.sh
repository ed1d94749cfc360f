#!/bin/sh
# usage: cgall.sh rb|py LIBDIR OUT  (LIBDIR: ruby/lib of a build, or a directory holding a built tersa package)
# -> "document instructions" per line: 3 encodes of each document of /tmp/kj in one process, one callgrind dump each.
# The first encode of a document pays for growing the tables and buffers, so the sum depends on DOCS and its order;
# STEADY=1 reports 3 x the third encode instead, which does not (compare only figures taken the same way).
# For counts that repeat between runs, build with -DTERSA_FIXED_SEED=1 (see c/CMakeLists.txt).
lang=$1; lib=$2; out=$3; dir=$(mktemp -d)
DOCS=${DOCS:-$(ls /tmp/kj | sed 's/\.json$//' | tr '\n' ' ')}; export DOCS
if [ $lang = rb ]; then
  RBLIB=$lib valgrind --tool=callgrind --callgrind-out-file=$dir/cg.%p --toggle-collect='enc_encode*' --dump-after='enc_encode.lto_priv.0' ruby $(dirname $0)/rball.rb >/dev/null 2>&1
else
  valgrind --tool=callgrind --callgrind-out-file=$dir/cg.%p --toggle-collect='tersa_dumps' --dump-after='tersa_dumps' ${PYTHON:-python3} $(dirname $0)/pyall.py $lib >/dev/null 2>&1
fi
python3 - "$dir" "$out" <<'PY'
import sys, glob, re, os
d, out = sys.argv[1], sys.argv[2]
docs = os.environ["DOCS"].split()
files = [f for f in glob.glob(d + '/cg.*') if re.search(r'cg\.\d+\.\d+$', f)]
files.sort(key=lambda f: int(f.rsplit('.', 1)[1]))
tot = []
for f in files:
    for line in open(f):
        if line.startswith('totals:') or line.startswith('summary:'):
            tot.append(int(line.split()[1])); break
assert len(tot) == 3 * len(docs), (len(tot), len(docs))
with open(out, 'w') as o:
    steady = os.environ.get("STEADY") == "1"
    for i, n in enumerate(docs): o.write(f"{n} {3 * tot[3*i+2] if steady else sum(tot[3*i:3*i+3])}\n")
PY
rm -rf $dir
