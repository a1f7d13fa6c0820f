/**
 * The id rule, one for every path (POST /, the WebSocket transport, frames refused before parsing):
 * a request's id is echoed as the JSON text it arrived as (JSON-RPC 2.0 §5: the same id), so a
 * number keeps its spelling (`1e2`, `1.0`, `-0`, an integer beyond 2^53) and a string its escapes
 * (`"\u0041"`). An id is a string or a finite number; null, absent or anything else is invalid.
 *
 * The text is found by a walk over the top-level members of a document JSON.parse already
 * accepted (no second parse): strings are skipped with indexOf, so a raw transaction's hex costs
 * one native scan.
 */
import { scanRequest } from './rpc-scan.js';

/** Whether a parsed id is one JSON-RPC allows here (a string or a finite number). */
export function validId(id: unknown): id is string | number {
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
}

/**
 * The id as JSON, exactly as sent, for a document JSON.parse accepted whose top-level object has
 * a valid `id` (`id` is that parsed value, used only if the text cannot be found).
 */
export function idJsonOf(text: string, id: string | number): string {
  return idLiteral(text) ?? JSON.stringify(id);
}

/**
 * The id of a body refused before it was parsed (a WebSocket frame over a bound), as JSON:
 * 'null' when it has none a client could match.
 */
export function idJsonOfText(text: string): string {
  const scanned = scanRequest(text);
  if (scanned !== undefined) return scanned.idJson;
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return 'null';
  }
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return 'null';
  const id = (msg as { id?: unknown }).id;
  return validId(id) ? idJsonOf(text, id) : 'null';
}

/** Past the string literal whose opening quote is at `from`. */
function stringEnd(text: string, from: number): number {
  let j = text.indexOf('"', from + 1);
  while (j > 0) {
    let b = j - 1;
    while (text.charCodeAt(b) === 92) b--; // backslashes before the quote
    if ((j - 1 - b) % 2 === 0) return j + 1;
    j = text.indexOf('"', j + 1);
  }
  return text.length;
}

function isWs(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/** Whether the key literal text[from, end) is "id" spelt with escapes (`"\\u0069d"`: 5 to 14 characters with a backslash). */
function escapedId(text: string, from: number, end: number): boolean {
  if (end - from < 5 || end - from > 14) return false;
  for (let j = from + 1; j < end; j++) if (text.charCodeAt(j) === 92) return JSON.parse(text.slice(from, end)) === 'id';
  return false;
}

/** Past the JSON value starting at `from`. */
function valueEnd(text: string, from: number): number {
  const n = text.length;
  const c = text.charCodeAt(from);
  if (c === 34) return stringEnd(text, from);
  if (c === 123 || c === 91) {
    let depth = 0;
    let j = from;
    while (j < n) {
      const d = text.charCodeAt(j);
      if (d === 34) {
        j = stringEnd(text, j);
        continue;
      }
      if (d === 123 || d === 91) depth++;
      else if ((d === 125 || d === 93) && --depth === 0) return j + 1;
      j++;
    }
    return n;
  }
  let j = from; // a number or a literal: up to the next delimiter
  while (j < n) {
    const d = text.charCodeAt(j);
    if (d === 44 || d === 125 || isWs(d)) break;
    j++;
  }
  return j;
}

/**
 * The source text of the top-level `"id"` member's value in a document JSON.parse accepted (the
 * last one, as JSON.parse keeps the last of duplicate keys), or undefined. Walks the top-level
 * object only, skipping nested values, so an "id" inside params or a string never matches.
 */
export function idLiteral(text: string): string | undefined {
  const n = text.length;
  let i = text.indexOf('{') + 1;
  let found: string | undefined;
  for (;;) {
    while (i < n && isWs(text.charCodeAt(i))) i++;
    if (i >= n || text.charCodeAt(i) !== 34) return found;
    const keyEnd = stringEnd(text, i);
    const isId = keyEnd - i === 4 ? text.charCodeAt(i + 1) === 105 && text.charCodeAt(i + 2) === 100 : escapedId(text, i, keyEnd);
    i = keyEnd;
    while (i < n && isWs(text.charCodeAt(i))) i++;
    i++; // the colon
    while (i < n && isWs(text.charCodeAt(i))) i++;
    const end = valueEnd(text, i);
    if (isId) found = text.slice(i, end);
    i = end;
    while (i < n && isWs(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) !== 44) return found; // not a comma: the object ends
    i++;
  }
}
