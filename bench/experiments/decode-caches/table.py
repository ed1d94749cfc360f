import sys, glob, os, math
names = sorted(os.path.basename(f)[:-6] for f in glob.glob('/tmp/dcm/enc/*.tersa'))
def counts(label, lang):
    out = []
    for i in range(len(names)):
        f = f'/tmp/dcm/cg/{label}.{lang}.{2*i+2}'
        v = None
        for line in open(f):
            if line.startswith('summary:') or line.startswith('totals:'):
                v = int(line.split()[1]); break
        out.append(v)
    return out
b, a = sys.argv[1], sys.argv[2]
res = {}
for lang in ('rb', 'py'):
    res[lang] = (counts(b, lang), counts(a, lang))
print('| document | Ruby before | Ruby after | × | Python before | Python after | × |')
print('|---|---:|---:|---:|---:|---:|---:|')
lg = {'rb': [], 'py': []}
for i, n in enumerate(names):
    row = [n]
    for lang in ('rb', 'py'):
        x, y = res[lang][0][i], res[lang][1][i]
        r = y / x
        lg[lang].append(r)
        row += [f'{x:,}', f'{y:,}', f'{r:.3f}']
    print('| ' + ' | '.join(row) + ' |')
for lang in ('rb', 'py'):
    rs = lg[lang]
    gm = math.exp(sum(map(math.log, rs)) / len(rs))
    w = max(range(len(rs)), key=lambda i: rs[i]); bst = min(range(len(rs)), key=lambda i: rs[i])
    print(f'{lang}: geomean {gm:.4f}, worst {names[w]} {rs[w]:.3f}, best {names[bst]} {rs[bst]:.3f}')
