/**
 * A temporary folder removed after the test file's last test, wherever it was made (a test, a
 * hook, the top of the file). scripts/test.sh fails a run that leaves a `txgate-*` folder in the
 * temporary directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';

const made: string[] = [];
const removeAll = () => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
};
// Registered when the file that imports this loads: a hook of the file's root, run after all its
// tests; and at the process's exit, for a file whose run was cut short (a test timed out, a hook
// failed) before its root's hooks ran.
after(removeAll);
process.once('exit', removeAll);

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
