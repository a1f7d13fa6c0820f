/** Build information: the package version and the native uWS binding in use. */
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

export const BUILD = Object.freeze({
  version: pkg.version,
  uws: `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`,
});
