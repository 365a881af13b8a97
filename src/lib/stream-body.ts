import type { Readable } from 'node:stream';

/**
 * A response body written as it is produced (a CSV export of a million rows): the
 * server pipes it to the client with back-pressure and no Content-Length, and destroys
 * it when the client goes away. `open` is called once, when the answer is sent.
 */
export class StreamBody {
  constructor(readonly open: () => Readable) {}
}
