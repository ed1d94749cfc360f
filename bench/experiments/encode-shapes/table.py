import sys, math
def load(p):
    d = {}
    for l in open(p):
        a = l.split()
        if len(a) == 2 and a[1].isdigit(): d[a[0]] = int(a[1])
    return d
rb_b, rb_a, py_b, py_a = (load(p) for p in sys.argv[1:5])
print("| document | Ruby before | Ruby after | after/before | Python before | Python after | after/before |")
print("|---|---:|---:|---:|---:|---:|---:|")
rr, pr = [], []
for k in sorted(rb_b):
    r = rb_a[k] / rb_b[k]; p = py_a[k] / py_b[k]; rr.append((r, k)); pr.append((p, k))
    print(f"| {k} | {rb_b[k]:,} | {rb_a[k]:,} | {r:.3f} | {py_b[k]:,} | {py_a[k]:,} | {p:.3f} |")
g = lambda xs: math.exp(sum(math.log(x) for x, _ in xs) / len(xs))
print(f"| **geometric mean** | | | **{g(rr):.3f}** | | | **{g(pr):.3f}** |")
print(f"| **worst** | | | **{max(rr)[1]} {max(rr)[0]:.3f}** | | | **{max(pr)[1]} {max(pr)[0]:.3f}** |")
print(f"| **best** | | | {min(rr)[1]} {min(rr)[0]:.3f} | | | {min(pr)[1]} {min(pr)[0]:.3f} |")
