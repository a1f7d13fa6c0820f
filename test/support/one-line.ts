/**
 * The one line a command wrote on stderr when it refused to run or to start: the tests of the
 * CLI, the scripts and the benches read their refusals with it.
 */
import assert from 'node:assert/strict';

/** A stack trace's frame, or an error's class name and colon. */
export const STACK_TRACE = /\n\s+at |Error:/;

/**
 * The line `stderr` holds, asserted to be the only one and to have nothing matching `trace` (a
 * stack trace by default; `null`: not looked for). `what` names the case in the assertions'
 * messages.
 */
export function oneLine(stderr: string, o: { what?: string; trace?: RegExp | null } = {}): string {
  const about = o.what === undefined ? '' : `${o.what}: `;
  const lines = stderr.trim().split('\n');
  assert.equal(lines.length, 1, `${about}one line, got:\n${stderr}`);
  const trace = o.trace === undefined ? STACK_TRACE : o.trace;
  if (trace !== null) assert.doesNotMatch(stderr, trace, `${about}no stack trace`);
  return lines[0]!;
}
