/**
 * docs/clients.md "Reasons in viem and ethers", rendered from the client package's own mapping:
 * every reason of the outcome table (packages/client/src/outcomes.ts) with the ethers code
 * (errors-ethers.ts) and the viem error class (errors-viem.ts) a refusal with it is thrown as.
 */
import { ETHERS_CODES, SEQUENCER_CODES } from '../packages/client/src/errors-ethers.js';
import { VIEM_ERRORS } from '../packages/client/src/errors-viem.js';
import { OUTCOMES, type OutcomeReason } from '../packages/client/src/outcomes.js';
import { ACTIONS } from '../packages/client/src/refusal.js';

const code = (s: string) => `\`${s}\``;

export function renderClientErrors(): string {
  const rows = (Object.keys(OUTCOMES) as OutcomeReason[]).map((reason) => {
    const row = OUTCOMES[reason];
    const ethers =
      reason === 'upstream_rejected'
        ? [...SEQUENCER_CODES.map((s) => `${code(s.code)} (the sequencer says ${s.says})`), `else ${code(ETHERS_CODES[reason])}`].join('; ')
        : code(ETHERS_CODES[reason]);
    const status = 'client' in row ? `${row.status} (the kit's own)` : String(row.status);
    return `| ${code(reason)} | ${status} | ${code(row.kind)} | ${ethers} | ${code(VIEM_ERRORS[row.kind].name)} |`;
  });
  const actions = (Object.keys(ACTIONS) as (keyof typeof ACTIONS)[]).map((k) => `| ${code(k)} | ${code(VIEM_ERRORS[k].name)} | ${ACTIONS[k]} |`);
  return [
    '| reason | HTTP | outcome | ethers `error.code` | viem error (`error.name`) |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    "Each error's short message is `txgate <reason> (<outcome>, HTTP <status>): <message>; <action>.`, the action by outcome:",
    '',
    '| outcome | viem error | the action in the short message |',
    '|---|---|---|',
    ...actions,
  ].join('\n');
}
