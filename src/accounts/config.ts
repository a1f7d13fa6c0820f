/**
 * The `accounts` section of the configuration, declared by the account layer: `store` picks a
 * store kind, and each kind lists its own fields (declared once: config-fields.ts) and the rule
 * between them. src/config/config.ts composes this section with the others; open-store.ts opens the
 * kind chosen. A new kind adds its entry here and in open-store.ts.
 */
import { custom, oneOf, type Section, type Values } from '../base/config-fields.js';
import type { Reader } from '../base/config-reader.js';
import { resolve } from 'node:path';
import { checkPostgresFields, POSTGRES_FIELDS } from './postgres/config.js';

const FILE_FIELDS = {
  file: custom<string>('a path', '`./accounts.json`', 'the accounts file (hot-reloaded; relative to the config file)', (r, v, path, ctx) =>
    resolve(ctx.baseDir, r.str(v, path, './accounts.json')),
  ),
};

interface KindFields {
  /** What it is, for the table. */
  readonly doc: string;
  readonly fields: Section;
}

/** The store kinds, the first the default, each with its own fields (ACCOUNTS lists them all, flat). */
const KINDS = {
  file: { doc: 'the accounts file, hot-reloaded', fields: FILE_FIELDS },
  postgres: { doc: 'the fleet store; see [Running a fleet](#running-a-fleet)', fields: POSTGRES_FIELDS },
} satisfies Record<string, KindFields>;

export type StoreKindName = keyof typeof KINDS;
const NAMES = Object.keys(KINDS) as StoreKindName[];

/** Where accounts come from (docs/operations.md#accounts). */
export const ACCOUNTS = {
  store: oneOf<StoreKindName>(NAMES, NAMES[0]!, `where accounts come from: ${NAMES.map((n) => `\`${n}\` (${KINDS[n].doc})`).join(', ')}`),
  ...KINDS.file.fields,
  ...KINDS.postgres.fields,
} satisfies Section;

export type AccountsConfig = Values<typeof ACCOUNTS>;

/** The rule between a kind's fields, checked when it is the kind chosen. */
const CHECKS: Partial<Record<StoreKindName, (r: Reader, a: AccountsConfig) => void>> = { postgres: checkPostgresFields };

export function checkAccounts(r: Reader, a: AccountsConfig): void {
  CHECKS[a.store]?.(r, a);
}
