// The ESM build in a real browser: headless Chromium (Debian's `chromium`,
// installed by `make deps-js`; CHROMIUM overrides the path) driven by
// playwright-core loads browser-page.js in a page served from 127.0.0.1, which
// checks every vector of spec/vectors and every corpus document there and
// posts its report back. The vectors and the corpus are counted here too, so
// a page that skipped any fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { HERE, ROOT, VECTORS, readMaybeXz } from './helpers.js';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const DIST = path.join(HERE, '..', 'dist', 'esm');

const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>tersa vectors</title>
<script type="module" src="/test/browser-page.js"></script>
`;

function vectorIndex() {
  const files = [];
  for (const sub of ['valid', 'invalid']) {
    const dir = path.join(VECTORS, sub);
    for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) files.push(`${sub}/${f}`);
  }
  const corpus = JSON.parse(fs.readFileSync(path.join(VECTORS, 'corpus', 'manifest.json'), 'utf8')).documents;
  return { files, corpus };
}

/** What the page must report: every vector by kind, every corpus document. */
function expectedCounts(index) {
  const counts = { valid: 0, stream: 0, join: 0, fail: 0, corpus: index.corpus.length };
  for (const f of index.files) {
    for (const v of JSON.parse(fs.readFileSync(path.join(VECTORS, f), 'utf8')).vectors) {
      counts['error' in v ? 'fail' : v.join ? 'join' : v.stream ? 'stream' : 'valid']++;
    }
  }
  return counts;
}

/** A file under `dir` named by a URL path, or null (no escaping `dir`). */
function under(dir, rel) {
  const p = path.resolve(dir, '.' + path.posix.normalize('/' + decodeURIComponent(rel)));
  return p.startsWith(dir + path.sep) && fs.existsSync(p) && fs.statSync(p).isFile() ? p : null;
}

/** Serves the page, the ESM build, the vectors and the corpus; resolves `report` on POST /report. */
function startServer(index) {
  let onReport;
  const report = new Promise((resolve) => (onReport = resolve));
  const notFound = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const send = (status, type, body) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (req.method === 'POST' && url.pathname === '/report') {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        send(204, 'text/plain', '');
        onReport(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      });
      return;
    }
    let file = null;
    let body = null;
    const p = url.pathname;
    if (p === '/') return send(200, 'text/html; charset=utf-8', PAGE);
    if (p === '/favicon.ico') return send(204, 'image/x-icon', '');
    if (p === '/test/browser-page.js') file = path.join(HERE, 'browser-page.js');
    else if (p.startsWith('/dist/esm/')) file = under(DIST, p.slice('/dist/esm/'.length));
    else if (p === '/vectors/index.json') body = JSON.stringify(index);
    else if (p.startsWith('/vectors/')) file = under(VECTORS, p.slice('/vectors/'.length));
    else if (p.startsWith('/corpus/')) {
      // /corpus/<kind>/<name>.tersa: the committed bytes, xz-decompressed here (browsers cannot)
      const doc = index.corpus.find((d) => `/corpus/${d.kind}/${d.name}.tersa` === p);
      if (doc) return send(200, 'application/octet-stream', readMaybeXz(path.join(ROOT, doc.tersa)));
    }
    if (body !== null) return send(200, 'application/json', body);
    if (file) {
      const type = file.endsWith('.js') ? 'text/javascript' : 'application/json';
      return send(200, type, fs.readFileSync(file));
    }
    notFound.push(p);
    send(404, 'text/plain', 'not found');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve({ server, report, notFound, port: server.address().port }));
  });
}

test('headless Chromium: the ESM build passes every vector and corpus document', { timeout: 600_000 }, async (t) => {
  assert.ok(fs.existsSync(path.join(DIST, 'index.js')), 'dist/esm missing: npm run build');
  assert.ok(fs.existsSync(CHROMIUM), `${CHROMIUM} missing: make deps-js installs Debian's chromium`);
  const index = vectorIndex();
  const want = expectedCounts(index);
  const t0 = performance.now();
  const { server, report, notFound, port } = await startServer(index);
  // Playwright passes --no-sandbox by default (chromiumSandbox: false), which
  // Chromium needs when run as root, as on CI.
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  const t1 = performance.now();
  try {
    const page = await browser.newPage();
    // Errors the page cannot report itself (a module that fails to load or parse).
    const pageFailed = new Promise((_, reject) => {
      page.on('pageerror', (e) => reject(new Error(`page error: ${e.stack || e}`)));
      page.on('console', (m) => {
        if (m.type() === 'error') reject(new Error(`page console error: ${m.text()} (not found: ${notFound.join(', ') || 'none'})`));
      });
    });
    await page.goto(`http://127.0.0.1:${port}/`);
    const r = await Promise.race([report, pageFailed]);
    const t2 = performance.now();
    t.diagnostic(`${r.userAgent}`);
    t.diagnostic(`checked in the page: ${JSON.stringify(r.counts)}`);
    t.diagnostic(`browser launch ${Math.round(t1 - t0)} ms, page load and checks ${Math.round(t2 - t1)} ms (in the page: vectors ${r.ms?.vectors} ms, corpus ${r.ms?.corpus} ms)`);
    assert.equal(r.fatal, undefined, r.fatal);
    assert.deepEqual(notFound, [], 'the page asked for files the server does not have');
    assert.deepEqual(r.failures, [], `${r.failures.length} failed in the browser:\n${r.failures.join('\n')}`);
    assert.deepEqual(r.counts, want, 'the page did not check every vector');
    assert.ok(want.valid > 0 && want.stream > 0 && want.join > 0 && want.fail > 0 && want.corpus > 0);
  } finally {
    await browser.close();
    server.close();
  }
});
