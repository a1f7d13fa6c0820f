/**
 * Who may submit where, written once: the Host picks the chain, the API key names the account,
 * and the account needs submission enabled and a grant for the chain. The host, auth and grant
 * stages apply these rules one by one (other stages run between them); a front end that admits
 * at connect time (the WebSocket upgrade) and GET /tip-addresses apply them together through
 * `admit`, so every path refuses with the same answers in the same order.
 */
import { authenticate } from '../accounts/keys.js';
import type { Account, AccountStore, Grant } from '../accounts/types.js';
import type { ChainRuntime, HostTable } from '../config/chains.js';
import { Exit, REJECT } from '../base/errors.js';

/** The chain the Host header names, or 421 misdirected_host. */
export function hostChain(hosts: HostTable, rawHost: string): ChainRuntime | Exit {
  return hosts.lookup(rawHost) ?? REJECT.misdirected_host;
}

/** 403 submission_disabled for an account that may not submit anywhere, else null. */
function submissionOff(account: Account): Exit | null {
  return account.submissionEnabled ? null : REJECT.submission_disabled;
}

/** The account's grant for the chain, or why it may not submit there (submission disabled first). */
export function chainGrant(account: Account, chainId: number): Grant | Exit {
  return submissionOff(account) ?? account.grants.get(chainId) ?? REJECT.chain_not_granted;
}

/** What a connect-time admission establishes. */
export interface Admission {
  readonly chain: ChainRuntime;
  readonly account: Account;
  readonly grant: Grant;
}

/** A connect-time refusal: its answer, and the account it named once known (for the log line). */
export interface Refusal {
  readonly exit: Exit;
  readonly account?: string;
}

export interface AdmissionParts {
  readonly hosts: HostTable;
  readonly store: AccountStore;
}

/**
 * Host → key → grant, at once. `grantChain` picks the chain whose grant is needed when it is not
 * the host's (GET /tip-addresses?chainId=): asked once the account may submit, it gives a chain
 * id or its own refusal.
 */
export function admit(
  p: AdmissionParts,
  head: { readonly host: string; readonly apiKey: string },
  grantChain?: (hostChain: ChainRuntime, account: Account) => number | Exit,
): Admission | Refusal {
  const chain = hostChain(p.hosts, head.host);
  if (chain instanceof Exit) return { exit: chain };
  const account = authenticate(p.store, head.apiKey);
  if (account instanceof Exit) return { exit: account };
  const off = submissionOff(account);
  if (off !== null) return { exit: off, account: account.id };
  const chainId = grantChain === undefined ? chain.chainId : grantChain(chain, account);
  if (chainId instanceof Exit) return { exit: chainId, account: account.id };
  const grant = chainGrant(account, chainId);
  return grant instanceof Exit ? { exit: grant, account: account.id } : { chain, account, grant };
}

/** Whether an admission was refused. */
export const refused = (a: Admission | Refusal): a is Refusal => 'exit' in a;
