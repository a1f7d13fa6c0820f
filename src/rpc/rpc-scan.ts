/**
 * The request envelope read without JSON.parse, for the shape every client library sends: one
 * object whose members are `jsonrpc` ("2.0"), `id`, `method` and optionally `params`, each once,
 * in any order, with any JSON whitespace; strings without escapes or control characters; an id
 * that is a string or a finite JSON number; params an array of such strings.
 *
 * It is an exact shortcut, never a second reading: where it answers, its answer is what the
 * parse stage's JSON.parse path gives for the same text (the same id, the id's text as sent, the
 * same method and params: test/property/rpc-scan.test.ts checks it against that path over generated and
 * mutated bodies); anything else (an escape, another member, a nested value, a duplicate, a
 * number param, malformed JSON) it leaves to that path by answering undefined. One pass over the
 * text, no intermediate object, no id walk: the known methods come back as the interned
 * constants the route stage compares against.
 */
import { orError } from '../base/or-error.js';
import { CHAIN_ID_METHOD, CONDITIONAL_METHOD, SEND_METHOD, SYNC_METHOD } from './rpc-methods.js';

/** What the parse stage makes of a request (pipeline/context.ts's RpcRequest). */
export interface ScannedRequest {
  readonly id: string | number;
  /** The id as JSON, as sent: echoed in every answer. */
  readonly idJson: string;
  readonly method: string;
  readonly params: readonly unknown[];
  /**
   * Every param is a string of `0x` (or `0X`) and hex digits, found while finding where each
   * string ends: the route stage then checks only the length. False: not known (the JSON.parse path).
   */
  readonly paramsHex: boolean;
}

const NO_PARAMS: readonly unknown[] = Object.freeze([]);

const SEND = SEND_METHOD;
const SEND_SYNC = SYNC_METHOD;
const CHAIN_ID = CHAIN_ID_METHOD;

/** Bits of the members seen. */
const JSONRPC = 1;
const ID = 2;
const METHOD = 4;
const PARAMS = 8;

// The two exact layouts client libraries write (viem's member order, and ethers'), without
// whitespace, with no params, `[]` or one 0x-hex string: one native match each (a compiled
// expression reads a character for a fraction of what a JavaScript loop spends). The captures:
// the id as sent, the method, the hex.
const ID_TEXT = '(-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|"[^"\\\\\\u0000-\\u001f]*")';
const METHOD_TEXT = '"([^"\\\\\\u0000-\\u001f]*)"';
const HEX_PARAMS = '\\[(?:"(0[xX][0-9a-fA-F]*)")?\\]';
const VIEM = new RegExp(`^\\{"jsonrpc":"2\\.0","id":${ID_TEXT},"method":${METHOD_TEXT}(?:,"params":${HEX_PARAMS})?\\}$`);
const ETHERS = new RegExp(`^\\{"method":${METHOD_TEXT},"params":${HEX_PARAMS},"id":${ID_TEXT},"jsonrpc":"2\\.0"\\}$`);
// The conditional send in viem's layout (docs/conditional.md): the hex, then the options' text,
// which JSON.parse reads alone (one that is not one JSON value goes to the whole text's parse).
const CONDITIONAL = new RegExp(
  `^\\{"jsonrpc":"2\\.0","id":${ID_TEXT},"method":"${CONDITIONAL_METHOD}","params":\\["(0[xX][0-9a-fA-F]*)",(\\{.*\\})\\]\\}$`,
  's',
);

/** The request `t` holds, when it has the plain shape above; undefined: read it with JSON.parse. */
export function scanRequest(t: string): ScannedRequest | undefined {
  // Only a body ending in `}]}` can be the conditional layout (every other layout's params end in `"]}` or `[]}`).
  if (t.charCodeAt(t.length - 3) === 125 /* } */) {
    const c = CONDITIONAL.exec(t);
    if (c !== null) return conditional(c[1]!, c[2]!, c[3]!);
  }
  const v = VIEM.exec(t);
  if (v !== null) return fromLayout(v[1]!, v[2]!, v[3]);
  const e = ETHERS.exec(t);
  if (e !== null) return fromLayout(e[3]!, e[1]!, e[2]);
  return scanMembers(t);
}

/** A request of one of the exact layouts, from its captures (the id's text, the method, the hex if any). */
function fromLayout(idJson: string, name: string, hex: string | undefined): ScannedRequest | undefined {
  const method = name === SEND ? SEND : name === CHAIN_ID ? CHAIN_ID : name === SEND_SYNC ? SEND_SYNC : name;
  return withId(idJson, method, hex === undefined ? NO_PARAMS : [hex], true);
}

/** The conditional send's layout, from its captures (the id's text, the hex, the options' text). */
function conditional(idJson: string, hex: string, optionsText: string): ScannedRequest | undefined {
  const options = orError(JSON.parse, optionsText);
  return options instanceof Error ? undefined : withId(idJson, CONDITIONAL_METHOD, [hex, options], false);
}

/**
 * The request with its id read from the id's text; undefined where JSON.parse would not give a
 * finite number. Every layout's request is this one literal: one hidden class for the field
 * every stage after parse reads (a copy made by spreading has another).
 */
function withId(idJson: string, method: string, params: readonly unknown[], paramsHex: boolean): ScannedRequest | undefined {
  let id: string | number;
  if (idJson.charCodeAt(0) === 34) id = idJson.slice(1, -1);
  else {
    id = idJson.length === 1 ? idJson.charCodeAt(0) - 48 : Number(idJson);
    if (!Number.isFinite(id)) return undefined; // 1e400: JSON.parse gives Infinity, refused there
  }
  return { id, idJson, method, params, paramsHex };
}

/** Any other layout of the plain shape: the members one by one. */
function scanMembers(t: string): ScannedRequest | undefined {
  const n = t.length;
  let i = skipWs(t, 0);
  if (at(t, i) !== 123 /* { */) return undefined;
  i = skipWs(t, i + 1);
  let seen = 0;
  let id: string | number = 0;
  let idJson = '';
  let method = '';
  let params: readonly unknown[] = NO_PARAMS;
  let paramsHex = true;
  for (;;) {
    if (at(t, i) !== 34) return undefined;
    const c1 = at(t, i + 1);
    let member: number;
    if (c1 === 105 /* i */ && i + 4 < n && t.charCodeAt(i + 2) === 100 /* d */ && t.charCodeAt(i + 3) === 34) {
      member = ID;
      i += 4;
    } else if (c1 === 106 /* j */ && isJsonrpcKey(t, i, n)) {
      member = JSONRPC;
      i += 9;
    } else if (c1 === 109 /* m */ && isMethodKey(t, i, n)) {
      member = METHOD;
      i += 8;
    } else if (c1 === 112 /* p */ && isParamsKey(t, i, n)) {
      member = PARAMS;
      i += 8;
    } else return undefined;
    if ((seen & member) !== 0) return undefined; // a duplicate: JSON.parse keeps the last
    seen |= member;
    i = skipWs(t, i);
    if (at(t, i) !== 58 /* : */) return undefined;
    i = skipWs(t, i + 1);
    if (member === ID) {
      let end: number;
      if (at(t, i) === 34) {
        end = stringEnd(t, i);
        if (end < 0) return undefined;
        id = t.slice(i + 1, end - 1);
      } else {
        end = numberEnd(t, i);
        if (end < 0) return undefined;
        const v = end - i === 1 ? at(t, i) - 48 : Number(t.slice(i, end));
        if (!Number.isFinite(v)) return undefined; // 1e400: JSON.parse gives Infinity, refused there
        id = v;
      }
      idJson = t.slice(i, end);
      i = end;
    } else if (member === METHOD) {
      if (at(t, i) !== 34) return undefined;
      const end = stringEnd(t, i);
      if (end < 0) return undefined;
      method = methodName(t, i + 1, end - 1);
      i = end;
    } else if (member === JSONRPC) {
      if (!isVersion(t, i, n)) return undefined;
      i += 5;
    } else {
      if (at(t, i) !== 91 /* [ */) return undefined;
      i = skipWs(t, i + 1);
      if (at(t, i) === 93 /* ] */) i++;
      else {
        let list: string[] | null = null;
        for (;;) {
          if (at(t, i) !== 34) return undefined;
          // A raw transaction is found as 0x-hex, which the route stage then need not check again.
          let end = hexStringEnd(t, i);
          if (end < 0) {
            paramsHex = false;
            end = stringEnd(t, i);
            if (end < 0) return undefined;
          }
          const p = t.slice(i + 1, end - 1);
          if (list === null) list = [p];
          else list.push(p);
          i = skipWs(t, end);
          const d = at(t, i);
          if (d === 93) {
            i++;
            break;
          }
          if (d !== 44 /* , */) return undefined;
          i = skipWs(t, i + 1);
        }
        params = list!;
      }
    }
    i = skipWs(t, i);
    const d = at(t, i);
    if (d === 44) {
      i = skipWs(t, i + 1);
      continue;
    }
    if (d !== 125 /* } */) return undefined;
    break;
  }
  if (skipWs(t, i + 1) !== n || (seen & (JSONRPC | ID | METHOD)) !== (JSONRPC | ID | METHOD)) return undefined;
  return { id, idJson, method, params, paramsHex };
}

// The fixed words, compared a character at a time (inline loads: a slice and a string compare,
// or String.prototype.startsWith, cost more, measured under callgrind). `i` is at
// the opening quote; `n` the text's length (no read past it).
/** `"jsonrpc"` */
function isJsonrpcKey(t: string, i: number, n: number): boolean {
  return (
    i + 9 < n &&
    t.charCodeAt(i + 2) === 115 &&
    t.charCodeAt(i + 3) === 111 &&
    t.charCodeAt(i + 4) === 110 &&
    t.charCodeAt(i + 5) === 114 &&
    t.charCodeAt(i + 6) === 112 &&
    t.charCodeAt(i + 7) === 99 &&
    t.charCodeAt(i + 8) === 34
  );
}
/** `"method"` */
function isMethodKey(t: string, i: number, n: number): boolean {
  return (
    i + 8 < n &&
    t.charCodeAt(i + 2) === 101 &&
    t.charCodeAt(i + 3) === 116 &&
    t.charCodeAt(i + 4) === 104 &&
    t.charCodeAt(i + 5) === 111 &&
    t.charCodeAt(i + 6) === 100 &&
    t.charCodeAt(i + 7) === 34
  );
}
/** `"params"` */
function isParamsKey(t: string, i: number, n: number): boolean {
  return (
    i + 8 < n &&
    t.charCodeAt(i + 2) === 97 &&
    t.charCodeAt(i + 3) === 114 &&
    t.charCodeAt(i + 4) === 97 &&
    t.charCodeAt(i + 5) === 109 &&
    t.charCodeAt(i + 6) === 115 &&
    t.charCodeAt(i + 7) === 34
  );
}
/** `"2.0"` */
function isVersion(t: string, i: number, n: number): boolean {
  return (
    i + 5 < n && t.charCodeAt(i) === 34 && t.charCodeAt(i + 1) === 50 && t.charCodeAt(i + 2) === 46 && t.charCodeAt(i + 3) === 48 && t.charCodeAt(i + 4) === 34
  );
}

/**
 * The character at `i`, or -1 past the end. Never read out of bounds: one such read makes V8
 * compile every charCodeAt of the function as a call instead of an inline load (measured under
 * callgrind with bounds left to charCodeAt).
 */
function at(t: string, i: number): number {
  return i < t.length ? t.charCodeAt(i) : -1;
}

/** JSON whitespace: space, tab, line feed, carriage return. */
function skipWs(t: string, i: number): number {
  for (;;) {
    const c = at(t, i);
    if (c !== 32 && c !== 10 && c !== 13 && c !== 9) return i;
    i++;
  }
}

/** A string's characters up to its closing quote, none an escape or a control character (sticky: from lastIndex). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON forbids them raw in a string; the class names them to refuse them
const PLAIN_STRING = /[^"\\\u0000-\u001f]*"/y;

/**
 * Past the string whose quote is at `i`, or -1 for one with an escape or a control character
 * (or unterminated). A regular expression: a raw transaction's hundreds of hex digits are
 * matched natively, at a fraction of a charCodeAt loop's cost (measured).
 */
function stringEnd(t: string, i: number): number {
  PLAIN_STRING.lastIndex = i + 1;
  return PLAIN_STRING.test(t) ? PLAIN_STRING.lastIndex : -1;
}

/** `0x` and hex digits up to the closing quote (sticky: from lastIndex). */
const HEX_STRING = /0[xX][0-9a-fA-F]*"/y;

/** Past the string of 0x-hex whose quote is at `i`, or -1 when it is not one. */
function hexStringEnd(t: string, i: number): number {
  HEX_STRING.lastIndex = i + 1;
  return HEX_STRING.test(t) ? HEX_STRING.lastIndex : -1;
}

/** Past the JSON number at `i` (-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?), or -1. */
function numberEnd(t: string, i: number): number {
  if (at(t, i) === 45 /* - */) i++;
  let c = at(t, i);
  if (c === 48) c = at(t, ++i);
  else if (c >= 49 && c <= 57) {
    do c = at(t, ++i);
    while (c >= 48 && c <= 57);
  } else return -1;
  if (c === 46 /* . */) {
    c = at(t, ++i);
    if (!(c >= 48 && c <= 57)) return -1;
    do c = at(t, ++i);
    while (c >= 48 && c <= 57);
  }
  if (c === 101 || c === 69 /* e E */) {
    c = at(t, ++i);
    if (c === 43 || c === 45) c = at(t, ++i);
    if (!(c >= 48 && c <= 57)) return -1;
    do c = at(t, ++i);
    while (c >= 48 && c <= 57);
  }
  return i;
}

/** The method's name: the interned constant for the methods served (compared by identity later), else a slice. */
function methodName(t: string, from: number, to: number): string {
  const len = to - from;
  const name = t.slice(from, to);
  if (len === 22 && name === SEND) return SEND;
  if (len === 11 && name === CHAIN_ID) return CHAIN_ID;
  if (len === 26 && name === SEND_SYNC) return SEND_SYNC;
  if (len === 33 && name === CONDITIONAL_METHOD) return CONDITIONAL_METHOD;
  return name;
}
