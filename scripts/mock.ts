/**
 * Prism's mock of a contract, on the port you name:
 *   npm run mock -- -p 4020                     (openapi/partner.yaml, default port 4010)
 *   npm run mock:partner -- --port 4021         (openapi/partner-polling.yaml, default 4011)
 *   tsx scripts/mock.ts --doc telemetry -p 4022 --host 0.0.0.0
 *
 * Prism itself runs on a loopback port of its own; a small front server on the chosen
 * port passes every request through, except a JSON body that does not parse: Prism
 * never answers those (the connection hangs until the client gives up), so the front
 * answers them itself, 400 `malformed-json` as problem+json, as Lumen does.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../test/support/free-port.js';

const DEFAULT_PORT: Record<string, number> = { partner: 4010, 'partner-polling': 4011 };
/** Largest body the front reads before passing it on (Lumen's own default limit). */
const BODY_LIMIT = 40 * 1024 * 1024;

const { values } = parseArgs({
  options: {
    doc: { type: 'string', default: 'partner' },
    port: { type: 'string', short: 'p' },
    host: { type: 'string', short: 'h', default: '127.0.0.1' },
  },
});
const doc = values.doc!;
const port = Number(values.port ?? DEFAULT_PORT[doc] ?? 4010);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write(`mock: --port must be a port number (got ${values.port})\n`);
  process.exit(2);
}
const file = path.join('openapi', `${doc}.yaml`);

function answers(p: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(p, '127.0.0.1', () => {
      socket.end();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const isJson = (type: string | undefined): boolean => {
  const t = (type ?? '').split(';')[0]!.trim().toLowerCase();
  return t === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(t);
};

const inner = await freePort();
const prism = spawn(path.join('node_modules', '.bin', 'prism'), ['mock', '-h', '127.0.0.1', '-p', String(inner), file], { stdio: ['ignore', 'inherit', 'inherit'] });
prism.once('exit', (code) => process.exit(code ?? 1));
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    prism.kill(signal);
    process.exit(0);
  });
}
// Prism takes a few seconds to read the document; the port opens once it serves.
for (let i = 0; !(await answers(inner)); i++) {
  if (i > 600) throw new Error('Prism did not start within 60 s');
  await new Promise((r) => setTimeout(r, 100));
}

const front = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (size <= BODY_LIMIT) chunks.push(c);
  });
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    if (body.length > 0 && isJson(req.headers['content-type'])) {
      try {
        JSON.parse(body.toString('utf8'));
      } catch (err) {
        const problem = { type: 'urn:lumen:problem:malformed-json', title: 'Malformed JSON', status: 400, detail: `The request body is not valid JSON: ${(err as Error).message}`, instance: req.url ?? '/' };
        res.writeHead(400, { 'content-type': 'application/problem+json; charset=utf-8' }).end(JSON.stringify(problem));
        return;
      }
    }
    const upstream = http.request({ host: '127.0.0.1', port: inner, method: req.method, path: req.url, headers: { ...req.headers, 'content-length': String(body.length) } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.once('error', (err) => res.writeHead(502, { 'content-type': 'text/plain' }).end(`mock: Prism did not answer: ${err.message}\n`));
    upstream.end(body);
  });
});
front.listen(port, values.host, () => {
  const where = front.address() as net.AddressInfo;
  process.stdout.write(`mock: ${file} on http://${values.host}:${where.port} (Prism behind it; malformed JSON answered 400 here)\n`);
});
