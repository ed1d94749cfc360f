import sys, json, struct, glob, os
sys.path.insert(0, '/tmp/dcpy_base')
import tersa
for f in sorted(glob.glob('/tmp/kj/*.json')):
    n = os.path.basename(f)[:-5]
    doc = json.load(open(f))
    if n == 'tiny_messages':
        out = b''.join(struct.pack('<I', len(b)) + b for b in (tersa.dumps(r) for r in doc))
    else:
        out = tersa.dumps(doc)
    open(f'/tmp/dcm/enc/{n}.tersa', 'wb').write(out)
