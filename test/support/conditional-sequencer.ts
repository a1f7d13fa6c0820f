/**
 * `startConditionalChain`: an anvil with some blocks and, in front of it, the conditional
 * sequencer the tests use: the development one (src/dev/conditional-sequencer/, what `npm start
 * -- --conditional` runs; the tests import it from there), as anvil serves no such method.
 */
import { startAnvil, type Anvil } from '../../src/dev/anvil.js';
import { freePort } from '../../src/base/free-port.js';
import { type ConditionalSequencer, startConditionalSequencer } from '../../src/dev/conditional-sequencer/server.js';
import { DEV_CHAIN_ID } from '../../src/dev/dev-setup.js';

/** An anvil (the development chain, `extraArgs` as given) with `mined` blocks (so that a blockNumberMax below the head exists), and the sequencer in front of it. */
export async function startConditionalChain(mined = 0, extraArgs?: string[]): Promise<{ anvil: Anvil; seq: ConditionalSequencer }> {
  const anvil = await startAnvil({ port: await freePort(), chainId: DEV_CHAIN_ID, ...(extraArgs !== undefined ? { extraArgs } : {}) });
  const seq = await startConditionalSequencer(anvil.url);
  if (mined > 0)
    await fetch(anvil.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_mine', params: [`0x${mined.toString(16)}`] }),
    });
  return { anvil, seq };
}
