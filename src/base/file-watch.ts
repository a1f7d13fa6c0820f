/**
 * The one watch of files the service re-reads when they change (the accounts file,
 * accounts/file-store.ts; the certificate files, tls/edge.ts): the directories are watched (an
 * atomic rename or a certbot symlink swap replaces the inode, so watching the file itself would
 * go deaf), a stat poll backs the watcher up, and the events of one write are coalesced for
 * `settleMs` before `changed` is called (an editor's several events; a certificate, then its key).
 */
import { type FSWatcher, watch } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Logger } from '../log/log.js';

export interface WatchOptions {
  /** What the files are, in the log lines: "accounts", "certificate". */
  readonly what: string;
  /** Stat poll period backing up the watcher (ms; 1000 by default). */
  readonly pollMs?: number | undefined;
  /** How long after the last event the files are read (ms; 250 by default). */
  readonly settleMs?: number;
}

export class FileWatch {
  private readonly watchers: FSWatcher[] = [];
  private poll: NodeJS.Timeout | null = null;
  private settle: NodeJS.Timeout | null = null;
  private lastStat = '';

  constructor(
    private readonly files: readonly string[],
    private readonly changed: (trigger: string) => void,
    private readonly log: Logger,
    private readonly opts: WatchOptions,
  ) {}

  async start(): Promise<void> {
    this.lastStat = await this.signature();
    const byDir = new Map<string, Set<string>>();
    for (const f of this.files) byDir.set(dirname(f), (byDir.get(dirname(f)) ?? new Set()).add(basename(f)));
    for (const [dir, names] of byDir) {
      try {
        const w = watch(dir, { persistent: false }, (_event, file) => {
          // `..data` and friends: a Kubernetes secret volume swaps a symlinked directory.
          if (file === null || names.has(file) || file.startsWith('..')) this.schedule('watch');
        });
        w.on('error', (e) => this.log.warn({ err: e, dir }, `${this.opts.what} watcher failed; relying on polling`));
        this.watchers.push(w);
      } catch (e) {
        this.log.warn({ err: e, dir }, `cannot watch the ${this.opts.what} directory; relying on polling`);
      }
    }
    this.poll = setInterval(() => void this.checkStat(), this.opts.pollMs ?? 1000);
    this.poll.unref();
  }

  close(): void {
    for (const w of this.watchers) w.close();
    if (this.poll !== null) clearInterval(this.poll);
    if (this.settle !== null) clearTimeout(this.settle);
  }

  private schedule(trigger: string): void {
    if (this.settle !== null) clearTimeout(this.settle);
    this.settle = setTimeout(() => {
      this.settle = null;
      void this.signature().then((sig) => {
        this.lastStat = sig;
        this.changed(trigger);
      });
    }, this.opts.settleMs ?? 250);
    this.settle.unref();
  }

  private async checkStat(): Promise<void> {
    const sig = await this.signature();
    if (sig !== this.lastStat && this.settle === null) this.schedule('poll');
  }

  /** Inode, size and mtime of every file (stat follows symlinks): a change of any is a change. */
  private async signature(): Promise<string> {
    const parts = await Promise.all(
      this.files.map(async (f) => {
        try {
          const s = await stat(f);
          return `${s.ino}:${s.size}:${s.mtimeMs}`;
        } catch {
          return 'missing';
        }
      }),
    );
    return parts.join('|');
  }
}
