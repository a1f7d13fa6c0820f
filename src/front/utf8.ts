/**
 * A request body's bytes as text, for every front end (POST / and the WebSocket transport). One
 * decoder, straight from uWS's ArrayBuffer: `Buffer.from(ab).toString('utf8')` builds a Buffer
 * object first, and costs more per body (measured under callgrind). The text is the same: invalid sequences become U+FFFD exactly as
 * Buffer's decoding makes them (test/property/utf8.test.ts compares the two over arbitrary bytes), and a
 * byte-order mark is kept as text (`ignoreBOM`), so a body that starts with one is still not JSON.
 */
const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true });

export function utf8Text(bytes: ArrayBuffer | Uint8Array): string {
  return UTF8.decode(bytes);
}
