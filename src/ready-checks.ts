/**
 * /ready's checks, as the composition root (app.ts) adds them: the account store (loaded, not
 * stale) and the sequencers' health make the edge unready; a store's last failed reload and each
 * express lane's stale auction state are said in `warnings`, never unready, and each lane's
 * round and control under `expressLane`.
 */
import type { AccountStore } from './accounts/types.js';
import type { Config } from './config/config.js';
import type { ExpressLanesRef } from './forward/express-send.js';
import type { HealthBoard } from './health/board.js';
import { healthProblems } from './health/prober.js';
import { Readiness } from './front/readiness.js';

export function readinessOf(config: Config, store: AccountStore, board: HealthBoard, lanes: ExpressLanesRef): Readiness {
  const readiness = new Readiness();
  readiness.add(() => accountsProblem(store, config.accounts.maxStaleMs));
  readiness.warn(() => (store.ready && store.problem ? `${store.problem} (the last good accounts stay in force)` : null));
  readiness.add(() => healthProblems(config.chains, board));
  readiness.warn(() => laneWarnings(lanes));
  readiness.describe('expressLane', () => laneDetail(lanes));
  return readiness;
}

/** The readiness problem of the account store, if any: never loaded, or stale. */
export function accountsProblem(store: AccountStore, maxStaleMs: number): string | null {
  if (!store.ready) return store.problem ? `accounts not loaded: ${store.problem}` : 'accounts not loaded';
  return store.stale ? `accounts stale: the account store has not been reached for over ${maxStaleMs} ms (credentials_stale)` : null;
}

/** Each express lane's round and control by chain id (public facts: the contract says them on chain), or null: no lane. */
function laneDetail(box: ExpressLanesRef): Record<string, unknown> | null {
  const status = box.lanes.status();
  if (status.size === 0) return null;
  return Object.fromEntries(
    [...status].map(([chain, s]) => [
      chain,
      {
        round: s.round,
        controlled: s.controlled,
        controller: s.controller,
        nextController: s.nextController,
        msUntilRoundEnd: s.msUntilRoundEnd,
        fresh: s.fresh,
      },
    ]),
  );
}

/** Each express lane that would not wrap now, and why (stale auction state: the plain path until a read succeeds). */
function laneWarnings(box: ExpressLanesRef): string | null {
  const w: string[] = [];
  for (const [chain, s] of box.lanes.status())
    if (!s.fresh) w.push(`express lane ${chain}: auction state stale (${s.readFailures} failed reads; the plain path)`);
  return w.length === 0 ? null : w.join('; ');
}
