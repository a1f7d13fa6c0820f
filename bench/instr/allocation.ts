/**
 * Bytes allocated per request (bench:alloc, bench:profile --bytes, the guard): a server started
 * plain (node alone, a 1-MB young generation, --trace-gc-nvp: Callgrind.start's `plain`), 2,000
 * requests to warm it, then 20,000 in slices of 500, counted from the first collection in the
 * round to the last: whole young generations, so the figure holds within a percent from process
 * to process on a valid submission (300-400 generations).
 */
import { gcOf, type Server } from './callgrind.js';
import { answered, type Driver } from './drive.js';
import type { Scenario } from './scenarios.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Bytes allocated per request of `s` on `server` (NaN where no collection fell in the round). */
export async function allocation(server: Server, driver: Driver, s: Scenario): Promise<number> {
  await driver.drive(server.port, s, 2_000);
  const from = server.gc.length;
  let answers = 0;
  let at = -1;
  // Requests between the first and the last collection of the round: load in slices of 500.
  for (let i = 0; i < 40; i++) {
    const statuses = await driver.drive(server.port, s, 500);
    await sleep(5);
    if (at < 0 && server.gc.length > from) at = server.gc.length;
    else if (at >= 0) answers += answered(statuses);
  }
  const lines = server.gc.slice(at);
  if (at < 0 || lines.length === 0) return Number.NaN;
  return gcOf(lines, server.gc[at - 1]).allocated / answers;
}
