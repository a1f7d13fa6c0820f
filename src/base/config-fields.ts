/**
 * Configuration fields declared once: each field's reader (type, default, bounds or choices) and
 * its one-line doc sit in one declaration, which both validates a configuration (readSection) and
 * renders the operator's table of fields (fieldRows, rendered into docs/operations.md by
 * scripts/docs-tables.ts). A section is a plain object of fields and sections; its value type is
 * derived from it (Values), so a field cannot be validated, typed and documented three ways.
 */
import { got, isObj, type Reader } from './config-reader.js';

/** What a reader may need beyond the value: the config file's directory, the environment. */
export interface ReadContext {
  readonly baseDir: string;
  readonly env: NodeJS.ProcessEnv;
}

export interface Field<T> {
  /** The values it takes, as the table says it ("integer, 1 to 65,535", "`failover` or `fanout`"). */
  readonly allowed: string;
  /** The default, as the table says it ("`8080`", "required", "none"). */
  readonly shown: string;
  /** One line for the operator: what it is for. */
  readonly doc: string;
  /** A list's element section (`chains[].…` rows). */
  readonly items?: Section;
  read(r: Reader, v: unknown, path: string, ctx: ReadContext): T;
}

export type Decl = Field<unknown> | Section;
export interface Section {
  readonly [key: string]: Decl;
}

/** The value a section reads into. */
export type Values<S> = { readonly [K in keyof S]: S[K] extends Field<infer T> ? T : S[K] extends Section ? Values<S[K]> : never };

const isField = (d: Decl): d is Field<unknown> => typeof (d as { read?: unknown }).read === 'function';

/** 1234567 → "1,234,567". */
export const num = (n: number): string => n.toLocaleString('en-US');
const code = (s: string | number | boolean): string => `\`${s}\``;
/** Choices as the table lists them: "`a`, `b` or `c`". */
export const choices = (list: readonly string[]): string =>
  list.length === 1 ? code(list[0]!) : `${list.slice(0, -1).map(code).join(', ')} or ${code(list.at(-1)!)}`;

export interface IntOptions {
  /** The default as the table says it, where it is not a fixed number. */
  readonly shown?: string;
  /** The bounds as the table says them, where the reader checks more than a range. */
  readonly allowed?: string;
  /** No default: a missing value is a problem. */
  readonly required?: boolean;
  /** A further rule on an in-range value: the problem's text, or null. */
  readonly check?: (v: number) => string | null;
}

export function int(def: number | (() => number), min: number, max: number, doc: string, o: IntOptions = {}): Field<number> {
  return {
    allowed: o.allowed ?? `integer, ${num(min)} to ${num(max)}`,
    shown: o.required === true ? 'required' : (o.shown ?? code(typeof def === 'number' ? def : def())),
    doc,
    read(r, v, path) {
      const d = typeof def === 'number' ? def : def();
      if (v === undefined && o.required === true) {
        r.problems.push(`${path}: required`);
        return d;
      }
      const n = r.int(v, path, d, min, max);
      const why = v === undefined || o.check === undefined ? null : o.check(n);
      if (why !== null) r.problems.push(`${path}: ${why}`);
      return n;
    },
  };
}

export function bool(def: boolean, doc: string): Field<boolean> {
  return { allowed: '`true` or `false`', shown: code(def), doc, read: (r, v, path) => r.bool(v, path, def) };
}

export function str(def: string, doc: string): Field<string> {
  return { allowed: 'a non-empty string', shown: code(def), doc, read: (r, v, path) => r.str(v, path, def) };
}

export function oneOf<T extends string>(list: readonly T[], def: T, doc: string): Field<T> {
  return { allowed: choices(list), shown: code(def), doc, read: (r, v, path) => r.oneOf(v, path, def, list) };
}

/** A field read by its own function (URLs, lists, an environment override). */
export function custom<T>(allowed: string, shown: string, doc: string, read: Field<T>['read']): Field<T> {
  return { allowed, shown, doc, read };
}

/**
 * A required, non-empty array of sections (`noun` names an element in the problem when it is
 * missing); an element that is not an object is reported and left out, and `check` (if given)
 * adds the rules between an element's fields.
 */
export function list<S extends Section>(
  items: S,
  noun: string,
  doc: string,
  check?: (r: Reader, value: Values<S>, raw: Record<string, unknown>, path: string) => void,
): Field<readonly Values<S>[]> {
  return {
    allowed: 'a non-empty array',
    shown: 'required',
    doc,
    items,
    read(r, v, path, ctx) {
      const out: Values<S>[] = [];
      if (v === undefined) r.problems.push(`${path}: required (at least one ${noun})`);
      else if (!Array.isArray(v) || v.length === 0) r.problems.push(`${path}: must be a non-empty array, ${Array.isArray(v) ? 'got an empty one' : got(v)}`);
      else
        v.forEach((e: unknown, i: number) => {
          const f = `${path}[${i}]`;
          if (!isObj(e)) {
            r.obj(e, f, []);
            return;
          }
          const value = readSection(r, items, e, f, `${f}.`, ctx);
          check?.(r, value, e, f);
          out.push(value);
        });
      return out;
    },
  };
}

/**
 * Reads `v` as the section `decl`: unknown fields are problems named `<label>.<key>`, each field
 * is read by its declaration under `<prefix><key>`; every problem is collected in `r`.
 */
export function readSection<S extends Section>(r: Reader, decl: S, v: unknown, label: string, prefix: string, ctx: ReadContext): Values<S> {
  const o = r.obj(v, label, Object.keys(decl));
  const out: Record<string, unknown> = {};
  for (const [key, d] of Object.entries(decl)) {
    const path = `${prefix}${key}`;
    out[key] = isField(d) ? d.read(r, o[key], path, ctx) : readSection(r, d, o[key], path, `${path}.`, ctx);
  }
  return out as Values<S>;
}

export interface FieldRow {
  readonly path: string;
  readonly shown: string;
  readonly allowed: string;
  readonly doc: string;
}

/** Every field of a section, depth first in declaration order (a list's element fields as `path[].field`). */
export function fieldRows(decl: Section, prefix = ''): FieldRow[] {
  return Object.entries(decl).flatMap(([key, d]): FieldRow[] => {
    const path = `${prefix}${key}`;
    if (!isField(d)) return fieldRows(d, `${path}.`);
    if (d.items !== undefined) return fieldRows(d.items, `${path}[].`);
    return [{ path, shown: d.shown, allowed: d.allowed, doc: d.doc }];
  });
}

/** The fields as a Markdown table (field, default, allowed values, meaning). */
export function renderFieldTable(decl: Section): string {
  const rows = fieldRows(decl).map((f) => `| ${code(f.path)} | ${f.shown} | ${f.allowed} | ${f.doc} |`);
  return ['| field | default | allowed | meaning |', '|---|---|---|---|', ...rows].join('\n');
}
