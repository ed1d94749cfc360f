import sys, json, os
sys.path.insert(0, sys.argv[1])
import tersa
names = os.environ["DOCS"].split()
docs = [json.load(open(f'/tmp/kj/{n}.json')) for n in names]
for d in docs:
    for _ in range(3): tersa.dumps(d)
