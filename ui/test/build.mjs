// Bundles ui/test/*.test.ts for Node, so `node --test` runs them:
//   node ui/test/build.mjs <out dir> && node --test <out dir>/
import { build } from 'esbuild';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = process.argv[2];
if (!out) {
  console.error('usage: node ui/test/build.mjs <out dir>');
  process.exit(2);
}
await build({
  entryPoints: readdirSync(here).filter((f) => f.endsWith('.test.ts')).map((f) => join(here, f)),
  bundle: true,
  platform: 'node',
  format: 'esm',
  outdir: out,
  outExtension: { '.js': '.mjs' },
  logLevel: 'warning',
});
