/**
 * Decode/verify variants side by side, against the floor: one raw libsecp256k1 ecdsaRecover.
 * - @ethereumjs/tx with its default (pure-JS) crypto
 * - @ethereumjs/tx with the native crypto wired through customCrypto.ecrecover
 * - the reference path (TxDecoder without the lean path)
 * - the lean 0x02 path, and lean decode + fee admission (what the pipeline runs)
 * - the lean 0x02 path with the curve signature check (crypto.signature = "curve")
 * - when built (npm run build:secp256k1): recovery and the lean path on the system's
 *   libsecp256k1 (crypto.secp256k1 = "system")
 */
import { createTxFromRLP } from '@ethereumjs/tx';
import { chainCommon } from '../../src/tx/crypto.js';
import { existsSync } from 'node:fs';
import { secp256k1Addon, useSecp256k1, SYSTEM_SECP256K1_PATH, systemSecp256k1Addon } from '../../src/base/native.js';
import { tipVia } from '../../src/stages/fee.js';
import { parseAccounts } from '../../src/accounts/parse.js';
import { ANVIL_TIP_ADDRESS } from '../../src/dev/anvil.js';
import { Exit } from '../../src/base/errors.js';
import { TxDecoder } from '../../src/tx/decoder.js';
import { BYTES, hashOf, referenceDecoders } from '../common/fixtures.js';
import { keep, runSuite, type Row, type SuiteOptions } from '../common/suite.js';

export async function run(o: Pick<SuiteOptions, 'time' | 'rounds'> = {}): Promise<Row[]> {
  const jsCommon = chainCommon(4663, 'prague', null);
  const nativeCommon = chainCommon(4663, 'prague');
  const lean = new TxDecoder(4663, 'prague', { signature: 'recover' });
  const reference = referenceDecoders.get(4663)!;
  const curve = new TxDecoder(4663, 'prague', { signature: 'curve' });
  const grant = parseAccounts({
    accounts: [
      { id: 'a', keySha256: [], grants: [{ chainId: 4663, rateLimit: { perSecond: 1, burst: 1 }, tipAddresses: [ANVIL_TIP_ADDRESS], minTipWei: '1' }] },
    ],
  }).accounts[0]!.grants.get(4663)!;
  // The floor: libsecp256k1 recovery alone (the addon, no argument checks), on the same
  // transactions, with their signing hashes and signatures prepared beforehand.
  const prepared = BYTES.map((b) => {
    const t = createTxFromRLP(b, { common: nativeCommon });
    const sig = new Uint8Array(64);
    sig.set(Buffer.from(t.r!.toString(16).padStart(64, '0'), 'hex'), 0);
    sig.set(Buffer.from(t.s!.toString(16).padStart(64, '0'), 'hex'), 32);
    return { msg: t.getMessageToVerifySignature(), sig, recid: Number(t.v) };
  });
  const out = new Uint8Array(65);
  const addon = secp256k1Addon();
  let j = 0;
  let i = 0;
  const next = () => BYTES[i++ & 63]!;
  const policy = { txTypes: new Set([2]) };
  // The optional system binding, side by side with the npm one in the same run.
  const system = existsSync(SYSTEM_SECP256K1_PATH) ? systemSecp256k1Addon() : null;
  const onSystem = <T>(f: () => T): T => {
    useSecp256k1('system');
    try {
      return f();
    } finally {
      useSecp256k1('npm');
    }
  };
  const systemRows: Record<string, () => void> =
    system === null
      ? {}
      : {
          'raw ecdsaRecover, system libsecp256k1': () => {
            const p = prepared[j++ & 63]!;
            keep(system.ecdsaRecover(out, p.sig, p.recid, p.msg));
          },
          'lean 0x02 path, system libsecp256k1': () => keep(onSystem(() => lean.decode(next(), policy))),
        };
  return runSuite(
    'decode',
    {
      'raw ecdsaRecover (floor)': () => {
        const p = prepared[j++ & 63]!;
        keep(addon.ecdsaRecover(out, p.sig, p.recid, p.msg));
      },
      '@ethereumjs/tx, default JS crypto': () => {
        const t = createTxFromRLP(next(), { common: jsCommon });
        keep(t.getValidationErrors().length === 0 && t.getSenderAddress() && t.hash());
      },
      '@ethereumjs/tx, native crypto': () => {
        const t = createTxFromRLP(next(), { common: nativeCommon });
        keep(t.getValidationErrors().length === 0 && t.getSenderAddress() && hashOf(t.serialize()));
      },
      'reference path (TxDecoder, lean off)': () => keep(reference.decode(next(), policy)),
      'lean 0x02 path, signature check recover': () => keep(lean.decode(next(), policy)),
      'lean decode + fee admission': () => {
        const tx = lean.decode(next(), policy);
        keep(tx instanceof Exit ? tx : tipVia(tx, grant));
      },
      'lean 0x02 path, signature check curve': () => keep(curve.decode(next(), policy)),
      ...systemRows,
    },
    { reference: 'raw ecdsaRecover (floor)', ...o },
  );
}
