import { CompiledQuery as Compiled, type CompiledQuery, type Compilable, type RawBuilder } from 'kysely';
import type { Executor } from './database.js';

/**
 * Hot-path statements compiled once per shape, not once per request.
 *
 * Kysely builds and compiles a statement anew on every call (an intake's two statements
 * cost about a sixth of the request's CPU in Lumen's process that way). A ShapeCache
 * compiles a statement once per *shape* (what decides its text: which optional parts
 * are present, which columns are written) with a stand-in for every parameter, keeps
 * the text, and from then on only puts the call's values in their places. The text is
 * then the very same string on every call, which also makes finding its prepared
 * statement's name (statementName) a lookup of a known key.
 *
 * The builder must not compute with a parameter's value (a stand-in has none): values it
 * derives (a box around a point) come in as parameters of their own, and anything it
 * branches on belongs in the shape's key. A compiled parameter that is neither a stand-in
 * nor a plain constant of the builder is refused at the first compile, so a builder that
 * breaks this rule fails loudly in the tests instead of sending wrong values.
 */

/** Stands for the parameter at `path` (["order", "tenant_id"]) while a shape is compiled. */
class Slot {
  constructor(readonly path: readonly string[]) {}
}

interface Shape {
  readonly sql: string;
  /** For each parameter of the text: the path of the call's value, or a constant of the builder. */
  readonly parts: readonly ({ path: readonly string[] } | { constant: unknown })[];
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;
}

/** `values` with every leaf replaced by its Slot; plain objects are followed `depth` levels deep (their own values below that are leaves). */
function standIns(values: Record<string, unknown>, depth: number, path: readonly string[] = []): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined || v === null) out[k] = v;
    else if (depth > 1 && isPlainObject(v)) out[k] = standIns(v, depth - 1, [...path, k]);
    else out[k] = new Slot([...path, k]);
  }
  return out;
}

function valueAt(values: Record<string, unknown>, path: readonly string[]): unknown {
  let v: unknown = values;
  for (const k of path) v = (v as Record<string, unknown>)[k];
  return v;
}

/**
 * The shape of `values` as standIns sees it: every key, in order, and which are absent
 * (undefined or null, which the builder may treat apart), `depth` levels deep.
 */
export function shapeOf(values: Record<string, unknown>, depth: number): string {
  return Object.entries(values)
    .map(([k, v]) => (v === undefined ? `${k}?` : v === null ? `${k}0` : depth > 1 && isPlainObject(v) ? `${k}{${shapeOf(v, depth - 1)}}` : k))
    .join(',');
}

export class ShapeCache<V extends object> {
  private readonly shapes = new Map<string, Shape>();

  /**
   * `build` makes the statement from the call's values (or their stand-ins); `depth`: how
   * many levels of plain objects in the values are followed to their leaves; `max`: most
   * shapes kept (past it, a new shape is compiled on every call, as without the cache).
   */
  constructor(
    private readonly build: (db: Executor, values: V) => Compilable<unknown> | RawBuilder<unknown>,
    private readonly depth = 2,
    private readonly max = 256,
  ) {}

  /** The statement for `values`, compiled once for its shape (`key` adds what else the builder branches on); run it with `db.executeQuery`. */
  compile<R>(db: Executor, values: V, key = ''): CompiledQuery<R> {
    const shapeKey = `${key}|${shapeOf(values as Record<string, unknown>, this.depth)}`;
    let shape = this.shapes.get(shapeKey);
    if (!shape) {
      shape = this.compileShape(db, values);
      if (this.shapes.size < this.max) this.shapes.set(shapeKey, shape);
    }
    const parameters = shape.parts.map((p) => ('path' in p ? valueAt(values as Record<string, unknown>, p.path) : p.constant));
    return Compiled.raw(shape.sql, parameters) as CompiledQuery<R>;
  }

  private compileShape(db: Executor, values: V): Shape {
    // Every Lumen database compiles alike (the PostgreSQL dialect, no plugins), so a text
    // compiled on one serves all.
    const built = this.build(db, standIns(values as Record<string, unknown>, this.depth) as V) as { compile(db: Executor): CompiledQuery<unknown> };
    const compiled = built.compile(db);
    const parts = compiled.parameters.map((p) => {
      if (p instanceof Slot) return { path: p.path };
      const constant = typeof p === 'string' || typeof p === 'boolean' || p === null || (typeof p === 'number' && Number.isFinite(p));
      if (!constant || (typeof p === 'string' && p.includes('[object Object]'))) {
        throw new Error(`a statement compiled once per shape has a parameter computed from a value (${String(p)}): pass it as a value of its own`);
      }
      return { constant: p };
    });
    return { sql: compiled.sql, parts };
  }

  /** Shapes compiled so far (for tests). */
  get size(): number {
    return this.shapes.size;
  }
}
