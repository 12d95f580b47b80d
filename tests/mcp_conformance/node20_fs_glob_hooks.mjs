// Module resolution hooks of node20_fs_glob.mjs.
const withGlob = new URL('./fs_with_glob.mjs', import.meta.url).href;

export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') &&
      context.parentURL?.includes('/node_modules/@modelcontextprotocol/conformance/')) {
    return { url: withGlob, shortCircuit: true };
  }
  return next(specifier, context);
}
