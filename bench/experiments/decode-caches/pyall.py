import sys, struct, glob, os, time
sys.path.insert(0, sys.argv[1])
import tersa
dic = tersa.Dictionary(strings=["abc"], shapes=[])
names = sorted(os.path.basename(f)[:-6] for f in glob.glob('/tmp/dcm/enc/*.tersa'))
for n in names:
    data = open(f'/tmp/dcm/enc/{n}.tersa', 'rb').read()
    if n == 'tiny_messages':
        bufs = []; i = 0
        while i < len(data):
            l, = struct.unpack_from('<I', data, i); bufs.append(data[i+4:i+4+l]); i += 4 + l
    else:
        bufs = [data]
    dic.id
    for _ in range(2):
        for b in bufs: tersa.loads(b)
    dic.id
