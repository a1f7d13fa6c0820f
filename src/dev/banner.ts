/**
 * What `npm start` prints once it is up: the addresses, the development key, and for each
 * extension turned on a line saying what it is and a command to try it (`try: …`). Every
 * command is printed to run as printed, on this run's ports (and, over TLS, with the
 * development CA that node must trust): test/chain/docs-commands.test.ts runs each.
 */
import { ANVIL_KEYS, ANVIL_TIP_ADDRESS } from './anvil.js';
import { DEV_API_KEY, DEV_MIN_TIP_WEI } from './dev-setup.js';

export interface BannerFacts {
  /** txgate's public and internal ports. */
  readonly port: number;
  readonly internalPort: number;
  readonly anvilUrl: string;
  readonly sync: boolean;
  readonly track: boolean;
  readonly websocket: boolean;
  /** With `--flashblocks`: the development builder's stream (src/dev/flashblocks.ts). */
  readonly flashblocks?: string | null;
  /** Over TLS: the certificate made now and the development CA that signed it. */
  readonly tls: { readonly certFile: string; readonly caFile: string } | null;
  /** With --conditional: the development sequencer in front of anvil, and whether dev's grant was given `conditional` now. */
  readonly conditional?: { readonly sequencerUrl: string; readonly grantAmended: boolean } | null;
  /** --conditional was asked, and the config (edited by the user, so not rewritten) does not serve it. */
  readonly conditionalNotInConfig?: boolean;
  readonly configFile: string;
  readonly configWritten: boolean;
  readonly accountsFile: string;
  readonly accountsCreated: boolean;
}

/** The lines of a command to try, one per extension turned on, then the demo's: what a user runs. */
export function bannerCommands(f: BannerFacts): string[] {
  return [...banner(f).matchAll(/^ +try:? +(.+?)(?: {3,}\(.*\))? *$/gm)].map((m) => m[1]!);
}

export function banner(f: BannerFacts): string {
  const secure = f.tls !== null;
  const base = secure ? `https://localhost:${f.port}` : `http://127.0.0.1:${f.port}`;
  const anvilDefault = new URL(f.anvilUrl).port === '8545';
  // Over TLS node must trust the development CA: every demo line carries it, as printed.
  const withCa = f.tls === null ? '' : `NODE_EXTRA_CA_CERTS=${f.tls.caFile} `;
  /** `npm run demo` with these options, on this run's URL and chain RPC where they are not the defaults. */
  const demo = (flags: string[], url = base) => {
    const args = [...flags, ...(url === 'http://127.0.0.1:8080' ? [] : ['--url', url]), ...(anvilDefault ? [] : ['--rpc', f.anvilUrl])];
    return `${withCa}npm run demo${args.length > 0 ? ` -- ${args.join(' ')}` : ''}`;
  };
  const extensions: string[] = [];
  if (f.sync) extensions.push(`  sync send       eth_sendRawTransactionSync on ${base}: the receipt in one call`, `                  try: ${demo(['--sync'])}`);
  if (f.track)
    extensions.push(
      `  tracking        each accepted transaction followed to its block; txgate_getTransactionStatus on ${base}`,
      `                  try: ${demo(['--track'])}   (prints the status the edge answers)`,
    );
  if (typeof f.flashblocks === 'string')
    extensions.push(
      `  flashblocks     a builder over anvil (${f.flashblocks}): a slice every 200 ms, a block sealed every 2 s;`,
      '                  tracked transactions go pending, preconfirmed, included; sync calls answer at the preconfirmation',
    );
  if (f.tls !== null)
    extensions.push(
      `  TLS             a throw-away certificate for localhost, made now: ${f.tls.certFile}`,
      `                  signed by the development CA ${f.tls.caFile} (kept; trust it, never beyond this machine)`,
      `                  try: curl --cacert ${f.tls.caFile} ${base}/health`,
      `                  node: NODE_EXTRA_CA_CERTS=${f.tls.caFile}, or the kit's \`ca\` option; system-wide (Debian):`,
      `                  cp it to /usr/local/share/ca-certificates/txgate-dev.crt, then update-ca-certificates`,
    );
  if (f.conditional != null)
    extensions.push(
      `  conditional send  eth_sendRawTransactionConditional on ${base}, through a development sequencer`,
      `                  at ${f.conditional.sequencerUrl} in front of anvil (ERC-7796 as an OP Stack sequencer checks it:`,
      `                  block and time bounds, knownAccounts by storage root and by slot, against anvil's state)`,
      `                  try: ${demo(['--conditional'])}   (conditions that hold: included)`,
      `                  try: ${demo(['--conditional', '--unmet'])}   (a slot that does not hold: refused -32003)`,
    );
  if (f.conditionalNotInConfig === true)
    extensions.push(
      `  conditional send  NOT served: --conditional was given, but ${f.configFile} was edited by you and does not turn it on`,
      `                  (its chain's sequencer the development one, conditional.enabled): delete it to get the generated one`,
    );
  if (f.websocket) {
    const wsBase = `${secure ? `wss://localhost` : `ws://127.0.0.1`}:${f.port}`;
    extensions.push(
      `  WebSocket transport  ${wsBase}/ (X-Api-Key on the upgrade; one JSON-RPC request per text frame)`,
      `                  try: ${demo([], wsBase)}`,
    );
  }
  return `
txgate (development) is up
  base URL        ${base}            (eth_chainId → 0x1237)
  API key         ${DEV_API_KEY}   (X-Api-Key; development only)
  tip address     ${ANVIL_TIP_ADDRESS}   (min tip ${DEV_MIN_TIP_WEI} wei, pattern: transfer)
  chain RPC       ${f.anvilUrl}           (anvil, chain 4663, started by this process: nonce, gas, receipts)
  funded test key ${ANVIL_KEYS[0]}
  metrics         http://127.0.0.1:${f.internalPort}/metrics   (internal listener)
  config          ${f.configFile}${f.configWritten ? '' : '   (edited by you: used as it is; delete it to get the generated one)'}
  accounts        ${f.accountsFile}${f.accountsCreated ? '' : `   (kept from an earlier run${f.conditional?.grantAmended === true ? "; dev's grant given conditional: true" : ''})`}
${extensions.length > 0 ? extensions.join('\n') + '\n' : ''}  try             ${demo([])}        (in another terminal)

`;
}
