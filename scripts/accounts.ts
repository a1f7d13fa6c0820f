/**
 * Onboarding from the command line: `npm run accounts -- <command> [options]`.
 * Edits the accounts file atomically; a running txgate reloads it within a second.
 * New keys are printed once, here, and never written anywhere.
 */
import { resolve } from 'node:path';
import { readCommandLine } from '../src/cli-args.js';
import { AccountsFileError } from '../src/accounts/parse.js';
import {
  addGrant,
  AdminError,
  createAccount,
  fileTarget,
  listAccounts,
  removeGrant,
  setGrant,
  type GrantChange,
  revokeKey,
  rotateKey,
  setSubmission,
  type AccountsTarget,
  type GrantSpec,
} from '../src/accounts/admin.js';
import { dbTarget } from '../src/accounts/postgres/admin.js';
import { dbLabel } from '../src/accounts/postgres/migrate.js';

const USAGE = `usage: npm run accounts -- <command> [--file accounts.json | --db postgres://…] [options]

  migrate --db URL [--edge-role ROLE]                creates or updates the database schema (idempotent);
                                                     --edge-role: grants that (existing) role the read access edges need

  create  --id ID --chain N --rate R --burst B --tip 0xADDR [--tip …] --min-tip WEI
          [--tx-types 2,0,1,4] [--call 0xTO:0xSELECTOR:RECEIVER_ARG:AMOUNT_ARG] [--no-transfer]
          [--allow-untipped] [--senders 0xA,0xB] [--sync] [--conditional] [--express-lane]
                                                     prints the new API key once
                                                     --senders: only these addresses may sign (403 sender_not_allowed)
                                                     --sync: may use eth_sendRawTransactionSync where the chain enables it
                                                     --conditional: may use eth_sendRawTransactionConditional where the
                                                     chain enables it (docs/conditional.md)
                                                     --express-lane: may be carried by the chain's Timeboost express
                                                     lane where the chain enables it (docs/express-lane.md)
  grant-add     --id ID --chain N --rate R --burst B --tip 0xADDR … --min-tip WEI [...]
  grant-set     --id ID --chain N [--rate R] [--burst B] [--tip 0xADDR …] [--min-tip WEI] [--tx-types …]
                [--call … | --no-transfer] [--senders 0xA,0xB | --any-sender] [--sync | --no-sync]
                [--conditional | --no-conditional] [--express-lane | --no-express-lane]
                                                     changes only the fields named on an existing grant
                                                     (--call/--no-transfer restate the fee patterns; --tip
                                                     the tip addresses); prints each change
  grant-remove  --id ID --chain N
  rotate-key    --id ID                              adds a new key (printed once); old keys stay valid
  revoke-key    --id ID --hash SHA256_OR_PREFIX      (or --key-stdin to pass the key on stdin)
  disable       --id ID                              submission refused with 403
  enable        --id ID
  list                                               ids, key-hash prefixes, granted chains

With --db (or $TXGATE_ACCOUNTS_DB) every command works on the PostgreSQL account store, in one
transaction; otherwise on the file, by default $TXGATE_ACCOUNTS or ./accounts.json; a relative path is from the
directory you ran the command in, and every command prints the absolute path it used.`;

const OPTIONS = {
  file: { type: 'string', default: process.env.TXGATE_ACCOUNTS ?? 'accounts.json' },
  db: { type: 'string', ...(process.env.TXGATE_ACCOUNTS_DB ? { default: process.env.TXGATE_ACCOUNTS_DB } : {}) },
  id: { type: 'string' },
  chain: { type: 'string' },
  rate: { type: 'string' },
  burst: { type: 'string' },
  tip: { type: 'string', multiple: true },
  'min-tip': { type: 'string' },
  'tx-types': { type: 'string' },
  call: { type: 'string', multiple: true },
  'no-transfer': { type: 'boolean' },
  'allow-untipped': { type: 'boolean' },
  senders: { type: 'string' },
  sync: { type: 'boolean' },
  conditional: { type: 'boolean' },
  'express-lane': { type: 'boolean' },
  'no-sync': { type: 'boolean' },
  'no-conditional': { type: 'boolean' },
  'no-express-lane': { type: 'boolean' },
  'any-sender': { type: 'boolean' },
  hash: { type: 'string' },
  'key-stdin': { type: 'boolean' },
  'edge-role': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const COMMANDS = new Set(['migrate', 'create', 'grant-add', 'grant-set', 'grant-remove', 'rotate-key', 'revoke-key', 'disable', 'enable', 'list']);

/** A usage problem: one line on stderr, exit 2, never a stack trace. */
function usageError(message: string): never {
  process.stderr.write(`accounts: ${message.replace(/\s*\n\s*/g, ' ')} (npm run accounts -- --help lists the commands and options)\n`);
  process.exit(2);
}

let parsed: ReturnType<typeof readCommandLine<typeof OPTIONS, true>>;
try {
  parsed = readCommandLine(OPTIONS, { allowPositionals: true });
} catch (e) {
  usageError((e as Error).message);
}
const { values, positionals } = parsed;
if (values.help === true) {
  process.stdout.write(USAGE + '\n');
  process.exit(0);
}
if (positionals[0] === undefined) {
  process.stderr.write(USAGE + '\n');
  process.exit(2);
}
if (!COMMANDS.has(positionals[0])) usageError(`unknown command ${JSON.stringify(positionals[0])}`);
if (positionals.length > 1) usageError(`unexpected argument ${JSON.stringify(positionals[1])}`);
if (values.db !== undefined && !/^postgres(ql)?:$/.test(URL.canParse(values.db) ? new URL(values.db).protocol : ''))
  usageError('--db must be a postgres://user:password@host:port/database URL');

function need(name: keyof typeof values): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new AdminError(`--${name} is required`);
  return v;
}

/** A number flag: finite, and at least `min` (integers only when `integer`). */
function num(name: keyof typeof values, min: number, integer = false): number {
  const v = need(name);
  const n = Number(v);
  if (!Number.isFinite(n) || v.trim() === '' || n < min || (integer && !Number.isSafeInteger(n)))
    throw new AdminError(`--${name} ${JSON.stringify(v)}: expected ${integer ? 'an integer' : 'a number'} ${min === Number.MIN_VALUE ? '> 0' : `≥ ${min}`}`);
  return n;
}

/** The fee patterns the flags say: a transfer unless --no-transfer, and each --call. */
function grantFromFlagsFees(): NonNullable<GrantSpec['feePatterns']> {
  const feePatterns: NonNullable<GrantSpec['feePatterns']> = values['no-transfer'] === true ? [] : [{ kind: 'transfer' }];
  for (const c of values.call ?? []) {
    const [to, selector, r, a] = c.split(':');
    if (to === undefined || selector === undefined || r === undefined || a === undefined)
      throw new AdminError(`--call ${c}: expected 0xTO:0xSELECTOR:RECEIVER_ARG:AMOUNT_ARG`);
    feePatterns.push({ kind: 'call', to, selector, receiverArg: Number(r), amountArg: Number(a) });
  }
  return feePatterns;
}

function grantFromFlags(): GrantSpec {
  const feePatterns = grantFromFlagsFees();
  return {
    chainId: num('chain', 1, true),
    rateLimit: { perSecond: num('rate', Number.MIN_VALUE), burst: num('burst', 1, true) },
    txTypes: (values['tx-types'] ?? '2').split(',').map((t) => Number(t.trim())),
    tipAddresses: values.tip ?? [],
    minTipWei: need('min-tip'),
    feePatterns,
    ...(values.senders !== undefined ? { senders: values.senders.split(',').map((a) => a.trim()) } : {}),
    ...(values.sync === true ? { sync: true } : {}),
    ...(values.conditional === true ? { conditional: true } : {}),
    ...(values['express-lane'] === true ? { expressLane: true } : {}),
  };
}

/** A flag and its opposite: true, false, or undefined when neither is given (both: a usage error). */
function onOff(
  on: 'sync' | 'conditional' | 'express-lane' | 'senders',
  off: 'no-sync' | 'no-conditional' | 'no-express-lane' | 'any-sender',
): boolean | undefined {
  const yes = values[on] !== undefined && values[on] !== false;
  const no = values[off] === true;
  if (yes && no) throw new AdminError(`--${on} and --${off} contradict each other: give one`);
  return yes ? true : no ? false : undefined;
}

/** The fields grant-set changes: only those given. */
function grantChangeFromFlags(): GrantChange {
  const c: GrantChange = {};
  if (values.rate !== undefined) c.perSecond = num('rate', Number.MIN_VALUE);
  if (values.burst !== undefined) c.burst = num('burst', 1, true);
  if (values.tip !== undefined) c.tipAddresses = values.tip;
  if (values['min-tip'] !== undefined) c.minTipWei = need('min-tip');
  if (values['tx-types'] !== undefined) c.txTypes = values['tx-types'].split(',').map((t) => Number(t.trim()));
  if (values.call !== undefined || values['no-transfer'] === true) c.feePatterns = grantFromFlagsFees();
  const senders = onOff('senders', 'any-sender');
  if (senders !== undefined) c.senders = senders ? values.senders!.split(',').map((a) => a.trim()) : null;
  const sync = onOff('sync', 'no-sync');
  if (sync !== undefined) c.sync = sync;
  const conditional = onOff('conditional', 'no-conditional');
  if (conditional !== undefined) c.conditional = conditional;
  const lane = onOff('express-lane', 'no-express-lane');
  if (lane !== undefined) c.expressLane = lane;
  if (Object.keys(c).length === 0)
    throw new AdminError(
      'grant-set changes the fields you name: give at least one (--rate, --burst, --tip, --min-tip, --tx-types, --call, --no-transfer, --senders, --any-sender, --sync, --no-sync, --conditional, --no-conditional, --express-lane, --no-express-lane)',
    );
  return c;
}

async function readStdin(): Promise<string> {
  let s = '';
  for await (const chunk of process.stdin) s += chunk;
  return s.trim();
}

async function main(): Promise<void> {
  const cmd = positionals[0];
  const db = values.db;
  if (cmd === 'migrate') {
    if (db === undefined) throw new AdminError('migrate needs --db postgres://… (or TXGATE_ACCOUNTS_DB)');
    const role = values['edge-role'];
    if (role !== undefined && !/^[a-z_][a-z0-9_$]{0,62}$/.test(role))
      throw new AdminError(`--edge-role ${JSON.stringify(role)}: expected a role name (lower case letters, digits, _)`);
    const t = dbTarget(db);
    try {
      const applied = await t.migrate(role);
      process.stdout.write(applied.length === 0 ? `${dbLabel(db)}: up to date\n` : `${dbLabel(db)}: applied ${applied.join(', ')}\n`);
      if (role !== undefined) process.stdout.write(`granted ${role} read access to txgate_accounts (what an edge needs)\n`);
    } finally {
      await t.close();
    }
    return;
  }
  const file = accountsFilePath(values.file!);
  const target: AccountsTarget = db !== undefined ? dbTarget(db) : fileTarget(file);
  const where = db !== undefined ? dbLabel(db) : file;
  try {
    await run(cmd, target, where);
  } finally {
    await target.close();
  }
}

/**
 * A relative --file from the directory the user ran the command in: under `npm run accounts`
 * npm (and scripts/built.sh) run this from the repository root, and npm says where the user was
 * in INIT_CWD. Printed absolute, so nobody wonders which file was written.
 */
function accountsFilePath(file: string): string {
  const from = process.env.npm_lifecycle_event === 'accounts' && process.env.INIT_CWD ? process.env.INIT_CWD : process.cwd();
  return resolve(from, file);
}

async function run(cmd: string | undefined, t: AccountsTarget, where: string): Promise<void> {
  // The flags that turn a field off exist only to change a grant.
  const offFlags = (['no-sync', 'no-conditional', 'no-express-lane', 'any-sender'] as const).filter((f) => values[f] === true);
  if (cmd !== 'grant-set' && offFlags.length > 0) throw new AdminError(`--${offFlags[0]} is grant-set's (it turns a field of an existing grant off)`);
  switch (cmd) {
    case 'create': {
      const key = await createAccount(t, need('id'), [grantFromFlags()], { allowUntipped: values['allow-untipped'] === true });
      process.stdout.write(`created account "${values.id}" in ${where}\nAPI key (shown once, store it in a secret manager now): ${key}\n`);
      return;
    }
    case 'grant-add':
      await addGrant(t, need('id'), grantFromFlags());
      process.stdout.write(`granted chain ${values.chain} to "${values.id}" in ${where}\n`);
      return;
    case 'grant-set': {
      const said = await setGrant(t, need('id'), num('chain', 1, true), grantChangeFromFlags());
      process.stdout.write(
        said.length === 0
          ? `grant for chain ${values.chain} of "${values.id}" unchanged in ${where} (it already had those values)\n`
          : `changed the grant for chain ${values.chain} of "${values.id}" in ${where}:\n${said.map((l) => `  ${l}\n`).join('')}`,
      );
      return;
    }
    case 'grant-remove':
      await removeGrant(t, need('id'), num('chain', 1, true));
      process.stdout.write(`removed chain ${values.chain} from "${values.id}" in ${where}\n`);
      return;
    case 'rotate-key': {
      const key = await rotateKey(t, need('id'));
      process.stdout.write(`added a key to "${values.id}" in ${where}; the old keys stay valid until revoked\nnew API key (shown once): ${key}\n`);
      return;
    }
    case 'revoke-key': {
      const h =
        values['key-stdin'] === true ? await revokeKey(t, need('id'), { key: await readStdin() }) : await revokeKey(t, need('id'), { hash: need('hash') });
      process.stdout.write(`revoked key ${h.slice(0, 12)}… of "${values.id}" in ${where}\n`);
      return;
    }
    case 'disable':
    case 'enable':
      await setSubmission(t, need('id'), cmd === 'enable');
      process.stdout.write(`submission ${cmd}d for "${values.id}" in ${where}\n`);
      return;
    case 'list':
      for (const a of await listAccounts(t))
        process.stdout.write(
          `${a.id}\t${a.submissionEnabled ? 'enabled' : 'DISABLED'}\tkeys ${a.keys.join(',') || '-'}\tchains ${a.chains.join(',') || '-'}\n`,
        );
      return;
    default:
      usageError(`unknown command ${JSON.stringify(cmd)}`);
  }
}

main().catch((e: unknown) => {
  if (e instanceof AdminError || e instanceof AccountsFileError) {
    process.stderr.write(`accounts: ${e instanceof AccountsFileError ? 'the change would make the accounts invalid: ' : ''}${e.message}\n`);
    process.exitCode = 2;
    return;
  }
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && (/^E[A-Z]+$/.test(code) || /^[0-9A-Z]{5}$/.test(code) || code === 'CONNECT_TIMEOUT')) {
    // A database that cannot be reached or refused the statement: its message, never the URL's password.
    process.stderr.write(`accounts: the database refused or could not be reached (${code}): ${(e as Error).message}\n`);
    process.exitCode = 1;
    return;
  }
  throw e;
});
