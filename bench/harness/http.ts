import http from 'node:http';

export interface HttpReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** Request written to last body byte received, in ms. */
  ms: number;
}

/**
 * A keep-alive HTTP/1.1 client for sequential calls, as a partner's integration
 * would make them: one connection reused, the whole body read.
 */
export class HttpClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

  constructor(private readonly baseUrl: string, private readonly defaultHeaders: Record<string, string> = {}) {}

  request(method: string, path: string, opts: { headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<HttpReply> {
    return new Promise((resolve, reject) => {
      const started = process.hrtime.bigint();
      const headers: Record<string, string> = { ...this.defaultHeaders, ...opts.headers };
      if (opts.body !== undefined) headers['content-length'] = String(Buffer.byteLength(opts.body));
      const req = http.request(new URL(path, this.baseUrl), { method, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), ms: Number(process.hrtime.bigint() - started) / 1e6 }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(opts.body);
    });
  }

  get(path: string, headers?: Record<string, string>): Promise<HttpReply> {
    return this.request('GET', path, { headers });
  }

  postJson(path: string, value: unknown, headers?: Record<string, string>): Promise<HttpReply> {
    return this.request('POST', path, { headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(value) });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The body as JSON, or an error that shows the status and the start of the body. */
export function json<T>(reply: HttpReply, what: string): T {
  try {
    return JSON.parse(reply.body.toString('utf8')) as T;
  } catch {
    throw new Error(`${what}: HTTP ${reply.status}, body is not JSON: ${reply.body.toString('utf8').slice(0, 300)}`);
  }
}

/** Problem type of a problem+json reply (urn:lumen:problem:<code>), if it is one. */
export function problemCode(reply: HttpReply): string | null {
  if (!String(reply.headers['content-type'] ?? '').includes('problem+json')) return null;
  try {
    const p = JSON.parse(reply.body.toString('utf8')) as { type?: string };
    return p.type?.replace(/^urn:lumen:problem:/, '') ?? null;
  } catch {
    return null;
  }
}

/** True when the operation answered "not built yet" (the foundation's 503 placeholder). */
export function isNotBuilt(reply: HttpReply): boolean {
  return reply.status === 503 && problemCode(reply) === 'unavailable';
}
