/**
 * A response body already serialised as JSON (a list page whose items PostgreSQL
 * wrote), sent as is. `T` names the shape the text holds, for readers; response
 * validation (tests and development) parses it to check that shape.
 */
export class JsonText<T = unknown> {
  /** Never set: carries T so a JsonText<PolePage> is not a JsonText<ServiceOrderPage>. */
  declare readonly shape?: T;

  constructor(readonly text: string) {}

  parse(): T {
    return JSON.parse(this.text) as T;
  }
}
