// Jest transformer: TypeScript → CommonJS with esbuild (ts-jest does not support TypeScript 7).
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const esbuild = require('esbuild');

const OWN_SOURCE = readFileSync(__filename, 'utf8');

module.exports = {
  process(source, filename) {
    if (filename.endsWith('.md') || filename.endsWith('.html')) return { code: `module.exports = { __esModule: true, default: ${JSON.stringify(source)} };` };
    const result = esbuild.transformSync(source, {
      loader: filename.endsWith('.ts') ? 'ts' : 'js',
      format: 'cjs',
      target: 'node20',
      sourcemap: 'inline',
      sourcefile: filename,
      // Jest runs CommonJS: turn import() into require() so modules load inside the test's registry.
      supported: { 'dynamic-import': false },
    });
    return { code: result.code };
  },
  // The cache must change when this transformer or esbuild changes, not only the source.
  getCacheKey(source, filename) {
    return createHash('sha256').update(OWN_SOURCE).update(esbuild.version).update(filename).update(source).digest('hex');
  },
};
