/**
 * A real local chain for development and tests: anvil, started on a loopback port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** anvil's well-known development accounts (mnemonic "test test … junk"): never hold value. */
export const ANVIL_KEYS = [
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
  '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a',
  '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba',
  '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e',
] as const;
/** The address of anvil's account #9, used as the development tip address. */
export const ANVIL_TIP_ADDRESS = '0xa0Ee7A142d267C1f36714E4a8F75612F20a79720';

/**
 * The prebuilt binary of a Foundry tool from its npm package for this platform
 * (`@foundry-rs/anvil-linux-amd64`, `@foundry-rs/cast-linux-amd64` are optional dependencies),
 * else one on the PATH, else a clear error.
 */
export function foundryBinary(tool: 'anvil' | 'cast'): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const pkg = `@foundry-rs/${tool}-${process.platform}-${arch}`;
  const exe = process.platform === 'win32' ? `${tool}.exe` : tool;
  try {
    return join(dirname(require.resolve(`${pkg}/package.json`)), 'bin', exe);
  } catch {
    const onPath = (process.env.PATH ?? '')
      .split(delimiter)
      .map((d) => join(d, exe))
      .find((f) => existsSync(f));
    if (onPath !== undefined) return onPath;
    throw new Error(
      `${tool} is not installed for ${process.platform}/${process.arch}: npm ci installs ${pkg} where the registry has it; else install Foundry's ${tool} on the PATH`,
    );
  }
}

export const anvilBinary = (): string => foundryBinary('anvil');

export interface Anvil {
  readonly url: string;
  readonly port: number;
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

export interface AnvilOptions {
  readonly port?: number;
  readonly chainId?: number;
  /** Seconds between blocks; 0 = mine each transaction at once (automine). */
  readonly blockTime?: number;
  readonly extraArgs?: readonly string[];
  /** How long anvil may take to answer eth_chainId, default 15,000 ms. */
  readonly readyWithinMs?: number;
}

/**
 * Starts anvil and resolves once it answers eth_chainId with its own chain id. Fails, with anvil
 * stopped, when anvil exits (its port taken), when whatever answers on the port serves another
 * chain, or when nothing answers in time (each probe is bounded: a listener that accepts and never
 * answers cannot hang it).
 */
export async function startAnvil(opts: AnvilOptions = {}): Promise<Anvil> {
  const port = opts.port ?? 8545;
  const chainId = opts.chainId ?? 4663;
  const args = ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(chainId), '--silent'];
  if (opts.blockTime !== undefined && opts.blockTime > 0) args.push('--block-time', String(opts.blockTime));
  args.push(...(opts.extraArgs ?? []));
  const child = spawn(anvilBinary(), args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const within = opts.readyWithinMs ?? 15_000;
  const deadline = Date.now() + within;
  const kill = async (why: string): Promise<never> => {
    child.kill('SIGKILL');
    await exited;
    throw new Error(why);
  };
  for (;;) {
    await Promise.race([exited, new Promise((r) => setTimeout(r, 50))]);
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`anvil exited (${child.exitCode ?? child.signalCode}) before answering on ${url}: ${stderr.trim().split('\n').pop() ?? ''}`);
    let answer: unknown = null;
    try {
      const r = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
        signal: AbortSignal.timeout(1_000),
      });
      if (r.ok) answer = ((await r.json()) as { result?: unknown }).result;
    } catch {
      /* not up yet, or no answer within the probe's bound */
    }
    if (answer !== null) {
      if (answer === `0x${chainId.toString(16)}`) break;
      await kill(`${url} answers chain ${String(answer)}, not ${chainId}: another chain holds the port`);
    }
    if (Date.now() > deadline) await kill(`anvil did not answer on ${url} within ${within / 1000} s${stderr === '' ? '' : `: ${stderr.trim()}`}`);
  }
  return {
    url,
    port,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(t);
      }
    },
  };
}
