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
// Registered when the file that imports this loads: a hook of the file's root, run after all its tests.
after(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
