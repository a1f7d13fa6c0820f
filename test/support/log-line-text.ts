/**
 * The text one log line writes (src/log/log-line.ts's LogLine): started on `head`, built by
 * `build`, ended with `msg`. The pieces' tests compare lines built field by field with lines
 * built from pieces.
 */
import { LogLine } from '../../src/log/log-line.js';

export function writtenLine(head: string, msg: string, build: (l: LogLine) => void): string {
  let out = '';
  const line = new LogLine({ write: (s) => (out = s) }, head);
  build(line);
  line.end(msg);
  return out;
}
