// The HTTP server of section 7: Express on 127.0.0.1 (a free port), serving
// the user arrays that http.mjs stored in Redis under users:<codec>:<n>.
//
//   GET /raw/:codec/:n   the stored bytes as they are (a cache in front of an API)
//   GET /api/:codec/:n   decoded from Redis, then encoded again for the response
//                        (an API that works on the records it reads)
//
//   node bench/node/server.mjs REDIS_URL
// Prints {"port": N} on its first line of stdout once it listens.
import http from 'node:http';
import express from 'express';
import { CODECS } from './lib/codecs.mjs';
import { binaryClient } from './lib/redis-server.mjs';

const url = process.argv[2];
if (!url) {
  process.stderr.write('usage: node server.mjs REDIS_URL\n');
  process.exit(2);
}
const redis = await binaryClient(url);
const codecs = Object.fromEntries(Object.keys(CODECS).map((n) => [n, CODECS[n].make()]));

const app = express();
app.disable('x-powered-by');
// Express would hash every body for an ETag: a per-byte cost of the server,
// not of the format, that would hide the formats' own costs.
app.set('etag', false);

app.get('/:mode/:codec/:n', async (req, res, next) => {
  try {
    const { mode, codec } = req.params;
    const c = codecs[codec];
    if (!c || (mode !== 'raw' && mode !== 'api')) return res.status(404).end();
    const stored = await redis.get(`users:${codec}:${req.params.n}`);
    if (!stored) return res.status(404).end();
    res.type(CODECS[codec].contentType);
    res.send(mode === 'raw' ? stored : c.encode(c.decode(stored)));
  } catch (e) {
    next(e);
  }
});

const server = http.createServer(app);
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port, pid: process.pid })}\n`);
});
const stop = () => {
  server.close(() => redis.close().finally(() => process.exit(0)));
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
