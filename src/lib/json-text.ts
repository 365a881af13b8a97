/**
 * A response body already serialised as JSON (a list page whose items PostgreSQL
 * wrote), sent as is. `T` names the shape the text holds, for readers; response
 * validation (tests and development) parses it to check that shape.
 *
 * The text is kept in its pieces (a page: the envelope's start, the items as PostgreSQL
 * sent them, the envelope's end) and written to the socket piece by piece: joining a
 * page of 340 KB into one string and encoding that into one Buffer made two more copies
 * of it per request, most of what the collector had to do while pages were served.
 */
export class JsonText<T = unknown> {
  /** Never set: carries T so a JsonText<PolePage> is not a JsonText<ServiceOrderPage>. */
  declare readonly shape?: T;

  readonly parts: readonly string[];

  constructor(...parts: string[]) {
    this.parts = parts;
  }

  /** The whole text (joined on each call: for compression and validation, not the usual answer). */
  get text(): string {
    return this.parts.join('');
  }

  /** Length of the text's UTF-8 bytes. */
  byteLength(): number {
    let n = 0;
    for (const part of this.parts) n += Buffer.byteLength(part, 'utf8');
    return n;
  }

  parse(): T {
    return JSON.parse(this.text) as T;
  }
}
