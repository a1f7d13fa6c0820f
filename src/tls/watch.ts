/**
 * Watches certificate files the way the accounts file is watched (accounts/file-store.ts): the
 * directories are watched (an atomic rename or a certbot symlink swap replaces the inode, so
 * watching the file itself would go deaf), a stat poll backs the watcher up, and the changes of
 * one write (certificate, then key) are coalesced before `changed` is called.
 */
import { type FSWatcher, watch } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Logger } from '../log.js';

export interface WatchOptions {
  readonly pollMs?: number;
  /** How long after the last event the files are read (a certificate and its key are written one after the other). */
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
    private readonly opts: WatchOptions = {},
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
        w.on('error', (e) => this.log.warn({ err: e, dir }, 'certificate watcher failed; relying on polling'));
        this.watchers.push(w);
      } catch (e) {
        this.log.warn({ err: e, dir }, 'cannot watch a certificate directory; relying on polling');
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
