#!/bin/sh
# usage: cgall.sh rb|py LIBDIR OUT  (LIBDIR: ruby/lib of a build, or a directory holding a built tersa package)
# -> "document instructions" per line: 3 encodes of each document of /tmp/kj in one process, one callgrind dump each
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
    for i, n in enumerate(docs): o.write(f"{n} {sum(tot[3*i:3*i+3])}\n")
PY
rm -rf $dir
